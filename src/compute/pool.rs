//! A pool of Web Workers that run JSON requests through `protocol::handle`, with a
//! main-thread fallback that runs one small request per `setTimeout` tick.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::time::Duration;

use leptos::prelude::{set_timeout, window};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Blob, BlobPropertyBag, MessageEvent, Url, Worker};

/// Runs one request body and returns the reply body (the code a worker runs).
pub type Executor = fn(&str) -> String;

/// Where requests run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolMode {
    /// Workers are loading.
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
    busy: Option<Task>,
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

/// URL of a file next to the page (Trunk puts `worker.js` beside `index.html`).
fn beside_page(file: &str) -> Option<String> {
    let doc = window().document()?;
    let base = doc.base_uri().ok().flatten()?;
    Url::new_with_base(file, &base).ok().map(|u| u.href())
}

fn spawn_worker() -> Option<Worker> {
    let js = beside_page("worker.js")?;
    let wasm = beside_page("worker_bg.wasm")?;
    let script = format!("importScripts({js:?});wasm_bindgen({{module_or_path:{wasm:?}}});");
    let parts = js_sys::Array::of1(&JsValue::from_str(&script));
    let opts = BlobPropertyBag::new();
    opts.set_type("text/javascript");
    let blob = Blob::new_with_str_sequence_and_options(&parts, &opts).ok()?;
    let url = Url::create_object_url_with_blob(&blob).ok()?;
    Worker::new(&url).ok()
}

impl Pool {
    /// Starts `size` workers. `on_reply` gets every reply body; `on_mode` every mode change;
    /// `on_lost` a request that two workers died running (it is not retried again).
    /// Falls back to the main thread when no worker is ready after `ready_timeout`.
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
            })),
        };
        for index in 0..size {
            let Some(worker) = spawn_worker() else {
                continue;
            };
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
                ready: false,
                failed: false,
                busy: None,
            });
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
                    slot.busy = None;
                    Some((body.to_string(), inner.on_reply.clone()))
                }
                None => None,
            }
        };
        if self.mode() == PoolMode::Starting {
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
                if let Some(mut task) = slot.busy.take() {
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
        if self.mode() == PoolMode::MainThread {
            self.pump();
            return;
        }
        let mut inner = self.inner.borrow_mut();
        loop {
            let Some(index) = inner
                .slots
                .iter()
                .position(|s| s.ready && !s.failed && s.busy.is_none())
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
                slot.failed = true;
                inner.queue.push_front(task);
                continue;
            }
            slot.busy = Some(task);
        }
    }

    /// Main-thread fallback: one request per tick, so input events get through in between.
    fn pump(&self) {
        if self.inner.borrow().pumping {
            return;
        }
        self.inner.borrow_mut().pumping = true;
        let p = self.clone();
        set_timeout(
            move || {
                let next = {
                    let mut inner = p.inner.borrow_mut();
                    inner.pumping = false;
                    inner
                        .queue
                        .pop_front()
                        .map(|t| (t, inner.executor, inner.on_reply.clone()))
                };
                if let Some((task, exec, cb)) = next {
                    cb(exec(&task.body));
                    p.pump();
                }
            },
            Duration::ZERO,
        );
    }
}
