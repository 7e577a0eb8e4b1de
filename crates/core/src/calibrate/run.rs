//! A whole calibration as a resumable state machine of fit jobs, and its report.
//!
//! ```text
//!   phase 1: the full fit (every point)
//!   phase 2: leave-one-out refits, bootstrap refits, and "fit light, predict heavy"
//!   result(): the constants ± sd, the per-point table, the three errors, the verdict
//! ```

use serde::{Deserialize, Serialize};

use super::fit::{run_fit_jobs, FitJob, FitJobResult, FitTask};
use super::problem::{
    length_with_mean, mape_of, point_errors, CalibrationProblem, Constants, FitTerms, LengthSource,
    PointCase, Prediction, Statistic,
};
use super::words::{calibration_cautions, load_label, FitVerdict};
use super::{CalibrateError, BOOTSTRAP_RESAMPLES};
use crate::format::latency;
use crate::measure::{MeasuredSet, SpecMeasured};
use crate::plan::{
    Arrival, Calibration, CalibrationError, CalibrationSource, Fitted, LengthDist, LengthSpec,
    MeasuredSummary, Plan, TraceRow, TrafficSpec,
};
use crate::rng::Rng;
use crate::sim::replication_seed;

/// One row of the per-point table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointFit {
    /// The file it came from.
    pub source: String,
    /// What was measured.
    pub measured: MeasuredSummary,
    /// The calibrated model's prediction (fitted on every point).
    pub predicted: Prediction,
    /// The prediction of a fit made without this point (`None` with one point).
    pub held_out: Option<Prediction>,
    /// The prediction of a fit made on the lighter half of the loads, for a point of the
    /// heavier half (`None` for the lighter half, and with one point).
    #[serde(default)]
    pub extrapolated: Option<Prediction>,
    /// The datasheet constants' prediction.
    pub datasheet: Prediction,
    /// Absolute percentage errors of `predicted` (TTFT, TPOT, E2E); `None` where not measured.
    pub errors: [Option<f64>; 3],
    /// Absolute percentage errors of `held_out`.
    pub held_out_errors: Option<[Option<f64>; 3]>,
}

/// A finished calibration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationReport {
    /// The fit, as the plan carries it.
    pub calibration: Calibration,
    /// The plan that was calibrated, with the fit applied. Its traffic is the plan's
    /// own forecast: the benchmark's workload is in `workload`, never put in its place.
    pub plan: Plan,
    /// The measured workload (the files' lengths and arrival kind, on the plan's peak),
    /// for a user who chooses to plan with the benchmark's traffic.
    pub workload: TrafficSpec,
    /// The same errors as the calibration's, of the 99th percentiles rather than the
    /// means: how far off the tails are (on a few hundred requests a point, a noisy
    /// figure).
    pub tail_error: CalibrationError,
    /// Per-point measured, predicted and held-out figures.
    pub points: Vec<PointFit>,
    /// Objective evaluations over every fit.
    pub evaluations: u32,
    /// Plain-words cautions (a single point, points on one load level, a share above
    /// the datasheet, lengths assumed, …).
    pub warnings: Vec<String>,
    /// How far the fit can be trusted ([`super::verdict_words`] says it in words).
    pub verdict: FitVerdict,
}

/// Progress of a calibration.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CalibrationProgress {
    /// Fits finished.
    pub done: u32,
    /// Fits in all.
    pub total: u32,
}

/// The calibration as a resumable state machine: hand out [`FitJob`]s, take
/// [`FitJobResult`]s back, in any order and on any thread.
#[derive(Debug, Clone)]
pub struct Calibrator {
    problem: CalibrationProblem,
    set_files: Vec<String>,
    source: CalibrationSource,
    full: Option<FitJobResult>,
    refits: Vec<Option<FitJobResult>>,
    refit_jobs: Vec<FitJob>,
    handed_full: bool,
    handed_refits: bool,
}

impl Calibrator {
    /// Prepares the calibration of `plan` to `set`, fitting the constants of
    /// [`FitTerms::DEFAULT`].
    pub fn new(plan: &Plan, set: &MeasuredSet) -> Result<Calibrator, CalibrateError> {
        Calibrator::with_terms(plan, set, FitTerms::DEFAULT)
    }

