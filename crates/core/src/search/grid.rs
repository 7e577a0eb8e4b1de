//! A knob grid fitted to a plan: `max_num_seqs` and token-budget axes that bracket what
//! the analytic checks suggest, so the sweep cannot miss the best setting by starting
//! above it or stopping below it.
//!
//! ```text
//!   analyze(plan, goodput) ─▶ suggested max_num_seqs (Little's law), KV-bound sequences
//!                         ─▶ token-budget rule (c0 + 2·P·budget/pi_eff ≤ TPOT)
//!   each target, plus powers of two around it ─▶ at most FITTED_AXIS_VALUES per axis
//! ```

use crate::analytic::analyze;
use crate::plan::{fields, Plan, RunSpec, MAX_SWEEP_VALUES};

/// Most values on each axis of a fitted grid: a 7 × 7 grid keeps the sweep within
/// about 1.4 times the default 6 × 6 one.
pub const FITTED_AXIS_VALUES: usize = 7;
const _: () = assert!(FITTED_AXIS_VALUES <= MAX_SWEEP_VALUES);

/// Powers of two kept below the smallest target, and above the largest, on each axis.
const BELOW: u32 = 2;
const ABOVE_BUDGET: u32 = 3;

/// A knob grid and what it was fitted to.
#[derive(Debug, Clone, PartialEq)]
pub struct FittedGrid {
    /// `max_num_seqs` values, ascending.
    pub max_num_seqs: Vec<u32>,
    /// Token budgets, ascending, 0 (chunked prefill off) last [tokens].
    pub batched_tokens: Vec<u32>,
    /// The `max_num_seqs` Little's law suggests (capped by KV memory).
    pub suggested_max_num_seqs: u32,
    /// Sequences that fit in KV memory at the mean context, when that is a bound.
    pub kv_bound_max_num_seqs: Option<u32>,
    /// The largest budget that keeps the TPOT objective, when there is one [tokens].
    pub budget_rule_tokens: Option<u32>,
}

impl FittedGrid {
    /// `plan` with its sweep axes set to this grid (nothing else changes).
    pub fn apply(&self, plan: &Plan) -> Plan {
        let mut p = plan.clone();
        p.run.sweep_max_num_seqs = self.max_num_seqs.clone();
        p.run.sweep_batched_tokens = self.batched_tokens.clone();
        p
    }

    /// Whether `plan`'s axes are already this grid (in any order).
    pub fn is_applied(&self, plan: &Plan) -> bool {
        let same = |a: &[u32], b: &[u32]| {
            let (mut a, mut b) = (a.to_vec(), b.to_vec());
            a.sort_unstable();
            b.sort_unstable();
            a.dedup();
            b.dedup();
            a == b
        };
        same(&plan.run.sweep_max_num_seqs, &self.max_num_seqs)
            && same(&plan.run.sweep_batched_tokens, &self.batched_tokens)
    }

    /// What the grid brackets, in words: `"max_num_seqs 155 (Little's law) and 407 (KV
    /// memory), budget 889 (the TPOT rule)"`.
    pub fn reason(&self) -> String {
        let mut seqs = format!(
            "max_num_seqs {} (Little's law)",
            self.suggested_max_num_seqs
        );
        if let Some(kv) = self.kv_bound_max_num_seqs {
            seqs.push_str(&format!(" and {kv} (KV memory)"));
        }
        match self.budget_rule_tokens {
            Some(b) => format!("{seqs}, budget {b} (the TPOT rule)"),
            None => seqs,
        }
    }
}

/// The power of two at or below `x` (1 for 0).
fn pow2_at_or_below(x: u32) -> u32 {
    if x <= 1 {
        1
    } else {
        1 << (31 - x.leading_zeros())
    }
}

