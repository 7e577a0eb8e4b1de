//! Engine launch flags for a set of knobs: `vllm serve` and SGLang's `launch_server`.

use super::Knobs;
use crate::plan::{Dtype, Plan};
use serde::{Deserialize, Serialize};

/// Command lines that start an engine with the plan's settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchFlags {
    /// `vllm serve ...`.
    pub vllm: String,
    /// `python -m sglang.launch_server ...`.
    pub sglang: String,
}

/// The Hugging Face model name of a model preset id, where known.
pub fn hf_model_name(preset: &str) -> Option<&'static str> {
    Some(match preset {
        "article-8b" | "llama-3.1-8b" => "meta-llama/Llama-3.1-8B-Instruct",
        "llama-3.1-70b" => "meta-llama/Llama-3.1-70B-Instruct",
        "llama-3.1-405b" => "meta-llama/Llama-3.1-405B-Instruct",
        "qwen2.5-7b" => "Qwen/Qwen2.5-7B-Instruct",
        "qwen2.5-72b" => "Qwen/Qwen2.5-72B-Instruct",
        "mistral-7b" => "mistralai/Mistral-7B-Instruct-v0.3",
        "mixtral-8x7b" => "mistralai/Mixtral-8x7B-Instruct-v0.1",
        _ => return None,
    })
}

