//! `goodput presets` and the `--model` / `--gpu` flags, run as a user would run them.

mod common;

use common::{failure, goodput, json, stdout};

#[test]
fn presets_lists_every_model_and_gpu_with_its_source() {
    let text = stdout(&goodput(&["presets"]));
    for id in [
        "article-8b",
        "llama-3.1-70b",
        "mixtral-8x7b",
        "h100-sxm",
        "mi300x",
    ] {
        assert!(text.contains(id), "{id} missing from {text}");
    }
    assert!(
        text.contains("NVIDIA H200 Tensor Core GPU datasheet"),
        "{text}"
    );
    let v = json(&goodput(&["presets", "--json"]));
    let models = v["models"].as_array().expect("models");
    let gpus = v["gpus"].as_array().expect("gpus");
    assert_eq!(
        models.len(),
        goodput_core::presets::MODELS.len(),
        "every model"
    );
    assert_eq!(gpus.len(), goodput_core::presets::GPUS.len(), "every GPU");
    for row in models.iter().chain(gpus) {
        assert!(
            row["source"].as_str().is_some_and(|s| !s.is_empty()),
            "{row}"
        );
    }
    let h200 = gpus.iter().find(|g| g["id"] == "h200").expect("h200");
    assert_eq!(h200["mem_bandwidth_bytes_per_s"], 4.8e12);
    let err = failure(&goodput(&["presets", "--bogus"]), "presets --bogus");
    assert!(err.contains("--bogus: unknown flag"), "{err}");
}

#[test]
fn model_and_gpu_flags_fill_the_plan_and_later_flags_override() {
    let link = stdout(&goodput(&[
        "link",
        "--tp-comm-overhead",
        "0",
        "--memory-bytes",
        "100e9",
        "--model",
        "llama-3.1-70b",
        "--gpu",
        "h200",
        "--tp",
        "2",
    ]));
    let plan = json(&goodput(&["decode", link.trim()]));
    assert_eq!(plan["model"]["preset"], "llama-3.1-70b");
    assert_eq!(plan["model"]["layers"], 80);
    assert_eq!(plan["model"]["params"], 70.6e9);
    assert_eq!(plan["hardware"]["preset"], "h200");
    assert_eq!(plan["hardware"]["mem_bandwidth_bytes_per_s"], 4.8e12);
    assert_eq!(plan["hardware"]["memory_bytes"], 100e9, "flag beats preset");
    assert_eq!(plan["hardware"]["tp_degree"], 2);
}

#[test]
fn an_unknown_preset_lists_the_known_ids() {
    let err = failure(&goodput(&["plan", "--gpu", "h900"]), "--gpu h900");
    assert!(
        err.contains("--gpu: unknown GPU 'h900'; known: h100-sxm"),
        "{err}"
    );
    for g in goodput_core::presets::GPUS {
        assert!(err.contains(g.id), "{err}");
    }
    let err = failure(&goodput(&["search", "--model", "nope"]), "--model nope");
    assert!(
        err.contains("--model: unknown model 'nope'; known: article-8b"),
        "{err}"
    );
}

/// Small simulations so the tests stay quick.
const QUICK: [&str; 6] = [
    "--num-requests",
    "300",
    "--warmup-requests",
    "30",
    "--replications",
    "2",
];

#[test]
fn plan_shows_the_kv_capacity_and_the_memory_fit() {
    let mut args = vec!["plan", "--no-sweep"];
    args.extend(QUICK);
    let mut with_json = args.clone();
    with_json.push("--json");
    let v = json(&goodput(&with_json));
    // H100 80 GB × 0.9 − 16 GB weights − (1 GiB + 1.6 GB) reserve, / 131,072 bytes/token.
    let pool = 72e9 - 16e9 - (1024.0 * 1024.0 * 1024.0 + 1.6e9);
    let tokens = v["memory"]["kv_capacity_tokens"].as_f64().expect("tokens");
    assert!((tokens - pool / 131_072.0).abs() < 1e-6, "{tokens}");
    assert_eq!(v["memory"]["weights_fit"], true);
    let text = stdout(&goodput(&args));
    assert!(
        text.contains("| KV cache | 406,847 tokens per replica"),
        "{text}"
    );
    // Llama 3.1 70B in bf16 on two H100s: 70.6 GB of weights per GPU do not fit.
    let mut args = vec![
        "plan",
        "--no-sweep",
        "--model",
        "llama-3.1-70b",
        "--tp",
        "2",
        "--kv-policy",
        "none",
    ];
    args.extend(QUICK);
    let text = stdout(&goodput(&args));
    assert!(
        text.contains("the weights do not fit") && text.contains("it needs 3 GPUs per replica"),
        "{text}"
    );
}
