//! Measured benchmark results: importers for `vllm bench serve` result JSON, GuideLLM's
//! JSON report and a plain CSV/TSV table, into one [`MeasuredSet`].
//!
//! ```text
//!   files (name, bytes) ──sniff──▶ vllm | guidellm | table ──▶ MeasuredPoint …
//!                                                              │ one model, one engine?
//!                                                              ▼
//!                                                         MeasuredSet ──▶ calibrate
//! ```
//!
//! Files are untrusted input: every importer is pure, bounded ([`MAX_FILE_BYTES`],
//! [`MAX_POINTS`], [`MAX_REQUESTS_PER_POINT`]) and answers a bad file with one
//! [`ImportError`] naming the file and the field, never a panic.
//!
//! Formats and the versions read (field names checked against each tool's source):
//! - vLLM: the `--save-result` JSON of `vllm bench serve` (`vllm/benchmarks/serve.py`)
//!   and of the older `benchmarks/benchmark_serving.py`, which writes the same keys;
//!   one point per file, or one per line of a file written with `--append-result`.
//!   Latency statistics are in milliseconds there (`mean_ttft_ms`, `p99.9_ttft_ms`, …).
//! - GuideLLM: the JSON report, current layout (0.4 to 0.7: `benchmarks[].config`,
//!   `.metrics`) and the 0.2/0.3 layout (`benchmarks[].args`, `.worker`); one point per
//!   benchmark. TTFT and ITL in milliseconds, `request_latency` in seconds.
//! - Table: CSV, TSV or semicolon-separated, with a header row naming the columns;
//!   latency columns carry their unit (`ttft_p50_ms`, `e2e_p99_s`). See `table`.
//!
//! Python's `json.dump` writes bare `NaN` and `Infinity`; they are read, and refused
//! only in a field a point needs. [`write`] writes each format back, for tests.
//!
//! Units: every latency here is in seconds, every length in tokens. TPOT follows
//! vLLM's definition, (E2E − TTFT) / (output tokens − 1): GuideLLM's own
//! `time_per_output_token_ms` counts the first token, so its inter-token latency is the
//! figure that matches.

pub use crate::plan::SpecMeasured;
use crate::plan::{MeasuredLoad, MeasuredSummary};
use serde::{Deserialize, Serialize};

mod guidellm;
mod pyjson;
pub(crate) mod table;
mod vllm;
#[cfg(any(test, feature = "test-support"))]
pub mod write;

/// Largest file an importer reads [bytes]; larger files are refused unread.
pub const MAX_FILE_BYTES: usize = 32 * 1024 * 1024;
/// Most measured points one set may hold (files × benchmarks per file).
pub const MAX_POINTS: usize = crate::plan::MAX_CALIBRATION_POINTS;
/// Most per-request rows kept from one point.
pub const MAX_REQUESTS_PER_POINT: usize = 200_000;

/// The format a file was read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// `vllm bench serve --save-result` JSON (one load point per file).
    Vllm,
    /// GuideLLM's JSON report (one load point per benchmark in `benchmarks[]`).
    Guidellm,
    /// A CSV or TSV table with a header row (one load point per row).
    Table,
}

impl Format {
    /// The tool's name as shown to users.
    pub fn tool_name(self) -> &'static str {
        match self {
            Format::Vllm => "vllm bench serve",
            Format::Guidellm => "guidellm",
            Format::Table => "csv",
        }
    }
}

/// Summary statistics of one latency metric [s]; `None` where the file gives none.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct LatencyStats {
    /// Mean [s].
    pub mean_s: Option<f64>,
    /// Median [s].
    pub median_s: Option<f64>,
    /// Percentiles as (percent in (0, 100), value [s]), sorted by percent.
    pub percentiles: Vec<(f64, f64)>,
}

impl LatencyStats {
    /// The value at `pct` percent, when the file gives it (50 falls back to the median).
    pub fn percentile(&self, pct: f64) -> Option<f64> {
        self.percentiles
            .iter()
            .find(|(p, _)| (p - pct).abs() < 1e-9)
            .map(|&(_, v)| v)
            .or(if (pct - 50.0).abs() < 1e-9 {
                self.median_s
            } else {
                None
            })
    }
}

/// What a file says of how one length is spread over the requests, beside its mean:
/// percentiles, minimum and maximum [tokens]. Empty when it says nothing.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LengthStats {
    /// Shortest [tokens].
    pub min: Option<f64>,
    /// Longest [tokens].
    pub max: Option<f64>,
    /// Percentiles as (percent in (0, 100), length), sorted by percent (50 is the median).
    pub percentiles: Vec<(f64, f64)>,
}