    /// [`Calibrator::new`], fitting the constants of `terms`.
    pub fn with_terms(
        plan: &Plan,
        set: &MeasuredSet,
        terms: FitTerms,
    ) -> Result<Calibrator, CalibrateError> {
        let problem = CalibrationProblem::with_terms(plan, set, terms)?;
        let source = CalibrationSource {
            files: set.files.clone(),
            tool: set.format.tool_name().to_string(),
            model: set.model.clone().unwrap_or_default(),
            engine: set.engine.clone().unwrap_or_default(),
            fitted_model: plan.model.preset.clone(),
            fitted_gpu: plan.hardware.preset.clone(),
            fitted_tp_degree: plan.hardware.tp_degree,
            spec: SpecMeasured::total(set.points.iter().filter_map(|p| p.spec.as_ref())),
        };
        Ok(Calibrator {
            problem,
            set_files: set.files.clone(),
            source,
            full: None,
            refits: Vec::new(),
            refit_jobs: Vec::new(),
            handed_full: false,
            handed_refits: false,
        })
    }

    /// The problem the jobs refer to (send it to workers once).
    pub fn problem(&self) -> &CalibrationProblem {
        &self.problem
    }

    fn n_refits(&self) -> u32 {
        let n = self.problem.points.len() as u32;
        if n < 2 {
            0
        } else {
            n + BOOTSTRAP_RESAMPLES + 1
        }
    }

    /// The next jobs to run; empty while waiting for results or when done.
    pub fn next_batch(&mut self) -> Vec<FitJob> {
        if !self.handed_full {
            self.handed_full = true;
            return vec![FitJob {
                id: 0,
                task: FitTask::Full,
                start: self.problem.theta(&self.problem.datasheet()),
            }];
        }
        let Some(full) = &self.full else {
            return Vec::new();
        };
        if self.handed_refits {
            return Vec::new();
        }
        self.handed_refits = true;
        let n = self.problem.points.len() as u32;
        let start = full.theta;
        let mut jobs = Vec::new();
        if let Some((light, heavy)) = self.problem.light_heavy() {
            // The longest job first, so a pool starts it early.
            jobs.push(FitJob {
                id: 1,
                task: FitTask::Subset {
                    fit: light,
                    predict: heavy,
                },
                start,
            });
            for i in 0..n {
                jobs.push(FitJob {
                    id: 2 + i,
                    task: FitTask::LeaveOut { point: i },
                    start,
                });
            }
            let mut rng = Rng::new(replication_seed(self.problem.plan.run.seed, 0xCA11));
            for b in 0..BOOTSTRAP_RESAMPLES {
                let sample = (0..n)
                    .map(|_| ((rng.next_f64() * n as f64) as u32).min(n - 1))
                    .collect();
                jobs.push(FitJob {
                    id: 2 + n + b,
                    task: FitTask::Bootstrap { sample },
                    start,
                });
            }
        }
        self.refits = vec![None; jobs.len()];
        self.refit_jobs = jobs.clone();
        jobs
    }

    /// Takes results back (matched by id; unknown ids are ignored).
    pub fn feed(&mut self, results: &[FitJobResult]) {
        for r in results {
            if r.id == 0 {
                self.full = Some(r.clone());
            } else if let Some(slot) = self.refits.get_mut(r.id as usize - 1) {
                *slot = Some(r.clone());
            }
        }
    }

    /// Whether every fit is back.
    pub fn is_done(&self) -> bool {
        self.full.is_some() && self.handed_refits && self.refits.iter().all(Option::is_some)
    }

    /// Fits finished out of all.
    pub fn progress(&self) -> CalibrationProgress {
        CalibrationProgress {
            done: self.full.is_some() as u32
                + self.refits.iter().filter(|r| r.is_some()).count() as u32,
            total: 1 + self.n_refits(),
        }
    }

