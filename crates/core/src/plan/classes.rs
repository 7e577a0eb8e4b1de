//! Traffic classes: several workloads on one fleet, each with its own share of the
//! requests, lengths, objectives and scheduling priority.
//!
//! A class holds only what differs from the plan, by part: a class that sets any prompt
//! length holds a whole prompt law (the plan's as it was, with the keys given applied),
//! and likewise its output law and its SLO; a part it does not set is the plan's and
//! follows the plan's edits. A class that sets no objective keeps the plan's SLO; one
//! that sets any has exactly the objectives it sets, so a batch class with an
//! end-to-end deadline has no TTFT objective. [`Plan::class_plan`] is the plan as one
//! class sees it; everything a class holds is checked there by the plan's own rows.
//!
//! The mix arrives as the plan's arrival process at the plan's rate; each request
//! belongs to a class drawn by the shares (see `goodput_engine::traffic::ClassDraw`).
//! A class may arrive by its own process instead (`arrival=constant`, `cv=3` for
//! gamma): each class then arrives at its share of the rate by its own process (the
//! plan's for a class that names none), and the streams merge by time. A class may
//! replay a trace of its own (`replay=FILE`): its arrivals are the trace's pattern at
//! its share of the rate, and its lengths are the trace's. A class may also follow a
//! prefix structure of its own (`sessions=`, `turns=`, `shared-prefixes=`, …), drawn as
//! a stream of its own so that its sessions' turns come in order.

use serde::{Deserialize, Serialize};

use super::fields::{self, Field};
use super::{
    err, Arrival, LengthDist, LengthSpec, Plan, PlanError, PrefixModel, SloSpec, TraceRow,
};

/// Most traffic classes one plan holds.
pub const MAX_CLASSES: usize = goodput_engine::config::MAX_CLASSES;

/// Highest scheduling priority number a class may take (0 is served first).
pub const MAX_PRIORITY: u32 = 1000;

/// How far the classes' shares may be from adding up to 1.
pub const SHARE_SLACK: f64 = 1e-6;

/// One traffic class of a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TrafficClass {
    /// Its name, unique within the plan ("chat", "batch").
    pub name: String,
    /// Share of the plan's requests that belong to it [0..1]; the shares add up to 1.
    pub share: f64,
    /// Scheduling priority: 0 is admitted first; under KV pressure the highest number is
    /// preempted first.
    pub priority: u32,
    /// Its prompt lengths; `None`: the plan's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<LengthSpec>,
    /// Its output lengths; `None`: the plan's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<LengthSpec>,
    /// Its objectives and attainment target; `None`: the plan's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slo: Option<SloSpec>,
    /// Its own arrival process (Poisson, gamma or constant) at its share of the plan's
    /// rate; `None`: its requests are drawn by share from the plan's one stream.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arrival: Option<Arrival>,
    /// Its own cached prompt prefix (an agent's tool definitions, a long system prompt),
    /// held once in KV memory for the class; `None`: the plan's prefix, if any, shared
    /// with the other classes that keep it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefix: Option<ClassPrefix>,
    /// A trace of its own, replayed: its arrivals in the trace's pattern at its share of
    /// the plan's rate, and its lengths; `None`: its arrivals and lengths are the ones
    /// above.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay: Option<ClassReplay>,
    /// How its prompts share prefixes: shared prefixes of its own, multi-turn sessions
    /// over a document; `None`: none beyond a cached prefix and its hit rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sharing: Option<PrefixModel>,
}

/// A class's own replayed trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassReplay {
    /// The file the rows came from, as the class's text names it (`replay=FILE`).
    pub source: String,
    /// The requests, in arrival order, without block ids.
    pub rows: Vec<TraceRow>,
}

impl ClassReplay {
    /// The rows of `source`, put in arrival order; block ids are dropped, since a class
    /// caches a prefix by its hit rate, not by a trace's blocks.
    pub fn new(source: &str, mut rows: Vec<TraceRow>) -> ClassReplay {
        for r in &mut rows {
            r.blocks = Vec::new();
        }
        rows.sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
        ClassReplay {
            source: source.to_string(),
            rows,
        }
    }
}

/// Longest name of a class's trace [characters].
pub const MAX_REPLAY_SOURCE_CHARS: usize = 200;

/// Reads the rows of the trace a class's `replay=FILE` names, or says why not.
pub type ReadRows<'a> = dyn Fn(&str) -> Result<Vec<TraceRow>, String> + 'a;

/// A reader for text that names no file to read: `replay=FILE` is refused.
pub fn no_files(source: &str) -> Result<Vec<TraceRow>, String> {
    Err(format!(
        "{source} cannot be read here; replay a class's trace with goodput plan --class, or in the page with the class's 'Replay a trace' file"
    ))
}

/// A class's own cached prompt prefix.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ClassPrefix {
    /// Tokens a hit skips [tokens].
    pub tokens: u32,
    /// Probability that a request finds it cached [0..1].
    pub hit_rate: f64,
}

impl Default for TrafficClass {
    fn default() -> Self {
        TrafficClass {
            name: String::new(),
            share: 1.0,
            priority: 0,
            prompt: None,
            output: None,
            slo: None,
            arrival: None,
            prefix: None,
            replay: None,
            sharing: None,
        }
    }
}

