//! Calibration: fit the step model's constants to measured benchmark results by
//! running the simulator itself on the measured workload.
//!
//! ```text
//!   MeasuredSet ──▶ CalibrationProblem (one simulated case per measured point)
//!                        │
//!   Calibrator ─next_batch─▶ [FitJob …] ─▶ run_fit_job (a thread or a Web Worker)
//!        ▲                                      │
//!        └──────── feed([FitJobResult …]) ◀─────┘
//!   phase 1: the full fit (every point)
//!   phase 2: leave-one-out refits, bootstrap refits, fit light → predict heavy
//!   result() ─▶ CalibrationReport: constants ± sd, per-point table, errors, the plan
//!
//!   problem (cases, constants, loss) ◀── fit (objective, Nelder–Mead, jobs)
//!        ◀── run (Calibrator, report) ◀── words (verdict, sentences, text)
//! ```
//!
//! **Free constants.** Up to seven, each applied by [`StepModel::calibrated`]: the
//! achieved share of the plan's memory bandwidth, the achieved share of its compute, the
//! fixed per-step overhead, the per-request frontend time outside the steps (added to
//! TTFT and E2E), the scheduling time per sequence in a step, the extra time of a step
//! with prompt tokens, and the KV-read efficiency. The search runs in the log of each
//! (the log of one plus each time that may be 0), clamped to a box, so every constant
//! stays non-negative. The first three are always free; [`FitTerms`] says which of the
//! others are, and [`FitTerms::DEFAULT`] holds the per-sequence time at the plan's
//! value (six constants fitted).
//!
//! **Objective.** For every measured point, the simulator runs the point's workload
//! (its lengths, per request when the file has them; its arrival process or its
//! clients) at the point's load with [`FIT_SEEDS`] common seed(s), and the statistics
//! the file gives (mean, median and p99 of TTFT, TPOT and E2E) are compared with the
//! simulated ones as log ratios under a pseudo-Huber loss, so one wild tail
//! percentile cannot drag the fit. Metrics weigh equally; means weigh 1, medians 0.25
//! and 99th percentiles 0.1.
//!
//! **Priors.** With little KV traffic (a small GQA model, short contexts) the data
//! pin down the empty-cache decode step but hardly how it splits into bandwidth and
//! overhead. Weak log-normal priors (bandwidth share near 0.85, compute share near the
//! plan's figure, each about ±25%) settle that valley; they are far too weak to move
//! a constant the measurements determine.
//!
//! **Method.** A coarse 3×3×3 grid around the datasheet values picks the start, then
//! Nelder–Mead, a derivative-free simplex search, refines it. Everything uses `libm`
//! and fixed seeds, so the fit is the same bit for bit natively and in wasm.
//!
//! **Trust.** Each point is predicted once by a fit made without it (leave-one-out):
//! the held-out error says how far off a load inside the measured range is. A fit on
//! the lighter half of the loads predicts the heavier half: the extrapolation error
//! says how far off the knee is when it lies beyond the loads measured. The verdict
//! judges the larger. [`BOOTSTRAP_RESAMPLES`] refits on points drawn with replacement
//! give each constant's standard deviation.

use crate::plan::PlanError;
use crate::sim::SimError;

mod fit;
mod problem;
mod run;
#[cfg(any(test, feature = "test-support"))]
mod synthetic;
mod text;
mod words;

pub use fit::PRIOR_BANDWIDTH_SHARE;
pub use fit::{run_fit_job, run_fit_job_threads, run_fit_jobs, FitJob, FitJobResult, FitTask};
pub use problem::{
    mape, mape_of, CalibrationProblem, Constants, FitTerms, LengthSource, PointCase, Prediction,
    Statistic, Theta, MAX_FRONTEND_S, MAX_SEQ_OVERHEAD_S, THETA_DIMS,
};
pub use run::{
    calibrate, calibrate_threads, model_mismatch, run_to_end, ttft_falls_with_load,
    CalibrationProgress, CalibrationReport, Calibrator, PointFit,
};
#[cfg(any(test, feature = "test-support"))]
pub use synthetic::synthetic_points;
pub use words::{
    calibration_cautions, calibration_summary, calibration_words, constants_words, judged_error,
    load_label, measured_spec_settings, spec_measured_words, spec_words, verdict_words,
    CalibrationWords, FitVerdict, FAIR_FIT_ERROR, GOOD_FIT_ERROR, MAX_PLAUSIBLE_SHARE,
};

/// Common seeds per measured point and evaluation.
pub const FIT_SEEDS: u32 = 1;
/// Bootstrap refits behind each constant's standard deviation.
pub const BOOTSTRAP_RESAMPLES: u32 = 6;
/// Seed of the order in which lengths drawn from a table's spread statistics are dealt
/// out (each point shuffles with a seed of its own from it).
pub const PER_POINT_SEED: u64 = 0x1E57;
/// Most requests simulated per measured point (larger runs are cut to this).
pub const MAX_FIT_REQUESTS: u32 = 3_000;
/// Fewest requests simulated per measured point.
pub const MIN_FIT_REQUESTS: u32 = 100;
/// Objective evaluations of the full fit (grid included).
pub const FULL_FIT_EVALS: u32 = 110;
/// Objective evaluations of each warm-started refit.
pub const REFIT_EVALS: u32 = 30;
/// The pause between a shared-prefix plan's warm-up and a point's measured requests
/// [s]: longer than any warm-up request takes at a load the server sustains, so each
/// point starts from an idle server, as a benchmark starts each rate after its own
/// warm-up or cooldown. Idle simulated time costs nothing.
pub const WARMUP_PAUSE_S: f64 = 3_600.0;
/// Smallest fitted step overhead [s].
pub const MIN_OVERHEAD_S: f64 = 1e-6;
/// Largest fitted step overhead [s].
pub const MAX_OVERHEAD_S: f64 = 0.5;

/// Why a calibration could not run.
#[derive(Debug, Clone, PartialEq)]
pub enum CalibrateError {
    /// The plan is invalid; fix the named field first.
    Plan(PlanError),
    /// No measured point was given; import at least one benchmark result.
    NoPoints,
    /// A measured point cannot be simulated (`point` is its file); the message says why.
    Point {
        /// The point's source file.
        point: String,
        /// What is wrong.
        message: String,
    },
    /// A simulation failed.
    Sim(SimError),
    /// Stopped by the caller.
    Cancelled,
}

impl std::fmt::Display for CalibrateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CalibrateError::Plan(e) => write!(f, "{e}"),
            CalibrateError::NoPoints => {
                write!(
                    f,
                    "no measured points: import at least one benchmark result"
                )
            }
            CalibrateError::Point { point, message } => write!(f, "{point}: {message}"),
            CalibrateError::Sim(e) => write!(f, "simulation failed: {e}"),
            CalibrateError::Cancelled => write!(f, "calibration cancelled"),
        }
    }
}

impl std::error::Error for CalibrateError {}

impl From<SimError> for CalibrateError {
    fn from(e: SimError) -> Self {
        CalibrateError::Sim(e)
    }
}

#[cfg(test)]
mod tests;
