//! Analytic companions: closed-form checks shown beside every simulated plan.
//!
//! None of these replace the simulator; they explain its answer and catch settings
//! that cannot work before any simulation runs:
//!
//! - **Little's law**: concurrency = rate × time in system, which sets a floor for
//!   `max_num_seqs` (≥ 1.5 × rate × mean output × TPOT target), bounded by KV memory.
//! - **Token-budget rule**: the largest per-step budget with
//!   `c0 + 2·P·budget/pi_eff ≤ TPOT target`.
//! - **Loads**: the decode-floor step time, the prefill compute load as a share of
//!   `pi_eff`, and a lower bound on the GPU's busy share (≥ 1 means an unstable queue).
//! - **KV capacity**: tokens that fit after the weights, and sequences at the mean context.
//! - **M/D/1 TTFT** of a separate prefill pool, single device and two-way parallel.
//! - **Precision**: the standard error of an attainment fraction.
//!
//! Mean lengths of the clipped, integer-truncated lognormal are computed exactly
//! (a finite sum of normal tail probabilities), so they match what the simulator draws.

use crate::format::rps;
pub use crate::lengths::{lognormal_clipped_mean, mean_length_tokens, LengthOf};
use crate::plan::Plan;
use crate::roofline::StepModel;
use crate::roofline::StepModelOf;
use serde::{Deserialize, Serialize};

/// How serious a [`Warning`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; nothing is wrong.
    Info,
    /// A setting is likely to cost goodput or latency.
    Warning,
    /// The plan cannot meet its SLO as set.
    Critical,
}

/// A structured finding about the plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Warning {
    /// Stable machine-readable id (e.g. `max_num_seqs_below_littles_law`).
    pub id: String,
    /// How serious it is.
    pub severity: Severity,
    /// One plain sentence with the numbers and what to change.
    pub message: String,
}

impl Warning {
    fn new(id: &str, severity: Severity, message: String) -> Warning {
        Warning {
            id: id.to_string(),
            severity,
            message,
        }
    }
}

/// Assumed speedup of two-way intra-operator parallelism for the M/D/1 variant
/// (two GPUs at 90% scaling efficiency).
pub const INTRA_OP_SPEEDUP: f64 = 1.8;

/// Headroom factor of the `max_num_seqs` rule (≥ 1.5 × Little's-law concurrency).
pub const MAX_NUM_SEQS_HEADROOM: f64 = 1.5;

/// Little's law: mean number in the system = arrival rate × mean time in the system.
///
/// `rate_rps` [requests/s] × `time_in_system_s` [s] = concurrency [requests].
pub fn littles_law_concurrency(rate_rps: f64, time_in_system_s: f64) -> f64 {
    rate_rps * time_in_system_s
}

/// Mean TTFT of an M/D/1 prefill queue on one device [s]: `D + R·D² / (2(1 − R·D))`.
///
/// `rate_rps` is R [requests/s], `service_s` is D [s]. `None` when `R·D ≥ 1` (unstable).
pub fn md1_ttft_s(rate_rps: f64, service_s: f64) -> Option<f64> {
    let rho = rate_rps * service_s;
    (0.0..1.0)
        .contains(&rho)
        .then(|| service_s + rate_rps * service_s * service_s / (2.0 * (1.0 - rho)))
}

/// Mean TTFT with two-way inter-operator (pipeline) parallelism [s]:
/// `D + R·D² / (4(2 − R·D))`. `None` when `R·D ≥ 2` (unstable).
pub fn md1_ttft_inter_op_s(rate_rps: f64, service_s: f64) -> Option<f64> {
    let rho = rate_rps * service_s;
    (0.0..2.0)
        .contains(&rho)
        .then(|| service_s + rate_rps * service_s * service_s / (4.0 * (2.0 - rho)))
}

/// Mean TTFT with two-way intra-operator (tensor) parallelism and speedup `k` [s]:
/// `D/K + R·D² / (2K(K − R·D))`. `None` when `R·D ≥ K` (unstable) or `K ≤ 0`.
pub fn md1_ttft_intra_op_s(rate_rps: f64, service_s: f64, k: f64) -> Option<f64> {
    let rho = rate_rps * service_s;
    (k > 0.0 && rho < k && rho >= 0.0)
        .then(|| service_s / k + rate_rps * service_s * service_s / (2.0 * k * (k - rho)))
}

