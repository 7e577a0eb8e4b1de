//! Running searches off the UI thread.
//!
//! ```text
//!   good plan ──(300 ms debounce)──▶ RunController::start
//!      (unless only its name, price or fleet sizing changed: Plan::search_key)
//!      GoodputSearch ─next_batch─▶ Request JSON ─▶ Pool (Web Workers | main-thread slices)
//!            ▲                                          │ protocol::handle → run_job_with
//!            └──────────── feed(JobResult by id) ◀─ Reply JSON
//!   search done ─▶ KnobSweep, same loop ─▶ done (elapsed time shown)
//! ```
//!
//! While the page loads, the first early worker runs the search of the plan it opens
//! with and sends each batch's results unasked ([`protocol::warm_up`]); the page's first
//! search takes them from a [`PrefetchStore`] instead of sending those jobs, and waits
//! for that worker (up to [`AHEAD_WAIT`]) rather than run them a second time.
//!
//! The state machines live in the core and match results by job id, so the page gets the
//! same numbers as the CLI however the jobs are spread.

pub mod calibration;
pub mod day;
pub mod disagg;
pub mod lazy_pool;
pub mod planned;
pub mod pool;
pub mod protocol;
pub mod shootout;
pub mod side;
pub mod worker;

use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use goodput_core::report::classes::{dedicated_plan, ClassGoodputs};
use goodput_core::report::goodput_for;
use goodput_core::router_gain::baseline_plan;
use goodput_core::search::{
    GoodputResult, GoodputSearch, Job, KnobSweep, PartialSweep, SweepResult,
};
use goodput_core::Plan;
use leptos::prelude::*;

use crate::state::listeners::{ListenerId, Listeners};
use crate::state::PlanState;

use pool::{deal, now_ms, pool_size, Pool, PoolMode, Task, LOST_TWICE, UNREADABLE_REPLY};
use protocol::{PrefetchStore, Reply, Request, WorkerReply, WorkerRequest};

/// What the controller is doing.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Phase {
    /// Nothing has run yet.
    #[default]
    Idle,
    /// An input changed; a new run starts when typing pauses.
    Waiting,
    /// Finding the goodput of the plan's engine settings.
    Search,
    /// Finding the goodput of the same replicas behind round robin, to say what the
    /// plan's router saves ([`goodput_core::router_gain`]).
    Baseline,
    /// Finding each traffic class's goodput on a pool of its own, to say what one shared
    /// pool saves against them ([`goodput_core::report::classes::dedicated`]).
    Dedicated,
    /// Sweeping `max_num_seqs` × `max_num_batched_tokens`.
    Sweep,
    /// Finished.
    Done,
    /// Stopped by the user.
    Cancelled,
    /// The run failed; the message says why.
    Failed(String),
}

impl Phase {
    /// Whether simulations are running.
    pub fn is_running(&self) -> bool {
        matches!(
            self,
            Phase::Search | Phase::Baseline | Phase::Dedicated | Phase::Sweep
        )
    }

    /// Whether the run has ended: answered, stopped or failed.
    pub fn has_ended(&self) -> bool {
        matches!(self, Phase::Done | Phase::Cancelled | Phase::Failed(_))
    }
}

/// Progress of the current run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunStatus {
    /// Phase.
    pub phase: Phase,
    /// Simulations finished in this phase.
    pub done: u32,
    /// Simulations this phase is expected to take.
    pub total: u32,
    /// Time the goodput search of the last finished run took [ms].
    pub search_ms: Option<f64>,
    /// Time the whole last finished run took [ms].
    pub total_ms: Option<f64>,
    /// Whether the last finished run kept the knob sweep it had (same plan, knobs aside)
    /// rather than sweep again.
    pub sweep_kept: bool,
}

/// One rate of a search in progress: the attainments of replications returned so far.
#[derive(Debug, Clone, PartialEq)]
pub struct PartialPoint {
    /// Rate [requests/s].
    pub rate_rps: f64,
    /// Attainment of each replication returned [0..1].
    pub attainments: Vec<f64>,
}

enum Machine {
    None,
    Search(Box<GoodputSearch>),
    /// A search of another plan than the run's, and that plan: what the report compares
    /// the run's plan with.
    Side(Box<GoodputSearch>, Box<Plan>, Side),
    Sweep(Box<KnobSweep>),
}

