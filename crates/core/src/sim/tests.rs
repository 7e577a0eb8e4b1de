//! Unit tests of the simulator: the fast engine against a naive per-sequence reference,
//! KV policies, extras, bounds and no-hang cases.

use std::collections::VecDeque;

use super::*;
use crate::digest::{fnv1a, FNV1A_START};
use crate::plan::MAX_CONCURRENCY;
use crate::plan::{Arrival, LengthDist, SloMode, TraceRow};
use crate::rng::Rng;
use goodput_engine::cache::PrefixCache;

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
    /// Request index (generated order).
    request: usize,
    /// Prompt tokens prefilled so far in this admission.
    prefilled: u64,
    /// Decode steps run so far in this admission.
    decoded: u64,
}

/// The client gate of the naive reference: with `slots` clients, the j-th request to
/// end (in time order) releases request `slots + j` at `max(generated, end + think)`.
struct Gate {
    slots: usize,
    think: f64,
    ended: usize,
    generated: Vec<f64>,
    /// When each request reaches the server; None until released.
    release: Vec<Option<f64>>,
}

impl Gate {
    fn new(cfg: &SimConfig, generated: &[f64]) -> Gate {
        let n = generated.len();
        let (slots, think) = cfg
            .traffic
            .gate()
            .map_or((n, 0.0), |(c, t)| (c as usize, t));
        Gate {
            slots,
            // A client's next request reaches the server a frontend time after it is sent.
            think: think + cfg.step.frontend_s,
            ended: 0,
            generated: generated.to_vec(),
            release: (0..n).map(|r| (r < slots).then(|| generated[r])).collect(),
        }
    }

    /// A request ended (finished or refused) at `now`.
    fn end(&mut self, now: f64) {
        let k = self.slots + self.ended;
        if k < self.release.len() {
            self.release[k] = Some(self.generated[k].max(now + self.think));
        }
        self.ended += 1;
    }
}

/// What the naive reference reports.
struct RefOut {
    /// Per measured request (generated order): (TTFT, TPOT, E2E) when it finished.
    latencies: Vec<Option<(f64, f64, f64)>>,
    rejected: u32,
    preemptions: u32,
    /// Steps run, and whether the step cap ended the run.
    steps: u64,
    truncated: bool,
    /// Per measured request, its traffic class (empty with one class).
    class: Vec<u8>,
}

impl RefOut {
    fn column(&self, k: usize) -> Vec<f64> {
        self.latencies
            .iter()
            .flatten()
            .map(|&(a, b, c)| [a, b, c][k])
            .collect()
    }

    /// The mix's attainment (see `ClassRule::target_above_plan`): the worst class's,
    /// each less how far its target lies above the plan's; `slo`'s without classes.
    fn attainment_of(&self, cfg: &SimConfig) -> f64 {
        if cfg.classes.is_empty() {
            return self.attainment(&cfg.slo);
        }
        let mut worst = f64::INFINITY;
        for (k, rule) in cfg.classes.iter().enumerate() {
            let a = self.class_attainment(k as u8, &rule.slo);
            if let Some(a) = a {
                worst = worst.min(a - rule.target_above_plan);
            }
        }
        if worst.is_finite() {
            worst.clamp(0.0, 1.0)
        } else {
            0.0
        }
    }

    /// Class `k`'s attainment under `slo`, None when it has no measured request.
    fn class_attainment(&self, k: u8, slo: &SloTargets) -> Option<f64> {
        let of: Vec<Option<(f64, f64, f64)>> = self
            .latencies
            .iter()
            .zip(&self.class)
            .filter(|(_, &c)| c == k)
            .map(|(l, _)| *l)
            .collect();
        if of.is_empty() {
            return None;
        }
        let part = RefOut {
            latencies: of,
            rejected: 0,
            preemptions: 0,
            steps: 0,
            truncated: false,
            class: Vec::new(),
        };
        Some(part.attainment(slo))
    }

    /// Attainment computed request by request from the latencies, in either mode.
    fn attainment(&self, slo: &SloTargets) -> f64 {
        let n = self.latencies.len() as f64;
        let share = |f: &dyn Fn(f64, f64, f64) -> bool| {
            self.latencies
                .iter()
                .flatten()
                .filter(|&&(a, b, c)| f(a, b, c))
                .count() as f64
                / n
        };
        match slo.mode {
            SloMode::Joint => share(&|a, b, c| slo.meets(a, b, c)),
            SloMode::Marginal => {
                let mut worst = f64::INFINITY;
                for k in 0..3 {
                    if [slo.ttft_s, slo.tpot_s, slo.e2e_s][k].is_some() {
                        worst = worst.min(share(&|a, b, c| slo.meets_each(a, b, c)[k]));
                    }
                }
                if worst.is_finite() {
                    worst
                } else {
                    share(&|_, _, _| true)
                }
            }
        }
    }
}

