//! Headline cards: goodput, replicas, GPUs, cost, cost per compliant request, best settings.
//! The numbers are the core's plan report, the same one the finance view, the exports and
//! `goodput plan --json` show.

use goodput_core::report::{GoodputSource, PlanReport};
use goodput_core::search::SearchStatus;
use goodput_core::Plan;
use leptos::prelude::*;

use crate::components::best_settings::BestSettings;
use crate::components::glossary::TermLink;
use crate::hooks::use_report::use_report;
use goodput_core::format::{count, percent, rps, sig, thousands, usd, MISSING};

/// One result card: a title, the value (with `data-testid` and the unrounded `data-value`)
/// and a line of detail.
#[component]
fn Card(
    /// Card title.
    title: &'static str,
    /// Glossary anchor the title links to, if any.
    #[prop(optional)]
    term: Option<&'static str>,
    /// `data-testid` of the value.
    testid: &'static str,
    /// Unrounded value, for `data-value`.
    #[prop(into)]
    value: Signal<Option<f64>>,
    /// The value as shown.
    #[prop(into)]
    shown: Signal<String>,
    /// A line of detail under the value.
    #[prop(into)]
    detail: Signal<String>,
) -> impl IntoView {
    view! {
        <article class="card">
            <h3>
                {match term {
                    Some(t) => view! { <TermLink term=t>{title}</TermLink> }.into_any(),
                    None => title.into_any(),
                }}
            </h3>
            <p
                class="card-value"
                data-testid=testid
                data-value=move || value.get().map(|v| v.to_string()).unwrap_or_default()
            >
                {move || shown.get()}
            </p>
            <p class="card-detail">{move || detail.get()}</p>
        </article>
    }
}

/// The goodput card's detail line: where the number comes from and how sure it is.
pub fn goodput_detail(plan: &Plan, report: &PlanReport) -> String {
    let g = &report.goodput;
    let at = format!("at {} attainment", percent(g.target));
    match g.source {
        GoodputSource::Measured if g.goodput_rps > 0.0 => format!(
            "measured (knee of {} rows) {at}",
            plan.planning.measured_sweep.len()
        ),
        GoodputSource::Measured => format!("measured: {}", g.note),
        GoodputSource::None => "Simulating…".into(),
        GoodputSource::Simulated => {
            let note = match report.search.as_ref().map(|r| r.status) {
                Some(SearchStatus::ZeroGoodput) => " — no rate meets the SLO",
                Some(SearchStatus::NotBracketed) => " — at least this; every rate tried passed",
                Some(SearchStatus::BudgetExhausted) => " — search budget ran out",
                _ => "",
            };
            let [lo, hi] = g.goodput_range_rps.unwrap_or([g.goodput_rps; 2]);
            // Constants fitted to measurements, not the datasheet's, stand behind it.
            let fitted = if plan.calibration.as_ref().is_some_and(|c| c.enabled) {
                " with calibrated constants"
            } else {
                ""
            };
            format!(
                "simulated{fitted}, range {}–{} req/s {at}{note}",
                rps(lo),
                rps(hi)
            )
        }
    }
}

