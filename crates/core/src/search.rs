//! Goodput search and knob sweep, as resumable state machines.
//!
//! Goodput is the highest arrival rate at which the mean attainment (joint, or marginal
//! per `slo.mode`) over `R` replications stays at or above the target, under open-loop
//! traffic: a closed-loop plan is searched with Poisson arrivals of the same lengths and
//! a client-side `max_concurrency` is ignored (see [`run_job_with`]). The search never runs a simulation
//! itself: it hands out independent [`Job`]s and takes [`JobResult`]s back, so the
//! same driver runs in-process (the CLI) or spread over Web Workers (the app), and
//! both give bit-identical answers.
//!
//! ```text
//!   GoodputSearch::new(plan) ─▶ next_batch() ─▶ [Job ...] ─▶ run_job (anywhere) ─┐
//!          ▲                                                                     │
//!          └──────────── feed([JobResult ...]) ◀──────────────────────────────────┘
//!   repeat until is_done(); then result()
//! ```
//!
//! **Rules that make it deterministic.** A batch holds every replication of one to
//! three rates. The search decides its next batch only when the whole current batch
//! is back; results are matched by job id, so arrival order and batching do not matter.
//! Replication `i` of every rate uses seed `replication_seed(plan.run.seed, i)`:
//! common random numbers, which make the curve smooth in the rate.
//!
//! **The search.** It starts from the roofline capacity guess
//! ([`crate::analytic::capacity_guess_rps`]) with rates at 0.6 and 0.9 of it, steps
//! up (×1.5, ×2.25) while every rate passes and down (÷2.5, ÷8) while even the lowest
//! fails, then trisects the bracket between the highest passing rate and the first
//! failing rate until it is narrower than 2% of the rate (at least
//! [`MIN_TOLERANCE_RPS`]). Below 1% of the guess it gives up: goodput 0, with a reason.
//! The scan's low rate, 0.25 of the guess, runs only when it can tell something: when
//! 0.6 of the guess misses the target (it is then the first rate down), or passes with
//! a band reaching below the target (it then gives the range its lower end). A low
//! rate costs the most to simulate (a lightly loaded engine runs several times as many
//! steps per request), and near the usual goodput it changes neither the bracket nor
//! the range, so leaving it out saves about a fifth of a typical search's work.
//!
//! **The curve.** Every evaluated rate, sorted: mean attainment and a 95% confidence
//! interval (Student's t over the replications; with one replication, the normal
//! approximation of the binomial over the measured requests). Goodput is the highest
//! evaluated rate that passes below the first that fails. Its range is where the
//! lower and upper edges of the band cross the target (linear interpolation).
//! Latency detail per rate (TTFT/TPOT p50/p99) comes from one full simulation with
//! replication 0's seed.

mod flags;
mod grid;
mod per_class;
mod sweep;

pub use flags::{hf_model_name, launch_flags, LaunchFlags};
pub use grid::{fit_grid, FittedGrid, FITTED_AXIS_VALUES};
pub use per_class::PerClass;
pub use sweep::{
    planned_at_best_text, sweep_knobs, sweep_knobs_threads, KnobSweep, PartialSweep, SweepCell,
    SweepResult, SWEEP_MAX_REPLICATIONS,
};

use crate::analytic::{capacity_guess_of, MeanLengths};
use crate::format::{percent, percent_tenths};
use crate::plan::Plan;
use crate::plan::SloSpec;
use crate::roofline::{StepModel, StepModelOf};
use crate::sim::SimConfigOf;
use crate::sim::{self, SimConfig, SimError};
use crate::slo::{bounds_waiting, has_objective};
use crate::stats;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Most rates one search evaluates.
pub const MAX_RATES: usize = 24;
/// Most replications per rate a search accepts: the plan's own limit (the work limit
/// [`MAX_WORK_REQUESTS`] bounds long runs).
pub const MAX_SEARCH_REPLICATIONS: u32 = crate::plan::MAX_REPLICATIONS;
/// Most simulated requests (jobs × requests per job) a search or sweep may plan for.
pub const MAX_WORK_REQUESTS: u64 = 200_000_000;
/// Refuses a `run` whose worst case, `simulations` simulations of `requests_per_run`
/// requests each, would simulate more than [`MAX_WORK_REQUESTS`] requests; `grid` says
/// whether a smaller sweep grid helps. One check for the search, the knob sweep, the
/// GPU comparison and the disaggregated sizing.
pub fn check_work(
    run: &'static str,
    grid: bool,
    simulations: u64,
    requests_per_run: u32,
) -> Result<(), SearchError> {
    let requests = simulations * u64::from(requests_per_run);
    if requests > MAX_WORK_REQUESTS {
        return Err(SearchError::TooMuchWork {
            run,
            requests,
            max: MAX_WORK_REQUESTS,
            grid,
        });
    }
    Ok(())
}

/// Smallest bisection tolerance [requests/s].
pub const MIN_TOLERANCE_RPS: f64 = 0.005;
/// Relative bisection tolerance: stop when the bracket is narrower than this share of the rate.
pub const RELATIVE_TOLERANCE: f64 = 0.02;
/// Lowest rate tried, as a share of the analytic guess; failing there means goodput 0.
pub const MIN_RATE_FRACTION: f64 = 0.01;
/// Highest rate tried, as a multiple of the analytic guess.
pub const MAX_RATE_FACTOR: f64 = 64.0;
/// The first scan's rates, as shares of the analytic guess.
const SCAN_FIRST: [f64; 2] = [0.6, 0.9];
/// The scan's low rate, as a share of the guess; run only when needed (module docs).
const SCAN_LOW: f64 = 0.25;

