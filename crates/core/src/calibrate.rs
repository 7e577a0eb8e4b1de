//! Calibration: fit the step model's constants to measured benchmark results by
//! running the simulator itself on the measured workload.
//!
//! ```text
//!   MeasuredSet ──▶ CalibrationProblem (one simulated case per measured point)
//!                        │
//!   Calibrator ─next_batch─▶ [FitJob …] ─▶ run_fit_job (a thread or a Web Worker)
//!        ▲                                      │
//!        └──────── feed([FitJobResult …]) ◀─────┘
//!   phase 1: the full fit (every point);  phase 2: leave-one-out and bootstrap refits
//!   result() ─▶ CalibrationReport: constants ± sd, per-point table, errors, the plan
//! ```
//!
//! **Free constants.** Three, each applied by [`StepModel::calibrated`]: the achieved
//! share of the plan's memory bandwidth, the achieved share of its compute, and the
//! fixed per-step overhead. The search runs in `θ = (ln bw share, ln compute share,
//! ln overhead in ms)`, clamped to a box, so every constant stays positive.
//!
//! **Objective.** For every measured point, the simulator runs the point's workload
//! (its lengths, per request when the file has them; its arrival process or its
//! clients) at the point's load with [`FIT_SEEDS`] common seed(s), and the statistics
//! the file gives (mean, median and p99 of TTFT, TPOT and E2E) are compared with the
//! simulated ones as log ratios under a pseudo-Huber loss, so one wild tail
//! percentile cannot drag the fit. Metrics weigh equally; p99 weighs half.
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
//! the held-out error is the honest number. [`BOOTSTRAP_RESAMPLES`] refits on points
//! drawn with replacement give each constant's standard deviation.

use crate::format::{percent_tenths, percent_whole, MISSING};
use crate::measure::{MeasuredPoint, MeasuredSet};
use crate::plan::{
    Arrival, Calibration, CalibrationError, CalibrationSource, Fitted, LengthDist, LengthSpec,
    MeasuredLoad, MeasuredSummary, MetricErrors, Plan, PlanError, TraceRow, TrafficSpec,
    MAX_EFFICIENCY, MAX_TOKENS, MIN_EFFICIENCY,
};
use crate::rng::Rng;
use crate::roofline::StepModel;
use crate::roofline::StepModelOf;
use crate::sim::SimConfigOf;
use crate::sim::{self, replication_seed, SimConfig, SimError, Summary};
use crate::tagged::Tagged;
use serde::{Deserialize, Serialize};

/// Common seeds per measured point and evaluation.
pub const FIT_SEEDS: u32 = 1;
/// Bootstrap refits behind each constant's standard deviation.
pub const BOOTSTRAP_RESAMPLES: u32 = 6;
/// Most requests simulated per measured point (larger runs are cut to this).
pub const MAX_FIT_REQUESTS: u32 = 3_000;
/// Fewest requests simulated per measured point.
pub const MIN_FIT_REQUESTS: u32 = 100;
/// Objective evaluations of the full fit (grid included).
pub const FULL_FIT_EVALS: u32 = 110;
/// Objective evaluations of each warm-started refit.
pub const REFIT_EVALS: u32 = 30;
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

/// One measured point as the simulator replays it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointCase {
    /// The file it came from.
    pub source: String,
    /// What was measured.
    pub measured: MeasuredSummary,
    /// The workload: lengths and arrival process (or clients).
    pub traffic: TrafficSpec,
    /// The rate simulated [requests/s] (ignored for a closed loop).
    pub rate_rps: f64,
    /// Requests simulated (no warm-up: the benchmark starts from an idle server).
    pub num_requests: u32,
}

/// Everything a fit job needs: the plan whose step model is fitted, and the points.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationProblem {
    /// The plan, its calibration removed.
    pub plan: Plan,
    /// One case per measured point, in load order.
    pub points: Vec<PointCase>,
}

/// The constants in search space: `(ln bw share, ln compute share, ln floor [ms])`,
/// where the floor is the time of a decode step with an empty KV cache,
/// `overhead + weight read time / bw share`. The floor is what light-load TPOT pins
/// down directly; searching it instead of the overhead keeps the valley of equally
/// good fits (less bandwidth, less overhead) from lying diagonally in the search space.
pub type Theta = [f64; 3];

/// Constants decoded from a [`Theta`], clamped to their allowed ranges.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Constants {
    /// Achieved share of the plan's memory bandwidth.
    pub bandwidth_efficiency: f64,
    /// Achieved share of the plan's compute.
    pub compute_efficiency: f64,
    /// Fixed per-step overhead [s].
    pub step_overhead_s: f64,
}

/// The box the search stays in: shares in [`MIN_EFFICIENCY`, `MAX_EFFICIENCY`], the
/// floor between 1 µs and 10 s.
fn clamp_theta(t: Theta) -> Theta {
    let (lo_e, hi_e) = (libm::log(MIN_EFFICIENCY), libm::log(MAX_EFFICIENCY));
    let (lo_f, hi_f) = (libm::log(1e-3), libm::log(1e4));
    let c = |x: f64, lo: f64, hi: f64| if x.is_nan() { lo } else { x.clamp(lo, hi) };
    [
        c(t[0], lo_e, hi_e),
        c(t[1], lo_e, hi_e),
        c(t[2], lo_f, hi_f),
    ]
}

impl Constants {
    /// The constants at `theta` (clamped), for a plan whose weights take
    /// `weights_time_s` to read at the full datasheet bandwidth.
    pub fn from_theta(theta: Theta, weights_time_s: f64) -> Constants {
        let t = clamp_theta(theta);
        let bw = libm::exp(t[0]);
        let floor_s = libm::exp(t[2]) * 1e-3;
        Constants {
            bandwidth_efficiency: bw,
            compute_efficiency: libm::exp(t[1]),
            step_overhead_s: (floor_s - weights_time_s / bw).clamp(MIN_OVERHEAD_S, MAX_OVERHEAD_S),
        }
    }

    /// The search-space point of these constants.
    pub fn theta(&self, weights_time_s: f64) -> Theta {
        let floor_s = self.step_overhead_s + weights_time_s / self.bandwidth_efficiency;
        clamp_theta([
            libm::log(self.bandwidth_efficiency),
            libm::log(self.compute_efficiency),
            libm::log(floor_s * 1e3),
        ])
    }
}

/// Simulated statistics of one point (means over the fit's seeds).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Prediction {
    /// Time to first token [s].
    pub ttft_s: Summary,
    /// Time per output token [s].
    pub tpot_s: Summary,
    /// End-to-end latency [s].
    pub e2e_s: Summary,
    /// Completed requests per second [requests/s].
    pub achieved_rps: f64,
}

impl CalibrationProblem {
    /// Builds one simulated case per measured point of `set`, on `plan`'s model,
    /// hardware and engine settings.
    pub fn new(plan: &Plan, set: &MeasuredSet) -> Result<CalibrationProblem, CalibrateError> {
        plan.validate().map_err(CalibrateError::Plan)?;
        if set.points.is_empty() {
            return Err(CalibrateError::NoPoints);
        }
        let mut base = plan.clone();
        base.calibration = None;
        let points = set
            .points
            .iter()
            .map(|p| point_case(&base, p))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(CalibrationProblem { plan: base, points })
    }

