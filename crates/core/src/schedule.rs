//! Traffic over a day: an hourly rate profile, the replicas each hour needs, an
//! autoscaler with a scale-up lag and a cool-down, static against autoscaled cost, and
//! simulated attainment during the ramps.
//!
//! ```text
//!   RateProfile (named shape | pasted numbers | trace) ──scale──▶ rate per hour [req/s]
//!        │ capacity::size_fleet per hour (utilisation, redundancy)
//!        ▼
//!   replicas needed per hour ──autoscaler (minutes: lead, lag, cool-down)──▶ serving, billed
//!        │                                                                    │
//!        ▼ one replica at rate(t) / serving(t), per hour (RampJob)            ▼
//!   attainment per hour                                            cost per hour, day, month
//! ```
//!
//! **The arithmetic.** An hour with fleet rate `r` needs the replicas
//! [`crate::capacity::size_fleet`] gives for a peak of `r`, that is
//! ⌈r / (goodput × utilisation)⌉ plus the redundancy, and at least
//! [`ScheduleOptions::min_replicas`]. The static fleet is the same for the profile's
//! peak, all day.
//!
//! **The autoscaler**, minute by minute over the periodic profile (run twice round, the
//! second lap reported, so midnight follows the previous evening):
//! - it wants the replicas of the current hour, or of the hour `lead` minutes ahead when
//!   that is more (scheduled scaling ahead of a known profile; 0 = purely reactive);
//! - when it wants more than it has (serving + starting), it orders the difference; an
//!   ordered replica is billed at once and serves `lag` minutes later (provisioning plus
//!   weight loading);
//! - it removes replicas (starting ones first) only down to the most it wanted over the
//!   last `cooldown` minutes, like a scale-down stabilisation window.
//!
//! **Cost.** Every billed replica-minute costs GPUs per replica × GPU-hour price / 60. Per
//! month: the period's cost × `planning.hours_per_month` / hours in the period.
//!
//! **Attainment during ramps.** Requests spread evenly over the serving replicas, so one
//! replica sees the fleet rate divided by the replicas serving, minute by minute. Each hour
//! is one simulation of one replica, open loop (Poisson, or the plan's gamma), with that
//! piecewise-constant rate ([`crate::traffic::RateStep`]) from [`LEAD_IN_MIN`] minutes
//! before the hour to its end; the requests expected in the lead-in are warm-up, the
//! rest are measured. An hour whose per-replica rate never changes in that window is
//! steady: it runs at its constant rate with the plan's own request count. The replica
//! starts each window empty, so a backlog older than the lead-in is not carried over, and
//! an hour expecting more than [`MAX_RAMP_REQUESTS`] requests per replica is simulated
//! over its first that many. This is one replica standing for all of them: a router that
//! sends new replicas more of the load while they catch up is not modelled.
//!
//! The simulations are [`RampJob`]s, handed out by [`ScheduleRun`] like the goodput
//! search's jobs, so the app's workers and the CLI's threads run them alike.

use crate::capacity::{size_fleet, CapacityError};
pub use crate::plan::schedule::{
    RateProfile, ScheduleOptions, ScheduleSpec, ScheduleSpecError, MAX_MINUTES, MAX_MIN_REPLICAS,
    MAX_PROFILE_VALUE, MAX_SCHEDULE_REPLICATIONS,
};
use crate::plan::Plan;
use crate::sim::SimConfigOf;
use crate::sim::{self, replication_seed, SimConfig, SimError};
use crate::trace::TraceSummary;
use crate::traffic::RateStep;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Minutes simulated before each hour as warm-up.
pub const LEAD_IN_MIN: usize = 10;
/// Most requests one ramp simulation runs.
pub const MAX_RAMP_REQUESTS: u32 = 100_000;
/// Fewest measured requests in a ramp simulation (a quiet hour runs past its end).
pub const MIN_RAMP_MEASURED: u32 = 200;

/// A shape's name as a page shows it: "business-hours" reads "Business hours".
pub fn shape_words(name: &str) -> String {
    crate::format::capitalized(&name.replace('-', " "))
}

