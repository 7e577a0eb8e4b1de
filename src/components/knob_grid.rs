//! The knob sweep's grid under the heatmap: why its cell at the plan's settings and the
//! card may differ, the two axes as editable lists, and "Fit the grid to this plan".

use goodput_core::plan::fields::{field, format_list, parse_list};
use goodput_core::search::fit_grid;
use goodput_core::Plan;
use leptos::prelude::*;

use crate::compute::RunController;
use crate::state::PlanState;

/// The axis of the plan at `path` (`run.sweep_max_num_seqs` or `run.sweep_batched_tokens`).
fn axis_of<'a>(p: &'a Plan, path: &str) -> &'a [u32] {
    if path == "run.sweep_max_num_seqs" {
        &p.run.sweep_max_num_seqs
    } else {
        &p.run.sweep_batched_tokens
    }
}

/// The axis at `path`, to set.
fn axis<'a>(p: &'a mut Plan, path: &str) -> &'a mut Vec<u32> {
    if path == "run.sweep_max_num_seqs" {
        &mut p.run.sweep_max_num_seqs
    } else {
        &mut p.run.sweep_batched_tokens
    }
}

/// One axis as a list input (label, unit and help from the registry); a list that does
/// not read is kept with its message and never reaches the plan.
#[component]
fn GridList(
    /// Dotted path of the axis.
    path: &'static str,
) -> impl IntoView {
    let state = PlanState::expect_context();
    let f = field(path);
    let input_id = format!("in-{}", path.replace('.', "-"));
    let (help_id, err_id) = (format!("{input_id}-help"), format!("{input_id}-error"));
    let now = move || state.draft.with(|p| axis_of(p, path).to_vec());
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
            .unwrap_or_else(|| state.draft.with(|p| format_list(axis_of(p, path))))
    };
    let commit = move |text: String| match parse_list(f, &text) {
        Ok(values) => {
            typed.set(None);
            let what = format!("edit {}", f.label.to_lowercase());
            state.change(&what, |p| *axis(p, path) = values);
        }
        Err(e) => typed.set(Some((text, Some(e), now()))),
    };
    view! {
        <div class="field field-wide" class:invalid=move || message.with(Option::is_some)>
            <label for=input_id.clone()>{f.label}<span class="unit">{f.unit}</span></label>
            <input
                id=input_id
                type="text"
                inputmode="numeric"
                spellcheck="false"
                autocomplete="off"
                data-testid=format!("input-{path}")
                aria-describedby=format!("{help_id} {err_id}")
                aria-invalid=move || message.with(Option::is_some).to_string()
                prop:value=shown
                on:input:target=move |ev| typed.set(Some((ev.target().value(), None, now())))
                on:change:target=move |ev| commit(ev.target().value())
            />
            <p class="help" id=help_id>{f.help}</p>
            <p class="error" id=err_id role="alert" data-testid=format!("error-{path}")>
                {move || message.get()}
            </p>
        </div>
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
                <GridList path="run.sweep_max_num_seqs" />
                <GridList path="run.sweep_batched_tokens" />
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
