//! The GPU × layout shootout: the same plan on every GPU preset and layout asked for
//! (tensor-parallel degrees on one node, and pipeline stages across nodes), each option
//! sized by its own goodput search, ranked by the monthly cost of the fleet that meets
//! the SLO at the peak (cost per compliant request breaks ties).
//!
//! An option is the base plan with a GPU preset applied ([`crate::presets::GpuPreset::apply`])
//! and `hardware.tp_degree` and `hardware.pp_degree` set: exactly what
//! `goodput plan --gpu G --tp N --pp P` runs. Its row
//! is read from the [`PlanReport`] of that plan, built the way
//! [`crate::report::evaluate_plan_with`] builds it without the knob sweep (the goodput
//! search, then one simulation at the planned rate), so the two agree to the last digit.
//!
//! An option whose weights do not fit, or whose KV cache cannot hold one request of
//! maximum length, is not simulated: its row says why and how many GPUs it would need.
//!
//! [`Shootout`] is a job state machine like [`GoodputSearch`]: it hands out batches of
//! jobs, each for one option's plan, and takes their results back in any order, so the
//! browser's workers and the command line's threads get the same answer.

use crate::fleet::memory_fit;
pub use crate::plan::comparison::{
    experts_of, speculation_of, vendor_carry_words, ConstantsSource, Layout, ShootoutRecord,
    ShootoutResult, ShootoutRow, ShootoutSpec, DEFAULT_GPUS, DEFAULT_NODES, MAX_NODES, MAX_OPTIONS,
    TP_DEGREES,
};
use crate::plan::Plan;
use crate::presets;
use crate::report::PlanReport;
use crate::search::{run_jobs, GoodputSearch, Job, JobResult, Progress, SearchError};

/// Why a shootout cannot run. Each message says what to change.
#[derive(Debug, Clone, PartialEq)]
pub enum ShootoutError {
    /// The GPU list is empty.
    NoGpus,
    /// A GPU id is not a preset.
    UnknownGpu(String),
    /// The TP list is empty.
    NoTpDegrees,
    /// A TP degree is not one of [`TP_DEGREES`].
    BadTpDegree(u32),
    /// More than [`MAX_OPTIONS`] options.
    TooManyOptions(usize),
    /// A node count outside 1 to [`MAX_NODES`].
    BadNodes(u32),
    /// With and without speculation asked for, but the plan does not draft and no
    /// calibration measured a draft.
    NoSpeculation,
    /// A simulation failed, or the caller cancelled.
    Search(SearchError),
}

fn known_gpus() -> String {
    presets::GPUS
        .iter()
        .map(|g| g.id)
        .collect::<Vec<_>>()
        .join(", ")
}