    /// The finished calibration, once [`Calibrator::is_done`].
    pub fn result(&self) -> Option<CalibrationReport> {
        if !self.is_done() {
            return None;
        }
        let full = self.full.as_ref()?;
        let n = self.problem.points.len();
        let cases = &self.problem.points;
        let fitted = self.problem.constants(full.theta);
        let mut held: Vec<Option<Prediction>> = vec![None; n];
        let mut extrapolated: Vec<Option<Prediction>> = vec![None; n];
        let mut heavy: Vec<u32> = Vec::new();
        let mut boots: Vec<Constants> = Vec::new();
        let mut evaluations = full.evaluations;
        for (job, r) in self.refit_jobs.iter().zip(&self.refits) {
            let r = r.as_ref()?;
            evaluations += r.evaluations;
            match &job.task {
                FitTask::LeaveOut { point } => {
                    held[*point as usize] = r.predictions.first().copied();
                }
                FitTask::Bootstrap { .. } => boots.push(self.problem.constants(r.theta)),
                FitTask::Subset { predict, .. } => {
                    for (&i, p) in predict.iter().zip(&r.predictions) {
                        extrapolated[i as usize] = Some(*p);
                    }
                    heavy = predict.clone();
                }
                FitTask::Full => {}
            }
        }
        let sd = |f: fn(&Constants) -> f64| {
            if boots.len() < 2 {
                return 0.0;
            }
            let m = boots.iter().map(f).sum::<f64>() / boots.len() as f64;
            let v = boots.iter().map(|c| (f(c) - m) * (f(c) - m)).sum::<f64>()
                / (boots.len() - 1) as f64;
            libm::sqrt(v)
        };
        let measured = |idx: &[usize]| -> Vec<&MeasuredSummary> {
            idx.iter().map(|&i| &cases[i].measured).collect()
        };
        let all: Vec<usize> = (0..n).collect();
        let errors = |stat: Statistic| {
            let held_out = if n >= 2 {
                let preds: Option<Vec<Prediction>> = held.iter().copied().collect();
                preds.map(|p| mape_of(measured(&all), &p, stat))
            } else {
                None
            };
            let extrapolation = if heavy.is_empty() {
                None
            } else {
                let idx: Vec<usize> = heavy.iter().map(|&i| i as usize).collect();
                let preds: Option<Vec<Prediction>> = idx.iter().map(|&i| extrapolated[i]).collect();
                preds.map(|p| mape_of(measured(&idx), &p, stat))
            };
            CalibrationError {
                in_sample: mape_of(measured(&all), &full.predictions, stat),
                held_out,
                extrapolation,
                uncalibrated: mape_of(measured(&all), &full.datasheet, stat),
            }
        };
        let error = errors(Statistic::Mean);
        let tail_error = errors(Statistic::P99);
        let terms = self.problem.terms;
        let fitted_sd = |value: f64, f: fn(&Constants) -> f64| Fitted { value, sd: sd(f) };
        let mut calibration = Calibration {
            enabled: true,
            bandwidth_efficiency: fitted_sd(fitted.bandwidth_efficiency, |c| {
                c.bandwidth_efficiency
            }),
            compute_efficiency: fitted_sd(fitted.compute_efficiency, |c| c.compute_efficiency),
            step_overhead_s: fitted_sd(fitted.step_overhead_s, |c| c.step_overhead_s),
            seq_overhead_s: terms
                .seq_overhead
                .then(|| fitted_sd(fitted.seq_overhead_s, |c| c.seq_overhead_s)),
            frontend_s: terms
                .frontend
                .then(|| fitted_sd(fitted.frontend_s, |c| c.frontend_s)),
            prefill_overhead_s: terms
                .prefill_overhead
                .then(|| fitted_sd(fitted.prefill_overhead_s, |c| c.prefill_overhead_s)),
            kv_read_efficiency: terms
                .kv_read
                .then(|| fitted_sd(fitted.kv_read_efficiency, |c| c.kv_read_efficiency)),
            source: self.source.clone(),
            error,
            points: cases.iter().map(|c| c.measured.clone()).collect(),
        };
        // A fit no better than the datasheet on held-out runs starts switched off, and so
        // does a fit to another model's runs: its constants describe that model's server.
        let other_model = model_mismatch(&self.source.model, &self.problem.plan);
        calibration.enabled =
            FitVerdict::of(&calibration) != FitVerdict::NoBetter && other_model.is_none();
        let points = cases
            .iter()
            .enumerate()
            .map(|(i, c)| PointFit {
                source: c.source.clone(),
                measured: c.measured.clone(),
                predicted: full.predictions[i],
                held_out: held[i],
                extrapolated: extrapolated[i],
                datasheet: full.datasheet[i],
                errors: point_errors(&c.measured, &full.predictions[i]),
                held_out_errors: held[i].map(|h| point_errors(&c.measured, &h)),
            })
            .collect();
        let mut plan = self.problem.plan.clone();
        plan.calibration = Some(calibration.clone());
        Some(CalibrationReport {
            plan,
            workload: workload_traffic(&self.problem),
            tail_error,
            points,
            evaluations,
            // Another model's files first: every other caution is about a fit that
            // would not describe the plan's model anyway.
            warnings: other_model
                .into_iter()
                .chain(warnings(&self.problem, &self.set_files))
                .chain(calibration_cautions(&calibration))
                .collect(),
            verdict: FitVerdict::of(&calibration),
            calibration,
        })
    }
}