    /// The simulation configuration of point `i` with constants `c`.
    fn config(&self, i: usize, c: &Constants) -> Result<SimConfig, SimError> {
        let case = &self.points[i];
        let mut plan = self.plan.clone();
        plan.traffic = case.traffic.clone();
        plan.run.num_requests = case.num_requests;
        plan.run.warmup_requests = 0;
        let mut cfg = SimConfig::from_plan(&plan, case.rate_rps)?;
        cfg.step = StepModel::datasheet(&plan).calibrated(
            c.bandwidth_efficiency,
            c.compute_efficiency,
            c.step_overhead_s,
        );
        cfg.check()?;
        Ok(cfg)
    }

    /// Simulates point `i` with constants `c` over the fit's seeds.
    pub fn predict(&self, i: usize, c: &Constants) -> Result<Prediction, SimError> {
        let cfg = self.config(i, c)?;
        let mut ttft = Vec::new();
        let mut tpot = Vec::new();
        let mut e2e = Vec::new();
        let mut rps = 0.0;
        for r in 0..FIT_SEEDS {
            let rep = sim::simulate(&cfg, replication_seed(self.plan.run.seed, r))?;
            ttft.push(rep.ttft_s);
            tpot.push(rep.tpot_s);
            e2e.push(rep.e2e_s);
            rps += rep.completed_rps;
        }
        Ok(Prediction {
            ttft_s: Summary::mean_of(&ttft),
            tpot_s: Summary::mean_of(&tpot),
            e2e_s: Summary::mean_of(&e2e),
            achieved_rps: rps / FIT_SEEDS as f64,
        })
    }

    /// Predictions of every point with constants `c`.
    pub fn predict_all(&self, c: &Constants) -> Result<Vec<Prediction>, SimError> {
        (0..self.points.len()).map(|i| self.predict(i, c)).collect()
    }

    /// Time to read the weights at the plan's full bandwidth [s].
    pub fn weights_time_s(&self) -> f64 {
        StepModel::datasheet(&self.plan).memory_time_s(0.0)
    }

    /// The constants at a search-space point.
    pub fn constants(&self, theta: Theta) -> Constants {
        Constants::from_theta(theta, self.weights_time_s())
    }

    /// The search-space point of `c`.
    pub fn theta(&self, c: &Constants) -> Theta {
        c.theta(self.weights_time_s())
    }

    /// The constants the plan itself implies (no fit).
    pub fn datasheet(&self) -> Constants {
        Constants {
            bandwidth_efficiency: 1.0,
            compute_efficiency: 1.0,
            step_overhead_s: self.plan.hardware.step_overhead_s.max(MIN_OVERHEAD_S),
        }
    }
}

/// The workload of one measured point, on `base`'s traffic shape.
fn point_case(base: &Plan, p: &MeasuredPoint) -> Result<PointCase, CalibrateError> {
    let bad = |message: String| CalibrateError::Point {
        point: p.source.clone(),
        message,
    };
    let mut traffic = base.traffic.clone();
    traffic.trace = Vec::new();
    traffic.prefix_tokens = 0;
    traffic.prefix_hit_rate = 0.0;
    let n_measured = p.completed.saturating_add(p.failed);
    let mut num_requests = if n_measured > 0 { n_measured } else { 1000 };
    if !p.requests.is_empty() {
        let rows: Vec<TraceRow> = p
            .requests
            .iter()
            .map(|r| TraceRow {
                arrival_s: 0.0,
                prompt_tokens: r.prompt_tokens.clamp(1, MAX_TOKENS),
                output_tokens: r.output_tokens.clamp(1, MAX_TOKENS),
            })
            .collect();
        let max_p = rows.iter().map(|r| r.prompt_tokens).max().unwrap_or(1);
        let max_o = rows.iter().map(|r| r.output_tokens).max().unwrap_or(1);
        traffic.prompt = LengthSpec {
            dist: LengthDist::Trace,
            min: 1,
            max: max_p,
        };
        traffic.output = LengthSpec {
            dist: LengthDist::Trace,
            min: 1,
            max: max_o,
        };
        num_requests = rows.len() as u32;
        traffic.trace = rows;
    } else {
        if !(p.mean_prompt_tokens >= 1.0 && p.mean_output_tokens >= 1.0) {
            return Err(bad(format!(
                "mean prompt and output lengths must be at least 1 token, got {} and {}",
                p.mean_prompt_tokens, p.mean_output_tokens
            )));
        }
        traffic.prompt = length_with_mean(&base.traffic.prompt, p.mean_prompt_tokens);
        traffic.output = length_with_mean(&base.traffic.output, p.mean_output_tokens);
    }
    let rate_rps = match p.load {
        MeasuredLoad::Rate { rate_rps, cv } => {
            traffic.arrival = if (cv - 1.0).abs() < 1e-9 {
                Arrival::Poisson
            } else {
                Arrival::Gamma {
                    cv: cv.clamp(0.05, 10.0),
                }
            };
            // The client's own cap (`--max-concurrency` beside a finite rate).
            traffic.max_concurrency = p.max_concurrency;
            rate_rps
        }
        MeasuredLoad::Concurrency { concurrency } => {
            traffic.arrival = Arrival::Closed {
                concurrency,
                think_s: 0.0,
            };
            1.0
        }
    };
    sim::check_rate(rate_rps).map_err(|e| bad(e.to_string()))?;
    Ok(PointCase {
        source: p.source.clone(),
        measured: p.summary(),
        traffic,
        rate_rps,
        num_requests: num_requests.clamp(MIN_FIT_REQUESTS, MAX_FIT_REQUESTS),
    })
}

/// A length law with the plan's shape whose mean is `mean` [tokens]: a lognormal keeps
/// its sigma (median = mean / e^(σ²/2)), anything else becomes fixed at the mean. The
/// upper clip widens to at least 8× the mean so the clip does not bias the mean.
fn length_with_mean(shape: &LengthSpec, mean: f64) -> LengthSpec {
    let cap = (libm::ceil(mean * 8.0) as u32).clamp(1, MAX_TOKENS);
    let max = shape.max.max(cap);
    let min = shape.min.min(libm::floor(mean) as u32).max(1);
    let dist = match shape.dist {
        LengthDist::LogNormal { sigma, .. } => LengthDist::LogNormal {
            median: (mean / libm::exp(sigma * sigma / 2.0)).max(1.0),
            sigma,
        },
        _ => LengthDist::Fixed {
            tokens: libm::round(mean).clamp(1.0, MAX_TOKENS as f64) as u32,
        },
    };
    LengthSpec { dist, min, max }
}

/// Metric index: TTFT, TPOT, E2E.
const METRICS: usize = 3;

/// The (measured, predicted, weight) statistics of one point, per metric.
fn pairs(m: &MeasuredSummary, p: &Prediction) -> [Vec<(f64, f64, f64)>; METRICS] {
    let one = |stats: [(Option<f64>, f64, f64); 3]| {
        stats
            .into_iter()
            .filter_map(|(meas, pred, w)| meas.filter(|x| *x > 0.0).map(|x| (x, pred, w)))
            .collect::<Vec<_>>()
    };
    [
        one([
            (m.ttft_mean_s, p.ttft_s.mean, 1.0),
            (m.ttft_p50_s, p.ttft_s.p50, 1.0),
            (m.ttft_p99_s, p.ttft_s.p99, 0.5),
        ]),
        one([
            (m.tpot_mean_s, p.tpot_s.mean, 1.0),
            (m.tpot_p50_s, p.tpot_s.p50, 1.0),
            (m.tpot_p99_s, p.tpot_s.p99, 0.5),
        ]),
        one([
            (m.e2e_mean_s, p.e2e_s.mean, 1.0),
            (m.e2e_p50_s, p.e2e_s.p50, 1.0),
            (m.e2e_p99_s, p.e2e_s.p99, 0.5),
        ]),
    ]
}

