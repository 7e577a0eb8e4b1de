//! `goodput search`, `sweep`, `capacity`, `plan` and `alerts`, run as a user would run them.

mod common;

use common::{failure, goodput, goodput_env, goodput_stdin, json, stdout, TempDir, TempFile};
use serde_json::Value;

const ARTICLE_SWEEP: &str = "rate,attainment\n4,99%\n6,97%\n8,93%\n9,71%\n10,38%\n";
const ARTICLE_FLAGS: [&str; 8] = [
    "--slo-attainment",
    "0.92",
    "--peak-rate",
    "30",
    "--utilization",
    "0.7",
    "--redundancy",
    "1",
];

/// Small simulations so the tests stay quick.
const QUICK: [&str; 6] = [
    "--num-requests",
    "500",
    "--warmup-requests",
    "50",
    "--replications",
    "3",
];

#[test]
fn capacity_reproduces_the_article_example() {
    let csv = TempFile::new("sweep.csv", ARTICLE_SWEEP);
    let mut args = vec!["capacity", "--sweep", csv.path()];
    args.extend(ARTICLE_FLAGS);
    let text = stdout(&goodput(&args));
    assert!(
        text.contains("goodput_rps                     8 "),
        "{text}"
    );
    assert!(
        text.contains("planned_rps_per_replica         5.6 "),
        "{text}"
    );
    assert!(
        text.contains("replicas_for_peak               6 "),
        "{text}"
    );
    assert!(
        text.contains("replicas_total                  7 "),
        "{text}"
    );
    args.push("--json");
    let v = json(&goodput(&args));
    assert_eq!(v["goodput_rps"], 8.0);
    assert!((v["planned_rps_per_replica"].as_f64().expect("number") - 5.6).abs() < 1e-12);
    assert_eq!(v["replicas_for_peak"], 6);
    assert_eq!(v["replicas_total"], 7);
    assert_eq!(v["gpus_total"], 7);
    for key in [
        "cost_per_hour_usd",
        "cost_per_month_usd",
        "cost_per_compliant_request_usd",
    ] {
        assert!(v[key].as_f64().is_some_and(|x| x > 0.0), "{key}");
    }
    // From stdin, with two GPUs per replica at $4/h: 14 GPUs, $56/h.
    let mut args = vec![
        "capacity",
        "--sweep",
        "-",
        "--gpus-per-replica",
        "2",
        "--gpu-hour-usd",
        "4",
        "--json",
    ];
    args.extend(ARTICLE_FLAGS);
    let v = json(&goodput_stdin(&args, ARTICLE_SWEEP.as_bytes()));
    assert_eq!(v["gpus_total"], 14);
    assert_eq!(v["cost_per_hour_usd"], 56.0);
}

#[test]
fn capacity_errors_are_one_clear_line() {
    let err = failure(&goodput(&["capacity", "--goodput", "0"]), "zero goodput");
    assert!(err.contains("no replica"), "{err}");
    let err = failure(
        &goodput_stdin(&["capacity", "--sweep", "-"], b"4,0.99\n6,lots\n"),
        "bad sweep row",
    );
    assert!(err.contains("line 2"), "{err}");
    let err = failure(
        &goodput_stdin(
            &["capacity", "--sweep", "-", "--slo-attainment", "0.999"],
            ARTICLE_SWEEP.as_bytes(),
        ),
        "unreachable target",
    );
    assert!(err.contains("lowest measured rate"), "{err}");
    let err = failure(
        &goodput(&["capacity", "--goodput", "8", "--sweep", "x.csv"]),
        "goodput and sweep",
    );
    assert!(err.contains("not both"), "{err}");
    failure(
        &goodput(&["capacity", "--sweep", "/nonexistent/sweep.csv"]),
        "missing sweep file",
    );
}

