//! `goodput schedule`: traffic over a day, the replicas each hour needs, an autoscaler
//! with lag and cool-down, static against autoscaled cost, attainment during the ramps.

use goodput_core::capacity::knee_from_sweep;
use goodput_core::format::{percent, percent_tenths, usd};
use goodput_core::schedule::{
    schedule_threads, RateProfile, Schedule, ScheduleOptions, ScheduleSpecError, SHAPES,
};
use goodput_core::search::search_goodput_threads;
use goodput_core::trace::{TraceFormat, TraceSummary};

use clap::Command;

use crate::args::{json, real, switch, text_flag, whole, Args};

/// The command and its own flags; the plan flags are added from the registry.
pub fn command() -> Command {
    Command::new("schedule")
        .about("traffic over a day: replicas per hour, autoscaled vs static cost, ramp attainment")
        .long_about(
            "For every hour of a day (or a week), the replicas the rate needs at the planned \
             utilisation plus redundancy, an autoscaler's fleet beside a static one sized for \
             the peak, the cost of each, and the simulated SLO attainment of each hour with the \
             autoscaler's ramps (one replica at rate / replicas serving, minute by minute). A \
             plan with a `schedule` (profile and autoscaler, as a share link carries them) gives \
             the defaults; the flags override them.",
        )
        .arg(text_flag(
            "profile",
            "FILE|NAME",
            "A shape: business-hours, global-consumer, flat (default: the plan's own \
             schedule.profile if it has one, else business-hours); or a FILE of 24 or 168 \
             hourly numbers: one per line, comma-separated, or 'hour,rate' rows ('-' reads \
             stdin), a shape scaled so its peak is --peak-rate",
        ))
        .arg(switch(
            "absolute",
            "The profile file's numbers (or the trace's hourly rates) are fleet rates in req/s \
             as they stand, not a shape scaled to --peak-rate",
        ))
        .arg(text_flag(
            "trace",
            "FILE",
            "An Azure LLM inference CSV, a BurstGPT CSV or Mooncake JSONL: its prompt/output \
             lengths (and Mooncake's prefix reuse) replace the plan's, and, without --profile, \
             its hourly rates give the shape (needs a day)",
        ))
        .arg(text_flag(
            "trace-format",
            "F",
            "azure, burstgpt or mooncake (default: detected from the first line)",
        ))
        .arg(real(
            "goodput",
            "R",
            "Goodput of one replica [requests/s] (default: the plan's measured sweep, else the \
             simulator's goodput search)",
        ))
        .arg(real(
            "scale-up-lag-min",
            "M",
            "Minutes from ordering a replica to its serving (default 10)",
        ))
        .arg(real(
            "cooldown-min",
            "M",
            "Minutes before an unneeded replica is removed (default 30)",
        ))
        .arg(real(
            "lead-min",
            "M",
            "Order an hour's replicas M minutes ahead (default 0: reactive)",
        ))
        .arg(whole(
            "min-replicas",
            "N",
            "Fewest replicas ever running (default 1)",
        ))
        .arg(whole(
            "hour-replications",
            "N",
            "Simulations per hour, averaged (default 1)",
        ))
        .arg(switch("no-sim", "Sizing and cost only"))
        .arg(crate::search::threads_arg())
        .arg(json(
            "Print {hours: [{hour, rate_rps, replicas, serving_min, cost_usd, attainment, ...}], \
             static_cost_per_month_usd, autoscaled_cost_per_month_usd, savings_per_month_usd, \
             attainment, ...}",
        ))
}

/// Most bytes a profile file may have.
const MAX_PROFILE_BYTES: u64 = 1 << 20;

fn read_profile(spec: &str, absolute: bool) -> Result<RateProfile, String> {
    let text = if spec == "-" || std::path::Path::new(spec).is_file() {
        crate::input::read_text("--profile", spec, MAX_PROFILE_BYTES)?
    } else {
        if absolute {
            return Err(format!(
                "--absolute: '{spec}' is a shape; --absolute is for a file of hourly rates"
            ));
        }
        return RateProfile::named(spec).map_err(|e| {
            let names: Vec<&str> = SHAPES.iter().map(|s| s.0).collect();
            match e {
                ScheduleSpecError::Profile(_) => format!(
                    "--profile: '{spec}' is neither a file nor a shape ({})",
                    names.join(", ")
                ),
                other => format!("--profile: {other}"),
            }
        });
    };
    let mut p = RateProfile::parse(&text, absolute).map_err(|e| format!("--profile: {e}"))?;
    p.source = format!("{} from {spec}", p.source);
    Ok(p)
}