/// Scale of the pseudo-Huber loss on log ratios: errors beyond about 25% count linearly.
const HUBER_DELTA: f64 = 0.25;
/// Loss of a statistic the simulation could not produce (nothing finished).
const MISSING_LOSS: f64 = 10.0;

/// Loss of one point: metrics weigh equally, statistics within a metric by weight.
fn point_loss(m: &MeasuredSummary, p: &Prediction) -> f64 {
    let mut total = 0.0;
    let mut metrics = 0.0;
    for stats in pairs(m, p) {
        if stats.is_empty() {
            continue;
        }
        let (mut sum, mut wsum) = (0.0, 0.0);
        for (meas, pred, w) in stats {
            let l = if pred.is_finite() && pred > 0.0 {
                let r = libm::log(pred / meas) / HUBER_DELTA;
                HUBER_DELTA * HUBER_DELTA * (libm::sqrt(1.0 + r * r) - 1.0)
            } else {
                MISSING_LOSS
            };
            sum += w * l;
            wsum += w;
        }
        total += sum / wsum;
        metrics += 1.0;
    }
    if metrics > 0.0 {
        total / metrics
    } else {
        0.0
    }
}

/// Absolute percentage errors per metric (means over the statistics given), or `None`
/// for a metric the file does not give.
fn point_errors(m: &MeasuredSummary, p: &Prediction) -> [Option<f64>; METRICS] {
    pairs(m, p).map(|stats| {
        if stats.is_empty() {
            return None;
        }
        let n = stats.len() as f64;
        Some(
            stats
                .iter()
                .map(|&(meas, pred, _)| {
                    if pred.is_finite() {
                        (pred / meas - 1.0).abs()
                    } else {
                        1.0
                    }
                })
                .sum::<f64>()
                / n,
        )
    })
}

/// Mean absolute percentage errors over points.
fn mape(cases: &[PointCase], preds: &[Prediction]) -> MetricErrors {
    let mut sums = [0.0; METRICS];
    let mut counts = [0.0; METRICS];
    for (c, p) in cases.iter().zip(preds) {
        for (k, e) in point_errors(&c.measured, p).into_iter().enumerate() {
            if let Some(e) = e {
                sums[k] += e;
                counts[k] += 1.0;
            }
        }
    }
    let avg = |k: usize| (counts[k] > 0.0).then(|| sums[k] / counts[k]);
    let all = counts.iter().sum::<f64>();
    MetricErrors {
        ttft: avg(0),
        tpot: avg(1),
        e2e: avg(2),
        overall: if all > 0.0 {
            sums.iter().sum::<f64>() / all
        } else {
            0.0
        },
    }
}

/// What one fit job fits to.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FitTask {
    /// Every point, from a grid start; also predicts every point with the datasheet
    /// constants and with the fit.
    Full,
    /// Every point but `point`, warm-started; predicts the held-out point.
    LeaveOut {
        /// Index of the held-out point.
        point: u32,
    },
    /// Points drawn with replacement, warm-started.
    Bootstrap {
        /// Indices drawn.
        sample: Vec<u32>,
    },
}

impl<'de> Deserialize<'de> for FitTask {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut t = Tagged::read(d)?;
        Ok(match t.kind() {
            "full" => FitTask::Full,
            "leave_out" => FitTask::LeaveOut {
                point: t.field("point")?,
            },
            "bootstrap" => FitTask::Bootstrap {
                sample: t.field("sample")?,
            },
            _ => return Err(t.unknown(&["full", "leave_out", "bootstrap"])),
        })
    }
}

/// One fit to run: a message to a worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FitJob {
    /// Unique id within its calibration.
    pub id: u32,
    /// What to fit to.
    pub task: FitTask,
    /// Where the search starts (ignored by [`FitTask::Full`], which scans a grid).
    pub start: Theta,
}

/// What a fit job returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FitJobResult {
    /// The job's id.
    pub id: u32,
    /// The best constants found.
    pub theta: Theta,
    /// The loss there.
    pub loss: f64,
    /// Objective evaluations spent.
    pub evaluations: u32,
    /// Predictions of the held-out point ([`FitTask::LeaveOut`]), or of every point
    /// with the fit ([`FitTask::Full`]).
    pub predictions: Vec<Prediction>,
    /// Predictions of every point with the datasheet constants ([`FitTask::Full`] only).
    pub datasheet: Vec<Prediction>,
}

/// The objective over a multiset of points: `counts[i]` copies of point `i`.
struct Objective<'a> {
    problem: &'a CalibrationProblem,
    counts: Vec<u32>,
    evaluations: u32,
    /// OS threads one evaluation may spread its points over (1 in wasm).
    threads: usize,
}

impl Objective<'_> {
    fn loss(&mut self, theta: Theta) -> Result<f64, SimError> {
        self.evaluations += 1;
        let c = self.problem.constants(theta);
        let used: Vec<usize> = (0..self.counts.len())
            .filter(|&i| self.counts[i] > 0)
            .collect();
        let losses = self.point_losses(&used, &c)?;
        // Summed in point order whatever the threads, so the loss is the same bit for bit.
        let (mut sum, mut n) = (0.0, 0.0);
        for (&i, l) in used.iter().zip(losses) {
            let k = self.counts[i] as f64;
            sum += k * l;
            n += k;
        }
        let data = if n > 0.0 { sum / n } else { 0.0 };
        Ok(data + prior_penalty(theta))
    }

    /// The loss of each point of `used` with constants `c`, on up to `threads` threads.
    fn point_losses(&self, used: &[usize], c: &Constants) -> Result<Vec<f64>, SimError> {
        let one = |i: usize| -> Result<f64, SimError> {
            let p = self.problem.predict(i, c)?;
            Ok(point_loss(&self.problem.points[i].measured, &p))
        };
        crate::sim::threads::map_in_order(used, self.threads, |&i| one(i))
    }
}

/// Centre of the weak prior on the bandwidth share: real GPUs reach 75–90% of their
/// datasheet memory bandwidth.
pub const PRIOR_BANDWIDTH_SHARE: f64 = 0.85;
/// Spread of both priors, in log space (about ±25%).
const PRIOR_LOG_SD: f64 = 0.25;
/// Weight of the priors against the data term: enough to settle a flat valley (how
/// the empty-cache decode step splits into bandwidth and overhead, when KV reads are
/// small), far too little to move a fit the measurements pin down.
const PRIOR_WEIGHT: f64 = 1e-3;

/// The weak priors: bandwidth share near [`PRIOR_BANDWIDTH_SHARE`], compute share
/// near the plan's own (already an achievable figure).
fn prior_penalty(theta: Theta) -> f64 {
    let t = clamp_theta(theta);
    let z_bw = (t[0] - libm::log(PRIOR_BANDWIDTH_SHARE)) / PRIOR_LOG_SD;
    let z_c = t[1] / PRIOR_LOG_SD;
    PRIOR_WEIGHT * 0.5 * (z_bw * z_bw + z_c * z_c)
}

