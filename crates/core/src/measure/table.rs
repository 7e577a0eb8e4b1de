//! A table of measured points: a header row, then one row per load point.
//!
//! Cells are separated by commas, tabs or semicolons (the header row decides which);
//! `#` lines are comments; a cell may be quoted with `"`. Column names are matched
//! case-insensitively, spaces and dashes read as `_`, and a unit may be written as a
//! suffix (`ttft_p50_ms`, `ttft_p99_s`) or in brackets (`ttft p50 (ms)`).
//!
//! | column | aliases | meaning |
//! | --- | --- | --- |
//! | `rate` | `rate_rps`, `request_rate`, `qps` | offered rate [requests/s]; empty or `inf` for a closed-loop row |
//! | `concurrency` | `max_concurrency` | clients; with a rate, a cap on requests in flight |
//! | `prompt_tokens` | `input_tokens`, `mean_prompt_tokens`, `mean_input_tokens` | mean prompt length [tokens] |
//! | `output_tokens` | `mean_output_tokens` | mean output length [tokens] |
//! | `prompt_tokens_{s}` | `input_tokens_{s}` | the prompt lengths' spread: `{s}` is `min`, `max`, `p50` (`median`) or `p{N}` [tokens] |
//! | `output_tokens_{s}` | | the output lengths' spread, likewise [tokens] |
//! | `{m}_{s}` or `{s}_{m}` | | a latency statistic, with a unit suffix `_ms` or `_s` |
//! | `achieved_rps` | `throughput`, `request_throughput` | completed requests per second |
//! | `completed`, `failed` | | request counts |
//! | `duration` | | wall time [s] (or `duration_ms`) |
//! | `cv` | `burstiness` (vLLM's: CV = 1/√burstiness) | arrival-gap CV; default 1 |
//! | `model`, `engine` | `model_id`, `backend` | labels |
//!
//! Metrics `{m}`: `ttft`, `tpot`, `itl`, `e2e` (`e2el`, `latency`, `request_latency`);
//! statistics `{s}`: `mean` (`avg`), `p50` (`median`), and `p{N}` for a percent N in
//! (0, 100) (`p999` and `p001` read as GuideLLM's 99.9 and 0.1). A row needs a load, the
//! two token columns and at least one latency statistic; other columns are ignored.
//! Without spread columns, a calibration assumes the plan's length spread around the
//! means, and says so.

use super::pyjson::{bad, whole};
use super::{
    nothing_completed, stats, Format, ImportError, LatencyStats, LengthStats, MeasuredPoint,
    MAX_POINTS,
};
use crate::cells::{content_lines, delimiter, split_row};
use crate::plan::MeasuredLoad;

/// A column name lower-cased, trimmed and unquoted, with spaces, dashes and brackets
/// read as `_` (`"TTFT p50 (ms)"` → `ttft_p50_ms`).
pub(crate) fn normalize(raw: &str) -> String {
    let t = raw.trim().trim_matches('"').trim();
    let mut out = String::with_capacity(t.len());
    for c in t.chars() {
        let c = c.to_ascii_lowercase();
        let c = match c {
            ' ' | '-' | '(' | '[' | '/' => '_',
            ')' | ']' => continue,
            c => c,
        };
        if c == '_' && (out.is_empty() || out.ends_with('_')) {
            continue;
        }
        out.push(c);
    }
    while out.ends_with('_') {
        out.pop();
    }
    out
}

/// The column names of a header row, normalized, for lookup by alias.
#[derive(Debug, Clone)]
pub(crate) struct Header {
    /// Normalized names, in column order.
    pub(crate) names: Vec<String>,
}

impl Header {
    /// A header from its raw cells.
    pub(crate) fn new<'a>(cells: impl IntoIterator<Item = &'a str>) -> Header {
        Header {
            names: cells.into_iter().map(normalize).collect(),
        }
    }

    /// The first column whose name is one of `aliases` (given normalized).
    pub(crate) fn find(&self, aliases: &[&str]) -> Option<usize> {
        self.names
            .iter()
            .position(|n| aliases.contains(&n.as_str()))
    }
}

/// Aliases of an offered-rate column [requests/s].
pub(crate) const RATE: [&str; 4] = ["rate", "rate_rps", "request_rate", "qps"];
const CONCURRENCY: [&str; 2] = ["concurrency", "max_concurrency"];
const PROMPT: [&str; 4] = [
    "prompt_tokens",
    "input_tokens",
    "mean_prompt_tokens",
    "mean_input_tokens",
];
const OUTPUT: [&str; 2] = ["output_tokens", "mean_output_tokens"];
const ACHIEVED: [&str; 3] = ["achieved_rps", "throughput", "request_throughput"];

