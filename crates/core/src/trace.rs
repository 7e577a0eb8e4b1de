//! Import of public LLM-serving traces, summarised as they stream past.
//!
//! ```text
//!   bytes (any chunking) ──▶ lines ──▶ one row parser per format ──▶ TraceSummary
//!                                                   │                  hourly rates
//!                                   bad row: counted, first few kept   length histograms
//!                                                                      prefix reuse (Mooncake)
//! ```
//!
//! The formats, as their own repositories document them:
//! - **Azure LLM inference trace** (Azure/AzurePublicDataset, 2023 and 2024): CSV with the
//!   header `TIMESTAMP,ContextTokens,GeneratedTokens`; `TIMESTAMP` is a wall-clock time
//!   written `YYYY-MM-DD HH:MM:SS.fffffff` (100 ns digits). The hour of the day is the
//!   hour written in the timestamp, taken as it stands (the dataset does not name a time
//!   zone).
//! - **BurstGPT** (HPMLL/BurstGPT): CSV with the header `Timestamp,Model,Request tokens,
//!   Response tokens,Total tokens,Log Type`; `Timestamp` is seconds from 0:00:00 on the
//!   trace's first day, so hour of day = ⌊t / 3600⌋ mod 24. Rows with `Response tokens`
//!   0 are failed requests: they count as arrivals but not in the output lengths.
//!   Columns are found by name, so newer files with extra columns also read.
//! - **Mooncake** (kvcache-ai/Mooncake, FAST'25 traces): JSON Lines with `timestamp`
//!   (milliseconds since the first request), `input_length`, `output_length` and
//!   `hash_ids`, one id per block of 512 prompt tokens; two requests sharing an id share
//!   that block's prefix. The clock starts at the first request, so its hours are hours
//!   since the start of the trace, not clock hours.
//!
//! Nothing is held but the summary and the first [`MAX_TRACE_ROWS`] rows, which a plan
//! can replay ([`TraceSummary::replay_into`]): the parser keeps one partial line,
//! fixed-size counters and, for Mooncake, the set of block ids seen (bounded by
//! [`MAX_DISTINCT_BLOCKS`]). A row that cannot be read is counted with its line number
//! and the reason (the first [`MAX_BAD_EXAMPLES`] are kept); it never stops the import.
//! Lines longer than [`MAX_LINE_BYTES`] are bad rows; after [`MAX_ROWS`] rows the rest of
//! the input is ignored and the summary says so.
//!
//! Drive it with [`TraceSummarizer::feed`] (bytes in chunks of any size: a browser's
//! `File` stream or a worker's slices) and [`TraceSummarizer::finish`], or with
//! [`summarize_reader`] for anything that is [`std::io::BufRead`].

use crate::plan::{
    Arrival, LengthDist, LengthSpec, Plan, TraceRow, MAX_TOKENS, MAX_TRACE_ROWS, TRACE_BLOCK_TOKENS,
};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// Longest line read [bytes]; longer lines are bad rows.
pub const MAX_LINE_BYTES: usize = 1 << 20;
/// Most data rows read; the rest of the input is ignored (and reported).
pub const MAX_ROWS: u64 = 50_000_000;
/// Bad rows kept as examples (all are counted).
pub const MAX_BAD_EXAMPLES: usize = 5;
/// Most distinct Mooncake block ids remembered; later new ids are not remembered.
pub const MAX_DISTINCT_BLOCKS: usize = 4_000_000;
/// Length histogram bins: bin 0 holds 0, bin k ≥ 1 holds [2^(k−1), 2^k) tokens.
pub const LENGTH_BINS: usize = 22;

/// A trace file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceFormat {
    /// Azure LLM inference trace CSV (`TIMESTAMP,ContextTokens,GeneratedTokens`).
    Azure,
    /// BurstGPT CSV (`Timestamp,Model,Request tokens,Response tokens,...`).
    BurstGpt,
    /// Mooncake JSON Lines (`timestamp`, `input_length`, `output_length`, `hash_ids`).
    Mooncake,
}

impl TraceFormat {
    /// The format's name as users write it.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Azure => "azure",
            TraceFormat::BurstGpt => "burstgpt",
            TraceFormat::Mooncake => "mooncake",
        }
    }

    /// Parses `azure`, `burstgpt` or `mooncake`.
    pub fn parse(s: &str) -> Option<TraceFormat> {
        match s.trim().to_ascii_lowercase().as_str() {
            "azure" => Some(TraceFormat::Azure),
            "burstgpt" | "burst-gpt" => Some(TraceFormat::BurstGpt),
            "mooncake" => Some(TraceFormat::Mooncake),
            _ => None,
        }
    }
}

