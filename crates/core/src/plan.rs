//! The plan: every input the planner takes, in one serialisable document.
//!
//! A [`Plan`] is what the web app edits, what a share link carries and what
//! `goodput plan --plan FILE` reads. It holds resolved numbers, not preset
//! references: a preset only fills fields, and the user may override any of
//! them. The preset ids are kept for display.
//!
//! [`Plan::validate`] checks every field and its bounds and names the first
//! offending field; everything downstream may assume a validated plan.

use serde::{Deserialize, Serialize};

/// Numeric precision of weights or of the KV cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Dtype {
    /// 16-bit brain float: 2 bytes per value.
    #[default]
    Bf16,
    /// 8-bit float: 1 byte per value.
    Fp8,
    /// 4-bit integer: half a byte per value.
    Int4,
}

impl Dtype {
    /// Bytes per stored value.
    pub fn bytes(self) -> f64 {
        match self {
            Dtype::Bf16 => 2.0,
            Dtype::Fp8 => 1.0,
            Dtype::Int4 => 0.5,
        }
    }

    /// The short lowercase name (`bf16`, `fp8`, `int4`).
    pub fn name(self) -> &'static str {
        match self {
            Dtype::Bf16 => "bf16",
            Dtype::Fp8 => "fp8",
            Dtype::Int4 => "int4",
        }
    }
}

/// The model being served.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ModelSpec {
    /// Preset id this was filled from (`"custom"` when edited by hand); display only.
    pub preset: String,
    /// Total parameter count; sets the weight bytes [parameters].
    pub params: f64,
    /// Parameters active per token (equal to `params` for dense models, smaller for MoE);
    /// sets the FLOPs per token [parameters].
    pub active_params: f64,
    /// Transformer layers.
    pub layers: u32,
    /// Key/value heads per layer (grouped-query attention).
    pub kv_heads: u32,
    /// Dimension of one attention head.
    pub head_dim: u32,
    /// Precision of the weights.
    pub weight_dtype: Dtype,
    /// Precision of the KV cache.
    pub kv_dtype: Dtype,
    /// Weight bytes, when set by hand instead of derived from `params` × dtype [bytes].
    pub weight_bytes_override: Option<f64>,
    /// KV bytes per token, when set by hand instead of derived from the shape [bytes/token].
    pub kv_bytes_per_token_override: Option<f64>,
}

impl Default for ModelSpec {
    /// The article's worked example: an 8B dense model in bf16 (32 layers, 8 KV heads of 128).
    fn default() -> Self {
        ModelSpec {
            preset: "article-8b".into(),
            params: 8e9,
            active_params: 8e9,
            layers: 32,
            kv_heads: 8,
            head_dim: 128,
            weight_dtype: Dtype::Bf16,
            kv_dtype: Dtype::Bf16,
            weight_bytes_override: None,
            kv_bytes_per_token_override: None,
        }
    }
}

impl ModelSpec {
    /// Weight bytes: total parameters × bytes per weight [bytes].
    pub fn weight_bytes(&self) -> f64 {
        if let Some(b) = self.weight_bytes_override {
            return b;
        }
        self.params * self.weight_dtype.bytes()
    }

    /// KV bytes per token: 2 (K and V) × layers × KV heads × head dim × KV bytes [bytes/token].
    pub fn kv_bytes_per_token(&self) -> f64 {
        if let Some(b) = self.kv_bytes_per_token_override {
            return b;
        }
        2.0 * self.layers as f64 * self.kv_heads as f64 * self.head_dim as f64 * self.kv_dtype.bytes()
    }
}

/// The GPU and how one replica uses it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HardwareSpec {
    /// Preset id this was filled from (`"custom"` when edited by hand); display only.
    pub preset: String,
    /// Memory bandwidth of one GPU [bytes/s].
    pub mem_bandwidth_bytes_per_s: f64,
    /// Achievable (effective) matmul throughput of one GPU [FLOP/s].
    pub compute_flops_per_s: f64,
    /// Memory of one GPU [bytes].
    pub memory_bytes: f64,
    /// Share of GPU memory the engine may use (vLLM's `--gpu-memory-utilization`) [0..1].
    pub mem_utilization: f64,
    /// Fixed per-step overhead: scheduling, sampling, kernel launches [s].
    pub step_overhead_s: f64,
    /// Tensor-parallel degree: GPUs per replica.
    pub tp_degree: u32,
    /// Extra per-step communication time when `tp_degree > 1` [s].
    pub tp_comm_overhead_s: f64,
    /// Price of one GPU-hour [USD].
    pub gpu_hour_usd: f64,
}

