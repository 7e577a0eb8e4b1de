//! Roofline step time of one engine step.
//!
//! ```text
//! t_step = c0 + c_tp(n_tok) + max( (W + kappa*C) / (g*beta) , 2*P*n_tok / (g*pi_eff) )
//!               └ only when g > 1
//! c_tp(n) = c_fixed + 2L * ( alpha + 2(g-1)/g * n * d * 2 bytes / B )
//! ```
//!
//! A pure decode step is memory-bound (weights plus the KV cache of every decoding
//! sequence are read once); a step that carries a large prefill chunk is compute-bound.
//!
//! **Tensor-parallel communication.** With `g > 1` GPUs, every layer ends its attention
//! and its MLP (or MoE) block with an all-reduce of the activations: `n_tok × d` values of
//! 2 bytes (bf16), `d` the model's hidden size. A ring all-reduce sends and receives
//! `2(g−1)/g` of the message through each GPU's link of one-direction bandwidth `B`, after
//! a fixed latency `alpha`. So `L` layers cost `2L` all-reduces per step. They are not
//! overlapped with the matmuls, so the time adds to the step outside the roofline's `max`.
//! `c_fixed` is the plan's extra fixed `tp_comm_overhead_s`. A plan without an
//! interconnect bandwidth or a hidden size (older plans and links) has no bandwidth term;
//! without a latency, no latency term.

use crate::plan::Plan;
pub use goodput_engine::step::StepModel;

/// Bytes of one activation value in the tensor-parallel all-reduces (bf16) [bytes].
pub const ACTIVATION_BYTES: f64 = 2.0;

/// The all-reduce terms of a plan's replica: `(2L × alpha, 2L × 2(g−1)/g × d ×
/// ACTIVATION_BYTES / B)` in seconds and seconds per token; both 0 at TP 1.
pub fn tp_allreduce_terms(plan: &Plan) -> (f64, f64) {
    let m = &plan.model;
    let h = &plan.hardware;
    let g = h.tp_degree.max(1);
    if g == 1 {
        return (0.0, 0.0);
    }
    let allreduces = 2.0 * m.layers as f64;
    let latency = allreduces * h.allreduce_latency_s;
    let per_token = if h.interconnect_bytes_per_s > 0.0 {
        let ring = 2.0 * (g - 1) as f64 / g as f64;
        allreduces * ring * m.hidden_size as f64 * ACTIVATION_BYTES / h.interconnect_bytes_per_s
    } else {
        0.0
    };
    (latency, per_token)
}

/// The step model of a plan: `StepModel::from_plan(&plan)` with this trait in scope.
pub trait StepModelOf {
    /// The step model of a plan's model and hardware, with the plan's calibration
    /// applied while it is enabled (no validation; see [`Plan::validate`]).
    fn from_plan(plan: &Plan) -> StepModel;
    /// The step model from the plan's own figures, ignoring any calibration.
    fn datasheet(plan: &Plan) -> StepModel;
}

impl StepModelOf for StepModel {
    fn from_plan(plan: &Plan) -> StepModel {
        let base = StepModel::datasheet(plan);
        match &plan.calibration {
            Some(c) if c.enabled => base.calibrated(&c.constants(plan)),
            _ => base,
        }
    }

