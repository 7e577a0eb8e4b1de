//! Short explanations of the concepts, linked from labels and headings.

use leptos::prelude::*;

const TERMS: &[(&str, &str, &str)] = &[
    ("ttft", "TTFT (time to first token)", "From the moment a request arrives until its first output token is emitted: queueing plus prefill of the prompt. It is what a user feels as responsiveness."),
    ("tpot", "TPOT (time per output token)", "The average gap between output tokens after the first, per request: the step time of the batches the request decodes in. Streaming has to stay ahead of the reader."),
    ("attainment", "Attainment", "The share of requests that meet every objective at once (TTFT and TPOT, and end-to-end if set); in marginal SLO mode, the smallest share meeting one objective on its own. A request that never finishes counts as a miss."),
    ("goodput", "Goodput", "The highest arrival rate per replica at which attainment still reaches the target. Throughput counts every token; goodput counts only requests served within the SLO."),
    ("knee", "Knee", "Where the attainment curve falls off: below it queues stay short, above it they grow without bound and attainment collapses within a few requests per second."),
    ("cost", "Cost per compliant request", "What one replica's GPUs cost per hour, divided by the requests it serves per hour at its planned rate (goodput times the utilisation factor), each meeting the SLO at the target share. It is the unit cost of a busy replica: the spare replicas and the rounding up to whole replicas are in the cost per month, not here."),
    ("budget", "Token budget", "max_num_batched_tokens: how many tokens one engine step may process, decodes plus prefill chunks. Larger budgets finish prompts sooner but stretch every step, which raises TPOT."),
    ("utilisation", "Utilisation factor", "Replicas are planned at a fraction of their goodput so that bursts and forecast errors do not push them over the knee."),
];

/// The glossary section; each term has the anchor `#term-<id>`.
#[component]
pub fn Glossary() -> impl IntoView {
    view! {
        <section class="panel glossary" id="glossary" aria-labelledby="glossary-title">
            <h2 id="glossary-title">"Glossary"</h2>
            <dl>
                {TERMS
                    .iter()
                    .map(|&(id, term, text)| {
                        view! {
                            <dt id=format!("term-{id}")>{term}</dt>
                            <dd>{text}</dd>
                        }
                    })
                    .collect_view()}
            </dl>
        </section>
    }
}

/// A link to a glossary term that scrolls to it without touching the URL fragment
/// (the fragment belongs to the plan).
#[component]
pub fn TermLink(
    /// Term id (`ttft`, `tpot`, `attainment`, `goodput`, `knee`, ...).
    term: &'static str,
    /// Link text.
    children: Children,
) -> impl IntoView {
    let target = format!("term-{term}");
    let on_click = {
        let target = target.clone();
        move |ev: leptos::ev::MouseEvent| {
            ev.prevent_default();
            if let Some(el) = document().get_element_by_id(&target) {
                el.scroll_into_view();
            }
        }
    };
    view! {
        <a class="term" href=format!("#{target}") on:click=on_click>
            {children()}
        </a>
    }
}