/// The named shapes: name, what it is, 24 hourly values (peak 1).
pub const SHAPES: [(&str, &str, [f64; 24]); 3] = [
    ("flat", "the same rate every hour", [1.0; 24]),
    (
        "business-hours",
        "one region's working day: quiet nights, a morning ramp, a lunch dip, an evening fall",
        [
            0.06, 0.05, 0.05, 0.05, 0.05, 0.07, 0.12, 0.30, 0.65, 0.90, 1.00, 0.95, 0.85, 0.95,
            1.00, 0.95, 0.85, 0.60, 0.35, 0.22, 0.16, 0.12, 0.09, 0.07,
        ],
    ),
    (
        "global-consumer",
        "users in several regions: a milder swing, trough about half the peak",
        [
            0.55, 0.50, 0.47, 0.45, 0.45, 0.48, 0.55, 0.63, 0.72, 0.80, 0.86, 0.90, 0.93, 0.95,
            0.97, 1.00, 1.00, 0.98, 0.95, 0.90, 0.83, 0.75, 0.67, 0.60,
        ],
    ),
];

/// Why a schedule cannot be made. Each variant says what to change.
#[derive(Debug, Clone, PartialEq)]
pub enum ScheduleError {
    /// The rate profile is unusable, or an option is out of range.
    Spec(ScheduleSpecError),
    /// The fleet cannot be sized (zero goodput, bad planning inputs).
    Capacity(CapacityError),
    /// A simulation could not run.
    Sim(SimError),
}

impl std::fmt::Display for ScheduleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScheduleError::Spec(e) => write!(f, "{e}"),
            ScheduleError::Capacity(e) => write!(f, "{e}"),
            ScheduleError::Sim(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ScheduleError {}

impl From<CapacityError> for ScheduleError {
    fn from(e: CapacityError) -> Self {
        ScheduleError::Capacity(e)
    }
}

impl From<ScheduleSpecError> for ScheduleError {
    fn from(e: ScheduleSpecError) -> Self {
        ScheduleError::Spec(e)
    }
}

impl From<SimError> for ScheduleError {
    fn from(e: SimError) -> Self {
        ScheduleError::Sim(e)
    }
}

impl RateProfile {
    /// A named shape ([`SHAPES`]).
    pub fn named(name: &str) -> Result<RateProfile, ScheduleSpecError> {
        let key = name.trim().to_ascii_lowercase().replace('_', "-");
        SHAPES
            .iter()
            .find(|(n, _, _)| *n == key)
            .map(|(n, _, v)| RateProfile {
                hourly: v.to_vec(),
                absolute: false,
                source: format!("{} shape", shape_words(n)),
            })
            .ok_or_else(|| {
                let names: Vec<&str> = SHAPES.iter().map(|s| s.0).collect();
                ScheduleSpecError::Profile(format!(
                    "unknown shape '{name}'; the shapes are {}",
                    names.join(", ")
                ))
            })
    }

    /// Hourly numbers as text: one per line, or comma-separated, or `hour,rate` rows (in
    /// any order; each hour once). Blank lines, `#` comments and a non-numeric first line
    /// (a header) are skipped. 24 or 168 values; a shape unless `absolute`.
    pub fn parse(text: &str, absolute: bool) -> Result<RateProfile, ScheduleSpecError> {
        // (line number, its numbers, whether it is one `a,b` pair)
        let mut lines: Vec<(usize, Vec<f64>, bool)> = Vec::new();
        let mut first = true;
        let mut header = None;
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            // Numbers are separated by commas, semicolons, tabs or spaces.
            let fields: Vec<&str> = line
                .split(|c: char| c == ',' || c == ';' || c.is_whitespace())
                .filter(|f| !f.is_empty())
                .collect();
            let numbers: Result<Vec<f64>, &str> = fields
                .iter()
                .map(|f| f.parse::<f64>().map_err(|_| *f))
                .collect();
            let was_first = std::mem::replace(&mut first, false);
            let numbers = match numbers {
                Ok(numbers) => numbers,
                Err(_) if was_first => {
                    header = Some(line.chars().take(40).collect::<String>());
                    continue;
                }
                Err(word) => {
                    return Err(ScheduleSpecError::Profile(format!(
                        "line {}: '{}' is not a number",
                        i + 1,
                        word.chars().take(24).collect::<String>()
                    )))
                }
            };
            let pair = fields.len() == 2 && !line.contains(';');
            lines.push((i + 1, numbers, pair));
            if lines.len() > 168 {
                return Err(ScheduleSpecError::Profile(format!(
                    "more than 168 values (line {})",
                    i + 1
                )));
            }
        }
        if let (true, Some(h)) = (lines.is_empty(), header) {
            return Err(ScheduleSpecError::Profile(format!(
                "no numbers: '{h}' is not a number (a first line of words is read as a header)"
            )));
        }
        let values = match hour_rows(&lines)? {
            Some(values) => values,
            None => lines
                .into_iter()
                .flat_map(|(_, numbers, _)| numbers)
                .collect(),
        };
        if values.len() > 168 {
            return Err(ScheduleSpecError::Profile(format!(
                "{} values; give 24 (a day) or 168 (a week)",
                values.len()
            )));
        }
        let p = RateProfile {
            hourly: values,
            absolute,
            source: if absolute {
                "hourly rates given".into()
            } else {
                "hourly shape given".into()
            },
        };
        p.validate()?;
        Ok(p)
    }

    /// The trace's rate per hour of the day, as a shape. Every hour must be covered by at
    /// least a minute of the trace.
    pub fn from_trace(t: &TraceSummary) -> Result<RateProfile, ScheduleSpecError> {
        let missing: Vec<String> = t
            .hourly_rate_rps
            .iter()
            .enumerate()
            .filter(|(_, r)| r.is_none())
            .map(|(h, _)| h.to_string())
            .collect();
        if !missing.is_empty() {
            return Err(ScheduleSpecError::Profile(format!(
                "the trace covers {} of 24 hours of the day ({:.1} h from first to last request); a daily profile needs at least a day of trace, or an hourly profile given as well (--profile on the command line)",
                24 - missing.len(),
                t.span_s / 3600.0
            )));
        }
        let p = RateProfile {
            hourly: t.hourly_rate_rps.iter().map(|r| r.unwrap_or(0.0)).collect(),
            absolute: false,
            source: format!("{} trace, {} requests", t.format.name(), t.rows),
        };
        p.validate()?;
        Ok(p)
    }
}

