//! The prefix cache at the planned rate: the share of prompt tokens found cached and the
//! tokens evicted, from the report's planned-load simulation, and the cache over that
//! run (KV memory private, shared and idle, and the hit rate) for the chart.
//!
//! The report's [`LatencyDetail`](goodput_core::search::LatencyDetail) carries the hit
//! rate and the evictions, but not the run's [`CacheSample`]s, so the cache chart runs
//! the planned-load job's simulation once more here, exactly as the core runs it
//! ([`planned_load_config`]): one simulation of the same configuration and seed, so its
//! timeline is the CLI's `goodput simulate --request-rate <planned rate> --seed <its
//! seed> --json` `cache_timeline`, and its hit rate the report's.

use goodput_core::report::PlanReport;
use goodput_core::search::{job_config, Job};
use goodput_core::sim::{self, CacheSample, SimConfig, SimError};
use goodput_core::Plan;

/// The prefix cache in the report's simulation at the planned rate.
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

/// The prefix cache at `report`'s planned rate for `plan` (the plan the report is of),
/// as the report's planned-load simulation found it; `None` without shared prefixes,
/// or before that simulation has run.
pub fn prefix_at_planned_rate(plan: &Plan, report: &PlanReport) -> Option<PrefixAtPlannedRate> {
    if !has_shared_prefixes(plan) {
        return None;
    }
    let load = report.planned_load.as_ref()?;
    Some(PrefixAtPlannedRate {
        rate_rps: load.rate_rps,
        hit_rate: load.detail.prefix_hit_rate,
        evicted_tokens: load.detail.prefix_evicted_tokens,
    })
}

/// The report's planned-load job for `plan` and the configuration the core simulates it
/// with ([`job_config`], what `search::run_job` runs). `None` when the report has no
/// such job (a measured goodput, no fleet).
pub fn planned_load_config(
    plan: &Plan,
    report: &PlanReport,
) -> Option<Result<(Job, SimConfig), SimError>> {
    let job = report.planned_load_job(plan)?;
    Some(job_config(plan, &job).map(|cfg| (job, cfg)))
}

/// The cache over one run at the planned rate per replica: what the chart draws.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheRun {
    /// The planned rate per replica [requests/s].
    pub rate_rps: f64,
    /// The simulation's seed (replication 0's of the plan's seed).
    pub seed: u64,
    /// KV-cache capacity of one replica [tokens]; `None` when KV memory is not modelled.
    pub kv_capacity_tokens: Option<f64>,
    /// Replicas simulated together (1: no router); the timeline is the first one's.
    pub replicas: u32,
    /// Share of the prompt tokens found cached over the whole run [0..1].
    pub hit_rate: f64,
    /// The KV memory and the prefix cache over the run.
    pub timeline: Vec<CacheSample>,
}

