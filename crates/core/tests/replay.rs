//! Replaying a trace whose rows name their prompt blocks (Mooncake's `hash_ids`): the
//! prefix cache's hits follow from the blocks and the cache's memory. Checked on the
//! first 1,000 requests of Mooncake's public conversation trace (see
//! `fixtures/trace/SOURCE.md`): 12,000-token prompts on average, of which 21.6% an
//! unbounded cache would find.

use goodput_core::plan::{KvPolicy, Plan};
use goodput_core::search::search_goodput_threads;
use goodput_core::sim::{simulate, SimConfig, SimConfigOf, SimReport};
use goodput_core::trace::{summarize_reader, TraceSummary};

const CONVERSATION: &str = include_str!("fixtures/trace/mooncake_conversation_head.jsonl");

/// The default plan (an 8B model on an 80 GB GPU, 407k tokens of KV memory) replaying
/// the trace, with objectives that its long prompts can meet (TTFT 8 s, TPOT 60 ms).
fn replayed() -> (Plan, TraceSummary) {
    let t = summarize_reader(CONVERSATION.as_bytes(), None).expect("the trace reads");
    let mut p = Plan::default();
    p.engine.kv_policy = KvPolicy::Paged;
    p.slo.ttft_s = Some(8.0);
    p.slo.tpot_s = Some(0.06);
    t.replay_into(&mut p);
    p.run.num_requests = 1_000;
    p.run.warmup_requests = 100;
    (p, t)
}

fn run(p: &Plan, rate: f64) -> SimReport {
    simulate(&SimConfig::from_plan(p, rate).expect("a valid plan"), 1).expect("runs")
}

/// Memory for every block (10 TB): the simulated cache finds what the trace's own
/// count of reused leading blocks says an unbounded cache finds, at any load.
#[test]
fn with_memory_for_every_block_the_hits_are_the_traces_own_reuse() {
    let (mut p, t) = replayed();
    assert_eq!(t.replay.len(), 1_000);
    let reuse = t.prefix.as_ref().expect("block ids").token_reuse;
    assert!((0.2..0.23).contains(&reuse), "{reuse}");
    p.hardware.memory_bytes = 1e13;
    for rate in [0.1, 1.0] {
        let r = run(&p, rate);
        assert_eq!(r.prefix_evicted_tokens, 0);
        assert!(
            (r.prefix_hit_rate - reuse).abs() < 0.005,
            "{rate} req/s: hit rate {:.4} against the trace's {reuse:.4}",
            r.prefix_hit_rate
        );
    }
}

/// One GPU's memory holds a few dozen of these prompts: by the time a conversation
/// comes back, its blocks are mostly evicted, and the cache finds under a fifth of what
/// an unbounded one would. A typed hit rate from the trace's counts would claim it all.
#[test]
fn one_gpus_memory_evicts_most_of_what_the_trace_would_reuse() {
    let (p, t) = replayed();
    let reuse = t.prefix.as_ref().expect("block ids").token_reuse;
    let r = run(&p, 0.5);
    assert!(r.prefix_evicted_tokens > 1_000_000);
    assert!(
        r.prefix_hit_rate > 0.01 && r.prefix_hit_rate < reuse / 5.0,
        "hit rate {:.4} against the trace's {reuse:.4}",
        r.prefix_hit_rate
    );
}

/// Where the cache holds the blocks (1 TB of memory), the hits they give cut prefill,
/// and the plan serves more than the same requests without their block ids.
#[test]
fn the_blocks_raise_goodput_where_the_cache_holds_them() {
    let (mut p, _) = replayed();
    p.hardware.memory_bytes = 1e12;
    p.run.replications = 2;
    let mut plain = p.clone();
    plain
        .traffic
        .trace
        .iter_mut()
        .for_each(|r| r.blocks.clear());
    let goodput = |p: &Plan| {
        search_goodput_threads(p, 2, &mut |_| true)
            .expect("the search runs")
            .goodput_rps
    };
    let (with, without) = (goodput(&p), goodput(&plain));
    assert!(without > 0.0, "the objectives are met at some load");
    assert!(
        with > 1.1 * without,
        "with blocks {with:.3} req/s, without {without:.3}"
    );
}
