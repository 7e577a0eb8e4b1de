//! GuideLLM's JSON report (`guidellm benchmark --output-path report.json`).
//!
//! Two layouts are read; both keep one benchmark per load in `benchmarks[]`:
//! - 0.4 and later (checked against 0.7): `benchmarks[k].config.strategy` and
//!   `.config.backend` (`kind`, `model`), counts in `.metrics.request_totals`.
//! - 0.2 and 0.3: `benchmarks[k].args.strategy`, counts in `.request_totals`, the model
//!   in `.worker.backend_model` and the backend in `.worker.backend_type`.
//!
//! The strategy's `type_` gives the load: `synchronous` (1 client), `concurrent`
//! (`streams` clients), `constant` (`rate`, even gaps: CV 0), `poisson` (`rate`, CV 1),
//! `throughput` (its `max_concurrency` clients; refused without one). Metrics come from
//! the `successful` status of each distribution (`mean`, `median`, `percentiles` with
//! keys `p001` … `p999`): `time_to_first_token_ms` [ms], `inter_token_latency_ms` [ms]
//! (TPOT and ITL both: it excludes the first token, as vLLM's TPOT does;
//! `time_per_output_token_ms` includes it and is not read), `request_latency` [s],
//! `requests_per_second`, `prompt_token_count`, `output_token_count`. Per-request
//! lengths come from `requests.successful[].prompt_tokens` / `.output_tokens`. Errored
//! requests count as failed; incomplete ones (cut off at the end of a run) are neither.

use super::pyjson::{
    at, bad, check_nonneg, count_of, missing, opt_any, opt_count, opt_nonneg, opt_text, whole,
};
use super::{
    nothing_completed, stats, Format, ImportError, LatencyStats, MeasuredPoint, MeasuredRequest,
    MAX_POINTS, MAX_REQUESTS_PER_POINT,
};
use crate::plan::MeasuredLoad;
use serde_json::Value;

/// GuideLLM's percentile keys and the percent each stands for.
pub(super) const PERCENTILES: [(&str, f64); 11] = [
    ("p001", 0.1),
    ("p01", 1.0),
    ("p05", 5.0),
    ("p10", 10.0),
    ("p25", 25.0),
    ("p50", 50.0),
    ("p75", 75.0),
    ("p90", 90.0),
    ("p95", 95.0),
    ("p99", 99.0),
    ("p999", 99.9),
];

/// One point per benchmark of the report.
pub(super) fn parse(file: &str, root: &Value) -> Result<Vec<MeasuredPoint>, ImportError> {
    let Some(Value::Array(benchmarks)) = at(root, &["benchmarks"]) else {
        return Err(bad(
            file,
            "benchmarks",
            "must be a list of benchmarks".into(),
        ));
    };
    if benchmarks.is_empty() {
        return Err(bad(
            file,
            "benchmarks",
            "is empty: the report holds no benchmark (did the run stop before the first \
             one finished?)"
                .into(),
        ));
    }
    if benchmarks.len() > MAX_POINTS {
        return Err(bad(
            file,
            "benchmarks",
            format!(
                "holds {} benchmarks; at most {MAX_POINTS} are read",
                benchmarks.len()
            ),
        ));
    }
    let report_model = opt_text(at(root, &["config", "spec", "backend", "model"]))
        .or_else(|| opt_text(at(root, &["args", "model"])));
    benchmarks
        .iter()
        .enumerate()
        .map(|(k, b)| point(&format!("{file}#{}", k + 1), b, report_model.as_deref()))
        .collect()
}