/// Nelder–Mead from `start` with initial steps `step`, for at most `max_evals`
/// evaluations (clamped to the box). Returns the best point and its loss.
fn nelder_mead(
    f: &mut Objective<'_>,
    start: Theta,
    step: f64,
    max_evals: u32,
) -> Result<(Theta, f64), SimError> {
    const N: usize = 3;
    let mut simplex: Vec<(Theta, f64)> = Vec::with_capacity(N + 1);
    let s0 = clamp_theta(start);
    simplex.push((s0, f.loss(s0)?));
    for k in 0..N {
        let mut v = s0;
        v[k] += step;
        let v = clamp_theta(v);
        simplex.push((v, f.loss(v)?));
    }
    let limit = f.evaluations + max_evals;
    while f.evaluations < limit {
        simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
        let (best, worst) = (simplex[0].1, simplex[N].1);
        if (worst - best).abs() <= 1e-5 * (1.0 + best.abs()) {
            break;
        }
        let mut centroid = [0.0; N];
        for (v, _) in &simplex[..N] {
            for k in 0..N {
                centroid[k] += v[k] / N as f64;
            }
        }
        let along = |t: f64| -> Theta {
            let w = simplex[N].0;
            clamp_theta([
                centroid[0] + t * (w[0] - centroid[0]),
                centroid[1] + t * (w[1] - centroid[1]),
                centroid[2] + t * (w[2] - centroid[2]),
            ])
        };
        let xr = along(-1.0);
        let fr = f.loss(xr)?;
        if fr < simplex[0].1 {
            let xe = along(-2.0);
            let fe = f.loss(xe)?;
            simplex[N] = if fe < fr { (xe, fe) } else { (xr, fr) };
        } else if fr < simplex[N - 1].1 {
            simplex[N] = (xr, fr);
        } else {
            let (xc, fc) = if fr < simplex[N].1 {
                let x = along(-0.5);
                (x, f.loss(x)?)
            } else {
                let x = along(0.5);
                (x, f.loss(x)?)
            };
            if fc < fr.min(simplex[N].1) {
                simplex[N] = (xc, fc);
            } else {
                // Shrink towards the best vertex.
                let b = simplex[0].0;
                for v in simplex.iter_mut().skip(1) {
                    let x = clamp_theta([
                        b[0] + 0.5 * (v.0[0] - b[0]),
                        b[1] + 0.5 * (v.0[1] - b[1]),
                        b[2] + 0.5 * (v.0[2] - b[2]),
                    ]);
                    *v = (x, f.loss(x)?);
                }
            }
        }
    }
    simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
    Ok(simplex[0])
}

/// Runs one fit job. Deterministic: the same problem and job give the same result
/// on every platform.
pub fn run_fit_job(problem: &CalibrationProblem, job: &FitJob) -> Result<FitJobResult, SimError> {
    run_fit_job_threads(problem, job, 1)
}

/// [`run_fit_job`] with each evaluation's points spread over `threads` OS threads (the
/// result does not depend on it; wasm always uses one).
pub fn run_fit_job_threads(
    problem: &CalibrationProblem,
    job: &FitJob,
    threads: usize,
) -> Result<FitJobResult, SimError> {
    let n = problem.points.len();
    let mut counts = vec![1u32; n];
    match &job.task {
        FitTask::Full => {}
        FitTask::LeaveOut { point } => {
            if let Some(c) = counts.get_mut(*point as usize) {
                *c = 0;
            }
        }
        FitTask::Bootstrap { sample } => {
            counts = vec![0; n];
            for &i in sample {
                if let Some(c) = counts.get_mut(i as usize) {
                    *c += 1;
                }
            }
        }
    }
    let mut obj = Objective {
        problem,
        counts,
        evaluations: 0,
        threads: threads.max(1),
    };
    let (theta, loss) = match job.task {
        FitTask::Full => {
            let t0 = problem.theta(&problem.datasheet());
            // A coarse grid around the datasheet values: shares ×0.5, ×0.8, ×1.1 and
            // floors ×0.8, ×1.25, ×2.
            let mut best = (t0, obj.loss(t0)?);
            for a in [0.5f64, 0.8, 1.1] {
                for b in [0.5f64, 0.8, 1.1] {
                    for c in [0.8f64, 1.25, 2.0] {
                        let t = clamp_theta([
                            t0[0] + libm::log(a),
                            t0[1] + libm::log(b),
                            t0[2] + libm::log(c),
                        ]);
                        let l = obj.loss(t)?;
                        if l < best.1 {
                            best = (t, l);
                        }
                    }
                }
            }
            // Nelder–Mead, restarted once from where it stopped (a fresh simplex escapes
            // the premature collapse a noisy objective can cause).
            let budget = FULL_FIT_EVALS.saturating_sub(obj.evaluations);
            let (t1, _) = nelder_mead(&mut obj, best.0, 0.15, budget * 2 / 3)?;
            let budget = FULL_FIT_EVALS.saturating_sub(obj.evaluations);
            nelder_mead(&mut obj, t1, 0.05, budget)?
        }
        // A refit starts from the full fit with a simplex wide enough (±15%) to leave
        // its basin when the held-out point was what held it there, then restarts small.
        _ => {
            let (t1, _) = nelder_mead(&mut obj, job.start, 0.15, REFIT_EVALS * 2 / 3)?;
            let budget = REFIT_EVALS.saturating_sub(obj.evaluations);
            nelder_mead(&mut obj, t1, 0.05, budget)?
        }
    };
    let fitted = problem.constants(theta);
    let (predictions, datasheet) = match &job.task {
        FitTask::Full => (
            problem.predict_all(&fitted)?,
            problem.predict_all(&problem.datasheet())?,
        ),
        FitTask::LeaveOut { point } => (vec![problem.predict(*point as usize, &fitted)?], vec![]),
        FitTask::Bootstrap { .. } => (vec![], vec![]),
    };
    Ok(FitJobResult {
        id: job.id,
        theta,
        loss,
        evaluations: obj.evaluations,
        predictions,
        datasheet,
    })
}

/// One row of the per-point table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointFit {
    /// The file it came from.
    pub source: String,
    /// What was measured.
    pub measured: MeasuredSummary,
    /// The calibrated model's prediction (fitted on every point).
    pub predicted: Prediction,
    /// The prediction of a fit made without this point (`None` with one point).
    pub held_out: Option<Prediction>,
    /// The datasheet constants' prediction.
    pub datasheet: Prediction,
    /// Absolute percentage errors of `predicted` (TTFT, TPOT, E2E); `None` where not measured.
    pub errors: [Option<f64>; 3],
    /// Absolute percentage errors of `held_out`.
    pub held_out_errors: Option<[Option<f64>; 3]>,
}

/// A finished calibration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationReport {
    /// The fit, as the plan carries it.
    pub calibration: Calibration,
    /// The plan with the fit applied and the files' workload as its traffic.
    pub plan: Plan,
    /// Per-point measured, predicted and held-out figures.
    pub points: Vec<PointFit>,
    /// Objective evaluations over every fit.
    pub evaluations: u32,
    /// Plain-words cautions (a single point, points on one load level, a share above
    /// the datasheet, …).
    pub warnings: Vec<String>,
    /// How far the fit can be trusted ([`verdict_words`] says it in words).
    pub verdict: FitVerdict,
}

