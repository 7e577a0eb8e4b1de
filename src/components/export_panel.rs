//! The planner's Export section: Markdown summary, curve and sweep CSV, plan JSON
//! (and loading one back), and every chart as SVG or PNG.

use goodput_core::analytic::MeanLengths;
use goodput_core::roofline::StepModel;
use goodput_core::roofline::StepModelOf;
use leptos::prelude::*;
use plotters::coord::Shift;
use plotters::prelude::{DrawingArea, DrawingBackend, IntoDrawingArea};
use plotters_canvas::CanvasBackend;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::charts::attainment::draw_attainment;
use crate::charts::day::{day_chart, draw_day};
use crate::charts::disagg::{disagg_chart, draw_disagg};
use crate::charts::heatmap::draw_heatmap;
use crate::charts::latency::draw_latency;
use crate::charts::roofline::{build_roofline, draw_roofline};
use crate::charts::{with_heading, Theme, EXPORT_HEADING_CSS_PX};
use crate::components::charts_panel::{attainment_chart, heatmap_chart, latency_chart};
use crate::components::header_actions::when_settled;
use crate::compute::day::DayController;
use crate::compute::disagg::DisaggController;
use crate::compute::{Phase, RunController};
use crate::export::{
    chart_svg, click_link, curve_csv, download_text, file_stem, load_plan_json, markdown_summary,
    plan_json, sweep_csv, LoadError, MAX_PLAN_FILE_BYTES,
};
use crate::session::Session;
use crate::state::PlanState;
use crate::url_state::{page_base, plan_title, share_link};

/// The charts that export, by the `data-testid` of their canvas.
const CHARTS: &[(&str, &str)] = &[
    ("chart-attainment", "Attainment"),
    ("chart-latency", "Latency"),
    ("chart-heatmap", "Knob sweep"),
    ("chart-roofline", "Roofline"),
    ("day-chart", "Traffic over a day"),
    ("disagg-chart", "Prefill/decode split"),
];

/// Where the charts' data comes from: the plan's state and the controllers that compute.
#[derive(Clone, Copy)]
struct Sources {
    state: PlanState,
    runs: RunController,
    day: DayController,
    disagg: DisaggController,
}

/// Backing pixels per CSS pixel of an exported PNG: sharp on slides and high-density
/// screens whatever the exporting screen's own density.
pub const PNG_SCALE: f64 = 2.0;

/// Draws the chart whose canvas is `testid` into `area`, from the same data as on screen.
fn draw_chart<DB: DrawingBackend>(
    testid: &str,
    area: &DrawingArea<DB, Shift>,
    theme: &Theme,
    from: Sources,
) {
    let plan = &from.state.good.get_untracked();
    let runs = &from.runs;
    let name = CHARTS
        .iter()
        .find(|(id, _)| *id == testid)
        .map_or("Chart", |(_, label)| *label);
    let body = with_heading(area, theme, name, &plan_title(plan));
    let area = &body;
    match testid {
        "day-chart" => {
            let target = plan.slo.attainment_target;
            let data = from.day.result.with_untracked(|r| {
                r.as_ref()
                    .map(|r| day_chart(&r.schedule, &r.serving, target))
                    .unwrap_or_default()
            });
            drop(draw_day(area, &data, theme))
        }
        "disagg-chart" => {
            let data = from.disagg.result.with_untracked(|r| {
                r.as_ref()
                    .map(|(_, r)| disagg_chart(r, plan.slo.ttft_s))
                    .unwrap_or_default()
            });
            drop(draw_disagg(area, &data, theme))
        }
        "chart-attainment" => drop(draw_attainment(area, &attainment_chart(runs, plan), theme)),
        "chart-latency" => drop(draw_latency(area, &latency_chart(runs), theme)),
        "chart-heatmap" => drop(draw_heatmap(area, &heatmap_chart(runs), theme)),
        _ => {
            let ctx = MeanLengths::of(plan).context_tokens;
            let data = build_roofline(
                &StepModel::from_plan(plan),
                ctx,
                plan.engine.max_num_seqs,
                plan.engine.max_num_batched_tokens,
            );
            drop(draw_roofline(area, &data, theme))
        }
    }
}

