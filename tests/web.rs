//! Browser smoke test of the app: mount it in headless Chromium, let it render,
//! and check that it shows the number the core computes.
//!
//! Run with `cargo test --target wasm32-unknown-unknown -p goodput-app --test web`
//! (scripts/test.sh sets up chromedriver for it).
#![cfg(target_arch = "wasm32")]

use goodput_app::App;
use goodput_core::plan::fields::by_path;
use goodput_core::{roofline::step_time_s, Plan};
use leptos::{mount::mount_to, task::tick};
use wasm_bindgen::JsCast;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};
use web_sys::HtmlElement;

wasm_bindgen_test_configure!(run_in_browser);

/// A fresh `<div>` appended to the document body, to mount the app into.
fn mount_point() -> HtmlElement {
    let document = web_sys::window()
        .and_then(|w| w.document())
        .expect("a browser document");
    let div: HtmlElement = document
        .create_element("div")
        .expect("create a div")
        .unchecked_into();
    document
        .body()
        .expect("a body")
        .append_child(&div)
        .expect("append the div");
    div
}

/// Reads `data-value` of `[data-testid=<testid>]` under `root` as a number.
fn read_value(root: &HtmlElement, testid: &str) -> f64 {
    let selector = format!("[data-testid=\"{testid}\"]");
    let cell = root
        .query_selector(&selector)
        .expect("a valid selector")
        .unwrap_or_else(|| panic!("no element {selector}"));
    let raw = cell
        .get_attribute("data-value")
        .unwrap_or_else(|| panic!("{selector} has no data-value"));
    raw.parse()
        .unwrap_or_else(|_| panic!("{selector} data-value {raw:?} is not a number"))
}

#[wasm_bindgen_test]
async fn decode_step_shows_the_core_value() {
    let root = mount_point();
    let handle = mount_to(root.clone(), App);
    tick().await;
    show_deferred_parts().await;

    let shown = read_value(&root, "decode-step-s");
    let expected = step_time_s(&Plan::default(), 110.0, 110.0 * 940.0);
    assert_eq!(
        shown, expected,
        "page shows {shown}, core computes {expected}"
    );
    // The article's decode step on an H100: ≈ 8.8 ms of memory traffic plus 1 ms overhead.
    assert!(
        (shown - 9.8e-3).abs() < 0.1e-3,
        "decode step {shown} s is not ≈ 9.8 ms"
    );

    drop(handle);
    root.remove();
}

// ---- App components -------------------------------------------------------------

/// The element `[data-testid=<testid>]` under `root`.
fn by_testid(root: &HtmlElement, testid: &str) -> web_sys::Element {
    let selector = format!("[data-testid=\"{testid}\"]");
    root.query_selector(&selector)
        .expect("a valid selector")
        .unwrap_or_else(|| panic!("no element {selector}"))
}

/// Forgets what earlier tests left behind: the autosaved plan and the plan in the address.
fn fresh_start() {
    let window = web_sys::window().expect("window");
    if let Ok(Some(storage)) = window.local_storage() {
        let _ = storage.clear();
    }
    if let Ok(history) = window.history() {
        let path = window.location().pathname().unwrap_or_else(|_| "/".into());
        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&path));
    }
}

/// Builds the parts of the planner the page defers (the inputs below the model's, the
/// charts, the panels below the results and the print-only facts) at once, as printing
/// does: the page builds them by itself only when its first
/// run has ended, or when scrolled near, and keeps them once built.
async fn show_deferred_parts() {
    let print = web_sys::Event::new("beforeprint").expect("an event");
    let window = web_sys::window().expect("window");
    window.dispatch_event(&print).expect("dispatch");
    tick().await;
}

/// A bubbling event named `name`, as the browser fires for user input.
fn bubbling(name: &str) -> web_sys::Event {
    let init = web_sys::EventInit::new();
    init.set_bubbles(true);
    web_sys::Event::new_with_event_init_dict(name, &init).expect("an event")
}

/// Checks or clears the checkbox `[data-testid=<testid>]` as a click would (its
/// `change` fires).
fn set_checkbox(root: &HtmlElement, testid: &str, on: bool) {
    let input: web_sys::HtmlInputElement = by_testid(root, testid).unchecked_into();
    input.set_checked(on);
    input.dispatch_event(&bubbling("change")).expect("dispatch");
}

/// Picks `value` in the select `[data-testid=<testid>]`, as a user would.
fn pick(root: &HtmlElement, testid: &str, value: &str) {
    let select: web_sys::HtmlSelectElement = by_testid(root, testid).unchecked_into();
    select.set_value(value);
    assert_eq!(select.value(), value, "{testid} offers {value}");
    select
        .dispatch_event(&bubbling("change"))
        .expect("dispatch");
}

/// Types `text` into the input `[data-testid=<testid>]` and leaves the field, as a user
/// would (an `input` event, then `blur`: a number field applies its text on leaving it).
fn type_into(root: &HtmlElement, testid: &str, text: &str) {
    let input: web_sys::HtmlInputElement = by_testid(root, testid).unchecked_into();
    input.set_value(text);
    input.dispatch_event(&bubbling("input")).expect("dispatch");
    let blur = web_sys::Event::new("blur").expect("an event");
    input.dispatch_event(&blur).expect("dispatch");
}

#[wasm_bindgen_test]
async fn an_invalid_value_shows_its_message_and_dims_the_results_until_fixed() {
    fresh_start();
    let root = mount_point();
    let handle = mount_to(root.clone(), App);
    tick().await;
    show_deferred_parts().await;
    let field = "input-hardware.mem_bandwidth_bytes_per_s";
    let error = "error-hardware.mem_bandwidth_bytes_per_s";
    let results = "results";
    assert_eq!(
        by_testid(&root, results)
            .get_attribute("data-stale")
            .as_deref(),
        Some("false")
    );
    let step_before = read_value(&root, "decode-step-s");

    type_into(&root, field, "fast");
    tick().await;
    let message = by_testid(&root, error).text_content().unwrap_or_default();
    assert!(message.contains("must be a number"), "message {message:?}");
    assert_eq!(
        by_testid(&root, results)
            .get_attribute("data-stale")
            .as_deref(),
        Some("true")
    );
    // The last valid plan still drives the results.
    assert_eq!(read_value(&root, "decode-step-s"), step_before);

    // A value out of range is a validation error of the core, not a parse error.
    type_into(&root, field, "-1");
    tick().await;
    assert_eq!(
        by_testid(&root, results)
            .get_attribute("data-stale")
            .as_deref(),
        Some("true")
    );
    assert!(!by_testid(&root, error)
        .text_content()
        .unwrap_or_default()
        .is_empty());

    type_into(&root, field, "6.7");
    tick().await;
    assert_eq!(
        by_testid(&root, results)
            .get_attribute("data-stale")
            .as_deref(),
        Some("false")
    );
    assert_eq!(
        by_testid(&root, error).text_content().unwrap_or_default(),
        ""
    );
    // Twice the bandwidth: the memory-bound decode step gets faster.
    let step_after = read_value(&root, "decode-step-s");
    assert!(step_after < step_before, "{step_after} !< {step_before}");

    drop(handle);
    root.remove();
}

