//! Charts: plain data structs built from core results, and drawing functions generic over
//! the plotters backend (`draw_x<DB: DrawingBackend>(area, &data, &theme)`), so the same
//! chart renders to a canvas in the page and to SVG for exports and tests.

pub mod attainment;
pub mod cache;
pub mod calibration;
pub mod day;
pub mod disagg;
pub mod heatmap;
pub mod histogram;
pub mod latency;
pub mod roofline;
pub mod shootout;
#[cfg(test)]
mod svg_checks;

use std::ops::Range;

use plotters::chart::MeshStyle;
use plotters::coord::ranged1d::Ranged;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Colours and scale of a chart.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Theme {
    /// Backing-store pixels per CSS pixel (the device pixel ratio on canvas, 1 for SVG).
    pub scale: f64,
    /// Dark background.
    pub dark: bool,
}

impl Default for Theme {
    fn default() -> Self {
        Theme {
            scale: 1.0,
            dark: false,
        }
    }
}

impl Theme {
    /// Background.
    pub fn bg(&self) -> RGBColor {
        if self.dark {
            RGBColor(0x16, 0x1b, 0x22)
        } else {
            WHITE
        }
    }
    /// Text and axes.
    pub fn fg(&self) -> RGBColor {
        if self.dark {
            RGBColor(0xd8, 0xde, 0xe6)
        } else {
            RGBColor(0x1f, 0x29, 0x37)
        }
    }
    /// Grid lines.
    pub fn grid(&self) -> RGBColor {
        if self.dark {
            RGBColor(0x30, 0x38, 0x44)
        } else {
            RGBColor(0xe5, 0xe7, 0xeb)
        }
    }
    /// Main series.
    pub fn accent(&self) -> RGBColor {
        if self.dark {
            RGBColor(0x6c, 0xa8, 0xff)
        } else {
            RGBColor(0x1d, 0x4e, 0xd8)
        }
    }
    /// Second series.
    pub fn accent2(&self) -> RGBColor {
        if self.dark {
            RGBColor(0xf5, 0xa5, 0x24)
        } else {
            RGBColor(0xb4, 0x53, 0x09)
        }
    }
    /// Objectives and limits.
    pub fn limit(&self) -> RGBColor {
        if self.dark {
            RGBColor(0xf8, 0x71, 0x71)
        } else {
            RGBColor(0xb9, 0x1c, 0x1c)
        }
    }
    /// The knee / best point.
    pub fn good(&self) -> RGBColor {
        if self.dark {
            RGBColor(0x34, 0xd3, 0x99)
        } else {
            RGBColor(0x04, 0x78, 0x57)
        }
    }
    /// A length in CSS pixels, in backing pixels.
    pub fn px(&self, css: f64) -> u32 {
        (css * self.scale).round().max(1.0) as u32
    }
    /// `px` backing-store pixels in CSS pixels.
    pub fn css_px(&self, px: u32) -> f64 {
        px as f64 / self.scale.max(f64::MIN_POSITIVE)
    }

    /// Whether a chart `width_px` backing-store pixels wide is narrower than
    /// [`NARROW_CHART_CSS_PX`]: side-by-side panels then stack.
    pub fn is_narrow(&self, width_px: u32) -> bool {
        self.css_px(width_px) < NARROW_CHART_CSS_PX
    }

    /// The room a series legend leaves for its mark before the text [backing pixels]
    /// (plotters' default is 30 pixels whatever the pixel ratio).
    pub fn legend_area(&self) -> u32 {
        self.px(LEGEND_AREA_CSS_PX)
    }

