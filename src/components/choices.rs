//! Enumerated inputs and switches: dtypes, arrival process, KV policy and chunked prefill.

use goodput_core::Plan;
use leptos::prelude::*;

use crate::components::field_frame::FieldIds;
use crate::state::PlanState;
use goodput_core::plan::fields::{field, Field};

/// A labelled `<select>` over one choice of the field registry: its label, help and
/// `(name, words)` pairs are the registry's, and its ids come from the field's path
/// ([`FieldIds`]), the help line describing it. A choice cannot be invalid, so it has
/// no error line.
#[component]
pub fn Choice(
    /// The registry's field (a [`Kind::Choice`](goodput_core::plan::fields::Kind)).
    field: &'static Field,
    /// Values not offered here unless the plan holds them already (a trace's arrivals
    /// come from importing one, and then show as such).
    #[prop(optional)]
    hidden: &'static [&'static str],
    /// Names the change for Undo (`None`: a pick is an edit, as a typed value is).
    #[prop(optional, into)]
    undo: Option<&'static str>,
) -> impl IntoView {
    let state = PlanState::expect_context();
    // The row reads and writes the plan (its `Setting`).
    let current = Memo::new(move |_| state.draft.with(|p| field.name_in(p).unwrap_or_default()));
    let set = move |p: &mut Plan, v: &str| field.set_name(p, v);
    let ids = FieldIds::of(field.path);
    view! {
        <div class="field">
            <label for=ids.input.clone()>{field.label}</label>
            <select
                id=ids.input.clone()
                data-testid=ids.input_test_id()
                data-field=field.path
                aria-describedby=ids.help.clone()
                on:change:target=move |ev| {
                    let v = ev.target().value();
                    match undo {
                        Some(what) => state.change(what, |p| set(p, &v)),
                        None => state.update(|p| set(p, &v)),
                    }
                }
            >
                {move || {
                    let now = current.get();
                    field
                        .choices()
                        .iter()
                        .filter(|(value, _)| !hidden.contains(value) || now == *value)
                        .map(|&(value, text)| {
                            view! {
                                <option value=value prop:selected=move || current.get() == value>
                                    {text}
                                </option>
                            }
                        })
                        .collect_view()
                }}
            </select>
            <p class="help" id=ids.help>{field.help}</p>
        </div>
    }
}

/// Weight and KV-cache precision.
#[component]
pub fn DtypeChoices() -> impl IntoView {
    view! {
        <Choice field=const { field("model.weight_dtype") } />
        <Choice field=const { field("model.kv_dtype") } />
    }
}

/// A checkbox of the inputs column for the switch `row`, which reads and writes the plan
/// (its `Setting`).
#[component]
pub fn Switch(
    /// The row of the switch (label, help, path).
    row: &'static Field,
    /// Names turning it off for Undo (`None`: a click is an edit either way).
    #[prop(optional, into)]
    undo_off: Option<&'static str>,
) -> impl IntoView {
    let state = PlanState::expect_context();
    let on = Memo::new(move |_| state.draft.with(|p| row.is_on(p).unwrap_or_default()));
    let set = move |state: PlanState, on: bool| match undo_off {
        Some(what) if !on => state.change(what, |p| row.set_on(p, false)),
        _ => state.update(|p| row.set_on(p, on)),
    };
    let ids = FieldIds::of(row.path);
    view! {
        <div class="field checkbox">
            <input
                id=ids.input.clone()
                type="checkbox"
                data-testid=ids.input_test_id()
                data-field=row.path
                aria-describedby=ids.help.clone()
                prop:checked=move || on.get()
                on:change:target=move |ev| set(state, ev.target().checked())
            />
            <label for=ids.input>{row.label}</label>
            <p class="help" id=ids.help>{row.help}</p>
        </div>
    }
}

/// The arrival process.
#[component]
pub fn ArrivalChoice() -> impl IntoView {
    view! {
        <Choice field=const { field("traffic.arrival") } hidden=&["trace"] />
    }
}

/// How the SLO's objectives combine: per request, or each as a percentile on its own.
#[component]
pub fn SloModeChoice() -> impl IntoView {
    view! {
        <Choice field=const { field("slo.mode") } />
    }
}

/// The registry's chunked-prefill switch.
const CHUNKED: &Field = field("engine.chunked_prefill");

/// KV-cache policy and chunked prefill.
#[component]
pub fn SchedulerChoices() -> impl IntoView {
    view! {
        <Switch row=CHUNKED />
        <Choice field=const { field("engine.kv_policy") } />
    }
}