#[wasm_bindgen_test]
async fn a_gpu_preset_fills_the_hardware_fields() {
    fresh_start();
    let root = mount_point();
    let handle = mount_to(root.clone(), App);
    tick().await;
    show_deferred_parts().await;
    let select: web_sys::HtmlSelectElement = by_testid(&root, "preset-gpu").unchecked_into();
    select.set_value("h200");
    select
        .dispatch_event(&bubbling("change"))
        .expect("dispatch");
    // The change handler, the plan memo and the input's render effect each take a turn.
    for _ in 0..3 {
        tick().await;
    }
    let bandwidth: web_sys::HtmlInputElement =
        by_testid(&root, "input-hardware.mem_bandwidth_bytes_per_s").unchecked_into();
    assert_eq!(bandwidth.value(), "4.8");
    let memory: web_sys::HtmlInputElement =
        by_testid(&root, "input-hardware.memory_bytes").unchecked_into();
    // The preset's memory, as the core has it, in the field's units.
    let h200 = goodput_core::presets::gpu("h200").expect("an H200 preset");
    let shown = goodput_app::state::fields::field("hardware.memory_bytes").expect("a field");
    assert_eq!(memory.value(), shown.kind.format(Some(h200.memory_bytes)));
    // The fields stay editable after a preset.
    type_into(&root, "input-hardware.mem_bandwidth_bytes_per_s", "5");
    tick().await;
    assert_eq!(bandwidth.value(), "5");
    assert_eq!(select.value(), "custom");

    drop(handle);
    root.remove();
}

#[wasm_bindgen_test]
async fn chart_canvases_are_sized_for_the_device_pixel_ratio() {
    fresh_start();
    let root = mount_point();
    root.set_attribute("style", "width:1200px").expect("style");
    let handle = mount_to(root.clone(), App);
    tick().await;
    show_deferred_parts().await;
    tick().await;
    let canvas: web_sys::HtmlCanvasElement = by_testid(&root, "chart-roofline").unchecked_into();
    let dpr = web_sys::window().expect("window").device_pixel_ratio();
    assert!(canvas.client_width() > 0);
    assert_eq!(
        canvas.width(),
        (canvas.client_width() as f64 * dpr).round() as u32
    );
    assert_eq!(canvas.height(), (280.0 * dpr).round() as u32);

    drop(handle);
    root.remove();
}

// ---- Share links in the address ----------------------------------------------------

/// Puts `fragment` (with its `#`) into the address without a reload, as opening a link does.
fn open_fragment(fragment: &str) {
    let window = web_sys::window().expect("window");
    let path = window.location().pathname().unwrap_or_else(|_| "/".into());
    let history = window.history().expect("history");
    history
        .replace_state_with_url(
            &wasm_bindgen::JsValue::NULL,
            "",
            Some(&format!("{path}{fragment}")),
        )
        .expect("replaceState");
}

#[wasm_bindgen_test]
async fn a_share_link_opens_its_plan_in_the_finance_view_as_text() {
    fresh_start();
    let name = "<b id=\"injected\">fp8</b> pilot";
    let mut plan = Plan {
        name: name.into(),
        ..Plan::default()
    };
    plan.traffic.peak_rate_rps = 12.5;
    open_fragment(&goodput_core::share::share_url("", &plan, false));
    let root = mount_point();
    let handle = mount_to(root.clone(), App);
    tick().await;

    by_testid(&root, "finance-view");
    assert_eq!(
        by_testid(&root, "plan-title").text_content().as_deref(),
        Some(name)
    );
    assert!(root
        .query_selector("#injected")
        .expect("selector")
        .is_none());
    by_testid(&root, "shared-banner");
    let assumptions = by_testid(&root, "assumptions")
        .text_content()
        .unwrap_or_default();
    assert!(assumptions.contains("Peak rate12.5 req/s"), "{assumptions}");

    drop(handle);
    root.remove();
    fresh_start();
}

#[wasm_bindgen_test]
async fn a_broken_link_shows_its_message_over_the_defaults() {
    fresh_start();
    open_fragment("#p=1dAAAA");
    let root = mount_point();
    let handle = mount_to(root.clone(), App);
    tick().await;
    show_deferred_parts().await;

    let banner = by_testid(&root, "link-error")
        .text_content()
        .unwrap_or_default();
    let expected = goodput_core::share::decode("#p=1dAAAA")
        .expect_err("a broken link")
        .to_string();
    assert!(banner.contains(&expected), "{banner}");
    let step = read_value(&root, "decode-step-s");
    assert_eq!(step, step_time_s(&Plan::default(), 110.0, 110.0 * 940.0));
    assert!(
        web_sys::window()
            .and_then(|w| w.location().hash().ok())
            .is_some_and(|h| h == "#p=1dAAAA"),
        "the broken link stays in the address until the user acts"
    );

    drop(handle);
    root.remove();
    fresh_start();
}

/// Types `text` into the textarea `[data-testid=<testid>]` as a user would.
fn type_into_area(root: &HtmlElement, testid: &str, text: &str) {
    let area: web_sys::HtmlTextAreaElement = by_testid(root, testid).unchecked_into();
    area.set_value(text);
    area.dispatch_event(&bubbling("input")).expect("dispatch");
}

#[wasm_bindgen_test]
async fn the_calibration_panel_imports_a_pasted_result_and_reports_a_bad_one() {
    fresh_start();
    let root = mount_point();
    let handle = mount_to(root.clone(), App);
    tick().await;
    show_deferred_parts().await;
    let run_disabled = || by_testid(&root, "calibrate-run").has_attribute("disabled");
    assert!(run_disabled(), "nothing to fit before an import");
    let import: HtmlElement = by_testid(&root, "calibrate-import").unchecked_into();

    type_into_area(
        &root,
        "calibrate-paste",
        "{\"request_rate\": 2, \"completed\": \"many\"}",
    );
    tick().await;
    import.click();
    tick().await;
    let message = by_testid(&root, "calibrate-error")
        .text_content()
        .unwrap_or_default();
    assert!(message.starts_with("pasted text: "), "message {message:?}");
    assert!(run_disabled());

    let good = r#"{"backend":"vllm","model_id":"m","request_rate":2.0,"burstiness":1.0,
        "duration":50.0,"completed":100,"failed":0,"total_input_tokens":100000,
        "total_output_tokens":20000,"request_throughput":2.0,"mean_ttft_ms":80.0,
        "median_ttft_ms":75.0,"mean_tpot_ms":12.0,"median_tpot_ms":12.0,
        "mean_e2el_ms":2500.0,"median_e2el_ms":2400.0}"#;
    type_into_area(&root, "calibrate-paste", good);
    tick().await;
    import.click();
    tick().await;
    assert_eq!(read_value(&root, "calibrate-found"), 1.0);
    assert!(
        root.query_selector("[data-testid=\"calibrate-error\"]")
            .expect("a valid selector")
            .is_none(),
        "the message goes once a good file is read"
    );
    assert!(!run_disabled(), "ready to fit");

    drop(handle);
    root.remove();
}

