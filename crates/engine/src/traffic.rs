//! Synthetic and replayed request streams: arrival times, prompt and output lengths.
//!
//! Draw order is fixed (all gaps, then all prompt lengths, then all output lengths,
//! then prefix-cache hits, then the prefix structure's draws), so a seed names one
//! workload on every platform.

use crate::kinds::{Arrival, LengthDist, LengthSpec, TraceRow, TRACE_BLOCK_TOKENS};
use crate::rng::Rng;

/// Fully resolved traffic: the arrival process at one rate, the length laws, prefix caching.
#[derive(Debug, Clone, PartialEq)]
pub struct TrafficModel {
    /// Mean arrival rate [requests/s].
    pub rate_rps: f64,
    /// Arrival process.
    pub arrival: Arrival,
    /// Prompt lengths [tokens].
    pub prompt: LengthSpec,
    /// Output lengths [tokens]; `output.max` is the `max_tokens` cap.
    pub output: LengthSpec,
    /// Shared prefix that a cache hit skips [tokens].
    pub prefix_tokens: u32,
    /// Probability that a request's prefix is cached [0..1].
    pub prefix_hit_rate: f64,
    /// Replayed rows, sorted by arrival (used by `trace` arrivals or lengths).
    pub trace: Vec<TraceRow>,
    /// Client-side cap on requests in flight for an open-loop arrival (None = unbounded);
    /// ignored by [`Arrival::Closed`], whose cap is its `concurrency` [requests].
    pub max_concurrency: Option<u32>,
    /// A time-varying rate: piecewise-constant steps from time 0, after which the rate is
    /// `rate_rps` again. Empty (the usual case) means the constant `rate_rps`, drawn
    /// exactly as before. Used by Poisson, gamma and constant arrivals (see
    /// [`RateStep`]); trace and closed-loop arrivals ignore it.
    pub rate_steps: Vec<RateStep>,
    /// How prompts share prefixes that a prefix cache holds once: shared prefixes and
    /// multi-turn sessions ([`PrefixModel::NONE`]: none beyond the typed hit rate).
    pub prefix: PrefixModel,
    /// Traffic classes mixed into one stream (empty: one class, whose lengths are
    /// `prompt` and `output`). With classes, the arrivals are the stream above at
    /// `rate_rps`, the whole mix's rate; each request belongs to a class drawn by the
    /// classes' shares, and takes its lengths from that class's laws.
    pub classes: Vec<ClassDraw>,
    /// A lead-in before the measured requests (None, the usual case: every request
    /// arrives at `rate_rps`, drawn exactly as before). See [`LeadIn`].
    pub lead_in: Option<LeadIn>,
}

/// A lead-in: the first `requests` requests arrive at `rate_scale` times the rate, then
/// none arrives for `pause_s`, then the rest arrive at the rate, their own gaps
/// unchanged. A benchmark's warm-up is such a lead-in: it runs at a load the server
/// sustains (or as a run of its own), and the measured requests start once the server
/// has finished it, with the prefix cache as the warm-up left it. Applies to Poisson,
/// gamma and constant arrivals without rate steps, whose gaps scale with the rate;
/// trace, closed-loop and stepped arrivals ignore it.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LeadIn {
    /// Requests of the lead-in, the first in generated order [requests].
    pub requests: u32,
    /// The lead-in's rate over the run's (more than 0).
    pub rate_scale: f64,
    /// The pause between the lead-in's last arrival and the next request's own gap [s].
    pub pause_s: f64,
}

/// One traffic class's part of a mixed stream ([`TrafficModel::classes`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ClassDraw {
    /// Share of the requests that belong to the class [0..1]; the shares add up to 1.
    pub share: f64,
    /// The class's prompt lengths [tokens].
    pub prompt: LengthSpec,
    /// The class's output lengths; `output.max` is its `max_tokens` cap [tokens].
    pub output: LengthSpec,
    /// The class's own arrival process (Poisson, gamma or constant) at its share of the
    /// rate; `None`: the class's requests are picked from the one stream by share.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrival: Option<Arrival>,
    /// The class's cached prompt prefix: a hit skips this many tokens [tokens].
    #[serde(default)]
    pub prefix_tokens: u32,
    /// Probability that a request of the class finds its prefix cached [0..1].
    #[serde(default)]
    pub prefix_hit_rate: f64,
    /// Which prefix the class's hits hold: classes of one segment share one cached
    /// prefix (the plan's), a class with a prefix of its own has its own segment.
    #[serde(default)]
    pub prefix_segment: u32,
    /// The class's own replayed rows, sorted by arrival: its `trace` arrivals (scaled to
    /// its share of the rate) and `trace` lengths read them. Empty: the stream's rows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trace: Vec<TraceRow>,
    /// How the class's prompts share prefixes (shared prefixes, multi-turn sessions), in
    /// its own stream: [`PrefixModel::NONE`] for none beyond its typed hit rate.
    #[serde(default, skip_serializing_if = "PrefixModel::is_none")]
    pub prefix: PrefixModel,
}

impl ClassDraw {
    /// Whether the class's prompts follow a prefix structure of their own.
    fn structured(&self) -> bool {
        !self.prefix.is_none()
    }

    /// Whether the class's requests may find a prefix cached.
    fn caches(&self) -> bool {
        self.prefix_tokens > 0 && self.prefix_hit_rate > 0.0
    }
}

/// Mixed into the seed of the class draws, so that they leave the stream's own draws
/// as they are.
const CLASS_STREAM: u64 = 0x636c_6173_7365_7301;

/// The order in which the turns of several sessions reach the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnOrder {
    /// Each arrival comes from one of the open sessions, picked at random, which sends its
    /// next turn; a session that has sent its last turn gives way to a new one. Turns of
    /// one session stay in order, sessions interleave as independent users' do.
    #[default]
    Interleaved,
    /// Each session in turn sends its next turn: a session's turns are `sessions`
    /// arrivals apart, in order (a benchmark that cycles through its users).
    RoundRobin,
    /// Every turn of every session in a random order, as a benchmark that samples
    /// flattened conversations sends them: a later turn may come before an earlier one.
    Random,
}

impl TurnOrder {
    /// Every order, in the order pages list them.
    pub const ALL: [TurnOrder; 3] = [
        TurnOrder::Interleaved,
        TurnOrder::RoundRobin,
        TurnOrder::Random,
    ];

    /// The order's name in plans and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            TurnOrder::Interleaved => "interleaved",
            TurnOrder::RoundRobin => "round_robin",
            TurnOrder::Random => "random",
        }
    }

    /// Reads an order's name (a dash for the underscore is accepted).
    pub fn parse(s: &str) -> Option<TurnOrder> {
        let s = s.trim().replace('-', "_");
        TurnOrder::ALL.into_iter().find(|o| o.name() == s)
    }
}

/// How prompts share prefixes, resolved: shared prefixes (system prompts, documents)
/// picked by popularity, and multi-turn sessions whose every turn resends the
/// conversation so far.
///
/// With sessions, the plan's prompt lengths are each turn's new message and its output
/// lengths each turn's reply: turn `t` of a session sends the shared prefix, the
/// session's document, every earlier message and reply, and its new message.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct PrefixModel {
    /// Tokens per KV block; the cache keeps and finds whole blocks [tokens].
    pub block_tokens: u32,
    /// Distinct shared prefixes (0: none).
    pub groups: u32,
    /// Length of each shared prefix [tokens].
    pub group_tokens: u32,
    /// Popularity of the shared prefixes: the k-th (from 1) is picked in proportion to
    /// `1 / k^zipf` (0: all alike).
    pub zipf: f64,
    /// Sessions open at once (0: every request is on its own).
    pub sessions: u32,
    /// Turns per session.
    pub turns: u32,
    /// A document at the start of each session's conversation (e.g. a passage asked
    /// about), its own to the session [tokens].
    pub document_tokens: u32,
    /// How the sessions' turns interleave.
    pub order: TurnOrder,
    /// Whether the conversation resent by the next turn holds the model's own reply, so
    /// that the reply's KV is cached for it (a live chat or an agent); false when a
    /// benchmark replays recorded conversations, whose replies differ from what the
    /// model writes.
    pub replies_cached: bool,
}

impl PrefixModel {
    /// No structure.
    pub const NONE: PrefixModel = PrefixModel {
        block_tokens: 16,
        groups: 0,
        group_tokens: 0,
        zipf: 0.0,
        sessions: 0,
        turns: 1,
        document_tokens: 0,
        order: TurnOrder::Interleaved,
        replies_cached: true,
    };

    /// Whether there is any structure to share prefixes by.
    pub fn is_none(&self) -> bool {
        !(self.groups > 0 && self.group_tokens > 0) && self.sessions == 0
    }
}

impl Default for PrefixModel {
    fn default() -> Self {
        PrefixModel::NONE
    }
}

/// Which prompt prefixes a workload's requests share, for the prefix cache.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Sharing {
    /// Segments (shared stretches of tokens) in all.
    pub segments: u32,
    /// Tokens per KV block.
    pub block_tokens: u32,
    /// Segments cached from the start and never evicted, with their tokens.
    pub pinned: Vec<(u32, u32)>,
    /// Segments cached from the start that may be evicted like any other: the shared
    /// prefixes a server in steady state already holds.
    pub preloaded: Vec<(u32, u32)>,
    /// Request `i`'s path is `items[start[i]..start[i + 1]]`: (segment, tokens of the
    /// prompt in it), outermost first.
    pub start: Vec<u32>,
    /// The paths, one after another.
    pub items: Vec<(u32, u32)>,
    /// Whether a request's reply extends its last segment once it finishes.
    pub replies_cached: bool,
    /// The first of the requests' own segments: request `i`'s is `own_base + i`. It
    /// holds what the request computed beyond the shared prefixes (its own prompt, and
    /// its output unless a session keeps it), so that a preempted request finds it again
    /// when readmitted, and a finished one's blocks stay cached until evicted, as an
    /// engine's block cache keeps them.
    pub own_base: u32,
    /// The first session's conversation segment: segments `sessions_from..own_base` are
    /// the sessions' (none without sessions), which session affinity routes by.
    pub sessions_from: u32,
}

