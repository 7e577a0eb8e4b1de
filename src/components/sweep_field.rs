//! The measured-sweep box: `rate,attainment` rows from a load test, whose knee replaces
//! the simulated goodput.

use leptos::prelude::*;

use crate::components::glossary::TermLink;
use crate::state::{PlanState, SWEEP_FIELD};

/// The article's example sweep, shown as the placeholder.
pub const SWEEP_PLACEHOLDER: &str = "4,0.99\n6,0.97\n8,0.93\n9,0.71\n10,0.38";

/// A labelled textarea bound to `planning.measured_sweep`, parsed as the user types.
#[component]
pub fn SweepField() -> impl IntoView {
    let state = PlanState::expect_context();
    let input_id = "in-planning-measured_sweep";
    let help_id = format!("{input_id}-help");
    let err_id = format!("{input_id}-error");
    let message = Memo::new(move |_| state.message_for(SWEEP_FIELD));
    let rows = Memo::new(move |_| state.good.with(|p| p.planning.measured_sweep.len()));
    let described = format!("{help_id} {err_id}");
    view! {
        <div class="field field-wide" class:invalid=move || message.with(Option::is_some)>
            <label for=input_id>
                "Measured sweep (optional)"
                <span class="unit">"req/s, 0–1"</span>
            </label>
            <textarea
                id=input_id
                rows="5"
                spellcheck="false"
                autocomplete="off"
                placeholder=SWEEP_PLACEHOLDER
                data-testid=format!("input-{SWEEP_FIELD}")
                aria-describedby=described
                aria-invalid=move || message.with(Option::is_some).to_string()
                prop:value=move || state.sweep_text()
                on:input:target=move |ev| state.input_sweep(ev.target().value())
            ></textarea>
            <p class="help" id=help_id>
                "Paste rate,attainment rows from a load test; the "
                <TermLink term="knee">"knee"</TermLink>
                " replaces the simulated goodput."
                {move || match rows.get() {
                    0 => String::new(),
                    n => format!(" Using {n} measured rows."),
                }}
            </p>
            <p class="error" id=err_id role="alert" data-testid=format!("error-{SWEEP_FIELD}")>
                {move || message.get()}
            </p>
        </div>
    }
}