/// Every input of a plan field is wired as one frame: its label names the input, and
/// the input is described by its own help and error lines, which sit in the same field,
/// the error carrying the input's plan path.
#[wasm_bindgen_test]
async fn every_plan_field_ties_its_label_help_and_error_to_its_input() {
    fresh_start();
    let root = mount_point();
    let handle = mount_to(root.clone(), App);
    tick().await;
    show_deferred_parts().await;
    let fields = root.query_selector_all(".field").expect("a valid selector");
    let mut framed = 0;
    for i in 0..fields.length() {
        let field: web_sys::Element = fields.item(i).expect("a field").unchecked_into();
        let Some(input) = field
            // Choices have no error line; the next test checks them.
            .query_selector(
                "input[data-testid^='input-']:not([data-field]), textarea[data-testid^='input-']",
            )
            .expect("a valid selector")
        else {
            continue;
        };
        let id = input.id();
        let label = field
            .query_selector("label")
            .expect("a valid selector")
            .unwrap_or_else(|| panic!("no label for {id}"));
        assert_eq!(label.get_attribute("for").as_deref(), Some(id.as_str()));
        let described = input.get_attribute("aria-describedby").unwrap_or_default();
        let parts: Vec<&str> = described.split(' ').collect();
        assert_eq!(parts, [format!("{id}-help"), format!("{id}-error")], "{id}");
        for part in parts {
            let found = field
                .query_selector(&format!("#{part}"))
                .expect("a valid selector");
            assert!(found.is_some(), "{id}: no #{part} in its field");
        }
        let path = input
            .get_attribute("data-testid")
            .and_then(|t| t.strip_prefix("input-").map(str::to_owned))
            .unwrap_or_else(|| panic!("{id}: no input test id"));
        let error = field
            .query_selector(&format!("#{id}-error"))
            .expect("a valid selector")
            .expect("an error line");
        assert_eq!(
            error.get_attribute("data-testid"),
            Some(format!("error-{path}")),
            "{id}"
        );
        framed += 1;
    }
    assert!(framed >= 20, "only {framed} framed fields");
    drop(handle);
    root.remove();
}

/// Every choice the page offers (a `<select>`, the chunked-prefill switch) is named,
/// explained and worded as the core's field registry has it: the label and help of its
/// field, and each option's name with its words.
#[wasm_bindgen_test]
async fn every_choice_reads_as_the_field_registry_words_it() {
    fresh_start();
    let root = mount_point();
    let handle = mount_to(root.clone(), App);
    tick().await;
    show_deferred_parts().await;
    // The router is offered once replicas are routed.
    set_checkbox(&root, "input-routing", true);
    tick().await;
    let controls = root
        .query_selector_all("[data-field]")
        .expect("a valid selector");
    let mut seen = Vec::new();
    for i in 0..controls.length() {
        let control: web_sys::Element = controls.item(i).expect("a control").unchecked_into();
        let path = control.get_attribute("data-field").unwrap_or_default();
        let f = by_path(&path).unwrap_or_else(|| panic!("{path}: not in the registry"));
        let frame = control
            .closest(".field")
            .expect("a valid selector")
            .expect("a field");
        let text = |sel: &str| {
            frame
                .query_selector(sel)
                .expect("a valid selector")
                .and_then(|e| e.text_content())
                .unwrap_or_else(|| panic!("{path}: no {sel}"))
        };
        assert_eq!(text("label"), f.label, "{path}");
        assert_eq!(text(".help"), f.help, "{path}");
        // Its ids come from its path, with no dot that a CSS selector would misread;
        // its label names it and its help line describes it.
        let id = control.id();
        assert_eq!(id, format!("in-{}", path.replace('.', "-")), "{path}");
        assert_eq!(
            control.get_attribute("data-testid"),
            Some(format!("input-{path}")),
            "{path}"
        );
        let attr = |sel: &str, name: &str| {
            frame
                .query_selector(sel)
                .expect("a valid selector")
                .and_then(|e| e.get_attribute(name))
        };
        assert_eq!(attr("label", "for"), Some(id.clone()), "{path}");
        let help_id = attr(".help", "id").unwrap_or_else(|| panic!("{path}: help has no id"));
        assert_eq!(
            control.get_attribute("aria-describedby"),
            Some(help_id),
            "{path}"
        );
        if control.tag_name() == "SELECT" {
            let options = control
                .query_selector_all("option")
                .expect("a valid selector");
            assert!(options.length() > 0, "{path}: no options");
            for j in 0..options.length() {
                let o: web_sys::HtmlOptionElement =
                    options.item(j).expect("an option").unchecked_into();
                let words = f.choices().iter().find(|(name, _)| *name == o.value());
                assert_eq!(
                    words.map(|w| w.1),
                    Some(o.text().as_str()),
                    "{path}: option {}",
                    o.value()
                );
            }
        }
        seen.push(path);
    }
    seen.sort();
    assert_eq!(
        seen,
        [
            "disagg.kv_link.source",
            "disagg.router",
            "engine.chunked_prefill",
            "engine.kv_policy",
            "model.kv_dtype",
            "model.weight_dtype",
            "routing.router",
            "slo.mode",
            "traffic.arrival",
            "traffic.sharing",
            "traffic.sharing.order",
            "traffic.sharing.replies_cached",
        ]
    );
    drop(handle);
    root.remove();
}

/// No two elements of the page share an id: a label or an `aria-describedby` would find
/// the wrong one. (The page as the default plan shows it: inputs that appear for other
/// plans only, such as a closed loop's clients, are not on it.)
#[wasm_bindgen_test]
async fn every_id_on_the_page_is_its_own() {
    fresh_start();
    let root = mount_point();
    let handle = mount_to(root.clone(), App);
    tick().await;
    show_deferred_parts().await;
    let all = root.query_selector_all("[id]").expect("a valid selector");
    let mut ids: Vec<String> = (0..all.length())
        .map(|i| {
            let e: web_sys::Element = all.item(i).expect("an element").unchecked_into();
            e.id()
        })
        .collect();
    assert!(ids.len() > 40, "only {} ids", ids.len());
    ids.sort();
    let repeated: Vec<&String> = ids
        .windows(2)
        .filter(|w| w[0] == w[1])
        .map(|w| &w[0])
        .collect();
    assert!(repeated.is_empty(), "ids used more than once: {repeated:?}");
    drop(handle);
    root.remove();
}

// ---- Calibration: applying a fit, the benchmark's traffic, the file selection -------

use goodput_app::{page, AppContext};
use goodput_core::calibrate::{CalibrationReport, FitVerdict, PointFit, Prediction};
use goodput_core::plan::{
    Arrival, Calibration, CalibrationError, Fitted, LengthDist, MeasuredLoad, MeasuredSummary,
    MetricErrors,
};
use goodput_core::sim::Summary;
use leptos::prelude::{GetUntracked, Set};
use std::cell::Cell;
use std::rc::Rc;

/// Mounts the page and hands back its shared state, as a user's page would start with
/// nothing saved and no link.
async fn mount_page(
    root: &HtmlElement,
) -> (
    leptos::mount::UnmountHandle<impl leptos::tachys::view::Mountable>,
    AppContext,
) {
    fresh_start();
    let slot: Rc<Cell<Option<AppContext>>> = Rc::new(Cell::new(None));
    let put = slot.clone();
    let handle = mount_to(root.clone(), move || {
        let cx = AppContext::provide(goodput_app::session::boot());
        put.set(Some(cx));
        page(cx)
    });
    tick().await;
    show_deferred_parts().await;
    (handle, slot.get().expect("the page provided its state"))
}