impl Sharing {
    /// Request `i`'s shared path.
    pub fn path(&self, i: usize) -> &[(u32, u32)] {
        &self.items[self.start[i] as usize..self.start[i + 1] as usize]
    }

    /// Request `i`'s whole path for a context of `ctx` tokens: its shared path, then its
    /// own segment with the rest of the context, written into `out`.
    pub fn full_path(&self, i: usize, ctx: u32, out: &mut Vec<(u32, u32)>) {
        out.clear();
        out.extend_from_slice(self.path(i));
        let shared: u32 = out.iter().map(|&(_, u)| u).sum();
        out.push((self.own_base + i as u32, ctx.saturating_sub(shared)));
    }
}

/// One interval of a piecewise-constant arrival rate.
///
/// With steps, arrivals are a renewal process of unit rate (exponential gaps for
/// Poisson, gamma gaps of the same CV, or constant gaps) mapped through the inverse of
/// the cumulative rate Λ(t) = ∫ rate: each request draws one unit gap and spends it
/// across the steps, so a Poisson stream is exactly the non-homogeneous Poisson process
/// of the piecewise rate, and a zero-rate step has no arrivals.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RateStep {
    /// How long the step lasts [s].
    pub duration_s: f64,
    /// Arrival rate during the step (0 allowed) [requests/s].
    pub rate_rps: f64,
}

/// A generated request stream, in arrival order. With a client gate
/// ([`TrafficModel::gate`]) these are the times requests become ready; the simulator
/// releases them to the server later when every client slot is busy.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Workload {
    /// Arrival times, non-decreasing [s].
    pub arrival_s: Vec<f64>,
    /// Prompt lengths, cached prefix included [tokens].
    pub prompt_tokens: Vec<u32>,
    /// Output lengths (at least 1) [tokens].
    pub output_tokens: Vec<u32>,
    /// Prompt tokens served from the prefix cache (not computed) [tokens].
    pub cached_tokens: Vec<u32>,
    /// Each request's traffic class, an index into [`TrafficModel::classes`] (empty
    /// with one class).
    pub class: Vec<u8>,
    /// The prefixes the requests share, when any do: the prefix cache's input (with a
    /// typed hit rate, a pinned prefix that every hit holds).
    pub sharing: Option<Sharing>,
}

/// The rate-free draws of a workload ([`TrafficModel::generate_seeded`]).
#[derive(Debug, Clone)]
struct UnitDraws {
    /// Arrival gaps at unit scale (empty when the arrival draws none).
    gaps: Vec<f64>,
    /// The lengths and prefix hits; no arrival times yet.
    requests: Workload,
}

/// The shape of gamma arrival gaps with coefficient of variation `cv`.
fn gamma_shape(cv: f64) -> f64 {
    1.0 / (cv * cv)
}

/// What names a [`UnitDraws`]: the seed, the request count, and every part of the
/// model a rate-free draw reads.
#[derive(Debug, Clone, Copy, PartialEq)]
struct DrawKey {
    seed: u64,
    n: usize,
    arrival: Arrival,
    prompt: LengthSpec,
    output: LengthSpec,
    prefix_tokens: u32,
    prefix_hit_rate: f64,
    prefix: PrefixModel,
}

/// Most seeds the per-thread store keeps (a search's replications fit).
const DRAWS_MAX_SEEDS: usize = 64;
/// Most requests the per-thread store keeps over all its seeds (about 20 MB).
const DRAWS_MAX_REQUESTS: usize = 1 << 20;

thread_local! {
    /// The per-thread store of [`TrafficModel::generate_seeded`], oldest first.
    static DRAWS: std::cell::RefCell<std::collections::VecDeque<(DrawKey, UnitDraws)>> =
        const { std::cell::RefCell::new(std::collections::VecDeque::new()) };
}

/// Empties this thread's store of rate-free draws ([`TrafficModel::generate_seeded`]):
/// the next simulations draw afresh, as in a new worker. Results do not change.
pub fn clear_stored_draws() {
    DRAWS.with(|store| store.borrow_mut().clear());
}

/// `floor(libm::exp(x))`, bit for bit, mostly without calling `libm::exp`.
///
/// A degree-9 polynomial gives `exp(x)` to about 1e-11 relative; only when that lands
/// within 1e-9 (relative) of an integer, where the floor could differ, is the exact
/// `libm::exp` consulted (about one draw in 10⁵ at lengths near 8,000).
#[inline]
pub fn floor_exp(x: f64) -> f64 {
    // 1.5 × 2^52: adding it rounds to an integer, which then sits in the low mantissa bits.
    const ROUND: f64 = 6_755_399_441_055_744.0;
    const TWO52: f64 = 4_503_599_627_370_496.0;
    if !(-700.0..=700.0).contains(&x) {
        return libm::floor(libm::exp(x));
    }
    let y = x * core::f64::consts::LOG2_E;
    let shifted = y + ROUND;
    let n = shifted.to_bits() as u32 as i32;
    // e^t with t = (y − n) ln 2, |t| <= 0.347: Taylor to t^9, evaluated by Estrin's scheme.
    let t = (y - (shifted - ROUND)) * core::f64::consts::LN_2;
    let t2 = t * t;
    let t4 = t2 * t2;
    let p01 = 1.0 + t;
    let p23 = 1.0 / 2.0 + t * (1.0 / 6.0);
    let p45 = 1.0 / 24.0 + t * (1.0 / 120.0);
    let p67 = 1.0 / 720.0 + t * (1.0 / 5_040.0);
    let p89 = 1.0 / 40_320.0 + t * (1.0 / 362_880.0);
    let p = (p01 + t2 * p23) + t4 * ((p45 + t2 * p67) + t4 * p89);
    // |n| <= 1010: 2^n is a normal double.
    let v = p * f64::from_bits(((1023 + n) as u64) << 52);
    if v >= TWO52 {
        return libm::floor(libm::exp(x));
    }
    // Floor of 0 <= v < 2^52: round to an integer, then step down if that went up.
    let mut k = (v + TWO52) - TWO52;
    if k > v {
        k -= 1.0;
    }
    let tol = v * 1e-9 + 1e-300;
    if v - k < tol || k + 1.0 - v < tol {
        return libm::floor(libm::exp(x));
    }
    k
}

/// [`floor_exp`] of `x`, or NaN where it would consult `libm::exp`. The same
/// operations in the same order as `floor_exp`'s fast path, with its early returns
/// turned into that flag: no branches, so a loop of it vectorises.
#[inline(always)]
fn floor_exp_fast(x: f64) -> f64 {
    const ROUND: f64 = 6_755_399_441_055_744.0;
    const TWO52: f64 = 4_503_599_627_370_496.0;
    let in_range = (-700.0..=700.0).contains(&x);
    let y = x * core::f64::consts::LOG2_E;
    let shifted = y + ROUND;
    // For |y| <= 1010 the low 12 bits of `shifted`'s pattern plus 1023 are floor_exp's
    // `1023 + n`: this is its 2^n, in 64-bit integer operations.
    let scale = f64::from_bits(shifted.to_bits().wrapping_add(1023) << 52);
    let t = (y - (shifted - ROUND)) * core::f64::consts::LN_2;
    let t2 = t * t;
    let t4 = t2 * t2;
    let p01 = 1.0 + t;
    let p23 = 1.0 / 2.0 + t * (1.0 / 6.0);
    let p45 = 1.0 / 24.0 + t * (1.0 / 120.0);
    let p67 = 1.0 / 720.0 + t * (1.0 / 5_040.0);
    let p89 = 1.0 / 40_320.0 + t * (1.0 / 362_880.0);
    let p = (p01 + t2 * p23) + t4 * ((p45 + t2 * p67) + t4 * p89);
    let v = p * scale;
    let r = (v + TWO52) - TWO52;
    let k = if r > v { r - 1.0 } else { r };
    let tol = v * 1e-9 + 1e-300;
    let exact = !in_range | (v >= TWO52) | (v - k < tol) | (k + 1.0 - v < tol);
    if exact {
        f64::NAN
    } else {
        k
    }
}

/// Truncates a non-negative real length to an integer and clips it to `[min, max]`
/// (NaN becomes `min`).
fn clip_length(v: f64, min: u32, max: u32) -> u32 {
    let k = if v >= max as f64 {
        max
    } else if v >= 0.0 {
        v as u32
    } else {
        0
    };
    k.clamp(min, max.max(min))
}

impl TrafficModel {
    /// The client gate, when there is one: (requests in flight at most, pause between
    /// one request's end and the release of the next [s]). A closed loop gives its
    /// clients and think time; an open-loop arrival with a `max_concurrency` gives the
    /// cap and no pause.
    pub fn gate(&self) -> Option<(u32, f64)> {
        match (self.arrival, self.max_concurrency) {
            (
                Arrival::Closed {
                    concurrency,
                    think_s,
                },
                _,
            ) => Some((concurrency, think_s)),
            (_, Some(cap)) => Some((cap, 0.0)),
            (_, None) => None,
        }
    }

    /// The longest prompt any request may have [tokens].
    pub fn prompt_cap(&self) -> u32 {
        self.classes
            .iter()
            .fold(self.prompt.max, |m, c| m.max(c.prompt.max))
    }

    /// The longest output any request may have: the largest `max_tokens` cap [tokens].
    pub fn output_cap(&self) -> u32 {
        self.classes
            .iter()
            .fold(self.output.max, |m, c| m.max(c.output.max))
    }

