use super::*;

/// Goodput 10 req/s at 70% → 7 req/s planned per replica; N+1; $2 per GPU-hour, 1 GPU.
fn hand_plan() -> Plan {
    let mut p = Plan::default();
    p.planning.utilization = 0.7;
    p.planning.redundancy = 1;
    p.planning.hours_per_month = 730.0;
    p.hardware.gpu_hour_usd = 2.0;
    p.hardware.tp_degree = 1;
    p
}

/// 0 req/s at night, 7 in the morning, 30 in the afternoon, 7.01 in the evening.
fn hand_profile() -> RateProfile {
    let mut v = vec![0.0; 6];
    v.extend([7.0; 6]);
    v.extend([30.0; 6]);
    v.extend([7.01; 6]);
    RateProfile {
        hourly: v,
        absolute: true,
        source: String::new(),
    }
}

fn arithmetic(lag: f64, cooldown: f64, lead: f64) -> Schedule {
    let o = ScheduleOptions {
        scale_up_lag_min: lag,
        cooldown_min: cooldown,
        lead_min: lead,
        simulate: false,
        ..ScheduleOptions::default()
    };
    let run = ScheduleRun::new(&hand_plan(), &hand_profile(), 10.0, &o).unwrap();
    assert!(run.is_done(), "nothing to simulate");
    run.result().unwrap()
}

#[test]
fn hourly_replicas_and_costs_by_hand() {
    let s = arithmetic(0.0, 0.0, 0.0);
    // ⌈0/7⌉+1 = 1, ⌈7/7⌉+1 = 2, ⌈30/7⌉+1 = 6, ⌈7.01/7⌉+1 = 3.
    let want: Vec<u32> = [1, 2, 6, 3]
        .iter()
        .flat_map(|&r| std::iter::repeat_n(r, 6))
        .collect();
    let got: Vec<u32> = s.hours.iter().map(|h| h.replicas).collect();
    assert_eq!(got, want);
    assert_eq!(s.planned_rps_per_replica, 7.0);
    assert_eq!(s.static_replicas, 6);
    // Static: 6 replicas × $2 × 24 h = $288 a day; × 730/24 = $8,760 a month.
    assert!((s.static_cost_per_day_usd - 288.0).abs() < 1e-9);
    assert!((s.static_cost_per_month_usd - 8760.0).abs() < 1e-9);
    // Autoscaled with no lag or cool-down: 6·(1 + 2 + 6 + 3) = 72 replica-hours = $144.
    assert!((s.autoscaled_cost_per_day_usd - 144.0).abs() < 1e-9);
    assert!((s.autoscaled_cost_per_month_usd - 4380.0).abs() < 1e-9);
    assert!((s.savings_share - 0.5).abs() < 1e-12);
    for h in &s.hours {
        assert_eq!((h.serving_min, h.serving_max), (h.replicas, h.replicas));
        assert!((h.cost_usd - 2.0 * h.replicas as f64).abs() < 1e-9);
        assert_eq!(h.attainment, None);
    }
}

#[test]
fn lag_and_cooldown_by_hand() {
    let s = arithmetic(15.0, 30.0, 0.0);
    // Scale-ups are billed from the order, so billing is unchanged going up, but the
    // new replicas serve 15 minutes late.
    assert_eq!((s.hours[6].serving_min, s.hours[6].serving_max), (1, 2));
    assert_eq!(s.hours[12].serving_min, 2);
    assert!((s.hours[12].billed_replica_hours - 6.0).abs() < 1e-12);
    // Going down, the cool-down keeps the old fleet 30 more minutes: 18:00–18:29 at 6,
    // then 3 → 4.5 replica-hours; 0:00–0:29 at 3, then 1 → 2.
    assert!((s.hours[18].billed_replica_hours - 4.5).abs() < 1e-12);
    assert!((s.hours[0].billed_replica_hours - 2.0).abs() < 1e-12);
    // 2 + 5·1 + 6·2 + 6·6 + 4.5 + 5·3 = 74.5 replica-hours = $149.
    assert!((s.autoscaled_cost_per_day_usd - 149.0).abs() < 1e-9);

    // Ordering 15 minutes ahead with a 15-minute lag: full strength on the hour, paid
    // for 15 minutes earlier (hour 11: 2 + 4 × 15/60 = 3 replica-hours).
    let s = arithmetic(15.0, 30.0, 15.0);
    assert_eq!(s.hours[12].serving_min, 6);
    assert_eq!(s.hours[6].serving_min, 2);
    assert!((s.hours[11].billed_replica_hours - 3.0).abs() < 1e-12);
}