impl LengthStats {
    /// Whether the file gave any spread statistic.
    pub fn is_empty(&self) -> bool {
        self.min.is_none() && self.max.is_none() && self.percentiles.is_empty()
    }
}

/// One request of a detailed result file.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MeasuredRequest {
    /// Prompt length [tokens].
    pub prompt_tokens: u32,
    /// Output length [tokens].
    pub output_tokens: u32,
}

/// One measured load point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasuredPoint {
    /// The file it came from, as given, with `#k` appended when the file holds several
    /// points: the k-th benchmark of a GuideLLM report, the k-th data row of a table, the
    /// k-th result of a vLLM file written with `--append-result` (k from 1).
    pub source: String,
    /// The format it was read as.
    pub format: Format,
    /// How the benchmark loaded the server.
    pub load: MeasuredLoad,
    /// Requests that completed (successful).
    pub completed: u32,
    /// Requests that failed.
    pub failed: u32,
    /// Wall time of the benchmark [s] (0 when not given).
    pub duration_s: f64,
    /// Completed requests per second [requests/s].
    pub achieved_rps: f64,
    /// Mean prompt length of completed requests [tokens].
    pub mean_prompt_tokens: f64,
    /// Mean output length of completed requests [tokens].
    pub mean_output_tokens: f64,
    /// Time to first token.
    pub ttft: LatencyStats,
    /// Time per output token, first token excluded.
    pub tpot: LatencyStats,
    /// Inter-token latency.
    pub itl: LatencyStats,
    /// End-to-end request latency.
    pub e2e: LatencyStats,
    /// Per-request lengths of the completed requests, when the file has them.
    pub requests: Vec<MeasuredRequest>,
    /// The model the file names (`model_id`, …), when it names one.
    pub model: Option<String>,
    /// The engine or backend the file names, when it names one.
    pub engine: Option<String>,
    /// A cap on requests in flight on top of an open-loop rate (vLLM's
    /// `--max-concurrency` with a finite `--request-rate`, GuideLLM's `max_concurrency`
    /// on a `constant` or `poisson` strategy) [requests]; `None` when uncapped, and always
    /// `None` for a [`MeasuredLoad::Concurrency`] point, whose load is the cap itself.
    #[serde(default)]
    pub max_concurrency: Option<u32>,
    /// How the prompt lengths spread, when the file says (a table's spread columns).
    #[serde(default)]
    pub prompt_spread: LengthStats,
    /// How the output lengths spread, when the file says.
    #[serde(default)]
    pub output_spread: LengthStats,
    /// Speculative decoding's counters over the run, when the server drafted and the
    /// file says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<SpecMeasured>,
}

impl MeasuredPoint {
    /// The compact summary a plan carries.
    pub fn summary(&self) -> MeasuredSummary {
        MeasuredSummary {
            load: self.load,
            achieved_rps: self.achieved_rps,
            ttft_mean_s: self.ttft.mean_s,
            ttft_p50_s: self.ttft.percentile(50.0),
            ttft_p99_s: self.ttft.percentile(99.0),
            tpot_mean_s: self.tpot.mean_s,
            tpot_p50_s: self.tpot.percentile(50.0),
            tpot_p99_s: self.tpot.percentile(99.0),
            e2e_mean_s: self.e2e.mean_s,
            e2e_p50_s: self.e2e.percentile(50.0),
            e2e_p99_s: self.e2e.percentile(99.0),
        }
    }
}

/// Points from one or more files that describe one model on one engine setup.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasuredSet {
    /// The points, sorted by load (rate, or concurrency).
    pub points: Vec<MeasuredPoint>,
    /// The files read, in the order given.
    pub files: Vec<String>,
    /// The format of the first file (all files need not share one).
    pub format: Format,
    /// The model the files name, when any does.
    pub model: Option<String>,
    /// The engine the files name, when any does.
    pub engine: Option<String>,
}

/// Why a set of files could not be imported: one line, naming the file and the field.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportError {
    /// The file, as given.
    pub file: String,
    /// The field (or column) at fault, when one is; empty for whole-file problems.
    pub field: String,
    /// What is wrong and how to fix it, in plain words.
    pub message: String,
}

impl std::fmt::Display for ImportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}: {}: {}", self.file, self.field, self.message)
        }
    }
}

impl std::error::Error for ImportError {}

/// Builds latency statistics from a mean, a median and percentile pairs, all [s]; the
/// percentiles are sorted by percent and a repeated percent keeps its first value.
fn stats(
    mean_s: Option<f64>,
    median_s: Option<f64>,
    mut percentiles: Vec<(f64, f64)>,
) -> LatencyStats {
    percentiles.sort_by(|a, b| a.0.total_cmp(&b.0));
    percentiles.dedup_by(|b, a| (a.0 - b.0).abs() < 1e-9);
    LatencyStats {
        mean_s,
        median_s,
        percentiles,
    }
}

