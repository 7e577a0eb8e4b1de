//! Capacity and cost: from a replica's goodput to replicas, GPUs and dollars.
//!
//! ```text
//!   goodput ──× utilisation──▶ planned rate per replica
//!   peak / planned ──ceil──▶ replicas for peak ──+ redundancy──▶ replicas total ──× GPUs──▶ GPUs
//!   GPU-hour × GPUs per replica / (planned rate × 3600) ──▶ cost per compliant request
//! ```
//!
//! Goodput comes from the simulator or from a measured load-test sweep: paste the
//! `rate,attainment` rows and [`knee_from_sweep`] reads the knee off the table.

use crate::analytic::MeanLengths;
use crate::plan::{Plan, SweepRow, MAX_SWEEP_ROWS};
use serde::{Deserialize, Serialize};

/// Seconds in an hour.
const SECONDS_PER_HOUR: f64 = 3600.0;

/// Most replicas a plan may ask for; beyond this the inputs are surely wrong.
pub const MAX_REPLICAS: f64 = 1.0e6;

/// The fleet a plan needs and what it costs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapacityPlan {
    /// Goodput of one replica [requests/s].
    pub goodput_rps: f64,
    /// Share of goodput each replica is planned to run at [0..1].
    pub utilization: f64,
    /// Planned rate per replica: goodput × utilisation [requests/s].
    pub planned_rps_per_replica: f64,
    /// Forecast fleet peak [requests/s].
    pub peak_rate_rps: f64,
    /// Replicas the peak needs: ⌈peak / planned rate⌉.
    pub replicas_for_peak: u32,
    /// Spare replicas (N+1 = 1).
    pub redundancy: u32,
    /// Replicas to run: replicas for peak + redundancy.
    pub replicas_total: u32,
    /// GPUs per replica (the tensor-parallel degree).
    pub gpus_per_replica: u32,
    /// GPUs to run: replicas total × GPUs per replica.
    pub gpus_total: u32,
    /// Price of one GPU-hour [USD].
    pub gpu_hour_usd: f64,
    /// Cost of the whole fleet per hour [USD/h].
    pub cost_per_hour_usd: f64,
    /// Cost of the whole fleet per month of `hours_per_month` hours [USD/month].
    pub cost_per_month_usd: f64,
    /// GPU-hour price × GPUs per replica / (planned rate × 3600) [USD/request].
    pub cost_per_compliant_request_usd: f64,
    /// Mean output tokens per request used for the token cost [tokens].
    pub mean_output_tokens: f64,
    /// Cost of a million output tokens at the planned rate [USD/1M tokens].
    pub cost_per_million_output_tokens_usd: f64,
    /// The fleet if the peak comes in [`SENSITIVITY`] of the forecast: below it, at it
    /// and above it.
    #[serde(default)]
    pub sensitivity: Vec<PeakSensitivity>,
}

/// The shares of the forecast peak the sensitivity line sizes the fleet for.
pub const SENSITIVITY: [f64; 3] = [0.8, 1.0, 1.2];

/// The fleet for a peak other than the forecast, the goodput and price unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PeakSensitivity {
    /// The peak's share of the forecast (0.8 = 20% below) [share].
    pub share_of_forecast: f64,
    /// That peak [requests/s].
    pub peak_rate_rps: f64,
    /// Replicas to run, spare ones included.
    pub replicas_total: u32,
    /// GPUs to run.
    pub gpus_total: u32,
    /// Cost per month [USD/month].
    pub cost_per_month_usd: f64,
}

/// Why a fleet cannot be sized. Each variant says what to change.
#[derive(Debug, Clone, PartialEq)]
pub enum CapacityError {
    /// Goodput is zero or negative: no replica meets the SLO at any rate, so no replica
    /// count serves the peak. Relax the SLO, change the engine settings or the hardware.
    ZeroGoodput {
        /// The goodput given [requests/s].
        goodput_rps: f64,
    },
    /// An input is not a finite number in its allowed range.
    Invalid {
        /// The input's name (`goodput_rps`, `planning.utilization`, ...).
        field: &'static str,
        /// What it must be.
        message: String,
    },
    /// The peak needs more than [`MAX_REPLICAS`] replicas; check the peak and the goodput.
    TooManyReplicas {
        /// Replicas the inputs ask for.
        replicas: f64,
    },
    /// The measured sweep has no rows; paste `rate,attainment` rows.
    EmptySweep,
    /// A sweep row is out of range: rates must be finite and > 0, attainment in [0, 1].
    BadSweepRow {
        /// Index of the row (0-based, in the order given).
        row: usize,
        /// What is wrong.
        message: String,
    },
    /// Even the lowest measured rate misses the target: measure lower rates, or relax the SLO.
    NoRateMeetsTarget {
        /// The lowest rate in the sweep [requests/s].
        lowest_rate_rps: f64,
        /// Its attainment [0..1].
        attainment: f64,
        /// The target [0..1].
        target: f64,
    },
}

