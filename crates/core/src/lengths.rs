//! Mean lengths of a traffic's prompts and outputs, as the simulator draws them: the
//! clipped, integer-truncated lognormal's exact mean (a finite sum of normal tail
//! probabilities), a fixed length, or a trace's rows. Below the plan, which asks for its
//! mean context, and below the analytic checks, which explain a simulated plan with them.

use goodput_engine::kinds::{LengthDist, LengthSpec, TraceRow};

/// Normal CDF, via the complementary error function of `libm` (same bits on every target).
fn normal_cdf(z: f64) -> f64 {
    0.5 * libm::erfc(-z / std::f64::consts::SQRT_2)
}

/// Clipped means kept per thread (see [`lognormal_clipped_mean`]).
pub(crate) const CLIPPED_MEANS_KEPT: usize = 8;

/// The exact arguments of a clipped mean: median bits, sigma bits, min, max.
type ClippedMeanKey = (u64, u64, u32, u32);

thread_local! {
    /// Clipped means computed lately, newest last.
    static CLIPPED_MEANS: std::cell::RefCell<Vec<(ClippedMeanKey, f64)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Exact mean of `clamp(floor(X), min, max)` for `X` lognormal(ln median, sigma) [tokens].
///
/// Uses `E[L] = min + Σ_{k=min+1}^{max} P(X ≥ k)`; spans longer than 2,000,000 tokens
/// fall back to the closed form of the continuous clipped mean minus half a token.
///
/// The sum takes thousands of logarithms and normal tails (about a millisecond in wasm),
/// and one plan asks for the same means many times (the capacity guess of every sweep
/// cell, the analysis, the report), so the last [`CLIPPED_MEANS_KEPT`] answers are kept
/// per thread, keyed on the exact arguments: a kept answer is the computed one, bit for bit.
pub fn lognormal_clipped_mean(median: f64, sigma: f64, min: u32, max: u32) -> f64 {
    let key = (median.to_bits(), sigma.to_bits(), min, max);
    let kept = CLIPPED_MEANS.with(|c| c.borrow().iter().find(|(k, _)| *k == key).map(|e| e.1));
    if let Some(mean) = kept {
        return mean;
    }
    let mean = clipped_mean_computed(median, sigma, min, max);
    CLIPPED_MEANS.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= CLIPPED_MEANS_KEPT {
            c.remove(0);
        }
        c.push((key, mean));
    });
    mean
}

/// [`lognormal_clipped_mean`], computed afresh.
pub(crate) fn clipped_mean_computed(median: f64, sigma: f64, min: u32, max: u32) -> f64 {
    let (lo, hi) = (min.min(max), min.max(max));
    if median.is_nan() || median <= 0.0 || !median.is_finite() {
        return lo as f64;
    }
    let mu = libm::log(median);
    if sigma.is_nan() || sigma <= 0.0 || !sigma.is_finite() {
        // Degenerate: every draw is the median.
        return (libm::floor(median).max(lo as f64)).min(hi as f64);
    }
    let tail = |k: f64| 1.0 - normal_cdf((libm::log(k) - mu) / sigma);
    if hi - lo <= 2_000_000 {
        let mut sum = lo as f64;
        for k in (lo + 1)..=hi {
            let t = tail(k as f64);
            sum += t;
            if t < 1e-17 {
                break;
            }
        }
        sum
    } else {
        let (a, b) = ((lo as f64).max(1e-300), hi as f64);
        let s2 = sigma * sigma;
        let z = |x: f64| (libm::log(x) - mu - s2) / sigma;
        let body = libm::exp(mu + s2 / 2.0) * (normal_cdf(z(b)) - normal_cdf(z(a)));
        let cdf = |x: f64| normal_cdf((libm::log(x) - mu) / sigma);
        (a * cdf(a) + b * (1.0 - cdf(b)) + body - 0.5).clamp(a, b)
    }
}

/// Which length of a trace row to average.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LengthOf {
    /// Prompt tokens.
    Prompt,
    /// Output tokens.
    Output,
}

/// Mean length of a [`LengthSpec`] after clipping [tokens]; `trace` supplies the rows
/// when the distribution is `trace` (an empty trace gives `min`).
pub fn mean_length_tokens(spec: &LengthSpec, trace: &[TraceRow], which: LengthOf) -> f64 {
    let (lo, hi) = (spec.min.min(spec.max), spec.min.max(spec.max));
    match spec.dist {
        LengthDist::LogNormal { median, sigma } => lognormal_clipped_mean(median, sigma, lo, hi),
        LengthDist::Fixed { tokens } => tokens.clamp(lo, hi) as f64,
        LengthDist::Trace => {
            if trace.is_empty() {
                return lo as f64;
            }
            let sum: f64 = trace
                .iter()
                .map(|r| match which {
                    LengthOf::Prompt => r.prompt_tokens,
                    LengthOf::Output => r.output_tokens,
                })
                .map(|t| t.clamp(lo, hi) as f64)
                .sum();
            sum / trace.len() as f64
        }
    }
}
