//! Tests of the disaggregated simulation, the M/D/1 companion, the sizing and the
//! plan field.

use super::sizing::drive_threads;
use super::*;
use crate::digest::{fnv1a, FNV1A_START};
use crate::plan::{LengthDist, LengthSpec, MAX_DISAGG_INSTANCES, MAX_DISAGG_POINTS};
use crate::stats::mean_ci95;

/// Every request the same prompt and output length.
fn fixed_lengths(plan: &mut Plan, prompt: u32, output: u32) {
    plan.traffic.prompt = LengthSpec {
        dist: LengthDist::Fixed { tokens: prompt },
        min: 1,
        max: prompt,
    };
    plan.traffic.output = LengthSpec {
        dist: LengthDist::Fixed { tokens: output },
        min: 1,
        max: output,
    };
}

fn cfg_of(plan: &Plan, rate: f64) -> DisaggConfig {
    match DisaggConfig::from_plan(plan, rate) {
        Ok(c) => c,
        Err(e) => panic!("plan should be valid: {e}"),
    }
}

fn sim(cfg: &DisaggConfig, x: u32, y: u32, seed: u64) -> DisaggReport {
    match simulate_disagg(cfg, x, y, seed) {
        Ok(r) => r,
        Err(e) => panic!("simulation should run: {e}"),
    }
}

#[test]
fn md1_prefill_pool_matches_the_design_test_vector() {
    // D = 0.4 s: TTFT 1.2 s at R = 2.0 and 2.2 s at R = 2.25.
    let a = prefill_md1(2.0, 0.4);
    let b = prefill_md1(2.25, 0.4);
    assert!((a.ttft_s.expect("stable") - 1.2).abs() < 1e-12, "{a:?}");
    assert!((b.ttft_s.expect("stable") - 2.2).abs() < 1e-12, "{b:?}");
    assert!((a.wait_s.expect("stable") - 0.8).abs() < 1e-12);
    assert!((b.utilization - 0.9).abs() < 1e-12);
    assert_eq!(prefill_md1(2.5, 0.4).ttft_s, None, "R·D = 1 is unstable");
}

#[test]
fn simulated_prefill_queueing_agrees_with_md1() {
    // Fixed 2,048-token prompts, a budget of exactly one prompt: every prefill step
    // serves one request in the same time D. Poisson arrivals at load 0.7 on one
    // prefill instance make an M/D/1 queue, whose mean wait is ρD / (2(1 − ρ)).
    let mut plan = Plan::default();
    fixed_lengths(&mut plan, 2048, 2);
    plan.run.num_requests = 4000;
    plan.run.warmup_requests = 400;
    let mut spec = DisaggSpec::for_plan(&plan);
    spec.prefill.max_num_batched_tokens = 2048;
    plan.disagg = Some(spec);
    let probe = cfg_of(&plan, 1.0);
    let d = probe.prefill.step.step_time_s(2048.0, 0.0);
    let rho = 0.7;
    let cfg = cfg_of(&plan, rho / d);
    let waits: Vec<f64> = (0..40)
        .map(|i| {
            let seed = crate::sim::replication_seed(7, i);
            sim(&cfg, 1, 4, seed).prefill_wait_s.mean
        })
        .collect();
    let (mean, [lo, hi]) = mean_ci95(&waits, 0.0, f64::INFINITY);
    let md1 = prefill_md1(rho / d, d);
    let wq = md1.wait_s.expect("stable");
    assert!((wq - rho * d / (2.0 * (1.0 - rho))).abs() < 1e-12);
    assert!(
        lo <= wq && wq <= hi,
        "M/D/1 wait {wq:.5} s outside the simulated 95% CI [{lo:.5}, {hi:.5}] (mean {mean:.5})"
    );
    // The interval is informative: narrower than a fifth of the value.
    assert!(hi - lo < 0.2 * wq, "[{lo}, {hi}]");
}

#[test]
fn one_request_alone_pays_prefill_transfer_and_decode_steps() {
    let mut plan = Plan::default();
    fixed_lengths(&mut plan, 1000, 5);
    plan.run.num_requests = 3;
    plan.run.warmup_requests = 0;
    let mut spec = DisaggSpec::for_plan(&plan);
    spec.prefill.max_num_batched_tokens = 512;
    spec.kv_link = KvLink {
        source: KvLinkSource::Given,
        bandwidth_bytes_per_s: 10e9,
        latency_s: 2e-3,
    };
    plan.disagg = Some(spec);
    // Requests far apart: nobody waits for anybody.
    let cfg = cfg_of(&plan, 1e-3);
    let r = sim(&cfg, 2, 2, 1);
    let p = cfg.prefill.step;
    let dstep = cfg.decode.step;
    let prefill = p.step_time_s(512.0, 0.0) + p.step_time_s(488.0, 0.0);
    let transfer = 2e-3 + 1000.0 * plan.model.kv_bytes_per_token() / 10e9;
    let first_decode = dstep.step_time_s(1.0, 1000.0);
    let ttft = prefill + transfer + first_decode;
    let tpot = (1..5)
        .map(|k| dstep.step_time_s(1.0, 1000.0 + k as f64))
        .sum::<f64>()
        / 4.0;
    assert!(
        (r.ttft_s.mean - ttft).abs() < 1e-9,
        "{} vs {ttft}",
        r.ttft_s.mean
    );
    assert!(
        (r.tpot_s.mean - tpot).abs() < 1e-9,
        "{} vs {tpot}",
        r.tpot_s.mean
    );
    assert!((r.transfer_s.mean - transfer).abs() < 1e-9);
    assert!((r.prefill_s.mean - prefill).abs() < 1e-9);
    assert_eq!(r.prefill_wait_s.p99, 0.0);
    assert_eq!(r.decode_wait_s.p99, 0.0);
    // The transfer carries the model's KV bytes of the prompt.
    assert_eq!(cfg.kv_transfer_bytes(1000), 1000.0 * 131_072.0);
    assert_eq!(r.measured_requests, 3);
    assert_eq!(r.unfinished_requests, 0);
}

