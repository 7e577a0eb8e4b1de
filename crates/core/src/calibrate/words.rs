//! A calibration in words: the verdict, the cautions that travel with the plan, the
//! sentence for finance and the constants for engineers (the CLI's text report is in
//! `text`).

use serde::{Deserialize, Serialize};

use super::MAX_OVERHEAD_S;
use crate::format::{ms, percent_tenths, percent_whole, plain, MISSING};
use crate::plan::{Calibration, MeasuredLoad, Plan, SpecMeasured};

/// A plan's calibration in words: one source for the report, the finance view, the
/// embed card and the CLI, so they never disagree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CalibrationWords {
    /// Where the fit came from and how well it matched, for finance, e.g. "Calibrated
    /// from 8 vllm bench serve measurements (Llama-3.1-70B-Instruct-FP8): predictions
    /// missed measured latency by 8% on average on held-out runs (datasheet constants: 27%)."
    pub sentence: String,
    /// A few words for a badge: `calibrated · held-out error 8%`, or `datasheet constants`.
    pub badge: String,
    /// The fitted constants, for engineers: "Fitted: 81% of the datasheet memory
    /// bandwidth, 69% of its compute, 3.1 ms fixed per step."
    pub constants: String,
}

/// A share as a whole percentage ("under 1%" below half a percent).
pub(crate) fn pct_whole(x: f64) -> String {
    if x < 0.005 {
        "under 1%".into()
    } else {
        percent_whole(x)
    }
}

/// The error a verdict judges: the larger of the held-out (leave-one-out) and the
/// extrapolation ("fit light, predict heavy") errors over every metric; `None` with
/// one point.
pub fn judged_error(c: &Calibration) -> Option<f64> {
    let held = c.error.held_out.map(|h| h.overall)?;
    Some(match c.error.extrapolation {
        Some(x) if x.overall > held => x.overall,
        _ => held,
    })
}

/// Held-out error up to which a fit is called good [0..].
pub const GOOD_FIT_ERROR: f64 = 0.10;
/// Held-out error up to which a fit is called fair; above it, poor [0..].
pub const FAIR_FIT_ERROR: f64 = 0.20;

/// How far a calibration's predictions can be trusted, judged on runs each fit did not
/// see: the larger of the held-out and the extrapolation errors ([`judged_error`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FitVerdict {
    /// Judged error at most [`GOOD_FIT_ERROR`].
    Good,
    /// Judged error at most [`FAIR_FIT_ERROR`].
    Fair,
    /// Judged error above [`FAIR_FIT_ERROR`].
    Poor,
    /// Held-out runs predicted no better than by the datasheet constants.
    NoBetter,
    /// One point: nothing was held out to judge the fit on.
    Unchecked,
}

impl FitVerdict {
    /// The verdict on `c`.
    pub fn of(c: &Calibration) -> FitVerdict {
        let Some(e) = judged_error(c) else {
            return FitVerdict::Unchecked;
        };
        if e >= c.error.uncalibrated.overall {
            FitVerdict::NoBetter
        } else if e <= GOOD_FIT_ERROR {
            FitVerdict::Good
        } else if e <= FAIR_FIT_ERROR {
            FitVerdict::Fair
        } else {
            FitVerdict::Poor
        }
    }

    /// A few words for a badge ("poor fit").
    pub fn label(self) -> &'static str {
        match self {
            FitVerdict::Good => "good fit",
            FitVerdict::Fair => "fair fit",
            FitVerdict::Poor => "poor fit",
            FitVerdict::NoBetter => "no better than the datasheet",
            FitVerdict::Unchecked => "not checked on held-out runs",
        }
    }

    /// Whether the plan's numbers should be read with care.
    pub fn is_weak(self) -> bool {
        !matches!(self, FitVerdict::Good | FitVerdict::Fair)
    }
}

/// What to check when a fit is weak: the usual ways measured runs and the plan differ.
const CHECK_THE_RUNS: &str = "check that the runs used the plan's model, GPU, tensor \
     parallelism and engine settings (max_num_seqs, token budget, chunked prefill), and \
     whether prefix caching or speculative decoding were on";

/// The verdict on a calibration in a sentence or two, with what to do about a weak one.
pub fn verdict_words(c: &Calibration) -> String {
    let v = FitVerdict::of(c);
    let held = judged_error(c).unwrap_or(0.0);
    match v {
        FitVerdict::Good => format!(
            "A good fit: held-out and extrapolation errors at most {} of measured latency.",
            pct_whole(GOOD_FIT_ERROR)
        ),
        FitVerdict::Fair => format!(
            "A fair fit: expect errors of {} to {} at loads like these; more measured rates \
             would tighten it.",
            pct_whole(GOOD_FIT_ERROR),
            pct_whole(FAIR_FIT_ERROR)
        ),
        FitVerdict::Poor => format!(
            "A poor fit: {} error {} (above {}). The model does not explain these runs \
             well; {CHECK_THE_RUNS}.",
            if c.error.extrapolation.is_some_and(|x| x.overall >= held) {
                "extrapolation (fit light, predict heavy)"
            } else {
                "held-out"
            },
            percent_tenths(held),
            pct_whole(FAIR_FIT_ERROR)
        ),
        FitVerdict::NoBetter => {
            let what_now = if c.enabled {
                ": it does not earn its place. Switch it off, or"
            } else {
                ", so it is switched off and the datasheet constants are in force;"
            };
            format!(
                "The fit predicts runs it did not see no better than the datasheet constants \
                 ({} against {}){what_now} {CHECK_THE_RUNS}.",
                percent_tenths(held),
                percent_tenths(c.error.uncalibrated.overall)
            )
        }
        FitVerdict::Unchecked => "Not checked: with one measured point nothing is held out, \
             and the constants' spread is not estimated."
            .to_string(),
    }
}

