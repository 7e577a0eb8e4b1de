//! Validation against public measured runs: how far the model's predictions are from
//! real servers, with the datasheet constants and with a calibration, by protocol.
//!
//! ```text
//!   validation/manifest.json ──▶ Manifest (sets: plan, files, bounds; carries)
//!   each set ──import──▶ MeasuredSet ──Calibrator──▶ CalibrationReport
//!        ├─▶ in range:           leave-one-out over every point
//!        └─▶ fit light → heavy:  the lighter half fitted, the heavier half predicted
//!   each carry ──▶ the calibration of one set applied to another set's GPU / TP
//!   rows ──▶ the accuracy table (text, Markdown, JSON), each error against its bound
//! ```
//!
//! A set is one public run series on one model, GPU, TP degree and engine setup,
//! converted into a format [`crate::measure`] reads. The manifest names, for each, its
//! source repository, commit and licence, the plan it ran (presets plus a partial plan
//! for everything else) and the bound each protocol's errors must stay within. A bound
//! is what the table states: a test fails when an error grows past it.

use serde::{Deserialize, Serialize};

use crate::calibrate::{
    mape, mape_of, run_to_end, CalibrateError, CalibrationProblem, CalibrationReport, Calibrator,
    Constants, FitTerms, Prediction, Statistic,
};
use crate::format::{percent_tenths, percent_whole, MISSING};
use crate::measure::{import_files, ImportError};
use crate::plan::{Dtype, MeasuredSummary, MetricErrors, Plan, PlanError};
use crate::presets;

/// Every public data set and cross-hardware check, as `validation/manifest.json` lists them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The sets, in table order.
    pub sets: Vec<SetSpec>,
    /// Calibrations carried from one set's hardware to another's.
    #[serde(default)]
    pub carries: Vec<CarrySpec>,
}

/// One measured run series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetSpec {
    /// Short id, also its folder under `validation/`.
    pub id: String,
    /// What ran, in a few words.
    pub title: String,
    /// The public repository the measurements come from.
    pub source: String,
    /// The commit read.
    pub commit: String,
    /// The licence of the measurements (SPDX id).
    pub licence: String,
    /// Model preset id.
    pub model: String,
    /// GPU preset id.
    pub gpu: String,
    /// Weight precision (`bf16`, `fp8`, `int4`), set before the GPU preset so that its
    /// compute follows it.
    pub weight_dtype: Dtype,
    /// KV-cache precision.
    pub kv_dtype: Dtype,
    /// Everything else the server ran with, as a partial plan (sections and fields
    /// left out keep the defaults): TP degree, engine settings, length shape, prefix.
    #[serde(default)]
    pub plan: serde_json::Value,
    /// The set's folder under `validation/` when it is not the id (several sets may
    /// share one source's folder).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub dir: String,
    /// Files in the set's folder, in a format `measure` reads.
    pub files: Vec<String>,
    /// Bounds of the leave-one-out errors (in range).
    #[serde(default)]
    pub in_range: Option<Bound>,
    /// Bounds of the fit-light, predict-heavy errors.
    #[serde(default)]
    pub light_heavy: Option<Bound>,
    /// What the model still gets wrong on this set, in a sentence (empty for nothing).
    #[serde(default)]
    pub note: String,
}

/// A calibration made on one set, predicting another set's runs on other hardware.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CarrySpec {
    /// The set fitted (every point).
    pub from: String,
    /// The set predicted.
    pub to: String,
    /// Bounds of the errors.
    #[serde(default)]
    pub bound: Option<Bound>,
}

/// The largest mean absolute percentage error each metric may have [0..].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bound {
    /// Time to first token.
    pub ttft: f64,
    /// Time per output token.
    pub tpot: f64,
    /// End-to-end latency.
    pub e2e: f64,
}

