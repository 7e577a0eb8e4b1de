//! The knob sweep: a goodput search per cell of a `max_num_seqs` × token-budget grid.
//!
//! Each cell is an independent [`GoodputSearch`] with the plan's engine settings
//! overridden; the sweep interleaves their batches, so one batch to the workers holds
//! the next step of every cell that is ready. A budget of 0 means chunked prefill off.
//! Each axis holds 1 ..= [`MAX_SWEEP_VALUES`] distinct values, the limit
//! [`Plan::validate`] applies to the plan's lists.
//! Cells run `min(run.replications, SWEEP_MAX_REPLICATIONS)` replications per rate
//! and no latency detail, to keep a 6 × 6 sweep fast; the best cell is the highest
//! goodput (ties go to the earlier cell in grid order: fewer sequences, smaller budget).

use super::{
    check_work, default_threads, launch_flags, GoodputResult, GoodputSearch, Job, JobResult, Knobs,
    LaunchFlags, PerClass, Progress, SearchError, SearchStatus, MAX_RATES,
};
use crate::format::rps;
use crate::plan::{Plan, MAX_SWEEP_VALUES};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Most replications per rate in a sweep cell.
pub const SWEEP_MAX_REPLICATIONS: u32 = 5;

/// One cell of the grid.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SweepCell {
    /// `max_num_seqs` of the cell.
    pub max_num_seqs: u32,
    /// Token budget of the cell; 0 = chunked prefill off [tokens].
    pub batched_tokens: u32,
    /// The engine settings simulated.
    pub knobs: Knobs,
    /// Goodput of the cell [requests/s].
    pub goodput_rps: f64,
    /// Its 95% range [requests/s].
    pub goodput_range_rps: [f64; 2],
    /// How the cell's search ended.
    pub status: SearchStatus,
}

/// The answer of a knob sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepResult {
    /// `max_num_seqs` axis, ascending.
    pub max_num_seqs: Vec<u32>,
    /// Token-budget axis, ascending, 0 (chunking off) last.
    pub batched_tokens: Vec<u32>,
    /// Cells in row-major order: `cells[i * batched_tokens.len() + j]`.
    pub cells: Vec<SweepCell>,
    /// Index of the best cell.
    pub best: usize,
    /// Launch flags of the best cell.
    pub flags: LaunchFlags,
    /// Replications per rate in each cell.
    pub replications: u32,
    /// Simulations run.
    pub jobs_run: u32,
    /// Jobs answered without a simulation of their own: the same simulation ran in a
    /// cell with a smaller `max_num_seqs`, which it never reached ([`KnobSweep`]).
    #[serde(default)]
    pub jobs_reused: u32,
}

impl SweepResult {
    /// Every job of the sweep, simulated or reused: what its progress counts.
    pub fn jobs(&self) -> u32 {
        self.jobs_run + self.jobs_reused
    }
}

/// A sweep in progress: the grid and the cells finished so far.
///
/// A finished cell is final: its goodput and range are exactly what
/// [`KnobSweep::result`] will report for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartialSweep {
    /// `max_num_seqs` axis, ascending.
    pub max_num_seqs: Vec<u32>,
    /// Token-budget axis, ascending, 0 (chunking off) last.
    pub batched_tokens: Vec<u32>,
    /// Cells in row-major order, as in [`SweepResult::cells`]; `None` = still searching.
    pub cells: Vec<Option<SweepCell>>,
}

impl PartialSweep {
    /// Cells finished so far.
    pub fn finished(&self) -> usize {
        self.cells.iter().flatten().count()
    }
}

impl SweepResult {
    /// The best cell.
    pub fn best_cell(&self) -> &SweepCell {
        &self.cells[self.best.min(self.cells.len().saturating_sub(1))]
    }

    /// The cell with exactly the settings `knobs`, if the grid has one.
    pub fn cell_at(&self, knobs: &Knobs) -> Option<&SweepCell> {
        self.cells.iter().find(|c| c.knobs == *knobs)
    }