    /// How many tick labels fit along `width_px` backing pixels without overlapping: one
    /// per [`TICK_GAP_CSS_PX`], from 2 to [`MAX_TICKS`] (fewer on a phone).
    pub fn ticks(&self, width_px: u32) -> usize {
        (self.css_px(width_px) / TICK_GAP_CSS_PX)
            .floor()
            .clamp(2.0, MAX_TICKS as f64) as usize
    }
    /// A text style of `size` CSS pixels.
    pub fn text(&self, size: f64) -> TextStyle<'static> {
        TextStyle {
            font: ("sans-serif", size * self.scale).into_font(),
            color: self.fg().to_backend_color(),
            pos: Pos::default(),
        }
    }
    /// A text style of `size` CSS pixels, centered.
    pub fn text_centered(&self, size: f64) -> TextStyle<'static> {
        self.text(size).pos(Pos::new(HPos::Center, VPos::Center))
    }
    /// The house axis style: axis lines, 11 px tick labels and 12 px axis descriptions.
    pub fn style_axes<'m, 'a, 'b, X, Y, DB>(
        &self,
        mesh: &'m mut MeshStyle<'a, 'b, X, Y, DB>,
    ) -> &'m mut MeshStyle<'a, 'b, X, Y, DB>
    where
        X: Ranged,
        Y: Ranged,
        DB: DrawingBackend,
    {
        let label: TextStyle<'b> = self.text(11.0);
        let desc: TextStyle<'b> = self.text(12.0);
        mesh.axis_style(self.fg())
            .label_style(label)
            .axis_desc_style(desc)
    }
    /// The house mesh: [`Theme::style_axes`] plus a bold grid line per tick and one faint
    /// line between ticks.
    pub fn style_mesh<'m, 'a, 'b, X, Y, DB>(
        &self,
        mesh: &'m mut MeshStyle<'a, 'b, X, Y, DB>,
    ) -> &'m mut MeshStyle<'a, 'b, X, Y, DB>
    where
        X: Ranged,
        Y: Ranged,
        DB: DrawingBackend,
    {
        self.style_axes(mesh)
            .max_light_lines(1)
            .light_line_style(self.grid().mix(0.5))
            .bold_line_style(self.grid())
    }
}

/// Where a chart's plotting area sits in backing pixels, and the data ranges it shows;
/// maps a pointer position back to data coordinates for hover readouts.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// Horizontal pixel range of the plotting area.
    pub px_x: Range<i32>,
    /// Vertical pixel range of the plotting area (top to bottom).
    pub px_y: Range<i32>,
    /// Data range along x.
    pub x: Range<f64>,
    /// Data range along y.
    pub y: Range<f64>,
    /// Whether x is on a log scale.
    pub log_x: bool,
    /// Which panel this is when a chart has several (0-based).
    pub panel: usize,
}

impl Frame {
    /// The data coordinates under backing pixel `(px, py)`, if inside the plotting area.
    pub fn to_data(&self, px: f64, py: f64) -> Option<(f64, f64)> {
        let (x0, x1) = (self.px_x.start as f64, self.px_x.end as f64);
        let (y0, y1) = (self.px_y.start as f64, self.px_y.end as f64);
        if px < x0 || px > x1 || py < y0 || py > y1 || x1 <= x0 || y1 <= y0 {
            return None;
        }
        let fx = (px - x0) / (x1 - x0);
        let fy = (y1 - py) / (y1 - y0);
        let x = if self.log_x && self.x.start > 0.0 && self.x.end > 0.0 {
            (self.x.start.ln() + fx * (self.x.end.ln() - self.x.start.ln())).exp()
        } else {
            self.x.start + fx * (self.x.end - self.x.start)
        };
        let y = self.y.start + fy * (self.y.end - self.y.start);
        Some((x, y))
    }
}

/// Length of a legend's line mark, and the room before its text [CSS px].
/// Height of an exported chart's heading (its name and the plan's title) [CSS px].
pub const EXPORT_HEADING_CSS_PX: f64 = 40.0;

/// Draws an exported chart's heading on `area`: the chart's name, and below it the
/// title of the plan it belongs to; returns the area under the heading, for the chart.
/// A file saved from the page then says what it shows and for which plan.
pub fn with_heading<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    theme: &Theme,
    chart: &str,
    plan: &str,
) -> DrawingArea<DB, plotters::coord::Shift> {
    let (top, body) = area.split_vertically(theme.px(EXPORT_HEADING_CSS_PX));
    let _ = top.fill(&theme.bg());
    let x = theme.px(8.0) as i32;
    let _ = top.draw_text(chart, &theme.text(14.0), (x, theme.px(4.0) as i32));
    let _ = top.draw_text(plan, &theme.text(11.0), (x, theme.px(23.0) as i32));
    body
}

const LEGEND_MARK_CSS_PX: f64 = 16.0;
const LEGEND_AREA_CSS_PX: f64 = 24.0;