#[test]
fn prefill_steps_batch_prompts_under_the_budget() {
    // Two 300-token prompts arrive together; a budget of 1,000 runs both in one step,
    // a budget of 300 runs them one after the other.
    let mut plan = Plan::default();
    fixed_lengths(&mut plan, 300, 1);
    plan.traffic.arrival = crate::plan::Arrival::Constant;
    plan.run.num_requests = 2;
    plan.run.warmup_requests = 0;
    let mut spec = DisaggSpec::for_plan(&plan);
    spec.prefill.max_num_batched_tokens = 1000;
    plan.disagg = Some(spec.clone());
    // Constant arrivals 1 µs apart.
    let cfg = cfg_of(&plan, 1e6);
    let step = cfg.prefill.step;
    let together = sim(&cfg, 1, 1, 3);
    // The second arrives while the first runs alone (the instance was idle), so it
    // waits one step: batching only joins prompts that are waiting.
    let one = step.step_time_s(300.0, 0.0);
    assert!((together.prefill_s.p50 - (one + 2.0 * one - 1e-6) / 2.0).abs() < 1e-9);
    // Three waiting behind a busy instance go in one step with a large budget.
    plan.run.num_requests = 4;
    let cfg = cfg_of(&plan, 1e6);
    let big = sim(&cfg, 1, 1, 3);
    spec.prefill.max_num_batched_tokens = 300;
    plan.disagg = Some(spec);
    let small = sim(&cfg_of(&plan, 1e6), 1, 1, 3);
    let batch_of_three = step.step_time_s(900.0, 0.0);
    // Last prompt done: one step of 300, then one of 900 (budget 1,000) against four of 300.
    assert!((big.prefill_s.p99 - (one + batch_of_three)).abs() < 1e-3 * one);
    let four_steps = (one + 2.0 * one + 3.0 * one + 4.0 * one - 6e-6) / 4.0;
    assert!((small.prefill_s.mean - four_steps).abs() < 1e-9);
    assert!(small.prefill_s.p99 > big.prefill_s.p99);
}

#[test]
fn decode_pool_respects_max_num_seqs() {
    // Eight requests land together on one decode instance that runs two at a time:
    // four rounds of decoding, so the last one waits three rounds.
    let mut plan = Plan::default();
    fixed_lengths(&mut plan, 100, 10);
    plan.traffic.arrival = crate::plan::Arrival::Constant;
    plan.run.num_requests = 8;
    plan.run.warmup_requests = 0;
    let mut spec = DisaggSpec::for_plan(&plan);
    spec.prefill.max_num_batched_tokens = 800;
    spec.decode.max_num_seqs = 2;
    plan.disagg = Some(spec);
    let cfg = cfg_of(&plan, 1e6);
    let r = sim(&cfg, 8, 1, 1);
    assert_eq!(r.unfinished_requests, 0);
    assert!(r.decode_wait_s.p99 > 2.5 * 10.0 * cfg.decode.step.step_time_s(2.0, 200.0));
    plan.disagg.as_mut().expect("spec").decode.max_num_seqs = 8;
    let r8 = sim(&cfg_of(&plan, 1e6), 8, 1, 1);
    // Only the first step, which the first request to land started alone, is waited for.
    let first_step = cfg.decode.step.step_time_s(1.0, 100.0);
    assert!(r8.decode_wait_s.p99 <= first_step, "{:?}", r8.decode_wait_s);
}

#[test]
fn decode_pool_respects_kv_capacity() {
    // A decode GPU whose KV cache holds about two requests (reserve policy: prompt +
    // output cap each) admits two at a time even with many sequence slots.
    let mut plan = Plan::default();
    fixed_lengths(&mut plan, 1000, 10);
    plan.traffic.arrival = crate::plan::Arrival::Constant;
    plan.engine.kv_policy = KvPolicy::Reserve;
    plan.run.num_requests = 8;
    plan.run.warmup_requests = 0;
    plan.disagg = Some(DisaggSpec::for_plan(&plan));
    let mut cfg = cfg_of(&plan, 1e6);
    cfg.decode.kv_capacity_tokens = 2.5 * 1010.0;
    let tight = sim(&cfg, 8, 1, 1);
    cfg.decode.kv_capacity_tokens = 1e9;
    let roomy = sim(&cfg, 8, 1, 1);
    assert_eq!(tight.unfinished_requests, 0);
    assert!(tight.decode_wait_s.p99 > 10.0 * roomy.decode_wait_s.p99.max(1e-6));
    // A request larger than an empty instance is refused, not left waiting forever.
    cfg.decode.kv_capacity_tokens = 500.0;
    let refused = sim(&cfg, 8, 1, 1);
    assert_eq!(refused.rejected_requests, 8);
    assert_eq!(refused.attainment, 0.0);
}

#[test]
fn least_loaded_routing_beats_round_robin_on_uneven_prompts() {
    let mut plan = Plan::default();
    plan.run.num_requests = 1500;
    plan.run.warmup_requests = 150;
    let mut spec = DisaggSpec::for_plan(&plan);
    spec.router = Router::RoundRobin;
    plan.disagg = Some(spec.clone());
    let rr = cfg_of(&plan, 45.0);
    spec.router = Router::LeastLoaded;
    plan.disagg = Some(spec);
    let ll = cfg_of(&plan, 45.0);
    let mut rr_wait = 0.0;
    let mut ll_wait = 0.0;
    for i in 0..5 {
        let seed = crate::sim::replication_seed(0, i);
        rr_wait += sim(&rr, 3, 4, seed).prefill_wait_s.mean;
        ll_wait += sim(&ll, 3, 4, seed).prefill_wait_s.mean;
    }
    assert!(
        ll_wait < rr_wait,
        "least loaded {ll_wait} vs round robin {rr_wait}"
    );
}

