//! The application root: shared state as context, and the view picker.

use leptos::prelude::*;

use crate::components::header::Header;
use crate::components::header_actions::HeaderActions;
use crate::components::planner::Planner;
use crate::components::share_banner::ShareBanner;
use crate::compute::calibration::FitController;
use crate::compute::day::DayController;
use crate::compute::disagg::DisaggController;
use crate::compute::shootout::ShootoutController;
use crate::compute::RunController;
use crate::hooks::use_report::provide_report;
use crate::route::View;
use crate::session::{boot, Boot, Session};
use crate::state::PlanState;
use crate::tuning::{follow_best, Tuning};
use crate::views::compare::CompareView;
use crate::views::embed::EmbedView;
use crate::views::finance::FinanceView;

/// The application root, started from the address and local storage.
#[component]
pub fn App() -> impl IntoView {
    view! { <Booted boot=boot() /> }
}

/// The page's shared state, provided as context by the root: what the components find
/// with `expect_context`, and what a browser test drives directly.
#[derive(Clone, Copy)]
pub struct AppContext {
    /// The plan being edited and the last good one.
    pub state: PlanState,
    /// The goodput search and knob sweep.
    pub runs: RunController,
    /// Calibration: the chosen files, the fit, its report.
    pub fits: FitController,
    /// The view shown.
    pub view: RwSignal<View>,
}

impl AppContext {
    /// Builds every controller for `boot` and provides them as context to the current
    /// owner (the root's), starting the session.
    pub fn provide(boot: Boot) -> AppContext {
        let state = PlanState::new(boot.plan.clone());
        provide_context(state);
        let runs = RunController::with_pool();
        provide_context(runs);
        provide_report(state, runs);
        provide_context(Tuning::new(state));
        follow_best(state, runs);
        let fits = FitController::new(state);
        provide_context(fits);
        provide_context(ShootoutController::new(state));
        provide_context(DisaggController::new(state, runs));
        provide_context(DayController::new(state, runs));
        runs.follow(state);
        let view = RwSignal::new(boot.view);
        provide_context(view);
        Session::start(boot, state, runs, view);
        AppContext {
            state,
            runs,
            fits,
            view,
        }
    }
}

/// The page under a root that has provided an [`AppContext`]: the header, and the
/// view picked.
pub fn page(cx: AppContext) -> impl IntoView {
    let view = cx.view;
    let framed = Memo::new(move |_| view.get() != View::Embed);
    view! {
        <Show when=move || framed.get()>
            <Header><HeaderActions /></Header>
            <ShareBanner />
        </Show>
        {move || match view.get() {
            View::Planner => view! { <Planner /> }.into_any(),
            View::Finance => view! { <FinanceView /> }.into_any(),
            View::Embed => view! { <EmbedView /> }.into_any(),
            View::Compare => view! { <CompareView /> }.into_any(),
        }}
    }
}

/// The application root, started from `boot` (the page's entry point reads it once and
/// hands its plan to the workers first).
#[component]
pub fn Booted(
    /// What the page starts with.
    boot: Boot,
) -> impl IntoView {
    page(AppContext::provide(boot))
}