/// The engine settings a job runs with (the knob sweep varies them per cell).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Knobs {
    /// Most sequences running at once.
    pub max_num_seqs: u32,
    /// Token budget per step [tokens].
    pub max_num_batched_tokens: u32,
    /// Chunked prefill on or off.
    pub chunked_prefill: bool,
}

impl Knobs {
    /// The plan's own engine settings.
    pub fn of(plan: &Plan) -> Knobs {
        Knobs {
            max_num_seqs: plan.engine.max_num_seqs,
            max_num_batched_tokens: plan.engine.max_num_batched_tokens,
            chunked_prefill: plan.engine.chunked_prefill,
        }
    }

    /// A copy of `plan` with these engine settings.
    pub fn apply(&self, plan: &Plan) -> Plan {
        let mut p = plan.clone();
        p.engine.max_num_seqs = self.max_num_seqs;
        p.engine.max_num_batched_tokens = self.max_num_batched_tokens;
        p.engine.chunked_prefill = self.chunked_prefill;
        p
    }
}

/// One simulation to run: a message to a worker.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Job {
    /// Unique id within its search or sweep; results are matched by it.
    pub id: u32,
    /// Grid cell (0 for a plain goodput search).
    pub cell: u32,
    /// Arrival rate [requests/s].
    pub rate_rps: f64,
    /// Replication index `i`.
    pub replication: u32,
    /// Seed: `replication_seed(plan.run.seed, i)`.
    pub seed: u64,
    /// Engine settings to run with (override the plan's).
    pub knobs: Knobs,
    /// Run the full simulation and return latency percentiles, not just attainment.
    pub detail: bool,
}

/// Latency percentiles of one full simulation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LatencyDetail {
    /// Median TTFT [s].
    pub ttft_p50_s: f64,
    /// 99th-percentile TTFT [s].
    pub ttft_p99_s: f64,
    /// Median TPOT [s].
    pub tpot_p50_s: f64,
    /// 99th-percentile TPOT [s].
    pub tpot_p99_s: f64,
    /// 99th-percentile inter-token gap [s].
    pub itl_p99_s: f64,
    /// Output tokens per second of the replica [tokens/s].
    pub output_tokens_per_s: f64,
    /// Mean waiting-queue length [requests].
    pub mean_queue_len: f64,
    /// Sequences preempted.
    pub preemptions: u32,
    /// Share of the prompt tokens the prefix cache held when requests were admitted
    /// (0 without shared prefixes) [0..1].
    #[serde(default)]
    pub prefix_hit_rate: f64,
    /// Tokens the prefix cache evicted to make room [tokens].
    #[serde(default)]
    pub prefix_evicted_tokens: u64,
    /// Each traffic class's attainment and percentiles (none for a plan of one class).
    #[serde(default, skip_serializing_if = "PerClass::is_empty")]
    pub classes: PerClass<ClassDetail>,
}

/// One traffic class's part of a full simulation ([`LatencyDetail::classes`]). A class
/// with no finished request has no percentiles: NaN here, `null` in JSON (so a worker's
/// reply reads back whole).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ClassDetail {
    /// Share of the class's measured requests meeting its own objectives [0..1].
    pub attainment: f64,
    /// Median TTFT [s].
    #[serde(with = "nan_as_null")]
    pub ttft_p50_s: f64,
    /// 99th-percentile TTFT [s].
    #[serde(with = "nan_as_null")]
    pub ttft_p99_s: f64,
    /// Median TPOT [s].
    #[serde(with = "nan_as_null")]
    pub tpot_p50_s: f64,
    /// 99th-percentile TPOT [s].
    #[serde(with = "nan_as_null")]
    pub tpot_p99_s: f64,
    /// Median end-to-end latency [s].
    #[serde(with = "nan_as_null")]
    pub e2e_p50_s: f64,
    /// 99th-percentile end-to-end latency [s].
    #[serde(with = "nan_as_null")]
    pub e2e_p99_s: f64,
    /// The class's measured requests.
    pub measured_requests: u32,
    /// Prompt and output tokens of those requests: its share of the GPU time [tokens].
    pub tokens: u64,
}

/// A number that may be NaN (no value), written as `null` and read back as NaN.
mod nan_as_null {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
        if x.is_finite() {
            s.serialize_f64(*x)
        } else {
            s.serialize_none()
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
    }
}

/// What a worker returns for one [`Job`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct JobResult {
    /// The job's id.
    pub id: u32,
    /// Attainment of the run, joint or marginal per the plan's SLO mode [0..1].
    pub attainment: f64,
    /// Latency percentiles, when the job asked for them.
    pub detail: Option<LatencyDetail>,
    /// Most sequences that ran at once ([`PEAK_UNKNOWN`] when not measured). Below the
    /// job's `max_num_seqs`, the cap never held back an admission, and the same job under
    /// any larger cap gives the same result (the knob sweep reuses it).
    #[serde(default = "peak_unknown")]
    pub peak_running: u32,
    /// Each traffic class's attainment under its own objectives (none for a plan of one
    /// class) [0..1].
    #[serde(default, skip_serializing_if = "PerClass::is_empty")]
    pub classes: PerClass<f64>,
}

/// [`JobResult::peak_running`] of a run that did not measure it.
pub const PEAK_UNKNOWN: u32 = u32::MAX;

