//! The plan's field registry: one row per plan field that a person sets, with its dotted
//! path (as [`Plan::validate`](super::Plan::validate) names it in
//! [`PlanError::field`](super::PlanError)), label, unit, help, limits, command-line flag,
//! how the app shows it, whether the finance view shows it, and, for a number, how it is
//! read from and written to a plan ([`Access`]).
//!
//! Everything that describes, reads or writes a field goes through here:
//!
//! ```text
//!   FIELDS ──▶ Plan::validate (every number the plan holds, against its row's limits)
//!          ──▶ the CLI's flags and their --help (flag, unit, limits, help; the value
//!              written through the plan's JSON, `with_values`)
//!          ──▶ the app's inputs and the Compare view (label, help, unit and scale
//!              shown; the row's reader and writer)
//! ```
//!
//! A limit is declared once: either here as a literal, or as one of the `MAX_*` consts of
//! [`crate::plan`] that other code (the simulator, the sweep, the parsers) also reads.
//! Checks that relate two fields (`active_params ≤ params`, `min ≤ max`,
//! `warmup_requests < num_requests`) stay in `validate`, beside the row's own range.

mod access;
mod setting;

use super::Arrival;
use super::{
    num, range_err, unit_suffix, Limits, PlanError, MAX_BATCHED_TOKENS, MAX_CONCURRENCY,
    MAX_DISAGG_INSTANCES, MAX_GPUS_PER_REPLICA, MAX_KV_LINK_BYTES_PER_S, MAX_KV_LINK_LATENCY_S,
    MAX_NUM_REQUESTS, MAX_NUM_SEQS, MAX_PP_DEGREE, MAX_REPLICATIONS, MAX_ROUTED_REPLICAS,
    MAX_SPEC_DRAFT_TOKENS, MAX_TOKENS, MIN_KV_LINK_BYTES_PER_S,
};
use access::{
    closed_clients, closed_think, custom_gpu, custom_model, custom_slo, gamma_cv, median_of,
    p95_of, real, rw, set_median, set_p95, set_sigma, set_tokens, sigma_of, tokens_of,
    whole as whole_of,
};
pub use access::{disagg_mut, disagg_of, routing_mut, routing_of, sharing_mut, sharing_of, Access};
pub use setting::Setting;
use setting::{
    arrival, chunked_prefill, decode_gpu, gpu_preset, kv_dtype, kv_link_source, kv_policy, listed,
    model_preset, named, plan_at_best, pools_router, prefill_gpu, price_offer, replica_router,
    replies_cached, set_arrival, set_chunked_prefill, set_decode_gpu, set_gpu_preset, set_kv_dtype,
    set_kv_link_source, set_kv_policy, set_model_preset, set_own_price, set_plan_at_best,
    set_pools_router, set_prefill_gpu, set_price_offer, set_replica_router, set_replies_cached,
    set_sharing_on, set_slo_mode, set_sweep_budgets, set_sweep_seqs, set_turn_order,
    set_weight_dtype, sharing_on, slo_mode, sweep_budgets, sweep_seqs, switched, turn_order,
    weight_dtype,
};

/// What kind of value a field holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// A real number.
    Real,
    /// A whole number that fits in 32 bits.
    Whole,
    /// A 64-bit seed: any whole number ≥ 0.
    Seed,
    /// One of a few names, each with the words a page shows for it.
    Choice(Choices),
    /// On or off; the flag turns the default off (e.g. `--no-chunked-prefill`).
    Switch,
    /// A preset id (`goodput presets` lists them).
    Preset,
    /// A list of whole numbers, each in the row's range (a knob-sweep axis).
    List,
}

/// The range a number must be in [plan units].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Range {
    /// Lowest allowed value.
    pub lo: f64,
    /// Highest allowed value.
    pub hi: f64,
    /// Whether `lo` itself is excluded (the value must be above it).
    pub lo_open: bool,
}

/// A unit and how many plan units one of it is: the app shows memory bandwidth in TB/s
/// (`scale` 1e12) while the plan stores bytes/s.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Units {
    /// The unit's symbol (`""` for a plain number).
    pub unit: &'static str,
    /// Plan units per one of this unit.
    pub scale: f64,
}

/// A field's command-line flag.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Flag {
    /// The flag without its dashes (`max-num-seqs`).
    pub name: &'static str,
    /// Other names for the same flag.
    pub aliases: &'static [&'static str],
    /// The flag's units when they are not the plan's (`None`: the plan's unit).
    pub units: Option<Units>,
    /// What the flag does beyond setting the field (`""` for nothing).
    pub note: &'static str,
}

/// One plan field.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Field {
    /// Dotted path, as `Plan::validate` names the field.
    pub path: &'static str,
    /// Short label.
    pub label: &'static str,
    /// One line of explanation.
    pub help: &'static str,
    /// The unit the plan stores it in (`""` for a plain number or a share).
    pub unit: &'static str,
    /// What kind of value it is.
    pub kind: Kind,
    /// The range `validate` checks (`None`: no range of its own).
    pub range: Option<Range>,
    /// Whether the field may be left unset (`None` in the plan: no objective, no override).
    pub optional: bool,
    /// The command-line flag that sets it, if any.
    pub flag: Option<Flag>,
    /// How the app shows the number.
    pub shown: Units,
    /// Whether the plan's assumptions (the finance view's, the Markdown export's) state it.
    pub finance: bool,
    /// How a number is read from and written to a plan (`None` for a field that is not a
    /// number: a choice, a switch, a preset, a list).
    pub access: Option<Access>,
    /// How a setting that is not a number (a choice, a preset, a switch, a list) is read
    /// from and written to a plan (`None` for a number).
    pub setting: Option<Setting>,
}

impl Field {
    /// The `(name, words)` pairs of a choice; none for a field of another kind.
    pub const fn choices(&self) -> Choices {
        match self.kind {
            Kind::Choice(c) => c,
            _ => &[],
        }
    }

