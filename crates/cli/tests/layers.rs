//! The CLI's modules depend one way: the commands over the shared flags, input and
//! progress (the checker is the app's `tests/layering/mod.rs`, shared).

#[path = "../../../tests/layering/mod.rs"]
mod layering;

use std::path::Path;

/// The layers, lowest first: a module may use the modules of lower layers only.
const LAYERS: &[&[&str]] = &[
    // Reading files and links; progress on the terminal.
    &["input", "progress"],
    // The flags every command shares, and the plan they build.
    &["args"],
    // Commands that stand alone, and the search the others run.
    &["search", "completions", "link", "presets_cmd", "simulate"],
    // Commands over the search.
    &[
        "alerts",
        "calibrate",
        "capacity",
        "disagg",
        "plan_cmd",
        "schedule",
        "shootout",
        "sweep",
        "validate",
    ],
];

#[test]
fn the_cli_is_a_one_way_stack() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    layering::assert_layered(&src, LAYERS, "crates/cli/tests/layers.rs");
}
