//! The day's own inputs: hourly numbers pasted in, and the autoscaler. Bad text gets a
//! message in words and leaves the plan as it was.

use goodput_core::schedule::{
    RateProfile, ScheduleOptions, ScheduleSpecError, MAX_MINUTES, MAX_MIN_REPLICAS,
};
use leptos::prelude::*;

use crate::state::PlanState;
use goodput_core::format::{sig, thousands};

/// Pasted hourly numbers as a profile, or what is wrong with them in the user's words.
pub fn hourly_problem(text: &str, absolute: bool) -> Result<RateProfile, String> {
    if text.trim().is_empty() {
        return Err("Paste 24 numbers (a day from midnight) or 168 (a week from Monday), one per line or separated by commas or spaces.".into());
    }
    RateProfile::parse(text, absolute).map_err(|e| match e {
        ScheduleSpecError::Profile(m) => format!("Hourly numbers: {m}."),
        other => other.to_string(),
    })
}

/// The box for pasted hourly numbers.
#[component]
pub fn HourlyNumbers() -> impl IntoView {
    let state = PlanState::expect_context();
    let text = RwSignal::new(String::new());
    let absolute = RwSignal::new(false);
    let error = RwSignal::new(None::<String>);
    let apply = move |_| match hourly_problem(&text.get_untracked(), absolute.get_untracked()) {
        Ok(p) => {
            error.set(None);
            state.set_day_profile(p);
        }
        Err(m) => error.set(Some(m)),
    };
    view! {
        <details class="day-hourly no-print">
            <summary>"Paste hourly numbers"</summary>
            <div class="field" class:invalid=move || error.with(Option::is_some)>
                <label for="day-hourly">"Rate per hour"</label>
                <textarea id="day-hourly" rows="5" data-testid="day-hourly" spellcheck="false"
                    placeholder="24 numbers, one per line (or 168 for a week); a header line and # comments are skipped"
                    aria-describedby="day-hourly-error"
                    prop:value=move || text.get()
                    on:input:target=move |ev| text.set(ev.target().value())></textarea>
                <label class="check">
                    <input type="checkbox" data-testid="day-absolute"
                        prop:checked=move || absolute.get()
                        on:change:target=move |ev| absolute.set(ev.target().checked()) />
                    "The numbers are req/s (otherwise a shape scaled to the peak)"
                </label>
                <button type="button" data-testid="day-hourly-use" on:click=apply>"Use these numbers"</button>
                <p class="error" id="day-hourly-error" role="alert" data-testid="day-hourly-error">
                    {move || error.get()}
                </p>
            </div>
        </details>
    }
}

/// One autoscaler field: its text, parsed and checked by `set` (an error message or `Ok`).
#[component]
fn OptionField(
    /// `data-testid` of the input (and, with `-error`, of its message).
    testid: &'static str,
    /// Label.
    label: &'static str,
    /// Unit.
    unit: &'static str,
    /// The plan's value as text.
    value: Signal<String>,
    /// Applies typed text to the plan, or says what is wrong with it.
    set: fn(&mut ScheduleOptions, &str) -> Result<(), String>,
) -> impl IntoView {
    let state = PlanState::expect_context();
    let typed = RwSignal::new(None::<String>);
    let error = RwSignal::new(None::<String>);
    let on_input = move |t: String| {
        typed.set(Some(t.clone()));
        let mut o = state
            .draft
            .with_untracked(|p| p.schedule.as_ref().map(|s| s.options.clone()))
            .unwrap_or_default();
        let checked = set(&mut o, t.trim()).and_then(|()| {
            o.validate().map_err(|e| match e {
                ScheduleSpecError::Option { message, .. } => message,
                other => other.to_string(),
            })
        });
        match checked {
            Ok(()) => {
                error.set(None);
                state.update(|p| {
                    if let Some(s) = p.schedule.as_mut() {
                        s.options = o;
                    }
                });
            }
            Err(m) => error.set(Some(format!("{label}: {m}"))),
        }
    };
    let id = format!("in-{testid}");
    view! {
        <div class="field" class:invalid=move || error.with(Option::is_some)>
            <label for=id.clone()>{label}<span class="unit">{unit}</span></label>
            <input id=id type="text" inputmode="decimal" autocomplete="off" data-testid=testid
                aria-invalid=move || error.with(Option::is_some).to_string()
                prop:value=move || typed.get().unwrap_or_else(|| value.get())
                on:input:target=move |ev| on_input(ev.target().value()) />
            <p class="error" role="alert" data-testid=format!("{testid}-error")>{move || error.get()}</p>
        </div>
    }
}

