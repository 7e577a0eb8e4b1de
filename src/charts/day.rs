//! Traffic over a day: the arrival rate against the capacity the autoscaled fleet
//! serves (top), the replicas (bottom: serving, needed, the static fleet), and the hours
//! whose simulated attainment falls below the target shaded across both panels.

use goodput_core::format::{percent, percent_tenths, percent_whole, rps};
use goodput_core::schedule::Schedule;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{draw_note, legend_mark, tick_label, Dash, Frame, Theme};

/// An hour whose attainment is below the target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dip {
    /// Hour index.
    pub hour: usize,
    /// Its simulated attainment [0..1].
    pub attainment: f64,
}

/// Everything the chart shows; x is in hours from the period's start.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DayChart {
    /// Hours in the period (24 or 168).
    pub hours: usize,
    /// Fleet arrival rate per hour [req/s].
    pub rate_rps: Vec<f64>,
    /// Where the serving fleet changes: (hour, replicas serving), from the period's start.
    pub serving: Vec<(f64, u32)>,
    /// Goodput of one replica: capacity = serving × goodput [req/s].
    pub goodput_rps: f64,
    /// Replicas each hour needs.
    pub needed: Vec<u32>,
    /// The static fleet.
    pub static_replicas: u32,
    /// Hours below the attainment target.
    pub dips: Vec<Dip>,
    /// The attainment target [0..1].
    pub target: f64,
}

/// Builds the chart from a schedule, the replicas serving per minute and the target.
pub fn day_chart(s: &Schedule, serving_per_minute: &[u32], target: f64) -> DayChart {
    let mut serving: Vec<(f64, u32)> = Vec::new();
    for (m, &n) in serving_per_minute.iter().enumerate() {
        if serving.last().is_none_or(|&(_, last)| last != n) {
            serving.push((m as f64 / 60.0, n));
        }
    }
    DayChart {
        hours: s.hours.len(),
        rate_rps: s.hours.iter().map(|h| h.rate_rps).collect(),
        serving,
        goodput_rps: s.goodput_rps,
        needed: s.hours.iter().map(|h| h.replicas).collect(),
        static_replicas: s.static_replicas,
        dips: s
            .hours
            .iter()
            .filter_map(|h| {
                let a = h.attainment?;
                (a < target).then_some(Dip {
                    hour: h.hour as usize,
                    attainment: a,
                })
            })
            .collect(),
        target,
    }
}

/// Step points of a per-hour series: (h, v), (h + 1, v) for every hour.
fn hourly_steps<T: Copy + Into<f64>>(values: &[T]) -> Vec<(f64, f64)> {
    values
        .iter()
        .enumerate()
        .flat_map(|(h, &v)| [(h as f64, v.into()), (h as f64 + 1.0, v.into())])
        .collect()
}

impl DayChart {
    /// The highest arrival rate or serving capacity over the period [req/s]: the
    /// capacity line's values, without building its steps.
    fn highest_rps(&self) -> f64 {
        self.rate_rps
            .iter()
            .copied()
            .chain(
                self.serving
                    .iter()
                    .map(|&(_, n)| n as f64 * self.goodput_rps),
            )
            .fold(0.0, f64::max)
    }

    /// The most replicas needed, serving or in the static fleet.
    fn most_replicas(&self) -> u32 {
        self.needed
            .iter()
            .copied()
            .chain(self.serving.iter().map(|s| s.1))
            .chain([self.static_replicas])
            .max()
            .unwrap_or(1)
    }

    /// Step points of the serving fleet scaled by `per_replica`, to the period's end.
    fn serving_steps(&self, per_replica: f64) -> Vec<(f64, f64)> {
        let mut out = Vec::with_capacity(self.serving.len() * 2);
        for (i, &(x, n)) in self.serving.iter().enumerate() {
            let end = self.serving.get(i + 1).map_or(self.hours as f64, |s| s.0);
            out.push((x, n as f64 * per_replica));
            out.push((end, n as f64 * per_replica));
        }
        out
    }

    /// What is plotted, for tests and the page's `data-series`: the points of each series.
    pub fn series_summary(&self) -> String {
        format!(
            "rate:{} capacity:{} serving:{} needed:{} dips:{}",
            self.rate_rps.len(),
            self.serving.len(),
            self.serving.len(),
            self.needed.len(),
            self.dips.len()
        )
    }