fn point(src: &str, b: &Value, report_model: Option<&str>) -> Result<MeasuredPoint, ImportError> {
    if !b.is_object() {
        return Err(whole(src, "is not a benchmark object".into()));
    }
    let (load, max_concurrency) = load(src, b)?;
    let totals = at(b, &["metrics", "request_totals"]).or_else(|| at(b, &["request_totals"]));
    let Some(totals) = totals else {
        return Err(missing(src, "metrics.request_totals"));
    };
    let completed = opt_count(
        src,
        "request_totals.successful",
        at(totals, &["successful"]),
    )?
    .ok_or_else(|| missing(src, "request_totals.successful"))?;
    let failed = opt_count(src, "request_totals.errored", at(totals, &["errored"]))?.unwrap_or(0);
    if completed == 0 {
        return Err(nothing_completed(src, "request_totals.successful"));
    }
    let metric = |name: &str| at(b, &["metrics", name, "successful"]);
    let mean_of = |name: &str, unit: &str| -> Result<Option<f64>, ImportError> {
        let field = format!("metrics.{name}.successful.mean");
        opt_nonneg(
            src,
            &field,
            metric(name).and_then(|d| at(d, &["mean"])),
            unit,
        )
    };
    let mut duration_s = opt_nonneg(src, "duration", at(b, &["duration"]), "s")?;
    if duration_s.is_none() {
        let start = opt_any(src, "start_time", at(b, &["start_time"]))?;
        let end = opt_any(src, "end_time", at(b, &["end_time"]))?;
        if let (Some(s), Some(e)) = (start, end) {
            duration_s = Some(check_nonneg(src, "end_time", e - s, "s")?);
        }
    }
    let duration_s = duration_s.unwrap_or(0.0);
    let achieved_rps = match mean_of("requests_per_second", "requests/s")? {
        Some(r) => r,
        None if duration_s > 0.0 => f64::from(completed) / duration_s,
        None => return Err(missing(src, "metrics.requests_per_second.successful.mean")),
    };
    let mean_prompt_tokens = mean_of("prompt_token_count", "tokens")?
        .ok_or_else(|| missing(src, "metrics.prompt_token_count.successful.mean"))?;
    let mean_output_tokens = mean_of("output_token_count", "tokens")?
        .ok_or_else(|| missing(src, "metrics.output_token_count.successful.mean"))?;
    let ttft = dist(src, b, "time_to_first_token_ms", 1e-3)?;
    let itl = dist(src, b, "inter_token_latency_ms", 1e-3)?;
    let e2e = dist(src, b, "request_latency", 1.0)?;
    if ttft.is_empty() && itl.is_empty() && e2e.is_empty() {
        return Err(missing(src, "metrics.time_to_first_token_ms"));
    }
    let model = opt_text(at(b, &["config", "backend", "model"]))
        .or_else(|| opt_text(at(b, &["worker", "backend_model"])))
        .or_else(|| report_model.map(str::to_string));
    let engine = opt_text(at(b, &["config", "backend", "kind"]))
        .or_else(|| opt_text(at(b, &["worker", "backend_type"])));
    Ok(MeasuredPoint {
        source: src.to_string(),
        format: Format::Guidellm,
        load,
        completed,
        failed,
        duration_s,
        achieved_rps,
        mean_prompt_tokens,
        mean_output_tokens,
        ttft,
        tpot: itl.clone(),
        itl,
        e2e,
        requests: requests(src, b)?,
        model,
        engine,
        max_concurrency,
        prompt_spread: Default::default(),
        output_spread: Default::default(),
        spec: None,
    })
}

