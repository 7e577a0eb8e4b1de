//! `vllm bench serve --save-result` JSON (and the older `benchmarks/benchmark_serving.py`,
//! which writes the same keys).
//!
//! Read: `request_rate` (a number, or `"inf"`), `burstiness`, `max_concurrency`,
//! `ramp_up_strategy` (refused: no single load), `completed`, `failed`, `duration` [s],
//! `request_throughput` [requests/s], `total_input_tokens`, `total_output_tokens`,
//! `mean_*_ms`, `median_*_ms`, `p{N}_*_ms` for `ttft`, `tpot`, `itl`, `e2el` [ms],
//! `model_id`, `backend` (or `endpoint_type`); when the server drafted (speculative
//! decoding), `spec_decode_num_drafts`, `spec_decode_draft_tokens` and
//! `spec_decode_accepted_tokens`, the counters behind the acceptance rate and length it
//! prints. With `--save-detailed`: `input_lens`,
//! `output_lens`, `errors` (a failed request has a non-empty error and output length 0).
//! When the file has no `e2el` statistics (they are not in vLLM's default
//! `--percentile-metrics`), they are computed from `latencies` [s] of the successful
//! requests, with NumPy's default (linear) percentile rule.

use super::pyjson::{
    at, bad, check_nonneg, count_of, missing, opt_any, opt_count, opt_text, req_count, req_nonneg,
};
use super::MAX_REQUESTS_PER_POINT;
use super::{
    nothing_completed, stats, Format, ImportError, LatencyStats, MeasuredPoint, MeasuredRequest,
    SpecMeasured,
};
use crate::plan::MeasuredLoad;
use serde_json::Value;

/// vLLM's metric names, in file order, and the `MeasuredPoint` field each fills.
pub(super) const METRICS: [&str; 4] = ["ttft", "tpot", "itl", "e2el"];

/// Points from the JSON values of one file (one, or several appended).
pub(super) fn parse(file: &str, values: &[Value]) -> Result<Vec<MeasuredPoint>, ImportError> {
    values
        .iter()
        .enumerate()
        .map(|(k, v)| {
            let source = if values.len() > 1 {
                format!("{file}#{}", k + 1)
            } else {
                file.to_string()
            };
            point(&source, v)
        })
        .collect()
}

fn point(src: &str, v: &Value) -> Result<MeasuredPoint, ImportError> {
    if !v.is_object() {
        return Err(super::pyjson::whole(
            src,
            "is a list of results with no vLLM keys: expected one JSON object per result".into(),
        ));
    }
    let f = |k: &str| at(v, &[k]);
    if f("ramp_up_strategy").is_some() {
        return Err(bad(
            src,
            "ramp_up_strategy",
            "is set: a ramp-up run changes its rate as it goes and has no single load \
             point; rerun at a fixed --request-rate"
                .into(),
        ));
    }
    let completed = req_count(src, "completed", f("completed"))?;
    let failed = opt_count(src, "failed", f("failed"))?.unwrap_or(0);
    if completed == 0 {
        return Err(nothing_completed(src, "completed"));
    }
    let load_and_cap = load(src, v)?;
    let duration_s = super::pyjson::opt_nonneg(src, "duration", f("duration"), "s")?.unwrap_or(0.0);
    let achieved_rps = req_nonneg(
        src,
        "request_throughput",
        f("request_throughput"),
        "requests/s",
    )?;
    let n = f64::from(completed);
    let mean_prompt_tokens =
        req_nonneg(src, "total_input_tokens", f("total_input_tokens"), "tokens")? / n;
    let mean_output_tokens = req_nonneg(
        src,
        "total_output_tokens",
        f("total_output_tokens"),
        "tokens",
    )? / n;
    let mut lat: Vec<LatencyStats> = Vec::with_capacity(4);
    for m in METRICS {
        lat.push(metric_stats(src, v, m)?);
    }
    let failed_known = failed == 0 || f("errors").is_some();
    if lat[3].is_empty() && failed_known {
        if let Some(l) = f("latencies") {
            lat[3] = latencies(src, v, l)?;
        }
    }
    if lat.iter().all(LatencyStats::is_empty) {
        return Err(bad(
            src,
            "mean_ttft_ms",
            "no latency statistics (mean_ttft_ms, median_tpot_ms, p99_e2el_ms, …) in the \
             file: was it a generation benchmark?"
                .into(),
        ));
    }
    let requests = per_request(src, v)?;
    let mut lat = lat.into_iter();
    let mut next = || lat.next().unwrap_or_default();
    Ok(MeasuredPoint {
        source: src.to_string(),
        format: Format::Vllm,
        load: load_and_cap.0,
        completed,
        failed,
        duration_s,
        achieved_rps,
        mean_prompt_tokens,
        mean_output_tokens,
        ttft: next(),
        tpot: next(),
        itl: next(),
        e2e: next(),
        requests,
        model: opt_text(f("model_id")),
        engine: opt_text(f("backend")).or_else(|| opt_text(f("endpoint_type"))),
        max_concurrency: load_and_cap.1,
        prompt_spread: Default::default(),
        output_spread: Default::default(),
        spec: spec(src, v)?,
    })
}