/// `targets` and powers of two around them: `below` under the smallest, `above` over
/// the largest, and every one between; trimmed from the bottom to `FITTED_AXIS_VALUES`,
/// all within `lo..=hi`.
fn bracket(targets: &[u32], below: u32, above: u32, lo: u32, hi: u32) -> Vec<u32> {
    let t_min = targets.iter().copied().min().unwrap_or(lo).clamp(lo, hi);
    let t_max = targets.iter().copied().max().unwrap_or(hi).clamp(lo, hi);
    let mut v: Vec<u32> = targets.iter().map(|t| (*t).clamp(lo, hi)).collect();
    let mut p = (pow2_at_or_below(t_min) >> below.saturating_sub(1)).max(lo.max(1));
    let mut over = 0;
    while p <= hi {
        v.push(p);
        if p > t_max {
            over += 1;
            if over >= above {
                break;
            }
        }
        p = match p.checked_mul(2) {
            Some(n) => n,
            None => break,
        };
    }
    v.sort_unstable();
    v.dedup();
    // Too many: drop the smallest (the targets and the values above them stay).
    while v.len() > FITTED_AXIS_VALUES && v.first().is_some_and(|&x| x < t_min) {
        v.remove(0);
    }
    while v.len() > FITTED_AXIS_VALUES {
        // Still too many: drop powers of two between the targets, keeping the ends.
        match (1..v.len() - 1).find(|&i| !targets.contains(&v[i])) {
            Some(i) => {
                v.remove(i);
            }
            None => break,
        }
    }
    v
}