fn minutes(t: &str) -> Result<f64, String> {
    t.trim().parse::<f64>().map_err(|_| {
        refused(
            &format!(
                "a number of minutes from 0 to {}",
                thousands(MAX_MINUTES as i64)
            ),
            t,
        )
    })
}

/// Why typed text is not a value: `what` it must be, and the text as typed.
fn refused(what: &str, text: &str) -> String {
    match text.trim() {
        "" => format!("is required: enter {what}"),
        t => format!("must be {what}; it is {t}"),
    }
}

/// The autoscaler's inputs.
#[component]
pub fn AutoscalerInputs() -> impl IntoView {
    let state = PlanState::expect_context();
    let opt = move |f: fn(&ScheduleOptions) -> String| {
        Signal::derive(move || {
            state.good.with(|p| {
                p.schedule
                    .as_ref()
                    .map(|s| f(&s.options))
                    .unwrap_or_default()
            })
        })
    };
    view! {
        <fieldset class="day-autoscaler">
            <legend>"Autoscaler"</legend>
            <OptionField testid="day-lag" label="Scale-up lag" unit="min"
                value=opt(|o| sig(o.scale_up_lag_min))
                set=|o, t| { o.scale_up_lag_min = minutes(t)?; Ok(()) } />
            <OptionField testid="day-cooldown" label="Cool-down" unit="min"
                value=opt(|o| sig(o.cooldown_min))
                set=|o, t| { o.cooldown_min = minutes(t)?; Ok(()) } />
            <OptionField testid="day-lead" label="Order ahead" unit="min"
                value=opt(|o| sig(o.lead_min))
                set=|o, t| { o.lead_min = minutes(t)?; Ok(()) } />
            <OptionField testid="day-min-replicas" label="Fewest replicas" unit=""
                value=opt(|o| o.min_replicas.to_string())
                set=|o, t| {
                    o.min_replicas = t.trim().parse().map_err(|_| {
                        refused(&format!("a whole number from 1 to {}", thousands(i64::from(MAX_MIN_REPLICAS))), t)
                    })?;
                    Ok(())
                } />
        </fieldset>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_hourly_numbers_say_which_line_and_what_was_expected() {
        let mut day: Vec<String> = (0..24).map(|h| format!("{}", h + 1)).collect();
        assert_eq!(
            hourly_problem(&day.join("\n"), false).map(|p| p.hourly.len()),
            Ok(24)
        );
        day[4] = "lots".into();
        let e = hourly_problem(&day.join("\n"), false).expect_err("a word");
        assert_eq!(e, "Hourly numbers: line 5: 'lots' is not a number.");
        day.truncate(23);
        day[4] = "5".into();
        let e = hourly_problem(&day.join("\n"), false).expect_err("one short");
        assert!(
            e.contains("23 hourly values; give 24 (a day) or 168 (a week)"),
            "{e}"
        );
        assert!(hourly_problem("  ", false)
            .expect_err("empty")
            .starts_with("Paste 24 numbers"));
    }

    #[test]
    fn autoscaler_options_are_refused_in_words_and_units() {
        assert_eq!(
            minutes("x"),
            Err("must be a number of minutes from 0 to 1,440; it is x".into())
        );
        assert_eq!(
            minutes(" "),
            Err("is required: enter a number of minutes from 0 to 1,440".into())
        );
        let check = |f: fn(&mut ScheduleOptions)| {
            let mut o = ScheduleOptions::default();
            f(&mut o);
            match o.validate() {
                Err(ScheduleSpecError::Option { message, .. }) => message,
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(
            check(|o| o.scale_up_lag_min = 1e308),
            "must be a number of minutes from 0 to 1,440; it is 1e308"
        );
        assert_eq!(
            check(|o| o.min_replicas = 0),
            "must be a whole number from 1 to 100,000; it is 0"
        );
    }
}
