//! The plan: every input the planner takes, in one serialisable document.
//!
//! A [`Plan`] is what the web app edits, what a share link carries and what
//! `goodput plan --plan FILE` reads. It holds resolved numbers, not preset
//! references: a preset only fills fields, and the user may override any of
//! them. The preset ids are kept for display.
//!
//! [`Plan::validate`] checks every field and its bounds and names the first
//! offending field; everything downstream may assume a validated plan.

pub use crate::model_kinds::{AttentionKind, Dtype};
pub use calibration::{
    Calibration, CalibrationError, CalibrationSource, Fitted, MeasuredLoad, MeasuredSummary,
    MetricErrors, SpecMeasured,
};
pub use goodput_engine::fleet::{Fleet, FleetRouter};
pub use goodput_engine::kinds::{
    Arrival, KvPolicy, LengthDist, LengthSpec, SloMode, TraceRow, TRACE_BLOCK_TOKENS, Z95,
};
pub use goodput_engine::traffic::{PrefixModel, TurnOrder};
use serde::{Deserialize, Serialize};

pub mod calibration;
pub mod classes;
pub mod comparison;
pub mod disagg;
pub mod fields;
pub mod price;
pub mod schedule;
mod strict;

pub use strict::{StrictPlanError, PLAN_SECTIONS};

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
    // The attention fields are left out of the JSON at their defaults, so a plan that
    // does not use them encodes (and links) exactly as before they existed.
    /// How the layers cache keys and values (grouped-query unless stated).
    #[serde(skip_serializing_if = "AttentionKind::is_grouped_query")]
    pub attention: AttentionKind,
    /// Rank of the compressed KV latent, multi-head latent attention only [values].
    #[serde(skip_serializing_if = "is_zero")]
    pub kv_lora_rank: u32,
    /// Dimension of the decoupled rotary key, multi-head latent attention only [values].
    #[serde(skip_serializing_if = "is_zero")]
    pub qk_rope_head_dim: u32,
    /// Layers with sliding-window (local) attention, out of `layers`; 0 when every layer
    /// attends to the whole context [layers].
    #[serde(skip_serializing_if = "is_zero")]
    pub sliding_window_layers: u32,
    /// Window of the sliding-window layers [tokens]; ignored when they are 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub sliding_window_tokens: u32,
    /// Width of the residual stream (`hidden_size` in the model's config.json); sets the
    /// bytes of each tensor-parallel all-reduce. 0 when unknown: no bandwidth term
    /// (a plan or link written before this field decodes to 0 and keeps its numbers)
    /// [values].
    #[serde(default, skip_serializing_if = "is_zero")]
    pub hidden_size: u32,
    /// Query heads per layer (`num_attention_heads` in config.json); prices a prefill's
    /// attention, whose FLOPs grow with the square of the prompt. 0 when unknown: no
    /// attention term, as in the articles' model (plans and links written before this
    /// field decode to 0 and keep their numbers) [heads].
    #[serde(default, skip_serializing_if = "is_zero")]
    pub attention_heads: u32,
    /// Routed experts per mixture-of-experts layer; 0 for a dense model, whose every
    /// step reads all its weights.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub experts: u32,
    /// Routed experts each token picks; 0 for a dense model.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub experts_per_token: u32,
    /// Parameters of the routed experts over all layers, part of `params`; a step reads
    /// only the experts its tokens pick. 0 for a dense model [parameters].
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub expert_params: f64,
    /// How much more often a token picks one of the popular half of the routed experts
    /// than one of the other half; 1 (uniform routing) unless stated. Real routers favour
    /// some experts, so a batch reads fewer distinct experts than uniform routing says
    /// (docs/models.md, "Routed experts") [ratio ≥ 1].
    #[serde(
        default = "uniform_routing",
        skip_serializing_if = "is_uniform_routing"
    )]
    pub expert_routing_skew: f64,
}

fn uniform_routing() -> f64 {
    1.0
}

fn is_uniform_routing(x: &f64) -> bool {
    *x == 1.0
}

