//! The prefix cache at the planned rate: the share of prompt tokens found cached, and
//! the tokens evicted, in the planned-load simulation of the plan's report.
//!
//! The core's [`LatencyDetail`](goodput_core::search::LatencyDetail) does not carry them
//! yet, so the same simulation (the report's [`PlanReport::planned_load_job`]: the same
//! rate, knobs, seed and open-loop arrivals) runs once more here, and only for a plan
//! with shared prefixes.

use goodput_core::report::PlanReport;
use goodput_core::sim::{self, SimConfig, SimConfigOf};
use goodput_core::Plan;

/// The prefix cache in one simulation at the planned rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrefixAtPlannedRate {
    /// The planned rate per replica [requests/s].
    pub rate_rps: f64,
    /// Share of the prompt tokens the prefix cache held when requests were admitted [0..1].
    pub hit_rate: f64,
    /// Tokens the prefix cache evicted to make room [tokens].
    pub evicted_tokens: u64,
}

/// Whether `plan`'s prompts share prefixes: a typed shared prefix with hits, or a prefix
/// structure with shared prefixes or sessions.
pub fn has_shared_prefixes(plan: &Plan) -> bool {
    let t = &plan.traffic;
    (t.prefix_tokens > 0 && t.prefix_hit_rate > 0.0) || t.sharing.is_some_and(|s| !s.is_none())
}

/// The prefix cache at `report`'s planned rate for `plan` (the plan the report is of);
/// `None` without shared prefixes, or without a planned-load simulation to repeat.
pub fn prefix_at_planned_rate(plan: &Plan, report: &PlanReport) -> Option<PrefixAtPlannedRate> {
    if !has_shared_prefixes(plan) {
        return None;
    }
    let job = report.planned_load_job(plan)?;
    // As `search::run_job` runs it: the job's rate and knobs, open-loop arrivals, no
    // client-side cap.
    let mut cfg = SimConfig::from_plan(plan, job.rate_rps).ok()?;
    cfg.traffic.arrival = cfg.traffic.arrival.open_loop();
    cfg.traffic.max_concurrency = None;
    cfg.max_num_seqs = job.knobs.max_num_seqs;
    cfg.max_num_batched_tokens = job.knobs.max_num_batched_tokens;
    cfg.chunked_prefill = job.knobs.chunked_prefill;
    let r = sim::simulate(&cfg, job.seed).ok()?;
    Some(PrefixAtPlannedRate {
        rate_rps: job.rate_rps,
        hit_rate: r.prefix_hit_rate,
        evicted_tokens: r.prefix_evicted_tokens,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use goodput_core::plan::PrefixModel;
    use goodput_core::search::{GoodputResult, Knobs, SearchStatus};

    /// A report with a simulated goodput of `goodput` req/s for `plan`.
    fn report(plan: &Plan, goodput: f64) -> PlanReport {
        let r = GoodputResult {
            goodput_rps: goodput,
            goodput_range_rps: [goodput * 0.95, goodput * 1.05],
            target: plan.slo.attainment_target,
            replications: 1,
            knobs: Knobs::of(plan),
            status: SearchStatus::Converged,
            reason: String::new(),
            analytic_guess_rps: goodput,
            curve: Vec::new(),
            jobs_run: 1,
        };
        PlanReport::build(plan, Some(&r), None)
    }

    #[test]
    fn a_plan_with_shared_prefixes_finds_them_cached_at_the_planned_rate() {
        let mut plan = Plan::default();
        plan.run.num_requests = 400;
        plan.run.warmup_requests = 40;
        assert!(!has_shared_prefixes(&plan));
        assert_eq!(prefix_at_planned_rate(&plan, &report(&plan, 10.0)), None);
        plan.traffic.sharing = Some(PrefixModel {
            groups: 4,
            group_tokens: 1024,
            ..PrefixModel::NONE
        });
        assert!(has_shared_prefixes(&plan));
        let at = prefix_at_planned_rate(&plan, &report(&plan, 10.0)).expect("simulated");
        let planned = report(&plan, 10.0)
            .capacity
            .expect("sized")
            .planned_rps_per_replica;
        assert_eq!(at.rate_rps, planned);
        assert!(at.hit_rate > 0.2 && at.hit_rate < 1.0, "{}", at.hit_rate);
        // An empty structure shares nothing.
        plan.traffic.sharing = Some(PrefixModel::NONE);
        assert!(!has_shared_prefixes(&plan));
    }
}
