//! Importers of measured benchmark results: real-format fixtures, a corpus of bad
//! files (each must give one error naming the file and the field, never a panic), the
//! writers' round trips, and a seeded mutation test.

use goodput_core::measure::{
    import_file, import_files, sniff, write, Format, ImportError, LatencyStats, MeasuredPoint,
    MeasuredRequest, MAX_FILE_BYTES, MAX_POINTS, MAX_REQUESTS_PER_POINT,
};
use goodput_core::plan::MeasuredLoad;
use goodput_core::rng::Rng;

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/measure/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-300)
}

fn err(name: &str, bytes: &[u8]) -> ImportError {
    match import_file(name, bytes) {
        Ok(p) => panic!("{name}: expected an error, got {} points", p.len()),
        Err(e) => {
            assert_eq!(e.file.split('#').next(), Some(name), "{e}");
            assert!(!e.to_string().contains('\n'), "one line: {e}");
            e
        }
    }
}

#[test]
fn vllm_rate_point() {
    let bytes = fixture("vllm_llama8b_4rps.json");
    assert_eq!(sniff(&bytes), Some(Format::Vllm));
    let pts = import_file("run-4qps.json", &bytes).expect("imports despite a NaN std");
    assert_eq!(pts.len(), 1);
    let p = &pts[0];
    assert_eq!(p.source, "run-4qps.json");
    assert_eq!(
        p.load,
        MeasuredLoad::Rate {
            rate_rps: 4.0,
            cv: 1.0
        }
    );
    assert_eq!(p.max_concurrency, None);
    assert_eq!((p.completed, p.failed), (500, 0));
    assert!(close(p.achieved_rps, 500.0 / 126.4182));
    assert!(close(p.mean_prompt_tokens, 256380.0 / 500.0));
    assert!(close(p.mean_output_tokens, 127104.0 / 500.0));
    // ms in the file, seconds here.
    assert!(close(p.ttft.mean_s.expect("mean"), 0.04821));
    assert!(close(p.ttft.median_s.expect("median"), 0.04177));
    let pct: Vec<f64> = p.ttft.percentiles.iter().map(|q| q.0).collect();
    assert_eq!(pct, [90.0, 99.0, 99.9]);
    assert!(close(p.ttft.percentile(99.9).expect("p99.9"), 0.1612));
    assert!(close(p.tpot.percentile(99.0).expect("p99"), 0.0214));
    assert!(close(p.e2e.percentile(50.0).expect("median"), 3.7012));
    assert_eq!(p.model.as_deref(), Some("meta-llama/Llama-3.1-8B-Instruct"));
    assert_eq!(p.engine.as_deref(), Some("vllm"));
    assert!(p.requests.is_empty());
    let s = p.summary();
    assert_eq!(s.ttft_p99_s, Some(p.ttft.percentile(99.0).expect("p99")));
}

/// `vllm bench serve`'s speculative-decoding keys, added to a result file as the tool
/// writes them when the server drafted: the rate and length it prints, and their counters.
fn with_spec(bytes: &[u8], keys: &str) -> Vec<u8> {
    let text = String::from_utf8(bytes.to_vec()).expect("utf-8");
    let at = text.rfind('}').expect("an object");
    format!("{}, {keys}}}", text[..at].trim_end()).into_bytes()
}