/// Whether a count is 0 (left out of a plan's or a report's JSON then).
pub(crate) fn is_zero(x: &u32) -> bool {
    *x == 0
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
            attention: AttentionKind::GroupedQuery,
            kv_lora_rank: 0,
            qk_rope_head_dim: 0,
            sliding_window_layers: 0,
            sliding_window_tokens: 0,
            hidden_size: 4096,
            attention_heads: 0,
            experts: 0,
            experts_per_token: 0,
            expert_params: 0.0,
            expert_routing_skew: 1.0,
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

    /// KV bytes one layer caches per token [bytes/token/layer]: 2 (K and V) × KV heads ×
    /// head dim × KV bytes for grouped-query attention; (kv_lora_rank + qk_rope_head_dim) ×
    /// KV bytes for multi-head latent attention.
    pub fn kv_bytes_per_token_per_layer(&self) -> f64 {
        let values = match self.attention {
            AttentionKind::GroupedQuery => 2.0 * self.kv_heads as f64 * self.head_dim as f64,
            AttentionKind::MultiHeadLatent => {
                self.kv_lora_rank as f64 + self.qk_rope_head_dim as f64
            }
        };
        values * self.kv_dtype.bytes()
    }

    /// How many times a replica of `tp_degree` GPUs stores each cached value: 1 while
    /// the KV heads split evenly over the GPUs; `tp / kv_heads` when there are fewer
    /// heads than GPUs (each head is copied); `tp` for multi-head latent attention, whose
    /// one latent per layer every GPU holds in full. 1 with the byte override.
    pub fn kv_replication(&self, tp_degree: u32) -> f64 {
        let g = tp_degree.max(1) as f64;
        if self.kv_bytes_per_token_override.is_some() {
            return 1.0;
        }
        match self.attention {
            AttentionKind::MultiHeadLatent => g,
            AttentionKind::GroupedQuery => (g / self.kv_heads.max(1) as f64).max(1.0),
        }
    }

    /// Whether the model routes tokens to experts (a mixture of experts with its routing
    /// stated).
    pub fn is_moe(&self) -> bool {
        self.experts > 0 && self.experts_per_token > 0 && self.expert_params > 0.0
    }

    /// Bytes of the routed experts' weights, scaled like the whole when the weight
    /// bytes are set by hand; 0 for a dense model [bytes].
    pub fn expert_weight_bytes(&self) -> f64 {
        if !self.is_moe() {
            return 0.0;
        }
        self.weight_bytes() * (self.expert_params / self.params).clamp(0.0, 1.0)
    }

    /// Chance that one token leaves a given routed expert untouched, `1 − k/E` (uniform
    /// routing) [0..1].
    pub fn expert_miss_per_token(&self) -> f64 {
        if !self.is_moe() {
            return 1.0;
        }
        1.0 - self.experts_per_token as f64 / self.experts as f64
    }

    /// Attention FLOPs per (query, key) pair of one layer: `4 × heads × head_dim` (2 for
    /// the scores, 2 for the weighted values); 0 when the heads are unknown [FLOP].
    pub fn attn_flops_per_pair_per_layer(&self) -> f64 {
        4.0 * self.attention_heads as f64 * self.head_dim as f64
    }

    /// Layers that attend to the whole context (all layers but the sliding-window ones).
    pub fn global_layers(&self) -> u32 {
        self.layers.saturating_sub(self.sliding_window_layers)
    }

    /// KV bytes per token of context in the full-attention layers [bytes/token]: global
    /// layers × bytes per layer (for a model without sliding windows, every layer: the
    /// grouped-query `2 × layers × KV heads × head dim × KV bytes`), or the override.
    /// Sliding-window layers are not in it; see [`ModelSpec::kv_bytes`].
    pub fn kv_bytes_per_token(&self) -> f64 {
        if let Some(b) = self.kv_bytes_per_token_override {
            return b;
        }
        self.global_layers() as f64 * self.kv_bytes_per_token_per_layer()
    }

    /// KV bytes one sequence holding `context_tokens` of context caches [bytes]:
    /// bytes per layer × (global layers × c + window layers × min(c, window)). With the
    /// override, `override × c`.
    pub fn kv_bytes(&self, context_tokens: f64) -> f64 {
        let c = context_tokens.max(0.0);
        if let Some(b) = self.kv_bytes_per_token_override {
            return b * c;
        }
        let windowed = if self.sliding_window_layers > 0 {
            self.sliding_window_layers as f64 * c.min(self.sliding_window_tokens as f64)
        } else {
            0.0
        };
        self.kv_bytes_per_token_per_layer() * (self.global_layers() as f64 * c + windowed)
    }

    /// Average KV bytes per token of a sequence holding `context_tokens` [bytes/token]:
    /// `kv_bytes(c) / c`. Equal to [`ModelSpec::kv_bytes_per_token`] without sliding
    /// windows; larger with them, and falling towards it as the context outgrows the window.
    pub fn kv_bytes_per_token_at(&self, context_tokens: f64) -> f64 {
        let c = context_tokens.max(1.0);
        self.kv_bytes(c) / c
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
    /// Tensor-parallel degree: GPUs per pipeline stage (per replica without pipeline
    /// parallelism).
    pub tp_degree: u32,
    /// Pipeline-parallel degree: stages of `tp_degree` GPUs each, the layers split evenly
    /// over them; a replica has `tp_degree × pp_degree` GPUs. 1 (older plans) for none.
    #[serde(default = "one_u32", skip_serializing_if = "is_one_u32")]
    pub pp_degree: u32,
    /// Expert-parallel degree: GPUs that split a mixture of experts' routed experts,
    /// each running attention data-parallel on its own share of the sequences and
    /// holding the dense weights whole; a replica then has `ep_degree` GPUs (TP and PP
    /// 1). 1 (older plans) for none.
    #[serde(default = "one_u32", skip_serializing_if = "is_one_u32")]
    pub ep_degree: u32,
    /// GPUs of one node: those that share the GPU-to-GPU link (the NVLink or Infinity
    /// Fabric domain). A replica of more GPUs spans nodes, and whatever crosses a node
    /// boundary rides the scale-out network. 8 in older plans.
    #[serde(default = "eight_u32", skip_serializing_if = "is_eight_u32")]
    pub gpus_per_node: u32,
    /// Scale-out bandwidth of one GPU in one direction (its InfiniBand or RoCE NIC): the
    /// link of pipeline sends and all-reduces that cross nodes. 0 when unknown: such
    /// traffic has no bandwidth term [bytes/s].
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub scaleout_bytes_per_s: f64,
    /// Fixed latency of one send or all-reduce across nodes [s]; 0 when unknown.
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub scaleout_latency_s: f64,
    /// Extra fixed per-step communication time when `tp_degree > 1`, on top of the
    /// interconnect-derived all-reduce time [s].
    pub tp_comm_overhead_s: f64,
    /// Price of one GPU-hour [USD].
    pub gpu_hour_usd: f64,
    /// The published offer `gpu_hour_usd` was taken from (`crate::prices`), or empty for
    /// a price of the plan's own: the preset's typical price or one typed in. Typing a
    /// price clears it; a change of GPU moves it to the same provider's offer on the same
    /// term for the new GPU, or clears it when there is none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub price_offer: String,
    /// GPU-to-GPU bandwidth of one GPU in one direction (NVLink, Infinity Fabric or PCIe);
    /// sets the bandwidth term of the tensor-parallel all-reduces. 0 when unknown: no
    /// bandwidth term (older plans and links decode to 0 and keep their numbers) [bytes/s].
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub interconnect_bytes_per_s: f64,
    /// Fixed latency of one all-reduce across the replica's GPUs [s]; 0 in older plans.
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub allreduce_latency_s: f64,
    /// Scheduling time per sequence in a step, on top of `step_overhead_s`: the engine's
    /// bookkeeping that grows with the batch. 0 in the articles' model and in older
    /// plans [s/sequence].
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub seq_overhead_s: f64,
    /// Extra fixed time of a step that computes prompt tokens, on top of
    /// `step_overhead_s`: engines replay captured CUDA graphs for decode-only batches and
    /// launch a mixed batch's kernels one by one. 0 in the articles' model and in older
    /// plans [s].
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub prefill_overhead_s: f64,
    /// Share of the memory bandwidth the attention kernels reach reading the KV cache,
    /// relative to the weight reads; 1 (the articles' model, and older plans) streams
    /// KV like weights [0..].
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub kv_read_efficiency: f64,
}

/// How one replica (or a pool's instance: `unit`) of `model` spreads over GPUs at
/// `[tp, pp, ep]`: at most [`MAX_GPUS_PER_REPLICA`] of them, a layer or more per
/// pipeline stage, and expert parallelism on its own, over a mixture of experts with an
/// expert or more a GPU. The error names `fields`' pipeline or expert-parallel path.
pub(crate) fn check_layout(
    model: &ModelSpec,
    [tp, pp, ep]: [u32; 3],
    [pp_field, ep_field]: [&'static str; 2],
    unit: &str,
) -> Result<(), PlanError> {
    if ep > 1 {
        if !model.is_moe() {
            return Err(err(
                ep_field,
                "splits a mixture of experts' routed experts over GPUs, and this model \
                 has none: use tensor or pipeline parallelism, or set the model's experts"
                    .into(),
            ));
        }
        if tp > 1 || pp > 1 {
            return Err(err(
                ep_field,
                format!(
                    "runs attention data-parallel, one GPU a rank, so it takes a \
                     tensor-parallel and a pipeline-parallel degree of 1 (now {} and {}): \
                     set both to 1, or expert parallelism to 1",
                    tp, pp
                ),
            ));
        }
        if ep > model.experts {
            return Err(err(
                ep_field,
                format!(
                    "is more GPUs than the model has routed experts ({}): each GPU holds \
                     an expert or more",
                    model.experts
                ),
            ));
        }
    }
    let gpus = tp.max(1) as u64 * pp.max(1) as u64;
    if gpus > MAX_GPUS_PER_REPLICA as u64 {
        return Err(err(
            pp_field,
            format!(
                "of {} stages times the tensor-parallel degree of {} makes {} GPUs per \
                 {unit}, over the {MAX_GPUS_PER_REPLICA} (16 nodes of 8) one {unit} may \
                 span here",
                pp,
                tp,
                crate::format::thousands(gpus as i64)
            ),
        ));
    }
    if pp > model.layers.max(1) {
        return Err(err(
            pp_field,
            format!(
                "asks for {} stages, but the model has {} layers: each stage holds one \
                 layer at least",
                pp, model.layers
            ),
        ));
    }
    Ok(())
}

fn one() -> f64 {
    1.0
}

fn is_one(x: &f64) -> bool {
    *x == 1.0
}

pub(crate) fn one_u32() -> u32 {
    1
}

pub(crate) fn is_one_u32(x: &u32) -> bool {
    *x == 1
}

fn eight_u32() -> u32 {
    DEFAULT_GPUS_PER_NODE
}

fn is_eight_u32(x: &u32) -> bool {
    *x == DEFAULT_GPUS_PER_NODE
}

/// GPUs of one node when a plan does not say: an HGX, DGX or MI300X platform's eight.
pub const DEFAULT_GPUS_PER_NODE: u32 = 8;

/// Most pipeline stages a replica may have.
pub const MAX_PP_DEGREE: u32 = 16;

/// Most GPUs one replica may span (`tp_degree × pp_degree`, or `ep_degree`).
pub const MAX_GPUS_PER_REPLICA: u32 = 128;

fn is_zero_f64(x: &f64) -> bool {
    *x == 0.0
}

/// Fixed part of the per-GPU runtime reserve: CUDA context, NCCL and cuBLAS workspaces,
/// captured CUDA graphs [bytes] (1 GiB).
pub const RESERVE_FIXED_BYTES: f64 = 1024.0 * 1024.0 * 1024.0;

/// Share of each GPU's memory held back for the activation peak of a forward pass [0..1].
pub const RESERVE_SHARE: f64 = 0.02;

impl HardwareSpec {
    /// Memory of one GPU held back from the KV cache for the runtime:
    /// `RESERVE_FIXED_BYTES + RESERVE_SHARE × memory` [bytes]. A stated assumption that
    /// stands for what vLLM profiles before sizing its cache (see `fleet`).
    pub fn runtime_reserve_bytes(&self) -> f64 {
        RESERVE_FIXED_BYTES + RESERVE_SHARE * self.memory_bytes
    }

    /// GPUs of one replica: `tp_degree × pp_degree × ep_degree` (each at least 1).
    pub fn gpus_per_replica(&self) -> u32 {
        self.tp_degree
            .max(1)
            .saturating_mul(self.pp_degree.max(1))
            .saturating_mul(self.ep_degree.max(1))
    }

    /// Nodes one replica spans: its GPUs over the GPUs of a node, rounded up.
    pub fn nodes_per_replica(&self) -> u32 {
        self.gpus_per_replica().div_ceil(self.gpus_per_node.max(1))
    }

    /// The node of the replica's GPU `gpu`: stages fill the nodes in order, `tp_degree`
    /// GPUs each.
    fn node_of(&self, gpu: u32) -> u32 {
        gpu / self.gpus_per_node.max(1)
    }

    /// Whether the boundary before pipeline stage `stage` (1 to `pp_degree − 1`) crosses
    /// nodes: each GPU of the stage before sends to its counterpart in this one, and the
    /// boundary crosses when any such pair sits in different nodes.
    pub fn stage_boundary_crosses_nodes(&self, stage: u32) -> bool {
        let tp = self.tp_degree.max(1);
        stage > 0
            && (0..tp).any(|i| {
                let from = (stage - 1).saturating_mul(tp).saturating_add(i);
                self.node_of(from) != self.node_of(from.saturating_add(tp))
            })
    }

    /// Whether a tensor-parallel group spans nodes: wider than a node, or a stage that
    /// straddles two (a degree that does not divide the node's GPUs). Its all-reduces
    /// then ride the scale-out network.
    pub fn tp_crosses_nodes(&self) -> bool {
        let tp = self.tp_degree.max(1);
        (0..self.pp_degree.max(1)).any(|s| {
            let first = s.saturating_mul(tp);
            self.node_of(first) != self.node_of(first.saturating_add(tp - 1))
        })
    }
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
            pp_degree: 1,
            ep_degree: 1,
            gpus_per_node: DEFAULT_GPUS_PER_NODE,
            tp_comm_overhead_s: 0.0,
            gpu_hour_usd: 2.5,
            price_offer: String::new(),
            interconnect_bytes_per_s: 450e9,
            allreduce_latency_s: 5e-6,
            scaleout_bytes_per_s: 50e9,
            scaleout_latency_s: 10e-6,
            seq_overhead_s: 0.0,
            prefill_overhead_s: 0.0,
            kv_read_efficiency: 1.0,
        }
    }
}

