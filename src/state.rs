//! The page's plan state: the plan being edited, the raw text of fields being typed, and
//! the last plan that parsed and validated (what every result is computed from).
//!
//! ```text
//!   input text ──parse──▶ draft Plan ──Plan::validate──▶ good Plan (memo, keeps the last valid one)
//!        └─ edits (raw text per field) ─▶ parse errors ─┘
//! ```

pub mod fields;

use std::collections::BTreeMap;

use goodput_core::Plan;
use leptos::prelude::*;

use fields::{field, parse_value, values_match, FIELDS};

/// A problem shown next to an input: the field id (dotted path) and the message.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldProblem {
    /// Dotted path of the field, as in `PlanError::field`.
    pub field: String,
    /// What is wrong and the allowed range.
    pub message: String,
}

/// Raw text the user typed into one field, and the field value at that moment.
#[derive(Debug, Clone, PartialEq)]
struct Edit {
    text: String,
    value_at_edit: Option<f64>,
}

/// The plan state shared by every component (provided as context by `App`).
#[derive(Clone, Copy)]
pub struct PlanState {
    /// The plan as typed so far (may be invalid).
    pub draft: RwSignal<Plan>,
    edits: RwSignal<BTreeMap<&'static str, Edit>>,
    /// Every field whose text does not parse, with its message.
    pub parse_problems: Memo<Vec<FieldProblem>>,
    /// The first problem of the draft: a parse error, else the `Plan::validate` error.
    pub problem: Memo<Option<FieldProblem>>,
    /// The last plan that parsed and validated; results are computed from it.
    pub good: Memo<Plan>,
}

impl PlanState {
    /// A state starting from `plan`.
    pub fn new(plan: Plan) -> PlanState {
        let draft = RwSignal::new(plan);
        let edits: RwSignal<BTreeMap<&'static str, Edit>> = RwSignal::new(BTreeMap::new());
        let parse_problems = Memo::new(move |_| {
            let edits = edits.get();
            draft.with(|p| parse_problems_of(p, &edits))
        });
        let problem = Memo::new(move |_| {
            if let Some(first) = parse_problems.with(|v| v.first().cloned()) {
                return Some(first);
            }
            draft.with(|p| {
                p.validate().err().map(|e| FieldProblem {
                    field: e.field.to_string(),
                    message: e.message,
                })
            })
        });
        let good = Memo::new(move |prev: Option<&Plan>| {
            if problem.with(Option::is_none) {
                draft.get()
            } else {
                prev.cloned().unwrap_or_default()
            }
        });
        PlanState {
            draft,
            edits,
            parse_problems,
            problem,
            good,
        }
    }

    /// The state provided by `App`.
    pub fn expect_context() -> PlanState {
        expect_context::<PlanState>()
    }

    /// Replaces the whole plan (a loaded link, a saved plan) and drops typed text.
    pub fn set_plan(&self, plan: Plan) {
        self.edits.set(BTreeMap::new());
        self.draft.set(plan);
    }

    /// Changes the plan from code (a preset, a select) and drops typed text.
    pub fn update(&self, f: impl FnOnce(&mut Plan)) {
        self.edits.set(BTreeMap::new());
        self.draft.update(f);
    }

    /// Whether the results on screen are stale (the draft has a problem).
    pub fn is_stale(&self) -> bool {
        self.problem.with(Option::is_some)
    }

    /// The text a numeric field shows: what the user typed, unless the value changed since.
    pub fn text_of(&self, id: &'static str) -> String {
        let Some(f) = field(id) else {
            return String::new();
        };
        let current = self.draft.with(|p| (f.get)(p));
        let typed = self.edits.with(|e| e.get(id).cloned());
        match typed {
            Some(edit) if values_match(edit.value_at_edit, current) => edit.text,
            _ => f.kind.format(current),
        }
    }

    /// Handles typing into a numeric field: keeps the text, and applies the value if it parses.
    pub fn input(&self, id: &'static str, text: String) {
        let Some(f) = field(id) else {
            return;
        };
        match parse_value(f.kind, &text) {
            Ok(value) => {
                self.draft.update(|p| (f.set)(p, value));
                let value_at_edit = self.draft.with(|p| (f.get)(p));
                self.edits.update(|e| {
                    e.insert(
                        id,
                        Edit {
                            text,
                            value_at_edit,
                        },
                    );
                });
            }
            Err(_) => {
                let value_at_edit = self.draft.with(|p| (f.get)(p));
                self.edits.update(|e| {
                    e.insert(
                        id,
                        Edit {
                            text,
                            value_at_edit,
                        },
                    );
                });
            }
        }
    }

