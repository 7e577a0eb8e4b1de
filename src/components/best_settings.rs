//! The engine settings card: the knob sweep's best cell, its launch flags, and a button
//! that applies it to the plan; and the prompt to re-tune after a change of setup.

use goodput_core::format::{rps, MISSING};
use goodput_core::search::{launch_flags, Knobs};
use leptos::prelude::*;

use crate::components::copy_button::CopyButton;
use crate::components::plan_at_best::PlanAtBest;
use crate::compute::RunController;
use crate::state::PlanState;
use crate::tuning::{apply_knobs, fitting_best, knobs_text, Tuning};

/// What the card shows: the settings, their launch command, and where they come from.
#[derive(Debug, Clone, PartialEq)]
struct Shown {
    knobs: Option<Knobs>,
    flags: String,
    title: String,
    goodput_rps: Option<f64>,
}

/// The best engine settings with a copyable `vllm serve` command and an Apply button.
#[component]
pub fn BestSettings() -> impl IntoView {
    let runs = RunController::expect_context();
    let state = PlanState::expect_context();
    let shown = Memo::new(move |_| {
        if let Some(s) = runs.sweep.get() {
            let best = s.best_cell();
            return Shown {
                knobs: Some(best.knobs),
                flags: s.flags.vllm.clone(),
                title: "Best engine settings (knob sweep)".into(),
                goodput_rps: Some(best.goodput_rps),
            };
        }
        let title = match runs.sweep_error.get() {
            Some(e) => format!("Engine settings of the plan (no knob sweep: {e})"),
            None => "Engine settings of the plan (knob sweep pending)".into(),
        };
        runs.search.with(|s| match s {
            Some((plan, _)) => Shown {
                knobs: Some(Knobs::of(plan)),
                flags: launch_flags(plan, &Knobs::of(plan)).vllm,
                title,
                goodput_rps: None,
            },
            None => Shown {
                knobs: None,
                flags: String::new(),
                title,
                goodput_rps: None,
            },
        })
    });
    let flags = Signal::derive(move || shown.with(|s| s.flags.clone()));
    let summary = move || {
        shown.with(|s| match &s.knobs {
            None => MISSING.to_string(),
            Some(k) => knobs_text(k),
        })
    };
    let best = Memo::new(move |_| fitting_best(runs, state));
    let in_use = Memo::new(move |_| {
        let current = state.good.with(Knobs::of);
        best.get().is_some_and(|b| b == current)
    });
    let apply = move |_| {
        if let Some(k) = best.get_untracked() {
            apply_knobs(state, k, "apply the best settings");
        }
    };
    let knob = move |f: fn(&Knobs) -> String| {
        move || shown.with(|s| s.knobs.as_ref().map(f).unwrap_or_default())
    };
    view! {
        <article class="card card-wide">
            <h3>{move || shown.with(|s| s.title.clone())}</h3>
            <div class="best-line">
                <p
                    class="card-value small"
                    data-testid="best-settings"
                    data-max-num-seqs=knob(|k| k.max_num_seqs.to_string())
                    data-max-num-batched-tokens=knob(|k| k.max_num_batched_tokens.to_string())
                    data-chunked-prefill=knob(|k| k.chunked_prefill.to_string())
                >
                    {summary}
                    {move || {
                        shown
                            .with(|s| s.goodput_rps)
                            .map(|g| {
                                view! {
                                    " → "
                                    <span data-testid="best-goodput-rps" data-value=g.to_string()>
                                        {if g > 0.0 {
                                            format!("{} req/s per replica", rps(g))
                                        } else {
                                            "0 req/s: no setting tried meets the SLO on this model and GPU".into()
                                        }}
                                    </span>
                                }
                            })
                    }}
                </p>
                <button
                    type="button"
                    class="apply-button"
                    data-testid="apply-best"
                    disabled=move || best.with(Option::is_none) || in_use.get()
                    title="Set the plan's max_num_seqs, max_num_batched_tokens and chunked prefill to these; the cards follow. Undo takes it back."
                    on:click=apply
                >
                    {move || if in_use.get() { "In use" } else { "Apply" }}
                </button>
            </div>
            <pre class="flags" data-testid="launch-flags">{flags}</pre>
            <CopyButton text=flags label="Copy flags" testid="copy-flags" />
            <PlanAtBest />
        </article>
    }
}

/// Says when a change of model, GPU or TP left the knobs tuned for another setup and
/// the sweep of the new one finds better settings; one click re-tunes.
#[component]
pub fn RetunePrompt() -> impl IntoView {
    let runs = RunController::expect_context();
    let state = PlanState::expect_context();
    let tuning = Tuning::expect_context();
    let prompt = Memo::new(move |_| {
        let changed = tuning.changed.get()?;
        let best = fitting_best(runs, state)?;
        let current = state.good.with(Knobs::of);
        if best == current {
            return None;
        }
        let (g_best, g_now) = runs.sweep.with(|s| {
            s.as_ref().map_or((None, None), |s| {
                (
                    s.cell_at(&best).map(|c| c.goodput_rps),
                    s.cell_at(&current).map(|c| c.goodput_rps),
                )
            })
        });
        let mut text = format!(
            "The engine settings ({}) were set before {changed} changed. For this setup the knob sweep finds {} best",
            knobs_text(&current),
            knobs_text(&best)
        );
        match (g_best, g_now) {
            (Some(b), Some(n)) => text.push_str(&format!(
                ": {} req/s per replica, against {} at the current settings.",
                rps(b),
                rps(n)
            )),
            (Some(b), None) => text.push_str(&format!(": {} req/s per replica.", rps(b))),
            _ => text.push('.'),
        }
        Some((text, best))
    });
    move || {
        prompt.get().map(|(text, best)| {
            view! {
                <div class="retune-prompt" role="status" data-testid="retune-prompt">
                    <p>{text}</p>
                    <div class="retune-actions">
                        <button
                            type="button"
                            class="apply-button"
                            data-testid="retune"
                            on:click=move |_| apply_knobs(state, best, "re-tune the engine settings")
                        >
                            "Re-tune: apply the best settings"
                        </button>
                        <button type="button" data-testid="retune-dismiss" on:click=move |_| tuning.dismiss()>
                            "Keep mine"
                        </button>
                    </div>
                </div>
            }
        })
    }
}