/// Which length a spread column describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Length {
    Prompt,
    Output,
}

/// A spread column: the length and the statistic (`None` percent for the minimum,
/// 100 for the maximum, else the percent).
fn length_column(name: &str) -> Option<(Length, f64)> {
    let (which, rest) = [
        ("prompt_tokens_", Length::Prompt),
        ("input_tokens_", Length::Prompt),
        ("output_tokens_", Length::Output),
    ]
    .into_iter()
    .find_map(|(p, w)| name.strip_prefix(p).map(|r| (w, r)))?;
    let pct = match rest {
        "min" => 0.0,
        "max" => 100.0,
        _ => match stat(rest)? {
            Stat::Median => 50.0,
            Stat::Pct(p) => p,
            Stat::Mean => return None,
        },
    };
    Some((which, pct))
}

/// Whether text looks like a table: its first content line has a separator and a letter.
pub(super) fn looks_like_table(text: &str) -> bool {
    content_lines(text)
        .next()
        .is_some_and(|(_, l)| delimiter(l).is_some() && l.chars().any(|c| c.is_ascii_alphabetic()))
}

/// The metric a latency column reports.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Metric {
    Ttft,
    Tpot,
    Itl,
    E2e,
}

/// The statistic a latency column reports.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Stat {
    Mean,
    Median,
    Pct(f64),
}

fn metric(s: &str) -> Option<Metric> {
    Some(match s {
        "ttft" => Metric::Ttft,
        "tpot" => Metric::Tpot,
        "itl" => Metric::Itl,
        "e2e" | "e2el" | "latency" | "request_latency" => Metric::E2e,
        _ => return None,
    })
}

fn stat(s: &str) -> Option<Stat> {
    Some(match s {
        "mean" | "avg" | "average" => Stat::Mean,
        "median" | "p50" => Stat::Median,
        "p999" => Stat::Pct(99.9),
        "p001" => Stat::Pct(0.1),
        _ => {
            let p: f64 = s.strip_prefix('p')?.replace('_', ".").parse().ok()?;
            if p > 0.0 && p < 100.0 {
                Stat::Pct(p)
            } else {
                return None;
            }
        }
    })
}

/// A latency column: `{metric}_{stat}` or `{stat}_{metric}`, and its unit, if the name
/// has one (`Some(None)` is a latency column with no unit).
fn latency_column(name: &str) -> Option<(Metric, Stat, Option<f64>)> {
    let (base, scale) = if let Some(b) = name.strip_suffix("_ms") {
        (b, Some(1e-3))
    } else if let Some(b) = name.strip_suffix("_s") {
        (b, Some(1.0))
    } else {
        (name, None)
    };
    // The metric is a prefix or a suffix; `request_latency` has an underscore itself.
    for m in [
        "request_latency",
        "ttft",
        "tpot",
        "itl",
        "e2el",
        "e2e",
        "latency",
    ] {
        if let Some(rest) = base.strip_prefix(m).and_then(|r| r.strip_prefix('_')) {
            if let Some(s) = stat(rest) {
                return Some((metric(m)?, s, scale));
            }
        }
        if let Some(rest) = base.strip_suffix(m).and_then(|r| r.strip_suffix('_')) {
            if let Some(s) = stat(rest) {
                return Some((metric(m)?, s, scale));
            }
        }
    }
    None
}

