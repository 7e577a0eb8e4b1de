//! Messages between the page and its workers, as JSON strings, and the code a worker runs.
//!
//! Four kinds of request share the workers: simulation batches of the goodput search and
//! the knob sweep ([`Request`]), calibration fits ([`FitRequest`]), a day's ramp
//! simulations ([`RampRequest`]) and the disaggregation sizing's jobs ([`DisaggRequest`]).
//! Each travels as the one key of an object that names its kind (`{"sim": {...}}`) and is
//! answered by a reply of the same kind. With the kind outside the body, serde reads the
//! body straight into its type; a `kind` field inside it had serde buffer every message,
//! plan included, before reading it, and put a second reader of each type in the module.

use goodput_core::calibrate::{run_fit_job, CalibrationProblem, FitJob, FitJobResult};
use goodput_core::disagg::{run_disagg_jobs, DisaggJob, DisaggJobResult};
use goodput_core::schedule::{run_ramp_job_with, RampJob, RampJobResult};
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
    /// The sender's own label, echoed back (the GPU comparison's option index).
    #[serde(default)]
    pub tag: u32,
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
    /// The request's tag.
    #[serde(default)]
    pub tag: u32,
}

/// A batch of calibration fits of one problem.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FitRequest {
    /// Run id of the calibration, echoed back so stale replies can be ignored.
    pub run: u32,
    /// The measured points and the plan being fitted.
    pub problem: CalibrationProblem,
    /// The fits to run.
    pub jobs: Vec<FitJob>,
}

/// The results of one [`FitRequest`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FitReply {
    /// The request's run id.
    pub run: u32,
    /// One result per job, in job order.
    pub results: Vec<FitJobResult>,
    /// Why the batch failed, if it did.
    pub error: Option<String>,
}

/// A batch of one schedule's ramp simulations (traffic over a day).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RampRequest {
    /// Run id of the schedule, echoed back so stale replies can be ignored.
    pub run: u32,
    /// The plan the schedule was built from.
    pub plan: Plan,
    /// The simulations to run.
    pub jobs: Vec<RampJob>,
}

/// The results of one [`RampRequest`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RampReply {
    /// The request's run id.
    pub run: u32,
    /// One result per job, in job order.
    pub results: Vec<RampJobResult>,
    /// Why the batch failed, if it did.
    pub error: Option<String>,
}

/// Runs every ramp simulation of a request; never panics on bad input.
pub fn run_ramp_request(req: &RampRequest) -> RampReply {
    let fail = |e: String| RampReply {
        run: req.run,
        results: Vec::new(),
        error: Some(e),
    };
    let rate = req.jobs.first().map(|j| j.rate_rps).unwrap_or(1.0);
    let base = match SimConfig::from_plan(&req.plan, rate) {
        Ok(cfg) => cfg,
        Err(e) => return fail(e.to_string()),
    };
    let mut results = Vec::with_capacity(req.jobs.len());
    for job in &req.jobs {
        match run_ramp_job_with(&base, job) {
            Ok(r) => results.push(r),
            Err(e) => return fail(e.to_string()),
        }
    }
    RampReply {
        run: req.run,
        results,
        error: None,
    }
}

/// A batch of jobs of the disaggregation sizing: plain data, from which the worker
/// resolves both configurations itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DisaggRequest {
    /// Run id of the sizing, echoed back so stale replies can be ignored.
    pub run: u32,
    /// The sizing's plan (`DisaggSizing::plan`: the plan with its disagg section).
    pub plan: Plan,
    /// The sizing rate the pools are simulated at [requests/s].
    pub rate_rps: f64,
    /// The jobs to run.
    pub jobs: Vec<DisaggJob>,
}

/// The results of one [`DisaggRequest`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DisaggReply {
    /// The request's run id.
    pub run: u32,
    /// One result per job, in job order.
    pub results: Vec<DisaggJobResult>,
    /// Why the batch failed, if it did.
    pub error: Option<String>,
}

/// Runs every job of a disaggregation request; never panics on bad input.
pub fn run_disagg_request(req: &DisaggRequest) -> DisaggReply {
    match run_disagg_jobs(&req.plan, req.rate_rps, &req.jobs) {
        Ok(results) => DisaggReply {
            run: req.run,
            results,
            error: None,
        },
        Err(e) => DisaggReply {
            run: req.run,
            results: Vec::new(),
            error: Some(e.to_string()),
        },
    }
}

