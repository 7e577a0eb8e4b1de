//! "Re-run with fresh seeds": draws a new base seed from the browser's cryptographic
//! generator and runs the plan again, then says how far the goodput moved. The seed is
//! an ordinary plan field, so it shows in the inputs and travels in the link, and the
//! run stays reproducible; Undo brings the old seed back.

use goodput_core::format::rps;
use leptos::prelude::*;

use crate::compute::RunController;
use crate::hooks::use_report::use_report;
use crate::state::PlanState;

/// A fresh base seed in `0..=u32::MAX` (the seed field's range: it is typed and read as
/// a whole number, and must survive JSON and the link exactly). Drawn by `getrandom`;
/// in the browser that is `crypto.getRandomValues`.
pub fn fresh_seed() -> Result<u64, String> {
    let mut bytes = [0u8; 4];
    getrandom::fill(&mut bytes).map_err(|e| format!("no random source in this browser: {e}"))?;
    Ok(u64::from(u32::from_le_bytes(bytes)))
}

/// How far the goodput moved between two seeds, in words:
/// "Seed 42: 22.06 req/s. Seed 917: 21.80 req/s (−1.2%)."
pub fn moved_words(before: (u64, f64), after: (u64, f64)) -> String {
    let (s0, g0) = before;
    let (s1, g1) = after;
    let change = if g0 > 0.0 {
        let pct = (g1 / g0 - 1.0) * 100.0;
        let sign = if pct < 0.0 { "−" } else { "+" };
        format!(" ({sign}{:.1}%)", pct.abs())
    } else {
        String::new()
    };
    format!(
        "Seed {s0}: {} req/s. Seed {s1}: {} req/s{change}.",
        rps(g0),
        rps(g1)
    )
}

/// The button and, after a re-run, how far the answer moved.
#[component]
pub fn FreshSeed() -> impl IntoView {
    let state = PlanState::expect_context();
    let runs = RunController::expect_context();
    let report = use_report().report;
    // The seed and goodput before the last click.
    let before = RwSignal::new(None::<(u64, f64)>);
    let error = RwSignal::new(None::<String>);
    let goodput_now =
        move || report.with(|r| r.as_ref().map(|(p, r)| (p.run.seed, r.goodput.goodput_rps)));
    let click = move |_| match fresh_seed() {
        Ok(seed) => {
            error.set(None);
            before.set(untrack(goodput_now));
            state.change("fresh seeds", |p| p.run.seed = seed);
        }
        Err(e) => error.set(Some(e)),
    };
    let words = move || {
        let b = before.get()?;
        let now = goodput_now()?;
        // Only once the run for the new seed has finished.
        (now.0 != b.0 && runs.goodput_for(&state.good.get()).is_some()).then(|| moved_words(b, now))
    };
    view! {
        <div class="fresh-seed">
            <button type="button" data-testid="fresh-seed" on:click=click
                disabled=move || state.run_blocked().is_some()
                title=move || state.run_blocked().unwrap_or("Draw a new random seed and run again, to see how much the answer depends on chance")>
                "Re-run with fresh seeds"
            </button>
            <span class="fresh-seed-words" data-testid="fresh-seed-words" aria-live="polite">
                {move || error.get().or_else(words)}
            </span>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_are_drawn_in_the_fields_range_and_differ() {
        let draws: Vec<u64> = (0..8).map(|_| fresh_seed().expect("random")).collect();
        assert!(draws.iter().all(|&s| s <= u64::from(u32::MAX)));
        let mut distinct = draws.clone();
        distinct.sort_unstable();
        distinct.dedup();
        // Eight draws of 32 bits: a repeat is a broken source, not bad luck.
        assert_eq!(distinct.len(), draws.len(), "{draws:?}");
    }

    #[test]
    fn the_move_is_said_with_both_seeds_and_the_change() {
        assert_eq!(
            moved_words((42, 22.06), (917, 21.80)),
            "Seed 42: 22.06 req/s. Seed 917: 21.80 req/s (−1.2%)."
        );
        assert_eq!(
            moved_words((1, 10.0), (2, 10.5)),
            "Seed 1: 10.00 req/s. Seed 2: 10.50 req/s (+5.0%)."
        );
        assert_eq!(
            moved_words((1, 0.0), (2, 3.0)),
            "Seed 1: 0.00 req/s. Seed 2: 3.00 req/s."
        );
    }
}
