//! The event loop. One generic body serves the full report (`FULL = true`: latency
//! vectors and ITL pairs) and the attainment fast path (`FULL = false`: counters only).
//!
//! **Arrivals.** `Engine::arrival` holds each request's arrival, non-decreasing in
//! request order. Without a client gate it is the generated stream. With a gate of N
//! slots, requests N.. start at +∞ (not yet released) and `release_next` sets them one
//! by one as requests end (finish or refusal): ends come in non-decreasing time, and
//! both the generated times and `end + think` are non-decreasing, so the array stays
//! sorted and every reader (`absorb_arrivals`, the idle jump, the stretch's arrival
//! checks) works unchanged. An unreleased request is never needed early: an idle
//! replica has ended every released request, so the next one is already released; and
//! a release happens only at an end (a finish ends the stretch it falls in, a refusal
//! happens while admitting), so every stretch is planned with the releases made so far.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::cache::PrefixCache;
use crate::config::{
    CacheSample, ClassReport, ClassRule, SimConfig, SimReport, CACHE_TIMELINE_POINTS,
};
use crate::kinds::KvPolicy;
use crate::stats::Summary;
use crate::traffic::{Sharing, Workload};

/// Lifecycle of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Not yet admitted (or preempted and waiting again).
    Waiting,
    /// Admitted; its prompt is being prefilled.
    Prefill,
    /// Prompt done; decoding.
    Decode,
    /// Finished or refused.
    Gone,
}

/// Parameters of a stretch of identical-shape steps (see `Engine::stretch`).
struct Stretch {
    /// Tokens computed per step.
    n_tok: u64,
    /// Decoders' context at their admission: prompts and recomputed tokens [tokens].
    ctx_base: f64,
    /// Decode steps the decoders have run before the first step, summed over them.
    grown: u64,
    /// Decoders (each adds a step to `grown` per step).
    n_dec: u64,
    /// Tokens per decode step (expected, with speculation).
    e: f64,
    /// Prefill tokens the front prompt gets per step.
    chunk: u64,
    /// Step count at which the stretch must end.
    stop: u64,
    /// Whether an arriving request could be admitted and change the next step.
    can_admit: bool,
    /// Sequences scheduled per step: the decoders, and the front prompt when it gets a chunk.
    n_seqs: u64,
    /// Tokens of the front prompt computed (or cached) before the stretch's first step;
    /// prices its chunks' attention [tokens].
    done: f64,
}

/// End of an intrusive list.
const NIL: u32 = u32::MAX;

/// A FIFO of prefilling sequences over one `Vec` (cheaper to scan than a `VecDeque`).
#[derive(Debug, Default)]
struct Fifo {
    items: Vec<Prefilling>,
    head: usize,
}

impl Fifo {
    fn len(&self) -> usize {
        self.items.len() - self.head
    }

    fn is_empty(&self) -> bool {
        self.head == self.items.len()
    }

    fn push_back(&mut self, p: Prefilling) {
        if self.head > 0 && (self.is_empty() || self.head >= 4096) {
            self.items.drain(..self.head);
            self.head = 0;
        }
        self.items.push(p);
    }

    fn pop_front(&mut self) -> Option<Prefilling> {
        let p = self.items.get(self.head).copied();
        if p.is_some() {
            self.head += 1;
        }
        p
    }

    fn front_mut(&mut self) -> Option<&mut Prefilling> {
        self.items.get_mut(self.head)
    }

    fn live(&mut self) -> &mut [Prefilling] {
        &mut self.items[self.head..]
    }

    /// Removes sequence `id` (the newest admitted is at the back, so this is quick).
    fn remove_id(&mut self, id: u32) {
        if let Some(pos) = self.items[self.head..].iter().rposition(|p| p.id == id) {
            self.items.remove(self.head + pos);
        }
    }
}

/// A running sequence whose prompt is not yet fully computed.
#[derive(Debug, Clone, Copy)]
struct Prefilling {
    id: u32,
    /// Prompt tokens still to compute [tokens].
    remaining: u32,
}

/// Everything one run produces; the public report is derived from it. The default is
/// a run that has produced nothing yet.
#[derive(Default)]
pub(crate) struct Outcome {
    /// Measured requests meeting every objective.
    pub(crate) hits: u32,
    /// Measured requests meeting the TTFT, TPOT and E2E objective, each on its own.
    pub(crate) hits_each: [u32; 3],
    /// Arrival of the first measured request (+∞ if never released) [s].
    pub(crate) window_start: f64,
    pub(crate) measured: u32,
    pub(crate) finished_measured: u32,
    pub(crate) rejected: u32,
    pub(crate) preemptions: u32,
    pub(crate) steps: u64,
    pub(crate) t_end: f64,
    pub(crate) truncated: bool,
    pub(crate) output_tokens: u64,
    pub(crate) queue_area: f64,
    pub(crate) running_area: f64,
    pub(crate) peak_queue: u32,
    /// Most sequences running at once (after any admission).
    pub(crate) peak_running: u64,
    /// Share of the prompt tokens looked up in the prefix cache that it held [0..1].
    pub(crate) prefix_hit_rate: f64,
    /// Tokens the prefix cache evicted.
    pub(crate) prefix_evicted_tokens: u64,
    /// Prompt tokens looked up in the prefix cache, and of them found cached.
    pub(crate) prefix_lookups: (u64, u64),
    /// Replicas the run's requests were spread over (1 but for a fleet): the report's
    /// rates and means are per replica.
    pub(crate) replicas: u32,
    /// The KV memory and the prefix cache over the run (full runs with a cache).
    pub(crate) cache_timeline: Vec<CacheSample>,
    /// Latencies of the measured requests in request order (slot `id − warm-up`);
    /// NaN for a request that did not finish.
    pub(crate) ttft: Vec<f64>,
    pub(crate) tpot: Vec<f64>,
    pub(crate) e2e: Vec<f64>,
    /// Inter-token gaps as (step duration, decoders living through it), in step order;
    /// consecutive steps of the same duration share one pair.
    pub(crate) itl: Vec<(f64, u64)>,
    /// Per traffic class (empty with one class): its measured requests' counts.
    pub(crate) class_counts: Vec<ClassCount>,
    /// The class of each measured request, in the latencies' order (full runs with
    /// classes).
    pub(crate) slot_class: Vec<u8>,
}

/// One traffic class's counts in a run's [`Outcome`].
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ClassCount {
    pub(crate) measured: u32,
    pub(crate) finished: u32,
    /// Those meeting every objective of the class.
    pub(crate) hits: u32,
    /// Those meeting its TTFT, TPOT and E2E objective, each on its own.
    pub(crate) hits_each: [u32; 3],
    /// Prompt and output tokens of its measured requests.
    pub(crate) tokens: u64,
}

impl ClassCount {
    /// Adds another replica's counts.
    pub(crate) fn add(&mut self, o: &ClassCount) {
        self.measured += o.measured;
        self.finished += o.finished;
        self.hits += o.hits;
        for (s, h) in self.hits_each.iter_mut().zip(o.hits_each) {
            *s += h;
        }
        self.tokens += o.tokens;
    }

    /// The class's attainment under `rule`'s objectives.
    fn attainment(&self, rule: &ClassRule) -> f64 {
        rule.attainment(self.measured, self.hits, self.hits_each)
    }
}

impl Outcome {
    /// The run's attainment under `cfg`'s objectives.
    /// Each traffic class's attainment under its own objectives (none with one class).
    pub(crate) fn class_attainments(&self, cfg: &SimConfig) -> Vec<f64> {
        self.class_counts
            .iter()
            .zip(&cfg.classes)
            .map(|(c, rule)| c.attainment(rule))
            .collect()
    }