/// The plan fields a class may set, by path, with the short names a class's text takes
/// beside the fields' flag names (`ttft=0.5` as well as `ttft-slo=0.5`).
const CLASS_FIELDS: &[(&str, &[&str])] = &[
    ("traffic.arrival.cv", &["cv"]),
    ("traffic.prefix_tokens", &[]),
    ("traffic.prefix_hit_rate", &[]),
    ("traffic.sharing.groups", &[]),
    ("traffic.sharing.group_tokens", &[]),
    ("traffic.sharing.zipf", &[]),
    ("traffic.sharing.sessions", &[]),
    ("traffic.sharing.turns", &[]),
    ("traffic.sharing.document_tokens", &[]),
    ("slo.ttft_s", &["ttft"]),
    ("slo.tpot_s", &["tpot"]),
    ("slo.e2e_s", &["e2e"]),
    ("slo.attainment_target", &["attainment"]),
    ("traffic.prompt.dist.median", &[]),
    ("traffic.prompt.dist.sigma", &[]),
    ("traffic.prompt.dist.p95", &[]),
    ("traffic.prompt.dist.tokens", &[]),
    ("traffic.prompt.min", &[]),
    ("traffic.prompt.max", &[]),
    ("traffic.output.dist.median", &[]),
    ("traffic.output.dist.sigma", &[]),
    ("traffic.output.dist.p95", &[]),
    ("traffic.output.dist.tokens", &[]),
    ("traffic.output.min", &[]),
    ("traffic.output.max", &[]),
];

/// The objectives' paths: a class that sets any of them has exactly those it sets.
const OBJECTIVES: [&str; 3] = ["slo.ttft_s", "slo.tpot_s", "slo.e2e_s"];

/// The field a class key names, and the key's own spelling: a field's flag name or one
/// of its short names.
fn class_field(key: &str) -> Option<&'static Field> {
    CLASS_FIELDS.iter().find_map(|&(path, short)| {
        let f = fields::by_path(path)?;
        let flag = f.flag.map(|g| g.name);
        (short.contains(&key) || flag == Some(key)).then_some(f)
    })
}

/// Every key a class's text takes, for help and errors: `share`, `priority`, then each
/// field's short name or flag name.
pub fn class_keys() -> Vec<&'static str> {
    let mut keys = vec!["share", "peak", "priority", "arrival", "replay"];
    for &(path, short) in CLASS_FIELDS {
        match (short.first(), fields::by_path(path).and_then(|f| f.flag)) {
            (Some(&s), _) => keys.push(s),
            (None, Some(flag)) => keys.push(flag.name),
            (None, None) => {}
        }
    }
    keys
}

impl Plan {
    /// The plan as class `k` sees it: the class's lengths and SLO in place of the plan's,
    /// no classes. Without classes (or past the last), the plan itself without them.
    pub fn class_plan(&self, k: usize) -> Plan {
        let mut p = self.without_classes();
        if let Some(c) = self.classes.get(k) {
            if let Some(l) = c.prompt {
                p.traffic.prompt = l;
            }
            if let Some(l) = c.output {
                p.traffic.output = l;
            }
            if let Some(s) = &c.slo {
                p.slo = s.clone();
            }
            if let Some(a) = c.arrival {
                p.traffic.arrival = a;
            }
            if let Some(x) = c.prefix {
                p.traffic.prefix_tokens = x.tokens;
                p.traffic.prefix_hit_rate = x.hit_rate;
            }
            if let Some(s) = c.sharing {
                // Its hits follow from its structure: the plan's cached prefix is not its.
                if c.prefix.is_none() {
                    p.traffic.prefix_tokens = 0;
                    p.traffic.prefix_hit_rate = 0.0;
                }
                p.traffic.sharing = Some(s);
            }
            if let Some(r) = &c.replay {
                p.traffic.trace.clone_from(&r.rows);
                p.traffic.arrival = Arrival::Trace;
                (p.traffic.prompt, p.traffic.output) = super::replayed_lengths(&r.rows);
            }
        }
        p
    }

    /// The plan without its classes, cloned field by field: a whole clone would copy
    /// every class (its replayed rows) only to drop it.
    fn without_classes(&self) -> Plan {
        let Plan {
            name,
            note,
            model,
            hardware,
            traffic,
            slo,
            engine,
            planning,
            run,
            calibration,
            shootout,
            schedule,
            disagg,
            routing,
            classes: _,
        } = self;
        Plan {
            name: name.clone(),
            note: note.clone(),
            model: model.clone(),
            hardware: hardware.clone(),
            traffic: traffic.clone(),
            slo: slo.clone(),
            engine: engine.clone(),
            planning: planning.clone(),
            run: run.clone(),
            calibration: calibration.clone(),
            shootout: shootout.clone(),
            schedule: schedule.clone(),
            disagg: disagg.clone(),
            routing: *routing,
            classes: Vec::new(),
        }
    }

    /// Each class's plan ([`Plan::class_plan`]); the plan alone when it has no classes.
    pub fn class_plans(&self) -> Vec<Plan> {
        if self.classes.is_empty() {
            return vec![self.clone()];
        }
        (0..self.classes.len())
            .map(|k| self.class_plan(k))
            .collect()
    }

    /// How far each class's attainment target lies above the plan's, in class order
    /// (none for a plan of one class): the engine judges the mix by each class's
    /// attainment less this, against the plan's target.
    pub fn class_target_offsets(&self) -> Vec<f64> {
        (0..self.classes.len())
            .map(|k| self.class_plan(k).slo.attainment_target - self.slo.attainment_target)
            .collect()
    }