#[test]
fn vllm_speculative_decoding_counters() {
    let base = fixture("vllm_llama8b_4rps.json");
    assert_eq!(import_file("plain.json", &base).expect("ok")[0].spec, None);
    // 3 tokens a draft, 190,000 of 360,000 accepted: 2.58 tokens a step.
    let keys = r#""spec_decode_acceptance_rate": 52.77777777777778, "spec_decode_acceptance_length": 2.5833333333333335, "spec_decode_num_drafts": 120000, "spec_decode_draft_tokens": 360000, "spec_decode_accepted_tokens": 190000, "spec_decode_per_position_acceptance_rates": [0.75, 0.5, 0.3333333333333333]"#;
    let p = &import_file("mtp.json", &with_spec(&base, keys)).expect("ok")[0];
    let s = p.spec.expect("the counters");
    assert_eq!(
        (s.drafts, s.draft_tokens, s.accepted_tokens),
        (120_000, 360_000, 190_000)
    );
    assert_eq!(s.draft_len(), 3);
    assert!(close(s.tokens_per_step(), 2.5833333333333335));
    assert!(close(s.acceptance_rate(), 190.0 / 360.0));
    // The simulator's acceptance gains the same tokens a step: 1 + a + a² + a³ = 2.583.
    let a = s.acceptance();
    assert!(
        (1.0 + a + a * a + a * a * a - s.tokens_per_step()).abs() < 1e-9,
        "{a}"
    );
    // The worked example of docs/calibration.md, "Runs that drafted".
    assert_eq!(
        goodput_core::calibrate::spec_measured_words(&s),
        "3 draft tokens a step, 2.58 tokens gained a step (53% of drafted tokens accepted; \
         0.71 a token in order)"
    );
    // Counters of a server that did not draft: the run is known to have run without.
    let none = r#""spec_decode_num_drafts": 0, "spec_decode_draft_tokens": 0, "spec_decode_accepted_tokens": 0"#;
    let p = &import_file("off.json", &with_spec(&base, none)).expect("ok")[0];
    let s = p.spec.expect("measured");
    assert_eq!(
        (s.draft_len(), s.tokens_per_step(), s.acceptance()),
        (0, 1.0, 0.0)
    );
    // A draft longer than the simulator runs is simulated at its longest, and the
    // acceptance is the one that gains the measured tokens a step at that length.
    let long = goodput_core::plan::SpecMeasured {
        drafts: 1,
        draft_tokens: u64::from(u32::MAX),
        accepted_tokens: 3,
    };
    assert_eq!(long.draft_len(), goodput_core::plan::MAX_SPEC_DRAFT_TOKENS);
    assert!(long.acceptance().is_finite());
    // Inconsistent counters are named.
    for (keys, field) in [
        (
            r#""spec_decode_num_drafts": 10, "spec_decode_draft_tokens": 30"#,
            "spec_decode_accepted_tokens",
        ),
        (
            r#""spec_decode_num_drafts": 10, "spec_decode_draft_tokens": 5, "spec_decode_accepted_tokens": 1"#,
            "spec_decode_draft_tokens",
        ),
        (
            r#""spec_decode_num_drafts": 10, "spec_decode_draft_tokens": 30, "spec_decode_accepted_tokens": 31"#,
            "spec_decode_accepted_tokens",
        ),
        (
            r#""spec_decode_num_drafts": 1.5, "spec_decode_draft_tokens": 30, "spec_decode_accepted_tokens": 3"#,
            "spec_decode_num_drafts",
        ),
        (
            r#""spec_decode_num_drafts": 0, "spec_decode_draft_tokens": 30, "spec_decode_accepted_tokens": 3"#,
            "spec_decode_num_drafts",
        ),
    ] {
        let e = err("bad.json", &with_spec(&base, keys));
        assert_eq!(e.field, field, "{e}");
    }
}

#[test]
fn vllm_concurrency_and_detailed() {
    let c = import_file("c16.json", &fixture("vllm_llama8b_c16.json")).expect("ok");
    assert_eq!(c[0].load, MeasuredLoad::Concurrency { concurrency: 16 });
    assert_eq!(c[0].failed, 2);
    let d = import_file("d.json", &fixture("vllm_llama8b_2rps_detailed.json")).expect("ok");
    let p = &d[0];
    // burstiness 0.5: gamma gaps with CV 1/sqrt(0.5).
    assert!(
        matches!(p.load, MeasuredLoad::Rate { rate_rps, cv } if rate_rps == 2.0 && close(cv, 2f64.sqrt()))
    );
    // 22 requests in the arrays, 2 failed (error text, output length 0): 20 kept.
    assert_eq!(p.requests.len(), 20);
    assert!(p.requests.iter().all(|r| r.output_tokens > 0));
    let mean_in = p
        .requests
        .iter()
        .map(|r| f64::from(r.prompt_tokens))
        .sum::<f64>()
        / 20.0;
    assert!(
        close(mean_in, p.mean_prompt_tokens),
        "{mean_in} vs {}",
        p.mean_prompt_tokens
    );
    // No e2el statistics in the file: computed from `latencies` of the successful ones.
    let e2e = p.e2e.mean_s.expect("from latencies");
    assert!(e2e > 0.5 && e2e < 2.0, "{e2e}");
    assert!(p.e2e.percentile(99.0).expect("p99") >= p.e2e.median_s.expect("p50"));
}

