//! Acting on the knob sweep: applying a cell's engine settings to the plan, and
//! noticing when a change of model, GPU or layout has left the knobs tuned for another
//! setup.
//!
//! ```text
//!   good plan ─▶ (model, GPU, layout) vs the baseline taken when the knobs were last set
//!       differs ─▶ changed = "the GPU changed (H100 → H200)"
//!   changed + the sweep of this plan + its best ≠ the plan's knobs ─▶ re-tune prompt
//!   knobs applied or typed, a plan replaced, "Keep mine" ─▶ new baseline, no prompt
//!
//!   run.plan_at_best on + a finished sweep of this plan (Plan::sweep_key) not yet
//!       followed ─▶ apply its best cell (one Undo step); the sweep is kept, as its key
//!       does not hold the knobs, so following it never runs it again
//! ```

use goodput_core::plan::fields::field;
use goodput_core::plan::ModelSpec;
use goodput_core::presets;
use goodput_core::search::Knobs;
use goodput_core::shootout::Layout;
use goodput_core::Plan;
use leptos::prelude::*;

use crate::compute::RunController;
use crate::state::PlanState;

/// What the knobs were tuned for: the model, the GPU type and the replica's layout (TP,
/// and pipeline or expert parallelism).
#[derive(Debug, Clone, PartialEq)]
pub struct Setup {
    model: ModelSpec,
    gpu: String,
    layout: Layout,
}

impl Setup {
    /// The setup of `plan`.
    pub fn of(plan: &Plan) -> Setup {
        Setup {
            model: plan.model.clone(),
            gpu: plan.hardware.preset.clone(),
            layout: Layout::of(plan),
        }
    }
}

fn model_name(m: &ModelSpec) -> String {
    presets::model(&m.preset).map_or_else(|| m.preset.clone(), |p| p.name.to_string())
}

/// What changed from `before` to `after`, in words ("the GPU (H100 SXM → H200)");
/// `None` when nothing did.
pub fn change_text(before: &Setup, after: &Setup) -> Option<String> {
    let mut parts = Vec::new();
    if before.model != after.model {
        let (a, b) = (model_name(&before.model), model_name(&after.model));
        parts.push(if a == b {
            format!("the model's shape ({a})")
        } else {
            format!("the model ({a} → {b})")
        });
    }
    if before.gpu != after.gpu {
        parts.push(format!(
            "the GPU ({} → {})",
            presets::gpu_name(&before.gpu),
            presets::gpu_name(&after.gpu)
        ));
    }
    if before.layout != after.layout {
        let words = |s: &Setup| s.layout.words(&s.gpu);
        parts.push(format!("the layout ({} → {})", words(before), words(after)));
    }
    match parts.len() {
        0 => None,
        1 => parts.pop(),
        _ => {
            let last = parts.pop().unwrap_or_default();
            Some(format!("{} and {last}", parts.join(", ")))
        }
    }
}

/// Sets the plan's knobs to `knobs`, as a step Undo can take back.
pub fn apply_knobs(state: PlanState, knobs: Knobs, what: &str) {
    state.change(what, |p| *p = knobs.apply(p));
}

/// The best cell of the finished sweep of the plan on screen (knobs aside), if any. None
/// when no cell serves any load within the SLO (the best goodput is 0): no settings are
/// worth applying then, the setup itself has to change.
pub fn fitting_best(runs: RunController, state: PlanState) -> Option<Knobs> {
    let fits = state.good.with(|p| runs.sweep_fits(p));
    fits.then(|| {
        runs.sweep.with(|s| {
            s.as_ref()
                .map(|s| s.best_cell())
                .filter(|c| c.goodput_rps > 0.0)
                .map(|c| c.knobs)
        })
    })
    .flatten()
}

/// Turns planning at the sweep's best on or off, as one step Undo can take back; turning
/// it on applies the best cell of the sweep on screen at once, when it fits the plan.
pub fn set_plan_at_best(state: PlanState, runs: RunController, on: bool) {
    let best = fitting_best(runs, state).filter(|_| on);
    let what = if on {
        "plan at the sweep's best"
    } else {
        "stop planning at the sweep's best"
    };
    state.change(what, |p| {
        field("run.plan_at_best").set_on(p, on);
        if let Some(k) = best {
            *p = k.apply(p);
        }
    });
}

