//! Where the first token's time goes in the disaggregated deployment: the simulated mean
//! TTFT of the chosen xPyD split into prefill queueing, prefill, KV transfer, the wait for
//! a decode slot and the first decode step, with the prefill pool as M/D/1 below it and
//! the TTFT objective as a line.

use goodput_core::disagg::DisaggResult;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{draw_line_label, draw_note, legend_mark, text_width_px, tick_label, Frame, Theme};

/// The parts of a TTFT, in the order they happen.
pub const PARTS: [&str; 5] = [
    "prefill queue",
    "prefill",
    "KV transfer",
    "decode wait",
    "first decode step",
];

/// One bar: a label and the length of each part [ms] (as many as it has, from the first).
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// What the bar shows.
    pub label: String,
    /// Milliseconds of each part, in [`PARTS`] order.
    pub parts_ms: Vec<f64>,
}

/// Everything the chart shows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DisaggChart {
    /// The simulated TTFT, then the M/D/1 prefill.
    pub bars: Vec<Bar>,
    /// The TTFT objective [ms].
    pub ttft_slo_ms: Option<f64>,
}

/// The chart of a sizing's answer; empty when no xPyD was found. `ttft_slo_s` is the
/// plan's TTFT objective.
pub fn disagg_chart(r: &DisaggResult, ttft_slo_s: Option<f64>) -> DisaggChart {
    let Some(b) = &r.best else {
        return DisaggChart::default();
    };
    let ms = |s: f64| {
        if s.is_finite() {
            (s * 1e3).max(0.0)
        } else {
            0.0
        }
    };
    let queue = b.prefill_wait_s.mean;
    let prefill = b.prefill_s.mean - queue;
    let transfer = b.transfer_s.mean;
    let wait = b.decode_wait_s.mean;
    let first = b.ttft_s.mean - b.prefill_s.mean - transfer - wait;
    let mut bars = vec![Bar {
        label: format!("{} simulated, mean", b.label()),
        parts_ms: [queue, prefill, transfer, wait, first].map(ms).to_vec(),
    }];
    if let (Some(w), s) = (b.md1.wait_s, b.md1.service_s) {
        bars.push(Bar {
            label: "prefill pool as M/D/1".into(),
            parts_ms: vec![ms(w), ms(s)],
        });
    }
    DisaggChart {
        bars,
        ttft_slo_ms: ttft_slo_s.map(ms),
    }
}

impl DisaggChart {
    /// Hover text at `(x, y)` in data coordinates: the part of the bar under the pointer.
    pub fn readout(&self, x: f64, y: f64) -> Option<String> {
        let row = y.floor();
        if row < 0.0 {
            return None;
        }
        let bar = self.bars.get(row as usize)?;
        let mut start = 0.0;
        for (i, &len) in bar.parts_ms.iter().enumerate() {
            if x >= start && x < start + len {
                return Some(format!(
                    "{}: {} {:.1} ms (from {:.1} to {:.1} ms)",
                    bar.label,
                    PARTS[i],
                    len,
                    start,
                    start + len
                ));
            }
            start += len;
        }
        Some(format!("{}: {:.1} ms in all", bar.label, start))
    }
}

/// The legend: the first row's middle from the top, the height of a row, where an
/// entry's text starts after its mark, the gap after an entry and the font [CSS px].
const LEGEND_TOP_CSS_PX: f64 = 10.0;
const LEGEND_ROW_CSS_PX: f64 = 16.0;
const LEGEND_TEXT_CSS_PX: f64 = 20.0;
const LEGEND_GAP_CSS_PX: f64 = 12.0;
const LEGEND_FONT_CSS_PX: f64 = 10.0;

/// Where each legend entry goes in an area `width` backing pixels wide: (x of its mark,
/// row). Entries wrap to a new row rather than run past the right edge.
fn legend_places(width: u32, theme: &Theme) -> Vec<(i32, usize)> {
    let (start, right) = (theme.px(12.0) as i32, width as i32 - theme.px(4.0) as i32);
    let (mut x, mut row) = (start, 0);
    PARTS
        .iter()
        .map(|name| {
            let w = theme.px(LEGEND_TEXT_CSS_PX) as i32
                + text_width_px(name, LEGEND_FONT_CSS_PX * theme.scale);
            if x > start && x + w > right {
                (x, row) = (start, row + 1);
            }
            let place = (x, row);
            x += w + theme.px(LEGEND_GAP_CSS_PX) as i32;
            place
        })
        .collect()
}

