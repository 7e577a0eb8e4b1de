//! Traffic classes (`classes`): several workloads on one fleet, each with its share of
//! the peak, lengths, objectives and priority. Each class is edited as its line of
//! text, the same `name:key=value,...` the command line's `--class` takes, read by the
//! core's own parser; a line it refuses leaves the plan as it was and says why. Splitting
//! the traffic into classes, adding and removing one are undoable steps. Under the
//! inputs, each class at the planned rate and the class that binds, from the report.

use goodput_core::format::{latency, percent_tenths, percent_whole, rps, usd};
use goodput_core::plan::classes::{
    class_keys, class_text, parse_class, parse_class_line, with_class_peak, TrafficClass,
};
use goodput_core::Plan;
use leptos::prelude::*;

use crate::compute::{Phase, RunController};
use crate::hooks::use_report::use_report;
use crate::state::PlanState;

/// The plan paths whose problems show under the classes.
const PATHS: [&str; 4] = [
    "classes",
    "classes.share",
    "classes.name",
    "classes.priority",
];

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
        let line = parse_class_line(&plan, &text).and_then(|(c, peak)| match peak {
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
    view! {
        <fieldset class="subgroup" data-testid="group-classes" data-on=move || on.get().to_string()>
            <legend>"Traffic classes"</legend>
            <div class="group-fields class-fields">
                <p class="help">
                    "Several workloads on one fleet, each with its share of the peak (or its own peak, peak=req/s, which sets every share and the plan's peak), lengths, objectives and priority (0 is served first). One line per class, as "
                    <code>"goodput plan --class"</code>" takes it: "<code>"name:key=value,…"</code>
                    ". Keys: "{keys}". What a class leaves out is the plan's; a class that gives an objective has only those it gives."
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