    /// The longest prompt any request of the plan may have, its classes' included
    /// [tokens].
    pub fn prompt_cap(&self) -> u32 {
        self.class_plans()
            .iter()
            .map(|p| p.traffic.prompt.max)
            .max()
            .unwrap_or(self.traffic.prompt.max)
    }

    /// The largest `max_tokens` cap of the plan, its classes' included [tokens].
    pub fn output_cap(&self) -> u32 {
        self.class_plans()
            .iter()
            .map(|p| p.traffic.output.max)
            .max()
            .unwrap_or(self.traffic.output.max)
    }

    pub(super) fn validate_classes(&self) -> Result<(), PlanError> {
        let cs = &self.classes;
        if cs.is_empty() {
            return Ok(());
        }
        if cs.len() == 1 {
            return Err(err(
                "classes",
                "one class given, but a plan of one class needs none: give at least 2 classes, or none".into(),
            ));
        }
        if cs.len() > MAX_CLASSES {
            return Err(err(
                "classes",
                format!("must be at most {MAX_CLASSES} classes, got {}", cs.len()),
            ));
        }
        for (k, c) in cs.iter().enumerate() {
            if cs[..k].iter().any(|o| o.name == c.name) {
                return Err(err(
                    "classes.name",
                    format!(
                        "'{}' names two classes; each class needs its own name",
                        c.name
                    ),
                ));
            }
            self.check_class(k)?;
        }
        let sum: f64 = cs.iter().map(|c| c.share).sum();
        if (sum - 1.0).abs() > SHARE_SLACK {
            let each: Vec<String> = cs
                .iter()
                .map(|c| format!("{} {}", c.name, crate::format::sig(c.share)))
                .collect();
            return Err(err(
                "classes.share",
                format!(
                    "the classes' shares add up to {} ({}); they must add up to 1",
                    crate::format::sig(sum),
                    each.join(", ")
                ),
            ));
        }
        let t = &self.traffic;
        if t.sharing.is_some() {
            return Err(err(
                "classes",
                "cannot be mixed with the plan's own prefix structure (shared documents, multi-turn sessions): give the structure to the classes that have it (sessions=, turns=, session-document-tokens=, shared-prefixes=, shared-prefix-tokens= in a class's line), or remove the classes".into(),
            ));
        }
        let structures: Vec<(&str, PrefixModel)> = cs
            .iter()
            .filter_map(|c| c.sharing.map(|s| (c.name.as_str(), s)))
            .collect();
        if let Some(w) = structures.windows(2).find(|w| {
            w[0].1.block_tokens != w[1].1.block_tokens
                || (w[0].1.sessions > 0
                    && w[1].1.sessions > 0
                    && w[0].1.replies_cached != w[1].1.replies_cached)
        }) {
            return Err(err(
                "classes",
                format!(
                    "classes '{}' and '{}' hold their prefixes in blocks of different sizes, or one's sessions resend the model's replies and the other's do not: one fleet has one KV block size and one way of resending replies",
                    w[0].0, w[1].0
                ),
            ));
        }
        if t.prompt.dist == LengthDist::Trace || t.output.dist == LengthDist::Trace {
            return Err(err(
                "classes",
                "cannot be mixed with lengths replayed from a trace: each class draws its own lengths; use lognormal or fixed lengths".into(),
            ));
        }
        let own = cs.iter().find(|c| c.arrives_on_its_own());
        if let (Some(c), false) = (own, open_rate(t.arrival)) {
            return Err(err(
                "classes",
                format!(
                    "class '{}' arrives by its own process at its share of the plan's rate, \
                     which the plan's {} arrivals have none of: make the plan's arrivals \
                     Poisson, gamma or constant, or drop the class's arrival",
                    c.name,
                    t.arrival.name()
                ),
            ));
        }
        Ok(())
    }

    /// Class `k` on its own: its name, share, priority and lengths, and every field its
    /// plan ([`Plan::class_plan`]) holds, against the plan's own rows.
    fn check_class(&self, k: usize) -> Result<(), PlanError> {
        let Some(c) = self.classes.get(k) else {
            return Ok(());
        };
        check_name(&c.name)?;
        if !(c.share.is_finite() && c.share > 0.0 && c.share <= 1.0) {
            return Err(err(
                "classes.share",
                format!(
                    "class '{}': the share must be a number in (0, 1], got {}",
                    c.name, c.share
                ),
            ));
        }
        if c.priority > MAX_PRIORITY {
            return Err(err(
                "classes.priority",
                format!(
                    "class '{}': the priority must be a whole number in 0..={MAX_PRIORITY}, got {}",
                    c.name, c.priority
                ),
            ));
        }
        if let Some(r) = &c.replay {
            check_replay(c, r)?;
        }
        if c.prefix.is_some() && c.sharing.is_some() {
            return Err(err("classes.prefix", two_prefixes(&c.name)));
        }
        if let Some(a) = c.arrival.filter(|&a| !open_rate(a)) {
            return Err(err(
                "classes.arrival",
                format!(
                    "class '{}': its own arrivals are Poisson, gamma or constant, got {}",
                    c.name,
                    a.name()
                ),
            ));
        }
        let uses_trace = [c.prompt, c.output]
            .iter()
            .flatten()
            .any(|l| l.dist == LengthDist::Trace);
        if uses_trace {
            return Err(err(
                "classes.prompt",
                format!(
                    "class '{}': a class's lengths are a lognormal or a fixed length; replayed lengths belong to the plan's trace",
                    c.name
                ),
            ));
        }
        let p = self.class_plan(k);
        let in_class = |e: PlanError| PlanError {
            field: "classes",
            message: format!("class '{}': {}: {}", c.name, e.field, e.message),
            limits: e.limits,
        };
        p.validate_fields().map_err(in_class)?;
        if c.replay.is_some() || c.sharing.is_some() {
            p.validate_traffic().map_err(in_class)?;
        }
        super::validate_length(&p.traffic.prompt, "traffic.prompt.min").map_err(in_class)?;
        super::validate_length(&p.traffic.output, "traffic.output.min").map_err(in_class)
    }
}

