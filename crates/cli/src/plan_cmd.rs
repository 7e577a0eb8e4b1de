//! `goodput plan`: the whole plan: goodput, capacity, cost, analytic companions, knob hint.

use goodput_core::report::{evaluate_plan_with, EvaluateOptions};

use crate::args::Args;

const USAGE: &str = "\
usage: goodput plan [--plan FILE | --link URL] [plan flags] [--no-sweep] [--threads N] [--json | --markdown]

Runs the goodput search (or reads the knee of planning.measured_sweep), the knob
sweep, and prints the plan report: goodput, fleet and cost, analytic companions with
warnings, the best-knob hint, engine flags and alert rules.
  --no-sweep    skip the knob sweep (no best-knob hint)
  --threads N   simulation threads (default: every core)
  --json        the report as JSON
  --markdown    the report as Markdown (the default output)";

/// Runs the command.
pub fn run(args: &mut Args) -> Result<String, String> {
    if args.flag("--help") || args.flag("-h") {
        return Ok(USAGE.to_string());
    }
    let json = args.flag("--json");
    let markdown = args.flag("--markdown");
    if json && markdown {
        return Err("--json and --markdown: give one, not both".into());
    }
    let no_sweep = args.flag("--no-sweep");
    let threads = crate::search::threads(args)?;
    let plan = args.plan()?;
    args.clone().finish()?;
    let options = EvaluateOptions {
        sweep: !no_sweep,
        threads,
    };
    let report = evaluate_plan_with(&plan, options, &mut |_| true).map_err(|e| e.to_string())?;
    if json {
        return serde_json::to_string_pretty(&report).map_err(|e| format!("plan: {e}"));
    }
    Ok(report.to_markdown())
}
