//! The page's plan state: the plan being edited, the raw text of fields being typed, and
//! the last plan that parsed and validated (what every result is computed from).
//!
//! ```text
//!   keys ─(a pause of TYPING_PAUSE, Enter, or leaving the field)─▶ commit
//!   input text ──parse──▶ draft Plan ──Plan::validate──▶ good Plan (memo, keeps the last valid one)
//!        └─ edits (raw text per field) ─▶ parse errors ─┘
//! ```

pub mod choices;
pub mod fields;
pub mod listeners;
pub mod messages;

use std::collections::BTreeMap;
use std::time::Duration;

use goodput_core::capacity::parse_sweep_csv;
use goodput_core::plan::SweepRow;
use goodput_core::Plan;
use leptos::prelude::*;

use fields::{field, parse_value, values_match, FIELDS};
use listeners::Listeners;
use messages::{field_message, in_field_words, limits_of, p95_message, rule_words, Problem};

/// Why the plan on screen is not the user's own.
#[derive(Debug, Clone, PartialEq)]
pub enum Visit {
    /// A plan opened from a share link.
    Shared,
    /// A link that could not be opened: the message; the defaults are shown.
    Broken(String),
}

/// How long typing must pause before a field's text is applied (or on leaving the field).
pub const TYPING_PAUSE: Duration = Duration::from_millis(500);

/// Whether `text` looks like a number still being typed ("12.", "1e", "-", nothing):
/// a pause in typing does not apply it; leaving the field does.
pub fn looks_unfinished(text: &str) -> bool {
    let t = text.trim();
    t.is_empty() || t.ends_with(['.', ',', 'e', 'E', '-', '+', '_'])
}

/// What a run button says while an input has a problem.
pub const FIX_THE_INPUT_FIRST: &str =
    "An input has a problem: fix it first, so the run is of the plan on screen";

/// How many replaces of the plan the Undo control can take back.
pub const UNDO_LEVELS: usize = 20;

/// One replace of the plan that Undo can take back: what replaced it, the plan before,
/// and (for a replace that changed whose plan is shown) the visit state before.
#[derive(Debug, Clone, PartialEq)]
pub struct UndoEntry {
    /// What replaced the plan, in a few words ("GPU preset", "load a plan file").
    pub what: String,
    /// The plan before the replace (the draft, as typed).
    pub plan: Plan,
    /// The session's visit state before, for replaces that changed it.
    pub visit: Option<Option<Visit>>,
}

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

/// Raw text typed into the measured-sweep box, and the plan's rows at that moment.
#[derive(Debug, Clone, PartialEq)]
struct SweepEdit {
    text: String,
    rows_at_edit: Vec<SweepRow>,
}

/// Id of the measured-sweep input: the dotted path `Plan::validate` names its rows by.
pub const SWEEP_FIELD: &str = "planning.measured_sweep";

/// Parses the measured-sweep text: blank (or comments only) is no sweep, which means
/// simulated goodput; otherwise `rate,attainment` rows, with a line-numbered message.
pub fn parse_sweep_text(text: &str) -> Result<Vec<SweepRow>, String> {
    let blank = text
        .lines()
        .all(|l| l.split('#').next().unwrap_or("").trim().is_empty());
    if blank {
        return Ok(Vec::new());
    }
    parse_sweep_csv(text).map_err(|e| goodput_core::format::sentence(&e.to_string()))
}