#[test]
fn more_instances_serve_better_and_runs_are_deterministic() {
    let mut plan = Plan::default();
    plan.run.num_requests = 1200;
    plan.run.warmup_requests = 100;
    plan.disagg = Some(DisaggSpec::for_plan(&plan));
    let cfg = cfg_of(&plan, 40.0);
    let a = sim(&cfg, 2, 1, 5);
    let b = sim(&cfg, 2, 3, 5);
    let c = sim(&cfg, 1, 3, 5);
    assert!(b.tpot_s.mean < a.tpot_s.mean);
    assert!(b.attainment >= a.attainment);
    assert!(b.prefill_wait_s.mean < c.prefill_wait_s.mean);
    assert_eq!(sim(&cfg, 2, 3, 5), b, "same seed, same report");
    for (x, y) in [(0, 1), (1, 0), (MAX_DISAGG_INSTANCES + 1, 1)] {
        assert!(matches!(
            simulate_disagg(&cfg, x, y, 0),
            Err(DisaggError::Instances { .. })
        ));
    }
}

#[test]
fn the_request_stream_is_the_aggregated_one() {
    // Same plan, rate and seed: the disaggregated run measures the same requests as the
    // aggregated simulator (identical output tokens in all).
    let mut plan = Plan::default();
    plan.run.num_requests = 500;
    plan.run.warmup_requests = 0;
    plan.engine.kv_policy = KvPolicy::None;
    let agg = crate::sim::simulate(
        &crate::sim::SimConfig::from_plan(&plan, 5.0).expect("cfg"),
        9,
    )
    .expect("sim");
    let cfg = cfg_of(&plan, 5.0);
    let w = cfg.traffic.generate(500, &mut crate::rng::Rng::new(9));
    let out: f64 = w.output_tokens.iter().map(|&o| o as f64).sum();
    let r = sim(&cfg, 1, 1, 9);
    assert_eq!(r.unfinished_requests, 0);
    assert!((agg.output_tokens_per_s * agg.sim_time_s - out).abs() < 1e-6 * out);
}

/// The plan's pools pinned to `x` prefill and `y` decode instances (xPyD).
fn pinned(plan: &Plan, x: u32, y: u32) -> DisaggSpec {
    let mut spec = DisaggSpec::for_plan(plan);
    spec.prefill.instances = Some(x);
    spec.decode.instances = Some(y);
    spec
}

fn quick_plan() -> Plan {
    let mut plan = Plan::default();
    plan.traffic.peak_rate_rps = 20.0;
    plan.run.num_requests = 400;
    plan.run.warmup_requests = 40;
    plan.run.replications = 3;
    plan
}

#[test]
fn sizing_finds_the_cheapest_passing_xpyd_and_the_aggregated_fleet() {
    let plan = quick_plan();
    let r = run_disagg_threads(&plan, 2, &mut |_| true).expect("sizing");
    let best = r.best.as_ref().expect("an xPyD passes");
    let (x, y) = (
        best.prefill_instances_for_peak,
        best.decode_instances_for_peak,
    );
    assert!(best.attainment >= r.target);
    assert!((r.sizing_rate_rps - 20.0 / 0.7).abs() < 1e-12);
    // Minimal: one decode instance fewer fails at this x (or y is 1).
    assert!(
        y == 1
            || r.points
                .iter()
                .any(|p| p.prefill_instances == x && p.decode_instances == y - 1 && !p.passes),
        "{:?}",
        r.points
    );
    // Cheapest of every passing point evaluated (every GPU costs the same here).
    for p in r.points.iter().filter(|p| p.passes) {
        assert!(x + y <= p.prefill_instances + p.decode_instances, "{p:?}");
    }
    // Spares and cost: N+1 per pool, both pools on the plan's $2.50 H100s.
    assert_eq!(best.prefill_instances, x + 1);
    assert_eq!(best.decode_instances, y + 1);
    assert_eq!(best.gpus_total, x + y + 2);
    assert!((best.cost_per_hour_usd - 2.5 * (x + y + 2) as f64).abs() < 1e-9);
    assert!((best.cost_per_month_usd - best.cost_per_hour_usd * 730.0).abs() < 1e-6);
    let per_request = 2.5 * (x + y) as f64 / (20.0 * 3600.0);
    assert!((best.cost_per_compliant_request_usd - per_request).abs() < 1e-15);
    // The aggregated side is the plan report's capacity.
    let search = crate::search::search_goodput_threads(&plan, 1, &mut |_| true).expect("search");
    let report = crate::report::PlanReport::build(&plan, Some(&search), None);
    assert_eq!(r.aggregated.capacity, report.capacity);
    assert!(r.verdict.contains(&best.label()), "{}", r.verdict);
    // The thread count does not change the answer.
    let one = run_disagg_threads(&plan, 1, &mut |_| true).expect("sizing");
    assert_eq!(one, r);
}

#[test]
fn jobs_run_from_the_plain_plan_one_at_a_time_give_the_threads_answer() {
    // A worker gets only the plan and the sizing rate; it answers in any order.
    let mut plan = quick_plan();
    plan.slo.tpot_s = Some(0.030);
    let mut m = DisaggSizing::new(&plan).expect("a sizing");
    while !m.is_done() {
        let mut batch = m.next_batch();
        assert!(!batch.is_empty(), "the machine stalled");
        batch.reverse();
        for job in &batch {
            let r = run_disagg_jobs(m.plan(), m.sizing_rate_rps(), std::slice::from_ref(job))
                .expect("a job runs");
            m.feed(&r);
        }
    }
    let threads = run_disagg_threads(&plan, 2, &mut |_| true).expect("sizing");
    assert_eq!(m.result().expect("a result"), threads);
    let load = threads
        .aggregated
        .planned_load
        .expect("the aggregated latencies");
    assert!(load.detail.ttft_p99_s >= load.detail.ttft_p50_s);
}

#[test]
fn the_disagg_section_is_not_part_of_the_search_key() {
    // The page keeps its goodput search through an edit of the pools; that is sound only
    // if the search's simulations do not read them.
    let plain = quick_plan();
    let mut with = plain.clone();
    let mut spec = DisaggSpec::for_plan(&with);
    spec.decode.max_num_seqs = 7;
    spec.prefill.instances = Some(3);
    with.disagg = Some(spec);
    with.name = "named".into();
    assert_eq!(with.search_key(), plain.search_key());
    let rate = 5.0;
    assert_eq!(
        crate::sim::SimConfig::from_plan(&with, rate).expect("config"),
        crate::sim::SimConfig::from_plan(&plain, rate).expect("config")
    );
    // What the search does read changes the key.
    let mut knobs = plain.clone();
    knobs.engine.max_num_seqs += 1;
    assert_ne!(knobs.search_key(), plain.search_key());
}

