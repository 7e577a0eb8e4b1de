//! The charts' shared tests: drawing every chart kind to SVG and checking what it
//! shows, and the helpers' edge cases.

use super::attainment::{draw_attainment, AttainmentChart, CurvePoint};
use super::heatmap::{draw_heatmap, HeatmapChart};
use super::histogram::{build_histogram, draw_histogram};
use super::latency::{draw_latency, LatencyChart, LatencyPoint};
use super::roofline::{build_roofline, draw_roofline};
use super::svg_checks::text_tag;
use super::*;
use goodput_core::roofline::StepModel;
use goodput_core::roofline::StepModelOf;
use goodput_core::Plan;
use plotters::backend::SVGBackend;

fn svg(
    draw: impl FnOnce(&DrawingArea<SVGBackend, plotters::coord::Shift>) -> Vec<Frame>,
) -> (String, Vec<Frame>) {
    svg_sized((800, 300), draw)
}

fn svg_sized(
    size: (u32, u32),
    draw: impl FnOnce(&DrawingArea<SVGBackend, plotters::coord::Shift>) -> Vec<Frame>,
) -> (String, Vec<Frame>) {
    let mut out = String::new();
    let frames;
    {
        let area = SVGBackend::with_string(&mut out, size).into_drawing_area();
        frames = draw(&area);
        area.present().expect("present");
    }
    (out, frames)
}

fn curve() -> AttainmentChart {
    let points = [
        (4.0, 0.99),
        (6.0, 0.97),
        (8.0, 0.93),
        (9.0, 0.71),
        (10.0, 0.38),
    ]
    .iter()
    .map(|&(r, a)| CurvePoint {
        rate_rps: r,
        attainment: a,
        lo: a - 0.02,
        hi: (a + 0.02f64).min(1.0),
    })
    .collect();
    AttainmentChart {
        points,
        target: 0.92,
        knee_rps: Some(8.0),
        measured: Vec::new(),
        classes: Vec::new(),
    }
}

/// A mix of traffic classes: each class's own curve, dashed and named in the legend
/// beside the mix's.
#[test]
fn each_traffic_class_is_drawn_and_named() {
    let plain = svg(|a| draw_attainment(a, &curve(), &Theme::default()).expect("draw")).0;
    let data = AttainmentChart {
        classes: vec![
            ("chat".into(), vec![(4.0, 0.995), (8.0, 0.93), (10.0, 0.38)]),
            ("batch".into(), vec![(4.0, 1.0), (8.0, 0.99), (10.0, 0.9)]),
        ],
        ..curve()
    };
    let (out, _) = svg(|a| draw_attainment(a, &data, &Theme::default()).expect("draw"));
    text_tag(&out, "chat\n");
    text_tag(&out, "batch\n");
    text_tag(&out, "the mix (worst class)\n");
    let lines = |s: &str| s.matches("<polyline").count();
    assert!(
        lines(&out) >= lines(&plain) + 2,
        "{} lines with classes, {} without",
        lines(&out),
        lines(&plain)
    );
}

#[test]
fn the_knee_label_stays_inside_the_plot() {
    // Knee at the last rate: the label flips to the left of the line.
    let mut right = curve();
    right.knee_rps = Some(10.0);
    let (out, frames) = svg(|a| draw_attainment(a, &right, &Theme::default()).expect("draw"));
    let f = &frames[0];
    let (tag, x) = text_tag(&out, "knee 10.00 req/s");
    assert!(tag.contains("text-anchor=\"end\""), "{tag}");
    let knee_px = f.px_x.start as f64
        + (10.0 - f.x.start) / (f.x.end - f.x.start) * (f.px_x.end - f.px_x.start) as f64;
    assert!(
        x < knee_px && x <= f.px_x.end as f64,
        "ends at {x}, knee at {knee_px}"
    );
    assert!(
        x - 16.0 * 11.0 * 0.62 > f.px_x.start as f64,
        "starts inside"
    );
    // Knee in the middle: the label reads to the right of the line, inside the plot.
    let (out, frames) = svg(|a| draw_attainment(a, &curve(), &Theme::default()).expect("draw"));
    let (tag, x) = text_tag(&out, "knee 8.00 req/s");
    assert!(!tag.contains("text-anchor=\"end\""), "{tag}");
    assert!(
        x + 15.0 * 11.0 * 0.62 <= frames[0].px_x.end as f64,
        "ends inside"
    );
    let t = Theme::default();
    assert!(matches!(
        beside_line(790, "knee", 11.0, 800, &t),
        (-4, HPos::Right)
    ));
    assert!(matches!(
        beside_line(500, "knee", 11.0, 800, &t),
        (4, HPos::Left)
    ));
}