impl Bound {
    /// The metrics of `e` over this bound, by name.
    pub fn exceeded(&self, e: &MetricErrors) -> Vec<&'static str> {
        [
            ("TTFT", e.ttft, self.ttft),
            ("TPOT", e.tpot, self.tpot),
            ("E2E", e.e2e, self.e2e),
        ]
        .into_iter()
        .filter(|&(_, got, bound)| got.is_some_and(|g| g.is_nan() || g > bound))
        .map(|(name, _, _)| name)
        .collect()
    }
}

/// How a row's predictions were made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Protocol {
    /// Each point predicted by a fit without it.
    InRange,
    /// The heavier half of the loads predicted by a fit on the lighter half.
    LightHeavy,
    /// Every point predicted by a calibration fitted on another set.
    Carried {
        /// The set fitted.
        from: String,
    },
}

impl Protocol {
    /// The protocol in a few words.
    pub fn words(&self) -> String {
        match self {
            Protocol::InRange => "in range (leave one out)".into(),
            Protocol::LightHeavy => "fit light → predict heavy".into(),
            Protocol::Carried { from } => format!("carried from {from}"),
        }
    }
}

/// One row of the accuracy table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValidationRow {
    /// The set predicted.
    pub set: String,
    /// How.
    pub protocol: Protocol,
    /// Points fitted.
    pub fitted: u32,
    /// Points predicted.
    pub predicted: u32,
    /// Errors of the datasheet constants on the predicted points.
    pub datasheet: MetricErrors,
    /// Errors of the calibrated predictions.
    pub calibrated: MetricErrors,
    /// Errors of the datasheet constants' 99th percentiles.
    pub datasheet_p99: MetricErrors,
    /// Errors of the calibrated 99th percentiles.
    pub calibrated_p99: MetricErrors,
    /// The bound the calibrated errors must stay within, when the manifest states one.
    pub bound: Option<Bound>,
}

impl ValidationRow {
    /// The metrics over their bound (empty when within it, or with no bound).
    pub fn exceeded(&self) -> Vec<&'static str> {
        self.bound
            .map_or_else(Vec::new, |b| b.exceeded(&self.calibrated))
    }
}

/// The whole table, with each set's fitted constants.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValidationReport {
    /// Rows in manifest order: each set's protocols, then the carries.
    pub rows: Vec<ValidationRow>,
    /// Each set's fitted constants (on every point), by set id.
    pub constants: Vec<(String, Constants)>,
}

/// The aim for the mean calibrated errors over the sets, fitted light or carried to
/// other hardware: TTFT, TPOT and E2E [0..1].
pub const AIM: [f64; 3] = [0.25, 0.10, 0.10];

/// A protocol as the means group it: its words, which rows it holds, whether it is held
/// to [`AIM`].
type ProtocolKind = (&'static str, fn(&Protocol) -> bool, bool);

/// The mean errors of one protocol over the sets it ran on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProtocolMeans {
    /// "in range (leave one out)", "fit light → predict heavy", "carried".
    pub protocol: String,
    /// Rows averaged.
    pub rows: u32,
    /// Mean datasheet errors: TTFT, TPOT, E2E (each over the rows that have it).
    pub datasheet: [Option<f64>; 3],
    /// Mean calibrated errors: TTFT, TPOT, E2E.
    pub calibrated: [Option<f64>; 3],
    /// Whether the calibrated means are held to [`AIM`] (fit light and carried).
    pub aimed: bool,
}

impl ProtocolMeans {
    /// The metrics whose calibrated mean is over [`AIM`] (empty when within, or not
    /// aimed).
    pub fn over_aim(&self) -> Vec<&'static str> {
        if !self.aimed {
            return Vec::new();
        }
        ["TTFT", "TPOT", "E2E"]
            .iter()
            .zip(self.calibrated.iter().zip(AIM))
            .filter(|(_, (m, aim))| m.is_some_and(|m| m > *aim))
            .map(|(name, _)| *name)
            .collect()
    }
}