impl std::fmt::Display for ShootoutError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ShootoutError::NoGpus => write!(f, "no GPU to compare: give at least one of {}", known_gpus()),
            ShootoutError::UnknownGpu(id) => {
                write!(f, "unknown GPU '{id}'; known: {}", known_gpus())
            }
            ShootoutError::NoTpDegrees => {
                write!(f, "no tensor-parallel degree to compare: give some of 1, 2, 4, 8")
            }
            ShootoutError::BadTpDegree(tp) => write!(
                f,
                "tensor-parallel degree {tp} is not offered: use 1, 2, 4 or 8 (attention heads split evenly only over a power of two)"
            ),
            ShootoutError::TooManyOptions(n) => write!(
                f,
                "{n} options (GPUs × layouts, twice with and without speculation) is more than the {MAX_OPTIONS} one comparison runs; list fewer GPUs, degrees or nodes"
            ),
            ShootoutError::BadNodes(n) => write!(
                f,
                "{n} nodes per replica: compare replicas of 1 to {MAX_NODES} nodes"
            ),
            ShootoutError::NoSpeculation => write!(
                f,
                "with and without speculation: the plan does not draft and its calibration measured no draft; set the speculative draft and its acceptance first (--spec-draft-tokens, --spec-acceptance)"
            ),
            ShootoutError::Search(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ShootoutError {}

impl From<SearchError> for ShootoutError {
    fn from(e: SearchError) -> Self {
        ShootoutError::Search(e)
    }
}

/// Options a comparison runs: every GPU × layout, twice with and without speculation.
fn option_count(gpus: usize, layouts: usize, speculation: bool) -> usize {
    gpus * layouts * if speculation { 2 } else { 1 }
}

impl ShootoutSpec {
    /// Options this comparison runs for a model of `experts` routed experts (before its
    /// lists are checked).
    pub fn option_count(&self, experts: u32) -> usize {
        option_count(
            self.gpus.len(),
            self.layouts(experts).len(),
            self.speculation,
        )
    }

    /// Checks the lists for a model of `experts` routed experts: known GPUs, degrees
    /// from [`TP_DEGREES`], not too many options. Duplicates are dropped (first one kept).
    pub fn checked(&self, experts: u32) -> Result<ShootoutSpec, ShootoutError> {
        let mut gpus: Vec<String> = Vec::new();
        for g in &self.gpus {
            let g = g.trim();
            if presets::gpu(g).is_none() {
                return Err(ShootoutError::UnknownGpu(g.to_string()));
            }
            if !gpus.iter().any(|x| x == g) {
                gpus.push(g.to_string());
            }
        }
        if gpus.is_empty() {
            return Err(ShootoutError::NoGpus);
        }
        let mut tps: Vec<u32> = Vec::new();
        for &tp in &self.tp_degrees {
            if !TP_DEGREES.contains(&tp) {
                return Err(ShootoutError::BadTpDegree(tp));
            }
            if !tps.contains(&tp) {
                tps.push(tp);
            }
        }
        if tps.is_empty() {
            return Err(ShootoutError::NoTpDegrees);
        }
        if self.max_nodes == 0 || self.max_nodes > MAX_NODES {
            return Err(ShootoutError::BadNodes(self.max_nodes));
        }
        let spec = ShootoutSpec {
            gpus,
            tp_degrees: tps,
            speculation: self.speculation,
            max_nodes: self.max_nodes,
        };
        let n = spec.option_count(experts);
        if n > MAX_OPTIONS {
            return Err(ShootoutError::TooManyOptions(n));
        }
        Ok(spec)
    }
}

/// The speculation settings each GPU and TP degree runs with: the plan's own, then, with
/// [`ShootoutSpec::speculation`], the other one (off when the plan drafts, else its
/// calibration's measured draft).
fn speculation_variants(
    base: &Plan,
    spec: &ShootoutSpec,
) -> Result<Vec<(u32, f64)>, ShootoutError> {
    let own = speculation_of(base);
    if !spec.speculation {
        return Ok(vec![own]);
    }
    let other = if own.0 > 0 {
        (0, 0.0)
    } else {
        base.calibration
            .as_ref()
            .and_then(crate::calibrate::measured_spec_settings)
            .ok_or(ShootoutError::NoSpeculation)?
    };
    Ok(vec![own, other])
}

/// The plan of one option: `base` with the GPU preset `gpu` applied and the layout
/// set. `None` for an unknown GPU id.
pub fn option_plan(base: &Plan, gpu: &str, layout: Layout) -> Option<Plan> {
    let preset = presets::gpu(gpu)?;
    let mut plan = base.clone();
    preset.apply(&mut plan);
    plan.hardware.tp_degree = layout.tp;
    plan.hardware.pp_degree = layout.pp;
    plan.hardware.ep_degree = layout.ep;
    Some(plan)
}

impl ShootoutRow {
    /// Whether the row is ranked: it fits and its fleet could be sized.
    pub fn ranked(&self) -> bool {
        self.fits && self.cost_per_compliant_request_usd.is_some()
    }

    /// The row of an option from its plan and report (`report.planned_load` filled when
    /// it could run).
    pub fn from_report(gpu: &str, plan: &Plan, report: &PlanReport, chosen: bool) -> ShootoutRow {
        let m = &report.memory;
        let fits = m.weights_fit && m.holds_max_request;
        let cap = report.capacity.as_ref();
        let pl = report.planned_load.as_ref();
        let tp = plan.hardware.tp_degree;
        let gpus = plan.hardware.gpus_per_replica();
        // No rate meets the SLO: the search's own reason says why (one request alone
        // misses TPOT, or single requests miss it), which the fleet's error cannot.
        let no_rate = report
            .warnings
            .iter()
            .find(|w| w.id == "search_not_converged" && report.goodput.goodput_rps == 0.0);
        let reason = if !fits {
            m.reason.clone()
        } else if let Some(w) = no_rate {
            Some(w.message.clone())
        } else {
            report.capacity_error.as_ref().map(|e| e.to_string())
        };
        ShootoutRow {
            gpu: gpu.to_string(),
            gpu_name: presets::gpu(gpu).map_or_else(|| gpu.to_string(), |g| g.name.to_string()),
            tp,
            pp: plan.hardware.pp_degree.max(1),
            ep: plan.hardware.ep_degree.max(1),
            fits,
            reason,
            goodput_rps: report.goodput.goodput_rps,
            replicas_total: cap.map_or(0, |c| c.replicas_total),
            gpus_total: cap.map_or(0, |c| c.gpus_total),
            cost_per_hour_usd: cap.map(|c| c.cost_per_hour_usd),
            cost_per_month_usd: cap.map(|c| c.cost_per_month_usd),
            cost_per_compliant_request_usd: cap.map(|c| c.cost_per_compliant_request_usd),
            ttft_p99_s: pl.map(|p| p.detail.ttft_p99_s),
            tpot_p99_s: pl.map(|p| p.detail.tpot_p99_s),
            output_tokens_per_s_per_gpu: pl.map(|p| p.detail.output_tokens_per_s / gpus as f64),
            kv_capacity_tokens: m.kv_capacity_tokens,
            gpus_needed: m.gpus_needed,
            chosen,
            constants: ConstantsSource::of(plan),
            spec_draft_tokens: speculation_of(plan).0,
            spec_acceptance: speculation_of(plan).1,
            comm_share: comm_share_of(plan),
            note: None,
        }
    }

    /// The row of an option that was not simulated: it does not fit, or its plan is
    /// invalid (`why`).
    fn not_run(gpu: &str, plan: &Plan, why: Option<String>, chosen: bool) -> ShootoutRow {
        let m = memory_fit(plan);
        ShootoutRow {
            gpu: gpu.to_string(),
            gpu_name: presets::gpu(gpu).map_or_else(|| gpu.to_string(), |g| g.name.to_string()),
            tp: plan.hardware.tp_degree,
            pp: plan.hardware.pp_degree.max(1),
            ep: plan.hardware.ep_degree.max(1),
            fits: m.weights_fit && m.holds_max_request,
            reason: why.or(m.reason),
            goodput_rps: 0.0,
            replicas_total: 0,
            gpus_total: 0,
            cost_per_hour_usd: None,
            cost_per_month_usd: None,
            cost_per_compliant_request_usd: None,
            ttft_p99_s: None,
            tpot_p99_s: None,
            output_tokens_per_s_per_gpu: None,
            kv_capacity_tokens: m.kv_capacity_tokens,
            gpus_needed: m.gpus_needed,
            chosen,
            constants: ConstantsSource::of(plan),
            spec_draft_tokens: speculation_of(plan).0,
            spec_acceptance: speculation_of(plan).1,
            comm_share: None,
            note: None,
        }
    }
}

/// Share of a full decode step of `plan` that goes to the sends between pipeline stages
/// or the expert-parallel all-to-alls (inside a node and across nodes): the step of as
/// many sequences as `max_num_seqs` and the KV cache allow, each holding the mean
/// context, against the same step without those terms. `None` without pipeline or expert
/// parallelism.
pub fn comm_share_of(plan: &Plan) -> Option<f64> {
    let h = &plan.hardware;
    if h.pp_degree <= 1 && h.ep_degree <= 1 {
        return None;
    }
    let len = crate::analytic::MeanLengths::of(plan);
    let per_request = (len.prompt_tokens + len.output_tokens).max(1.0);
    let by_kv = crate::analytic::kv_capacity_tokens(plan) / per_request;
    let n = (plan.engine.max_num_seqs as f64)
        .min(by_kv)
        .floor()
        .max(1.0);
    let step = <crate::roofline::StepModel as crate::roofline::StepModelOf>::from_plan(plan);
    let (_, comm) = step.split_shares(n, n);
    let t = step.step_time_s(n, n * len.context_tokens);
    (t > 0.0).then(|| comm / t)
}

/// Why `row`, a ranked layout over more than one node, costs more per compliant request
/// than `one`, the same GPU's cheapest ranked layout on one node: "32% more per compliant
/// request than TP8 on one node: 2× the GPUs for 1.16× the goodput; sends between stages
/// take 3% of a full decode step". `None` when it does not cost more.
fn dearer_words(row: &ShootoutRow, one: &ShootoutRow) -> Option<String> {
    let (a, b) = (
        row.cost_per_compliant_request_usd?,
        one.cost_per_compliant_request_usd?,
    );
    if a <= b || one.goodput_rps <= 0.0 {
        return None;
    }
    let (l, o) = (row.layout_of(), one.layout_of());
    let mut s = format!(
        "{} more per compliant request than {} on one node: {}× the GPUs for {}× the goodput",
        crate::format::percent_whole(a / b - 1.0),
        o.parts(&one.gpu).0,
        crate::format::figure(l.gpus() as f64 / o.gpus() as f64),
        crate::format::figure(row.goodput_rps / one.goodput_rps)
    );
    if let Some(c) = row.comm_share {
        let what = if l.ep > 1 {
            "the all-to-alls take"
        } else {
            "the sends between stages take"
        };
        let share = if c < 0.005 {
            "under 1%".to_string()
        } else {
            crate::format::percent_whole(c)
        };
        s.push_str(&format!("; {what} {share} of a full decode step"));
    }
    Some(s)
}

/// Notes each ranked layout over more than one node that a one-node layout of the same
/// GPU and speculation beats ([`dearer_words`]).
fn note_dearer_layouts(rows: &mut [ShootoutRow]) {
    let per_node = |r: &ShootoutRow| {
        presets::gpu(&r.gpu).map_or(crate::plan::DEFAULT_GPUS_PER_NODE, |g| g.gpus_per_node)
    };
    let one_node = |r: &ShootoutRow| r.layout_of().gpus() <= per_node(r);
    for i in 0..rows.len() {
        let r = &rows[i];
        if !r.ranked() || one_node(r) {
            continue;
        }
        let cheapest_one = rows
            .iter()
            .filter(|o| {
                o.ranked()
                    && one_node(o)
                    && o.gpu == r.gpu
                    && o.spec_draft_tokens == r.spec_draft_tokens
            })
            .min_by(|x, y| {
                let c = |r: &ShootoutRow| r.cost_per_compliant_request_usd.unwrap_or(f64::INFINITY);
                c(x).total_cmp(&c(y))
            });
        rows[i].note = cheapest_one.and_then(|o| dearer_words(&rows[i], o));
    }
}

impl ShootoutResult {
    /// The winner's row.
    pub fn best_row(&self) -> Option<&ShootoutRow> {
        self.best.and_then(|i| self.rows.get(i))
    }

    /// The plan's own row.
    pub fn chosen_row(&self) -> Option<&ShootoutRow> {
        self.chosen.and_then(|i| self.rows.get(i))
    }

    /// "cheapest option X at $…, chosen Y at $…", for the finance view and reports.
    pub fn verdict(&self) -> String {
        let label = ShootoutRow::label;
        let usd = crate::format::usd;
        let cost = |r: &ShootoutRow| {
            format!(
                "{} a month ({}/1k compliant requests, {} GPUs)",
                r.cost_per_month_usd.map_or("no cost".into(), usd),
                r.cost_per_compliant_request_usd
                    .map_or("no cost".into(), |c| usd(c * 1e3)),
                r.gpus_total
            )
        };
        let Some(best) = self.best_row() else {
            return "no option meets the SLO at any rate on the GPUs compared".into();
        };
        let mut s = format!("cheapest option {} at {}", label(best), cost(best));
        match self.chosen_row() {
            Some(_) if self.chosen == self.best => s.push_str(", which is the plan's choice"),
            Some(c) if c.ranked() => {
                s.push_str(&format!(", chosen {} at {}", label(c), cost(c)));
                if let (Some(a), Some(b)) = (c.cost_per_month_usd, best.cost_per_month_usd) {
                    if a > b {
                        s.push_str(&format!(
                            ": a cheaper option is available, {} a month less",
                            usd(crate::format::usd_difference(a, b))
                        ));
                    }
                }
            }
            Some(c) => s.push_str(&format!(
                ", chosen {}: {}",
                label(c),
                c.reason.as_deref().unwrap_or("not sized")
            )),
            None => {}
        }
        s
    }
}

/// Ranks rows (see [`ShootoutResult::rows`]); `order` is each row's position as asked.
fn rank(mut rows: Vec<(usize, ShootoutRow)>) -> ShootoutResult {
    let class = |r: &ShootoutRow| {
        if r.ranked() {
            0
        } else if r.fits {
            1
        } else {
            2
        }
    };
    rows.sort_by(|(ia, a), (ib, b)| {
        class(a)
            .cmp(&class(b))
            .then_with(|| {
                // Cheapest: the lower monthly cost of the fleet that meets the SLO at the
                // peak; cost per compliant request breaks ties.
                let cost = |r: &ShootoutRow| {
                    (
                        r.cost_per_month_usd.unwrap_or(f64::INFINITY),
                        r.cost_per_compliant_request_usd.unwrap_or(f64::INFINITY),
                    )
                };
                let (ma, ra) = cost(a);
                let (mb, rb) = cost(b);
                ma.total_cmp(&mb).then(ra.total_cmp(&rb))
            })
            .then_with(|| a.gpus_total.cmp(&b.gpus_total))
            .then_with(|| ia.cmp(ib))
    });
    let mut rows: Vec<ShootoutRow> = rows.into_iter().map(|(_, r)| r).collect();
    note_dearer_layouts(&mut rows);
    let best = rows.first().filter(|r| r.ranked()).map(|_| 0);
    let chosen = rows.iter().position(|r| r.chosen);
    ShootoutResult { rows, best, chosen }
}

enum Stage {
    Search(Box<GoodputSearch>),
    PlannedLoad {
        report: Box<PlanReport>,
        job: Job,
        issued: bool,
    },
    Done(Box<ShootoutRow>),
}

struct Opt {
    gpu: String,
    plan: Plan,
    chosen: bool,
    stage: Stage,
}

/// The shootout as a job state machine.
pub struct Shootout {
    options: Vec<Opt>,
}

/// Jobs of one option: run them with [`Shootout::plan_of`]`(option)`.
#[derive(Debug, Clone, PartialEq)]
pub struct OptionBatch {
    /// The option's index (as listed by [`Shootout::options`]).
    pub option: u32,
    /// The simulations to run.
    pub jobs: Vec<Job>,
}

impl Shootout {
    /// Sets up every option of `spec` on `base`. Options that do not fit, or whose plan
    /// cannot be searched, are settled at once with the reason.
    pub fn new(base: &Plan, spec: &ShootoutSpec) -> Result<Shootout, ShootoutError> {
        let spec = spec.checked(experts_of(base))?;
        let variants = speculation_variants(base, &spec)?;
        // Every option's search at its worst, together: the same bound as one search.
        let layouts = spec.layouts(experts_of(base));
        let options = (spec.gpus.len() * layouts.len() * variants.len()) as u64;
        crate::search::check_work(
            "shootout",
            false,
            options * crate::search::MAX_RATES as u64 * u64::from(base.run.replications),
            base.requests_per_run(),
        )
        .map_err(ShootoutError::Search)?;
        let mut options = Vec::new();
        let own = speculation_of(base);
        for gpu in &spec.gpus {
            for (&layout, &(k, a)) in layouts
                .iter()
                .flat_map(|l| variants.iter().map(move |v| (l, v)))
            {
                let mut plan = option_plan(base, gpu, layout)
                    .ok_or_else(|| ShootoutError::UnknownGpu(gpu.clone()))?;
                plan.engine.set_speculation((k, a));
                let chosen =
                    base.hardware.preset == *gpu && Layout::of(base) == layout && (k, a) == own;
                let m = memory_fit(&plan);
                let stage = if !(m.weights_fit && m.holds_max_request) {
                    Stage::Done(Box::new(ShootoutRow::not_run(gpu, &plan, None, chosen)))
                } else {
                    match GoodputSearch::new(&plan) {
                        Ok(s) => Stage::Search(Box::new(s)),
                        Err(e) => Stage::Done(Box::new(ShootoutRow::not_run(
                            gpu,
                            &plan,
                            Some(e.to_string()),
                            chosen,
                        ))),
                    }
                };
                options.push(Opt {
                    gpu: gpu.clone(),
                    plan,
                    chosen,
                    stage,
                });
            }
        }
        let mut s = Shootout { options };
        for i in 0..s.options.len() {
            s.advance(i);
        }
        Ok(s)
    }

    /// Every option as `(GPU id, layout)`, in the order asked for.
    pub fn options(&self) -> Vec<(String, Layout)> {
        self.options
            .iter()
            .map(|o| (o.gpu.clone(), Layout::of(&o.plan)))
            .collect()
    }

    /// The plan of option `option`, which its jobs run on.
    pub fn plan_of(&self, option: u32) -> Option<&Plan> {
        self.options.get(option as usize).map(|o| &o.plan)
    }

    /// Jobs that can run now, for any number of options at once.
    pub fn next_batches(&mut self) -> Vec<OptionBatch> {
        let mut out = Vec::new();
        for (i, o) in self.options.iter_mut().enumerate() {
            let jobs = match &mut o.stage {
                Stage::Search(s) => s.next_batch(),
                Stage::PlannedLoad { job, issued, .. } if !*issued => {
                    *issued = true;
                    vec![*job]
                }
                _ => Vec::new(),
            };
            if !jobs.is_empty() {
                out.push(OptionBatch {
                    option: i as u32,
                    jobs,
                });
            }
        }
        out
    }

    /// Takes results of option `option`'s jobs back, in any order.
    pub fn feed(&mut self, option: u32, results: &[JobResult]) {
        let i = option as usize;
        let Some(o) = self.options.get_mut(i) else {
            return;
        };
        match &mut o.stage {
            Stage::Search(s) => s.feed(results),
            Stage::PlannedLoad { report, job, .. } => {
                if let Some(r) = results.iter().find(|r| r.id == job.id) {
                    report.set_planned_load(job, r);
                    let row = ShootoutRow::from_report(&o.gpu, &o.plan, report, o.chosen);
                    o.stage = Stage::Done(Box::new(row));
                }
            }
            Stage::Done(_) => {}
        }
        self.advance(i);
    }

    /// Moves option `i` on when its search has ended.
    fn advance(&mut self, i: usize) {
        let o = &mut self.options[i];
        let Stage::Search(s) = &o.stage else {
            return;
        };
        if !s.is_done() {
            return;
        }
        let result = s.result();
        let report = PlanReport::build(&o.plan, result.as_ref(), None);
        o.stage = match report.planned_load_job(&o.plan) {
            Some(job) => Stage::PlannedLoad {
                report: Box::new(report),
                job,
                issued: false,
            },
            None => Stage::Done(Box::new(ShootoutRow::from_report(
                &o.gpu, &o.plan, &report, o.chosen,
            ))),
        };
    }

    /// Whether every option is settled.
    pub fn is_done(&self) -> bool {
        self.options
            .iter()
            .all(|o| matches!(o.stage, Stage::Done(_)))
    }

    /// Simulations finished and expected, over every option (each search's estimate, plus
    /// one planned-load simulation per option still to size).
    pub fn progress(&self) -> Progress {
        let mut p = Progress { done: 0, total: 0 };
        for o in &self.options {
            match &o.stage {
                Stage::Search(s) => {
                    let q = s.progress();
                    p.done += q.done;
                    p.total += q.total + 1;
                }
                Stage::PlannedLoad { report, .. } => {
                    let jobs = report.search.as_ref().map_or(0, |r| r.jobs_run);
                    p.done += jobs;
                    p.total += jobs + 1;
                }
                Stage::Done(_) => {}
            }
        }
        let settled = self
            .options
            .iter()
            .filter(|o| matches!(o.stage, Stage::Done(_)))
            .count() as u32;
        // A settled option counts as one unit so that the bar never runs backwards.
        p.done += settled;
        p.total += settled;
        p
    }

    /// The ranked comparison, once every option is settled.
    pub fn result(&self) -> Option<ShootoutResult> {
        let mut rows = Vec::with_capacity(self.options.len());
        for (i, o) in self.options.iter().enumerate() {
            match &o.stage {
                Stage::Done(r) => rows.push((i, (**r).clone())),
                _ => return None,
            }
        }
        Some(rank(rows))
    }
}

impl ShootoutRecord {
    /// The record of a finished comparison of `spec` on `base`, to keep in the plan.
    pub fn of(base: &Plan, spec: &ShootoutSpec, result: ShootoutResult) -> ShootoutRecord {
        ShootoutRecord {
            fingerprint: crate::plan::comparison::fingerprint_for(base, spec),
            spec: spec.clone(),
            result,
            omitted: 0,
        }
    }
}

/// The plan's GPU comparison in one sentence for readers of a shared plan: "Compared
/// over 30 GPU and layout options: cheapest option … at $…, chosen … at $…", and the
/// caution when either of those two rows was carried from another vendor's GPU; a note
/// when the plan has changed since; `None` when no comparison was run.
pub fn comparison_words(plan: &Plan) -> Option<String> {
    let rec = plan.shootout.as_ref()?;
    if !rec.is_fresh(plan) {
        return Some(
            "A GPU comparison was run for an earlier version of this plan; its ranking no longer applies."
                .into(),
        );
    }
    let mut r = rec.result.clone();
    r.chosen = rec.chosen_in(plan);
    // The plan's own GPU and layout may be left out of the comparison: say so, or a reader
    // takes the winner for cheaper than the plan.
    let h = &plan.hardware;
    let layout = Layout::of(plan);
    let compared =
        rec.spec.gpus.contains(&h.preset) && rec.spec.layouts(experts_of(plan)).contains(&layout);
    let option = format!(
        "{} × {}",
        crate::presets::gpu_name(&h.preset),
        layout.words(&h.preset)
    );
    let own = match r.chosen {
        Some(_) => String::new(),
        // A link carries two rows: the plan's own may be one it left out.
        None if compared && rec.omitted > 0 => {
            format!("; the plan's own {option} was compared, but its row is not in this link")
        }
        None => format!("; the plan's own {option} was not among them"),
    };
    // Of the rows the sentence names, which a link always carries: the same words from it.
    let named: Vec<ShootoutRow> = [r.best, r.chosen]
        .into_iter()
        .flatten()
        .filter_map(|i| r.rows.get(i).cloned())
        .collect();
    let caution = vendor_carry_words(&named, plan).map_or(String::new(), |w| format!(" {w}"));
    Some(format!(
        "Compared over {}: {}{own}.{caution}",
        options_words(rec.options()),
        r.verdict()
    ))
}

/// `1 GPU and layout option`, `30 GPU and layout options`.
pub fn options_words(n: usize) -> String {
    let s = if n == 1 { "" } else { "s" };
    format!("{n} GPU and layout option{s}")
}

/// Runs a shootout in-process on `threads` OS threads; `progress` returning `false`
/// cancels. The result does not depend on `threads`.
pub fn run_shootout_threads(
    base: &Plan,
    spec: &ShootoutSpec,
    threads: usize,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<ShootoutResult, ShootoutError> {
    let mut m = Shootout::new(base, spec)?;
    while !m.is_done() {
        let batches = m.next_batches();
        if batches.is_empty() {
            break;
        }
        for b in batches {
            let plan = m.plan_of(b.option).cloned().unwrap_or_default();
            let results = run_jobs(&plan, &b.jobs, threads).map_err(SearchError::from)?;
            m.feed(b.option, &results);
        }
        if !progress(m.progress()) {
            return Err(SearchError::Cancelled.into());
        }
    }
    m.result()
        .ok_or(ShootoutError::Search(SearchError::Cancelled))
}

#[cfg(test)]
mod tests;
