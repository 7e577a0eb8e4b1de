//! The finance view, the default page of a shared link: the answer first in words,
//! the headline numbers, the assumptions, the attainment chart; the planner one click
//! away. It prints on one page.

use goodput_core::capacity::CapacityPlan;
use leptos::prelude::*;

use crate::charts::attainment::draw_attainment;
use crate::components::chart_canvas::ChartCanvas;
use crate::components::charts_panel::attainment_chart;
use crate::components::day_result::DayVerdictLine;
use crate::components::print_stamp::PrintStamp;
use crate::compute::planned::prefix_at_planned_rate;
use crate::compute::{Phase, RunController};
use crate::hooks::use_report::use_report;
use crate::route::View;
use crate::session::Session;
use crate::state::PlanState;
use crate::summary::{answer_sentence, calibration_words, planned_load_words, report_assumptions};
use crate::url_state::plan_title;
use goodput_core::format::{rps, usd};
use goodput_core::report::assumptions;

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
    let report = use_report();
    let (report, fleet) = (report.report, report.fleet);
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
                    format=|v| format!("{} req/s", rps(v)) />
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
    let report = use_report();
    let (report, fleet) = (report.report, report.fleet);
    let answer = move || {
        let plan = report.with(|r| r.as_ref().map(|(p, _)| p.clone()));
        match (fleet.get(), plan) {
            (Some(Ok(f)), Some(p)) => answer_sentence(&p, &f),
            (Some(Err(e)), _) => format!("No fleet can be sized for this plan: {e}."),
            _ => progress_text(runs),
        }
    };
    let ready = move || fleet.with(|f| matches!(f, Some(Ok(_))));
    // The report's own words on the traffic, the routing and the planned load, once it
    // has them.
    let more = move || {
        report.with(|r| {
            r.as_ref()
                .map(|(p, r)| report_assumptions(p, r))
                .unwrap_or_default()
        })
    };
    let planned = move || {
        report.with(|r| {
            r.as_ref().and_then(|(p, r)| {
                let hit = prefix_at_planned_rate(p, r).map(|h| h.hit_rate);
                let load = r.planned_load.as_ref()?;
                Some((planned_load_words(load, hit), hit.map(|h| h.to_string())))
            })
        })
    };
    // What the plan's router saves against round robin, once that search has run.
    let router = move || {
        report.with(|r| {
            r.as_ref()
                .and_then(|(_, r)| r.router_savings.as_ref())
                .map(|s| s.words())
        })
    };
    // Each traffic class at the planned rate and what it costs, as the report says it.
    let classes = move || {
        report.with(|r| {
            r.as_ref()
                .and_then(|(_, r)| goodput_core::report::classes::classes_paragraph(r))
        })
    };
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
            {move || planned().map(|(words, hit)| view! {
                <p class="finance-planned" data-testid="finance-planned" data-hit-rate=hit>{words}</p>
            })}
            {move || router().map(|words| view! {
                <p class="finance-planned" data-testid="finance-router">{words}</p>
            })}
            {move || classes().map(|words| view! {
                <p class="finance-planned" data-testid="finance-classes">{words}</p>
            })}
            <div class="finance-columns">
                <section class="assumptions" aria-labelledby="assumptions-title">
                    <h3 id="assumptions-title">"Assumptions"</h3>
                    <dl data-testid="assumptions">
                        {move || state.good.with(assumptions).into_iter().map(|a| view! {
                            <div class="assumption" data-path=a.path><dt>{a.label}</dt><dd>{a.value}</dd></div>
                        }).collect_view()}
                        {move || more().into_iter().map(|(path, label, value)| view! {
                            <div class="assumption" data-path=path data-testid=format!("assumption-{path}")><dt>{label}</dt><dd>{value}</dd></div>
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
            <PrintStamp />
            <p class="finance-note">
                "Every number was computed in this browser from the plan in the link, by simulating the serving engine; nothing was sent to a server. Replicas are planned at a share of their goodput, the highest load at which the SLO still holds."
            </p>
        </main>
    }
}