/// A short thick line for a series legend at `(x, y)`; the legend's
/// `legend_area_size(theme.legend_area())` keeps it clear of its text at any pixel ratio.
pub fn legend_mark(x: i32, y: i32, color: RGBColor, theme: &Theme) -> PathElement<(i32, i32)> {
    PathElement::new(
        mark_ends(x, y, theme),
        color.stroke_width(theme.px(LEGEND_MARK_WEIGHT_CSS_PX)),
    )
}

/// A legend mark's weight [CSS px].
const LEGEND_MARK_WEIGHT_CSS_PX: f64 = 2.5;

/// The two ends of a legend mark starting at `(x, y)` [backing pixels].
fn mark_ends(x: i32, y: i32, theme: &Theme) -> Vec<(i32, i32)> {
    vec![(x, y), (x + theme.px(LEGEND_MARK_CSS_PX) as i32, y)]
}

/// A dashed line's look: dash and gap [CSS px] and colour. A dashed series and its
/// legend mark are drawn from the same one, so the mark shows the line's own dashes.
#[derive(Debug, Clone, Copy)]
pub struct Dash {
    /// Dash length [CSS px].
    pub dash: f64,
    /// Gap between dashes [CSS px].
    pub gap: f64,
    /// Colour (with its opacity).
    pub color: RGBAColor,
}

impl Dash {
    /// The dashed series through `points`, 1.5 CSS px wide.
    pub fn series<I: IntoIterator>(
        &self,
        points: I,
        theme: &Theme,
    ) -> DashedLineSeries<I::IntoIter, u32>
    where
        I::IntoIter: Clone,
    {
        DashedLineSeries::new(
            points,
            theme.px(self.dash),
            theme.px(self.gap),
            self.color.stroke_width(theme.px(1.5)),
        )
    }

    /// Its legend mark: as long and as heavy as [`legend_mark`], in the series' dashes.
    pub fn legend(
        &self,
        x: i32,
        y: i32,
        theme: &Theme,
    ) -> plotters::element::DashedPathElement<std::vec::IntoIter<(i32, i32)>, u32> {
        plotters::element::DashedPathElement::new(
            mark_ends(x, y, theme),
            theme.px(self.dash),
            theme.px(self.gap),
            self.color.stroke_width(theme.px(LEGEND_MARK_WEIGHT_CSS_PX)),
        )
    }
}

/// A generous width estimate of `text` at `size_px` in a sans-serif font [px].
pub fn text_width_px(text: &str, size_px: f64) -> i32 {
    (text.chars().count() as f64 * size_px * 0.62).ceil() as i32
}

/// Where a label of `size_css` CSS px text goes beside a vertical line at `line_px`: its
/// anchor's offset from the line and the side it hangs from. It starts a 4 CSS px gap to
/// the right of the line, unless it would then pass `right_px` (the plot's right edge);
/// then it ends that gap to the left. Pixels are backing pixels.
pub fn beside_line(
    line_px: i32,
    label: &str,
    size_css: f64,
    right_px: i32,
    theme: &Theme,
) -> (i32, HPos) {
    let gap = theme.px(4.0) as i32;
    let width = text_width_px(label, size_css * theme.scale);
    if line_px + gap + width > right_px {
        (-gap, HPos::Right)
    } else {
        (gap, HPos::Left)
    }
}

/// Draws a vertical line's label, `size_css` CSS px in `color`, hanging from `at` (a
/// point on the line) on the side [`beside_line`] picks within the chart's plot.
pub fn draw_line_label<DB, X, Y>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    at: (f64, f64),
    label: String,
    size_css: f64,
    color: RGBColor,
    theme: &Theme,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    DB: DrawingBackend,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let line_px = chart.backend_coord(&at).0;
    let right_px = chart.plotting_area().get_pixel_range().0.end;
    let (dx, hpos) = beside_line(line_px, &label, size_css, right_px, theme);
    let style = theme
        .text(size_css)
        .color(&color)
        .pos(Pos::new(hpos, VPos::Top));
    chart.draw_series(std::iter::once(
        EmptyElement::at(at) + Text::new(label, (dx, 0), style),
    ))?;
    Ok(())
}