impl std::fmt::Display for CapacityError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CapacityError::ZeroGoodput { goodput_rps } => write!(
                f,
                "goodput is {goodput_rps} req/s: no replica meets the SLO, so no replica count can serve the peak; relax the SLO or change the engine settings or hardware"
            ),
            CapacityError::Invalid { field, message } => write!(f, "{field}: {message}"),
            CapacityError::TooManyReplicas { replicas } => write!(
                f,
                "the peak needs {replicas:.3e} replicas (limit {MAX_REPLICAS:.0e}); check the peak rate and the goodput"
            ),
            CapacityError::EmptySweep => {
                write!(f, "the measured sweep has no rows; give rate,attainment rows")
            }
            CapacityError::BadSweepRow { row, message } => {
                write!(f, "sweep row {}: {message}", row + 1)
            }
            CapacityError::NoRateMeetsTarget {
                lowest_rate_rps,
                attainment,
                target,
            } => write!(
                f,
                "even the lowest measured rate ({lowest_rate_rps} req/s) has attainment {attainment} below the target {target}; measure lower rates or relax the SLO"
            ),
        }
    }
}

impl std::error::Error for CapacityError {}

fn check(field: &'static str, x: f64, lo: f64, hi: f64) -> Result<f64, CapacityError> {
    if x.is_finite() && x >= lo && x <= hi {
        Ok(x)
    } else {
        Err(CapacityError::Invalid {
            field,
            message: format!("must be a number in [{lo}, {hi}], got {x}"),
        })
    }
}

/// Ceiling that ignores float noise: 5.000000001 → 5, 5.36 → 6.
fn ceil_tolerant(x: f64) -> f64 {
    let r = libm::round(x);
    if (x - r).abs() <= 1e-9 * x.abs().max(1.0) {
        r
    } else {
        libm::ceil(x)
    }
}

/// Highest goodput per replica the fleet sizing takes \[requests/s\].
pub const MAX_GOODPUT_RPS: f64 = 1e9;

