//! The engine settings card: the knob sweep's best cell and its launch flags.

use goodput_core::search::{launch_flags, Knobs};
use leptos::prelude::*;

use crate::components::copy_button::CopyButton;
use crate::compute::RunController;

/// What the card shows: the settings, their launch command, and where they come from.
#[derive(Debug, Clone, PartialEq)]
struct Shown {
    knobs: Option<Knobs>,
    flags: String,
    title: String,
    goodput_rps: Option<f64>,
}

/// The best engine settings with a copyable `vllm serve` command.
#[component]
pub fn BestSettings() -> impl IntoView {
    let runs = RunController::expect_context();
    let shown = Memo::new(move |_| {
        if let Some(s) = runs.sweep.get() {
            let best = s.best_cell();
            return Shown {
                knobs: Some(best.knobs),
                flags: s.flags.vllm.clone(),
                title: "Best engine settings (knob sweep)".into(),
                goodput_rps: Some(best.goodput_rps),
            };
        }
        let title = match runs.sweep_error.get() {
            Some(e) => format!("Engine settings of the plan (no knob sweep: {e})"),
            None => "Engine settings of the plan (knob sweep pending)".into(),
        };
        runs.search.with(|s| match s {
            Some((plan, _)) => Shown {
                knobs: Some(Knobs::of(plan)),
                flags: launch_flags(plan, &Knobs::of(plan)).vllm,
                title,
                goodput_rps: None,
            },
            None => Shown {
                knobs: None,
                flags: String::new(),
                title,
                goodput_rps: None,
            },
        })
    });
    let flags = Signal::derive(move || shown.with(|s| s.flags.clone()));
    let summary = move || {
        shown.with(|s| match s.knobs {
            None => "—".to_string(),
            Some(k) => format!(
                "max_num_seqs {}, budget {}{}",
                k.max_num_seqs,
                k.max_num_batched_tokens,
                if k.chunked_prefill {
                    ""
                } else {
                    ", chunked prefill off"
                }
            ),
        })
    };
    view! {
        <article class="card card-wide">
            <h3>{move || shown.with(|s| s.title.clone())}</h3>
            <p class="card-value small" data-testid="best-settings">
                {summary}
                {move || {
                    shown
                        .with(|s| s.goodput_rps)
                        .map(|g| {
                            view! {
                                " → "
                                <span data-testid="best-goodput-rps" data-value=g.to_string()>
                                    {format!("{g:.2} req/s per replica")}
                                </span>
                            }
                        })
                }}
            </p>
            <pre class="flags" data-testid="launch-flags">{flags}</pre>
            <CopyButton text=flags label="Copy flags" testid="copy-flags" />
        </article>
    }
}
