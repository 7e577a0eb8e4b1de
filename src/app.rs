//! The application root: shared state as context, and the view picker.

use leptos::prelude::*;

use crate::components::header::Header;
use crate::components::header_actions::HeaderActions;
use crate::components::planner::Planner;
use crate::components::share_banner::ShareBanner;
use crate::compute::calibration::FitController;
use crate::compute::day::DayController;
use crate::compute::shootout::ShootoutController;
use crate::compute::RunController;
use crate::session::{boot, Session};
use crate::state::PlanState;
use crate::tuning::Tuning;
use crate::views::compare::CompareView;
use crate::views::embed::EmbedView;
use crate::views::finance::FinanceView;

/// Which page the root shows. The planner is the full view; a share link opens the
/// finance summary (or the embed card with `&embed`); see `url_state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum View {
    /// Inputs on the left, results on the right.
    #[default]
    Planner,
    /// The answer in words with the assumptions: the default view of a shared link.
    Finance,
    /// The compact read-only card for an `<iframe>` (`&embed` in the link).
    Embed,
    /// Two plans side by side.
    Compare,
}

/// The application root.
#[component]
pub fn App() -> impl IntoView {
    let boot = boot();
    let state = PlanState::new(boot.plan.clone());
    provide_context(state);
    let runs = RunController::new(state.good);
    provide_context(runs);
    provide_context(Tuning::new(state));
    provide_context(FitController::new(state));
    provide_context(ShootoutController::new(state));
    provide_context(DayController::new(state, runs));
    let view = RwSignal::new(boot.view);
    provide_context(view);
    Session::start(boot, state, runs, view);
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