/// Sizes the fleet for a replica goodput of `goodput_rps`, with the plan's peak
/// (`traffic.peak_rate_rps`), utilisation, redundancy, GPUs per replica
/// (`hardware.tp_degree`), GPU-hour price and hours per month.
pub fn size_fleet(goodput_rps: f64, plan: &Plan) -> Result<CapacityPlan, CapacityError> {
    let goodput = check("goodput_rps", goodput_rps, 0.0, MAX_GOODPUT_RPS)?;
    if goodput <= 0.0 {
        return Err(CapacityError::ZeroGoodput { goodput_rps });
    }
    let util = check("planning.utilization", plan.planning.utilization, 0.0, 1.0)?;
    if util <= 0.0 {
        return Err(CapacityError::Invalid {
            field: "planning.utilization",
            message: "must be > 0 and ≤ 1 (the share of goodput a replica runs at), got 0".into(),
        });
    }
    let peak = check(
        "traffic.peak_rate_rps",
        plan.traffic.peak_rate_rps,
        0.0,
        1e9,
    )?;
    let price = check(
        "hardware.gpu_hour_usd",
        plan.hardware.gpu_hour_usd,
        0.0,
        1e6,
    )?;
    let hours = check(
        "planning.hours_per_month",
        plan.planning.hours_per_month,
        0.0,
        744.0,
    )?;
    let gpus_per_replica = plan.hardware.gpus_per_replica();
    let redundancy = plan.planning.redundancy;

    let planned = goodput * util;
    let needed = ceil_tolerant(peak / planned);
    let total_f = needed + redundancy as f64;
    if total_f.is_nan() || total_f * gpus_per_replica as f64 > MAX_REPLICAS {
        return Err(CapacityError::TooManyReplicas { replicas: total_f });
    }
    let replicas_for_peak = needed as u32;
    let replicas_total = replicas_for_peak + redundancy;
    let gpus_total = replicas_total * gpus_per_replica;
    let cost_per_hour = gpus_total as f64 * price;
    let replica_hour = price * gpus_per_replica as f64;
    let cost_per_request = replica_hour / (planned * SECONDS_PER_HOUR);
    let mean_output = MeanLengths::of(plan).output_tokens;
    let cost_per_mtok = if mean_output > 0.0 {
        cost_per_request / mean_output * 1e6
    } else {
        0.0
    };
    Ok(CapacityPlan {
        goodput_rps: goodput,
        utilization: util,
        planned_rps_per_replica: planned,
        peak_rate_rps: peak,
        replicas_for_peak,
        redundancy,
        replicas_total,
        gpus_per_replica,
        gpus_total,
        gpu_hour_usd: price,
        cost_per_hour_usd: cost_per_hour,
        cost_per_month_usd: cost_per_hour * hours,
        cost_per_compliant_request_usd: cost_per_request,
        mean_output_tokens: mean_output,
        cost_per_million_output_tokens_usd: cost_per_mtok,
        sensitivity: SENSITIVITY
            .iter()
            .map(|&share| {
                let replicas = ceil_tolerant(peak * share / planned) as u32 + redundancy;
                let gpus = replicas * gpus_per_replica;
                PeakSensitivity {
                    share_of_forecast: share,
                    peak_rate_rps: peak * share,
                    replicas_total: replicas,
                    gpus_total: gpus,
                    cost_per_month_usd: gpus as f64 * price * hours,
                }
            })
            .collect(),
    })
}

/// Reads goodput off a measured sweep: with rows sorted by rate, the highest rate whose
/// attainment is ≥ `target` below the first rate that misses it [requests/s].
///
/// Rows 4→0.99, 6→0.97, 8→0.93, 9→0.71, 10→0.38 at target 0.92 give 8.
/// If every row passes, the highest measured rate is returned (the knee lies beyond it).
pub fn knee_from_sweep(rows: &[SweepRow], target: f64) -> Result<f64, CapacityError> {
    let target = check("slo.attainment_target", target, 0.0, 1.0)?;
    if rows.is_empty() {
        return Err(CapacityError::EmptySweep);
    }
    for (i, r) in rows.iter().enumerate() {
        if !(r.rate_rps.is_finite() && r.rate_rps > 0.0) {
            return Err(CapacityError::BadSweepRow {
                row: i,
                message: format!("rate must be a finite number > 0, got {}", r.rate_rps),
            });
        }
        if !(r.attainment.is_finite() && (0.0..=1.0).contains(&r.attainment)) {
            return Err(CapacityError::BadSweepRow {
                row: i,
                message: format!("attainment must be in [0, 1], got {}", r.attainment),
            });
        }
    }
    let mut sorted = rows.to_vec();
    sorted.sort_by(|a, b| a.rate_rps.total_cmp(&b.rate_rps));
    let mut best = None;
    for r in &sorted {
        if r.attainment >= target {
            best = Some(r.rate_rps);
        } else {
            break;
        }
    }
    best.ok_or(CapacityError::NoRateMeetsTarget {
        lowest_rate_rps: sorted[0].rate_rps,
        attainment: sorted[0].attainment,
        target,
    })
}

/// Why sweep text could not be read: the 1-based line and what is wrong there.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepParseError {
    /// 1-based line number (0 when the problem is the text as a whole).
    pub line: usize,
    /// What is wrong, and what is expected.
    pub message: String,
}

impl std::fmt::Display for SweepParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            write!(f, "sweep: {}", self.message)
        } else {
            write!(f, "sweep line {}: {}", self.line, self.message)
        }
    }
}

impl std::error::Error for SweepParseError {}

/// Names an attainment column may have in a sweep header (matched case-insensitively).
const ATTAINMENT: [&str; 3] = ["attainment", "slo_attainment", "goodput_share"];

