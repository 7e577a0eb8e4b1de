//! What the planner's printout says it was computed from: the plan's name, its
//! assumptions (the core's, as the finance view states them) and engine settings (the inputs column itself does
//! not print), then the date and the plan's link. Shown in print only.

use goodput_core::report::assumptions;
use goodput_core::search::Knobs;
use leptos::prelude::*;

use crate::components::print_stamp::PrintStamp;
use crate::hooks::use_report::use_report;
use crate::state::PlanState;
use crate::summary::report_assumptions;
use crate::tuning::knobs_text;
use crate::url_state::plan_title;

/// The print-only list of the plan's inputs.
#[component]
pub fn PrintFacts() -> impl IntoView {
    let state = PlanState::expect_context();
    let report = use_report().report;
    let rows = move || {
        // The report's words on the traffic and the routing, once it has them (as the
        // finance view).
        let more = report.with(|r| {
            r.as_ref()
                .map(|(p, r)| report_assumptions(p, r))
                .unwrap_or_default()
        });
        state.good.with(|p| {
            let mut rows: Vec<(String, String)> = assumptions(p)
                .into_iter()
                .map(|a| (a.label.to_string(), a.value))
                .collect();
            rows.extend(more.into_iter().map(|(_, label, value)| (label, value)));
            rows.push(("Engine".into(), knobs_text(&Knobs::of(p))));
            rows.into_iter()
                .map(|(topic, words)| view! { <div><dt>{topic}</dt><dd>{words}</dd></div> })
                .collect_view()
        })
    };
    view! {
        <section class="print-facts print-only" data-testid="print-facts" aria-label="Plan inputs">
            <h2>{move || state.good.with(plan_title)}</h2>
            <dl>{rows}</dl>
            <PrintStamp />
        </section>
    }
}
