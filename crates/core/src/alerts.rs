//! Prometheus alert rules for the plan's SLO.
//!
//! The "bad event" is one request that misses any objective. The gateway counts
//! `slo_total` (every request) and `slo_met_total` (requests that met every objective),
//! both labelled `class`. The error ratio over a window is
//! `1 − rate(slo_met_total[w]) / rate(slo_total[w])`, and an alert fires when it exceeds
//! `burn × (1 − target)` over a long and a short window at once (multi-window,
//! multi-burn-rate):
//!
//! | severity | burn | long window | short window | budget spent (30 d) |
//! | --- | --- | --- | --- | --- |
//! | page | 14.4× | 1 h | 5 m | 2% |
//! | page | 6× | 6 h | 30 m | 5% |
//! | ticket | 1× | 3 d | 6 h | 10% |
//!
//! At a loose target a standard rule can need an error ratio above 1 (14.4× a 10%
//! budget is 1.44): it could never fire, so it is left out, with a comment saying why,
//! and [`fit_window`] offers the pair that fits: the burn that fires at a 75% error
//! ratio, over a long window that spends the same share of the budget.
//!
//! A queue-depth warning on `vllm:num_requests_waiting` leads the lagging burn alerts.
//! Its threshold comes from Little's law: a replica draining at its goodput `G` clears
//! `Q` waiting requests in `Q / G` seconds, so `Q = ⌈G × TTFT objective / 2⌉` means a
//! newcomer already spends half its TTFT budget queueing.

use crate::format::plain;
use crate::plan::Plan;
use serde::{Deserialize, Serialize};

/// One burn-rate alert of the multi-window set.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BurnWindow {
    /// Alert name suffix (`Fast`, `Medium`, `Slow`).
    pub name: &'static str,
    /// Burn-rate factor.
    pub burn: f64,
    /// Long window (Prometheus duration, e.g. `1h`).
    pub long: &'static str,
    /// Short window (Prometheus duration, e.g. `5m`).
    pub short: &'static str,
    /// `page` or `ticket`.
    pub severity: &'static str,
    /// `for:` duration.
    pub for_: &'static str,
}

/// The three burn-rate alerts.
pub const BURN_WINDOWS: [BurnWindow; 3] = [
    BurnWindow {
        name: "Fast",
        burn: 14.4,
        long: "1h",
        short: "5m",
        severity: "page",
        for_: "2m",
    },
    BurnWindow {
        name: "Medium",
        burn: 6.0,
        long: "6h",
        short: "30m",
        severity: "page",
        for_: "5m",
    },
    BurnWindow {
        name: "Slow",
        burn: 1.0,
        long: "3d",
        short: "6h",
        severity: "ticket",
        for_: "30m",
    },
];

/// The period an error budget is spent over [s] (30 days).
pub const SLO_PERIOD_S: f64 = 30.0 * 86_400.0;

/// The highest error ratio a fitted burn alert waits for: a replacement for a rule that
/// cannot fire fires when more than this share of requests miss the SLO.
pub const MAX_FITTED_ERROR_RATIO: f64 = 0.75;

/// A burn alert's burn rate and windows as emitted: the standard ones, or the pair
/// fitted to a loose target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FittedWindow {
    /// The standard alert's name suffix (`Fast`, `Medium`, `Slow`).
    pub name: String,
    /// Burn-rate factor.
    pub burn: f64,
    /// Long window (Prometheus duration, e.g. `1h56m`).
    pub long: String,
    /// Short window (Prometheus duration, e.g. `10m`).
    pub short: String,
}

impl FittedWindow {
    fn standard(w: &BurnWindow) -> FittedWindow {
        FittedWindow {
            name: w.name.into(),
            burn: w.burn,
            long: w.long.into(),
            short: w.short.into(),
        }
    }
}

/// Seconds in a Prometheus duration of one unit (`5m`, `1h`, `3d`); 0 when unknown.
fn duration_s(text: &str) -> f64 {
    let (n, unit) = text.split_at(text.len().saturating_sub(1));
    let n: f64 = n.parse().unwrap_or(0.0);
    n * match unit {
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        "d" => 86_400.0,
        _ => 0.0,
    }
}

