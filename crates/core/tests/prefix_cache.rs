//! The prefix cache holds a shared prefix once in KV memory: a replica whose requests
//! share a long prefix runs many more of them at once than one whose requests do not.

use goodput_core::plan::{Arrival, Dtype, KvPolicy, LengthDist, Plan, PrefixModel};
use goodput_core::presets;
use goodput_core::sim::{simulate, SimConfig, SimConfigOf, SimReport};

/// Llama 3.1 70B in FP8 (weights and KV) on one H200, 200 closed-loop clients, prompts
/// of 5,800 tokens, paged KV memory, up to 256 sequences.
fn seventy_b_on_an_h200() -> Plan {
    let mut p = Plan::default();
    presets::model("llama-3.1-70b")
        .expect("a model preset")
        .apply(&mut p);
    presets::gpu("h200").expect("a GPU preset").apply(&mut p);
    p.model.weight_dtype = Dtype::Fp8;
    p.model.kv_dtype = Dtype::Fp8;
    p.engine.kv_policy = KvPolicy::Paged;
    p.engine.max_num_seqs = 256;
    p.traffic.arrival = Arrival::Closed {
        concurrency: 200,
        think_s: 0.0,
    };
    p.traffic.prompt.dist = LengthDist::Fixed { tokens: 5_800 };
    p.traffic.prompt.max = 5_800;
    p.run.num_requests = 2_000;
    p.run.warmup_requests = 200;
    p
}

fn run(p: &Plan) -> SimReport {
    let cfg = SimConfig::from_plan(p, 1.0).expect("a valid plan");
    simulate(&cfg, 7).expect("runs")
}

/// Every request's first 5,000 tokens are one shared prefix: held once, 200 requests
/// need about 5,000 + 200 × 1,000 tokens (and their outputs), which the cache of about
/// 370,000 tokens holds, so all 200 run. Without sharing each request holds its whole
/// prompt: about 60 fit, the rest queue, and some are preempted.
#[test]
fn a_shared_prefix_held_once_lets_all_two_hundred_clients_run() {
    let mut shared = seventy_b_on_an_h200();
    shared.traffic.prefix_tokens = 5_000;
    shared.traffic.prefix_hit_rate = 1.0;
    let hit = run(&shared);
    assert!(
        hit.mean_running > 180.0,
        "every request a hit: {:.1} running on average",
        hit.mean_running
    );
    assert_eq!(hit.peak_queue_len, 0, "nobody waits");
    assert_eq!(hit.preemptions, 0);

    let mut alone = shared.clone();
    alone.traffic.prefix_hit_rate = 0.0;
    let miss = run(&alone);
    assert!(
        (40.0..80.0).contains(&miss.mean_running),
        "no hits: {:.1} running on average",
        miss.mean_running
    );
    assert!(miss.mean_queue_len > 100.0, "{:.1}", miss.mean_queue_len);
    assert!(miss.preemptions > 0);

    // The same prefix stated as structure (one shared system prompt of 5,000 tokens
    // before an 800-token message) runs as many at once.
    let mut structured = seventy_b_on_an_h200();
    structured.traffic.prompt.dist = LengthDist::Fixed { tokens: 800 };
    structured.traffic.prompt.max = 800;
    structured.traffic.sharing = Some(PrefixModel {
        groups: 1,
        group_tokens: 5_000,
        ..PrefixModel::NONE
    });
    let s = run(&structured);
    assert!(s.mean_running > 180.0, "{:.1}", s.mean_running);
    assert!(s.prefix_hit_rate > 0.85, "{:.3}", s.prefix_hit_rate);
}

/// The cache timeline the page charts: at most its cap of samples, in time order, the
/// memory they show within the KV capacity, hit rates shares; with one shared system
/// prompt of 5,000 tokens, that prompt is the shared memory in use once requests run,
/// and nearly every lookup after the first finds it.
#[test]
fn the_cache_timeline_shows_shared_and_private_memory() {
    use goodput_core::sim::CACHE_TIMELINE_POINTS;
    let mut p = seventy_b_on_an_h200();
    p.traffic.prompt.dist = LengthDist::Fixed { tokens: 800 };
    p.traffic.prompt.max = 800;
    p.traffic.sharing = Some(PrefixModel {
        groups: 1,
        group_tokens: 5_000,
        ..PrefixModel::NONE
    });
    let cfg = SimConfig::from_plan(&p, 1.0).expect("a valid plan");
    let r = simulate(&cfg, 7).expect("runs");
    let tl = &r.cache_timeline;
    assert!(
        (CACHE_TIMELINE_POINTS / 2..=CACHE_TIMELINE_POINTS).contains(&tl.len()),
        "{} samples",
        tl.len()
    );
    assert!(tl.windows(2).all(|w| w[0].t_s < w[1].t_s));
    for s in tl {
        let used = s.private_tokens + s.shared_tokens + s.idle_tokens;
        assert!(used <= cfg.kv_capacity_tokens + 1.0, "{s:?}");
        assert!(s.hit_rate.is_nan() || (0.0..=1.0).contains(&s.hit_rate));
    }
    let busy = &tl[tl.len() / 2];
    assert!(
        (4_990.0..=5_000.0).contains(&busy.shared_tokens),
        "the system prompt held once: {busy:?}"
    );
    assert!(busy.private_tokens > 100_000.0, "{busy:?}");
    let late: Vec<f64> = tl[10..]
        .iter()
        .map(|s| s.hit_rate)
        .filter(|h| !h.is_nan())
        .collect();
    assert!(late.iter().all(|&h| h > 0.8), "{late:?}");

    // No shared prefixes, no timeline.
    let plain = SimConfig::from_plan(&seventy_b_on_an_h200(), 1.0).expect("valid");
    assert!(simulate(&plain, 7).expect("runs").cache_timeline.is_empty());
}
