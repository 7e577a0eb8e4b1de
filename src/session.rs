//! The working session: which plan is the user's own, the address bar kept in step
//! with the plan, the autosave, and the named plans.
//!
//! ```text
//!   boot: fragment ─read_fragment─▶ Own | Link | Broken      localStorage ─▶ own plan, named plans
//!           Own    ─▶ planner, own plan (or defaults)                       (own plan untouched
//!           Link   ─▶ its view, the shared plan, banner (visiting)           while visiting)
//!           Broken ─▶ planner, defaults, banner with the message
//!   effects: good plan + view ─▶ history.replaceState(#p=…[&view=planner])
//!            good plan (own only) ─(debounced)─▶ localStorage
//! ```
//!
//! A shared link never overwrites the user's own plan: while a shared (or broken)
//! link is open the session is *visiting*, nothing is autosaved, and the banner
//! offers "Back to my plan" and "Keep this plan".

use std::time::Duration;

use goodput_core::Plan;
use leptos::ev;
use leptos::prelude::*;

use crate::compute::RunController;
use crate::route::View;
use crate::saved::{self, Library, LibraryUndo, SaveError, SavedPlan};
use crate::state::PlanState;
use crate::url_state::{self, Opening};

/// Delay between the last change and the autosave.
pub const AUTOSAVE_DEBOUNCE: Duration = Duration::from_millis(600);

pub use crate::state::Visit;

/// What the page starts with.
#[derive(Debug, Clone, PartialEq)]
pub struct Boot {
    /// The plan to show.
    pub plan: Plan,
    /// The view to show.
    pub view: View,
    /// Set when the plan is not the user's own.
    pub visit: Option<Visit>,
    /// The user's own plan as autosaved, if any.
    pub own: Option<SavedPlan>,
}

/// Decides what to show from what the address asks for and the autosaved own plan.
/// A link that reopens the planner with exactly the own plan (a reload) is the own
/// plan, whole: the address holds its link form, which leaves out most of a GPU
/// comparison's rows; any other link is a visit.
pub fn decide(opening: Opening, own: Option<SavedPlan>) -> Boot {
    let own_plan = own.as_ref().map(|o| o.plan.clone());
    match opening {
        Opening::Own => Boot {
            plan: own_plan.unwrap_or_default(),
            view: View::Planner,
            visit: None,
            own,
        },
        Opening::Link { plan, view } => {
            // A reload of the user's own page: the planner (or compare) with the own plan,
            // or a fresh profile's first planner link; the summary only with the own plan.
            let own_link = own_plan
                .as_ref()
                .filter(|o| **o == *plan || goodput_core::share::link_form(o) == *plan);
            let reload = match view {
                View::Embed => false,
                View::Finance => own_link.is_some(),
                View::Planner | View::Compare => own_plan.is_none() || own_link.is_some(),
            };
            Boot {
                plan: match own_link {
                    Some(o) if reload => o.clone(),
                    _ => *plan,
                },
                view,
                visit: (!reload).then_some(Visit::Shared),
                own,
            }
        }
        Opening::Broken(message) => Boot {
            plan: Plan::default(),
            view: View::Planner,
            visit: Some(Visit::Broken(message)),
            own,
        },
    }
}

/// Reads the address and local storage (browser only). Never fails: storage errors
/// are reported by [`Session::storage_problem`].
pub fn boot() -> Boot {
    let own = saved::read(saved::CURRENT_KEY)
        .ok()
        .flatten()
        .and_then(|t| saved::parse_current(&t));
    decide(
        url_state::read_fragment(&url_state::current_fragment()),
        own,
    )
}

