//! Named plans kept in this browser: save the plan on screen under a name, list,
//! load, delete, and jump to the comparison.

use goodput_core::capacity::size_fleet;
use goodput_core::compare::format_rps;
use goodput_core::format::usd;
use leptos::prelude::*;

use crate::route::View;
use crate::saved::{date_text, MAX_NAMED_PLANS, MAX_NAME_CHARS};
use crate::session::Session;
use crate::state::PlanState;

/// What the list says of a saved plan: goodput, and the fleet and cost sized from it.
fn saved_meta(goodput_rps: Option<f64>, plan: &goodput_core::Plan) -> String {
    let Some(g) = goodput_rps else {
        return "goodput not computed".into();
    };
    let goodput = format!("goodput {} req/s", format_rps(g));
    match size_fleet(g, plan) {
        Ok(f) => format!(
            "{goodput} · {} GPUs · {}/month",
            f.gpus_total,
            usd(f.cost_per_month_usd)
        ),
        Err(_) => format!("{goodput} · no fleet meets the SLO"),
    }
}

/// The "Saved plans" section of the planner.
#[component]
pub fn SavedPanel() -> impl IntoView {
    let session = Session::expect_context();
    let state = PlanState::expect_context();
    let name = RwSignal::new(String::new());
    let message = RwSignal::new(None::<(bool, String)>);
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let typed = name.get_untracked();
        let typed = if typed.trim().is_empty() {
            state.good.with_untracked(|p| p.name.clone())
        } else {
            typed
        };
        match session.save_current_as(&typed) {
            Ok(()) => {
                message.set(Some((true, format!("Saved “{}”.", typed.trim()))));
                name.set(String::new());
            }
            Err(e) => message.set(Some((false, format!("Not saved: {e}.")))),
        }
    };
    let list = move || {
        session.library.with(|lib| {
            lib.plans
                .iter()
                .map(|p| {
                    let (load_name, del_name) = (p.name.clone(), p.name.clone());
                    let goodput = saved_meta(p.goodput_rps, &p.plan);
                    let load = move |_| {
                        if let Some(entry) = session.library.with_untracked(|l| l.get(&load_name).cloned()) {
                            session.open_own(entry.plan, "open a saved plan");
                            message.set(Some((true, format!("Loaded “{load_name}”."))));
                        }
                    };
                    let delete = move |_| match session.delete_named(&del_name) {
                        Ok(()) => message.set(Some((true, format!("Deleted “{del_name}”.")))),
                        Err(e) => message.set(Some((false, format!("Not deleted: {e}.")))),
                    };
                    view! {
                        <li data-testid="saved-plan" data-name=p.name.clone()>
                            <span class="saved-name">{p.name.clone()}</span>
                            <span class="saved-meta">{format!("{} · {goodput}", date_text(p.saved_at_ms))}</span>
                            <button type="button" data-testid="saved-load" on:click=load>"Load"</button>
                            <button type="button" data-testid="saved-delete" on:click=delete>"Delete"</button>
                        </li>
                    }
                })
                .collect_view()
        })
    };
    let empty = move || session.library.with(|l| l.plans.is_empty());
    view! {
        <section class="panel saved-panel no-print" aria-labelledby="saved-title" data-testid="saved-panel">
            <h2 id="saved-title">"Saved plans"</h2>
            <p class="panel-intro">
                {format!("Your working plan is saved in this browser as you edit. Keep up to {MAX_NAMED_PLANS} named plans here to reload or compare; they stay on this device.")}
            </p>
            <form class="save-form" on:submit=save>
                <label>
                    "Name"
                    <input type="text" data-testid="save-name" maxlength=MAX_NAME_CHARS.to_string()
                        placeholder=move || state.good.with(|p| if p.name.is_empty() { "e.g. 8B bf16, chat".to_string() } else { p.name.clone() })
                        prop:value=move || name.get() on:input:target=move |ev| name.set(ev.target().value()) />
                </label>
                <button type="submit" data-testid="save-plan">"Save plan"</button>
                <button type="button" data-testid="open-compare" on:click=move |_| session.view.set(View::Compare)>
                    "Compare…"
                </button>
            </form>
            {move || message.get().map(|(ok, m)| view! {
                <p class="saved-message" class:error=!ok role="status" data-testid="saved-message">{m}</p>
            })}
            <Show when=move || !empty() fallback=|| view! { <p class="saved-empty">"No saved plans yet."</p> }>
                <ul class="saved-list" data-testid="saved-list">{list}</ul>
            </Show>
        </section>
    }
}