/// Any request a worker takes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkerRequest {
    /// Simulations of the search or the sweep.
    Sim(Request),
    /// Calibration fits.
    Fit(FitRequest),
    /// Ramp simulations of a day's schedule.
    Ramp(RampRequest),
    /// Jobs of the disaggregation sizing.
    Disagg(DisaggRequest),
}

/// Any reply a worker sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkerReply {
    /// Answer to [`WorkerRequest::Sim`].
    Sim(Reply),
    /// Answer to [`WorkerRequest::Fit`].
    Fit(FitReply),
    /// Answer to [`WorkerRequest::Ramp`].
    Ramp(RampReply),
    /// Answer to [`WorkerRequest::Disagg`].
    Disagg(DisaggReply),
}

/// Runs every fit of a request; never panics on bad input.
pub fn run_fit_request(req: &FitRequest) -> FitReply {
    let mut results = Vec::with_capacity(req.jobs.len());
    for job in &req.jobs {
        match run_fit_job(&req.problem, job) {
            Ok(r) => results.push(r),
            Err(e) => {
                return FitReply {
                    run: req.run,
                    results: Vec::new(),
                    error: Some(e.to_string()),
                }
            }
        }
    }
    FitReply {
        run: req.run,
        results,
        error: None,
    }
}

/// Runs every job of a request; never panics on bad input.
pub fn run_request(req: &Request) -> Reply {
    let mut results = Vec::with_capacity(req.jobs.len());
    let rate = req.jobs.first().map(|j| j.rate_rps).unwrap_or(1.0);
    let base = match SimConfig::from_plan(&req.plan, rate) {
        Ok(cfg) => cfg,
        Err(e) => return failed(req.run, req.tag, e.to_string()),
    };
    for job in &req.jobs {
        match run_job_with(&base, job) {
            Ok(r) => results.push(r),
            Err(e) => return failed(req.run, req.tag, e.to_string()),
        }
    }
    Reply {
        run: req.run,
        results,
        error: None,
        tag: req.tag,
    }
}

fn failed(run: u32, tag: u32, error: String) -> Reply {
    Reply {
        run,
        results: Vec::new(),
        error: Some(error),
        tag,
    }
}

/// Handles one JSON request body and returns the JSON reply body.
pub fn handle(body: &str) -> String {
    let reply = match serde_json::from_str::<WorkerRequest>(body) {
        Ok(WorkerRequest::Sim(req)) => WorkerReply::Sim(run_request(&req)),
        Ok(WorkerRequest::Fit(req)) => WorkerReply::Fit(run_fit_request(&req)),
        Ok(WorkerRequest::Ramp(req)) => WorkerReply::Ramp(run_ramp_request(&req)),
        Ok(WorkerRequest::Disagg(req)) => WorkerReply::Disagg(run_disagg_request(&req)),
        Err(e) => WorkerReply::Sim(failed(0, 0, format!("bad request: {e}"))),
    };
    serde_json::to_string(&reply).unwrap_or_else(|e| {
        let (kind, run) = match &reply {
            WorkerReply::Sim(r) => ("sim", r.run),
            WorkerReply::Fit(r) => ("fit", r.run),
            WorkerReply::Ramp(r) => ("ramp", r.run),
            WorkerReply::Disagg(r) => ("disagg", r.run),
        };
        unencodable(kind, run, &e.to_string())
    })
}

