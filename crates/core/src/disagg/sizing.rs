//! xPyD sizing: the cheapest prefill × decode instance counts that meet the SLO at the
//! forecast peak, set against the aggregated plan on the plan's own GPUs.
//!
//! Fairness: the pools are sized at `peak / utilization`, the same headroom an
//! aggregated replica gets by running at `goodput × utilization`, and each pool then
//! gets `planning.redundancy` spare instances, as the aggregated fleet gets spare
//! replicas (N+1 per pool: losing any one instance, prefill or decode, leaves the peak
//! served).
//!
//! Search: for x = x₀, x₀+1, … (x₀ the prefill compute bound), the smallest y that
//! passes is found by doubling from a guess and then bisecting; more prefill instances
//! never need more decode instances, so the next x starts from the y just found. The
//! search stops when even y = 1 at the next x would cost at least the best found, or at
//! [`MAX_DISAGG_INSTANCES`]. A point passes when the mean attainment over the
//! replications (seeds as in the goodput search) reaches the target.

use crate::sim::SimConfigOf;
use serde::{Deserialize, Serialize};

use super::{
    pool_md1, simulate_disagg, DisaggConfig, DisaggError, DisaggReport, KvLink, KvRoute,
    PrefillMd1, Router,
};
use crate::analytic::MeanLengths;
use crate::capacity::CapacityPlan;
use crate::format::{latency, rps, thousands, usd};
use crate::plan::comparison::Layout;
use crate::plan::{Plan, MAX_DISAGG_INSTANCES, MAX_DISAGG_POINTS};
use crate::report::{PlanReport, PlannedLoad};
use crate::search::{
    check_work, run_job_with, run_jobs, GoodputResult, GoodputSearch, Job, JobResult, Progress,
};
use crate::sim::{replication_seed, SimConfig, Summary};
use crate::stats::mean_ci95;

/// One simulation of one xPyD point: a message to a worker.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PointJob {
    /// Unique id within the sizing.
    pub id: u32,
    /// Prefill instances.
    pub prefill_instances: u32,
    /// Decode instances.
    pub decode_instances: u32,
    /// Replication index.
    pub replication: u32,
    /// Seed: `replication_seed(plan.run.seed, replication)`.
    pub seed: u64,
}

/// What a worker returns for one [`PointJob`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointResult {
    /// The job's id.
    pub id: u32,
    /// The simulation's report.
    pub report: DisaggReport,
}

/// A job of the sizing: the aggregated plan's goodput search, or an xPyD point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum DisaggJob {
    /// Run with [`crate::search::run_job`] on the plan.
    Aggregated(Job),
    /// Run with [`PointJob::run`] on [`DisaggSizing::config`].
    Point(PointJob),
}

/// The result of a [`DisaggJob`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum DisaggJobResult {
    /// Of an aggregated job.
    Aggregated(Box<JobResult>),
    /// Of an xPyD point job.
    Point(Box<PointResult>),
}

impl PointJob {
    /// Runs the job on the sizing's configuration (at the sizing rate).
    pub fn run(&self, cfg: &DisaggConfig) -> Result<PointResult, DisaggError> {
        Ok(PointResult {
            id: self.id,
            report: simulate_disagg(
                cfg,
                self.prefill_instances,
                self.decode_instances,
                self.seed,
            )?,
        })
    }
}

/// One evaluated xPyD point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PointSummary {
    /// Prefill instances.
    pub prefill_instances: u32,
    /// Decode instances.
    pub decode_instances: u32,
    /// Mean attainment over the replications [0..1].
    pub attainment: f64,
    /// 95% confidence interval of the mean.
    pub ci95: [f64; 2],
    /// Whether the mean reaches the target.
    pub passes: bool,
}

