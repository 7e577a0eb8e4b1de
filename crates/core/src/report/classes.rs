//! The traffic classes of a report: each class at the planned load, what it costs, and
//! the class that sets the goodput.

use serde::{Deserialize, Serialize};

use crate::capacity::CapacityPlan;
use crate::plan::Plan;
use crate::search::{ClassDetail, GoodputResult};

/// One traffic class in a report ([`super::PlanReport::classes`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassOutcome {
    /// The class's name.
    pub name: String,
    /// Its share of the requests [0..1].
    pub share: f64,
    /// Its scheduling priority (0 first).
    pub priority: u32,
    /// Its attainment target [0..1].
    pub target: f64,
    /// Its attainment and percentiles in the planned-load simulation (none before it
    /// ran, or when the goodput is not simulated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_planned_load: Option<ClassDetail>,
    /// Its share of the prompt and output tokens at the planned load: the share of the
    /// GPU time it is charged [0..1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_share: Option<f64>,
    /// The fleet's cost per compliant request of this class: a replica's cost times
    /// the class's token share, over the class's planned requests [USD/request].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_per_compliant_request_usd: Option<f64>,
}

/// The classes of `plan` before any simulation (none for a plan of one class).
pub fn outcomes(plan: &Plan) -> Vec<ClassOutcome> {
    plan.classes
        .iter()
        .enumerate()
        .map(|(k, c)| ClassOutcome {
            name: c.name.clone(),
            share: c.share,
            priority: c.priority,
            target: plan.class_plan(k).slo.attainment_target,
            at_planned_load: None,
            token_share: None,
            cost_per_compliant_request_usd: None,
        })
        .collect()
}

/// The name of the class the search found binding, if any.
pub fn binding_name(plan: &Plan, search: Option<&GoodputResult>) -> Option<String> {
    let k = search?.binding_class? as usize;
    plan.classes.get(k).map(|c| c.name.clone())
}

/// Fills each class's planned-load results (`details`, in class order) and its cost
/// from the fleet's cost per compliant request: a request of the class costs the fleet's
/// cost per request times its mean tokens over the mean tokens of all requests, both as
/// the run counted them (so the costs, weighted by each class's share of the run's
/// requests, give the fleet's).
pub fn fill(classes: &mut [ClassOutcome], details: &[ClassDetail], fleet: Option<&CapacityPlan>) {
    let tokens: u64 = details.iter().map(|d| d.tokens).sum();
    let requests: u64 = details.iter().map(|d| u64::from(d.measured_requests)).sum();
    let mean = (requests > 0 && tokens > 0).then(|| tokens as f64 / requests as f64);
    for (c, d) in classes.iter_mut().zip(details) {
        c.at_planned_load = Some(*d);
        c.token_share = (tokens > 0).then(|| d.tokens as f64 / tokens as f64);
        c.cost_per_compliant_request_usd = match (mean, fleet) {
            (Some(m), Some(f)) if d.measured_requests > 0 => {
                let own = d.tokens as f64 / f64::from(d.measured_requests);
                Some(f.cost_per_compliant_request_usd * own / m)
            }
            _ => None,
        };
    }
}

/// Each class's goodput alone on a pool of its own, in class order, or why its search
/// could not run ([`dedicated`]).
pub type ClassGoodputs = Vec<Result<f64, String>>;

/// One class on a pool of its own ([`Dedicated::pools`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DedicatedPool {
    /// The class's name.
    pub name: String,
    /// Its goodput per replica, alone on the pool [requests/s].
    pub goodput_rps: f64,
    /// The pool's replicas, spare included (0 when none could be sized).
    pub replicas_total: u32,
    /// The pool's GPUs.
    pub gpus_total: u32,
    /// The pool's cost per month [USD/month].
    pub cost_per_month_usd: f64,
    /// Why no pool could be sized for it, in words (none when one was).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One shared pool for every class against a pool per class.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dedicated {
    /// A pool per class: the class's plan ([`Plan::class_plan`]) at its share of the peak,
    /// sized with the plan's utilisation and spare replicas.
    pub pools: Vec<DedicatedPool>,
    /// GPUs of the pools together.
    pub gpus_total: u32,
    /// Their cost per month [USD/month].
    pub cost_per_month_usd: f64,
    /// The shared pool's GPUs.
    pub shared_gpus_total: u32,
    /// The shared pool's cost per month [USD/month].
    pub shared_cost_per_month_usd: f64,
    /// What sharing saves a month: the pools' cost less the shared pool's (negative when
    /// sharing costs more) [USD/month].
    pub saving_per_month_usd: f64,
}

/// Class `k` of `plan` on a pool of its own: its plan, at its share of the peak.
pub fn dedicated_plan(plan: &Plan, k: usize) -> Plan {
    let mut p = plan.class_plan(k);
    p.traffic.peak_rate_rps = plan.traffic.peak_rate_rps * plan.classes[k].share;
    p
}

