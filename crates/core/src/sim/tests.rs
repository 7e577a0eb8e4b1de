//! Unit tests of the simulator: the fast engine against a naive per-sequence reference,
//! KV policies, extras, bounds and no-hang cases.

use std::collections::VecDeque;

use super::*;
use crate::plan::{Arrival, LengthDist, TraceRow};
use crate::rng::Rng;

fn plan_none() -> Plan {
    let mut plan = Plan::default();
    plan.engine.kv_policy = KvPolicy::None;
    plan
}

fn cfg_of(plan: &Plan, rate: f64) -> SimConfig {
    match SimConfig::from_plan(plan, rate) {
        Ok(c) => c,
        Err(e) => panic!("plan should be valid: {e}"),
    }
}

/// One running sequence of the naive reference.
struct Running {
    /// Request index (arrival order).
    request: usize,
    /// Prompt tokens prefilled so far.
    prefilled: u64,
    /// Context held: prefilled prompt plus decoded tokens.
    context: u64,
    /// Output tokens emitted so far (the first one at the end of prefill).
    emitted: u64,
}

/// The scheduler of the design notes, spelled out step by step with no shortcuts: every
/// step scans all running sequences (no KV limit, no extras). Slow on purpose; it is the
/// yardstick for the fast engine.
fn reference(cfg: &SimConfig, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let n = cfg.num_requests as usize;
    let w = cfg.traffic.generate(n, &mut Rng::new(seed));
    let prompt = |r: usize| w.prompt_tokens[r] as u64;
    let output = |r: usize| w.output_tokens[r] as u64;
    let step = engine::step_time_fn(cfg);
    let budget = if cfg.chunked_prefill {
        cfg.max_num_batched_tokens as u64
    } else {
        cfg.max_num_batched_tokens.max(cfg.traffic.prompt.max) as u64
    };
    let mut now = 0.0;
    let mut next_arrival = 0usize;
    let mut queue: VecDeque<usize> = VecDeque::new();
    let mut running: Vec<Running> = Vec::new();
    let mut first_token = vec![f64::NAN; n];
    let mut finish = vec![f64::NAN; n];
    loop {
        while next_arrival < n && w.arrival_s[next_arrival] <= now {
            queue.push_back(next_arrival);
            next_arrival += 1;
        }
        if queue.is_empty() && running.is_empty() {
            if next_arrival == n {
                break;
            }
            now = w.arrival_s[next_arrival];
            continue;
        }
        while running.len() < cfg.max_num_seqs as usize {
            match queue.pop_front() {
                Some(request) => running.push(Running {
                    request,
                    prefilled: 0,
                    context: 0,
                    emitted: 0,
                }),
                None => break,
            }
        }
        // Plan the step: decoders first, then prefill chunks in admission order.
        let decoding = |s: &Running| s.prefilled >= prompt(s.request);
        let decoders = running.iter().filter(|s| decoding(s)).count() as u64;
        let context: u64 = running
            .iter()
            .filter(|s| decoding(s))
            .map(|s| s.context)
            .sum();
        let mut room = budget.saturating_sub(decoders);
        let mut chunk = vec![0u64; running.len()];
        for (slot, s) in running.iter().enumerate() {
            if room == 0 {
                break;
            }
            if decoding(s) {
                continue;
            }
            let rest = prompt(s.request) - s.prefilled;
            chunk[slot] = if cfg.chunked_prefill {
                rest.min(room)
            } else {
                rest
            };
            room = room.saturating_sub(chunk[slot]);
        }
        let tokens = decoders + chunk.iter().sum::<u64>();
        now += step(tokens, context as f64);
        // Apply it.
        for (slot, s) in running.iter_mut().enumerate() {
            if s.prefilled >= prompt(s.request) {
                s.context += 1;
                s.emitted += 1;
            } else if chunk[slot] > 0 {
                s.prefilled += chunk[slot];
                s.context += chunk[slot];
                if s.prefilled >= prompt(s.request) {
                    s.emitted = 1;
                    first_token[s.request] = now;
                }
            }
        }
        running.retain(|s| {
            let over = s.prefilled >= prompt(s.request) && s.emitted >= output(s.request);
            if over {
                finish[s.request] = now;
            }
            !over
        });
    }
    let warm = cfg.warmup_requests as usize;
    let ttft = (warm..n).map(|r| first_token[r] - w.arrival_s[r]).collect();
    let tpot = (warm..n)
        .map(|r| (finish[r] - first_token[r]) / output(r).saturating_sub(1).max(1) as f64)
        .collect();
    (ttft, tpot)
}