#[test]
fn guidellm_reports() {
    let bytes = fixture("guidellm_sweep3.json");
    assert_eq!(sniff(&bytes), Some(Format::Guidellm));
    let pts = import_file("sweep.json", &bytes).expect("ok");
    assert_eq!(pts.len(), 3);
    assert_eq!(pts[0].source, "sweep.json#1");
    assert_eq!(pts[0].load, MeasuredLoad::Concurrency { concurrency: 1 });
    assert_eq!(
        pts[1].load,
        MeasuredLoad::Rate {
            rate_rps: 2.5,
            cv: 1.0
        }
    );
    assert_eq!(pts[2].load, MeasuredLoad::Concurrency { concurrency: 8 });
    let p = &pts[1];
    assert_eq!((p.completed, p.failed), (150, 1));
    assert!(close(p.achieved_rps, 2.47));
    assert!(close(p.mean_prompt_tokens, 512.3));
    assert!(close(p.ttft.mean_s.expect("ttft"), 0.0552));
    // TPOT is GuideLLM's inter-token latency (not its time_per_output_token_ms).
    assert!(close(p.tpot.mean_s.expect("tpot"), 0.0149));
    assert_eq!(p.tpot, p.itl);
    // request_latency is in seconds already.
    assert!(close(p.e2e.mean_s.expect("e2e"), 0.7604));
    assert_eq!(p.ttft.percentiles.len(), 11);
    assert!(p.ttft.percentile(99.9).is_some());
    assert_eq!(p.requests.len(), 5);
    assert_eq!(p.model.as_deref(), Some("meta-llama/Llama-3.1-8B-Instruct"));
    assert_eq!(p.engine.as_deref(), Some("openai_http"));

    let old = import_file("old.json", &fixture("guidellm_v03_poisson.json")).expect("0.3 layout");
    assert_eq!(
        old[0].load,
        MeasuredLoad::Rate {
            rate_rps: 2.5,
            cv: 1.0
        }
    );
    assert_eq!((old[0].completed, old[0].failed), (150, 1));
    assert!(close(old[0].duration_s, 60.7));
    assert_eq!(old[0].model, p.model);
    assert_eq!(old[0].ttft, p.ttft);
}

#[test]
fn tables() {
    let bytes = fixture("measured_sweep.csv");
    assert_eq!(sniff(&bytes), Some(Format::Table));
    let pts = import_file("sweep.csv", &bytes).expect("ok");
    assert_eq!(pts.len(), 4);
    assert_eq!(pts[3].load, MeasuredLoad::Concurrency { concurrency: 16 });
    assert_eq!(
        pts[2].load,
        MeasuredLoad::Rate {
            rate_rps: 4.0,
            cv: 1.0
        }
    );
    assert_eq!(pts[2].failed, 1);
    assert!(close(pts[2].ttft.median_s.expect("p50"), 0.0472));
    assert!(close(pts[2].e2e.percentile(99.0).expect("p99"), 1.49));
    assert_eq!(
        pts[0].model.as_deref(),
        Some("meta-llama/Llama-3.1-8B-Instruct")
    );
    let tsv = import_file("sweep.tsv", &fixture("measured_sweep.tsv")).expect("tsv");
    assert_eq!(tsv.len(), 2);
    assert!(close(tsv[1].tpot.median_s.expect("p50"), 0.0179));
    assert!(close(tsv[1].achieved_rps, 6.0));
    // Semicolons, comments, an `_s` unit and a rate+concurrency row (capped rate).
    let semi = b"# x\nRequest_Rate;Max_Concurrency;Input_Tokens;Output_Tokens;E2EL_mean_s\n3;8;100;10;0.5\n";
    let p = import_file("semi.csv", semi).expect("semicolons");
    assert_eq!(
        p[0].load,
        MeasuredLoad::Rate {
            rate_rps: 3.0,
            cv: 1.0
        }
    );
    assert_eq!(p[0].max_concurrency, Some(8));
    assert!(close(p[0].e2e.mean_s.expect("mean"), 0.5));
}