/// What a [`Machine::Side`] search is for.
enum Side {
    /// The round-robin baseline of a routed plan.
    Baseline,
    /// Traffic class `k` alone on a pool of its own, after the classes before it (their
    /// goodputs, or why their search could not run).
    Class(usize, ClassGoodputs),
}

struct Driver {
    pool: Option<Pool>,
    run: u32,
    plan: Plan,
    machine: Machine,
    rates: BTreeMap<u32, f64>,
    started_ms: f64,
    search_ms: Option<f64>,
    debounce: Option<TimeoutHandle>,
    /// [`Plan::sweep_key`] of the plan the last sweep was started for.
    sweep_key: Option<Plan>,
    /// Search attainments `(rate, attainment)` received but not yet in `partial`.
    unshown: Vec<(f64, f64)>,
    /// Whether a frame is asked for to show what the replies brought ([`RunController::show`]).
    frame_asked: bool,
    /// Earliest time the next frame may show progress [ms, `now_ms`].
    next_show_ms: f64,
    /// Results the workers simulated while the page loaded, for its first search.
    prefetched: PrefetchStore,
    /// Jobs of the search's batch held back while a worker runs that search ahead.
    held: Vec<Job>,
    /// Whether the wait for that worker has its time limit set.
    wait_limited: bool,
}

/// Runs searches for the good plan in a worker pool and publishes the results as signals.
#[derive(Clone, Copy)]
pub struct RunController {
    /// Phase, progress and timings.
    pub status: RwSignal<RunStatus>,
    /// The goodput search of the last finished run, with the plan it was run for.
    pub search: RwSignal<Option<(Plan, GoodputResult)>>,
    /// The goodput search of the round-robin baseline of the last finished run, with the
    /// plan whose router it is compared with (only for a plan that has one:
    /// [`baseline_plan`]).
    pub baseline: RwSignal<Option<(Plan, GoodputResult)>>,
    /// Each traffic class's goodput on a pool of its own, for the last finished run's
    /// plan (only for a plan of classes), with that plan.
    pub dedicated: RwSignal<Option<(Plan, ClassGoodputs)>>,
    /// The knob sweep of the last finished run.
    pub sweep: RwSignal<Option<SweepResult>>,
    /// Why the knob sweep could not run, if it could not.
    pub sweep_error: RwSignal<Option<String>>,
    /// Rates of the running search, as results arrive.
    pub partial: RwSignal<Vec<PartialPoint>>,
    /// Cells of the running knob sweep finished so far (cleared when the sweep ends).
    pub sweep_partial: RwSignal<Option<PartialSweep>>,
    /// Where simulations run.
    pub mode: RwSignal<PoolMode>,
    /// How many runs (goodput searches) have started: an edit that only relabels the
    /// plan or changes its cost starts none.
    pub started: RwSignal<u32>,
    driver: StoredValue<Driver, LocalStorage>,
    /// What runs when a search or a sweep finishes ([`RunController::on_result`]).
    result_listeners: Listeners,
    /// What runs when a run ends, however ([`RunController::on_end`]).
    end_listeners: Listeners,
}

/// Longest the page's first search waits for the worker that runs it ahead before it
/// runs what that worker has not sent itself.
pub const AHEAD_WAIT: Duration = Duration::from_millis(1000);

/// Debounce between the last edit and the start of a new run.
pub const DEBOUNCE: Duration = Duration::from_millis(300);

/// Shortest time between two frames that show a run's progress [ms]. Ten a second reads
/// as live; every frame of a run repaints and commits the whole page on the page's
/// thread, which shares the cores with the workers, so a search shorter than this draws
/// nothing between its start and its answer.
pub const PROGRESS_INTERVAL_MS: f64 = 100.0;

impl RunController {
    /// The goodput of exactly `plan` [requests/s]: its measured knee, else the last
    /// finished search if it was run for this plan ([`goodput_for`]). Tracks the search.
    pub fn goodput_for(&self, plan: &Plan) -> Option<f64> {
        self.search
            .with(|s| goodput_for(plan, s.as_ref().map(|(p, r)| (p, r))))
    }

