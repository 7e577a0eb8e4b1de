//! Continuous-batching simulator of one serving replica (a discrete-event model).
//!
//! ```text
//!  traffic ──▶ waiting queue ──admit (FCFS, max_num_seqs, KV policy)──▶ running
//!                   ▲                                                     │
//!                   └──────── preempted (paged KV, recompute) ◀───────────┤
//!  each step: 1 token per decoder + prefill chunks up to the token budget │
//!             t += roofline step time; finished sequences leave ◀─────────┘
//! ```
//!
//! The reference semantics (the latency-SLO tuning article's scheduler):
//! - time starts at 0; arrivals up to `t` join the waiting queue; an idle replica jumps
//!   to the next arrival;
//! - with a client gate of N slots (a closed loop of N clients, or an open loop with
//!   `max_concurrency` N, like `vllm bench serve --max-concurrency`), a client takes a
//!   slot and then starts the request's timer: the first N requests (generated order)
//!   arrive at their generated times, and the j-th request to end (finish, or be
//!   refused for KV memory), counted in time order from 0, releases request N + j at
//!   `max(generated time, end + think_s)` (think_s is 0 for an open-loop cap). That
//!   release time is the request's arrival for TTFT and E2E. A closed loop's generated
//!   times are all 0, so its N clients start at once and the rate passed to
//!   [`SimConfig::from_plan`] is ignored: throughput is an outcome
//!   ([`SimReport::completed_rps`]). A request released while the scheduler admits
//!   (after a refusal) joins the queue at once, as any arrival at `t` does;
//! - waiting requests are admitted first-come-first-served while fewer than
//!   `max_num_seqs` run (and, per [`KvPolicy`], KV memory allows);
//! - each step gives one token to every decoding sequence, then fills the rest of the
//!   budget (`max_num_batched_tokens` minus the decoders) with prefill chunks in
//!   admission order; with chunked prefill off a scheduled prompt runs whole;
//! - the step lasts [`StepModel::step_time_s`] of the decoders' count plus the chunk
//!   tokens and of the decoders' context before the step;
//! - a prompt that completes emits its first token at the end of the step; a sequence
//!   finishes at the end of the step in which it has produced its output length.
//!
//! Metrics per request: TTFT = first − arrival, TPOT = (finish − first)/max(out − 1, 1),
//! E2E = finish − arrival; ITL is every step duration each decoder lives through. The first
//! `warmup_requests` (generated order) are dropped; unfinished requests are misses.
//! Attainment is, per [`crate::plan::SloMode`], the share of measured requests meeting
//! every objective (joint) or the smallest, over the objectives set, of the share meeting
//! that objective (marginal); an unfinished request misses every objective.
//!
//! The engine keeps per-step work independent of the batch size: decoders are counters
//! (count, context sum) plus a min-heap of finish steps; prefilling sequences sit in a
//! FCFS deque; the waiting queue is an index range. Pure-decode stretches run in a tight
//! loop that touches no per-sequence state.
//!
//! The engine itself, and the configuration and report types, are in `goodput-engine`
//! (re-exported here); this module builds a configuration from a plan, checks it
//! ([`SimConfigOf`]) and runs it.

mod replicate;
pub mod threads;

pub use replicate::{
    replicate, replicate_threads, replication_seed, Replicated, MAX_REPLICATED_REQUESTS,
};

use crate::plan::{Arrival, KvPolicy, Plan, PlanError, MAX_CONCURRENCY, MAX_NUM_REQUESTS};
use crate::roofline::{StepModel, StepModelOf};
pub use crate::stats::Summary;
use crate::traffic::{PrefixModel, TrafficModel};
pub use goodput_engine::config::{
    mix_attainment, CacheSample, ClassReport, ClassRule, SimConfig, SimReport, SloTargets,
    CACHE_TIMELINE_POINTS,
};
use goodput_engine::run;
use goodput_engine::traffic::ClassDraw;

/// Most engine steps one simulation runs before it stops and reports `truncated`.
pub const MAX_STEPS: u64 = 20_000_000;
/// Highest arrival rate a simulation accepts [requests/s].
pub const MAX_RATE_RPS: f64 = 1e6;
/// Longest stretch of simulated time a run's arrivals may span \[s\] (about 32 years):
/// far beyond it the clock's resolution is coarser than an engine step, and latencies
/// would come out as noise.
pub const MAX_SPAN_S: f64 = 1e9;
/// Most piecewise-constant rate steps one simulation accepts.
pub const MAX_RATE_STEPS: usize = 10_000;

