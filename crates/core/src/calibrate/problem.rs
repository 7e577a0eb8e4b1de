//! The calibration problem: one simulated case per measured point, the fitted constants
//! and their search space, and how far a prediction is from a measurement.

use serde::{Deserialize, Serialize};

use super::{CalibrateError, FIT_SEEDS, MAX_FIT_REQUESTS, MAX_OVERHEAD_S, MIN_FIT_REQUESTS};
use super::{MIN_OVERHEAD_S, PER_POINT_SEED, WARMUP_PAUSE_S};
use crate::format::MISSING;
use crate::measure::{LengthStats, MeasuredPoint, MeasuredSet, SpecMeasured};
use crate::plan::fields;
use crate::plan::{
    Arrival, LengthDist, LengthSpec, MeasuredLoad, MeasuredSummary, MetricErrors, Plan, TraceRow,
    TrafficSpec, MAX_EFFICIENCY, MAX_TOKENS, MIN_EFFICIENCY,
};
use crate::rng::Rng;
use crate::roofline::{StepModel, StepModelOf};
use crate::sim::{self, replication_seed, SimConfig, SimConfigOf, SimError, Summary};
use goodput_engine::step::FittedConstants;
use goodput_engine::traffic::LeadIn;

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
    /// How the lengths were known: per request, from spread statistics, or from the
    /// means alone on the plan's shape.
    #[serde(default)]
    pub lengths: LengthSource,
    /// Speculative decoding as the server ran it, when the file measured it: the point
    /// is simulated drafting its tokens a step with the acceptance that gains its
    /// measured tokens a step, whatever the plan's own engine settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<SpecMeasured>,
}

/// Where a point's simulated lengths come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum LengthSource {
    /// Every request's lengths, from a detailed result file.
    #[default]
    PerRequest,
    /// Percentiles, minimum or maximum of the lengths (a table's spread columns).
    Spread,
    /// The mean lengths only, on the plan's length shape (its lognormal sigma).
    MeansOnly,
    /// The plan's prefix structure (shared prefixes, sessions) makes the prompts.
    Structure,
}

/// Which constants beyond the three always fitted (bandwidth share, compute share, the
/// empty-cache decode step) a fit frees; the others keep the plan's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FitTerms {
    /// The per-request frontend time (pinned by light-load TTFT).
    pub frontend: bool,
    /// The per-sequence scheduling time (pinned by how TPOT grows with the batch).
    pub seq_overhead: bool,
    /// The extra time of a step with prompt tokens (pinned by how TPOT grows with the
    /// prompts arriving, and by TTFT).
    pub prefill_overhead: bool,
    /// The KV-read efficiency (pinned by how TPOT grows with the decoders' context).
    pub kv_read: bool,
}

impl FitTerms {
    /// The three constants of the articles' roofline only.
    pub const ROOFLINE: FitTerms = FitTerms {
        frontend: false,
        seq_overhead: false,
        prefill_overhead: false,
        kv_read: false,
    };
    /// Every constant.
    pub const ALL: FitTerms = FitTerms {
        frontend: true,
        seq_overhead: true,
        prefill_overhead: true,
        kv_read: true,
    };
    /// The constants a calibration fits unless told otherwise: all but the per-sequence
    /// time, which the public runs never needed (their fits put it at zero) and which
    /// the KV reads and the prefill steps otherwise trade against.
    pub const DEFAULT: FitTerms = FitTerms {
        frontend: true,
        seq_overhead: false,
        prefill_overhead: true,
        kv_read: true,
    };

    /// Whether search dimension `k` of a [`Theta`] is free.
    pub fn frees(&self, k: usize) -> bool {
        match k {
            0..=2 => true,
            3 => self.frontend,
            4 => self.seq_overhead,
            5 => self.prefill_overhead,
            6 => self.kv_read,
            _ => false,
        }
    }

    /// The free dimensions, in order.
    pub fn free_dims(&self) -> Vec<usize> {
        (0..THETA_DIMS).filter(|&k| self.frees(k)).collect()
    }
}

