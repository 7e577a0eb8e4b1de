use super::*;
use crate::plan::SweepRow;

fn article_measured_plan() -> Plan {
    let mut p = Plan::default();
    p.slo.attainment_target = 0.92;
    p.traffic.peak_rate_rps = 30.0;
    p.planning.measured_sweep = [
        (4.0, 0.99),
        (6.0, 0.97),
        (8.0, 0.93),
        (9.0, 0.71),
        (10.0, 0.38),
    ]
    .into_iter()
    .map(|(rate_rps, attainment)| SweepRow {
        rate_rps,
        attainment,
    })
    .collect();
    p
}

#[test]
fn measured_sweep_gives_the_article_fleet() {
    let plan = article_measured_plan();
    let r = PlanReport::build(&plan, None, None);
    assert_eq!(r.goodput.source, GoodputSource::Measured);
    assert_eq!(r.goodput.goodput_rps, 8.0);
    let c = r.capacity.as_ref().expect("sized");
    assert!((c.planned_rps_per_replica - 5.6).abs() < 1e-12);
    assert_eq!((c.replicas_for_peak, c.replicas_total), (6, 7));
    assert!(r.capacity_error.is_none());
    let md = r.to_markdown();
    assert!(
        md.contains("| Replicas | 7 (6 for the 30 req/s peak + 1 spare) |"),
        "{md}"
    );
    assert!(md.contains("```yaml\n"));
    // Round trip through JSON (what `goodput plan --json` prints).
    let json = serde_json::to_string(&r).expect("json");
    let back: PlanReport = serde_json::from_str(&json).expect("parse");
    assert_eq!(back.goodput, r.goodput);
}

#[test]
fn zero_goodput_is_reported_not_divided() {
    let mut plan = article_measured_plan();
    plan.slo.attainment_target = 0.995;
    let r = PlanReport::build(&plan, None, None);
    assert_eq!(r.goodput.goodput_rps, 0.0);
    assert!(r.capacity.is_none());
    assert!(r
        .capacity_error
        .as_deref()
        .is_some_and(|e| e.contains("no replica")));
    assert_eq!(r.warnings[0].severity, Severity::Critical);
    assert!(r.to_markdown().contains("cannot be sized"));
    let none = PlanReport::build(&Plan::default(), None, None);
    assert_eq!(none.goodput.source, GoodputSource::None);
}

#[test]
fn evaluate_plan_is_build_of_the_searches() {
    let mut plan = Plan::default();
    plan.run.num_requests = 400;
    plan.run.warmup_requests = 50;
    plan.run.replications = 3;
    plan.run.sweep_max_num_seqs = vec![32, 128];
    plan.run.sweep_batched_tokens = vec![512, 2048];
    let opts = EvaluateOptions {
        sweep: true,
        threads: 2,
    };
    let mut last = Progress { done: 0, total: 0 };
    let r = evaluate_plan_with(&plan, opts, &mut |p| {
        assert!(p.done >= last.done, "progress never goes back");
        last = p;
        true
    })
    .expect("report");
    let search = r.search.clone().expect("simulated");
    let sweep = r.sweep.clone().expect("swept");
    assert_eq!(last.done, search.jobs_run + sweep.jobs_run);
    let mut rebuilt = PlanReport::build(&plan, Some(&search), Some(&sweep));
    // Plus the one simulation at the planned rate, run as its job says.
    let job = rebuilt.planned_load_job(&plan).expect("a fleet was sized");
    assert_eq!(job.id, crate::report::PLANNED_LOAD_JOB_ID);
    let capacity = r.capacity.as_ref().expect("capacity");
    assert_eq!(job.rate_rps, capacity.planned_rps_per_replica);
    assert!(rebuilt.planned_load.is_none());
    let result = crate::search::run_job(&plan, &job).expect("runs");
    rebuilt.set_planned_load(&job, &result);
    let planned = rebuilt.planned_load.expect("set");
    assert_eq!(planned.rate_rps, capacity.planned_rps_per_replica);
    assert!(r
        .to_markdown()
        .contains("| Latency at the planned rate | p99 TTFT "));
    assert_eq!(
        serde_json::to_string(&rebuilt).expect("json"),
        serde_json::to_string(&r).expect("json")
    );
    assert_eq!(r.goodput.source, GoodputSource::Simulated);
    assert!(r.goodput.goodput_rps > 0.0);
    let hint = r.knob_hint.as_ref().expect("hint");
    assert!(hint.current.is_some(), "the grid holds the plan's settings");
    assert!(r.to_markdown().contains("## Knob sweep"));
    let cancelled = evaluate_plan_with(&plan, opts, &mut |_| false);
    assert_eq!(cancelled.unwrap_err(), SearchError::Cancelled);
}

