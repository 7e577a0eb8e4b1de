//! Saved work in the browser's local storage: the autosaved working plan and the
//! user's named plans.
//!
//! ```text
//!   working plan ──(debounced)──▶ localStorage[CURRENT_KEY]  = SavedPlan JSON
//!   "Save as…"   ──────────────▶ localStorage[NAMED_KEY]    = [SavedPlan, …] (≤ MAX_NAMED_PLANS)
//! ```
//!
//! Everything read back is untrusted (another tab, an older release, a hand edit):
//! entries that do not parse or validate are dropped and counted, never a panic.
//! Storage itself may be refused (private mode, quota): every access returns a
//! [`StorageError`] the page shows as a message.

use goodput_core::Plan;
use serde::{Deserialize, Serialize};

/// Key of the autosaved working plan.
pub const CURRENT_KEY: &str = "goodput.current.v1";

/// Key of the named plans.
pub const NAMED_KEY: &str = "goodput.named.v1";

/// Most named plans kept.
pub const MAX_NAMED_PLANS: usize = 40;

/// Longest plan name [characters].
pub const MAX_NAME_CHARS: usize = 80;

/// Largest plan stored, as JSON [bytes]; a long replayed trace can exceed it.
pub const MAX_STORED_PLAN_BYTES: usize = 256 * 1024;

/// A plan as stored: its name, the plan, when, and the goodput its last finished search found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedPlan {
    /// The name shown in the list (unique among named plans).
    pub name: String,
    /// The plan.
    pub plan: Plan,
    /// When it was saved [ms since the Unix epoch].
    pub saved_at_ms: f64,
    /// Goodput per replica of the last search finished for exactly this plan
    /// [requests/s]; `None` when none had finished.
    #[serde(default)]
    pub goodput_rps: Option<f64>,
}

/// Why a plan could not be saved. Each message says what to do.
#[derive(Debug, Clone, PartialEq)]
pub enum SaveError {
    /// The name is blank; type a name.
    EmptyName,
    /// The name is longer than [`MAX_NAME_CHARS`]; shorten it.
    NameTooLong,
    /// [`MAX_NAMED_PLANS`] plans are saved already; delete one first.
    TooMany,
    /// The plan's JSON is `bytes` long, over [`MAX_STORED_PLAN_BYTES`]; use a shorter trace or export it as JSON.
    TooLarge {
        /// Size of the plan's JSON [bytes].
        bytes: usize,
    },
    /// Another saved plan already has this name; pick another.
    NameTaken(String),
    /// The plan is no longer in the list (deleted in another tab).
    Missing(String),
    /// The browser refused to store it.
    Storage(StorageError),
}

impl std::fmt::Display for SaveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SaveError::EmptyName => write!(f, "type a name for the plan first"),
            SaveError::NameTooLong => write!(f, "the name is too long: at most {MAX_NAME_CHARS} characters"),
            SaveError::TooMany => write!(f, "{MAX_NAMED_PLANS} plans are saved already: delete one first"),
            SaveError::TooLarge { bytes } => write!(
                f,
                "the plan is {} KB as JSON, more than the {} KB kept in the browser; export it as JSON instead",
                bytes / 1024,
                MAX_STORED_PLAN_BYTES / 1024
            ),
            SaveError::NameTaken(name) => {
                write!(f, "another saved plan is called “{name}”: pick another name")
            }
            SaveError::Missing(name) => write!(
                f,
                "“{name}” is no longer among the saved plans (deleted in another tab?)"
            ),
            SaveError::Storage(e) => e.fmt(f),
        }
    }
}

impl From<StorageError> for SaveError {
    fn from(e: StorageError) -> Self {
        SaveError::Storage(e)
    }
}

/// Why local storage could not be used.
#[derive(Debug, Clone, PartialEq)]
pub enum StorageError {
    /// The browser offers no local storage here (private mode, disabled storage, a sandboxed frame).
    Unavailable,
    /// Writing failed, usually because the storage quota is full.
    WriteFailed,
}

impl std::fmt::Display for StorageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StorageError::Unavailable => write!(
                f,
                "this browser does not let the page keep data (private mode or storage disabled): plans are not saved; copy the link or export JSON to keep your work"
            ),
            StorageError::WriteFailed => write!(
                f,
                "the browser's storage for this page is full: delete saved plans, or copy the link or export JSON to keep your work"
            ),
        }
    }
}