#[test]
fn a_measured_sweep_is_drawn_as_its_own_series_without_a_simulation() {
    let data = AttainmentChart {
        target: 0.92,
        knee_rps: Some(8.0),
        measured: vec![
            (4.0, 0.99),
            (6.0, 0.97),
            (8.0, 0.93),
            (9.0, 0.71),
            (10.0, 0.38),
        ],
        ..Default::default()
    };
    let (out, frames) = svg(|a| draw_attainment(a, &data, &Theme::default()).expect("draw"));
    assert!(!out.contains("Waiting"), "measured rows are enough to draw");
    text_tag(&out, "measured\n");
    assert!(out.contains("knee 8.00 req/s"));
    assert_eq!(frames.len(), 1);
    assert!(frames[0].x.end >= 10.0);
    let r = data.readout(8.9).expect("readout");
    assert!(r.contains("measured 9.00 req/s: 71.0%"), "{r}");
    // Beside a simulated curve both series are named.
    let both = AttainmentChart {
        measured: data.measured.clone(),
        ..curve()
    };
    let (out, _) = svg(|a| draw_attainment(a, &both, &Theme::default()).expect("draw"));
    text_tag(&out, "simulated\n");
    text_tag(&out, "measured\n");
}

#[test]
fn attainment_chart_draws_band_target_and_knee() {
    let (out, frames) = svg(|a| draw_attainment(a, &curve(), &Theme::default()).expect("draw"));
    assert!(out.contains("<polygon"), "band missing");
    assert!(out.contains("target 92%"));
    assert!(out.contains("knee 8.00 req/s"));
    assert!(out.contains("arrival rate per replica [req/s]"));
    assert_eq!(frames.len(), 1);
    let f = &frames[0];
    // The pixel at the middle of the plotting area maps back into the data range.
    let mid = (
        (f.px_x.start + f.px_x.end) as f64 / 2.0,
        (f.px_y.start + f.px_y.end) as f64 / 2.0,
    );
    let (x, y) = f.to_data(mid.0, mid.1).expect("inside");
    let span = f.x.end - f.x.start;
    assert!(
        (x - (f.x.start + f.x.end) / 2.0).abs() < 0.1 * span,
        "x {x}"
    );
    assert!((y - 0.51).abs() < 0.05, "y {y}");
    assert!(f.to_data(-5.0, mid.1).is_none());
}

/// Plotters gives a narrow range one label when asked for three; the count is
/// raised until it gives two or more, and left alone where it already does.
#[test]
fn a_rate_axis_asks_for_enough_labels() {
    let mut out = String::new();
    let area = SVGBackend::with_string(&mut out, (300, 200)).into_drawing_area();
    let theme = Theme::default();
    let fit = theme.ticks(300 - 72);
    assert_eq!(fit, 3);
    let one: plotters::coord::types::RangedCoordf64 = (15.9..24.9).into();
    assert_eq!(one.key_points(fit).len(), 1, "plotters' own choice");
    let n = rate_labels(&area, 72.0, &theme, &(15.9..24.9));
    assert!(n > fit && one.key_points(n).len() >= 2, "{n}");
    assert_eq!(rate_labels(&area, 72.0, &theme, &(0.0..25.7)), fit);
}

