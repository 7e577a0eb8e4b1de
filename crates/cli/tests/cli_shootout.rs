//! `goodput shootout`, run as a user would run it.

mod common;

use common::{failure, goodput, json, stdout, TempFile};

/// A quick plan file: Llama 3.1 8B, short runs, few replications, a 40 req/s peak.
fn quick_plan_file() -> TempFile {
    let mut p = goodput_core::Plan::default();
    goodput_core::presets::model("llama-3.1-8b")
        .expect("8b")
        .apply(&mut p);
    p.name = "shootout test".into();
    p.traffic.peak_rate_rps = 40.0;
    p.run.num_requests = 300;
    p.run.warmup_requests = 30;
    p.run.replications = 3;
    TempFile::new("shootout.json", &serde_json::to_string(&p).expect("json"))
}

#[test]
fn every_row_equals_plan_on_that_gpu_and_layout() {
    let path = quick_plan_file();
    let file = path.path();
    let v = json(&goodput(&[
        "shootout", "--plan", file, "--gpus", "h200,l4", "--tp", "1,2", "--json",
    ]));
    let rows = v["rows"].as_array().expect("rows");
    // TP 1 and 2 on one node, and TP 2 × PP 2 (two nodes at most, the default).
    assert_eq!(rows.len(), 6);
    assert_eq!(rows.iter().filter(|r| r["pp"] == 2).count(), 2, "{v}");
    let mut compared = 0;
    for row in rows {
        let gpu = row["gpu"].as_str().expect("gpu");
        let tp = row["tp"].as_u64().expect("tp").to_string();
        // A row without stages leaves `pp` out.
        let pp = row["pp"].as_u64().unwrap_or(1).to_string();
        if !row["fits"].as_bool().expect("fits") {
            continue;
        }
        let plan = json(&goodput(&[
            "plan",
            "--plan",
            file,
            "--gpu",
            gpu,
            "--tp",
            &tp,
            "--pp",
            &pp,
            "--no-sweep",
            "--json",
        ]));
        let cap = &plan["capacity"];
        let what = format!("{gpu} TP{tp} PP{pp}");
        assert_eq!(row["goodput_rps"], plan["goodput"]["goodput_rps"], "{what}");
        if cap.is_null() {
            // No rate meets the SLO: the row says why, in the plan's own words (its
            // search's reason, which names what no load can fix).
            assert!(row["cost_per_compliant_request_usd"].is_null(), "{what}");
            let why = plan["warnings"]
                .as_array()
                .and_then(|w| w.iter().find(|w| w["id"] == "search_not_converged"))
                .map(|w| w["message"].clone());
            assert_eq!(Some(row["reason"].clone()), why, "{what}");
            assert!(
                row["reason"]
                    .as_str()
                    .unwrap()
                    .starts_with("one request alone takes"),
                "{what}: {}",
                row["reason"]
            );
            compared += 1;
            continue;
        }
        for key in [
            "replicas_total",
            "gpus_total",
            "cost_per_hour_usd",
            "cost_per_month_usd",
            "cost_per_compliant_request_usd",
        ] {
            assert_eq!(row[key], cap[key], "{what}: {key}");
        }
        let detail = &plan["planned_load"]["detail"];
        assert!(detail["ttft_p99_s"].is_number(), "{what}: {plan}");
        assert_eq!(row["ttft_p99_s"], detail["ttft_p99_s"], "{what}");
        assert_eq!(row["tpot_p99_s"], detail["tpot_p99_s"], "{what}");
        compared += 1;
    }
    assert!(compared >= 5, "{v}");
    // Ranked by cost per compliant request; `best` names the first row.
    let costs: Vec<f64> = rows
        .iter()
        .filter_map(|r| r["cost_per_compliant_request_usd"].as_f64())
        .collect();
    assert!(costs.windows(2).all(|w| w[0] <= w[1]), "{costs:?}");
    assert_eq!(v["best"]["gpu"], rows[0]["gpu"]);
    assert_eq!(v["best"]["tp"], rows[0]["tp"]);
    assert!(v["verdict"]
        .as_str()
        .expect("verdict")
        .starts_with("cheapest option"));
    // The text table marks the winner.
    let text = stdout(&goodput(&[
        "shootout", "--plan", file, "--gpus", "h200", "--tp", "1", "--nodes", "1",
    ]));
    assert!(text.contains("* h200"), "{text}");
    // Its latencies read in one unit down each column (`13.6 ms`, `1,344 ms`), from the
    // same numbers.
    let h200 = rows
        .iter()
        .find(|r| r["gpu"] == "h200" && r["tp"] == 1)
        .expect("h200 TP1 row");
    let row_line = text.lines().find(|l| l.starts_with("* h200")).expect("row");
    for key in ["ttft_p99_s", "tpot_p99_s"] {
        let shown = goodput_core::format::millis(h200[key].as_f64());
        assert!(shown.ends_with(" ms"), "{key} {shown}");
        assert!(
            row_line.contains(&format!(" {shown} ")),
            "{key} {shown}: {row_line}"
        );
    }
}

