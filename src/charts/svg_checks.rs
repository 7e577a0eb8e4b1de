//! What the charts' SVG tests look for, in one place: a colour as the SVG backend writes
//! it, and the labels a chart must show.

use plotters::style::RGBColor;

/// `c` as the SVG backend writes it (`#1F2937`).
pub fn hex(c: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

/// Panics, naming the first one missing, unless `svg` shows every one of `texts` (a
/// legend entry, an axis title, a bar's label).
pub fn assert_shows(svg: &str, texts: &[&str]) {
    for text in texts {
        assert!(svg.contains(text), "the chart does not show {text:?}");
    }
}

/// Panics, naming it, if a text of `svg` is a number written with a needless ".0" (an
/// axis tick as plotters writes it by default: "80.0" for 80).
pub fn assert_no_needless_decimals(svg: &str) {
    for t in svg.split("<text").skip(1) {
        let Some((_, rest)) = t.split_once('>') else {
            continue;
        };
        let text = rest.split("</text>").next().unwrap_or("").trim();
        let number = text.parse::<f64>().is_ok();
        assert!(
            !(number && text.ends_with(".0")),
            "the chart writes {text:?} for a whole number"
        );
    }
}
