//! How one replica spreads over GPUs and nodes: a box per node, a square per GPU in the
//! colour of its pipeline stage, and the layout in one sentence
//! ([`goodput_core::fleet::replica_layout`]).

use goodput_core::fleet::replica_layout;
use leptos::prelude::*;

use crate::state::PlanState;

/// Stage colours, repeated past the sixth stage.
const STAGE_CLASSES: usize = 6;

/// The diagram of the replica of the last plan that validated (a refused degree is not
/// drawn), shown when it has more than one GPU.
#[component]
pub fn ReplicaDiagram() -> impl IntoView {
    let state = PlanState::expect_context();
    let layout = Memo::new(move |_| state.good.with(replica_layout));
    let many = move || layout.with(|l| l.nodes.iter().map(Vec::len).sum::<usize>() > 1);
    view! {
        <Show when=many>
            <figure class="replica-diagram" data-testid="replica-diagram">
                <div class="nodes" aria-hidden="true">
                    {move || layout.with(|l| {
                        l.nodes
                            .iter()
                            .enumerate()
                            .map(|(i, gpus)| {
                                let squares = gpus
                                    .iter()
                                    .map(|&stage| {
                                        let class = format!("gpu stage-{}", stage as usize % STAGE_CLASSES);
                                        view! { <span class=class title=format!("stage {}", stage + 1)></span> }
                                    })
                                    .collect_view();
                                view! {
                                    <div class="node" data-testid="replica-node" data-gpus=gpus.len().to_string()>
                                        <span class="node-label">{format!("node {}", i + 1)}</span>
                                        <div class="gpus">{squares}</div>
                                    </div>
                                }
                            })
                            .collect_view()
                    })}
                </div>
                <figcaption data-testid="replica-words">{move || layout.with(|l| l.words.clone())}</figcaption>
            </figure>
        </Show>
    }
}
