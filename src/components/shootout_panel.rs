//! "Compare GPUs": the plan on every GPU preset × layout chosen (tensor-parallel degrees,
//! and pipeline stages across nodes), ranked
//! by the monthly cost of the fleet that meets the SLO at the peak, as a table and a
//! cost-against-latency chart; one click makes a row the plan.

use goodput_core::presets::{self, GPUS};
use goodput_core::shootout::{
    vendor_carry_words, ShootoutRow, ShootoutSpec, DEFAULT_GPUS, DEFAULT_NODES, MAX_NODES,
    TP_DEGREES,
};
use leptos::prelude::*;

use crate::charts::shootout::{draw_shootout, shootout_chart};
use crate::components::chart_canvas::ChartCanvas;
use crate::compute::shootout::{ShootoutController, ShootoutPhase};
use crate::state::PlanState;
use goodput_core::format::{millis, rps, usd, MISSING};

/// Makes `row`'s GPU, layout and speculation the plan's (the GPU preset's figures
/// included).
fn use_row(state: PlanState, row: &ShootoutRow) {
    let Some(g) = presets::gpu(&row.gpu) else {
        return;
    };
    let layout = row.layout_of();
    let (k, a) = (row.spec_draft_tokens, row.spec_acceptance);
    let what = format!("use {}", row.label());
    state.change(&what, |p| {
        g.apply(p);
        p.hardware.tp_degree = layout.tp;
        p.hardware.pp_degree = layout.pp;
        p.hardware.ep_degree = layout.ep;
        // The row's speculation: off, or its draft at its acceptance.
        p.engine.set_speculation((k, a));
    });
}

/// One row of the table.
fn row_view(state: PlanState, row: ShootoutRow, best: bool, chosen: bool) -> impl IntoView {
    let money = |x: Option<f64>| x.map(usd).unwrap_or_else(|| MISSING.into());
    let note = match (row.why(), best, chosen) {
        (Some(r), _, _) => r.to_string(),
        (None, true, true) => "cheapest; the plan's choice".into(),
        (None, true, false) => "cheapest".into(),
        (None, false, true) => "the plan's choice".into(),
        _ => String::new(),
    };
    // An option with no fleet (it does not fit, or no rate meets the SLO on it) has
    // nothing to use: its note says why.
    let usable = row.ranked() && !chosen;
    let label = format!("Use {}", row.label());
    let r = row.clone();
    view! {
        <tr data-testid="shootout-row" data-gpu=row.gpu.clone() data-tp=row.tp.to_string()
            data-pp=row.pp.to_string()
            data-ep=row.ep.to_string()
            data-draft=row.spec_draft_tokens.to_string()
            class:best=best class:chosen=chosen class:unfit=!row.fits>
            <th scope="row">
                {row.gpu_name.clone()}
                {(row.spec_draft_tokens > 0).then(|| view! {
                    " "<span class="draft" data-testid="shootout-draft">{format!("draft {}", row.spec_draft_tokens)}</span>
                })}
                {(!row.constants.is_datasheet()).then(|| view! {
                    " "<span class="constants-source" data-testid="shootout-constants"
                        data-value=row.constants.label()
                        title="Where this row's step-model constants come from">
                        {format!("constants: {}", row.constants.label())}
                    </span>
                })}
            </th>
            <td data-testid="shootout-layout">{row.layout()}</td>
            <td class="num" data-testid="shootout-goodput" data-value=row.goodput_rps.to_string()>
                {if row.fits { rps(row.goodput_rps) } else { MISSING.into() }}
            </td>
            <td class="num" data-testid="shootout-gpus" data-value=row.gpus_total.to_string()>
                {if row.gpus_total > 0 { row.gpus_total.to_string() } else { MISSING.into() }}
            </td>
            <td class="num" data-testid="shootout-month"
                data-value=row.cost_per_month_usd.map(|x| x.to_string()).unwrap_or_default()>
                {money(row.cost_per_month_usd)}
            </td>
            <td class="num" data-testid="shootout-per-1k"
                data-value=row.cost_per_compliant_request_usd.map(|x| x.to_string()).unwrap_or_default()>
                {money(row.cost_per_compliant_request_usd.map(|c| c * 1e3))}
            </td>
            <td class="num">{millis(row.ttft_p99_s)}</td>
            <td class="num">{millis(row.tpot_p99_s)}</td>
            <td class="note">{note}</td>
            <td>
                <button type="button" data-testid="shootout-use" aria-label=label
                    disabled=!usable on:click=move |_| use_row(state, &r)>"Use"</button>
            </td>
        </tr>
    }
}

