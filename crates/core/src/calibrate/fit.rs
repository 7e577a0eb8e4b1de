//! One fit: the objective over a set of measured points, weak priors, and a
//! Nelder–Mead search over the free constants, run as a job on any thread.

use serde::{Deserialize, Serialize};

use super::problem::{clamp_theta, point_loss, CalibrationProblem, Prediction, Theta, THETA_DIMS};
use super::{FULL_FIT_EVALS, REFIT_EVALS};
use crate::sim::SimError;
use crate::tagged::Tagged;

/// What one fit job fits to.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FitTask {
    /// Every point, from a grid start; also predicts every point with the datasheet
    /// constants and with the fit.
    Full,
    /// Every point but `point`, warm-started; predicts the held-out point.
    LeaveOut {
        /// Index of the held-out point.
        point: u32,
    },
    /// Points drawn with replacement, warm-started.
    Bootstrap {
        /// Indices drawn.
        sample: Vec<u32>,
    },
    /// The points `fit`, from a grid start (they may not hold the full fit's basin);
    /// predicts the points `predict`: "fit light, predict heavy".
    Subset {
        /// Indices fitted.
        fit: Vec<u32>,
        /// Indices predicted, in this order.
        predict: Vec<u32>,
    },
}

impl<'de> Deserialize<'de> for FitTask {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut t = Tagged::read(d)?;
        Ok(match t.kind() {
            "full" => FitTask::Full,
            "leave_out" => FitTask::LeaveOut {
                point: t.field("point")?,
            },
            "bootstrap" => FitTask::Bootstrap {
                sample: t.field("sample")?,
            },
            "subset" => FitTask::Subset {
                fit: t.field("fit")?,
                predict: t.field("predict")?,
            },
            _ => return Err(t.unknown(&["full", "leave_out", "bootstrap", "subset"])),
        })
    }
}

/// One fit to run: a message to a worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FitJob {
    /// Unique id within its calibration.
    pub id: u32,
    /// What to fit to.
    pub task: FitTask,
    /// Where the search starts (ignored by [`FitTask::Full`] and [`FitTask::Subset`],
    /// which scan a grid).
    pub start: Theta,
}

/// What a fit job returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FitJobResult {
    /// The job's id.
    pub id: u32,
    /// The best constants found.
    pub theta: Theta,
    /// The loss there.
    pub loss: f64,
    /// Objective evaluations spent.
    pub evaluations: u32,
    /// Predictions of the held-out point ([`FitTask::LeaveOut`]), of the points to
    /// predict ([`FitTask::Subset`]), or of every point with the fit ([`FitTask::Full`]).
    pub predictions: Vec<Prediction>,
    /// Predictions of every point with the datasheet constants ([`FitTask::Full`] only).
    pub datasheet: Vec<Prediction>,
}

/// The objective over a multiset of points: `counts[i]` copies of point `i`.
struct Objective<'a> {
    problem: &'a CalibrationProblem,
    counts: Vec<u32>,
    evaluations: u32,
    /// OS threads one evaluation may spread its points over (1 in wasm).
    threads: usize,
    /// The values of the dimensions the fit holds fixed.
    base: Theta,
    /// The dimensions searched.
    free: Vec<usize>,
}

impl Objective<'_> {
    /// The full search-space point of the free coordinates `x`.
    fn theta_of(&self, x: &[f64]) -> Theta {
        let mut t = self.base;
        for (&k, &v) in self.free.iter().zip(x) {
            t[k] = v;
        }
        clamp_theta(t)
    }

    /// The free coordinates of `t`.
    fn coords(&self, t: &Theta) -> Vec<f64> {
        self.free.iter().map(|&k| t[k]).collect()
    }

    fn loss(&mut self, x: &[f64]) -> Result<f64, SimError> {
        self.evaluations += 1;
        let theta = self.theta_of(x);
        let c = self.problem.constants(theta);
        let used: Vec<usize> = (0..self.counts.len())
            .filter(|&i| self.counts[i] > 0)
            .collect();
        let losses = crate::sim::threads::map_in_order(&used, self.threads, |&i| {
            let p = self.problem.predict(i, &c)?;
            Ok::<f64, SimError>(point_loss(&self.problem.points[i].measured, &p))
        })?;
        // Summed in point order whatever the threads, so the loss is the same bit for bit.
        let (mut sum, mut n) = (0.0, 0.0);
        for (&i, l) in used.iter().zip(losses) {
            let k = self.counts[i] as f64;
            sum += k * l;
            n += k;
        }
        let data = if n > 0.0 { sum / n } else { 0.0 };
        Ok(data + prior_penalty(theta))
    }
}

