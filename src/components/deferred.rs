//! Parts of the planner below the fold or for print only, built once the page's first
//! run has ended rather than with the page: building them (their views, their charts,
//! the layout of their text, and the code the browser compiles for them on first use)
//! would otherwise share the first second with the first goodput search and hold back
//! its answer, and then share the cores with the knob sweep (docs/benchmark-history.md,
//! "The panels below the results built after the first run" and "The charts, the inputs
//! below the fold and the print-only facts built after the first run").
//!
//! A user who scrolls near them, or prints, gets them at once; so does the planner shown
//! again after another view, once they have been built.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use leptos::ev;
use leptos::html;
use leptos::prelude::*;

use crate::compute::{Phase, RunController};

/// How close to the bottom of the window a placeholder must come for its part to be
/// built early [window heights].
const NEAR_WINDOWS: f64 = 1.0;

/// How long a first search may go on without an answer before the charts are built
/// anyway, to show its progress, and how long after the page shows the inputs below the
/// fold are built whatever the run is doing [ms].
pub const LONG_SEARCH_MS: u64 = 1000;

/// The widest window at which the planner stacks its inputs above its results: the
/// `@media (max-width: 1000px)` rule of style/main.css, which a test holds equal [CSS px].
pub const STACKED_MAX_WIDTH_PX: u32 = 1000;

/// Whether the inputs sit beside the results. Only then are the inputs below the fold
/// deferred: stacked above the results, they would push the results down when built.
fn side_by_side() -> bool {
    let query = format!("(min-width: {}px)", STACKED_MAX_WIDTH_PX + 1);
    window()
        .match_media(&query)
        .ok()
        .flatten()
        .is_some_and(|m| m.matches())
}

/// A part of the planner built after the first run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The charts and the checks beside them. A first search still without an answer
    /// after [`LONG_SEARCH_MS`] gets them then, to show its progress on them.
    Charts,
    /// The panels below the results.
    Panels,
    /// The input groups below the model's (hardware, traffic, SLO, engine, planning), in a
    /// window wide enough to show them beside the results (built at once otherwise). They
    /// are built [`LONG_SEARCH_MS`] after the page shows at the latest, whatever the run
    /// is doing, so that a long run never keeps them from the user.
    Inputs,
    /// The print-only list of the plan's inputs, which states the plan's assumptions and
    /// its share link (no placeholder on screen; printing builds it at once).
    PrintFacts,
}

impl Part {
    /// The placeholder's test id and text.
    fn placeholder(self) -> (&'static str, &'static str) {
        match self {
            Part::PrintFacts => ("print-facts-pending", ""),
            Part::Inputs => (
                "inputs-pending",
                "The hardware, traffic, SLO, engine and planning inputs follow in a moment.",
            ),
            Part::Charts => (
                "charts-pending",
                "The charts, the roofline, the analytic checks and the alert rules follow when the first run ends.",
            ),
            Part::Panels => (
                "panels-pending",
                "Calibration, GPU comparison, the day and more follow when the first run ends.",
            ),
        }
    }

    /// Whether this part has been built once on this page (the planner is unmounted
    /// while another view shows).
    fn built_once(self) -> &'static AtomicBool {
        static CHARTS: AtomicBool = AtomicBool::new(false);
        static PANELS: AtomicBool = AtomicBool::new(false);
        static PRINT_FACTS: AtomicBool = AtomicBool::new(false);
        static INPUTS: AtomicBool = AtomicBool::new(false);
        match self {
            Part::Inputs => &INPUTS,
            Part::Charts => &CHARTS,
            Part::Panels => &PANELS,
            Part::PrintFacts => &PRINT_FACTS,
        }
    }
}

/// Whether `el`'s top is within [`NEAR_WINDOWS`] window heights below the window.
fn near(el: &web_sys::HtmlElement) -> bool {
    let Some(height) = window().inner_height().ok().and_then(|h| h.as_f64()) else {
        return true;
    };
    el.get_bounding_client_rect().top() < height * (1.0 + NEAR_WINDOWS)
}

/// Shows a one-line placeholder (marked `data-deferred`) until the first run has ended
/// (or the user scrolls near it, or prints), then builds `children` and keeps them. At the
/// run's end they are built once the frame showing its last results is painted.
#[component]
pub fn Deferred(
    /// Which part this is.
    part: Part,
    /// The part.
    children: ChildrenFn,
) -> impl IntoView {
    let runs = RunController::expect_context();
    let built = RwSignal::new(
        part.built_once().load(Ordering::Relaxed) || (part == Part::Inputs && !side_by_side()),
    );
    let placeholder = NodeRef::<html::Div>::new();
    // `unless` skips the build when the run is then in that phase; from a timer, as the
    // planner may have been left for another view meanwhile.
    let build = move |unless: Option<Phase>| {
        if built.try_get_untracked() == Some(false)
            && unless.is_none_or(|p| !runs.status.with_untracked(|s| s.phase == p))
        {
            built.set(true);
        }
    };
    let long = Duration::from_millis(LONG_SEARCH_MS);
    match part {
        _ if built.get_untracked() => {}
        Part::Charts => set_timeout(move || build(Some(Phase::Sweep)), long),
        Part::Inputs => set_timeout(move || build(None), long),
        Part::Panels | Part::PrintFacts => {}
    }
    // Built once the frame that shows the run's last results is painted: now, when the
    // run has ended already, else when it ends.
    let after_paint =
        move || request_animation_frame(move || set_timeout(move || build(None), Duration::ZERO));
    if !built.get_untracked() {
        if runs.status.with_untracked(|s| s.phase.has_ended()) {
            after_paint();
        } else {
            // Heard once: the listener goes when the run has ended, or the part with it.
            let id = StoredValue::new(None);
            let forget = move || {
                if let Some(i) = id.try_update_value(Option::take).flatten() {
                    runs.forget(i);
                }
            };
            id.set_value(Some(runs.on_end(move || {
                after_paint();
                forget();
            })));
            on_cleanup(forget);
        }
    }
    // One handler for both events: printing builds them at once; scrolling when near (a
    // part seen on screen only), after the event, so that every part's placeholder is
    // measured before another part built above it moves it down.
    let wake = move |print: bool| {
        move |_: ev::Event| {
            if print {
                build(None);
            } else if part != Part::PrintFacts
                && placeholder.get_untracked().is_some_and(|el| near(&el))
            {
                set_timeout(move || build(None), Duration::ZERO);
            }
        }
    };
    let listeners = [("scroll", false), ("beforeprint", true)]
        .map(|(name, print)| window_event_listener(ev::Custom::new(name), wake(print)));
    on_cleanup(move || listeners.into_iter().for_each(|l| l.remove()));
    let (testid, text) = part.placeholder();
    view! {
        <Show
            when=move || built.get()
            fallback=move || {
                view! {
                    <div
                        class="panels-pending"
                        class:print-only=part == Part::PrintFacts
                        node_ref=placeholder
                        data-testid=testid
                        data-deferred=""
                    >
                        {text}
                    </div>
                }
            }
        >
            {
                part.built_once().store(true, Ordering::Relaxed);
                children()
            }
        </Show>
    }
}

#[cfg(test)]
mod tests {
    use super::STACKED_MAX_WIDTH_PX;

    #[test]
    fn the_stacked_layout_starts_where_the_style_sheet_says() {
        let css = include_str!("../../style/main.css");
        let rule = format!(
            "@media (max-width: {STACKED_MAX_WIDTH_PX}px) {{\n  .layout {{ grid-template-columns: 1fr; }}"
        );
        assert!(css.contains(&rule), "style/main.css has no rule {rule:?}");
    }
}