    /// Hover text at hour `x` of `panel`.
    pub fn readout(&self, x: f64) -> Option<String> {
        if !(x >= 0.0 && x < self.hours as f64) {
            return None;
        }
        let h = x as usize;
        let serving = self
            .serving
            .iter()
            .take_while(|s| s.0 <= x)
            .last()
            .map_or(0, |s| s.1);
        let dip = self
            .dips
            .iter()
            .find(|d| d.hour == h)
            .map(|d| format!("; {} within the SLO", percent_tenths(d.attainment)))
            .unwrap_or_default();
        Some(format!(
            "hour {h}: {} req/s, {} replicas needed, {serving} serving ({:.1} req/s capacity){dip}",
            rps(self.rate_rps.get(h).copied().unwrap_or(0.0)),
            self.needed.get(h).copied().unwrap_or(0),
            serving as f64 * self.goodput_rps
        ))
    }
}

fn x_desc(hours: usize) -> &'static str {
    if hours == 168 {
        "hour of the week (0 = Monday 0:00)"
    } else {
        "hour of the day"
    }
}

/// Height of one legend entry at an 11 px label font, and the legend box's padding with
/// its gap from the plot's top [CSS px].
const LEGEND_ENTRY_CSS_PX: f64 = 16.0;
const LEGEND_PAD_CSS_PX: f64 = 26.0;

/// The top of a y axis from 0 that keeps data up to `most` below an upper legend of
/// `entries` on a plot `plot_px` backing pixels tall (at most 3.5 × `most`).
fn above_legend(most: f64, entries: usize, plot_px: f64, theme: &Theme) -> f64 {
    let legend = theme.px(entries as f64 * LEGEND_ENTRY_CSS_PX + LEGEND_PAD_CSS_PX) as f64;
    let free = (1.0 - legend / plot_px.max(1.0)).max(1.0 / 3.5);
    most / free
}

