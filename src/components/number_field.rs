//! One labelled numeric input with its help line, unit and inline error. Typed text is
//! applied when typing pauses ([`TYPING_PAUSE`]), on Enter or on leaving the field, so a
//! half-typed value ("1" of "1e9") never runs.

use leptos::prelude::*;

use crate::components::field_frame::{FieldFrame, FieldIds};
use crate::state::fields::field;
use crate::state::{PlanState, TYPING_PAUSE};

/// A numeric input bound to the plan field `id` (see `state::fields::FIELDS`).
#[component]
pub fn NumberField(
    /// Dotted path of the plan field, e.g. `engine.max_num_seqs`.
    id: &'static str,
) -> impl IntoView {
    let state = PlanState::expect_context();
    let Some(f) = field(id) else {
        return ().into_any();
    };
    let ids = FieldIds::of(id);
    let message = Memo::new(move |_| state.message_for(id));
    let timer = StoredValue::new_local(None::<TimeoutHandle>);
    let stop_timer = move || {
        if let Some(h) = timer.try_update_value(Option::take).flatten() {
            h.clear();
        }
    };
    on_cleanup(stop_timer);
    let on_input = move |text: String| {
        state.type_text(id, text);
        stop_timer();
        let handle = set_timeout_with_handle(
            move || {
                state.commit(id, true);
            },
            TYPING_PAUSE,
        )
        .ok();
        timer.set_value(handle);
    };
    let apply_now = move || {
        stop_timer();
        state.commit(id, false);
    };
    view! {
        <FieldFrame ids=ids.clone() label=f.label unit=f.unit message help=f.help.into_any()>
            <input
                id=ids.input.clone()
                type="text"
                inputmode="decimal"
                autocomplete="off"
                spellcheck="false"
                data-testid=ids.input_test_id()
                aria-describedby=ids.described_by()
                aria-invalid=move || message.with(Option::is_some).to_string()
                prop:value=move || state.text_of(id)
                on:input:target=move |ev| on_input(ev.target().value())
                on:blur=move |_| apply_now()
                on:keydown=move |ev| {
                    if ev.key() == "Enter" {
                        apply_now();
                    }
                }
            />
        </FieldFrame>
    }
    .into_any()
}
