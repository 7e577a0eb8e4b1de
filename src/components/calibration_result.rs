//! The plan's calibration: fitted constants ± sd, errors beside the datasheet's, where the
//! measurements came from, the fit's cautions, and the switch between fitted and
//! datasheet constants (with the replicas and cost each gave).

use goodput_core::calibrate::{calibration_cautions, verdict_words, FitVerdict};
use goodput_core::plan::{Fitted, MetricErrors};
use goodput_core::Plan;
use leptos::prelude::*;

use crate::compute::calibration::FitController;
use crate::hooks::use_report::use_report;
use crate::state::PlanState;
use goodput_core::format::{percent_tenths, usd, MISSING};

/// Replicas and monthly cost seen for one calibrated plan, with the fit on and off.
#[derive(Debug, Clone, PartialEq, Default)]
struct Seen {
    key: Option<Plan>,
    /// Index 0: datasheet constants, 1: fitted.
    by: [Option<(u32, f64)>; 2],
}

/// A fitted constant with its bootstrap spread, or without it when one point gave none.
fn pm(f: Fitted, scale: f64, unit: &str, spread: bool) -> String {
    if spread {
        format!("{:.1} ± {:.1}{unit}", f.value * scale, f.sd * scale)
    } else {
        format!(
            "{:.1}{unit} (spread not estimated from one point)",
            f.value * scale
        )
    }
}

/// One row of the error table.
fn error_row(label: &'static str, e: Option<MetricErrors>) -> impl IntoView {
    // the missing mark for a row not computed, or a metric no file gives.
    let cell = move |f: fn(&MetricErrors) -> Option<f64>| {
        e.as_ref()
            .and_then(f)
            .map(percent_tenths)
            .unwrap_or_else(|| MISSING.into())
    };
    view! {
        <tr><th scope="row">{label}</th><td>{cell(|e| e.ttft)}</td><td>{cell(|e| e.tpot)}</td>
            <td>{cell(|e| e.e2e)}</td><td>{cell(|e| Some(e.overall))}</td></tr>
    }
}

/// The calibration block; shows nothing for a plan that was never calibrated.
#[component]
pub fn CalibrationResult() -> impl IntoView {
    let state = PlanState::expect_context();
    let fits = FitController::expect_context();
    let report = use_report();
    let (report, fleet) = (report.report, report.fleet);
    let seen = Memo::new(move |prev: Option<&Seen>| {
        let plan = state.good.get();
        let Some(on) = plan.calibration.as_ref().map(|c| c.enabled) else {
            return Seen::default();
        };
        let mut key = plan.clone();
        if let Some(c) = key.calibration.as_mut() {
            c.enabled = true;
        }
        let mut s = prev
            .cloned()
            .filter(|s| s.key.as_ref() == Some(&key))
            .unwrap_or_default();
        s.key = Some(key);
        let current = report.with(|r| r.as_ref().is_some_and(|(p, _)| *p == plan));
        if let (true, Some(Ok(f))) = (current, fleet.get()) {
            s.by[usize::from(on)] = Some((f.replicas_total, f.cost_per_month_usd));
        }
        s
    });
    // The cautions the plan's own fit carries (they travel with a link), then the
    // finished fit's other warnings while it is the plan's.
    let warnings = move || {
        let mut w = state.good.with(|p| {
            p.calibration
                .as_ref()
                .map(calibration_cautions)
                .unwrap_or_default()
        });
        let more = fits.report.with(|r| {
            r.as_ref()
                .filter(|r| {
                    state.good.with(|p| {
                        p.calibration
                            .as_ref()
                            .map(|c| c.points == r.calibration.points)
                            .unwrap_or(false)
                    })
                })
                .map(|r| r.warnings.clone())
                .unwrap_or_default()
        });
        for m in more {
            if !w.contains(&m) {
                w.push(m);
            }
        }
        w
    };
    let undo = move || {
        fits.undo.with(Option::is_some).then(|| view! {
        <button type="button" data-testid="calibrate-undo" on:click=move |_| fits.undo_calibration()>"Undo calibration"</button>
    })
    };
    let body = move || {
        let c = state.good.with(|p| p.calibration.clone())?;
        let src = &c.source;
        let named = [src.model.as_str(), src.engine.as_str()]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(", ");
        let provenance = format!(
            "Calibrated from {} measurement{}: {}{}",
            c.points.len(),
            if c.points.len() == 1 { "" } else { "s" },
            src.files.join(", "),
            if named.is_empty() {
                String::new()
            } else {
                format!(", {named}")
            }
        );
        let held = c.error.held_out.map(|h| h.overall);
        let spread = c.spread_estimated();
        let verdict = FitVerdict::of(&c);
        let verdict_class = if verdict.is_weak() {
            "calibrate-verdict weak"
        } else {
            "calibrate-verdict"
        };
        let verdict_json = serde_json::to_string(&verdict).unwrap_or_default();
        let verdict_key = verdict_json.trim_matches('"').to_string();
        let in_force = if c.enabled {
            "In force: the fitted constants."
        } else {
            "In force: the datasheet constants (the fit is kept, switched off)."
        };
        let compare = move || {
            let s = seen.get();
            let show = |k: usize| {
                s.by[k]
                    .map(|(r, cost)| format!("{r} replicas, {}/month", usd(cost)))
                    .unwrap_or_else(|| "switch to see".into())
            };
            format!("Fitted: {} · Datasheet: {}", show(1), show(0))
        };
        Some(view! {
            <div class="calibration-result" data-testid="calibration-result" data-enabled=c.enabled.to_string()>
                <p data-testid="calibrate-provenance">{provenance}</p>
                <p><strong data-testid="calibrate-in-force">{in_force}</strong></p>
                <ul class="calibrate-constants" data-testid="calibrate-constants">
                    <li>"Bandwidth share: " {pm(c.bandwidth_efficiency, 100.0, "%", spread)}</li>
                    <li>"Compute share: " {pm(c.compute_efficiency, 100.0, "%", spread)}</li>
                    <li>"Step overhead: " {pm(c.step_overhead_s, 1e3, " ms", spread)}</li>
                </ul>
                <div class="table-scroll">
                <table class="calibrate-errors">
                    <caption>"Mean absolute error against the measurements"</caption>
                    <thead><tr><th></th><th>"TTFT"</th><th>"TPOT"</th><th>"E2E"</th><th>"All"</th></tr></thead>
                    <tbody>
                        {error_row("Fitted, in sample", Some(c.error.in_sample))}
                        {error_row("Fitted, held out", c.error.held_out)}
                        {error_row("Datasheet", Some(c.error.uncalibrated))}
                    </tbody>
                </table>
                </div>
                <p data-testid="calibrate-held-out" data-value=held.map(|h| h.to_string()).unwrap_or_default()>
                    {match held { Some(h) => format!("Held-out error: {}", percent_tenths(h)), None => "Held-out error: not available with one point.".into() }}
                </p>
                <p class=verdict_class data-testid="calibrate-verdict" data-verdict=verdict_key>{verdict_words(&c)}</p>
                <label class="toggle">
                    <input type="checkbox" data-testid="calibrate-toggle" prop:checked=c.enabled on:change=move |_| fits.toggle() />
                    " Use the fitted constants"
                </label>
                <p data-testid="calibrate-compare">{compare}</p>
            </div>
        })
    };
    view! {
        {body}
        <ul class="warnings" data-testid="calibrate-warnings">
            {move || warnings().into_iter().map(|w| view! { <li class="warning">{w}</li> }).collect_view()}
        </ul>
        {undo}
    }
}
