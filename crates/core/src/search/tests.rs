use super::*;

/// A small plan that simulates quickly.
fn quick_plan() -> Plan {
    let mut p = Plan::default();
    p.run.num_requests = 400;
    p.run.warmup_requests = 50;
    p.run.replications = 4;
    p
}

/// Drives a search with a synthetic attainment curve instead of the simulator.
fn drive(plan: &Plan, f: impl Fn(f64, u32) -> f64) -> GoodputResult {
    batches(plan, f).1
}

#[test]
fn synthetic_cliff_is_found_within_tolerance() {
    let plan = quick_plan();
    let r = drive(&plan, |rate, _| if rate <= 13.0 { 0.97 } else { 0.5 });
    assert_eq!(r.status, SearchStatus::Converged);
    assert!(
        r.goodput_rps <= 13.0 && r.goodput_rps > 13.0 * 0.97,
        "{}",
        r.goodput_rps
    );
    // Curve ascending; goodput is an evaluated rate; the next one fails.
    assert!(r.curve.windows(2).all(|w| w[0].rate_rps < w[1].rate_rps));
    let i = r
        .curve
        .iter()
        .position(|c| c.rate_rps == r.goodput_rps)
        .expect("on curve");
    assert!(r.curve[i].attainment >= 0.9 && r.curve[i + 1].attainment < 0.9);
    assert!(r.goodput_range_rps[0] <= r.goodput_rps && r.goodput_rps <= r.goodput_range_rps[1]);
    // Constant replications: the band has zero width, so the range hugs the cliff.
    assert!(r.goodput_range_rps[1] - r.goodput_range_rps[0] < 0.5);
    assert_eq!(r.jobs_run as usize, r.curve.len() * 4);
}

#[test]
fn low_and_high_cliffs_scan_down_and_up() {
    let plan = quick_plan();
    let guess = GoodputSearch::new(&plan).expect("s").analytic_guess_rps();
    let low = guess * 0.05;
    let r = drive(&plan, |rate, _| if rate <= low { 1.0 } else { 0.0 });
    assert_eq!(r.status, SearchStatus::Converged);
    assert!(r.goodput_rps <= low && r.goodput_rps > low * 0.97);
    let high = guess * 7.0;
    let r = drive(&plan, |rate, _| if rate <= high { 1.0 } else { 0.0 });
    assert_eq!(r.status, SearchStatus::Converged);
    assert!(r.goodput_rps <= high && r.goodput_rps > high * 0.97);
    let r = drive(&plan, |_, _| 0.2);
    assert_eq!(r.status, SearchStatus::ZeroGoodput);
    assert_eq!(r.goodput_rps, 0.0);
    assert!(r.reason.contains("even at"), "{}", r.reason);
    // A TPOT objective below what one request alone takes says so, with the numbers.
    let mut tight = plan.clone();
    tight.slo.tpot_s = Some(0.005);
    let r = drive(&tight, |_, _| 0.0);
    assert_eq!(r.status, SearchStatus::ZeroGoodput);
    assert!(
        r.reason.starts_with("one request alone takes 5.8 ms per output token here, above the 5 ms TPOT objective: each decode step reads 16.0 GB of weights over 1 GPU"),
        "{}",
        r.reason
    );
    tight.slo.tpot_s = Some(0.006);
    let r = drive(&tight, |_, _| 0.0);
    assert!(r.reason.contains("even at"), "{}", r.reason);
    // A TTFT objective typed as if in another unit: 0.5 ms.
    tight.slo.ttft_s = Some(0.0005);
    let r = drive(&tight, |_, _| 0.0);
    assert!(
        r.reason.starts_with("one request alone waits ") && r.reason.ends_with("check its unit"),
        "{}",
        r.reason
    );
    assert!(
        r.reason.contains("above the 0.5 ms TTFT objective"),
        "{}",
        r.reason
    );
    let r = drive(&plan, |_, _| 1.0);
    assert_eq!(r.status, SearchStatus::NotBracketed);
    assert!(r.goodput_rps >= guess * MAX_RATE_FACTOR * 0.999);
}

