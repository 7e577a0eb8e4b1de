//! The traffic's prefix structure (`traffic.sharing`): a switch, the shared prefixes
//! and sessions' numbers, the turn order and whether replies are cached. Editing any of
//! them turns the structure on from the empty one; the switch turns it off again.

use goodput_core::plan::TurnOrder;
use goodput_core::Plan;
use leptos::prelude::*;

use crate::components::choices::{Choice, Switch};
use crate::components::number_field::NumberField;
use crate::state::fields::{fields_of, sharing_mut, sharing_of, Group};
use crate::state::PlanState;
use goodput_core::plan::fields::{field, Field};

/// The registry's switch that gives the traffic a prefix structure, or takes it away.
const SHARING: &Field = field("traffic.sharing");
/// The registry's order in which the sessions' turns reach the server.
const TURN_ORDER: &Field = field("traffic.sharing.order");
/// The registry's switch: whether a session's next turn finds the model's reply cached.
const REPLIES_CACHED: &Field = field("traffic.sharing.replies_cached");

fn order_name(p: &Plan) -> &'static str {
    sharing_of(p).order.name()
}

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
                <Switch
                    row=SHARING
                    get=|p| p.traffic.sharing.is_some()
                    set=|state, on| {
                        if on {
                            state.update(|p| {
                                sharing_mut(p);
                            });
                        } else {
                            state.change("prefix structure off", |p| p.traffic.sharing = None);
                        }
                    }
                />
                <p class="error" role="alert" data-testid="error-traffic.sharing">{move || message.get()}</p>
                {fields_of(Group::Prefix).map(|f| view! { <NumberField id=f.id /> }).collect_view()}
                <Choice
                    field=TURN_ORDER
                    get=order_name
                    set=|p, v| {
                        if let Some(o) = TurnOrder::parse(v) {
                            sharing_mut(p).order = o;
                        }
                    }
                />
                <Switch
                    row=REPLIES_CACHED
                    get=|p| sharing_of(p).replies_cached
                    set=|state, on| state.update(|p| sharing_mut(p).replies_cached = on)
                />
            </div>
        </fieldset>
    }
}