    fn datasheet(plan: &Plan) -> StepModel {
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
            tp_allreduce_latency_s: tp_allreduce_terms(plan).0,
            tp_comm_s_per_token: tp_allreduce_terms(plan).1,
            seq_overhead_s: h.seq_overhead_s,
            frontend_s: plan.engine.frontend_s,
            prefill_overhead_s: h.prefill_overhead_s,
            kv_read_efficiency: h.kv_read_efficiency,
            attn_flops_per_pair: m.global_layers() as f64 * m.attn_flops_per_pair_per_layer(),
            window_attn_flops_per_pair: m.sliding_window_layers as f64
                * m.attn_flops_per_pair_per_layer(),
            attn_window_tokens: m.sliding_window_tokens as f64,
            expert_weight_bytes: m.expert_weight_bytes(),
            expert_miss_per_token: m.expert_miss_per_token(),
        }
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
        plan.hardware.allreduce_latency_s = 0.0;
        plan.hardware.interconnect_bytes_per_s = 0.0;
        let two = StepModel::from_plan(&plan);
        let ctx = 100_000.0;
        assert!((two.memory_time_s(ctx) - one.memory_time_s(ctx) / 2.0).abs() < 1e-15);
        assert!((two.compute_time_s(512.0) - one.compute_time_s(512.0) / 2.0).abs() < 1e-15);
        assert_eq!(two.fixed_time_s(), 1.5e-3);
        assert_eq!(one.fixed_time_s(), 1e-3);
        assert_eq!(one.comm_time_s(512.0), 0.0);
        assert_eq!(two.comm_time_s(512.0), 0.0);
    }

    #[test]
    fn all_reduce_time_from_the_interconnect_by_hand() {
        // Llama 3.1 70B on H200 (NVLink 4: 450 GB/s one way, 5 µs per all-reduce).
        // 80 layers → 160 all-reduces per step. TP 2: ring factor 2·1/2 = 1, each token
        // carries 8,192 × 2 bytes = 16,384 bytes: 160 × 16,384 / 450e9 = 5.825422…e-6 s
        // per token; latency 160 × 5 µs = 0.8 ms. TP 4: ring factor 2·3/4 = 1.5.
        let mut plan = Plan::default();
        crate::presets::model("llama-3.1-70b")
            .expect("70b")
            .apply(&mut plan);
        crate::presets::gpu("h200").expect("h200").apply(&mut plan);
        plan.hardware.tp_degree = 1;
        assert_eq!(tp_allreduce_terms(&plan), (0.0, 0.0));
        plan.hardware.tp_degree = 2;
        let (lat, per_tok) = tp_allreduce_terms(&plan);
        assert!((lat - 0.8e-3).abs() < 1e-15, "{lat}");
        assert!(
            (per_tok - 160.0 * 16_384.0 / 450e9).abs() < 1e-18,
            "{per_tok}"
        );
        let s = StepModel::from_plan(&plan);
        assert!((s.fixed_time_s() - (1e-3 + 0.8e-3)).abs() < 1e-15);
        // A 512-token chunk: 2.98 ms of all-reduce on top of the roofline.
        let comm = 512.0 * 160.0 * 16_384.0 / 450e9;
        let roof = s.memory_time_s(0.0).max(s.compute_time_s(512.0));
        assert!((s.step_time_s(512.0, 0.0) - (1.8e-3 + comm + roof)).abs() < 1e-12);
        plan.hardware.tp_degree = 4;
        let (_, per_tok4) = tp_allreduce_terms(&plan);
        assert!((per_tok4 - 1.5 * 160.0 * 16_384.0 / 450e9).abs() < 1e-18);
        // PCIe (L40S, 32 GB/s one way) costs 14× NVLink's bandwidth term.
        crate::presets::gpu("l40s").expect("l40s").apply(&mut plan);
        let (lat_pcie, per_tok_pcie) = tp_allreduce_terms(&plan);
        assert!((per_tok_pcie / per_tok4 - 450.0 / 32.0).abs() < 1e-9);
        assert!((lat_pcie - 160.0 * 15e-6).abs() < 1e-15);
    }

    #[test]
    fn a_plan_written_before_the_interconnect_fields_keeps_its_step_time() {
        let mut plan = Plan::default();
        plan.hardware.tp_degree = 2;
        plan.hardware.tp_comm_overhead_s = 0.5e-3;
        let mut json: serde_json::Value = serde_json::to_value(&plan).expect("json");
        let h = json["hardware"].as_object_mut().expect("hardware");
        assert!(h.remove("interconnect_bytes_per_s").is_some());
        assert!(h.remove("allreduce_latency_s").is_some());
        json["model"]
            .as_object_mut()
            .expect("model")
            .remove("hidden_size")
            .expect("hidden_size written");
        let old: Plan = serde_json::from_value(json).expect("decodes");
        assert_eq!(old.hardware.interconnect_bytes_per_s, 0.0);
        assert_eq!(old.model.hidden_size, 0);
        let s = StepModel::from_plan(&old);
        assert_eq!(s.fixed_time_s(), 1.5e-3);
        assert_eq!(s.comm_time_s(512.0), 0.0);
        // The new default plan does pay for its all-reduces at TP 2.
        assert!(StepModel::from_plan(&plan).comm_time_s(512.0) > 0.0);
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