/// The scheduler of the design notes, spelled out step by step with no shortcuts: every
/// step scans all running sequences and recomputes KV use and context from scratch. It
/// models the client gate, every KV policy (paged preemption by recompute, refusals),
/// speculative decoding (each decode step yields `e = (1 − α^(k+1)) / (1 − α)` tokens
/// on average and costs `k + 1` tokens of compute), prefix caching (the typed hit rate:
/// a pinned prefix each hit holds; shared prefixes and sessions: a prefix cache looked
/// up at each admission, filled when a prompt is done, let go at the end, evicted least
/// recently used first when memory runs short; a recompute after preemption finds what
/// the cache then holds), traffic classes (the waiting queue kept sorted by priority,
/// then request; the lowest priority's latest request preempted first; each class's
/// `max_tokens` cap reserved) and warm-up. Slow on purpose; it is the yardstick for the
/// fast engine.
fn reference(cfg: &SimConfig, seed: u64) -> RefOut {
    let n = cfg.num_requests as usize;
    let w = cfg.traffic.generate(n, &mut Rng::new(seed));
    let mut gate = Gate::new(cfg, &w.arrival_s);
    let prompt = |r: usize| w.prompt_tokens[r] as u64;
    let output = |r: usize| w.output_tokens[r] as u64;
    // Tokens per decode step (expected, with speculation) and compute tokens per decoder.
    let e = cfg.tokens_per_decode_step();
    let compute_per_decoder = cfg.spec_draft_tokens as u64 + 1;
    let decode_steps = |left: u64| {
        if e == 1.0 {
            left
        } else {
            (left as f64 / e).ceil() as u64
        }
    };
    // Context a sequence holds before decoding: its prompt, plus what it generated
    // before a preemption. Tokens to prefill on (re)admission: the context less the
    // cached prefix found then. Tokens still to produce (the first, at the end of
    // prefill, included); a preemption moves generated tokens into the context.
    let mut base: Vec<u64> = (0..n).map(prompt).collect();
    let mut need: Vec<u64> = base.clone();
    let mut left: Vec<u64> = (0..n).map(output).collect();
    let reserve = |r: usize| {
        let cap = match w.class.get(r) {
            Some(&c) => cfg.traffic.classes[c as usize].output.max,
            None => cfg.traffic.output.max,
        };
        prompt(r).saturating_add(cap as u64)
    };
    // Priority scheduling with classes: the queue is kept sorted by this key.
    let prio = !cfg.classes.is_empty();
    let key = |r: usize| (cfg.classes[w.class[r] as usize].priority, r);
    let enqueue = |queue: &mut VecDeque<usize>, r: usize, front: bool| {
        if prio {
            let at = queue
                .iter()
                .position(|&q| key(q) > key(r))
                .unwrap_or(queue.len());
            queue.insert(at, r);
        } else if front {
            queue.push_front(r);
        } else {
            queue.push_back(r);
        }
    };
    let cap = cfg.kv_capacity_tokens;
    let paged = cfg.kv_policy == KvPolicy::Paged;
    // The prefix cache's bookkeeping, and each sequence's own KV tokens (paged, with a
    // cache): its context less the cached prefix it found, less what it handed over.
    let sharing = w.sharing.clone();
    let mut cache = sharing
        .as_ref()
        .map(|s| PrefixCache::new(s.segments, s.block_tokens, &s.pinned, &s.preloaded));
    let with_cache = cache.is_some();
    let mut own = vec![0u64; n];
    let no_path: &[(u32, u32)] = &[];
    let path_of = |r: usize| sharing.as_ref().map_or(no_path, |s| s.path(r));
    // The whole path: the shared one, then the request's own segment with the rest of
    // its context (what it computed beyond the shared prefixes).
    let full_path = |r: usize, ctx: u64| -> Vec<(u32, u32)> {
        let mut v = Vec::new();
        if let Some(s) = &sharing {
            s.full_path(r, ctx as u32, &mut v);
        }
        v
    };
    let timer = goodput_engine::engine::StepTimer::new(cfg);
    let budget = if cfg.chunked_prefill {
        cfg.max_num_batched_tokens as u64
    } else {
        cfg.max_num_batched_tokens.max(cfg.traffic.prompt_cap()) as u64
    };
    let mut now = 0.0;
    let mut steps = 0u64;
    let mut next_arrival = 0usize;
    let mut queue: VecDeque<usize> = VecDeque::new();
    // Running sequences in admission order.
    let mut running: Vec<Running> = Vec::new();
    let mut first_token = vec![f64::NAN; n];
    let mut finish = vec![f64::NAN; n];
    let (mut rejected, mut preemptions) = (0u32, 0u32);
    let mut truncated = false;
    let absorb = |now: f64, next: &mut usize, queue: &mut VecDeque<usize>, gate: &Gate| {
        while *next < n && gate.release[*next].is_some_and(|t| t <= now) {
            enqueue(queue, *next, false);
            *next += 1;
        }
    };
    let is_decoding = |s: &Running, need: &[u64]| s.prefilled >= need[s.request];
    let decoders =
        |run: &[Running], need: &[u64]| run.iter().filter(|s| is_decoding(s, need)).count() as u64;
    // Paged KV once the next step's decoders have grown: each sequence's context from
    // admission (its own tokens, with a cache) plus `e` tokens per decode step run and
    // one more step for each decoder.
    let paged_next = |run: &[Running], need: &[u64], base: &[u64], own: &[u64]| -> f64 {
        let held: u64 = run
            .iter()
            .map(|s| {
                if with_cache {
                    own[s.request]
                } else {
                    base[s.request]
                }
            })
            .sum();
        let steps: u64 = run.iter().map(|s| s.decoded).sum();
        held as f64 + e * steps as f64 + decoders(run, need) as f64 * e
    };
    let cache_kept = |c: &Option<PrefixCache>| c.as_ref().map_or(0.0, |c| c.held() as f64);
    // Evicts cached tokens until the paged memory of the next step fits.
    let evict = |c: &mut Option<PrefixCache>, next: f64| {
        if let Some(c) = c {
            let over = next + c.tokens() as f64 - cap;
            if over > 0.0 {
                c.evict(over.ceil() as u64);
            }
        }
    };
    loop {
        absorb(now, &mut next_arrival, &mut queue, &gate);
        if queue.is_empty() && running.is_empty() {
            if next_arrival == n {
                break;
            }
            now = gate.release[next_arrival].expect("an idle replica has released the next");
            continue;
        }
        if steps >= cfg.max_steps {
            truncated = true;
            break;
        }
        // Paged: preempt the newest admitted until the next step's growth fits in what
        // the cache must keep and the sequences' own tokens; then evict what it need not.
        if paged {
            while !running.is_empty()
                && paged_next(&running, &need, &base, &own) + cache_kept(&cache) > cap
            {
                let victim = if prio {
                    (0..running.len()).max_by_key(|&k| key(running[k].request))
                } else {
                    running.len().checked_sub(1)
                };
                let Some(s) = victim.map(|k| running.remove(k)) else {
                    break;
                };
                let r = s.request;
                let generated = if is_decoding(&s, &need) {
                    (1 + (e * s.decoded as f64).floor() as u64).min(left[r] - 1)
                } else {
                    0
                };
                if let Some(c) = &mut cache {
                    // What it computed stays cached for its readmission: its own
                    // segment grows by the tokens it generated.
                    let path = full_path(r, base[r]);
                    if generated > 0 || is_decoding(&s, &need) {
                        let own_seg = path[path.len() - 1];
                        c.extend(own_seg.0, own_seg.1.saturating_add(generated as u32));
                    }
                    c.release(&path);
                }
                own[r] = 0;
                // Recompute: the whole context is prefilled again, less the cached prefix.
                base[r] += generated;
                need[r] = base[r];
                left[r] -= generated;
                enqueue(&mut queue, r, true);
                preemptions += 1;
            }
            if with_cache {
                let next = paged_next(&running, &need, &base, &own);
                evict(&mut cache, next);
            }
        }
        // Admit first-come-first-served while slots and KV memory allow.
        while running.len() < cfg.max_num_seqs as usize {
            absorb(now, &mut next_arrival, &mut queue, &gate);
            let Some(&r) = queue.front() else { break };
            let path = full_path(r, base[r]);
            let (hit, unheld) = match &cache {
                Some(c) => (c.lookup(&path, base[r] as u32) as u64, c.unheld_in(&path)),
                None => (0, 0),
            };
            let fits = match cfg.kv_policy {
                KvPolicy::None => true,
                KvPolicy::Reserve => {
                    let reserved: u64 = running.iter().map(|s| reserve(s.request)).sum();
                    (reserved + reserve(r)) as f64 <= cap
                }
                KvPolicy::Paged if with_cache => {
                    paged_next(&running, &need, &base, &own)
                        + cache_kept(&cache)
                        + unheld as f64
                        + (base[r] - hit) as f64
                        <= cap
                }
                KvPolicy::Paged => paged_next(&running, &need, &base, &own) + base[r] as f64 <= cap,
            };
            if !fits {
                if running.is_empty() {
                    queue.pop_front();
                    rejected += 1;
                    gate.end(now);
                    continue;
                }
                break;
            }
            queue.pop_front();
            if let Some(c) = &mut cache {
                c.admit(&path, hit as u32, base[r] as u32);
            }
            need[r] = base[r] - hit;
            if paged && with_cache {
                own[r] = base[r] - hit;
            }
            running.push(Running {
                request: r,
                prefilled: 0,
                decoded: 0,
            });
            if paged && with_cache {
                let next = paged_next(&running, &need, &base, &own);
                evict(&mut cache, next);
            }
        }
        if running.is_empty() {
            continue;
        }
        // Plan the step: decoders first, then prefill chunks in admission order.
        let n_dec = decoders(&running, &need);
        let dec_base: u64 = running
            .iter()
            .filter(|s| is_decoding(s, &need))
            .map(|s| base[s.request])
            .sum();
        let dec_steps: u64 = running
            .iter()
            .filter(|s| is_decoding(s, &need))
            .map(|s| s.decoded)
            .sum();
        let context = dec_base as f64 + e * dec_steps as f64;
        let mut room = budget.saturating_sub(n_dec);
        let mut chunk = vec![0u64; running.len()];
        for (slot, s) in running.iter().enumerate() {
            if room == 0 {
                break;
            }
            if is_decoding(s, &need) {
                continue;
            }
            let rest = need[s.request] - s.prefilled;
            chunk[slot] = if cfg.chunked_prefill {
                rest.min(room)
            } else {
                rest
            };
            room = room.saturating_sub(chunk[slot]);
        }
        let tokens = n_dec * compute_per_decoder + chunk.iter().sum::<u64>();
        // Sequences scheduled: the decoders and every prompt that gets a chunk. Prefill
        // attention: each chunk against the prompt tokens before it (a cached prefix
        // included), summed in admission order.
        let scheduled = n_dec + chunk.iter().filter(|&&c| c > 0).count() as u64;
        let mut attn = 0.0;
        if cfg.step.prices_attention() {
            for (slot, s) in running.iter().enumerate() {
                if chunk[slot] > 0 {
                    let done = (base[s.request] - need[s.request] + s.prefilled) as f64;
                    attn += cfg.step.prefill_attn_flops(chunk[slot] as f64, done);
                }
            }
        }
        now += timer.time(tokens, context, scheduled, scheduled > n_dec, attn);
        steps += 1;
        // Apply it; a sequence is done once it has produced what it has left. A prompt
        // done hands its shared prefix to the cache.
        let mut over = vec![false; running.len()];
        for (slot, s) in running.iter_mut().enumerate() {
            let r = s.request;
            if s.prefilled >= need[r] {
                s.decoded += 1;
                over[slot] = s.decoded >= decode_steps(left[r] - 1);
            } else if chunk[slot] > 0 {
                s.prefilled += chunk[slot];
                if s.prefilled >= need[r] {
                    if first_token[r].is_nan() {
                        first_token[r] = now;
                    }
                    if let Some(c) = &mut cache {
                        let moved = c.fill(&full_path(r, base[r])) as u64;
                        if paged {
                            own[r] -= moved.min(own[r]);
                        }
                    }
                    over[slot] = left[r] <= 1;
                }
            }
        }
        let mut slot = 0;
        let mut ended = Vec::new();
        running.retain(|s| {
            let done = over[slot];
            slot += 1;
            if done {
                let r = s.request;
                finish[r] = now;
                gate.end(now);
                own[r] = 0;
                ended.push(r);
            }
            !done
        });
        // The ended requests let go of their paths in request order; a cached reply
        // first extends its conversation.
        ended.sort_unstable();
        if let Some(c) = &mut cache {
            for r in ended {
                // Its reply stays cached: in its conversation when the next turn resends
                // it, else in its own segment.
                let path = full_path(r, base[r]);
                let own_seg = path[path.len() - 1];
                match path_of(r).last() {
                    Some(&(seg, used))
                        if sharing
                            .as_ref()
                            .is_some_and(|x| x.replies_cached && seg >= x.sessions_from) =>
                    {
                        c.extend(seg, used.saturating_add(output(r) as u32));
                    }
                    _ => {
                        c.extend(own_seg.0, own_seg.1.saturating_add(left[r] as u32));
                    }
                }
                c.release(&path);
            }
        }
    }
    let warm = cfg.warmup_requests as usize;
    let latencies = (warm..n)
        .map(|r| {
            let arrival = gate.release[r]?;
            if finish[r].is_nan() {
                return None;
            }
            let tpot = (finish[r] - first_token[r]) / output(r).saturating_sub(1).max(1) as f64;
            let frontend = cfg.step.frontend_s;
            Some((
                (first_token[r] - arrival) + frontend,
                tpot,
                (finish[r] - arrival) + frontend,
            ))
        })
        .collect();
    RefOut {
        latencies,
        rejected,
        preemptions,
        steps,
        truncated,
        class: w.class.get(warm..).map_or(Vec::new(), <[u8]>::to_vec),
    }
}

