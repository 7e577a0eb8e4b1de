//! Calibration benchmark: fitting 8 measured rates of `vllm bench serve`-like results.
//!
//! `cargo bench -p goodput-core --bench calibrate` times, with criterion, a whole
//! calibration (full fit, 8 leave-one-out refits, bootstrap refits) of 8 synthetic
//! measured rates of 1,000 requests each, with per-request lengths, on one thread and on
//! every core, and prints the objective evaluations it takes. Criterion's options follow
//! `--` (`--quick` for fewer rounds).
//!
//! `-- --write-vllm DIR` writes the 8 points as `vllm bench serve` files (the input of
//! `tests/e2e/bench-calibrate.mjs`, which times the same fit in the browser) and times
//! nothing.

use criterion::{BenchmarkId, Criterion, SamplingMode};
use goodput_core::calibrate::{calibrate_threads, synthetic_points, Constants};
use goodput_core::measure::{write, Format, MeasuredSet};
use goodput_core::search::default_threads;
use goodput_core::Plan;

fn main() {
    let plan = Plan::default();
    let truth = Constants {
        bandwidth_efficiency: 0.8,
        compute_efficiency: 0.7,
        step_overhead_s: 3e-3,
        seq_overhead_s: 20e-6,
        frontend_s: 0.02,
        prefill_overhead_s: 2e-3,
        kv_read_efficiency: 0.6,
    };
    let rates = [2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0];
    let points = synthetic_points(&plan, &truth, &rates, 1000, 0.02, true, 0xBEEF)
        .expect("synthetic points");
    let args: Vec<String> = std::env::args().collect();
    if let Some(dir) = args
        .iter()
        .position(|a| a == "--write-vllm")
        .and_then(|i| args.get(i + 1))
    {
        std::fs::create_dir_all(dir).expect("output folder");
        for p in &points {
            let path = std::path::Path::new(dir).join(&p.source);
            std::fs::write(&path, write::vllm_json(p)).expect("write a result file");
        }
        println!("wrote {} vllm bench serve files to {dir}", points.len());
        return;
    }
    let set = MeasuredSet {
        files: points.iter().map(|p| p.source.clone()).collect(),
        format: Format::Vllm,
        model: None,
        engine: None,
        points,
    };
    let evals = calibrate_threads(&plan, &set, 1, &mut |_| true)
        .expect("fit")
        .evaluations;
    println!("calibrate 8 rates × 1000 requests: {evals} objective evaluations");

    let mut threads = vec![1, default_threads()];
    threads.dedup();
    let mut c = Criterion::default().configure_from_args();
    let mut g = c.benchmark_group("calibrate 8 rates x 1000 requests");
    g.sampling_mode(SamplingMode::Flat).sample_size(10);
    for &t in &threads {
        g.bench_with_input(BenchmarkId::new("threads", t), &t, |b, &t| {
            b.iter(|| calibrate_threads(&plan, &set, t, &mut |_| true))
        });
    }
    g.finish();
    c.final_summary();
}
