//! Benchmark, not a test: the simulations as the page's workers run them, in a browser,
//! built like the page's module (`--profile page`) or like the core's own benchmark
//! (`--release`). Nothing is asserted (speed is measured, never asserted);
//! `scripts/test.sh` does not run it, and `docs/benchmark-history.md` records its figures
//! ("Release opt-level"; "The event order without the arrivals in the heap").
//!
//! - whole goodput searches of the default plan, every batch answered by
//!   `protocol::handle` on the JSON a worker receives (time per job);
//! - the core benchmark's points (`crates/core/tests/wasm_bench.rs`): `attainment()` and
//!   `simulate()` of the article's plan at 20 req/s (time per point);
//! - points of the disaggregated sizing: `simulate_disagg` of the default plan at
//!   20 req/s on 2 prefill and 2 decode instances (time per point).
//!
//! Every batch, and every group of 5 points, is timed on its own and the best and the
//! median are printed: on a busy machine the best is the least disturbed figure. (Groups,
//! not single points: the page's clock is coarsened, up to 100 µs without cross-origin
//! isolation.)
//!
//! ```sh
//! CHROMEDRIVER=$(command -v chromedriver) WASM_BINDGEN_TEST_WEBDRIVER_JSON=$PWD/webdriver.json \
//!   cargo test --profile page --target wasm32-unknown-unknown -p goodput-app --test wasm_sim_bench -- --nocapture
//! ```
//!
//! A test binary's final crate is this package's test crate, so its link-time
//! optimisation runs at this package's opt-level, as the page's does at its binary's.
#![cfg(target_arch = "wasm32")]

use goodput_app::compute::pool::now_ms;
use goodput_app::compute::protocol::{handle, Request, WorkerReply, WorkerRequest};
use goodput_core::disagg::{simulate_disagg, DisaggConfig};
use goodput_core::plan::KvPolicy;
use goodput_core::search::{answer_batches, GoodputSearch, Job};
use goodput_core::sim::SimConfigOf;
use goodput_core::sim::{attainment, simulate, SimConfig};
use goodput_core::Plan;
use wasm_bindgen_test::{console_log, wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

/// Runs one whole goodput search of `plan` through the worker protocol; returns the time
/// per job of each batch [µs].
fn one_search(plan: &Plan) -> Vec<f64> {
    let mut search = GoodputSearch::new(plan).expect("default plan searches");
    let mut per_job = Vec::new();
    let answer = |jobs: Vec<Job>| {
        let n = jobs.len() as f64;
        let body = serde_json::to_string(&WorkerRequest::Sim(Request {
            run: 1,
            plan: plan.clone(),
            jobs,
            tag: 0,
        }))
        .expect("request serialises");
        let t0 = now_ms();
        let reply = handle(&body);
        per_job.push((now_ms() - t0) * 1e3 / n);
        match serde_json::from_str::<WorkerReply>(&reply).expect("reply parses") {
            WorkerReply::Sim(r) => match r.error {
                None => Ok(r.results),
                Some(e) => Err(e),
            },
            other => Err(format!("unexpected reply {other:?}")),
        }
    };
    answer_batches(&mut search, answer, |_| Ok(()))
        .expect("the search runs")
        .expect("the search ends");
    per_job
}

/// The smallest and the median of `xs`.
fn min_median(mut xs: Vec<f64>) -> (f64, f64) {
    xs.sort_by(f64::total_cmp);
    (xs[0], xs[xs.len() / 2])
}

/// Ten whole searches of the default plan after one to warm up. Each batch is timed on
/// its own: on a busy machine the smallest batch time is the least disturbed.
#[wasm_bindgen_test]
fn time_default_searches() {
    let plan = Plan::default();
    one_search(&plan);
    let mut all = Vec::new();
    for _ in 0..10 {
        all.extend(one_search(&plan));
    }
    let batches = all.len();
    let (min, median) = min_median(all);
    console_log!(
        "wasm default searches through protocol::handle, {batches} batches: {min:.0} µs/job best batch, {median:.0} µs/job median batch"
    );
}

/// The core benchmark's point: 2,500 requests at the article's 20 req/s, 128 seqs,
/// budget 512. 40 groups of 5 points of each, timed per group, after 20 to warm up.
#[wasm_bindgen_test]
fn time_points() {
    let mut plan = Plan::default();
    plan.engine.kv_policy = KvPolicy::None;
    let cfg = SimConfig::from_plan(&plan, 20.0).expect("article plan is valid");
    let mut sink = 0.0;
    for seed in 0..20 {
        sink += attainment(&cfg, seed).expect("runs");
        sink += simulate(&cfg, seed).expect("runs").ttft_s.p99;
    }
    let (mut att, mut sim) = (Vec::new(), Vec::new());
    for group in 0..40u64 {
        let seeds = group * 5..group * 5 + 5;
        let t0 = now_ms();
        for seed in seeds.clone() {
            sink += attainment(&cfg, seed).expect("runs");
        }
        let t1 = now_ms();
        for seed in seeds {
            sink += simulate(&cfg, seed).expect("runs").ttft_s.p99;
        }
        let t2 = now_ms();
        att.push((t1 - t0) * 1e3 / 5.0);
        sim.push((t2 - t1) * 1e3 / 5.0);
    }
    let (a_min, a_med) = min_median(att);
    let (s_min, s_med) = min_median(sim);
    console_log!(
        "wasm points, per point: attainment() {a_min:.0} µs best group, {a_med:.0} µs median; simulate() {s_min:.0} µs best group, {s_med:.0} µs median (checksum {sink:.3})"
    );
    std::hint::black_box(sink);
}

/// Points of the disaggregated sizing: the default plan at 20 req/s on 2 prefill and
/// 2 decode instances, 2,500 requests each. 20 groups of 5 points, timed per group,
/// after 10 to warm up.
#[wasm_bindgen_test]
fn time_disagg_points() {
    let cfg = DisaggConfig::from_plan(&Plan::default(), 20.0).expect("default plan sizes");
    let mut sink = 0.0;
    for seed in 0..10 {
        sink += simulate_disagg(&cfg, 2, 2, seed).expect("runs").attainment;
    }
    let mut per_point = Vec::new();
    for group in 0..20u64 {
        let t0 = now_ms();
        for seed in group * 5..group * 5 + 5 {
            sink += simulate_disagg(&cfg, 2, 2, seed).expect("runs").attainment;
        }
        per_point.push((now_ms() - t0) * 1e3 / 5.0);
    }
    let (min, median) = min_median(per_point);
    console_log!(
        "wasm disaggregated points (2P2D, 20 req/s): {min:.0} µs best group, {median:.0} µs median (checksum {sink:.3})"
    );
    std::hint::black_box(sink);
}
