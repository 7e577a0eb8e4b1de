//! How numbers read for people: one formatter per kind of number, used by the CLI's
//! tables, the Markdown report and every page of the app, so the same amount never
//! prints two ways.

/// What a table cell or a readout shows for a value that is unknown, not computed or
/// not finite.
pub const MISSING: &str = "—";

/// An integer with `,` between groups of three digits: `12,775`.
pub fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if n < 0 {
        out.push('-');
    }
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// US dollars:
///
/// - from $100, whole dollars with thousands separators: `$12,775`;
/// - from $1, cents: `$2.50`;
/// - below $1, three significant digits, trailing zeros dropped down to cents:
///   `$0.05`, `$0.50`, `$0.0438`, `$0.000124`;
/// - a negative amount has its sign first (`-$5.00`); a non-finite one prints `—`.
pub fn usd(x: f64) -> String {
    if !x.is_finite() {
        return MISSING.into();
    }
    let sign = if x < 0.0 { "-" } else { "" };
    let a = x.abs();
    // Round first, so that 99.996 reads $100 and not $100.00.
    let cents = (a * 100.0).round();
    if cents >= 10_000.0 {
        return format!("{sign}${}", thousands(a.round() as i64));
    }
    if a >= 1.0 || a == 0.0 {
        return format!("{sign}${:.2}", cents / 100.0);
    }
    // Below a dollar, three significant digits, trailing zeros kept so that a column
    // reads alike ("$0.0450" above "$0.0481", "$0.0896" above "$0.100"): the first sits
    // at the exponent of `a` rounded to three digits (0.09996 rounds to 1.00e-1).
    let exponent: i32 = format!("{a:.2e}")
        .split_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .unwrap_or(0);
    let decimals = (2 - exponent).clamp(3, 15) as usize;
    let text = format!("{a:.decimals$}");
    if text.starts_with("1.") {
        // Rounding carried into the dollars (0.9996 → 1.000): cents then.
        return format!("{sign}${a:.2}");
    }
    format!("{sign}${text}")
}

/// The difference `a − b` of two amounts as [`usd`] shows each (whole dollars from
/// $100, cents from $1), so that a sentence's "$1,825 a month less" is what its two
/// printed amounts subtract to; below $1 the amounts' own difference.
pub fn usd_difference(a: f64, b: f64) -> f64 {
    let shown = |x: f64| {
        let c = (x.abs() * 100.0).round();
        let v = if c >= 10_000.0 {
            x.abs().round()
        } else if x.abs() >= 1.0 {
            c / 100.0
        } else {
            return x;
        };
        v.copysign(x)
    };
    shown(a) - shown(b)
}

/// `n` and its noun, singular for one: `1 replica`, `3 replicas`, `0 replicas`.
pub fn count(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{} {many}", thousands(i64::try_from(n).unwrap_or(i64::MAX)))
    }
}

/// Clients of a closed loop: `1 client`, `64 clients`.
pub fn clients(n: u32) -> String {
    count(u64::from(n), "client", "clients")
}

/// `words` with a capital first ("business hours" reads "Business hours"). A first
/// word with capitals of its own keeps them ("vLLM refuses …"). Empty words stay empty.
pub fn capitalized(words: &str) -> String {
    let first_word = words.split_whitespace().next().unwrap_or("");
    if first_word.chars().any(char::is_uppercase) {
        return words.to_string();
    }
    let mut chars = words.chars();
    match chars.next() {
        Some(c) => format!("{}{}", c.to_uppercase(), chars.as_str()),
        None => String::new(),
    }
}

/// `words` as a sentence: [`capitalized`], with a full stop last ("no xPyD meets the
/// SLO" reads "No xPyD meets the SLO."; words that end in a full stop get no second).
/// Empty words stay empty.
pub fn sentence(words: &str) -> String {
    let stop = if words.is_empty() || words.ends_with('.') {
        ""
    } else {
        "."
    };
    capitalized(words) + stop
}

/// A number to six significant digits without trailing zeros (`12.5`, `0.000125`,
/// `8.03026`): how an input box shows a value, and how a stated assumption reads. Far
/// outside any plan's scale (from 10¹⁵, below 10⁻⁶) it takes scientific notation
/// (`1e30`, `2.5e-9`), which every input accepts back, instead of thirty digits.
pub fn sig(x: f64) -> String {
    if !x.is_finite() {
        return x.to_string();
    }
    if x == 0.0 {
        return "0".into();
    }
    let rounded: f64 = format!("{x:.5e}").parse().unwrap_or(x);
    if rounded.abs() >= 1e15 || rounded.abs() < 1e-6 {
        return format!("{rounded:e}");
    }
    format!("{rounded}")
}

