//! The plan report: every answer of a plan in one serialisable document.
//!
//! ```text
//!   Plan ──search (or measured sweep knee)──▶ goodput ──▶ capacity & cost
//!     │                                          │
//!     ├──knob sweep──▶ best-knob hint            ├──▶ analytic companions + warnings
//!     └──────────────────────────────────────────┴──▶ alert rules
//! ```
//!
//! [`PlanReport::build`] is a pure function of the plan and the job results (the
//! goodput search and the optional sweep), so the CLI (`goodput plan --json`) and the
//! web app, which gathers the same results from its workers, show the same numbers.
//! [`evaluate_plan`] runs the searches in-process and builds the report.

pub(crate) mod markdown;

use crate::alerts::{alert_rules, AlertRules};
use crate::analytic::{analyze, Analytics, Severity, Warning};
use crate::capacity::{knee_from_sweep, size_fleet, CapacityPlan};
use crate::format::rps;
use crate::plan::fields::{self, FIELDS};
use crate::plan::Plan;
use crate::router_gain::{baseline_plan, RouterSavings};
use crate::search::{
    default_threads, launch_flags, search_goodput_threads, sweep_knobs_threads, GoodputResult, Job,
    JobResult, Knobs, LatencyDetail, LaunchFlags, Progress, SearchError, SearchStatus, SweepCell,
    SweepResult,
};
use crate::sim::SimError;
pub use classes::ClassOutcome;
use serde::{Deserialize, Serialize};

/// Where the goodput figure comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GoodputSource {
    /// The simulator's goodput search.
    Simulated,
    /// The knee of the measured load-test sweep in `planning.measured_sweep`.
    Measured,
    /// Neither is available (see the note).
    None,
}

/// The goodput the plan is sized from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GoodputSummary {
    /// Where it comes from.
    pub source: GoodputSource,
    /// Goodput of one replica [requests/s]; 0 when none.
    pub goodput_rps: f64,
    /// 95% range of the simulated goodput [requests/s]; `None` for a measured knee.
    pub goodput_range_rps: Option<[f64; 2]>,
    /// Attainment target [0..1].
    pub target: f64,
    /// How it was found, in plain words.
    pub note: String,
}

/// What the knob sweep suggests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KnobHint {
    /// The best cell of the grid.
    pub best: SweepCell,
    /// The grid cell with the plan's own settings, if the grid holds them.
    pub current: Option<SweepCell>,
    /// Goodput gain of the best cell over the plan's settings [share, 0.25 = +25%].
    pub gain: Option<f64>,
    /// Launch flags of the best cell.
    pub flags: LaunchFlags,
    /// The hint in plain words.
    pub message: String,
}

/// Everything `goodput plan` prints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanReport {
    /// The plan's title.
    pub name: String,
    /// The plan's note for readers (empty for none).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
    /// The GPU × layout comparison stored with the plan, when it was run for the plan as it
    /// is (a stale one is left out, and the assumptions say so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison: Option<crate::plan::comparison::ShootoutResult>,
    /// Options of that comparison whose rows a share link left out (0: every row is in
    /// `comparison`).
    #[serde(default, skip_serializing_if = "crate::plan::is_zero")]
    pub comparison_omitted: u32,
    /// The caution for that comparison's rows whose constants were carried from another
    /// vendor's GPU ([`crate::plan::comparison::vendor_carry_words`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison_caution: Option<String>,
    /// The plan's inputs in plain words, for readers who do not tune knobs.
    pub assumptions: Vec<String>,
    /// The goodput used for sizing.
    pub goodput: GoodputSummary,
    /// The full goodput search (curve and detail), when simulated.
    pub search: Option<GoodputResult>,
    /// The fleet and its cost; `None` when it cannot be sized (see `capacity_error`).
    pub capacity: Option<CapacityPlan>,
    /// Why the fleet cannot be sized.
    pub capacity_error: Option<String>,
    /// The analytic companions at the planned rate.
    pub analytics: Analytics,
    /// Weights, runtime reserve and KV-cache capacity of one replica.
    #[serde(default)]
    pub memory: crate::fleet::MemoryFit,
    /// Launch flags of the plan's own engine settings.
    pub flags: LaunchFlags,
    /// The knob sweep, when run.
    pub sweep: Option<SweepResult>,
    /// The best-knob hint from the sweep.
    pub knob_hint: Option<KnobHint>,
    /// Prometheus alert rules for the SLO.
    pub alerts: AlertRules,
    /// Every finding, most severe first.
    pub warnings: Vec<Warning>,
    /// Latency of one replica at its planned rate (goodput × utilisation), from one full
    /// simulation; `None` until [`PlanReport::planned_load_job`] has been run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned_load: Option<PlannedLoad>,
    /// The plan's router against round robin, once the baseline's search has run
    /// ([`PlanReport::set_router_baseline`]); only for a plan that routes over replicas
    /// with another router.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub router_savings: Option<RouterSavings>,
    /// The plan's day schedule (its stored profile and autoscaler) worked out on this
    /// report's goodput ([`PlanReport::set_day`]); only for a plan that stores a schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub day: Option<crate::schedule::Schedule>,
    /// The traffic classes, each at the planned load with its cost (empty for a plan of
    /// one class).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<ClassOutcome>,
    /// The name of the class that sets the goodput: the one furthest below its own
    /// target where the mix first misses (none for a plan of one class).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binding_class: Option<String>,
    /// One shared pool against a pool per class (when the classes were compared).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedicated: Option<classes::Dedicated>,
}

