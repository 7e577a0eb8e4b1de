//! Traffic over a day in the browser: the core's [`ScheduleRun`] driven by a worker pool
//! of its own, whenever the good plan carries a schedule and its goodput is known.
//!
//! ```text
//!   good plan (with plan.schedule) + goodput (measured knee | the search of this plan)
//!     ─(300 ms debounce)─▶ ScheduleRun::new ─▶ arithmetic at once, RampJobs
//!     WorkerRequest::Ramp{run, plan, jobs} ─▶ pool (Web Workers) ─▶ WorkerReply::Ramp
//!        ▲                                                              │
//!        └──────────────────── feed(results) ◀──────────────────────────┘
//!   done ─▶ result: DayResult { plan, schedule, serving per minute }
//! ```
//!
//! The schedule is derived from the plan, never stored beside it: the plan carries only
//! the profile and the autoscaler ([`goodput_core::schedule::ScheduleSpec`]), so a
//! shared link works the day out again, to the same numbers as `goodput schedule`. An
//! edit that changes what the numbers depend on cancels a running schedule and starts a
//! new one once typing pauses; until it is done the last result is shown as stale.

use goodput_core::capacity::knee_from_sweep;
use goodput_core::schedule::{RampJob, RampJobResult, Schedule, ScheduleRun};
use goodput_core::search::GoodputResult;
use goodput_core::Plan;
use leptos::prelude::*;

use super::lazy_pool::LazyPool;
use super::pool::UNREADABLE_REPLY;
use super::protocol::{RampRequest, WorkerReply, WorkerRequest};
use super::side::{JobMachine, PoolOptions, Reply, SideJobs, SideOwner, SideStatus};
use super::{RunController, DEBOUNCE};
use crate::state::PlanState;

/// What the day's schedule is doing.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum DayPhase {
    /// The plan has no schedule.
    #[default]
    Idle,
    /// Waiting for the plan's goodput (its search), or for typing to pause.
    Waiting,
    /// Simulating the hours.
    Running,
    /// The result is the plan's.
    Done,
    /// Stopped by the user; an edit (or "plan again") starts it again.
    Cancelled,
    /// The schedule could not be worked out; the message says why.
    Failed(String),
}

/// Phase and progress.
pub type DayStatus = SideStatus<DayPhase>;

/// A finished schedule and what it was worked out for.
#[derive(Debug, Clone, PartialEq)]
pub struct DayResult {
    /// The plan (its schedule included) the result belongs to.
    pub plan: Plan,
    /// The core's schedule.
    pub schedule: Schedule,
    /// Replicas serving in each minute of the period.
    pub serving: Vec<u32>,
}

impl DayResult {
    /// Whether the result still belongs to `plan` (its name, note, GPU comparison and
    /// disaggregated pools aside, which no number of the schedule depends on).
    pub fn is_fresh(&self, plan: &Plan) -> bool {
        day_key(&self.plan) == day_key(plan)
    }
}

/// The plan without what the schedule does not depend on: its labels and the
/// disaggregated pools (the price and the fleet sizing it does depend on).
pub fn day_key(plan: &Plan) -> Plan {
    Plan {
        disagg: None,
        ..plan.without_labels()
    }
}

/// The goodput the schedule sizes `plan` with, as `goodput schedule` takes it: the knee of
/// the plan's measured sweep, else the search run for this very plan (`None` until it
/// has finished) [requests/s].
pub fn goodput_of(plan: &Plan, search: Option<&(Plan, GoodputResult)>) -> Option<f64> {
    if !plan.planning.measured_sweep.is_empty() {
        return knee_from_sweep(&plan.planning.measured_sweep, plan.slo.attainment_target).ok();
    }
    search
        .filter(|(p, _)| p.search_key() == plan.search_key())
        .map(|(_, r)| r.goodput_rps)
}

/// What the controller remembers between runs.
struct Driver {
    /// The plan and goodput being (or last) worked out.
    key: Option<(Plan, f64)>,
    debounce: Option<TimeoutHandle>,
}

/// A day's ramps as the controller drives them.
struct DayJobs {
    machine: ScheduleRun,
    /// The plan the schedule was built from.
    plan: Plan,
    /// The plan the workers simulate (without the schedule and comparison).
    sim_plan: Plan,
    /// The ramps, until they are sent.
    jobs: Vec<RampJob>,
}

impl JobMachine for DayJobs {
    type Results = Vec<RampJobResult>;
    type Output = DayResult;

    fn reply(reply: WorkerReply) -> Result<Option<Reply<Self::Results>>, String> {
        Ok(match reply {
            WorkerReply::Ramp(r) => Some(Reply {
                run: r.run,
                error: r.error,
                results: r.results,
            }),
            _ => None,
        })
    }

