//! What a calibration leaves in a plan: the fitted constants with their uncertainty,
//! where the measurements came from, how far the fit can be trusted, and the measured
//! points themselves (for the calibration's chart and errors). The fit is
//! `calibrate`'s.

use super::{Plan, MAX_SPEC_DRAFT_TOKENS};
use crate::tagged::Tagged;
use serde::{Deserialize, Serialize};

/// A fit of the step model to measurements, and where it came from.
///
/// The fitted constants scale the plan's own hardware figures, so the calibration
/// stays meaningful when the price or the engine settings change; it describes one
/// model on one GPU type and TP degree, named in [`CalibrationSource`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Calibration {
    /// Apply the fit; off plans with the datasheet constants (the fit is kept).
    pub enabled: bool,
    /// Achieved share of `hardware.mem_bandwidth_bytes_per_s` [0..].
    pub bandwidth_efficiency: Fitted,
    /// Achieved share of `hardware.compute_flops_per_s` [0..].
    pub compute_efficiency: Fitted,
    /// Fixed per-step overhead; replaces `hardware.step_overhead_s` [s].
    pub step_overhead_s: Fitted,
    /// Scheduling time per sequence in a step, when fitted; replaces
    /// `hardware.seq_overhead_s` (None: the plan's own; calibrations made before this
    /// constant existed) [s/sequence].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq_overhead_s: Option<Fitted>,
    /// Per-request frontend time, when fitted; replaces `engine.frontend_s` (None: the
    /// plan's own) [s].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frontend_s: Option<Fitted>,
    /// Extra time of a step with prompt tokens, when fitted; replaces
    /// `hardware.prefill_overhead_s` (None: the plan's own) [s].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill_overhead_s: Option<Fitted>,
    /// KV-read bandwidth relative to the weight reads, when fitted; replaces
    /// `hardware.kv_read_efficiency` (None: the plan's own) [0..].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_read_efficiency: Option<Fitted>,
    /// Where the measurements came from.
    pub source: CalibrationSource,
    /// Errors of the fit.
    pub error: CalibrationError,
    /// The measured points, summarised, so an overlay can be redrawn anywhere.
    pub points: Vec<MeasuredSummary>,
}

impl Calibration {
    /// The fitted constants as the step model applies them, with the plan's own
    /// per-sequence and frontend times where the fit left them out.
    pub fn constants(&self, plan: &Plan) -> goodput_engine::step::FittedConstants {
        goodput_engine::step::FittedConstants {
            bandwidth_efficiency: self.bandwidth_efficiency.value,
            compute_efficiency: self.compute_efficiency.value,
            step_overhead_s: self.step_overhead_s.value,
            seq_overhead_s: self
                .seq_overhead_s
                .map_or(plan.hardware.seq_overhead_s, |f| f.value),
            frontend_s: self.frontend_s.map_or(plan.engine.frontend_s, |f| f.value),
            prefill_overhead_s: self
                .prefill_overhead_s
                .map_or(plan.hardware.prefill_overhead_s, |f| f.value),
            kv_read_efficiency: self
                .kv_read_efficiency
                .map_or(plan.hardware.kv_read_efficiency, |f| f.value),
        }
    }

    /// Whether the constants' spread (`sd`) was estimated: bootstrap refits need two
    /// measured points or more; with one, every refit sees the same point.
    pub fn spread_estimated(&self) -> bool {
        self.points.len() >= 2
    }
}

impl Default for Calibration {
    fn default() -> Self {
        Calibration {
            enabled: true,
            bandwidth_efficiency: Fitted::exact(1.0),
            compute_efficiency: Fitted::exact(1.0),
            step_overhead_s: Fitted::exact(1e-3),
            seq_overhead_s: None,
            frontend_s: None,
            prefill_overhead_s: None,
            kv_read_efficiency: None,
            source: CalibrationSource::default(),
            error: CalibrationError::default(),
            points: Vec::new(),
        }
    }
}

/// A fitted constant with its uncertainty.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Fitted {
    /// The best fit.
    pub value: f64,
    /// Standard deviation over bootstrap refits of the measured points (0 when unknown).
    pub sd: f64,
}

