//! `goodput schedule`, run as a user would.

mod common;

use common::{failure, goodput, json, stdout, TempFile};

fn fixture(name: &str) -> String {
    format!(
        "{}/../core/tests/fixtures/trace/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn a_named_profile_prints_hours_and_monthly_costs() {
    let out = goodput(&[
        "schedule",
        "--profile",
        "business-hours",
        "--goodput",
        "22",
        "--num-requests",
        "600",
        "--warmup-requests",
        "100",
        "--json",
    ]);
    let v = json(&out);
    let hours = v["hours"].as_array().expect("hours[]");
    assert_eq!(hours.len(), 24);
    for h in hours {
        for key in ["rate_rps", "replicas", "cost_usd", "attainment"] {
            assert!(!h[key].is_null(), "{key} in {h}");
        }
    }
    // The default peak (30 req/s) at 22 × 0.7 = 15.4 req/s per replica: 2 + 1 replicas.
    assert_eq!(v["static_replicas"], 3);
    assert_eq!(hours[10]["rate_rps"], 30.0);
    assert_eq!(hours[10]["replicas"], 3);
    assert_eq!(hours[3]["replicas"], 2);
    let st = v["static_cost_per_month_usd"].as_f64().unwrap();
    let au = v["autoscaled_cost_per_month_usd"].as_f64().unwrap();
    // 3 replicas × $2.5 × 730 h.
    assert!((st - 5475.0).abs() < 1e-6, "static {st}");
    assert!(au < st, "autoscaled {au} vs static {st}");
    assert_eq!(v["goodput_source"], "given");

    // The same without --json: a table and a verdict.
    let text = stdout(&goodput(&[
        "schedule",
        "--profile",
        "business-hours",
        "--goodput",
        "22",
        "--no-sim",
    ]));
    assert!(text.contains("static_cost_per_month_usd"), "{text}");
    assert!(text.contains("autoscaling saves"), "{text}");
    assert_eq!(text.lines().filter(|l| l.starts_with("  10 ")).count(), 1);
}

#[test]
fn a_trace_gives_lengths_and_with_a_day_the_profile() {
    // The Mooncake fixture spans an hour: it gives lengths and prefix reuse, the shape
    // comes from --profile.
    let v = json(&goodput(&[
        "schedule",
        "--trace",
        &fixture("mooncake.jsonl"),
        "--profile",
        "flat",
        "--goodput",
        "10",
        "--no-sim",
        "--json",
    ]));
    assert_eq!(v["trace"]["format"], "mooncake");
    assert_eq!(v["trace"]["bad_rows"], 2);
    assert_eq!(v["trace"]["prefix"]["hit_rate"], 0.5);
    assert_eq!(v["plan_changes"].as_array().unwrap().len(), 3);
    // Flat: every hour is the peak, so autoscaling saves nothing.
    assert_eq!(
        v["static_cost_per_month_usd"],
        v["autoscaled_cost_per_month_usd"]
    );

    // A BurstGPT day: 2 requests a minute by day (8:00–19:59), 1 by night.
    let mut body =
        String::from("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n");
    for m in 0..1440 {
        let per_min = if (480..1200).contains(&m) { 2 } else { 1 };
        for k in 0..per_min {
            body.push_str(&format!(
                "{},ChatGPT,{},{},0,Conversation log\n",
                m * 60 + k * 20,
                300 + m % 7,
                50 + k
            ));
        }
    }
    body.push_str("86399,ChatGPT,oops,1,1,API log\n");
    let file = TempFile::new("burst.csv", &body);
    let out = goodput(&[
        "schedule",
        "--trace",
        file.path(),
        "--goodput",
        "22",
        "--no-sim",
    ]);
    let text = stdout(&out);
    assert!(text.contains("trace: burstgpt format, 2160 rows"), "{text}");
    assert!(
        text.contains("bad row, line 2162: prompt tokens 'oops'"),
        "{text}"
    );
    assert!(text.contains("burstgpt trace, 2160 requests"), "{text}");
    let v = json(&goodput(&[
        "schedule",
        "--trace",
        file.path(),
        "--goodput",
        "22",
        "--no-sim",
        "--json",
    ]));
    let hours = v["hours"].as_array().unwrap();
    // Day hours are the peak (30 req/s), night hours half of it.
    assert_eq!(hours[12]["rate_rps"], 30.0);
    assert!((hours[3]["rate_rps"].as_f64().unwrap() - 15.0).abs() < 1e-9);
}

#[test]
fn bad_input_is_one_clear_line() {
    let e = failure(
        &goodput(&["schedule", "--profile", "weekends", "--goodput", "10"]),
        "unknown shape",
    );
    assert!(
        e.contains(
            "'weekends' is neither a file nor a shape (flat, business-hours, global-consumer)"
        ),
        "{e}"
    );
    let e = failure(
        &goodput(&[
            "schedule",
            "--trace",
            &fixture("azure.csv"),
            "--goodput",
            "10",
        ]),
        "short trace",
    );
    assert!(e.contains("the trace covers 2 of 24 hours"), "{e}");
    let e = failure(
        &goodput(&["schedule", "--trace", "/nonexistent/trace.csv"]),
        "missing trace",
    );
    assert!(e.starts_with("goodput: --trace: cannot read"), "{e}");
    let e = failure(
        &goodput(&["schedule", "--scale-up-lag-min", "-5", "--goodput", "10"]),
        "negative lag",
    );
    assert!(
        e.contains("--scale-up-lag-min: must be a number of minutes from 0 to 1,440; it is -5"),
        "{e}"
    );
    let short = TempFile::new("short-profile.txt", "1\n2\n3\n");
    let e = failure(
        &goodput(&["schedule", "--profile", short.path(), "--goodput", "10"]),
        "short profile",
    );
    assert!(
        e.contains("3 hourly values; give 24 (a day) or 168 (a week)"),
        "{e}"
    );
    let e = failure(
        &goodput(&["schedule", "--goodput", "0", "--no-sim"]),
        "zero goodput",
    );
    assert!(e.contains("goodput is 0"), "{e}");
}

#[test]
fn the_plan_s_own_schedule_gives_the_defaults() {
    let plan = r#"{"schedule": {"profile": {"hourly": [1,1,1,1,1,1,1,1,1,1,1,1,2,2,2,2,2,2,2,2,2,2,2,2]},
                   "options": {"scale_up_lag_min": 7, "cooldown_min": 0}}}"#;
    let file = TempFile::new("plan-with-schedule.json", plan);
    let v = json(&goodput(&[
        "schedule",
        "--plan",
        file.path(),
        "--goodput",
        "22",
        "--no-sim",
        "--json",
    ]));
    assert_eq!(v["options"]["scale_up_lag_min"], 7.0);
    assert_eq!(v["hours"][0]["rate_rps"], 15.0);
    assert_eq!(v["hours"][12]["rate_rps"], 30.0);
    // A flag overrides the plan's option.
    let v = json(&goodput(&[
        "schedule",
        "--plan",
        file.path(),
        "--goodput",
        "22",
        "--no-sim",
        "--scale-up-lag-min",
        "3",
        "--json",
    ]));
    assert_eq!(v["options"]["scale_up_lag_min"], 3.0);
    // The schedule travels in a link.
    let link = stdout(&goodput(&["link", "--plan", file.path()]));
    let v = json(&goodput(&[
        "schedule",
        "--link",
        link.trim(),
        "--goodput",
        "22",
        "--no-sim",
        "--json",
    ]));
    assert_eq!(v["options"]["scale_up_lag_min"], 7.0);
    assert_eq!(v["hours"][0]["rate_rps"], 15.0);
}