/// Checks the fast engine against the reference on both paths, bit for bit.
fn assert_matches_reference(cfg: &SimConfig, seed: u64, what: &str) -> SimReport {
    let r = simulate(cfg, seed).expect("runs");
    let want = reference(cfg, seed);
    assert_eq!(r.attainment, want.attainment_of(cfg), "{what} seed {seed}");
    for (k, (c, rule)) in r.classes.iter().zip(&cfg.classes).enumerate() {
        let want_c = want.class_attainment(k as u8, &rule.slo).unwrap_or(1.0);
        assert_eq!(c.attainment, want_c, "{what} seed {seed} class {k}");
    }
    assert_eq!(r.classes.len(), cfg.classes.len(), "{what}");
    for (k, (got, name)) in [(&r.ttft_s, "ttft"), (&r.tpot_s, "tpot"), (&r.e2e_s, "e2e")]
        .into_iter()
        .enumerate()
    {
        let label = format!("{what} seed {seed} {name}");
        assert_same_bits(got, &Summary::of(&mut want.column(k)), &label);
    }
    assert_eq!(attainment(cfg, seed).expect("runs"), r.attainment, "{what}");
    let unfinished = want.latencies.iter().filter(|l| l.is_none()).count() as u32;
    assert_eq!(r.unfinished_requests, unfinished, "{what} seed {seed}");
    assert_eq!(r.rejected_requests, want.rejected, "{what} seed {seed}");
    assert_eq!(r.preemptions, want.preemptions, "{what} seed {seed}");
    assert_eq!(r.steps, want.steps, "{what} seed {seed} steps");
    assert_eq!(r.truncated, want.truncated, "{what} seed {seed} truncated");
    r
}