/// The constants a fit may free beyond the three always fitted: each search dimension
/// with the plan field its value replaces, whose flag names it (`--terms`).
const OPTIONAL_TERMS: [(usize, &str); 4] = [
    (3, "engine.frontend_s"),
    (4, "hardware.seq_overhead_s"),
    (5, "hardware.prefill_overhead_s"),
    (6, "hardware.kv_read_efficiency"),
];

/// The flag of an optional term's plan field (`frontend-time`).
fn term_flag(path: &str) -> &'static str {
    fields::by_path(path)
        .and_then(|f| f.flag)
        .map_or(MISSING, |f| f.name)
}

impl FitTerms {
    /// Frees or fixes search dimension `k` (3 to 6).
    fn set(&mut self, k: usize, free: bool) {
        match k {
            3 => self.frontend = free,
            4 => self.seq_overhead = free,
            5 => self.prefill_overhead = free,
            6 => self.kv_read = free,
            _ => {}
        }
    }

    /// The constants a comma-separated list frees: the flags of their plan fields
    /// (`frontend-time,kv-read-efficiency`), or `default`, `roofline` or `all`.
    pub fn parse(text: &str) -> Result<FitTerms, String> {
        match text.trim() {
            "default" => return Ok(FitTerms::DEFAULT),
            "roofline" | "" => return Ok(FitTerms::ROOFLINE),
            "all" => return Ok(FitTerms::ALL),
            _ => {}
        }
        let mut terms = FitTerms::ROOFLINE;
        for name in text.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let Some(&(k, _)) = OPTIONAL_TERMS.iter().find(|(_, p)| term_flag(p) == name) else {
                return Err(format!(
                    "'{name}' is not a constant a calibration fits; give a comma-separated \
                     list of {}, or default, roofline or all",
                    FitTerms::ALL.names()
                ));
            };
            terms.set(k, true);
        }
        Ok(terms)
    }

    /// The flags of the constants freed beyond the three always fitted, comma-separated;
    /// `roofline` when none is.
    pub fn names(&self) -> String {
        let on: Vec<&str> = OPTIONAL_TERMS
            .iter()
            .filter(|(k, _)| self.frees(*k))
            .map(|(_, p)| term_flag(p))
            .collect();
        if on.is_empty() {
            "roofline".into()
        } else {
            on.join(",")
        }
    }
}

impl Default for FitTerms {
    fn default() -> Self {
        FitTerms::DEFAULT
    }
}

/// Everything a fit job needs: the plan whose step model is fitted, and the points.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationProblem {
    /// The plan, its calibration removed.
    pub plan: Plan,
    /// One case per measured point, in the order given.
    pub points: Vec<PointCase>,
    /// The constants the fit frees.
    #[serde(default)]
    pub terms: FitTerms,
}

/// Dimensions of the search space.
pub const THETA_DIMS: usize = 7;

/// The constants in search space: `(ln bw share, ln compute share, ln floor [ms],
/// ln(1 + frontend [ms]), ln(1 + per-sequence time [µs]), ln(1 + prefill-step time
/// [ms]), ln KV-read efficiency)`, where the floor is the
/// time of a decode step with an empty KV cache, `overhead + weight read time / bw
/// share`. The floor is what light-load TPOT pins down directly; searching it instead
/// of the overhead keeps the valley of equally good fits (less bandwidth, less
/// overhead) from lying diagonally in the search space.
pub type Theta = [f64; THETA_DIMS];

/// Smallest fitted KV-read efficiency (relative to the weight reads).
pub const MIN_KV_READ_EFFICIENCY: f64 = 0.05;
/// Largest fitted KV-read efficiency.
pub const MAX_KV_READ_EFFICIENCY: f64 = 1.5;
/// Largest fitted frontend time [s].
pub const MAX_FRONTEND_S: f64 = 10.0;
/// Largest fitted per-sequence time [s/sequence].
pub const MAX_SEQ_OVERHEAD_S: f64 = 0.01;