/// Progress of a calibration.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CalibrationProgress {
    /// Fits finished.
    pub done: u32,
    /// Fits in all.
    pub total: u32,
}

/// The calibration as a resumable state machine: hand out [`FitJob`]s, take
/// [`FitJobResult`]s back, in any order and on any thread.
#[derive(Debug, Clone)]
pub struct Calibrator {
    problem: CalibrationProblem,
    set_files: Vec<String>,
    source: CalibrationSource,
    full: Option<FitJobResult>,
    refits: Vec<Option<FitJobResult>>,
    refit_jobs: Vec<FitJob>,
    handed_full: bool,
    handed_refits: bool,
}

impl Calibrator {
    /// Prepares the calibration of `plan` to `set`.
    pub fn new(plan: &Plan, set: &MeasuredSet) -> Result<Calibrator, CalibrateError> {
        let problem = CalibrationProblem::new(plan, set)?;
        let source = CalibrationSource {
            files: set.files.clone(),
            tool: set.format.tool_name().to_string(),
            model: set.model.clone().unwrap_or_default(),
            engine: set.engine.clone().unwrap_or_default(),
            fitted_model: plan.model.preset.clone(),
            fitted_gpu: plan.hardware.preset.clone(),
            fitted_tp_degree: plan.hardware.tp_degree,
        };
        Ok(Calibrator {
            problem,
            set_files: set.files.clone(),
            source,
            full: None,
            refits: Vec::new(),
            refit_jobs: Vec::new(),
            handed_full: false,
            handed_refits: false,
        })
    }

    /// The problem the jobs refer to (send it to workers once).
    pub fn problem(&self) -> &CalibrationProblem {
        &self.problem
    }

    fn n_refits(&self) -> u32 {
        let n = self.problem.points.len() as u32;
        if n < 2 {
            0
        } else {
            n + BOOTSTRAP_RESAMPLES
        }
    }

    /// The next jobs to run; empty while waiting for results or when done.
    pub fn next_batch(&mut self) -> Vec<FitJob> {
        if !self.handed_full {
            self.handed_full = true;
            return vec![FitJob {
                id: 0,
                task: FitTask::Full,
                start: self.problem.theta(&self.problem.datasheet()),
            }];
        }
        let Some(full) = &self.full else {
            return Vec::new();
        };
        if self.handed_refits {
            return Vec::new();
        }
        self.handed_refits = true;
        let n = self.problem.points.len() as u32;
        let start = full.theta;
        let mut jobs = Vec::new();
        if n >= 2 {
            for i in 0..n {
                jobs.push(FitJob {
                    id: 1 + i,
                    task: FitTask::LeaveOut { point: i },
                    start,
                });
            }
            let mut rng = Rng::new(replication_seed(self.problem.plan.run.seed, 0xCA11));
            for b in 0..BOOTSTRAP_RESAMPLES {
                let sample = (0..n)
                    .map(|_| ((rng.next_f64() * n as f64) as u32).min(n - 1))
                    .collect();
                jobs.push(FitJob {
                    id: 1 + n + b,
                    task: FitTask::Bootstrap { sample },
                    start,
                });
            }
        }
        self.refits = vec![None; jobs.len()];
        self.refit_jobs = jobs.clone();
        jobs
    }

    /// Takes results back (matched by id; unknown ids are ignored).
    pub fn feed(&mut self, results: &[FitJobResult]) {
        for r in results {
            if r.id == 0 {
                self.full = Some(r.clone());
            } else if let Some(slot) = self.refits.get_mut(r.id as usize - 1) {
                *slot = Some(r.clone());
            }
        }
    }

    /// Whether every fit is back.
    pub fn is_done(&self) -> bool {
        self.full.is_some() && self.handed_refits && self.refits.iter().all(Option::is_some)
    }

    /// Fits finished out of all.
    pub fn progress(&self) -> CalibrationProgress {
        CalibrationProgress {
            done: self.full.is_some() as u32
                + self.refits.iter().filter(|r| r.is_some()).count() as u32,
            total: 1 + self.n_refits(),
        }
    }

    /// The finished calibration, once [`Calibrator::is_done`].
    pub fn result(&self) -> Option<CalibrationReport> {
        if !self.is_done() {
            return None;
        }
        let full = self.full.as_ref()?;
        let n = self.problem.points.len();
        let cases = &self.problem.points;
        let fitted = self.problem.constants(full.theta);
        let mut held: Vec<Option<Prediction>> = vec![None; n];
        let mut boots: Vec<Constants> = Vec::new();
        let mut evaluations = full.evaluations;
        for (job, r) in self.refit_jobs.iter().zip(&self.refits) {
            let r = r.as_ref()?;
            evaluations += r.evaluations;
            match job.task {
                FitTask::LeaveOut { point } => {
                    held[point as usize] = r.predictions.first().copied();
                }
                FitTask::Bootstrap { .. } => boots.push(self.problem.constants(r.theta)),
                FitTask::Full => {}
            }
        }
        let sd = |f: fn(&Constants) -> f64| {
            if boots.len() < 2 {
                return 0.0;
            }
            let m = boots.iter().map(f).sum::<f64>() / boots.len() as f64;
            let v = boots.iter().map(|c| (f(c) - m) * (f(c) - m)).sum::<f64>()
                / (boots.len() - 1) as f64;
            libm::sqrt(v)
        };
        let held_out = if n >= 2 {
            let preds: Option<Vec<Prediction>> = held.iter().copied().collect();
            preds.map(|p| mape(cases, &p))
        } else {
            None
        };
        let error = CalibrationError {
            in_sample: mape(cases, &full.predictions),
            held_out,
            uncalibrated: mape(cases, &full.datasheet),
        };
        let mut calibration = Calibration {
            enabled: true,
            bandwidth_efficiency: Fitted {
                value: fitted.bandwidth_efficiency,
                sd: sd(|c| c.bandwidth_efficiency),
            },
            compute_efficiency: Fitted {
                value: fitted.compute_efficiency,
                sd: sd(|c| c.compute_efficiency),
            },
            step_overhead_s: Fitted {
                value: fitted.step_overhead_s,
                sd: sd(|c| c.step_overhead_s),
            },
            source: self.source.clone(),
            error,
            points: cases.iter().map(|c| c.measured.clone()).collect(),
        };
        // A fit no better than the datasheet on held-out runs starts switched off.
        calibration.enabled = FitVerdict::of(&calibration) != FitVerdict::NoBetter;
        let points = cases
            .iter()
            .enumerate()
            .map(|(i, c)| PointFit {
                source: c.source.clone(),
                measured: c.measured.clone(),
                predicted: full.predictions[i],
                held_out: held[i],
                datasheet: full.datasheet[i],
                errors: point_errors(&c.measured, &full.predictions[i]),
                held_out_errors: held[i].map(|h| point_errors(&c.measured, &h)),
            })
            .collect();
        let mut plan = self.problem.plan.clone();
        plan.traffic = workload_traffic(&self.problem);
        plan.calibration = Some(calibration.clone());
        Some(CalibrationReport {
            plan,
            points,
            evaluations,
            warnings: warnings(&self.problem, &self.set_files)
                .into_iter()
                .chain(calibration_cautions(&calibration))
                .collect(),
            verdict: FitVerdict::of(&calibration),
            calibration,
        })
    }
}