/// Why a trace could not be summarised at all (single bad rows are not errors).
#[derive(Debug, Clone, PartialEq)]
pub enum TraceError {
    /// The first line is none of the known formats; name the format or fix the header.
    UnknownFormat {
        /// The first line, shortened.
        first_line: String,
    },
    /// The header lacks a column the format needs.
    MissingColumn {
        /// The format.
        format: TraceFormat,
        /// The column.
        column: &'static str,
    },
    /// No row could be read.
    NoRows {
        /// Bad rows seen.
        bad_rows: u64,
        /// Why the first bad row was bad, if there was one.
        first_problem: Option<BadRow>,
    },
    /// Reading the input failed.
    Io(String),
}

impl std::fmt::Display for TraceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TraceError::UnknownFormat { first_line } => write!(
                f,
                "unknown trace format (first line '{first_line}'): expected an Azure CSV (TIMESTAMP,ContextTokens,GeneratedTokens), a BurstGPT CSV (Timestamp,Model,Request tokens,Response tokens,...) or Mooncake JSON lines"
            ),
            TraceError::MissingColumn { format, column } => {
                write!(f, "{} trace: the header has no '{column}' column", format.name())
            }
            TraceError::NoRows {
                bad_rows,
                first_problem,
            } => match first_problem {
                Some(b) => write!(
                    f,
                    "no readable rows ({bad_rows} bad; line {}: {})",
                    b.line, b.reason
                ),
                None => write!(f, "the trace has no rows"),
            },
            TraceError::Io(e) => write!(f, "cannot read the trace: {e}"),
        }
    }
}

impl std::error::Error for TraceError {}

/// One row that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BadRow {
    /// 1-based line number in the input.
    pub line: u64,
    /// Why.
    pub reason: String,
}

/// A length distribution, summarised.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LengthSummary {
    /// Values counted.
    pub count: u64,
    /// Mean [tokens].
    pub mean: f64,
    /// Smallest [tokens].
    pub min: u32,
    /// Largest [tokens].
    pub max: u32,
    /// exp(mean of ln x) over x ≥ 1: the median of a fitted lognormal [tokens].
    pub log_median: f64,
    /// Standard deviation of ln x over x ≥ 1: the sigma of a fitted lognormal.
    pub log_sigma: f64,
    /// Counts per bin: bin 0 holds 0, bin k ≥ 1 holds [2^(k−1), 2^k) tokens (the last
    /// bin also holds everything longer).
    pub histogram: Vec<u64>,
}

/// What a trace says about the traffic.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceSummary {
    /// The format read.
    pub format: TraceFormat,
    /// Rows read.
    pub rows: u64,
    /// Rows that could not be read.
    pub bad_rows: u64,
    /// The first few bad rows, with why.
    pub bad_examples: Vec<BadRow>,
    /// True when the input had more than [`MAX_ROWS`] rows and the rest was ignored.
    pub truncated: bool,
    /// Time from the first to the last arrival [s].
    pub span_s: f64,
    /// Mean arrival rate over the span [requests/s].
    pub mean_rate_rps: f64,
    /// Arrivals per hour of the day (24 counts).
    pub hourly_count: Vec<u64>,
    /// Seconds of each hour of the day the trace covers (first to last arrival) [s].
    pub hourly_covered_s: Vec<f64>,
    /// Mean rate per hour of the day, where covered for at least a minute [requests/s].
    pub hourly_rate_rps: Vec<Option<f64>>,
    /// Prompt lengths [tokens].
    pub prompt: LengthSummary,
    /// Output lengths [tokens] (BurstGPT failures, with 0, left out).
    pub output: LengthSummary,
    /// Rows with 0 output tokens (BurstGPT: failed requests).
    pub zero_output_rows: u64,
    /// Prefix reuse, for a trace with block hashes (Mooncake).
    pub prefix: Option<PrefixReuse>,
    /// The first [`MAX_TRACE_ROWS`] rows read, in the file's order, for a replay: times
    /// from the earliest of them, Mooncake's block ids renumbered from 0 in the order
    /// first met (ids past the prompt's last block left out). Not in the JSON summary.
    #[serde(skip)]
    pub replay: Vec<TraceRow>,
    /// Rows read but not kept for a replay (past the first [`MAX_TRACE_ROWS`]).
    pub replay_left_out: u64,
}

/// Prefix reuse measured from Mooncake `hash_ids`, as an unbounded cache would see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrefixReuse {
    /// Tokens per block.
    pub block_tokens: u32,
    /// Blocks over all requests.
    pub blocks: u64,
    /// Blocks whose id was seen in an earlier request (anywhere in the prompt) [0..1].
    pub block_reuse: f64,
    /// Share of requests whose first block was seen before (a prefix-cache hit) [0..1].
    pub hit_rate: f64,
    /// Mean cached prefix of a hit: the leading run of seen blocks × block size, at most
    /// the prompt minus one token [tokens].
    pub mean_hit_prefix_tokens: f64,
    /// Share of all prompt tokens served from the cache [0..1].
    pub token_reuse: f64,
    /// True when more than [`MAX_DISTINCT_BLOCKS`] ids appeared and later new ones
    /// were not remembered (reuse is then understated).
    pub saturated: bool,
}

