//! "Calibrate from measurements": benchmark files in (picker, drop, paste), the points
//! found, the fit with its progress, then the result and the overlay chart.

use goodput_core::calibrate::FitVerdict;
use leptos::ev;
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen_futures::JsFuture;
use web_sys::FileList;

use crate::components::calibration_overlay::CalibrationOverlay;
use crate::components::calibration_result::CalibrationResult;
use crate::compute::calibration::{FitController, FitPhase};
use goodput_core::format::{millis, rps};

/// Reads every file of `list` as text and imports them together.
fn read_files(fits: FitController, list: Option<FileList>) {
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
            let text = JsFuture::from(f.text())
                .await
                .ok()
                .and_then(|v| v.as_string());
            let Some(text) = text else {
                fits.imported.set(None);
                fits.import_error
                    .set(Some(format!("{}: could not be read as text", f.name())));
                return;
            };
            read.push((f.name(), text.into_bytes()));
        }
        fits.import(&read);
    });
}

/// The points of the imported set: file, load, TTFT and TPOT means.
#[component]
fn ImportedPoints() -> impl IntoView {
    let fits = FitController::expect_context();
    move || {
        fits.imported.get().map(|set| {
            let named = [set.model.clone(), set.engine.clone()]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" on ");
            let rows = set.points.iter().map(|p| {
                let s = p.summary();
                let load = match s.load {
                    goodput_core::plan::MeasuredLoad::Rate { rate_rps, .. } => format!("{} req/s", rps(rate_rps)),
                    goodput_core::plan::MeasuredLoad::Concurrency { concurrency } => format!("{concurrency} clients"),
                };
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
                <table class="calibrate-points" data-testid="calibrate-points">
                    <thead><tr><th>"File"</th><th>"Load"</th><th>"TTFT mean"</th><th>"TPOT mean"</th></tr></thead>
                    <tbody>{rows}</tbody>
                </table>
                <p class="help">"The plan's model, GPU and engine settings must be those the benchmark ran with: the fit only adjusts bandwidth, compute and per-step overhead."</p>
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
    let running = Memo::new(move |_| fits.status.with(|s| s.phase == FitPhase::Running));
    let on_drop = move |ev: ev::DragEvent| {
        ev.prevent_default();
        set_over.set(false);
        read_files(fits, ev.data_transfer().and_then(|d| d.files()));
    };
    let status_text = move || {
        fits.status.with(|s| match &s.phase {
            FitPhase::Idle => String::new(),
            FitPhase::Running if s.total == 0 => "Fitting every point…".into(),
            FitPhase::Running => format!("Fitting: {} of {} fits", s.done, s.total),
            FitPhase::Done
                if fits.report.with(|r| {
                    r.as_ref()
                        .is_some_and(|r| FitVerdict::of(&r.calibration) == FitVerdict::NoBetter)
                }) =>
            {
                "Fitted, but no better than the datasheet constants on held-out runs: the plan \
                 keeps the datasheet constants (the fit is kept, switched off)."
                    .into()
            }
            FitPhase::Done => "Calibrated: the plan now uses the fitted constants.".into(),
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
            <p class="panel-intro">"Fit the step model to your own benchmark results (vllm bench serve JSON, GuideLLM reports, or a CSV table): choose or drop the files here, or paste one."</p>
            <input type="file" multiple=true accept=".json,.csv,.tsv,.txt" data-testid="calibrate-files"
                aria-label="Benchmark result files"
                on:change:target=move |ev| read_files(fits, ev.target().files()) />
            <textarea rows="3" data-testid="calibrate-paste" placeholder="…or paste a CSV table or one JSON result"
                aria-label="Pasted benchmark result"
                prop:value=move || paste.get() on:input:target=move |ev| set_paste.set(ev.target().value())></textarea>
            <button type="button" data-testid="calibrate-import"
                disabled=move || paste.with(|p| p.trim().is_empty())
                on:click=move |_| fits.import(&[("pasted text".to_string(), paste.get_untracked().into_bytes())])>
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