/// Reads a table into one point per data row (source `{file}#{k}`).
pub(super) fn parse(file: &str, text: &str) -> Result<Vec<MeasuredPoint>, ImportError> {
    let mut lines = content_lines(text);
    let Some((_, head)) = lines.next() else {
        return Err(whole(file, "is empty".into()));
    };
    let Some(d) = delimiter(head) else {
        return Err(whole(
            file,
            "has no header row with comma-, tab- or semicolon-separated column names".into(),
        ));
    };
    let cells = split_row(head, d);
    if cells.first().is_some_and(|c| c.parse::<f64>().is_ok()) {
        return Err(whole(
            file,
            "needs a header row naming the columns first (e.g. rate,prompt_tokens,\
             output_tokens,ttft_p50_ms)"
                .into(),
        ));
    }
    let header = Header::new(cells.iter().map(String::as_str));
    let mut lat_cols: Vec<(usize, Metric, Stat, f64)> = Vec::new();
    for (i, name) in header.names.iter().enumerate() {
        if let Some((m, s, scale)) = latency_column(name) {
            let Some(scale) = scale else {
                return Err(bad(
                    file,
                    &cells[i],
                    "has no unit: add _ms or _s to the column name (e.g. ttft_p50_ms)".into(),
                ));
            };
            lat_cols.push((i, m, s, scale));
        }
    }
    let rate_col = header.find(&RATE);
    let conc_col = header.find(&CONCURRENCY);
    if rate_col.is_none() && conc_col.is_none() {
        return Err(bad(
            file,
            "rate",
            "no load column: add 'rate' [requests/s] or 'concurrency' [clients]".into(),
        ));
    }
    let prompt_col = header.find(&PROMPT).ok_or_else(|| {
        bad(
            file,
            "prompt_tokens",
            "column is missing: the mean prompt length [tokens]".into(),
        )
    })?;
    let output_col = header.find(&OUTPUT).ok_or_else(|| {
        bad(
            file,
            "output_tokens",
            "column is missing: the mean output length [tokens]".into(),
        )
    })?;
    if lat_cols.is_empty() {
        return Err(bad(
            file,
            "ttft_p50_ms",
            "no latency column: add at least one, such as ttft_p50_ms, tpot_mean_ms or e2e_p99_s"
                .into(),
        ));
    }
    let cols = Columns {
        rate: rate_col,
        conc: conc_col,
        prompt: prompt_col,
        output: output_col,
        achieved: header.find(&ACHIEVED),
        completed: header.find(&["completed"]),
        failed: header.find(&["failed"]),
        duration: header
            .find(&["duration", "duration_s"])
            .map(|c| (c, 1.0))
            .or_else(|| header.find(&["duration_ms"]).map(|c| (c, 1e-3))),
        cv: header.find(&["cv"]),
        burstiness: header.find(&["burstiness"]),
        model: header.find(&["model", "model_id"]),
        engine: header.find(&["engine", "backend"]),
        lat: lat_cols,
        spread: header
            .names
            .iter()
            .enumerate()
            .filter_map(|(i, n)| length_column(n).map(|(w, p)| (i, w, p)))
            .collect(),
    };
    let mut points = Vec::new();
    for (n, line) in lines {
        if points.len() >= MAX_POINTS {
            return Err(whole(
                file,
                format!("has more than {MAX_POINTS} rows; at most {MAX_POINTS} points are read"),
            ));
        }
        let src = format!("{file}#{}", points.len() + 1);
        let row = Row {
            file,
            line: n,
            header: &cells,
            cells: split_row(line, d),
            delim: d,
        };
        if row.cells.len() > cells.len() {
            let hint = if d == ',' {
                " (a decimal comma splits a number in two: write 8.5, not 8,5)"
            } else {
                ""
            };
            return Err(whole(
                file,
                format!(
                    "line {n} has {} cells but the header names {}{hint}",
                    row.cells.len(),
                    cells.len()
                ),
            ));
        }
        points.push(row.point(&src, &cols)?);
    }
    if points.is_empty() {
        return Err(whole(file, "has a header but no data rows".into()));
    }
    Ok(points)
}

struct Columns {
    rate: Option<usize>,
    conc: Option<usize>,
    prompt: usize,
    output: usize,
    achieved: Option<usize>,
    completed: Option<usize>,
    failed: Option<usize>,
    duration: Option<(usize, f64)>,
    cv: Option<usize>,
    burstiness: Option<usize>,
    model: Option<usize>,
    engine: Option<usize>,
    lat: Vec<(usize, Metric, Stat, f64)>,
    /// Spread columns: (column, length, percent; 0 the minimum, 100 the maximum).
    spread: Vec<(usize, Length, f64)>,
}

struct Row<'a> {
    file: &'a str,
    line: usize,
    header: &'a [String],
    cells: Vec<String>,
    delim: char,
}