#[test]
fn set_of_files_sorted_and_checked() {
    let a = fixture("vllm_llama8b_4rps.json");
    let b = fixture("vllm_llama8b_c16.json");
    let c = fixture("vllm_llama8b_2rps_detailed.json");
    let set =
        import_files(&[("c16.json", &b), ("r4.json", &a), ("r2.json", &c)]).expect("one model");
    let loads: Vec<MeasuredLoad> = set.points.iter().map(|p| p.load).collect();
    assert!(matches!(loads[0], MeasuredLoad::Rate { rate_rps, .. } if rate_rps == 2.0));
    assert!(matches!(loads[1], MeasuredLoad::Rate { rate_rps, .. } if rate_rps == 4.0));
    assert_eq!(loads[2], MeasuredLoad::Concurrency { concurrency: 16 });
    assert_eq!(set.files, ["c16.json", "r4.json", "r2.json"]);
    assert_eq!(set.format, Format::Vllm);
    assert_eq!(
        set.model.as_deref(),
        Some("meta-llama/Llama-3.1-8B-Instruct")
    );

    // A different model in another file: both files and both models named.
    let other = String::from_utf8(a.clone()).expect("utf8").replace(
        "meta-llama/Llama-3.1-8B-Instruct",
        "Qwen/Qwen2.5-7B-Instruct",
    );
    let e = import_files(&[("r4.json", &a), ("qwen.json", other.as_bytes())]).unwrap_err();
    let msg = e.to_string();
    for want in [
        "r4.json",
        "qwen.json",
        "Qwen/Qwen2.5-7B-Instruct",
        "Llama-3.1-8B",
    ] {
        assert!(msg.contains(want), "{msg}");
    }
    // A different backend too.
    let sglang = String::from_utf8(a.clone())
        .expect("utf8")
        .replace("\"vllm\"", "\"sglang\"");
    let e = import_files(&[("r4.json", &a), ("sg.json", sglang.as_bytes())]).unwrap_err();
    assert!(
        e.to_string().contains("sglang") && e.to_string().contains("r4.json"),
        "{e}"
    );
    // Mixed formats of one model are fine; backends are compared within a format only
    // (vLLM's `backend` and GuideLLM's backend `kind` name different things).
    let g = fixture("guidellm_sweep3.json");
    let mixed = import_files(&[("g.json", &g), ("r4.json", &a)]).expect("mixed formats");
    assert_eq!(mixed.points.len(), 4);
    assert_eq!(mixed.format, Format::Guidellm);
    // No files.
    let e = import_files(&[]).unwrap_err();
    assert!(e.message.contains("no files"), "{e}");
    // Too many points.
    let many: Vec<(&str, &[u8])> = (0..MAX_POINTS + 1)
        .map(|_| ("r4.json", a.as_slice()))
        .collect();
    assert!(import_files(&many).is_err());
}

