//! Disaggregated prefill/decode in the browser: the core's [`DisaggSizing`] machine
//! driven by a worker pool of its own.
//!
//! ```text
//!   Size ─DisaggSizing::with_search(good plan, the page's search if its key matches)
//!     ─▶ next_batch: aggregated jobs (the search unless supplied, then the planned-load
//!        simulation) + xPyD points
//!     DisaggRequest{plan, sizing rate, jobs} ─▶ pool (Web Workers) ─▶ DisaggReply
//!        ▲                                                               │
//!        └────────────────────────── feed(results) ◀─────────────────────┘
//!   done ─▶ result (with the plan it was sized for; stale once the plan changes)
//! ```
//!
//! The workers get plain data, the plan and the sizing rate, and resolve both
//! configurations themselves ([`goodput_core::disagg::run_disagg_jobs`]), so the page
//! gets the numbers `goodput disagg` prints. An edit the sizing depends on cancels a
//! running one.

use goodput_core::disagg::{DisaggJobResult, DisaggResult, DisaggSizing};
use goodput_core::Plan;
use leptos::prelude::*;

use super::lazy_pool::LazyPool;
use super::protocol::{DisaggRequest, WorkerReply, WorkerRequest};
use super::side::{JobMachine, PoolOptions, Reply, SideJobs, SideOwner, SideStatus};
use super::RunController;
use crate::state::fields::disagg_of;
use crate::state::PlanState;

/// What the sizing is doing.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum DisaggPhase {
    /// Not running.
    #[default]
    Idle,
    /// Simulating.
    Running,
    /// The last sizing finished.
    Done,
    /// Stopped; the message says why.
    Cancelled(String),
    /// The sizing could not run; the message says why.
    Failed(String),
}

/// Phase and progress.
pub type DisaggStatus = SideStatus<DisaggPhase>;

/// What a sizing depends on: the plan without its labels and day schedule, with its
/// pools as the sizing reads them (a plan without a disagg section is sized with the
/// defaults for it).
pub fn sizing_key(plan: &Plan) -> Plan {
    Plan {
        schedule: None,
        disagg: Some(disagg_of(plan)),
        ..plan.without_labels()
    }
}

/// The sizing as its controller drives it, with the [`sizing_key`] it runs for.
struct DisaggJobs {
    machine: DisaggSizing,
    key: Plan,
}

impl JobMachine for DisaggJobs {
    type Results = Vec<DisaggJobResult>;
    type Output = (Plan, DisaggResult);

    fn reply(reply: WorkerReply) -> Result<Option<Reply<Self::Results>>, String> {
        Ok(match reply {
            WorkerReply::Disagg(r) => Some(Reply {
                run: r.run,
                error: r.error,
                results: r.results,
            }),
            _ => None,
        })
    }

    fn send(&mut self, pool: &LazyPool) {
        let jobs = self.machine.next_batch();
        let (plan, rate_rps) = (self.machine.plan(), self.machine.sizing_rate_rps());
        pool.submit_split(&jobs, |run, jobs| {
            WorkerRequest::Disagg(DisaggRequest {
                run,
                plan: plan.clone(),
                rate_rps,
                jobs,
            })
        });
    }

    fn feed(&mut self, results: &Vec<DisaggJobResult>) {
        self.machine.feed(results);
    }

    fn progress(&self) -> (u32, u32) {
        let p = self.machine.progress();
        (p.done, p.total)
    }

    fn finish(&mut self) -> Option<Result<(Plan, DisaggResult), String>> {
        self.machine.is_done().then(|| {
            self.machine
                .result()
                .map(|r| (self.key.clone(), r))
                .ok_or_else(|| "the sizing ended without a result".to_string())
        })
    }
}

/// Runs sizings of the good plan and publishes their status and result.
#[derive(Clone, Copy)]
pub struct DisaggController {
    /// Phase and progress.
    pub status: RwSignal<DisaggStatus>,
    /// The last finished sizing, with the [`sizing_key`] of the plan it was run for.
    pub result: RwSignal<Option<(Plan, DisaggResult)>>,
    state: PlanState,
    runs: RunController,
    jobs: SideJobs<DisaggJobs>,
    /// The [`sizing_key`] of the running (or last) sizing.
    key: StoredValue<Plan, LocalStorage>,
}

impl DisaggController {
    /// A controller for `state`'s plan that reuses `runs`' goodput search; starts no
    /// worker until the first sizing.
    pub fn new(state: PlanState, runs: RunController) -> DisaggController {
        let c = DisaggController {
            status: RwSignal::new(DisaggStatus::default()),
            result: RwSignal::new(None),
            state,
            runs,
            jobs: SideJobs::new(),
            key: StoredValue::new_local(Plan::default()),
        };
        // Cancel on an edit the numbers depend on.
        state.on_edit(move || {
            let now = state.good.with_untracked(sizing_key);
            let running = c.status.with_untracked(|s| s.phase == DisaggPhase::Running);
            if running && c.key.with_value(|k| *k != now) {
                c.stop(DisaggPhase::Cancelled(
                    "the plan changed while the pools were sized; size them again".into(),
                ));
            }
        });
        c
    }

    /// The controller provided by `App`.
    pub fn expect_context() -> DisaggController {
        expect_context::<DisaggController>()
    }

    /// Whether the result on screen was sized for the plan as it stands: the good plan,
    /// with no edit since that has a problem.
    pub fn is_fresh(&self) -> bool {
        if self.state.is_stale() {
            return false;
        }
        let now = self.state.good.with(sizing_key);
        self.result
            .with(|r| r.as_ref().is_some_and(|(key, _)| *key == now))
    }

    /// Sizes the good plan's pools.
    pub fn run(&self) {
        let plan = self.state.good.get_untracked();
        // The aggregated side's goodput is the page's own search when it ran for this
        // plan's search key; otherwise the sizing searches alongside the pools.
        let sized = self
            .runs
            .search
            .with_untracked(|s| DisaggSizing::with_search(&plan, s.as_ref().map(|(p, r)| (p, r))));
        let machine = match sized {
            Ok(m) => m,
            // A pool's setting the plan refuses, named by its label.
            Err(goodput_core::disagg::DisaggError::Plan(e)) => {
                return self.stop(DisaggPhase::Failed(
                    crate::state::messages::plan_error_words(&e),
                ))
            }
            Err(e) => return self.stop(DisaggPhase::Failed(e.to_string())),
        };
        self.stop(DisaggPhase::Running);
        let total = machine.progress().total;
        self.status.update(|s| s.total = total);
        let key = sizing_key(&plan);
        self.key.set_value(key.clone());
        self.jobs
            .start(DisaggJobs { machine, key }, *self, PoolOptions::SIMULATIONS);
    }

    /// Stops the running sizing; the last finished one stays.
    pub fn cancel(&self) {
        self.stop(DisaggPhase::Cancelled("stopped".into()));
    }
}

impl SideOwner<DisaggJobs> for DisaggController {
    type Phase = DisaggPhase;

    fn jobs(&self) -> SideJobs<DisaggJobs> {
        self.jobs
    }

    fn status(&self) -> RwSignal<DisaggStatus> {
        self.status
    }

    fn failed_phase(message: String) -> DisaggPhase {
        DisaggPhase::Failed(message)
    }

    fn finished(&self, result: (Plan, DisaggResult)) {
        self.result.set(Some(result));
        self.status.update(|s| s.phase = DisaggPhase::Done);
    }
}
