//! `goodput search`: the goodput of the plan's engine settings, with its curve.

use goodput_core::capacity::MAX_GOODPUT_RPS;
use goodput_core::format::{percent, rps, sig};
use goodput_core::search::{default_threads, search_goodput_threads, GoodputResult};

use clap::{Arg, Command};

use crate::args::{json, whole, Args};

/// The command and its own flags; the plan flags are added from the registry.
pub fn command() -> Command {
    Command::new("search")
        .about("find the goodput: the highest rate whose attainment meets the target")
        .long_about(
            "Finds the highest arrival rate whose mean attainment over run.replications seeds \
             meets slo.attainment_target (joint, or per objective with --slo-mode marginal), \
             and prints it with its 95% range and the curve. The search asks about open-loop \
             traffic: a closed loop (--arrival closed) is searched with Poisson arrivals of \
             the same lengths, and --max-concurrency is ignored.",
        )
        .arg(threads_arg())
        .arg(json(
            "Print {goodput_rps, goodput_range_rps, curve: [{rate_rps, attainment, ci95, ...}], ...}",
        ))
}

/// Most simulation threads `--threads` takes.
const MAX_THREADS: u32 = 256;

/// `--threads N`, which every simulating command takes.
pub fn threads_arg() -> Arg {
    whole(
        "threads",
        "N",
        format!(
            "Simulation threads (default: every core); the answer does not depend on it \
             [whole number in 1..={MAX_THREADS}]"
        ),
    )
}

/// Reads `--threads N` (default: every core).
pub fn threads(args: &Args) -> Result<usize, String> {
    match args.u32("--threads") {
        None => Ok(default_threads()),
        Some(0) => Err("--threads: must be at least 1".into()),
        Some(n) if n > MAX_THREADS => Err(format!("--threads: at most {MAX_THREADS}, got {n}")),
        Some(n) => Ok(n as usize),
    }
}

/// The replica goodput given with `--goodput` (capacity, alerts), checked: a number in
/// [0, [`MAX_GOODPUT_RPS`]] requests/s.
pub fn given_goodput(args: &Args) -> Result<Option<f64>, String> {
    match args.f64("--goodput") {
        Some(g) if !(g.is_finite() && (0.0..=MAX_GOODPUT_RPS).contains(&g)) => Err(format!(
            "--goodput: must be a number of requests/s in 0..={}, got {}",
            sig(MAX_GOODPUT_RPS),
            sig(g)
        )),
        g => Ok(g),
    }
}

/// Runs the command.
pub fn run(args: &mut Args) -> Result<String, String> {
    let json = args.flag("--json");
    let threads = threads(args)?;
    let plan = args.plan()?;
    let mut line = crate::progress::ProgressLine::new("goodput search", "simulations");
    let r =
        search_goodput_threads(&plan, threads, &mut line.callback()).map_err(|e| e.to_string())?;
    if json {
        return serde_json::to_string_pretty(&r).map_err(|e| format!("search: {e}"));
    }
    Ok(text(&r))
}

/// The result as a table.
pub fn text(r: &GoodputResult) -> String {
    let mut s = format!(
        "goodput: {} req/s (95% range {} to {}) at {} attainment, {} replications per rate\n{}\n\n",
        rps(r.goodput_rps),
        rps(r.goodput_range_rps[0]),
        rps(r.goodput_range_rps[1]),
        percent(r.target),
        r.replications,
        r.reason
    );
    s.push_str(
        "rate_rps  attainment  ci95            ttft_p50_s  ttft_p99_s  tpot_p50_ms  tpot_p99_ms\n",
    );
    for c in &r.curve {
        let d = c.detail.map_or(
            "          –           –            –            –".to_string(),
            |d| {
                format!(
                    "{:>10.3}  {:>10.3}  {:>11.1}  {:>11.1}",
                    d.ttft_p50_s,
                    d.ttft_p99_s,
                    d.tpot_p50_s * 1e3,
                    d.tpot_p99_s * 1e3
                )
            },
        );
        s.push_str(&format!(
            "{:>8.3}  {:>9.1}%  {:>5.1}%–{:>5.1}%  {d}\n",
            c.rate_rps,
            c.attainment * 100.0,
            c.ci95[0] * 100.0,
            c.ci95[1] * 100.0
        ));
    }
    s.push_str(&format!("{} simulations", r.jobs_run));
    s
}