fn assert_same_bits(a: &Summary, b: &Summary, what: &str) {
    for (x, y, f) in [
        (a.mean, b.mean, "mean"),
        (a.p50, b.p50, "p50"),
        (a.p90, b.p90, "p90"),
        (a.p95, b.p95, "p95"),
        (a.p99, b.p99, "p99"),
    ] {
        assert_eq!(
            x.to_bits(),
            y.to_bits(),
            "{what}.{f}: engine {x} vs reference {y}"
        );
    }
}

#[test]
fn engine_matches_the_naive_reference_exactly() {
    let mut cases: Vec<(Plan, f64)> = Vec::new();
    let mut p = plan_none();
    p.run.num_requests = 700;
    p.run.warmup_requests = 50;
    cases.push((p.clone(), 20.0));
    cases.push((p.clone(), 30.0)); // overload: long queue
    let mut q = p.clone();
    q.engine.max_num_batched_tokens = 2048;
    cases.push((q, 20.0));
    let mut q = p.clone();
    q.engine.chunked_prefill = false;
    cases.push((q, 20.0));
    let mut q = p.clone();
    // Decoders can outnumber the budget: prefill stalls until some finish.
    q.engine.max_num_seqs = 96;
    q.engine.max_num_batched_tokens = 64;
    cases.push((q, 4.0));
    let mut q = p.clone();
    q.engine.max_num_seqs = 3;
    q.traffic.output.min = 1;
    q.traffic.output.dist = LengthDist::LogNormal {
        median: 2.0,
        sigma: 1.0,
    };
    cases.push((q, 5.0));
    for (k, (plan, rate)) in cases.iter().enumerate() {
        let cfg = cfg_of(plan, *rate);
        for seed in [1u64, 77] {
            let r = simulate(&cfg, seed).expect("runs");
            let (mut ttft, mut tpot) = reference(&cfg, seed);
            let hits = ttft
                .iter()
                .zip(&tpot)
                .filter(|&(&a, &b)| cfg.slo.meets(a, b, f64::NAN.max(0.0)))
                .count();
            assert_eq!(
                r.attainment,
                hits as f64 / ttft.len() as f64,
                "case {k} seed {seed}"
            );
            assert_same_bits(&r.ttft_s, &Summary::of(&mut ttft), "ttft");
            assert_same_bits(&r.tpot_s, &Summary::of(&mut tpot), "tpot");
            assert_eq!(attainment(&cfg, seed).expect("runs"), r.attainment);
            assert_eq!(r.unfinished_requests, 0);
        }
    }
}

#[test]
fn same_seed_same_bits_other_seed_other_draws() {
    let cfg = cfg_of(&Plan::default(), 20.0);
    let a = simulate(&cfg, 5).expect("runs");
    let b = simulate(&cfg, 5).expect("runs");
    let c = simulate(&cfg, 6).expect("runs");
    assert_eq!(a, b);
    assert_ne!(a.ttft_s.p99.to_bits(), c.ttft_s.p99.to_bits());
}

