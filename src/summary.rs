//! The plan in plain words, for the finance view, the embed card and the compare page:
//! the answer sentence and the SLO in words (the assumptions are the core's
//! [`goodput_core::report::assumptions`]). Every
//! number comes from the core ([`CapacityPlan`], the [`Plan`]); this only formats.

use goodput_core::calibrate::{calibration_summary, CalibrationWords};
use goodput_core::capacity::CapacityPlan;
use goodput_core::plan::{SloMode, SloSpec};
use goodput_core::{presets, Plan};

use goodput_core::format::{count, latency, percent, percent_tenths, rps, sig, usd};
use goodput_core::report::{class_words, routing_words, traffic_words, PlanReport, PlannedLoad};

/// A duration for people: `25 ms` below one second, `0.5 s` from 100 ms up.
pub fn duration(s: f64) -> String {
    if s >= 0.1 {
        format!("{} s", sig(s))
    } else {
        format!("{} ms", sig(s * 1e3))
    }
}

/// The display name of the plan's GPU (the preset's name, or "GPU" for custom hardware).
pub fn gpu_name(plan: &Plan) -> String {
    presets::gpu(&plan.hardware.preset)
        .map(|g| g.name.to_string())
        .unwrap_or_else(|| "GPU".into())
}

/// The display name of the plan's model (the preset's name, or its size).
pub fn model_name(plan: &Plan) -> String {
    match presets::model(&plan.model.preset) {
        Some(m) => m.name.to_string(),
        None => format!("custom {}B-parameter model", sig(plan.model.params / 1e9)),
    }
}

/// What the plan is about, in one line: `Llama 3.1 8B on H100 SXM, 30 req/s peak`, with
/// the GPUs of a replica when it spans several (`on 2 × H100 SXM`), and its layout when
/// that is more than tensor parallelism (`on 16 × H100 SXM (TP8 × PP2, 2 nodes)`).
pub fn setup_words(plan: &Plan) -> String {
    let h = &plan.hardware;
    let n = h.gpus_per_replica();
    let gpus = if n > 1 {
        format!("{n} × {}", gpu_name(plan))
    } else {
        gpu_name(plan)
    };
    let gpus = match goodput_core::shootout::Layout::of(plan).parts(&h.preset) {
        (layout, Some(nodes)) => format!("{gpus} ({layout}, {nodes})"),
        (_, None) => gpus,
    };
    format!(
        "{} on {gpus}, {} req/s peak",
        model_name(plan),
        sig(plan.traffic.peak_rate_rps)
    )
}

/// The SLO in words, saying which mode is in force: joint, "90% of requests within
/// 0.5 s to first token and 25 ms per token"; marginal, "p90 TTFT ≤ 0.5 s and p90 TPOT
/// ≤ 25 ms, each on its own".
pub fn slo_words(slo: &SloSpec) -> String {
    if slo.mode == SloMode::Marginal {
        return marginal_words(slo);
    }
    let mut parts = Vec::new();
    if let Some(t) = slo.ttft_s {
        parts.push(format!("{} to first token", duration(t)));
    }
    if let Some(t) = slo.tpot_s {
        parts.push(format!("{} per token", duration(t)));
    }
    if let Some(t) = slo.e2e_s {
        parts.push(format!("{} end to end", duration(t)));
    }
    if parts.is_empty() {
        return "no latency objective (throughput only)".into();
    }
    let last = parts.pop().unwrap_or_default();
    let within = if parts.is_empty() {
        last
    } else {
        format!("{} and {last}", parts.join(", "))
    };
    format!(
        "{} of requests within {within}",
        percent(slo.attainment_target)
    )
}

/// Joins `parts` as "a, b and c".
fn and_list(mut parts: Vec<String>) -> String {
    let last = parts.pop().unwrap_or_default();
    if parts.is_empty() {
        last
    } else {
        format!("{} and {last}", parts.join(", "))
    }
}

fn marginal_words(slo: &SloSpec) -> String {
    let p = format!("p{}", sig((slo.attainment_target * 1e4).round() / 1e2));
    let parts: Vec<String> = [
        ("TTFT", slo.ttft_s),
        ("TPOT", slo.tpot_s),
        ("E2E", slo.e2e_s),
    ]
    .into_iter()
    .filter_map(|(name, t)| t.map(|t| format!("{p} {name} ≤ {}", duration(t))))
    .collect();
    match parts.len() {
        0 => "no latency objective (throughput only)".into(),
        1 => and_list(parts),
        _ => format!("{}, each on its own", and_list(parts)),
    }
}

