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

    /// Summarises `values`, which it reorders and overwrites (NaN values are dropped
    /// first). The mean is summed in the order given, so callers fix its last bits by
    /// the order they collect the sample in; the percentiles are found by selection, and
    /// are exactly numpy's linear interpolation on the sorted sample (tested bit for bit
    /// against the sorted form).
    pub fn of(values: &mut Vec<f64>) -> Summary {
        values.retain(|v| !v.is_nan());
        if values.is_empty() {
            return Summary::EMPTY;
        }
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        let [p50, p90, p95, p99] = percentiles(values, SUMMARY_PCTS);
        Summary {
            mean,
            p50,
            p90,
            p95,
            p99,
        }
    }

    /// Summarises a weighted sample: `(value, count)` pairs, as if each value were repeated
    /// `count` times (reordered and overwritten; pairs with a zero count or a NaN value
    /// are dropped). The mean sums `value × count` in the order given; the percentiles
    /// are found by selection, and are exactly numpy's linear interpolation on the
    /// expanded sample (tested bit for bit against a walk over the sorted pairs).
    pub fn of_weighted(pairs: &mut Vec<(f64, u64)>) -> Summary {
        pairs.retain(|&(v, w)| w > 0 && !v.is_nan());
        if pairs.is_empty() {
            return Summary::EMPTY;
        }
        let total: u64 = pairs.iter().map(|&(_, w)| w).sum();
        let mean = pairs.iter().map(|&(v, w)| v * w as f64).sum::<f64>() / total as f64;
        let [p50, p90, p95, p99] = percentiles_weighted(pairs, total, SUMMARY_PCTS);
        Summary {
            mean,
            p50,
            p90,
            p95,
            p99,
        }
    }
}

/// The percentiles a [`Summary`] reports, ascending.
const SUMMARY_PCTS: [f64; 4] = [50.0, 90.0, 95.0, 99.0];

/// An integer key that orders doubles as `f64::total_cmp` does: non-negative doubles
/// (sign bit clear) order like their bit patterns, so they get the sign bit set; negative
/// ones get every bit flipped. One key for every sample keeps one instantiation of each
/// selection in the code.
#[inline(always)]
fn order_key(x: f64) -> u64 {
    let b = x.to_bits();
    b ^ (((((b as i64) >> 63) as u64) >> 1) | (1 << 63))
}

/// The double whose [`order_key`] is `k`.
#[inline(always)]
fn from_order_key(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k ^ (1 << 63) } else { !k })
}

/// Several percentiles (each 0..100, ascending) of a non-empty, NaN-free sample, which
/// is reordered and overwritten; bit for bit numpy's linear interpolation on the sorted
/// sample (tested against that, the sorted form).
///
/// Each percentile needs the values at ranks `lo` and `lo + 1`. Selecting rank `lo`
/// leaves every larger rank above it, so `lo + 1` is the least value above, and the next
/// (larger) percentile is selected among the values above only. The values are turned
/// into their [`order_key`]s first (kept as the bits of each double), so that every
/// comparison of the selections is one integer comparison.
fn percentiles<const N: usize>(values: &mut [f64], pcts: [f64; N]) -> [f64; N] {
    let n = values.len();
    to_keys(values.iter_mut());
    let mut out = [f64::NAN; N];
    // Ranks below `from` are in place, each below everything from `from` on.
    let mut from = 0usize;
    let mut last: Option<(usize, f64, f64)> = None;
    for (slot, pct) in pcts.into_iter().enumerate() {
        let (lo, frac) = virtual_index(n as u64, pct);
        let lo = lo as usize;
        let (a, b) = match last {
            Some((l, a, b)) if l == lo => (a, b),
            _ => {
                debug_assert!(lo >= from, "percentiles must be ascending");
                let (_, at, above) =
                    values[from..].select_nth_unstable_by_key(lo - from, |x| x.to_bits());
                let a = from_order_key(at.to_bits());
                let b = above
                    .iter()
                    .map(|x| x.to_bits())
                    .min()
                    .map_or(a, from_order_key);
                from = lo + 1;
                (a, b)
            }
        };
        out[slot] = lerp(a, b, frac);
        last = Some((lo, a, b));
    }
    out
}