/// The comparison panel.
#[component]
pub fn ShootoutPanel() -> impl IntoView {
    let state = PlanState::expect_context();
    let ctl = ShootoutController::expect_context();
    let gpus = RwSignal::new(
        GPUS.iter()
            .map(|g| DEFAULT_GPUS.contains(&g.id))
            .collect::<Vec<bool>>(),
    );
    let tps = RwSignal::new(vec![true; TP_DEGREES.len()]);
    let speculation = RwSignal::new(false);
    let nodes = RwSignal::new(DEFAULT_NODES);
    let spec = move || ShootoutSpec {
        gpus: GPUS
            .iter()
            .zip(gpus.get())
            .filter(|(_, on)| *on)
            .map(|(g, _)| g.id.to_string())
            .collect(),
        tp_degrees: TP_DEGREES
            .iter()
            .zip(tps.get())
            .filter(|(_, on)| *on)
            .map(|(t, _)| *t)
            .collect(),
        speculation: speculation.get(),
        max_nodes: nodes.get(),
    };
    let running = Memo::new(move |_| ctl.status.with(|s| s.phase == ShootoutPhase::Running));
    // An input with a problem blocks the run, unless the problem is only that the model
    // does not fit its own GPU: that plan is compared as it is.
    let memory_only = Memo::new(move |_| {
        state
            .draft
            .with(goodput_core::Plan::refused_only_for_memory)
    });
    let blocked = move || state.run_blocked().filter(|_| !memory_only.get());
    // A mixture of experts adds expert-parallel layouts.
    let experts = Memo::new(move |_| state.draft.with(goodput_core::shootout::experts_of));
    let options = move || spec().option_count(experts.get());
    // The plan on screen: a plan whose model does not fit its own GPU is compared too.
    let record = Memo::new(move |_| state.draft.with(|p| p.shootout.clone()));
    // An edit with a problem makes the result stale, as it blocks a run.
    let fresh = Memo::new(move |_| {
        blocked().is_none()
            && state
                .draft
                .with(|p| p.shootout.as_ref().is_some_and(|r| r.is_fresh(p)))
    });
    let chosen = Memo::new(move |_| {
        state
            .draft
            .with(|p| p.shootout.as_ref().and_then(|r| r.chosen_in(p)))
    });
    let status_text = move || {
        ctl.status.with(|s| match &s.phase {
            ShootoutPhase::Idle => String::new(),
            ShootoutPhase::Running => {
                format!("Simulating: {} of about {} simulations…", s.done, s.total)
            }
            ShootoutPhase::Done => "Done; the comparison is saved in the plan and its link.".into(),
            ShootoutPhase::Cancelled(why) => format!("Cancelled: {why}."),
            ShootoutPhase::Failed(m) => format!("The comparison failed: {m}"),
        })
    };
    let gpu_boxes = GPUS
        .iter()
        .enumerate()
        .map(|(i, g)| {
            view! {
                <label class="check">
                    <input type="checkbox" data-testid=format!("shootout-gpu-{}", g.id)
                        prop:checked=move || gpus.with(|v| v[i])
                        on:change:target=move |ev| { let on = ev.target().checked(); gpus.update(|v| v[i] = on) } />
                    {g.name}
                </label>
            }
        })
        .collect_view();
    let tp_boxes = TP_DEGREES
        .iter()
        .enumerate()
        .map(|(i, t)| {
            view! {
                <label class="check">
                    <input type="checkbox" data-testid=format!("shootout-tp-{t}")
                        prop:checked=move || tps.with(|v| v[i])
                        on:change:target=move |ev| { let on = ev.target().checked(); tps.update(|v| v[i] = on) } />
                    {format!("TP {t}")}
                </label>
            }
        })
        .collect_view();
    let table = move || {
        record.get().map(|rec| {
            let best = rec.result.best;
            let chosen = chosen.get();
            let rows = rec
                .result
                .rows
                .iter()
                .enumerate()
                .map(|(i, r)| row_view(state, r.clone(), best == Some(i), chosen == Some(i)))
                .collect_view();
            let mut verdict = rec.result.clone();
            verdict.chosen = chosen;
            view! {
                <p class="verdict" data-testid="shootout-verdict">{verdict.verdict()}</p>
                {(!fresh.get()).then(|| view! {
                    <p class="warning" role="status" data-testid="shootout-stale">
                        "The plan has changed since this comparison was run (traffic, SLO, model or engine settings): compare again for current numbers."
                    </p>
                })}
                {rec.omitted_words().map(|w| view! {
                    <p class="hint" data-testid="shootout-omitted">{w}</p>
                })}
                {state.good.with(|p| vendor_carry_words(&rec.result.rows, p)).map(|w| view! {
                    <p class="warning" data-testid="shootout-vendor-carry">{w}</p>
                })}
                <div class="table-scroll">
                <table class="shootout-table" data-testid="shootout-table">
                    <thead><tr>
                        <th scope="col">"GPU"</th><th scope="col">"Layout"</th>
                        <th scope="col">"Goodput per replica [req/s]"</th><th scope="col">"GPUs"</th>
                        <th scope="col">"Per month"</th><th scope="col">"Per 1k compliant requests"</th>
                        <th scope="col">"p99 TTFT"</th><th scope="col">"p99 TPOT"</th>
                        <th scope="col">"Note"</th><th scope="col"><span class="sr-only">"Make it the plan"</span></th>
                    </tr></thead>
                    <tbody>{rows}</tbody>
                </table>
                </div>
            }
        })
    };
    let chart_data = Memo::new(move |_| {
        record
            .get()
            .map(|rec| shootout_chart(&rec.result, chosen.get()))
            .unwrap_or_default()
    });
    view! {
        <section class="panel shootout-panel" aria-labelledby="shootout-title" data-testid="shootout-panel">
            <h2 id="shootout-title">"Compare GPUs"</h2>
            <p class="panel-intro">
                "Runs this plan's goodput search on every GPU and layout ticked, sizes each fleet for the peak, and ranks them by the fleet's monthly cost (cost per SLO-compliant request breaks ties). A layout is a tensor-parallel degree; or the largest degree ticked with 2 or more pipeline stages (one a node when that degree fills a node); or, for a mixture of experts, its experts split over that degree's GPUs times 1 or more nodes (expert parallelism). Options whose weights or longest request do not fit say why."
            </p>
            <fieldset class="checks no-print"><legend>"GPUs"</legend>{gpu_boxes}</fieldset>
            <fieldset class="checks no-print"><legend>"Tensor-parallel degrees"</legend>{tp_boxes}</fieldset>
            <p class="no-print"><label>
                "Nodes per replica, at most "
                <select data-testid="shootout-nodes"
                    on:change:target=move |ev| {
                        if let Ok(n) = ev.target().value().parse::<u32>() { nodes.set(n) }
                    }>
                    {(1..=MAX_NODES).map(|n| view! {
                        <option value=n.to_string() selected=move || nodes.get() == n>
                            {if n == 1 { "1 (no pipeline stages)".to_string() } else { format!("{n} (up to {n} pipeline stages)") }}
                        </option>
                    }).collect_view()}
                </select>
            </label></p>
            <label class="check no-print">
                <input type="checkbox" data-testid="shootout-speculation"
                    prop:checked=move || speculation.get()
                    on:change:target=move |ev| speculation.set(ev.target().checked()) />
                " Each with and without speculative decoding (off when the plan drafts; the calibration's measured draft when it does not)"
            </label>
            <div class="run-line no-print">
                <button type="button" class="primary" data-testid="shootout-run"
                    disabled=move || running.get() || options() == 0 || blocked().is_some()
                    title=blocked
                    on:click=move |_| ctl.run(spec())>
                    {move || match options() {
                        0 => "Tick a GPU and a TP degree to compare".to_string(),
                        1 => "Compare 1 option".to_string(),
                        n => format!("Compare {n} options"),
                    }}
                </button>
                <button type="button" class="cancel" data-testid="shootout-cancel"
                    disabled=move || !running.get() on:click=move |_| ctl.cancel()>"Cancel"</button>
                <span data-testid="shootout-status" aria-live="polite">{status_text}</span>
            </div>
            <progress max="1" class="no-print" data-testid="shootout-progress" aria-label="Comparison progress"
                class:active=move || running.get()
                value=move || ctl.status.with(|s| if s.total == 0 { 0.0 } else { f64::from(s.done) / f64::from(s.total) }).to_string()
            ></progress>
            {table}
            <Show when=move || record.with(Option::is_some)>
                <ChartCanvas
                    testid="shootout-chart"
                    label="Cost per 1,000 compliant requests against p99 TPOT at the planned rate, one marker per GPU and layout; the cheapest in green, the plan's choice ringed"
                    height=300.0
                    draw=move |area, theme| {
                        chart_data.with(|d| draw_shootout(area, d, theme).unwrap_or_default())
                    }
                    readout=move |_, x, _| chart_data.with(|d| d.readout(x))
                />
            </Show>
        </section>
    }
}
