//! A button that copies text to the clipboard and says so.

use std::time::Duration;

use leptos::prelude::*;

/// Copies `text` to the clipboard on click; shows "Copied" for a moment.
#[component]
pub fn CopyButton(
    /// The text to copy.
    #[prop(into)]
    text: Signal<String>,
    /// Button label.
    #[prop(default = "Copy")]
    label: &'static str,
    /// `data-testid` of the button.
    #[prop(default = "copy")]
    testid: &'static str,
) -> impl IntoView {
    let (copied, set_copied) = signal(false);
    let on_click = move |_| {
        let clipboard = window().navigator().clipboard();
        let _ = clipboard.write_text(&text.get_untracked());
        set_copied.set(true);
        set_timeout(move || set_copied.set(false), Duration::from_millis(1500));
    };
    view! {
        <button type="button" class="copy-button" data-testid=testid on:click=on_click>
            {move || if copied.get() { "Copied" } else { label }}
        </button>
    }
}