/// The chosen xPyD, with its cost and what the simulation measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct XpyD {
    /// Prefill instances the peak needs (the x of xPyD).
    pub prefill_instances_for_peak: u32,
    /// Decode instances the peak needs (the y of xPyD).
    pub decode_instances_for_peak: u32,
    /// Prefill instances to run: for the peak + redundancy.
    pub prefill_instances: u32,
    /// Decode instances to run: for the peak + redundancy.
    pub decode_instances: u32,
    /// GPU preset of the prefill pool.
    pub prefill_gpu: String,
    /// Tensor-parallel degree of a prefill instance.
    pub prefill_tp: u32,
    /// Pipeline stages of a prefill instance.
    pub prefill_pp: u32,
    /// Expert-parallel degree of a prefill instance.
    pub prefill_ep: u32,
    /// Token budget of a prefill step [tokens].
    pub prefill_max_num_batched_tokens: u32,
    /// GPU preset of the decode pool.
    pub decode_gpu: String,
    /// Tensor-parallel degree of a decode instance.
    pub decode_tp: u32,
    /// Pipeline stages of a decode instance.
    pub decode_pp: u32,
    /// Expert-parallel degree of a decode instance.
    pub decode_ep: u32,
    /// The route the KV transfers of the instances for the peak take.
    pub kv_route: KvRoute,
    /// Most sequences per decode instance.
    pub decode_max_num_seqs: u32,
    /// GPUs to run, both pools, spares included.
    pub gpus_total: u32,
    /// Cost of both pools per hour, spares included [USD/h].
    pub cost_per_hour_usd: f64,
    /// Cost of both pools per month [USD/month].
    pub cost_per_month_usd: f64,
    /// Hourly cost of the x + y instances (spares excluded, as for the aggregated plan)
    /// over the requests of an hour at the peak [USD/request].
    pub cost_per_compliant_request_usd: f64,
    /// Mean attainment at the sizing rate [0..1].
    pub attainment: f64,
    /// Its 95% confidence interval.
    pub attainment_ci95: [f64; 2],
    /// TTFT, mean of the replications' summaries [s].
    pub ttft_s: Summary,
    /// TPOT [s].
    pub tpot_s: Summary,
    /// Prefill queueing [s].
    pub prefill_wait_s: Summary,
    /// Arrival to the end of prefill [s].
    pub prefill_s: Summary,
    /// KV transfer [s].
    pub transfer_s: Summary,
    /// Wait for a decode slot [s].
    pub decode_wait_s: Summary,
    /// Busy share of the prefill instances [0..1].
    pub prefill_busy: f64,
    /// Busy share of the decode instances [0..1].
    pub decode_busy: f64,
    /// The prefill pool as M/D/1 at the sizing rate, beside the simulated prefill.
    pub md1: PrefillMd1,
    /// Each traffic class's mean attainment over the replications under its own
    /// objectives, in class order (none with one class).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<ClassAttained>,
}

/// One traffic class's attainment at the chosen xPyD.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassAttained {
    /// The class's name.
    pub name: String,
    /// Its mean attainment over the replications under its own objectives [0..1].
    pub attainment: f64,
}

impl XpyD {
    /// How one prefill instance spreads over GPUs.
    pub fn prefill_layout(&self) -> Layout {
        Layout::new(self.prefill_tp, self.prefill_pp, self.prefill_ep)
    }

    /// How one decode instance spreads over GPUs.
    pub fn decode_layout(&self) -> Layout {
        Layout::new(self.decode_tp, self.decode_pp, self.decode_ep)
    }

    /// `2P3D`: the instance counts the peak needs.
    pub fn label(&self) -> String {
        format!(
            "{}P{}D",
            self.prefill_instances_for_peak, self.decode_instances_for_peak
        )
    }
}

/// The aggregated plan on its own GPUs, as `goodput plan --no-sweep` sizes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AggregatedSide {
    /// GPU preset of the plan.
    pub gpu: String,
    /// Tensor-parallel degree of a replica.
    pub tp_degree: u32,
    /// Pipeline stages of a replica.
    pub pp_degree: u32,
    /// Expert-parallel degree of a replica.
    pub ep_degree: u32,
    /// Goodput of one replica [requests/s].
    pub goodput_rps: f64,
    /// Replicas, GPUs and cost; `None` when the fleet cannot be sized.
    pub capacity: Option<CapacityPlan>,
    /// Why not, when it cannot.
    pub error: Option<String>,
    /// Latency of one replica at its planned rate, as `goodput plan` reports it (one
    /// full simulation); `None` when the goodput is measured or no fleet can be sized.
    #[serde(default)]
    pub planned_load: Option<PlannedLoad>,
}

impl AggregatedSide {
    /// How one replica spreads over GPUs.
    pub fn layout(&self) -> Layout {
        Layout::new(self.tp_degree, self.pp_degree, self.ep_degree)
    }
}

/// The sizing's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DisaggResult {
    /// Forecast peak [requests/s].
    pub peak_rate_rps: f64,
    /// Share of capacity the plan runs at (`planning.utilization`).
    pub utilization: f64,
    /// Rate the pools are simulated at: peak / utilisation [requests/s].
    pub sizing_rate_rps: f64,
    /// Spare instances per pool (`planning.redundancy`).
    pub redundancy: u32,
    /// Attainment target.
    pub target: f64,
    /// Replications per point.
    pub replications: u32,
    /// The router.
    pub router: Router,
    /// The KV link.
    pub kv_link: KvLink,
    /// The cheapest passing xPyD; `None` when none passes within the limits.
    pub best: Option<XpyD>,
    /// Why there is no xPyD, when there is none.
    pub reason: Option<String>,
    /// The aggregated plan.
    pub aggregated: AggregatedSide,
    /// Every evaluated point, in the order evaluated.
    pub points: Vec<PointSummary>,
    /// The comparison in plain words.
    pub verdict: String,
    /// Simulations run (both sides).
    pub jobs_run: u32,
    /// Whether the plan's prompts (or a class's) follow a prefix structure, whose cache
    /// hits the pools do not model: they prefill each prompt whole.
    #[serde(default)]
    pub whole_prompts: bool,
}

