//! The numeric inputs of the plan as a table: id (the dotted path `Plan::validate` names),
//! label, one-line help, unit, display scale and accessors. Components render from it.
//! Label, help, unit and scale are the core's field registry's
//! ([`goodput_core::plan::fields`]), which the CLI's `--help` and `Plan::validate` read
//! too; the group and the accessors are the app's.

use goodput_core::disagg::DisaggSpec;
use goodput_core::format::sig;
use goodput_core::plan::fields::{self as registry, Field as CoreField};
use goodput_core::plan::{Arrival, LengthDist, LengthSpec, PrefixModel, RoutingSpec};
use goodput_core::Plan;

/// Which group of the inputs column a field belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// The model's shape.
    Model,
    /// The GPU, parallelism and price.
    Hardware,
    /// Arrival rate and length distributions.
    Traffic,
    /// How prompts share prefixes: shared prefixes and multi-turn sessions (a part of
    /// the traffic, `traffic.sharing`).
    Prefix,
    /// Latency objectives.
    Slo,
    /// Scheduler settings.
    Engine,
    /// Replicas simulated together behind a router (`routing`).
    Routing,
    /// Fleet sizing and simulation effort.
    Planning,
    /// The disaggregated pools (the panel that sizes them, not the inputs column).
    Disagg,
}

/// How a field's text is parsed and shown.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// A real number; the plan stores `shown × scale`.
    Real {
        /// Plan units per displayed unit (e.g. `1e12` for TB/s shown, bytes/s stored).
        scale: f64,
    },
    /// A real number that may be left blank (`None`: no objective).
    OptionalReal {
        /// Plan units per displayed unit.
        scale: f64,
    },
    /// A whole number ≥ 0 that fits in 32 bits.
    Whole,
    /// A whole number that may be left blank (`None`: the planner chooses).
    OptionalWhole,
}

impl Kind {
    /// Whether the field takes whole numbers only.
    pub fn is_whole(self) -> bool {
        matches!(self, Kind::Whole | Kind::OptionalWhole)
    }

    /// Plan units per unit the field is entered in.
    pub fn scale(self) -> f64 {
        match self {
            Kind::Real { scale } | Kind::OptionalReal { scale } => scale,
            Kind::Whole | Kind::OptionalWhole => 1.0,
        }
    }

    /// Formats a plan value for display: a whole number exactly (a seed or a request
    /// count must read back as itself), a real one to 6 significant digits without
    /// trailing zeros.
    pub fn format(self, value: Option<f64>) -> String {
        // No value, or none a number (a sigma set from a p95 of 0 or less): an empty box.
        let Some(v) = value.filter(|v| !v.is_nan()) else {
            return String::new();
        };
        match self {
            Kind::Real { scale } | Kind::OptionalReal { scale } => sig(v / scale),
            Kind::Whole | Kind::OptionalWhole if v.fract() == 0.0 && v.abs() < 2f64.powi(53) => {
                format!("{v:.0}")
            }
            Kind::Whole | Kind::OptionalWhole => sig(v),
        }
    }
}

/// Why a field's text is not a value yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseProblem {
    /// Nothing typed in a required field.
    Missing,
    /// The text is not a number.
    NotANumber,
    /// A whole-number field got a fraction, a sign or a number too large to store.
    NotWhole,
}

/// Parses the text of a field of kind `kind` into a plan value; the problem, if not
/// (`messages::field_message` words it).
pub fn parse_value(kind: Kind, text: &str) -> Result<Option<f64>, ParseProblem> {
    let t = text.trim().replace('_', "");
    match kind {
        Kind::OptionalReal { .. } | Kind::OptionalWhole if t.is_empty() => Ok(None),
        _ if t.is_empty() => Err(ParseProblem::Missing),
        // A number beyond what the plan's unit can hold once scaled (1e308 billion
        // parameters) is no number the plan can take either.
        Kind::Real { scale } | Kind::OptionalReal { scale } => match t.parse::<f64>() {
            Ok(v) if (v * scale).is_finite() => Ok(Some(v * scale)),
            _ => Err(ParseProblem::NotANumber),
        },
        Kind::Whole | Kind::OptionalWhole => match t.parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= u32::MAX as f64 => {
                Ok(Some(v))
            }
            Ok(_) => Err(ParseProblem::NotWhole),
            Err(_) => Err(ParseProblem::NotANumber),
        },
    }
}