impl TrafficClass {
    /// Whether the class arrives by a process of its own (its arrival, or its trace's)
    /// rather than being picked from the plan's one stream.
    pub fn arrives_on_its_own(&self) -> bool {
        self.arrival.is_some() || self.replay.is_some()
    }
}

/// Why a class may not have both a cached prefix with its hit rate and a prefix
/// structure.
fn two_prefixes(name: &str) -> String {
    format!(
        "class '{name}': its cache hits follow from its prefix structure (sessions, shared prefixes), so it takes no cached prefix and hit rate as well: drop prefix-tokens and prefix-hit-rate, or the structure"
    )
}

/// A class's own trace: named so its text reads back, replacing the class's arrivals
/// and lengths, with rows in arrival order and no block ids.
fn check_replay(c: &TrafficClass, r: &ClassReplay) -> Result<(), PlanError> {
    let n = r.source.chars().count();
    if n == 0
        || n > MAX_REPLAY_SOURCE_CHARS
        || r.source.contains(',')
        || r.source.chars().any(char::is_control)
    {
        return Err(err(
            "classes.replay",
            format!(
                "class '{}': the trace's name must be 1 to {MAX_REPLAY_SOURCE_CHARS} characters without ',', got '{}'",
                c.name, r.source
            ),
        ));
    }
    if c.arrival.is_some() || c.prompt.is_some() || c.output.is_some() {
        return Err(err(
            "classes.replay",
            format!(
                "class '{}' replays {}, which brings the class's arrivals and lengths: drop its arrival, cv and length keys, or the replay",
                c.name, r.source
            ),
        ));
    }
    if r.rows.is_empty() {
        return Err(err(
            "classes.replay",
            format!("class '{}': the trace {} has no requests", c.name, r.source),
        ));
    }
    if r.rows.iter().any(|x| !x.blocks.is_empty()) {
        return Err(err(
            "classes.replay",
            format!(
                "class '{}': a class's trace cannot name its prompts' blocks; the class caches a prefix by its hit rate (prefix-tokens, prefix-hit-rate)",
                c.name
            ),
        ));
    }
    if !r.rows.is_sorted_by(|a, b| a.arrival_s <= b.arrival_s) {
        return Err(err(
            "classes.replay",
            format!(
                "class '{}': the rows of {} must be in arrival order",
                c.name, r.source
            ),
        ));
    }
    Ok(())
}

/// Whether `a` arrives at a rate the plan sets: Poisson, gamma or constant (not a trace's
/// own times, not a closed loop's clients).
fn open_rate(a: Arrival) -> bool {
    matches!(
        a,
        Arrival::Poisson | Arrival::Gamma { .. } | Arrival::Constant
    )
}

/// Longest class name [characters].
pub const MAX_CLASS_NAME_CHARS: usize = 64;

/// A class name: 1 to [`MAX_CLASS_NAME_CHARS`] letters, digits, `_` or `-`, so that it
/// is its own Prometheus label and alert group (two names never map to one) and reads
/// whole in a table.
fn check_name(name: &str) -> Result<(), PlanError> {
    let n = name.chars().count();
    let plain = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if n == 0 || n > MAX_CLASS_NAME_CHARS || !plain {
        return Err(err(
            "classes.name",
            format!(
                "'{name}': a class name needs 1 to {MAX_CLASS_NAME_CHARS} letters, digits, '_' or '-'"
            ),
        ));
    }
    Ok(())
}

/// A class from its text, `name:key=value,key=value`, against `plan` (whose lengths and
/// SLO the class keeps where it sets none). Keys: `share` and `priority`, and the plan
/// fields of [`class_keys`], whose values are in their flags' units. The class is
/// checked as [`Plan::validate`] checks it, but for its share (the shares are checked
/// together).
pub fn parse_class(plan: &Plan, text: &str) -> Result<TrafficClass, String> {
    match parse_class_line(plan, text, &no_files)? {
        (class, None) => Ok(class),
        (class, Some(_)) => Err(format!(
            "class '{}': peak gives the class its own rate, which sets every class's share \
             and the plan's peak together: give it with the other classes' lines",
            class.name
        )),
    }
}

