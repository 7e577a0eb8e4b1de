//! The embed card (`&embed`): a compact, read-only card for an `<iframe>` in a doc or
//! wiki: the headline numbers, the attainment chart and a link out to the full plan.
//! No inputs; it works from 320 px wide.

use leptos::prelude::*;

use crate::charts::attainment::draw_attainment;
use crate::components::chart_canvas::ChartCanvas;
use crate::components::charts_panel::attainment_chart;
use crate::compute::RunController;
use crate::hooks::use_report::use_report;
use crate::state::PlanState;
use crate::summary::{calibration_words, setup_words, slo_words};
use crate::url_state::{page_base, plan_title, share_link};
use crate::views::finance::{progress_text, Figures};

/// The embed card.
#[component]
pub fn EmbedView() -> impl IntoView {
    let state = PlanState::expect_context();
    let runs = RunController::expect_context();
    let fleet = use_report().fleet;
    let chart = Memo::new(move |_| state.good.with(|p| attainment_chart(&runs, p)));
    let status = move || match fleet.get() {
        Some(Ok(_)) => None,
        Some(Err(e)) => Some(format!("No fleet can be sized: {e}")),
        None => Some(progress_text(runs)),
    };
    let full = move || share_link(&page_base(), &state.good.get());
    view! {
        <main class="embed-card" data-testid="embed-view">
            <header class="embed-head">
                <h2 data-testid="plan-title">{move || state.good.with(plan_title)}</h2>
                {move || state.good.with(|p| (!p.note.trim().is_empty()).then(|| p.note.trim().to_string())).map(|n| {
                    let full = n.clone();
                    view! { <p class="plan-note embed-note" data-testid="plan-note" title=full>{n}</p> }
                })}
                // A named plan says what it is about below its name; an unnamed one's title says it.
                {move || state.good.with(|p| (!p.name.trim().is_empty()).then(|| setup_words(p))).map(|w| view! {
                    <p class="embed-setup" data-testid="embed-setup">{w}</p>
                })}
                <p class="embed-slo">{move || state.good.with(|p| format!("At {}", slo_words(&p.slo)))}</p>
                {move || state.good.with(calibration_words).map(|w| view! {
                    <p class="embed-calibration" data-testid="embed-calibration" title=w.sentence>{w.badge}</p>
                })}
            </header>
            <Figures goodput=false compact=true />
            {move || status().map(|s| view! { <p class="embed-status" aria-live="polite">{s}</p> })}
            <ChartCanvas
                testid="chart-attainment"
                label="Attainment versus arrival rate per replica, with the target line and the knee"
                height=160.0
                fill=true
                draw=move |area, theme| chart.with(|d| draw_attainment(area, d, theme).unwrap_or_default())
                readout=move |_, x, _| chart.with(|d| d.readout(x))
            />
            <footer class="embed-foot">
                <a href=full target="_blank" rel="noopener noreferrer" data-testid="embed-open">
                    "Open the full plan ↗"
                </a>
                <span class="embed-brand">"goodput"</span>
            </footer>
        </main>
    }
}