    /// With traffic classes, the worst class's attainment less the amount its target
    /// lies above the plan's; a class with no measured request is not judged.
    pub(crate) fn attainment(&self, cfg: &SimConfig) -> f64 {
        if cfg.classes.is_empty() {
            return cfg.slo.attainment(self.measured, self.hits, self.hits_each);
        }
        let each = self
            .class_counts
            .iter()
            .zip(&cfg.classes)
            .map(|(c, rule)| (c.measured, c.attainment(rule)));
        crate::config::mix_attainment(each, &cfg.classes)
    }
}

/// The public report of a full run's outcome.
pub(crate) fn report(cfg: &SimConfig, mut o: Outcome) -> SimReport {
    // A fleet's sums are reported per replica (one replica: divided by 1, exactly).
    let k = o.replicas.max(1) as f64;
    let per_s = |x: f64| if o.t_end > 0.0 { x / o.t_end / k } else { 0.0 };
    let window = o.t_end - o.window_start;
    let completed_rps = if window > 0.0 && window.is_finite() {
        o.finished_measured as f64 / window / k
    } else {
        0.0
    };
    // Each class's latencies, split out in request order before the whole run's are
    // sorted for its percentiles.
    let classes: Vec<ClassReport> = o
        .class_counts
        .iter()
        .zip(&cfg.classes)
        .enumerate()
        .map(|(k, (c, rule))| {
            let of = |v: &[f64]| -> Vec<f64> {
                v.iter()
                    .zip(&o.slot_class)
                    .filter(|(_, &s)| s as usize == k)
                    .map(|(&x, _)| x)
                    .collect()
            };
            ClassReport {
                attainment: c.attainment(rule),
                ttft_s: Summary::of(&mut of(&o.ttft)),
                tpot_s: Summary::of(&mut of(&o.tpot)),
                e2e_s: Summary::of(&mut of(&o.e2e)),
                measured_requests: c.measured,
                unfinished_requests: c.measured - c.finished,
                tokens: c.tokens,
            }
        })
        .collect();
    SimReport {
        classes,
        attainment: o.attainment(cfg),
        ttft_s: Summary::of(&mut o.ttft),
        tpot_s: Summary::of(&mut o.tpot),
        e2e_s: Summary::of(&mut o.e2e),
        itl_s: Summary::of_weighted(&mut o.itl),
        measured_requests: o.measured,
        unfinished_requests: o.measured - o.finished_measured,
        rejected_requests: o.rejected,
        output_tokens_per_s: per_s(o.output_tokens as f64),
        completed_rps,
        mean_queue_len: per_s(o.queue_area),
        peak_queue_len: o.peak_queue,
        mean_running: per_s(o.running_area),
        preemptions: o.preemptions,
        prefix_hit_rate: o.prefix_hit_rate,
        prefix_evicted_tokens: o.prefix_evicted_tokens / o.replicas.max(1) as u64,
        cache_timeline: std::mem::take(&mut o.cache_timeline),
        steps: o.steps,
        sim_time_s: o.t_end,
        truncated: o.truncated,
    }
}

/// Mutable state of one run.
///
/// `ROUTED` marks a replica of a fleet (the `fleet` module): its requests are pushed one by
/// one as the router sends them, and [`Engine::advance`] stops at each arrival's time so
/// that the router sees the replica as it then is.
pub(crate) struct Engine<'a, const FULL: bool, const ROUTED: bool> {
    cfg: &'a SimConfig,
    // Per request.
    /// Arrival (release) times, non-decreasing; +∞ until released (see the module docs) [s].
    arrival: Vec<f64>,
    /// Generated arrival times (client gate only; empty otherwise) [s].
    base: Vec<f64>,
    /// Next request an end releases; `arrival.len()` when there is no gate (or all are out).
    next_release: usize,
    /// Pause between an end and the release it causes (closed loop) [s].
    think: f64,
    /// Tokens to compute when (re)admitted [tokens].
    prefill_need: Vec<u32>,
    /// Context once the prefill is done [tokens].
    ctx_base: Vec<u32>,
    /// Tokens still to produce, the one emitted at prefill completion included.
    out_left: Vec<u32>,
    /// Original output length.
    out_total: Vec<u32>,
    /// Reserved KV tokens (reserve policy) [tokens].
    reserve: Vec<u32>,
    /// Tokens of the context a running request holds on its own (paged policy with a
    /// prefix cache): its context less the cached prefix it found, less what it handed
    /// to the cache when its prompt was done [tokens].
    private: Vec<u32>,
    /// The shared prefixes, when the requests share any.
    sharing: Option<Sharing>,
    cache: Option<PrefixCache>,
    /// Requests that ended in this step and still hold their prefix paths.
    leaving: Vec<u32>,
    /// A request's whole prefix path, built where it is needed.
    scratch: Vec<(u32, u32)>,
    first: Vec<f64>,
    state: Vec<State>,
    epoch: Vec<u32>,
    dec_start: Vec<u64>,
    warmup: u32,
    /// Each request's traffic class (empty with one class).
    class: Vec<u8>,
    /// Whether waiting requests are admitted by priority ([`SimConfig::classes`]): then
    /// the arrivals `next_admit..next_arr` move into `by_priority` before each admission,
    /// and a preempted sequence goes back there too.
    prio: bool,
    /// Waiting requests by (priority, request), lowest first (priority scheduling only).
    by_priority: BinaryHeap<Reverse<(u32, u32)>>,
    // Waiting queue: preempted sequences first, then arrivals `next_admit..next_arr`.
    preempted: VecDeque<u32>,
    next_admit: usize,
    next_arr: usize,
    // Running.
    pre: Fifo,
    /// Timing wheel of decoders by finish step: `wheel[f & mask]` heads an intrusive
    /// list (`next`/`prev`) of the decoders whose last token comes in step `f`. Every
    /// finish lies less than `wheel.len()` steps ahead, so a slot holds one step only.
    wheel: Vec<u32>,
    mask: u64,
    next: Vec<u32>,
    /// Back links (paged policy only, where preemption unlinks a decoder).
    prev: Vec<u32>,
    /// Finish step of each decoder (paged policy only).
    fin: Vec<u64>,
    n_dec: u64,
    n_dec_measured: u32,
    dec_base_sum: u64,
    dec_start_sum: u64,
    /// KV tokens held by running sequences at admission (paged) or reserved (reserve).
    kv_static: u64,
    admitted: Vec<(u32, u32)>,
    /// Whether prefill attention is priced ([`crate::step::StepModel::prices_attention`]).
    attn: bool,
    /// A routed replica stops at the first step boundary at or after this time [s].
    horizon: f64,
    /// The cache timeline (full runs with a prefix cache): samples with the lookups and
    /// hits counted so far, the time between samples, and the next sample's time [s].
    timeline: Vec<(CacheSample, u64, u64)>,
    sample_every: f64,
    next_sample: f64,
    // Clock.
    t: f64,
    s: u64,
    out: Outcome,
}

impl<'a, const FULL: bool, const ROUTED: bool> Engine<'a, FULL, ROUTED> {
    fn new(cfg: &'a SimConfig, seed: u64) -> Self {
        let w = cfg.traffic.generate_seeded(cfg.num_requests as usize, seed);
        Self::of_workload(cfg, w, cfg.num_requests - cfg.warmup_requests)
    }