#[test]
fn markdown_money_reads_as_everywhere_else() {
    let plan = article_measured_plan();
    let md = PlanReport::build(&plan, None, None).to_markdown();
    // 7 replicas of 1 H100 at $2.50 an hour, 730 hours a month (the article's fleet).
    assert!(md.contains("| Cost per hour | $17.50 |"), "{md}");
    assert!(md.contains("| Cost per month | $12,775 |"), "{md}");
}

#[test]
fn markdown_numbers_read_as_everywhere_else() {
    let mut plan = article_measured_plan();
    // A goodput whose planned share has more digits than a rate shows.
    plan.planning.utilization = 0.7;
    plan.planning.measured_sweep[2].rate_rps = 8.123_456;
    let md = PlanReport::build(&plan, None, None).to_markdown();
    assert!(
        md.contains("| Planned rate per replica | 5.69 req/s (70% of goodput) |"),
        "{md}"
    );
    assert!(
        md.contains("| KV cache | 406,847 tokens per replica"),
        "{md}"
    );
}

#[test]
fn markdown_states_the_slo_mode_and_a_closed_loop() {
    let mut plan = article_measured_plan();
    let md = PlanReport::build(&plan, None, None).to_markdown();
    for line in [
        "- TTFT objective: 500 ms.",
        "- TPOT objective: 25 ms.",
        "- End-to-end objective: none.",
        "- Attainment target: 92%.",
        "- SLO mode: Joint (per request).",
    ] {
        assert!(md.contains(line), "{line} in {md}");
    }
    assert!(!md.contains("closed loop"));
    plan.slo.mode = crate::plan::SloMode::Marginal;
    plan.traffic.arrival = crate::plan::Arrival::Closed {
        concurrency: 32,
        think_s: 0.0,
    };
    let md = PlanReport::build(&plan, None, None).to_markdown();
    assert!(md.contains("- SLO mode: Marginal percentiles."), "{md}");
    assert!(
        md.contains("a closed loop of 32 clients; goodput is searched with Poisson arrivals."),
        "{md}"
    );
}

/// A converged search result at `goodput_rps`, made up for the page's decisions.
fn search_at(plan: &Plan, goodput_rps: f64) -> GoodputResult {
    GoodputResult {
        binding_class: None,
        goodput_rps,
        goodput_range_rps: [goodput_rps - 1.0, goodput_rps + 1.0],
        target: plan.slo.attainment_target,
        replications: 4,
        knobs: Knobs::of(plan),
        status: SearchStatus::Converged,
        reason: String::new(),
        analytic_guess_rps: goodput_rps,
        curve: Vec::new(),
        jobs_run: 0,
    }
}

#[test]
fn a_measured_sweep_sizes_the_fleet_without_a_search() {
    let mut plan = article_measured_plan();
    plan.planning.utilization = 0.7;
    plan.planning.redundancy = 1;
    let (shown, report) = report_for(&plan, None).expect("no search needed");
    assert_eq!(shown, plan);
    assert_eq!(report.goodput.source, GoodputSource::Measured);
    assert_eq!(report.goodput.goodput_rps, 8.0);
    let fleet = report.fleet().expect("sized");
    assert!((fleet.planned_rps_per_replica - 5.6).abs() < 1e-12);
    assert_eq!((fleet.replicas_for_peak, fleet.replicas_total), (6, 7));
    // A finished search does not replace the measured knee.
    let r = search_at(&plan, 20.0);
    let (_, with_search) = report_for(&plan, Some((&plan, &r))).expect("report");
    assert_eq!(
        with_search, report,
        "the same report as `goodput plan --json`"
    );
    assert_eq!(goodput_for(&plan, Some((&plan, &r))), Some(8.0));
}

