//! Attainment vs arrival rate, with its confidence band, the target line and the knee.

use goodput_core::format::{percent, percent_tenths, rps};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{
    draw_line_label, draw_note, legend_mark, nearest, rate_axis, rate_labels, tick_label, Frame,
    Theme,
};

/// One rate of the curve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CurvePoint {
    /// Offered rate per replica [requests/s].
    pub rate_rps: f64,
    /// Mean attainment over replications (joint or marginal, per the SLO mode) [0..1].
    pub attainment: f64,
    /// Lower edge of the confidence band [0..1].
    pub lo: f64,
    /// Upper edge of the confidence band [0..1].
    pub hi: f64,
}

/// Everything the attainment chart shows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AttainmentChart {
    /// Points, in any order (drawn sorted by rate).
    pub points: Vec<CurvePoint>,
    /// Attainment target [0..1].
    pub target: f64,
    /// The knee: the highest rate meeting the target (goodput) [requests/s].
    pub knee_rps: Option<f64>,
    /// Rows of a measured load-test sweep: (rate [requests/s], attainment [0..1]).
    pub measured: Vec<(f64, f64)>,
    /// Each traffic class's own attainment at the simulated rates, by name (none for a
    /// plan of one class): (rate [requests/s], attainment [0..1]).
    pub classes: Vec<(String, Vec<(f64, f64)>)>,
}

/// Font size of the knee label [CSS px].
const KNEE_LABEL_PX: f64 = 11.0;

impl AttainmentChart {
    fn measured_sorted(&self) -> Vec<(f64, f64)> {
        let mut m: Vec<(f64, f64)> = self
            .measured
            .iter()
            .copied()
            .filter(|(r, a)| r.is_finite() && a.is_finite())
            .collect();
        m.sort_by(|a, b| a.0.total_cmp(&b.0));
        m
    }

    fn sorted(&self) -> Vec<CurvePoint> {
        let mut p: Vec<CurvePoint> = self
            .points
            .iter()
            .copied()
            .filter(|p| p.rate_rps.is_finite() && p.attainment.is_finite())
            .collect();
        p.sort_by(|a, b| a.rate_rps.total_cmp(&b.rate_rps));
        p
    }

    /// Hover text for the simulated point and the measured row nearest rate `x`.
    pub fn readout(&self, x: f64) -> Option<String> {
        let p = self.sorted();
        let simulated = nearest(p.iter().map(|p| p.rate_rps), x).map(|i| {
            let q = p[i];
            format!(
                "{} req/s: {:.1}% of requests meet the SLO (band {:.1}–{:.1}%)",
                rps(q.rate_rps),
                q.attainment * 100.0,
                q.lo * 100.0,
                q.hi * 100.0
            )
        });
        let m = self.measured_sorted();
        let measured = nearest(m.iter().map(|r| r.0), x)
            .map(|i| format!("measured {} req/s: {}", rps(m[i].0), percent_tenths(m[i].1)));
        match (simulated, measured) {
            (Some(s), Some(m)) => Some(format!("{s}; {m}")),
            (s, m) => s.or(m),
        }
    }
}