/// Draws "no data yet" (or another note) in the middle of an area.
pub fn draw_note<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    note: &str,
    theme: &Theme,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let (w, h) = area.dim_in_pixel();
    area.draw(&Text::new(
        note.to_string(),
        ((w / 2) as i32, (h / 2) as i32),
        theme.text_centered(13.0),
    ))
}

/// Room one tick label takes along an axis, gap included [CSS px].
pub const TICK_GAP_CSS_PX: f64 = 64.0;
/// Most labelled ticks on an axis.
pub const MAX_TICKS: usize = 10;

/// The two panels of a chart: left and right halves, or top and bottom on a narrow
/// canvas ([`Theme::is_narrow`]).
pub fn two_panels<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    theme: &Theme,
) -> (
    DrawingArea<DB, plotters::coord::Shift>,
    DrawingArea<DB, plotters::coord::Shift>,
) {
    let (w, h) = area.dim_in_pixel();
    if theme.is_narrow(w) {
        area.split_vertically(h / 2)
    } else {
        area.split_horizontally(w / 2)
    }
}

/// Below this width [CSS px] a chart of two side-by-side panels stacks them, and its
/// canvas takes its narrow height (a phone: each panel then has the whole width).
pub const NARROW_CHART_CSS_PX: f64 = 560.0;

/// Mantissas of log-axis ticks, densest first: each decade's 1..9 steps, thinning down
/// to its powers of ten.
const LOG_MANTISSAS: &[&[f64]] = &[
    &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
    &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0],
    &[1.0, 2.0, 3.0, 5.0, 7.0],
    &[1.0, 2.0, 5.0],
    &[1.0, 3.0],
    &[1.0],
];

/// Tick values for a log axis over `lo..hi` (both > 0): the densest of
/// [`LOG_MANTISSAS`] that gives at most `max` ticks, or round linear steps when the range
/// holds fewer than two (21 to 29). Plotters' own log ticks are powers of ten only, so a
/// range within one decade, as latencies often are, would get no label.
pub fn log_ticks(lo: f64, hi: f64, max: usize) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite() && lo > 0.0 && hi > lo) {
        return Vec::new();
    }
    let round = |v: f64| format!("{v:.6e}").parse::<f64>().unwrap_or(v);
    let in_range = |mantissas: &[f64]| -> Vec<f64> {
        let (first, last) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
        (first..=last)
            .flat_map(|e| mantissas.iter().map(move |m| m * 10f64.powi(e)))
            .map(round)
            .filter(|v| *v >= lo && *v <= hi)
            .collect()
    };
    let max = max.max(2);
    let mut ticks = LOG_MANTISSAS
        .iter()
        .map(|m| in_range(m))
        .find(|t| t.len() <= max)
        .unwrap_or_else(|| in_range(&[1.0]));
    if ticks.len() < 2 {
        let raw = (hi - lo) / (max - 1) as f64;
        let unit = 10f64.powf(raw.log10().floor());
        let step = [1.0, 2.0, 5.0, 10.0]
            .iter()
            .map(|m| m * unit)
            .find(|s| *s >= raw)
            .unwrap_or(10.0 * unit);
        let first = (lo / step).ceil() as i64;
        ticks = (first..)
            .map(|i| round(i as f64 * step))
            .take_while(|v| *v <= hi)
            .take(max)
            .collect();
    }
    if ticks.len() > max {
        // More decades than labels: every n-th power of ten.
        let step = ticks.len().div_ceil(max);
        ticks = ticks.into_iter().step_by(step).collect();
    }
    ticks
}

/// A tick value as a short label: up to 3 decimals, no trailing zeros; from 1,000 up
/// whole and grouped by thousands ("3,000,000", not "3000000").
pub fn tick_label(v: f64) -> String {
    if v.abs() >= 1000.0 && v.abs() < 9.2e18 {
        return goodput_core::format::thousands(v.round() as i64);
    }
    format!("{v:.3}")
        .trim_end_matches('0')
        .trim_end_matches('.')
        .to_string()
}

/// Share of the plot's width and of its height a series legend of a few short entries
/// covers in its corner, on a phone's plot (on a wider one it covers less).
pub const LEGEND_SHARE: (f64, f64) = (0.3, 0.5);