/// [`parse_class`], with the class's own peak when its text gives `peak=R` (req/s)
/// in place of a share; the share is then a placeholder, which
/// [`classes_from_lines`] and [`with_class_peak`] set from the peaks. `replay=FILE`
/// takes the rows `read` gives for `FILE`.
pub fn parse_class_line(
    plan: &Plan,
    text: &str,
    read: &ReadRows<'_>,
) -> Result<(TrafficClass, Option<f64>), String> {
    let (name, rest) = text.split_once(':').unwrap_or((text, ""));
    let name = name.trim();
    check_name(name).map_err(|e| e.message)?;
    let mut class = TrafficClass {
        name: name.to_string(),
        ..TrafficClass::default()
    };
    let mut seen: Vec<&str> = Vec::new();
    let mut set: Vec<(&'static Field, f64)> = Vec::new();
    let mut peak = None;
    let mut arrival = None;
    for pair in rest.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(format!(
                "class '{name}': '{pair}' is not key=value; keys: {}",
                class_keys().join(", ")
            ));
        };
        let (key, value) = (key.trim(), value.trim());
        if seen.contains(&key) {
            return Err(format!("class '{name}': '{key}' is given twice"));
        }
        seen.push(key);
        let number = |what: &str| -> Result<f64, String> {
            value
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| format!("class '{name}': {key} must be {what}, got '{value}'"))
        };
        match key {
            "share" | "peak" if seen.contains(&"share") && seen.contains(&"peak") => {
                return Err(format!("class '{name}': give a share or a peak, not both"))
            }
            "share" => class.share = number("a number in (0, 1]")?,
            "arrival" => {
                if !matches!(value, "poisson" | "gamma" | "constant") {
                    return Err(format!(
                        "class '{name}': arrival must be poisson, gamma or constant, got '{value}'"
                    ));
                }
                arrival = Some(value);
            }
            "replay" => {
                let rows = read(value).map_err(|e| format!("class '{name}': replay: {e}"))?;
                class.replay = Some(ClassReplay::new(value, rows));
            }
            "peak" => {
                let x = number("a rate in req/s")?;
                peak_check(x).map_err(|e| format!("class '{name}': peak {e}"))?;
                peak = Some(x);
            }
            "priority" => {
                class.priority = value.parse::<u32>().map_err(|_| {
                    format!(
                        "class '{name}': priority must be a whole number in 0..={MAX_PRIORITY}, got '{value}'"
                    )
                })?
            }
            _ => {
                let Some(f) = class_field(key) else {
                    return Err(format!(
                        "class '{name}': unknown key '{key}'; keys: {}",
                        class_keys().join(", ")
                    ));
                };
                if set.iter().any(|(g, _)| g.path == f.path) {
                    return Err(format!(
                        "class '{name}': {key} sets what an earlier key set ({})",
                        f.label_in_sentence()
                    ));
                }
                let x = number("a number")?;
                if f.is_whole() && x.fract() != 0.0 {
                    return Err(format!(
                        "class '{name}': {key} must be a whole number, got '{value}'"
                    ));
                }
                set.push((f, x * f.flag_units().scale));
            }
        }
    }
    // In the table's order, whatever the order typed: a median before its p95, which
    // sets the spread around it.
    let order = |f: &Field| CLASS_FIELDS.iter().position(|(p, _)| *p == f.path);
    set.sort_by_key(|(f, _)| order(f));
    let mut p = plan.class_plan(usize::MAX);
    if set.iter().any(|(f, _)| OBJECTIVES.contains(&f.path)) {
        p.slo.ttft_s = None;
        p.slo.tpot_s = None;
        p.slo.e2e_s = None;
    }
    // Through the plan's own row: gamma keeps the plan's spread, or takes its default.
    if let (Some(v), Some(row)) = (arrival, fields::by_path("traffic.arrival")) {
        row.set_name(&mut p, v);
    }
    let cv_given = set.iter().any(|(f, _)| f.path == "traffic.arrival.cv");
    if cv_given && arrival.is_some_and(|v| v != "gamma") {
        return Err(format!(
            "class '{name}': cv is the burstiness of gamma arrivals, and arrival={} has none: \
             give arrival=gamma, or drop cv",
            p.traffic.arrival.name()
        ));
    }
    for &(f, x) in &set {
        if let Some(a) = f.access {
            (a.set)(&mut p, Some(x));
        }
    }
    let touched = |prefix: &str| set.iter().any(|(f, _)| f.path.starts_with(prefix));
    class.prompt = touched("traffic.prompt.").then_some(p.traffic.prompt);
    class.output = touched("traffic.output.").then_some(p.traffic.output);
    class.slo = touched("slo.").then(|| p.slo.clone());
    class.arrival = (arrival.is_some() || cv_given).then_some(p.traffic.arrival);
    class.prefix = touched("traffic.prefix_").then_some(ClassPrefix {
        tokens: p.traffic.prefix_tokens,
        hit_rate: p.traffic.prefix_hit_rate,
    });
    class.sharing = touched("traffic.sharing.")
        .then_some(p.traffic.sharing)
        .flatten();
    if touched("traffic.sharing.") && touched("traffic.prefix_") {
        return Err(two_prefixes(name));
    }
    let mut check = plan.clone();
    check.classes = vec![class.clone()];
    check.check_class(0).map_err(|e| e.message)?;
    Ok((class, peak))
}

/// A rate a class's peak may be: positive, and within the plan's own peak's range.
fn peak_check(x: f64) -> Result<(), String> {
    let row = fields::by_path("traffic.peak_rate_rps").ok_or("has no range")?;
    row.check(x).map_err(|e| e.message)
}

/// The classes' peaks added up, `total`, as the plan's peak: within its range.
fn total_check(total: f64) -> Result<(), String> {
    peak_check(total).map_err(|e| format!("the classes' peaks add up to {total} req/s, which {e}"))
}