    /// Starts the worker pool; nothing runs until [`RunController::follow`].
    pub fn with_pool() -> RunController {
        let c = RunController {
            status: RwSignal::new(RunStatus::default()),
            search: RwSignal::new(None),
            baseline: RwSignal::new(None),
            dedicated: RwSignal::new(None),
            sweep: RwSignal::new(None),
            sweep_error: RwSignal::new(None),
            partial: RwSignal::new(Vec::new()),
            sweep_partial: RwSignal::new(None),
            mode: RwSignal::new(PoolMode::Starting),
            started: RwSignal::new(0),
            result_listeners: Listeners::new(),
            end_listeners: Listeners::new(),
            driver: StoredValue::new_local(Driver {
                pool: None,
                run: 0,
                plan: Plan::default(),
                machine: Machine::None,
                rates: BTreeMap::new(),
                started_ms: 0.0,
                search_ms: None,
                debounce: None,
                sweep_key: None,
                unshown: Vec::new(),
                frame_asked: false,
                next_show_ms: 0.0,
                prefetched: PrefetchStore::expecting(pool::search_run_ahead().as_ref()),
                held: Vec::new(),
                wait_limited: false,
            }),
        };
        let pool = Pool::start(
            pool_size(),
            protocol::handle,
            Rc::new(move |body: String| c.on_reply(&body)),
            Rc::new(move |mode| c.mode.set(mode)),
            Rc::new(move |task: Task| {
                if task.run == c.driver.with_value(|d| d.run) {
                    c.fail(LOST_TWICE.into());
                }
            }),
            Duration::from_secs(8),
        );
        c.driver.update_value(|d| d.pool = Some(pool));
        c
    }

    /// Runs `state`'s good plan, then runs it again after each edit that changes it. The
    /// first run starts in a task of its own, once the page that asked for it is built;
    /// a later one after a pause in typing ([`DEBOUNCE`]), or not at all when the edit
    /// only relabels the plan ([`RunController::relabel`]). Registered after the other
    /// controllers' edit listeners, so that they see the run the edit finds.
    pub fn follow(&self, state: PlanState) {
        let c = *self;
        // The good plan last run or scheduled; `None` until the first run starts, which
        // takes the good plan as it then is.
        let seen = StoredValue::new_local(None::<Plan>);
        state.on_edit(move || {
            let plan = state.good.get_untracked();
            if seen.with_value(|s| s.as_ref().is_none_or(|p| *p == plan)) {
                return;
            }
            seen.set_value(Some(plan.clone()));
            if !c.relabel(&plan) {
                c.schedule(plan);
            }
        });
        leptos::task::spawn_local(async move {
            let Some(plan) = state.good.try_get_untracked() else {
                return;
            };
            seen.set_value(Some(plan.clone()));
            c.start(plan);
        });
    }

    /// When `plan` differs from the one being run (or last run) only in what the search
    /// and the knob sweep do not depend on ([`Plan::search_key`]: its name, note, price,
    /// fleet sizing, GPU comparison, day schedule or disaggregated pools), takes it over
    /// without running anything again, so the cards recompute the cost at once; returns
    /// whether it did.
    fn relabel(&self, plan: &Plan) -> bool {
        let labels = Plan::search_key;
        let active = self.status.with_untracked(|s| {
            matches!(
                s.phase,
                Phase::Search | Phase::Baseline | Phase::Dedicated | Phase::Sweep | Phase::Done
            )
        });
        let same = self.driver.with_value(|d| labels(&d.plan) == labels(plan));
        if !(active && same) {
            return false;
        }
        // Equal keys: the plan run differs from `plan` only in what it takes over.
        let set = |p: &mut Plan| *p = plan.clone();
        self.driver.update_value(|d| {
            set(&mut d.plan);
            // The swept plan's key, relabelled the same way (its knobs stay fixed).
            let swept = plan.sweep_key();
            if let Some(k) = d.sweep_key.as_mut() {
                if k.search_key() == swept.search_key() {
                    *k = swept;
                }
            }
        });
        if self
            .search
            .with_untracked(|s| s.as_ref().is_some_and(|(p, _)| labels(p) == labels(plan)))
        {
            self.search.update(|s| {
                if let Some((p, _)) = s {
                    set(p)
                }
            });
        }
        true
    }

    /// Runs `f` each time a goodput search or a knob sweep finishes, once its result is
    /// in [`RunController::search`] or [`RunController::sweep`].
    pub fn on_result(&self, f: impl Fn() + 'static) {
        self.result_listeners.add(f);
    }

    /// Runs `f` each time a run ends: done, cancelled or failed (not when it only waits
    /// for a pause in typing). Returns the id that [`RunController::forget`] takes.
    pub fn on_end(&self, f: impl Fn() + 'static) -> ListenerId {
        self.end_listeners.add(f)
    }

