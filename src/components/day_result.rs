//! The day's schedule: the verdict, static against autoscaled cost, the chart and the
//! hour-by-hour table. Also the verdict line of the finance view.

use goodput_core::format::{percent_tenths, rps, usd, MISSING};
use goodput_core::schedule::HourRow;
use leptos::prelude::*;

use crate::charts::day::{day_chart, draw_day};
use crate::components::chart_canvas::ChartCanvas;
use crate::compute::day::DayController;
use crate::state::PlanState;

/// The finance view's sentence about the day: the verdict when the plan has a schedule
/// (a note while it is worked out, or when it belongs to an earlier version of the
/// plan); nothing when it has none.
#[component]
pub fn DayVerdictLine(
    /// `data-testid` of the paragraph.
    testid: &'static str,
) -> impl IntoView {
    let state = PlanState::expect_context();
    let ctl = DayController::expect_context();
    move || {
        let has_day = state.good.with(|p| p.schedule.is_some());
        let fresh = ctl.is_fresh();
        let words = ctl.result.with(|r| match r {
            _ if !has_day => None,
            Some(_) if state.is_stale() => Some((
                "The day's schedule shown is for the plan before the edit that has a problem; fix the input to work it out again.".to_string(),
                false,
            )),
            Some(r) if fresh => Some((r.schedule.verdict_sentence(), true)),
            Some(_) => Some((
                "The day's schedule shown was worked out for an earlier version of this plan; it is being worked out again.".to_string(),
                false,
            )),
            None => Some(("Working out the day's schedule…".to_string(), false)),
        })?;
        Some(view! {
            <p class="day-verdict" data-testid=testid data-ready=words.1.to_string() aria-live="polite">{words.0}</p>
        })
    }
}

/// One figure: label, shown text, unrounded value in `data-value`.
fn figure(
    label: &'static str,
    testid: &'static str,
    value: Option<f64>,
    shown: String,
) -> impl IntoView {
    view! {
        <div class="figure">
            <dt>{label}</dt>
            <dd data-testid=testid data-value=value.map(|v| v.to_string()).unwrap_or_default()>{shown}</dd>
        </div>
    }
}

fn hour_row(h: &HourRow) -> impl IntoView {
    let serving = if h.serving_min == h.serving_max {
        h.serving_min.to_string()
    } else {
        format!("{}–{}", h.serving_min, h.serving_max)
    };
    let att = h
        .attainment
        .map(percent_tenths)
        .unwrap_or_else(|| MISSING.into());
    view! {
        <tr data-testid="day-hour" data-hour=h.hour.to_string() data-replicas=h.replicas.to_string()
            data-serving-min=h.serving_min.to_string() data-serving-max=h.serving_max.to_string()
            data-attainment=h.attainment.map(|a| a.to_string()).unwrap_or_default()
            data-ramp=h.ramp.to_string() class:ramp=h.ramp>
            <th scope="row">{h.hour}</th>
            <td class="num">{rps(h.rate_rps)}</td>
            <td class="num">{h.replicas}</td>
            <td class="num">{serving}</td>
            <td class="num">{usd(h.cost_usd)}</td>
            <td class="num">{att}{h.ramp.then_some(" (ramp)")}</td>
        </tr>
    }
}

/// The result of the day.
#[component]
pub fn DayResultView() -> impl IntoView {
    let state = PlanState::expect_context();
    let ctl = DayController::expect_context();
    let fresh = Memo::new(move |_| ctl.result.with(Option::is_none) || ctl.is_fresh());
    let chart = Memo::new(move |_| {
        let target = state.good.with(|p| p.slo.attainment_target);
        ctl.result
            .with(|r| {
                r.as_ref()
                    .map(|r| day_chart(&r.schedule, &r.serving, target))
            })
            .unwrap_or_default()
    });
    let body = move || {
        ctl.result.get().map(|r| {
            let s = r.schedule;
            let money = |x: f64| (Some(x), usd(x));
            let share = |x: Option<f64>| (x, x.map(percent_tenths).unwrap_or_else(|| MISSING.into()));
            let (v1, t1) = money(s.static_cost_per_day_usd);
            let (v2, t2) = money(s.autoscaled_cost_per_day_usd);
            let (v3, t3) = money(s.static_cost_per_month_usd);
            let (v4, t4) = money(s.autoscaled_cost_per_month_usd);
            let (v5, t5) = money(s.savings_per_month_usd);
            let (v6, t6) = share(Some(s.savings_share));
            let (v7, t7) = share(s.ramp_attainment);
            let (v8, t8) = share(s.attainment);
            let rows = s.hours.iter().map(hour_row).collect_view();
            view! {
                <dl class="figures day-figures" data-testid="day-summary"
                    data-static-replicas=s.static_replicas.to_string()>
                    {figure("Static fleet, per day", "day-static-day", v1, t1)}
                    {figure("Autoscaled, per day", "day-auto-day", v2, t2)}
                    {figure("Static fleet, per month", "day-static-month", v3, t3)}
                    {figure("Autoscaled, per month", "day-auto-month", v4, t4)}
                    {figure("Saved per month", "day-saving-month", v5, t5)}
                    {figure("Saved", "day-saving-share", v6, t6)}
                    {figure("Within the SLO during ramps", "day-ramp-attainment", v7, t7)}
                    {figure("Within the SLO over the day", "day-attainment", v8, t8)}
                </dl>
                <details class="day-table-box" data-testid="day-table-toggle">
                    <summary>{format!("Hour by hour ({} static replicas)", s.static_replicas)}</summary>
                    <div class="table-scroll">
                    <table class="day-table" data-testid="day-table">
                        <thead><tr>
                            <th scope="col">"Hour"</th><th scope="col">"Rate [req/s]"</th>
                            <th scope="col">"Replicas needed"</th><th scope="col">"Serving"</th>
                            <th scope="col">"Autoscaled cost"</th><th scope="col">"Within the SLO"</th>
                        </tr></thead>
                        <tbody>{rows}</tbody>
                    </table>
                    </div>
                </details>
            }
        })
    };
    view! {
        <div class="day-result" class:stale=move || !fresh.get() data-testid="day-result"
            data-fresh=move || fresh.get().to_string()>
            <DayVerdictLine testid="day-verdict" />
            {body}
            <Show when=move || ctl.result.with(Option::is_some)>
                <div data-testid="day-chart-box" data-series=move || chart.with(|c| c.series_summary())
                    data-target=move || chart.with(|c| c.target.to_string())>
                    <ChartCanvas
                        testid="day-chart"
                        label="Arrival rate and the capacity the autoscaled fleet serves over the day, the replicas serving, needed and static below; hours below the attainment target shaded"
                        height=420.0
                        draw=move |area, theme| chart.with(|d| draw_day(area, d, theme).unwrap_or_default())
                        readout=move |_, x, _| chart.with(|d| d.readout(x))
                    />
                </div>
            </Show>
        </div>
    }
}
