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

use goodput_core::Plan;

use super::protocol::{handle, warm_up, Prefetched, WorkerReply};

/// Longest a worker started without a plan spends warming up before it says it is
/// ready [ms].
const WARM_UP_MS: f64 = 80.0;
/// Longest a worker spends running the page's first search ahead of it before it says
/// it is ready [ms]: the page takes about as long to start on a two-core machine.
const AHEAD_MS: f64 = 600.0;

/// Name of the worker global where [`BOOTSTRAP`] leaves the page's hand-off message.
const HAND_OFF_GLOBAL: &str = "goodputHandOff";

/// The script a worker starts with (a module worker): it waits for the page's hand-off
/// `{js, module}`, imports the glue and instantiates the module. A failure is thrown
/// outside the promise, so the page sees it as the worker's `error` event.
/// `index.html` starts its early workers with the same script (a test keeps the two alike).
pub const BOOTSTRAP: &str = "self.onmessage=function(e){var d=e.data;\
if(!d||typeof d.js!=='string')return;self.onmessage=null;self.goodputHandOff=d;\
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

/// What a worker does before it says it is ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WarmUp<'a> {
    /// Runs the search of this plan (JSON) ahead of the page and sends the results.
    Ahead(&'a str),
    /// Runs a little of the default plan's search and keeps nothing.
    Short,
    /// Nothing: ready at once.
    Skip,
}

/// Sends `worker` (started with [`BOOTSTRAP`]) what it needs to run this module, and
/// what to do before it is ready.
pub fn hand_off(worker: &Worker, warm: WarmUp) -> Result<(), JsValue> {
    let msg = Object::new();
    Reflect::set(&msg, &"js".into(), &GLUE_URL.with(|u| JsValue::from_str(u)))?;
    Reflect::set(&msg, &"module".into(), &wasm_bindgen::module())?;
    match warm {
        WarmUp::Ahead(plan) => Reflect::set(&msg, &"plan".into(), &plan.into())?,
        WarmUp::Short => true,
        WarmUp::Skip => Reflect::set(&msg, &"skip".into(), &JsValue::TRUE)?,
    };
    worker.post_message(&msg)
}

/// What the page's hand-off (left by [`BOOTSTRAP`] in a global) asks this worker to do
/// first: run the search of the plan it carries ahead (`Some`, the plan's JSON), or
/// else, unless it says `skip`, the short warm-up.
fn warm_up_asked() -> (Option<String>, bool) {
    let d = Reflect::get(&js_sys::global(), &HAND_OFF_GLOBAL.into()).unwrap_or_default();
    let field = |name: &str| Reflect::get(&d, &name.into()).unwrap_or_default();
    (field("plan").as_string(), field("skip").is_truthy())
}

/// The worker's loop: answers every request with `protocol::handle`, after the warm-up
/// the hand-off asks for ([`WarmUp`]), and says `"ready"` once it listens.
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
    // While the page is most likely still loading, one worker runs the page's first
    // search ahead of it and sends the results unasked, so that search finds them
    // computed; the others wait. A worker started later runs a little of the default
    // plan's search and keeps nothing. Either way the browser has the simulator's code
    // optimised before the first real request.
    let started_ms = js_sys::Date::now();
    let posted = scope.clone();
    let mut send = |sent: Prefetched| {
        let sent = WorkerReply::Prefetched(Box::new(sent));
        if let Ok(body) = serde_json::to_string(&sent) {
            let _ = posted.post_message(&JsValue::from_str(&body));
        }
    };
    match warm_up_asked() {
        (Some(json), _) => match serde_json::from_str::<Plan>(&json) {
            Ok(plan) => {
                let mut going = || js_sys::Date::now() - started_ms < AHEAD_MS;
                warm_up(&plan, &mut going, &mut send);
            }
            // The page waits for this worker's last message: send it.
            Err(_) => send(Prefetched {
                results: Vec::new(),
                last: true,
            }),
        },
        (None, false) => {
            warm_up(
                &Plan::default(),
                &mut || js_sys::Date::now() - started_ms < WARM_UP_MS,
                &mut |_| {},
            );
        }
        (None, true) => {}
    }
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

    /// The worker reads its hand-off (the plan whose search it runs ahead) from the
    /// global the bootstrap script leaves it in.
    #[test]
    fn the_bootstrap_script_leaves_the_hand_off_where_the_worker_reads_it() {
        let stash = format!("self.{}=d;", super::HAND_OFF_GLOBAL);
        assert!(super::BOOTSTRAP.contains(&stash), "{}", super::BOOTSTRAP);
    }
}
