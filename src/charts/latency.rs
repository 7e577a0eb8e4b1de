//! TTFT and TPOT percentiles vs arrival rate, with the SLO lines (two panels, log scale).

use goodput_core::format::rps;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{
    draw_note, legend_corner, legend_mark, log_ticks, nearest, rate_axis, rate_labels, tick_label,
    two_panels, Dash, Frame, Theme,
};

/// Latency percentiles at one rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencyPoint {
    /// Offered rate per replica [requests/s].
    pub rate_rps: f64,
    /// Median time to first token [s].
    pub ttft_p50_s: f64,
    /// 99th percentile time to first token [s].
    pub ttft_p99_s: f64,
    /// Median time per output token [s].
    pub tpot_p50_s: f64,
    /// 99th percentile time per output token [s].
    pub tpot_p99_s: f64,
}

/// Everything the latency chart shows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LatencyChart {
    /// Points, in any order.
    pub points: Vec<LatencyPoint>,
    /// TTFT objective [s].
    pub ttft_slo_s: Option<f64>,
    /// TPOT objective [s].
    pub tpot_slo_s: Option<f64>,
}

impl LatencyChart {
    fn sorted(&self) -> Vec<LatencyPoint> {
        let mut p = self.points.clone();
        p.retain(|p| p.rate_rps.is_finite());
        p.sort_by(|a, b| a.rate_rps.total_cmp(&b.rate_rps));
        p
    }

    /// Hover text for the point nearest rate `x` in panel `panel` (0 = TTFT, 1 = TPOT).
    pub fn readout(&self, panel: usize, x: f64) -> Option<String> {
        let p = self.sorted();
        let q = p[nearest(p.iter().map(|p| p.rate_rps), x)?];
        Some(if panel == 0 {
            format!(
                "{} req/s: TTFT p50 {:.0} ms, p99 {:.0} ms",
                rps(q.rate_rps),
                q.ttft_p50_s * 1e3,
                q.ttft_p99_s * 1e3
            )
        } else {
            format!(
                "{} req/s: TPOT p50 {:.1} ms, p99 {:.1} ms",
                rps(q.rate_rps),
                q.tpot_p50_s * 1e3,
                q.tpot_p99_s * 1e3
            )
        })
    }
}

type Pick = fn(&LatencyPoint) -> f64;

#[allow(clippy::too_many_arguments)]
fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    pts: &[LatencyPoint],
    title: &str,
    p50: Pick,
    p99: Pick,
    slo_s: Option<f64>,
    theme: &Theme,
    index: usize,
) -> Result<Frame, DrawingAreaErrorKind<DB::ErrorType>> {
    let ms = |v: f64| (v * 1e3).max(1e-3);
    // The y labels (52) and the margins (2 × 10) beside the plot.
    let x = rate_axis(pts.iter().map(|p| p.rate_rps));
    let x_labels = rate_labels(area, 72.0, theme, &x);
    let values = pts
        .iter()
        .flat_map(|p| [ms(p50(p)), ms(p99(p))])
        .chain(slo_s.map(ms))
        .filter(|v| v.is_finite());
    let (lo, hi) = values.fold((f64::INFINITY, 0.0_f64), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    let (lo, hi) = if lo.is_finite() && hi > lo {
        (lo * 0.7, hi * 1.4)
    } else {
        (1.0, 1000.0)
    };
    let mut chart = ChartBuilder::on(area)
        .margin(theme.px(10.0))
        .caption(title, theme.text(12.0))
        .x_label_area_size(theme.px(36.0))
        .y_label_area_size(theme.px(52.0))
        .build_cartesian_2d(
            x.clone(),
            (lo..hi).log_scale().with_key_points(log_ticks(lo, hi, 6)),
        )?;
    let plot_px = chart.plotting_area().dim_in_pixel().0;
    // Two panels side by side on a phone: a short axis title, or the two would collide.
    let x_desc = if (plot_px as f64) < 220.0 * theme.scale {
        "rate [req/s]"
    } else {
        "arrival rate per replica [req/s]"
    };
    theme
        .style_mesh(&mut chart.configure_mesh())
        .x_desc(x_desc)
        .y_desc("latency [ms]")
        .x_labels(x_labels)
        .x_label_formatter(&|v| tick_label(*v))
        .y_labels(6)
        .y_label_formatter(&|v| tick_label(*v))
        .draw()?;
    chart
        .draw_series(LineSeries::new(
            pts.iter().map(|p| (p.rate_rps, ms(p50(p)))),
            theme.accent().stroke_width(theme.px(2.0)),
        ))?
        .label("p50")
        .legend(move |(x, y)| legend_mark(x, y, theme.accent(), theme));
    chart
        .draw_series(LineSeries::new(
            pts.iter().map(|p| (p.rate_rps, ms(p99(p)))),
            theme.accent2().stroke_width(theme.px(2.0)),
        ))?
        .label("p99")
        .legend(move |(x, y)| legend_mark(x, y, theme.accent2(), theme));
    if let Some(slo) = slo_s {
        let dash = Dash {
            dash: 6.0,
            gap: 4.0,
            color: theme.limit().to_rgba(),
        };
        chart
            .draw_series(dash.series(vec![(x.start, ms(slo)), (x.end, ms(slo))], theme))?
            .label("SLO")
            .legend(move |(x, y)| dash.legend(x, y, theme));
    }
    // The legend in the corner the curves and the objective leave clearest.
    let (x0, x1) = (x.start, x.end);
    let (l0, l1) = (lo.ln(), hi.ln());
    let at = move |r: f64, v: f64| ((r - x0) / (x1 - x0), (v.ln() - l0) / (l1 - l0));
    let mut lines: Vec<Vec<(f64, f64)>> = [p50, p99]
        .iter()
        .map(|f| pts.iter().map(|p| at(p.rate_rps, ms(f(p)))).collect())
        .collect();
    if let Some(slo) = slo_s {
        lines.push(vec![at(x0, ms(slo)), at(x1, ms(slo))]);
    }
    chart
        .configure_series_labels()
        .position(legend_corner(&lines))
        .background_style(theme.bg().mix(0.85))
        .border_style(theme.grid())
        .label_font(theme.text(11.0))
        .legend_area_size(theme.legend_area())
        .draw()?;
    let (px_x, px_y) = chart.plotting_area().get_pixel_range();
    Ok(Frame {
        px_x,
        px_y,
        x,
        y: lo..hi,
        log_x: false,
        panel: index,
    })
}

/// Draws both panels (TTFT left, TPOT right; TTFT above TPOT on a narrow canvas) into
/// `area`.
pub fn draw_latency<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &LatencyChart,
    theme: &Theme,
) -> Result<Vec<Frame>, DrawingAreaErrorKind<DB::ErrorType>> {
    area.fill(&theme.bg())?;
    let pts = data.sorted();
    if pts.is_empty() {
        draw_note(area, "Waiting for the first simulated rates…", theme)?;
        return Ok(Vec::new());
    }
    let (left, right) = two_panels(area, theme);
    let a = panel(
        &left,
        &pts,
        "Time to first token",
        |p| p.ttft_p50_s,
        |p| p.ttft_p99_s,
        data.ttft_slo_s,
        theme,
        0,
    )?;
    let b = panel(
        &right,
        &pts,
        "Time per output token",
        |p| p.tpot_p50_s,
        |p| p.tpot_p99_s,
        data.tpot_slo_s,
        theme,
        1,
    )?;
    Ok(vec![a, b])
}