    /// Stops running the callback `id` of [`RunController::on_end`].
    pub fn forget(&self, id: ListenerId) {
        self.end_listeners.remove(id);
    }

    /// The controller provided by `App`.
    pub fn expect_context() -> RunController {
        expect_context::<RunController>()
    }

    /// Stops the running search now and starts a new one for `plan` after the debounce.
    pub fn schedule(&self, plan: Plan) {
        self.stop(Phase::Waiting);
        let c = *self;
        let handle = set_timeout_with_handle(move || c.start(plan), DEBOUNCE).ok();
        self.driver.update_value(|d| d.debounce = handle);
    }

    /// Whether the finished knob sweep on screen belongs to `plan` (knobs aside), so its
    /// cells can be applied to it.
    pub fn sweep_fits(&self, plan: &Plan) -> bool {
        self.sweep.with(Option::is_some)
            && self.search.with(|s| {
                s.as_ref()
                    .is_some_and(|(p, _)| p.sweep_key() == plan.sweep_key())
            })
    }

    /// Cancels the running search (the results on screen stay).
    pub fn cancel(&self) {
        self.stop(Phase::Cancelled);
    }

    fn stop(&self, phase: Phase) {
        self.driver.update_value(|d| {
            if let Some(h) = d.debounce.take() {
                h.clear();
            }
            d.run = d.run.wrapping_add(1);
            d.machine = Machine::None;
            d.rates.clear();
            d.unshown.clear();
            d.held.clear();
            if let Some(pool) = &d.pool {
                pool.cancel_before(d.run);
            }
        });
        let ended = phase.has_ended();
        self.status.update(|s| {
            s.phase = phase;
            s.done = 0;
            s.total = 0;
        });
        if ended {
            self.end_listeners.tell();
        }
    }

    /// Starts a run for `plan` now.
    pub fn start(&self, plan: Plan) {
        self.stop(Phase::Search);
        self.clear_partial();
        self.started.update(|n| *n = n.wrapping_add(1));
        match GoodputSearch::new(&plan) {
            Ok(search) => {
                // The expected work from the start: the first frame that shows progress
                // comes up to [`PROGRESS_INTERVAL_MS`] later.
                let expected = search.progress().total;
                self.status.update(|s| s.total = expected);
                self.driver.update_value(|d| {
                    d.plan = plan;
                    d.machine = Machine::Search(Box::new(search));
                    d.started_ms = now_ms();
                    d.next_show_ms = d.started_ms + PROGRESS_INTERVAL_MS;
                    d.search_ms = None;
                });
                self.pump();
            }
            Err(e) => self.fail(e.to_string()),
        }
    }

    /// Empties the running search's points. Only when there are some: a search shorter
    /// than [`PROGRESS_INTERVAL_MS`] shows none, and setting the signal again would redraw
    /// the attainment chart for nothing.
    fn clear_partial(&self) {
        if self.partial.with_untracked(|p| !p.is_empty()) {
            self.partial.set(Vec::new());
        }
    }

    fn fail(&self, message: String) {
        self.stop(Phase::Failed(message));
    }

