//! The day travels in a share link: the profile (a shape, pasted numbers or a trace's
//! hourly shape) and the autoscaler come back exactly, and the link stays short.

use super::{RateProfile, ScheduleOptions, ScheduleSpec};
use crate::plan::Plan;
use crate::share;

fn with_day(profile: RateProfile) -> Plan {
    Plan {
        schedule: Some(ScheduleSpec {
            profile,
            options: ScheduleOptions {
                scale_up_lag_min: 20.0,
                cooldown_min: 45.0,
                lead_min: 5.0,
                min_replicas: 2,
                ..ScheduleOptions::default()
            },
        }),
        ..Plan::default()
    }
}

#[test]
fn a_day_round_trips_through_a_share_link() {
    let week: Vec<f64> = (0..168)
        .map(|h| 1.0 + (h as f64 * 0.37).sin().abs() / 3.0)
        .collect();
    for profile in [
        RateProfile::named("business-hours").expect("a shape"),
        RateProfile {
            hourly: week,
            absolute: true,
            source: "hourly rates given".into(),
        },
    ] {
        let plan = with_day(profile);
        let url = share::share_url("https://example.org/", &plan, false);
        let back = share::decode(&url).expect("a valid link");
        assert_eq!(back.plan, plan, "bit for bit");
    }
    // A named day adds little to a typical link.
    let plain = share::share_url("", &Plan::default(), false).len();
    let day = share::share_url(
        "",
        &with_day(RateProfile::named("global-consumer").expect("a shape")),
        false,
    )
    .len();
    assert!(day < plain + 400, "{plain} -> {day} characters");
}