/// A trimmed, checked plan name.
pub fn check_name(name: &str) -> Result<String, SaveError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(SaveError::EmptyName);
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(SaveError::NameTooLong);
    }
    Ok(name.to_string())
}

/// The JSON of one stored plan, if it is within [`MAX_STORED_PLAN_BYTES`].
pub fn saved_json(entry: &SavedPlan) -> Result<String, SaveError> {
    let json =
        serde_json::to_string(entry).map_err(|_| SaveError::TooLarge { bytes: usize::MAX })?;
    if json.len() > MAX_STORED_PLAN_BYTES {
        return Err(SaveError::TooLarge { bytes: json.len() });
    }
    Ok(json)
}

/// Reads one stored plan; `None` when it does not parse or its plan does not validate.
pub fn parse_saved(value: serde_json::Value) -> Option<SavedPlan> {
    let entry: SavedPlan = serde_json::from_value(value).ok()?;
    entry.plan.validate().ok()?;
    let finite = entry.goodput_rps.is_none_or(|g| g.is_finite() && g >= 0.0);
    (finite && entry.saved_at_ms.is_finite()).then_some(entry)
}

/// Reads the autosaved working plan from its stored text.
pub fn parse_current(text: &str) -> Option<SavedPlan> {
    if text.len() > MAX_STORED_PLAN_BYTES {
        return None;
    }
    parse_saved(serde_json::from_str(text).ok()?)
}

/// The named plans, newest first.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Library {
    /// The plans, newest first.
    pub plans: Vec<SavedPlan>,
}

impl Library {
    /// Reads the stored list; returns it with the number of entries dropped as unreadable.
    pub fn from_json(text: &str) -> (Library, usize) {
        if text.len() > MAX_STORED_PLAN_BYTES * MAX_NAMED_PLANS {
            return (Library::default(), 1);
        }
        let Ok(values) = serde_json::from_str::<Vec<serde_json::Value>>(text) else {
            return (Library::default(), usize::from(!text.trim().is_empty()));
        };
        let total = values.len();
        let mut plans: Vec<SavedPlan> = Vec::new();
        for entry in values.into_iter().filter_map(parse_saved) {
            if plans.len() < MAX_NAMED_PLANS && !plans.iter().any(|p| p.name == entry.name) {
                plans.push(entry);
            }
        }
        let dropped = total - plans.len();
        (Library { plans }, dropped)
    }

    /// The list as stored.
    pub fn to_json(&self) -> String {
        serde_json::to_string(&self.plans).unwrap_or_else(|_| "[]".into())
    }

    /// Saves `entry` under its (checked) name, replacing a plan of the same name; the
    /// newest goes first. Returns how to take the change back.
    pub fn save(&mut self, mut entry: SavedPlan) -> Result<LibraryUndo, SaveError> {
        entry.name = check_name(&entry.name)?;
        saved_json(&entry)?;
        let existing = self.plans.iter().position(|p| p.name == entry.name);
        if existing.is_none() && self.plans.len() >= MAX_NAMED_PLANS {
            return Err(SaveError::TooMany);
        }
        let name = entry.name.clone();
        let replaced = existing.map(|index| (self.plans.remove(index), index));
        self.plans.insert(0, entry);
        Ok(match replaced {
            Some((old, index)) => LibraryUndo::Replaced { old, index },
            None => LibraryUndo::Added(name),
        })
    }

    /// Deletes the plan called `name`; how to take it back, or `None` if there was none.
    pub fn delete(&mut self, name: &str) -> Option<LibraryUndo> {
        let index = self.plans.iter().position(|p| p.name == name)?;
        let entry = self.plans.remove(index);
        Some(LibraryUndo::Deleted { entry, index })
    }

    /// Renames the plan called `from` to the (checked) name `to`, in place; the plan and
    /// its date are kept. Returns how to take it back.
    pub fn rename(&mut self, from: &str, to: &str) -> Result<LibraryUndo, SaveError> {
        let to = check_name(to)?;
        let index = self
            .plans
            .iter()
            .position(|p| p.name == from)
            .ok_or_else(|| SaveError::Missing(from.to_string()))?;
        if to != from && self.get(&to).is_some() {
            return Err(SaveError::NameTaken(to));
        }
        self.plans[index].name = to.clone();
        Ok(LibraryUndo::Renamed {
            from: from.to_string(),
            to,
        })
    }