/// Where the aggregated side is: its goodput search, then the one simulation at its
/// planned rate (a job like the others, so the caller's workers run it), then settled.
enum AggStage {
    Search(Box<GoodputSearch>),
    PlannedLoad {
        /// The aggregated plan's report, sized, without its planned load yet.
        report: Box<PlanReport>,
        /// The planned-load simulation ([`PlanReport::planned_load_job`]).
        job: Job,
        /// Whether the job has been handed out.
        issued: bool,
    },
    Done(Box<AggregatedSide>),
}

/// The search state of the current x.
#[derive(Debug, Clone, Copy)]
struct Column {
    x: u32,
    /// Every y below `lo` fails at this x.
    lo: u32,
    /// The smallest y known to pass at this x.
    hi: Option<u32>,
    /// The next y to try while no y is known to pass.
    guess: u32,
}

struct Pending {
    x: u32,
    y: u32,
    first_id: u32,
    reports: Vec<Option<DisaggReport>>,
}

/// The sizing as a job state machine: [`DisaggSizing::next_batch`] hands out jobs,
/// [`DisaggSizing::feed`] takes results back in any order; the answer does not depend
/// on how they were run.
pub struct DisaggSizing {
    plan: Plan,
    cfg: DisaggConfig,
    replications: u32,
    target: f64,
    x_max: u32,
    y_min: u32,
    y_max: u32,
    y_guess: u32,
    agg: AggStage,
    column: Option<Column>,
    pending: Option<Pending>,
    issued: bool,
    points: Vec<PointSummary>,
    best: Option<(PointSummary, Vec<DisaggReport>)>,
    reason: Option<String>,
    next_id: u32,
    point_jobs_run: u32,
    agg_jobs: u32,
}

impl DisaggSizing {
    /// Sets the sizing up for `plan` (its `disagg` section, or the defaults for it); the
    /// aggregated side's goodput is searched alongside the pools.
    pub fn new(plan: &Plan) -> Result<DisaggSizing, DisaggError> {
        DisaggSizing::with_search(plan, None)
    }

    /// [`DisaggSizing::new`], taking the aggregated side's goodput from `search` (a
    /// finished goodput search and the plan it ran for) when that plan has the same
    /// [`Plan::search_key`], instead of searching again. The result is the same either
    /// way, `jobs_run` included (it counts the supplied search's simulations).
    pub fn with_search(
        plan: &Plan,
        search: Option<(&Plan, &GoodputResult)>,
    ) -> Result<DisaggSizing, DisaggError> {
        plan.validate()?;
        crate::search::check_objectives(plan).map_err(|e| match e {
            crate::search::SearchError::NoObjective => DisaggError::NoObjective,
            e => DisaggError::Search(e),
        })?;
        let spec = plan
            .disagg
            .clone()
            .unwrap_or_else(|| super::DisaggSpec::for_plan(plan));
        check_work(
            "disaggregated sizing",
            false,
            MAX_DISAGG_POINTS as u64 * u64::from(plan.run.replications),
            plan.run.num_requests,
        )?;
        let mut plan = plan.clone();
        plan.disagg = Some(spec.clone());
        let rate = plan.traffic.peak_rate_rps / plan.planning.utilization;
        if rate > crate::sim::MAX_RATE_RPS {
            use crate::format::sig;
            return Err(crate::sim::SimError::Plan(crate::plan::PlanError {
                field: "traffic.peak_rate_rps",
                message: format!(
                    "the pools are sized at the peak over the planned utilisation, {} / {} = {} req/s, above the {} req/s one simulation takes; lower the peak or raise planning.utilization",
                    sig(plan.traffic.peak_rate_rps),
                    sig(plan.planning.utilization),
                    sig(rate),
                    sig(crate::sim::MAX_RATE_RPS)
                ),
                limits: None,
            })
            .into());
        }
        let cfg = DisaggConfig::from_plan(&plan, rate)?;
        let known = search
            .filter(|(searched, _)| searched.search_key() == plan.search_key())
            .map(|(_, r)| r);
        let mut agg_jobs = 0;
        let agg = if !plan.planning.measured_sweep.is_empty() {
            aggregated_stage(&plan, None)
        } else if let Some(r) = known {
            agg_jobs = r.jobs_run;
            aggregated_stage(&plan, Some(r))
        } else {
            AggStage::Search(Box::new(GoodputSearch::new(&plan)?))
        };
        let (x_min, x_max) = match spec.prefill.instances {
            Some(n) => (n, n),
            None => (prefill_bound(&plan, &cfg, rate), MAX_DISAGG_INSTANCES),
        };
        let (y_min, y_max) = match spec.decode.instances {
            Some(n) => (n, n),
            None => (1, MAX_DISAGG_INSTANCES),
        };
        let y_guess = decode_guess(&plan, &cfg, rate).clamp(y_min, y_max);
        let mut s = DisaggSizing {
            replications: plan.run.replications,
            target: plan.slo.attainment_target,
            plan,
            cfg,
            x_max,
            y_min,
            y_max,
            y_guess,
            agg,
            column: None,
            pending: None,
            issued: false,
            points: Vec::new(),
            best: None,
            reason: None,
            next_id: 0,
            point_jobs_run: 0,
            agg_jobs,
        };
        if x_min > x_max {
            s.reason = Some(format!(
                "the prefill pool needs more than {MAX_DISAGG_INSTANCES} instances for the prompt tokens of {} req/s",
                rps(rate)
            ));
        } else {
            s.column = Some(Column {
                x: x_min,
                lo: y_min,
                hi: None,
                guess: y_guess,
            });
            s.plan_point();
        }
        Ok(s)
    }