    /// The `max_tokens` cap of request `i` of workload `w` [tokens].
    pub fn output_cap_of(&self, w_class: &[u8], i: usize) -> u32 {
        match w_class.get(i) {
            Some(&c) => self.classes[c as usize].output.max,
            None => self.output.max,
        }
    }

    /// This stream without its classes, with lengths from `prompt` and `output`; field by
    /// field, since a whole clone would copy every class (its replayed rows) only to drop
    /// it.
    fn one_class(&self, prompt: LengthSpec, output: LengthSpec) -> TrafficModel {
        let TrafficModel {
            rate_rps,
            arrival,
            prompt: _,
            output: _,
            prefix_tokens,
            prefix_hit_rate,
            trace,
            max_concurrency,
            rate_steps,
            prefix,
            classes: _,
            lead_in: _,
        } = self;
        TrafficModel {
            rate_rps: *rate_rps,
            arrival: *arrival,
            prompt,
            output,
            prefix_tokens: *prefix_tokens,
            prefix_hit_rate: *prefix_hit_rate,
            trace: trace.clone(),
            max_concurrency: *max_concurrency,
            rate_steps: rate_steps.clone(),
            prefix: *prefix,
            classes: Vec::new(),
            lead_in: None,
        }
    }

    /// `w` with [`TrafficModel::lead_in`] applied to its arrivals.
    fn led_in(&self, mut w: Workload) -> Workload {
        let Some(l) = self.lead_in else {
            return w;
        };
        let m = (l.requests as usize).min(w.arrival_s.len());
        if !self.arrival.spaced_by_rate()
            || self.stepped()
            || m == 0
            || l.rate_scale.is_nan()
            || l.rate_scale <= 0.0
        {
            return w;
        }
        let last = w.arrival_s[m - 1];
        let end = last / l.rate_scale;
        for a in &mut w.arrival_s[..m] {
            *a /= l.rate_scale;
        }
        for a in &mut w.arrival_s[m..] {
            *a = end + l.pause_s + (*a - last);
        }
        w
    }

    /// The mixed stream of [`TrafficModel::classes`] from `w`, the stream drawn without
    /// them: its arrivals, a class per request drawn by the shares from a stream of its
    /// own (seeded from `seed`, the first draw of the stream's generator), and each
    /// request's lengths from its class's draws (the class's own stream of as many
    /// requests, of which it takes those that belong to it).
    fn mixed(&self, mut w: Workload, seed: u64) -> Workload {
        let n = w.prompt_tokens.len();
        if self.streams_apart() {
            return self.merged(n, seed);
        }
        let mut rng = Rng::new(seed ^ CLASS_STREAM);
        let last = self.classes.len() - 1;
        w.class = (0..n)
            .map(|_| {
                let u = rng.next_f64();
                let mut acc = 0.0;
                let pick = self.classes.iter().position(|c| {
                    acc += c.share;
                    u < acc
                });
                pick.unwrap_or(last) as u8
            })
            .collect();
        let mut cached = vec![0; n];
        for (k, c) in self.classes.iter().enumerate() {
            let stream = seed.wrapping_add((k as u64 + 1).wrapping_mul(CLASS_STREAM));
            let own = self.class_model(c).generate_seeded(n, stream);
            for i in (0..n).filter(|&i| w.class[i] as usize == k) {
                w.prompt_tokens[i] = own.prompt_tokens[i];
                w.output_tokens[i] = own.output_tokens[i];
                cached[i] = own.cached_tokens.get(i).copied().unwrap_or(0);
            }
        }
        self.with_class_prefixes(w, cached)
    }

    /// Whether each class draws a stream of its own, merged by time: when a class
    /// arrives by its own process, or its prompts follow a prefix structure (whose
    /// sessions must reach the server turn after turn, not picked out by share).
    fn streams_apart(&self) -> bool {
        self.classes
            .iter()
            .any(|c| c.arrival.is_some() || c.structured())
    }

    /// The model a class's own stream is drawn from: its lengths and its prefix.
    fn class_model(&self, c: &ClassDraw) -> TrafficModel {
        let mut m = TrafficModel {
            prefix_tokens: c.prefix_tokens,
            prefix_hit_rate: c.prefix_hit_rate,
            prefix: c.prefix,
            ..self.one_class(c.prompt, c.output)
        };
        if !c.trace.is_empty() {
            m.trace.clone_from(&c.trace);
        }
        m
    }

    /// `w` with each request's cached prefix tokens (`cached`, drawn in its class's
    /// stream) and the prefixes they hold: one pinned segment per class prefix, cached
    /// from the start, as the typed hit rate of one class holds its one prefix. Nothing
    /// when no class caches a prefix. (No class here has a structure: it would have
    /// drawn a stream of its own.)
    fn with_class_prefixes(&self, w: Workload, cached: Vec<u32>) -> Workload {
        self.with_class_structures(w, &[], &[], cached)
    }

    /// The mixed stream when a class has its own arrival process: each class draws `n`
    /// requests of its own (seeded as its lengths are in [`TrafficModel::mixed`]), at its
    /// share of the rate (and of each rate step) by its own process (the stream's when it
    /// names none); the streams merge by arrival time (ties: class order, then request
    /// order) and the first `n` are kept.
    fn merged(&self, n: usize, seed: u64) -> Workload {
        let mut streams = Vec::with_capacity(self.classes.len());
        // (arrival, class, request in the class's stream)
        let mut all: Vec<(f64, u8, u32)> = Vec::with_capacity(n * self.classes.len());
        for (k, c) in self.classes.iter().enumerate() {
            let stream = seed.wrapping_add((k as u64 + 1).wrapping_mul(CLASS_STREAM));
            let mut own = self.class_model(c);
            own.arrival = c.arrival.unwrap_or(self.arrival);
            own.rate_rps = self.rate_rps * c.share;
            for s in &mut own.rate_steps {
                s.rate_rps *= c.share;
            }
            let w = own.generate_seeded(n, stream);
            all.extend(
                w.arrival_s
                    .iter()
                    .enumerate()
                    .map(|(j, &t)| (t, k as u8, j as u32)),
            );
            streams.push(w);
        }
        all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        all.truncate(n);
        let of = |r: &(f64, u8, u32)| (&streams[r.1 as usize], r.2 as usize);
        let w = Workload {
            arrival_s: all.iter().map(|r| r.0).collect(),
            prompt_tokens: all.iter().map(|r| of(r).0.prompt_tokens[of(r).1]).collect(),
            output_tokens: all.iter().map(|r| of(r).0.output_tokens[of(r).1]).collect(),
            cached_tokens: Vec::new(),
            class: all.iter().map(|r| r.1).collect(),
            sharing: None,
        };
        let cached = all
            .iter()
            .map(|r| of(r).0.cached_tokens.get(of(r).1).copied().unwrap_or(0))
            .collect();
        let index: Vec<u32> = all.iter().map(|r| r.2).collect();
        self.with_class_structures(w, &streams, &index, cached)
    }

    /// The typed prefixes' pinned segments (one per class prefix segment that some class
    /// caches), and how many segments they take: as [`TrafficModel::with_class_prefixes`]
    /// lays them out.
    fn typed_segments(&self) -> (u32, Vec<(u32, u32)>) {
        if !self.classes.iter().any(ClassDraw::caches) {
            return (0, Vec::new());
        }
        let segments = self
            .classes
            .iter()
            .map(|c| c.prefix_segment + 1)
            .max()
            .unwrap_or(1);
        let mut pinned: Vec<(u32, u32)> = Vec::new();
        for c in self.classes.iter().filter(|c| c.caches()) {
            match pinned.iter_mut().find(|(s, _)| *s == c.prefix_segment) {
                Some(p) => p.1 = p.1.max(c.prefix_tokens),
                None => pinned.push((c.prefix_segment, c.prefix_tokens)),
            }
        }
        pinned.sort_unstable();
        (segments, pinned)
    }

    /// `w`, merged from the classes' own `streams` (request `i` is request `index[i]` of
    /// its class's stream; none when `w` is the one stream), with the prefixes its
    /// requests share: first the typed prefixes' pinned segments (hits in `cached`), then
    /// each structured class's shared prefixes, then every structured class's sessions,
    /// then each request's own segment. A class's paths keep their shape, their segments
    /// moved into its ranges. Nothing when no class caches a prefix or has a structure.
    fn with_class_structures(
        &self,
        mut w: Workload,
        streams: &[Workload],
        index: &[u32],
        cached: Vec<u32>,
    ) -> Workload {
        let shared: Vec<Option<&Sharing>> = self
            .classes
            .iter()
            .enumerate()
            .map(|(k, c)| {
                let s = streams.get(k).and_then(|w| w.sharing.as_ref());
                s.filter(|_| c.structured())
            })
            .collect();
        if !self.classes.iter().any(ClassDraw::caches) && shared.iter().all(Option::is_none) {
            w.cached_tokens = Vec::new();
            w.sharing = None;
            return w;
        }
        let n = cached.len();
        let (typed, pinned) = self.typed_segments();
        let mut next = typed;
        let mut groups_at = vec![0u32; shared.len()];
        for (k, s) in shared.iter().enumerate() {
            if let Some(s) = s {
                groups_at[k] = next;
                next += s.sessions_from;
            }
        }
        let sessions_from = next;
        let mut sessions_at = vec![0u32; shared.len()];
        for (k, s) in shared.iter().enumerate() {
            if let Some(s) = s {
                sessions_at[k] = next;
                next += s.own_base - s.sessions_from;
            }
        }
        let own_base = next;
        let moved = |k: usize, s: &Sharing, seg: u32| {
            if seg < s.sessions_from {
                groups_at[k] + seg
            } else {
                sessions_at[k] + (seg - s.sessions_from)
            }
        };
        let mut out = Sharing {
            segments: own_base + n as u32,
            block_tokens: shared
                .iter()
                .flatten()
                .map(|s| s.block_tokens)
                .max()
                .unwrap_or(1),
            pinned,
            preloaded: Vec::new(),
            start: Vec::with_capacity(n + 1),
            items: Vec::with_capacity(2 * n),
            replies_cached: shared.iter().flatten().any(|s| s.replies_cached),
            own_base,
            sessions_from,
        };
        for (k, s) in shared.iter().enumerate() {
            if let Some(s) = s {
                out.preloaded
                    .extend(s.preloaded.iter().map(|&(g, t)| (moved(k, s, g), t)));
            }
        }
        out.start.push(0);
        for i in 0..n {
            let k = w.class[i] as usize;
            match shared[k] {
                Some(s) => {
                    for &(seg, t) in s.path(index[i] as usize) {
                        out.items.push((moved(k, s, seg), t));
                    }
                }
                None if cached[i] > 0 => {
                    out.items.push((self.classes[k].prefix_segment, cached[i]));
                }
                None => {}
            }
            out.start.push(out.items.len() as u32);
        }
        w.cached_tokens = cached;
        w.sharing = Some(out);
        w
    }

