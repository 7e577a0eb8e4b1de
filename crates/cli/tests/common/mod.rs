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

/// Runs `goodput` with `args` and the environment variables `env` set.
pub fn goodput_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_goodput"))
        .args(args)
        .envs(env.iter().copied())
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

/// A temporary file that removes itself; `name` tells the test's files apart.
pub struct TempFile(std::path::PathBuf);

impl TempFile {
    pub fn new(name: &str, body: &str) -> TempFile {
        let path = temp_path(name);
        std::fs::write(&path, body).expect("write temp file");
        TempFile(path)
    }

    pub fn path(&self) -> &str {
        self.0.to_str().expect("UTF-8 path")
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A temporary folder that removes itself with what is in it.
pub struct TempDir(std::path::PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        let path = temp_path(name);
        std::fs::create_dir_all(&path).expect("temp dir");
        TempDir(path)
    }

    /// Writes `body` to `name` in the folder; returns the file's path.
    pub fn file(&self, name: &str, body: &str) -> String {
        let p = self.path_of(name);
        std::fs::write(&p, body).expect("write");
        p
    }

    /// The path of `name` in the folder, written or not.
    pub fn path_of(&self, name: &str) -> String {
        self.0.join(name).to_str().expect("UTF-8 path").to_string()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A path in the system's temporary folder, unique to this test process.
fn temp_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("goodput-{}-{name}", std::process::id()))
}