/// Constants decoded from a [`Theta`], clamped to their allowed ranges.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Constants {
    /// Achieved share of the plan's memory bandwidth.
    pub bandwidth_efficiency: f64,
    /// Achieved share of the plan's compute.
    pub compute_efficiency: f64,
    /// Fixed per-step overhead [s].
    pub step_overhead_s: f64,
    /// Scheduling time per sequence in a step [s/sequence].
    #[serde(default)]
    pub seq_overhead_s: f64,
    /// Per-request frontend time [s].
    #[serde(default)]
    pub frontend_s: f64,
    /// Extra time of a step with prompt tokens [s].
    #[serde(default)]
    pub prefill_overhead_s: f64,
    /// KV-read bandwidth relative to the weight reads [0..].
    #[serde(default = "one")]
    pub kv_read_efficiency: f64,
}

fn one() -> f64 {
    1.0
}

impl Constants {
    /// As the step model applies them.
    pub fn fitted(&self) -> FittedConstants {
        FittedConstants {
            bandwidth_efficiency: self.bandwidth_efficiency,
            compute_efficiency: self.compute_efficiency,
            step_overhead_s: self.step_overhead_s,
            seq_overhead_s: self.seq_overhead_s,
            frontend_s: self.frontend_s,
            prefill_overhead_s: self.prefill_overhead_s,
            kv_read_efficiency: self.kv_read_efficiency,
        }
    }
}

/// The box the search stays in: shares in [`MIN_EFFICIENCY`, `MAX_EFFICIENCY`], the
/// floor between 1 µs and 10 s, the frontend up to [`MAX_FRONTEND_S`], the
/// per-sequence time up to [`MAX_SEQ_OVERHEAD_S`].
pub(crate) fn clamp_theta(t: Theta) -> Theta {
    let (lo_e, hi_e) = (libm::log(MIN_EFFICIENCY), libm::log(MAX_EFFICIENCY));
    let (lo_f, hi_f) = (libm::log(1e-3), libm::log(1e4));
    let hi_front = libm::log1p(MAX_FRONTEND_S * 1e3);
    let hi_seq = libm::log1p(MAX_SEQ_OVERHEAD_S * 1e6);
    let hi_prefill = libm::log1p(MAX_OVERHEAD_S * 1e3);
    let c = |x: f64, lo: f64, hi: f64| if x.is_nan() { lo } else { x.clamp(lo, hi) };
    [
        c(t[0], lo_e, hi_e),
        c(t[1], lo_e, hi_e),
        c(t[2], lo_f, hi_f),
        c(t[3], 0.0, hi_front),
        c(t[4], 0.0, hi_seq),
        c(t[5], 0.0, hi_prefill),
        c(
            t[6],
            libm::log(MIN_KV_READ_EFFICIENCY),
            libm::log(MAX_KV_READ_EFFICIENCY),
        ),
    ]
}

impl Constants {
    /// The constants at `theta` (clamped), for a plan whose batch-of-one decode reads
    /// its weights in `weights_time_s` at the full datasheet bandwidth.
    pub fn from_theta(theta: Theta, weights_time_s: f64) -> Constants {
        let t = clamp_theta(theta);
        let bw = libm::exp(t[0]);
        let floor_s = libm::exp(t[2]) * 1e-3;
        Constants {
            bandwidth_efficiency: bw,
            compute_efficiency: libm::exp(t[1]),
            step_overhead_s: (floor_s - weights_time_s / bw).clamp(MIN_OVERHEAD_S, MAX_OVERHEAD_S),
            frontend_s: libm::expm1(t[3]) * 1e-3,
            seq_overhead_s: libm::expm1(t[4]) * 1e-6,
            prefill_overhead_s: libm::expm1(t[5]) * 1e-3,
            kv_read_efficiency: libm::exp(t[6]),
        }
    }