    /// A replica of a fleet with no requests yet: the router pushes them
    /// ([`Engine::push`]). `sharing` is the fleet's prefix structure without requests
    /// (its segments, blocks, pinned and preloaded prefixes).
    pub(crate) fn replica(cfg: &'a SimConfig, sharing: Option<Sharing>) -> Self {
        let w = Workload {
            sharing,
            ..Workload::default()
        };
        let mut e = Self::of_workload(cfg, w, 0);
        e.warmup = 0;
        // No client gate: nothing is ever released.
        e.next_release = usize::MAX;
        e
    }

    /// Request `g` of the fleet's workload `w` reaches this replica (a routed replica
    /// only): it joins the arrivals, in arrival order, as the replica's next request.
    /// `path` is its shared prefix path in the fleet's structure; `measured` says whether
    /// it counts (the fleet's warm-up requests come first, so they are pushed first).
    pub(crate) fn push(&mut self, w: &Workload, g: usize, path: &[(u32, u32)], measured: bool) {
        debug_assert!(ROUTED);
        let prompt = w.prompt_tokens[g];
        let out = w.output_tokens[g];
        let paged = self.cfg.kv_policy == KvPolicy::Paged;
        self.arrival.push(w.arrival_s[g]);
        self.prefill_need
            .push(match (&self.sharing, w.cached_tokens.get(g)) {
                (None, Some(&c)) => prompt - c,
                _ => prompt,
            });
        self.ctx_base.push(prompt);
        self.out_left.push(out);
        self.out_total.push(out);
        if self.cfg.kv_policy == KvPolicy::Reserve {
            let cap = self.cfg.traffic.output_cap_of(&w.class, g);
            self.reserve.push(prompt.saturating_add(cap));
        }
        if let Some(&c) = w.class.get(g) {
            self.class.push(c);
            if measured {
                let count = &mut self.out.class_counts[c as usize];
                count.measured += 1;
                count.tokens += prompt as u64 + out as u64;
                if FULL {
                    self.out.slot_class.push(c);
                }
            }
        }
        if let Some(s) = &mut self.sharing {
            s.items.extend_from_slice(path);
            s.start.push(s.items.len() as u32);
            if paged {
                self.private.push(0);
            }
        }
        self.first.push(f64::NAN);
        self.state.push(State::Waiting);
        if paged {
            self.epoch.push(0);
            self.prev.push(NIL);
            self.fin.push(0);
        }
        self.dec_start.push(0);
        self.next.push(NIL);
        if measured {
            self.out.measured += 1;
            if FULL {
                self.out.ttft.push(f64::NAN);
                self.out.tpot.push(f64::NAN);
                self.out.e2e.push(f64::NAN);
            }
        } else {
            debug_assert_eq!(self.out.measured, 0, "warm-up requests come first");
            self.warmup += 1;
        }
    }

    /// Requests in the replica: running and waiting (a routed replica's load).
    pub(crate) fn load(&self) -> usize {
        self.running() as usize + self.waiting()
    }

    /// The prefix cache, when the requests share prefixes.
    pub(crate) fn cache(&self) -> Option<&PrefixCache> {
        self.cache.as_ref()
    }

    /// Requests waiting to be admitted (a routed replica's queue).
    pub(crate) fn queue(&self) -> usize {
        self.waiting()
    }

    /// Share of the KV memory the running requests hold, their cached prefixes included
    /// (an engine's KV usage; cached blocks nobody holds count as free) [0..1]; 0 without
    /// a paged KV memory.
    pub(crate) fn kv_usage(&self) -> f64 {
        let cap = self.cfg.kv_capacity_tokens;
        match self.cfg.kv_policy {
            KvPolicy::None => 0.0,
            KvPolicy::Reserve => self.kv_static as f64 / cap,
            KvPolicy::Paged => {
                let e = self.cfg.tokens_per_decode_step();
                ((self.kv_used(e) + self.cache_held()) / cap).min(1.0)
            }
        }
    }

    /// An engine for the requests of `w`, of which the last `measured` are measured.
    fn of_workload(cfg: &'a SimConfig, mut w: Workload, measured: u32) -> Self {
        let n = w.prompt_tokens.len();
        let sharing = w.sharing.take();
        let cache = sharing
            .as_ref()
            .map(|s| PrefixCache::new(s.segments, s.block_tokens, &s.pinned, &s.preloaded));
        let prefill_need: Vec<u32> = if w.cached_tokens.is_empty() || sharing.is_some() {
            w.prompt_tokens.clone()
        } else {
            w.prompt_tokens
                .iter()
                .zip(&w.cached_tokens)
                .map(|(&p, &c)| p - c)
                .collect()
        };
        let reserve = if cfg.kv_policy == KvPolicy::Reserve {
            w.prompt_tokens
                .iter()
                .enumerate()
                .map(|(i, &p)| p.saturating_add(cfg.traffic.output_cap_of(&w.class, i)))
                .collect()
        } else {
            Vec::new()
        };
        let class = std::mem::take(&mut w.class);
        let mut class_counts = vec![ClassCount::default(); cfg.classes.len()];
        let first_measured = n - measured as usize;
        for (i, &c) in class.iter().enumerate().skip(first_measured) {
            let count = &mut class_counts[c as usize];
            count.measured += 1;
            count.tokens += w.prompt_tokens[i] as u64 + w.output_tokens[i] as u64;
        }
        let slot_class = if FULL && !class.is_empty() {
            class[first_measured..].to_vec()
        } else {
            Vec::new()
        };
        let paged = cfg.kv_policy == KvPolicy::Paged;
        // Decode steps never exceed the output cap: a wheel that long never wraps onto
        // a live slot.
        let wheel_len = (cfg.traffic.output_cap() as usize + 1).next_power_of_two();
        let cap = if FULL { measured as usize } else { 0 };
        let mut arrival = w.arrival_s;
        let (base, next_release, think) = match cfg.traffic.gate() {
            Some((slots, think)) if (slots as usize) < n => {
                let base = arrival.clone();
                arrival[slots as usize..].fill(f64::INFINITY);
                // A client's next request reaches the engine a frontend time after it is
                // sent, so the engine sees the pause between requests grow by it.
                (base, slots as usize, think + cfg.step.frontend_s)
            }
            _ => (Vec::new(), n, 0.0),
        };
        Engine {
            cfg,
            arrival,
            base,
            next_release,
            think,
            prefill_need,
            out_left: w.output_tokens.clone(),
            ctx_base: w.prompt_tokens,
            out_total: w.output_tokens,
            reserve,
            private: if sharing.is_some() && paged {
                vec![0; n]
            } else {
                Vec::new()
            },
            sharing,
            cache,
            leaving: Vec::new(),
            scratch: Vec::new(),
            first: vec![f64::NAN; n],
            state: vec![State::Waiting; n],
            epoch: if paged { vec![0; n] } else { Vec::new() },
            dec_start: vec![0; n],
            warmup: cfg.warmup_requests,
            class,
            prio: !cfg.classes.is_empty(),
            by_priority: BinaryHeap::new(),
            preempted: VecDeque::new(),
            next_admit: 0,
            next_arr: 0,
            pre: Fifo::default(),
            wheel: vec![NIL; wheel_len],
            mask: wheel_len as u64 - 1,
            next: vec![NIL; n],
            prev: if paged { vec![NIL; n] } else { Vec::new() },
            fin: if paged { vec![0; n] } else { Vec::new() },
            n_dec: 0,
            n_dec_measured: 0,
            dec_base_sum: 0,
            dec_start_sum: 0,
            kv_static: 0,
            admitted: Vec::new(),
            attn: cfg.step.prices_attention(),
            horizon: f64::INFINITY,
            timeline: Vec::new(),
            // An even spread over the arrivals' expected span; it doubles whenever the
            // samples would pass their cap, so any run ends with at most the cap.
            sample_every: {
                let span = cfg.num_requests as f64 / cfg.traffic.rate_rps;
                let every = span / CACHE_TIMELINE_POINTS as f64;
                if every.is_finite() && every > 0.0 && cfg.traffic.gate().is_none() {
                    every
                } else {
                    0.1
                }
            },
            next_sample: 0.0,
            t: 0.0,
            s: 0,
            out: Outcome {
                measured,
                replicas: 1,
                ttft: vec![f64::NAN; cap],
                tpot: vec![f64::NAN; cap],
                e2e: vec![f64::NAN; cap],
                // About four steps per request at typical loads; sized up front so
                // the pairs are not copied over and over as the vector grows.
                itl: Vec::with_capacity(if FULL { (n * 5).min(1 << 20) } else { 0 }),
                class_counts,
                slot_class,
                ..Outcome::default()
            },
        }
    }

