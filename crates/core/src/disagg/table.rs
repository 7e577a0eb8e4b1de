//! The sizing's answer as a side-by-side table and notes in words: the CLI prints them
//! and the page shows them, so both read the same.

use super::DisaggResult;
use crate::format::{latency, rps, usd, MISSING};
use crate::presets::gpu_name;

/// One row of the side-by-side comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComparisonRow {
    /// What the row shows.
    pub label: &'static str,
    /// The aggregated plan's value.
    pub aggregated: String,
    /// The disaggregated deployment's value (a dash when none passes).
    pub disaggregated: String,
}

fn pair(p50: Option<f64>, p99: Option<f64>) -> String {
    format!("{} / {}", latency(p50), latency(p99))
}

impl DisaggResult {
    /// The aggregated plan beside the cheapest xPyD: deployment, GPUs, cost, what sized
    /// each, and the latencies each is sized to (the aggregated plan's at its planned
    /// load per replica, the pools' at the sizing rate).
    pub fn comparison_rows(&self) -> Vec<ComparisonRow> {
        let dash = || MISSING.to_string();
        let a = &self.aggregated;
        let cap = a.capacity.as_ref();
        let load = a.planned_load.as_ref().map(|l| &l.detail);
        let b = self.best.as_ref();
        let money = |x: Option<f64>| x.map_or_else(dash, usd);
        let row = |label, aggregated, disaggregated| ComparisonRow {
            label,
            aggregated,
            disaggregated,
        };
        vec![
            row(
                "Deployment",
                cap.map_or_else(dash, |c| {
                    format!("{} + {} spare replicas", c.replicas_for_peak, c.redundancy)
                }),
                b.map_or_else(dash, |b| {
                    format!(
                        "{} + {} spare per pool",
                        b.label(),
                        b.prefill_instances - b.prefill_instances_for_peak
                    )
                }),
            ),
            row(
                "GPUs per instance",
                format!("{} × {}", gpu_name(&a.gpu), a.layout().words(&a.gpu)),
                b.map_or_else(dash, |b| {
                    format!(
                        "P {} × {}, D {} × {}",
                        gpu_name(&b.prefill_gpu),
                        b.prefill_layout().words(&b.prefill_gpu),
                        gpu_name(&b.decode_gpu),
                        b.decode_layout().words(&b.decode_gpu)
                    )
                }),
            ),
            row(
                "GPUs in total",
                cap.map_or_else(dash, |c| c.gpus_total.to_string()),
                b.map_or_else(dash, |b| b.gpus_total.to_string()),
            ),
            row(
                "Per month",
                money(cap.map(|c| c.cost_per_month_usd)),
                money(b.map(|b| b.cost_per_month_usd)),
            ),
            row(
                "Per 1k compliant requests",
                money(cap.map(|c| c.cost_per_compliant_request_usd * 1e3)),
                money(b.map(|b| b.cost_per_compliant_request_usd * 1e3)),
            ),
            row(
                "Sized by",
                format!("goodput {} req/s per replica", rps(a.goodput_rps)),
                b.map_or_else(dash, |b| {
                    format!(
                        "{} within the SLO at {} req/s (peak ÷ utilisation)",
                        crate::format::percent(b.attainment),
                        rps(self.sizing_rate_rps)
                    )
                }),
            ),
            row(
                "TTFT p50 / p99",
                load.map_or_else(dash, |l| pair(Some(l.ttft_p50_s), Some(l.ttft_p99_s))),
                b.map_or_else(dash, |b| pair(Some(b.ttft_s.p50), Some(b.ttft_s.p99))),
            ),
            row(
                "TPOT p50 / p99",
                load.map_or_else(dash, |l| pair(Some(l.tpot_p50_s), Some(l.tpot_p99_s))),
                b.map_or_else(dash, |b| pair(Some(b.tpot_s.p50), Some(b.tpot_s.p99))),
            ),
        ]
    }

    /// The notes under the table: the prefill pool as M/D/1 beside the simulation, and
    /// the KV transfer; or why there is no xPyD.
    pub fn notes(&self) -> Vec<String> {
        let Some(b) = &self.best else {
            return self
                .reason
                .iter()
                .map(|why| crate::format::sentence(why))
                .collect();
        };
        let m = &b.md1;
        let mut notes = vec![
            format!(
                "Prefill pool as M/D/1: {} req/s per instance, D = {} (mean prompt), load {:.2}; \
                 mean wait {} (simulated {}), arrival to end of prefill {} (simulated {}).",
                rps(m.rate_rps),
                latency(Some(m.service_s)),
                m.utilization,
                latency(m.wait_s),
                latency(Some(b.prefill_wait_s.mean)),
                latency(m.ttft_s),
                latency(Some(b.prefill_s.mean)),
            ),
            format!(
                "KV transfer: mean {} over {} + {} latency; router: {}.",
                latency(Some(b.transfer_s.mean)),
                b.kv_route.words(),
                latency(Some(b.kv_route.latency_s)),
                self.router.label().to_lowercase()
            ),
        ];
        if self.whole_prompts {
            notes.push(
                "The pools prefill each prompt whole: the prefix structure's cache hits (shared prefixes, a session's history) are modelled on the aggregated side only, so the disaggregated side is pessimistic here.".into(),
            );
        }
        if !b.classes.is_empty() {
            let each: Vec<String> = b
                .classes
                .iter()
                .map(|c| format!("{} {}", c.name, crate::format::percent(c.attainment)))
                .collect();
            notes.push(format!(
                "By class at {}: {}, each within its own objectives; in both pools, waiting requests go lowest priority number first.",
                b.label(),
                each.join(", ")
            ));
        }
        notes
    }
}