/// `goodput_for` takes the goodput without building the report; it must be exactly the
/// goodput of the report the page shows for that plan, with or without a measured sweep
/// (one whose knee cannot be found included), and for a search of that plan, of another
/// plan, one that did not converge, or none.
#[test]
fn goodput_for_is_the_goodput_of_the_report_of_that_plan() {
    let default = Plan::default();
    let measured = article_measured_plan();
    let mut unreadable = measured.clone();
    for row in &mut unreadable.planning.measured_sweep {
        row.attainment = 0.0;
    }
    let mut zero = search_at(&default, 0.0);
    zero.status = SearchStatus::ZeroGoodput;
    let searches = [search_at(&default, 12.5), search_at(&measured, 20.0), zero];
    let plans = [&default, &measured, &unreadable];
    let mut seen = Vec::new();
    for plan in plans {
        for ran_for in plans {
            for r in searches.iter().map(Some).chain([None]) {
                let search = r.map(|r| (ran_for, r));
                let report = report_for(plan, search.filter(|(p, _)| *p == plan))
                    .map(|(_, rep)| rep.goodput.goodput_rps);
                assert_eq!(goodput_for(plan, search), report, "{search:?}");
                seen.push(report);
            }
        }
    }
    // The cases reach every kind of answer: none, a search's, a knee and no knee (0).
    for want in [None, Some(12.5), Some(8.0), Some(0.0)] {
        assert!(seen.contains(&want), "{want:?} never came up");
    }
}

#[test]
fn without_a_sweep_the_last_search_is_used_for_its_own_plan() {
    let plan = Plan::default();
    assert_eq!(
        report_for(&plan, None),
        None,
        "nothing until a search finishes"
    );
    // The search ran while the plan still had a sweep that is now removed.
    let searched = article_measured_plan();
    let r = search_at(&searched, 12.5);
    let (shown, report) = report_for(&plan, Some((&searched, &r))).expect("report");
    assert!(shown.planning.measured_sweep.is_empty());
    assert_eq!(report.goodput.source, GoodputSource::Simulated);
    assert_eq!(report.goodput.goodput_rps, 12.5);
    assert_eq!(report.fleet(), Ok(size_fleet(12.5, &shown).expect("sized")));
    // The page's report is the CLI's: build, then the planned-load simulation.
    assert!(report.planned_load.is_some());
    assert_eq!(
        report,
        PlanReport::complete(&shown, Some(&r), None).expect("simulates")
    );
    // The goodput of a plan is only ever its own search's.
    assert_eq!(goodput_for(&plan, Some((&searched, &r))), None);
    assert_eq!(goodput_for(&searched, Some((&searched, &r))), Some(8.0));
    let r_own = search_at(&plan, 12.5);
    assert_eq!(goodput_for(&plan, Some((&plan, &r_own))), Some(12.5));
}

#[test]
fn a_sweep_that_never_meets_the_target_says_why() {
    let mut plan = article_measured_plan();
    plan.slo.attainment_target = 0.995;
    let (_, report) = report_for(&plan, None).expect("report");
    assert_eq!(report.goodput.goodput_rps, 0.0);
    assert!(report.fleet().is_err());
    assert!(report.planned_load.is_none());
}