/// How far a measured attainment `p` over `n` requests may sit from the true one (one standard error): `sqrt(p(1−p)/n)`.
///
/// Returns 0 for `n = 0` is never meaningful, so it returns `f64::INFINITY` then.
pub fn attainment_std_error(p: f64, n: u64) -> f64 {
    if n == 0 {
        return f64::INFINITY;
    }
    let p = p.clamp(0.0, 1.0);
    libm::sqrt(p * (1.0 - p) / n as f64)
}

/// Mean lengths of the plan's traffic.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MeanLengths {
    /// Mean prompt length after clipping [tokens].
    pub prompt_tokens: f64,
    /// Mean output length after clipping [tokens].
    pub output_tokens: f64,
    /// Mean prompt tokens that still need prefill after prefix-cache hits [tokens].
    pub prefill_tokens: f64,
    /// Mean live context of a decoding sequence: prompt + half the output [tokens].
    pub context_tokens: f64,
}

impl MeanLengths {
    /// Mean lengths of `plan.traffic`; of a mix of traffic classes, each class's means
    /// weighted by its share.
    pub fn of(plan: &Plan) -> MeanLengths {
        if !plan.classes.is_empty() {
            let mut m = MeanLengths {
                prompt_tokens: 0.0,
                output_tokens: 0.0,
                prefill_tokens: 0.0,
                context_tokens: 0.0,
            };
            for (k, c) in plan.classes.iter().enumerate() {
                let x = MeanLengths::of(&plan.class_plan(k));
                m.prompt_tokens += c.share * x.prompt_tokens;
                m.output_tokens += c.share * x.output_tokens;
                m.prefill_tokens += c.share * x.prefill_tokens;
                m.context_tokens += c.share * x.context_tokens;
            }
            return m;
        }
        let t = &plan.traffic;
        let prompt = mean_length_tokens(&t.prompt, &t.trace, LengthOf::Prompt);
        let output = mean_length_tokens(&t.output, &t.trace, LengthOf::Output);
        let cached = t.prefix_hit_rate.clamp(0.0, 1.0) * (t.prefix_tokens as f64).min(prompt);
        MeanLengths {
            prompt_tokens: prompt,
            output_tokens: output,
            prefill_tokens: (prompt - cached).max(0.0),
            context_tokens: prompt + output / 2.0,
        }
    }
}

/// Rough per-replica capacity [requests/s] from the roofline alone: the smaller of the
/// compute bound `pi_eff / (2·P·(prefill + output))` and the slot bound
/// `N / (mean output × t_step(N))`, with `N` = `max_num_seqs` capped by KV memory.
/// The goodput search starts its scan from this.
pub fn capacity_guess_rps(plan: &Plan) -> f64 {
    capacity_guess_of(plan, &StepModel::from_plan(plan), &MeanLengths::of(plan))
}

/// [`capacity_guess_rps`] from the plan's step model and mean lengths, for a caller
/// that holds them already.
pub fn capacity_guess_of(plan: &Plan, roof: &StepModel, len: &MeanLengths) -> f64 {
    let per_request_flop_s = roof.compute_time_s(len.prefill_tokens + len.output_tokens);
    let compute_bound = if per_request_flop_s > 0.0 {
        1.0 / per_request_flop_s
    } else {
        f64::INFINITY
    };
    let kv = kv_capacity_tokens(plan);
    let kv_seqs = if len.context_tokens > 0.0 {
        kv / len.context_tokens
    } else {
        f64::INFINITY
    };
    let n = (plan.engine.max_num_seqs.max(1) as f64).min(kv_seqs.max(1.0));
    let step = roof.step_time_s(n, n * len.context_tokens);
    let slot_bound = n / (len.output_tokens.max(1.0) * step);
    let guess = compute_bound.min(slot_bound);
    if guess.is_finite() && guess > 0.0 {
        guess
    } else {
        1.0
    }
}

/// KV-cache capacity of one replica [tokens], never below 0 (see
/// [`Plan::kv_capacity_tokens`]).
pub fn kv_capacity_tokens(plan: &Plan) -> f64 {
    if plan.kv_bytes_per_token_effective() <= 0.0 {
        return 0.0;
    }
    plan.kv_capacity_tokens().max(0.0)
}