#[test]
fn profiles_parse_scale_and_refuse() {
    let b = RateProfile::named("business-hours").unwrap();
    assert!(!b.absolute);
    let r = b.rates_rps(30.0);
    assert_eq!(r.iter().cloned().fold(0.0, f64::max), 30.0);
    assert_eq!(shape_words("business-hours"), "Business hours");
    assert_eq!(
        RateProfile::named("global-consumer").unwrap().source,
        "Global consumer shape"
    );
    assert!(RateProfile::named("nope")
        .unwrap_err()
        .to_string()
        .contains("business-hours"));
    // One per line, with a header and a comment.
    let text = format!("rate\n# night\n{}", vec!["2"; 24].join("\n"));
    let p = RateProfile::parse(&text, false).unwrap();
    assert_eq!(p.rates_rps(10.0), vec![10.0; 24]);
    // hour,rate rows, absolute.
    let text: String = (0..24)
        .map(|h| format!("{h},{}\n", h as f64 + 0.5))
        .collect();
    let p = RateProfile::parse(&text, true).unwrap();
    assert_eq!(p.rates_rps(99.0)[3], 3.5);
    // The same rows in any order, under a header: placed by hour.
    let shuffled: String = (0..24)
        .map(|k| (k * 7) % 24)
        .map(|h| format!("{h},{}\n", h as f64 + 0.5))
        .collect();
    let again = RateProfile::parse(&format!("hour,rate\n{shuffled}"), true).unwrap();
    assert_eq!(again.hourly, p.hourly);
    // A repeated or impossible hour is named with its line.
    let twice = text.replace("5,5.5\n", "4,9\n");
    let e = RateProfile::parse(&twice, true).unwrap_err().to_string();
    assert!(
        e.contains("line 6: hour 4 is given twice (line 5 too)"),
        "{e}"
    );
    let e = RateProfile::parse(&text.replace("23,23.5", "24,1"), true)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("line 24: hour 24 of an hour,rate row must be a whole number from 0 to 23"),
        "{e}"
    );
    let e = RateProfile::parse("a,b,c", false).unwrap_err().to_string();
    assert!(e.contains("no numbers: 'a,b,c' is not a number"), "{e}");
    // Twelve pairs are a comma-separated list of 24 values, as before.
    let pairs = ["1,2"; 12].join("\n");
    assert_eq!(RateProfile::parse(&pairs, false).unwrap().hourly.len(), 24);
    // One comma-separated line.
    let text = vec!["1"; 168].join(",");
    assert_eq!(RateProfile::parse(&text, false).unwrap().hourly.len(), 168);
    assert!(RateProfile::parse("1\n2\n3", false)
        .unwrap_err()
        .to_string()
        .contains("give 24"));
    assert!(RateProfile::parse("1\nx\n", false)
        .unwrap_err()
        .to_string()
        .contains("line 2"));
    // Spaces separate numbers as commas do; a word is quoted alone, not its whole line.
    let spaced = [
        "1 2 3 4 5 6",
        "7 8 9 10 11 12",
        "1 2 3 4 5 6",
        "7  8\t9 10 11 12",
    ]
    .join("\n");
    let p = RateProfile::parse(&spaced, true).unwrap();
    assert_eq!(p.hourly[..7], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]);
    assert_eq!(p.hourly.len(), 24);
    let e = RateProfile::parse("1 2 3\n4 five 6 7 8 9 10 11 12 13 14 15", false)
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 2: 'five' is not a number"), "{e}");
    assert!(!e.contains("4 five"), "{e}");
    assert!(RateProfile::parse(&vec!["0"; 24].join("\n"), false).is_err());
    assert!(RateProfile::parse(&vec!["-1"; 24].join("\n"), false).is_err());
}

/// Quiet mornings at 2 req/s, then 80 req/s from noon: the default plan (goodput about
/// 22 req/s) needs 2 replicas, then 7.
fn ramp_schedule(lag: f64, lead: f64) -> Schedule {
    let mut plan = Plan::default();
    plan.run.num_requests = 600;
    plan.run.warmup_requests = 100;
    let mut v = vec![2.0; 12];
    v.extend([80.0; 12]);
    let profile = RateProfile {
        hourly: v,
        absolute: true,
        source: String::new(),
    };
    let o = ScheduleOptions {
        scale_up_lag_min: lag,
        cooldown_min: 30.0,
        lead_min: lead,
        ..ScheduleOptions::default()
    };
    schedule_threads(&plan, &profile, 22.0, &o, 2).unwrap()
}