/// While the plan asks to be planned at the sweep's best (`run.plan_at_best`), applies
/// the best cell of each finished sweep of it, once per sweep: a step Undo takes back
/// without the same sweep applying it again. Looks when a sweep finishes and after each
/// edit (turning the switch on, fixing the input that kept the plan stale).
pub fn follow_best(state: PlanState, runs: RunController) {
    let followed = StoredValue::new(None::<Plan>);
    let follow = move || {
        if !state.good.with_untracked(|p| p.run.plan_at_best) || state.is_stale() {
            return;
        }
        let Some(best) = fitting_best(runs, state) else {
            return;
        };
        let key = state.good.with_untracked(Plan::sweep_key);
        if followed.with_value(|k| k.as_ref() == Some(&key)) {
            return;
        }
        followed.set_value(Some(key));
        if best != state.good.with_untracked(Knobs::of) {
            apply_knobs(state, best, "plan at the sweep's best");
        }
    };
    state.on_edit(follow);
    runs.on_result(follow);
}

/// The knobs in words: `max_num_seqs 32, budget 256` (`, chunked prefill off`).
pub fn knobs_text(k: &Knobs) -> String {
    format!(
        "max_num_seqs {}, budget {}{}",
        k.max_num_seqs,
        k.max_num_batched_tokens,
        if k.chunked_prefill {
            ""
        } else {
            ", chunked prefill off"
        }
    )
}

#[derive(Debug, Clone, PartialEq)]
struct Seen {
    replaced: u64,
    knobs: Knobs,
}

/// Tracks whether the plan's knobs were tuned for another setup (provided as context).
#[derive(Clone, Copy)]
pub struct Tuning {
    /// What changed since the knobs were last set, when the setup did.
    pub changed: Memo<Option<String>>,
    baseline: RwSignal<Option<Setup>>,
    state: PlanState,
}

impl Tuning {
    /// Starts watching `state`'s good plan.
    pub fn new(state: PlanState) -> Tuning {
        let (setup, knobs) = state.good.with_untracked(|p| (Setup::of(p), Knobs::of(p)));
        let baseline = RwSignal::new(Some(setup));
        let seen = StoredValue::new(Seen {
            replaced: state.replaced.get_untracked(),
            knobs,
        });
        // A new baseline whenever an edit sets the knobs (applied, typed) or replaces the
        // whole plan: those knobs belong to the setup they were set for.
        state.on_edit(move || {
            let replaced = state.replaced.get_untracked();
            let (setup, knobs) = state.good.with_untracked(|p| (Setup::of(p), Knobs::of(p)));
            let now = Seen { replaced, knobs };
            if seen.with_value(|s| *s != now) {
                seen.set_value(now);
                baseline.set(Some(setup));
            }
        });
        let changed = Memo::new(move |_| {
            let base = baseline.get()?;
            state.good.with(|p| change_text(&base, &Setup::of(p)))
        });
        Tuning {
            changed,
            baseline,
            state,
        }
    }

    /// The tracker provided by `App`.
    pub fn expect_context() -> Tuning {
        expect_context::<Tuning>()
    }

    /// "Keep mine": the knobs are kept for the setup as it is now.
    pub fn dismiss(&self) {
        let setup = self.state.good.with_untracked(Setup::of);
        self.baseline.set(Some(setup));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_change_is_named_in_words() {
        let mut a = Plan::default();
        let before = Setup::of(&a);
        assert_eq!(change_text(&before, &Setup::of(&a)), None);
        presets::gpu("h200").expect("preset").apply(&mut a);
        let text = change_text(&before, &Setup::of(&a)).expect("changed");
        assert!(
            text.starts_with("the GPU (NVIDIA H100") && text.contains("→ NVIDIA H200"),
            "{text}"
        );
        a.hardware.tp_degree = 2;
        let text = change_text(&before, &Setup::of(&a)).expect("changed");
        assert!(text.ends_with(" and the layout (TP1 → TP2)"), "{text}");
        a.hardware.tp_degree = 8;
        a.hardware.pp_degree = 2;
        let text = change_text(&before, &Setup::of(&a)).expect("changed");
        assert!(
            text.ends_with(" and the layout (TP1 → TP8 × PP2 (2 nodes))"),
            "{text}"
        );
        // Changing other inputs (price, traffic) is no change of setup.
        let mut b = Plan::default();
        b.traffic.peak_rate_rps *= 2.0;
        b.engine.max_num_seqs = 7;
        assert_eq!(change_text(&before, &Setup::of(&b)), None);
    }

    #[test]
    fn settings_read_as_the_card_shows_them() {
        let k = Knobs {
            max_num_seqs: 32,
            max_num_batched_tokens: 256,
            chunked_prefill: true,
        };
        assert_eq!(knobs_text(&k), "max_num_seqs 32, budget 256");
        let off = Knobs {
            chunked_prefill: false,
            ..k
        };
        assert_eq!(
            knobs_text(&off),
            "max_num_seqs 32, budget 256, chunked prefill off"
        );
    }
}