    /// Issues the machine's next jobs, or moves on when it is done.
    fn pump(&self) {
        enum Next {
            Wait,
            SearchDone(Box<(Plan, Option<GoodputResult>)>),
            SideDone(Option<GoodputResult>, Side),
            SweepDone(Option<SweepResult>),
        }
        let mut fed = false;
        let mut limit_wait = false;
        let next = self.driver.try_update_value(|d| {
            let jobs: Vec<Job> = loop {
                match &mut d.machine {
                    Machine::None => return Next::Wait,
                    Machine::Search(s) => {
                        let mut jobs = std::mem::take(&mut d.held);
                        if jobs.is_empty() {
                            jobs = s.next_batch();
                            if jobs.is_empty() && s.is_done() {
                                return Next::SearchDone(Box::new((d.plan.clone(), s.result())));
                            }
                        }
                        // What a worker simulated ahead of the page is fed at once, and a
                        // batch found whole goes on to the next. The rest waits while that
                        // worker is still on it (its next message brings it), unless it is
                        // late; then it is sent as usual.
                        let (found, rest) = d.prefetched.take(&d.plan, jobs);
                        if !found.is_empty() {
                            d.unshown
                                .extend(found.iter().map(|(j, r)| (j.rate_rps, r.attainment)));
                            s.feed(&found.into_iter().map(|(_, r)| r).collect::<Vec<_>>());
                            fed = true;
                            if rest.is_empty() {
                                continue;
                            }
                        }
                        if !rest.is_empty() && d.prefetched.waits_for(&d.plan) {
                            d.held = rest;
                            limit_wait = !std::mem::replace(&mut d.wait_limited, true);
                            return Next::Wait;
                        }
                        break rest;
                    }
                    Machine::Side(s, _, side) => {
                        let jobs = s.next_batch();
                        if jobs.is_empty() && s.is_done() {
                            let side = std::mem::replace(side, Side::Baseline);
                            return Next::SideDone(s.result(), side);
                        }
                        break jobs;
                    }
                    Machine::Sweep(s) => {
                        let jobs = s.next_batch();
                        if jobs.is_empty() && s.is_done() {
                            return Next::SweepDone(s.result());
                        }
                        break jobs;
                    }
                }
            };
            // A side search's jobs simulate its own plan; the others the run's.
            let job_plan = match &d.machine {
                Machine::Side(_, other, _) => (**other).clone(),
                _ => d.plan.clone(),
            };
            if let Machine::Search(_) = d.machine {
                d.rates.extend(jobs.iter().map(|j| (j.id, j.rate_rps)));
            }
            let workers = match d.pool.as_ref().map(Pool::mode) {
                Some(PoolMode::Workers(n)) => n.max(1),
                Some(PoolMode::Starting) => pool_size(),
                _ => 0,
            };
            if let Some(pool) = &d.pool {
                for part in deal(&jobs, workers) {
                    let req = Request {
                        run: d.run,
                        plan: job_plan.clone(),
                        jobs: part,
                        tag: 0,
                    };
                    if let Ok(body) = serde_json::to_string(&WorkerRequest::Sim(req)) {
                        pool.submit(Task {
                            run: d.run,
                            body,
                            attempts: 0,
                        });
                    }
                }
            }
            Next::Wait
        });
        if fed {
            self.ask_frame();
        }
        if limit_wait {
            let c = *self;
            set_timeout(
                move || {
                    if c.driver
                        .try_update_value(|d| d.prefetched.stop_waiting())
                        .is_some()
                    {
                        c.pump();
                    }
                },
                AHEAD_WAIT,
            );
        }
        match next {
            Some(Next::SearchDone(done)) => self.search_done(done.0, done.1),
            Some(Next::SideDone(result, Side::Baseline)) => self.baseline_done(result),
            Some(Next::SideDone(result, Side::Class(k, goodputs))) => {
                self.class_done(k, goodputs, result)
            }
            Some(Next::SweepDone(result)) => self.sweep_done(result),
            _ => {}
        }
    }

    fn search_done(&self, plan: Plan, result: Option<GoodputResult>) {
        let elapsed = now_ms() - self.driver.with_value(|d| d.started_ms);
        let Some(result) = result else {
            return self.fail("the search ended without a result".into());
        };
        self.search.set(Some((plan.clone(), result)));
        self.clear_partial();
        self.driver.update_value(|d| {
            d.unshown.clear();
            // Prefetched results serve the page's first search only.
            d.prefetched.close();
        });
        // A plan routed by another router than round robin is searched again behind
        // round robin first, unless that baseline is known for it already.
        let known = self.baseline.with_untracked(|b| {
            b.as_ref()
                .is_some_and(|(p, _)| p.search_key() == plan.search_key())
        });
        if let (Some(rr), false) = (baseline_plan(&plan), known) {
            self.in_next_task(move |c, run| c.start_baseline(run, rr, elapsed));
        } else {
            if !known {
                self.baseline.set(None);
            }
            self.classes_or_sweep(plan, elapsed);
        }
        // Told once the sweep on screen is the one that goes with this search (kept, or
        // dropped for the one that runs next).
        self.result_listeners.tell();
    }

    /// Starts the search of the round-robin baseline `rr` of the run's plan, whose own
    /// search took `elapsed` ms, if run `run` is still the current one.
    fn start_baseline(&self, run: u32, rr: Plan, elapsed: f64) {
        if self.driver.try_with_value(|d| d.run) != Some(run) {
            return;
        }
        self.driver.update_value(|d| d.search_ms = Some(elapsed));
        match GoodputSearch::new(&rr) {
            Ok(search) => self.run_side(search, rr, Side::Baseline, Phase::Baseline),
            Err(e) => self.fail(e.to_string()),
        }
    }