/// Draws both panels into `area`; returns their frames for hover readouts.
pub fn draw_day<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &DayChart,
    theme: &Theme,
) -> Result<Vec<Frame>, DrawingAreaErrorKind<DB::ErrorType>> {
    area.fill(&theme.bg())?;
    if data.hours == 0 {
        draw_note(area, "Waiting for the day's schedule…", theme)?;
        return Ok(Vec::new());
    }
    let h = data.hours as f64;
    let step = if data.hours == 168 { 24.0 } else { 3.0 };
    let (top, bottom) = area.split_vertically(area.dim_in_pixel().1 * 11 / 20);
    let capacity = data.serving_steps(data.goodput_rps);
    let highest = data.highest_rps().max(1e-6);
    // The lines stay under the legend (two entries, three with dips).
    let entries = if data.dips.is_empty() { 2 } else { 3 };
    let plot_px = top.dim_in_pixel().1 as f64 - theme.px(8.0 + 2.0 * 10.0) as f64;
    let y_top = above_legend(highest, entries, plot_px, theme).max(highest * 1.15);
    let mut chart = ChartBuilder::on(&top)
        .margin(theme.px(10.0))
        .x_label_area_size(theme.px(8.0))
        .y_label_area_size(theme.px(56.0))
        .build_cartesian_2d(0.0..h, 0.0..y_top)?;
    theme
        .style_mesh(&mut chart.configure_mesh())
        .x_labels(0)
        .y_labels(5)
        .y_label_formatter(&|v| tick_label(*v))
        .y_desc("req/s")
        .draw()?;
    // Dips first, under the lines: a band over the hour and its attainment on top.
    chart.draw_series(data.dips.iter().map(|d| {
        Rectangle::new(
            [(d.hour as f64, 0.0), (d.hour as f64 + 1.0, y_top)],
            theme.limit().mix(0.18).filled(),
        )
    }))?;
    chart.draw_series(data.dips.iter().map(|d| {
        Text::new(
            percent_whole(d.attainment),
            (d.hour as f64, y_top * 0.97),
            theme.text(10.0),
        )
    }))?;
    chart
        .draw_series(LineSeries::new(
            hourly_steps(&data.rate_rps),
            theme.accent().stroke_width(theme.px(2.0)),
        ))?
        .label("arrival rate")
        .legend(move |(x, y)| legend_mark(x, y, theme.accent(), theme));
    chart
        .draw_series(LineSeries::new(
            capacity,
            theme.good().stroke_width(theme.px(2.0)),
        ))?
        .label("capacity serving (at goodput)")
        .legend(move |(x, y)| legend_mark(x, y, theme.good(), theme));
    if !data.dips.is_empty() {
        chart
            .draw_series(std::iter::empty::<Rectangle<(f64, f64)>>())?
            .label(format!("below the {} target", percent(data.target)))
            .legend(move |(x, y)| legend_mark(x, y, theme.limit(), theme));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(theme.bg().mix(0.85))
        .border_style(theme.grid())
        .label_font(theme.text(11.0))
        .legend_area_size(theme.legend_area())
        .draw()?;
    let (px_x, px_y) = chart.plotting_area().get_pixel_range();
    let top_frame = Frame {
        px_x,
        px_y,
        x: 0.0..h,
        y: 0.0..y_top,
        log_x: false,
        panel: 0,
    };

    let most = data.most_replicas() as f64;
    // The three lines stay under the legend in the upper left.
    let plot_px = bottom.dim_in_pixel().1 as f64 - theme.px(34.0 + 2.0 * 10.0) as f64;
    let y_max = above_legend(most, 3, plot_px, theme).max(most * 1.2 + 0.5);
    let mut chart = ChartBuilder::on(&bottom)
        .margin(theme.px(10.0))
        .x_label_area_size(theme.px(34.0))
        .y_label_area_size(theme.px(56.0))
        .build_cartesian_2d(0.0..h, 0.0..y_max)?;
    theme
        .style_mesh(&mut chart.configure_mesh())
        .x_labels((h / step) as usize + 1)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_labels(4)
        .y_label_formatter(&|y| tick_label(y.round()))
        .x_desc(x_desc(data.hours))
        .y_desc("replicas")
        .draw()?;
    chart.draw_series(data.dips.iter().map(|d| {
        Rectangle::new(
            [(d.hour as f64, 0.0), (d.hour as f64 + 1.0, y_max)],
            theme.limit().mix(0.18).filled(),
        )
    }))?;
    let fixed = data.static_replicas as f64;
    let dash = Dash {
        dash: 6.0,
        gap: 4.0,
        color: theme.fg().mix(0.6),
    };
    chart
        .draw_series(dash.series(vec![(0.0, fixed), (h, fixed)], theme))?
        .label("static fleet")
        .legend(move |(x, y)| dash.legend(x, y, theme));
    chart
        .draw_series(LineSeries::new(
            hourly_steps(&data.needed),
            theme.accent2().stroke_width(theme.px(1.5)),
        ))?
        .label("needed")
        .legend(move |(x, y)| legend_mark(x, y, theme.accent2(), theme));
    chart
        .draw_series(LineSeries::new(
            data.serving_steps(1.0),
            theme.good().stroke_width(theme.px(2.0)),
        ))?
        .label("serving (autoscaled)")
        .legend(move |(x, y)| legend_mark(x, y, theme.good(), theme));
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(theme.bg().mix(0.85))
        .border_style(theme.grid())
        .label_font(theme.text(11.0))
        .legend_area_size(theme.legend_area())
        .draw()?;
    let (px_x, px_y) = chart.plotting_area().get_pixel_range();
    Ok(vec![
        top_frame,
        Frame {
            px_x,
            px_y,
            x: 0.0..h,
            y: 0.0..y_max,
            log_x: false,
            panel: 1,
        },
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::svg_checks::{assert_no_needless_decimals, assert_shows, attr, hex};
    use goodput_core::schedule::{RateProfile, ScheduleOptions, ScheduleRun};
    use goodput_core::Plan;
    use plotters::backend::SVGBackend;

    fn schedule() -> (Schedule, Vec<u32>) {
        let mut plan = Plan::default();
        plan.traffic.peak_rate_rps = 30.0;
        let profile = RateProfile::named("business-hours").expect("a shape");
        let o = ScheduleOptions {
            simulate: false,
            ..Default::default()
        };
        let run = ScheduleRun::new(&plan, &profile, 10.0, &o).expect("a schedule");
        (
            run.result().expect("arithmetic"),
            run.serving_per_minute().to_vec(),
        )
    }

    /// The bottom pixel rows of the legend boxes in `svg` (their outlines, in the grid
    /// colour), top panel first.
    fn legend_bottoms(svg: &str, theme: &Theme) -> Vec<f64> {
        let outline = format!("fill=\"none\" stroke=\"{}\"", hex(theme.grid()));
        let number = |tag: &str, name: &str| -> f64 {
            attr(tag, name)
                .and_then(|v| v.parse().ok())
                .expect("a number")
        };
        svg.split("<rect")
            .skip(1)
            .map(|r| &r[..r.find('>').expect("a closed tag")])
            .filter(|tag| tag.contains(&outline))
            .map(|tag| number(tag, "y") + number(tag, "height"))
            .collect()
    }

    /// The pixel row of `value` in `frame`.
    fn row_of(frame: &Frame, value: f64) -> f64 {
        frame.px_y.start as f64
            + (1.0 - value / frame.y.end) * (frame.px_y.end - frame.px_y.start) as f64
    }

    #[test]
    fn the_lines_run_under_the_legends_on_a_desktop_and_a_phone() {
        let (mut s, serving) = schedule();
        s.hours[8].attainment = Some(0.61);
        let c = day_chart(&s, &serving, 0.9);
        let (highest, most) = (c.highest_rps(), c.most_replicas() as f64);
        // The canvas's backing pixels: 800 × 420 CSS px at 1×, 350 × 420 at 2×.
        for (scale, size) in [(1.0, (800, 420)), (2.0, (700, 840))] {
            let theme = Theme { scale, dark: false };
            let mut svg = String::new();
            let frames;
            {
                let area = SVGBackend::with_string(&mut svg, size).into_drawing_area();
                frames = draw_day(&area, &c, &theme).expect("draws");
                area.present().expect("presents");
            }
            let boxes = legend_bottoms(&svg, &theme);
            assert_eq!(boxes.len(), 2, "one legend per panel");
            let top = row_of(&frames[0], highest);
            assert!(
                top > boxes[0],
                "{scale}×: top line at {top} px, legend to {} px",
                boxes[0]
            );
            let bottom = row_of(&frames[1], most);
            assert!(
                bottom > boxes[1],
                "{scale}×: replicas at {bottom} px, legend to {} px",
                boxes[1]
            );
        }
    }

    #[test]
    fn the_chart_follows_the_schedule_and_shades_the_dips() {
        let (mut s, serving) = schedule();
        s.hours[8].attainment = Some(0.61);
        s.hours[9].attainment = Some(0.995);
        let c = day_chart(&s, &serving, 0.9);
        assert_eq!(c.rate_rps.len(), 24);
        assert_eq!(c.rate_rps[10], 30.0);
        assert_eq!(
            c.dips,
            vec![Dip {
                hour: 8,
                attainment: 0.61
            }]
        );
        assert_eq!(c.serving[0].0, 0.0);
        assert!(c.serving.len() > 2, "the fleet changes over the day");
        assert!(c
            .serving
            .windows(2)
            .all(|w| w[0].1 != w[1].1 && w[0].0 < w[1].0));
        assert_eq!(
            c.series_summary(),
            format!(
                "rate:24 capacity:{0} serving:{0} needed:24 dips:1",
                c.serving.len()
            )
        );
        let theme = Theme::default();
        let mut svg = String::new();
        let frames;
        {
            let area = SVGBackend::with_string(&mut svg, (800, 420)).into_drawing_area();
            frames = draw_day(&area, &c, &theme).expect("draws");
            area.present().expect("presents");
        }
        assert_eq!(frames.len(), 2);
        assert!(frames[0].px_y.end <= frames[1].px_y.start, "panels overlap");
        assert_no_needless_decimals(&svg);
        assert_shows(
            &svg,
            &[
                "61%",
                "hour of the day",
                "replicas",
                "arrival rate",
                "static fleet",
                "below the 90% target",
            ],
        );
        // Two bands (one per panel) in the limit colour; lines in the series colours.
        assert!(svg.matches(&hex(theme.limit())).count() >= 2);
        assert!(svg.contains(&hex(theme.accent())) && svg.contains(&hex(theme.good())));
        let r = c.readout(8.5).expect("inside");
        assert!(
            r.starts_with("hour 8: ") && r.ends_with("61.0% within the SLO"),
            "{r}"
        );
        assert!(c.readout(24.0).is_none());
        // Nothing yet: a note.
        let mut empty = String::new();
        let area = SVGBackend::with_string(&mut empty, (300, 200)).into_drawing_area();
        assert!(draw_day(&area, &DayChart::default(), &theme)
            .expect("draws")
            .is_empty());
    }
}
