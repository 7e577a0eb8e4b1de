//! Exports: the curve and the knob sweep as CSV, the plan as JSON (and back), charts
//! as SVG, and the browser download that delivers them.
//!
//! ```text
//!   GoodputResult ─curve_csv─▶ text/csv      Plan ─plan_json─▶ application/json
//!   SweepResult   ─sweep_csv─▶ text/csv      file text ─load_plan_json─▶ Plan (validated) | LoadError
//!   chart data ─draw_*(SVGBackend)─▶ image/svg+xml
//!   any text ─download─▶ Blob + object URL + a temporary <a download>
//! ```
//!
//! The CSV and JSON builders are plain functions tested natively; numbers are written
//! with Rust's shortest round-trip formatting, so a file reads back bit for bit.

use std::fmt::Write as _;

use goodput_core::plan::StrictPlanError;
use goodput_core::report::PlanReport;
use goodput_core::search::{GoodputResult, SweepResult};
use goodput_core::Plan;
use plotters::coord::Shift;
use plotters::prelude::{DrawingArea, IntoDrawingArea, SVGBackend};

use crate::charts::Theme;
use crate::state::messages::plan_error_words;

/// Largest plan file "Load plan JSON" reads [bytes] (a plan with the longest trace fits).
pub const MAX_PLAN_FILE_BYTES: usize = 16 * 1024 * 1024;

/// Size of exported SVG charts [px].
pub const SVG_SIZE_PX: (u32, u32) = (900, 420);

/// The attainment curve: one row per evaluated rate, with the latency percentiles
/// where the search recorded them (blank otherwise).
pub fn curve_csv(result: &GoodputResult) -> String {
    let mut out = String::from(
        "rate_rps,attainment,ci95_lo,ci95_hi,attainment_min,attainment_max,ttft_p50_s,ttft_p99_s,tpot_p50_s,tpot_p99_s,itl_p99_s,output_tokens_per_s\n",
    );
    for p in &result.curve {
        let _ = write!(
            out,
            "{},{},{},{},{},{}",
            p.rate_rps, p.attainment, p.ci95[0], p.ci95[1], p.attainment_min, p.attainment_max
        );
        match p.detail {
            Some(d) => {
                let _ = writeln!(
                    out,
                    ",{},{},{},{},{},{}",
                    d.ttft_p50_s,
                    d.ttft_p99_s,
                    d.tpot_p50_s,
                    d.tpot_p99_s,
                    d.itl_p99_s,
                    d.output_tokens_per_s
                );
            }
            None => out.push_str(",,,,,,\n"),
        }
    }
    out
}

/// The knob sweep: one row per grid cell; `max_num_batched_tokens` 0 means chunked prefill off.
pub fn sweep_csv(sweep: &SweepResult) -> String {
    let mut out =
        String::from("max_num_seqs,max_num_batched_tokens,chunked_prefill,goodput_rps,goodput_lo_rps,goodput_hi_rps,best\n");
    for (i, c) in sweep.cells.iter().enumerate() {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{}",
            c.max_num_seqs,
            c.batched_tokens,
            c.knobs.chunked_prefill,
            c.goodput_rps,
            c.goodput_range_rps[0],
            c.goodput_range_rps[1],
            i == sweep.best
        );
    }
    out
}

/// The Markdown summary to paste into a doc: the core's plan report for the last
/// finished search when it was run for `plan` (else the report without search results),
/// with the day schedule when `day` was worked out for `plan` on the report's goodput,
/// then a link back to the plan.
pub fn markdown_summary(
    plan: &Plan,
    search: Option<(&Plan, &GoodputResult)>,
    baseline: Option<&(Plan, GoodputResult)>,
    sweep: Option<&SweepResult>,
    day: Option<&goodput_core::schedule::Schedule>,
    link: &str,
) -> String {
    let result = search.filter(|(p, _)| *p == plan).map(|(_, r)| r);
    let sweep = sweep.filter(|_| result.is_some());
    // As `goodput plan` prints it; a planned-load simulation that fails leaves it out.
    let mut report = PlanReport::complete(plan, result, sweep)
        .unwrap_or_else(|_| PlanReport::build(plan, result, sweep));
    if result.is_some() {
        report.set_router_baseline_of(plan, baseline.map(|(p, b)| (p, b)));
    }
    if let Some(d) = day {
        report.set_day(plan, d);
    }
    let mut out = report.to_markdown();
    if !link.is_empty() {
        let _ = write!(out, "\n[Open this plan in goodput](<{link}>)\n");
    }
    out
}

/// The plan as pretty JSON: what `goodput plan --plan FILE` reads.
pub fn plan_json(plan: &Plan) -> String {
    serde_json::to_string_pretty(plan).unwrap_or_else(|_| "{}".into())
}