/// The registry's finance rows are the fields the assumptions state: changing any of
/// them changes the assumptions' text.
#[test]
fn the_assumptions_state_every_finance_field() {
    use crate::plan::fields::{Kind, FIELDS};
    let base = serde_json::to_value(Plan::default()).expect("plan JSON");
    let before = assumption_lines(&Plan::default()).join("\n");
    let mut finance = 0;
    for f in FIELDS.iter().filter(|f| f.finance) {
        let value = match (f.kind, f.range) {
            (Kind::Preset, _) => serde_json::json!("some-other-preset"),
            (Kind::Choice(names), _) => serde_json::json!(names[names.len() - 1].0),
            (Kind::Whole, Some(r)) => serde_json::json!(r.hi as u64),
            (_, Some(r)) => serde_json::json!(r.hi),
            _ => panic!("{}: a finance field needs a value to try", f.path),
        };
        let mut v = base.clone();
        let mut slot = &mut v;
        for key in f.path.split('.') {
            slot = slot
                .as_object_mut()
                .expect("an object")
                .entry(key)
                .or_insert(serde_json::Value::Null);
        }
        *slot = value;
        let plan: Plan = serde_json::from_value(v).expect("a plan decodes");
        let after = assumption_lines(&plan).join("\n");
        assert_ne!(after, before, "{} is not in the assumptions", f.path);
        finance += 1;
    }
    assert!(finance >= 10, "{finance} finance fields");
}

/// The Markdown states each of the finance rows by its label, in the registry's order.
#[test]
fn markdown_assumptions_are_the_registry_finance_rows() {
    use crate::plan::fields::FIELDS;
    let plan = Plan::default();
    let md = PlanReport::build(&plan, None, None).to_markdown();
    let section = md
        .split("## Assumptions\n\n")
        .nth(1)
        .and_then(|s| s.split("\n\n").next())
        .expect("an assumptions section");
    let labels: Vec<&str> = section
        .lines()
        .map(|l| l.trim_start_matches("- ").split(": ").next().unwrap_or(""))
        .collect();
    let mut want: Vec<&str> = FIELDS
        .iter()
        .filter(|f| f.finance)
        .map(|f| f.label)
        .collect();
    // Then the traffic in one line.
    want.push("Traffic");
    assert_eq!(labels, want);
    assert!(
        section.contains(
            "- Traffic: Poisson arrivals; prompts median 800 tokens (lognormal sigma 0.8, 16 to 8,000); \
             outputs median 200 tokens (lognormal sigma 0.8, 1 to 1,024); no prefix caching."
        ),
        "{section}"
    );
    assert!(
        section.contains("- Price: $2.50/GPU-h, goodput's typical on-demand price for the H100 SXM (an assumption)."),
        "{section}"
    );
    assert!(section.contains("- Peak rate: 30 req/s."), "{section}");
}

#[test]
fn planning_at_the_best_is_stated_and_the_page_report_does_not_deny_it() {
    let mut plan = Plan::default();
    plan.run.plan_at_best = true;
    // The page's report is built without the sweep: no claim about it either way.
    let r = PlanReport::build(&plan, None, None);
    assert!(
        r.warnings.iter().all(|w| w.id != "planned_at_best"),
        "{:?}",
        r.warnings
    );
    assert!(
        r.assumptions.iter().any(|a| a
            == "Engine settings: the knob sweep's best (now 128 sequences, budget 512)."),
        "{:?}",
        r.assumptions
    );
    plan.run.plan_at_best = false;
    let r = PlanReport::build(&plan, None, None);
    assert!(r
        .assumptions
        .iter()
        .all(|a| !a.contains("knob sweep's best")));
}

#[test]
fn a_stated_expert_routing_skew_is_an_assumption() {
    let mut plan = Plan::default();
    crate::presets::model("qwen3-30b-a3b")
        .expect("a preset")
        .apply(&mut plan);
    let stated = |p: &Plan| {
        PlanReport::build(p, None, None)
            .assumptions
            .into_iter()
            .filter(|a| a.starts_with("Expert routing skew"))
            .collect::<Vec<_>>()
    };
    assert!(stated(&plan).is_empty(), "uniform routing says nothing");
    plan.model.expert_routing_skew = 3.0;
    assert_eq!(
        stated(&plan),
        vec!["Expert routing skew: a popular expert picked 3× as often as the others (1 is uniform).".to_string()]
    );
}