#[test]
fn fixed_instance_counts_are_evaluated_as_given() {
    let mut plan = quick_plan();
    plan.disagg = Some(pinned(&plan, 3, 5));
    let r = run_disagg_threads(&plan, 1, &mut |_| true).expect("sizing");
    assert_eq!(r.points.len(), 1);
    assert_eq!(r.points[0].prefill_instances, 3);
    assert_eq!(r.points[0].decode_instances, 5);
}

#[test]
fn no_xpyd_says_how_close_it_came_and_what_to_change() {
    let mut plan = quick_plan();
    // An empty decode step alone takes longer than this TPOT objective.
    plan.slo.tpot_s = Some(0.002);
    plan.disagg = Some(pinned(&plan, 2, 3));
    let r = run_disagg_threads(&plan, 1, &mut |_| true).expect("sizing");
    assert!(r.best.is_none());
    let why = r.reason.as_deref().expect("a reason");
    assert!(
        why.starts_with("no xPyD up to 2P3D meets the SLO at 28.57 req/s; the closest, 2P3D, meets it for 0% of requests against the 90% target: relax")
            && why.ends_with("or allow more instances"),
        "{why}"
    );
    assert!(r.verdict.contains(why), "{}", r.verdict);
    // The note is the reason as a sentence, not "No xPyD: no xPyD …".
    assert_eq!(r.notes(), vec![format!("N{}.", &why[1..])]);
    // The table names the GPUs as people know them, not by their ids.
    let gpus = r
        .comparison_rows()
        .into_iter()
        .find(|row| row.label == "GPUs per instance")
        .expect("row");
    assert_eq!(gpus.aggregated, "NVIDIA H100 SXM 80GB × TP1");
    // Searching freely, the search stops at its point limit and says so, with the same
    // account of how close it came.
    let mut plan = quick_plan();
    plan.slo.tpot_s = Some(0.002);
    let r = run_disagg_threads(&plan, 2, &mut |_| true).expect("sizing");
    assert!(r.best.is_none());
    let why = r.reason.as_deref().expect("a reason");
    assert!(
        why.starts_with(&format!(
            "no xPyD of the {MAX_DISAGG_POINTS} tried (the search's limit) meets the SLO at \
             28.57 req/s; the closest, "
        )) && why.ends_with("or allow more instances"),
        "{why}"
    );
}

#[test]
fn a_kv_link_too_slow_for_the_ttft_objective_is_named_as_the_bottleneck() {
    let mut plan = quick_plan();
    let mut spec = pinned(&plan, 2, 2);
    // 1 Gbit/s: the mean prompt's cache (about 1,100 tokens of 128 KiB) takes over a
    // second, beyond any TTFT objective of the default plan.
    spec.kv_link.bandwidth_bytes_per_s = 1e9 / 8.0;
    spec.kv_link.source = KvLinkSource::Given;
    plan.disagg = Some(spec);
    let r = run_disagg_threads(&plan, 2, &mut |_| true).expect("sizing");
    assert!(r.best.is_none());
    let why = r.reason.as_deref().expect("a reason");
    assert!(
        why.contains("moving the KV cache of a mean prompt (")
            && why.contains("tokens) over the link (1 Gbit/s as given) alone takes ")
            && why.ends_with("give the pools a faster KV link, or relax the TTFT objective")
            && !why.contains("allow more instances"),
        "{why}"
    );
    // A fast link is not blamed when the TPOT objective is what cannot be met.
    let mut plan = quick_plan();
    plan.slo.tpot_s = Some(0.002);
    plan.disagg = Some(pinned(&plan, 2, 2));
    let r = run_disagg_threads(&plan, 2, &mut |_| true).expect("sizing");
    assert!(!r.reason.expect("a reason").contains("KV link"));
}

#[test]
fn the_sizing_refuses_too_much_work() {
    let mut plan = quick_plan();
    // 50 × 100,000 requests per point: within the goodput search's bound (24 rates),
    // beyond the sizing's (48 points).
    plan.run.replications = 50;
    plan.run.num_requests = 100_000;
    assert!(crate::search::GoodputSearch::new(&plan).is_ok());
    let e = DisaggSizing::new(&plan).err().expect("too much work");
    let e = e.to_string();
    assert!(
        e.starts_with("the disaggregated sizing could simulate")
            && e.contains("lower \u{201c}Requests per run\u{201d}")
            && !e.contains("to try"),
        "{e}"
    );
}

#[test]
fn the_sizing_can_be_cancelled() {
    let plan = quick_plan();
    let e = run_disagg_threads(&plan, 1, &mut |_| false).expect_err("cancelled");
    assert!(e.to_string().contains("cancel"), "{e}");
}

#[test]
fn verdict_says_which_is_cheaper_in_plain_words() {
    let plan = quick_plan();
    let r = run_disagg_threads(&plan, 2, &mut |_| true).expect("sizing");
    let (b, a) = (
        r.best.as_ref().expect("best"),
        r.aggregated.capacity.as_ref().expect("agg"),
    );
    let expect = if a.cost_per_month_usd < b.cost_per_month_usd {
        "Aggregated is cheaper"
    } else if a.cost_per_month_usd > b.cost_per_month_usd {
        "Disaggregated is cheaper"
    } else {
        "Both cost the same"
    };
    assert!(r.verdict.starts_with(expect), "{}", r.verdict);
    assert!(r
        .verdict
        .contains(&crate::format::usd(a.cost_per_month_usd)));
}