    /// The plan the aggregated jobs run on.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The rate the pools are simulated at: peak / utilisation [requests/s]. With
    /// [`DisaggSizing::plan`] it is all a worker needs to run the jobs
    /// ([`run_disagg_jobs`]).
    pub fn sizing_rate_rps(&self) -> f64 {
        self.cfg.traffic.rate_rps
    }

    /// The configuration the point jobs run on (at the sizing rate).
    pub fn config(&self) -> &DisaggConfig {
        &self.cfg
    }

    fn instance_costs(&self) -> (f64, f64) {
        (
            self.cfg.prefill.instance_hour_usd(),
            self.cfg.decode.instance_hour_usd(),
        )
    }

    /// Hourly cost of x prefill and y decode instances (spares excluded) [USD/h].
    fn cost(&self, x: u32, y: u32) -> f64 {
        let (p, d) = self.instance_costs();
        x as f64 * p + y as f64 * d
    }

    /// Moves the column on until a point needs simulating (`pending`), or the search ends.
    fn plan_point(&mut self) {
        while let Some(c) = self.column {
            if self.points.len() >= MAX_DISAGG_POINTS {
                self.column = None;
                if self.best.is_none() && self.reason.is_none() {
                    self.reason = Some(self.none_meets(true));
                }
                break;
            }
            if let Some((b, _)) = &self.best {
                let best = self.cost(b.prefill_instances, b.decode_instances);
                if c.hi.is_none() && self.cost(c.x, self.y_min) >= best {
                    self.column = None;
                    break;
                }
            }
            let y = match c.hi {
                None => c.guess,
                Some(h) if c.lo < h => (c.lo + h) / 2,
                Some(h) => {
                    // The smallest y at this x is h; a larger x never needs more.
                    self.column = (h > self.y_min && c.x < self.x_max).then_some(Column {
                        x: c.x + 1,
                        lo: self.y_min,
                        hi: None,
                        guess: h,
                    });
                    continue;
                }
            };
            self.pending = Some(Pending {
                x: c.x,
                y,
                first_id: self.next_id,
                reports: vec![None; self.replications as usize],
            });
            self.next_id += self.replications;
            self.issued = false;
            return;
        }
        if self.best.is_none() && self.reason.is_none() {
            self.reason = Some(self.none_meets(false));
        }
    }

    /// Why no xPyD meets the SLO: the largest pools tried (or the point limit the search
    /// stopped at), and how close the best point came, with what to change when more
    /// instances no longer help.
    fn none_meets(&self, stopped: bool) -> String {
        let pct = |x: f64| crate::format::percent(x);
        let closest = self
            .points
            .iter()
            .max_by(|a, b| a.attainment.total_cmp(&b.attainment));
        // Every count up to the limit was open to the search, and it ran to its end.
        let exhausted =
            !stopped && self.x_max == MAX_DISAGG_INSTANCES && self.y_max == MAX_DISAGG_INSTANCES;
        let change = if let Some(link) = self.slow_link() {
            format!(": {link}")
        } else if exhausted {
            ", so more instances do not help: relax the TTFT or TPOT objective, or give the \
             pools faster GPUs or more tensor parallelism"
                .to_string()
        } else {
            ": relax the TTFT or TPOT objective, give the pools faster GPUs or more tensor \
             parallelism, or allow more instances"
                .to_string()
        };
        let closest = closest.map_or(String::new(), |p| {
            format!(
                "; the closest, {}P{}D, meets it for {} of requests against the {} target{change}",
                p.prefill_instances,
                p.decode_instances,
                pct(p.attainment),
                pct(self.target)
            )
        });
        let rate = rps(self.cfg.traffic.rate_rps);
        if stopped {
            format!(
                "no xPyD of the {MAX_DISAGG_POINTS} tried (the search's limit) meets the SLO \
                 at {rate} req/s{closest}"
            )
        } else {
            format!(
                "no xPyD up to {}P{}D meets the SLO at {rate} req/s{closest}",
                self.x_max, self.y_max
            )
        }
    }