impl LatencyStats {
    /// True when the file gave no statistic at all for this metric.
    pub fn is_empty(&self) -> bool {
        self.mean_s.is_none() && self.median_s.is_none() && self.percentiles.is_empty()
    }
}

/// The error for a point whose run completed no request.
fn nothing_completed(file: &str, field: &str) -> ImportError {
    pyjson::bad(
        file,
        field,
        "0 requests completed: nothing to calibrate from".into(),
    )
}

/// A parsed file, before it is read into points.
enum Detected {
    /// JSON values (one, or several written back to back) and the format they are.
    Json(Format, Vec<serde_json::Value>),
    /// Text that looks like a table with a header row.
    Table(String),
}

/// Checks the size and the encoding, and tells the format (parsing JSON once).
fn detect(name: &str, bytes: &[u8]) -> Result<Detected, ImportError> {
    let whole = |m: String| pyjson::whole(name, m);
    if bytes.len() > MAX_FILE_BYTES {
        return Err(whole(format!(
            "is {:.1} MB; files over {} MB are not read (a benchmark result is far smaller)",
            bytes.len() as f64 / 1e6,
            MAX_FILE_BYTES / (1024 * 1024)
        )));
    }
    let bytes = bytes
        .strip_prefix(b"\xEF\xBB\xBF".as_slice())
        .unwrap_or(bytes);
    if bytes.contains(&0) {
        return Err(whole(
            "is binary, not a text file: expected JSON or CSV".into(),
        ));
    }
    let text = std::str::from_utf8(bytes).map_err(|e| {
        whole(format!(
            "is not UTF-8 text (bad byte at offset {}): expected JSON or CSV",
            e.valid_up_to()
        ))
    })?;
    let body = text.trim_start();
    if body.is_empty() {
        return Err(whole("is empty".into()));
    }
    if body.starts_with('{') || body.starts_with('[') {
        let values = pyjson::parse_all(name, body, MAX_POINTS)?;
        let format = json_format(&values[0]).ok_or_else(|| {
            whole(
                "is JSON from another tool: expected a `vllm bench serve --save-result` file \
                 (with request_throughput, completed, …) or a GuideLLM report (with benchmarks)"
                    .into(),
            )
        })?;
        if format == Format::Guidellm && values.len() > 1 {
            return Err(whole(
                "holds several JSON documents; a GuideLLM report is one".into(),
            ));
        }
        return Ok(Detected::Json(format, values));
    }
    if table::looks_like_table(body) {
        return Ok(Detected::Table(body.to_string()));
    }
    Err(whole(
        "is neither JSON (a vllm bench serve result or a GuideLLM report) nor a table \
         with a header row (CSV or TSV)"
            .into(),
    ))
}

/// Which importer reads a JSON value, from the keys it has.
fn json_format(v: &serde_json::Value) -> Option<Format> {
    let obj = v.as_object()?;
    if obj.get("benchmarks").is_some_and(|b| b.is_array()) {
        return Some(Format::Guidellm);
    }
    let vllm_keys = obj.contains_key("request_throughput")
        || (obj.contains_key("completed")
            && (obj.contains_key("total_input_tokens") || obj.contains_key("model_id")));
    vllm_keys.then_some(Format::Vllm)
}

/// The format of a file, when it is one the importers read: the file must fit in
/// [`MAX_FILE_BYTES`], be UTF-8, and be a vLLM result, a GuideLLM report or a table.
pub fn sniff(bytes: &[u8]) -> Option<Format> {
    match detect("", bytes).ok()? {
        Detected::Json(f, _) => Some(f),
        Detected::Table(_) => Some(Format::Table),
    }
}

/// Reads one file (format sniffed from its content) into its measured points: one per
/// vLLM result, per GuideLLM benchmark, per table row.
pub fn import_file(name: &str, bytes: &[u8]) -> Result<Vec<MeasuredPoint>, ImportError> {
    let points = match detect(name, bytes)? {
        Detected::Json(Format::Vllm, values) => vllm::parse(name, &values)?,
        Detected::Json(_, values) => guidellm::parse(name, &values[0])?,
        Detected::Table(text) => table::parse(name, &text)?,
    };
    for p in &points {
        plausible(p)?;
    }
    Ok(points)
}