/// The traffic line names the arrivals, both length laws and the prefix caching, in each
/// of its forms.
#[test]
fn the_traffic_line_states_lengths_arrivals_and_prefix_caching() {
    use crate::plan::{Arrival, LengthDist, PrefixModel};
    let mut p = Plan::default();
    p.traffic.arrival = Arrival::Gamma { cv: 2.0 };
    p.traffic.output.dist = LengthDist::Fixed { tokens: 300 };
    p.traffic.prefix_tokens = 1_500;
    p.traffic.prefix_hit_rate = 0.6;
    let line = super::traffic_words(&p);
    assert_eq!(
        line,
        "Traffic: bursty (gamma) arrivals, CV 2; prompts median 800 tokens (lognormal sigma \
         0.8, 16 to 8,000); outputs of 300 tokens; a 1,500-token prefix cached for 60% of \
         requests."
    );
    p.traffic.prefix_tokens = 0;
    p.traffic.prefix_hit_rate = 0.0;
    p.traffic.sharing = Some(PrefixModel {
        groups: 4,
        group_tokens: 2_000,
        zipf: 1.1,
        sessions: 50,
        turns: 6,
        document_tokens: 3_000,
        replies_cached: false,
        ..PrefixModel::NONE
    });
    let line = super::traffic_words(&p);
    assert!(
        line.ends_with(
            "prefix caching of 4 shared prefixes of 2,000 tokens (Zipf 1.1) and 50 sessions \
             at once of 6 turns after a 3,000-token document, interleaved, recorded replies."
        ),
        "{line}"
    );
}

/// What the share view shows, the report carries too: the note, the GPU comparison
/// stored with the plan (a stale one is named and left out), the day schedule and the
/// disaggregated deployment.
#[test]
fn the_report_carries_the_note_comparison_schedule_and_disaggregation() {
    use crate::plan::comparison::{fingerprint, ShootoutRecord, ShootoutSpec};
    use crate::shootout::{ConstantsSource, ShootoutResult, ShootoutRow};
    let mut plan = Plan {
        note: "Chat assistant, EU region.".into(),
        ..Plan::default()
    };
    let row = |gpu: &str, tp: u32, month: f64, chosen: bool| ShootoutRow {
        gpu: gpu.into(),
        gpu_name: crate::presets::gpu_short_name(gpu),
        tp,
        pp: 1,
        ep: 1,
        fits: true,
        reason: None,
        goodput_rps: 20.0,
        replicas_total: 4,
        gpus_total: 4 * tp,
        cost_per_hour_usd: Some(month / 730.0),
        cost_per_month_usd: Some(month),
        cost_per_compliant_request_usd: Some(0.0001),
        ttft_p99_s: Some(0.5),
        tpot_p99_s: Some(0.05),
        output_tokens_per_s_per_gpu: Some(1000.0),
        kv_capacity_tokens: 1e5,
        gpus_needed: None,
        chosen,
        constants: ConstantsSource::Datasheet,
        spec_draft_tokens: 0,
        spec_acceptance: 0.0,
        comm_share: None,
        note: None,
    };
    plan.shootout = Some(ShootoutRecord {
        fingerprint: fingerprint(&plan),
        spec: ShootoutSpec::default(),
        result: ShootoutResult {
            rows: vec![
                row("h200", 1, 9_000.0, false),
                row("h100-sxm", 1, 9_500.0, true),
            ],
            best: Some(0),
            chosen: Some(1),
        },
        omitted: 0,
    });
    plan.schedule = Some(crate::schedule::ScheduleSpec {
        profile: crate::schedule::RateProfile::named("business-hours").expect("a shape"),
        options: Default::default(),
    });
    plan.disagg = Some(crate::disagg::DisaggSpec::for_plan(&plan));
    let r = PlanReport::build(&plan, None, None);
    assert_eq!(r.note, plan.note);
    assert_eq!(r.comparison.as_ref().map(|c| c.rows.len()), Some(2));
    let md = r.to_markdown();
    assert!(md.contains("\n\nChat assistant, EU region.\n"), "{md}");
    assert!(md.contains("## GPU comparison"), "{md}");
    assert!(md.contains("| cheapest |"), "{md}");
    assert!(md.contains("| chosen |"), "{md}");
    assert!(md.contains("$9,000"), "{md}");
    assert!(
        md.contains("- Day schedule: an hourly rate profile ("),
        "{md}"
    );
    assert!(
        md.contains("- Disaggregated deployment stored with the plan: prefill on"),
        "{md}"
    );
    let json = serde_json::to_value(&r).expect("JSON");
    assert_eq!(json["note"], "Chat assistant, EU region.");
    assert_eq!(json["comparison"]["rows"][1]["gpu"], "h100-sxm");
    // Changed since: the comparison is left out, and said to be.
    plan.traffic.peak_rate_rps *= 2.0;
    let r = PlanReport::build(&plan, None, None);
    assert!(r.comparison.is_none());
    assert!(r
        .assumptions
        .iter()
        .any(|a| a.starts_with("A GPU comparison stored with the plan was run before")));
    assert!(!r.to_markdown().contains("## GPU comparison"));
}