/// A file name from the plan's name: `[a-z0-9-]` only, `goodput-plan` when blank.
pub fn file_stem(plan: &Plan) -> String {
    let mut stem = String::new();
    for c in plan.name.to_lowercase().chars() {
        if c.is_ascii_alphanumeric() {
            stem.push(c);
        } else if !stem.ends_with('-') && !stem.is_empty() {
            stem.push('-');
        }
        if stem.len() >= 48 {
            break;
        }
    }
    let stem = stem.trim_end_matches('-');
    if stem.is_empty() {
        "goodput-plan".into()
    } else {
        format!("goodput-{stem}")
    }
}

/// Why a plan file could not be loaded; the current plan stays.
#[derive(Debug, Clone, PartialEq)]
pub enum LoadError {
    /// The file is larger than [`MAX_PLAN_FILE_BYTES`] (`bytes` long); pick a goodput plan file.
    TooLarge {
        /// Size of the file [bytes].
        bytes: usize,
    },
    /// The file is not a plan, or not all of one: the core's strict reader says what
    /// is wrong (not JSON, a report, unknown fields, missing sections, a value out of
    /// range); export one from goodput or `goodput decode`.
    Refused(StrictPlanError),
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::TooLarge { bytes } => write!(
                f,
                "the file is {} MB; a plan file is at most {} MB",
                bytes / (1024 * 1024),
                MAX_PLAN_FILE_BYTES / (1024 * 1024)
            ),
            // A value out of range reads as its input would say it, with the file's path.
            LoadError::Refused(StrictPlanError::Invalid(e)) => write!(
                f,
                "a value is out of range: {} (“{}” in the file)",
                plan_error_words(e),
                e.field
            ),
            LoadError::Refused(e) => write!(f, "{e}"),
        }
    }
}

/// A plan file read: the plan, and the top-level sections the file left out (they
/// took their defaults).
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedPlan {
    /// The plan, validated.
    pub plan: Plan,
    /// Sections not in the file (`slo`, `run`, …), in the plan's order.
    pub defaulted: Vec<&'static str>,
}