/// Runs the command.
pub fn run(args: &mut Args) -> Result<String, String> {
    let json = args.flag("--json");
    let absolute = args.flag("--absolute");
    let no_sim = args.flag("--no-sim");
    let profile_spec = args.value("--profile");
    let trace_path = args.value("--trace");
    let trace_format =
        match args.value("--trace-format") {
            None => None,
            Some(f) => Some(TraceFormat::parse(&f).ok_or_else(|| {
                format!("--trace-format: '{f}' is not azure, burstgpt or mooncake")
            })?),
        };
    let goodput = args.f64("--goodput");
    let lag = args.f64("--scale-up-lag-min");
    let cooldown = args.f64("--cooldown-min");
    let lead = args.f64("--lead-min");
    let min_replicas = args.u32("--min-replicas");
    let replications = args.u32("--hour-replications");
    let threads = crate::search::threads(args)?;
    let mut plan = args.plan()?;
    // The plan's own schedule (from a plan file or a link) gives the defaults.
    let saved = plan.schedule.clone();
    let base = saved
        .as_ref()
        .map(|s| s.options.clone())
        .unwrap_or_default();
    let options = ScheduleOptions {
        scale_up_lag_min: lag.unwrap_or(base.scale_up_lag_min),
        cooldown_min: cooldown.unwrap_or(base.cooldown_min),
        lead_min: lead.unwrap_or(base.lead_min),
        min_replicas: min_replicas.unwrap_or(base.min_replicas),
        replications: replications.unwrap_or(base.replications),
        simulate: !no_sim && base.simulate,
    };
    options.validate().map_err(|e| match e {
        ScheduleSpecError::Option { field, message } => {
            let flag = match field {
                "replications" => "hour-replications".to_string(),
                f => f.replace('_', "-"),
            };
            format!("--{flag}: {message}")
        }
        other => other.to_string(),
    })?;
    if trace_format.is_some() && trace_path.is_none() {
        return Err("--trace-format: give --trace FILE as well".into());
    }

    let trace = match &trace_path {
        Some(path) => Some(crate::input::read_trace("--trace", path, trace_format)?),
        None => None,
    };
    let changes = match &trace {
        Some(t) => {
            let c = t.apply_to(&mut plan);
            plan.validate()
                .map_err(|e| format!("--trace: the trace's lengths make an invalid plan: {e}"))?;
            c
        }
        None => Vec::new(),
    };
    let profile = match (&profile_spec, &trace) {
        (Some(spec), _) => read_profile(spec, absolute)?,
        (None, Some(t)) => {
            let mut p = RateProfile::from_trace(t).map_err(|e| format!("--trace: {e}"))?;
            p.absolute = absolute;
            p
        }
        (None, None) => {
            if absolute {
                return Err("--absolute: give --profile FILE of hourly rates".into());
            }
            match &saved {
                Some(s) => s.profile.clone(),
                None => RateProfile::named("business-hours").map_err(|e| e.to_string())?,
            }
        }
    };

    let target = plan.slo.attainment_target;
    let (goodput, source) = match goodput {
        Some(g) => (g, "given".to_string()),
        None if !plan.planning.measured_sweep.is_empty() => (
            knee_from_sweep(&plan.planning.measured_sweep, target)
                .map_err(|e| format!("planning.measured_sweep: {e}"))?,
            format!(
                "knee of the plan's measured sweep at {} attainment",
                percent(target)
            ),
        ),
        None => {
            let mut line = crate::progress::ProgressLine::new("goodput search", "simulations");
            let r = search_goodput_threads(&plan, threads, &mut line.callback())
                .map_err(|e| e.to_string())?;
            (
                r.goodput_rps,
                format!("simulated, {} replications per rate", r.replications),
            )
        }
    };
    let s =
        schedule_threads(&plan, &profile, goodput, &options, threads).map_err(|e| e.to_string())?;
    if json {
        let mut v = serde_json::to_value(&s).map_err(|e| format!("schedule: {e}"))?;
        if let Some(obj) = v.as_object_mut() {
            obj.insert("goodput_source".into(), serde_json::Value::String(source));
            if let Some(t) = &trace {
                obj.insert(
                    "trace".into(),
                    serde_json::to_value(t).map_err(|e| format!("schedule: {e}"))?,
                );
                obj.insert("plan_changes".into(), serde_json::json!(changes));
            }
        }
        return serde_json::to_string_pretty(&v).map_err(|e| format!("schedule: {e}"));
    }
    let mut out = String::new();
    if let Some(t) = &trace {
        out.push_str(&trace_text(t, &changes));
        out.push_str("\n\n");
    }
    out.push_str(&text(&s, &source));
    Ok(out)
}

