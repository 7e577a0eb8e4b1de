//! Prometheus burn-rate alert rules for the SLO, with a copy button.

use goodput_core::alerts::alert_rules;
use leptos::prelude::*;

use crate::components::copy_button::CopyButton;
use crate::compute::RunController;
use crate::state::PlanState;

/// The alert rules panel.
#[component]
pub fn AlertsPanel() -> impl IntoView {
    let state = PlanState::expect_context();
    let runs = RunController::expect_context();
    let rules = Memo::new(move |_| {
        let goodput = runs
            .search
            .with(|s| s.as_ref().map(|(_, r)| r.goodput_rps))
            .unwrap_or(0.0);
        state.good.with(|p| alert_rules(p, goodput))
    });
    let yaml = Signal::derive(move || rules.with(|r| r.yaml.clone()));
    view! {
        <section class="panel" aria-labelledby="alerts-title">
            <h2 id="alerts-title">"Alert rules"</h2>
            <p class="panel-intro">
                {move || rules.with(|r| format!(
                    "Multi-window burn-rate alerts on the {:.1}% error budget: page fast burns, ticket slow ones, and warn early when more than {} requests wait per replica.",
                    r.error_budget * 100.0, r.queue_threshold
                ))}
            </p>
            {move || rules.with(|r| (!r.unreachable.is_empty()).then(|| view! {
                <p class="warning" data-testid="alerts-fitted">{format!("At this target the standard windows of {} could never fire; the rules below use a burn rate and windows that fit instead (see the comments).", r.unreachable.join(", "))}</p>
            }))}
            <CopyButton text=yaml label="Copy rules" testid="copy-alerts" />
            <pre class="code" data-testid="alert-rules">{yaml}</pre>
        </section>
    }
}
