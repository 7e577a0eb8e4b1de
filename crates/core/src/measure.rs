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
//! Units: every latency here is in seconds, every length in tokens. TPOT follows
//! vLLM's definition, (E2E − TTFT) / (output tokens − 1): GuideLLM's own
//! `time_per_output_token_ms` counts the first token, so its inter-token latency is the
//! figure that matches.

use crate::plan::{MeasuredLoad, MeasuredSummary};
use serde::{Deserialize, Serialize};

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
    /// The file it came from, as given (with `#k` appended for the k-th benchmark of a
    /// GuideLLM report).
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
