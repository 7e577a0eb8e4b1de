//! Heatmap of the knob sweep: goodput over `max_num_seqs` × `max_num_batched_tokens`.

use goodput_core::format::rps;
use goodput_core::search::{Knobs, PartialSweep, SweepResult};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{draw_note, Frame, Theme};

/// The knob sweep grid.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HeatmapChart {
    /// `max_num_seqs` of each row.
    pub seqs: Vec<u32>,
    /// `max_num_batched_tokens` of each column (0 = chunked prefill off).
    pub budgets: Vec<u32>,
    /// Goodput of each cell, row-major `[row][col]` [requests/s]; `None` = not done yet.
    pub goodput_rps: Vec<Vec<Option<f64>>>,
    /// `(row, col)` of the best cell; `None` while the sweep runs.
    pub best: Option<(usize, usize)>,
    /// The engine settings each cell simulated, row-major; `None` = not done yet.
    pub knobs: Vec<Vec<Option<Knobs>>>,
}

/// A `rows` × `cols` grid filled row-major from `cells`.
fn grid(
    rows: usize,
    cols: usize,
    cells: impl Iterator<Item = Option<f64>>,
) -> Vec<Vec<Option<f64>>> {
    let mut grid = vec![vec![None; cols]; rows];
    for (i, v) in cells.enumerate() {
        if let Some(cell) = grid
            .get_mut(i / cols.max(1))
            .and_then(|r| r.get_mut(i % cols.max(1)))
        {
            *cell = v;
        }
    }
    grid
}

/// A `rows` × `cols` grid of cell settings filled row-major from `cells`.
fn knob_grid(
    rows: usize,
    cols: usize,
    cells: impl Iterator<Item = Option<Knobs>>,
) -> Vec<Vec<Option<Knobs>>> {
    let mut grid = vec![vec![None; cols]; rows];
    for (i, k) in cells.enumerate() {
        if let Some(cell) = grid
            .get_mut(i / cols.max(1))
            .and_then(|r| r.get_mut(i % cols.max(1)))
        {
            *cell = k;
        }
    }
    grid
}

/// The budget axis label: the token budget, or `off` (chunked prefill off).
pub fn budget_label(b: u32) -> String {
    if b == 0 {
        "off".into()
    } else {
        b.to_string()
    }
}

impl HeatmapChart {
    /// The finished sweep, with its best cell.
    pub fn from_sweep(s: &SweepResult) -> HeatmapChart {
        let cols = s.batched_tokens.len().max(1);
        HeatmapChart {
            seqs: s.max_num_seqs.clone(),
            budgets: s.batched_tokens.clone(),
            goodput_rps: grid(
                s.max_num_seqs.len(),
                s.batched_tokens.len(),
                s.cells.iter().map(|c| Some(c.goodput_rps)),
            ),
            best: (!s.cells.is_empty()).then(|| (s.best / cols, s.best % cols)),
            knobs: knob_grid(
                s.max_num_seqs.len(),
                s.batched_tokens.len(),
                s.cells.iter().map(|c| Some(c.knobs)),
            ),
        }
    }

    /// A running sweep: the cells finished so far, no best cell yet.
    pub fn from_partial(p: &PartialSweep) -> HeatmapChart {
        HeatmapChart {
            seqs: p.max_num_seqs.clone(),
            budgets: p.batched_tokens.clone(),
            goodput_rps: grid(
                p.max_num_seqs.len(),
                p.batched_tokens.len(),
                p.cells.iter().map(|c| c.map(|c| c.goodput_rps)),
            ),
            best: None,
            knobs: knob_grid(
                p.max_num_seqs.len(),
                p.batched_tokens.len(),
                p.cells.iter().map(|c| c.map(|c| c.knobs)),
            ),
        }
    }

    /// Hover text for the cell at data coordinates `(x, y)` (column, row).
    pub fn readout(&self, x: f64, y: f64) -> Option<String> {
        if x < 0.0 || y < 0.0 {
            return None;
        }
        let (c, r) = (x as usize, y as usize);
        let seqs = *self.seqs.get(r)?;
        let budget = *self.budgets.get(c)?;
        let v = self.goodput_rps.get(r)?.get(c)?;
        Some(match v {
            Some(g) => format!(
                "max_num_seqs {seqs}, max_num_batched_tokens {}: goodput {} req/s",
                budget_label(budget),
                rps(*g)
            ),
            None => format!(
                "max_num_seqs {seqs}, budget {}: not simulated yet",
                budget_label(budget)
            ),
        })
    }