    /// The KV link as the bottleneck, in words, when moving the mean prompt's cache
    /// alone takes half the TTFT objective or more: no number of instances shortens it.
    fn slow_link(&self) -> Option<String> {
        // The tightest TTFT objective, of the plan or of its classes.
        let objective = if self.cfg.classes.is_empty() {
            self.cfg.slo.ttft_s?
        } else {
            self.cfg
                .classes
                .iter()
                .filter_map(|c| c.slo.ttft_s)
                .min_by(f64::total_cmp)?
        };
        let tokens = MeanLengths::of(&self.plan).prompt_tokens;
        // The fastest route, one instance a pool: more instances never shorten it.
        let link = self.cfg.kv_routes.at(1, 1);
        let t = link.transfer_time_s(self.cfg.model.kv_bytes(tokens));
        (t >= 0.5 * objective).then(|| {
            format!(
                "moving the KV cache of a mean prompt ({} tokens) over the link ({}) alone \
                 takes {} of the {} TTFT objective, and more instances do not shorten it: give \
                 the pools a faster KV link, or relax the TTFT objective",
                thousands(tokens.round() as i64),
                link.words(),
                latency(Some(t)),
                latency(Some(objective))
            )
        })
    }

    /// Takes a finished point into the column.
    fn settle(&mut self, x: u32, y: u32, reports: Vec<DisaggReport>) {
        let values: Vec<f64> = reports.iter().map(|r| r.attainment).collect();
        let (mean, ci95) = mean_ci95(&values, 0.0, 1.0);
        let passes = mean >= self.target;
        let point = PointSummary {
            prefill_instances: x,
            decode_instances: y,
            attainment: mean,
            ci95,
            passes,
        };
        self.points.push(point);
        if passes {
            let cheaper = match &self.best {
                None => true,
                Some((b, _)) => {
                    let (c, cb) = (
                        self.cost(x, y),
                        self.cost(b.prefill_instances, b.decode_instances),
                    );
                    c < cb || (c == cb && x + y < b.prefill_instances + b.decode_instances)
                }
            };
            if cheaper {
                self.best = Some((point, reports));
            }
        }
        let Some(c) = self.column.as_mut() else {
            return;
        };
        match (c.hi, passes) {
            (_, true) => c.hi = Some(y),
            (Some(_), false) => c.lo = y + 1,
            (None, false) if y >= self.y_max => {
                // Not even the most decode instances pass: more prefill is needed.
                let next = Column {
                    x: c.x + 1,
                    lo: self.y_min,
                    hi: None,
                    guess: self.y_guess,
                };
                self.column = (c.x < self.x_max).then_some(next);
            }
            (None, false) => {
                c.lo = y + 1;
                c.guess = (2 * y).clamp(c.lo, self.y_max);
            }
        }
    }

    /// Jobs that can run now (empty while earlier ones are out, and when done).
    pub fn next_batch(&mut self) -> Vec<DisaggJob> {
        let mut out = Vec::new();
        match &mut self.agg {
            AggStage::Search(s) => {
                out.extend(s.next_batch().into_iter().map(DisaggJob::Aggregated));
            }
            AggStage::PlannedLoad { job, issued, .. } if !*issued => {
                out.push(DisaggJob::Aggregated(*job));
                *issued = true;
            }
            _ => {}
        }
        if let Some(p) = self.pending.as_ref().filter(|_| !self.issued) {
            for i in 0..self.replications {
                out.push(DisaggJob::Point(PointJob {
                    id: p.first_id + i,
                    prefill_instances: p.x,
                    decode_instances: p.y,
                    replication: i,
                    seed: replication_seed(self.plan.run.seed, i),
                }));
            }
            self.issued = true;
        }
        out
    }

    /// Takes results back, in any order and grouping.
    pub fn feed(&mut self, results: &[DisaggJobResult]) {
        let agg: Vec<JobResult> = results
            .iter()
            .filter_map(|r| match r {
                DisaggJobResult::Aggregated(j) => Some(**j),
                DisaggJobResult::Point(_) => None,
            })
            .collect();
        if let AggStage::Search(s) = &mut self.agg {
            if !agg.is_empty() {
                s.feed(&agg);
            }
            if s.is_done() {
                let r = s.result();
                self.agg_jobs = r.as_ref().map_or(0, |r| r.jobs_run);
                self.agg = aggregated_stage(&self.plan, r.as_ref());
                return self.feed_points(results);
            }
        }
        let settled = match &mut self.agg {
            AggStage::PlannedLoad { report, job, .. } => {
                agg.iter().find(|r| r.id == job.id).map(|r| {
                    report.set_planned_load(job, r);
                    aggregated_side(&self.plan, report)
                })
            }
            _ => None,
        };
        if let Some(side) = settled {
            self.agg = AggStage::Done(Box::new(side));
        }
        self.feed_points(results);
    }