/// The highest fitted share of a datasheet figure taken at face value: a fit a few
/// percent above 100% is within what the points can tell.
pub const MAX_PLAUSIBLE_SHARE: f64 = 1.05;

/// Cautions a calibration carries with it wherever it goes (the plan, a link): fitted
/// constants the hardware cannot reach or that sit at the fit's limit. The verdict is
/// [`verdict_words`].
pub fn calibration_cautions(c: &Calibration) -> Vec<String> {
    let mut w = Vec::new();
    // The KV reads' own share of the datasheet bandwidth: the weights' share times how
    // fast KV streams beside the weights.
    let kv_share = c.kv_read_efficiency.map(|k| {
        (
            k.value * c.bandwidth_efficiency.value,
            "KV-cache reads' bandwidth",
        )
    });
    for (what, share) in [
        ("memory bandwidth", c.bandwidth_efficiency.value),
        ("compute", c.compute_efficiency.value),
    ]
    .into_iter()
    .chain(kv_share.map(|(s, what)| (what, s)))
    {
        if share > MAX_PLAUSIBLE_SHARE {
            w.push(format!(
                "the fit puts the {what} at {} of the datasheet, more than the GPU has: \
                 either the runs were on faster hardware than the plan's (check the GPU, the \
                 tensor parallelism, the weights' precision, and whether prefix caching or \
                 speculative decoding were on), or the points cannot tell it from the fixed \
                 per-step overhead, which fits the same latencies with less of it (runs at \
                 lower and higher loads tell them apart); the held-out error is what was \
                 checked, not each constant",
                pct_whole(share)
            ));
        }
    }
    if c.step_overhead_s.value >= MAX_OVERHEAD_S {
        w.push(format!(
            "the fitted step overhead sits at its limit of {} ms: something besides the \
             GPU slowed the runs (a busy host, the network, or a client that could not keep up)",
            ms(MAX_OVERHEAD_S)
        ));
    }
    w
}

/// The words for a calibration; see [`CalibrationWords`].
pub fn calibration_summary(c: &Calibration) -> CalibrationWords {
    let n = c.points.len();
    let tool = if c.source.tool.is_empty() {
        String::new()
    } else {
        format!("{} ", c.source.tool)
    };
    let noun = if n == 1 {
        "measurement"
    } else {
        "measurements"
    };
    let named: Vec<&str> = [c.source.model.as_str(), c.source.engine.as_str()]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect();
    let named = if named.is_empty() {
        String::new()
    } else {
        format!(" ({})", named.join(", "))
    };
    let from = format!("{n} {tool}{noun}{named}");
    let sheet = pct_whole(c.error.uncalibrated.overall);
    let constants = constants_words(c);
    if !c.enabled {
        return CalibrationWords {
            sentence: format!(
                "Calibrated from {from}, but the calibration is switched off: the numbers use \
                 the datasheet constants (their error on the measurements: {sheet})."
            ),
            badge: "datasheet constants".into(),
            constants,
        };
    }
    match c.error.held_out {
        Some(h) => {
            let verdict = FitVerdict::of(c);
            let weak = match verdict {
                FitVerdict::Poor => " A poor fit: read the numbers with care.",
                FitVerdict::NoBetter => {
                    " That is no better than the datasheet constants: read the numbers with care."
                }
                _ => "",
            };
            let tag = if verdict.is_weak() {
                format!(" ({})", verdict.label())
            } else {
                String::new()
            };
            let heavy = match c.error.extrapolation {
                Some(x) => format!(
                    ", and by {} on the heavier half of the loads when fitted on the lighter half",
                    pct_whole(x.overall)
                ),
                None => String::new(),
            };
            CalibrationWords {
                sentence: format!(
                    "Calibrated from {from}: predictions missed measured latency by {} on \
                     average on held-out runs{heavy} (datasheet constants: {sheet}).{weak}",
                    pct_whole(h.overall)
                ),
                badge: match c.error.extrapolation {
                    Some(_) => format!(
                        "calibrated · error up to {}{tag}",
                        pct_whole(judged_error(c).unwrap_or(h.overall))
                    ),
                    None => format!("calibrated · held-out error {}{tag}", pct_whole(h.overall)),
                },
                constants,
            }
        }
        None => CalibrationWords {
            sentence: format!(
                "Calibrated from {from}: predictions missed measured latency by {} on \
                 average on the measured run itself, which cannot be checked on held-out \
                 data (datasheet constants: {sheet}).",
                pct_whole(c.error.in_sample.overall)
            ),
            badge: format!(
                "calibrated · in-sample error {}",
                pct_whole(c.error.in_sample.overall)
            ),
            constants,
        },
    }
}