/// Waits (up to about two seconds) until `ready` holds, letting the browser run its
/// tasks (file reads) in between.
async fn wait_until(what: &str, ready: impl Fn() -> bool) {
    for _ in 0..100 {
        if ready() {
            return;
        }
        let pause = js_sys::Promise::new(&mut |resolve, _| {
            web_sys::window()
                .expect("window")
                .set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 20)
                .expect("setTimeout");
        });
        wasm_bindgen_futures::JsFuture::from(pause)
            .await
            .expect("a pause");
        tick().await;
    }
    panic!("gave up waiting: {what}");
}

fn errors_of(e: f64) -> MetricErrors {
    MetricErrors {
        ttft: Some(e),
        tpot: Some(e),
        e2e: Some(e),
        overall: e,
    }
}

fn flat(x: f64) -> Summary {
    Summary {
        mean: x,
        p50: x,
        p90: x,
        p95: x,
        p99: x,
    }
}

/// A finished calibration of the default plan, as the fit's workers would hand it back:
/// held-out error `held` (the datasheet's 40%), and a benchmark of longer prompts run by
/// 16 clients.
fn fitted_report(held: f64) -> CalibrationReport {
    let measured: Vec<MeasuredSummary> = [1.0, 3.0]
        .iter()
        .map(|&rate| MeasuredSummary {
            load: MeasuredLoad::Rate {
                rate_rps: rate,
                cv: 1.0,
            },
            achieved_rps: rate,
            ttft_mean_s: Some(0.1),
            ttft_p50_s: None,
            ttft_p99_s: Some(0.3),
            tpot_mean_s: Some(0.012),
            tpot_p50_s: None,
            tpot_p99_s: None,
            e2e_mean_s: None,
            e2e_p50_s: None,
            e2e_p99_s: None,
        })
        .collect();
    let error = CalibrationError {
        in_sample: errors_of(held / 2.0),
        held_out: Some(errors_of(held)),
        extrapolation: Some(errors_of(held * 1.2)),
        uncalibrated: errors_of(0.4),
    };
    let calibration = Calibration {
        bandwidth_efficiency: Fitted {
            value: 0.8,
            sd: 0.02,
        },
        frontend_s: Some(Fitted {
            value: 0.03,
            sd: 0.004,
        }),
        prefill_overhead_s: Some(Fitted {
            value: 0.002,
            sd: 0.001,
        }),
        kv_read_efficiency: Some(Fitted {
            value: 0.7,
            sd: 0.1,
        }),
        error,
        points: measured.clone(),
        ..Calibration::default()
    };
    let plan = Plan {
        calibration: Some(calibration.clone()),
        ..Plan::default()
    };
    let mut workload = plan.traffic.clone();
    workload.prompt.dist = LengthDist::LogNormal {
        median: 3000.0,
        sigma: 0.4,
    };
    workload.arrival = Arrival::Closed {
        concurrency: 16,
        think_s: 0.0,
    };
    let p = Prediction {
        ttft_s: flat(0.1),
        tpot_s: flat(0.012),
        e2e_s: flat(2.5),
        achieved_rps: 1.0,
    };
    let points = measured
        .into_iter()
        .map(|m| PointFit {
            source: "bench.json".into(),
            measured: m,
            predicted: p,
            held_out: Some(p),
            extrapolated: None,
            datasheet: p,
            errors: [Some(0.1), Some(0.1), None],
            held_out_errors: None,
        })
        .collect();
    let mut tail_error = error;
    tail_error.held_out = Some(errors_of(0.55));
    CalibrationReport {
        verdict: FitVerdict::of(&calibration),
        calibration,
        plan,
        workload,
        tail_error,
        points,
        evaluations: 1,
        warnings: Vec::new(),
    }
}

fn attr(root: &HtmlElement, testid: &str, name: &str) -> Option<String> {
    by_testid(root, testid).get_attribute(name)
}

fn text(root: &HtmlElement, testid: &str) -> String {
    by_testid(root, testid).text_content().unwrap_or_default()
}

fn click(root: &HtmlElement, testid: &str) {
    let b: HtmlElement = by_testid(root, testid).unchecked_into();
    b.click();
}

fn input_value(root: &HtmlElement, testid: &str) -> String {
    let i: web_sys::HtmlInputElement = by_testid(root, testid).unchecked_into();
    i.value()
}

#[wasm_bindgen_test]
async fn a_fit_keeps_the_traffic_and_the_benchmark_traffic_is_a_step_undo_takes_back() {
    let root = mount_point();
    let (handle, cx) = mount_page(&root).await;
    let forecast = cx.state.good.get_untracked();
    let report = fitted_report(0.08);
    assert_eq!(report.verdict, FitVerdict::Good);
    cx.fits.take(report.clone());
    tick().await;
    tick().await;

    let plan = cx.state.good.get_untracked();
    assert_eq!(
        plan.calibration,
        Some(report.calibration.clone()),
        "applied"
    );
    assert_eq!(plan.traffic, forecast.traffic, "the fit leaves the traffic");
    assert_eq!(
        attr(&root, "calibration-result", "data-held").as_deref(),
        Some("false")
    );
    assert!(text(&root, "calibrate-status").contains("its traffic is unchanged"));
    // Every fitted constant is listed, the newer ones under their fields' labels.
    let constants = text(&root, "calibrate-constants");
    for label in [
        "Bandwidth share",
        "Frontend time",
        "KV read efficiency",
        "Overhead of a prefill step",
    ] {
        assert!(constants.contains(label), "{label} in {constants:?}");
    }
    // The errors of the means, per metric, and the tails' apart.
    let means = by_testid(&root, "calibrate-errors");
    let cell = |table: &web_sys::Element, row: &str, metric: &str| {
        table
            .query_selector(&format!(
                "tr[data-row=\"{row}\"] td[data-metric=\"{metric}\"]"
            ))
            .expect("a valid selector")
            .and_then(|c| c.get_attribute("data-value"))
            .unwrap_or_default()
    };
    assert_eq!(cell(&means, "datasheet", "ttft"), "0.4");
    assert_eq!(cell(&means, "held_out", "tpot"), "0.08");
    assert_eq!(
        cell(&means, "extrapolation", "e2e"),
        (0.08f64 * 1.2).to_string()
    );
    assert!(means
        .text_content()
        .unwrap_or_default()
        .contains("Errors of the means"));
    let tails = by_testid(&root, "calibrate-tail-errors");
    assert_eq!(cell(&tails, "held_out", "ttft"), "0.55");
    assert!(tails.text_content().unwrap_or_default().contains("noisy"));

    // The benchmark's traffic, on request, at the plan's peak; Undo puts the forecast back.
    let median = "input-traffic.prompt.dist.median";
    assert_eq!(input_value(&root, median), "800");
    click(&root, "calibrate-use-traffic");
    tick().await;
    tick().await;
    let plan = cx.state.good.get_untracked();
    assert_eq!(plan.traffic.prompt, report.workload.prompt);
    assert_eq!(plan.traffic.arrival, report.workload.arrival);
    assert_eq!(plan.traffic.peak_rate_rps, forecast.traffic.peak_rate_rps);
    assert_eq!(
        plan.calibration,
        Some(report.calibration.clone()),
        "the fit stays"
    );
    assert_eq!(input_value(&root, median), "3000");
    assert!(by_testid(&root, "calibrate-use-traffic").has_attribute("disabled"));
    click(&root, "undo");
    tick().await;
    tick().await;
    let plan = cx.state.good.get_untracked();
    assert_eq!(plan.traffic, forecast.traffic, "Undo restores the forecast");
    assert_eq!(
        plan.calibration,
        Some(report.calibration),
        "and keeps the fit"
    );
    assert_eq!(input_value(&root, median), "800");

    drop(handle);
    root.remove();
    fresh_start();
}

