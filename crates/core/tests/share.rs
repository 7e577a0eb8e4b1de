//! Share links through the public API: size, round trips, the corpus of links
//! every release must keep opening, hostile links, and property tests (proptest)
//! that throw random and mangled links at the decoder.

use goodput_core::plan::{Arrival, Dtype, KvPolicy, LengthDist, Plan, SweepRow};
use goodput_core::roofline::StepModelOf;
use goodput_core::share::{self, DecodeError, SharedPlan, MAX_LINK_BYTES};
use proptest::prelude::*;

const BASE: &str = "http://127.0.0.1:8080/";

/// A typical link must stay well inside what chat tools and browsers keep.
const TYPICAL_LINK_MAX_CHARS: usize = 1000;

/// Draws for the plan and mutation generators, from words proptest generates (and,
/// on a failure, shrinks towards zero: shorter names, first choices, lower bounds).
/// Past the last word the words are used again.
struct Rng {
    words: Vec<u64>,
    at: usize,
}

/// Words for one [`Rng`].
fn words(n: usize) -> impl Strategy<Value = Vec<u64>> {
    proptest::collection::vec(any::<u64>(), n)
}

impl Rng {
    fn new(words: Vec<u64>) -> Rng {
        Rng { words, at: 0 }
    }

    fn next(&mut self) -> u64 {
        let w = self.words[self.at % self.words.len()];
        self.at += 1;
        w
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Uniform in `[lo, hi)`, with all 52 bits of the mantissa in play.
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next() >> 11) as f64 / (1u64 << 53) as f64)
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }
}

/// The default plan with a few fields changed, as someone tuning it would.
fn tuned_plan() -> Plan {
    let mut p = Plan {
        name: "Support chat, Q3 peak".into(),
        ..Plan::default()
    };
    p.model.weight_dtype = Dtype::Fp8;
    p.model.kv_dtype = Dtype::Fp8;
    p.engine.max_num_seqs = 96;
    p.engine.max_num_batched_tokens = 1024;
    p.traffic.peak_rate_rps = 42.5;
    p.slo.ttft_s = Some(0.8);
    p.hardware.gpu_hour_usd = 3.19;
    p
}

/// A plan with a custom 6 × 6 knob grid and a measured sweep.
fn grid_plan() -> Plan {
    let mut p = tuned_plan();
    p.run.sweep_max_num_seqs = vec![24, 48, 96, 160, 320, 448];
    p.run.sweep_batched_tokens = vec![384, 768, 1536, 3072, 6144, 0];
    p.planning.measured_sweep = [
        (4.0, 0.99),
        (6.0, 0.97),
        (8.0, 0.93),
        (9.0, 0.71),
        (10.0, 0.38),
    ]
    .iter()
    .map(|&(rate_rps, attainment)| SweepRow {
        rate_rps,
        attainment,
    })
    .collect();
    p
}

#[test]
fn typical_links_are_short() {
    for (what, plan) in [
        ("default", Plan::default()),
        ("tuned", tuned_plan()),
        ("6x6 grid", grid_plan()),
    ] {
        let url = share::share_url(BASE, &plan, true);
        println!(
            "{what}: payload {} chars, link {} chars",
            share::encode(&plan).len(),
            url.len()
        );
        assert!(
            url.len() < TYPICAL_LINK_MAX_CHARS,
            "{what}: {} chars",
            url.len()
        );
    }
    // The default plan's payload is documented in docs/share-links.md; keep it tiny.
    assert!(share::encode(&Plan::default()).len() <= 72);
}