/// Centre of the weak prior on the bandwidth share: real GPUs reach 75–90% of their
/// datasheet memory bandwidth.
pub const PRIOR_BANDWIDTH_SHARE: f64 = 0.85;
/// Spread of both priors, in log space (about ±25%).
const PRIOR_LOG_SD: f64 = 0.25;
/// Weight of the priors against the data term: enough to settle a flat valley (how
/// the empty-cache decode step splits into bandwidth and overhead, when KV reads are
/// small), far too little to move a fit the measurements pin down.
const PRIOR_WEIGHT: f64 = 1e-3;

/// The weak priors: bandwidth share near [`PRIOR_BANDWIDTH_SHARE`], compute share
/// near the plan's own (already an achievable figure).
fn prior_penalty(theta: Theta) -> f64 {
    let t = clamp_theta(theta);
    let z_bw = (t[0] - libm::log(PRIOR_BANDWIDTH_SHARE)) / PRIOR_LOG_SD;
    let z_c = t[1] / PRIOR_LOG_SD;
    PRIOR_WEIGHT * 0.5 * (z_bw * z_bw + z_c * z_c)
}

/// Initial simplex step of the search-space dimensions: shares and the floor ±`step`
/// in log space; the frontend and per-sequence times, which start at 0 more often than
/// not, one unit (a factor e on 1 ms and 1 µs).
fn step_of(k: usize, step: f64) -> f64 {
    if k >= 3 {
        step * 8.0
    } else {
        step
    }
}

/// Nelder–Mead over the free coordinates from `start` with initial steps `step`, for at
/// most `max_evals` evaluations (clamped to the box). Returns the best point and its loss.
fn nelder_mead(
    f: &mut Objective<'_>,
    start: Theta,
    step: f64,
    max_evals: u32,
) -> Result<(Theta, f64), SimError> {
    let n = f.free.len();
    let clamp = |f: &Objective<'_>, x: Vec<f64>| f.coords(&f.theta_of(&x));
    let s0 = f.coords(&clamp_theta(start));
    let mut simplex: Vec<(Vec<f64>, f64)> = Vec::with_capacity(n + 1);
    let l0 = f.loss(&s0)?;
    simplex.push((s0.clone(), l0));
    for j in 0..n {
        let mut v = s0.clone();
        v[j] += step_of(f.free[j], step);
        let v = clamp(f, v);
        let l = f.loss(&v)?;
        simplex.push((v, l));
    }
    let limit = f.evaluations + max_evals;
    while f.evaluations < limit {
        simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
        let (best, worst) = (simplex[0].1, simplex[n].1);
        if (worst - best).abs() <= 1e-5 * (1.0 + best.abs()) {
            break;
        }
        let mut centroid = vec![0.0; n];
        for (v, _) in &simplex[..n] {
            for k in 0..n {
                centroid[k] += v[k] / n as f64;
            }
        }
        let along = |f: &Objective<'_>, w: &[f64], t: f64| -> Vec<f64> {
            clamp(
                f,
                (0..n)
                    .map(|k| centroid[k] + t * (w[k] - centroid[k]))
                    .collect(),
            )
        };
        let worst_v = simplex[n].0.clone();
        let xr = along(f, &worst_v, -1.0);
        let fr = f.loss(&xr)?;
        if fr < simplex[0].1 {
            let xe = along(f, &worst_v, -2.0);
            let fe = f.loss(&xe)?;
            simplex[n] = if fe < fr { (xe, fe) } else { (xr, fr) };
        } else if fr < simplex[n - 1].1 {
            simplex[n] = (xr, fr);
        } else {
            let (xc, fc) = if fr < simplex[n].1 {
                let x = along(f, &worst_v, -0.5);
                let l = f.loss(&x)?;
                (x, l)
            } else {
                let x = along(f, &worst_v, 0.5);
                let l = f.loss(&x)?;
                (x, l)
            };
            if fc < fr.min(simplex[n].1) {
                simplex[n] = (xc, fc);
            } else {
                // Shrink towards the best vertex.
                let b = simplex[0].0.clone();
                for v in simplex.iter_mut().skip(1) {
                    let x = clamp(f, (0..n).map(|k| b[k] + 0.5 * (v.0[k] - b[k])).collect());
                    let l = f.loss(&x)?;
                    *v = (x, l);
                }
            }
        }
    }
    simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
    let (x, l) = &simplex[0];
    Ok((f.theta_of(x), *l))
}

/// Runs one fit job. Deterministic: the same problem and job give the same result
/// on every platform.
pub fn run_fit_job(problem: &CalibrationProblem, job: &FitJob) -> Result<FitJobResult, SimError> {
    run_fit_job_threads(problem, job, 1)
}

