//! goodput-core: the numbers behind the goodput capacity planner.
//!
//! ```text
//!   Plan ──validate──▶ roofline (step time) ──▶ sim (continuous-batching DES)
//!                                                   │
//!                        search (goodput, knob sweep) ◀┘
//!                                   │
//!                        capacity (replicas, cost) ──▶ report
//!   disagg: prefill and decode pools with KV transfer, simulated instance by
//!   instance; the cheapest xPyD against the aggregated fleet
//!   share: Plan ⇄ compact URL fragment (versioned)
//!   trace (Azure / BurstGPT / Mooncake, streamed) ──▶ schedule (hourly profile,
//!   autoscaler, static vs autoscaled cost, ramp simulations)
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
pub mod compare;
pub mod digest;
pub mod disagg;
pub mod fleet;
pub mod format;
pub mod measure;
pub mod plan;
pub mod presets;
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
