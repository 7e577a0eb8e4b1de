//! Memory fit: do the weights fit the replica's GPUs, and how many tokens of KV cache
//! are left once they and a runtime reserve are in place.
//!
//! Per GPU of a replica of `g = tp_degree × pp_degree` GPUs of `M` bytes each:
//!
//! ```text
//! budget   = M × mem_utilization                 (what the engine may use)
//! weights  = W / g                               (tensor and pipeline parallelism split them)
//! reserve  = RESERVE_FIXED_BYTES + RESERVE_SHARE × M
//! kv_pool  = budget − weights − reserve          (per GPU)
//! capacity = g × kv_pool / kappa_effective       [tokens]
//! ```
//!
//! `capacity` is the figure to compare with vLLM's start-up log line
//! "GPU KV cache size: N tokens". The reserve stands for what vLLM subtracts from its
//! budget before the KV cache: the activation peak of a profiled forward pass, CUDA
//! graphs and the non-torch memory of the CUDA context and the communication
//! libraries. It is a stated assumption, not a measurement; see `docs/models.md`.

use serde::{Deserialize, Serialize};

use crate::format::thousands;
use crate::plan::Plan;

pub use crate::plan::{RESERVE_FIXED_BYTES, RESERVE_SHARE};

/// The memory fit of one replica.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct MemoryFit {
    /// GPUs of one replica (TP × PP).
    pub gpus_per_replica: u32,
    /// Memory the engine may use on one GPU: memory × mem_utilization [bytes].
    pub budget_bytes_per_gpu: f64,
    /// Weight bytes on one GPU: weights / GPUs of the replica [bytes].
    pub weight_bytes_per_gpu: f64,
    /// Runtime reserve on one GPU: 1 GiB + 2% of its memory [bytes].
    pub reserve_bytes_per_gpu: f64,
    /// KV-cache pool of one GPU: budget − weights − reserve; negative when they do not fit [bytes].
    pub kv_bytes_per_gpu: f64,
    /// KV bytes per token of context charged (the plan's effective figure) [bytes/token].
    pub kv_bytes_per_token: f64,
    /// KV-cache capacity of the replica, never below 0 [tokens]; vLLM's "GPU KV cache size".
    pub kv_capacity_tokens: f64,
    /// Whether the weights and the reserve fit in the budget.
    pub weights_fit: bool,
    /// Fewest GPUs per replica on which the weights and the reserve fit; `None` when the
    /// reserve alone exceeds one GPU's budget.
    pub gpus_needed: Option<u32>,
    /// Longest request: prompt max + output max [tokens].
    pub max_request_tokens: u64,
    /// KV bytes the longest request holds at its end, with sliding windows bounded [bytes].
    pub max_request_kv_bytes: f64,
    /// Whether the KV cache holds one request of maximum length.
    pub holds_max_request: bool,
    /// Why the option does not fit, in the user's words; `None` when it fits.
    pub reason: Option<String>,
}

/// How one replica spreads over GPUs and nodes: for each node it touches, the pipeline
/// stage of each of its GPUs (stages fill the nodes in order, `tp_degree` GPUs each).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ReplicaLayout {
    /// Per node, the stage (0-based) of each GPU the replica uses there.
    pub nodes: Vec<Vec<u32>>,
    /// GPUs of one node (the plan's `gpus_per_node`).
    pub gpus_per_node: u32,
    /// Stage boundaries that cross nodes (on the scale-out network).
    pub crossings: u32,
    /// The layout in one sentence.
    pub words: String,
}

