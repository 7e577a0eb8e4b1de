//! Calibration in the browser: import measured files, run the core's [`Calibrator`] in
//! a worker pool of its own, and put the calibrated plan into the page's state.
//!
//! ```text
//!   files ─import_files─▶ MeasuredSet ─Calibrator::new(good plan)─▶ next_batch
//!     FitJob ─▶ WorkerRequest::Fit ─▶ fit pool (Web Workers) ─▶ WorkerReply::Fit
//!        ▲                                                           │
//!        └──────────────────────── feed(FitJobResult) ◀──────────────┘
//!   done ─▶ PlanState::set_plan(report.plan)   (the plan before is kept for undo)
//! ```
//!
//! The fit pool is separate from the search's, with its own run ids, so neither ever
//! sees or cancels the other's requests. It waits for its workers rather than running a
//! fit (seconds long) on the page while they load.

use goodput_core::calibrate::{CalibrationReport, Calibrator, FitJob, FitJobResult, Prediction};
use goodput_core::measure::{import_files, MeasuredSet};
use goodput_core::plan::{Arrival, MeasuredLoad};
use goodput_core::sim::SimConfigOf;
use goodput_core::sim::{self, SimConfig};
use goodput_core::Plan;
use leptos::prelude::*;

use super::lazy_pool::LazyPool;
use super::protocol::{FitRequest, WorkerReply, WorkerRequest};
use super::side::{JobMachine, PoolOptions, Reply, SideJobs, SideOwner, SideStatus};
use crate::state::PlanState;

/// What the fit is doing.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum FitPhase {
    /// No fit has run.
    #[default]
    Idle,
    /// Fits are running.
    Running,
    /// The last fit finished and is in the plan.
    Done,
    /// Stopped by the user.
    Cancelled,
    /// The fit could not run; the message says why.
    Failed(String),
}

/// Phase and progress of the calibration.
/// Phase and progress.
pub type FitStatus = SideStatus<FitPhase>;

/// A fit as its controller drives it, with the plan it started from (for Undo).
struct FitJobs {
    calibrator: Calibrator,
    base: Plan,
    /// Jobs handed out by the calibrator and not yet sent.
    queued: Vec<FitJob>,
}

impl JobMachine for FitJobs {
    type Results = Vec<FitJobResult>;
    type Output = (CalibrationReport, Plan);

    fn reply(reply: WorkerReply) -> Result<Option<Reply<Self::Results>>, String> {
        match reply {
            WorkerReply::Fit(r) => Ok(Some(Reply {
                run: r.run,
                error: r.error,
                results: r.results,
            })),
            WorkerReply::Ramp(_) | WorkerReply::Disagg(_) | WorkerReply::Prefetched(_) => Ok(None),
            WorkerReply::Sim(r) => {
                let e = r.error.unwrap_or_else(|| "an unexpected reply".into());
                Err(format!("a calibration worker said: {e}"))
            }
        }
    }

    fn send(&mut self, pool: &LazyPool) {
        for job in std::mem::take(&mut self.queued) {
            pool.submit(|run| {
                WorkerRequest::Fit(FitRequest {
                    run,
                    problem: self.calibrator.problem().clone(),
                    jobs: vec![job],
                })
            });
        }
    }

    fn feed(&mut self, results: &Vec<FitJobResult>) {
        self.calibrator.feed(results);
    }

    fn progress(&self) -> (u32, u32) {
        let p = self.calibrator.progress();
        (p.done, p.total)
    }

    /// The report once the calibrator hands out nothing more and has its answer; the
    /// jobs it hands out meanwhile wait for [`JobMachine::send`].
    fn finish(&mut self) -> Option<Result<(CalibrationReport, Plan), String>> {
        self.queued = self.calibrator.next_batch();
        if !self.queued.is_empty() {
            return None;
        }
        let report = self.calibrator.result()?;
        Some(Ok((report, self.base.clone())))
    }
}

