//! Calibration benchmark: fitting 8 measured rates of `vllm bench serve`-like results.
//!
//! `cargo bench -p goodput-core --bench calibrate` prints the median wall time of a
//! whole calibration (full fit, 8 leave-one-out refits, bootstrap refits) of 8
//! synthetic measured rates of 1,000 requests each, with per-request lengths, on one
//! thread and on every core, and the objective evaluations it took. Pass `--quick`
//! for one round each, and `--write-vllm DIR` to also write the 8 points as
//! `vllm bench serve` files (the input of `tests/e2e/bench-calibrate.mjs`, which times
//! the same fit in the browser).

use goodput_core::calibrate::{calibrate_threads, synthetic_points, Constants};
use goodput_core::measure::{write, Format, MeasuredSet};
use goodput_core::search::default_threads;
use goodput_core::Plan;
use std::time::Instant;

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let rounds = if quick { 1 } else { 5 };
    let plan = Plan::default();
    let truth = Constants {
        bandwidth_efficiency: 0.8,
        compute_efficiency: 0.7,
        step_overhead_s: 3e-3,
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
    }
    let set = MeasuredSet {
        files: points.iter().map(|p| p.source.clone()).collect(),
        format: Format::Vllm,
        model: None,
        engine: None,
        points,
    };
    for threads in [1, default_threads()] {
        let mut times = Vec::new();
        let mut evals = 0;
        for _ in 0..rounds {
            let start = Instant::now();
            let r = calibrate_threads(&plan, &set, threads, &mut |_| true).expect("fit");
            times.push(start.elapsed().as_secs_f64());
            evals = r.evaluations;
        }
        times.sort_by(f64::total_cmp);
        println!(
            "calibrate 8 rates × 1000 requests, {threads} thread(s): median {:.3} s over {rounds} round(s), {evals} objective evaluations",
            times[times.len() / 2]
        );
    }
}
