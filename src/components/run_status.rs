//! Progress of the running search: bar, phase, Cancel, where it runs, how long it took.

use goodput_core::format::thousands;
use leptos::prelude::*;

use crate::compute::pool::PoolMode;
use crate::compute::{Phase, RunController};
use crate::state::PlanState;

/// The status strip above the results.
#[component]
pub fn RunStatus() -> impl IntoView {
    let runs = RunController::expect_context();
    let state = PlanState::expect_context();
    let status = runs.status;
    let running = Memo::new(move |_| status.with(|s| s.phase.is_running()));
    let fraction = Memo::new(move |_| {
        status.with(|s| {
            if s.total == 0 {
                0.0
            } else {
                (s.done as f64 / s.total as f64).clamp(0.0, 1.0)
            }
        })
    });
    let typing = Memo::new(move |_| state.is_typing());
    let phase_text = move || {
        if typing.get() {
            return "Waiting for you to finish typing… The results are for the values before."
                .to_string();
        }
        status.with(|s| match &s.phase {
            Phase::Idle => "Starting…".to_string(),
            Phase::Waiting => "Input changed; re-running…".into(),
            Phase::Search => format!(
                "Finding the goodput: {} of ~{} simulations",
                s.done, s.total
            ),
            Phase::Baseline => format!(
                "Finding the goodput behind round robin, to compare the router: {} of ~{} simulations",
                s.done, s.total
            ),
            Phase::Dedicated => format!(
                "Finding each traffic class's goodput on a pool of its own, to compare with the shared pool: {} of ~{} simulations",
                s.done, s.total
            ),
            Phase::Sweep => format!(
                "Sweeping engine knobs: {} of ~{} simulations",
                s.done, s.total
            ),
            Phase::Done if state.is_stale() => {
                "An input has a problem: the results shown are for the plan before that edit."
                    .into()
            }
            Phase::Done => "Up to date.".into(),
            Phase::Cancelled => {
                "Cancelled. The results shown are from the last finished run.".into()
            }
            Phase::Failed(m) => format!("The run failed: {m}"),
        })
    };
    let timing = move || {
        // Whole milliseconds, thousands grouped ("1,646 ms").
        let ms = |x: f64| format!("{} ms", thousands(x.max(0.0).round() as i64));
        status.with(|s| match (s.search_ms, s.total_ms) {
            (Some(a), Some(_)) if s.sweep_kept => format!(
                "Last run: goodput search {}; the knob sweep of this plan was kept.",
                ms(a)
            ),
            (Some(a), Some(b)) => format!(
                "Last run: goodput search {}; search and knob sweep {}.",
                ms(a),
                ms(b)
            ),
            (None, Some(b)) => format!("Last run: {}.", ms(b)),
            _ => String::new(),
        })
    };
    let mode_text = move || match runs.mode.get() {
        PoolMode::Starting => "Starting workers; running on this page meanwhile…".to_string(),
        PoolMode::Workers(n) => format!("{n} worker{}", if n == 1 { "" } else { "s" }),
        PoolMode::MainThread => {
            "Workers unavailable: running in small slices on this page (slower).".into()
        }
    };
    let phase_name = move || {
        status.with(|s| match s.phase {
            Phase::Idle => "idle",
            Phase::Waiting => "waiting",
            Phase::Search => "search",
            Phase::Baseline => "baseline",
            Phase::Dedicated => "dedicated",
            Phase::Sweep => "sweep",
            Phase::Done => "done",
            Phase::Cancelled => "cancelled",
            Phase::Failed(_) => "failed",
        })
    };
    view! {
        <div class="run-status" id="run-status" data-testid="run-status" data-phase=phase_name
            data-typing=move || typing.get().to_string()
            data-runs=move || runs.started.get().to_string()
            aria-live="polite"
        >
            <div class="run-line">
                <span class="run-phase" data-testid="run-phase">{phase_text}</span>
                <button
                    type="button"
                    class="cancel"
                    data-testid="cancel-run"
                    disabled=move || !running.get()
                    on:click=move |_| runs.cancel()
                >
                    "Cancel"
                </button>
                <button
                    type="button"
                    class="rerun"
                    data-testid="rerun"
                    disabled=move || running.get() || state.run_blocked().is_some()
                    title=move || state.run_blocked()
                    on:click=move |_| runs.start(state.good.get_untracked())
                >
                    "Run again"
                </button>
            </div>
            <progress
                max="1"
                value=move || fraction.get().to_string()
                data-testid="run-progress"
                data-done=move || status.with(|s| s.done.to_string())
                data-total=move || status.with(|s| s.total.to_string())
                aria-label="Simulation progress"
                class:active=move || running.get()
            ></progress>
            <p class="run-meta">
                <span data-testid="run-mode">{mode_text}</span>
                " · "
                <span data-testid="run-timing">{timing}</span>
            </p>
        </div>
    }
}