impl Fitted {
    /// A value with no uncertainty stated.
    pub fn exact(value: f64) -> Fitted {
        Fitted { value, sd: 0.0 }
    }
}

/// Where a calibration's measurements came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct CalibrationSource {
    /// File names, as given.
    pub files: Vec<String>,
    /// The benchmark tool that wrote them (`vllm bench serve`, `guidellm`, `csv`).
    pub tool: String,
    /// The model named in the files, when they name one.
    pub model: String,
    /// The serving engine or backend named in the files, when they name one.
    pub engine: String,
    /// The plan's model preset when it was calibrated.
    pub fitted_model: String,
    /// The plan's GPU preset when it was calibrated.
    pub fitted_gpu: String,
    /// The plan's tensor-parallel degree when it was calibrated (0 = not recorded).
    pub fitted_tp_degree: u32,
    /// Speculative decoding as the measured server ran it (the counters of every run
    /// together), when the files say it drafted; the fit simulated each run with its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<SpecMeasured>,
}

impl Calibration {
    /// Why this calibration may not describe `plan`'s model and hardware (another
    /// model, GPU or TP degree than it was fitted on), in plain words; `None` when it
    /// matches or nothing was recorded.
    pub fn mismatch(&self, plan: &Plan) -> Option<String> {
        let s = &self.source;
        let mut diffs = Vec::new();
        if !s.fitted_model.is_empty() && s.fitted_model != plan.model.preset {
            diffs.push(format!(
                "model {} (plan: {})",
                s.fitted_model, plan.model.preset
            ));
        }
        if !s.fitted_gpu.is_empty() && s.fitted_gpu != plan.hardware.preset {
            diffs.push(format!(
                "GPU {} (plan: {})",
                s.fitted_gpu, plan.hardware.preset
            ));
        }
        if s.fitted_tp_degree > 0 && s.fitted_tp_degree != plan.hardware.tp_degree {
            diffs.push(format!(
                "TP {} (plan: {})",
                s.fitted_tp_degree, plan.hardware.tp_degree
            ));
        }
        (!diffs.is_empty()).then(|| {
            format!(
                "the calibration was fitted on {}: its constants may not hold here; calibrate again with measurements of this setup, or switch the calibration off",
                diffs.join(", ")
            )
        })
    }
}

/// How far a calibration can be trusted: mean absolute percentage errors [0..].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct CalibrationError {
    /// In sample: fitted on every point, error on the same points.
    pub in_sample: MetricErrors,
    /// Held out: each point predicted by a fit made without it (leave-one-out); `None`
    /// with a single measured point, where nothing can be held out.
    pub held_out: Option<MetricErrors>,
    /// Fit light, predict heavy: the heavier half of the loads predicted by a fit made
    /// on the lighter half, where a plan's knee usually lies; `None` with one point (and
    /// in calibrations made before it was measured).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extrapolation: Option<MetricErrors>,
    /// The datasheet constants' error on the same points, for comparison.
    pub uncalibrated: MetricErrors,
}

/// Mean absolute percentage error per metric, over every statistic the files give [0..];
/// `None` for a metric no file gives (a table without an end-to-end column).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct MetricErrors {
    /// Time to first token.
    pub ttft: Option<f64>,
    /// Time per output token.
    pub tpot: Option<f64>,
    /// End-to-end latency.
    pub e2e: Option<f64>,
    /// All of them together.
    pub overall: f64,
}

/// How a measured point loaded the server.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum MeasuredLoad {
    /// Open loop at a request rate, with gamma gaps of this CV (1 = Poisson).
    Rate {
        /// Offered rate [requests/s].
        rate_rps: f64,
        /// Coefficient of variation of the gaps.
        cv: f64,
    },
    /// Closed loop with this many clients.
    Concurrency {
        /// Clients.
        concurrency: u32,
    },
}