impl ValidationReport {
    /// The mean errors of each protocol over the sets: in range, fit light → predict
    /// heavy, and carried (every carry together).
    pub fn means(&self) -> Vec<ProtocolMeans> {
        let kinds: [ProtocolKind; 3] = [
            (
                "in range (leave one out)",
                |p| *p == Protocol::InRange,
                false,
            ),
            (
                "fit light → predict heavy",
                |p| *p == Protocol::LightHeavy,
                true,
            ),
            (
                "carried to other hardware",
                |p| matches!(p, Protocol::Carried { .. }),
                true,
            ),
        ];
        kinds
            .iter()
            .filter_map(|&(name, is, aimed)| {
                let rows: Vec<&ValidationRow> =
                    self.rows.iter().filter(|r| is(&r.protocol)).collect();
                if rows.is_empty() {
                    return None;
                }
                let mean = |f: fn(&MetricErrors) -> Option<f64>,
                            of: fn(&ValidationRow) -> &MetricErrors| {
                    let xs: Vec<f64> = rows.iter().filter_map(|r| f(of(r))).collect();
                    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
                };
                let three = |of: fn(&ValidationRow) -> &MetricErrors| {
                    [
                        mean(|e| e.ttft, of),
                        mean(|e| e.tpot, of),
                        mean(|e| e.e2e, of),
                    ]
                };
                Some(ProtocolMeans {
                    protocol: name.to_string(),
                    rows: rows.len() as u32,
                    datasheet: three(|r| &r.datasheet),
                    calibrated: three(|r| &r.calibrated),
                    aimed,
                })
            })
            .collect()
    }

    /// What `docs/accuracy.md` shows between its markers: the means by protocol against
    /// [`AIM`], the table, and each set's note.
    pub fn published_markdown(&self, manifest: &Manifest) -> String {
        format!(
            "Mean errors over the sets, by protocol:\n\n{}\nEach set and protocol:\n\n{}\n{}",
            self.means_markdown(),
            self.to_markdown(manifest),
            self.notes_markdown(manifest)
        )
    }

    /// [`ValidationReport::means`] as a Markdown table, against [`AIM`].
    pub fn means_markdown(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "| protocol | rows | TTFT datasheet | TTFT calibrated | TPOT datasheet | TPOT calibrated | E2E datasheet | E2E calibrated | aim (TTFT / TPOT / E2E) |"
        );
        let _ = writeln!(
            s,
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
        );
        for m in self.means() {
            let aim = if m.aimed {
                let over = m.over_aim();
                let met = if over.is_empty() {
                    "met".to_string()
                } else {
                    format!("not met: {}", over.join(", "))
                };
                format!(
                    "{} / {} / {}: {met}",
                    percent_whole(AIM[0]),
                    percent_whole(AIM[1]),
                    percent_whole(AIM[2])
                )
            } else {
                MISSING.into()
            };
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {aim} |",
                m.protocol,
                m.rows,
                cell(m.datasheet[0]),
                cell(m.calibrated[0]),
                cell(m.datasheet[1]),
                cell(m.calibrated[1]),
                cell(m.datasheet[2]),
                cell(m.calibrated[2]),
            );
        }
        s
    }

    /// Rows whose errors exceed their bound.
    pub fn failures(&self) -> Vec<&ValidationRow> {
        self.rows
            .iter()
            .filter(|r| !r.exceeded().is_empty())
            .collect()
    }
}

/// Why the validation could not run.
#[derive(Debug, Clone, PartialEq)]
pub enum ValidateError {
    /// The manifest is not valid JSON of the expected shape; the message says where.
    Manifest(String),
    /// A set names a preset that does not exist, or its plan does not validate.
    Plan {
        /// The set.
        set: String,
        /// What is wrong.
        message: String,
    },
    /// A file could not be read or imported.
    Import {
        /// The set.
        set: String,
        /// What is wrong.
        message: String,
    },
    /// The fit failed.
    Calibrate {
        /// The set.
        set: String,
        /// Why.
        error: CalibrateError,
    },
    /// A carry names a set the manifest lacks.
    UnknownSet(String),
    /// Stopped by the caller.
    Cancelled,
}