/// The load from the benchmark's scheduling strategy.
fn load(src: &str, b: &Value) -> Result<(MeasuredLoad, Option<u32>), ImportError> {
    let (strategy, path) = match at(b, &["config", "strategy"]) {
        Some(s) => (s, "config.strategy"),
        None => match at(b, &["args", "strategy"]) {
            Some(s) => (s, "args.strategy"),
            None => return Err(missing(src, "config.strategy")),
        },
    };
    let field = |k: &str| format!("{path}.{k}");
    let kind = at(strategy, &["type_"])
        .and_then(Value::as_str)
        .ok_or_else(|| missing(src, &field("type_")))?;
    let positive = |k: &str| -> Result<Option<u32>, ImportError> {
        match opt_count(src, &field(k), at(strategy, &[k]))? {
            Some(0) => Err(bad(src, &field(k), "is 0; it must be 1 or more".into())),
            c => Ok(c),
        }
    };
    let cap = positive("max_concurrency")?;
    let rate = || -> Result<f64, ImportError> {
        let r = opt_nonneg(src, &field("rate"), at(strategy, &["rate"]), "requests/s")?
            .ok_or_else(|| missing(src, &field("rate")))?;
        if r > 0.0 {
            Ok(r)
        } else {
            Err(bad(
                src,
                &field("rate"),
                "is 0; it must be above 0 requests/s".into(),
            ))
        }
    };
    Ok(match kind {
        "synchronous" => (MeasuredLoad::Concurrency { concurrency: 1 }, None),
        "concurrent" => {
            let streams = positive("streams")?.ok_or_else(|| missing(src, &field("streams")))?;
            (
                MeasuredLoad::Concurrency {
                    concurrency: streams,
                },
                None,
            )
        }
        "constant" => (
            MeasuredLoad::Rate {
                rate_rps: rate()?,
                cv: 0.0,
            },
            cap,
        ),
        "poisson" => (
            MeasuredLoad::Rate {
                rate_rps: rate()?,
                cv: 1.0,
            },
            cap,
        ),
        "throughput" => match cap {
            Some(c) => (MeasuredLoad::Concurrency { concurrency: c }, None),
            None => {
                return Err(bad(
                    src,
                    &field("type_"),
                    "is 'throughput' with no max_concurrency: the load is unknown; use the \
                     other benchmarks of the sweep, or rerun with --max-concurrency"
                        .into(),
                ))
            }
        },
        other => {
            return Err(bad(
                src,
                &field("type_"),
                format!(
                    "is '{other}': only synchronous, concurrent, constant, poisson and \
                     throughput benchmarks have one load point"
                ),
            ))
        }
    })
}

/// Statistics of the successful requests of one metric; `scale` converts to seconds.
fn dist(src: &str, b: &Value, name: &str, scale: f64) -> Result<LatencyStats, ImportError> {
    let Some(d) = at(b, &["metrics", name, "successful"]) else {
        return Ok(LatencyStats::default());
    };
    let unit = if scale == 1.0 { "s" } else { "ms" };
    let base = format!("metrics.{name}.successful");
    let get = |path: &[&str], label: &str| -> Result<Option<f64>, ImportError> {
        let field = format!("{base}.{label}");
        Ok(opt_nonneg(src, &field, at(d, path), unit)?.map(|x| x * scale))
    };
    let mean = get(&["mean"], "mean")?;
    let median = get(&["median"], "median")?;
    let mut pct = Vec::new();
    for (key, p) in PERCENTILES {
        if let Some(x) = get(&["percentiles", key], &format!("percentiles.{key}"))? {
            pct.push((p, x));
        }
    }
    Ok(stats(mean, median, pct))
}

/// Lengths of the successful requests the report kept (it may keep a sample).
fn requests(src: &str, b: &Value) -> Result<Vec<MeasuredRequest>, ImportError> {
    let list = match at(b, &["requests", "successful"]) {
        None => return Ok(Vec::new()),
        Some(Value::Array(a)) => a,
        Some(_) => return Err(bad(src, "requests.successful", "must be a list".into())),
    };
    let mut out = Vec::new();
    for (i, r) in list.iter().enumerate() {
        if out.len() >= MAX_REQUESTS_PER_POINT {
            break;
        }
        let len = |k: &str| -> Result<Option<u32>, ImportError> {
            let field = format!("requests.successful[{i}].{k}");
            match opt_any(src, &field, at(r, &[k]))? {
                None => Ok(None),
                Some(x) => count_of(src, &field, check_nonneg(src, &field, x, "tokens")?).map(Some),
            }
        };
        if let (Some(prompt_tokens), Some(output_tokens)) =
            (len("prompt_tokens")?, len("output_tokens")?)
        {
            out.push(MeasuredRequest {
                prompt_tokens,
                output_tokens,
            });
        }
    }
    Ok(out)
}