/// The session, provided as context by the app root.
#[derive(Clone, Copy)]
pub struct Session {
    /// The view shown.
    pub view: RwSignal<View>,
    /// Set while the plan on screen is not the user's own.
    pub visit: RwSignal<Option<Visit>>,
    /// The user's own plan as last saved (what "Back to my plan" restores).
    pub own: RwSignal<Option<SavedPlan>>,
    /// The named plans.
    pub library: RwSignal<Library>,
    /// The last problem with local storage, if any.
    pub storage_problem: RwSignal<Option<String>>,
    state: PlanState,
    runs: RunController,
    pending: StoredValue<Option<TimeoutHandle>, LocalStorage>,
}

impl Session {
    /// Sets up the session from `boot`: reads the named plans, keeps the address in step
    /// with the plan and autosaves the own plan.
    pub fn start(
        boot: Boot,
        state: PlanState,
        runs: RunController,
        view: RwSignal<View>,
    ) -> Session {
        let (library, problem) = match saved::read(saved::NAMED_KEY) {
            Ok(text) => {
                let (lib, dropped) = Library::from_json(text.as_deref().unwrap_or(""));
                let note = (dropped > 0).then(|| {
                    format!("{dropped} saved plan(s) could not be read (made by another version or damaged) and are not listed.")
                });
                (lib, note)
            }
            Err(e) => (Library::default(), Some(e.to_string())),
        };
        let s = Session {
            view,
            visit: RwSignal::new(boot.visit),
            own: RwSignal::new(boot.own),
            library: RwSignal::new(library),
            storage_problem: RwSignal::new(problem),
            state,
            runs,
            pending: StoredValue::new_local(None),
        };
        provide_context(s);
        s.keep_address_in_step();
        s.autosave();
        s.fill_saved_goodput();
        let on_hash = window_event_listener(ev::hashchange, move |_| s.reopen());
        let on_hide = window_event_listener(ev::pagehide, move |_| s.flush());
        on_cleanup(move || {
            on_hash.remove();
            on_hide.remove();
        });
        s
    }

    /// The session provided by the app root.
    pub fn expect_context() -> Session {
        expect_context::<Session>()
    }

    /// Writes the plan and view into the address (replaceState: no history entry). The
    /// embed card keeps its address; a broken link stays in the address until the user acts.
    fn keep_address_in_step(&self) {
        let s = *self;
        Effect::new(move |first: Option<()>| {
            let view = s.view.get();
            let plan = s.state.good.get();
            let broken = s.visit.with(|v| matches!(v, Some(Visit::Broken(_))));
            if view == View::Embed || (first.is_none() && broken) {
                return;
            }
            url_state::replace_fragment(&url_state::fragment_for(&plan, view));
        });
    }

    /// Saves the own plan (and the goodput of its finished search) after a pause: the plan
    /// the page opens with, then after each edit, each finished search and each change of
    /// the visit ([`Session::autosave_soon`]).
    fn autosave(&self) {
        let s = *self;
        s.autosave_soon();
        s.state.on_edit(move || s.autosave_soon());
        s.runs.on_result(move || s.autosave_soon());
    }

    /// Saves the good plan as the own plan after [`AUTOSAVE_DEBOUNCE`], unless a link is
    /// being visited or the page is an embed; a later call starts the pause again, and
    /// one made while a link is visited drops the save pending (an Undo tells the edit
    /// before it gives the visit back).
    fn autosave_soon(&self) {
        self.pending.update_value(|p| {
            if let Some(h) = p.take() {
                h.clear();
            }
        });
        if self.visit.with_untracked(Option::is_some) || self.view.get_untracked() == View::Embed {
            return;
        }
        let plan = self.state.good.get_untracked();
        let goodput = untrack(|| self.runs.goodput_for(&plan));
        let entry = SavedPlan {
            name: "current".into(),
            plan,
            saved_at_ms: saved::now_ms(),
            goodput_rps: goodput,
        };
        let s = *self;
        let handle = set_timeout_with_handle(move || s.write_own(&entry), AUTOSAVE_DEBOUNCE).ok();
        self.pending.set_value(handle);
    }

