//! Traffic classes (`classes`): several workloads on one fleet, each with its share of
//! the peak, lengths, objectives and priority. Each class is edited as its line of
//! text, the same `name:key=value,...` the command line's `--class` takes, read by the
//! core's own parser; a line it refuses leaves the plan as it was and says why. Splitting
//! the traffic into classes, adding and removing one are undoable steps. A class may
//! replay a trace of its own, read from a file here: its line then names the file, and
//! the import is undoable too. Under the inputs, each class at the planned rate and the
//! class that binds, from the report.

use goodput_core::format::{latency, percent_tenths, percent_whole, rps, thousands, usd};
use goodput_core::plan::classes::{
    class_keys, class_text, parse_class, parse_class_line, with_class_peak, ClassReplay,
    TrafficClass,
};
use goodput_core::plan::TraceRow;
use goodput_core::Plan;
use leptos::prelude::*;
use leptos::task::spawn_local;
use web_sys::File;

use crate::compute::{Phase, RunController};
use crate::hooks::use_report::use_report;
use crate::state::PlanState;

/// The plan paths whose problems show under the classes.
const PATHS: [&str; 5] = [
    "classes",
    "classes.share",
    "classes.name",
    "classes.priority",
    "classes.replay",
];

/// The rows a class's line may name with `replay=FILE` in the page: those of the trace
/// the class already replays, read from its file; any other name is refused, since the
/// page reads files only when they are chosen.
fn kept_rows(old: Option<&TrafficClass>, source: &str) -> Result<Vec<TraceRow>, String> {
    match old.and_then(|c| c.replay.as_ref()) {
        Some(r) if r.source == source => Ok(r.rows.clone()),
        _ => Err(format!(
            "{source} is not the trace this class replays; choose the file with the class's 'Replay a trace' button"
        )),
    }
}

/// `class` replaying `rows` of `source`: its own arrivals and lengths give way to the
/// trace's.
pub fn with_replay(class: &TrafficClass, source: &str, rows: Vec<TraceRow>) -> TrafficClass {
    TrafficClass {
        replay: Some(ClassReplay::new(source, rows)),
        arrival: None,
        prompt: None,
        output: None,
        ..class.clone()
    }
}

/// A class trace's import: which class, and the bytes read of all, or what came of it.
#[derive(Debug, Clone, PartialEq)]
enum Reading {
    Progress(usize, f64, f64),
    /// Read: the class, the file's name, and what it did, in words.
    Done(usize, String, String),
    Failed(usize, String),
}

/// The two classes a plan of one class splits into: its own traffic as interactive
/// chat (70%, served first, the plan's objectives), and batch work (30%, served after,
/// a one-minute deadline and no TTFT objective).
pub fn split_into_classes(plan: &Plan) -> Vec<TrafficClass> {
    [
        "chat:share=0.7,priority=0",
        "batch:share=0.3,priority=1,e2e=60",
    ]
    .iter()
    .filter_map(|t| parse_class(plan, t).ok())
    .collect()
}

/// What adding a class did to the shares, in words: "class-3 takes half of batch's
/// share: 0.15 each; edit the shares to suit." None when the plan had no classes (the
/// split is its own, stated in the lines).
pub fn added_words(before: &Plan) -> Option<String> {
    let last = before.classes.last()?;
    let after = with_class_added(before);
    let new = after.last()?;
    Some(format!(
        "{} takes half of {}'s share: {} each; edit the shares to suit.",
        new.name,
        last.name,
        goodput_core::format::sig(new.share)
    ))
}

/// `plan`'s classes with one more: named `class-N` (the first N free), taking half the
/// last class's share, at the last class's priority.
pub fn with_class_added(plan: &Plan) -> Vec<TrafficClass> {
    let mut classes = plan.classes.clone();
    let Some(last) = classes.last_mut() else {
        return split_into_classes(plan);
    };
    let half = last.share / 2.0;
    last.share -= half;
    let priority = last.priority;
    let name = (classes.len() + 1..)
        .map(|n| format!("class-{n}"))
        .find(|n| classes.iter().all(|c| &c.name != n))
        .unwrap_or_default();
    classes.push(TrafficClass {
        name,
        share: half,
        priority,
        ..TrafficClass::default()
    });
    classes
}