#[test]
fn report_numbers_are_consistent() {
    let cfg = cfg_of(&plan_none(), 20.0);
    let r = simulate(&cfg, 3).expect("runs");
    assert_eq!(r.measured_requests, 2300);
    assert!(
        r.ttft_s.p50 <= r.ttft_s.p90
            && r.ttft_s.p90 <= r.ttft_s.p95
            && r.ttft_s.p95 <= r.ttft_s.p99
    );
    assert!(r.e2e_s.mean > r.ttft_s.mean);
    // Every request arrives in about 125 s; throughput ≈ rate × mean output (about 275).
    assert!(
        (4500.0..6500.0).contains(&r.output_tokens_per_s),
        "{}",
        r.output_tokens_per_s
    );
    // Pure decode of ~100 sequences takes about 9 to 10 ms; chunked steps about 14 ms.
    assert!(
        (0.008..0.02).contains(&r.itl_s.p50),
        "itl p50 {}",
        r.itl_s.p50
    );
    assert!(
        r.mean_running > 50.0 && r.mean_running <= 128.0,
        "running {}",
        r.mean_running
    );
    assert!(r.steps > 1000 && !r.truncated && r.preemptions == 0);
}

#[test]
fn overload_builds_a_queue() {
    let light = simulate(&cfg_of(&plan_none(), 10.0), 1).expect("runs");
    let heavy = simulate(&cfg_of(&plan_none(), 40.0), 1).expect("runs");
    assert!(heavy.mean_queue_len > 10.0 * light.mean_queue_len.max(0.1));
    assert!(heavy.peak_queue_len > 100);
    assert!(heavy.attainment < 0.2 && light.attainment > 0.95);
}

#[test]
fn step_cap_truncates_and_counts_misses() {
    let mut cfg = cfg_of(&plan_none(), 20.0);
    cfg.max_steps = 500;
    let r = simulate(&cfg, 1).expect("runs");
    assert!(r.truncated);
    assert_eq!(r.steps, 500);
    assert!(r.unfinished_requests > 1000);
    let finished_share = 1.0 - r.unfinished_requests as f64 / r.measured_requests as f64;
    assert!(r.attainment <= finished_share);
    assert_eq!(attainment(&cfg, 1).expect("runs"), r.attainment);
}

#[test]
fn nothing_hangs_on_extreme_inputs() {
    // One sequence at a time, one token per step, a huge rate: bounded by the step cap.
    let mut p = plan_none();
    p.engine.max_num_seqs = 1;
    p.engine.max_num_batched_tokens = 1;
    p.run.num_requests = 300;
    p.run.warmup_requests = 0;
    let r = simulate(&cfg_of(&p, 1e6), 1).expect("runs");
    assert!(r.truncated || r.unfinished_requests == 0);
    assert!(r.attainment < 0.05);
    // A tiny rate: long idle gaps are jumped, not stepped through.
    let r = simulate(&cfg_of(&p, 1e-6), 1).expect("runs");
    assert!(!r.truncated && r.unfinished_requests == 0);
    // Every KV policy with almost no memory: huge requests are refused, never waited on.
    for policy in [KvPolicy::Reserve, KvPolicy::Paged] {
        let mut p = Plan::default();
        p.engine.kv_policy = policy;
        p.run.num_requests = 400;
        p.run.warmup_requests = 0;
        p.hardware.memory_bytes = 16.2e9 / 0.9; // room for about 1,500 KV tokens
        let cfg = cfg_of(&p, 20.0);
        assert!(cfg.kv_capacity_tokens > 1000.0 && cfg.kv_capacity_tokens < 2000.0);
        let r = simulate(&cfg, 2).expect("runs");
        assert!(r.rejected_requests > 0, "{policy:?}: {r:?}");
        assert!(!r.truncated);
        assert_eq!(r.unfinished_requests, r.rejected_requests, "{policy:?}");
    }
}