/// The M/D/1 view of a separate prefill pool at one arrival rate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PrefillQueue {
    /// Arrival rate used [requests/s].
    pub rate_rps: f64,
    /// Prefill time of the mean prompt on one replica, D [s].
    pub service_s: f64,
    /// Mean TTFT on one device [s]; `None` when unstable (R·D ≥ 1).
    pub ttft_single_s: Option<f64>,
    /// Mean TTFT with two-way inter-op parallelism [s]; `None` when unstable.
    pub ttft_inter_op_s: Option<f64>,
    /// Mean TTFT with two-way intra-op parallelism at speedup [`INTRA_OP_SPEEDUP`] [s].
    pub ttft_intra_op_s: Option<f64>,
}

/// Every analytic companion of a plan at one operating point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Analytics {
    /// Mean lengths of the traffic.
    pub lengths: MeanLengths,
    /// Per-replica rate the checks use: the planned rate (goodput × utilisation) [requests/s].
    pub rate_per_replica_rps: f64,
    /// Forecast fleet peak [requests/s].
    pub fleet_peak_rps: f64,
    /// TTFT assumed in Little's law: the SLO's TTFT objective, else one prefill of the mean prompt [s].
    pub littles_ttft_s: f64,
    /// TPOT assumed in Little's law: the SLO's TPOT objective, else the decode-floor step [s].
    pub littles_tpot_s: f64,
    /// Concurrent sequences on one replica at its planned rate (Little's law) [sequences].
    pub concurrency_per_replica: f64,
    /// Concurrent sequences across the fleet at the forecast peak (Little's law) [sequences].
    pub concurrency_fleet_peak: f64,
    /// KV tokens the fleet holds at the peak: concurrency × mean context [tokens].
    pub kv_tokens_fleet_peak: f64,
    /// `max_num_seqs` the rule suggests: ⌈1.5 × rate × mean output × TPOT⌉, capped by KV memory.
    pub suggested_max_num_seqs: u32,
    /// Whether KV memory capped the suggestion.
    pub suggestion_capped_by_kv: bool,
    /// The plan's `max_num_seqs`.
    pub max_num_seqs: u32,
    /// Largest token budget with `c0 + 2·P·budget/pi_eff ≤ TPOT target` [tokens]; `None` without a TPOT objective.
    pub token_budget_max: Option<u32>,
    /// Step time of a pure decode step at the per-replica concurrency [s].
    pub decode_floor_step_s: f64,
    /// Prefill FLOP/s at the planned per-replica rate as a share of one replica's `pi_eff` [0..].
    pub prefill_load_replica: f64,
    /// Prefill FLOP/s of the whole fleet's peak as a multiple of one replica's `pi_eff` [0..].
    pub prefill_load_fleet_peak: f64,
    /// Lower bound on the GPU's busy share at the planned rate: max(compute, memory) work per second [0..]; ≥ 1 is unstable.
    pub work_load_replica: f64,
    /// KV-cache capacity of one replica [tokens].
    pub kv_capacity_tokens: f64,
    /// Sequences that fit in KV memory at the mean context [sequences].
    pub kv_capacity_seqs: f64,
    /// M/D/1 TTFT of a separate prefill pool at the planned per-replica rate.
    pub prefill_queue: PrefillQueue,
    /// Measured requests per simulated point (after warm-up).
    pub requests_per_point: u64,
    /// Standard error of attainment at the target from one point's requests [0..1].
    pub attainment_se_point: f64,
    /// Standard error of attainment at the target pooled over all replications [0..1].
    pub attainment_se_pooled: f64,
    /// Findings, most severe first.
    pub warnings: Vec<Warning>,
}

