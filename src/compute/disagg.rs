//! Disaggregated prefill/decode in the browser: the core's [`DisaggSizing`] machine
//! driven by a worker pool of its own.
//!
//! ```text
//!   Size ─DisaggSizing::new(good plan)─▶ next_batch: aggregated search jobs + xPyD points
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

use goodput_core::disagg::{DisaggResult, DisaggSizing};
use goodput_core::Plan;
use leptos::prelude::*;

use super::lazy_pool::LazyPool;
use super::protocol::{DisaggRequest, WorkerReply, WorkerRequest};
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
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DisaggStatus {
    /// Phase.
    pub phase: DisaggPhase,
    /// Simulations finished.
    pub done: u32,
    /// Simulations expected (an estimate: the search decides as it goes).
    pub total: u32,
}

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

struct Driver {
    pool: LazyPool,
    machine: Option<DisaggSizing>,
    key: Plan,
}

/// Runs sizings of the good plan and publishes their status and result.
#[derive(Clone, Copy)]
pub struct DisaggController {
    /// Phase and progress.
    pub status: RwSignal<DisaggStatus>,
    /// The last finished sizing, with the [`sizing_key`] of the plan it was run for.
    pub result: RwSignal<Option<(Plan, DisaggResult)>>,
    state: PlanState,
    driver: StoredValue<Driver, LocalStorage>,
}

impl DisaggController {
    /// A controller for `state`'s plan; starts no worker until the first sizing.
    pub fn new(state: PlanState) -> DisaggController {
        let c = DisaggController {
            status: RwSignal::new(DisaggStatus::default()),
            result: RwSignal::new(None),
            state,
            driver: StoredValue::new_local(Driver {
                pool: LazyPool::new(),
                machine: None,
                key: Plan::default(),
            }),
        };
        // Cancel on an edit the numbers depend on.
        Effect::new(move |_| {
            let now = state.good.with(sizing_key);
            let running = c.status.with_untracked(|s| s.phase == DisaggPhase::Running);
            if running && c.driver.with_value(|d| d.key != now) {
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

    /// Whether the result on screen was sized for the good plan as it stands.
    pub fn is_fresh(&self) -> bool {
        let now = self.state.good.with(sizing_key);
        self.result
            .with(|r| r.as_ref().is_some_and(|(key, _)| *key == now))
    }

    /// Sizes the good plan's pools.
    pub fn run(&self) {
        let plan = self.state.good.get_untracked();
        let machine = match DisaggSizing::new(&plan) {
            Ok(m) => m,
            Err(e) => return self.stop(DisaggPhase::Failed(e.to_string())),
        };
        self.stop(DisaggPhase::Running);
        self.ensure_pool();
        let total = machine.progress().total;
        self.status.update(|s| s.total = total);
        self.driver.update_value(|d| {
            d.key = sizing_key(&plan);
            d.machine = Some(machine);
        });
        self.pump();
    }

    /// Stops the running sizing; the last finished one stays.
    pub fn cancel(&self) {
        self.stop(DisaggPhase::Cancelled("stopped".into()));
    }

    fn ensure_pool(&self) {
        let c = *self;
        self.driver.update_value(|d| {
            d.pool.start(
                move |body| c.on_reply(&body),
                move |run| {
                    if c.driver.with_value(|d| d.pool.is_current(run)) {
                        c.stop(DisaggPhase::Failed(
                            "a simulation worker stopped unexpectedly twice on the same jobs"
                                .into(),
                        ));
                    }
                },
            )
        });
    }

    fn stop(&self, phase: DisaggPhase) {
        self.driver.update_value(|d| {
            d.pool.next_run();
            d.machine = None;
        });
        self.status.set(DisaggStatus {
            phase,
            done: 0,
            total: 0,
        });
    }

    /// Sends the jobs that can run now, or publishes the result when all are settled.
    fn pump(&self) {
        let done = self.driver.try_update_value(|d| {
            let m = d.machine.as_mut()?;
            if m.is_done() {
                let result = m.result();
                d.machine = None;
                return Some(result.map(|r| (d.key.clone(), r)));
            }
            let jobs = m.next_batch();
            let (plan, rate_rps) = (m.plan(), m.sizing_rate_rps());
            d.pool.submit_split(&jobs, |run, jobs| {
                WorkerRequest::Disagg(DisaggRequest {
                    run,
                    plan: plan.clone(),
                    rate_rps,
                    jobs,
                })
            });
            None
        });
        match done {
            Some(Some(Some(result))) => {
                self.result.set(Some(result));
                self.status.update(|s| s.phase = DisaggPhase::Done);
            }
            Some(Some(None)) => self.stop(DisaggPhase::Failed(
                "the sizing ended without a result".into(),
            )),
            _ => {}
        }
    }

    fn on_reply(&self, body: &str) {
        let reply = match serde_json::from_str::<WorkerReply>(body) {
            Ok(WorkerReply::Disagg(r)) => r,
            Ok(_) => return,
            Err(_) => {
                return self.stop(DisaggPhase::Failed(
                    "a worker sent an unreadable reply".into(),
                ))
            }
        };
        if !self.driver.with_value(|d| d.pool.is_current(reply.run)) {
            return;
        }
        if let Some(e) = reply.error {
            return self.stop(DisaggPhase::Failed(e));
        }
        let progress = self.driver.try_update_value(|d| {
            d.machine.as_mut().map(|m| {
                m.feed(&reply.results);
                m.progress()
            })
        });
        if let Some(Some(p)) = progress {
            self.status.update(|s| {
                s.done = p.done;
                s.total = p.total;
            });
            self.pump();
        }
    }
}