/// A coarse grid around the datasheet constants, then Nelder–Mead restarted once from
/// where it stopped (a fresh simplex escapes the premature collapse a noisy objective
/// can cause).
fn fit_from_grid(obj: &mut Objective<'_>, t0: Theta) -> Result<(Theta, f64), SimError> {
    // Shares ×0.5, ×0.8, ×1.1 and floors ×0.8, ×1.25, ×2; the frontend and
    // per-sequence times at the plan's own.
    let mut best = (t0, obj.loss(&obj.coords(&t0))?);
    for a in [0.5f64, 0.8, 1.1] {
        for b in [0.5f64, 0.8, 1.1] {
            for c in [0.8f64, 1.25, 2.0] {
                let mut t = t0;
                t[0] += libm::log(a);
                t[1] += libm::log(b);
                t[2] += libm::log(c);
                let t = clamp_theta(t);
                let l = obj.loss(&obj.coords(&t))?;
                if l < best.1 {
                    best = (t, l);
                }
            }
        }
    }
    let budget = full_budget(obj).saturating_sub(obj.evaluations);
    let (t1, _) = nelder_mead(obj, best.0, 0.15, budget * 2 / 3)?;
    let budget = full_budget(obj).saturating_sub(obj.evaluations);
    nelder_mead(obj, t1, 0.05, budget)
}

/// Evaluations a fit from the grid may spend: [`FULL_FIT_EVALS`] for the three
/// roofline constants, a third more per further constant freed.
fn full_budget(obj: &Objective<'_>) -> u32 {
    FULL_FIT_EVALS + (obj.free.len() as u32).saturating_sub(3) * FULL_FIT_EVALS / 3
}

/// [`run_fit_job`] with each evaluation's points spread over `threads` OS threads (the
/// result does not depend on it; wasm always uses one).
pub fn run_fit_job_threads(
    problem: &CalibrationProblem,
    job: &FitJob,
    threads: usize,
) -> Result<FitJobResult, SimError> {
    let n = problem.points.len();
    let mut counts = vec![1u32; n];
    match &job.task {
        FitTask::Full => {}
        FitTask::LeaveOut { point } => {
            if let Some(c) = counts.get_mut(*point as usize) {
                *c = 0;
            }
        }
        FitTask::Bootstrap { sample } | FitTask::Subset { fit: sample, .. } => {
            counts = vec![0; n];
            for &i in sample {
                if let Some(c) = counts.get_mut(i as usize) {
                    *c += 1;
                }
            }
        }
    }
    let t0 = problem.theta(&problem.datasheet());
    let mut obj = Objective {
        problem,
        counts,
        evaluations: 0,
        threads: threads.max(1),
        base: t0,
        free: problem.terms.free_dims(),
    };
    let (theta, loss) = match job.task {
        FitTask::Full | FitTask::Subset { .. } => fit_from_grid(&mut obj, t0)?,
        // A refit starts from the full fit with a simplex wide enough (±15%) to leave
        // its basin when the held-out point was what held it there, then restarts small.
        _ => {
            let budget = REFIT_EVALS + (obj.free.len() as u32).saturating_sub(3) * REFIT_EVALS / 3;
            let (t1, _) = nelder_mead(&mut obj, job.start, 0.15, budget * 2 / 3)?;
            let left = budget.saturating_sub(obj.evaluations);
            nelder_mead(&mut obj, t1, 0.05, left)?
        }
    };
    debug_assert_eq!(theta.len(), THETA_DIMS);
    let fitted = problem.constants(theta);
    let (predictions, datasheet) = match &job.task {
        FitTask::Full => (
            problem.predict_all(&fitted)?,
            problem.predict_all(&problem.datasheet())?,
        ),
        FitTask::LeaveOut { point } => (vec![problem.predict(*point as usize, &fitted)?], vec![]),
        FitTask::Subset { predict, .. } => (
            predict
                .iter()
                .map(|&i| problem.predict(i as usize, &fitted))
                .collect::<Result<Vec<_>, _>>()?,
            vec![],
        ),
        FitTask::Bootstrap { .. } => (vec![], vec![]),
    };
    Ok(FitJobResult {
        id: job.id,
        theta,
        loss,
        evaluations: obj.evaluations,
        predictions,
        datasheet,
    })
}

/// Runs fit jobs on `threads` OS threads (1 = the calling thread), results in job order.
pub fn run_fit_jobs(
    problem: &CalibrationProblem,
    jobs: &[FitJob],
    threads: usize,
) -> Result<Vec<FitJobResult>, SimError> {
    let threads = threads.clamp(1, crate::sim::threads::MAX_THREADS);
    // Fewer jobs than threads (the full fit runs alone): spread each job's points.
    if jobs.len() < threads || threads == 1 {
        let per_job = threads / jobs.len().max(1);
        return jobs
            .iter()
            .map(|j| run_fit_job_threads(problem, j, per_job))
            .collect();
    }
    // Jobs interleaved over threads: refits cost about the same, the full fit runs alone.
    crate::sim::threads::map_in_order(jobs, threads, |j| run_fit_job(problem, j))
}
