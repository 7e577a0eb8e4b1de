//! `goodput disagg`: the cheapest xPyD (prefill and decode instances) for the forecast
//! peak, beside the aggregated plan on the plan's own GPUs.

use goodput_core::disagg::{run_disagg_threads, DisaggResult, DisaggSpec};
use goodput_core::plan::Plan;

use clap::Command;
use goodput_core::plan::fields::{by_path, disagg_mut, disagg_of};

use crate::args::{flag_message, json, Args};

/// The command and its own flags; the plan flags and the pool flags are added from the
/// registry.
pub fn command() -> Command {
    Command::new("disagg")
        .about("the cheapest xPyD (prefill and decode pools) for the peak, against the aggregated plan")
        .long_about(
            "Sizes a disaggregated deployment: a prefill pool and a decode pool, each request's \
             KV cache moved between them over a link, simulated together instance by instance. \
             Finds the cheapest x prefill + y decode instances (xPyD) whose attainment meets the \
             target at peak / utilization, adds planning.redundancy spare instances to each \
             pool, and sets it against the aggregated plan on the plan's own GPUs (as `goodput \
             plan --no-sweep` sizes it). The plan's disagg section is used when it has one; the \
             pool flags override it.",
        )
        .arg(crate::search::threads_arg())
        .arg(json(
            "Print {prefill_instances, decode_instances, gpus_total, cost_per_month_usd, \
             cost_per_compliant_request_usd, attainment, aggregated_gpus_total, \
             aggregated_cost_per_month_usd, verdict, ...}",
        ))
}

/// The pool flags as given (`--prefill-gpu`, `--decode-tp`, `--kv-link-gbps`, …): the
/// flags of the registry's rows under `disagg.`, each written through its row.
pub(crate) struct PoolFlags(Args);

impl PoolFlags {
    pub(crate) fn read(args: &Args) -> PoolFlags {
        PoolFlags(args.clone())
    }

    /// Whether the pool field at `path` was given by its flag.
    fn gives(&self, path: &str) -> bool {
        by_path(path)
            .and_then(|f| f.flag)
            .is_some_and(|f| self.0.given(f.name))
    }

    /// The plan's disagg section (or the defaults for the plan) with the flags applied.
    pub(crate) fn apply(mut self, plan: &Plan) -> Result<DisaggSpec, String> {
        let mut p = plan.clone();
        disagg_mut(&mut p);
        self.0
            .write_flags(&mut p, |f| f.path.starts_with("disagg."))?;
        Ok(disagg_of(&p))
    }
}

/// Runs the command.
pub fn run(args: &mut Args) -> Result<String, String> {
    let json = args.flag("--json");
    let threads = crate::search::threads(args)?;
    let flags = PoolFlags::read(args);
    let mut plan = args.plan()?;
    let has_own_disagg = plan.disagg.is_some();
    let (own_prefill_tp, own_decode_tp) = (
        flags.gives("disagg.prefill.tp_degree"),
        flags.gives("disagg.decode.tp_degree"),
    );
    plan.disagg = Some(flags.apply(&plan)?);
    // A pool field is named by its flag, given or not (the plan's section may hold it).
    plan.validate().map_err(|e| {
        // A pool's TP the user did not give comes from the plan's own --tp.
        let derived_tp = (e.field == "disagg.prefill.tp_degree" && !own_prefill_tp)
            || (e.field == "disagg.decode.tp_degree" && !own_decode_tp);
        if derived_tp && !has_own_disagg {
            return format!(
                "--tp: {}; the pools take the plan's TP unless --prefill-tp and --decode-tp say otherwise",
                e.message
            );
        }
        match by_path(e.field).and_then(|f| f.flag.filter(|_| e.field.starts_with("disagg."))) {
            Some(flag) => flag_message(&format!("--{}", flag.name), &e),
            None => args.plan_error(&e),
        }
    })?;
    let mut line = crate::progress::ProgressLine::new("disaggregated sizing", "simulations");
    let r = run_disagg_threads(&plan, threads, &mut line.callback()).map_err(|e| e.to_string())?;
    if json {
        return serde_json::to_string_pretty(&json_of(&r)).map_err(|e| format!("disagg: {e}"));
    }
    Ok(text(&r))
}

/// The fields first, then the detail.
fn json_of(r: &DisaggResult) -> serde_json::Value {
    let b = r.best.as_ref();
    let cap = r.aggregated.capacity.as_ref();
    let load = r.aggregated.planned_load.as_ref().map(|l| &l.detail);
    serde_json::json!({
        "prefill_instances": b.map(|b| b.prefill_instances),
        "decode_instances": b.map(|b| b.decode_instances),
        "gpus_total": b.map(|b| b.gpus_total),
        "cost_per_month_usd": b.map(|b| b.cost_per_month_usd),
        "cost_per_compliant_request_usd": b.map(|b| b.cost_per_compliant_request_usd),
        "attainment": b.map(|b| b.attainment),
        "aggregated_gpus_total": cap.map(|c| c.gpus_total),
        "aggregated_cost_per_month_usd": cap.map(|c| c.cost_per_month_usd),
        "verdict": r.verdict,
        "xpyd": b.map(|b| b.label()),
        "prefill_instances_for_peak": b.map(|b| b.prefill_instances_for_peak),
        "decode_instances_for_peak": b.map(|b| b.decode_instances_for_peak),
        "ttft_p50_s": b.map(|b| b.ttft_s.p50),
        "ttft_p99_s": b.map(|b| b.ttft_s.p99),
        "tpot_p50_s": b.map(|b| b.tpot_s.p50),
        "tpot_p99_s": b.map(|b| b.tpot_s.p99),
        "aggregated_cost_per_compliant_request_usd": cap.map(|c| c.cost_per_compliant_request_usd),
        "aggregated_ttft_p99_s": load.map(|l| l.ttft_p99_s),
        "aggregated_tpot_p99_s": load.map(|l| l.tpot_p99_s),
        "best": b,
        "aggregated": r.aggregated,
        "peak_rate_rps": r.peak_rate_rps,
        "sizing_rate_rps": r.sizing_rate_rps,
        "redundancy": r.redundancy,
        "target": r.target,
        "replications": r.replications,
        "router": r.router,
        "kv_link": r.kv_link,
        "reason": r.reason,
        "points": r.points,
        "jobs_run": r.jobs_run,
    })
}

/// The verdict, the side-by-side table and the notes.
fn text(r: &DisaggResult) -> String {
    let mut s = format!("{}\n\n", r.verdict);
    s.push_str(&format!(
        "  {:<26} {:<32} {}\n",
        "", "aggregated", "disaggregated"
    ));
    for row in r.comparison_rows() {
        s.push_str(&format!(
            "  {:<26} {:<32} {}\n",
            row.label, row.aggregated, row.disaggregated
        ));
    }
    for note in r.notes() {
        s.push('\n');
        s.push_str(&note);
    }
    s
}