/// Most closed-loop clients (or `traffic.max_concurrency`) a plan may ask for.
pub const MAX_CONCURRENCY: u32 = 16_384;

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
    /// Client-side cap on requests in flight, like `vllm bench serve --max-concurrency`;
    /// None = unbounded. Applies to open-loop arrivals (a closed loop's cap is its
    /// `concurrency`); the goodput search and the knob sweep ignore it [requests].
    /// Left out of the JSON when unset, so plans and share links without it are unchanged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_concurrency: Option<u32>,
    /// How prompts share prefixes that a prefix cache holds once in KV memory: shared
    /// prefixes picked by popularity, multi-turn sessions resending their conversation.
    /// With it, the cache's hits follow from the workload and the cache's memory, and
    /// `prefix_tokens` and `prefix_hit_rate` (the typed shortcut) must be 0. Left out of
    /// the JSON when absent, so plans and links without it are unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sharing: Option<PrefixModel>,
}

impl Default for TrafficSpec {
    /// The article's traffic: Poisson, prompts median 800 (sigma 0.8, 16..8000), outputs median 200 (sigma 0.8, 1..1024).
    fn default() -> Self {
        TrafficSpec {
            peak_rate_rps: 30.0,
            arrival: Arrival::Poisson,
            prompt: LengthSpec::ARTICLE_PROMPT,
            output: LengthSpec::ARTICLE_OUTPUT,
            prefix_tokens: 0,
            prefix_hit_rate: 0.0,
            trace: Vec::new(),
            max_concurrency: None,
            sharing: None,
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
    /// Share of requests that must meet the objectives [0..1]: every objective at once
    /// ([`SloMode::Joint`]) or each on its own ([`SloMode::Marginal`]).
    pub attainment_target: f64,
    /// How the objectives combine: per request (the articles' joint attainment) or as
    /// marginal percentiles ("p99 TTFT ≤ 1 s and p99 TPOT ≤ 60 ms").
    #[serde(skip_serializing_if = "SloMode::is_joint")]
    pub mode: SloMode,
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
            mode: SloMode::Joint,
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
    /// Time each request spends outside the engine's steps: the HTTP server, tokenising
    /// the prompt, detokenising the first token. Added to TTFT and E2E; 0 in the
    /// articles' model and in older plans [s].
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub frontend_s: f64,
    /// The KV cache's size as the engine reports it at start (vLLM logs "GPU KV cache
    /// size: N tokens"), instead of the estimate from GPU memory, weights and the runtime
    /// reserve; None: the estimate [tokens].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_cache_tokens: Option<u32>,
}

impl EngineSpec {
    /// Drafts `k` tokens a step, each accepted with probability `a`; `k` = 0 turns
    /// speculation off and leaves the acceptance as it is. The inverse of
    /// `comparison::speculation_of`.
    pub fn set_speculation(&mut self, (k, a): (u32, f64)) {
        self.spec_draft_tokens = k;
        if k > 0 {
            self.spec_acceptance = a;
        }
    }
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
            frontend_s: 0.0,
            kv_cache_tokens: None,
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
    /// Requests dropped from the front, in generated order (with a client gate the
    /// first requests generated, not the first to reach the server).
    pub warmup_requests: u32,
    /// Independent replications (seeds) per rate.
    pub replications: u32,
    /// Base seed; replication `i` uses a seed derived from it.
    pub seed: u64,
    /// `max_num_seqs` values the knob sweep tries.
    pub sweep_max_num_seqs: Vec<u32>,
    /// `max_num_batched_tokens` values the knob sweep tries; 0 means chunked prefill off.
    pub sweep_batched_tokens: Vec<u32>,
    /// Plan at the knob sweep's best cell: the numbers use the engine settings the sweep
    /// finds best rather than the plan's own (the page applies them when a sweep of the
    /// plan finishes; `goodput plan` runs the sweep first and plans at its best). Left
    /// out of the JSON when off, so older plans and links read (and encode) as before.
    #[serde(skip_serializing_if = "is_false")]
    pub plan_at_best: bool,
}

fn is_false(x: &bool) -> bool {
    !*x
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
            plan_at_best: false,
        }
    }
}

/// Everything the planner needs; see the module docs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Plan {
    /// A title for the plan, shown in the finance view and exports.
    pub name: String,
    /// A note for readers (what the plan is for, what was assumed), shown under the
    /// name; empty for none. Left out of the JSON when empty, so a plan without one
    /// writes (and links) exactly as before notes existed; older links read as empty.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub note: String,
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
    /// Step-model constants fitted to measured benchmark results, when the plan was
    /// calibrated (see `calibrate`); applied by `roofline::StepModelOf::from_plan`
    /// while `enabled`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calibration: Option<Calibration>,
    /// The last GPU × layout comparison run for this plan (see `shootout`), so a shared link
    /// shows it; [`comparison::ShootoutRecord::is_fresh`] tells whether it still applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shootout: Option<comparison::ShootoutRecord>,
    /// Traffic over a day: the hourly rate profile and the autoscaler (see
    /// `schedule`); absent in plans and links made before it existed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schedule: Option<schedule::ScheduleSpec>,
    /// A disaggregated deployment: prefill and decode pools with KV transfer (see
    /// `disagg`); `None` for an aggregated plan, and in plans and links made
    /// before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disagg: Option<disagg::DisaggSpec>,
    /// Replicas simulated together behind a router, so that where a request lands decides
    /// whether its prefix is cached (see `goodput_engine::fleet`); `None` simulates one
    /// replica, as plans and links made before it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing: Option<RoutingSpec>,
    /// Traffic classes mixed on the plan's replicas (see `classes`): each with its share
    /// of the requests, lengths, objectives and priority. Empty for a plan of one class,
    /// which is how plans and links made before classes existed read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<classes::TrafficClass>,
}

