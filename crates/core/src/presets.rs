//! GPU and model presets. A preset only fills plan fields; the user may edit any of them.
//!
//! Sources for every number are listed in `docs/models.md`: GPU figures come from the
//! vendors' datasheets (dense, i.e. without structured sparsity), model shapes from each
//! model's published `config.json`.

use serde::Serialize;

use crate::model_kinds::{AttentionKind, Dtype};

/// A GPU: its datasheet figures and a default share of peak that real kernels reach.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GpuPreset {
    /// Stable id used in plans and URLs (e.g. `h100-sxm`).
    pub id: &'static str,
    /// Display name.
    pub name: &'static str,
    /// HBM / GDDR bandwidth of one GPU [bytes/s].
    pub mem_bandwidth_bytes_per_s: f64,
    /// Dense (no sparsity) BF16 tensor peak of one GPU [FLOP/s].
    pub bf16_dense_flops_per_s: f64,
    /// Dense FP8 tensor peak of one GPU [FLOP/s]; equal to the BF16 peak where the GPU
    /// has no FP8 tensor cores.
    pub fp8_dense_flops_per_s: f64,
    /// Memory of one GPU as its driver reports it (`nvidia-smi`, `rocm-smi`): a
    /// datasheet's "80 GB" of HBM is 80 GiB, less what the driver keeps [bytes].
    pub memory_bytes: f64,
    /// Share of the dense peak that serving matmuls achieve [0..1].
    pub achievable_fraction: f64,
    /// Typical on-demand cloud price of one GPU-hour [USD]; an editable assumption.
    pub gpu_hour_usd: f64,
    /// The GPU-to-GPU link a tensor-parallel replica uses (e.g. "NVLink 4").
    pub interconnect: &'static str,
    /// Bandwidth of that link for one GPU in one direction: half the datasheet's
    /// bidirectional figure [bytes/s].
    pub interconnect_bytes_per_s: f64,
    /// Fixed latency of one all-reduce over that link: an assumption, 5 µs over NVLink
    /// or Infinity Fabric, 15 µs over PCIe [s].
    pub allreduce_latency_s: f64,
    /// GPUs that share that link in one node (its NVLink or Infinity Fabric domain).
    pub gpus_per_node: u32,
    /// The scale-out network a GPU reaches other nodes by (e.g. "ConnectX-7 400 Gb/s").
    pub scaleout: &'static str,
    /// Bandwidth of that network for one GPU in one direction [bytes/s].
    pub scaleout_bytes_per_s: f64,
    /// Fixed latency of one send or all-reduce step across nodes: an assumption, 10 µs
    /// over RDMA [s].
    pub scaleout_latency_s: f64,
    /// Where the figures come from.
    pub source: &'static str,
}

/// A model: the shape that sets weight bytes, FLOPs per token and KV bytes per token.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ModelPreset {
    /// Stable id used in plans and URLs (e.g. `llama-3.1-8b`).
    pub id: &'static str,
    /// Display name.
    pub name: &'static str,
    /// Total parameters (sets the weight bytes) [parameters].
    pub params: f64,
    /// Parameters active per token (sets the FLOPs; smaller than `params` for MoE) [parameters].
    pub active_params: f64,
    /// Transformer layers.
    pub layers: u32,
    /// Key/value heads per layer.
    pub kv_heads: u32,
    /// Dimension of one attention head.
    pub head_dim: u32,
    /// How the layers cache keys and values.
    pub attention: AttentionKind,
    /// Rank of the compressed KV latent (multi-head latent attention only) [values].
    pub kv_lora_rank: u32,
    /// Dimension of the decoupled rotary key (multi-head latent attention only) [values].
    pub qk_rope_head_dim: u32,
    /// Layers with sliding-window attention, out of `layers` [layers].
    pub sliding_window_layers: u32,
    /// Window of the sliding-window layers [tokens].
    pub sliding_window_tokens: u32,
    /// Width of the residual stream, `hidden_size` in config.json [values].
    pub hidden_size: u32,
    /// Query heads per layer, `num_attention_heads` in config.json; 0 leaves prefill
    /// attention unpriced (the articles' model).
    pub attention_heads: u32,
    /// Routed experts per MoE layer (0 for a dense model).
    pub experts: u32,
    /// Routed experts each token picks.
    pub experts_per_token: u32,
    /// Parameters of the routed experts over all layers: experts × MoE layers × 3 ×
    /// hidden size × expert intermediate size (gate, up and down projections) [parameters].
    pub expert_params: f64,
    /// Where the figures come from.
    pub source: &'static str,
}