#[test]
fn search_prints_the_contract_keys_and_is_thread_independent() {
    let mut args = vec!["search", "--json", "--threads", "1"];
    args.extend(QUICK);
    let one = stdout(&goodput(&args));
    args[3] = "2";
    let two = stdout(&goodput(&args));
    assert_eq!(one, two, "the answer does not depend on the thread count");
    let v: Value = serde_json::from_str(&one).expect("JSON");
    let g = v["goodput_rps"].as_f64().expect("goodput");
    assert!(g > 10.0 && g < 35.0, "{g}");
    let range = v["goodput_range_rps"].as_array().expect("range");
    assert_eq!(range.len(), 2);
    let curve = v["curve"].as_array().expect("curve");
    assert!(curve.len() >= 3);
    for row in curve {
        assert!(row["rate_rps"].as_f64().is_some());
        assert!(row["attainment"].as_f64().is_some());
        assert_eq!(row["ci95"].as_array().map(Vec::len), Some(2));
    }
    let mut args = vec!["search"];
    args.extend(QUICK);
    let text = stdout(&goodput(&args));
    assert!(text.starts_with("goodput: "), "{text}");
    let err = failure(&goodput(&["search", "--ttft-slo", "-1"]), "negative TTFT");
    assert!(err.contains("ttft"), "{err}");
    failure(&goodput(&["search", "--threads", "0"]), "zero threads");
}

#[test]
fn sweep_prints_grid_best_and_flags() {
    let mut args = vec!["sweep", "--seqs", "16,128", "--budgets", "512,0", "--json"];
    args.extend(QUICK);
    let v = json(&goodput(&args));
    assert_eq!(v["cells"].as_array().map(Vec::len), Some(4));
    let best = v["best"].as_u64().expect("best") as usize;
    assert_eq!(v["cells"][best]["max_num_seqs"], 128);
    let vllm = v["flags"]["vllm"].as_str().expect("flags");
    assert!(vllm.starts_with("vllm serve "), "{vllm}");
    assert!(vllm.contains("--max-num-seqs 128"), "{vllm}");
    assert!(v["flags"]["sglang"]
        .as_str()
        .is_some_and(|s| s.contains("--max-running-requests 128")));
    let mut args = vec!["sweep", "--seqs", "16,128", "--budgets", "512"];
    args.extend(QUICK);
    let text = stdout(&goodput(&args));
    assert!(text.contains("best: 128 seqs, budget 512"), "{text}");
    let err = failure(&goodput(&["sweep", "--seqs", "16,x"]), "bad grid");
    assert!(err.contains("--seqs"), "{err}");
}

#[test]
fn plan_report_json_and_markdown() {
    let file = TempFile::new("plan.json", "");
    // A plan file with the article's measured sweep: no simulation for the goodput.
    let plan = serde_json::json!({
        "slo": {"attainment_target": 0.92},
        "traffic": {"peak_rate_rps": 30.0},
        "planning": {"measured_sweep": [
            {"rate_rps": 4.0, "attainment": 0.99}, {"rate_rps": 6.0, "attainment": 0.97},
            {"rate_rps": 8.0, "attainment": 0.93}, {"rate_rps": 9.0, "attainment": 0.71},
            {"rate_rps": 10.0, "attainment": 0.38}
        ]}
    });
    std::fs::write(file.path(), plan.to_string()).expect("write plan");
    let v = json(&goodput(&[
        "plan",
        "--plan",
        file.path(),
        "--no-sweep",
        "--json",
    ]));
    assert_eq!(v["goodput"]["source"], "measured");
    assert_eq!(v["goodput"]["goodput_rps"], 8.0);
    assert_eq!(v["capacity"]["replicas_total"], 7);
    assert!(v["analytics"]["warnings"].is_array());
    assert!(v["alerts"]["yaml"]
        .as_str()
        .is_some_and(|y| y.contains("groups:")));
    let md = stdout(&goodput(&[
        "plan",
        "--plan",
        file.path(),
        "--no-sweep",
        "--markdown",
    ]));
    assert!(md.starts_with("# "), "{md}");
    assert!(
        md.contains("| Replicas | 7 (6 for the 30 req/s peak + 1 spare) |"),
        "{md}"
    );
    // Simulated, with the knob sweep.
    let mut args = vec!["plan", "--json"];
    args.extend(QUICK);
    let v = json(&goodput(&args));
    assert_eq!(v["goodput"]["source"], "simulated");
    assert!(v["knob_hint"]["flags"]["vllm"].as_str().is_some());
    failure(&goodput(&["plan", "--json", "--markdown"]), "two formats");
}