fn assert_same_bits(a: &Summary, b: &Summary, what: &str) {
    assert_eq!(
        a.mean.is_nan(),
        b.mean.is_nan(),
        "{what}: one side is empty"
    );
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

/// GPU memory that leaves the default plan (8B bf16, utilisation 0.9, TP 1) `tokens` of
/// KV cache after the weights and the runtime reserve [bytes].
fn memory_for_kv_tokens(tokens: f64) -> f64 {
    use crate::plan::{RESERVE_FIXED_BYTES, RESERVE_SHARE};
    (16e9 + RESERVE_FIXED_BYTES + tokens * 131_072.0) / (0.9 - RESERVE_SHARE)
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
    // Pipeline stages: a step's rounds split over micro-batches by its sequences.
    let mut q = p.clone();
    q.hardware.pp_degree = 4;
    cases.push((q, 20.0));
    for (k, (plan, rate)) in cases.iter().enumerate() {
        let cfg = cfg_of(plan, *rate);
        for seed in [1u64, 77] {
            let r = assert_matches_reference(&cfg, seed, &format!("case {k}"));
            assert_eq!(r.unfinished_requests, 0);
        }
    }
}

/// Prefix caching, engine against reference: the typed hit rate (a pinned prefix, held
/// once) with preemption; shared prefixes by popularity; sessions round robin with their
/// replies cached; sessions in random order replaying recorded replies; all on a KV
/// cache small enough that eviction and preemption both happen, and on unlimited memory.
#[test]
fn prefix_caching_matches_the_naive_reference_exactly() {
    let cases = prefix_cases();
    let (mut evicted, mut preempted, mut hits) = (0, 0, 0);
    for (what, plan, rate) in &cases {
        let cfg = cfg_of(plan, *rate);
        for seed in [3u64, 91] {
            let r = assert_matches_reference(&cfg, seed, what);
            preempted += (r.preemptions > 0) as u32;
            hits += (r.prefix_hit_rate > 0.05) as u32;
            evicted += (r.prefix_evicted_tokens > 0) as u32;
        }
    }
    assert!(preempted >= 2, "no case preempted");
    assert_eq!(hits as usize, 2 * cases.len(), "every case hits the cache");
    assert!(evicted > 0);
}

/// Plans with a prefix cache, at a rate each: a typed hit rate; shared prefixes by
/// popularity; sessions in round robin with replies cached; sessions in random order
/// replaying recorded replies; all on a KV cache small enough that eviction and
/// preemption both happen, and on unlimited memory.
fn prefix_cases() -> Vec<(String, Plan, f64)> {
    use crate::plan::{PrefixModel, TurnOrder};
    let mut base = Plan::default();
    base.run.num_requests = 500;
    base.run.warmup_requests = 40;
    base.engine.kv_policy = KvPolicy::Paged;
    base.hardware.memory_bytes = memory_for_kv_tokens(60_000.0);
    base.traffic.output.dist = LengthDist::LogNormal {
        median: 60.0,
        sigma: 0.8,
    };
    base.traffic.output.max = 300;
    let mut cases: Vec<(String, Plan, f64)> = Vec::new();
    // A cache of 25,000 tokens under load: preemption as well as eviction.
    let mut tight = base.clone();
    tight.hardware.memory_bytes = memory_for_kv_tokens(25_000.0);
    tight.traffic.output.dist = LengthDist::LogNormal {
        median: 150.0,
        sigma: 0.8,
    };
    let mut p = tight.clone();
    p.traffic.prefix_tokens = 600;
    p.traffic.prefix_hit_rate = 0.7;
    cases.push(("typed hit rate".into(), p, 24.0));
    let mut p = tight.clone();
    p.traffic.sharing = Some(PrefixModel {
        groups: 12,
        group_tokens: 1_500,
        zipf: 1.1,
        ..PrefixModel::NONE
    });
    cases.push(("shared prefixes".into(), p, 20.0));
    let mut p = base.clone();
    p.traffic.prompt.dist = LengthDist::LogNormal {
        median: 120.0,
        sigma: 0.6,
    };
    p.traffic.prompt.max = 800;
    p.traffic.sharing = Some(PrefixModel {
        groups: 2,
        group_tokens: 700,
        sessions: 24,
        turns: 6,
        document_tokens: 900,
        order: TurnOrder::RoundRobin,
        replies_cached: true,
        ..PrefixModel::NONE
    });
    cases.push((
        "sessions, round robin, replies cached".into(),
        p.clone(),
        9.0,
    ));
    if let Some(s) = &mut p.traffic.sharing {
        s.order = TurnOrder::Interleaved;
    }
    cases.push(("sessions interleaved, replies cached".into(), p, 9.0));
    let mut p = base.clone();
    p.traffic.prompt.dist = LengthDist::LogNormal {
        median: 300.0,
        sigma: 0.5,
    };
    p.traffic.prompt.max = 1_200;
    p.traffic.sharing = Some(PrefixModel {
        sessions: 40,
        turns: 5,
        document_tokens: 2_000,
        order: TurnOrder::Random,
        replies_cached: false,
        ..PrefixModel::NONE
    });
    cases.push((
        "sessions, random order, recorded replies".into(),
        p.clone(),
        6.0,
    ));
    p.engine.kv_policy = KvPolicy::None;
    cases.push(("sessions on unlimited memory".into(), p, 6.0));
    // A replayed trace whose rows name their blocks, as Mooncake's do: a few system
    // prompts every conversation starts with, conversations whose turns extend their
    // last prompt's blocks, last blocks partial; fewer rows than requests, so it repeats.
    let mut p = tight.clone();
    p.traffic.arrival = Arrival::Trace;
    p.traffic.prompt.dist = LengthDist::Trace;
    p.traffic.output.dist = LengthDist::Trace;
    p.traffic.trace = block_trace(320);
    cases.push(("a trace with block ids".into(), p, 10.0));
    cases
}

/// `rows` trace rows with block ids: 6 system prompts of 2 blocks (ids 0..12), 30
/// conversations each turn of which resends its previous prompt's blocks and adds one
/// to three, the last one partial. Deterministic.
fn block_trace(rows: usize) -> Vec<TraceRow> {
    let mut rng = Rng::new(0x0074_7261_6365);
    let mut next_id = 12u32;
    let mut chats: Vec<Vec<u32>> = (0..30)
        .map(|c| vec![2 * (c % 6), 2 * (c % 6) + 1])
        .collect();
    (0..rows)
        .map(|i| {
            let c = (rng.next_f64() * 30.0) as usize % 30;
            let chat = &mut chats[c];
            if chat.len() > 16 {
                chat.truncate(2);
            }
            for _ in 0..1 + (rng.next_f64() * 3.0) as u32 {
                chat.push(next_id);
                next_id += 1;
            }
            let prompt = chat.len() as u32 * 512 - (rng.next_f64() * 500.0) as u32;
            TraceRow {
                arrival_s: i as f64 * 0.1 + rng.next_f64() * 0.05,
                prompt_tokens: prompt,
                output_tokens: 20 + (rng.next_f64() * 180.0) as u32,
                blocks: chat.clone(),
            }
        })
        .collect()
}

/// A fleet of one replica run through the router is the single replica, report for
/// report, on every engine path without a client gate (which a fleet does not route) and
/// every prefix-cache case: the replica's stops at each arrival, and its requests
/// arriving one by one, change nothing.
#[test]
fn a_routed_fleet_of_one_is_the_single_replica_bit_for_bit() {
    let mut cases: Vec<(String, SimConfig)> = golden_cases()
        .into_iter()
        .filter(|(_, c)| c.traffic.gate().is_none())
        .map(|(n, c)| (n.to_string(), c))
        .collect();
    assert!(cases.len() >= 7);
    cases.extend(
        prefix_cases()
            .into_iter()
            .map(|(n, p, rate)| (n, cfg_of(&p, rate))),
    );
    for (name, cfg) in &cases {
        for seed in [1u64, 2] {
            let (mut a, mut b) = (FNV1A_START, FNV1A_START);
            let single = simulate(cfg, seed).expect("runs");
            fold_report(&mut a, &single);
            fold_report(&mut b, &goodput_engine::run::run_full_routed(cfg, seed));
            assert_eq!(a, b, "{name}, seed {seed}");
        }
    }
}

/// The peak that the knob sweep's reuse rests on: a run whose peak of running sequences
/// is below its `max_num_seqs` is the same, report for report, under any larger cap (and
/// under the smallest cap above the peak), on every KV policy; and the peak never exceeds
/// the cap. Both kinds of run occur: caps that bind and caps that never do.
#[test]
fn a_run_below_its_sequence_cap_is_the_same_under_any_larger_cap() {
    let (mut below, mut reached) = (0, 0);
    for policy in [KvPolicy::None, KvPolicy::Reserve, KvPolicy::Paged] {
        for (cap, rate) in [(4u32, 3.0), (16, 12.0), (64, 20.0), (256, 24.0)] {
            let mut p = plan_none();
            p.run.num_requests = 400;
            p.run.warmup_requests = 40;
            p.engine.kv_policy = policy;
            p.engine.max_num_seqs = cap;
            if policy != KvPolicy::None {
                p.hardware.memory_bytes = memory_for_kv_tokens(60_000.0);
            }
            let cfg = cfg_of(&p, rate);
            for seed in [3u64, 8] {
                let what = format!("{policy:?}, cap {cap}, {rate} req/s, seed {seed}");
                let (a, peak) = attainment_and_peak(&cfg, seed).expect("runs");
                assert_eq!(a, attainment(&cfg, seed).expect("runs"), "{what}");
                assert!(peak <= cap && peak > 0, "{what}: peak {peak}");
                if peak == cap {
                    reached += 1;
                    continue;
                }
                below += 1;
                let report = format!("{:?}", simulate(&cfg, seed).expect("runs"));
                for larger in [peak + 1, cap + 1, cap * 4] {
                    let mut c = cfg.clone();
                    c.max_num_seqs = larger;
                    assert_eq!(
                        attainment_and_peak(&c, seed).expect("runs"),
                        (a, peak),
                        "{what}, under cap {larger}"
                    );
                    let other = format!("{:?}", simulate(&c, seed).expect("runs"));
                    assert_eq!(other, report, "{what}, under cap {larger}");
                }
            }
        }
    }
    assert!(
        below > 0 && reached > 0,
        "{below} runs below the cap, {reached} at it"
    );
}

#[test]
fn speculation_and_prefix_caching_match_the_naive_reference_under_every_kv_policy() {
    let mut base = plan_none();
    base.run.num_requests = 500;
    base.run.warmup_requests = 40;
    let mut preempted = 0;
    for policy in [KvPolicy::None, KvPolicy::Reserve, KvPolicy::Paged] {
        for (name, k, alpha, prefix, hit) in [
            ("speculation", 4, 0.7, 0, 0.0),
            ("speculation always accepted", 2, 1.0, 0, 0.0),
            ("prefix cache", 0, 0.0, 500, 0.6),
            ("both", 3, 0.55, 300, 1.0),
        ] {
            let mut p = base.clone();
            p.engine.kv_policy = policy;
            // Tight memory, so paged preemptions (and their recompute) happen.
            p.hardware.memory_bytes = memory_for_kv_tokens(20_000.0);
            p.engine.spec_draft_tokens = k;
            p.engine.spec_acceptance = alpha;
            p.traffic.prefix_tokens = prefix;
            p.traffic.prefix_hit_rate = hit;
            // A light load decodes in long stretches the engine skips through; a heavy
            // one fills the memory.
            for rate in [0.5, 24.0] {
                let cfg = cfg_of(&p, rate);
                for seed in [3u64, 41] {
                    let what = format!("{name} {policy:?} at {rate} req/s");
                    preempted += assert_matches_reference(&cfg, seed, &what).preemptions;
                }
            }
        }
    }
    assert!(preempted > 100, "the paged cases preempt ({preempted})");
    // Found by the random test: in long decode stretches the engine added `n_dec × e` to
    // the context each step, which drifts from the context computed afresh when `e` is
    // fractional (TTFT off in the last bits).
    let mut p = plan_none();
    p.run.num_requests = 130;
    p.run.warmup_requests = 13;
    p.engine.max_num_seqs = 8;
    p.engine.max_num_batched_tokens = 192;
    p.engine.chunked_prefill = false;
    p.engine.spec_draft_tokens = 1;
    p.engine.spec_acceptance = 0.157_393_649_606_492_55;
    p.traffic.prompt.max = 4000;
    p.traffic.prompt.dist = LengthDist::LogNormal {
        median: 763.665_002_659_174_7,
        sigma: 0.697_735_646_222_698_5,
    };
    p.traffic.output.max = 600;
    p.traffic.output.dist = LengthDist::LogNormal {
        median: 215.435_757_586_383_74,
        sigma: 0.697_735_646_222_698_5,
    };
    assert_matches_reference(&cfg_of(&p, 0.5), 212_266, "a long fractional stretch");
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

/// The step cap ends a run at the step the reference ends it, whatever the engine is
/// doing then: in a stretch carried on after decoders finish, in a mixed step, or idle.
#[test]
fn the_step_cap_ends_the_run_where_the_reference_ends_it() {
    let mut base = plan_none();
    base.run.num_requests = 300;
    base.run.warmup_requests = 20;
    for policy in [KvPolicy::None, KvPolicy::Reserve, KvPolicy::Paged] {
        let mut p = base.clone();
        p.engine.kv_policy = policy;
        p.hardware.memory_bytes = memory_for_kv_tokens(60_000.0);
        let cfg = cfg_of(&p, 18.0);
        let full = simulate(&cfg, 3).expect("runs");
        assert!(!full.truncated);
        // Every cap over a span of the run, so that some fall on each kind of step.
        for cap in (600..full.steps).step_by(7).take(80) {
            let mut capped = cfg.clone();
            capped.max_steps = cap;
            let r = assert_matches_reference(&capped, 3, &format!("{policy:?} cap {cap}"));
            assert!(
                r.truncated && r.steps == cap,
                "{policy:?} cap {cap}: {} steps",
                r.steps
            );
        }
    }
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
        p.hardware.memory_bytes = memory_for_kv_tokens(1_526.0); // about 1,500 KV tokens
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
    p.hardware.memory_bytes = memory_for_kv_tokens(30_000.0);
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
    p.hardware.memory_bytes = memory_for_kv_tokens(20_000.0);
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
            ..TraceRow::default()
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
    // So low a rate that 2,500 arrivals span more than MAX_SPAN_S: refused, not simulated
    // on a clock too coarse for its steps; the lowest rate allowed runs.
    for rate in [1e-305, 1e-320, 2.4e-6] {
        let e = SimConfig::from_plan(&Plan::default(), rate).expect_err("too low");
        assert!(
            matches!(
                e,
                SimError::RateTooLow {
                    num_requests: 2500,
                    ..
                }
            ),
            "{e}"
        );
        assert!(
            e.to_string().ends_with("give at least 0.0000025 req/s"),
            "{e}"
        );
    }
    let lowest = SimConfig::from_plan(&Plan::default(), 2.5e-6).expect("the lowest rate");
    assert!(cfg_of(&Plan::default(), 20.0).with_rate(1e-9).is_err());
    assert_eq!(
        attainment(&lowest, 0).expect("runs"),
        1.0,
        "alone, every request meets the SLO"
    );
    assert!(SimConfig::from_plan(&Plan::default(), f64::NAN).is_err());
    assert!(SimConfig::from_plan(&Plan::default(), f64::INFINITY).is_err());

    let cfg = cfg_of(&Plan::default(), 20.0);
    let e = replicate(&cfg, 0, 1001).expect_err("too many replications");
    assert!(e.to_string().contains("run.replications"), "{e}");
    assert!(replicate(&cfg, 0, 0).is_err());
    let mut big = cfg.clone();
    big.num_requests = crate::plan::MAX_NUM_REQUESTS;
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
        "1..=12",
    );
    check(
        &|p| p.run.sweep_batched_tokens = vec![512; 13],
        "run.sweep_batched_tokens",
        "1..=12 values, got 13",
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
        "Article 8B (dense, 32 layers, 8 KV heads of 128) needs 140.0 GB of weights but one NVIDIA H100 SXM 80GB offers 69.3 GB",
    );
    let mut p = Plan::default();
    p.model.params = 70e9;
    p.model.active_params = 70e9;
    // Refused only for the fit: a GPU comparison may still run it on other GPUs.
    assert!(p.refused_only_for_memory());
    p.run.replications = 0;
    assert!(!p.refused_only_for_memory(), "another problem comes first");
    p.run.replications = 4;
    assert!(!Plan::default().refused_only_for_memory(), "a valid plan");
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
    // Spread over threads, block by block, the result is the same bit for bit; one
    // thread runs the replications in order, as the summaries are averaged.
    let one = replicate_threads(&cfg, 7, 11, 1).expect("runs");
    for threads in [2, 3, 4, 11, 64] {
        let many = replicate_threads(&cfg, 7, 11, threads).expect("runs");
        assert_eq!(format!("{many:?}"), format!("{one:?}"), "{threads} threads");
    }
    let third = simulate(&cfg, replication_seed(7, 3)).expect("runs");
    assert_eq!(one.by_replication[3], third.attainment);
    assert!(replicate_threads(&cfg, 7, 0, 4).is_err());
}

/// A closed loop of `concurrency` clients pausing `think_s` between requests.
fn closed(concurrency: u32, think_s: f64) -> Arrival {
    Arrival::Closed {
        concurrency,
        think_s,
    }
}

#[test]
fn client_gate_and_kv_policies_match_the_naive_reference_exactly() {
    let mut base = plan_none();
    base.run.num_requests = 600;
    base.run.warmup_requests = 40;
    let mut cases: Vec<(String, Plan, f64)> = Vec::new();
    let mut add = |name: &str, f: &dyn Fn(&mut Plan), rate: f64| {
        let mut p = base.clone();
        f(&mut p);
        cases.push((name.to_string(), p, rate));
    };
    add("closed 16", &|p| p.traffic.arrival = closed(16, 0.0), 1.0);
    add("closed 1", &|p| p.traffic.arrival = closed(1, 0.0), 1.0);
    // More clients than sequences: a waiting queue forms at the server.
    add("closed 200", &|p| p.traffic.arrival = closed(200, 0.0), 1.0);
    add(
        "closed 24 think",
        &|p| p.traffic.arrival = closed(24, 0.7),
        1.0,
    );
    add(
        "closed 48 no chunking",
        &|p| {
            p.traffic.arrival = closed(48, 0.05);
            p.engine.chunked_prefill = false;
        },
        1.0,
    );
    add(
        "closed budget-bound",
        &|p| {
            p.traffic.arrival = closed(96, 0.0);
            p.engine.max_num_seqs = 96;
            p.engine.max_num_batched_tokens = 64;
        },
        1.0,
    );
    add(
        "open capped",
        &|p| p.traffic.max_concurrency = Some(40),
        30.0,
    );
    add(
        "open capped light",
        &|p| p.traffic.max_concurrency = Some(8),
        4.0,
    );
    add(
        "gamma capped",
        &|p| {
            p.traffic.arrival = Arrival::Gamma { cv: 3.0 };
            p.traffic.max_concurrency = Some(64);
        },
        25.0,
    );
    // Paged KV with about 30,000 tokens: preemption by recompute, with and without a gate.
    let tight = memory_for_kv_tokens(30_000.0);
    add(
        "paged open",
        &|p| {
            p.engine.kv_policy = KvPolicy::Paged;
            p.hardware.memory_bytes = tight;
        },
        12.0,
    );
    add(
        "paged closed 64",
        &|p| {
            p.engine.kv_policy = KvPolicy::Paged;
            p.hardware.memory_bytes = tight;
            p.traffic.arrival = closed(64, 0.0);
        },
        1.0,
    );
    add(
        "paged capped",
        &|p| {
            p.engine.kv_policy = KvPolicy::Paged;
            p.hardware.memory_bytes = tight;
            p.traffic.max_concurrency = Some(50);
        },
        20.0,
    );
    add(
        "reserve closed think",
        &|p| {
            p.engine.kv_policy = KvPolicy::Reserve;
            p.hardware.memory_bytes = tight;
            p.traffic.arrival = closed(32, 0.2);
        },
        1.0,
    );
    // About 1,500 KV tokens: long requests are refused, and a refusal frees its slot.
    let tiny = memory_for_kv_tokens(1_526.0);
    for policy in [KvPolicy::Paged, KvPolicy::Reserve] {
        add(
            &format!("{policy:?} refusals closed"),
            &|p| {
                p.engine.kv_policy = policy;
                p.hardware.memory_bytes = tiny;
                p.traffic.arrival = closed(6, 0.0);
            },
            1.0,
        );
        add(
            &format!("{policy:?} refusals closed think"),
            &|p| {
                p.engine.kv_policy = policy;
                p.hardware.memory_bytes = tiny;
                p.traffic.arrival = closed(3, 0.3);
            },
            1.0,
        );
        add(
            &format!("{policy:?} refusals capped"),
            &|p| {
                p.engine.kv_policy = policy;
                p.hardware.memory_bytes = tiny;
                p.traffic.max_concurrency = Some(4);
            },
            20.0,
        );
    }
    let mut saw = (0, 0);
    for (name, plan, rate) in &cases {
        for mode in [SloMode::Joint, SloMode::Marginal] {
            let mut plan = plan.clone();
            plan.slo.mode = mode;
            plan.slo.e2e_s = Some(12.0);
            let cfg = cfg_of(&plan, *rate);
            for seed in [3u64, 41] {
                let r = assert_matches_reference(&cfg, seed, &format!("{name} {mode:?}"));
                saw.0 += r.preemptions;
                saw.1 += r.rejected_requests;
            }
        }
    }
    assert!(
        saw.0 > 0 && saw.1 > 0,
        "preemptions and refusals exercised: {saw:?}"
    );
}

#[test]
fn closed_loop_keeps_n_sequences_running_and_obeys_littles_law() {
    let mut p = Plan::default();
    p.run.warmup_requests = 200;
    for n in [8u32, 32, 96] {
        // The drain at the end (fewer than N clients left) biases the throughput by
        // about N × E2E over the run; enough requests keep that under a few percent.
        p.run.num_requests = 3000 + 80 * n;
        p.traffic.arrival = closed(n, 0.0);
        // The rate is ignored: any valid one gives the same run.
        let r = simulate(&cfg_of(&p, 1.0), 7).expect("runs");
        assert_eq!(r, simulate(&cfg_of(&p, 500.0), 7).expect("runs"));
        assert!(r.unfinished_requests == 0 && r.rejected_requests == 0);
        // Zero think time and n <= max_num_seqs: every client's request is always on
        // the server, short of the drain at the end and the steps between an end and
        // the next admission.
        let nf = n as f64;
        assert!(
            r.mean_running > 0.95 * nf && r.mean_running <= nf,
            "n {n}: mean running {}",
            r.mean_running
        );
        assert!(
            r.mean_queue_len < 0.05 * nf,
            "n {n}: queue {}",
            r.mean_queue_len
        );
        // Little's law: throughput = clients in the system / time each spends there.
        let little = nf / r.e2e_s.mean;
        assert!(
            (r.completed_rps / little - 1.0).abs() < 0.03,
            "n {n}: completed {} req/s vs N / mean E2E {little}",
            r.completed_rps
        );
    }
    // With think time, clients spend part of each cycle away: N = X · (E2E + think).
    p.run.num_requests = 3000;
    p.traffic.arrival = closed(32, 0.5);
    let r = simulate(&cfg_of(&p, 1.0), 7).expect("runs");
    let little = 32.0 / (r.e2e_s.mean + 0.5);
    assert!(
        (r.completed_rps / little - 1.0).abs() < 0.03,
        "completed {} vs {little}",
        r.completed_rps
    );
    assert!(r.mean_running < 32.0 * r.e2e_s.mean / (r.e2e_s.mean + 0.5) * 1.05);
}

#[test]
fn open_loop_cap_bounds_requests_in_flight() {
    let mut p = plan_none();
    p.run.num_requests = 1500;
    let free = simulate(&cfg_of(&p, 40.0), 2).expect("runs");
    p.traffic.max_concurrency = Some(24);
    let capped = simulate(&cfg_of(&p, 40.0), 2).expect("runs");
    // Overload: uncapped, the server queue grows; capped, at most 24 are in flight
    // and the excess waits at the client, outside the measured latencies.
    assert!(free.peak_queue_len > 100);
    assert_eq!(capped.peak_queue_len, 0);
    assert!(capped.mean_running <= 24.0);
    assert!(capped.ttft_s.p99 < free.ttft_s.p99);
    assert!(capped.completed_rps < free.completed_rps);
    // A cap above the request count changes nothing.
    p.traffic.max_concurrency = Some(MAX_CONCURRENCY);
    let wide = simulate(&cfg_of(&p, 40.0), 2).expect("runs");
    assert_eq!(wide, free);
}

#[test]
fn marginal_attainment_is_the_worst_objective_share() {
    let mut p = Plan::default();
    p.run.num_requests = 1500;
    // A TPOT objective close to the decode step, so that both objectives bind: on the
    // default SLO almost no request misses TPOT, and both modes agree.
    p.slo.tpot_s = Some(0.014);
    let cfg = cfg_of(&p, 24.0);
    let joint = simulate(&cfg, 4).expect("runs");
    let mut m = cfg.clone();
    m.slo.mode = SloMode::Marginal;
    let marginal = simulate(&m, 4).expect("runs");
    assert!(marginal.attainment > joint.attainment);
    assert_eq!(attainment(&m, 4).expect("runs"), marginal.attainment);
    // Everything but the attainment is the same run.
    assert_eq!(
        SimReport {
            attainment: joint.attainment,
            ..marginal.clone()
        },
        joint
    );
    // Each objective alone: marginal and joint agree, and the marginal attainment is
    // the smaller of the two single-objective ones.
    let single = |ttft: Option<f64>, tpot: Option<f64>| {
        let mut c = m.clone();
        c.slo.ttft_s = ttft;
        c.slo.tpot_s = tpot;
        let a = attainment(&c, 4).expect("runs");
        c.slo.mode = SloMode::Joint;
        assert_eq!(attainment(&c, 4).expect("runs"), a);
        a
    };
    let only_ttft = single(cfg.slo.ttft_s, None);
    let only_tpot = single(None, cfg.slo.tpot_s);
    assert_eq!(marginal.attainment, only_ttft.min(only_tpot));
}

/// FNV-1a over 64-bit words.
fn fold_bits(h: &mut u64, x: u64) {
    *h = fnv1a(*h, &x.to_le_bytes());
}

/// Every field of a report, as bits, folded into `h`.
fn fold_report(h: &mut u64, r: &SimReport) {
    let mut f = |x: f64| fold_bits(h, x.to_bits());
    f(r.attainment);
    for s in [&r.ttft_s, &r.tpot_s, &r.e2e_s, &r.itl_s] {
        for x in [s.mean, s.p50, s.p90, s.p95, s.p99] {
            f(x);
        }
    }
    for x in [
        r.output_tokens_per_s,
        r.completed_rps,
        r.mean_queue_len,
        r.mean_running,
        r.sim_time_s,
    ] {
        f(x);
    }
    for x in [
        r.measured_requests as u64,
        r.unfinished_requests as u64,
        r.rejected_requests as u64,
        r.peak_queue_len as u64,
        r.preemptions as u64,
        r.steps,
        r.truncated as u64,
    ] {
        fold_bits(h, x);
    }
}

/// The plans of the whole-report golden test: the article's point and variants that
/// take every path of the engine (stretch kinds, no chunking, KV policies, gates,
/// speculation, prefix caching, a stepped rate).
fn golden_cases() -> Vec<(&'static str, SimConfig)> {
    let mut out = Vec::new();
    let mut add = |name: &'static str, rate: f64, f: &dyn Fn(&mut Plan)| {
        let mut p = plan_none();
        p.run.num_requests = 1200;
        p.run.warmup_requests = 100;
        f(&mut p);
        out.push((name, cfg_of(&p, rate)));
    };
    add("article", 20.0, &|_| {});
    add("overload", 30.0, &|_| {});
    add("budget 2048", 20.0, &|p| {
        p.engine.max_num_batched_tokens = 2048
    });
    add("no chunking", 20.0, &|p| p.engine.chunked_prefill = false);
    add("budget-bound", 4.0, &|p| {
        p.engine.max_num_seqs = 96;
        p.engine.max_num_batched_tokens = 64;
    });
    add("paged", 12.0, &|p| {
        p.engine.kv_policy = KvPolicy::Paged;
        p.hardware.memory_bytes = memory_for_kv_tokens(30_000.0);
    });
    add("reserve closed", 1.0, &|p| {
        p.engine.kv_policy = KvPolicy::Reserve;
        p.hardware.memory_bytes = memory_for_kv_tokens(30_000.0);
        p.traffic.arrival = closed(32, 0.2);
    });
    add("capped gamma", 25.0, &|p| {
        p.traffic.arrival = Arrival::Gamma { cv: 3.0 };
        p.traffic.max_concurrency = Some(64);
    });
    add("speculation", 10.0, &|p| {
        p.engine.spec_draft_tokens = 4;
        p.engine.spec_acceptance = 0.7;
    });
    add("prefix cache", 22.0, &|p| {
        p.traffic.prefix_tokens = 500;
        p.traffic.prefix_hit_rate = 0.6;
    });
    let mut stepped = cfg_of(&plan_none(), 15.0);
    stepped.num_requests = 1200;
    stepped.warmup_requests = 100;
    stepped.traffic.rate_steps = vec![
        crate::traffic::RateStep {
            duration_s: 20.0,
            rate_rps: 25.0,
        },
        crate::traffic::RateStep {
            duration_s: 10.0,
            rate_rps: 0.0,
        },
    ];
    out.push(("stepped rate", stepped));
    out
}

