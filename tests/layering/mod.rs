//! The checker behind the layering tests of the app (`tests/layers.rs`), the core, the
//! engine and the CLI (`crates/*/tests/layers.rs`).
//!
//! It reads every file of a library's `src/` (`main.rs` and `bin/` are separate crates),
//! collects the modules each one names through `crate::` and `super::` paths, and finds
//! two things:
//!
//! - **A cycle between files**, with its files in order.
//! - **Layer breaches.** Every top-level module has a rank in the caller's layers, and a
//!   module may only name modules of a lower rank. A new top-level module must be given
//!   its rank.
//!
//! Doc comments count (a doc link is an import for the reader); other comments do not.
//! Unit tests may look back: a `mod tests` (inline, or a `tests.rs` file) is left out,
//! as a test of a low module may build its inputs with the modules above it. The parser relies on rustfmt's layout
//! (an inline `mod x {` closes with a `}` at the same indentation), which
//! `cargo fmt --check` guarantees.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The module path of a file: `src/a/b.rs` is `a::b`; `lib.rs` is the crate root.
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs");
    if stem != "lib" && stem != "mod" {
        parts.push(stem.to_string());
    }
    parts
}

/// The library's files, by path relative to `src/`.
fn library_files(dir: &Path, rel: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .expect("src is readable")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().expect("name").to_owned();
        let rel = rel.join(&name);
        if path.is_dir() {
            if rel != Path::new("bin") {
                library_files(&path, &rel, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") && rel != Path::new("main.rs") {
            out.push(rel);
        }
    }
}

/// The file that defines the longest prefix of `path` among `files` (by module path).
fn file_of(path: &[String], files: &BTreeMap<Vec<String>, PathBuf>) -> Option<PathBuf> {
    (1..=path.len())
        .rev()
        .find_map(|n| files.get(&path[..n]).cloned())
}

/// The `a::b::c` segments that follow `at` in `line` (lower-case identifiers only: a
/// module path stops at the first type, function or brace).
fn segments_after(line: &str, at: usize) -> Vec<String> {
    let mut out = Vec::new();
    for seg in line[at..].split("::") {
        let ident: String = seg
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
            .collect();
        if ident.is_empty() {
            break;
        }
        let whole = ident.len() == seg.len();
        out.push(ident);
        if !whole {
            break;
        }
    }
    out
}

/// The start of the first `use` group of a `crate::`, `super::` or `self::` path in `s`
/// (`crate::a::{`), and the index of its brace.
fn first_group(s: &str) -> Option<(usize, usize)> {
    let path_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':';
    ["crate::", "super::", "self::"]
        .iter()
        .flat_map(|root| s.match_indices(root).map(|(at, _)| at))
        .filter(|&at| {
            !s[..at]
                .chars()
                .last()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
        })
        .filter_map(|at| {
            let end = at + s[at..].find(|c: char| !path_char(c))?;
            (s[at..end].ends_with("::") && s[end..].starts_with('{')).then_some((at, end))
        })
        .min()
}

/// `use` groups spelled out, nested ones too: `crate::a::{b::C, self, d}` becomes
/// `crate::a::b::C, crate::a, crate::a::d` on one line, so that each path is read like
/// any other.
fn expand_groups(source: &str) -> String {
    let mut s = source.to_string();
    while let Some((start, open)) = first_group(&s) {
        let mut depth = 0;
        let mut close = None;
        for (i, c) in s[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(open + i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else { break };
        let prefix = s[start..open].to_string();
        let mut items = Vec::new();
        let (mut depth, mut from) = (0, open + 1);
        for (i, c) in s[open + 1..close].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    items.push(s[from..open + 1 + i].to_string());
                    from = open + 2 + i;
                }
                _ => {}
            }
        }
        items.push(s[from..close].to_string());
        let expanded = items
            .iter()
            .map(|it| it.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|it| !it.is_empty())
            .map(|it| match it.as_str() {
                "self" => prefix.trim_end_matches("::").to_string(),
                _ => format!("{prefix}{it}"),
            })
            .collect::<Vec<_>>()
            .join(", ");
        s.replace_range(start..=close, &expanded);
    }
    s
}

