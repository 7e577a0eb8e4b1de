//! How the registry reads and writes a plan's settings that are not numbers: a choice's
//! name, a preset's id, a switch and a knob-sweep axis. Each such row carries a
//! [`Setting`], so the page's selects and checkboxes and the command line's flags write
//! the plan through the same row, as [`Access`](super::Access) does for numbers.
//!
//! A writer turns on the section it writes into (the prefix structure, the routing, the
//! pools), as a number's writer does. A name the row does not know leaves the plan as it
//! is: the page offers only the row's names, and the command line refuses the others
//! before it writes. A pool's GPU is the exception: its id is written as given (empty
//! for the plan's own hardware), and `validate` names the known ones.

use super::access::START_CLIENTS;
use super::access::{disagg_mut, disagg_of, routing_mut, routing_of, sharing_mut, sharing_of};
use super::Field;
use crate::model_kinds::Dtype;
use crate::plan::disagg::{KvLinkSource, Router};
use crate::plan::{Arrival, KvPolicy, Plan, SloMode, TurnOrder};
use crate::presets;
use goodput_engine::kinds::FleetRouter;

/// A setting's reader and writer.
#[derive(Debug, Clone, Copy)]
pub enum Setting {
    /// A choice's name, or a preset's id.
    Name {
        /// The name the plan holds (for a section the plan leaves out, the one turning it
        /// on would start from).
        get: fn(&Plan) -> String,
        /// Writes a name.
        set: fn(&mut Plan, &str),
    },
    /// On or off.
    Switch {
        /// Whether it is on.
        get: fn(&Plan) -> bool,
        /// Turns it on or off.
        set: fn(&mut Plan, bool),
    },
    /// A list of whole numbers (a knob-sweep axis).
    List {
        /// The list the plan holds.
        get: fn(&Plan) -> Vec<u32>,
        /// Writes a list.
        set: fn(&mut Plan, Vec<u32>),
    },
}

/// Readers and writers are code, not data: two rows compare by everything else.
impl PartialEq for Setting {
    fn eq(&self, _: &Setting) -> bool {
        true
    }
}

/// `f` with the reader and writer of its name.
pub(super) const fn named(f: Field, get: fn(&Plan) -> String, set: fn(&mut Plan, &str)) -> Field {
    Field {
        setting: Some(Setting::Name { get, set }),
        ..f
    }
}

/// `f` with the reader and writer of its switch.
pub(super) const fn switched(f: Field, get: fn(&Plan) -> bool, set: fn(&mut Plan, bool)) -> Field {
    Field {
        setting: Some(Setting::Switch { get, set }),
        ..f
    }
}

/// `f` with the reader and writer of its list.
pub(super) const fn listed(
    f: Field,
    get: fn(&Plan) -> Vec<u32>,
    set: fn(&mut Plan, Vec<u32>),
) -> Field {
    Field {
        setting: Some(Setting::List { get, set }),
        ..f
    }
}

impl Field {
    /// The name `p` holds at this choice or preset row; `None` for a row of another kind.
    pub fn name_in(&self, p: &Plan) -> Option<String> {
        match self.setting {
            Some(Setting::Name { get, .. }) => Some(get(p)),
            _ => None,
        }
    }

    /// Writes `name` at this choice or preset row; nothing for a row of another kind.
    pub fn set_name(&self, p: &mut Plan, name: &str) {
        if let Some(Setting::Name { set, .. }) = self.setting {
            set(p, name)
        }
    }

    /// Whether this switch is on in `p`; `None` for a row of another kind.
    pub fn is_on(&self, p: &Plan) -> Option<bool> {
        match self.setting {
            Some(Setting::Switch { get, .. }) => Some(get(p)),
            _ => None,
        }
    }

    /// Turns this switch on or off; nothing for a row of another kind.
    pub fn set_on(&self, p: &mut Plan, on: bool) {
        if let Some(Setting::Switch { set, .. }) = self.setting {
            set(p, on)
        }
    }

