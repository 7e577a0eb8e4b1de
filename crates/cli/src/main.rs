//! `goodput`: the capacity planner on the command line.
//!
//! Every command prints to stdout and exits 0, or prints one line to stderr and
//! exits non-zero. The numbers come from `goodput-core`, the same code the web app runs.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod alerts;
mod args;
mod calibrate;
mod capacity;
mod disagg;
mod link;
mod plan_cmd;
mod presets_cmd;
mod schedule;
mod search;
mod shootout;
mod simulate;
mod sweep;

use args::Args;

const USAGE: &str = "\
goodput: LLM-serving capacity planner

usage: goodput <command> [--plan FILE | --link URL] [flags] [--json]

commands:
  simulate   run one simulation point (--request-rate R) and print latency percentiles
  search     find the goodput: the highest rate whose attainment meets the target
  sweep      goodput over a grid of max_num_seqs x max_num_batched_tokens
  capacity   replicas, GPUs and cost from --goodput R or a measured --sweep FILE.csv
  schedule   traffic over a day: replicas per hour, autoscaled vs static cost, ramp attainment
  plan       the whole plan: goodput, capacity, cost, analytic companions
  shootout   every GPU x TP option of the plan, ranked by cost per compliant request
  disagg     the cheapest xPyD (prefill and decode pools) for the peak, against the aggregated plan
  presets    list the model and GPU presets (--model ID, --gpu ID) with figures and sources
  calibrate  fit the step model to vllm bench serve / GuideLLM / CSV results
  alerts     Prometheus burn-rate alert rules for the plan's SLO
  link       print a share link for the plan (--base-url URL)
  decode     print the plan inside a share link as JSON

Numbers accept scientific notation (8e9). Times are in seconds, rates in requests/s.
Run `goodput <command> --help` for the flags of one command.";

fn main() {
    let mut raw = std::env::args().skip(1);
    let command = raw.next().unwrap_or_default();
    let mut args = Args::new(raw);
    let result = match command.as_str() {
        "simulate" => simulate::run(&mut args),
        "search" => search::run(&mut args),
        "sweep" => sweep::run(&mut args),
        "capacity" => capacity::run(&mut args),
        "schedule" => schedule::run(&mut args),
        "plan" => plan_cmd::run(&mut args),
        "shootout" => shootout::run(&mut args),
        "disagg" => disagg::run(&mut args),
        "presets" => presets_cmd::run(&mut args),
        "calibrate" => calibrate::run(&mut args),
        "alerts" => alerts::run(&mut args),
        "link" => link::run_link(&mut args),
        "decode" => link::run_decode(&mut args),
        "" | "help" | "--help" | "-h" => Ok(USAGE.to_string()),
        "--version" | "version" => Ok(format!("goodput {}", env!("CARGO_PKG_VERSION"))),
        other => Err(format!("unknown command '{other}'; run `goodput help`")),
    };
    match result {
        Ok(out) => {
            // A closed pipe (`goodput plan | head`) is not an error worth a panic.
            use std::io::Write;
            let _ = writeln!(std::io::stdout().lock(), "{out}");
        }
        Err(msg) => {
            eprintln!("goodput: {msg}");
            std::process::exit(2);
        }
    }
}