/// The texts of an SVG drawn below `below` pixels: (x, content).
fn texts_below(svg: &str, below: i32) -> Vec<(f64, String)> {
    svg_checks::texts(svg)
        .filter_map(|(tag, content)| {
            let at = |name: &str| -> Option<f64> { svg_checks::attr(tag, name)?.parse().ok() };
            (at("y")? > below as f64).then_some((at("x")?, content.to_string()))
        })
        .collect()
}

/// On a narrow range of rates each latency panel labels two or more round rates
/// under its plot (plotters' own choice for three ticks was one lone "20.0").
#[test]
fn a_narrow_rate_range_keeps_several_round_labels() {
    let rates = [16.3, 19.0, 21.8, 22.1, 22.4, 22.7, 23.6, 24.5];
    let lat = LatencyChart {
        points: rates
            .iter()
            .map(|&r| LatencyPoint {
                rate_rps: r,
                ttft_p50_s: 0.005 * r,
                ttft_p99_s: 0.02 * r,
                tpot_p50_s: 0.012,
                tpot_p99_s: 0.015,
            })
            .collect(),
        ttft_slo_s: Some(0.5),
        tpot_slo_s: Some(0.025),
    };
    let (out, frames) = svg_sized((760, 300), |a| {
        draw_latency(a, &lat, &Theme::default()).expect("draw")
    });
    for f in &frames {
        let labels: Vec<f64> = texts_below(&out, f.px_y.end)
            .into_iter()
            .filter(|(x, _)| (f.px_x.start as f64..=f.px_x.end as f64).contains(x))
            .filter_map(|(_, t)| t.parse().ok())
            .collect();
        assert!(labels.len() >= 2, "panel {}: {labels:?}", f.panel);
        assert!(
            labels.iter().all(|v| (16.0..=25.0).contains(v)),
            "{labels:?}"
        );
    }
}

/// A search's curve that starts at 0.6 of its guess fills the plot; one that reaches
/// down to a third of its top rate (the low rate, 0.25 of the guess, beside 0.9 of
/// it), or a lone rate, keeps an axis from 0.
#[test]
fn the_rate_axis_fits_the_rates_it_shows() {
    let rates = [16.3, 19.0, 21.8, 22.1, 22.4, 22.7, 23.6, 24.5];
    let x = rate_axis(rates.iter().copied());
    let share = |r: f64| (r - x.start) / (x.end - x.start);
    assert!(share(16.3) > 0.0 && share(16.3) < 0.1, "{x:?}");
    assert!(share(24.5) > 0.9 && share(24.5) < 1.0, "{x:?}");
    let with_low = rate_axis(rates.iter().copied().chain([6.8]));
    assert_eq!(with_low, 0.0..24.5 * 1.05);
    assert_eq!(rate_axis([5.0].into_iter()), 0.0..5.0 * 1.05);
    assert_eq!(rate_axis(std::iter::empty()), 0.0..1.0);
    assert_eq!(rate_axis([f64::NAN, -1.0].into_iter()), 0.0..1.0);
    // The chart draws on that axis: the curve's first point sits at the plot's left.
    let mut data = curve();
    for (p, r) in data.points.iter_mut().zip(rates) {
        p.rate_rps = r;
    }
    data.knee_rps = None;
    let (_, frames) = svg(|a| draw_attainment(a, &data, &Theme::default()).expect("draw"));
    assert_eq!(frames[0].x, rate_axis(rates[..5].iter().copied()));
}

#[test]
fn empty_charts_say_so_instead_of_failing() {
    let (out, frames) =
        svg(|a| draw_attainment(a, &AttainmentChart::default(), &Theme::default()).expect("draw"));
    assert!(out.contains("Waiting for the first simulated rates"));
    assert!(frames.is_empty());
    let (out, _) =
        svg(|a| draw_heatmap(a, &HeatmapChart::default(), &Theme::default()).expect("draw"));
    assert!(out.contains("runs after the goodput search"));
}