/// The replica's layout ([`ReplicaLayout`]).
pub fn replica_layout(plan: &Plan) -> ReplicaLayout {
    let h = &plan.hardware;
    let tp = h.tp_degree.max(1);
    let pp = h.pp_degree.max(1);
    let per_node = h.gpus_per_node.max(1);
    let gpus = h.gpus_per_replica();
    let mut nodes: Vec<Vec<u32>> = Vec::new();
    // A layout past the limit a plan may have is not drawn.
    let drawn = if gpus <= crate::plan::MAX_GPUS_PER_REPLICA {
        gpus
    } else {
        0
    };
    for gpu in 0..drawn {
        if gpu % per_node == 0 {
            nodes.push(Vec::new());
        }
        if let Some(n) = nodes.last_mut() {
            // Expert-parallel ranks are one stage.
            n.push(if h.ep_degree > 1 { 0 } else { gpu / tp });
        }
    }
    let crossings = (1..pp)
        .filter(|&s| h.stage_boundary_crosses_nodes(s))
        .count() as u32;
    let count = crate::format::count;
    let mut words = format!("{} a replica", count(u64::from(gpus), "GPU", "GPUs"));
    let ep = h.ep_degree.max(1);
    if ep > 1 {
        words.push_str(": the routed experts split over them, each attending to its own sequences");
    } else if pp > 1 {
        words.push_str(&format!(
            ": {pp} pipeline stages of {}",
            count(u64::from(tp), "GPU", "GPUs")
        ));
    } else if tp > 1 {
        words.push_str(": one tensor-parallel group");
    }
    words.push_str(&format!(
        ", on {} of {per_node}",
        count(nodes.len() as u64, "node", "nodes")
    ));
    let network = if h.scaleout_bytes_per_s > 0.0 {
        format!(
            "the scale-out network ({} GB/s a GPU)",
            crate::format::sig(h.scaleout_bytes_per_s / 1e9)
        )
    } else {
        "the scale-out network (bandwidth unknown: latency only)".to_string()
    };
    if ep > per_node {
        words.push_str(&format!(
            "; the all-to-alls that send tokens to their experts cross nodes, over {network}"
        ));
    } else if h.tp_degree.max(1) > per_node {
        words.push_str(&format!(
            "; each tensor-parallel group spans nodes, so its all-reduces ride {network}"
        ));
    } else if h.tp_crosses_nodes() {
        words.push_str(&format!(
            "; a stage straddles two nodes, so the all-reduces ride {network}"
        ));
    } else if crossings > 0 {
        let b = if crossings == 1 {
            "1 stage boundary crosses".to_string()
        } else {
            format!("{crossings} stage boundaries cross")
        };
        words.push_str(&format!("; {b} nodes, over {network}"));
    }
    words.push('.');
    ReplicaLayout {
        nodes,
        gpus_per_node: per_node,
        crossings,
        words,
    }
}

/// What to build when a replica needs more GPUs than a node holds: "" when one node
/// holds them, else ", more than a node's 8: TP 8 × PP 2 over 2 nodes holds them".
fn beyond_a_node(needed: u32, per_node: u32) -> String {
    let per_node = per_node.max(1);
    if needed <= per_node {
        return String::new();
    }
    // The widest power-of-two TP degree a node holds, then as many stages as it takes.
    let tp = 1u32 << (31 - per_node.min(8).leading_zeros());
    let pp = needed.div_ceil(tp);
    let nodes = (tp * pp).div_ceil(per_node);
    format!(", more than a node's {per_node}: TP {tp} × PP {pp} over {nodes} nodes holds them")
}

