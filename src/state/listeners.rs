//! Callbacks an owner of state runs when something happens to it (an edit of the plan, a
//! finished run), so that other controllers hear of it as it happens rather than from an
//! effect watching a signal.

use std::rc::Rc;

use leptos::prelude::*;

/// One registered callback, to take it off again ([`Listeners::remove`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListenerId(u64);

/// The callbacks registered, each with its id, and the last id given.
#[derive(Default)]
struct Registered {
    last: u64,
    callbacks: Vec<(u64, Rc<dyn Fn()>)>,
}

/// The callbacks registered for one kind of event.
#[derive(Clone, Copy)]
pub struct Listeners(StoredValue<Registered, LocalStorage>);

impl Listeners {
    /// None yet.
    pub fn new() -> Listeners {
        Listeners(StoredValue::new_local(Registered::default()))
    }

    /// Runs `f` at each [`Listeners::tell`] from here on, until it is removed.
    pub fn add(&self, f: impl Fn() + 'static) -> ListenerId {
        let mut id = 0;
        self.0.update_value(|r| {
            r.last += 1;
            id = r.last;
            r.callbacks.push((id, Rc::new(f)));
        });
        ListenerId(id)
    }

    /// Stops running the callback `id` (a component's, when it is unmounted). Nothing
    /// when the owner of the list is gone.
    pub fn remove(&self, id: ListenerId) {
        self.0
            .try_update_value(|r| r.callbacks.retain(|(n, _)| *n != id.0));
    }

    /// Runs every callback, in the order they were added.
    pub fn tell(&self) {
        // A callback may add another, or cause another tell: each runs on a copy.
        let copy: Vec<Rc<dyn Fn()>> = self
            .0
            .with_value(|r| r.callbacks.iter().map(|(_, f)| f.clone()).collect());
        for listener in copy {
            listener();
        }
    }
}

impl Default for Listeners {
    fn default() -> Self {
        Listeners::new()
    }
}
