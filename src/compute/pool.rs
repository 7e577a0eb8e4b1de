//! A pool of Web Workers that run JSON requests through `protocol::handle`, with a
//! main-thread executor that runs requests in short slices.
//!
//! The main thread works while the workers are still loading (so the first run does not
//! wait for them to get the page's module and warm up) and when no worker can start at all.
//! Once a worker is ready, queued requests go to the workers only, up to [`IN_FLIGHT`]
//! per worker, so that a worker never waits for the page between requests. Each slice runs
//! requests until [`SLICE_MS`] has passed, then yields to the browser through a
//! `MessageChannel` message (no timer clamping), so input is handled between slices.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::time::Duration;

use super::worker::WarmUp;
use goodput_core::Plan;
use js_sys::{Function, Reflect};
use leptos::prelude::{set_timeout, window};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Blob, BlobPropertyBag, MessageEvent, Url, Worker, WorkerOptions, WorkerType};

/// Runs one request body and returns the reply body (the code a worker runs).
pub type Executor = fn(&str) -> String;

/// Most requests a worker holds at once: the one it runs and the next, already posted,
/// so that it starts the next as soon as it replies instead of waiting for the page to
/// read the reply and post more. More would only hold back requests that another
/// worker could take at the end of a batch.
pub const IN_FLIGHT: usize = 2;

/// Longest the main thread keeps running requests before it yields to the page [ms].
/// A request started before the limit runs to its end, so a slice can be longer.
pub const SLICE_MS: f64 = 8.0;

/// Requests each worker gets per batch of jobs: as many as a worker holds at once
/// ([`IN_FLIGHT`]), so every request of a batch is posted at once and the split is fixed
/// then. Two rather than one let the page read a worker's first reply while that worker
/// runs its second; more would only add messages (three gave "Run again" 4 to 5 ms more
/// on two cores, docs/benchmark-history.md).
pub const REQUESTS_PER_WORKER: usize = 2;

/// The run's failure when two workers died on the same simulation jobs.
pub const LOST_TWICE: &str = "a simulation worker stopped unexpectedly twice on the same jobs";

/// The run's failure when a worker's reply does not parse.
pub const UNREADABLE_REPLY: &str = "a worker sent an unreadable reply";

/// Deals a batch of `jobs` into requests for `workers` workers ([`REQUESTS_PER_WORKER`]
/// each), or one job per request when `workers` is 0 (the page's own thread runs them in
/// short slices). Jobs are dealt in turn, like cards: neighbouring jobs (the replications
/// of one rate, the rates of one cell) cost alike, so each request gets a share of every
/// kind, and the requests cost about the same. Cut into runs of neighbours instead, one
/// request held the heaviest rate and its worker finished last. Results are matched by
/// job id, so the order does not change any answer. No request is empty.
pub fn deal<J: Clone>(jobs: &[J], workers: usize) -> Vec<Vec<J>> {
    let parts = if workers == 0 {
        jobs.len()
    } else {
        (workers * REQUESTS_PER_WORKER).min(jobs.len())
    };
    let mut out: Vec<Vec<J>> = (0..parts)
        .map(|_| Vec::with_capacity(jobs.len().div_ceil(parts.max(1))))
        .collect();
    for (i, job) in jobs.iter().enumerate() {
        out[i % parts].push(job.clone());
    }
    out
}

/// Where requests run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolMode {
    /// Workers are loading; meanwhile requests run on the page's thread in small slices.
    Starting,
    /// Requests run in this many Web Workers.
    Workers(usize),
    /// Workers could not start; requests run on the page's thread in small slices.
    MainThread,
}

/// One request: the run it belongs to (for cancelling) and its JSON body.
#[derive(Debug, Clone)]
pub struct Task {
    /// Run id; queued tasks of older runs are dropped on cancel.
    pub run: u32,
    /// JSON request body.
    pub body: String,
    /// Times a worker died while running it.
    pub attempts: u8,
}

struct Slot {
    worker: Worker,
    ready: bool,
    failed: bool,
    /// Requests posted to the worker and not yet answered, oldest (the running one)
    /// first; at most [`IN_FLIGHT`]. A worker answers in the order it is asked.
    busy: VecDeque<Task>,
}

struct Inner {
    slots: Vec<Slot>,
    queue: VecDeque<Task>,
    mode: PoolMode,
    executor: Executor,
    on_reply: Rc<dyn Fn(String)>,
    on_mode: Rc<dyn Fn(PoolMode)>,
    on_lost: Rc<dyn Fn(Task)>,
    pumping: bool,
    /// Whether requests may run on the page while the workers load (long requests, such
    /// as calibration fits, wait for a worker instead).
    page_while_starting: bool,
    /// Posts a message to itself to resume the main-thread executor (`None`: use a timer).
    wake: Option<Function>,
}