/// The speculative-decoding counters, when the file has them: all three or none, with
/// at least one draft, no more accepted tokens than drafted and at least one drafted
/// token per draft.
fn spec(src: &str, v: &Value) -> Result<Option<SpecMeasured>, ImportError> {
    const KEYS: [&str; 3] = [
        "spec_decode_num_drafts",
        "spec_decode_draft_tokens",
        "spec_decode_accepted_tokens",
    ];
    let mut counts = [None; 3];
    for (slot, key) in counts.iter_mut().zip(KEYS) {
        *slot = opt_count(src, key, at(v, &[key]))?;
    }
    let [drafts, draft_tokens, accepted] = counts;
    let (Some(drafts), Some(draft_tokens), Some(accepted)) = (drafts, draft_tokens, accepted)
    else {
        if let Some(i) = counts.iter().position(Option::is_none) {
            if counts.iter().any(Option::is_some) {
                return Err(missing(src, KEYS[i]));
            }
        }
        return Ok(None);
    };
    // Counters that say the server did not draft: the run is simulated without
    // speculation, whatever the plan's own.
    if drafts == 0 {
        if draft_tokens > 0 || accepted > 0 {
            return Err(bad(
                src,
                KEYS[0],
                format!("0 drafts but {draft_tokens} drafted and {accepted} accepted tokens"),
            ));
        }
        return Ok(Some(SpecMeasured {
            drafts: 0,
            draft_tokens: 0,
            accepted_tokens: 0,
        }));
    }
    if draft_tokens < drafts {
        return Err(bad(
            src,
            KEYS[1],
            format!("{draft_tokens} drafted tokens in {drafts} drafts: a draft has at least one"),
        ));
    }
    if accepted > draft_tokens {
        return Err(bad(
            src,
            KEYS[2],
            format!("{accepted} accepted of {draft_tokens} drafted: at most all of them"),
        ));
    }
    Ok(Some(SpecMeasured {
        drafts: u64::from(drafts),
        draft_tokens: u64::from(draft_tokens),
        accepted_tokens: u64::from(accepted),
    }))
}

/// The load, and the concurrency cap of an open-loop point.
fn load(src: &str, v: &Value) -> Result<(MeasuredLoad, Option<u32>), ImportError> {
    let rate = opt_any(src, "request_rate", at(v, &["request_rate"]))?
        .ok_or_else(|| missing(src, "request_rate"))?;
    let cap = match opt_count(src, "max_concurrency", at(v, &["max_concurrency"]))? {
        Some(0) => {
            return Err(bad(
                src,
                "max_concurrency",
                "is 0; it must be 1 or more".into(),
            ));
        }
        c => c,
    };
    if rate == f64::INFINITY {
        return match cap {
            Some(c) => Ok((MeasuredLoad::Concurrency { concurrency: c }, None)),
            None => Err(bad(
                src,
                "request_rate",
                "is inf with no max_concurrency: every request was sent at once, which is \
                 neither a rate nor a concurrency to calibrate against; rerun with \
                 --request-rate or --max-concurrency"
                    .into(),
            )),
        };
    }
    if !(rate.is_finite() && rate > 0.0) {
        return Err(bad(
            src,
            "request_rate",
            format!("must be above 0 requests/s (or \"inf\"), got {rate}"),
        ));
    }
    let b = opt_any(src, "burstiness", at(v, &["burstiness"]))?.unwrap_or(1.0);
    if b.is_nan() || b <= 0.0 {
        return Err(bad(
            src,
            "burstiness",
            format!("must be above 0 (1 = Poisson arrivals), got {b}"),
        ));
    }
    let cv = 1.0 / b.sqrt();
    Ok((MeasuredLoad::Rate { rate_rps: rate, cv }, cap))
}

/// `mean_{m}_ms`, `median_{m}_ms` and every `p{N}_{m}_ms`, in seconds.
fn metric_stats(src: &str, v: &Value, m: &str) -> Result<LatencyStats, ImportError> {
    let ms = |key: &str| -> Result<Option<f64>, ImportError> {
        match opt_any(src, key, at(v, &[key]))? {
            None => Ok(None),
            Some(x) => Ok(Some(check_nonneg(src, key, x, "ms")? / 1e3)),
        }
    };
    let mean = ms(&format!("mean_{m}_ms"))?;
    let median = ms(&format!("median_{m}_ms"))?;
    let suffix = format!("_{m}_ms");
    let mut pct = Vec::new();
    if let Some(obj) = v.as_object() {
        for key in obj.keys() {
            let Some(p) = key
                .strip_prefix('p')
                .and_then(|k| k.strip_suffix(suffix.as_str()))
                .and_then(|p| p.parse::<f64>().ok())
            else {
                continue;
            };
            if p > 0.0 && p < 100.0 {
                if let Some(x) = ms(key)? {
                    pct.push((p, x));
                }
            }
        }
    }
    Ok(stats(mean, median, pct))
}

