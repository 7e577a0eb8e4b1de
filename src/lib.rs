//! The goodput web app: thin Leptos components over `goodput-core`.

use goodput_core::{roofline::step_time_s, Plan};
use leptos::prelude::*;

/// The application root.
#[component]
pub fn App() -> impl IntoView {
    let plan = RwSignal::new(Plan::default());
    let step = Memo::new(move |_| plan.with(|p| step_time_s(p, 110.0, 110.0 * 940.0)));
    view! {
        <header class="app-header"><h1>"goodput"</h1></header>
        <main class="layout">
            <section class="inputs" aria-label="Inputs"></section>
            <section class="results" aria-label="Results">
                <p>
                    "Decode step (110 × 940 tokens): "
                    <span data-testid="decode-step-ms" data-value=move || step.get().to_string()>
                        {move || format!("{:.2} ms", step.get() * 1e3)}
                    </span>
                </p>
            </section>
        </main>
    }
}
