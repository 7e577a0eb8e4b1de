//! `goodput link` and `goodput decode`: a plan to a share link and back.
//!
//! `decode` prints only the plan, as pretty JSON, so its output is a plan file:
//! `goodput decode URL > plan.json && goodput link --plan plan.json` prints the
//! same plan's link again.

use goodput_core::share;

use clap::{Arg, Command};

use crate::args::{json, switch, text_flag, Args};
use crate::input::read_text;

/// Where the planner is served by `trunk serve`; links point there unless told otherwise.
pub const DEFAULT_BASE_URL: &str = "http://127.0.0.1:8080/";

/// `goodput link` and its own flags; the plan flags are added from the registry.
pub fn link_command() -> Command {
    Command::new("link")
        .about("print a share link for the plan (--base-url URL)")
        .long_about("Prints a share link that carries the whole plan after '#'.")
        .arg(text_flag(
            "base-url",
            "URL",
            format!("Address of the planner (default {DEFAULT_BASE_URL})"),
        ))
        .arg(switch(
            "embed",
            "Add '&embed': the compact read-only card for an <iframe>",
        ))
        .arg(json(
            "Print {\"url\", \"payload\", \"chars\", \"version\"} instead of the bare link",
        ))
}

/// `goodput decode` and its flags.
pub fn decode_command() -> Command {
    Command::new("decode")
        .about("print the plan inside a share link as JSON")
        .long_about(
            "Prints the plan inside a share link as pretty JSON (a plan file for --plan). \
             URL may be a whole link, its fragment, or '-' to read the link from stdin. \
             A bad link exits non-zero with a one-line message.",
        )
        .arg(
            Arg::new("url")
                .value_name("URL")
                .num_args(0..)
                .help("The link, its fragment, or '-' for stdin"),
        )
        .arg(json(
            "Accepted like on every other command: the output is JSON either way",
        ))
}

/// `goodput link`: prints the share link for the plan.
pub fn run_link(args: &mut Args) -> Result<String, String> {
    let base = args
        .value("--base-url")
        .unwrap_or_else(|| DEFAULT_BASE_URL.to_string());
    if base.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("--base-url: must not contain spaces or control characters".into());
    }
    if !(base.starts_with("https://") || base.starts_with("http://")) {
        return Err(format!(
            "--base-url: must start with https:// or http:// (where the app is served), got {base:?}"
        ));
    }
    let embed = args.flag("--embed");
    let json = args.flag("--json");
    let plan = args.plan()?;
    let payload = share::encode_checked(&plan).map_err(|e| e.to_string())?;
    let url = share::url_of(&base, &payload, embed);
    if !json {
        return Ok(url);
    }
    let report = serde_json::json!({
        "url": url,
        "payload": payload,
        "chars": url.chars().count(),
        "version": share::CURRENT_VERSION,
    });
    serde_json::to_string_pretty(&report).map_err(|e| format!("link: {e}"))
}

/// `goodput decode URL`: prints the plan in a share link as pretty JSON.
pub fn run_decode(args: &mut Args) -> Result<String, String> {
    // The output is JSON either way; `--json` is accepted like on every other command.
    let mut positionals = args.positionals("url");
    if positionals.len() > 1 {
        return Err(format!(
            "decode: expected one link, got {}; quote the link if it contains '&'",
            positionals.len()
        ));
    }
    let Some(arg) = positionals.pop() else {
        return Err("decode: missing the link; usage: goodput decode URL".into());
    };
    let text = if arg == "-" {
        read_text("decode", "-", share::MAX_LINK_BYTES as u64)?
    } else {
        arg
    };
    let shared = share::decode(&text).map_err(|e| format!("decode: {e}"))?;
    serde_json::to_string_pretty(&shared.plan).map_err(|e| format!("decode: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The arguments of `goodput LINE`.
    fn args(line: &str) -> Args {
        args_of(line.split_whitespace().map(String::from).collect())
    }

    fn args_of(argv: Vec<String>) -> Args {
        crate::parse(argv).expect("parses").expect("a command").1
    }

    #[test]
    fn link_then_decode_gives_the_plan_back() {
        let url = run_link(&mut args(
            "link --max-num-seqs 64 --base-url https://p.example/x/",
        ))
        .expect("link");
        let v = goodput_core::share::CURRENT_VERSION;
        assert!(
            url.starts_with(&format!("https://p.example/x/#p={v}")),
            "{url}"
        );
        let json = run_decode(&mut args_of(vec!["decode".into(), url])).expect("decode");
        let plan: goodput_core::Plan = serde_json::from_str(&json).expect("plan JSON");
        assert_eq!(plan.engine.max_num_seqs, 64);
    }

    #[test]
    fn json_report_of_a_link() {
        let out = run_link(&mut args("link --json")).expect("link");
        let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
        let url = v["url"].as_str().expect("url");
        assert_eq!(v["chars"].as_u64(), Some(url.len() as u64));
        assert_eq!(
            v["version"].as_u64(),
            Some(goodput_core::share::CURRENT_VERSION.into())
        );
        assert!(url.ends_with(v["payload"].as_str().expect("payload")));
        let plan = run_decode(&mut args_of(vec![
            "decode".into(),
            url.to_string(),
            "--json".into(),
        ]))
        .expect("decode");
        assert!(plan.contains("\"max_num_seqs\": 128"), "{plan}");
    }

    #[test]
    fn embed_flag_and_default_base() {
        let url = run_link(&mut args("link --embed")).expect("link");
        assert!(url.starts_with(DEFAULT_BASE_URL));
        assert!(url.ends_with("&embed"));
    }

    #[test]
    fn errors_are_one_line() {
        let e = run_decode(&mut args("decode https://h/#p=9zAAAA")).unwrap_err();
        assert!(e.starts_with("decode: ") && !e.contains('\n'), "{e}");
        let e = run_decode(&mut args("decode")).unwrap_err();
        assert!(e.contains("missing the link"), "{e}");
        let e = run_decode(&mut args("decode a b")).unwrap_err();
        assert!(e.contains("expected one link"), "{e}");
        let e = run_link(&mut args_of(vec![
            "link".into(),
            "--base-url".into(),
            "a\nb".into(),
        ]))
        .unwrap_err();
        assert!(e.starts_with("--base-url:"), "{e}");
    }
}
