//! The finance view, the default page of a shared link: the answer first in words,
//! the headline numbers, the assumptions, the attainment chart; the planner one click
//! away. It prints on one page.

use goodput_core::capacity::CapacityPlan;
use goodput_core::report::PlanReport;
use goodput_core::search::GoodputResult;
use goodput_core::Plan;
use leptos::prelude::*;

use crate::app::View;
use crate::charts::attainment::draw_attainment;
use crate::components::chart_canvas::ChartCanvas;
use crate::components::charts_panel::attainment_chart;
use crate::components::day_result::DayVerdictLine;
use crate::compute::{Phase, RunController};
use crate::session::Session;
use crate::state::PlanState;
use crate::summary::{answer_sentence, assumptions, calibration_words, usd};
use crate::url_state::plan_title;

/// The plan the numbers belong to and the core's plan report for it, as `goodput plan`
/// builds it. With a measured sweep in the good plan, goodput is the sweep's knee and the
/// report needs no simulation; otherwise it is the last finished search, sized for the
/// plan it was run for (`None` until a search finishes).
pub fn report_for(
    good: &Plan,
    search: Option<&(Plan, GoodputResult)>,
) -> Option<(Plan, PlanReport)> {
    if !good.planning.measured_sweep.is_empty() {
        return Some((good.clone(), PlanReport::build(good, None, None)));
    }
    search.map(|(plan, r)| {
        // The search may have run while a (since removed) sweep was in the plan; the
        // sweep does not change the simulation, so the result stands without it.
        let mut plan = plan.clone();
        plan.planning.measured_sweep.clear();
        let mut report = PlanReport::build(&plan, Some(r), None);
        // One simulation at the planned rate, as `goodput plan` runs it.
        report.fill_planned_load(&plan);
        (plan, report)
    })
}

/// The goodput of exactly `plan`: its measured knee, or the last search if it was run
/// for this plan [requests/s].
pub fn goodput_for(plan: &Plan, search: Option<&(Plan, GoodputResult)>) -> Option<f64> {
    report_for(plan, search.filter(|(p, _)| p == plan)).map(|(_, r)| r.goodput.goodput_rps)
}

/// [`report_for`] the good plan and the last finished search, as a memo.
pub fn use_report(state: PlanState, runs: RunController) -> Memo<Option<(Plan, PlanReport)>> {
    Memo::new(move |_| {
        state
            .good
            .with(|good| runs.search.with(|s| report_for(good, s.as_ref())))
    })
}

/// The fleet of a report: the error in words when no fleet can be sized.
pub fn fleet_of(report: &PlanReport) -> Result<CapacityPlan, String> {
    match (&report.capacity, &report.capacity_error) {
        (Some(c), _) => Ok(c.clone()),
        (None, Some(e)) => Err(e.clone()),
        (None, None) => Err("no goodput to size the fleet from".into()),
    }
}

/// The fleet of the report (`None` until there is a report; the error in words when no
/// fleet can be sized).
pub fn use_fleet(
    report: Memo<Option<(Plan, PlanReport)>>,
) -> Memo<Option<Result<CapacityPlan, String>>> {
    Memo::new(move |_| report.with(|r| r.as_ref().map(|(_, r)| fleet_of(r))))
}

/// What to say while the numbers are not ready.
pub fn progress_text(runs: RunController) -> String {
    runs.status.with(|s| match &s.phase {
        Phase::Failed(m) => format!("The computation failed: {m}"),
        Phase::Search if s.total > 0 => format!(
            "Computing the plan in your browser: {} of about {} simulations…",
            s.done, s.total
        ),
        _ => "Computing the plan in your browser…".into(),
    })
}

/// One headline number: label, the shown text, and the unrounded value in `data-value`.
#[component]
pub fn Figure(
    /// What the number is.
    label: &'static str,
    /// `data-testid` of the value.
    testid: &'static str,
    /// Unrounded value.
    #[prop(into)]
    value: Signal<Option<f64>>,
    /// Formats the value for people.
    format: fn(f64) -> String,
) -> impl IntoView {
    view! {
        <div class="figure">
            <dt>{label}</dt>
            <dd
                data-testid=testid
                data-value=move || value.get().map(|v| v.to_string())
            >
                {move || value.get().map(format).unwrap_or_else(|| "…".into())}
            </dd>
        </div>
    }
}