    /// Takes the point results of `results` into the pending point.
    fn feed_points(&mut self, results: &[DisaggJobResult]) {
        for r in results {
            let DisaggJobResult::Point(p) = r else {
                continue;
            };
            let Some(pending) = self.pending.as_mut() else {
                continue;
            };
            let Some(k) = p.id.checked_sub(pending.first_id) else {
                continue;
            };
            if let Some(slot) = pending.reports.get_mut(k as usize) {
                if slot.is_none() {
                    *slot = Some(p.report.clone());
                    self.point_jobs_run += 1;
                }
            }
        }
        let complete = self
            .pending
            .as_ref()
            .is_some_and(|p| p.reports.iter().all(Option::is_some));
        if complete {
            if let Some(p) = self.pending.take() {
                let reports = p.reports.into_iter().flatten().collect();
                self.settle(p.x, p.y, reports);
                self.plan_point();
            }
        }
    }

    /// Whether both sides are settled.
    pub fn is_done(&self) -> bool {
        self.pending.is_none() && matches!(self.agg, AggStage::Done(_))
    }

    /// Simulations finished and expected (an estimate that never runs backwards past
    /// `done`).
    pub fn progress(&self) -> Progress {
        let mut p = match &self.agg {
            AggStage::Search(s) => s.progress(),
            AggStage::PlannedLoad { .. } => Progress {
                done: self.agg_jobs,
                total: self.agg_jobs + 1,
            },
            AggStage::Done(_) => Progress {
                done: self.agg_jobs,
                total: self.agg_jobs,
            },
        };
        p.done += self.point_jobs_run;
        p.total += self.point_jobs_run;
        if self.pending.is_some() {
            // The current point, and about as many again still to come.
            p.total += 3 * self.replications;
        }
        p
    }

    /// The answer, once [`DisaggSizing::is_done`].
    pub fn result(&self) -> Option<DisaggResult> {
        let AggStage::Done(aggregated) = &self.agg else {
            return None;
        };
        if self.pending.is_some() {
            return None;
        }
        let best = self.best.as_ref().map(|(p, reports)| self.xpyd(p, reports));
        let verdict = verdict(best.as_ref(), aggregated, self.reason.as_deref());
        Some(DisaggResult {
            peak_rate_rps: self.plan.traffic.peak_rate_rps,
            utilization: self.plan.planning.utilization,
            sizing_rate_rps: self.cfg.traffic.rate_rps,
            redundancy: self.plan.planning.redundancy,
            target: self.target,
            replications: self.replications,
            router: self.cfg.router,
            kv_link: self.cfg.kv_link,
            best,
            reason: self.reason.clone(),
            aggregated: (**aggregated).clone(),
            points: self.points.clone(),
            verdict,
            jobs_run: self.point_jobs_run + self.agg_jobs,
            whole_prompts: self.plan.traffic.sharing.is_some()
                || self.plan.classes.iter().any(|c| c.sharing.is_some()),
        })
    }

