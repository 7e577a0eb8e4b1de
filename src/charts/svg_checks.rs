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