/// One hour of the schedule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HourRow {
    /// Hour index in the period (0 = midnight; for a week, 0 = Monday midnight).
    pub hour: u32,
    /// Fleet arrival rate [requests/s].
    pub rate_rps: f64,
    /// Replicas this hour needs: ⌈rate / planned rate⌉ + redundancy (at least the minimum).
    pub replicas: u32,
    /// Fewest autoscaled replicas serving during the hour.
    pub serving_min: u32,
    /// Most autoscaled replicas serving during the hour.
    pub serving_max: u32,
    /// Replica-hours billed (serving or starting) [replica·h].
    pub billed_replica_hours: f64,
    /// Autoscaled cost of the hour [USD].
    pub cost_usd: f64,
    /// The static fleet's cost of the hour [USD].
    pub static_cost_usd: f64,
    /// Highest rate one serving replica sees in the hour [requests/s].
    pub per_replica_peak_rps: f64,
    /// True when the autoscaled fleet changes during the hour (or its 10-minute lead-in)
    /// or serves fewer replicas than the hour needs: a scaling ramp.
    pub ramp: bool,
    /// Simulated SLO attainment of the hour's requests under the autoscaled fleet
    /// (None: no traffic, or not simulated) [0..1].
    pub attainment: Option<f64>,
}

/// The whole schedule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Schedule {
    /// Where the profile came from.
    pub profile_source: String,
    /// Hours in the period (24 or 168).
    pub period_hours: u32,
    /// Goodput of one replica [requests/s].
    pub goodput_rps: f64,
    /// Planned rate per replica: goodput × utilisation [requests/s].
    pub planned_rps_per_replica: f64,
    /// The profile's highest hourly rate [requests/s].
    pub peak_rate_rps: f64,
    /// Replicas of the static fleet, sized for the peak.
    pub static_replicas: u32,
    /// GPUs per replica.
    pub gpus_per_replica: u32,
    /// Every hour.
    pub hours: Vec<HourRow>,
    /// Static fleet, one period [USD].
    pub static_cost_per_period_usd: f64,
    /// Autoscaled fleet, one period [USD].
    pub autoscaled_cost_per_period_usd: f64,
    /// Static fleet per day (period cost × 24 / period hours) [USD].
    pub static_cost_per_day_usd: f64,
    /// Autoscaled fleet per day [USD].
    pub autoscaled_cost_per_day_usd: f64,
    /// Static fleet per month of `planning.hours_per_month` [USD].
    pub static_cost_per_month_usd: f64,
    /// Autoscaled fleet per month [USD].
    pub autoscaled_cost_per_month_usd: f64,
    /// Static minus autoscaled, per month [USD].
    pub savings_per_month_usd: f64,
    /// Savings as a share of the static cost [0..1].
    pub savings_share: f64,
    /// Share of all requests (hours weighted by rate) within the SLO, autoscaled [0..1].
    pub attainment: Option<f64>,
    /// The same over the ramp hours only [0..1].
    pub ramp_attainment: Option<f64>,
    /// The lowest hourly attainment [0..1].
    pub min_attainment: Option<f64>,
    /// Simulations run (hours with traffic × replications).
    pub simulations: u32,
    /// Requests those simulations hold, warm-up included.
    pub simulated_requests: u64,
    /// The options used.
    pub options: ScheduleOptions,
}