/// The corner whose legend would cover the fewest of `lines` (each a polyline of
/// points given as shares of the plot's width and height from its lower left, 0..1):
/// upper left, unless data lies there and another corner is clearer. Each segment is
/// sampled at a few points between its ends, so a line crossing a corner counts there.
pub fn legend_corner(lines: &[Vec<(f64, f64)>]) -> SeriesLabelPosition {
    let (w, h) = LEGEND_SHARE;
    let corners = [
        (SeriesLabelPosition::UpperLeft, 0.0..w, 1.0 - h..1.0),
        (SeriesLabelPosition::UpperRight, 1.0 - w..1.0, 1.0 - h..1.0),
        (SeriesLabelPosition::LowerRight, 1.0 - w..1.0, 0.0..h),
        (SeriesLabelPosition::LowerLeft, 0.0..w, 0.0..h),
    ];
    let samples: Vec<(f64, f64)> = lines
        .iter()
        .flat_map(|line| {
            line.windows(2)
                .flat_map(|s| {
                    let ((x0, y0), (x1, y1)) = (s[0], s[1]);
                    (0..4).map(move |k| {
                        let t = k as f64 / 4.0;
                        (x0 + t * (x1 - x0), y0 + t * (y1 - y0))
                    })
                })
                .chain(line.last().copied())
        })
        .collect();
    let covered = |xs: &Range<f64>, ys: &Range<f64>| {
        samples
            .iter()
            .filter(|(x, y)| xs.contains(x) && ys.contains(y))
            .count()
    };
    let mut best = (SeriesLabelPosition::UpperLeft, usize::MAX);
    for (corner, xs, ys) in corners {
        let n = covered(&xs, &ys);
        if n < best.1 {
            best = (corner, n);
        }
    }
    best.0
}

/// A range `lo..hi` padded so a flat series still gets a visible axis.
pub fn padded(lo: f64, hi: f64, pad: f64) -> Range<f64> {
    if !(lo.is_finite() && hi.is_finite()) {
        return 0.0..1.0;
    }
    if hi - lo <= f64::EPSILON * hi.abs().max(1.0) {
        let d = if hi == 0.0 { 1.0 } else { hi.abs() * 0.1 };
        return (lo - d)..(hi + d);
    }
    let d = (hi - lo) * pad;
    (lo - d)..(hi + d)
}

/// The x axis of a chart over arrival rates: from 0 when the rates reach down to a
/// third of the highest, else from just below the lowest, so that a search's curve
/// (which starts at 0.6 of its capacity guess unless a lower rate was needed) fills the
/// plot instead of its right third.
pub fn rate_axis(rates: impl Iterator<Item = f64>) -> Range<f64> {
    let (lo, hi) = rates
        .filter(|r| r.is_finite() && *r >= 0.0)
        .fold((f64::INFINITY, 0.0_f64), |(lo, hi), r| {
            (lo.min(r), hi.max(r))
        });
    if hi <= 0.0 {
        return 0.0..1.0;
    }
    if lo <= hi / 3.0 || hi - lo <= 1e-9 * hi {
        return 0.0..hi * 1.05;
    }
    let pad = 0.05 * (hi - lo);
    (lo - pad)..(hi + pad)
}

/// How many x labels to ask plotters for on a rate axis `x` in `area`, whose y labels
/// and margins take about `beside_css` CSS pixels of its width: as many as fit
/// ([`Theme::ticks`]), raised until plotters' own round steps (1, 2 or 5 × 10^k) give
/// two labels or more. On a narrow range they can give one: 16 to 25 req/s in three
/// labels is a lone "20".
pub fn rate_labels<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    beside_css: f64,
    theme: &Theme,
    x: &Range<f64>,
) -> usize {
    let plot_px = area.dim_in_pixel().0.saturating_sub(theme.px(beside_css));
    let fit = theme.ticks(plot_px);
    let axis: plotters::coord::types::RangedCoordf64 = x.clone().into();
    (fit..=MAX_TICKS)
        .find(|&n| axis.key_points(n).len() >= 2)
        .unwrap_or(fit)
}

/// The index of the value in `xs` nearest to `x`.
pub fn nearest(xs: impl Iterator<Item = f64>, x: f64) -> Option<usize> {
    xs.enumerate()
        .filter(|(_, v)| v.is_finite())
        .min_by(|a, b| (a.1 - x).abs().total_cmp(&(b.1 - x).abs()))
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests;