/// Every field of the full report, bit for bit, on plans that cover every engine path,
/// pinned as one digest: the optimised engine and summaries must reproduce the reports
/// of the straightforward versions they replaced (ITL and queue statistics included,
/// which the naive reference does not compute). Recompute the digest only for a
/// deliberate change of the model, and say so in the commit.
#[test]
fn whole_reports_are_unchanged_bit_for_bit() {
    let mut all = FNV1A_START;
    let mut each = Vec::new();
    for (name, cfg) in golden_cases() {
        let mut h = FNV1A_START;
        for seed in [1u64, 2, 3] {
            let r = simulate(&cfg, seed).expect("runs");
            assert_eq!(
                attainment(&cfg, seed).expect("runs"),
                r.attainment,
                "{name}"
            );
            fold_report(&mut h, &r);
        }
        each.push(format!("{name}: {h:#018x}"));
        fold_bits(&mut all, h);
    }
    assert_eq!(all, GOLDEN_REPORTS_DIGEST, "per plan:\n{}", each.join("\n"));
}

const GOLDEN_REPORTS_DIGEST: u64 = 0x1322_e778_8a5a_cd76;

/// A chat class (short prompts, tight TTFT, priority 0) and a batch class (long
/// prompts, an end-to-end deadline only, priority 1), `chat` of the requests chat.
fn chat_and_batch(base: &Plan, chat: f64) -> Plan {
    use crate::plan::classes::parse_class;
    let mut p = base.clone();
    p.classes = vec![
        parse_class(
            &p,
            &format!("chat:share={chat},ttft=0.5,tpot=0.05,priority=0"),
        )
        .expect("chat"),
        parse_class(
            &p,
            &format!(
                "batch:share={},e2e=120,priority=1,input-len-median=3000,output-len-median=400",
                1.0 - chat
            ),
        )
        .expect("batch"),
    ];
    p.validate().expect("valid");
    p
}