/// Computes the analytic companions of `plan` for a replica whose goodput is `goodput_rps`
/// (`None` = not known yet: the roofline guess stands in). The per-replica checks use the
/// planned rate, goodput × `planning.utilization`.
pub fn analyze(plan: &Plan, goodput_rps: Option<f64>) -> Analytics {
    let roof = StepModel::from_plan(plan);
    let len = MeanLengths::of(plan);
    let util = plan.planning.utilization.clamp(0.0, 1.0);
    let goodput = goodput_rps
        .filter(|g| g.is_finite() && *g >= 0.0)
        .unwrap_or_else(|| capacity_guess_rps(plan));
    let rate = goodput * util;
    let peak = plan.traffic.peak_rate_rps.max(0.0);
    let n_cap = plan.engine.max_num_seqs.max(1) as f64;

    let prefill_one_s = roof.chunk_time_s(len.prefill_tokens);
    let kv_tokens = kv_capacity_tokens(plan);
    let kv_seqs = if len.context_tokens > 0.0 {
        kv_tokens / len.context_tokens
    } else {
        0.0
    };
    // Decode floor at the concurrency Little's law gives with the SLO's TPOT (or a first guess).
    let tpot_guess = roof.step_time_s(n_cap, n_cap * len.context_tokens);
    let littles_tpot = plan.slo.tpot_s.unwrap_or(tpot_guess);
    let littles_ttft = plan.slo.ttft_s.unwrap_or(prefill_one_s);
    let time_in_system = littles_ttft + len.output_tokens * littles_tpot;
    let conc_replica = littles_law_concurrency(rate, time_in_system);
    let conc_fleet = littles_law_concurrency(peak, time_in_system);
    let n_live = conc_replica.clamp(1.0, n_cap);
    let decode_floor = roof.step_time_s(n_live, n_live * len.context_tokens);
    let tpot_for_rule = plan.slo.tpot_s.unwrap_or(decode_floor);

    let rule = MAX_NUM_SEQS_HEADROOM * rate * len.output_tokens * tpot_for_rule;
    let rule = libm::ceil(rule).max(1.0);
    let kv_cap = libm::floor(kv_seqs).max(1.0);
    let capped = rule > kv_cap;
    let suggested = rule.min(kv_cap).min(u32::MAX as f64) as u32;

    let token_budget_max = plan.slo.tpot_s.map(|tpot| {
        let per_token = roof.compute_time_s(1.0) + roof.comm_time_s(1.0);
        let room = tpot - roof.fixed_time_s();
        if room <= 0.0 || per_token <= 0.0 {
            0
        } else {
            libm::floor(room / per_token).min(u32::MAX as f64) as u32
        }
    });

    let prefill_load_replica = roof.compute_load(rate * len.prefill_tokens);
    let prefill_load_fleet = roof.compute_load(peak * len.prefill_tokens);
    let compute_load = rate * roof.compute_time_s(len.prefill_tokens + len.output_tokens);
    let steps_per_s = rate * len.output_tokens / n_live;
    let memory_load = steps_per_s
        * (roof.fixed_time_s() + roof.decode_memory_time_s(n_live, n_live * len.context_tokens));
    let work_load = compute_load.max(memory_load);

    let prefill_queue = PrefillQueue {
        rate_rps: rate,
        service_s: prefill_one_s,
        ttft_single_s: md1_ttft_s(rate, prefill_one_s),
        ttft_inter_op_s: md1_ttft_inter_op_s(rate, prefill_one_s),
        ttft_intra_op_s: md1_ttft_intra_op_s(rate, prefill_one_s, INTRA_OP_SPEEDUP),
    };
    let per_point = plan
        .run
        .num_requests
        .saturating_sub(plan.run.warmup_requests) as u64;
    let target = plan.slo.attainment_target;

    let mut a = Analytics {
        lengths: len,
        rate_per_replica_rps: rate,
        fleet_peak_rps: peak,
        littles_ttft_s: littles_ttft,
        littles_tpot_s: littles_tpot,
        concurrency_per_replica: conc_replica,
        concurrency_fleet_peak: conc_fleet,
        kv_tokens_fleet_peak: conc_fleet * len.context_tokens,
        suggested_max_num_seqs: suggested,
        suggestion_capped_by_kv: capped,
        max_num_seqs: plan.engine.max_num_seqs,
        token_budget_max,
        decode_floor_step_s: decode_floor,
        prefill_load_replica,
        prefill_load_fleet_peak: prefill_load_fleet,
        work_load_replica: work_load,
        kv_capacity_tokens: kv_tokens,
        kv_capacity_seqs: kv_seqs,
        prefill_queue,
        requests_per_point: per_point,
        attainment_se_point: attainment_std_error(target, per_point),
        attainment_se_pooled: attainment_std_error(
            target,
            per_point * plan.run.replications.max(1) as u64,
        ),
        warnings: Vec::new(),
    };
    a.warnings = warnings(plan, &a, &roof);
    a
}

