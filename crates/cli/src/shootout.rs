//! `goodput shootout`: the plan on every GPU × layout option, ranked by the monthly cost
//! of the fleet that meets the SLO at the peak.

use goodput_core::format::{millis, rps, usd, MISSING};
use goodput_core::shootout::{
    run_shootout_threads, vendor_carry_words, ShootoutResult, ShootoutSpec, DEFAULT_NODES,
    MAX_NODES, TP_DEGREES,
};

use clap::Command;

use crate::args::{json, text_flag, Args};

/// The command and its own flags; the plan flags (but `--tp`, a list here) are added
/// from the registry.
pub fn command() -> Command {
    Command::new("shootout")
        .about("every GPU x layout option of the plan, ranked by the monthly cost of its fleet")
        .long_about(
            "Runs the goodput search and the capacity plan for every GPU preset × layout \
             (each tensor-parallel degree on one node, the largest with 2 to --nodes \
             pipeline stages, and for a mixture of experts expert parallelism over that \
             degree times 1 to --nodes GPUs), on the plan's model, traffic, SLO and engine \
             settings, and \
             ranks the options by the monthly cost of the fleet that meets the SLO at the peak \
             (cost per SLO-compliant request breaks ties). Options whose weights do not \
             fit, or whose KV cache cannot hold one request of maximum length, are listed last \
             with the reason. Each row equals `goodput plan --gpu G --tp N --pp P --ep E --no-sweep` on the \
             same plan. A measured sweep (planning.measured_sweep) describes the hardware it \
             was measured on, so it is set aside: every option is simulated.",
        )
        .arg(text_flag(
            "gpus",
            "LIST",
            "GPU preset ids, comma-separated (default: h100-sxm,h200,b200,a100-80gb,l40s,mi300x; \
             `goodput presets` lists them all)",
        ))
        .arg(text_flag(
            "tp",
            "LIST",
            format!("Tensor-parallel degrees from {TP_DEGREES:?}, comma-separated (default: all)"),
        ))
        .arg(text_flag(
            "nodes",
            "N",
            format!(
                "Nodes a replica may span, 1 to {MAX_NODES}: beyond one node, each GPU is \
                 tried at the largest TP degree with 2 to N pipeline stages, one stage per \
                 node of 8 GPUs (default: {DEFAULT_NODES})"
            ),
        ))
        .arg(crate::args::switch(
            "speculation",
            "Try each option with and without speculative decoding: the plan's own \
             speculation and the other one (off when the plan drafts; the draft its \
             calibration's runs measured when it does not), twice the options",
        ))
        .arg(crate::search::threads_arg())
        .arg(json(
            "Print {best, chosen, verdict, rows: [{gpu, tp, pp, ep, fits, reason, goodput_rps, \
             replicas_total, gpus_total, cost_per_hour_usd, cost_per_month_usd, \
             cost_per_compliant_request_usd, ttft_p99_s, tpot_p99_s, ...}]}",
        ))
}

/// Runs the command.
pub fn run(args: &mut Args) -> Result<String, String> {
    let json = args.flag("--json");
    let threads = crate::search::threads(args)?;
    let mut spec = ShootoutSpec::default();
    if let Some(v) = args.value("--gpus") {
        spec.gpus = v
            .split(',')
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .collect();
    }
    // `--tp` is a list here, where the plan flags would take one degree.
    if let Some(v) = args.value("--tp") {
        spec.tp_degrees = v
            .split(',')
            .map(|t| {
                t.trim().parse::<u32>().map_err(|_| {
                    format!(
                        "--tp: expected degrees from {TP_DEGREES:?} separated by commas, got '{}'",
                        t.trim()
                    )
                })
            })
            .collect::<Result<Vec<u32>, String>>()?;
    }
    if let Some(v) = args.value("--nodes") {
        spec.max_nodes = v.trim().parse::<u32>().map_err(|_| {
            format!("--nodes: expected a whole number of nodes from 1 to {MAX_NODES}, got '{v}'")
        })?;
    }
    spec.speculation = args.flag("--speculation");
    // The lists first, each error led by its flag; the comparison checks them again
    // with the model's experts, whose expert-parallel layouts count too.
    let spec = spec.checked(0).map_err(|e| {
        let flag = match e {
            goodput_core::shootout::ShootoutError::NoGpus
            | goodput_core::shootout::ShootoutError::UnknownGpu(_) => "--gpus: ",
            goodput_core::shootout::ShootoutError::NoTpDegrees
            | goodput_core::shootout::ShootoutError::BadTpDegree(_) => "--tp: ",
            goodput_core::shootout::ShootoutError::BadNodes(_) => "--nodes: ",
            _ => "",
        };
        format!("{flag}{e}")
    })?;
    let mut plan = args.plan_for_other_hardware()?;
    plan.planning.measured_sweep.clear();
    let mut line = crate::progress::ProgressLine::new("shootout", "simulations");
    let r = run_shootout_threads(&plan, &spec, threads, &mut line.callback())
        .map_err(|e| e.to_string())?;
    let caution = vendor_carry_words(&r.rows, &plan);
    if json {
        return serde_json::to_string_pretty(&json_of(&r, caution))
            .map_err(|e| format!("shootout: {e}"));
    }
    let mut out = text(&r);
    if let Some(w) = caution {
        out.push_str(&format!("\n\n{w}"));
    }
    Ok(out)
}

