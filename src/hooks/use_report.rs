//! The plan report and its fleet, computed once per change of the plan or of the last
//! finished search, and shared by every card, panel and view that shows them.

use goodput_core::capacity::CapacityPlan;
use goodput_core::report::{report_for, PlanReport};
use goodput_core::Plan;
use leptos::prelude::*;

use crate::compute::RunController;
use crate::state::PlanState;

/// What [`use_report`] returns.
#[derive(Clone, Copy)]
pub struct UseReportReturn {
    /// The plan the numbers belong to and the core's report for it
    /// ([`goodput_core::report::report_for`]): `None` until a search finishes, unless the
    /// plan carries a measured sweep.
    pub report: Memo<Option<(Plan, PlanReport)>>,
    /// The fleet of that report (`None` until there is a report; why no fleet can be
    /// sized, in words, when none can).
    pub fleet: Memo<Option<Result<CapacityPlan, String>>>,
}

/// Builds the report memos for the good plan and the runs, and provides them as context.
/// Called once, by the application root.
pub fn provide_report(state: PlanState, runs: RunController) -> UseReportReturn {
    let report = Memo::new(move |_| {
        let mut report = state.good.with(|good| {
            runs.search
                .with(|s| report_for(good, s.as_ref().map(|(p, r)| (p, r))))
        });
        // What the plan's router saves against round robin, once that search has run.
        if let Some((plan, r)) = report.as_mut() {
            runs.baseline
                .with(|b| r.set_router_baseline_of(plan, b.as_ref().map(|(p, b)| (p, b))));
            // One shared pool against a pool per class, once each class has run alone.
            runs.dedicated
                .with(|d| r.set_dedicated_of(plan, d.as_ref().map(|(p, g)| (p, g.as_slice()))));
        }
        report
    });
    let fleet = Memo::new(move |_| report.with(|r| r.as_ref().map(|(_, r)| r.fleet())));
    let out = UseReportReturn { report, fleet };
    provide_context(out);
    out
}

/// The report and fleet the application root provided.
///
/// # Panics
/// Outside the application root (as `expect_context` does).
pub fn use_report() -> UseReportReturn {
    expect_context::<UseReportReturn>()
}