/// Why a simulation could not run.
#[derive(Debug, Clone, PartialEq)]
pub enum SimError {
    /// The plan is invalid; fix the named field.
    Plan(PlanError),
    /// The arrival rate is not a finite number in (0, [`MAX_RATE_RPS`]]; pass a positive rate.
    Rate {
        /// The rejected rate [requests/s].
        rate_rps: f64,
    },
    /// The arrival rate is so low that the run's requests would span more than
    /// [`MAX_SPAN_S`] of simulated time; raise the rate (or simulate fewer requests).
    RateTooLow {
        /// The rejected rate [requests/s].
        rate_rps: f64,
        /// Requests in the run.
        num_requests: u32,
    },
    /// The request would run too long; lower the named count below `max`.
    TooMuchWork {
        /// The field to lower.
        field: &'static str,
        /// The requested value.
        value: u64,
        /// The most allowed.
        max: u64,
    },
    /// A resolved configuration value is out of range (a hand-built [`SimConfig`]);
    /// build it with [`SimConfig::from_plan`] instead.
    Config {
        /// The offending field.
        field: &'static str,
        /// What it must be.
        message: &'static str,
    },
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SimError::Plan(e) => write!(f, "{e}"),
            SimError::Rate { rate_rps } => {
                write!(
                    f,
                    "request rate {} req/s: must be a finite number in (0, {}]",
                    crate::format::sig(*rate_rps),
                    crate::format::sig(MAX_RATE_RPS)
                )
            }
            SimError::RateTooLow {
                rate_rps,
                num_requests,
            } => {
                use crate::format::sig;
                write!(
                    f,
                    "request rate {} req/s is too low for {num_requests} requests: they would arrive over more than {MAX_SPAN_S:e} s (about 32 years) of simulated time; give at least {} req/s",
                    sig(*rate_rps),
                    sig(f64::from(*num_requests) / MAX_SPAN_S)
                )
            }
            SimError::TooMuchWork { field, value, max } => {
                write!(
                    f,
                    "{field} = {value} is too much work: allowed at most {max}"
                )
            }
            SimError::Config { field, message } => write!(f, "{field}: {message}"),
        }
    }
}

impl std::error::Error for SimError {}

impl From<PlanError> for SimError {
    fn from(e: PlanError) -> Self {
        SimError::Plan(e)
    }
}

/// Checks an arrival rate.
pub fn check_rate(rate_rps: f64) -> Result<(), SimError> {
    if rate_rps.is_finite() && rate_rps > 0.0 && rate_rps <= MAX_RATE_RPS {
        Ok(())
    } else {
        Err(SimError::Rate { rate_rps })
    }
}

/// Checks that `num_requests` arrivals at `rate_rps` fit in [`MAX_SPAN_S`].
fn check_span(rate_rps: f64, num_requests: u32) -> Result<(), SimError> {
    if f64::from(num_requests) / rate_rps > MAX_SPAN_S {
        return Err(SimError::RateTooLow {
            rate_rps,
            num_requests,
        });
    }
    Ok(())
}

/// A simulation's configuration from a plan, checked: `SimConfig::from_plan(&plan, rate)`
/// with this trait in scope.
pub trait SimConfigOf: Sized {
    /// Validates the plan and resolves it at arrival rate `rate_rps` [requests/s] (which
    /// must be valid, but is ignored by a closed-loop arrival: its clients set the pace).
    /// The plan's arrival and `max_concurrency` are used as they are.
    fn from_plan(plan: &Plan, rate_rps: f64) -> Result<Self, SimError>;
    /// The same configuration at another arrival rate.
    fn with_rate(&self, rate_rps: f64) -> Result<Self, SimError>;
    /// Cheap sanity checks that keep the engine from panicking or hanging on a
    /// hand-built configuration.
    fn check(&self) -> Result<(), SimError>;
}

impl SimConfigOf for SimConfig {
    fn from_plan(plan: &Plan, rate_rps: f64) -> Result<SimConfig, SimError> {
        plan.validate()?;
        check_rate(rate_rps)?;
        let t = &plan.traffic;
        let mut trace = t.trace.clone();
        trace.sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
        let cfg = SimConfig {
            step: StepModel::from_plan(plan),
            max_num_seqs: plan.engine.max_num_seqs,
            max_num_batched_tokens: plan.engine.max_num_batched_tokens,
            chunked_prefill: plan.engine.chunked_prefill,
            kv_policy: plan.engine.kv_policy,
            kv_capacity_tokens: plan.kv_capacity_tokens(),
            spec_draft_tokens: plan.engine.spec_draft_tokens,
            spec_acceptance: plan.engine.spec_acceptance,
            traffic: TrafficModel {
                rate_rps,
                arrival: t.arrival,
                prompt: t.prompt,
                output: t.output,
                prefix_tokens: t.prefix_tokens,
                prefix_hit_rate: t.prefix_hit_rate,
                trace,
                max_concurrency: t.max_concurrency,
                rate_steps: Vec::new(),
                prefix: t.sharing.unwrap_or(PrefixModel::NONE),
                classes: class_draws(plan),
                lead_in: None,
            },
            slo: slo_targets(&plan.slo),
            num_requests: plan.run.num_requests,
            warmup_requests: plan.run.warmup_requests,
            max_steps: MAX_STEPS,
            fleet: plan.fleet(),
            classes: class_rules(plan),
        };
        cfg.check()?;
        Ok(cfg)
    }