#[derive(Debug, Clone, Default)]
struct LengthAcc {
    count: u64,
    sum: f64,
    min: u32,
    max: u32,
    log_n: u64,
    log_sum: f64,
    log_sq: f64,
    bins: [u64; LENGTH_BINS],
}

impl LengthAcc {
    fn add(&mut self, x: u32) {
        if self.count == 0 || x < self.min {
            self.min = x;
        }
        self.max = self.max.max(x);
        self.count += 1;
        self.sum += x as f64;
        if x >= 1 {
            let l = libm::log(x as f64);
            self.log_n += 1;
            self.log_sum += l;
            self.log_sq += l * l;
        }
        let bin = if x == 0 {
            0
        } else {
            (32 - x.leading_zeros() as usize).min(LENGTH_BINS - 1)
        };
        self.bins[bin] += 1;
    }

    fn summary(&self) -> LengthSummary {
        let (log_median, log_sigma) = if self.log_n > 0 {
            let m = self.log_sum / self.log_n as f64;
            let var = (self.log_sq / self.log_n as f64 - m * m).max(0.0);
            (libm::exp(m), libm::sqrt(var))
        } else {
            (0.0, 0.0)
        };
        LengthSummary {
            count: self.count,
            mean: if self.count > 0 {
                self.sum / self.count as f64
            } else {
                0.0
            },
            min: self.min,
            max: self.max,
            log_median,
            log_sigma,
            histogram: self.bins.to_vec(),
        }
    }
}

/// Column positions of a CSV format.
#[derive(Debug, Clone, Copy)]
struct Columns {
    time: usize,
    prompt: usize,
    output: usize,
}

/// The streaming summariser: feed bytes, then finish.
#[derive(Debug, Clone)]
pub struct TraceSummarizer {
    format: Option<TraceFormat>,
    columns: Option<Columns>,
    partial: Vec<u8>,
    /// The current line is longer than the limit: skip to its end.
    overlong: bool,
    line: u64,
    rows: u64,
    bad: u64,
    examples: Vec<BadRow>,
    truncated: bool,
    fatal: Option<TraceError>,
    t_first: f64,
    t_last: f64,
    /// Arrivals per hour of the day.
    hourly: [u64; 24],
    prompt: LengthAcc,
    output: LengthAcc,
    zero_output: u64,
    blocks_seen: HashSet<u64>,
    blocks: u64,
    blocks_reused: u64,
    hits: u64,
    hit_tokens: f64,
    prompt_tokens_total: f64,
    saturated: bool,
    /// The rows kept for a replay, times as read.
    kept: Vec<TraceRow>,
    /// Mooncake ids of the kept rows, renumbered in the order first met.
    kept_ids: HashMap<u64, u32>,
}

impl TraceSummarizer {
    /// A summariser that detects the format from the first line.
    pub fn new() -> TraceSummarizer {
        TraceSummarizer {
            format: None,
            columns: None,
            partial: Vec::new(),
            overlong: false,
            line: 0,
            rows: 0,
            bad: 0,
            examples: Vec::new(),
            truncated: false,
            fatal: None,
            t_first: f64::INFINITY,
            t_last: f64::NEG_INFINITY,
            hourly: [0; 24],
            prompt: LengthAcc::default(),
            output: LengthAcc::default(),
            zero_output: 0,
            blocks_seen: HashSet::new(),
            blocks: 0,
            blocks_reused: 0,
            hits: 0,
            hit_tokens: 0.0,
            prompt_tokens_total: 0.0,
            saturated: false,
            kept: Vec::new(),
            kept_ids: HashMap::new(),
        }
    }

    /// A summariser for a known format (a CSV still needs its header line).
    pub fn with_format(format: TraceFormat) -> TraceSummarizer {
        let mut s = TraceSummarizer::new();
        s.format = Some(format);
        s
    }