/// Most replicas a plan simulates together behind its router.
pub const MAX_ROUTED_REPLICAS: u32 = 8;

/// Replicas simulated together behind a router. The traffic, the request count and the
/// warm-up stay each replica's: the fleet's workload has `replicas` times each (and
/// times the sessions), and the goodput found is per replica.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RoutingSpec {
    /// Replicas simulated together (2 to [`MAX_ROUTED_REPLICAS`]).
    pub replicas: u32,
    /// How requests are spread over them.
    pub router: FleetRouter,
}

impl Default for RoutingSpec {
    fn default() -> Self {
        RoutingSpec {
            replicas: 2,
            router: FleetRouter::RoundRobin,
        }
    }
}

/// Why a plan is invalid: the field (as a dotted path, e.g. `engine.max_num_batched_tokens`)
/// and what it must be. Fix the named field to a value inside the stated range.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanError {
    /// Dotted path of the offending field.
    pub field: &'static str,
    /// What is wrong and the allowed range, in plain words.
    pub message: String,
    /// The allowed range, when the value is outside it: for a message in the units the
    /// value is entered in (`None` for other problems).
    pub limits: Option<Limits>,
}

/// The range a plan value must be in, and the value found [plan units].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Lowest allowed value.
    pub lo: f64,
    /// Highest allowed value.
    pub hi: f64,
    /// Whether `lo` itself is excluded (the value must be above it).
    pub lo_open: bool,
    /// Whether the value must be a whole number.
    pub whole: bool,
    /// The value that is out of range.
    pub got: f64,
}

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for PlanError {}

// Every limit below is declared here once and used by validation, the simulator, the
// sweep, the parsers and the CLI alike, so what a plan accepts is what runs.

/// Longest plan name [characters].
pub const MAX_NAME_CHARS: usize = 200;
/// Longest plan note [characters].
pub const MAX_NOTE_CHARS: usize = 1000;

/// Most requests one simulation point holds (`run.num_requests`, and any
/// `sim::SimConfig`).
pub const MAX_NUM_REQUESTS: u32 = 200_000;
/// Most replications (seeds) per rate (`run.replications`, a
/// `sim::replicate` call, the CLI's `--replications`).
pub const MAX_REPLICATIONS: u32 = 1_000;
/// The prompt and output laws of requests replayed from `rows`: each row's own lengths,
/// capped at the longest.
pub fn replayed_lengths(rows: &[TraceRow]) -> (LengthSpec, LengthSpec) {
    let law = |f: fn(&TraceRow) -> u32| LengthSpec {
        dist: LengthDist::Trace,
        min: 1,
        max: rows.iter().map(f).max().unwrap_or(1).clamp(1, MAX_TOKENS),
    };
    (law(|r| r.prompt_tokens), law(|r| r.output_tokens))
}

/// Most rows of a replayed trace.
pub const MAX_TRACE_ROWS: usize = 100_000;
/// Most rows of a measured sweep (`planning.measured_sweep`, and pasted sweep text).
pub const MAX_SWEEP_ROWS: usize = 1_000;
/// Most values on each knob-sweep axis: a plan's `run.sweep_max_num_seqs` and
/// `run.sweep_batched_tokens` lists, and the sweep's grid (a 12 × 12 grid at most).
pub const MAX_SWEEP_VALUES: usize = 12;
/// Largest `max_num_seqs`, for the engine and on the sweep axis.
pub const MAX_NUM_SEQS: u32 = 16_384;
/// Most speculative draft tokens a step (`engine.spec_draft_tokens`; a measured run's
/// drafts are simulated at most this long).
pub const MAX_SPEC_DRAFT_TOKENS: u32 = 16;
/// Largest token budget (`max_num_batched_tokens`), for the engine and on the sweep axis
/// [tokens].
pub const MAX_BATCHED_TOKENS: u32 = 1 << 20;
/// Longest prompt or output length a plan may ask for [tokens].
pub const MAX_TOKENS: u32 = 1_000_000;
/// Most measured points (and files) a calibration may carry.
pub const MAX_CALIBRATION_POINTS: usize = 64;
/// Longest file, tool, model or engine name a calibration may carry [characters].
pub const MAX_LABEL_CHARS: usize = 200;
/// Smallest fitted efficiency (share of a datasheet figure) a plan accepts.
pub const MIN_EFFICIENCY: f64 = 0.01;
/// Largest fitted efficiency a plan accepts: above 1 means the plan's figure was low.
pub const MAX_EFFICIENCY: f64 = 4.0;
/// Most instances of one disaggregated pool (`disagg.prefill.instances`,
/// `disagg.decode.instances`, and the xPyD sizing's search range).
pub const MAX_DISAGG_INSTANCES: u32 = 32;
/// Most xPyD points one disaggregated sizing simulates (each with every replication);
/// with `search::MAX_WORK_REQUESTS` it bounds the sizing's work.
pub const MAX_DISAGG_POINTS: usize = 48;
/// Slowest KV link a disaggregated plan accepts (1 MB/s) [bytes/s].
pub const MIN_KV_LINK_BYTES_PER_S: f64 = 1e6;
/// Fastest KV link a disaggregated plan accepts (10 TB/s) [bytes/s].
pub const MAX_KV_LINK_BYTES_PER_S: f64 = 1e13;
/// Longest fixed KV-transfer latency a disaggregated plan accepts [s].
pub const MAX_KV_LINK_LATENCY_S: f64 = 1.0;

fn err(field: &'static str, message: String) -> PlanError {
    PlanError {
        field,
        message,
        limits: None,
    }
}

/// A range error: the message, with the range kept for the app's own wording.
fn range_err(field: &'static str, message: String, limits: Limits) -> PlanError {
    PlanError {
        limits: Some(limits),
        ..err(field, message)
    }
}

/// A bound in an error message: plain for everyday magnitudes, scientific otherwise.
fn num(x: f64) -> String {
    if x != 0.0 && !(1e-3..1e6).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// A unit suffix for an error message (`""` for none).
fn unit_suffix(unit: &str) -> String {
    if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
    }
}

/// `x` must be finite and inside `[lo, hi]`.
fn in_range(field: &'static str, x: f64, lo: f64, hi: f64, unit: &str) -> Result<(), PlanError> {
    if x.is_finite() && x >= lo && x <= hi {
        Ok(())
    } else {
        let limits = Limits {
            lo,
            hi,
            lo_open: false,
            whole: false,
            got: x,
        };
        let r = fields::Range {
            lo,
            hi,
            lo_open: false,
        };
        Err(range_err(
            field,
            fields::range_message(&r, false, unit, x, 1.0),
            limits,
        ))
    }
}

/// `x` must be finite, above 0 and at most `hi`.
fn positive(field: &'static str, x: f64, hi: f64, unit: &str) -> Result<(), PlanError> {
    if x.is_finite() && x > 0.0 && x <= hi {
        Ok(())
    } else {
        let limits = Limits {
            lo: 0.0,
            hi,
            lo_open: true,
            whole: false,
            got: x,
        };
        let r = fields::Range {
            lo: 0.0,
            hi,
            lo_open: true,
        };
        Err(range_err(
            field,
            fields::range_message(&r, false, unit, x, 1.0),
            limits,
        ))
    }
}

/// `x` must be a whole number in `lo..=hi`.
fn count(field: &'static str, x: u64, lo: u64, hi: u64) -> Result<(), PlanError> {
    if (lo..=hi).contains(&x) {
        Ok(())
    } else {
        let limits = Limits {
            lo: lo as f64,
            hi: hi as f64,
            lo_open: false,
            whole: true,
            got: x as f64,
        };
        let r = fields::Range {
            lo: lo as f64,
            hi: hi as f64,
            lo_open: false,
        };
        Err(range_err(
            field,
            fields::range_message(&r, true, "", x as f64, 1.0),
            limits,
        ))
    }
}