    /// Generates `n` requests from `rng`.
    pub fn generate(&self, n: usize, rng: &mut Rng) -> Workload {
        self.led_in(self.generate_at_rate(n, rng))
    }

    /// [`TrafficModel::generate`] without the lead-in.
    fn generate_at_rate(&self, n: usize, rng: &mut Rng) -> Workload {
        if !self.classes.is_empty() {
            let first = rng.clone().next_u64();
            let w = self.one_class(self.prompt, self.output).generate(n, rng);
            return self.mixed(w, first);
        }
        if !self.stepped() {
            let d = self.unit_draws(n, rng);
            return self.at_rate(&d.gaps, d.requests);
        }
        let mut w = Workload {
            arrival_s: Vec::with_capacity(n),
            ..Workload::default()
        };
        self.stepped_arrivals(n, rng, &mut w.arrival_s);
        self.fill_rest(n, rng, &mut w.prompt_tokens, &mut w.output_tokens);
        w.cached_tokens = self.prefix_hits(&w.prompt_tokens, rng);
        self.share(&mut w, rng);
        w
    }

    /// [`TrafficModel::generate`] from `Rng::new(seed)`, the same workload bit for bit.
    /// Where the draws do not depend on the rate (no rate steps) and on nothing but the
    /// fields of the store's key (no replayed rows), they are kept in a small per-thread
    /// store: a search simulates each replication's seed at several rates, and a sweep or
    /// a shootout the same traffic in every cell, so all but the first simulation of a
    /// seed only rescale its arrival gaps.
    pub fn generate_seeded(&self, n: usize, seed: u64) -> Workload {
        self.led_in(self.generate_seeded_at_rate(n, seed))
    }

    /// [`TrafficModel::generate_seeded`] without the lead-in.
    fn generate_seeded_at_rate(&self, n: usize, seed: u64) -> Workload {
        if !self.classes.is_empty() {
            let first = Rng::new(seed).next_u64();
            // Classes of their own arrivals draw their own streams: the one stream is not
            // needed.
            if self.streams_apart() {
                return self.merged(n, first);
            }
            let w = self
                .one_class(self.prompt, self.output)
                .generate_seeded(n, seed);
            return self.mixed(w, first);
        }
        if self.stepped() || !self.trace.is_empty() {
            return self.generate_at_rate(n, &mut Rng::new(seed));
        }
        let key = DrawKey {
            seed,
            n,
            arrival: self.arrival,
            prompt: self.prompt,
            output: self.output,
            prefix_tokens: self.prefix_tokens,
            prefix_hit_rate: self.prefix_hit_rate,
            prefix: self.prefix,
        };
        DRAWS.with(|store| {
            let mut store = store.borrow_mut();
            if let Some((_, d)) = store.iter().find(|(k, _)| *k == key) {
                return self.at_rate(&d.gaps, d.requests.clone());
            }
            let d = self.unit_draws(n, &mut Rng::new(seed));
            let w = self.at_rate(&d.gaps, d.requests.clone());
            if n <= DRAWS_MAX_REQUESTS {
                let mut held: usize = store.iter().map(|(k, _)| k.n).sum::<usize>() + n;
                while held > DRAWS_MAX_REQUESTS || store.len() >= DRAWS_MAX_SEEDS {
                    match store.pop_front() {
                        Some((k, _)) => held -= k.n,
                        None => break,
                    }
                }
                store.push_back((key, d));
            }
            w
        })
    }

    /// Whether the arrivals follow the rate steps (see [`RateStep`]): the one case where
    /// the rate does more than scale the gaps. Trace and closed-loop arrivals ignore the
    /// steps.
    fn stepped(&self) -> bool {
        !self.rate_steps.is_empty() && self.arrival.spaced_by_rate()
    }

    /// The draws of `n` requests at unit scale, in the fixed draw order: the gaps (of
    /// mean 1 for Poisson, of scale 1 for gamma; none for constant, trace and closed), then
    /// the prompt lengths, the output lengths and the prefix hits.
    fn unit_draws(&self, n: usize, rng: &mut Rng) -> UnitDraws {
        let mut gaps = Vec::new();
        match self.arrival {
            Arrival::Poisson => {
                let z = crate::rng::Ziggurat::get();
                // The generator in a local, kept in registers through the loop.
                let mut r = rng.clone();
                gaps.extend((0..n).map(|_| r.exponential_with(z)));
                *rng = r;
            }
            Arrival::Gamma { cv } => {
                let shape = gamma_shape(cv);
                gaps.extend((0..n).map(|_| rng.gamma(shape, 1.0)));
            }
            Arrival::Constant | Arrival::Closed { .. } | Arrival::Trace => {}
        }
        let mut requests = Workload::default();
        self.fill_rest(
            n,
            rng,
            &mut requests.prompt_tokens,
            &mut requests.output_tokens,
        );
        requests.cached_tokens = self.prefix_hits(&requests.prompt_tokens, rng);
        self.share(&mut requests, rng);
        UnitDraws { gaps, requests }
    }

    /// `requests` (lengths and prefix hits) with their arrival times at this model's rate,
    /// from unit-scale `gaps`. The gaps are scaled as the draws themselves would be
    /// (`rng.gamma(shape, scale)` is `rng.gamma(shape, 1.0) × scale` bit for bit), so
    /// this equals drawing at the rate directly.
    fn at_rate(&self, gaps: &[f64], mut requests: Workload) -> Workload {
        let n = requests.prompt_tokens.len();
        let mean_gap = 1.0 / self.rate_rps;
        let mut arrival_s = Vec::with_capacity(n);
        match self.arrival {
            Arrival::Poisson => {
                let mut t = 0.0;
                arrival_s.extend(gaps.iter().map(|&e| {
                    t += mean_gap * e;
                    t
                }));
            }
            Arrival::Gamma { cv } => {
                let scale = mean_gap / gamma_shape(cv);
                let mut t = 0.0;
                arrival_s.extend(gaps.iter().map(|&g| {
                    t += g * scale;
                    t
                }));
            }
            Arrival::Constant => arrival_s.extend((0..n).map(|i| (i + 1) as f64 * mean_gap)),
            // Every request is ready at once; the engine releases them to its clients.
            Arrival::Closed { .. } => arrival_s.extend(std::iter::repeat_n(0.0, n)),
            Arrival::Trace => self.trace_arrivals(n, &mut arrival_s),
        }
        requests.arrival_s = arrival_s;
        requests
    }

    /// The prompt and output lengths of `n` requests (outputs at least 1 token).
    fn fill_rest(&self, n: usize, rng: &mut Rng, prompt: &mut Vec<u32>, output: &mut Vec<u32>) {
        prompt.reserve_exact(n);
        output.reserve_exact(n);
        fill_lengths(
            &self.prompt,
            &self.trace,
            n,
            rng,
            |r| r.prompt_tokens,
            prompt,
        );
        fill_lengths(
            &self.output,
            &self.trace,
            n,
            rng,
            |r| r.output_tokens,
            output,
        );
        for o in output.iter_mut() {
            *o = (*o).max(1);
        }
    }

    /// The prefix-cache hits of `prompt` (cached tokens each), or none when nothing is
    /// cached.
    fn prefix_hits(&self, prompt: &[u32], rng: &mut Rng) -> Vec<u32> {
        if !(self.prefix_tokens > 0 && self.prefix_hit_rate > 0.0) {
            return Vec::new();
        }
        let all = self.prefix_hit_rate >= 1.0;
        prompt
            .iter()
            .map(|&p| {
                let hit = all || rng.next_f64() < self.prefix_hit_rate;
                if hit {
                    self.prefix_tokens.min(p.saturating_sub(1))
                } else {
                    0
                }
            })
            .collect()
    }