/// A Prometheus duration in whole minutes, rounded up: `1h56m`, `10m`, `2d4h`.
fn prom_duration(seconds: f64) -> String {
    let minutes = libm::ceil(seconds / 60.0).max(1.0) as u64;
    let (d, h, m) = (minutes / 1440, minutes / 60 % 24, minutes % 60);
    let mut s = String::new();
    for (v, unit) in [(d, "d"), (h, "h"), (m, "m")] {
        if v > 0 {
            s.push_str(&format!("{v}{unit}"));
        }
    }
    s
}

/// The share of the period's error budget a burn alert has spent when its long window fires.
fn budget_share(w: &BurnWindow) -> f64 {
    w.burn * duration_s(w.long) / SLO_PERIOD_S
}

/// The window pair that fits a target whose budget makes `w` unreachable: the burn
/// that fires at an error ratio of [`MAX_FITTED_ERROR_RATIO`], over a long window
/// that spends the same share of the budget as `w` does, and a short window 1/12 of
/// it (the standard ratio). `None` when that burn is below 1× (the budget would last
/// the whole period).
pub fn fit_window(w: &BurnWindow, error_budget: f64) -> Option<FittedWindow> {
    if error_budget.is_nan() || error_budget <= 0.0 {
        return None;
    }
    let burn = MAX_FITTED_ERROR_RATIO / error_budget;
    if burn < 1.0 {
        return None;
    }
    let long_s = budget_share(w) * SLO_PERIOD_S / burn;
    Some(FittedWindow {
        name: w.name.into(),
        burn,
        long: prom_duration(long_s),
        short: prom_duration(long_s / 12.0),
    })
}

/// Seconds of TTFT budget assumed for the queue threshold when the SLO has no TTFT objective.
pub const DEFAULT_QUEUE_HORIZON_S: f64 = 5.0;

/// The generated rules and the numbers behind them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlertRules {
    /// SLO class label value the rules select.
    pub class: String,
    /// Error budget: 1 − attainment target [0..1].
    pub error_budget: f64,
    /// Error-ratio thresholds of the fast, medium and slow alerts [0..].
    pub thresholds: Vec<f64>,
    /// Waiting-request count per replica that raises the queue warning [requests].
    pub queue_threshold: u32,
    /// Names of burn alerts whose standard windows have a threshold ≥ 1 and so could
    /// never fire at this target; they are left out of the rules (and replaced by the
    /// pair in `fitted` when one fits).
    pub unreachable: Vec<String>,
    /// The burn and windows used instead of each unreachable standard alert, in order.
    pub fitted: Vec<FittedWindow>,
    /// The Prometheus rule file.
    pub yaml: String,
}

/// A label-safe class name: letters, digits, `_` and `-` only (`custom` when empty).
fn label_value(class: &str) -> String {
    let s: String = class
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .take(64)
        .collect();
    if s.is_empty() {
        "custom".into()
    } else {
        s
    }
}

fn error_ratio(class: &str, window: &str) -> String {
    format!(
        "(1 - sum(rate(slo_met_total{{class=\"{class}\"}}[{window}])) / sum(rate(slo_total{{class=\"{class}\"}}[{window}])))"
    )
}

/// Builds the rules for `plan.slo`, with the queue threshold from a replica goodput of
/// `goodput_rps` [requests/s] (pass the simulated or measured goodput). A plan of traffic
/// classes gets one group of burn-rate rules per class, labelled with the class's name
/// and set by its own objectives and target, and one queue warning (in the first group,
/// since the queue is the replica's, not a class's). The numbers returned (budget,
/// thresholds, queue) are the first group's; `unreachable` and `fitted` gather every
/// group's, each name with its class.
pub fn alert_rules(plan: &Plan, goodput_rps: f64) -> AlertRules {
    if plan.classes.is_empty() {
        let (head, body, mut rules) =
            alert_group(plan, &label_value(&plan.slo.class), goodput_rps, true);
        rules.yaml = format!("{GENERATED}{head}{NEEDS}groups:\n{body}");
        return rules;
    }
    let mut heads = String::new();
    let mut bodies = String::new();
    let mut first: Option<AlertRules> = None;
    let mut names = Vec::new();
    for (k, c) in plan.classes.iter().enumerate() {
        let label = label_value(&c.name);
        let (head, body, mut rules) = alert_group(&plan.class_plan(k), &label, goodput_rps, k == 0);
        // Each name with its class: "LlmSloBurnRateFast (chat)" and its fitted "Fast (chat)".
        for n in &mut rules.unreachable {
            *n = format!("{n} ({label})");
        }
        for f in &mut rules.fitted {
            f.name = format!("{} ({label})", f.name);
        }
        heads.push_str(&head);
        bodies.push_str(&body);
        names.push(label.clone());
        match &mut first {
            None => first = Some(rules),
            Some(f) => {
                f.unreachable.extend(rules.unreachable);
                f.fitted.extend(rules.fitted);
            }
        }
    }
    let mut rules = first.unwrap_or_else(|| alert_group(plan, "custom", goodput_rps, true).2);
    rules.class = names.join(",");
    rules.yaml = format!("{GENERATED}{heads}{NEEDS}groups:\n{bodies}");
    rules
}

