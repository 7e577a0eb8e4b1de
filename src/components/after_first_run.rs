//! The panels below the results, built once the page's first run has ended: building
//! them (their views, and the code the browser compiles for them on first use) would
//! otherwise share the first seconds with the first goodput search and hold back its
//! answer (BENCHMARKS.md, "The panels below the results built after the first run").
//! A user who scrolls near them, or prints, gets them at once; so does the planner
//! shown again after another view, once they have been built.

use std::sync::atomic::{AtomicBool, Ordering};

use leptos::ev;
use leptos::html;
use leptos::prelude::*;

use crate::compute::RunController;

/// How close to the bottom of the window the placeholder must come for the panels to
/// be built before the first run ends [window heights].
const NEAR_WINDOWS: f64 = 1.0;

/// Whether the panels have been built once on this page (the planner is unmounted while
/// another view shows).
static BUILT_ONCE: AtomicBool = AtomicBool::new(false);

/// Whether `el`'s top is within [`NEAR_WINDOWS`] window heights below the window.
fn near(el: &web_sys::HtmlElement) -> bool {
    let Some(height) = window().inner_height().ok().and_then(|h| h.as_f64()) else {
        return true;
    };
    el.get_bounding_client_rect().top() < height * (1.0 + NEAR_WINDOWS)
}

/// Shows a one-line placeholder until the first run has ended (or the user scrolls near
/// it, or prints), then builds `children` and keeps them.
#[component]
pub fn AfterFirstRun(children: ChildrenFn) -> impl IntoView {
    let runs = RunController::expect_context();
    let built = RwSignal::new(BUILT_ONCE.load(Ordering::Relaxed));
    let placeholder = NodeRef::<html::Div>::new();
    // Reads the phase only until the panels are built, so later runs do not wake it.
    Effect::new(move |_| {
        if !built.get_untracked() && runs.status.with(|s| s.phase.has_ended()) {
            built.set(true);
        }
    });
    // One handler for both events: scrolling builds them when near, printing always.
    let wake = move |always: bool| {
        move |_: ev::Event| {
            if !built.get_untracked()
                && (always || placeholder.get_untracked().is_some_and(|el| near(&el)))
            {
                built.set(true);
            }
        }
    };
    let listeners = [("scroll", false), ("beforeprint", true)]
        .map(|(name, always)| window_event_listener(ev::Custom::new(name), wake(always)));
    on_cleanup(move || listeners.into_iter().for_each(|l| l.remove()));
    view! {
        <Show
            when=move || built.get()
            fallback=move || {
                view! {
                    <div class="panels-pending" node_ref=placeholder data-testid="panels-pending">
                        "Calibration, GPU comparison, the day and more follow when the first run ends."
                    </div>
                }
            }
        >
            {
                BUILT_ONCE.store(true, Ordering::Relaxed);
                children()
            }
        </Show>
    }
}