impl std::fmt::Display for ValidateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ValidateError::Manifest(m) => write!(f, "manifest: {m}"),
            ValidateError::Plan { set, message } => write!(f, "set {set}: {message}"),
            ValidateError::Import { set, message } => write!(f, "set {set}: {message}"),
            ValidateError::Calibrate { set, error } => write!(f, "set {set}: {error}"),
            ValidateError::UnknownSet(id) => {
                write!(
                    f,
                    "a carry names set '{id}', which the manifest does not list"
                )
            }
            ValidateError::Cancelled => write!(f, "validation cancelled"),
        }
    }
}

impl std::error::Error for ValidateError {}

/// Reads a manifest.
pub fn read_manifest(text: &str) -> Result<Manifest, ValidateError> {
    serde_json::from_str(text).map_err(|e| ValidateError::Manifest(e.to_string()))
}

impl SetSpec {
    /// The set's folder under `validation/`.
    pub fn folder(&self) -> &str {
        if self.dir.is_empty() {
            &self.id
        } else {
            &self.dir
        }
    }

    /// The plan the set's server ran: the default plan with the model preset and the
    /// dtypes, then the GPU preset, then the partial plan on top.
    pub fn plan(&self) -> Result<Plan, ValidateError> {
        let bad = |message: String| ValidateError::Plan {
            set: self.id.clone(),
            message,
        };
        let mut plan = Plan::default();
        presets::model(&self.model)
            .ok_or_else(|| bad(format!("no model preset '{}'", self.model)))?
            .apply(&mut plan);
        plan.model.weight_dtype = self.weight_dtype;
        plan.model.kv_dtype = self.kv_dtype;
        presets::gpu(&self.gpu)
            .ok_or_else(|| bad(format!("no GPU preset '{}'", self.gpu)))?
            .apply(&mut plan);
        plan.name = self.title.clone();
        let mut value = serde_json::to_value(&plan).map_err(|e| bad(e.to_string()))?;
        merge(&mut value, &self.plan);
        let plan: Plan = serde_json::from_value(value).map_err(|e| bad(e.to_string()))?;
        plan.validate().map_err(|e: PlanError| bad(e.to_string()))?;
        Ok(plan)
    }
}

/// Merges `over` into `base`: objects key by key, anything else replaced.
fn merge(base: &mut serde_json::Value, over: &serde_json::Value) {
    match (base, over) {
        (serde_json::Value::Object(b), serde_json::Value::Object(o)) => {
            for (k, v) in o {
                merge(b.entry(k.clone()).or_insert(serde_json::Value::Null), v);
            }
        }
        (b, o) if !o.is_null() => *b = o.clone(),
        _ => {}
    }
}

/// Reads a set's file: `(set id, file name)` to its bytes, or why not.
pub type ReadFile<'a> = dyn Fn(&str, &str) -> Result<Vec<u8>, String> + 'a;

/// Progress of a validation: sets fitted out of all.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ValidateProgress {
    /// Sets done.
    pub done: u32,
    /// Sets in all.
    pub total: u32,
}

