//! `goodput alerts`: Prometheus burn-rate alert rules for the plan's SLO.

use goodput_core::alerts::alert_rules;
use goodput_core::capacity::{knee_from_sweep, CapacityError};
use goodput_core::search::search_goodput_threads;

use clap::Command;

use crate::args::{real, Args};

/// The command and its own flags; the plan flags are added from the registry.
pub fn command() -> Command {
    Command::new("alerts")
        .about("Prometheus burn-rate alert rules for the plan's SLO")
        .long_about(
            "Prints Prometheus rules: multi-window burn-rate alerts (page 14.4x over 1h and 5m, \
             page 6x over 6h and 30m, ticket 1x over 3d and 6h) on slo_met_total / slo_total, \
             and a queue-depth warning on vllm:num_requests_waiting whose threshold is the queue \
             one replica drains in half the TTFT objective at its goodput.",
        )
        .arg(real(
            "goodput",
            "R",
            "The replica goodput for the queue threshold [requests/s]; default: the knee of \
             planning.measured_sweep, else the simulator's goodput search",
        ))
        .arg(crate::search::threads_arg())
}

/// Runs the command.
pub fn run(args: &mut Args) -> Result<String, String> {
    let goodput = crate::search::given_goodput(args)?;
    let threads = crate::search::threads(args)?;
    let plan = args.plan()?;
    let g = match goodput {
        Some(g) => g,
        None if !plan.planning.measured_sweep.is_empty() => {
            knee_from_sweep(&plan.planning.measured_sweep, plan.slo.attainment_target)
                .unwrap_or(0.0)
        }
        None => {
            let mut line = crate::progress::ProgressLine::new("goodput search", "simulations");
            let r = search_goodput_threads(&plan, threads, &mut line.callback());
            r.map_err(|e| e.to_string())?.goodput_rps
        }
    };
    if g <= 0.0 {
        // No load meets the SLO: a queue threshold and a drain time would be made up.
        return Err(CapacityError::ZeroGoodput { goodput_rps: g }.to_string());
    }
    Ok(alert_rules(&plan, g).yaml.trim_end().to_string())
}
