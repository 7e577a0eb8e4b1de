//! Percentiles (numpy's default linear interpolation), summaries and confidence intervals.

use serde::{Deserialize, Serialize};

/// Mean and percentiles of a sample. Every field is NaN when the sample is empty
/// (serialised as `null` in JSON).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Arithmetic mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
}

impl Summary {
    /// The summary of an empty sample: every field NaN.
    pub const EMPTY: Summary = Summary {
        mean: f64::NAN,
        p50: f64::NAN,
        p90: f64::NAN,
        p95: f64::NAN,
        p99: f64::NAN,
    };

    /// Field-by-field mean of several summaries (of replications, say); every field is
    /// NaN for an empty slice.
    pub fn mean_of(xs: &[Summary]) -> Summary {
        let n = xs.len() as f64;
        let avg = |f: fn(&Summary) -> f64| xs.iter().map(f).sum::<f64>() / n;
        Summary {
            mean: avg(|s| s.mean),
            p50: avg(|s| s.p50),
            p90: avg(|s| s.p90),
            p95: avg(|s| s.p95),
            p99: avg(|s| s.p99),
        }
    }

    /// Summarises `values` (sorted in place). NaN values are ignored.
    pub fn of(values: &mut Vec<f64>) -> Summary {
        values.retain(|v| !v.is_nan());
        if values.is_empty() {
            return Summary::EMPTY;
        }
        sort_floats(values);
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        Summary {
            mean,
            p50: percentile_sorted(values, 50.0),
            p90: percentile_sorted(values, 90.0),
            p95: percentile_sorted(values, 95.0),
            p99: percentile_sorted(values, 99.0),
        }
    }

    /// Summarises a weighted sample: `(value, count)` pairs, as if each value were repeated
    /// `count` times (sorted in place). Pairs with a zero count are ignored.
    pub fn of_weighted(pairs: &mut Vec<(f64, u64)>) -> Summary {
        pairs.retain(|&(v, w)| w > 0 && !v.is_nan());
        if pairs.is_empty() {
            return Summary::EMPTY;
        }
        if pairs.iter().all(|p| p.0.is_sign_positive()) {
            // Non-negative doubles order like their bit patterns: integer compares.
            pairs.sort_unstable_by_key(|p| p.0.to_bits());
        } else {
            pairs.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        }
        let total: u64 = pairs.iter().map(|&(_, w)| w).sum();
        let mean = pairs.iter().map(|&(v, w)| v * w as f64).sum::<f64>() / total as f64;
        Summary {
            mean,
            p50: percentile_weighted_sorted(pairs, total, 50.0),
            p90: percentile_weighted_sorted(pairs, total, 90.0),
            p95: percentile_weighted_sorted(pairs, total, 95.0),
            p99: percentile_weighted_sorted(pairs, total, 99.0),
        }
    }
}

/// Sorts ascending (NaN-free input). Non-negative doubles order like their bit
/// patterns, so those are sorted as integers, which is several times faster.
fn sort_floats(values: &mut [f64]) {
    if values.iter().all(|v| v.is_sign_positive()) {
        let mut bits: Vec<u64> = values.iter().map(|v| v.to_bits()).collect();
        bits.sort_unstable();
        for (v, b) in values.iter_mut().zip(bits) {
            *v = f64::from_bits(b);
        }
    } else {
        values.sort_unstable_by(f64::total_cmp);
    }
}

/// numpy's interpolation between `a` and `b` at `t` in [0, 1] (its `_lerp`, which
/// computes from the nearer end for `t ≥ 0.5`).
fn lerp(a: f64, b: f64, t: f64) -> f64 {
    let d = b - a;
    if t >= 0.5 {
        b - d * (1.0 - t)
    } else {
        a + d * t
    }
}

/// Splits the virtual index `(n − 1) × q/100` into an integer index and a fraction.
fn virtual_index(n: u64, pct: f64) -> (u64, f64) {
    let q = (pct / 100.0).clamp(0.0, 1.0);
    let v = (n - 1) as f64 * q;
    let lo = v.floor();
    (lo as u64, v - lo)
}

/// The `pct`-th percentile (0..100) of an ascending, non-empty slice, with linear
/// interpolation between closest ranks (numpy's default `method="linear"`).
/// Returns NaN for an empty slice.
pub fn percentile_sorted(sorted: &[f64], pct: f64) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    let (lo, frac) = virtual_index(n as u64, pct);
    let lo = lo as usize;
    let hi = (lo + 1).min(n - 1);
    lerp(sorted[lo], sorted[hi], frac)
}

/// Value at rank `k` (0-based) of the expanded sample behind ascending `(value, count)` pairs.
fn value_at_rank(pairs: &[(f64, u64)], k: u64) -> f64 {
    let mut seen = 0u64;
    for &(v, w) in pairs {
        seen += w;
        if k < seen {
            return v;
        }
    }
    pairs.last().map_or(f64::NAN, |p| p.0)
}