/// A length's min against its max (each is checked on its own by its registry row);
/// the error names `min_path`.
fn validate_length(spec: &LengthSpec, min_path: &'static str) -> Result<(), PlanError> {
    if spec.min > spec.max {
        return Err(err(
            min_path,
            format!("must be at most the max ({}), got {}", spec.max, spec.min),
        ));
    }
    Ok(())
}

impl Plan {
    /// The plan without what no number depends on: its name, its note and the GPU
    /// comparison stored in it.
    pub fn without_labels(&self) -> Plan {
        Plan {
            name: String::new(),
            note: String::new(),
            shootout: None,
            ..self.clone()
        }
    }

    /// What the goodput search and the knob sweep depend on: [`Plan::without_labels`],
    /// less the price and the fleet sizing (utilisation, redundancy, hours per month:
    /// they only turn goodput into replicas and cost), the day schedule and the
    /// disaggregation section, none of which their simulations read, and the switch to
    /// plan at the sweep's best (which only decides which knobs the plan holds). Two
    /// plans with equal keys get the same search.
    pub fn search_key(&self) -> Plan {
        let mut p = Plan {
            schedule: None,
            disagg: None,
            ..self.without_labels()
        };
        p.hardware.gpu_hour_usd = 0.0;
        p.hardware.price_offer.clear();
        p.planning.utilization = 0.0;
        p.planning.redundancy = 0;
        p.planning.hours_per_month = 0.0;
        p.run.plan_at_best = false;
        p
    }

    /// What the knob sweep depends on: [`Plan::search_key`] with the engine knobs the
    /// sweep sets in every cell (`max_num_seqs`, the token budget, chunked prefill) fixed.
    /// Applying a cell's settings to the plan leaves its sweep key, so it never asks for
    /// the sweep again.
    pub fn sweep_key(&self) -> Plan {
        let mut p = self.search_key();
        p.engine.max_num_seqs = 1;
        p.engine.max_num_batched_tokens = 1;
        p.engine.chunked_prefill = true;
        p
    }

    /// Checks every field against its bounds; the error names the first offending field.
    pub fn validate(&self) -> Result<(), PlanError> {
        self.validate_but_memory_fit()?;
        self.validate_kv_capacity()
    }

    /// Every check of [`Plan::validate`] but the last: whether the weights leave room
    /// for a KV cache on the plan's own GPU and TP degree.
    fn validate_but_memory_fit(&self) -> Result<(), PlanError> {
        if self.note.chars().count() > MAX_NOTE_CHARS {
            return Err(err("note", format!("at most {MAX_NOTE_CHARS} characters")));
        }
        self.validate_fields()?;
        self.validate_layout()?;
        self.validate_model()?;
        self.validate_traffic()?;
        self.validate_classes()?;
        self.validate_planning()?;
        self.validate_run()?;
        self.validate_calibration()?;
        if let Some(s) = &self.shootout {
            s.validate()?;
        }
        self.validate_schedule()?;
        if let Some(d) = &self.disagg {
            d.validate(self)?;
        }
        price::validate(self)?;
        self.validate_routing()
    }

    /// Requests one simulation of this plan runs: each replica's, times the replicas
    /// simulated together.
    pub fn requests_per_run(&self) -> u32 {
        self.run
            .num_requests
            .saturating_mul(self.fleet().replicas.max(1))
    }

    /// The fleet a simulation of this plan spreads its requests over.
    pub fn fleet(&self) -> Fleet {
        self.routing.map_or(Fleet::ONE, |r| Fleet {
            replicas: r.replicas,
            router: r.router,
        })
    }

    /// Every number the plan holds, against its registry row's range
    /// ([`fields::Field::held`], [`fields::Field::check`]).
    fn validate_fields(&self) -> Result<(), PlanError> {
        fields::FIELDS.iter().try_for_each(|f| match f.held(self) {
            Some(x) => f.check(x),
            None => Ok(()),
        })
    }

    /// How one replica spreads over GPUs ([`check_layout`]).
    fn validate_layout(&self) -> Result<(), PlanError> {
        let h = &self.hardware;
        check_layout(
            &self.model,
            [h.tp_degree, h.pp_degree, h.ep_degree],
            ["hardware.pp_degree", "hardware.ep_degree"],
            "replica",
        )
    }

    fn validate_routing(&self) -> Result<(), PlanError> {
        let Some(r) = &self.routing else {
            return Ok(());
        };
        let t = &self.traffic;
        if matches!(t.arrival, Arrival::Closed { .. }) || t.max_concurrency.is_some() {
            return Err(err(
                "routing.replicas",
                "need open-loop arrivals: a closed loop's clients (or a client cap) would \
                 be shared by every replica; simulate one replica, or use Poisson, gamma \
                 or constant arrivals"
                    .into(),
            ));
        }
        let total = self.run.num_requests as u64 * r.replicas as u64;
        if total > MAX_NUM_REQUESTS as u64 {
            return Err(err(
                "routing.replicas",
                format!(
                    "times the requests per run ({}) make {} requests, over the {} one \
                     run may simulate; use fewer replicas or requests",
                    crate::format::thousands(self.run.num_requests as i64),
                    crate::format::thousands(total as i64),
                    crate::format::thousands(MAX_NUM_REQUESTS as i64),
                ),
            ));
        }
        Ok(())
    }

    /// Whether the plan is refused only because its weights leave no room for a KV
    /// cache on its own GPU and TP degree: a plan a GPU comparison can still run, since
    /// it puts the model on other GPUs and says which ones it fits.
    pub fn refused_only_for_memory(&self) -> bool {
        self.validate_but_memory_fit().is_ok() && self.validate_kv_capacity().is_err()
    }

    fn validate_schedule(&self) -> Result<(), PlanError> {
        let Some(s) = &self.schedule else {
            return Ok(());
        };
        // The field names the profile; the message is the spec error's own words.
        let words = |e: schedule::ScheduleSpecError| match e {
            schedule::ScheduleSpecError::Profile(m) => m,
            option => option.to_string(),
        };
        s.profile
            .validate()
            .map_err(|e| err("schedule.profile", words(e)))?;
        s.options
            .validate()
            .map_err(|e| err("schedule.options", words(e)))
    }

    fn validate_calibration(&self) -> Result<(), PlanError> {
        let Some(c) = &self.calibration else {
            return Ok(());
        };
        for (field, f) in [
            ("calibration.bandwidth_efficiency", c.bandwidth_efficiency),
            ("calibration.compute_efficiency", c.compute_efficiency),
        ] {
            in_range(field, f.value, MIN_EFFICIENCY, MAX_EFFICIENCY, "")?;
            in_range(field, f.sd, 0.0, MAX_EFFICIENCY, "")?;
        }
        in_range(
            "calibration.step_overhead_s",
            c.step_overhead_s.value,
            0.0,
            1.0,
            "s",
        )?;
        in_range(
            "calibration.step_overhead_s",
            c.step_overhead_s.sd,
            0.0,
            1.0,
            "s",
        )?;
        if c.points.len() > MAX_CALIBRATION_POINTS {
            return Err(err(
                "calibration.points",
                format!(
                    "must have at most {MAX_CALIBRATION_POINTS} measured points, got {}",
                    c.points.len()
                ),
            ));
        }
        if c.source.files.len() > MAX_CALIBRATION_POINTS {
            return Err(err(
                "calibration.source.files",
                format!(
                    "must name at most {MAX_CALIBRATION_POINTS} files, got {}",
                    c.source.files.len()
                ),
            ));
        }
        let texts = c.source.files.iter().chain([
            &c.source.tool,
            &c.source.model,
            &c.source.engine,
            &c.source.fitted_model,
            &c.source.fitted_gpu,
        ]);
        if texts
            .into_iter()
            .any(|t| t.chars().count() > MAX_LABEL_CHARS)
        {
            return Err(err(
                "calibration.source",
                format!("file, tool, model and engine names must be at most {MAX_LABEL_CHARS} characters"),
            ));
        }
        count(
            "calibration.source.fitted_tp_degree",
            c.source.fitted_tp_degree as u64,
            0,
            64,
        )?;
        if let Some(s) = &c.source.spec {
            let consistent = s.accepted_tokens <= s.draft_tokens
                && if s.drafts == 0 {
                    s.draft_tokens == 0
                } else {
                    s.draft_tokens >= s.drafts
                };
            if !consistent {
                return Err(err(
                    "calibration.source.spec",
                    format!(
                        "{} drafts, {} drafted and {} accepted tokens do not add up: a draft \
                         has at least one token, and no more are accepted than drafted",
                        s.drafts, s.draft_tokens, s.accepted_tokens
                    ),
                ));
            }
        }
        let e = &c.error;
        for m in [Some(e.in_sample), e.held_out, Some(e.uncalibrated)]
            .into_iter()
            .flatten()
        {
            for x in [m.ttft, m.tpot, m.e2e]
                .into_iter()
                .flatten()
                .chain([m.overall])
            {
                in_range("calibration.error", x, 0.0, 1e6, "")?;
            }
        }
        for p in &c.points {
            match p.load {
                MeasuredLoad::Rate { rate_rps, cv } => {
                    positive("calibration.points.rate_rps", rate_rps, 1e6, "requests/s")?;
                    in_range("calibration.points.cv", cv, 0.0, 100.0, "")?;
                }
                MeasuredLoad::Concurrency { concurrency } => count(
                    "calibration.points.concurrency",
                    concurrency as u64,
                    1,
                    MAX_CONCURRENCY as u64,
                )?,
            }
            in_range(
                "calibration.points.achieved_rps",
                p.achieved_rps,
                0.0,
                1e6,
                "requests/s",
            )?;
            for x in [
                p.ttft_mean_s,
                p.ttft_p50_s,
                p.ttft_p99_s,
                p.tpot_mean_s,
                p.tpot_p50_s,
                p.tpot_p99_s,
                p.e2e_mean_s,
                p.e2e_p50_s,
                p.e2e_p99_s,
            ]
            .into_iter()
            .flatten()
            {
                in_range("calibration.points.latency", x, 0.0, 86_400.0, "s")?;
            }
        }
        Ok(())
    }