/// Imported measurements, the running fit and its report, as signals.
#[derive(Clone, Copy)]
pub struct FitController {
    /// The last set of files imported without error.
    pub imported: RwSignal<Option<MeasuredSet>>,
    /// The importer's one-line message for the last import, when it failed.
    pub import_error: RwSignal<Option<String>>,
    /// Phase and progress.
    pub status: RwSignal<FitStatus>,
    /// The last finished calibration (until undone).
    pub report: RwSignal<Option<CalibrationReport>>,
    /// The plan before the last calibration was applied.
    pub undo: RwSignal<Option<Plan>>,
    state: PlanState,
    jobs: SideJobs<FitJobs>,
}

impl FitController {
    /// A controller that calibrates `state`'s plan; starts no worker until the first fit.
    pub fn new(state: PlanState) -> FitController {
        FitController {
            imported: RwSignal::new(None),
            import_error: RwSignal::new(None),
            status: RwSignal::new(FitStatus::default()),
            report: RwSignal::new(None),
            undo: RwSignal::new(None),
            state,
            jobs: SideJobs::new(),
        }
    }

    /// The controller provided by `App`.
    pub fn expect_context() -> FitController {
        expect_context::<FitController>()
    }

    /// Imports `(name, bytes)` files; a bad file leaves its message and no set.
    pub fn import(&self, files: &[(String, Vec<u8>)]) {
        let refs: Vec<(&str, &[u8])> = files
            .iter()
            .map(|(n, b)| (n.as_str(), b.as_slice()))
            .collect();
        match import_files(&refs) {
            Ok(set) => {
                self.import_error.set(None);
                self.imported.set(Some(set));
            }
            Err(e) => {
                self.imported.set(None);
                self.import_error.set(Some(e.to_string()));
            }
        }
    }

    /// Starts fitting the good plan to the imported set.
    pub fn run(&self) {
        let Some(set) = self.imported.get_untracked() else {
            return;
        };
        let base = self.state.good.get_untracked();
        let calibrator = match Calibrator::new(&base, &set) {
            Ok(c) => c,
            Err(e) => return self.stop(FitPhase::Failed(e.to_string())),
        };
        self.stop(FitPhase::Running);
        let total = calibrator.progress().total;
        self.status.update(|s| s.total = total);
        self.jobs.start(
            FitJobs {
                calibrator,
                base,
                queued: Vec::new(),
            },
            *self,
            POOL,
        );
    }

    /// Stops the running fit; the plan stays as it is.
    pub fn cancel(&self) {
        self.stop(FitPhase::Cancelled);
    }

    /// Puts back the plan from before the last calibration.
    pub fn undo_calibration(&self) {
        if let Some(plan) = self.undo.get_untracked() {
            self.undo.set(None);
            self.report.set(None);
            self.state.set_plan(plan);
            self.status.set(FitStatus::default());
        }
    }

    /// Switches between the fitted and the datasheet constants.
    pub fn toggle(&self) {
        self.state.update(|p| {
            if let Some(c) = p.calibration.as_mut() {
                c.enabled = !c.enabled;
            }
        });
    }
}

/// How the fits' workers start: fits are too long for a main-thread slice.
const POOL: PoolOptions = PoolOptions {
    lost: "a calibration worker stopped unexpectedly twice on the same fit",
    unreadable: "a calibration worker sent an unreadable reply",
    workers_only: true,
};

impl SideOwner<FitJobs> for FitController {
    type Phase = FitPhase;

    fn jobs(&self) -> SideJobs<FitJobs> {
        self.jobs
    }

    fn status(&self) -> RwSignal<FitStatus> {
        self.status
    }

    fn failed_phase(message: String) -> FitPhase {
        FitPhase::Failed(message)
    }

    fn finished(&self, (report, base): (CalibrationReport, Plan)) {
        // Say "Calibrated" only for a plan the page takes: an invalid one would leave
        // the old plan in force under a success message.
        if let Err(e) = report.plan.validate() {
            let why = format!("the fitted plan cannot be used: {e}");
            return self.status.update(|s| s.phase = FitPhase::Failed(why));
        }
        self.undo.set(Some(base));
        self.state.replace("calibration", report.plan.clone(), None);
        self.report.set(Some(report));
        self.status.update(|s| s.phase = FitPhase::Done);
    }
}

