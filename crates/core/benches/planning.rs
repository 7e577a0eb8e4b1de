//! Search benchmark: a full goodput search and a 6 × 6 knob sweep at the article's plan.
//!
//! `cargo bench -p goodput-core --bench planning` prints the median wall time of
//! - a goodput search with 20 replications per rate (the plan's default), on one thread
//!   and on every core, with latency detail per rate;
//! - the default 6 × 6 knob sweep (`max_num_seqs` 16…512 × budget 256…8192 and chunking
//!   off, 5 replications per rate), on one thread and on every core;
//!
//! and the number of simulations each ran. Pass `--quick` for one round each.
//!
//! Built for `wasm32-unknown-unknown`, the binary exports `bench_search` and
//! `bench_sweep` (each runs one single-threaded search or sweep and returns the goodput)
//! for a JavaScript host to time; see BENCHMARKS.md.

#[cfg(not(target_arch = "wasm32"))]
use goodput_core::search::default_threads;
use goodput_core::search::{search_goodput_threads, sweep_knobs_threads};
use goodput_core::Plan;
#[cfg(not(target_arch = "wasm32"))]
use std::time::Instant;

#[cfg(not(target_arch = "wasm32"))]
fn median_s(rounds: usize, mut f: impl FnMut() -> u32) -> (f64, u32) {
    let mut times = Vec::with_capacity(rounds);
    let mut jobs = 0;
    for _ in 0..rounds {
        let start = Instant::now();
        jobs = f();
        times.push(start.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], jobs)
}

/// One goodput search of the default plan on one thread [requests/s] (wasm entry point).
#[cfg(target_arch = "wasm32")]
#[no_mangle]
pub extern "C" fn bench_search() -> f64 {
    search_goodput_threads(&Plan::default(), 1, &mut |_| true).map_or(-1.0, |r| r.goodput_rps)
}

/// One default 6 × 6 knob sweep on one thread: the best goodput [requests/s] (wasm entry point).
#[cfg(target_arch = "wasm32")]
#[no_mangle]
pub extern "C" fn bench_sweep() -> f64 {
    sweep_knobs_threads(&Plan::default(), 1, &mut |_| true)
        .map_or(-1.0, |r| r.best_cell().goodput_rps)
}

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let rounds = if quick { 1 } else { 5 };
    let plan = Plan::default();
    let cores = default_threads();
    for threads in [1, cores] {
        let mut goodput = 0.0;
        let (t, jobs) = median_s(rounds, || {
            match search_goodput_threads(&plan, threads, &mut |_| true) {
                Ok(r) => {
                    goodput = r.goodput_rps;
                    r.jobs_run
                }
                Err(e) => panic!("search: {e}"),
            }
        });
        println!(
            "goodput search, R = {:>2}, {threads} thread(s): {:>8.1} ms  ({jobs} simulations, {:.0} µs each; goodput {goodput:.2} req/s)",
            plan.run.replications,
            t * 1e3,
            t * 1e6 * threads as f64 / jobs.max(1) as f64,
        );
    }
    for threads in [1, cores] {
        let mut best = String::new();
        let (t, jobs) = median_s(rounds.min(3), || {
            match sweep_knobs_threads(&plan, threads, &mut |_| true) {
                Ok(r) => {
                    let c = r.best_cell();
                    best = format!(
                        "best {} seqs × budget {}: {:.2} req/s",
                        c.max_num_seqs, c.batched_tokens, c.goodput_rps
                    );
                    r.jobs_run
                }
                Err(e) => panic!("sweep: {e}"),
            }
        });
        println!(
            "knob sweep {}×{}, {threads} thread(s):       {:>8.1} ms  ({jobs} simulations; {best})",
            plan.run.sweep_max_num_seqs.len(),
            plan.run.sweep_batched_tokens.len(),
            t * 1e3,
        );
    }
}