    fn send(&mut self, pool: &LazyPool) {
        let jobs = std::mem::take(&mut self.jobs);
        let plan = &self.sim_plan;
        pool.submit_split(&jobs, |run, jobs| {
            WorkerRequest::Ramp(RampRequest {
                run,
                plan: plan.clone(),
                jobs,
            })
        });
    }

    fn feed(&mut self, results: &Vec<RampJobResult>) {
        self.machine.feed(results);
    }

    fn progress(&self) -> (u32, u32) {
        let (done, total) = self.machine.progress();
        (done as u32, total as u32)
    }

    fn finish(&mut self) -> Option<Result<DayResult, String>> {
        let schedule = self.machine.result()?;
        Some(Ok(DayResult {
            plan: self.plan.clone(),
            schedule,
            serving: self.machine.serving_per_minute().to_vec(),
        }))
    }
}

/// Works out the good plan's day and publishes it.
#[derive(Clone, Copy)]
pub struct DayController {
    /// Phase and progress.
    pub status: RwSignal<DayStatus>,
    /// The last finished schedule (`None` when the plan has none).
    pub result: RwSignal<Option<DayResult>>,
    driver: StoredValue<Driver, LocalStorage>,
    jobs: SideJobs<DayJobs>,
    state: PlanState,
    runs: RunController,
}

impl DayController {
    /// A controller following `state`'s good plan and `runs`' search; starts no worker
    /// until a plan has a schedule.
    pub fn new(state: PlanState, runs: RunController) -> DayController {
        let c = DayController {
            status: RwSignal::new(DayStatus::default()),
            result: RwSignal::new(None),
            driver: StoredValue::new_local(Driver {
                key: None,
                debounce: None,
            }),
            jobs: SideJobs::new(),
            state,
            runs,
        };
        // The plan the page opens with, then each edit and each finished search.
        let consider_now = move || {
            let plan = state.good.get_untracked();
            let goodput = runs
                .search
                .with_untracked(|s| goodput_of(&plan, s.as_ref()));
            c.consider(plan, goodput);
        };
        consider_now();
        state.on_edit(consider_now);
        runs.on_result(consider_now);
        c
    }

    /// The controller provided by `App`.
    pub fn expect_context() -> DayController {
        expect_context::<DayController>()
    }

    /// Whether the schedule on screen was worked out for the plan as it stands: the good
    /// plan, with no edit since that has a problem. `false` while there is none.
    pub fn is_fresh(&self) -> bool {
        !self.state.is_stale()
            && self.result.with(|r| {
                r.as_ref()
                    .is_some_and(|r| self.state.good.with(|p| r.is_fresh(p)))
            })
    }

    /// Stops the running schedule; the last result stays (as stale).
    pub fn cancel(&self) {
        self.stop(DayPhase::Cancelled);
    }

    /// Works the good plan's day out again (after a cancel or a failure).
    pub fn replan(&self) {
        self.driver.update_value(|d| d.key = None);
        let plan = self.state.good.get_untracked();
        let goodput = self
            .runs
            .search
            .with_untracked(|s| goodput_of(&plan, s.as_ref()));
        self.consider(plan, goodput);
    }

    fn consider(&self, plan: Plan, goodput: Option<f64>) {
        if plan.schedule.is_none() {
            self.driver.update_value(|d| d.key = None);
            self.stop(DayPhase::Idle);
            self.result.set(None);
            return;
        }
        let Some(goodput) = goodput else {
            self.driver.update_value(|d| d.key = None);
            return self.stop(DayPhase::Waiting);
        };
        let key = (day_key(&plan), goodput);
        if self.driver.with_value(|d| d.key.as_ref() == Some(&key)) {
            // The same numbers: keep what runs or ran; only labels changed.
            if let Some(mut r) = self.result.get_untracked() {
                if r.is_fresh(&plan) && r.plan != plan {
                    r.plan = plan;
                    self.result.set(Some(r));
                }
            }
            return;
        }
        self.stop(DayPhase::Waiting);
        let c = *self;
        let handle = set_timeout_with_handle(move || c.start(plan, goodput), DEBOUNCE).ok();
        self.driver.update_value(|d| {
            d.key = Some(key);
            d.debounce = handle;
        });
    }

    fn start(&self, plan: Plan, goodput: f64) {
        let Some(spec) = plan.schedule.clone() else {
            return;
        };
        let mut machine = match ScheduleRun::new(&plan, &spec.profile, goodput, &spec.options) {
            Ok(m) => m,
            Err(e) => return self.stop(DayPhase::Failed(e.to_string())),
        };
        let jobs = machine.next_batch();
        self.stop(DayPhase::Running);
        self.status.update(|s| s.total = jobs.len() as u32);
        let sim_plan = Plan {
            schedule: None,
            shootout: None,
            ..plan.clone()
        };
        self.jobs.start(
            DayJobs {
                machine,
                plan,
                sim_plan,
                jobs,
            },
            *self,
            POOL,
        );
    }
}

