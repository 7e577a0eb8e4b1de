//! "Split prefill and decode": the plan's disaggregated pools (GPU, TP degree and limits
//! of each, the KV link, the router), the cheapest xPyD that meets the SLO at the peak,
//! and the same plan aggregated beside it, with a verdict in plain words.

use goodput_core::disagg::{ComparisonRow, DisaggResult};
use goodput_core::plan::comparison::TP_DEGREES;
use goodput_core::plan::fields::field;
use goodput_core::presets::GPUS;
use leptos::prelude::*;

use crate::charts::disagg::{disagg_chart, draw_disagg};
use crate::components::chart_canvas::ChartCanvas;
use crate::components::choices::Choice;
use crate::components::number_field::NumberField;
use crate::compute::disagg::{DisaggController, DisaggPhase};
use crate::state::PlanState;

/// Which pool a GPU and TP choice belongs to.
#[derive(Clone, Copy, PartialEq)]
enum Pool {
    Prefill,
    Decode,
}

impl Pool {
    fn name(self) -> &'static str {
        match self {
            Pool::Prefill => "prefill",
            Pool::Decode => "decode",
        }
    }
}

/// The GPU and TP selects of one pool.
#[component]
fn PoolHardware(pool: Pool) -> impl IntoView {
    let state = PlanState::expect_context();
    let name = pool.name();
    let gpu_field = format!("disagg.{name}.gpu");
    let tp_field = format!("disagg.{name}.tp_degree");
    // The registry's rows read and write the pool's GPU and TP degree.
    let gpu_row = field(&gpu_field);
    let tp_access = field(&tp_field)
        .access
        .expect("a pool's TP degree is a number");
    let current = move || {
        state.draft.with(|p| {
            let gpu = gpu_row.name_in(p).unwrap_or_default();
            (gpu, (tp_access.get)(p).unwrap_or(1.0) as u32)
        })
    };
    let set_gpu = move |v: String| state.update(|p| gpu_row.set_name(p, &v));
    let set_tp = move |tp: u32| state.update(|p| (tp_access.set)(p, Some(f64::from(tp))));
    let message = {
        let (g, t) = (gpu_field.clone(), tp_field.clone());
        Memo::new(move |_| state.message_for(&g).or_else(|| state.message_for(&t)))
    };
    let gpu_id = format!("in-disagg-{name}-gpu");
    let tp_id = format!("in-disagg-{name}-tp");
    let err_id = format!("in-disagg-{name}-hw-error");
    let options = GPUS
        .iter()
        .map(|g| {
            let id = g.id;
            view! { <option value=id selected=move || current().0 == id>{g.name}</option> }
        })
        .collect_view();
    let tps = TP_DEGREES
        .iter()
        .map(|&t| {
            view! { <option value=t.to_string() selected=move || current().1 == t>{format!("TP {t}")}</option> }
        })
        .collect_view();
    view! {
        <div class="field" class:invalid=move || message.with(Option::is_some)>
            <label for=gpu_id.clone()>"GPU"</label>
            <select id=gpu_id data-testid=gpu_field aria-describedby=err_id.clone()
                on:change:target=move |ev| set_gpu(ev.target().value())>
                <option value="" selected=move || current().0.is_empty()>"Same as the plan"</option>
                {options}
            </select>
            <label for=tp_id.clone()>"Tensor parallel"</label>
            <select id=tp_id data-testid=tp_field aria-describedby=err_id.clone()
                on:change:target=move |ev| {
                    if let Ok(t) = ev.target().value().parse() { set_tp(t) }
                }>
                {tps}
            </select>
            <p class="error" id=err_id role="alert">{move || message.get()}</p>
        </div>
    }
}

/// The router select.
#[component]
fn RouterSelect() -> impl IntoView {
    view! {
        <Choice field=const { field("disagg.router") } />
    }
}