    /// The message to show under field `id`, if any.
    pub fn message_for(&self, id: &str) -> Option<String> {
        if let Some(m) = self
            .parse_problems
            .with(|v| v.iter().find(|p| p.field == id).map(|p| p.message.clone()))
        {
            return Some(m);
        }
        // The p95 field edits the sigma, so it shows the sigma's problems too.
        let alias = id.strip_suffix(".p95").map(|stem| format!("{stem}.sigma"));
        let message = self.problem.with(|p| {
            p.as_ref()
                .filter(|p| p.field == id || alias.as_deref() == Some(p.field.as_str()))
                .map(|p| p.message.clone())
        })?;
        // The core states ranges in plan units; say which unit this field is typed in.
        Some(match field(id).map(|f| (f.kind, f.unit)) {
            Some((fields::Kind::Real { scale } | fields::Kind::OptionalReal { scale }, unit))
                if scale != 1.0 =>
            {
                format!("{message} (this field is entered in {unit}, i.e. ×{scale:e})")
            }
            _ => message,
        })
    }
}

fn parse_problems_of(plan: &Plan, edits: &BTreeMap<&'static str, Edit>) -> Vec<FieldProblem> {
    FIELDS
        .iter()
        .filter_map(|f| {
            let edit = edits.get(f.id)?;
            if !values_match(edit.value_at_edit, (f.get)(plan)) {
                return None;
            }
            parse_value(f.kind, &edit.text)
                .err()
                .map(|message| FieldProblem {
                    field: f.id.to_string(),
                    message,
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_state(f: impl FnOnce(PlanState)) {
        let owner = Owner::new();
        owner.set();
        f(PlanState::new(Plan::default()));
    }

    #[test]
    fn a_parse_error_keeps_the_last_good_plan_and_recovers() {
        with_state(|s| {
            let id = "engine.max_num_seqs";
            s.input(id, "64".into());
            assert_eq!(s.good.get_untracked().engine.max_num_seqs, 64);
            s.input(id, "6x4".into());
            assert_eq!(s.text_of(id), "6x4", "the typed text stays");
            assert_eq!(s.message_for(id).as_deref(), Some("must be a whole number"));
            assert!(s.is_stale());
            assert_eq!(s.good.get_untracked().engine.max_num_seqs, 64);
            s.input(id, "96".into());
            assert!(!s.is_stale());
            assert_eq!(s.message_for(id), None);
            assert_eq!(s.good.get_untracked().engine.max_num_seqs, 96);
        });
    }

    #[test]
    fn a_validation_error_names_the_field_and_keeps_the_good_plan() {
        with_state(|s| {
            let id = "hardware.mem_utilization";
            s.input(id, "1.5".into());
            let problem = s.problem.get_untracked().expect("out of range");
            assert_eq!(problem.field, id);
            assert!(s.message_for(id).is_some());
            assert_eq!(s.good.get_untracked().hardware.mem_utilization, 0.9);
            s.input(id, "0.85".into());
            assert_eq!(s.good.get_untracked().hardware.mem_utilization, 0.85);
        });
    }

    #[test]
    fn a_preset_overrides_typed_text() {
        with_state(|s| {
            let id = "hardware.mem_bandwidth_bytes_per_s";
            s.input(id, "oops".into());
            assert!(s.is_stale());
            s.update(|p| p.hardware.mem_bandwidth_bytes_per_s = 4.8e12);
            assert_eq!(s.text_of(id), "4.8");
            assert!(!s.is_stale());
        });
    }

    #[test]
    fn p95_shows_the_sigma_problem() {
        with_state(|s| {
            s.input("traffic.prompt.dist.sigma", "9".into());
            let p = s.problem.get_untracked().expect("sigma out of range");
            assert_eq!(p.field, "traffic.prompt.dist.sigma");
            assert!(s.message_for("traffic.prompt.dist.p95").is_some());
        });
    }
}
