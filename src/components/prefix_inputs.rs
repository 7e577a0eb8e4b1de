//! The traffic's prefix structure (`traffic.sharing`): a switch, the shared prefixes
//! and sessions' numbers, the turn order and whether replies are cached. Editing any of
//! them turns the structure on from the empty one; the switch turns it off again.

use leptos::prelude::*;

use crate::components::choices::{Choice, Switch};
use crate::components::number_field::NumberField;
use crate::state::fields::{fields_of, Group};
use crate::state::PlanState;
use goodput_core::plan::fields::{field, Field};

/// The registry's switch that gives the traffic a prefix structure, or takes it away.
const SHARING: &Field = field("traffic.sharing");
/// The registry's order in which the sessions' turns reach the server.
const TURN_ORDER: &Field = field("traffic.sharing.order");
/// The registry's switch: whether a session's next turn finds the model's reply cached.
const REPLIES_CACHED: &Field = field("traffic.sharing.replies_cached");

/// The "Prefix structure" part of the traffic inputs.
#[component]
pub fn PrefixInputs() -> impl IntoView {
    let state = PlanState::expect_context();
    // What the core says about the structure as a whole (a trace's lengths, say).
    let message = Memo::new(move |_| state.message_for(SHARING.path));
    view! {
        <fieldset class="subgroup" data-testid="group-prefix"
            data-on=move || state.draft.with(|p| p.traffic.sharing.is_some()).to_string()>
            <legend>"Prefix structure"</legend>
            <div class="group-fields">
                <Switch row=SHARING undo_off="prefix structure off" />
                <p class="error" role="alert" data-testid="error-traffic.sharing">{move || message.get()}</p>
                {fields_of(Group::Prefix).map(|f| view! { <NumberField id=f.id /> }).collect_view()}
                <Choice field=TURN_ORDER />
                <Switch row=REPLIES_CACHED />
            </div>
        </fieldset>
    }
}