/// Why the chart whose canvas is `testid` cannot be exported yet: its panel computes
/// only when asked, and has not (an export would be an empty or misleading chart).
/// Tracks the panels' results.
fn not_ready(testid: &str, from: Sources) -> Option<&'static str> {
    match testid {
        "day-chart" if from.day.result.with(Option::is_none) => {
            Some("Plan the day in \u{201c}Traffic over a day\u{201d} first.")
        }
        "disagg-chart" if from.disagg.result.with(Option::is_none) => {
            Some("Size the pools in \u{201c}Prefill/decode split\u{201d} first.")
        }
        _ => None,
    }
}

/// The SVG of the chart whose canvas is `testid`, drawn from the same data as on screen.
fn svg_of(testid: &str, from: Sources) -> String {
    chart_svg(|a, t| draw_chart(testid, a, t, from))
}

/// The PNG of the chart whose canvas is `testid`, as a `data:` URL: drawn afresh at
/// [`PNG_SCALE`] times the on-screen canvas's CSS size, in the light theme.
fn png_of(testid: &str, from: Sources) -> Result<String, String> {
    let shown = document()
        .query_selector(&format!("canvas[data-testid=\"{testid}\"]"))
        .ok()
        .flatten()
        .and_then(|el| el.dyn_into::<web_sys::HtmlCanvasElement>().ok())
        .ok_or_else(|| {
            "that chart is not drawn yet: run its panel first (size the pools, plan the day)"
                .to_string()
        })?;
    let failed = || "the browser could not make the image".to_string();
    let canvas = document()
        .create_element("canvas")
        .ok()
        .and_then(|el| el.dyn_into::<web_sys::HtmlCanvasElement>().ok())
        .ok_or_else(failed)?;
    let size = |css: i32| (css.max(40) as f64 * PNG_SCALE).round() as u32;
    canvas.set_width(size(shown.client_width()));
    canvas.set_height(size(shown.client_height() + EXPORT_HEADING_CSS_PX as i32));
    let area = CanvasBackend::with_canvas_object(canvas.clone())
        .ok_or_else(failed)?
        .into_drawing_area();
    let theme = Theme {
        scale: PNG_SCALE,
        dark: false,
    };
    draw_chart(testid, &area, &theme, from);
    let _ = area.present();
    canvas.to_data_url().map_err(|_| failed())
}