/// Parses sweep text: one `rate,attainment` row per line (commas, semicolons, tabs or
/// spaces separate), `#` comments and blank lines ignored. An optional header names the
/// columns, matched as in [`crate::measure`]'s tables: the rate column is `rate`
/// (`rate_rps`, `request_rate`, `qps`), the attainment column `attainment`
/// (`slo_attainment`, `goodput_share`), and other columns are ignored; without a header
/// the first two columns are used. Attainment may be a fraction (`0.93`) or a percent (`93` or `93%`):
/// a `%` sign, or any value above 1 in the column, makes the whole column percent.
pub fn parse_sweep_csv(text: &str) -> Result<Vec<SweepRow>, SweepParseError> {
    let err = |line: usize, message: String| SweepParseError { line, message };
    let mut cols = (0usize, 1usize);
    let mut seen_data = false;
    let mut raw: Vec<(usize, f64, f64, bool)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let body = line.split('#').next().unwrap_or("").trim();
        if body.is_empty() {
            continue;
        }
        let fields: Vec<&str> = body
            .split([',', ';', '\t', ' '])
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .collect();
        let looks_numeric = fields
            .first()
            .is_some_and(|f| f.trim_end_matches('%').parse::<f64>().is_ok());
        if !seen_data && !looks_numeric {
            // The same column matching as the measured-results table importer.
            // A header split on its comma, semicolon or tab keeps names like
            // `TTFT p99 (ms)` whole; a space-separated header splits on spaces.
            let header = match crate::cells::delimiter(body) {
                Some(d) => {
                    let cells = crate::cells::split_row(body, d);
                    crate::measure::table::Header::new(cells.iter().map(String::as_str))
                }
                None => crate::measure::table::Header::new(fields.iter().copied()),
            };
            let rate = header.find(&crate::measure::table::RATE);
            let att = header.find(&ATTAINMENT);
            match (rate, att) {
                (Some(r), Some(a)) if r != a => cols = (r, a),
                _ => {
                    return Err(err(
                        n,
                        format!(
                            "header '{body}' must name a 'rate' (or rate_rps, request_rate, \
                             qps) and an 'attainment' (or slo_attainment, goodput_share) column"
                        ),
                    ))
                }
            }
            seen_data = true;
            continue;
        }
        seen_data = true;
        if raw.len() >= MAX_SWEEP_ROWS {
            return Err(err(n, format!("more than {MAX_SWEEP_ROWS} rows")));
        }
        let need = cols.0.max(cols.1) + 1;
        if fields.len() < need {
            return Err(err(
                n,
                format!(
                    "expected {need} columns (rate, attainment), found {}",
                    fields.len()
                ),
            ));
        }
        let rate_txt = fields[cols.0];
        let rate: f64 = rate_txt
            .parse()
            .map_err(|_| err(n, format!("rate '{rate_txt}' is not a number")))?;
        if !(rate.is_finite() && rate > 0.0) {
            return Err(err(n, format!("rate must be > 0 req/s, got {rate_txt}")));
        }
        let att_txt = fields[cols.1];
        let percent = att_txt.ends_with('%');
        let att: f64 = att_txt
            .trim_end_matches('%')
            .trim()
            .parse()
            .map_err(|_| err(n, format!("attainment '{att_txt}' is not a number")))?;
        if !(att.is_finite() && (0.0..=100.0).contains(&att)) {
            return Err(err(
                n,
                format!("attainment must be a fraction in [0, 1] or a percent in [0, 100], got {att_txt}"),
            ));
        }
        raw.push((n, rate, att, percent));
    }
    if raw.is_empty() {
        return Err(err(0, "no rows; expected lines of rate,attainment".into()));
    }
    let as_percent = raw.iter().any(|&(_, _, a, p)| p || a > 1.0);
    // Percents, yet a bare value strictly between 0 and 1: most likely a fraction among
    // percents (0.99 next to 95), which would read as 0.99%. Ask rather than guess.
    if as_percent {
        let fraction = raw.iter().find(|&&(_, _, a, p)| !p && a > 0.0 && a < 1.0);
        let percent = raw.iter().find(|&&(_, _, a, p)| p || a > 1.0);
        if let (Some(&(nf, _, f, _)), Some(&(np, _, pc, _))) = (fraction, percent) {
            return Err(err(
                nf,
                format!(
                    "attainment {f} reads as a fraction, but line {np} ({pc}) is a percent; write every attainment one way (0.95 or 95%)"
                ),
            ));
        }
    }
    Ok(raw
        .into_iter()
        .map(|(_, rate, att, _)| SweepRow {
            rate_rps: rate,
            attainment: if as_percent { att / 100.0 } else { att },
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn article_rows() -> Vec<SweepRow> {
        [
            (4.0, 0.99),
            (6.0, 0.97),
            (8.0, 0.93),
            (9.0, 0.71),
            (10.0, 0.38),
        ]
        .into_iter()
        .map(|(rate_rps, attainment)| SweepRow {
            rate_rps,
            attainment,
        })
        .collect()
    }

    #[test]
    fn knee_ignores_order_and_stops_at_first_miss() {
        let mut rows = article_rows();
        rows.reverse();
        assert_eq!(knee_from_sweep(&rows, 0.92), Ok(8.0));
        assert_eq!(knee_from_sweep(&rows, 0.98), Ok(4.0));
        assert_eq!(knee_from_sweep(&rows, 0.30), Ok(10.0));
        // A pass after a miss does not count.
        rows.push(SweepRow {
            rate_rps: 12.0,
            attainment: 0.95,
        });
        assert_eq!(knee_from_sweep(&rows, 0.92), Ok(8.0));
        assert!(matches!(
            knee_from_sweep(&rows, 0.995),
            Err(CapacityError::NoRateMeetsTarget { lowest_rate_rps, .. }) if lowest_rate_rps == 4.0
        ));
        assert_eq!(knee_from_sweep(&[], 0.9), Err(CapacityError::EmptySweep));
        let bad = [SweepRow {
            rate_rps: f64::NAN,
            attainment: 0.9,
        }];
        assert!(matches!(
            knee_from_sweep(&bad, 0.9),
            Err(CapacityError::BadSweepRow { row: 0, .. })
        ));
    }

    #[test]
    fn zero_goodput_is_an_error_not_infinity() {
        let plan = Plan::default();
        assert_eq!(
            size_fleet(0.0, &plan),
            Err(CapacityError::ZeroGoodput { goodput_rps: 0.0 })
        );
        assert!(matches!(
            size_fleet(f64::NAN, &plan),
            Err(CapacityError::Invalid {
                field: "goodput_rps",
                ..
            })
        ));
        let mut p = plan.clone();
        p.planning.utilization = 0.0;
        assert!(matches!(
            size_fleet(8.0, &p),
            Err(CapacityError::Invalid {
                field: "planning.utilization",
                ..
            })
        ));
        assert!(matches!(
            size_fleet(1e-9, &plan),
            Err(CapacityError::TooManyReplicas { .. })
        ));
    }

    #[test]
    fn exact_multiples_do_not_round_up() {
        let mut plan = Plan::default();
        plan.traffic.peak_rate_rps = 28.0;
        plan.planning.redundancy = 0;
        let c = size_fleet(8.0, &plan).expect("sized");
        assert_eq!(c.replicas_for_peak, 5); // 28 / 5.6 = 5 exactly
        plan.traffic.peak_rate_rps = 0.0;
        let c = size_fleet(8.0, &plan).expect("sized");
        assert_eq!((c.replicas_for_peak, c.replicas_total), (0, 0));
    }

    #[test]
    fn costs_follow_the_formulas() {
        let mut plan = Plan::default();
        plan.hardware.gpu_hour_usd = 3.6;
        plan.hardware.tp_degree = 2;
        let c = size_fleet(8.0, &plan).expect("sized");
        assert_eq!(c.gpus_total, 14);
        assert!((c.cost_per_hour_usd - 14.0 * 3.6).abs() < 1e-9);
        assert!((c.cost_per_month_usd - 14.0 * 3.6 * 730.0).abs() < 1e-6);
        // 3.6 × 2 / (5.6 × 3600)
        assert!((c.cost_per_compliant_request_usd - 7.2 / (5.6 * 3600.0)).abs() < 1e-15);
        let per_tok = c.cost_per_compliant_request_usd / c.mean_output_tokens * 1e6;
        assert!((c.cost_per_million_output_tokens_usd - per_tok).abs() < 1e-12);
        // The peak 20% lower, as forecast, 20% higher: 24, 30 and 36 req/s over 5.6 a
        // replica need 5, 6 and 7 replicas, plus the spare: 12, 14 and 16 GPUs.
        let s: Vec<(u32, u32)> = c
            .sensitivity
            .iter()
            .map(|x| (x.replicas_total, x.gpus_total))
            .collect();
        assert_eq!(s, [(6, 12), (7, 14), (8, 16)]);
        assert_eq!(c.sensitivity[1].gpus_total, c.gpus_total);
        assert!((c.sensitivity[2].cost_per_month_usd - 16.0 * 3.6 * 730.0).abs() < 1e-6);
        assert!((c.sensitivity[0].peak_rate_rps - 24.0).abs() < 1e-12);
    }

    #[test]
    fn csv_forms() {
        let a = parse_sweep_csv("rate,attainment\n4,0.99\n6,0.97\n").expect("ok");
        assert_eq!(
            a[1],
            SweepRow {
                rate_rps: 6.0,
                attainment: 0.97
            }
        );
        let b = parse_sweep_csv("# load test\n4 99\n6\t97%\n\n8;93\n").expect("ok");
        assert_eq!(b.len(), 3);
        assert!((b[2].attainment - 0.93).abs() < 1e-12);
        let c = parse_sweep_csv("rate_rps,ttft_p95,attainment\n8,1.1,93%\n").expect("ok");
        assert!((c[0].attainment - 0.93).abs() < 1e-12);
        let e = parse_sweep_csv("rate,attainment\n4,0.99\n6,abc\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.to_string().contains("line 3"), "{e}");
        assert_eq!(parse_sweep_csv("").unwrap_err().line, 0);
        assert_eq!(parse_sweep_csv("foo,bar\n1,2").unwrap_err().line, 1);
        assert_eq!(parse_sweep_csv("4\n").unwrap_err().line, 1);
        assert_eq!(parse_sweep_csv("-4,0.5\n").unwrap_err().line, 1);
        // A fraction among percents is asked about, not read as 0.99%.
        let e = parse_sweep_csv("1,0.99\n2,95\n").unwrap_err();
        assert_eq!(e.line, 1);
        assert!(
            e.to_string()
                .contains("attainment 0.99 reads as a fraction, but line 2 (95) is a percent"),
            "{e}"
        );
        assert!(
            parse_sweep_csv("1,0.5%\n2,95\n").is_ok(),
            "0.5% is written as a percent"
        );
        assert!(parse_sweep_csv("1,0\n2,95\n").is_ok(), "0 is 0 either way");
        // A measured table: columns picked by name, in any order, the rest ignored.
        let t = parse_sweep_csv(
            "# from a load test\nTTFT p99 (ms),QPS,goodput_share,prompt_tokens\n900,4,0.97,512\n1400,8,0.91,512\n",
        )
        .expect("ok");
        assert_eq!(t.len(), 2);
        assert_eq!(t[1].rate_rps, 8.0);
        assert!((t[1].attainment - 0.91).abs() < 1e-12);
        let s = parse_sweep_csv("request_rate\tslo_attainment\n6\t97%\n").expect("ok");
        assert!((s[0].attainment - 0.97).abs() < 1e-12);
        // "rate" inside another name is not the rate column.
        assert_eq!(
            parse_sweep_csv("rate_limit_hits,attainment\n4,0.9\n")
                .unwrap_err()
                .line,
            1
        );
        assert_eq!(parse_sweep_csv("4,150\n").unwrap_err().line, 1);
    }

    /// Pasted sweep text holds as many rows as a plan does (they were 10,000 and
    /// 1,000): the most rows parse and validate in a plan, one more is refused.
    #[test]
    fn pasted_sweep_row_limit_is_the_plans() {
        let rows = |n: usize| -> String {
            (1..=n)
                .map(|i| format!("{i},{}\n", 1.0 - i as f64 / (2 * n) as f64))
                .collect()
        };
        let parsed = parse_sweep_csv(&rows(MAX_SWEEP_ROWS)).expect("the most rows parse");
        assert_eq!(parsed.len(), MAX_SWEEP_ROWS);
        let mut plan = Plan::default();
        plan.planning.measured_sweep = parsed;
        plan.validate().expect("and the plan holds them");
        let e = parse_sweep_csv(&rows(MAX_SWEEP_ROWS + 1)).expect_err("one row too many");
        assert_eq!(
            e.to_string(),
            format!(
                "sweep line {}: more than {MAX_SWEEP_ROWS} rows",
                MAX_SWEEP_ROWS + 1
            )
        );
    }
}