#[test]
fn share_url_shape() {
    let plan = tuned_plan();
    let payload = share::encode(&plan);
    assert!(payload.starts_with('4'), "{payload}");
    assert!(payload
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
    assert_eq!(
        share::share_url("https://h.example/app/", &plan, false),
        format!("https://h.example/app/#p={payload}")
    );
    assert_eq!(
        share::share_url("https://h.example/app/#p=1old&embed", &plan, true),
        format!("https://h.example/app/#p={payload}&embed"),
        "an old fragment on the base is replaced"
    );
}

#[test]
fn decode_returns_plan_and_flags() {
    let plan = grid_plan();
    let url = share::share_url(BASE, &plan, true) + "&view=finance";
    let shared = share::decode(&url).expect("valid link");
    assert_eq!(
        shared,
        SharedPlan {
            plan,
            embed: true,
            view: Some("finance".into()),
            version: share::CURRENT_VERSION,
        }
    );
}

/// A random plan inside the ranges a user would set, every float with full mantissa.
fn random_plan(rng: &mut Rng) -> Plan {
    let name = (0..rng.below(40))
        .map(|_| rng.pick(&['a', 'Z', ' ', '"', '\\', 'é', '→', '<', '&', '#', '\n']))
        .collect();
    let mut p = Plan {
        name,
        ..Plan::default()
    };
    p.model.params = rng.uniform(1e8, 7e11);
    p.model.active_params = p.model.params * rng.uniform(0.05, 1.0);
    p.model.layers = 1 + rng.below(120) as u32;
    p.model.kv_heads = 1 + rng.below(64) as u32;
    p.model.head_dim = rng.pick(&[64, 96, 128, 256]);
    p.model.weight_dtype = rng.pick(&[Dtype::Bf16, Dtype::Fp8, Dtype::Int4]);
    p.model.kv_dtype = rng.pick(&[Dtype::Bf16, Dtype::Fp8]);
    p.hardware.memory_bytes = rng.uniform(40e9, 192e9);
    // Enough GPUs that the weights fit with room for the KV cache.
    let per_gpu = p.hardware.memory_bytes * p.hardware.mem_utilization;
    p.hardware.tp_degree = (1.25 * p.model.weight_bytes() / per_gpu).ceil().max(1.0) as u32;
    p.hardware.mem_bandwidth_bytes_per_s = rng.uniform(1e12, 8e12);
    p.hardware.compute_flops_per_s = rng.uniform(1e14, 2e15);
    p.hardware.step_overhead_s = rng.uniform(1e-4, 5e-3);
    p.hardware.gpu_hour_usd = rng.uniform(0.5, 12.0);
    p.traffic.peak_rate_rps = rng.uniform(0.1, 500.0);
    p.traffic.arrival = match rng.below(3) {
        0 => Arrival::Poisson,
        1 => Arrival::Gamma {
            cv: rng.uniform(0.5, 4.0),
        },
        _ => Arrival::Constant,
    };
    p.traffic.prompt.dist = if rng.below(2) == 0 {
        LengthDist::LogNormal {
            median: rng.uniform(50.0, 4000.0),
            sigma: rng.uniform(0.1, 1.5),
        }
    } else {
        LengthDist::Fixed {
            tokens: 16 + rng.below(4000) as u32,
        }
    };
    p.slo.ttft_s = Some(rng.uniform(0.05, 5.0)).filter(|_| rng.below(4) > 0);
    p.slo.tpot_s = Some(rng.uniform(0.005, 0.2));
    p.slo.attainment_target = rng.uniform(0.5, 0.999);
    p.engine.max_num_seqs = 1 + rng.below(1024) as u32;
    p.engine.max_num_batched_tokens = 64 + rng.below(16384) as u32;
    p.engine.chunked_prefill = rng.below(2) == 0;
    p.engine.kv_policy = rng.pick(&[KvPolicy::None, KvPolicy::Reserve, KvPolicy::Paged]);
    p.planning.utilization = rng.uniform(0.3, 0.95);
    p.planning.redundancy = rng.below(4) as u32;
    p.run.seed = rng.next();
    p.run.replications = 1 + rng.below(20) as u32;
    p
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn random_plans_round_trip_exactly(w in words(96), embed in any::<bool>()) {
        let plan = random_plan(&mut Rng::new(w));
        let url = share::share_url(BASE, &plan, embed);
        let shared = share::decode(&url).unwrap_or_else(|e| panic!("{e}: {plan:?}"));
        prop_assert_eq!(&shared.plan, &plan);
        prop_assert_eq!(shared.embed, embed);
        // Bit patterns, not just `==` (which cannot tell 0.0 from -0.0).
        prop_assert_eq!(
            serde_json::to_string(&shared.plan).expect("json"),
            serde_json::to_string(&plan).expect("json")
        );
        // Encoding is a function of the plan alone.
        prop_assert_eq!(share::encode(&shared.plan), share::encode(&plan));
    }
}

/// One case of the corpus file: `key: value` lines, cases separated by blank lines.
struct CorpusCase {
    title: String,
    link: String,
    embed: bool,
    view: Option<String>,
    plan_json: String,
}

fn read_corpus(text: &str) -> Vec<CorpusCase> {
    let mut out = Vec::new();
    for block in text.split("\n\n") {
        let field = |key: &str| {
            block
                .lines()
                .find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix(": ")))
                .map(str::to_string)
        };
        let Some(link) = field("link") else { continue };
        out.push(CorpusCase {
            title: field("title").unwrap_or_default(),
            link,
            embed: field("embed").as_deref() == Some("true"),
            view: field("view").filter(|v| v != "-"),
            plan_json: field("plan").expect("every case has a plan"),
        });
    }
    out
}