    fn waiting(&self) -> usize {
        self.preempted.len() + self.by_priority.len() + (self.next_arr - self.next_admit)
    }

    /// Request `i`'s scheduling key under priority scheduling: (priority, request).
    fn priority_key(&self, i: u32) -> (u32, u32) {
        (
            self.cfg.classes[self.class[i as usize] as usize].priority,
            i,
        )
    }

    fn running(&self) -> u64 {
        self.n_dec + self.pre.len() as u64
    }

    /// Decode steps a sequence with `left` tokens still to produce (after its first) needs.
    fn decode_steps(&self, left: u32, e: f64) -> u64 {
        if e == 1.0 {
            left as u64
        } else {
            libm::ceil(left as f64 / e) as u64
        }
    }

    /// Context of the decoders before the next step [tokens].
    fn ctx(&self, e: f64) -> f64 {
        let grown = self.n_dec * self.s - self.dec_start_sum;
        // Signed conversions: one instruction each, unlike u64 -> f64 on x86-64.
        self.dec_base_sum as i64 as f64 + e * grown as i64 as f64
    }

    /// KV tokens in use (paged policy) [tokens].
    fn kv_used(&self, e: f64) -> f64 {
        let grown = self.n_dec * self.s - self.dec_start_sum;
        self.kv_static as i64 as f64 + e * grown as i64 as f64
    }

    /// KV tokens in use once the next step's decoders have grown (paged policy) [tokens]:
    /// what preemption, admission and carrying on a stretch check against the capacity.
    /// Without a prefix cache, all of it; with one, the running requests' own tokens.
    fn kv_after_next_step(&self, e: f64) -> f64 {
        self.kv_used(e) + self.n_dec as f64 * e
    }

    /// Tokens the prefix cache holds, 0 without one.
    fn cache_tokens(&self) -> f64 {
        self.cache
            .as_ref()
            .map_or(0.0, |c| c.tokens() as i64 as f64)
    }

    /// Tokens the prefix cache must keep (held by running requests or pinned), 0
    /// without one.
    fn cache_held(&self) -> f64 {
        self.cache.as_ref().map_or(0.0, |c| c.held() as i64 as f64)
    }

    /// Paged policy with a prefix cache: evicts cached tokens until the next step's
    /// memory fits (the cache gives up only what no running request holds).
    fn evict_to_fit(&mut self, e: f64) {
        let need = self.kv_after_next_step(e) + self.cache_tokens() - self.cfg.kv_capacity_tokens;
        if need > 0.0 {
            if let Some(c) = &mut self.cache {
                c.evict(libm::ceil(need) as u64);
            }
        }
    }

    /// A request ended at `t` (finished or refused): with a client gate, its slot
    /// releases the next request. O(1).
    fn release_next(&mut self) {
        let k = self.next_release;
        if k < self.arrival.len() {
            let at = self.t + self.think;
            let b = self.base[k];
            self.arrival[k] = if b > at { b } else { at };
            self.next_release = k + 1;
        }
    }

    fn absorb_arrivals(&mut self) {
        let n = self.arrival.len();
        while self.next_arr < n && self.arrival[self.next_arr] <= self.t {
            self.next_arr += 1;
        }
    }

    fn head(&mut self) -> Option<u32> {
        if self.prio {
            while self.next_admit < self.next_arr {
                let key = self.priority_key(self.next_admit as u32);
                self.by_priority.push(Reverse(key));
                self.next_admit += 1;
            }
            return self.by_priority.peek().map(|r| r.0 .1);
        }
        if let Some(&id) = self.preempted.front() {
            Some(id)
        } else if self.next_admit < self.next_arr {
            Some(self.next_admit as u32)
        } else {
            None
        }
    }

    fn pop_head(&mut self) {
        if self.prio {
            self.by_priority.pop();
            return;
        }
        if self.preempted.pop_front().is_none() {
            self.next_admit += 1;
        }
    }

    /// Admits waiting requests FCFS while slots and KV memory allow.
    fn admit(&mut self, e: f64) {
        let max = self.cfg.max_num_seqs as u64;
        let cap = self.cfg.kv_capacity_tokens;
        while self.running() < max {
            let Some(id) = self.head() else { break };
            let i = id as usize;
            // The cached prefix it would find, and the cache memory it would newly hold.
            let (hit, unheld) = match (&self.cache, &self.sharing) {
                (Some(c), Some(s)) => {
                    s.full_path(i, self.ctx_base[i], &mut self.scratch);
                    (
                        c.lookup(&self.scratch, self.ctx_base[i]),
                        c.unheld_in(&self.scratch),
                    )
                }
                _ => (0, 0),
            };
            let fits = match self.cfg.kv_policy {
                KvPolicy::None => true,
                KvPolicy::Reserve => (self.kv_static + self.reserve[i] as u64) as f64 <= cap,
                KvPolicy::Paged if self.cache.is_some() => {
                    self.kv_after_next_step(e)
                        + self.cache_held()
                        + unheld as f64
                        + (self.ctx_base[i] - hit) as f64
                        <= cap
                }
                KvPolicy::Paged => self.kv_after_next_step(e) + self.ctx_base[i] as f64 <= cap,
            };
            if !fits {
                if self.running() == 0 {
                    // It can never fit: refuse it (a miss) rather than wait forever.
                    self.pop_head();
                    self.state[i] = State::Gone;
                    self.out.rejected += 1;
                    // The refusal frees the client's slot; a request it releases at `t`
                    // is an arrival at `t` and may be admitted in this same pass.
                    self.release_next();
                    self.absorb_arrivals();
                    continue;
                }
                break;
            }
            self.pop_head();
            self.state[i] = State::Prefill;
            if let (Some(c), Some(s)) = (&mut self.cache, &self.sharing) {
                s.full_path(i, self.ctx_base[i], &mut self.scratch);
                c.admit(&self.scratch, hit, self.ctx_base[i]);
                self.prefill_need[i] = self.ctx_base[i] - hit;
            }
            match self.cfg.kv_policy {
                KvPolicy::None => {}
                KvPolicy::Reserve => self.kv_static += self.reserve[i] as u64,
                KvPolicy::Paged => {
                    if self.cache.is_some() {
                        self.private[i] = self.ctx_base[i] - hit;
                        self.kv_static += self.private[i] as u64;
                        self.evict_to_fit(e);
                    } else {
                        self.kv_static += self.ctx_base[i] as u64;
                    }
                    self.epoch[i] = self.epoch[i].wrapping_add(1);
                    self.admitted.push((id, self.epoch[i]));
                }
            }
            self.pre.push_back(Prefilling {
                id,
                remaining: self.prefill_need[i],
            });
        }
    }

