//! The GPU × layout comparison as a scatter: the monthly cost of the fleet that meets the SLO
//! at the peak (what the comparison ranks by) against the p99 TPOT at the planned rate,
//! one marker per option that can be sized. The cheapest option is drawn in the "best"
//! colour, the plan's own option with a ring around it.

use goodput_core::shootout::ShootoutResult;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{draw_note, nearest, padded, tick_label, Frame, Theme};

/// One option on the chart.
#[derive(Debug, Clone, PartialEq)]
pub struct OptionPoint {
    /// "H200 ×2": short label drawn beside the marker.
    pub label: String,
    /// p99 TPOT at the planned rate [ms].
    pub tpot_p99_ms: f64,
    /// Monthly cost of the option's fleet for the peak [thousand USD].
    pub kusd_per_month: f64,
    /// Cost per 1,000 compliant requests [USD] (the readout's second figure).
    pub usd_per_1k: f64,
    /// The cheapest option.
    pub best: bool,
    /// The plan's own GPU and TP degree.
    pub chosen: bool,
}

/// Everything the chart shows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ShootoutChart {
    /// Every option that could be sized, in the result's (ranked) order.
    pub points: Vec<OptionPoint>,
}

/// A short label: the GPU's short name and the TP degree (`H200 SXM ×2`), or the layout
/// beyond tensor parallelism (`H100 SXM TP8×PP2`, `H100 SXM EP16`).
fn short(row: &goodput_core::shootout::ShootoutRow) -> String {
    format!(
        "{} {}",
        goodput_core::presets::gpu_short_name(&row.gpu),
        row.layout_of().short_words()
    )
}

/// Builds the chart from a comparison; `chosen` is the plan's own row, if compared.
pub fn shootout_chart(r: &ShootoutResult, chosen: Option<usize>) -> ShootoutChart {
    let points = r
        .rows
        .iter()
        .enumerate()
        .filter_map(|(i, row)| {
            let month = row.cost_per_month_usd?;
            let cost = row.cost_per_compliant_request_usd?;
            let tpot = row.tpot_p99_s?;
            let finite = month.is_finite() && cost.is_finite() && tpot.is_finite();
            (row.ranked() && finite).then(|| OptionPoint {
                label: short(row),
                tpot_p99_ms: tpot * 1e3,
                kusd_per_month: month / 1e3,
                usd_per_1k: cost * 1e3,
                best: r.best == Some(i),
                chosen: chosen == Some(i),
            })
        })
        .collect();
    ShootoutChart { points }
}

impl ShootoutChart {
    /// Hover text near `(x, y)` in data coordinates: the nearest option by TPOT.
    pub fn readout(&self, x: f64) -> Option<String> {
        let i = nearest(self.points.iter().map(|p| p.tpot_p99_ms), x)?;
        let p = &self.points[i];
        Some(format!(
            "{}: {} a month, {} per 1k compliant requests, p99 TPOT {:.1} ms{}{}",
            p.label,
            goodput_core::format::usd(p.kusd_per_month * 1e3),
            goodput_core::format::usd(p.usd_per_1k),
            p.tpot_p99_ms,
            if p.best { " (cheapest)" } else { "" },
            if p.chosen { " (the plan's choice)" } else { "" }
        ))
    }
}

/// Top-left corners for labels of `sizes` beside markers at `anchors` (pixels), tried in
/// `order`: above right, below right, above left, below left of the marker, `gap` away.
/// A label goes to the first place that stays inside `bounds` (left, top, right,
/// bottom: the plot, so no label lands on the axes' tick labels) and overlaps neither an
/// earlier label nor another marker; `None` when no place does.
fn place_labels(
    anchors: &[(i32, i32)],
    sizes: &[(i32, i32)],
    order: &[usize],
    gap: i32,
    bounds: (i32, i32, i32, i32),
) -> Vec<Option<(i32, i32)>> {
    type Rect = (i32, i32, i32, i32);
    let overlaps = |a: Rect, b: Rect| a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3;
    let markers: Vec<Rect> = anchors
        .iter()
        .map(|&(x, y)| (x - gap + 1, y - gap + 1, x + gap - 1, y + gap - 1))
        .collect();
    let mut taken: Vec<Rect> = Vec::new();
    let mut out = vec![None; anchors.len()];
    for &i in order {
        let ((x, y), (w, h)) = (anchors[i], sizes[i]);
        let candidates = [
            (x + gap, y - gap - h),
            (x + gap, y + gap),
            (x - gap - w, y - gap - h),
            (x - gap - w, y + gap),
        ];
        let free = candidates.into_iter().find(|&(l, t)| {
            let rect = (l, t, l + w, t + h);
            l >= bounds.0
                && t >= bounds.1
                && rect.2 <= bounds.2
                && rect.3 <= bounds.3
                && !taken.iter().any(|&o| overlaps(rect, o))
                && !markers
                    .iter()
                    .enumerate()
                    .any(|(j, &m)| j != i && overlaps(rect, m))
        });
        if let Some((l, t)) = free {
            taken.push((l, t, l + w, t + h));
            out[i] = Some((l, t));
        }
    }
    out
}