#[test]
fn every_v3_link_in_the_corpus_still_opens_the_same() {
    let cases = read_corpus(include_str!("share_corpus/v3.txt"));
    assert_eq!(cases.len(), 2, "corpus went missing");
    for case in cases {
        let shared = share::decode(&case.link).unwrap_or_else(|e| panic!("{}: {e}", case.title));
        let expected: Plan = serde_json::from_str(&case.plan_json)
            .unwrap_or_else(|e| panic!("{}: corpus JSON: {e}", case.title));
        assert_eq!(shared.plan, expected, "{}", case.title);
        assert_eq!(shared.version, 3, "{}", case.title);
        // A comparison made fresh stays fresh: its fingerprint is hashed as it was then.
        if let Some(rec) = &shared.plan.shootout {
            assert!(rec.is_fresh(&shared.plan), "{}", case.title);
        }
        // Made again today, the link carries the plan's link form, shorter.
        let again = share::share_url(BASE, &expected, case.embed);
        assert_eq!(
            share::decode(&again).expect("opens").plan,
            share::link_form(&expected)
        );
        assert!(again.len() <= case.link.len(), "{}", case.title);
    }
}

#[test]
fn links_made_before_notes_existed_open_with_no_note_and_a_note_travels() {
    for case in read_corpus(include_str!("share_corpus/v1.txt")) {
        let shared = share::decode(&case.link).unwrap_or_else(|e| panic!("{}: {e}", case.title));
        assert_eq!(shared.plan.note, "", "{}", case.title);
    }
    // A plan without a note writes exactly what it wrote before notes existed.
    assert!(!serde_json::to_string(&Plan::default())
        .expect("encode")
        .contains("note"));
    let mut named = Plan {
        name: "Chat fleet, EU".into(),
        note: "Peak from the November launch; budget owner: infra.".into(),
        ..Plan::default()
    };
    let shared = share::decode(&share::share_url(BASE, &named, false)).expect("decodes");
    assert_eq!(shared.plan, named);
    named.note = "x".repeat(goodput_core::plan::MAX_NOTE_CHARS + 1);
    assert_eq!(named.validate().unwrap_err().field, "note");
}

#[test]
fn every_v1_link_in_the_corpus_still_opens_the_same() {
    let cases = read_corpus(include_str!("share_corpus/v1.txt"));
    assert!(
        cases.len() >= 7,
        "corpus went missing: {} cases",
        cases.len()
    );
    let mut modes = std::collections::BTreeSet::new();
    for case in cases {
        let shared = share::decode(&case.link).unwrap_or_else(|e| panic!("{}: {e}", case.title));
        let expected: Plan = serde_json::from_str(&case.plan_json)
            .unwrap_or_else(|e| panic!("{}: corpus JSON: {e}", case.title));
        assert_eq!(shared.plan, expected, "{}", case.title);
        assert_eq!(shared.version, 1, "{}", case.title);
        assert_eq!(shared.embed, case.embed, "{}", case.title);
        assert_eq!(shared.view, case.view, "{}", case.title);
        let payload = case.link.split("p=").nth(1).expect("has p=");
        modes.insert(payload.as_bytes()[1]);
    }
    assert_eq!(
        modes.into_iter().collect::<Vec<_>>(),
        b"djz",
        "all three v1 modes covered"
    );
}