/// Font size of the TTFT objective's label [CSS px].
const OBJECTIVE_LABEL_PX: f64 = 10.0;

/// The colour of part `i`.
fn colour(theme: &Theme, i: usize) -> RGBColor {
    match i {
        0 => theme.accent2(),
        1 => theme.accent(),
        2 => theme.good(),
        3 => theme.limit(),
        _ => theme.fg(),
    }
}

/// Draws the bars into `area`; returns its frame for hover readouts.
pub fn draw_disagg<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &DisaggChart,
    theme: &Theme,
) -> Result<Vec<Frame>, DrawingAreaErrorKind<DB::ErrorType>> {
    area.fill(&theme.bg())?;
    if data.bars.is_empty() {
        draw_note(area, "No xPyD meets the SLO: nothing to break down.", theme)?;
        return Ok(Vec::new());
    }
    let longest = data
        .bars
        .iter()
        .map(|b| b.parts_ms.iter().sum::<f64>())
        .chain(data.ttft_slo_ms)
        .fold(1e-3, f64::max);
    let x = 0.0..longest * 1.12;
    let n = data.bars.len() as f64;
    let y = 0.0..n;
    let legend = legend_places(area.dim_in_pixel().0, theme);
    let rows = legend.iter().map(|p| p.1).max().unwrap_or(0) + 1;
    let mut chart = ChartBuilder::on(area)
        .margin(theme.px(10.0))
        .margin_top(theme.px(LEGEND_TOP_CSS_PX + LEGEND_ROW_CSS_PX * rows as f64))
        .x_label_area_size(theme.px(34.0))
        .y_label_area_size(theme.px(8.0))
        .build_cartesian_2d(x.clone(), y.clone())?;
    theme
        .style_mesh(&mut chart.configure_mesh())
        .disable_y_mesh()
        .y_labels(0)
        .x_labels(6)
        .x_label_formatter(&|v| tick_label(v.round()))
        .x_desc("time from arrival [ms]")
        .draw()?;
    for (row, bar) in data.bars.iter().enumerate() {
        // Bars from the top: row 0 is drawn highest.
        let top = n - row as f64 - 0.4;
        let bottom = n - row as f64 - 0.9;
        let mut start = 0.0;
        for (i, &len) in bar.parts_ms.iter().enumerate() {
            chart.draw_series(std::iter::once(Rectangle::new(
                [(start, bottom), (start + len, top)],
                colour(theme, i).filled(),
            )))?;
            start += len;
        }
        chart.draw_series(std::iter::once(Text::new(
            bar.label.clone(),
            (0.0, n - row as f64 - 0.05),
            theme.text(11.0),
        )))?;
    }
    if let Some(slo) = data.ttft_slo_ms {
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(slo, 0.0), (slo, n)],
            theme.limit().stroke_width(theme.px(2.0)),
        )))?;
        // Beside the line, not on it.
        draw_line_label(
            &mut chart,
            (slo, n),
            "TTFT objective".to_string(),
            OBJECTIVE_LABEL_PX,
            theme.limit(),
            theme,
        )?;
    }
    // The legend across the top, in as many rows as the width needs.
    for (i, (name, &(lx, row))) in PARTS.iter().zip(&legend).enumerate() {
        let ly = theme.px(LEGEND_TOP_CSS_PX + LEGEND_ROW_CSS_PX * row as f64) as i32;
        area.draw(&legend_mark(lx, ly, colour(theme, i), theme))?;
        area.draw(&Text::new(
            name.to_string(),
            (
                lx + theme.px(LEGEND_TEXT_CSS_PX) as i32,
                ly - theme.px(6.0) as i32,
            ),
            theme.text(LEGEND_FONT_CSS_PX),
        ))?;
    }
    let (px_x, px_y) = chart.plotting_area().get_pixel_range();
    // Row i of the readout is bar i: y runs 0 at the top bar down to n at the bottom.
    Ok(vec![Frame {
        px_x,
        px_y,
        x,
        y: n..0.0,
        log_x: false,
        panel: 0,
    }])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::svg_checks::{assert_shows, hex, text_tag};
    use plotters::backend::SVGBackend;

    fn chart() -> DisaggChart {
        DisaggChart {
            bars: vec![
                Bar {
                    label: "2P2D simulated, mean".into(),
                    parts_ms: vec![15.0, 45.0, 4.0, 0.0, 8.0],
                },
                Bar {
                    label: "prefill pool as M/D/1".into(),
                    parts_ms: vec![29.0, 31.0],
                },
            ],
            ttft_slo_ms: Some(500.0),
        }
    }

    /// The legend stays inside the chart: one row on a desktop, wrapped on a phone.
    #[test]
    fn the_legend_wraps_instead_of_running_off_the_edge() {
        for (width, scale, rows) in [(760, 1.0, 1), (330 * 2, 2.0, 2), (290 * 3, 3.0, 3)] {
            let theme = Theme { scale, dark: false };
            let places = legend_places(width, &theme);
            assert_eq!(
                places.iter().map(|p| p.1).max(),
                Some(rows - 1),
                "{width} px"
            );
            for (name, (x, _)) in PARTS.iter().zip(&places) {
                let end = x
                    + theme.px(LEGEND_TEXT_CSS_PX) as i32
                    + text_width_px(name, LEGEND_FONT_CSS_PX * scale);
                assert!(end <= width as i32, "{name} ends at {end} of {width} px");
            }
        }
    }

    /// The TTFT objective's label sits beside its line, inside the plot: to the right of
    /// a line in the middle, to the left of one near the right edge (it started on the
    /// line and ran past the edge).
    #[test]
    fn the_objective_label_sits_beside_its_line() {
        let theme = Theme::default();
        for (slo, left) in [(500.0, true), (40.0, false)] {
            let data = DisaggChart {
                ttft_slo_ms: Some(slo),
                ..chart()
            };
            let mut svg = String::new();
            let frames;
            {
                let area = SVGBackend::with_string(&mut svg, (700, 220)).into_drawing_area();
                frames = draw_disagg(&area, &data, &theme).expect("draws");
                area.present().expect("presents");
            }
            let f = &frames[0];
            let line_px = f.px_x.start as f64 + slo / f.x.end * (f.px_x.end - f.px_x.start) as f64;
            let (tag, x) = text_tag(&svg, "TTFT objective");
            let width = text_width_px("TTFT objective", OBJECTIVE_LABEL_PX) as f64;
            if left {
                assert!(tag.contains("text-anchor=\"end\""), "{tag}");
                assert!(
                    x <= line_px - 2.0 && x - width >= f.px_x.start as f64,
                    "{x} {line_px}"
                );
            } else {
                assert!(!tag.contains("text-anchor=\"end\""), "{tag}");
                assert!(
                    x >= line_px + 2.0 && x + width <= f.px_x.end as f64,
                    "{x} {line_px}"
                );
            }
        }
    }

    #[test]
    fn each_part_is_a_bar_segment_in_its_colour_and_the_readout_names_it() {
        let theme = Theme::default();
        let mut svg = String::new();
        {
            let area = SVGBackend::with_string(&mut svg, (700, 220)).into_drawing_area();
            let frames = draw_disagg(&area, &chart(), &theme).expect("draws");
            area.present().expect("presents");
            assert_eq!(frames.len(), 1);
        }
        // Prefill queue and prefill appear in both bars (plus the legend), the transfer,
        // decode wait and first step in the simulated one only (plus the legend).
        let count = |c: RGBColor| svg.matches(&hex(c)).count();
        assert!(count(theme.accent2()) >= 3, "{svg}");
        assert!(count(theme.accent()) >= 3);
        assert!(count(theme.good()) >= 2);
        assert_shows(
            &svg,
            &[
                "2P2D simulated, mean",
                "prefill pool as M/D/1",
                "TTFT objective",
            ],
        );
        let c = chart();
        assert_eq!(
            c.readout(20.0, 0.5).expect("a part"),
            "2P2D simulated, mean: prefill 45.0 ms (from 15.0 to 60.0 ms)"
        );
        assert!(c
            .readout(10.0, 1.5)
            .expect("a part")
            .contains("M/D/1: prefill queue"));
        assert_eq!(c.readout(10.0, 2.5), None);
        let mut empty = String::new();
        let area = SVGBackend::with_string(&mut empty, (300, 200)).into_drawing_area();
        assert!(draw_disagg(&area, &DisaggChart::default(), &theme)
            .expect("draws")
            .is_empty());
    }
}
