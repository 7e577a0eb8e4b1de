//! "Traffic over a day": the plan's hourly rate profile (a named shape, pasted numbers or
//! a trace) and its autoscaler, the schedule's progress, then the result. The profile
//! and the autoscaler live in the plan (`plan.schedule`), so the share link carries them;
//! the schedule itself is worked out from them (see `compute::day`).

use goodput_core::schedule::{shape_words, RateProfile, SHAPES};
use leptos::prelude::*;

use crate::components::day_inputs::{AutoscalerInputs, HourlyNumbers};
use crate::components::day_result::DayResultView;
use crate::components::trace_import::TraceImport;
use crate::compute::day::{DayController, DayPhase};
use crate::state::PlanState;

/// The shape selected when a day is added to a plan.
pub const DEFAULT_SHAPE: &str = "business-hours";

/// The named shape `profile` is, if it is one.
pub fn shape_of(profile: &RateProfile) -> Option<&'static str> {
    SHAPES
        .iter()
        .find(|(_, _, v)| !profile.absolute && profile.hourly == v.as_slice())
        .map(|(n, _, _)| *n)
}

/// The status line and its progress bar.
#[component]
fn DayStatusLine() -> impl IntoView {
    let ctl = DayController::expect_context();
    let phase_name = move || {
        ctl.status.with(|s| match s.phase {
            DayPhase::Idle => "idle",
            DayPhase::Waiting => "waiting",
            DayPhase::Running => "running",
            DayPhase::Done => "done",
            DayPhase::Cancelled => "cancelled",
            DayPhase::Failed(_) => "failed",
        })
    };
    let text = move || {
        ctl.status.with(|s| match &s.phase {
            DayPhase::Idle => String::new(),
            DayPhase::Waiting => "Waiting for the plan's goodput…".into(),
            DayPhase::Running => format!("Simulating the hours: {} of {}…", s.done, s.total),
            DayPhase::Done => "Done.".into(),
            DayPhase::Cancelled => "Cancelled.".into(),
            DayPhase::Failed(m) => format!("The day could not be planned: {m}"),
        })
    };
    let running = move || ctl.status.with(|s| s.phase == DayPhase::Running);
    let stopped = move || {
        ctl.status
            .with(|s| matches!(s.phase, DayPhase::Cancelled | DayPhase::Failed(_)))
    };
    view! {
        <div class="run-line no-print">
            <button type="button" class="cancel" data-testid="day-cancel"
                disabled=move || !running() on:click=move |_| ctl.cancel()>"Cancel"</button>
            <Show when=stopped>
                <button type="button" data-testid="day-replan" on:click=move |_| ctl.replan()>"Plan again"</button>
            </Show>
            <span data-testid="day-status" data-phase=phase_name aria-live="polite">{text}</span>
        </div>
        <progress max="1" class="no-print" data-testid="day-progress" aria-label="Schedule progress"
            class:active=running
            value=move || ctl.status.with(|s| if s.total == 0 { 0.0 } else { f64::from(s.done) / f64::from(s.total) }).to_string()
        ></progress>
    }
}

/// The panel.
#[component]
pub fn DayPanel() -> impl IntoView {
    let state = PlanState::expect_context();
    let has_day = Memo::new(move |_| state.good.with(|p| p.schedule.is_some()));
    let shape = Memo::new(move |_| {
        state.good.with(|p| {
            p.schedule
                .as_ref()
                .map_or(DEFAULT_SHAPE, |s| shape_of(&s.profile).unwrap_or(""))
        })
    });
    let source = move || {
        state.good.with(|p| {
            p.schedule.as_ref().map(|s| {
                let how = if s.profile.absolute {
                    "req/s as given".to_string()
                } else {
                    format!("scaled to the peak of {} req/s", p.traffic.peak_rate_rps)
                };
                format!(
                    "{}: {} hours, {how}",
                    s.profile.source,
                    s.profile.hourly.len()
                )
            })
        })
    };
    let pick = move |name: String| {
        if let Ok(p) = RateProfile::named(&name) {
            state.set_day_profile(p);
        }
    };
    let shape_options = SHAPES
        .iter()
        .map(|(n, what, _)| view! { <option value=*n title=*what>{shape_words(n)}</option> })
        .collect_view();
    view! {
        <section class="panel day-panel" aria-labelledby="day-title" data-testid="day-panel">
            <h2 id="day-title">"Traffic over a day"</h2>
            <p class="panel-intro">
                "A fleet sized for the peak is idle at night. Give the traffic's shape over a day (or a week): for every hour, the replicas it needs, what an autoscaler with a start-up lag runs, the cost of each, and the simulated share of requests within the SLO while the autoscaler catches up."
            </p>
            <div class="field">
                <label for="day-shape">"Shape"</label>
                <select id="day-shape" data-testid="day-shape"
                    prop:value=move || shape.get()
                    on:change:target=move |ev| pick(ev.target().value())>
                    {shape_options}
                    <option value="" disabled=true>"your own numbers or a trace"</option>
                </select>
                <p class="help" data-testid="day-profile-source">{source}</p>
            </div>
            <Show when=move || !has_day.get()>
                <button type="button" class="primary" data-testid="day-plan"
                    disabled=move || state.run_blocked().is_some() title=move || state.run_blocked()
                    on:click=move |_| pick(shape.get_untracked().to_string())>"Plan the day"</button>
            </Show>
            <HourlyNumbers />
            <TraceImport />
            <Show when=move || has_day.get()>
                <AutoscalerInputs />
                <DayStatusLine />
                <button type="button" class="no-print" data-testid="day-remove"
                    on:click=move |_| state.update(|p| p.schedule = None)>"Remove the day from the plan"</button>
                <DayResultView />
            </Show>
        </section>
    }
}
