//! What one simulation runs on, resolved to numbers, and what it reports.
//! `goodput_core::sim` builds a configuration from a plan, checks it, and runs it.

use serde::{Deserialize, Serialize};

use crate::kinds::{Fleet, KvPolicy, SloMode};
use crate::stats::Summary;
use crate::step::StepModel;
use crate::traffic::TrafficModel;

/// The latency objectives, resolved. `None` objectives always pass.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SloTargets {
    /// TTFT objective [s].
    pub ttft_s: Option<f64>,
    /// TPOT (per-request mean) objective [s].
    pub tpot_s: Option<f64>,
    /// End-to-end objective [s].
    pub e2e_s: Option<f64>,
    /// How the objectives combine into attainment.
    #[serde(default)]
    pub mode: SloMode,
}

impl SloTargets {
    /// True when a request with these latencies meets every objective.
    pub fn meets(&self, ttft_s: f64, tpot_s: f64, e2e_s: f64) -> bool {
        let [a, b, c] = self.meets_each(ttft_s, tpot_s, e2e_s);
        a && b && c
    }

    /// Whether a request with these latencies meets the TTFT, TPOT and E2E objectives,
    /// each on its own (an objective that is not set is met).
    pub fn meets_each(&self, ttft_s: f64, tpot_s: f64, e2e_s: f64) -> [bool; 3] {
        [
            self.ttft_s.is_none_or(|x| ttft_s <= x),
            self.tpot_s.is_none_or(|x| tpot_s <= x),
            self.e2e_s.is_none_or(|x| e2e_s <= x),
        ]
    }

    /// Attainment from counts over `measured` requests [0..1]: `joint` requests met
    /// every objective, `each[k]` met objective k (TTFT, TPOT, E2E). Joint mode gives
    /// `joint / measured`; marginal mode the smallest `each[k] / measured` over the
    /// objectives set (with none set, the same as joint: the share that finished).
    pub fn attainment(&self, measured: u32, joint: u32, each: [u32; 3]) -> f64 {
        if measured == 0 {
            return 0.0;
        }
        let share = |k: u32| k as f64 / measured as f64;
        match self.mode {
            SloMode::Joint => share(joint),
            SloMode::Marginal => {
                let set = [self.ttft_s, self.tpot_s, self.e2e_s].map(|o| o.is_some());
                let worst = (0..3).filter(|&k| set[k]).map(|k| each[k]).min();
                share(worst.unwrap_or(joint))
            }
        }
    }
}

/// Most traffic classes one simulation schedules.
pub const MAX_CLASSES: usize = 8;

/// How the engine schedules and judges one traffic class of a mixed workload
/// ([`SimConfig::classes`]; the class's lengths and share are its traffic's,
/// [`crate::traffic::ClassDraw`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ClassRule {
    /// Scheduling priority: waiting requests are admitted lowest number first (then
    /// in arrival order), and under KV pressure the highest number is preempted first.
    pub priority: u32,
    /// The class's latency objectives.
    pub slo: SloTargets,
    /// How far the class's attainment target lies above the plan's [0..1]: the mix's
    /// attainment is the smallest, over the classes, of each one's attainment less this
    /// (0 where the class keeps the plan's target).
    pub target_above_plan: f64,
}

impl ClassRule {
    /// The class's attainment under its objectives, from the counts of its `measured`
    /// requests (`joint` met every objective, `each[k]` objective k); 1 for a class with
    /// no measured request (nothing to judge, as the mix does not judge it).
    pub fn attainment(&self, measured: u32, joint: u32, each: [u32; 3]) -> f64 {
        if measured == 0 {
            return 1.0;
        }
        self.slo.attainment(measured, joint, each)
    }
}

