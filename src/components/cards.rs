//! Headline cards: goodput, replicas, GPUs, cost, cost per compliant request, best settings.

use goodput_core::capacity::size_fleet;
use goodput_core::search::SearchStatus;
use leptos::prelude::*;

use crate::components::best_settings::BestSettings;
use crate::components::glossary::TermLink;
use crate::compute::RunController;

/// One result card: a title, the value (with `data-testid` and the unrounded `data-value`)
/// and a line of detail.
#[component]
fn Card(
    /// Card title.
    title: &'static str,
    /// Glossary anchor the title links to, if any.
    #[prop(optional)]
    term: Option<&'static str>,
    /// `data-testid` of the value.
    testid: &'static str,
    /// Unrounded value, for `data-value`.
    #[prop(into)]
    value: Signal<Option<f64>>,
    /// The value as shown.
    #[prop(into)]
    shown: Signal<String>,
    /// A line of detail under the value.
    #[prop(into)]
    detail: Signal<String>,
) -> impl IntoView {
    view! {
        <article class="card">
            <h3>
                {match term {
                    Some(t) => view! { <TermLink term=t>{title}</TermLink> }.into_any(),
                    None => title.into_any(),
                }}
            </h3>
            <p
                class="card-value"
                data-testid=testid
                data-value=move || value.get().map(|v| v.to_string()).unwrap_or_default()
            >
                {move || shown.get()}
            </p>
            <p class="card-detail">{move || detail.get()}</p>
        </article>
    }
}

fn money(x: f64) -> String {
    if x >= 100.0 {
        let whole = x.round() as u64;
        let s = whole.to_string();
        let mut out = String::new();
        for (i, ch) in s.chars().enumerate() {
            if i > 0 && (s.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(ch);
        }
        format!("${out}")
    } else if x >= 0.01 {
        format!("${x:.2}")
    } else {
        format!("${x:.6}")
    }
}

/// The headline numbers of the last finished run.
#[component]
pub fn HeadlineCards() -> impl IntoView {
    let runs = RunController::expect_context();
    let fleet = Memo::new(move |_| {
        runs.search.with(|s| {
            s.as_ref()
                .map(|(plan, r)| size_fleet(r.goodput_rps, plan).map_err(|e| e.to_string()))
        })
    });
    let goodput =
        Signal::derive(move || runs.search.with(|s| s.as_ref().map(|(_, r)| r.goodput_rps)));
    let cap = move |f: fn(&goodput_core::capacity::CapacityPlan) -> f64| {
        Signal::derive(move || fleet.with(|c| c.as_ref().and_then(|c| c.as_ref().ok()).map(f)))
    };
    let replicas = cap(|c| c.replicas_total as f64);
    let gpus = cap(|c| c.gpus_total as f64);
    let month = cap(|c| c.cost_per_month_usd);
    let per_request = cap(|c| c.cost_per_compliant_request_usd);
    let or_dash = |v: Signal<Option<f64>>, f: fn(f64) -> String| {
        Signal::derive(move || v.get().map(f).unwrap_or_else(|| "—".into()))
    };
    let goodput_detail = Signal::derive(move || {
        runs.search.with(|s| match s {
            None => "Simulating…".into(),
            Some((_, r)) => {
                let note = match r.status {
                    SearchStatus::Converged => "",
                    SearchStatus::ZeroGoodput => " — no rate meets the SLO",
                    SearchStatus::NotBracketed => " — at least this; every rate tried passed",
                    SearchStatus::BudgetExhausted => " — search budget ran out",
                };
                format!(
                    "range {:.2}–{:.2} req/s at {:.0}% attainment{note}",
                    r.goodput_range_rps[0],
                    r.goodput_range_rps[1],
                    r.target * 100.0
                )
            }
        })
    });
    let fleet_detail = move |which: u8| {
        Signal::derive(move || {
            fleet.with(|c| match c {
                None => String::new(),
                Some(Err(e)) => e.clone(),
                Some(Ok(c)) => match which {
                    0 => format!(
                        "{} for the {} req/s peak + {} spare",
                        c.replicas_for_peak, c.peak_rate_rps, c.redundancy
                    ),
                    1 => format!(
                        "{} per replica × {} replicas",
                        c.gpus_per_replica, c.replicas_total
                    ),
                    2 => format!(
                        "{}/hour at {}/GPU-hour",
                        money(c.cost_per_hour_usd),
                        money(c.gpu_hour_usd)
                    ),
                    _ => format!(
                        "{} per 1,000; {} per million output tokens",
                        money(c.cost_per_compliant_request_usd * 1000.0),
                        money(c.cost_per_million_output_tokens_usd)
                    ),
                },
            })
        })
    };
    view! {
        <section class="cards" aria-label="Headline results">
            <Card title="Goodput per replica" term="goodput" testid="goodput-rps" value=goodput
                shown=or_dash(goodput, |v| format!("{v:.2} req/s")) detail=goodput_detail />
            <Card title="Replicas" testid="replicas-total" value=replicas
                shown=or_dash(replicas, |v| format!("{v}")) detail=fleet_detail(0) />
            <Card title="GPUs" testid="gpus-total" value=gpus
                shown=or_dash(gpus, |v| format!("{v}")) detail=fleet_detail(1) />
            <Card title="Cost per month" testid="cost-per-month-usd" value=month
                shown=or_dash(month, money) detail=fleet_detail(2) />
            <Card title="Cost per compliant request" term="attainment" testid="cost-per-compliant-request-usd"
                value=per_request shown=or_dash(per_request, money) detail=fleet_detail(3) />
            <BestSettings />
        </section>
    }
}
