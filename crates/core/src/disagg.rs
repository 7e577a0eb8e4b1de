//! Disaggregated prefill and decode: a prefill pool and a decode pool, KV transfer
//! between them, and the cheapest xPyD for the forecast peak set against the
//! aggregated plan on the same GPUs.
//!
//! ```text
//!  arrivals ─router─▶ prefill instance i (FCFS, prompts batched up to the token budget)
//!                          │ prompt done
//!                          ▼
//!                     KV transfer: latency + prompt tokens × KV bytes/token / bandwidth
//!                          │
//!            ─router─▶ decode instance j (FCFS admission under max_num_seqs and KV
//!                          memory; continuous decode steps, one token per sequence)
//!
//!  TTFT = prefill queueing + prefill + transfer + decode admission wait + first decode step
//!  TPOT = (finish − first token) / max(output − 1, 1), from the decode pool
//! ```
//!
//! Several instances of each pool are simulated together, event by event
//! ([`simulate_disagg`]), on the request stream the aggregated simulator draws for the
//! same seed. Step times come from each pool's roofline [`StepModel`]: a prefill step is
//! a chunk of prompt tokens, a decode step a batch of one token per running sequence
//! reading its context (tensor-parallel all-reduces included).
//!
//! [`DisaggSizing`] is a job state machine like the goodput search: it searches the
//! xPyD grid and runs the aggregated plan's goodput search alongside, so workers and
//! threads can drive it; [`run_disagg_threads`] drives it on OS threads.

mod sim;
mod sizing;
mod table;

pub use crate::plan::disagg::{
    kv_shards, pool_plan, DecodePool, DisaggSpec, KvLink, KvLinkKind, KvLinkSource, KvRoute,
    KvRoutes, PrefillPool, Router, DEFAULT_KV_LINK_BYTES_PER_S, DEFAULT_KV_LINK_LATENCY_S,
    DEFAULT_PREFILL_BATCHED_TOKENS,
};
pub use sim::simulate_disagg;
pub use sizing::{
    run_disagg_jobs, run_disagg_threads, AggregatedSide, ClassAttained, DisaggJob, DisaggJobResult,
    DisaggResult, DisaggSizing, PointJob, PointResult, PointSummary, XpyD,
};
pub use table::ComparisonRow;

use crate::analytic::{md1_ttft_s, MeanLengths};
use crate::plan::comparison::Layout;
use crate::plan::{KvPolicy, ModelSpec, Plan, PlanError};
use crate::roofline::StepModel;
use crate::roofline::StepModelOf;
use crate::search::SearchError;
use crate::sim::ClassRule;
use crate::sim::SimConfigOf;
use crate::sim::{SimConfig, SimError, SloTargets, Summary};
use crate::traffic::TrafficModel;
use serde::{Deserialize, Serialize};

/// Why a disaggregated simulation or sizing cannot run. Each message says what to change.
#[derive(Debug, Clone, PartialEq)]
pub enum DisaggError {
    /// The plan (or its `disagg` section) is invalid: fix the named field.
    Plan(PlanError),
    /// The simulation settings are out of range (rate, requests, …).
    Sim(SimError),
    /// The aggregated plan's goodput search failed, or the caller cancelled.
    Search(SearchError),
    /// An instance count outside 1..=[`crate::plan::MAX_DISAGG_INSTANCES`].
    Instances {
        /// `prefill` or `decode`.
        pool: &'static str,
        /// The count asked for.
        count: u32,
    },
    /// Every SLO objective is unset (the batch class): any xPyD would pass.
    NoObjective,
}

impl std::fmt::Display for DisaggError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DisaggError::Plan(e) => write!(f, "{e}"),
            DisaggError::Sim(e) => write!(f, "{e}"),
            DisaggError::Search(e) => write!(f, "{e}"),
            DisaggError::Instances { pool, count } => write!(
                f,
                "{count} {pool} instances: must be a whole number from 1 to {}",
                crate::plan::MAX_DISAGG_INSTANCES
            ),
            DisaggError::NoObjective => write!(
                f,
                "slo: no TTFT, TPOT or E2E objective (the Batch preset sets none), so every xPyD meets it; set an end-to-end deadline (E2E) for batch work, or TTFT and TPOT objectives, to size the pools"
            ),
        }
    }
}

impl std::error::Error for DisaggError {}

impl From<PlanError> for DisaggError {
    fn from(e: PlanError) -> Self {
        DisaggError::Plan(e)
    }
}

impl From<SimError> for DisaggError {
    fn from(e: SimError) -> Self {
        match e {
            SimError::Plan(p) => DisaggError::Plan(p),
            e => DisaggError::Sim(e),
        }
    }
}

impl From<SearchError> for DisaggError {
    fn from(e: SearchError) -> Self {
        DisaggError::Search(e)
    }
}

