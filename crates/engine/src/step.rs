//! The roofline step-time model's constants and its step time; `goodput_core::roofline`
//! resolves them from a plan and explains the model.

/// Every constant of the step-time model, resolved from a plan.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepModel {
    /// Parameters active per token; sets the FLOPs (2 per parameter per token) [parameters].
    pub params: f64,
    /// Weight bytes read once per step (all GPUs together) [bytes].
    pub weight_bytes: f64,
    /// KV-cache bytes per token of context (all GPUs together) [bytes/token].
    pub kv_bytes_per_token: f64,
    /// Memory bandwidth of one GPU [bytes/s].
    pub mem_bandwidth_bytes_per_s: f64,
    /// Achievable matmul throughput of one GPU [FLOP/s].
    pub compute_flops_per_s: f64,
    /// Fixed per-step overhead (scheduling, sampling, launches) [s].
    pub step_overhead_s: f64,
    /// Tensor-parallel degree g: weight reads, KV reads and FLOPs divide over g GPUs.
    pub tp_degree: u32,
    /// Extra fixed per-step communication time added when `tp_degree > 1` [s].
    pub tp_comm_overhead_s: f64,
    /// Latency part of the step's all-reduces, `2L × alpha`, added when `tp_degree > 1` [s].
    pub tp_allreduce_latency_s: f64,
    /// Bandwidth part of the step's all-reduces per token of the step,
    /// `2L × 2(g−1)/g × d × 2 bytes / B`; 0 when `tp_degree` is 1 [s/token].
    pub tp_comm_s_per_token: f64,
}

impl StepModel {
    /// This model with fitted constants: bandwidth and compute scaled by the achieved
    /// shares, and the fixed per-step overhead replaced.
    pub fn calibrated(
        &self,
        bandwidth_efficiency: f64,
        compute_efficiency: f64,
        step_overhead_s: f64,
    ) -> StepModel {
        StepModel {
            mem_bandwidth_bytes_per_s: self.mem_bandwidth_bytes_per_s * bandwidth_efficiency,
            compute_flops_per_s: self.compute_flops_per_s * compute_efficiency,
            step_overhead_s,
            ..*self
        }
    }

    /// GPUs the work is split over (at least 1).
    fn gpus(&self) -> f64 {
        self.tp_degree.max(1) as f64
    }

    /// Fixed time of every step: `c0`, plus, when `g > 1`, the fixed TP overhead and the
    /// all-reduces' latency [s].
    pub fn fixed_time_s(&self) -> f64 {
        if self.tp_degree > 1 {
            self.step_overhead_s + self.tp_comm_overhead_s + self.tp_allreduce_latency_s
        } else {
            self.step_overhead_s
        }
    }

    /// Bandwidth time of the step's all-reduces for `n_tok` tokens; 0 at TP 1 [s].
    pub fn comm_time_s(&self, n_tok: f64) -> f64 {
        self.tp_comm_s_per_token * n_tok
    }

    /// Time of a step that is one prefill chunk of `n_tok` tokens, taken as compute-bound:
    /// fixed time + all-reduces + compute [s].
    pub fn chunk_time_s(&self, n_tok: f64) -> f64 {
        self.fixed_time_s() + self.comm_time_s(n_tok) + self.compute_time_s(n_tok)
    }

    /// Bytes read in a step whose decoders hold `ctx_tokens` of context, all GPUs together [bytes].
    pub fn bytes_read(&self, ctx_tokens: f64) -> f64 {
        self.weight_bytes + self.kv_bytes_per_token * ctx_tokens
    }

    /// Memory time: weights plus `ctx_tokens` of KV, read at `g × beta` [s].
    pub fn memory_time_s(&self, ctx_tokens: f64) -> f64 {
        self.bytes_read(ctx_tokens) / (self.gpus() * self.mem_bandwidth_bytes_per_s)
    }

    /// Compute time of `n_tok` tokens: `2 × P × n_tok / (g × pi_eff)` [s].
    pub fn compute_time_s(&self, n_tok: f64) -> f64 {
        2.0 * self.params * n_tok / (self.gpus() * self.compute_flops_per_s)
    }

    /// Time of one engine step [s] that processes `n_tok` tokens while its decoding
    /// sequences hold `ctx_tokens` of context.
    pub fn step_time_s(&self, n_tok: f64, ctx_tokens: f64) -> f64 {
        (self.fixed_time_s() + self.comm_time_s(n_tok))
            + self
                .memory_time_s(ctx_tokens)
                .max(self.compute_time_s(n_tok))
    }

    /// Compute demand of `tokens_per_s` prompt tokens as a share of the effective FLOP/s [0..].
    pub fn compute_load(&self, tokens_per_s: f64) -> f64 {
        2.0 * self.params * tokens_per_s / (self.gpus() * self.compute_flops_per_s)
    }
}
