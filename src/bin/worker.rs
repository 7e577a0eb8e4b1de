//! The simulation worker: receives a JSON batch of jobs, runs them with the core, posts
//! the JSON results back. Built by Trunk as a Web Worker (`data-type="worker"`).
#![deny(missing_docs)]
#![forbid(unsafe_code)]

use goodput_app::compute::protocol::{handle, warm_up};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

/// Most simulations a fresh worker runs to warm up.
const WARM_UP_JOBS: usize = 20;
/// Longest a fresh worker spends warming up before it says it is ready [ms].
const WARM_UP_MS: f64 = 80.0;

fn main() {
    console_error_panic_hook::set_once();
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let reply_to = scope.clone();
    let on_message = Closure::<dyn Fn(MessageEvent)>::new(move |ev: MessageEvent| {
        let body = ev.data().as_string().unwrap_or_default();
        let reply = handle(&body);
        let _ = reply_to.post_message(&JsValue::from_str(&reply));
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    // Run a few simulations first, while the page is most likely still loading: the engine
    // then optimises the simulator before the first real request arrives.
    let started_ms = js_sys::Date::now();
    warm_up(WARM_UP_JOBS, || {
        js_sys::Date::now() - started_ms < WARM_UP_MS
    });
    // Messages sent before the module finished loading are lost: say when we listen.
    let _ = scope.post_message(&JsValue::from_str("ready"));
}