#[test]
fn bad_files_give_one_line_naming_file_and_field() {
    let e = err("notes.txt", b"hello world\nthis is not data\n");
    assert!(e.message.contains("neither JSON"), "{e}");
    let e = err(
        "package.json",
        br#"{"name": "web", "version": "1.0.0", "dependencies": {}}"#,
    );
    assert!(e.message.contains("another tool"), "{e}");
    let plan = serde_json::to_string(&goodput_core::Plan::default()).expect("plan json");
    let e = err("plan.json", plan.as_bytes());
    assert!(e.message.contains("another tool"), "{e}");
    assert!(err("empty.json", b"").message.contains("empty"));
    assert!(err("blank.csv", b"  \n\n").message.contains("empty"));

    let good = String::from_utf8(fixture("vllm_llama8b_4rps.json")).expect("utf8");
    let without = |key: &str| {
        let mut v: serde_json::Value =
            serde_json::from_str(&good.replace("NaN", "null")).expect("json");
        v.as_object_mut().expect("object").remove(key);
        v.to_string()
    };
    for key in [
        "completed",
        "request_throughput",
        "total_output_tokens",
        "request_rate",
    ] {
        let e = err("r.json", without(key).as_bytes());
        assert_eq!(e.field, key, "{e}");
        assert!(e.message.contains("missing"), "{e}");
    }
    let e = err(
        "r.json",
        good.replace("\"mean_ttft_ms\": 48.21", "\"mean_ttft_ms\": NaN")
            .as_bytes(),
    );
    assert_eq!(e.field, "mean_ttft_ms");
    assert!(e.message.contains("NaN"), "{e}");
    let e = err(
        "r.json",
        good.replace("\"p99_tpot_ms\": 21.4", "\"p99_tpot_ms\": -21.4")
            .as_bytes(),
    );
    assert_eq!(e.field, "p99_tpot_ms");
    assert!(
        e.message.contains("negative") && e.message.contains("ms"),
        "{e}"
    );
    // Numbers no benchmark reports are refused before any fit runs on them.
    let e = err(
        "r.json",
        good.replace("\"mean_ttft_ms\": 48.21", "\"mean_ttft_ms\": 1e30")
            .as_bytes(),
    );
    assert_eq!(
        (e.file.as_str(), e.field.as_str()),
        ("r.json", "TTFT"),
        "{e}"
    );
    assert!(
        e.message.starts_with("1e27 s is not a plausible latency") && e.message.contains("3,600 s"),
        "{e}"
    );
    // An hour is still read.
    assert!(import_files(&[(
        "r.json",
        good.replace("\"mean_ttft_ms\": 48.21", "\"mean_ttft_ms\": 3600000")
            .as_bytes()
    )])
    .is_ok());
    let e = err(
        "r.json",
        good.replacen(
            "\"request_throughput\": ",
            "\"request_throughput\": 1e30, \"x\": ",
            1,
        )
        .as_bytes(),
    );
    assert_eq!(e.field, "achieved request rate", "{e}");
    assert!(
        e.message
            .contains("1e30 requests/s is not a plausible rate"),
        "{e}"
    );
    let e = err(
        "r.json",
        good.replace("\"completed\": 500", "\"completed\": 0")
            .as_bytes(),
    );
    assert_eq!(e.message, "0 requests completed: nothing to calibrate from");
    let e = err("r.json", &good.as_bytes()[..good.len() / 2]);
    assert!(e.message.contains("cut short"), "{e}");
    let deep = format!("{}{}", "{\"a\":".repeat(5_000), "1");
    assert!(err("deep.json", deep.as_bytes())
        .message
        .contains("nested too deeply"));
    let e = err(
        "r.json",
        good.replace("\"request_rate\": 4.0", "\"request_rate\": \"inf\"")
            .as_bytes(),
    );
    assert!(e.message.contains("max_concurrency"), "{e}");
    let e = err(
        "r.json",
        good.replace(
            "\"request_rate\": 4.0",
            "\"request_rate\": 4.0, \"ramp_up_strategy\": \"linear\"",
        )
        .as_bytes(),
    );
    assert_eq!(e.field, "ramp_up_strategy");

    // Per-request arrays of different lengths.
    let d = String::from_utf8(fixture("vllm_llama8b_2rps_detailed.json")).expect("utf8");
    let e = err(
        "d.json",
        d.replacen("\"output_lens\": [", "\"output_lens\": [7, ", 1)
            .as_bytes(),
    );
    assert_eq!(e.field, "output_lens");
    assert!(e.message.contains("one length"), "{e}");
    let e = err(
        "d.json",
        d.replacen("\"input_lens\": [", "\"input_lens\": [-3, ", 1)
            .replacen("\"output_lens\": [", "\"output_lens\": [1, ", 1)
            .replacen("\"errors\": [", "\"errors\": [\"\", ", 1)
            .replacen("\"latencies\": [", "\"latencies\": [0.5, ", 1)
            .as_bytes(),
    );
    assert_eq!(e.field, "input_lens[0]");

    // GuideLLM: no benchmarks; a trace benchmark; a missing metric.
    let e = err(
        "g.json",
        br#"{"metadata": {"version": 2}, "benchmarks": []}"#,
    );
    assert_eq!(e.field, "benchmarks");
    assert!(e.message.contains("empty"), "{e}");
    let g = String::from_utf8(fixture("guidellm_sweep3.json")).expect("utf8");
    let e = err(
        "g.json",
        g.replacen("\"type_\": \"poisson\"", "\"type_\": \"trace\"", 1)
            .as_bytes(),
    );
    assert_eq!(
        (e.file.as_str(), e.field.as_str()),
        ("g.json#2", "config.strategy.type_")
    );
    let e = err(
        "g.json",
        g.replace("\"output_token_count\"", "\"output_token_count_x\"")
            .as_bytes(),
    );
    assert_eq!(e.field, "metrics.output_token_count.successful.mean");

    // Tables.
    let e = err(
        "t.csv",
        b"rate,prompt_tokens,output_tokens,ttft_p50\n4,512,64,40\n",
    );
    assert_eq!(e.field, "ttft_p50");
    assert!(e.message.contains("_ms or _s"), "{e}");
    let e = err(
        "t.tsv",
        b"rate\tprompt_tokens\toutput_tokens\tttft_p50_ms\n4\t512\t64\t8,5\n",
    );
    assert!(e.message.contains("decimal point: 8.5"), "{e}");
    assert!(e.field.contains("ttft_p50_ms"), "{e}");
    let e = err(
        "t.csv",
        b"rate,prompt_tokens,output_tokens,ttft_p50_ms\n4,512,64,8,5\n",
    );
    assert!(e.message.contains("decimal comma"), "{e}");
    let e = err("t.csv", b"rate,output_tokens,ttft_p50_ms\n4,64,40\n");
    assert_eq!(e.field, "prompt_tokens");
    let e = err(
        "t.csv",
        b"load,prompt_tokens,output_tokens,ttft_p50_ms\n4,512,64,40\n",
    );
    assert_eq!(e.field, "rate");
    let e = err(
        "t.csv",
        b"rate,prompt_tokens,output_tokens,ttft_p50_ms\n4,512,64,-40\n",
    );
    assert!(e.message.contains("negative"), "{e}");

    // Binary garbage, invalid UTF-8.
    let mut rng = Rng::new(3);
    let garbage: Vec<u8> = (0..4096).map(|_| (rng.next_u64() & 0xff) as u8).collect();
    assert!(import_file("x.bin", &garbage).is_err());
    let e = err(
        "latin1.csv",
        b"rate,prompt_tokens,output_tokens,ttft_p50_ms\n4,512,64,40 \xb5s\n",
    );
    assert!(e.message.contains("UTF-8"), "{e}");
    assert_eq!(sniff(b"\x00\x01\x02"), None);
}

