//! The plan's calibration, or the fit held for "Apply anyway": every fitted constant ±
//! sd, the errors of the means beside the datasheet's and the tails' apart, where the
//! measurements came from, the fit's cautions, the switch between fitted and datasheet
//! constants (with the replicas and cost each gave), and the benchmark's traffic on
//! request.

use goodput_core::calibrate::{
    calibration_cautions, judged_error, measured_spec_settings, spec_words, verdict_words,
    FitVerdict,
};
use goodput_core::format::{percent_tenths, usd};
use goodput_core::plan::fields::field;
use goodput_core::plan::{Calibration, CalibrationError, Fitted};
use goodput_core::Plan;
use leptos::prelude::*;

use crate::components::calibration_errors::{CalibrationErrors, MEANS_CAPTION, TAILS_CAPTION};
use crate::compute::calibration::{with_benchmark_traffic, FitController};
use crate::hooks::use_report::use_report;
use crate::state::PlanState;

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

/// Every constant the fit set: (key, label, value ± sd); the newer ones under their
/// plan fields' labels.
pub fn fitted_constants(c: &Calibration) -> Vec<(&'static str, &'static str, String)> {
    let spread = c.spread_estimated();
    let mut out = vec![
        (
            "bandwidth_efficiency",
            "Bandwidth share",
            pm(c.bandwidth_efficiency, 100.0, "%", spread),
        ),
        (
            "compute_efficiency",
            "Compute share",
            pm(c.compute_efficiency, 100.0, "%", spread),
        ),
        (
            "step_overhead_s",
            "Step overhead",
            pm(c.step_overhead_s, 1e3, " ms", spread),
        ),
    ];
    let optional = [
        ("seq_overhead_s", c.seq_overhead_s, 1e6, " µs"),
        ("kv_read_efficiency", c.kv_read_efficiency, 100.0, "%"),
        ("prefill_overhead_s", c.prefill_overhead_s, 1e3, " ms"),
        ("frontend_s", c.frontend_s, 1e3, " ms"),
    ];
    for (key, f, scale, unit) in optional {
        let label = match key {
            "seq_overhead_s" => const { field("hardware.seq_overhead_s") }.label,
            "kv_read_efficiency" => const { field("hardware.kv_read_efficiency") }.label,
            "prefill_overhead_s" => const { field("hardware.prefill_overhead_s") }.label,
            _ => const { field("engine.frontend_s") }.label,
        };
        if let Some(f) = f {
            out.push((key, label, pm(f, scale, unit, spread)));
        }
    }
    out
}

/// The held-out and extrapolation errors in words, the larger judged.
fn trust_words(c: &Calibration) -> String {
    let Some(h) = c.error.held_out else {
        return "Held-out error: not available with one point.".into();
    };
    match c.error.extrapolation {
        Some(x) => format!(
            "Held-out error (loads in range): {}; fit light, predict heavy: {}. The verdict judges the larger.",
            percent_tenths(h.overall),
            percent_tenths(x.overall)
        ),
        None => format!("Held-out error: {}", percent_tenths(h.overall)),
    }
}

/// The fit's calibration in a block: provenance, constants, errors, verdict, and what
/// the user can do with it (`held`: waits for "Apply anyway").
fn calibration_view(
    c: Calibration,
    tails: Option<CalibrationError>,
    held: bool,
    compare: impl Fn() -> String + Send + 'static,
) -> impl IntoView {
    let fits = FitController::expect_context();
    let src = &c.source;
    let named = [src.model.as_str(), src.engine.as_str()]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(", ");
    let provenance = format!(
        "{} {} measurement{}: {}{}",
        if held { "Fitted to" } else { "Calibrated from" },
        c.points.len(),
        if c.points.len() == 1 { "" } else { "s" },
        src.files.join(", "),
        if named.is_empty() {
            String::new()
        } else {
            format!(", {named}")
        }
    );
    let verdict = FitVerdict::of(&c);
    let verdict_class = if verdict.is_weak() {
        "calibrate-verdict weak"
    } else {
        "calibrate-verdict"
    };
    let verdict_key = serde_json::to_string(&verdict)
        .unwrap_or_default()
        .trim_matches('"')
        .to_string();
    let in_force = match (held, c.enabled) {
        (true, _) => "Not applied: the plan keeps its constants unless you apply this fit anyway.",
        (false, true) => "In force: the fitted constants.",
        (false, false) => "In force: the datasheet constants (the fit is kept, switched off).",
    };
    let held_out = c
        .error
        .held_out
        .map(|h| h.overall.to_string())
        .unwrap_or_default();
    let extrapolation = c
        .error
        .extrapolation
        .map(|x| x.overall.to_string())
        .unwrap_or_default();
    let judged = judged_error(&c).map(|x| x.to_string()).unwrap_or_default();
    let spec = c.source.spec.is_some().then(|| measured_spec(c.clone()));
    let constants = fitted_constants(&c)
        .into_iter()
        .map(|(key, label, value)| view! { <li data-constant=key>{label}": "{value}</li> })
        .collect_view();
    let action = if held {
        view! {
            <p class="calibrate-apply">
                <button type="button" data-testid="calibrate-apply-anyway" on:click=move |_| fits.apply_anyway()>"Apply anyway"</button>
                " The fit is shown, not applied: read its errors and verdict first."
            </p>
        }
        .into_any()
    } else {
        view! {
            <label class="toggle">
                <input type="checkbox" data-testid="calibrate-toggle" prop:checked=c.enabled on:change=move |_| fits.toggle() />
                " Use the fitted constants"
            </label>
            <p data-testid="calibrate-compare">{compare}</p>
        }
        .into_any()
    };
    view! {
        <div class="calibration-result" data-testid="calibration-result" data-enabled=c.enabled.to_string() data-held=held.to_string()>
            <p data-testid="calibrate-provenance">{provenance}</p>
            <p><strong data-testid="calibrate-in-force">{in_force}</strong></p>
            <ul class="calibrate-constants" data-testid="calibrate-constants">{constants}</ul>
            <CalibrationErrors errors=c.error caption=MEANS_CAPTION testid="calibrate-errors" class="calibrate-errors" />
            <p data-testid="calibrate-held-out" data-value=held_out data-extrapolation=extrapolation data-judged=judged>
                {trust_words(&c)}
            </p>
            {tails.map(|t| view! {
                <CalibrationErrors errors=t caption=TAILS_CAPTION testid="calibrate-tail-errors" class="calibrate-errors calibrate-tails" />
            })}
            <p class=verdict_class data-testid="calibrate-verdict" data-verdict=verdict_key>{verdict_words(&c)}</p>
            {spec}
            {action}
        </div>
    }
}