/// Latency percentiles of one replica at the rate it is planned to run at.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PlannedLoad {
    /// The planned rate per replica: goodput × utilisation [requests/s].
    pub rate_rps: f64,
    /// Percentiles of one full simulation (replication 0's seed) at that rate.
    pub detail: LatencyDetail,
}

/// Job id of the planned-load simulation; outside any search's or sweep's ids.
pub const PLANNED_LOAD_JOB_ID: u32 = u32::MAX;

fn warn(id: &str, severity: Severity, message: String) -> Warning {
    Warning {
        id: id.to_string(),
        severity,
        message,
    }
}

impl GoodputSummary {
    /// The goodput `plan` is sized from: the knee of its measured sweep when it has one,
    /// else the search result `goodput`, else none. With it, the warning that the search
    /// did not converge, if it did not. [`PlanReport::build`] and [`goodput_for`] both
    /// take it from here.
    pub fn of(plan: &Plan, goodput: Option<&GoodputResult>) -> (GoodputSummary, Option<Warning>) {
        let mut not_converged = None;
        let target = plan.slo.attainment_target;
        let summary = if !plan.planning.measured_sweep.is_empty() {
            match knee_from_sweep(&plan.planning.measured_sweep, target) {
                Ok(g) => GoodputSummary {
                    source: GoodputSource::Measured,
                    goodput_rps: g,
                    goodput_range_rps: None,
                    target,
                    note: format!(
                        "knee of the measured sweep ({} rows): the highest rate with attainment ≥ {} below the first that misses it",
                        plan.planning.measured_sweep.len(),
                        target
                    ),
                },
                Err(e) => GoodputSummary {
                    source: GoodputSource::Measured,
                    goodput_rps: 0.0,
                    goodput_range_rps: None,
                    target,
                    note: e.to_string(),
                },
            }
        } else if let Some(r) = goodput {
            if r.status != SearchStatus::Converged {
                not_converged = Some(warn(
                    "search_not_converged",
                    if r.status == SearchStatus::ZeroGoodput {
                        Severity::Critical
                    } else {
                        Severity::Warning
                    },
                    r.reason.clone(),
                ));
            }
            GoodputSummary {
                source: GoodputSource::Simulated,
                goodput_rps: r.goodput_rps,
                goodput_range_rps: Some(r.goodput_range_rps),
                target: r.target,
                note: format!(
                    "simulated: {} rates × {} replications; {}",
                    r.curve.len(),
                    r.replications,
                    r.reason
                ),
            }
        } else {
            GoodputSummary {
                source: GoodputSource::None,
                goodput_rps: 0.0,
                goodput_range_rps: None,
                target,
                note: "no goodput: neither a simulated search nor a measured sweep is available"
                    .into(),
            }
        };
        (summary, not_converged)
    }
}

impl PlanReport {
    /// Builds the report from the plan and the job results: `goodput` is the search of the
    /// plan's own settings (ignored when `planning.measured_sweep` has rows, whose knee is
    /// used instead), `sweep` the optional knob sweep.
    pub fn build(
        plan: &Plan,
        goodput: Option<&GoodputResult>,
        sweep: Option<&SweepResult>,
    ) -> PlanReport {
        let (summary, not_converged) = GoodputSummary::of(plan, goodput);
        let mut warnings: Vec<Warning> = not_converged.into_iter().collect();
        let target = plan.slo.attainment_target;
        let g = summary.goodput_rps;
        let (capacity, capacity_error) = match size_fleet(g, plan) {
            Ok(c) => (Some(c), None),
            Err(e) => {
                warnings.push(warn("no_capacity", Severity::Critical, e.to_string()));
                (None, Some(e.to_string()))
            }
        };
        let analytics = analyze(plan, (g > 0.0).then_some(g));
        let alerts = alert_rules(plan, g);
        for name in &alerts.unreachable {
            let fitted = alerts
                .fitted
                .iter()
                .find(|f| name.ends_with(&f.name))
                .map_or("no window pair fits, so it is left out".to_string(), |f| {
                    format!(
                        "the rules use {}× over {} and {} instead",
                        crate::format::plain(f.burn),
                        f.long,
                        f.short
                    )
                });
            warnings.push(warn(
                "alert_unreachable",
                Severity::Info,
                format!(
                    "{name}'s standard windows can never fire at a {target} target (the burn threshold exceeds a 100% error ratio): {fitted}"
                ),
            ));
        }
        if let Some(w) = plan_at_best_warning(plan, sweep) {
            warnings.push(w);
        }
        let knob_hint = sweep.map(|s| knob_hint(plan, s, g));
        if let Some(h) = &knob_hint {
            if h.gain.is_some_and(|x| x > 0.05) {
                warnings.push(warn("better_knobs", Severity::Info, h.message.clone()));
            }
        }
        if let Some(why) = plan
            .calibration
            .as_ref()
            .filter(|c| c.enabled)
            .and_then(|c| c.mismatch(plan))
        {
            warnings.push(warn("calibration_mismatch", Severity::Warning, why));
        }
        let memory = crate::fleet::memory_fit(plan);
        if let Some(why) = &memory.reason {
            let (id, severity) = if memory.weights_fit {
                ("kv_too_small_for_max_request", Severity::Warning)
            } else {
                ("weights_do_not_fit", Severity::Critical)
            };
            warnings.push(warn(id, severity, why.clone()));
        }
        warnings.extend(analytics.warnings.iter().cloned());
        let id = if plan.classes.is_empty() {
            "deadline_beyond_run"
        } else {
            "class_deadline_beyond_run"
        };
        for why in classes::deadline_warnings(plan, g) {
            warnings.push(warn(id, Severity::Warning, why));
        }
        warnings.sort_by_key(|w| std::cmp::Reverse(w.severity));
        // The stored GPU comparison, when it was run for the plan as it is.
        let fresh_comparison = plan.shootout.as_ref().filter(|r| r.is_fresh(plan));
        PlanReport {
            name: plan.name.clone(),
            note: plan.note.clone(),
            comparison: fresh_comparison.map(|r| crate::plan::comparison::ShootoutResult {
                chosen: r.chosen_in(plan),
                ..r.result.clone()
            }),
            comparison_omitted: fresh_comparison.map_or(0, |r| r.omitted),
            comparison_caution: fresh_comparison
                .and_then(|r| crate::plan::comparison::vendor_carry_words(&r.result.rows, plan)),
            assumptions: assumption_lines(plan),
            goodput: summary,
            search: goodput.cloned(),
            capacity,
            capacity_error,
            analytics,
            memory,
            flags: launch_flags(plan, &Knobs::of(plan)),
            sweep: sweep.cloned(),
            knob_hint,
            alerts,
            warnings,
            planned_load: None,
            router_savings: None,
            day: None,
            classes: classes::outcomes(plan),
            binding_class: classes::binding_name(plan, goodput),
            dedicated: None,
        }
    }

