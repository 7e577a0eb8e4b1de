//! Browser smoke test of the app: mount it in headless Chromium, let it render,
//! and check that it shows the number the core computes.
//!
//! Run with `cargo test --target wasm32-unknown-unknown -p goodput-app --test web`
//! (scripts/test.sh sets up chromedriver for it).
#![cfg(target_arch = "wasm32")]

use goodput_app::App;
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

    let shown = read_value(&root, "decode-step-ms");
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