#[test]
fn alerts_print_rule_yaml() {
    let y = stdout(&goodput(&[
        "alerts",
        "--goodput",
        "22",
        "--slo-attainment",
        "0.99",
    ]));
    assert!(
        y.contains("groups:\n  - name: goodput-slo-chat\n    rules:\n"),
        "{y}"
    );
    for name in [
        "LlmSloBurnRateFast",
        "LlmSloBurnRateMedium",
        "LlmSloBurnRateSlow",
        "LlmQueueDepthHigh",
    ] {
        assert!(y.contains(&format!("- alert: {name}\n")), "{name}");
    }
    assert!(y.contains("[1h]") && y.contains("[5m]") && y.contains("[3d]") && y.contains("[6h]"));
    assert!(y.contains("(vllm:num_requests_waiting) > 6"), "{y}");
    assert!(y.contains("severity: page") && y.contains("severity: ticket"));
    // Without --goodput the threshold comes from the simulated goodput.
    let mut args = vec!["alerts"];
    args.extend(QUICK);
    assert!(stdout(&goodput(&args)).contains("vllm:num_requests_waiting"));
    failure(&goodput(&["alerts", "--goodput", "-3"]), "negative goodput");
    // Capacity and alerts take --goodput alike, in the same words.
    for cmd in ["alerts", "capacity"] {
        let e = failure(&goodput(&[cmd, "--goodput", "1e308"]), "huge goodput");
        assert!(
            e.contains("--goodput: must be a number of requests/s in 0..=1000000000, got 1e308"),
            "{cmd}: {e}"
        );
    }
    // No load meets the SLO: no alert thresholds are made up.
    let e = failure(&goodput(&["alerts", "--goodput", "0"]), "zero goodput");
    assert!(
        e.contains("goodput is 0 req/s: no replica meets the SLO"),
        "{e}"
    );
}

#[test]
fn simulate_closed_loop_cap_and_marginal_mode() {
    let quick = ["--num-requests", "600", "--warmup-requests", "50"];
    let mut args = vec!["simulate", "--arrival", "closed", "--concurrency", "32"];
    args.extend(quick);
    let text = stdout(&goodput(&args));
    assert!(
        text.starts_with("closed loop, 32 clients, think time 0 s (--request-rate ignored)"),
        "{text}"
    );
    assert!(text.contains(" req/s completed, mean running "), "{text}");
    args.push("--json");
    let v = json(&goodput(&args));
    assert_eq!(v["request_rate_rps"], Value::Null);
    assert_eq!(v["clients"], 32);
    let running = v["mean_running"].as_f64().expect("number");
    assert!(running > 26.0 && running <= 32.0, "{running}");
    let done = v["completed_rps"].as_f64().expect("number");
    assert!(done > 5.0, "{done}");
    // The rate is ignored: the same run at any rate.
    args.extend(["--request-rate", "3"]);
    let mut w = json(&goodput(&args));
    w["request_rate_rps"] = Value::Null;
    assert_eq!(v, w);
    // Think time lowers the achieved rate.
    args.extend(["--think-time", "2"]);
    let t = json(&goodput(&args));
    assert_eq!(t["think_s"], 2.0);
    assert!(t["completed_rps"].as_f64().expect("number") < done);

    // An open-loop cap: overload is held at the client, not in the server queue.
    let mut capped = vec![
        "simulate",
        "--request-rate",
        "40",
        "--max-concurrency",
        "16",
    ];
    capped.extend(quick);
    assert!(stdout(&goodput(&capped)).starts_with("rate 40 req/s, at most 16 in flight"));
    capped.push("--json");
    let c = json(&goodput(&capped));
    assert_eq!(c["peak_queue_len"], 0);
    assert_eq!(c["max_concurrency"], 16);

    // Marginal attainment is never below joint attainment on the same run.
    let mut joint = vec![
        "simulate",
        "--request-rate",
        "26",
        "--tpot-slo",
        "0.014",
        "--json",
    ];
    joint.extend(quick);
    let j = json(&goodput(&joint));
    let mut marginal = joint.clone();
    marginal.extend(["--slo-mode", "marginal"]);
    let m = json(&goodput(&marginal));
    assert_eq!(m["slo_mode"], "marginal");
    assert!(j.get("slo_mode").is_none());
    assert!(
        m["attainment"].as_f64() > j["attainment"].as_f64(),
        "{m} vs {j}"
    );
    marginal.retain(|a| *a != "--json");
    assert!(stdout(&goodput(&marginal)).contains("(marginal: the worst objective's share"));

    for (line, needle) in [
        (
            "simulate --arrival closed",
            "--arrival closed: needs --concurrency",
        ),
        (
            "simulate --concurrency 8",
            "--concurrency: only with --arrival closed",
        ),
        (
            "simulate --max-concurrency 0",
            "--max-concurrency: traffic.max_concurrency",
        ),
        (
            "simulate --slo-mode p99",
            "--slo-mode: expected joint|marginal",
        ),
    ] {
        let args: Vec<&str> = line.split(' ').collect();
        let err = failure(&goodput(&args), line);
        assert!(err.contains(needle), "{line}: {err}");
    }
}

