//! Simulator benchmark: time per 2,500-request point at the article's configuration.
//!
//! `cargo bench -p goodput-core --bench sim` prints the median time of one point on the
//! fast path (`attainment`) and the full path (`simulate`), over many seeds.
//! `cargo bench -p goodput-core --bench sim -- --table` also prints the article-table
//! distributions (100 seeds per point) that `docs/models.md` quotes.

use std::hint::black_box;
use std::time::Instant;

use goodput_core::plan::KvPolicy;
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

/// Median and minimum wall time per call of `f` over `seeds` seeds, repeated `rounds` times [µs].
fn time_per_point(rounds: usize, seeds: u64, mut f: impl FnMut(u64) -> f64) -> (f64, f64) {
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
    (per_point[per_point.len() / 2], per_point[0])
}

fn table() {
    println!("\npoint                 mean    sd      min     3rd     p50     98th    max   (seeds 0..100)");
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

fn main() {
    let cfg = article(20.0, 512, true);
    // `--points N`: points per round in the profiling modes (N × rounds in all).
    let args: Vec<String> = std::env::args().collect();
    let points = |default: u64| {
        args.iter()
            .position(|a| a == "--points")
            .and_then(|i| args.get(i + 1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(default)
    };
    if std::env::args().any(|a| a == "--profile") {
        // 2,000 attainment-only points, for a profiler or `perf stat`.
        let (med, _) = time_per_point(10, points(200), |s| attainment(&cfg, s).unwrap_or(0.0));
        println!("attainment(): median {med:.1} µs/point");
        return;
    }
    if std::env::args().any(|a| a == "--profile-full") {
        let (med, _) = time_per_point(4, points(100), |s| {
            simulate(&cfg, s).map_or(0.0, |r| r.ttft_s.p99)
        });
        println!("simulate(): median {med:.1} µs/point");
        return;
    }
    if std::env::args().any(|a| a == "--profile-traffic") {
        let (med, _) = time_per_point(10, 200, |s| {
            let w = cfg
                .traffic
                .generate(2500, &mut goodput_core::rng::Rng::new(s));
            w.arrival_s[2499]
        });
        println!("traffic: median {med:.1} µs/point");
        return;
    }
    let rep = match simulate(&cfg, 0) {
        Ok(r) => r,
        Err(e) => panic!("{e}"),
    };
    println!(
        "article point: 2,500 requests, 20 req/s, 128 seqs, budget 512; {} steps",
        rep.steps
    );
    let (med, min) = time_per_point(15, 200, |s| {
        let w = cfg
            .traffic
            .generate(2500, &mut goodput_core::rng::Rng::new(s));
        w.arrival_s[2499]
    });
    println!("traffic generation alone: median {med:.1} µs/point, best {min:.1} µs/point");
    let (med, min) = time_per_point(15, 200, |s| attainment(&cfg, s).unwrap_or(0.0));
    println!("attainment(): median {med:.1} µs/point, best {min:.1} µs/point");
    let (med, min) = time_per_point(5, 100, |s| simulate(&cfg, s).map_or(0.0, |r| r.ttft_s.p99));
    println!("simulate():   median {med:.1} µs/point, best {min:.1} µs/point");
    if std::env::args().any(|a| a == "--table") {
        table();
    }
}
