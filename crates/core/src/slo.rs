//! SLO classes: starting objectives per product surface, and attainment percentiles.
//!
//! The presets are engineering starting points, not standards: each one fills a
//! [`SloSpec`] that the user may then edit field by field. The percentile choice
//! (p90, p95, p99) sets the attainment target: "p95 TTFT ≤ 0.8 s" means 95% of
//! requests meet it, so the joint attainment target becomes 0.95.

use crate::plan::SloSpec;
use serde::{Deserialize, Serialize};

/// Which share of requests must meet the objectives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Percentile {
    /// 90% of requests.
    #[default]
    P90,
    /// 95% of requests.
    P95,
    /// 99% of requests.
    P99,
}

impl Percentile {
    /// Every choice, strictest last.
    pub const ALL: [Percentile; 3] = [Percentile::P90, Percentile::P95, Percentile::P99];

    /// The joint attainment target this percentile stands for [0..1].
    pub fn attainment_target(self) -> f64 {
        match self {
            Percentile::P90 => 0.90,
            Percentile::P95 => 0.95,
            Percentile::P99 => 0.99,
        }
    }

    /// The short name (`p90`, `p95`, `p99`).
    pub fn name(self) -> &'static str {
        match self {
            Percentile::P90 => "p90",
            Percentile::P95 => "p95",
            Percentile::P99 => "p99",
        }
    }

    /// Parses `p90`/`p95`/`p99` (or `90`, `95`, `99`).
    pub fn parse(text: &str) -> Option<Percentile> {
        match text.trim().trim_start_matches(['p', 'P']) {
            "90" => Some(Percentile::P90),
            "95" => Some(Percentile::P95),
            "99" => Some(Percentile::P99),
            _ => None,
        }
    }

    /// The percentile whose target equals `attainment` (to 1e-9), if any.
    pub fn from_target(attainment: f64) -> Option<Percentile> {
        Percentile::ALL
            .into_iter()
            .find(|p| (p.attainment_target() - attainment).abs() < 1e-9)
    }
}

/// One SLO class preset.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SloClass {
    /// Id stored in [`SloSpec::class`] (`chat`, `code`, `voice`, `agent`, `summarization`, `batch`).
    pub id: &'static str,
    /// Human name.
    pub label: &'static str,
    /// Default TTFT objective [s]; `None` = no TTFT objective.
    pub ttft_s: Option<f64>,
    /// Range of sensible TTFT objectives for this surface [s], for display.
    pub ttft_range_s: Option<(f64, f64)>,
    /// Default TPOT objective [s]; `None` = no TPOT objective.
    pub tpot_s: Option<f64>,
    /// Range of sensible TPOT objectives for this surface [s], for display.
    pub tpot_range_s: Option<(f64, f64)>,
    /// One-line rationale.
    pub note: &'static str,
}

/// The six SLO classes, in display order.
pub const SLO_CLASSES: [SloClass; 6] = [
    SloClass {
        id: "chat",
        label: "Chat",
        ttft_s: Some(0.5),
        ttft_range_s: Some((0.5, 1.5)),
        tpot_s: Some(0.025),
        tpot_range_s: Some((0.025, 0.05)),
        note: "streamed to a reader; faster than reading speed is wasted",
    },
    SloClass {
        id: "code",
        label: "Code completion",
        ttft_s: Some(0.2),
        ttft_range_s: Some((0.15, 0.4)),
        tpot_s: Some(0.03),
        tpot_range_s: Some((0.03, 0.03)),
        note: "short outputs that race the user's typing",
    },
    SloClass {
        id: "voice",
        label: "Voice",
        ttft_s: Some(0.3),
        ttft_range_s: Some((0.3, 0.5)),
        tpot_s: Some(0.025),
        tpot_range_s: Some((0.02, 0.04)),
        note: "speech synthesis consumes the tokens; TTFT dominates",
    },
    SloClass {
        id: "agent",
        label: "Agent step",
        ttft_s: Some(1.0),
        ttft_range_s: Some((1.0, 1.0)),
        tpot_s: None,
        tpot_range_s: None,
        note: "nothing is streamed to a person; set an end-to-end budget instead of TPOT",
    },
    SloClass {
        id: "summarization",
        label: "Summarization",
        ttft_s: Some(2.0),
        ttft_range_s: Some((2.0, 5.0)),
        tpot_s: Some(0.05),
        tpot_range_s: Some((0.05, 0.1)),
        note: "long prompts make prefill expensive",
    },
    SloClass {
        id: "batch",
        label: "Batch",
        ttft_s: None,
        ttft_range_s: None,
        tpot_s: None,
        tpot_range_s: None,
        note: "no latency objective: optimise throughput on separate capacity",
    },
];

