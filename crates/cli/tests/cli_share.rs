//! `goodput link` and `goodput decode`, run as a user would run them.

mod common;

use common::{failure, goodput, goodput_stdin, stdout, TempDir};

#[test]
fn link_then_decode_round_trips_the_plan() {
    let url = stdout(&goodput(&[
        "link",
        "--max-num-seqs",
        "96",
        "--weight-dtype",
        "fp8",
        "--peak-rate",
        "42.5",
        "--seed",
        "18446744073709551615",
    ]));
    let url = url.trim();
    let v = goodput_core::share::CURRENT_VERSION;
    assert!(
        url.starts_with(&format!("http://127.0.0.1:8080/#p={v}")),
        "{url}"
    );
    assert!(url.len() < 1000, "{} chars", url.len());
    let json = stdout(&goodput(&["decode", url]));
    let plan: goodput_core::Plan = serde_json::from_str(&json).expect("decode prints a plan");
    assert_eq!(plan.engine.max_num_seqs, 96);
    assert_eq!(plan.model.weight_dtype, goodput_core::plan::Dtype::Fp8);
    assert_eq!(plan.traffic.peak_rate_rps, 42.5);
    assert_eq!(plan.run.seed, u64::MAX);

    // decode's output is a plan file: linking it again gives the same link.
    let dir = TempDir::new("share");
    let file = dir.file("plan.json", &json);
    let again = stdout(&goodput(&["link", "--plan", &file]));
    assert_eq!(again.trim(), url);
    // So does the plan piped in: `goodput decode URL | goodput link --plan -`.
    let piped = stdout(&goodput_stdin(&["link", "--plan", "-"], json.as_bytes()));
    assert_eq!(piped.trim(), url);
    let err = failure(
        &goodput_stdin(
            &["link", "--plan", "-"],
            b"{\"engine\": {\"max_num_seq\": 3}}",
        ),
        "a misspelt field on stdin",
    );
    assert!(
        err.contains("--plan: stdin is not a valid plan: unknown field \"engine.max_num_seq\""),
        "{err}"
    );
}

#[test]
fn link_flags_base_url_and_embed() {
    let url = stdout(&goodput(&[
        "link",
        "--base-url",
        "https://planner.example/app/",
        "--embed",
    ]));
    let v = goodput_core::share::CURRENT_VERSION;
    assert!(url
        .trim()
        .starts_with(&format!("https://planner.example/app/#p={v}")));
    assert!(url.trim().ends_with("&embed"));
    let from_stdin = stdout(&goodput_stdin(&["decode", "-"], url.as_bytes()));
    let from_arg = stdout(&goodput(&["decode", url.trim()]));
    assert_eq!(from_stdin, from_arg);
}

#[test]
fn link_refuses_what_no_page_could_open() {
    let scheme = failure(
        &goodput(&["link", "--base-url", "javascript:alert(1)"]),
        "a javascript: base",
    );
    assert!(
        scheme.contains("--base-url: must start with https://"),
        "{scheme}"
    );
    // A plan whose name alone is over the JSON a link may inflate to.
    let plan = goodput_core::Plan {
        name: "n".repeat(goodput_core::share::MAX_JSON_BYTES + 1),
        ..Default::default()
    };
    let dir = TempDir::new("big-link");
    let file = dir.file("plan.json", &serde_json::to_string(&plan).expect("json"));
    let err = failure(&goodput(&["link", "--plan", &file]), "a huge plan");
    assert!(err.contains("too large for a link"), "{err}");
}

#[test]
fn hostile_links_fail_with_one_line() {
    // 30,000 zero bytes: a stored block whose length check fails, 40 kB long.
    let zeros = format!("#p=1z{}", "A".repeat(40_000));
    let cases: Vec<(&str, String)> = vec![
        ("empty", String::new()),
        ("address only", "https://planner.example/".into()),
        ("future version", "https://planner.example/#p=7dAAAA".into()),
        ("bad base64", "#p=1dAB+C".into()),
        ("corrupt deflate", "#p=1z_____w".into()),
        ("long zeros", zeros),
        ("markup", "#p=<script>alert(1)</script>".into()),
        (
            "newlines in a JSON error",
            "#p=1jeyJlbmdpbmUiOnsia3ZfcG9saWN5IjoiYVxuYlxyXHUyMDI4YyJ9fQ".into(),
        ),
    ];
    for (what, link) in &cases {
        let err = failure(&goodput(&["decode", link]), what);
        assert!(err.contains("decode:"), "{what}: {err}");
    }
    let huge = "A".repeat(200_000);
    let err = failure(&goodput_stdin(&["decode", "-"], huge.as_bytes()), "huge");
    // Stdin is read only up to the limit, so the message gives the limit, not a length.
    assert_eq!(err.trim(), "goodput: decode: stdin is larger than 64 KiB");
    let err = failure(&goodput_stdin(&["decode", "-"], &[0xff, 0xfe]), "binary");
    assert!(err.contains("UTF-8"), "{err}");
    failure(&goodput(&["decode"]), "no link");
    failure(&goodput(&["link", "--bogus"]), "unknown flag");
    failure(&goodput(&["link", "--max-num-seqs", "lots"]), "bad number");
}