    /// Runs `search` of `plan`, another plan than the run's, as phase `phase`.
    fn run_side(&self, search: GoodputSearch, plan: Plan, side: Side, phase: Phase) {
        let expected = search.progress().total;
        self.driver.update_value(|d| {
            d.machine = Machine::Side(Box::new(search), Box::new(plan), side);
            d.rates.clear();
            d.next_show_ms = now_ms() + PROGRESS_INTERVAL_MS;
        });
        self.status.update(|s| {
            s.phase = phase;
            s.done = 0;
            s.total = expected;
        });
        self.pump();
    }

    /// The baseline's search ended: records it, then goes on to the knob sweep.
    fn baseline_done(&self, result: Option<GoodputResult>) {
        let Some(result) = result else {
            return self.fail("the round-robin baseline's search ended without a result".into());
        };
        let (plan, elapsed) = self
            .driver
            .with_value(|d| (d.plan.clone(), d.search_ms.unwrap_or(0.0)));
        self.baseline.set(Some((plan.clone(), result)));
        self.classes_or_sweep(plan, elapsed);
    }

    /// After the search (and the baseline) of `plan`: a plan of traffic classes searches
    /// each class alone first, unless that is known for it already; then the sweep.
    fn classes_or_sweep(&self, plan: Plan, elapsed: f64) {
        let known = self.dedicated.with_untracked(|d| {
            d.as_ref()
                .is_some_and(|(p, _)| p.search_key() == plan.search_key())
        });
        if !plan.classes.is_empty() && !known {
            self.dedicated.set(None);
            // The classes' searches end in the sweep, which is told how long the run's
            // own search took.
            self.driver.update_value(|d| d.search_ms = Some(elapsed));
            return self.in_next_task(move |c, run| c.start_class(run, 0, Vec::new()));
        }
        if !known {
            self.dedicated.set(None);
        }
        self.sweep_or_keep(plan, elapsed);
    }

    /// Starts the search of class `k` of the run's plan alone on a pool of its own
    /// (`goodputs`: the classes' before it), if run `run` is still the current one; a
    /// class whose search cannot start is recorded with the reason, and the next starts.
    fn start_class(&self, run: u32, k: usize, mut goodputs: ClassGoodputs) {
        if self.driver.try_with_value(|d| d.run) != Some(run) {
            return;
        }
        let plan = self.driver.with_value(|d| d.plan.clone());
        if k >= plan.classes.len() {
            let elapsed = self.driver.with_value(|d| d.search_ms.unwrap_or(0.0));
            self.dedicated.set(Some((plan.clone(), goodputs)));
            return self.sweep_or_keep(plan, elapsed);
        }
        let alone = dedicated_plan(&plan, k);
        match GoodputSearch::new(&alone) {
            Ok(search) => self.run_side(search, alone, Side::Class(k, goodputs), Phase::Dedicated),
            Err(e) => {
                goodputs.push(Err(e.to_string()));
                self.start_class(run, k + 1, goodputs);
            }
        }
    }

    /// Class `k`'s search alone ended: records its goodput, then the next class.
    fn class_done(&self, k: usize, mut goodputs: ClassGoodputs, result: Option<GoodputResult>) {
        goodputs.push(
            result
                .map(|r| r.goodput_rps)
                .ok_or_else(|| "the search ended without a result".to_string()),
        );
        let run = self.driver.with_value(|d| d.run);
        self.start_class(run, k + 1, goodputs);
    }

    /// After the search (and the baseline) of `plan`, which took `elapsed` ms: keeps the
    /// knob sweep on screen when it is this plan's, or starts it.
    fn sweep_or_keep(&self, plan: Plan, elapsed: f64) {
        // A plan that differs from the last swept one only in its knobs (settings just
        // applied from the sweep) has the same sweep: keep it rather than run it again.
        let key = plan.sweep_key();
        let same_sweep = self
            .driver
            .with_value(|d| d.sweep_key.as_ref() == Some(&key));
        if same_sweep && self.sweep.with_untracked(Option::is_some) {
            self.sweep_partial.set(None);
            return self.finish(Some(elapsed), true);
        }
        // The old sweep belongs to another plan: drop it rather than mix the two.
        self.sweep.set(None);
        // Show the answer first: the cards and charts render once this task ends, and the
        // sweep (36 searches to set up and their first jobs to post) starts in a task of
        // its own after them, unless a new run has started meanwhile. Until then there is
        // no machine, so nothing (a frame's `pump`) finishes the search a second time.
        self.in_next_task(move |c, run| c.start_sweep(run, plan, key, elapsed));
    }

