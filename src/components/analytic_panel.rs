//! Analytic companions: Little's law, the budget rule, loads, KV capacity, M/D/1, and
//! warnings where the settings contradict them.

use goodput_core::analytic::{analyze, Analytics, Severity};
use goodput_core::format::{latency, percent_whole, rps, thousands, MISSING};
use leptos::prelude::*;

use crate::compute::planned::{prefix_at_planned_rate, PrefixAtPlannedRate};
use crate::hooks::use_report::use_report;
use crate::state::PlanState;

/// A queue's mean TTFT in the unit a reader expects, or why it has none.
fn queue_ttft(v: Option<f64>) -> String {
    v.map(|s| latency(Some(s)))
        .unwrap_or_else(|| "unstable (R·D ≥ 1)".into())
}

/// A count of tokens or sequences from a float, with thousands separators.
fn whole(x: f64) -> String {
    if x.is_finite() {
        thousands(x.round() as i64)
    } else {
        MISSING.into()
    }
}

/// The rows of the panel: (label, value, testid).
fn rows(a: &Analytics) -> Vec<(&'static str, String, &'static str)> {
    let q = &a.prefill_queue;
    vec![
        (
            "Planned rate per replica",
            format!("{} req/s", rps(a.rate_per_replica_rps)),
            "an-rate",
        ),
        (
            "Little's law: sequences in flight per replica",
            format!(
                "{:.0} = rate × (TTFT {} + {:.0} tokens × TPOT {})",
                a.concurrency_per_replica,
                latency(Some(a.littles_ttft_s)),
                a.lengths.output_tokens,
                latency(Some(a.littles_tpot_s))
            ),
            "an-concurrency",
        ),
        (
            "Fleet at peak",
            format!(
                "{} sequences, {} KV tokens",
                whole(a.concurrency_fleet_peak),
                whole(a.kv_tokens_fleet_peak)
            ),
            "an-fleet",
        ),
        (
            "Suggested max_num_seqs",
            format!(
                "≥ {}{} (plan: {})",
                a.suggested_max_num_seqs,
                if a.suggestion_capped_by_kv {
                    ", capped by KV memory"
                } else {
                    ""
                },
                a.max_num_seqs
            ),
            "an-max-num-seqs",
        ),
        (
            "Budget rule: largest token budget within TPOT",
            a.token_budget_max
                .map(|b| format!("{} tokens", thousands(i64::from(b))))
                .unwrap_or_else(|| "no TPOT objective".into()),
            "an-budget",
        ),
        (
            "Decode-floor step at that concurrency",
            latency(Some(a.decode_floor_step_s)),
            "an-decode-floor",
        ),
        (
            "Prefill compute load",
            format!(
                "{} of one replica's FLOP/s; fleet peak {:.2}× one replica",
                percent_whole(a.prefill_load_replica),
                a.prefill_load_fleet_peak
            ),
            "an-prefill-load",
        ),
        (
            "GPU busy share at the planned rate (lower bound)",
            percent_whole(a.work_load_replica),
            "an-work-load",
        ),
        (
            "KV-cache capacity per replica",
            format!(
                "{} tokens ≈ {} sequences at the mean context",
                whole(a.kv_capacity_tokens),
                whole(a.kv_capacity_seqs)
            ),
            "an-kv",
        ),
        (
            "M/D/1 prefill pool TTFT",
            format!(
                "D = {}: one device {}, two-way inter-op {}, two-way intra-op {}",
                latency(Some(q.service_s)),
                queue_ttft(q.ttft_single_s),
                queue_ttft(q.ttft_inter_op_s),
                queue_ttft(q.ttft_intra_op_s)
            ),
            "an-md1",
        ),
        (
            "Attainment precision (standard error)",
            format!(
                "±{:.2} pts per point, ±{:.2} pts pooled",
                a.attainment_se_point * 100.0,
                a.attainment_se_pooled * 100.0
            ),
            "an-se",
        ),
    ]
}

/// The prefix cache at the planned rate in words: "38.2% of prompt tokens found cached,
/// 12,288 tokens evicted (simulated at 7.36 req/s)".
pub fn prefix_words(p: &PrefixAtPlannedRate) -> String {
    format!(
        "{} of prompt tokens found cached, {} tokens evicted (simulated at {} req/s)",
        goodput_core::format::percent_tenths(p.hit_rate),
        thousands(i64::try_from(p.evicted_tokens).unwrap_or(i64::MAX)),
        rps(p.rate_rps)
    )
}

/// The analytic panel (instant; uses the plan's goodput, measured or simulated, once known).
#[component]
pub fn AnalyticPanel() -> impl IntoView {
    let state = PlanState::expect_context();
    let report = use_report().report;
    let analytics = Memo::new(move |_| {
        let goodput = report.with(|r| r.as_ref().map(|(_, r)| r.goodput.goodput_rps));
        state
            .good
            .with(|p| analyze(p, goodput.filter(|g| *g > 0.0)))
    });
    // The prefix cache at the planned rate, for a plan with shared prefixes: simulated.
    let prefix = Memo::new(move |_| {
        report.with(|r| r.as_ref().and_then(|(p, r)| prefix_at_planned_rate(p, r)))
    });
    view! {
        <section class="panel" aria-labelledby="analytic-title">
            <h2 id="analytic-title">"Analytic checks"</h2>
            <p class="panel-intro">"Closed-form companions of the simulation, at the planned rate per replica."</p>
            <ul class="warnings" data-testid="analytic-warnings">
                {move || {
                    analytics
                        .with(|a| a.warnings.clone())
                        .into_iter()
                        .map(|w| {
                            let class = match w.severity {
                                Severity::Info => "info",
                                Severity::Warning => "warning",
                                Severity::Critical => "critical",
                            };
                            // Each warning as a sentence: capital first, full stop last.
                            let text = goodput_core::format::sentence(&w.message);
                            view! { <li class=class data-warning=w.id>{text}</li> }
                        })
                        .collect_view()
                }}
            </ul>
            <dl class="analytic">
                {move || {
                    analytics
                        .with(rows)
                        .into_iter()
                        .map(|(label, value, id)| view! { <dt>{label}</dt><dd data-testid=id>{value}</dd> })
                        .collect_view()
                }}
                {move || prefix.get().map(|p| view! {
                    <dt>"Prefix cache hits at the planned rate"</dt>
                    <dd data-testid="an-prefix-hit" data-value=p.hit_rate.to_string()>{prefix_words(&p)}</dd>
                })}
            </dl>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use goodput_core::Plan;

    fn row(a: &Analytics, id: &str) -> String {
        rows(a)
            .into_iter()
            .find(|r| r.2 == id)
            .map(|r| r.1)
            .expect("row")
    }

    #[test]
    fn counts_have_separators_and_one_queue_reads_in_one_unit() {
        let a = analyze(&Plan::default(), Some(22.0));
        let kv = row(&a, "an-kv");
        assert!(
            kv.contains(&format!(
                "{} tokens",
                thousands(a.kv_capacity_tokens.round() as i64)
            )),
            "{kv}"
        );
        assert!(
            a.kv_capacity_tokens > 1e5 && kv.split(' ').next().unwrap().contains(','),
            "{kv}"
        );
        let fleet = row(&a, "an-fleet");
        assert!(fleet.contains(','), "{fleet}");
        // The default plan's prefill queue is short: every figure in ms, none in s.
        let md1 = row(&a, "an-md1");
        assert_eq!(md1.matches(" ms").count(), 4, "{md1}");
        assert!(!md1.contains(" s,") && !md1.ends_with(" s"), "{md1}");
    }
}
