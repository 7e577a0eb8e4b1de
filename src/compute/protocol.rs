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
use goodput_core::sim::SimConfigOf;
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
    /// Results sent unasked, from the worker's warm-up.
    Prefetched(Box<Prefetched>),
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
            WorkerReply::Prefetched(_) => ("prefetched", 0),
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

/// Results a worker sends unasked: a batch of the page's first search, which it runs
/// ahead of the page while the page loads ([`warm_up`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prefetched {
    /// The batch's results. Two plans with the same [`Plan::search_key`] give the same
    /// search, job ids included, so an id names the same simulation in the page's search.
    pub results: Vec<JobResult>,
    /// Whether the sender stops here: it sends no more.
    pub last: bool,
}

/// Whether a worker's message is one it sent unasked ([`WorkerReply::Prefetched`]) rather
/// than the answer to a request.
pub fn is_unasked(body: &str) -> bool {
    body.starts_with(r#"{"prefetched":"#)
}

/// The page's store of the results a worker simulated ahead of it, for one plan. Each
/// is handed out once, to the first search of a plan with the same [`Plan::search_key`]
/// that asks for its job, and the store closes when the page's first search ends: only
/// that search gains from them, and every later one simulates afresh.
#[derive(Debug, Default)]
pub struct PrefetchStore {
    /// Search key of the plan the worker runs ahead.
    key: Option<Plan>,
    /// The results sent so far and not yet taken.
    kept: Vec<JobResult>,
    /// Whether the worker is still at it.
    coming: bool,
}

impl PrefetchStore {
    /// A store for the results of `plan`'s search, run ahead by a worker; an empty,
    /// closed one when `plan` is `None`.
    pub fn expecting(plan: Option<&Plan>) -> PrefetchStore {
        PrefetchStore {
            key: plan.map(Plan::search_key),
            kept: Vec::new(),
            coming: plan.is_some(),
        }
    }

    /// Whether `plan` gets the same search as the plan run ahead.
    fn serves(&self, plan: &Plan) -> bool {
        self.key.as_ref().is_some_and(|k| *k == plan.search_key())
    }

    /// Whether a search of `plan` should wait for the worker that runs it ahead rather
    /// than run what it has not sent yet: until its last message, the store's closing
    /// or [`PrefetchStore::stop_waiting`].
    pub fn waits_for(&self, plan: &Plan) -> bool {
        self.coming && self.serves(plan)
    }

    /// Waits for nothing more (the worker is late or gone).
    pub fn stop_waiting(&mut self) {
        self.coming = false;
    }

    /// Keeps what the worker sent, unless the store is closed.
    pub fn add(&mut self, sent: Prefetched) {
        if self.key.is_some() {
            self.coming &= !sent.last;
            self.kept.extend(sent.results);
        }
    }

    /// Splits `jobs` of `plan` into those with a result kept (each with its result),
    /// which leave the store, and the jobs still to run.
    pub fn take(&mut self, plan: &Plan, jobs: Vec<Job>) -> (Vec<(Job, JobResult)>, Vec<Job>) {
        if self.kept.is_empty() || !self.serves(plan) {
            return (Vec::new(), jobs);
        }
        let mut found = Vec::new();
        let mut missing = Vec::new();
        for job in jobs {
            match self.kept.iter().position(|r| r.id == job.id) {
                Some(at) => found.push((job, self.kept.swap_remove(at))),
                None => missing.push(job),
            }
        }
        (found, missing)
    }

    /// Empties the store and takes nothing more.
    pub fn close(&mut self) {
        *self = PrefetchStore::default();
    }

    /// Results kept.
    pub fn len(&self) -> usize {
        self.kept.len()
    }

    /// Whether no result is kept.
    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }
}