    /// The prefixes `w`'s requests share: the typed hit rate's prefix (pinned, held by
    /// every hit), or the prefix structure's shared prefixes and sessions, which set the
    /// prompt and output lengths of a session's turns. Nothing without either.
    fn share(&self, w: &mut Workload, rng: &mut Rng) {
        let n = w.prompt_tokens.len();
        if self.prefix.is_none() && self.replays_blocks() {
            self.share_trace_blocks(w);
            return;
        }
        if self.prefix.is_none() {
            if w.cached_tokens.is_empty() {
                return;
            }
            // The typed hit rate: one prefix, cached from the start, that every hit holds.
            let mut s = Sharing {
                segments: 1 + n as u32,
                block_tokens: 1,
                pinned: vec![(0, self.prefix_tokens)],
                preloaded: Vec::new(),
                start: Vec::with_capacity(n + 1),
                items: Vec::new(),
                replies_cached: false,
                own_base: 1,
                sessions_from: 1,
            };
            s.start.push(0);
            for &c in &w.cached_tokens {
                if c > 0 {
                    s.items.push((0, c));
                }
                s.start.push(s.items.len() as u32);
            }
            w.sharing = Some(s);
            return;
        }
        let p = &self.prefix;
        let k = if p.group_tokens > 0 { p.groups } else { 0 };
        let pick = popularity(k, p.zipf);
        let draw_group = |rng: &mut Rng| -> u32 {
            let u = rng.next_f64();
            pick.partition_point(|&c| c <= u)
                .min(k.saturating_sub(1) as usize) as u32
        };
        let mut s = Sharing {
            segments: k,
            block_tokens: p.block_tokens.max(1),
            pinned: Vec::new(),
            // A server in steady state holds its shared prefixes already: they start cached.
            preloaded: (0..k).map(|g| (g, p.group_tokens)).collect(),
            start: Vec::with_capacity(n + 1),
            items: Vec::with_capacity(2 * n),
            replies_cached: p.replies_cached && p.sessions > 0,
            own_base: 0,
            sessions_from: k,
        };
        s.start.push(0);
        w.cached_tokens = Vec::new();
        if p.sessions == 0 {
            // Shared prefixes only: each prompt is a shared prefix and its own part.
            for prompt in w.prompt_tokens.iter_mut() {
                let g = draw_group(rng);
                *prompt = prompt.saturating_add(p.group_tokens);
                s.items.push((g, p.group_tokens));
                s.start.push(s.items.len() as u32);
            }
            s.own_base = s.segments;
            s.sessions_from = s.segments;
            s.segments += n as u32;
            w.sharing = Some(s);
            return;
        }
        // Sessions: which (session, turn) each request is.
        let u = p.sessions as usize;
        let t = p.turns.max(1) as usize;
        let per_cycle = u * t;
        let turns: Vec<(usize, usize)> = match p.order {
            TurnOrder::Interleaved => {
                // Each open slot's (session, next turn); a finished session's slot opens
                // the next session.
                let mut open: Vec<(usize, usize)> = (0..u).map(|ss| (ss, 0)).collect();
                let mut next_session = u;
                (0..n)
                    .map(|_| {
                        let j = ((rng.next_f64() * u as f64) as usize).min(u - 1);
                        let (ss, tt) = open[j];
                        open[j] = if tt + 1 < t {
                            (ss, tt + 1)
                        } else {
                            next_session += 1;
                            (next_session - 1, 0)
                        };
                        (ss, tt)
                    })
                    .collect()
            }
            TurnOrder::RoundRobin => (0..n)
                .map(|i| {
                    let round = i / u;
                    (i % u + u * (round / t), round % t)
                })
                .collect(),
            TurnOrder::Random => {
                let mut cycle: Vec<(usize, usize)> =
                    (0..per_cycle).map(|j| (j / t, j % t)).collect();
                let mut out = Vec::with_capacity(n);
                let mut c = 0;
                while out.len() < n {
                    for i in (1..cycle.len()).rev() {
                        let j = ((rng.next_f64() * (i + 1) as f64) as usize).min(i);
                        cycle.swap(i, j);
                    }
                    out.extend(
                        cycle
                            .iter()
                            .take(n - out.len())
                            .map(|&(ss, tt)| (ss + u * c, tt)),
                    );
                    c += 1;
                }
                out
            }
        };
        let sessions = turns.iter().map(|&(ss, _)| ss + 1).max().unwrap_or(0);
        // Each session's messages and replies, turn by turn, and its shared prefix.
        let mut messages = Vec::new();
        let mut replies = Vec::new();
        self.fill_rest(sessions * t, rng, &mut messages, &mut replies);
        let groups: Vec<u32> = (0..sessions)
            .map(|_| if k > 0 { draw_group(rng) } else { 0 })
            .collect();
        s.segments = k + sessions as u32;
        for (i, &(ss, tt)) in turns.iter().enumerate() {
            let row = ss * t;
            let history: u64 = (0..tt)
                .map(|j| messages[row + j] as u64 + replies[row + j] as u64)
                .sum();
            let own = (p.document_tokens as u64 + history + messages[row + tt] as u64)
                .min(u32::MAX as u64 / 2) as u32;
            if k > 0 {
                s.items.push((groups[ss], p.group_tokens));
            }
            s.items.push((k + ss as u32, own));
            s.start.push(s.items.len() as u32);
            w.prompt_tokens[i] = own.saturating_add(if k > 0 { p.group_tokens } else { 0 });
            w.output_tokens[i] = replies[row + tt].max(1);
        }
        s.own_base = s.segments;
        s.segments += n as u32;
        w.sharing = Some(s);
    }

    /// Whether the prompts are a trace's rows that name their blocks
    /// ([`TraceRow::blocks`]): then the blocks, not a typed hit rate, say what is shared.
    pub fn replays_blocks(&self) -> bool {
        matches!(self.prompt.dist, LengthDist::Trace)
            && self.trace.iter().any(|r| !r.blocks.is_empty())
    }

    /// The prefixes a replayed trace's requests share, from its block ids: each distinct
    /// block is a segment of [`TRACE_BLOCK_TOKENS`] tokens (its prompt's last block
    /// perhaps fewer), and a request's path is its blocks in order, as far as its prompt
    /// reaches. Nothing is cached at the start. When the trace repeats (more requests
    /// than rows), each repetition's blocks are new ones: a replay does not find the
    /// previous pass's prompts cached.
    fn share_trace_blocks(&self, w: &mut Workload) {
        let n = w.prompt_tokens.len();
        let rows = self.trace.len();
        // (repetition, block id) → segment, numbered as first met.
        let mut segment: std::collections::HashMap<(u32, u32), u32> =
            std::collections::HashMap::new();
        let mut s = Sharing {
            segments: 0,
            block_tokens: self.prefix.block_tokens.max(1),
            pinned: Vec::new(),
            preloaded: Vec::new(),
            start: Vec::with_capacity(n + 1),
            items: Vec::new(),
            replies_cached: false,
            own_base: 0,
            sessions_from: 0,
        };
        s.start.push(0);
        for (i, &prompt) in w.prompt_tokens.iter().enumerate() {
            let cycle = (i / rows) as u32;
            let mut left = prompt;
            for &b in &self.trace[i % rows].blocks {
                if left == 0 {
                    break;
                }
                let next = segment.len() as u32;
                let seg = *segment.entry((cycle, b)).or_insert(next);
                let tokens = left.min(TRACE_BLOCK_TOKENS);
                s.items.push((seg, tokens));
                left -= tokens;
            }
            s.start.push(s.items.len() as u32);
        }
        s.segments = segment.len() as u32;
        s.own_base = s.segments;
        s.sessions_from = s.segments;
        s.segments += n as u32;
        w.cached_tokens = Vec::new();
        w.sharing = Some(s);
    }

    /// Arrivals of a piecewise-constant rate (see [`RateStep`]): unit-rate gaps spent
    /// against the cumulative rate, step by step; after the last step, `rate_rps`.
    fn stepped_arrivals(&self, n: usize, rng: &mut Rng, out: &mut Vec<f64>) {
        let z = crate::rng::Ziggurat::get();
        let steps = &self.rate_steps;
        let mut k = 0; // current step
        let mut t = 0.0;
        let mut step_end = steps[0].duration_s;
        for _ in 0..n {
            let mut e = match self.arrival {
                Arrival::Gamma { cv } => {
                    let shape = gamma_shape(cv);
                    rng.gamma(shape, 1.0 / shape)
                }
                Arrival::Constant => 1.0,
                _ => rng.exponential_with(z),
            };
            loop {
                if k >= steps.len() {
                    t += e / self.rate_rps;
                    break;
                }
                let rate = steps[k].rate_rps;
                let room = rate * (step_end - t);
                if rate > 0.0 && e <= room {
                    t += e / rate;
                    break;
                }
                e -= room.max(0.0);
                t = step_end;
                k += 1;
                if k < steps.len() {
                    step_end += steps[k].duration_s;
                }
            }
            out.push(t);
        }
    }

    /// Trace arrivals rescaled so their mean rate is `rate_rps`; the trace repeats when it
    /// has fewer rows than requests (each repetition starts one mean gap after the last).
    fn trace_arrivals(&self, n: usize, out: &mut Vec<f64>) {
        let rows = self.trace.len();
        if rows == 0 {
            return;
        }
        let t0 = self.trace[0].arrival_s;
        let span = self.trace[rows - 1].arrival_s - t0;
        let period = rows as f64 / self.rate_rps;
        let scale = if rows >= 2 && span > 0.0 {
            (1.0 / self.rate_rps) / (span / (rows - 1) as f64)
        } else {
            0.0
        };
        for i in 0..n {
            let row = &self.trace[i % rows];
            let cycle = (i / rows) as f64;
            out.push((row.arrival_s - t0) * scale + cycle * period);
        }
    }
}

/// The cumulative popularity of `k` shared prefixes, the j-th (from 1) weighing
/// `1 / j^zipf`: `cum[j]` is the chance of picking one of the first `j + 1`.
fn popularity(k: u32, zipf: f64) -> Vec<f64> {
    let w: Vec<f64> = (1..=k)
        .map(|j| libm::pow(j as f64, -zipf.max(0.0)))
        .collect();
    let total: f64 = w.iter().sum();
    let mut acc = 0.0;
    w.iter()
        .map(|x| {
            acc += x / total;
            acc
        })
        .collect()
}

