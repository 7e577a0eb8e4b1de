//! Routing over replicas (`routing`): a switch that simulates several replicas together
//! behind a router, so that where a request lands decides whether its prefix is cached,
//! then how many and which router. Off (`None`), one replica is simulated, as plans and
//! links made before routing existed are. The switch and the router are undoable steps;
//! the replicas are typed as any number is.

use goodput_core::plan::fields::{field, Field};
use goodput_core::plan::RoutingSpec;
use goodput_core::report::routing_words;
use goodput_core::Plan;
use leptos::prelude::*;

use crate::components::choices::Choice;
use crate::components::field_frame::FieldIds;
use crate::components::number_field::NumberField;
use crate::compute::{Phase, RunController};
use crate::hooks::use_report::use_report;
use crate::state::PlanState;

/// The registry's replicas behind the router.
const REPLICAS: &Field = field("routing.replicas");
/// The registry's router.
const ROUTER: &Field = field("routing.router");

/// The plan path the switch stands for (the registry has rows for its replicas and its
/// router, not for the section itself).
const SWITCH_PATH: &str = "routing";
/// The switch's label.
pub const SWITCH_LABEL: &str = "Simulate replicas behind a router";

/// What the plan simulates, in the report's words without its "Routing: " heading, as a
/// sentence: "One replica is simulated; …", "Goodput per replica is simulated on 2
/// replicas behind a router that picks …".
pub fn routing_help(plan: &Plan) -> String {
    let words = routing_words(plan);
    let words = words.strip_prefix("Routing: ").unwrap_or(&words);
    goodput_core::format::sentence(words)
}

/// The "Routing over replicas" part of the inputs.
#[component]
pub fn RoutingInputs() -> impl IntoView {
    let state = PlanState::expect_context();
    let on = Memo::new(move |_| state.draft.with(|p| p.routing.is_some()));
    let help = Memo::new(move |_| state.draft.with(routing_help));
    let message = Memo::new(move |_| state.message_for(SWITCH_PATH));
    // What the router saves against round robin, from the report once that search ran.
    let report = use_report().report;
    let runs = RunController::expect_context();
    let saved = move || report.with(|r| r.as_ref().and_then(|(_, r)| r.router_savings.clone()));
    let savings = move || {
        if runs.status.with(|s| s.phase == Phase::Baseline) {
            return Some(
                "Finding the goodput behind round robin, to compare the router…".to_string(),
            );
        }
        saved().map(|s| s.words())
    };
    // The two goodputs as numbers, for checks against `goodput plan --json`.
    let goodputs = move || {
        saved().map(|s| {
            (
                s.routed.goodput_rps.to_string(),
                s.round_robin.goodput_rps.to_string(),
            )
        })
    };
    let ids = FieldIds::of(SWITCH_PATH);
    view! {
        <fieldset class="subgroup" data-testid="group-routing" data-on=move || on.get().to_string()>
            <legend>"Routing over replicas"</legend>
            <div class="group-fields">
                <div class="field checkbox" class:invalid=move || message.with(Option::is_some)>
                    <input
                        id=ids.input.clone()
                        type="checkbox"
                        data-testid=ids.input_test_id()
                        aria-describedby=ids.described_by()
                        prop:checked=move || on.get()
                        on:change:target=move |ev| {
                            if ev.target().checked() {
                                state.change("replicas behind a router", |p| {
                                    p.routing = Some(RoutingSpec::default());
                                });
                            } else {
                                state.change("one replica, no router", |p| p.routing = None);
                            }
                        }
                    />
                    <label for=ids.input.clone()>{SWITCH_LABEL}</label>
                    <p class="help" id=ids.help.clone() data-testid="routing-help">{move || help.get()}</p>
                    <p class="error" id=ids.error.clone() role="alert" data-testid=format!("error-{SWITCH_PATH}")>
                        {move || message.get()}
                    </p>
                </div>
                <Show when=move || on.get()>
                    <p
                        class="note"
                        data-testid="routing-savings"
                        data-goodput=move || goodputs().map(|g| g.0)
                        data-round-robin-goodput=move || goodputs().map(|g| g.1)
                    >
                        {savings}
                    </p>
                    <NumberField id=REPLICAS.path />
                    <Choice field=ROUTER undo="replica router" />
                </Show>
            </div>
        </fieldset>
    }
}
