//! Writers of each format, for synthetic measurements in tests and examples.
//!
//! Each writes the fields its importer reads, plus the usual companion fields with
//! plausible values, so that `import_file` reads a written point back as it was
//! (floats to the last bit, or within rounding where a unit is converted), with these
//! limits of the formats themselves:
//! - [`vllm_json`]: one point per file; per-request arrays only when the point has
//!   `requests` (failed requests are written as vLLM writes them, output length 0 and
//!   an error); `latencies` only when the point has end-to-end statistics.
//! - [`guidellm_json`]: GuideLLM has no arrival CV but 0 (`constant`) and 1 (`poisson`):
//!   a CV below 0.5 is written as `constant`, else `poisson`. One inter-token latency
//!   is written, from `tpot`; it reads back as both `tpot` and `itl`. A statistic the
//!   point lacks is written as `null` (GuideLLM itself always writes all eleven
//!   percentiles).
//! - [`table_csv`]: no per-request lengths; a median is written as `p50`, so a 50th
//!   percentile in `percentiles` is not kept apart from the median.

use super::vllm::METRICS;
use super::{LatencyStats, MeasuredPoint};
use crate::plan::MeasuredLoad;
use serde_json::{json, Map, Value};

/// A placeholder for Python's bare `Infinity` token, swapped in after serializing.
const INF: &str = "__python_bare_Infinity__";

fn python_dump(v: &Value) -> String {
    // Serializing a `Value` cannot fail: its map keys are strings.
    let s = serde_json::to_string(v).unwrap_or_default();
    s.replace(&format!("\"{INF}\""), "Infinity")
}

/// Python's `str(p)` of a percent: `99`, `99.9`.
fn p_word(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{}", p as i64)
    } else {
        format!("{p}")
    }
}

/// A count written as JSON: an integer when whole, else the float.
fn whole_or_float(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        json!(x as i64)
    } else {
        json!(x)
    }
}

fn metric<'a>(p: &'a MeasuredPoint, m: &str) -> &'a LatencyStats {
    match m {
        "ttft" => &p.ttft,
        "tpot" => &p.tpot,
        "itl" => &p.itl,
        _ => &p.e2e,
    }
}

/// A plausible standard deviation from the statistics given [s].
fn spread(s: &LatencyStats) -> f64 {
    let centre = s.median_s.or(s.mean_s).unwrap_or(0.0);
    let top = s.percentiles.last().map_or(centre, |&(_, v)| v);
    ((top - centre) / 2.33).abs()
}

