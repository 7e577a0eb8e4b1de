//! The GPU × layout comparison in the browser: the core's [`Shootout`] machine driven by a
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
//! running comparison; picking a row only changes the GPU and layout, which keeps it.

use goodput_core::plan::comparison::fingerprint;
use goodput_core::search::JobResult;
use goodput_core::shootout::{Shootout, ShootoutRecord, ShootoutSpec};
use goodput_core::Plan;
use leptos::prelude::*;

use super::lazy_pool::LazyPool;
use super::protocol::{Request, WorkerReply, WorkerRequest};
use super::side::{JobMachine, PoolOptions, Reply, SideJobs, SideOwner, SideStatus};
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
pub type ShootoutStatus = SideStatus<ShootoutPhase>;

/// The comparison as its controller drives it.
struct ShootoutJobs {
    machine: Shootout,
    spec: ShootoutSpec,
    base: Plan,
}

impl JobMachine for ShootoutJobs {
    type Results = (u32, Vec<JobResult>);
    type Output = ShootoutRecord;

    fn reply(reply: WorkerReply) -> Result<Option<Reply<Self::Results>>, String> {
        Ok(match reply {
            WorkerReply::Sim(r) => Some(Reply {
                run: r.run,
                error: r.error,
                results: (r.tag, r.results),
            }),
            _ => None,
        })
    }

    fn send(&mut self, pool: &LazyPool) {
        for b in self.machine.next_batches() {
            let Some(plan) = self.machine.plan_of(b.option) else {
                continue;
            };
            pool.submit_split(&b.jobs, |run, jobs| {
                WorkerRequest::Sim(Request {
                    run,
                    plan: plan.clone(),
                    jobs,
                    tag: b.option,
                })
            });
        }
    }

    fn feed(&mut self, (option, results): &Self::Results) {
        self.machine.feed(*option, results);
    }

    fn progress(&self) -> (u32, u32) {
        let p = self.machine.progress();
        (p.done, p.total)
    }

    fn finish(&mut self) -> Option<Result<ShootoutRecord, String>> {
        if !self.machine.is_done() {
            return None;
        }
        let result = self.machine.result()?;
        Some(Ok(ShootoutRecord::of(&self.base, &self.spec, result)))
    }
}

/// The plan's fingerprint when the running comparison started.
struct Started {
    fingerprint: String,
}

/// Runs comparisons of the good plan and publishes their status.
#[derive(Clone, Copy)]
pub struct ShootoutController {
    /// Phase and progress.
    pub status: RwSignal<ShootoutStatus>,
    state: PlanState,
    jobs: SideJobs<ShootoutJobs>,
    started: StoredValue<Started, LocalStorage>,
}

impl ShootoutController {
    /// A controller for `state`'s plan; starts no worker until the first comparison.
    pub fn new(state: PlanState) -> ShootoutController {
        let c = ShootoutController {
            status: RwSignal::new(ShootoutStatus::default()),
            state,
            jobs: SideJobs::new(),
            started: StoredValue::new_local(Started {
                fingerprint: String::new(),
            }),
        };
        // Cancel on an edit the numbers depend on.
        state.on_edit(move || {
            let now = state.draft.with_untracked(fingerprint);
            let running = c
                .status
                .with_untracked(|s| s.phase == ShootoutPhase::Running);
            if running && c.started.with_value(|d| d.fingerprint != now) {
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

    /// Compares the plan on screen over `spec`: the good plan, or a draft refused only
    /// because the model does not fit its own GPU (the comparison says where it fits).
    pub fn run(&self, spec: ShootoutSpec) {
        let mut base = self.state.draft.get_untracked();
        if base.validate().is_err() && !base.refused_only_for_memory() {
            let why = self
                .state
                .problem
                .with_untracked(|p| p.as_ref().map(|p| p.message.clone()))
                .unwrap_or_default();
            return self.stop(ShootoutPhase::Failed(format!("fix the plan first: {why}")));
        }
        base.planning.measured_sweep.clear();
        base.shootout = None;
        let spec = match spec.checked(goodput_core::shootout::experts_of(&base)) {
            Ok(s) => s,
            Err(e) => return self.stop(ShootoutPhase::Failed(e.to_string())),
        };
        let machine = match Shootout::new(&base, &spec) {
            Ok(m) => m,
            Err(e) => return self.stop(ShootoutPhase::Failed(e.to_string())),
        };
        self.stop(ShootoutPhase::Running);
        let total = machine.progress().total;
        self.status.update(|s| s.total = total);
        self.started
            .update_value(|d| d.fingerprint = fingerprint(&base));
        self.jobs.start(
            ShootoutJobs {
                machine,
                spec,
                base,
            },
            *self,
            PoolOptions::SIMULATIONS,
        );
    }

    /// Stops the running comparison; the plan keeps the last finished one.
    pub fn cancel(&self) {
        self.stop(ShootoutPhase::Cancelled("stopped".into()));
    }
}

impl SideOwner<ShootoutJobs> for ShootoutController {
    type Phase = ShootoutPhase;

    fn jobs(&self) -> SideJobs<ShootoutJobs> {
        self.jobs
    }

    fn status(&self) -> RwSignal<ShootoutStatus> {
        self.status
    }

    fn failed_phase(message: String) -> ShootoutPhase {
        ShootoutPhase::Failed(message)
    }

    fn finished(&self, record: ShootoutRecord) {
        self.state.update(|p| p.shootout = Some(record));
        self.status.update(|s| s.phase = ShootoutPhase::Done);
    }
}