    fn with_rate(&self, rate_rps: f64) -> Result<SimConfig, SimError> {
        check_rate(rate_rps)?;
        check_span(rate_rps, self.num_requests)?;
        let mut c = self.clone();
        c.traffic.rate_rps = rate_rps;
        Ok(c)
    }

    fn check(&self) -> Result<(), SimError> {
        check_rate(self.traffic.rate_rps)?;
        check_span(self.traffic.rate_rps, self.num_requests)?;
        let cfg_err = |field, message| Err(SimError::Config { field, message });
        if self.num_requests == 0 {
            return cfg_err("num_requests", "must be at least 1");
        }
        if self.num_requests > MAX_NUM_REQUESTS {
            return Err(SimError::TooMuchWork {
                field: "run.num_requests",
                value: self.num_requests as u64,
                max: MAX_NUM_REQUESTS as u64,
            });
        }
        if self.warmup_requests >= self.num_requests {
            return cfg_err("warmup_requests", "must be smaller than num_requests");
        }
        if self.max_num_seqs == 0 || self.max_num_batched_tokens == 0 {
            return cfg_err(
                "max_num_seqs / max_num_batched_tokens",
                "must be at least 1",
            );
        }
        if self.max_steps > MAX_STEPS {
            return Err(SimError::TooMuchWork {
                field: "max_steps",
                value: self.max_steps,
                max: MAX_STEPS,
            });
        }
        let s = &self.step;
        let positive = |x: f64| x.is_finite() && x > 0.0;
        let non_negative = |x: f64| x.is_finite() && x >= 0.0;
        if !(positive(s.params)
            && non_negative(s.weight_bytes)
            && non_negative(s.kv_bytes_per_token)
            && positive(s.mem_bandwidth_bytes_per_s)
            && positive(s.compute_flops_per_s)
            && non_negative(s.step_overhead_s)
            && non_negative(s.tp_comm_overhead_s))
        {
            return cfg_err(
                "step",
                "every step-model constant must be finite, rates positive",
            );
        }
        // Every step must advance time, or a run could spin without end.
        if !positive(s.step_time_s(1.0, 0.0)) {
            return cfg_err("step", "a step must take a positive time");
        }
        if self.kv_policy != KvPolicy::None && !positive(self.kv_capacity_tokens) {
            return cfg_err(
                "kv_capacity_tokens",
                "must be positive: the weights must fit in memory",
            );
        }
        if !(0.0..=1.0).contains(&self.spec_acceptance) {
            return cfg_err("spec_acceptance", "must be in [0, 1]");
        }
        // The message is a static text: it names the limit, which this keeps in step.
        const _: () = assert!(crate::plan::MAX_SPEC_DRAFT_TOKENS == 16);
        if self.spec_draft_tokens > crate::plan::MAX_SPEC_DRAFT_TOKENS {
            return cfg_err("spec_draft_tokens", "must be in 0..=16");
        }
        let tr = &self.traffic;
        let uses_trace = matches!(tr.arrival, crate::plan::Arrival::Trace)
            || matches!(tr.prompt.dist, crate::plan::LengthDist::Trace)
            || matches!(tr.output.dist, crate::plan::LengthDist::Trace);
        // The messages are static texts: they name the limit, which this keeps in step.
        const _: () = assert!(crate::plan::MAX_TRACE_ROWS == 100_000);
        if tr.trace.len() > crate::plan::MAX_TRACE_ROWS {
            return cfg_err("traffic.trace", "must have at most 100000 rows");
        }
        if uses_trace && tr.trace.is_empty() {
            return cfg_err(
                "traffic.trace",
                "must have rows when trace arrivals or lengths are used",
            );
        }
        if let crate::plan::Arrival::Gamma { cv } = tr.arrival {
            if !(cv.is_finite() && (0.05..=10.0).contains(&cv)) {
                return cfg_err("traffic.arrival.cv", "must be in [0.05, 10]");
            }
        }
        if let Some(l) = tr.lead_in {
            let span = l.requests as f64 / (tr.rate_rps * l.rate_scale) + l.pause_s;
            let fits = l.rate_scale.is_finite()
                && l.rate_scale > 0.0
                && l.pause_s >= 0.0
                && span <= MAX_SPAN_S;
            if !fits {
                return cfg_err(
                    "traffic.lead_in",
                    "needs a positive rate and a pause of at least 0 s within the span a run may cover",
                );
            }
            if l.requests > self.num_requests {
                return cfg_err(
                    "traffic.lead_in",
                    "must not hold more requests than the run",
                );
            }
        }
        if let Arrival::Closed { think_s, .. } = tr.arrival {
            if !(think_s.is_finite() && (0.0..=3600.0).contains(&think_s)) {
                return cfg_err("traffic.arrival.think_s", "must be in [0, 3600] s");
            }
        }
        if let Some((n, _)) = tr.gate() {
            if !(1..=MAX_CONCURRENCY).contains(&n) {
                return cfg_err(
                    "traffic.arrival.concurrency / traffic.max_concurrency",
                    "must be in 1..=16384",
                );
            }
            if self.fleet.is_routed() {
                return cfg_err(
                    "fleet.replicas",
                    "must be 1 with a client gate: a fleet routes open-loop arrivals only",
                );
            }
        }
        if !(1..=crate::plan::MAX_ROUTED_REPLICAS).contains(&self.fleet.replicas) {
            return cfg_err("fleet.replicas", "must be in 1..=8");
        }
        if self.num_requests as u64 * self.fleet.replicas as u64 > MAX_NUM_REQUESTS as u64 {
            return Err(SimError::TooMuchWork {
                field: "routing.replicas",
                value: self.num_requests as u64 * self.fleet.replicas as u64,
                max: MAX_NUM_REQUESTS as u64,
            });
        }
        // The plan's lengths and each class's, with the same bounds.
        let class_lengths = tr
            .classes
            .iter()
            .flat_map(|c| [&c.prompt, &c.output])
            .map(|l| ("traffic.classes", l));
        for (field, l) in [
            ("traffic.prompt", &tr.prompt),
            ("traffic.output", &tr.output),
        ]
        .into_iter()
        .chain(class_lengths)
        {
            if l.min > l.max || l.max == 0 || l.max > crate::plan::MAX_TOKENS {
                return cfg_err(field, "needs min <= max and max in 1..=1000000");
            }
            if let crate::plan::LengthDist::LogNormal { median, sigma } = l.dist {
                if !(positive(median) && non_negative(sigma) && sigma <= 5.0) {
                    return cfg_err(
                        field,
                        "lognormal median must be positive and sigma in [0, 5]",
                    );
                }
            }
        }
        if self.classes.len() != tr.classes.len() {
            return cfg_err(
                "classes",
                "needs one scheduling rule per class of the traffic",
            );
        }
        // The message is a static text: it names the limit, which this keeps in step.
        const _: () = assert!(crate::plan::classes::MAX_CLASSES == 8);
        if tr.classes.len() > crate::plan::classes::MAX_CLASSES {
            return cfg_err("classes", "must be at most 8");
        }
        if !tr.classes.is_empty() {
            let sum: f64 = tr.classes.iter().map(|c| c.share).sum();
            let whole = (sum - 1.0).abs() <= crate::plan::classes::SHARE_SLACK;
            if !(tr.classes.iter().all(|c| positive(c.share)) && whole) {
                return cfg_err("traffic.classes", "shares must be positive and add up to 1");
            }
            if !tr.prefix.is_none() {
                return cfg_err(
                    "traffic.classes",
                    "cannot be mixed with a prefix structure (shared documents, sessions)",
                );
            }
            let rate_ok = |r: f64| (0.0..=1.0).contains(&r);
            if !tr.classes.iter().all(|c| rate_ok(c.prefix_hit_rate)) {
                return cfg_err(
                    "traffic.classes",
                    "a class's prefix hit rate must be in [0, 1]",
                );
            }
            if !self.classes.iter().all(|c| c.target_above_plan.is_finite()) {
                return cfg_err("classes", "attainment targets must be finite");
            }
            // A class's replayed lengths and arrivals read its own rows, or the stream's.
            let replayed = |l: &crate::plan::LengthSpec| l.dist == crate::plan::LengthDist::Trace;
            let rowless = tr.classes.iter().any(|c| {
                let uses = replayed(&c.prompt)
                    || replayed(&c.output)
                    || c.arrival == Some(crate::plan::Arrival::Trace);
                uses && c.trace.is_empty() && tr.trace.is_empty()
            });
            if rowless {
                return cfg_err(
                    "traffic.classes",
                    "a class's replayed arrivals or lengths need rows",
                );
            }
            if tr
                .classes
                .iter()
                .any(|c| c.trace.len() > crate::plan::MAX_TRACE_ROWS)
            {
                return cfg_err(
                    "traffic.classes",
                    "a class's trace must have at most 100000 rows",
                );
            }
        }
        if !(0.0..=1.0).contains(&tr.prefix_hit_rate) {
            return cfg_err("traffic.prefix_hit_rate", "must be in [0, 1]");
        }
        if tr.rate_steps.len() > MAX_RATE_STEPS {
            return cfg_err("traffic.rate_steps", "must have at most 10000 steps");
        }
        if !tr.rate_steps.iter().all(|s| {
            positive(s.duration_s)
                && s.duration_s <= 1e7
                && non_negative(s.rate_rps)
                && s.rate_rps <= MAX_RATE_RPS
        }) {
            return cfg_err(
                "traffic.rate_steps",
                "every step needs a duration in (0, 1e7] s and a rate in [0, 1e6] req/s",
            );
        }
        Ok(())
    }
}