impl Row<'_> {
    fn field(&self, col: usize) -> String {
        format!("line {}, column '{}'", self.line, self.header[col])
    }

    fn text(&self, col: Option<usize>) -> Option<&str> {
        col.and_then(|c| self.cells.get(c))
            .map(String::as_str)
            .filter(|s| !s.is_empty())
    }

    /// A number cell, or `None` when the cell is empty or the column absent.
    fn num(&self, col: Option<usize>) -> Result<Option<f64>, ImportError> {
        let (Some(c), Some(t)) = (col, self.text(col)) else {
            return Ok(None);
        };
        let lower = t.to_ascii_lowercase();
        let x = match lower.as_str() {
            "inf" | "infinity" => f64::INFINITY,
            "nan" => f64::NAN,
            _ => t.parse::<f64>().map_err(|_| {
                let hint = if self.delim != ','
                    && t.contains(',')
                    && t.replace(',', ".").parse::<f64>().is_ok()
                {
                    format!("; use a decimal point: {}", t.replace(',', "."))
                } else {
                    String::new()
                };
                bad(
                    self.file,
                    &self.field(c),
                    format!("'{t}' is not a number{hint}"),
                )
            })?,
        };
        Ok(Some(x))
    }

    fn nonneg(&self, col: Option<usize>, unit: &str) -> Result<Option<f64>, ImportError> {
        match (col, self.num(col)?) {
            (Some(c), Some(x)) => {
                super::pyjson::check_nonneg(self.file, &self.field(c), x, unit).map(Some)
            }
            _ => Ok(None),
        }
    }

    fn count(&self, col: Option<usize>) -> Result<Option<u32>, ImportError> {
        match (col, self.nonneg(col, "")?) {
            (Some(c), Some(x)) => super::pyjson::count_of(self.file, &self.field(c), x).map(Some),
            _ => Ok(None),
        }
    }

    fn point(&self, src: &str, c: &Columns) -> Result<MeasuredPoint, ImportError> {
        let rate = self.num(c.rate)?;
        let conc = self.count(c.conc)?;
        if conc == Some(0) {
            return Err(bad(
                self.file,
                &self.field(c.conc.unwrap_or(0)),
                "is 0; it must be 1 or more clients".into(),
            ));
        }
        let (load, cap) = match (rate, conc) {
            (Some(r), cap) if r.is_finite() => {
                let field = self.field(c.rate.unwrap_or(0));
                if r.is_nan() || r <= 0.0 {
                    return Err(bad(
                        self.file,
                        &field,
                        format!("must be above 0 requests/s, got {r}"),
                    ));
                }
                let cv = match (self.nonneg(c.cv, "")?, self.num(c.burstiness)?) {
                    (Some(cv), _) => cv,
                    (None, Some(b)) if b > 0.0 => 1.0 / b.sqrt(),
                    (None, Some(b)) => {
                        return Err(bad(
                            self.file,
                            &self.field(c.burstiness.unwrap_or(0)),
                            format!("must be above 0, got {b}"),
                        ))
                    }
                    (None, None) => 1.0,
                };
                (MeasuredLoad::Rate { rate_rps: r, cv }, cap)
            }
            (Some(r), _) if r.is_nan() || r < 0.0 => {
                return Err(bad(
                    self.file,
                    &self.field(c.rate.unwrap_or(0)),
                    format!("must be above 0 requests/s, got {r}"),
                ))
            }
            (_, Some(n)) => (MeasuredLoad::Concurrency { concurrency: n }, None),
            _ => {
                return Err(whole(
                    self.file,
                    format!(
                        "line {}: no load: give a rate [requests/s] or a concurrency",
                        self.line
                    ),
                ))
            }
        };
        let completed = self.count(c.completed)?;
        if completed == Some(0) {
            return Err(nothing_completed(
                self.file,
                &self.field(c.completed.unwrap_or(0)),
            ));
        }
        let duration_s = match c.duration {
            Some((col, scale)) => self.nonneg(Some(col), "")?.map(|x| x * scale),
            None => None,
        };
        let achieved = match self.nonneg(c.achieved, "requests/s")? {
            Some(a) => a,
            None => match (completed, duration_s, load) {
                (Some(n), Some(d), _) if d > 0.0 => f64::from(n) / d,
                (_, _, MeasuredLoad::Rate { rate_rps, .. }) => rate_rps,
                _ => {
                    return Err(bad(
                        self.file,
                        &format!("line {}, column 'achieved_rps'", self.line),
                        "is needed for a concurrency row (or completed and duration columns): \
                         the completed requests per second"
                            .into(),
                    ))
                }
            },
        };
        let need = |col: usize, what: &str| -> Result<f64, ImportError> {
            self.nonneg(Some(col), "tokens")?.ok_or_else(|| {
                bad(
                    self.file,
                    &self.field(col),
                    format!("is empty: the {what} [tokens] is required"),
                )
            })
        };
        let mean_prompt_tokens = need(c.prompt, "mean prompt length")?;
        let mean_output_tokens = need(c.output, "mean output length")?;
        let mut parts: [LatencyStats; 4] = Default::default();
        for &(col, m, s, scale) in &c.lat {
            let unit = if scale == 1.0 { "s" } else { "ms" };
            let Some(x) = self.nonneg(Some(col), unit)? else {
                continue;
            };
            let slot = &mut parts[m as usize];
            let x = x * scale;
            match s {
                Stat::Mean => slot.mean_s = Some(x),
                Stat::Median => slot.median_s = Some(x),
                Stat::Pct(p) => slot.percentiles.push((p, x)),
            }
        }
        let [ttft, tpot, itl, e2e]: [LatencyStats; 4] =
            parts.map(|s| stats(s.mean_s, s.median_s, s.percentiles));
        let prompt_spread = self.spread(c, Length::Prompt, mean_prompt_tokens)?;
        let output_spread = self.spread(c, Length::Output, mean_output_tokens)?;
        if [&ttft, &tpot, &itl, &e2e].iter().all(|s| s.is_empty()) {
            return Err(whole(
                self.file,
                format!("line {}: no latency value in this row", self.line),
            ));
        }
        Ok(MeasuredPoint {
            source: src.to_string(),
            format: Format::Table,
            load,
            completed: completed.unwrap_or(0),
            failed: self.count(c.failed)?.unwrap_or(0),
            duration_s: duration_s.unwrap_or(0.0),
            achieved_rps: achieved,
            mean_prompt_tokens,
            mean_output_tokens,
            ttft,
            tpot,
            itl,
            e2e,
            requests: Vec::new(),
            model: self.text(c.model).map(str::to_string),
            engine: self.text(c.engine).map(str::to_string),
            max_concurrency: cap,
            prompt_spread,
            output_spread,
            spec: None,
        })
    }

    /// The spread columns of one length, checked: lengths of at least 1 token, rising
    /// with the percent, and the mean between the minimum and the maximum.
    fn spread(&self, c: &Columns, which: Length, mean: f64) -> Result<LengthStats, ImportError> {
        let mut known: Vec<(f64, f64, usize)> = Vec::new();
        for &(col, w, pct) in &c.spread {
            if w != which {
                continue;
            }
            if let Some(x) = self.nonneg(Some(col), "tokens")? {
                if x < 1.0 {
                    return Err(bad(
                        self.file,
                        &self.field(col),
                        format!("must be at least 1 token, got {x}"),
                    ));
                }
                known.push((pct, x, col));
            }
        }
        known.sort_by(|a, b| a.0.total_cmp(&b.0));
        for w in known.windows(2) {
            if w[1].1 < w[0].1 {
                return Err(bad(
                    self.file,
                    &self.field(w[1].2),
                    format!(
                        "is {} tokens, below column '{}' ({} tokens): lengths must rise from the \
                         minimum through the percentiles to the maximum",
                        w[1].1, self.header[w[0].2], w[0].1
                    ),
                ));
            }
        }
        let mut out = LengthStats::default();
        for (pct, x, col) in known {
            if pct == 0.0 {
                out.min = Some(x);
                if mean < x {
                    return Err(self.mean_outside(col, mean, x, "minimum"));
                }
            } else if pct == 100.0 {
                out.max = Some(x);
                if mean > x {
                    return Err(self.mean_outside(col, mean, x, "maximum"));
                }
            } else {
                out.percentiles.push((pct, x));
            }
        }
        Ok(out)
    }

    fn mean_outside(&self, col: usize, mean: f64, x: f64, what: &str) -> ImportError {
        bad(
            self.file,
            &self.field(col),
            format!("the {what} length ({x} tokens) cannot lie beyond the mean ({mean} tokens)"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_latency_columns() {
        assert_eq!(normalize(" TTFT p50 (ms) "), "ttft_p50_ms");
        assert_eq!(normalize("\"Rate-RPS\""), "rate_rps");
        assert_eq!(
            latency_column("ttft_p50_ms"),
            Some((Metric::Ttft, Stat::Median, Some(1e-3)))
        );
        assert_eq!(
            latency_column("mean_tpot_ms"),
            Some((Metric::Tpot, Stat::Mean, Some(1e-3)))
        );
        assert_eq!(
            latency_column("e2el_p99.9_s"),
            Some((Metric::E2e, Stat::Pct(99.9), Some(1.0)))
        );
        assert_eq!(
            latency_column("request_latency_p999_s"),
            Some((Metric::E2e, Stat::Pct(99.9), Some(1.0)))
        );
        assert_eq!(
            latency_column("ttft_p99"),
            Some((Metric::Ttft, Stat::Pct(99.0), None))
        );
        assert_eq!(latency_column("prompt_tokens"), None);
        assert_eq!(latency_column("duration_s"), None);
    }
}