    /// The search-space point of these constants.
    pub fn theta(&self, weights_time_s: f64) -> Theta {
        let floor_s = self.step_overhead_s + weights_time_s / self.bandwidth_efficiency;
        clamp_theta([
            libm::log(self.bandwidth_efficiency),
            libm::log(self.compute_efficiency),
            libm::log(floor_s * 1e3),
            libm::log1p(self.frontend_s * 1e3),
            libm::log1p(self.seq_overhead_s * 1e6),
            libm::log1p(self.prefill_overhead_s * 1e3),
            libm::log(self.kv_read_efficiency),
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
    /// hardware, engine settings and prefix cache, freeing the constants of
    /// [`FitTerms::DEFAULT`].
    pub fn new(plan: &Plan, set: &MeasuredSet) -> Result<CalibrationProblem, CalibrateError> {
        CalibrationProblem::with_terms(plan, set, FitTerms::DEFAULT)
    }

    /// [`CalibrationProblem::new`], freeing the constants of `terms`.
    pub fn with_terms(
        plan: &Plan,
        set: &MeasuredSet,
        terms: FitTerms,
    ) -> Result<CalibrationProblem, CalibrateError> {
        plan.validate().map_err(CalibrateError::Plan)?;
        if set.points.is_empty() {
            return Err(CalibrateError::NoPoints);
        }
        let mut base = plan.clone();
        base.calibration = None;
        let points = set
            .points
            .iter()
            .enumerate()
            .map(|(i, p)| point_case(&base, p, i as u64))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(CalibrationProblem {
            plan: base,
            points,
            terms,
        })
    }

    /// The simulation configuration of point `i` with constants `c`.
    fn config(&self, i: usize, c: &Constants) -> Result<SimConfig, SimError> {
        let case = &self.points[i];
        let mut plan = self.plan.clone();
        plan.traffic = case.traffic.clone();
        // A measured run is one workload, as the file gives it: the plan's traffic
        // classes are not its.
        plan.classes.clear();
        // A benchmark starts from an idle server; with shared prefixes, the plan's
        // warm-up requests run first, unmeasured, so that the cache holds what the
        // benchmark's own warm-up (or its earlier rates) left in it.
        let warmup = if plan.traffic.sharing.is_some() {
            self.plan.run.warmup_requests
        } else {
            0
        };
        plan.run.num_requests = case.num_requests + warmup;
        plan.run.warmup_requests = warmup;
        // A run that measured its drafts runs as it drafted (or without speculation,
        // when it measured none); a file that says nothing keeps the plan's own.
        if let Some(s) = case.spec {
            plan.engine.set_speculation((s.draft_len(), s.acceptance()));
        }
        let mut cfg = SimConfig::from_plan(&plan, case.rate_rps)?;
        // The warm-up runs at the lightest measured rate, and the measured requests
        // start once it has drained: a warm-up at a rate past saturation would leave a
        // queue the benchmark, which started each rate on an idle server, never had.
        if warmup > 0 {
            if let Some(light) = self.lightest_open_rate() {
                cfg.traffic.lead_in = Some(LeadIn {
                    requests: warmup,
                    rate_scale: (light / case.rate_rps).min(1.0),
                    pause_s: WARMUP_PAUSE_S,
                });
            }
        }
        cfg.step = StepModel::datasheet(&plan).calibrated(&c.fitted());
        cfg.check()?;
        Ok(cfg)
    }

    /// The lightest rate of the points that arrive at a rate (open loop), if any
    /// [requests/s].
    fn lightest_open_rate(&self) -> Option<f64> {
        self.points
            .iter()
            .filter(|p| p.traffic.arrival.spaced_by_rate())
            .map(|p| p.rate_rps)
            .reduce(f64::min)
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
            // The simulation reports per replica; the measurement is the fleet's.
            achieved_rps: rps / FIT_SEEDS as f64 * self.plan.fleet().replicas.max(1) as f64,
        })
    }

    /// Predictions of every point with constants `c`.
    pub fn predict_all(&self, c: &Constants) -> Result<Vec<Prediction>, SimError> {
        (0..self.points.len()).map(|i| self.predict(i, c)).collect()
    }

    /// Time a decode step of one sequence takes to read its weights at the plan's full
    /// bandwidth (for a mixture of experts, the experts one token picks) [s].
    pub fn weights_time_s(&self) -> f64 {
        let s = StepModel::datasheet(&self.plan);
        s.weights_read(1.0) / (s.tp_degree.max(1) as f64 * s.mem_bandwidth_bytes_per_s)
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
            seq_overhead_s: self.plan.hardware.seq_overhead_s,
            frontend_s: self.plan.engine.frontend_s,
            prefill_overhead_s: self.plan.hardware.prefill_overhead_s,
            kv_read_efficiency: self.plan.hardware.kv_read_efficiency,
        }
    }