/// The variant name of an error, as written in the hostile corpus.
fn variant(e: &DecodeError) -> String {
    let debug = format!("{e:?}");
    debug
        .split(|c: char| !c.is_ascii_alphanumeric())
        .next()
        .unwrap_or_default()
        .to_string()
}

fn assert_one_line(e: &DecodeError) {
    let msg = e.to_string();
    assert!(!msg.is_empty() && !msg.contains(['\n', '\r']), "{msg:?}");
    assert!(msg.chars().count() <= 400, "{msg:?}");
}

#[test]
fn hostile_corpus_gives_the_expected_errors() {
    let text = include_str!("share_corpus/hostile.txt");
    let mut n = 0;
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let mut parts = line.split('\t');
        let (Some(expected), Some(link), Some(why)) = (parts.next(), parts.next(), parts.next())
        else {
            panic!("malformed corpus line: {line:?}");
        };
        let err = match share::decode(link) {
            Ok(s) => panic!("{why}: decoded to {:?}", s.plan.name),
            Err(e) => e,
        };
        assert_eq!(variant(&err), expected, "{why}: {err}");
        assert_one_line(&err);
        n += 1;
    }
    assert!(n >= 50, "hostile corpus went missing: {n} lines");
}

#[test]
fn oversized_input_is_refused_unread() {
    let huge = format!("{BASE}#p=1j{}", "A".repeat(MAX_LINK_BYTES));
    assert_eq!(
        share::decode(&huge),
        Err(DecodeError::TooLong { len: huge.len() })
    );
    // Just under the limit, all of it base64: read, and refused as bad data.
    let big = format!("#p=1z{}", "A".repeat(MAX_LINK_BYTES - 8));
    assert_eq!(share::decode(&big), Err(DecodeError::Decompress));
}

#[test]
fn links_cannot_ask_for_unbounded_work() {
    let long_grid: Vec<u32> = (1..=100).collect();
    let cases = [
        (
            r#"{"run":{"num_requests":4294967295}}"#.to_string(),
            "run.num_requests",
        ),
        (
            r#"{"run":{"replications":4000000000}}"#.to_string(),
            "run.replications",
        ),
        (
            format!(r#"{{"run":{{"sweep_max_num_seqs":{long_grid:?}}}}}"#),
            "run.sweep_max_num_seqs",
        ),
        (
            r#"{"traffic":{"peak_rate_rps":-5.0}}"#.to_string(),
            "traffic.peak_rate_rps",
        ),
    ];
    for (json, field) in cases {
        match share::decode(&format!("#p=1j{}", base64url(json.as_bytes()))) {
            Err(DecodeError::Invalid(e)) => assert_eq!(e.field, field, "{json}"),
            other => panic!("{json}: expected Invalid({field}), got {other:?}"),
        }
    }
}

/// Every input must produce `Ok` with a plan that validates, or an error with a
/// one-line message; the test harness turns a panic into a failure.
fn check(input: &str) {
    match share::decode(input) {
        Ok(shared) => {
            assert!(shared.plan.validate().is_ok());
            assert!(shared.view.as_deref().is_none_or(|v| v.len() <= 32));
        }
        Err(e) => assert_one_line(&e),
    }
}

const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// JSON fragments that random bodies are built from.
const JSON_PIECES: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"run\"",
    "\"model\"",
    "\"params\"",
    "\"num_requests\"",
    "\"kind\"",
    "\"gamma\"",
    "\"trace\"",
    "1e308",
    "-1",
    "0",
    "NaN",
    "null",
    "true",
    "\"",
    "\\",
    "1e-400",
    "18446744073709551616",
    " ",
    "\"\\u0000\"",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Random bytes, read as lossy UTF-8.
    #[test]
    fn property_random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        check(&String::from_utf8_lossy(&bytes));
    }

    /// Random base64url bodies behind every header.
    #[test]
    fn property_random_base64_bodies_never_panic(
        header in prop::sample::select(vec!["1d", "1z", "1j", "2d", "0z", "1", ""]),
        body in "[A-Za-z0-9_-]{0,600}",
    ) {
        check(&format!("{BASE}#p={header}{body}"));
    }

    /// Random JSON bodies, plain or in a stored deflate block.
    #[test]
    fn property_random_json_bodies_never_panic(
        pieces in proptest::collection::vec(prop::sample::select(JSON_PIECES), 0..60),
        deflate in any::<bool>(),
    ) {
        let json: String = pieces.concat();
        let link = if deflate {
            format!("#p=1z{}", base64url(&stored_deflate(json.as_bytes())))
        } else {
            format!("#p=1j{}", base64url(json.as_bytes()))
        };
        check(&link);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20))]

    /// Valid links of random plans, truncated and mutated one byte at a time.
    #[test]
    fn property_mangled_links_never_panic(plan_words in words(96), w in words(4096)) {
        let url = share::share_url(BASE, &random_plan(&mut Rng::new(plan_words)), false);
        let mut rng = Rng::new(w);
        for cut in 0..url.len() {
            check(&url[..cut]);
        }
        let bytes = url.as_bytes();
        for pos in 0..bytes.len() {
            for _ in 0..3 {
                let mut m = bytes.to_vec();
                let choices = [B64[rng.below(64)], rng.next() as u8, b'#', b'&', b'='];
                m[pos] = rng.pick(&choices);
                check(&String::from_utf8_lossy(&m));
            }
        }
    }
}