/// The preset with this id, if any.
pub fn slo_class(id: &str) -> Option<&'static SloClass> {
    SLO_CLASSES.iter().find(|c| c.id == id)
}

impl SloClass {
    /// The SLO this class gives at the chosen percentile; edit the fields afterwards as needed.
    pub fn to_spec(&self, percentile: Percentile) -> SloSpec {
        SloSpec {
            class: self.id.to_string(),
            ttft_s: self.ttft_s,
            tpot_s: self.tpot_s,
            e2e_s: None,
            attainment_target: percentile.attainment_target(),
            ..SloSpec::default()
        }
    }

    /// Whether the class has any latency objective at all (batch has none).
    pub fn has_objective(&self) -> bool {
        self.ttft_s.is_some() || self.tpot_s.is_some()
    }
}

/// Whether an SLO has at least one latency objective; without one goodput is unbounded.
pub fn has_objective(slo: &SloSpec) -> bool {
    slo.ttft_s.is_some() || slo.tpot_s.is_some() || slo.e2e_s.is_some()
}

/// Whether an SLO judges the time a request waits in the queue: a TTFT or an
/// end-to-end objective. A TPOT objective alone judges only the stream after the first
/// token, which an engine past saturation still delivers at its batch's pace while its
/// queue grows without end, so every rate would meet it and goodput has no bound.
pub fn bounds_waiting(slo: &SloSpec) -> bool {
    slo.ttft_s.is_some() || slo.e2e_s.is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_map_to_targets() {
        assert_eq!(Percentile::P90.attainment_target(), 0.90);
        assert_eq!(Percentile::P95.attainment_target(), 0.95);
        assert_eq!(Percentile::P99.attainment_target(), 0.99);
        assert_eq!(Percentile::parse("p95"), Some(Percentile::P95));
        assert_eq!(Percentile::parse("99"), Some(Percentile::P99));
        assert_eq!(Percentile::parse("p50"), None);
        assert_eq!(Percentile::from_target(0.99), Some(Percentile::P99));
        assert_eq!(Percentile::from_target(0.92), None);
    }

    #[test]
    fn chat_preset_is_the_default_plan_slo() {
        let chat = slo_class("chat").expect("chat exists");
        assert_eq!(chat.to_spec(Percentile::P90), SloSpec::default());
    }

    #[test]
    fn every_class_is_consistent() {
        for c in SLO_CLASSES {
            if let (Some(t), Some((lo, hi))) = (c.ttft_s, c.ttft_range_s) {
                assert!(lo <= t && t <= hi, "{}", c.id);
            }
            if let (Some(t), Some((lo, hi))) = (c.tpot_s, c.tpot_range_s) {
                assert!(lo <= t && t <= hi, "{}", c.id);
            }
            assert_eq!(slo_class(c.id), Some(&c));
        }
        assert!(!slo_class("batch").expect("batch").has_objective());
        assert!(slo_class("agent").expect("agent").tpot_s.is_none());
        let spec = slo_class("voice").expect("voice").to_spec(Percentile::P99);
        assert_eq!(spec.attainment_target, 0.99);
        assert!(has_objective(&spec));
    }
}