    /// Takes back one change; what was changed meanwhile is kept (a name taken again since
    /// is an error, not an overwrite).
    pub fn undo(&mut self, undo: &LibraryUndo) -> Result<(), SaveError> {
        match undo {
            LibraryUndo::Added(name) => {
                self.delete(name);
            }
            LibraryUndo::Replaced { old, index } => {
                let now = self
                    .plans
                    .iter()
                    .position(|p| p.name == old.name)
                    .ok_or_else(|| SaveError::Missing(old.name.clone()))?;
                self.plans.remove(now);
                self.plans
                    .insert((*index).min(self.plans.len()), old.clone());
            }
            LibraryUndo::Deleted { entry, index } => {
                if self.get(&entry.name).is_some() {
                    return Err(SaveError::NameTaken(entry.name.clone()));
                }
                if self.plans.len() >= MAX_NAMED_PLANS {
                    return Err(SaveError::TooMany);
                }
                self.plans
                    .insert((*index).min(self.plans.len()), entry.clone());
            }
            LibraryUndo::Renamed { from, to } => {
                self.rename(to, from)?;
            }
        }
        Ok(())
    }

    /// Gives the plans saved before their search finished the goodput it found: every
    /// entry without a goodput whose plan `goodput_of` now knows one for. Returns whether
    /// any entry changed.
    pub fn fill_goodput(&mut self, goodput_of: impl Fn(&Plan) -> Option<f64>) -> bool {
        let mut changed = false;
        for entry in self.plans.iter_mut().filter(|e| e.goodput_rps.is_none()) {
            if let Some(g) = goodput_of(&entry.plan) {
                entry.goodput_rps = Some(g);
                changed = true;
            }
        }
        changed
    }

    /// The plan called `name`.
    pub fn get(&self, name: &str) -> Option<&SavedPlan> {
        self.plans.iter().find(|p| p.name == name)
    }

    /// A name not taken yet: `base`, else `base (2)`, `base (3)`, …
    pub fn free_name(&self, base: &str) -> String {
        let base: String = base.trim().chars().take(MAX_NAME_CHARS - 6).collect();
        if self.get(&base).is_none() {
            return base;
        }
        (2..)
            .map(|i| format!("{base} ({i})"))
            .find(|n| self.get(n).is_none())
            .unwrap_or(base)
    }
}

/// How to take back one change to the named plans.
#[derive(Debug, Clone, PartialEq)]
pub enum LibraryUndo {
    /// A plan was saved under a new name.
    Added(String),
    /// A plan was saved over this one, of the same name, at position `index`.
    Replaced {
        /// The plan saved over.
        old: SavedPlan,
        /// Where it was in the list.
        index: usize,
    },
    /// This plan was deleted from position `index`.
    Deleted {
        /// The plan deleted.
        entry: SavedPlan,
        /// Where it was in the list.
        index: usize,
    },
    /// A plan was renamed.
    Renamed {
        /// Its name before.
        from: String,
        /// Its name after.
        to: String,
    },
}

impl LibraryUndo {
    /// What the change did, in the list's words (the message beside Undo).
    pub fn done_text(&self) -> String {
        match self {
            LibraryUndo::Added(name) => format!("Saved “{name}”."),
            LibraryUndo::Replaced { old, .. } => format!(
                "Saved “{}” in place of the earlier plan of that name.",
                old.name
            ),
            LibraryUndo::Deleted { entry, .. } => format!("Deleted “{}”.", entry.name),
            LibraryUndo::Renamed { from, to } => format!("Renamed “{from}” to “{to}”."),
        }
    }

    /// What taking it back did.
    pub fn undone_text(&self) -> String {
        match self {
            LibraryUndo::Added(name) => format!("Undone: “{name}” is no longer saved."),
            LibraryUndo::Replaced { old, .. } => {
                format!("Undone: “{}” is the plan saved before again.", old.name)
            }
            LibraryUndo::Deleted { entry, .. } => format!("Undone: “{}” is back.", entry.name),
            LibraryUndo::Renamed { from, .. } => format!("Undone: the plan is “{from}” again."),
        }
    }
}

/// The name the previous own plan is saved under when the user keeps a shared one.
pub fn before_name(date: &str) -> String {
    format!("My plan (before {date})")
}

fn storage() -> Result<web_sys::Storage, StorageError> {
    leptos::prelude::window()
        .local_storage()
        .ok()
        .flatten()
        .ok_or(StorageError::Unavailable)
}

/// Reads `key` from local storage (browser only).
pub fn read(key: &str) -> Result<Option<String>, StorageError> {
    storage()?
        .get_item(key)
        .map_err(|_| StorageError::Unavailable)
}

