//! The banner above a shared or broken link: what is shown, and one click back to the
//! user's own plan. Also shows problems with the browser's storage.

use leptos::prelude::*;

use crate::session::{Session, Visit};
use crate::state::PlanState;

/// The banner; empty for the user's own plan.
#[component]
pub fn ShareBanner() -> impl IntoView {
    let session = Session::expect_context();
    let state = PlanState::expect_context();
    // Once edited, the plan under a broken link's banner is no longer "the defaults".
    let at_defaults = Memo::new(move |_| state.good.with(|p| *p == goodput_core::Plan::default()));
    let problem = RwSignal::new(None::<String>);
    let has_own = move || session.own.with(Option::is_some);
    let keep = move |_| match session.keep_this() {
        Ok(()) => problem.set(None),
        Err(e) => problem.set(Some(format!("Could not keep the previous plan: {e}"))),
    };
    let banner = move || {
        let visit = session.visit.get()?;
        let keep_label = if visit == Visit::Shared {
            "Keep this plan"
        } else {
            "Start from the defaults"
        };
        let (class, testid, text) = match visit {
            Visit::Shared => (
                "share-banner",
                "shared-banner",
                "You are looking at a plan someone shared. Your own plan is kept as it was."
                    .to_string(),
            ),
            Visit::Broken(message) => (
                "share-banner broken",
                "link-error",
                if at_defaults.get() {
                    format!(
                        "This link could not be opened: {message}. Showing the default plan instead."
                    )
                } else {
                    format!(
                        "This link could not be opened: {message}. The plan shown started from \
                         the defaults; your own plan is kept as it was."
                    )
                },
            ),
        };
        Some(view! {
            <div class=class role="status" data-testid=testid>
                <p class="share-banner-text" data-testid="share-banner-text">{text}</p>
                <div class="share-banner-actions">
                    <Show when=has_own>
                        <button type="button" data-testid="back-to-own" on:click=move |_| session.back_to_own()>
                            "Back to my plan"
                        </button>
                    </Show>
                    <button type="button" data-testid="keep-shared" on:click=keep>
                        {keep_label}
                    </button>
                </div>
                {move || problem.get().map(|p| view! { <p class="share-banner-problem">{p}</p> })}
            </div>
        })
    };
    let storage = move || {
        session.storage_problem.get().map(|p| {
            view! {
                <div class="storage-note" role="status" data-testid="storage-problem">
                    {p}
                    <button type="button" class="linkish" on:click=move |_| session.storage_problem.set(None)>
                        "Dismiss"
                    </button>
                </div>
            }
        })
    };
    view! {
        {banner}
        {storage}
    }
}
