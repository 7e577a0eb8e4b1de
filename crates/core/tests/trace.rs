//! Trace import on small hand-written fixtures of each format, broken rows included.

use goodput_core::plan::LengthDist;
use goodput_core::schedule::RateProfile;
use goodput_core::trace::{summarize_reader, TraceFormat, TraceSummarizer};
use goodput_core::Plan;

fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/trace/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(path).expect("fixture")
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn azure_csv() {
    let s = summarize_reader(&fixture("azure.csv")[..], None).unwrap();
    assert_eq!(s.format, TraceFormat::Azure);
    assert_eq!((s.rows, s.bad_rows), (5, 3));
    let lines: Vec<u64> = s.bad_examples.iter().map(|b| b.line).collect();
    assert_eq!(lines, vec![5, 6, 8]);
    assert!(s.bad_examples[0].reason.contains("not a number"));
    assert!(s.bad_examples[1].reason.contains("2 fields"));
    assert!(s.bad_examples[2].reason.contains("TIMESTAMP"));
    assert_eq!(s.hourly_count[18], 3);
    assert_eq!(s.hourly_count[19], 2);
    assert!(close(s.prompt.mean, 2234.0));
    assert!(close(s.output.mean, 47.4));
    assert_eq!((s.prompt.min, s.prompt.max), (110, 4808));
    // 18:17:03.97996 to 19:59:59.
    assert!((s.span_s - 6175.02004).abs() < 1e-5, "span {}", s.span_s);
    assert!((s.hourly_covered_s[18] - 2576.02004).abs() < 1e-5);
    assert!((s.hourly_covered_s[19] - 3599.0).abs() < 1e-6);
    assert!(close(s.hourly_rate_rps[19].unwrap(), 2.0 / 3599.0));
    assert_eq!(s.hourly_rate_rps[3], None);
    // Under two hours of trace cannot make a day's profile.
    let e = RateProfile::from_trace(&s).unwrap_err().to_string();
    assert!(e.contains("covers 2 of 24 hours"), "{e}");
    // 4808 tokens fall in [4096, 8192): bin 13.
    assert_eq!(s.prompt.histogram[13], 1);
    assert_eq!(s.prompt.histogram.iter().sum::<u64>(), 5);
    assert!(s.prefix.is_none());
}

#[test]
fn burstgpt_csv_with_crlf_and_failures() {
    let s = summarize_reader(&fixture("burstgpt.csv")[..], None).unwrap();
    assert_eq!(s.format, TraceFormat::BurstGpt);
    assert_eq!((s.rows, s.bad_rows), (5, 2));
    assert_eq!(s.bad_examples[0].line, 6);
    assert!(s.bad_examples[0].reason.contains("seconds"));
    assert_eq!(s.bad_examples[1].line, 7);
    assert!(s.bad_examples[1].reason.contains("whole number"));
    // A failed request (0 response tokens) arrives but has no output length.
    assert_eq!(s.zero_output_rows, 1);
    assert_eq!(s.output.count, 4);
    assert!(close(s.output.mean, 409.75));
    assert!(close(s.prompt.mean, 799.2));
    assert_eq!(&s.hourly_count[..3], &[3, 1, 1]);
    assert!(close(s.span_s, 7295.0));
}

#[test]
fn mooncake_jsonl_and_prefix_reuse() {
    let s = summarize_reader(&fixture("mooncake.jsonl")[..], None).unwrap();
    assert_eq!(s.format, TraceFormat::Mooncake);
    assert_eq!((s.rows, s.bad_rows), (4, 2));
    assert_eq!(s.bad_examples[0].line, 4);
    assert!(s.bad_examples[0].reason.contains("Mooncake JSON"));
    assert_eq!(s.bad_examples[1].line, 5);
    // Milliseconds: the last row is one hour in.
    assert!(close(s.span_s, 3600.0));
    assert_eq!(&s.hourly_count[..2], &[3, 1]);
    let p = s.prefix.clone().unwrap();
    assert_eq!(p.block_tokens, 512);
    assert_eq!(p.blocks, 14 + 15 + 3 + 2);
    assert!(close(p.block_reuse, 5.0 / 34.0));
    // Rows 2 and 3 start with a seen block: one block (512 tokens), and three blocks
    // capped at the prompt minus one (1,099 tokens).
    assert!(close(p.hit_rate, 0.5));
    assert!(close(p.mean_hit_prefix_tokens, 805.5));
    assert!(close(p.token_reuse, 1611.0 / 15774.0));
    assert!(!p.saturated);

    let mut plan = Plan::default();
    let changed = s.apply_to(&mut plan);
    assert_eq!(changed.len(), 3, "{changed:?}");
    assert_eq!(plan.traffic.prefix_hit_rate, 0.5);
    assert_eq!(plan.traffic.prefix_tokens, 806);
    let LengthDist::LogNormal { median, .. } = plan.traffic.prompt.dist else {
        panic!("a lognormal fit");
    };
    // Geometric mean of 6755, 7319, 1100, 600.
    let g = (6755f64.ln() + 7319f64.ln() + 1100f64.ln() + 600f64.ln()) / 4.0;
    assert!(close(median, g.exp()));
    assert_eq!(
        (plan.traffic.prompt.min, plan.traffic.prompt.max),
        (600, 7319)
    );
    plan.validate().unwrap();
}

#[test]
fn a_named_format_and_a_broken_stream() {
    // Told it is Mooncake, a CSV is all bad rows: an error that names the first.
    let e = summarize_reader(&fixture("azure.csv")[..], Some(TraceFormat::Mooncake)).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("no readable rows (9 bad; line 1:"),
        "{e}"
    );
    // Bytes that are not UTF-8 are one bad row, not the end.
    let mut s = TraceSummarizer::new();
    s.feed(b"Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n");
    s.feed(b"1,GPT-4,10,\xff\xfe,20,API log\n2,GPT-4,10,10,20,API log");
    let s = s.finish().unwrap();
    assert_eq!((s.rows, s.bad_rows), (1, 1));
    assert!(s.bad_examples[0].reason.contains("UTF-8"));
}