/// The `pct`-th percentile of ascending `(value, count)` pairs holding `total` counts;
/// identical to [`percentile_sorted`] on the expanded sample.
pub fn percentile_weighted_sorted(pairs: &[(f64, u64)], total: u64, pct: f64) -> f64 {
    if total == 0 || pairs.is_empty() {
        return f64::NAN;
    }
    let (lo, frac) = virtual_index(total, pct);
    let hi = (lo + 1).min(total - 1);
    lerp(value_at_rank(pairs, lo), value_at_rank(pairs, hi), frac)
}

/// Two-sided 97.5% quantile of Student's t with `df` degrees of freedom.
pub fn t_975(df: u32) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => T[df as usize - 1],
        31..=60 => 2.000,
        61..=120 => 1.980,
        _ => 1.960,
    }
}

/// Mean and 95% confidence interval (Student's t on the sample standard deviation) of
/// `xs`, with the interval clamped to `[lo_clamp, hi_clamp]`. One value gives a zero-width
/// interval; an empty slice gives NaNs.
pub fn mean_ci95(xs: &[f64], lo_clamp: f64, hi_clamp: f64) -> (f64, [f64; 2]) {
    let n = xs.len();
    if n == 0 {
        return (f64::NAN, [f64::NAN, f64::NAN]);
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return (mean, [mean, mean]);
    }
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64;
    let half = t_975(n as u32 - 1) * (var / n as f64).sqrt();
    let lo = (mean - half).max(lo_clamp);
    let hi = (mean + half).min(hi_clamp);
    (mean, [lo, hi])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_match_numpy_linear() {
        // numpy.percentile([1, 2, 3, 4], q) for q = 50, 90, 95, 99 -> 2.5, 3.7, 3.85, 3.97.
        let xs = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile_sorted(&xs, 50.0), 2.5);
        assert!((percentile_sorted(&xs, 90.0) - 3.7).abs() < 1e-12);
        assert!((percentile_sorted(&xs, 95.0) - 3.85).abs() < 1e-12);
        assert!((percentile_sorted(&xs, 99.0) - 3.97).abs() < 1e-12);
        assert_eq!(percentile_sorted(&xs, 0.0), 1.0);
        assert_eq!(percentile_sorted(&xs, 100.0), 4.0);
        // numpy.percentile([10, 0, 5], 25) = 2.5 after sorting [0, 5, 10].
        let mut v = vec![10.0, 0.0, 5.0];
        let s = Summary::of(&mut v);
        assert_eq!(percentile_sorted(&v, 25.0), 2.5);
        assert_eq!(s.p50, 5.0);
        assert_eq!(s.mean, 5.0);
        assert!((s.p99 - 9.9).abs() < 1e-12);
        // A single value is every percentile; empty gives NaN.
        assert_eq!(percentile_sorted(&[7.0], 99.0), 7.0);
        assert!(percentile_sorted(&[], 50.0).is_nan());
        assert!(Summary::of(&mut Vec::new()).p50.is_nan());
    }

    #[test]
    fn integer_sort_path_agrees_with_total_order() {
        let mut a = vec![3.5, 0.0, 1e-300, 2.0, 1e300, 0.25];
        let mut b = a.clone();
        sort_floats(&mut a);
        b.sort_by(f64::total_cmp);
        assert_eq!(a, b);
        let mut c = vec![1.0, -0.0, -2.0, 0.5];
        sort_floats(&mut c);
        assert_eq!(c, vec![-2.0, -0.0, 0.5, 1.0]);
    }

    #[test]
    fn weighted_equals_expanded() {
        let mut pairs = vec![(0.03, 2), (0.01, 3), (0.02, 0), (0.05, 1)];
        let mut expanded = vec![0.01, 0.01, 0.01, 0.03, 0.03, 0.05];
        let w = Summary::of_weighted(&mut pairs);
        let e = Summary::of(&mut expanded);
        assert_eq!(w.p50.to_bits(), e.p50.to_bits());
        assert_eq!(w.p90.to_bits(), e.p90.to_bits());
        assert_eq!(w.p95.to_bits(), e.p95.to_bits());
        assert_eq!(w.p99.to_bits(), e.p99.to_bits());
        assert!((w.mean - e.mean).abs() < 1e-15);
        assert!(Summary::of_weighted(&mut vec![(1.0, 0)]).mean.is_nan());
    }

    #[test]
    fn confidence_interval() {
        let (m, ci) = mean_ci95(&[0.9, 1.0, 0.95, 0.97], 0.0, 1.0);
        assert!((m - 0.955).abs() < 1e-12);
        assert!(ci[0] < m && ci[1] == 1.0);
        let (m, ci) = mean_ci95(&[0.5], 0.0, 1.0);
        assert_eq!((m, ci), (0.5, [0.5, 0.5]));
        assert_eq!(t_975(1), 12.706);
        assert_eq!(t_975(1000), 1.96);
        assert!(mean_ci95(&[], 0.0, 1.0).0.is_nan());
    }
}