#[test]
fn a_model_too_big_for_one_gpu_still_compares_and_says_why() {
    // The default plan's H100 cannot hold a 70B model: the shootout still runs, and the
    // H100 TP 1 row says how many GPUs it needs.
    let v = json(&goodput(&[
        "shootout",
        "--model",
        "llama-3.1-70b",
        "--gpus",
        "h100-sxm",
        "--tp",
        "1",
        "--nodes",
        "1",
        "--json",
        "--num-requests",
        "300",
    ]));
    let row = &v["rows"][0];
    assert_eq!(row["fits"], false);
    assert!(v["best"].is_null());
    let why = row["reason"].as_str().expect("reason");
    assert!(why.contains("needs 2 GPUs per replica"), "{why}");
}

#[test]
fn bad_lists_get_one_clear_line() {
    let err = failure(
        &goodput(&["shootout", "--gpus", "h100,h200"]),
        "unknown gpu",
    );
    assert!(err.contains("--gpus: unknown GPU 'h100'"), "{err}");
    assert!(err.contains("known: h100-sxm, h200"), "{err}");
    let err = failure(&goodput(&["shootout", "--gpus", ","]), "empty list");
    assert!(err.contains("--gpus: no GPU to compare"), "{err}");
    for tp in ["0", "3", "1,3"] {
        let err = failure(&goodput(&["shootout", "--tp", tp]), tp);
        assert!(
            err.contains("--tp: tensor-parallel degree") && err.contains("use 1, 2, 4 or 8"),
            "{err}"
        );
    }
    let err = failure(&goodput(&["shootout", "--tp", "two"]), "not a number");
    assert!(err.contains("--tp: expected degrees"), "{err}");
}

#[test]
fn a_node_count_out_of_range_is_refused_in_words() {
    for nodes in ["0", "5", "two"] {
        let err = failure(&goodput(&["shootout", "--nodes", nodes]), nodes);
        assert!(err.contains("--nodes: "), "{err}");
        assert!(err.contains("1 to 4"), "{err}");
    }
}