/// The benchmark's workload as traffic: the files' lengths (a lognormal fitted to the
/// per-request or spread lengths when the files have them, else the points' mean
/// lengths on the plan's shape) and their arrival kind, on the plan's forecast peak.
fn workload_traffic(problem: &CalibrationProblem) -> TrafficSpec {
    let mut t = problem.plan.traffic.clone();
    let cases = &problem.points;
    let rows: Vec<&TraceRow> = cases.iter().flat_map(|c| c.traffic.trace.iter()).collect();
    if rows.is_empty() {
        let n = cases.len() as f64;
        let mean_of = |f: fn(&PointCase) -> &LengthSpec| {
            cases.iter().map(|c| length_mean(f(c))).sum::<f64>() / n
        };
        t.prompt = length_with_mean(&t.prompt, mean_of(|c| &c.traffic.prompt));
        t.output = length_with_mean(&t.output, mean_of(|c| &c.traffic.output));
    } else {
        t.prompt = lognormal_fit(rows.iter().map(|r| r.prompt_tokens));
        t.output = lognormal_fit(rows.iter().map(|r| r.output_tokens));
    }
    t.trace = Vec::new();
    t.arrival = cases[0].traffic.arrival;
    if let Arrival::Closed { .. } = t.arrival {
        let mut ns: Vec<u32> = cases
            .iter()
            .filter_map(|c| match c.traffic.arrival {
                Arrival::Closed { concurrency, .. } => Some(concurrency),
                _ => None,
            })
            .collect();
        ns.sort_unstable();
        t.arrival = Arrival::Closed {
            concurrency: ns[ns.len() / 2],
            think_s: 0.0,
        };
    }
    t
}

/// The mean of a length law, for a lognormal ignoring the clip [tokens].
fn length_mean(l: &LengthSpec) -> f64 {
    match l.dist {
        LengthDist::LogNormal { median, sigma } => median * libm::exp(sigma * sigma / 2.0),
        LengthDist::Fixed { tokens } => tokens as f64,
        LengthDist::Trace => l.max as f64 / 2.0,
    }
}

/// A lognormal with the sample's log-mean and log-sd, clipped to the sample's range.
pub(crate) fn lognormal_fit(xs: impl Iterator<Item = u32> + Clone) -> LengthSpec {
    let n = xs.clone().count().max(1) as f64;
    let logs = xs.clone().map(|x| libm::log(x.max(1) as f64));
    let mu = logs.clone().sum::<f64>() / n;
    let var = logs.map(|l| (l - mu) * (l - mu)).sum::<f64>() / n;
    let min = xs.clone().min().unwrap_or(1).max(1);
    let max = xs.max().unwrap_or(1).max(min);
    LengthSpec {
        dist: LengthDist::LogNormal {
            median: libm::exp(mu).max(1.0),
            sigma: libm::sqrt(var).min(5.0),
        },
        min,
        max,
    }
}

