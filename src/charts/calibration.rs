//! The calibration overlay: measured means (markers) against the simulator's predictions
//! with the fitted and the datasheet constants (lines), for TTFT, TPOT and E2E, versus the
//! measured load. Three small panels side by side.

use goodput_core::calibrate::Prediction;
use goodput_core::format::{percent_tenths, MISSING};
use goodput_core::plan::{MeasuredLoad, MeasuredSummary};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{draw_note, nearest, padded, tick_label, Frame, Theme};

/// One metric's panel; latencies in milliseconds.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MetricPanel {
    /// Panel title, with its unit.
    pub title: &'static str,
    /// Measured means: (load, latency [ms]), sorted by load.
    pub measured: Vec<(f64, f64)>,
    /// Predicted with the fitted constants: (load, latency [ms]), sorted by load.
    pub calibrated: Vec<(f64, f64)>,
    /// Predicted with the datasheet constants: (load, latency [ms]), sorted by load.
    pub datasheet: Vec<(f64, f64)>,
}

/// Everything the overlay shows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CalibrationChart {
    /// What the x axis is: the offered rate, or the clients of a closed loop.
    pub x_label: &'static str,
    /// TTFT, TPOT and E2E.
    pub panels: Vec<MetricPanel>,
    /// Held-out mean absolute percentage error over every metric [0..], when known.
    pub held_out: Option<f64>,
}

/// The load a point is drawn at: its offered rate, its clients for a closed loop (or,
/// in a set that mixes both, its achieved rate).
fn load_x(m: &MeasuredSummary, by_rate: bool) -> f64 {
    match m.load {
        MeasuredLoad::Rate { rate_rps, .. } => rate_rps,
        MeasuredLoad::Concurrency { .. } if by_rate => m.achieved_rps,
        MeasuredLoad::Concurrency { concurrency } => f64::from(concurrency),
    }
}

fn series<T>(xs: &[f64], items: &[T], y: impl Fn(&T) -> Option<f64>) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = xs
        .iter()
        .zip(items)
        .filter_map(|(&x, t)| y(t).map(|v| (x, v * 1e3)))
        .filter(|(x, v)| x.is_finite() && v.is_finite())
        .collect();
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