/// The headline numbers: the core's plan report for the good plan (a measured sweep's
/// knee at once, else the last finished search), as the finance view and
/// `goodput plan --json` show them.
#[component]
pub fn HeadlineCards() -> impl IntoView {
    let report = use_report();
    let (report, fleet) = (report.report, report.fleet);
    let goodput = Signal::derive(move || {
        report.with(|r| {
            r.as_ref()
                .filter(|(_, r)| r.goodput.source != GoodputSource::None)
                .map(|(_, r)| r.goodput.goodput_rps)
        })
    });
    let cap = move |f: fn(&goodput_core::capacity::CapacityPlan) -> f64| {
        Signal::derive(move || fleet.with(|c| c.as_ref().and_then(|c| c.as_ref().ok()).map(f)))
    };
    let replicas = cap(|c| c.replicas_total as f64);
    let gpus = cap(|c| c.gpus_total as f64);
    let month = cap(|c| c.cost_per_month_usd);
    let per_request = cap(|c| c.cost_per_compliant_request_usd);
    let or_dash = |v: Signal<Option<f64>>, f: fn(f64) -> String| {
        Signal::derive(move || v.get().map(f).unwrap_or_else(|| MISSING.into()))
    };
    let goodput_detail = Signal::derive(move || {
        report.with(|r| match r {
            None => "Simulating…".into(),
            Some((p, r)) => goodput_detail(p, r),
        })
    });
    let fleet_detail = move |which: u8| {
        Signal::derive(move || {
            fleet.with(|c| match c {
                None => String::new(),
                Some(Err(e)) => e.clone(),
                Some(Ok(c)) => match which {
                    0 => format!(
                        "{} for the {} req/s peak + {} spare",
                        thousands(i64::from(c.replicas_for_peak)),
                        sig(c.peak_rate_rps),
                        c.redundancy
                    ),
                    1 => format!(
                        "{} per replica × {}",
                        c.gpus_per_replica,
                        count(u64::from(c.replicas_total), "replica", "replicas")
                    ),
                    2 => format!(
                        "{}/hour at {}/GPU-hour",
                        usd(c.cost_per_hour_usd),
                        usd(c.gpu_hour_usd)
                    ),
                    _ => format!(
                        "{} per 1,000; {} per million output tokens",
                        usd(c.cost_per_compliant_request_usd * 1000.0),
                        usd(c.cost_per_million_output_tokens_usd)
                    ),
                },
            })
        })
    };
    view! {
        <section class="cards" aria-label="Headline results">
            <Card title="Goodput per replica" term="goodput" testid="goodput-rps" value=goodput
                shown=or_dash(goodput, |v| format!("{} req/s", rps(v))) detail=goodput_detail />
            <Card title="Replicas" testid="replicas-total" value=replicas
                shown=or_dash(replicas, |v| thousands(v as i64)) detail=fleet_detail(0) />
            <Card title="GPUs" testid="gpus-total" value=gpus
                shown=or_dash(gpus, |v| thousands(v as i64)) detail=fleet_detail(1) />
            <Card title="Cost per month" testid="cost-per-month-usd" value=month
                shown=or_dash(month, usd) detail=fleet_detail(2) />
            <Card title="Cost per compliant request" term="cost" testid="cost-per-compliant-request-usd"
                value=per_request shown=or_dash(per_request, usd) detail=fleet_detail(3) />
            <BestSettings />
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use goodput_core::plan::SweepRow;
    use goodput_core::report::report_for;
    use goodput_core::search::{GoodputResult, Knobs, SearchStatus};

    fn measured_plan(target: f64) -> Plan {
        let mut plan = Plan::default();
        plan.planning.measured_sweep = [(4.0, 0.99), (6.0, 0.97), (8.0, 0.93), (9.0, 0.71)]
            .iter()
            .map(|&(rate_rps, attainment)| SweepRow {
                rate_rps,
                attainment,
            })
            .collect();
        plan.slo.attainment_target = target;
        plan
    }

    #[test]
    fn the_detail_says_where_goodput_comes_from() {
        let plan = measured_plan(0.92);
        let (_, report) = report_for(&plan, None).expect("no search needed");
        assert_eq!(
            goodput_detail(&plan, &report),
            "measured (knee of 4 rows) at 92% attainment"
        );
        // A target with a decimal reads with it, not rounded to a whole percentage.
        let half = measured_plan(0.925);
        let (_, report) = report_for(&half, None).expect("no search needed");
        assert_eq!(
            goodput_detail(&half, &report),
            "measured (knee of 4 rows) at 92.5% attainment"
        );
        let (_, never) = report_for(&measured_plan(0.995), None).expect("report");
        assert!(goodput_detail(&plan, &never).starts_with("measured: "));
        let plan = Plan::default();
        let search = GoodputResult {
            binding_class: None,
            goodput_rps: 12.5,
            goodput_range_rps: [11.5, 13.5],
            target: plan.slo.attainment_target,
            replications: 4,
            knobs: Knobs::of(&plan),
            status: SearchStatus::Converged,
            reason: String::new(),
            analytic_guess_rps: 12.5,
            curve: Vec::new(),
            jobs_run: 0,
        };
        let (shown, report) = report_for(&plan, Some((&plan, &search))).expect("report");
        let detail = goodput_detail(&shown, &report);
        assert!(
            detail.starts_with("simulated, range 11.50–13.50 req/s"),
            "{detail}"
        );
        let mut calibrated = shown.clone();
        calibrated.calibration = Some(goodput_core::plan::Calibration {
            enabled: true,
            ..Default::default()
        });
        let detail = goodput_detail(&calibrated, &report);
        assert!(
            detail.starts_with("simulated with calibrated constants, range 11.50–13.50 req/s"),
            "{detail}"
        );
    }
}
