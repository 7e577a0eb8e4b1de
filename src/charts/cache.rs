//! The prefix cache over one run at the planned rate per replica: KV memory over
//! simulated time stacked as the running requests' own (private), the cached prefixes
//! they share (held) and the cached tokens nobody holds (idle, evicted first), with the
//! replica's KV capacity as a line (top); the share of prompt tokens found cached
//! between samples, with the whole run's (bottom).

use goodput_core::format::{figure, percent_tenths, percent_whole, rps, thousands};
use goodput_core::sim::CacheSample;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{draw_note, nearest, rate_labels, text_width_px, tick_label, Dash, Frame, Theme};

/// Everything the chart shows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CacheChart {
    /// The samples, in time order.
    pub samples: Vec<CacheSample>,
    /// KV-cache capacity of one replica [tokens]; `None` when KV memory is not modelled.
    pub kv_capacity_tokens: Option<f64>,
    /// Share of the prompt tokens found cached over the whole run [0..1].
    pub hit_rate: f64,
    /// The rate per replica simulated [requests/s].
    pub rate_rps: f64,
    /// Replicas simulated together (the samples are the first one's).
    pub replicas: u32,
}

/// The highest of each layer over the run [tokens].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CachePeaks {
    /// The running requests' own tokens.
    pub private_tokens: f64,
    /// Cached tokens a running request holds.
    pub shared_tokens: f64,
    /// Cached tokens nobody holds.
    pub idle_tokens: f64,
    /// All three at once.
    pub used_tokens: f64,
}

/// A layer of the stack: its words and its colour.
#[derive(Debug, Clone, Copy)]
struct Layer {
    words: &'static str,
    color: RGBColor,
    value: fn(&CacheSample) -> f64,
}

/// `c` at opacity `a` over `bg`, as one opaque colour (the layers' fills: a stack of
/// opaque bands whose colours tests can find in the canvas).
fn blend(c: RGBColor, bg: RGBColor, a: f64) -> RGBColor {
    let mix = |x: u8, y: u8| (a * x as f64 + (1.0 - a) * y as f64).round() as u8;
    RGBColor(mix(c.0, bg.0), mix(c.1, bg.1), mix(c.2, bg.2))
}

/// The fill of the private layer.
pub fn private_fill(theme: &Theme) -> RGBColor {
    blend(theme.accent(), theme.bg(), 0.55)
}

/// The fill of the shared (held) layer.
pub fn shared_fill(theme: &Theme) -> RGBColor {
    blend(theme.good(), theme.bg(), 0.55)
}

/// The fill of the idle cached layer.
pub fn idle_fill(theme: &Theme) -> RGBColor {
    blend(theme.accent2(), theme.bg(), 0.35)
}

fn layers(theme: &Theme) -> [Layer; 3] {
    [
        Layer {
            words: "private to running requests",
            color: private_fill(theme),
            value: |s| s.private_tokens,
        },
        Layer {
            words: "shared prefixes in use",
            color: shared_fill(theme),
            value: |s| s.shared_tokens,
        },
        Layer {
            words: "idle cached (evicted first)",
            color: idle_fill(theme),
            value: |s| s.idle_tokens,
        },
    ]
}

/// A tick of the tokens axis, short: "800", "5k", "400k", "1.2M".
pub fn tokens_tick(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{}M", tick_label(v / 1e6))
    } else if a >= 1e4 {
        format!("{}k", tick_label(v / 1e3))
    } else {
        tick_label(v)
    }
}

/// A value as a count of tokens ("12,288"); 0 for one that is not a number.
fn tokens(v: f64) -> String {
    thousands(if v.is_finite() { v.round() as i64 } else { 0 })
}

impl CacheChart {
    /// The highest of each layer, and of the three together.
    pub fn peaks(&self) -> CachePeaks {
        self.samples
            .iter()
            .fold(CachePeaks::default(), |p, s| CachePeaks {
                private_tokens: p.private_tokens.max(s.private_tokens),
                shared_tokens: p.shared_tokens.max(s.shared_tokens),
                idle_tokens: p.idle_tokens.max(s.idle_tokens),
                used_tokens: p
                    .used_tokens
                    .max(s.private_tokens + s.shared_tokens + s.idle_tokens),
            })
    }

