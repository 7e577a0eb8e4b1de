//! The inputs column: six groups of labelled fields.

use leptos::prelude::*;

use crate::components::choices::{ArrivalChoice, DtypeChoices, SchedulerChoices, SloModeChoice};
use crate::components::class_inputs::ClassInputs;
use crate::components::deferred::{Deferred, Part};
use crate::components::field_frame::{FieldFrame, FieldIds};
use crate::components::glossary::TermLink;
use crate::components::length_preview::LengthPreview;
use crate::components::number_field::NumberField;
use crate::components::prefix_inputs::PrefixInputs;
use crate::components::presets::{GpuPreset, ModelPreset, PriceOffer, SloClassPreset};
use crate::components::print_facts::PrintFacts;
use crate::components::routing_inputs::RoutingInputs;
use crate::components::sweep_field::SweepField;
use crate::state::fields::{applies, fields_of, Group};
use crate::state::PlanState;

/// The numeric fields of `group`, except those listed in `skip`.
fn numbers(group: Group, skip: &'static [&'static str]) -> impl IntoView {
    fields_of(group)
        .filter(|f| !skip.contains(&f.id))
        .map(|f| view! { <NumberField id=f.id /> })
        .collect_view()
}

/// What a replayed trace gives the plan, while it holds one: its rows, which of
/// arrivals and lengths come from it, and the block ids that drive the prefix cache.
#[component]
fn ReplayNote() -> impl IntoView {
    use goodput_core::format::thousands;
    use goodput_core::plan::{Arrival, LengthDist};
    let state = PlanState::expect_context();
    let words = Memo::new(move |_| {
        state.draft.with(|p| {
            let t = &p.traffic;
            if t.trace.is_empty() {
                return None;
            }
            let mut from = Vec::new();
            if t.arrival == Arrival::Trace {
                from.push("arrival pattern (scaled to each simulated rate)");
            }
            if t.prompt.dist == LengthDist::Trace {
                from.push("prompt lengths");
            }
            if t.output.dist == LengthDist::Trace {
                from.push("output lengths");
            }
            let blocks: usize = t.trace.iter().map(|r| r.blocks.len()).sum();
            let mut s = format!(
                "A trace of {} requests is replayed: its {}.",
                thousands(t.trace.len() as i64),
                if from.is_empty() { "rows are kept but nothing uses them".to_string() } else { from.join(", ") }
            );
            if blocks > 0 {
                s.push_str(&format!(
                    " Its {} block ids say which prompt blocks repeat: the prefix cache's hits follow from them, and the prompt lengths must stay the trace's.",
                    thousands(blocks as i64)
                ));
            } else {
                s.push_str(" Typing a median below draws lengths instead.");
            }
            s.push_str(" Undo brings back the traffic from before the replay.");
            Some((s, blocks))
        })
    });
    move || {
        words.get().map(|(s, blocks)| {
            view! { <p class="note" data-testid="replay-note" data-blocks=blocks.to_string()>{s}</p> }
        })
    }
}

/// One group of inputs with a heading and an optional intro line.
#[component]
fn InputGroup(
    /// Heading.
    title: &'static str,
    /// One line under the heading.
    intro: &'static str,
    /// Fields.
    children: Children,
) -> impl IntoView {
    let slug = title.to_lowercase();
    view! {
        <fieldset class="group" data-testid=format!("group-{slug}")>
            <legend>{title}</legend>
            <p class="group-intro">{intro}</p>
            <div class="group-fields">{children()}</div>
        </fieldset>
    }
}