#[test]
fn search_ignores_the_closed_loop_and_the_cap() {
    let mut base = vec!["search", "--json", "--threads", "1"];
    base.extend(QUICK);
    let open = json(&goodput(&base));
    let mut closed = base.clone();
    closed.extend([
        "--arrival",
        "closed",
        "--concurrency",
        "4",
        "--max-concurrency",
        "2",
    ]);
    assert_eq!(json(&goodput(&closed)), open);
}

/// The report's note on the settings it planned at.
fn planned_note(report: &serde_json::Value) -> String {
    report["warnings"]
        .as_array()
        .and_then(|w| w.iter().find(|w| w["id"] == "planned_at_best"))
        .and_then(|w| w["message"].as_str())
        .expect("a note on the planned settings")
        .to_string()
}

#[test]
fn plan_at_best_plans_at_the_sweeps_best_cell() {
    let file = TempFile::new("at-best.json", "");
    let plan = serde_json::json!({
        "engine": {"max_num_seqs": 16, "max_num_batched_tokens": 512},
        "run": {
            "num_requests": 500, "warmup_requests": 50, "replications": 3,
            "sweep_max_num_seqs": [16, 128], "sweep_batched_tokens": [512, 0],
            "plan_at_best": true
        }
    });
    std::fs::write(file.path(), plan.to_string()).expect("write plan");
    let v = json(&goodput(&["plan", "--plan", file.path(), "--json"]));
    let best = v["sweep"]["best"].as_u64().expect("best") as usize;
    let cell = &v["sweep"]["cells"][best]["knobs"];
    // The numbers are the best cell's, not the plan's 16 sequences.
    assert_eq!(v["search"]["knobs"], *cell, "{v}");
    assert_eq!(cell["max_num_seqs"], 128);
    let note = planned_note(&v);
    assert!(
        note.starts_with("Planned at the sweep's best: 128 sequences"),
        "{note}"
    );
    // The same goodput as a search at those settings: one path for the page and the CLI.
    let seqs = cell["max_num_seqs"].to_string();
    let budget = cell["max_num_batched_tokens"].to_string();
    let mut args = vec![
        "search",
        "--max-num-seqs",
        &seqs,
        "--max-num-batched-tokens",
        &budget,
        "--json",
    ];
    args.extend(QUICK);
    let chunked = cell["chunked_prefill"].as_bool() == Some(true);
    if !chunked {
        args.push("--no-chunked-prefill");
    }
    let s = json(&goodput(&args));
    assert_eq!(s["goodput_rps"], v["search"]["goodput_rps"], "{s}");
    // The flag sets the field; without a sweep the report says the plan's settings stand.
    let mut args = vec!["plan", "--plan-at-best", "--no-sweep", "--json"];
    args.extend(QUICK);
    let v = json(&goodput(&args));
    let note = planned_note(&v);
    assert!(note.contains("no knob sweep ran"), "{note}");
}