    /// Rows read so far (for progress).
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Takes the next chunk of bytes; lines may span chunks.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if self.fatal.is_some() || self.truncated {
                return;
            }
            match bytes.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    self.push_partial(&bytes[..i]);
                    bytes = &bytes[i + 1..];
                    self.end_line();
                }
                None => {
                    self.push_partial(bytes);
                    return;
                }
            }
        }
    }

    fn push_partial(&mut self, b: &[u8]) {
        if self.overlong {
            return;
        }
        if self.partial.len() + b.len() > MAX_LINE_BYTES {
            self.overlong = true;
            self.partial.clear();
        } else {
            self.partial.extend_from_slice(b);
        }
    }

    fn end_line(&mut self) {
        self.line += 1;
        if self.overlong {
            self.overlong = false;
            self.bad_row(format!("longer than {MAX_LINE_BYTES} bytes"));
            return;
        }
        let bytes = std::mem::take(&mut self.partial);
        match std::str::from_utf8(&bytes) {
            Ok(s) => self.handle_line(s.trim_end_matches('\r')),
            Err(_) => self.bad_row("not UTF-8 text".into()),
        }
        self.partial = bytes;
        self.partial.clear();
    }

    fn bad_row(&mut self, reason: String) {
        self.bad += 1;
        if self.examples.len() < MAX_BAD_EXAMPLES {
            self.examples.push(BadRow {
                line: self.line,
                reason,
            });
        }
    }

    fn handle_line(&mut self, line: &str) {
        let text = line.trim_start_matches('\u{feff}');
        if text.trim().is_empty() {
            return;
        }
        if self.columns.is_none() && self.format != Some(TraceFormat::Mooncake) {
            if self.rows == 0 && self.bad == 0 && self.line_is_header(text) {
                return;
            }
            if self.fatal.is_some() {
                return;
            }
        }
        if self.rows >= MAX_ROWS {
            self.truncated = true;
            return;
        }
        let parsed = match self.format {
            Some(TraceFormat::Mooncake) => self.parse_mooncake(text),
            Some(_) => self.parse_csv(text),
            None => return,
        };
        match parsed {
            Ok(()) => self.rows += 1,
            Err(reason) => self.bad_row(reason),
        }
    }

    /// Reads the first non-empty line: a CSV header, or the first Mooncake row.
    /// Returns true when the line was a header (consumed).
    fn line_is_header(&mut self, text: &str) -> bool {
        if self.format.is_none() && text.trim_start().starts_with('{') {
            self.format = Some(TraceFormat::Mooncake);
            return false;
        }
        let cols: Vec<String> = crate::cells::split_cells(text, ',')
            .iter()
            .map(|c| c.to_ascii_lowercase())
            .collect();
        let find = |name: &str| cols.iter().position(|c| c == name);
        let format = match self.format {
            Some(f) => f,
            None if find("contexttokens").is_some() => TraceFormat::Azure,
            None if find("request tokens").is_some() => TraceFormat::BurstGpt,
            None => {
                let mut first: String = text.chars().take(80).collect();
                if text.chars().count() > 80 {
                    first.push('…');
                }
                self.fatal = Some(TraceError::UnknownFormat { first_line: first });
                return true;
            }
        };
        self.format = Some(format);
        let names: [&'static str; 3] = match format {
            TraceFormat::Azure => ["timestamp", "contexttokens", "generatedtokens"],
            TraceFormat::BurstGpt => ["timestamp", "request tokens", "response tokens"],
            TraceFormat::Mooncake => return false,
        };
        let mut idx = [0usize; 3];
        for (k, name) in names.iter().enumerate() {
            match find(name) {
                Some(i) => idx[k] = i,
                None => {
                    let column = match (format, k) {
                        (TraceFormat::Azure, 0) => "TIMESTAMP",
                        (TraceFormat::Azure, 1) => "ContextTokens",
                        (TraceFormat::Azure, _) => "GeneratedTokens",
                        (_, 0) => "Timestamp",
                        (_, 1) => "Request tokens",
                        _ => "Response tokens",
                    };
                    self.fatal = Some(TraceError::MissingColumn { format, column });
                    return true;
                }
            }
        }
        self.columns = Some(Columns {
            time: idx[0],
            prompt: idx[1],
            output: idx[2],
        });
        true
    }

    fn parse_csv(&mut self, text: &str) -> Result<(), String> {
        let Some(c) = self.columns else {
            return Err("no header line before the rows".into());
        };
        let fields = crate::cells::split_cells(text, ',');
        let need = c.time.max(c.prompt).max(c.output);
        if fields.len() <= need {
            return Err(format!(
                "{} fields, expected at least {}",
                fields.len(),
                need + 1
            ));
        }
        let (t, hour) = match self.format {
            Some(TraceFormat::Azure) => parse_wall_clock(&fields[c.time])?,
            _ => {
                let t = parse_seconds(&fields[c.time], "Timestamp")?;
                (t, hour_of(t))
            }
        };
        let p = parse_tokens(&fields[c.prompt], "prompt tokens")?;
        let o = parse_tokens(&fields[c.output], "output tokens")?;
        self.record(t, hour, p, o);
        self.keep(t, p, o, &[]);
        Ok(())
    }

    fn parse_mooncake(&mut self, text: &str) -> Result<(), String> {
        #[derive(Deserialize)]
        struct Row {
            timestamp: f64,
            input_length: f64,
            output_length: f64,
            #[serde(default)]
            hash_ids: Vec<u64>,
        }
        let row: Row = serde_json::from_str(text).map_err(|e| {
            let mut m = e.to_string();
            m.truncate(120);
            format!("not a Mooncake JSON row: {m}")
        })?;
        if !(row.timestamp.is_finite() && row.timestamp >= 0.0) {
            return Err("timestamp must be a number of milliseconds ≥ 0".into());
        }
        let p = whole_tokens(row.input_length, "input_length")?;
        let o = whole_tokens(row.output_length, "output_length")?;
        let t = row.timestamp / 1000.0;
        self.record(t, hour_of(t), p, o);
        self.keep(t, p, o, &row.hash_ids);
        // Prefix reuse: blocks seen in earlier requests; the leading run is what a
        // prefix cache can serve.
        let mut leading = 0u64;
        let mut still_leading = true;
        for &id in &row.hash_ids {
            self.blocks += 1;
            let seen = self.blocks_seen.contains(&id);
            if seen {
                self.blocks_reused += 1;
            }
            if still_leading && seen {
                leading += 1;
            } else {
                still_leading = false;
            }
        }
        // Remember this request's blocks after it is counted, so repeats within one
        // request do not count as reuse.
        for &id in &row.hash_ids {
            if self.blocks_seen.len() < MAX_DISTINCT_BLOCKS {
                self.blocks_seen.insert(id);
            } else if !self.blocks_seen.contains(&id) {
                self.saturated = true;
            }
        }
        self.prompt_tokens_total += p as f64;
        if leading > 0 {
            self.hits += 1;
            let cached = (leading * TRACE_BLOCK_TOKENS as u64).min(p.saturating_sub(1) as u64);
            self.hit_tokens += cached as f64;
        }
        Ok(())
    }

    /// Keeps a row for a replay while fewer than [`MAX_TRACE_ROWS`] are kept, with the
    /// block ids that its prompt reaches, renumbered.
    fn keep(&mut self, t: f64, prompt: u32, output: u32, ids: &[u64]) {
        if self.kept.len() >= MAX_TRACE_ROWS {
            return;
        }
        let reach = prompt.div_ceil(TRACE_BLOCK_TOKENS) as usize;
        let blocks = ids
            .iter()
            .take(reach)
            .map(|&id| {
                let next = self.kept_ids.len() as u32;
                *self.kept_ids.entry(id).or_insert(next)
            })
            .collect();
        self.kept.push(TraceRow {
            arrival_s: t,
            prompt_tokens: prompt,
            output_tokens: output,
            blocks,
        });
    }

    fn record(&mut self, t: f64, hour: usize, prompt: u32, output: u32) {
        self.t_first = self.t_first.min(t);
        self.t_last = self.t_last.max(t);
        self.hourly[hour] += 1;
        self.prompt.add(prompt);
        if output == 0 {
            self.zero_output += 1;
        } else {
            self.output.add(output);
        }
    }

    /// Ends the input and returns the summary.
    pub fn finish(mut self) -> Result<TraceSummary, TraceError> {
        if !self.partial.is_empty() || self.overlong {
            self.end_line();
        }
        if let Some(e) = self.fatal.take() {
            return Err(e);
        }
        let Some(format) = self.format else {
            return Err(TraceError::NoRows {
                bad_rows: self.bad,
                first_problem: self.examples.first().cloned(),
            });
        };
        if self.rows == 0 {
            return Err(TraceError::NoRows {
                bad_rows: self.bad,
                first_problem: self.examples.first().cloned(),
            });
        }
        let span = (self.t_last - self.t_first).max(0.0);
        let covered = self.hour_coverage();
        let hourly_rate = (0..24)
            .map(|h| (covered[h] >= 60.0).then(|| self.hourly[h] as f64 / covered[h]))
            .collect();
        let prefix = (format == TraceFormat::Mooncake && self.blocks > 0).then(|| PrefixReuse {
            block_tokens: TRACE_BLOCK_TOKENS,
            blocks: self.blocks,
            block_reuse: self.blocks_reused as f64 / self.blocks as f64,
            hit_rate: self.hits as f64 / self.rows as f64,
            mean_hit_prefix_tokens: if self.hits > 0 {
                self.hit_tokens / self.hits as f64
            } else {
                0.0
            },
            token_reuse: if self.prompt_tokens_total > 0.0 {
                self.hit_tokens / self.prompt_tokens_total
            } else {
                0.0
            },
            saturated: self.saturated,
        });
        Ok(TraceSummary {
            format,
            rows: self.rows,
            bad_rows: self.bad,
            bad_examples: self.examples.clone(),
            truncated: self.truncated,
            span_s: span,
            mean_rate_rps: if span > 0.0 {
                self.rows as f64 / span
            } else {
                0.0
            },
            hourly_count: self.hourly.to_vec(),
            hourly_covered_s: covered.to_vec(),
            hourly_rate_rps: hourly_rate,
            prompt: self.prompt.summary(),
            output: self.output.summary(),
            zero_output_rows: self.zero_output,
            prefix,
            replay_left_out: self.rows - self.kept.len() as u64,
            replay: {
                let t0 = self
                    .kept
                    .iter()
                    .map(|r| r.arrival_s)
                    .fold(f64::INFINITY, f64::min);
                let mut rows = std::mem::take(&mut self.kept);
                for r in &mut rows {
                    r.arrival_s -= t0;
                }
                rows
            },
        })
    }

    /// Seconds of each hour of the day inside [first arrival, last arrival].
    fn hour_coverage(&self) -> [f64; 24] {
        let mut out = [0.0; 24];
        if !self.t_first.is_finite() {
            return out;
        }
        // Every clock here counts whole days from a midnight (wall clock since 1970,
        // BurstGPT since its first day, Mooncake since its first request), so the time
        // of day is t mod 86,400.
        let start = self.t_first;
        let span = (self.t_last - self.t_first).max(0.0);
        let mut x = start.rem_euclid(86_400.0);
        let mut left = span;
        // Whole days add 3600 s to every hour.
        let days = libm::floor(left / 86_400.0);
        if days > 0.0 {
            for o in out.iter_mut() {
                *o += days * 3600.0;
            }
            left -= days * 86_400.0;
        }
        while left > 0.0 {
            let h = ((x / 3600.0) as usize).min(23);
            let end = (h as f64 + 1.0) * 3600.0;
            let take = (end - x).min(left);
            out[h] += take;
            left -= take;
            x = if end >= 86_400.0 { 0.0 } else { end };
        }
        out
    }
}