    fn xpyd(&self, p: &PointSummary, reports: &[DisaggReport]) -> XpyD {
        let (x, y) = (p.prefill_instances, p.decode_instances);
        let red = self.plan.planning.redundancy;
        let (pc, dc) = (&self.cfg.prefill, &self.cfg.decode);
        let hourly = self.cost(x + red, y + red);
        let peak = self.plan.traffic.peak_rate_rps;
        let mean = |f: fn(&DisaggReport) -> Summary| {
            Summary::mean_of(&reports.iter().map(f).collect::<Vec<_>>())
        };
        let avg = |f: fn(&DisaggReport) -> f64| {
            reports.iter().map(f).sum::<f64>() / reports.len().max(1) as f64
        };
        XpyD {
            prefill_instances_for_peak: x,
            decode_instances_for_peak: y,
            prefill_instances: x + red,
            decode_instances: y + red,
            prefill_gpu: pc.gpu.clone(),
            prefill_tp: pc.layout.tp,
            prefill_pp: pc.layout.pp,
            prefill_ep: pc.layout.ep,
            prefill_max_num_batched_tokens: self.cfg.prefill_budget_tokens,
            decode_gpu: dc.gpu.clone(),
            decode_tp: dc.layout.tp,
            decode_pp: dc.layout.pp,
            decode_ep: dc.layout.ep,
            kv_route: self.cfg.kv_routes.at(x, y),
            decode_max_num_seqs: self.cfg.decode_max_num_seqs,
            gpus_total: (x + red) * pc.gpus() + (y + red) * dc.gpus(),
            cost_per_hour_usd: hourly,
            cost_per_month_usd: hourly * self.plan.planning.hours_per_month,
            cost_per_compliant_request_usd: self.cost(x, y) / (peak * 3600.0),
            attainment: p.attainment,
            attainment_ci95: p.ci95,
            ttft_s: mean(|r| r.ttft_s),
            tpot_s: mean(|r| r.tpot_s),
            prefill_wait_s: mean(|r| r.prefill_wait_s),
            prefill_s: mean(|r| r.prefill_s),
            transfer_s: mean(|r| r.transfer_s),
            decode_wait_s: mean(|r| r.decode_wait_s),
            prefill_busy: avg(|r| r.prefill_busy),
            decode_busy: avg(|r| r.decode_busy),
            md1: pool_md1(&self.plan, &self.cfg, x, self.cfg.traffic.rate_rps),
            classes: self
                .plan
                .classes
                .iter()
                .enumerate()
                .map(|(k, c)| ClassAttained {
                    name: c.name.clone(),
                    attainment: reports
                        .iter()
                        .map(|r| r.class_attainments.get(k).copied().unwrap_or(1.0))
                        .sum::<f64>()
                        / reports.len().max(1) as f64,
                })
                .collect(),
        }
    }
}

/// The aggregated plan's report from its goodput search (or its measured sweep), sized
/// exactly as the plan report sizes it: settled at once, or waiting for its planned-load
/// simulation (a job, so that it runs where the other jobs run).
fn aggregated_stage(plan: &Plan, search: Option<&GoodputResult>) -> AggStage {
    let agg = aggregated_plan(plan);
    let report = PlanReport::build(&agg, search, None);
    match report.planned_load_job(&agg) {
        Some(job) => AggStage::PlannedLoad {
            report: Box::new(report),
            job,
            issued: false,
        },
        None => AggStage::Done(Box::new(aggregated_side(plan, &report))),
    }
}

/// The plan without its disaggregated pools.
fn aggregated_plan(plan: &Plan) -> Plan {
    Plan {
        disagg: None,
        ..plan.clone()
    }
}

/// The aggregated side of `plan`, from its report.
fn aggregated_side(plan: &Plan, report: &PlanReport) -> AggregatedSide {
    AggregatedSide {
        gpu: plan.hardware.preset.clone(),
        tp_degree: plan.hardware.tp_degree,
        pp_degree: plan.hardware.pp_degree.max(1),
        ep_degree: plan.hardware.ep_degree.max(1),
        goodput_rps: report.goodput.goodput_rps,
        capacity: report.capacity.clone(),
        error: report.capacity_error.clone(),
        planned_load: report.planned_load,
    }
}

/// Fewest prefill instances whose compute can carry the prompt tokens of `rate`:
/// ⌈rate × mean prefill tokens × compute time per token⌉ (a queue needs load < 1).
fn prefill_bound(plan: &Plan, cfg: &DisaggConfig, rate: f64) -> u32 {
    let tokens = MeanLengths::of(plan).prefill_tokens;
    let load = cfg.prefill.step.compute_load(rate * tokens);
    (libm::ceil(load).max(1.0)).min(MAX_DISAGG_INSTANCES as f64 + 1.0) as u32
}

/// A first guess of the decode instances: the output tokens of `rate` over what one
/// instance produces with full batches (`max_num_seqs`, capped by KV memory).
fn decode_guess(plan: &Plan, cfg: &DisaggConfig, rate: f64) -> u32 {
    let len = MeanLengths::of(plan);
    let by_kv =
        cfg.decode.kv_capacity_tokens / (len.prompt_tokens + plan.traffic.output.max as f64);
    let n = (cfg.decode_max_num_seqs as f64).min(by_kv.max(1.0));
    let step = cfg.decode.step.step_time_s(n, n * len.context_tokens);
    let per_instance = n / step;
    let need = rate * len.output_tokens / per_instance;
    (libm::ceil(need).max(1.0)).min(MAX_DISAGG_INSTANCES as f64) as u32
}