/// Runs every set of `manifest` (or only those of `only`, and the carries between
/// them), reading each file with `read(folder, file name)`, fitting the constants
/// `terms` frees (the bounds and the published table are [`FitTerms::DEFAULT`]'s), on
/// `threads` OS threads. `progress` returning `false` cancels.
pub fn validate(
    manifest: &Manifest,
    only: &[String],
    read: &ReadFile<'_>,
    terms: FitTerms,
    threads: usize,
    progress: &mut dyn FnMut(ValidateProgress) -> bool,
) -> Result<ValidationReport, ValidateError> {
    let chosen: Vec<&SetSpec> = manifest
        .sets
        .iter()
        .filter(|s| only.is_empty() || only.contains(&s.id))
        .collect();
    for c in &manifest.carries {
        for id in [&c.from, &c.to] {
            if !manifest.sets.iter().any(|s| &s.id == id) {
                return Err(ValidateError::UnknownSet(id.clone()));
            }
        }
    }
    let mut rows = Vec::new();
    let mut fitted: Vec<(String, Constants, CalibrationProblem)> = Vec::new();
    let total = chosen.len() as u32;
    for (k, set) in chosen.iter().enumerate() {
        let (report, problem) = fit_set(set, read, terms, threads)?;
        rows.extend(set_rows(set, &report, &problem));
        fitted.push((set.id.clone(), constants_of(&report), problem));
        if !progress(ValidateProgress {
            done: k as u32 + 1,
            total,
        }) {
            return Err(ValidateError::Cancelled);
        }
    }
    for carry in &manifest.carries {
        let from = fitted.iter().find(|f| f.0 == carry.from);
        let to = fitted.iter().find(|f| f.0 == carry.to);
        let (Some(from), Some(to)) = (from, to) else {
            continue;
        };
        rows.push(carry_row(carry, &from.1, &to.2)?);
    }
    Ok(ValidationReport {
        rows,
        constants: fitted.into_iter().map(|(id, c, _)| (id, c)).collect(),
    })
}

/// The fitted constants of a report, as the problem decodes them.
fn constants_of(report: &CalibrationReport) -> Constants {
    let c = &report.calibration;
    let k = c.constants(&report.plan);
    Constants {
        bandwidth_efficiency: k.bandwidth_efficiency,
        compute_efficiency: k.compute_efficiency,
        step_overhead_s: k.step_overhead_s,
        seq_overhead_s: k.seq_overhead_s,
        frontend_s: k.frontend_s,
        prefill_overhead_s: k.prefill_overhead_s,
        kv_read_efficiency: k.kv_read_efficiency,
    }
}

/// Imports a set's files and calibrates its plan to them.
fn fit_set(
    set: &SetSpec,
    read: &ReadFile<'_>,
    terms: FitTerms,
    threads: usize,
) -> Result<(CalibrationReport, CalibrationProblem), ValidateError> {
    let plan = set.plan()?;
    let import = |message: String| ValidateError::Import {
        set: set.id.clone(),
        message,
    };
    let mut contents = Vec::new();
    for f in &set.files {
        contents.push((f.as_str(), read(set.folder(), f).map_err(import)?));
    }
    let refs: Vec<(&str, &[u8])> = contents.iter().map(|(n, b)| (*n, b.as_slice())).collect();
    let measured = import_files(&refs).map_err(|e: ImportError| import(e.to_string()))?;
    let calibrate = |error| ValidateError::Calibrate {
        set: set.id.clone(),
        error,
    };
    let c = Calibrator::with_terms(&plan, &measured, terms).map_err(calibrate)?;
    let problem = c.problem().clone();
    let report = run_to_end(c, threads, &mut |_| true).map_err(calibrate)?;
    Ok((report, problem))
}

/// The in-range and light-heavy rows of a set.
fn set_rows(
    set: &SetSpec,
    report: &CalibrationReport,
    problem: &CalibrationProblem,
) -> Vec<ValidationRow> {
    let n = report.points.len() as u32;
    let all_measured: Vec<&MeasuredSummary> = report.points.iter().map(|p| &p.measured).collect();
    let sheet: Vec<Prediction> = report.points.iter().map(|p| p.datasheet).collect();
    let mut rows = Vec::new();
    if let Some(held) = report.calibration.error.held_out {
        rows.push(ValidationRow {
            set: set.id.clone(),
            protocol: Protocol::InRange,
            fitted: n.saturating_sub(1),
            predicted: n,
            datasheet: mape(all_measured.iter().copied(), &sheet),
            calibrated: held,
            datasheet_p99: mape_of(all_measured.iter().copied(), &sheet, Statistic::P99),
            calibrated_p99: report.tail_error.held_out.unwrap_or_default(),
            bound: set.in_range,
        });
    }
    if let (Some(x), Some((light, heavy))) = (
        report.calibration.error.extrapolation,
        problem.light_heavy(),
    ) {
        let measured: Vec<&MeasuredSummary> = heavy
            .iter()
            .map(|&i| &report.points[i as usize].measured)
            .collect();
        let sheet: Vec<Prediction> = heavy
            .iter()
            .map(|&i| report.points[i as usize].datasheet)
            .collect();
        rows.push(ValidationRow {
            set: set.id.clone(),
            protocol: Protocol::LightHeavy,
            fitted: light.len() as u32,
            predicted: heavy.len() as u32,
            datasheet: mape(measured.iter().copied(), &sheet),
            calibrated: x,
            datasheet_p99: mape_of(measured, &sheet, Statistic::P99),
            calibrated_p99: report.tail_error.extrapolation.unwrap_or_default(),
            bound: set.light_heavy,
        });
    }
    rows
}

