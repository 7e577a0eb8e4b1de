//! The web app's entry point: mounts [`goodput_app::App`] on the page's body. Trunk
//! builds it to wasm; the numbers come from `goodput-core` through the app crate.
//!
//! The simulation workers run this same module: in a worker, `main` runs the worker's
//! loop instead (`goodput_app::compute::worker`).

#![deny(missing_docs)]
#![forbid(unsafe_code)]
use goodput_app::compute::{pool, worker};
use goodput_app::session::boot;
use goodput_app::Booted;
use leptos::prelude::*;

fn main() {
    console_error_panic_hook::set_once();
    if worker::in_worker() {
        worker::run();
        return;
    }
    // The workers index.html started are waiting for this module: hand it over first,
    // with the plan the app opens with, whose search the first of them runs meanwhile.
    let boot = boot();
    pool::hand_off_to_early_workers(&boot.plan);
    mount_to_body(move || view! { <Booted boot /> });
}