/// Builds the overlay from the measured points and the predictions at the same loads
/// (`None` where a point has no prediction yet).
pub fn calibration_chart(
    points: &[MeasuredSummary],
    calibrated: &[Option<Prediction>],
    datasheet: &[Option<Prediction>],
    held_out: Option<f64>,
) -> CalibrationChart {
    let by_rate = points
        .iter()
        .any(|p| matches!(p.load, MeasuredLoad::Rate { .. }));
    let xs: Vec<f64> = points.iter().map(|p| load_x(p, by_rate)).collect();
    type Measured = fn(&MeasuredSummary) -> Option<f64>;
    type Pick = fn(&Prediction) -> f64;
    let metrics: [(&'static str, Measured, Pick); 3] = [
        ("TTFT mean [ms]", |m| m.ttft_mean_s, |p| p.ttft_s.mean),
        ("TPOT mean [ms]", |m| m.tpot_mean_s, |p| p.tpot_s.mean),
        ("E2E mean [ms]", |m| m.e2e_mean_s, |p| p.e2e_s.mean),
    ];
    let panels = metrics
        .into_iter()
        .map(|(title, meas, pred)| MetricPanel {
            title,
            measured: series(&xs, points, meas),
            calibrated: series(&xs, calibrated, |p| p.as_ref().map(pred)),
            datasheet: series(&xs, datasheet, |p| p.as_ref().map(pred)),
        })
        .collect();
    CalibrationChart {
        x_label: if by_rate { "rate [req/s]" } else { "clients" },
        panels,
        held_out: held_out.filter(|e| e.is_finite()),
    }
}

impl CalibrationChart {
    /// Hover text of panel `panel` near load `x`.
    pub fn readout(&self, panel: usize, x: f64) -> Option<String> {
        let p = self.panels.get(panel)?;
        let i = nearest(p.measured.iter().map(|m| m.0), x)?;
        let (load, measured) = p.measured[i];
        let at = |s: &[(f64, f64)]| {
            s.iter()
                .find(|q| (q.0 - load).abs() <= 1e-9 * load.abs().max(1.0))
                .map(|q| format!("{:.1}", q.1))
                .unwrap_or_else(|| MISSING.into())
        };
        Some(format!(
            "{} at {load:.2}: measured {measured:.1}, calibrated {}, datasheet {}",
            p.title,
            at(&p.calibrated),
            at(&p.datasheet)
        ))
    }
}

/// Draws the overlay into `area`; returns one frame per panel for hover readouts.
pub fn draw_calibration<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &CalibrationChart,
    theme: &Theme,
) -> Result<Vec<Frame>, DrawingAreaErrorKind<DB::ErrorType>> {
    area.fill(&theme.bg())?;
    if data.panels.iter().all(|p| p.measured.is_empty()) {
        draw_note(area, "No measured points to compare with.", theme)?;
        return Ok(Vec::new());
    }
    // Side by side, or one above another on a narrow canvas.
    let n = data.panels.len().max(1);
    let cells = if theme.is_narrow(area.dim_in_pixel().0) {
        area.split_evenly((n, 1))
    } else {
        area.split_evenly((1, n))
    };
    let mut frames = Vec::new();
    for (i, (cell, p)) in cells.iter().zip(&data.panels).enumerate() {
        let all = || p.measured.iter().chain(&p.calibrated).chain(&p.datasheet);
        let x_hi = all().map(|q| q.0).fold(0.0_f64, f64::max);
        let y_hi = all().map(|q| q.1).fold(0.0_f64, f64::max);
        let x = 0.0..padded(0.0, x_hi.max(1e-9), 0.08).end;
        let y = 0.0..padded(0.0, y_hi.max(1e-9), 0.1).end;
        let mut chart = ChartBuilder::on(cell)
            .margin(theme.px(8.0))
            .caption(p.title, theme.text(12.0))
            .x_label_area_size(theme.px(32.0))
            .y_label_area_size(theme.px(44.0))
            .build_cartesian_2d(x.clone(), y.clone())?;
        theme
            .style_mesh(&mut chart.configure_mesh())
            .x_labels(4)
            .y_labels(5)
            .x_label_formatter(&|v| tick_label(*v))
            .y_label_formatter(&|v| tick_label(*v))
            .x_desc(data.x_label)
            .draw()?;
        chart.draw_series(DashedLineSeries::new(
            p.datasheet.iter().copied(),
            theme.px(5.0),
            theme.px(4.0),
            theme.fg().mix(0.45).stroke_width(theme.px(1.5)),
        ))?;
        chart.draw_series(LineSeries::new(
            p.calibrated.iter().copied(),
            theme.accent().stroke_width(theme.px(2.0)),
        ))?;
        let half = theme.px(4.0) as i32;
        chart.draw_series(p.measured.iter().map(|&q| {
            EmptyElement::at(q)
                + Rectangle::new([(-half, -half), (half, half)], theme.accent2().filled())
        }))?;
        if i == 0 {
            if let Some(e) = data.held_out {
                chart.draw_series(std::iter::once(Text::new(
                    format!("held-out error {}", percent_tenths(e)),
                    (x.end * 0.04, y.end * 0.97),
                    theme.text(11.0),
                )))?;
            }
        }
        let (px_x, px_y) = chart.plotting_area().get_pixel_range();
        frames.push(Frame {
            px_x,
            px_y,
            x,
            y,
            log_x: false,
            panel: i,
        });
    }
    Ok(frames)
}

#[cfg(test)]
mod tests {
    use super::*;
    use goodput_core::stats::Summary;
    use plotters::backend::SVGBackend;

