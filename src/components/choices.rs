//! Enumerated inputs: dtypes, arrival process, KV policy and chunked prefill.

use goodput_core::plan::{Arrival, Dtype, KvPolicy, SloMode};
use goodput_core::presets;
use goodput_core::Plan;
use leptos::prelude::*;

use crate::state::choices::{Choices, ARRIVALS, DTYPES, KV_POLICIES, SLO_MODES};
use crate::state::PlanState;

/// A labelled `<select>` over a fixed list of choices.
#[component]
fn Choice(
    /// Element id.
    id: &'static str,
    /// Label text.
    label: &'static str,
    /// One line of explanation.
    help: &'static str,
    /// `(value, text)` pairs.
    options: Choices,
    /// Values not offered here (a trace's arrivals come from importing one).
    #[prop(optional)]
    hidden: &'static [&'static str],
    /// Reads the current value from the plan.
    get: fn(&Plan) -> &'static str,
    /// Writes a picked value into the plan.
    set: fn(&mut Plan, &str),
) -> impl IntoView {
    let state = PlanState::expect_context();
    let current = Memo::new(move |_| state.draft.with(get));
    view! {
        <div class="field">
            <label for=id>{label}</label>
            <select
                id=id
                data-testid=id
                on:change:target=move |ev| {
                    let v = ev.target().value();
                    state.update(|p| set(p, &v));
                }
            >
                {options
                    .iter()
                    .filter(|(value, _)| !hidden.contains(value))
                    .map(|&(value, text)| {
                        view! {
                            <option value=value prop:selected=move || current.get() == value>
                                {text}
                            </option>
                        }
                    })
                    .collect_view()}
            </select>
            <p class="help">{help}</p>
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
            id="choice-weight-dtype"
            label="Weight dtype"
            help="Bytes per weight; fp8 also uses the GPU's fp8 peak."
            options=DTYPES
            get=|p| p.model.weight_dtype.name()
            set=set_weight_dtype
        />
        <Choice
            id="choice-kv-dtype"
            label="KV-cache dtype"
            help="Bytes per cached key/value entry."
            options=DTYPES
            get=|p| p.model.kv_dtype.name()
            set=|p, v| p.model.kv_dtype = dtype(v)
        />
    }
}

/// The arrival process.
#[component]
pub fn ArrivalChoice() -> impl IntoView {
    view! {
        <Choice
            id="choice-arrival"
            label="Arrivals"
            help="How requests are spaced in time."
            options=ARRIVALS
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
            id="choice-slo-mode"
            label="SLO mode"
            help="Joint: the target share of requests meets every objective at once. Marginal: each objective is a percentile on its own (p90 TTFT and p90 TPOT)."
            options=SLO_MODES
            get=|p| p.slo.mode.name()
            set=|p, v| {
                p.slo.mode = if v == "marginal" { SloMode::Marginal } else { SloMode::Joint }
            }
        />
    }
}

/// KV-cache policy and chunked prefill.
#[component]
pub fn SchedulerChoices() -> impl IntoView {
    let state = PlanState::expect_context();
    let chunked = Memo::new(move |_| state.draft.with(|p| p.engine.chunked_prefill));
    view! {
        <div class="field checkbox">
            <input
                id="choice-chunked"
                type="checkbox"
                data-testid="choice-chunked"
                prop:checked=move || chunked.get()
                on:change:target=move |ev| {
                    let on = ev.target().checked();
                    state.update(|p| p.engine.chunked_prefill = on);
                }
            />
            <label for="choice-chunked">"Chunked prefill"</label>
            <p class="help">"Split prompts to fit the step budget; off runs each whole prompt in one step."</p>
        </div>
        <Choice
            id="choice-kv-policy"
            label="KV-cache policy"
            help="How the engine admits requests when KV memory is finite."
            options=KV_POLICIES
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