#[test]
fn deep_json_bodies_never_panic() {
    // Deep nesting of every size around the limit, both brackets.
    for depth in [15, 16, 17, 100, 10_000] {
        for (open, close) in [("[", "]"), ("{\"a\":", "}")] {
            let json = format!("{}1{}", open.repeat(depth), close.repeat(depth));
            check(&format!("#p=1j{}", base64url(json.as_bytes())));
        }
    }
}

/// A final stored deflate block (no compression), enough to reach the JSON stage in mode `z`.
fn stored_deflate(data: &[u8]) -> Vec<u8> {
    let len = data.len().min(65_535) as u16;
    let mut out = vec![1];
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&(!len).to_le_bytes());
    out.extend_from_slice(&data[..usize::from(len)]);
    out
}

/// Test-side base64url, independent of the crate's own.
fn base64url(bytes: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut bits = 0u32;
    let mut n = 0;
    let mut out = String::new();
    for &b in bytes {
        bits = (bits << 8) | u32::from(b);
        n += 8;
        while n >= 6 {
            n -= 6;
            out.push(char::from(A[((bits >> n) & 63) as usize]));
        }
    }
    if n > 0 {
        out.push(char::from(A[((bits << (6 - n)) & 63) as usize]));
    }
    out
}

/// A plan calibrated from eight `vllm bench serve` files (one per rate), with every
/// statistic the files give, as the app and the CLI write it.
fn calibrated_plan() -> Plan {
    use goodput_core::plan::{
        Calibration, CalibrationError, CalibrationSource, Fitted, MeasuredLoad, MeasuredSummary,
        MetricErrors,
    };
    let rates = [1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0];
    let mut plan = Plan::default();
    let err = |x: f64| MetricErrors {
        ttft: Some(x * 1.7),
        tpot: Some(x * 0.61),
        e2e: Some(x * 0.93),
        overall: x,
    };
    plan.calibration = Some(Calibration {
        enabled: true,
        bandwidth_efficiency: Fitted {
            value: 0.813_456_789_012_345_6,
            sd: 0.021_234_567_890_123_4,
        },
        compute_efficiency: Fitted {
            value: 0.687_654_321_098_765_4,
            sd: 0.034_567_890_123_456_7,
        },
        step_overhead_s: Fitted {
            value: 0.003_123_456_789_012_3,
            sd: 0.000_212_345_678_901_2,
        },
        seq_overhead_s: Some(Fitted {
            value: 0.000_012_345_678_901_2,
            sd: 0.000_003_456_789_012_3,
        }),
        frontend_s: Some(Fitted {
            value: 0.038_765_432_109_876_5,
            sd: 0.004_321_098_765_432_1,
        }),
        prefill_overhead_s: Some(Fitted {
            value: 0.006_543_210_987_654_3,
            sd: 0.001_234_567_890_123_4,
        }),
        kv_read_efficiency: Some(Fitted {
            value: 0.543_210_987_654_321,
            sd: 0.043_210_987_654_321,
        }),
        source: CalibrationSource {
            files: rates
                .iter()
                .map(|r| format!("vllm-0.14.1-llama-3.1-70b-fp8-h200-qps{r}.json"))
                .collect(),
            tool: "vllm bench serve".into(),
            model: "meta-llama/Llama-3.1-70B-Instruct-FP8".into(),
            engine: "vllm".into(),
            fitted_model: "llama-3.1-70b".into(),
            fitted_gpu: "h200".into(),
            fitted_tp_degree: 1,
            spec: None,
        },
        error: CalibrationError {
            in_sample: err(0.061_234_567_890_123),
            held_out: Some(err(0.083_456_789_012_345)),
            extrapolation: Some(err(0.112_345_678_901_234)),
            uncalibrated: err(0.271_234_567_890_123),
        },
        points: rates
            .iter()
            .map(|&r| {
                let x = |k: f64| Some(k * (1.0 + r / 7.0) * 1.000_000_123_456_7);
                MeasuredSummary {
                    load: MeasuredLoad::Rate {
                        rate_rps: r,
                        cv: 1.0,
                    },
                    achieved_rps: r * 0.981_234_567,
                    ttft_mean_s: x(0.212),
                    ttft_p50_s: x(0.181),
                    ttft_p99_s: x(0.743),
                    tpot_mean_s: x(0.0312),
                    tpot_p50_s: x(0.0301),
                    tpot_p99_s: x(0.0512),
                    e2e_mean_s: x(8.91),
                    e2e_p50_s: x(7.12),
                    e2e_p99_s: x(24.3),
                }
            })
            .collect(),
    });
    plan
}