/// Whether two plan values are the same for display purposes (relative 1e-9; an
/// infinity only matches itself).
pub fn values_match(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(x), Some(y)) => {
            x == y
                || (x.is_nan() && y.is_nan())
                || (x.is_finite() && y.is_finite() && (x - y).abs() <= 1e-9 * x.abs().max(y.abs()))
        }
        _ => false,
    }
}

/// One numeric input.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// Dotted path of the plan field; also the `data-testid` of the input.
    pub id: &'static str,
    /// Where it goes in the inputs column.
    pub group: Group,
    /// Short label.
    pub label: &'static str,
    /// One line of explanation.
    pub help: &'static str,
    /// Unit as displayed.
    pub unit: &'static str,
    /// Parsing and display.
    pub kind: Kind,
    /// Reads the plan value.
    pub get: fn(&Plan) -> Option<f64>,
    /// Writes a parsed plan value.
    pub set: fn(&mut Plan, Option<f64>),
}

/// The field with this id.
pub fn field(id: &str) -> Option<&'static Field> {
    FIELDS.iter().find(|f| f.id == id)
}

/// Whether the field `id` applies to the plan `p`: the gaps' CV only to gamma arrivals,
/// the clients and their think time only to a closed loop, the prefix structure's only
/// while the plan has one, the routing's only while replicas are routed; every other
/// field always. (The inputs column shows the prefix structure's fields either way:
/// editing one turns the structure on.)
/// The inputs column shows a field only where it applies, and the Compare view leaves
/// out a field that applies to neither plan.
pub fn applies(id: &str, p: &Plan) -> bool {
    match id {
        "traffic.arrival.cv" => matches!(p.traffic.arrival, Arrival::Gamma { .. }),
        "traffic.arrival.concurrency" | "traffic.arrival.think_s" => {
            matches!(p.traffic.arrival, Arrival::Closed { .. })
        }
        _ if id.starts_with("traffic.sharing.") => p.traffic.sharing.is_some(),
        _ if id.starts_with("routing.") => p.routing.is_some(),
        _ => true,
    }
}

/// The fields of one group, in display order.
pub fn fields_of(group: Group) -> impl Iterator<Item = &'static Field> {
    FIELDS.iter().filter(move |f| f.group == group)
}

fn median_of(l: &LengthSpec) -> Option<f64> {
    match l.dist {
        LengthDist::LogNormal { median, .. } => Some(median),
        LengthDist::Fixed { tokens } => Some(tokens as f64),
        LengthDist::Trace => None,
    }
}

fn sigma_of(l: &LengthSpec) -> f64 {
    match l.dist {
        LengthDist::LogNormal { sigma, .. } => sigma,
        _ => 0.0,
    }
}

/// The p95 length the sigma gives, to the whole token (lengths are whole tokens: the
/// box reads "2982", not "2982.43"; a p95 typed whole gives itself back).
fn p95_of(l: &LengthSpec) -> Option<f64> {
    median_of(l).map(|m| LengthDist::p95_from_sigma(m, sigma_of(l)).round())
}

fn set_median(l: &mut LengthSpec, v: Option<f64>) {
    let sigma = sigma_of(l);
    l.dist = LengthDist::LogNormal {
        median: v.unwrap_or(1.0),
        sigma,
    };
}

fn set_p95(l: &mut LengthSpec, v: Option<f64>) {
    let median = median_of(l).unwrap_or(1.0);
    let p95 = v.unwrap_or(median);
    let sigma = if p95 > 0.0 && median > 0.0 {
        LengthDist::sigma_from_p95(median, p95)
    } else {
        f64::NAN
    };
    l.dist = LengthDist::LogNormal { median, sigma };
}

fn set_sigma(l: &mut LengthSpec, v: Option<f64>) {
    let median = median_of(l).unwrap_or(1.0);
    l.dist = LengthDist::LogNormal {
        median,
        sigma: v.unwrap_or(0.0),
    };
}

/// The closed loop's think time (0 for any other arrival) [s].
fn closed_think(p: &Plan) -> f64 {
    match p.traffic.arrival {
        Arrival::Closed { think_s, .. } => think_s,
        _ => 0.0,
    }
}