/// Long commands draw a progress line on stderr for a terminal (here: forced on), wipe it
/// when done, and leave stdout as it is; a script's stderr (a pipe) stays empty.
#[test]
fn long_commands_show_progress_on_stderr_only_when_asked() {
    let cases: [(&[&str], &str); 3] = [
        (
            &["search", "--num-requests", "400", "--replications", "2"],
            "goodput search: ",
        ),
        (
            &["sweep", "--num-requests", "400", "--replications", "2"],
            "knob sweep: ",
        ),
        (
            &[
                "shootout",
                "--num-requests",
                "300",
                "--replications",
                "2",
                "--gpus",
                "h100-sxm",
                "--tp",
                "1,2",
            ],
            "shootout: ",
        ),
    ];
    for (args, label) in cases {
        let drawn = goodput_env(args, &[("GOODPUT_PROGRESS", "1")]);
        let err = String::from_utf8_lossy(&drawn.stderr).to_string();
        assert!(err.starts_with(&format!("\r{label}")), "{args:?}: {err:?}");
        assert!(
            err.contains(" simulations (") && err.ends_with("\r\x1b[K"),
            "{err:?}"
        );
        let piped = goodput(args);
        assert!(piped.stderr.is_empty(), "{args:?}: {:?}", piped.stderr);
        assert_eq!(stdout(&drawn), stdout(&piped), "{args:?}");
    }
}