    fn validate_model(&self) -> Result<(), PlanError> {
        let m = &self.model;
        if m.active_params > m.params {
            return Err(err(
                "model.active_params",
                format!(
                    "must be a number in (0, params = {:e}] parameters, got {}",
                    m.params, m.active_params
                ),
            ));
        }
        if m.attention == AttentionKind::MultiHeadLatent {
            count("model.kv_lora_rank", m.kv_lora_rank as u64, 1, 65_536)?;
        } else {
            count("model.kv_lora_rank", m.kv_lora_rank as u64, 0, 65_536)?;
        }
        count("model.qk_rope_head_dim", m.qk_rope_head_dim as u64, 0, 4096)?;
        count("model.hidden_size", m.hidden_size as u64, 0, 1 << 20)?;
        count("model.attention_heads", m.attention_heads as u64, 0, 65_536)?;
        self.validate_experts()?;
        if m.sliding_window_layers > m.layers {
            return Err(err(
                "model.sliding_window_layers",
                format!(
                    "must be in 0..=layers ({}) layers, got {}",
                    m.layers, m.sliding_window_layers
                ),
            ));
        }
        if m.sliding_window_layers > 0 {
            count(
                "model.sliding_window_tokens",
                m.sliding_window_tokens as u64,
                1,
                MAX_TOKENS as u64,
            )?;
        } else {
            count(
                "model.sliding_window_tokens",
                m.sliding_window_tokens as u64,
                0,
                MAX_TOKENS as u64,
            )?;
        }
        Ok(())
    }

    fn validate_experts(&self) -> Result<(), PlanError> {
        let m = &self.model;
        count("model.experts", m.experts as u64, 0, 65_536)?;
        if m.expert_routing_skew != 1.0 && !m.is_moe() {
            return Err(err(
                "model.expert_routing_skew",
                format!(
                    "only a mixture of experts routes tokens; a dense model takes 1 (uniform), got {}",
                    m.expert_routing_skew
                ),
            ));
        }
        if m.experts == 0 {
            count("model.experts_per_token", m.experts_per_token as u64, 0, 0)?;
            if m.expert_params != 0.0 {
                return Err(err(
                    "model.expert_params",
                    format!(
                        "must be 0 for a dense model (0 experts), got {}",
                        m.expert_params
                    ),
                ));
            }
            return Ok(());
        }
        count(
            "model.experts_per_token",
            m.experts_per_token as u64,
            1,
            m.experts as u64,
        )?;
        if !(m.expert_params > 0.0 && m.expert_params < m.params) {
            return Err(err(
                "model.expert_params",
                format!(
                    "must be a number in (0, params = {:e}) parameters for a mixture of experts, got {}",
                    m.params, m.expert_params
                ),
            ));
        }
        Ok(())
    }

    fn validate_sharing(&self, s: &PrefixModel) -> Result<(), PlanError> {
        let t = &self.traffic;
        if t.prefix_tokens > 0 || t.prefix_hit_rate > 0.0 {
            return Err(err(
                "traffic.prefix_hit_rate",
                "must be 0 (with the prefix tokens) when the prompts' prefix structure is \
                 given: the cache's hits then follow from the workload; use one or the other"
                    .into(),
            ));
        }
        if t.arrival == Arrival::Trace
            || t.prompt.dist == LengthDist::Trace
            || t.output.dist == LengthDist::Trace
        {
            return Err(err(
                "traffic.sharing",
                "cannot be combined with a replayed trace's lengths or arrivals: a trace \
                 row carries no prefix structure"
                    .into(),
            ));
        }
        // The longest prompt a session can send: the shared prefix, the document, and
        // every turn's longest message and reply.
        let longest = s.group_tokens as u64
            + s.document_tokens as u64
            + s.turns.max(1) as u64 * (t.prompt.max as u64 + t.output.max as u64);
        if s.sessions > 0 && longest > MAX_TOKENS as u64 {
            return Err(err(
                "traffic.sharing.turns",
                format!(
                    "make the sessions' prompts too long: {} turns of up to {} + {} tokens \
                     after {} tokens of prefix and document reach {} tokens, over the \
                     {} tokens a prompt may have; use fewer turns or shorter lengths",
                    s.turns,
                    crate::format::thousands(t.prompt.max as i64),
                    crate::format::thousands(t.output.max as i64),
                    crate::format::thousands((s.group_tokens + s.document_tokens) as i64),
                    crate::format::thousands(longest as i64),
                    crate::format::thousands(MAX_TOKENS as i64)
                ),
            ));
        }
        Ok(())
    }

    fn validate_traffic(&self) -> Result<(), PlanError> {
        let t = &self.traffic;
        validate_length(&t.prompt, "traffic.prompt.min")?;
        validate_length(&t.output, "traffic.output.min")?;
        if let Some(s) = &t.sharing {
            self.validate_sharing(s)?;
        }
        if t.trace.len() > MAX_TRACE_ROWS {
            return Err(err(
                "traffic.trace",
                format!(
                    "must have at most {MAX_TRACE_ROWS} rows, got {}",
                    t.trace.len()
                ),
            ));
        }
        let uses_trace = t.arrival == Arrival::Trace
            || t.prompt.dist == LengthDist::Trace
            || t.output.dist == LengthDist::Trace;
        if uses_trace && t.trace.is_empty() {
            return Err(err(
                "traffic.trace",
                format!(
                    "must have 1..={MAX_TRACE_ROWS} rows when arrivals or lengths come from the trace, got 0"
                ),
            ));
        }
        for (i, r) in t.trace.iter().enumerate() {
            if !(r.arrival_s.is_finite() && (0.0..=1e9).contains(&r.arrival_s)) {
                return Err(err(
                    "traffic.trace.arrival_s",
                    format!(
                        "row {i}: must be a number in [0, 1e9] s, got {}",
                        r.arrival_s
                    ),
                ));
            }
            if r.prompt_tokens > MAX_TOKENS || r.output_tokens > MAX_TOKENS {
                return Err(err(
                    "traffic.trace.tokens",
                    format!(
                        "row {i}: prompt and output lengths must be in 0..={MAX_TOKENS} tokens"
                    ),
                ));
            }
            let most = r.prompt_tokens.div_ceil(TRACE_BLOCK_TOKENS) as usize;
            if r.blocks.len() > most {
                return Err(err(
                    "traffic.trace.blocks",
                    format!(
                        "row {i}: {} block ids for a prompt of {} tokens; blocks hold {} \
                         tokens, so at most {most} fit",
                        r.blocks.len(),
                        crate::format::thousands(r.prompt_tokens as i64),
                        TRACE_BLOCK_TOKENS
                    ),
                ));
            }
        }
        if t.trace.iter().any(|r| !r.blocks.is_empty()) {
            if t.prompt.dist != LengthDist::Trace {
                return Err(err(
                    "traffic.prompt.dist",
                    "must be 'trace' when the trace's rows name their blocks: the block \
                     ids describe the trace's own prompts"
                        .into(),
                ));
            }
            if t.prefix_tokens > 0 || t.prefix_hit_rate > 0.0 {
                return Err(err(
                    "traffic.prefix_hit_rate",
                    "must be 0 (with the prefix tokens) when the trace's rows name their \
                     blocks: the cache's hits then follow from the blocks; use one or the other"
                        .into(),
                ));
            }
        }
        Ok(())
    }