    /// Indices of the points from the lightest load to the heaviest: by offered rate
    /// when every point is open-loop, by clients when every point is a closed loop, else
    /// by measured throughput; ties keep the order given.
    pub fn by_load(&self) -> Vec<u32> {
        let keys = self.load_keys();
        let mut order: Vec<u32> = (0..self.points.len() as u32).collect();
        order.sort_by(|&a, &b| keys[a as usize].total_cmp(&keys[b as usize]));
        order
    }

    /// Each point's load, in the units [`CalibrationProblem::by_load`] orders by: the
    /// offered rate when every point gives one, the clients when every point is a closed
    /// loop, else the achieved throughput.
    pub fn load_keys(&self) -> Vec<f64> {
        let all_rate = self
            .points
            .iter()
            .all(|p| matches!(p.measured.load, MeasuredLoad::Rate { .. }));
        let all_closed = self
            .points
            .iter()
            .all(|p| matches!(p.measured.load, MeasuredLoad::Concurrency { .. }));
        self.points
            .iter()
            .map(|c| match c.measured.load {
                MeasuredLoad::Rate { rate_rps, .. } if all_rate => rate_rps,
                MeasuredLoad::Concurrency { concurrency } if all_closed => concurrency as f64,
                _ => c.measured.achieved_rps,
            })
            .collect()
    }

    /// The "fit light, predict heavy" split: the lighter half of the loads (rounded up,
    /// so an odd count fits one more than it predicts) and the rest; `None` with fewer
    /// than two points.
    pub fn light_heavy(&self) -> Option<(Vec<u32>, Vec<u32>)> {
        let n = self.points.len();
        if n < 2 {
            return None;
        }
        let order = self.by_load();
        let light = n.div_ceil(2).min(n - 1);
        Some((order[..light].to_vec(), order[light..].to_vec()))
    }
}

