//! The simulation charts: attainment vs rate, latency percentiles vs rate, knob heatmap.

use goodput_core::capacity::knee_from_sweep;
use goodput_core::search::Knobs;
use goodput_core::Plan;
use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::charts::attainment::{draw_attainment, AttainmentChart, CurvePoint};
use crate::charts::heatmap::{draw_heatmap, HeatmapChart};
use crate::charts::latency::{draw_latency, LatencyChart, LatencyPoint};
use crate::charts::Frame;
use crate::components::chart_canvas::ChartCanvas;
use crate::components::glossary::TermLink;
use crate::components::knob_grid::KnobGrid;
use crate::compute::{Phase, RunController};
use crate::state::PlanState;
use crate::tuning::{apply_knobs, knobs_text};

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
        Some((plan, r)) => AttainmentChart {
            classes: plan
                .classes
                .iter()
                .enumerate()
                .map(|(k, c)| {
                    let line = r
                        .curve
                        .iter()
                        .filter_map(|p| p.classes.as_slice().get(k).map(|&a| (p.rate_rps, a)))
                        .collect();
                    (c.name.clone(), line)
                })
                .collect(),
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

/// Moves the focus to the heatmap cell `(r, c)`.
fn focus_cell(r: usize, c: usize) {
    let el = document()
        .query_selector(&format!("[data-testid=\"heatmap-cell-{r}-{c}\"]"))
        .ok()
        .flatten()
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok());
    if let Some(el) = el {
        let _ = el.focus();
    }
}

/// One button per heatmap cell, laid over the canvas: click or Enter applies the
/// cell's settings to the plan; the arrow keys move across rows and columns (Home and
/// End to a row's ends); hover and focus show the cell's readout.
#[component]
fn HeatmapCells(
    heat: Memo<crate::charts::heatmap::HeatmapChart>,
    frames: RwSignal<(Vec<Frame>, f64)>,
    hover: RwSignal<Option<String>>,
) -> impl IntoView {
    let state = PlanState::expect_context();
    // The cell that takes the Tab stop: the best one once known.
    let focus = RwSignal::new(None::<(usize, usize)>);
    let current = Memo::new(move |_| state.good.with(Knobs::of));
    let tab_stop = Memo::new(move |_| {
        focus
            .get()
            .or_else(|| heat.with(|h| h.best))
            .unwrap_or((0, 0))
    });
    let on_key = move |ev: ev::KeyboardEvent, r: usize, c: usize| {
        let (rows, cols) = heat.with_untracked(|h| (h.seqs.len(), h.budgets.len()));
        // Rows are drawn upward: ArrowUp goes to more sequences.
        let to = match ev.key().as_str() {
            "ArrowUp" => (r + 1).min(rows.saturating_sub(1)),
            "ArrowDown" => r.saturating_sub(1),
            _ => r,
        };
        let tc = match ev.key().as_str() {
            "ArrowRight" => (c + 1).min(cols.saturating_sub(1)),
            "ArrowLeft" => c.saturating_sub(1),
            "Home" => 0,
            "End" => cols.saturating_sub(1),
            _ => c,
        };
        if !matches!(
            ev.key().as_str(),
            "ArrowUp" | "ArrowDown" | "ArrowLeft" | "ArrowRight" | "Home" | "End"
        ) {
            return;
        }
        ev.prevent_default();
        focus.set(Some((to, tc)));
        focus_cell(to, tc);
    };
    move || {
        let (fs, dpr) = frames.get();
        let f = fs.first()?.clone();
        let dpr = if dpr > 0.0 { dpr } else { 1.0 };
        heat.with(|h| {
            let (rows, cols) = (h.seqs.len(), h.budgets.len());
            if rows == 0 || cols == 0 {
                return None;
            }
            let (x0, x1) = (f.px_x.start as f64 / dpr, f.px_x.end as f64 / dpr);
            let (y0, y1) = (f.px_y.start as f64 / dpr, f.px_y.end as f64 / dpr);
            let (cw, ch) = ((x1 - x0) / cols as f64, (y1 - y0) / rows as f64);
            let cells = (0..rows)
                .rev()
                .flat_map(|r| (0..cols).map(move |c| (r, c)))
                .map(|(r, c)| {
                    let knobs = h.knobs.get(r).and_then(|row| row.get(c)).copied().flatten();
                    let text = h.cell_text(r, c);
                    let label = match knobs {
                        Some(_) => format!("{text}. Apply these settings."),
                        None => text.clone(),
                    };
                    let style = format!(
                        "left:{:.1}px;top:{:.1}px;width:{:.1}px;height:{:.1}px",
                        x0 + c as f64 * cw,
                        y0 + (rows - 1 - r) as f64 * ch,
                        cw,
                        ch
                    );
                    let best = h.best == Some((r, c));
                    let hover_text = text.clone();
                    let focus_text = text.clone();
                    view! {
                        <button
                            type="button"
                            class="heat-cell"
                            class:best=best
                            class:current=move || knobs.is_some_and(|k| k == current.get())
                            style=style
                            data-testid=format!("heatmap-cell-{r}-{c}")
                            data-max-num-seqs=knobs.map(|k| k.max_num_seqs.to_string())
                            data-max-num-batched-tokens=knobs.map(|k| k.max_num_batched_tokens.to_string())
                            data-chunked-prefill=knobs.map(|k| k.chunked_prefill.to_string())
                            aria-label=label
                            aria-disabled=knobs.is_none().then_some("true")
                            tabindex=move || if tab_stop.get() == (r, c) { "0" } else { "-1" }
                            on:click=move |_| {
                                focus.set(Some((r, c)));
                                if let Some(k) = knobs {
                                    apply_knobs(state, k, "apply settings from the heatmap");
                                    hover.set(Some(format!("Applied {}; the cards follow when the run is done.", knobs_text(&k))));
                                }
                            }
                            on:keydown=move |ev| on_key(ev, r, c)
                            on:focus=move |_| hover.set(Some(focus_text.clone()))
                            on:mouseenter=move |_| hover.set(Some(hover_text.clone()))
                            on:mouseleave=move |_| hover.set(None)
                        ></button>
                    }
                })
                .collect_view();
            Some(view! {
                <div
                    class="heat-cells"
                    role="group"
                    aria-label="Knob sweep cells: arrow keys move, Enter applies a cell's settings"
                    data-testid="heatmap-cells"
                >
                    {cells}
                </div>
            })
        })
    }
}

