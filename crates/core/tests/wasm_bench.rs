//! Benchmark, not a test: the simulator's speed in a browser. Five rounds of 20
//! simulation points, printed per round; nothing is asserted (speed is measured, never
//! asserted). `scripts/test.sh` does not run it; `BENCHMARKS.md` records its figures.
//!
//! ```sh
//! CHROMEDRIVER=$(command -v chromedriver) WASM_BINDGEN_TEST_WEBDRIVER_JSON=$PWD/webdriver.json \
//!   cargo test --release --target wasm32-unknown-unknown -p goodput-core --test wasm_bench -- --nocapture
//! ```
#![cfg(target_arch = "wasm32")]

use goodput_core::plan::KvPolicy;
use goodput_core::sim::SimConfigOf;
use goodput_core::sim::{attainment, simulate, SimConfig};
use goodput_core::Plan;
use wasm_bindgen_test::{console_log, wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// The benchmark point: 2,500 requests at the article's 20 req/s, 128 seqs, budget 512.
/// Five rounds of 20 points each; later rounds run V8's optimised tier.
#[wasm_bindgen_test]
fn time_twenty_points() {
    let mut plan = Plan::default();
    plan.engine.kv_policy = KvPolicy::None;
    let cfg = SimConfig::from_plan(&plan, 20.0).expect("article plan is valid");
    let mut sink = 0.0;
    let mut best = [f64::INFINITY; 2];
    for round in 0..5 {
        let t0 = now_ms();
        for seed in 0..20 {
            sink += attainment(&cfg, seed).expect("runs");
        }
        let t1 = now_ms();
        for seed in 0..20 {
            sink += simulate(&cfg, seed).expect("runs").ttft_s.p99;
        }
        let t2 = now_ms();
        let us = [(t1 - t0) * 1e3 / 20.0, (t2 - t1) * 1e3 / 20.0];
        console_log!(
            "round {round}: attainment() {:.0} µs/point, simulate() {:.0} µs/point",
            us[0],
            us[1]
        );
        best = [best[0].min(us[0]), best[1].min(us[1])];
    }
    console_log!(
        "wasm best of 5 rounds of 20 points: attainment() {:.0} µs/point, simulate() {:.0} µs/point (checksum {sink:.3})",
        best[0],
        best[1]
    );
    std::hint::black_box(sink);
}