#[wasm_bindgen_test]
async fn runs_that_drafted_are_said_and_planning_with_their_speculation_is_a_step() {
    let root = mount_point();
    let (handle, cx) = mount_page(&root).await;
    let before = cx.state.good.get_untracked();
    assert_eq!(before.engine.spec_draft_tokens, 0);
    let mut report = fitted_report(0.08);
    // 3 tokens a draft, 1.875 gained a step: 0.5 a token, in order.
    report.calibration.source.spec = Some(goodput_core::plan::SpecMeasured {
        drafts: 8_000,
        draft_tokens: 24_000,
        accepted_tokens: 7_000,
    });
    report.plan.calibration = Some(report.calibration.clone());
    cx.fits.take(report.clone());
    tick().await;
    tick().await;
    let plan = cx.state.good.get_untracked();
    assert_eq!(plan.engine, before.engine, "the fit leaves the speculation");
    let words = text(&root, "calibrate-spec");
    assert!(words.contains("3 draft tokens a step"), "{words}");
    assert!(words.contains("The plan does not draft"), "{words}");
    assert!(
        words.contains("--spec-draft-tokens 3 --spec-acceptance 0.5"),
        "{words}"
    );

    click(&root, "calibrate-use-spec");
    tick().await;
    tick().await;
    let plan = cx.state.good.get_untracked();
    assert_eq!(
        (plan.engine.spec_draft_tokens, plan.engine.spec_acceptance),
        (3, 0.5)
    );
    assert_eq!(
        plan.calibration,
        Some(report.calibration.clone()),
        "the fit stays"
    );
    let words = text(&root, "calibrate-spec");
    assert!(words.contains("the plan drafts as they did"), "{words}");
    assert!(root
        .query_selector("[data-testid=\"calibrate-use-spec\"]")
        .expect("a valid selector")
        .is_none());

    click(&root, "undo");
    tick().await;
    tick().await;
    assert_eq!(
        cx.state.good.get_untracked().engine,
        before.engine,
        "Undo takes it back"
    );

    drop(handle);
    root.remove();
    fresh_start();
}

#[wasm_bindgen_test]
async fn a_poor_fit_is_shown_but_applied_only_by_apply_anyway() {
    let root = mount_point();
    let (handle, cx) = mount_page(&root).await;
    let before = cx.state.good.get_untracked();
    let report = fitted_report(0.3);
    assert_eq!(FitVerdict::of(&report.calibration), FitVerdict::Poor);
    cx.fits.take(report.clone());
    tick().await;
    tick().await;

    assert_eq!(cx.state.good.get_untracked(), before, "not applied");
    assert_eq!(
        attr(&root, "calibration-result", "data-held").as_deref(),
        Some("true")
    );
    assert_eq!(
        attr(&root, "calibrate-verdict", "data-verdict").as_deref(),
        Some("poor")
    );
    assert!(text(&root, "calibrate-in-force").starts_with("Not applied"));
    assert!(text(&root, "calibrate-status").contains("not applied"));
    assert!(
        root.query_selector("[data-testid=\"calibrate-toggle\"]")
            .expect("a valid selector")
            .is_none(),
        "no switch for a fit not in the plan"
    );

    click(&root, "calibrate-apply-anyway");
    tick().await;
    tick().await;
    let plan = cx.state.good.get_untracked();
    let applied = plan.calibration.expect("applied anyway");
    assert!(applied.enabled);
    assert_eq!(applied.points, report.calibration.points);
    assert_eq!(plan.traffic, before.traffic);
    assert_eq!(
        attr(&root, "calibration-result", "data-held").as_deref(),
        Some("false")
    );
    assert!(root
        .query_selector("[data-testid=\"calibrate-apply-anyway\"]")
        .expect("a valid selector")
        .is_none());

    drop(handle);
    root.remove();
    fresh_start();
}

/// A `vllm bench serve` result at `rate` req/s.
fn vllm_json(rate: f64) -> String {
    format!(
        r#"{{"backend":"vllm","model_id":"m","request_rate":{rate},"burstiness":1.0,
        "duration":50.0,"completed":100,"failed":0,"total_input_tokens":100000,
        "total_output_tokens":20000,"request_throughput":{rate},"mean_ttft_ms":80.0,
        "median_ttft_ms":75.0,"mean_tpot_ms":12.0,"median_tpot_ms":12.0,
        "mean_e2el_ms":2500.0,"median_e2el_ms":2400.0}}"#
    )
}

/// Puts the files `(name, text)` into the file input `[data-testid=<testid>]` as a
/// picker does, and fires its `change`.
fn choose_files(root: &HtmlElement, testid: &str, files: &[(&str, String)]) {
    let dt = web_sys::DataTransfer::new().expect("a DataTransfer");
    for (name, body) in files {
        let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(body));
        let file = web_sys::File::new_with_str_sequence(&parts, name).expect("a file");
        dt.items().add_with_file(&file).expect("added");
    }
    let input: web_sys::HtmlInputElement = by_testid(root, testid).unchecked_into();
    input.set_files(dt.files().as_ref());
    input.dispatch_event(&bubbling("change")).expect("dispatch");
}

fn chosen_names(root: &HtmlElement) -> Vec<String> {
    let items = root
        .query_selector_all("[data-testid=\"calibrate-chosen\"]")
        .expect("a valid selector");
    (0..items.length())
        .filter_map(|i| items.item(i))
        .map(|n| {
            let e: web_sys::Element = n.unchecked_into();
            e.get_attribute("data-name").unwrap_or_default()
        })
        .collect()
}

