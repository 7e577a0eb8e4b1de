//! The measured-sweep box: `rate,attainment` rows from a load test, whose knee replaces
//! the simulated goodput.

use leptos::prelude::*;

use crate::components::field_frame::{FieldFrame, FieldIds};
use crate::components::glossary::TermLink;
use crate::state::{PlanState, SWEEP_FIELD};

/// The article's example sweep, shown as the placeholder.
pub const SWEEP_PLACEHOLDER: &str = "4,0.99\n6,0.97\n8,0.93\n9,0.71\n10,0.38";

/// A labelled textarea bound to `planning.measured_sweep`, parsed as the user types.
#[component]
pub fn SweepField() -> impl IntoView {
    let state = PlanState::expect_context();
    let ids = FieldIds::of(SWEEP_FIELD);
    let message = Memo::new(move |_| state.message_for(SWEEP_FIELD));
    let rows = Memo::new(move |_| state.good.with(|p| p.planning.measured_sweep.len()));
    let help = view! {
        "Paste rate,attainment rows from a load test; the "
        <TermLink term="knee">"knee"</TermLink>
        " replaces the simulated goodput."
        {move || match rows.get() {
            0 => String::new(),
            n => format!(" Using {n} measured rows."),
        }}
    };
    view! {
        <FieldFrame
            ids=ids.clone()
            label="Measured sweep (optional)"
            unit="req/s, 0–1"
            wide=true
            message
            help=help.into_any()
        >
            <textarea
                id=ids.input.clone()
                rows="5"
                spellcheck="false"
                autocomplete="off"
                placeholder=SWEEP_PLACEHOLDER
                data-testid=ids.input_test_id()
                aria-describedby=ids.described_by()
                aria-invalid=move || message.with(Option::is_some).to_string()
                prop:value=move || state.sweep_text()
                on:input:target=move |ev| state.input_sweep(ev.target().value())
            ></textarea>
        </FieldFrame>
    }
}