#[test]
fn noisy_replications_give_a_band() {
    let plan = quick_plan();
    let r = drive(&plan, |rate, rep| {
        let base = if rate <= 10.0 {
            0.95
        } else {
            0.95 - (rate - 10.0) * 0.05
        };
        (base + (rep as f64 - 1.5) * 0.02).clamp(0.0, 1.0)
    });
    for c in &r.curve {
        assert!(c.ci95[0] <= c.attainment && c.attainment <= c.ci95[1]);
        assert!(c.attainment_min <= c.attainment && c.attainment <= c.attainment_max);
    }
    // Mean crosses 0.9 at rate 11; the band makes the range straddle it.
    assert!(
        r.goodput_range_rps[0] < 11.0 && r.goodput_range_rps[1] > 11.0,
        "{:?}",
        r.goodput_range_rps
    );
    assert!((r.goodput_rps - 11.0).abs() < 0.3, "{}", r.goodput_rps);
}

#[test]
fn crossing_interpolates() {
    let pt = |rate_rps: f64, a: f64| CurvePoint {
        classes: Default::default(),
        rate_rps,
        attainment: a,
        ci95: [a, a],
        attainment_min: a,
        attainment_max: a,
        detail: None,
    };
    let curve = [pt(1.0, 1.0), pt(2.0, 0.95), pt(3.0, 0.85), pt(4.0, 0.5)];
    let x = crossing(&curve, 0.9, |c| c.attainment);
    assert!((x - 2.5).abs() < 1e-12);
    assert_eq!(crossing(&curve, 0.1, |c| c.attainment), 4.0);
    assert_eq!(crossing(&curve, 1.01, |c| c.attainment), 0.0);
    assert_eq!(crossing(&[], 0.9, |c| c.attainment), 0.0);
}

#[test]
fn bad_requests_are_typed_errors() {
    let mut p = quick_plan();
    p.slo.ttft_s = None;
    p.slo.tpot_s = None;
    p.slo.e2e_s = None;
    assert_eq!(
        GoodputSearch::new(&p).unwrap_err(),
        SearchError::NoObjective
    );
    // TPOT alone never judges the queue: refused, with or without classes, while an
    // end-to-end deadline alone bounds it.
    p.slo.tpot_s = Some(0.025);
    assert_eq!(
        GoodputSearch::new(&p).unwrap_err(),
        SearchError::WaitingUnbounded
    );
    assert!(SearchError::WaitingUnbounded
        .to_string()
        .contains("TTFT objective"));
    p.slo.e2e_s = Some(30.0);
    assert!(GoodputSearch::new(&p).is_ok());
    let mut p = quick_plan();
    p.classes = ["chat:share=0.7", "bulk:share=0.3,tpot=0.05"]
        .iter()
        .map(|t| crate::plan::classes::parse_class(&p, t).expect("a class"))
        .collect();
    assert_eq!(
        GoodputSearch::new(&p).unwrap_err(),
        SearchError::WaitingUnbounded
    );
    p.classes[1] =
        crate::plan::classes::parse_class(&p, "bulk:share=0.3,tpot=0.05,e2e=60").unwrap();
    assert!(GoodputSearch::new(&p).is_ok());
    let mut p = quick_plan();
    p.run.replications = 0;
    assert!(matches!(
        GoodputSearch::new(&p),
        Err(SearchError::TooManyReplications { .. })
    ));
    p.run.replications = MAX_SEARCH_REPLICATIONS + 1;
    assert!(matches!(
        GoodputSearch::new(&p),
        Err(SearchError::TooManyReplications { .. })
    ));
    // Every replication count the plan's field accepts is searchable.
    let mut p = quick_plan();
    p.run.replications = crate::plan::fields::field("run.replications")
        .range
        .expect("a range")
        .hi as u32;
    p.validate()
        .expect("the field's largest count is a valid plan");
    GoodputSearch::new(&p).expect("and a search takes it");
    let mut p = quick_plan();
    p.run.replications = 200;
    p.run.num_requests = 100_000;
    let e = GoodputSearch::new(&p).unwrap_err();
    assert!(matches!(e, SearchError::TooMuchWork { .. }));
    // The message names the work and the fields as the page labels them.
    assert_eq!(
        e.to_string(),
        "the goodput search could simulate 480,000,000 requests, more than the 200,000,000 allowed; lower \u{201c}Requests per run\u{201d} or \u{201c}Replications\u{201d}"
    );
    p.run.replications = 5;
    p.run.num_requests = 1_000_000;
    let e = KnobSweep::new(&p).unwrap_err().to_string();
    assert!(
        e.starts_with("the knob sweep could simulate")
            && e.ends_with("\u{201c}Token budgets to try\u{201d}"),
        "{e}"
    );
    let mut p = quick_plan();
    p.run.sweep_max_num_seqs = vec![];
    assert!(matches!(
        KnobSweep::new(&p),
        Err(SearchError::BadGrid { .. })
    ));
    p.run.sweep_max_num_seqs = (1..=13).collect();
    assert!(matches!(
        KnobSweep::new(&p),
        Err(SearchError::BadGrid { len: 13, .. })
    ));
    p.run.sweep_max_num_seqs = vec![0, 4];
    assert!(KnobSweep::new(&p).is_err());
    let mut p = quick_plan();
    p.hardware.mem_bandwidth_bytes_per_s = f64::NAN;
    assert!(matches!(GoodputSearch::new(&p), Err(SearchError::Sim(_))));
}