/// The result as JSON: the winner and the plan's own option named, then every row, and
/// the caution for rows carried from another vendor's GPU, when there are any.
fn json_of(r: &ShootoutResult, caution: Option<String>) -> serde_json::Value {
    let name = |row: Option<&goodput_core::shootout::ShootoutRow>| {
        row.map_or(
            serde_json::Value::Null,
            |x| serde_json::json!({ "gpu": x.gpu, "tp": x.tp, "pp": x.pp, "ep": x.ep, "spec_draft_tokens": x.spec_draft_tokens }),
        )
    };
    let mut v = serde_json::json!({
        "best": name(r.best_row()),
        "chosen": name(r.chosen_row()),
        "verdict": r.verdict(),
        "rows": r.rows,
    });
    if let Some(w) = caution {
        v["caution"] = serde_json::Value::String(w);
    }
    v
}

/// The result as a table.
fn text(r: &ShootoutResult) -> String {
    let mut s = format!("{}\n\n", r.verdict());
    s.push_str(&format!(
        "  {:<12} {:<20} {:>5} {:>10} {:>9} {:>6} {:>12} {:>14} {:>10} {:>10}  {}\n",
        "gpu",
        "layout",
        "draft",
        "goodput",
        "replicas",
        "gpus",
        "$/month",
        "$/1k compliant",
        "TTFT p99",
        "TPOT p99",
        "note"
    ));
    for (i, row) in r.rows.iter().enumerate() {
        let mark = if Some(i) == r.best {
            "*"
        } else if row.chosen {
            ">"
        } else {
            " "
        };
        let money = |x: Option<f64>| x.map_or(MISSING.to_string(), usd);
        let mut note = row.why().unwrap_or_default().to_string();
        if row.chosen {
            note = if note.is_empty() {
                "the plan's choice".into()
            } else {
                format!("the plan's choice; {note}")
            };
        }
        // A calibrated plan: which rows rest on measurements and which carry them over.
        if !row.constants.is_datasheet() {
            let c = format!("constants {}", row.constants.label());
            note = if note.is_empty() {
                c
            } else {
                format!("{c}; {note}")
            };
        }
        s.push_str(&format!(
            "{mark} {:<12} {:<20} {:>5} {:>10} {:>9} {:>6} {:>12} {:>14} {:>10} {:>10}  {}\n",
            row.gpu,
            row.layout(),
            row.spec_draft_tokens,
            if row.fits {
                format!("{}/s", rps(row.goodput_rps))
            } else {
                MISSING.into()
            },
            row.replicas_total,
            row.gpus_total,
            money(row.cost_per_month_usd),
            money(row.cost_per_compliant_request_usd.map(|c| c * 1e3)),
            millis(row.ttft_p99_s),
            millis(row.tpot_p99_s),
            note
        ));
    }
    s.push_str(
        "\n* cheapest   > the plan's own GPU, layout and speculation   draft: speculative draft tokens a step (0: none)",
    );
    s
}