    fn validate_planning(&self) -> Result<(), PlanError> {
        let p = &self.planning;
        if p.measured_sweep.len() > MAX_SWEEP_ROWS {
            return Err(err(
                "planning.measured_sweep",
                format!(
                    "must have at most {MAX_SWEEP_ROWS} rows, got {}",
                    p.measured_sweep.len()
                ),
            ));
        }
        for r in &p.measured_sweep {
            positive(
                "planning.measured_sweep.rate_rps",
                r.rate_rps,
                1e6,
                "requests/s",
            )?;
            in_range(
                "planning.measured_sweep.attainment",
                r.attainment,
                0.0,
                1.0,
                "",
            )?;
        }
        Ok(())
    }

    fn validate_run(&self) -> Result<(), PlanError> {
        let r = &self.run;
        if r.warmup_requests >= r.num_requests {
            // A range that follows the requests per run, kept so the app words it.
            return Err(range_err(
                "run.warmup_requests",
                format!(
                    "must be in 0..={} (below num_requests = {}), got {}",
                    r.num_requests - 1,
                    r.num_requests,
                    r.warmup_requests
                ),
                Limits {
                    lo: 0.0,
                    hi: (r.num_requests - 1) as f64,
                    lo_open: false,
                    whole: true,
                    got: r.warmup_requests as f64,
                },
            ));
        }
        for (field, list) in [
            (
                fields::field("run.sweep_max_num_seqs"),
                &r.sweep_max_num_seqs,
            ),
            (
                fields::field("run.sweep_batched_tokens"),
                &r.sweep_batched_tokens,
            ),
        ] {
            if list.is_empty() || list.len() > MAX_SWEEP_VALUES {
                return Err(err(
                    field.path,
                    format!(
                        "must list 1..={MAX_SWEEP_VALUES} values, got {}",
                        list.len()
                    ),
                ));
            }
            for &v in list.iter() {
                field.check(v as f64)?;
            }
        }
        Ok(())
    }

    /// Mean context a decoding sequence holds [tokens]: mean prompt + half the mean output.
    pub fn mean_context_tokens(&self) -> f64 {
        use crate::lengths::{mean_length_tokens, LengthOf};
        let t = &self.traffic;
        let prompt = mean_length_tokens(&t.prompt, &t.trace, LengthOf::Prompt);
        let output = mean_length_tokens(&t.output, &t.trace, LengthOf::Output);
        prompt + output / 2.0
    }

    /// KV bytes per token of context the simulator and the roofline charge
    /// [bytes/token]: the model's average at the plan's mean context,
    /// `kv_bytes(c̄) / c̄` (see [`Plan::mean_context_tokens`]). Without sliding windows
    /// this is exactly [`ModelSpec::kv_bytes_per_token`]. With them, `kv_bytes` is
    /// concave in the context, so by Jensen's inequality charging every token at the mean
    /// context's rate never under-counts the bytes of a batch whose mean context is c̄.
    ///
    /// Multiplied by [`ModelSpec::kv_replication`]: tensor parallelism splits the KV
    /// heads over the GPUs, but a latent cache, or heads fewer than GPUs, is held in
    /// full (or in part) by every GPU, so the replica stores and reads it several times.
    pub fn kv_bytes_per_token_effective(&self) -> f64 {
        let r = self.model.kv_replication(self.hardware.tp_degree);
        if self.model.sliding_window_layers == 0 || self.model.kv_bytes_per_token_override.is_some()
        {
            return r * self.model.kv_bytes_per_token();
        }
        r * self.model.kv_bytes_per_token_at(self.mean_context_tokens())
    }

    /// Weight bytes one GPU of the replica holds: `W / (TP × PP)`; under expert
    /// parallelism, the dense part whole and `1/EP` of the routed experts [bytes].
    pub fn weight_bytes_per_gpu(&self) -> f64 {
        let h = &self.hardware;
        let w = self.model.weight_bytes();
        if h.ep_degree > 1 {
            let x = self.model.expert_weight_bytes();
            return (w - x) + x / h.ep_degree as f64;
        }
        w / h.gpus_per_replica() as f64
    }

    /// Weight bytes the whole replica holds: `W`, or, under expert parallelism, the
    /// dense part once a GPU and the experts once [bytes].
    pub fn weight_bytes_stored(&self) -> f64 {
        let h = &self.hardware;
        if h.ep_degree > 1 {
            return self.weight_bytes_per_gpu() * h.ep_degree as f64;
        }
        self.model.weight_bytes()
    }

    /// KV-cache capacity of one replica [tokens]:
    /// `(tp_degree × (memory × mem_utilization − runtime reserve) − weight bytes) / effective
    /// KV bytes per token`, vLLM's "GPU KV cache size". Zero or negative when the weights do
    /// not fit. `fleet::memory_fit` shows the same arithmetic per GPU.
    pub fn kv_capacity_tokens(&self) -> f64 {
        if let Some(t) = self.engine.kv_cache_tokens {
            return t as f64;
        }
        let h = &self.hardware;
        let g = h.gpus_per_replica() as f64;
        let room = g * (h.memory_bytes * h.mem_utilization - h.runtime_reserve_bytes());
        (room - self.weight_bytes_stored()) / self.kv_bytes_per_token_effective()
    }

    fn validate_kv_capacity(&self) -> Result<(), PlanError> {
        if self.engine.kv_policy == KvPolicy::None || self.kv_capacity_tokens() >= 1.0 {
            return Ok(());
        }
        let h = &self.hardware;
        let usable = h.gpus_per_replica() as f64
            * (h.memory_bytes * h.mem_utilization - h.runtime_reserve_bytes());
        let model = crate::presets::model(&self.model.preset)
            .map_or_else(|| "the model".to_string(), |m| m.name.to_string());
        let gpu = crate::presets::gpu(&self.hardware.preset)
            .map_or_else(|| "the GPU".to_string(), |g| g.name.to_string());
        let (gpus, offer, whose) = match h.gpus_per_replica() {
            1 => (format!("one {gpu}"), "offers", "its"),
            n => (format!("{n} × {gpu}"), "offer", "each one's"),
        };
        Err(err(
            "hardware.memory_bytes",
            format!(
                "{model} needs {:.1} GB of weights but {gpus} {offer} {:.1} GB ({whose} memory \
                 × {} − the runtime reserve): no room for the KV cache; \
                 add memory or GPUs (tensor or pipeline parallelism), quantise the weights, or set the \
                 {} to \"{}\" (--kv-policy none)",
                self.weight_bytes_stored() / 1e9,
                usable / 1e9,
                fields::field("hardware.mem_utilization").label_in_sentence(),
                fields::field("engine.kv_policy").label_in_sentence(),
                crate::format::choice_words(fields::KV_POLICIES, "none")
            ),
        ))
    }
}

