//! "Calibrate from measurements": benchmark files in (picker, drop, paste), the points
//! found, the fit with its progress, then the result and the overlay chart.

use goodput_core::calibrate::{
    load_label, model_mismatch, ttft_falls_with_load, CalibrationProblem, FitVerdict,
};
use leptos::ev;
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen_futures::JsFuture;
use web_sys::FileList;

use crate::components::calibration_overlay::CalibrationOverlay;
use crate::components::calibration_result::CalibrationResult;
use crate::compute::calibration::{ChosenFile, FitController, FitPhase, Pick};
use crate::state::PlanState;
use goodput_core::format::{millis, sentence, thousands};

/// Reads every file of `list` and chooses them (`how`: in place of the selection, or
/// added to it); a file that cannot be read leaves the selection as it was.
fn read_files(fits: FitController, list: Option<FileList>, how: Pick) {
    let Some(list) = list else {
        return;
    };
    let files: Vec<web_sys::File> = (0..list.length()).filter_map(|i| list.get(i)).collect();
    if files.is_empty() {
        return;
    }
    spawn_local(async move {
        let mut read = Vec::with_capacity(files.len());
        for f in files {
            let bytes = JsFuture::from(f.array_buffer())
                .await
                .ok()
                .map(|b| js_sys::Uint8Array::new(&b).to_vec());
            let Some(bytes) = bytes else {
                fits.unreadable(format!("{}: could not be read", f.name()));
                return;
            };
            read.push(ChosenFile {
                name: f.name(),
                size: f.size() as u64,
                bytes,
            });
        }
        fits.choose(read, how);
    });
}

/// The files chosen, each once, with a button that empties the selection.
#[component]
fn ChosenFiles() -> impl IntoView {
    let fits = FitController::expect_context();
    let items = move || {
        fits.selection.with(|s| {
            s.iter()
                .map(|f| {
                    let size = format!("{} bytes", thousands(f.size as i64));
                    view! { <li data-testid="calibrate-chosen" data-name=f.name.clone()>{f.name.clone()}" ("{size}")"</li> }
                })
                .collect_view()
        })
    };
    view! {
        <div class="calibrate-selection">
            <ul data-testid="calibrate-selection" data-count=move || fits.selection.with(Vec::len).to_string()>{items}</ul>
            <button type="button" data-testid="calibrate-clear"
                disabled=move || fits.selection.with(Vec::is_empty)
                on:click=move |_| fits.clear()>"Clear"</button>
        </div>
    }
}

/// The points of the imported set: file, load, TTFT and TPOT means.
#[component]
fn ImportedPoints() -> impl IntoView {
    let fits = FitController::expect_context();
    let state = PlanState::expect_context();
    move || {
        fits.imported.get().map(|set| {
            let named = [set.model.clone(), set.engine.clone()]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" on ");
            let rows = set.points.iter().map(|p| {
                let s = p.summary();
                let load = load_label(&s.load);
                view! {
                    <tr><td>{p.source.clone()}</td><td>{load}</td><td>{millis(s.ttft_mean_s)}</td><td>{millis(s.tpot_mean_s)}</td></tr>
                }
            }).collect_view();
            view! {
                <p data-testid="calibrate-found" data-value=set.points.len().to_string()>
                    {format!("{} measured point{} from {} file{}", set.points.len(),
                        if set.points.len() == 1 { "" } else { "s" }, set.files.len(),
                        if set.files.len() == 1 { "" } else { "s" })}
                    {(!named.is_empty()).then(|| format!(" — {named}"))}
                </p>
                // Said before the fit, as the plan's model changes: the report repeats it.
                {
                    let model = set.model.clone().unwrap_or_default();
                    move || {
                        state.draft.with(|p| model_mismatch(&model, p)).map(|w| view! {
                            <p class="error" role="alert" data-testid="calibrate-model-mismatch">{sentence(&w)}</p>
                        })
                    }
                }
                // A lighter point slower to first token than a heavier one: said before the
                // fit reads it as slow prefill (the report repeats it).
                {
                    let set = set.clone();
                    move || {
                        state
                            .draft
                            .with(|p| CalibrationProblem::new(p, &set).ok())
                            .and_then(|problem| ttft_falls_with_load(&problem))
                            .map(|w| view! {
                                <p class="warning" role="status" data-testid="calibrate-ttft-falls">{sentence(&w)}</p>
                            })
                    }
                }
                <table class="calibrate-points" data-testid="calibrate-points">
                    <thead><tr><th>"File"</th><th>"Load"</th><th>"TTFT mean"</th><th>"TPOT mean"</th></tr></thead>
                    <tbody>{rows}</tbody>
                </table>
                <p class="help">"The plan's model, GPU and engine settings must be those the benchmark ran with: the fit adjusts the step model's constants only (the achieved bandwidth and compute shares, the per-step, prefill-step and frontend times, the KV read efficiency), never the model, the GPU, the engine settings or the plan's traffic."</p>
            }
        })
    }
}