    /// [`PlanReport::set_router_baseline`] with `baseline`, the baseline's search and the
    /// plan it was run for, when that plan's search is this plan's ([`Plan::search_key`]:
    /// a relabelled or repriced plan keeps it); nothing otherwise.
    pub fn set_router_baseline_of(
        &mut self,
        plan: &Plan,
        baseline: Option<(&Plan, &GoodputResult)>,
    ) {
        if let Some((_, b)) = baseline.filter(|(p, _)| p.search_key() == plan.search_key()) {
            self.set_router_baseline(plan, b);
        }
    }

    /// Records the goodput search of [`baseline_plan`]`(plan)` (`plan` is the plan the
    /// report is of): the fleet behind round robin beside the plan's own. Ignored for a
    /// plan without such a baseline.
    pub fn set_router_baseline(&mut self, plan: &Plan, baseline: &GoodputResult) {
        self.router_savings = RouterSavings::of(
            plan,
            self.goodput.goodput_rps,
            self.capacity.as_ref(),
            baseline,
        );
    }

    /// Records one shared pool against a pool per class ([`classes::dedicated`]) from
    /// each class's goodput alone (`goodputs`, in class order; the reason in words where
    /// a class's search could not run); nothing without a sized fleet or classes.
    pub fn set_dedicated(&mut self, plan: &Plan, goodputs: &[Result<f64, String>]) {
        if let (Some(shared), false) = (&self.capacity, plan.classes.is_empty()) {
            self.dedicated = Some(classes::dedicated(plan, goodputs, shared));
        }
    }

    /// [`PlanReport::set_dedicated`] with the goodputs searched for `of`, when that plan's
    /// search is this plan's ([`Plan::search_key`]); nothing otherwise.
    pub fn set_dedicated_of(&mut self, plan: &Plan, of: Option<(&Plan, &[Result<f64, String>])>) {
        if let Some((_, g)) = of.filter(|(p, _)| p.search_key() == plan.search_key()) {
            self.set_dedicated(plan, g);
        }
    }

    /// Records `day`, the schedule of `plan`'s stored profile and autoscaler, when it was
    /// worked out on this report's goodput; anything else is ignored.
    pub fn set_day(&mut self, plan: &Plan, day: &crate::schedule::Schedule) {
        let same = plan.schedule.is_some()
            && day.goodput_rps.to_bits() == self.goodput.goodput_rps.to_bits();
        if same {
            self.day = Some(day.clone());
        }
    }

    /// The simulation that fills [`PlanReport::planned_load`]: one full run (replication
    /// 0's seed, the plan's engine settings) at the planned rate per replica. `None` when
    /// the goodput is not simulated or no fleet could be sized.
    pub fn planned_load_job(&self, plan: &Plan) -> Option<Job> {
        if self.goodput.source != GoodputSource::Simulated {
            return None;
        }
        let rate = self.capacity.as_ref()?.planned_rps_per_replica;
        (rate.is_finite() && rate > 0.0).then(|| Job {
            id: PLANNED_LOAD_JOB_ID,
            cell: 0,
            rate_rps: rate,
            replication: 0,
            seed: crate::sim::replication_seed(plan.run.seed, 0),
            knobs: Knobs::of(plan),
            detail: true,
        })
    }

    /// Runs [`PlanReport::planned_load_job`] here and now (one simulation) and records
    /// it. A plan whose goodput is not simulated needs no run.
    pub fn fill_planned_load(&mut self, plan: &Plan) -> Result<(), SimError> {
        if let Some(job) = self.planned_load_job(plan) {
            let r = crate::search::run_job(plan, &job)?;
            self.set_planned_load(&job, &r);
        }
        Ok(())
    }