/// The traffic a calibrated plan keeps: the files' lengths (a lognormal fitted to the
/// per-request lengths when the files have them, else the points' mean lengths on the
/// plan's shape) and their arrival kind. The forecast peak stays the plan's.
fn workload_traffic(problem: &CalibrationProblem) -> TrafficSpec {
    let mut t = problem.plan.traffic.clone();
    let cases = &problem.points;
    let rows: Vec<&TraceRow> = cases.iter().flat_map(|c| c.traffic.trace.iter()).collect();
    if rows.is_empty() {
        let n = cases.len() as f64;
        let mean_of = |f: fn(&PointCase) -> &LengthSpec| {
            cases.iter().map(|c| length_mean(f(c))).sum::<f64>() / n
        };
        t.prompt = length_with_mean(&t.prompt, mean_of(|c| &c.traffic.prompt));
        t.output = length_with_mean(&t.output, mean_of(|c| &c.traffic.output));
    } else {
        t.prompt = lognormal_fit(rows.iter().map(|r| r.prompt_tokens));
        t.output = lognormal_fit(rows.iter().map(|r| r.output_tokens));
    }
    t.trace = Vec::new();
    t.arrival = cases[0].traffic.arrival;
    if let Arrival::Closed { .. } = t.arrival {
        let mut ns: Vec<u32> = cases
            .iter()
            .filter_map(|c| match c.traffic.arrival {
                Arrival::Closed { concurrency, .. } => Some(concurrency),
                _ => None,
            })
            .collect();
        ns.sort_unstable();
        t.arrival = Arrival::Closed {
            concurrency: ns[ns.len() / 2],
            think_s: 0.0,
        };
    }
    t
}

/// The mean of a length law, for a lognormal ignoring the clip [tokens].
fn length_mean(l: &LengthSpec) -> f64 {
    match l.dist {
        LengthDist::LogNormal { median, sigma } => median * libm::exp(sigma * sigma / 2.0),
        LengthDist::Fixed { tokens } => tokens as f64,
        LengthDist::Trace => l.max as f64 / 2.0,
    }
}

/// A lognormal with the sample's log-mean and log-sd, clipped to the sample's range.
fn lognormal_fit(xs: impl Iterator<Item = u32> + Clone) -> LengthSpec {
    let n = xs.clone().count().max(1) as f64;
    let logs = xs.clone().map(|x| libm::log(x.max(1) as f64));
    let mu = logs.clone().sum::<f64>() / n;
    let var = logs.map(|l| (l - mu) * (l - mu)).sum::<f64>() / n;
    let min = xs.clone().min().unwrap_or(1).max(1);
    let max = xs.max().unwrap_or(1).max(min);
    LengthSpec {
        dist: LengthDist::LogNormal {
            median: libm::exp(mu).max(1.0),
            sigma: libm::sqrt(var).min(5.0),
        },
        min,
        max,
    }
}

/// Cautions about what the points cannot tell.
fn warnings(problem: &CalibrationProblem, files: &[String]) -> Vec<String> {
    let mut w = Vec::new();
    let n = problem.points.len();
    if n == 1 {
        w.push(
            "one measured point: the fit cannot be checked on held-out data, and three \
             constants are not pinned down by one load level; measure at least 3 rates"
                .to_string(),
        );
    } else if n < 4 {
        w.push(format!(
            "{n} measured points for 3 constants: the held-out error is a rough guide; measure 4 or more rates"
        ));
    }
    let loads: Vec<f64> = problem
        .points
        .iter()
        .map(|c| c.measured.achieved_rps)
        .collect();
    let (lo, hi) = loads
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
    if n >= 2 && hi > 0.0 && lo / hi > 0.8 {
        w.push(
            "every point ran at about the same throughput: the fit says little about other loads, \
             least of all about saturation"
                .to_string(),
        );
    }
    if files.is_empty() {
        w.push("no file names were given".to_string());
    }
    w
}

/// A plan's calibration in words: one source for the report, the finance view, the
/// embed card and the CLI, so they never disagree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CalibrationWords {
    /// Where the fit came from and how well it matched, for finance, e.g. "Calibrated
    /// from 8 vllm bench serve measurements (Llama-3.1-70B-Instruct-FP8): predictions
    /// missed measured latency by 8% on average on held-out runs (datasheet constants: 27%)."
    pub sentence: String,
    /// A few words for a badge: `calibrated · held-out error 8%`, or `datasheet constants`.
    pub badge: String,
    /// The fitted constants, for engineers: "Fitted: 81% of the datasheet memory
    /// bandwidth, 69% of its compute, 3.1 ms fixed per step."
    pub constants: String,
}

/// A share as a whole percentage ("under 1%" below half a percent).
fn pct_whole(x: f64) -> String {
    if x < 0.005 {
        "under 1%".into()
    } else {
        percent_whole(x)
    }
}

/// Held-out error up to which a fit is called good [0..].
pub const GOOD_FIT_ERROR: f64 = 0.10;
/// Held-out error up to which a fit is called fair; above it, poor [0..].
pub const FAIR_FIT_ERROR: f64 = 0.20;

/// How far a calibration's predictions can be trusted, judged on runs each fit did not
/// see (the held-out error).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FitVerdict {
    /// Held-out error at most [`GOOD_FIT_ERROR`].
    Good,
    /// Held-out error at most [`FAIR_FIT_ERROR`].
    Fair,
    /// Held-out error above [`FAIR_FIT_ERROR`].
    Poor,
    /// Held-out runs predicted no better than by the datasheet constants.
    NoBetter,
    /// One point: nothing was held out to judge the fit on.
    Unchecked,
}

impl FitVerdict {
    /// The verdict on `c`.
    pub fn of(c: &Calibration) -> FitVerdict {
        let Some(h) = c.error.held_out else {
            return FitVerdict::Unchecked;
        };
        if h.overall >= c.error.uncalibrated.overall {
            FitVerdict::NoBetter
        } else if h.overall <= GOOD_FIT_ERROR {
            FitVerdict::Good
        } else if h.overall <= FAIR_FIT_ERROR {
            FitVerdict::Fair
        } else {
            FitVerdict::Poor
        }
    }

    /// A few words for a badge ("poor fit").
    pub fn label(self) -> &'static str {
        match self {
            FitVerdict::Good => "good fit",
            FitVerdict::Fair => "fair fit",
            FitVerdict::Poor => "poor fit",
            FitVerdict::NoBetter => "no better than the datasheet",
            FitVerdict::Unchecked => "not checked on held-out runs",
        }
    }

    /// Whether the plan's numbers should be read with care.
    pub fn is_weak(self) -> bool {
        !matches!(self, FitVerdict::Good | FitVerdict::Fair)
    }
}

/// What to check when a fit is weak: the usual ways measured runs and the plan differ.
const CHECK_THE_RUNS: &str = "check that the runs used the plan's model, GPU, tensor \
     parallelism and engine settings (max_num_seqs, token budget, chunked prefill), and \
     whether prefix caching or speculative decoding were on";