/// The headline numbers as a definition list (shared by the finance view and the embed card).
#[component]
pub fn Figures(
    /// Whether to include goodput per replica.
    #[prop(default = true)]
    goodput: bool,
    /// Shorter labels, for the embed card.
    #[prop(default = false)]
    compact: bool,
) -> impl IntoView {
    let (month, per_request) = if compact {
        ("Per month", "Per compliant request")
    } else {
        ("Cost per month", "Cost per compliant request")
    };
    let state = PlanState::expect_context();
    let runs = RunController::expect_context();
    let report = use_report(state, runs);
    let fleet = use_fleet(report);
    let pick = move |f: fn(&CapacityPlan) -> f64| {
        Signal::derive(move || fleet.with(|c| c.as_ref().and_then(|c| c.as_ref().ok()).map(f)))
    };
    let goodput_rps =
        Signal::derive(move || report.with(|r| r.as_ref().map(|(_, r)| r.goodput.goodput_rps)));
    view! {
        <dl class="figures">
            <Figure label="GPUs" testid="gpus-total" value=pick(|c| c.gpus_total as f64) format=|v| format!("{v}") />
            <Figure label="Replicas" testid="replicas-total" value=pick(|c| c.replicas_total as f64) format=|v| format!("{v}") />
            <Figure label=month testid="cost-per-month-usd" value=pick(|c| c.cost_per_month_usd) format=usd />
            <Figure label=per_request testid="cost-per-compliant-request-usd"
                value=pick(|c| c.cost_per_compliant_request_usd) format=usd />
            {goodput.then(|| view! {
                <Figure label="Goodput per replica" testid="goodput-rps" value=goodput_rps
                    format=|v| format!("{v:.2} req/s") />
            })}
        </dl>
    }
}