    /// Why the goodput search of the plan's own settings (`search`, which ran
    /// `search.replications` per rate) and the sweep's cell at the same settings (which
    /// ran [`SweepResult::replications`], at most [`SWEEP_MAX_REPLICATIONS`]) may show
    /// different goodputs, with both numbers and whether their 95% ranges overlap;
    /// `None` when the two ran the same replications (they then agree).
    pub fn differs_from(&self, search: &GoodputResult) -> Option<String> {
        if search.replications == self.replications {
            return None;
        }
        let per_rate = |n: u32| {
            if n == 1 {
                "1 replication per rate".to_string()
            } else {
                format!("{n} replications per rate")
            }
        };
        let Some(cell) = self.cell_at(&search.knobs) else {
            return Some(format!(
                "Your settings are not on the grid. The cells ran {}; the card's {} req/s \
                 comes from {}.",
                per_rate(self.replications),
                rps(search.goodput_rps),
                search.replications
            ));
        };
        let [a0, a1] = cell.goodput_range_rps;
        let [b0, b1] = search.goodput_range_rps;
        let overlap = if a0 <= b1 && b0 <= a1 {
            "their 95% ranges overlap"
        } else {
            "their 95% ranges do not overlap"
        };
        Some(format!(
            "The cell at your settings shows {} req/s from {}; the card's {} comes \
             from {} ({}–{} against {}–{}: {overlap}).",
            rps(cell.goodput_rps),
            per_rate(self.replications),
            rps(search.goodput_rps),
            search.replications,
            rps(a0),
            rps(a1),
            rps(b0),
            rps(b1)
        ))
    }
}

/// The note beside a plan planned at the sweep's best: "Planned at the sweep's best: 32
/// sequences × 256 tokens" (or ", chunked prefill off").
pub fn planned_at_best_text(k: &Knobs) -> String {
    if k.chunked_prefill {
        format!(
            "Planned at the sweep's best: {} sequences × {} tokens",
            k.max_num_seqs, k.max_num_batched_tokens
        )
    } else {
        format!(
            "Planned at the sweep's best: {} sequences, chunked prefill off",
            k.max_num_seqs
        )
    }
}

/// What makes two sweep jobs the same simulation but for their `max_num_seqs`: the rate
/// (its bits), the seed, the token budget and chunking.
type SameRun = (u64, u64, u32, bool);

fn same_run(j: &Job) -> SameRun {
    (
        j.rate_rps.to_bits(),
        j.seed,
        j.knobs.max_num_batched_tokens,
        j.knobs.chunked_prefill,
    )
}

/// A finished run of the sweep: the cap it ran under, its peak of running sequences,
/// its attainment and its classes' attainments.
type FinishedRun = (u32, u32, f64, PerClass<f64>);

/// The knob-sweep state machine; same protocol as [`GoodputSearch`].
///
/// **Reuse.** A run in which fewer sequences than `max_num_seqs` were ever running at once
/// never had an admission held back by that cap, so it is the same, step for step, under
/// any cap above its peak ([`JobResult::peak_running`]). Cells that differ only in
/// `max_num_seqs` often try the same rates (their capacity guesses meet where KV memory or
/// compute, not the cap, binds), so of the jobs that are the same run but for the cap,
/// the sweep sends the one with the smallest cap and holds the others; when it returns,
/// each held job whose cap is above its peak takes its result, and the rest are sent.
/// A finished run answers later jobs the same way. The answers are those of simulating
/// every job.
#[derive(Debug, Clone)]
pub struct KnobSweep {
    plan: Plan,
    seqs: Vec<u32>,
    budgets: Vec<u32>,
    cells: Vec<GoodputSearch>,
    owner: BTreeMap<u32, usize>,
    next_id: u32,
    replications: u32,
    /// Finished runs: their cap, peak, attainment and classes' attainments.
    finished: BTreeMap<SameRun, Vec<FinishedRun>>,
    /// Jobs with the workers: their run and cap, by id.
    sent: BTreeMap<u32, (SameRun, u32)>,
    /// The job with the workers for each run.
    sent_for: BTreeMap<SameRun, u32>,
    /// Jobs held until the job with the same run returns, by that job's id.
    held: BTreeMap<u32, Vec<Job>>,
    /// Held jobs to send after all: the run they waited for reached its cap.
    unheld: Vec<Job>,
    /// Jobs answered by reuse.
    reused: u32,
}