/// The three simulation charts.
#[component]
pub fn ChartsPanel() -> impl IntoView {
    let runs = RunController::expect_context();
    let state = PlanState::expect_context();
    let att = Memo::new(move |_| state.good.with(|p| attainment_chart(&runs, p)));
    let lat = Memo::new(move |_| latency_chart(&runs));
    let heat = Memo::new(move |_| heatmap_chart(&runs));
    let heat_frames = RwSignal::new((Vec::<Frame>::new(), 1.0));
    let heat_hover = RwSignal::new(None::<String>);
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
                narrow_height=480.0
                draw=move |area, theme| lat.with(|d| draw_latency(area, d, theme).unwrap_or_default())
                readout=move |panel, x, _| lat.with(|d| d.readout(panel, x))
            />
            <h3>"Knob sweep: goodput per replica [req/s]"</h3>
            <p class="panel-intro">
                "Click a cell (or move to it with the arrow keys and press Enter) to plan at its settings. The best cell is outlined; the settings in use are dashed."
            </p>
            {sweep_cells}
            <ChartCanvas
                testid="chart-heatmap"
                label="Goodput over max_num_seqs and max_num_batched_tokens"
                height=300.0
                draw=move |area, theme| heat.with(|d| draw_heatmap(area, d, theme).unwrap_or_default())
                readout=move |_, x, y| heat.with(|d| d.readout(x, y))
                frames_out=heat_frames
                hover=heat_hover
            >
                <HeatmapCells heat frames=heat_frames hover=heat_hover />
            </ChartCanvas>
            <KnobGrid />
        </section>
    }
}