/// `plan`'s classes without class `k`, whose share goes to the first that is left; none
/// when one would be left (a plan of one class has no classes).
pub fn with_class_removed(plan: &Plan, k: usize) -> Vec<TrafficClass> {
    let mut classes = plan.classes.clone();
    if k >= classes.len() {
        return classes;
    }
    let gone = classes.remove(k);
    if classes.len() < 2 {
        return Vec::new();
    }
    classes[0].share += gone.share;
    classes
}

/// The "Traffic classes" part of the inputs.
#[component]
pub fn ClassInputs() -> impl IntoView {
    let state = PlanState::expect_context();
    let texts = Memo::new(move |_| {
        state.draft.with(|p| {
            p.classes
                .iter()
                .map(|c| class_text(p, c))
                .collect::<Vec<String>>()
        })
    });
    let on = Memo::new(move |_| state.draft.with(|p| !p.classes.is_empty()));
    // A line the parser refused (its row and why): shown until the next good edit; the
    // plan is unchanged.
    let refused = RwSignal::new(None::<(usize, String)>);
    // What the last "Add a class" did to the shares and how many classes it left: shown
    // while the plan still has them (an Undo or the next edit hides it).
    let added = RwSignal::new(None::<(usize, String)>);
    let message = move || {
        refused
            .get()
            .map(|(_, e)| e)
            .or_else(|| PATHS.iter().find_map(|p| state.message_for(p)))
    };
    let edit = move |k: usize, text: String| {
        let plan = state.draft.get_untracked();
        added.set(None);
        // A class's own peak sets every share and the plan's peak: the other classes
        // keep their own peaks.
        let read = |source: &str| kept_rows(plan.classes.get(k), source);
        let line = parse_class_line(&plan, &text, &read).and_then(|(c, peak)| match peak {
            None => Ok((c, None)),
            Some(r) => with_class_peak(&plan, k, c.clone(), r).map(|at| (c, Some(at))),
        });
        match line {
            Ok((c, None)) => {
                refused.set(None);
                if plan.classes.get(k) != Some(&c) {
                    state.change("traffic class", move |p| {
                        if let Some(slot) = p.classes.get_mut(k) {
                            *slot = c;
                        }
                    });
                }
            }
            Ok((_, Some((classes, total)))) => {
                refused.set(None);
                state.change("traffic class's peak", move |p| {
                    p.classes = classes;
                    p.traffic.peak_rate_rps = total;
                });
            }
            Err(e) => refused.set(Some((k, e))),
        }
    };
    let report = use_report().report;
    let runs = RunController::expect_context();
    let dedicated = move || {
        report.with(|r| {
            r.as_ref()
                .and_then(|(_, r)| r.dedicated.as_ref())
                .map(|d| d.words())
        })
    };
    let outcomes = move || report.with(|r| r.as_ref().map(|(_, r)| r.classes.clone()));
    let peak = move || report.with(|r| r.as_ref().map(|(p, _)| p.traffic.peak_rate_rps));
    let binding = move || report.with(|r| r.as_ref().and_then(|(_, r)| r.binding_class.clone()));
    let keys = class_keys().join(", ");
    // A class's trace being read, or what came of the last read.
    let reading = RwSignal::new(None::<Reading>);
    let reads = StoredValue::new(0u32);
    let replay = move |k: usize, file: Option<File>| {
        let Some(file) = file else { return };
        reads.update_value(|r| *r += 1);
        let run = reads.get_value();
        let name = file.name();
        reading.set(Some(Reading::Progress(k, 0.0, file.size())));
        spawn_local(async move {
            let out = crate::components::trace_import::summarize_file(
                file,
                |at, size| reading.set(Some(Reading::Progress(k, at, size))),
                || reads.get_value() == run,
            )
            .await;
            if reads.get_value() != run {
                return;
            }
            let t = match out {
                Ok(t) => t,
                Err(e) => {
                    reading.set(Some(Reading::Failed(
                        k,
                        format!("{name} was not read: {e}"),
                    )));
                    return;
                }
            };
            let Some(class) = state.draft.with_untracked(|p| p.classes.get(k).cloned()) else {
                return;
            };
            let blocks = t.replay.iter().any(|r| !r.blocks.is_empty());
            let new = with_replay(&class, &name, t.replay);
            let mut check = state.draft.get_untracked();
            check.classes[k] = new.clone();
            if let Err(e) = check.validate() {
                reading.set(Some(Reading::Failed(k, e.message)));
                return;
            }
            let rows = new.replay.as_ref().map_or(0, |r| r.rows.len());
            let mut words = format!(
                "{} replays {}: {} requests, in their arrival pattern at the class's share of the rate, with their lengths",
                class.name,
                name,
                thousands(rows as i64)
            );
            if t.replay_left_out > 0 {
                words.push_str(&format!(
                    " ({} later rows left out)",
                    thousands(t.replay_left_out as i64)
                ));
            }
            if blocks {
                words.push_str(
                    "; its block ids are not used: the class caches a prefix by its hit rate",
                );
            }
            words.push('.');
            state.change("a class's trace", move |p| {
                if let Some(slot) = p.classes.get_mut(k) {
                    *slot = new;
                }
            });
            reading.set(Some(Reading::Done(k, name, words)));
        });
    };
    let cancel = move |_| {
        reads.update_value(|r| *r += 1);
        reading.set(None);
    };
    view! {
        <fieldset class="subgroup" data-testid="group-classes" data-on=move || on.get().to_string()>
            <legend>"Traffic classes"</legend>
            <div class="group-fields class-fields">
                <p class="help">
                    "Several workloads on one fleet, each with its share of the peak (or its own peak, peak=req/s, which sets every share and the plan's peak), lengths, objectives and priority (0 is served first). One line per class, as "
                    <code>"goodput plan --class"</code>" takes it: "<code>"name:key=value,…"</code>
                    ". Keys: "{keys}". What a class leaves out is the plan's; a class that gives an objective has only those it gives. “Replay a trace…” gives a class a trace's requests: their arrival pattern at the class's share of the rate, and their lengths."
                </p>
                {move || {
                    texts
                        .get()
                        .into_iter()
                        .enumerate()
                        .map(|(k, text)| {
                            let bad = move || refused.with(|r| matches!(r, Some((i, _)) if *i == k));
                            view! {
                                <div class="field class-row" class:invalid=bad>
                                    <label for=format!("class-{k}")>{format!("Class {}", k + 1)}</label>
                                    <input
                                        id=format!("class-{k}")
                                        type="text"
                                        spellcheck="false"
                                        data-testid=format!("class-{k}")
                                        aria-invalid=move || bad().to_string()
                                        aria-describedby="error-classes"
                                        prop:value=text
                                        on:change:target=move |ev| edit(k, ev.target().value())
                                    />
                                    <button
                                        type="button"
                                        data-testid=format!("class-remove-{k}")
                                        on:click=move |_| {
                                            state.change("remove a traffic class", move |p| {
                                                p.classes = with_class_removed(p, k);
                                            })
                                        }
                                    >
                                        "Remove"
                                    </button>
                                    <label class="file-button">
                                        "Replay a trace…"
                                        <input
                                            type="file"
                                            accept=".csv,.jsonl,.json,.txt"
                                            data-testid=format!("class-replay-{k}")
                                            aria-label=format!("Trace for class {}", k + 1)
                                            on:change:target=move |ev| replay(k, ev.target().files().and_then(|f| f.get(0)))
                                        />
                                    </label>
                                </div>
                            }
                        })
                        .collect_view()
                }}
                <button
                    type="button"
                    data-testid="class-add"
                    on:click=move |_| {
                        added.set(state.draft.with_untracked(|p| {
                            added_words(p).map(|w| (p.classes.len() + 1, w))
                        }));
                        state.change("add a traffic class", |p| p.classes = with_class_added(p))
                    }
                >
                    {move || if on.get() { "Add a class" } else { "Split into classes" }}
                </button>
                {move || {
                    reading.get().map(|r| match r {
                        Reading::Progress(k, at, size) => view! {
                            <p class="note" data-testid="class-replay-progress">
                                {format!("Reading class {}'s trace… ", k + 1)}
                                <progress max="1" aria-label="Trace read"
                                    value=(if size > 0.0 { at / size } else { 0.0 }).to_string()></progress>
                                " "
                                <button type="button" class="cancel" data-testid="class-replay-cancel" on:click=cancel>"Cancel"</button>
                            </p>
                        }.into_any(),
                        // Shown while the class still replays that file (an Undo hides it).
                        Reading::Done(k, name, words) => {
                            let still = move || state.draft.with(|p| {
                                p.classes.get(k).and_then(|c| c.replay.as_ref()).is_some_and(|r| r.source == name)
                            });
                            view! {
                                <Show when=still>
                                    <p class="note" data-testid="class-replay-done">{words.clone()}</p>
                                </Show>
                            }.into_any()
                        }
                        Reading::Failed(_, e) => view! {
                            <p class="error" role="alert" data-testid="class-replay-error">{e}</p>
                        }.into_any(),
                    })
                }}
                <p class="note" data-testid="class-added">
                    {move || {
                        added
                            .get()
                            .filter(|(n, _)| texts.with(|t| t.len()) == *n)
                            .map(|(_, w)| w)
                    }}
                </p>
                <p class="error" role="alert" id="error-classes" data-testid="error-classes">{message}</p>
                <Show when=move || on.get()>
                    <p class="note" data-testid="class-dedicated">
                        {move || {
                            if runs.status.with(|s| s.phase == Phase::Dedicated) {
                                return "Finding each class's goodput on a pool of its own, to compare…".to_string();
                            }
                            dedicated().unwrap_or_default()
                        }}
                    </p>
                </Show>
                <Show when=move || on.get() && outcomes().is_some_and(|o| !o.is_empty())>
                    <p class="note" data-testid="binding-class" data-class=binding>
                        {move || {
                            let bound = binding()
                                .map(|b| format!("The class that binds the goodput: {b}. "))
                                .unwrap_or_default();
                            format!(
                                "{bound}Each class at the planned rate; its cost is a replica's cost split by the tokens it used, over its requests."
                            )
                        }}
                    </p>
                    <div class="class-results-wrap">
                        <table class="class-results" data-testid="class-results">
                            <thead>
                                <tr>
                                    <th>"class"</th>
                                    <th>"share"</th>
                                    <th title="The class's share of the plan's peak">"peak"</th>
                                    <th title="Attainment at the planned rate per replica">"attained"</th>
                                    <th>"TTFT p99"</th>
                                    <th>"E2E p99"</th>
                                    <th title="Cost per compliant request of the class">"$ per request"</th>
                                </tr>
                            </thead>
                            <tbody>
                                {move || {
                                    outcomes()
                                        .unwrap_or_default()
                                        .into_iter()
                                        .map(|c| {
                                            let at = c.at_planned_load;
                                            let dash = || goodput_core::format::MISSING.to_string();
                                            view! {
                                                <tr
                                                    data-testid="class-result"
                                                    data-name=c.name.clone()
                                                    data-attainment=at.map(|d| d.attainment.to_string())
                                                    data-cost=c.cost_per_compliant_request_usd.map(|x| x.to_string())
                                                >
                                                    <td>{c.name.clone()}</td>
                                                    <td>{percent_whole(c.share)}</td>
                                                    <td>{peak().map_or_else(dash, |r| format!("{} req/s", rps(c.share * r)))}</td>
                                                    <td>{at.map_or_else(dash, |d| percent_tenths(d.attainment))}</td>
                                                    <td>{at.map_or_else(dash, |d| latency(Some(d.ttft_p99_s)))}</td>
                                                    <td>{at.map_or_else(dash, |d| latency(Some(d.e2e_p99_s)))}</td>
                                                    <td>{c.cost_per_compliant_request_usd.map_or_else(dash, usd)}</td>
                                                </tr>
                                            }
                                        })
                                        .collect_view()
                                }}
                            </tbody>
                        </table>
                    </div>
                </Show>
            </div>
        </fieldset>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitting_adding_and_removing_keep_the_shares_whole() {
        let plan = Plan::default();
        let mut p = plan.clone();
        p.classes = split_into_classes(&plan);
        assert_eq!(p.classes.len(), 2);
        p.validate().expect("a valid split");
        assert_eq!(added_words(&plan), None, "a split states its own shares");
        assert_eq!(
            added_words(&p).as_deref(),
            Some("class-3 takes half of batch's share: 0.15 each; edit the shares to suit.")
        );
        p.classes = with_class_added(&p);
        assert_eq!(p.classes.len(), 3);
        assert_eq!(p.classes[2].name, "class-3");
        p.validate().expect("valid with a third");
        let sum: f64 = p.classes.iter().map(|c| c.share).sum();
        assert!((sum - 1.0).abs() < 1e-12);
        p.classes = with_class_removed(&p, 1);
        assert_eq!(p.classes.len(), 2);
        p.validate().expect("valid without the second");
        p.classes = with_class_removed(&p, 0);
        assert!(
            p.classes.is_empty(),
            "one class left is a plan of one class"
        );
    }
}