impl<'de> Deserialize<'de> for MeasuredLoad {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut t = Tagged::read(d)?;
        Ok(match t.kind() {
            "rate" => MeasuredLoad::Rate {
                rate_rps: t.field("rate_rps")?,
                cv: t.field("cv")?,
            },
            "concurrency" => MeasuredLoad::Concurrency {
                concurrency: t.field("concurrency")?,
            },
            _ => return Err(t.unknown(&["rate", "concurrency"])),
        })
    }
}

/// One measured load point, reduced to what the overlay and the fit need. Latencies in
/// seconds; a statistic the file did not give is `None`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasuredSummary {
    /// The load.
    pub load: MeasuredLoad,
    /// Completed requests per second, as measured [requests/s].
    pub achieved_rps: f64,
    /// Mean TTFT [s].
    pub ttft_mean_s: Option<f64>,
    /// Median TTFT [s].
    pub ttft_p50_s: Option<f64>,
    /// 99th-percentile TTFT [s].
    pub ttft_p99_s: Option<f64>,
    /// Mean TPOT [s].
    pub tpot_mean_s: Option<f64>,
    /// Median TPOT [s].
    pub tpot_p50_s: Option<f64>,
    /// 99th-percentile TPOT [s].
    pub tpot_p99_s: Option<f64>,
    /// Mean end-to-end latency [s].
    pub e2e_mean_s: Option<f64>,
    /// Median end-to-end latency [s].
    pub e2e_p50_s: Option<f64>,
    /// 99th-percentile end-to-end latency [s].
    pub e2e_p99_s: Option<f64>,
}

/// What a benchmark measured of speculative decoding over its run: the server's draft
/// counters between its start and end (`vllm bench serve`'s `spec_decode_num_drafts`,
/// `spec_decode_draft_tokens` and `spec_decode_accepted_tokens`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpecMeasured {
    /// Drafts verified (one per decoding sequence per step that drafted).
    pub drafts: u64,
    /// Tokens drafted.
    pub draft_tokens: u64,
    /// Drafted tokens the target model accepted.
    pub accepted_tokens: u64,
}

impl SpecMeasured {
    /// Tokens drafted per step (`k`), the nearest whole number, from 1 to
    /// [`MAX_SPEC_DRAFT_TOKENS`] (the longest draft the simulator runs); 0 for a run that
    /// measured no draft.
    pub fn draft_len(&self) -> u32 {
        if self.drafts == 0 {
            return 0;
        }
        let k = (self.draft_tokens as f64 / self.drafts as f64).round();
        k.clamp(1.0, f64::from(MAX_SPEC_DRAFT_TOKENS)) as u32
    }

    /// Tokens a decoding sequence gained per step: `1 + accepted / drafts` (vLLM's
    /// "acceptance length").
    pub fn tokens_per_step(&self) -> f64 {
        1.0 + self.accepted_tokens as f64 / self.drafts.max(1) as f64
    }

    /// Share of drafted tokens accepted (vLLM's "acceptance rate", as a fraction).
    pub fn acceptance_rate(&self) -> f64 {
        self.accepted_tokens as f64 / self.draft_tokens.max(1) as f64
    }

    /// The per-token acceptance the simulator's draft model (each drafted token
    /// accepted with one probability, in order) needs to gain
    /// [`SpecMeasured::tokens_per_step`] with [`SpecMeasured::draft_len`] drafted.
    pub fn acceptance(&self) -> f64 {
        goodput_engine::config::acceptance_for(self.draft_len(), self.tokens_per_step())
    }

    /// The counters of several runs together; `None` when none drafted.
    pub fn total<'a>(runs: impl IntoIterator<Item = &'a SpecMeasured>) -> Option<SpecMeasured> {
        runs.into_iter().fold(None, |acc, s| {
            let a = acc.unwrap_or(SpecMeasured {
                drafts: 0,
                draft_tokens: 0,
                accepted_tokens: 0,
            });
            Some(SpecMeasured {
                drafts: a.drafts + s.drafts,
                draft_tokens: a.draft_tokens + s.draft_tokens,
                accepted_tokens: a.accepted_tokens + s.accepted_tokens,
            })
        })
    }
}