/// Whether `plan`'s objectives, its own or its classes', bound goodput: some class has a
/// latency objective ([`SearchError::NoObjective`] otherwise), and every class judges the
/// time a request waits ([`SearchError::WaitingUnbounded`] otherwise).
pub fn check_objectives(plan: &Plan) -> Result<(), SearchError> {
    let slos: Vec<SloSpec> = plan.class_plans().into_iter().map(|p| p.slo).collect();
    if !slos.iter().any(has_objective) {
        return Err(SearchError::NoObjective);
    }
    if !slos.iter().all(bounds_waiting) {
        return Err(SearchError::WaitingUnbounded);
    }
    Ok(())
}

fn peak_unknown() -> u32 {
    PEAK_UNKNOWN
}

/// Runs one job: what a worker calls. The plan must be the one the search was built from.
pub fn run_job(plan: &Plan, job: &Job) -> Result<JobResult, SimError> {
    run_job_with(&plan_config(plan, job)?, job)
}

/// `plan` resolved at `job`'s rate with its knobs: the base [`run_job`] hands to
/// [`run_job_with`].
fn plan_config(plan: &Plan, job: &Job) -> Result<SimConfig, SimError> {
    let mut cfg = SimConfig::from_plan(plan, job.rate_rps)?;
    cfg.max_num_seqs = job.knobs.max_num_seqs;
    cfg.max_num_batched_tokens = job.knobs.max_num_batched_tokens;
    cfg.chunked_prefill = job.knobs.chunked_prefill;
    Ok(cfg)
}

/// The configuration [`run_job`] simulates `job` of `plan` on, for a caller that runs
/// the same simulation itself (the page's cache chart of the planned load).
pub fn job_config(plan: &Plan, job: &Job) -> Result<SimConfig, SimError> {
    job_config_with(&plan_config(plan, job)?, job)
}

/// The configuration [`run_job_with`] simulates `job` on: `base` at the job's rate and
/// knobs, with open-loop arrivals.
///
/// Every search and sweep job runs on it, so this is where they turn to open-loop
/// production traffic: a closed loop runs as Poisson arrivals at the job's rate
/// ([`crate::plan::Arrival::open_loop`]) and a client-side `max_concurrency` is dropped.
fn job_config_with(base: &SimConfig, job: &Job) -> Result<SimConfig, SimError> {
    let mut cfg = base.with_rate(job.rate_rps)?;
    cfg.traffic.arrival = cfg.traffic.arrival.open_loop();
    cfg.traffic.max_concurrency = None;
    cfg.max_num_seqs = job.knobs.max_num_seqs;
    cfg.max_num_batched_tokens = job.knobs.max_num_batched_tokens;
    cfg.chunked_prefill = job.knobs.chunked_prefill;
    Ok(cfg)
}

/// Runs one job on a resolved configuration (the job's rate and knobs override `base`'s,
/// as [`job_config_with`] says). Workers that run many jobs of one plan resolve it once
/// and call this.
pub fn run_job_with(base: &SimConfig, job: &Job) -> Result<JobResult, SimError> {
    let cfg = job_config_with(base, job)?;
    if job.detail {
        let r = sim::simulate(&cfg, job.seed)?;
        let classes = PerClass::of(r.classes.iter().map(|c| ClassDetail {
            attainment: c.attainment,
            ttft_p50_s: c.ttft_s.p50,
            ttft_p99_s: c.ttft_s.p99,
            tpot_p50_s: c.tpot_s.p50,
            tpot_p99_s: c.tpot_s.p99,
            e2e_p50_s: c.e2e_s.p50,
            e2e_p99_s: c.e2e_s.p99,
            measured_requests: c.measured_requests,
            tokens: c.tokens,
        }));
        Ok(JobResult {
            id: job.id,
            attainment: r.attainment,
            classes: PerClass::of(classes.as_slice().iter().map(|c| c.attainment)),
            detail: Some(LatencyDetail {
                ttft_p50_s: r.ttft_s.p50,
                ttft_p99_s: r.ttft_s.p99,
                tpot_p50_s: r.tpot_s.p50,
                tpot_p99_s: r.tpot_s.p99,
                itl_p99_s: r.itl_s.p99,
                output_tokens_per_s: r.output_tokens_per_s,
                mean_queue_len: r.mean_queue_len,
                preemptions: r.preemptions,
                prefix_hit_rate: r.prefix_hit_rate,
                prefix_evicted_tokens: r.prefix_evicted_tokens,
                classes,
            }),
            peak_running: PEAK_UNKNOWN,
        })
    } else {
        let (attainment, peak_running, classes) = sim::attainment_peak_classes(&cfg, job.seed)?;
        Ok(JobResult {
            id: job.id,
            attainment,
            detail: None,
            peak_running,
            classes: PerClass::of(classes),
        })
    }
}