    /// The report `goodput plan` prints: [`PlanReport::build`] from the job results, then
    /// the planned-load simulation. The page builds its report through this too (from a
    /// search its workers ran), so both show the same numbers.
    pub fn complete(
        plan: &Plan,
        goodput: Option<&GoodputResult>,
        sweep: Option<&SweepResult>,
    ) -> Result<PlanReport, SimError> {
        let mut report = PlanReport::build(plan, goodput, sweep);
        report.fill_planned_load(plan)?;
        Ok(report)
    }

    /// The fleet this report sizes, or why none can be sized, in words.
    pub fn fleet(&self) -> Result<CapacityPlan, String> {
        match (&self.capacity, &self.capacity_error) {
            (Some(c), _) => Ok(c.clone()),
            (None, Some(e)) => Err(e.clone()),
            (None, None) => Err("no goodput to size the fleet from".into()),
        }
    }

    /// Records the result of [`PlanReport::planned_load_job`] (ignored when it is not
    /// that job's, or has no percentiles).
    pub fn set_planned_load(&mut self, job: &Job, result: &JobResult) {
        if job.id != PLANNED_LOAD_JOB_ID || result.id != job.id {
            return;
        }
        if let Some(detail) = result.detail {
            classes::fill(
                &mut self.classes,
                detail.classes.as_slice(),
                self.capacity.as_ref(),
            );
            self.planned_load = Some(PlannedLoad {
                rate_rps: job.rate_rps,
                detail,
            });
        }
    }

    /// The report as Markdown (`goodput plan --markdown`, the app's export).
    pub fn to_markdown(&self) -> String {
        markdown::render(self)
    }
}

/// What `run.plan_at_best` did, once the knob `sweep` ran: the settings it chose, or
/// that the plan's own stand (the goodput is measured, or they are not the sweep's best).
/// Nothing without a sweep: the page builds its report before and apart from the sweep
/// (its note under the best settings says the rest); see [`evaluate_plan_with`] for a
/// command that skipped it.
fn plan_at_best_warning(plan: &Plan, sweep: Option<&SweepResult>) -> Option<Warning> {
    let best = sweep.filter(|_| plan.run.plan_at_best)?.best_cell().knobs;
    let knobs = Knobs::of(plan);
    let message = if !plan.planning.measured_sweep.is_empty() {
        "Plan at the sweep's best is on, but goodput comes from the measured sweep: the plan's own settings stand".to_string()
    } else if best == knobs {
        crate::search::planned_at_best_text(&knobs)
    } else {
        format!(
            "Plan at the sweep's best is on, but the plan's settings ({} sequences × {} tokens) are not the sweep's best ({} sequences × {} tokens)",
            knobs.max_num_seqs,
            knobs.max_num_batched_tokens,
            best.max_num_seqs,
            best.max_num_batched_tokens
        )
    };
    Some(warn("planned_at_best", Severity::Info, message))
}

fn knob_hint(plan: &Plan, s: &SweepResult, goodput_rps: f64) -> KnobHint {
    let best = *s.best_cell();
    let knobs = Knobs::of(plan);
    let current = s.cells.iter().find(|c| c.knobs == knobs).copied();
    let base = current.map_or(goodput_rps, |c| c.goodput_rps);
    let gain = (base > 0.0).then(|| best.goodput_rps / base - 1.0);
    let budget = if best.batched_tokens == 0 {
        "chunked prefill off".to_string()
    } else {
        format!("a {}-token budget", best.batched_tokens)
    };
    let message = match (current, gain) {
        (Some(c), _) if c.knobs == best.knobs => format!(
            "the plan's settings ({} sequences, {budget}) are the best of the {}-cell grid",
            best.max_num_seqs,
            s.cells.len()
        ),
        (_, Some(x)) => format!(
            "{} sequences with {budget} reach {} req/s in the sweep, {:+.0}% against the plan's settings",
            best.max_num_seqs,
            rps(best.goodput_rps),
            x * 100.0
        ),
        (_, None) => format!(
            "{} sequences with {budget} reach {} req/s, the best of the grid",
            best.max_num_seqs,
            rps(best.goodput_rps)
        ),
    };
    KnobHint {
        best,
        current,
        gain,
        flags: s.flags.clone(),
        message,
    }
}

/// One assumption a plan states: a field the registry flags for finance, and its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Assumption {
    /// The field's dotted path.
    pub path: &'static str,
    /// The field's label.
    pub label: &'static str,
    /// Its value as a person reads it ([`fields::field_value`]).
    pub value: String,
}