/// Traffic classes, engine against reference, bit for bit: priority admission on an
/// unlimited KV cache, on a paged cache tight enough to preempt (the low priority's
/// latest first), with each class's own `max_tokens` reserved, without chunking, and
/// with the priorities the other way round and equal.
#[test]
fn traffic_classes_match_the_naive_reference_exactly() {
    let mut base = plan_none();
    base.run.num_requests = 600;
    base.run.warmup_requests = 40;
    let tight = memory_for_kv_tokens(30_000.0);
    let mut cases: Vec<(String, Plan, f64)> = Vec::new();
    let mut add = |name: &str, f: &dyn Fn(&mut Plan), rate: f64| {
        let mut p = chat_and_batch(&base, 0.7);
        f(&mut p);
        p.validate().expect("valid");
        cases.push((name.to_string(), p, rate));
    };
    add("unlimited", &|_| {}, 12.0);
    add("unlimited overload", &|_| {}, 25.0);
    add(
        "paged",
        &|p| {
            p.engine.kv_policy = KvPolicy::Paged;
            p.hardware.memory_bytes = tight;
        },
        10.0,
    );
    add(
        "reserve",
        &|p| {
            p.engine.kv_policy = KvPolicy::Reserve;
            p.hardware.memory_bytes = tight;
        },
        8.0,
    );
    add(
        "no chunking",
        &|p| {
            p.engine.chunked_prefill = false;
            p.engine.max_num_seqs = 24;
        },
        10.0,
    );
    add(
        "batch first",
        &|p| {
            p.classes[0].priority = 3;
            p.engine.kv_policy = KvPolicy::Paged;
            p.hardware.memory_bytes = tight;
        },
        10.0,
    );
    add("equal priorities", &|p| p.classes[1].priority = 0, 20.0);
    // Batch in sessions over a document of its own, its replies cached for the next
    // turn, beside chat's cached system prompt, in a KV cache that must evict.
    let sessions = |p: &mut Plan| {
        p.traffic.prefix_tokens = 200;
        p.traffic.prefix_hit_rate = 0.6;
        p.classes[1].sharing = Some(PrefixModel {
            sessions: 12,
            turns: 4,
            document_tokens: 1_500,
            ..PrefixModel::NONE
        });
        p.classes[1].prompt = None;
        p.engine.kv_policy = KvPolicy::Paged;
        p.hardware.memory_bytes = tight;
    };
    add("a class in sessions", &sessions, 4.0);
    add(
        "a class in sessions, shared prefixes",
        &|p| {
            sessions(p);
            if let Some(s) = &mut p.classes[1].sharing {
                s.groups = 3;
                s.group_tokens = 600;
            }
        },
        4.0,
    );
    add(
        "closed loop",
        &|p| {
            p.traffic.arrival = closed(48, 0.0);
            p.engine.kv_policy = KvPolicy::Paged;
            p.hardware.memory_bytes = tight;
        },
        1.0,
    );
    let mut preempted = 0;
    for (what, plan, rate) in &cases {
        let cfg = cfg_of(plan, *rate);
        for seed in [5u64, 61] {
            let r = assert_matches_reference(&cfg, seed, what);
            preempted += r.preemptions;
            assert_eq!(r.classes.len(), 2, "{what}");
        }
    }
    assert!(preempted > 0, "the tight cases preempt");
}