    /// The list `p` holds at this row; `None` for a row of another kind.
    pub fn list_in(&self, p: &Plan) -> Option<Vec<u32>> {
        match self.setting {
            Some(Setting::List { get, .. }) => Some(get(p)),
            _ => None,
        }
    }

    /// Writes this list; nothing for a row of another kind.
    pub fn set_list(&self, p: &mut Plan, list: Vec<u32>) {
        if let Some(Setting::List { set, .. }) = self.setting {
            set(p, list)
        }
    }
}

pub(super) fn model_preset(p: &Plan) -> String {
    p.model.preset.clone()
}

pub(super) fn set_model_preset(p: &mut Plan, id: &str) {
    if let Some(m) = presets::model(id) {
        m.apply(p);
    }
}

pub(super) fn gpu_preset(p: &Plan) -> String {
    p.hardware.preset.clone()
}

pub(super) fn set_gpu_preset(p: &mut Plan, id: &str) {
    if let Some(g) = presets::gpu(id) {
        g.apply(p);
    }
}

pub(super) fn price_offer(p: &Plan) -> String {
    p.hardware.price_offer.clone()
}

/// Takes the price from a published offer for the plan's GPU; an empty id keeps the
/// price as the plan's own. An offer for another GPU leaves the plan as it is.
pub(super) fn set_price_offer(p: &mut Plan, id: &str) {
    if id.is_empty() {
        p.hardware.price_offer.clear();
    } else if let Some(o) = crate::prices::offer(id).filter(|o| o.gpu == p.hardware.preset) {
        p.hardware.gpu_hour_usd = o.usd_per_gpu_hour;
        p.hardware.price_offer = o.id.to_string();
    }
}

/// A price typed in: the plan's own, unless it is the offer's price.
pub(super) fn set_own_price(p: &mut Plan, usd: f64) {
    p.hardware.gpu_hour_usd = usd;
    if crate::prices::offer(&p.hardware.price_offer).is_none_or(|o| o.usd_per_gpu_hour != usd) {
        p.hardware.price_offer.clear();
    }
}

pub(super) fn weight_dtype(p: &Plan) -> String {
    p.model.weight_dtype.name().into()
}

/// Writes the weight precision; a preset GPU's effective FLOP/s follow a change of it
/// (FP8 tensor cores), and nothing else of the hardware moves.
pub(super) fn set_weight_dtype(p: &mut Plan, name: &str) {
    let Some(d) = Dtype::parse(name) else { return };
    if d == p.model.weight_dtype {
        return;
    }
    p.model.weight_dtype = d;
    if let Some(g) = presets::gpu(&p.hardware.preset) {
        p.hardware.compute_flops_per_s = g.effective_flops_per_s(d);
    }
}

pub(super) fn kv_dtype(p: &Plan) -> String {
    p.model.kv_dtype.name().into()
}

pub(super) fn set_kv_dtype(p: &mut Plan, name: &str) {
    if let Some(d) = Dtype::parse(name) {
        p.model.kv_dtype = d;
    }
}

pub(super) fn arrival(p: &Plan) -> String {
    p.traffic.arrival.name().into()
}

/// Writes the arrival process. A gamma process keeps its spread (2 from another process);
/// a closed loop keeps its clients ([`START_CLIENTS`] from an open loop).
pub(super) fn set_arrival(p: &mut Plan, name: &str) {
    let a = p.traffic.arrival;
    p.traffic.arrival = match name {
        "poisson" => Arrival::Poisson,
        "constant" => Arrival::Constant,
        "trace" => Arrival::Trace,
        "gamma" => match a {
            Arrival::Gamma { .. } => a,
            _ => Arrival::Gamma { cv: 2.0 },
        },
        "closed" => match a {
            Arrival::Closed { .. } => a,
            _ => Arrival::Closed {
                concurrency: START_CLIENTS,
                think_s: 0.0,
            },
        },
        _ => a,
    };
}