/// The plan's assumptions: every field of the registry flagged `finance`, in registry
/// order, with its label and value, then a mixture of experts' routing skew when one is
/// stated, and the engine settings when the plan follows the knob sweep's best. The
/// finance view, the printed planner, the Markdown report and the report's JSON all state
/// this list, so flagging a field adds it to each.
pub fn assumptions(plan: &Plan) -> Vec<Assumption> {
    let json = serde_json::to_value(plan).unwrap_or_default();
    let mut rows: Vec<Assumption> = FIELDS
        .iter()
        .filter(|f| f.finance)
        .map(|f| Assumption {
            path: f.path,
            label: f.label,
            value: fields::field_value(f, &fields::value_in(f, &json)),
        })
        .collect();
    // The price says where it comes from: an offer's provider, term, date and source.
    for a in rows
        .iter_mut()
        .filter(|a| a.path == "hardware.gpu_hour_usd")
    {
        a.value = crate::plan::price::source_words(plan);
    }
    // Pipeline stages or expert parallelism, when there are any: how a replica spreads
    // over GPUs and nodes, right after the tensor-parallel degree it qualifies.
    let h = &plan.hardware;
    let mut layout = Vec::new();
    if h.ep_degree > 1 {
        let f = fields::field("hardware.ep_degree");
        layout.push(Assumption {
            path: f.path,
            label: f.label,
            value: format!(
                "the routed experts split over {}, attention data-parallel, over {}",
                crate::format::count(u64::from(h.ep_degree), "GPU", "GPUs"),
                crate::format::count(u64::from(h.nodes_per_replica()), "node", "nodes"),
            ),
        });
    }
    if h.pp_degree > 1 {
        let f = fields::field("hardware.pp_degree");
        let nodes = h.nodes_per_replica();
        layout.push(Assumption {
            path: f.path,
            label: f.label,
            value: format!(
                "{} stages of {}, {} a replica over {}",
                h.pp_degree,
                crate::format::count(u64::from(h.tp_degree.max(1)), "GPU", "GPUs"),
                crate::format::count(u64::from(h.gpus_per_replica()), "GPU", "GPUs"),
                crate::format::count(u64::from(nodes), "node", "nodes"),
            ),
        });
    }
    let at = rows
        .iter()
        .position(|a| a.path == "hardware.tp_degree")
        .map_or(rows.len(), |i| i + 1);
    rows.splice(at..at, layout);
    let m = &plan.model;
    if m.is_moe() && m.expert_routing_skew != 1.0 {
        let f = fields::field("model.expert_routing_skew");
        rows.push(Assumption {
            path: f.path,
            label: f.label,
            value: format!(
                "a popular expert picked {}× as often as the others (1 is uniform)",
                crate::format::sig(m.expert_routing_skew)
            ),
        });
    }
    if plan.run.plan_at_best {
        let k = Knobs::of(plan);
        rows.push(Assumption {
            path: "run.plan_at_best",
            label: "Engine settings",
            value: format!(
                "the knob sweep's best (now {} sequences, budget {}{})",
                k.max_num_seqs,
                k.max_num_batched_tokens,
                if k.chunked_prefill {
                    ""
                } else {
                    ", chunked prefill off"
                }
            ),
        });
    }
    rows
}

/// The report's assumption lines: `Label: value` for each of [`assumptions`], then what
/// the fields alone do not say (a closed loop's Poisson search, the calibration).
fn assumption_lines(plan: &Plan) -> Vec<String> {
    let mut lines: Vec<String> = assumptions(plan)
        .into_iter()
        .map(|a| format!("{}: {}.", a.label, a.value))
        .collect();
    lines.push(traffic_words(plan));
    lines.extend((0..plan.classes.len()).map(|k| class_words(plan, k)));
    if let crate::plan::Arrival::Closed { concurrency, .. } = plan.traffic.arrival {
        lines.push(format!(
            "The plan's arrivals are a closed loop of {}; goodput is searched with Poisson arrivals.",
            crate::format::clients(concurrency)
        ));
    }
    if let Some(c) = &plan.calibration {
        lines.push(crate::calibrate::calibration_words(c));
    }
    if plan.shootout.as_ref().is_some_and(|r| !r.is_fresh(plan)) {
        lines.push(
            "A GPU comparison stored with the plan was run before its last change and is \
             left out; run it again (`goodput shootout`)."
                .into(),
        );
    }
    if let Some(s) = &plan.schedule {
        let from = if s.profile.source.is_empty() {
            String::new()
        } else {
            format!(" ({})", s.profile.source)
        };
        lines.push(format!(
            "Day schedule: an hourly rate profile{from} with an autoscaler (scale-up lag {} \
             min, cooldown {} min) is stored with the plan; `goodput schedule` gives the \
             fleet hour by hour and the autoscaled cost.",
            crate::format::plain(s.options.scale_up_lag_min),
            crate::format::plain(s.options.cooldown_min)
        ));
    }
    if let Some(d) = &plan.disagg {
        let pool = |gpu: &str, layout: crate::plan::comparison::Layout, n: Option<u32>| {
            let gpu = if gpu.is_empty() {
                plan.hardware.preset.as_str()
            } else {
                gpu
            };
            let n = n.map_or("sized for the peak".to_string(), |n| {
                crate::format::count(n as u64, "instance", "instances")
            });
            format!(
                "{} × {}, {n}",
                crate::presets::gpu_short_name(gpu),
                layout.words(gpu)
            )
        };
        lines.push(format!(
            "Disaggregated deployment stored with the plan: prefill on {}, decode on {}; \
             `goodput disagg` sizes it against this aggregated plan.",
            pool(&d.prefill.gpu, d.prefill.layout(), d.prefill.instances),
            pool(&d.decode.gpu, d.decode.layout(), d.decode.instances)
        ));
    }
    // Where requests land decides what the replicas' caches hold: said when they have
    // prefixes to share, or a router is simulated.
    let shares = plan.traffic.sharing.is_some() || plan.traffic.prefix_hit_rate > 0.0;
    if shares || plan.routing.is_some() {
        lines.push(routing_words(plan));
    }
    lines
}