/// `--replay FILE` on a plan command: the trace's rows become the traffic, Mooncake's
/// block ids drive the prefix cache; a missing file, a trace with no readable row and a
/// typed hit rate beside block ids are refused in words that name the flag.
#[test]
fn a_replayed_trace_is_the_plans_traffic() {
    let trace = fixture("mooncake_conversation_head.jsonl");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "simulate",
            "--replay",
            &trace,
            "--kv-policy",
            "paged",
            "--num-requests",
            "300",
            "--warmup-requests",
            "30",
            "--request-rate",
            "0.5",
            "--json",
        ];
        args.extend_from_slice(extra);
        json(&goodput(&args))["prefix_hit_rate"]
            .as_f64()
            .expect("a hit rate")
    };
    // Conversations come back to blocks still cached on this GPU, now and then.
    let hit = run(&[]);
    assert!(hit > 0.01 && hit < 0.2, "{hit}");
    // With memory for every block, more of them.
    let all = run(&["--memory-bytes", "1e13"]);
    assert!(all > 2.0 * hit, "{all} against {hit}");
    let e = failure(
        &goodput(&["plan", "--replay", "no-such-trace.jsonl"]),
        "missing file",
    );
    assert!(
        e.starts_with("goodput: --replay: cannot read 'no-such-trace.jsonl'"),
        "{e}"
    );
    let empty = TempFile::new("empty.jsonl", "{\"timestamp\": 1}\n");
    let e = failure(
        &goodput(&["plan", "--replay", empty.path()]),
        "no readable row",
    );
    assert!(e.contains("--replay:"), "{e}");
    let e = failure(
        &goodput(&[
            "plan",
            "--replay",
            &trace,
            "--prefix-hit-rate",
            "0.5",
            "--prefix-tokens",
            "100",
        ]),
        "typed hit rate beside block ids",
    );
    assert!(
        e.contains("--prefix-hit-rate") && e.contains("block"),
        "{e}"
    );
}
