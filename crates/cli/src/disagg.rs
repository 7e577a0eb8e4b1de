//! `goodput disagg`: the cheapest xPyD (prefill and decode instances) for the forecast
//! peak, beside the aggregated plan on the plan's own GPUs.

use goodput_core::disagg::{run_disagg_threads, DisaggResult, DisaggSpec, Router};
use goodput_core::plan::Plan;

use clap::Command;
use goodput_core::plan::fields::{by_path, field, Field};

use crate::args::{flag_message, json, Args};

/// The KV link's bandwidth: `--kv-link-gbps` takes Gbit/s, the plan stores bytes/s.
const KV_LINK: &Field = field("disagg.kv_link.bandwidth_bytes_per_s");

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

/// The pool flags as given.
#[derive(Default)]
pub(crate) struct PoolFlags {
    prefill_gpu: Option<String>,
    prefill_tp: Option<u32>,
    prefill_budget: Option<u32>,
    prefill_instances: Option<u32>,
    decode_gpu: Option<String>,
    decode_tp: Option<u32>,
    decode_max_num_seqs: Option<u32>,
    decode_instances: Option<u32>,
    kv_link_gbps: Option<f64>,
    kv_link_latency_s: Option<f64>,
    router: Option<Router>,
}

impl PoolFlags {
    pub(crate) fn read(args: &Args) -> PoolFlags {
        PoolFlags {
            prefill_gpu: args.value("--prefill-gpu"),
            prefill_tp: args.u32("--prefill-tp"),
            prefill_budget: args.u32("--prefill-budget"),
            prefill_instances: args.u32("--prefill-instances"),
            decode_gpu: args.value("--decode-gpu"),
            decode_tp: args.u32("--decode-tp"),
            decode_max_num_seqs: args.u32("--decode-max-num-seqs"),
            decode_instances: args.u32("--decode-instances"),
            kv_link_gbps: args.f64("--kv-link-gbps"),
            kv_link_latency_s: args.f64("--kv-link-latency"),
            router: args.value("--router").as_deref().and_then(Router::parse),
        }
    }

    /// The plan's disagg section (or the defaults for the plan) with the flags applied.
    pub(crate) fn apply(self, plan: &Plan) -> DisaggSpec {
        let mut s = plan
            .disagg
            .clone()
            .unwrap_or_else(|| DisaggSpec::for_plan(plan));
        let p = &mut s.prefill;
        p.gpu = self.prefill_gpu.unwrap_or(std::mem::take(&mut p.gpu));
        p.tp_degree = self.prefill_tp.unwrap_or(p.tp_degree);
        p.max_num_batched_tokens = self.prefill_budget.unwrap_or(p.max_num_batched_tokens);
        p.instances = self.prefill_instances.or(p.instances);
        let d = &mut s.decode;
        d.gpu = self.decode_gpu.unwrap_or(std::mem::take(&mut d.gpu));
        d.tp_degree = self.decode_tp.unwrap_or(d.tp_degree);
        d.max_num_seqs = self.decode_max_num_seqs.unwrap_or(d.max_num_seqs);
        d.instances = self.decode_instances.or(d.instances);
        if let Some(g) = self.kv_link_gbps {
            s.kv_link.bandwidth_bytes_per_s = g * KV_LINK.flag_units().scale;
        }
        if let Some(l) = self.kv_link_latency_s {
            s.kv_link.latency_s = l;
        }
        s.router = self.router.unwrap_or(s.router);
        s
    }
}

/// Runs the command.
pub fn run(args: &mut Args) -> Result<String, String> {
    let json = args.flag("--json");
    let threads = crate::search::threads(args)?;
    let flags = PoolFlags::read(args);
    let mut plan = args.plan()?;
    let has_own_disagg = plan.disagg.is_some();
    let (own_prefill_tp, own_decode_tp) = (flags.prefill_tp.is_some(), flags.decode_tp.is_some());
    plan.disagg = Some(flags.apply(&plan));
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