/// The rows of a measured sweep as text, one `rate,attainment` line each.
pub fn format_sweep(rows: &[SweepRow]) -> String {
    rows.iter()
        .map(|r| {
            format!(
                "{},{}",
                goodput_core::format::sig(r.rate_rps),
                goodput_core::format::sig(r.attainment)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The plan state shared by every component (provided as context by `App`).
#[derive(Clone, Copy)]
pub struct PlanState {
    /// The plan as typed so far (may be invalid).
    pub draft: RwSignal<Plan>,
    edits: RwSignal<BTreeMap<&'static str, Edit>>,
    /// Text typed into a field and not applied yet (see [`PlanState::type_text`]).
    pending: RwSignal<BTreeMap<&'static str, String>>,
    sweep_edit: RwSignal<Option<SweepEdit>>,
    /// Every field whose text does not parse, with its message.
    pub parse_problems: Memo<Vec<FieldProblem>>,
    /// Every field the core refuses, each with its message (see [`validation_problems_of`]).
    pub validation_problems: Memo<Vec<FieldProblem>>,
    /// The first problem of the draft: a parse error, else the `Plan::validate` error.
    pub problem: Memo<Option<FieldProblem>>,
    /// The last plan that parsed and validated; results are computed from it.
    pub good: Memo<Plan>,
    /// Replaces of the plan that Undo can take back, the latest last.
    pub undo_stack: RwSignal<Vec<UndoEntry>>,
    /// Counts wholesale replaces (a load, a link, undo): a plan that was not edited
    /// step by step, whose knobs were never tuned here.
    pub replaced: RwSignal<u64>,
    /// What runs after each edit of the draft ([`PlanState::on_edit`]).
    listeners: Listeners,
}

impl PlanState {
    /// A state starting from `plan`.
    pub fn new(plan: Plan) -> PlanState {
        let draft = RwSignal::new(plan);
        let edits: RwSignal<BTreeMap<&'static str, Edit>> = RwSignal::new(BTreeMap::new());
        let sweep_edit: RwSignal<Option<SweepEdit>> = RwSignal::new(None);
        let parse_problems = Memo::new(move |_| {
            let edits = edits.get();
            let sweep = sweep_edit.get();
            draft.with(|p| {
                let mut problems = parse_problems_of(p, &edits);
                problems.extend(sweep_problem_of(p, sweep.as_ref()));
                problems
            })
        });
        // The last draft that validated: a refused field is set back to its value there
        // to look for the next problem, so that one refused field does not make another
        // look wrong (a refused pipeline degree put back to 1 would leave a model that
        // fits only on two stages "too big for its memory").
        let last_valid = StoredValue::new(Plan::default());
        let validation_problems = Memo::new(move |_| {
            draft.with(|p| {
                let problems = last_valid.with_value(|v| validation_problems_of(p, v));
                if problems.is_empty() {
                    last_valid.set_value(p.clone());
                }
                problems
            })
        });
        let problem = Memo::new(move |_| {
            if let Some(first) = parse_problems.with(|v| v.first().cloned()) {
                return Some(first);
            }
            validation_problems.with(|v| v.first().cloned())
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
            pending: RwSignal::new(BTreeMap::new()),
            sweep_edit,
            parse_problems,
            validation_problems,
            problem,
            good,
            undo_stack: RwSignal::new(Vec::new()),
            replaced: RwSignal::new(0),
            listeners: Listeners::new(),
        }
    }

    /// The state provided by `App`.
    pub fn expect_context() -> PlanState {
        expect_context::<PlanState>()
    }

    /// Runs `f` after every edit of the plan from here on: a typed value, a change, a
    /// replace, Undo, and a fix of typed text that did not parse. A controller whose
    /// running work an edit makes stale stops it from here, as the edit happens, rather
    /// than from an effect watching the draft.
    pub fn on_edit(&self, f: impl Fn() + 'static) {
        self.listeners.add(f);
    }

    /// Writes the draft, then tells the listeners.
    fn write(&self, f: impl FnOnce(&mut Plan)) {
        self.draft.update(f);
        self.listeners.tell();
    }

    /// Replaces the whole plan (a loaded link, a saved plan) and drops typed text.
    /// Undo cannot take this back: see [`PlanState::replace`].
    pub fn set_plan(&self, plan: Plan) {
        self.edits.set(BTreeMap::new());
        self.pending.set(BTreeMap::new());
        self.sweep_edit.set(None);
        self.replaced.update(|n| *n += 1);
        self.write(|p| *p = plan);
    }

    /// Keeps the draft on the undo stack (unless `next` is the same plan), as the step
    /// `what`; `visit` is the session's visit state before, when the replace changes it.
    fn remember(&self, what: &str, next: &Plan, visit: Option<Option<Visit>>) {
        let before = self.draft.get_untracked();
        if before == *next {
            return;
        }
        self.undo_stack.update(|stack| {
            stack.push(UndoEntry {
                what: what.to_string(),
                plan: before,
                visit,
            });
            let over = stack.len().saturating_sub(UNDO_LEVELS);
            stack.drain(..over);
        });
    }

    /// Replaces the whole plan as [`PlanState::set_plan`] does, keeping the plan before
    /// for Undo (`what` names the step; `visit` as in [`UndoEntry::visit`]).
    pub fn replace(&self, what: &str, plan: Plan, visit: Option<Option<Visit>>) {
        self.remember(what, &plan, visit);
        self.set_plan(plan);
    }

    /// Changes the plan as [`PlanState::update`] does (a preset, applied settings),
    /// keeping the plan before for Undo.
    pub fn change(&self, what: &str, f: impl FnOnce(&mut Plan)) {
        let mut next = self.draft.get_untracked();
        f(&mut next);
        self.remember(what, &next, None);
        self.edits.set(BTreeMap::new());
        self.pending.set(BTreeMap::new());
        self.write(|p| *p = next);
    }

    /// Takes back the last replace: the plan before it comes back. Returns the step
    /// taken back, if there was one.
    pub fn undo(&self) -> Option<UndoEntry> {
        let mut entry = None;
        self.undo_stack.update(|s| entry = s.pop());
        let entry = entry?;
        self.set_plan(entry.plan.clone());
        Some(entry)
    }

    /// Changes the plan's name or note; text typed into the numeric fields stays.
    pub fn relabel(&self, f: impl FnOnce(&mut Plan)) {
        self.write(f);
    }

    /// Changes the plan from code (a preset, a select) and drops typed numeric text.
    pub fn update(&self, f: impl FnOnce(&mut Plan)) {
        self.edits.set(BTreeMap::new());
        self.pending.set(BTreeMap::new());
        self.write(f);
    }

    /// Sets the plan's traffic-over-a-day profile, adding a schedule with the default
    /// autoscaler if it has none.
    pub fn set_day_profile(&self, profile: goodput_core::schedule::RateProfile) {
        self.update(|p| match p.schedule.as_mut() {
            Some(s) => s.profile = profile,
            None => {
                p.schedule = Some(goodput_core::schedule::ScheduleSpec {
                    profile,
                    options: Default::default(),
                })
            }
        });
    }

    /// The text the measured-sweep box shows: what the user typed, unless the rows
    /// changed since (a loaded link or saved plan), else the plan's rows.
    pub fn sweep_text(&self) -> String {
        let typed = self.sweep_edit.get();
        self.draft.with(|p| match typed {
            Some(e) if e.rows_at_edit == p.planning.measured_sweep => e.text,
            _ => format_sweep(&p.planning.measured_sweep),
        })
    }

    /// Handles typing into the measured-sweep box: keeps the text, and applies the rows
    /// if it parses (blank text clears the sweep: goodput is simulated again).
    pub fn input_sweep(&self, text: String) {
        let parsed = parse_sweep_text(&text);
        if let Ok(rows) = &parsed {
            self.draft
                .update(|p| p.planning.measured_sweep = rows.clone());
        }
        let rows_at_edit = self
            .draft
            .with_untracked(|p| p.planning.measured_sweep.clone());
        self.sweep_edit.set(Some(SweepEdit { text, rows_at_edit }));
        // Told once the typed text is recorded too (see `input`).
        if parsed.is_ok() {
            self.listeners.tell();
        }
    }

    /// Whether the results on screen are stale (the draft has a problem).
    pub fn is_stale(&self) -> bool {
        self.problem.with(Option::is_some)
    }

    /// Why a run button is off while an input has a problem (its `title`), or `None`:
    /// a run would work on the plan before the edit, not on the one on screen.
    pub fn run_blocked(&self) -> Option<&'static str> {
        self.is_stale().then_some(FIX_THE_INPUT_FIRST)
    }

    /// The text a numeric field shows: what the user is typing, else what was typed,
    /// unless the value changed since.
    pub fn text_of(&self, id: &'static str) -> String {
        let Some(f) = field(id) else {
            return String::new();
        };
        if let Some(text) = self.pending.with(|p| p.get(id).cloned()) {
            return text;
        }
        let current = self.draft.with(|p| (f.get)(p));
        let typed = self.edits.with(|e| e.get(id).cloned());
        match typed {
            Some(edit) if values_match(edit.value_at_edit, current) => edit.text,
            _ => f.kind.format(current),
        }
    }

    /// Keeps text being typed into field `id` without applying it: nothing is checked
    /// or run until [`PlanState::commit`] (after a pause in typing, or on leaving the field).
    pub fn type_text(&self, id: &'static str, text: String) {
        self.pending.update(|p| {
            p.insert(id, text);
        });
    }

    /// Applies the text typed into field `id` (as [`PlanState::input`] does). After a mere
    /// pause (`on_pause`), text that [`looks_unfinished`] keeps waiting; returns whether
    /// the text was applied.
    pub fn commit(&self, id: &'static str, on_pause: bool) -> bool {
        let Some(text) = self.pending.with_untracked(|p| p.get(id).cloned()) else {
            return false;
        };
        if on_pause && looks_unfinished(&text) {
            return false;
        }
        self.pending.update(|p| {
            p.remove(id);
        });
        self.input(id, text);
        true
    }

    /// Whether some field holds typed text not applied yet (the results do not reflect
    /// it). Tracks the typing.
    pub fn is_typing(&self) -> bool {
        self.pending.with(|p| !p.is_empty())
    }

    /// Handles a whole value typed into a numeric field: keeps the text, and applies the
    /// value if it parses.
    pub fn input(&self, id: &'static str, text: String) {
        let Some(f) = field(id) else {
            return;
        };
        match parse_value(f.kind, &text) {
            Ok(value) => {
                // The value it holds already (typed again, or 3.35 for 3.35e12 B/s): nothing
                // changes, so the preset stays and nothing runs again.
                let current = self.draft.with_untracked(|p| (f.get)(p));
                let changed = !values_match(value, current);
                // Text that did not parse held the good plan back: it moves on now, even
                // when the value is the one the plan held.
                let unblocked = self.edits.with_untracked(|e| {
                    e.get(id)
                        .is_some_and(|edit| parse_value(f.kind, &edit.text).is_err())
                });
                if changed {
                    self.draft.update(|p| (f.set)(p, value));
                }
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
                // Told once the typed text is recorded too, so that a listener reading
                // the good plan sees the edit's own verdict.
                if changed || unblocked {
                    self.listeners.tell();
                }
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
        // Text being typed is not checked until it is applied.
        if self.pending.with(|p| p.contains_key(id)) {
            return None;
        }
        if let Some(m) = self
            .parse_problems
            .with(|v| v.iter().find(|p| p.field == id).map(|p| p.message.clone()))
        {
            return Some(m);
        }
        // The p95 field edits the sigma, so it shows the sigma's problems too, worded as
        // p95s; the sweep box shows the problems of its rows' fields.
        let alias = id.strip_suffix(".p95").map(|stem| format!("{stem}.sigma"));
        if let Some(sigma) = alias.as_deref() {
            let refused = self
                .validation_problems
                .with(|v| v.iter().any(|p| p.field == sigma));
            if let (true, Some(p95), Some(sigma)) = (refused, field(id), field(sigma)) {
                // The p95 as typed, unless the plan has changed it since.
                let current = self.draft.with(|plan| (p95.get)(plan));
                let typed = self.edits.with(|e| {
                    e.get(id)
                        .filter(|edit| values_match(edit.value_at_edit, current))
                        .and_then(|edit| parse_value(p95.kind, &edit.text).ok().flatten())
                });
                if let Some(m) = self.draft.with(|plan| p95_message(p95, sigma, plan, typed)) {
                    return Some(m);
                }
            }
        }
        self.validation_problems.with(|v| {
            v.iter()
                .find(|p| {
                    p.field == id
                        || alias.as_deref() == Some(p.field.as_str())
                        || (id == SWEEP_FIELD && p.field.starts_with(SWEEP_FIELD))
                })
                .map(|p| p.message.clone())
        })
    }
}

/// Most fields [`validation_problems_of`] names at once.
const MAX_FIELD_PROBLEMS: usize = 12;

/// Every field of `plan` the core refuses, not only the first: `Plan::validate` names
/// one field; that field then takes its value in `last_valid` (the last draft that
/// validated; its default when that is no different) and the plan is checked again,
/// until it passes, a field repeats (a rule across fields) or a problem is not of a
/// numeric field. The first problem is `Plan::validate`'s own.
fn validation_problems_of(plan: &Plan, last_valid: &Plan) -> Vec<FieldProblem> {
    // A valid plan, the usual case on every edit, is checked once and never copied.
    let Err(first) = plan.validate() else {
        return Vec::new();
    };
    let defaults = Plan::default();
    let mut probe = plan.clone();
    let mut out: Vec<FieldProblem> = Vec::new();
    let mut next = Some(first);
    while let Some(e) = next.take() {
        if out.len() == MAX_FIELD_PROBLEMS || out.iter().any(|p| p.field == e.field) {
            break;
        }
        let f = field(e.field);
        out.push(FieldProblem {
            field: e.field.to_string(),
            message: in_field_words(&e).unwrap_or_else(|| rule_words(&e)),
        });
        // Set back to the last valid plan's value, or the default's when that is the
        // same value (a link that never validated here).
        match f {
            Some(f) => {
                let back = (f.get)(last_valid);
                let back = if values_match(back, (f.get)(plan)) {
                    (f.get)(&defaults)
                } else {
                    back
                };
                (f.set)(&mut probe, back)
            }
            None => break,
        }
        next = probe.validate().err();
    }
    out
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
                .map(|problem| FieldProblem {
                    field: f.id.to_string(),
                    message: field_message(
                        f,
                        Problem::Parse(problem, &edit.text),
                        limits_of(f, plan),
                    ),
                })
        })
        .collect()
}

fn sweep_problem_of(plan: &Plan, edit: Option<&SweepEdit>) -> Option<FieldProblem> {
    let edit = edit.filter(|e| e.rows_at_edit == plan.planning.measured_sweep)?;
    parse_sweep_text(&edit.text)
        .err()
        .map(|message| FieldProblem {
            field: SWEEP_FIELD.to_string(),
            message,
        })
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
            assert_eq!(
                s.message_for(id).as_deref(),
                Some("max_num_seqs must be a whole number from 1 to 16,384 seqs")
            );
            assert!(s.is_stale());
            assert_eq!(s.good.get_untracked().engine.max_num_seqs, 64);
            s.input(id, "96".into());
            assert!(!s.is_stale());
            assert_eq!(s.message_for(id), None);
            assert_eq!(s.good.get_untracked().engine.max_num_seqs, 96);
        });
    }

    #[test]
    fn typed_text_waits_for_a_whole_value() {
        with_state(|s| {
            let id = "traffic.peak_rate_rps";
            let before = s.good.get_untracked();
            for typed in ["1", "12", "12."] {
                s.type_text(id, typed.into());
                assert_eq!(s.text_of(id), typed, "the field shows what is typed");
                assert!(s.is_typing());
                assert_eq!(s.good.get_untracked(), before, "{typed} is not applied yet");
            }
            assert!(!s.commit(id, true), "a pause after \"12.\" keeps waiting");
            assert_eq!(s.good.get_untracked(), before);
            s.type_text(id, "12.5".into());
            assert!(s.commit(id, true), "a pause after a whole value applies it");
            assert!(!s.is_typing());
            assert_eq!(s.good.get_untracked().traffic.peak_rate_rps, 12.5);

            // Not checked while typed; leaving the field applies even unfinished text.
            s.type_text(id, "1e".into());
            assert_eq!(s.message_for(id), None);
            assert!(!s.commit(id, true));
            assert!(s.commit(id, false));
            assert!(s.message_for(id).is_some(), "\"1e\" is not a number");
            assert_eq!(s.good.get_untracked().traffic.peak_rate_rps, 12.5);
            s.type_text(id, "1e9".into());
            assert!(s.commit(id, true));
            assert_eq!(s.draft.get_untracked().traffic.peak_rate_rps, 1e9);
        });
    }

    #[test]
    fn unfinished_numbers() {
        for t in ["", " ", "12.", "1e", "1E", "-", "1e-", "3,"] {
            assert!(looks_unfinished(t), "{t:?}");
        }
        for t in ["1", "12.5", "1e9", "0.85", "x"] {
            assert!(!looks_unfinished(t), "{t:?}");
        }
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

    /// Fewer requests per run than the warm-up leaves out: the warm-up field (an input
    /// of its own) says so in words, with the range the requests per run allow.
    #[test]
    fn too_few_requests_for_the_warm_up_is_worded_at_the_warm_up_field() {
        with_state(|s| {
            s.input("run.num_requests", "150".into());
            assert!(
                field("run.warmup_requests").is_some(),
                "the warm-up has an input"
            );
            let m = s
                .message_for("run.warmup_requests")
                .expect("the warm-up is refused");
            assert_eq!(
                m,
                "Warm-up requests must be a whole number from 0 to 149 requests; it is 200"
            );
            assert_eq!(s.good.get_untracked().run.num_requests, 2500);
            s.input("run.warmup_requests", "15".into());
            assert!(s.message_for("run.warmup_requests").is_none());
            assert_eq!(s.good.get_untracked().run.num_requests, 150);
        });
    }

    /// A value too large for the plan's unit once scaled (1e308 billion parameters) is
    /// refused under its field with the field's range, and a message about an earlier
    /// value gives way to it.
    #[test]
    fn a_huge_value_in_a_scaled_field_is_refused_not_ignored() {
        with_state(|s| {
            let id = "model.params";
            s.input(id, "0".into());
            let zero = s.message_for(id).expect("0 is refused");
            s.input(id, "1e308".into());
            let huge = s.message_for(id).expect("1e308 billion is refused");
            assert_ne!(huge, zero);
            assert!(huge.starts_with("Parameters must be a number"), "{huge}");
            assert!(huge.contains("billion"), "{huge}");
            assert_eq!(s.good.get_untracked().model.params, 8e9);
            s.input(id, "9".into());
            assert!(s.message_for(id).is_none());
            assert_eq!(s.good.get_untracked().model.params, 9e9);
        });
    }

    #[test]
    fn typing_the_value_a_field_holds_changes_nothing() {
        with_state(|s| {
            let before = s.draft.get_untracked();
            for (id, same) in [
                ("hardware.mem_bandwidth_bytes_per_s", "3.35"),
                ("model.params", "8"),
                ("slo.ttft_s", "500"),
                ("engine.max_num_seqs", "128"),
            ] {
                assert_eq!(s.text_of(id), same, "{id} shows {same}");
                s.input(id, same.into());
                assert_eq!(
                    s.draft.get_untracked(),
                    before,
                    "{id}: the plan and its presets stay"
                );
                assert_eq!(s.message_for(id), None);
            }
            // A different value still applies (and makes the preset custom).
            s.input("model.params", "9".into());
            assert_eq!(s.draft.get_untracked().model.params, 9e9);
            assert_ne!(s.draft.get_untracked().model.preset, before.model.preset);
        });
    }

    #[test]
    fn every_refused_field_is_marked_not_only_the_first() {
        with_state(|s| {
            s.input("traffic.peak_rate_rps", "-5".into());
            s.input("engine.max_num_seqs", "0".into());
            s.input("hardware.gpu_hour_usd", "-1".into());
            for id in [
                "traffic.peak_rate_rps",
                "engine.max_num_seqs",
                "hardware.gpu_hour_usd",
            ] {
                assert!(s.message_for(id).is_some(), "{id} is marked");
            }
            assert_eq!(s.message_for("slo.ttft_s"), None, "a valid field is not");
            // Mending one leaves the others marked.
            s.input("engine.max_num_seqs", "64".into());
            assert_eq!(s.message_for("engine.max_num_seqs"), None);
            assert!(s.message_for("traffic.peak_rate_rps").is_some());
            assert!(s.is_stale());
        });
    }

    /// Routing over replicas with a closed loop: the core refuses it at the replicas,
    /// and the field says so in its own label and the core's words, as a sentence; one
    /// replica (or open-loop arrivals) mends it, and each switch is an undoable step.
    #[test]
    fn routing_a_closed_loop_is_refused_at_the_replicas_in_words() {
        use goodput_core::plan::{Arrival, RoutingSpec};
        with_state(|s| {
            s.change("replicas behind a router", |p| {
                p.routing = Some(RoutingSpec::default())
            });
            assert!(!s.is_stale());
            assert_eq!(s.good.get_untracked().routing, Some(RoutingSpec::default()));
            s.update(|p| {
                p.traffic.arrival = Arrival::Closed {
                    concurrency: 64,
                    think_s: 0.0,
                }
            });
            let core = s.draft.get_untracked().validate().expect_err("refused");
            assert_eq!(core.field, "routing.replicas");
            let m = s
                .message_for("routing.replicas")
                .expect("refused at the replicas");
            assert!(
                m.starts_with("Replicas behind the router need open-loop arrivals: "),
                "{m}"
            );
            assert!(m.contains(&core.message) && m.ends_with('.'), "{m}");
            assert!(s.is_stale());
            assert_eq!(s.good.get_untracked().traffic.arrival, Arrival::Poisson);
            s.change("one replica, no router", |p| p.routing = None);
            assert!(!s.is_stale());
            assert_eq!(s.message_for("routing.replicas"), None);
            // Undo brings the routing back, and the message with it.
            assert_eq!(s.undo().expect("a step").what, "one replica, no router");
            assert_eq!(
                s.draft.get_untracked().routing,
                Some(RoutingSpec::default())
            );
            assert!(s.message_for("routing.replicas").is_some());
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

    /// A p95 below the median (a negative sigma) is refused under the p95 in its own
    /// words: the p95s the sigma's range allows at the plan's median, in tokens.
    #[test]
    fn a_p95_below_the_median_is_worded_as_a_p95() {
        with_state(|s| {
            s.input("traffic.output.dist.p95", "10".into());
            let m = s.message_for("traffic.output.dist.p95").expect("refused");
            assert!(
                m.starts_with("Output p95 must be a number from 200 to "),
                "{m}"
            );
            assert!(m.ends_with(" tokens; it is 10"), "{m}");
            assert!(!m.contains("sigma"), "{m}");
        });
    }

    /// A p95 of 0 or less has no sigma: the box keeps what was typed, the sigma's box is
    /// empty rather than "NaN", and the message quotes the p95 typed.
    #[test]
    fn a_p95_of_zero_or_less_keeps_its_text_and_is_quoted() {
        with_state(|s| {
            for typed in ["-1", "0"] {
                s.input("traffic.prompt.dist.p95", typed.into());
                assert_eq!(s.text_of("traffic.prompt.dist.p95"), typed);
                assert_eq!(s.text_of("traffic.prompt.dist.sigma"), "");
                let m = s.message_for("traffic.prompt.dist.p95").expect("refused");
                assert!(m.ends_with(&format!(" tokens; it is {typed}")), "{m}");
                assert!(s.is_stale());
            }
            s.input("traffic.prompt.dist.p95", "2000".into());
            assert_eq!(s.text_of("traffic.prompt.dist.p95"), "2000");
            assert!(!s.is_stale());
        });
    }

    const ARTICLE_SWEEP: &str = "4,0.99\n6,0.97\n8,0.93\n9,0.71\n10,0.38";

    #[test]
    fn a_pasted_sweep_reaches_the_good_plan_and_a_bad_row_names_its_line() {
        with_state(|s| {
            s.input_sweep(ARTICLE_SWEEP.into());
            let rows = s.good.get_untracked().planning.measured_sweep;
            assert_eq!(rows.len(), 5);
            assert_eq!((rows[2].rate_rps, rows[2].attainment), (8.0, 0.93));
            assert!(!s.is_stale());
            assert_eq!(s.sweep_text(), ARTICLE_SWEEP, "the typed text stays");

            s.input_sweep("4,0.99\n6,oops".into());
            let m = s.message_for(SWEEP_FIELD).expect("a parse problem");
            assert!(m.contains("line 2"), "{m}");
            assert!(m.starts_with(char::is_uppercase) && m.ends_with('.'), "{m}");
            assert!(s.is_stale());
            assert_eq!(s.sweep_text(), "4,0.99\n6,oops");
            assert_eq!(s.good.get_untracked().planning.measured_sweep, rows);

            s.input_sweep("  \n# none yet\n".into());
            assert!(!s.is_stale());
            assert!(s.good.get_untracked().planning.measured_sweep.is_empty());
        });
    }

    #[test]
    fn sweep_rows_out_of_range_show_at_the_sweep_box() {
        with_state(|s| {
            s.input_sweep("4,0.99\n-6,0.97".into());
            let m = s.message_for(SWEEP_FIELD).expect("a problem");
            assert!(m.contains("line 2"), "{m}");
            // Text that parses but that the plan rejects: the field is the sweep's.
            s.update(|p| {
                p.planning.measured_sweep = vec![SweepRow {
                    rate_rps: 4.0,
                    attainment: 1.5,
                }]
            });
            assert!(s.is_stale());
            assert!(s.message_for(SWEEP_FIELD).is_some());
            assert_eq!(
                s.sweep_text(),
                "4,1.5",
                "the plan's rows show once they changed"
            );
        });
    }

    #[test]
    fn undo_takes_back_replaces_several_levels_deep() {
        with_state(|s| {
            let first = s.draft.get_untracked();
            s.change("GPU preset", |p| p.hardware.tp_degree = 2);
            let second = s.draft.get_untracked();
            let loaded = Plan {
                name: "loaded".into(),
                ..Plan::default()
            };
            s.replace("load a plan file", loaded.clone(), None);
            // Typing is not a replace: it stays until the undo puts the plan back.
            s.input("engine.max_num_seqs", "48".into());
            assert_eq!(s.good.get_untracked().name, "loaded");
            // The same plan again is no step.
            s.replace("load a plan file", s.draft.get_untracked(), None);
            assert_eq!(s.undo_stack.get_untracked().len(), 2);
            let e = s.undo().expect("a step");
            assert_eq!(e.what, "load a plan file");
            assert_eq!(s.good.get_untracked(), second);
            assert_eq!(s.undo().expect("a step").what, "GPU preset");
            assert_eq!(s.good.get_untracked(), first);
            assert_eq!(s.undo(), None, "nothing left");
            assert_eq!(s.good.get_untracked(), first);
        });
    }

    #[test]
    fn the_undo_stack_keeps_the_latest_levels() {
        with_state(|s| {
            for n in 1..=(UNDO_LEVELS as u32 + 5) {
                s.change("preset", |p| p.engine.max_num_seqs = n);
            }
            assert_eq!(s.undo_stack.get_untracked().len(), UNDO_LEVELS);
            assert_eq!(
                s.undo_stack.get_untracked()[0].plan.engine.max_num_seqs,
                5,
                "the oldest steps go first"
            );
        });
    }

    #[test]
    fn a_loaded_plan_replaces_the_typed_sweep() {
        with_state(|s| {
            s.input_sweep("4,bad".into());
            let mut plan = Plan::default();
            plan.planning.measured_sweep = vec![SweepRow {
                rate_rps: 5.0,
                attainment: 0.95,
            }];
            s.set_plan(plan);
            assert!(!s.is_stale());
            assert_eq!(s.sweep_text(), "5,0.95");
        });
    }
}
