//! Strict reading of a plan file: [`Plan::from_json_strict`].
//!
//! A share link is read leniently (a field this release does not know is ignored, a
//! section left out takes its defaults), so that links keep opening across releases.
//! A file a person picks by hand deserves the opposite: a typo in a field name, a
//! half-written file, or the CLI's report mistaken for a plan would otherwise load
//! as the defaults without a word. The strict reader refuses each of those and names
//! what is wrong:
//!
//! ```text
//!   text ─serde_json─▶ Value ─┬─ not an object ──────────────▶ NotAnObject
//!                             ├─ report keys, no plan section ▶ LooksLikeReport
//!                             ├─ a key no field reads ───────▶ UnknownFields(paths)
//!                             ├─ a top-level section missing ▶ MissingSections
//!                             └─ Plan (lenient) ─validate────▶ Invalid | Ok(plan)
//! ```
//!
//! Inside a section, fields left out still take their defaults: plan files written
//! before a field existed keep loading, as old links do.
//!
//! Unknown keys are found without a second description of the plan's shape: a key
//! that the re-serialised plan also has is known; a key it lacks is either skipped
//! when serialising (a default) or unknown, and the two are told apart by putting a
//! probe value in its place: a field the plan reads then fails to parse or changes
//! the plan, while an ignored key changes nothing.

use serde_json::{Map, Value};

use super::{Plan, PlanError};

/// The top-level sections a plan file must have (`name` and `calibration` may be left out).
pub const PLAN_SECTIONS: [&str; 7] = [
    "model", "hardware", "traffic", "slo", "engine", "planning", "run",
];

/// Top-level keys of the report `goodput plan --json` prints that no plan has.
const REPORT_KEYS: [&str; 11] = [
    "assumptions",
    "goodput",
    "search",
    "capacity",
    "capacity_error",
    "analytics",
    "memory",
    "flags",
    "knob_hint",
    "alerts",
    "warnings",
];

/// Most unknown keys named in one error.
const MAX_NAMED: usize = 5;

/// Why a plan file was refused by [`Plan::from_json_strict`]. Every variant is safe to
/// show to the person who picked the file; [`std::fmt::Display`] gives one line.
#[derive(Debug, Clone, PartialEq)]
pub enum StrictPlanError {
    /// The text is not JSON, or a field has the wrong type (the parser's message).
    BadJson(String),
    /// The JSON is not an object (`kind` names what it is instead).
    NotAnObject {
        /// `an array`, `a number`, …
        kind: &'static str,
    },
    /// The document is a report (as `goodput plan --json` prints), not a plan.
    LooksLikeReport {
        /// The report keys found, in alphabetical order (at most a few).
        keys: Vec<String>,
    },
    /// Keys no plan field reads, as dotted paths (`engine.max_num_seq`,
    /// `traffic.trace[3].foo`); at most a few are named, `more` counts the rest.
    UnknownFields {
        /// The first unknown keys found.
        paths: Vec<String>,
        /// How many more there are.
        more: usize,
    },
    /// Top-level sections the file leaves out.
    MissingSections(Vec<&'static str>),
    /// The plan parsed but a field is out of range.
    Invalid(PlanError),
}

impl std::fmt::Display for StrictPlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StrictPlanError::BadJson(m) => write!(f, "not a goodput plan in JSON: {m}"),
            StrictPlanError::NotAnObject { kind } => {
                write!(
                    f,
                    "not a goodput plan: the file holds {kind}, a plan is a JSON object"
                )
            }
            StrictPlanError::LooksLikeReport { keys } => write!(
                f,
                "this is a goodput report (the output of `goodput plan --json`, with {}), not a plan; \
                 load a file saved with \"Plan JSON\" or printed by `goodput decode LINK`",
                quoted(keys)
            ),
            StrictPlanError::UnknownFields { paths, more } => {
                let s = if paths.len() + more == 1 { "" } else { "s" };
                write!(f, "unknown field{s} {}", quoted(paths))?;
                if *more > 0 {
                    write!(f, " and {more} more")?;
                }
                write!(f, " (misspelt, or not from goodput)")
            }
            StrictPlanError::MissingSections(names) => {
                let s = if names.len() == 1 { "" } else { "s" };
                write!(
                    f,
                    "missing section{s} {} (a plan file has {})",
                    quoted(names),
                    PLAN_SECTIONS.join(", ")
                )
            }
            StrictPlanError::Invalid(e) => write!(f, "a field is out of range: {e}"),
        }
    }
}