/// The workload of one measured point, on `base`'s traffic shape and prefix cache.
/// `index` seeds the order of lengths drawn from spread statistics.
fn point_case(base: &Plan, p: &MeasuredPoint, index: u64) -> Result<PointCase, CalibrateError> {
    let bad = |message: String| CalibrateError::Point {
        point: p.source.clone(),
        message,
    };
    let mut traffic = base.traffic.clone();
    traffic.trace = Vec::new();
    let n_measured = p.completed.saturating_add(p.failed);
    let mut num_requests = if n_measured > 0 { n_measured } else { 1000 };
    let lengths;
    if base.traffic.sharing.is_some() {
        // The prefix structure makes the prompts (each turn resends its conversation):
        // the plan's lengths are its messages and replies; the file's lengths are only
        // what the structure should give on average.
        lengths = LengthSource::Structure;
    } else if !p.requests.is_empty() {
        let rows: Vec<TraceRow> = p
            .requests
            .iter()
            .map(|r| TraceRow {
                arrival_s: 0.0,
                prompt_tokens: r.prompt_tokens.clamp(1, MAX_TOKENS),
                output_tokens: r.output_tokens.clamp(1, MAX_TOKENS),
                ..TraceRow::default()
            })
            .collect();
        num_requests = rows.len() as u32;
        set_trace_lengths(&mut traffic, rows);
        lengths = LengthSource::PerRequest;
    } else {
        if !(p.mean_prompt_tokens >= 1.0 && p.mean_output_tokens >= 1.0) {
            return Err(bad(format!(
                "mean prompt and output lengths must be at least 1 token, got {} and {}",
                p.mean_prompt_tokens, p.mean_output_tokens
            )));
        }
        // Lengths as evenly spaced quantiles of what the file says of them (its spread
        // statistics, else the plan's shape around the file's mean), each column dealt
        // out in an order of its own: a sample whose mean and spread are the file's, with
        // none of the noise of random draws, so every point's workload is the one measured.
        let n = num_requests.clamp(MIN_FIT_REQUESTS, MAX_FIT_REQUESTS) as usize;
        let from_spread = [
            p.prompt_spread.draws(p.mean_prompt_tokens, n),
            p.output_spread.draws(p.mean_output_tokens, n),
        ];
        lengths = if from_spread.iter().any(Option::is_some) {
            LengthSource::Spread
        } else {
            LengthSource::MeansOnly
        };
        let [prompt, output] = from_spread;
        let mut rng = Rng::new(replication_seed(PER_POINT_SEED, index as u32));
        let mut pr =
            prompt.unwrap_or_else(|| shape_draws(&base.traffic.prompt, p.mean_prompt_tokens, n));
        let mut out =
            output.unwrap_or_else(|| shape_draws(&base.traffic.output, p.mean_output_tokens, n));
        shuffle(&mut pr, &mut rng);
        shuffle(&mut out, &mut rng);
        let rows = pr
            .iter()
            .zip(&out)
            .map(|(&a, &b)| TraceRow {
                arrival_s: 0.0,
                prompt_tokens: a,
                output_tokens: b,
                ..TraceRow::default()
            })
            .collect();
        num_requests = n as u32;
        set_trace_lengths(&mut traffic, rows);
    }
    let rate_rps = match p.load {
        MeasuredLoad::Rate { rate_rps, cv } => {
            traffic.arrival = if (cv - 1.0).abs() < 1e-9 {
                Arrival::Poisson
            } else if cv < 1e-9 {
                Arrival::Constant
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
    // A plan routed over replicas measures the whole fleet: each replica sees its share
    // of the rate and of the requests (the fleet's workload multiplies them back).
    let replicas = base.fleet().replicas.max(1);
    let rate_rps = rate_rps / replicas as f64;
    let num_requests = num_requests.div_ceil(replicas);
    sim::check_rate(rate_rps).map_err(|e| bad(e.to_string()))?;
    Ok(PointCase {
        source: p.source.clone(),
        measured: p.summary(),
        traffic,
        rate_rps,
        num_requests: num_requests.clamp(MIN_FIT_REQUESTS, MAX_FIT_REQUESTS),
        lengths,
        spec: p.spec,
    })
}

/// Replays `rows`' lengths (not their arrivals) in `traffic`.
fn set_trace_lengths(traffic: &mut TrafficSpec, rows: Vec<TraceRow>) {
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
    traffic.trace = rows;
}

/// `n` lengths with mean `mean` on the plan's length shape: evenly spaced quantiles of
/// a lognormal of the plan's sigma, clipped to the plan's range (its top widened to at
/// least 8× the mean, so a plan sized for other traffic does not cut the benchmark's
/// tail), with the median chosen (by bisection) so that the clipped lengths' mean is
/// `mean`; a fixed shape gives `n` times the mean, rounded.
fn shape_draws(shape: &LengthSpec, mean: f64, n: usize) -> Vec<u32> {
    let lo = (shape.min.max(1) as f64).min(mean);
    let hi = (shape.max as f64).max(8.0 * mean).min(MAX_TOKENS as f64);
    let clip = |x: f64| libm::round(x.clamp(lo, hi)).clamp(1.0, MAX_TOKENS as f64) as u32;
    let LengthDist::LogNormal { sigma, .. } = shape.dist else {
        return vec![clip(mean); n];
    };
    if sigma.is_nan() || sigma <= 0.0 {
        return vec![clip(mean); n];
    }
    let z: Vec<f64> = (0..n)
        .map(|i| libm::exp(sigma * normal_quantile((i as f64 + 0.5) / n as f64)))
        .collect();
    let draws = |median: f64| -> Vec<u32> { z.iter().map(|&k| clip(median * k)).collect() };
    let mean_of = |v: &[u32]| v.iter().map(|&x| x as f64).sum::<f64>() / n.max(1) as f64;
    // The clipped mean rises with the median: bisect on a log scale.
    let (mut a, mut b) = (libm::log(lo.max(1.0) / 1e3), libm::log(hi * 1e3));
    for _ in 0..60 {
        let m = 0.5 * (a + b);
        if mean_of(&draws(libm::exp(m))) < mean {
            a = m;
        } else {
            b = m;
        }
    }
    draws(libm::exp(0.5 * (a + b)))
}

/// The standard normal quantile at `p` in (0, 1): Acklam's rational approximation
/// (relative error under 1.2e-9), enough for lengths in whole tokens.
pub(crate) fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let p = p.clamp(1e-300, 1.0 - 1e-16);
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < 0.024_25 {
        tail(libm::sqrt(-2.0 * libm::log(p)))
    } else if p > 1.0 - 0.024_25 {
        -tail(libm::sqrt(-2.0 * libm::log(1.0 - p)))
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

/// Fisher–Yates with the project's generator.
fn shuffle(v: &mut [u32], rng: &mut Rng) {
    for i in (1..v.len()).rev() {
        let j = ((rng.next_f64() * (i + 1) as f64) as usize).min(i);
        v.swap(i, j);
    }
}

impl LengthStats {
    /// `n` lengths whose quantiles follow these statistics and whose mean is `mean`:
    /// evenly spaced quantiles of a piecewise-linear quantile function through the known
    /// points (minimum at 0, percentiles, maximum at 1). `None` when the statistics pin
    /// no spread (nothing but the mean).
    pub fn draws(&self, mean: f64, n: usize) -> Option<Vec<u32>> {
        let mut knots: Vec<(f64, f64)> = Vec::new();
        if let Some(m) = self.min {
            knots.push((0.0, m));
        }
        for &(pct, v) in &self.percentiles {
            knots.push((pct / 100.0, v));
        }
        if let Some(m) = self.max {
            knots.push((1.0, m));
        }
        knots.sort_by(|a, b| a.0.total_cmp(&b.0));
        knots.dedup_by(|a, b| a.0 == b.0);
        if knots.len() < 2 || n == 0 {
            return None;
        }
        // A range alone (minimum and maximum) places the median where the mean falls,
        // so a skewed range keeps its mean.
        if knots.len() == 2 && knots[0].0 == 0.0 && knots[1].0 == 1.0 {
            let (lo, hi) = (knots[0].1, knots[1].1);
            let mid = (2.0 * mean - 0.5 * (lo + hi)).clamp(lo, hi);
            knots.insert(1, (0.5, mid));
        }
        // Below the first knot and above the last, hold the end values.
        let q = |u: f64| -> f64 {
            if u <= knots[0].0 {
                return knots[0].1;
            }
            for w in knots.windows(2) {
                let ((u0, v0), (u1, v1)) = (w[0], w[1]);
                if u <= u1 {
                    return v0 + (v1 - v0) * (u - u0) / (u1 - u0);
                }
            }
            knots[knots.len() - 1].1
        };
        Some(
            (0..n)
                .map(|i| {
                    let u = (i as f64 + 0.5) / n as f64;
                    libm::round(q(u)).clamp(1.0, MAX_TOKENS as f64) as u32
                })
                .collect(),
        )
    }
}

/// A length law with the plan's shape whose mean is `mean` [tokens]: a lognormal keeps
/// its sigma (median = mean / e^(σ²/2)), anything else becomes fixed at the mean. The
/// upper clip widens to at least 8× the mean so the clip does not bias the mean.
pub(crate) fn length_with_mean(shape: &LengthSpec, mean: f64) -> LengthSpec {
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
pub(crate) const METRICS: usize = 3;

/// Weight of a mean in the fit's loss.
const MEAN_WEIGHT: f64 = 1.0;
/// Weight of a median: the shape of the distribution, which rests on the workload's
/// lengths and prefix hits more than on the hardware.
const P50_WEIGHT: f64 = 0.25;
/// Weight of a 99th percentile: a handful of requests at a few hundred a point.
const P99_WEIGHT: f64 = 0.1;

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
            (m.ttft_mean_s, p.ttft_s.mean, MEAN_WEIGHT),
            (m.ttft_p50_s, p.ttft_s.p50, P50_WEIGHT),
            (m.ttft_p99_s, p.ttft_s.p99, P99_WEIGHT),
        ]),
        one([
            (m.tpot_mean_s, p.tpot_s.mean, MEAN_WEIGHT),
            (m.tpot_p50_s, p.tpot_s.p50, P50_WEIGHT),
            (m.tpot_p99_s, p.tpot_s.p99, P99_WEIGHT),
        ]),
        one([
            (m.e2e_mean_s, p.e2e_s.mean, MEAN_WEIGHT),
            (m.e2e_p50_s, p.e2e_s.p50, P50_WEIGHT),
            (m.e2e_p99_s, p.e2e_s.p99, P99_WEIGHT),
        ]),
    ]
}

/// Scale of the pseudo-Huber loss on log ratios: errors beyond about 25% count linearly.
const HUBER_DELTA: f64 = 0.25;
/// Loss of a statistic the simulation could not produce (nothing finished).
const MISSING_LOSS: f64 = 10.0;

/// Loss of one point: metrics weigh equally, statistics within a metric by weight.
pub(crate) fn point_loss(m: &MeasuredSummary, p: &Prediction) -> f64 {
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

/// Which statistic an error is taken of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Statistic {
    /// The mean (the median where a file gives no mean): how far off the typical
    /// request is.
    Mean,
    /// The 99th percentile: how far off the tail is (noisy on a few hundred requests).
    P99,
}

/// Absolute percentage errors per metric of one statistic, or `None` for a metric the
/// file does not give it for.
pub(crate) fn point_errors_of(
    m: &MeasuredSummary,
    p: &Prediction,
    stat: Statistic,
) -> [Option<f64>; METRICS] {
    let e = |meas: Option<f64>, pred: f64| {
        meas.filter(|x| *x > 0.0).map(|x| {
            if pred.is_finite() {
                (pred / x - 1.0).abs()
            } else {
                1.0
            }
        })
    };
    let pick = |mean: Option<f64>, p50: Option<f64>, p99: Option<f64>, s: &Summary| match stat {
        Statistic::Mean => e(mean, s.mean).or_else(|| e(p50, s.p50)),
        Statistic::P99 => e(p99, s.p99),
    };
    [
        pick(m.ttft_mean_s, m.ttft_p50_s, m.ttft_p99_s, &p.ttft_s),
        pick(m.tpot_mean_s, m.tpot_p50_s, m.tpot_p99_s, &p.tpot_s),
        pick(m.e2e_mean_s, m.e2e_p50_s, m.e2e_p99_s, &p.e2e_s),
    ]
}

/// Absolute percentage errors of the means per metric (the median where a file gives
/// no mean), or `None` for a metric the file does not give.
pub(crate) fn point_errors(m: &MeasuredSummary, p: &Prediction) -> [Option<f64>; METRICS] {
    point_errors_of(m, p, Statistic::Mean)
}

/// Mean absolute percentage errors of the means over the points `measured`,
/// predicted by `preds`.
pub fn mape<'a>(
    measured: impl IntoIterator<Item = &'a MeasuredSummary>,
    preds: &[Prediction],
) -> MetricErrors {
    mape_of(measured, preds, Statistic::Mean)
}

/// Mean absolute percentage errors of one statistic over the points `measured`,
/// predicted by `preds`.
pub fn mape_of<'a>(
    measured: impl IntoIterator<Item = &'a MeasuredSummary>,
    preds: &[Prediction],
    stat: Statistic,
) -> MetricErrors {
    let mut sums = [0.0; METRICS];
    let mut counts = [0.0; METRICS];
    for (m, p) in measured.into_iter().zip(preds) {
        for (k, e) in point_errors_of(m, p, stat).into_iter().enumerate() {
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