/// The fitted constants for engineers: "Fitted: 81% of the datasheet memory bandwidth,
/// 69% of its compute, 3.1 ms fixed per step, 12 µs per sequence, 38.0 ms frontend."
pub fn constants_words(c: &Calibration) -> String {
    let mut parts = vec![
        format!(
            "{} of the datasheet memory bandwidth",
            pct_whole(c.bandwidth_efficiency.value)
        ),
        format!("{} of its compute", pct_whole(c.compute_efficiency.value)),
        format!("{} ms fixed per step", ms(c.step_overhead_s.value)),
    ];
    if let Some(f) = c.seq_overhead_s {
        parts.push(format!(
            "{} µs per sequence",
            plain((f.value * 1e7).round() / 10.0)
        ));
    }
    if let Some(f) = c.kv_read_efficiency {
        parts.push(format!(
            "KV read at {} of the weights' speed",
            pct_whole(f.value)
        ));
    }
    if let Some(f) = c.prefill_overhead_s {
        parts.push(format!(
            "{} ms more per step with prompt tokens",
            ms(f.value)
        ));
    }
    if let Some(f) = c.frontend_s {
        parts.push(format!("{} ms frontend per request", ms(f.value)));
    }
    let drafted = c
        .source
        .spec
        .filter(|s| s.draft_len() > 0)
        .map_or(String::new(), |s| {
            format!(
                " The runs drafted speculatively, and were simulated so: {}.",
                spec_measured_words(&s)
            )
        });
    format!("Fitted: {}.{drafted}", parts.join(", "))
}

/// What a run measured of speculative decoding: "3 draft tokens a step, 2.58 tokens
/// gained a step (53% of drafted tokens accepted; 0.71 a token in order)".
pub fn spec_measured_words(s: &SpecMeasured) -> String {
    format!(
        "{} draft tokens a step, {} tokens gained a step ({} of drafted tokens accepted; {} a \
         token in order)",
        s.draft_len(),
        plain((s.tokens_per_step() * 100.0).round() / 100.0),
        pct_whole(s.acceptance_rate()),
        plain((s.acceptance() * 100.0).round() / 100.0)
    )
}

/// Whether `plan` drafts as the calibration's runs did, and the flags that make it so
/// when it does not; `None` when the runs did not draft. The plan's speculation is the
/// user's choice: a calibration never changes it.
pub fn spec_words(c: &Calibration, plan: &Plan) -> Option<String> {
    let s = c.source.spec?;
    let (k, a) = measured_spec_settings(c)?;
    let e = &plan.engine;
    let now = if e.spec_draft_tokens == 0 {
        "The plan does not draft".to_string()
    } else {
        format!(
            "The plan drafts {} tokens at {} a token",
            e.spec_draft_tokens,
            plain((e.spec_acceptance * 100.0).round() / 100.0)
        )
    };
    let same = (e.spec_draft_tokens, e.spec_acceptance) == (k, a);
    Some(if same {
        format!(
            "The measured runs drafted {}; the plan drafts as they did.",
            spec_measured_words(&s)
        )
    } else {
        format!(
            "The measured runs drafted {}. {now}: --spec-draft-tokens {k} --spec-acceptance {} \
             plans with speculation as measured.",
            spec_measured_words(&s),
            plain(a)
        )
    })
}

/// The engine settings that plan speculation as the calibration's runs measured it:
/// their draft length (at most `MAX_SPEC_DRAFT_TOKENS`) and the acceptance a token
/// that gains their tokens a step, to three decimals; `None` when they did not draft.
pub fn measured_spec_settings(c: &Calibration) -> Option<(u32, f64)> {
    let s = c.source.spec.filter(|s| s.draft_len() > 0)?;
    Some((s.draft_len(), (s.acceptance() * 1000.0).round() / 1000.0))
}

/// The calibration in one line for the plan's assumptions and the CLI: the sentence,
/// then the fitted constants while the calibration is in force.
pub fn calibration_words(c: &Calibration) -> String {
    let w = calibration_summary(c);
    if c.enabled {
        format!("{} {}", w.sentence, w.constants)
    } else {
        w.sentence
    }
}

pub(super) fn opt_ms(x: Option<f64>) -> String {
    x.map_or(MISSING.into(), ms)
}

/// A measured point's load as the tables name it: `0.5 req/s`, `2 req/s cv 0.50`,
/// `1 client`, `64 clients`.
pub fn load_label(l: &MeasuredLoad) -> String {
    match *l {
        MeasuredLoad::Rate { rate_rps, cv } if (cv - 1.0).abs() < 1e-9 => {
            format!("{} req/s", plain(rate_rps))
        }
        MeasuredLoad::Rate { rate_rps, cv } => {
            format!("{} req/s cv {cv:.2}", plain(rate_rps))
        }
        MeasuredLoad::Concurrency { concurrency } => crate::format::clients(concurrency),
    }
}