#[test]
fn a_calibrated_plan_travels_and_stays_short() {
    let plan = calibrated_plan();
    plan.validate().expect("valid calibrated plan");
    let url = share::share_url(BASE, &plan, false);
    println!("calibrated from 8 files: link {} chars", url.len());
    let shared = share::decode(&url).expect("opens");
    assert_eq!(shared.plan, share::link_form(&plan));
    assert_eq!(shared.version, share::CURRENT_VERSION);
    // Measured for docs/calibration.md and docs/share-links.md.
    assert!(url.len() < 1_200, "{} chars", url.len());
}

#[test]
fn version_2_bodies_are_version_1_bodies_with_more_words() {
    // A v1 link re-tagged as v2 opens to the same plan: v2 only adds fields.
    let cases = read_corpus(include_str!("share_corpus/v1.txt"));
    for case in cases {
        let v1 = share::decode(&case.link).expect("v1 opens");
        let v2 = share::decode(&case.link.replacen("p=1", "p=2", 1)).expect("v2 opens");
        assert_eq!(v1.plan, v2.plan, "{}", case.title);
        assert_eq!(v2.version, 2);
    }
}

#[test]
fn a_version_2_tensor_parallel_link_keeps_the_numbers_it_was_made_with() {
    // Written by the release before version 3: the default plan at TP 2 with a fixed
    // 0.5 ms TP overhead (`goodput link --tp 2 --tp-comm-overhead 0.0005`). It knows
    // nothing of all-reduce pricing, so it decodes without it: no hidden size, no
    // interconnect, no all-reduce latency, although today's defaults have all three.
    let link = "https://example.test/#p=2d7dQBCQAAAMKwSiLYv5oJDCC8xCDvlDxP8qSgHuqh3lav";
    let shared = share::decode(link).expect("the v2 link opens");
    assert_eq!(shared.version, 2);
    let p = &shared.plan;
    assert_eq!(p.hardware.tp_degree, 2);
    assert_eq!(p.hardware.tp_comm_overhead_s, 0.0005);
    assert_eq!(p.model.hidden_size, 0);
    assert_eq!(p.hardware.interconnect_bytes_per_s, 0.0);
    assert_eq!(p.hardware.allreduce_latency_s, 0.0);
    let step = goodput_core::roofline::StepModel::from_plan(p);
    assert_eq!(step.fixed_time_s(), 1.5e-3);
    assert_eq!(step.comm_time_s(512.0), 0.0);
    // Re-shared today, it becomes a v4 link that still says "no all-reduce term".
    let again = share::decode(&share::share_url(BASE, p, false)).expect("v4 opens");
    assert_eq!(again.version, share::CURRENT_VERSION);
    assert_eq!(&again.plan, p);
    // The same plan made today prices its all-reduces.
    let mut today = Plan::default();
    today.hardware.tp_degree = 2;
    today.hardware.tp_comm_overhead_s = 0.0005;
    assert!(goodput_core::roofline::StepModel::from_plan(&today).comm_time_s(512.0) > 0.0);
}

