//! The switch to plan at the knob sweep's best settings (finance-facing numbers), and a
//! note saying where the plan's settings came from while it is on.

use goodput_core::plan::fields::field;
use goodput_core::search::{planned_at_best_text, Knobs};
use leptos::prelude::*;

use crate::compute::RunController;
use crate::state::PlanState;
use crate::tuning::{fitting_best, knobs_text, set_plan_at_best};

/// What the note under the switch says, while the switch is on.
fn note(best: Option<Knobs>, current: Knobs) -> String {
    match best {
        Some(b) if b == current => format!("{}.", planned_at_best_text(&b)),
        Some(b) => format!(
            "Your settings ({}) differ from the sweep's best ({}): they were changed after it was applied. Apply it to plan at the best again.",
            knobs_text(&current),
            knobs_text(&b)
        ),
        None => "The settings follow the knob sweep of this plan when it finishes.".into(),
    }
}

/// A checkbox bound to `run.plan_at_best` (label and help from the field registry): on,
/// every finished sweep of the plan sets its engine settings; the note says so.
#[component]
pub fn PlanAtBest() -> impl IntoView {
    let state = PlanState::expect_context();
    let runs = RunController::expect_context();
    let f = field("run.plan_at_best");
    let on = Memo::new(move |_| state.good.with(|p| p.run.plan_at_best));
    let text = Memo::new(move |_| {
        on.get().then(|| {
            let current = state.good.with(Knobs::of);
            note(fitting_best(runs, state), current)
        })
    });
    view! {
        <div class="plan-at-best">
            <label class="switch" title=f.help>
                <input
                    type="checkbox"
                    data-testid="plan-at-best"
                    aria-describedby="plan-at-best-help"
                    prop:checked=move || on.get()
                    on:change:target=move |ev| set_plan_at_best(state, runs, ev.target().checked())
                />
                {f.label}
            </label>
            <p class="help" id="plan-at-best-help">{f.help}</p>
            {move || {
                text.get()
                    .map(|t| {
                        view! {
                            <p class="planned-at-best" role="status" data-testid="planned-at-best-note">
                                {t}
                            </p>
                        }
                    })
            }}
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_says_where_the_settings_came_from() {
        let k = Knobs {
            max_num_seqs: 32,
            max_num_batched_tokens: 256,
            chunked_prefill: true,
        };
        assert_eq!(
            note(Some(k), k),
            "Planned at the sweep's best: 32 sequences × 256 tokens."
        );
        let other = Knobs {
            max_num_seqs: 128,
            ..k
        };
        assert!(note(Some(k), other).starts_with("Your settings (max_num_seqs 128"));
        assert!(note(None, k).contains("when it finishes"));
    }
}
