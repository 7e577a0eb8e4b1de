//! The messages shown for a field's value: one place words them, with the field's
//! label, the limits the core checks (in the units the field is entered in, not the
//! plan's) and a hint for a decimal comma.
//!
//! ```text
//!   parse_value ──ParseProblem──┐
//!   Plan::validate ──Limits─────┴─▶ field_message(field, problem) ─▶ under the input, the banner
//! ```

use goodput_core::plan::{Limits, PlanError};
use goodput_core::Plan;

use super::fields::{field, Field, ParseProblem};
use goodput_core::format::sig;
use goodput_core::format::thousands;

/// What is wrong with a field's value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Problem<'a> {
    /// The text does not parse: the problem and the text as typed.
    Parse(ParseProblem, &'a str),
    /// The value parses but is outside the core's limits.
    OutOfRange(Limits),
}

/// A bound or value as the field would show it: thousands grouped for whole numbers
/// (`16,384`), six significant digits otherwise (`0.001`).
fn shown(x: f64) -> String {
    if x.is_finite() && x.fract() == 0.0 && x.abs() >= 1e4 && x.abs() < 1e15 {
        return thousands(x as i64);
    }
    // Six significant digits, the whole part grouped from 10,000 up as above
    // ("2,984,310", "100,000,000,000,000"), unless in scientific notation.
    let text = sig(x);
    match text.split_once('.') {
        _ if text.contains('e') || x.abs() < 1e4 => text,
        Some((whole, frac)) => match whole.parse::<i64>() {
            Ok(w) => format!("{}.{frac}", thousands(w)),
            Err(_) => text,
        },
        None => text.parse::<i64>().map_or(text.clone(), thousands),
    }
}

/// The range in words, in the field's own units: `a whole number from 1 to 16,384`,
/// `a number from 0.001 to 10,000 billion`, `a number above 0 and at most 1,000 ms`.
pub fn range_words(f: &Field, l: &Limits) -> String {
    let s = f.kind.scale();
    let (lo, hi) = (shown(l.lo / s), shown(l.hi / s));
    // A unit that is a range itself ("0–1", shown beside a share) would only repeat it.
    let unit = if f.unit.is_empty() || f.unit.starts_with(|c: char| c.is_ascii_digit()) {
        String::new()
    } else {
        format!(" {}", f.unit)
    };
    let what = if l.whole || f.kind.is_whole() {
        "a whole number"
    } else {
        "a number"
    };
    if l.lo_open {
        format!("{what} above {lo} and at most {hi}{unit}")
    } else {
        format!("{what} from {lo} to {hi}{unit}")
    }
}

/// A hint for text typed with a comma: `8,5` → `use a decimal point: 8.5`; `1,000` →
/// `leave out the thousands separator: 1000`.
pub fn comma_hint(text: &str) -> Option<String> {
    let t = text.trim();
    let (whole, rest) = t.split_once(',')?;
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    let sign = whole.strip_prefix('-').unwrap_or(whole);
    if !digits(sign) || !digits(rest) {
        return None;
    }
    Some(if rest.len() == 3 {
        format!("leave out the thousands separator: {whole}{rest}")
    } else {
        format!("use a decimal point: {whole}.{rest}")
    })
}

/// A plan the core refused, in the planner's words: a field with an input by its label,
/// range and unit (`Parameters must be a number from 0.001 to 10,000 billion; it is 0`),
/// as the input itself would say it; the core's own words for a rule across fields or a
/// field without an input, led by the registry's label of the field rather than its
/// path (`Prefill GPU: the prefill pool's …`).
pub fn plan_error_words(e: &PlanError) -> String {
    in_field_words(e).unwrap_or_else(|| match goodput_core::plan::fields::by_path(e.field) {
        Some(f) => format!("{}: {}", f.label, e.message),
        None => e.to_string(),
    })
}

/// A value out of range, as the input of its field says it; `None` for a field without
/// an input, or a problem that is not a range.
pub fn in_field_words(e: &PlanError) -> Option<String> {
    match (field(e.field), e.limits) {
        (Some(f), Some(l)) => Some(field_message(f, Problem::OutOfRange(l), None)),
        _ => None,
    }
}