    /// Paged policy: preempts the newest running sequences until the next step's decode
    /// growth fits in KV memory.
    fn make_room(&mut self, e: f64) {
        let cap = self.cfg.kv_capacity_tokens;
        while self.running() > 0 && self.kv_after_next_step(e) + self.cache_held() > cap {
            let Some((id, ep)) = self.victim() else {
                break;
            };
            let i = id as usize;
            if self.epoch[i] != ep || !matches!(self.state[i], State::Prefill | State::Decode) {
                continue;
            }
            let generated = if self.state[i] == State::Prefill {
                self.pre.remove_id(id);
                0
            } else {
                let start = self.dec_start[i];
                self.unlink(id);
                self.n_dec -= 1;
                if id >= self.warmup {
                    self.n_dec_measured -= 1;
                }
                self.dec_base_sum -= self.ctx_base[i] as u64;
                self.dec_start_sum -= start;
                let done = libm::floor(e * (self.s - start) as f64) as u32;
                (1 + done).min(self.out_left[i] - 1)
            };
            if self.cache.is_some() {
                self.kv_static -= self.private[i] as u64;
                self.private[i] = 0;
                if let (Some(c), Some(s)) = (&mut self.cache, &self.sharing) {
                    // What it computed stays cached (its own segment grows by the tokens
                    // it generated) for its readmission, unless evicted first.
                    s.full_path(i, self.ctx_base[i], &mut self.scratch);
                    if self.state[i] == State::Decode {
                        let own = self.scratch[self.scratch.len() - 1];
                        c.extend(own.0, own.1.saturating_add(generated));
                    }
                    c.release(&self.scratch);
                }
            } else {
                self.kv_static -= self.ctx_base[i] as u64;
            }
            // Recompute: prompt and generated tokens are prefilled again on readmission
            // (less what the prefix cache then holds of them).
            self.ctx_base[i] += generated;
            self.prefill_need[i] = self.ctx_base[i];
            self.out_left[i] -= generated;
            self.state[i] = State::Waiting;
            if self.prio {
                let key = self.priority_key(id);
                self.by_priority.push(Reverse(key));
            } else {
                self.preempted.push_front(id);
            }
            self.out.preemptions += 1;
        }
        if self.cache.is_some() {
            self.evict_to_fit(e);
        }
    }

    /// The next admission (request, epoch) to preempt: the newest, or under priority
    /// scheduling the running sequence of the lowest priority, the latest to arrive of
    /// them. Under priority scheduling the entries of sequences no longer running are
    /// dropped on the way.
    fn victim(&mut self) -> Option<(u32, u32)> {
        if !self.prio {
            return self.admitted.pop();
        }
        let state = &self.state;
        let epoch = &self.epoch;
        self.admitted.retain(|&(id, ep)| {
            let i = id as usize;
            epoch[i] == ep && matches!(state[i], State::Prefill | State::Decode)
        });
        let pick =
            (0..self.admitted.len()).max_by_key(|&k| self.priority_key(self.admitted[k].0))?;
        Some(self.admitted.remove(pick))
    }

    /// A request's prompt is computed: the prefix cache takes the shared part of it (held
    /// by the request until it ends), which no longer counts as the request's own.
    fn fill_cache(&mut self, i: usize) {
        if let (Some(c), Some(s)) = (&mut self.cache, &self.sharing) {
            s.full_path(i, self.ctx_base[i], &mut self.scratch);
            let moved = c.fill(&self.scratch);
            if !self.private.is_empty() {
                let moved = moved.min(self.private[i]);
                self.private[i] -= moved;
                self.kv_static -= moved as u64;
            }
        }
    }

    /// A request with a prefix path ends (finishes): its own tokens are freed (paged
    /// policy) and it will let go of its path once the step's ends are all known
    /// ([`Engine::flush_leaving`]).
    fn leave_cache(&mut self, i: usize) {
        if !self.private.is_empty() {
            self.kv_static -= self.private[i] as u64;
            self.private[i] = 0;
        }
        self.leaving.push(i as u32);
    }

    /// The requests that ended in this step let go of their paths, in request order (the
    /// order decides which segment eviction takes first); when replies are cached, each
    /// conversation segment first grows by the reply its request wrote.
    fn flush_leaving(&mut self) {
        if self.leaving.is_empty() {
            return;
        }
        self.leaving.sort_unstable();
        if let (Some(c), Some(s)) = (&mut self.cache, &self.sharing) {
            for &id in &self.leaving {
                let i = id as usize;
                // Its reply stays cached: in its conversation when the next turn resends
                // it (a session's segment), else in its own segment.
                s.full_path(i, self.ctx_base[i], &mut self.scratch);
                let own = self.scratch[self.scratch.len() - 1];
                let path = s.path(i);
                match path.last() {
                    Some(&(seg, used)) if s.replies_cached && seg >= s.sessions_from => {
                        c.extend(seg, used.saturating_add(self.out_total[i]));
                    }
                    _ => {
                        c.extend(own.0, own.1.saturating_add(self.out_left[i]));
                    }
                }
                c.release(&self.scratch);
            }
        }
        self.leaving.clear();
    }

    #[inline(always)]
    fn finish(&mut self, id: u32) {
        let i = id as usize;
        self.state[i] = State::Gone;
        self.release_next();
        self.out.output_tokens += self.out_total[i] as u64;
        if self.cfg.kv_policy == KvPolicy::Reserve {
            self.kv_static -= self.reserve[i] as u64;
        }
        if id < self.warmup {
            return;
        }
        let first = self.first[i];
        let arrival = self.arrival[i];
        // The frontend time lies outside the engine: it delays the request on its way in
        // and adds to what the client waits for the first token and for the last.
        let frontend = self.cfg.step.frontend_s;
        let ttft = (first - arrival) + frontend;
        let tpot = (self.t - first) / self.out_total[i].saturating_sub(1).max(1) as f64;
        let e2e = (self.t - arrival) + frontend;
        self.out.finished_measured += 1;
        if let Some(&c) = self.class.get(i) {
            let slo = &self.cfg.classes[c as usize].slo;
            let each = slo.meets_each(ttft, tpot, e2e);
            let count = &mut self.out.class_counts[c as usize];
            count.finished += 1;
            count.hits += (each[0] && each[1] && each[2]) as u32;
            for (h, m) in count.hits_each.iter_mut().zip(each) {
                *h += m as u32;
            }
        }
        let each = self.cfg.slo.meets_each(ttft, tpot, e2e);
        self.out.hits += (each[0] && each[1] && each[2]) as u32;
        for (h, m) in self.out.hits_each.iter_mut().zip(each) {
            *h += m as u32;
        }
        if FULL {
            // In request order, the order the summaries sum their means in.
            let k = (id - self.warmup) as usize;
            self.out.ttft[k] = ttft;
            self.out.tpot[k] = tpot;
            self.out.e2e[k] = e2e;
        }
    }

    /// Puts decoder `id`, finishing in step `f`, on the timing wheel.
    fn link(&mut self, id: u32, f: u64) {
        let slot = (f & self.mask) as usize;
        let head = self.wheel[slot];
        self.next[id as usize] = head;
        if !self.prev.is_empty() {
            self.prev[id as usize] = NIL;
            self.fin[id as usize] = f;
            if head != NIL {
                self.prev[head as usize] = id;
            }
        }
        self.wheel[slot] = id;
    }

