//! The simulator in a browser: the golden values native code also asserts, bit for bit
//! (a simulation, Student's t quantile). Its speed in the browser is a benchmark,
//! `tests/wasm_bench.rs`, not a test.
//!
//! Run with `cargo test --target wasm32-unknown-unknown -p goodput-core --test wasm`
//! (headless Chromium through chromedriver; see `webdriver.json`).
#![cfg(target_arch = "wasm32")]

use goodput_core::sim::SimConfigOf;
use goodput_core::sim::{simulate, SimConfig};
use goodput_core::Plan;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

/// The golden values of `tests/golden.json`, which native tests assert too.
fn golden() -> serde_json::Value {
    serde_json::from_str(include_str!("golden.json")).expect("golden JSON")
}

/// Same plan, seed and constants as `golden_value` in `tests/vectors/sim.rs`.
#[wasm_bindgen_test]
fn golden_value_matches_native() {
    let g = golden();
    let cfg = SimConfig::from_plan(&Plan::default(), 21.0).expect("default plan is valid");
    let r = simulate(&cfg, 42).expect("runs");
    let want = g["simulation"]["attainment"].as_f64().expect("number");
    assert_eq!(
        r.attainment.to_bits(),
        want.to_bits(),
        "attainment {}",
        r.attainment
    );
    let want = g["simulation"]["ttft_p99_s"].as_f64().expect("number");
    assert_eq!(
        r.ttft_s.p99.to_bits(),
        want.to_bits(),
        "ttft p99 {}",
        r.ttft_s.p99
    );
}

/// Same bits as `t_quantile_bits` in `src/stats.rs`: the t quantile uses only `libm`
/// and arithmetic, so native code and wasm agree exactly.
#[wasm_bindgen_test]
fn t_quantile_matches_native() {
    let g = golden();
    let values = g["t_975_bits"]["values"].as_array().expect("values");
    assert!(values.len() >= 9);
    for v in values {
        let df = v[0].as_u64().expect("df") as u32;
        let bits = u64::from_str_radix(v[1].as_str().expect("hex"), 16).expect("hex");
        let t = goodput_core::stats::t_975(df);
        assert_eq!(t.to_bits(), bits, "df {df}: {t}");
    }
}