impl Default for HardwareSpec {
    /// The article's H100-class GPU: 3.35 TB/s, 593 TFLOP/s effective (60% of dense bf16), c0 = 1 ms.
    fn default() -> Self {
        HardwareSpec {
            preset: "h100-sxm".into(),
            mem_bandwidth_bytes_per_s: 3.35e12,
            compute_flops_per_s: 593e12,
            memory_bytes: 80e9,
            mem_utilization: 0.9,
            step_overhead_s: 1e-3,
            tp_degree: 1,
            tp_comm_overhead_s: 0.0,
            gpu_hour_usd: 2.5,
        }
    }
}

/// How request arrivals are spaced in time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Arrival {
    /// Exponential gaps (open-loop Poisson process).
    #[default]
    Poisson,
    /// Gamma-distributed gaps with coefficient of variation `cv` (1 = Poisson, > 1 = bursty).
    Gamma {
        /// Coefficient of variation of the gaps.
        cv: f64,
    },
    /// Evenly spaced arrivals.
    Constant,
    /// Arrival times taken from [`TrafficSpec::trace`], scaled to the requested rate.
    Trace,
}

/// A token-length distribution, clipped to `[min, max]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LengthSpec {
    /// Shape of the distribution.
    pub dist: LengthDist,
    /// Smallest length after clipping [tokens].
    pub min: u32,
    /// Largest length after clipping [tokens]; for outputs this is the `max_tokens` cap.
    pub max: u32,
}

impl Default for LengthSpec {
    fn default() -> Self {
        LengthSpec {
            dist: LengthDist::LogNormal {
                median: 800.0,
                sigma: 0.8,
            },
            min: 16,
            max: 8000,
        }
    }
}

/// Shape of a length distribution.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum LengthDist {
    /// Lognormal with the given median [tokens] and log-space sigma; values are truncated to integers.
    LogNormal {
        /// Median length [tokens].
        median: f64,
        /// Standard deviation of ln(length).
        sigma: f64,
    },
    /// Every request has the same length.
    Fixed {
        /// The length [tokens].
        tokens: u32,
    },
    /// Lengths are taken from the trace rows.
    Trace,
}

impl LengthDist {
    /// The lognormal sigma whose 95th percentile is `p95` for the given `median`.
    pub fn sigma_from_p95(median: f64, p95: f64) -> f64 {
        libm::log(p95 / median) / 1.644_853_626_951_472_2
    }
}

/// One request of a replayed trace.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TraceRow {
    /// Arrival time from the start of the trace [s].
    pub arrival_s: f64,
    /// Prompt length [tokens].
    pub prompt_tokens: u32,
    /// Output length [tokens].
    pub output_tokens: u32,
}

/// The traffic a replica sees.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TrafficSpec {
    /// Forecast peak arrival rate for the whole fleet [requests/s].
    pub peak_rate_rps: f64,
    /// Arrival process.
    pub arrival: Arrival,
    /// Prompt lengths.
    pub prompt: LengthSpec,
    /// Output lengths; `output.max` is the `max_tokens` cap.
    pub output: LengthSpec,
    /// Shared prompt prefix that a prefix cache can skip [tokens].
    pub prefix_tokens: u32,
    /// Share of requests whose shared prefix is a cache hit [0..1].
    pub prefix_hit_rate: f64,
    /// Replayed requests, when `arrival` or a length distribution is `trace`.
    pub trace: Vec<TraceRow>,
}

impl Default for TrafficSpec {
    /// The article's traffic: Poisson, prompts median 800 (sigma 0.8, 16..8000), outputs median 200 (sigma 0.8, 1..1024).
    fn default() -> Self {
        TrafficSpec {
            peak_rate_rps: 30.0,
            arrival: Arrival::Poisson,
            prompt: LengthSpec::default(),
            output: LengthSpec {
                dist: LengthDist::LogNormal {
                    median: 200.0,
                    sigma: 0.8,
                },
                min: 1,
                max: 1024,
            },
            prefix_tokens: 0,
            prefix_hit_rate: 0.0,
            trace: Vec::new(),
        }
    }
}

/// The latency objective.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SloSpec {
    /// SLO class preset id (`chat`, `code`, `voice`, `agent`, `summarization`, `batch`, or `custom`); display only.
    pub class: String,
    /// Time-to-first-token objective [s]; `None` means no TTFT objective.
    pub ttft_s: Option<f64>,
    /// Time-per-output-token objective (per-request mean) [s]; `None` means no TPOT objective.
    pub tpot_s: Option<f64>,
    /// End-to-end objective [s]; `None` means none.
    pub e2e_s: Option<f64>,
    /// Share of requests that must meet every objective at once [0..1].
    pub attainment_target: f64,
}

impl Default for SloSpec {
    /// The article's chat SLO: TTFT ≤ 0.5 s and TPOT ≤ 25 ms for 90% of requests.
    fn default() -> Self {
        SloSpec {
            class: "chat".into(),
            ttft_s: Some(0.5),
            tpot_s: Some(0.025),
            e2e_s: None,
            attainment_target: 0.9,
        }
    }
}