#[test]
fn unknown_and_repeated_ids_are_ignored() {
    let plan = quick_plan();
    let mut s = GoodputSearch::new(&plan).expect("s");
    let jobs = s.next_batch();
    assert!(s.next_batch().is_empty(), "no new batch while one is out");
    let mut rs: Vec<JobResult> = jobs
        .iter()
        .map(|j| JobResult {
            classes: Default::default(),
            id: j.id,
            attainment: 1.0,
            detail: None,
            peak_running: PEAK_UNKNOWN,
        })
        .collect();
    let stray = JobResult {
        classes: Default::default(),
        id: 9999,
        attainment: 0.0,
        detail: None,
        peak_running: PEAK_UNKNOWN,
    };
    s.feed(&[stray]);
    let first = rs.remove(0);
    s.feed(&[first]);
    s.feed(&[JobResult {
        attainment: 0.0,
        ..first
    }]);
    assert!(s.is_waiting());
    s.feed(&rs);
    assert!(!s.is_waiting());
    assert_eq!(s.progress().done as usize, jobs.len());
    assert!(s.points.iter().all(|p| p.mean() == 1.0));
}

/// Feeds results in three ways and checks the answers are identical, bit for bit.
fn run_three_ways(plan: &Plan) -> [GoodputResult; 3] {
    let mut out = Vec::new();
    for mode in 0..3 {
        let mut s = GoodputSearch::new(plan).expect("search");
        let mut rng_state = 0x9e37_79b9_7f4a_7c15u64;
        while !s.is_done() {
            let mut jobs = s.next_batch();
            match mode {
                0 => {
                    let rs = run_jobs(plan, &jobs, 1).expect("sim");
                    s.feed(&rs);
                }
                1 => {
                    for j in &jobs {
                        let r = run_job(plan, j).expect("sim");
                        s.feed(&[r]);
                    }
                }
                _ => {
                    // Fisher-Yates with a fixed LCG, then two threads.
                    for i in (1..jobs.len()).rev() {
                        rng_state = rng_state.wrapping_mul(6364136223846793005).wrapping_add(1);
                        let k = (rng_state >> 33) as usize % (i + 1);
                        jobs.swap(i, k);
                    }
                    let mut rs = run_jobs(plan, &jobs, 2).expect("sim");
                    rs.reverse();
                    let (a, b) = rs.split_at(rs.len() / 2);
                    s.feed(b);
                    s.feed(a);
                }
            }
        }
        out.push(s.result().expect("done"));
    }
    [out[0].clone(), out[1].clone(), out[2].clone()]
}

#[test]
fn results_do_not_depend_on_batching_or_order() {
    let plan = quick_plan();
    let [a, b, c] = run_three_ways(&plan);
    let ja = serde_json::to_string(&a).expect("json");
    assert_eq!(ja, serde_json::to_string(&b).expect("json"));
    assert_eq!(ja, serde_json::to_string(&c).expect("json"));
    assert!(a.goodput_rps > 0.0);
    assert!(
        a.curve.iter().all(|p| p.detail.is_some()),
        "every rate has latency detail"
    );
    // The in-process driver agrees with the state machine.
    let d = search_goodput_threads(&plan, 2, &mut |_| true).expect("search");
    assert_eq!(ja, serde_json::to_string(&d).expect("json"));
}

