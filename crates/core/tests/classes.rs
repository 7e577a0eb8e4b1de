//! Traffic classes: a chat class and a batch class on one fleet, against a pool each.

use goodput_core::plan::classes::{class_text, parse_class, TrafficClass};
use goodput_core::plan::Plan;
use goodput_core::report::{evaluate_plan_with, EvaluateOptions};
use goodput_core::share;

/// Interactive chat at priority 0 (TTFT 500 ms, TPOT 25 ms) and batch summaries at
/// priority 1 (3,000-token prompts, a 30 s end-to-end deadline), 70% and 30% of a
/// 30 req/s peak.
fn chat_and_batch() -> Plan {
    let mut p = Plan::default();
    p.run.replications = 8;
    p.classes = vec![
        parse_class(&p, "chat:share=0.7,ttft=0.5,tpot=0.025,priority=0").expect("chat"),
        parse_class(
            &p,
            "batch:share=0.3,e2e=30,priority=1,input-len-median=3000,output-len-median=400",
        )
        .expect("batch"),
    ];
    p.validate().expect("valid");
    p
}

/// The case: one shared pool needs fewer GPUs than a pool per class, both
/// classes meet their own targets at the planned rate, and the report names the class
/// that binds. The classes' costs, weighted by their shares, make the fleet's.
#[test]
fn a_shared_pool_serves_chat_and_batch_with_fewer_gpus() {
    let plan = chat_and_batch();
    let r = evaluate_plan_with(
        &plan,
        EvaluateOptions {
            sweep: false,
            threads: 2,
        },
        &mut |_| true,
    )
    .expect("evaluates");
    let fleet = r.capacity.as_ref().expect("a fleet");
    let d = r.dedicated.as_ref().expect("the comparison ran");
    assert_eq!(d.shared_gpus_total, fleet.gpus_total);
    assert!(
        fleet.gpus_total < d.gpus_total,
        "shared {} GPUs against {} dedicated ({:?})",
        fleet.gpus_total,
        d.gpus_total,
        d.pools
    );
    assert!(d.saving_per_month_usd > 0.0);
    assert_eq!(r.binding_class.as_deref(), Some("chat"));
    assert_eq!(r.classes.len(), 2);
    let mut weighted = 0.0;
    let measured: u32 = r
        .classes
        .iter()
        .map(|c| c.at_planned_load.expect("simulated").measured_requests)
        .sum();
    for c in &r.classes {
        let at = c.at_planned_load.expect("simulated at the planned rate");
        assert!(
            at.attainment >= c.target,
            "{} at {} against {}",
            c.name,
            at.attainment,
            c.target
        );
        // Weighted by the class's share of the run's requests.
        let share = f64::from(at.measured_requests) / f64::from(measured);
        assert!(
            (share - c.share).abs() < 0.05,
            "{} of the run against {}",
            share,
            c.share
        );
        weighted += share * c.cost_per_compliant_request_usd.expect("a cost");
    }
    let whole = fleet.cost_per_compliant_request_usd;
    assert!(
        (weighted / whole - 1.0).abs() < 1e-9,
        "{weighted} vs {whole}"
    );
    // Batch requests are longer: each costs more than a chat request.
    assert!(
        r.classes[1].cost_per_compliant_request_usd > r.classes[0].cost_per_compliant_request_usd
    );
    let md = r.to_markdown();
    assert!(md.contains("## Traffic classes"), "{md}");
    assert!(md.contains("| TPOT p99 (ms) | chat | batch |"), "{md}");
    assert!(
        md.contains("By class at the planned rate: chat, 70% of requests, ")
            && md.contains(" chat sets the goodput."),
        "{md}"
    );
    assert!(md.contains("| Binding class | chat"), "{md}");
    assert!(
        md.contains("Traffic class batch: 30% of requests, priority 1"),
        "{md}"
    );
}

/// A class holds what it sets; its text reads back to the same class; the plan with
/// classes travels in a link and a plan file; a plan of one class writes no `classes`.
#[test]
fn classes_read_write_and_travel() {
    let plan = chat_and_batch();
    let batch = &plan.classes[1];
    assert!(batch.prompt.is_some() && batch.output.is_some());
    let slo = batch.slo.as_ref().expect("its own objectives");
    assert_eq!(
        (slo.ttft_s, slo.tpot_s, slo.e2e_s),
        (None, None, Some(30.0))
    );
    assert_eq!(slo.attainment_target, plan.slo.attainment_target);
    let chat = &plan.classes[0];
    assert_eq!((chat.prompt, chat.output), (None, None));
    for c in &plan.classes {
        let text = class_text(&plan, c);
        let back = parse_class(&plan, &text).expect("reads back");
        assert_eq!(&back, c, "{text}");
    }
    let link = share::share_url("https://example.org/", &plan, false);
    let opened = share::decode(&link).expect("decodes").plan;
    assert_eq!(opened.classes, plan.classes);
    let json = serde_json::to_string(&plan).expect("json");
    let read = Plan::from_json_strict(&json).expect("a plan file");
    assert_eq!(read.classes, plan.classes);
    let one = serde_json::to_value(Plan::default()).expect("json");
    assert!(one.get("classes").is_none());
}

/// Bad classes are refused in words: unknown keys, a bad value in the key's units,
/// shares that do not add up, two classes of one name, one class alone, and classes
/// beside shared prefixes.
#[test]
fn bad_classes_are_refused_in_words() {
    let p = Plan::default();
    let unknown = parse_class(&p, "chat:share=0.5,ttfx=1").expect_err("unknown key");
    assert!(unknown.contains("unknown key 'ttfx'") && unknown.contains("input-len-median"));
    let negative = parse_class(&p, "chat:ttft=-1").expect_err("negative");
    assert!(
        negative.contains("slo.ttft_s") && negative.contains("(0, 3600] s"),
        "{negative}"
    );
    assert!(parse_class(&p, "chat:share=abc").is_err());
    assert!(parse_class(&p, "chat:share=0.5,share=0.5").is_err());
    assert!(parse_class(&p, ":share=0.5").is_err());
    assert!(parse_class(&p, "chat:priority=-1").is_err());
    let class = |name: &str, share: f64| TrafficClass {
        name: name.into(),
        share,
        ..TrafficClass::default()
    };
    let with = |classes: Vec<TrafficClass>| {
        let mut q = p.clone();
        q.classes = classes;
        q.validate().expect_err("refused").to_string()
    };
    let sum = with(vec![class("chat", 0.7), class("batch", 0.2)]);
    assert!(sum.contains("add up to 0.9 (chat 0.7, batch 0.2)"), "{sum}");
    assert!(with(vec![class("chat", 0.5), class("chat", 0.5)]).contains("names two classes"));
    assert!(with(vec![class("chat", 1.0)]).contains("at least 2 classes"));
    // A cached prefix (the plan's, or a class's own) mixes with classes; the plan's own
    // prefix structure does not (a class's own does).
    let mut q = p.clone();
    q.traffic.prefix_tokens = 100;
    q.traffic.prefix_hit_rate = 0.5;
    q.classes = vec![class("a", 0.5), class("b", 0.5)];
    q.validate().expect("a typed prefix with classes");
    q.traffic.prefix_tokens = 0;
    q.traffic.prefix_hit_rate = 0.0;
    q.traffic.sharing = Some(goodput_core::plan::PrefixModel::default());
    assert!(q
        .validate()
        .expect_err("refused")
        .to_string()
        .contains("cannot be mixed with the plan's own prefix structure"));
}
