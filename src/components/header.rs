//! The page header: title and a slot for actions.

use leptos::prelude::*;

use crate::components::glossary::TermLink;

/// The page header. `header-actions` holds buttons (copy link, embed code, exports).
#[component]
pub fn Header(
    /// Extra buttons shown at the right of the header.
    #[prop(optional)]
    children: Option<Children>,
) -> impl IntoView {
    view! {
        <header class="app-header">
            <div class="brand">
                <h1>"goodput"</h1>
                <p class="tagline">
                    "How many requests per second each replica serves within your latency SLO, and what the fleet costs."
                </p>
            </div>
            <nav class="header-actions" aria-label="Plan actions">
                {children.map(|c| c())}
                <TermLink term="goodput">"Glossary"</TermLink>
            </nav>
        </header>
    }
}