/// One simulation of one replica over one hour's window: a message to a worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RampJob {
    /// Unique id within its schedule.
    pub id: u32,
    /// The hour it measures.
    pub hour: u32,
    /// Replication index.
    pub replication: u32,
    /// Seed: `replication_seed(plan.run.seed, replication)`.
    pub seed: u64,
    /// Rate after the steps (and the whole rate when there are none) [requests/s].
    pub rate_rps: f64,
    /// Piecewise-constant per-replica rate from the window's start (empty: steady).
    pub steps: Vec<RateStep>,
    /// Requests simulated, warm-up included.
    pub num_requests: u32,
    /// Requests of the lead-in, not measured.
    pub warmup_requests: u32,
}

/// What a worker returns for one [`RampJob`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RampJobResult {
    /// The job's id.
    pub id: u32,
    /// Attainment of the measured requests [0..1].
    pub attainment: f64,
}

/// Runs one job: what a worker calls, with the plan the schedule was built from. Traffic
/// is open loop (a closed loop becomes Poisson; a client cap is dropped), as in the
/// search; trace arrival times become Poisson too, since the schedule sets the rate.
pub fn run_ramp_job(plan: &Plan, job: &RampJob) -> Result<RampJobResult, SimError> {
    let base = SimConfig::from_plan(plan, job.rate_rps)?;
    run_ramp_job_with(&base, job)
}

/// [`run_ramp_job`] on a configuration resolved once.
pub fn run_ramp_job_with(base: &SimConfig, job: &RampJob) -> Result<RampJobResult, SimError> {
    let mut cfg = base.with_rate(job.rate_rps)?;
    // The schedule sets the rate over time, so replayed trace arrival times give way to
    // Poisson (trace lengths stay).
    cfg.traffic.arrival = match cfg.traffic.arrival.open_loop() {
        crate::plan::Arrival::Trace => crate::plan::Arrival::Poisson,
        a => a,
    };
    cfg.traffic.max_concurrency = None;
    cfg.traffic.rate_steps = job.steps.clone();
    cfg.num_requests = job.num_requests;
    cfg.warmup_requests = job.warmup_requests;
    Ok(RampJobResult {
        id: job.id,
        attainment: sim::attainment(&cfg, job.seed)?,
    })
}

/// The autoscaler's minute-by-minute fleet over one period: (serving, billed) per minute.
pub fn autoscale(
    desired: &[u32],
    lag_min: usize,
    cooldown_min: usize,
    lead_min: usize,
) -> (Vec<u32>, Vec<u32>) {
    let hours = desired.len();
    let p = hours * 60;
    let want_at = |m: usize| {
        let now = desired[(m / 60) % hours];
        let ahead = desired[((m + lead_min) / 60) % hours];
        now.max(ahead)
    };
    let mut serving = desired.iter().copied().max().unwrap_or(0);
    let mut pending: VecDeque<(usize, u32)> = VecDeque::new();
    let mut pending_sum = 0u32;
    // Monotonic deque of (minute, want) for the cool-down window's maximum.
    let mut window: VecDeque<(usize, u32)> = VecDeque::new();
    let mut out_serving = vec![0; p];
    let mut out_billed = vec![0; p];
    for m in 0..2 * p {
        let w = want_at(m);
        while window.back().is_some_and(|&(_, x)| x <= w) {
            window.pop_back();
        }
        window.push_back((m, w));
        while window.front().is_some_and(|&(i, _)| i + cooldown_min < m) {
            window.pop_front();
        }
        let down_target = window.front().map_or(w, |&(_, x)| x.max(w));
        let total = serving + pending_sum;
        if w > total {
            pending.push_back((m + lag_min, w - total));
            pending_sum += w - total;
        } else if total > down_target {
            let mut excess = total - down_target;
            while excess > 0 {
                match pending.back_mut() {
                    Some(last) => {
                        let k = last.1.min(excess);
                        last.1 -= k;
                        pending_sum -= k;
                        excess -= k;
                        if last.1 == 0 {
                            pending.pop_back();
                        }
                    }
                    None => {
                        serving -= excess;
                        excess = 0;
                    }
                }
            }
        }
        while pending.front().is_some_and(|&(ready, _)| ready <= m) {
            let (_, k) = pending.pop_front().unwrap_or((0, 0));
            serving += k;
            pending_sum -= k;
        }
        if m >= p {
            out_serving[m - p] = serving;
            out_billed[m - p] = serving + pending_sum;
        }
    }
    (out_serving, out_billed)
}