/// [`Dedicated`] from each class's goodput alone (`goodputs`, in class order; `Err` when
/// its search could not run) and the shared pool's fleet.
pub fn dedicated(
    plan: &Plan,
    goodputs: &[Result<f64, String>],
    shared: &CapacityPlan,
) -> Dedicated {
    let pools: Vec<DedicatedPool> = goodputs
        .iter()
        .enumerate()
        .map(|(k, g)| {
            let name = plan.classes[k].name.clone();
            let sized = g.clone().and_then(|g| {
                crate::capacity::size_fleet(g, &dedicated_plan(plan, k))
                    .map(|c| (g, c))
                    .map_err(|e| e.to_string())
            });
            match sized {
                Ok((g, c)) => DedicatedPool {
                    name,
                    goodput_rps: g,
                    replicas_total: c.replicas_total,
                    gpus_total: c.gpus_total,
                    cost_per_month_usd: c.cost_per_month_usd,
                    error: None,
                },
                Err(e) => DedicatedPool {
                    name,
                    goodput_rps: 0.0,
                    replicas_total: 0,
                    gpus_total: 0,
                    cost_per_month_usd: 0.0,
                    error: Some(e),
                },
            }
        })
        .collect();
    let gpus_total = pools.iter().map(|p| p.gpus_total).sum();
    let cost: f64 = pools.iter().map(|p| p.cost_per_month_usd).sum();
    Dedicated {
        pools,
        gpus_total,
        cost_per_month_usd: cost,
        shared_gpus_total: shared.gpus_total,
        shared_cost_per_month_usd: shared.cost_per_month_usd,
        saving_per_month_usd: cost - shared.cost_per_month_usd,
    }
}

/// The SLOs (the plan's, or each traffic class's) that bound a request's wait by an
/// end-to-end deadline alone (no TTFT objective; a TPOT objective does not bound it)
/// whose deadline is longer than the arrivals one simulation spans at `goodput_rps`: an
/// overload that a longer run would reveal can pass within it. One sentence per such
/// SLO, saying what to change.
pub fn deadline_warnings(plan: &Plan, goodput_rps: f64) -> Vec<String> {
    if !(goodput_rps.is_finite() && goodput_rps > 0.0) {
        return Vec::new();
    }
    let span = f64::from(plan.run.num_requests) / goodput_rps;
    plan.class_plans()
        .iter()
        .enumerate()
        .filter_map(|(k, p)| {
            let deadline = p.slo.e2e_s?;
            (p.slo.ttft_s.is_none() && deadline > span).then(|| {
                let (whose, fix) = match plan.classes.get(k) {
                    Some(c) => (format!("Class {}'s", c.name), "give the class"),
                    None => ("The SLO's".to_string(), "set"),
                };
                format!(
                    "{whose} {} deadline is longer than the {} of arrivals one simulation spans at the goodput rate, so a queue that grows without end could still meet it: raise the requests per simulation (run.num_requests) above {}, or {fix} a TTFT objective",
                    crate::format::latency(Some(deadline)),
                    crate::format::latency(Some(span)),
                    crate::format::thousands((deadline * goodput_rps).ceil() as i64)
                )
            })
        })
        .collect()
}

/// The classes at the planned rate in one sentence, as the finance view and the
/// Markdown report state them: "By class at the planned rate: chat, 70% of requests,
/// 99.9% within its objectives at $0.0000493 per compliant request; batch, 30% of
/// requests, 100.0% within its objectives at $0.000151 per compliant request. chat sets
/// the goodput." None for a plan of one class, or before the planned-load simulation.
pub fn classes_sentence(r: &super::PlanReport) -> Option<String> {
    let parts: Vec<String> = r
        .classes
        .iter()
        .map(|c| {
            let at = c.at_planned_load?;
            let cost = c.cost_per_compliant_request_usd.map_or(String::new(), |x| {
                format!(" at {} per compliant request", crate::format::usd(x))
            });
            Some(format!(
                "{}, {} of requests, {} within its objectives{cost}",
                c.name,
                crate::format::percent_whole(c.share),
                crate::format::percent_tenths(at.attainment)
            ))
        })
        .collect::<Option<Vec<String>>>()?;
    if parts.is_empty() {
        return None;
    }
    let binding = r
        .binding_class
        .as_ref()
        .map_or(String::new(), |b| format!(" {b} sets the goodput."));
    Some(format!(
        "By class at the planned rate: {}.{binding}",
        parts.join("; ")
    ))
}

impl Dedicated {
    /// The comparison in words, as every output states it: "One shared pool: 5 GPUs,
    /// $9,125 a month. A pool per class: 6 GPUs, $10,950 a month (chat: 3 GPUs (22.06
    /// req/s per replica); batch: 3 GPUs (9.52 req/s per replica)). Sharing saves $1,825
    /// a month."
    pub fn words(&self) -> String {
        use crate::format::{rps, usd, usd_difference};
        let pools: Vec<String> = self
            .pools
            .iter()
            .map(|p| match &p.error {
                Some(e) => format!("{}: not sized ({e})", p.name),
                None => format!(
                    "{}: {} GPUs ({} req/s per replica)",
                    p.name,
                    p.gpus_total,
                    rps(p.goodput_rps)
                ),
            })
            .collect();
        let saving = usd_difference(self.cost_per_month_usd, self.shared_cost_per_month_usd);
        let verdict = if saving == 0.0 {
            "Sharing costs the same".to_string()
        } else if self.saving_per_month_usd >= 0.0 {
            format!("Sharing saves {} a month", usd(saving))
        } else {
            format!("Sharing costs {} a month more", usd(-saving))
        };
        format!(
            "One shared pool: {} GPUs, {} a month. A pool per class: {} GPUs, {} a month ({}). {verdict}.",
            self.shared_gpus_total,
            usd(self.shared_cost_per_month_usd),
            self.gpus_total,
            usd(self.cost_per_month_usd),
            pools.join("; ")
        )
    }
}

/// What every output says of the classes in one paragraph: [`classes_sentence`], then
/// the shared pool against a pool per class when that comparison ran ([`Dedicated::words`]).
pub fn classes_paragraph(r: &super::PlanReport) -> Option<String> {
    let by_class = classes_sentence(r)?;
    Some(match &r.dedicated {
        Some(d) => format!("{by_class} {}", d.words()),
        None => by_class,
    })
}
