//! The disaggregated deployment a plan may describe: a prefill pool and a decode pool,
//! the link that carries each request's KV cache from one to the other, and the router
//! (see `disagg` for the simulation and the sizing).
//!
//! A plan without it (`Plan::disagg` is `None`) is aggregated: every replica runs
//! prefill and decode together. The field is left out of the JSON when absent, so plans
//! and share links without it read and write exactly as before it existed.

use serde::{Deserialize, Serialize};

use super::{err, KvPolicy, Plan, PlanError};
use crate::plan::comparison::TP_DEGREES;
use crate::presets;

/// Default KV-link bandwidth: one 400 Gb/s RDMA NIC (InfiniBand NDR or RoCE) per
/// instance, 50 GB/s; an assumption [bytes/s].
pub const DEFAULT_KV_LINK_BYTES_PER_S: f64 = 50e9;

/// Default fixed latency of one KV transfer (connection, registration, first byte);
/// an assumption [s].
pub const DEFAULT_KV_LINK_LATENCY_S: f64 = 1e-3;

/// Default token budget of a prefill instance: prefill-only engines run large batches
/// of prompts [tokens].
pub const DEFAULT_PREFILL_BATCHED_TOKENS: u32 = 8192;

/// The names `--router` takes, each with the words a page shows for it: the field
/// registry's choices for `disagg.router`, the default first.
pub const ROUTERS: &[(&str, &str)] = &[
    ("least_loaded", "Least loaded"),
    ("round_robin", "Round robin"),
];

/// How requests are spread over the instances of a pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Router {
    /// Each pool hands requests to its instances in turn.
    RoundRobin,
    /// To the instance with the least work: prompt tokens still to prefill on the
    /// prefill side, sequences running or waiting on the decode side (ties: lowest index).
    #[default]
    LeastLoaded,
}

impl Router {
    /// The name people read: `Least loaded`, `Round robin`.
    pub fn label(self) -> &'static str {
        crate::format::choice_words(ROUTERS, self.name())
    }

    /// The snake_case name used in plan files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Router::RoundRobin => "round_robin",
            Router::LeastLoaded => "least_loaded",
        }
    }

    /// Reads `round_robin` / `least_loaded` (a dash for the underscore is accepted).
    pub fn parse(s: &str) -> Option<Router> {
        match s.trim().replace('-', "_").as_str() {
            "round_robin" => Some(Router::RoundRobin),
            "least_loaded" => Some(Router::LeastLoaded),
            _ => None,
        }
    }
}

/// The prefill pool: instances that only run prompts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PrefillPool {
    /// GPU preset id of the pool; empty for the plan's own hardware.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub gpu: String,
    /// Tensor-parallel degree: GPUs per prefill instance (1, 2, 4 or 8).
    pub tp_degree: u32,
    /// Token budget of one prefill step; prompts are batched (and long ones chunked)
    /// up to it [tokens].
    pub max_num_batched_tokens: u32,
    /// Prefill instances to run for the peak; `None` lets the sizing choose [instances].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instances: Option<u32>,
}

impl Default for PrefillPool {
    fn default() -> Self {
        PrefillPool {
            gpu: String::new(),
            tp_degree: 1,
            max_num_batched_tokens: DEFAULT_PREFILL_BATCHED_TOKENS,
            instances: None,
        }
    }
}

/// The decode pool: instances that receive prefilled requests and decode them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DecodePool {
    /// GPU preset id of the pool; empty for the plan's own hardware.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub gpu: String,
    /// Tensor-parallel degree: GPUs per decode instance (1, 2, 4 or 8).
    pub tp_degree: u32,
    /// Most sequences one decode instance runs at once (vLLM `--max-num-seqs`).
    pub max_num_seqs: u32,
    /// Decode instances to run for the peak; `None` lets the sizing choose [instances].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instances: Option<u32>,
}

impl Default for DecodePool {
    fn default() -> Self {
        DecodePool {
            gpu: String::new(),
            tp_degree: 1,
            max_num_seqs: 128,
            instances: None,
        }
    }
}

/// The link that carries a request's KV cache from its prefill instance to its decode
/// instance. Every transfer takes `latency + bytes / bandwidth`; transfers do not
/// share the link (one NIC per instance, an assumption).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KvLink {
    /// Bandwidth available to one transfer [bytes/s].
    pub bandwidth_bytes_per_s: f64,
    /// Fixed time of one transfer [s].
    pub latency_s: f64,
}

impl Default for KvLink {
    fn default() -> Self {
        KvLink {
            bandwidth_bytes_per_s: DEFAULT_KV_LINK_BYTES_PER_S,
            latency_s: DEFAULT_KV_LINK_LATENCY_S,
        }
    }
}

impl KvLink {
    /// Time to move `bytes` over the link: latency + bytes / bandwidth [s].
    pub fn transfer_time_s(&self, bytes: f64) -> f64 {
        self.latency_s + bytes / self.bandwidth_bytes_per_s
    }
}