/// A plan's arrival process in words: "Poisson arrivals", "bursty (gamma) arrivals, CV 2".
pub fn arrival_words(plan: &Plan) -> String {
    use crate::format::{plain, thousands};
    use crate::plan::Arrival;
    let t = &plan.traffic;
    match t.arrival {
        Arrival::Gamma { cv } => format!("bursty (gamma) arrivals, CV {}", plain(cv)),
        Arrival::Closed {
            concurrency,
            think_s,
        } => format!(
            "a closed loop of {}, {} s between a reply and the next request",
            crate::format::clients(concurrency),
            plain(think_s)
        ),
        Arrival::Poisson => "Poisson arrivals".into(),
        Arrival::Constant => "evenly spaced arrivals".into(),
        Arrival::Trace => format!(
            "the arrivals of a trace of {} rows",
            thousands(t.trace.len() as i64)
        ),
    }
}

/// A typed prefix in words: "a 1,000-token prefix cached for 90% of requests", or "no
/// prefix caching".
fn typed_prefix_words(plan: &Plan) -> String {
    let t = &plan.traffic;
    if t.prefix_hit_rate > 0.0 && t.prefix_tokens > 0 {
        format!(
            "a {}-token prefix cached for {}% of requests",
            crate::format::thousands(t.prefix_tokens as i64),
            crate::format::plain(t.prefix_hit_rate * 100.0)
        )
    } else {
        "no prefix caching".to_string()
    }
}

/// The traffic a replica is planned for, in one line: arrivals, prompt and output
/// lengths with their spread, and prefix caching.
pub fn traffic_words(plan: &Plan) -> String {
    use crate::plan::LengthSpec;
    let t = &plan.traffic;
    let arrivals = arrival_words(plan);
    let lengths = |what: &str, l: &LengthSpec| length_words(what, l, t.trace.len());
    let prefixes = prefix_words(plan);
    format!(
        "Traffic: {arrivals}; {}; {}; {prefixes}.",
        lengths("prompts", &t.prompt),
        lengths("outputs", &t.output)
    )
}

/// How the plan's prompts share prefixes, in words: its prefix structure, a replayed
/// trace's blocks, or its cached prefix and hit rate.
fn prefix_words(plan: &Plan) -> String {
    use crate::format::{plain, thousands};
    use crate::plan::TurnOrder;
    let t = &plan.traffic;
    match &t.sharing {
        Some(s) => {
            let mut parts = Vec::new();
            if s.groups > 0 && s.group_tokens > 0 {
                parts.push(format!(
                    "{} shared prefixes of {} tokens{}",
                    thousands(s.groups as i64),
                    thousands(s.group_tokens as i64),
                    if s.zipf > 0.0 {
                        format!(" (Zipf {})", plain(s.zipf))
                    } else {
                        String::new()
                    }
                ));
            }
            if s.sessions > 0 {
                let order = match s.order {
                    TurnOrder::Interleaved => "interleaved",
                    TurnOrder::RoundRobin => "in round robin",
                    TurnOrder::Random => "in random order",
                };
                parts.push(format!(
                    "{} sessions at once of {} turns{}, {order}, {}",
                    thousands(s.sessions as i64),
                    s.turns,
                    if s.document_tokens > 0 {
                        format!(
                            " after a {}-token document",
                            thousands(s.document_tokens as i64)
                        )
                    } else {
                        String::new()
                    },
                    if s.replies_cached {
                        "replies cached"
                    } else {
                        "recorded replies"
                    }
                ));
            }
            if parts.is_empty() {
                "no shared prefixes".to_string()
            } else {
                format!("prefix caching of {}", parts.join(" and "))
            }
        }
        None if t.trace.iter().any(|r| !r.blocks.is_empty()) => format!(
            "prefix caching of the trace's {} prompt blocks of {} tokens, hits found in the cache",
            thousands(t.trace.iter().map(|r| r.blocks.len() as i64).sum()),
            crate::plan::TRACE_BLOCK_TOKENS
        ),
        None => typed_prefix_words(plan),
    }
}

/// One length law in words: "prompts median 800 tokens (lognormal sigma 0.8, 16 to
/// 8,000)", "outputs of 200 tokens", or the trace's (of `trace_rows` rows).
fn length_words(what: &str, l: &crate::plan::LengthSpec, trace_rows: usize) -> String {
    use crate::format::{plain, thousands};
    use crate::plan::LengthDist;
    match l.dist {
        LengthDist::LogNormal { median, sigma } => format!(
            "{what} median {} tokens (lognormal sigma {}, {} to {})",
            thousands(median.round() as i64),
            plain(sigma),
            thousands(l.min as i64),
            thousands(l.max as i64)
        ),
        LengthDist::Fixed { tokens } => {
            format!("{what} of {} tokens", thousands(tokens as i64))
        }
        LengthDist::Trace => format!(
            "{} lengths from the trace's {} rows",
            what.trim_end_matches('s'),
            thousands(trace_rows as i64)
        ),
    }
}