#[test]
fn readouts_pick_the_nearest_point() {
    let c = curve();
    let text = c.readout(8.8).expect("readout");
    assert!(text.starts_with("9.00 req/s: 71.0%"), "{text}");
}

/// Five rates' latencies, with TTFT and TPOT objectives.
fn latency_data() -> LatencyChart {
    LatencyChart {
        points: (1..=5)
            .map(|i| LatencyPoint {
                rate_rps: i as f64 * 4.0,
                ttft_p50_s: 0.05 * i as f64,
                ttft_p99_s: 0.2 * i as f64,
                tpot_p50_s: 0.012 + 0.001 * i as f64,
                tpot_p99_s: 0.02 + 0.002 * i as f64,
            })
            .collect(),
        ttft_slo_s: Some(0.5),
        tpot_slo_s: Some(0.025),
    }
}

#[test]
fn latency_chart_has_two_panels_with_slo_lines() {
    let data = latency_data();
    let (out, frames) = svg(|a| draw_latency(a, &data, &Theme::default()).expect("draw"));
    assert_eq!(frames.len(), 2);
    assert!(frames[0].px_x.end <= frames[1].px_x.start, "panels overlap");
    assert!(out.contains("Time to first token") && out.contains("Time per output token"));
    assert!(out.contains("SLO"));
    assert!(data
        .readout(1, 8.1)
        .expect("readout")
        .contains("TPOT p50 14.0 ms"));
}

#[test]
fn roofline_shades_both_regions_and_matches_the_core() {
    let plan = Plan::default();
    let model = StepModel::from_plan(&plan);
    let chart = build_roofline(&model, 940.0, 128, 512);
    let p = chart.decode.iter().find(|p| p.x == 110.0);
    if let Some(p) = p {
        assert_eq!(p.step_s, model.step_time_s(110.0, 110.0 * 940.0));
    }
    // Decode is memory-bound at small batches; prefill turns compute-bound for big chunks.
    assert!(chart.decode[0].memory_s > chart.decode[0].compute_s);
    let last = chart.prefill.last().expect("prefill points");
    assert!(last.compute_s > last.memory_s);
    assert!(chart.prefill[0].memory_s > chart.prefill[0].compute_s);
    let (out, frames) = svg(|a| draw_roofline(a, &chart, &Theme::default()).expect("draw"));
    assert_eq!(frames.len(), 2);
    assert!(frames.iter().all(|f| f.log_x));
    assert!(out.contains("step time [ms]"));
    assert!(chart
        .readout(1, 4096.0)
        .expect("readout")
        .contains("compute-bound"));
}

#[test]
fn two_panel_charts_stack_on_a_phone() {
    let plan = Plan::default();
    let model = StepModel::from_plan(&plan);
    let roofline = build_roofline(&model, 940.0, 128, 512);
    let latency = latency_data();
    // At 2× device pixels, 700 backing pixels are 350 CSS px: a phone.
    let phone = Theme {
        scale: 2.0,
        dark: false,
    };
    let desktop = Theme {
        scale: 1.0,
        dark: false,
    };
    for (name, draw) in [
        (
            "roofline",
            &(|a: &DrawingArea<SVGBackend, plotters::coord::Shift>, t: &Theme| {
                draw_roofline(a, &roofline, t).expect("draw")
            })
                as &dyn Fn(&DrawingArea<SVGBackend, plotters::coord::Shift>, &Theme) -> Vec<Frame>,
        ),
        ("latency", &|a: &DrawingArea<
            SVGBackend,
            plotters::coord::Shift,
        >,
                      t: &Theme| {
            draw_latency(a, &latency, t).expect("draw")
        }),
    ] {
        let (out, f) = svg_sized((700, 960), |a| draw(a, &phone));
        assert_eq!(f.len(), 2, "{name}");
        assert!(
            f[0].px_y.end <= f[1].px_y.start,
            "{name}: one above the other"
        );
        for p in &f {
            let w = p.px_x.end - p.px_x.start;
            assert!(
                w > 490,
                "{name}: each panel has most of the width ({w} of 700)"
            );
        }
        if name == "roofline" {
            assert!(out.contains("memory (blue: memory-bound)"), "short legend");
        }
        // 1,000 backing pixels at 1 pixel per CSS pixel are wide: side by side.
        let (out, f) = svg_sized((1000, 480), |a| draw(a, &desktop));
        assert!(f[0].px_x.end <= f[1].px_x.start, "{name}: side by side");
        if name == "roofline" {
            assert!(
                out.contains("memory term (shaded blue: memory-bound)"),
                "long legend"
            );
        }
    }
}

