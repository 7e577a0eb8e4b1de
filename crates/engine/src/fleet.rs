//! A fleet: identical replicas behind a router, simulated together, so that where a
//! request lands decides whether its prefix is cached.
//!
//! ```text
//!   one workload at N × the rate ──▶ router ──▶ replica 1 (an engine, its own prefix cache)
//!   (N × the sessions, the same     │   at each arrival, every replica is run up to it,
//!    shared prefixes)               │   the router reads their loads and caches, and the
//!                                   └─▶ replica N   request joins the one it picks
//! ```
//!
//! A replica is the single-replica engine, stopped at the first step boundary at or after
//! each arrival ([`crate::engine`]'s `advance`): the router sees each replica as it is
//! when the request can first be scheduled there (at most one step later than the
//! arrival). A replica's load is its requests: running and waiting.
//!
//! The routers:
//! - **round robin**: the replicas in turn;
//! - **random**: a replica picked at random, as a Kubernetes Service spreads connections;
//! - **least loaded**: the replica with the fewest requests;
//! - **session affinity**: every turn of a session to one replica, picked by a hash of
//!   the session (as a session cookie or client-address affinity does); requests
//!   outside any session in turn;
//! - **prefix aware**: llm-d's precise prefix-cache scheduling profile, reading each
//!   replica's cache as it is (as the engines' KV events report it): each replica
//!   scores [`PREFIX_WEIGHT`] × the share of the prompt its cache holds, plus
//!   [`KV_WEIGHT`] × the share of its KV memory free, plus [`QUEUE_WEIGHT`] × its queue
//!   score (1 for the shortest queue, 0 for the longest, linear between), and the
//!   highest score wins.
//!
//! Ties go to the less loaded replica, then to the first after the last one picked, so
//! no replica is favoured.
//!
//! Traffic with a client gate (a closed loop or a client cap) is not routed: its clients
//! would have to be shared by the replicas' ends in time order. `goodput_core::sim`
//! refuses it.

use crate::config::SimConfig;
use crate::engine::{Engine, Outcome};
pub use crate::kinds::{Fleet, FleetRouter};
use crate::rng::Rng;
use crate::traffic::{Sharing, Workload};

/// Prefix-aware routing: the weight of the share of the prompt a replica's cache holds
/// (llm-d's precise prefix-cache guide).
pub const PREFIX_WEIGHT: f64 = 2.0;
/// Prefix-aware routing: the weight of the share of a replica's KV memory that is free.
pub const KV_WEIGHT: f64 = 1.0;
/// Prefix-aware routing: the weight of a replica's queue score.
pub const QUEUE_WEIGHT: f64 = 1.0;

impl SimConfig {
    /// The whole fleet's workload: `replicas` times the rate, the requests, the warm-up
    /// and the sessions (the shared prefixes are the same prefixes fleet-wide).
    pub fn fleet_workload(&self) -> SimConfig {
        let k = self.fleet.replicas.max(1);
        let mut c = self.clone();
        c.traffic.rate_rps *= k as f64;
        for step in &mut c.traffic.rate_steps {
            step.rate_rps *= k as f64;
        }
        c.traffic.prefix.sessions = c.traffic.prefix.sessions.saturating_mul(k);
        c.num_requests = self.num_requests.saturating_mul(k);
        c.warmup_requests = self.warmup_requests.saturating_mul(k);
        if let Some(l) = &mut c.traffic.lead_in {
            l.requests = l.requests.saturating_mul(k);
        }
        c
    }
}

/// The router's state.
struct Routing {
    router: FleetRouter,
    /// The replica after the last one picked: where ties start.
    next: usize,
    /// The first session segment, and the first segment after the sessions.
    sessions: (u32, u32),
    /// The random router's draws.
    rng: Rng,
}

impl Routing {
    /// The replica with the largest `key`, ties to the first from `self.next` on.
    fn best<K: PartialOrd>(&self, n: usize, key: impl Fn(usize) -> K) -> usize {
        let mut best = self.next % n;
        let mut top = key(best);
        for j in 1..n {
            let r = (self.next + j) % n;
            let k = key(r);
            if k > top {
                best = r;
                top = k;
            }
        }
        best
    }

