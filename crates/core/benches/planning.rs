//! Search benchmark: a full goodput search and a 6 × 6 knob sweep at the article's plan.
//!
//! `cargo bench -p goodput-core --bench planning` times, with criterion,
//! - a goodput search with 20 replications per rate (the plan's default), on one thread
//!   and on every core, with latency detail per rate;
//! - the default 6 × 6 knob sweep (`max_num_seqs` 16…512 × budget 256…8192 and chunking
//!   off, 5 replications per rate), on one thread and on every core;
//! - the search on one thread with the traffic's per-thread store of draws emptied
//!   first (`cold store`): a first search, as in a fresh worker, where the other
//!   figures are those of a repeated one, as "Run again" repeats it;
//!
//! and prints, once, the number of simulations each runs and the answer it finds.
//!
//! Built for `wasm32-unknown-unknown`, the binary exports `bench_search`,
//! `bench_search_cold` and `bench_sweep` (each runs one single-threaded search or sweep
//! and returns the goodput) for a JavaScript host to time; see BENCHMARKS.md. Criterion is a native-only
//! dev-dependency, so the wasm build has neither it nor its `main`.

use goodput_core::search::{search_goodput_threads, sweep_knobs_threads};
use goodput_core::Plan;

/// One goodput search of the default plan on one thread [requests/s] (wasm entry point).
#[cfg(target_arch = "wasm32")]
#[no_mangle]
pub extern "C" fn bench_search() -> f64 {
    search_goodput_threads(&Plan::default(), 1, &mut |_| true).map_or(-1.0, |r| r.goodput_rps)
}

/// [`bench_search`] with the traffic's store of draws emptied first (wasm entry point).
#[cfg(target_arch = "wasm32")]
#[no_mangle]
pub extern "C" fn bench_search_cold() -> f64 {
    goodput_core::traffic::clear_stored_draws();
    bench_search()
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
    use criterion::{BenchmarkId, Criterion, SamplingMode};
    use goodput_core::search::default_threads;

    let plan = Plan::default();
    let threads = {
        let mut t = vec![1, default_threads()];
        t.dedup();
        t
    };
    // What each run does, printed once: the work is the same every iteration.
    match search_goodput_threads(&plan, 1, &mut |_| true) {
        Ok(r) => println!(
            "goodput search, R = {}: {} simulations; goodput {} req/s",
            plan.run.replications, r.jobs_run, r.goodput_rps
        ),
        Err(e) => panic!("search: {e}"),
    }
    match sweep_knobs_threads(&plan, 1, &mut |_| true) {
        Ok(r) => {
            let c = r.best_cell();
            println!(
                "knob sweep {}×{}: {} simulations; best {} seqs × budget {}: {} req/s",
                plan.run.sweep_max_num_seqs.len(),
                plan.run.sweep_batched_tokens.len(),
                r.jobs_run,
                c.max_num_seqs,
                c.batched_tokens,
                c.goodput_rps
            );
        }
        Err(e) => panic!("sweep: {e}"),
    }

    let mut c = Criterion::default().configure_from_args();
    let mut g = c.benchmark_group("goodput search R=20");
    g.sampling_mode(SamplingMode::Flat).sample_size(10);
    for &t in &threads {
        g.bench_with_input(BenchmarkId::new("threads", t), &t, |b, &t| {
            b.iter(|| search_goodput_threads(&plan, t, &mut |_| true))
        });
    }
    g.bench_function("cold store, threads/1", |b| {
        b.iter(|| {
            goodput_core::traffic::clear_stored_draws();
            search_goodput_threads(&plan, 1, &mut |_| true)
        })
    });
    g.finish();
    let mut g = c.benchmark_group("knob sweep 6x6 R=5");
    g.sampling_mode(SamplingMode::Flat).sample_size(10);
    for &t in &threads {
        g.bench_with_input(BenchmarkId::new("threads", t), &t, |b, &t| {
            b.iter(|| sweep_knobs_threads(&plan, t, &mut |_| true))
        });
    }
    g.finish();
    c.final_summary();
}