    fn write_own(&self, entry: &SavedPlan) {
        self.pending.set_value(None);
        let result = saved::saved_json(entry)
            .and_then(|json| saved::write(saved::CURRENT_KEY, &json).map_err(SaveError::from));
        match result {
            Ok(()) => {
                self.own.set(Some(entry.clone()));
                self.storage_problem.update(|p| {
                    if p.as_deref().is_some_and(is_storage_message) {
                        *p = None
                    }
                });
            }
            Err(e) => self.storage_problem.set(Some(format!("Autosave: {e}"))),
        }
    }

    /// Writes a pending autosave now (the page is being hidden or closed).
    fn flush(&self) {
        if self.pending.with_value(Option::is_none) || self.visit.with_untracked(Option::is_some) {
            return;
        }
        let plan = self.state.good.get_untracked();
        let goodput = untrack(|| self.runs.goodput_for(&plan));
        if let Some(h) = self.pending.try_update_value(Option::take).flatten() {
            h.clear();
        }
        self.write_own(&SavedPlan {
            name: "current".into(),
            plan,
            saved_at_ms: saved::now_ms(),
            goodput_rps: goodput,
        });
    }

    /// Opens what the address now asks for (the user pasted a link into the address bar).
    fn reopen(&self) {
        let fragment = url_state::current_fragment();
        let expected =
            url_state::fragment_for(&self.state.good.get_untracked(), self.view.get_untracked());
        if fragment == expected {
            return;
        }
        let boot = decide(
            url_state::read_fragment(&fragment),
            self.own.get_untracked(),
        );
        if boot.visit.is_some() {
            self.flush();
        }
        let before = self.visit.get_untracked();
        self.visit.set(boot.visit);
        self.state.replace("open a link", boot.plan, Some(before));
        self.show(boot.view);
    }

    /// "Back to my plan": the own plan (or the defaults) in the planner.
    pub fn back_to_own(&self) {
        let plan = self
            .own
            .with_untracked(|o| o.as_ref().map(|o| o.plan.clone()));
        let before = self.visit.get_untracked();
        self.visit.set(None);
        self.state
            .replace("back to my plan", plan.unwrap_or_default(), Some(before));
        self.show(View::Planner);
    }

    /// Switches to `view` (no re-render when it is shown already).
    pub fn show(&self, view: View) {
        if self.view.get_untracked() != view {
            self.view.set(view);
        }
    }

    /// "Keep this plan": the plan on screen becomes the working plan; the previous own
    /// plan is first saved as a named plan "My plan (before <date>)".
    pub fn keep_this(&self) -> Result<(), SaveError> {
        let current = self.state.good.get_untracked();
        if let Some(own) = self.own.get_untracked().filter(|o| o.plan != current) {
            let name = self.library.with_untracked(|l| {
                l.free_name(&saved::before_name(&saved::date_text(saved::now_ms())))
            });
            self.save_named(SavedPlan { name, ..own })?;
        }
        self.visit.set(None);
        self.autosave_soon();
        Ok(())
    }

    /// The goodput of exactly `plan`: its measured knee, else the last finished search if
    /// it was run for this plan.
    pub fn goodput_of(&self, plan: &Plan) -> Option<f64> {
        self.runs.goodput_for(plan)
    }

    /// Saves the plan on screen as a named plan; how to take it back.
    pub fn save_current_as(&self, name: &str) -> Result<LibraryUndo, SaveError> {
        let plan = self.state.good.get_untracked();
        let goodput = self.goodput_of(&plan);
        self.save_named(SavedPlan {
            name: name.into(),
            plan,
            saved_at_ms: saved::now_ms(),
            goodput_rps: goodput,
        })
    }

    /// When a search finishes, gives the named plans saved while it ran (without a
    /// goodput) the goodput it found for them.
    fn fill_saved_goodput(&self) {
        let s = *self;
        s.runs.on_result(move || {
            let mut filled = s.library.get_untracked();
            if filled.fill_goodput(|p| s.runs.goodput_for(p)) {
                if let Err(e) = s.change_library(|lib| {
                    *lib = filled;
                    Ok(())
                }) {
                    s.storage_problem.set(Some(e.to_string()));
                }
            }
        });
    }

