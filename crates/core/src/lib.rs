//! goodput-core: the numbers behind the goodput capacity planner.
//!
//! The modules form a one-way stack: each uses only the layers below it
//! (`tests/layers.rs` keeps it so; unit tests may look back).
//!
//! ```text
//!   shootout (GPU × layout comparison)    disagg (prefill and decode pools, xPyD)
//!        └──────────────┬──────────────────────┘
//!   report (the plan's report: goodput, fleet, cost, alerts, the day, the router's saving)
//!        │
//!   schedule (hourly profile, autoscaler)  router_gain   validate (public runs)   compare
//!        │
//!   capacity (replicas, cost)     calibrate (fit constants to measured runs)
//!        │                                   │
//!   search (goodput, knob sweep)       measure (vllm bench / GuideLLM files)
//!        │
//!   sim (continuous-batching DES)      analytic (closed-form checks)
//!        │
//!   roofline (step time)   slo   share (Plan ⇄ URL fragment)   trace (Azure, BurstGPT,
//!   Mooncake)   alerts   fleet (memory fit)
//!        │
//!   plan (every input, its fields and checks; the day's and the comparison's specs)
//!        │
//!   presets (model and GPU catalogue)   prices (published GPU prices)
//!        │
//!   format, cells, lengths, model_kinds, digest, rng, stats, traffic, tagged (leaves)
//! ```
//!
//! Everything numeric lives here; the web app and the CLI only call it. The simulator's
//! hot path (the engine, traffic, step time, summaries, random numbers) is the
//! `goodput-engine` crate, which this one re-exports at its own paths (`sim`, `traffic`,
//! `stats`, `rng`, `roofline::StepModel`, the plan's arrival, length, trace-row, SLO-mode and KV-policy
//! kinds).
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod alerts;
pub mod analytic;
pub mod calibrate;
pub mod capacity;
pub mod cells;
pub mod compare;
pub mod digest;
pub mod disagg;
pub mod fleet;
pub mod format;
pub mod lengths;
pub mod measure;
pub mod model_kinds;
pub mod plan;
pub mod presets;
pub mod prices;
pub mod report;
pub mod rng;
pub mod roofline;
pub mod router_gain;
pub mod schedule;
pub mod search;
pub mod share;
pub mod shootout;
pub mod sim;
pub mod slo;
pub mod stats;
mod tagged;
pub mod trace;
pub mod traffic;
pub mod validate;

pub use plan::Plan;
