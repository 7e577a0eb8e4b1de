//! The overlay of a calibrated plan (or of a fit held for "Apply anyway"): measured means against the predictions with the
//! fitted and the datasheet constants. Right after a fit the predictions are the fit's
//! own; a plan opened from a link (no fit in memory) is simulated here at the measured
//! loads.

use goodput_core::format::percent_tenths;
use leptos::prelude::*;

use crate::charts::calibration::{calibration_chart, draw_calibration, CalibrationChart};
use crate::components::chart_canvas::ChartCanvas;
use crate::compute::calibration::{predict_points, FitController};
use crate::state::PlanState;

/// The overlay chart; shows nothing for a plan that was never calibrated.
#[component]
pub fn CalibrationOverlay() -> impl IntoView {
    let state = PlanState::expect_context();
    let fits = FitController::expect_context();
    // The plan with its fit forced on (switching the fit off does not change the chart):
    // the held fit's while one waits for "Apply anyway", else the plan's own.
    let fitted = Memo::new(move |_| {
        let with_fit_on = |p: &goodput_core::Plan| {
            p.calibration.as_ref().map(|_| {
                let mut p = p.clone();
                if let Some(c) = p.calibration.as_mut() {
                    c.enabled = true;
                }
                p
            })
        };
        if fits.is_holding() {
            fits.report
                .with(|r| r.as_ref().and_then(|r| with_fit_on(&r.plan)))
        } else {
            state.good.with(with_fit_on)
        }
    });
    let chart = Memo::new(move |_| -> Option<CalibrationChart> {
        let plan = fitted.get()?;
        let c = plan.calibration.as_ref()?;
        let from_fit = fits.report.with(|r| {
            r.as_ref()
                .filter(|r| {
                    let mut theirs = r.calibration.clone();
                    theirs.enabled = true;
                    theirs == *c
                })
                .map(|r| {
                    let cal = r.points.iter().map(|p| Some(p.predicted)).collect();
                    let ds = r.points.iter().map(|p| Some(p.datasheet)).collect();
                    (cal, ds)
                })
        });
        let (cal, ds): (Vec<_>, Vec<_>) =
            from_fit.unwrap_or_else(|| (predict_points(&plan, true), predict_points(&plan, false)));
        let held = c.error.held_out.map(|h| h.overall);
        Some(calibration_chart(&c.points, &cal, &ds, held))
    });
    move || {
        chart.with(Option::is_some).then(|| {
            view! {
                <div class="calibration-overlay">
                    <ChartCanvas
                        testid="calibration-chart"
                        label="Measured TTFT, TPOT and E2E means against the predictions with the fitted and the datasheet constants"
                        height=220.0
                        narrow_height=600.0
                        draw=move |area, theme| {
                            chart.with(|d| {
                                d.as_ref()
                                    .map(|d| draw_calibration(area, d, theme).unwrap_or_default())
                                    .unwrap_or_default()
                            })
                        }
                        readout=move |panel, x, _| chart.with(|d| d.as_ref().and_then(|d| d.readout(panel, x)))
                    />
                    <p class="chart-legend">
                        <span class="legend-measured">"■ measured"</span>
                        " · "
                        <span class="legend-fitted">"— fitted constants"</span>
                        " · "
                        <span class="legend-datasheet">"- - datasheet constants"</span>
                        {move || chart.with(|d| d.as_ref().and_then(|d| d.held_out)).map(|h| format!(" · held-out error {}", percent_tenths(h)))}
                    </p>
                </div>
            }
        })
    }
}