    /// Takes decoder `id` off the wheel (paged policy only).
    fn unlink(&mut self, id: u32) {
        let i = id as usize;
        let (p, nx) = (self.prev[i], self.next[i]);
        if p == NIL {
            self.wheel[(self.fin[i] & self.mask) as usize] = nx;
        } else {
            self.next[p as usize] = nx;
        }
        if nx != NIL {
            self.prev[nx as usize] = p;
        }
    }

    /// True when some decoder's last token comes in step `s`.
    fn finishing_now(&self) -> bool {
        self.wheel[(self.s & self.mask) as usize] != NIL
    }

    /// Removes the decoders whose last token was produced in step `s`.
    #[inline(always)]
    fn pop_finished(&mut self) {
        let slot = (self.s & self.mask) as usize;
        let mut id = std::mem::replace(&mut self.wheel[slot], NIL);
        while id != NIL {
            let i = id as usize;
            let nx = self.next[i];
            self.n_dec -= 1;
            if id >= self.warmup {
                self.n_dec_measured -= 1;
            }
            self.dec_base_sum -= self.ctx_base[i] as u64;
            self.dec_start_sum -= self.dec_start[i];
            if self.cache.is_some() {
                self.leave_cache(i);
            } else if self.cfg.kv_policy == KvPolicy::Paged {
                self.kv_static -= self.ctx_base[i] as u64;
            }
            self.finish(id);
            id = nx;
        }
    }

    /// Plans a stretch from the current state, if the next steps are all alike: pure
    /// decode, decoders filling the whole budget, or the front prompt taking the rest of
    /// the budget without completing. None when a prompt completes in the next step.
    fn stretch(&mut self, budget: i64, compute_per_decoder: u64, e: f64) -> Option<Stretch> {
        let cfg = self.cfg;
        let paged = cfg.kv_policy == KvPolicy::Paged;
        let left = budget - self.n_dec as i64;
        let (chunk, chunk_steps, arrivals_matter) = match self.pre.front_mut() {
            // Pure decode: an admitted arrival would prefill at once.
            None => (0, u64::MAX, true),
            // Decoders fill the budget: prefill waits, and so would an arrival (but under
            // priority scheduling, which of the waiting requests a slot takes depends on
            // when it is filled).
            Some(_) if left <= 0 => (0, u64::MAX, FULL || paged || self.prio),
            // The front prompt takes the whole rest of the budget without completing;
            // an arrival admitted meanwhile would get no tokens either.
            Some(p) if cfg.chunked_prefill && p.remaining as i64 > left => (
                left as u64,
                (p.remaining as u64 - 1) / left as u64,
                FULL || paged || self.prio,
            ),
            Some(_) => return None,
        };
        let growth = self.n_dec as f64 * e;
        let room_steps = if paged && growth > 0.0 {
            // With a prefix cache, its evictable tokens are freed only at a step's start,
            // so a stretch ends where they would have to be.
            let free = cfg.kv_capacity_tokens - self.kv_used(e) - self.cache_tokens();
            // Whole steps of growth that still fit, at least one. Truncation is the floor
            // wherever the count is 1 or more, and below that (NaN included) both give 1.
            // A signed conversion is one instruction on x86-64, where `floor` (without
            // SSE4.1) and `as u64` are a call and branches; a count that saturates it lies
            // far beyond the step cap the stretch's stop is clamped to. A comparison instead
            // of `max`, which wasm builds call as a function.
            let steps = (free / growth) as i64;
            if steps >= 1 {
                steps as u64
            } else {
                1
            }
        } else {
            u64::MAX
        };
        let done = match self.pre.front_mut() {
            Some(p) if chunk > 0 => {
                let id = p.id as usize;
                (self.ctx_base[id] - p.remaining) as f64
            }
            _ => 0.0,
        };
        Some(Stretch {
            n_seqs: self.n_dec + (chunk > 0) as u64,
            done,
            n_tok: self.n_dec * compute_per_decoder + chunk,
            ctx_base: self.dec_base_sum as i64 as f64,
            grown: self.n_dec * self.s - self.dec_start_sum,
            n_dec: self.n_dec,
            e,
            chunk,
            stop: self
                .s
                .saturating_add(room_steps.min(chunk_steps))
                .min(cfg.max_steps),
            can_admit: arrivals_matter && self.running() < cfg.max_num_seqs as u64,
        })
    }

    /// Books one step of `dt` seconds.
    fn account(&mut self, dt: f64) {
        self.t += dt;
        self.s += 1;
        if FULL {
            let q = self.waiting() as u32;
            self.out.queue_area += q as f64 * dt;
            self.out.running_area += self.running() as f64 * dt;
            self.out.peak_queue = self.out.peak_queue.max(q);
            if self.n_dec_measured > 0 {
                let w = self.n_dec_measured as u64;
                match self.out.itl.last_mut() {
                    Some(last) if last.0 == dt => last.1 += w,
                    _ => self.out.itl.push((dt, w)),
                }
            }
        }
    }

    /// Runs the steps of stretch `st` until it must end: at its stop step, when a
    /// decoder finishes, or (if arrivals matter) when a request arrives or waits.
    ///
    /// Each step is booked exactly as [`Engine::account`] books it, in the same order of
    /// floating-point operations; the clock, the step count, the arrival cursor and the
    /// full report's accumulators live in locals meanwhile, and the queue length and
    /// running count (which only arrivals change here) are kept at hand rather than
    /// recomputed every step.
    #[inline(always)]
    fn run_stretch(&mut self, st: &Stretch, timer: &StepTimer) {
        let n = self.arrival.len();
        let attn = self.attn && st.chunk > 0;
        let chunk = st.chunk as f64;
        let mut done = st.done;
        let weights = timer.weights(st.n_tok, st.n_seqs);
        let (share, extra) = timer.shares(st.n_tok, st.n_seqs);
        let mask = self.mask;
        // Under priority scheduling the waiting requests not in the arrival range.
        let preempted = self.preempted.len() + self.by_priority.len();
        let next_admit = self.next_admit;
        let running = self.running() as f64;
        let itl_weight = self.n_dec_measured as u64;
        let mut t = self.t;
        let mut s = self.s;
        let mut next_arr = self.next_arr;
        let mut grown = st.grown;
        let mut queue_area = self.out.queue_area;
        let mut running_area = self.out.running_area;
        let mut peak = self.out.peak_queue;
        let mut q = (preempted + next_arr - next_admit) as u32;
        loop {
            // The context as [`Engine::ctx`] computes it, from the integer step count:
            // adding `n_dec × e` each step would drift from it when `e` is fractional.
            let ctx = st.ctx_base + st.e * grown as i64 as f64;
            let attn_flops = if attn {
                let f = self.cfg.step.prefill_attn_flops(chunk, done);
                done += chunk;
                f
            } else {
                0.0
            };
            let dt = timer.time_shared(
                weights,
                st.n_tok,
                ctx,
                st.n_seqs,
                st.chunk > 0,
                attn_flops,
                share,
                extra,
            );
            t += dt;
            s += 1;
            if FULL {
                queue_area += q as f64 * dt;
                running_area += running * dt;
                peak = peak.max(q);
                if itl_weight > 0 {
                    match self.out.itl.last_mut() {
                        Some(last) if last.0 == dt => last.1 += itl_weight,
                        _ => self.out.itl.push((dt, itl_weight)),
                    }
                }
            }
            grown += st.n_dec;
            if s >= st.stop
                || self.wheel[(s & mask) as usize] != NIL
                || (ROUTED && t >= self.horizon)
            {
                break;
            }
            if st.can_admit || FULL {
                let before = next_arr;
                while next_arr < n && self.arrival[next_arr] <= t {
                    next_arr += 1;
                }
                q = (preempted + next_arr - next_admit) as u32;
                if st.can_admit && (next_arr != before || q > 0) {
                    break;
                }
            }
        }
        self.t = t;
        self.s = s;
        self.next_arr = next_arr;
        if FULL {
            self.out.queue_area = queue_area;
            self.out.running_area = running_area;
            self.out.peak_queue = peak;
        }
    }

