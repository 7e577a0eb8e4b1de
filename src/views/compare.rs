//! Compare two plans side by side (the current one or saved ones): every input, then
//! the results, with the rows that differ highlighted. Results come from the core:
//! the analytic numbers are computed now; goodput is each plan's last finished search
//! (stored with a saved plan), and the fleet and cost are sized from it.

use goodput_core::analytic::{capacity_guess_rps, kv_capacity_tokens, MeanLengths};
use goodput_core::capacity::size_fleet;
use goodput_core::roofline::StepModel;
use goodput_core::roofline::StepModelOf;
use goodput_core::Plan;
use leptos::prelude::*;

use crate::components::compare_many::CompareMany;
use crate::session::Session;
use crate::state::choices::{arrival_words, slo_class_words};
use crate::state::fields::{applies, FIELDS};
use crate::state::PlanState;
use crate::summary::{gpu_name, model_name};
use goodput_core::format::{figure, rps, usd, MISSING};
use goodput_core::plan::fields::{field, Field};

/// One row of the comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// What the row is, with its unit.
    pub label: String,
    /// The first plan's value as shown.
    pub a: String,
    /// The second plan's value as shown.
    pub b: String,
}

impl Row {
    /// Whether the two plans differ here.
    pub fn differs(&self) -> bool {
        self.a != self.b
    }
}

fn row(label: impl Into<String>, f: impl Fn(&Plan) -> String, a: &Plan, b: &Plan) -> Row {
    Row {
        label: label.into(),
        a: f(a),
        b: f(b),
    }
}

/// The inputs of two plans, row by row: names, presets and choices, then every numeric
/// field that applies to either plan.
pub fn input_rows(a: &Plan, b: &Plan) -> Vec<Row> {
    // A choice's row: the registry's label, and the words of the plan's choice. The
    // fields are found when the code compiles (`const`), so a wrong path cannot build.
    let choice = |f: &'static Field, name: fn(&Plan) -> &'static str| {
        row(f.label, move |p| f.words_of(name(p)).to_string(), a, b)
    };
    let mut rows = vec![
        row("Name", |p| p.name.clone(), a, b),
        row("Model", model_name, a, b),
        choice(const { field("model.weight_dtype") }, |p| {
            p.model.weight_dtype.name()
        }),
        choice(const { field("model.kv_dtype") }, |p| {
            p.model.kv_dtype.name()
        }),
        row("GPU", gpu_name, a, b),
        row("SLO class", slo_class_words, a, b),
        choice(const { field("slo.mode") }, |p| p.slo.mode.name()),
        row(
            const { field("traffic.arrival") }.label,
            arrival_words,
            a,
            b,
        ),
        row(
            const { field("engine.chunked_prefill") }.label,
            |p| {
                if p.engine.chunked_prefill {
                    "on"
                } else {
                    "off"
                }
                .into()
            },
            a,
            b,
        ),
        choice(const { field("engine.kv_policy") }, |p| {
            p.engine.kv_policy.name()
        }),
    ];
    // A field that applies to neither plan (the clients of a closed loop, between two
    // Poisson plans) is left out; one that applies to one plan only reads "—" for the other.
    rows.extend(
        FIELDS
            .iter()
            .filter(|f| applies(f.id, a) || applies(f.id, b))
            .map(|f| {
                let label = if f.unit.is_empty() {
                    f.label.to_string()
                } else {
                    format!("{} [{}]", f.label, f.unit)
                };
                let shown = |p: &Plan| {
                    if applies(f.id, p) {
                        f.kind.format((f.get)(p))
                    } else {
                        MISSING.to_string()
                    }
                };
                row(label, shown, a, b)
            }),
    );
    rows
}

fn or_dash(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| MISSING.into())
}