/// Reads several files as one set, as `(name, bytes)`: they must describe one model on
/// one engine setup (the first file to name a model or an engine sets it; another file
/// naming a different one is an error naming both). The points come sorted by load:
/// rate points by rate, then concurrency points by concurrency; at most [`MAX_POINTS`].
pub fn import_files(files: &[(&str, &[u8])]) -> Result<MeasuredSet, ImportError> {
    let Some(&(first, first_bytes)) = files.first() else {
        return Err(pyjson::whole(
            "(no files)",
            "no files given: choose one or more benchmark result files".into(),
        ));
    };
    if files.len() > MAX_POINTS {
        return Err(pyjson::whole(
            first,
            format!(
                "{} files given; at most {MAX_POINTS} are read at once",
                files.len()
            ),
        ));
    }
    let format = sniff(first_bytes).unwrap_or(Format::Table);
    let mut points: Vec<MeasuredPoint> = Vec::new();
    let mut model: Option<(String, String)> = None;
    // Engines are compared within a format: vLLM's `backend` (the client's endpoint
    // type) and GuideLLM's backend `kind` do not name the same thing.
    let mut engine: [Option<(String, String)>; 3] = Default::default();
    for &(name, bytes) in files {
        let got = import_file(name, bytes)?;
        for p in &got {
            same(&mut model, name, p.model.as_deref(), "model")?;
            same(
                &mut engine[p.format as usize],
                name,
                p.engine.as_deref(),
                "backend/engine",
            )?;
        }
        if points.len() + got.len() > MAX_POINTS {
            return Err(pyjson::whole(
                name,
                format!(
                    "brings the set to {} measured points; at most {MAX_POINTS} are read",
                    points.len() + got.len()
                ),
            ));
        }
        points.extend(got);
    }
    points.sort_by(|a, b| {
        let (ka, kb) = (load_key(&a.load), load_key(&b.load));
        ka.0.cmp(&kb.0).then(ka.1.total_cmp(&kb.1))
    });
    Ok(MeasuredSet {
        points,
        files: files.iter().map(|(n, _)| n.to_string()).collect(),
        format,
        model: model.map(|m| m.1),
        engine: engine.into_iter().flatten().next().map(|e| e.1),
    })
}

/// Records the first file's value of a label, or errs when a later file names another.
fn same(
    seen: &mut Option<(String, String)>,
    file: &str,
    value: Option<&str>,
    what: &str,
) -> Result<(), ImportError> {
    let Some(value) = value.filter(|v| !v.is_empty()) else {
        return Ok(());
    };
    match seen {
        None => *seen = Some((file.to_string(), value.to_string())),
        Some((f, v)) if v != value => {
            return Err(pyjson::bad(
                file,
                what,
                format!(
                    "names {what} '{value}', but {f} names '{v}': import measurements of one \
                     {what} at a time"
                ),
            ))
        }
        Some(_) => {}
    }
    Ok(())
}

/// Sort key of a load: rate points first (by rate), then concurrency points.
/// Longest latency a measured point may report \[s\]: an hour. A benchmark's TTFT, TPOT or
/// end-to-end time above it is a unit mix-up or a broken run, and would swamp a fit.
pub const MAX_MEASURED_LATENCY_S: f64 = 3600.0;

/// Refuses a point whose numbers no real benchmark reports (a latency above an hour, a
/// rate above the simulator's), naming the value in the file's own terms, so the fit
/// never runs on it.
fn plausible(p: &MeasuredPoint) -> Result<(), ImportError> {
    let rate = |what: &str, r: f64| {
        if r > crate::sim::MAX_RATE_RPS {
            return Err(pyjson::bad(
                &p.source,
                what,
                format!(
                    "{} requests/s is not a plausible rate; at most {} are read",
                    crate::format::sig(r),
                    crate::format::thousands(crate::sim::MAX_RATE_RPS as i64)
                ),
            ));
        }
        Ok(())
    };
    if let MeasuredLoad::Rate { rate_rps, .. } = p.load {
        rate("request rate", rate_rps)?;
    }
    rate("achieved request rate", p.achieved_rps)?;
    for (what, stats) in [
        ("TTFT", &p.ttft),
        ("TPOT", &p.tpot),
        ("ITL", &p.itl),
        ("end-to-end latency", &p.e2e),
    ] {
        let values = stats
            .mean_s
            .iter()
            .chain(stats.median_s.iter())
            .chain(stats.percentiles.iter().map(|(_, v)| v));
        if let Some(&worst) = values.max_by(|a, b| a.total_cmp(b)) {
            if worst > MAX_MEASURED_LATENCY_S {
                return Err(pyjson::bad(
                    &p.source,
                    what,
                    format!(
                        "{} s is not a plausible latency; at most {} s (an hour) are read: check the file's units",
                        crate::format::sig(worst),
                        crate::format::thousands(MAX_MEASURED_LATENCY_S as i64)
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn load_key(load: &MeasuredLoad) -> (u8, f64) {
    match *load {
        MeasuredLoad::Rate { rate_rps, .. } => (0, rate_rps),
        MeasuredLoad::Concurrency { concurrency } => (1, f64::from(concurrency)),
    }
}