/// A problem the core states without a range (a rule across fields), as the input of
/// its field shows it: the field's label, then the core's words, as a sentence
/// ("Replicas behind the router need open-loop arrivals: …."); the core's own words for
/// a field without an input, or words that are a sentence already.
pub fn rule_words(e: &PlanError) -> String {
    match field(e.field) {
        Some(f) if e.message.starts_with(|c: char| c.is_lowercase()) => {
            goodput_core::format::sentence(&format!("{} {}", f.label, e.message))
        }
        _ => e.message.clone(),
    }
}

/// The message for `problem` in field `f`; `limits` (for a parse problem) are the
/// core's limits of the field, when known, so the message can state them.
pub fn field_message(f: &Field, problem: Problem<'_>, limits: Option<Limits>) -> String {
    let label = f.label;
    let range = |fallback: &str| {
        limits
            .map(|l| range_words(f, &l))
            .unwrap_or_else(|| fallback.to_string())
    };
    match problem {
        Problem::OutOfRange(l) => {
            let got = if l.got.is_finite() {
                shown(l.got / f.kind.scale())
            } else {
                "not a number".into()
            };
            format!("{label} must be {}; it is {got}", range_words(f, &l))
        }
        Problem::Parse(kind, text) => {
            // A whole-number field without limits of its own (the seed) holds what the
            // plan stores: 0 to the largest 32-bit number.
            let fallback = if f.kind.is_whole() {
                format!(
                    "a whole number from 0 to {}",
                    goodput_core::format::thousands(i64::from(u32::MAX))
                )
            } else {
                "a number".to_string()
            };
            let base = match kind {
                ParseProblem::Missing => {
                    return format!("{label} is required: enter {}", range(&fallback))
                }
                ParseProblem::NotANumber => format!("{label} must be {}", range(&fallback)),
                // A number, but not one the field can hold (-1, 12.5, 1e20): say which.
                ParseProblem::NotWhole => match text.trim().parse::<f64>() {
                    Ok(x) if x.is_finite() => {
                        format!("{label} must be {}; it is {}", range(&fallback), shown(x))
                    }
                    _ => format!("{label} must be {}", range(&fallback)),
                },
            };
            match comma_hint(text) {
                Some(hint) => format!("{base}: {hint}"),
                None => base,
            }
        }
    }
}

/// The core's limits for field `f`, found by validating `plan` with values outside any
/// range in `f`: the core states each limit once, in `Plan::validate`, and this reads
/// them from there. `None` when the field has no simple range (or another field of
/// `plan` fails first).
pub fn limits_of(f: &Field, plan: &Plan) -> Option<Limits> {
    [f64::NAN, -1.0, 0.0, 1e300].into_iter().find_map(|probe| {
        let mut p = plan.clone();
        (f.set)(&mut p, Some(probe));
        p.validate()
            .err()
            .filter(|e| e.field == f.id)
            .and_then(|e| e.limits)
    })
}

