//! How the registry reads and writes a plan's numbers: each numeric row carries an
//! [`Access`], a reader and a writer in the plan's own units, so the app's inputs, the
//! Compare view and [`Plan::validate`](crate::plan::Plan::validate) all go through the
//! same row.
//!
//! A reader gives the value a page shows and an edit starts from: a section the plan
//! leaves out (prefix structure, routing, disaggregation) reads as the one turning it on
//! would start from. Whether the plan holds the value at all is [`Field::holds`]. A
//! writer turns on the section it writes into, and a model, GPU or SLO field makes its
//! preset custom.

use super::Field;
use crate::plan::disagg::{DisaggSpec, KvLinkSource};
use crate::plan::{Arrival, LengthDist, LengthSpec, Plan, PrefixModel, RoutingSpec};

/// A numeric field's reader and writer, in plan units (`None`: unset, for a field that
/// may be left blank).
#[derive(Debug, Clone, Copy)]
pub struct Access {
    /// The value as a page shows it and an edit starts from.
    pub get: fn(&Plan) -> Option<f64>,
    /// Writes a value, turning on the section it belongs to.
    pub set: fn(&mut Plan, Option<f64>),
}

/// Readers and writers are code, not data: two rows compare by everything else.
impl PartialEq for Access {
    fn eq(&self, _: &Access) -> bool {
        true
    }
}

/// `f` with its reader and writer.
pub(super) const fn rw(
    f: Field,
    get: fn(&Plan) -> Option<f64>,
    set: fn(&mut Plan, Option<f64>),
) -> Field {
    Field {
        access: Some(Access { get, set }),
        ..f
    }
}

impl Field {
    /// Whether `p` holds this field's value: a gamma spread only with gamma arrivals, the
    /// clients and their think time only in a closed loop, a lognormal length's median
    /// and sigma only while it is lognormal and a fixed length's tokens only while it is
    /// fixed, the prefix structure's, the routing's and the pools' fields only while the
    /// plan has them, the expert routing skew only for a mixture of experts. A p95 is
    /// never held: it is the sigma read another way.
    pub fn holds(&self, p: &Plan) -> bool {
        let t = &p.traffic;
        let lognormal = |l: &LengthSpec| matches!(l.dist, LengthDist::LogNormal { .. });
        let fixed = |l: &LengthSpec| matches!(l.dist, LengthDist::Fixed { .. });
        match self.path {
            "traffic.arrival.cv" => matches!(t.arrival, Arrival::Gamma { .. }),
            "traffic.arrival.concurrency" | "traffic.arrival.think_s" => {
                matches!(t.arrival, Arrival::Closed { .. })
            }
            "traffic.prompt.dist.median" | "traffic.prompt.dist.sigma" => lognormal(&t.prompt),
            "traffic.output.dist.median" | "traffic.output.dist.sigma" => lognormal(&t.output),
            "traffic.prompt.dist.tokens" => fixed(&t.prompt),
            "traffic.output.dist.tokens" => fixed(&t.output),
            "traffic.prompt.dist.p95" | "traffic.output.dist.p95" => false,
            "model.expert_routing_skew" => p.model.is_moe(),
            path if path.starts_with("traffic.sharing.") => t.sharing.is_some(),
            path if path.starts_with("routing.") => p.routing.is_some(),
            "disagg.kv_link.bandwidth_bytes_per_s" => p
                .disagg
                .as_ref()
                .is_some_and(|d| d.kv_link.source == KvLinkSource::Given),
            path if path.starts_with("disagg.") => p.disagg.is_some(),
            _ => true,
        }
    }

    /// The value `p` holds at this field, if it holds one ([`Field::holds`]) and the field
    /// is a number.
    pub fn held(&self, p: &Plan) -> Option<f64> {
        match self.access {
            Some(a) if self.holds(p) => (a.get)(p),
            _ => None,
        }
    }
}

/// A length's median: a fixed length's tokens; none for lengths from a trace.
pub(super) fn median_of(l: &LengthSpec) -> Option<f64> {
    match l.dist {
        LengthDist::LogNormal { median, .. } => Some(median),
        LengthDist::Fixed { tokens } => Some(tokens as f64),
        LengthDist::Trace => None,
    }
}

/// A length's lognormal sigma: 0 for a fixed length.
pub(super) fn sigma_of(l: &LengthSpec) -> f64 {
    match l.dist {
        LengthDist::LogNormal { sigma, .. } => sigma,
        _ => 0.0,
    }
}

/// The p95 length the sigma gives, to the whole token (lengths are whole tokens: a page
/// reads "2982", not "2982.43"; a p95 typed whole gives itself back).
pub(super) fn p95_of(l: &LengthSpec) -> Option<f64> {
    median_of(l).map(|m| LengthDist::p95_from_sigma(m, sigma_of(l)).round())
}