/// Draws the scatter into `area`; returns its frame for hover readouts.
pub fn draw_shootout<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &ShootoutChart,
    theme: &Theme,
) -> Result<Vec<Frame>, DrawingAreaErrorKind<DB::ErrorType>> {
    area.fill(&theme.bg())?;
    if data.points.is_empty() {
        draw_note(area, "No option meets the SLO: nothing to compare.", theme)?;
        return Ok(Vec::new());
    }
    let x_hi = data
        .points
        .iter()
        .map(|p| p.tpot_p99_ms)
        .fold(0.0, f64::max);
    let y_hi = data
        .points
        .iter()
        .map(|p| p.kusd_per_month)
        .fold(0.0, f64::max);
    let x = 0.0..padded(0.0, x_hi.max(1e-9), 0.12).end;
    let y = 0.0..padded(0.0, y_hi.max(1e-9), 0.12).end;
    let mut chart = ChartBuilder::on(area)
        .margin(theme.px(10.0))
        .x_label_area_size(theme.px(34.0))
        .y_label_area_size(theme.px(56.0))
        .build_cartesian_2d(x.clone(), y.clone())?;
    theme
        .style_mesh(&mut chart.configure_mesh())
        .x_labels(6)
        .y_labels(5)
        .x_label_formatter(&|v| tick_label(*v))
        .y_label_formatter(&|v| tick_label(*v))
        .x_desc("p99 TPOT at the planned rate [ms]")
        .y_desc("Fleet for the peak [$k a month]")
        .draw()?;
    let r = theme.px(5.0) as i32;
    let colour = |p: &OptionPoint| {
        if p.best {
            theme.good()
        } else {
            theme.accent()
        }
    };
    chart.draw_series(data.points.iter().map(|p| {
        EmptyElement::at((p.tpot_p99_ms, p.kusd_per_month))
            + Circle::new((0, 0), r, colour(p).filled())
    }))?;
    // Labels where they overlap no other label: the cheapest first, then in rank order.
    // A label with no free place is left out (the table and the readout still name it).
    let style = theme.text(10.0);
    let (bx, by) = area.get_base_pixel();
    let mut anchors = Vec::with_capacity(data.points.len());
    let mut sizes = Vec::with_capacity(data.points.len());
    for p in &data.points {
        let (x, y) = chart.backend_coord(&(p.tpot_p99_ms, p.kusd_per_month));
        anchors.push((x - bx, y - by));
        let (w, h) = area.estimate_text_size(&p.label, &style)?;
        sizes.push((w as i32, h as i32));
    }
    let (px_x, px_y) = chart.plotting_area().get_pixel_range();
    let plot = (
        px_x.start - bx,
        px_y.start - by,
        px_x.end - bx,
        px_y.end - by,
    );
    let order: Vec<usize> = (0..data.points.len())
        .filter(|&i| data.points[i].best)
        .chain((0..data.points.len()).filter(|&i| !data.points[i].best))
        .collect();
    let places = place_labels(&anchors, &sizes, &order, r + 3, plot);
    for (p, at) in data.points.iter().zip(places) {
        if let Some(at) = at {
            area.draw(&Text::new(p.label.clone(), at, style.clone()))?;
        }
    }
    chart.draw_series(data.points.iter().filter(|p| p.chosen).map(|p| {
        Circle::new(
            (p.tpot_p99_ms, p.kusd_per_month),
            r * 2,
            theme.accent2().stroke_width(theme.px(2.0)),
        )
    }))?;
    Ok(vec![Frame {
        px_x,
        px_y,
        x,
        y,
        log_x: false,
        panel: 0,
    }])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::svg_checks::{assert_no_needless_decimals, assert_shows, hex};
    use goodput_core::shootout::ShootoutRow;
    use plotters::backend::SVGBackend;

    #[test]
    fn a_layout_beyond_tensor_parallelism_is_named_on_its_marker() {
        let mut r = row("h100-sxm", 8, Some(1.0), Some(0.02));
        assert_eq!(short(&r), "H100 SXM ×8");
        r.pp = 2;
        assert_eq!(short(&r), "H100 SXM TP8×PP2");
        (r.tp, r.pp, r.ep) = (1, 1, 16);
        assert_eq!(short(&r), "H100 SXM EP16");
    }

    fn row(gpu: &str, tp: u32, cost: Option<f64>, tpot: Option<f64>) -> ShootoutRow {
        ShootoutRow {
            gpu: gpu.into(),
            gpu_name: gpu.into(),
            tp,
            pp: 1,
            ep: 1,
            fits: cost.is_some(),
            reason: None,
            goodput_rps: 1.0,
            replicas_total: 2,
            gpus_total: 2 * tp,
            cost_per_hour_usd: cost.map(|c| c * 1e4),
            cost_per_month_usd: cost.map(|c| c * 1e6),
            cost_per_compliant_request_usd: cost,
            ttft_p99_s: tpot.map(|t| t * 10.0),
            tpot_p99_s: tpot,
            output_tokens_per_s_per_gpu: Some(100.0),
            kv_capacity_tokens: 1e5,
            gpus_needed: Some(1),
            chosen: false,
            constants: Default::default(),
            spec_draft_tokens: 0,
            spec_acceptance: 0.0,
            comm_share: None,
            note: None,
        }
    }

    #[test]
    fn labels_never_overlap_and_the_cheapest_keeps_its_label() {
        type Rect = (i32, i32, i32, i32);
        // Five markers on one spot and one apart; labels 60 × 12 pixels.
        let anchors = [
            (100, 100),
            (101, 100),
            (100, 101),
            (102, 102),
            (99, 99),
            (300, 100),
        ];
        let sizes = [(60, 12); 6];
        let order = [3, 0, 1, 2, 4, 5];
        let at = place_labels(&anchors, &sizes, &order, 8, (0, 0, 400, 300));
        assert!(
            at[3].is_some(),
            "the first in order (the cheapest) is labelled"
        );
        assert!(at[5].is_some(), "a marker on its own is labelled");
        let rects: Vec<Rect> = at
            .iter()
            .zip(sizes)
            .filter_map(|(p, (w, h))| p.map(|(l, t)| (l, t, l + w, t + h)))
            .collect();
        // Four places around a spot: four of the five there get a label, the last none.
        assert_eq!(rects.len(), 5, "{at:?}");
        assert_eq!(at[4], None);
        for (i, a) in rects.iter().enumerate() {
            assert!(
                a.0 >= 0 && a.1 >= 0 && a.2 <= 400 && a.3 <= 300,
                "inside: {a:?}"
            );
            for b in &rects[i + 1..] {
                let overlap = a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3;
                assert!(!overlap, "{a:?} and {b:?} overlap");
            }
        }
        // A marker at the right edge puts its label on its left; one near the plot's
        // left edge (the y axis's tick labels beyond it) keeps its label right of it.
        let at = place_labels(&[(390, 100)], &[(60, 12)], &[0], 8, (0, 0, 400, 300));
        assert_eq!(at, vec![Some((390 - 8 - 60, 100 - 8 - 12))]);
        let at = place_labels(&[(60, 20)], &[(60, 12)], &[0], 8, (50, 10, 400, 300));
        assert_eq!(
            at,
            vec![Some((60 + 8, 20 + 8))],
            "below right: above is outside"
        );
    }

    #[test]
    fn the_cheapest_option_is_drawn_in_the_best_colour_and_the_choice_is_ringed() {
        let r = ShootoutResult {
            rows: vec![
                row("b200", 4, Some(0.0005), Some(0.015)),
                row("h200", 8, Some(0.0008), Some(0.016)),
                row("mi300x", 8, Some(0.0006), Some(0.020)),
                row("l40s", 1, None, None),
            ],
            best: Some(0),
            chosen: None,
        };
        let c = shootout_chart(&r, Some(1));
        assert_eq!(
            c.points.len(),
            3,
            "the option that cannot be sized is left out"
        );
        assert!(c.points[0].best && !c.points[1].best);
        assert!(c.points[1].chosen);
        assert_eq!(c.points[0].usd_per_1k, 0.5);
        assert_eq!(c.points[0].kusd_per_month, 0.5);
        let theme = Theme::default();
        let mut svg = String::new();
        {
            let area = SVGBackend::with_string(&mut svg, (700, 320)).into_drawing_area();
            let frames = draw_shootout(&area, &c, &theme).expect("draws");
            area.present().expect("presents");
            assert_eq!(frames.len(), 1);
        }
        assert_no_needless_decimals(&svg);
        // One marker in the best colour, two in the main colour, one ring around the choice.
        assert_eq!(svg.matches(&hex(theme.good())).count(), 1, "{svg}");
        assert_eq!(svg.matches(&hex(theme.accent())).count(), 2);
        assert_eq!(svg.matches(&hex(theme.accent2())).count(), 1);
        assert_shows(
            &svg,
            &[
                "B200 ×4",
                "H200 SXM ×8",
                "MI300X ×8",
                "p99 TPOT at the planned rate",
                "Fleet for the peak [$k a month]",
            ],
        );
        assert!(c.readout(15.2).expect("readout").contains("cheapest"));
        // Nothing to draw: a note instead.
        let mut empty = String::new();
        let area = SVGBackend::with_string(&mut empty, (300, 200)).into_drawing_area();
        assert!(draw_shootout(&area, &ShootoutChart::default(), &theme)
            .expect("draws")
            .is_empty());
    }
}