/// The reply of `kind` to run `run` when the real one cannot be encoded: no results, and
/// `why` as its error.
fn unencodable(kind: &str, run: u32, why: &str) -> String {
    let error = serde_json::to_string(&format!("cannot encode reply: {why}"))
        .unwrap_or_else(|_| "\"cannot encode reply\"".into());
    format!(r#"{{"{kind}":{{"run":{run},"results":[],"error":{error}}}}}"#)
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
    use goodput_core::calibrate::{Calibrator, FitTask};
    use goodput_core::measure::import_files;

    /// A small vLLM result file at `rate` with plausible latencies for the default plan.
    fn vllm_file(rate: f64, ttft_ms: f64, tpot_ms: f64) -> String {
        let e2e_ms = ttft_ms + tpot_ms * 199.0;
        format!(
            r#"{{"backend":"vllm","model_id":"test-model","request_rate":{rate},"burstiness":1.0,
            "duration":{dur},"completed":100,"failed":0,"num_prompts":100,
            "total_input_tokens":100000,"total_output_tokens":20000,"request_throughput":{rate},
            "mean_ttft_ms":{ttft_ms},"median_ttft_ms":{ttft_ms},"p99_ttft_ms":{p99t},
            "mean_tpot_ms":{tpot_ms},"median_tpot_ms":{tpot_ms},"p99_tpot_ms":{p99p},
            "mean_e2el_ms":{e2e_ms},"median_e2el_ms":{e2e_ms},"p99_e2el_ms":{p99e}}}"#,
            dur = 100.0 / rate,
            p99t = ttft_ms * 2.0,
            p99p = tpot_ms * 1.3,
            p99e = e2e_ms * 1.3,
        )
    }

    /// The stand-in for a reply that cannot be encoded reads back as a failed reply of
    /// the same kind and run, whatever the error says.
    #[test]
    fn a_reply_that_cannot_be_encoded_still_reads_back_as_a_failure() {
        let why = r#"a "quoted" \ reason"#;
        match serde_json::from_str::<WorkerReply>(&unencodable("sim", 4, why)) {
            Ok(WorkerReply::Sim(r)) => {
                assert_eq!((r.run, r.results.len()), (4, 0));
                assert!(r.error.unwrap().ends_with(why));
            }
            other => panic!("{other:?}"),
        }
        for kind in ["fit", "ramp", "disagg"] {
            let reply = serde_json::from_str::<WorkerReply>(&unencodable(kind, 9, "x"));
            assert!(reply.is_ok(), "{kind}: {reply:?}");
        }
    }

    #[test]
    fn a_fit_request_round_trips_and_runs_like_the_core() {
        let a = vllm_file(1.0, 90.0, 12.0);
        let b = vllm_file(3.0, 120.0, 15.0);
        let set = import_files(&[("a.json", a.as_bytes()), ("b.json", b.as_bytes())])
            .expect("the test files import");
        let plan = Plan::default();
        let mut cal = Calibrator::new(&plan, &set).expect("a problem");
        let mut jobs = cal.next_batch();
        assert_eq!(jobs[0].task, FitTask::Full);
        // A cheap job: a leave-one-out refit is the same message shape as the full fit.
        jobs[0].task = FitTask::LeaveOut { point: 1 };
        let req = WorkerRequest::Fit(FitRequest {
            run: 7,
            problem: cal.problem().clone(),
            jobs: jobs.clone(),
        });
        let body = serde_json::to_string(&req).expect("encodes");
        assert!(body.starts_with(r#"{"fit":{"#), "{}", &body[..40]);
        assert_eq!(
            serde_json::from_str::<WorkerRequest>(&body).expect("decodes"),
            req
        );
        let reply: WorkerReply = serde_json::from_str(&handle(&body)).expect("a reply");
        let WorkerReply::Fit(reply) = reply else {
            panic!("a fit request gets a fit reply, got {reply:?}");
        };
        assert_eq!(reply.run, 7);
        assert_eq!(reply.error, None);
        let direct = run_fit_job(cal.problem(), &jobs[0]).expect("runs");
        assert_eq!(
            reply.results,
            vec![direct],
            "the worker runs exactly the core's fit"
        );
    }

    #[test]
    fn simulation_requests_still_get_simulation_replies() {
        let plan = Plan::default();
        let mut search = GoodputSearch::new(&plan).expect("a search");
        let jobs: Vec<Job> = search.next_batch().into_iter().take(1).collect();
        let body = serde_json::to_string(&WorkerRequest::Sim(Request {
            run: 3,
            plan,
            jobs,
            tag: 7,
        }))
        .expect("encodes");
        assert!(body.starts_with(r#"{"sim":{"#));
        match serde_json::from_str::<WorkerReply>(&handle(&body)).expect("a reply") {
            WorkerReply::Sim(r) => {
                assert_eq!((r.run, r.results.len(), r.error, r.tag), (3, 1, None, 7));
            }
            other => panic!("expected a simulation reply, got {other:?}"),
        }
        // Garbage is answered, not panicked on.
        let bad: WorkerReply = serde_json::from_str(&handle("{nope")).expect("a reply");
        assert!(matches!(
            bad,
            WorkerReply::Sim(Reply { error: Some(_), .. })
        ));
    }

    #[test]
    fn a_ramp_request_runs_exactly_the_core_schedule_jobs() {
        use goodput_core::schedule::{run_ramp_job, RateProfile, ScheduleOptions, ScheduleRun};
        let mut plan = Plan::default();
        plan.run.num_requests = 300;
        plan.run.warmup_requests = 30;
        plan.traffic.peak_rate_rps = 3.0;
        let profile = RateProfile::named("business-hours").expect("a shape");
        let mut run = ScheduleRun::new(&plan, &profile, 2.0, &ScheduleOptions::default())
            .expect("a schedule");
        let jobs: Vec<RampJob> = run.next_batch().into_iter().take(2).collect();
        assert_eq!(jobs.len(), 2);
        let body = serde_json::to_string(&WorkerRequest::Ramp(RampRequest {
            run: 5,
            plan: plan.clone(),
            jobs: jobs.clone(),
        }))
        .expect("encodes");
        assert!(body.starts_with(r#"{"ramp":{"#), "{}", &body[..30]);
        let WorkerReply::Ramp(reply) =
            serde_json::from_str::<WorkerReply>(&handle(&body)).expect("a reply")
        else {
            panic!("a ramp request gets a ramp reply");
        };
        assert_eq!((reply.run, reply.error.as_deref()), (5, None));
        let direct: Vec<RampJobResult> = jobs
            .iter()
            .map(|j| run_ramp_job(&plan, j).expect("runs"))
            .collect();
        assert_eq!(
            reply.results, direct,
            "the worker runs exactly the core's job"
        );
    }

    #[test]
    fn a_disagg_request_carries_plain_data_and_runs_the_core_jobs() {
        use goodput_core::disagg::DisaggSizing;
        let mut plan = Plan::default();
        plan.run.num_requests = 300;
        plan.run.warmup_requests = 30;
        plan.run.replications = 2;
        let mut m = DisaggSizing::new(&plan).expect("a sizing");
        let jobs = m.next_batch();
        // One aggregated search job and one xPyD point job, as the first batch mixes them.
        let pick: Vec<DisaggJob> = [
            jobs.iter().find(|j| matches!(j, DisaggJob::Aggregated(_))),
            jobs.iter().find(|j| matches!(j, DisaggJob::Point(_))),
        ]
        .into_iter()
        .flatten()
        .copied()
        .collect();
        assert_eq!(pick.len(), 2, "{jobs:?}");
        let req = DisaggRequest {
            run: 9,
            plan: m.plan().clone(),
            rate_rps: m.sizing_rate_rps(),
            jobs: pick.clone(),
        };
        let body = serde_json::to_string(&WorkerRequest::Disagg(req)).expect("encodes");
        assert!(body.starts_with(r#"{"disagg":{"#), "{}", &body[..30]);
        let WorkerReply::Disagg(reply) =
            serde_json::from_str::<WorkerReply>(&handle(&body)).expect("a reply")
        else {
            panic!("a disagg request gets a disagg reply");
        };
        assert_eq!((reply.run, reply.error.as_deref()), (9, None));
        let direct = run_disagg_jobs(m.plan(), m.sizing_rate_rps(), &pick).expect("runs");
        assert_eq!(
            reply.results, direct,
            "the worker runs exactly the core's jobs"
        );
        // Fed back, the results move the sizing on.
        let before = m.progress().done;
        m.feed(&reply.results);
        assert_eq!(m.progress().done, before + 2);
        // A plan the sizing cannot run is answered with its reason, not a panic.
        let mut bad = m.plan().clone();
        bad.model.params = -1.0;
        let reply = run_disagg_request(&DisaggRequest {
            run: 1,
            plan: bad,
            rate_rps: 1.0,
            jobs: pick,
        });
        assert!(reply.error.is_some() && reply.results.is_empty());
    }

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