/// A schedule being worked out: the arithmetic at once, the simulations as jobs.
///
/// ```text
///   ScheduleRun::new ─▶ next_batch() ─▶ [RampJob ...] ─▶ run_ramp_job (anywhere) ─┐
///          ▲                                                                      │
///          └────────────── feed([RampJobResult ...]) ◀────────────────────────────┘
///   until is_done(); then result()   (arithmetic() is ready before any job runs)
/// ```
#[derive(Debug, Clone)]
pub struct ScheduleRun {
    schedule: Schedule,
    serving: Vec<u32>,
    jobs: Vec<RampJob>,
    handed_out: bool,
    results: Vec<Option<f64>>,
}

fn minutes(x: f64) -> usize {
    libm::round(x) as usize
}

impl ScheduleRun {
    /// Sizes every hour, runs the autoscaler and prepares the simulations.
    pub fn new(
        plan: &Plan,
        profile: &RateProfile,
        goodput_rps: f64,
        options: &ScheduleOptions,
    ) -> Result<ScheduleRun, ScheduleError> {
        profile.validate()?;
        options.validate()?;
        if options.simulate {
            plan.validate().map_err(SimError::from)?;
        }
        let rates = profile.rates_rps(plan.traffic.peak_rate_rps);
        let peak = rates.iter().cloned().fold(0.0, f64::max);
        let at = |rate: f64| -> Result<crate::capacity::CapacityPlan, CapacityError> {
            let mut p = plan.clone();
            p.traffic.peak_rate_rps = rate;
            size_fleet(goodput_rps, &p)
        };
        let fleet_at_peak = at(peak)?;
        let desired: Vec<u32> = rates
            .iter()
            .map(|&r| at(r).map(|c| c.replicas_total.max(options.min_replicas)))
            .collect::<Result<_, _>>()?;
        let static_replicas = fleet_at_peak.replicas_total.max(options.min_replicas);
        let gpus = fleet_at_peak.gpus_per_replica;
        let price = fleet_at_peak.gpu_hour_usd;
        let (serving, billed) = autoscale(
            &desired,
            minutes(options.scale_up_lag_min),
            minutes(options.cooldown_min),
            minutes(options.lead_min),
        );
        let n = rates.len();
        let replica_minute_usd = gpus as f64 * price / 60.0;
        let static_hour_usd = static_replicas as f64 * gpus as f64 * price;
        let p = n * 60;
        let per_replica = |m: usize| {
            let m = m % p;
            rates[m / 60] / serving[m].max(1) as f64
        };
        let mut hours = Vec::with_capacity(n);
        let mut jobs = Vec::new();
        for (h, &rate) in rates.iter().enumerate() {
            let span = h * 60..(h + 1) * 60;
            let billed_min: u64 = billed[span.clone()].iter().map(|&b| b as u64).sum();
            let window: Vec<f64> = (p + h * 60 - LEAD_IN_MIN..p + (h + 1) * 60)
                .map(per_replica)
                .collect();
            // Simulated as steps when the per-replica rate changes in the window; a ramp
            // (for the report) when the fleet changes or falls short of the hour's need.
            let stepped = window.windows(2).any(|w| w[0] != w[1]);
            let fleet = (p + h * 60 - LEAD_IN_MIN..p + (h + 1) * 60).map(|m| serving[m % p]);
            let ramp = fleet.clone().zip(fleet.skip(1)).any(|(a, b)| a != b)
                || serving[span.clone()].iter().any(|&s| s < desired[h]);
            hours.push(HourRow {
                hour: h as u32,
                rate_rps: rate,
                replicas: desired[h],
                serving_min: serving[span.clone()].iter().copied().min().unwrap_or(0),
                serving_max: serving[span.clone()].iter().copied().max().unwrap_or(0),
                billed_replica_hours: billed_min as f64 / 60.0,
                cost_usd: billed_min as f64 * replica_minute_usd,
                static_cost_usd: static_hour_usd,
                per_replica_peak_rps: window[LEAD_IN_MIN..].iter().cloned().fold(0.0, f64::max),
                ramp,
                attainment: None,
            });
            if !options.simulate || rate <= 0.0 {
                continue;
            }
            for r in 0..options.replications {
                let id = jobs.len() as u32;
                let seed = replication_seed(plan.run.seed, r);
                let end_rate = window[window.len() - 1];
                let job = if stepped {
                    ramp_job(id, h as u32, r, seed, &window, end_rate)
                } else {
                    RampJob {
                        id,
                        hour: h as u32,
                        replication: r,
                        seed,
                        rate_rps: end_rate,
                        steps: Vec::new(),
                        num_requests: plan.run.num_requests,
                        warmup_requests: plan.run.warmup_requests,
                    }
                };
                jobs.push(job);
            }
        }
        let period_h = n as f64;
        let static_period: f64 = hours.iter().map(|r| r.static_cost_usd).sum();
        let auto_period: f64 = hours.iter().map(|r| r.cost_usd).sum();
        let month = plan.planning.hours_per_month / period_h;
        let static_month = static_period * month;
        let auto_month = auto_period * month;
        let schedule = Schedule {
            profile_source: profile.source.clone(),
            period_hours: n as u32,
            goodput_rps,
            planned_rps_per_replica: fleet_at_peak.planned_rps_per_replica,
            peak_rate_rps: peak,
            static_replicas,
            gpus_per_replica: gpus,
            hours,
            static_cost_per_period_usd: static_period,
            autoscaled_cost_per_period_usd: auto_period,
            static_cost_per_day_usd: static_period * 24.0 / period_h,
            autoscaled_cost_per_day_usd: auto_period * 24.0 / period_h,
            static_cost_per_month_usd: static_month,
            autoscaled_cost_per_month_usd: auto_month,
            savings_per_month_usd: static_month - auto_month,
            savings_share: if static_month > 0.0 {
                (static_month - auto_month) / static_month
            } else {
                0.0
            },
            attainment: None,
            ramp_attainment: None,
            min_attainment: None,
            simulations: jobs.len() as u32,
            simulated_requests: jobs.iter().map(|j| j.num_requests as u64).sum(),
            options: options.clone(),
        };
        let results = vec![None; jobs.len()];
        Ok(ScheduleRun {
            schedule,
            serving,
            jobs,
            handed_out: false,
            results,
        })
    }