/// The comparison in plain words.
fn verdict(best: Option<&XpyD>, agg: &AggregatedSide, reason: Option<&str>) -> String {
    let spares = |b: &XpyD| {
        let r = b.prefill_instances - b.prefill_instances_for_peak;
        if r == 0 {
            String::new()
        } else {
            format!(" plus {r} spare per pool")
        }
    };
    let month = |dollars: f64| format!("{}/month", usd(dollars));
    match (best, &agg.capacity) {
        (Some(b), Some(a)) => {
            let (d, g) = (b.cost_per_month_usd, a.cost_per_month_usd);
            let tie = (d - g).abs() <= 0.005 * d.max(g).max(1.0) * 1e-3;
            if tie {
                format!(
                    "Both cost the same: {} GPUs ({}) aggregated, {} GPUs for {}{}.",
                    a.gpus_total,
                    month(g),
                    b.gpus_total,
                    b.label(),
                    spares(b)
                )
            } else if g < d {
                format!(
                    "Aggregated is cheaper: {} GPUs ({}) against {} GPUs ({}) for {}{}.",
                    a.gpus_total,
                    month(g),
                    b.gpus_total,
                    month(d),
                    b.label(),
                    spares(b)
                )
            } else {
                format!(
                    "Disaggregated is cheaper: {}{} needs {} GPUs ({}) against {} GPUs ({}) aggregated.",
                    b.label(),
                    spares(b),
                    b.gpus_total,
                    month(d),
                    a.gpus_total,
                    month(g)
                )
            }
        }
        (None, Some(a)) => format!(
            "Aggregated: {} GPUs ({}); disaggregated cannot be sized: {}.",
            a.gpus_total,
            month(a.cost_per_month_usd),
            reason.unwrap_or("no xPyD meets the SLO")
        ),
        (Some(b), None) => format!(
            "Disaggregated: {}{} needs {} GPUs ({}); the aggregated plan cannot be sized: {}.",
            b.label(),
            spares(b),
            b.gpus_total,
            month(b.cost_per_month_usd),
            agg.error.as_deref().unwrap_or("no rate meets the SLO")
        ),
        (None, None) => format!(
            "Neither can be sized: aggregated: {}; disaggregated: {}.",
            agg.error.as_deref().unwrap_or("no rate meets the SLO"),
            reason.unwrap_or("no xPyD meets the SLO")
        ),
    }
}

/// Runs jobs of the sizing of `plan` (as [`DisaggSizing::plan`] holds it) at `rate_rps`
/// (its [`DisaggSizing::sizing_rate_rps`]) one after another, in job order: what a
/// browser worker runs. Both configurations are resolved from the plain plan here, so
/// a worker gets the same numbers as the threads of [`run_disagg_threads`].
pub fn run_disagg_jobs(
    plan: &Plan,
    rate_rps: f64,
    jobs: &[DisaggJob],
) -> Result<Vec<DisaggJobResult>, DisaggError> {
    let mut agg: Option<SimConfig> = None;
    let mut point: Option<DisaggConfig> = None;
    let mut out = Vec::with_capacity(jobs.len());
    for job in jobs {
        out.push(match job {
            DisaggJob::Aggregated(j) => {
                let base = match agg.take() {
                    Some(c) => c,
                    None => SimConfig::from_plan(plan, j.rate_rps)?,
                };
                let r = run_job_with(&base, j)?;
                agg = Some(base);
                DisaggJobResult::Aggregated(Box::new(r))
            }
            DisaggJob::Point(p) => {
                let cfg = match point.take() {
                    Some(c) => c,
                    None => DisaggConfig::from_plan(plan, rate_rps)?,
                };
                let r = p.run(&cfg)?;
                point = Some(cfg);
                DisaggJobResult::Point(Box::new(r))
            }
        });
    }
    Ok(out)
}

/// Runs the sizing in-process on `threads` OS threads; `progress` returning `false`
/// cancels. The result does not depend on `threads`.
pub fn run_disagg_threads(
    plan: &Plan,
    threads: usize,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<DisaggResult, DisaggError> {
    drive_threads(DisaggSizing::new(plan)?, threads, progress)
}

/// Drives `m` to its result on `threads` OS threads; `progress` returning `false` cancels.
pub(crate) fn drive_threads(
    mut m: DisaggSizing,
    threads: usize,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<DisaggResult, DisaggError> {
    while !m.is_done() {
        let batch = m.next_batch();
        if batch.is_empty() {
            break;
        }
        let mut agg = Vec::new();
        let mut points = Vec::new();
        for j in batch {
            match j {
                DisaggJob::Aggregated(a) => agg.push(a),
                DisaggJob::Point(p) => points.push(p),
            }
        }
        let mut results: Vec<DisaggJobResult> = run_jobs(m.plan(), &agg, threads)?
            .into_iter()
            .map(|r| DisaggJobResult::Aggregated(Box::new(r)))
            .collect();
        results.extend(
            crate::sim::threads::map_in_order(&points, threads, |j| j.run(m.config()))?
                .into_iter()
                .map(|p| DisaggJobResult::Point(Box::new(p))),
        );
        m.feed(&results);
        if !progress(m.progress()) {
            return Err(crate::search::SearchError::Cancelled.into());
        }
    }
    m.result()
        .ok_or(DisaggError::Search(crate::search::SearchError::Cancelled))
}