impl Default for TraceSummarizer {
    fn default() -> Self {
        TraceSummarizer::new()
    }
}

/// Summarises everything `reader` yields, in 64 KiB reads.
pub fn summarize_reader<R: std::io::BufRead>(
    mut reader: R,
    format: Option<TraceFormat>,
) -> Result<TraceSummary, TraceError> {
    let mut s = match format {
        Some(f) => TraceSummarizer::with_format(f),
        None => TraceSummarizer::new(),
    };
    loop {
        let buf = reader
            .fill_buf()
            .map_err(|e| TraceError::Io(e.to_string()))?;
        if buf.is_empty() {
            break;
        }
        let n = buf.len();
        s.feed(buf);
        reader.consume(n);
        if s.truncated || s.fatal.is_some() {
            break;
        }
    }
    s.finish()
}

fn hour_of(t_s: f64) -> usize {
    (libm::floor(t_s / 3600.0).rem_euclid(24.0) as usize).min(23)
}

fn parse_seconds(s: &str, what: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(format!(
            "{what} '{}' is not a number of seconds ≥ 0",
            short(s)
        )),
    }
}

fn whole_tokens(x: f64, what: &str) -> Result<u32, String> {
    if x.is_finite() && x >= 0.0 && x.fract() == 0.0 && x <= MAX_TOKENS as f64 {
        Ok(x as u32)
    } else {
        Err(format!(
            "{what} {x} is not a whole number from 0 to {MAX_TOKENS}"
        ))
    }
}