#[wasm_bindgen_test]
async fn choosing_files_replaces_add_files_adds_each_file_once_and_clear_empties() {
    let root = mount_point();
    let (handle, _cx) = mount_page(&root).await;
    let found = |root: &HtmlElement| {
        root.query_selector("[data-testid=\"calibrate-found\"]")
            .expect("a valid selector")
            .and_then(|e| e.get_attribute("data-value"))
    };
    let (a, b, c) = (
        ("rate-1.json", vllm_json(1.0)),
        ("rate-2.json", vllm_json(2.0)),
        ("rate-4.json", vllm_json(4.0)),
    );

    choose_files(&root, "calibrate-files", &[a.clone(), b.clone()]);
    wait_until("two files chosen", || chosen_names(&root).len() == 2).await;
    assert_eq!(found(&root).as_deref(), Some("2"));

    // Added: the new one joins, the one chosen already does not come twice.
    choose_files(&root, "calibrate-add-files", &[b.clone(), c.clone()]);
    wait_until("a third file added", || chosen_names(&root).len() == 3).await;
    assert_eq!(
        chosen_names(&root),
        ["rate-1.json", "rate-2.json", "rate-4.json"]
    );
    assert_eq!(found(&root).as_deref(), Some("3"));

    // Chosen again: the new choice takes the selection's place.
    choose_files(&root, "calibrate-files", std::slice::from_ref(&c));
    wait_until("the choice replaced", || chosen_names(&root).len() == 1).await;
    assert_eq!(chosen_names(&root), ["rate-4.json"]);
    assert_eq!(found(&root).as_deref(), Some("1"));

    click(&root, "calibrate-clear");
    tick().await;
    assert!(chosen_names(&root).is_empty());
    assert_eq!(found(&root), None, "nothing imported");
    assert!(by_testid(&root, "calibrate-run").has_attribute("disabled"));

    drop(handle);
    root.remove();
    fresh_start();
}

#[wasm_bindgen_test]
async fn the_new_inputs_write_their_plan_fields() {
    let root = mount_point();
    let (handle, cx) = mount_page(&root).await;
    let good = || cx.state.good.get_untracked();
    for (id, typed) in [
        ("hardware.seq_overhead_s", "25"),
        ("hardware.prefill_overhead_s", "4"),
        ("hardware.kv_read_efficiency", "0.6"),
        ("engine.frontend_s", "35"),
        ("engine.kv_cache_tokens", "300000"),
    ] {
        type_into(&root, &format!("input-{id}"), typed);
    }
    tick().await;
    let p = good();
    assert!(
        (p.hardware.seq_overhead_s - 25e-6).abs() < 1e-12,
        "{}",
        p.hardware.seq_overhead_s
    );
    assert!((p.hardware.prefill_overhead_s - 4e-3).abs() < 1e-12);
    assert_eq!(p.hardware.kv_read_efficiency, 0.6);
    assert!((p.engine.frontend_s - 0.035).abs() < 1e-12);
    assert_eq!(p.engine.kv_cache_tokens, Some(300_000));
    // Blank is the estimate from memory again.
    type_into(&root, "input-engine.kv_cache_tokens", "");
    tick().await;
    assert_eq!(good().engine.kv_cache_tokens, None);

    // The prefix structure: off at first; any edit turns it on.
    let switch: web_sys::HtmlInputElement =
        by_testid(&root, "input-traffic.sharing").unchecked_into();
    assert!(!switch.checked());
    assert_eq!(good().traffic.sharing, None);
    for (id, typed) in [
        ("traffic.sharing.groups", "8"),
        ("traffic.sharing.group_tokens", "1024"),
        ("traffic.sharing.zipf", "1.1"),
        ("traffic.sharing.block_tokens", "32"),
        ("traffic.sharing.sessions", "20"),
        ("traffic.sharing.turns", "3"),
        ("traffic.sharing.document_tokens", "500"),
    ] {
        type_into(&root, &format!("input-{id}"), typed);
    }
    tick().await;
    let s = good().traffic.sharing.expect("turned on");
    assert_eq!(
        (
            s.groups,
            s.group_tokens,
            s.zipf,
            s.block_tokens,
            s.sessions,
            s.turns,
            s.document_tokens
        ),
        (8, 1024, 1.1, 32, 20, 3, 500)
    );
    assert!(switch.checked());
    let order: web_sys::HtmlSelectElement =
        by_testid(&root, "input-traffic.sharing.order").unchecked_into();
    order.set_value("random");
    order.dispatch_event(&bubbling("change")).expect("dispatch");
    let replies: web_sys::HtmlInputElement =
        by_testid(&root, "input-traffic.sharing.replies_cached").unchecked_into();
    assert!(replies.checked());
    replies.set_checked(false);
    replies
        .dispatch_event(&bubbling("change"))
        .expect("dispatch");
    tick().await;
    let s = good().traffic.sharing.expect("on");
    assert_eq!(s.order, goodput_core::plan::TurnOrder::Random);
    assert!(!s.replies_cached);
    assert_eq!(s.groups, 8, "the numbers stay");

    // The switch turns it off again; a choice alone turns it on from the empty one.
    switch.set_checked(false);
    switch
        .dispatch_event(&bubbling("change"))
        .expect("dispatch");
    tick().await;
    assert_eq!(good().traffic.sharing, None);
    order.set_value("interleaved");
    order.dispatch_event(&bubbling("change")).expect("dispatch");
    tick().await;
    assert_eq!(
        good().traffic.sharing,
        Some(goodput_core::plan::PrefixModel::NONE)
    );

    drop(handle);
    root.remove();
    fresh_start();
}

// ---- Routing over replicas, the prefix cache over the run, the finance view ---------

use goodput_core::plan::{FleetRouter, PrefixModel, RoutingSpec};
use goodput_core::report::{report_for, routing_words, PlanReport};
use goodput_core::search::{GoodputResult, Knobs, SearchStatus};

#[wasm_bindgen_test]
async fn the_routing_switch_and_router_write_the_plan_and_undo_takes_them_back() {
    let root = mount_point();
    let (handle, cx) = mount_page(&root).await;
    let draft = || cx.state.draft.get_untracked();
    let absent = |testid: &str| {
        root.query_selector(&format!("[data-testid=\"{testid}\"]"))
            .expect("a valid selector")
            .is_none()
    };
    // Off: one replica, in the report's words; no replicas or router to set.
    assert_eq!(draft().routing, None);
    assert_eq!(
        text(&root, "routing-help"),
        "One replica is simulated; how a router spreads requests (and their cached prefixes) over replicas is not."
    );
    assert!(absent("input-routing.replicas") && absent("input-routing.router"));

    set_checkbox(&root, "input-routing", true);
    settle().await;
    assert_eq!(draft().routing, Some(RoutingSpec::default()));
    assert_eq!(input_value(&root, "input-routing.replicas"), "2");
    let help = text(&root, "routing-help");
    let words = routing_words(&draft());
    assert_eq!(
        Some(help.as_str()),
        words
            .strip_prefix("Routing: ")
            .map(|w| {
                let mut c = w.chars();
                // The report's words as a sentence: capital first.
                c.next()
                    .map(|f| f.to_uppercase().chain(c).collect::<String>())
                    .unwrap_or_default()
            })
            .as_deref()
    );

    pick(&root, "input-routing.router", "prefix_aware");
    settle().await;
    assert_eq!(
        draft().routing,
        Some(RoutingSpec {
            replicas: 2,
            router: FleetRouter::PrefixAware
        })
    );
    type_into(&root, "input-routing.replicas", "4");
    settle().await;
    assert_eq!(draft().routing.map(|r| r.replicas), Some(4));
    assert_eq!(cx.state.good.get_untracked().routing, draft().routing);

    // Undo takes back the router (and the replicas typed since, as for any step).
    click(&root, "undo");
    settle().await;
    assert_eq!(draft().routing, Some(RoutingSpec::default()));
    // Off, then undone: the routing comes back; undone once more, it was never on.
    set_checkbox(&root, "input-routing", false);
    settle().await;
    assert_eq!(draft().routing, None);
    assert!(absent("input-routing.replicas"));
    click(&root, "undo");
    settle().await;
    assert_eq!(draft().routing, Some(RoutingSpec::default()));
    let switch: web_sys::HtmlInputElement = by_testid(&root, "input-routing").unchecked_into();
    assert!(switch.checked());
    click(&root, "undo");
    settle().await;
    assert_eq!(draft().routing, None);
    assert!(!switch.checked());

    drop(handle);
    root.remove();
    fresh_start();
}