#[test]
fn size_limit_is_checked_before_parsing() {
    // One byte over the limit, and not valid anything: refused by size alone.
    let big = vec![b'{'; MAX_FILE_BYTES + 1];
    let e = err("huge.json", &big);
    assert!(e.message.contains("MB"), "{e}");
    assert_eq!(sniff(&big), None);
}

#[test]
fn per_request_arrays_are_bounded() {
    let n = MAX_REQUESTS_PER_POINT + 5;
    let lens = vec!["1"; n].join(",");
    let text = format!(
        r#"{{"request_rate": 1.0, "completed": {n}, "request_throughput": 1.0, "total_input_tokens": {n}, "total_output_tokens": {n}, "mean_ttft_ms": 1.0, "input_lens": [{lens}], "output_lens": [{lens}]}}"#
    );
    let p = import_file("big.json", text.as_bytes()).expect("ok");
    assert_eq!(p[0].requests.len(), MAX_REQUESTS_PER_POINT);
}

fn stats(mean: f64, median: f64, pct: &[(f64, f64)]) -> LatencyStats {
    LatencyStats {
        mean_s: Some(mean),
        median_s: Some(median),
        percentiles: pct.to_vec(),
    }
}

fn synthetic(load: MeasuredLoad, with_requests: bool) -> MeasuredPoint {
    let tpot = stats(0.0151, 0.01493, &[(90.0, 0.0172), (99.0, 0.0213)]);
    MeasuredPoint {
        source: String::new(),
        format: Format::Vllm,
        load,
        completed: 480,
        failed: 3,
        duration_s: 121.77,
        achieved_rps: 480.0 / 121.77,
        mean_prompt_tokens: 511.7,
        mean_output_tokens: 127.3,
        ttft: stats(0.0482, 0.0417, &[(99.0, 0.1186), (99.9, 0.17)]),
        itl: tpot.clone(),
        tpot,
        e2e: stats(1.93, 1.88, &[(99.0, 2.91)]),
        requests: if with_requests {
            (0..20)
                .map(|i| MeasuredRequest {
                    prompt_tokens: 480 + i * 3,
                    output_tokens: 100 + i * 5,
                })
                .collect()
        } else {
            Vec::new()
        },
        model: Some("meta-llama/Llama-3.1-8B-Instruct".into()),
        engine: Some("vllm".into()),
        max_concurrency: None,
        prompt_spread: Default::default(),
        output_spread: Default::default(),
        spec: None,
    }
}

