//! A small preview of a clipped lognormal length distribution (share of requests per bin).

use goodput_core::plan::{LengthDist, LengthSpec};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{draw_note, log_ticks, tick_label, Frame, Theme};

/// One bin of the preview.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bin {
    /// Lower edge [tokens].
    pub lo: f64,
    /// Upper edge [tokens].
    pub hi: f64,
    /// Share of requests in the bin (clipped mass lands in the end bins) [0..1].
    pub share: f64,
}

/// The preview of one length distribution.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HistogramChart {
    /// What is shown, e.g. "Prompt".
    pub title: String,
    /// Bins on a log scale from min to max.
    pub bins: Vec<Bin>,
    /// Median [tokens].
    pub median: f64,
    /// 95th percentile [tokens].
    pub p95: f64,
}

/// P(length ≤ x) of a lognormal with this median and sigma.
fn cdf(x: f64, median: f64, sigma: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if sigma <= 0.0 {
        return if x >= median { 1.0 } else { 0.0 };
    }
    0.5 * libm::erfc(-(x.ln() - median.ln()) / (sigma * std::f64::consts::SQRT_2))
}

/// The preview of `spec` with `n` log-spaced bins; `None` for trace-driven lengths.
pub fn build_histogram(title: &str, spec: &LengthSpec, n: usize) -> Option<HistogramChart> {
    let (median, sigma) = match spec.dist {
        LengthDist::LogNormal { median, sigma } => (median, sigma),
        LengthDist::Fixed { tokens } => (tokens as f64, 0.0),
        LengthDist::Trace => return None,
    };
    let lo = (spec.min.max(1)) as f64;
    let hi = (spec.max as f64).max(lo + 1.0);
    if !(median > 0.0 && sigma.is_finite() && sigma >= 0.0) || n == 0 {
        return None;
    }
    let (a, b) = (lo.ln(), (hi + 1.0).ln());
    let edge = |i: usize| (a + (b - a) * i as f64 / n as f64).exp();
    let bins = (0..n)
        .map(|i| {
            let (l, h) = (edge(i), edge(i + 1));
            let low = if i == 0 { 0.0 } else { cdf(l, median, sigma) };
            let high = if i + 1 == n {
                1.0
            } else {
                cdf(h, median, sigma)
            };
            Bin {
                lo: l,
                hi: h,
                share: (high - low).max(0.0),
            }
        })
        .collect();
    Some(HistogramChart {
        title: title.to_string(),
        bins,
        median: median.clamp(lo, hi),
        p95: LengthDist::p95_from_sigma(median, sigma).clamp(lo, hi),
    })
}

/// Draws the bars with the median and p95 marked.
pub fn draw_histogram<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &HistogramChart,
    theme: &Theme,
) -> Result<Vec<Frame>, DrawingAreaErrorKind<DB::ErrorType>> {
    area.fill(&theme.bg())?;
    let (Some(first), Some(last)) = (data.bins.first(), data.bins.last()) else {
        draw_note(area, "No preview", theme)?;
        return Ok(Vec::new());
    };
    let (x_lo, x_hi) = (first.lo, last.hi);
    let y_hi = data
        .bins
        .iter()
        .map(|b| b.share)
        .fold(0.0, f64::max)
        .max(1e-9)
        * 1.15;
    let mut chart = ChartBuilder::on(area)
        .margin(theme.px(6.0))
        // Room for half of the last tick label ("1000") at the right edge.
        .margin_right(theme.px(16.0))
        .caption(
            format!(
                "{}: median {:.0}, p95 {:.0} tokens",
                data.title, data.median, data.p95
            ),
            theme.text(11.0),
        )
        .x_label_area_size(theme.px(22.0))
        .y_label_area_size(theme.px(8.0))
        .build_cartesian_2d(
            (x_lo..x_hi)
                .log_scale()
                .with_key_points(log_ticks(x_lo, x_hi, 5)),
            0.0..y_hi,
        )?;
    theme
        .style_axes(&mut chart.configure_mesh())
        .disable_mesh()
        .disable_y_axis()
        .label_style(theme.text(10.0))
        .x_labels(5)
        .x_label_formatter(&|v| tick_label(v.round()))
        .draw()?;
    chart.draw_series(data.bins.iter().map(|b| {
        Rectangle::new(
            [(b.lo, 0.0), (b.hi, b.share)],
            theme.accent().mix(0.7).filled(),
        )
    }))?;
    for (x, color) in [(data.median, theme.good()), (data.p95, theme.limit())] {
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(x, 0.0), (x, y_hi)],
            color.stroke_width(theme.px(1.5)),
        )))?;
    }
    let (px_x, px_y) = chart.plotting_area().get_pixel_range();
    Ok(vec![Frame {
        px_x,
        px_y,
        x: x_lo..x_hi,
        y: 0.0..y_hi,
        log_x: true,
        panel: 0,
    }])
}