fn axis(values: &[u32], field: &'static str, zero_last: bool) -> Result<Vec<u32>, SearchError> {
    let mut v = values.to_vec();
    v.sort_unstable_by_key(|&x| {
        if zero_last && x == 0 {
            u64::MAX
        } else {
            x as u64
        }
    });
    v.dedup();
    if v.is_empty() || v.len() > MAX_SWEEP_VALUES {
        return Err(SearchError::BadGrid {
            field,
            len: v.len(),
            max: MAX_SWEEP_VALUES,
        });
    }
    Ok(v)
}

impl KnobSweep {
    /// A sweep over `plan.run.sweep_max_num_seqs` × `plan.run.sweep_batched_tokens`.
    pub fn new(plan: &Plan) -> Result<KnobSweep, SearchError> {
        let seqs = axis(
            &plan.run.sweep_max_num_seqs,
            "run.sweep_max_num_seqs",
            false,
        )?;
        if seqs.contains(&0) {
            return Err(SearchError::BadGrid {
                field: "run.sweep_max_num_seqs",
                len: seqs.len(),
                max: MAX_SWEEP_VALUES,
            });
        }
        let budgets = axis(
            &plan.run.sweep_batched_tokens,
            "run.sweep_batched_tokens",
            true,
        )?;
        let replications = plan.run.replications.clamp(1, SWEEP_MAX_REPLICATIONS);
        let n_cells = (seqs.len() * budgets.len()) as u64;
        check_work(
            "knob sweep",
            true,
            n_cells * MAX_RATES as u64 * u64::from(replications),
            plan.requests_per_run(),
        )?;
        let whole = plan.prompt_cap().saturating_add(plan.output_cap()).max(1);
        let mut cells = Vec::with_capacity(n_cells as usize);
        for &n in &seqs {
            for &b in &budgets {
                let knobs = Knobs {
                    max_num_seqs: n,
                    max_num_batched_tokens: if b == 0 { whole } else { b },
                    chunked_prefill: b != 0,
                };
                let idx = cells.len() as u32;
                cells.push(GoodputSearch::for_cell(
                    plan,
                    knobs,
                    idx,
                    replications,
                    false,
                )?);
            }
        }
        Ok(KnobSweep {
            plan: plan.clone(),
            seqs,
            budgets,
            cells,
            owner: BTreeMap::new(),
            next_id: 0,
            replications,
            finished: BTreeMap::new(),
            sent: BTreeMap::new(),
            sent_for: BTreeMap::new(),
            held: BTreeMap::new(),
            unheld: Vec::new(),
            reused: 0,
        })
    }

    /// Cells in the grid.
    pub fn cell_count(&self) -> usize {
        self.cells.len()
    }

    /// The `max_num_seqs` axis, ascending.
    pub fn max_num_seqs_axis(&self) -> &[u32] {
        &self.seqs
    }

    /// The token-budget axis, ascending, 0 (chunking off) last [tokens].
    pub fn batched_tokens_axis(&self) -> &[u32] {
        &self.budgets
    }

    /// The cell at row-major index `i`, once its search has finished.
    fn finished_cell(&self, i: usize) -> Option<(SweepCell, u32)> {
        let r = self.cells.get(i)?.result()?;
        let cols = self.budgets.len().max(1);
        let cell = SweepCell {
            max_num_seqs: self.seqs.get(i / cols).copied()?,
            batched_tokens: self.budgets.get(i % cols).copied()?,
            knobs: r.knobs,
            goodput_rps: r.goodput_rps,
            goodput_range_rps: r.goodput_range_rps,
            status: r.status,
        };
        Some((cell, r.jobs_run))
    }

    /// The cells finished so far, in row-major order (`None` = still searching). Each
    /// finished cell is exactly what [`KnobSweep::result`] will report for it.
    pub fn finished_cells(&self) -> Vec<Option<SweepCell>> {
        (0..self.cells.len())
            .map(|i| self.finished_cell(i).map(|(c, _)| c))
            .collect()
    }