#[test]
fn cancellation_stops_the_driver() {
    let plan = quick_plan();
    let mut calls = 0;
    let r = search_goodput_threads(&plan, 1, &mut |p| {
        calls += 1;
        assert!(p.done <= p.total);
        false
    });
    assert_eq!(r.unwrap_err(), SearchError::Cancelled);
    assert_eq!(calls, 1);
    let mut p = quick_plan();
    p.run.sweep_max_num_seqs = vec![32, 128];
    p.run.sweep_batched_tokens = vec![512, 0];
    let r = sweep_knobs_threads(&p, 1, &mut |_| false);
    assert_eq!(r.unwrap_err(), SearchError::Cancelled);
}

#[test]
fn sweep_is_order_independent_and_picks_the_best() {
    let mut p = quick_plan();
    p.run.replications = 3;
    p.run.sweep_max_num_seqs = vec![128, 16];
    p.run.sweep_batched_tokens = vec![0, 512];
    let a = sweep_knobs_threads(&p, 1, &mut |_| true).expect("sweep");
    assert_eq!(a.max_num_seqs, vec![16, 128]);
    assert_eq!(a.batched_tokens, vec![512, 0]);
    assert_eq!(a.cells.len(), 4);
    assert_eq!(a.replications, 3);
    let best = a.best_cell();
    assert!(a.cells.iter().all(|c| c.goodput_rps <= best.goodput_rps));
    // 128 sequences with a 512 budget beat 16 sequences (Little's law) and no chunking.
    assert_eq!((best.max_num_seqs, best.batched_tokens), (128, 512));
    assert!(a
        .flags
        .vllm
        .contains("--max-num-seqs 128 --max-num-batched-tokens 512"));
    let off = &a.cells[1];
    assert!(!off.knobs.chunked_prefill && off.batched_tokens == 0);

    // Same answer when each round's results come back reversed, one cell at a time.
    let mut s = KnobSweep::new(&p).expect("sweep");
    while !s.is_done() {
        let jobs = s.next_batch();
        let mut rs = run_jobs(&p, &jobs, 2).expect("sim");
        rs.reverse();
        for r in rs {
            s.feed(&[r]);
        }
    }
    let b = s.result().expect("done");
    assert_eq!(
        serde_json::to_string(&a).expect("json"),
        serde_json::to_string(&b).expect("json")
    );
}

#[test]
fn extreme_plans_end_cleanly() {
    // A tiny model: the roofline guess is enormous, yet every rate stays simulable.
    let mut p = quick_plan();
    p.model.params = 1e6;
    p.model.active_params = 1e6;
    p.run.replications = 2;
    let r = search_goodput_threads(&p, 1, &mut |_| true).expect("search");
    assert!(r
        .curve
        .iter()
        .all(|c| c.rate_rps <= crate::sim::MAX_RATE_RPS));
    assert!(r.goodput_rps > 0.0);
    // A TTFT objective no request can meet: goodput 0 with a reason, not a hang.
    let mut p = quick_plan();
    p.slo.ttft_s = Some(1e-4);
    p.run.replications = 2;
    let r = search_goodput_threads(&p, 1, &mut |_| true).expect("search");
    assert_eq!(r.status, SearchStatus::ZeroGoodput);
    assert_eq!(r.goodput_rps, 0.0);
    assert_eq!(r.goodput_range_rps, [0.0, 0.0]);
}

