//! The plan's few kinds the simulator reads: the arrival process, the length laws, a
//! replayed trace's rows, the SLO mode and the KV-cache policy. `goodput_core::plan`
//! re-exports them; the plan, its validation and its field registry live there.

use crate::tagged::Tagged;
use serde::{Deserialize, Serialize};

/// How request arrivals are spaced in time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Arrival {
    /// Exponential gaps (open-loop Poisson process).
    #[default]
    Poisson,
    /// Gamma-distributed gaps with coefficient of variation `cv` (1 = Poisson, > 1 = bursty).
    Gamma {
        /// Coefficient of variation of the gaps.
        cv: f64,
    },
    /// Evenly spaced arrivals.
    Constant,
    /// Arrival times taken from the plan's trace rows (`traffic.trace`), scaled to the requested rate.
    Trace,
    /// Closed loop: `concurrency` clients, each sending its next request `think_s` after
    /// its previous one ended (a benchmark's `--max-concurrency` with every request ready
    /// at once). The arrival rate is an outcome here, not an input: a simulation ignores
    /// the rate it is given, and the goodput search, which asks about open-loop
    /// production traffic, runs Poisson arrivals at the same lengths instead.
    Closed {
        /// Clients, each with at most one request outstanding.
        concurrency: u32,
        /// Pause between one request's end and the same client's next request [s].
        think_s: f64,
    },
}

impl<'de> Deserialize<'de> for Arrival {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut t = Tagged::read(d)?;
        Ok(match t.kind() {
            "poisson" => Arrival::Poisson,
            "gamma" => Arrival::Gamma { cv: t.field("cv")? },
            "constant" => Arrival::Constant,
            "trace" => Arrival::Trace,
            "closed" => Arrival::Closed {
                concurrency: t.field("concurrency")?,
                think_s: t.field("think_s")?,
            },
            _ => return Err(t.unknown(&["poisson", "gamma", "constant", "trace", "closed"])),
        })
    }
}

impl Arrival {
    /// The lowercase name used on the command line and in plan files.
    pub fn name(self) -> &'static str {
        match self {
            Arrival::Poisson => "poisson",
            Arrival::Gamma { .. } => "gamma",
            Arrival::Constant => "constant",
            Arrival::Trace => "trace",
            Arrival::Closed { .. } => "closed",
        }
    }

    /// Whether requests arrive at a rate whose gaps the rate scales (Poisson, gamma and
    /// constant gaps), rather than as a trace replays them or as clients send them.
    pub fn spaced_by_rate(self) -> bool {
        matches!(
            self,
            Arrival::Poisson | Arrival::Gamma { .. } | Arrival::Constant
        )
    }

    /// The open-loop process the goodput search uses for this arrival: itself, or
    /// Poisson for a closed loop.
    pub fn open_loop(self) -> Arrival {
        match self {
            Arrival::Closed { .. } => Arrival::Poisson,
            a => a,
        }
    }
}

/// A token-length distribution, clipped to `[min, max]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LengthSpec {
    /// Shape of the distribution.
    pub dist: LengthDist,
    /// Smallest length after clipping [tokens].
    pub min: u32,
    /// Largest length after clipping [tokens]; for outputs this is the `max_tokens` cap.
    pub max: u32,
}

impl LengthSpec {
    /// The article's prompt lengths: lognormal, median 800, sigma 0.8, within 16..8000
    /// (the default).
    pub const ARTICLE_PROMPT: LengthSpec = LengthSpec {
        dist: LengthDist::LogNormal {
            median: 800.0,
            sigma: 0.8,
        },
        min: 16,
        max: 8000,
    };
    /// The article's output lengths: lognormal, median 200, sigma 0.8, within 1..1024.
    pub const ARTICLE_OUTPUT: LengthSpec = LengthSpec {
        dist: LengthDist::LogNormal {
            median: 200.0,
            sigma: 0.8,
        },
        min: 1,
        max: 1024,
    };
}

impl Default for LengthSpec {
    fn default() -> Self {
        LengthSpec::ARTICLE_PROMPT
    }
}

/// Shape of a length distribution.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum LengthDist {
    /// Lognormal with the given median [tokens] and log-space sigma; values are truncated to integers.
    LogNormal {
        /// Median length [tokens].
        median: f64,
        /// Standard deviation of ln(length).
        sigma: f64,
    },
    /// Every request has the same length.
    Fixed {
        /// The length [tokens].
        tokens: u32,
    },
    /// Lengths are taken from the trace rows.
    Trace,
}

impl<'de> Deserialize<'de> for LengthDist {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut t = Tagged::read(d)?;
        Ok(match t.kind() {
            "lognormal" => LengthDist::LogNormal {
                median: t.field("median")?,
                sigma: t.field("sigma")?,
            },
            "fixed" => LengthDist::Fixed {
                tokens: t.field("tokens")?,
            },
            "trace" => LengthDist::Trace,
            _ => return Err(t.unknown(&["lognormal", "fixed", "trace"])),
        })
    }
}

/// The standard normal's 95th percentile: a lognormal's p95 is `median · e^(Z95·σ)`.
pub const Z95: f64 = 1.644_853_626_951_472_2;

impl LengthDist {
    /// The lognormal sigma whose 95th percentile is `p95` for the given `median`.
    pub fn sigma_from_p95(median: f64, p95: f64) -> f64 {
        libm::log(p95 / median) / Z95
    }