    /// The words shown for `name`, one of this choice's names (the name itself when it
    /// is none of them).
    pub fn words_of(&self, name: &'static str) -> &'static str {
        choice_words(self.choices(), name)
    }

    /// The label inside a sentence: "memory utilisation" for "Memory utilisation"; a
    /// label that starts with an acronym ("KV link bandwidth") keeps its capitals.
    pub fn label_in_sentence(&self) -> String {
        let mut chars = self.label.chars();
        match (chars.next(), chars.next()) {
            (Some(a), Some(b)) if a.is_uppercase() && !b.is_uppercase() => {
                format!("{}{}", a.to_lowercase(), &self.label[a.len_utf8()..])
            }
            _ => self.label.to_string(),
        }
    }

    /// Whether the field holds a whole number.
    pub const fn is_whole(&self) -> bool {
        matches!(self.kind, Kind::Whole | Kind::Seed | Kind::List)
    }

    /// Checks `x` against the field's range; the error names the field and the range.
    /// A field without a range accepts any value.
    pub fn check(&self, x: f64) -> Result<(), PlanError> {
        let Some(r) = self.range else {
            return Ok(());
        };
        let whole = self.is_whole();
        let inside = x.is_finite()
            && if r.lo_open { x > r.lo } else { x >= r.lo }
            && x <= r.hi
            && (!whole || x.fract() == 0.0);
        if inside {
            return Ok(());
        }
        let limits = Limits {
            lo: r.lo,
            hi: r.hi,
            lo_open: r.lo_open,
            whole,
            got: x,
        };
        Err(range_err(
            self.path,
            range_message(&r, whole, self.unit, x, 1.0),
            limits,
        ))
    }

    /// The flag's units: its own, else the plan's.
    pub fn flag_units(&self) -> Units {
        match self.flag {
            Some(Flag { units: Some(u), .. }) => u,
            _ => Units {
                unit: self.unit,
                scale: 1.0,
            },
        }
    }

    /// The range in words, in `units` (`"whole number in 1..=16384"`,
    /// `"number in (0, 3600] s"`), or `""` for a field without a range.
    pub fn range_words(&self, units: Units) -> String {
        let Some(r) = self.range else {
            return String::new();
        };
        let (lo, hi) = (r.lo / units.scale, r.hi / units.scale);
        if self.is_whole() {
            format!("whole number in {}..={}{}", lo, hi, unit_suffix(units.unit))
        } else if r.lo_open {
            format!(
                "number in ({}, {}]{}",
                num(lo),
                num(hi),
                unit_suffix(units.unit)
            )
        } else {
            format!(
                "number in [{}, {}]{}",
                num(lo),
                num(hi),
                unit_suffix(units.unit)
            )
        }
    }
}

/// `must be a whole number in 1..=16384, got 0` or `must be a number in (0, 3600] s, got
/// -1`, with the bounds and the value divided by `scale`.
pub fn range_message(r: &Range, whole: bool, unit: &str, x: f64, scale: f64) -> String {
    let (lo, hi, x) = (r.lo / scale, r.hi / scale, x / scale);
    if whole {
        format!("must be a whole number in {lo}..={hi}, got {x}")
    } else if r.lo_open {
        format!(
            "must be a number in ({}, {}]{}, got {x}",
            num(lo),
            num(hi),
            unit_suffix(unit)
        )
    } else {
        format!(
            "must be a number in [{}, {}]{}, got {x}",
            num(lo),
            num(hi),
            unit_suffix(unit)
        )
    }
}

/// The value of `field` in a plan's JSON (`serde_json::to_value(&plan)`): `Null` when the
/// plan leaves it unset. The JSON leaves out a choice at its default (`slo.mode` when
/// joint), which the registry lists first: that reads as its first name.
pub fn value_in(field: &Field, plan: &serde_json::Value) -> serde_json::Value {
    let found = field.path.split('.').try_fold(plan, |v, key| v.get(key));
    match (found, field.kind) {
        (Some(v), _) => v.clone(),
        (None, Kind::Choice(names)) if !field.optional && !names.is_empty() => {
            serde_json::Value::from(names[0].0)
        }
        (None, _) => serde_json::Value::Null,
    }
}

/// The registry's writer, the inverse of [`value_in`]: `plan` with each field of
/// `changes` set to its value as the plan's JSON holds it. The plan goes through its JSON
/// once, exactly (every float comes back bit for bit). A field inside a section the plan
/// leaves out (routing, prefix sharing, disaggregation when off), or a value of the
/// wrong type, is an error naming the field; ranges are [`Plan::validate`]'s to check.
pub fn with_values(
    plan: &super::Plan,
    changes: &[(&'static Field, serde_json::Value)],
) -> Result<super::Plan, PlanError> {
    let bad = |f: &Field, message: String| PlanError {
        field: f.path,
        message,
        limits: None,
    };
    let mut json = serde_json::to_value(plan).map_err(|e| PlanError {
        field: "plan",
        message: e.to_string(),
        limits: None,
    })?;
    for (f, value) in changes {
        match with_value_at(&mut json, f, value) {
            Ok(()) => {}
            Err(Some(key)) => {
                return Err(bad(
                    f,
                    format!("is part of '{key}', which the plan leaves out: turn it on first"),
                ))
            }
            Err(None) => return Err(bad(f, "has no place in the plan".into())),
        }
    }
    let written: super::Plan = serde_json::from_value(json).map_err(|e| {
        let first = changes.first().map_or("plan", |(f, _)| f.path);
        PlanError {
            field: first,
            message: e.to_string(),
            limits: None,
        }
    })?;
    // A value the plan does not keep (a gamma spread on Poisson arrivals) is refused,
    // never dropped in silence. A field the JSON leaves out at its default (a zero
    // frontend time) reads back as nothing too: another value in its place shows whether
    // the field has a place at all.
    let back = serde_json::to_value(&written).unwrap_or_default();
    for (f, value) in changes {
        let kept = match value_in(f, &back) {
            serde_json::Value::Null if !value.is_null() => {
                let probe = match value {
                    // A whole number stays whole, or a count's field refuses the probe.
                    serde_json::Value::Number(n) => match n.as_u64() {
                        Some(u) => serde_json::json!(u.saturating_add(1)),
                        None => serde_json::json!(n.as_f64().unwrap_or(0.0) + 1.0),
                    },
                    serde_json::Value::Bool(b) => serde_json::json!(!b),
                    other => other.clone(),
                };
                let mut probed = back.clone();
                with_value_at(&mut probed, f, &probe).is_ok()
                    && serde_json::from_value::<super::Plan>(probed)
                        .ok()
                        .and_then(|p| serde_json::to_value(p).ok())
                        .is_some_and(|j| value_in(f, &j) == probe)
            }
            read => read == *value,
        };
        if !kept {
            return Err(bad(
                f,
                "has no place in the plan as it stands (another setting leaves it out)".into(),
            ));
        }
    }
    // A price written is the plan's own unless it is its offer's, as the row's writer has it.
    let mut written = written;
    if changes
        .iter()
        .any(|(f, _)| f.path == "hardware.gpu_hour_usd")
    {
        let usd = written.hardware.gpu_hour_usd;
        set_own_price(&mut written, usd);
    }
    Ok(written)
}

/// Puts `value` at `field`'s place in a plan's JSON; the error names the parent the
/// JSON does not have (`None`: the place is not an object's).
fn with_value_at(
    json: &mut serde_json::Value,
    field: &Field,
    value: &serde_json::Value,
) -> Result<(), Option<String>> {
    let (parents, last) = field.path.rsplit_once('.').unwrap_or(("", field.path));
    let mut at = json;
    for key in parents.split('.').filter(|k| !k.is_empty()) {
        at = at
            .get_mut(key)
            .filter(|v| v.is_object())
            .ok_or_else(|| Some(key.to_string()))?;
    }
    at.as_object_mut()
        .ok_or(None)?
        .insert(last.to_string(), value.clone());
    Ok(())
}

/// Units that count things, in the plural: one of them reads in the singular
/// ("1 GPU", "1 replica").
const COUNT_UNITS: &[&str] = &[
    "GPUs",
    "bytes",
    "clients",
    "heads",
    "hours",
    "instances",
    "layers",
    "replicas",
    "requests",
    "runs",
    "seqs",
    "tokens",
    "values",
];

/// A plan field's value as a person reads it, in the unit the app shows the field in
/// (its registry row's `shown`): `30 req/s`, `500 ms`, `$2.50/GPU-h`, `8.03026 billion
/// parameters`; a preset by its display name, a choice by its name, an unset optional
/// field as `none`. `value` is the field as the plan's JSON holds it
/// ([`value_in`]).
pub fn field_value(field: &Field, value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::Null => "none".into(),
        Value::Bool(on) => if *on { "on" } else { "off" }.into(),
        Value::String(id) if field.kind == Kind::Preset => match field.path {
            "hardware.price_offer" => crate::prices::offer(id).map_or_else(
                || {
                    if id.is_empty() {
                        "your own".into()
                    } else {
                        id.clone()
                    }
                },
                |o| o.label(),
            ),
            "model.preset" => {
                crate::presets::model(id).map_or_else(|| id.clone(), |m| m.name.into())
            }
            _ => crate::presets::gpu(id).map_or_else(|| id.clone(), |g| g.name.into()),
        },
        Value::String(s) => match field.kind {
            Kind::Choice(choices) => choice_words(choices, s).to_string(),
            _ => s.clone(),
        },
        Value::Number(n) => {
            let Some(x) = n.as_f64() else {
                return n.to_string();
            };
            let x = x / field.shown.scale;
            let unit = field.shown.unit;
            if let Some(per) = unit.strip_prefix("USD") {
                return format!("{}{per}", crate::format::usd(x));
            }
            let number = if field.is_whole() && x.fract() == 0.0 && x.abs() < 2f64.powi(53) {
                crate::format::thousands(x as i64)
            } else {
                crate::format::sig(x)
            };
            // "0–1" says what range a share takes: a share reads as a percentage.
            if unit == "0–1" {
                crate::format::percent(x)
            } else if unit.is_empty() {
                number
            } else if x == 1.0 && COUNT_UNITS.contains(&unit) {
                format!("{number} {}", &unit[..unit.len() - 1])
            } else {
                format!("{number} {unit}")
            }
        }
        other => other.to_string(),
    }
}

/// Reads a list field's text (`"16, 32 64;128"`: whole numbers separated by commas,
/// spaces or semicolons) into its values, ascending with duplicates dropped (and 0,
/// where the range allows it, last: the token budgets' "chunked prefill off"). The
/// error says what is wrong in the field's own units, without its label.
pub fn parse_list(f: &Field, text: &str) -> Result<Vec<u32>, String> {
    use super::MAX_SWEEP_VALUES;
    let mut values = Vec::new();
    for t in text
        .split([',', ' ', ';', '\t', '\n'])
        .filter(|t| !t.is_empty())
    {
        let v = t
            .parse::<u32>()
            .map_err(|_| format!("'{t}' is not a whole number; separate values with commas"))?;
        // The field's own check decides; the message is worded for a list.
        if let (Err(_), Some(r)) = (f.check(v as f64), f.range) {
            return Err(format!(
                "{v} is outside {}–{}{}",
                crate::format::thousands(r.lo as i64),
                crate::format::thousands(r.hi as i64),
                unit_suffix(f.unit)
            ));
        }
        values.push(v);
    }
    values.sort_unstable_by_key(|&v| if v == 0 { u64::MAX } else { v as u64 });
    values.dedup();
    match values.len() {
        0 => Err("list at least one value, separated by commas".into()),
        n if n > MAX_SWEEP_VALUES => Err(format!("at most {MAX_SWEEP_VALUES} values, got {n}")),
        _ => Ok(values),
    }
}

/// A list field's values as its input shows them: `"16, 32, 64"`.
pub fn format_list(values: &[u32]) -> String {
    values
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The field at `path`, if the registry has it.
pub fn by_path(path: &str) -> Option<&'static Field> {
    FIELDS.iter().find(|f| f.path == path)
}

/// The field at `path`, for use in a constant: a path the registry lacks does not compile.
pub const fn field(path: &str) -> &'static Field {
    let mut i = 0;
    while i < FIELDS.len() {
        if same(FIELDS[i].path, path) {
            return &FIELDS[i];
        }
        i += 1;
    }
    panic!("not a path of the plan field registry")
}

/// The field with the flag `name` (without dashes; aliases count), if any.
pub fn by_flag(name: &str) -> Option<&'static Field> {
    FIELDS.iter().find(|f| {
        f.flag
            .is_some_and(|g| g.name == name || g.aliases.contains(&name))
    })
}

