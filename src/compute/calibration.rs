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

use goodput_core::calibrate::{CalibrationReport, Calibrator, Prediction};
use goodput_core::measure::{import_files, MeasuredSet};
use goodput_core::plan::{Arrival, MeasuredLoad};
use goodput_core::sim::{self, SimConfig};
use goodput_core::Plan;
use leptos::prelude::*;

use super::lazy_pool::LazyPool;
use super::protocol::{FitRequest, WorkerReply, WorkerRequest};
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
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FitStatus {
    /// Phase.
    pub phase: FitPhase,
    /// Fits finished.
    pub done: u32,
    /// Fits in all (known once the full fit is back).
    pub total: u32,
}

struct FitDriver {
    pool: LazyPool,
    calibrator: Option<Calibrator>,
    base: Option<Plan>,
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
    driver: StoredValue<FitDriver, LocalStorage>,
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
            driver: StoredValue::new_local(FitDriver {
                pool: LazyPool::new(),
                calibrator: None,
                base: None,
            }),
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
        self.ensure_pool();
        self.driver.update_value(|d| {
            d.calibrator = Some(calibrator);
            d.base = Some(base);
        });
        self.pump();
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

    fn ensure_pool(&self) {
        let c = *self;
        self.driver.update_value(|d| {
            d.pool.start(
                move |body| c.on_reply(&body),
                move |run| {
                    if c.driver.with_value(|d| d.pool.is_current(run)) {
                        c.stop(FitPhase::Failed(
                            "a calibration worker stopped unexpectedly twice on the same fit"
                                .into(),
                        ));
                    }
                },
            );
            d.pool.wait_for_workers();
        });
    }

    fn stop(&self, phase: FitPhase) {
        self.driver.update_value(|d| {
            d.pool.next_run();
            d.calibrator = None;
        });
        self.status.set(FitStatus {
            phase,
            done: 0,
            total: 0,
        });
    }

    /// Sends the calibrator's next jobs, one request each so they spread over the
    /// workers, or applies the result when every fit is back.
    fn pump(&self) {
        let done = self.driver.try_update_value(|d| {
            let cal = d.calibrator.as_mut()?;
            let jobs = cal.next_batch();
            if jobs.is_empty() {
                return cal.result().map(|r| (r, d.base.clone()));
            }
            for job in jobs {
                d.pool.submit(|run| {
                    WorkerRequest::Fit(FitRequest {
                        run,
                        problem: cal.problem().clone(),
                        jobs: vec![job],
                    })
                });
            }
            None
        });
        if let Some(Some((report, base))) = done {
            self.driver.update_value(|d| d.calibrator = None);
            self.undo.set(base);
            self.state.replace("calibration", report.plan.clone(), None);
            self.report.set(Some(report));
            self.status.update(|s| s.phase = FitPhase::Done);
        }
    }

    fn on_reply(&self, body: &str) {
        let reply = match serde_json::from_str::<WorkerReply>(body) {
            Ok(WorkerReply::Fit(r)) => r,
            Ok(WorkerReply::Ramp(_) | WorkerReply::Disagg(_)) => return,
            Ok(WorkerReply::Sim(r)) => {
                let e = r.error.unwrap_or_else(|| "an unexpected reply".into());
                return self.stop(FitPhase::Failed(format!("a calibration worker said: {e}")));
            }
            Err(_) => {
                return self.stop(FitPhase::Failed(
                    "a calibration worker sent an unreadable reply".into(),
                ))
            }
        };
        if !self.driver.with_value(|d| d.pool.is_current(reply.run)) {
            return;
        }
        if let Some(e) = reply.error {
            return self.stop(FitPhase::Failed(e));
        }
        let progress = self.driver.try_update_value(|d| {
            d.calibrator.as_mut().map(|c| {
                c.feed(&reply.results);
                c.progress()
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
