//! `goodput calibrate`, run as a user would: result files in, a calibrated plan out.

mod common;

use common::{failure, goodput, json, stdout, TempDir};
use goodput_core::calibrate::{synthetic_points, Constants};
use goodput_core::measure::write;
use goodput_core::Plan;

const TRUTH: Constants = Constants {
    bandwidth_efficiency: 0.8,
    compute_efficiency: 0.7,
    step_overhead_s: 3e-3,
    seq_overhead_s: 0.0,
    frontend_s: 0.0,
    prefill_overhead_s: 0.0,
    kv_read_efficiency: 1.0,
};

/// Four `vllm bench serve` files of a server that runs at the TRUTH constants.
fn vllm_files(dir: &TempDir) -> Vec<String> {
    let points = synthetic_points(
        &Plan::default(),
        &TRUTH,
        &[3.0, 8.0, 12.0, 15.0],
        600,
        0.02,
        true,
        0xBEEF,
    )
    .expect("synthetic points");
    points
        .iter()
        .map(|p| dir.file(&p.source, &write::vllm_json(p)))
        .collect()
}

/// `goodput calibrate --json --out plan.json` on [`vllm_files`]: the report, the files and
/// the plan's path.
fn calibrate_to_plan(dir: &TempDir) -> (serde_json::Value, Vec<String>, String) {
    let files = vllm_files(dir);
    let out = dir.path_of("plan.json");
    let mut args = vec!["calibrate", "--json", "--out", out.as_str()];
    args.extend(files.iter().map(String::as_str));
    (json(&goodput(&args)), files, out)
}

#[test]
fn calibrates_writes_a_plan_that_every_command_reads() {
    let dir = TempDir::new("calibrate");
    let (report, files, out_path) = calibrate_to_plan(&dir);
    let out = out_path.as_str();
    let cal = &report["calibration"];
    let held = cal["error"]["held_out"]["overall"]
        .as_f64()
        .expect("held-out error");
    let datasheet = cal["error"]["uncalibrated"]["overall"].as_f64().unwrap();
    assert!(
        held < 0.15 && datasheet > 0.3,
        "held {held}, datasheet {datasheet}"
    );
    assert_eq!(report["points"].as_array().unwrap().len(), 4);
    assert_eq!(cal["source"]["tool"], "vllm bench serve");
    assert!(cal["bandwidth_efficiency"]["sd"].as_f64().unwrap() > 0.0);

    // The written plan carries the fit; simulate at a rate that was not measured.
    let sim = json(&goodput(&[
        "simulate",
        "--plan",
        out,
        "--request-rate",
        "10",
        "--num-requests",
        "400",
        "--warmup-requests",
        "0",
        "--json",
    ]));
    let calibrated_tpot = sim["tpot_s"]["mean"].as_f64().unwrap();
    let plain = json(&goodput(&[
        "simulate",
        "--request-rate",
        "10",
        "--num-requests",
        "400",
        "--warmup-requests",
        "0",
        "--json",
    ]));
    let datasheet_tpot = plain["tpot_s"]["mean"].as_f64().unwrap();
    assert!(
        calibrated_tpot > datasheet_tpot * 1.3,
        "calibrated {calibrated_tpot} vs datasheet {datasheet_tpot}"
    );

    // The link carries it too, and the plan report names it.
    let link = stdout(&goodput(&["link", "--plan", out]));
    let decoded = json(&goodput(&["decode", link.trim(), "--json"]));
    assert!(decoded["calibration"]["enabled"].as_bool().unwrap());
    let text = stdout(&goodput(&["calibrate", &files[0], &files[1], &files[2]]));
    assert!(text.contains("held out (LOO)"), "{text}");
    assert!(text.starts_with("Calibrated from 3 vllm bench serve measurements (article-8b, vllm): predictions missed measured latency by"), "{text}");
}

#[test]
fn bad_files_get_one_line_naming_the_file() {
    let dir = TempDir::new("calibrate-bad");
    let not_json = dir.file("notes.txt", "hello, this is not a benchmark\n");
    let e = failure(&goodput(&["calibrate", &not_json]), "not a result");
    assert!(e.contains("notes.txt"), "{e}");
    let e = failure(&goodput(&["calibrate"]), "no files");
    assert!(e.contains("at least one result file"), "{e}");
    let e = failure(&goodput(&["calibrate", "no-such-file.json"]), "missing");
    assert!(e.contains("no-such-file.json"), "{e}");
    let other = dir.file("package.json", r#"{"name":"x","version":"1.0.0"}"#);
    let e = failure(&goodput(&["calibrate", &other]), "another tool's JSON");
    assert!(e.contains("package.json"), "{e}");
}

#[test]
fn terms_choose_the_constants_a_fit_frees() {
    let dir = TempDir::new("calibrate-terms");
    let files = vllm_files(&dir);
    let fit = |terms: &str| {
        let mut args = vec!["calibrate", "--json", "--terms", terms];
        args.extend(files.iter().map(String::as_str));
        json(&goodput(&args))["calibration"].clone()
    };
    // The roofline frees none of the optional constants: each keeps the plan's value,
    // stored as absent.
    let roofline = fit("roofline");
    for key in [
        "frontend_s",
        "prefill_overhead_s",
        "kv_read_efficiency",
        "seq_overhead_s",
    ] {
        assert!(roofline[key].is_null(), "{key}: {}", roofline[key]);
    }
    // A list frees what it names, by the plan's flags, and only that.
    let two = fit("frontend-time, kv-read-efficiency");
    assert!(two["frontend_s"]["value"].is_number(), "{two}");
    assert!(two["kv_read_efficiency"]["value"].is_number(), "{two}");
    assert!(two["prefill_overhead_s"].is_null() && two["seq_overhead_s"].is_null());
    // Without the flag, the default set.
    let mut args = vec!["calibrate", "--json"];
    args.extend(files.iter().map(String::as_str));
    let default = json(&goodput(&args))["calibration"].clone();
    assert_eq!(default, fit("default"));
    assert!(default["prefill_overhead_s"]["value"].is_number());
    // A name it does not know is refused, with the names it knows.
    let mut args = vec!["calibrate", "--terms", "frontend,kv"];
    args.extend(files.iter().map(String::as_str));
    let e = failure(&goodput(&args), "unknown term");
    assert!(
        e.contains("'frontend' is not a constant a calibration fits")
            && e.contains("frontend-time,seq-overhead,prefill-overhead,kv-read-efficiency"),
        "{e}"
    );
}

#[test]
fn a_comparison_names_the_rows_a_calibration_carries_to_another_vendor() {
    let dir = TempDir::new("calibrate-vendor");
    let (_, _, out_path) = calibrate_to_plan(&dir);
    let out = out_path.as_str();
    let compare = |gpus: &str| {
        json(&goodput(&[
            "shootout", "--plan", out, "--gpus", gpus, "--tp", "1", "--json",
        ]))
    };
    // Fitted on an H100: an MI300X row carries NVIDIA's software to AMD's.
    let across = compare("h100-sxm,mi300x");
    let caution = across["caution"].as_str().expect("a caution");
    assert!(
        caution.starts_with("The rows on MI300X carry a calibration fitted on NVIDIA H100"),
        "{caution}"
    );
    // An H200 row carries it within the vendor: nothing to add.
    assert!(compare("h100-sxm,h200")["caution"].is_null());
}
