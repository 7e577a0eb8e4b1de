//! Hooks: the reactive values several components read, each built once and shared as
//! context. One `use_x` per file, returning a `UseXReturn` struct.
//!
//! Hooks sit above the compute controllers and below the session, the components and
//! the views: they read signals and call the core, and render nothing.

pub mod use_report;
