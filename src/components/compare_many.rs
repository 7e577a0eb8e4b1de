//! Any number of saved plans side by side ([`CompareTable`] from the core): GPU, TP,
//! goodput, replicas, GPUs and cost, with the difference against a chosen baseline,
//! and CSV and Markdown downloads of the same table.

use std::collections::HashSet;

use goodput_core::compare::{CompareEntry, CompareTable, COLUMNS};
use goodput_core::Plan;
use leptos::prelude::*;

use crate::export::download_text;
use crate::session::Session;
use crate::state::PlanState;

/// The name the plan on screen is listed under.
const CURRENT_NAME: &str = "Current plan";

/// The "Compare many" section of the compare page.
#[component]
pub fn CompareMany() -> impl IntoView {
    let session = Session::expect_context();
    let state = PlanState::expect_context();
    // Plans left out, by name: a plan saved later is in by default.
    let excluded = RwSignal::new(HashSet::<String>::new());
    let with_current = RwSignal::new(false);
    let baseline = RwSignal::new(String::new());
    let message = RwSignal::new(None::<String>);

    let entries = move || -> Vec<(String, Plan, Option<f64>)> {
        let mut list = Vec::new();
        if with_current.get() {
            let plan = state.good.get();
            let goodput = session.goodput_of(&plan);
            list.push((CURRENT_NAME.to_string(), plan, goodput));
        }
        excluded.with(|out| {
            session.library.with(|lib| {
                list.extend(
                    lib.plans
                        .iter()
                        .filter(|p| !out.contains(&p.name))
                        .map(|p| (p.name.clone(), p.plan.clone(), p.goodput_rps)),
                );
            })
        });
        list
    };
    let table = Memo::new(move |_| {
        let list = entries();
        let base = baseline.with(|b| list.iter().position(|(n, _, _)| n == b).unwrap_or(0));
        let refs: Vec<CompareEntry<'_>> = list
            .iter()
            .map(|(name, plan, goodput_rps)| CompareEntry {
                name,
                plan,
                goodput_rps: *goodput_rps,
            })
            .collect();
        CompareTable::build(&refs, base)
    });
    let download = move |ext: &'static str| {
        let t = table.get_untracked();
        let (text, mime) = match ext {
            "csv" => (t.to_csv(), "text/csv"),
            _ => (t.to_markdown(), "text/markdown"),
        };
        if let Err(e) = download_text(&format!("goodput-compare.{ext}"), mime, &text) {
            message.set(Some(format!("Not exported: {e}.")));
        }
    };

    let picks = move || {
        session.library.with(|lib| {
            lib.plans
                .iter()
                .map(|p| {
                    let name = p.name.clone();
                    let key = name.clone();
                    view! {
                        <label class="compare-many-pick">
                            <input type="checkbox" data-testid="compare-many-pick" data-name=name.clone()
                                prop:checked=move || excluded.with(|e| !e.contains(&key))
                                on:change:target=move |ev| {
                                    let on = ev.target().checked();
                                    excluded.update(|e| {
                                        if on { e.remove(&name); } else { e.insert(name.clone()); }
                                    });
                                } />
                            {p.name.clone()}
                        </label>
                    }
                })
                .collect_view()
        })
    };
    let baseline_options = move || {
        let t = table.get();
        t.rows
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let selected = i == t.baseline;
                view! { <option value=r.name.clone() selected=selected>{r.name.clone()}</option> }
            })
            .collect_view()
    };
    let body = move || {
        let t = table.get();
        t.cells()
            .into_iter()
            .zip(t.rows.iter())
            .enumerate()
            .map(|(i, (cells, row))| {
                let fleet = row.fleet.as_ref();
                view! {
                    <tr data-testid="compare-many-row" data-name=row.name.clone() class:baseline=i == t.baseline
                        data-goodput-rps=row.goodput_rps.map(|g| g.to_string())
                        data-replicas=fleet.map(|f| f.replicas_total.to_string())
                        data-gpus=fleet.map(|f| f.gpus_total.to_string())
                        data-cost-per-month-usd=fleet.map(|f| f.cost_per_month_usd.to_string())
                        data-cost-per-compliant-request-usd=fleet.map(|f| f.cost_per_compliant_request_usd.to_string())
                        data-delta-gpus=row.delta.map(|d| d.gpus.to_string())
                        data-delta-cost-per-month-usd=row.delta.map(|d| d.cost_per_month_usd.to_string())>
                        {cells.into_iter().enumerate().map(|(c, text)| if c == 0 {
                            view! { <th scope="row">{text}</th> }.into_any()
                        } else {
                            view! { <td data-col=c.to_string()>{text}</td> }.into_any()
                        }).collect_view()}
                    </tr>
                }
            })
            .collect_view()
    };
    view! {
        <section class="compare-many" data-testid="compare-many-section" aria-labelledby="compare-many-title">
            <h2 id="compare-many-title">"Compare saved plans"</h2>
            <p class="compare-intro">
                "Every saved plan in one table, sized from the goodput of its last finished search. Pick the plans and a baseline; the last two columns are each plan minus the baseline."
            </p>
            <Show when=move || !session.library.with(|l| l.plans.is_empty())
                fallback=|| view! { <p class="saved-empty">"No saved plans yet: save plans in the planner to compare them here."</p> }>
                <fieldset class="compare-many-picks">
                    <legend>"Plans"</legend>
                    <label class="compare-many-pick">
                        <input type="checkbox" data-testid="compare-many-current"
                            prop:checked=move || with_current.get()
                            on:change:target=move |ev| with_current.set(ev.target().checked()) />
                        {CURRENT_NAME}
                    </label>
                    {picks}
                </fieldset>
            </Show>
            <div class="compare-picks">
                <label class="compare-pick">
                    "Baseline"
                    <select data-testid="compare-many-baseline" on:change:target=move |ev| baseline.set(ev.target().value())>
                        {baseline_options}
                    </select>
                </label>
                <button type="button" data-testid="compare-many-csv" on:click=move |_| download("csv")>"Download CSV"</button>
                <button type="button" data-testid="compare-many-markdown" on:click=move |_| download("md")>"Download Markdown"</button>
            </div>
            {move || message.get().map(|m| view! { <p class="saved-message error" role="status">{m}</p> })}
            <div class="compare-many-scroll">
                <table class="compare-table compare-many-table" data-testid="compare-many">
                    <thead><tr>{COLUMNS.iter().map(|c| view! { <th scope="col">{*c}</th> }).collect_view()}</tr></thead>
                    <tbody>{body}</tbody>
                </table>
            </div>
        </section>
    }
}
