//! The simulation charts: attainment vs rate, latency percentiles vs rate, knob heatmap.

use goodput_core::capacity::knee_from_sweep;
use goodput_core::Plan;
use leptos::prelude::*;

use crate::charts::attainment::{draw_attainment, AttainmentChart, CurvePoint};
use crate::charts::heatmap::{draw_heatmap, HeatmapChart};
use crate::charts::latency::{draw_latency, LatencyChart, LatencyPoint};
use crate::components::chart_canvas::ChartCanvas;
use crate::components::glossary::TermLink;
use crate::compute::{Phase, RunController};
use crate::state::PlanState;

/// Builds the attainment chart for `plan`: the running search's partial points, else the
/// last result; with a measured sweep in the plan, its rows as a second series and its
/// knee as the knee.
pub fn attainment_chart(runs: &RunController, plan: &Plan) -> AttainmentChart {
    let mut chart = simulated_chart(runs, plan.slo.attainment_target);
    with_measured(&mut chart, plan);
    chart
}

/// Adds the plan's measured sweep to `chart`: its rows, and its knee at the plan's target.
pub fn with_measured(chart: &mut AttainmentChart, plan: &Plan) {
    let rows = &plan.planning.measured_sweep;
    if rows.is_empty() {
        return;
    }
    chart.target = plan.slo.attainment_target;
    chart.measured = rows.iter().map(|r| (r.rate_rps, r.attainment)).collect();
    chart.knee_rps = knee_from_sweep(rows, chart.target).ok();
}

fn simulated_chart(runs: &RunController, target: f64) -> AttainmentChart {
    let partial = runs.partial.get();
    if !partial.is_empty() {
        let points = partial
            .iter()
            .filter(|p| !p.attainments.is_empty())
            .map(|p| {
                let n = p.attainments.len() as f64;
                let mean = p.attainments.iter().sum::<f64>() / n;
                let lo = p.attainments.iter().copied().fold(1.0, f64::min);
                let hi = p.attainments.iter().copied().fold(0.0, f64::max);
                CurvePoint {
                    rate_rps: p.rate_rps,
                    attainment: mean,
                    lo,
                    hi,
                }
            })
            .collect();
        return AttainmentChart {
            points,
            target,
            knee_rps: None,
            ..Default::default()
        };
    }
    runs.search.with(|s| match s {
        Some((_, r)) => AttainmentChart {
            points: r
                .curve
                .iter()
                .map(|c| CurvePoint {
                    rate_rps: c.rate_rps,
                    attainment: c.attainment,
                    lo: c.ci95[0],
                    hi: c.ci95[1],
                })
                .collect(),
            target: r.target,
            knee_rps: Some(r.goodput_rps),
            ..Default::default()
        },
        None => AttainmentChart {
            target,
            ..Default::default()
        },
    })
}

/// Builds the latency chart from the last result's per-rate detail.
pub fn latency_chart(runs: &RunController) -> LatencyChart {
    runs.search.with(|s| match s {
        Some((plan, r)) => LatencyChart {
            points: r
                .curve
                .iter()
                .filter_map(|c| {
                    c.detail.map(|d| LatencyPoint {
                        rate_rps: c.rate_rps,
                        ttft_p50_s: d.ttft_p50_s,
                        ttft_p99_s: d.ttft_p99_s,
                        tpot_p50_s: d.tpot_p50_s,
                        tpot_p99_s: d.tpot_p99_s,
                    })
                })
                .collect(),
            ttft_slo_s: plan.slo.ttft_s,
            tpot_slo_s: plan.slo.tpot_s,
        },
        None => LatencyChart::default(),
    })
}

/// Builds the knob heatmap: the running sweep's finished cells, else the last sweep.
pub fn heatmap_chart(runs: &RunController) -> HeatmapChart {
    if let Some(chart) = runs
        .sweep_partial
        .with(|p| p.as_ref().map(HeatmapChart::from_partial))
    {
        return chart;
    }
    runs.sweep.with(|s| match s {
        Some(s) => HeatmapChart::from_sweep(s),
        None => HeatmapChart::default(),
    })
}

/// The three simulation charts.
#[component]
pub fn ChartsPanel() -> impl IntoView {
    let runs = RunController::expect_context();
    let state = PlanState::expect_context();
    let att = Memo::new(move |_| state.good.with(|p| attainment_chart(&runs, p)));
    let lat = Memo::new(move |_| latency_chart(&runs));
    let heat = Memo::new(move |_| heatmap_chart(&runs));
    let sweep_cells = move || {
        let running = runs.status.with(|s| s.phase == Phase::Sweep);
        runs.sweep_partial.with(|p| {
            p.as_ref().map(|p| {
                let (done, total) = (p.finished(), p.cells.len());
                let text = if running {
                    format!("{done} of {total} cells done; the best cell is marked when all are.")
                } else {
                    format!("Sweep stopped after {done} of {total} cells.")
                };
                view! {
                    <p class="run-meta" data-testid="heatmap-progress" data-value=done>
                        {text}
                    </p>
                }
            })
        })
    };
    view! {
        <section class="panel" aria-labelledby="charts-title">
            <h2 id="charts-title">"Simulation"</h2>
            <p class="panel-intro">
                "Share of requests meeting the SLO ("<TermLink term="attainment">"attainment"</TermLink>") as the rate per replica grows. The "
                <TermLink term="knee">"knee"</TermLink>" is the "<TermLink term="goodput">"goodput"</TermLink>"; the band is the 95% confidence interval over replications."
            </p>
            <ChartCanvas
                testid="chart-attainment"
                label="Attainment versus arrival rate, with the target line and the knee"
                height=300.0
                draw=move |area, theme| att.with(|d| draw_attainment(area, d, theme).unwrap_or_default())
                readout=move |_, x, _| att.with(|d| d.readout(x))
            />
            <h3>"Latency percentiles vs rate"</h3>
            <ChartCanvas
                testid="chart-latency"
                label="TTFT and TPOT p50 and p99 versus arrival rate, with the SLO lines"
                height=280.0
                draw=move |area, theme| lat.with(|d| draw_latency(area, d, theme).unwrap_or_default())
                readout=move |panel, x, _| lat.with(|d| d.readout(panel, x))
            />
            <h3>"Knob sweep: goodput per replica [req/s]"</h3>
            {sweep_cells}
            <ChartCanvas
                testid="chart-heatmap"
                label="Goodput over max_num_seqs and max_num_batched_tokens"
                height=300.0
                draw=move |area, theme| heat.with(|d| draw_heatmap(area, d, theme).unwrap_or_default())
                readout=move |_, x, y| heat.with(|d| d.readout(x, y))
            />
        </section>
    }
}
