//! Enumerated inputs and switches: dtypes, arrival process, KV policy and chunked prefill.

use goodput_core::plan::{Arrival, Dtype, KvPolicy, SloMode};
use goodput_core::presets;
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
    /// Reads the current value from the plan.
    get: fn(&Plan) -> &'static str,
    /// Writes a picked value into the plan.
    set: fn(&mut Plan, &str),
    /// Names the change for Undo (`None`: a pick is an edit, as a typed value is).
    #[prop(optional, into)]
    undo: Option<&'static str>,
) -> impl IntoView {
    let state = PlanState::expect_context();
    let current = Memo::new(move |_| state.draft.with(get));
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

fn dtype(s: &str) -> Dtype {
    match s {
        "fp8" => Dtype::Fp8,
        "int4" => Dtype::Int4,
        _ => Dtype::Bf16,
    }
}

fn set_weight_dtype(p: &mut Plan, v: &str) {
    p.model.weight_dtype = dtype(v);
    // The effective FLOP/s of a GPU preset depends on the weight dtype (fp8 tensor cores).
    if let Some(g) = presets::gpu(&p.hardware.preset) {
        g.apply(p);
    }
}

/// Weight and KV-cache precision.
#[component]
pub fn DtypeChoices() -> impl IntoView {
    view! {
        <Choice
            field=const { field("model.weight_dtype") }
            get=|p| p.model.weight_dtype.name()
            set=set_weight_dtype
        />
        <Choice
            field=const { field("model.kv_dtype") }
            get=|p| p.model.kv_dtype.name()
            set=|p, v| p.model.kv_dtype = dtype(v)
        />
    }
}

/// A checkbox of the inputs column for the switch `row`: checked as `get` reads the
/// plan, `set` writes a change.
#[component]
pub fn Switch(
    /// The row of the switch (label, help, path).
    row: &'static Field,
    /// Reads the switch from the plan.
    get: fn(&Plan) -> bool,
    /// Writes the switch into the plan.
    set: fn(PlanState, bool),
) -> impl IntoView {
    let state = PlanState::expect_context();
    let on = Memo::new(move |_| state.draft.with(get));
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
        <Choice
            field=const { field("traffic.arrival") }
            hidden=&["trace"]
            get=|p| p.traffic.arrival.name()
            set=|p, v| {
                p.traffic.arrival = match v {
                    "gamma" => Arrival::Gamma { cv: 2.0 },
                    "constant" => Arrival::Constant,
                    "closed" => Arrival::Closed { concurrency: 64, think_s: 0.0 },
                    _ => Arrival::Poisson,
                }
            }
        />
    }
}

/// How the SLO's objectives combine: per request, or each as a percentile on its own.
#[component]
pub fn SloModeChoice() -> impl IntoView {
    view! {
        <Choice
            field=const { field("slo.mode") }
            get=|p| p.slo.mode.name()
            set=|p, v| {
                p.slo.mode = if v == "marginal" { SloMode::Marginal } else { SloMode::Joint }
            }
        />
    }
}

/// The registry's chunked-prefill switch.
const CHUNKED: &Field = field("engine.chunked_prefill");

/// KV-cache policy and chunked prefill.
#[component]
pub fn SchedulerChoices() -> impl IntoView {
    view! {
        <Switch
            row=CHUNKED
            get=|p| p.engine.chunked_prefill
            set=|state, on| state.update(|p| p.engine.chunked_prefill = on)
        />
        <Choice
            field=const { field("engine.kv_policy") }
            get=|p| p.engine.kv_policy.name()
            set=|p, v| {
                p.engine.kv_policy = match v {
                    "reserve" => KvPolicy::Reserve,
                    "none" => KvPolicy::None,
                    _ => KvPolicy::Paged,
                }
            }
        />
    }
}