const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

const fn closed(lo: f64, hi: f64) -> Option<Range> {
    Some(Range {
        lo,
        hi,
        lo_open: false,
    })
}

/// `(0, hi]`: above zero, at most `hi`.
const fn positive(hi: f64) -> Option<Range> {
    Some(Range {
        lo: 0.0,
        hi,
        lo_open: true,
    })
}

const fn whole(lo: u32, hi: u32) -> Option<Range> {
    closed(lo as f64, hi as f64)
}

const fn flag(name: &'static str) -> Option<Flag> {
    Some(Flag {
        name,
        aliases: &[],
        units: None,
        note: "",
    })
}

const fn flag_note(name: &'static str, note: &'static str) -> Option<Flag> {
    Some(Flag {
        name,
        aliases: &[],
        units: None,
        note,
    })
}

const fn shown(unit: &'static str, scale: f64) -> Units {
    Units { unit, scale }
}

/// A row with the common defaults: a real number, required, shown in the plan's unit,
/// not on the finance view.
const fn row(
    path: &'static str,
    label: &'static str,
    help: &'static str,
    unit: &'static str,
    kind: Kind,
    range: Option<Range>,
    flag: Option<Flag>,
) -> Field {
    Field {
        path,
        label,
        help,
        unit,
        kind,
        range,
        optional: false,
        flag,
        shown: shown(unit, 1.0),
        finance: false,
        access: None,
        setting: None,
    }
}

const fn show(f: Field, unit: &'static str, scale: f64) -> Field {
    Field {
        shown: shown(unit, scale),
        ..f
    }
}

const fn finance(f: Field) -> Field {
    Field { finance: true, ..f }
}

const fn optional(f: Field) -> Field {
    Field {
        optional: true,
        ..f
    }
}

/// A choice's `(name, words)` pairs: the name plan files and flags use, and the words a
/// page, a summary or a report shows for it. A plan whose JSON leaves a choice out
/// reads as its first ([`value_in`]).
pub type Choices = &'static [(&'static str, &'static str)];

pub use crate::format::choice_words;

/// The weight and KV-cache dtypes `--weight-dtype` and `--kv-dtype` take.
pub const DTYPES: Choices = &[
    ("bf16", "bf16 (2 bytes)"),
    ("fp8", "fp8 (1 byte)"),
    ("int4", "int4 (½ byte)"),
];
/// The names `--arrival` takes.
pub const ARRIVALS: Choices = &[
    ("poisson", "Poisson"),
    ("gamma", "Bursty (gamma)"),
    ("constant", "Evenly spaced"),
    ("trace", "From the trace"),
    ("closed", "Closed loop (N clients)"),
];
/// The names `--kv-policy` takes.
pub const KV_POLICIES: Choices = &[
    ("none", "Unlimited (article's reference)"),
    ("reserve", "Reserve prompt + max_tokens"),
    ("paged", "Paged, preempt when full (vLLM-like)"),
];
/// The names `--slo-mode` takes.
pub const SLO_MODES: Choices = &[
    ("joint", "Joint (per request)"),
    ("marginal", "Marginal percentiles"),
];
/// The names `--turn-order` takes (the order of [`crate::plan::TurnOrder::ALL`]).
pub const TURN_ORDERS: Choices = &[
    ("interleaved", "Interleaved (independent users)"),
    (
        "round_robin",
        "Round robin (a benchmark cycling through its users)",
    ),
    ("random", "Random order (replayed conversations)"),
];
/// The names `--fleet-router` takes (the order of [`crate::plan::FleetRouter::ALL`]).
pub const FLEET_ROUTERS: Choices = &[
    ("round_robin", "Round robin"),
    ("random", "Random (a Kubernetes Service)"),
    ("least_loaded", "Least loaded"),
    ("session_affinity", "Session affinity"),
    ("prefix_aware", "Prefix aware (llm-d precise prefix cache)"),
];
use super::disagg::KvLinkSource;
/// The names `--router` takes (the pools' own, beside their spec).
pub use super::disagg::{KV_LINK_SOURCES, ROUTERS};

use Kind::{Choice, List, Preset, Real, Seed, Switch, Whole};

/// Largest expert routing skew a plan accepts: a popular expert picked 64 times as often
/// as the others is already nearly every token on the popular half [ratio].
const MAX_EXPERT_ROUTING_SKEW: f64 = 64.0;

/// Largest and smallest model a plan accepts [parameters].
const MIN_PARAMS: f64 = 1e6;
const MAX_PARAMS: f64 = 1e13;