#[test]
fn the_legend_goes_where_the_data_is_not() {
    let rising = vec![(0.0, 0.6), (0.5, 0.8), (1.0, 1.0)];
    let low = vec![(0.0, 0.05), (1.0, 0.3)];
    assert!(matches!(
        legend_corner(&[vec![(0.0, 0.1), (1.0, 0.2)]]),
        SeriesLabelPosition::UpperLeft
    ));
    // A curve through the upper left and the upper right, another along the bottom
    // left: the lower right is clear.
    assert!(matches!(
        legend_corner(&[rising, low]),
        SeriesLabelPosition::LowerRight
    ));
    // A segment crossing the upper left between two points outside it counts there.
    assert!(!matches!(
        legend_corner(&[vec![(0.0, 0.45), (0.4, 1.0)]]),
        SeriesLabelPosition::UpperLeft
    ));
}

/// A legend mark's start x, end x and y [pixels].
type Mark = (f64, f64, f64);

/// Every legend mark in `svg` (a two-point level line `stroke_px` wide), and `(x, y)`
/// of every left-aligned text.
fn marks_and_texts(svg: &str, stroke_px: u32) -> (Vec<Mark>, Vec<(f64, f64)>) {
    let attr = svg_checks::attr;
    let num = |v: &str| v.parse::<f64>().expect("a number");
    let mut marks = Vec::new();
    for tag in svg.split("<polyline").skip(1) {
        let tag = &tag[..tag.find('>').expect("closed")];
        if attr(tag, "stroke-width") != Some(stroke_px.to_string().as_str()) {
            continue;
        }
        let points: Vec<(f64, f64)> = attr(tag, "points")
            .expect("points")
            .split_whitespace()
            .map(|p| {
                let (x, y) = p.split_once(',').expect("x,y");
                (num(x), num(y))
            })
            .collect();
        if let [a, b] = points[..] {
            if a.1 == b.1 {
                marks.push((a.0, b.0, a.1));
            }
        }
    }
    let texts = svg_checks::texts(svg)
        .map(|(t, _)| t)
        .filter(|t| attr(t, "text-anchor") == Some("start"))
        .map(|t| (num(attr(t, "x").expect("x")), num(attr(t, "y").expect("y"))))
        .collect();
    (marks, texts)
}