    fn save_named(&self, entry: SavedPlan) -> Result<LibraryUndo, SaveError> {
        self.change_library(|lib| lib.save(entry))
    }

    /// Applies `change` to a copy of the named plans, stores the copy and shows it; on
    /// any error nothing changes.
    fn change_library<T>(
        &self,
        change: impl FnOnce(&mut Library) -> Result<T, SaveError>,
    ) -> Result<T, SaveError> {
        let mut lib = self.library.get_untracked();
        let done = change(&mut lib)?;
        saved::write(saved::NAMED_KEY, &lib.to_json())?;
        self.library.set(lib);
        Ok(done)
    }

    /// Deletes the named plan `name`; how to take it back (`None`: there was none).
    pub fn delete_named(&self, name: &str) -> Result<Option<LibraryUndo>, SaveError> {
        self.change_library(|lib| Ok(lib.delete(name)))
    }

    /// Renames the named plan `from` to `to`; how to take it back.
    pub fn rename_named(&self, from: &str, to: &str) -> Result<LibraryUndo, SaveError> {
        self.change_library(|lib| lib.rename(from, to))
    }

    /// Takes back one change to the named plans.
    pub fn undo_named(&self, undo: &LibraryUndo) -> Result<(), SaveError> {
        self.change_library(|lib| lib.undo(undo))
    }

    /// Makes `plan` the working plan (a loaded named plan or plan file) in the planner;
    /// `what` names the step for Undo.
    pub fn open_own(&self, plan: Plan, what: &str) {
        let before = self.visit.get_untracked();
        self.visit.set(None);
        self.state.replace(what, plan, Some(before));
        self.show(View::Planner);
    }

    /// "Reset": the default plan, as a step Undo can take back.
    pub fn reset(&self) {
        self.state
            .change("reset to the defaults", |p| *p = Plan::default());
    }

    /// Takes back the last replace of the plan, with the visit state it changed.
    pub fn undo(&self) {
        if let Some(entry) = self.state.undo() {
            if let Some(visit) = entry.visit {
                self.visit.set(visit);
                self.autosave_soon();
            }
        }
    }
}