/// A list field of the detailed output, bounded.
fn list<'a>(src: &str, v: &'a Value, key: &str) -> Result<Option<&'a Vec<Value>>, ImportError> {
    match at(v, &[key]) {
        None => Ok(None),
        Some(Value::Array(a)) => Ok(Some(a)),
        Some(_) => Err(bad(src, key, "must be a list".into())),
    }
}

/// Whether request `i` succeeded: an empty (or null) error when `errors` is there, else a
/// non-zero output length (vLLM writes 0 for a failed request).
fn succeeded(errors: Option<&Vec<Value>>, i: usize, output_len: Option<u32>) -> bool {
    match errors.and_then(|e| e.get(i)) {
        Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        Some(_) => false,
        None => output_len.is_none_or(|n| n > 0),
    }
}

fn same_len(src: &str, a: (&str, usize), b: (&str, usize)) -> Result<(), ImportError> {
    if a.1 != b.1 {
        return Err(bad(
            src,
            b.0,
            format!(
                "has {} entries but {} has {}: the per-request lists must be of one length",
                b.1, a.0, a.1
            ),
        ));
    }
    Ok(())
}

/// Lengths of the successful requests, from `input_lens` and `output_lens` (the first
/// [`MAX_REQUESTS_PER_POINT`] of them).
fn per_request(src: &str, v: &Value) -> Result<Vec<MeasuredRequest>, ImportError> {
    let (Some(ins), Some(outs)) = (list(src, v, "input_lens")?, list(src, v, "output_lens")?)
    else {
        return Ok(Vec::new());
    };
    same_len(src, ("input_lens", ins.len()), ("output_lens", outs.len()))?;
    let errors = list(src, v, "errors")?;
    if let Some(e) = errors {
        same_len(src, ("input_lens", ins.len()), ("errors", e.len()))?;
    }
    let len = |key: &str, i: usize, x: &Value| -> Result<u32, ImportError> {
        let field = format!("{key}[{i}]");
        let n = super::pyjson::number(x)
            .ok_or_else(|| bad(src, &field, "must be a number of tokens".into()))?;
        count_of(src, &field, check_nonneg(src, &field, n, "tokens")?)
    };
    let mut out = Vec::new();
    for (i, (a, b)) in ins.iter().zip(outs).enumerate() {
        let output_tokens = len("output_lens", i, b)?;
        let prompt_tokens = len("input_lens", i, a)?;
        if succeeded(errors, i, Some(output_tokens)) {
            if out.len() >= MAX_REQUESTS_PER_POINT {
                break;
            }
            out.push(MeasuredRequest {
                prompt_tokens,
                output_tokens,
            });
        }
    }
    Ok(out)
}

/// End-to-end statistics of the successful requests from `latencies` [s].
fn latencies(src: &str, v: &Value, l: &Value) -> Result<LatencyStats, ImportError> {
    let Value::Array(l) = l else {
        return Err(bad(src, "latencies", "must be a list".into()));
    };
    let errors = list(src, v, "errors")?;
    if let Some(e) = errors {
        same_len(src, ("latencies", l.len()), ("errors", e.len()))?;
    }
    let mut xs = Vec::with_capacity(l.len());
    for (i, x) in l.iter().enumerate() {
        if !succeeded(errors, i, None) {
            continue;
        }
        let field = format!("latencies[{i}]");
        let n = super::pyjson::number(x)
            .ok_or_else(|| bad(src, &field, "must be a number of seconds".into()))?;
        xs.push(check_nonneg(src, &field, n, "s")?);
    }
    if xs.is_empty() {
        return Ok(LatencyStats::default());
    }
    xs.sort_by(f64::total_cmp);
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    let pct = [90.0, 95.0, 99.0]
        .into_iter()
        .map(|p| (p, numpy_percentile(&xs, p)))
        .collect();
    Ok(stats(Some(mean), Some(numpy_percentile(&xs, 50.0)), pct))
}

/// NumPy's default percentile of sorted `xs` (linear between the closest ranks).
pub(super) fn numpy_percentile(xs: &[f64], p: f64) -> f64 {
    let Some(&last) = xs.last() else {
        return 0.0;
    };
    let rank = p / 100.0 * (xs.len() - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = (lo + 1).min(xs.len() - 1);
    let w = rank - lo as f64;
    let (a, b) = (xs.get(lo).copied().unwrap_or(last), xs[hi]);
    a + (b - a) * w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numpy_percentile_matches_numpy() {
        // numpy.percentile([1, 2, 3, 4], [50, 90, 99]) = [2.5, 3.7, 3.97]
        let xs = [1.0, 2.0, 3.0, 4.0];
        assert!((numpy_percentile(&xs, 50.0) - 2.5).abs() < 1e-12);
        assert!((numpy_percentile(&xs, 90.0) - 3.7).abs() < 1e-12);
        assert!((numpy_percentile(&xs, 99.0) - 3.97).abs() < 1e-12);
        assert_eq!(numpy_percentile(&[5.0], 99.0), 5.0);
    }
}