/// Cautions about what the points cannot tell.
fn warnings(problem: &CalibrationProblem, files: &[String]) -> Vec<String> {
    let mut w = Vec::new();
    let n = problem.points.len();
    if n == 1 {
        w.push(
            "one measured point: the fit cannot be checked on held-out data, and three \
             constants are not pinned down by one load level; measure at least 3 rates"
                .to_string(),
        );
    } else if n < 4 {
        w.push(format!(
            "{n} measured points: the held-out and extrapolation errors are a rough guide; \
             measure 4 or more rates"
        ));
    }
    let loads: Vec<f64> = problem
        .points
        .iter()
        .map(|c| c.measured.achieved_rps)
        .collect();
    let (lo, hi) = loads
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
    if n >= 2 && hi > 0.0 && lo / hi > 0.8 {
        w.push(
            "every point ran at about the same throughput: the fit says little about other loads, \
             least of all about saturation"
                .to_string(),
        );
    }
    if problem
        .points
        .iter()
        .any(|c| c.lengths == LengthSource::MeansOnly)
    {
        w.push(means_only_warning(&problem.plan));
    }
    w.extend(ttft_falls_with_load(problem));
    if files.is_empty() {
        w.push("no file names were given".to_string());
    }
    w
}

/// How much heavier a point's load must be than another's ([`ttft_falls_with_load`]):
/// at twice the load, a working server's queue can only have grown.
const HEAVIER_LOAD: f64 = 2.0;
/// How far below the lighter point's mean TTFT the heavier one's must fall to be more than
/// the noise of a few hundred requests: by a quarter, and by 50 ms (an idle GPU's slower
/// first steps cost a few tens of ms at the lightest loads).
const TTFT_DROP: f64 = 0.75;
/// See [`TTFT_DROP`] [s].
const TTFT_DROP_S: f64 = 0.05;
/// How close two points' mean lengths must be to count as one workload.
const SAME_LENGTHS: f64 = 0.1;

/// A lighter point whose mean TTFT is well above that of a point at twice its load or
/// more, on the same lengths: a server cannot give first tokens sooner under more load,
/// so the lighter run paid a one-off cost (kernels compiled on first use, a cold cache)
/// that the fit would read as slow prefill. The first such pair in load order.
pub fn ttft_falls_with_load(problem: &CalibrationProblem) -> Option<String> {
    let keys = problem.load_keys();
    let lengths = |c: &PointCase| -> Option<(f64, f64)> {
        let rows = &c.traffic.trace;
        let n = rows.len() as f64;
        (!rows.is_empty()).then(|| {
            (
                rows.iter().map(|r| r.prompt_tokens as f64).sum::<f64>() / n,
                rows.iter().map(|r| r.output_tokens as f64).sum::<f64>() / n,
            )
        })
    };
    let alike = |a: f64, b: f64| (a - b).abs() <= SAME_LENGTHS * a.max(b);
    let same_workload = |a: &PointCase, b: &PointCase| match (lengths(a), lengths(b)) {
        (Some((pa, oa)), Some((pb, ob))) => alike(pa, pb) && alike(oa, ob),
        (None, None) => true,
        _ => false,
    };
    let order = problem.by_load();
    for (k, &i) in order.iter().enumerate() {
        let light = &problem.points[i as usize];
        let Some(slow) = light.measured.ttft_mean_s else {
            continue;
        };
        for &j in &order[k + 1..] {
            let heavy = &problem.points[j as usize];
            let Some(fast) = heavy.measured.ttft_mean_s else {
                continue;
            };
            if keys[j as usize] >= HEAVIER_LOAD * keys[i as usize]
                && fast < TTFT_DROP * slow
                && slow - fast > TTFT_DROP_S
                && same_workload(light, heavy)
            {
                return Some(format!(
                    "the mean TTFT falls as the load rises: {} at {} ({}), {} at {} ({}), on \
                     the same lengths. One server cannot give first tokens sooner under more \
                     load, so the lighter run most likely paid a one-off cost (kernels \
                     compiled on first use, a cold cache, a server just started). Warm the \
                     server up before each run, or leave that point out: the fit reads it as \
                     slow prefill and predicts heavier loads too slow",
                    latency(Some(slow)),
                    load_label(&light.measured.load),
                    light.source,
                    latency(Some(fast)),
                    load_label(&heavy.measured.load),
                    heavy.source,
                ));
            }
        }
    }
    None
}