    /// The grid and the cells finished so far: what a page draws while the sweep runs.
    pub fn partial(&self) -> PartialSweep {
        PartialSweep {
            max_num_seqs: self.seqs.clone(),
            batched_tokens: self.budgets.clone(),
            cells: self.finished_cells(),
        }
    }

    /// The next step of every cell that is ready, less the jobs answered or held by reuse
    /// (see [`KnobSweep`]); empty when all are waiting or done.
    pub fn next_batch(&mut self) -> Vec<Job> {
        let mut out = Vec::new();
        loop {
            let mut jobs = std::mem::take(&mut self.unheld);
            for (i, c) in self.cells.iter_mut().enumerate() {
                let batch = c.issue(&mut self.next_id);
                for j in &batch {
                    self.owner.insert(j.id, i);
                }
                jobs.extend(batch);
            }
            if jobs.is_empty() {
                return out;
            }
            // The smallest cap of a run goes out; the others wait for it.
            jobs.sort_by_key(|j| (j.knobs.max_num_seqs, j.id));
            let mut answered = Vec::new();
            for j in jobs {
                let run = same_run(&j);
                let cap = j.knobs.max_num_seqs;
                if j.detail {
                    self.send(j, run, &mut out);
                } else if let Some(r) = self.answer_from_finished(&run, &j) {
                    answered.push(r);
                } else if let Some(&first) = self.sent_for.get(&run) {
                    self.held.entry(first).or_default().push(j);
                } else {
                    self.sent_for.insert(run, j.id);
                    self.sent.insert(j.id, (run, cap));
                    self.send(j, run, &mut out);
                }
            }
            if answered.is_empty() {
                return out;
            }
            // Cells answered at once may be ready for their next step.
            self.reused += answered.len() as u32;
            self.feed_cells(&answered);
        }
    }

    fn send(&mut self, j: Job, run: SameRun, out: &mut Vec<Job>) {
        self.sent.entry(j.id).or_insert((run, j.knobs.max_num_seqs));
        out.push(j);
    }

    /// The result of `j` from a finished run of the same simulation, if one ran below its
    /// cap and `j`'s cap is above that run's peak.
    fn answer_from_finished(&self, run: &SameRun, j: &Job) -> Option<JobResult> {
        let cap = j.knobs.max_num_seqs;
        self.finished
            .get(run)?
            .iter()
            .find(|&&(ran_cap, peak, _, _)| peak < ran_cap && peak < cap)
            .map(|&(_, peak, attainment, classes)| JobResult {
                classes,
                id: j.id,
                attainment,
                detail: None,
                peak_running: peak,
            })
    }

    /// Takes results back, matched by id; unknown or repeated ids are ignored.
    pub fn feed(&mut self, results: &[JobResult]) {
        let mut answered = Vec::new();
        for r in results {
            if !self.owner.contains_key(&r.id) {
                continue;
            }
            let Some((run, cap)) = self.sent.remove(&r.id) else {
                continue;
            };
            if self.sent_for.get(&run) == Some(&r.id) {
                self.sent_for.remove(&run);
            }
            if r.detail.is_some() {
                continue;
            }
            self.finished.entry(run).or_default().push((
                cap,
                r.peak_running,
                r.attainment,
                r.classes,
            ));
            for h in self.held.remove(&r.id).unwrap_or_default() {
                if r.peak_running < cap && r.peak_running < h.knobs.max_num_seqs {
                    answered.push(JobResult {
                        classes: r.classes,
                        id: h.id,
                        attainment: r.attainment,
                        detail: None,
                        peak_running: r.peak_running,
                    });
                } else {
                    self.unheld.push(h);
                }
            }
        }
        self.reused += answered.len() as u32;
        self.feed_cells(results);
        self.feed_cells(&answered);
    }

