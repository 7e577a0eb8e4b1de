//! Calibration in the browser: import measured files, run the core's [`Calibrator`] in
//! a worker pool of its own, and put the calibrated plan into the page's state.
//!
//! ```text
//!   files ─import_files─▶ MeasuredSet ─Calibrator::new(good plan)─▶ next_batch
//!     FitJob ─▶ WorkerRequest::Fit ─▶ fit pool (Web Workers) ─▶ WorkerReply::Fit
//!        ▲                                                           │
//!        └──────────────────────── feed(FitJobResult) ◀──────────────┘
//!   done ─▶ a good or fair fit: PlanState::replace(report.plan) (the plan before is
//!           kept for Undo); a poor one, or one no better than the datasheet: held, shown,
//!           applied only by "Apply anyway"
//! ```
//!
//! Applying a fit never changes the plan's traffic: `report.plan` keeps the forecast.
//! The benchmark's workload (`report.workload`) goes into the plan only when the user
//! asks for it ([`FitController::use_benchmark_traffic`]), as a step of its own.
//!
//! The fit pool is separate from the search's, with its own run ids, so neither ever
//! sees or cancels the other's requests. It waits for its workers rather than running a
//! fit (seconds long) on the page while they load.

use goodput_core::calibrate::{
    CalibrationReport, Calibrator, FitJob, FitJobResult, FitVerdict, Prediction,
};
use goodput_core::measure::{import_files, MeasuredSet};
use goodput_core::plan::{Arrival, Calibration, MeasuredLoad, TrafficSpec};
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
    /// The last fit finished weak (poor, or no better than the datasheet): it is shown
    /// but not in the plan until the user applies it anyway.
    Held,
    /// Stopped by the user.
    Cancelled,
    /// The fit could not run; the message says why.
    Failed(String),
}

/// Phase and progress of the calibration.
pub type FitStatus = SideStatus<FitPhase>;

/// A fit as its controller drives it.
struct FitJobs {
    calibrator: Calibrator,
    /// Jobs handed out by the calibrator and not yet sent.
    queued: Vec<FitJob>,
}

impl JobMachine for FitJobs {
    type Results = Vec<FitJobResult>;
    type Output = CalibrationReport;

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
    fn finish(&mut self) -> Option<Result<CalibrationReport, String>> {
        self.queued = self.calibrator.next_batch();
        if !self.queued.is_empty() {
            return None;
        }
        self.calibrator.result().map(Ok)
    }
}

/// One benchmark file of the selection: its name, its size as the browser gave it
/// [bytes], and its bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct ChosenFile {
    /// The file's name (or "pasted text").
    pub name: String,
    /// Its size [bytes].
    pub size: u64,
    /// Its content.
    pub bytes: Vec<u8>,
}

impl ChosenFile {
    /// A file of `bytes` named `name`.
    pub fn new(name: impl Into<String>, bytes: Vec<u8>) -> ChosenFile {
        ChosenFile {
            name: name.into(),
            size: bytes.len() as u64,
            bytes,
        }
    }

    /// Whether `other` is the same file: the same name and size.
    pub fn same_as(&self, other: &ChosenFile) -> bool {
        self.name == other.name && self.size == other.size
    }
}

/// How newly chosen files meet the files chosen before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// The new files take the selection's place (choosing, dropping, pasting).
    Replace,
    /// The new files join the selection ("Add files").
    Add,
}

/// The selection after choosing `files` as `how` says, each file (by name and size) at
/// most once: of two alike, the one chosen first stays.
pub fn pick_files(selection: &[ChosenFile], files: Vec<ChosenFile>, how: Pick) -> Vec<ChosenFile> {
    let mut out: Vec<ChosenFile> = match how {
        Pick::Replace => Vec::new(),
        Pick::Add => selection.to_vec(),
    };
    for f in files {
        if !out.iter().any(|o| o.same_as(&f)) {
            out.push(f);
        }
    }
    out
}