/// The module paths a file names, resolved to absolute module paths.
pub fn named_modules(source: &str, module: &[String]) -> Vec<Vec<String>> {
    let source = &expand_groups(source);
    let mut out = Vec::new();
    // Inline modules open inside the file: (indentation of the `mod` line, its name).
    let mut inline: Vec<(usize, String)> = Vec::new();
    for line in source.lines() {
        let indent = line.len() - line.trim_start().len();
        let trimmed = line.trim_start();
        if let Some((open_indent, _)) = inline.last() {
            if trimmed.starts_with('}') && indent == *open_indent {
                inline.pop();
                continue;
            }
        }
        if is_plain_comment(trimmed) || inline.iter().any(|(_, m)| m == "tests") {
            continue;
        }
        let here: Vec<String> = module
            .iter()
            .cloned()
            .chain(inline.iter().map(|(_, m)| m.clone()))
            .collect();
        for (at, _) in line.match_indices("crate::") {
            // `goodput_core::x` is another crate, not ours.
            let before = line[..at].chars().last();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            out.push(segments_after(line, at + "crate::".len()));
        }
        for (at, _) in line.match_indices("super::") {
            let before = line[..at].chars().last();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let mut base = here.clone();
            base.pop();
            let mut rest = segments_after(line, at + "super::".len());
            while rest.first().is_some_and(|s| s == "super") {
                rest.remove(0);
                base.pop();
            }
            out.push(base.into_iter().chain(rest).collect());
        }
        let words: Vec<&str> = trimmed.split_whitespace().collect();
        let mod_at = usize::from(words.first().is_some_and(|w| w.starts_with("pub")));
        if words.get(mod_at) == Some(&"mod") && trimmed.ends_with('{') {
            if let Some(name) = words.get(mod_at + 1) {
                inline.push((indent, name.trim_end_matches('{').to_string()));
            }
        }
    }
    out
}

/// File → the files it names, outside its own module, for the library under `src`.
pub fn file_graph(src: &Path) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let mut rels = Vec::new();
    library_files(src, Path::new(""), &mut rels);
    assert!(
        rels.len() >= 10,
        "found only {} files in {}",
        rels.len(),
        src.display()
    );
    let files: BTreeMap<Vec<String>, PathBuf> =
        rels.iter().map(|r| (module_of(r), r.clone())).collect();
    rels.iter()
        .filter(|rel| !module_of(rel).iter().any(|m| m == "tests"))
        .map(|rel| {
            let source = fs::read_to_string(src.join(rel)).expect("readable");
            let module = module_of(rel);
            // A module owns the modules declared inside it: naming them is containment,
            // not a dependency between layers (`charts` draws with `charts::attainment`,
            // which uses the shared palette of `charts`).
            let targets = named_modules(&source, &module)
                .iter()
                .filter_map(|p| file_of(p, &files).or_else(|| names_root(p, &files)))
                .filter(|t| !module_of(t).starts_with(&module))
                .collect();
            (rel.clone(), targets)
        })
        .collect()
}

/// What stands for the crate root (`lib.rs` or `main.rs`) among a file's targets: it
/// declares every module, so every module is below it.
pub const ROOT: &str = "(the crate root)";

/// The root, when `path` names an item of the crate root itself (`crate::command()` in
/// a module of a binary): a path whose first segment is no module.
fn names_root(path: &[String], files: &BTreeMap<Vec<String>, PathBuf>) -> Option<PathBuf> {
    let first = path.first()?;
    (!files.keys().any(|k| k.first() == Some(first))).then(|| PathBuf::from(ROOT))
}