    /// Hands results to their cells.
    fn feed_cells(&mut self, results: &[JobResult]) {
        let mut per_cell: BTreeMap<usize, Vec<JobResult>> = BTreeMap::new();
        for r in results {
            if let Some(cell) = self.owner.remove(&r.id) {
                per_cell.entry(cell).or_default().push(*r);
            }
        }
        for (cell, rs) in per_cell {
            self.cells[cell].feed(&rs);
        }
    }

    /// Whether every cell has finished.
    pub fn is_done(&self) -> bool {
        self.cells.iter().all(GoodputSearch::is_done)
    }

    /// Simulations done and the expected total, over all cells.
    pub fn progress(&self) -> Progress {
        self.cells
            .iter()
            .fold(Progress { done: 0, total: 0 }, |acc, c| {
                let p = c.progress();
                Progress {
                    done: acc.done + p.done,
                    total: acc.total + p.total,
                }
            })
    }

    /// The grid and the best cell, once done.
    pub fn result(&self) -> Option<SweepResult> {
        let mut cells = Vec::with_capacity(self.cells.len());
        let mut jobs_run = 0;
        for i in 0..self.cells.len() {
            let (cell, jobs) = self.finished_cell(i)?;
            jobs_run += jobs;
            cells.push(cell);
        }
        let mut best = 0;
        for (i, c) in cells.iter().enumerate() {
            if c.goodput_rps > cells[best].goodput_rps {
                best = i;
            }
        }
        let flags = launch_flags(&self.plan, &cells[best].knobs);
        Some(SweepResult {
            max_num_seqs: self.seqs.clone(),
            batched_tokens: self.budgets.clone(),
            cells,
            best,
            flags,
            replications: self.replications,
            jobs_run: jobs_run - self.reused.min(jobs_run),
            jobs_reused: self.reused.min(jobs_run),
        })
    }
}