/// One point as a `vllm bench serve --save-result` file (with `--save-detailed` arrays
/// when the point has per-request lengths).
pub fn vllm_json(p: &MeasuredPoint) -> String {
    let mut o = Map::new();
    let engine = p.engine.clone().unwrap_or_else(|| "vllm".into());
    let model = p.model.clone().unwrap_or_default();
    let (rate, burstiness, cap) = match p.load {
        MeasuredLoad::Rate { rate_rps, cv } => {
            let b = if cv > 0.0 {
                json!(1.0 / (cv * cv))
            } else {
                json!(INF)
            };
            (
                json!(rate_rps),
                b,
                p.max_concurrency.map(|c| json!(c)).unwrap_or(Value::Null),
            )
        }
        MeasuredLoad::Concurrency { concurrency } => (json!("inf"), json!(1.0), json!(concurrency)),
    };
    let n = f64::from(p.completed);
    let total_in = p.mean_prompt_tokens * n;
    let total_out = p.mean_output_tokens * n;
    let dur = p.duration_s;
    let per_s = |x: f64| if dur > 0.0 { x / dur } else { 0.0 };
    for (k, v) in [
        ("date", json!("20250101-120000")),
        ("endpoint_type", json!(engine)),
        ("backend", json!(engine)),
        ("label", Value::Null),
        ("model_id", json!(model)),
        ("tokenizer_id", json!(model)),
        ("num_prompts", json!(p.completed + p.failed)),
        ("request_rate", rate),
        ("burstiness", burstiness),
        ("max_concurrency", cap),
        ("duration", json!(dur)),
        ("completed", json!(p.completed)),
        ("failed", json!(p.failed)),
        ("total_input_tokens", whole_or_float(total_in)),
        ("total_output_tokens", whole_or_float(total_out)),
        ("request_throughput", json!(p.achieved_rps)),
        ("request_goodput", Value::Null),
        ("output_throughput", json!(per_s(total_out))),
        ("total_token_throughput", json!(per_s(total_in + total_out))),
        ("max_output_tokens_per_s", json!(per_s(total_out) * 1.3)),
        (
            "max_concurrent_requests",
            json!(p.max_concurrency.unwrap_or(1)),
        ),
    ] {
        o.insert(k.into(), v);
    }
    for m in METRICS {
        let s = metric(p, m);
        if s.is_empty() {
            continue;
        }
        if let Some(x) = s.mean_s {
            o.insert(format!("mean_{m}_ms"), json!(x * 1e3));
        }
        if let Some(x) = s.median_s {
            o.insert(format!("median_{m}_ms"), json!(x * 1e3));
        }
        o.insert(format!("std_{m}_ms"), json!(spread(s) * 1e3));
        for &(pct, x) in &s.percentiles {
            o.insert(format!("p{}_{m}_ms", p_word(pct)), json!(x * 1e3));
        }
    }
    if !p.requests.is_empty() {
        let ttft = p.ttft.median_s.or(p.ttft.mean_s).unwrap_or(0.05);
        let tpot = p.tpot.median_s.or(p.tpot.mean_s).unwrap_or(0.02);
        let itl_count: u64 = p
            .requests
            .iter()
            .map(|r| u64::from(r.output_tokens.saturating_sub(1)))
            .sum();
        let mut ins = Vec::new();
        let mut outs = Vec::new();
        let mut ttfts = Vec::new();
        let mut itls = Vec::new();
        let mut lats = Vec::new();
        let mut errors = Vec::new();
        for r in &p.requests {
            let gaps = r.output_tokens.saturating_sub(1);
            ins.push(json!(r.prompt_tokens));
            outs.push(json!(r.output_tokens));
            ttfts.push(json!(ttft));
            if itl_count <= 100_000 {
                itls.push(json!(vec![tpot; gaps as usize]));
            }
            lats.push(json!(ttft + tpot * f64::from(gaps)));
            errors.push(json!(""));
        }
        let first_prompt = p.requests[0].prompt_tokens;
        for _ in 0..p.failed.min(10_000) {
            ins.push(json!(first_prompt));
            outs.push(json!(0));
            ttfts.push(json!(0.0));
            if itl_count <= 100_000 {
                itls.push(json!([]));
            }
            lats.push(json!(0.0));
            errors.push(json!("Server disconnected"));
        }
        let texts: Vec<Value> = errors.iter().map(|_| json!("")).collect();
        o.insert("input_lens".into(), Value::Array(ins));
        o.insert("output_lens".into(), Value::Array(outs));
        o.insert("ttfts".into(), Value::Array(ttfts));
        if itl_count <= 100_000 {
            o.insert("itls".into(), Value::Array(itls));
        }
        if !p.e2e.is_empty() {
            o.insert("latencies".into(), Value::Array(lats));
        }
        o.insert("generated_texts".into(), Value::Array(texts));
        o.insert("errors".into(), Value::Array(errors));
    }
    python_dump(&Value::Object(o))
}

/// A GuideLLM distribution summary [file unit] of the given statistics [s].
fn distribution(s: &LatencyStats, scale: f64, count: u32) -> Value {
    let v = |x: Option<f64>| x.map_or(Value::Null, |x| json!(x * scale));
    let mut pct = Map::new();
    for (key, p) in super::guidellm::PERCENTILES {
        pct.insert(
            key.into(),
            v(s.percentiles.iter().find(|q| q.0 == p).map(|q| q.1)),
        );
    }
    let known: Vec<f64> = s
        .mean_s
        .iter()
        .chain(s.median_s.iter())
        .chain(s.percentiles.iter().map(|(_, x)| x))
        .copied()
        .collect();
    let lo = known.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = known.iter().copied().fold(0.0, f64::max);
    let sd = spread(s) * scale;
    let mean = s.mean_s.or(s.median_s).unwrap_or(0.0) * scale;
    json!({
        "mean": v(s.mean_s),
        "median": v(s.median_s),
        "mode": v(s.median_s),
        "variance": sd * sd,
        "std_dev": sd,
        "min": if lo.is_finite() { lo * scale } else { 0.0 },
        "max": hi * scale,
        "count": count,
        "total_sum": mean * f64::from(count),
        "percentiles": Value::Object(pct),
        "pdf": Value::Null,
    })
}

