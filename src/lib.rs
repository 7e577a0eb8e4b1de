//! The goodput web app: thin Leptos components over `goodput-core`.
//!
//! ```text
//!   App ── PlanState (draft → good plan) ──┬─ memos: roofline, analytic, alerts (instant, in core)
//!    │                                     └─ RunController ── worker pool ── core search jobs
//!    ├─ view: Planner (inputs column │ results column) | Finance | Embed | Compare
//!    └─ Session: plan ⇄ address fragment (url_state), autosave and named plans (saved)
//! ```
//!
//! Modules depend one way, lowest first (checked by `tests/layers.rs`):
//!
//! ```text
//!   core ← {route, state, charts, saved} ← {url_state, summary, tuning, compute}
//!        ← export ← hooks ← session ← components ← views ← app
//! ```
//!
//! Components only read signals, call the core and render; every number comes from
//! `goodput-core`. A controller whose work an event makes stale hears the event from the
//! state that owns it (`PlanState::on_edit`, `RunController::on_result` and `on_end`)
//! rather than from an effect watching a signal: the run driver itself follows the good
//! plan that way (`RunController::follow`). Effects are kept for the world outside (the
//! address, canvases and the frame that embeds the page), and none writes a
//! signal (checked by `tests/effects.rs`). Charts are plain data builders plus drawing
//! functions generic over the plotters backend (`charts`), so they render to a canvas here
//! and to SVG elsewhere.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod app;
pub mod charts;
pub mod components;
pub mod compute;
pub mod export;
pub mod hooks;
pub mod route;
pub mod saved;
pub mod session;
pub mod state;
pub mod summary;
pub mod tuning;
pub mod url_state;
pub mod views;

pub use app::{page, App, AppContext, Booted};