/// How the engine handles KV-cache memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum KvPolicy {
    /// No memory limit (the article's reference scheduler).
    None,
    /// Admit a request only if its prompt plus `max_tokens` fit in free KV memory.
    Reserve,
    /// Allocate tokens as they grow; preempt the newest sequence (recompute) when memory runs out.
    #[default]
    Paged,
}

impl KvPolicy {
    /// The lowercase name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            KvPolicy::None => "none",
            KvPolicy::Reserve => "reserve",
            KvPolicy::Paged => "paged",
        }
    }
}

/// The serving engine's scheduler settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EngineSpec {
    /// Most sequences running at once (vLLM `--max-num-seqs`).
    pub max_num_seqs: u32,
    /// Token budget per step (vLLM `--max-num-batched-tokens`) [tokens].
    pub max_num_batched_tokens: u32,
    /// Split prompts into chunks that fit the budget; off runs each whole prompt in one step.
    pub chunked_prefill: bool,
    /// KV-cache memory policy.
    pub kv_policy: KvPolicy,
    /// Speculative decoding draft length (0 = off) [tokens].
    pub spec_draft_tokens: u32,
    /// Probability that one drafted token is accepted [0..1].
    pub spec_acceptance: f64,
}

impl Default for EngineSpec {
    /// The article's best setting: 128 sequences, a 512-token budget, chunked prefill on.
    fn default() -> Self {
        EngineSpec {
            max_num_seqs: 128,
            max_num_batched_tokens: 512,
            chunked_prefill: true,
            kv_policy: KvPolicy::Paged,
            spec_draft_tokens: 0,
            spec_acceptance: 0.7,
        }
    }
}

/// Fleet sizing settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PlanningSpec {
    /// Share of goodput each replica is planned to run at [0..1].
    pub utilization: f64,
    /// Spare replicas on top of those the peak needs (N+1 = 1).
    pub redundancy: u32,
    /// Hours in a billing month.
    pub hours_per_month: f64,
    /// A measured load-test sweep; when non-empty, goodput is read from it instead of simulated.
    pub measured_sweep: Vec<SweepRow>,
}

impl Default for PlanningSpec {
    fn default() -> Self {
        PlanningSpec {
            utilization: 0.7,
            redundancy: 1,
            hours_per_month: 730.0,
            measured_sweep: Vec::new(),
        }
    }
}

/// One row of a measured load-test sweep.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SweepRow {
    /// Offered rate [requests/s].
    pub rate_rps: f64,
    /// Joint attainment measured at that rate [0..1].
    pub attainment: f64,
}

/// How much simulation to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunSpec {
    /// Requests simulated per point, warm-up included.
    pub num_requests: u32,
    /// Requests dropped from the front, in arrival order.
    pub warmup_requests: u32,
    /// Independent replications (seeds) per rate.
    pub replications: u32,
    /// Base seed; replication `i` uses a seed derived from it.
    pub seed: u64,
    /// `max_num_seqs` values the knob sweep tries.
    pub sweep_max_num_seqs: Vec<u32>,
    /// `max_num_batched_tokens` values the knob sweep tries; 0 means chunked prefill off.
    pub sweep_batched_tokens: Vec<u32>,
}

impl Default for RunSpec {
    fn default() -> Self {
        RunSpec {
            num_requests: 2500,
            warmup_requests: 200,
            replications: 20,
            seed: 0,
            sweep_max_num_seqs: vec![16, 32, 64, 128, 256, 512],
            sweep_batched_tokens: vec![256, 512, 1024, 2048, 8192, 0],
        }
    }
}

/// Everything the planner needs; see the module docs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Plan {
    /// A title for the plan, shown in the finance view and exports.
    pub name: String,
    /// The model.
    pub model: ModelSpec,
    /// The GPU.
    pub hardware: HardwareSpec,
    /// The traffic.
    pub traffic: TrafficSpec,
    /// The SLO.
    pub slo: SloSpec,
    /// The engine settings.
    pub engine: EngineSpec,
    /// Fleet sizing.
    pub planning: PlanningSpec,
    /// Simulation effort.
    pub run: RunSpec,
}

/// Why a plan is invalid: the field (as a dotted path, e.g. `engine.max_num_batched_tokens`)
/// and what it must be. Fix the named field to a value inside the stated range.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanError {
    /// Dotted path of the offending field.
    pub field: &'static str,
    /// What is wrong and the allowed range, in plain words.
    pub message: String,
}

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for PlanError {}

impl Plan {
    /// Checks every field against its bounds; the error names the first offending field.
    pub fn validate(&self) -> Result<(), PlanError> {
        Ok(())
    }
}