/// The answer first, in one sentence: GPUs, replicas for the peak and spares, monthly
/// cost, cost per 1,000 compliant requests, and the SLO it holds.
pub fn answer_sentence(plan: &Plan, fleet: &CapacityPlan) -> String {
    let spare = match fleet.redundancy {
        0 => "no spare".to_string(),
        1 => "1 spare".to_string(),
        n => format!("{n} spares"),
    };
    let peak = format!(
        "{} for a {} req/s peak + {spare}",
        fleet.replicas_for_peak,
        sig(fleet.peak_rate_rps)
    );
    let gpus = if fleet.gpus_per_replica == 1 {
        format!("{} × {} ({peak})", fleet.gpus_total, gpu_name(plan))
    } else {
        format!(
            "{} × {} as {} of {} GPUs ({peak})",
            fleet.gpus_total,
            gpu_name(plan),
            count(u64::from(fleet.replicas_total), "replica", "replicas"),
            fleet.gpus_per_replica
        )
    };
    format!(
        "{gpus}, {}/month, {} per 1,000 compliant requests, at {}",
        usd(fleet.cost_per_month_usd),
        usd(fleet.cost_per_compliant_request_usd * 1000.0),
        plan_slo_words(plan)
    )
}

/// The objectives a plan holds, in words: its SLO's ([`slo_words`]), or for a plan of
/// traffic classes each class's: "each class's own objectives: chat, 90% of requests
/// within 0.5 s to first token and 25 ms per token; batch, 90% of requests within 30 s
/// end to end".
pub fn plan_slo_words(plan: &Plan) -> String {
    if plan.classes.is_empty() {
        return slo_words(&plan.slo);
    }
    let each: Vec<String> = plan
        .classes
        .iter()
        .enumerate()
        .map(|(k, c)| format!("{}, {}", c.name, slo_words(&plan.class_plan(k).slo)))
        .collect();
    format!("each class's own objectives: {}", each.join("; "))
}

/// The report's assumptions beyond the registry's finance rows that read as a label and
/// a value, each as its path, label and value, in the report's order: the traffic in one
/// line ("Traffic", "Poisson arrivals; prompts median 800 tokens …") and, for a plan
/// whose prompts share prefixes or that routes over replicas, the routing ("Routing",
/// "goodput per replica is simulated on 2 replicas behind …"); between them, each
/// traffic class ("Traffic class chat", "70% of requests, …"). The finance view and
/// the printed planner list them after the finance rows, as the report does; a line the
/// report does not state is left out.
pub fn report_assumptions(plan: &Plan, report: &PlanReport) -> Vec<(&'static str, String, String)> {
    let mut lines = vec![("traffic", traffic_words(plan))];
    lines.extend((0..plan.classes.len()).map(|k| ("classes", class_words(plan, k))));
    lines.push(("routing", routing_words(plan)));
    lines
        .into_iter()
        .filter(|(_, line)| report.assumptions.contains(line))
        .filter_map(|(path, line)| {
            let (label, value) = line.split_once(": ")?;
            Some((
                path,
                label.to_string(),
                value.trim_end_matches('.').to_string(),
            ))
        })
        .collect()
}

/// The latency at the planned rate per replica, from the report's one simulation there
/// (`load`), and the share of prompt tokens the prefix cache held in it (`hit_rate`, for
/// a plan whose prompts share prefixes): "At the planned 7.36 req/s per replica, one
/// simulation gives a p99 TTFT of 312 ms and a p99 TPOT of 21.4 ms; 62.1% of prompt
/// tokens are found in the prefix cache."
pub fn planned_load_words(load: &PlannedLoad, hit_rate: Option<f64>) -> String {
    let d = &load.detail;
    let cache = hit_rate
        .map(|h| {
            format!(
                "; {} of prompt tokens are found in the prefix cache",
                percent_tenths(h)
            )
        })
        .unwrap_or_default();
    format!(
        "At the planned {} req/s per replica, one simulation gives a p99 TTFT of {} and a p99 TPOT of {}{cache}.",
        rps(load.rate_rps),
        latency(Some(d.ttft_p99_s)),
        latency(Some(d.tpot_p99_s)),
    )
}

