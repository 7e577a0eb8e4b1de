//! The knob sweep's grid under the heatmap: why its cell at the plan's settings and the
//! card may differ, the two axes as editable lists, and "Fit the grid to this plan".

use goodput_core::plan::fields::{field, format_list, parse_list};
use goodput_core::search::fit_grid;
use goodput_core::Plan;
use leptos::prelude::*;

use crate::components::field_frame::{FieldFrame, FieldIds};
use crate::compute::RunController;
use crate::state::PlanState;

/// One axis of the knob sweep's grid.
#[derive(Clone, Copy, PartialEq, Eq)]
enum GridAxis {
    /// `max_num_seqs` values.
    Seqs,
    /// `max_num_batched_tokens` values (0: chunked prefill off).
    Budgets,
}

impl GridAxis {
    /// The axis's field path in the registry.
    fn path(self) -> &'static str {
        match self {
            GridAxis::Seqs => "run.sweep_max_num_seqs",
            GridAxis::Budgets => "run.sweep_batched_tokens",
        }
    }

    /// The axis's values in `p`.
    fn of(self, p: &Plan) -> &[u32] {
        match self {
            GridAxis::Seqs => &p.run.sweep_max_num_seqs,
            GridAxis::Budgets => &p.run.sweep_batched_tokens,
        }
    }

    /// The axis's values in `p`, to set.
    fn of_mut(self, p: &mut Plan) -> &mut Vec<u32> {
        match self {
            GridAxis::Seqs => &mut p.run.sweep_max_num_seqs,
            GridAxis::Budgets => &mut p.run.sweep_batched_tokens,
        }
    }
}

/// One axis as a list input (label, unit and help from the registry); a list that does
/// not read is kept with its message and never reaches the plan.
#[component]
fn GridList(
    /// The axis this list edits.
    axis: GridAxis,
) -> impl IntoView {
    let state = PlanState::expect_context();
    let path = axis.path();
    let f = field(path);
    let ids = FieldIds::of(path);
    let now = move || state.draft.with(|p| axis.of(p).to_vec());
    // Text being typed or refused, its refusal, and the axis it was typed over: a
    // change of the axis from elsewhere (a fit, Undo, a load) drops it.
    let typed = RwSignal::new(None::<(String, Option<String>, Vec<u32>)>);
    let current = Memo::new(move |_| {
        let axis = now();
        typed.with(|t| {
            t.as_ref()
                .filter(|(_, _, at)| *at == axis)
                .map(|(text, m, _)| (text.clone(), m.clone()))
        })
    });
    let message = Memo::new(move |_| current.with(|t| t.as_ref().and_then(|(_, m)| m.clone())));
    let shown = move || {
        current
            .with(|t| t.as_ref().map(|(text, _)| text.clone()))
            .unwrap_or_else(|| state.draft.with(|p| format_list(axis.of(p))))
    };
    let commit = move |text: String| match parse_list(f, &text) {
        Ok(values) => {
            typed.set(None);
            let what = format!("edit {}", f.label.to_lowercase());
            state.change(&what, |p| *axis.of_mut(p) = values);
        }
        Err(e) => typed.set(Some((text, Some(e), now()))),
    };
    view! {
        <FieldFrame ids=ids.clone() label=f.label unit=f.unit wide=true message help=f.help.into_any()>
            <input
                id=ids.input.clone()
                type="text"
                inputmode="numeric"
                spellcheck="false"
                autocomplete="off"
                data-testid=ids.input_test_id()
                aria-describedby=ids.described_by()
                aria-invalid=move || message.with(Option::is_some).to_string()
                prop:value=shown
                on:input:target=move |ev| typed.set(Some((ev.target().value(), None, now())))
                on:change:target=move |ev| commit(ev.target().value())
            />
        </FieldFrame>
    }
}

/// Why the sweep's cell at the plan's settings and the card's goodput differ (their
/// replications), the editable grid, and a one-click fit of the grid to the plan.
#[component]
pub fn KnobGrid() -> impl IntoView {
    let state = PlanState::expect_context();
    let runs = RunController::expect_context();
    let differs = Memo::new(move |_| {
        if !state.good.with(|p| runs.sweep_fits(p)) {
            return None;
        }
        runs.search.with(|s| {
            let (_, search) = s.as_ref()?;
            runs.sweep.with(|w| w.as_ref()?.differs_from(search))
        })
    });
    let fitted = Memo::new(move |_| {
        let goodput = state.good.with(|p| runs.goodput_for(p));
        state.good.with(|p| {
            let g = fit_grid(p, goodput);
            (g.is_applied(p), g)
        })
    });
    let fit = move |_| {
        let (_, g) = fitted.get_untracked();
        state.change("fit the knob grid to the plan", |p| *p = g.apply(p));
    };
    view! {
        {move || {
            differs
                .get()
                .map(|t| view! { <p class="run-meta" data-testid="sweep-vs-search">{t}</p> })
        }}
        <details class="knob-grid" data-testid="knob-grid">
            <summary>"Edit the grid"</summary>
            <div class="field-row">
                <GridList axis=GridAxis::Seqs />
                <GridList axis=GridAxis::Budgets />
            </div>
            <p class="help" data-testid="fit-grid-reason">
                {move || {
                    fitted.with(|(applied, g)| {
                        let head = if *applied {
                            "The grid is fitted to this plan: it brackets "
                        } else {
                            "A grid fitted to this plan brackets "
                        };
                        format!("{head}{}.", g.reason())
                    })
                }}
            </p>
            <button
                type="button"
                data-testid="fit-grid"
                disabled=move || fitted.with(|(applied, _)| *applied)
                title="Set both lists to values around what the analytic checks suggest; Undo takes it back."
                on:click=fit
            >
                "Fit the grid to this plan"
            </button>
        </details>
    }
}
