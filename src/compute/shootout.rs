//! The GPU × TP comparison in the browser: the core's [`Shootout`] machine driven by a
//! worker pool of its own, its result kept in the plan (and so in the share link).
//!
//! ```text
//!   Compare ─Shootout::new(good plan, spec)─▶ next_batches: (option, jobs)
//!     Request{tag: option, plan: plan_of(option)} ─▶ pool (Web Workers) ─▶ Reply{tag}
//!        ▲                                                                  │
//!        └───────────────────── feed(option, results) ◀─────────────────────┘
//!   done ─▶ plan.shootout = ShootoutRecord   (the search does not re-run for it)
//! ```
//!
//! An edit that changes what the numbers depend on (the plan's fingerprint) cancels a
//! running comparison; picking a row only changes the GPU and TP degree, which keeps it.

use goodput_core::plan::comparison::fingerprint;
use goodput_core::shootout::{Shootout, ShootoutRecord, ShootoutSpec};
use goodput_core::Plan;
use leptos::prelude::*;

use super::lazy_pool::LazyPool;
use super::protocol::{Request, WorkerReply, WorkerRequest};
use crate::state::PlanState;

/// What the comparison is doing.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum ShootoutPhase {
    /// Not running.
    #[default]
    Idle,
    /// Simulating the options.
    Running,
    /// The last comparison finished and is in the plan.
    Done,
    /// Stopped; the message says why.
    Cancelled(String),
    /// The comparison could not run; the message says why.
    Failed(String),
}

/// Phase and progress.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ShootoutStatus {
    /// Phase.
    pub phase: ShootoutPhase,
    /// Simulations finished.
    pub done: u32,
    /// Simulations expected.
    pub total: u32,
}

struct Driver {
    pool: LazyPool,
    machine: Option<Shootout>,
    spec: ShootoutSpec,
    base: Plan,
    base_fingerprint: String,
}

/// Runs comparisons of the good plan and publishes their status.
#[derive(Clone, Copy)]
pub struct ShootoutController {
    /// Phase and progress.
    pub status: RwSignal<ShootoutStatus>,
    state: PlanState,
    driver: StoredValue<Driver, LocalStorage>,
}

impl ShootoutController {
    /// A controller for `state`'s plan; starts no worker until the first comparison.
    pub fn new(state: PlanState) -> ShootoutController {
        let c = ShootoutController {
            status: RwSignal::new(ShootoutStatus::default()),
            state,
            driver: StoredValue::new_local(Driver {
                pool: LazyPool::new(),
                machine: None,
                spec: ShootoutSpec::default(),
                base: Plan::default(),
                base_fingerprint: String::new(),
            }),
        };
        // Cancel on an edit the numbers depend on.
        Effect::new(move |_| {
            let now = state.good.with(fingerprint);
            let running = c
                .status
                .with_untracked(|s| s.phase == ShootoutPhase::Running);
            if running && c.driver.with_value(|d| d.base_fingerprint != now) {
                c.stop(ShootoutPhase::Cancelled(
                    "the plan changed while the GPUs were compared; compare again".into(),
                ));
            }
        });
        c
    }

    /// The controller provided by `App`.
    pub fn expect_context() -> ShootoutController {
        expect_context::<ShootoutController>()
    }

    /// Compares the good plan over `spec`.
    pub fn run(&self, spec: ShootoutSpec) {
        let mut base = self.state.good.get_untracked();
        base.planning.measured_sweep.clear();
        base.shootout = None;
        let spec = match spec.checked() {
            Ok(s) => s,
            Err(e) => return self.stop(ShootoutPhase::Failed(e.to_string())),
        };
        let machine = match Shootout::new(&base, &spec) {
            Ok(m) => m,
            Err(e) => return self.stop(ShootoutPhase::Failed(e.to_string())),
        };
        self.stop(ShootoutPhase::Running);
        self.ensure_pool();
        let total = machine.progress().total;
        self.status.update(|s| s.total = total);
        self.driver.update_value(|d| {
            d.base_fingerprint = fingerprint(&base);
            d.base = base;
            d.spec = spec;
            d.machine = Some(machine);
        });
        self.pump();
    }

    /// Stops the running comparison; the plan keeps the last finished one.
    pub fn cancel(&self) {
        self.stop(ShootoutPhase::Cancelled("stopped".into()));
    }

    fn ensure_pool(&self) {
        let c = *self;
        self.driver.update_value(|d| {
            d.pool.start(
                move |body| c.on_reply(&body),
                move |run| {
                    if c.driver.with_value(|d| d.pool.is_current(run)) {
                        c.stop(ShootoutPhase::Failed(
                            "a simulation worker stopped unexpectedly twice on the same jobs"
                                .into(),
                        ));
                    }
                },
            )
        });
    }

    fn stop(&self, phase: ShootoutPhase) {
        self.driver.update_value(|d| {
            d.pool.next_run();
            d.machine = None;
        });
        self.status.set(ShootoutStatus {
            phase,
            done: 0,
            total: 0,
        });
    }

    /// Sends every batch that can run now, or stores the result when all are settled.
    fn pump(&self) {
        let done = self.driver.try_update_value(|d| {
            let m = d.machine.as_mut()?;
            if m.is_done() {
                let result = m.result()?;
                d.machine = None;
                return Some(ShootoutRecord::of(&d.base, &d.spec, result));
            }
            for b in m.next_batches() {
                let Some(plan) = m.plan_of(b.option) else {
                    continue;
                };
                d.pool.submit_split(&b.jobs, |run, jobs| {
                    WorkerRequest::Sim(Request {
                        run,
                        plan: plan.clone(),
                        jobs,
                        tag: b.option,
                    })
                });
            }
            None
        });
        if let Some(Some(record)) = done {
            self.state.update(|p| p.shootout = Some(record));
            self.status.update(|s| s.phase = ShootoutPhase::Done);
        }
    }

    fn on_reply(&self, body: &str) {
        let reply = match serde_json::from_str::<WorkerReply>(body) {
            Ok(WorkerReply::Sim(r)) => r,
            Ok(_) => return,
            Err(_) => {
                return self.stop(ShootoutPhase::Failed(
                    "a worker sent an unreadable reply".into(),
                ))
            }
        };
        if !self.driver.with_value(|d| d.pool.is_current(reply.run)) {
            return;
        }
        if let Some(e) = reply.error {
            return self.stop(ShootoutPhase::Failed(e));
        }
        let progress = self.driver.try_update_value(|d| {
            d.machine.as_mut().map(|m| {
                m.feed(reply.tag, &reply.results);
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