/// What the measured runs drafted (speculative decoding), against what the plan drafts,
/// and a button that plans as they did: a step of its own, which Undo takes back. The
/// fit itself never changes the plan's speculation.
fn measured_spec(c: Calibration) -> impl IntoView {
    let state = PlanState::expect_context();
    let now = move || {
        state.good.with(|p| {
            let words = spec_words(&c, p)?;
            let differs = measured_spec_settings(&c)
                .filter(|&s| s != (p.engine.spec_draft_tokens, p.engine.spec_acceptance));
            Some((words, differs))
        })
    };
    move || {
        now().map(|(words, differs)| {
            let button = differs.map(|(k, a)| {
                let apply = move |_| {
                    state.change("plan with the measured speculation", move |p| {
                        p.engine.set_speculation((k, a));
                    })
                };
                view! {
                    " "
                    <button type="button" data-testid="calibrate-use-spec" on:click=apply>
                        "Plan with the measured speculation"
                    </button>
                }
            });
            view! { <p class="calibrate-spec" data-testid="calibrate-spec">{words}{button}</p> }
        })
    }
}

/// The calibration block; shows nothing for a plan that was never calibrated and no
/// fit held.
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
    // The calibration shown: the held fit, else the plan's own.
    let shown = Memo::new(move |_| {
        if fits.is_holding() {
            fits.report
                .with(|r| r.as_ref().map(|r| r.calibration.clone()))
        } else {
            state.good.with(|p| p.calibration.clone())
        }
    });
    // The cautions the shown fit carries (they travel with a link), then the finished
    // fit's other warnings while it is the one shown (a link carries no report).
    let warnings = move || {
        let mut w = shown.with(|c| c.as_ref().map(calibration_cautions).unwrap_or_default());
        let more = fits.report.with(|r| {
            r.as_ref()
                .filter(|r| {
                    shown.with(|c| c.as_ref().is_some_and(|c| c.points == r.calibration.points))
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
    let compare = move || {
        let s = seen.get();
        let show = |k: usize| {
            s.by[k]
                .map(|(r, cost)| format!("{r} replicas, {}/month", usd(cost)))
                .unwrap_or_else(|| "switch to see".into())
        };
        format!("Fitted: {} · Datasheet: {}", show(1), show(0))
    };
    let body = move || {
        let c = shown.get()?;
        let tails = fits.report.with(|r| {
            r.as_ref()
                .filter(|r| r.calibration.points == c.points)
                .map(|r| r.tail_error)
        });
        Some(calibration_view(c, tails, fits.is_holding(), compare))
    };
    view! {
        {body}
        <ul class="warnings" data-testid="calibrate-warnings">
            {move || warnings().into_iter().map(|w| view! { <li class="warning">{w}</li> }).collect_view()}
        </ul>
        <BenchmarkTraffic />
        {move || fits.undo.with(Option::is_some).then(|| view! {
            <button type="button" data-testid="calibrate-undo" on:click=move |_| fits.undo_calibration()>"Undo calibration"</button>
        })}
    }
}

/// "Use the benchmark's traffic": the last fit's workload in place of the plan's
/// forecast lengths and arrivals (its peak stays), as a step Undo takes back.
#[component]
fn BenchmarkTraffic() -> impl IntoView {
    let state = PlanState::expect_context();
    let fits = FitController::expect_context();
    // Whether the plan's traffic is the benchmark's already (`None`: no fit).
    let using = Memo::new(move |_| {
        fits.report.with(|r| {
            r.as_ref().map(|r| {
                state
                    .draft
                    .with(|p| p.traffic == with_benchmark_traffic(p, &r.workload))
            })
        })
    });
    move || {
        using.get().map(|same| view! {
            <p class="calibrate-traffic">
                <button type="button" data-testid="calibrate-use-traffic" disabled=same
                    on:click=move |_| fits.use_benchmark_traffic()>"Use the benchmark's traffic"</button>
                {if same {
                    " The plan's traffic is the benchmark's (Undo puts the forecast back)."
                } else {
                    " The fit leaves the plan's traffic, your forecast, as it is; this puts the benchmark's lengths and arrivals in its place, at the plan's peak."
                }}
            </p>
        })
    }
}