/// The finance view.
#[component]
pub fn FinanceView() -> impl IntoView {
    let state = PlanState::expect_context();
    let runs = RunController::expect_context();
    let session = Session::expect_context();
    let report = use_report(state, runs);
    let fleet = use_fleet(report);
    let answer = move || {
        let plan = report.with(|r| r.as_ref().map(|(p, _)| p.clone()));
        match (fleet.get(), plan) {
            (Some(Ok(f)), Some(p)) => answer_sentence(&p, &f),
            (Some(Err(e)), _) => format!("No fleet can be sized for this plan: {e}."),
            _ => progress_text(runs),
        }
    };
    let ready = move || fleet.with(|f| matches!(f, Some(Ok(_))));
    let chart = Memo::new(move |_| state.good.with(|p| attainment_chart(&runs, p)));
    let print = move |_| {
        let _ = window().print();
    };
    view! {
        <main class="finance" data-testid="finance-view">
            <p class="finance-kicker">"Capacity plan"</p>
            <h2 class="finance-title" data-testid="plan-title">{move || state.good.with(plan_title)}</h2>
            {move || state.good.with(|p| (!p.note.trim().is_empty()).then(|| p.note.trim().to_string())).map(|n| view! {
                <p class="plan-note" data-testid="plan-note">{n}</p>
            })}
            <p class="answer" data-testid="answer" data-ready=move || ready().to_string() aria-live="polite">
                {answer}
            </p>
            {move || state.good.with(calibration_words).map(|w| view! {
                <p class="finance-calibration" data-testid="finance-calibration">{w.sentence}</p>
            })}
            {move || state.good.with(goodput_core::shootout::comparison_words).map(|w| view! {
                <p class="finance-shootout" data-testid="finance-shootout">{w}</p>
            })}
            <DayVerdictLine testid="finance-day" />
            <Figures />
            <div class="finance-columns">
                <section class="assumptions" aria-labelledby="assumptions-title">
                    <h3 id="assumptions-title">"Assumptions"</h3>
                    <dl data-testid="assumptions">
                        {move || state.good.with(assumptions).into_iter().map(|(topic, words)| view! {
                            <div class="assumption"><dt>{topic}</dt><dd>{words}</dd></div>
                        }).collect_view()}
                    </dl>
                </section>
                <section class="finance-chart" aria-labelledby="finance-chart-title">
                    <h3 id="finance-chart-title">"Share of requests within the SLO, by load per replica"</h3>
                    <ChartCanvas
                        testid="chart-attainment"
                        label="Attainment versus arrival rate per replica, with the target line and the knee"
                        height=240.0
                        draw=move |area, theme| chart.with(|d| draw_attainment(area, d, theme).unwrap_or_default())
                        readout=move |_, x, _| chart.with(|d| d.readout(x))
                    />
                </section>
            </div>
            <div class="finance-actions no-print">
                <button type="button" class="primary" data-testid="open-planner"
                    on:click=move |_| session.view.set(View::Planner)>
                    "Open in planner"
                </button>
                <button type="button" data-testid="print" on:click=print>"Print"</button>
            </div>
            <p class="finance-note">
                "Every number was computed in this browser from the plan in the link, by simulating the serving engine; nothing was sent to a server. Replicas are planned at a share of their goodput, the highest load at which the SLO still holds."
            </p>
        </main>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::cards::goodput_detail;
    use goodput_core::plan::SweepRow;
    use goodput_core::report::GoodputSource;
    use goodput_core::search::{Knobs, SearchStatus};

    fn article_plan() -> Plan {
        let mut plan = Plan::default();
        plan.planning.measured_sweep = [
            (4.0, 0.99),
            (6.0, 0.97),
            (8.0, 0.93),
            (9.0, 0.71),
            (10.0, 0.38),
        ]
        .iter()
        .map(|&(rate_rps, attainment)| SweepRow {
            rate_rps,
            attainment,
        })
        .collect();
        plan.slo.attainment_target = 0.92;
        plan.traffic.peak_rate_rps = 30.0;
        plan.planning.utilization = 0.7;
        plan.planning.redundancy = 1;
        plan
    }

    fn search_of(plan: &Plan, goodput_rps: f64) -> GoodputResult {
        GoodputResult {
            goodput_rps,
            goodput_range_rps: [goodput_rps - 1.0, goodput_rps + 1.0],
            target: plan.slo.attainment_target,
            replications: 4,
            knobs: Knobs::of(plan),
            status: SearchStatus::Converged,
            reason: String::new(),
            analytic_guess_rps: goodput_rps,
            curve: Vec::new(),
            jobs_run: 0,
        }
    }

    #[test]
    fn a_measured_sweep_sizes_the_fleet_without_a_search() {
        let plan = article_plan();
        let (shown_plan, report) = report_for(&plan, None).expect("no search needed");
        assert_eq!(shown_plan, plan);
        assert_eq!(report.goodput.source, GoodputSource::Measured);
        assert_eq!(report.goodput.goodput_rps, 8.0);
        let fleet = fleet_of(&report).expect("sized");
        assert!((fleet.planned_rps_per_replica - 5.6).abs() < 1e-12);
        assert_eq!((fleet.replicas_for_peak, fleet.replicas_total), (6, 7));
        assert_eq!(
            goodput_detail(&plan, &report),
            "measured (knee of 5 rows) at 92% attainment"
        );
        // A finished search does not replace the measured knee.
        let s = (plan.clone(), search_of(&plan, 20.0));
        let (_, with_search) = report_for(&plan, Some(&s)).expect("report");
        assert_eq!(
            with_search, report,
            "the same report as `goodput plan --json`"
        );
    }

    #[test]
    fn without_a_sweep_the_last_search_is_used_for_its_own_plan() {
        let plan = Plan::default();
        assert_eq!(
            report_for(&plan, None),
            None,
            "nothing until a search finishes"
        );
        // The search ran while the plan still had a sweep that is now removed.
        let searched = article_plan();
        let s = (searched.clone(), search_of(&searched, 12.5));
        let (shown_plan, report) = report_for(&plan, Some(&s)).expect("report");
        assert!(shown_plan.planning.measured_sweep.is_empty());
        assert_eq!(report.goodput.source, GoodputSource::Simulated);
        assert_eq!(report.goodput.goodput_rps, 12.5);
        assert_eq!(
            fleet_of(&report).expect("sized"),
            goodput_core::capacity::size_fleet(12.5, &shown_plan).expect("sized")
        );
        assert!(
            goodput_detail(&shown_plan, &report).starts_with("simulated, range 11.50–13.50 req/s"),
            "{}",
            goodput_detail(&shown_plan, &report)
        );
    }

    #[test]
    fn a_sweep_that_never_meets_the_target_says_why() {
        let mut plan = article_plan();
        plan.slo.attainment_target = 0.995;
        let (_, report) = report_for(&plan, None).expect("report");
        assert_eq!(report.goodput.goodput_rps, 0.0);
        assert!(fleet_of(&report).is_err());
        assert!(goodput_detail(&plan, &report).starts_with("measured: "));
    }
}