/// Parameters a model name states, from its first size token ("70B", "1.5b", "8x7B",
/// "125M"; an active-parameter token such as "A22B" is not one), if any.
pub fn params_in_name(name: &str) -> Option<f64> {
    let base = name.rsplit('/').next().unwrap_or(name).to_ascii_lowercase();
    base.split(['-', '_', ' ']).find_map(|token| {
        let (number, scale) = if let Some(n) = token.strip_suffix('b') {
            (n, 1e9)
        } else {
            (token.strip_suffix('m')?, 1e6)
        };
        let value = match number.split_once('x') {
            Some((k, each)) => k.parse::<f64>().ok()? * each.parse::<f64>().ok()?,
            None => number.parse::<f64>().ok()?,
        };
        (value.is_finite() && value > 0.0).then_some(value * scale)
    })
}

/// How far a name's stated size may be from the plan's parameters and still name the
/// same model (a name rounds: "8x7B" is 47B parameters, "70B" 70.6B).
const NAME_SIZE_SLACK: f64 = 1.3;

/// The caution for files that name a model of another size than the plan's: the fit
/// would describe that model's server, and every number of the plan with it.
pub fn model_mismatch(file_model: &str, plan: &Plan) -> Option<String> {
    let stated = params_in_name(file_model)?;
    let params = plan.model.params;
    if params.is_nan() || params <= 0.0 || (stated / params).max(params / stated) <= NAME_SIZE_SLACK
    {
        return None;
    }
    let name = crate::presets::model(&plan.model.preset).map_or("a custom model", |m| m.name);
    Some(format!(
        "the files ran {file_model} (about {} parameters by its name), but the plan's model is {name} ({} parameters): these constants describe a server of another model, and every number planned with them would too, so the fit starts switched off; set the plan's model to the one benchmarked (--model, or the Model field) and calibrate again",
        billions(stated),
        billions(params)
    ))
}

/// A parameter count in billions, as a model card writes it ("70.6B", "8B").
fn billions(params: f64) -> String {
    format!("{}B", crate::format::sig(params / 1e9))
}

/// The caution for points that give mean lengths only: the plan's spread is assumed,
/// and the flags that set it.
fn means_only_warning(plan: &Plan) -> String {
    let sigma = |l: &LengthSpec| match l.dist {
        LengthDist::LogNormal { sigma, .. } => format!("a lognormal spread of sigma {sigma}"),
        LengthDist::Fixed { .. } => "fixed lengths".to_string(),
        LengthDist::Trace => "the trace's lengths".to_string(),
    };
    format!(
        "some points give mean lengths only, so the plan's length spread is assumed \
         (prompts: {}; outputs: {}); the spread changes queueing, so set it to the \
         benchmark's with --input-len-sigma and --output-len-sigma, or give per-request \
         lengths (vllm bench serve --save-detailed) or spread columns (prompt_tokens_p50, \
         _p90, _p99, _min, _max and the same for output_tokens)",
        sigma(&plan.traffic.prompt),
        sigma(&plan.traffic.output)
    )
}

/// Calibrates in-process on `threads` OS threads; `progress` returning `false` cancels.
pub fn calibrate_threads(
    plan: &Plan,
    set: &MeasuredSet,
    threads: usize,
    progress: &mut dyn FnMut(CalibrationProgress) -> bool,
) -> Result<CalibrationReport, CalibrateError> {
    run_to_end(Calibrator::new(plan, set)?, threads, progress)
}

/// Drives `c` to its report on `threads` OS threads; `progress` returning `false` cancels.
pub fn run_to_end(
    mut c: Calibrator,
    threads: usize,
    progress: &mut dyn FnMut(CalibrationProgress) -> bool,
) -> Result<CalibrationReport, CalibrateError> {
    while !c.is_done() {
        let jobs = c.next_batch();
        if jobs.is_empty() {
            break;
        }
        let results = run_fit_jobs(c.problem(), &jobs, threads)?;
        c.feed(&results);
        if !progress(c.progress()) {
            return Err(CalibrateError::Cancelled);
        }
    }
    c.result().ok_or(CalibrateError::Cancelled)
}

/// [`calibrate_threads`] on the machine's threads.
pub fn calibrate(
    plan: &Plan,
    set: &MeasuredSet,
    progress: &mut dyn FnMut(CalibrationProgress) -> bool,
) -> Result<CalibrationReport, CalibrateError> {
    calibrate_threads(plan, set, crate::sim::threads::default_threads(), progress)
}