    /// The sizing and costs, before any simulation (attainment not yet known).
    pub fn arithmetic(&self) -> &Schedule {
        &self.schedule
    }

    /// Replicas serving in each minute of the period (for charts).
    pub fn serving_per_minute(&self) -> &[u32] {
        &self.serving
    }

    /// Every simulation, once; empty afterwards. They are independent: run them anywhere,
    /// in any order.
    pub fn next_batch(&mut self) -> Vec<RampJob> {
        if self.handed_out {
            return Vec::new();
        }
        self.handed_out = true;
        self.jobs.clone()
    }

    /// Takes results back (matched by id; unknown ids are ignored).
    pub fn feed(&mut self, results: &[RampJobResult]) {
        for r in results {
            if let Some(slot) = self.results.get_mut(r.id as usize) {
                *slot = Some(r.attainment);
            }
        }
    }

    /// True when every simulation is back.
    pub fn is_done(&self) -> bool {
        self.results.iter().all(Option::is_some)
    }

    /// (simulations back, simulations in all).
    pub fn progress(&self) -> (usize, usize) {
        (
            self.results.iter().filter(|r| r.is_some()).count(),
            self.results.len(),
        )
    }

    /// The schedule with its attainment, once every simulation is back.
    pub fn result(&self) -> Option<Schedule> {
        if !self.is_done() {
            return None;
        }
        let mut s = self.schedule.clone();
        let mut sum = vec![0.0; s.hours.len()];
        let mut count = vec![0u32; s.hours.len()];
        for (job, r) in self.jobs.iter().zip(&self.results) {
            sum[job.hour as usize] += r.unwrap_or(0.0);
            count[job.hour as usize] += 1;
        }
        for (h, row) in s.hours.iter_mut().enumerate() {
            if count[h] > 0 {
                row.attainment = Some(sum[h] / count[h] as f64);
            }
        }
        let weighted = |only_ramps: bool| {
            let (mut w, mut a) = (0.0, 0.0);
            for row in &s.hours {
                if let Some(x) = row.attainment {
                    if !only_ramps || row.ramp {
                        w += row.rate_rps;
                        a += row.rate_rps * x;
                    }
                }
            }
            (w > 0.0).then(|| a / w)
        };
        s.attainment = weighted(false);
        s.ramp_attainment = weighted(true);
        s.min_attainment = s.hours.iter().filter_map(|r| r.attainment).reduce(f64::min);
        Some(s)
    }
}

