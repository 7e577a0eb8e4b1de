//! The simulator in a browser: the golden values native code also asserts, bit for bit
//! (a simulation, Student's t quantile). Its speed in the browser is a benchmark,
//! `tests/wasm_bench.rs`, not a test.
//!
//! Run with `cargo test --target wasm32-unknown-unknown -p goodput-core --test wasm`
//! (headless Chromium through chromedriver; see `webdriver.json`).
#![cfg(target_arch = "wasm32")]

use goodput_core::sim::{simulate, SimConfig};
use goodput_core::Plan;
use wasm_bindgen_test::{console_log, wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

/// Same plan, seed and constants as `golden_value` in `tests/vectors/sim.rs`.
#[wasm_bindgen_test]
fn golden_value_matches_native() {
    let cfg = SimConfig::from_plan(&Plan::default(), 21.0).expect("default plan is valid");
    let r = simulate(&cfg, 42).expect("runs");
    assert_eq!(
        r.attainment.to_bits(),
        0.9678260869565217f64.to_bits(),
        "attainment {}",
        r.attainment
    );
    assert_eq!(
        r.ttft_s.p99.to_bits(),
        0.6079216000843904f64.to_bits(),
        "ttft p99 {}",
        r.ttft_s.p99
    );
}

/// Same bits as `t_quantile_bits` in `src/stats.rs`: the t quantile uses only `libm`
/// and arithmetic, so native code and wasm agree exactly.
#[wasm_bindgen_test]
fn t_quantile_matches_native() {
    let bits: [(u32, u64); 9] = [
        (1, 0x40296993aacc4d13),
        (2, 0x401135ea98e146ba),
        (5, 0x4004908d359dff2f),
        (31, 0x400050ec6d0032cf),
        (60, 0x4000009c24fe7d7d),
        (999, 0x3fff65c028f27262),
        (1000, 0x3fff65bda9fcfe21),
        (1001, 0x3fff65bb2c4ebf8e),
        (5000, 0x3fff5df4d0965a57),
    ];
    for (df, b) in bits {
        let t = goodput_core::stats::t_975(df);
        assert_eq!(t.to_bits(), b, "df {df}: {t}");
    }
}