impl LoadedPlan {
    /// What loading `name` did, for the message beside the button.
    pub fn loaded_text(&self, name: &str) -> String {
        match self.defaulted.as_slice() {
            [] => format!("Loaded {name}."),
            [one] => format!("Loaded {name}; it has no “{one}” section, which takes its defaults."),
            many => format!(
                "Loaded {name}; it has no {} sections, which take their defaults.",
                many.iter()
                    .map(|s| format!("“{s}”"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

/// Reads a plan file (from "Export plan JSON", `goodput decode` or by hand, whole or with
/// some sections left out, as the CLI's `--plan` takes it) with the core's checks
/// ([`Plan::from_json_partial`]): unknown keys, a report and values out of range are
/// refused.
pub fn load_plan_json(text: &str) -> Result<LoadedPlan, LoadError> {
    if text.len() > MAX_PLAN_FILE_BYTES {
        return Err(LoadError::TooLarge { bytes: text.len() });
    }
    Plan::from_json_partial(text)
        .map(|(plan, defaulted)| LoadedPlan { plan, defaulted })
        .map_err(LoadError::Refused)
}

/// Renders a chart with its `draw_*` function into an SVG document.
pub fn chart_svg(draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>, &Theme)) -> String {
    let mut svg = String::new();
    {
        let area = SVGBackend::with_string(&mut svg, SVG_SIZE_PX).into_drawing_area();
        draw(&area, &Theme::default());
        let _ = area.present();
    }
    svg
}

/// Starts a download of `text` as `filename` (browser only).
pub fn download_text(filename: &str, mime: &str, text: &str) -> Result<(), String> {
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(text));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options)
        .map_err(|_| "the browser could not make the file".to_string())?;
    let url = web_sys::Url::create_object_url_with_blob(&blob)
        .map_err(|_| "the browser could not make the file".to_string())?;
    let result = click_link(filename, &url);
    // Revoke later: the download reads the object URL after the click returns.
    let to_revoke = url.clone();
    leptos::prelude::set_timeout(
        move || {
            let _ = web_sys::Url::revoke_object_url(&to_revoke);
        },
        std::time::Duration::from_secs(30),
    );
    result
}

/// Starts a download of a URL (an object URL or a `data:` URL) as `filename` (browser only).
pub fn click_link(filename: &str, href: &str) -> Result<(), String> {
    use wasm_bindgen::JsCast;
    let document = leptos::prelude::document();
    let a: web_sys::HtmlAnchorElement = document
        .create_element("a")
        .map_err(|_| "the browser could not start the download".to_string())?
        .unchecked_into();
    a.set_href(href);
    a.set_download(filename);
    a.set_attribute("hidden", "").ok();
    let body = document
        .body()
        .ok_or_else(|| "the page has no body".to_string())?;
    body.append_child(&a)
        .map_err(|_| "the browser could not start the download".to_string())?;
    a.click();
    a.remove();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exported_chart_is_headed_by_its_name_and_the_plan_title_as_text() {
        let svg = chart_svg(|area, theme| {
            let body =
                crate::charts::with_heading(area, theme, "Attainment", "Plan <b>&</b> \"x\"");
            let (w, h) = body.dim_in_pixel();
            assert_eq!((w, h), (SVG_SIZE_PX.0, SVG_SIZE_PX.1 - 40));
        });
        assert!(svg.contains(">\nAttainment\n</text>"), "{svg}");
        assert!(
            svg.contains("Plan &lt;b&gt;&amp;&lt;/b&gt;"),
            "the title is text, not markup: {svg}"
        );
        assert!(!svg.contains("<b>"), "{svg}");
    }
    use goodput_core::search::{CurvePoint, Knobs, LatencyDetail, SearchStatus};

    fn result() -> GoodputResult {
        let point = |rate: f64, a: f64, detail| CurvePoint {
            classes: Default::default(),
            rate_rps: rate,
            attainment: a,
            ci95: [a - 0.01, (a + 0.01).min(1.0)],
            attainment_min: a - 0.02,
            attainment_max: a,
            detail,
        };
        GoodputResult {
            binding_class: None,
            goodput_rps: 20.0,
            goodput_range_rps: [19.0, 21.0],
            target: 0.9,
            replications: 4,
            knobs: Knobs::of(&Plan::default()),
            status: SearchStatus::Converged,
            reason: String::new(),
            analytic_guess_rps: 25.0,
            curve: vec![
                point(
                    20.0,
                    0.976,
                    Some(LatencyDetail {
                        classes: Default::default(),
                        ttft_p50_s: 0.1,
                        ttft_p99_s: 0.45,
                        tpot_p50_s: 0.012,
                        tpot_p99_s: 0.024,
                        itl_p99_s: 0.03,
                        output_tokens_per_s: 4400.0,
                        mean_queue_len: 1.0,
                        preemptions: 0,
                        prefix_hit_rate: 0.0,
                        prefix_evicted_tokens: 0,
                    }),
                ),
                point(24.0, 0.44, None),
            ],
            jobs_run: 8,
        }
    }

    #[test]
    fn the_curve_csv_has_one_row_per_rate_and_exact_numbers() {
        let csv = curve_csv(&result());
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 3);
        let columns = lines[0].split(',').count();
        assert!(
            lines.iter().all(|l| l.split(',').count() == columns),
            "{csv}"
        );
        assert!(
            lines[1].starts_with("20,0.976,0.966,0.986,0.956,0.976,0.1,0.45,0.012,0.024,0.03,4400"),
            "{}",
            lines[1]
        );
        assert!(lines[2].ends_with(",,,,,,"));
        let back: f64 = lines[1]
            .split(',')
            .nth(2)
            .and_then(|v| v.parse().ok())
            .expect("number");
        assert_eq!(back, 0.976 - 0.01);
    }

    #[test]
    fn plan_json_loads_back_and_bad_files_are_refused() {
        let mut plan = Plan {
            name: "fp8 \"pilot\"".into(),
            ..Plan::default()
        };
        plan.model.weight_dtype = goodput_core::plan::Dtype::Fp8;
        let whole = load_plan_json(&plan_json(&plan)).expect("loads");
        assert_eq!(
            (&whole.plan, whole.loaded_text("a.json")),
            (&plan, "Loaded a.json.".into())
        );
        let mut zero = plan.clone();
        zero.run.replications = 0;
        let e = load_plan_json(&plan_json(&zero)).unwrap_err();
        assert!(
            matches!(&e, LoadError::Refused(StrictPlanError::Invalid(e)) if e.field == "run.replications")
        );
        assert_eq!(
            e.to_string(),
            "a value is out of range: Replications must be a whole number from 1 to 1000 \
             runs; it is 0 (“run.replications” in the file)"
        );
        // A part of a plan loads, its other sections at their defaults, and says so.
        let part = load_plan_json("{\"run\": {\"replications\": 4}, \"slo\": {\"ttft_s\": 0.3}}")
            .expect("a partial plan loads");
        assert_eq!(part.plan.run.replications, 4);
        assert_eq!(part.plan.slo.ttft_s, Some(0.3));
        assert_eq!(part.plan.traffic, Plan::default().traffic);
        assert_eq!(
            part.loaded_text("p.json"),
            "Loaded p.json; it has no “model”, “hardware”, “traffic”, “engine”, “planning” \
             sections, which take their defaults."
        );
        // No section at all, or another document, is refused and named.
        let e = load_plan_json("{\"name\": \"x\"}").unwrap_err();
        assert!(
            e.to_string().starts_with("missing sections \"model\""),
            "{e}"
        );
        let e = load_plan_json("{\"hello\":1}").unwrap_err();
        assert!(e.to_string().contains("\"hello\""), "{e}");
        for bad in ["not json", "[1,2]", &"[".repeat(100_000)] {
            assert!(
                matches!(load_plan_json(bad), Err(LoadError::Refused(_))),
                "{bad:.20}"
            );
        }
        let huge = " ".repeat(MAX_PLAN_FILE_BYTES + 1);
        assert_eq!(
            load_plan_json(&huge),
            Err(LoadError::TooLarge { bytes: huge.len() })
        );
    }

    #[test]
    fn the_markdown_summary_is_the_core_report_plus_the_link() {
        let plan = Plan::default();
        let r = result();
        let md = markdown_summary(
            &plan,
            Some((&plan, &r)),
            None,
            None,
            None,
            "http://h/#p=1dx",
        );
        let core = PlanReport::complete(&plan, Some(&r), None).expect("simulates");
        assert!(
            core.planned_load.is_some(),
            "the planned-load simulation ran"
        );
        assert!(md.starts_with(&core.to_markdown()));
        assert!(
            md.trim_end()
                .ends_with("[Open this plan in goodput](<http://h/#p=1dx>)"),
            "{md}"
        );
        let other = Plan {
            name: "other".into(),
            ..Plan::default()
        };
        let stale = markdown_summary(&other, Some((&plan, &r)), None, None, None, "");
        assert_eq!(
            stale,
            PlanReport::build(&other, None, None).to_markdown(),
            "a search of another plan is left out"
        );
    }

    #[test]
    fn file_stems_are_safe() {
        let mut plan = Plan::default();
        assert_eq!(file_stem(&plan), "goodput-plan");
        plan.name = "  Llama 70B / fp8 <pilot>!! ".into();
        assert_eq!(file_stem(&plan), "goodput-llama-70b-fp8-pilot");
    }

    #[test]
    fn charts_render_to_svg() {
        use crate::charts::attainment::{draw_attainment, AttainmentChart, CurvePoint as P};
        let data = AttainmentChart {
            points: vec![
                P {
                    rate_rps: 10.0,
                    attainment: 1.0,
                    lo: 1.0,
                    hi: 1.0,
                },
                P {
                    rate_rps: 20.0,
                    attainment: 0.95,
                    lo: 0.93,
                    hi: 0.97,
                },
            ],
            target: 0.9,
            knee_rps: Some(20.0),
            ..Default::default()
        };
        let svg = chart_svg(|area, theme| {
            let _ = draw_attainment(area, &data, theme);
        });
        assert!(svg.starts_with("<svg"), "{:.80}", svg);
        assert!(svg.trim_end().ends_with("</svg>"));
        // Content, not only a frame: the axis titles, the knee label and the curve
        // through both points in the series colour.
        for text in [
            "arrival rate per replica [req/s]",
            "attainment [%]",
            "knee 20.00 req/s",
        ] {
            assert!(svg.contains(text), "no {text:?} in the SVG");
        }
        let accent = Theme::default().accent();
        let colour = format!("#{:02X}{:02X}{:02X}", accent.0, accent.1, accent.2);
        let curves: Vec<usize> = svg
            .split("<polyline")
            .skip(1)
            .map(|tag| &tag[..tag.find('>').unwrap_or(tag.len())])
            .filter(|tag| tag.contains(&format!("stroke=\"{colour}\"")))
            .filter_map(|tag| tag.split("points=\"").nth(1))
            .map(|points| {
                points[..points.find('"').unwrap_or(0)]
                    .split_whitespace()
                    .count()
            })
            .collect();
        assert!(
            curves.contains(&2),
            "no 2-point curve in {colour}: {curves:?}"
        );
    }

    #[test]
    fn a_measured_sweep_survives_the_json_export_and_the_share_link() {
        use crate::route::View;
        use crate::state::parse_sweep_text;
        use crate::url_state::{fragment_for, read_fragment, Opening};
        let mut plan = Plan::default();
        plan.planning.measured_sweep =
            parse_sweep_text("4,0.99\n6,0.97\n8,0.93\n9,0.71\n10,0.38").expect("rows");
        let whole = load_plan_json(&plan_json(&plan)).expect("loads");
        assert_eq!(
            (&whole.plan, whole.loaded_text("a.json")),
            (&plan, "Loaded a.json.".into())
        );
        let opened = read_fragment(&fragment_for(&plan, View::Planner));
        assert_eq!(
            opened,
            Opening::Link {
                plan: Box::new(plan.clone()),
                view: View::Planner
            }
        );
        let md = markdown_summary(&plan, None, None, None, None, "");
        assert!(md.contains("measured"), "{md}");
    }
}