// What a preset fills in a plan: the catalogue sits below the plan and knows nothing
// of it, so its `apply` methods live here.
impl crate::presets::GpuPreset {
    /// Fills `plan.hardware` (bandwidth, effective FLOP/s for the plan's weight dtype,
    /// memory, price, links and node size, preset id). Engine-side fields (utilisation,
    /// overheads, TP and PP degrees) are left as they are.
    pub fn apply(&self, plan: &mut Plan) {
        let h = &mut plan.hardware;
        h.preset = self.id.to_string();
        h.mem_bandwidth_bytes_per_s = self.mem_bandwidth_bytes_per_s;
        h.compute_flops_per_s = self.effective_flops_per_s(plan.model.weight_dtype);
        h.memory_bytes = self.memory_bytes;
        // A published price follows the GPU to its provider's offer on the same term.
        let offer = crate::prices::counterpart(&h.price_offer, self.id);
        h.gpu_hour_usd = offer.map_or(self.gpu_hour_usd, |o| o.usd_per_gpu_hour);
        h.price_offer = offer.map_or_else(String::new, |o| o.id.to_string());
        h.interconnect_bytes_per_s = self.interconnect_bytes_per_s;
        h.allreduce_latency_s = self.allreduce_latency_s;
        h.gpus_per_node = self.gpus_per_node;
        h.scaleout_bytes_per_s = self.scaleout_bytes_per_s;
        h.scaleout_latency_s = self.scaleout_latency_s;
    }
}

impl crate::presets::ModelPreset {
    /// Fills `plan.model`'s shape (parameters, layers, KV heads, head dim, preset id),
    /// clears the weight/KV byte overrides and sets the expert routing back to uniform.
    /// Dtypes are left as they are.
    pub fn apply(&self, plan: &mut Plan) {
        let m = &mut plan.model;
        m.preset = self.id.to_string();
        m.params = self.params;
        m.active_params = self.active_params;
        m.layers = self.layers;
        m.kv_heads = self.kv_heads;
        m.head_dim = self.head_dim;
        m.attention = self.attention;
        m.kv_lora_rank = self.kv_lora_rank;
        m.qk_rope_head_dim = self.qk_rope_head_dim;
        m.sliding_window_layers = self.sliding_window_layers;
        m.sliding_window_tokens = self.sliding_window_tokens;
        m.hidden_size = self.hidden_size;
        m.attention_heads = self.attention_heads;
        m.experts = self.experts;
        m.experts_per_token = self.experts_per_token;
        m.expert_params = self.expert_params;
        // How skewed a router is belongs to the model it routes for.
        m.expert_routing_skew = 1.0;
        m.weight_bytes_override = None;
        m.kv_bytes_per_token_override = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::roofline::StepModelOf;

    #[test]
    fn a_plan_without_the_attention_fields_decodes_to_grouped_query() {
        // A model section as written before attention kinds existed.
        let json = r#"{"model":{"preset":"article-8b","params":8e9,"active_params":8e9,
            "layers":32,"kv_heads":8,"head_dim":128,"weight_dtype":"bf16","kv_dtype":"bf16",
            "weight_bytes_override":null,"kv_bytes_per_token_override":null}}"#;
        let plan: Plan = serde_json::from_str(json).expect("old plan decodes");
        // The hidden size, also newer, decodes to 0 (unknown), not the default's 4,096.
        let old = ModelSpec {
            hidden_size: 0,
            ..ModelSpec::default()
        };
        assert_eq!(plan.model, old);
        assert_eq!(plan.model.attention, AttentionKind::GroupedQuery);
        assert_eq!(plan.model.kv_bytes_per_token(), 131_072.0);
        assert_eq!(plan.kv_bytes_per_token_effective(), 131_072.0);
        let text = serde_json::to_string(&plan).expect("encode");
        assert!(
            !text.contains("attention") && !text.contains("sliding"),
            "{text}"
        );
        let back: Plan = serde_json::from_str(&text).expect("decode");
        assert_eq!(back, plan);
        let mut mla = plan.clone();
        mla.model.attention = AttentionKind::MultiHeadLatent;
        mla.model.kv_lora_rank = 512;
        let text = serde_json::to_string(&mla).expect("encode");
        assert!(
            text.contains(r#""attention":"multi_head_latent""#),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<Plan>(&text).expect("decode"), mla);
    }

    #[test]
    fn every_attention_field_is_validated_by_name() {
        let base = || {
            let mut p = Plan::default();
            p.engine.kv_policy = KvPolicy::None;
            p
        };
        let mut p = base();
        p.model.attention = AttentionKind::MultiHeadLatent;
        let e = p.validate().unwrap_err();
        assert_eq!(e.field, "model.kv_lora_rank", "{e}");
        p.model.kv_lora_rank = 512;
        p.model.qk_rope_head_dim = 64;
        p.validate().expect("a latent cache of 576 values");
        p.model.qk_rope_head_dim = 5000;
        assert_eq!(p.validate().unwrap_err().field, "model.qk_rope_head_dim");
        let mut p = base();
        p.model.sliding_window_layers = 33;
        let e = p.validate().unwrap_err();
        assert_eq!(e.field, "model.sliding_window_layers");
        assert!(e.to_string().contains("0..=layers (32)"), "{e}");
        p.model.sliding_window_layers = 16;
        let e = p.validate().unwrap_err();
        assert_eq!(
            e.field, "model.sliding_window_tokens",
            "a window of 0 tokens"
        );
        p.model.sliding_window_tokens = 4096;
        p.validate().expect("half the layers windowed");
        p.model.sliding_window_tokens = MAX_TOKENS + 1;
        assert_eq!(
            p.validate().unwrap_err().field,
            "model.sliding_window_tokens"
        );
    }

    #[test]
    fn tensor_parallelism_copies_latents_and_scarce_heads() {
        // 8 KV heads: TP 1..=8 splits them; TP 16 holds every head twice.
        let mut p = Plan::default();
        for (tp, r) in [(1, 1.0), (2, 1.0), (8, 1.0), (16, 2.0)] {
            p.hardware.tp_degree = tp;
            assert_eq!(p.model.kv_replication(tp), r);
            assert_eq!(p.kv_bytes_per_token_effective(), r * 131_072.0);
        }
        // A latent cache is held whole by every GPU: at TP 8, 8 × 70,272 bytes per token
        // of context for the replica (61 layers × 576 values × 2 bytes on each GPU).
        p.model.attention = AttentionKind::MultiHeadLatent;
        p.model.layers = 61;
        p.model.kv_lora_rank = 512;
        p.model.qk_rope_head_dim = 64;
        p.hardware.tp_degree = 8;
        assert_eq!(p.kv_bytes_per_token_effective(), 8.0 * 70_272.0);
    }

    #[test]
    fn sliding_windows_charge_the_mean_context_rate() {
        // 32 layers of 8 × 128 (4,096 bytes per layer per token), half of them windowed
        // at 512 tokens; a fixed 1,000-token prompt and 200-token output hold a mean
        // context of 1,000 + 200 / 2 = 1,100 tokens:
        // kv_bytes(1,100) = 4,096 × (16 × 1,100 + 16 × 512) = 105,644,032 bytes,
        // 96,040.0279… bytes/token, between the 65,536 of the 16 global layers and the
        // 131,072 of all 32.
        let mut p = Plan::default();
        p.model.sliding_window_layers = 16;
        p.model.sliding_window_tokens = 512;
        p.traffic.prompt.dist = LengthDist::Fixed { tokens: 1000 };
        p.traffic.output.dist = LengthDist::Fixed { tokens: 200 };
        p.validate().expect("valid");
        assert_eq!(p.mean_context_tokens(), 1100.0);
        assert_eq!(p.model.kv_bytes_per_token(), 65_536.0);
        assert_eq!(p.model.kv_bytes(1100.0), 105_644_032.0);
        assert_eq!(p.kv_bytes_per_token_effective(), 105_644_032.0 / 1100.0);
        // 72 GB budget − (1 GiB + 1.6 GB) reserve − 16 GB of weights.
        let usable = (80e9 * 0.9 - (1_073_741_824.0 + 1.6e9)) - 16e9;
        assert_eq!(p.kv_capacity_tokens(), usable / (105_644_032.0 / 1100.0));
        assert_eq!(
            crate::roofline::StepModel::datasheet(&p).kv_bytes_per_token,
            105_644_032.0 / 1100.0
        );
    }
}