/// The calibration panel of the planner.
#[component]
pub fn CalibratePanel() -> impl IntoView {
    let fits = FitController::expect_context();
    let (paste, set_paste) = signal(String::new());
    let (over, set_over) = signal(false);
    let add_input = NodeRef::<leptos::html::Input>::new();
    let running = Memo::new(move |_| fits.status.with(|s| s.phase == FitPhase::Running));
    let on_drop = move |ev: ev::DragEvent| {
        ev.prevent_default();
        set_over.set(false);
        read_files(
            fits,
            ev.data_transfer().and_then(|d| d.files()),
            Pick::Replace,
        );
    };
    let status_text = move || {
        fits.status.with(|s| match &s.phase {
            FitPhase::Idle => String::new(),
            FitPhase::Running if s.total == 0 => "Fitting every point…".into(),
            FitPhase::Running => format!("Fitting: {} of {} fits", s.done, s.total),
            FitPhase::Held
                if fits.report.with(|r| {
                    r.as_ref().is_some_and(|r| {
                        model_mismatch(&r.calibration.source.model, &r.plan).is_some()
                    })
                }) =>
            {
                "Fitted, but to runs of another model than the plan's (see the warning): not \
                 applied, the plan keeps its constants (Apply anyway to use the fit)."
                    .into()
            }
            FitPhase::Held
                if fits.report.with(|r| {
                    r.as_ref()
                        .is_some_and(|r| FitVerdict::of(&r.calibration) == FitVerdict::NoBetter)
                }) =>
            {
                "Fitted, but no better than the datasheet constants on runs it did not see: \
                 not applied, the plan keeps its constants (Apply anyway to use the fit)."
                    .into()
            }
            FitPhase::Held => "Fitted, but a poor fit: not applied, the plan keeps its \
                 constants (Apply anyway to use the fit)."
                .into(),
            FitPhase::Done => {
                "Calibrated: the plan now uses the fitted constants; its traffic is unchanged."
                    .into()
            }
            FitPhase::Cancelled => "Cancelled; the plan is unchanged.".into(),
            FitPhase::Failed(m) => format!("The fit failed: {m}"),
        })
    };
    view! {
        <section
            class="panel calibrate-panel no-print"
            class:drag-over=move || over.get()
            aria-labelledby="calibrate-title"
            data-testid="calibrate-panel"
            on:dragover=move |ev: ev::DragEvent| { ev.prevent_default(); set_over.set(true); }
            on:dragleave=move |_| set_over.set(false)
            on:drop=on_drop
        >
            <h2 id="calibrate-title">"Calibrate from measurements"</h2>
            <p class="panel-intro">"Fit the step model to your own benchmark results (vllm bench serve JSON, GuideLLM reports, or a CSV table): choose or drop the files here (they take the place of those chosen before; Add files adds to them), or paste one."</p>
            <div class="calibrate-files">
                <input type="file" multiple=true accept=".json,.csv,.tsv,.txt" data-testid="calibrate-files"
                    aria-label="Benchmark result files (in place of those chosen)"
                    on:change:target=move |ev| {
                        read_files(fits, ev.target().files(), Pick::Replace);
                        ev.target().set_value("");
                    } />
                <input type="file" multiple=true accept=".json,.csv,.tsv,.txt" data-testid="calibrate-add-files"
                    class="sr-only" tabindex="-1" aria-hidden="true" node_ref=add_input
                    on:change:target=move |ev| {
                        read_files(fits, ev.target().files(), Pick::Add);
                        ev.target().set_value("");
                    } />
                <button type="button" data-testid="calibrate-add"
                    on:click=move |_| { if let Some(i) = add_input.get() { i.click(); } }>"Add files"</button>
            </div>
            <ChosenFiles />
            <textarea rows="3" data-testid="calibrate-paste" placeholder="…or paste a CSV table or one JSON result"
                aria-label="Pasted benchmark result"
                prop:value=move || paste.get() on:input:target=move |ev| set_paste.set(ev.target().value())></textarea>
            <button type="button" data-testid="calibrate-import"
                disabled=move || paste.with(|p| p.trim().is_empty())
                on:click=move |_| fits.choose(vec![ChosenFile::new("pasted text", paste.get_untracked().into_bytes())], Pick::Replace)>
                "Import"
            </button>
            {move || fits.import_error.get().map(|e| view! { <p class="error" role="alert" data-testid="calibrate-error">{e}</p> })}
            <ImportedPoints />
            <div class="run-line">
                <button type="button" class="primary" data-testid="calibrate-run"
                    disabled=move || running.get() || fits.imported.with(Option::is_none)
                    on:click=move |_| fits.run()>"Fit"</button>
                <button type="button" class="cancel" data-testid="calibrate-cancel"
                    disabled=move || !running.get() on:click=move |_| fits.cancel()>"Cancel"</button>
                <span data-testid="calibrate-status" aria-live="polite">{status_text}</span>
            </div>
            <progress max="1" data-testid="calibrate-progress" aria-label="Calibration progress"
                class:active=move || running.get()
                data-done=move || fits.status.with(|s| s.done.to_string())
                data-total=move || fits.status.with(|s| s.total.to_string())
                value=move || fits.status.with(|s| if s.total == 0 { 0.0 } else { f64::from(s.done) / f64::from(s.total) }).to_string()
            ></progress>
            <CalibrationResult />
            <CalibrationOverlay />
        </section>
    }
}
