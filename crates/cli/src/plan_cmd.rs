//! `goodput plan`: the whole plan: goodput, capacity, cost, analytic companions, knob hint.

use goodput_core::report::{evaluate_plan_with, EvaluateOptions};

use clap::Command;

use crate::args::{json, switch, Args};

/// The command and its own flags; the plan flags are added from the registry.
pub fn command() -> Command {
    Command::new("plan")
        .about("the whole plan: goodput, capacity, cost, analytic companions")
        .long_about(
            "Runs the goodput search (or reads the knee of planning.measured_sweep), the knob \
             sweep, and prints the plan report: goodput, fleet and cost, analytic companions \
             with warnings, the best-knob hint, engine flags and alert rules.",
        )
        .arg(switch(
            "no-sweep",
            "Skip the knob sweep (no best-knob hint)",
        ))
        .arg(crate::search::threads_arg())
        .arg(json("The report as JSON"))
        .arg(switch(
            "markdown",
            "The report as Markdown (the default output)",
        ))
}

/// Runs the command.
pub fn run(args: &mut Args) -> Result<String, String> {
    let json = args.flag("--json");
    let markdown = args.flag("--markdown");
    if json && markdown {
        return Err("--json and --markdown: give one, not both".into());
    }
    let no_sweep = args.flag("--no-sweep");
    let threads = crate::search::threads(args)?;
    let plan = args.plan()?;
    let options = EvaluateOptions {
        sweep: !no_sweep,
        threads,
    };
    let mut line = crate::progress::ProgressLine::new("plan", "simulations");
    let report =
        evaluate_plan_with(&plan, options, &mut line.callback()).map_err(|e| e.to_string())?;
    if json {
        return serde_json::to_string_pretty(&report).map_err(|e| format!("plan: {e}"));
    }
    Ok(report.to_markdown())
}