    fn run(mut self) -> Outcome {
        self.advance(f64::INFINITY);
        self.finalize()
    }

    /// Runs the replica: to its end, or (a routed replica) to the first step boundary at
    /// or after `horizon`, or until it is idle with no request known to come.
    pub(crate) fn advance(&mut self, horizon: f64) {
        self.horizon = horizon;
        let cfg = self.cfg;
        let timer = StepTimer::new(cfg);
        let e = cfg.tokens_per_decode_step();
        let compute_per_decoder = cfg.spec_draft_tokens as u64 + 1;
        // With chunked prefill off, a whole prompt must fit one step's budget: vLLM then
        // requires the budget to cover the longest prompt, so it is raised to the cap.
        let budget = if cfg.chunked_prefill {
            cfg.max_num_batched_tokens as i64
        } else {
            cfg.max_num_batched_tokens.max(cfg.traffic.prompt_cap()) as i64
        };
        let chunked = cfg.chunked_prefill;
        let paged = cfg.kv_policy == KvPolicy::Paged;
        let max_seqs = cfg.max_num_seqs as u64;
        let n = self.arrival.len();

        loop {
            self.absorb_arrivals();
            if FULL && self.t >= self.next_sample && self.cache.is_some() {
                self.sample(e);
            }
            if ROUTED && self.t >= self.horizon {
                break;
            }
            if self.running() == 0 && self.waiting() == 0 {
                if self.next_arr >= n {
                    break;
                }
                let next = self.arrival[self.next_arr];
                debug_assert!(
                    next.is_finite(),
                    "idle with request {} unreleased",
                    self.next_arr
                );
                if next == f64::INFINITY {
                    // Unreachable: an idle replica has ended every released request,
                    // so the gate has released the next one (see the module docs).
                    break;
                }
                self.t = next;
                continue;
            }
            if self.s >= cfg.max_steps {
                self.out.truncated = true;
                break;
            }
            if paged {
                self.make_room(e);
            }
            self.admit(e);
            self.out.peak_running = self.out.peak_running.max(self.running());
            if self.running() == 0 {
                continue; // everything waiting was refused
            }

            // A stretch: steps in which nothing changes but the clock, the decoders'
            // context and the front prompt's progress by a partial chunk; see `stretch`.
            if let Some(mut st) = self.stretch(budget, compute_per_decoder, e) {
                loop {
                    let s0 = self.s;
                    self.run_stretch(&st, &timer);
                    if let Some(p) = self.pre.front_mut() {
                        p.remaining -= (st.chunk * (self.s - s0)) as u32;
                    }
                    if !self.finishing_now() {
                        break;
                    }
                    // Decoders finish: carry on with new counts, unless the step cap is
                    // reached, a slot now opens for a waiting request, the next step's
                    // growth no longer fits (paged policy), or a prompt would complete.
                    // Otherwise the outer loop's `make_room` and `admit` would do nothing.
                    self.pop_finished();
                    self.flush_leaving();
                    self.absorb_arrivals();
                    if self.s >= cfg.max_steps
                        || (ROUTED && self.t >= self.horizon)
                        || self.running() == 0
                        || (self.running() < max_seqs && self.waiting() > 0)
                        || (paged
                            && self.kv_after_next_step(e) + self.cache_tokens()
                                > cfg.kv_capacity_tokens)
                    {
                        break;
                    }
                    match self.stretch(budget, compute_per_decoder, e) {
                        Some(next) => st = next,
                        None => break,
                    }
                }
                continue;
            }

            // Mixed step: decoders plus prefill chunks in admission order.
            let mut n_tok = self.n_dec * compute_per_decoder;
            let ctx = self.ctx(e);
            let mut left = budget - self.n_dec as i64;
            let mut completed = 0usize;
            let mut chunks = 0u64;
            let mut attn_flops = 0.0;
            let attn = self.attn;
            for p in self.pre.live() {
                if left <= 0 {
                    break;
                }
                let rem = p.remaining as i64;
                let c = if chunked { rem.min(left) } else { rem };
                if attn {
                    let done = (self.ctx_base[p.id as usize] - p.remaining) as f64;
                    attn_flops += cfg.step.prefill_attn_flops(c as f64, done);
                }
                n_tok += c as u64;
                left -= c;
                chunks += 1;
                if c == rem {
                    completed += 1;
                } else {
                    p.remaining -= c as u32;
                }
            }
            let dt = timer.time(n_tok, ctx, self.n_dec + chunks, chunks > 0, attn_flops);
            self.account(dt);
            for _ in 0..completed {
                let Some(p) = self.pre.pop_front() else { break };
                let i = p.id as usize;
                if self.first[i].is_nan() {
                    self.first[i] = self.t;
                }
                if self.cache.is_some() {
                    self.fill_cache(i);
                }
                if self.out_left[i] <= 1 {
                    if self.cache.is_some() {
                        self.leave_cache(i);
                    } else if paged {
                        self.kv_static -= self.ctx_base[i] as u64;
                    }
                    self.finish(p.id);
                    continue;
                }
                let f = self.s + self.decode_steps(self.out_left[i] - 1, e);
                self.state[i] = State::Decode;
                self.n_dec += 1;
                if p.id >= self.warmup {
                    self.n_dec_measured += 1;
                }
                self.dec_base_sum += self.ctx_base[i] as u64;
                self.dec_start_sum += self.s;
                self.dec_start[i] = self.s;
                self.link(p.id, f);
            }
            self.pop_finished();
            self.flush_leaving();
        }
    }

    /// Samples the KV memory and the prefix cache for the timeline; halves the samples
    /// (every other one kept) and doubles the time between them when they reach the cap.
    fn sample(&mut self, e: f64) {
        let (Some(c), Some(sh)) = (&self.cache, &self.sharing) else {
            return;
        };
        let (looked, hit) = c.lookups();
        // The shared segments come before the requests' own; what the cache holds of
        // a request's own segment is its own memory too.
        let shared = c.held_in(0..sh.own_base);
        let own = if self.cfg.kv_policy == KvPolicy::Paged {
            self.kv_used(e)
        } else {
            self.ctx(e)
        };
        let s = CacheSample {
            t_s: self.t,
            private_tokens: own + (c.held() - shared) as f64,
            shared_tokens: shared as f64,
            idle_tokens: c.evictable() as f64,
            hit_rate: f64::NAN,
        };
        self.timeline.push((s, looked, hit));
        if self.timeline.len() >= CACHE_TIMELINE_POINTS {
            let mut i = 0;
            self.timeline.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            self.sample_every *= 2.0;
        }
        self.next_sample = self.t + self.sample_every;
    }