/// The message for a p95 field whose value puts its sigma (the field it edits, `sigma`)
/// out of range: the sigma's limits turned into p95s at the plan's median, in the p95
/// field's own words and units, quoting `typed` (the p95 as typed) when given: a p95 of
/// 0 or less has no sigma, so the plan cannot say what it was. `None` when the sigma is
/// in range.
pub fn p95_message(p95: &Field, sigma: &Field, plan: &Plan, typed: Option<f64>) -> Option<String> {
    let l = limits_of(sigma, plan)?;
    let p95_at = |s: f64| {
        let mut p = plan.clone();
        (sigma.set)(&mut p, Some(s));
        (p95.get)(&p)
    };
    let limits = Limits {
        lo: p95_at(l.lo)?,
        hi: p95_at(l.hi)?,
        lo_open: l.lo_open,
        whole: false,
        got: typed.or_else(|| (p95.get)(plan)).unwrap_or(f64::NAN),
    };
    Some(field_message(p95, Problem::OutOfRange(limits), None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::fields::field;

    fn f(id: &str) -> &'static Field {
        field(id).expect("a field")
    }

    #[test]
    fn numbers_in_messages_group_their_thousands() {
        assert_eq!(shown(16384.0), "16,384");
        assert_eq!(shown(2_984_310.4), "2,984,310");
        assert_eq!(shown(99_999_999_999_999.98), "100,000,000,000,000");
        assert_eq!(shown(12_345.6), "12,345.6");
        assert_eq!(shown(-12_345.6), "-12,345.6");
        assert_eq!(shown(1000.0), "1000");
        assert_eq!(shown(0.001), "0.001");
        assert_eq!(shown(1e300), "1e300");
    }

    #[test]
    fn limits_come_from_the_core_in_the_fields_units() {
        let plan = Plan::default();
        let seqs = f("engine.max_num_seqs");
        let l = limits_of(seqs, &plan).expect("max_num_seqs has limits");
        assert_eq!(
            range_words(seqs, &l),
            "a whole number from 1 to 16,384 seqs"
        );
        let m = field_message(
            seqs,
            Problem::Parse(ParseProblem::NotWhole, "12.5"),
            Some(l),
        );
        assert_eq!(
            m,
            "max_num_seqs must be a whole number from 1 to 16,384 seqs; it is 12.5"
        );
        assert!(!m.contains("4294967295"));

        let params = f("model.params");
        let l = limits_of(params, &plan).expect("params has limits");
        let m = field_message(params, Problem::OutOfRange(Limits { got: 2e13, ..l }), None);
        assert_eq!(
            m,
            "Parameters must be a number from 0.001 to 10,000 billion; it is 20,000"
        );
        assert!(!m.contains("1e13") && !m.contains("parameters"));
    }

    #[test]
    fn a_share_does_not_repeat_its_range_and_a_negative_whole_number_is_told_why() {
        let plan = Plan::default();
        let target = f("slo.attainment_target");
        let l = limits_of(target, &plan).expect("limits");
        let m = field_message(target, Problem::OutOfRange(Limits { got: 1.5, ..l }), None);
        assert_eq!(
            m,
            "Attainment target must be a number above 0 and at most 1; it is 1.5"
        );
        let seed = f("run.seed");
        let m = field_message(seed, Problem::Parse(ParseProblem::NotWhole, "-1"), None);
        assert_eq!(
            m,
            "Seed must be a whole number from 0 to 4,294,967,295; it is -1"
        );
        let m = field_message(
            seed,
            Problem::Parse(ParseProblem::NotWhole, "99999999999999"),
            None,
        );
        assert_eq!(
            m,
            "Seed must be a whole number from 0 to 4,294,967,295; it is 99,999,999,999,999"
        );
    }

    #[test]
    fn labels_not_paths() {
        let plan = Plan::default();
        let n = f("run.num_requests");
        let l = limits_of(n, &plan).expect("limits");
        let m = field_message(n, Problem::OutOfRange(Limits { got: 0.0, ..l }), None);
        assert!(
            m.starts_with("Requests per run must be a whole number from "),
            "{m}"
        );
        assert!(!m.contains("run.num_requests"));
        let m = field_message(n, Problem::Parse(ParseProblem::Missing, ""), Some(l));
        assert!(
            m.starts_with("Requests per run is required: enter a whole number from "),
            "{m}"
        );
    }

    #[test]
    fn a_decimal_comma_gets_a_hint() {
        let bw = f("hardware.mem_bandwidth_bytes_per_s");
        let m = field_message(bw, Problem::Parse(ParseProblem::NotANumber, "8,5"), None);
        assert_eq!(
            m,
            "Memory bandwidth must be a number: use a decimal point: 8.5"
        );
        assert_eq!(
            comma_hint(" 1,000 ").as_deref(),
            Some("leave out the thousands separator: 1000")
        );
        assert_eq!(
            comma_hint("-0,25").as_deref(),
            Some("use a decimal point: -0.25")
        );
        assert_eq!(comma_hint("8,5,1"), None);
        assert_eq!(comma_hint("abc"), None);
        assert_eq!(comma_hint("8,"), None);
    }
}