/// One mebibyte [bytes]: drivers report GPU memory in MiB.
const MIB: f64 = 1_048_576.0;

/// Every GPU preset, the article's H100 first.
pub const GPUS: &[GpuPreset] = &[
    GpuPreset {
        id: "h100-sxm",
        name: "NVIDIA H100 SXM 80GB",
        mem_bandwidth_bytes_per_s: 3.35e12,
        bf16_dense_flops_per_s: 989.4e12,
        fp8_dense_flops_per_s: 1978.9e12,
        memory_bytes: 81_559.0 * MIB,
        // 593 / 989.4: the article's effective 593 TFLOP/s ("60% of the dense bf16 peak").
        achievable_fraction: 593.0 / 989.4,
        gpu_hour_usd: 2.5,
        interconnect: "NVLink 4 (900 GB/s bidirectional)",
        interconnect_bytes_per_s: 450e9,
        allreduce_latency_s: 5e-6,
        gpus_per_node: 8,
        scaleout: "ConnectX-7, 400 Gb/s per GPU (DGX H100)",
        scaleout_bytes_per_s: 50e9,
        scaleout_latency_s: 10e-6,
        source: "NVIDIA H100 Tensor Core GPU datasheet (SXM5)",
    },
    GpuPreset {
        id: "h200",
        name: "NVIDIA H200 SXM 141GB",
        mem_bandwidth_bytes_per_s: 4.8e12,
        bf16_dense_flops_per_s: 989.4e12,
        fp8_dense_flops_per_s: 1978.9e12,
        memory_bytes: 143_771.0 * MIB,
        achievable_fraction: 0.6,
        gpu_hour_usd: 3.5,
        interconnect: "NVLink 4 (900 GB/s bidirectional)",
        interconnect_bytes_per_s: 450e9,
        allreduce_latency_s: 5e-6,
        gpus_per_node: 8,
        scaleout: "ConnectX-7, 400 Gb/s per GPU (DGX H200)",
        scaleout_bytes_per_s: 50e9,
        scaleout_latency_s: 10e-6,
        source: "NVIDIA H200 Tensor Core GPU datasheet (SXM)",
    },
    GpuPreset {
        id: "b200",
        name: "NVIDIA B200 180GB",
        mem_bandwidth_bytes_per_s: 8.0e12,
        bf16_dense_flops_per_s: 2.25e15,
        fp8_dense_flops_per_s: 4.5e15,
        memory_bytes: 183_359.0 * MIB,
        achievable_fraction: 0.6,
        gpu_hour_usd: 6.0,
        interconnect: "NVLink 5 (1.8 TB/s bidirectional)",
        interconnect_bytes_per_s: 900e9,
        allreduce_latency_s: 5e-6,
        gpus_per_node: 8,
        scaleout: "ConnectX-7, 400 Gb/s per GPU (DGX B200)",
        scaleout_bytes_per_s: 50e9,
        scaleout_latency_s: 10e-6,
        source: "NVIDIA DGX B200 datasheet (per-GPU share of the 8-GPU system)",
    },
    GpuPreset {
        id: "a100-80gb",
        name: "NVIDIA A100 SXM 80GB",
        mem_bandwidth_bytes_per_s: 2.039e12,
        bf16_dense_flops_per_s: 312e12,
        // No FP8 tensor cores: FP8 weights are dequantised and run at the BF16 rate.
        fp8_dense_flops_per_s: 312e12,
        memory_bytes: 81_920.0 * MIB,
        achievable_fraction: 0.6,
        gpu_hour_usd: 1.8,
        interconnect: "NVLink 3 (600 GB/s bidirectional)",
        interconnect_bytes_per_s: 300e9,
        allreduce_latency_s: 5e-6,
        gpus_per_node: 8,
        scaleout: "ConnectX-6, 200 Gb/s per GPU (DGX A100)",
        scaleout_bytes_per_s: 25e9,
        scaleout_latency_s: 10e-6,
        source: "NVIDIA A100 Tensor Core GPU datasheet (80GB SXM)",
    },
    GpuPreset {
        id: "l40s",
        name: "NVIDIA L40S 48GB",
        mem_bandwidth_bytes_per_s: 864e9,
        bf16_dense_flops_per_s: 362.05e12,
        fp8_dense_flops_per_s: 733e12,
        memory_bytes: 46_068.0 * MIB,
        achievable_fraction: 0.6,
        gpu_hour_usd: 1.0,
        interconnect: "PCIe Gen4 x16 (64 GB/s bidirectional)",
        interconnect_bytes_per_s: 32e9,
        allreduce_latency_s: 15e-6,
        gpus_per_node: 8,
        scaleout: "200 Gb/s Ethernet per GPU (an assumption for PCIe servers)",
        scaleout_bytes_per_s: 25e9,
        scaleout_latency_s: 10e-6,
        source: "NVIDIA L40S GPU datasheet",
    },
    GpuPreset {
        id: "mi300x",
        name: "AMD Instinct MI300X 192GB",
        mem_bandwidth_bytes_per_s: 5.3e12,
        bf16_dense_flops_per_s: 1307.4e12,
        fp8_dense_flops_per_s: 2614.9e12,
        memory_bytes: 196_592.0 * MIB,
        achievable_fraction: 0.5,
        gpu_hour_usd: 3.0,
        interconnect: "Infinity Fabric (7 links, 896 GB/s aggregate bidirectional)",
        interconnect_bytes_per_s: 448e9,
        allreduce_latency_s: 5e-6,
        gpus_per_node: 8,
        scaleout: "400 Gb/s per GPU (InfiniBand or RoCE, as cloud MI300X nodes have)",
        scaleout_bytes_per_s: 50e9,
        scaleout_latency_s: 10e-6,
        source: "AMD Instinct MI300X accelerator datasheet",
    },
    GpuPreset {
        id: "h20",
        name: "NVIDIA H20 96GB",
        mem_bandwidth_bytes_per_s: 4.0e12,
        bf16_dense_flops_per_s: 148e12,
        fp8_dense_flops_per_s: 296e12,
        memory_bytes: 97_871.0 * MIB,
        achievable_fraction: 0.6,
        gpu_hour_usd: 1.5,
        interconnect: "NVLink 4 (900 GB/s bidirectional)",
        interconnect_bytes_per_s: 450e9,
        allreduce_latency_s: 5e-6,
        gpus_per_node: 8,
        scaleout: "400 Gb/s per GPU (an assumption, as HGX H100 nodes have)",
        scaleout_bytes_per_s: 50e9,
        scaleout_latency_s: 10e-6,
        source: "NVIDIA H20 product brief (HGX H20: 96 GB HBM3, 4.0 TB/s, BF16 148 / FP8 296 TFLOP/s dense)",
    },
    GpuPreset {
        id: "l4",
        name: "NVIDIA L4 24GB",
        mem_bandwidth_bytes_per_s: 300e9,
        // Datasheet: 242 (BF16) and 485 (FP8) TFLOP/s with sparsity; dense is half.
        bf16_dense_flops_per_s: 121e12,
        fp8_dense_flops_per_s: 242.5e12,
        memory_bytes: 23_034.0 * MIB,
        achievable_fraction: 0.6,
        gpu_hour_usd: 0.8,
        interconnect: "PCIe Gen4 x16 (64 GB/s bidirectional)",
        interconnect_bytes_per_s: 32e9,
        allreduce_latency_s: 15e-6,
        gpus_per_node: 8,
        scaleout: "100 Gb/s Ethernet per GPU (an assumption for PCIe servers)",
        scaleout_bytes_per_s: 12.5e9,
        scaleout_latency_s: 10e-6,
        source: "NVIDIA L4 Tensor Core GPU datasheet (sparse figures halved)",
    },
    GpuPreset {
        id: "mi325x",
        name: "AMD Instinct MI325X 256GB",
        mem_bandwidth_bytes_per_s: 6.0e12,
        bf16_dense_flops_per_s: 1307.4e12,
        fp8_dense_flops_per_s: 2614.9e12,
        memory_bytes: 262_144.0 * MIB,
        achievable_fraction: 0.5,
        gpu_hour_usd: 3.5,
        interconnect: "Infinity Fabric (7 links, 896 GB/s aggregate bidirectional)",
        interconnect_bytes_per_s: 448e9,
        allreduce_latency_s: 5e-6,
        gpus_per_node: 8,
        scaleout: "400 Gb/s per GPU (InfiniBand or RoCE, as cloud MI300X nodes have)",
        scaleout_bytes_per_s: 50e9,
        scaleout_latency_s: 10e-6,
        source: "AMD Instinct MI325X accelerator datasheet",
    },
    GpuPreset {
        id: "gb200",
        name: "NVIDIA GB200 NVL72, one Blackwell GPU's share",
        // The rack's 576 TB/s, 13.4 TB HBM3e, and 360 (BF16) / 720 (FP8) PFLOP/s
        // with sparsity, divided by its 72 GPUs; dense is half the sparse figure.
        mem_bandwidth_bytes_per_s: 576e12 / 72.0,
        bf16_dense_flops_per_s: 360e15 / 72.0 / 2.0,
        fp8_dense_flops_per_s: 720e15 / 72.0 / 2.0,
        memory_bytes: 13.4e12 / 72.0,
        achievable_fraction: 0.6,
        gpu_hour_usd: 7.0,
        interconnect: "NVLink 5 (1.8 TB/s bidirectional)",
        interconnect_bytes_per_s: 900e9,
        allreduce_latency_s: 5e-6,
        gpus_per_node: 72,
        scaleout: "ConnectX-7, 400 Gb/s per GPU (beyond the 72-GPU NVLink rack)",
        scaleout_bytes_per_s: 50e9,
        scaleout_latency_s: 10e-6,
        source: "NVIDIA GB200 NVL72 datasheet, per-GPU share of the 72-GPU rack (sparse figures halved)",
    },
];

