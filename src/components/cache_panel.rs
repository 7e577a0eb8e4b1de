//! The prefix cache over the run, for a plan whose prompts share prefixes: one
//! replica's KV memory (private, shared prefixes in use, idle cached) against its
//! capacity, and the hit rate, over the simulation at the planned rate per replica.
//!
//! The run is the report's planned-load simulation once more ([`cache_at_planned_rate`]):
//! its numbers are the CLI's `goodput simulate --request-rate <rate> --seed <seed>`, both
//! of which the chart's box carries (`data-rate`, `data-seed`), with the timeline itself
//! as JSON (`data-timeline`).

use leptos::prelude::*;

use crate::charts::cache::{draw_cache, CacheChart};
use crate::components::chart_canvas::ChartCanvas;
use crate::compute::planned::{cache_at_planned_rate, has_shared_prefixes, CacheRun};
use crate::hooks::use_report::use_report;
use crate::state::PlanState;

/// The chart of a run.
fn chart_of(run: &CacheRun) -> CacheChart {
    CacheChart {
        samples: run.timeline.clone(),
        kv_capacity_tokens: run.kv_capacity_tokens,
        hit_rate: run.hit_rate,
        rate_rps: run.rate_rps,
        replicas: run.replicas,
    }
}

/// The panel; nothing for a plan without shared prefixes.
#[component]
pub fn CachePanel() -> impl IntoView {
    let state = PlanState::expect_context();
    let report = use_report().report;
    // Only a plan with prefixes to share has a cache to chart.
    let shown = Memo::new(move |_| state.good.with(has_shared_prefixes));
    // Simulated only while the panel is shown, once per report.
    let run = Memo::new(move |_| {
        if !shown.get() {
            return None;
        }
        report.with(|r| r.as_ref().and_then(|(p, r)| cache_at_planned_rate(p, r)))
    });
    let chart = Memo::new(move |_| {
        run.with(|r| match r {
            Some(Ok(run)) => chart_of(run),
            _ => CacheChart::default(),
        })
    });
    let body = move || {
        match run.get() {
        None => view! {
            <p class="run-meta" data-testid="cache-waiting">
                "The cache is charted from the simulation at the planned rate, once the goodput search has found it."
            </p>
        }
        .into_any(),
        Some(Err(why)) => view! {
            <p class="error" role="alert" data-testid="cache-error">{why}</p>
        }
        .into_any(),
        Some(Ok(r)) => {
            let timeline = serde_json::to_string(&r.timeline).unwrap_or_default();
            view! {
                <div
                    data-testid="cache-chart-box"
                    data-rate=r.rate_rps.to_string()
                    data-seed=r.seed.to_string()
                    data-replicas=r.replicas.to_string()
                    data-hit-rate=r.hit_rate.to_string()
                    data-kv-capacity=r.kv_capacity_tokens.map(|c| c.to_string())
                    data-samples=r.timeline.len().to_string()
                    data-timeline=timeline
                >
                    <ChartCanvas
                        testid="chart-cache"
                        label="KV memory of one replica over simulated time, stacked as private, shared prefixes in use and idle cached tokens, with its KV capacity; below, the share of prompt tokens found cached"
                        height=380.0
                        narrow_height=460.0
                        draw=move |area, theme| chart.with(|d| draw_cache(area, d, theme).unwrap_or_default())
                        readout=move |panel, x, _| chart.with(|d| d.readout(panel, x))
                    />
                    <p class="chart-summary" data-testid="cache-summary">{move || chart.with(CacheChart::summary)}</p>
                </div>
            }
            .into_any()
        }
    }
    };
    view! {
        <Show when=move || shown.get()>
            <section class="panel" aria-labelledby="cache-title" data-testid="cache-panel">
                <h2 id="cache-title">"Prefix cache over the run"</h2>
                <p class="panel-intro">
                    "One replica's KV memory in the simulation at the planned rate per replica: what the running requests hold of their own, the cached prefixes they share, and cached tokens nobody holds, kept until memory is needed. Below, the share of prompt tokens found in the cache."
                </p>
                {body}
            </section>
        </Show>
    }
}