    /// Leaves the current run without a machine and calls `next` with the controller and
    /// the run's id in a task of its own, after this one (and the render it causes);
    /// nothing when the controller is gone.
    fn in_next_task(&self, next: impl FnOnce(RunController, u32) + 'static) {
        let Some(run) = self.driver.try_update_value(|d| {
            d.machine = Machine::None;
            d.run
        }) else {
            return;
        };
        let c = *self;
        set_timeout(move || next(c, run), Duration::ZERO);
    }

    /// Starts the knob sweep of `plan` (whose [`Plan::sweep_key`] is `key`) after its
    /// search, which took `elapsed` ms, if run `run` is still the current one (and the
    /// controller still exists: the page may have been torn down meanwhile).
    fn start_sweep(&self, run: u32, plan: Plan, key: Plan, elapsed: f64) {
        if self.driver.try_with_value(|d| d.run) != Some(run) {
            return;
        }
        match KnobSweep::new(&plan) {
            Ok(sweep) => {
                let expected = sweep.progress().total;
                self.sweep_error.set(None);
                self.sweep_partial.set(Some(sweep.partial()));
                self.driver.update_value(|d| {
                    d.sweep_key = Some(key);
                    d.search_ms = Some(elapsed);
                    d.machine = Machine::Sweep(Box::new(sweep));
                    d.rates.clear();
                    d.next_show_ms = now_ms() + PROGRESS_INTERVAL_MS;
                });
                self.status.update(|s| {
                    s.phase = Phase::Sweep;
                    s.done = 0;
                    s.total = expected;
                    s.search_ms = Some(elapsed);
                });
                self.pump();
            }
            Err(e) => {
                self.driver.update_value(|d| d.sweep_key = None);
                self.sweep_error.set(Some(e.to_string()));
                self.sweep.set(None);
                self.sweep_partial.set(None);
                self.finish(Some(elapsed), false);
            }
        }
    }

    fn sweep_done(&self, result: Option<SweepResult>) {
        self.sweep.set(result);
        self.sweep_partial.set(None);
        let search_ms = self.driver.with_value(|d| d.search_ms);
        self.finish(search_ms, false);
        self.result_listeners.tell();
    }

    fn finish(&self, search_ms: Option<f64>, sweep_kept: bool) {
        let total = now_ms() - self.driver.with_value(|d| d.started_ms);
        self.driver.update_value(|d| d.machine = Machine::None);
        self.status.update(|s| {
            s.phase = Phase::Done;
            // The total was an estimate; what was done is all there was.
            s.total = s.done;
            s.search_ms = search_ms;
            s.total_ms = Some(total);
            s.sweep_kept = sweep_kept;
        });
        self.end_listeners.tell();
    }

    fn on_reply(&self, body: &str) {
        let reply: Reply = match serde_json::from_str::<WorkerReply>(body) {
            Ok(WorkerReply::Sim(r)) => r,
            Ok(WorkerReply::Prefetched(sent)) => {
                self.driver.update_value(|d| d.prefetched.add(*sent));
                return self.pump();
            }
            // Fit replies belong to the calibration's own pool, never to this one.
            Ok(_) => return,
            Err(_) => return self.fail(UNREADABLE_REPLY.into()),
        };
        if reply.run != self.driver.with_value(|d| d.run) {
            return;
        }
        if let Some(e) = reply.error {
            return self.fail(e);
        }
        self.driver.update_value(|d| match &mut d.machine {
            Machine::None => {}
            Machine::Search(s) => {
                for r in &reply.results {
                    if let Some(rate) = d.rates.remove(&r.id) {
                        d.unshown.push((rate, r.attainment));
                    }
                }
                s.feed(&reply.results);
            }
            Machine::Side(s, _, _) => s.feed(&reply.results),
            Machine::Sweep(s) => s.feed(&reply.results),
        });
        self.ask_frame();
        self.pump();
    }