/// The classes of `texts` (one [`parse_class_line`] each) and, when they give their own
/// peaks, the plan's peak, their sum: each class's share is then its peak over the sum.
/// Either every class gives a peak or none does.
pub fn classes_from_lines(
    plan: &Plan,
    texts: &[&str],
    read: &ReadRows<'_>,
) -> Result<(Vec<TrafficClass>, Option<f64>), String> {
    let lines: Vec<(TrafficClass, Option<f64>)> = texts
        .iter()
        .map(|t| parse_class_line(plan, t, read))
        .collect::<Result<_, _>>()?;
    let with_peak: Vec<&str> = lines
        .iter()
        .filter(|(_, p)| p.is_some())
        .map(|(c, _)| c.name.as_str())
        .collect();
    if with_peak.is_empty() {
        return Ok((lines.into_iter().map(|(c, _)| c).collect(), None));
    }
    if with_peak.len() < lines.len() {
        let without: Vec<&str> = lines
            .iter()
            .filter(|(_, p)| p.is_none())
            .map(|(c, _)| c.name.as_str())
            .collect();
        return Err(format!(
            "{} give a peak and {} a share: give every class a peak (req/s), or every class a share",
            with_peak.join(", "),
            without.join(", ")
        ));
    }
    let total: f64 = lines.iter().filter_map(|(_, p)| *p).sum();
    total_check(total)?;
    let classes = lines
        .into_iter()
        .map(|(c, p)| TrafficClass {
            share: p.unwrap_or(0.0) / total,
            ..c
        })
        .collect();
    Ok((classes, Some(total)))
}

/// `plan`'s classes with class `k` replaced by `class` at its own peak `peak` (req/s),
/// every other class keeping its own peak (its share of the plan's peak), and the
/// plan's new peak, their sum: the shares follow.
pub fn with_class_peak(
    plan: &Plan,
    k: usize,
    class: TrafficClass,
    peak: f64,
) -> Result<(Vec<TrafficClass>, f64), String> {
    let old = plan.traffic.peak_rate_rps;
    let mut peaks: Vec<f64> = plan.classes.iter().map(|c| c.share * old).collect();
    let Some(slot) = peaks.get_mut(k) else {
        return Err(format!("there is no class {}", k + 1));
    };
    *slot = peak;
    let total: f64 = peaks.iter().sum();
    total_check(total)?;
    let mut classes = plan.classes.clone();
    classes[k] = class;
    for (c, p) in classes.iter_mut().zip(&peaks) {
        c.share = p / total;
    }
    Ok((classes, total))
}