/// The two ranks each percentile of a sample of `total` counts (`total > 0`)
/// interpolates between, as `(rank, slot)` in rank order (slots `2i` and `2i + 1` for
/// the `i`-th percentile), and each percentile's interpolation fraction.
fn wanted_ranks<const K: usize>(total: u64, pcts: [f64; K]) -> (Vec<(u64, usize)>, [f64; K]) {
    let mut wanted: Vec<(u64, usize)> = Vec::with_capacity(2 * K);
    let mut fracs = [0.0; K];
    for (i, &pct) in pcts.iter().enumerate() {
        let (lo, frac) = virtual_index(total, pct);
        fracs[i] = frac;
        wanted.push((lo, 2 * i));
        wanted.push(((lo + 1).min(total - 1), 2 * i + 1));
    }
    wanted.sort_unstable();
    (wanted, fracs)
}

/// Several percentiles (each 0..100, in any order) of `(value, count)` pairs holding
/// `total` counts, NaN-free; the pairs are reordered and overwritten. Bit for bit the
/// percentiles of the expanded sample, sorted, found by a weighted selection instead of
/// a sort (tested against a walk over the sorted pairs; NaN when there are no counts).
pub fn percentiles_weighted<const K: usize>(
    pairs: &mut [(f64, u64)],
    total: u64,
    pcts: [f64; K],
) -> [f64; K] {
    if total == 0 || pairs.is_empty() {
        return [f64::NAN; K];
    }
    let (wanted, fracs) = wanted_ranks(total, pcts);
    // Past about 2 log2(n) uneven splits, sort what is left (bounds the worst case).
    let depth = 2 * (usize::BITS - pairs.len().leading_zeros()) + 8;
    let found = select_ranks(pairs, &wanted, depth);
    std::array::from_fn(|i| lerp(found[2 * i], found[2 * i + 1], fracs[i]))
}

/// Replaces each value by its [`order_key`], kept as the bits of a double.
#[inline(always)]
fn to_keys<'v>(values: impl Iterator<Item = &'v mut f64>) {
    for v in values {
        *v = f64::from_bits(order_key(*v));
    }
}

/// The values at the ranks of `wanted` (ascending `(rank, slot)`), by slot; the pairs are
/// reordered and their values overwritten. The selection runs on the values'
/// [`order_key`]s ([`to_keys`]), and what it finds is turned back into values.
fn select_ranks(pairs: &mut [(f64, u64)], wanted: &[(u64, usize)], depth: u32) -> Vec<f64> {
    to_keys(pairs.iter_mut().map(|p| &mut p.0));
    let mut found = vec![f64::from_bits(order_key(f64::NAN)); wanted.len()];
    select_weighted(pairs, 0, wanted, &mut found, depth);
    for v in &mut found {
        *v = from_order_key(v.to_bits());
    }
    found
}

/// Stores in `found[slot]` the value at each rank of `wanted` (ascending `(rank, slot)`;
/// ranks of the whole sample) in one walk over ascending `pairs`, the pairs before them
/// holding `base` counts. Ranks past the last count (unreachable with the right total)
/// take the last value, NaN when there are no pairs.
fn walk_ranks(pairs: &[(f64, u64)], base: u64, wanted: &[(u64, usize)], found: &mut [f64]) {
    let mut seen = base;
    let mut next = 0;
    for &(v, w) in pairs {
        seen += w;
        while next < wanted.len() && wanted[next].0 < seen {
            found[wanted[next].1] = v;
            next += 1;
        }
        if next == wanted.len() {
            return;
        }
    }
    let last = pairs.last().map_or(f64::NAN, |p| p.0);
    for &(_, slot) in &wanted[next..] {
        found[slot] = last;
    }
}

/// Below this many pairs, [`select_weighted`] sorts and walks ([`walk_ranks`]).
const SELECT_SMALL: usize = 24;