/// How the day's workers start.
const POOL: PoolOptions = PoolOptions {
    lost: "a simulation worker stopped unexpectedly twice on the same hours",
    unreadable: UNREADABLE_REPLY,
    workers_only: false,
};

impl SideOwner<DayJobs> for DayController {
    type Phase = DayPhase;

    fn jobs(&self) -> SideJobs<DayJobs> {
        self.jobs
    }

    fn status(&self) -> RwSignal<DayStatus> {
        self.status
    }

    fn failed_phase(message: String) -> DayPhase {
        DayPhase::Failed(message)
    }

    /// Clears a pending start; a failed key may be tried again after the next edit.
    fn on_stop(&self, phase: &DayPhase) {
        let failed = matches!(phase, DayPhase::Failed(_));
        self.driver.update_value(|d| {
            if let Some(h) = d.debounce.take() {
                h.clear();
            }
            if failed {
                d.key = None;
            }
        });
    }

    fn finished(&self, result: DayResult) {
        self.result.set(Some(result));
        self.status.update(|s| {
            s.phase = DayPhase::Done;
            s.done = s.total;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use goodput_core::plan::SweepRow;
    use goodput_core::schedule::{RateProfile, ScheduleSpec};
    use goodput_core::search::{Knobs, SearchStatus};

    fn search_of(plan: &Plan, goodput_rps: f64) -> (Plan, GoodputResult) {
        let r = GoodputResult {
            binding_class: None,
            goodput_rps,
            goodput_range_rps: [goodput_rps, goodput_rps],
            target: plan.slo.attainment_target,
            replications: 4,
            knobs: Knobs::of(plan),
            status: SearchStatus::Converged,
            reason: String::new(),
            analytic_guess_rps: goodput_rps,
            curve: Vec::new(),
            jobs_run: 0,
        };
        (plan.clone(), r)
    }

    fn with_day(mut p: Plan) -> Plan {
        p.schedule = Some(ScheduleSpec {
            profile: RateProfile::named("business-hours").expect("a shape"),
            options: Default::default(),
        });
        p
    }

    #[test]
    fn the_goodput_is_the_search_of_this_plan_whatever_its_schedule_or_name() {
        let plan = Plan::default();
        let searched = search_of(&plan, 21.5);
        let mut day = with_day(plan.clone());
        day.name = "night shift".into();
        assert_eq!(goodput_of(&day, Some(&searched)), Some(21.5));
        assert_eq!(
            goodput_of(&day, None),
            None,
            "nothing until the search is back"
        );
        // A search of another plan is not this plan's goodput.
        let mut other = day.clone();
        other.traffic.peak_rate_rps += 1.0;
        assert_eq!(goodput_of(&other, Some(&searched)), None);
        // A measured sweep gives the knee, as `goodput schedule` takes it.
        let mut measured = day.clone();
        measured.slo.attainment_target = 0.92;
        measured.planning.measured_sweep = [(4.0, 0.99), (6.0, 0.97), (8.0, 0.93), (9.0, 0.71)]
            .iter()
            .map(|&(rate_rps, attainment)| SweepRow {
                rate_rps,
                attainment,
            })
            .collect();
        assert_eq!(goodput_of(&measured, None), Some(8.0));
    }

    #[test]
    fn a_result_goes_stale_with_the_numbers_not_with_the_name() {
        let plan = with_day(Plan::default());
        let mut run = ScheduleRun::new(
            &plan,
            &plan.schedule.as_ref().expect("a day").profile,
            20.0,
            &goodput_core::schedule::ScheduleOptions {
                simulate: false,
                ..Default::default()
            },
        )
        .expect("a schedule");
        assert!(run.next_batch().is_empty());
        let r = DayResult {
            plan: plan.clone(),
            schedule: run.result().expect("arithmetic only"),
            serving: run.serving_per_minute().to_vec(),
        };
        let mut renamed = plan.clone();
        renamed.name = "renamed".into();
        assert!(r.is_fresh(&renamed));
        let mut pools = plan.clone();
        pools.disagg = Some(goodput_core::disagg::DisaggSpec::for_plan(&pools));
        assert!(r.is_fresh(&pools), "the day does not depend on the pools");
        let mut price = plan.clone();
        price.hardware.gpu_hour_usd *= 2.0;
        assert!(!r.is_fresh(&price), "the day's costs depend on the price");
        let mut lag = plan.clone();
        if let Some(s) = lag.schedule.as_mut() {
            s.options.scale_up_lag_min = 20.0;
        }
        assert!(!r.is_fresh(&lag), "the autoscaler changed");
        let mut peak = plan;
        peak.traffic.peak_rate_rps = 40.0;
        assert!(!r.is_fresh(&peak), "the traffic changed");
    }
}