/// The rule file's first line.
const GENERATED: &str = "# Generated by goodput for the plan's SLO.\n";
/// The rule file's note on the counters it reads.
const NEEDS: &str =
    "# Needs per-request counters from the gateway: slo_total and slo_met_total, labelled class.\n";

/// The rules of one SLO class (`plan.slo`, labelled `class`): its comment line, its
/// group, and its numbers (`yaml` left empty); with `queue_rule`, the queue warning too.
fn alert_group(
    plan: &Plan,
    class: &str,
    goodput_rps: f64,
    queue_rule: bool,
) -> (String, String, AlertRules) {
    let class = class.to_string();
    let target = plan.slo.attainment_target.clamp(0.0, 1.0);
    let budget = 1.0 - target;
    let horizon = plan
        .slo
        .ttft_s
        .or(plan.slo.e2e_s)
        .filter(|t| t.is_finite() && *t > 0.0)
        .unwrap_or(DEFAULT_QUEUE_HORIZON_S);
    let g = if goodput_rps.is_finite() && goodput_rps > 0.0 {
        goodput_rps
    } else {
        0.0
    };
    let queue = libm::ceil(g * horizon / 2.0).clamp(1.0, 1.0e6) as u32;

    let head = format!(
        "# SLO class {class}: joint attainment target {} (error budget {}); objectives {}.\n",
        plain(target),
        plain(budget),
        objectives(plan)
    );
    let mut y = String::new();
    y.push_str(&format!("  - name: goodput-slo-{class}\n"));
    y.push_str("    rules:\n");
    let mut thresholds = Vec::new();
    let mut unreachable = Vec::new();
    let mut fitted = Vec::new();
    for w in BURN_WINDOWS {
        let name = format!("LlmSloBurnRate{}", w.name);
        let standard = w.burn * budget;
        // A rule whose threshold is an error ratio of 1 or more can never fire: not even
        // every request failing exceeds it. Pasting it into Prometheus would suggest a
        // page that never comes, so it is left out and the pair that fits replaces it.
        let window = if standard < 1.0 {
            FittedWindow::standard(&w)
        } else {
            unreachable.push(name.clone());
            match fit_window(&w, budget) {
                Some(f) => {
                    y.push_str(&format!(
                        "      # {name}: the standard {}x burn over {} and {} is left out: it needs an error ratio above {}, more than every request failing, so it can never fire at target {}. In its place, the same {}% of the 30-day budget at {}x over {} and {} (error ratio above {}).\n",
                        plain(w.burn),
                        w.long,
                        w.short,
                        plain(standard),
                        plain(target),
                        plain(budget_share(&w) * 100.0),
                        plain(f.burn),
                        f.long,
                        f.short,
                        plain(f.burn * budget)
                    ));
                    fitted.push(f.clone());
                    f
                }
                None => {
                    y.push_str(&format!(
                        "      # {name} is left out: at target {} no burn rate of 1x or more stays below an error ratio of {}.\n",
                        plain(target),
                        plain(MAX_FITTED_ERROR_RATIO)
                    ));
                    continue;
                }
            }
        };
        let threshold = window.burn * budget;
        thresholds.push(threshold);
        y.push_str(&format!("      - alert: {name}\n"));
        y.push_str("        expr: >-\n");
        y.push_str(&format!(
            "          {} > {}\n",
            error_ratio(&class, &window.long),
            plain(threshold)
        ));
        y.push_str("          and\n");
        y.push_str(&format!(
            "          {} > {}\n",
            error_ratio(&class, &window.short),
            plain(threshold)
        ));
        y.push_str(&format!("        for: {}\n", w.for_));
        y.push_str("        labels:\n");
        y.push_str(&format!("          severity: {}\n", w.severity));
        y.push_str(&format!("          slo_class: {class}\n"));
        y.push_str("        annotations:\n");
        y.push_str(&format!(
            "          summary: \"SLO {class}: error budget burning at {}x over {} and {}\"\n",
            plain(window.burn),
            window.long,
            window.short
        ));
        y.push_str(&format!(
            "          description: \"More than {}% of {class} requests missed the SLO (budget {}%).\"\n",
            plain(threshold * 100.0),
            plain(budget * 100.0)
        ));
    }
    if queue_rule {
        y.push_str("      - alert: LlmQueueDepthHigh\n");
        y.push_str(&format!(
            "        expr: max by (instance) (vllm:num_requests_waiting) > {queue}\n"
        ));
        y.push_str("        for: 2m\n");
        y.push_str("        labels:\n");
        y.push_str("          severity: warning\n");
        y.push_str(&format!("          slo_class: {class}\n"));
        y.push_str("        annotations:\n");
        y.push_str(&format!(
            "          summary: \"More than {queue} requests waiting on one replica\"\n"
        ));
        y.push_str(&format!(
        "          description: \"At a goodput of {} req/s a replica needs about {} s to drain {queue} waiting requests, half the {} s budget; scale out before attainment drops.\"\n",
        plain((g * 100.0).round() / 100.0),
        plain(horizon / 2.0),
        plain(horizon)
    ));
    }
    (
        head,
        y,
        AlertRules {
            class,
            error_budget: budget,
            thresholds,
            queue_threshold: queue,
            unreachable,
            fitted,
            yaml: String::new(),
        },
    )
}