/// One pool's instance, resolved: what a step costs and what an instance holds.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolModel {
    /// GPU preset id (the plan's hardware preset when the pool names none).
    pub gpu: String,
    /// How one instance spreads over GPUs.
    pub layout: Layout,
    /// Price of one GPU-hour [USD].
    pub gpu_hour_usd: f64,
    /// KV-cache capacity of one instance [tokens].
    pub kv_capacity_tokens: f64,
    /// Step-time model of one instance.
    pub step: StepModel,
}

impl PoolModel {
    /// The pool of instances that run `p` ([`pool_plan`]).
    fn of(p: &Plan) -> PoolModel {
        PoolModel {
            gpu: p.hardware.preset.clone(),
            layout: Layout::of(p),
            gpu_hour_usd: p.hardware.gpu_hour_usd,
            kv_capacity_tokens: crate::analytic::kv_capacity_tokens(p),
            step: StepModel::from_plan(p),
        }
    }

    /// GPUs of one instance.
    pub fn gpus(&self) -> u32 {
        self.layout.gpus()
    }

    /// Cost of one instance per hour: GPU-hour price × GPUs [USD/h].
    pub fn instance_hour_usd(&self) -> f64 {
        self.gpu_hour_usd * self.gpus() as f64
    }

    /// Time to prefill `tokens` of prompt alone on one instance, in steps of at most
    /// `budget` tokens [s].
    pub fn prefill_time_s(&self, tokens: f64, budget: u32) -> f64 {
        let step = &self.step;
        let b = budget.max(1) as f64;
        let full = libm::floor(tokens / b);
        let rest = tokens - full * b;
        let mut t = full * step.step_time_s(b, 0.0);
        if rest > 0.0 {
            t += step.step_time_s(rest, 0.0);
        }
        t
    }
}

/// How a decode instance holds KV memory for a sequence it admits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecodeKv {
    /// No memory limit (the plan's `kv_policy` is `none`).
    Unlimited,
    /// Reserve prompt + the output cap at admission (`reserve`).
    ReserveCap,
    /// Reserve prompt + the sequence's own output at admission (`paged`): the most it
    /// will ever hold, so a paged cache needs no preemption. An approximation.
    ReserveOwn,
}

/// Everything one disaggregated simulation needs, resolved from a plan.
#[derive(Debug, Clone, PartialEq)]
pub struct DisaggConfig {
    /// The prefill pool's instance.
    pub prefill: PoolModel,
    /// The decode pool's instance.
    pub decode: PoolModel,
    /// Token budget of a prefill step [tokens].
    pub prefill_budget_tokens: u32,
    /// Most sequences a decode instance runs.
    pub decode_max_num_seqs: u32,
    /// Decode-side KV accounting.
    pub decode_kv: DecodeKv,
    /// The model (for the KV bytes a prompt's transfer carries).
    pub model: ModelSpec,
    /// The KV link as the plan states it.
    pub kv_link: KvLink,
    /// The routes the KV transfers take, resolved from the pools.
    pub kv_routes: KvRoutes,
    /// The router.
    pub router: Router,
    /// Arrivals and lengths (open loop), at the simulated rate.
    pub traffic: TrafficModel,
    /// The SLO objectives.
    pub slo: SloTargets,
    /// How each traffic class is scheduled and judged (none with one class): waiting
    /// requests go lowest priority number first, in both pools, and each is judged by
    /// its class's objectives.
    pub classes: Vec<ClassRule>,
    /// Requests simulated, warm-up included.
    pub num_requests: u32,
    /// Requests dropped from the front (generated order).
    pub warmup_requests: u32,
}

impl DisaggConfig {
    /// Resolves `plan` with its `disagg` section (or [`DisaggSpec::for_plan`] when it
    /// has none) at `rate_rps`. Arrivals are open loop, as in the goodput search: the
    /// request stream for a seed is the one the aggregated search simulates.
    pub fn from_plan(plan: &Plan, rate_rps: f64) -> Result<DisaggConfig, DisaggError> {
        let spec = plan
            .disagg
            .clone()
            .unwrap_or_else(|| DisaggSpec::for_plan(plan));
        let mut with = plan.clone();
        with.disagg = Some(spec.clone());
        let base = SimConfig::from_plan(&with, rate_rps)?;
        let mut traffic = base.traffic;
        traffic.arrival = traffic.arrival.open_loop();
        traffic.max_concurrency = None;
        let [pp, dp] = spec.pool_plans(plan);
        Ok(DisaggConfig {
            prefill: PoolModel::of(&pp),
            decode: PoolModel::of(&dp),
            prefill_budget_tokens: spec.prefill.max_num_batched_tokens,
            decode_max_num_seqs: spec.decode.max_num_seqs,
            decode_kv: match plan.engine.kv_policy {
                KvPolicy::None => DecodeKv::Unlimited,
                KvPolicy::Reserve => DecodeKv::ReserveCap,
                KvPolicy::Paged => DecodeKv::ReserveOwn,
            },
            model: plan.model.clone(),
            kv_link: spec.kv_link,
            kv_routes: spec.routes_between(&plan.model, &pp.hardware, &dp.hardware),
            router: spec.router,
            traffic,
            slo: base.slo,
            classes: base.classes,
            num_requests: base.num_requests,
            warmup_requests: base.warmup_requests,
        })
    }