/// A plan's objectives as the engine judges requests by them.
pub fn slo_targets(slo: &crate::plan::SloSpec) -> SloTargets {
    SloTargets {
        ttft_s: slo.ttft_s,
        tpot_s: slo.tpot_s,
        e2e_s: slo.e2e_s,
        mode: slo.mode,
    }
}

/// The traffic of a plan's classes (none without classes).
fn class_draws(plan: &Plan) -> Vec<ClassDraw> {
    (0..plan.classes.len())
        .map(|k| {
            let mut p = plan.class_plan(k);
            ClassDraw {
                share: plan.classes[k].share,
                prompt: p.traffic.prompt,
                output: p.traffic.output,
                arrival: plan.classes[k]
                    .arrives_on_its_own()
                    .then_some(p.traffic.arrival),
                prefix_tokens: p.traffic.prefix_tokens,
                prefix_hit_rate: p.traffic.prefix_hit_rate,
                // The plan's prefix is one segment the classes that keep it share.
                prefix_segment: if plan.classes[k].prefix.is_some() {
                    k as u32 + 1
                } else {
                    0
                },
                prefix: plan.classes[k]
                    .sharing
                    .unwrap_or(crate::plan::PrefixModel::NONE),
                // Its own rows, which its plan holds in place of the plan's.
                trace: if plan.classes[k].replay.is_some() {
                    std::mem::take(&mut p.traffic.trace)
                } else {
                    Vec::new()
                },
            }
        })
        .collect()
}