#[test]
fn search_and_sweep_simulate_open_loop_traffic() {
    let mut poisson = quick_plan();
    poisson.run.replications = 2;
    poisson.run.sweep_max_num_seqs = vec![32, 128];
    poisson.run.sweep_batched_tokens = vec![512];
    let mut closed = poisson.clone();
    closed.traffic.arrival = crate::plan::Arrival::Closed {
        concurrency: 4,
        think_s: 1.0,
    };
    let mut capped = poisson.clone();
    capped.traffic.max_concurrency = Some(3);
    // Every job runs the open-loop process: Poisson for a closed loop, and no cap.
    let job = Job {
        id: 0,
        cell: 0,
        rate_rps: 25.0,
        replication: 0,
        seed: 5,
        knobs: Knobs::of(&poisson),
        detail: true,
    };
    let want = run_job(&poisson, &job).expect("sim");
    assert_eq!(run_job(&closed, &job).expect("sim"), want);
    assert_eq!(run_job(&capped, &job).expect("sim"), want);
    // While a plain simulation of those plans honours the gate: 3 or 4 clients are
    // far from loading the replica, so every request meets the SLO.
    for p in [&closed, &capped] {
        let cfg = SimConfig::from_plan(p, 25.0).expect("valid");
        let r = sim::simulate(&cfg, 5).expect("sim");
        assert!(
            r.attainment > want.attainment,
            "{} vs {}",
            r.attainment,
            want.attainment
        );
    }
    let json = |r: &GoodputResult| serde_json::to_string(r).expect("json");
    let a = search_goodput_threads(&poisson, 2, &mut |_| true).expect("search");
    assert_eq!(
        json(&a),
        json(&search_goodput_threads(&closed, 2, &mut |_| true).expect("search"))
    );
    assert_eq!(
        json(&a),
        json(&search_goodput_threads(&capped, 1, &mut |_| true).expect("search"))
    );
    let s = sweep_knobs_threads(&poisson, 2, &mut |_| true).expect("sweep");
    assert_eq!(
        s,
        sweep_knobs_threads(&closed, 2, &mut |_| true).expect("sweep")
    );
    assert_eq!(
        s,
        sweep_knobs_threads(&capped, 2, &mut |_| true).expect("sweep")
    );
}

#[test]
fn marginal_goodput_is_at_least_joint_goodput() {
    // Meeting every objective at once is harder than meeting each on its own, so the
    // marginal curve lies on or above the joint one at every rate. On the default SLO
    // the TPOT objective hardly binds and the two nearly agree; a TPOT objective close
    // to the decode step makes both bind, and marginal goodput is then higher.
    for (tpot, strictly) in [(0.025, false), (0.014, true)] {
        let mut joint = Plan::default();
        joint.run.replications = 4;
        joint.slo.tpot_s = Some(tpot);
        let mut marginal = joint.clone();
        marginal.slo.mode = crate::plan::SloMode::Marginal;
        let j = search_goodput(&joint, &mut |_| true).expect("search");
        let m = search_goodput(&marginal, &mut |_| true).expect("search");
        assert_eq!(j.status, SearchStatus::Converged);
        assert_eq!(m.status, SearchStatus::Converged);
        assert!(
            m.goodput_rps >= j.goodput_rps,
            "tpot {tpot}: marginal {} vs joint {}",
            m.goodput_rps,
            j.goodput_rps
        );
        if strictly {
            assert!(
                m.goodput_rps > j.goodput_rps,
                "{} vs {}",
                m.goodput_rps,
                j.goodput_rps
            );
        }
        let mut above = 0;
        for c in &j.curve {
            let job = Job {
                id: 0,
                cell: 0,
                rate_rps: c.rate_rps,
                replication: 0,
                seed: crate::sim::replication_seed(joint.run.seed, 0),
                knobs: Knobs::of(&joint),
                detail: false,
            };
            let a = run_job(&joint, &job).expect("sim").attainment;
            let b = run_job(&marginal, &job).expect("sim").attainment;
            assert!(b >= a, "rate {}: marginal {b} < joint {a}", c.rate_rps);
            above += (b > a) as u32;
        }
        if strictly {
            assert!(
                above > 0,
                "marginal attainment is above joint where both bind"
            );
        }
    }
}