fn is_storage_message(text: &str) -> bool {
    text.starts_with("Autosave: ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn own(name: &str) -> SavedPlan {
        SavedPlan {
            name: "current".into(),
            plan: Plan {
                name: name.into(),
                ..Plan::default()
            },
            saved_at_ms: 0.0,
            goodput_rps: None,
        }
    }

    fn link(name: &str, view: View) -> Opening {
        Opening::Link {
            plan: Box::new(own(name).plan),
            view,
        }
    }

    #[test]
    fn no_link_restores_the_own_plan() {
        let b = decide(Opening::Own, Some(own("mine")));
        assert_eq!(
            (b.plan.name.as_str(), b.view, b.visit),
            ("mine", View::Planner, None)
        );
        let b = decide(Opening::Own, None);
        assert_eq!(b.plan, Plan::default());
    }

    #[test]
    fn a_shared_link_is_a_visit_and_keeps_the_own_plan() {
        let b = decide(link("theirs", View::Finance), Some(own("mine")));
        assert_eq!(b.plan.name, "theirs");
        assert_eq!(b.view, View::Finance);
        assert_eq!(b.visit, Some(Visit::Shared));
        assert_eq!(b.own.map(|o| o.plan.name), Some("mine".into()));
        // A planner link with another plan than the own one is a visit too.
        let b = decide(link("theirs", View::Planner), Some(own("mine")));
        assert_eq!((b.view, b.visit), (View::Planner, Some(Visit::Shared)));
        // The finance view of a link is a visit even in a fresh profile.
        assert_eq!(
            decide(link("theirs", View::Finance), None).visit,
            Some(Visit::Shared)
        );
    }

    #[test]
    fn reloading_the_planner_keeps_working() {
        let b = decide(link("mine", View::Planner), Some(own("mine")));
        assert_eq!((b.view, b.visit), (View::Planner, None));
        let b = decide(link("fresh", View::Planner), None);
        assert_eq!(b.visit, None);
        let b = decide(link("mine", View::Finance), Some(own("mine")));
        assert_eq!((b.view, b.visit), (View::Finance, None));
        let b = decide(link("mine", View::Embed), Some(own("mine")));
        assert_eq!(
            b.visit,
            Some(Visit::Shared),
            "an embed card never becomes the working plan"
        );
    }

    #[test]
    fn reloading_keeps_the_comparison_rows_the_address_left_out() {
        use goodput_core::plan::comparison::{
            ConstantsSource, ShootoutRecord, ShootoutResult, ShootoutRow, ShootoutSpec,
        };
        let mut mine = own("mine");
        let row = |gpu: &str, tp: u32| ShootoutRow {
            gpu: gpu.into(),
            gpu_name: gpu.into(),
            tp,
            pp: 1,
            ep: 1,
            fits: true,
            reason: None,
            goodput_rps: 2.0,
            replicas_total: 3,
            gpus_total: 3 * tp,
            cost_per_hour_usd: Some(7.5),
            cost_per_month_usd: Some(5_475.0),
            cost_per_compliant_request_usd: Some(0.000_3),
            ttft_p99_s: Some(0.3),
            tpot_p99_s: Some(0.02),
            output_tokens_per_s_per_gpu: Some(900.0),
            kv_capacity_tokens: 1e5,
            gpus_needed: Some(1),
            chosen: gpu == "h100-sxm" && tp == 1,
            constants: ConstantsSource::Datasheet,
            spec_draft_tokens: 0,
            spec_acceptance: 0.0,
            comm_share: None,
            note: None,
        };
        let spec = ShootoutSpec::default();
        mine.plan.shootout = Some(ShootoutRecord {
            fingerprint: goodput_core::plan::comparison::fingerprint_for(&mine.plan, &spec),
            spec,
            result: ShootoutResult {
                rows: vec![row("b200", 1), row("h200", 1), row("h100-sxm", 1)],
                best: Some(0),
                chosen: Some(2),
            },
            omitted: 0,
        });
        let address = goodput_core::share::link_form(&mine.plan);
        assert_eq!(
            address.shootout.as_ref().map(|r| r.result.rows.len()),
            Some(2)
        );
        let opening = |view| Opening::Link {
            plan: Box::new(address.clone()),
            view,
        };
        for view in [View::Planner, View::Finance] {
            let b = decide(opening(view), Some(mine.clone()));
            assert_eq!(b.visit, None, "{view:?}");
            assert_eq!(b.plan, mine.plan, "{view:?}: the own plan, every row");
        }
        // An address an earlier release wrote holds the whole own plan: a reload too.
        let b = decide(
            Opening::Link {
                plan: Box::new(mine.plan.clone()),
                view: View::Planner,
            },
            Some(mine.clone()),
        );
        assert_eq!((b.visit, b.plan), (None, mine.plan.clone()));
        // Someone else's link of the same form is still a visit, and opens as it came.
        let b = decide(opening(View::Planner), Some(own("mine")));
        assert_eq!((b.visit, b.plan), (Some(Visit::Shared), address));
    }

    #[test]
    fn a_broken_link_shows_the_defaults_and_its_message() {
        let b = decide(Opening::Broken("the link is cut".into()), Some(own("mine")));
        assert_eq!(b.plan, Plan::default());
        assert_eq!(b.view, View::Planner);
        assert_eq!(b.visit, Some(Visit::Broken("the link is cut".into())));
        assert_eq!(b.own.map(|o| o.plan.name), Some("mine".into()));
    }
}
