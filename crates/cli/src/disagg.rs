//! `goodput disagg`: the cheapest xPyD (prefill and decode instances) for the forecast
//! peak, beside the aggregated plan on the plan's own GPUs.

use goodput_core::disagg::{run_disagg_threads, DisaggResult, DisaggSpec, KvLinkSource};
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
        // A bandwidth given gives the link, as its row's writer does.
        if self.gives("disagg.kv_link.bandwidth_bytes_per_s") {
            disagg_mut(&mut p).kv_link.source = KvLinkSource::Given;
        }
        // Expert parallelism given to a pool runs it on TP 1 and PP 1 unless those are
        // given too (then the plan says which clash).
        for pool in ["prefill", "decode"] {
            let gives = |d: &str| self.gives(&format!("disagg.{pool}.{d}_degree"));
            if gives("ep") && !gives("tp") && !gives("pp") {
                let d = disagg_mut(&mut p);
                let (tp, pp) = if pool == "prefill" {
                    (&mut d.prefill.tp_degree, &mut d.prefill.pp_degree)
                } else {
                    (&mut d.decode.tp_degree, &mut d.decode.pp_degree)
                };
                (*tp, *pp) = (1, 1);
            }
        }
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
    if flags.gives("disagg.kv_link.bandwidth_bytes_per_s")
        && args.value("kv-link").as_deref() == Some("network")
    {
        return Err(
            "--kv-link-gbps gives the KV link's bandwidth, and --kv-link network takes \
                    it from the GPUs: drop one of them"
                .into(),
        );
    }
    plan.disagg = Some(PoolFlags::read(args).apply(&plan)?);
    // A pool field is named by its flag, given or not (the plan's section may hold it).
    plan.validate().map_err(|e| {
        // A pool's layout the user did not give comes from the plan's own --tp, --pp, --ep.
        let derived = ["tp", "pp", "ep"].iter().find_map(|d| {
            let own = |pool: &str| {
                let path = format!("disagg.{pool}.{d}_degree");
                e.field == path && !flags.gives(&path)
            };
            (own("prefill") || own("decode")).then_some(*d)
        });
        if let Some(d) = derived.filter(|_| !has_own_disagg) {
            return format!(
                "--{d}: {}; the pools take the plan's layout unless --prefill-{d} and --decode-{d} say otherwise",
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