fn trace_text(t: &TraceSummary, changes: &[String]) -> String {
    let mut lines = vec![format!(
        "trace: {} format, {} rows over {:.2} h ({:.3} req/s mean), {} bad rows{}",
        t.format.name(),
        t.rows,
        t.span_s / 3600.0,
        t.mean_rate_rps,
        t.bad_rows,
        if t.truncated { ", truncated" } else { "" }
    )];
    for b in &t.bad_examples {
        lines.push(format!("  bad row, line {}: {}", b.line, b.reason));
    }
    lines.push(format!(
        "  prompt mean {:.0} tokens, output mean {:.0} tokens{}",
        t.prompt.mean,
        t.output.mean,
        if t.zero_output_rows > 0 {
            format!(" ({} rows with 0 output left out)", t.zero_output_rows)
        } else {
            String::new()
        }
    ));
    if let Some(p) = &t.prefix {
        lines.push(format!(
            "  prefix reuse: {} of blocks seen before, {} of requests start with a cached block",
            percent_tenths(p.block_reuse),
            percent_tenths(p.hit_rate)
        ));
    }
    for c in changes {
        lines.push(format!("  plan: {c}"));
    }
    lines.join("\n")
}

/// The schedule as a table and a verdict.
pub fn text(s: &Schedule, source: &str) -> String {
    let o = &s.options;
    let mut lines = vec![
        format!(
            "profile: {}; peak {:.3} req/s",
            if s.profile_source.is_empty() {
                "hourly rates"
            } else {
                &s.profile_source
            },
            s.peak_rate_rps
        ),
        format!(
            "goodput {:.3} req/s per replica ({source}); planned {:.3} req/s per replica",
            s.goodput_rps, s.planned_rps_per_replica
        ),
        format!(
            "autoscaler: scale-up lag {} min, cool-down {} min, lead {} min, at least {} replica(s); static fleet {} replicas",
            o.scale_up_lag_min, o.cooldown_min, o.lead_min, o.min_replicas, s.static_replicas
        ),
        String::new(),
        format!(
            "{:>4}  {:>10}  {:>8}  {:>9}  {:>10}  {:>10}",
            "hour", "rate_rps", "replicas", "serving", "cost_usd", "attainment"
        ),
    ];
    for h in &s.hours {
        let serving = if h.serving_min == h.serving_max {
            h.serving_min.to_string()
        } else {
            format!("{}-{}", h.serving_min, h.serving_max)
        };
        let att = match h.attainment {
            Some(a) => format!("{}{}", percent_tenths(a), if h.ramp { " ramp" } else { "" }),
            None => "-".into(),
        };
        lines.push(format!(
            "{:>4}  {:>10.3}  {:>8}  {:>9}  {:>10}  {:>10}",
            h.hour,
            h.rate_rps,
            h.replicas,
            serving,
            usd(h.cost_usd),
            att
        ));
    }
    lines.push(String::new());
    lines.push(format!(
        "static_cost_per_month_usd       {} ({} per day)",
        usd(s.static_cost_per_month_usd),
        usd(s.static_cost_per_day_usd)
    ));
    lines.push(format!(
        "autoscaled_cost_per_month_usd   {} ({} per day)",
        usd(s.autoscaled_cost_per_month_usd),
        usd(s.autoscaled_cost_per_day_usd)
    ));
    lines.push(s.verdict());
    if s.simulations > 0 {
        lines.push(format!(
            "({} simulations of one replica, {} requests)",
            s.simulations, s.simulated_requests
        ));
    }
    lines.join("\n")
}