#[test]
fn the_plan_field_round_trips_and_old_plans_are_unchanged() {
    // Absent: not written, so older plans and links are byte for byte as before.
    let plain = Plan::default();
    let json = serde_json::to_string(&plain).expect("json");
    assert!(!json.contains("disagg"));
    let mut plan = Plan::default();
    let mut spec = DisaggSpec::for_plan(&plan);
    spec.prefill.gpu = "h200".into();
    spec.prefill.instances = Some(2);
    spec.decode.tp_degree = 2;
    spec.kv_link.bandwidth_bytes_per_s = 25e9;
    spec.router = Router::RoundRobin;
    plan.disagg = Some(spec);
    plan.validate().expect("valid");
    let json = serde_json::to_string(&plan).expect("json");
    let back: Plan = serde_json::from_str(&json).expect("decode");
    assert_eq!(back, plan);
    let strict = Plan::from_json_strict(&serde_json::to_string_pretty(&plan).expect("json"))
        .expect("strict read");
    assert_eq!(strict, plan);
    // Through a share link.
    let link = crate::share::encode(&plan);
    let shared = crate::share::decode(&link).expect("link decodes");
    assert_eq!(shared.plan, plan);
    // A GPU comparison does not depend on the disaggregated section: it stays fresh.
    assert_eq!(
        crate::plan::comparison::fingerprint(&plan),
        crate::plan::comparison::fingerprint(&plain)
    );
}

#[test]
fn bad_disagg_fields_are_named_in_the_users_units() {
    type Case = (&'static str, fn(&mut DisaggSpec), &'static str);
    let cases: Vec<Case> = vec![
        (
            "disagg.prefill.gpu",
            |s| s.prefill.gpu = "h1000".into(),
            "unknown GPU",
        ),
        (
            "disagg.decode.tp_degree",
            |s| s.decode.tp_degree = 3,
            "1, 2, 4 or 8",
        ),
        (
            "disagg.prefill.max_num_batched_tokens",
            |s| s.prefill.max_num_batched_tokens = 0,
            "whole number",
        ),
        (
            "disagg.decode.max_num_seqs",
            |s| s.decode.max_num_seqs = 0,
            "whole number",
        ),
        (
            "disagg.decode.instances",
            |s| s.decode.instances = Some(33),
            "1..=32",
        ),
        (
            "disagg.kv_link.bandwidth_bytes_per_s",
            |s| {
                s.kv_link.source = KvLinkSource::Given;
                s.kv_link.bandwidth_bytes_per_s = 0.0
            },
            "bytes/s",
        ),
        (
            "disagg.kv_link.latency_s",
            |s| s.kv_link.latency_s = -1.0,
            " s,",
        ),
        (
            "disagg.decode.gpu",
            |s| s.decode.gpu = "l4".into(),
            "weights need",
        ),
    ];
    for (field, break_it, words) in cases {
        let mut plan = Plan::default();
        crate::presets::model("llama-3.1-70b")
            .expect("70b")
            .apply(&mut plan);
        plan.hardware.tp_degree = 4;
        let mut spec = DisaggSpec::for_plan(&plan);
        plan.disagg = Some(spec.clone());
        plan.validate().expect("the base is valid");
        break_it(&mut spec);
        plan.disagg = Some(spec);
        let e = plan.validate().expect_err(field);
        assert_eq!(e.field, field, "{e}");
        assert!(e.to_string().contains(words), "{field}: {e}");
    }
}

#[test]
fn the_decode_count_found_is_the_smallest_that_passes() {
    // Four sequences per decode instance: many decode instances, found by doubling from
    // the guess and then bisecting. Checked by simulating y and y − 1 directly.
    let mut plan = quick_plan();
    plan.traffic.peak_rate_rps = 10.0;
    let mut spec = DisaggSpec::for_plan(&plan);
    spec.prefill.instances = Some(1);
    spec.decode.max_num_seqs = 4;
    plan.disagg = Some(spec);
    let r = run_disagg_threads(&plan, 2, &mut |_| true).expect("sizing");
    let best = r.best.as_ref().expect("an xPyD passes");
    let y = best.decode_instances_for_peak;
    assert!(y > 2, "{y}");
    let cfg = cfg_of(&plan, r.sizing_rate_rps);
    let mean_at = |y: u32| {
        (0..plan.run.replications)
            .map(|i| sim(&cfg, 1, y, crate::sim::replication_seed(plan.run.seed, i)).attainment)
            .sum::<f64>()
            / plan.run.replications as f64
    };
    assert!(mean_at(y) >= r.target);
    assert!(
        mean_at(y - 1) < r.target,
        "{y} is not the smallest: {:?}",
        r.points
    );
}

/// The page sizes the pools from the goodput search it already has: the same answer as
/// a sizing that searched, without one search job.
#[test]
fn sizing_from_a_supplied_search_equals_sizing_that_searched() {
    let plan = quick_plan();
    let searched = run_disagg_threads(&plan, 2, &mut |_| true).expect("sizing");
    let search = crate::search::search_goodput_threads(&plan, 1, &mut |_| true).expect("search");
    // The search of the same key: a labelled plan with other pools still matches.
    let mut labelled = plan.clone();
    labelled.name = "another name".into();
    labelled.disagg = Some(DisaggSpec::for_plan(&plan));
    let mut m = DisaggSizing::with_search(&plan, Some((&labelled, &search))).expect("a sizing");
    let first = m.next_batch();
    let aggregated: Vec<u32> = first
        .iter()
        .filter_map(|j| match j {
            DisaggJob::Aggregated(a) => Some(a.id),
            DisaggJob::Point(_) => None,
        })
        .collect();
    assert_eq!(
        aggregated,
        [crate::report::PLANNED_LOAD_JOB_ID],
        "only the planned-load simulation, no search job"
    );
    let results = run_disagg_jobs(m.plan(), m.sizing_rate_rps(), &first).expect("jobs run");
    m.feed(&results);
    let supplied = drive_threads(m, 2, &mut |_| true).expect("sizing");
    assert_eq!(supplied, searched);
    // A search of another key is not used: the sizing searches.
    let mut other = plan.clone();
    other.engine.max_num_seqs /= 2;
    let mut m = DisaggSizing::with_search(&plan, Some((&other, &search))).expect("a sizing");
    assert!(m.next_batch().iter().any(|j| matches!(
        j,
        DisaggJob::Aggregated(a) if a.id != crate::report::PLANNED_LOAD_JOB_ID
    )));
}