/// A fixed length's tokens; a lognormal one's median to the whole token.
pub(super) fn tokens_of(l: &LengthSpec) -> Option<f64> {
    median_of(l).map(f64::round)
}

pub(super) fn set_median(l: &mut LengthSpec, v: Option<f64>) {
    let sigma = sigma_of(l);
    l.dist = LengthDist::LogNormal {
        median: v.unwrap_or(1.0),
        sigma,
    };
}

pub(super) fn set_p95(l: &mut LengthSpec, v: Option<f64>) {
    let median = median_of(l).unwrap_or(1.0);
    let p95 = v.unwrap_or(median);
    let sigma = if p95 > 0.0 && median > 0.0 {
        LengthDist::sigma_from_p95(median, p95)
    } else {
        f64::NAN
    };
    l.dist = LengthDist::LogNormal { median, sigma };
}

pub(super) fn set_sigma(l: &mut LengthSpec, v: Option<f64>) {
    let median = median_of(l).unwrap_or(1.0);
    l.dist = LengthDist::LogNormal {
        median,
        sigma: v.unwrap_or(0.0),
    };
}

pub(super) fn set_tokens(l: &mut LengthSpec, v: Option<f64>) {
    l.dist = LengthDist::Fixed { tokens: whole(v) };
}

/// Clients a closed loop starts with when an edit turns it on.
pub(super) const START_CLIENTS: u32 = 64;

/// The closed loop's clients ([`START_CLIENTS`] for any other arrival).
pub(super) fn closed_clients(p: &Plan) -> u32 {
    match p.traffic.arrival {
        Arrival::Closed { concurrency, .. } => concurrency,
        _ => START_CLIENTS,
    }
}

/// The closed loop's think time (0 for any other arrival) [s].
pub(super) fn closed_think(p: &Plan) -> f64 {
    match p.traffic.arrival {
        Arrival::Closed { think_s, .. } => think_s,
        _ => 0.0,
    }
}

/// A gamma arrival's spread (1, Poisson's, for any other arrival).
pub(super) fn gamma_cv(p: &Plan) -> f64 {
    match p.traffic.arrival {
        Arrival::Gamma { cv } => cv,
        _ => 1.0,
    }
}

/// A whole number written from a value (0 when blank; a field that must be set is never
/// blank, and 0 is out of most whole fields' ranges).
pub(super) fn whole(v: Option<f64>) -> u32 {
    v.unwrap_or(0.0) as u32
}

/// A real number written from a value: NaN when blank, which `validate` refuses.
pub(super) fn real(v: Option<f64>) -> f64 {
    v.unwrap_or(f64::NAN)
}

pub(super) fn custom_model(p: &mut Plan) {
    p.model.preset = "custom".into();
}

/// Hardware edited by hand is no preset's, and no published offer prices it.
pub(super) fn custom_gpu(p: &mut Plan) {
    p.hardware.preset = "custom".into();
    p.hardware.price_offer.clear();
}

pub(super) fn custom_slo(p: &mut Plan) {
    p.slo.class = "custom".into();
}

/// The plan's disaggregated pools, or those a plan without them starts from.
pub fn disagg_of(p: &Plan) -> DisaggSpec {
    p.disagg.clone().unwrap_or_else(|| DisaggSpec::for_plan(p))
}

/// The plan's pools for editing; an edit of a plan without them starts from
/// [`disagg_of`].
pub fn disagg_mut(p: &mut Plan) -> &mut DisaggSpec {
    let start = disagg_of(p);
    p.disagg.get_or_insert(start)
}

/// The plan's prefix structure, or the empty one ([`PrefixModel::NONE`]) an edit of a
/// plan without one starts from.
pub fn sharing_of(p: &Plan) -> PrefixModel {
    p.traffic.sharing.unwrap_or(PrefixModel::NONE)
}

/// The plan's prefix structure for editing: an edit of a plan without one turns it on
/// from [`PrefixModel::NONE`], and with it the typed shared prefix and hit rate off (the
/// structure's hits take their place; a plan may not have both).
pub fn sharing_mut(p: &mut Plan) -> &mut PrefixModel {
    if p.traffic.sharing.is_none() {
        p.traffic.prefix_tokens = 0;
        p.traffic.prefix_hit_rate = 0.0;
    }
    p.traffic.sharing.get_or_insert(PrefixModel::NONE)
}

/// The plan's replicas behind a router, or those turning routing on starts from
/// ([`RoutingSpec::default`]: two replicas, round robin).
pub fn routing_of(p: &Plan) -> RoutingSpec {
    p.routing.unwrap_or_default()
}

/// The plan's routing for editing: an edit of a plan without it turns it on from
/// [`RoutingSpec::default`].
pub fn routing_mut(p: &mut Plan) -> &mut RoutingSpec {
    p.routing.get_or_insert_with(RoutingSpec::default)
}