fn fill_lengths(
    spec: &LengthSpec,
    trace: &[TraceRow],
    n: usize,
    rng: &mut Rng,
    field: impl Fn(&TraceRow) -> u32,
    out: &mut Vec<u32>,
) {
    match spec.dist {
        LengthDist::LogNormal { median, sigma } => {
            // floor(exp(ln(median) + sigma·z)) with z ~ N(0, 1), clipped to [min, max].
            let ln_median = libm::log(median);
            let z = crate::rng::Ziggurat::get();
            // In three passes: the draws (the generator in a local, kept in registers),
            // floor_exp's fast path on all of them (vectorised), then the rare exact
            // cases and the clipping.
            let mut r = rng.clone();
            let xs: Vec<f64> = (0..n)
                .map(|_| ln_median + sigma * r.normal_with(z))
                .collect();
            *rng = r;
            let ks: Vec<f64> = xs.iter().map(|&x| floor_exp_fast(x)).collect();
            out.extend(xs.iter().zip(&ks).map(|(&x, &k)| {
                let v = if k.is_nan() {
                    libm::floor(libm::exp(x))
                } else {
                    k
                };
                clip_length(v, spec.min, spec.max)
            }));
        }
        LengthDist::Fixed { tokens } => {
            out.extend(std::iter::repeat_n(
                tokens.clamp(spec.min, spec.max.max(spec.min)),
                n,
            ));
        }
        LengthDist::Trace => {
            if trace.is_empty() {
                out.extend(std::iter::repeat_n(spec.min, n));
            } else {
                out.extend((0..n).map(|i| {
                    field(&trace[i % trace.len()]).clamp(spec.min, spec.max.max(spec.min))
                }));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The article's traffic at `rate`: Poisson, prompts median 800 (sigma 0.8,
    /// 16..8000), outputs median 200 (sigma 0.8, 1..1024).
    fn model(rate: f64) -> TrafficModel {
        TrafficModel {
            rate_rps: rate,
            arrival: Arrival::Poisson,
            prompt: LengthSpec::ARTICLE_PROMPT,
            output: LengthSpec::ARTICLE_OUTPUT,
            prefix_tokens: 0,
            prefix_hit_rate: 0.0,
            trace: Vec::new(),
            max_concurrency: None,
            rate_steps: Vec::new(),
            prefix: PrefixModel::NONE,
            classes: Vec::new(),
            lead_in: None,
        }
    }

    #[test]
    fn a_class_of_its_own_arrivals_keeps_its_process_and_its_share_of_the_rate() {
        // 10 req/s: chat by the stream's Poisson at 7, batch evenly spaced at 3.
        let mut m = model(10.0);
        let class = |share, arrival| ClassDraw {
            share,
            prompt: LengthSpec::ARTICLE_PROMPT,
            output: LengthSpec::ARTICLE_OUTPUT,
            arrival,
            prefix_tokens: 0,
            prefix_hit_rate: 0.0,
            prefix_segment: 0,
            trace: Vec::new(),
            prefix: PrefixModel::NONE,
        };
        m.classes = vec![class(0.7, None), class(0.3, Some(Arrival::Constant))];
        let w = m.generate_seeded(20_000, 5);
        assert_eq!(w.arrival_s.len(), 20_000);
        assert!(w.arrival_s.is_sorted_by(|a, b| a <= b));
        let batch: Vec<f64> = (0..w.class.len())
            .filter(|&i| w.class[i] == 1)
            .map(|i| w.arrival_s[i])
            .collect();
        // Evenly spaced at 3 req/s, whatever the chat requests between them.
        for g in batch.windows(2) {
            assert!((g[1] - g[0] - 1.0 / 3.0).abs() < 1e-9, "{g:?}");
        }
        let share = batch.len() as f64 / 20_000.0;
        assert!((share - 0.3).abs() < 0.01, "{share}");
        // Over the whole run the mix arrives at 10 req/s.
        let rate = 20_000.0 / w.arrival_s[19_999];
        assert!((rate - 10.0).abs() < 0.2, "{rate}");
        // Chat's gaps stay exponential: their CV is about 1.
        let chat: Vec<f64> = (0..w.class.len())
            .filter(|&i| w.class[i] == 0)
            .map(|i| w.arrival_s[i])
            .collect();
        let gaps: Vec<f64> = chat.windows(2).map(|g| g[1] - g[0]).collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
        assert!((sd / mean - 1.0).abs() < 0.05, "chat CV {}", sd / mean);
        assert!((1.0 / mean - 7.0).abs() < 0.2, "chat rate {}", 1.0 / mean);
        // The same seed gives the same stream; without own arrivals the mix is as before.
        assert_eq!(m.generate_seeded(20_000, 5).arrival_s, w.arrival_s);
        m.classes[1].arrival = None;
        let plain = m.generate_seeded(2_000, 5);
        assert_eq!(
            plain.arrival_s,
            model(10.0).generate_seeded(2_000, 5).arrival_s
        );
    }

    #[test]
    fn a_class_replays_its_own_trace_at_its_share_of_the_rate() {
        // 10 req/s: chat by the stream's Poisson at 6; batch replays its own rows (bursts
        // of three a tenth of a second apart, then a pause) at 4, with their lengths.
        let mut m = model(10.0);
        let row = |t: f64, prompt: u32| TraceRow {
            arrival_s: t,
            prompt_tokens: prompt,
            output_tokens: prompt / 10,
            ..TraceRow::default()
        };
        let rows = vec![
            row(0.0, 3000),
            row(0.1, 3100),
            row(0.2, 3200),
            row(10.0, 3300),
            row(10.1, 3400),
            row(10.2, 3500),
        ];
        let traced = LengthSpec {
            dist: LengthDist::Trace,
            min: 1,
            max: 3500,
        };
        let chat = ClassDraw {
            share: 0.6,
            prompt: LengthSpec::ARTICLE_PROMPT,
            output: LengthSpec::ARTICLE_OUTPUT,
            arrival: None,
            prefix_tokens: 0,
            prefix_hit_rate: 0.0,
            prefix_segment: 0,
            trace: Vec::new(),
            prefix: PrefixModel::NONE,
        };
        let batch = ClassDraw {
            share: 0.4,
            prompt: traced,
            output: traced,
            arrival: Some(Arrival::Trace),
            trace: rows.clone(),
            ..chat.clone()
        };
        m.classes = vec![chat, batch];
        let w = m.generate_seeded(10_000, 3);
        assert!(w.arrival_s.is_sorted_by(|a, b| a <= b));
        let batch: Vec<usize> = (0..w.class.len()).filter(|&i| w.class[i] == 1).collect();
        // Its rows in order, lengths and all, round and round.
        for (j, &i) in batch.iter().enumerate() {
            let r = &rows[j % rows.len()];
            assert_eq!(
                (w.prompt_tokens[i], w.output_tokens[i]),
                (r.prompt_tokens, r.output_tokens)
            );
        }
        // At 4 req/s: six rows every 1.5 s, the pattern scaled (its bursts stay bursts).
        let t: Vec<f64> = batch.iter().map(|&i| w.arrival_s[i]).collect();
        let scale = 0.25 / (10.2 / 5.0);
        assert!((t[1] - t[0] - 0.1 * scale).abs() < 1e-9, "{:?}", &t[..4]);
        assert!((t[3] - t[2] - 9.8 * scale).abs() < 1e-9, "{:?}", &t[..4]);
        assert!((t[6] - t[0] - 1.5).abs() < 1e-9, "{:?}", &t[..7]);
        let share = batch.len() as f64 / w.class.len() as f64;
        assert!((share - 0.4).abs() < 0.01, "{share}");
    }

    #[test]
    fn a_class_keeps_its_sessions_in_a_stream_of_its_own() {
        // Chat (60%) with the plan's 200-token system prompt cached half the time, and an
        // agent (40%) in 5-turn sessions over a 2,000-token document of its own, 4 open
        // at once, replies cached for the next turn.
        let mut m = model(10.0);
        m.prefix_tokens = 200;
        m.prefix_hit_rate = 0.5;
        let chat = ClassDraw {
            share: 0.6,
            prompt: LengthSpec::ARTICLE_PROMPT,
            output: LengthSpec::ARTICLE_OUTPUT,
            arrival: None,
            prefix_tokens: 200,
            prefix_hit_rate: 0.5,
            prefix_segment: 0,
            trace: Vec::new(),
            prefix: PrefixModel::NONE,
        };
        let sessions = PrefixModel {
            sessions: 4,
            turns: 5,
            document_tokens: 2000,
            ..PrefixModel::NONE
        };
        let agent = ClassDraw {
            share: 0.4,
            prefix_tokens: 0,
            prefix_hit_rate: 0.0,
            prefix: sessions,
            ..chat.clone()
        };
        m.classes = vec![chat, agent.clone()];
        let n = 3_000;
        let w = m.generate_seeded(n, 11);
        let s = w.sharing.as_ref().expect("prefixes shared");
        assert_eq!(s.pinned, vec![(0, 200)], "chat's system prompt, pinned");
        assert!(s.replies_cached);
        assert_eq!(s.own_base as usize + n, s.segments as usize);
        // The agent's requests are its own stream's first ones, in order, lengths and
        // paths and all, its sessions moved past the typed prefix.
        let alone = {
            let mut own = m.class_model(&agent);
            own.rate_rps = 4.0;
            let first = Rng::new(11).next_u64();
            own.generate_seeded(n, first.wrapping_add(2u64.wrapping_mul(CLASS_STREAM)))
        };
        let a = alone.sharing.as_ref().expect("sessions");
        let agents: Vec<usize> = (0..n).filter(|&i| w.class[i] == 1).collect();
        assert!((agents.len() as f64 / n as f64 - 0.4).abs() < 0.03);
        for (j, &i) in agents.iter().enumerate() {
            assert_eq!(w.prompt_tokens[i], alone.prompt_tokens[j]);
            assert_eq!(w.output_tokens[i], alone.output_tokens[j]);
            let moved: Vec<(u32, u32)> = a
                .path(j)
                .iter()
                .map(|&(seg, t)| (seg - a.sessions_from + s.sessions_from, t))
                .collect();
            assert_eq!(s.path(i), moved.as_slice(), "request {i}");
            assert!(s
                .path(i)
                .iter()
                .all(|&(seg, _)| seg >= s.sessions_from && seg < s.own_base));
        }
        // A session's turns grow by the history: the second turn resends the document,
        // the first message and its reply.
        let first = agents[0];
        let seg = s.path(first)[0].0;
        let next = agents[1..]
            .iter()
            .copied()
            .find(|&i| s.path(i)[0].0 == seg)
            .expect("its next turn");
        assert!(s.path(next)[0].1 > s.path(first)[0].1 + w.output_tokens[first]);
        // Chat's hits hold the pinned prompt (all of it below the prompt's last token);
        // its misses hold nothing shared.
        let chats: Vec<usize> = (0..n).filter(|&i| w.class[i] == 0).collect();
        let hits = chats.iter().filter(|&&i| !s.path(i).is_empty()).count();
        assert!(
            (hits as f64 / chats.len() as f64 - 0.5).abs() < 0.05,
            "{hits}"
        );
        assert!(chats.iter().all(|&i| match s.path(i) {
            [] => w.cached_tokens[i] == 0,
            [(0, t)] => *t == 200.min(w.prompt_tokens[i] - 1) && w.cached_tokens[i] == *t,
            _ => false,
        }));
    }

    #[test]
    fn each_class_caches_its_own_prefix() {
        // An agent class whose 1,000-token prefix is always cached, a chat class that
        // shares the plan's 200-token system prompt half the time, and batch work with
        // none: each hit holds its class's segment, pinned from the start.
        let mut m = model(10.0);
        let class = |share, tokens, rate, segment| ClassDraw {
            share,
            prompt: LengthSpec::ARTICLE_PROMPT,
            output: LengthSpec::ARTICLE_OUTPUT,
            arrival: None,
            prefix_tokens: tokens,
            prefix_hit_rate: rate,
            prefix_segment: segment,
            trace: Vec::new(),
            prefix: PrefixModel::NONE,
        };
        m.classes = vec![
            class(0.3, 1000, 1.0, 1),
            class(0.5, 200, 0.5, 0),
            class(0.2, 0, 0.0, 0),
        ];
        let w = m.generate_seeded(4_000, 9);
        let s = w.sharing.as_ref().expect("prefixes shared");
        assert_eq!(s.pinned, vec![(0, 200), (1, 1000)]);
        assert_eq!(s.own_base, 2);
        let mut hits = [0usize; 3];
        let mut count = [0usize; 3];
        for i in 0..4_000 {
            let k = w.class[i] as usize;
            count[k] += 1;
            let path = &s.items[s.start[i] as usize..s.start[i + 1] as usize];
            let c = w.cached_tokens[i];
            match k {
                0 => {
                    assert_eq!(c, 1000.min(w.prompt_tokens[i] - 1), "agent {i}");
                    assert_eq!(path, &[(1, c)]);
                }
                1 => assert!(c == 0 || c == 200.min(w.prompt_tokens[i] - 1)),
                _ => assert_eq!(c, 0, "batch caches nothing"),
            }
            if c > 0 {
                hits[k] += 1;
                assert_eq!(path.len(), 1);
            }
        }
        let chat = hits[1] as f64 / count[1] as f64;
        assert!((chat - 0.5).abs() < 0.05, "chat hit rate {chat}");
        // The same with its own arrivals for batch: the prefixes follow the merge.
        m.classes[2].arrival = Some(Arrival::Constant);
        let merged = m.generate_seeded(4_000, 9);
        let s = merged.sharing.as_ref().expect("prefixes shared");
        for i in 0..4_000 {
            let c = merged.cached_tokens[i];
            let path = &s.items[s.start[i] as usize..s.start[i + 1] as usize];
            match merged.class[i] {
                0 => assert_eq!(path, &[(1, c)]),
                2 => assert_eq!(c, 0),
                _ => {}
            }
        }
        // No class caching: no prefixes at all, as before.
        for c in &mut m.classes {
            c.prefix_hit_rate = 0.0;
            c.arrival = None;
        }
        let none = m.generate_seeded(1_000, 9);
        assert!(none.sharing.is_none() && none.cached_tokens.is_empty());
    }

    #[test]
    fn floor_exp_equals_libm() {
        let mut r = Rng::new(11);
        for _ in 0..300_000 {
            let x = -3.0 + 20.0 * r.next_f64();
            assert_eq!(
                floor_exp(x).to_bits(),
                libm::floor(libm::exp(x)).to_bits(),
                "x = {x}"
            );
        }
        // Right at the integer boundaries, where the floor flips.
        for k in 1..20_000u32 {
            let l = libm::log(k as f64);
            for x in [
                l,
                f64::from_bits(l.to_bits() + 1),
                f64::from_bits(l.to_bits().saturating_sub(1)),
            ] {
                assert_eq!(floor_exp(x), libm::floor(libm::exp(x)), "x = {x}");
            }
        }
        for x in [-800.0, -700.0, 0.0, 700.0, 710.0] {
            assert_eq!(floor_exp(x), libm::floor(libm::exp(x)));
        }
    }

    /// The vectorised pass, completed by the exact fallback where it flags one, is
    /// `floor_exp` bit for bit: random arguments, integer boundaries, out of range.
    #[test]
    fn batched_floor_exp_equals_floor_exp() {
        let mut r = Rng::new(12);
        let mut xs: Vec<f64> = (0..200_000).map(|_| -5.0 + 25.0 * r.next_f64()).collect();
        for k in 1..20_000u32 {
            let l = libm::log(k as f64);
            xs.extend([
                l,
                f64::from_bits(l.to_bits() + 1),
                f64::from_bits(l.to_bits().saturating_sub(1)),
            ]);
        }
        xs.extend([
            -800.0,
            -700.0,
            -699.9,
            0.0,
            -0.0,
            699.9,
            700.0,
            710.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ]);
        let mut flagged = 0;
        for (i, &x) in xs.iter().enumerate() {
            let k = floor_exp_fast(x);
            let got = if k.is_nan() {
                // Counted at lengths below 22,000 only: the integer boundaries, the
                // out-of-range values and huge values (tolerance above 1e-5) are
                // meant to be flagged.
                flagged += (i < 200_000 && x < 10.0) as u32;
                libm::floor(libm::exp(x))
            } else {
                k
            };
            assert_eq!(got.to_bits(), floor_exp(x).to_bits(), "x = {x}");
        }
        assert!(flagged < 20, "{flagged} of the random arguments flagged");
    }

    /// The workload drawn as the draws come, each gap at the rate itself (`t +=
    /// mean_gap × exponential`, `t += gamma(shape, mean_gap / shape)`): the reference that
    /// `generate` and `generate_seeded` must equal bit for bit.
    fn drawn_at_rate(m: &TrafficModel, n: usize, seed: u64) -> Workload {
        let mut rng = Rng::new(seed);
        let mean_gap = 1.0 / m.rate_rps;
        let mut t = 0.0;
        let arrival_s = (0..n)
            .map(|i| match m.arrival {
                Arrival::Poisson => {
                    t += mean_gap * rng.standard_exponential();
                    t
                }
                Arrival::Gamma { cv } => {
                    let shape = 1.0 / (cv * cv);
                    t += rng.gamma(shape, mean_gap / shape);
                    t
                }
                Arrival::Constant => (i + 1) as f64 * mean_gap,
                _ => 0.0,
            })
            .collect();
        let mut w = Workload {
            arrival_s,
            ..Workload::default()
        };
        m.fill_rest(n, &mut rng, &mut w.prompt_tokens, &mut w.output_tokens);
        w.cached_tokens = m.prefix_hits(&w.prompt_tokens, &mut rng);
        w
    }

    /// The per-thread store of rate-free draws changes nothing: every arrival kind, with
    /// and without prefix hits, at rates taken in turn (so later ones hit the store),
    /// equals drawing at each rate directly, bit for bit.
    #[test]
    fn stored_draws_equal_drawing_at_each_rate() {
        let arrivals = [
            Arrival::Poisson,
            Arrival::Gamma { cv: 0.7 },
            Arrival::Gamma { cv: 1.6 },
            Arrival::Constant,
            Arrival::Closed {
                concurrency: 4,
                think_s: 0.5,
            },
        ];
        for arrival in arrivals {
            for (prefix_tokens, prefix_hit_rate) in [(0, 0.0), (300, 0.4)] {
                for round in 0..2 {
                    for (k, rate) in [3.0, 17.5, 0.9].into_iter().enumerate() {
                        let mut m = model(rate);
                        m.arrival = arrival;
                        m.prefix_tokens = prefix_tokens;
                        m.prefix_hit_rate = prefix_hit_rate;
                        let seed = 40 + k as u64 % 2;
                        let want = drawn_at_rate(&m, 3_000, seed);
                        let bits = |w: &Workload| {
                            w.arrival_s.iter().map(|a| a.to_bits()).collect::<Vec<_>>()
                        };
                        let direct = m.generate(3_000, &mut Rng::new(seed));
                        let stored = m.generate_seeded(3_000, seed);
                        let what = format!(
                            "{arrival:?}, prefix {prefix_tokens}, rate {rate}, round {round}"
                        );
                        assert_eq!(bits(&direct), bits(&want), "generate: {what}");
                        assert_eq!(bits(&stored), bits(&want), "generate_seeded: {what}");
                        assert_eq!(stored.prompt_tokens, want.prompt_tokens, "{what}");
                        assert_eq!(stored.output_tokens, want.output_tokens, "{what}");
                        assert_eq!(stored.cached_tokens, want.cached_tokens, "{what}");
                        assert_eq!(direct, stored, "{what}");
                    }
                }
            }
        }
        // A different request count or length law is a different draw, not a stored one.
        let m = model(5.0);
        let short = m.generate_seeded(10, 40);
        assert_eq!(short, m.generate(10, &mut Rng::new(40)));
        let mut longer = model(5.0);
        longer.prompt.max = 4_000;
        assert_eq!(
            longer.generate_seeded(3_000, 40),
            longer.generate(3_000, &mut Rng::new(40))
        );
    }

    #[test]
    fn article_traffic_has_the_article_moments() {
        let w = model(20.0).generate(100_000, &mut Rng::new(3));
        let n = w.arrival_s.len() as f64;
        let rate = n / w.arrival_s[w.arrival_s.len() - 1];
        assert!((rate - 20.0).abs() < 0.3, "rate {rate}");
        assert!(w.arrival_s.windows(2).all(|p| p[0] <= p[1]));
        let mut p = w.prompt_tokens.clone();
        p.sort_unstable();
        let median = p[p.len() / 2];
        // floor() shifts the median down by about half a token.
        assert!((780..=820).contains(&median), "prompt median {median}");
        let mean_p = p.iter().map(|&x| x as f64).sum::<f64>() / n;
        assert!(
            (1050.0..1150.0).contains(&mean_p),
            "prompt mean {mean_p} (article: about 1,100)"
        );
        assert!(p[0] >= 16 && p[p.len() - 1] <= 8000);
        let mean_o = w.output_tokens.iter().map(|&x| x as f64).sum::<f64>() / n;
        assert!(
            (260.0..290.0).contains(&mean_o),
            "output mean {mean_o} (article: about 275)"
        );
        assert!(w.output_tokens.iter().all(|&o| (1..=1024).contains(&o)));
    }

    #[test]
    fn gamma_constant_and_trace_arrivals() {
        let mut m = model(10.0);
        m.arrival = Arrival::Gamma { cv: 2.0 };
        let w = m.generate(50_000, &mut Rng::new(5));
        let gaps: Vec<f64> = std::iter::once(w.arrival_s[0])
            .chain(w.arrival_s.windows(2).map(|p| p[1] - p[0]))
            .collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let sd =
            (gaps.iter().map(|g| (g - mean) * (g - mean)).sum::<f64>() / gaps.len() as f64).sqrt();
        assert!((mean - 0.1).abs() < 0.005, "gamma mean gap {mean}");
        assert!((sd / mean - 2.0).abs() < 0.15, "gamma cv {}", sd / mean);

        m.arrival = Arrival::Constant;
        let w = m.generate(3, &mut Rng::new(5));
        assert_eq!(w.arrival_s, vec![0.1, 0.2, 0.30000000000000004]);

        m.arrival = Arrival::Trace;
        m.prompt.dist = LengthDist::Trace;
        m.output.dist = LengthDist::Trace;
        m.trace = vec![
            TraceRow {
                arrival_s: 5.0,
                prompt_tokens: 100,
                output_tokens: 10,
                ..TraceRow::default()
            },
            TraceRow {
                arrival_s: 6.0,
                prompt_tokens: 20_000,
                output_tokens: 0,
                ..TraceRow::default()
            },
            TraceRow {
                arrival_s: 7.0,
                prompt_tokens: 300,
                output_tokens: 30,
                ..TraceRow::default()
            },
        ];
        // The trace's own rate is 1/s; at 10/s gaps shrink tenfold and it repeats.
        let w = m.generate(4, &mut Rng::new(5));
        assert_eq!(w.arrival_s, vec![0.0, 0.1, 0.2, 0.3]);
        assert_eq!(w.prompt_tokens, vec![100, 8000, 300, 100]);
        assert_eq!(w.output_tokens, vec![10, 1, 30, 10]);
    }

    #[test]
    fn a_trace_with_block_ids_shares_its_blocks() {
        let mut m = model(1.0);
        m.arrival = Arrival::Trace;
        m.prompt.dist = LengthDist::Trace;
        m.output.dist = LengthDist::Trace;
        // Typed hits are ignored once the rows name their blocks.
        m.prefix_tokens = 400;
        m.prefix_hit_rate = 1.0;
        let row = |t: f64, prompt: u32, blocks: &[u32]| TraceRow {
            arrival_s: t,
            prompt_tokens: prompt,
            output_tokens: 5,
            blocks: blocks.to_vec(),
        };
        // Ids as a trace numbers them (7 is a system prompt every row starts with); the
        // third row's prompt stops inside its second block, so its third id is not used.
        m.trace = vec![
            row(0.0, 1_100, &[7, 8, 9]),
            row(1.0, 600, &[7, 5]),
            row(2.0, 700, &[7, 8, 3]),
        ];
        let w = m.generate(4, &mut Rng::new(1));
        assert!(w.cached_tokens.is_empty());
        let s = w.sharing.expect("the blocks are shared");
        // Segments by first meeting: 7→0, 8→1, 9→2, 5→3; the repeat of the first row
        // (request 3) meets its ids anew: 4, 5, 6.
        assert_eq!(s.path(0), &[(0, 512), (1, 512), (2, 76)]);
        assert_eq!(s.path(1), &[(0, 512), (3, 88)]);
        assert_eq!(s.path(2), &[(0, 512), (1, 188)]);
        assert_eq!(s.path(3), &[(4, 512), (5, 512), (6, 76)]);
        assert_eq!((s.own_base, s.segments), (7, 11));
        assert!(s.pinned.is_empty() && s.preloaded.is_empty() && !s.replies_cached);
        // Lengths from the trace, blocks or not.
        m.trace.iter_mut().for_each(|r| r.blocks.clear());
        assert!(!m.replays_blocks());
        let plain = m.generate(4, &mut Rng::new(1));
        assert_eq!(plain.prompt_tokens, vec![1_100, 600, 700, 1_100]);
    }

    #[test]
    fn prefix_hits_skip_tokens_but_not_the_last() {
        let mut m = model(10.0);
        m.prompt.dist = LengthDist::Fixed { tokens: 500 };
        m.prefix_tokens = 400;
        m.prefix_hit_rate = 0.5;
        let w = m.generate(10_000, &mut Rng::new(9));
        let hits = w.cached_tokens.iter().filter(|&&c| c == 400).count();
        assert!((4700..5300).contains(&hits), "hits {hits}");
        assert!(w.cached_tokens.iter().all(|&c| c == 0 || c == 400));
        m.prefix_tokens = 1000;
        m.prefix_hit_rate = 1.0;
        let w = m.generate(3, &mut Rng::new(9));
        assert_eq!(w.cached_tokens, vec![499, 499, 499]);
    }

    #[test]
    fn a_lead_in_slows_the_first_requests_and_pauses_before_the_rest() {
        let plain = model(10.0);
        let mut led = plain.clone();
        led.lead_in = Some(LeadIn {
            requests: 5,
            rate_scale: 0.25,
            pause_s: 100.0,
        });
        let a = plain.generate(20, &mut Rng::new(3));
        let b = led.generate(20, &mut Rng::new(3));
        assert_eq!(b, led.generate_seeded(20, 3));
        assert_eq!(a.prompt_tokens, b.prompt_tokens);
        assert_eq!(a.output_tokens, b.output_tokens);
        for i in 0..5 {
            assert_eq!(b.arrival_s[i], a.arrival_s[i] * 4.0, "lead-in request {i}");
        }
        for i in 5..20 {
            let gap = |w: &Workload| w.arrival_s[i] - w.arrival_s[i - 1];
            let want = if i == 5 { 100.0 + gap(&a) } else { gap(&a) };
            assert!((gap(&b) - want).abs() < 1e-9, "gap before request {i}");
        }
        // Trace and closed-loop arrivals keep their own times.
        let mut closed = led.clone();
        closed.arrival = Arrival::Closed {
            concurrency: 4,
            think_s: 0.0,
        };
        let c = closed.generate(20, &mut Rng::new(3));
        assert!(c.arrival_s.iter().all(|&t| t == 0.0));
    }

    #[test]
    fn rate_steps_give_the_piecewise_counts() {
        // 100 s at 5/s, 100 s with no arrivals, 100 s at 20/s, then the base rate (10/s).
        let mut m = model(10.0);
        m.rate_steps = vec![
            RateStep {
                duration_s: 100.0,
                rate_rps: 5.0,
            },
            RateStep {
                duration_s: 100.0,
                rate_rps: 0.0,
            },
            RateStep {
                duration_s: 100.0,
                rate_rps: 20.0,
            },
        ];
        let mut counts = [0u32; 4];
        let reps = 200;
        for seed in 0..reps {
            let w = m.generate(4_500, &mut Rng::new(seed));
            assert!(w.arrival_s.windows(2).all(|p| p[0] <= p[1]));
            for &t in &w.arrival_s {
                let k = if t < 100.0 {
                    0
                } else if t < 200.0 {
                    1
                } else if t < 300.0 {
                    2
                } else if t < 400.0 {
                    3
                } else {
                    continue;
                };
                counts[k] += 1;
            }
        }
        let mean = counts.map(|c| c as f64 / reps as f64);
        assert!((mean[0] - 500.0).abs() < 5.0, "step 1: {mean:?}");
        assert_eq!(mean[1], 0.0, "a zero-rate step has no arrivals");
        assert!((mean[2] - 2000.0).abs() < 10.0, "step 3: {mean:?}");
        assert!((mean[3] - 1000.0).abs() < 8.0, "after the steps: {mean:?}");

        // Constant arrivals follow the cumulative rate exactly.
        m.arrival = Arrival::Constant;
        let w = m.generate(4, &mut Rng::new(1));
        assert_eq!(w.arrival_s, vec![0.2, 0.4, 0.6000000000000001, 0.8]);
        // No steps: the constant-rate stream is unchanged.
        m.rate_steps.clear();
        m.arrival = Arrival::Poisson;
        let a = m.generate(1_000, &mut Rng::new(7));
        let mut mean_gap = 0.0;
        let z = crate::rng::Ziggurat::get();
        let mut r = Rng::new(7);
        let mut t = 0.0;
        for &x in &a.arrival_s {
            t += 0.1 * r.exponential_with(z);
            assert_eq!(x.to_bits(), t.to_bits());
            mean_gap = t;
        }
        assert!(mean_gap > 0.0);
    }
}
