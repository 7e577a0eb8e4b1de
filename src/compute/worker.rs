//! The simulation worker's side: the page's own wasm module, run in a Web Worker.
//!
//! There is no separate worker module to download. A worker starts as a small script
//! ([`BOOTSTRAP`]) that waits for one message from the page: the URL of the app's
//! JavaScript glue and the page's compiled `WebAssembly.Module` ([`hand_off`]). It imports
//! the glue and instantiates that module, so the wasm is downloaded and compiled once,
//! by the page. The module's `main` sees it runs in a worker ([`in_worker`]) and runs
//! [`run`] instead of mounting the app: JSON batches of jobs in, JSON results out.

use js_sys::{Object, Reflect};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent, Worker};

use super::protocol::{handle, warm_up};

/// Most simulations a fresh worker runs to warm up.
const WARM_UP_JOBS: usize = 20;
/// Longest a fresh worker spends warming up before it says it is ready [ms].
const WARM_UP_MS: f64 = 80.0;

/// The script a worker starts with (a module worker): it waits for the page's hand-off
/// `{js, module}`, imports the glue and instantiates the module. A failure is thrown
/// outside the promise, so the page sees it as the worker's `error` event.
/// `index.html` starts its early workers with the same script (a test keeps the two alike).
pub const BOOTSTRAP: &str = "self.onmessage=function(e){var d=e.data;\
if(!d||typeof d.js!=='string')return;self.onmessage=null;\
import(d.js).then(function(m){return m.default({module_or_path:d.module});})\
.catch(function(err){setTimeout(function(){throw err;});});};";

#[wasm_bindgen]
extern "C" {
    /// The URL of the JavaScript glue this module was loaded by.
    #[wasm_bindgen(thread_local_v2, js_namespace = ["import", "meta"], js_name = url)]
    static GLUE_URL: String;
}

/// Whether this module runs in a dedicated worker (not on the page).
pub fn in_worker() -> bool {
    js_sys::global().has_type::<DedicatedWorkerGlobalScope>()
}

/// Sends `worker` (started with [`BOOTSTRAP`]) what it needs to run this module.
pub fn hand_off(worker: &Worker) -> Result<(), JsValue> {
    let msg = Object::new();
    Reflect::set(&msg, &"js".into(), &GLUE_URL.with(|u| JsValue::from_str(u)))?;
    Reflect::set(&msg, &"module".into(), &wasm_bindgen::module())?;
    worker.post_message(&msg)
}

/// The worker's loop: answers every request with `protocol::handle`, after a short
/// warm-up, and says `"ready"` once it listens.
pub fn run() {
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

#[cfg(test)]
mod tests {
    /// `index.html` starts its early workers with the same script, written there as
    /// JavaScript strings joined by `+`: joined, they are [`super::BOOTSTRAP`].
    #[test]
    fn index_html_starts_its_workers_with_the_bootstrap_script() {
        let html = include_str!("../../index.html");
        let key = "var src = ";
        let start = html.find(key).expect("index.html sets its workers' script") + key.len();
        let end = start
            + html[start..]
                .find(";\n")
                .expect("the script's statement ends");
        let joined: String = html[start..end]
            .split('+')
            .map(|part| part.trim().trim_start_matches('"').trim_end_matches('"'))
            .collect();
        assert_eq!(joined, super::BOOTSTRAP);
    }
}