#[test]
fn legend_marks_stay_clear_of_their_text_at_any_pixel_ratio() {
    let latency = latency_data();
    for scale in [1.0, 2.0, 3.0] {
        let theme = Theme { scale, dark: false };
        let size = ((1000.0 * scale) as u32, (480.0 * scale) as u32);
        let (svg, _) = svg_sized(size, |a| draw_latency(a, &latency, &theme).expect("draw"));
        let (pieces, texts) = marks_and_texts(&svg, theme.px(2.5));
        // A dashed mark comes in pieces on one row: join them, counting them.
        let mut marks: Vec<(Mark, usize)> = Vec::new();
        for (x0, x1, y) in pieces {
            match marks.last_mut() {
                Some(((_, end, row), n)) if *row == y && x0 - *end <= theme.px(5.0) as f64 => {
                    *end = x1;
                    *n += 1;
                }
                _ => marks.push(((x0, x1, y), 1)),
            }
        }
        // p50, p99 and SLO in each of the two panels; the SLO's mark in the SLO
        // line's dashes, the others solid.
        assert_eq!(marks.len(), 6, "{scale}×: {marks:?}");
        let dashed: Vec<usize> = marks.iter().map(|m| m.1).collect();
        assert_eq!(dashed, [1, 1, 2, 1, 1, 2], "{scale}×: {marks:?}");
        for ((x0, x1, y), _) in marks {
            let text = texts
                .iter()
                .filter(|t| t.0 > x0 && (t.1 - y).abs() < theme.px(14.0) as f64)
                .map(|t| t.0)
                .fold(f64::INFINITY, f64::min);
            assert!(
                text >= x1 + theme.px(4.0) as f64,
                "{scale}×: the mark {x0}..{x1} runs into its text at {text}"
            );
        }
    }
}

#[test]
fn heatmap_marks_the_best_cell() {
    let data = HeatmapChart {
        seqs: vec![64, 128],
        budgets: vec![256, 512, 0],
        goodput_rps: vec![
            vec![Some(10.0), Some(12.0), None],
            vec![Some(14.0), Some(20.0), Some(3.0)],
        ],
        best: Some((1, 1)),
        knobs: Vec::new(),
    };
    let (out, frames) = svg(|a| draw_heatmap(a, &data, &Theme::default()).expect("draw"));
    assert!(out.contains("20.0") && out.contains("off"));
    assert_eq!(frames[0].x, 0.0..3.0);
    assert!(data
        .readout(1.5, 1.2)
        .expect("cell")
        .contains("goodput 20.00 req/s"));
    assert!(data
        .readout(2.5, 0.5)
        .expect("cell")
        .contains("not simulated yet"));
    assert!(data.readout(7.0, 0.5).is_none());
}

#[test]
fn histogram_shares_sum_to_one_and_mark_median_and_p95() {
    let plan = Plan::default();
    let h = build_histogram("Prompt", &plan.traffic.prompt, 20).expect("lognormal");
    let total: f64 = h.bins.iter().map(|b| b.share).sum();
    assert!((total - 1.0).abs() < 1e-9, "shares sum to {total}");
    assert_eq!(h.median, 800.0);
    assert!((h.p95 - 800.0 * (1.6448536269514722f64 * 0.8).exp()).abs() < 1e-9);
    let (out, _) = svg(|a| draw_histogram(a, &h, &Theme::default()).expect("draw"));
    assert!(out.contains("median 800"));
}

/// How many `<line>`s of `color` at `opacity` an SVG holds.
fn lines(svg: &str, opacity: &str, color: RGBColor) -> usize {
    let tag = format!(
        "<line opacity=\"{opacity}\" stroke=\"#{:02X}{:02X}{:02X}\"",
        color.0, color.1, color.2
    );
    svg.matches(&tag).count()
}

