//! goodput-engine: the simulator's hot path, in a crate of its own so that it can be
//! optimised for speed while the rest of the planner is optimised for size (the web
//! page's module builds this crate at opt-level 3 and `goodput-core` at "z"; see the
//! workspace's `profile.page` and BENCHMARKS.md, "Wasm payload").
//!
//! ```text
//!   kinds (arrival, lengths, SLO mode, KV policy) ─▶ traffic ─▶ engine ─▶ stats
//!   step (roofline step time) ────────────────────────────────▲
//!   rng (xoshiro256++, ziggurat samplers) ─▶ traffic
//!   fleet (replicas behind a router) ─▶ engine
//!   run (one replica, or a fleet) ─▶ fleet, engine
//! ```
//!
//! `goodput-core` builds a [`config::SimConfig`] from a plan, checks it and runs it
//! (`goodput_core::sim`); it re-exports the types here where the planner's code has
//! always found them (`goodput_core::plan::Arrival`, `goodput_core::rng::Rng`, …).
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod cache;
pub mod config;
pub mod engine;
pub mod fleet;
pub mod kinds;
pub mod rng;
pub mod run;
pub mod stats;
pub mod step;
pub mod tagged;
pub mod traffic;