/// The side-by-side table.
fn table(rows: Vec<ComparisonRow>) -> impl IntoView {
    let body = rows
        .into_iter()
        .map(|r| {
            view! {
                <tr data-testid="disagg-row" data-label=r.label>
                    <th scope="row">{r.label}</th>
                    <td class="num" data-testid="disagg-aggregated">{r.aggregated}</td>
                    <td class="num" data-testid="disagg-disaggregated">{r.disaggregated}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="table-scroll">
            <table class="disagg-table" data-testid="disagg-table">
                <thead><tr>
                    <th scope="col"><span class="sr-only">"Figure"</span></th>
                    <th scope="col">"Aggregated"</th>
                    <th scope="col">"Disaggregated"</th>
                </tr></thead>
                <tbody>{body}</tbody>
            </table>
        </div>
    }
}

/// The result: verdict, table, notes.
fn result_view(r: &DisaggResult, fresh: bool) -> impl IntoView {
    let best = r.best.as_ref();
    let data = |x: Option<String>| x.unwrap_or_default();
    let notes = r
        .notes()
        .into_iter()
        .map(|n| view! { <p class="note" data-testid="disagg-note">{n}</p> })
        .collect_view();
    view! {
        <p class="verdict" data-testid="disagg-verdict"
            data-xpyd=data(best.map(|b| b.label()))
            data-gpus=data(best.map(|b| b.gpus_total.to_string()))
            data-month=data(best.map(|b| b.cost_per_month_usd.to_string()))
            data-aggregated-gpus=data(r.aggregated.capacity.as_ref().map(|c| c.gpus_total.to_string()))
            data-aggregated-month=data(r.aggregated.capacity.as_ref().map(|c| c.cost_per_month_usd.to_string()))>
            {r.verdict.clone()}
        </p>
        {(!fresh).then(|| view! {
            <p class="warning" role="status" data-testid="disagg-stale">
                "The plan has changed since these pools were sized: size them again for current numbers."
            </p>
        })}
        {table(r.comparison_rows())}
        {notes}
    }
}

/// The disaggregation panel.
#[component]
pub fn DisaggPanel() -> impl IntoView {
    let ctl = DisaggController::expect_context();
    let state = PlanState::expect_context();
    let running = Memo::new(move |_| ctl.status.with(|s| s.phase == DisaggPhase::Running));
    let status_text = move || {
        ctl.status.with(|s| match &s.phase {
            DisaggPhase::Idle => String::new(),
            DisaggPhase::Running => {
                format!("Simulating: {} of about {} simulations…", s.done, s.total)
            }
            DisaggPhase::Done => "Done.".into(),
            DisaggPhase::Cancelled(why) => format!("Cancelled: {why}."),
            DisaggPhase::Failed(m) => format!("The sizing failed: {m}"),
        })
    };
    let phase = move || {
        ctl.status.with(|s| match s.phase {
            DisaggPhase::Idle => "idle",
            DisaggPhase::Running => "running",
            DisaggPhase::Done => "done",
            DisaggPhase::Cancelled(_) => "cancelled",
            DisaggPhase::Failed(_) => "failed",
        })
    };
    // The bandwidth is the plan's own only while the link is given (the registry's rule).
    let bandwidth = field("disagg.kv_link.bandwidth_bytes_per_s");
    let given_link = move || state.draft.with(|p| bandwidth.holds(p));
    let result = move || {
        ctl.result
            .with(|r| r.as_ref().map(|(_, r)| result_view(r, ctl.is_fresh())))
    };
    let chart_data = Memo::new(move |_| {
        let slo = state.good.with(|p| p.slo.ttft_s);
        ctl.result
            .with(|r| r.as_ref().map(|(_, r)| disagg_chart(r, slo)))
            .unwrap_or_default()
    });
    view! {
        <section class="panel disagg-panel" aria-labelledby="disagg-title" data-testid="disagg-panel">
            <h2 id="disagg-title">"Split prefill and decode"</h2>
            <p class="panel-intro">
                "Sizes a prefill pool and a decode pool, each request's KV cache moved between them, simulated together instance by instance. The cheapest x prefill + y decode instances (xPyD) that meet the SLO at the peak get the same headroom and one spare per pool as the aggregated plan, and are set beside it. Aggregated often wins; the verdict says so when it does."
            </p>
            <div class="disagg-inputs no-print">
                <fieldset>
                    <legend>"Prefill pool"</legend>
                    <PoolHardware pool=Pool::Prefill />
                    <NumberField id="disagg.prefill.pp_degree" />
                    <NumberField id="disagg.prefill.ep_degree" />
                    <NumberField id="disagg.prefill.max_num_batched_tokens" />
                    <NumberField id="disagg.prefill.instances" />
                </fieldset>
                <fieldset>
                    <legend>"Decode pool"</legend>
                    <PoolHardware pool=Pool::Decode />
                    <NumberField id="disagg.decode.pp_degree" />
                    <NumberField id="disagg.decode.ep_degree" />
                    <NumberField id="disagg.decode.max_num_seqs" />
                    <NumberField id="disagg.decode.instances" />
                </fieldset>
                <fieldset>
                    <legend>"KV link and router"</legend>
                    <Choice field=const { field("disagg.kv_link.source") } />
                    <Show when=given_link>
                        <NumberField id="disagg.kv_link.bandwidth_bytes_per_s" />
                    </Show>
                    <NumberField id="disagg.kv_link.latency_s" />
                    <RouterSelect />
                </fieldset>
            </div>
            <div class="run-line no-print">
                <button type="button" class="primary" data-testid="disagg-run"
                    disabled=move || running.get() || state.run_blocked().is_some() title=move || state.run_blocked()
                    on:click=move |_| ctl.run()>
                    "Size the pools"
                </button>
                <button type="button" class="cancel" data-testid="disagg-cancel"
                    disabled=move || !running.get() on:click=move |_| ctl.cancel()>"Cancel"</button>
                <span data-testid="disagg-status" aria-live="polite" data-phase=phase>{status_text}</span>
            </div>
            <progress max="1" class="no-print" data-testid="disagg-progress" aria-label="Sizing progress"
                class:active=move || running.get()
                value=move || ctl.status.with(|s| if s.total == 0 { 0.0 } else { f64::from(s.done) / f64::from(s.total) }).to_string()
            ></progress>
            {result}
            <Show when=move || chart_data.with(|d| !d.bars.is_empty())>
                <ChartCanvas
                    testid="disagg-chart"
                    label="Where the first token's time goes in the chosen xPyD: the mean TTFT split into prefill queueing, prefill, KV transfer, the wait for a decode slot and the first decode step, with the prefill pool as M/D/1 below it and the TTFT objective as a red line"
                    height=170.0
                    draw=move |area, theme| {
                        chart_data.with(|d| draw_disagg(area, d, theme).unwrap_or_default())
                    }
                    readout=move |_, x, y| chart_data.with(|d| d.readout(x, y))
                />
            </Show>
        </section>
    }
}