/// A distribution of one value (a token count, a rate) with no spread.
fn flat(x: f64, count: u32) -> Value {
    let mut pct = Map::new();
    for (key, _) in super::guidellm::PERCENTILES {
        pct.insert(key.into(), json!(x));
    }
    json!({
        "mean": x, "median": x, "mode": x, "variance": 0.0, "std_dev": 0.0,
        "min": x, "max": x, "count": count, "total_sum": x * f64::from(count),
        "percentiles": Value::Object(pct), "pdf": Value::Null,
    })
}

/// Wraps a successful-requests distribution in GuideLLM's status breakdown.
fn by_status(successful: Value, failed: u32) -> Value {
    let empty = flat(0.0, 0);
    let mut errored = empty.clone();
    errored["count"] = json!(failed);
    json!({ "successful": successful.clone(), "errored": errored, "incomplete": empty, "total": successful })
}

/// Points as one GuideLLM JSON report (current layout), one benchmark per point.
pub fn guidellm_json(points: &[MeasuredPoint]) -> String {
    let mut start = 1_735_732_800.0_f64;
    let mut benchmarks = Vec::new();
    for (k, p) in points.iter().enumerate() {
        let strategy = match p.load {
            MeasuredLoad::Concurrency { concurrency: 1 } => {
                json!({"type_": "synchronous", "worker_count": 1, "max_concurrency": 1})
            }
            MeasuredLoad::Concurrency { concurrency } => {
                json!({"type_": "concurrent", "streams": concurrency, "rampup_duration": 0.0, "worker_count": null, "max_concurrency": null})
            }
            MeasuredLoad::Rate { rate_rps, cv } => {
                let kind = if cv < 0.5 { "constant" } else { "poisson" };
                let mut s = json!({"type_": kind, "rate": rate_rps, "worker_count": null, "max_concurrency": p.max_concurrency});
                if kind == "poisson" {
                    s["random_seed"] = json!(42);
                }
                s
            }
        };
        let n = p.completed;
        let end = start + p.duration_s;
        let ttft_ms = p.ttft.mean_s.unwrap_or(0.0) * 1e3;
        let itl_ms = p.tpot.mean_s.unwrap_or(0.0) * 1e3;
        let out = p.mean_output_tokens.max(1.0);
        let tpot_incl_first = (ttft_ms + itl_ms * (out - 1.0)) / out;
        let requests: Vec<Value> = p
            .requests
            .iter()
            .enumerate()
            .map(|(i, r)| {
                json!({
                    "type_": "generative_request_stats",
                    "request_id": format!("req-{k}-{i}"),
                    "prompt_tokens": r.prompt_tokens,
                    "output_tokens": r.output_tokens,
                    "total_tokens": u64::from(r.prompt_tokens) + u64::from(r.output_tokens),
                })
            })
            .collect();
        benchmarks.push(json!({
            "type_": "generative_benchmark",
            "config": {
                "id_": format!("bench-{k}"),
                "run_id": "run-0",
                "run_index": k,
                "strategy": strategy,
                "constraints": {},
                "sample_size": null,
                "profile": {"type_": "sweep"},
                "requests": {},
                "backend": {
                    "kind": p.engine.clone().unwrap_or_else(|| "openai_http".into()),
                    "target": "http://localhost:8000",
                    "model": p.model.clone().unwrap_or_default(),
                    "request_format": "/v1/completions",
                },
                "environment": {},
            },
            "scheduler_metrics": {
                "start_time": start, "request_start_time": start,
                "measure_start_time": start, "measure_end_time": end,
                "request_end_time": end, "end_time": end,
                "requests_made": {"successful": n, "errored": p.failed, "incomplete": 0, "total": n + p.failed},
            },
            "start_time": start,
            "end_time": end,
            "duration": p.duration_s,
            "metrics": {
                "request_totals": {"successful": n, "errored": p.failed, "incomplete": 0, "total": n + p.failed},
                "requests_per_second": by_status(flat(p.achieved_rps, n), p.failed),
                "request_concurrency": by_status(flat(p.achieved_rps * p.e2e.mean_s.unwrap_or(0.0), n), p.failed),
                "request_latency": by_status(distribution(&p.e2e, 1.0, n), p.failed),
                "prompt_token_count": by_status(flat(p.mean_prompt_tokens, n), p.failed),
                "output_token_count": by_status(flat(p.mean_output_tokens, n), p.failed),
                "total_token_count": by_status(flat(p.mean_prompt_tokens + p.mean_output_tokens, n), p.failed),
                "time_to_first_token_ms": by_status(distribution(&p.ttft, 1e3, n), p.failed),
                "time_per_output_token_ms": by_status(flat(tpot_incl_first, n), p.failed),
                "inter_token_latency_ms": by_status(distribution(&p.tpot, 1e3, n), p.failed),
                "output_tokens_per_second": by_status(flat(p.achieved_rps * p.mean_output_tokens, n), p.failed),
            },
            "requests": {"successful": requests, "errored": [], "incomplete": [], "total": null},
        }));
        start = end + 5.0;
    }
    let report = json!({
        "metadata": {"version": 2, "guidellm_version": "0.7.3", "python_version": "3.12.3", "platform": "Linux-x86_64"},
        "config": {},
        "benchmarks": benchmarks,
    });
    python_dump(&report)
}

