//! Search, capacity, analytic and alert vectors.

use goodput_core::alerts::alert_rules;
use goodput_core::analytic::{
    analyze, attainment_std_error, littles_law_concurrency, md1_ttft_inter_op_s,
    md1_ttft_intra_op_s, md1_ttft_s, MeanLengths,
};
use goodput_core::capacity::{knee_from_sweep, parse_sweep_csv, size_fleet};
use goodput_core::plan::KvPolicy;
use goodput_core::report::{GoodputSource, PlanReport};
use goodput_core::search::{search_goodput_threads, sweep_knobs_threads, SearchStatus};
use goodput_core::Plan;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

#[test]
fn littles_law_article_numbers() {
    // 20 req/s × 275 output tokens × 15 ms per token ≈ 83 decoding sequences.
    let c = littles_law_concurrency(20.0, 275.0 * 0.015);
    assert_eq!(c.round(), 83.0, "{c}");
    // 30 req/s × 14.5 s = 435 sequences, × 1,400 tokens of context ≈ 609,000 KV tokens.
    let fleet = littles_law_concurrency(30.0, 400.0 * 0.035 + 0.5);
    assert!(close(fleet, 435.0, 1e-9), "{fleet}");
    assert!(close(fleet * 1400.0, 609_000.0, 1e-6));
}

#[test]
fn md1_article_numbers() {
    // D = 0.4 s: 1.2 s at 2.0 req/s (utilisation 0.8) and 2.2 s at 2.25 req/s (0.9).
    let a = md1_ttft_s(2.0, 0.4).expect("stable");
    let b = md1_ttft_s(2.25, 0.4).expect("stable");
    assert!(close(a, 1.2, 1e-12), "{a}");
    assert!(close(b, 2.2, 1e-12), "{b}");
    // +12.5% load, +83% mean TTFT.
    assert!(close(b / a - 1.0, 0.8333, 1e-3));
    // Two-way inter-op: 0.4 + 2 × 0.16 / (4 × 1.2); intra-op K = 2: 0.2 + 2 × 0.16 / (4 × 1.2).
    assert!(close(
        md1_ttft_inter_op_s(2.0, 0.4).expect("stable"),
        0.4 + 0.32 / 4.8,
        1e-12
    ));
    assert!(close(
        md1_ttft_intra_op_s(2.0, 0.4, 2.0).expect("stable"),
        0.2 + 0.32 / 4.8,
        1e-12
    ));
    assert_eq!(md1_ttft_s(2.5, 0.4), None, "utilisation 1 is unstable");
}

#[test]
fn attainment_precision_article_number() {
    // p = 0.95 from n = 200 requests: about 1.5 percentage points.
    assert!(close(attainment_std_error(0.95, 200) * 100.0, 1.54, 0.01));
}

#[test]
fn capacity_from_the_article_sweep() {
    let csv = "rate,attainment\n4,99%\n6,97%\n8,93%\n9,71%\n10,38%\n";
    let rows = parse_sweep_csv(csv).expect("parses");
    let goodput = knee_from_sweep(&rows, 0.92).expect("knee");
    assert_eq!(goodput, 8.0);
    let mut plan = Plan::default();
    plan.traffic.peak_rate_rps = 30.0;
    plan.planning.utilization = 0.7;
    plan.planning.redundancy = 1;
    let c = size_fleet(goodput, &plan).expect("sized");
    assert!(close(c.planned_rps_per_replica, 5.6, 1e-12));
    assert_eq!(c.replicas_for_peak, 6);
    assert_eq!(c.replicas_total, 7);
    assert_eq!(c.gpus_total, 7);
    // GPU-hour price × GPUs per replica / (5.6 × 3,600).
    let expect = plan.hardware.gpu_hour_usd / (5.6 * 3600.0);
    assert!(close(c.cost_per_compliant_request_usd, expect, 1e-15));
    // The same numbers through the plan report.
    plan.slo.attainment_target = 0.92;
    plan.planning.measured_sweep = rows;
    let r = PlanReport::build(&plan, None, None);
    assert_eq!(r.goodput.source, GoodputSource::Measured);
    assert_eq!(r.capacity.expect("sized").replicas_total, 7);
}

#[test]
fn worked_example_companions() {
    let plan = Plan::default();
    let len = MeanLengths::of(&plan);
    // The article rounds the means to ≈ 1,100 and ≈ 275 tokens.
    assert!(
        close(len.prompt_tokens, 1100.0, 11.0),
        "{}",
        len.prompt_tokens
    );
    assert!(
        close(len.output_tokens, 275.0, 11.0),
        "{}",
        len.output_tokens
    );
    let a = analyze(&plan, Some(22.0));
    // c0 + 2·P·budget/pi_eff ≤ 25 ms: a 512 budget fits, 2,048 does not.
    let max_budget = a.token_budget_max.expect("TPOT objective");
    assert!((512..2048).contains(&max_budget), "{max_budget}");
    // Prefill of 20 req/s × ~1,100 tokens is ≈ 59% of pi_eff; at the planned 15.4 req/s
    // it scales to ≈ 45%.
    let at_20 = a.prefill_load_replica * 20.0 / a.rate_per_replica_rps;
    assert!(close(at_20, 0.59, 0.01), "{at_20}");
}