/// The mix draws each class in its share and with its own lengths, from the plan's
/// arrivals: the arrival times are those of the plan without classes, bit for bit.
#[test]
fn a_mix_draws_classes_by_share_with_their_own_lengths() {
    let mut base = plan_none();
    base.run.num_requests = 20_000;
    let mix = chat_and_batch(&base, 0.7);
    let cfg = cfg_of(&mix, 10.0);
    let w = cfg.traffic.generate_seeded(20_000, 9);
    let alone = cfg_of(&base, 10.0).traffic.generate_seeded(20_000, 9);
    assert_eq!(w.arrival_s, alone.arrival_s);
    assert_eq!(w, cfg.traffic.generate(20_000, &mut Rng::new(9)));
    let chat: Vec<usize> = (0..20_000).filter(|&i| w.class[i] == 0).collect();
    let share = chat.len() as f64 / 20_000.0;
    assert!((share - 0.7).abs() < 0.01, "chat share {share}");
    let median = |mut v: Vec<u32>| {
        v.sort_unstable();
        v[v.len() / 2] as f64
    };
    let prompts = |k: u8| {
        (0..20_000)
            .filter(|&i| w.class[i] == k)
            .map(|i| w.prompt_tokens[i])
            .collect::<Vec<_>>()
    };
    let (m0, m1) = (median(prompts(0)), median(prompts(1)));
    assert!((m0 / 800.0 - 1.0).abs() < 0.05, "chat prompt median {m0}");
    assert!((m1 / 3000.0 - 1.0).abs() < 0.05, "batch prompt median {m1}");
}