/// A cycle in `graph`, as its files in order, if there is one.
pub fn find_cycle(graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Option<Vec<PathBuf>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    fn visit(
        node: &PathBuf,
        graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        marks: &mut BTreeMap<PathBuf, Mark>,
        stack: &mut Vec<PathBuf>,
    ) -> Option<Vec<PathBuf>> {
        marks.insert(node.clone(), Mark::Open);
        stack.push(node.clone());
        for next in graph.get(node).into_iter().flatten() {
            match marks.get(next).copied().unwrap_or(Mark::New) {
                Mark::Open => {
                    let from = stack.iter().position(|n| n == next).expect("on the stack");
                    return Some(stack[from..].to_vec());
                }
                Mark::New => {
                    if let Some(c) = visit(next, graph, marks, stack) {
                        return Some(c);
                    }
                }
                Mark::Done => {}
            }
        }
        stack.pop();
        marks.insert(node.clone(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for node in graph.keys() {
        if marks.get(node).copied().unwrap_or(Mark::New) == Mark::New {
            if let Some(c) = visit(node, graph, &mut marks, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

/// The top-level module of a file (`components/cards.rs` → `components`).
pub fn top(rel: &Path) -> String {
    module_of(rel)
        .first()
        .cloned()
        .unwrap_or_else(|| "lib".into())
}

/// The cycle in the library under `src`, in words, if there is one; and a check that the
/// parser found imports at all.
pub fn cycle_in(src: &Path) -> Option<String> {
    let graph = file_graph(src);
    let edges: usize = graph.values().map(BTreeSet::len).sum();
    assert!(
        edges >= graph.len(),
        "found only {edges} imports: is the parser broken?"
    );
    find_cycle(&graph).map(|cycle| {
        let names: Vec<_> = cycle.iter().map(|p| p.display().to_string()).collect();
        format!(
            "import cycle: {} → {}",
            names.join(" → "),
            names.first().expect("a cycle has a file")
        )
    })
}

/// Every use of a module of the same or a higher layer (`layers` lowest first), and
/// every top-level module without a layer, in words.
pub fn layer_violations(src: &Path, layers: &[&[&str]], test_file: &str) -> Vec<String> {
    let rank: BTreeMap<&str, usize> = layers
        .iter()
        .enumerate()
        .flat_map(|(i, layer)| layer.iter().map(move |m| (*m, i)))
        .collect();
    let mut wrong = Vec::new();
    for (from, targets) in file_graph(src) {
        let from_top = top(&from);
        if from_top == "lib" {
            continue;
        }
        let Some(&r_from) = rank.get(from_top.as_str()) else {
            wrong.push(format!(
                "{from_top} is not in LAYERS: give it a rank in {test_file}"
            ));
            continue;
        };
        for to in targets {
            if to == Path::new(ROOT) {
                wrong.push(format!(
                    "{} uses an item of {ROOT}, which every module is below",
                    from.display()
                ));
                continue;
            }
            let to_top = top(&to);
            if to_top == from_top {
                continue;
            }
            match rank.get(to_top.as_str()) {
                Some(&r_to) if r_to < r_from => {}
                _ => wrong.push(format!(
                    "{} uses {} ({from_top} may only use lower layers)",
                    from.display(),
                    to.display()
                )),
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    wrong
}

/// A comment that is not documentation: doc comments (`///`, `//!`) count, as a doc link
/// is an import for the reader, and should point down the stack too.
fn is_plain_comment(line: &str) -> bool {
    line.starts_with("//") && !line.starts_with("///") && !line.starts_with("//!")
}

/// Panics with the cycle or the layer breaches of the library under `src`, if any.
pub fn assert_layered(src: &Path, layers: &[&[&str]], test_file: &str) {
    if let Some(cycle) = cycle_in(src) {
        panic!("{cycle}");
    }
    let wrong = layer_violations(src, layers, test_file);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