/// Quotes a table cell when it holds the separator or a quote.
fn cell(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Points as a CSV table, one row per point, latencies in seconds.
pub fn table_csv(points: &[MeasuredPoint]) -> String {
    // Latency columns: the union of the statistics the points give, in a fixed order.
    let mut lat: Vec<(&str, Option<f64>)> = Vec::new();
    for m in METRICS {
        let name = if m == "e2el" { "e2e" } else { m };
        let all = points.iter().map(|p| metric(p, m));
        if all.clone().any(|s| s.mean_s.is_some()) {
            lat.push((name, None));
        }
        if all.clone().any(|s| s.median_s.is_some()) {
            lat.push((name, Some(50.0)));
        }
        let mut pcts: Vec<f64> = all
            .flat_map(|s| s.percentiles.iter().map(|q| q.0))
            .filter(|&q| q != 50.0)
            .collect();
        pcts.sort_by(f64::total_cmp);
        pcts.dedup();
        lat.extend(pcts.into_iter().map(|q| (name, Some(q))));
    }
    let mut out = String::from("# measured load points; latencies in seconds\n");
    let mut head = vec![
        "rate",
        "concurrency",
        "cv",
        "achieved_rps",
        "completed",
        "failed",
        "duration_s",
        "prompt_tokens",
        "output_tokens",
        "model",
        "engine",
    ]
    .into_iter()
    .map(String::from)
    .collect::<Vec<_>>();
    for &(m, s) in &lat {
        head.push(match s {
            None => format!("{m}_mean_s"),
            Some(q) => format!("{m}_p{}_s", p_word(q)),
        });
    }
    out.push_str(&head.join(","));
    out.push('\n');
    for p in points {
        let (rate, conc, cv) = match p.load {
            MeasuredLoad::Rate { rate_rps, cv } => (
                rate_rps.to_string(),
                p.max_concurrency.map(|c| c.to_string()).unwrap_or_default(),
                cv.to_string(),
            ),
            MeasuredLoad::Concurrency { concurrency } => {
                (String::new(), concurrency.to_string(), String::new())
            }
        };
        let mut row = vec![
            rate,
            conc,
            cv,
            p.achieved_rps.to_string(),
            p.completed.to_string(),
            p.failed.to_string(),
            p.duration_s.to_string(),
            p.mean_prompt_tokens.to_string(),
            p.mean_output_tokens.to_string(),
            cell(p.model.as_deref().unwrap_or("")),
            cell(p.engine.as_deref().unwrap_or("")),
        ];
        for &(m, s) in &lat {
            let stats = metric(p, if m == "e2e" { "e2el" } else { m });
            let x = match s {
                None => stats.mean_s,
                Some(50.0) => stats.median_s,
                Some(q) => stats.percentiles.iter().find(|x| x.0 == q).map(|x| x.1),
            };
            row.push(x.map(|x| x.to_string()).unwrap_or_default());
        }
        out.push_str(&row.join(","));
        out.push('\n');
    }
    out
}
