//! Trace import: an Azure LLM inference CSV, a BurstGPT CSV or Mooncake JSONL, read in
//! slices of [`SLICE_BYTES`] through the core's streaming summariser (the page yields
//! between slices, shows its progress and can cancel), summarised to its hourly shape and
//! lengths. Only the summary and the first rows are kept; its shape becomes the day's
//! profile, and its requests can be replayed as the plan's traffic.

use goodput_core::format::{percent_tenths, thousands};
use goodput_core::schedule::RateProfile;
use goodput_core::trace::{TraceSummarizer, TraceSummary};
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen_futures::JsFuture;
use web_sys::File;

use crate::state::PlanState;

/// Bytes read from the file at a time.
pub const SLICE_BYTES: f64 = 4.0 * 1024.0 * 1024.0;

/// What the import is doing.
#[derive(Debug, Clone, PartialEq, Default)]
enum Import {
    #[default]
    None,
    /// Reading: bytes read, bytes in all.
    Reading(f64, f64),
    Done(Box<TraceSummary>, Result<(), String>),
    Failed(String),
}

/// The summary in words: rows, span, bad rows with the first reasons.
pub fn trace_words(t: &TraceSummary) -> String {
    let mut s = format!(
        "{} trace: {} requests over {:.1} h ({:.3} req/s on average); {} bad rows",
        t.format.name(),
        thousands(t.rows as i64),
        t.span_s / 3600.0,
        t.mean_rate_rps,
        thousands(t.bad_rows as i64)
    );
    if let Some(b) = t.bad_examples.first() {
        s.push_str(&format!(" (the first, line {}: {})", b.line, b.reason));
    }
    if t.truncated {
        s.push_str("; the file was longer than can be read, the rest is left out");
    }
    s.push_str(&format!(
        ". Prompts average {} tokens, outputs {}",
        thousands(t.prompt.mean.round() as i64),
        thousands(t.output.mean.round() as i64)
    ));
    if let Some(p) = &t.prefix {
        s.push_str(&format!(
            "; {} of requests start with a cached block",
            percent_tenths(p.hit_rate)
        ));
    }
    s.push('.');
    s
}

/// Reads `file` in slices through the core's summariser, telling `progress` the bytes
/// read and the bytes in all after each; stops with an empty error once `wanted` says
/// the read is no longer wanted (a newer read, or a cancel).
pub async fn summarize_file(
    file: File,
    progress: impl Fn(f64, f64),
    wanted: impl Fn() -> bool,
) -> Result<TraceSummary, String> {
    let size = file.size();
    let mut sum = TraceSummarizer::new();
    let mut at = 0.0;
    while at < size {
        let end = (at + SLICE_BYTES).min(size);
        let part = file
            .slice_with_f64_and_f64(at, end)
            .map_err(|_| "the file could not be sliced".to_string())?;
        let buf = JsFuture::from(part.array_buffer())
            .await
            .map_err(|_| "the file could not be read".to_string())?;
        if !wanted() {
            return Err(String::new());
        }
        sum.feed(&js_sys::Uint8Array::new(&buf).to_vec());
        at = end;
        progress(at, size);
    }
    sum.finish().map_err(|e| e.to_string())
}

/// The file picker, its progress and the summary.
#[component]
pub fn TraceImport() -> impl IntoView {
    let state = PlanState::expect_context();
    let stage = RwSignal::new(Import::None);
    let runs = StoredValue::new(0u32);
    let start = move |file: Option<File>| {
        let Some(file) = file else { return };
        runs.update_value(|r| *r += 1);
        let run = runs.get_value();
        stage.set(Import::Reading(0.0, file.size()));
        spawn_local(async move {
            let out = summarize_file(
                file,
                |at, size| stage.set(Import::Reading(at, size)),
                || runs.get_value() == run,
            )
            .await;
            if runs.get_value() != run {
                return;
            }
            stage.set(match out {
                Ok(t) => {
                    let applied = RateProfile::from_trace(&t)
                        .map(|p| state.set_day_profile(p))
                        .map_err(|e| format!("{e}"));
                    Import::Done(Box::new(t), applied)
                }
                Err(e) => Import::Failed(e),
            });
        });
    };
    let cancel = move |_| {
        runs.update_value(|r| *r += 1);
        stage.set(Import::Failed("cancelled".into()));
    };
    let reading = move || stage.with(|s| matches!(s, Import::Reading(..)));
    let summary = move || {
        stage.with(|s| match s {
            Import::None | Import::Reading(..) => None,
            Import::Failed(m) => Some(view! {
                <p class="error" role="alert" data-testid="day-trace-error">{format!("The trace was not read: {m}.")}</p>
            }.into_any()),
            Import::Done(t, applied) => {
                let t2 = (**t).clone();
                let t3 = (**t).clone();
                let blocks: usize = t.replay.iter().map(|r| r.blocks.len()).sum();
                let replay_help = format!(
                    "Replay replaces the plan's arrivals and lengths with the trace's {} {}, in its arrival pattern at each simulated rate{}.",
                    thousands(t.replay.len() as i64),
                    if t.replay_left_out > 0 { "first requests" } else { "requests" },
                    if blocks > 0 {
                        "; its block ids say which prompt blocks repeat, so the prefix cache's hits follow from them and from KV memory, not from a typed hit rate"
                    } else {
                        ""
                    }
                );
                let note = match applied {
                    Ok(()) => "Its hourly shape is now the day's profile.".to_string(),
                    Err(e) => format!("Its hourly shape was not used: {e}."),
                };
                Some(view! {
                    <p data-testid="day-trace-summary" data-rows=t.rows.to_string()
                        data-bad-rows=t.bad_rows.to_string() data-applied=applied.is_ok().to_string()>
                        {trace_words(t)}" "{note}
                    </p>
                    <button type="button" data-testid="day-trace-lengths"
                        on:click=move |_| state.change("trace lengths", |p| { t2.apply_to(p); })>
                        "Use its request lengths too"
                    </button>
                    " "
                    <button type="button" data-testid="day-trace-replay" data-blocks=blocks.to_string()
                        on:click=move |_| state.change("trace replay", |p| { t3.replay_into(p); })>
                        "Replay its requests as the traffic"
                    </button>
                    <p class="help" data-testid="day-trace-replay-help">{replay_help}</p>
                }.into_any())
            }
        })
    };
    view! {
        <details class="day-trace no-print">
            <summary>"Import a trace"</summary>
            <p class="help">"An Azure LLM inference trace (CSV), BurstGPT (CSV) or Mooncake (JSON Lines); read here, in slices, and never uploaded. A day of trace gives the day's shape; bad rows are counted and left out."</p>
            <input type="file" accept=".csv,.jsonl,.json,.txt" data-testid="day-trace-file"
                aria-label="Trace file"
                on:change:target=move |ev| start(ev.target().files().and_then(|f| f.get(0))) />
            <Show when=reading>
                <progress max="1" data-testid="day-trace-progress" aria-label="Trace read"
                    value=move || stage.with(|s| match s { Import::Reading(a, b) if *b > 0.0 => a / b, _ => 0.0 }).to_string()></progress>
                <button type="button" class="cancel" data-testid="day-trace-cancel" on:click=cancel>"Cancel"</button>
            </Show>
            {summary}
        </details>
    }
}
