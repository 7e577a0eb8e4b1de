//! Named plans kept in this browser: save the plan on screen under a name, list,
//! load, delete, and jump to the comparison.

use goodput_core::capacity::size_fleet;
use goodput_core::format::{rps, usd};
use leptos::prelude::*;

use crate::route::View;
use crate::saved::{date_text, LibraryUndo, MAX_NAMED_PLANS, MAX_NAME_CHARS};
use crate::session::Session;
use crate::state::PlanState;

/// What the list says of a saved plan: goodput, and the fleet and cost sized from it.
fn saved_meta(goodput_rps: Option<f64>, plan: &goodput_core::Plan) -> String {
    let Some(g) = goodput_rps else {
        return "goodput not computed".into();
    };
    let goodput = format!("goodput {} req/s", rps(g));
    match size_fleet(g, plan) {
        Ok(f) => format!(
            "{goodput} · {} GPUs · {}/month",
            f.gpus_total,
            usd(f.cost_per_month_usd)
        ),
        Err(_) => format!("{goodput} · no fleet meets the SLO"),
    }
}

/// The panel's last message: what happened, and how to take it back.
#[derive(Clone)]
struct Note {
    ok: bool,
    text: String,
    undo: Option<LibraryUndo>,
}

impl Note {
    fn done(undo: LibraryUndo) -> Note {
        Note {
            ok: true,
            text: undo.done_text(),
            undo: Some(undo),
        }
    }

    fn said(ok: bool, text: String) -> Note {
        Note {
            ok,
            text,
            undo: None,
        }
    }
}

/// The "Saved plans" section of the planner.
#[component]
pub fn SavedPanel() -> impl IntoView {
    let session = Session::expect_context();
    let state = PlanState::expect_context();
    let name = RwSignal::new(String::new());
    let message = RwSignal::new(None::<Note>);
    // The plan being renamed, and the name typed for it.
    let renaming = RwSignal::new(None::<String>);
    let new_name = RwSignal::new(String::new());
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let typed = name.get_untracked();
        let typed = if typed.trim().is_empty() {
            state.good.with_untracked(|p| p.name.clone())
        } else {
            typed
        };
        match session.save_current_as(&typed) {
            Ok(undo) => {
                message.set(Some(Note::done(undo)));
                name.set(String::new());
            }
            Err(e) => message.set(Some(Note::said(false, format!("Not saved: {e}.")))),
        }
    };
    let undo = move |_| {
        let Some(undo) = message.with_untracked(|m| m.as_ref().and_then(|m| m.undo.clone())) else {
            return;
        };
        message.set(Some(match session.undo_named(&undo) {
            Ok(()) => Note::said(true, undo.undone_text()),
            Err(e) => Note::said(false, format!("Not undone: {e}.")),
        }));
    };
    let rename = move |from: String| {
        let to = new_name.get_untracked();
        match session.rename_named(&from, &to) {
            Ok(undo) => {
                renaming.set(None);
                message.set(Some(Note::done(undo)));
            }
            Err(e) => message.set(Some(Note::said(false, format!("Not renamed: {e}.")))),
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
                            message.set(Some(Note::said(true, format!("Loaded “{load_name}”."))));
                        }
                    };
                    let delete = move |_| match session.delete_named(&del_name) {
                        Ok(Some(undo)) => message.set(Some(Note::done(undo))),
                        Ok(None) => message.set(Some(Note::said(false, format!("“{del_name}” was deleted already.")))),
                        Err(e) => message.set(Some(Note::said(false, format!("Not deleted: {e}.")))),
                    };
                    let this = p.name.clone();
                    let editing = renaming.with(|r| r.as_deref() == Some(this.as_str()));
                    let name_part = if editing {
                        let (from, cancel_on_key) = (this.clone(), this.clone());
                        // The box takes the focus as it appears, its text selected to type over.
                        let input = NodeRef::<leptos::html::Input>::new();
                        input.on_load(move |el| {
                            el.set_value(&new_name.get_untracked());
                            let _ = el.focus();
                            el.select();
                        });
                        let submit = move |ev: leptos::ev::SubmitEvent| {
                            ev.prevent_default();
                            rename(from.clone());
                        };
                        let keys = move |ev: leptos::ev::KeyboardEvent| {
                            if ev.key() == "Escape" && renaming.get_untracked().as_deref() == Some(cancel_on_key.as_str()) {
                                renaming.set(None);
                            }
                        };
                        view! {
                            <form class="rename-form" on:submit=submit>
                                <label>
                                    <span class="sr-only">{format!("New name for “{this}”")}</span>
                                    <input type="text" data-testid="rename-name" maxlength=MAX_NAME_CHARS.to_string()
                                        prop:value=move || new_name.get() on:input:target=move |ev| new_name.set(ev.target().value())
                                        on:keydown=keys node_ref=input />
                                </label>
                                <button type="submit" data-testid="rename-save">"Save name"</button>
                                <button type="button" data-testid="rename-cancel" on:click=move |_| renaming.set(None)>"Cancel"</button>
                            </form>
                        }
                        .into_any()
                    } else {
                        let start = this.clone();
                        view! {
                            <span class="saved-name">{this.clone()}</span>
                            <span class="saved-meta">{format!("{} · {goodput}", date_text(p.saved_at_ms))}</span>
                            <button type="button" data-testid="saved-load" on:click=load>"Load"</button>
                            <button type="button" data-testid="saved-rename" on:click=move |_| {
                                new_name.set(start.clone());
                                renaming.set(Some(start.clone()));
                            }>"Rename"</button>
                            <button type="button" data-testid="saved-delete" on:click=delete>"Delete"</button>
                        }
                        .into_any()
                    };
                    view! { <li data-testid="saved-plan" data-name=p.name.clone()>{name_part}</li> }
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
            {move || message.get().map(|m| view! {
                <p class="saved-message" class:error=!m.ok role="status" data-testid="saved-message">
                    {m.text}
                    {m.undo.is_some().then(|| view! {
                        " " <button type="button" class="saved-undo" data-testid="saved-undo" on:click=undo>"Undo"</button>
                    })}
                </p>
            })}
            <Show when=move || !empty() fallback=|| view! { <p class="saved-empty">"No saved plans yet."</p> }>
                <ul class="saved-list" data-testid="saved-list">{list}</ul>
            </Show>
        </section>
    }
}
