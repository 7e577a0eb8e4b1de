//! Messages between the page and its workers, as JSON strings, and the code a worker runs.

use goodput_core::search::{run_job_with, GoodputSearch, Job, JobResult};
use goodput_core::sim::SimConfig;
use goodput_core::Plan;
use serde::{Deserialize, Serialize};

/// A batch of jobs of one plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// Run id, echoed back so stale replies can be ignored.
    pub run: u32,
    /// The plan the jobs belong to.
    pub plan: Plan,
    /// The simulations to run.
    pub jobs: Vec<Job>,
}

/// The results of one [`Request`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    /// The request's run id.
    pub run: u32,
    /// One result per job, in job order.
    pub results: Vec<JobResult>,
    /// Why the batch failed, if it did.
    pub error: Option<String>,
}

/// Runs every job of a request; never panics on bad input.
pub fn run_request(req: &Request) -> Reply {
    let mut results = Vec::with_capacity(req.jobs.len());
    let rate = req.jobs.first().map(|j| j.rate_rps).unwrap_or(1.0);
    let base = match SimConfig::from_plan(&req.plan, rate) {
        Ok(cfg) => cfg,
        Err(e) => return failed(req.run, e.to_string()),
    };
    for job in &req.jobs {
        match run_job_with(&base, job) {
            Ok(r) => results.push(r),
            Err(e) => return failed(req.run, e.to_string()),
        }
    }
    Reply {
        run: req.run,
        results,
        error: None,
    }
}

fn failed(run: u32, error: String) -> Reply {
    Reply {
        run,
        results: Vec::new(),
        error: Some(error),
    }
}

/// Handles one JSON request body and returns the JSON reply body.
pub fn handle(body: &str) -> String {
    let reply = match serde_json::from_str::<Request>(body) {
        Ok(req) => run_request(&req),
        Err(e) => failed(0, format!("bad request: {e}")),
    };
    serde_json::to_string(&reply).unwrap_or_else(|e| {
        format!(
            r#"{{"run":{},"results":[],"error":"cannot encode reply: {e}"}}"#,
            reply.run
        )
    })
}

/// Runs up to `max_jobs` simulations of the default plan (the first with latency detail)
/// and throws the results away, stopping early when `keep_going` says so (it is asked
/// before every job but the first). A fresh worker calls this while the page is still
/// loading, so the engine optimises the simulator's hot code before the first real
/// request instead of during it. Returns the simulations run.
pub fn warm_up(max_jobs: usize, mut keep_going: impl FnMut() -> bool) -> usize {
    let plan = Plan::default();
    let Ok(mut search) = GoodputSearch::new(&plan) else {
        return 0;
    };
    let jobs = search.next_batch();
    let Some(first) = jobs.first() else {
        return 0;
    };
    let Ok(base) = SimConfig::from_plan(&plan, first.rate_rps) else {
        return 0;
    };
    let mut run = 0;
    for job in jobs.iter().take(max_jobs) {
        if run > 0 && !keep_going() {
            break;
        }
        if run_job_with(&base, job).is_err() {
            break;
        }
        run += 1;
    }
    run
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warm_up_runs_real_simulations_and_stops_when_told() {
        assert_eq!(warm_up(0, || true), 0);
        assert_eq!(warm_up(3, || true), 3);
        // The first job always runs; the budget is checked before each later one.
        assert_eq!(warm_up(5, || false), 1);
        let mut asked = 0;
        assert_eq!(
            warm_up(4, || {
                asked += 1;
                asked < 2
            }),
            2
        );
    }
}