#[test]
fn kv_policies_limit_concurrency() {
    let mut p = Plan::default();
    p.run.num_requests = 1500;
    // About 30,000 KV tokens: far less than 128 sequences of ~1,400 tokens need.
    p.hardware.memory_bytes = (16e9 + 30_000.0 * 131_072.0) / 0.9;
    let mut results = Vec::new();
    for policy in [KvPolicy::None, KvPolicy::Reserve, KvPolicy::Paged] {
        p.engine.kv_policy = policy;
        let r = simulate(&cfg_of(&p, 12.0), 4).expect("runs");
        results.push(r);
    }
    let (none, reserve, paged) = (&results[0], &results[1], &results[2]);
    assert_eq!(none.preemptions, 0);
    assert_eq!(reserve.preemptions, 0);
    assert!(paged.preemptions > 0, "paged must preempt: {paged:?}");
    assert!(reserve.mean_running < none.mean_running);
    assert!(paged.mean_running < none.mean_running);
    // Reserve holds prompt + 1,024 per sequence: at most ~28 of them fit in 30,000 tokens.
    assert!(reserve.mean_running < 30.0, "{}", reserve.mean_running);
    for r in &results {
        assert_eq!(r.unfinished_requests, 0);
        assert!(!r.truncated);
    }
    assert!(reserve.attainment < none.attainment);
}

#[test]
fn preempted_sequences_keep_their_first_token_time_and_finish() {
    let mut p = Plan::default();
    p.run.num_requests = 600;
    p.run.warmup_requests = 0;
    p.traffic.output.dist = LengthDist::Fixed { tokens: 400 };
    p.traffic.output.max = 400;
    p.hardware.memory_bytes = (16e9 + 20_000.0 * 131_072.0) / 0.9;
    let r = simulate(&cfg_of(&p, 10.0), 9).expect("runs");
    assert!(r.preemptions > 0);
    assert_eq!(r.unfinished_requests, 0);
    // TPOT = (finish − first)/(out − 1) includes the recompute stalls but stays positive.
    assert!(r.tpot_s.p50 > 0.0 && r.ttft_s.p50 > 0.0);
}

#[test]
fn speculative_decoding_cuts_tpot_at_low_load() {
    let mut p = plan_none();
    p.run.num_requests = 800;
    let base = simulate(&cfg_of(&p, 4.0), 1).expect("runs");
    p.engine.spec_draft_tokens = 3;
    p.engine.spec_acceptance = 0.8;
    let cfg = cfg_of(&p, 4.0);
    let e = cfg.tokens_per_decode_step();
    assert!((e - (1.0 - 0.8f64.powi(4)) / 0.2).abs() < 1e-12);
    let spec = simulate(&cfg, 1).expect("runs");
    let ratio = spec.tpot_s.p50 / base.tpot_s.p50;
    // About 1/e of the steps, each a little dearer (k + 1 tokens of compute per decoder).
    assert!(ratio < 0.5 && ratio > 1.0 / e * 0.8, "ratio {ratio}, e {e}");
    p.engine.spec_acceptance = 0.0;
    assert_eq!(cfg_of(&p, 4.0).tokens_per_decode_step(), 1.0);
}

#[test]
fn prefix_cache_hits_cut_ttft() {
    let mut p = plan_none();
    p.run.num_requests = 1000;
    p.traffic.prompt.dist = LengthDist::Fixed { tokens: 3000 };
    let cold = simulate(&cfg_of(&p, 6.0), 1).expect("runs");
    p.traffic.prefix_tokens = 2500;
    p.traffic.prefix_hit_rate = 1.0;
    let warm = simulate(&cfg_of(&p, 6.0), 1).expect("runs");
    // 3,000 tokens need 6 steps at budget 512; 500 need one.
    assert!(
        warm.ttft_s.p50 < 0.5 * cold.ttft_s.p50,
        "{} vs {}",
        warm.ttft_s.p50,
        cold.ttft_s.p50
    );
    // Context still counts the cached prefix: decoding reads 3,000 tokens of KV per
    // sequence, dearer than a genuinely short 500-token prompt.
    p.traffic.prefix_tokens = 0;
    p.traffic.prompt.dist = LengthDist::Fixed { tokens: 500 };
    let short = simulate(&cfg_of(&p, 6.0), 1).expect("runs");
    assert!(
        warm.itl_s.p50 > 1.1 * short.itl_s.p50,
        "{} vs {}",
        warm.itl_s.p50,
        short.itl_s.p50
    );
    assert!((warm.ttft_s.p50 - short.ttft_s.p50).abs() < 0.2 * short.ttft_s.p50);
}

