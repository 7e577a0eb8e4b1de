//! The app's modules depend one way: no cycle between the files of `src/`, and every
//! top-level module uses only the layers below its own (the checker is
//! `tests/layering/mod.rs`, shared with the core's `crates/core/tests/layers.rs`).

mod layering;

use layering::{cycle_in, layer_violations, named_modules};
use std::path::{Path, PathBuf};

/// The layers, lowest first: a module may use the modules of lower layers only.
const LAYERS: &[&[&str]] = &[
    // Plain values and drawing, over the core only.
    &["route", "state", "charts", "saved"],
    // A plan in words (its title, its setup, its SLO), over the core only.
    &["summary"],
    // Pure decisions over those values, and the controllers that run the core's jobs.
    &["url_state", "compute"],
    // Acting on the controllers' answers: applying the sweep's settings, following its best.
    &["tuning"],
    // Files the user takes away.
    &["export"],
    // Reactive values shared by many components, built once.
    &["hooks"],
    // The plan's life in the address bar, local storage and undo.
    &["session"],
    &["components"],
    &["views"],
    &["app"],
];

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn the_files_of_src_form_no_cycle() {
    if let Some(cycle) = cycle_in(&src_dir()) {
        panic!("{cycle}");
    }
}

#[test]
fn every_module_uses_only_lower_layers() {
    let wrong = layer_violations(&src_dir(), LAYERS, "tests/layers.rs");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_parser_resolves_crate_and_super_paths() {
    let module = vec!["compute".to_string(), "shootout".to_string()];
    let source = "use crate::state::PlanState;\n\
                  use super::pool::{Pool, Task};\n\
                  use goodput_core::search::Job;\n\
                  // use crate::views::finance;\n\
                  #[cfg(test)]\n\
                  mod tests {\n    use super::*;\n    use super::super::protocol::Request;\n}\n\
                  use super::protocol::handle;\n\
                  use crate::{charts::Theme, hooks::{use_report::R, session}};\n\
                  /// Drawn as [`crate::views::finance`] draws it.\n\
                  pub(crate) mod inner {\n    use super::super::summary::Words;\n}\n";
    let named = named_modules(source, &module);
    let as_text: Vec<String> = named.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        as_text,
        // The test module's `super::` paths are left out: unit tests may look back. A
        // group names each of its paths (nested ones too); a doc link counts; `super::`
        // inside a `pub(crate) mod` starts from that module.
        [
            "state",
            "compute::pool",
            "compute::pool",
            "compute::protocol::handle",
            "charts",
            "hooks::use_report",
            "hooks::session",
            "views::finance",
            "compute::summary"
        ]
    );
}
