//! The GPU × TP comparison as a scatter: cost per 1,000 compliant requests against the
//! p99 TPOT at the planned rate, one marker per option that can be sized. The cheapest
//! option is drawn in the "best" colour, the plan's own option with a ring around it.

use goodput_core::shootout::ShootoutResult;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{draw_note, nearest, padded, Frame, Theme};

/// One option on the chart.
#[derive(Debug, Clone, PartialEq)]
pub struct OptionPoint {
    /// "H200 ×2": short label drawn beside the marker.
    pub label: String,
    /// p99 TPOT at the planned rate [ms].
    pub tpot_p99_ms: f64,
    /// Cost per 1,000 compliant requests [USD].
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

/// A short label: the GPU id without its memory suffix, and the TP degree.
fn short(gpu: &str, tp: u32) -> String {
    format!("{gpu} ×{tp}")
}

/// Builds the chart from a comparison; `chosen` is the plan's own row, if compared.
pub fn shootout_chart(r: &ShootoutResult, chosen: Option<usize>) -> ShootoutChart {
    let points = r
        .rows
        .iter()
        .enumerate()
        .filter_map(|(i, row)| {
            let cost = row.cost_per_compliant_request_usd?;
            let tpot = row.tpot_p99_s?;
            (row.ranked() && cost.is_finite() && tpot.is_finite()).then(|| OptionPoint {
                label: short(&row.gpu, row.tp),
                tpot_p99_ms: tpot * 1e3,
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
            "{}: ${:.3} per 1k compliant requests, p99 TPOT {:.1} ms{}{}",
            p.label,
            p.usd_per_1k,
            p.tpot_p99_ms,
            if p.best { " (cheapest)" } else { "" },
            if p.chosen { " (the plan's choice)" } else { "" }
        ))
    }
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
    let y_hi = data.points.iter().map(|p| p.usd_per_1k).fold(0.0, f64::max);
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
        .x_desc("p99 TPOT at the planned rate [ms]")
        .y_desc("$ per 1k compliant requests")
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
        EmptyElement::at((p.tpot_p99_ms, p.usd_per_1k))
            + Circle::new((0, 0), r, colour(p).filled())
            + Text::new(p.label.clone(), (r + 3, -r - 3), theme.text(10.0))
    }))?;
    chart.draw_series(data.points.iter().filter(|p| p.chosen).map(|p| {
        Circle::new(
            (p.tpot_p99_ms, p.usd_per_1k),
            r * 2,
            theme.accent2().stroke_width(theme.px(2.0)),
        )
    }))?;
    let (px_x, px_y) = chart.plotting_area().get_pixel_range();
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
    use crate::charts::svg_checks::{assert_shows, hex};
    use goodput_core::shootout::ShootoutRow;
    use plotters::backend::SVGBackend;

    fn row(gpu: &str, tp: u32, cost: Option<f64>, tpot: Option<f64>) -> ShootoutRow {
        ShootoutRow {
            gpu: gpu.into(),
            gpu_name: gpu.into(),
            tp,
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
        }
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
        let theme = Theme::default();
        let mut svg = String::new();
        {
            let area = SVGBackend::with_string(&mut svg, (700, 320)).into_drawing_area();
            let frames = draw_shootout(&area, &c, &theme).expect("draws");
            area.present().expect("presents");
            assert_eq!(frames.len(), 1);
        }
        // One marker in the best colour, two in the main colour, one ring around the choice.
        assert_eq!(svg.matches(&hex(theme.good())).count(), 1, "{svg}");
        assert_eq!(svg.matches(&hex(theme.accent())).count(), 2);
        assert_eq!(svg.matches(&hex(theme.accent2())).count(), 1);
        assert_shows(
            &svg,
            &[
                "b200 ×4",
                "h200 ×8",
                "mi300x ×8",
                "p99 TPOT at the planned rate",
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