/// Priority pays off: under load, the chat class at priority 0 waits less for its first
/// token than the same mix served first come, first served, and than the batch class.
#[test]
fn the_first_priority_waits_less() {
    let mut base = plan_none();
    base.run.num_requests = 1500;
    base.run.warmup_requests = 100;
    base.engine.max_num_seqs = 32;
    let mix = chat_and_batch(&base, 0.7);
    let mut fcfs = mix.clone();
    fcfs.classes[1].priority = 0;
    let rate = 14.0;
    let pri = simulate(&cfg_of(&mix, rate), 3).expect("runs");
    let flat = simulate(&cfg_of(&fcfs, rate), 3).expect("runs");
    let (chat, batch) = (&pri.classes[0], &pri.classes[1]);
    assert!(pri.mean_queue_len > 1.0, "loaded: {}", pri.mean_queue_len);
    assert!(
        chat.ttft_s.p90 < 0.5 * flat.classes[0].ttft_s.p90,
        "chat p90 TTFT {} with priority, {} without",
        chat.ttft_s.p90,
        flat.classes[0].ttft_s.p90
    );
    assert!(chat.ttft_s.mean < batch.ttft_s.mean);
    assert!(chat.attainment > flat.classes[0].attainment);
    let measured: u32 = pri.classes.iter().map(|c| c.measured_requests).sum();
    assert_eq!(measured, pri.measured_requests);
    // The mix's attainment is the worst class's (both keep the plan's 90% target).
    assert_eq!(pri.attainment, chat.attainment.min(batch.attainment));
}

/// A class's own target above the plan's tightens the mix: its attainment is the worst
/// class's, each less how far its target lies above the plan's (worked out here from the
/// plan's numbers).
#[test]
fn a_class_target_above_the_plan_s_tightens_the_mix() {
    use crate::plan::classes::parse_class;
    let mut base = plan_none();
    base.run.num_requests = 800;
    base.run.warmup_requests = 50;
    let mut p = chat_and_batch(&base, 0.7);
    p.classes[1] = parse_class(
        &p,
        "batch:share=0.3,e2e=120,priority=1,input-len-median=3000,attainment=0.99",
    )
    .expect("batch");
    p.validate().expect("valid");
    // A light load: both classes near 100%, so the batch class's higher target binds.
    let r = simulate(&cfg_of(&p, 6.0), 3).expect("runs");
    let (chat, batch) = (r.classes[0].attainment, r.classes[1].attainment);
    let want = chat.min(batch - (0.99 - 0.9)).clamp(0.0, 1.0);
    assert_eq!(r.attainment, want);
    assert!(
        r.attainment < chat.min(batch),
        "{} against {chat} and {batch}",
        r.attainment
    );
}

/// Classes on a routed fleet: the fast path and the full report agree, and the classes'
/// requests add up to the fleet's.
#[test]
fn classes_on_a_routed_fleet_agree_fast_and_full() {
    use crate::plan::{FleetRouter, RoutingSpec};
    let mut base = plan_none();
    base.run.num_requests = 600;
    base.run.warmup_requests = 40;
    for router in [
        FleetRouter::RoundRobin,
        FleetRouter::LeastLoaded,
        FleetRouter::Random,
    ] {
        let mut p = chat_and_batch(&base, 0.7);
        p.routing = Some(RoutingSpec {
            replicas: 2,
            router,
        });
        p.engine.kv_policy = KvPolicy::Paged;
        p.hardware.memory_bytes = memory_for_kv_tokens(30_000.0);
        p.validate().expect("valid");
        let cfg = cfg_of(&p, 11.0);
        let r = simulate(&cfg, 9).expect("runs");
        assert_eq!(
            attainment(&cfg, 9).expect("runs"),
            r.attainment,
            "{router:?}"
        );
        let measured: u32 = r.classes.iter().map(|c| c.measured_requests).sum();
        assert_eq!(measured, r.measured_requests, "{router:?}");
    }
}

/// A hand-built configuration's class lengths are checked as the plan's are.
#[test]
fn a_hand_built_class_length_is_refused_by_name() {
    let mut base = plan_none();
    base.run.num_requests = 200;
    base.run.warmup_requests = 20;
    let mut cfg = cfg_of(&chat_and_batch(&base, 0.7), 5.0);
    cfg.traffic.classes[1].prompt.min = cfg.traffic.classes[1].prompt.max + 1;
    let e = simulate(&cfg, 1).expect_err("refused");
    assert!(
        e.to_string()
            .starts_with("traffic.classes: needs min <= max"),
        "{e}"
    );
    let mut cfg = cfg_of(&chat_and_batch(&base, 0.7), 5.0);
    cfg.traffic.classes[0].output.dist = LengthDist::Trace;
    assert!(simulate(&cfg, 1).is_err());
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// The fast engine against the naive reference on random plans: every knob the
    /// reference models (sequence cap, budget, chunking, KV policy and capacity, open,
    /// capped or closed arrivals, length laws, speculative decoding, prefix caching,
    /// warm-up), both SLO modes, bit for bit.
    #[test]
    fn engine_matches_the_naive_reference_on_random_plans(
        seed in 0u64..1_000_000,
        rate in 0.5f64..45.0,
        max_num_seqs in 1u32..200,
        budget in 8u32..3000,
        chunked in proptest::bool::ANY,
        policy in 0usize..3,
        kv_tokens in 1_500.0f64..80_000.0,
        gate in 0usize..4,
        clients in 1u32..120,
        think_s in 0.0f64..0.5,
        prompt_median in 8.0f64..2000.0,
        output_median in 1.0f64..400.0,
        sigma in 0.0f64..1.5,
        marginal in proptest::bool::ANY,
        num_requests in 20u32..260,
        spec in (0u32..5, 0.0f64..1.0),
        prefix in (0u32..800, 0.0f64..1.0),
    ) {
        let mut p = plan_none();
        p.run.num_requests = num_requests;
        p.run.warmup_requests = num_requests / 10;
        p.engine.max_num_seqs = max_num_seqs;
        p.engine.max_num_batched_tokens = budget;
        p.engine.chunked_prefill = chunked;
        p.engine.kv_policy = [KvPolicy::None, KvPolicy::Reserve, KvPolicy::Paged][policy];
        p.hardware.memory_bytes = memory_for_kv_tokens(kv_tokens);
        match gate {
            1 => p.traffic.max_concurrency = Some(clients),
            2 => p.traffic.arrival = closed(clients, think_s),
            3 => p.traffic.arrival = Arrival::Gamma { cv: 2.5 },
            _ => {}
        }
        p.traffic.prompt.min = 1;
        p.traffic.prompt.max = 4000;
        p.traffic.prompt.dist = LengthDist::LogNormal { median: prompt_median, sigma };
        p.traffic.output.min = 1;
        p.traffic.output.max = 600;
        p.traffic.output.dist = LengthDist::LogNormal { median: output_median, sigma };
        (p.engine.spec_draft_tokens, p.engine.spec_acceptance) = spec;
        (p.traffic.prefix_tokens, p.traffic.prefix_hit_rate) = prefix;
        p.slo.e2e_s = Some(10.0);
        if marginal {
            p.slo.mode = SloMode::Marginal;
        }
        let cfg = cfg_of(&p, rate);
        assert_matches_reference(&cfg, seed, "random plan");
    }
}