/// Every plan field a person sets, by section, in the order the CLI's help lists them.
pub const FIELDS: &[Field] = &[
    // Model.
    named(finance(row(
        "model.preset",
        "Model preset",
        "Fills the model's shape from a preset (`goodput presets` lists them), before any single-field flag, wherever it stands.",
        "",
        Preset,
        None,
        flag("model"),
    )), model_preset, set_model_preset),
    rw(finance(show(
        row(
            "model.params",
            "Parameters",
            "Total weights; sets the bytes read every step.",
            "parameters",
            Real,
            closed(MIN_PARAMS, MAX_PARAMS),
            flag_note("params", "also sets the active parameters and makes the model custom"),
        ),
        "billion",
        1e9,
    )), |p| Some(p.model.params), |p, v| { p.model.params = real(v); custom_model(p) }),
    rw(show(
        row(
            "model.active_params",
            "Active parameters",
            "Weights used per token (less than total for MoE); sets FLOPs per token.",
            "parameters",
            Real,
            positive(MAX_PARAMS),
            flag_note("active-params", "at most the total parameters"),
        ),
        "billion",
        1e9,
    ), |p| Some(p.model.active_params), |p, v| { p.model.active_params = real(v); custom_model(p) }),
    rw(row(
        "model.layers",
        "Layers",
        "Transformer layers; KV bytes grow with them.",
        "layers",
        Whole,
        whole(1, 1000),
        None,
    ), |p| Some(p.model.layers as f64), |p, v| { p.model.layers = whole_of(v); custom_model(p) }),
    rw(row(
        "model.kv_heads",
        "KV heads",
        "Key/value heads per layer (grouped-query attention).",
        "heads",
        Whole,
        whole(1, 1024),
        None,
    ), |p| Some(p.model.kv_heads as f64), |p, v| { p.model.kv_heads = whole_of(v); custom_model(p) }),
    rw(row(
        "model.head_dim",
        "Head dimension",
        "Width of one attention head.",
        "values",
        Whole,
        whole(1, 4096),
        None,
    ), |p| Some(p.model.head_dim as f64), |p, v| { p.model.head_dim = whole_of(v); custom_model(p) }),
    named(finance(row(
        "model.weight_dtype",
        "Weight precision",
        "Bytes per weight; a GPU preset's effective FLOP/s follow it.",
        "",
        Choice(DTYPES),
        None,
        flag("weight-dtype"),
    )), weight_dtype, set_weight_dtype),
    named(row(
        "model.kv_dtype",
        "KV-cache precision",
        "Bytes per cached key or value.",
        "",
        Choice(DTYPES),
        None,
        flag("kv-dtype"),
    ), kv_dtype, set_kv_dtype),
    rw(optional(row(
        "model.weight_bytes_override",
        "Weight bytes",
        "Bytes of weights per replica, instead of parameters × precision.",
        "bytes",
        Real,
        positive(1e14),
        flag("weight-bytes"),
    )), |p| p.model.weight_bytes_override, |p, v| p.model.weight_bytes_override = v),
    rw(optional(row(
        "model.kv_bytes_per_token_override",
        "KV bytes per token",
        "KV-cache bytes per token of context, instead of the model's shape.",
        "bytes/token",
        Real,
        positive(1e9),
        flag("kv-bytes-per-token"),
    )), |p| p.model.kv_bytes_per_token_override, |p, v| p.model.kv_bytes_per_token_override = v),
    rw(row(
        "model.expert_routing_skew",
        "Expert routing skew",
        "How many times as often a token picks a popular routed expert as another (1: uniform). More skew reads fewer distinct experts a step.",
        "",
        Real,
        closed(1.0, MAX_EXPERT_ROUTING_SKEW),
        flag("expert-skew"),
    ), |p| Some(p.model.expert_routing_skew), |p, v| p.model.expert_routing_skew = real(v)),
    // Hardware.
    named(finance(row(
        "hardware.preset",
        "GPU preset",
        "Fills the hardware and its price from a preset (`goodput presets` lists them), before any single-field flag, wherever it stands.",
        "",
        Preset,
        None,
        flag("gpu"),
    )), gpu_preset, set_gpu_preset),
    rw(show(
        row(
            "hardware.mem_bandwidth_bytes_per_s",
            "Memory bandwidth",
            "HBM bandwidth of one GPU; bounds decode steps.",
            "bytes/s",
            Real,
            closed(1e9, 1e15),
            flag("mem-bandwidth"),
        ),
        "TB/s",
        1e12,
    ), |p| Some(p.hardware.mem_bandwidth_bytes_per_s), |p, v| { p.hardware.mem_bandwidth_bytes_per_s = real(v); custom_gpu(p) }),
    rw(show(
        row(
            "hardware.compute_flops_per_s",
            "Effective compute",
            "Matmul throughput real kernels reach; bounds prefill.",
            "FLOP/s",
            Real,
            closed(1e11, 1e18),
            flag("compute-flops"),
        ),
        "TFLOP/s",
        1e12,
    ), |p| Some(p.hardware.compute_flops_per_s), |p, v| { p.hardware.compute_flops_per_s = real(v); custom_gpu(p) }),
    rw(show(
        row(
            "hardware.memory_bytes",
            "GPU memory",
            "Memory of one GPU; what the weights leave is KV cache.",
            "bytes",
            Real,
            closed(1e9, 1e13),
            flag("memory-bytes"),
        ),
        "GB",
        1e9,
    ), |p| Some(p.hardware.memory_bytes), |p, v| { p.hardware.memory_bytes = real(v); custom_gpu(p) }),
    rw(show(
        row(
            "hardware.mem_utilization",
            "Memory utilisation",
            "Share of GPU memory the engine may use (--gpu-memory-utilization).",
            "",
            Real,
            positive(1.0),
            flag("mem-utilization"),
        ),
        "0–1",
        1.0,
    ), |p| Some(p.hardware.mem_utilization), |p, v| p.hardware.mem_utilization = real(v)),
    rw(show(
        row(
            "hardware.step_overhead_s",
            "Step overhead c0",
            "Fixed cost of every engine step: scheduling, sampling, launches.",
            "s",
            Real,
            closed(0.0, 1.0),
            flag("step-overhead"),
        ),
        "ms",
        1e-3,
    ), |p| Some(p.hardware.step_overhead_s), |p, v| p.hardware.step_overhead_s = real(v)),
    rw(finance(row(
        "hardware.tp_degree",
        "Tensor parallel",
        "GPUs per pipeline stage (per replica without pipeline parallelism); weights and FLOPs split across them.",
        "GPUs",
        Whole,
        whole(1, 64),
        Some(Flag {
            name: "tp",
            aliases: &["gpus-per-replica"],
            units: None,
            note: "",
        }),
    )), |p| Some(p.hardware.tp_degree as f64), |p, v| p.hardware.tp_degree = whole_of(v)),
    rw(row(
        "hardware.pp_degree",
        "Pipeline parallel",
        "Stages a replica's layers are split into, each stage a tensor-parallel group; a replica has TP × PP GPUs.",
        "stages",
        Whole,
        whole(1, MAX_PP_DEGREE),
        flag("pp"),
    ), |p| Some(p.hardware.pp_degree as f64), |p, v| p.hardware.pp_degree = whole_of(v)),
    rw(row(
        "hardware.ep_degree",
        "Expert parallel",
        "GPUs that split a mixture of experts' routed experts, each attending to its own sequences (data-parallel attention); a replica has EP GPUs, with TP and PP 1.",
        "GPUs",
        Whole,
        whole(1, MAX_GPUS_PER_REPLICA),
        flag("ep"),
    ), |p| Some(p.hardware.ep_degree as f64), |p, v| p.hardware.ep_degree = whole_of(v)),
    rw(row(
        "hardware.gpus_per_node",
        "GPUs per node",
        "GPUs that share the GPU-to-GPU link; a replica of more spans nodes and crosses the scale-out network.",
        "GPUs",
        Whole,
        whole(1, MAX_GPUS_PER_REPLICA),
        flag("gpus-per-node"),
    ), |p| Some(p.hardware.gpus_per_node as f64), |p, v| p.hardware.gpus_per_node = whole_of(v)),
    rw(show(
        row(
            "hardware.tp_comm_overhead_s",
            "TP communication",
            "Extra time per step when tensor parallel > 1.",
            "s",
            Real,
            closed(0.0, 1.0),
            flag("tp-comm-overhead"),
        ),
        "ms",
        1e-3,
    ), |p| Some(p.hardware.tp_comm_overhead_s), |p, v| p.hardware.tp_comm_overhead_s = real(v)),
    rw(show(
        row(
            "hardware.interconnect_bytes_per_s",
            "Interconnect bandwidth",
            "GPU-to-GPU bandwidth of one link, for tensor-parallel all-reduces; 0 leaves them out.",
            "bytes/s",
            Real,
            closed(0.0, 1e14),
            flag("interconnect-bytes-per-s"),
        ),
        "GB/s",
        1e9,
    ), |p| Some(p.hardware.interconnect_bytes_per_s), |p, v| p.hardware.interconnect_bytes_per_s = real(v)),
    rw(show(
        row(
            "hardware.allreduce_latency_s",
            "All-reduce latency",
            "Fixed latency of one tensor-parallel all-reduce.",
            "s",
            Real,
            closed(0.0, 0.1),
            flag("allreduce-latency"),
        ),
        "µs",
        1e-6,
    ), |p| Some(p.hardware.allreduce_latency_s), |p, v| p.hardware.allreduce_latency_s = real(v)),
    rw(show(
        row(
            "hardware.scaleout_bytes_per_s",
            "Scale-out bandwidth",
            "Network bandwidth of one GPU to other nodes (InfiniBand or RoCE), for pipeline sends and all-reduces that cross nodes; 0 leaves their bandwidth term out.",
            "bytes/s",
            Real,
            closed(0.0, 1e13),
            flag("scaleout-bytes-per-s"),
        ),
        "GB/s",
        1e9,
    ), |p| Some(p.hardware.scaleout_bytes_per_s), |p, v| p.hardware.scaleout_bytes_per_s = real(v)),
    rw(show(
        row(
            "hardware.scaleout_latency_s",
            "Scale-out latency",
            "Fixed latency of one send or all-reduce across nodes.",
            "s",
            Real,
            closed(0.0, 0.1),
            flag("scaleout-latency"),
        ),
        "µs",
        1e-6,
    ), |p| Some(p.hardware.scaleout_latency_s), |p, v| p.hardware.scaleout_latency_s = real(v)),
    rw(show(
        row(
            "hardware.seq_overhead_s",
            "Overhead per sequence",
            "Scheduling time each sequence adds to a step, on top of the fixed step overhead.",
            "s",
            Real,
            closed(0.0, 0.01),
            flag("seq-overhead"),
        ),
        "µs",
        1e-6,
    ), |p| Some(p.hardware.seq_overhead_s), |p, v| p.hardware.seq_overhead_s = real(v)),
    rw(show(
        row(
            "hardware.prefill_overhead_s",
            "Overhead of a prefill step",
            "Extra time of a step that computes prompt tokens (no captured CUDA graph).",
            "s",
            Real,
            closed(0.0, 1.0),
            flag("prefill-overhead"),
        ),
        "ms",
        1e-3,
    ), |p| Some(p.hardware.prefill_overhead_s), |p, v| p.hardware.prefill_overhead_s = real(v)),
    rw(show(
        row(
            "hardware.kv_read_efficiency",
            "KV read efficiency",
            "Share of the memory bandwidth attention reaches reading the KV cache, relative to the weights (1: alike).",
            "",
            Real,
            closed(0.05, 1.5),
            flag("kv-read-efficiency"),
        ),
        "0–1",
        1.0,
    ), |p| Some(p.hardware.kv_read_efficiency), |p, v| p.hardware.kv_read_efficiency = real(v)),
    rw(finance(show(
        row(
            "hardware.gpu_hour_usd",
            "Price",
            "What one GPU-hour costs you.",
            "USD",
            Real,
            closed(0.0, 1e4),
            flag("gpu-hour-usd"),
        ),
        "USD/GPU-h",
        1.0,
    )), |p| Some(p.hardware.gpu_hour_usd), |p, v| set_own_price(p, real(v))),
    named(optional(row(
        "hardware.price_offer",
        "Price offer",
        "A published price of the plan's GPU: provider, term and date (`goodput presets` lists them). It sets the price; typing a price replaces it.",
        "",
        Preset,
        None,
        flag("price-offer"),
    )), price_offer, set_price_offer),
    // Traffic.
    rw(finance(show(
        row(
            "traffic.peak_rate_rps",
            "Peak rate",
            "Forecast peak arrivals for the whole fleet.",
            "requests/s",
            Real,
            positive(1e6),
            flag("peak-rate"),
        ),
        "req/s",
        1.0,
    )), |p| Some(p.traffic.peak_rate_rps), |p, v| p.traffic.peak_rate_rps = real(v)),
    named(row(
        "traffic.arrival",
        "Arrivals",
        "How requests arrive: Poisson, bursty (gamma), evenly spaced, or from a closed loop of clients; an imported trace brings its own times.",
        "",
        Choice(ARRIVALS),
        None,
        flag("arrival"),
    ), arrival, set_arrival),
    rw(show(
        row(
            "traffic.arrival.cv",
            "Burstiness (CV)",
            "Coefficient of variation of gaps for gamma arrivals; 1 is Poisson.",
            "",
            Real,
            closed(0.05, 10.0),
            flag_note("arrival-cv", "makes the arrivals gamma"),
        ),
        "×",
        1.0,
    ), |p| Some(gamma_cv(p)), |p, v| p.traffic.arrival = Arrival::Gamma { cv: real(v) }),
    rw(row(
        "traffic.arrival.concurrency",
        "Clients",
        "Closed loop: clients, each with one request in flight (a benchmark's --max-concurrency).",
        "clients",
        Whole,
        whole(1, MAX_CONCURRENCY),
        flag_note("concurrency", "only with --arrival closed, which needs it"),
    ), |p| Some(closed_clients(p) as f64), |p, v| { let think_s = closed_think(p); p.traffic.arrival = Arrival::Closed { concurrency: whole_of(v), think_s } }),
    rw(row(
        "traffic.arrival.think_s",
        "Think time",
        "Closed loop: pause between a client's answer and its next request.",
        "s",
        Real,
        closed(0.0, 3600.0),
        flag_note("think-time", "only with --arrival closed"),
    ), |p| Some(closed_think(p)), |p, v| { let concurrency = closed_clients(p); p.traffic.arrival = Arrival::Closed { concurrency, think_s: real(v) } }),
    rw(optional(row(
        "traffic.max_concurrency",
        "Concurrency cap",
        "Open loop: at most this many requests in flight; a client takes a slot, then starts the request's timer.",
        "requests",
        Whole,
        whole(1, MAX_CONCURRENCY),
        flag("max-concurrency"),
    )), |p| p.traffic.max_concurrency.map(f64::from), |p, v| p.traffic.max_concurrency = v.map(|x| x as u32)),
    rw(row(
        "traffic.prompt.dist.median",
        "Prompt median",
        "Typical prompt length (lognormal median).",
        "tokens",
        Real,
        closed(1.0, MAX_TOKENS as f64),
        flag("input-len-median"),
    ), |p| median_of(&p.traffic.prompt), |p, v| set_median(&mut p.traffic.prompt, v)),
    rw(row(
        "traffic.prompt.dist.p95",
        "Prompt p95",
        "95th percentile prompt length; sets the spread.",
        "tokens",
        Real,
        None,
        flag_note("input-len-p95", "above the median; sets the sigma, so not with --input-len-sigma"),
    ), |p| p95_of(&p.traffic.prompt), |p, v| set_p95(&mut p.traffic.prompt, v)),
    rw(show(
        row(
            "traffic.prompt.dist.sigma",
            "Prompt sigma",
            "Spread of ln(length); same knob as p95.",
            "",
            Real,
            closed(0.0, 5.0),
            flag("input-len-sigma"),
        ),
        "ln-tokens",
        1.0,
    ), |p| Some(sigma_of(&p.traffic.prompt)), |p, v| set_sigma(&mut p.traffic.prompt, v)),
    rw(row(
        "traffic.prompt.dist.tokens",
        "Prompt fixed length",
        "Every prompt this long, instead of a lognormal.",
        "tokens",
        Whole,
        whole(1, MAX_TOKENS),
        flag_note("input-len-fixed", "not with the lognormal's flags"),
    ), |p| tokens_of(&p.traffic.prompt), |p, v| set_tokens(&mut p.traffic.prompt, v)),
    rw(row(
        "traffic.prompt.min",
        "Prompt min",
        "Shortest prompt; shorter ones are raised to it.",
        "tokens",
        Whole,
        whole(1, MAX_TOKENS),
        flag_note("input-len-min", "at most the max"),
    ), |p| Some(p.traffic.prompt.min as f64), |p, v| p.traffic.prompt.min = whole_of(v)),
    rw(row(
        "traffic.prompt.max",
        "Prompt max",
        "Longest prompt; longer ones are clipped.",
        "tokens",
        Whole,
        whole(1, MAX_TOKENS),
        flag("input-len-max"),
    ), |p| Some(p.traffic.prompt.max as f64), |p, v| p.traffic.prompt.max = whole_of(v)),
    rw(row(
        "traffic.output.dist.median",
        "Output median",
        "Typical generated length (lognormal median).",
        "tokens",
        Real,
        closed(1.0, MAX_TOKENS as f64),
        flag("output-len-median"),
    ), |p| median_of(&p.traffic.output), |p, v| set_median(&mut p.traffic.output, v)),
    rw(row(
        "traffic.output.dist.p95",
        "Output p95",
        "95th percentile output length; sets the spread.",
        "tokens",
        Real,
        None,
        flag_note("output-len-p95", "above the median; sets the sigma, so not with --output-len-sigma"),
    ), |p| p95_of(&p.traffic.output), |p, v| set_p95(&mut p.traffic.output, v)),
    rw(show(
        row(
            "traffic.output.dist.sigma",
            "Output sigma",
            "Spread of ln(length); same knob as p95.",
            "",
            Real,
            closed(0.0, 5.0),
            flag("output-len-sigma"),
        ),
        "ln-tokens",
        1.0,
    ), |p| Some(sigma_of(&p.traffic.output)), |p, v| set_sigma(&mut p.traffic.output, v)),
    rw(row(
        "traffic.output.dist.tokens",
        "Output fixed length",
        "Every output this long, instead of a lognormal.",
        "tokens",
        Whole,
        whole(1, MAX_TOKENS),
        flag_note("output-len-fixed", "not with the lognormal's flags"),
    ), |p| tokens_of(&p.traffic.output), |p, v| set_tokens(&mut p.traffic.output, v)),
    rw(row(
        "traffic.output.min",
        "Output min",
        "Shortest output; shorter ones are raised to it.",
        "tokens",
        Whole,
        whole(1, MAX_TOKENS),
        flag_note("output-len-min", "at most the max"),
    ), |p| Some(p.traffic.output.min as f64), |p, v| p.traffic.output.min = whole_of(v)),
    rw(row(
        "traffic.output.max",
        "max_tokens cap",
        "Longest output a request may generate.",
        "tokens",
        Whole,
        whole(1, MAX_TOKENS),
        flag("output-len-max"),
    ), |p| Some(p.traffic.output.max as f64), |p, v| p.traffic.output.max = whole_of(v)),
    rw(row(
        "traffic.prefix_tokens",
        "Shared prefix",
        "Tokens at the start of a prompt that requests share (a system prompt) and a prefix cache can keep.",
        "tokens",
        Whole,
        whole(0, MAX_TOKENS),
        flag("prefix-tokens"),
    ), |p| Some(p.traffic.prefix_tokens as f64), |p, v| p.traffic.prefix_tokens = whole_of(v)),
    rw(row(
        "traffic.prefix_hit_rate",
        "Prefix hit rate",
        "Share of requests whose shared prefix is found in the cache.",
        "",
        Real,
        closed(0.0, 1.0),
        flag("prefix-hit-rate"),
    ), |p| Some(p.traffic.prefix_hit_rate), |p, v| p.traffic.prefix_hit_rate = real(v)),
    switched(row(
        "traffic.sharing",
        "Shared prefixes and sessions",
        "Prompts that share prefixes a prefix cache holds once: shared system prompts or documents, multi-turn sessions. Setting any of the fields below turns it on; off, only the typed prefix and hit rate count.",
        "",
        Switch,
        None,
        None,
    ), sharing_on, set_sharing_on),
    rw(row(
        "traffic.sharing.block_tokens",
        "KV block size",
        "Tokens per KV-cache block (vLLM's --block-size); the cache keeps and finds whole blocks.",
        "tokens",
        Whole,
        whole(1, 256),
        flag("block-size"),
    ), |p| Some(sharing_of(p).block_tokens as f64), |p, v| sharing_mut(p).block_tokens = whole_of(v)),
    rw(row(
        "traffic.sharing.groups",
        "Shared prefixes",
        "Distinct shared prefixes (system prompts, documents) the prompts start with; 0 for none.",
        "prefixes",
        Whole,
        whole(0, 100_000),
        flag("shared-prefixes"),
    ), |p| Some(sharing_of(p).groups as f64), |p, v| sharing_mut(p).groups = whole_of(v)),
    rw(row(
        "traffic.sharing.group_tokens",
        "Shared prefix length",
        "Tokens of each shared prefix, before the request's own part.",
        "tokens",
        Whole,
        whole(0, MAX_TOKENS),
        flag("shared-prefix-tokens"),
    ), |p| Some(sharing_of(p).group_tokens as f64), |p, v| sharing_mut(p).group_tokens = whole_of(v)),
    rw(row(
        "traffic.sharing.zipf",
        "Prefix popularity skew",
        "How unevenly the shared prefixes are used: the k-th is picked in proportion to 1/k^s (0: all alike).",
        "",
        Real,
        closed(0.0, 5.0),
        flag("prefix-zipf"),
    ), |p| Some(sharing_of(p).zipf), |p, v| sharing_mut(p).zipf = real(v)),
    rw(row(
        "traffic.sharing.sessions",
        "Sessions",
        "Multi-turn sessions open at once, each turn resending the conversation so far; 0 for single-turn requests.",
        "sessions",
        Whole,
        whole(0, 100_000),
        flag("sessions"),
    ), |p| Some(sharing_of(p).sessions as f64), |p, v| sharing_mut(p).sessions = whole_of(v)),
    rw(row(
        "traffic.sharing.turns",
        "Turns per session",
        "Turns each session sends; the prompt lengths are each turn's new message, the output lengths its reply.",
        "turns",
        Whole,
        whole(1, 1_000),
        flag("turns"),
    ), |p| Some(sharing_of(p).turns as f64), |p, v| sharing_mut(p).turns = whole_of(v)),
    rw(row(
        "traffic.sharing.document_tokens",
        "Session document",
        "Tokens at the start of each session's conversation that are its own (a passage or file asked about).",
        "tokens",
        Whole,
        whole(0, MAX_TOKENS),
        flag("session-document-tokens"),
    ), |p| Some(sharing_of(p).document_tokens as f64), |p, v| sharing_mut(p).document_tokens = whole_of(v)),
    named(row(
        "traffic.sharing.order",
        "Turn order",
        "How the sessions' turns interleave: each from a random open session (independent users), the sessions in turn, or every turn of every session in a random order, as a benchmark replaying flattened conversations sends them.",
        "",
        Choice(TURN_ORDERS),
        None,
        flag("turn-order"),
    ), turn_order, set_turn_order),
    switched(row(
        "traffic.sharing.replies_cached",
        "Replies cached",
        "The next turn resends the model's own reply, so its KV is cached (a live chat, an agent); off when recorded conversations are replayed, whose replies differ from what the model writes.",
        "",
        Switch,
        None,
        flag("no-replies-cached"),
    ), replies_cached, set_replies_cached),
    // SLO.
    rw(finance(optional(show(
        row(
            "slo.ttft_s",
            "TTFT objective",
            "Time to first token each request must meet; blank for none.",
            "s",
            Real,
            positive(3600.0),
            flag("ttft-slo"),
        ),
        "ms",
        1e-3,
    ))), |p| p.slo.ttft_s, |p, v| { p.slo.ttft_s = v; custom_slo(p) }),
    rw(finance(optional(show(
        row(
            "slo.tpot_s",
            "TPOT objective",
            "Mean time per output token after the first; blank for none.",
            "s",
            Real,
            positive(60.0),
            flag("tpot-slo"),
        ),
        "ms",
        1e-3,
    ))), |p| p.slo.tpot_s, |p, v| { p.slo.tpot_s = v; custom_slo(p) }),
    rw(finance(optional(row(
        "slo.e2e_s",
        "End-to-end objective",
        "Whole-request budget (agents); blank for none.",
        "s",
        Real,
        positive(86_400.0),
        flag("e2e-slo"),
    ))), |p| p.slo.e2e_s, |p, v| { p.slo.e2e_s = v; custom_slo(p) }),
    rw(finance(show(
        row(
            "slo.attainment_target",
            "Attainment target",
            "Share of requests that must meet every objective at once (joint), or each objective on its own (marginal).",
            "",
            Real,
            positive(1.0),
            flag("slo-attainment"),
        ),
        "0–1",
        1.0,
    )), |p| Some(p.slo.attainment_target), |p, v| p.slo.attainment_target = real(v)),
    named(finance(row(
        "slo.mode",
        "SLO mode",
        "Joint: the target share of requests meets every objective at once. Marginal: each objective is a percentile on its own.",
        "",
        Choice(SLO_MODES),
        None,
        flag("slo-mode"),
    )), slo_mode, set_slo_mode),
    // Engine.
    rw(row(
        "engine.max_num_seqs",
        "max_num_seqs",
        "Most sequences decoding at once.",
        "seqs",
        Whole,
        whole(1, MAX_NUM_SEQS),
        flag("max-num-seqs"),
    ), |p| Some(p.engine.max_num_seqs as f64), |p, v| p.engine.max_num_seqs = whole_of(v)),
    rw(row(
        "engine.max_num_batched_tokens",
        "max_num_batched_tokens",
        "Token budget of one step: decodes plus prefill chunks.",
        "tokens",
        Whole,
        whole(1, MAX_BATCHED_TOKENS),
        flag("max-num-batched-tokens"),
    ), |p| Some(p.engine.max_num_batched_tokens as f64), |p, v| p.engine.max_num_batched_tokens = whole_of(v)),
    switched(row(
        "engine.chunked_prefill",
        "Chunked prefill",
        "Split long prompts across steps within the token budget; off runs each prefill whole.",
        "",
        Switch,
        None,
        flag("no-chunked-prefill"),
    ), chunked_prefill, set_chunked_prefill),
    named(row(
        "engine.kv_policy",
        "KV-cache policy",
        "How KV memory limits admission: not at all, by reserving a request's whole length up front, or in blocks as it grows, preempting the newest sequence when full.",
        "",
        Choice(KV_POLICIES),
        None,
        flag("kv-policy"),
    ), kv_policy, set_kv_policy),
    rw(row(
        "engine.spec_draft_tokens",
        "Speculative draft",
        "Draft tokens per step; 0 turns speculative decoding off.",
        "tokens",
        Whole,
        whole(0, MAX_SPEC_DRAFT_TOKENS),
        flag("spec-draft-tokens"),
    ), |p| Some(p.engine.spec_draft_tokens as f64), |p, v| p.engine.spec_draft_tokens = whole_of(v)),
    rw(show(
        row(
            "engine.spec_acceptance",
            "Draft acceptance",
            "Chance one drafted token is accepted.",
            "",
            Real,
            closed(0.0, 1.0),
            flag("spec-acceptance"),
        ),
        "0–1",
        1.0,
    ), |p| Some(p.engine.spec_acceptance), |p, v| p.engine.spec_acceptance = real(v)),
    rw(show(
        row(
            "engine.frontend_s",
            "Frontend time",
            "Time each request spends outside the GPU steps (HTTP, tokenising, first detokenise); adds to TTFT and E2E.",
            "s",
            Real,
            closed(0.0, 10.0),
            flag("frontend-time"),
        ),
        "ms",
        1e-3,
    ), |p| Some(p.engine.frontend_s), |p, v| p.engine.frontend_s = real(v)),
    rw(optional(row(
        "engine.kv_cache_tokens",
        "KV cache size",
        "The KV cache's size as the engine logs it at start (GPU KV cache size), instead of the estimate from memory.",
        "tokens",
        Whole,
        whole(1, 1_000_000_000),
        flag("kv-cache-tokens"),
    )), |p| p.engine.kv_cache_tokens.map(f64::from), |p, v| p.engine.kv_cache_tokens = v.map(|x| x as u32)),
    // Planning.
    rw(finance(show(
        row(
            "planning.utilization",
            "Utilisation",
            "Share of goodput each replica is planned to run at.",
            "",
            Real,
            positive(1.0),
            flag("utilization"),
        ),
        "0–1",
        1.0,
    )), |p| Some(p.planning.utilization), |p, v| p.planning.utilization = real(v)),
    rw(finance(row(
        "planning.redundancy",
        "Redundancy",
        "Spare replicas on top of the peak (N+1 = 1).",
        "replicas",
        Whole,
        whole(0, 1000),
        flag("redundancy"),
    )), |p| Some(p.planning.redundancy as f64), |p, v| p.planning.redundancy = whole_of(v)),
    rw(finance(row(
        "planning.hours_per_month",
        "Hours per month",
        "Hours a month is billed for.",
        "hours",
        Real,
        positive(744.0),
        None,
    )), |p| Some(p.planning.hours_per_month), |p, v| p.planning.hours_per_month = real(v)),
    // Run.
    rw(row(
        "run.num_requests",
        "Requests per run",
        "Simulated requests per point, warm-up included.",
        "requests",
        Whole,
        whole(1, MAX_NUM_REQUESTS),
        flag("num-requests"),
    ), |p| Some(p.run.num_requests as f64), |p, v| p.run.num_requests = whole_of(v)),
    rw(row(
        "run.warmup_requests",
        "Warm-up requests",
        "Requests at the start of a run left out of the statistics; fewer than the requests per run.",
        "requests",
        Whole,
        None,
        flag("warmup-requests"),
    ), |p| Some(p.run.warmup_requests as f64), |p, v| p.run.warmup_requests = whole_of(v)),
    rw(row(
        "run.replications",
        "Replications",
        "Independent seeds per rate; more narrows the band.",
        "runs",
        Whole,
        whole(1, MAX_REPLICATIONS),
        flag("replications"),
    ), |p| Some(p.run.replications as f64), |p, v| p.run.replications = whole_of(v)),
    rw(show(
        row(
            "run.seed",
            "Seed",
            "Base seed; the same seed gives the same numbers everywhere.",
            "",
            Seed,
            None,
            flag("seed"),
        ),
        "",
        1.0,
    ), |p| Some(p.run.seed as f64), |p, v| p.run.seed = v.unwrap_or(0.0) as u64),
    listed(row(
        "run.sweep_max_num_seqs",
        "Sequences to try",
        "max_num_seqs values the knob sweep tries, separated by commas.",
        "seqs",
        List,
        whole(1, MAX_NUM_SEQS),
        None,
    ), sweep_seqs, set_sweep_seqs),
    listed(row(
        "run.sweep_batched_tokens",
        "Token budgets to try",
        "max_num_batched_tokens values the knob sweep tries, separated by commas; 0 tries chunked prefill off.",
        "tokens",
        List,
        whole(0, MAX_BATCHED_TOKENS),
        None,
    ), sweep_budgets, set_sweep_budgets),
    switched(row(
        "run.plan_at_best",
        "Plan at the sweep's best",
        "Size the fleet and its cost at the engine settings the knob sweep finds best, not the plan's own; the settings follow each new sweep.",
        "",
        Switch,
        None,
        flag("plan-at-best"),
    ), plan_at_best, set_plan_at_best),
    // Disaggregated serving.
    named(row(
        "disagg.prefill.gpu",
        "Prefill GPU",
        "GPU preset of the prefill pool (default: the plan's hardware).",
        "",
        Preset,
        None,
        flag("prefill-gpu"),
    ), prefill_gpu, set_prefill_gpu),
    rw(row(
        "disagg.prefill.tp_degree",
        "Prefill TP",
        "GPUs per prefill instance: 1, 2, 4 or 8 (default: the plan's).",
        "GPUs",
        Whole,
        None,
        flag("prefill-tp"),
    ), |p| Some(disagg_of(p).prefill.tp_degree as f64), |p, v| disagg_mut(p).prefill.tp_degree = whole_of(v)),
    rw(row(
        "disagg.prefill.pp_degree",
        "Prefill PP",
        "Pipeline stages of a prefill instance, each a tensor-parallel group; an instance has TP × PP GPUs.",
        "stages",
        Whole,
        whole(1, MAX_PP_DEGREE),
        flag("prefill-pp"),
    ), |p| Some(disagg_of(p).prefill.pp_degree as f64), |p, v| disagg_mut(p).prefill.pp_degree = whole_of(v)),
    rw(row(
        "disagg.prefill.ep_degree",
        "Prefill EP",
        "Expert-parallel GPUs of a prefill instance (a mixture of experts only, attention data-parallel, TP and PP 1).",
        "GPUs",
        Whole,
        whole(1, MAX_GPUS_PER_REPLICA),
        flag("prefill-ep"),
    ), |p| Some(disagg_of(p).prefill.ep_degree as f64), |p, v| disagg_mut(p).prefill.ep_degree = whole_of(v)),
    rw(row(
        "disagg.prefill.max_num_batched_tokens",
        "Prefill budget",
        "Token budget of a prefill step.",
        "tokens",
        Whole,
        whole(1, MAX_BATCHED_TOKENS),
        flag("prefill-budget"),
    ), |p| Some(disagg_of(p).prefill.max_num_batched_tokens as f64), |p, v| disagg_mut(p).prefill.max_num_batched_tokens = whole_of(v)),
    rw(optional(row(
        "disagg.prefill.instances",
        "Prefill instances",
        "Prefill instances for the peak, spares aside; unset lets the sizing choose.",
        "instances",
        Whole,
        whole(1, MAX_DISAGG_INSTANCES),
        flag("prefill-instances"),
    )), |p| disagg_of(p).prefill.instances.map(f64::from), |p, v| disagg_mut(p).prefill.instances = v.map(|x| x as u32)),
    named(row(
        "disagg.decode.gpu",
        "Decode GPU",
        "GPU preset of the decode pool (default: the plan's hardware).",
        "",
        Preset,
        None,
        flag("decode-gpu"),
    ), decode_gpu, set_decode_gpu),
    rw(row(
        "disagg.decode.tp_degree",
        "Decode TP",
        "GPUs per decode instance: 1, 2, 4 or 8 (default: the plan's).",
        "GPUs",
        Whole,
        None,
        flag("decode-tp"),
    ), |p| Some(disagg_of(p).decode.tp_degree as f64), |p, v| disagg_mut(p).decode.tp_degree = whole_of(v)),
    rw(row(
        "disagg.decode.pp_degree",
        "Decode PP",
        "Pipeline stages of a decode instance, each a tensor-parallel group; an instance has TP × PP GPUs.",
        "stages",
        Whole,
        whole(1, MAX_PP_DEGREE),
        flag("decode-pp"),
    ), |p| Some(disagg_of(p).decode.pp_degree as f64), |p, v| disagg_mut(p).decode.pp_degree = whole_of(v)),
    rw(row(
        "disagg.decode.ep_degree",
        "Decode EP",
        "Expert-parallel GPUs of a decode instance (a mixture of experts only, attention data-parallel, TP and PP 1).",
        "GPUs",
        Whole,
        whole(1, MAX_GPUS_PER_REPLICA),
        flag("decode-ep"),
    ), |p| Some(disagg_of(p).decode.ep_degree as f64), |p, v| disagg_mut(p).decode.ep_degree = whole_of(v)),
    rw(row(
        "disagg.decode.max_num_seqs",
        "Decode max_num_seqs",
        "Sequences per decode instance (default: the plan's max_num_seqs).",
        "seqs",
        Whole,
        whole(1, MAX_NUM_SEQS),
        flag("decode-max-num-seqs"),
    ), |p| Some(disagg_of(p).decode.max_num_seqs as f64), |p, v| disagg_mut(p).decode.max_num_seqs = whole_of(v)),
    rw(optional(row(
        "disagg.decode.instances",
        "Decode instances",
        "Decode instances for the peak, spares aside; unset lets the sizing choose.",
        "instances",
        Whole,
        whole(1, MAX_DISAGG_INSTANCES),
        flag("decode-instances"),
    )), |p| disagg_of(p).decode.instances.map(f64::from), |p, v| disagg_mut(p).decode.instances = v.map(|x| x as u32)),
    named(row(
        "disagg.kv_link.source",
        "KV link",
        "Where the KV link's bandwidth comes from: the pools' GPUs (NVLink inside one node, the scale-out network across nodes, a lane per GPU holding a shard of the cache), or the bandwidth given below.",
        "",
        Choice(KV_LINK_SOURCES),
        None,
        flag("kv-link"),
    ), kv_link_source, set_kv_link_source),
    rw(show(
        row(
            "disagg.kv_link.bandwidth_bytes_per_s",
            "KV link bandwidth",
            "Bandwidth of the link each request's KV cache crosses from prefill to decode, as given (setting it gives the link).",
            "bytes/s",
            Real,
            closed(MIN_KV_LINK_BYTES_PER_S, MAX_KV_LINK_BYTES_PER_S),
            Some(Flag {
                name: "kv-link-gbps",
                aliases: &[],
                units: Some(Units {
                    unit: "Gbit/s",
                    scale: 1e9 / 8.0,
                }),
                note: "",
            }),
        ),
        "Gbit/s",
        1e9 / 8.0,
    ), |p| Some(disagg_of(p).kv_link.bandwidth_bytes_per_s), |p, v| {
        let link = &mut disagg_mut(p).kv_link;
        link.bandwidth_bytes_per_s = real(v);
        link.source = KvLinkSource::Given;
    }),
    rw(show(
        row(
            "disagg.kv_link.latency_s",
            "KV link latency",
            "Fixed time of one KV transfer: connection, registration, first byte.",
            "s",
            Real,
            closed(0.0, MAX_KV_LINK_LATENCY_S),
            flag("kv-link-latency"),
        ),
        "ms",
        1e-3,
    ), |p| Some(disagg_of(p).kv_link.latency_s), |p, v| disagg_mut(p).kv_link.latency_s = real(v)),
    named(row(
        "disagg.router",
        "Router",
        "How requests are spread over the instances of a pool.",
        "",
        Choice(ROUTERS),
        None,
        flag("router"),
    ), pools_router, set_pools_router),
    // Routing over replicas.
    rw(row(
        "routing.replicas",
        "Replicas behind the router",
        "Replicas simulated together behind the router, so that where a request lands decides whether its prefix is cached; goodput stays per replica.",
        "replicas",
        Whole,
        whole(2, MAX_ROUTED_REPLICAS),
        flag("fleet-replicas"),
    ), |p| Some(routing_of(p).replicas as f64), |p, v| routing_mut(p).replicas = whole_of(v)),
    named(row(
        "routing.router",
        "Replica router",
        "How requests are spread over the replicas: in turn, at random, to the fewest requests, a session's turns all to one replica, or by the cached share of the prompt, free KV memory and queue (llm-d's precise prefix-cache profile).",
        "",
        Choice(FLEET_ROUTERS),
        None,
        flag("fleet-router"),
    ), replica_router, set_replica_router),
];

#[cfg(test)]
mod tests;
