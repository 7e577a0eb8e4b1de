//! The engine's modules depend one way, as `lib.rs` draws them (the checker is the
//! app's `tests/layering/mod.rs`, shared).

#![cfg(not(target_arch = "wasm32"))]

#[path = "../../../tests/layering/mod.rs"]
mod layering;

use std::path::Path;

/// The layers, lowest first: a module may use the modules of lower layers only.
const LAYERS: &[&[&str]] = &[
    // Leaves: the prefix cache, random numbers, summaries, step time, the tagged reader.
    &["cache", "rng", "stats", "step", "tagged"],
    // Arrival, length, SLO-mode and KV-policy kinds.
    &["kinds"],
    // Requests drawn from the kinds.
    &["traffic"],
    // One simulation's configuration.
    &["config"],
    // One replica's continuous-batching engine.
    &["engine"],
    // Replicas behind a router.
    &["fleet"],
    // The entry points: one replica, or a fleet.
    &["run"],
];

#[test]
fn the_engine_is_a_one_way_stack() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    layering::assert_layered(&src, LAYERS, "crates/engine/tests/layers.rs");
}