/// The Export section.
#[component]
pub fn ExportPanel() -> impl IntoView {
    let state = PlanState::expect_context();
    let runs = RunController::expect_context();
    let session = Session::expect_context();
    let from = Sources {
        state,
        runs,
        day: DayController::expect_context(),
        disagg: DisaggController::expect_context(),
    };
    let message = RwSignal::new(None::<(bool, String)>);
    // A download that worked clears what an earlier one said.
    let report = move |r: Result<(), String>| match r {
        Ok(()) => message.set(None),
        Err(e) => message.set(Some((false, format!("Export failed: {e}")))),
    };
    let stem = move || file_stem(&state.good.get_untracked());
    let md = move |_| {
        let plan = state.good.get_untracked();
        let link = share_link(&page_base(), &plan);
        // The sweep belongs to the search only once the whole run is done.
        let done = runs.status.with_untracked(|s| s.phase == Phase::Done);
        let sweep = runs.sweep.get_untracked().filter(|_| done);
        let baseline = runs.baseline.get_untracked();
        let day = from
            .day
            .result
            .get_untracked()
            .filter(|d| d.is_fresh(&plan))
            .map(|d| d.schedule);
        let text = runs.search.with_untracked(|s| {
            markdown_summary(
                &plan,
                s.as_ref().map(|(p, r)| (p, r)),
                baseline.as_ref(),
                sweep.as_ref(),
                day.as_ref(),
                &link,
            )
        });
        report(download_text(
            &format!("{}.md", stem()),
            "text/markdown",
            &text,
        ));
    };
    let curve = move |_| match runs.search.get_untracked() {
        Some((p, r)) if state.good.with_untracked(|g| *g == p) => report(download_text(
            &format!("{}-curve.csv", stem()),
            "text/csv",
            &curve_csv(&r),
        )),
        _ => message.set(Some((
            false,
            "The curve of this plan is still being computed.".into(),
        ))),
    };
    let sweep = move |_| {
        let done = runs.status.with_untracked(|s| s.phase == Phase::Done);
        match runs.sweep.get_untracked().filter(|_| done) {
            Some(s) => report(download_text(
                &format!("{}-sweep.csv", stem()),
                "text/csv",
                &sweep_csv(&s),
            )),
            None => message.set(Some((
                false,
                "The knob sweep of this plan has not finished yet.".into(),
            ))),
        }
    };
    let json = move |_| {
        let text = plan_json(&state.good.get_untracked());
        report(download_text(
            &format!("{}.json", stem()),
            "application/json",
            &text,
        ));
    };
    let on_file = move |ev: leptos::ev::Event| {
        let Some(input) = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
        else {
            return;
        };
        let Some(file) = input.files().and_then(|f| f.get(0)) else {
            return;
        };
        input.set_value("");
        let size = file.size();
        if size > MAX_PLAN_FILE_BYTES as f64 {
            let e = LoadError::TooLarge {
                bytes: size as usize,
            };
            message.set(Some((false, format!("{e}. Your plan is unchanged."))));
            return;
        }
        let name = file.name();
        let on_text = Closure::once_into_js(move |text: JsValue| {
            let text = text.as_string().unwrap_or_default();
            match load_plan_json(&text) {
                Ok(loaded) => {
                    let text = loaded.loaded_text(&name);
                    session.open_own(loaded.plan, "load a plan file");
                    message.set(Some((true, format!("{text} Undo takes it back."))));
                }
                Err(e) => message.set(Some((
                    false,
                    format!("{name}: {e}. Your plan is unchanged."),
                ))),
            }
        });
        let on_fail = Closure::once_into_js(move |_: JsValue| {
            message.set(Some((
                false,
                "The browser could not read the file. Your plan is unchanged.".into(),
            )));
        });
        when_settled(&file.text(), &on_text, &on_fail);
    };
    let charts = CHARTS
        .iter()
        .map(|&(id, label)| {
            let svg = move |_| {
                report(download_text(
                    &format!("{}-{id}.svg", stem()),
                    "image/svg+xml",
                    &svg_of(id, from),
                ))
            };
            let png = move |_| {
                report(
                    png_of(id, from)
                        .and_then(|url| click_link(&format!("{}-{id}.png", stem()), &url)),
                )
            };
            let waiting = move || not_ready(id, from);
            view! {
                <li>
                    <span>{label}</span>
                    <button type="button" data-testid=format!("export-{id}-svg") on:click=svg
                        disabled=move || waiting().is_some()
                        aria-label=format!("Download the {label} chart as SVG")>"SVG"</button>
                    <button type="button" data-testid=format!("export-{id}-png") on:click=png
                        disabled=move || waiting().is_some()
                        aria-label=format!("Download the {label} chart as PNG")>"PNG"</button>
                    {move || waiting().map(|why| view! {
                        <span class="export-waiting" data-testid=format!("export-{id}-waiting")>{why}</span>
                    })}
                </li>
            }
        })
        .collect_view();
    view! {
        <section class="panel export-panel no-print" aria-labelledby="export-title" data-testid="export-panel"
            data-heading-px=EXPORT_HEADING_CSS_PX.to_string()>
            <h2 id="export-title">"Export"</h2>
            <div class="export-row">
                <button type="button" data-testid="export-markdown" on:click=md>"Markdown summary"</button>
                <button type="button" data-testid="export-curve-csv" on:click=curve>"Curve CSV"</button>
                <button type="button" data-testid="export-sweep-csv" on:click=sweep>"Sweep CSV"</button>
                <button type="button" data-testid="export-plan-json" on:click=json>"Plan JSON"</button>
                <label class="file-button">
                    "Load plan JSON"
                    <input type="file" accept=".json,application/json" data-testid="load-plan-json" on:change=on_file />
                </label>
            </div>
            <ul class="export-charts">{charts}</ul>
            {move || message.get().map(|(ok, m)| view! {
                <p class="export-message" class:error=!ok role="status" data-testid="export-message">{m}</p>
            })}
        </section>
    }
}