#[test]
fn the_house_mesh_style_is_shared_by_every_grid_chart() {
    let plan = Plan::default();
    let model = StepModel::from_plan(&plan);
    let roof = build_roofline(&model, 940.0, 128, 512);
    let lat = LatencyChart {
        points: (1..=4)
            .map(|i| LatencyPoint {
                rate_rps: i as f64 * 5.0,
                ttft_p50_s: 0.1 * i as f64,
                ttft_p99_s: 0.3 * i as f64,
                tpot_p50_s: 0.015,
                tpot_p99_s: 0.02,
            })
            .collect(),
        ttft_slo_s: Some(0.5),
        tpot_slo_s: Some(0.025),
    };
    for theme in [
        Theme::default(),
        Theme {
            dark: true,
            scale: 2.0,
        },
    ] {
        let charts = [
            svg(|a| draw_attainment(a, &curve(), &theme).expect("draw")).0,
            svg(|a| draw_latency(a, &lat, &theme).expect("draw")).0,
            svg(|a| draw_roofline(a, &roof, &theme).expect("draw")).0,
        ];
        for out in &charts {
            svg_checks::assert_no_needless_decimals(out);
            // Faint lines between ticks, bold lines on ticks, axes in the text colour.
            assert!(lines(out, "0.5", theme.grid()) > 0, "no light grid lines");
            assert!(lines(out, "1", theme.grid()) > 0, "no bold grid lines");
            let (r, g, b) = (theme.fg().0, theme.fg().1, theme.fg().2);
            assert!(out.contains(&format!("stroke=\"#{r:02X}{g:02X}{b:02X}\"")));
        }
        // The heatmap and histogram share the axes but draw no grid.
        let heat = HeatmapChart {
            seqs: vec![64],
            budgets: vec![512],
            goodput_rps: vec![vec![Some(3.0)]],
            best: Some((0, 0)),
            knobs: Vec::new(),
        };
        let out = svg(|a| draw_heatmap(a, &heat, &theme).expect("draw")).0;
        assert_eq!(lines(&out, "0.5", theme.grid()), 0);
        assert!(out.contains("max_num_seqs"));
    }
}

/// A knob sweep driven with a synthetic cliff per cell, fed one result at a time;
/// returns a heatmap snapshot after every result, and the final heatmap.
fn synthetic_sweep() -> (Vec<HeatmapChart>, HeatmapChart) {
    use goodput_core::search::{JobResult, KnobSweep, PEAK_UNKNOWN};
    let mut plan = Plan::default();
    plan.run.num_requests = 300;
    plan.run.warmup_requests = 30;
    plan.run.replications = 2;
    plan.run.sweep_max_num_seqs = vec![16, 64, 128];
    plan.run.sweep_batched_tokens = vec![256, 512, 0];
    let mut s = KnobSweep::new(&plan).expect("sweep");
    let mut snaps = Vec::new();
    let mut rounds = 0;
    while !s.is_done() && rounds < 200 {
        rounds += 1;
        for j in s.next_batch() {
            let k = j.knobs;
            let cliff = k.max_num_seqs as f64 * 0.1 + k.max_num_batched_tokens as f64 / 200.0;
            s.feed(&[JobResult {
                classes: Default::default(),
                id: j.id,
                attainment: if j.rate_rps <= cliff { 1.0 } else { 0.5 },
                detail: None,
                peak_running: PEAK_UNKNOWN,
            }]);
            snaps.push(HeatmapChart::from_partial(&s.partial()));
        }
    }
    let done = s.result().expect("sweep finished");
    (snaps, HeatmapChart::from_sweep(&done))
}

#[test]
fn the_partial_heatmap_shows_final_values_and_waits_for_the_best() {
    let (snaps, last) = synthetic_sweep();
    assert_eq!(last.goodput_rps.len(), 3);
    assert!(last.goodput_rps.iter().flatten().all(Option::is_some));
    let (r, c) = last.best.expect("best cell at the end");
    let best = last.goodput_rps[r][c].expect("value");
    assert!(last
        .goodput_rps
        .iter()
        .flatten()
        .flatten()
        .all(|&g| g <= best));
    let mut partly = 0;
    for snap in &snaps {
        assert_eq!(snap.best, None, "the best cell is marked only at the end");
        assert_eq!((&snap.seqs, &snap.budgets), (&last.seqs, &last.budgets));
        let done = snap.goodput_rps.iter().flatten().flatten().count();
        if done > 0 && done < 9 {
            partly += 1;
        }
        for (row, final_row) in snap.goodput_rps.iter().zip(&last.goodput_rps) {
            for (v, f) in row.iter().zip(final_row) {
                assert!(v.is_none() || v == f, "{v:?} vs {f:?}");
            }
        }
    }
    assert!(partly > 0, "some snapshot shows a partly finished grid");
    // Unfinished cells carry an ellipsis; the final grid has none and marks the best.
    let mid = snaps
        .iter()
        .find(|s| {
            let n = s.goodput_rps.iter().flatten().flatten().count();
            n > 0 && n < 9
        })
        .expect("a partly finished grid");
    let (out, _) = svg(|a| draw_heatmap(a, mid, &Theme::default()).expect("draw"));
    assert!(out.contains('…'));
    assert_eq!(lines_of_good(&out), 0);
    let (out, _) = svg(|a| draw_heatmap(a, &last, &Theme::default()).expect("draw"));
    assert!(!out.contains('…'));
    assert!(lines_of_good(&out) > 0, "best cell outlined");
}