/// `plan`'s traffic with the benchmark's `workload` in its place: the workload's lengths,
/// arrivals and prefix structure at the plan's own forecast peak.
pub fn with_benchmark_traffic(plan: &Plan, workload: &TrafficSpec) -> TrafficSpec {
    TrafficSpec {
        peak_rate_rps: plan.traffic.peak_rate_rps,
        ..workload.clone()
    }
}

/// Whether a fit waits for "Apply anyway" rather than going into the plan: a poor one,
/// and one that starts switched off (no better than the datasheet, or fitted to another
/// model's runs).
pub fn is_held(c: &Calibration) -> bool {
    matches!(FitVerdict::of(c), FitVerdict::Poor | FitVerdict::NoBetter) || !c.enabled
}

/// Imported measurements, the running fit and its report, as signals.
#[derive(Clone, Copy)]
pub struct FitController {
    /// The files chosen, each at most once, in the order chosen.
    pub selection: RwSignal<Vec<ChosenFile>>,
    /// The measurements of the selection, when every file of it imports.
    pub imported: RwSignal<Option<MeasuredSet>>,
    /// The importer's one-line message for the last import, when it failed.
    pub import_error: RwSignal<Option<String>>,
    /// Phase and progress.
    pub status: RwSignal<FitStatus>,
    /// The last finished calibration (until undone), applied or held.
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
            selection: RwSignal::new(Vec::new()),
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

    /// Chooses `files` (in place of the selection, or added to it) and imports the
    /// selection.
    pub fn choose(&self, files: Vec<ChosenFile>, how: Pick) {
        let next = self.selection.with_untracked(|s| pick_files(s, files, how));
        self.selection.set(next);
        self.import_selection();
    }

    /// Empties the selection: nothing imported, no message.
    pub fn clear(&self) {
        self.selection.set(Vec::new());
        self.imported.set(None);
        self.import_error.set(None);
    }

