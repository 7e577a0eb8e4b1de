//! `goodput validate`: fit and predict the public measured runs under `validation/`
//! and print the accuracy table (`docs/accuracy.md` holds its Markdown).

use goodput_core::calibrate::FitTerms;
use goodput_core::validate::{read_manifest, validate};

use clap::{Arg, ArgAction, Command};

use crate::args::{fit_terms, json, terms_arg, text_flag, Args};

/// The folder the manifest and the sets live in, relative to where the command runs.
pub const DEFAULT_DIR: &str = "validation";

/// The command and its flags.
pub fn command() -> Command {
    Command::new("validate")
        .about("fit and predict public measured runs; print the accuracy table")
        .long_about(
            "Reads validation/manifest.json (or --dir DIR/manifest.json): public measured \
             serving runs, each with its source, commit and licence, the plan its server ran \
             and the formats calibrate reads. For each set it calibrates the step model and \
             reports the mean absolute percentage error of TTFT, TPOT and E2E with the \
             datasheet constants and with the calibration, by protocol: in range (leave one \
             out), fit on the lighter half of the loads and predict the heavier half, and a \
             calibration carried from one GPU or TP degree to another. Each row is checked \
             against the bound the manifest states; --check exits with status 1 when one is \
             exceeded.",
        )
        .arg(text_flag(
            "dir",
            "DIR",
            "The folder holding manifest.json and the sets (default: validation)",
        ))
        .arg(
            Arg::new("set")
                .long("set")
                .value_name("ID")
                .action(ArgAction::Append)
                .help("Only this set (repeat for more); carries run when both ends are chosen"),
        )
        .arg(text_flag(
            "plan-of",
            "ID",
            "Print the plan set ID's server ran, as JSON (read it back with --plan FILE), and stop",
        ))
        .arg(
            Arg::new("markdown")
                .long("markdown")
                .action(ArgAction::SetTrue)
                .help("The table in Markdown, as docs/accuracy.md shows it"),
        )
        .arg(
            Arg::new("check")
                .long("check")
                .action(ArgAction::SetTrue)
                .help("Exit with status 1 when an error exceeds its bound"),
        )
        .arg(terms_arg())
        .arg(crate::search::threads_arg())
        .arg(json("The rows and each set's fitted constants as JSON"))
}

/// Runs the command: the table, or an error (with `--check`, a bound exceeded is one).
pub fn run(args: &mut Args) -> Result<String, String> {
    let dir = args
        .value("--dir")
        .unwrap_or_else(|| DEFAULT_DIR.to_string());
    let only = args.positionals("set");
    let threads = crate::search::threads(args)?;
    let terms = fit_terms(args)?;
    let path = std::path::Path::new(&dir).join("manifest.json");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "{}: cannot read: {e}; run from the repository's root or give --dir",
            path.display()
        )
    })?;
    let manifest = read_manifest(&text).map_err(|e| e.to_string())?;
    for id in &only {
        if !manifest.sets.iter().any(|s| &s.id == id) {
            return Err(format!("--set {id}: no such set in {}", path.display()));
        }
    }
    if let Some(id) = args.value("--plan-of") {
        let set = manifest
            .sets
            .iter()
            .find(|s| s.id == id)
            .ok_or_else(|| format!("--plan-of {id}: no such set in {}", path.display()))?;
        let plan = set.plan().map_err(|e| e.to_string())?;
        return serde_json::to_string_pretty(&plan).map_err(|e| format!("validate: {e}"));
    }
    let read = |set: &str, file: &str| -> Result<Vec<u8>, String> {
        let p = std::path::Path::new(&dir).join(set).join(file);
        std::fs::read(&p).map_err(|e| format!("{}: cannot read: {e}", p.display()))
    };
    let mut line = crate::progress::ProgressLine::new("validation", "sets");
    let report = validate(
        &manifest,
        &only,
        &read,
        terms,
        threads,
        &mut line.callback(),
    )
    .map_err(|e| e.to_string())?;
    drop(line);
    let mut out = if args.flag("--json") {
        serde_json::to_string_pretty(&report).map_err(|e| format!("validate: {e}"))?
    } else if args.flag("--markdown") {
        report.published_markdown(&manifest)
    } else {
        report.to_text()
    };
    if terms != FitTerms::DEFAULT && !args.flag("--json") {
        out = format!(
            "{out}\n\nfitted: {} (not the default {}); the bounds and docs/accuracy.md are the default's",
            terms.names(),
            FitTerms::DEFAULT.names()
        );
    }
    let failures = report.failures();
    if args.flag("--check") && !failures.is_empty() {
        let which: Vec<String> = failures
            .iter()
            .map(|r| {
                format!(
                    "{} ({}): {}",
                    r.set,
                    r.protocol.words(),
                    r.exceeded().join(", ")
                )
            })
            .collect();
        return Err(format!(
            "{}\n{} row(s) over their bound: {}",
            out.trim_end(),
            failures.len(),
            which.join("; ")
        ));
    }
    Ok(out.trim_end().to_string())
}