/// The verdict on a calibration in a sentence or two, with what to do about a weak one.
pub fn verdict_words(c: &Calibration) -> String {
    let v = FitVerdict::of(c);
    let held = c.error.held_out.map_or(0.0, |h| h.overall);
    match v {
        FitVerdict::Good => format!(
            "A good fit: held-out error at most {} of measured latency.",
            pct_whole(GOOD_FIT_ERROR)
        ),
        FitVerdict::Fair => format!(
            "A fair fit: expect errors of {} to {} at loads like these; more measured rates \
             would tighten it.",
            pct_whole(GOOD_FIT_ERROR),
            pct_whole(FAIR_FIT_ERROR)
        ),
        FitVerdict::Poor => format!(
            "A poor fit: held-out error {} (above {}). The model does not explain these runs \
             well; {CHECK_THE_RUNS}.",
            percent_tenths(held),
            pct_whole(FAIR_FIT_ERROR)
        ),
        FitVerdict::NoBetter => {
            let what_now = if c.enabled {
                ": it does not earn its place. Switch it off, or"
            } else {
                ", so it is switched off and the datasheet constants are in force;"
            };
            format!(
                "The fit predicts held-out runs no better than the datasheet constants ({} \
                 against {}){what_now} {CHECK_THE_RUNS}.",
                percent_tenths(held),
                percent_tenths(c.error.uncalibrated.overall)
            )
        }
        FitVerdict::Unchecked => "Not checked: with one measured point nothing is held out, \
             and the constants' spread is not estimated."
            .to_string(),
    }
}

/// The highest fitted share of a datasheet figure taken at face value: a fit a few
/// percent above 100% is within what the points can tell.
pub const MAX_PLAUSIBLE_SHARE: f64 = 1.05;

/// Cautions a calibration carries with it wherever it goes (the plan, a link): fitted
/// constants the hardware cannot reach or that sit at the fit's limit. The verdict is
/// [`verdict_words`].
pub fn calibration_cautions(c: &Calibration) -> Vec<String> {
    let mut w = Vec::new();
    for (what, share) in [
        ("memory bandwidth", c.bandwidth_efficiency.value),
        ("compute", c.compute_efficiency.value),
    ] {
        if share > MAX_PLAUSIBLE_SHARE {
            w.push(format!(
                "the fit puts the {what} at {} of the datasheet, more than the GPU has: \
                 either the runs were on faster hardware than the plan's (check the GPU, the \
                 tensor parallelism, the weights' precision, and whether prefix caching or \
                 speculative decoding were on), or the points cannot tell it from the fixed \
                 per-step overhead, which fits the same latencies with less of it (runs at \
                 lower and higher loads tell them apart); the held-out error is what was \
                 checked, not each constant",
                pct_whole(share)
            ));
        }
    }
    if c.step_overhead_s.value >= MAX_OVERHEAD_S {
        w.push(format!(
            "the fitted step overhead sits at its limit of {} ms: something besides the \
             GPU slowed the runs (a busy host, the network, or a client that could not keep up)",
            crate::report::markdown::ms(MAX_OVERHEAD_S)
        ));
    }
    w
}

/// The words for a calibration; see [`CalibrationWords`].
pub fn calibration_summary(c: &Calibration) -> CalibrationWords {
    let n = c.points.len();
    let tool = if c.source.tool.is_empty() {
        String::new()
    } else {
        format!("{} ", c.source.tool)
    };
    let noun = if n == 1 {
        "measurement"
    } else {
        "measurements"
    };
    let named: Vec<&str> = [c.source.model.as_str(), c.source.engine.as_str()]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect();
    let named = if named.is_empty() {
        String::new()
    } else {
        format!(" ({})", named.join(", "))
    };
    let from = format!("{n} {tool}{noun}{named}");
    let sheet = pct_whole(c.error.uncalibrated.overall);
    let constants = format!(
        "Fitted: {} of the datasheet memory bandwidth, {} of its compute, {} ms fixed per step.",
        pct_whole(c.bandwidth_efficiency.value),
        pct_whole(c.compute_efficiency.value),
        crate::report::markdown::ms(c.step_overhead_s.value)
    );
    if !c.enabled {
        return CalibrationWords {
            sentence: format!(
                "Calibrated from {from}, but the calibration is switched off: the numbers use \
                 the datasheet constants (their error on the measurements: {sheet})."
            ),
            badge: "datasheet constants".into(),
            constants,
        };
    }
    match c.error.held_out {
        Some(h) => {
            let verdict = FitVerdict::of(c);
            let weak = match verdict {
                FitVerdict::Poor => " A poor fit: read the numbers with care.",
                FitVerdict::NoBetter => {
                    " That is no better than the datasheet constants: read the numbers with care."
                }
                _ => "",
            };
            let tag = if verdict.is_weak() {
                format!(" ({})", verdict.label())
            } else {
                String::new()
            };
            CalibrationWords {
                sentence: format!(
                    "Calibrated from {from}: predictions missed measured latency by {} on \
                     average on held-out runs (datasheet constants: {sheet}).{weak}",
                    pct_whole(h.overall)
                ),
                badge: format!("calibrated · held-out error {}{tag}", pct_whole(h.overall)),
                constants,
            }
        }
        None => CalibrationWords {
            sentence: format!(
                "Calibrated from {from}: predictions missed measured latency by {} on \
                 average on the measured run itself, which cannot be checked on held-out \
                 data (datasheet constants: {sheet}).",
                pct_whole(c.error.in_sample.overall)
            ),
            badge: format!(
                "calibrated · in-sample error {}",
                pct_whole(c.error.in_sample.overall)
            ),
            constants,
        },
    }
}

/// The calibration in one line for the plan's assumptions and the CLI: the sentence,
/// then the fitted constants while the calibration is in force.
pub fn calibration_words(c: &Calibration) -> String {
    let w = calibration_summary(c);
    if c.enabled {
        format!("{} {}", w.sentence, w.constants)
    } else {
        w.sentence
    }
}

fn opt_ms(x: Option<f64>) -> String {
    x.map_or(MISSING.into(), crate::report::markdown::ms)
}

fn load_label(l: &MeasuredLoad) -> String {
    match *l {
        MeasuredLoad::Rate { rate_rps, cv } if (cv - 1.0).abs() < 1e-9 => {
            format!("{} req/s", crate::alerts::fmt_num(rate_rps))
        }
        MeasuredLoad::Rate { rate_rps, cv } => {
            format!("{} req/s cv {cv:.2}", crate::alerts::fmt_num(rate_rps))
        }
        MeasuredLoad::Concurrency { concurrency } => format!("{concurrency} clients"),
    }
}

