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
    assert_eq!(memory.value(), "141");
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
            "disagg.router",
            "engine.chunked_prefill",
            "engine.kv_policy",
            "model.kv_dtype",
            "model.weight_dtype",
            "slo.mode",
            "traffic.arrival",
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