fn objectives(plan: &Plan) -> String {
    let mut parts = Vec::new();
    if let Some(t) = plan.slo.ttft_s {
        parts.push(format!("TTFT <= {} s", plain(t)));
    }
    if let Some(t) = plan.slo.tpot_s {
        parts.push(format!("TPOT <= {} ms", plain(t * 1e3)));
    }
    if let Some(t) = plan.slo.e2e_s {
        parts.push(format!("E2E <= {} s", plain(t)));
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plan of two classes: a group each, labelled and set by the class's own
    /// objectives and target, one queue warning, and each unreachable rule named with
    /// its class and its fitted pair.
    #[test]
    fn one_group_per_traffic_class() {
        use crate::plan::classes::parse_class;
        let mut plan = Plan::default();
        plan.classes = vec![
            parse_class(&plan, "chat:share=0.7,ttft=0.5,tpot=0.025").expect("chat"),
            parse_class(&plan, "batch:share=0.3,e2e=60,attainment=0.99,priority=1").expect("batch"),
        ];
        let r = alert_rules(&plan, 10.0);
        assert_eq!(r.class, "chat,batch");
        assert!(r.yaml.contains("  - name: goodput-slo-chat\n"));
        assert!(r.yaml.contains("  - name: goodput-slo-batch\n"));
        assert!(r.yaml.contains("# SLO class batch: joint attainment target 0.99 (error budget 0.01); objectives E2E <= 60 s.\n"));
        assert!(
            r.yaml.contains("slo_met_total{class=\"batch\"}[1h]"),
            "the 99% batch target keeps the fast page"
        );
        assert_eq!(r.yaml.matches("alert: LlmQueueDepthHigh").count(), 1);
        assert_eq!(r.yaml.matches("groups:").count(), 1);
        assert_eq!(r.unreachable, vec!["LlmSloBurnRateFast (chat)".to_string()]);
        assert_eq!(r.fitted[0].name, "Fast (chat)");
        assert!(r.unreachable[0].ends_with(&r.fitted[0].name));
    }

    #[test]
    fn thresholds_are_burn_times_budget() {
        let mut plan = Plan::default();
        plan.slo.attainment_target = 0.99;
        let r = alert_rules(&plan, 22.0);
        assert!((r.thresholds[0] - 0.144).abs() < 1e-12);
        assert!((r.thresholds[1] - 0.06).abs() < 1e-12);
        assert!((r.thresholds[2] - 0.01).abs() < 1e-12);
        assert!(r.unreachable.is_empty());
        assert!(r.yaml.contains("> 0.144\n"));
        // 22 req/s × 0.5 s / 2 = 5.5 → 6 waiting requests.
        assert_eq!(r.queue_threshold, 6);
        assert!(r.yaml.contains("(vllm:num_requests_waiting) > 6\n"));
    }

    /// The error-ratio thresholds of the rules in the YAML (the `> x` of each expr line).
    fn yaml_thresholds(yaml: &str) -> Vec<f64> {
        yaml.lines()
            .filter(|l| l.contains("slo_total") && l.contains(" > "))
            .filter_map(|l| l.rsplit(" > ").next()?.trim().parse().ok())
            .collect()
    }

    #[test]
    fn a_rule_that_cannot_fire_is_left_out_and_the_fitting_pair_offered() {
        let plan = Plan::default(); // target 0.9: 14.4 × 0.1 = 1.44
        let r = alert_rules(&plan, 0.0);
        assert_eq!(r.unreachable, vec!["LlmSloBurnRateFast".to_string()]);
        assert_eq!(r.queue_threshold, 1);
        let emitted = yaml_thresholds(&r.yaml);
        assert_eq!(emitted.len(), 6, "three burn alerts, two windows each");
        assert!(
            emitted.iter().all(|t| *t < 1.0),
            "every rule can fire: {emitted:?}"
        );
        assert!(!r.yaml.contains("> 1.44"), "the dead 14.4x rule is gone");
        assert!(!r.yaml.contains("[1h]"), "the dead 1h window is gone");
        assert!(r.thresholds.iter().all(|t| *t < 1.0));
        // The fast page spends 2% of 30 days: 14.4 h of budget at 1×; at 7.5× that is
        // 1.92 h = 115.2 min → 1h56m, and the short window 9.6 min → 10m.
        assert_eq!(r.fitted.len(), 1);
        let f = &r.fitted[0];
        assert_eq!(plain(f.burn), "7.5");
        assert_eq!((f.long.as_str(), f.short.as_str()), ("1h56m", "10m"));
        assert!(r.yaml.contains("[1h56m])"), "{}", r.yaml);
        assert!(r.yaml.contains("[10m])"));
        assert!(r.yaml.contains("> 0.75\n"));
        assert!(r.yaml.contains("can never fire at target 0.9"));
        assert_eq!(r.yaml.matches("- alert: LlmSloBurnRateFast").count(), 1);
    }

    #[test]
    fn no_target_keeps_a_rule_that_cannot_fire() {
        for target in [0.0, 0.2, 0.5, 0.8, 0.9, 0.95, 0.99, 0.999, 1.0] {
            let mut plan = Plan::default();
            plan.slo.attainment_target = target;
            let r = alert_rules(&plan, 10.0);
            let emitted = yaml_thresholds(&r.yaml);
            assert!(
                emitted.iter().all(|t| *t < 1.0),
                "target {target}: {emitted:?}"
            );
            assert_eq!(emitted.len(), 2 * r.thresholds.len(), "target {target}");
        }
        let mut plan = Plan::default();
        plan.slo.attainment_target = 0.8; // budget 0.2: fast 2.88 and medium 1.2 are dead
        let r = alert_rules(&plan, 10.0);
        assert_eq!(r.unreachable.len(), 2);
        assert_eq!(r.fitted.len(), 2);
        // Medium spends 5%: 36 h at 1×, at 3.75× → 9.6 h = 9h36m; short 48m.
        assert_eq!(
            (r.fitted[1].long.as_str(), r.fitted[1].short.as_str()),
            ("9h36m", "48m")
        );
        plan.slo.attainment_target = 0.2; // budget 0.8: no burn ≥ 1 stays under 0.75
        let r = alert_rules(&plan, 10.0);
        assert!(r.fitted.is_empty());
        assert!(r.yaml.contains("LlmSloBurnRateFast is left out"));
        assert!(
            r.yaml.contains("- alert: LlmSloBurnRateSlow"),
            "0.8 < 1: the ticket stays"
        );
        assert_eq!(prom_duration(2.0 * 86_400.0 + 4.0 * 3600.0), "2d4h");
        assert_eq!(duration_s("3d"), 259_200.0);
    }

    #[test]
    fn hostile_class_names_are_sanitised() {
        let mut plan = Plan::default();
        plan.slo.class = "chat\"}) or vector(1) #".into();
        let r = alert_rules(&plan, 10.0);
        assert_eq!(r.class, "chatorvector1");
        plan.slo.class = String::new();
        assert_eq!(alert_rules(&plan, 10.0).class, "custom");
        assert_eq!(plain(1.4400000000000002), "1.44");
        assert_eq!(plain(6.0), "6");
        assert_eq!(plain(0.0), "0");
    }
}
