//! `goodput sweep`: goodput over a grid of max_num_seqs × max_num_batched_tokens.

use goodput_core::format::{count, rps};
use goodput_core::plan::fields::{self, field};
use goodput_core::search::{sweep_knobs_threads, SweepResult};

use clap::Command;

use crate::args::{json, text_flag, Args};

/// The command and its own flags; the plan flags are added from the registry.
pub fn command() -> Command {
    Command::new("sweep")
        .about("goodput over a grid of max_num_seqs x max_num_batched_tokens")
        .long_about(
            "Runs a goodput search per grid cell (min(run.replications, 5) seeds per rate) and \
             prints the grid, the best setting and its launch flags.",
        )
        .arg(text_flag(
            "seqs",
            "LIST",
            "max_num_seqs values, comma-separated (default run.sweep_max_num_seqs)",
        ))
        .arg(text_flag(
            "budgets",
            "LIST",
            "Token budgets, comma-separated; 0 = chunked prefill off (default run.sweep_batched_tokens)",
        ))
        .arg(crate::search::threads_arg())
        .arg(json("Print {max_num_seqs, batched_tokens, cells, best, flags, ...}"))
}

/// The list after `flag`, read as the plan field `path` reads it (the page's grid inputs
/// use the same parser).
fn list(args: &Args, flag: &str, path: &'static str) -> Result<Option<Vec<u32>>, String> {
    let Some(v) = args.value(flag) else {
        return Ok(None);
    };
    fields::parse_list(fields::field(path), &v)
        .map(Some)
        .map_err(|e| format!("{flag}: {e}"))
}

/// Runs the command.
pub fn run(args: &mut Args) -> Result<String, String> {
    let json = args.flag("--json");
    let threads = crate::search::threads(args)?;
    let mut axes = Vec::new();
    for (flag, path) in [
        ("--seqs", "run.sweep_max_num_seqs"),
        ("--budgets", "run.sweep_batched_tokens"),
    ] {
        axes.push((path, list(args, flag, path)?));
    }
    let mut plan = args.plan()?;
    for (path, axis) in axes {
        if let Some(values) = axis {
            field(path).set_list(&mut plan, values);
        }
    }
    let mut line = crate::progress::ProgressLine::new("knob sweep", "simulations");
    let r = sweep_knobs_threads(&plan, threads, &mut line.callback()).map_err(|e| e.to_string())?;
    if json {
        return serde_json::to_string_pretty(&r).map_err(|e| format!("sweep: {e}"));
    }
    Ok(text(&r))
}

/// The grid as a table, then the best cell and its flags.
pub fn text(r: &SweepResult) -> String {
    let mut s = format!(
        "goodput (req/s) by max_num_seqs × max_num_batched_tokens, {} replications per rate\n\n",
        r.replications
    );
    s.push_str(&format!("{:>12}", "seqs \\ budget"));
    for b in &r.batched_tokens {
        if *b == 0 {
            s.push_str(&format!("{:>10}", "no-chunk"));
        } else {
            s.push_str(&format!("{b:>10}"));
        }
    }
    s.push('\n');
    let cols = r.batched_tokens.len().max(1);
    for (i, n) in r.max_num_seqs.iter().enumerate() {
        s.push_str(&format!("{n:>13}"));
        for j in 0..cols {
            let idx = i * cols + j;
            if let Some(c) = r.cells.get(idx) {
                let mark = if idx == r.best { "*" } else { " " };
                s.push_str(&format!("{:>9}{mark}", rps(c.goodput_rps)));
            }
        }
        s.push('\n');
    }
    let b = r.best_cell();
    let budget = if b.batched_tokens == 0 {
        "chunked prefill off".to_string()
    } else {
        format!("budget {}", b.batched_tokens)
    };
    s.push_str(&format!(
        "\nbest: {} seqs, {budget}: {} req/s\n{}\n{}\n{}",
        b.max_num_seqs,
        rps(b.goodput_rps),
        r.flags.vllm,
        r.flags.sglang,
        count(r.jobs_run as u64, "simulation", "simulations")
    ));
    if r.jobs_reused > 0 {
        s.push_str(&format!(
            ", and {} answered by a run with a smaller max_num_seqs that never reached it",
            count(r.jobs_reused as u64, "job", "jobs")
        ));
    }
    s
}