/// The aggregated side's planned-load simulation is a job the caller runs (on the page,
/// a worker), never a simulation inside `feed`; its latencies are the plan report's.
#[test]
fn the_planned_load_is_a_job_with_the_plan_reports_latencies() {
    let plan = quick_plan();
    let search = crate::search::search_goodput_threads(&plan, 1, &mut |_| true).expect("search");
    let mut m = DisaggSizing::with_search(&plan, Some((&plan, &search))).expect("a sizing");
    let batch = m.next_batch();
    let job = batch
        .iter()
        .find_map(|j| match j {
            DisaggJob::Aggregated(a) => Some(*a),
            DisaggJob::Point(_) => None,
        })
        .expect("the planned-load job");
    assert!(job.detail);
    // Everything but the planned load comes back: the side stays open.
    let points: Vec<DisaggJob> = batch
        .iter()
        .copied()
        .filter(|j| matches!(j, DisaggJob::Point(_)))
        .collect();
    let r = run_disagg_jobs(m.plan(), m.sizing_rate_rps(), &points).expect("jobs run");
    m.feed(&r);
    assert!(!m.is_done(), "the aggregated side waits for its job");
    let mut next = m.next_batch();
    assert!(
        next.iter().all(|j| matches!(j, DisaggJob::Point(_))),
        "handed out once"
    );
    next.push(DisaggJob::Aggregated(job));
    let r = run_disagg_jobs(m.plan(), m.sizing_rate_rps(), &next).expect("the jobs run");
    m.feed(&r);
    let result = drive_threads(m, 1, &mut |_| true).expect("sizing");
    let report = crate::report::PlanReport::complete(&plan, Some(&search), None).expect("report");
    assert_eq!(result.aggregated.planned_load, report.planned_load);
    assert!(result.aggregated.planned_load.is_some());
}

/// Every field of the disaggregated report, bit for bit (its JSON, whose numbers
/// round-trip), on configurations that cover every event and policy: both routers,
/// each decode-side KV rule (refusals and waits for room included), queueing pools,
/// prefix caching, a slow link, and fixed lengths at a constant rate, where the KV
/// transfers of one prefill step land together. Recompute the digest only for a
/// deliberate change of the model, and say so in the commit.
#[test]
fn disaggregated_reports_are_unchanged_bit_for_bit() {
    let mut cases: Vec<(&str, DisaggConfig, u32, u32)> = Vec::new();
    // The link as given (its default figures), as every case was written before a
    // link could come from the GPUs; the routes have tests of their own.
    let mut plan = Plan::default();
    let mut given = DisaggSpec::for_plan(&plan);
    given.kv_link.source = KvLinkSource::Given;
    plan.disagg = Some(given);
    cases.push(("default 2P2D", cfg_of(&plan, 20.0), 2, 2));
    cases.push(("overloaded 1P1D", cfg_of(&plan, 20.0), 1, 1));
    let mut rr = plan.clone();
    let mut spec = DisaggSpec::for_plan(&rr);
    spec.router = Router::RoundRobin;
    spec.kv_link.source = KvLinkSource::Given;
    spec.kv_link.latency_s = 0.02;
    spec.kv_link.bandwidth_bytes_per_s = 2e9;
    rr.disagg = Some(spec);
    cases.push(("round robin, slow link 3P2D", cfg_of(&rr, 24.0), 3, 2));
    // Without a limit the capacity is ignored and the slots bind; reserving the output cap, a small cache
    // refuses the longest prompts and holds the rest to a few sequences; reserving each
    // sequence's own output, a larger one queues.
    for (name, policy, rate, tokens, decoders) in [
        ("unlimited 2P1D", KvPolicy::None, 26.0, 9_000.0, 1),
        ("reserve cap", KvPolicy::Reserve, 4.0, 9_000.0, 2),
        ("reserve own", KvPolicy::Paged, 18.0, 40_000.0, 2),
    ] {
        let mut p = plan.clone();
        p.engine.kv_policy = policy;
        let mut cfg = cfg_of(&p, rate);
        cfg.decode.kv_capacity_tokens = tokens;
        cases.push((name, cfg, 2, decoders));
    }
    let mut cached = plan.clone();
    cached.traffic.prefix_tokens = 500;
    cached.traffic.prefix_hit_rate = 0.6;
    cases.push(("prefix cache 1P2D", cfg_of(&cached, 16.0), 1, 2));
    let mut ties = plan.clone();
    fixed_lengths(&mut ties, 512, 64);
    ties.traffic.arrival = crate::plan::Arrival::Constant;
    ties.disagg = Some(DisaggSpec {
        kv_link: KvLink {
            source: KvLinkSource::Given,
            bandwidth_bytes_per_s: 1e13,
            latency_s: 0.0,
        },
        ..DisaggSpec::for_plan(&ties)
    });
    cases.push((
        "fixed lengths, constant rate, 2P3D",
        cfg_of(&ties, 40.0),
        2,
        3,
    ));

    let mut all = FNV1A_START;
    let mut each = Vec::new();
    for (name, cfg, x, y) in &cases {
        let mut h = FNV1A_START;
        for seed in [1u64, 2] {
            let r = sim(cfg, *x, *y, seed);
            let json = serde_json::to_string(&r).expect("the report serialises");
            h = fnv1a(h, json.as_bytes());
        }
        each.push(format!("{name}: {h:#018x}"));
        all = fnv1a(all, &h.to_le_bytes());
    }
    assert_eq!(all, GOLDEN_DISAGG_DIGEST, "per case:\n{}", each.join("\n"));
}

const GOLDEN_DISAGG_DIGEST: u64 = 0x9A26_719A_E37B_4A2F;

/// A plan of `model` on `gpu` with a disaggregated section from the plan.
fn pools_of(model: &str, gpu: &str) -> (Plan, DisaggSpec) {
    let mut plan = Plan::default();
    crate::presets::model(model)
        .expect("a model")
        .apply(&mut plan);
    crate::presets::gpu(gpu).expect("a GPU").apply(&mut plan);
    let spec = DisaggSpec::for_plan(&plan);
    (plan, spec)
}

