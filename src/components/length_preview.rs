//! Small histograms of the prompt and output length distributions.

use leptos::prelude::*;

use crate::charts::histogram::{build_histogram, draw_histogram};
use crate::components::chart_canvas::ChartCanvas;
use crate::state::PlanState;

/// Previews of both length distributions of the draft plan, redrawn as the user types.
#[component]
pub fn LengthPreview() -> impl IntoView {
    let state = PlanState::expect_context();
    let prompt = Memo::new(move |_| {
        state
            .draft
            .with(|p| build_histogram("Prompt", &p.traffic.prompt, 28))
    });
    let output = Memo::new(move |_| {
        state
            .draft
            .with(|p| build_histogram("Output", &p.traffic.output, 28))
    });
    view! {
        <div class="length-preview">
            <ChartCanvas
                testid="chart-prompt-lengths"
                label="Histogram of prompt lengths"
                height=110.0
                draw=move |area, theme| prompt.with(|d| d.as_ref().and_then(|d| draw_histogram(area, d, theme).ok()).unwrap_or_default())
                readout=move |_, x, _| Some(format!("{x:.0} tokens"))
            />
            <ChartCanvas
                testid="chart-output-lengths"
                label="Histogram of output lengths"
                height=110.0
                draw=move |area, theme| output.with(|d| d.as_ref().and_then(|d| draw_histogram(area, d, theme).ok()).unwrap_or_default())
                readout=move |_, x, _| Some(format!("{x:.0} tokens"))
            />
        </div>
    }
}