/// Predicts the `to` set with the constants fitted on the `from` set.
fn carry_row(
    carry: &CarrySpec,
    from: &Constants,
    to: &CalibrationProblem,
) -> Result<ValidationRow, ValidateError> {
    let calibrate = |e: crate::sim::SimError| ValidateError::Calibrate {
        set: carry.to.clone(),
        error: CalibrateError::Sim(e),
    };
    let carried = to.predict_all(from).map_err(calibrate)?;
    let sheet = to.predict_all(&to.datasheet()).map_err(calibrate)?;
    let measured: Vec<&MeasuredSummary> = to.points.iter().map(|p| &p.measured).collect();
    Ok(ValidationRow {
        set: carry.to.clone(),
        protocol: Protocol::Carried {
            from: carry.from.clone(),
        },
        fitted: 0,
        predicted: to.points.len() as u32,
        datasheet: mape(measured.iter().copied(), &sheet),
        calibrated: mape(measured.iter().copied(), &carried),
        datasheet_p99: mape_of(measured.iter().copied(), &sheet, Statistic::P99),
        calibrated_p99: mape_of(measured, &carried, Statistic::P99),
        bound: carry.bound,
    })
}

/// An error as the table shows it (`12.3%`), a dash where the data give none.
fn cell(x: Option<f64>) -> String {
    x.map_or(MISSING.into(), percent_tenths)
}

/// A bound as the table shows it: `25% / 10% / 10%`.
fn bound_words(b: Option<Bound>) -> String {
    b.map_or(MISSING.into(), |b| {
        format!(
            "{} / {} / {}",
            crate::format::percent(b.ttft),
            crate::format::percent(b.tpot),
            crate::format::percent(b.e2e)
        )
    })
}

/// The cells of a row after the protocol, in table order.
fn cells(r: &ValidationRow) -> [String; 8] {
    [
        cell(r.datasheet.ttft),
        cell(r.calibrated.ttft),
        cell(r.datasheet.tpot),
        cell(r.calibrated.tpot),
        cell(r.datasheet.e2e),
        cell(r.calibrated.e2e),
        cell(r.datasheet_p99.ttft),
        cell(r.calibrated_p99.ttft),
    ]
}