    /// This configuration at another rate.
    pub fn with_rate(&self, rate_rps: f64) -> Result<DisaggConfig, DisaggError> {
        crate::sim::check_rate(rate_rps)?;
        let mut c = self.clone();
        c.traffic.rate_rps = rate_rps;
        Ok(c)
    }

    /// KV bytes a prompt of `tokens` carries from prefill to decode: the model's cache
    /// of that context, one copy [bytes].
    pub fn kv_transfer_bytes(&self, tokens: u32) -> f64 {
        self.model.kv_bytes(tokens as f64)
    }
}

/// What one disaggregated simulation measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DisaggReport {
    /// Prefill instances simulated.
    pub prefill_instances: u32,
    /// Decode instances simulated.
    pub decode_instances: u32,
    /// Attainment, joint or marginal per the plan's SLO mode [0..1].
    pub attainment: f64,
    /// Arrival to first token [s].
    pub ttft_s: Summary,
    /// Time per output token after the first [s].
    pub tpot_s: Summary,
    /// Arrival to last token [s].
    pub e2e_s: Summary,
    /// Arrival to the start of the request's prefill: prefill queueing [s].
    pub prefill_wait_s: Summary,
    /// Arrival to the end of the request's prefill [s].
    pub prefill_s: Summary,
    /// KV transfer [s].
    pub transfer_s: Summary,
    /// KV arrival to admission on a decode instance [s].
    pub decode_wait_s: Summary,
    /// Measured requests (after warm-up).
    pub measured_requests: u32,
    /// Measured requests that never finished (misses).
    pub unfinished_requests: u32,
    /// Requests no decode instance could ever hold (misses).
    pub rejected_requests: u32,
    /// Mean share of time the prefill instances were busy [0..1].
    pub prefill_busy: f64,
    /// Mean share of time the decode instances were busy [0..1].
    pub decode_busy: f64,
    /// Simulated time [s].
    pub sim_time_s: f64,
    /// True when the run hit the event cap before every request ended.
    pub truncated: bool,
    /// Each traffic class's attainment under its own objectives, in class order (none
    /// with one class); `attainment` is the worst, less how far its target lies above
    /// the plan's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub class_attainments: Vec<f64>,
}

/// The M/D/1 view of one prefill instance: Poisson arrivals at `rate_rps`, a fixed
/// service time (the prefill of the mean prompt).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PrefillMd1 {
    /// Arrival rate at one prefill instance [requests/s].
    pub rate_rps: f64,
    /// Prefill time of the mean prompt, D [s].
    pub service_s: f64,
    /// Utilisation R·D.
    pub utilization: f64,
    /// Mean queueing wait `R·D² / (2(1 − R·D))` [s]; `None` when R·D ≥ 1.
    pub wait_s: Option<f64>,
    /// Mean time to the end of prefill, `D + wait` [s]; `None` when R·D ≥ 1.
    pub ttft_s: Option<f64>,
}

/// The M/D/1 prefill queue at `rate_rps` per instance with service time `service_s`
/// (see [`crate::analytic::md1_ttft_s`]).
pub fn prefill_md1(rate_rps: f64, service_s: f64) -> PrefillMd1 {
    let ttft = md1_ttft_s(rate_rps, service_s);
    PrefillMd1 {
        rate_rps,
        service_s,
        utilization: rate_rps * service_s,
        wait_s: ttft.map(|t| t - service_s),
        ttft_s: ttft,
    }
}

/// The M/D/1 view of the prefill pool of `cfg` with `instances` instances sharing
/// `rate_rps`: each sees `rate / instances`, and D is the prefill of the plan's mean
/// prompt (after prefix-cache hits) in budget-sized steps.
pub fn pool_md1(plan: &Plan, cfg: &DisaggConfig, instances: u32, rate_rps: f64) -> PrefillMd1 {
    let tokens = MeanLengths::of(plan).prefill_tokens;
    let d = cfg
        .prefill
        .prefill_time_s(tokens, cfg.prefill_budget_tokens);
    prefill_md1(rate_rps / instances.max(1) as f64, d)
}

#[cfg(test)]
mod tests;