/// The memory fit of the plan's replica (see the module docs for the arithmetic).
pub fn memory_fit(plan: &Plan) -> MemoryFit {
    let h = &plan.hardware;
    let g = h.gpus_per_replica();
    let budget = h.memory_bytes * h.mem_utilization;
    let weights_total = plan.model.weight_bytes();
    let weights = plan.weight_bytes_per_gpu();
    let reserve = h.runtime_reserve_bytes();
    let kv_pool = budget - weights - reserve;
    let kappa = plan.kv_bytes_per_token_effective();
    let capacity = if kappa > 0.0 {
        plan.kv_capacity_tokens().max(0.0)
    } else {
        0.0
    };
    let room = budget - reserve;
    let gpus_needed = (room > 0.0).then(|| {
        let n = (weights_total / room).floor() as u64 + 1;
        n.min(u32::MAX as u64) as u32
    });
    let weights_fit = kv_pool > 0.0;
    let max_request = plan.prompt_cap() as u64 + plan.output_cap() as u64;
    let max_request_kv = plan.model.kv_bytes(max_request as f64);
    // The KV memory of the replica: the pool left by weights and reserve, or the KV cache
    // size the engine logged when the plan gives it (`engine.kv_cache_tokens`).
    let kv_room = match plan.engine.kv_cache_tokens {
        Some(t) => t as f64 * kappa,
        None => g as f64 * kv_pool,
    };
    let holds = weights_fit && kv_room >= max_request_kv;
    let reason = if !weights_fit {
        Some(match gpus_needed {
            Some(n) => format!(
                "the weights do not fit: {:.1} GB per GPU plus a {:.1} GB reserve exceed the {:.1} GB budget (GPU memory × {}) on {g} GPU{}; it needs {n} GPUs per replica{}",
                weights / 1e9,
                reserve / 1e9,
                budget / 1e9,
                crate::plan::fields::field("hardware.mem_utilization").label_in_sentence(),
                if g == 1 { "" } else { "s" },
                beyond_a_node(n, h.gpus_per_node)
            ),
            None => format!(
                "the weights do not fit: the {:.1} GB runtime reserve alone exceeds the {:.1} GB budget of one GPU",
                reserve / 1e9,
                budget / 1e9
            ),
        })
    } else if !holds {
        Some(format!(
            "the KV cache ({} tokens, {:.2} GB) cannot hold one request of maximum length ({} tokens = the longest prompt + the longest output, {:.2} GB)",
            thousands(capacity.round() as i64),
            kv_room / 1e9,
            thousands(max_request as i64),
            max_request_kv / 1e9
        ))
    } else {
        None
    };
    MemoryFit {
        gpus_per_replica: g,
        budget_bytes_per_gpu: budget,
        weight_bytes_per_gpu: weights,
        reserve_bytes_per_gpu: reserve,
        kv_bytes_per_gpu: kv_pool,
        kv_bytes_per_token: kappa,
        kv_capacity_tokens: capacity,
        weights_fit,
        gpus_needed,
        max_request_tokens: max_request,
        max_request_kv_bytes: max_request_kv,
        holds_max_request: holds,
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::KvPolicy;
    use crate::presets;

    const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

    #[test]
    fn the_article_plan_by_hand() {
        // H100 80 GB at 0.9: budget 72 GB; 8B bf16 = 16 GB of weights; reserve
        // 1 GiB + 2% × 80 GB = 1.073741824 + 1.6 = 2.673741824 GB; pool 53.326258176 GB;
        // / 131,072 bytes/token = 406,847.6… tokens.
        let f = memory_fit(&Plan::default());
        assert_eq!(f.budget_bytes_per_gpu, 72e9);
        assert_eq!(f.weight_bytes_per_gpu, 16e9);
        assert_eq!(f.reserve_bytes_per_gpu, GIB + 1.6e9);
        assert!((f.kv_bytes_per_gpu - 53_326_258_176.0).abs() < 1.0);
        assert!((f.kv_capacity_tokens - 53_326_258_176.0 / 131_072.0).abs() < 1e-6);
        assert!(f.weights_fit && f.holds_max_request && f.reason.is_none());
        assert_eq!(f.gpus_needed, Some(1));
    }

    #[test]
    fn weights_that_do_not_fit_say_how_many_gpus_they_need() {
        // Llama 3.1 70B bf16 = 141.2 GB on H100s: room per GPU 72 − 2.673741824 =
        // 69.326258176 GB; 141.2 / 69.33 = 2.04 → 3 GPUs. At TP 2 each GPU holds
        // 70.6 GB of weights, more than its 69.3 GB room.
        let mut plan = Plan::default();
        plan.engine.kv_policy = KvPolicy::None;
        presets::model("llama-3.1-70b")
            .expect("70b")
            .apply(&mut plan);
        plan.hardware.tp_degree = 2;
        let f = memory_fit(&plan);
        assert!(!f.weights_fit && !f.holds_max_request);
        assert_eq!(f.gpus_needed, Some(3));
        assert_eq!(f.kv_capacity_tokens, 0.0);
        let why = f.reason.expect("a reason");
        assert!(why.contains("needs 3 GPUs per replica"), "{why}");
        plan.hardware.tp_degree = 4;
        let f = memory_fit(&plan);
        assert!(f.weights_fit && f.holds_max_request, "{:?}", f.reason);
        // 4 × (72 − 35.3 − 2.673741824) GB / 327,680 bytes/token.
        let pool = 72e9 - 35.3e9 - (GIB + 1.6e9);
        assert!((f.kv_capacity_tokens - 4.0 * pool / 327_680.0).abs() < 1e-3);
        // Two pipeline stages of two GPUs hold the same weights over the same 4 GPUs:
        // the same pool per GPU and the same capacity.
        plan.hardware.tp_degree = 2;
        plan.hardware.pp_degree = 2;
        let g = memory_fit(&plan);
        assert_eq!(g.gpus_per_replica, 4);
        assert_eq!(g.weight_bytes_per_gpu, f.weight_bytes_per_gpu);
        assert_eq!(g.kv_capacity_tokens, f.kv_capacity_tokens);
    }

    #[test]
    fn a_replica_s_layout_names_its_stages_nodes_and_network() {
        let mut plan = Plan::default();
        let l = replica_layout(&plan);
        assert_eq!(l.nodes, vec![vec![0]]);
        assert_eq!(l.words, "1 GPU a replica, on 1 node of 8.");
        plan.hardware.tp_degree = 8;
        plan.hardware.pp_degree = 2;
        let l = replica_layout(&plan);
        assert_eq!(l.nodes, vec![vec![0; 8], vec![1; 8]]);
        assert_eq!(l.crossings, 1);
        assert_eq!(
            l.words,
            "16 GPUs a replica: 2 pipeline stages of 8 GPUs, on 2 nodes of 8; 1 stage \
             boundary crosses nodes, over the scale-out network (50 GB/s a GPU)."
        );
        plan.hardware.tp_degree = 2;
        plan.hardware.pp_degree = 6;
        let l = replica_layout(&plan);
        assert_eq!(
            l.nodes,
            vec![vec![0, 0, 1, 1, 2, 2, 3, 3], vec![4, 4, 5, 5]]
        );
        assert_eq!(l.crossings, 1);
        // TP 8 × PP 3 on nodes of 12: the second stage straddles both nodes.
        plan.hardware.tp_degree = 8;
        plan.hardware.pp_degree = 3;
        plan.hardware.gpus_per_node = 12;
        let l = replica_layout(&plan);
        assert_eq!(l.nodes[0][8..], [1, 1, 1, 1]);
        assert!(plan.hardware.tp_crosses_nodes());
        assert!(
            l.words.ends_with(
                "; a stage straddles two nodes, so the all-reduces ride the scale-out \
                 network (50 GB/s a GPU)."
            ),
            "{}",
            l.words
        );
        // TP 3 × PP 16 on nodes of 8: each GPU sends to the one three further on, and 9
        // of the 15 boundaries have such a pair in two nodes (those before stages 2, 3,
        // 5, 6, 8, 10, 11, 13 and 14).
        plan.hardware.tp_degree = 3;
        plan.hardware.pp_degree = 16;
        plan.hardware.gpus_per_node = 8;
        let crossing: Vec<u32> = (1..16)
            .filter(|&s| plan.hardware.stage_boundary_crosses_nodes(s))
            .collect();
        assert_eq!(crossing, [2, 3, 5, 6, 8, 10, 11, 13, 14]);
        presets::model("qwen3-30b-a3b")
            .expect("moe")
            .apply(&mut plan);
        plan.hardware.tp_degree = 1;
        plan.hardware.pp_degree = 1;
        plan.hardware.ep_degree = 16;
        let l = replica_layout(&plan);
        assert_eq!(l.nodes, vec![vec![0; 8], vec![0; 8]]);
        assert_eq!(
            l.words,
            "16 GPUs a replica: the routed experts split over them, each attending to its \
             own sequences, on 2 nodes of 8; the all-to-alls that send tokens to their \
             experts cross nodes, over the scale-out network (50 GB/s a GPU)."
        );
        plan.hardware.ep_degree = 1;
        plan.hardware.tp_degree = 16;
        plan.hardware.scaleout_bytes_per_s = 0.0;
        let l = replica_layout(&plan);
        assert_eq!(l.nodes.len(), 2);
        assert!(
            l.words.ends_with(
                "its all-reduces ride the scale-out network (bandwidth unknown: latency only)."
            ),
            "{}",
            l.words
        );
    }

    #[test]
    fn a_model_beyond_one_node_fits_two() {
        // DeepSeek-V3 in fp8, 671 GB, on H100s: room per GPU 72 − 2.673741824 GB, so
        // 671 / 69.326 = 9.68 → 10 GPUs, more than a node's 8. TP 8 × PP 2 gives each
        // of 16 GPUs 41.94 GB of weights and 27.39 GB of KV cache.
        let mut plan = Plan::default();
        plan.model.weight_dtype = crate::plan::Dtype::Fp8;
        presets::model("deepseek-v3").expect("v3").apply(&mut plan);
        plan.hardware.tp_degree = 8;
        let f = memory_fit(&plan);
        assert!(!f.weights_fit);
        assert_eq!(f.gpus_needed, Some(10));
        let why = f.reason.expect("a reason");
        assert!(
            why.ends_with(
                "on 8 GPUs; it needs 10 GPUs per replica, more than a node's 8: TP 8 × PP 2 \
                 over 2 nodes holds them"
            ),
            "{why}"
        );
        assert_eq!(beyond_a_node(8, 8), "");
        assert_eq!(beyond_a_node(30, 72), "");
        assert!(beyond_a_node(19, 8).contains("TP 8 × PP 3 over 3 nodes"));
        assert!(beyond_a_node(5, 4).contains("TP 4 × PP 2 over 2 nodes"));
        plan.hardware.pp_degree = 2;
        let f = memory_fit(&plan);
        assert!(f.weights_fit && f.holds_max_request, "{:?}", f.reason);
        assert_eq!(f.gpus_per_replica, 16);
        assert!((f.weight_bytes_per_gpu - 671e9 / 16.0).abs() < 1.0);
        let pool = 72e9 - 671e9 / 16.0 - (GIB + 1.6e9);
        assert!((f.kv_bytes_per_gpu - pool).abs() < 1.0);
        assert!((f.kv_capacity_tokens - 16.0 * pool / f.kv_bytes_per_token).abs() < 1e-3);
        // The latent cache is held by every GPU of a tensor-parallel group: 8 × 70,272
        // bytes a token here.
        assert_eq!(f.kv_bytes_per_token, 8.0 * 70_272.0);
        // Expert parallelism over the same 16 GPUs: each holds the dense 17.09 GB whole
        // and 1/16 of the 653.9 GB of experts, 57.96 GB, and the latents of its own
        // sequences only, 70,272 bytes a token: 3.3 times the tokens of TP 8 × PP 2.
        plan.hardware.tp_degree = 1;
        plan.hardware.pp_degree = 1;
        plan.hardware.ep_degree = 16;
        let e = memory_fit(&plan);
        assert!(e.weights_fit, "{:?}", e.reason);
        assert_eq!(e.gpus_per_replica, 16);
        assert!((e.weight_bytes_per_gpu - 57_960_527_360.0).abs() < 1.0);
        assert_eq!(e.kv_bytes_per_token, 70_272.0);
        let pool = 72e9 - 57_960_527_360.0 - (GIB + 1.6e9);
        assert!((e.kv_capacity_tokens - 16.0 * pool / 70_272.0).abs() < 1e-3);
        assert!(e.kv_capacity_tokens > 3.3 * f.kv_capacity_tokens);
    }

    #[test]
    fn a_cache_too_small_for_the_longest_request_says_so() {
        // 1 GB of pool: 1e9 / 131,072 = 7,629 tokens; a 6,000 + 2,000 = 8,000-token
        // request needs 8,000 × 131,072 = 1.048576 GB.
        let mut plan = Plan::default();
        plan.hardware.memory_bytes = 80e9;
        plan.hardware.mem_utilization = (16e9 + GIB + 1.6e9 + 1e9) / 80e9;
        plan.traffic.prompt.max = 6000;
        plan.traffic.output.max = 2000;
        let f = memory_fit(&plan);
        assert!(f.weights_fit);
        assert!((f.kv_bytes_per_gpu - 1e9).abs() < 1.0);
        assert_eq!(f.max_request_tokens, 8000);
        assert_eq!(f.max_request_kv_bytes, 8000.0 * 131_072.0);
        assert!(!f.holds_max_request);
        let why = f.reason.expect("a reason");
        assert!(
            why.contains("cannot hold one request of maximum length (8,000 tokens = the longest"),
            "{why}"
        );
        plan.traffic.output.max = 1000;
        assert!(memory_fit(&plan).holds_max_request);
        // The KV cache size an engine logged decides instead of the estimated pool.
        plan.engine.kv_cache_tokens = Some(5_000);
        let f = memory_fit(&plan);
        assert!(!f.holds_max_request);
        assert_eq!(f.kv_capacity_tokens, 5_000.0);
        assert!(f
            .reason
            .expect("a reason")
            .contains("(5,000 tokens, 0.66 GB)"));
        plan.engine.kv_cache_tokens = Some(7_000);
        assert!(memory_fit(&plan).holds_max_request);
    }

    #[test]
    fn the_longest_request_of_a_windowed_model_is_bounded_by_the_window() {
        // gpt-oss-120b: 2,048 bytes per layer per token, 18 global + 18 windowed (128).
        // A 100,000-token request: 2,048 × (18 × 100,000 + 18 × 128) = 3,691,118,592 bytes.
        let mut plan = Plan::default();
        plan.engine.kv_policy = KvPolicy::None;
        presets::model("gpt-oss-120b")
            .expect("gpt-oss")
            .apply(&mut plan);
        plan.traffic.prompt.max = 90_000;
        plan.traffic.output.max = 10_000;
        assert_eq!(memory_fit(&plan).max_request_kv_bytes, 3_691_118_592.0);
    }
}