/// A plan that stores a day schedule: `goodput plan` works it out on the report's
/// goodput, as `goodput schedule` does, and the Markdown gives its verdict and its
/// hours; a schedule of another goodput, or a plan without one, adds nothing.
#[test]
fn a_stored_day_schedule_is_in_the_report_and_its_markdown() {
    use crate::schedule::{schedule_threads, RateProfile, ScheduleOptions, ScheduleSpec};
    let mut p = Plan::default();
    p.run.num_requests = 600;
    p.run.warmup_requests = 60;
    p.run.replications = 2;
    let options = ScheduleOptions {
        simulate: false,
        ..ScheduleOptions::default()
    };
    let profile = RateProfile::named("business-hours").expect("a named profile");
    p.schedule = Some(ScheduleSpec {
        profile: profile.clone(),
        options: options.clone(),
    });
    let opts = EvaluateOptions {
        threads: 2,
        sweep: false,
    };
    let r = evaluate_plan_with(&p, opts, &mut |_| true).expect("the plan evaluates");
    let day = r.day.as_ref().expect("the day is worked out");
    let g = r.goodput.goodput_rps;
    assert_eq!(
        day,
        &schedule_threads(&p, &profile, g, &options, 2).expect("a schedule")
    );
    let md = r.to_markdown();
    let at = md.find("## Traffic over a day").expect("a day section");
    let end = at + 3 + md[at + 3..].find("\n## ").expect("a section after it");
    let section = &md[at..end];
    assert!(section.contains(&day.verdict_sentence()), "{section}");
    // A header, its rule and 24 hours.
    assert_eq!(section.matches("\n| ").count(), 2 + 24, "{section}");
    assert!(at < md.find("## Assumptions").expect("assumptions"));
    // Another goodput's schedule is not this report's; without a stored schedule, none.
    let mut other = r.clone();
    other.day = None;
    let mut shifted = day.clone();
    shifted.goodput_rps += 1.0;
    other.set_day(&p, &shifted);
    assert!(other.day.is_none());
    let mut bare = p.clone();
    bare.schedule = None;
    let r = evaluate_plan_with(&bare, opts, &mut |_| true).expect("the plan evaluates");
    assert!(r.day.is_none() && !r.to_markdown().contains("## Traffic over"));
}

/// The price's assumption says where the price comes from: a published offer with its
/// provider, term, date and source, or goodput's typical price.
#[test]
fn the_price_states_its_source() {
    let mut plan = Plan::default();
    let line = |p: &Plan| {
        assumption_lines(p)
            .into_iter()
            .find(|l| l.starts_with("Price: "))
            .expect("a price line")
    };
    assert_eq!(
        line(&plan),
        "Price: $2.50/GPU-h, goodput's typical on-demand price for the H100 SXM (an assumption)."
    );
    crate::plan::fields::field("hardware.price_offer").set_name(&mut plan, "gcp-h100-sxm-3-year");
    assert_eq!(
        line(&plan),
        "Price: $4.86/GPU-h, Google Cloud 3-year commitment: a3-highgpu-8g 3-year committed use (us-central1), as of 2026-07-30, from github.com/Cyclenerd/google-cloud-pricing-cost-calculator."
    );
}