/// How a calibrated plan's numbers came about, in words (the core's one wording, for the
/// finance view's sentence and the embed card's badge); `None` for a plan that was never
/// calibrated.
pub fn calibration_words(plan: &Plan) -> Option<CalibrationWords> {
    plan.calibration.as_ref().map(calibration_summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use goodput_core::capacity::size_fleet;
    use goodput_core::plan::{Calibration, CalibrationSource, MetricErrors};

    #[test]
    fn calibration_in_words_for_the_finance_view_and_the_embed_card() {
        let mut plan = Plan::default();
        assert_eq!(calibration_words(&plan), None);
        let errors = |overall: f64| MetricErrors {
            overall,
            ..MetricErrors::default()
        };
        let mut c = Calibration {
            source: CalibrationSource {
                files: vec!["a.json".into()],
                tool: "vllm bench serve".into(),
                model: "Llama-3.1-70B-Instruct-FP8".into(),
                ..CalibrationSource::default()
            },
            ..Calibration::default()
        };
        c.error.held_out = Some(errors(0.0812));
        c.error.uncalibrated = errors(0.2687);
        c.error.in_sample = errors(0.05);
        c.points = (1..=8)
            .map(|i| goodput_core::plan::MeasuredSummary {
                load: goodput_core::plan::MeasuredLoad::Rate {
                    rate_rps: f64::from(i),
                    cv: 1.0,
                },
                achieved_rps: f64::from(i),
                ttft_mean_s: Some(0.1),
                ttft_p50_s: None,
                ttft_p99_s: None,
                tpot_mean_s: None,
                tpot_p50_s: None,
                tpot_p99_s: None,
                e2e_mean_s: None,
                e2e_p50_s: None,
                e2e_p99_s: None,
            })
            .collect();
        plan.calibration = Some(c);
        let w = calibration_words(&plan).expect("calibrated");
        assert_eq!(
            w.sentence,
            "Calibrated from 8 vllm bench serve measurements (Llama-3.1-70B-Instruct-FP8): \
             predictions missed measured latency by 8% on average on held-out runs \
             (datasheet constants: 27%)."
        );
        assert_eq!(w.badge, "calibrated · held-out error 8%");
        // Switched off: the numbers use the datasheet constants, and say so.
        plan.calibration.as_mut().unwrap().enabled = false;
        let w = calibration_words(&plan).expect("calibrated");
        assert!(w
            .sentence
            .contains("switched off: the numbers use the datasheet constants"));
        assert_eq!(w.badge, "datasheet constants");
        // One point: no held-out error, and the words say what the number is instead.
        let c = plan.calibration.as_mut().unwrap();
        c.enabled = true;
        c.error.held_out = None;
        c.points.truncate(1);
        let w = calibration_words(&plan).expect("calibrated");
        assert!(w
            .sentence
            .starts_with("Calibrated from 1 vllm bench serve measurement ("));
        assert!(w
            .sentence
            .contains("missed measured latency by 5% on average on the measured run itself"));
        assert_eq!(w.badge, "calibrated · in-sample error 5%");
    }

    /// The routing line is the report's, split as the finance view lists it, and only
    /// where the report states one; the planned load reads in a reader's units.
    #[test]
    fn routing_and_the_planned_load_in_words() {
        use goodput_core::plan::{FleetRouter, PrefixModel, RoutingSpec};
        use goodput_core::search::LatencyDetail;
        let mut plan = Plan::default();
        let lines = |p: &Plan| {
            let report = PlanReport::build(p, None, None);
            let rows = report_assumptions(p, &report);
            // Each the report's own line, split at its label.
            for (_, label, value) in &rows {
                assert!(report.assumptions.contains(&format!("{label}: {value}.")));
            }
            rows
        };
        let paths = |p: &Plan| lines(p).iter().map(|r| r.0).collect::<Vec<_>>();
        assert_eq!(paths(&plan), ["traffic"]);
        plan.traffic.sharing = Some(PrefixModel {
            sessions: 8,
            ..PrefixModel::NONE
        });
        assert_eq!(paths(&plan), ["traffic", "routing"]);
        let value = lines(&plan).remove(1).2;
        assert!(value.starts_with("one replica is simulated"), "{value}");
        plan.routing = Some(RoutingSpec {
            replicas: 3,
            router: FleetRouter::SessionAffinity,
        });
        let value = lines(&plan).remove(1).2;
        assert!(value.contains("on 3 replicas") && value.ends_with("one replica per session"));

        let load = PlannedLoad {
            rate_rps: 7.356,
            detail: LatencyDetail {
                classes: Default::default(),
                ttft_p50_s: 0.1,
                ttft_p99_s: 0.312_345,
                tpot_p50_s: 0.015,
                tpot_p99_s: 0.021_44,
                itl_p99_s: 0.03,
                output_tokens_per_s: 1000.0,
                mean_queue_len: 1.0,
                preemptions: 0,
                prefix_hit_rate: 0.6213,
                prefix_evicted_tokens: 0,
            },
        };
        assert_eq!(
            planned_load_words(&load, Some(0.6213)),
            "At the planned 7.36 req/s per replica, one simulation gives a p99 TTFT of 312 ms \
             and a p99 TPOT of 21.4 ms; 62.1% of prompt tokens are found in the prefix cache."
        );
        assert!(planned_load_words(&load, None).ends_with("a p99 TPOT of 21.4 ms."));
    }

    #[test]
    fn the_capacity_article_example_in_words() {
        // The measured sweep's knee of 8 req/s at 70% utilisation: 6 replicas for a
        // 30 req/s peak, 7 with N+1.
        let plan = Plan::default();
        let fleet = size_fleet(8.0, &plan).expect("sized");
        let s = answer_sentence(&plan, &fleet);
        assert!(
            s.starts_with(
                "7 × NVIDIA H100 SXM 80GB (6 for a 30 req/s peak + 1 spare), $12,775/month, "
            ),
            "{s}"
        );
        assert!(
            s.ends_with(" per 1,000 compliant requests, at 90% of requests within 0.5 s to first token and 25 ms per token"),
            "{s}"
        );
        let per_1000 = usd(fleet.cost_per_compliant_request_usd * 1000.0);
        assert!(s.contains(&format!(", {per_1000} per 1,000")), "{s}");
    }

    #[test]
    fn tensor_parallel_and_no_spare() {
        let mut plan = Plan::default();
        plan.hardware.tp_degree = 2;
        plan.planning.redundancy = 0;
        let fleet = size_fleet(8.0, &plan).expect("sized");
        let s = answer_sentence(&plan, &fleet);
        assert!(s.starts_with("12 × NVIDIA H100 SXM 80GB as 6 replicas of 2 GPUs (6 for a 30 req/s peak + no spare)"), "{s}");
        assert!(setup_words(&plan).contains(" on 2 × NVIDIA H100 SXM 80GB, "));
    }

    #[test]
    fn a_replica_over_stages_or_experts_counts_every_gpu_in_the_headline() {
        let mut plan = Plan::default();
        plan.hardware.tp_degree = 8;
        plan.hardware.pp_degree = 2;
        assert!(
            setup_words(&plan).contains(" on 16 × NVIDIA H100 SXM 80GB (TP8 × PP2, 2 nodes), "),
            "{}",
            setup_words(&plan)
        );
        goodput_core::presets::model("qwen3-30b-a3b")
            .expect("moe")
            .apply(&mut plan);
        plan.hardware.tp_degree = 1;
        plan.hardware.pp_degree = 1;
        plan.hardware.ep_degree = 8;
        assert!(
            setup_words(&plan).contains(" on 8 × NVIDIA H100 SXM 80GB (EP8, 1 node), "),
            "{}",
            setup_words(&plan)
        );
    }

    #[test]
    fn formats() {
        assert_eq!(duration(0.025), "25 ms");
        assert_eq!(duration(1.5), "1.5 s");
        assert_eq!(percent(0.995), "99.5%");
        let mut slo = SloSpec {
            e2e_s: Some(30.0),
            ..SloSpec::default()
        };
        assert_eq!(
            slo_words(&slo),
            "90% of requests within 0.5 s to first token, 25 ms per token and 30 s end to end"
        );
        slo.mode = SloMode::Marginal;
        assert_eq!(
            slo_words(&slo),
            "p90 TTFT ≤ 0.5 s, p90 TPOT ≤ 25 ms and p90 E2E ≤ 30 s, each on its own"
        );
        slo.e2e_s = None;
        assert_eq!(
            slo_words(&slo),
            "p90 TTFT ≤ 0.5 s and p90 TPOT ≤ 25 ms, each on its own"
        );
        slo.attainment_target = 0.995;
        slo.tpot_s = None;
        assert_eq!(slo_words(&slo), "p99.5 TTFT ≤ 0.5 s");
        slo.ttft_s = None;
        assert_eq!(slo_words(&slo), "no latency objective (throughput only)");
        slo.mode = SloMode::Joint;
        assert_eq!(slo_words(&slo), "no latency objective (throughput only)");
    }
}