/// Shapes drawn in the "good" colour (the best-cell outline).
fn lines_of_good(svg: &str) -> usize {
    let g = Theme::default().good();
    svg.matches(&format!("stroke=\"#{:02X}{:02X}{:02X}\"", g.0, g.1, g.2))
        .count()
}

#[test]
fn log_axes_get_ticks_even_within_one_decade() {
    assert_eq!(log_ticks(14.0, 56.0, 6), vec![20.0, 30.0, 40.0, 50.0]);
    assert_eq!(
        log_ticks(1.0, 1000.0, 10),
        vec![1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0]
    );
    assert_eq!(log_ticks(1.0, 1000.0, 4), vec![1.0, 10.0, 100.0, 1000.0]);
    assert_eq!(log_ticks(5.2, 34.0, 6), vec![6.0, 8.0, 10.0, 20.0, 30.0]);
    assert_eq!(log_ticks(1.0, 1e12, 4).len(), 4, "every third power of ten");
    assert_eq!(log_ticks(21.0, 29.0, 6), vec![22.0, 24.0, 26.0, 28.0]);
    assert_eq!(log_ticks(20.5, 21.5, 3), vec![20.5, 21.0, 21.5]);
    assert!(log_ticks(0.0, 1.0, 5).is_empty());
    assert!(log_ticks(f64::NAN, 1.0, 5).is_empty());
    assert_eq!(tick_label(20.0), "20");
    assert_eq!(tick_label(0.05), "0.05");
    assert_eq!(tick_label(3_000_000.0), "3,000,000");
    assert_eq!(tick_label(-1500.0), "-1,500");
    assert_eq!(tick_label(999.5), "999.5");
}

#[test]
fn the_tpot_log_axis_is_labelled() {
    // TPOT within one decade (20 to 40 ms): plotters alone labels no tick there.
    let chart = LatencyChart {
        points: (1..=6)
            .map(|i| LatencyPoint {
                rate_rps: i as f64,
                ttft_p50_s: 0.1 * i as f64,
                ttft_p99_s: 0.3 * i as f64,
                tpot_p50_s: 0.020 + 0.002 * i as f64,
                tpot_p99_s: 0.025 + 0.002 * i as f64,
            })
            .collect(),
        ttft_slo_s: Some(0.5),
        tpot_slo_s: Some(0.025),
    };
    let (svg, _) = svg(|a| draw_latency(a, &chart, &Theme::default()).expect("draws"));
    for label in ["20", "30"] {
        assert!(
            svg.contains(&format!(">\n{label}\n</text>")),
            "TPOT tick {label} in the SVG"
        );
    }
}

#[test]
fn narrow_charts_get_fewer_ticks() {
    let t = Theme::default();
    assert_eq!(t.ticks(1000), 10);
    assert_eq!(t.ticks(150), 2);
    let retina = Theme {
        scale: 2.0,
        dark: false,
    };
    assert_eq!(retina.ticks(300), 2, "backing pixels count at the scale");
}

#[test]
fn padded_ranges_never_collapse() {
    assert_eq!(padded(f64::NAN, 1.0, 0.1), 0.0..1.0);
    let r = padded(5.0, 5.0, 0.1);
    assert!(r.start < 5.0 && r.end > 5.0);
}