/// Launch flags for `knobs` on the plan's model and hardware.
///
/// Chunked prefill off becomes `--no-enable-chunked-prefill` with a budget of the
/// longest prompt plus the longest output (vLLM needs the budget to hold a whole
/// sequence then), and `--chunked-prefill-size -1` for SGLang. An unknown model
/// prints as `<model>`. FP8 weights add `--quantization fp8`; an FP8 KV cache adds
/// `--kv-cache-dtype`. Pipeline stages add `--pipeline-parallel-size` (vLLM) and
/// `--pp-size` (SGLang); expert parallelism vLLM's data-parallel ranks with
/// `--enable-expert-parallel` and SGLang's DP attention with `--ep-size`; a replica over
/// several nodes SGLang's `--nnodes`.
pub fn launch_flags(plan: &Plan, knobs: &Knobs) -> LaunchFlags {
    let model = hf_model_name(&plan.model.preset).unwrap_or("<model>");
    let util = format!("{:.2}", plan.hardware.mem_utilization.clamp(0.0, 1.0));
    let tp = plan.hardware.tp_degree.max(1);
    let n = knobs.max_num_seqs;
    let mut vllm = format!("vllm serve {model} --max-num-seqs {n}");
    let mut sglang =
        format!("python -m sglang.launch_server --model-path {model} --max-running-requests {n}");
    if knobs.chunked_prefill {
        let m = knobs.max_num_batched_tokens;
        vllm.push_str(&format!(
            " --max-num-batched-tokens {m} --enable-chunked-prefill"
        ));
        sglang.push_str(&format!(" --chunked-prefill-size {m}"));
    } else {
        let whole = plan.prompt_cap() as u64 + plan.output_cap() as u64;
        vllm.push_str(&format!(
            " --max-num-batched-tokens {whole} --no-enable-chunked-prefill"
        ));
        sglang.push_str(" --chunked-prefill-size -1");
    }
    vllm.push_str(&format!(" --gpu-memory-utilization {util}"));
    sglang.push_str(&format!(" --mem-fraction-static {util}"));
    if tp > 1 {
        vllm.push_str(&format!(" --tensor-parallel-size {tp}"));
        sglang.push_str(&format!(" --tp {tp}"));
    }
    // Pipeline stages; a replica over several nodes launches SGLang on each of them
    // (with its own --node-rank), and vLLM over a Ray cluster that spans them.
    let pp = plan.hardware.pp_degree.max(1);
    if pp > 1 {
        vllm.push_str(&format!(" --pipeline-parallel-size {pp}"));
        sglang.push_str(&format!(" --pp-size {pp}"));
    }
    // Experts split over data-parallel ranks, one GPU each.
    let ep = plan.hardware.ep_degree.max(1);
    if ep > 1 {
        vllm.push_str(&format!(
            " --data-parallel-size {ep} --enable-expert-parallel"
        ));
        sglang.push_str(&format!(
            " --tp {ep} --dp {ep} --enable-dp-attention --ep-size {ep}"
        ));
    }
    let nodes = plan.hardware.nodes_per_replica();
    if nodes > 1 {
        sglang.push_str(&format!(" --nnodes {nodes}"));
    }
    if plan.model.weight_dtype == Dtype::Fp8 {
        vllm.push_str(" --quantization fp8");
        sglang.push_str(" --quantization fp8");
    }
    if plan.model.kv_dtype == Dtype::Fp8 {
        vllm.push_str(" --kv-cache-dtype fp8");
        sglang.push_str(" --kv-cache-dtype fp8_e5m2");
    }
    LaunchFlags { vllm, sglang }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn article_flags() {
        let plan = Plan::default();
        let f = launch_flags(&plan, &Knobs::of(&plan));
        assert_eq!(
            f.vllm,
            "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-seqs 128 --max-num-batched-tokens 512 --enable-chunked-prefill --gpu-memory-utilization 0.90"
        );
        assert_eq!(
            f.sglang,
            "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --max-running-requests 128 --chunked-prefill-size 512 --mem-fraction-static 0.90"
        );
    }

    #[test]
    fn chunking_off_tp_and_fp8() {
        let mut plan = Plan::default();
        plan.model.preset = "custom".into();
        plan.hardware.tp_degree = 4;
        plan.model.weight_dtype = Dtype::Fp8;
        plan.model.kv_dtype = Dtype::Fp8;
        let knobs = Knobs {
            max_num_seqs: 64,
            max_num_batched_tokens: 0,
            chunked_prefill: false,
        };
        let f = launch_flags(&plan, &knobs);
        assert!(f.vllm.starts_with("vllm serve <model> --max-num-seqs 64 --max-num-batched-tokens 9024 --no-enable-chunked-prefill"), "{}", f.vllm);
        assert!(f
            .vllm
            .ends_with("--tensor-parallel-size 4 --quantization fp8 --kv-cache-dtype fp8"));
        assert!(f.sglang.contains("--chunked-prefill-size -1"));
        assert!(f.sglang.contains("--tp 4"));
        assert!(!f.vllm.contains("pipeline") && !f.sglang.contains("--pp-size"));
        // Two stages of 8 GPUs: two nodes.
        plan.hardware.tp_degree = 8;
        plan.hardware.pp_degree = 2;
        let f = launch_flags(&plan, &knobs);
        assert!(
            f.vllm
                .contains("--tensor-parallel-size 8 --pipeline-parallel-size 2 "),
            "{}",
            f.vllm
        );
        assert!(
            f.sglang.contains("--tp 8 --pp-size 2 --nnodes 2 "),
            "{}",
            f.sglang
        );
        // Experts over 16 data-parallel ranks.
        plan.hardware.tp_degree = 1;
        plan.hardware.pp_degree = 1;
        plan.hardware.ep_degree = 16;
        let f = launch_flags(&plan, &knobs);
        assert!(
            f.vllm
                .contains("--data-parallel-size 16 --enable-expert-parallel "),
            "{}",
            f.vllm
        );
        assert!(!f.vllm.contains("--tensor-parallel-size"), "{}", f.vllm);
        assert!(
            f.sglang
                .contains("--tp 16 --dp 16 --enable-dp-attention --ep-size 16 --nnodes 2 "),
            "{}",
            f.sglang
        );
        assert_eq!(
            hf_model_name("qwen2.5-72b"),
            Some("Qwen/Qwen2.5-72B-Instruct")
        );
        assert_eq!(hf_model_name("nope"), None);
    }
}