/// Most requests simulated per point when a plan opened from a link is predicted on the
/// page (the fit's own predictions are not in the link).
pub const LINK_PREDICT_REQUESTS: u32 = 300;

/// Predicts every measured point of `plan.calibration` with the plan's step model as it
/// stands (`calibrated`: the fit forced on; otherwise the datasheet constants), on the
/// plan's traffic at each point's load. `None` for a point that cannot be simulated.
pub fn predict_points(plan: &Plan, calibrated: bool) -> Vec<Option<Prediction>> {
    let Some(cal) = &plan.calibration else {
        return Vec::new();
    };
    let mut base = plan.clone();
    if calibrated {
        if let Some(c) = base.calibration.as_mut() {
            c.enabled = true;
        }
    } else {
        base.calibration = None;
    }
    base.run.num_requests = base.run.num_requests.min(LINK_PREDICT_REQUESTS);
    base.run.warmup_requests = 0;
    base.traffic.trace.clear();
    cal.points
        .iter()
        .map(|m| {
            let mut p = base.clone();
            let rate = match m.load {
                MeasuredLoad::Rate { rate_rps, .. } => rate_rps,
                MeasuredLoad::Concurrency { concurrency } => {
                    p.traffic.arrival = Arrival::Closed {
                        concurrency,
                        think_s: 0.0,
                    };
                    1.0
                }
            };
            let cfg = SimConfig::from_plan(&p, rate).ok()?;
            let r = sim::simulate(&cfg, p.run.seed).ok()?;
            Some(Prediction {
                ttft_s: r.ttft_s,
                tpot_s: r.tpot_s,
                e2e_s: r.e2e_s,
                achieved_rps: if r.sim_time_s > 0.0 {
                    f64::from(r.measured_requests - r.unfinished_requests) / r.sim_time_s
                } else {
                    0.0
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use goodput_core::plan::{Calibration, Fitted, MeasuredSummary};

    fn calibrated_plan(bw: f64) -> Plan {
        let mut plan = Plan::default();
        let point = |rate: f64| MeasuredSummary {
            load: MeasuredLoad::Rate {
                rate_rps: rate,
                cv: 1.0,
            },
            achieved_rps: rate,
            ttft_mean_s: Some(0.1),
            ttft_p50_s: None,
            ttft_p99_s: None,
            tpot_mean_s: Some(0.012),
            tpot_p50_s: None,
            tpot_p99_s: None,
            e2e_mean_s: None,
            e2e_p50_s: None,
            e2e_p99_s: None,
        };
        let mut closed = point(0.0);
        closed.load = MeasuredLoad::Concurrency { concurrency: 4 };
        plan.calibration = Some(Calibration {
            bandwidth_efficiency: Fitted::exact(bw),
            points: vec![point(1.0), point(3.0), closed],
            ..Calibration::default()
        });
        plan
    }

    #[test]
    fn link_predictions_follow_the_fitted_constants() {
        let slow = predict_points(&calibrated_plan(0.5), true);
        let sheet = predict_points(&calibrated_plan(0.5), false);
        assert_eq!(slow.len(), 3);
        assert!(slow.iter().all(Option::is_some), "every load simulates");
        let tpot = |v: &[Option<Prediction>], i: usize| v[i].expect("predicted").tpot_s.mean;
        // Half the bandwidth: steps take clearly longer than on the datasheet (less so
        // for the closed loop, whose short batches spend more of each step on prefill).
        for i in 0..3 {
            assert!(
                tpot(&slow, i) > 1.25 * tpot(&sheet, i),
                "point {i}: {} vs {}",
                tpot(&slow, i),
                tpot(&sheet, i)
            );
        }
        // Switched off in the plan, the calibrated curve is still the fit's.
        let mut off = calibrated_plan(0.5);
        off.calibration.as_mut().unwrap().enabled = false;
        assert_eq!(predict_points(&off, true), slow);
        assert!(predict_points(&Plan::default(), true).is_empty());
    }
}
