//! `goodput disagg`: the cheapest xPyD (prefill and decode instances) for the forecast
//! peak, beside the aggregated plan on the plan's own GPUs.

use goodput_core::disagg::{run_disagg_threads, DisaggResult, DisaggSpec, Router};
use goodput_core::plan::Plan;

use crate::args::Args;

const USAGE: &str = "\
usage: goodput disagg [--plan FILE | --link URL] [plan flags] [pool flags] [--threads N] [--json]

Sizes a disaggregated deployment: a prefill pool and a decode pool, each request's KV
cache moved between them over a link, simulated together instance by instance. Finds
the cheapest x prefill + y decode instances (xPyD) whose attainment meets the target at
peak / utilization, adds planning.redundancy spare instances to each pool, and sets it
against the aggregated plan on the plan's own GPUs (as `goodput plan --no-sweep` sizes
it). The plan's disagg section is used when it has one; these flags override it.
  --prefill-gpu ID          GPU preset of the prefill pool (default: the plan's hardware)
  --prefill-tp N            GPUs per prefill instance: 1, 2, 4 or 8 (default: the plan's)
  --prefill-budget TOKENS   token budget of a prefill step (default 8192)
  --prefill-instances N     fix the prefill instances for the peak instead of searching
  --decode-gpu ID           GPU preset of the decode pool (default: the plan's hardware)
  --decode-tp N             GPUs per decode instance (default: the plan's)
  --decode-max-num-seqs N   sequences per decode instance (default: the plan's max_num_seqs)
  --decode-instances N      fix the decode instances for the peak instead of searching
  --kv-link-gbps G          KV link bandwidth per transfer [Gbit/s] (default 400)
  --kv-link-latency S       fixed time of one KV transfer [s] (default 0.001)
  --router R                round_robin | least_loaded (default least_loaded)
  --threads N               simulation threads (default: every core); the answer does not depend on it
  --json                    print {prefill_instances, decode_instances, gpus_total,
                            cost_per_month_usd, cost_per_compliant_request_usd, attainment,
                            aggregated_gpus_total, aggregated_cost_per_month_usd, verdict, ...}";

/// Pool flags and the plan fields they set, so a validation error names the flag.
const FLAG_OF_FIELD: [(&str, &str); 10] = [
    ("disagg.prefill.gpu", "--prefill-gpu"),
    ("disagg.prefill.tp_degree", "--prefill-tp"),
    ("disagg.prefill.max_num_batched_tokens", "--prefill-budget"),
    ("disagg.prefill.instances", "--prefill-instances"),
    ("disagg.decode.gpu", "--decode-gpu"),
    ("disagg.decode.tp_degree", "--decode-tp"),
    ("disagg.decode.max_num_seqs", "--decode-max-num-seqs"),
    ("disagg.decode.instances", "--decode-instances"),
    ("disagg.kv_link.bandwidth_bytes_per_s", "--kv-link-gbps"),
    ("disagg.kv_link.latency_s", "--kv-link-latency"),
];

/// The pool flags as given.
#[derive(Default)]
struct PoolFlags {
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
    fn read(args: &mut Args) -> Result<PoolFlags, String> {
        let router = match args.value("--router")? {
            None => None,
            Some(v) => Some(Router::parse(&v).ok_or_else(|| {
                format!("--router: expected round_robin or least_loaded, got '{v}'")
            })?),
        };
        Ok(PoolFlags {
            prefill_gpu: args.value("--prefill-gpu")?,
            prefill_tp: args.u32("--prefill-tp")?,
            prefill_budget: args.u32("--prefill-budget")?,
            prefill_instances: args.u32("--prefill-instances")?,
            decode_gpu: args.value("--decode-gpu")?,
            decode_tp: args.u32("--decode-tp")?,
            decode_max_num_seqs: args.u32("--decode-max-num-seqs")?,
            decode_instances: args.u32("--decode-instances")?,
            kv_link_gbps: args.f64("--kv-link-gbps")?,
            kv_link_latency_s: args.f64("--kv-link-latency")?,
            router,
        })
    }

    /// The plan's disagg section (or the defaults for the plan) with the flags applied.
    fn apply(self, plan: &Plan) -> DisaggSpec {
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
            s.kv_link.bandwidth_bytes_per_s = g * 1e9 / 8.0;
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
    if args.flag("--help") || args.flag("-h") {
        return Ok(USAGE.to_string());
    }
    let json = args.flag("--json");
    let threads = crate::search::threads(args)?;
    let flags = PoolFlags::read(args)?;
    let mut plan = args.plan()?;
    args.clone().finish()?;
    plan.disagg = Some(flags.apply(&plan));
    plan.validate().map_err(|e| {
        match FLAG_OF_FIELD.iter().find(|(field, _)| *field == e.field) {
            Some((_, flag)) => format!("{flag}: {e}"),
            None => e.to_string(),
        }
    })?;
    let r = run_disagg_threads(&plan, threads, &mut |_| true).map_err(|e| e.to_string())?;
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