/// Traffic class `k` of `plan` in one line: its share, priority, objectives and lengths.
pub fn class_words(plan: &Plan, k: usize) -> String {
    let Some(c) = plan.classes.get(k) else {
        return String::new();
    };
    let p = plan.class_plan(k);
    let objective = |path: &str, x: Option<f64>| {
        x.map(|v| {
            let f = fields::field(path);
            format!(
                "{} {}",
                f.label_in_sentence(),
                fields::field_value(f, &serde_json::json!(v))
            )
        })
    };
    let objectives: Vec<String> = [
        objective("slo.ttft_s", p.slo.ttft_s),
        objective("slo.tpot_s", p.slo.tpot_s),
        objective("slo.e2e_s", p.slo.e2e_s),
    ]
    .into_iter()
    .flatten()
    .collect();
    let slo = if objectives.is_empty() {
        "no objective".to_string()
    } else {
        format!(
            "{} for {} of its requests",
            objectives.join(", "),
            crate::format::percent(p.slo.attainment_target)
        )
    };
    let rows = p.traffic.trace.len();
    let mut own = match (&c.replay, c.arrival) {
        (Some(r), _) => format!(
            ", replaying its own trace {} ({} requests) at its share of the rate",
            r.source,
            crate::format::thousands(r.rows.len() as i64)
        ),
        (None, Some(_)) => format!(", its own {} at its share of the rate", arrival_words(&p)),
        (None, None) => String::new(),
    };
    if c.prefix.is_some() {
        own.push_str(&format!(", its own prefix: {}", typed_prefix_words(&p)));
    }
    if c.sharing.is_some() {
        own.push_str(&format!(", its own {}", prefix_words(&p)));
    }
    format!(
        "Traffic class {}: {} of requests, priority {}{own}; {slo}; {}; {}.",
        c.name,
        crate::format::percent(c.share),
        c.priority,
        length_words("prompts", &p.traffic.prompt, rows),
        length_words("outputs", &p.traffic.output, rows)
    )
}

/// Where the plan's requests land across replicas, as the report states it.
pub fn routing_words(plan: &Plan) -> String {
    match &plan.routing {
        Some(r) => format!(
            "Routing: goodput per replica is simulated on {} replicas behind a router that picks {}.",
            r.replicas,
            router_words(r.router)
        ),
        None => "Routing: one replica is simulated; how a router spreads requests (and \
                 their cached prefixes) over replicas is not."
            .into(),
    }
}

/// What a router does, in a few words.
pub fn router_words(r: crate::plan::FleetRouter) -> &'static str {
    use crate::plan::FleetRouter::*;
    match r {
        RoundRobin => "the replicas in turn",
        Random => "a replica at random (as a Kubernetes Service does)",
        LeastLoaded => "the replica with the fewest requests",
        SessionAffinity => "one replica per session",
        PrefixAware => {
            "by the cached share of the prompt, free KV memory and queue (llm-d's \
             precise prefix-cache scheduling)"
        }
    }
}

/// What [`evaluate_plan_with`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EvaluateOptions {
    /// Run the knob sweep for the best-knob hint.
    pub sweep: bool,
    /// OS threads for the simulations (the result does not depend on it).
    pub threads: usize,
}

impl Default for EvaluateOptions {
    fn default() -> Self {
        EvaluateOptions {
            sweep: true,
            threads: default_threads(),
        }
    }
}

