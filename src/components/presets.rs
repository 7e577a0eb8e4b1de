//! Preset pickers: model, GPU and SLO class. A preset fills fields; the fields stay editable.

use goodput_core::plan::fields::field;
use goodput_core::plan::SloSpec;
use goodput_core::presets::{GPUS, MODELS};
use goodput_core::slo::{slo_class, Percentile, SLO_CLASSES};
use leptos::prelude::*;

use crate::state::PlanState;

/// One `<select>` with a label and a help line.
#[component]
fn PresetSelect(
    /// Element id of the select.
    id: &'static str,
    /// Label text.
    label: &'static str,
    /// One line of explanation.
    help: &'static str,
    /// `(id, name)` of each option; `custom` is added at the end.
    options: Vec<(&'static str, &'static str)>,
    /// The selected id.
    #[prop(into)]
    selected: Signal<String>,
    /// Called with the picked id.
    on_pick: impl Fn(String) + 'static,
) -> impl IntoView {
    view! {
        <div class="field preset">
            <label for=id>{label}</label>
            <select id=id data-testid=id on:change:target=move |ev| on_pick(ev.target().value())>
                {options
                    .into_iter()
                    .map(|(value, name)| {
                        view! {
                            <option value=value prop:selected=move || selected.get() == value>
                                {name}
                            </option>
                        }
                    })
                    .collect_view()}
                <option value="custom" prop:selected=move || selected.get() == "custom" disabled=true>
                    "Custom (edited)"
                </option>
            </select>
            <p class="help">{help}</p>
        </div>
    }
}

/// Picks a model preset.
#[component]
pub fn ModelPreset() -> impl IntoView {
    let state = PlanState::expect_context();
    let options = MODELS.iter().map(|m| (m.id, m.name)).collect();
    let row = field("model.preset");
    let selected = Signal::derive(move || state.draft.with(|p| row.name_in(p).unwrap_or_default()));
    let on_pick = move |id: String| state.change("model preset", |p| row.set_name(p, &id));
    view! {
        <PresetSelect
            id="preset-model"
            label="Model preset"
            help="Fills the shape below from the model's published config."
            options
            selected
            on_pick
        />
    }
}

/// Picks a GPU preset.
#[component]
pub fn GpuPreset() -> impl IntoView {
    let state = PlanState::expect_context();
    let options = GPUS.iter().map(|g| (g.id, g.name)).collect();
    let row = field("hardware.preset");
    let selected = Signal::derive(move || state.draft.with(|p| row.name_in(p).unwrap_or_default()));
    let on_pick = move |id: String| state.change("GPU preset", |p| row.set_name(p, &id));
    view! {
        <PresetSelect
            id="preset-gpu"
            label="GPU preset"
            help="Fills bandwidth, effective compute, memory and price from the datasheet."
            options
            selected
            on_pick
        />
    }
}

/// Picks an SLO class; keeps the attainment target.
#[component]
pub fn SloClassPreset() -> impl IntoView {
    let state = PlanState::expect_context();
    let options = SLO_CLASSES.iter().map(|c| (c.id, c.label)).collect();
    let selected = Signal::derive(move || state.draft.with(|p| p.slo.class.clone()));
    let on_pick = move |id: String| {
        if let Some(c) = slo_class(&id) {
            state.change("SLO class", |p| {
                let target = p.slo.attainment_target;
                let pct = Percentile::from_target(target).unwrap_or(Percentile::P90);
                p.slo = SloSpec {
                    attainment_target: target,
                    mode: p.slo.mode,
                    ..c.to_spec(pct)
                };
            });
        }
    };
    let note = move || {
        state.draft.with(|p| {
            slo_class(&p.slo.class)
                .map(|c| c.note)
                .unwrap_or("custom objectives")
        })
    };
    view! {
        <PresetSelect
            id="preset-slo"
            label="SLO class"
            help="Typical objectives for the surface the tokens feed."
            options
            selected
            on_pick
        />
        <p class="note">{note}</p>
    }
}

/// Picks a published price for the plan's GPU, or keeps the plan's own.
#[component]
pub fn PriceOffer() -> impl IntoView {
    let state = PlanState::expect_context();
    let row = field("hardware.price_offer");
    let gpu = Memo::new(move |_| state.draft.with(|p| p.hardware.preset.clone()));
    let selected = Memo::new(move |_| state.draft.with(|p| row.name_in(p).unwrap_or_default()));
    let on_pick = move |id: String| state.change("price offer", |p| row.set_name(p, &id));
    let options = move || {
        goodput_core::prices::offers_for(&gpu.get())
            .into_iter()
            .map(|o| {
                view! {
                    <option value=o.id prop:selected=move || selected.get() == o.id>{o.label()}</option>
                }
            })
            .collect_view()
    };
    let source = move || state.draft.with(goodput_core::plan::price::source_words);
    view! {
        <div class="field preset">
            <label for="price-offer">{row.label}</label>
            <select id="price-offer" data-testid="price-offer"
                on:change:target=move |ev| on_pick(ev.target().value())>
                <option value="" prop:selected=move || selected.get().is_empty()>"Your own price (typed above)"</option>
                {options}
            </select>
            <p class="help" data-testid="price-source">{source}</p>
        </div>
    }
}