/// A results row: its label and how to show it for a plan and its goodput.
type ResultRow = (&'static str, fn(&Plan, Option<f64>) -> String);

/// The results of two plans: analytic numbers computed now, then goodput as given
/// (`None` = no finished search) and the fleet sized from it.
pub fn result_rows(a: (&Plan, Option<f64>), b: (&Plan, Option<f64>)) -> Vec<Row> {
    let rows: [ResultRow; 10] = [
        ("Weights per replica [GB]", |p, _| {
            figure(p.model.weight_bytes() / 1e9)
        }),
        ("KV cache per replica [tokens]", |p, _| {
            figure(kv_capacity_tokens(p).round())
        }),
        ("Decode step, 110 × 940 tokens [ms]", |p, _| {
            figure(StepModel::from_plan(p).step_time_s(110.0, 110.0 * 940.0) * 1e3)
        }),
        ("Mean output [tokens]", |p, _| {
            figure(MeanLengths::of(p).output_tokens)
        }),
        ("Roofline capacity guess [req/s]", |p, _| {
            figure(capacity_guess_rps(p))
        }),
        ("Goodput per replica [req/s]", |_, g| or_dash(g, rps)),
        ("Replicas", |p, g| {
            or_dash(
                g.and_then(|g| size_fleet(g, p).ok())
                    .map(|f| f.replicas_total as f64),
                figure,
            )
        }),
        ("GPUs", |p, g| {
            or_dash(
                g.and_then(|g| size_fleet(g, p).ok())
                    .map(|f| f.gpus_total as f64),
                figure,
            )
        }),
        ("Cost per month", |p, g| {
            or_dash(
                g.and_then(|g| size_fleet(g, p).ok())
                    .map(|f| f.cost_per_month_usd),
                usd,
            )
        }),
        ("Cost per 1,000 compliant requests", |p, g| {
            or_dash(
                g.and_then(|g| size_fleet(g, p).ok())
                    .map(|f| f.cost_per_compliant_request_usd * 1000.0),
                usd,
            )
        }),
    ];
    rows.iter()
        .map(|(label, f)| Row {
            label: label.to_string(),
            a: f(a.0, a.1),
            b: f(b.0, b.1),
        })
        .collect()
}

/// The value of the "current plan" choice in the pickers.
const CURRENT: &str = "\u{0}current";

/// A plan picker: the current plan or a saved one.
#[component]
fn Picker(label: &'static str, testid: &'static str, choice: RwSignal<String>) -> impl IntoView {
    let session = Session::expect_context();
    view! {
        <label class="compare-pick">
            {label}
            <select data-testid=testid on:change:target=move |ev| choice.set(ev.target().value()) prop:value=move || choice.get()>
                <option value=CURRENT>"Current plan"</option>
                {move || session.library.with(|l| l.plans.iter().map(|p| {
                    let name = p.name.clone();
                    view! { <option value=name.clone()>{name.clone()}</option> }
                }).collect_view())}
            </select>
        </label>
    }
}

fn table(title: &'static str, testid: &'static str, rows: Vec<Row>) -> impl IntoView {
    view! {
        <table class="compare-table" data-testid=testid>
            <caption>{title}</caption>
            <thead><tr><th scope="col">""</th><th scope="col">"A"</th><th scope="col">"B"</th></tr></thead>
            <tbody>
                {rows.into_iter().map(|r| {
                    let differs = r.differs();
                    view! {
                        <tr class:differs=differs data-differs=differs.to_string()>
                            <th scope="row">{r.label}</th><td>{r.a}</td><td>{r.b}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}

/// The saved plan side B opens on: the newest whose inputs differ from the plan on
/// screen (`current`, without its labels), else the newest; `None` without saved plans.
pub fn default_other<'a>(
    saved: impl Iterator<Item = (&'a str, &'a Plan)> + Clone,
    current: &Plan,
) -> Option<String> {
    saved
        .clone()
        .find(|(_, p)| p.without_labels() != *current)
        .or_else(|| saved.clone().next())
        .map(|(name, _)| name.to_string())
}

/// The compare page.
#[component]
pub fn CompareView() -> impl IntoView {
    let session = Session::expect_context();
    let state = PlanState::expect_context();
    let current = state.good.with_untracked(Plan::without_labels);
    let first_other = session.library.with_untracked(|l| {
        default_other(l.plans.iter().map(|p| (p.name.as_str(), &p.plan)), &current)
    });
    let a = RwSignal::new(CURRENT.to_string());
    let b = RwSignal::new(first_other.unwrap_or_else(|| CURRENT.to_string()));
    let only_differences = RwSignal::new(false);
    let resolve = move |choice: String| -> (Plan, Option<f64>, String) {
        if choice != CURRENT {
            if let Some(p) = session.library.with(|l| l.get(&choice).cloned()) {
                return (p.plan, p.goodput_rps, choice);
            }
        }
        let plan = state.good.get();
        let g = session.goodput_of(&plan);
        (plan, g, "Current plan".into())
    };
    let tables = move || {
        let (pa, ga, _) = resolve(a.get());
        let (pb, gb, _) = resolve(b.get());
        let mut inputs = input_rows(&pa, &pb);
        let changed = inputs.iter().filter(|r| r.differs()).count();
        if only_differences.get() {
            inputs.retain(Row::differs);
        }
        view! {
            <p class="compare-summary" data-testid="compare-summary">
                {match changed {
                    0 => "The two plans have the same inputs.".to_string(),
                    1 => "1 input differs.".to_string(),
                    n => format!("{n} inputs differ."),
                }}
            </p>
            {table("Results", "compare-results", result_rows((&pa, ga), (&pb, gb)))}
            {table("Inputs", "compare-inputs", inputs)}
        }
    };
    view! {
        <main class="compare" data-testid="compare-view">
            <CompareMany />
            <h2>"Compare two plans"</h2>
            <p class="compare-intro">
                "Pick the current plan or a saved one on each side; rows that differ are highlighted. Analytic rows are computed now by the core. Goodput is each plan's last finished search (stored when the plan was saved; for the current plan, the search on screen), and replicas and cost are sized from it. Open a plan and let its search finish before saving it to compare its goodput."
            </p>
            <div class="compare-picks">
                <Picker label="A" testid="compare-a" choice=a />
                <Picker label="B" testid="compare-b" choice=b />
                <label class="compare-only">
                    <input type="checkbox" data-testid="compare-only-differences"
                        prop:checked=move || only_differences.get()
                        on:change:target=move |ev| only_differences.set(ev.target().checked()) />
                    "Only inputs that differ"
                </label>
            </div>
            {tables}
        </main>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use goodput_core::plan::{Arrival, Dtype, LengthDist};

    #[test]
    fn bf16_against_fp8_differs_in_the_weights_and_their_consequences() {
        let a = Plan::default();
        let mut b = Plan::default();
        b.model.weight_dtype = Dtype::Fp8;
        let inputs = input_rows(&a, &b);
        let differing: Vec<&str> = inputs
            .iter()
            .filter(|r| r.differs())
            .map(|r| r.label.as_str())
            .collect();
        assert_eq!(differing, ["Weight precision"]);
        // Choices read as their inputs show them, never by their names in the plan.
        let shown = |label: &str| {
            let r = inputs.iter().find(|r| r.label == label).expect(label);
            (r.a.clone(), r.b.clone())
        };
        assert_eq!(
            shown("Weight precision"),
            ("bf16 (2 bytes)".into(), "fp8 (1 byte)".into())
        );
        assert_eq!(
            shown("KV-cache policy").0,
            "Paged, preempt when full (vLLM-like)"
        );
        assert_eq!(shown("SLO class").0, "Chat");
        assert_eq!(shown("SLO mode").0, "Joint (per request)");
        let results = result_rows((&a, Some(20.0)), (&b, Some(24.0)));
        let weights = &results[0];
        assert_eq!((weights.a.as_str(), weights.b.as_str()), ("16", "8"));
        assert!(results[1].differs(), "fp8 weights leave more KV cache");
        assert!(!results[3].differs(), "same traffic");
        let gpus = results.iter().find(|r| r.label == "GPUs").expect("row");
        // 30 req/s at 70%: 20 → 14 per replica → 3 + 1; 24 → 16.8 → 2 + 1.
        assert_eq!((gpus.a.as_str(), gpus.b.as_str()), ("4", "3"));
    }

    #[test]
    fn side_b_opens_on_a_saved_plan_that_differs() {
        let current = Plan::default();
        let mut other = Plan::default();
        other.traffic.peak_rate_rps = 90.0;
        let renamed = Plan {
            name: "same inputs, another name".into(),
            ..Plan::default()
        };
        let saved = [("renamed", &renamed), ("other", &other)];
        let pick = default_other(saved.iter().copied(), &current.without_labels());
        assert_eq!(pick.as_deref(), Some("other"));
        let same = [("renamed", &renamed)];
        let pick = default_other(same.iter().copied(), &current.without_labels());
        assert_eq!(pick.as_deref(), Some("renamed"), "none differs: the newest");
        assert_eq!(default_other([].iter().copied(), &current), None);
    }

    #[test]
    fn a_fine_tune_that_doubles_output_shows_in_lengths() {
        let a = Plan::default();
        let mut b = Plan::default();
        b.traffic.output.dist = LengthDist::LogNormal {
            median: 400.0,
            sigma: 0.8,
        };
        let inputs = input_rows(&a, &b);
        assert!(inputs
            .iter()
            .any(|r| r.label.starts_with("Output median") && r.differs()));
        assert!(inputs
            .iter()
            .any(|r| r.label.starts_with("Output p95") && r.differs()));
        let results = result_rows((&a, None), (&b, None));
        let out = results
            .iter()
            .find(|r| r.label.starts_with("Mean output"))
            .expect("row");
        assert!(out.differs());
        let goodput = results
            .iter()
            .find(|r| r.label.starts_with("Goodput"))
            .expect("row");
        assert_eq!((goodput.a.as_str(), goodput.b.as_str()), ("—", "—"));
        assert!(result_rows((&a, Some(0.0)), (&a, Some(0.0)))
            .iter()
            .all(|r| !r.differs()));
    }

    #[test]
    fn inputs_that_apply_to_neither_plan_are_left_out() {
        let poisson = Plan::default();
        let labels = |rows: &[Row]| rows.iter().map(|r| r.label.clone()).collect::<Vec<_>>();
        let both_poisson = labels(&input_rows(&poisson, &poisson));
        for gone in ["Clients", "Think time", "Burstiness"] {
            assert!(
                !both_poisson.iter().any(|l| l.starts_with(gone)),
                "{gone} in {both_poisson:?}"
            );
        }
        let mut closed = Plan::default();
        closed.traffic.arrival = Arrival::Closed {
            concurrency: 32,
            think_s: 0.5,
        };
        let rows = input_rows(&poisson, &closed);
        let clients = rows
            .iter()
            .find(|r| r.label.starts_with("Clients"))
            .expect("a closed loop's clients");
        assert_eq!((clients.a.as_str(), clients.b.as_str()), ("—", "32"));
        assert!(!labels(&rows).iter().any(|l| l.starts_with("Burstiness")));
    }
}
