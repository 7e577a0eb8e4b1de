//! `goodput calibrate`: fit the step model to `vllm bench serve`, GuideLLM or CSV
//! results and print the fit, or write the calibrated plan.

use goodput_core::calibrate::{run_to_end, Calibrator};
use goodput_core::measure::{import_files, MAX_FILE_BYTES};

use clap::{Arg, Command};

use crate::args::{fit_terms, json, terms_arg, text_flag, Args};

/// The command and its own flags; the plan flags are added from the registry.
pub fn command() -> Command {
    Command::new("calibrate")
        .about("fit the step model to vllm bench serve / GuideLLM / CSV results")
        .long_about(
            "Reads benchmark results (vllm bench serve --save-result JSON, one file per rate; \
             GuideLLM JSON reports; or a CSV/TSV table with a header), simulates each measured \
             load on the plan's model, GPU and engine settings, and fits six step-model \
             constants: the achieved shares of memory bandwidth and of compute, the fixed \
             per-step overhead, the per-request frontend time, the extra time of a step with \
             prompt tokens and the KV-read efficiency. Prints the constants with bootstrap \
             uncertainties, the datasheet, in-sample, leave-one-out (held-out) and fit light → \
             predict heavy errors, a verdict on the larger of the last two, and a per-point \
             table. The plan's traffic stays the forecast: --out writes the fitted constants \
             into it, not the benchmark's lengths. Set the plan flags to what the benchmarked server ran: model, \
             GPU, TP degree, --max-num-seqs and --max-num-batched-tokens.",
        )
        .arg(
            Arg::new("files")
                .value_name("FILE")
                .num_args(0..)
                .help("Result files (any mix of the three formats; one model, one engine)"),
        )
        .arg(text_flag(
            "out",
            "FILE",
            "Write the calibrated plan as JSON (read it back with --plan FILE)",
        ))
        .arg(terms_arg())
        .arg(crate::search::threads_arg())
        .arg(json("The whole calibration report as JSON"))
}

/// Runs the command.
pub fn run(args: &mut Args) -> Result<String, String> {
    let json = args.flag("--json");
    let out = args.value("--out");
    let threads = crate::search::threads(args)?;
    let terms = fit_terms(args)?;
    let plan = args.plan()?;
    let files = args.positionals("files");
    if files.is_empty() {
        return Err(
            "calibrate: give at least one result file; run `goodput calibrate --help`".into(),
        );
    }
    let mut contents = Vec::with_capacity(files.len());
    for path in &files {
        let size = std::fs::metadata(path)
            .map_err(|e| format!("{path}: cannot read: {e}"))?
            .len();
        if size > MAX_FILE_BYTES as u64 {
            return Err(format!(
                "{path}: {:.1} MB is larger than the {} MB a result file may be; is it really a benchmark result?",
                size as f64 / 1e6,
                MAX_FILE_BYTES / (1024 * 1024)
            ));
        }
        let bytes = std::fs::read(path).map_err(|e| format!("{path}: cannot read: {e}"))?;
        let name = std::path::Path::new(path)
            .file_name()
            .map_or(path.clone(), |n| n.to_string_lossy().into_owned());
        contents.push((name, bytes));
    }
    let refs: Vec<(&str, &[u8])> = contents
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    let set = import_files(&refs).map_err(|e| e.to_string())?;
    let mut line = crate::progress::ProgressLine::new("calibration", "fits");
    let calibrator = Calibrator::with_terms(&plan, &set, terms).map_err(|e| e.to_string())?;
    let report =
        run_to_end(calibrator, threads, &mut line.callback()).map_err(|e| e.to_string())?;
    if let Some(path) = &out {
        let text = serde_json::to_string_pretty(&report.plan)
            .map_err(|e| format!("--out: cannot encode the plan: {e}"))?;
        std::fs::write(path, text + "\n")
            .map_err(|e| format!("--out: cannot write '{path}': {e}"))?;
    }
    if json {
        return serde_json::to_string_pretty(&report).map_err(|e| format!("calibrate: {e}"));
    }
    let mut text = report.to_text();
    if let Some(path) = &out {
        text.push_str(&format!("\n\nwrote the calibrated plan to {path}"));
    }
    Ok(text)
}