/// Why no rate can meet the plan's SLO when one request alone, with the mean prompt,
/// already misses an objective: its first token (the frontend and the prompt's prefill
/// chunks) comes later than the TTFT objective, or each of its output tokens (a decode
/// step at the prompt's context; every request's TPOT is at least that) takes longer
/// than the TPOT objective. None when neither holds, with traffic classes (each has its
/// own objectives) or with speculation (a step then yields several tokens).
fn lone_request_misses(plan: &Plan, step: &StepModel, lengths: &MeanLengths) -> Option<String> {
    use crate::format::{count, sig};
    if !plan.classes.is_empty() || plan.engine.spec_draft_tokens > 0 {
        return None;
    }
    let ms = |s: f64| sig((s * 1e4).round() / 10.0);
    let gpus = count(u64::from(plan.hardware.gpus_per_replica()), "GPU", "GPUs");
    // An objective far below any step is most likely typed in the wrong unit.
    let unit = |objective: f64| {
        if objective < 0.01 {
            "; an objective under 10 ms is far below any step: check its unit"
        } else {
            ""
        }
    };
    if let Some(ttft) = plan.slo.ttft_s {
        let prompt = lengths.prefill_tokens.max(1.0);
        let budget = if plan.engine.chunked_prefill {
            f64::from(plan.engine.max_num_batched_tokens.max(1))
        } else {
            prompt
        };
        let chunks = (prompt / budget).ceil();
        let first = step.frontend_s + chunks * step.chunk_time_s(prompt / chunks);
        if first > ttft {
            return Some(format!(
                "one request alone waits {} ms for its first token here (the prefill of a mean {}-token prompt on {gpus}), above the {} ms TTFT objective, so no rate meets the SLO; use more GPUs per replica (tensor parallelism), a GPU with more compute, shorter prompts, or a looser TTFT objective{}",
                ms(first),
                prompt.round(),
                ms(ttft),
                unit(ttft)
            ));
        }
    }
    let tpot = plan.slo.tpot_s?;
    let lone = step.step_time_s(1.0, lengths.prompt_tokens);
    (lone > tpot).then(|| {
        format!(
            "one request alone takes {} ms per output token here, above the {} ms TPOT objective: each decode step reads {:.1} GB of weights over {gpus}, so no rate meets the SLO; use more GPUs per replica (tensor parallelism), a GPU with more memory bandwidth, FP8 weights, or a looser TPOT objective{}",
            ms(lone),
            ms(tpot),
            step.weights_read(1.0) / 1e9,
            unit(tpot)
        )
    })
}

/// Why a search or sweep could not run. Each variant says what to change.
#[derive(Debug, Clone, PartialEq)]
pub enum SearchError {
    /// The plan cannot be simulated; the message names the field.
    Sim(SimError),
    /// The SLO has no latency objective (e.g. the batch class), so every rate passes and
    /// goodput is unbounded. Set a TTFT, TPOT or E2E objective.
    NoObjective,
    /// The SLO (or a traffic class's) judges no TTFT and no end-to-end time, only TPOT:
    /// the time a request waits in the queue is never judged, so every rate passes and
    /// goodput is unbounded ([`crate::slo::bounds_waiting`]).
    WaitingUnbounded,
    /// The attainment target is not in (0, 1]; set `slo.attainment_target`, e.g. 0.9.
    BadTarget {
        /// The target given.
        target: f64,
    },
    /// Too many replications; lower `run.replications` to at most `max`.
    TooManyReplications {
        /// Replications asked for.
        replications: u32,
        /// The most allowed.
        max: u32,
    },
    /// The search, sweep or sizing would simulate too many requests; lower
    /// `run.num_requests` or `run.replications` (or, for the sweep, its grid).
    TooMuchWork {
        /// What would run ("search", "knob sweep", …).
        run: &'static str,
        /// Requests the worst case would simulate.
        requests: u64,
        /// The most allowed.
        max: u64,
        /// Whether a smaller sweep grid helps too.
        grid: bool,
    },
    /// The sweep grid is empty or too large; give 1..=`max` values on each axis.
    BadGrid {
        /// The axis (`run.sweep_max_num_seqs` or `run.sweep_batched_tokens`).
        field: &'static str,
        /// Values given.
        len: usize,
        /// The most allowed.
        max: usize,
    },
    /// The caller cancelled through the progress callback.
    Cancelled,
}

impl std::fmt::Display for SearchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SearchError::Sim(e) => write!(f, "{e}"),
            SearchError::NoObjective => write!(
                f,
                "slo: no TTFT, TPOT or E2E objective (the Batch preset sets none), so every rate meets it and goodput is unbounded; set an end-to-end deadline (E2E) for batch work, or TTFT and TPOT objectives"
            ),
            SearchError::WaitingUnbounded => write!(
                f,
                "slo: the SLO (or a traffic class's) has a TPOT objective but no TTFT or end-to-end one, and TPOT alone never judges the time a request waits in the queue: every rate meets it, even far past what the GPU can serve, so goodput is unbounded; set a TTFT objective, or an end-to-end deadline (E2E) for work nobody watches stream"
            ),
            SearchError::BadTarget { target } => write!(
                f,
                "slo.attainment_target: must be in (0, 1], got {target}"
            ),
            SearchError::TooManyReplications { replications, max } => write!(
                f,
                "run.replications: {replications} is too many for a search; allowed 1..={max}"
            ),
            SearchError::TooMuchWork {
                run,
                requests,
                max,
                grid,
            } => {
                use crate::format::thousands;
                use crate::plan::fields::field;
                let label = |path: &str| field(path).label;
                write!(
                    f,
                    "the {run} could simulate {} requests, more than the {} allowed; lower \u{201c}{}\u{201d} or \u{201c}{}\u{201d}",
                    thousands(i64::try_from(*requests).unwrap_or(i64::MAX)),
                    thousands(i64::try_from(*max).unwrap_or(i64::MAX)),
                    label("run.num_requests"),
                    label("run.replications"),
                )?;
                if *grid {
                    write!(
                        f,
                        ", or give fewer \u{201c}{}\u{201d} or \u{201c}{}\u{201d}",
                        label("run.sweep_max_num_seqs"),
                        label("run.sweep_batched_tokens")
                    )?;
                }
                Ok(())
            }
            SearchError::BadGrid { field, len, max } => write!(
                f,
                "{field}: has {len} values; give 1..={max}"
            ),
            SearchError::Cancelled => write!(f, "cancelled"),
        }
    }
}

impl std::error::Error for SearchError {}

impl From<SimError> for SearchError {
    fn from(e: SimError) -> Self {
        SearchError::Sim(e)
    }
}