impl ValidationReport {
    /// The table in Markdown: one row per set and protocol; the datasheet and calibrated
    /// errors of the mean TTFT, TPOT and E2E, the bound they are held to, and the error
    /// of the 99th-percentile TTFT.
    pub fn to_markdown(&self, manifest: &Manifest) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "| set | protocol | fitted → predicted | TTFT datasheet | TTFT calibrated | TPOT datasheet | TPOT calibrated | E2E datasheet | E2E calibrated | p99 TTFT datasheet | p99 TTFT calibrated | bound (TTFT / TPOT / E2E) |"
        );
        let _ = writeln!(
            s,
            "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
        );
        for r in &self.rows {
            let title = manifest
                .sets
                .iter()
                .find(|x| x.id == r.set)
                .map_or(r.set.clone(), |x| {
                    format!("[{}](../validation/{}/SOURCE.md)", x.id, x.folder())
                });
            let _ = writeln!(
                s,
                "| {title} | {} | {} → {} | {} | {} |",
                r.protocol.words(),
                r.fitted,
                r.predicted,
                cells(r).join(" | "),
                bound_words(r.bound)
            );
        }
        s
    }

    /// Each set's note, what the model still gets wrong there, as a Markdown list.
    pub fn notes_markdown(&self, manifest: &Manifest) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        for set in &manifest.sets {
            if self.rows.iter().any(|r| r.set == set.id) && !set.note.is_empty() {
                let _ = writeln!(s, "- **{}** ({}). {}", set.id, set.title, set.note);
            }
        }
        s
    }

    /// The table as plain text for a terminal, with a mark on each row over its bound.
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{:<40}{:<28}{:>8}{:>8}{:>8}{:>8}{:>8}{:>8}{:>8}{:>8}  bound",
            "set", "protocol", "TTFT ds", "cal", "TPOT ds", "cal", "E2E ds", "cal", "p99 ds", "cal"
        );
        for r in &self.rows {
            let over = r.exceeded();
            let mark = if over.is_empty() {
                String::new()
            } else {
                format!("  OVER: {}", over.join(", "))
            };
            let c = cells(r);
            let _ = writeln!(
                s,
                "{:<40}{:<28}{:>8}{:>8}{:>8}{:>8}{:>8}{:>8}{:>8}{:>8}  {}{mark}",
                r.set,
                r.protocol.words(),
                c[0],
                c[1],
                c[2],
                c[3],
                c[4],
                c[5],
                c[6],
                c[7],
                bound_words(r.bound)
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(protocol: Protocol, ttft: f64, tpot: Option<f64>) -> ValidationRow {
        let e = |ttft: f64, tpot: Option<f64>| MetricErrors {
            ttft: Some(ttft),
            tpot,
            e2e: Some(0.05),
            overall: ttft,
        };
        ValidationRow {
            set: "s".into(),
            protocol,
            fitted: 2,
            predicted: 2,
            datasheet: e(2.0 * ttft, tpot),
            calibrated: e(ttft, tpot),
            datasheet_p99: e(ttft, None),
            calibrated_p99: e(ttft, None),
            bound: None,
        }
    }

    #[test]
    fn means_average_each_protocol_and_name_the_metrics_over_the_aim() {
        let report = ValidationReport {
            rows: vec![
                row(Protocol::InRange, 0.9, Some(0.5)),
                row(Protocol::LightHeavy, 0.1, Some(0.04)),
                row(Protocol::LightHeavy, 0.3, None),
                row(Protocol::Carried { from: "a".into() }, 0.2, Some(0.02)),
            ],
            constants: Vec::new(),
        };
        let m = report.means();
        assert_eq!(m.len(), 3);
        // In range is shown but held to no aim.
        assert_eq!((m[0].rows, m[0].aimed), (1, false));
        assert!(m[0].over_aim().is_empty());
        // Fit light: TTFT (0.1 + 0.3) / 2 = 0.2, TPOT over the one row that has it.
        assert_eq!(m[1].rows, 2);
        assert!((m[1].calibrated[0].unwrap() - 0.2).abs() < 1e-12);
        assert_eq!(m[1].calibrated[1], Some(0.04));
        assert!((m[1].datasheet[0].unwrap() - 0.4).abs() < 1e-12);
        assert!(m[1].over_aim().is_empty());
        assert_eq!(m[2].over_aim(), Vec::<&str>::new());
        let mut worse = report.clone();
        worse.rows[2] = row(Protocol::LightHeavy, 0.5, Some(0.3));
        assert_eq!(worse.means()[1].over_aim(), vec!["TTFT", "TPOT"]);
        assert!(worse
            .means_markdown()
            .contains("| fit light → predict heavy | 2 | 60.0% | 30.0% | "));
        assert!(worse.means_markdown().contains("not met: TTFT, TPOT |"));
    }
}
