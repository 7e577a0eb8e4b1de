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
//! without a latency, no latency term. A group of more GPUs than a node holds rides the
//! scale-out network (`B` and `alpha` of the slowest hop).
//!
//! **Pipeline parallelism.** With `p > 1` stages of `g` GPUs, a step is a round in which
//! every scheduled sequence advances once. The round's `m = min(p, sequences)`
//! micro-batches each pass the `p` stages; the round takes one micro-batch's trip:
//!
//! ```text
//! t_round = t_step(n_tok / m, C / m, attention / m) + sends(n_tok / m)
//! sends(n) = Σ_b ( alpha_b + n * d * 2 bytes / B_b )      over the p − 1 boundaries
//! ```
//!
//! Each stage reads its share of the weights once per micro-batch, so a round reads the
//! whole weights at `g × beta`: pipeline stages add memory and compute for the batch,
//! not bandwidth for the weights. One sequence gains nothing from the stages (`m` = 1).

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
    let (bandwidth, alpha) = tp_link(plan);
    let allreduces = 2.0 * m.layers as f64;
    let latency = allreduces * alpha;
    let per_token = if bandwidth > 0.0 {
        let ring = 2.0 * (g - 1) as f64 / g as f64;
        allreduces * ring * m.hidden_size as f64 * ACTIVATION_BYTES / bandwidth
    } else {
        0.0
    };
    (latency, per_token)
}

/// The link a tensor-parallel group's all-reduces ride, `(bandwidth, latency)`: the
/// GPU-to-GPU link inside a node; the scale-out network, the ring's slowest hop, when
/// the group spans nodes and the plan knows that network.
fn tp_link(plan: &Plan) -> (f64, f64) {
    let h = &plan.hardware;
    if h.tp_crosses_nodes() && h.scaleout_bytes_per_s > 0.0 {
        (h.scaleout_bytes_per_s, h.scaleout_latency_s)
    } else {
        (h.interconnect_bytes_per_s, h.allreduce_latency_s)
    }
}

/// The all-to-alls of an expert-parallel replica of `e` GPUs: `(2L × alpha, 2L ×
/// k × d × ACTIVATION_BYTES × max(share_in / B_in, share_out / B_out))` in seconds and
/// seconds per token of one rank. Every layer dispatches each token to its `k` experts
/// and combines their outputs back (every layer taken as a mixture-of-experts layer);
/// of a rank's traffic, `(g − 1)/e` stays in its node of `g` GPUs, on the GPU-to-GPU
/// link, and `(e − g)/e` crosses the scale-out network, both at once. The latency is the
/// network's when the ranks span nodes. Both 0 at EP 1 or for a dense model.
pub fn ep_all_to_all_terms(plan: &Plan) -> (f64, f64) {
    let m = &plan.model;
    let h = &plan.hardware;
    let e = h.ep_degree.max(1);
    if e == 1 || !m.is_moe() {
        return (0.0, 0.0);
    }
    let g = h.gpus_per_node.clamp(1, e);
    let all_to_alls = 2.0 * m.layers as f64;
    let bytes = m.experts_per_token as f64 * m.hidden_size as f64 * ACTIVATION_BYTES;
    let over = |share: f64, bw: f64| if bw > 0.0 { bytes * share / bw } else { 0.0 };
    let inside = over((g - 1) as f64 / e as f64, h.interconnect_bytes_per_s);
    let across = if e > g {
        over((e - g) as f64 / e as f64, h.scaleout_bytes_per_s)
    } else {
        0.0
    };
    let alpha = if e > g {
        h.scaleout_latency_s
    } else {
        h.allreduce_latency_s
    };
    (all_to_alls * alpha, all_to_alls * inside.max(across))
}