impl PoolMode {
    /// Whether requests run on the page's own thread in this mode.
    pub fn runs_on_page(self) -> bool {
        matches!(self, PoolMode::Starting | PoolMode::MainThread)
    }
}

/// The worker pool; clone-cheap handle.
#[derive(Clone)]
pub struct Pool {
    inner: Rc<RefCell<Inner>>,
}

/// How many workers to start: the browser's core count, at least 1, at most 8.
pub fn pool_size() -> usize {
    let n = window().navigator().hardware_concurrency();
    if n.is_finite() && n >= 1.0 {
        (n as usize).clamp(1, 8)
    } else {
        2
    }
}

/// Starts a worker on the page's own module: the [`super::worker::BOOTSTRAP`] script,
/// then the hand-off of the module.
fn spawn_worker() -> Option<Worker> {
    let parts = js_sys::Array::of1(&JsValue::from_str(super::worker::BOOTSTRAP));
    let opts = BlobPropertyBag::new();
    opts.set_type("text/javascript");
    let blob = Blob::new_with_str_sequence_and_options(&parts, &opts).ok()?;
    let url = Url::create_object_url_with_blob(&blob).ok()?;
    let options = WorkerOptions::new();
    options.set_type(WorkerType::Module);
    let worker = Worker::new_with_options(&url, &options).ok()?;
    if super::worker::hand_off(&worker, WarmUp::Short).is_err() {
        worker.terminate();
        return None;
    }
    Some(worker)
}

/// Hands the page's module to the workers `index.html` started before the app loaded
/// (see [`EARLY_WORKERS_GLOBAL`]), so they start loading at once; the pool adopts them
/// later. The first runs `plan`'s search ahead of the page meanwhile, the others wait
/// ([`WarmUp`]); [`search_run_ahead`] then names the plan. A worker the hand-off cannot
/// reach is marked failed.
pub fn hand_off_to_early_workers(plan: &Plan) {
    let Ok(list) = Reflect::get(&js_sys::global(), &JsValue::from_str(EARLY_WORKERS_GLOBAL)) else {
        return;
    };
    let Ok(list) = list.dyn_into::<js_sys::Array>() else {
        return;
    };
    let json = serde_json::to_string(plan).unwrap_or_default();
    for (i, w) in list.iter().enumerate() {
        let Ok(worker) = w.dyn_into::<Worker>() else {
            continue;
        };
        let warm = if i == 0 {
            WarmUp::Ahead(&json)
        } else {
            WarmUp::Skip
        };
        match super::worker::hand_off(&worker, warm) {
            Ok(()) if i == 0 => AHEAD.set(Some(plan.clone())),
            Ok(()) => {}
            Err(_) => {
                let _ = Reflect::set(&worker, &JsValue::from_str("goodputFailed"), &JsValue::TRUE);
            }
        }
    }
}

thread_local! {
    static AHEAD: RefCell<Option<Plan>> = const { RefCell::new(None) };
}

/// The plan whose search a worker was given to run ahead of the page, once: the first
/// caller (the run controller) gets it.
pub fn search_run_ahead() -> Option<Plan> {
    AHEAD.take()
}

/// Name of the page global where `index.html` leaves the workers it started early: an
/// array of `Worker`s, each with boolean `goodputReady` / `goodputFailed` properties and
/// a `goodputHeld` array (the messages it sent unasked) kept by the page's own
/// listeners until the pool takes the worker over.
pub const EARLY_WORKERS_GLOBAL: &str = "goodputEarlyWorkers";

/// Takes the workers the page started before the app loaded (see
/// [`EARLY_WORKERS_GLOBAL`]): the worker, whether it is ready or failed, and the
/// messages it sent unasked meanwhile, each. Empty when there are none.
fn take_early_workers() -> Vec<(Worker, bool, bool, Vec<String>)> {
    let global = js_sys::global();
    let key = JsValue::from_str(EARLY_WORKERS_GLOBAL);
    let Ok(list) = Reflect::get(&global, &key) else {
        return Vec::new();
    };
    // Taken once: a second pool (tests) spawns its own.
    let _ = Reflect::set(&global, &key, &JsValue::UNDEFINED);
    let Ok(list) = list.dyn_into::<js_sys::Array>() else {
        return Vec::new();
    };
    let flag = |w: &JsValue, name: &str| {
        Reflect::get(w, &JsValue::from_str(name))
            .ok()
            .and_then(|v| v.as_bool())
            .unwrap_or(false)
    };
    list.iter()
        .filter_map(|w| {
            let ready = flag(&w, "goodputReady");
            let failed = flag(&w, "goodputFailed");
            let held = Reflect::get(&w, &JsValue::from_str("goodputHeld"))
                .ok()
                .and_then(|v| v.dyn_into::<js_sys::Array>().ok())
                .map(|a| a.iter().filter_map(|m| m.as_string()).collect())
                .unwrap_or_default();
            w.dyn_into::<Worker>()
                .ok()
                .map(|w| (w, ready, failed, held))
        })
        .collect()
}