/// Every model preset, the article's 8B first.
pub const MODELS: &[ModelPreset] = &[
    ModelPreset {
        id: "article-8b",
        name: "Article 8B (dense, 32 layers, 8 KV heads of 128)",
        params: 8e9,
        active_params: 8e9,
        layers: 32,
        kv_heads: 8,
        head_dim: 128,
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
        source: "the worked example of the latency-SLO tuning article",
    },
    ModelPreset {
        id: "llama-3.1-8b",
        name: "Llama 3.1 8B",
        params: 8.03e9,
        active_params: 8.03e9,
        layers: 32,
        kv_heads: 8,
        head_dim: 128,
        attention: AttentionKind::GroupedQuery,
        kv_lora_rank: 0,
        qk_rope_head_dim: 0,
        sliding_window_layers: 0,
        sliding_window_tokens: 0,
        hidden_size: 4096,
        attention_heads: 32,
        experts: 0,
        experts_per_token: 0,
        expert_params: 0.0,
        source: "meta-llama/Llama-3.1-8B config.json",
    },
    ModelPreset {
        id: "llama-3.1-70b",
        name: "Llama 3.1 70B",
        params: 70.6e9,
        active_params: 70.6e9,
        layers: 80,
        kv_heads: 8,
        head_dim: 128,
        attention: AttentionKind::GroupedQuery,
        kv_lora_rank: 0,
        qk_rope_head_dim: 0,
        sliding_window_layers: 0,
        sliding_window_tokens: 0,
        hidden_size: 8192,
        attention_heads: 64,
        experts: 0,
        experts_per_token: 0,
        expert_params: 0.0,
        source: "meta-llama/Llama-3.1-70B config.json",
    },
    ModelPreset {
        id: "llama-3.1-405b",
        name: "Llama 3.1 405B",
        params: 405.9e9,
        active_params: 405.9e9,
        layers: 126,
        kv_heads: 8,
        head_dim: 128,
        attention: AttentionKind::GroupedQuery,
        kv_lora_rank: 0,
        qk_rope_head_dim: 0,
        sliding_window_layers: 0,
        sliding_window_tokens: 0,
        hidden_size: 16384,
        attention_heads: 128,
        experts: 0,
        experts_per_token: 0,
        expert_params: 0.0,
        source: "meta-llama/Llama-3.1-405B config.json",
    },
    ModelPreset {
        id: "qwen2.5-7b",
        name: "Qwen2.5 7B",
        params: 7.62e9,
        active_params: 7.62e9,
        layers: 28,
        kv_heads: 4,
        head_dim: 128,
        attention: AttentionKind::GroupedQuery,
        kv_lora_rank: 0,
        qk_rope_head_dim: 0,
        sliding_window_layers: 0,
        sliding_window_tokens: 0,
        hidden_size: 3584,
        attention_heads: 28,
        experts: 0,
        experts_per_token: 0,
        expert_params: 0.0,
        source: "Qwen/Qwen2.5-7B config.json",
    },
    ModelPreset {
        id: "qwen2.5-72b",
        name: "Qwen2.5 72B",
        params: 72.7e9,
        active_params: 72.7e9,
        layers: 80,
        kv_heads: 8,
        head_dim: 128,
        attention: AttentionKind::GroupedQuery,
        kv_lora_rank: 0,
        qk_rope_head_dim: 0,
        sliding_window_layers: 0,
        sliding_window_tokens: 0,
        hidden_size: 8192,
        attention_heads: 64,
        experts: 0,
        experts_per_token: 0,
        expert_params: 0.0,
        source: "Qwen/Qwen2.5-72B config.json",
    },
    ModelPreset {
        id: "mistral-7b",
        name: "Mistral 7B v0.3",
        params: 7.25e9,
        active_params: 7.25e9,
        layers: 32,
        kv_heads: 8,
        head_dim: 128,
        attention: AttentionKind::GroupedQuery,
        kv_lora_rank: 0,
        qk_rope_head_dim: 0,
        sliding_window_layers: 0,
        sliding_window_tokens: 0,
        hidden_size: 4096,
        attention_heads: 32,
        experts: 0,
        experts_per_token: 0,
        expert_params: 0.0,
        source: "mistralai/Mistral-7B-v0.3 config.json",
    },
    ModelPreset {
        id: "mixtral-8x7b",
        name: "Mixtral 8x7B (MoE, 2 of 8 experts active)",
        params: 46.7e9,
        active_params: 12.9e9,
        layers: 32,
        kv_heads: 8,
        head_dim: 128,
        attention: AttentionKind::GroupedQuery,
        kv_lora_rank: 0,
        qk_rope_head_dim: 0,
        sliding_window_layers: 0,
        sliding_window_tokens: 0,
        hidden_size: 4096,
        attention_heads: 32,
        experts: 8,
        experts_per_token: 2,
        expert_params: 8.0 * 32.0 * 3.0 * 4096.0 * 14336.0,
        source: "mistralai/Mixtral-8x7B-v0.1 config.json and model card",
    },
    ModelPreset {
        id: "llama-3.3-70b",
        name: "Llama 3.3 70B",
        params: 70.6e9,
        active_params: 70.6e9,
        layers: 80,
        kv_heads: 8,
        head_dim: 128,
        attention: AttentionKind::GroupedQuery,
        kv_lora_rank: 0,
        qk_rope_head_dim: 0,
        sliding_window_layers: 0,
        sliding_window_tokens: 0,
        hidden_size: 8192,
        attention_heads: 64,
        experts: 0,
        experts_per_token: 0,
        expert_params: 0.0,
        source: "meta-llama/Llama-3.3-70B-Instruct config.json (the Llama 3.1 70B architecture)",
    },
    ModelPreset {
        id: "qwen3-30b-a3b",
        name: "Qwen3-30B-A3B (MoE, 8 of 128 experts active)",
        params: 30.5e9,
        active_params: 3.3e9,
        layers: 48,
        kv_heads: 4,
        head_dim: 128,
        attention: AttentionKind::GroupedQuery,
        kv_lora_rank: 0,
        qk_rope_head_dim: 0,
        sliding_window_layers: 0,
        sliding_window_tokens: 0,
        hidden_size: 2048,
        attention_heads: 32,
        experts: 128,
        experts_per_token: 8,
        expert_params: 128.0 * 48.0 * 3.0 * 2048.0 * 768.0,
        source: "Qwen/Qwen3-30B-A3B config.json and model card",
    },
    ModelPreset {
        id: "qwen3-235b-a22b",
        name: "Qwen3-235B-A22B (MoE, 8 of 128 experts active)",
        params: 235e9,
        active_params: 22e9,
        layers: 94,
        kv_heads: 4,
        head_dim: 128,
        attention: AttentionKind::GroupedQuery,
        kv_lora_rank: 0,
        qk_rope_head_dim: 0,
        sliding_window_layers: 0,
        sliding_window_tokens: 0,
        hidden_size: 4096,
        attention_heads: 64,
        experts: 128,
        experts_per_token: 8,
        expert_params: 128.0 * 94.0 * 3.0 * 4096.0 * 1536.0,
        source: "Qwen/Qwen3-235B-A22B config.json and model card",
    },
    ModelPreset {
        id: "deepseek-v3",
        name: "DeepSeek-V3 (MoE with multi-head latent attention)",
        params: 671e9,
        active_params: 37e9,
        layers: 61,
        // config.json: num_key_value_heads 128, v_head_dim 128; unused by the latent cache.
        kv_heads: 128,
        head_dim: 128,
        attention: AttentionKind::MultiHeadLatent,
        kv_lora_rank: 512,
        qk_rope_head_dim: 64,
        sliding_window_layers: 0,
        sliding_window_tokens: 0,
        hidden_size: 7168,
        attention_heads: 128,
        experts: 256,
        experts_per_token: 8,
        expert_params: 256.0 * 58.0 * 3.0 * 7168.0 * 2048.0,
        source: "deepseek-ai/DeepSeek-V3 config.json and model card",
    },
    ModelPreset {
        id: "gpt-oss-20b",
        name: "gpt-oss-20b (MoE, alternating 128-token sliding window)",
        params: 21e9,
        active_params: 3.6e9,
        layers: 24,
        kv_heads: 8,
        head_dim: 64,
        attention: AttentionKind::GroupedQuery,
        kv_lora_rank: 0,
        qk_rope_head_dim: 0,
        // layer_types alternates sliding_attention and full_attention: 12 of 24.
        sliding_window_layers: 12,
        sliding_window_tokens: 128,
        hidden_size: 2880,
        attention_heads: 64,
        experts: 32,
        experts_per_token: 4,
        expert_params: 32.0 * 24.0 * 3.0 * 2880.0 * 2880.0,
        source: "openai/gpt-oss-20b config.json and model card",
    },
    ModelPreset {
        id: "gpt-oss-120b",
        name: "gpt-oss-120b (MoE, alternating 128-token sliding window)",
        params: 117e9,
        active_params: 5.1e9,
        layers: 36,
        kv_heads: 8,
        head_dim: 64,
        attention: AttentionKind::GroupedQuery,
        kv_lora_rank: 0,
        qk_rope_head_dim: 0,
        // layer_types alternates sliding_attention and full_attention: 18 of 36.
        sliding_window_layers: 18,
        sliding_window_tokens: 128,
        hidden_size: 2880,
        attention_heads: 64,
        experts: 128,
        experts_per_token: 4,
        expert_params: 128.0 * 36.0 * 3.0 * 2880.0 * 2880.0,
        source: "openai/gpt-oss-120b config.json and model card",
    },
    ModelPreset {
        id: "gemma-3-27b",
        name: "Gemma 3 27B (5 local : 1 global, 1,024-token window)",
        params: 27e9,
        active_params: 27e9,
        layers: 62,
        kv_heads: 16,
        head_dim: 128,
        attention: AttentionKind::GroupedQuery,
        kv_lora_rank: 0,
        qk_rope_head_dim: 0,
        // sliding_window_pattern 6: layers 6, 12, ..., 60 (10 of 62) are global.
        sliding_window_layers: 52,
        sliding_window_tokens: 1024,
        hidden_size: 5376,
        attention_heads: 32,
        experts: 0,
        experts_per_token: 0,
        expert_params: 0.0,
        source: "google/gemma-3-27b-it config.json (text_config) and model card",
    },
];