/// A ramp job from the per-minute per-replica rates of the window (lead-in first).
fn ramp_job(id: u32, hour: u32, replication: u32, seed: u64, window: &[f64], end: f64) -> RampJob {
    let mut steps: Vec<RateStep> = Vec::new();
    for &r in window {
        match steps.last_mut() {
            Some(s) if s.rate_rps == r => s.duration_s += 60.0,
            _ => steps.push(RateStep {
                duration_s: 60.0,
                rate_rps: r,
            }),
        }
    }
    let lead_in: f64 = window[..LEAD_IN_MIN].iter().map(|r| r * 60.0).sum();
    let total: f64 = window.iter().map(|r| r * 60.0).sum();
    let mut warmup = libm::round(lead_in) as u32;
    let mut n = (libm::round(total) as u32).max(warmup + MIN_RAMP_MEASURED);
    if n > MAX_RAMP_REQUESTS {
        warmup = (warmup as f64 * MAX_RAMP_REQUESTS as f64 / n as f64) as u32;
        n = MAX_RAMP_REQUESTS;
    }
    RampJob {
        id,
        hour,
        replication,
        seed,
        rate_rps: end.max(1e-6),
        steps,
        num_requests: n,
        warmup_requests: warmup.min(n - 1),
    }
}

/// Works out the whole schedule in-process, its simulations on `threads` threads.
pub fn schedule_threads(
    plan: &Plan,
    profile: &RateProfile,
    goodput_rps: f64,
    options: &ScheduleOptions,
    threads: usize,
) -> Result<Schedule, ScheduleError> {
    let mut run = ScheduleRun::new(plan, profile, goodput_rps, options)?;
    let jobs = run.next_batch();
    if !jobs.is_empty() {
        let base = SimConfig::from_plan(plan, jobs[0].rate_rps)?;
        let results =
            crate::sim::threads::map_in_order(&jobs, threads, |j| run_ramp_job_with(&base, j))?;
        run.feed(&results);
    }
    run.result().ok_or_else(|| {
        ScheduleError::Spec(ScheduleSpecError::Profile(
            "internal: a simulation did not report".into(),
        ))
    })
}

/// The values of `hour,rate` rows, placed by hour: `None` unless every line is one pair
/// and there are 24 or 168 of them. Then every first field must be a whole hour in
/// `0..n`, each once; a row out of order is fine, a gap or a repeat is named.
fn hour_rows(lines: &[(usize, Vec<f64>, bool)]) -> Result<Option<Vec<f64>>, ScheduleSpecError> {
    let n = lines.len();
    if !(n == 24 || n == 168) || !lines.iter().all(|(_, _, pair)| *pair) {
        return Ok(None);
    }
    let mut values: Vec<Option<(usize, f64)>> = vec![None; n];
    for (line, numbers, _) in lines {
        let hour = numbers[0];
        if !(hour.fract() == 0.0 && hour >= 0.0 && hour < n as f64) {
            return Err(ScheduleSpecError::Profile(format!(
                "line {line}: hour {hour} of an hour,rate row must be a whole number from 0 to {}",
                n - 1
            )));
        }
        let slot = &mut values[hour as usize];
        if let Some((earlier, _)) = slot {
            return Err(ScheduleSpecError::Profile(format!(
                "line {line}: hour {hour} is given twice (line {earlier} too)"
            )));
        }
        *slot = Some((*line, numbers[1]));
    }
    // n rows, each hour at most once: every hour is there.
    Ok(Some(values.into_iter().flatten().map(|(_, v)| v).collect()))
}

mod words;

#[cfg(test)]
mod link_tests;
#[cfg(test)]
mod tests;
