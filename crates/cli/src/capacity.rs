//! `goodput capacity`: replicas, GPUs and cost from a goodput or a measured sweep.

use goodput_core::capacity::{knee_from_sweep, parse_sweep_csv, size_fleet, CapacityPlan};
use goodput_core::format::{percent, usd};
use goodput_core::search::search_goodput_threads;

use clap::Command;

use crate::args::{json, real, text_flag, Args};

/// The command and its own flags; the plan flags are added from the registry.
pub fn command() -> Command {
    Command::new("capacity")
        .about("replicas, GPUs and cost from --goodput R or a measured --sweep FILE.csv")
        .long_about(
            "Sizes the fleet from one replica's goodput: --goodput R, or the knee at \
             --slo-attainment of a measured --sweep. Without either, the plan's measured sweep \
             is used if it has rows, else the simulator's goodput search.",
        )
        .arg(real("goodput", "R", "Goodput of one replica [requests/s]"))
        .arg(text_flag(
            "sweep",
            "FILE",
            "A measured load test: lines of 'rate,attainment' (header optional, attainment as \
             a fraction or percent; '-' reads stdin); the goodput is the knee at --slo-attainment",
        ))
        .arg(crate::search::threads_arg())
        .arg(json(
            "Print {goodput_rps, planned_rps_per_replica, replicas_for_peak, replicas_total, \
             gpus_total, cost_per_hour_usd, cost_per_month_usd, cost_per_compliant_request_usd, ...}",
        ))
}

fn read_sweep(path: &str) -> Result<String, String> {
    crate::input::read_text("--sweep", path, 8 << 20)
}

/// Runs the command.
pub fn run(args: &mut Args) -> Result<String, String> {
    let json = args.flag("--json");
    let goodput = crate::search::given_goodput(args)?;
    let sweep = args.value("--sweep");
    let threads = crate::search::threads(args)?;
    let plan = args.plan()?;
    let target = plan.slo.attainment_target;
    let (goodput, source) = match (goodput, sweep) {
        (Some(_), Some(_)) => return Err("--goodput and --sweep: give one, not both".into()),
        (Some(g), None) => (g, "given".to_string()),
        (None, Some(path)) => {
            let rows = parse_sweep_csv(&read_sweep(&path)?).map_err(|e| format!("--sweep: {e}"))?;
            let g = knee_from_sweep(&rows, target).map_err(|e| format!("--sweep: {e}"))?;
            (
                g,
                format!(
                    "knee of the measured sweep at {} attainment",
                    percent(target)
                ),
            )
        }
        (None, None) if !plan.planning.measured_sweep.is_empty() => {
            let g = knee_from_sweep(&plan.planning.measured_sweep, target)
                .map_err(|e| format!("planning.measured_sweep: {e}"))?;
            (
                g,
                format!(
                    "knee of the plan's measured sweep at {} attainment",
                    percent(target)
                ),
            )
        }
        (None, None) => {
            let mut line = crate::progress::ProgressLine::new("goodput search", "simulations");
            let r = search_goodput_threads(&plan, threads, &mut line.callback())
                .map_err(|e| e.to_string())?;
            (
                r.goodput_rps,
                format!("simulated, {} replications per rate", r.replications),
            )
        }
    };
    let c = size_fleet(goodput, &plan).map_err(|e| e.to_string())?;
    if json {
        let mut v = serde_json::to_value(&c).map_err(|e| format!("capacity: {e}"))?;
        if let Some(obj) = v.as_object_mut() {
            obj.insert("goodput_source".into(), serde_json::Value::String(source));
        }
        return serde_json::to_string_pretty(&v).map_err(|e| format!("capacity: {e}"));
    }
    Ok(text(&c, &source))
}

fn num(x: f64) -> String {
    goodput_core::format::plain((x * 1e4).round() / 1e4)
}

/// The fleet in plain lines.
pub fn text(c: &CapacityPlan, source: &str) -> String {
    [
        format!(
            "goodput_rps                     {} ({source})",
            num(c.goodput_rps)
        ),
        format!(
            "planned_rps_per_replica         {} ({}% of goodput)",
            num(c.planned_rps_per_replica),
            num(c.utilization * 100.0)
        ),
        format!(
            "replicas_for_peak               {} (peak {} req/s)",
            c.replicas_for_peak,
            num(c.peak_rate_rps)
        ),
        format!(
            "replicas_total                  {} (+{} redundancy)",
            c.replicas_total, c.redundancy
        ),
        format!(
            "gpus_total                      {} ({} per replica)",
            c.gpus_total, c.gpus_per_replica
        ),
        format!(
            "cost_per_hour_usd               {}",
            usd(c.cost_per_hour_usd)
        ),
        format!(
            "cost_per_month_usd              {}",
            usd(c.cost_per_month_usd)
        ),
        format!(
            "cost_per_compliant_request_usd  {}",
            usd(c.cost_per_compliant_request_usd)
        ),
        format!(
            "cost_per_million_output_tokens  {} (mean output {:.0} tokens)",
            usd(c.cost_per_million_output_tokens_usd),
            c.mean_output_tokens
        ),
    ]
    .join("\n")
}