fn assert_same(a: &MeasuredPoint, b: &MeasuredPoint) {
    let near = |x: f64, y: f64, what: &str| assert!(close(x, y), "{what}: {x} vs {y}");
    assert_eq!(a.source, b.source);
    assert_eq!(a.format, b.format);
    match (a.load, b.load) {
        (
            MeasuredLoad::Rate {
                rate_rps: r1,
                cv: c1,
            },
            MeasuredLoad::Rate {
                rate_rps: r2,
                cv: c2,
            },
        ) => {
            near(r1, r2, "rate");
            near(c1, c2, "cv");
        }
        (x, y) => assert_eq!(x, y),
    }
    assert_eq!(
        (a.completed, a.failed, a.max_concurrency),
        (b.completed, b.failed, b.max_concurrency)
    );
    near(a.duration_s, b.duration_s, "duration");
    near(a.achieved_rps, b.achieved_rps, "achieved");
    near(a.mean_prompt_tokens, b.mean_prompt_tokens, "prompt");
    near(a.mean_output_tokens, b.mean_output_tokens, "output");
    for (x, y, what) in [
        (&a.ttft, &b.ttft, "ttft"),
        (&a.tpot, &b.tpot, "tpot"),
        (&a.itl, &b.itl, "itl"),
        (&a.e2e, &b.e2e, "e2e"),
    ] {
        assert_eq!(x.mean_s.is_some(), y.mean_s.is_some(), "{what} mean");
        assert_eq!(x.median_s.is_some(), y.median_s.is_some(), "{what} median");
        near(x.mean_s.unwrap_or(0.0), y.mean_s.unwrap_or(0.0), what);
        near(x.median_s.unwrap_or(0.0), y.median_s.unwrap_or(0.0), what);
        assert_eq!(
            x.percentiles.len(),
            y.percentiles.len(),
            "{what}: {x:?} vs {y:?}"
        );
        for (p, q) in x.percentiles.iter().zip(&y.percentiles) {
            near(p.0, q.0, what);
            near(p.1, q.1, what);
        }
    }
    assert_eq!(a.requests, b.requests);
    assert_eq!((&a.model, &a.engine), (&b.model, &b.engine));
}