#[wasm_bindgen_test]
async fn routing_a_closed_loop_shows_the_cores_refusal_at_the_replicas() {
    let root = mount_point();
    let (handle, cx) = mount_page(&root).await;
    pick(&root, "input-traffic.arrival", "closed");
    settle().await;
    set_checkbox(&root, "input-routing", true);
    settle().await;
    let plan = cx.state.draft.get_untracked();
    let core = plan.validate().expect_err("the core refuses it");
    assert_eq!(core.field, "routing.replicas");
    // At the field: its label, then the core's words, as a sentence.
    let shown = text(&root, "error-routing.replicas");
    assert_eq!(
        shown,
        format!("Replicas behind the router {}.", core.message)
    );
    let banner = text(&root, "problem-banner");
    assert!(banner.contains(&shown), "{banner}");
    assert_eq!(
        attr(&root, "results", "data-stale").as_deref(),
        Some("true")
    );
    assert_eq!(
        cx.state.good.get_untracked().routing,
        None,
        "the results stay those of the last plan the core took"
    );
    // Open-loop arrivals mend it.
    pick(&root, "input-traffic.arrival", "poisson");
    settle().await;
    assert_eq!(text(&root, "error-routing.replicas"), "");
    assert_eq!(
        attr(&root, "results", "data-stale").as_deref(),
        Some("false")
    );
    assert_eq!(
        cx.state.good.get_untracked().routing,
        Some(RoutingSpec::default())
    );

    drop(handle);
    root.remove();
    fresh_start();
}

/// Lets a change go through: its handler, the plan's memos, and the effects that render
/// it (a field shown anew sets its value a turn later).
async fn settle() {
    for _ in 0..3 {
        tick().await;
    }
}

/// A small plan of sessions sharing prefixes, on two replicas behind prefix-aware routing.
fn routed_sessions() -> Plan {
    let mut plan = Plan {
        name: "sessions".into(),
        ..Plan::default()
    };
    plan.run.num_requests = 500;
    plan.run.warmup_requests = 50;
    plan.traffic.sharing = Some(PrefixModel {
        groups: 4,
        group_tokens: 2048,
        sessions: 24,
        turns: 4,
        document_tokens: 1500,
        ..PrefixModel::NONE
    });
    plan.routing = Some(RoutingSpec {
        replicas: 2,
        router: FleetRouter::PrefixAware,
    });
    plan
}

/// A converged goodput search of `plan` that found `goodput` [requests/s].
fn converged(plan: &Plan, goodput: f64) -> GoodputResult {
    GoodputResult {
        binding_class: None,
        goodput_rps: goodput,
        goodput_range_rps: [goodput * 0.95, goodput * 1.05],
        target: plan.slo.attainment_target,
        replications: 1,
        knobs: Knobs::of(plan),
        status: SearchStatus::Converged,
        reason: String::new(),
        analytic_guess_rps: goodput,
        curve: Vec::new(),
        jobs_run: 1,
    }
}

/// Puts `plan` on the page with `goodput` as its finished search (the search the page
/// starts for it is stopped), and returns the report the page builds from them.
async fn with_search(cx: &AppContext, plan: &Plan, goodput: f64) -> PlanReport {
    cx.state.set_plan(plan.clone());
    tick().await;
    cx.runs.cancel();
    let result = converged(plan, goodput);
    cx.runs.search.set(Some((plan.clone(), result.clone())));
    tick().await;
    report_for(plan, Some((plan, &result))).expect("a report").1
}

/// How many pixels of the canvas `[data-testid=<testid>]` are within a small distance of
/// `rgb`, and how many of its columns they reach, in its rows `rows` (a share of its
/// height, from the top).
fn ink(
    root: &HtmlElement,
    testid: &str,
    rgb: (u8, u8, u8),
    rows: std::ops::Range<f64>,
) -> (usize, usize) {
    let canvas: web_sys::HtmlCanvasElement = by_testid(root, testid).unchecked_into();
    let ctx: web_sys::CanvasRenderingContext2d = canvas
        .get_context("2d")
        .expect("a context")
        .expect("a 2d context")
        .unchecked_into();
    let (w, h) = (canvas.width(), canvas.height());
    let data = ctx
        .get_image_data(0.0, 0.0, w as f64, h as f64)
        .expect("pixels")
        .data();
    let (y0, y1) = ((rows.start * h as f64) as u32, (rows.end * h as f64) as u32);
    let mut columns = std::collections::BTreeSet::new();
    let mut n = 0;
    for y in y0..y1 {
        for x in 0..w {
            let i = 4 * (y * w + x) as usize;
            let d = (data[i] as i32 - rgb.0 as i32).abs()
                + (data[i + 1] as i32 - rgb.1 as i32).abs()
                + (data[i + 2] as i32 - rgb.2 as i32).abs();
            if d <= 12 {
                n += 1;
                columns.insert(x);
            }
        }
    }
    (n, columns.len())
}