pub(super) fn sharing_on(p: &Plan) -> bool {
    p.traffic.sharing.is_some()
}

pub(super) fn set_sharing_on(p: &mut Plan, on: bool) {
    if on {
        sharing_mut(p);
    } else {
        p.traffic.sharing = None;
    }
}

pub(super) fn turn_order(p: &Plan) -> String {
    sharing_of(p).order.name().into()
}

pub(super) fn set_turn_order(p: &mut Plan, name: &str) {
    if let Some(o) = TurnOrder::parse(name) {
        sharing_mut(p).order = o;
    }
}

pub(super) fn replies_cached(p: &Plan) -> bool {
    sharing_of(p).replies_cached
}

pub(super) fn set_replies_cached(p: &mut Plan, on: bool) {
    sharing_mut(p).replies_cached = on;
}

pub(super) fn slo_mode(p: &Plan) -> String {
    p.slo.mode.name().into()
}

pub(super) fn set_slo_mode(p: &mut Plan, name: &str) {
    if let Some(m) = SloMode::parse(name) {
        p.slo.mode = m;
    }
}

pub(super) fn chunked_prefill(p: &Plan) -> bool {
    p.engine.chunked_prefill
}

pub(super) fn set_chunked_prefill(p: &mut Plan, on: bool) {
    p.engine.chunked_prefill = on;
}

pub(super) fn kv_policy(p: &Plan) -> String {
    p.engine.kv_policy.name().into()
}

pub(super) fn set_kv_policy(p: &mut Plan, name: &str) {
    if let Some(k) = KvPolicy::parse(name) {
        p.engine.kv_policy = k;
    }
}

pub(super) fn sweep_seqs(p: &Plan) -> Vec<u32> {
    p.run.sweep_max_num_seqs.clone()
}

pub(super) fn set_sweep_seqs(p: &mut Plan, list: Vec<u32>) {
    p.run.sweep_max_num_seqs = list;
}

pub(super) fn sweep_budgets(p: &Plan) -> Vec<u32> {
    p.run.sweep_batched_tokens.clone()
}

pub(super) fn set_sweep_budgets(p: &mut Plan, list: Vec<u32>) {
    p.run.sweep_batched_tokens = list;
}

pub(super) fn plan_at_best(p: &Plan) -> bool {
    p.run.plan_at_best
}

pub(super) fn set_plan_at_best(p: &mut Plan, on: bool) {
    p.run.plan_at_best = on;
}

pub(super) fn prefill_gpu(p: &Plan) -> String {
    disagg_of(p).prefill.gpu
}

/// Writes a pool's GPU id as given: empty for the plan's own hardware; an id that names
/// no preset is refused by `validate`, in words that list the known ones.
pub(super) fn set_prefill_gpu(p: &mut Plan, id: &str) {
    disagg_mut(p).prefill.gpu = id.into();
}

pub(super) fn decode_gpu(p: &Plan) -> String {
    disagg_of(p).decode.gpu
}

pub(super) fn set_decode_gpu(p: &mut Plan, id: &str) {
    disagg_mut(p).decode.gpu = id.into();
}

pub(super) fn pools_router(p: &Plan) -> String {
    disagg_of(p).router.name().into()
}

pub(super) fn set_pools_router(p: &mut Plan, name: &str) {
    if let Some(r) = Router::parse(name) {
        disagg_mut(p).router = r;
    }
}

pub(super) fn kv_link_source(p: &Plan) -> String {
    disagg_of(p).kv_link.source.name().into()
}

pub(super) fn set_kv_link_source(p: &mut Plan, name: &str) {
    if let Some(s) = KvLinkSource::parse(name) {
        disagg_mut(p).kv_link.source = s;
    }
}

pub(super) fn replica_router(p: &Plan) -> String {
    routing_of(p).router.name().into()
}

pub(super) fn set_replica_router(p: &mut Plan, name: &str) {
    if let Some(r) = FleetRouter::parse(name) {
        routing_mut(p).router = r;
    }
}