    /// What the run produced, once it has run ([`Engine::advance`]).
    pub(crate) fn finalize(mut self) -> Outcome {
        // Each sample's hit rate covers the lookups since the one before.
        let mut before = (0u64, 0u64);
        self.out.cache_timeline = self
            .timeline
            .iter()
            .map(|&(mut s, looked, hit)| {
                if looked > before.0 {
                    s.hit_rate = (hit - before.1) as f64 / (looked - before.0) as f64;
                }
                before = (looked, hit);
                s
            })
            .collect();
        self.out.steps = self.s;
        self.out.t_end = self.t;
        if let Some(c) = &self.cache {
            self.out.prefix_hit_rate = c.hit_rate();
            self.out.prefix_evicted_tokens = c.evicted();
            self.out.prefix_lookups = c.lookups();
        }
        self.out.window_start = self
            .arrival
            .get(self.warmup as usize)
            .copied()
            .unwrap_or(0.0);
        self.out
    }
}

/// The step time as the engine evaluates it, with reciprocals precomputed; the same
/// formula as [`crate::step::StepModel::step_time_full_s`] (to rounding). With the
/// per-sequence time and prefill attention at 0 it gives the articles' roofline.
#[derive(Debug, Clone)]
pub struct StepTimer {
    fixed: f64,
    seq: f64,
    mixed: f64,
    inv_bw: f64,
    w_bytes: f64,
    expert_bytes: f64,
    expert_miss: f64,
    /// The two halves' chances with skewed routing ([`crate::step::StepModel::expert_misses`]).
    expert_misses: Option<(f64, f64)>,
    kappa: f64,
    s_per_tok: f64,
    comm_per_tok: f64,
    inv_flops: f64,
    /// The step model, for its micro-batches under pipeline parallelism and its ranks
    /// under expert parallelism.
    split: Option<Box<crate::step::StepModel>>,
}

impl StepTimer {
    /// The timer of `cfg`'s step model.
    pub fn new(cfg: &SimConfig) -> StepTimer {
        let sm = &cfg.step;
        let gpus = sm.tp_degree.max(1) as f64;
        StepTimer {
            fixed: sm.fixed_time_s(),
            seq: sm.seq_overhead_s,
            mixed: sm.prefill_overhead_s,
            inv_bw: 1.0 / (gpus * sm.mem_bandwidth_bytes_per_s),
            w_bytes: sm.weight_bytes,
            expert_bytes: sm.expert_weight_bytes,
            expert_miss: sm.expert_miss_per_token,
            expert_misses: sm.expert_misses(),
            kappa: sm.kv_read_bytes_per_token(),
            s_per_tok: 2.0 * sm.params / (gpus * sm.compute_flops_per_s),
            comm_per_tok: sm.tp_comm_s_per_token,
            inv_flops: 1.0 / (gpus * sm.compute_flops_per_s),
            split: (sm.pp_degree > 1 || sm.ep_degree > 1).then(|| Box::new(*sm)),
        }
    }

    /// Weight bytes a step of `n_tok` tokens over `n_seqs` sequences reads (every routed
    /// expert some token picks; under pipeline parallelism, of one micro-batch's tokens;
    /// under expert parallelism, one rank's share).
    #[inline(always)]
    pub fn weights(&self, n_tok: u64, n_seqs: u64) -> f64 {
        let n = n_tok as i64 as f64;
        if let Some(sm) = &self.split {
            return split_weights(sm, n, n_seqs);
        }
        crate::step::weights_read_of(
            self.w_bytes,
            self.expert_bytes,
            self.expert_miss,
            self.expert_misses,
            n,
        )
    }

    /// Seconds of a step of `n_tok` tokens, decoders holding `ctx` tokens of context,
    /// `n_seqs` sequences scheduled, prompt tokens among them or not (`prefill`) and
    /// `attn_flops` of prefill attention.
    #[inline(always)]
    pub fn time(&self, n_tok: u64, ctx: f64, n_seqs: u64, prefill: bool, attn_flops: f64) -> f64 {
        self.time_with(
            self.weights(n_tok, n_seqs),
            n_tok,
            ctx,
            n_seqs,
            prefill,
            attn_flops,
        )
    }

    /// [`StepTimer::time`] with the weight bytes `w` of [`StepTimer::weights`] given.
    #[inline(always)]
    pub fn time_with(
        &self,
        w: f64,
        n_tok: u64,
        ctx: f64,
        n_seqs: u64,
        prefill: bool,
        attn_flops: f64,
    ) -> f64 {
        let (k, extra) = self.shares(n_tok, n_seqs);
        self.time_shared(w, n_tok, ctx, n_seqs, prefill, attn_flops, k, extra)
    }

    /// The share `k` of a step's tokens, context and attention that sets its time, and
    /// the time added to it ([`StepModel::split_shares`](crate::step::StepModel::split_shares)).
    /// Constant while the sequences are, so a stretch of steps finds it once.
    #[inline(always)]
    pub fn shares(&self, n_tok: u64, n_seqs: u64) -> (f64, f64) {
        match &self.split {
            None => (1.0, 0.0),
            Some(sm) => split_shares(sm, n_tok, n_seqs),
        }
    }

    /// [`StepTimer::time_with`] with the [`StepTimer::shares`] given. Without pipeline or
    /// expert parallelism `k` is 1 and `extra` 0, which leave every bit of the time as
    /// it was.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub fn time_shared(
        &self,
        w: f64,
        n_tok: u64,
        ctx: f64,
        n_seqs: u64,
        prefill: bool,
        attn_flops: f64,
        k: f64,
        extra: f64,
    ) -> f64 {
        let n = n_tok as i64 as f64;
        self.round(w, n * k, ctx * k, n_seqs, prefill, attn_flops * k) + extra
    }

    /// The step time without pipeline stages, `n` tokens as a real number.
    #[inline(always)]
    fn round(&self, w: f64, n: f64, ctx: f64, n_seqs: u64, prefill: bool, attn_flops: f64) -> f64 {
        let mem = (w + self.kappa * ctx) * self.inv_bw;
        let comp = n * self.s_per_tok;
        let roof = if mem >= comp { mem } else { comp };
        let mixed = if prefill { self.mixed } else { 0.0 };
        ((((self.fixed + self.seq * n_seqs as i64 as f64) + mixed) + n * self.comm_per_tok) + roof)
            + attn_flops * self.inv_flops
    }
}

/// [`StepTimer::weights`] under pipeline or expert parallelism
/// ([`StepModel::split_weights_read`](crate::step::StepModel::split_weights_read)): kept
/// out of line, so that the step loop of a replica without them stays as tight as it was.
#[cold]
#[inline(never)]
fn split_weights(sm: &crate::step::StepModel, n: f64, n_seqs: u64) -> f64 {
    sm.split_weights_read(n, n_seqs as i64 as f64)
}

/// [`StepTimer::shares`] under pipeline or expert parallelism
/// ([`StepModel::split_shares`](crate::step::StepModel::split_shares)), out of line as
/// [`split_weights`] is.
#[cold]
#[inline(never)]
fn split_shares(sm: &crate::step::StepModel, n_tok: u64, n_seqs: u64) -> (f64, f64) {
    sm.split_shares(n_tok as i64 as f64, n_seqs as i64 as f64)
}

/// Runs one replica (`cfg.fleet` is not read: the `run` module sends a fleet to the
/// `fleet` module, whose replicas are engines).
pub(crate) fn run_one<const FULL: bool>(cfg: &SimConfig, seed: u64) -> Outcome {
    Engine::<FULL, false>::new(cfg, seed).run()
}