/// The knob grid fitted to `plan`, whose goodput is `goodput_rps` (`None`: not known
/// yet; the roofline guess stands in, as in [`analyze`]).
///
/// - `max_num_seqs`: the suggested value and the KV-memory bound (for a plan with a KV
///   policy), with powers of two from a quarter of the smaller up to the first one past
///   the larger.
/// - Budgets: the TPOT rule's largest budget with two powers of two below it and three
///   above, and 0 (chunked prefill off); a plan without a TPOT objective (or with one no
///   budget keeps) keeps the default budgets.
pub fn fit_grid(plan: &Plan, goodput_rps: Option<f64>) -> FittedGrid {
    let a = analyze(plan, goodput_rps);
    let seqs_field = fields::field("run.sweep_max_num_seqs");
    let budget_field = fields::field("run.sweep_batched_tokens");
    let limit = |f: &fields::Field| f.range.map_or(u32::MAX, |r| r.hi as u32);
    let max_seqs = limit(seqs_field);
    let max_budget = limit(budget_field);
    let kv_bound = (plan.engine.kv_policy != crate::plan::KvPolicy::None
        && a.kv_capacity_seqs.is_finite()
        && a.kv_capacity_seqs >= 1.0)
        .then(|| libm::floor(a.kv_capacity_seqs).min(max_seqs as f64) as u32);
    let suggested = a.suggested_max_num_seqs.clamp(1, max_seqs);
    let mut seq_targets = vec![suggested];
    seq_targets.extend(kv_bound);
    let max_num_seqs = bracket(&seq_targets, BELOW + 1, 1, 1, max_seqs);
    let rule = a.token_budget_max.filter(|&b| b >= 1);
    let batched_tokens = match rule {
        Some(b) => {
            let mut v = bracket(&[b], BELOW, ABOVE_BUDGET, 1, max_budget);
            v.truncate(FITTED_AXIS_VALUES - 1);
            v.push(0);
            v
        }
        None => RunSpec::default().sweep_batched_tokens,
    };
    FittedGrid {
        max_num_seqs,
        batched_tokens,
        suggested_max_num_seqs: suggested,
        kv_bound_max_num_seqs: kv_bound,
        budget_rule_tokens: rule,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets;

    fn brackets(axis: &[u32], target: u32) -> bool {
        axis.contains(&target)
            && axis.iter().any(|&v| v != 0 && v < target)
            && axis.iter().any(|&v| v > target)
    }

    fn valid(plan: &Plan, g: &FittedGrid) {
        let p = g.apply(plan);
        p.validate().expect("a fitted grid is a valid plan");
        assert!(g.max_num_seqs.len() <= FITTED_AXIS_VALUES, "{g:?}");
        assert!(g.batched_tokens.len() <= FITTED_AXIS_VALUES, "{g:?}");
        crate::search::KnobSweep::new(&p).expect("the sweep accepts it");
    }

    #[test]
    fn seventy_b_on_h200_tp2_brackets_the_budget_rule() {
        let mut plan = Plan::default();
        presets::model("llama-3.1-70b")
            .expect("preset")
            .apply(&mut plan);
        presets::gpu("h200").expect("preset").apply(&mut plan);
        plan.hardware.tp_degree = 2;
        let g = fit_grid(&plan, None);
        let rule = g.budget_rule_tokens.expect("a TPOT objective");
        assert!((150..256).contains(&rule), "the rule's budget {rule}");
        assert!(brackets(&g.batched_tokens, rule), "{g:?}");
        // The default grid starts above it.
        assert!(plan
            .run
            .sweep_batched_tokens
            .iter()
            .all(|&b| b == 0 || b > rule));
        assert_eq!(g.batched_tokens.last(), Some(&0), "chunking off stays");
        assert!(brackets(&g.max_num_seqs, g.suggested_max_num_seqs), "{g:?}");
        valid(&plan, &g);
    }

    #[test]
    fn eight_b_on_h100_includes_the_kv_bound_max_num_seqs() {
        let plan = Plan::default();
        // The analytic checks at the default plan's goodput suggest 155.
        let g = fit_grid(&plan, Some(22.06));
        let kv = g.kv_bound_max_num_seqs.expect("a KV policy");
        assert_eq!(kv, analyze(&plan, None).kv_capacity_seqs.floor() as u32);
        assert!(brackets(&g.max_num_seqs, kv), "{g:?}");
        assert!(brackets(&g.max_num_seqs, g.suggested_max_num_seqs), "{g:?}");
        assert_eq!(
            g.suggested_max_num_seqs,
            analyze(&plan, Some(22.06)).suggested_max_num_seqs
        );
        assert!(brackets(&g.batched_tokens, 889), "{g:?}");
        valid(&plan, &g);
        assert!(
            g.reason().contains(&format!("{kv} (KV memory)")),
            "{}",
            g.reason()
        );
        assert!(!g.is_applied(&plan));
        assert!(g.is_applied(&g.apply(&plan)));
    }

    #[test]
    fn odd_plans_still_get_a_valid_grid() {
        // No TPOT objective: the default budgets; no KV policy: no KV bound.
        let mut plan = Plan::default();
        plan.slo.tpot_s = None;
        plan.engine.kv_policy = crate::plan::KvPolicy::None;
        let g = fit_grid(&plan, Some(0.0));
        assert_eq!(g.batched_tokens, RunSpec::default().sweep_batched_tokens);
        assert_eq!(g.kv_bound_max_num_seqs, None);
        valid(&plan, &g);
        // A TPOT no budget keeps: the default budgets too.
        let mut tight = Plan::default();
        tight.slo.tpot_s = Some(1e-4);
        let g = fit_grid(&tight, Some(1e6));
        assert_eq!(g.batched_tokens, RunSpec::default().sweep_batched_tokens);
        assert!(g.max_num_seqs.len() <= FITTED_AXIS_VALUES);
        valid(&tight, &g);
    }

    #[test]
    fn the_bracket_keeps_targets_and_its_size() {
        assert_eq!(
            bracket(&[200], 2, 3, 1, 1 << 20),
            [64, 128, 200, 256, 512, 1024]
        );
        let v = bracket(&[3, 16_000], 3, 1, 1, 16_384);
        assert!(v.len() <= FITTED_AXIS_VALUES && v.contains(&3) && v.contains(&16_000));
        assert_eq!(v.last(), Some(&16_384));
        assert_eq!(pow2_at_or_below(0), 1);
        assert_eq!(pow2_at_or_below(1000), 512);
    }
}
