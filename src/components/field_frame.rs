//! The frame every labelled input of the inputs column shares: the label with its unit,
//! the input itself, the help line and the inline error, tied together by ids so screen
//! readers read the help and the error with the input.

use leptos::prelude::*;

/// The ids and test ids of one field's parts, from the plan path it edits.
#[derive(Debug, Clone)]
pub struct FieldIds {
    /// Dotted plan path, e.g. `engine.max_num_seqs`.
    pub path: &'static str,
    /// The input's element id.
    pub input: String,
    /// The help line's element id.
    pub help: String,
    /// The error line's element id.
    pub error: String,
}

impl FieldIds {
    /// The ids of the field at `path`: `in-engine-max_num_seqs`, with `-help` and
    /// `-error` after it.
    pub fn of(path: &'static str) -> FieldIds {
        let input = format!("in-{}", path.replace('.', "-"));
        FieldIds {
            path,
            help: format!("{input}-help"),
            error: format!("{input}-error"),
            input,
        }
    }

    /// The input's `aria-describedby`: its help line, then its error line.
    pub fn described_by(&self) -> String {
        format!("{} {}", self.help, self.error)
    }

    /// The input's `data-testid`.
    pub fn input_test_id(&self) -> String {
        format!("input-{}", self.path)
    }
}

/// A label that may break after an underscore (`max_num_batched_` / `tokens`) rather
/// than inside a word, when its column is too narrow for it.
fn breakable(label: &'static str) -> impl IntoView {
    label
        .split_inclusive('_')
        .enumerate()
        .map(|(i, part)| view! { {(i > 0).then(|| view! { <wbr /> })}{part} })
        .collect_view()
}

/// A field's frame around its input (`children`): the label and unit above it, the help
/// line and the error (`message`, shown when set) below it.
#[component]
pub fn FieldFrame(
    /// The field's ids; the input in `children` takes `ids.input` and the others.
    ids: FieldIds,
    /// Short label.
    label: &'static str,
    /// Unit as displayed; none shown when empty.
    unit: &'static str,
    /// Whether the field spans the column (lists, text areas).
    #[prop(optional)]
    wide: bool,
    /// Why the typed text is refused, if it is.
    message: Memo<Option<String>>,
    /// The help line's content.
    help: AnyView,
    /// The input.
    children: Children,
) -> impl IntoView {
    let error_test_id = format!("error-{}", ids.path);
    view! {
        <div class="field" class:field-wide=wide class:invalid=move || message.with(Option::is_some)>
            <label for=ids.input>
                {breakable(label)}
                {(!unit.is_empty()).then(|| view! { <span class="unit">{unit}</span> })}
            </label>
            {children()}
            <p class="help" id=ids.help>{help}</p>
            <p class="error" id=ids.error role="alert" data-testid=error_test_id>
                {move || message.get()}
            </p>
        </div>
    }
}