/// The plan's limit on sweep-axis values is the sweep's own (they were 16 and 12): a
/// plan with the most values on both axes validates and the sweep takes it; one more
/// value on either axis fails validation with a message naming the field and limit.
#[test]
fn sweep_axis_limit_is_the_plans() {
    use crate::plan::{MAX_BATCHED_TOKENS, MAX_NUM_SEQS, MAX_SWEEP_VALUES};
    let n = MAX_SWEEP_VALUES as u32;
    let mut plan = quick_plan();
    plan.run.sweep_max_num_seqs = (1..=n).map(|i| i * MAX_NUM_SEQS / n).collect();
    // 0 (chunking off) and the largest budget are both allowed.
    plan.run.sweep_batched_tokens = (0..n).map(|i| i * (MAX_BATCHED_TOKENS / (n - 1))).collect();
    plan.validate().expect("the most values per axis validate");
    let sweep = KnobSweep::new(&plan).expect("the sweep takes what the plan allows");
    assert_eq!(
        sweep.partial().cells.len(),
        MAX_SWEEP_VALUES * MAX_SWEEP_VALUES
    );

    let mut seqs = plan.clone();
    seqs.run.sweep_max_num_seqs.push(1);
    let e = seqs.validate().expect_err("one value too many");
    assert_eq!(e.field, "run.sweep_max_num_seqs");
    assert_eq!(
        e.to_string(),
        format!(
            "run.sweep_max_num_seqs: must list 1..={MAX_SWEEP_VALUES} values, got {}",
            MAX_SWEEP_VALUES + 1
        )
    );
    let mut budgets = plan;
    budgets.run.sweep_batched_tokens.push(64);
    let e = budgets.validate().expect_err("one value too many");
    assert_eq!(
        e.to_string(),
        format!(
            "run.sweep_batched_tokens: must list 1..={MAX_SWEEP_VALUES} values, got {}",
            MAX_SWEEP_VALUES + 1
        )
    );
}

/// The request and replication limits a plan validates against are the simulator's:
/// a plan at both limits validates and simulates (configures), one more fails.
#[test]
fn request_and_replication_limits_are_the_plans() {
    use crate::plan::{MAX_NUM_REQUESTS, MAX_REPLICATIONS};
    let mut plan = Plan::default();
    plan.run.num_requests = MAX_NUM_REQUESTS;
    plan.run.replications = MAX_REPLICATIONS;
    plan.validate().expect("the limits themselves validate");
    SimConfig::from_plan(&plan, 10.0)
        .expect("configures")
        .check()
        .expect("the simulator takes what the plan allows");
    let mut over = plan.clone();
    over.run.num_requests += 1;
    assert_eq!(
        over.validate().expect_err("too many").field,
        "run.num_requests"
    );
    over = plan;
    over.run.replications += 1;
    assert_eq!(
        over.validate().expect_err("too many").field,
        "run.replications"
    );
}

/// Drives a search with a synthetic attainment curve `f(rate, replication)` instead of
/// the simulator; returns the rates of each batch as shares of the analytic guess, and
/// the result.
fn batches(plan: &Plan, f: impl Fn(f64, u32) -> f64) -> (Vec<Vec<f64>>, GoodputResult) {
    let mut s = GoodputSearch::new(plan).expect("search");
    let g = s.analytic_guess_rps();
    let mut seen = Vec::new();
    let answer = |jobs: Vec<Job>| {
        assert!(seen.len() < MAX_RATES, "search did not stop");
        let mut rates: Vec<f64> = jobs.iter().map(|j| j.rate_rps / g).collect();
        rates.dedup();
        seen.push(rates);
        Ok::<_, ()>(
            jobs.iter()
                .map(|j| JobResult {
                    classes: Default::default(),
                    id: j.id,
                    attainment: f(j.rate_rps, j.replication),
                    detail: None,
                    peak_running: PEAK_UNKNOWN,
                })
                .collect(),
        )
    };
    let r = answer_batches(&mut s, answer, |_| Ok(()))
        .expect("no error")
        .expect("a search that is not done must hand out work");
    (seen, r)
}

