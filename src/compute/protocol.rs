//! Messages between the page and its workers, as JSON strings, and the code a worker runs.

use goodput_core::search::{run_job_with, Job, JobResult};
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