/// Simulates the report's planned load of `plan` again for its cache timeline; `None`
/// without shared prefixes or without a planned-load job (a measured goodput: nothing
/// to draw, and nothing wrong), `Err` (in words) when the simulation cannot run.
pub fn cache_at_planned_rate(plan: &Plan, report: &PlanReport) -> Option<Result<CacheRun, String>> {
    if !has_shared_prefixes(plan) {
        return None;
    }
    let config = planned_load_config(plan, report)?;
    let run = || -> Result<CacheRun, SimError> {
        let (job, cfg) = config?;
        let r = sim::simulate(&cfg, job.seed)?;
        let modelled = cfg.kv_policy != goodput_core::plan::KvPolicy::None;
        Ok(CacheRun {
            rate_rps: job.rate_rps,
            seed: job.seed,
            kv_capacity_tokens: (modelled && cfg.kv_capacity_tokens.is_finite())
                .then_some(cfg.kv_capacity_tokens),
            replicas: cfg.fleet.replicas,
            hit_rate: r.prefix_hit_rate,
            timeline: r.cache_timeline,
        })
    };
    Some(run().map_err(|e| goodput_core::format::sentence(&e.to_string())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use goodput_core::plan::{Arrival, FleetRouter, PrefixModel, RoutingSpec};
    use goodput_core::search::{run_job, GoodputResult, Knobs, SearchStatus};

    /// A report with a simulated goodput of `goodput` req/s for `plan`, its planned
    /// load simulated as the page's report is ([`PlanReport::complete`]).
    fn report(plan: &Plan, goodput: f64) -> PlanReport {
        let r = GoodputResult {
            binding_class: None,
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
        PlanReport::complete(plan, Some(&r), None).expect("simulated")
    }

    fn sessions() -> Plan {
        let mut plan = Plan::default();
        plan.run.num_requests = 400;
        plan.run.warmup_requests = 40;
        plan.traffic.sharing = Some(PrefixModel {
            groups: 4,
            group_tokens: 1024,
            sessions: 16,
            turns: 4,
            ..PrefixModel::NONE
        });
        plan
    }

    #[test]
    fn the_hit_rate_is_the_reports_planned_load() {
        let mut plan = sessions();
        let r = report(&plan, 10.0);
        let at = prefix_at_planned_rate(&plan, &r).expect("shared prefixes");
        let load = r.planned_load.expect("simulated");
        assert_eq!(at.rate_rps, load.rate_rps);
        assert_eq!(at.hit_rate, load.detail.prefix_hit_rate);
        assert!(at.hit_rate > 0.2 && at.hit_rate < 1.0, "{}", at.hit_rate);
        // Without shared prefixes, nothing to say; an empty structure shares nothing.
        plan.traffic.sharing = Some(PrefixModel::NONE);
        assert!(!has_shared_prefixes(&plan));
        assert_eq!(prefix_at_planned_rate(&plan, &report(&plan, 10.0)), None);
    }

    /// The chart's run is the core's planned-load job, bit for bit: the same hit rate as
    /// the report, and the job's own result; a routed fleet's too.
    #[test]
    fn the_cache_run_is_the_planned_load_job() {
        for routing in [
            None,
            Some(RoutingSpec {
                replicas: 2,
                router: FleetRouter::PrefixAware,
            }),
        ] {
            let mut plan = sessions();
            plan.routing = routing;
            let r = report(&plan, 10.0);
            let run = cache_at_planned_rate(&plan, &r)
                .expect("shared prefixes")
                .expect("runs");
            let load = r.planned_load.expect("simulated");
            assert_eq!(run.rate_rps, load.rate_rps);
            assert_eq!(run.hit_rate, load.detail.prefix_hit_rate, "{routing:?}");
            let job = r.planned_load_job(&plan).expect("a job");
            assert_eq!(run.seed, job.seed);
            let detail = run_job(&plan, &job).expect("runs").detail.expect("detail");
            assert_eq!(detail.prefix_hit_rate, run.hit_rate);
            assert_eq!(run.replicas, routing.map_or(1, |r| r.replicas));
            assert!(!run.timeline.is_empty());
            assert!(run.timeline.len() <= sim::CACHE_TIMELINE_POINTS);
            assert!(run.kv_capacity_tokens.is_some_and(|c| c > 0.0));
        }
    }

    /// A closed loop runs as Poisson arrivals at the planned rate, as the search does.
    #[test]
    fn a_closed_loop_runs_open_at_the_planned_rate() {
        let mut plan = sessions();
        plan.traffic.arrival = Arrival::Closed {
            concurrency: 16,
            think_s: 0.0,
        };
        let r = report(&plan, 10.0);
        let (_, cfg) = planned_load_config(&plan, &r)
            .expect("a job")
            .expect("a config");
        assert_eq!(cfg.traffic.arrival, Arrival::Poisson);
        let run = cache_at_planned_rate(&plan, &r)
            .expect("shared prefixes")
            .expect("runs");
        assert_eq!(
            run.hit_rate,
            r.planned_load.expect("simulated").detail.prefix_hit_rate
        );
    }
}