/// How a search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchStatus {
    /// The bracket between passing and failing rates is within tolerance.
    Converged,
    /// Even the lowest sensible rate misses the target: goodput is 0.
    ZeroGoodput,
    /// Every rate up to the highest tried passes; goodput is at least the reported value.
    NotBracketed,
    /// The rate budget ran out before the bracket was narrow enough.
    BudgetExhausted,
}

/// One evaluated rate of the attainment curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    /// Arrival rate [requests/s].
    pub rate_rps: f64,
    /// Mean attainment over the replications [0..1].
    pub attainment: f64,
    /// 95% confidence interval of the mean [lo, hi], clamped to [0, 1].
    pub ci95: [f64; 2],
    /// Lowest replication's attainment [0..1].
    pub attainment_min: f64,
    /// Highest replication's attainment [0..1].
    pub attainment_max: f64,
    /// Latency percentiles from replication 0's full run, when asked for.
    pub detail: Option<LatencyDetail>,
    /// Each traffic class's mean attainment over the replications, under its own
    /// objectives (none for a plan of one class) [0..1].
    #[serde(default, skip_serializing_if = "PerClass::is_empty")]
    pub classes: PerClass<f64>,
}

/// The answer of a goodput search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GoodputResult {
    /// Goodput: the highest evaluated rate passing below the first failing one [requests/s].
    pub goodput_rps: f64,
    /// Where the lower and upper edges of the 95% band cross the target [requests/s].
    pub goodput_range_rps: [f64; 2],
    /// Attainment target [0..1].
    pub target: f64,
    /// Replications per rate.
    pub replications: u32,
    /// Engine settings searched.
    pub knobs: Knobs,
    /// How the search ended.
    pub status: SearchStatus,
    /// The ending in plain words.
    pub reason: String,
    /// The roofline capacity guess the scan started from [requests/s].
    pub analytic_guess_rps: f64,
    /// Every evaluated rate, ascending.
    pub curve: Vec<CurvePoint>,
    /// Simulations run.
    pub jobs_run: u32,
    /// The traffic class that sets the goodput (an index into the plan's classes): of
    /// the classes, the one furthest below its own target at the first rate that
    /// misses (at the highest rate tried when none does). None for a plan of one class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binding_class: Option<u32>,
}

/// Progress of a search or sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    /// Simulations finished.
    pub done: u32,
    /// Simulations the whole run is expected to take (an estimate; never below `done`).
    pub total: u32,
}

#[derive(Debug, Clone)]
struct Point {
    rate_rps: f64,
    attainment: Vec<Option<f64>>,
    /// Each replication's per-class attainments.
    classes: Vec<Option<PerClass<f64>>>,
    detail: Option<LatencyDetail>,
}

impl Point {
    fn mean(&self) -> f64 {
        let xs: Vec<f64> = self.attainment.iter().flatten().copied().collect();
        xs.iter().sum::<f64>() / xs.len().max(1) as f64
    }

    /// Each class's mean attainment over the replications that have reported.
    fn class_means(&self) -> PerClass<f64> {
        let done: Vec<&PerClass<f64>> = self.classes.iter().flatten().collect();
        let n = done.iter().map(|c| c.len()).max().unwrap_or(0);
        PerClass::of((0..n).map(|k| {
            let xs: Vec<f64> = done
                .iter()
                .filter_map(|c| c.as_slice().get(k))
                .copied()
                .collect();
            xs.iter().sum::<f64>() / xs.len().max(1) as f64
        }))
    }
}

/// The goodput search state machine; see the module docs.
#[derive(Debug, Clone)]
pub struct GoodputSearch {
    cell: u32,
    knobs: Knobs,
    target: f64,
    replications: u32,
    base_seed: u64,
    detail: bool,
    measured_requests: u32,
    guess_rps: f64,
    points: Vec<Point>,
    /// Outstanding job id → (point index, replication).
    outstanding: BTreeMap<u32, (usize, u32)>,
    next_id: u32,
    done_jobs: u32,
    finished: Option<(SearchStatus, String)>,
    /// How far each traffic class's target lies above the plan's (none for a plan of
    /// one class).
    class_offsets: Vec<f64>,
    /// Why no rate can pass, when one request alone already misses the TTFT or TPOT
    /// objective ([`lone_request_misses`]).
    lone_reason: Option<String>,
}

impl GoodputSearch {
    /// A search of the plan's own engine settings, `run.replications` per rate, with
    /// latency detail per rate.
    pub fn new(plan: &Plan) -> Result<GoodputSearch, SearchError> {
        GoodputSearch::for_cell(plan, Knobs::of(plan), 0, plan.run.replications, true)
    }

    /// A search of `knobs` (grid cell `cell`) with `replications` per rate.
    pub fn for_cell(
        plan: &Plan,
        knobs: Knobs,
        cell: u32,
        replications: u32,
        detail: bool,
    ) -> Result<GoodputSearch, SearchError> {
        check_objectives(plan)?;
        let target = plan.slo.attainment_target;
        if !(target.is_finite() && target > 0.0 && target <= 1.0) {
            return Err(SearchError::BadTarget { target });
        }
        if replications == 0 || replications > MAX_SEARCH_REPLICATIONS {
            return Err(SearchError::TooManyReplications {
                replications,
                max: MAX_SEARCH_REPLICATIONS,
            });
        }
        check_work(
            "goodput search",
            false,
            MAX_RATES as u64 * u64::from(replications),
            plan.requests_per_run(),
        )?;
        let p = knobs.apply(plan);
        let (roof, lengths) = (StepModel::from_plan(&p), MeanLengths::of(&p));
        let lone_reason = lone_request_misses(&p, &roof, &lengths);
        // Keep every rate the search may try (up to MAX_RATE_FACTOR × guess) simulable.
        let guess = capacity_guess_of(&p, &roof, &lengths).min(sim::MAX_RATE_RPS / MAX_RATE_FACTOR);
        SimConfig::from_plan(&p, guess)?;
        Ok(GoodputSearch {
            cell,
            knobs,
            target,
            replications,
            base_seed: plan.run.seed,
            detail,
            measured_requests: plan
                .run
                .num_requests
                .saturating_sub(plan.run.warmup_requests),
            guess_rps: guess,
            points: Vec::new(),
            outstanding: BTreeMap::new(),
            next_id: 0,
            done_jobs: 0,
            finished: None,
            class_offsets: plan.class_target_offsets(),
            lone_reason,
        })
    }