#[test]
fn a_model_too_big_for_one_node_is_ranked_on_two() {
    // DeepSeek-V3's 671 GB of FP8 weights need more than one node of H100s: its only
    // options there span two nodes, TP 8 × PP 2, and each row is `goodput plan` of
    // that layout.
    let args = [
        "--model",
        "deepseek-v3",
        "--weight-dtype",
        "fp8",
        "--num-requests",
        "200",
        "--warmup-requests",
        "20",
        "--replications",
        "1",
        "--input-len-median",
        "1000",
        "--output-len-median",
        "200",
    ];
    let mut shootout = vec!["shootout", "--gpus", "h100-sxm,h200", "--tp", "8", "--json"];
    shootout.extend(args);
    let v = json(&goodput(&shootout));
    let rows = v["rows"].as_array().expect("rows");
    // TP 8, TP 8 × PP 2, and, for a mixture of experts, EP 8 and EP 16 on each GPU.
    assert_eq!(rows.len(), 8, "{v}");
    let find = |pp: u64, ep: u64| {
        rows.iter()
            .find(|r| {
                r["gpu"] == "h100-sxm"
                    && r["pp"].as_u64().unwrap_or(1) == pp
                    && r["ep"].as_u64().unwrap_or(1) == ep
            })
            .expect("h100 row")
    };
    let h100 = |pp: u64| find(pp, 1);
    assert_eq!(h100(1)["fits"], false);
    assert!(
        h100(1)["reason"]
            .as_str()
            .unwrap()
            .contains("needs 9 GPUs per replica")
            || h100(1)["reason"]
                .as_str()
                .unwrap()
                .contains("needs 10 GPUs per replica"),
        "{}",
        h100(1)["reason"]
    );
    let two = h100(2);
    assert_eq!(two["fits"], true, "{two}");
    assert!(two["goodput_rps"].as_f64().unwrap() > 0.0, "{two}");
    assert_eq!(two["gpus_total"].as_u64().unwrap() % 16, 0, "{two}");
    let mut plan = vec![
        "plan",
        "--gpu",
        "h100-sxm",
        "--tp",
        "8",
        "--pp",
        "2",
        "--no-sweep",
        "--json",
    ];
    plan.extend(args);
    let p = json(&goodput(&plan));
    assert_eq!(two["goodput_rps"], p["goodput"]["goodput_rps"]);
    for key in [
        "gpus_total",
        "cost_per_month_usd",
        "cost_per_compliant_request_usd",
    ] {
        assert_eq!(two[key], p["capacity"][key], "{key}");
    }
    // Experts over one node of H100s do not fit (each GPU holds the dense 17 GB and an
    // eighth of the experts, 99 GB); over two nodes they do, and that row is `goodput
    // plan --ep 16` too.
    assert_eq!(find(1, 8)["fits"], false, "{}", find(1, 8));
    let ep = find(1, 16);
    assert_eq!(ep["fits"], true, "{ep}");
    let mut plan = vec![
        "plan",
        "--gpu",
        "h100-sxm",
        "--ep",
        "16",
        "--no-sweep",
        "--json",
    ];
    plan.extend(args);
    let p = json(&goodput(&plan));
    assert_eq!(ep["goodput_rps"], p["goodput"]["goodput_rps"]);
    assert_eq!(
        ep["cost_per_month_usd"],
        p["capacity"]["cost_per_month_usd"]
    );
    // On H200 one node holds the weights: a two-node layout that costs more per
    // compliant request says by how much, with the GPUs and goodput behind it and what its
    // communication takes of a decode step; the one-node rows need no such note.
    let h200 = |pp: u64, ep: u64| {
        rows.iter()
            .find(|r| {
                r["gpu"] == "h200"
                    && r["pp"].as_u64().unwrap_or(1) == pp
                    && r["ep"].as_u64().unwrap_or(1) == ep
            })
            .expect("h200 row")
    };
    let (one, pp2, ep16) = (h200(1, 1), h200(2, 1), h200(1, 16));
    assert!(
        one.get("note").is_none() && one.get("comm_share").is_none(),
        "{one}"
    );
    for (row, what) in [
        (pp2, "the sends between stages take "),
        (ep16, "the all-to-alls take "),
    ] {
        let c = |r: &serde_json::Value| r["cost_per_compliant_request_usd"].as_f64().unwrap();
        let share = row["comm_share"].as_f64().expect("a share");
        assert!((0.0..1.0).contains(&share), "{row}");
        if c(row) > c(one) {
            let note = row["note"].as_str().expect("a note");
            let more = (100.0 * (c(row) / c(one) - 1.0)).round();
            assert!(
                note.starts_with(&format!(
                    "{more}% more per compliant request than TP8 on one node: 2× the GPUs for "
                )) && note.contains(what),
                "{note}"
            );
        } else {
            assert!(row.get("note").is_none(), "{row}");
        }
    }
    // The text names the layout and its nodes.
    let mut text = vec!["shootout", "--gpus", "h100-sxm", "--tp", "8"];
    text.extend(args);
    let text = stdout(&goodput(&text));
    assert!(text.contains("TP8 × PP2 (2 nodes)"), "{text}");
    assert!(text.contains("EP16 (2 nodes)"), "{text}");
}
