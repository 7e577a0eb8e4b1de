//! Header buttons: the view switcher, "Copy link" and "Copy embed code", each with a
//! "Copied" confirmation and a text box to copy by hand when the clipboard is refused.

use std::time::Duration;

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::route::View;
use crate::session::Session;
use crate::state::PlanState;
use crate::url_state::{link_or_why, CopyWhat};

/// Writes `text` to the clipboard and calls `done(true)` on success, `done(false)` when
/// the browser refuses (no clipboard API, no permission, not a secure context).
pub fn copy_to_clipboard(text: &str, done: impl FnOnce(bool) + 'static) {
    let navigator = window().navigator();
    let has_clipboard = js_sys::Reflect::get(&navigator, &JsValue::from_str("clipboard"))
        .map(|c| !c.is_undefined() && !c.is_null())
        .unwrap_or(false);
    if !has_clipboard {
        done(false);
        return;
    }
    let promise = navigator.clipboard().write_text(text);
    let done = std::rc::Rc::new(std::cell::Cell::new(Some(done)));
    let (ok_done, err_done) = (done.clone(), done);
    let on_ok = Closure::once_into_js(move |_: JsValue| {
        if let Some(f) = ok_done.take() {
            f(true)
        }
    });
    let on_err = Closure::once_into_js(move |_: JsValue| {
        if let Some(f) = err_done.take() {
            f(false)
        }
    });
    when_settled(&promise, &on_ok, &on_err);
}

/// Calls `promise.then(on_ok, on_err)` with two JavaScript functions (made with
/// `Closure::once_into_js`, which frees each once it has run).
pub fn when_settled(promise: &js_sys::Promise, on_ok: &JsValue, on_err: &JsValue) {
    let then = js_sys::Reflect::get(promise, &JsValue::from_str("then"))
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok());
    if let Some(then) = then {
        let _ = then.call2(promise, on_ok, on_err);
    }
}

/// What a copy button shows after a click.
#[derive(Debug, Clone, PartialEq)]
enum Copied {
    Idle,
    Done,
    /// The clipboard refused: the text to copy by hand.
    Manual(String),
    /// There is nothing to copy: why (the plan is too large for a link).
    Refused(String),
}

/// A button that copies what `text()` returns when clicked.
#[component]
fn ShareCopy(
    /// Button label.
    label: &'static str,
    /// `data-testid` of the button.
    testid: &'static str,
    /// The text to copy, made at click time, or why there is none.
    text: impl Fn() -> Result<String, String> + Send + Sync + 'static,
) -> impl IntoView {
    let status = RwSignal::new(Copied::Idle);
    let on_click = move |_| {
        let t = match text() {
            Ok(t) => t,
            Err(why) => return status.set(Copied::Refused(why)),
        };
        let for_manual = t.clone();
        copy_to_clipboard(&t, move |ok| {
            if ok {
                status.set(Copied::Done);
                set_timeout(
                    move || status.set(Copied::Idle),
                    Duration::from_millis(1800),
                );
            } else {
                status.set(Copied::Manual(for_manual));
            }
        });
    };
    view! {
        <span class="share-copy">
            <button type="button" class="copy-button" data-testid=testid on:click=on_click>
                {move || if status.with(|s| *s == Copied::Done) { "Copied" } else { label }}
            </button>
            {move || match status.get() {
                Copied::Manual(t) => Some(view! {
                    <span class="copy-fallback" role="dialog" aria-label="Copy by hand">
                        <label>
                            "The browser did not allow copying. Select and copy:"
                            <textarea readonly=true rows="3" data-testid=format!("{testid}-fallback")
                                on:focus=|ev| {
                                    if let Some(t) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlTextAreaElement>().ok()) {
                                        t.select();
                                    }
                                }
                                prop:value=t></textarea>
                        </label>
                        <button type="button" on:click=move |_| status.set(Copied::Idle)>"Close"</button>
                    </span>
                }.into_any()),
                Copied::Refused(why) => Some(view! {
                    <span class="copy-fallback" role="alert" data-testid=format!("{testid}-refused")>
                        <span>{why}</span>
                        <button type="button" on:click=move |_| status.set(Copied::Idle)>"Close"</button>
                    </span>
                }.into_any()),
                _ => None,
            }}
        </span>
    }
}

/// One view-switch button.
#[component]
fn ViewTab(view: View, label: &'static str, testid: &'static str) -> impl IntoView {
    let session = Session::expect_context();
    let current = session.view;
    view! {
        <button
            type="button"
            class="view-tab"
            data-testid=testid
            aria-pressed=move || (current.get() == view).to_string()
            on:click=move |_| {
                if current.get_untracked() != view {
                    current.set(view)
                }
            }
        >
            {label}
        </button>
    }
}

/// Undo (the last replace of the plan, several levels deep) and Reset to the defaults.
#[component]
fn UndoControls() -> impl IntoView {
    let session = Session::expect_context();
    let state = PlanState::expect_context();
    let last = Memo::new(move |_| {
        state
            .undo_stack
            .with(|s| s.last().map(|e| (e.what.clone(), s.len())))
    });
    let title = move || match last.get() {
        Some((what, n)) => format!(
            "Undo: {what} (puts back the plan before it; {n} step{} kept)",
            if n == 1 { "" } else { "s" }
        ),
        None => "Nothing to undo".into(),
    };
    view! {
        <span class="undo-controls">
            <button
                type="button"
                data-testid="undo"
                disabled=move || last.with(Option::is_none)
                title=title
                aria-label=title
                on:click=move |_| session.undo()
            >
                "Undo"
            </button>
            <button
                type="button"
                data-testid="reset-plan"
                title="Start again from the default plan (Undo takes it back)"
                on:click=move |_| session.reset()
            >
                "Reset"
            </button>
        </span>
    }
}

/// The header's buttons.
#[component]
pub fn HeaderActions() -> impl IntoView {
    let state = PlanState::expect_context();
    view! {
        <div class="view-tabs" role="group" aria-label="Views">
            <ViewTab view=View::Finance label="Summary" testid="view-finance" />
            <ViewTab view=View::Planner label="Planner" testid="view-planner" />
            <ViewTab view=View::Compare label="Compare" testid="view-compare" />
        </div>
        <UndoControls />
        <ShareCopy label="Copy link" testid="copy-link"
            text=move || state.good.with_untracked(|p| link_or_why(p, CopyWhat::Link)) />
        <ShareCopy label="Copy embed code" testid="copy-embed"
            text=move || state.good.with_untracked(|p| link_or_why(p, CopyWhat::Embed)) />
    }
}
