//! Callbacks an owner of state runs when something happens to it (an edit of the plan, a
//! finished run), so that other controllers hear of it as it happens rather than from an
//! effect watching a signal.

use std::rc::Rc;

use leptos::prelude::*;

/// The callbacks registered for one kind of event.
#[derive(Clone, Copy)]
pub struct Listeners(StoredValue<Vec<Rc<dyn Fn()>>, LocalStorage>);

impl Listeners {
    /// None yet.
    pub fn new() -> Listeners {
        Listeners(StoredValue::new_local(Vec::new()))
    }

    /// Runs `f` at each [`Listeners::tell`] from here on.
    pub fn add(&self, f: impl Fn() + 'static) {
        self.0.update_value(|l| l.push(Rc::new(f)));
    }

    /// Runs every callback, in the order they were added.
    pub fn tell(&self) {
        // A callback may add another, or cause another tell: each runs on a copy.
        for listener in self.0.with_value(Vec::clone) {
            listener();
        }
    }
}

impl Default for Listeners {
    fn default() -> Self {
        Listeners::new()
    }
}