/// Writes `key` to local storage (browser only).
pub fn write(key: &str, value: &str) -> Result<(), StorageError> {
    storage()?
        .set_item(key, value)
        .map_err(|_| StorageError::WriteFailed)
}

/// Now [ms since the Unix epoch] (browser only).
pub fn now_ms() -> f64 {
    js_sys::Date::now()
}

/// A date and time for names and lists, `YYYY-MM-DD HH:MM` in local time (browser only).
pub fn date_text(ms: f64) -> String {
    let d = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(ms));
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}",
        d.get_full_year(),
        d.get_month() + 1,
        d.get_date(),
        d.get_hours(),
        d.get_minutes()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str) -> SavedPlan {
        SavedPlan {
            name: name.into(),
            plan: Plan {
                name: name.into(),
                ..Plan::default()
            },
            saved_at_ms: 1.7e12,
            goodput_rps: Some(19.5),
        }
    }

    #[test]
    fn save_replace_list_and_delete() {
        let mut lib = Library::default();
        lib.save(entry("bf16")).expect("saved");
        lib.save(entry("fp8")).expect("saved");
        assert_eq!(
            lib.plans
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>(),
            ["fp8", "bf16"]
        );
        let mut again = entry("  bf16 ");
        again.goodput_rps = None;
        lib.save(again).expect("replaced");
        assert_eq!(lib.plans.len(), 2);
        assert_eq!(lib.plans[0].name, "bf16");
        assert_eq!(lib.plans[0].goodput_rps, None);
        assert!(lib.delete("fp8").is_some());
        assert_eq!(lib.delete("fp8"), None);
        assert_eq!(lib.get("bf16").map(|p| p.saved_at_ms), Some(1.7e12));
        let (back, dropped) = Library::from_json(&lib.to_json());
        assert_eq!((back, dropped), (lib, 0));
    }

    #[test]
    fn a_plan_saved_before_its_search_finished_gets_its_goodput_later() {
        let mut lib = Library::default();
        let mut waiting = entry("saved early");
        waiting.goodput_rps = None;
        lib.save(waiting.clone()).expect("saved");
        lib.save(entry("known")).expect("saved");
        // A search for another plan finishes: nothing changes.
        assert!(!lib.fill_goodput(|_| None));
        let searched = waiting.plan.clone();
        let of = |p: &Plan| (*p == searched).then_some(21.5);
        assert!(lib.fill_goodput(of));
        assert_eq!(
            lib.get("saved early").and_then(|p| p.goodput_rps),
            Some(21.5)
        );
        // A goodput the plan was saved with is never replaced.
        assert!(!lib.fill_goodput(|_| Some(1.0)));
        assert_eq!(lib.get("known").and_then(|p| p.goodput_rps), Some(19.5));
    }

    fn names(lib: &Library) -> Vec<&str> {
        lib.plans.iter().map(|p| p.name.as_str()).collect()
    }

    #[test]
    fn every_change_to_the_list_can_be_taken_back() {
        let mut lib = Library::default();
        for n in ["a", "b", "c"] {
            lib.save(entry(n)).expect("saved");
        }
        let start = lib.clone();
        // Delete: the plan comes back where it was.
        let undo = lib.delete("b").expect("deleted");
        assert_eq!(names(&lib), ["c", "a"]);
        lib.undo(&undo).expect("undone");
        assert_eq!(lib, start);
        // Saving over a plan of the same name: the earlier one comes back, in place.
        let mut newer = entry("a");
        newer.goodput_rps = Some(3.0);
        newer.plan.traffic.peak_rate_rps = 77.0;
        let undo = lib.save(newer).expect("replaced");
        assert_eq!(
            undo,
            LibraryUndo::Replaced {
                old: entry("a"),
                index: 2
            }
        );
        assert_eq!(names(&lib), ["a", "c", "b"]);
        assert_eq!(
            undo.done_text(),
            "Saved “a” in place of the earlier plan of that name."
        );
        lib.undo(&undo).expect("undone");
        assert_eq!(lib, start);
        // A new name: undo removes it.
        let undo = lib.save(entry("d")).expect("saved");
        assert_eq!(undo, LibraryUndo::Added("d".into()));
        lib.undo(&undo).expect("undone");
        assert_eq!(lib.get("d"), None);
        // Rename keeps the place, the plan and its date; undo names it back.
        let before = lib.clone();
        let undo = lib.rename("b", "  bee ").expect("renamed");
        assert_eq!(undo.done_text(), "Renamed “b” to “bee”.");
        assert_eq!(lib.plans[1].name, "bee");
        assert_eq!(lib.plans[1].plan, entry("b").plan);
        assert_eq!(lib.plans[1].saved_at_ms, entry("b").saved_at_ms);
        lib.undo(&undo).expect("undone");
        assert_eq!(lib, before);
        assert_eq!(
            lib.rename("b", "b"),
            Ok(LibraryUndo::Renamed {
                from: "b".into(),
                to: "b".into()
            })
        );
    }

    #[test]
    fn a_rename_or_undo_never_overwrites_another_plan() {
        let mut lib = Library::default();
        for n in ["a", "b"] {
            lib.save(entry(n)).expect("saved");
        }
        let start = lib.clone();
        assert_eq!(lib.rename("a", "b"), Err(SaveError::NameTaken("b".into())));
        assert_eq!(lib.rename("a", " "), Err(SaveError::EmptyName));
        assert_eq!(lib.rename("zz", "y"), Err(SaveError::Missing("zz".into())));
        assert_eq!(lib, start, "a refused rename changes nothing");
        // Deleted, then a new plan takes the name: undoing the delete is refused.
        let undo = lib.delete("a").expect("deleted");
        lib.save(entry("a")).expect("saved again");
        assert_eq!(lib.undo(&undo), Err(SaveError::NameTaken("a".into())));
        assert!(SaveError::NameTaken("a".into())
            .to_string()
            .contains("pick another name"));
    }

    #[test]
    fn names_and_sizes_are_bounded() {
        let mut lib = Library::default();
        assert_eq!(lib.save(entry(" ")), Err(SaveError::EmptyName));
        assert_eq!(
            lib.save(entry(&"x".repeat(MAX_NAME_CHARS + 1))),
            Err(SaveError::NameTooLong)
        );
        for i in 0..MAX_NAMED_PLANS {
            lib.save(entry(&format!("p{i}"))).expect("room");
        }
        assert_eq!(lib.save(entry("one more")), Err(SaveError::TooMany));
        lib.save(entry("p3"))
            .expect("replacing is allowed when full");
        let mut big = entry("trace");
        big.plan.traffic.trace = vec![
            goodput_core::plan::TraceRow {
                arrival_s: 0.123456789,
                prompt_tokens: 1000,
                output_tokens: 100,
                ..Default::default()
            };
            20_000
        ];
        assert!(matches!(
            Library::default().save(big),
            Err(SaveError::TooLarge { .. })
        ));
        assert_eq!(lib.free_name("p1"), "p1 (2)");
        assert_eq!(lib.free_name("new"), "new");
        assert_eq!(
            before_name("2026-11-29 09:30"),
            "My plan (before 2026-11-29 09:30)"
        );
    }

    #[test]
    fn unreadable_entries_are_dropped_and_counted() {
        let mut bad_plan = entry("bad");
        bad_plan.plan.run.replications = 0;
        let good = serde_json::to_value(entry("good")).expect("json");
        let text = serde_json::to_string(&vec![
            good.clone(),
            serde_json::to_value(bad_plan).expect("json"),
            serde_json::json!({"name": 3}),
            serde_json::json!("<script>"),
            good,
        ])
        .expect("json");
        let (lib, dropped) = Library::from_json(&text);
        assert_eq!(lib.plans.len(), 1);
        assert_eq!(dropped, 4, "invalid, malformed, not an object, duplicate");
        assert_eq!(Library::from_json("{not json"), (Library::default(), 1));
        assert_eq!(Library::from_json(""), (Library::default(), 0));
        assert_eq!(parse_current("[[[["), None);
        let current = serde_json::to_string(&entry("mine")).expect("json");
        assert_eq!(parse_current(&current), Some(entry("mine")));
    }

    #[test]
    fn errors_say_what_to_do() {
        for e in [
            SaveError::EmptyName,
            SaveError::NameTooLong,
            SaveError::TooMany,
            SaveError::TooLarge { bytes: 300_000 },
            SaveError::NameTaken("x".into()),
            SaveError::Missing("x".into()),
            SaveError::Storage(StorageError::Unavailable),
            SaveError::Storage(StorageError::WriteFailed),
        ] {
            let text = e.to_string();
            assert!(text.len() > 20 && !text.contains('\n'), "{text}");
        }
    }
}