/// The text of `class` for `--class`, as [`parse_class`] reads it against `plan`: its
/// name, share and priority, then what it sets, in the keys' flag units.
pub fn class_text(plan: &Plan, class: &TrafficClass) -> String {
    let p = {
        let mut q = plan.clone();
        q.classes = vec![class.clone()];
        q.class_plan(0)
    };
    let mut bits = vec![
        format!("share={}", class.share),
        format!("priority={}", class.priority),
    ];
    if let Some(r) = &class.replay {
        bits.push(format!("replay={}", r.source));
    }
    if let Some(a) = class.arrival {
        bits.push(format!("arrival={}", a.name()));
    }
    // A structure's keys at the empty structure's values go unsaid (sessions without
    // shared prefixes need no `shared-prefixes=0`), unless nothing else would be said.
    let unstructured = {
        let mut q = p.clone();
        q.traffic.sharing = Some(PrefixModel::NONE);
        q
    };
    let terse = class.sharing.is_some_and(|s| s != PrefixModel::NONE);
    for &(path, short) in CLASS_FIELDS {
        let Some(f) = fields::by_path(path) else {
            continue;
        };
        let owned = match path.split('.').nth(1) {
            Some("prompt") => class.prompt.is_some(),
            Some("output") => class.output.is_some(),
            Some("arrival") => class.arrival.is_some(),
            Some("prefix_tokens" | "prefix_hit_rate") => class.prefix.is_some(),
            Some("sharing") => class.sharing.is_some(),
            _ => class.slo.is_some(),
        };
        let (Some(a), true) = (f.access, owned) else {
            continue;
        };
        // The spread once, as the sigma: a p95 says the same.
        if path.ends_with(".p95") || f.held(&p).is_none() {
            continue;
        }
        let Some(x) = (a.get)(&p) else { continue };
        if terse && path.starts_with("traffic.sharing.") && (a.get)(&unstructured) == Some(x) {
            continue;
        }
        let key = short
            .first()
            .copied()
            .or(f.flag.map(|g| g.name))
            .unwrap_or(path);
        bits.push(format!("{key}={}", x / f.flag_units().scale));
    }
    format!("{}:{}", class.name, bits.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_peaks_set_the_shares_and_the_plans_peak() {
        let plan = Plan::default();
        let (classes, total) = classes_from_lines(
            &plan,
            &["chat:peak=14,ttft=0.5", "batch:peak=6,e2e=60"],
            &no_files,
        )
        .expect("two peaks");
        assert_eq!(total, Some(20.0));
        assert_eq!(classes[0].share, 0.7);
        assert_eq!(classes[1].share, 0.3);
        // Shares alone leave the plan's peak to the plan.
        let (_, none) =
            classes_from_lines(&plan, &["a:share=0.5", "b:share=0.5"], &no_files).expect("shares");
        assert_eq!(none, None);
        // One class's peak changed: the others keep theirs, the total and shares follow.
        let mut p = plan.clone();
        p.traffic.peak_rate_rps = 20.0;
        p.classes = classes;
        let (c, peak) = parse_class_line(&p, "chat:peak=34,ttft=0.5", &no_files).expect("a line");
        assert_eq!(peak, Some(34.0));
        let (after, total) = with_class_peak(&p, 0, c, 34.0).expect("a peak");
        assert_eq!(total, 40.0);
        assert_eq!(after[0].share, 34.0 / 40.0);
        assert_eq!(after[1].share * total, 6.0, "batch keeps its own peak");
        assert_eq!(
            after[1].slo.as_ref().and_then(|s| s.e2e_s),
            Some(60.0),
            "and its objective"
        );
        // A class's own arrivals read, write and check as its other keys do.
        let c = parse_class(&plan, "batch:share=0.3,arrival=gamma,cv=3,e2e=60").expect("gamma");
        assert_eq!(c.arrival, Some(Arrival::Gamma { cv: 3.0 }));
        assert_eq!(
            parse_class(&plan, &class_text(&plan, &c)).expect("its text"),
            c
        );
        let c = parse_class(&plan, "batch:share=0.3,arrival=constant").expect("constant");
        assert_eq!(c.arrival, Some(Arrival::Constant));
        assert!(class_text(&plan, &c).contains("arrival=constant"));
        assert_eq!(
            parse_class(&plan, "b:share=0.3").expect("none").arrival,
            None
        );
        for (text, words) in [
            (
                "b:arrival=closed",
                "arrival must be poisson, gamma or constant, got 'closed'",
            ),
            (
                "b:arrival=constant,cv=2",
                "cv is the burstiness of gamma arrivals, and arrival=constant has none",
            ),
            ("b:arrival=gamma,cv=0", "traffic.arrival.cv"),
        ] {
            let e = parse_class(&plan, text).expect_err(text);
            assert!(e.contains(words), "{text}: {e}");
        }
        // And its own prefix: both keys, held together.
        let c = parse_class(
            &plan,
            "agent:share=0.3,prefix-tokens=3000,prefix-hit-rate=0.9",
        )
        .expect("a prefix");
        assert_eq!(
            c.prefix,
            Some(ClassPrefix {
                tokens: 3000,
                hit_rate: 0.9
            })
        );
        assert_eq!(
            parse_class(&plan, &class_text(&plan, &c)).expect("its text"),
            c
        );
        // The plan's cached prefix mixes with classes; a prefix structure does not.
        let mut typed = plan.clone();
        typed.traffic.prefix_tokens = 500;
        typed.traffic.prefix_hit_rate = 0.5;
        typed.classes = vec![parse_class(&plan, "a:share=0.5").expect("a"), c.clone()];
        typed.classes[1].share = 0.5;
        typed.validate().expect("typed prefixes mix with classes");
        let mut structured = typed.clone();
        structured.traffic.prefix_tokens = 0;
        structured.traffic.prefix_hit_rate = 0.0;
        structured.traffic.sharing = Some(crate::plan::PrefixModel::default());
        let e = structured.validate().expect_err("a prefix structure");
        assert!(
            e.message
                .contains("cannot be mixed with the plan's own prefix structure"),
            "{e}"
        );
        let mut closed = plan.clone();
        closed.traffic.arrival = Arrival::Closed {
            concurrency: 8,
            think_s: 0.0,
        };
        closed.classes = vec![
            parse_class(&plan, "a:share=0.5").expect("a"),
            parse_class(&plan, "b:share=0.5,arrival=constant").expect("b"),
        ];
        let e = closed
            .validate()
            .expect_err("a closed loop has no rate to share");
        assert!(
            e.message.contains("class 'b' arrives by its own process"),
            "{e}"
        );
        // parse_class alone cannot take a peak: it needs the other classes.
        let e = parse_class(&p, "chat:peak=34").expect_err("a peak alone");
        assert!(e.contains("give it with the other classes' lines"), "{e}");
    }

    #[test]
    fn a_class_replays_a_trace_of_its_own() {
        let plan = Plan::default();
        let row = |t: f64, prompt: u32, blocks: Vec<u32>| TraceRow {
            arrival_s: t,
            prompt_tokens: prompt,
            output_tokens: 50,
            blocks,
        };
        // Out of order, with block ids: the class keeps the rows sorted, without them.
        let rows = vec![row(2.0, 900, vec![]), row(0.0, 3000, vec![1, 2])];
        let read = |name: &str| match name {
            "code.csv" => Ok(rows.clone()),
            _ => Err(format!("cannot read '{name}'")),
        };
        let (c, _) = parse_class_line(&plan, "code:share=0.4,priority=1,replay=code.csv", &read)
            .expect("a replay");
        let r = c.replay.as_ref().expect("its trace");
        assert_eq!(r.source, "code.csv");
        assert_eq!(
            r.rows.iter().map(|x| x.prompt_tokens).collect::<Vec<_>>(),
            vec![3000, 900]
        );
        assert!(r.rows.iter().all(|x| x.blocks.is_empty()));
        // Its text names the file and reads back to the same class.
        let text = class_text(&plan, &c);
        assert_eq!(text, "code:share=0.4,priority=1,replay=code.csv");
        assert_eq!(parse_class_line(&plan, &text, &read).expect("again").0, c);
        // As the class sees the plan: the trace's arrivals and lengths, capped at its longest.
        let mut p = plan.clone();
        p.classes = vec![
            parse_class(&plan, "chat:share=0.6").expect("chat"),
            c.clone(),
        ];
        p.validate().expect("a plan with a replaying class");
        let seen = p.class_plan(1);
        assert_eq!(seen.traffic.arrival, Arrival::Trace);
        assert_eq!(seen.traffic.trace, r.rows);
        assert_eq!(seen.traffic.prompt.dist, LengthDist::Trace);
        assert_eq!(seen.traffic.prompt.max, 3000);
        assert_eq!(seen.traffic.output.max, 50);
        assert_eq!(
            p.class_plan(0).traffic.trace,
            Vec::new(),
            "chat keeps the plan's"
        );
        // Refused in words: a file that cannot be read, keys the trace decides, a name
        // that would not read back, rows out of order, no rows.
        for (text, words) in [
            (
                "code:replay=gone.csv",
                "class 'code': replay: cannot read 'gone.csv'",
            ),
            (
                "code:replay=code.csv,arrival=gamma",
                "class 'code' replays code.csv, which brings the class's arrivals and lengths",
            ),
            (
                "code:replay=code.csv,input-len-median=500",
                "drop its arrival, cv and length keys, or the replay",
            ),
        ] {
            let e = parse_class_line(&plan, text, &read).expect_err(text);
            assert!(e.contains(words), "{text}: {e}");
        }
        let e = parse_class(&plan, "code:replay=code.csv").expect_err("no files here");
        assert!(e.contains("code.csv cannot be read here"), "{e}");
        for (bad, words) in [
            (
                ClassReplay {
                    source: "a,b.csv".into(),
                    rows: vec![row(0.0, 10, vec![])],
                },
                "characters without ','",
            ),
            (
                ClassReplay {
                    source: "x.csv".into(),
                    rows: vec![row(1.0, 10, vec![]), row(0.0, 10, vec![])],
                },
                "must be in arrival order",
            ),
            (
                ClassReplay {
                    source: "x.csv".into(),
                    rows: vec![],
                },
                "has no requests",
            ),
            (
                ClassReplay {
                    source: "x.csv".into(),
                    rows: vec![row(0.0, 10, vec![1])],
                },
                "cannot name its prompts' blocks",
            ),
        ] {
            let mut q = p.clone();
            q.classes[1].replay = Some(bad);
            let e = q.validate().expect_err(words);
            assert!(e.message.contains(words), "{e}");
        }
        // A class's own trace arrives on its own: the plan's arrivals must have a rate.
        let mut closed = p.clone();
        closed.traffic.arrival = Arrival::Closed {
            concurrency: 8,
            think_s: 0.0,
        };
        let e = closed.validate().expect_err("no rate to share");
        assert!(
            e.message
                .contains("class 'code' arrives by its own process"),
            "{e}"
        );
    }

    #[test]
    fn a_class_holds_a_prefix_structure_of_its_own() {
        let mut plan = Plan::default();
        plan.traffic.prefix_tokens = 300;
        plan.traffic.prefix_hit_rate = 0.5;
        let text = "agent:share=0.3,priority=1,sessions=16,turns=5,session-document-tokens=3000";
        let c = parse_class(&plan, text).expect("sessions");
        let s = c.sharing.expect("its structure");
        assert_eq!((s.sessions, s.turns, s.document_tokens), (16, 5, 3000));
        assert_eq!(c.prefix, None);
        // Its text reads back to the same class.
        let back = class_text(&plan, &c);
        assert_eq!(
            back,
            "agent:share=0.3,priority=1,sessions=16,turns=5,session-document-tokens=3000"
        );
        assert_eq!(parse_class(&plan, &back).expect("again"), c);
        // In a plan: its own structure and none of the plan's cached prefix; chat keeps it.
        let mut p = plan.clone();
        p.classes = vec![parse_class(&plan, "chat:share=0.7").expect("chat"), c];
        p.validate().expect("a plan with a class in sessions");
        let agent = p.class_plan(1);
        assert_eq!(agent.traffic.sharing, Some(s));
        assert_eq!(
            (agent.traffic.prefix_tokens, agent.traffic.prefix_hit_rate),
            (0, 0.0)
        );
        assert_eq!(p.class_plan(0).traffic.prefix_tokens, 300);
        // Refused in words: a cached prefix beside the structure, a structure of the
        // plan's own, two classes' KV blocks of different sizes.
        let e = parse_class(&plan, "a:prefix-tokens=100,sessions=4").expect_err("both");
        assert!(
            e.contains("its cache hits follow from its prefix structure"),
            "{e}"
        );
        let e = parse_class(&plan, "a:sessions=4,turns=400,input-len-max=8000").expect_err("long");
        assert!(e.contains("make the sessions' prompts too long"), "{e}");
        let mut own = p.clone();
        own.traffic.sharing = Some(s);
        own.traffic.prefix_tokens = 0;
        own.traffic.prefix_hit_rate = 0.0;
        let e = own.validate().expect_err("the plan's structure");
        assert!(
            e.message
                .contains("give the structure to the classes that have it"),
            "{e}"
        );
        let mut blocks = p.clone();
        blocks.classes[0].sharing = Some(PrefixModel {
            block_tokens: 32,
            ..s
        });
        let e = blocks.validate().expect_err("two block sizes");
        assert!(
            e.message.contains(
                "classes 'chat' and 'agent' hold their prefixes in blocks of different sizes"
            ),
            "{e}"
        );
    }
}