#[test]
fn writers_round_trip() {
    let loads = [
        MeasuredLoad::Rate {
            rate_rps: 4.0,
            cv: 1.0,
        },
        MeasuredLoad::Rate {
            rate_rps: 2.5,
            cv: 0.0,
        },
        MeasuredLoad::Concurrency { concurrency: 16 },
        MeasuredLoad::Concurrency { concurrency: 1 },
    ];
    // vLLM: one file per point; also a gamma CV and a capped rate.
    for (i, load) in loads
        .iter()
        .chain(
            [MeasuredLoad::Rate {
                rate_rps: 3.3,
                cv: 1.7,
            }]
            .iter(),
        )
        .enumerate()
    {
        for detailed in [false, true] {
            let mut p = synthetic(*load, detailed);
            p.source = "v.json".into();
            if i == 0 {
                p.max_concurrency = Some(32);
            }
            let text = write::vllm_json(&p);
            let got =
                import_file("v.json", text.as_bytes()).unwrap_or_else(|e| panic!("{e}\n{text}"));
            assert_eq!(got.len(), 1);
            assert_same(&p, &got[0]);
        }
    }
    // GuideLLM: all points in one report.
    let pts: Vec<MeasuredPoint> = loads
        .iter()
        .enumerate()
        .map(|(k, l)| {
            let mut p = synthetic(*l, k % 2 == 0);
            p.source = format!("g.json#{}", k + 1);
            p.format = Format::Guidellm;
            p.engine = Some("openai_http".into());
            p
        })
        .collect();
    let text = write::guidellm_json(&pts);
    let got = import_file("g.json", text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(got.len(), pts.len());
    for (a, b) in pts.iter().zip(&got) {
        assert_same(a, b);
    }
    // Table: rows in order, no per-request lengths.
    let pts: Vec<MeasuredPoint> = loads
        .iter()
        .enumerate()
        .map(|(k, l)| {
            let mut p = synthetic(*l, false);
            p.source = format!("t.csv#{}", k + 1);
            p.format = Format::Table;
            p.model = Some("org/model, v2".into());
            p
        })
        .collect();
    let text = write::table_csv(&pts);
    let got = import_file("t.csv", text.as_bytes()).unwrap_or_else(|e| panic!("{e}\n{text}"));
    for (a, b) in pts.iter().zip(&got) {
        assert_same(a, b);
    }
}

/// Every number a point carries, for the finiteness check.
fn numbers(p: &MeasuredPoint) -> Vec<f64> {
    let mut v = vec![
        p.duration_s,
        p.achieved_rps,
        p.mean_prompt_tokens,
        p.mean_output_tokens,
    ];
    match p.load {
        MeasuredLoad::Rate { rate_rps, cv } => v.extend([rate_rps, cv]),
        MeasuredLoad::Concurrency { concurrency } => v.push(f64::from(concurrency)),
    }
    for s in [&p.ttft, &p.tpot, &p.itl, &p.e2e] {
        v.extend(s.mean_s);
        v.extend(s.median_s);
        for &(q, x) in &s.percentiles {
            v.extend([q, x]);
        }
    }
    v
}

#[test]
fn mutated_files_never_panic_and_stay_finite() {
    let seeds: Vec<Vec<u8>> = [
        "vllm_llama8b_4rps.json",
        "vllm_llama8b_c16.json",
        "vllm_llama8b_2rps_detailed.json",
        "guidellm_sweep3.json",
        "guidellm_v03_poisson.json",
        "measured_sweep.csv",
        "measured_sweep.tsv",
    ]
    .iter()
    .map(|f| fixture(f))
    .collect();
    let tokens: [&[u8]; 10] = [
        b"NaN",
        b"-Infinity",
        b"-1",
        b"1e999",
        b"\"inf\"",
        b"null",
        b"[",
        b"}",
        b",",
        b"\t",
    ];
    let mut rng = Rng::new(0x5eed);
    let (mut ok, mut total) = (0, 0);
    for round in 0..3_000 {
        let mut bytes = seeds[round % seeds.len()].clone();
        for _ in 0..1 + rng.next_u64() % 4 {
            let len = bytes.len().max(1);
            let at = (rng.next_u64() % len as u64) as usize;
            match rng.next_u64() % 8 {
                // Replace a whole number with a hostile one (NaN, negative, huge, …).
                6 | 7 => {
                    let start = (at..bytes.len()).find(|&j| {
                        bytes[j].is_ascii_digit() && j > 0 && b" :[,\t\n".contains(&bytes[j - 1])
                    });
                    if let Some(j) = start {
                        let end = (j..bytes.len())
                            .find(|&k| !b"0123456789.eE+-".contains(&bytes[k]))
                            .unwrap_or(bytes.len());
                        let t = tokens[(rng.next_u64() % 5) as usize];
                        bytes.splice(j..end, t.iter().copied());
                    }
                }
                0 => bytes.truncate(at),
                1 if at < bytes.len() => bytes[at] = (rng.next_u64() & 0xff) as u8,
                2 => {
                    let end = (at + 1 + (rng.next_u64() % 64) as usize).min(bytes.len());
                    let chunk = bytes[at.min(end)..end].to_vec();
                    bytes.splice(at.min(bytes.len())..at.min(bytes.len()), chunk);
                }
                3 => {
                    let t = tokens[(rng.next_u64() % tokens.len() as u64) as usize];
                    bytes.splice(at.min(bytes.len())..at.min(bytes.len()), t.iter().copied());
                }
                4 if at < bytes.len() && bytes[at].is_ascii_digit() => bytes[at] = b'-',
                _ => {
                    let end = (at + (rng.next_u64() % 16) as usize).min(bytes.len());
                    bytes.drain(at.min(end)..end);
                }
            }
        }
        total += 1;
        let name = format!("mutant-{round}");
        match import_file(&name, &bytes) {
            Ok(points) => {
                ok += 1;
                for p in &points {
                    for x in numbers(p) {
                        assert!(x.is_finite() && x >= 0.0, "{name}: {x} in {p:?}");
                    }
                    assert!(p.completed > 0 || p.format == Format::Table, "{name}");
                }
            }
            Err(e) => {
                assert!(e.file.starts_with(&name), "{name}: {e}");
                assert!(!e.to_string().contains('\n'), "{name}: {e}");
            }
        }
    }
    // Some mutants still import: the test exercises the success path too.
    assert!(ok > total / 20, "{ok} of {total} imported");
}

#[test]
fn guidellm_strategies_and_table_loads() {
    let g = String::from_utf8(fixture("guidellm_sweep3.json")).expect("utf8");
    let constant = g.replacen("\"type_\": \"poisson\"", "\"type_\": \"constant\"", 1);
    let p = import_file("g.json", constant.as_bytes()).expect("constant");
    assert_eq!(
        p[1].load,
        MeasuredLoad::Rate {
            rate_rps: 2.5,
            cv: 0.0
        }
    );
    let tp = g.replacen("\"type_\": \"poisson\"", "\"type_\": \"throughput\"", 1);
    let e = err("g.json", tp.as_bytes());
    assert!(
        e.message.contains("throughput") && e.file == "g.json#2",
        "{e}"
    );
    // A table row with rate `inf` and a concurrency is a closed-loop point.
    let t = b"rate,concurrency,achieved_rps,prompt_tokens,output_tokens,ttft_mean_ms\ninf,4,3.1,100,10,20\n";
    let p = import_file("t.csv", t).expect("ok");
    assert_eq!(p[0].load, MeasuredLoad::Concurrency { concurrency: 4 });
    // A concurrency row needs the achieved rate.
    let t = b"concurrency,prompt_tokens,output_tokens,ttft_mean_ms\n4,100,10,20\n";
    assert!(err("t.csv", t).field.contains("achieved_rps"));
}