fn whole(v: Option<f64>) -> u32 {
    v.unwrap_or(0.0) as u32
}

fn custom_model(p: &mut Plan) {
    p.model.preset = "custom".into();
}

fn custom_gpu(p: &mut Plan) {
    p.hardware.preset = "custom".into();
}

fn custom_slo(p: &mut Plan) {
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

/// How the app reads and enters a registry field: whole numbers as they are, others in
/// the registry's shown unit (`scale` plan units each), blank allowed where the plan has
/// no value (`None`).
const fn kind_of(f: &CoreField) -> Kind {
    let scale = f.shown.scale;
    if f.is_whole() && f.optional {
        Kind::OptionalWhole
    } else if f.is_whole() {
        Kind::Whole
    } else if f.optional {
        Kind::OptionalReal { scale }
    } else {
        Kind::Real { scale }
    }
}

/// A field of the inputs column: label, help, unit and scale from the core's registry
/// row at `$id`, the group and the accessors the app's own.
macro_rules! f {
    ($id:literal, $group:ident, |$p:ident| $get:expr, |$q:ident, $v:ident| $set:expr) => {{
        const CORE: &CoreField = registry::field($id);
        Field {
            id: $id,
            group: Group::$group,
            label: CORE.label,
            help: CORE.help,
            unit: CORE.shown.unit,
            kind: kind_of(CORE),
            get: |$p: &Plan| $get,
            set: |$q: &mut Plan, $v: Option<f64>| $set,
        }
    }};
}

/// Every numeric input, in display order within each group.
pub const FIELDS: &[Field] = &[
    f!("model.params", Model, |p| Some(p.model.params), |p, v| {
        p.model.params = v.unwrap_or(0.0);
        custom_model(p)
    }),
    f!(
        "model.active_params",
        Model,
        |p| Some(p.model.active_params),
        |p, v| {
            p.model.active_params = v.unwrap_or(0.0);
            custom_model(p)
        }
    ),
    f!(
        "model.layers",
        Model,
        |p| Some(p.model.layers as f64),
        |p, v| {
            p.model.layers = whole(v);
            custom_model(p)
        }
    ),
    f!(
        "model.kv_heads",
        Model,
        |p| Some(p.model.kv_heads as f64),
        |p, v| {
            p.model.kv_heads = whole(v);
            custom_model(p)
        }
    ),
    f!(
        "model.head_dim",
        Model,
        |p| Some(p.model.head_dim as f64),
        |p, v| {
            p.model.head_dim = whole(v);
            custom_model(p)
        }
    ),
    f!(
        "hardware.mem_bandwidth_bytes_per_s",
        Hardware,
        |p| Some(p.hardware.mem_bandwidth_bytes_per_s),
        |p, v| {
            p.hardware.mem_bandwidth_bytes_per_s = v.unwrap_or(0.0);
            custom_gpu(p)
        }
    ),
    f!(
        "hardware.compute_flops_per_s",
        Hardware,
        |p| Some(p.hardware.compute_flops_per_s),
        |p, v| {
            p.hardware.compute_flops_per_s = v.unwrap_or(0.0);
            custom_gpu(p)
        }
    ),
    f!(
        "hardware.memory_bytes",
        Hardware,
        |p| Some(p.hardware.memory_bytes),
        |p, v| {
            p.hardware.memory_bytes = v.unwrap_or(0.0);
            custom_gpu(p)
        }
    ),
    f!(
        "hardware.mem_utilization",
        Hardware,
        |p| Some(p.hardware.mem_utilization),
        |p, v| p.hardware.mem_utilization = v.unwrap_or(0.0)
    ),
    f!(
        "hardware.step_overhead_s",
        Hardware,
        |p| Some(p.hardware.step_overhead_s),
        |p, v| p.hardware.step_overhead_s = v.unwrap_or(0.0)
    ),
    f!(
        "hardware.seq_overhead_s",
        Hardware,
        |p| Some(p.hardware.seq_overhead_s),
        |p, v| p.hardware.seq_overhead_s = v.unwrap_or(0.0)
    ),
    f!(
        "hardware.prefill_overhead_s",
        Hardware,
        |p| Some(p.hardware.prefill_overhead_s),
        |p, v| p.hardware.prefill_overhead_s = v.unwrap_or(0.0)
    ),
    f!(
        "hardware.kv_read_efficiency",
        Hardware,
        |p| Some(p.hardware.kv_read_efficiency),
        |p, v| p.hardware.kv_read_efficiency = v.unwrap_or(f64::NAN)
    ),
    f!(
        "hardware.tp_degree",
        Hardware,
        |p| Some(p.hardware.tp_degree as f64),
        |p, v| p.hardware.tp_degree = whole(v)
    ),
    f!(
        "hardware.tp_comm_overhead_s",
        Hardware,
        |p| Some(p.hardware.tp_comm_overhead_s),
        |p, v| p.hardware.tp_comm_overhead_s = v.unwrap_or(0.0)
    ),
    f!(
        "hardware.gpu_hour_usd",
        Hardware,
        |p| Some(p.hardware.gpu_hour_usd),
        |p, v| p.hardware.gpu_hour_usd = v.unwrap_or(0.0)
    ),
    f!(
        "traffic.peak_rate_rps",
        Traffic,
        |p| Some(p.traffic.peak_rate_rps),
        |p, v| p.traffic.peak_rate_rps = v.unwrap_or(0.0)
    ),
    f!(
        "traffic.arrival.cv",
        Traffic,
        |p| match p.traffic.arrival {
            Arrival::Gamma { cv } => Some(cv),
            _ => Some(1.0),
        },
        |p, v| p.traffic.arrival = Arrival::Gamma {
            cv: v.unwrap_or(1.0)
        }
    ),
    f!(
        "traffic.arrival.concurrency",
        Traffic,
        |p| match p.traffic.arrival {
            Arrival::Closed { concurrency, .. } => Some(concurrency as f64),
            _ => Some(64.0),
        },
        |p, v| {
            let think_s = closed_think(p);
            p.traffic.arrival = Arrival::Closed {
                concurrency: whole(v),
                think_s,
            }
        }
    ),
    f!(
        "traffic.arrival.think_s",
        Traffic,
        |p| Some(closed_think(p)),
        |p, v| {
            let concurrency = match p.traffic.arrival {
                Arrival::Closed { concurrency, .. } => concurrency,
                _ => 64,
            };
            p.traffic.arrival = Arrival::Closed {
                concurrency,
                think_s: v.unwrap_or(0.0),
            }
        }
    ),
    f!(
        "traffic.prompt.dist.median",
        Traffic,
        |p| median_of(&p.traffic.prompt),
        |p, v| set_median(&mut p.traffic.prompt, v)
    ),
    f!(
        "traffic.prompt.dist.p95",
        Traffic,
        |p| p95_of(&p.traffic.prompt),
        |p, v| set_p95(&mut p.traffic.prompt, v)
    ),
    f!(
        "traffic.prompt.dist.sigma",
        Traffic,
        |p| Some(sigma_of(&p.traffic.prompt)),
        |p, v| set_sigma(&mut p.traffic.prompt, v)
    ),
    f!(
        "traffic.prompt.max",
        Traffic,
        |p| Some(p.traffic.prompt.max as f64),
        |p, v| p.traffic.prompt.max = whole(v)
    ),
    f!(
        "traffic.output.dist.median",
        Traffic,
        |p| median_of(&p.traffic.output),
        |p, v| set_median(&mut p.traffic.output, v)
    ),
    f!(
        "traffic.output.dist.p95",
        Traffic,
        |p| p95_of(&p.traffic.output),
        |p, v| set_p95(&mut p.traffic.output, v)
    ),
    f!(
        "traffic.output.dist.sigma",
        Traffic,
        |p| Some(sigma_of(&p.traffic.output)),
        |p, v| set_sigma(&mut p.traffic.output, v)
    ),
    f!(
        "traffic.sharing.block_tokens",
        Prefix,
        |p| Some(sharing_of(p).block_tokens as f64),
        |p, v| sharing_mut(p).block_tokens = whole(v)
    ),
    f!(
        "traffic.sharing.groups",
        Prefix,
        |p| Some(sharing_of(p).groups as f64),
        |p, v| sharing_mut(p).groups = whole(v)
    ),
    f!(
        "traffic.sharing.group_tokens",
        Prefix,
        |p| Some(sharing_of(p).group_tokens as f64),
        |p, v| sharing_mut(p).group_tokens = whole(v)
    ),
    f!(
        "traffic.sharing.zipf",
        Prefix,
        |p| Some(sharing_of(p).zipf),
        |p, v| sharing_mut(p).zipf = v.unwrap_or(f64::NAN)
    ),
    f!(
        "traffic.sharing.sessions",
        Prefix,
        |p| Some(sharing_of(p).sessions as f64),
        |p, v| sharing_mut(p).sessions = whole(v)
    ),
    f!(
        "traffic.sharing.turns",
        Prefix,
        |p| Some(sharing_of(p).turns as f64),
        |p, v| sharing_mut(p).turns = whole(v)
    ),
    f!(
        "traffic.sharing.document_tokens",
        Prefix,
        |p| Some(sharing_of(p).document_tokens as f64),
        |p, v| sharing_mut(p).document_tokens = whole(v)
    ),
    f!("slo.ttft_s", Slo, |p| p.slo.ttft_s, |p, v| {
        p.slo.ttft_s = v;
        custom_slo(p)
    }),
    f!("slo.tpot_s", Slo, |p| p.slo.tpot_s, |p, v| {
        p.slo.tpot_s = v;
        custom_slo(p)
    }),
    f!("slo.e2e_s", Slo, |p| p.slo.e2e_s, |p, v| {
        p.slo.e2e_s = v;
        custom_slo(p)
    }),
    f!(
        "slo.attainment_target",
        Slo,
        |p| Some(p.slo.attainment_target),
        |p, v| p.slo.attainment_target = v.unwrap_or(0.0)
    ),
    f!(
        "engine.max_num_seqs",
        Engine,
        |p| Some(p.engine.max_num_seqs as f64),
        |p, v| p.engine.max_num_seqs = whole(v)
    ),
    f!(
        "engine.max_num_batched_tokens",
        Engine,
        |p| Some(p.engine.max_num_batched_tokens as f64),
        |p, v| p.engine.max_num_batched_tokens = whole(v)
    ),
    f!(
        "traffic.output.max",
        Engine,
        |p| Some(p.traffic.output.max as f64),
        |p, v| p.traffic.output.max = whole(v)
    ),
    f!(
        "engine.spec_draft_tokens",
        Engine,
        |p| Some(p.engine.spec_draft_tokens as f64),
        |p, v| p.engine.spec_draft_tokens = whole(v)
    ),
    f!(
        "engine.spec_acceptance",
        Engine,
        |p| Some(p.engine.spec_acceptance),
        |p, v| p.engine.spec_acceptance = v.unwrap_or(0.0)
    ),
    f!(
        "engine.frontend_s",
        Engine,
        |p| Some(p.engine.frontend_s),
        |p, v| p.engine.frontend_s = v.unwrap_or(0.0)
    ),
    f!(
        "engine.kv_cache_tokens",
        Engine,
        |p| p.engine.kv_cache_tokens.map(f64::from),
        |p, v| p.engine.kv_cache_tokens = v.map(|x| x as u32)
    ),
    f!(
        "routing.replicas",
        Routing,
        |p| Some(routing_of(p).replicas as f64),
        |p, v| routing_mut(p).replicas = whole(v)
    ),
    f!(
        "planning.utilization",
        Planning,
        |p| Some(p.planning.utilization),
        |p, v| p.planning.utilization = v.unwrap_or(0.0)
    ),
    f!(
        "planning.redundancy",
        Planning,
        |p| Some(p.planning.redundancy as f64),
        |p, v| p.planning.redundancy = whole(v)
    ),
    f!(
        "run.replications",
        Planning,
        |p| Some(p.run.replications as f64),
        |p, v| p.run.replications = whole(v)
    ),
    f!(
        "run.num_requests",
        Planning,
        |p| Some(p.run.num_requests as f64),
        |p, v| p.run.num_requests = whole(v)
    ),
    f!(
        "run.warmup_requests",
        Planning,
        |p| Some(p.run.warmup_requests as f64),
        |p, v| p.run.warmup_requests = whole(v)
    ),
    f!("run.seed", Planning, |p| Some(p.run.seed as f64), |p, v| {
        p.run.seed = v.unwrap_or(0.0) as u64
    }),
    f!(
        "disagg.prefill.max_num_batched_tokens",
        Disagg,
        |p| Some(disagg_of(p).prefill.max_num_batched_tokens as f64),
        |p, v| disagg_mut(p).prefill.max_num_batched_tokens = whole(v)
    ),
    f!(
        "disagg.prefill.instances",
        Disagg,
        |p| disagg_of(p).prefill.instances.map(f64::from),
        |p, v| disagg_mut(p).prefill.instances = v.map(|x| x as u32)
    ),
    f!(
        "disagg.decode.max_num_seqs",
        Disagg,
        |p| Some(disagg_of(p).decode.max_num_seqs as f64),
        |p, v| disagg_mut(p).decode.max_num_seqs = whole(v)
    ),
    f!(
        "disagg.decode.instances",
        Disagg,
        |p| disagg_of(p).decode.instances.map(f64::from),
        |p, v| disagg_mut(p).decode.instances = v.map(|x| x as u32)
    ),
    f!(
        "disagg.kv_link.bandwidth_bytes_per_s",
        Disagg,
        |p| Some(disagg_of(p).kv_link.bandwidth_bytes_per_s),
        |p, v| disagg_mut(p).kv_link.bandwidth_bytes_per_s = v.unwrap_or(f64::NAN)
    ),
    f!(
        "disagg.kv_link.latency_s",
        Disagg,
        |p| Some(disagg_of(p).kv_link.latency_s),
        |p, v| disagg_mut(p).kv_link.latency_s = v.unwrap_or(f64::NAN)
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    const TERA: Kind = Kind::Real { scale: 1e12 };
    const WHOLE: Kind = Kind::Whole;

    #[test]
    fn parses_and_rejects() {
        assert_eq!(parse_value(TERA, "3.35"), Ok(Some(3.35e12)));
        assert!(parse_value(TERA, "abc").is_err());
        assert!(parse_value(TERA, "").is_err());
        assert_eq!(
            parse_value(Kind::OptionalReal { scale: 1e-3 }, " "),
            Ok(None)
        );
        // Finite as typed, infinite once scaled to the plan's unit: refused, not taken
        // for a value that matches any other.
        assert_eq!(parse_value(TERA, "1e296"), Ok(Some(1e308)));
        assert_eq!(parse_value(TERA, "1e297"), Err(ParseProblem::NotANumber));
        assert_eq!(parse_value(TERA, "1e308"), Err(ParseProblem::NotANumber));
        assert!(!values_match(Some(f64::INFINITY), Some(3.35e12)));
        assert!(values_match(Some(f64::INFINITY), Some(f64::INFINITY)));
        assert!(parse_value(WHOLE, "1.5").is_err());
        assert!(parse_value(WHOLE, "-1").is_err());
        assert_eq!(parse_value(WHOLE, "128"), Ok(Some(128.0)));
    }

    #[test]
    fn every_field_round_trips_its_default() {
        for f in FIELDS {
            let mut plan = Plan::default();
            let before = (f.get)(&plan);
            let text = f.kind.format(before);
            let parsed = parse_value(f.kind, &text).expect(f.id);
            (f.set)(&mut plan, parsed);
            // Display keeps 6 significant digits, so derived fields (p95) round-trip to that.
            let (a, b) = ((f.get)(&plan).unwrap_or(0.0), before.unwrap_or(0.0));
            assert!((a - b).abs() <= 1e-5 * b.abs(), "{}: {a} vs {b}", f.id);
        }
    }

    #[test]
    fn whole_numbers_read_back_exactly() {
        let seed = field("run.seed").expect("seed");
        let mut plan = Plan::default();
        for v in [3_048_918_843.0, 1_234_567.0, 4_294_967_295.0] {
            (seed.set)(&mut plan, Some(v));
            let text = seed.kind.format((seed.get)(&plan));
            assert_eq!(text, format!("{v:.0}"));
            assert_eq!(parse_value(seed.kind, &text), Ok(Some(v)));
        }
    }

    #[test]
    fn editing_the_prefix_structure_turns_it_on_in_place_of_the_typed_prefix() {
        let mut plan = Plan::default();
        plan.traffic.prefix_tokens = 500;
        plan.traffic.prefix_hit_rate = 0.5;
        let groups = field("traffic.sharing.groups").expect("groups");
        assert_eq!(
            (groups.get)(&plan),
            Some(0.0),
            "read from the empty structure"
        );
        assert!(!applies(groups.id, &plan));
        (groups.set)(&mut plan, Some(8.0));
        assert_eq!(
            plan.traffic.sharing,
            Some(PrefixModel {
                groups: 8,
                ..PrefixModel::NONE
            })
        );
        assert_eq!(
            (plan.traffic.prefix_tokens, plan.traffic.prefix_hit_rate),
            (0, 0.0)
        );
        assert!(applies(groups.id, &plan));
        let tokens = field("traffic.sharing.group_tokens").expect("tokens");
        (tokens.set)(&mut plan, Some(2048.0));
        assert_eq!(plan.traffic.sharing.map(|s| s.group_tokens), Some(2048));
        assert_eq!(plan.validate(), Ok(()));
        assert_eq!(fields_of(Group::Prefix).count(), 7);
    }

    #[test]
    fn the_replicas_turn_routing_on_and_apply_while_it_is() {
        let mut plan = Plan::default();
        let replicas = field("routing.replicas").expect("replicas");
        assert_eq!(replicas.group, Group::Routing);
        assert_eq!(replicas.label, registry::field("routing.replicas").label);
        assert!(!applies(replicas.id, &plan));
        assert_eq!((replicas.get)(&plan), Some(2.0), "read from the default");
        (replicas.set)(&mut plan, Some(4.0));
        assert_eq!(
            plan.routing,
            Some(RoutingSpec {
                replicas: 4,
                ..RoutingSpec::default()
            })
        );
        assert!(applies(replicas.id, &plan));
        assert_eq!(plan.validate(), Ok(()));
        (replicas.set)(&mut plan, Some(9.0));
        assert_eq!(
            plan.validate().map_err(|e| e.field),
            Err("routing.replicas")
        );
    }

    #[test]
    fn the_step_model_fields_write_their_plan_fields() {
        let mut plan = Plan::default();
        for (id, text, check) in [
            ("hardware.seq_overhead_s", "20", 20e-6),
            ("hardware.prefill_overhead_s", "3", 3e-3),
            ("hardware.kv_read_efficiency", "0.7", 0.7),
            ("engine.frontend_s", "40", 40e-3),
        ] {
            let f = field(id).expect(id);
            (f.set)(&mut plan, parse_value(f.kind, text).expect(id));
            assert!(
                values_match((f.get)(&plan), Some(check)),
                "{id}: {:?}",
                (f.get)(&plan)
            );
        }
        assert!((plan.hardware.seq_overhead_s - 20e-6).abs() < 1e-15);
        assert!((plan.engine.frontend_s - 0.04).abs() < 1e-15);
        let kv = field("engine.kv_cache_tokens").expect("kv");
        assert_eq!(kv.kind.format((kv.get)(&plan)), "", "blank: estimated");
        (kv.set)(&mut plan, parse_value(kv.kind, "250000").expect("whole"));
        assert_eq!(plan.engine.kv_cache_tokens, Some(250_000));
        (kv.set)(&mut plan, parse_value(kv.kind, " ").expect("blank"));
        assert_eq!(plan.engine.kv_cache_tokens, None);
        assert_eq!(plan.validate(), Ok(()));
    }

    #[test]
    fn p95_and_sigma_agree() {
        let mut plan = Plan::default();
        let p95 = field("traffic.prompt.dist.p95").expect("p95");
        (p95.set)(&mut plan, Some(2000.0));
        assert!(values_match((p95.get)(&plan), Some(2000.0)));
        // The default's p95 (800 × e^(1.645 × 0.8) = 2982.43) reads in whole tokens.
        assert_eq!(p95.kind.format((p95.get)(&Plan::default())), "2982");
        let sigma = (field("traffic.prompt.dist.sigma").expect("sigma").get)(&plan).expect("sigma");
        assert!((sigma - (2000.0f64 / 800.0).ln() / goodput_core::plan::Z95).abs() < 1e-12);
    }
}