    /// Text for the cell at `(row, col)`, for its button and the readout.
    pub fn cell_text(&self, r: usize, c: usize) -> String {
        self.readout(c as f64 + 0.5, r as f64 + 0.5)
            .unwrap_or_default()
    }

    fn max(&self) -> f64 {
        self.goodput_rps
            .iter()
            .flatten()
            .flatten()
            .copied()
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max)
    }
}

/// A sequential colour from pale to the accent for `t` in 0..=1.
fn ramp(theme: &Theme, t: f64) -> RGBColor {
    let t = t.clamp(0.0, 1.0);
    let (a, b) = if theme.dark {
        ((0x22, 0x2a, 0x36), (0x6c, 0xa8, 0xff))
    } else {
        ((0xef, 0xf4, 0xff), (0x1d, 0x4e, 0xd8))
    };
    let mix = |x: u8, y: u8| (x as f64 + (y as f64 - x as f64) * t).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// Draws the grid with a value in each cell and the best cell outlined.
pub fn draw_heatmap<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &HeatmapChart,
    theme: &Theme,
) -> Result<Vec<Frame>, DrawingAreaErrorKind<DB::ErrorType>> {
    area.fill(&theme.bg())?;
    let (cols, rows) = (data.budgets.len(), data.seqs.len());
    if cols == 0 || rows == 0 {
        draw_note(area, "The knob sweep runs after the goodput search…", theme)?;
        return Ok(Vec::new());
    }
    let max = data.max();
    let mut chart = ChartBuilder::on(area)
        .margin(theme.px(10.0))
        .x_label_area_size(theme.px(36.0))
        .y_label_area_size(theme.px(56.0))
        .build_cartesian_2d(0.0..cols as f64, 0.0..rows as f64)?;
    let budgets = data.budgets.clone();
    let seqs = data.seqs.clone();
    theme
        .style_axes(&mut chart.configure_mesh())
        .disable_mesh()
        .x_labels(cols * 2 + 1)
        .y_labels(rows * 2 + 1)
        .x_label_formatter(&|v| {
            let i = v.floor() as usize;
            if (v - i as f64 - 0.5).abs() < 1e-6 {
                budgets.get(i).map(|b| budget_label(*b)).unwrap_or_default()
            } else {
                String::new()
            }
        })
        .y_label_formatter(&|v| {
            let i = v.floor() as usize;
            if (v - i as f64 - 0.5).abs() < 1e-6 {
                seqs.get(i).map(|s| s.to_string()).unwrap_or_default()
            } else {
                String::new()
            }
        })
        .x_desc("max_num_batched_tokens [tokens]")
        .y_desc("max_num_seqs")
        .draw()?;
    for (r, row) in data.goodput_rps.iter().enumerate() {
        for (c, v) in row.iter().enumerate() {
            let (x, y) = (c as f64, r as f64);
            let fill = match v {
                Some(g) if max > 0.0 => ramp(theme, g / max),
                _ => theme.grid(),
            };
            chart.draw_series(std::iter::once(Rectangle::new(
                [(x + 0.02, y + 0.02), (x + 0.98, y + 0.98)],
                fill.filled(),
            )))?;
            let (label, color) = match v {
                Some(g) => {
                    let light = max > 0.0 && g / max > 0.55;
                    let color = if light ^ theme.dark {
                        WHITE
                    } else {
                        theme.fg()
                    };
                    (format!("{g:.1}"), color.to_rgba())
                }
                // Still searching: a muted ellipsis on the neutral fill.
                None => ("…".to_string(), theme.fg().mix(0.45)),
            };
            chart.draw_series(std::iter::once(Text::new(
                label,
                (x + 0.5, y + 0.5),
                theme.text_centered(11.0).color(&color),
            )))?;
        }
    }
    if let Some((r, c)) = data.best {
        chart.draw_series(std::iter::once(Rectangle::new(
            [(c as f64, r as f64), (c as f64 + 1.0, r as f64 + 1.0)],
            theme.good().stroke_width(theme.px(3.0)),
        )))?;
    }
    let (px_x, px_y) = chart.plotting_area().get_pixel_range();
    Ok(vec![Frame {
        px_x,
        px_y,
        x: 0.0..cols as f64,
        y: 0.0..rows as f64,
        log_x: false,
        panel: 0,
    }])
}
