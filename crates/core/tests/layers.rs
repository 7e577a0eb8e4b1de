//! The core's modules depend one way, as `lib.rs` draws them: no cycle between the files
//! of `src/`, and every top-level module uses only the layers below its own (the checker
//! is the app's `tests/layering/mod.rs`, shared).

#![cfg(not(target_arch = "wasm32"))]

#[path = "../../../tests/layering/mod.rs"]
mod layering;

use std::path::{Path, PathBuf};

/// The layers, lowest first: a module may use the modules of lower layers only.
const LAYERS: &[&[&str]] = &[
    // Leaves: formatting, splitting table text into cells, hashing, random numbers, summaries, the engine's traffic, the
    // lengths' means, the model's kinds, the tagged-enum reader.
    &[
        "format",
        "cells",
        "digest",
        "rng",
        "stats",
        "traffic",
        "lengths",
        "model_kinds",
        "tagged",
    ],
    // The data catalogues: models and GPUs, and the GPUs' published prices.
    &["presets", "prices"],
    // The plan: every input, its fields and their checks.
    &["plan"],
    // What reads a plan alone: step time, SLO checks, links, traces, alerts, memory fit.
    &["roofline", "slo", "share", "trace", "alerts", "fleet"],
    // The simulator, and the closed-form companions beside it.
    &["sim", "analytic"],
    // Measured runs, and the goodput search.
    &["measure", "search"],
    // Fitting constants to runs; sizing a fleet.
    &["calibrate", "capacity"],
    // What is worked out from a goodput: the day, the router's saving, the checks
    // against public runs, comparing plans.
    &["schedule", "router_gain", "validate", "compare"],
    // The plan's report.
    &["report"],
    // What runs many reports: the GPU comparison, disaggregation.
    &["shootout", "disagg"],
];

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn the_core_is_a_one_way_stack() {
    layering::assert_layered(&src_dir(), LAYERS, "crates/core/tests/layers.rs");
}