    fn summary(rate: f64, ttft: f64) -> MeasuredSummary {
        MeasuredSummary {
            load: MeasuredLoad::Rate {
                rate_rps: rate,
                cv: 1.0,
            },
            achieved_rps: rate * 0.98,
            ttft_mean_s: Some(ttft),
            ttft_p50_s: None,
            ttft_p99_s: None,
            tpot_mean_s: Some(0.012),
            tpot_p50_s: None,
            tpot_p99_s: None,
            e2e_mean_s: None,
            e2e_p50_s: None,
            e2e_p99_s: None,
        }
    }

    fn prediction(ttft: f64) -> Prediction {
        let s = |v: f64| Summary {
            mean: v,
            p50: v,
            p90: v,
            p95: v,
            p99: v,
        };
        Prediction {
            ttft_s: s(ttft),
            tpot_s: s(0.011),
            e2e_s: s(2.0),
            achieved_rps: 1.0,
        }
    }

    #[test]
    fn the_overlay_pairs_each_measured_point_with_its_predictions_in_ms() {
        // Given out of order, as a report might list them; E2E not measured.
        let pts = [summary(4.0, 0.2), summary(1.0, 0.1)];
        let cal = [Some(prediction(0.21)), None];
        let ds = [Some(prediction(0.3)), Some(prediction(0.15))];
        let c = calibration_chart(&pts, &cal, &ds, Some(0.08));
        assert_eq!(c.x_label, "rate [req/s]");
        assert_eq!(c.panels.len(), 3);
        let ttft = &c.panels[0];
        assert_eq!(ttft.measured, vec![(1.0, 100.0), (4.0, 200.0)]);
        assert_eq!(
            ttft.calibrated.len(),
            1,
            "no prediction yet for the 1 req/s point"
        );
        assert!((ttft.calibrated[0].1 - 210.0).abs() < 1e-9);
        assert_eq!(ttft.datasheet[0].0, 1.0, "sorted by load");
        assert!(c.panels[2].measured.is_empty(), "E2E was not measured");
        assert_eq!(c.panels[2].calibrated.len(), 1);
        let r = c.readout(0, 3.5).expect("a readout");
        assert!(
            r.contains("measured 200.0") && r.contains("calibrated 210.0"),
            "{r}"
        );
        // Closed-loop points are drawn by clients.
        let mut closed = summary(0.0, 0.1);
        closed.load = MeasuredLoad::Concurrency { concurrency: 16 };
        let c = calibration_chart(&[closed], &[None], &[None], None);
        assert_eq!((c.x_label, c.panels[0].measured[0].0), ("clients", 16.0));
    }

    #[test]
    fn measured_markers_are_drawn_in_the_measured_colour_in_every_panel() {
        let pts = [summary(1.0, 0.1), summary(2.0, 0.15), summary(4.0, 0.2)];
        let preds: Vec<_> = pts
            .iter()
            .map(|p| Some(prediction(p.ttft_mean_s.unwrap())))
            .collect();
        let c = calibration_chart(&pts, &preds, &preds, Some(0.05));
        let theme = Theme::default();
        let mut svg = String::new();
        let frames = {
            let area = SVGBackend::with_string(&mut svg, (900, 260)).into_drawing_area();
            let f = draw_calibration(&area, &c, &theme).expect("draws");
            area.present().expect("presents");
            f
        };
        assert_eq!(frames.len(), 3);
        let a2 = theme.accent2();
        let fill = format!("#{:02X}{:02X}{:02X}", a2.0, a2.1, a2.2);
        // TTFT and TPOT have 3 markers each; E2E has none measured.
        assert_eq!(svg.matches(&fill).count(), 6, "markers in {fill}");
        assert!(svg.contains("held-out error 5.0%"));
        crate::charts::svg_checks::assert_no_needless_decimals(&svg);
        crate::charts::svg_checks::assert_shows(&svg, &["rate [req/s]", "TTFT mean [ms]"]);
        // Nothing measured: a note, not a failure.
        let mut empty = String::new();
        let area = SVGBackend::with_string(&mut empty, (300, 200)).into_drawing_area();
        let none = draw_calibration(&area, &CalibrationChart::default(), &theme).expect("draws");
        assert!(none.is_empty());
    }
}