/// A disaggregated deployment: prefill pool, decode pool, KV link, router.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct DisaggSpec {
    /// The prefill pool.
    pub prefill: PrefillPool,
    /// The decode pool.
    pub decode: DecodePool,
    /// The KV-transfer link.
    pub kv_link: KvLink,
    /// How requests are spread over each pool's instances.
    pub router: Router,
}

impl DisaggSpec {
    /// The spec a plan without one starts from: both pools on the plan's GPU and TP
    /// degree, the decode pool with the plan's `max_num_seqs`, the default link and the
    /// least-loaded router.
    pub fn for_plan(plan: &Plan) -> DisaggSpec {
        DisaggSpec {
            prefill: PrefillPool {
                tp_degree: plan.hardware.tp_degree,
                ..PrefillPool::default()
            },
            decode: DecodePool {
                tp_degree: plan.hardware.tp_degree,
                max_num_seqs: plan.engine.max_num_seqs,
                ..DecodePool::default()
            },
            ..DisaggSpec::default()
        }
    }

    /// Checks the pools' GPUs and TP degrees, and that the model fits each pool's GPUs;
    /// the error names the field (`disagg.decode.tp_degree`, …). Each number's own range
    /// is its registry row's, which [`Plan::validate`] checks.
    pub fn validate(&self, plan: &Plan) -> Result<(), PlanError> {
        let p = &self.prefill;
        let d = &self.decode;
        check_gpu("disagg.prefill.gpu", &p.gpu)?;
        check_gpu("disagg.decode.gpu", &d.gpu)?;
        check_tp("disagg.prefill.tp_degree", p.tp_degree)?;
        check_tp("disagg.decode.tp_degree", d.tp_degree)?;
        self.check_fit(plan, "disagg.prefill.gpu", &p.gpu, p.tp_degree, false)?;
        self.check_fit(plan, "disagg.decode.gpu", &d.gpu, d.tp_degree, true)
    }

    /// The weights must fit a pool's instance; a decode instance (with a KV policy) must
    /// also hold one request of maximum length.
    fn check_fit(
        &self,
        plan: &Plan,
        field: &'static str,
        gpu: &str,
        tp: u32,
        decode: bool,
    ) -> Result<(), PlanError> {
        let pool = pool_plan(plan, gpu, tp);
        let cap = pool.kv_capacity_tokens();
        let longest = plan.traffic.prompt.max as f64 + plan.traffic.output.max as f64;
        let needs = if decode && plan.engine.kv_policy != KvPolicy::None {
            longest
        } else {
            1.0
        };
        if cap >= needs {
            return Ok(());
        }
        let h = &pool.hardware;
        let usable = tp as f64 * (h.memory_bytes * h.mem_utilization - h.runtime_reserve_bytes());
        let pool_name = if decode { "decode" } else { "prefill" };
        Err(err(
            field,
            if cap < 1.0 {
                format!(
                    "the {pool_name} pool's {} × TP{tp} offers {:.1} GB but the weights need {:.1} GB: \
                     choose a larger GPU or TP degree",
                    h.preset,
                    usable / 1e9,
                    pool.model.weight_bytes() / 1e9
                )
            } else {
                format!(
                    "the {pool_name} pool's {} × TP{tp} holds {:.0} KV tokens, fewer than one request of \
                     maximum length ({longest:.0} tokens): choose a larger GPU or TP degree",
                    h.preset, cap
                )
            },
        ))
    }
}

fn check_gpu(field: &'static str, id: &str) -> Result<(), PlanError> {
    if id.is_empty() || presets::gpu(id).is_some() {
        return Ok(());
    }
    let known: Vec<&str> = presets::GPUS.iter().map(|g| g.id).collect();
    Err(err(
        field,
        format!(
            "unknown GPU '{}'; known: {} (or leave it empty for the plan's hardware)",
            id.chars().take(40).collect::<String>(),
            known.join(", ")
        ),
    ))
}

fn check_tp(field: &'static str, tp: u32) -> Result<(), PlanError> {
    if TP_DEGREES.contains(&tp) {
        Ok(())
    } else {
        Err(err(
            field,
            format!("must be 1, 2, 4 or 8 GPUs per instance, got {tp}"),
        ))
    }
}

/// The plan one instance of a pool runs: `plan` with the GPU preset `gpu` applied
/// (the plan's own hardware when empty or unknown) and TP degree `tp`, without
/// pipeline stages or expert parallelism: a pool's instance is one tensor-parallel group.
pub fn pool_plan(plan: &Plan, gpu: &str, tp: u32) -> Plan {
    let mut p = plan.clone();
    if let Some(g) = presets::gpu(gpu) {
        g.apply(&mut p);
    }
    p.hardware.tp_degree = tp;
    p.hardware.pp_degree = 1;
    p.hardware.ep_degree = 1;
    p.disagg = None;
    p
}
