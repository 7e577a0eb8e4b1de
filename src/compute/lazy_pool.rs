//! A worker pool of its own for one long computation (the GPU comparison, the
//! disaggregation sizing, a day's ramps, calibration fits): started on first use, with the run id that tells a current
//! reply from a stale one, and batches split over the workers.

use std::rc::Rc;
use std::time::Duration;

use super::pool::{deal, pool_size, Pool, PoolMode, Task};
use super::protocol::WorkerRequest;

/// How long a fresh pool waits for a worker before it runs requests on the page.
const READY_TIMEOUT: Duration = Duration::from_secs(8);

/// A pool started on the first run, and the id of the current run.
#[derive(Default)]
pub struct LazyPool {
    pool: Option<Pool>,
    run: u32,
}

impl LazyPool {
    /// No workers yet; run 0.
    pub fn new() -> LazyPool {
        LazyPool::default()
    }

    /// The current run's id.
    pub fn run(&self) -> u32 {
        self.run
    }

    /// Whether a reply of `run` belongs to the current run.
    pub fn is_current(&self, run: u32) -> bool {
        run == self.run
    }

    /// Starts a new run: requests of earlier runs still queued are dropped, and their
    /// replies are no longer current. Returns the new id.
    pub fn next_run(&mut self) -> u32 {
        self.run = self.run.wrapping_add(1);
        if let Some(pool) = &self.pool {
            pool.cancel_before(self.run);
        }
        self.run
    }

    /// Starts the workers unless they are started: `on_reply` gets every reply body,
    /// `on_lost` the run id of a request two workers died running.
    pub fn start(&mut self, on_reply: impl Fn(String) + 'static, on_lost: impl Fn(u32) + 'static) {
        if self.pool.is_some() {
            return;
        }
        self.pool = Some(Pool::start(
            pool_size(),
            super::protocol::handle,
            Rc::new(on_reply),
            Rc::new(|_: PoolMode| {}),
            Rc::new(move |task: Task| on_lost(task.run)),
            READY_TIMEOUT,
        ));
    }

    /// Keeps requests off the page while the workers load (requests too long for a
    /// main-thread slice, such as calibration fits); see [`Pool::wait_for_workers`].
    pub fn wait_for_workers(&self) {
        if let Some(pool) = &self.pool {
            pool.wait_for_workers();
        }
    }

    /// Sends `request(run)` as a request of the current run.
    pub fn submit(&self, request: impl FnOnce(u32) -> WorkerRequest) {
        let Some(pool) = &self.pool else {
            return;
        };
        if let Ok(body) = serde_json::to_string(&request(self.run)) {
            pool.submit(Task {
                run: self.run,
                body,
                attempts: 0,
            });
        }
    }

    /// Sends `jobs` as requests of the current run, dealt over the workers ([`deal`]);
    /// `request(run, part)` makes each request.
    pub fn submit_split<J: Clone>(
        &self,
        jobs: &[J],
        request: impl Fn(u32, Vec<J>) -> WorkerRequest,
    ) {
        let workers = match self.pool.as_ref().map(Pool::mode) {
            Some(PoolMode::Workers(n)) => n.max(1),
            _ => pool_size().max(1),
        };
        for part in deal(jobs, workers) {
            self.submit(|run| request(run, part));
        }
    }
}