/// A mix's attainment from its classes' (measured requests, attainment), in the order of
/// `rules`: the worst class's, less the amount its target lies above the plan's, of the
/// classes with a measured request; clamped to [0, 1] (against a target in (0, 1] it
/// passes and fails as unclamped); 0 when no class has one.
pub fn mix_attainment(classes: impl IntoIterator<Item = (u32, f64)>, rules: &[ClassRule]) -> f64 {
    let mut worst = f64::INFINITY;
    for ((measured, attained), rule) in classes.into_iter().zip(rules) {
        if measured > 0 {
            let a = attained - rule.target_above_plan;
            if a < worst {
                worst = a;
            }
        }
    }
    if worst.is_finite() {
        worst.clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// Everything one simulation needs, fully resolved to numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// The roofline step-time model.
    pub step: StepModel,
    /// Most sequences running at once.
    pub max_num_seqs: u32,
    /// Token budget per step [tokens].
    pub max_num_batched_tokens: u32,
    /// Chunked prefill; off runs each scheduled prompt whole in one step.
    pub chunked_prefill: bool,
    /// KV-cache memory policy.
    pub kv_policy: KvPolicy,
    /// KV-cache capacity of the replica [tokens]; unused with [`KvPolicy::None`].
    pub kv_capacity_tokens: f64,
    /// Speculative draft length k (0 = off) [tokens].
    pub spec_draft_tokens: u32,
    /// Per-token draft acceptance probability α [0..1].
    pub spec_acceptance: f64,
    /// The traffic at the simulated rate.
    pub traffic: TrafficModel,
    /// The latency objectives.
    pub slo: SloTargets,
    /// Requests simulated, warm-up included.
    pub num_requests: u32,
    /// Requests dropped from the front, in generated order.
    pub warmup_requests: u32,
    /// Step cap; reaching it stops the run and marks it truncated.
    pub max_steps: u64,
    /// Replicas simulated together behind a router ([`Fleet::ONE`]: one replica); the
    /// traffic, requests and warm-up above are each replica's.
    pub fleet: Fleet,
    /// Traffic classes, one per entry of [`TrafficModel::classes`], in the same order.
    /// Empty (the usual case): one class, admitted first-come-first-served and judged
    /// by `slo`. With classes, waiting requests are admitted by priority, then arrival;
    /// each request is judged by its class's objectives; and the attainment is the
    /// worst class's ([`ClassRule::target_above_plan`]).
    pub classes: Vec<ClassRule>,
}

impl SimConfig {
    /// Expected tokens one decoder produces per step: `(1 − α^(k+1)) / (1 − α)`
    /// with speculation (k drafted tokens, acceptance α), else 1.
    pub fn tokens_per_decode_step(&self) -> f64 {
        tokens_per_step(self.spec_draft_tokens, self.spec_acceptance)
    }
}

/// Expected tokens one decoder produces per step when `k` tokens are drafted and each
/// is accepted with probability `a`, in order, the first rejection ending the run (the
/// verifier's own token always counts): `1 + a + … + a^k = (1 − a^(k+1)) / (1 − a)`;
/// 1 without a draft.
pub fn tokens_per_step(k: u32, a: f64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    // `k + 1` in floating point: the same value for every draft the simulator runs, and
    // no overflow for any other.
    let steps = f64::from(k) + 1.0;
    if a >= 1.0 {
        return steps;
    }
    (1.0 - libm::pow(a, steps)) / (1.0 - a)
}

/// The acceptance `a` at which `k` drafted tokens give `tokens` per step: the inverse of
/// [`tokens_per_step`] in `a`, which rises from 1 at `a = 0` to `k + 1` at `a = 1`.
/// A measured run's tokens per step (vLLM's acceptance length) outside that range is
/// clamped to it. Found by 64 bisections, so the same bits on every target.
pub fn acceptance_for(k: u32, tokens: f64) -> f64 {
    if k == 0 || tokens.is_nan() || tokens <= 1.0 {
        return 0.0;
    }
    if tokens >= f64::from(k) + 1.0 {
        return 1.0;
    }
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..64 {
        let mid = 0.5 * (lo + hi);
        if tokens_per_step(k, mid) < tokens {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// Most samples of [`SimReport::cache_timeline`].
pub const CACHE_TIMELINE_POINTS: usize = 256;

/// The KV memory and the prefix cache at one step boundary.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CacheSample {
    /// Simulated time [s].
    pub t_s: f64,
    /// Tokens the running requests hold on their own (their context beyond the cached
    /// prefixes they share) [tokens].
    pub private_tokens: f64,
    /// Cached tokens some running request holds (or a pin keeps): shared prefixes in use
    /// [tokens].
    pub shared_tokens: f64,
    /// Cached tokens nobody holds: kept for later requests, evicted first [tokens].
    pub idle_tokens: f64,
    /// Share of the prompt tokens looked up since the previous sample that the cache
    /// held (NaN when none were looked up) [0..1].
    pub hit_rate: f64,
}

/// One traffic class's results ([`SimReport::classes`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassReport {
    /// Share of the class's measured requests meeting its objectives, per its SLO's
    /// mode; unfinished ones are misses; 1 when the run measured none of its requests
    /// [0..1].
    pub attainment: f64,
    /// Time to first token of the class's measured finished requests [s].
    pub ttft_s: Summary,
    /// Time per output token (per-request mean) [s].
    pub tpot_s: Summary,
    /// End-to-end latency [s].
    pub e2e_s: Summary,
    /// The class's measured requests.
    pub measured_requests: u32,
    /// Of them, those that did not finish.
    pub unfinished_requests: u32,
    /// Prompt and output tokens of the class's measured requests: what its share of
    /// the GPU time is split by [tokens].
    pub tokens: u64,
}

/// Results of one simulation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimReport {
    /// SLO attainment of the measured requests, per [`SloTargets::mode`]: the share that
    /// met every objective (joint) or the smallest share meeting one objective
    /// (marginal); unfinished ones are misses [0..1].
    pub attainment: f64,
    /// Time to first token of measured finished requests [s].
    pub ttft_s: Summary,
    /// Time per output token (per-request mean) [s].
    pub tpot_s: Summary,
    /// End-to-end latency [s].
    pub e2e_s: Summary,
    /// Inter-token latency: every step duration each measured decoder lived through [s].
    pub itl_s: Summary,
    /// Requests counted (after warm-up).
    pub measured_requests: u32,
    /// Measured requests that did not finish (truncated run or refused for KV memory).
    pub unfinished_requests: u32,
    /// Requests (measured or not) dropped because they alone exceed the KV capacity.
    pub rejected_requests: u32,
    /// Output tokens of all finished requests over the simulated time [tokens/s].
    pub output_tokens_per_s: f64,
    /// Achieved throughput: measured requests finished, over the time from the first
    /// measured request's arrival to the end of the run (0 when that span is empty). For
    /// a closed loop this is the outcome the rate would be for an open one [requests/s].
    #[serde(default)]
    pub completed_rps: f64,
    /// Waiting-queue length seen at each step start, weighted by step duration [requests].
    pub mean_queue_len: f64,
    /// Longest waiting queue seen at a step start [requests].
    pub peak_queue_len: u32,
    /// Mean number of running sequences, weighted by step duration.
    pub mean_running: f64,
    /// Sequences preempted (paged KV policy).
    pub preemptions: u32,
    /// Share of the prompt tokens the prefix cache held when requests were admitted
    /// (0 without shared prefixes) [0..1].
    #[serde(default)]
    pub prefix_hit_rate: f64,
    /// Tokens the prefix cache evicted to make room [tokens].
    #[serde(default)]
    pub prefix_evicted_tokens: u64,
    /// The KV memory and the prefix cache over the run, at most
    /// [`CACHE_TIMELINE_POINTS`] samples evenly spread in time (empty without shared
    /// prefixes; a fleet's is its first replica's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cache_timeline: Vec<CacheSample>,
    /// Each traffic class's results, in [`SimConfig::classes`] order (empty with one
    /// class).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<ClassReport>,
    /// Engine steps run.
    pub steps: u64,
    /// Simulated time until the last event [s].
    pub sim_time_s: f64,
    /// True when the step cap stopped the run early.
    pub truncated: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_per_step_by_hand() {
        assert_eq!(tokens_per_step(0, 0.9), 1.0);
        // 1 + 0.5 + 0.25 + 0.125
        assert!((tokens_per_step(3, 0.5) - 1.875).abs() < 1e-15);
        assert_eq!(tokens_per_step(3, 1.0), 4.0);
        assert_eq!(tokens_per_step(2, 0.0), 1.0);
        // Any draft length, however long, gives a number, not an overflow.
        assert!(tokens_per_step(u32::MAX, 0.5).is_finite());
        assert_eq!(tokens_per_step(u32::MAX, 1.0), f64::from(u32::MAX) + 1.0);
    }

    #[test]
    fn acceptance_for_inverts_tokens_per_step() {
        assert!((acceptance_for(3, 1.875) - 0.5).abs() < 1e-12);
        for k in [1, 2, 3, 5, 8] {
            for a in [0.05, 0.3, 0.62, 0.9, 0.99] {
                let back = acceptance_for(k, tokens_per_step(k, a));
                assert!((back - a).abs() < 1e-9, "k {k}, a {a}: {back}");
            }
        }
        // Out of range: clamped; no draft: none accepted.
        assert_eq!(acceptance_for(3, 0.5), 0.0);
        assert_eq!(acceptance_for(3, 9.0), 1.0);
        assert_eq!(acceptance_for(0, 2.0), 0.0);
        assert_eq!(acceptance_for(3, f64::NAN), 0.0);
    }
}
