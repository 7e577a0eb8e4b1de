//! Roofline step time of one engine step.
//!
//! ```text
//! t_step = c0 + c_tp + max( (W + kappa*C) / (g*beta) , 2*P*n_tok / (g*pi_eff) )
//!               └ only when g > 1
//! ```
//!
//! A pure decode step is memory-bound (weights plus the KV cache of every decoding
//! sequence are read once); a step that carries a large prefill chunk is compute-bound.

use crate::plan::Plan;

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
    /// Per-step communication time added when `tp_degree > 1` [s].
    pub tp_comm_overhead_s: f64,
}

impl StepModel {
    /// The step model of a plan's model and hardware, with the plan's calibration
    /// applied while it is enabled (no validation; see [`Plan::validate`]).
    pub fn from_plan(plan: &Plan) -> StepModel {
        let base = StepModel::datasheet(plan);
        match &plan.calibration {
            Some(c) if c.enabled => base.calibrated(
                c.bandwidth_efficiency.value,
                c.compute_efficiency.value,
                c.step_overhead_s.value,
            ),
            _ => base,
        }
    }

    /// The step model from the plan's own figures, ignoring any calibration.
    pub fn datasheet(plan: &Plan) -> StepModel {
        let m = &plan.model;
        let h = &plan.hardware;
        StepModel {
            params: m.active_params,
            weight_bytes: m.weight_bytes(),
            kv_bytes_per_token: plan.kv_bytes_per_token_effective(),
            mem_bandwidth_bytes_per_s: h.mem_bandwidth_bytes_per_s,
            compute_flops_per_s: h.compute_flops_per_s,
            step_overhead_s: h.step_overhead_s,
            tp_degree: h.tp_degree.max(1),
            tp_comm_overhead_s: h.tp_comm_overhead_s,
        }
    }

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

    /// Fixed time of every step: `c0`, plus the TP communication overhead when `g > 1` [s].
    pub fn fixed_time_s(&self) -> f64 {
        if self.tp_degree > 1 {
            self.step_overhead_s + self.tp_comm_overhead_s
        } else {
            self.step_overhead_s
        }
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
        self.fixed_time_s()
            + self
                .memory_time_s(ctx_tokens)
                .max(self.compute_time_s(n_tok))
    }

    /// Compute demand of `tokens_per_s` prompt tokens as a share of the effective FLOP/s [0..].
    pub fn compute_load(&self, tokens_per_s: f64) -> f64 {
        2.0 * self.params * tokens_per_s / (self.gpus() * self.compute_flops_per_s)
    }
}

/// Time of one engine step of a plan [s]; a shorthand for [`StepModel::step_time_s`].
pub fn step_time_s(plan: &Plan, n_tok: f64, ctx_tokens: f64) -> f64 {
    StepModel::from_plan(plan).step_time_s(n_tok, ctx_tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tensor_parallel_divides_work_and_adds_communication() {
        let mut plan = Plan::default();
        let one = StepModel::from_plan(&plan);
        plan.hardware.tp_degree = 2;
        plan.hardware.tp_comm_overhead_s = 0.5e-3;
        let two = StepModel::from_plan(&plan);
        let ctx = 100_000.0;
        assert!((two.memory_time_s(ctx) - one.memory_time_s(ctx) / 2.0).abs() < 1e-15);
        assert!((two.compute_time_s(512.0) - one.compute_time_s(512.0) / 2.0).abs() < 1e-15);
        assert_eq!(two.fixed_time_s(), 1.5e-3);
        assert_eq!(one.fixed_time_s(), 1e-3);
    }

    #[test]
    fn step_time_is_the_max_of_both_roofs() {
        let s = StepModel::from_plan(&Plan::default());
        // Small batch: memory-bound, weights alone take 16e9 / 3.35e12 s.
        let t = s.step_time_s(1.0, 0.0);
        assert!((t - (1e-3 + 16e9 / 3.35e12)).abs() < 1e-12);
        // Large chunk: compute-bound.
        let t = s.step_time_s(4096.0, 0.0);
        assert!((t - (1e-3 + 2.0 * 8e9 * 4096.0 / 593e12)).abs() < 1e-12);
        assert!(s.step_time_s(10.0, 2e5) > s.step_time_s(10.0, 1e5));
    }
}