fn parse_tokens(s: &str, what: &str) -> Result<u32, String> {
    match s.parse::<f64>() {
        Ok(x) => whole_tokens(x, what),
        Err(_) => Err(format!("{what} '{}' is not a number", short(s))),
    }
}

fn short(s: &str) -> String {
    let mut o: String = s.chars().take(40).collect();
    if s.chars().count() > 40 {
        o.push('…');
    }
    o
}

/// Parses `YYYY-MM-DD HH:MM:SS[.fffffff]` into seconds since 1970-01-01 (the proleptic
/// Gregorian calendar, no time zone) and the hour of the day.
fn parse_wall_clock(s: &str) -> Result<(f64, usize), String> {
    let bad = || {
        format!(
            "TIMESTAMP '{}' is not 'YYYY-MM-DD HH:MM:SS[.fraction]'",
            short(s)
        )
    };
    let (date, time) = s.split_once([' ', 'T']).ok_or_else(bad)?;
    let mut d = date.split('-');
    let (y, mo, da) = (d.next(), d.next(), d.next());
    let num = |x: Option<&str>| x.and_then(|v| v.parse::<i64>().ok());
    let (Some(y), Some(mo), Some(da)) = (num(y), num(mo), num(da)) else {
        return Err(bad());
    };
    let time = time.trim_end_matches('Z');
    let mut parts = time.split(':');
    let (h, mi, sec) = (parts.next(), parts.next(), parts.next());
    let (Some(h), Some(mi)) = (num(h), num(mi)) else {
        return Err(bad());
    };
    let sec: f64 = sec.and_then(|v| v.parse().ok()).ok_or_else(bad)?;
    if !((1..=12).contains(&mo)
        && (1..=31).contains(&da)
        && (0..24).contains(&h)
        && (0..60).contains(&mi)
        && (0.0..61.0).contains(&sec))
    {
        return Err(bad());
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let yy = if mo <= 2 { y - 1 } else { y };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + da - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let t = days as f64 * 86_400.0 + (h * 3600 + mi * 60) as f64 + sec;
    Ok((t, h as usize))
}

impl TraceSummary {
    /// The plan with the trace's lengths and (for Mooncake) its prefix reuse: prompt and
    /// output become lognormals fitted in log space (median exp(mean ln x), sigma the
    /// standard deviation of ln x), clipped to the observed range; the prefix cache gets
    /// the measured hit rate and mean cached prefix. Returns what was changed, in words.
    pub fn apply_to(&self, plan: &mut Plan) -> Vec<String> {
        let mut changed = Vec::new();
        for (name, l, spec) in [
            ("prompt", &self.prompt, &mut plan.traffic.prompt),
            ("output", &self.output, &mut plan.traffic.output),
        ] {
            if l.count == 0 || l.log_median < 1.0 {
                continue;
            }
            let min = l.min.max(1);
            let max = l.max.clamp(min, MAX_TOKENS);
            *spec = LengthSpec {
                dist: LengthDist::LogNormal {
                    median: l.log_median.min(MAX_TOKENS as f64),
                    sigma: l.log_sigma.min(5.0),
                },
                min,
                max,
            };
            changed.push(format!(
                "{name} lengths: lognormal median {:.0}, sigma {:.2}, {min}..{max} (mean {:.0} in the trace)",
                l.log_median, l.log_sigma, l.mean
            ));
        }
        if let Some(p) = &self.prefix {
            plan.traffic.prefix_hit_rate = p.hit_rate.clamp(0.0, 1.0);
            plan.traffic.prefix_tokens = libm::round(p.mean_hit_prefix_tokens) as u32;
            changed.push(format!(
                "prefix cache: hit rate {:.3}, {} cached tokens per hit (Mooncake block hashes)",
                plan.traffic.prefix_hit_rate, plan.traffic.prefix_tokens
            ));
        }
        changed
    }

    /// The plan replaying the trace's kept rows ([`TraceSummary::replay`]): arrivals in
    /// the trace's own pattern, scaled to whatever rate is simulated; each request's
    /// prompt and output lengths; and, when the rows name their blocks (Mooncake), the
    /// blocks, from which the prefix cache's hits follow (the typed hit rate is then
    /// set to 0). A prefix structure cannot go with a replay and is removed. Returns
    /// what was changed, in words.
    pub fn replay_into(&self, plan: &mut Plan) -> Vec<String> {
        let rows = &self.replay;
        let t = &mut plan.traffic;
        t.trace = rows.clone();
        t.arrival = Arrival::Trace;
        (t.prompt, t.output) = crate::plan::replayed_lengths(rows);
        let mut changed = vec![format!(
            "requests: the trace's {} {}, replayed in its arrival pattern at the simulated rate, with their own prompt and output lengths",
            crate::format::thousands(rows.len() as i64),
            if self.replay_left_out > 0 {
                format!(
                    "first rows ({} later rows left out)",
                    crate::format::thousands(self.replay_left_out as i64)
                )
            } else {
                "rows".to_string()
            }
        )];
        if t.sharing.take().is_some() {
            changed.push("prefix structure: removed (a replay brings its own prompts)".into());
        }
        let blocks: usize = rows.iter().map(|r| r.blocks.len()).sum();
        if blocks > 0 {
            t.prefix_tokens = 0;
            t.prefix_hit_rate = 0.0;
            changed.push(format!(
                "prefix cache: hits follow from the trace's {} block ids of {} tokens, not from a typed hit rate",
                crate::format::thousands(blocks as i64),
                TRACE_BLOCK_TOKENS
            ));
        }
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summarize(text: &str) -> Result<TraceSummary, TraceError> {
        summarize_reader(text.as_bytes(), None)
    }

    #[test]
    fn wall_clock_parses() {
        let (t, h) = parse_wall_clock("2023-11-16 18:17:03.9799600").unwrap();
        // 2023-11-16 is day 19677 since 1970-01-01.
        assert_eq!(h, 18);
        assert!((t - (19_677.0 * 86_400.0 + 18.0 * 3600.0 + 17.0 * 60.0 + 3.97996)).abs() < 1e-6);
        assert!(parse_wall_clock("2023-13-01 00:00:00").is_err());
        assert!(parse_wall_clock("yesterday").is_err());
    }

    #[test]
    fn chunking_does_not_matter() {
        let text = "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9799600,4808,10\n2023-11-16 18:17:04.0319600,3180,8\nbroken\n";
        let whole = summarize(text).unwrap();
        let mut s = TraceSummarizer::new();
        for b in text.as_bytes().chunks(3) {
            s.feed(b);
        }
        assert_eq!(s.finish().unwrap(), whole);
        assert_eq!(whole.rows, 2);
        assert_eq!(whole.bad_rows, 1);
        assert_eq!(whole.bad_examples[0].line, 4);
    }

    #[test]
    fn quoted_cells_read_as_every_table_reads_them() {
        // A spreadsheet's export quotes the header and any cell with a comma in it.
        let text = "\"Timestamp\",\"Model\",\"Request tokens\",\"Response tokens\"\n\
                    5.0,\"ChatGPT, v2\",100,20\n6.0,GPT-4,\"300\",40\n";
        let s = summarize(text).unwrap();
        assert_eq!((s.rows, s.bad_rows), (2, 0), "{:?}", s.bad_examples);
        assert_eq!(s.prompt.max, 300);
    }

    #[test]
    fn overlong_lines_are_bad_rows() {
        let mut text =
            String::from("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n");
        text.push_str(&"9".repeat(MAX_LINE_BYTES + 10));
        text.push_str("\n5.0,ChatGPT,100,20,120,Conversation log\n");
        let s = summarize(&text).unwrap();
        assert_eq!((s.rows, s.bad_rows), (1, 1));
        assert!(s.bad_examples[0].reason.contains("longer than"));
    }

    #[test]
    fn unknown_format_and_empty_input_are_errors() {
        assert!(matches!(
            summarize("a,b,c\n1,2,3\n"),
            Err(TraceError::UnknownFormat { .. })
        ));
        assert!(matches!(summarize(""), Err(TraceError::NoRows { .. })));
        let e = summarize("Timestamp,Model,Request tokens,Total tokens\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "burstgpt trace: the header has no 'Response tokens' column"
        );
    }

    #[test]
    fn a_replay_keeps_the_rows_with_their_blocks_renumbered() {
        // Ids past the prompt's last block are left out (600 tokens reach 2 blocks);
        // times count from the earliest row, which need not come first.
        let text = "{\"timestamp\": 5000, \"input_length\": 1100, \"output_length\": 20, \"hash_ids\": [90, 91, 92]}\n\
                    {\"timestamp\": 2000, \"input_length\": 600, \"output_length\": 0, \"hash_ids\": [90, 77, 78, 79]}\n\
                    {\"timestamp\": 9000, \"input_length\": 1300, \"output_length\": 1}\n";
        let t = summarize(text).unwrap();
        let rows: Vec<(f64, u32, u32, Vec<u32>)> = t
            .replay
            .iter()
            .map(|r| {
                (
                    r.arrival_s,
                    r.prompt_tokens,
                    r.output_tokens,
                    r.blocks.clone(),
                )
            })
            .collect();
        assert_eq!(
            rows,
            vec![
                (3.0, 1100, 20, vec![0, 1, 2]),
                (0.0, 600, 0, vec![0, 3]),
                (7.0, 1300, 1, vec![]),
            ]
        );
        assert_eq!(t.replay_left_out, 0);
        let mut plan = Plan::default();
        plan.traffic.prefix_hit_rate = 0.5;
        plan.traffic.prefix_tokens = 300;
        let words = t.replay_into(&mut plan);
        assert_eq!(plan.traffic.arrival, Arrival::Trace);
        assert_eq!(
            (plan.traffic.prompt.dist, plan.traffic.prompt.max),
            (LengthDist::Trace, 1300)
        );
        assert_eq!((plan.traffic.output.min, plan.traffic.output.max), (1, 20));
        assert_eq!(
            (plan.traffic.prefix_hit_rate, plan.traffic.prefix_tokens),
            (0.0, 0)
        );
        assert_eq!(words.len(), 2, "{words:?}");
        assert!(words[1].contains("5 block ids of 512 tokens"), "{words:?}");
        plan.validate().expect("a replay is a valid plan");
        // The typed hit rate cannot go with block ids, nor lengths other than the trace's.
        let mut typed = plan.clone();
        typed.traffic.prefix_hit_rate = 0.3;
        assert_eq!(
            typed.validate().unwrap_err().field,
            "traffic.prefix_hit_rate"
        );
        let mut drawn = plan.clone();
        drawn.traffic.prompt.dist = LengthDist::Fixed { tokens: 500 };
        assert_eq!(drawn.validate().unwrap_err().field, "traffic.prompt.dist");
        let mut long = plan.clone();
        long.traffic.trace[1].blocks.push(9);
        let e = long.validate().unwrap_err();
        assert_eq!(e.field, "traffic.trace.blocks");
        assert!(
            e.message
                .contains("row 1: 3 block ids for a prompt of 600 tokens"),
            "{e}"
        );
        // A CSV trace replays without blocks and keeps the typed hit rate.
        let csv = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5.0,ChatGPT,100,20,120,Conversation log\n";
        let mut plan = Plan::default();
        plan.traffic.prefix_hit_rate = 0.5;
        plan.traffic.prefix_tokens = 30;
        let words = summarize(csv).unwrap().replay_into(&mut plan);
        assert_eq!(words.len(), 1);
        assert_eq!(plan.traffic.prefix_hit_rate, 0.5);
        plan.validate().expect("valid");
    }

    #[test]
    fn coverage_of_a_whole_day_is_an_hour_each() {
        // BurstGPT rows every 60 s for exactly one day from 0:00.
        let mut text =
            String::from("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n");
        for i in 0..=1440 {
            text.push_str(&format!("{},GPT-4,100,10,110,API log\n", i * 60));
        }
        let s = summarize(&text).unwrap();
        for h in 0..24 {
            assert!((s.hourly_covered_s[h] - 3600.0).abs() < 1e-6, "hour {h}");
            let r = s.hourly_rate_rps[h].unwrap();
            assert!(
                (r - 1.0 / 60.0).abs() < 1e-3 / 60.0 + 1e-9 || h == 0,
                "hour {h}: {r}"
            );
        }
    }
}
