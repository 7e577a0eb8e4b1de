//! Roofline: step time vs decode batch size and vs prefill chunk size, with the
//! memory-bound and compute-bound regions shaded.

use goodput_core::roofline::StepModel;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{
    draw_note, legend_mark, log_ticks, nearest, tick_label, two_panels, Dash, Frame, Theme,
};

/// One x of a roofline panel.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RooflinePoint {
    /// Decode batch size [sequences] or prefill chunk [tokens].
    pub x: f64,
    /// Whole step time [s].
    pub step_s: f64,
    /// Memory term [s].
    pub memory_s: f64,
    /// Compute term [s].
    pub compute_s: f64,
}

/// Both roofline panels.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RooflineChart {
    /// Step time vs decode batch size (each sequence at the mean context).
    pub decode: Vec<RooflinePoint>,
    /// Step time vs prefill chunk size (no decoders).
    pub prefill: Vec<RooflinePoint>,
    /// The plan's `max_num_seqs`, marked on the decode panel.
    pub max_num_seqs: f64,
    /// The plan's token budget, marked on the prefill panel.
    pub budget_tokens: f64,
}

fn log_grid(lo: f64, hi: f64, n: usize) -> impl Iterator<Item = f64> {
    let (a, b) = (lo.ln(), hi.ln());
    (0..n).map(move |i| (a + (b - a) * i as f64 / (n - 1) as f64).exp().round())
}

/// Builds both panels from the core step model; `mean_context_tokens` is the context one
/// decoding sequence holds on average.
pub fn build_roofline(
    model: &StepModel,
    mean_context_tokens: f64,
    max_num_seqs: u32,
    budget_tokens: u32,
) -> RooflineChart {
    let decode_hi = (max_num_seqs as f64 * 2.0).clamp(16.0, 4096.0);
    let decode = log_grid(1.0, decode_hi, 48)
        .map(|b| {
            let ctx = b * mean_context_tokens;
            RooflinePoint {
                x: b,
                step_s: model.step_time_s(b, ctx),
                memory_s: model.memory_time_s(ctx),
                compute_s: model.compute_time_s(b),
            }
        })
        .collect();
    let prefill_hi = (budget_tokens as f64 * 4.0).clamp(1024.0, 65536.0);
    let prefill = log_grid(1.0, prefill_hi, 48)
        .map(|n| RooflinePoint {
            x: n,
            step_s: model.step_time_s(n, 0.0),
            memory_s: model.memory_time_s(0.0),
            compute_s: model.compute_time_s(n),
        })
        .collect();
    RooflineChart {
        decode,
        prefill,
        max_num_seqs: max_num_seqs as f64,
        budget_tokens: budget_tokens as f64,
    }
}

impl RooflineChart {
    /// Hover text for panel `panel` (0 = decode, 1 = prefill) at x.
    pub fn readout(&self, panel: usize, x: f64) -> Option<String> {
        let pts = if panel == 0 {
            &self.decode
        } else {
            &self.prefill
        };
        let p = pts[nearest(pts.iter().map(|p| p.x), x)?];
        let bound = if p.memory_s >= p.compute_s {
            "memory-bound"
        } else {
            "compute-bound"
        };
        let what = if panel == 0 {
            "sequences"
        } else {
            "prefill tokens"
        };
        Some(format!(
            "{:.0} {what}: step {:.2} ms ({bound})",
            p.x,
            p.step_s * 1e3
        ))
    }
}

/// The narrowest panel [CSS px] whose legend spells out which shading means what.
const LONG_LEGEND_CSS_PX: f64 = 420.0;

fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    pts: &[RooflinePoint],
    title: &str,
    x_desc: &str,
    mark: f64,
    theme: &Theme,
    index: usize,
) -> Result<Frame, DrawingAreaErrorKind<DB::ErrorType>> {
    // A narrow panel has room for short legend entries only.
    let narrow = theme.css_px(area.dim_in_pixel().0) < LONG_LEGEND_CSS_PX;
    let x_lo = pts.first().map(|p| p.x).unwrap_or(1.0).max(1.0);
    let x_hi = pts.last().map(|p| p.x).unwrap_or(10.0).max(x_lo * 2.0);
    let y_hi = pts.iter().map(|p| p.step_s * 1e3).fold(0.0_f64, f64::max) * 1.1;
    let y_hi = if y_hi.is_finite() && y_hi > 0.0 {
        y_hi
    } else {
        1.0
    };
    let mut chart = ChartBuilder::on(area)
        .margin(theme.px(10.0))
        .caption(title, theme.text(12.0))
        .x_label_area_size(theme.px(36.0))
        .y_label_area_size(theme.px(48.0))
        .build_cartesian_2d(
            (x_lo..x_hi).log_scale().with_key_points(log_ticks(
                x_lo,
                x_hi,
                theme.ticks(area.dim_in_pixel().0),
            )),
            0.0..y_hi,
        )?;
    // Shade each interval by which term dominates at its left edge.
    for w in pts.windows(2) {
        let color = if w[0].memory_s >= w[0].compute_s {
            theme.accent()
        } else {
            theme.accent2()
        };
        chart.draw_series(std::iter::once(Rectangle::new(
            [(w[0].x, 0.0), (w[1].x, y_hi)],
            color.mix(0.08).filled(),
        )))?;
    }
    theme
        .style_mesh(&mut chart.configure_mesh())
        .x_desc(x_desc)
        .x_label_formatter(&|v| tick_label(*v))
        .y_label_formatter(&|v| tick_label(*v))
        .y_desc("step time [ms]")
        .draw()?;
    chart
        .draw_series(LineSeries::new(
            pts.iter().map(|p| (p.x, p.step_s * 1e3)),
            theme.fg().stroke_width(theme.px(2.0)),
        ))?
        .label("step time")
        .legend(move |(x, y)| legend_mark(x, y, theme.fg(), theme));
    let term = |color: RGBColor| Dash {
        dash: 5.0,
        gap: 3.0,
        color: color.to_rgba(),
    };
    let (memory, compute) = (term(theme.accent()), term(theme.accent2()));
    chart
        .draw_series(memory.series(pts.iter().map(|p| (p.x, p.memory_s * 1e3)), theme))?
        .label(if narrow {
            "memory (blue: memory-bound)"
        } else {
            "memory term (shaded blue: memory-bound)"
        })
        .legend(move |(x, y)| memory.legend(x, y, theme));
    chart
        .draw_series(
            compute.series(
                pts.iter()
                    .map(|p| (p.x, p.compute_s * 1e3))
                    .filter(|p| p.1 <= y_hi),
                theme,
            ),
        )?
        .label(if narrow {
            "compute (amber: compute-bound)"
        } else {
            "compute term (shaded amber: compute-bound)"
        })
        .legend(move |(x, y)| compute.legend(x, y, theme));
    if mark >= x_lo && mark <= x_hi {
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(mark, 0.0), (mark, y_hi)],
            theme.good().stroke_width(theme.px(1.5)),
        )))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(theme.bg().mix(0.85))
        .border_style(theme.grid())
        .label_font(theme.text(10.5))
        .legend_area_size(theme.legend_area())
        .draw()?;
    let (px_x, px_y) = chart.plotting_area().get_pixel_range();
    Ok(Frame {
        px_x,
        px_y,
        x: x_lo..x_hi,
        y: 0.0..y_hi,
        log_x: true,
        panel: index,
    })
}

/// Draws both panels (decode left, prefill right; decode above prefill on a narrow
/// canvas).
pub fn draw_roofline<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &RooflineChart,
    theme: &Theme,
) -> Result<Vec<Frame>, DrawingAreaErrorKind<DB::ErrorType>> {
    area.fill(&theme.bg())?;
    if data.decode.is_empty() || data.prefill.is_empty() {
        draw_note(area, "No roofline for this plan", theme)?;
        return Ok(Vec::new());
    }
    let (left, right) = two_panels(area, theme);
    let a = panel(
        &left,
        &data.decode,
        "Decode step vs batch size",
        "decoding sequences (log)",
        data.max_num_seqs,
        theme,
        0,
    )?;
    let b = panel(
        &right,
        &data.prefill,
        "Prefill step vs chunk size",
        "prefill tokens in the step (log)",
        data.budget_tokens,
        theme,
        1,
    )?;
    Ok(vec![a, b])
}