/// The article's reference scheduler: 8B model, 128 sequences, budget 512, 0.5 s / 25 ms.
fn article_plan() -> Plan {
    let mut plan = Plan::default();
    plan.engine.kv_policy = KvPolicy::None;
    plan
}

#[test]
fn simulated_goodput_of_the_article_config() {
    // 20 replications per rate (the default). The article: 97.6% at 20 req/s, 91.3% at 22,
    // 44% at 24, so the 90% goodput sits just above 22 req/s.
    let plan = article_plan();
    assert_eq!(plan.run.replications, 20);
    let r = search_goodput_threads(&plan, 2, &mut |_| true).expect("search");
    assert_eq!(r.status, SearchStatus::Converged);
    assert!(
        (20.5..=23.5).contains(&r.goodput_rps),
        "goodput {}",
        r.goodput_rps
    );
    let [lo, hi] = r.goodput_range_rps;
    assert!(
        lo <= r.goodput_rps && r.goodput_rps <= hi && hi - lo < 2.0,
        "{lo}..{hi}"
    );
    for c in &r.curve {
        if c.rate_rps <= 18.0 {
            assert!(c.attainment >= 0.97, "{} at {}", c.attainment, c.rate_rps);
        }
        if c.rate_rps >= 24.5 {
            assert!(c.attainment < 0.6, "{} at {}", c.attainment, c.rate_rps);
        }
    }
    // The plan's default KV policy (paged) lands in the same place.
    let d = search_goodput_threads(&Plan::default(), 2, &mut |_| true).expect("search");
    assert!((20.5..=23.5).contains(&d.goodput_rps), "{}", d.goodput_rps);
}

#[test]
fn knob_sweep_reproduces_the_sequence_cap_story() {
    // The article: goodput 5 to 6 at 16 sequences, 17 to 19 at 64, 22 at 128.
    let mut plan = article_plan();
    plan.run.sweep_max_num_seqs = vec![16, 64, 128];
    plan.run.sweep_batched_tokens = vec![512];
    let s = sweep_knobs_threads(&plan, 2, &mut |_| true).expect("sweep");
    let g: Vec<f64> = s.cells.iter().map(|c| c.goodput_rps).collect();
    assert!((4.5..=7.0).contains(&g[0]), "16 seqs: {}", g[0]);
    assert!((16.0..=20.0).contains(&g[1]), "64 seqs: {}", g[1]);
    assert!((20.5..=23.5).contains(&g[2]), "128 seqs: {}", g[2]);
    assert_eq!(s.best, 2);
    assert!(s
        .flags
        .vllm
        .contains("--max-num-seqs 128 --max-num-batched-tokens 512"));
}

#[test]
fn alert_rules_parse_as_prometheus_rule_yaml() {
    let mut plan = Plan::default();
    plan.slo.attainment_target = 0.99;
    let rules = alert_rules(&plan, 22.0);
    let doc: serde_norway::Value = serde_norway::from_str(&rules.yaml).expect("valid YAML");
    let groups = doc["groups"].as_sequence().expect("groups");
    assert_eq!(groups.len(), 1);
    assert_eq!(groups[0]["name"].as_str(), Some("goodput-slo-chat"));
    let list = groups[0]["rules"].as_sequence().expect("rules");
    let names: Vec<&str> = list.iter().filter_map(|r| r["alert"].as_str()).collect();
    assert_eq!(
        names,
        [
            "LlmSloBurnRateFast",
            "LlmSloBurnRateMedium",
            "LlmSloBurnRateSlow",
            "LlmQueueDepthHigh"
        ]
    );
    let expected = [
        ("1h", "5m", "0.144", "page"),
        ("6h", "30m", "0.06", "page"),
        ("3d", "6h", "0.01", "ticket"),
    ];
    for (rule, (long, short, threshold, severity)) in list.iter().zip(expected) {
        let expr = rule["expr"].as_str().expect("expr");
        assert!(
            expr.contains(&format!("slo_met_total{{class=\"chat\"}}[{long}]")),
            "{expr}"
        );
        assert!(
            expr.contains(&format!("slo_total{{class=\"chat\"}}[{short}]")),
            "{expr}"
        );
        assert_eq!(expr.matches(&format!("> {threshold}")).count(), 2, "{expr}");
        assert!(expr.contains(" and "), "both windows must hold: {expr}");
        assert_eq!(rule["labels"]["severity"].as_str(), Some(severity));
        assert!(rule["for"].as_str().is_some());
        assert!(rule["annotations"]["summary"].as_str().is_some());
    }
    let queue = &list[3];
    assert_eq!(
        queue["expr"].as_str(),
        Some("max by (instance) (vllm:num_requests_waiting) > 6")
    );
    assert_eq!(queue["labels"]["severity"].as_str(), Some("warning"));
}