impl Pool {
    /// Starts `size` workers, adopting those the page started early. `on_reply` gets every
    /// reply body; `on_mode` every mode change; `on_lost` a request that two workers died
    /// running (it is not retried again). Requests run on the main thread until a worker is
    /// ready, and for good when none is ready after `ready_timeout`.
    pub fn start(
        size: usize,
        executor: Executor,
        on_reply: Rc<dyn Fn(String)>,
        on_mode: Rc<dyn Fn(PoolMode)>,
        on_lost: Rc<dyn Fn(Task)>,
        ready_timeout: Duration,
    ) -> Pool {
        let pool = Pool {
            inner: Rc::new(RefCell::new(Inner {
                slots: Vec::new(),
                queue: VecDeque::new(),
                mode: PoolMode::Starting,
                executor,
                on_reply,
                on_mode,
                on_lost,
                pumping: false,
                page_while_starting: true,
                wake: None,
            })),
        };
        let wake = {
            let p = pool.clone();
            wake_channel(move || p.slice())
        };
        pool.inner.borrow_mut().wake = wake;
        // Workers the page started before the app loaded come first; spawn the rest.
        let mut early = take_early_workers().into_iter();
        let mut unread = Vec::new();
        for _ in 0..size {
            let (worker, ready, failed, held) = match early.next() {
                Some(w) => w,
                None => match spawn_worker() {
                    Some(worker) => (worker, false, false, Vec::new()),
                    None => continue,
                },
            };
            if failed {
                worker.terminate();
                continue;
            }
            let index = pool.inner.borrow().slots.len();
            unread.extend(held.into_iter().map(|m| (index, m)));
            let p = pool.clone();
            let on_message = Closure::<dyn Fn(MessageEvent)>::new(move |ev: MessageEvent| {
                p.message(index, ev.data().as_string());
            });
            worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
            on_message.forget();
            let p = pool.clone();
            let on_error = Closure::<dyn Fn(web_sys::Event)>::new(move |ev: web_sys::Event| {
                ev.prevent_default();
                p.failed(index);
            });
            worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
            on_error.forget();
            pool.inner.borrow_mut().slots.push(Slot {
                worker,
                ready,
                failed: false,
                busy: VecDeque::new(),
            });
        }
        // Extra early workers (a smaller pool was asked for) are not needed.
        for (worker, ..) in early {
            worker.terminate();
        }
        let ready = pool.inner.borrow().slots.iter().filter(|s| s.ready).count();
        if ready > 0 {
            let n = pool.inner.borrow().slots.len();
            pool.set_mode(PoolMode::Workers(n));
        }
        for (index, message) in unread {
            pool.message(index, Some(message));
        }
        if pool.inner.borrow().slots.is_empty() {
            pool.set_mode(PoolMode::MainThread);
        } else {
            let p = pool.clone();
            set_timeout(
                move || {
                    if p.mode() == PoolMode::Starting {
                        p.set_mode(PoolMode::MainThread);
                        p.dispatch();
                    }
                },
                ready_timeout,
            );
        }
        pool
    }

    /// Keeps requests off the page while the workers load: for requests too long for a
    /// main-thread slice. They still run on the page when no worker can start at all.
    pub fn wait_for_workers(&self) {
        self.inner.borrow_mut().page_while_starting = false;
    }

    /// Whether queued requests run on the page now.
    fn runs_here(inner: &Inner) -> bool {
        match inner.mode {
            PoolMode::Starting => inner.page_while_starting,
            PoolMode::MainThread => true,
            PoolMode::Workers(_) => false,
        }
    }

    /// Where requests currently run.
    pub fn mode(&self) -> PoolMode {
        self.inner.borrow().mode
    }

    fn set_mode(&self, mode: PoolMode) {
        let cb = {
            let mut inner = self.inner.borrow_mut();
            inner.mode = mode;
            inner.on_mode.clone()
        };
        cb(mode);
    }

    /// Queues a request.
    pub fn submit(&self, task: Task) {
        self.inner.borrow_mut().queue.push_back(task);
        self.dispatch();
    }

