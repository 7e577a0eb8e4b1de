//! The embed card (`&embed`): a compact, read-only card for an `<iframe>` in a doc or
//! wiki: the headline numbers, the attainment chart and a link out to the full plan.
//! No inputs; it works from 320 px wide. Framed, it tells the page that frames it the
//! height it needs ([`EMBED_HEIGHT_MESSAGE`]), which the snippet's script applies.

use leptos::prelude::*;

use crate::charts::attainment::draw_attainment;
use crate::components::chart_canvas::ChartCanvas;
use crate::components::charts_panel::attainment_chart;
use crate::compute::RunController;
use crate::hooks::use_report::use_report;
use crate::state::PlanState;
use crate::summary::{calibration_words, plan_slo_words, setup_words};
use crate::url_state::{
    page_base, plan_title, share_link, EMBED_CHART_MIN_PX, EMBED_HEIGHT_MESSAGE,
};
use crate::views::finance::{progress_text, Figures};
use wasm_bindgen::prelude::*;

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
    let card = NodeRef::<leptos::html::Main>::new();
    tell_parent_the_height(card);
    view! {
        <main class="embed-card" data-testid="embed-view" node_ref=card>
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
                <p class="embed-slo">{move || state.good.with(|p| format!("At {}", plan_slo_words(p)))}</p>
                {move || state.good.with(calibration_words).map(|w| view! {
                    <p class="embed-calibration" data-testid="embed-calibration" title=w.sentence>{w.badge}</p>
                })}
            </header>
            <Figures goodput=false compact=true />
            {move || status().map(|s| view! { <p class="embed-status" aria-live="polite">{s}</p> })}
            <ChartCanvas
                testid="chart-attainment"
                label="Attainment versus arrival rate per replica, with the target line and the knee"
                height=EMBED_CHART_MIN_PX
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

/// The height the card needs [CSS px]: the page's, less what the chart took beyond its
/// least height (it fills a frame taller than the card needs).
fn needed_height(card: &web_sys::Element) -> f64 {
    let page = document()
        .document_element()
        .map_or(0, |e| e.scroll_height()) as f64;
    let chart = card
        .query_selector(".chart-stack")
        .ok()
        .flatten()
        .map_or(0, |s| s.client_height()) as f64;
    page - (chart - EMBED_CHART_MIN_PX).max(0.0)
}

/// Posts the card's needed height to the page that frames it, whenever the card or its
/// chart changes size (the figures arriving, the frame's width changing). An effect that
/// only looks outward: it writes no signal. Nothing is posted when the card is the top
/// page.
fn tell_parent_the_height(card: NodeRef<leptos::html::Main>) {
    let observer = StoredValue::new_local(None::<(web_sys::ResizeObserver, Closure<dyn Fn()>)>);
    Effect::new(move |_| {
        let Some(el) = card.get() else {
            return;
        };
        let win = window();
        let Some(parent) = win.parent().ok().flatten() else {
            return;
        };
        if observer.with_value(Option::is_some) || js_sys::Object::is(&parent, &win) {
            return;
        }
        let watched: web_sys::Element = el.clone().into();
        let post = Closure::<dyn Fn()>::new(move || {
            let message = js_sys::Object::new();
            let height = JsValue::from_f64(needed_height(&watched).ceil());
            if js_sys::Reflect::set(&message, &EMBED_HEIGHT_MESSAGE.into(), &height).is_ok() {
                let _ = parent.post_message(&message, "*");
            }
        });
        if let Ok(o) = web_sys::ResizeObserver::new(post.as_ref().unchecked_ref()) {
            o.observe(&el);
            if let Ok(Some(stack)) = el.query_selector(".chart-stack") {
                o.observe(&stack);
            }
            observer.set_value(Some((o, post)));
        }
    });
    on_cleanup(move || {
        if let Some((o, _)) = observer.try_update_value(Option::take).flatten() {
            o.disconnect();
        }
    });
}