    /// The roofline capacity guess the scan starts from [requests/s].
    pub fn analytic_guess_rps(&self) -> f64 {
        self.guess_rps
    }

    /// The next batch of jobs; empty while a batch is outstanding or when done.
    pub fn next_batch(&mut self) -> Vec<Job> {
        let mut id = self.next_id;
        let jobs = self.issue(&mut id);
        self.next_id = id;
        jobs
    }

    /// Whether a batch is out and not yet fully fed back.
    pub fn is_waiting(&self) -> bool {
        !self.outstanding.is_empty()
    }

    /// Issues the next batch with ids taken from `next_id`.
    pub(crate) fn issue(&mut self, next_id: &mut u32) -> Vec<Job> {
        if self.finished.is_some() || !self.outstanding.is_empty() {
            return Vec::new();
        }
        let rates = match self.decide() {
            Ok(rates) => rates,
            Err(end) => {
                self.finished = Some(end);
                return Vec::new();
            }
        };
        let mut jobs = Vec::with_capacity(rates.len() * self.replications as usize);
        for rate in rates {
            let idx = self.points.len();
            self.points.push(Point {
                rate_rps: rate,
                attainment: vec![None; self.replications as usize],
                classes: vec![None; self.replications as usize],
                detail: None,
            });
            for i in 0..self.replications {
                let id = *next_id;
                *next_id = next_id.wrapping_add(1);
                self.outstanding.insert(id, (idx, i));
                jobs.push(Job {
                    id,
                    cell: self.cell,
                    rate_rps: rate,
                    replication: i,
                    seed: sim::replication_seed(self.base_seed, i),
                    knobs: self.knobs,
                    detail: self.detail && i == 0,
                });
            }
        }
        jobs
    }

    /// Whether this search issued the job with id `id` and still waits for it.
    pub fn owns(&self, id: u32) -> bool {
        self.outstanding.contains_key(&id)
    }

    /// Takes results back, matched by id; unknown or repeated ids are ignored.
    pub fn feed(&mut self, results: &[JobResult]) {
        for r in results {
            if let Some((idx, rep)) = self.outstanding.remove(&r.id) {
                let a = if r.attainment.is_finite() {
                    r.attainment.clamp(0.0, 1.0)
                } else {
                    0.0
                };
                self.points[idx].attainment[rep as usize] = Some(a);
                if let Some(slot) = self.points[idx].classes.get_mut(rep as usize) {
                    *slot = Some(r.classes);
                }
                if r.detail.is_some() {
                    self.points[idx].detail = r.detail;
                }
                self.done_jobs += 1;
            }
        }
        if self.outstanding.is_empty() && self.finished.is_none() {
            // Decide now, so that is_done() is true as soon as the last batch is in.
            if let Err(end) = self.decide() {
                self.finished = Some(end);
            }
        }
    }

    /// Whether the search has finished.
    pub fn is_done(&self) -> bool {
        self.finished.is_some()
    }

    /// Simulations done and the expected total.
    pub fn progress(&self) -> Progress {
        let r = self.replications;
        let evaluated = self.points.len() as u32;
        let remaining_rates = if self.finished.is_some() {
            0
        } else {
            match self.bracket() {
                (Some(lo), Some(hi)) => {
                    let steps =
                        libm::ceil(libm::log((hi - lo) / self.tolerance(lo)) / libm::log(3.0));
                    2 * steps.clamp(0.0, MAX_RATES as f64) as u32
                }
                _ => 8,
            }
        };
        let total = ((evaluated + remaining_rates).min(MAX_RATES as u32)) * r;
        Progress {
            done: self.done_jobs,
            total: total.max(self.done_jobs + self.outstanding.len() as u32),
        }
    }

    fn tolerance(&self, lo: f64) -> f64 {
        (RELATIVE_TOLERANCE * lo).max(MIN_TOLERANCE_RPS)
    }

    /// Completed points sorted by rate: (rate, mean).
    fn sorted(&self) -> Vec<(f64, f64)> {
        let mut v: Vec<(f64, f64)> = self.points.iter().map(|p| (p.rate_rps, p.mean())).collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v
    }

    /// (highest passing rate below the first failing rate, first failing rate).
    fn bracket(&self) -> (Option<f64>, Option<f64>) {
        let mut lo = None;
        for (rate, mean) in self.sorted() {
            if mean >= self.target {
                lo = Some(rate);
            } else {
                return (lo, Some(rate));
            }
        }
        (lo, None)
    }

    /// The rates of the next batch, or the end of the search.
    fn decide(&self) -> Result<Vec<f64>, (SearchStatus, String)> {
        let g = self.guess_rps;
        if self.points.is_empty() {
            return Ok(SCAN_FIRST.iter().map(|f| f * g).collect());
        }
        let Some(low) = self.low_rate_needed() else {
            return self.next_rates();
        };
        // With nothing passing, the low rate is the whole batch: the next step down
        // starts from it. Otherwise it joins the batch the bracket asks for.
        if self.bracket().0.is_none() {
            return Ok(vec![low]);
        }
        match self.next_rates() {
            Ok(mut rates) => {
                rates.insert(0, low);
                Ok(rates)
            }
            Err(_) => Ok(vec![low]),
        }
    }