/// The GPU preset with this id.
pub fn gpu(id: &str) -> Option<&'static GpuPreset> {
    GPUS.iter().find(|g| g.id == id)
}

/// The display name of a GPU preset id: the preset's name, or the id itself when it
/// names no preset (custom hardware).
pub fn gpu_name(id: &str) -> String {
    gpu(id).map_or_else(|| id.to_string(), |g| g.name.to_string())
}

/// How a GPU preset's name starts, and the vendor that means: the vendor's software
/// (CUDA or ROCm, their kernels) comes with it.
const VENDOR_PREFIXES: [(&str, &str); 3] = [
    ("NVIDIA ", "NVIDIA"),
    ("AMD Instinct ", "AMD"),
    ("AMD ", "AMD"),
];

/// The vendor of a GPU preset (`NVIDIA`, `AMD`), by its name; `None` for custom
/// hardware.
pub fn gpu_vendor(id: &str) -> Option<&'static str> {
    let g = gpu(id)?;
    VENDOR_PREFIXES
        .iter()
        .find(|(prefix, _)| g.name.starts_with(prefix))
        .map(|(_, vendor)| *vendor)
}

/// A GPU's name short enough for a chart label: without the vendor, the memory size and
/// anything after a comma (`H100 SXM`, `MI300X`, `GB200 NVL72`); the id for custom
/// hardware.
pub fn gpu_short_name(id: &str) -> String {
    let Some(g) = gpu(id) else {
        return id.to_string();
    };
    let name = g.name.split(',').next().unwrap_or(g.name);
    let name = VENDOR_PREFIXES
        .iter()
        .find_map(|(prefix, _)| name.strip_prefix(prefix))
        .unwrap_or(name);
    let is_memory = |w: &str| {
        w.strip_suffix("GB")
            .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    };
    name.split(' ')
        .filter(|w| !is_memory(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The model preset with this id.
pub fn model(id: &str) -> Option<&'static ModelPreset> {
    MODELS.iter().find(|m| m.id == id)
}

impl GpuPreset {
    /// Dense peak for weights of this dtype [FLOP/s]: the FP8 peak for FP8 weights,
    /// otherwise the BF16 peak (INT4 weights are dequantised to BF16 for the matmul).
    pub fn dense_flops_per_s(&self, weight_dtype: Dtype) -> f64 {
        match weight_dtype {
            Dtype::Fp8 => self.fp8_dense_flops_per_s,
            Dtype::Bf16 | Dtype::Int4 => self.bf16_dense_flops_per_s,
        }
    }

    /// Effective matmul throughput for weights of this dtype: dense peak × achievable fraction [FLOP/s].
    pub fn effective_flops_per_s(&self, weight_dtype: Dtype) -> f64 {
        self.dense_flops_per_s(weight_dtype) * self.achievable_fraction
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Plan;

    #[test]
    fn gpu_names_short_and_long() {
        assert_eq!(gpu_name("h100-sxm"), "NVIDIA H100 SXM 80GB");
        assert_eq!(gpu_name("my-gpu"), "my-gpu");
        let short: Vec<String> = GPUS.iter().map(|g| gpu_short_name(g.id)).collect();
        for (g, s) in GPUS.iter().zip(&short) {
            assert!(!s.is_empty() && s.len() <= 12, "{}: '{s}'", g.id);
            assert!(
                !s.contains("0GB") && !s.contains("1GB") && !s.contains("6GB"),
                "{s}"
            );
        }
        assert!(short.contains(&"H100 SXM".to_string()), "{short:?}");
        assert!(short.contains(&"MI300X".to_string()), "{short:?}");
        assert!(short.contains(&"GB200 NVL72".to_string()), "{short:?}");
        assert!(short.contains(&"L4".to_string()), "{short:?}");
        assert_eq!(gpu_short_name("my-gpu"), "my-gpu");
    }

    #[test]
    fn article_presets_reproduce_the_default_plan() {
        let mut plan = Plan::default();
        plan.model.preset.clear();
        plan.hardware.preset.clear();
        model("article-8b").expect("article model").apply(&mut plan);
        gpu("h100-sxm").expect("h100").apply(&mut plan);
        let d = Plan::default();
        assert_eq!(plan.model, d.model);
        assert!((plan.hardware.compute_flops_per_s - 593e12).abs() < 1e3);
        assert_eq!(plan.hardware.mem_bandwidth_bytes_per_s, 3.35e12);
        assert_eq!(plan.model.kv_bytes_per_token(), 131_072.0);
        assert_eq!(plan.model.weight_bytes(), 16e9);
    }

    fn shape(id: &str) -> crate::plan::ModelSpec {
        let mut plan = Plan::default();
        model(id)
            .unwrap_or_else(|| panic!("missing model {id}"))
            .apply(&mut plan);
        // Validate the shape alone: most of these models do not fit one default GPU.
        plan.engine.kv_policy = crate::plan::KvPolicy::None;
        plan.validate().unwrap_or_else(|e| panic!("{id}: {e}"));
        plan.model
    }

    #[test]
    fn kv_bytes_of_grouped_query_attention() {
        // Llama 3.1 8B config.json: 32 layers, 8 KV heads, head_dim 4096 / 32 = 128.
        // 2 (K, V) × 32 × 8 × 128 values × 2 bytes (bf16) = 131,072 bytes/token.
        let m = shape("llama-3.1-8b");
        assert_eq!(m.kv_bytes_per_token(), 131_072.0);
        assert_eq!(m.kv_bytes(1000.0), 131_072_000.0);
        // Qwen3-235B-A22B: 2 × 94 layers × 4 KV heads × 128 × 2 bytes = 192,512 bytes/token.
        assert_eq!(shape("qwen3-235b-a22b").kv_bytes_per_token(), 192_512.0);
    }

    #[test]
    fn kv_bytes_of_multi_head_latent_attention() {
        // DeepSeek-V3 config.json: 61 layers, kv_lora_rank 512, qk_rope_head_dim 64.
        // One latent per layer: (512 + 64) = 576 values × 2 bytes = 1,152 bytes/layer;
        // × 61 layers = 70,272 bytes/token (the 128 KV heads would have cost
        // 2 × 61 × 128 × 128 × 2 = 3,997,696).
        let m = shape("deepseek-v3");
        assert_eq!(m.kv_bytes_per_token_per_layer(), 1_152.0);
        assert_eq!(m.kv_bytes_per_token(), 70_272.0);
        assert_eq!(m.kv_bytes(1000.0), 70_272_000.0);
        // FP8 cache: 576 bytes/layer, 35,136 bytes/token.
        let mut fp8 = m.clone();
        fp8.kv_dtype = Dtype::Fp8;
        assert_eq!(fp8.kv_bytes_per_token(), 35_136.0);
    }

    #[test]
    fn kv_bytes_of_sliding_window_layers() {
        // gpt-oss-120b config.json: 36 layers alternating sliding (window 128) and full,
        // 8 KV heads of 64: 2 × 8 × 64 × 2 bytes = 2,048 bytes per layer per token.
        // Full-attention layers: 18 × 2,048 = 36,864 bytes/token.
        // c = 1,000: 2,048 × (18 × 1,000 + 18 × min(1,000, 128)) = 2,048 × 20,304
        //          = 41,582,592 bytes.
        let m = shape("gpt-oss-120b");
        assert_eq!(m.kv_bytes_per_token(), 36_864.0);
        assert_eq!(m.kv_bytes(1000.0), 41_582_592.0);
        // Inside the window every layer holds every token: 36 × 2,048 = 73,728 bytes/token.
        assert_eq!(m.kv_bytes_per_token_at(100.0), 73_728.0);
        // Gemma 3 27B: 62 layers, sliding_window_pattern 6 (10 global, 52 local), window
        // 1,024, 16 KV heads of 128: 2 × 16 × 128 × 2 = 8,192 bytes per layer per token.
        // c = 4,096: 8,192 × (10 × 4,096 + 52 × 1,024) = 8,192 × 94,208 = 771,751,936.
        let g = shape("gemma-3-27b");
        assert_eq!(g.global_layers(), 10);
        assert_eq!(g.kv_bytes_per_token(), 81_920.0);
        assert_eq!(g.kv_bytes(4096.0), 771_751_936.0);
        // gpt-oss-20b: 24 layers, 12 sliding: 12 × 2,048 = 24,576 bytes/token full-attention.
        assert_eq!(shape("gpt-oss-20b").kv_bytes_per_token(), 24_576.0);
    }

    #[test]
    fn fp8_weights_use_the_fp8_peak() {
        let mut plan = Plan::default();
        plan.model.weight_dtype = Dtype::Fp8;
        let h = gpu("h100-sxm").expect("h100");
        h.apply(&mut plan);
        assert!((plan.hardware.compute_flops_per_s - 1978.9e12 * 593.0 / 989.4).abs() < 1e6);
        assert_eq!(plan.model.weight_bytes(), 8e9);
    }

    #[test]
    fn presets_are_complete_and_sane() {
        for id in [
            "h100-sxm",
            "h200",
            "b200",
            "a100-80gb",
            "l40s",
            "mi300x",
            "h20",
            "l4",
            "mi325x",
            "gb200",
        ] {
            let g = gpu(id).unwrap_or_else(|| panic!("missing gpu {id}"));
            assert!(g.mem_bandwidth_bytes_per_s > 1e11 && g.memory_bytes > 1e10);
            assert!(g.fp8_dense_flops_per_s >= g.bf16_dense_flops_per_s);
            assert!(g.achievable_fraction > 0.0 && g.achievable_fraction <= 1.0);
            assert!(!g.source.is_empty());
        }
        for id in [
            "article-8b",
            "llama-3.1-8b",
            "llama-3.1-70b",
            "llama-3.1-405b",
            "qwen2.5-7b",
            "qwen2.5-72b",
            "mistral-7b",
            "mixtral-8x7b",
            "llama-3.3-70b",
            "qwen3-30b-a3b",
            "qwen3-235b-a22b",
            "deepseek-v3",
            "gpt-oss-20b",
            "gpt-oss-120b",
            "gemma-3-27b",
        ] {
            let m = model(id).unwrap_or_else(|| panic!("missing model {id}"));
            assert!(m.active_params <= m.params && m.layers > 0 && m.kv_heads > 0);
        }
        // One GB200 GPU's share of the NVL72 rack: 8 TB/s, 2.5 / 5 PFLOP/s dense, 186 GB.
        let gb = gpu("gb200").expect("gb200");
        assert_eq!(gb.mem_bandwidth_bytes_per_s, 8e12);
        assert_eq!(gb.bf16_dense_flops_per_s, 2.5e15);
        assert_eq!(gb.fp8_dense_flops_per_s, 5e15);
        assert!((gb.memory_bytes - 186.1e9).abs() < 0.1e9);
        // Qwen3-235B-A22B: 94 layers × 2 × 4 KV heads × 128 × 2 bytes = 192,512 bytes/token.
        let mut plan = Plan::default();
        model("qwen3-235b-a22b").expect("qwen3").apply(&mut plan);
        assert_eq!(plan.model.kv_bytes_per_token(), 192_512.0);
        let mixtral = model("mixtral-8x7b").expect("mixtral");
        assert!(mixtral.active_params < 0.3 * mixtral.params);
        assert!(gpu("nope").is_none() && model("nope").is_none());
        let mut ids: Vec<&str> = GPUS
            .iter()
            .map(|g| g.id)
            .chain(MODELS.iter().map(|m| m.id))
            .collect();
        let n = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), n, "preset ids are unique");
    }
}