    /// Imports the whole selection; a bad file leaves its message and no set.
    fn import_selection(&self) {
        let files = self.selection.get_untracked();
        if files.is_empty() {
            self.imported.set(None);
            self.import_error.set(None);
            return;
        }
        let refs: Vec<(&str, &[u8])> = files
            .iter()
            .map(|f| (f.name.as_str(), f.bytes.as_slice()))
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

    /// Says that a file could not be read; the selection stays as it was.
    pub fn unreadable(&self, message: String) {
        self.import_error.set(Some(message));
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

    /// Takes a finished calibration: a good or fair one (or one not checked) goes into
    /// the plan at once, its traffic unchanged; a poor one, one no better than the
    /// datasheet, or one of another model's runs is held for
    /// [`FitController::apply_anyway`].
    pub fn take(&self, report: CalibrationReport) {
        // Say "Calibrated" only for a plan the page takes: an invalid one would leave
        // the old plan in force under a success message.
        if let Err(e) = report.plan.validate() {
            let why = format!("the fitted plan cannot be used: {e}");
            return self.status.update(|s| s.phase = FitPhase::Failed(why));
        }
        let held = is_held(&report.calibration);
        let plan = report.plan.clone();
        self.report.set(Some(report));
        if held {
            self.status.update(|s| s.phase = FitPhase::Held);
        } else {
            self.apply(plan);
        }
    }

    /// Applies a held fit after all, its fitted constants in force.
    pub fn apply_anyway(&self) {
        if self.status.with_untracked(|s| s.phase != FitPhase::Held) {
            return;
        }
        let Some(mut plan) = self
            .report
            .with_untracked(|r| r.as_ref().map(|r| r.plan.clone()))
        else {
            return;
        };
        if let Some(c) = plan.calibration.as_mut() {
            c.enabled = true;
        }
        self.apply(plan);
    }

    /// Puts the calibrated `plan` in place of the plan, keeping the plan before for Undo.
    fn apply(&self, plan: Plan) {
        self.undo.set(Some(self.state.draft.get_untracked()));
        self.state.replace("calibration", plan, None);
        self.status.update(|s| s.phase = FitPhase::Done);
    }

    /// Whether the last fit is held (shown, not in the plan). Tracks the status.
    pub fn is_holding(&self) -> bool {
        self.status.with(|s| s.phase == FitPhase::Held)
    }

    /// Puts the benchmark's traffic (lengths, arrivals) in place of the plan's, at the
    /// plan's peak, as a step Undo takes back.
    pub fn use_benchmark_traffic(&self) {
        let Some(workload) = self
            .report
            .with_untracked(|r| r.as_ref().map(|r| r.workload.clone()))
        else {
            return;
        };
        self.state.change("the benchmark's traffic", |p| {
            p.traffic = with_benchmark_traffic(p, &workload);
        });
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

    fn finished(&self, report: CalibrationReport) {
        self.take(report);
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
    use goodput_core::calibrate::PointFit;
    use goodput_core::plan::{
        Calibration, CalibrationError, Fitted, LengthDist, MeasuredSummary, MetricErrors,
    };
    use goodput_core::sim::Summary;

    fn file(name: &str, text: &str) -> ChosenFile {
        ChosenFile::new(name, text.as_bytes().to_vec())
    }

    #[test]
    fn choosing_replaces_adding_adds_and_a_file_comes_once() {
        let a = file("a.json", "{}");
        let b = file("b.json", "{}");
        let picked = pick_files(&[], vec![a.clone(), b.clone(), a.clone()], Pick::Replace);
        assert_eq!(
            picked,
            [a.clone(), b.clone()],
            "a file chosen twice comes once"
        );
        let c = file("c.json", "{ }");
        let replaced = pick_files(&picked, vec![c.clone()], Pick::Replace);
        assert_eq!(replaced, std::slice::from_ref(&c));
        // The same name with another size is another file; the same name and size is not.
        let a2 = file("a.json", "{\"x\":1}");
        assert_eq!(
            pick_files(&picked, vec![c.clone(), a.clone(), a2.clone()], Pick::Add),
            [a, b, c, a2]
        );
    }

    fn errors(e: f64) -> MetricErrors {
        MetricErrors {
            ttft: Some(e),
            tpot: Some(e),
            e2e: Some(e),
            overall: e,
        }
    }

    fn flat(x: f64) -> Summary {
        Summary {
            mean: x,
            p50: x,
            p90: x,
            p95: x,
            p99: x,
        }
    }

    /// A finished calibration of the default plan whose held-out error is `held` (the
    /// datasheet's: 40%), with a benchmark of longer prompts in a closed loop.
    pub(crate) fn report(held: f64) -> CalibrationReport {
        let measured = calibrated_plan(0.8).calibration.unwrap().points;
        let error = CalibrationError {
            in_sample: errors(held / 2.0),
            held_out: Some(errors(held)),
            extrapolation: Some(errors(held)),
            uncalibrated: errors(0.4),
        };
        let calibration = Calibration {
            enabled: true,
            bandwidth_efficiency: Fitted {
                value: 0.8,
                sd: 0.02,
            },
            frontend_s: Some(Fitted {
                value: 0.03,
                sd: 0.005,
            }),
            kv_read_efficiency: Some(Fitted {
                value: 0.7,
                sd: 0.1,
            }),
            error,
            points: measured.clone(),
            ..Calibration::default()
        };
        let plan = Plan {
            calibration: Some(calibration.clone()),
            ..Plan::default()
        };
        let mut workload = plan.traffic.clone();
        workload.prompt.dist = LengthDist::LogNormal {
            median: 3000.0,
            sigma: 0.4,
        };
        workload.arrival = Arrival::Closed {
            concurrency: 16,
            think_s: 0.0,
        };
        let prediction = Prediction {
            ttft_s: flat(0.1),
            tpot_s: flat(0.012),
            e2e_s: flat(2.5),
            achieved_rps: 1.0,
        };
        let points = measured
            .into_iter()
            .map(|m| PointFit {
                source: "bench.json".into(),
                measured: m,
                predicted: prediction,
                held_out: Some(prediction),
                extrapolated: None,
                datasheet: prediction,
                errors: [Some(0.1), Some(0.1), None],
                held_out_errors: None,
            })
            .collect();
        CalibrationReport {
            verdict: FitVerdict::of(&calibration),
            calibration,
            plan,
            workload,
            tail_error: error,
            points,
            evaluations: 1,
            warnings: Vec::new(),
        }
    }

    fn with_fits(f: impl FnOnce(PlanState, FitController)) {
        let owner = Owner::new();
        owner.set();
        let state = PlanState::new(Plan::default());
        f(state, FitController::new(state));
    }

    #[test]
    fn a_good_fit_goes_into_the_plan_and_leaves_its_traffic() {
        with_fits(|state, fits| {
            let mut forecast = Plan::default();
            forecast.traffic.peak_rate_rps = 42.0;
            state.set_plan(forecast.clone());
            let r = report(0.08);
            assert_eq!(FitVerdict::of(&r.calibration), FitVerdict::Good);
            fits.take(r.clone());
            assert_eq!(fits.status.get_untracked().phase, FitPhase::Done);
            let plan = state.good.get_untracked();
            assert_eq!(plan.calibration, Some(r.calibration.clone()));
            assert_eq!(plan.traffic, r.plan.traffic, "the plan's traffic stays");
            assert_ne!(plan.traffic, r.workload);
            assert_eq!(fits.undo.get_untracked(), Some(forecast));
        });
    }

    #[test]
    fn a_poor_fit_waits_for_apply_anyway() {
        with_fits(|state, fits| {
            let before = state.good.get_untracked();
            // A good fit that starts switched off (fitted to another model's runs) waits
            // too.
            for (held, verdict, enabled) in [
                (0.3, FitVerdict::Poor, true),
                (0.5, FitVerdict::NoBetter, true),
                (0.05, FitVerdict::Good, false),
            ] {
                let mut r = report(held);
                r.calibration.enabled = enabled;
                assert_eq!(FitVerdict::of(&r.calibration), verdict);
                fits.take(r);
                assert_eq!(fits.status.get_untracked().phase, FitPhase::Held);
                assert_eq!(
                    state.good.get_untracked(),
                    before,
                    "{verdict:?} is not applied"
                );
                assert!(fits.report.get_untracked().is_some(), "it is shown");
            }
            let mut r = report(0.5);
            r.calibration.enabled = false;
            r.plan.calibration.as_mut().unwrap().enabled = false;
            fits.take(r);
            fits.apply_anyway();
            assert_eq!(fits.status.get_untracked().phase, FitPhase::Done);
            let c = state.good.get_untracked().calibration.expect("applied");
            assert!(
                c.enabled,
                "applied anyway, the fitted constants are in force"
            );
            assert_eq!(
                state.undo().map(|e| e.what),
                Some("calibration".to_string())
            );
            assert_eq!(state.good.get_untracked(), before);
        });
    }

    #[test]
    fn the_benchmark_traffic_is_a_step_of_its_own_at_the_plan_peak() {
        with_fits(|state, fits| {
            fits.take(report(0.08));
            let calibrated = state.good.get_untracked();
            state.update(|p| p.traffic.peak_rate_rps = 7.0);
            let forecast = state.good.get_untracked();
            fits.use_benchmark_traffic();
            let plan = state.good.get_untracked();
            let workload = fits.report.get_untracked().unwrap().workload;
            assert_eq!(plan.traffic.peak_rate_rps, 7.0, "the peak stays the plan's");
            assert_eq!(plan.traffic.prompt, workload.prompt);
            assert_eq!(plan.traffic.arrival, workload.arrival);
            assert_eq!(plan.calibration, calibrated.calibration);
            let step = state.undo().expect("a step");
            assert_eq!(step.what, "the benchmark's traffic");
            assert_eq!(state.good.get_untracked(), forecast);
        });
    }

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