    /// Asks for a frame to show what the replies brought, unless one is asked for: at
    /// once, or when [`PROGRESS_INTERVAL_MS`] has passed since the last.
    fn ask_frame(&self) {
        let asked = self.driver.try_update_value(|d| {
            !matches!(d.machine, Machine::None) && !std::mem::replace(&mut d.frame_asked, true)
        });
        if asked == Some(true) {
            let c = *self;
            let wait = self.driver.with_value(|d| d.next_show_ms) - now_ms();
            if wait > 0.0 {
                set_timeout(
                    move || request_animation_frame(move || c.show()),
                    Duration::from_secs_f64(wait / 1000.0),
                );
            } else {
                request_animation_frame(move || c.show());
            }
        }
    }

    /// Shows what the replies since the last frame brought: the search's new points, the
    /// sweep's finished cells and the progress. Replies arrive faster than frames; drawing
    /// at most once per [`PROGRESS_INTERVAL_MS`] keeps the page's thread (and the cores it
    /// shares with the workers) free to hand out the next jobs.
    fn show(&self) {
        let Some((progress, cells, fresh)) = self
            .driver
            .try_update_value(|d| {
                d.frame_asked = false;
                d.next_show_ms = now_ms() + PROGRESS_INTERVAL_MS;
                let fresh = std::mem::take(&mut d.unshown);
                match &d.machine {
                    Machine::None => None,
                    Machine::Search(s) => Some((s.progress(), None, fresh)),
                    Machine::Side(s, _, _) => Some((s.progress(), None, Vec::new())),
                    Machine::Sweep(s) => Some((s.progress(), Some(s.partial()), fresh)),
                }
            })
            .flatten()
        else {
            return;
        };
        if let Some(cells) = cells {
            if self
                .sweep_partial
                .with_untracked(|p| p.as_ref() != Some(&cells))
            {
                self.sweep_partial.set(Some(cells));
            }
        }
        if !fresh.is_empty() {
            self.partial.update(|pts| {
                for (rate, a) in fresh {
                    match pts.iter_mut().find(|p| p.rate_rps == rate) {
                        Some(p) => p.attainments.push(a),
                        None => pts.push(PartialPoint {
                            rate_rps: rate,
                            attainments: vec![a],
                        }),
                    }
                }
            });
        }
        self.status.update(|s| {
            s.done = progress.done;
            s.total = progress.total;
        });
        self.pump();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use goodput_core::search::run_job;

    #[test]
    fn cost_edits_keep_the_simulation_and_its_numbers() {
        let a = Plan::default();
        let mut b = a.clone();
        b.name = "priced".into();
        goodput_core::plan::fields::field("hardware.price_offer")
            .set_name(&mut b, "aws-h100-sxm-on-demand");
        b.planning.hours_per_month = 100.0;
        b.planning.utilization = 0.5;
        b.planning.redundancy = 3;
        assert_eq!(a.search_key(), b.search_key());
        // The search asks for the same simulations, and they give the same numbers.
        let mut sa = GoodputSearch::new(&a).expect("default plan searches");
        let mut sb = GoodputSearch::new(&b).expect("priced plan searches");
        let (ja, jb) = (sa.next_batch(), sb.next_batch());
        assert_eq!(ja, jb);
        let first = ja.first().expect("a first job");
        assert_eq!(
            run_job(&a, first).expect("runs"),
            run_job(&b, first).expect("runs")
        );
        // What the simulation reads changes the key.
        for change in [
            |p: &mut Plan| p.hardware.tp_degree = 2,
            |p: &mut Plan| p.traffic.peak_rate_rps += 1.0,
            |p: &mut Plan| p.engine.max_num_seqs += 1,
            |p: &mut Plan| p.hardware.mem_utilization = 0.8,
            // Replicas behind a router are simulated together: another search.
            |p: &mut Plan| p.routing = Some(goodput_core::plan::RoutingSpec::default()),
        ] {
            let mut c = a.clone();
            change(&mut c);
            assert_ne!(a.search_key(), c.search_key());
        }
        // So is another router, or another count of replicas.
        let routed = |replicas, router| Plan {
            routing: Some(goodput_core::plan::RoutingSpec { replicas, router }),
            ..a.clone()
        };
        use goodput_core::plan::FleetRouter::{PrefixAware, RoundRobin};
        assert_ne!(
            routed(2, RoundRobin).search_key(),
            routed(2, PrefixAware).search_key()
        );
        assert_ne!(
            routed(2, RoundRobin).search_key(),
            routed(3, RoundRobin).search_key()
        );
    }
}
