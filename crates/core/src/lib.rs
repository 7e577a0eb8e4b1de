//! goodput-core: the numbers behind the goodput capacity planner.
//!
//! ```text
//!   Plan ──validate──▶ roofline (step time) ──▶ sim (continuous-batching DES)
//!                                                   │
//!                        search (goodput, knob sweep) ◀┘
//!                                   │
//!                        capacity (replicas, cost) ──▶ report
//!   share: Plan ⇄ compact URL fragment (versioned)
//! ```
//!
//! Everything numeric lives here; the web app and the CLI only call it.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod plan;
pub mod roofline;

pub use plan::Plan;