impl CalibrationReport {
    /// The report as plain text: constants, errors, the per-point table, warnings.
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let c = &self.calibration;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{}
",
            calibration_words(c)
        );
        let _ = writeln!(s, "files: {}", c.source.files.join(", "));
        let ms = crate::report::markdown::ms;
        let _ = writeln!(s, "\nconstant            fitted      ± sd (bootstrap)");
        for (name, value, sd) in [
            (
                "bandwidth share",
                format!("{:.3}", c.bandwidth_efficiency.value),
                format!("{:.3}", c.bandwidth_efficiency.sd),
            ),
            (
                "compute share",
                format!("{:.3}", c.compute_efficiency.value),
                format!("{:.3}", c.compute_efficiency.sd),
            ),
            (
                "step overhead",
                format!("{} ms", ms(c.step_overhead_s.value)),
                format!("{} ms", ms(c.step_overhead_s.sd)),
            ),
        ] {
            let sd = if c.spread_estimated() {
                sd
            } else {
                "– (one point)".to_string()
            };
            let _ = writeln!(s, "{name:<20}{value:<12}{sd}");
        }
        let row = |name: &str, m: &MetricErrors| {
            format!(
                "{name:<20}{:>8}{:>8}{:>8}{:>8}",
                m.ttft.map_or(MISSING.into(), percent_tenths),
                m.tpot.map_or(MISSING.into(), percent_tenths),
                m.e2e.map_or(MISSING.into(), percent_tenths),
                percent_tenths(m.overall)
            )
        };
        let _ = writeln!(
            s,
            "\nmean abs. error      {:>8}{:>8}{:>8}{:>8}",
            "TTFT", "TPOT", "E2E", "all"
        );
        let _ = writeln!(s, "{}", row("datasheet", &c.error.uncalibrated));
        let _ = writeln!(s, "{}", row("in sample", &c.error.in_sample));
        match &c.error.held_out {
            Some(h) => {
                let _ = writeln!(s, "{}", row("held out (LOO)", h));
            }
            None => {
                let _ = writeln!(s, "held out (LOO)      n/a (one point)");
            }
        }
        let _ = writeln!(s, "\nverdict: {}", verdict_words(c));
        let _ = writeln!(
            s,
            "\nmeans in ms: measured / fitted / held out\n{:<18}{:<26}{:<26}{:<26}file",
            "load", "TTFT", "TPOT", "E2E"
        );
        for p in &self.points {
            let cell = |meas: Option<f64>, f: fn(&Prediction) -> f64| {
                format!(
                    "{} / {} / {}",
                    opt_ms(meas),
                    crate::report::markdown::ms(f(&p.predicted)),
                    p.held_out
                        .map_or(MISSING.into(), |h| crate::report::markdown::ms(f(&h)))
                )
            };
            let _ = writeln!(
                s,
                "{:<18}{:<26}{:<26}{:<26}{}",
                load_label(&p.measured.load),
                cell(p.measured.ttft_mean_s, |x| x.ttft_s.mean),
                cell(p.measured.tpot_mean_s, |x| x.tpot_s.mean),
                cell(p.measured.e2e_mean_s, |x| x.e2e_s.mean),
                p.source,
            );
        }
        for w in &self.warnings {
            let _ = writeln!(s, "\nwarning: {w}");
        }
        s.trim_end().to_string()
    }
}

/// Calibrates in-process on `threads` OS threads; `progress` returning `false` cancels.
pub fn calibrate_threads(
    plan: &Plan,
    set: &MeasuredSet,
    threads: usize,
    progress: &mut dyn FnMut(CalibrationProgress) -> bool,
) -> Result<CalibrationReport, CalibrateError> {
    let mut c = Calibrator::new(plan, set)?;
    while !c.is_done() {
        let jobs = c.next_batch();
        if jobs.is_empty() {
            break;
        }
        let results = run_fit_jobs(c.problem(), &jobs, threads)?;
        c.feed(&results);
        if !progress(c.progress()) {
            return Err(CalibrateError::Cancelled);
        }
    }
    c.result().ok_or(CalibrateError::Cancelled)
}

/// Runs fit jobs on `threads` OS threads (1 = the calling thread), results in job order.
pub fn run_fit_jobs(
    problem: &CalibrationProblem,
    jobs: &[FitJob],
    threads: usize,
) -> Result<Vec<FitJobResult>, SimError> {
    let threads = threads.clamp(1, crate::sim::threads::MAX_THREADS);
    // Fewer jobs than threads (the full fit runs alone): spread each job's points.
    if jobs.len() < threads || threads == 1 {
        let per_job = threads / jobs.len().max(1);
        return jobs
            .iter()
            .map(|j| run_fit_job_threads(problem, j, per_job))
            .collect();
    }
    // Jobs interleaved over threads: refits cost about the same, the full fit runs alone.
    crate::sim::threads::map_in_order(jobs, threads, |j| run_fit_job(problem, j))
}

/// [`calibrate_threads`] on the machine's threads.
pub fn calibrate(
    plan: &Plan,
    set: &MeasuredSet,
    progress: &mut dyn FnMut(CalibrationProgress) -> bool,
) -> Result<CalibrationReport, CalibrateError> {
    calibrate_threads(plan, set, crate::search::default_threads(), progress)
}

/// Synthetic measurements: what a benchmark of `requests` requests per point would
/// report if the server's step times followed `truth` on `plan`, at each rate of
/// `rates` (Poisson), with every statistic scaled by a random factor within
/// ±`noise`. `detailed` keeps per-request lengths, as `--save-detailed` does.
/// Simulated with `seed`, which should differ from the plan's own so the fit sees
/// other draws than the "benchmark" did. Used by the tests, the benchmarks and the
/// docs to check that a fit recovers known constants.
pub fn synthetic_points(
    plan: &Plan,
    truth: &Constants,
    rates: &[f64],
    requests: u32,
    noise: f64,
    detailed: bool,
    seed: u64,
) -> Result<Vec<MeasuredPoint>, SimError> {
    use crate::measure::{Format, LatencyStats, MeasuredRequest};
    let stats = |s: &Summary, k: f64| LatencyStats {
        mean_s: Some(s.mean * k),
        median_s: Some(s.p50 * k),
        percentiles: vec![(90.0, s.p90 * k), (99.0, s.p99 * k)],
    };
    let mut rng = Rng::new(seed ^ 0x5EED);
    rates
        .iter()
        .map(|&rate| {
            let mut p = plan.clone();
            p.calibration = None;
            p.run.num_requests = requests;
            p.run.warmup_requests = 0;
            let mut cfg = SimConfig::from_plan(&p, rate)?;
            cfg.step = StepModel::datasheet(&p).calibrated(
                truth.bandwidth_efficiency,
                truth.compute_efficiency,
                truth.step_overhead_s,
            );
            let rep = sim::simulate(&cfg, seed)?;
            let mut k = || 1.0 + noise * (2.0 * rng.next_f64() - 1.0);
            let w = cfg.traffic.generate(requests as usize, &mut Rng::new(seed));
            let mean = |v: &[u32]| v.iter().map(|&x| x as f64).sum::<f64>() / v.len().max(1) as f64;
            let completed = rep.measured_requests - rep.unfinished_requests;
            Ok(MeasuredPoint {
                source: format!("synthetic-{}rps.json", crate::alerts::fmt_num(rate)),
                format: Format::Vllm,
                load: MeasuredLoad::Rate {
                    rate_rps: rate,
                    cv: 1.0,
                },
                max_concurrency: None,
                completed,
                failed: requests - completed,
                duration_s: rep.sim_time_s,
                achieved_rps: rep.completed_rps,
                mean_prompt_tokens: mean(&w.prompt_tokens),
                mean_output_tokens: mean(&w.output_tokens),
                ttft: stats(&rep.ttft_s, k()),
                tpot: stats(&rep.tpot_s, k()),
                itl: stats(&rep.itl_s, 1.0),
                e2e: stats(&rep.e2e_s, k()),
                requests: if detailed {
                    w.prompt_tokens
                        .iter()
                        .zip(&w.output_tokens)
                        .map(|(&prompt_tokens, &output_tokens)| MeasuredRequest {
                            prompt_tokens,
                            output_tokens,
                        })
                        .collect()
                } else {
                    Vec::new()
                },
                model: Some(plan.model.preset.clone()),
                engine: Some("vllm".into()),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;
