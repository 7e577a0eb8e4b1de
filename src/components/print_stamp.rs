//! The line a printout ends with: the day it was printed and the plan's share link, so a
//! page on a desk leads back to the plan. Shown in print only.

use leptos::ev;
use leptos::prelude::*;

use crate::state::PlanState;
use crate::url_state::{page_base, share_link};

/// Today's date as `YYYY-MM-DD` (UTC), from the browser's clock.
fn today() -> String {
    let iso: String = js_sys::Date::new_0().to_iso_string().into();
    iso.get(..10).unwrap_or(&iso).to_string()
}

/// The print-only stamp: date and the good plan's share link.
#[component]
pub fn PrintStamp() -> impl IntoView {
    let state = PlanState::expect_context();
    let printed = RwSignal::new(today());
    // A page left open overnight prints with the day it is printed on.
    let listener = window_event_listener(ev::Custom::<ev::Event>::new("beforeprint"), move |_| {
        printed.set(today())
    });
    on_cleanup(move || listener.remove());
    let link = Memo::new(move |_| state.good.with(|p| share_link(&page_base(), p)));
    view! {
        <p class="print-stamp print-only" data-testid="print-stamp">
            "Printed "
            <time datetime=move || printed.get() data-testid="print-date">{move || printed.get()}</time>
            ". This plan, to open and change: "
            <a href=move || link.get() data-testid="print-link">{move || link.get()}</a>
        </p>
    }
}