    /// The scan's low rate, when it has not run and the lowest rate so far (the first
    /// scan's lowest) misses the target or passes with a band reaching below it.
    fn low_rate_needed(&self) -> Option<f64> {
        let first = SCAN_FIRST[0] * self.guess_rps;
        if self.points.iter().any(|p| p.rate_rps < first) {
            return None;
        }
        let lowest = self.points.iter().find(|p| p.rate_rps == first)?;
        let misses = lowest.mean() < self.target;
        (misses || self.curve_point(lowest).ci95[0] < self.target)
            .then_some(SCAN_LOW * self.guess_rps)
    }

    /// The rates the bracket asks for next, or the end of the search.
    fn next_rates(&self) -> Result<Vec<f64>, (SearchStatus, String)> {
        let g = self.guess_rps;
        let min_rate = MIN_RATE_FRACTION * g;
        let max_rate = MAX_RATE_FACTOR * g;
        let room = MAX_RATES.saturating_sub(self.points.len());
        let (lo, hi) = self.bracket();
        let rates: Vec<f64> = match (lo, hi) {
            (Some(lo), Some(hi)) => {
                let tol = self.tolerance(lo);
                if hi - lo <= tol {
                    return Err((
                        SearchStatus::Converged,
                        format!(
                            "attainment meets the {} target at {} req/s and misses it at {} req/s",
                            percent(self.target),
                            round_rate(lo),
                            round_rate(hi)
                        ),
                    ));
                }
                let w = hi - lo;
                vec![lo + w / 3.0, lo + 2.0 * w / 3.0]
            }
            (None, Some(first_fail)) => {
                if first_fail <= min_rate * (1.0 + 1e-9) {
                    let mean = self.sorted()[0].1;
                    if let Some(why) = &self.lone_reason {
                        return Err((SearchStatus::ZeroGoodput, why.clone()));
                    }
                    return Err((
                        SearchStatus::ZeroGoodput,
                        format!(
                            "even at {} req/s attainment is {}, below the {} target: single requests miss the SLO (check the TTFT objective against the prefill time of long prompts, and the TPOT objective against the decode step)",
                            round_rate(first_fail),
                            percent_tenths(mean),
                            percent(self.target)
                        ),
                    ));
                }
                vec![
                    (first_fail / 8.0).max(min_rate),
                    (first_fail / 2.5).max(min_rate),
                ]
            }
            (Some(lo), None) => {
                if lo >= max_rate * (1.0 - 1e-9) {
                    return Err((
                        SearchStatus::NotBracketed,
                        format!(
                            "every rate up to {} req/s meets the target; goodput is at least that",
                            round_rate(lo)
                        ),
                    ));
                }
                vec![(lo * 1.5).min(max_rate), (lo * 2.25).min(max_rate)]
            }
            (None, None) => unreachable_empty(),
        };
        let mut rates: Vec<f64> = rates
            .into_iter()
            .filter(|r| self.points.iter().all(|p| p.rate_rps != *r))
            .collect();
        rates.dedup();
        if rates.is_empty() || room < rates.len() {
            return Err((
                SearchStatus::BudgetExhausted,
                format!(
                    "stopped after {} rates; goodput lies between the last passing and first failing rate",
                    self.points.len()
                ),
            ));
        }
        Ok(rates)
    }

    /// The result, once done.
    pub fn result(&self) -> Option<GoodputResult> {
        let (status, reason) = self.finished.clone()?;
        let mut curve: Vec<CurvePoint> = self.points.iter().map(|p| self.curve_point(p)).collect();
        curve.sort_by(|a, b| a.rate_rps.total_cmp(&b.rate_rps));
        let goodput = match status {
            SearchStatus::ZeroGoodput => 0.0,
            _ => self.bracket().0.unwrap_or(0.0),
        };
        let lo = crossing(&curve, self.target, |c| c.ci95[0]).min(goodput);
        let hi = crossing(&curve, self.target, |c| c.ci95[1]).max(goodput);
        Some(GoodputResult {
            goodput_rps: goodput,
            goodput_range_rps: [lo, hi],
            target: self.target,
            replications: self.replications,
            knobs: self.knobs,
            status,
            reason,
            analytic_guess_rps: self.guess_rps,
            curve,
            jobs_run: self.done_jobs,
            binding_class: self.binding_class(),
        })
    }

    fn curve_point(&self, p: &Point) -> CurvePoint {
        let xs: Vec<f64> = p.attainment.iter().flatten().copied().collect();
        let (mean, ci) = if xs.len() >= 2 {
            stats::mean_ci95(&xs, 0.0, 1.0)
        } else {
            let m = xs.first().copied().unwrap_or(0.0);
            let half =
                1.96 * crate::analytic::attainment_std_error(m, self.measured_requests as u64);
            let half = if half.is_finite() { half } else { 1.0 };
            (m, [(m - half).max(0.0), (m + half).min(1.0)])
        };
        CurvePoint {
            rate_rps: p.rate_rps,
            attainment: mean,
            ci95: ci,
            attainment_min: xs.iter().copied().fold(f64::INFINITY, f64::min).min(mean),
            attainment_max: xs
                .iter()
                .copied()
                .fold(f64::NEG_INFINITY, f64::max)
                .max(mean),
            detail: p.detail,
            classes: p.class_means(),
        }
    }

