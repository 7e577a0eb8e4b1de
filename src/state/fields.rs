//! The numeric inputs of the plan as a table: id (the dotted path `Plan::validate` names),
//! label, one-line help, unit, display scale and accessors. Components render from it.
//! Label, help, unit, scale and the accessors that read and write the plan are the core's
//! field registry's ([`goodput_core::plan::fields`]), which the CLI's `--help` and
//! `Plan::validate` read too; only the group is the app's.

use goodput_core::format::sig;
use goodput_core::plan::fields::{self as registry, Access, Field as CoreField};
pub use goodput_core::plan::fields::{
    disagg_mut, disagg_of, routing_mut, routing_of, sharing_mut, sharing_of,
};
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

/// Whether the field `id` applies to the plan `p`: where the plan holds it (the core's
/// [`goodput_core::plan::fields::Field::holds`]: the gaps' CV only with gamma arrivals,
/// the clients and their think time only in a closed loop, the prefix structure's only
/// while the plan has one, the routing's only while replicas are routed), except that a
/// length's fields apply whatever its kind and the pools' always.
/// The inputs column shows a field only where it applies, and the Compare view leaves
/// out a field that applies to neither plan.
pub fn applies(id: &str, p: &Plan) -> bool {
    // A length's median, p95 and sigma stay in view whatever its kind (editing one makes
    // it lognormal), and the pools' fields belong to their own panel.
    let always = id.starts_with("traffic.prompt.") || id.starts_with("traffic.output.");
    always || id.starts_with("disagg.") || registry::by_path(id).is_none_or(|f| f.holds(p))
}

/// The fields of one group, in display order.
pub fn fields_of(group: Group) -> impl Iterator<Item = &'static Field> {
    FIELDS.iter().filter(move |f| f.group == group)
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

/// A field of the inputs column: label, help, unit, scale and accessors from the core's
/// registry row at `$id`, the group the app's own.
macro_rules! f {
    ($id:literal, $group:ident) => {{
        const CORE: &CoreField = registry::field($id);
        const ACCESS: Access = match CORE.access {
            Some(a) => a,
            None => panic!("an input of the page must be a number of the registry"),
        };
        Field {
            id: $id,
            group: Group::$group,
            label: CORE.label,
            help: CORE.help,
            unit: CORE.shown.unit,
            kind: kind_of(CORE),
            get: ACCESS.get,
            set: ACCESS.set,
        }
    }};
}

/// Every numeric input, in display order within each group.
pub const FIELDS: &[Field] = &[
    f!("model.params", Model),
    f!("model.active_params", Model),
    f!("model.layers", Model),
    f!("model.kv_heads", Model),
    f!("model.head_dim", Model),
    f!("model.expert_routing_skew", Model),
    f!("hardware.mem_bandwidth_bytes_per_s", Hardware),
    f!("hardware.compute_flops_per_s", Hardware),
    f!("hardware.memory_bytes", Hardware),
    f!("hardware.mem_utilization", Hardware),
    f!("hardware.step_overhead_s", Hardware),
    f!("hardware.seq_overhead_s", Hardware),
    f!("hardware.prefill_overhead_s", Hardware),
    f!("hardware.kv_read_efficiency", Hardware),
    f!("hardware.tp_degree", Hardware),
    f!("hardware.pp_degree", Hardware),
    f!("hardware.ep_degree", Hardware),
    f!("hardware.gpus_per_node", Hardware),
    f!("hardware.interconnect_bytes_per_s", Hardware),
    f!("hardware.allreduce_latency_s", Hardware),
    f!("hardware.tp_comm_overhead_s", Hardware),
    f!("hardware.scaleout_bytes_per_s", Hardware),
    f!("hardware.scaleout_latency_s", Hardware),
    f!("hardware.gpu_hour_usd", Hardware),
    f!("traffic.peak_rate_rps", Traffic),
    f!("traffic.arrival.cv", Traffic),
    f!("traffic.arrival.concurrency", Traffic),
    f!("traffic.arrival.think_s", Traffic),
    f!("traffic.prompt.dist.median", Traffic),
    f!("traffic.prompt.dist.p95", Traffic),
    f!("traffic.prompt.dist.sigma", Traffic),
    f!("traffic.prompt.max", Traffic),
    f!("traffic.output.dist.median", Traffic),
    f!("traffic.output.dist.p95", Traffic),
    f!("traffic.output.dist.sigma", Traffic),
    f!("traffic.sharing.block_tokens", Prefix),
    f!("traffic.sharing.groups", Prefix),
    f!("traffic.sharing.group_tokens", Prefix),
    f!("traffic.sharing.zipf", Prefix),
    f!("traffic.sharing.sessions", Prefix),
    f!("traffic.sharing.turns", Prefix),
    f!("traffic.sharing.document_tokens", Prefix),
    f!("slo.ttft_s", Slo),
    f!("slo.tpot_s", Slo),
    f!("slo.e2e_s", Slo),
    f!("slo.attainment_target", Slo),
    f!("engine.max_num_seqs", Engine),
    f!("engine.max_num_batched_tokens", Engine),
    f!("traffic.output.max", Engine),
    f!("engine.spec_draft_tokens", Engine),
    f!("engine.spec_acceptance", Engine),
    f!("engine.frontend_s", Engine),
    f!("engine.kv_cache_tokens", Engine),
    f!("routing.replicas", Routing),
    f!("planning.utilization", Planning),
    f!("planning.redundancy", Planning),
    f!("run.replications", Planning),
    f!("run.num_requests", Planning),
    f!("run.warmup_requests", Planning),
    f!("run.seed", Planning),
    f!("disagg.prefill.pp_degree", Disagg),
    f!("disagg.prefill.ep_degree", Disagg),
    f!("disagg.prefill.max_num_batched_tokens", Disagg),
    f!("disagg.prefill.instances", Disagg),
    f!("disagg.decode.pp_degree", Disagg),
    f!("disagg.decode.ep_degree", Disagg),
    f!("disagg.decode.max_num_seqs", Disagg),
    f!("disagg.decode.instances", Disagg),
    f!("disagg.kv_link.bandwidth_bytes_per_s", Disagg),
    f!("disagg.kv_link.latency_s", Disagg),
];

#[cfg(test)]
mod tests {
    use super::*;
    use goodput_core::plan::{PrefixModel, RoutingSpec};

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