/// Runs `plan`'s goodput search while the page loads, batch after batch, and hands each
/// batch's results to `send`, so that the page's first search finds them computed; a
/// plan that cannot be searched sends one empty last message. It stops early when
/// `keep_going` says so (asked before every job but the first); the last message says
/// it is the last. Running the simulator also has the browser optimise its code before
/// the first real request. Returns the simulations run.
pub fn warm_up(
    plan: &Plan,
    keep_going: &mut dyn FnMut() -> bool,
    send: &mut dyn FnMut(Prefetched),
) -> usize {
    let mut search = GoodputSearch::new(plan).ok();
    let mut base: Option<SimConfig> = None;
    let mut run = 0;
    loop {
        let jobs = search.as_mut().map(GoodputSearch::next_batch);
        let jobs = jobs.unwrap_or_default();
        let mut results = Vec::with_capacity(jobs.len());
        let mut last = jobs.is_empty();
        for job in &jobs {
            if run > 0 && !keep_going() {
                last = true;
                break;
            }
            let cfg = match &base {
                Some(cfg) => cfg,
                None => match SimConfig::from_plan(plan, job.rate_rps) {
                    Ok(cfg) => base.insert(cfg),
                    Err(_) => {
                        last = true;
                        break;
                    }
                },
            };
            match run_job_with(cfg, job) {
                Ok(r) => results.push(r),
                Err(_) => {
                    last = true;
                    break;
                }
            }
            run += 1;
        }
        if let (false, Some(search)) = (last, search.as_mut()) {
            search.feed(&results);
            last = search.is_done();
        }
        send(Prefetched { results, last });
        if last {
            return run;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use goodput_core::calibrate::{Calibrator, FitTask};
    use goodput_core::measure::import_files;
    use goodput_core::search::{run_job, GoodputResult};

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
    fn warm_up_runs_the_search_batch_by_batch_and_stops_when_told() {
        let plan = Plan::default();
        let first = GoodputSearch::new(&plan).unwrap().next_batch();
        let mut sent = Vec::new();
        let run = warm_up(&plan, &mut || true, &mut |p| sent.push(p));
        let ids: Vec<u32> = sent[0].results.iter().map(|r| r.id).collect();
        assert_eq!(ids, first.iter().map(|j| j.id).collect::<Vec<_>>());
        assert_eq!(run, sent.iter().map(|p| p.results.len()).sum::<usize>());
        let lasts: Vec<bool> = sent.iter().map(|p| p.last).collect();
        assert_eq!(lasts.iter().filter(|&&l| l).count(), 1);
        assert_eq!(lasts.last(), Some(&true));
        // The first job always runs; the budget is checked before each later one, and
        // the message that stops says it is the last.
        let mut sent = Vec::new();
        assert_eq!(warm_up(&plan, &mut || false, &mut |p| sent.push(p)), 1);
        assert_eq!((sent.len(), sent[0].last), (1, true));
        let mut asked = 0;
        let two = warm_up(
            &plan,
            &mut || {
                asked += 1;
                asked < 2
            },
            &mut |_| {},
        );
        assert_eq!(two, 2);
        // A plan that cannot be searched sends one empty last message.
        let mut broken = Plan::default();
        broken.slo.attainment_target = 2.0;
        let mut sent = Vec::new();
        assert_eq!(warm_up(&broken, &mut || true, &mut |p| sent.push(p)), 0);
        assert_eq!(
            sent,
            vec![Prefetched {
                results: Vec::new(),
                last: true
            }]
        );
    }

    /// The page's first search waits for the worker that runs it ahead, for a plan with
    /// the same simulations only, until that worker's last message, the store's closing
    /// or the page's own limit.
    #[test]
    fn the_store_waits_for_the_worker_ahead_until_its_last_message() {
        let plan = Plan::default();
        let mut renamed = plan.clone();
        renamed.name = "renamed".into();
        let mut other = plan.clone();
        other.engine.max_num_seqs += 1;
        assert!(!PrefetchStore::expecting(None).waits_for(&plan));
        let mut store = PrefetchStore::expecting(Some(&plan));
        assert!(store.waits_for(&plan) && store.waits_for(&renamed));
        assert!(!store.waits_for(&other));
        let mut sent = Vec::new();
        warm_up(&plan, &mut || true, &mut |p| sent.push(p));
        let last = sent.pop().unwrap();
        for p in sent {
            store.add(p);
            assert!(store.waits_for(&plan));
        }
        store.add(last);
        assert!(!store.waits_for(&plan), "the last message ends the wait");
        let mut store = PrefetchStore::expecting(Some(&plan));
        store.stop_waiting();
        assert!(!store.waits_for(&plan));
        let mut store = PrefetchStore::expecting(Some(&plan));
        store.close();
        assert!(!store.waits_for(&plan));
    }

    /// Runs `plan`'s goodput search to its end, each batch's jobs first offered to
    /// `store`; returns the result and the simulations run.
    fn search_with(plan: &Plan, store: &mut PrefetchStore) -> (GoodputResult, usize) {
        let mut search = GoodputSearch::new(plan).unwrap();
        let mut ran = 0;
        while !search.is_done() {
            let (found, rest) = store.take(plan, search.next_batch());
            let mut results: Vec<JobResult> = found.into_iter().map(|(_, r)| r).collect();
            for job in &rest {
                results.push(run_job(plan, job).unwrap());
                ran += 1;
            }
            search.feed(&results);
        }
        (search.result().unwrap(), ran)
    }

    /// Fed from what the worker ahead sent, the page's first search runs nothing and
    /// finds the goodput it would have computed. The results go to the first search of a
    /// plan with the same simulations (a new name is fine), once, to no other plan, and
    /// to no search after the store closes.
    #[test]
    fn a_search_fed_prefetched_results_finds_the_computed_goodput() {
        let plan = Plan::default();
        let (computed, all) = search_with(&plan, &mut PrefetchStore::default());
        let mut store = PrefetchStore::expecting(Some(&plan));
        let mut sent = Vec::new();
        let run = warm_up(&plan, &mut || true, &mut |p| sent.push(p));
        assert_eq!(run, all);
        assert!(sent.len() > 2, "one message per batch: {}", sent.len());
        for p in sent {
            let body = serde_json::to_string(&WorkerReply::Prefetched(Box::new(p.clone())));
            assert!(is_unasked(&body.unwrap()));
            store.add(p);
        }
        assert_eq!(store.len(), all);
        // Another objective: the same jobs ask for other simulations.
        let mut other = plan.clone();
        other.slo.ttft_s = other.slo.ttft_s.map(|s| s * 2.0);
        let first = |p: &Plan| GoodputSearch::new(p).unwrap().next_batch();
        assert_eq!(first(&other), first(&plan));
        let (_, ran) = search_with(&other, &mut store);
        assert_eq!((ran, store.len()), (all, all), "another plan takes none");
        let mut renamed = plan.clone();
        renamed.name = "renamed".into();
        let (fed, ran) = search_with(&renamed, &mut store);
        assert_eq!(ran, 0, "the whole search came from the store");
        assert_eq!(fed, computed);
        assert!(store.is_empty());
        let (_, ran) = search_with(&plan, &mut store);
        assert_eq!(ran, all, "each result is handed out once");
        warm_up(&plan, &mut || true, &mut |p| store.add(p));
        store.close();
        assert!(store.is_empty());
        warm_up(&plan, &mut || true, &mut |p| store.add(p));
        assert!(store.is_empty(), "a closed store keeps nothing");
    }
}