    /// The replica for a request with shared path `path` and a prompt of `prompt` tokens.
    fn pick<const FULL: bool>(
        &mut self,
        reps: &[Engine<'_, FULL, true>],
        path: &[(u32, u32)],
        prompt: u32,
    ) -> usize {
        let n = reps.len();
        let fewest = |r: usize| std::cmp::Reverse(reps[r].load());
        let r = match self.router {
            FleetRouter::RoundRobin => self.next % n,
            FleetRouter::Random => ((self.rng.next_f64() * n as f64) as usize).min(n - 1),
            FleetRouter::LeastLoaded => self.best(n, fewest),
            FleetRouter::SessionAffinity => {
                let (first, end) = self.sessions;
                match path.last() {
                    Some(&(s, _)) if (first..end).contains(&s) => {
                        (crate::rng::splitmix64(&mut (s as u64)) % n as u64) as usize
                    }
                    _ => self.next % n,
                }
            }
            FleetRouter::PrefixAware => {
                let queues: Vec<usize> = reps.iter().map(|e| e.queue()).collect();
                let lo = queues.iter().copied().min().unwrap_or(0);
                let hi = queues.iter().copied().max().unwrap_or(0);
                let score = |r: usize| {
                    let held = reps[r].cache().map_or(0, |c| c.lookup(path, prompt));
                    let queue = if hi > lo {
                        (hi - queues[r]) as f64 / (hi - lo) as f64
                    } else {
                        1.0
                    };
                    PREFIX_WEIGHT * held as f64 / prompt.max(1) as f64
                        + KV_WEIGHT * (1.0 - reps[r].kv_usage())
                        + QUEUE_WEIGHT * queue
                };
                self.best(n, |r| (score(r), fewest(r)))
            }
        };
        self.next = (r + 1) % n;
        r
    }
}

/// Mixed into the seed of the random router's draws.
const ROUTER_STREAM: u64 = 0x726f_7574_6572_0001;

/// Runs `cfg`'s fleet ([`SimConfig::fleet`], more than one replica); the outcome sums
/// the replicas' (latencies in the fleet's request order) and is reported per replica.
pub(crate) fn run<const FULL: bool>(cfg: &SimConfig, seed: u64) -> Outcome {
    let whole = cfg.fleet_workload();
    let n = whole.num_requests as usize;
    let warm = whole.warmup_requests as usize;
    let mut w = whole.traffic.generate_seeded(n, seed);
    let sharing = w.sharing.take();
    // Each replica's structure: the fleet's segments, no requests yet.
    let empty = sharing.as_ref().map(|s| Sharing {
        segments: s.segments,
        block_tokens: s.block_tokens,
        pinned: s.pinned.clone(),
        preloaded: s.preloaded.clone(),
        start: vec![0],
        items: Vec::new(),
        replies_cached: s.replies_cached,
        own_base: s.own_base,
        sessions_from: s.sessions_from,
    });
    let k = cfg.fleet.replicas.max(1) as usize;
    let mut reps: Vec<Engine<'_, FULL, true>> = (0..k)
        .map(|_| Engine::replica(cfg, empty.clone()))
        .collect();
    let sessions = sharing
        .as_ref()
        .map_or((0, 0), |s| (s.sessions_from, s.own_base));
    let mut routing = Routing {
        router: cfg.fleet.router,
        next: 0,
        sessions,
        // Its own stream: the workload's draws are the same under every router.
        rng: Rng::new(seed ^ ROUTER_STREAM),
    };
    let mut served: Vec<Vec<u32>> = vec![Vec::new(); k];
    for g in 0..n {
        let at = w.arrival_s[g];
        for e in reps.iter_mut() {
            e.advance(at);
        }
        let path = sharing.as_ref().map_or(&[][..], |s| s.path(g));
        let r = routing.pick(&reps, path, w.prompt_tokens[g]);
        reps[r].push(&w, g, path, g >= warm);
        served[r].push(g as u32);
    }
    let outs: Vec<Outcome> = reps
        .into_iter()
        .map(|mut e| {
            e.advance(f64::INFINITY);
            e.finalize()
        })
        .collect();
    merge::<FULL>(outs, &served, &w, warm)
}

/// The fleet's outcome from its replicas' (`served[r]`: the fleet's ids of replica r's
/// requests of workload `w`, in its order).
fn merge<const FULL: bool>(
    outs: Vec<Outcome>,
    served: &[Vec<u32>],
    w: &Workload,
    warm: usize,
) -> Outcome {
    let arrival = &w.arrival_s;
    let measured = arrival.len() - warm;
    let cap = if FULL { measured } else { 0 };
    let mut ttft = vec![f64::NAN; cap];
    let mut tpot = vec![f64::NAN; cap];
    let mut e2e = vec![f64::NAN; cap];
    let mut itl = Vec::new();
    let mut sum = Outcome {
        window_start: arrival.get(warm).copied().unwrap_or(0.0),
        replicas: outs.len() as u32,
        class_counts: outs.first().map_or(Vec::new(), |o| {
            vec![Default::default(); o.class_counts.len()]
        }),
        slot_class: if FULL && !w.class.is_empty() {
            w.class[warm..].to_vec()
        } else {
            Vec::new()
        },
        ..Outcome::default()
    };
    for (k, (mut o, ids)) in outs.into_iter().zip(served).enumerate() {
        if k == 0 {
            sum.cache_timeline = std::mem::take(&mut o.cache_timeline);
        }
        sum.hits += o.hits;
        for (s, h) in sum.hits_each.iter_mut().zip(o.hits_each) {
            *s += h;
        }
        sum.measured += o.measured;
        for (s, c) in sum.class_counts.iter_mut().zip(&o.class_counts) {
            s.add(c);
        }
        sum.finished_measured += o.finished_measured;
        sum.rejected += o.rejected;
        sum.preemptions += o.preemptions;
        sum.steps += o.steps;
        sum.t_end = sum.t_end.max(o.t_end);
        sum.truncated |= o.truncated;
        sum.output_tokens += o.output_tokens;
        sum.queue_area += o.queue_area;
        sum.running_area += o.running_area;
        sum.peak_queue = sum.peak_queue.max(o.peak_queue);
        sum.peak_running = sum.peak_running.max(o.peak_running);
        sum.prefix_evicted_tokens += o.prefix_evicted_tokens;
        sum.prefix_lookups.0 += o.prefix_lookups.0;
        sum.prefix_lookups.1 += o.prefix_lookups.1;
        if FULL {
            // The replica's measured requests are its last ones, in its order.
            let first = ids.len() - o.ttft.len();
            for (j, &g) in ids[first..].iter().enumerate() {
                let slot = g as usize - warm;
                ttft[slot] = o.ttft[j];
                tpot[slot] = o.tpot[j];
                e2e[slot] = o.e2e[j];
            }
            itl.extend_from_slice(&o.itl);
        }
    }
    let (looked, hit) = sum.prefix_lookups;
    if looked > 0 {
        sum.prefix_hit_rate = hit as f64 / looked as f64;
    }
    sum.ttft = ttft;
    sum.tpot = tpot;
    sum.e2e = e2e;
    sum.itl = itl;
    sum
}