    /// The end of the run [s].
    pub fn t_end_s(&self) -> f64 {
        self.samples.last().map_or(0.0, |s| s.t_s)
    }

    /// The chart in one sentence, for readers who cannot see it (and tests).
    pub fn summary(&self) -> String {
        if self.samples.is_empty() {
            return "The run held no prefix cache to chart.".into();
        }
        let p = self.peaks();
        let whose = if self.replicas > 1 {
            format!("The first of {} replicas behind the router", self.replicas)
        } else {
            "One replica".into()
        };
        let of = self
            .kv_capacity_tokens
            .map(|c| format!(" of its {}", tokens(c)))
            .unwrap_or_default();
        format!(
            "{whose} at {} req/s, over {} s of simulated time: KV memory peaks at {} tokens{of}; shared prefixes in use reach {}, the idle cache {}; {} of prompt tokens found cached over the run.",
            rps(self.rate_rps),
            figure(self.t_end_s()),
            tokens(p.used_tokens),
            tokens(p.shared_tokens),
            tokens(p.idle_tokens),
            percent_tenths(self.hit_rate),
        )
    }

    /// Hover text at time `x` [s]: the sample nearest to it.
    pub fn readout(&self, _panel: usize, x: f64) -> Option<String> {
        let s = self.samples[nearest(self.samples.iter().map(|s| s.t_s), x)?];
        let of = self
            .kv_capacity_tokens
            .map(|c| format!(" of {}", tokens(c)))
            .unwrap_or_default();
        let hits = if s.hit_rate.is_finite() {
            format!(
                "; {} of prompt tokens found cached since the sample before",
                percent_whole(s.hit_rate)
            )
        } else {
            "; no prompt looked up since the sample before".into()
        };
        Some(format!(
            "{} s: {} tokens private, {} shared, {} idle ({} in all{of}){hits}",
            tick_label(s.t_s),
            tokens(s.private_tokens),
            tokens(s.shared_tokens),
            tokens(s.idle_tokens),
            tokens(s.private_tokens + s.shared_tokens + s.idle_tokens),
        ))
    }
}

/// The hit-rate line's points (time [s], hit rate [%]): the samples that looked a
/// prompt up since the one before.
pub fn hit_points(samples: &[CacheSample]) -> Vec<(f64, f64)> {
    samples
        .iter()
        .filter(|s| s.hit_rate.is_finite())
        .map(|s| (s.t_s, s.hit_rate * 100.0))
        .collect()
}

/// How a legend entry is marked.
#[derive(Debug, Clone, Copy)]
enum Mark {
    /// A filled swatch.
    Fill(RGBColor),
    /// A solid line.
    Line(RGBColor),
    /// A dashed line.
    Dashed(Dash),
}

/// Height of one row of a legend row [CSS px].
const LEGEND_ROW_CSS_PX: f64 = 18.0;
/// A legend mark's width and the gaps after it and after its words [CSS px].
const MARK_CSS_PX: f64 = 16.0;
const MARK_GAP_CSS_PX: f64 = 6.0;
const ENTRY_GAP_CSS_PX: f64 = 16.0;
/// The y labels' room; a legend row starts after it, over the plot, unless the chart is
/// narrow [CSS px].
const Y_LABELS_CSS_PX: f64 = 64.0;