/// A share as a percentage without needless decimals (`90%`, `99.5%`).
pub fn percent(share: f64) -> String {
    format!("{}%", sig((share * 1e4).round() / 1e2))
}

/// A share as a whole percentage (`38%`, `0%`): loads and shares where a decimal would
/// claim more precision than the estimate has.
pub fn percent_whole(share: f64) -> String {
    format!("{:.0}%", share * 100.0)
}

/// A share as a percentage with one decimal (`23.5%`, `8.0%`): errors and shares read
/// side by side in a table or a sentence.
pub fn percent_tenths(share: f64) -> String {
    format!("{:.1}%", share * 100.0)
}

/// A latency given in seconds, to three significant figures in the unit a reader expects:
/// `13.5 ms`, `294 ms`, `1.25 s`; a dash when unknown or not finite.
pub fn latency(seconds: Option<f64>) -> String {
    match seconds {
        Some(s) if s.is_finite() && s.abs() < 0.1 => format!("{:.1} ms", s * 1e3),
        Some(s) if s.is_finite() && s.abs() < 1.0 => format!("{:.0} ms", s * 1e3),
        Some(s) if s.is_finite() => format!("{s:.2} s"),
        _ => MISSING.into(),
    }
}

/// A derived figure as a reader compares it across plans: three significant figures
/// without trailing zeros, thousands grouped from 100 up (`0.0123`, `9.82`, `27.2`, `16`,
/// `406,847`); a dash when not
/// finite. Not for inputs, which show what was typed ([`sig`]).
pub fn figure(x: f64) -> String {
    if !x.is_finite() {
        return MISSING.into();
    }
    let a = x.abs();
    if (100.0..9.2e18).contains(&a) {
        return thousands(x.round() as i64);
    }
    if a == 0.0 {
        return "0".into();
    }
    let decimals = (2 - a.log10().floor() as i32).clamp(0, 12) as usize;
    let text = format!("{x:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// A latency given in seconds as milliseconds with one decimal and no unit (`13.5`), for
/// tables whose header names the unit; a dash when not finite.
pub fn ms(seconds: f64) -> String {
    if seconds.is_finite() {
        format!("{:.1}", seconds * 1e3)
    } else {
        MISSING.into()
    }
}

/// A plain number with up to six decimals and no trailing zeros (`0.5`, `14.4`, `2`), as
/// configuration files and rule expressions write it.
pub fn plain(x: f64) -> String {
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-" {
        "0".into()
    } else {
        s.to_string()
    }
}

/// A request rate for display [req/s], two decimals as every goodput reads (`22.06`,
/// `15.65`), without the unit.
pub fn rps(rps: f64) -> String {
    format!("{rps:.2}")
}

/// A latency given in seconds, always in milliseconds, to three significant figures
/// from 1 ms up (`8.52 ms`, `85.0 ms`, `285 ms`, `12,345 ms`): a table column whose
/// rows a reader compares at a glance, where [`latency`] would switch units between
/// rows. A dash when unknown or not finite.
pub fn millis(seconds: Option<f64>) -> String {
    match seconds.map(|s| s * 1e3) {
        Some(ms) if ms.is_finite() && ms.abs() < 10.0 => format!("{ms:.2} ms"),
        Some(ms) if ms.is_finite() && ms.abs() < 100.0 => format!("{ms:.1} ms"),
        Some(ms) if ms.is_finite() && ms.abs() < 9.2e18 => {
            format!("{} ms", thousands(ms.round() as i64))
        }
        _ => MISSING.into(),
    }
}

/// The words of `name` among a choice's `(name, words)` pairs (the plan's field
/// registry's choices, the pools' routers); the name itself when it is not one of them.
pub fn choice_words<'a>(choices: &'a [(&'static str, &'static str)], name: &'a str) -> &'a str {
    choices
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(name, |(_, w)| w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_difference_is_what_its_printed_amounts_subtract_to() {
        // $151,460 and $139,810 as printed: $11,650 apart, not the $11,651 of the raw sums.
        assert_eq!(usd(151_460.4 - 139_809.6), "$11,651");
        assert_eq!(usd(usd_difference(151_460.4, 139_809.6)), "$11,650");
        assert_eq!(usd_difference(2.504, 1.001), 1.5);
        assert_eq!(usd_difference(-150.4, 0.0), -150.0);
        assert!((usd_difference(0.0451, 0.0449) - 0.0002).abs() < 1e-12);
    }

    #[test]
    fn derived_figures_have_three_significant_digits() {
        let shown: Vec<String> = [0.012345, 9.82174, 27.193, 406_847.4, -1234.5, 0.0, f64::NAN]
            .into_iter()
            .map(figure)
            .collect();
        assert_eq!(
            shown,
            ["0.0123", "9.82", "27.2", "406,847", "-1,235", "0", "—"]
        );
    }

    #[test]
    fn a_column_of_latencies_keeps_one_unit() {
        let column: Vec<String> = [0.00852, 0.085, 0.285, 1.25, 12.3454, 1e300, f64::NAN]
            .into_iter()
            .map(|s| millis(Some(s)))
            .collect();
        assert_eq!(
            column,
            [
                "8.52 ms",
                "85.0 ms",
                "285 ms",
                "1,250 ms",
                "12,345 ms",
                "—",
                "—"
            ]
        );
        assert_eq!(millis(None), "—");
    }

    #[test]
    fn a_count_of_one_is_singular() {
        assert_eq!(count(1, "replica", "replicas"), "1 replica");
        assert_eq!(count(0, "replica", "replicas"), "0 replicas");
        assert_eq!(count(1200, "GPU", "GPUs"), "1,200 GPUs");
    }

    #[test]
    fn significant_digits_drop_trailing_zeros() {
        for (x, want) in [
            (12.5, "12.5"),
            (0.000125, "0.000125"),
            (8.030261248e9, "8030260000"),
            (0.0, "0"),
            (2.0 / 3.0, "0.666667"),
            (1e30, "1e30"),
            (-1.234567e20, "-1.23457e20"),
            (2.5e-9, "2.5e-9"),
            (999_999_000_000_000.0, "999999000000000"),
        ] {
            assert_eq!(sig(x), want, "{x}");
        }
    }

    #[test]
    fn shares_read_as_percentages() {
        // `percent` keeps a target's decimal and never shows the float's last bits
        // (0.57 × 100 is 56.99999999999999).
        for (x, want) in [(0.9, "90%"), (0.995, "99.5%"), (0.57, "57%"), (0.07, "7%")] {
            assert_eq!(percent(x), want, "{x}");
        }
        for (x, want) in [(0.384, "38%"), (0.0, "0%"), (1.0, "100%")] {
            assert_eq!(percent_whole(x), want, "{x}");
        }
        for (x, want) in [(0.235, "23.5%"), (0.08, "8.0%")] {
            assert_eq!(percent_tenths(x), want, "{x}");
        }
    }

    #[test]
    fn latencies_read_in_the_unit_a_reader_expects() {
        for (x, want) in [
            (Some(0.0135), "13.5 ms"),
            (Some(0.0999), "99.9 ms"),
            (Some(0.294), "294 ms"),
            (Some(1.25), "1.25 s"),
            (Some(f64::NAN), "—"),
            (None, "—"),
        ] {
            assert_eq!(latency(x), want, "{x:?}");
        }
    }

    #[test]
    fn words_become_one_sentence() {
        assert_eq!(sentence("no xPyD meets the SLO"), "No xPyD meets the SLO.");
        assert_eq!(
            sentence("line 2: 'x' is not a number."),
            "Line 2: 'x' is not a number."
        );
        assert_eq!(sentence(""), "");
        assert_eq!(sentence("vLLM refuses TP 3"), "vLLM refuses TP 3.");
        assert_eq!(capitalized("business hours"), "Business hours");
        assert_eq!(capitalized("vLLM refuses TP 3."), "vLLM refuses TP 3.");
        assert_eq!(capitalized("éclair"), "Éclair");
        assert_eq!(capitalized(""), "");
    }

    #[test]
    fn dollars_read_the_same_everywhere() {
        for (x, want) in [
            (12775.0, "$12,775"),
            (1234567.891, "$1,234,568"),
            (99.996, "$100"),
            (168630.4, "$168,630"),
            (56.0, "$56.00"),
            (2.5, "$2.50"),
            (1.0, "$1.00"),
            (0.999_6, "$1.00"),
            (0.5, "$0.500"),
            (0.123, "$0.123"),
            (0.1, "$0.100"),
            (0.099_96, "$0.100"),
            (0.095, "$0.0950"),
            (0.05, "$0.0500"),
            (0.045, "$0.0450"),
            (0.0438, "$0.0438"),
            (0.000124, "$0.000124"),
            (0.0000437787, "$0.0000438"),
            (0.0, "$0.00"),
            (-5.0, "-$5.00"),
            (-0.05, "-$0.0500"),
            (f64::NAN, "—"),
            (f64::INFINITY, "—"),
        ] {
            assert_eq!(usd(x), want, "{x}");
        }
    }

    #[test]
    fn thousands_group_by_three() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(-1234567), "-1,234,567");
        assert_eq!(thousands(i64::MIN), "-9,223,372,036,854,775,808");
    }
}