#[test]
fn kv_routes_follow_the_pools_gpus_and_layouts() {
    // Llama 3.1 70B has 8 KV heads: TP 8 holds 8 shards, TP 4 holds 4; a transfer moves
    // min(8, 4) = 4 shards at once, each over its GPU's own link.
    let (mut plan, mut spec) = pools_of("llama-3.1-70b", "h100-sxm");
    plan.hardware.tp_degree = 4;
    spec.prefill.tp_degree = 8;
    spec.decode.tp_degree = 4;
    assert_eq!(
        spec.kv_link.source,
        KvLinkSource::Network,
        "a new spec's default"
    );
    let routes = spec.routes(&plan);
    // 1P1D is 12 GPUs, more than a DGX node's 8: the scale-out network, 4 × 50 GB/s.
    let far = routes.at(1, 1);
    assert_eq!((far.over, far.lanes), (KvLinkKind::ScaleOut, 4));
    assert_eq!(far.bandwidth_bytes_per_s(), 200e9);
    assert_eq!(far.words(), "the scale-out network, 4 lanes of 400 Gbit/s");
    // A 4,000-token prompt's cache: 4,000 × 327,680 bytes = 1.31 GB in 1 ms + 6.55 ms.
    let bytes = plan.model.kv_bytes(4000.0);
    assert_eq!(bytes, 4000.0 * 327_680.0);
    assert!((far.transfer_time_s(bytes) - (1e-3 + 6.5536e-3)).abs() < 1e-12);
    // Two TP-2 pools, 1P1D and 2P2D in one node: NVLink, 2 × 450 GB/s; 3P2D is 10 GPUs.
    spec.prefill.tp_degree = 2;
    spec.decode.tp_degree = 2;
    let routes = spec.routes(&plan);
    for (x, y, over) in [
        (1, 1, KvLinkKind::NvLink),
        (2, 2, KvLinkKind::NvLink),
        (3, 2, KvLinkKind::ScaleOut),
    ] {
        let r = routes.at(x, y);
        assert_eq!((r.over, r.lanes), (over, 2), "{x}P{y}D");
    }
    assert_eq!(routes.at(1, 1).bandwidth_bytes_per_s(), 900e9);
    // On a GB200 NVL72 rack the NVLink domain is 72 GPUs: 8P8D of TP 4 is 64.
    let (plan72, mut spec72) = pools_of("llama-3.1-70b", "gb200");
    spec72.prefill.tp_degree = 4;
    spec72.decode.tp_degree = 4;
    let r72 = spec72.routes(&plan72);
    assert_eq!(r72.at(8, 8).over, KvLinkKind::NvLink);
    assert_eq!(r72.at(9, 9).over, KvLinkKind::NvLink, "72 GPUs");
    assert_eq!(r72.at(10, 9).over, KvLinkKind::ScaleOut);
    // Different GPUs in the two pools share no NVLink: the slower NIC sets each lane.
    spec.decode.gpu = "a100-80gb".into();
    let mixed = spec.routes(&plan).at(1, 1);
    assert_eq!((mixed.over, mixed.lanes), (KvLinkKind::ScaleOut, 2));
    assert_eq!(mixed.lane_bytes_per_s, 25e9);
    // A latent cache is whole on every GPU of a TP group, and an expert-parallel rank
    // holds its sequences alone: DeepSeek-V3 from TP 8 to EP 16 moves one shard.
    let (ds, mut dspec) = pools_of("deepseek-v3", "h100-sxm");
    dspec.prefill.tp_degree = 8;
    dspec.decode.tp_degree = 1;
    dspec.decode.ep_degree = 16;
    assert_eq!(kv_shards(&ds.model, dspec.prefill.layout()), 1);
    assert_eq!(kv_shards(&ds.model, dspec.decode.layout()), 1);
    let one = dspec.routes(&ds).at(1, 1);
    assert_eq!((one.over, one.lanes), (KvLinkKind::ScaleOut, 1));
    // Pipeline stages each hold their layers: TP 4 × PP 2 of Llama holds 8 shards.
    let pp = crate::plan::comparison::Layout {
        tp: 4,
        pp: 2,
        ep: 1,
    };
    assert_eq!(kv_shards(&plan.model, pp), 8);
    // A GPU that names no scale-out network (a plan from before GPUs had one) starts
    // from the link as given; asked to take the link from it, the plan says why not.
    let mut old = Plan::default();
    old.hardware.scaleout_bytes_per_s = 0.0;
    let mut s = DisaggSpec::for_plan(&old);
    assert_eq!(s.kv_link.source, KvLinkSource::Given);
    old.disagg = Some(s.clone());
    old.validate().expect("the link as given needs no network");
    s.kv_link.source = KvLinkSource::Network;
    old.disagg = Some(s);
    let e = old
        .validate()
        .expect_err("no network to take the link from");
    assert_eq!(e.field, "disagg.kv_link.source", "{e}");
    assert!(e.message.contains("names no scale-out network"), "{e}");
    // The link as given is one transfer at its bandwidth, wherever the pools are.
    spec.kv_link.source = KvLinkSource::Given;
    let given = spec.routes(&plan).at(1, 1);
    assert_eq!((given.over, given.lanes), (KvLinkKind::Given, 1));
    assert_eq!(
        given.bandwidth_bytes_per_s(),
        spec.kv_link.bandwidth_bytes_per_s
    );
}