/// Where each entry of a legend goes in rows `width_px` wide: (row, x) [backing pixels].
fn legend_layout(entries: &[(Mark, String)], width_px: u32, theme: &Theme) -> Vec<(u32, i32)> {
    let indent = if theme.is_narrow(width_px) {
        10.0
    } else {
        Y_LABELS_CSS_PX + 10.0
    };
    let start = theme.px(indent) as i32;
    let right = width_px as i32 - theme.px(10.0) as i32;
    let (mut row, mut x) = (0u32, start);
    entries
        .iter()
        .map(|(_, words)| {
            let w = theme.px(MARK_CSS_PX + MARK_GAP_CSS_PX) as i32
                + text_width_px(words, 11.0 * theme.scale);
            if x > start && x + w > right {
                row += 1;
                x = start;
            }
            let at = (row, x);
            x += w + theme.px(ENTRY_GAP_CSS_PX) as i32;
            at
        })
        .collect()
}

/// Draws `entries` as a row (or rows) across the top of `area`; returns the area below.
fn legend_row<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(Mark, String)],
    theme: &Theme,
) -> Result<DrawingArea<DB, Shift>, DrawingAreaErrorKind<DB::ErrorType>> {
    let layout = legend_layout(entries, area.dim_in_pixel().0, theme);
    let rows = layout.iter().map(|l| l.0 + 1).max().unwrap_or(0);
    let height = theme.px(LEGEND_ROW_CSS_PX * rows as f64 + 6.0);
    let (top, rest) = area.split_vertically(height);
    let row_h = theme.px(LEGEND_ROW_CSS_PX) as i32;
    let (mark_w, gap) = (
        theme.px(MARK_CSS_PX) as i32,
        theme.px(MARK_GAP_CSS_PX) as i32,
    );
    let half = theme.px(5.0) as i32;
    for ((mark, words), (row, x)) in entries.iter().zip(layout) {
        let y = theme.px(6.0) as i32 + row as i32 * row_h + row_h / 2;
        match *mark {
            Mark::Fill(c) => {
                top.draw(&Rectangle::new(
                    [(x, y - half), (x + mark_w, y + half)],
                    c.filled(),
                ))?;
            }
            Mark::Line(c) => {
                top.draw(&PathElement::new(
                    vec![(x, y), (x + mark_w, y)],
                    c.stroke_width(theme.px(2.5)),
                ))?;
            }
            Mark::Dashed(d) => top.draw(&d.legend(x, y, theme))?,
        }
        top.draw(&Text::new(
            words.clone(),
            (x + mark_w + gap, y),
            theme.text(11.0).pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
    }
    Ok(rest)
}

/// The KV capacity's dashed line.
fn capacity_dash(theme: &Theme) -> Dash {
    Dash {
        dash: 6.0,
        gap: 4.0,
        color: theme.limit().to_rgba(),
    }
}

/// The whole run's hit rate as a dashed line.
fn whole_run_dash(theme: &Theme) -> Dash {
    Dash {
        dash: 4.0,
        gap: 4.0,
        color: theme.fg().mix(0.6),
    }
}

/// Draws both panels into `area`; returns their frames for hover readouts.
pub fn draw_cache<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &CacheChart,
    theme: &Theme,
) -> Result<Vec<Frame>, DrawingAreaErrorKind<DB::ErrorType>> {
    area.fill(&theme.bg())?;
    let samples = &data.samples;
    if samples.is_empty() {
        draw_note(area, "No prefix cache in this run.", theme)?;
        return Ok(Vec::new());
    }
    let t_end = data.t_end_s().max(samples[0].t_s + 1e-9);
    let x = 0.0..t_end;
    let (upper, lower) = area.split_vertically(area.dim_in_pixel().1 * 3 / 5);

    // Top: the stack and the capacity.
    let layers = layers(theme);
    let mut entries: Vec<(Mark, String)> = layers
        .iter()
        .map(|l| (Mark::Fill(l.color), l.words.to_string()))
        .collect();
    if let Some(c) = data.kv_capacity_tokens {
        entries.push((
            Mark::Dashed(capacity_dash(theme)),
            format!("KV capacity ({} tokens)", tokens(c)),
        ));
    }
    let plot = legend_row(&upper, &entries, theme)?;
    let peak = data.peaks().used_tokens;
    let y_top = (peak.max(data.kv_capacity_tokens.unwrap_or(0.0)) * 1.08).max(1.0);
    let mut chart = ChartBuilder::on(&plot)
        .margin_left(theme.px(10.0))
        .margin_right(theme.px(10.0))
        .margin_bottom(theme.px(4.0))
        .x_label_area_size(theme.px(8.0))
        .y_label_area_size(theme.px(Y_LABELS_CSS_PX))
        .build_cartesian_2d(x.clone(), 0.0..y_top)?;
    theme
        .style_mesh(&mut chart.configure_mesh())
        .x_labels(rate_labels(&plot, Y_LABELS_CSS_PX + 20.0, theme, &x))
        .x_label_formatter(&|_| String::new())
        .y_labels(5)
        .y_label_formatter(&|v| tokens_tick(*v))
        .y_desc("KV memory [tokens]")
        .draw()?;
    // Each layer a band from the layers below it to its own top.
    let mut below: Vec<f64> = vec![0.0; samples.len()];
    for layer in &layers {
        let top: Vec<f64> = samples
            .iter()
            .zip(&below)
            .map(|(s, b)| b + (layer.value)(s).max(0.0))
            .collect();
        let band: Vec<(f64, f64)> = samples
            .iter()
            .zip(&top)
            .map(|(s, v)| (s.t_s, *v))
            .chain(samples.iter().zip(&below).rev().map(|(s, v)| (s.t_s, *v)))
            .collect();
        chart.draw_series(std::iter::once(Polygon::new(band, layer.color.filled())))?;
        below = top;
    }
    if let Some(c) = data.kv_capacity_tokens {
        chart.draw_series(capacity_dash(theme).series(vec![(0.0, c), (t_end, c)], theme))?;
    }
    let (px_x, px_y) = chart.plotting_area().get_pixel_range();
    let top_frame = Frame {
        px_x,
        px_y,
        x: x.clone(),
        y: 0.0..y_top,
        log_x: false,
        panel: 0,
    };

    // Bottom: the hit rate between samples, and the whole run's.
    let entries = [
        (
            Mark::Line(theme.accent()),
            "found cached since the sample before".to_string(),
        ),
        (
            Mark::Dashed(whole_run_dash(theme)),
            format!("whole run ({})", percent_tenths(data.hit_rate)),
        ),
    ];
    let plot = legend_row(&lower, &entries, theme)?;
    let mut chart = ChartBuilder::on(&plot)
        .margin_left(theme.px(10.0))
        .margin_right(theme.px(10.0))
        .margin_bottom(theme.px(6.0))
        .x_label_area_size(theme.px(36.0))
        .y_label_area_size(theme.px(Y_LABELS_CSS_PX))
        .build_cartesian_2d(x.clone(), 0.0..105.0)?;
    theme
        .style_mesh(&mut chart.configure_mesh())
        .x_labels(rate_labels(&plot, Y_LABELS_CSS_PX + 20.0, theme, &x))
        .x_label_formatter(&|v| tick_label(*v))
        .y_labels(6)
        .y_label_formatter(&|v| tick_label(*v))
        .x_desc("simulated time [s]")
        .y_desc("hit rate [%]")
        .draw()?;
    let whole = data.hit_rate * 100.0;
    if whole.is_finite() {
        chart
            .draw_series(whole_run_dash(theme).series(vec![(0.0, whole), (t_end, whole)], theme))?;
    }
    // A sample without lookups has no hit rate: the line goes on to the next that has.
    chart.draw_series(LineSeries::new(
        hit_points(samples),
        theme.accent().stroke_width(theme.px(2.0)),
    ))?;
    let (px_x, px_y) = chart.plotting_area().get_pixel_range();
    Ok(vec![
        top_frame,
        Frame {
            px_x,
            px_y,
            x,
            y: 0.0..105.0,
            log_x: false,
            panel: 1,
        },
    ])
}

#[cfg(test)]
mod tests {
    use super::super::svg_checks::{assert_no_needless_decimals, assert_shows, attr, hex};
    use super::*;
    use plotters::backend::SVGBackend;

    /// A run of `n` samples: private tokens rise, the shared prefixes stay, the idle
    /// cache fills; every fourth sample looked nothing up.
    fn chart(n: usize) -> CacheChart {
        let samples = (0..n)
            .map(|i| {
                let f = i as f64 / (n - 1) as f64;
                CacheSample {
                    t_s: 2.0 * i as f64,
                    private_tokens: 20_000.0 + 40_000.0 * f,
                    shared_tokens: 30_000.0,
                    idle_tokens: 100_000.0 * f,
                    hit_rate: if i % 4 == 3 { f64::NAN } else { 0.4 + 0.5 * f },
                }
            })
            .collect();
        CacheChart {
            samples,
            kv_capacity_tokens: Some(250_000.0),
            hit_rate: 0.62,
            rate_rps: 7.5,
            replicas: 2,
        }
    }

    fn svg(data: &CacheChart, theme: &Theme) -> (String, Vec<Frame>) {
        let mut out = String::new();
        let frames;
        {
            let area = SVGBackend::with_string(&mut out, (900, 380)).into_drawing_area();
            frames = draw_cache(&area, data, theme).expect("draw");
            area.present().expect("present");
        }
        (out, frames)
    }

    /// The points of every `<tag>` of `svg` whose `attr_name` is `value`, as numbers.
    fn shapes(svg: &str, tag: &str, attr_name: &str, value: &str) -> Vec<Vec<(f64, f64)>> {
        svg.split(&format!("<{tag} "))
            .skip(1)
            .filter(|t| attr(&format!(" {t}"), attr_name) == Some(value))
            .map(|t| {
                attr(&format!(" {t}"), "points")
                    .expect("points")
                    .split_whitespace()
                    .map(|p| {
                        let (x, y) = p.split_once(',').expect("x,y");
                        (x.parse().expect("x"), y.parse().expect("y"))
                    })
                    .collect()
            })
            .collect()
    }

    /// The data at backing pixel `(px, py)` of `frame`.
    fn data_at(frame: &Frame, px: f64, py: f64) -> (f64, f64) {
        frame.to_data(px, py).expect("inside the plot")
    }

    #[test]
    fn the_stack_and_the_hit_rate_are_the_samples() {
        let data = chart(40);
        for theme in [
            Theme::default(),
            Theme {
                dark: true,
                scale: 1.0,
            },
        ] {
            let (out, frames) = svg(&data, &theme);
            assert_eq!(frames.len(), 2);
            assert_shows(
                &out,
                &[
                    "KV memory [tokens]",
                    "simulated time [s]",
                    "hit rate [%]",
                    "private to running requests",
                    "shared prefixes in use",
                    "idle cached (evicted first)",
                    "KV capacity (250,000 tokens)",
                    "whole run (62.0%)",
                ],
            );
            assert_no_needless_decimals(&out);
            // One band per layer, each through every sample (its top, then its bottom
            // back), stacked: each band's bottom is the one below's top.
            let fills = [private_fill(&theme), shared_fill(&theme), idle_fill(&theme)];
            let bands: Vec<Vec<(f64, f64)>> = fills
                .iter()
                .map(|c| {
                    let mut found = shapes(&out, "polygon", "fill", &hex(*c));
                    assert_eq!(found.len(), 1, "one band of {}", hex(*c));
                    found.remove(0)
                })
                .collect();
            let top = &frames[0];
            let n = data.samples.len();
            let mut below = vec![0.0; n];
            for (band, layer) in bands.iter().zip(layers(&theme)) {
                assert_eq!(band.len(), 2 * n);
                for (i, s) in data.samples.iter().enumerate() {
                    let want = below[i] + (layer.value)(s);
                    let (t, v) = data_at(top, band[i].0, band[i].1);
                    assert!(
                        (t - s.t_s).abs() <= 0.2,
                        "{}: t {t} vs {}",
                        layer.words,
                        s.t_s
                    );
                    assert!(
                        (v - want).abs() <= 0.01 * top.y.end,
                        "{} at {}: {v} vs {want}",
                        layer.words,
                        s.t_s
                    );
                    let (_, b) = data_at(top, band[2 * n - 1 - i].0, band[2 * n - 1 - i].1);
                    assert!((b - below[i]).abs() <= 0.01 * top.y.end);
                    below[i] = want;
                }
            }
            // The hit rate: one line through the samples that looked prompts up (and
            // its legend's mark, two points).
            let mut line = shapes(&out, "polyline", "stroke", &hex(theme.accent()));
            line.retain(|l| l.len() > 2);
            assert_eq!(line.len(), 1, "one hit-rate line");
            let looked: Vec<&CacheSample> = data
                .samples
                .iter()
                .filter(|s| s.hit_rate.is_finite())
                .collect();
            assert_eq!(line[0].len(), looked.len());
            for (p, s) in line[0].iter().zip(looked) {
                let (t, h) = data_at(&frames[1], p.0, p.1);
                // Within a pixel of the plot (about 1% of its 0 to 105% in height).
                let px = 105.0 / (frames[1].px_y.end - frames[1].px_y.start) as f64;
                assert!(
                    (t - s.t_s).abs() <= 0.2 && (h - s.hit_rate * 100.0).abs() <= px,
                    "{t} {h} vs {s:?}"
                );
            }
        }
    }

    #[test]
    fn the_summary_and_the_readout_say_what_is_drawn() {
        let data = chart(40);
        let p = data.peaks();
        assert_eq!(p.used_tokens, 60_000.0 + 30_000.0 + 100_000.0);
        assert_eq!(
            data.summary(),
            "The first of 2 replicas behind the router at 7.50 req/s, over 78 s of simulated \
             time: KV memory peaks at 190,000 tokens of its 250,000; shared prefixes in use \
             reach 30,000, the idle cache 100,000; 62.0% of prompt tokens found cached over \
             the run."
        );
        let r = data.readout(0, 76.3).expect("a sample");
        assert_eq!(
            r,
            "76 s: 58,974 tokens private, 30,000 shared, 97,436 idle (186,410 in all of \
             250,000); 89% of prompt tokens found cached since the sample before"
        );
        let r = data.readout(1, 77.5).expect("a sample");
        assert!(
            r.starts_with("78 s: 60,000 tokens private, 30,000 shared, 100,000 idle")
                && r.ends_with("; no prompt looked up since the sample before"),
            "{r}"
        );
        // No samples: a note, no frames.
        let (out, frames) = svg(&CacheChart::default(), &Theme::default());
        assert!(out.contains("No prefix cache in this run."));
        assert!(frames.is_empty());
    }

    #[test]
    fn token_ticks_are_short() {
        assert_eq!(tokens_tick(0.0), "0");
        assert_eq!(tokens_tick(5000.0), "5,000");
        assert_eq!(tokens_tick(50_000.0), "50k");
        assert_eq!(tokens_tick(400_000.0), "400k");
        assert_eq!(tokens_tick(1_200_000.0), "1.2M");
    }

    #[test]
    fn a_narrow_chart_wraps_its_legend_and_keeps_the_plot() {
        let theme = Theme::default();
        let data = chart(10);
        let mut out = String::new();
        let frames;
        {
            let area = SVGBackend::with_string(&mut out, (340, 420)).into_drawing_area();
            frames = draw_cache(&area, &data, &theme).expect("draw");
            area.present().expect("present");
        }
        assert_eq!(frames.len(), 2);
        // Every legend entry starts inside the canvas and at most one row ends past it.
        let entries: Vec<(Mark, String)> = layers(&theme)
            .iter()
            .map(|l| (Mark::Fill(l.color), l.words.to_string()))
            .collect();
        let layout = legend_layout(&entries, 340, &theme);
        assert!(layout.iter().any(|l| l.0 > 0), "wrapped: {layout:?}");
        assert!(layout.iter().all(|l| l.1 < 340));
        assert!(
            frames[0].px_y.end - frames[0].px_y.start > 100,
            "{:?}",
            frames[0]
        );
    }
}
