//! The roofline panel: the decode-step check figure (`decode-step-s`, in seconds) and step time vs batch and chunk size.

use goodput_core::analytic::MeanLengths;
use goodput_core::roofline::StepModel;
use goodput_core::roofline::StepModelOf;
use leptos::prelude::*;

use crate::charts::roofline::{build_roofline, draw_roofline};
use crate::components::chart_canvas::ChartCanvas;
use crate::state::PlanState;

/// Step-time roofline of the current plan (instant: no simulation).
#[component]
pub fn RooflinePanel() -> impl IntoView {
    let state = PlanState::expect_context();
    let model = Memo::new(move |_| state.good.with(StepModel::from_plan));
    // The articles' check figure: 110 decoding sequences × 940 tokens of context [s]
    // (data-value is in seconds, the text in ms).
    let step = Memo::new(move |_| model.get().step_time_s(110.0, 110.0 * 940.0));
    let gb_read = Memo::new(move |_| model.get().bytes_read(110.0 * 940.0) / 1e9);
    let chart = Memo::new(move |_| {
        state.good.with(|p| {
            let ctx = MeanLengths::of(p).context_tokens;
            build_roofline(
                &model.get(),
                ctx,
                p.engine.max_num_seqs,
                p.engine.max_num_batched_tokens,
            )
        })
    });
    view! {
        <section class="panel" aria-labelledby="roofline-title">
            <h2 id="roofline-title">"Step time roofline"</h2>
            <p class="panel-intro">
                "One engine step reads the weights and every decoding sequence's KV cache (memory-bound), or multiplies the prompt chunk's tokens (compute-bound), whichever is slower, plus a fixed overhead."
            </p>
            <p class="kv">
                "Decode step of 110 sequences × 940 tokens: "
                <span data-testid="decode-step-s" data-value=move || step.get().to_string()>
                    {move || format!("{:.2} ms", step.get() * 1e3)}
                </span>
                {move || format!(" (reads {:.1} GB)", gb_read.get())}
            </p>
            <ChartCanvas
                testid="chart-roofline"
                label="Step time versus decode batch size and versus prefill chunk size, memory-bound and compute-bound regions shaded"
                height=280.0
                narrow_height=480.0
                draw=move |area, theme| chart.with(|d| draw_roofline(area, d, theme).unwrap_or_default())
                readout=move |panel, x, _| chart.with(|d| d.readout(panel, x))
            />
        </section>
    }
}