#[test]
fn bursty_and_trace_arrivals_run() {
    let mut p = plan_none();
    p.run.num_requests = 1500;
    let mut poisson = 0.0;
    let mut bursty = 0.0;
    for seed in 0..4 {
        poisson += attainment(&cfg_of(&p, 21.0), seed).expect("runs");
    }
    p.traffic.arrival = Arrival::Gamma { cv: 4.0 };
    for seed in 0..4 {
        bursty += attainment(&cfg_of(&p, 21.0), seed).expect("runs");
    }
    assert!(bursty < poisson, "bursty {bursty} vs poisson {poisson}");

    p.traffic.arrival = Arrival::Trace;
    p.traffic.prompt.dist = LengthDist::Trace;
    p.traffic.output.dist = LengthDist::Trace;
    p.traffic.trace = (0..50)
        .map(|k| TraceRow {
            arrival_s: k as f64 * 0.5,
            prompt_tokens: 200 + 10 * k,
            output_tokens: 20 + k,
        })
        .collect();
    let r = simulate(&cfg_of(&p, 2.0), 1).expect("runs");
    assert_eq!(r.unfinished_requests, 0);
    assert!(r.attainment > 0.99);
}

#[test]
fn errors_name_the_field_and_range() {
    let mut p = Plan::default();
    p.run.num_requests = 100_000_000;
    let e = SimConfig::from_plan(&p, 20.0).expect_err("too many requests");
    assert!(
        e.to_string().contains("run.num_requests") && e.to_string().contains("200000"),
        "{e}"
    );

    let e = SimConfig::from_plan(&Plan::default(), -3.0).expect_err("negative rate");
    assert!(matches!(e, SimError::Rate { .. }) && e.to_string().contains("rate"));
    assert!(SimConfig::from_plan(&Plan::default(), f64::NAN).is_err());
    assert!(SimConfig::from_plan(&Plan::default(), f64::INFINITY).is_err());

    let cfg = cfg_of(&Plan::default(), 20.0);
    let e = replicate(&cfg, 0, 1001).expect_err("too many replications");
    assert!(e.to_string().contains("run.replications"), "{e}");
    assert!(replicate(&cfg, 0, 0).is_err());
    let mut big = cfg.clone();
    big.num_requests = MAX_REQUESTS;
    let e = replicate(&big, 0, 500).expect_err("200,000 × 500 requests is minutes of work");
    assert!(matches!(e, SimError::TooMuchWork { max: 100, .. }), "{e}");

    let mut bad = cfg.clone();
    bad.warmup_requests = bad.num_requests;
    assert!(matches!(simulate(&bad, 0), Err(SimError::Config { .. })));
    let mut bad = cfg.clone();
    bad.step.mem_bandwidth_bytes_per_s = 0.0;
    assert!(attainment(&bad, 0).is_err());
    let mut bad = cfg.clone();
    bad.traffic.output.max = u32::MAX;
    assert!(
        simulate(&bad, 0).is_err(),
        "a huge max_tokens must not size the timing wheel"
    );
    let mut bad = cfg;
    bad.max_num_batched_tokens = 0;
    assert!(simulate(&bad, 0).is_err());
}

