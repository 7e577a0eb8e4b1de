//! The planner view: inputs on the left, results on the right.

use leptos::prelude::*;

use crate::components::alerts_panel::AlertsPanel;
use crate::components::analytic_panel::AnalyticPanel;
use crate::components::best_settings::RetunePrompt;
use crate::components::cache_panel::CachePanel;
use crate::components::calibrate_panel::CalibratePanel;
use crate::components::cards::HeadlineCards;
use crate::components::charts_panel::ChartsPanel;
use crate::components::day_panel::DayPanel;
use crate::components::deferred::{Deferred, Part};
use crate::components::disagg_panel::DisaggPanel;
use crate::components::export_panel::ExportPanel;
use crate::components::fresh_seed::FreshSeed;
use crate::components::glossary::Glossary;
use crate::components::inputs::InputsColumn;
use crate::components::roofline_panel::RooflinePanel;
use crate::components::run_status::RunStatus;
use crate::components::saved_panel::SavedPanel;
use crate::components::shootout_panel::ShootoutPanel;
use crate::compute::{Phase, RunController};
use crate::state::fields::field;
use crate::state::{PlanState, SWEEP_FIELD};

/// The label of the input a problem belongs to (its dotted path when unknown).
fn problem_label(id: &str) -> String {
    if id.starts_with(SWEEP_FIELD) {
        return "Measured sweep".into();
    }
    field(id).map_or_else(|| id.to_string(), |f| f.label.to_string())
}

/// Shows the first problem of the draft plan, and that the results are from the last good plan.
#[component]
fn ProblemBanner() -> impl IntoView {
    let state = PlanState::expect_context();
    move || {
        state.problem.get().map(|p| {
            view! {
                <div class="problem-banner" role="status" data-testid="problem-banner">
                    {(field(&p.field).is_none()).then(|| view! { <strong>{problem_label(&p.field)}</strong> ": " })}
                    {p.message}
                    " — showing the results of the last valid plan."
                </div>
            }
        })
    }
}

/// The full planner.
#[component]
pub fn Planner() -> impl IntoView {
    let state = PlanState::expect_context();
    let runs = RunController::expect_context();
    // Dim the results while they belong to another plan than the one on screen.
    let stale = Memo::new(move |_| {
        state.is_stale() || runs.status.with(|s| matches!(s.phase, Phase::Failed(_)))
    });
    view! {
        <main class="layout">
            <section class="inputs" aria-label="Inputs">
                <InputsColumn />
            </section>
            <section class="results" aria-label="Results">
                <ProblemBanner />
                <RunStatus />
                <FreshSeed />
                <div
                    class="results-body"
                    class:stale=move || stale.get()
                    data-testid="results"
                    data-stale=move || stale.get().to_string()
                >
                    <RetunePrompt />
                    <HeadlineCards />
                    <Deferred part=Part::Charts>
                        <ChartsPanel />
                        <CachePanel />
                        <RooflinePanel />
                        <AnalyticPanel />
                        <AlertsPanel />
                    </Deferred>
                </div>
                <Deferred part=Part::Panels>
                    <CalibratePanel />
                    <ShootoutPanel />
                    <DisaggPanel />
                    <DayPanel />
                    <ExportPanel />
                    <SavedPanel />
                    <Glossary />
                </Deferred>
            </section>
        </main>
    }
}
