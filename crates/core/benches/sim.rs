//! Simulator benchmark: time per 2,500-request point at the article's configuration.
//!
//! `cargo bench -p goodput-core --bench sim` times, with criterion, one point's traffic
//! generation alone, the fast path (`attainment`) and the full path (`simulate`), each
//! over a fresh seed per iteration. Criterion's own options follow `--`
//! (`--quick`, a name filter such as `attainment`, `--sample-size N`).
//!
//! Three modes run a fixed amount of work instead, for instruction counts under
//! valgrind or `perf stat`, and skip criterion: `-- --profile` (`attainment`),
//! `-- --profile-full` (`simulate`) and `-- --profile-traffic`, with `--points N` points
//! per round. `-- --table` prints the article-table distributions (100 seeds per point)
//! that `docs/models.md` quotes, and nothing else.

use goodput_core::sim::SimConfigOf;
use std::hint::black_box;
use std::time::Instant;

use criterion::{BatchSize, Criterion};
use goodput_core::plan::KvPolicy;
use goodput_core::rng::Rng;
use goodput_core::sim::{attainment, simulate, SimConfig};
use goodput_core::Plan;

fn article(rate: f64, budget: u32, chunked: bool) -> SimConfig {
    let mut plan = Plan::default();
    plan.engine.kv_policy = KvPolicy::None;
    plan.engine.max_num_batched_tokens = budget;
    plan.engine.chunked_prefill = chunked;
    match SimConfig::from_plan(&plan, rate) {
        Ok(c) => c,
        Err(e) => panic!("article plan: {e}"),
    }
}

/// Median wall time per call of `f` over `seeds` seeds, repeated `rounds` times [µs]
/// (the fixed-work profiling modes).
fn time_per_point(rounds: usize, seeds: u64, mut f: impl FnMut(u64) -> f64) -> f64 {
    let mut per_point = Vec::with_capacity(rounds);
    let mut sink = 0.0;
    for _ in 0..rounds {
        let start = Instant::now();
        for seed in 0..seeds {
            sink += f(seed);
        }
        per_point.push(start.elapsed().as_secs_f64() * 1e6 / seeds as f64);
    }
    black_box(sink);
    per_point.sort_by(f64::total_cmp);
    per_point[per_point.len() / 2]
}

fn table() {
    println!("point                 mean    sd      min     3rd     p50     98th    max   (seeds 0..100)");
    let mut points: Vec<(String, SimConfig)> = [16.0, 18.0, 20.0, 22.0, 24.0, 26.0]
        .iter()
        .map(|&r| (format!("{r} req/s, budget 512"), article(r, 512, true)))
        .collect();
    points.push(("20 req/s, budget 256".into(), article(20.0, 256, true)));
    points.push(("20 req/s, budget 2048".into(), article(20.0, 2048, true)));
    points.push(("20 req/s, no chunking".into(), article(20.0, 512, false)));
    for (name, cfg) in points {
        let mut xs: Vec<f64> = (0..100)
            .map(|s| attainment(&cfg, s).unwrap_or(f64::NAN))
            .collect();
        xs.sort_by(f64::total_cmp);
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        let sd = (xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0)).sqrt();
        println!(
            "{name:<22}{mean:>6.3}  {sd:>6.3}  {:>6.3}  {:>6.3}  {:>6.3}  {:>6.3}  {:>6.3}",
            xs[0], xs[2], xs[50], xs[97], xs[99]
        );
    }
}

/// The fixed-work modes (`--profile*`, `--table`); `true` when one ran.
fn fixed_work(cfg: &SimConfig) -> bool {
    let args: Vec<String> = std::env::args().collect();
    let has = |flag: &str| args.iter().any(|a| a == flag);
    // `--points N`: points per round (N × rounds in all).
    let points = |default: u64| {
        args.iter()
            .position(|a| a == "--points")
            .and_then(|i| args.get(i + 1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(default)
    };
    if has("--profile") {
        let med = time_per_point(10, points(200), |s| attainment(cfg, s).unwrap_or(0.0));
        println!("attainment(): median {med:.1} µs/point");
    } else if has("--profile-full") {
        let med = time_per_point(4, points(100), |s| {
            simulate(cfg, s).map_or(0.0, |r| r.ttft_s.p99)
        });
        println!("simulate(): median {med:.1} µs/point");
    } else if has("--profile-traffic") {
        let med = time_per_point(10, points(200), |s| {
            cfg.traffic.generate(2500, &mut Rng::new(s)).arrival_s[2499]
        });
        println!("traffic: median {med:.1} µs/point");
    } else if has("--table") {
        table();
    } else {
        return false;
    }
    true
}

/// One seed per iteration, counting up, so every iteration simulates a different point.
fn next_seed(seed: &mut u64) -> u64 {
    *seed += 1;
    *seed
}

fn point(c: &mut Criterion, cfg: &SimConfig) {
    let mut g = c.benchmark_group("article point (2,500 requests, 20 req/s, budget 512)");
    let mut seed = 0;
    g.bench_function("traffic generation", |b| {
        b.iter_batched(
            || next_seed(&mut seed),
            |s| cfg.traffic.generate(2500, &mut Rng::new(s)),
            BatchSize::SmallInput,
        )
    });
    g.bench_function("attainment", |b| {
        b.iter_batched(
            || next_seed(&mut seed),
            |s| attainment(cfg, s),
            BatchSize::SmallInput,
        )
    });
    g.bench_function("simulate", |b| {
        b.iter_batched(
            || next_seed(&mut seed),
            |s| simulate(cfg, s),
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

fn main() {
    let cfg = article(20.0, 512, true);
    if fixed_work(&cfg) {
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    point(&mut c, &cfg);
    c.final_summary();
}