/// The plan's name and note: shown in the summary, the embed card, the exports' file
/// names and the saved-plans list, and carried in the link. Editing them re-runs nothing.
#[component]
fn PlanNameFields() -> impl IntoView {
    let state = PlanState::expect_context();
    let name = move || state.draft.with(|p| p.name.clone());
    let note = move || state.draft.with(|p| p.note.clone());
    // Their length is capped as they are typed, so neither is ever refused.
    let no_message = Memo::new(|_| None::<String>);
    let (name_ids, note_ids) = (FieldIds::of("name"), FieldIds::of("note"));
    view! {
        <fieldset class="group plan-name" data-testid="group-plan">
            <legend>"Plan"</legend>
            <FieldFrame ids=name_ids.clone() label="Name" unit="" message=no_message
                help="Titles the summary, the embed card and exported files.".into_any()>
                <input
                    id=name_ids.input.clone()
                    type="text"
                    data-testid=name_ids.input_test_id()
                    aria-describedby=name_ids.described_by()
                    maxlength=goodput_core::plan::MAX_NAME_CHARS.to_string()
                    placeholder="e.g. Chat fleet, EU launch"
                    prop:value=name
                    on:input:target=move |ev| {
                        let v = ev.target().value();
                        state.relabel(|p| p.name = v);
                    }
                />
            </FieldFrame>
            <FieldFrame ids=note_ids.clone() label="Note" unit="optional" message=no_message
                help="What the plan is for; the finance view and the embed card show it, and the link carries it.".into_any()>
                <textarea
                    id=note_ids.input.clone()
                    rows="2"
                    data-testid=note_ids.input_test_id()
                    aria-describedby=note_ids.described_by()
                    maxlength=goodput_core::plan::MAX_NOTE_CHARS.to_string()
                    placeholder="What the plan is for, what was assumed"
                    prop:value=note
                    on:input:target=move |ev| {
                        let v = ev.target().value();
                        state.relabel(|p| p.note = v);
                    }
                ></textarea>
            </FieldFrame>
        </fieldset>
    }
}

/// All inputs, grouped: Model, Hardware, Traffic, SLO, Engine, Planning.
#[component]
pub fn InputsColumn() -> impl IntoView {
    let state = PlanState::expect_context();
    let shown = move |id: &'static str| Memo::new(move |_| state.draft.with(|p| applies(id, p)));
    let bursty = shown("traffic.arrival.cv");
    let closed = shown("traffic.arrival.concurrency");
    view! {
        <a class="jump-results" href="#run-status" data-testid="jump-results">"Jump to results ↓"</a>
        <Deferred part=Part::PrintFacts>
            <PrintFacts />
        </Deferred>
        <form class="inputs-form" on:submit=|ev| ev.prevent_default() novalidate=true>
            <PlanNameFields />
            <InputGroup title="Model" intro="What is served: its size sets bytes per step, its shape the KV cache.">
                <ModelPreset />
                <DtypeChoices />
                {numbers(Group::Model, &[])}
            </InputGroup>
            <Deferred part=Part::Inputs>
                <InputGroup title="Hardware" intro="One GPU, how many per replica and how they connect, and what it costs.">
                    <GpuPreset />
                    {numbers(Group::Hardware, &["hardware.gpu_hour_usd"])}
                    <crate::components::replica_diagram::ReplicaDiagram />
                    <NumberField id="hardware.gpu_hour_usd" />
                    <PriceOffer />
                </InputGroup>
                <InputGroup title="Traffic" intro="The forecast peak and the shape of requests.">
                    <NumberField id="traffic.peak_rate_rps" />
                    <ArrivalChoice />
                    <ReplayNote />
                    <Show when=move || bursty.get()>
                        <NumberField id="traffic.arrival.cv" />
                    </Show>
                    <Show when=move || closed.get()>
                        <NumberField id="traffic.arrival.concurrency" />
                        <NumberField id="traffic.arrival.think_s" />
                        <p class="note">
                            "Simulate runs the clients as given; the goodput search asks about open-loop traffic and uses Poisson arrivals."
                        </p>
                    </Show>
                    {numbers(
                        Group::Traffic,
                        &[
                            "traffic.peak_rate_rps",
                            "traffic.arrival.cv",
                            "traffic.arrival.concurrency",
                            "traffic.arrival.think_s",
                        ],
                    )}
                    <LengthPreview />
                    <PrefixInputs />
                    <RoutingInputs />
                    <ClassInputs />
                </InputGroup>
                <InputGroup title="SLO" intro="What each request must meet, and for what share of requests.">
                    <SloClassPreset />
                    <p class="note">
                        "Objectives per request: "<TermLink term="ttft">"TTFT"</TermLink>", "
                        <TermLink term="tpot">"TPOT"</TermLink>"; the target is the "
                        <TermLink term="attainment">"attainment"</TermLink>" they must reach."
                    </p>
                    {numbers(Group::Slo, &[])}
                    <SloModeChoice />
                </InputGroup>
                <InputGroup title="Engine" intro="The scheduler knobs you pass to the server.">
                    <SchedulerChoices />
                    {numbers(Group::Engine, &[])}
                </InputGroup>
                <InputGroup title="Planning" intro="How hard each replica is driven, spares, and simulation effort.">
                    {numbers(Group::Planning, &[])}
                    <SweepField />
                </InputGroup>
            </Deferred>
        </form>
    }
}