#[test]
fn plan_validation_messages() {
    let check = |f: &dyn Fn(&mut Plan), field: &str, needle: &str| {
        let mut p = Plan::default();
        f(&mut p);
        let e = p.validate().expect_err(field);
        assert_eq!(e.field, field, "{e}");
        assert!(e.message.contains(needle), "{e}");
    };
    assert!(Plan::default().validate().is_ok());
    check(
        &|p| p.engine.max_num_batched_tokens = 0,
        "engine.max_num_batched_tokens",
        "1..=1048576",
    );
    check(
        &|p| p.engine.max_num_seqs = 0,
        "engine.max_num_seqs",
        "1..=16384",
    );
    check(
        &|p| p.traffic.prompt.min = 9000,
        "traffic.prompt.min",
        "at most the max",
    );
    check(
        &|p| p.traffic.peak_rate_rps = -1.0,
        "traffic.peak_rate_rps",
        "(0, 1e6]",
    );
    check(
        &|p| p.hardware.mem_utilization = 1.5,
        "hardware.mem_utilization",
        "(0, 1]",
    );
    check(
        &|p| p.hardware.tp_degree = 65,
        "hardware.tp_degree",
        "1..=64",
    );
    check(
        &|p| p.hardware.compute_flops_per_s = f64::NAN,
        "hardware.compute_flops_per_s",
        "got NaN",
    );
    check(
        &|p| p.model.active_params = 9e9,
        "model.active_params",
        "params",
    );
    check(
        &|p| p.run.warmup_requests = 2500,
        "run.warmup_requests",
        "0..=2499",
    );
    check(
        &|p| p.run.replications = 5000,
        "run.replications",
        "1..=1000",
    );
    check(
        &|p| p.run.sweep_max_num_seqs.clear(),
        "run.sweep_max_num_seqs",
        "1..=16",
    );
    check(
        &|p| p.run.sweep_batched_tokens = vec![512; 17],
        "run.sweep_batched_tokens",
        "1..=16",
    );
    check(&|p| p.slo.tpot_s = Some(0.0), "slo.tpot_s", "(0, 60]");
    check(
        &|p| p.traffic.prefix_hit_rate = 2.0,
        "traffic.prefix_hit_rate",
        "[0, 1]",
    );
    check(
        &|p| p.traffic.arrival = Arrival::Trace,
        "traffic.trace",
        "got 0",
    );
    check(
        &|p| p.traffic.arrival = Arrival::Gamma { cv: 0.0 },
        "traffic.arrival.cv",
        "[0.05, 10]",
    );
    check(
        &|p| {
            p.traffic.output.dist = LengthDist::LogNormal {
                median: 200.0,
                sigma: -1.0,
            }
        },
        "traffic.output.dist.sigma",
        "[0, 5]",
    );
    check(
        &|p| p.engine.spec_acceptance = 1.5,
        "engine.spec_acceptance",
        "[0, 1]",
    );
    check(
        &|p| p.planning.utilization = 0.0,
        "planning.utilization",
        "(0, 1]",
    );
    // Weights that do not fit leave no KV memory: named with the model and hardware.
    check(
        &|p| {
            p.model.params = 70e9;
            p.model.active_params = 70e9;
        },
        "hardware.memory_bytes",
        "article-8b",
    );
    let mut p = Plan::default();
    p.model.params = 70e9;
    p.model.active_params = 70e9;
    p.engine.kv_policy = KvPolicy::None;
    assert!(
        p.validate().is_ok(),
        "no KV limit: the weights need not fit"
    );
}

#[test]
fn replications_are_independent_and_summarised() {
    let mut p = plan_none();
    p.run.num_requests = 800;
    let cfg = cfg_of(&p, 22.0);
    let seeds: Vec<u64> = (0..50).map(|r| replication_seed(7, r)).collect();
    let mut uniq = seeds.clone();
    uniq.sort_unstable();
    uniq.dedup();
    assert_eq!(uniq.len(), 50);
    assert_ne!(replication_seed(7, 0), replication_seed(8, 0));
    let rep = replicate(&cfg, 7, 8).expect("runs");
    assert_eq!(rep.by_replication.len(), 8);
    let mean = rep.by_replication.iter().sum::<f64>() / 8.0;
    assert!((rep.mean_attainment - mean).abs() < 1e-15);
    assert!(rep.ci95[0] <= mean && mean <= rep.ci95[1]);
    assert_eq!(
        rep.by_replication[2],
        attainment(&cfg, replication_seed(7, 2)).expect("runs")
    );
}
