//! `goodput simulate`: one simulation point, with latency percentiles.

use goodput_core::sim::{replicate, simulate, SimConfig, SimReport, Summary, MAX_REPLICATIONS};
use serde_json::{json, Value};

use crate::args::Args;

/// Arrival rate simulated when `--request-rate` is absent (the article's point) [requests/s].
const DEFAULT_RATE_RPS: f64 = 20.0;

const USAGE: &str = "\
usage: goodput simulate [--plan FILE | --link URL] [plan flags] [--request-rate R]
                        [--seed S] [--replications N] [--json]

Simulates one continuous-batching replica at R requests/s (default 20) and prints the
joint SLO attainment with TTFT, TPOT, E2E and inter-token latency percentiles.
  --request-rate R    arrival rate [requests/s]
  --seed S            seed (default: the plan's run.seed)
  --replications N    independent seeds, 1..=1000 (default 1); N > 1 adds a 95% interval
  --json              print {attainment, ttft_s: {mean, p50, p90, p95, p99}, tpot_s, e2e_s, ...}
Plan flags include --max-num-seqs, --max-num-batched-tokens, --no-chunked-prefill,
--kv-policy none|reserve|paged, --num-requests, --warmup-requests, --input-len-median,
--input-len-sigma, --input-len-min, --input-len-max (and --output-len-*), --ttft-slo,
--tpot-slo, --params, --weight-bytes, --mem-bandwidth, --compute-flops,
--kv-bytes-per-token, --step-overhead.";

/// Runs the command.
pub fn run(args: &mut Args) -> Result<String, String> {
    if args.flag("--help") || args.flag("-h") {
        return Ok(USAGE.to_string());
    }
    let json = args.flag("--json");
    let rate = args.f64("--request-rate")?.unwrap_or(DEFAULT_RATE_RPS);
    // Read here, not as a plan override: a plan's run.replications is meant for searches.
    let replications = match args.u32("--replications")? {
        None => 1,
        Some(n) if (1..=MAX_REPLICATIONS).contains(&n) => n,
        Some(n) => {
            return Err(format!(
                "--replications: must be in 1..={MAX_REPLICATIONS}, got {n}"
            ))
        }
    };
    let plan = args.plan()?;
    args.clone().finish()?;
    let cfg = SimConfig::from_plan(&plan, rate).map_err(|e| match e {
        goodput_core::sim::SimError::Rate { .. } => format!("--request-rate: {e}"),
        e => e.to_string(),
    })?;
    let seed = plan.run.seed;
    let out = if replications == 1 {
        let r = simulate(&cfg, seed).map_err(|e| e.to_string())?;
        single_json(&r, rate, seed)
    } else {
        let r = replicate(&cfg, seed, replications).map_err(|e| e.to_string())?;
        let mut v = json!({
            "request_rate_rps": rate,
            "seed": seed,
            "replications": replications,
            "attainment": r.mean_attainment,
            "attainment_ci95": r.ci95,
            "attainment_by_replication": r.by_replication,
            "ttft_s": r.ttft_s,
            "tpot_s": r.tpot_s,
            "e2e_s": r.e2e_s,
            "itl_s": r.itl_s,
            "output_tokens_per_s": r.output_tokens_per_s,
            "mean_queue_len": r.mean_queue_len,
            "peak_queue_len": r.peak_queue_len,
            "preemptions": r.preemptions,
            "unfinished_requests": r.unfinished_requests,
            "steps": r.steps,
            "truncated": r.truncated,
        });
        if let Some(o) = v.as_object_mut() {
            o.insert("slo".into(), slo_json(&cfg));
        }
        v
    };
    if json {
        return serde_json::to_string_pretty(&out).map_err(|e| format!("simulate: {e}"));
    }
    Ok(text(&out))
}

fn slo_json(cfg: &SimConfig) -> Value {
    json!({ "ttft_s": cfg.slo.ttft_s, "tpot_s": cfg.slo.tpot_s, "e2e_s": cfg.slo.e2e_s })
}

fn single_json(r: &SimReport, rate: f64, seed: u64) -> Value {
    let mut v = serde_json::to_value(r).unwrap_or(Value::Null);
    if let Some(o) = v.as_object_mut() {
        o.insert("request_rate_rps".into(), json!(rate));
        o.insert("seed".into(), json!(seed));
        o.insert("replications".into(), json!(1));
    }
    v
}

fn num(v: &Value, key: &str) -> f64 {
    v.get(key).and_then(Value::as_f64).unwrap_or(f64::NAN)
}

fn summary(v: &Value, key: &str) -> Summary {
    let s = v.get(key).cloned().unwrap_or(Value::Null);
    Summary {
        mean: num(&s, "mean"),
        p50: num(&s, "p50"),
        p90: num(&s, "p90"),
        p95: num(&s, "p95"),
        p99: num(&s, "p99"),
    }
}

/// The result as a short table (times in ms).
fn text(v: &Value) -> String {
    let mut s = format!(
        "rate {} req/s, seed {}, {} replication(s)\nattainment {:.4}",
        num(v, "request_rate_rps"),
        v.get("seed").and_then(Value::as_u64).unwrap_or(0),
        v.get("replications").and_then(Value::as_u64).unwrap_or(1),
        num(v, "attainment"),
    );
    if let Some(ci) = v.get("attainment_ci95").and_then(Value::as_array) {
        let lo = ci.first().and_then(Value::as_f64).unwrap_or(f64::NAN);
        let hi = ci.get(1).and_then(Value::as_f64).unwrap_or(f64::NAN);
        s.push_str(&format!(" (95% CI {lo:.4} to {hi:.4})"));
    }
    s.push_str("\n\nmetric      mean_ms     p50_ms     p90_ms     p95_ms     p99_ms\n");
    for (name, key) in [
        ("ttft", "ttft_s"),
        ("tpot", "tpot_s"),
        ("e2e", "e2e_s"),
        ("itl", "itl_s"),
    ] {
        let m = summary(v, key);
        s.push_str(&format!(
            "{name:<8}{:>11.1}{:>11.1}{:>11.1}{:>11.1}{:>11.1}\n",
            m.mean * 1e3,
            m.p50 * 1e3,
            m.p90 * 1e3,
            m.p95 * 1e3,
            m.p99 * 1e3
        ));
    }
    s.push_str(&format!(
        "\noutput {:.0} tokens/s, queue mean {:.1} peak {}, preemptions {}, steps {}, unfinished {}{}",
        num(v, "output_tokens_per_s"),
        num(v, "mean_queue_len"),
        num(v, "peak_queue_len"),
        num(v, "preemptions"),
        num(v, "steps"),
        num(v, "unfinished_requests"),
        if v.get("truncated").and_then(Value::as_bool) == Some(true) {
            " (truncated at the step cap)"
        } else {
            ""
        }
    ));
    s
}