/// Runs the goodput search (unless a measured sweep is given) and the knob sweep
/// in-process, then builds the report. `progress` returning `false` cancels.
pub fn evaluate_plan(
    plan: &Plan,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<PlanReport, SearchError> {
    evaluate_plan_with(plan, EvaluateOptions::default(), progress)
}

/// [`evaluate_plan`] with options.
pub fn evaluate_plan_with(
    plan: &Plan,
    options: EvaluateOptions,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<PlanReport, SearchError> {
    let threads = options.threads.max(1);
    let simulated = plan.planning.measured_sweep.is_empty();
    // Planning at the sweep's best: the sweep first (it does not depend on the plan's
    // knobs), then the search at its best cell, as the page does once its sweep ends.
    if plan.run.plan_at_best && options.sweep && simulated {
        let sweep = sweep_knobs_threads(plan, threads, progress)?;
        let at_best = planned_at_best(plan, &sweep);
        let offset = sweep.jobs();
        let search = search_goodput_threads(&at_best, threads, &mut after(offset, progress))?;
        let mut report = PlanReport::complete(&at_best, Some(&search), Some(&sweep))?;
        let offset = offset + search.jobs_run;
        let offset = fill_router_baseline(&mut report, &at_best, threads, offset, progress)?;
        fill_dedicated(&mut report, &at_best, threads, offset, progress)?;
        fill_day(&mut report, &at_best, threads);
        return Ok(report);
    }
    let mut offset = 0;
    let search = if simulated {
        let r = search_goodput_threads(plan, threads, progress)?;
        offset = r.jobs_run;
        Some(r)
    } else {
        None
    };
    let sweep = if options.sweep {
        Some(sweep_knobs_threads(
            plan,
            threads,
            &mut after(offset, progress),
        )?)
    } else {
        None
    };
    let mut report = PlanReport::complete(plan, search.as_ref(), sweep.as_ref())?;
    let offset = offset + sweep.as_ref().map_or(0, SweepResult::jobs);
    let offset = fill_router_baseline(&mut report, plan, threads, offset, progress)?;
    fill_dedicated(&mut report, plan, threads, offset, progress)?;
    fill_day(&mut report, plan, threads);
    if plan.run.plan_at_best && !options.sweep {
        report.warnings.push(warn(
            "planned_at_best",
            Severity::Info,
            "Plan at the sweep's best is on, but no knob sweep ran: the numbers use the plan's own settings".into(),
        ));
    }
    Ok(report)
}

/// `progress` for work that comes after `offset` finished jobs.
fn after(
    offset: u32,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> impl FnMut(Progress) -> bool + '_ {
    move |p| {
        progress(Progress {
            done: p.done + offset,
            total: p.total + offset,
        })
    }
}

/// The plan's router against round robin: searches [`baseline_plan`]`(plan)` (after
/// `offset` finished jobs) and records it in `report`, the report of `plan`; nothing for
/// a plan without a baseline (no routing, round robin, or a measured goodput). Returns
/// the jobs finished so far.
fn fill_router_baseline(
    report: &mut PlanReport,
    plan: &Plan,
    threads: usize,
    offset: u32,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<u32, SearchError> {
    if let Some(rr) = baseline_plan(plan) {
        let baseline = search_goodput_threads(&rr, threads, &mut after(offset, progress))?;
        report.set_router_baseline(plan, &baseline);
        return Ok(offset + baseline.jobs_run);
    }
    Ok(offset)
}

/// A plan of traffic classes on one shared pool against a pool per class: searches each
/// class alone ([`classes::dedicated_plan`], after `offset` finished jobs) and records
/// the comparison in `report`; nothing for a plan of one class or without a sized fleet.
/// A class whose search cannot run is named with its reason.
fn fill_dedicated(
    report: &mut PlanReport,
    plan: &Plan,
    threads: usize,
    mut offset: u32,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<(), SearchError> {
    if report.capacity.is_none() || plan.classes.is_empty() {
        return Ok(());
    }
    let mut goodputs = Vec::new();
    for k in 0..plan.classes.len() {
        let alone = classes::dedicated_plan(plan, k);
        match search_goodput_threads(&alone, threads, &mut after(offset, progress)) {
            Ok(r) => {
                offset += r.jobs_run;
                goodputs.push(Ok(r.goodput_rps));
            }
            Err(SearchError::Cancelled) => return Err(SearchError::Cancelled),
            Err(e) => goodputs.push(Err(e.to_string())),
        }
    }
    report.set_dedicated(plan, &goodputs);
    Ok(())
}

/// The plan's stored day schedule on the report's goodput, as `goodput schedule` works
/// it out, recorded in `report`; nothing without a stored schedule or a goodput, and a
/// schedule that cannot be worked out becomes a warning.
fn fill_day(report: &mut PlanReport, plan: &Plan, threads: usize) {
    let (Some(spec), g) = (&plan.schedule, report.goodput.goodput_rps) else {
        return;
    };
    if !(g.is_finite() && g > 0.0) {
        return;
    }
    match crate::schedule::schedule_threads(plan, &spec.profile, g, &spec.options, threads) {
        Ok(day) => report.set_day(plan, &day),
        Err(e) => report.warnings.push(warn(
            "day_schedule",
            Severity::Info,
            format!("The plan's day schedule could not be worked out: {e}"),
        )),
    }
}

/// `plan` at the best cell of its knob `sweep`: the engine settings the numbers use when
/// `run.plan_at_best` is on (the page applies the same cell when its sweep finishes).
pub fn planned_at_best(plan: &Plan, sweep: &SweepResult) -> Plan {
    sweep.best_cell().knobs.apply(plan)
}

/// Which goodput the numbers of `good` use, and the report built on it: the one decision
/// the page makes each time the plan or a search result changes.
///
/// - With a measured sweep in the plan, goodput is the sweep's knee and no simulation
///   is needed; a search result is ignored.
/// - Otherwise it is the last finished search (`search`: the plan it ran for and its
///   result), sized for the plan it was run for. `None` until a search finishes.
///
/// The report is [`PlanReport::complete`], as `goodput plan` prints it without the knob
/// sweep. A planned-load simulation that fails leaves `planned_load` empty.
pub fn report_for(
    good: &Plan,
    search: Option<(&Plan, &GoodputResult)>,
) -> Option<(Plan, PlanReport)> {
    if !good.planning.measured_sweep.is_empty() {
        return Some((good.clone(), PlanReport::build(good, None, None)));
    }
    search.map(|(plan, r)| {
        // The search may have run while a (since removed) sweep was in the plan; the
        // sweep does not change the simulation, so the result stands without it.
        let mut plan = plan.clone();
        plan.planning.measured_sweep.clear();
        let mut report = PlanReport::build(&plan, Some(r), None);
        let _ = report.fill_planned_load(&plan);
        (plan, report)
    })
}

/// The goodput of exactly `plan` [requests/s]: its measured knee, or the last search if
/// that search was run for this plan.
///
/// The same number as [`report_for`]'s, taken from [`GoodputSummary::of`] without
/// building the report (a fleet sizing, an analysis and a planned-load simulation), which
/// the page asked for on every search only to read this one number.
pub fn goodput_for(plan: &Plan, search: Option<(&Plan, &GoodputResult)>) -> Option<f64> {
    let result = if plan.planning.measured_sweep.is_empty() {
        Some(search.filter(|(p, _)| *p == plan)?.1)
    } else {
        None
    };
    Some(GoodputSummary::of(plan, result).0.goodput_rps)
}

#[cfg(test)]
mod tests;

pub mod classes;
