//! `goodput simulate`: one simulation point, with latency percentiles.

use goodput_core::format::rps;
use goodput_core::plan::{Arrival, MAX_REPLICATIONS};
use goodput_core::sim::SimConfigOf;
use goodput_core::sim::{replicate, simulate, SimConfig, SimReport, Summary};
use serde_json::{json, Value};

use clap::Command;

use crate::args::{json, real, whole, Args};

/// Arrival rate simulated when `--request-rate` is absent (the article's point) [requests/s].
const DEFAULT_RATE_RPS: f64 = 20.0;

/// The command and its own flags; the plan flags are added from the registry.
pub fn command() -> Command {
    Command::new("simulate")
        .about("run one simulation point (--request-rate R) and print latency percentiles")
        .long_about(
            "Simulates one continuous-batching replica at R requests/s (default 20) and prints \
             the SLO attainment with TTFT, TPOT, E2E and inter-token latency percentiles, and \
             the achieved throughput (completed requests/s). A closed loop (--arrival closed \
             --concurrency N [--think-time S]) sends each client's next request S seconds \
             after its previous one ended: the rate is an outcome, not an input. \
             --max-concurrency N caps an open loop at N requests in flight.",
        )
        .arg(real(
            "request-rate",
            "R",
            "Arrival rate [requests/s] (default 20); ignored by a closed loop",
        ))
        .arg(whole(
            "replications",
            "N",
            format!(
                "Independent seeds of this one point (default 1); more than 1 adds a 95% \
                 interval [whole number in 1..={MAX_REPLICATIONS}]"
            ),
        ))
        .arg(json(
            "Print {attainment, completed_rps, ttft_s: {mean, p50, p90, p95, p99}, tpot_s, e2e_s, ...}",
        ))
}

/// Runs the command.
pub fn run(args: &mut Args) -> Result<String, String> {
    let json = args.flag("--json");
    let rate = args.f64("--request-rate").unwrap_or(DEFAULT_RATE_RPS);
    // Read here, not as a plan override: a plan's run.replications is meant for searches.
    let replications = match args.u32("--replications") {
        None => 1,
        Some(n) if (1..=MAX_REPLICATIONS).contains(&n) => n,
        Some(n) => {
            return Err(format!(
                "--replications: must be in 1..={MAX_REPLICATIONS}, got {n}"
            ))
        }
    };
    let plan = args.plan()?;
    let cfg = SimConfig::from_plan(&plan, rate).map_err(|e| match e {
        goodput_core::sim::SimError::Rate { .. }
        | goodput_core::sim::SimError::RateTooLow { .. } => {
            format!("--request-rate: {e}")
        }
        e => e.to_string(),
    })?;
    let seed = plan.run.seed;
    let mut out = if replications == 1 {
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
            "completed_rps": r.completed_rps,
            "mean_queue_len": r.mean_queue_len,
            "mean_running": r.mean_running,
            "peak_queue_len": r.peak_queue_len,
            "preemptions": r.preemptions,
            "unfinished_requests": r.unfinished_requests,
            "steps": r.steps,
            "truncated": r.truncated,
        });
        if let (false, Some(o)) = (r.classes.is_empty(), v.as_object_mut()) {
            o.insert("classes".into(), json!(r.classes));
        }
        if let Some(o) = v.as_object_mut() {
            o.insert("slo".into(), slo_json(&cfg));
        }
        v
    };
    // A closed loop has no input rate: say so, and name the clients instead.
    if let (
        Arrival::Closed {
            concurrency,
            think_s,
        },
        Some(o),
    ) = (plan.traffic.arrival, out.as_object_mut())
    {
        o.insert("request_rate_rps".into(), Value::Null);
        o.insert("clients".into(), json!(concurrency));
        o.insert("think_s".into(), json!(think_s));
    }
    if let (false, Some(o)) = (plan.slo.mode.is_joint(), out.as_object_mut()) {
        o.insert("slo_mode".into(), json!(plan.slo.mode.name()));
    }
    // Each class's results by name (one replication reports them).
    if let Some(cs) = out.get_mut("classes").and_then(Value::as_array_mut) {
        for (c, class) in cs.iter_mut().zip(&plan.classes) {
            if let Some(o) = c.as_object_mut() {
                o.insert("name".into(), json!(class.name));
            }
        }
    }
    if let (Some(cap), Some(o)) = (plan.traffic.max_concurrency, out.as_object_mut()) {
        if !matches!(plan.traffic.arrival, Arrival::Closed { .. }) {
            o.insert("max_concurrency".into(), json!(cap));
        }
    }
    if let (Some(r), Some(o)) = (plan.routing, out.as_object_mut()) {
        o.insert("routing".into(), json!(r));
    }
    if json {
        return serde_json::to_string_pretty(&out).map_err(|e| format!("simulate: {e}"));
    }
    Ok(text(&out))
}

fn slo_json(cfg: &SimConfig) -> Value {
    let mut v =
        json!({ "ttft_s": cfg.slo.ttft_s, "tpot_s": cfg.slo.tpot_s, "e2e_s": cfg.slo.e2e_s });
    if let (false, Some(o)) = (cfg.slo.mode.is_joint(), v.as_object_mut()) {
        o.insert("mode".into(), json!(cfg.slo.mode.name()));
    }
    v
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
    let load = match v.get("clients").and_then(Value::as_u64) {
        Some(n) => format!(
            "closed loop, {n} clients, think time {} s (--request-rate ignored)",
            num(v, "think_s")
        ),
        None => match v.get("max_concurrency").and_then(Value::as_u64) {
            Some(cap) => format!(
                "rate {} req/s, at most {cap} in flight",
                num(v, "request_rate_rps")
            ),
            None => format!("rate {} req/s", num(v, "request_rate_rps")),
        },
    };
    let mut s = format!(
        "{load}, seed {}, {} replication(s)\nattainment {:.4}",
        v.get("seed").and_then(Value::as_u64).unwrap_or(0),
        v.get("replications").and_then(Value::as_u64).unwrap_or(1),
        num(v, "attainment"),
    );
    if v.get("slo_mode").and_then(Value::as_str) == Some("marginal") {
        s.push_str(" (marginal: the worst objective's share, each objective on its own)");
    }
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
        "\nthroughput {} req/s completed, mean running {:.1}",
        rps(num(v, "completed_rps")),
        num(v, "mean_running"),
    ));
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
    if num(v, "prefix_hit_rate") > 0.0 {
        s.push_str(&format!(
            "
prefix cache: {:.1}% of prompt tokens found cached, {} tokens evicted",
            num(v, "prefix_hit_rate") * 100.0,
            num(v, "prefix_evicted_tokens")
        ));
    }
    if let Some(r) = v.get("routing") {
        s.push_str(&format!(
            "
routing: {} replicas, {} router (figures per replica)",
            num(r, "replicas"),
            r.get("router").and_then(Value::as_str).unwrap_or("?")
        ));
    }
    if let Some(cs) = v.get("classes").and_then(Value::as_array) {
        s.push_str("\n\nclass          attainment  ttft_p99_ms  e2e_p99_ms  requests");
        for c in cs {
            s.push_str(&format!(
                "\n{:<14}{:>10.4}{:>13.1}{:>12.1}{:>10}",
                c.get("name").and_then(Value::as_str).unwrap_or("?"),
                num(c, "attainment"),
                summary(c, "ttft_s").p99 * 1e3,
                summary(c, "e2e_s").p99 * 1e3,
                num(c, "measured_requests"),
            ));
        }
    }
    s
}
