//! Running the `goodput` binary as a user would, for the integration tests.
//!
//! Each test binary compiles this module on its own and may not use every helper.
#![allow(dead_code)]

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs `goodput` with `args` and collects its exit status, stdout and stderr.
pub fn goodput(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_goodput"))
        .args(args)
        .output()
        .expect("the goodput binary runs")
}

/// Runs `goodput` with `args`, writing `stdin` to its standard input.
pub fn goodput_stdin(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_goodput"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the goodput binary runs");
    let mut pipe = child.stdin.take().expect("stdin is piped");
    // The binary may stop reading early (e.g. at its size limit); a closed pipe is fine.
    let _ = pipe.write_all(stdin);
    drop(pipe);
    child
        .wait_with_output()
        .expect("the goodput binary finishes")
}

/// The stdout of a successful run; fails the test with stderr when the run failed.
pub fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}, stderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).expect("UTF-8 output")
}

/// The stdout of a successful run, parsed as JSON.
pub fn json(out: &Output) -> serde_json::Value {
    serde_json::from_str(&stdout(out)).expect("JSON output")
}

/// A clean failure: exit code 2, nothing on stdout, exactly one `goodput: …` line on
/// stderr, no panic. Returns the stderr line; `what` names the case in messages.
pub fn failure(out: &Output, what: &str) -> String {
    assert!(!out.status.success(), "{what}: should fail");
    assert_eq!(out.status.code(), Some(2), "{what}: exit code");
    assert!(out.stdout.is_empty(), "{what}: printed to stdout");
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(err.lines().count(), 1, "{what}: stderr {err:?}");
    assert!(err.starts_with("goodput: "), "{what}: {err:?}");
    assert!(!err.contains("panicked"), "{what}: {err:?}");
    err
}