/// Finds the value at each rank of `wanted` (ascending; ranks of the whole sample, the
/// pairs before `pairs` holding `base` counts) and stores it in `found[slot]`; the
/// values are [`order_key`]s kept as the bits of doubles ([`select_ranks`]). A 3-way
/// partition around a pivot splits the pairs into those below, equal to and above it;
/// the counts below and equal decide on which side each wanted rank lies.
fn select_weighted(
    pairs: &mut [(f64, u64)],
    base: u64,
    wanted: &[(u64, usize)],
    found: &mut [f64],
    depth: u32,
) {
    if wanted.is_empty() {
        return;
    }
    let n = pairs.len();
    if n <= SELECT_SMALL || depth == 0 {
        pairs.sort_unstable_by_key(|p| p.0.to_bits());
        walk_ranks(pairs, base, wanted, found);
        return;
    }
    // Median of the first, middle and last keys.
    let (k0, k1, k2) = (
        pairs[0].0.to_bits(),
        pairs[n / 2].0.to_bits(),
        pairs[n - 1].0.to_bits(),
    );
    let pivot = k0.max(k1).min(k0.min(k1).max(k2));
    // Dutch flag: [..lt) below, [lt..i) equal, [gt..) above.
    let (mut lt, mut i, mut gt) = (0usize, 0usize, n);
    let (mut below, mut equal) = (0u64, 0u64);
    while i < gt {
        let p = pairs[i];
        let k = p.0.to_bits();
        if k < pivot {
            below += p.1;
            pairs.swap(lt, i);
            lt += 1;
            i += 1;
        } else if k > pivot {
            gt -= 1;
            pairs.swap(i, gt);
        } else {
            equal += p.1;
            i += 1;
        }
    }
    let low_end = base + below;
    let eq_end = low_end + equal;
    let a = wanted.partition_point(|&(r, _)| r < low_end);
    let b = wanted.partition_point(|&(r, _)| r < eq_end);
    for &(_, slot) in &wanted[a..b] {
        found[slot] = f64::from_bits(pivot);
    }
    let (left, rest) = pairs.split_at_mut(lt);
    select_weighted(left, base, &wanted[..a], found, depth - 1);
    select_weighted(&mut rest[gt - lt..], eq_end, &wanted[b..], found, depth - 1);
}