#[wasm_bindgen_test]
async fn the_cache_chart_draws_the_planned_load_runs_timeline() {
    use goodput_app::charts::cache::{idle_fill, private_fill, shared_fill};
    use goodput_app::charts::Theme;
    use goodput_core::sim::{self, SimConfig, SimConfigOf};

    let root = mount_point();
    root.set_attribute("style", "width:1200px").expect("style");
    let (handle, cx) = mount_page(&root).await;
    let plan = routed_sessions();
    let report = with_search(&cx, &plan, 6.0).await;
    wait_until("the cache chart", || {
        root.query_selector("[data-testid=\"cache-chart-box\"]")
            .expect("a valid selector")
            .is_some()
    })
    .await;
    tick().await;

    // The core's planned-load job, simulated here on its own: the chart's run is it.
    let job = report.planned_load_job(&plan).expect("a planned-load job");
    let mut cfg = SimConfig::from_plan(&plan, job.rate_rps).expect("a configuration");
    cfg.max_num_seqs = job.knobs.max_num_seqs;
    cfg.max_num_batched_tokens = job.knobs.max_num_batched_tokens;
    cfg.chunked_prefill = job.knobs.chunked_prefill;
    let expected = sim::simulate(&cfg, job.seed).expect("simulates");
    assert!(
        expected.cache_timeline.len() > 50,
        "{}",
        expected.cache_timeline.len()
    );
    let hit = report
        .planned_load
        .expect("simulated")
        .detail
        .prefix_hit_rate;
    assert_eq!(expected.prefix_hit_rate, hit);

    let box_attr = |name: &str| attr(&root, "cache-chart-box", name).unwrap_or_default();
    assert_eq!(box_attr("data-rate"), job.rate_rps.to_string());
    assert_eq!(box_attr("data-seed"), job.seed.to_string());
    assert_eq!(box_attr("data-replicas"), "2");
    assert_eq!(box_attr("data-hit-rate"), hit.to_string());
    assert_eq!(
        box_attr("data-kv-capacity"),
        cfg.kv_capacity_tokens.to_string()
    );
    let shown: serde_json::Value =
        serde_json::from_str(&box_attr("data-timeline")).expect("the timeline as JSON");
    let want = serde_json::to_value(&expected.cache_timeline).expect("as JSON");
    assert_eq!(shown, want, "the chart's samples are the run's");

    // Drawn: each layer's fill where it is thick enough to see, in the upper panel, and
    // the hit rate's line across the lower one.
    let theme = Theme {
        scale: 1.0,
        dark: goodput_app::components::chart_canvas::prefers_dark(),
    };
    let mean = |f: fn(&goodput_core::sim::CacheSample) -> f64| {
        expected.cache_timeline.iter().map(f).sum::<f64>() / expected.cache_timeline.len() as f64
    };
    let top = cfg.kv_capacity_tokens;
    let canvas: web_sys::HtmlCanvasElement = by_testid(&root, "chart-cache").unchecked_into();
    let width = canvas.width() as usize;
    let mut checked = Vec::new();
    for (name, fill, share) in [
        (
            "private",
            private_fill(&theme),
            mean(|s| s.private_tokens) / top,
        ),
        (
            "shared",
            shared_fill(&theme),
            mean(|s| s.shared_tokens) / top,
        ),
        ("idle", idle_fill(&theme), mean(|s| s.idle_tokens) / top),
    ] {
        let (n, cols) = ink(&root, "chart-cache", (fill.0, fill.1, fill.2), 0.0..0.6);
        if share > 0.05 {
            checked.push(name);
            assert!(cols > width / 2, "{name}: {cols} of {width} columns");
            assert!(
                n > (share * 0.3 * width as f64 * canvas.height() as f64 * 0.4) as usize,
                "{name}: {n} pixels for a mean share of {share}"
            );
        }
    }
    // The private layer of this run is thin (a few running requests' own tokens): the
    // shared prefixes and the idle cache are the layers thick enough to find.
    assert!(
        checked.contains(&"shared") && checked.contains(&"idle"),
        "{checked:?}"
    );
    let accent = theme.accent();
    let (n, cols) = ink(
        &root,
        "chart-cache",
        (accent.0, accent.1, accent.2),
        0.6..1.0,
    );
    assert!(
        n > 0 && cols > width / 2,
        "the hit-rate line: {n} pixels, {cols} columns"
    );
    let summary = text(&root, "cache-summary");
    assert!(
        summary.starts_with("The first of 2 replicas behind the router at "),
        "{summary}"
    );
    assert!(
        summary.ends_with(&format!(
            "{} of prompt tokens found cached over the run.",
            goodput_core::format::percent_tenths(hit)
        )),
        "{summary}"
    );

    drop(handle);
    root.remove();
    fresh_start();
}

#[wasm_bindgen_test]
async fn the_finance_view_states_the_router_and_the_hit_rate() {
    let root = mount_point();
    let (handle, cx) = mount_page(&root).await;
    cx.view.set(goodput_app::route::View::Finance);
    let plan = routed_sessions();
    let report = with_search(&cx, &plan, 6.0).await;
    wait_until("the planned load", || {
        root.query_selector("[data-testid=\"finance-planned\"]")
            .expect("a valid selector")
            .is_some()
    })
    .await;
    // The report's routing assumption, as the report states it.
    let line = routing_words(&plan);
    assert!(report.assumptions.contains(&line));
    let row = by_testid(&root, "assumption-routing");
    let read = |sel: &str| {
        row.query_selector(sel)
            .expect("a valid selector")
            .and_then(|e| e.text_content())
            .unwrap_or_default()
    };
    assert_eq!(format!("{}: {}.", read("dt"), read("dd")), line);
    assert!(
        line.contains("2 replicas") && line.contains("llm-d"),
        "{line}"
    );
    // The hit rate at the planned rate, beside its latency.
    let load = report.planned_load.expect("simulated");
    assert_eq!(
        attr(&root, "finance-planned", "data-hit-rate"),
        Some(load.detail.prefix_hit_rate.to_string())
    );
    let words = text(&root, "finance-planned");
    assert!(
        words.starts_with(&format!(
            "At the planned {} req/s per replica, one simulation gives a p99 TTFT of ",
            goodput_core::format::rps(load.rate_rps)
        )),
        "{words}"
    );
    assert!(
        words.ends_with(&format!(
            "; {} of prompt tokens are found in the prefix cache.",
            goodput_core::format::percent_tenths(load.detail.prefix_hit_rate)
        )),
        "{words}"
    );

    drop(handle);
    root.remove();
    fresh_start();
}

/// Once the round-robin baseline's search is in, the finance view and the routing inputs
/// say what the plan's router saves, in the core's words for the report's fleet; a
/// baseline searched for another plan says nothing.
#[wasm_bindgen_test]
async fn the_router_savings_reach_the_finance_view_and_the_routing_inputs() {
    let root = mount_point();
    let (handle, cx) = mount_page(&root).await;
    cx.view.set(goodput_app::route::View::Finance);
    let plan = routed_sessions();
    let report = with_search(&cx, &plan, 6.0).await;
    let present = |id: &str| {
        root.query_selector(&format!("[data-testid=\"{id}\"]"))
            .expect("a valid selector")
            .is_some()
    };
    wait_until("the planned load", || present("finance-planned")).await;
    assert!(!present("finance-router"), "no baseline yet");
    // A baseline of another plan (three replicas) is not this plan's.
    let mut other = plan.clone();
    other.routing = Some(RoutingSpec {
        replicas: 3,
        router: FleetRouter::PrefixAware,
    });
    cx.runs.baseline.set(Some((other, converged(&plan, 4.0))));
    tick().await;
    assert!(!present("finance-router"), "another plan's baseline");
    // This plan's: round robin reaches 4 req/s per replica against the router's 6.
    let baseline = converged(&plan, 4.0);
    cx.runs.baseline.set(Some((plan.clone(), baseline.clone())));
    wait_until("the router's savings", || present("finance-router")).await;
    let expected = goodput_core::router_gain::RouterSavings::of(
        &plan,
        6.0,
        report.capacity.as_ref(),
        &baseline,
    )
    .expect("a routed plan");
    assert!(
        expected.replicas_saved().expect("sized") > 0,
        "{expected:?}"
    );
    assert_eq!(text(&root, "finance-router"), expected.words());
    // The planner's routing inputs say the same, with both goodputs as numbers.
    cx.view.set(goodput_app::route::View::Planner);
    wait_until("the routing inputs", || present("routing-savings")).await;
    assert_eq!(text(&root, "routing-savings"), expected.words());
    assert_eq!(
        attr(&root, "routing-savings", "data-round-robin-goodput"),
        Some("4".to_string())
    );

    drop(handle);
    root.remove();
    fresh_start();
}
