//! One controller shape for the side computations (the GPU comparison, the
//! disaggregation sizing, a day's ramps, calibration fits): a core job machine driven by
//! a [`LazyPool`] of its own.
//!
//! ```text
//!   owner.run ─SideJobs::start(machine)─▶ machine.send(pool): requests of the current run
//!        ▲                                                      │ (Web Workers)
//!        │   stale run? ignore   error? owner.failed            ▼
//!        └── machine.feed(results) ─▶ owner.progressed ◀── reply of this machine's kind
//!   machine.finish() ─▶ owner.finished(output)
//! ```
//!
//! The owner (each controller) keeps its own status and result signals, and decides what
//! cancels a run; this drives the machine and tells it what happened.

use leptos::prelude::*;

use super::lazy_pool::LazyPool;
use super::pool::{LOST_TWICE, UNREADABLE_REPLY};
use super::protocol::WorkerReply;

/// A worker reply's parts that the controller reads.
pub struct Reply<R> {
    /// The request's run id.
    pub run: u32,
    /// Why the batch failed, if it did.
    pub error: Option<String>,
    /// The results, for the machine.
    pub results: R,
}

/// A core job machine as a side controller drives it: jobs out, replies in, progress,
/// result.
pub trait JobMachine: 'static {
    /// The results one reply carries.
    type Results;
    /// What the machine ends with.
    type Output;
    /// The reply's parts when it is of this machine's kind, `Ok(None)` for a reply of
    /// another kind (ignored), `Err(why)` for one that must fail the run.
    fn reply(reply: WorkerReply) -> Result<Option<Reply<Self::Results>>, String>;
    /// Sends every request that can run now, as requests of the pool's current run.
    fn send(&mut self, pool: &LazyPool);
    /// Takes a reply's results back.
    fn feed(&mut self, results: &Self::Results);
    /// Simulations (or jobs) finished and expected.
    fn progress(&self) -> (u32, u32);
    /// The output once every job is settled (`Err`: the machine ended without one);
    /// `None` while jobs are out.
    fn finish(&mut self) -> Option<Result<Self::Output, String>>;
}

/// A side computation's phase and progress.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SideStatus<P> {
    /// Phase.
    pub phase: P,
    /// Simulations (or fits) finished.
    pub done: u32,
    /// Simulations (or fits) expected; an estimate where the machine decides as it goes.
    pub total: u32,
}

/// A side controller: its status signal and machine, and what it does with the output.
pub trait SideOwner<M: JobMachine>: Copy + 'static {
    /// The controller's phases.
    type Phase: Clone + PartialEq + Send + Sync + 'static;
    /// The controller's machine and pool.
    fn jobs(&self) -> SideJobs<M>;
    /// The controller's phase and progress.
    fn status(&self) -> RwSignal<SideStatus<Self::Phase>>;
    /// The phase of a failed run, saying why.
    fn failed_phase(message: String) -> Self::Phase;
    /// Publishes the machine's output.
    fn finished(&self, output: M::Output);
    /// What else stopping does (clearing a debounce, forgetting a key).
    fn on_stop(&self, _phase: &Self::Phase) {}

    /// Stops the current run (its replies become stale) and shows `phase`.
    fn stop(&self, phase: Self::Phase) {
        self.on_stop(&phase);
        self.jobs().stop();
        self.status().set(SideStatus {
            phase,
            done: 0,
            total: 0,
        });
    }

    /// Stops the run as failed, with `message` (a worker's error or a lost job).
    fn failed(&self, message: String) {
        self.stop(Self::failed_phase(message));
    }

    /// Jobs finished and expected, after each reply.
    fn progressed(&self, done: u32, total: u32) {
        self.status().update(|s| {
            s.done = done;
            s.total = total;
        });
    }
}

/// How a controller's workers start.
#[derive(Debug, Clone, Copy)]
pub struct PoolOptions {
    /// The failure when two workers died on the same request.
    pub lost: &'static str,
    /// The failure for a reply that does not parse.
    pub unreadable: &'static str,
    /// Keep requests off the page while the workers load (requests too long for a
    /// main-thread slice).
    pub workers_only: bool,
}

impl PoolOptions {
    /// Simulation jobs short enough for a main-thread slice while the workers load.
    pub const SIMULATIONS: PoolOptions = PoolOptions {
        lost: LOST_TWICE,
        unreadable: UNREADABLE_REPLY,
        workers_only: false,
    };
}

struct Driver<M> {
    pool: LazyPool,
    machine: Option<M>,
}

/// The machine of one side controller, its pool and its run id.
pub struct SideJobs<M: JobMachine> {
    driver: StoredValue<Driver<M>, LocalStorage>,
}

impl<M: JobMachine> Clone for SideJobs<M> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<M: JobMachine> Copy for SideJobs<M> {}

impl<M: JobMachine> SideJobs<M> {
    /// No machine and no workers yet.
    pub fn new() -> SideJobs<M> {
        SideJobs {
            driver: StoredValue::new_local(Driver {
                pool: LazyPool::new(),
                machine: None,
            }),
        }
    }

    /// Ends the current run: its queued requests are dropped and its replies become
    /// stale; the machine is dropped.
    pub fn stop(&self) {
        self.driver.update_value(|d| {
            d.pool.next_run();
            d.machine = None;
        });
    }

    /// Runs `machine` as the current run (after [`SideJobs::stop`]), starting the workers
    /// on first use; sends what can run now, or hands the output over at once.
    pub fn start(&self, machine: M, owner: impl SideOwner<M>, options: PoolOptions) {
        let jobs = *self;
        self.driver.update_value(|d| {
            d.pool.start(
                move |body| jobs.on_reply(&body, owner, options),
                move |run| {
                    if jobs.driver.with_value(|d| d.pool.is_current(run)) {
                        owner.failed(options.lost.into());
                    }
                },
            );
            if options.workers_only {
                d.pool.wait_for_workers();
            }
            d.machine = Some(machine);
        });
        self.pump(owner);
    }

    /// Sends the jobs that can run now, or hands the output over when all are settled.
    fn pump(&self, owner: impl SideOwner<M>) {
        let done = self.driver.try_update_value(|d| {
            let m = d.machine.as_mut()?;
            let out = m.finish();
            if out.is_some() {
                d.machine = None;
            } else {
                m.send(&d.pool);
            }
            out
        });
        match done {
            Some(Some(Ok(output))) => owner.finished(output),
            Some(Some(Err(why))) => owner.failed(why),
            _ => {}
        }
    }

    fn on_reply(&self, body: &str, owner: impl SideOwner<M>, options: PoolOptions) {
        let reply = match serde_json::from_str::<WorkerReply>(body) {
            Ok(r) => match M::reply(r) {
                Ok(Some(r)) => r,
                Ok(None) => return,
                Err(why) => return owner.failed(why),
            },
            Err(_) => return owner.failed(options.unreadable.into()),
        };
        if !self.driver.with_value(|d| d.pool.is_current(reply.run)) {
            return;
        }
        if let Some(e) = reply.error {
            return owner.failed(e);
        }
        let progress = self.driver.try_update_value(|d| {
            d.machine.as_mut().map(|m| {
                m.feed(&reply.results);
                m.progress()
            })
        });
        if let Some(Some((done, total))) = progress {
            owner.progressed(done, total);
            self.pump(owner);
        }
    }
}

impl<M: JobMachine> Default for SideJobs<M> {
    fn default() -> Self {
        SideJobs::new()
    }
}