    /// Drops queued requests of runs older than `run` (running ones finish; their replies
    /// carry the old run id and are ignored by the caller).
    pub fn cancel_before(&self, run: u32) {
        self.inner.borrow_mut().queue.retain(|t| t.run >= run);
    }

    fn message(&self, index: usize, data: Option<String>) {
        let reply = {
            let mut inner = self.inner.borrow_mut();
            let Some(slot) = inner.slots.get_mut(index) else {
                return;
            };
            match data.as_deref() {
                Some("ready") => {
                    slot.ready = true;
                    None
                }
                Some(body) => {
                    // Results the worker sent unasked answer no request.
                    if !super::protocol::is_unasked(body) {
                        slot.busy.pop_front();
                    }
                    Some((body.to_string(), inner.on_reply.clone()))
                }
                None => None,
            }
        };
        // A worker that becomes ready takes over from the page, even after the page gave
        // up waiting (a slow network can outlast `ready_timeout`).
        if self.mode().runs_on_page()
            && self
                .inner
                .borrow()
                .slots
                .iter()
                .any(|s| s.ready && !s.failed)
        {
            let n = self
                .inner
                .borrow()
                .slots
                .iter()
                .filter(|s| !s.failed)
                .count();
            self.set_mode(PoolMode::Workers(n));
        }
        if let Some((body, cb)) = reply {
            cb(body);
        }
        self.dispatch();
    }

    fn failed(&self, index: usize) {
        let (all_failed, lost) = {
            let mut inner = self.inner.borrow_mut();
            let mut lost = None;
            if let Some(slot) = inner.slots.get_mut(index) {
                slot.failed = true;
                slot.worker.terminate();
                let mut busy = std::mem::take(&mut slot.busy);
                // The ones posted but not started go back to the front of the queue as
                // they were, in order.
                let running = busy.pop_front();
                while let Some(task) = busy.pop_back() {
                    inner.queue.push_front(task);
                }
                if let Some(mut task) = running {
                    // Retry once elsewhere; a request that kills a second worker is reported.
                    if task.attempts == 0 {
                        task.attempts = 1;
                        inner.queue.push_front(task);
                    } else {
                        lost = Some((task, inner.on_lost.clone()));
                    }
                }
            }
            (inner.slots.iter().all(|s| s.failed), lost)
        };
        if let Some((task, cb)) = lost {
            cb(task);
        }
        if all_failed {
            self.set_mode(PoolMode::MainThread);
        } else if let PoolMode::Workers(_) = self.mode() {
            let n = self
                .inner
                .borrow()
                .slots
                .iter()
                .filter(|s| !s.failed)
                .count();
            self.set_mode(PoolMode::Workers(n));
        }
        self.dispatch();
    }

    fn dispatch(&self) {
        if self.mode().runs_on_page() {
            if Pool::runs_here(&self.inner.borrow()) {
                self.pump();
            }
            return;
        }
        let mut inner = self.inner.borrow_mut();
        let broken = loop {
            // The least-loaded worker first: every idle worker gets a request before any
            // gets its next one.
            let Some(index) = (0..inner.slots.len())
                .filter(|&i| {
                    let s = &inner.slots[i];
                    s.ready && !s.failed && s.busy.len() < IN_FLIGHT
                })
                .min_by_key(|&i| inner.slots[i].busy.len())
            else {
                return;
            };
            let Some(task) = inner.queue.pop_front() else {
                return;
            };
            let slot = &mut inner.slots[index];
            if slot
                .worker
                .post_message(&JsValue::from_str(&task.body))
                .is_err()
            {
                inner.queue.push_front(task);
                break index;
            }
            slot.busy.push_back(task);
        };
        // A worker that cannot be posted to is treated as dead: what it holds goes back
        // to the queue, and the rest is dispatched again.
        drop(inner);
        self.failed(broken);
    }

    /// Schedules a main-thread slice unless one is already scheduled or running.
    fn pump(&self) {
        let wake = {
            let mut inner = self.inner.borrow_mut();
            if inner.pumping {
                return;
            }
            inner.pumping = true;
            inner.wake.clone()
        };
        self.resume_later(wake);
    }

    fn resume_later(&self, wake: Option<Function>) {
        if let Some(f) = wake {
            if f.call1(&JsValue::NULL, &JsValue::from_f64(0.0)).is_ok() {
                return;
            }
        }
        let p = self.clone();
        set_timeout(move || p.slice(), Duration::ZERO);
    }