/// When `tp` GPUs cannot split a model's heads evenly, the largest TP below it that can;
/// `None` when `tp` is fine. vLLM wants TP to divide the `heads` query heads (0: not
/// known, no condition) and to divide the `kv_heads` KV heads or be a multiple of them.
pub fn tp_splitting_heads(heads: u32, kv_heads: u32, tp: u32) -> Option<u32> {
    let fits = |t: u32| {
        t <= 1
            || ((heads == 0 || heads.is_multiple_of(t))
                && (kv_heads == 0 || kv_heads.is_multiple_of(t) || t.is_multiple_of(kv_heads)))
    };
    if fits(tp) {
        return None;
    }
    (1..tp).rev().find(|&t| fits(t))
}

fn warnings(plan: &Plan, a: &Analytics, roof: &StepModel) -> Vec<Warning> {
    let mut w = Vec::new();
    let e = &plan.engine;
    if a.kv_capacity_tokens <= 0.0 {
        w.push(Warning::new(
            "kv_no_room",
            Severity::Critical,
            format!(
                "the weights ({:.1} GB) leave no KV-cache memory on {} at {:.0}% {}; use more GPUs per replica, a smaller dtype or a higher utilisation",
                plan.model.weight_bytes() / 1e9,
                crate::format::count(u64::from(plan.hardware.gpus_per_replica()), "GPU", "GPUs"),
                plan.hardware.mem_utilization * 100.0,
                crate::plan::fields::field("hardware.mem_utilization").label_in_sentence()
            ),
        ));
    }
    if a.work_load_replica >= 1.0 {
        w.push(Warning::new(
            "unstable_queue",
            Severity::Critical,
            format!(
                "at {} req/s per replica the GPU needs at least {:.0}% of its time; the queue and TTFT grow without bound. Lower the utilisation or add replicas",
                rps(a.rate_per_replica_rps),
                a.work_load_replica * 100.0
            ),
        ));
    }
    if let Some(tpot) = plan.slo.tpot_s {
        // The lightest decode step: one sequence, its weights (the experts one token
        // picks) and the fixed time.
        let lightest = roof.fixed_time_s() + roof.decode_memory_time_s(1.0, 0.0);
        if lightest > tpot {
            w.push(Warning::new(
                "tpot_target_unreachable",
                Severity::Critical,
                format!(
                    "even a decode step of one sequence takes {:.1} ms (weights read + overhead), above the {:.1} ms TPOT objective; use faster memory, tensor parallelism or a smaller weight dtype",
                    lightest * 1e3,
                    tpot * 1e3
                ),
            ));
        }
    }
    if e.max_num_seqs < a.suggested_max_num_seqs {
        w.push(Warning::new(
            "max_num_seqs_below_littles_law",
            Severity::Warning,
            format!(
                "max_num_seqs = {} is below the {} that Little's law suggests with decode at the TPOT objective (1.5 × {} req/s × {:.0} output tokens × {:.1} ms): if decode runs that slow, requests queue for a slot. Decode usually runs faster than its objective; the knob sweep, which simulates it, has the last word",
                e.max_num_seqs,
                a.suggested_max_num_seqs,
                rps(a.rate_per_replica_rps),
                a.lengths.output_tokens,
                a.littles_tpot_s * 1e3
            ),
        ));
    }
    if (e.max_num_seqs as f64) > a.kv_capacity_seqs && a.kv_capacity_tokens > 0.0 {
        w.push(Warning::new(
            "max_num_seqs_above_kv_capacity",
            Severity::Info,
            format!(
                "max_num_seqs = {} exceeds the {:.0} sequences that fit in KV memory at the mean context of {:.0} tokens; a full batch will preempt or wait for memory",
                e.max_num_seqs, a.kv_capacity_seqs, a.lengths.context_tokens
            ),
        ));
    }
    if let Some(max_budget) = a.token_budget_max {
        if e.chunked_prefill && e.max_num_batched_tokens > max_budget {
            w.push(Warning::new(
                "token_budget_over_tpot",
                Severity::Warning,
                format!(
                    "a full {}-token step takes {:.1} ms of compute; budgets above {} tokens can break the TPOT objective for every decoding request in that step",
                    e.max_num_batched_tokens,
                    roof.chunk_time_s(e.max_num_batched_tokens as f64) * 1e3,
                    max_budget
                ),
            ));
        }
        if !e.chunked_prefill {
            let longest = plan.prompt_cap().max(plan.traffic.prompt.min) as f64;
            if roof.chunk_time_s(longest) > plan.slo.tpot_s.unwrap_or(f64::INFINITY) {
                w.push(Warning::new(
                    "chunked_prefill_off",
                    Severity::Warning,
                    format!(
                        "with chunked prefill off a {:.0}-token prompt runs in one {:.0} ms step, stalling every decoding request; turn chunking on with a budget ≤ {}",
                        longest,
                        (roof.chunk_time_s(longest)) * 1e3,
                        max_budget
                    ),
                ));
            }
        }
    }
    let m = &plan.model;
    if let Some(fit) = tp_splitting_heads(m.attention_heads, m.kv_heads, plan.hardware.tp_degree) {
        let heads = if m.attention_heads > 0 {
            format!(
                "{} attention heads and {} KV heads",
                m.attention_heads, m.kv_heads
            )
        } else {
            format!("{} KV heads", m.kv_heads)
        };
        w.push(Warning::new(
            "tp_splits_heads_unevenly",
            Severity::Critical,
            format!(
                "vLLM refuses tensor parallelism {} for a model with {heads}: the heads must \
                 split evenly across the GPUs (TP divides the attention heads, and divides the \
                 KV heads or is a multiple of them), so these numbers are for a setup that will \
                 not start; use TP {fit}",
                plan.hardware.tp_degree
            ),
        ));
    }
    if a.prefill_load_replica > 0.5 && a.work_load_replica < 1.0 {
        w.push(Warning::new(
            "prefill_bound",
            Severity::Info,
            format!(
                "prefill uses {:.0}% of the effective compute at the planned rate: prefill, not decode, fills this GPU",
                a.prefill_load_replica * 100.0
            ),
        ));
    }
    w.sort_by_key(|x| std::cmp::Reverse(x.severity));
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lengths::{clipped_mean_computed, CLIPPED_MEANS_KEPT};
    use crate::plan::{LengthDist, LengthSpec, TraceRow};

    #[test]
    fn a_tp_degree_that_splits_the_kv_heads_unevenly_is_named() {
        // 8 KV heads: 1, 2, 4, 8, 16 split them; 3, 6 and 12 do not.
        for tp in [1, 2, 4, 8, 16] {
            assert_eq!(tp_splitting_heads(0, 8, tp), None, "TP {tp}");
        }
        assert_eq!(tp_splitting_heads(0, 8, 3), Some(2));
        assert_eq!(tp_splitting_heads(0, 8, 6), Some(4));
        assert_eq!(tp_splitting_heads(0, 8, 12), Some(8));
        assert_eq!(tp_splitting_heads(0, 0, 3), None, "no heads given");
        // 64 attention heads and 8 KV heads (Llama 3.1 70B): TP 16 divides 64 and is a
        // multiple of 8; TP 3 divides neither. 28 attention heads and 4 KV heads (Qwen2.5
        // 7B): TP 8 is a multiple of 4 but does not divide 28; TP 7 divides 28 but neither
        // divides 4 nor is a multiple of it.
        assert_eq!(tp_splitting_heads(64, 8, 16), None);
        assert_eq!(tp_splitting_heads(64, 8, 3), Some(2));
        assert_eq!(tp_splitting_heads(28, 4, 8), Some(4));
        assert_eq!(
            tp_splitting_heads(28, 4, 7),
            Some(4),
            "7 divides 28, not 4 KV heads"
        );
        let mut plan = Plan::default();
        plan.hardware.tp_degree = 3;
        let w = analyze(&plan, Some(20.0)).warnings;
        let uneven = w
            .iter()
            .find(|w| w.id == "tp_splits_heads_unevenly")
            .expect("warned");
        assert!(
            uneven
                .message
                .starts_with("vLLM refuses tensor parallelism 3 for a model with 8 KV heads:")
                && uneven.message.ends_with("use TP 2"),
            "{}",
            uneven.message
        );
        plan.hardware.tp_degree = 4;
        let w = analyze(&plan, Some(20.0)).warnings;
        assert!(w.iter().all(|w| w.id != "tp_splits_heads_unevenly"));
    }

    #[test]
    fn article_means_of_the_clipped_lognormals() {
        // The article rounds to ≈ 1,100 and ≈ 275 (unclipped means); the 1,024 cap on
        // outputs trims the exact clipped mean to ≈ 266.5.
        let p = lognormal_clipped_mean(800.0, 0.8, 16, 8000);
        let o = lognormal_clipped_mean(200.0, 0.8, 1, 1024);
        assert!((p - 1096.44).abs() < 0.01, "prompt mean {p}");
        assert!((o - 266.50).abs() < 0.01, "output mean {o}");
        assert!((p - 1100.0).abs() / 1100.0 < 0.01);
        assert!((o - 275.0).abs() / 275.0 < 0.04);
        // The exact sum and the closed form agree to within a token.
        let big = lognormal_clipped_mean(800.0, 0.8, 16, 8_000_000);
        let unclipped = 800.0 * libm::exp(0.32) - 0.5;
        assert!((big - unclipped).abs() < 1.0, "{big} vs {unclipped}");
    }

    /// Arguments that differ in one place each (median, sigma, min, max), more of them
    /// than are kept, asked in an order that both finds kept answers and evicts them:
    /// every answer is the one computed afresh, bit for bit.
    #[test]
    fn kept_clipped_means_are_the_computed_ones() {
        let args: Vec<(f64, f64, u32, u32)> = vec![
            (800.0, 0.8, 16, 8000),
            (800.0, 0.9, 16, 8000),
            (800.0, 0.8, 17, 8000),
            (800.0, 0.8, 16, 7999),
            (801.0, 0.8, 16, 8000),
            (200.0, 0.8, 1, 1024),
            (200.0, 0.8, 1, 1025),
            (200.0, 0.7, 1, 1024),
            (199.0, 0.8, 1, 1024),
            (1.5, 2.0, 1, 64),
            (-0.0, 0.8, 3, 9),
            (0.0, 0.8, 4, 9),
        ];
        assert!(args.len() > CLIPPED_MEANS_KEPT);
        let fresh: Vec<u64> = args
            .iter()
            .map(|&(m, s, lo, hi)| clipped_mean_computed(m, s, lo, hi).to_bits())
            .collect();
        for round in 0..3 {
            for (i, &(m, s, lo, hi)) in args.iter().enumerate() {
                let j = (i * 5 + round) % args.len();
                let (m2, s2, lo2, hi2) = args[j];
                assert_eq!(
                    lognormal_clipped_mean(m, s, lo, hi).to_bits(),
                    fresh[i],
                    "{:?}",
                    args[i]
                );
                assert_eq!(
                    lognormal_clipped_mean(m2, s2, lo2, hi2).to_bits(),
                    fresh[j],
                    "{:?}",
                    args[j]
                );
            }
        }
    }

    #[test]
    fn degenerate_lengths_do_not_panic() {
        assert_eq!(lognormal_clipped_mean(f64::NAN, 0.8, 5, 10), 5.0);
        assert_eq!(lognormal_clipped_mean(100.0, 0.0, 5, 10), 10.0);
        assert_eq!(lognormal_clipped_mean(7.5, 0.0, 5, 10), 7.0);
        assert_eq!(
            lognormal_clipped_mean(100.0, 1.0, 10, 5),
            lognormal_clipped_mean(100.0, 1.0, 5, 10)
        );
        let spec = LengthSpec {
            dist: LengthDist::Trace,
            min: 1,
            max: 100,
        };
        assert_eq!(mean_length_tokens(&spec, &[], LengthOf::Prompt), 1.0);
        let rows = [
            TraceRow {
                arrival_s: 0.0,
                prompt_tokens: 10,
                output_tokens: 500,
                ..TraceRow::default()
            },
            TraceRow {
                arrival_s: 1.0,
                prompt_tokens: 30,
                output_tokens: 50,
                ..TraceRow::default()
            },
        ];
        assert_eq!(mean_length_tokens(&spec, &rows, LengthOf::Prompt), 20.0);
        assert_eq!(mean_length_tokens(&spec, &rows, LengthOf::Output), 75.0);
    }

    #[test]
    fn md1_unstable_is_none() {
        assert_eq!(md1_ttft_s(2.5, 0.4), None);
        assert!(md1_ttft_inter_op_s(2.5, 0.4).is_some());
        assert_eq!(md1_ttft_inter_op_s(5.0, 0.4), None);
        assert_eq!(md1_ttft_intra_op_s(1.0, 0.4, 0.0), None);
        // Intra-op helps at low rate (execution dominates).
        let single = md1_ttft_s(0.1, 0.4).expect("stable");
        let intra = md1_ttft_intra_op_s(0.1, 0.4, 1.8).expect("stable");
        assert!(intra < single);
    }

    #[test]
    fn standard_error_matches_the_article() {
        // p = 0.95, n = 200: about 1.5 percentage points.
        let se = attainment_std_error(0.95, 200);
        assert!((se - 0.0154).abs() < 0.0005, "{se}");
        assert!(attainment_std_error(0.9, 0).is_infinite());
    }

    #[test]
    fn default_plan_budget_rule_and_warnings() {
        let plan = Plan::default();
        let a = analyze(&plan, Some(22.0));
        // (25 ms − 1 ms) × 593e12 / 16e9 = 889.5 tokens.
        assert_eq!(a.token_budget_max, Some(889));
        assert!(a.prefill_load_replica > 0.4 && a.prefill_load_replica < 0.6);
        assert!(a.work_load_replica < 1.0);
        assert!(a.warnings.iter().all(|w| w.id != "unstable_queue"));
        // A 2,048-token budget breaks the TPOT rule.
        let mut big = plan.clone();
        big.engine.max_num_batched_tokens = 2048;
        let a2 = analyze(&big, Some(22.0));
        assert!(a2.warnings.iter().any(|w| w.id == "token_budget_over_tpot"));
        // Sixteen slots are far below Little's law.
        let mut small = plan.clone();
        small.engine.max_num_seqs = 16;
        let a3 = analyze(&small, Some(22.0));
        assert!(a3
            .warnings
            .iter()
            .any(|w| w.id == "max_num_seqs_below_littles_law"));
    }

    #[test]
    fn a_mixture_of_experts_over_stages_is_not_flagged_slower_than_it_simulates() {
        // DeepSeek-V3 fp8 on H100s at TP 8 × PP 2 with a 25 ms TPOT: one sequence reads
        // the experts one token picks (37.5 GB over 8 GPUs, 1.4 ms), not all 671 GB
        // (25 ms), and 5.4 req/s a replica keeps the GPUs busy under 100% of the time
        // (the simulation meets the SLO there).
        let mut plan = Plan::default();
        plan.model.weight_dtype = crate::plan::Dtype::Fp8;
        crate::presets::model("deepseek-v3")
            .expect("preset")
            .apply(&mut plan);
        crate::presets::gpu("h100-sxm")
            .expect("gpu")
            .apply(&mut plan);
        plan.hardware.tp_degree = 8;
        plan.hardware.pp_degree = 2;
        let a = analyze(&plan, Some(5.78));
        let ids: Vec<&str> = a.warnings.iter().map(|w| w.id.as_str()).collect();
        assert!(!ids.contains(&"tpot_target_unreachable"), "{ids:?}");
        assert!(
            !ids.contains(&"unstable_queue"),
            "{ids:?} at {}",
            a.work_load_replica
        );
        assert!(a.work_load_replica < 0.9, "{}", a.work_load_replica);
        // A TPOT below one sequence's step is still flagged, with that step's time:
        // 1 ms + 122 all-reduces × 5 µs + 1.4 ms.
        plan.slo.tpot_s = Some(0.002);
        let a = analyze(&plan, Some(5.78));
        let w = a
            .warnings
            .iter()
            .find(|w| w.id == "tpot_target_unreachable")
            .expect("flagged");
        assert!(
            w.message
                .starts_with("even a decode step of one sequence takes 3.0 ms"),
            "{}",
            w.message
        );
    }

    #[test]
    fn overload_and_no_memory_are_flagged() {
        let mut plan = Plan::default();
        plan.planning.utilization = 1.0;
        let a = analyze(&plan, Some(60.0));
        assert_eq!(a.warnings[0].id, "unstable_queue");
        assert_eq!(a.warnings[0].severity, Severity::Critical);
        plan.hardware.memory_bytes = 10e9;
        let a = analyze(&plan, Some(1.0));
        assert!(a.warnings.iter().any(|w| w.id == "kv_no_room"));
        assert_eq!(a.kv_capacity_tokens, 0.0);
    }

    #[test]
    fn capacity_guess_is_near_the_compute_bound() {
        let g = capacity_guess_rps(&Plan::default());
        // pi_eff / (2P × ~1375 tokens) ≈ 27 req/s.
        assert!(g > 20.0 && g < 30.0, "{g}");
    }
}