/// A comparison of the default 24 options, as a shootout leaves it: full-precision
/// figures, the options that do not fit at the end with their reasons.
fn compared(plan: &mut Plan) {
    use goodput_core::plan::comparison::{
        fingerprint_for, ConstantsSource, ShootoutRecord, ShootoutResult, ShootoutRow, ShootoutSpec,
    };
    let spec = ShootoutSpec::default();
    let mut rows = Vec::new();
    let mut k = 0.0;
    for gpu in &spec.gpus {
        for &tp in &spec.tp_degrees {
            k += 1.0;
            let fits = tp >= 2 || gpu == "b200" || gpu == "mi300x" || gpu == "h200";
            let x = |v: f64| v * (1.0 + k / 97.0) * 1.000_000_123_456_7;
            rows.push(ShootoutRow {
                gpu: gpu.clone(),
                gpu_name: goodput_core::presets::gpu_name(gpu).to_string(),
                tp,
                pp: 1,
                ep: 1,
                fits,
                reason: (!fits).then(|| {
                    format!(
                        "the weights need 2 GPUs; {} holds {} GB",
                        goodput_core::presets::gpu_name(gpu),
                        80
                    )
                }),
                goodput_rps: if fits { x(3.123) } else { 0.0 },
                replicas_total: if fits { 12 + k as u32 } else { 0 },
                gpus_total: if fits { (12 + k as u32) * tp } else { 0 },
                cost_per_hour_usd: fits.then(|| x(61.3)),
                cost_per_month_usd: fits.then(|| x(44_749.0)),
                cost_per_compliant_request_usd: fits.then(|| x(0.000_412)),
                ttft_p99_s: fits.then(|| x(0.412)),
                tpot_p99_s: fits.then(|| x(0.0312)),
                output_tokens_per_s_per_gpu: fits.then(|| x(812.0)),
                kv_capacity_tokens: x(348_304.0),
                gpus_needed: Some(2),
                chosen: gpu == &plan.hardware.preset && tp == plan.hardware.tp_degree,
                constants: if gpu == "h200" && tp == 1 {
                    ConstantsSource::Measured
                } else {
                    ConstantsSource::Carried
                },
                spec_draft_tokens: 0,
                spec_acceptance: 0.0,
                comm_share: None,
                note: None,
            });
        }
    }
    let chosen = rows.iter().position(|r| r.chosen);
    plan.shootout = Some(ShootoutRecord {
        fingerprint: fingerprint_for(plan, &spec),
        spec,
        result: ShootoutResult {
            rows,
            best: Some(3),
            chosen,
        },
        omitted: 0,
    });
}

