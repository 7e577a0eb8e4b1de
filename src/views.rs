//! Whole pages besides the planner: the finance summary a shared link opens, the
//! embeddable card, and the side-by-side comparison of two plans.

pub mod compare;
pub mod embed;
pub mod finance;