/// Sorts ascending (NaN-free input), as `total_cmp` orders: the yardstick the
/// selections are tested against.
#[cfg(test)]
fn sort_floats(values: &mut [f64]) {
    if values.iter().all(|v| v.is_sign_positive()) {
        values.sort_unstable_by_key(|v| v.to_bits());
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
/// Returns NaN for an empty slice. The yardstick [`percentiles`] is tested against.
#[cfg(test)]
fn percentile_sorted(sorted: &[f64], pct: f64) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    let (lo, frac) = virtual_index(n as u64, pct);
    let lo = lo as usize;
    let hi = (lo + 1).min(n - 1);
    lerp(sorted[lo], sorted[hi], frac)
}

/// Several percentiles (each 0..100) of ascending `(value, count)` pairs holding `total`
/// counts, in one walk over the pairs; each is [`percentile_weighted_sorted`]'s value
/// bit for bit (NaN when there are no counts). The yardstick [`percentiles_weighted`] is
/// tested against.
#[cfg(test)]
fn percentiles_weighted_sorted<const K: usize>(
    pairs: &[(f64, u64)],
    total: u64,
    pcts: [f64; K],
) -> [f64; K] {
    if total == 0 || pairs.is_empty() {
        return [f64::NAN; K];
    }
    let (wanted, fracs) = wanted_ranks(total, pcts);
    let mut found = vec![f64::NAN; 2 * K];
    walk_ranks(pairs, 0, &wanted, &mut found);
    std::array::from_fn(|i| lerp(found[2 * i], found[2 * i + 1], fracs[i]))
}

/// Value at rank `k` (0-based) of the expanded sample behind ascending `(value, count)` pairs.
#[cfg(test)]
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
#[cfg(test)]
fn percentile_weighted_sorted(pairs: &[(f64, u64)], total: u64, pct: f64) -> f64 {
    if total == 0 || pairs.is_empty() {
        return f64::NAN;
    }
    let (lo, frac) = virtual_index(total, pct);
    let hi = (lo + 1).min(total - 1);
    lerp(value_at_rank(pairs, lo), value_at_rank(pairs, hi), frac)
}

/// The 97.5% quantile of Student's t with `df` degrees of freedom: the multiplier of a
/// two-sided 95% confidence interval. Infinite for `df = 0`.
///
/// Exact to about 1e-14 relative (the rounding of a distribution function summed in
/// doubles): Newton's method on the closed-form distribution function
/// ([`t_two_sided`]) from the Cornish–Fisher expansion, which alone is used beyond
/// [`T_SERIES_MAX_DF`] degrees of freedom, where it is within 5e-16 of the true value.
///
/// Only `libm` and arithmetic are used, so the value is the same, bit for bit, in native
/// code and in wasm (`tests/wasm.rs` pins it there). That is why this is not `statrs`:
/// its special functions call `f64::ln`, `exp` and friends, which native builds take
/// from the platform's math library and wasm from Rust's, and it would bring
/// `nalgebra` and `rand` into the app for one number.
pub fn t_975(df: u32) -> f64 {
    if df == 0 {
        return f64::INFINITY;
    }
    let start = t_975_cornish_fisher(df);
    if df > T_SERIES_MAX_DF {
        return start;
    }
    let nu = df as f64;
    // log of the density's normalising constant, Γ((ν+1)/2) / (√(νπ) Γ(ν/2)).
    let log_norm = libm::lgamma((nu + 1.0) / 2.0)
        - libm::lgamma(nu / 2.0)
        - 0.5 * libm::log(nu * core::f64::consts::PI);
    // P(|T| < t) is concave in t > 0, so Newton's steps approach the root from below
    // after the first and never overshoot it.
    let mut t = start;
    for _ in 0..50 {
        let density = libm::exp(log_norm - (nu + 1.0) / 2.0 * libm::log1p(t * t / nu));
        let step = (t_two_sided(t, df) - 0.95) / (2.0 * density);
        t -= step;
        if step.abs() <= 1e-15 * t {
            break;
        }
    }
    t
}

/// Above this many degrees of freedom [`t_975`] is the Cornish–Fisher expansion alone
/// (the closed-form distribution function sums `df / 2` terms).
pub const T_SERIES_MAX_DF: u32 = 1_000;

/// The Cornish–Fisher expansion of the 97.5% quantile of Student's t in powers of
/// `1/df` (Abramowitz & Stegun 26.7.5, four terms): a starting point for small `df`,
/// and the value itself for large `df` (its error falls as `df⁻⁵`: 4e-16 relative at
/// df 1,000, 1e-14 at 500).
fn t_975_cornish_fisher(df: u32) -> f64 {
    // The standard normal's 97.5% quantile.
    const X: f64 = 1.959_963_984_540_054;
    let x2 = X * X;
    let g1 = (x2 + 1.0) * X / 4.0;
    let g2 = ((5.0 * x2 + 16.0) * x2 + 3.0) * X / 96.0;
    let g3 = (((3.0 * x2 + 19.0) * x2 + 17.0) * x2 - 15.0) * X / 384.0;
    let g4 = ((((79.0 * x2 + 776.0) * x2 + 1482.0) * x2 - 1920.0) * x2 - 945.0) * X / 92160.0;
    let r = 1.0 / df as f64;
    X + r * (g1 + r * (g2 + r * (g3 + r * g4)))
}

/// P(|T| < t) for Student's t with `df ≥ 1` degrees of freedom and `t ≥ 0`, in closed
/// form (Abramowitz & Stegun 26.7.3 and 26.7.4, with θ = atan(t/√df)): a sum of
/// `df / 2` positive terms.
pub fn t_two_sided(t: f64, df: u32) -> f64 {
    let nu = df as f64;
    let r = nu + t * t;
    let sin = t / libm::sqrt(r);
    let cos2 = nu / r;
    // 1 + a₁cos²θ + a₁a₂cos⁴θ + …, with aₖ = 2k/(2k+1) (odd df) or (2k−1)/2k (even df).
    let (terms, odd) = (df.saturating_sub(2) / 2, df % 2 == 1);
    let mut term = 1.0;
    let mut sum = 1.0;
    for k in 1..=terms {
        let k = k as f64;
        term *= if odd {
            2.0 * k / (2.0 * k + 1.0)
        } else {
            (2.0 * k - 1.0) / (2.0 * k)
        } * cos2;
        sum += term;
    }
    if odd {
        let theta = libm::atan2(t, libm::sqrt(nu));
        let tail = if df == 1 {
            0.0
        } else {
            sin * libm::sqrt(cos2) * sum
        };
        core::f64::consts::FRAC_2_PI * (theta + tail)
    } else {
        sin * sum
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
        let s = Summary::of(&mut vec![10.0, 0.0, 5.0]);
        assert_eq!(percentile_sorted(&[0.0, 5.0, 10.0], 25.0), 2.5);
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

    /// The one-walk percentiles equal the rank-by-rank ones bit for bit, on random
    /// pairs with ties, zero counts and runs of one value.
    #[test]
    fn one_walk_weighted_percentiles_equal_rank_by_rank() {
        let mut rng = crate::rng::Rng::new(7);
        for case in 0..400 {
            let n = 1 + (rng.next_u64() % 60) as usize;
            let mut pairs: Vec<(f64, u64)> = (0..n)
                .map(|_| {
                    let v = (rng.next_u64() % 25) as f64 * 0.001;
                    (v, rng.next_u64() % 5 + (case % 3 == 0) as u64)
                })
                .collect();
            pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
            let total: u64 = pairs.iter().map(|p| p.1).sum();
            let pcts = [0.0, 50.0, 90.0, 95.0, 99.0, 100.0, 37.5];
            let got = percentiles_weighted_sorted(&pairs, total, pcts);
            for (g, pct) in got.iter().zip(pcts) {
                let want = percentile_weighted_sorted(&pairs, total, pct);
                assert_eq!(g.to_bits(), want.to_bits(), "case {case} pct {pct}");
            }
        }
        assert!(percentiles_weighted_sorted(&[], 0, [50.0])[0].is_nan());
    }

    #[test]
    fn confidence_interval() {
        let (m, ci) = mean_ci95(&[0.9, 1.0, 0.95, 0.97], 0.0, 1.0);
        assert!((m - 0.955).abs() < 1e-12);
        assert!(ci[0] < m && ci[1] == 1.0);
        let (m, ci) = mean_ci95(&[0.5], 0.0, 1.0);
        assert_eq!((m, ci), (0.5, [0.5, 0.5]));
        assert!(mean_ci95(&[], 0.0, 1.0).0.is_nan());
    }

    /// Published two-sided 95% critical values of Student's t (any statistics table),
    /// to their three decimals; df 31 to 60 once all read 2.000.
    #[test]
    fn t_quantile_matches_published_table() {
        let table = [
            (1, 12.706),
            (2, 4.303),
            (5, 2.571),
            (10, 2.228),
            (30, 2.042),
            (31, 2.040),
            (40, 2.021),
            (60, 2.000),
            (120, 1.980),
        ];
        for (df, want) in table {
            let got = t_975(df);
            assert!((got - want).abs() < 5e-4, "df {df}: {got} vs {want}");
        }
        assert_eq!(t_975(0), f64::INFINITY);
    }

    /// Against 40-digit values (mpmath: the root of 1 − I_{ν/(ν+t²)}(ν/2, 1/2)/2 = 0.975),
    /// on both sides of the series/expansion switch; and decreasing in df throughout.
    #[test]
    fn t_quantile_is_exact() {
        let exact = [
            (1, 12.706_204_736_174_705),
            (2, 4.302_652_729_749_464),
            (3, 3.182_446_305_283_709_5),
            (31, 2.039_513_446_396_408_6),
            (59, 2.000_995_378_088_268),
            (61, 1.999_623_584_994_939_8),
            (121, 1.979_763_762_505_387),
            (1000, 1.962_339_080_826_408_5),
            (5000, 1.960_438_551_706_508),
            (20_000, 1.960_082_605_158_135_3),
            (1_000_000, 1.959_966_356_814_107),
        ];
        for (df, want) in exact {
            let got = t_975(df);
            assert!(
                (got - want).abs() <= 1.5e-14 * want,
                "df {df}: {got:e} vs {want:e}"
            );
        }
        let series_end = t_975(T_SERIES_MAX_DF);
        let expansion_start = t_975_cornish_fisher(T_SERIES_MAX_DF);
        assert!((series_end - expansion_start).abs() < 2e-14);
        let mut last = f64::INFINITY;
        for df in 1..=T_SERIES_MAX_DF + 100 {
            let t = t_975(df);
            assert!(
                t < last && t > 1.959_963_984_540_054,
                "df {df}: {t} after {last}"
            );
            last = t;
        }
    }

    /// A small value with many ties: eighths in [-2.5, 5), some of them -0.0, or only
    /// non-negative ones (the integer-key path).
    fn tied_value() -> impl proptest::strategy::Strategy<Value = f64> {
        use proptest::prelude::*;
        (-20i32..40, any::<bool>()).prop_map(|(k, neg_zero)| {
            if k == 0 && neg_zero {
                -0.0
            } else {
                k as f64 * 0.125
            }
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(600))]

        /// Percentiles by selection are those of the sorted sample, bit for bit, and
        /// the mean is the sum in the order given.
        #[test]
        fn selected_percentiles_equal_sorted(
            mut xs in proptest::collection::vec(tied_value(), 1..300),
            non_negative in proptest::bool::ANY,
            mut pcts in proptest::collection::vec(0.0f64..=100.0, 1..6),
        ) {
            if non_negative {
                xs.iter_mut().for_each(|x| *x = x.abs());
            }
            let mut sorted = xs.clone();
            sort_floats(&mut sorted);
            let s = Summary::of(&mut xs.clone());
            let mean = xs.iter().sum::<f64>() / xs.len() as f64;
            proptest::prop_assert_eq!(s.mean.to_bits(), mean.to_bits());
            for (got, pct) in [s.p50, s.p90, s.p95, s.p99].into_iter().zip(SUMMARY_PCTS) {
                let want = percentile_sorted(&sorted, pct);
                proptest::prop_assert_eq!(got.to_bits(), want.to_bits(), "pct {}", pct);
            }
            pcts.extend([0.0, 100.0]);
            pcts.sort_by(f64::total_cmp);
            let pcts: [f64; 4] = [pcts[0], pcts[1], pcts[pcts.len() - 2], pcts[pcts.len() - 1]];
            let got = percentiles(&mut xs.clone(), pcts);
            for (g, pct) in got.into_iter().zip(pcts) {
                let want = percentile_sorted(&sorted, pct);
                proptest::prop_assert_eq!(g.to_bits(), want.to_bits(), "pct {}", pct);
            }
        }

        /// The weighted selection gives the sorted walk's percentiles bit for bit, on
        /// pairs with ties, zero counts and single elements, down to any depth at which
        /// it falls back to sorting.
        #[test]
        fn weighted_selection_equals_sorted(
            pairs in proptest::collection::vec((tied_value(), 0u64..5), 1..400),
            non_negative in proptest::bool::ANY,
            pcts in proptest::collection::vec(0.0f64..=100.0, 4),
            depth in 0u32..64,
        ) {
            let mut pairs = pairs;
            if non_negative {
                pairs.iter_mut().for_each(|p| p.0 = p.0.abs());
            }
            let total: u64 = pairs.iter().map(|p| p.1).sum();
            let mut sorted = pairs.clone();
            sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
            let pcts: [f64; 6] = [pcts[0], pcts[1], pcts[2], pcts[3], 0.0, 100.0];
            let want = percentiles_weighted_sorted(&sorted, total, pcts);
            let got = percentiles_weighted(&mut pairs.clone(), total, pcts);
            for ((g, w), pct) in got.iter().zip(want).zip(pcts) {
                proptest::prop_assert_eq!(g.to_bits(), w.to_bits(), "pct {}", pct);
            }
            if total > 0 {
                let wanted: Vec<(u64, usize)> =
                    (0..total).step_by(1 + total as usize / 17).zip(0..).collect();
                let found = select_ranks(&mut pairs.clone(), &wanted, depth);
                for &(rank, slot) in &wanted {
                    let want = value_at_rank(&sorted, rank);
                    proptest::prop_assert_eq!(found[slot].to_bits(), want.to_bits(), "rank {}", rank);
                }
                let s = Summary::of_weighted(&mut pairs.clone());
                let mean = pairs
                    .iter()
                    .filter(|p| p.1 > 0)
                    .map(|&(v, w)| v * w as f64)
                    .sum::<f64>()
                    / total as f64;
                proptest::prop_assert_eq!(s.mean.to_bits(), mean.to_bits());
            }
        }
    }
}