    /// [`GoodputResult::binding_class`] of the points so far.
    fn binding_class(&self) -> Option<u32> {
        if self.class_offsets.is_empty() {
            return None;
        }
        let sorted = {
            let mut v: Vec<&Point> = self.points.iter().collect();
            v.sort_by(|a, b| a.rate_rps.total_cmp(&b.rate_rps));
            v
        };
        let at = sorted
            .iter()
            .find(|p| p.mean() < self.target)
            .or(sorted.last())?;
        let means = at.class_means();
        let margins = means
            .as_slice()
            .iter()
            .zip(&self.class_offsets)
            .map(|(a, off)| a - off);
        let worst = margins.enumerate().min_by(|a, b| a.1.total_cmp(&b.1))?;
        Some(worst.0 as u32)
    }
}

fn unreachable_empty() -> Vec<f64> {
    // `decide` handles an empty curve before computing a bracket; a non-empty curve
    // always has a passing or a failing rate.
    Vec::new()
}

/// Rounds a rate for messages (4 significant digits).
fn round_rate(r: f64) -> String {
    format!("{}", (r * 1e4).round() / 1e4)
}

/// Rate where `edge` first drops below `target` along the ascending curve, by linear
/// interpolation; 0 when the first point already misses; the last rate when none does.
fn crossing(curve: &[CurvePoint], target: f64, edge: impl Fn(&CurvePoint) -> f64) -> f64 {
    let Some(first) = curve.first() else {
        return 0.0;
    };
    if edge(first) < target {
        return 0.0;
    }
    for w in curve.windows(2) {
        let (a, b) = (edge(&w[0]), edge(&w[1]));
        if b < target {
            let t = if a > b { (a - target) / (a - b) } else { 0.0 };
            return w[0].rate_rps + (w[1].rate_rps - w[0].rate_rps) * t.clamp(0.0, 1.0);
        }
    }
    curve.last().map_or(0.0, |c| c.rate_rps)
}

/// Runs jobs in-process, on `threads` OS threads (1 = the calling thread). Results come
/// back in job order.
pub fn run_jobs(plan: &Plan, jobs: &[Job], threads: usize) -> Result<Vec<JobResult>, SimError> {
    if jobs.is_empty() {
        return Ok(Vec::new());
    }
    let base = SimConfig::from_plan(plan, jobs[0].rate_rps)?;
    sim::threads::map_in_order(jobs, threads, |j| run_job_with(&base, j))
}

pub use crate::sim::threads::default_threads;

/// Finds the goodput of the plan's engine settings in-process.
///
/// `progress` is called after every batch; returning `false` cancels with
/// [`SearchError::Cancelled`].
pub fn search_goodput(
    plan: &Plan,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<GoodputResult, SearchError> {
    search_goodput_threads(plan, default_threads(), progress)
}

/// [`search_goodput`] on a given number of threads; the result does not depend on it.
pub fn search_goodput_threads(
    plan: &Plan,
    threads: usize,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<GoodputResult, SearchError> {
    drive(plan, GoodputSearch::new(plan)?, threads, progress)
}

/// The job-handing shape shared by [`GoodputSearch`] and [`KnobSweep`], so one
/// batch loop ([`answer_batches`]) drives both.
pub trait Driver {
    /// What a finished run yields.
    type Output;
    /// The next jobs to run (none while a batch is out, or once done).
    fn next_batch(&mut self) -> Vec<Job>;
    /// Takes results back, matched by job id.
    fn feed(&mut self, results: &[JobResult]);
    /// Whether the run has its answer.
    fn is_done(&self) -> bool;
    /// Simulations done and expected.
    fn progress(&self) -> Progress;
    /// The answer, once done.
    fn result(&self) -> Option<Self::Output>;
}

impl Driver for GoodputSearch {
    type Output = GoodputResult;
    fn next_batch(&mut self) -> Vec<Job> {
        GoodputSearch::next_batch(self)
    }
    fn feed(&mut self, results: &[JobResult]) {
        GoodputSearch::feed(self, results)
    }
    fn is_done(&self) -> bool {
        GoodputSearch::is_done(self)
    }
    fn progress(&self) -> Progress {
        GoodputSearch::progress(self)
    }
    fn result(&self) -> Option<GoodputResult> {
        GoodputSearch::result(self)
    }
}

/// Runs `d` to its end in one thread of control: every batch goes to `answer`, whose
/// results are fed back, and `after` sees the driver after each feed. An error from
/// either stops the loop and is returned. A driver that hands out no jobs before it is
/// done ends the loop rather than spinning; its `result()` is then `None`.
pub fn answer_batches<D: Driver, E>(
    d: &mut D,
    mut answer: impl FnMut(Vec<Job>) -> Result<Vec<JobResult>, E>,
    mut after: impl FnMut(&D) -> Result<(), E>,
) -> Result<Option<D::Output>, E> {
    while !d.is_done() {
        let jobs = d.next_batch();
        if jobs.is_empty() {
            break;
        }
        let results = answer(jobs)?;
        d.feed(&results);
        after(d)?;
    }
    Ok(d.result())
}

/// Runs a driver's batches in-process on `threads` threads until it is done;
/// `progress` returning `false` cancels.
fn drive<D: Driver>(
    plan: &Plan,
    mut d: D,
    threads: usize,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<D::Output, SearchError> {
    answer_batches(
        &mut d,
        |jobs| Ok(run_jobs(plan, &jobs, threads)?),
        |d| {
            if progress(d.progress()) {
                Ok(())
            } else {
                Err(SearchError::Cancelled)
            }
        },
    )?
    .ok_or(SearchError::Cancelled)
}

#[cfg(test)]
mod tests;