#[test]
fn a_lagging_scale_up_dips_and_scaling_ahead_removes_the_dip() {
    let late = ramp_schedule(20.0, 0.0);
    let noon = &late.hours[12];
    assert_eq!(noon.replicas, 7);
    assert_eq!(noon.serving_min, 2);
    assert!(noon.ramp);
    // For 20 minutes two replicas take 40 req/s each, far past their goodput.
    let dip = noon.attainment.unwrap();
    assert!(dip < 0.6, "attainment at noon with a 20-minute lag: {dip}");
    // Steady hours meet the SLO.
    assert!(late.hours[5].attainment.unwrap() > 0.97);
    assert!(late.hours[16].attainment.unwrap() > 0.97);
    assert!(late.ramp_attainment.unwrap() < late.attainment.unwrap());
    assert_eq!(late.min_attainment, Some(dip));

    // Ordering 30 minutes ahead covers the 20-minute lag: no dip, a little more cost.
    let ahead = ramp_schedule(20.0, 30.0);
    let noon = &ahead.hours[12];
    assert_eq!(noon.serving_min, 7);
    let a = noon.attainment.unwrap();
    assert!(a > 0.97, "attainment at noon scaling ahead: {a}");
    assert!(ahead.autoscaled_cost_per_day_usd > late.autoscaled_cost_per_day_usd);
    assert!(ahead.autoscaled_cost_per_day_usd < ahead.static_cost_per_day_usd);
}

#[test]
fn jobs_can_run_anywhere_in_any_order() {
    let mut plan = Plan::default();
    plan.run.num_requests = 400;
    plan.run.warmup_requests = 50;
    let profile = RateProfile::named("business-hours").unwrap();
    let o = ScheduleOptions::default();
    let whole = schedule_threads(&plan, &profile, 22.0, &o, 1).unwrap();
    let mut run = ScheduleRun::new(&plan, &profile, 22.0, &o).unwrap();
    assert_eq!(run.arithmetic().attainment, None);
    let mut jobs = run.next_batch();
    assert!(run.next_batch().is_empty());
    jobs.reverse();
    // Through JSON, as a worker message would go.
    let text = serde_json::to_string(&jobs).unwrap();
    let jobs: Vec<RampJob> = serde_json::from_str(&text).unwrap();
    for j in &jobs {
        assert!(!run.is_done());
        run.feed(&[run_ramp_job(&plan, j).unwrap()]);
    }
    assert_eq!(run.progress(), (jobs.len(), jobs.len()));
    assert_eq!(run.result().unwrap(), whole);
}

#[test]
fn a_schedule_travels_in_the_plan_and_its_link() {
    // Plans without one encode exactly as before: no key at all.
    let json = serde_json::to_string(&Plan::default()).unwrap();
    assert!(!json.contains("schedule"));
    let plan = Plan {
        schedule: Some(ScheduleSpec {
            profile: RateProfile::named("global-consumer").unwrap(),
            options: ScheduleOptions {
                scale_up_lag_min: 12.0,
                lead_min: 5.0,
                ..ScheduleOptions::default()
            },
        }),
        ..Plan::default()
    };
    plan.validate().unwrap();
    let link = crate::share::encode(&plan);
    assert!(link.len() < 1500, "link of {} characters", link.len());
    assert_eq!(crate::share::decode(&link).unwrap().plan, plan);
    // Bounded like the rest of the plan.
    let mut bad = plan.clone();
    if let Some(s) = bad.schedule.as_mut() {
        s.profile.hourly.truncate(3);
    }
    let e = bad.validate().unwrap_err();
    assert_eq!(e.field, "schedule.profile");
    // The field names the profile; the words do not name it again.
    assert!(!e.message.contains("rate profile"), "{}", e.message);
    assert!(e.message.contains('3'), "{}", e.message);
    let mut bad = plan.clone();
    if let Some(s) = bad.schedule.as_mut() {
        s.options.cooldown_min = -1.0;
    }
    assert_eq!(bad.validate().unwrap_err().field, "schedule.options");
}

#[test]
fn a_week_is_costed_per_week_and_per_month() {
    // Weekdays 9:00–16:59 at 30 req/s, everything else at 7: 6 replicas, else 2.
    let hourly: Vec<f64> = (0..168)
        .map(|h| {
            let (day, hour) = (h / 24, h % 24);
            if day < 5 && (9..17).contains(&hour) {
                30.0
            } else {
                7.0
            }
        })
        .collect();
    let profile = RateProfile {
        hourly,
        absolute: true,
        source: String::new(),
    };
    let o = ScheduleOptions {
        scale_up_lag_min: 0.0,
        cooldown_min: 0.0,
        simulate: false,
        ..ScheduleOptions::default()
    };
    let s = ScheduleRun::new(&hand_plan(), &profile, 10.0, &o)
        .unwrap()
        .result()
        .unwrap();
    assert_eq!(s.period_hours, 168);
    // 5 days × 8 h × 6 + (168 − 40) h × 2 = 240 + 256 = 496 replica-hours = $992 a week.
    assert!((s.autoscaled_cost_per_period_usd - 992.0).abs() < 1e-9);
    assert!((s.autoscaled_cost_per_day_usd - 992.0 / 7.0).abs() < 1e-9);
    assert!((s.autoscaled_cost_per_month_usd - 992.0 * 730.0 / 168.0).abs() < 1e-9);
    // Static: 6 replicas × $2 × 168 h = $2,016 a week.
    assert!((s.static_cost_per_period_usd - 2016.0).abs() < 1e-9);
}