    /// Runs queued requests on this thread for about [`SLICE_MS`], then yields. Stops as
    /// soon as the queue is empty or workers have taken over.
    fn slice(&self) {
        let started = now_ms();
        loop {
            let next = {
                let mut inner = self.inner.borrow_mut();
                let task = if Pool::runs_here(&inner) {
                    inner.queue.pop_front()
                } else {
                    None
                };
                match task {
                    Some(t) => (t, inner.executor, inner.on_reply.clone()),
                    None => {
                        inner.pumping = false;
                        return;
                    }
                }
            };
            let (task, exec, cb) = next;
            // The reply may queue more requests: `pumping` is still set, so they wait
            // for this loop instead of scheduling a second one.
            cb(exec(&task.body));
            if now_ms() - started >= SLICE_MS {
                break;
            }
        }
        let wake = self.inner.borrow().wake.clone();
        self.resume_later(wake);
    }
}

/// The page's monotonic clock [ms since the page loaded]: `performance.now()`, or 0
/// where the page has none.
pub fn now_ms() -> f64 {
    window().performance().map_or(0.0, |p| p.now())
}

/// A function that posts an empty message on a `MessageChannel` whose other port calls
/// `on_wake`: a zero-delay way to yield to the browser and come back. `None` when the
/// browser has no `MessageChannel`.
fn wake_channel(on_wake: impl Fn() + 'static) -> Option<Function> {
    let global = js_sys::global();
    let ctor: Function = Reflect::get(&global, &JsValue::from_str("MessageChannel"))
        .ok()?
        .dyn_into()
        .ok()?;
    let channel = Reflect::construct(&ctor, &js_sys::Array::new()).ok()?;
    let port1 = Reflect::get(&channel, &JsValue::from_str("port1")).ok()?;
    let port2 = Reflect::get(&channel, &JsValue::from_str("port2")).ok()?;
    let post: Function = Reflect::get(&port2, &JsValue::from_str("postMessage"))
        .ok()?
        .dyn_into()
        .ok()?;
    let on_message = Closure::<dyn Fn(JsValue)>::new(move |_: JsValue| on_wake());
    Reflect::set(
        &port1,
        &JsValue::from_str("onmessage"),
        on_message.as_ref().unchecked_ref(),
    )
    .ok()?;
    on_message.forget();
    Some(post.bind0(&port2))
}

#[cfg(test)]
mod tests {
    use super::{deal, PoolMode, REQUESTS_PER_WORKER};
    use goodput_core::search::GoodputSearch;
    use goodput_core::Plan;

    /// The default plan's first batch (two rates × 20 replications) on two workers: four
    /// requests of ten jobs, five of each rate, and every job sent once.
    #[test]
    fn a_batch_is_dealt_so_that_every_request_gets_every_rate() {
        let jobs = GoodputSearch::new(&Plan::default()).unwrap().next_batch();
        assert_eq!(jobs.len(), 40);
        let parts = deal(&jobs, 2);
        assert_eq!(parts.len(), 2 * REQUESTS_PER_WORKER);
        let rates: Vec<f64> = jobs
            .iter()
            .map(|j| j.rate_rps)
            .fold(Vec::new(), |mut v, r| {
                if !v.contains(&r) {
                    v.push(r);
                }
                v
            });
        assert_eq!(rates.len(), 2);
        for part in &parts {
            assert_eq!(part.len(), 10, "jobs in one request");
            for r in &rates {
                let n = part.iter().filter(|j| j.rate_rps == *r).count();
                assert_eq!(n, 5, "jobs at {r} req/s in one request");
            }
        }
        let mut ids: Vec<u32> = parts.iter().flatten().map(|j| j.id).collect();
        ids.sort_unstable();
        assert_eq!(ids, jobs.iter().map(|j| j.id).collect::<Vec<_>>());
    }

    #[test]
    fn small_batches_and_the_page_get_one_job_per_request() {
        let jobs: Vec<u32> = (0..5).collect();
        assert_eq!(
            deal(&jobs, 0),
            vec![vec![0], vec![1], vec![2], vec![3], vec![4]]
        );
        assert_eq!(
            deal(&jobs, 4),
            vec![vec![0], vec![1], vec![2], vec![3], vec![4]]
        );
        assert_eq!(deal(&jobs, 1), vec![vec![0, 2, 4], vec![1, 3]]);
        assert!(deal(&Vec::<u32>::new(), 2).is_empty());
    }

    #[test]
    fn the_page_runs_requests_until_a_worker_is_ready_and_when_none_can_start() {
        assert!(PoolMode::Starting.runs_on_page());
        assert!(PoolMode::MainThread.runs_on_page());
        assert!(!PoolMode::Workers(1).runs_on_page());
        assert!(!PoolMode::Workers(8).runs_on_page());
    }
}