/// How the engine schedules and judges a plan's classes (none without classes).
fn class_rules(plan: &Plan) -> Vec<ClassRule> {
    plan.class_target_offsets()
        .into_iter()
        .enumerate()
        .map(|(k, target_above_plan)| ClassRule {
            priority: plan.classes[k].priority,
            slo: slo_targets(&plan.class_plan(k).slo),
            target_above_plan,
        })
        .collect()
}

/// Runs one simulation with `seed` and returns the full report (percentiles included).
pub fn simulate(cfg: &SimConfig, seed: u64) -> Result<SimReport, SimError> {
    cfg.check()?;
    Ok(run::run_full(cfg, seed))
}

/// Runs one simulation with `seed` and returns only the attainment (joint or marginal,
/// per [`SloTargets::mode`]) [0..1]: the fast path (no latency vectors, no percentiles).
pub fn attainment(cfg: &SimConfig, seed: u64) -> Result<f64, SimError> {
    cfg.check()?;
    Ok(run::run_attainment(cfg, seed))
}

/// [`attainment`], with the most sequences that ran at once: below
/// `cfg.max_num_seqs`, the run is the same under any larger `max_num_seqs`.
pub fn attainment_and_peak(cfg: &SimConfig, seed: u64) -> Result<(f64, u32), SimError> {
    cfg.check()?;
    Ok(run::run_attainment_peak(cfg, seed))
}

/// [`attainment_and_peak`], with each traffic class's attainment under its own
/// objectives, in the classes' order (empty with one class).
pub fn attainment_peak_classes(
    cfg: &SimConfig,
    seed: u64,
) -> Result<(f64, u32, Vec<f64>), SimError> {
    cfg.check()?;
    Ok(run::run_attainment_peak_classes(cfg, seed))
}

#[cfg(test)]
mod tests;