/// What a user has done to a plan by the time finance gets it: a name, a note, a
/// calibration from eight files, a comparison of 24 options and a day schedule.
fn fully_used_plan() -> Plan {
    use goodput_core::plan::schedule::{RateProfile, ScheduleOptions, ScheduleSpec};
    let mut plan = calibrated_plan();
    plan.name = "Support chat on H200, Q3 2027 peak (EU region)".into();
    plan.note = "Peak from the Q2 forecast plus 30% for the launch; TTFT 800 ms as agreed \
                 with the product team. Calibrated on our staging runs of 12 May."
        .into();
    plan.hardware.preset = "h200".into();
    plan.schedule = Some(ScheduleSpec {
        profile: RateProfile {
            hourly: vec![
                0.18, 0.12, 0.1, 0.09, 0.1, 0.15, 0.28, 0.47, 0.68, 0.84, 0.93, 0.98, 1.0, 0.99,
                0.97, 0.95, 0.92, 0.86, 0.74, 0.62, 0.53, 0.44, 0.34, 0.25,
            ],
            absolute: false,
            source: "Chat weekday shape".into(),
        },
        options: ScheduleOptions::default(),
    });
    compared(&mut plan);
    plan
}

#[test]
fn a_fully_used_plan_travels_in_2000_characters() {
    let plan = fully_used_plan();
    plan.validate().expect("valid");
    let url = share::share_url(BASE, &plan, false);
    let part = |f: &dyn Fn(&mut Plan)| {
        let mut p = plan.clone();
        f(&mut p);
        url.len() - share::share_url(BASE, &p, false).len()
    };
    println!(
        "fully used plan: link {} chars; comparison {}, calibration {} (points {}), schedule {}",
        url.len(),
        part(&|p| p.shootout = None),
        part(&|p| p.calibration = None),
        part(&|p| p.calibration.as_mut().unwrap().points.clear()),
        part(&|p| p.schedule = None),
    );
    assert!(url.len() <= 2_000, "{} chars", url.len());
    // What the numbers are computed from travels exactly; the link form is a fixed point.
    let shared = share::decode(&url).expect("opens").plan;
    let form = share::link_form(&plan);
    assert_eq!(shared, form);
    assert_eq!(share::link_form(&form), form);
    let (c, d) = (
        plan.calibration.as_ref().expect("calibrated"),
        shared.calibration.as_ref().expect("calibrated"),
    );
    assert_eq!(c.constants(&plan), d.constants(&shared));
    let loads =
        |c: &goodput_core::plan::Calibration| c.points.iter().map(|p| p.load).collect::<Vec<_>>();
    assert_eq!(loads(c), loads(d));
    let mut inputs = shared.clone();
    inputs.calibration.clone_from(&plan.calibration);
    inputs.shootout.clone_from(&plan.shootout);
    assert_eq!(
        inputs, plan,
        "only the calibration's figures and the comparison's rows change"
    );
    // The finance view's verdict is the same from the link.
    assert_eq!(
        goodput_core::shootout::comparison_words(&shared),
        goodput_core::shootout::comparison_words(&plan)
    );
}

#[test]
fn links_made_before_pipeline_stages_open_on_one_node_and_stages_travel() {
    // Every older link decodes to one stage on 8-GPU nodes, without a known network:
    // the step model it had.
    for case in read_corpus(include_str!("share_corpus/v1.txt")) {
        let shared = share::decode(&case.link).unwrap_or_else(|e| panic!("{}: {e}", case.title));
        let h = &shared.plan.hardware;
        assert_eq!((h.pp_degree, h.gpus_per_node), (1, 8), "{}", case.title);
        assert_eq!(h.scaleout_bytes_per_s, 0.0, "{}", case.title);
        let s = goodput_core::roofline::StepModel::from_plan(&shared.plan);
        assert_eq!(
            (s.pp_degree, s.pp_send_latency_s),
            (1, 0.0),
            "{}",
            case.title
        );
    }
    // A plan without stages writes neither the degree nor the node size.
    let json = serde_json::to_string(&Plan::default()).expect("encode");
    assert!(
        !json.contains("pp_degree") && !json.contains("gpus_per_node"),
        "{json}"
    );
    let mut plan = Plan::default();
    goodput_core::presets::gpu("gb200")
        .expect("gb200")
        .apply(&mut plan);
    plan.hardware.tp_degree = 4;
    plan.hardware.pp_degree = 3;
    let shared = share::decode(&share::share_url(BASE, &plan, false)).expect("decodes");
    assert_eq!(shared.plan, plan);
    assert_eq!(shared.plan.hardware.gpus_per_node, 72);
    assert_eq!(shared.plan.hardware.gpus_per_replica(), 12);
}
