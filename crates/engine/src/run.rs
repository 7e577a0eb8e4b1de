//! The simulator's entry points: one replica ([`crate::engine`]), or a fleet behind a
//! router ([`crate::fleet`]) when the configuration has more than one replica.
//!
//! ```text
//!   run ─▶ fleet ─▶ engine        (a fleet's replicas are engines)
//!     └──────────▶ engine        (one replica)
//! ```

use crate::config::{SimConfig, SimReport};
use crate::engine::{report, run_one, Outcome};

/// One run: the fleet's when `cfg` routes over replicas, else one replica's.
fn run<const FULL: bool>(cfg: &SimConfig, seed: u64) -> Outcome {
    if cfg.fleet.is_routed() {
        crate::fleet::run::<FULL>(cfg, seed)
    } else {
        run_one::<FULL>(cfg, seed)
    }
}

/// Runs the fast path: attainment only. `cfg` must have passed `goodput_core::sim`'s
/// checks (`SimConfigOf::check`), which keep a run from panicking or spinning.
pub fn run_attainment(cfg: &SimConfig, seed: u64) -> f64 {
    run::<false>(cfg, seed).attainment(cfg)
}

/// [`run_attainment`], with the most sequences that ran at once. When that peak is below
/// `cfg.max_num_seqs`, the cap never held back an admission, so the run is the same,
/// step for step, under any cap above the peak.
pub fn run_attainment_peak(cfg: &SimConfig, seed: u64) -> (f64, u32) {
    let o = run::<false>(cfg, seed);
    (
        o.attainment(cfg),
        o.peak_running.min(u32::MAX as u64) as u32,
    )
}

/// [`run_attainment_peak`], with each traffic class's attainment under its own
/// objectives, in [`SimConfig::classes`] order (empty with one class).
pub fn run_attainment_peak_classes(cfg: &SimConfig, seed: u64) -> (f64, u32, Vec<f64>) {
    let o = run::<false>(cfg, seed);
    (
        o.attainment(cfg),
        o.peak_running.min(u32::MAX as u64) as u32,
        o.class_attainments(cfg),
    )
}

/// Runs the full path and builds the report. `cfg` must have passed the same checks.
pub fn run_full(cfg: &SimConfig, seed: u64) -> SimReport {
    report(cfg, run::<true>(cfg, seed))
}

/// [`run_full`] through the fleet's router even with one replica (`cfg.fleet.replicas`
/// of them, at least one): the replicas then stop at every arrival for the router to
/// look at them. With one replica the report is [`run_full`]'s, bit for bit (a test
/// holds it), which is what shows that those stops change nothing.
pub fn run_full_routed(cfg: &SimConfig, seed: u64) -> SimReport {
    report(cfg, crate::fleet::run::<true>(cfg, seed))
}