impl std::error::Error for StrictPlanError {}

fn quoted<S: AsRef<str>>(names: &[S]) -> String {
    names
        .iter()
        .map(|n| format!("\"{}\"", n.as_ref()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One line of at most 200 characters, for messages that quote a file.
fn one_line(text: &str) -> String {
    text.chars()
        .take(200)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A step of a path into a JSON document.
#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize),
}

fn path_text(path: &[Step]) -> String {
    let mut out = String::new();
    for s in path {
        match s {
            Step::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

fn at_mut<'a>(doc: &'a mut Value, path: &[Step]) -> Option<&'a mut Value> {
    let mut v = doc;
    for s in path {
        v = match s {
            Step::Key(k) => v.as_object_mut()?.get_mut(k)?,
            Step::Index(i) => v.as_array_mut()?.get_mut(*i)?,
        };
    }
    Some(v)
}

/// Walks `input` beside `written` (the plan as re-serialised) and collects the paths of
/// keys that may be unknown: those `written` lacks.
fn missing_keys(input: &Value, written: &Value, path: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    match (input, written) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in a {
                path.push(Step::Key(k.clone()));
                match b.get(k) {
                    Some(w) => missing_keys(v, w, path, out),
                    None => out.push(path.clone()),
                }
                path.pop();
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (v, w)) in a.iter().zip(b).enumerate() {
                path.push(Step::Index(i));
                missing_keys(v, w, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

/// The probe put in place of a key to see whether the plan reads it: no field of a
/// plan takes this string as it is (numbers, enums, lists and sections refuse a
/// string; a text field would change).
const PROBE: &str = "\u{1}goodput-probe\u{1}";

impl Plan {
    /// Reads a plan file strictly: refuses text that is not a JSON object, a report
    /// mistaken for a plan, keys no plan field reads, missing top-level sections
    /// ([`PLAN_SECTIONS`]) and out-of-range values, naming what is wrong (see
    /// [`StrictPlanError`]). Fields left out inside a section take their defaults, as
    /// in a share link, so older plan files still load.
    pub fn from_json_strict(text: &str) -> Result<Plan, StrictPlanError> {
        let (plan, missing) = read_known(text)?;
        if !missing.is_empty() {
            return Err(StrictPlanError::MissingSections(missing));
        }
        plan.validate().map_err(StrictPlanError::Invalid)?;
        Ok(plan)
    }

    /// Reads a plan file that may leave some top-level sections out, for a page that
    /// loads it as the whole plan: the sections left out take their defaults and are
    /// returned, so the page can say so. Refused as by [`Plan::from_json_strict`],
    /// except that only a file with none of the sections is refused for missing them.
    pub fn from_json_partial(text: &str) -> Result<(Plan, Vec<&'static str>), StrictPlanError> {
        let (plan, missing) = read_known(text)?;
        if missing.len() == PLAN_SECTIONS.len() {
            return Err(StrictPlanError::MissingSections(missing));
        }
        plan.validate().map_err(StrictPlanError::Invalid)?;
        Ok((plan, missing))
    }

    /// Reads a plan file that may leave whole sections out (they take their defaults),
    /// as the CLI's `--plan` does, where flags fill in the rest: text that is not a JSON
    /// object, a report mistaken for a plan and keys no plan field reads (a typo such as
    /// `engine.max_num_seq`) are refused as by [`Plan::from_json_strict`]. Not
    /// validated: the caller validates once its flags are applied.
    pub fn from_json_sparse(text: &str) -> Result<Plan, StrictPlanError> {
        read_known(text).map(|(plan, _)| plan)
    }
}

/// The plan in `text` with the top-level sections ([`PLAN_SECTIONS`]) it leaves out,
/// refused when it is not JSON, not an object, a report, or has keys no plan field reads.
fn read_known(text: &str) -> Result<(Plan, Vec<&'static str>), StrictPlanError> {
    let doc: Value = serde_json::from_str(text)
        .map_err(|e| StrictPlanError::BadJson(one_line(&e.to_string())))?;
    let Value::Object(top) = &doc else {
        return Err(StrictPlanError::NotAnObject {
            kind: kind_of(&doc),
        });
    };
    let has_section = PLAN_SECTIONS.iter().any(|s| top.contains_key(*s));
    let report_keys: Vec<String> = top
        .keys()
        .filter(|k| REPORT_KEYS.contains(&k.as_str()))
        .take(4)
        .cloned()
        .collect();
    if !has_section && report_keys.len() >= 2 {
        return Err(StrictPlanError::LooksLikeReport { keys: report_keys });
    }
    let plan: Plan = serde_json::from_value(doc.clone())
        .map_err(|e| StrictPlanError::BadJson(one_line(&e.to_string())))?;
    let unknown = unknown_keys(&doc, &plan);
    if !unknown.is_empty() {
        let more = unknown.len().saturating_sub(MAX_NAMED);
        let paths = unknown.into_iter().take(MAX_NAMED).collect();
        return Err(StrictPlanError::UnknownFields { paths, more });
    }
    let missing = PLAN_SECTIONS
        .iter()
        .copied()
        .filter(|s| !top.contains_key(*s))
        .collect();
    Ok((plan, missing))
}

/// The dotted paths of the keys in `doc` that `plan` (parsed from it) does not read.
fn unknown_keys(doc: &Value, plan: &Plan) -> Vec<String> {
    let written = serde_json::to_value(plan).unwrap_or(Value::Object(Map::new()));
    let mut candidates = Vec::new();
    missing_keys(doc, &written, &mut Vec::new(), &mut candidates);
    let mut unknown = Vec::new();
    for path in candidates {
        // Past a handful, the rest are counted without probing each (a trace with a
        // stray column in every row would otherwise parse the file once per row).
        if unknown.len() >= MAX_NAMED {
            unknown.push(path_text(&path));
            continue;
        }
        let mut probed = doc.clone();
        if let Some(slot) = at_mut(&mut probed, &path) {
            *slot = Value::String(PROBE.into());
        }
        let ignored = serde_json::from_value::<Plan>(probed).is_ok_and(|p| p == *plan);
        if ignored {
            unknown.push(path_text(&path));
        }
    }
    unknown
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{AttentionKind, SloMode};

    fn plan_json(p: &Plan) -> String {
        serde_json::to_string_pretty(p).expect("encode")
    }

    #[test]
    fn a_written_plan_reads_back_strictly() {
        let mut p = Plan {
            name: "Chat fleet".into(),
            ..Plan::default()
        };
        p.engine.max_num_seqs = 32;
        assert_eq!(Plan::from_json_strict(&plan_json(&p)), Ok(p));
    }

    #[test]
    fn fields_skipped_when_default_are_known_when_written_out() {
        // `slo.mode` and `model.attention` are left out when default; written out by hand
        // (or by another tool) they are still fields of the plan, not unknown keys.
        let mut v = serde_json::to_value(Plan::default()).expect("encode");
        v["slo"]["mode"] = Value::String("joint".into());
        v["model"]["attention"] = Value::String("grouped_query".into());
        v["model"]["kv_lora_rank"] = Value::from(0);
        v["calibration"] = Value::Null;
        let p = Plan::from_json_strict(&v.to_string()).expect("known fields");
        assert_eq!(p.slo.mode, SloMode::default());
        assert_eq!(p.model.attention, AttentionKind::GroupedQuery);
        assert_eq!(p, Plan::default());
    }

    #[test]
    fn an_unrelated_object_names_its_key_and_the_missing_sections() {
        let e = Plan::from_json_strict(r#"{"hello":1}"#).unwrap_err();
        assert_eq!(
            e,
            StrictPlanError::UnknownFields {
                paths: vec!["hello".into()],
                more: 0
            }
        );
        assert!(e.to_string().contains("unknown field \"hello\""), "{e}");
        let e = Plan::from_json_strict("{}").unwrap_err();
        assert_eq!(e, StrictPlanError::MissingSections(PLAN_SECTIONS.to_vec()));
        assert!(
            e.to_string().starts_with("missing sections \"model\""),
            "{e}"
        );
    }

    #[test]
    fn a_misspelt_field_is_named_by_its_path() {
        let mut v = serde_json::to_value(Plan::default()).expect("encode");
        v["engine"]["max_num_seq"] = Value::from(64);
        v["traffic"]["prompt"]["mediam"] = Value::from(1);
        let e = Plan::from_json_strict(&v.to_string()).unwrap_err();
        assert_eq!(
            e,
            StrictPlanError::UnknownFields {
                paths: vec!["engine.max_num_seq".into(), "traffic.prompt.mediam".into()],
                more: 0
            }
        );
        assert!(e
            .to_string()
            .starts_with("unknown fields \"engine.max_num_seq\""));
    }

    #[test]
    fn a_missing_section_is_named() {
        let mut v = serde_json::to_value(Plan::default()).expect("encode");
        v.as_object_mut().expect("object").remove("slo");
        let e = Plan::from_json_strict(&v.to_string()).unwrap_err();
        assert_eq!(e, StrictPlanError::MissingSections(vec!["slo"]));
        assert!(e.to_string().starts_with("missing section \"slo\""), "{e}");
    }

    #[test]
    fn fields_left_out_inside_a_section_take_their_defaults() {
        // A plan file from before a field existed: the engine section lacks most fields.
        let mut v = serde_json::to_value(Plan::default()).expect("encode");
        v["engine"] = serde_json::json!({ "max_num_seqs": 48 });
        let p = Plan::from_json_strict(&v.to_string()).expect("older file");
        assert_eq!(p.engine.max_num_seqs, 48);
        assert_eq!(
            p.engine.max_num_batched_tokens,
            Plan::default().engine.max_num_batched_tokens
        );
    }

    #[test]
    fn a_report_is_not_a_plan() {
        let report = r#"{"name":"goodput capacity plan","assumptions":["x"],
            "goodput":{"goodput_rps":5.0},"capacity":{"replicas_total":3},"warnings":[]}"#;
        let e = Plan::from_json_strict(report).unwrap_err();
        assert!(
            matches!(e, StrictPlanError::LooksLikeReport { .. }),
            "{e:?}"
        );
        let text = e.to_string();
        assert!(text.contains("report"), "{text}");
        assert!(text.contains("goodput plan --json"), "{text}");
        assert!(text.contains("\"assumptions\", \"capacity\""), "{text}");
    }

    #[test]
    fn other_json_is_named_by_kind_or_parser_message() {
        assert_eq!(
            Plan::from_json_strict("[1,2]").unwrap_err(),
            StrictPlanError::NotAnObject { kind: "an array" }
        );
        let e = Plan::from_json_strict("{\"model\": ").unwrap_err();
        assert!(matches!(e, StrictPlanError::BadJson(_)), "{e:?}");
        let mut v = serde_json::to_value(Plan::default()).expect("encode");
        v["engine"]["max_num_seqs"] = Value::String("many".into());
        let e = Plan::from_json_strict(&v.to_string()).unwrap_err();
        assert!(e.to_string().contains("invalid type"), "{e}");
    }

    #[test]
    fn an_out_of_range_value_names_its_field() {
        let mut p = Plan::default();
        p.hardware.mem_utilization = 1.5;
        let e = Plan::from_json_strict(&plan_json(&p)).unwrap_err();
        match &e {
            StrictPlanError::Invalid(pe) => assert_eq!(pe.field, "hardware.mem_utilization"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn unknown_keys_in_list_rows_are_found_and_counted() {
        let mut p = Plan::default();
        p.planning.measured_sweep = (1..=8)
            .map(|i| crate::plan::SweepRow {
                rate_rps: i as f64,
                attainment: 0.99,
            })
            .collect();
        let mut v = serde_json::to_value(&p).expect("encode");
        for row in v["planning"]["measured_sweep"]
            .as_array_mut()
            .expect("rows")
        {
            row["note"] = Value::from("x");
        }
        match Plan::from_json_strict(&v.to_string()).unwrap_err() {
            StrictPlanError::UnknownFields { paths, more } => {
                assert_eq!(paths[0], "planning.measured_sweep[0].note");
                assert_eq!((paths.len(), more), (MAX_NAMED, 3));
            }
            other => panic!("{other:?}"),
        }
    }
}
