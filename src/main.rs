//! The web app's entry point: mounts [`goodput_app::App`] on the page's body. Trunk
//! builds it to wasm; the numbers come from `goodput-core` through the app crate.

#![deny(missing_docs)]
#![forbid(unsafe_code)]
use goodput_app::App;
use leptos::prelude::*;

fn main() {
    console_error_panic_hook::set_once();
    mount_to_body(App);
}
