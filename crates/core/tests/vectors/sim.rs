//! Roofline and simulator vectors.

use goodput_core::plan::KvPolicy;
use goodput_core::presets;
use goodput_core::roofline::StepModel;
use goodput_core::roofline::StepModelOf;
use goodput_core::sim::SimConfigOf;
use goodput_core::sim::{attainment, simulate, SimConfig};
use goodput_core::Plan;

fn close(x: f64, want: f64, tol: f64) -> bool {
    (x - want).abs() <= tol
}

#[test]
fn decode_step_of_110_sequences() {
    let s = StepModel::from_plan(&Plan::default());
    let ctx = 110.0 * 940.0;
    // 16 GB of weights + 110 × 940 × 131,072 bytes of KV ≈ 29.5 GB.
    assert!(
        close(s.bytes_read(ctx), 29.5e9, 0.1e9),
        "{}",
        s.bytes_read(ctx)
    );
    assert!(close(s.memory_time_s(ctx), 8.8e-3, 0.05e-3));
    assert!(close(s.step_time_s(110.0, ctx), 9.8e-3, 0.05e-3));
}

#[test]
fn prefill_chunks_and_load() {
    let s = StepModel::from_plan(&Plan::default());
    assert!(close(s.compute_time_s(512.0), 13.8e-3, 0.05e-3));
    assert!(close(s.compute_time_s(2048.0), 55e-3, 0.5e-3));
    // A 512-token chunk step is compute-bound: its time is c0 + the chunk's compute.
    assert!(close(s.step_time_s(512.0, 0.0), 14.8e-3, 0.05e-3));
    // 20 req/s × 1,100 prompt tokens × 16 GFLOP ≈ 352 TFLOP/s ≈ 59% of 593.
    assert!(close(2.0 * s.params * 20.0 * 1100.0, 352e12, 0.5e12));
    assert!(close(s.compute_load(20.0 * 1100.0), 0.59, 0.005));
}

#[test]
fn article_presets_give_the_article_constants() {
    let mut plan = Plan::default();
    presets::model("article-8b")
        .expect("preset")
        .apply(&mut plan);
    presets::gpu("h100-sxm").expect("preset").apply(&mut plan);
    let s = StepModel::from_plan(&plan);
    assert_eq!(s.weight_bytes, 16e9);
    assert_eq!(s.kv_bytes_per_token, 131_072.0);
    assert_eq!(s.mem_bandwidth_bytes_per_s, 3.35e12);
    assert!(close(s.compute_flops_per_s, 593e12, 1e6));
    assert_eq!(s.step_overhead_s, 1e-3);
}

/// The article's reference configuration (no KV limit) at one point.
fn article(rate: f64, budget: u32, chunked: bool) -> SimConfig {
    let mut plan = Plan::default();
    plan.engine.kv_policy = KvPolicy::None;
    plan.engine.max_num_batched_tokens = budget;
    plan.engine.chunked_prefill = chunked;
    SimConfig::from_plan(&plan, rate).expect("article plan is valid")
}

/// Attainment over seeds 0..100, sorted, and its mean.
fn seeds(cfg: &SimConfig) -> (Vec<f64>, f64) {
    let mut xs: Vec<f64> = (0..100)
        .map(|s| attainment(cfg, s).expect("runs"))
        .collect();
    xs.sort_by(f64::total_cmp);
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    (xs, mean)
}

/// The article's single-seed figure must lie in the central ~95% of our seeds
/// (between the 3rd lowest and the 3rd highest of 100).
fn assert_inside(name: &str, xs: &[f64], article: f64) {
    let (lo, hi) = (xs[2], xs[97]);
    assert!(
        lo <= article && article <= hi,
        "{name}: article {article} outside [{lo}, {hi}]"
    );
}

#[test]
fn article_table_rates_in_distribution() {
    let mut means = Vec::new();
    for (rate, article_figure) in [
        (16.0, 1.0),
        (18.0, 1.0),
        (20.0, 0.976),
        (22.0, 0.913),
        (24.0, 0.44),
        (26.0, 0.11),
    ] {
        let (xs, mean) = seeds(&article(rate, 512, true));
        assert_inside(&format!("{rate} req/s"), &xs, article_figure);
        means.push(mean);
    }
    // The cliff: flat near 100% up to 18, about 0.97 at 20, then a steep fall.
    assert!(means[0] > 0.99 && means[1] > 0.98, "{means:?}");
    assert!(
        (0.95..=0.99).contains(&means[2]),
        "mean at 20 req/s {}",
        means[2]
    );
    assert!(means.windows(2).all(|w| w[0] >= w[1]), "{means:?}");
    assert!(means[4] < 0.8 && means[5] < 0.3, "{means:?}");
}

#[test]
fn article_table_budgets_in_distribution() {
    let (b256, m256) = seeds(&article(20.0, 256, true));
    let (b2048, m2048) = seeds(&article(20.0, 2048, true));
    let (nochunk, mnc) = seeds(&article(20.0, 512, false));
    assert_inside("budget 256", &b256, 0.76);
    assert_inside("budget 2048", &b2048, 0.50);
    assert_inside("no chunking", &nochunk, 0.15);
    // 512 is the sweet spot; both other budgets and no chunking do worse on average.
    let (_, m512) = seeds(&article(20.0, 512, true));
    assert!(
        m256 < m512 && m2048 < m512 && mnc < m512,
        "{m256} {m2048} {mnc} {m512}"
    );
}

/// The golden values of `tests/golden.json` (also asserted in wasm32 by `tests/wasm.rs`).
fn golden(section: &str, key: &str) -> f64 {
    let doc: serde_json::Value =
        serde_json::from_str(include_str!("../golden.json")).expect("golden JSON");
    doc[section][key].as_f64().expect("a golden number")
}

/// A fixed plan and seed give these exact bits natively and in wasm32.
#[test]
fn golden_value() {
    let cfg = SimConfig::from_plan(&Plan::default(), 21.0).expect("default plan is valid");
    let r = simulate(&cfg, 42).expect("runs");
    let want = golden("simulation", "attainment");
    assert_eq!(
        r.attainment.to_bits(),
        want.to_bits(),
        "attainment {}",
        r.attainment
    );
    let want = golden("simulation", "ttft_p99_s");
    assert_eq!(
        r.ttft_s.p99.to_bits(),
        want.to_bits(),
        "ttft p99 {}",
        r.ttft_s.p99
    );
}

/// The page's check figure, exactly (the derivation by hand is in `tests/golden.json`).
#[test]
fn golden_decode_step() {
    let s = StepModel::from_plan(&Plan::default());
    let want = golden("decode_step_s", "value");
    assert_eq!(
        s.step_time_s(110.0, 110.0 * 940.0).to_bits(),
        want.to_bits()
    );
    let by_hand = (8e9 * 2.0 + 110.0 * 940.0 * 131_072.0) / 3.35e12 + 1e-3;
    assert!((want - by_hand).abs() <= 1e-15, "{want} against {by_hand}");
}
