//! `goodput presets`: every model and GPU preset with its figures and its source.

use goodput_core::plan::AttentionKind;
use goodput_core::presets::{ModelPreset, GPUS, MODELS};
use goodput_core::prices::OFFERS;

use clap::Command;

use crate::args::{json, Args};

/// The command and its flags.
pub fn command() -> Command {
    Command::new("presets")
        .about("list the model and GPU presets and the published GPU prices, with figures and sources (use an id with --model, --gpu or --price-offer)")
        .long_about(
            "Lists every model and GPU preset with its figures and its source, and the published \
             GPU prices with their provider, term, date and source. Use the ids with --model ID, \
             --gpu ID and --price-offer ID on any command that takes a plan; single-field flags \
             (--params, --memory-bytes, ...) still override a preset's figures.",
        )
        .arg(json(
            "The presets as JSON: {\"models\": [...], \"gpus\": [...]}",
        ))
}

/// Runs the command.
pub fn run(args: &mut Args) -> Result<String, String> {
    let json = args.flag("--json");
    if json {
        let v = serde_json::json!({ "models": MODELS, "gpus": GPUS, "prices": OFFERS });
        return serde_json::to_string_pretty(&v).map_err(|e| format!("presets: {e}"));
    }
    let mut out = String::from("models\n");
    out.push_str(&format!(
        "  {:<18} {:>9} {:>9} {:>6} {:>8} {:>8} {:>6}  {:<28} {}\n",
        "id",
        "params[B]",
        "active[B]",
        "layers",
        "kv_heads",
        "head_dim",
        "hidden",
        "attention",
        "source"
    ));
    for m in MODELS {
        out.push_str(&format!(
            "  {:<18} {:>9.2} {:>9.2} {:>6} {:>8} {:>8} {:>6}  {:<28} {}\n",
            m.id,
            m.params / 1e9,
            m.active_params / 1e9,
            m.layers,
            m.kv_heads,
            m.head_dim,
            m.hidden_size,
            attention(m),
            m.source
        ));
    }
    out.push_str("\ngpus\n");
    out.push_str(&format!(
        "  {:<12} {:>9} {:>10} {:>9} {:>7} {:>9} {:>7} {:>9} {:>8}  {}\n",
        "id",
        "mem[GB]",
        "bw[TB/s]",
        "bf16[TF]",
        "fp8[TF]",
        "achieved",
        "$/hour",
        "link[GB/s]",
        "ar[us]",
        "source"
    ));
    for g in GPUS {
        out.push_str(&format!(
            "  {:<12} {:>9.0} {:>10.2} {:>9.1} {:>7.1} {:>9.2} {:>7.2} {:>10.0} {:>8.0}  {}; link: {}\n",
            g.id,
            g.memory_bytes / 1e9,
            g.mem_bandwidth_bytes_per_s / 1e12,
            g.bf16_dense_flops_per_s / 1e12,
            g.fp8_dense_flops_per_s / 1e12,
            g.achievable_fraction,
            g.gpu_hour_usd,
            g.interconnect_bytes_per_s / 1e9,
            g.allreduce_latency_s * 1e6,
            g.source,
            g.interconnect
        ));
    }
    out.push_str("\nprices (--price-offer ID; per GPU-hour, as their sources published them)\n");
    out.push_str(&format!(
        "  {:<30} {:<10} {:<22} {:>8}  {:<8} {}\n",
        "id", "gpu", "term", "$/hour", "dated", "offer and source"
    ));
    for o in OFFERS {
        out.push_str(&format!(
            "  {:<30} {:<10} {:<22} {:>8.2}  {:<8} {}, {}: {}\n",
            o.id,
            o.gpu,
            o.term.words(),
            o.usd_per_gpu_hour,
            o.dated,
            o.provider,
            o.offer,
            o.source
        ));
    }
    Ok(out.trim_end().to_string())
}

/// The attention kind in a few words: `gqa`, `mla 512+64`, `gqa; 18 layers window 128`.
fn attention(m: &ModelPreset) -> String {
    let kind = match m.attention {
        AttentionKind::GroupedQuery => "gqa".to_string(),
        AttentionKind::MultiHeadLatent => {
            format!("mla {}+{}", m.kv_lora_rank, m.qk_rope_head_dim)
        }
    };
    if m.sliding_window_layers == 0 {
        return kind;
    }
    format!(
        "{kind}; {} layers window {}",
        m.sliding_window_layers, m.sliding_window_tokens
    )
}