/// A plan file may leave sections out, but a key no field reads is a typo, not a default.
#[test]
fn a_plan_file_with_a_misspelt_field_is_refused_by_name() {
    let typo = TempFile::new("typo.json", r#"{"engine": {"max_num_seq": 1}}"#);
    let e = failure(
        &goodput(&["plan", "--plan", typo.path(), "--no-sweep"]),
        "a typo",
    );
    assert!(e.contains("unknown field \"engine.max_num_seq\""), "{e}");
    let sparse = TempFile::new("sparse.json", r#"{"engine": {"max_num_seqs": 96}}"#);
    let v = json(&goodput(&["link", "--plan", sparse.path(), "--json"]));
    let url = v["url"].as_str().expect("url");
    let plan: goodput_core::Plan =
        serde_json::from_str(&stdout(&goodput(&["decode", url]))).expect("plan");
    assert_eq!(
        plan.engine.max_num_seqs, 96,
        "a section left out takes its defaults"
    );
}

#[test]
fn a_target_reads_as_the_percentage_given() {
    // 0.57 × 100 is 56.99999999999999 in floating point: the text says 57%.
    let mut args = vec!["search", "--slo-attainment", "0.57"];
    args.extend(QUICK);
    let text = stdout(&goodput(&args));
    assert!(
        text.lines()
            .next()
            .is_some_and(|l| l.contains(" at 57% attainment")),
        "{text}"
    );
    let csv = TempFile::new("sweep.csv", ARTICLE_SWEEP);
    let text = stdout(&goodput(&[
        "capacity",
        "--sweep",
        csv.path(),
        "--slo-attainment",
        "0.57",
    ]));
    assert!(text.contains("measured sweep at 57% attainment"), "{text}");
    assert!(!text.contains("99999"), "{text}");
}

/// Interactive chat, 70% of the mix (TTFT 500 ms, TPOT 25 ms), the class beside which
/// the class tests put their second.
const CHAT: &str = "chat:share=0.7,ttft=0.5,tpot=0.025";

/// `goodput` run with `args`, then chat and `other` as the plan's two classes, as JSON.
fn with_chat(args: &[&str], other: &str) -> Value {
    let mut line = args.to_vec();
    line.extend(["--class", CHAT, "--class", other]);
    json(&goodput(&line))
}

/// Why `goodput plan` refuses chat (70%) beside `other`, in its one line.
fn refused_beside_chat(other: &str) -> String {
    failure(
        &goodput(&["plan", "--class", "chat:share=0.7", "--class", other]),
        other,
    )
}

/// A plan's goodput per replica [req/s], from its JSON.
fn goodput_rps(v: &Value) -> f64 {
    v["goodput"]["goodput_rps"].as_f64().expect("goodput")
}

/// `plan --json --no-sweep` on quick runs.
const QUICK_PLAN: [&str; 9] = [
    "plan",
    "--json",
    "--no-sweep",
    QUICK[0],
    QUICK[1],
    QUICK[2],
    QUICK[3],
    QUICK[4],
    QUICK[5],
];

/// A class replaying its own trace (`replay=FILE`): its requests arrive in the trace's
/// pattern at its share of the rate, with the trace's lengths. The same rows in bursts
/// give a lower goodput than evenly spaced; the report names the trace; a link carries
/// its rows; a file that cannot be read is refused in words.
#[test]
fn a_class_replays_its_own_trace() {
    let dir = TempDir::new("class-trace");
    // 60 requests of 2,000-token prompts and 300-token replies (Azure's columns): in
    // bursts of 20 at one instant, 20 s apart; or one a second.
    let azure = |at: &dyn Fn(u32) -> f64| {
        let mut s = String::from("TIMESTAMP,ContextTokens,GeneratedTokens\n");
        for i in 0..60 {
            let t = at(i);
            s.push_str(&format!(
                "2023-11-16 18:{:02}:{:02}.0000000,2000,300\n",
                (t / 60.0) as u32,
                (t % 60.0) as u32
            ));
        }
        s
    };
    let bursts = dir.file("bursts.csv", &azure(&|i| f64::from(i / 20) * 20.0));
    let even = dir.file("even.csv", &azure(&|i| f64::from(i)));
    let plan_with = |file: &str| {
        let batch = format!("batch:share=0.3,ttft=2,tpot=0.05,priority=1,replay={file}");
        with_chat(&QUICK_PLAN, &batch)
    };
    let (b, e) = (plan_with(&bursts), plan_with(&even));
    let (gb, ge) = (goodput_rps(&b), goodput_rps(&e));
    assert!(gb < 0.9 * ge, "{gb} in bursts against {ge} even");
    let words = b["assumptions"].to_string();
    assert!(
        words.contains(&format!(
            "replaying its own trace {bursts} (60 requests) at its share of the rate"
        )),
        "{words}"
    );
    // The link holds the class's rows: decoded, the plan replays the same requests.
    let url = stdout(&goodput(&[
        "link",
        "--class",
        "chat:share=0.7",
        "--class",
        &format!("batch:share=0.3,replay={bursts}"),
    ]));
    let plan: goodput_core::Plan =
        serde_json::from_str(&stdout(&goodput(&["decode", url.trim()]))).expect("a plan");
    let r = plan.classes[1].replay.as_ref().expect("the class's trace");
    assert_eq!(r.rows.len(), 60);
    assert_eq!((r.rows[59].arrival_s - r.rows[0].arrival_s).round(), 40.0);
    let e = refused_beside_chat("batch:share=0.3,replay=missing.csv");
    assert!(
        e.contains("--class 'batch:share=0.3,replay=missing.csv': class 'batch': replay: cannot read 'missing.csv'"),
        "{e}"
    );
}

/// A class in multi-turn sessions of its own (an agent over a document): its turns
/// resend the history, which the prefix cache serves; the report states the structure;
/// a cached prefix beside it is refused.
#[test]
fn a_class_in_sessions_of_its_own() {
    let agent = "agent:share=0.3,ttft=2,tpot=0.05,priority=1,sessions=16,turns=5,session-document-tokens=3000";
    let sim = |agent: &str| {
        let run = [
            "simulate",
            "--json",
            "--request-rate",
            "8",
            "--num-requests",
            "1000",
            "--warmup-requests",
            "100",
        ];
        with_chat(&run, agent)
    };
    let hit = |v: &Value| v["prefix_hit_rate"].as_f64().expect("a hit rate");
    let sessions = sim(agent);
    assert!(hit(&sessions) > 0.3, "{}", hit(&sessions));
    let alone = sim("agent:share=0.3,ttft=2,tpot=0.05,priority=1,input-len-median=3000");
    assert_eq!(hit(&alone), 0.0);
    let v = with_chat(&QUICK_PLAN, agent);
    let words = v["assumptions"].to_string();
    assert!(
        words.contains("its own prefix caching of 16 sessions at once of 5 turns after a 3,000-token document, interleaved, replies cached"),
        "{words}"
    );
    assert_eq!(v["dedicated"]["pools"].as_array().map(Vec::len), Some(2));
    let e =
        refused_beside_chat("agent:share=0.3,sessions=16,prefix-hit-rate=0.5,prefix-tokens=100");
    assert!(
        e.contains("class 'agent': its cache hits follow from its prefix structure"),
        "{e}"
    );
}

/// `--class`, as a user types it: `plan --json` names the binding class and reports each
/// class; `simulate` gives each class's line; `alerts` a group per class; bad classes
/// are refused in one line that names the flag and the problem.
#[test]
fn traffic_classes_on_the_command_line() {
    let classes = [
        "--class",
        "chat:share=0.7,ttft=0.5,tpot=0.025,priority=0",
        "--class",
        "batch:share=0.3,e2e=30,priority=1,input-len-median=3000",
    ];
    let mut args = vec!["plan", "--json", "--no-sweep"];
    args.extend(QUICK);
    args.extend(classes);
    let v = json(&goodput(&args));
    assert_eq!(v["binding_class"], "chat");
    let cs = v["classes"].as_array().expect("classes");
    assert_eq!(cs.len(), 2);
    assert_eq!(cs[1]["name"], "batch");
    assert_eq!(cs[1]["priority"], 1);
    assert!(
        cs[0]["at_planned_load"]["attainment"]
            .as_f64()
            .expect("a number")
            >= 0.9
    );
    assert!(
        cs[1]["cost_per_compliant_request_usd"]
            .as_f64()
            .expect("a cost")
            > 0.0
    );
    assert!(v["dedicated"]["gpus_total"].as_u64().expect("pools") > 0);

    // Batch with a tight deadline behind a loose chat: batch binds.
    let mut tight = vec!["plan", "--json", "--no-sweep"];
    tight.extend(QUICK);
    tight.extend([
        "--class",
        "chat:share=0.7,ttft=2,priority=0",
        "--class",
        "batch:share=0.3,e2e=8,priority=1,input-len-median=3000",
    ]);
    assert_eq!(json(&goodput(&tight))["binding_class"], "batch");

    let mut sim = vec!["simulate", "--request-rate", "8"];
    sim.extend(QUICK);
    sim.extend(classes);
    let text = stdout(&goodput(&sim));
    assert!(text.contains("\nchat  "), "{text}");
    assert!(text.contains("\nbatch "), "{text}");

    let mut alerts = vec!["alerts"];
    alerts.extend(classes);
    let yaml = stdout(&goodput(&alerts));
    assert!(yaml.contains("name: goodput-slo-chat") && yaml.contains("name: goodput-slo-batch"));

    for (bad, words) in [
        (
            "chat:share=0.7,ttfx=1",
            "--class 'chat:share=0.7,ttfx=1': class 'chat': unknown key 'ttfx'",
        ),
        (
            "chat:share=0.7,ttft=0",
            "slo.ttft_s: must be a number in (0, 3600] s, got 0",
        ),
    ] {
        let e = failure(
            &goodput(&["plan", "--class", bad, "--class", "b:share=0.3"]),
            bad,
        );
        assert!(e.contains(words), "{e}");
    }
    let e = failure(
        &goodput(&["plan", "--class", "a:share=0.5", "--class", "b:share=0.2"]),
        "shares",
    );
    assert!(
        e.contains("the classes' shares add up to 0.7 (a 0.5, b 0.2); they must add up to 1"),
        "{e}"
    );

    // Classes with their own peaks: the plan's peak is their sum and each share its
    // peak over it, the same plan to the bit as the shares and the sum typed.
    let mut own = vec!["plan", "--json", "--no-sweep"];
    own.extend(QUICK);
    own.extend([
        "--class",
        "chat:peak=14,ttft=0.5,tpot=0.025,priority=0",
        "--class",
        "batch:peak=6,e2e=30,priority=1,input-len-median=3000",
    ]);
    let mut shares = vec!["plan", "--json", "--no-sweep", "--peak-rate", "20"];
    shares.extend(QUICK);
    shares.extend([
        "--class",
        "chat:share=0.7,ttft=0.5,tpot=0.025,priority=0",
        "--class",
        "batch:share=0.3,e2e=30,priority=1,input-len-median=3000",
    ]);
    let (a, b) = (json(&goodput(&own)), json(&goodput(&shares)));
    assert_eq!(a["capacity"]["peak_rate_rps"], 20.0);
    for key in [
        "capacity",
        "assumptions",
        "classes",
        "goodput",
        "binding_class",
    ] {
        assert_eq!(a[key], b[key], "{key}");
    }
    // A class arriving by its own bursty process lowers the mix's goodput against the same
    // class drawn from the Poisson stream, and the report says how it arrives.
    let poisson = with_chat(&QUICK_PLAN, "batch:share=0.3,ttft=2,tpot=0.05,priority=1");
    let bursty = with_chat(
        &QUICK_PLAN,
        "batch:share=0.3,ttft=2,tpot=0.05,priority=1,arrival=gamma,cv=4",
    );
    let g = goodput_rps;
    assert!(
        g(&bursty) < 0.95 * g(&poisson),
        "{} against {}",
        g(&bursty),
        g(&poisson)
    );
    let said = bursty["assumptions"].to_string();
    assert!(
        said.contains("Traffic class batch: 30% of requests, priority 1, its own bursty (gamma) arrivals, CV 4 at its share of the rate;"),
        "{said}"
    );
    // An agent class whose long prefix is cached: each hit skips it, the prefix is held
    // once in KV memory, and the mix's goodput rises against the same class uncached.
    let agent = |extra: &str| {
        let mut line = vec!["plan", "--json", "--no-sweep"];
        line.extend(QUICK);
        let agent = format!("agent:share=0.3,input-len-median=4000,input-len-max=16000{extra}");
        line.extend(["--class", "chat:share=0.7", "--class", agent.as_str()]);
        json(&goodput(&line))
    };
    let (cold, cached) = (agent(""), agent(",prefix-tokens=3000,prefix-hit-rate=0.9"));
    // The plan's own cached prefix, which chat keeps, mixes in too.
    let mut both = vec!["plan", "--json", "--no-sweep", "--prefix-tokens", "500"];
    both.extend(["--prefix-hit-rate", "0.9"]);
    both.extend(QUICK);
    both.extend([
        "--class",
        "chat:share=0.7",
        "--class",
        "agent:share=0.3,input-len-median=4000,input-len-max=16000,prefix-tokens=3000,prefix-hit-rate=0.9",
    ]);
    let both = json(&goodput(&both));
    assert!(
        g(&cached) > 1.3 * g(&cold),
        "{} against {}",
        g(&cached),
        g(&cold)
    );
    assert!(g(&both) > g(&cached), "{} against {}", g(&both), g(&cached));
    assert!(
        cached["assumptions"].to_string().contains(
            "Traffic class agent: 30% of requests, priority 0, its own prefix: a 3,000-token prefix cached for 90% of requests;"
        ),
        "{}",
        cached["assumptions"]
    );
    for (args, words) in [
        (
            vec!["--class", "a:arrival=closed", "--class", "b:share=0.3"],
            "class 'a': arrival must be poisson, gamma or constant, got 'closed'",
        ),
        (
            vec!["--class", "a:peak=14", "--class", "b:share=0.3"],
            "--class: a give a peak and b a share: give every class a peak (req/s), or every class a share",
        ),
        (
            vec!["--class", "a:peak=14,share=0.5", "--class", "b:peak=6"],
            "class 'a': give a share or a peak, not both",
        ),
        (
            vec!["--class", "a:peak=0", "--class", "b:peak=6"],
            "class 'a': peak must be",
        ),
        (
            vec!["--peak-rate", "30", "--class", "a:peak=14", "--class", "b:peak=6"],
            "--class: the classes' own peaks add up to 20 req/s, but --peak-rate says 30: give one or the other",
        ),
    ] {
        let mut line = vec!["plan"];
        line.extend(args);
        let e = failure(&goodput(&line), words);
        assert!(e.contains(words), "{e}");
    }
}