    /// The 95th percentile of a lognormal with this `median` and `sigma`, the inverse of
    /// [`LengthDist::sigma_from_p95`].
    pub fn p95_from_sigma(median: f64, sigma: f64) -> f64 {
        median * libm::exp(Z95 * sigma)
    }
}

/// Tokens per block of a trace's block ids ([`TraceRow::blocks`]): Mooncake's traces
/// hash prompts in blocks of 512 tokens.
pub const TRACE_BLOCK_TOKENS: u32 = 512;

/// One request of a replayed trace.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TraceRow {
    /// Arrival time from the start of the trace [s].
    pub arrival_s: f64,
    /// Prompt length [tokens].
    pub prompt_tokens: u32,
    /// Output length [tokens].
    pub output_tokens: u32,
    /// The prompt's blocks of [`TRACE_BLOCK_TOKENS`] tokens by id, first block first
    /// (Mooncake's `hash_ids`): two rows whose first `k` ids agree share their first
    /// `k` blocks, so a prefix cache that holds them serves the second from the first.
    /// The last block may be partial. Empty: the trace says nothing of shared prefixes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocks: Vec<u32>,
}

/// How an SLO's objectives are checked against the target share.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum SloMode {
    /// A request counts when it meets every objective at once; attainment is the share
    /// of such requests (the articles' definition).
    #[default]
    Joint,
    /// Each objective is a percentile on its own: the share of requests meeting it must
    /// reach the target, objective by objective. Attainment is the smallest of those
    /// shares, so "p99 TTFT ≤ 1 s and p99 TPOT ≤ 60 ms" is target 0.99 in this mode.
    Marginal,
}

impl SloMode {
    /// Every mode, in the order the choices list them.
    pub const ALL: [SloMode; 2] = [SloMode::Joint, SloMode::Marginal];

    /// Whether this is the default, [`SloMode::Joint`] (left out of plan files and links).
    pub fn is_joint(&self) -> bool {
        *self == SloMode::Joint
    }

    /// The lowercase name used on the command line and in plan files.
    pub fn name(self) -> &'static str {
        match self {
            SloMode::Joint => "joint",
            SloMode::Marginal => "marginal",
        }
    }

    /// Reads a mode's name.
    pub fn parse(s: &str) -> Option<SloMode> {
        SloMode::ALL.into_iter().find(|m| m.name() == s)
    }
}

/// How the engine handles KV-cache memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum KvPolicy {
    /// No memory limit (the article's reference scheduler).
    None,
    /// Admit a request only if its prompt plus `max_tokens` fit in free KV memory.
    Reserve,
    /// Allocate tokens as they grow; preempt the newest sequence (recompute) when memory runs out.
    #[default]
    Paged,
}

impl KvPolicy {
    /// Every policy.
    pub const ALL: [KvPolicy; 3] = [KvPolicy::None, KvPolicy::Reserve, KvPolicy::Paged];

    /// The lowercase name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            KvPolicy::None => "none",
            KvPolicy::Reserve => "reserve",
            KvPolicy::Paged => "paged",
        }
    }

    /// Reads a policy's name.
    pub fn parse(s: &str) -> Option<KvPolicy> {
        KvPolicy::ALL.into_iter().find(|k| k.name() == s)
    }
}

/// How a fleet's router picks a replica for each request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FleetRouter {
    /// The replicas in turn.
    #[default]
    RoundRobin,
    /// A replica at random.
    Random,
    /// The replica with the fewest requests, running and waiting.
    LeastLoaded,
    /// Every turn of a session to one replica, by a hash of the session.
    SessionAffinity,
    /// The best score of cached prefix, free KV memory and queue (llm-d's precise
    /// prefix-cache profile).
    PrefixAware,
}

impl FleetRouter {
    /// Every router, in the order pages list them.
    pub const ALL: [FleetRouter; 5] = [
        FleetRouter::RoundRobin,
        FleetRouter::Random,
        FleetRouter::LeastLoaded,
        FleetRouter::SessionAffinity,
        FleetRouter::PrefixAware,
    ];

    /// The router's name in plans and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            FleetRouter::RoundRobin => "round_robin",
            FleetRouter::Random => "random",
            FleetRouter::LeastLoaded => "least_loaded",
            FleetRouter::SessionAffinity => "session_affinity",
            FleetRouter::PrefixAware => "prefix_aware",
        }
    }

    /// Reads a router's name (a dash for the underscore is accepted).
    pub fn parse(s: &str) -> Option<FleetRouter> {
        let s = s.trim().replace('-', "_");
        FleetRouter::ALL.into_iter().find(|r| r.name() == s)
    }
}

/// How many replicas a simulation spreads its requests over, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fleet {
    /// Replicas simulated together (1: a single replica, no router).
    pub replicas: u32,
    /// How requests are spread over them.
    pub router: FleetRouter,
}

impl Fleet {
    /// One replica.
    pub const ONE: Fleet = Fleet {
        replicas: 1,
        router: FleetRouter::RoundRobin,
    };

    /// Whether requests are routed over several replicas.
    pub fn is_routed(&self) -> bool {
        self.replicas > 1
    }
}

impl Default for Fleet {
    fn default() -> Self {
        Fleet::ONE
    }
}
