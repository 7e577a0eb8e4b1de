//! Effects only look outward: each one the app creates is listed here with the part of
//! the world outside it serves (the DOM, the address, the frame around an embed), and
//! none writes a signal in its body. State that follows other state is a memo, or a step
//! of the controller that owns it, told by `PlanState::on_edit` or
//! `RunController::on_result`/`on_end`. A new effect fails this test until it is listed,
//! which is the moment to ask whether it should be one.

use std::fs;
use std::path::{Path, PathBuf};

/// Every effect of `src/`: the file, how many it creates, and what outside it they serve.
const EFFECTS: &[(&str, usize, &str)] = &[
    (
        "components/chart_canvas.rs",
        2,
        "a resize observer on the canvas; the drawing of the chart onto the canvas",
    ),
    (
        "views/embed.rs",
        1,
        "a resize observer that posts the card's height to the page framing it",
    ),
    (
        "session.rs",
        1,
        "the plan and view written into the address",
    ),
];

/// What creates an effect.
const CREATORS: &[&str] = &[
    "Effect::new(",
    "Effect::new_sync(",
    "Effect::new_isomorphic(",
    "Effect::watch(",
    "RenderEffect::new(",
    "ImmediateEffect::new(",
];

/// The calls that write a signal (of a `RwSignal`, a `WriteSignal`, a `Trigger`).
const WRITES: &[&str] = &[
    ".set(",
    ".update(",
    ".try_set(",
    ".try_update(",
    ".maybe_update(",
    ".set_untracked(",
    ".update_untracked(",
    ".write()",
    ".notify()",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("src is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The text between the parenthesis that opens at `open` and the one that closes it,
/// skipping string and character literals and comments; `None` when it never closes.
fn call_argument(text: &str, open: usize) -> Option<&str> {
    let bytes = text.as_bytes();
    let (mut depth, mut i) = (0usize, open);
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                while i + 1 < bytes.len() && !(bytes[i] == b'*' && bytes[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            // A character literal ('(', '\''); a lifetime ('a) has no closing quote.
            b'\'' if bytes.get(i + 2) == Some(&b'\'') => i += 2,
            b'\'' if bytes.get(i + 1) == Some(&b'\\') && bytes.get(i + 3) == Some(&b'\'') => i += 3,
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&text[open + 1..i]);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Each effect created in `text`: its line and the body it is given.
fn effects_in(text: &str) -> Vec<(usize, &str)> {
    let mut found = Vec::new();
    for creator in CREATORS {
        let mut from = 0;
        while let Some(at) = text[from..].find(creator).map(|i| i + from) {
            from = at + creator.len();
            // `RenderEffect::new(` also holds `Effect::new(`: count it once. A comment
            // that names a creator creates nothing.
            let before = &text[..at];
            let line_start = before.rfind('\n').map_or(0, |i| i + 1);
            if before.ends_with("Render")
                || before.ends_with("Immediate")
                || before[line_start..].contains("//")
            {
                continue;
            }
            let line = before.matches('\n').count() + 1;
            let body = call_argument(text, at + creator.len() - 1).unwrap_or("");
            found.push((line, body));
        }
    }
    found
}

/// The signal writes in an effect's body.
fn writes_in(body: &str) -> Vec<&'static str> {
    WRITES
        .iter()
        .copied()
        .filter(|w| body.contains(w))
        .collect()
}

#[test]
fn every_effect_is_listed_and_writes_no_signal() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut problems = Vec::new();
    let mut seen = Vec::new();
    for path in &files {
        let text = fs::read_to_string(path).expect("a source file");
        let name = path
            .strip_prefix(&src)
            .expect("under src")
            .to_string_lossy()
            .replace('\\', "/");
        let effects = effects_in(&text);
        if effects.is_empty() {
            continue;
        }
        let listed = EFFECTS.iter().find(|(f, _, _)| *f == name);
        match listed {
            None => problems.push(format!(
                "src/{name} creates {} effect(s) not listed in tests/effects.rs",
                effects.len()
            )),
            Some((_, n, _)) if *n != effects.len() => problems.push(format!(
                "src/{name} creates {} effect(s); tests/effects.rs lists {n}",
                effects.len()
            )),
            Some(_) => seen.push(name.clone()),
        }
        for (line, body) in effects {
            let writes = writes_in(body);
            if !writes.is_empty() {
                problems.push(format!(
                    "src/{name}:{line}: an effect writes a signal ({})",
                    writes.join(", ")
                ));
            }
        }
    }
    for (f, _, _) in EFFECTS {
        if !seen.iter().any(|s| s == f) && !problems.iter().any(|p| p.contains(f)) {
            problems.push(format!(
                "tests/effects.rs lists src/{f}, which creates none"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_reader_finds_an_effect_and_a_write_in_its_body() {
    let text = r#"
        fn a() {
            // Effect::new( in a comment creates nothing.
            Effect::new(move |_| {
                let label = "a ) in a string";
                let close = ')'; /* ) in a comment */
                shown.set(label.len());
            });
            RenderEffect::new(move |_| canvas.draw());
        }
    "#;
    let effects = effects_in(text);
    assert_eq!(effects.len(), 2, "{effects:?}");
    let bodies: Vec<Vec<&str>> = effects.iter().map(|(_, b)| writes_in(b)).collect();
    assert!(bodies.iter().any(|w| w == &vec![".set("]), "{bodies:?}");
    assert!(
        effects
            .iter()
            .any(|(_, b)| b.trim() == "move |_| canvas.draw()"),
        "{effects:?}"
    );
}