/// Draws the chart into `area`; returns the plotting frame for hover readouts.
pub fn draw_attainment<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &AttainmentChart,
    theme: &Theme,
) -> Result<Vec<Frame>, DrawingAreaErrorKind<DB::ErrorType>> {
    area.fill(&theme.bg())?;
    let pts = data.sorted();
    let measured = data.measured_sorted();
    if pts.is_empty() && measured.is_empty() {
        draw_note(area, "Waiting for the first simulated rates…", theme)?;
        return Ok(Vec::new());
    }
    let x = rate_axis(
        pts.iter()
            .map(|p| p.rate_rps)
            .chain(measured.iter().map(|m| m.0)),
    );
    // The y labels (48) and the margins (2 × 10) beside the plot.
    let x_labels = rate_labels(area, 68.0, theme, &x);
    let (x_min, x_max) = (x.start, x.end);
    let mut chart = ChartBuilder::on(area)
        .margin(theme.px(10.0))
        .x_label_area_size(theme.px(36.0))
        .y_label_area_size(theme.px(48.0))
        .build_cartesian_2d(x.clone(), 0.0..1.02)?;
    theme
        .style_mesh(&mut chart.configure_mesh())
        .x_labels(x_labels)
        .x_label_formatter(&|v| tick_label(*v))
        .x_desc("arrival rate per replica [req/s]")
        .y_desc("attainment [%]")
        .y_label_formatter(&|v| format!("{:.0}", v * 100.0))
        .draw()?;
    let band: Vec<(f64, f64)> = pts
        .iter()
        .map(|p| (p.rate_rps, p.hi))
        .chain(pts.iter().rev().map(|p| (p.rate_rps, p.lo)))
        .collect();
    chart.draw_series(std::iter::once(Polygon::new(
        band,
        theme.accent().mix(0.2).filled(),
    )))?;
    let target = data.target;
    chart.draw_series(DashedLineSeries::new(
        vec![(x_min, target), (x_max, target)],
        theme.px(6.0),
        theme.px(4.0),
        theme.limit().stroke_width(theme.px(1.5)),
    ))?;
    chart.draw_series(std::iter::once(Text::new(
        format!("target {}", percent(target)),
        (x_min + (x_max - x_min) * 0.01, (target - 0.05).max(0.0)),
        theme.text(11.0).color(&theme.limit()),
    )))?;
    let theme = *theme;
    let line = chart.draw_series(LineSeries::new(
        pts.iter().map(|p| (p.rate_rps, p.attainment)),
        theme.accent().stroke_width(theme.px(2.0)),
    ))?;
    let classes: Vec<&(String, Vec<(f64, f64)>)> =
        data.classes.iter().filter(|(_, l)| !l.is_empty()).collect();
    if !pts.is_empty() && (!measured.is_empty() || !classes.is_empty()) {
        let name = if classes.is_empty() {
            "simulated"
        } else {
            "the mix (worst class)"
        };
        line.label(name)
            .legend(move |(x, y)| legend_mark(x, y, theme.accent(), &theme));
    }
    // Each class dashed in a colour of its own, so the binding one reads at a glance.
    for (k, (name, l)) in classes.iter().enumerate() {
        let color = [theme.accent2(), theme.good(), theme.fg(), theme.limit()][k % 4];
        let dash = super::Dash {
            dash: 5.0,
            gap: 3.0,
            color: color.mix(0.9),
        };
        let mut sorted = l.clone();
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
        chart
            .draw_series(dash.series(sorted, &theme))?
            .label(name.clone())
            .legend(move |(x, y)| dash.legend(x, y, &theme));
    }
    chart.draw_series(pts.iter().map(|p| {
        Circle::new(
            (p.rate_rps, p.attainment),
            theme.px(2.5),
            theme.accent().filled(),
        )
    }))?;
    if !measured.is_empty() || !classes.is_empty() {
        let half = theme.px(4.0) as i32;
        if !measured.is_empty() {
            chart
                .draw_series(LineSeries::new(
                    measured.iter().copied(),
                    theme.accent2().stroke_width(theme.px(1.5)),
                ))?
                .label("measured")
                .legend(move |(x, y)| legend_mark(x, y, theme.accent2(), &theme));
            chart.draw_series(measured.iter().map(|&(r, a)| {
                EmptyElement::at((r, a))
                    + Rectangle::new([(-half, -half), (half, half)], theme.accent2().filled())
            }))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::MiddleLeft)
            .background_style(theme.bg().mix(0.85))
            .border_style(theme.grid())
            .label_font(theme.text(11.0))
            .legend_area_size(theme.legend_area())
            .draw()?;
    }
    let (px_x, px_y) = chart.plotting_area().get_pixel_range();
    if let Some(knee) = data.knee_rps.filter(|k| k.is_finite() && *k > 0.0) {
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(knee, 0.0), (knee, 1.02)],
            theme.good().stroke_width(theme.px(1.5)),
        )))?;
        draw_line_label(
            &mut chart,
            (knee, 0.12),
            format!("knee {} req/s", rps(knee)),
            KNEE_LABEL_PX,
            theme.good(),
            &theme,
        )?;
    }
    Ok(vec![Frame {
        px_x,
        px_y,
        x,
        y: 0.0..1.02,
        log_x: false,
        panel: 0,
    }])
}