#[test]
fn the_low_rate_runs_only_when_it_tells_something() {
    let plan = quick_plan();
    let g = GoodputSearch::new(&plan).expect("s").analytic_guess_rps();
    let close = |a: &[f64], b: &[f64]| {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12)
    };

    // The first scan brackets a cliff at 0.8 × guess with a band of no width: the low
    // rate never runs.
    let (seen, r) = batches(&plan, |rate, _| if rate <= 0.8 * g { 0.97 } else { 0.5 });
    assert!(close(&seen[0], &SCAN_FIRST), "{seen:?}");
    assert!(
        seen.iter().flatten().all(|&f| f > SCAN_FIRST[0] - 1e-12),
        "{seen:?}"
    );
    assert!(r.goodput_rps <= 0.8 * g && r.goodput_rps > 0.8 * g * 0.97);

    // 0.6 × guess misses: the low rate is the whole next batch, and the search goes on
    // from it as from any scan (here between it and 0.6 × guess).
    let (seen, r) = batches(&plan, |rate, _| if rate <= 0.4 * g { 0.97 } else { 0.5 });
    assert!(close(&seen[1], &[SCAN_LOW]), "{seen:?}");
    assert!(r.goodput_rps <= 0.4 * g && r.goodput_rps > 0.4 * g * 0.97);
    assert!(r.curve.iter().any(|c| c.rate_rps == SCAN_LOW * g));

    // Everything misses: after the low rate, the steps down start from it.
    let (seen, r) = batches(&plan, |_, _| 0.2);
    assert!(close(&seen[1], &[SCAN_LOW]), "{seen:?}");
    assert!(
        close(&seen[2], &[SCAN_LOW / 8.0, SCAN_LOW / 2.5]),
        "{seen:?}"
    );
    assert_eq!(r.status, SearchStatus::ZeroGoodput);

    // 0.6 × guess passes, but its replications spread the band below the target: the
    // low rate joins the next batch, ahead of the rates the bracket asks for, and gives
    // the range its lower end.
    let (seen, r) = batches(&plan, |rate, rep| {
        if rate < 0.5 * g {
            return 1.0;
        }
        let base = if rate <= 0.8 * g { 0.93 } else { 0.5 };
        base + if rep % 2 == 0 { 0.06 } else { -0.06 }
    });
    assert_eq!(seen[1].len(), 3, "{seen:?}");
    assert!((seen[1][0] - SCAN_LOW).abs() < 1e-12, "{seen:?}");
    assert!(
        r.goodput_range_rps[0] > SCAN_LOW * g,
        "{:?}",
        r.goodput_range_rps
    );
}

/// The search leaves out the low rate only where adding it would change neither the
/// goodput nor its range: checked against the simulator by running that rate anyway.
#[test]
fn leaving_out_the_low_rate_changes_neither_goodput_nor_range() {
    let mut plans = Vec::new();
    for (ttft, reps) in [(0.5, 4), (0.3, 4), (0.5, 1), (2.0, 6)] {
        let mut p = quick_plan();
        p.slo.ttft_s = Some(ttft);
        p.run.replications = reps;
        plans.push(p);
    }
    let mut left_out = 0;
    for plan in &plans {
        let mut s = GoodputSearch::new(plan).expect("search");
        let g = s.analytic_guess_rps();
        answer_batches(&mut s, |jobs| run_jobs(plan, &jobs, 2), |_| Ok(()))
            .expect("sim")
            .expect("done");
        let r = s.result().expect("done");
        if r.curve[0].rate_rps < SCAN_FIRST[0] * g {
            continue;
        }
        left_out += 1;
        // The low rate, run as the search would have run it.
        let jobs: Vec<Job> = (0..s.replications)
            .map(|i| Job {
                id: 1_000_000 + i,
                cell: 0,
                rate_rps: SCAN_LOW * g,
                replication: i,
                seed: sim::replication_seed(plan.run.seed, i),
                knobs: s.knobs,
                detail: false,
            })
            .collect();
        let mut full = s.clone();
        full.points.push(Point {
            rate_rps: SCAN_LOW * g,
            attainment: vec![None; s.replications as usize],
            classes: vec![None; s.replications as usize],
            detail: None,
        });
        let idx = full.points.len() - 1;
        for j in &jobs {
            full.outstanding.insert(j.id, (idx, j.replication));
        }
        full.feed(&run_jobs(plan, &jobs, 2).expect("sim"));
        let with_low = full.result().expect("done");
        assert_eq!(with_low.curve.len(), r.curve.len() + 1);
        assert_eq!(
            with_low.goodput_rps, r.goodput_rps,
            "ttft {:?}",
            plan.slo.ttft_s
        );
        assert_eq!(with_low.goodput_range_rps, r.goodput_range_rps);
    }
    assert!(left_out >= 2, "only {left_out} plans left the low rate out");
}