/// Runs the knob sweep in-process; `progress` returning `false` cancels.
pub fn sweep_knobs(
    plan: &Plan,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<SweepResult, SearchError> {
    sweep_knobs_threads(plan, default_threads(), progress)
}

/// [`sweep_knobs`] on a given number of threads; the result does not depend on it.
pub fn sweep_knobs_threads(
    plan: &Plan,
    threads: usize,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<SweepResult, SearchError> {
    super::drive(plan, KnobSweep::new(plan)?, threads, progress)
}

impl super::Driver for KnobSweep {
    type Output = SweepResult;
    fn next_batch(&mut self) -> Vec<Job> {
        KnobSweep::next_batch(self)
    }
    fn feed(&mut self, results: &[JobResult]) {
        KnobSweep::feed(self, results)
    }
    fn is_done(&self) -> bool {
        KnobSweep::is_done(self)
    }
    fn progress(&self) -> Progress {
        KnobSweep::progress(self)
    }
    fn result(&self) -> Option<SweepResult> {
        KnobSweep::result(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::LengthDist;
    use crate::search::{run_jobs, PEAK_UNKNOWN};

    fn small_sweep_plan() -> Plan {
        let mut p = Plan::default();
        p.run.num_requests = 300;
        p.run.warmup_requests = 30;
        p.run.replications = 2;
        p.run.sweep_max_num_seqs = vec![128, 16];
        p.run.sweep_batched_tokens = vec![0, 512];
        p
    }

    #[test]
    fn finished_cells_are_final_and_match_the_result() {
        let plan = small_sweep_plan();
        let mut s = KnobSweep::new(&plan).expect("sweep");
        let start = s.partial();
        assert_eq!(start.max_num_seqs, vec![16, 128]);
        assert_eq!(start.batched_tokens, vec![512, 0]);
        assert_eq!(start.cells.len(), 4);
        assert_eq!(start.finished(), 0);

        // Feed one result at a time and keep every snapshot.
        let mut snapshots = Vec::new();
        while !s.is_done() {
            let jobs = s.next_batch();
            assert!(!jobs.is_empty(), "a sweep that is not done hands out work");
            for r in run_jobs(&plan, &jobs, 1).expect("sim") {
                s.feed(&[r]);
                snapshots.push(s.finished_cells());
            }
        }
        let done = s.result().expect("done");
        assert!(
            snapshots.iter().any(|c| {
                let n = c.iter().flatten().count();
                n > 0 && n < c.len()
            }),
            "some snapshot shows a partly finished grid"
        );
        for snap in &snapshots {
            for (cell, final_cell) in snap.iter().zip(&done.cells) {
                if let Some(c) = cell {
                    assert_eq!(c, final_cell);
                    assert_eq!(c.goodput_rps.to_bits(), final_cell.goodput_rps.to_bits());
                }
            }
        }
        // A finished cell never goes back to running.
        for w in snapshots.windows(2) {
            for (a, b) in w[0].iter().zip(&w[1]) {
                assert!(a.is_none() || a == b);
            }
        }
        let end = s.partial();
        assert_eq!(end.finished(), 4);
        let cells: Vec<SweepCell> = end.cells.iter().flatten().copied().collect();
        assert_eq!(cells, done.cells);
        // The in-process driver (whole batches at once) reports the same cells.
        let batched = sweep_knobs_threads(&plan, 2, &mut |_| true).expect("sweep");
        assert_eq!(batched.cells, done.cells);
    }

    #[test]
    fn unknown_results_leave_the_partial_grid_empty() {
        let plan = small_sweep_plan();
        let mut s = KnobSweep::new(&plan).expect("sweep");
        let jobs = s.next_batch();
        s.feed(&[JobResult {
            classes: Default::default(),
            id: u32::MAX,
            attainment: 1.0,
            detail: None,
            peak_running: PEAK_UNKNOWN,
        }]);
        assert_eq!(s.partial().finished(), 0);
        assert!(jobs.iter().all(|j| (j.cell as usize) < s.cell_count()));
        assert_eq!(s.max_num_seqs_axis(), &[16, 128]);
        assert_eq!(s.batched_tokens_axis(), &[512, 0]);
    }

    /// Caps far apart: 1 to 3 sequences bind at the rates tried, 512 and 1,024 never do.
    /// Long prompts and short outputs make the compute bound every cell's first guess, so
    /// the cells of a column try the same rates: jobs that are the same run but for the
    /// cap, some answered by reuse and some sent after all.
    fn reuse_plan() -> Plan {
        let mut p = Plan::default();
        p.run.num_requests = 300;
        p.run.warmup_requests = 30;
        p.run.replications = 2;
        p.run.sweep_max_num_seqs = vec![1, 2, 3, 512, 1024];
        p.run.sweep_batched_tokens = vec![512, 0];
        p.traffic.prompt.dist = LengthDist::LogNormal {
            median: 3000.0,
            sigma: 0.2,
        };
        p.traffic.output.dist = LengthDist::LogNormal {
            median: 8.0,
            sigma: 0.3,
        };
        p
    }

    #[test]
    fn reused_jobs_answer_as_their_own_simulations_would() {
        let plan = reuse_plan();
        let swept = sweep_knobs_threads(&plan, 1, &mut |_| true).expect("sweep");
        assert!(swept.jobs_reused > 0, "the plan gives jobs to reuse");
        // Every cell searched on its own, simulating every job.
        let mut jobs = 0;
        for (i, cell) in swept.cells.iter().enumerate() {
            let search =
                GoodputSearch::for_cell(&plan, cell.knobs, i as u32, swept.replications, false)
                    .expect("cell");
            let own = crate::search::drive(&plan, search, 1, &mut |_| true).expect("search");
            let what = format!("cell {} × {}", cell.max_num_seqs, cell.batched_tokens);
            assert_eq!(
                own.goodput_rps.to_bits(),
                cell.goodput_rps.to_bits(),
                "{what}"
            );
            assert_eq!(
                own.goodput_range_rps.map(f64::to_bits),
                cell.goodput_range_rps.map(f64::to_bits),
                "{what}"
            );
            assert_eq!(own.status, cell.status, "{what}");
            jobs += own.jobs_run;
        }
        assert_eq!(swept.jobs(), jobs, "every job counted once");
        // Whole batches on two threads, and one result at a time, answer the same.
        assert_eq!(
            sweep_knobs_threads(&plan, 2, &mut |_| true)
                .expect("sweep")
                .cells,
            swept.cells
        );
    }
}