#[test]
fn a_transfer_takes_the_route_of_the_deployment_simulated() {
    // One request at a time: its transfer is the route's time for its prompt, NVLink at
    // 1P1D of TP 2 and the scale-out network at 3P3D (12 GPUs).
    let (mut plan, mut spec) = pools_of("llama-3.1-70b", "h100-sxm");
    fixed_lengths(&mut plan, 2000, 4);
    plan.hardware.tp_degree = 2;
    plan.run.num_requests = 3;
    plan.run.warmup_requests = 0;
    spec.prefill.tp_degree = 2;
    spec.decode.tp_degree = 2;
    plan.disagg = Some(spec.clone());
    let cfg = cfg_of(&plan, 1e-3);
    let bytes = plan.model.kv_bytes(2000.0);
    for (x, y, over) in [(1, 1, KvLinkKind::NvLink), (3, 3, KvLinkKind::ScaleOut)] {
        let route = spec.routes(&plan).at(x, y);
        assert_eq!(route.over, over);
        let r = sim(&cfg, x, y, 1);
        let want = route.transfer_time_s(bytes);
        assert!(
            (r.transfer_s.mean - want).abs() < 1e-9 * want,
            "{x}P{y}D: {} against {want}",
            r.transfer_s.mean
        );
    }
}

#[test]
fn pools_with_their_own_layouts_price_and_hold_what_those_replicas_would() {
    // DeepSeek-V3 in fp8 on H200s: prefill on TP 8 (one node), decode on EP 16 (two
    // nodes), each instance what the plan of that layout would be.
    let (mut plan, mut spec) = pools_of("deepseek-v3", "h200");
    plan.model.weight_dtype = crate::model_kinds::Dtype::Fp8;
    plan.hardware.tp_degree = 8;
    spec.prefill.tp_degree = 8;
    spec.prefill.pp_degree = 1;
    spec.decode.tp_degree = 1;
    spec.decode.pp_degree = 1;
    spec.decode.ep_degree = 16;
    plan.disagg = Some(spec.clone());
    plan.validate().expect("TP 8 and EP 16 pools are valid");
    let cfg = cfg_of(&plan, 1.0);
    let mut ep16 = plan.clone();
    ep16.disagg = None;
    ep16.hardware.tp_degree = 1;
    ep16.hardware.pp_degree = 1;
    ep16.hardware.ep_degree = 16;
    assert_eq!(
        cfg.decode.step,
        crate::roofline::StepModel::from_plan(&ep16)
    );
    assert_eq!(
        cfg.decode.kv_capacity_tokens,
        crate::analytic::kv_capacity_tokens(&ep16)
    );
    assert_eq!(cfg.decode.gpus(), 16);
    assert_eq!(cfg.prefill.gpus(), 8);
    assert_eq!(
        cfg.decode.instance_hour_usd(),
        16.0 * plan.hardware.gpu_hour_usd
    );
    // The decode step of 64 sequences is the busiest of 16 ranks, as the plan's.
    assert_eq!(
        cfg.decode.step.step_time_s(64.0, 64.0 * 3000.0),
        crate::roofline::StepModel::from_plan(&ep16).step_time_s(64.0, 64.0 * 3000.0)
    );
    // A pool layout the model cannot take is refused in the pool's own words.
    let mut dense = Plan::default();
    let mut s = DisaggSpec::for_plan(&dense);
    s.decode.ep_degree = 8;
    dense.disagg = Some(s);
    let e = dense.validate().expect_err("a dense model has no experts");
    assert_eq!(e.field, "disagg.decode.ep_degree", "{e}");
    let mut wide = plan.clone();
    let mut s = spec.clone();
    s.prefill.ep_degree = 16;
    wide.disagg = Some(s);
    let e = wide.validate().expect_err("EP with TP 8");
    assert_eq!(e.field, "disagg.prefill.ep_degree", "{e}");
    assert!(e.message.contains("(now 8 and 1)"), "{e}");
    // A prefill pool on TP 4 alone cannot hold the weights; the message counts GPUs.
    let mut small = plan.clone();
    let mut s = spec.clone();
    s.prefill.tp_degree = 4;
    small.disagg = Some(s);
    let e = small.validate().expect_err("671B on 4 H200s");
    assert_eq!(e.field, "disagg.prefill.gpu", "{e}");
    assert!(e.message.contains("× TP4 offers"), "{e}");
}

#[test]
fn classes_on_disaggregated_pools_go_by_priority_and_their_own_objectives() {
    // Chat (short prompts, TTFT 300 ms) and batch (6,000-token prompts, a 60 s
    // deadline) on one prefill and two decode instances, loaded so that prompts queue.
    let mut plan = Plan::default();
    plan.run.num_requests = 1500;
    plan.run.warmup_requests = 100;
    // Short prefill steps, so that a prompt waits for the queue more than for a step.
    let mut spec = DisaggSpec::for_plan(&plan);
    spec.prefill.max_num_batched_tokens = 2048;
    plan.disagg = Some(spec);
    let classes = |chat: u32, batch: u32| {
        vec![
            crate::plan::classes::parse_class(
                &plan,
                &format!("chat:share=0.6,ttft=0.3,priority={chat}"),
            )
            .expect("chat"),
            crate::plan::classes::parse_class(
                &plan,
                &format!("batch:share=0.4,e2e=60,priority={batch},input-len-fixed=6000"),
            )
            .expect("batch"),
        ]
    };
    let mut first = plan.clone();
    first.classes = classes(0, 1);
    first.validate().expect("chat first");
    let mut last = plan.clone();
    last.classes = classes(1, 0);
    let rate = 9.0;
    let (a, b) = (
        sim(&cfg_of(&first, rate), 1, 2, 3),
        sim(&cfg_of(&last, rate), 1, 2, 3),
    );
    assert_eq!(a.class_attainments.len(), 2);
    // Served first, chat meets its TTFT; served after batch's long prompts, it does not.
    assert!(
        a.class_attainments[0] > b.class_attainments[0] + 0.2,
        "{:?} against {:?}",
        a.class_attainments,
        b.class_attainments
    );
    // Batch is judged by its deadline alone: it waits and still meets it.
    assert!(a.class_attainments[1] > 0.95, "{:?}", a.class_attainments);
    // The mix is its worst class, as the aggregated engine judges it.
    let worst = a.class_attainments.iter().copied().fold(1.0, f64::min);
    assert_eq!(a.attainment, worst);
    // One class: the queues stay first come, first served, bit for bit as before.
    let one = sim(&cfg_of(&plan, rate), 1, 1, 3);
    assert!(one.class_attainments.is_empty());
}