/// The pipeline sends of a plan's replica: `(Σ alpha_b, Σ d × ACTIVATION_BYTES / B_b)`
/// over the `p − 1` stage boundaries `b`, in seconds and seconds per token of a
/// micro-batch. A boundary inside a node uses the GPU-to-GPU link (its all-reduce
/// latency standing for one send's); one that crosses nodes uses the scale-out network.
/// Both 0 at PP 1.
pub fn pp_send_terms(plan: &Plan) -> (f64, f64) {
    let h = &plan.hardware;
    let bytes = plan.model.hidden_size as f64 * ACTIVATION_BYTES;
    (1..h.pp_degree.max(1)).fold((0.0, 0.0), |(lat, per_tok), stage| {
        let (bw, alpha) = if h.stage_boundary_crosses_nodes(stage) {
            (h.scaleout_bytes_per_s, h.scaleout_latency_s)
        } else {
            (h.interconnect_bytes_per_s, h.allreduce_latency_s)
        };
        let t = if bw > 0.0 { bytes / bw } else { 0.0 };
        (lat + alpha, per_tok + t)
    })
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
            expert_routing_skew: m.expert_routing_skew,
            pp_degree: h.pp_degree.max(1),
            pp_send_latency_s: pp_send_terms(plan).0,
            pp_send_s_per_token: pp_send_terms(plan).1,
            ep_degree: h.ep_degree.max(1),
            ep_a2a_latency_s: ep_all_to_all_terms(plan).0,
            ep_a2a_s_per_token: ep_all_to_all_terms(plan).1,
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

    /// `a` within a relative `tol` of `b`.
    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs()
    }

    /// The default plan with a model and a GPU preset applied.
    fn preset_plan(model: &str, gpu: &str) -> Plan {
        let mut plan = Plan::default();
        crate::presets::model(model)
            .expect("model")
            .apply(&mut plan);
        crate::presets::gpu(gpu).expect("gpu").apply(&mut plan);
        plan
    }

    // docs/models.md, "Routed experts": the worked examples, figure for figure.

    #[test]
    fn expert_reads_of_qwen3_30b_a3b_by_hand() {
        // Qwen3-30B-A3B in bf16: W = 30.5e9 × 2 = 61e9 bytes. Routed experts: 128 experts
        // × 48 layers × 3 × 2,048 × 768 = 28,991,029,248 parameters, so X = 2 bytes ×
        // that = 57,982,058,496 bytes and the dense part W − X = 3,017,941,504 bytes.
        // A token leaves a given expert untouched with q = 1 − 8/128 = 0.9375.
        let plan = preset_plan("qwen3-30b-a3b", "h100-sxm");
        let s = StepModel::from_plan(&plan);
        assert_eq!(plan.model.weight_bytes(), 61e9);
        assert!(close(s.expert_weight_bytes, 57_982_058_496.0, 1e-15));
        assert_eq!(s.expert_miss_per_token, 0.9375);
        // 1 token: 3,017,941,504 + X × 8/128 = 3,017,941,504 + 3,623,878,656.
        assert!(close(s.weights_read(1.0), 6_641_820_160.0, 1e-12));
        // 16 tokens: q^16 = (15/16)^16 = 0.356074130…, so 64.39% of the experts are
        // read: 3,017,941,504 + 57,982,058,496 × 0.643925869… = 40,354,088,939.2 bytes.
        assert!(close(s.weights_read(16.0), 40_354_088_939.23, 1e-12));
        // 256 tokens: q^256 = 6.678e-8; the experts left unread hold X × q^256 = 3,872 bytes.
        assert!(close(s.weights_read(256.0), 60_999_996_127.96, 1e-12));
        // 512 tokens: q^512 = 4.46e-15; X × q^512 = 0.00026 bytes: all 61 GB are read.
        assert!(close(s.weights_read(512.0), 61e9, 1e-12));
        // On an H100 (3.35 TB/s, c0 = 1 ms) a decode step of 1 and of 16 sequences with
        // no context: 1 ms + 6.64 GB / 3.35 TB/s = 2.98 ms; 1 ms + 40.35 GB / 3.35 TB/s
        // = 13.05 ms (the compute, 2 × 3.3e9 × 16 / 593e12 = 0.18 ms, stays below).
        assert!(close(s.step_time_s(1.0, 0.0), 2.982_632_883_58e-3, 1e-9));
        assert!(close(s.step_time_s(16.0, 0.0), 13.045_996_698_3e-3, 1e-9));
    }

    #[test]
    fn skewed_expert_reads_of_qwen3_30b_a3b_by_hand() {
        // The same model with a routing skew of 3: a token picks an expert of the popular
        // half three times as often as one of the other half, 8/128 × 2·3/4 = 0.09375
        // against 8/128 × 2/4 = 0.03125, so q_hot = 0.90625 and q_cold = 0.96875.
        let mut plan = preset_plan("qwen3-30b-a3b", "h100-sxm");
        plan.model.expert_routing_skew = 3.0;
        plan.validate().expect("a valid skew");
        let s = StepModel::from_plan(&plan);
        assert_eq!(s.expert_misses(), Some((0.90625, 0.96875)));
        // 1 token still reads 8 experts: X/2 × (0.09375 + 0.03125) = X × 8/128.
        assert!(close(s.weights_read(1.0), 6_641_820_160.0, 1e-12));
        // 16 tokens: q_hot^16 = 0.206999…, q_cold^16 = 0.601710…, so the experts left
        // unread hold X/2 × 0.808709… = 23,445,315,978.9 bytes: 59.56% of them are read
        // (64.39% uniform), 37,554,684,021.1 bytes, 11.21 ms on the H100 (12.05 uniform).
        assert!(close(s.weights_read(16.0), 37_554_684_021.10, 1e-12));
        assert!(close(
            s.weights_read(16.0) / 3.35e12,
            11.210_353_439e-3,
            1e-9
        ));
        // 256 tokens: the popular half is all read, the other half but 8.6 MB.
        assert!(close(s.weights_read(256.0), 60_991_440_215.67, 1e-12));
        // The engine's own evaluation gives the same bytes, and so the same step.
        use crate::sim::{SimConfig, SimConfigOf};
        let cfg = SimConfig::from_plan(&plan, 1.0).expect("config");
        let timer = goodput_engine::engine::StepTimer::new(&cfg);
        for n in [1u64, 16, 256] {
            assert_eq!(timer.weights(n, n), s.weights_read(n as f64), "{n} tokens");
        }
        // Uniform routing is the single chance, bit for bit as before.
        plan.model.expert_routing_skew = 1.0;
        assert_eq!(StepModel::from_plan(&plan).expert_misses(), None);
        // A skew below 1 or past the limit is refused, in the row's words.
        for bad in [0.5, 65.0, f64::NAN] {
            plan.model.expert_routing_skew = bad;
            let e = plan.validate().expect_err("out of range");
            assert_eq!(e.field, "model.expert_routing_skew", "{bad}");
        }
        // A dense model routes nothing: it takes 1, and a model preset sets 1 again.
        plan.model.expert_routing_skew = 3.0;
        let mut dense = plan.clone();
        crate::presets::model("llama-3.1-8b")
            .expect("a preset")
            .apply(&mut dense);
        assert_eq!(dense.model.expert_routing_skew, 1.0);
        dense.model.expert_routing_skew = 3.0;
        let e = dense.validate().expect_err("a dense model");
        assert_eq!(e.field, "model.expert_routing_skew");
        assert!(e.message.contains("mixture of experts"), "{e}");
        // When a popular expert would be picked more than surely, the picks past that go
        // to the other half: every token still picks k experts on average.
        let mut all = StepModel::from_plan(&plan);
        all.expert_miss_per_token = 0.25; // k/E = 3/4
        let (hot, cold) = all.expert_misses().expect("skewed");
        assert_eq!((hot, cold), (0.0, 0.5));
        assert!(close((1.0 - hot + 1.0 - cold) / 2.0, 0.75, 1e-15));
    }

    #[test]
    fn expert_reads_of_deepseek_v3_by_hand() {
        // DeepSeek-V3 in fp8 (its released checkpoint): W = 671e9 bytes. Routed experts:
        // 256 experts × 58 MoE layers × 3 × 7,168 × 2,048 = 653,908,770,816 parameters
        // = X bytes; the dense part W − X = 17,091,229,184 bytes; q = 1 − 8/256 = 0.96875.
        let mut plan = Plan::default();
        plan.model.weight_dtype = crate::plan::Dtype::Fp8;
        crate::presets::model("deepseek-v3")
            .expect("deepseek-v3")
            .apply(&mut plan);
        let s = StepModel::from_plan(&plan);
        assert_eq!(plan.model.weight_bytes(), 671e9);
        assert!(close(s.expert_weight_bytes, 653_908_770_816.0, 1e-15));
        assert_eq!(s.expert_miss_per_token, 0.96875);
        // 1 token: 17,091,229,184 + X / 32 = 17,091,229,184 + 20,434,649,088.
        assert!(close(s.weights_read(1.0), 37_525_878_272.0, 1e-12));
        // 16 tokens: q^16 = (31/32)^16 = 0.601710303…, 39.83% of the experts:
        // 17,091,229,184 + 653,908,770,816 × 0.398289696… = 277,536,355,095.4 bytes.
        assert!(close(s.weights_read(16.0), 277_536_355_095.41, 1e-12));
        // 256 tokens: q^256 = 2.9526e-4; X × q^256 = 193,070,684 bytes left unread.
        assert!(close(s.weights_read(256.0), 670_806_929_316.42, 1e-12));
        // In bf16 every byte figure doubles.
        plan.model.weight_dtype = crate::plan::Dtype::Bf16;
        let b = StepModel::from_plan(&plan);
        assert!(close(b.weights_read(16.0), 2.0 * 277_536_355_095.41, 1e-12));
    }

    // docs/models.md, "Pipeline parallelism".

    #[test]
    fn pipeline_rounds_by_hand() {
        // The article's plan (8B bf16 on an H100: W = 16e9 bytes, kappa = 131,072 bytes,
        // 3.35 TB/s, 593 TFLOP/s, c0 = 1 ms, d = 4,096) in two stages of one GPU each:
        // both on one node, the one boundary on NVLink (450 GB/s, 5 µs).
        let mut plan = Plan::default();
        plan.hardware.pp_degree = 2;
        assert_eq!(plan.hardware.gpus_per_replica(), 2);
        assert_eq!(plan.hardware.nodes_per_replica(), 1);
        assert_eq!(pp_send_terms(&plan), (5e-6, 4096.0 * 2.0 / 450e9));
        let s = StepModel::from_plan(&plan);
        let one = StepModel::from_plan(&Plan::default());
        // One decoder with 1,000 tokens of context: no second micro-batch, so the round
        // is one stage-group's step, 1 ms + (16e9 + 131,072,000) / 3.35e12 = 5.815 ms,
        // plus one send, 5 µs + 8,192 bytes / 450 GB/s = 5.018 µs.
        let lone = s.step_time_full_s(1.0, 1000.0, 1.0, false, 0.0);
        assert!(
            close(lone, 5.815_245_373_1e-3 + 5.018_204_4e-6, 1e-9),
            "{lone}"
        );
        assert!(close(
            lone - one.step_time_full_s(1.0, 1000.0, 1.0, false, 0.0),
            5.018_204_4e-6,
            1e-6
        ));
        // 110 decoders holding 103,400 tokens: two micro-batches of 55 sequences and
        // 51,700 tokens each. One's trip: 1 ms + (16e9 + 6,776,422,400) / 3.35e12
        // = 7.799 ms, plus 5 µs + 55 × 18.2 ns = 6.001 µs: 7.805 ms, against 9.822 ms
        // for the same batch on one GPU.
        let round = s.step_time_full_s(110.0, 103_400.0, 110.0, false, 0.0);
        assert!(
            close(round, 7.798_932_059_7e-3 + 6.001_244_4e-6, 1e-9),
            "{round}"
        );
        assert!(close(
            one.step_time_full_s(110.0, 103_400.0, 110.0, false, 0.0),
            9.821_744_716_4e-3,
            1e-9
        ));
        // A prefill chunk of 2,048 tokens for one sequence: no split, compute-bound on
        // one GPU, 2 × 8e9 × 2,048 / 593e12 = 55.26 ms, as without stages, plus the send
        // of 2,048 activations, 5 µs + 37.28 µs.
        let chunk = s.step_time_full_s(2048.0, 0.0, 1.0, true, 0.0);
        assert!(close(
            chunk,
            1e-3 + 2.0 * 8e9 * 2048.0 / 593e12 + 5e-6 + 2048.0 * 8192.0 / 450e9,
            1e-12
        ));
        // The engine's timer prices every round as the step model does.
        use crate::sim::{SimConfig, SimConfigOf};
        let cfg = SimConfig::from_plan(&plan, 1.0).expect("config");
        let timer = goodput_engine::engine::StepTimer::new(&cfg);
        for (n, ctx, seqs, prefill) in [
            (1u64, 1000.0, 1u64, false),
            (110, 103_400.0, 110, false),
            (2048, 0.0, 1, true),
            (300, 5_000.0, 3, true),
        ] {
            let want = s.step_time_full_s(n as f64, ctx, seqs as f64, prefill, 0.0);
            let got = timer.time(n, ctx, seqs, prefill, 0.0);
            assert!(
                close(got, want, 1e-12),
                "{n} tokens, {seqs} seqs: {got} vs {want}"
            );
        }
    }

    #[test]
    fn sends_and_all_reduces_that_cross_nodes_ride_the_scale_out_network() {
        // TP 8 × PP 2 on 8-GPU nodes: the one boundary crosses, 10 µs and 8,192 bytes a
        // token at 50 GB/s.
        let mut plan = Plan::default();
        plan.hardware.tp_degree = 8;
        plan.hardware.pp_degree = 2;
        assert_eq!(plan.hardware.nodes_per_replica(), 2);
        assert!(plan.hardware.stage_boundary_crosses_nodes(1));
        assert_eq!(pp_send_terms(&plan), (10e-6, 8192.0 / 50e9));
        // TP 2 × PP 8: stages 4 and 8 start a node; boundary 4 crosses, the others do not.
        plan.hardware.tp_degree = 2;
        plan.hardware.pp_degree = 8;
        let crossing: Vec<u32> = (1..8)
            .filter(|&b| plan.hardware.stage_boundary_crosses_nodes(b))
            .collect();
        assert_eq!(crossing, vec![4]);
        let (lat, per_tok) = pp_send_terms(&plan);
        assert!(close(lat, 6.0 * 5e-6 + 10e-6, 1e-12));
        assert!(close(per_tok, 6.0 * 8192.0 / 450e9 + 8192.0 / 50e9, 1e-12));
        // A tensor-parallel group wider than a node: its all-reduces ride the network,
        // 2L × 10 µs and 2L × 2(g−1)/g × 8,192 bytes / 50 GB/s a token.
        plan.hardware.tp_degree = 16;
        plan.hardware.pp_degree = 1;
        let (lat, per_tok) = tp_allreduce_terms(&plan);
        assert!(close(lat, 64.0 * 10e-6, 1e-12));
        assert!(close(
            per_tok,
            64.0 * 2.0 * 15.0 / 16.0 * 8192.0 / 50e9,
            1e-12
        ));
        // Without a known network (older plans), the GPU-to-GPU link stands in.
        plan.hardware.scaleout_bytes_per_s = 0.0;
        let (lat, _) = tp_allreduce_terms(&plan);
        assert!(close(lat, 64.0 * 5e-6, 1e-12));
    }

    // docs/models.md, "Expert parallelism".

    #[test]
    fn expert_parallel_steps_of_qwen3_30b_a3b_by_hand() {
        // Qwen3-30B-A3B in bf16 on 8 H100s of one node, experts split 8 ways, attention
        // data-parallel: W = 61e9 bytes, of which X = 57,982,058,496 routed experts and
        // 3,017,941,504 dense (held by every GPU); k = 8, d = 2,048, 48 layers.
        let mut plan = Plan::default();
        crate::presets::model("qwen3-30b-a3b")
            .expect("preset")
            .apply(&mut plan);
        plan.hardware.ep_degree = 8;
        plan.validate().expect("a valid plan");
        assert_eq!(plan.hardware.gpus_per_replica(), 8);
        let s = StepModel::from_plan(&plan);
        // One token: it picks 8 experts, 6.64 GB of the whole; a GPU reads the dense part
        // and its eighth of those experts, 3,017,941,504 + 452,984,832 bytes.
        assert!(close(s.ep_weights_read(1.0), 3_470_926_336.0, 1e-12));
        // 64 tokens pick all but 1.6% of the experts: 60,067,915,428 bytes together,
        // 10,149,188,245 on each GPU.
        assert!(close(s.ep_weights_read(64.0), 10_149_188_244.554, 1e-12));
        // All-to-alls: 2 × 48 of them, each of a token's 8 × 2,048 × 2 = 32,768 bytes,
        // 7/8 of it to the node's other GPUs at 450 GB/s: 6.117 µs a token; 96 × 5 µs
        // of latency.
        let (lat, per_tok) = ep_all_to_all_terms(&plan);
        assert!(close(lat, 480e-6, 1e-12));
        assert!(close(per_tok, 6.116_693_333e-6, 1e-9));
        // 64 decoders holding 64,000 tokens of context: 8 a rank, 8,000 tokens each of
        // 98,304 bytes. Memory (10,149,188,245 + 786,432,000) / 3.35 TB/s = 3.264 ms;
        // the step 1 ms + 0.48 ms + 8 × 6.117 µs + 3.264 ms = 4.793 ms.
        let step = s.step_time_full_s(64.0, 64_000.0, 64.0, false, 0.0);
        assert!(close(step, 4.793_297_798_8e-3, 1e-9), "{step}");
        // Fewer sequences than ranks: the busiest rank holds one.
        let lone = s.step_time_full_s(1.0, 1000.0, 1.0, false, 0.0);
        let want = 1e-3 + 480e-6 + per_tok + (3_470_926_336.0 + 98_304.0 * 1000.0) / 3.35e12;
        assert!(close(lone, want, 1e-12), "{lone} vs {want}");
        // The engine's timer prices every step as the step model does.
        use crate::sim::{SimConfig, SimConfigOf};
        let cfg = SimConfig::from_plan(&plan, 1.0).expect("config");
        let timer = goodput_engine::engine::StepTimer::new(&cfg);
        for (n, ctx, seqs, prefill) in [
            (1u64, 1000.0, 1u64, false),
            (64, 64_000.0, 64, false),
            (2048, 0.0, 1, true),
            (600, 9_000.0, 5, true),
        ] {
            let want = s.step_time_full_s(n as f64, ctx, seqs as f64, prefill, 0.0);
            let got = timer.time(n, ctx, seqs, prefill, 0.0);
            assert!(
                close(got, want, 1e-12),
                "{n} tokens, {seqs} seqs: {got} vs {want}"
            );
        }
        // Two nodes (EP 16): half of a rank's traffic crosses the network at 50 GB/s,
        // 32,768 × 8/16 / 50e9 = 327.7 ns a token an all-to-all, and 10 µs each.
        plan.hardware.ep_degree = 16;
        let (lat, per_tok) = ep_all_to_all_terms(&plan);
        assert!(close(lat, 96.0 * 10e-6, 1e-12));
        assert!(close(per_tok, 96.0 * 32_768.0 * 0.5 / 50e9, 1e-12));
    }

    #[test]
    fn expert_parallelism_is_refused_where_it_cannot_run() {
        let mut plan = Plan::default();
        plan.hardware.ep_degree = 2;
        let e = plan.validate().expect_err("a dense model");
        assert_eq!(e.field, "hardware.ep_degree");
        assert!(e.message.contains("this model has none"), "{e}");
        crate::presets::model("qwen3-30b-a3b")
            .expect("preset")
            .apply(&mut plan);
        plan.hardware.tp_degree = 2;
        let e = plan.validate().expect_err("with TP");
        assert!(e.message.contains("(now 2 and 1)"), "{e}");
        plan.hardware.tp_degree = 1;
        plan.hardware.ep_degree = 128;
        plan.validate().expect("one expert a GPU");
        crate::presets::model("mixtral-8x7b")
            .expect("preset")
            .apply(&mut plan);
        plan.hardware.ep_degree = 16;
        let e = plan.validate().expect_err("more GPUs than experts");
        assert!(e.message.contains("routed experts (8)"), "{e}");
    }

    // docs/models.md, "Per-sequence time", "Prefill-step overhead", "KV-read efficiency".

    #[test]
    fn per_sequence_prefill_and_kv_read_terms_by_hand() {
        // The article's plan (8B bf16 on an H100: W = 16e9 bytes, kappa = 131,072 bytes,
        // 3.35 TB/s, 593 TFLOP/s, c0 = 1 ms) with 10 µs per sequence, 2 ms per prefill
        // step and KV reads at 0.6 of the weights' speed; 110 decoders hold 110 × 940 =
        // 103,400 tokens of context.
        let mut plan = Plan::default();
        let ctx = 103_400.0;
        let base = StepModel::from_plan(&plan);
        // Without the terms: 1 ms + (16e9 + 131,072 × 103,400) / 3.35e12 = 9.822 ms.
        assert!(close(
            base.step_time_full_s(110.0, ctx, 110.0, false, 0.0),
            9.821_744_716_4e-3,
            1e-9
        ));
        plan.hardware.seq_overhead_s = 10e-6;
        plan.hardware.prefill_overhead_s = 2e-3;
        plan.hardware.kv_read_efficiency = 0.6;
        let s = StepModel::from_plan(&plan);
        // KV read as 131,072 / 0.6 = 218,453.3 bytes a token: 22,588,074,666.7 bytes,
        // so (16e9 + 22,588,074,666.7) / 3.35e12 = 11.519 ms of memory time.
        assert!(close(s.kv_read_bytes_per_token(), 131_072.0 / 0.6, 1e-15));
        assert!(close(s.memory_time_s(ctx), 11.518_828_258_7e-3, 1e-9));
        // Pure decode: 1 ms + 110 × 10 µs + 11.519 ms = 13.619 ms.
        let decode = s.step_time_full_s(110.0, ctx, 110.0, false, 0.0);
        assert!(close(decode, 13.618_828_258_7e-3, 1e-9));
        // The same decoders and a 402-token prefill chunk (512 tokens, 111 sequences):
        // 1 ms + 111 × 10 µs + 2 ms + max(11.519, 2 × 8e9 × 512 / 593e12 = 13.815) ms
        // = 17.925 ms (14.815 ms without the three terms).
        let mixed = s.step_time_full_s(512.0, ctx, 111.0, true, 0.0);
        assert!(close(mixed, 17.924_502_529_5e-3, 1e-9));
        assert!(close(
            base.step_time_full_s(512.0, ctx, 111.0, true, 0.0),
            14.814_502_529_5e-3,
            1e-9
        ));
        // The engine's own evaluation (`StepTimer::time`) gives the same numbers.
        use crate::sim::{SimConfig, SimConfigOf};
        let cfg = SimConfig::from_plan(&plan, 10.0).expect("config");
        let timer = goodput_engine::engine::StepTimer::new(&cfg);
        assert!(close(timer.time(110, ctx, 110, false, 0.0), decode, 1e-12));
        assert!(close(timer.time(512, ctx, 111, true, 0.0), mixed, 1e-12));
    }

    // docs/models.md, "Prefill attention".

    #[test]
    fn prefill_attention_flops_by_hand() {
        // Llama 3.1 8B: 32 layers × 4 × 32 heads × 128 = 524,288 FLOP per (query, key)
        // pair. On an H100 preset, 593 TFLOP/s effective.
        let plan = preset_plan("llama-3.1-8b", "h100-sxm");
        let s = StepModel::from_plan(&plan);
        assert_eq!(s.attn_flops_per_pair, 524_288.0);
        // The first 512-token chunk: 512 × 513 / 2 = 131,328 pairs = 68.85 GFLOP, 0.116 ms.
        assert_eq!(s.prefill_attn_flops(512.0, 0.0), 68_853_694_464.0);
        // After 4,096 tokens: 512 × 4,096 + 131,328 = 2,228,480 pairs = 1.168 TFLOP,
        // 1.970 ms beside 2 × 8.03e9 × 512 / 593e12 = 13.866 ms of matmuls.
        let f = s.prefill_attn_flops(512.0, 4096.0);
        assert_eq!(f, 1_168_365_322_240.0);
        assert!(close(f / s.compute_flops_per_s, 1.970_261_926e-3, 1e-9));
        // After 32,256 tokens: 512 × 32,256 + 131,328 = 16,646,400 pairs = 8.728 TFLOP,
        // 14.718 ms: more than the chunk's matmuls.
        let late = s.prefill_attn_flops(512.0, 32_256.0);
        assert_eq!(late, 8_727_507_763_200.0);
        assert!(late / s.compute_flops_per_s > s.compute_time_s(512.0));
        // The step adds it outside the roofline's max: a 512-token chunk after 4,096
        // tokens, no decoders: 1 ms + 13.866 ms + 1.970 ms = 16.837 ms.
        let t = s.step_time_full_s(512.0, 0.0, 1.0, true, f);
        assert!(close(t, 16.836_568_840_2e-3, 1e-9));
        // The article's 8B states no heads: no attention term, as in the article.
        assert_eq!(
            StepModel::from_plan(&Plan::default()).attn_flops_per_pair,
            0.0
        );
    }

    // docs/models.md, "Frontend time".

    #[test]
    fn frontend_time_adds_to_ttft_and_e2e_only() {
        use crate::sim::{simulate, SimConfig, SimConfigOf};
        let mut plan = Plan::default();
        plan.run.num_requests = 400;
        plan.run.warmup_requests = 50;
        let without =
            simulate(&SimConfig::from_plan(&plan, 15.0).expect("config"), 7).expect("runs");
        plan.engine.frontend_s = 0.025;
        let with = simulate(&SimConfig::from_plan(&plan, 15.0).expect("config"), 7).expect("runs");
        // Open-loop arrivals: the engine runs the same steps; each request's TTFT and
        // E2E grow by 25 ms, its TPOT does not.
        assert_eq!(with.steps, without.steps);
        assert!((with.ttft_s.mean - (without.ttft_s.mean + 0.025)).abs() < 1e-12);
        assert!((with.ttft_s.p99 - (without.ttft_s.p99 + 0.025)).abs() < 1e-12);
        assert!((with.e2e_s.mean - (without.e2e_s.mean + 0.025)).abs() < 1e-12);
        assert_eq!(with.tpot_s.mean, without.tpot_s.mean);
    }
}