#[test]
fn a_deadline_longer_than_the_run_is_warned_when_nothing_else_bounds_the_wait() {
    use crate::plan::classes::parse_class;
    let mut plan = Plan::default();
    plan.run.num_requests = 2500;
    plan.slo.ttft_s = None;
    plan.slo.tpot_s = None;
    plan.slo.e2e_s = Some(600.0);
    // 2,500 requests at 20 req/s span 125 s, well inside the 600 s deadline.
    let w = classes::deadline_warnings(&plan, 20.0);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].starts_with("The SLO's "), "{}", w[0]);
    assert!(
        w[0].contains("above 12,000") && w[0].ends_with("or set a TTFT objective"),
        "{}",
        w[0]
    );
    // A TPOT objective does not bound the wait; a TTFT objective does, and so does a
    // deadline inside the span.
    plan.slo.tpot_s = Some(0.025);
    assert_eq!(classes::deadline_warnings(&plan, 20.0).len(), 1);
    plan.slo.ttft_s = Some(1.0);
    assert!(classes::deadline_warnings(&plan, 20.0).is_empty());
    plan.slo.ttft_s = None;
    plan.slo.e2e_s = Some(60.0);
    assert!(classes::deadline_warnings(&plan, 20.0).is_empty());
    // Per class: only the class judged by its deadline alone.
    let mut plan = Plan::default();
    plan.run.num_requests = 2500;
    plan.classes = ["chat:share=0.7", "batch:share=0.3,e2e=600"]
        .iter()
        .map(|t| parse_class(&plan, t).expect("a class"))
        .collect();
    let w = classes::deadline_warnings(&plan, 20.0);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].starts_with("Class batch's ") && w[0].ends_with("give the class a TTFT objective"),
        "{}",
        w[0]
    );
}

#[test]
fn a_replica_over_stages_or_experts_is_stated_beside_its_tensor_parallel_degree() {
    use crate::report::assumptions;
    let mut plan = Plan::default();
    plan.hardware.tp_degree = 8;
    plan.hardware.pp_degree = 2;
    let rows = assumptions(&plan);
    let tp = rows
        .iter()
        .position(|a| a.path == "hardware.tp_degree")
        .expect("TP stated");
    assert_eq!(rows[tp + 1].path, "hardware.pp_degree");
    assert_eq!(
        rows[tp + 1].value,
        "2 stages of 8 GPUs, 16 GPUs a replica over 2 nodes"
    );
    crate::presets::model("qwen3-30b-a3b")
        .expect("moe")
        .apply(&mut plan);
    plan.hardware.tp_degree = 1;
    plan.hardware.pp_degree = 1;
    plan.hardware.ep_degree = 16;
    let rows = assumptions(&plan);
    let tp = rows
        .iter()
        .position(|a| a.path == "hardware.tp_degree")
        .expect("TP stated");
    assert_eq!(
        rows[tp + 1].value,
        "the routed experts split over 16 GPUs, attention data-parallel, over 2 nodes"
    );
    // Without either, no such row.
    let rows = assumptions(&Plan::default());
    assert!(rows
        .iter()
        .all(|a| a.path != "hardware.pp_degree" && a.path != "hardware.ep_degree"));
}

#[test]
fn shared_and_dedicated_pools_at_one_cost_say_so() {
    use crate::report::classes::{Dedicated, DedicatedPool};
    let pool = |name: &str| DedicatedPool {
        name: name.into(),
        goodput_rps: 10.0,
        replicas_total: 2,
        gpus_total: 2,
        cost_per_month_usd: 3650.0,
        error: None,
    };
    let mut d = Dedicated {
        pools: vec![pool("chat"), pool("agent")],
        gpus_total: 4,
        cost_per_month_usd: 7300.0,
        shared_gpus_total: 4,
        shared_cost_per_month_usd: 7300.0,
        saving_per_month_usd: 0.0,
    };
    assert!(
        d.words().ends_with("Sharing costs the same."),
        "{}",
        d.words()
    );
    d.shared_cost_per_month_usd = 5475.0;
    d.saving_per_month_usd = 1825.0;
    assert!(
        d.words().ends_with("Sharing saves $1,825 a month."),
        "{}",
        d.words()
    );
    d.shared_cost_per_month_usd = 9125.0;
    d.saving_per_month_usd = -1825.0;
    assert!(
        d.words().ends_with("Sharing costs $1,825 a month more."),
        "{}",
        d.words()
    );
}
