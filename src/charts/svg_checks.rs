//! What the charts' SVG tests look for, in one place: a colour as the SVG backend writes
//! it, the labels a chart must show, and how to read a tag's attributes.

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
    for (_, text) in texts(svg) {
        let number = text.parse::<f64>().is_ok();
        assert!(
            !(number && text.ends_with(".0")),
            "the chart writes {text:?} for a whole number"
        );
    }
}

/// Every `<text>` element of `svg`: its opening tag's attributes and its content, trimmed.
pub fn texts(svg: &str) -> impl Iterator<Item = (&str, &str)> {
    svg.split("<text").skip(1).map(|t| {
        let (tag, rest) = t.split_once('>').expect("a closed text tag");
        (tag, rest.split("</text>").next().unwrap_or("").trim())
    })
}

/// The value of attribute `name` in `tag` (an SVG element's opening tag, or the start of
/// one), as written.
pub fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    tag.split(&format!(" {name}=\"")).nth(1)?.split('"').next()
}

/// The opening tag of the `<text>` element whose content starts with `prefix`, and its x.
pub fn text_tag<'a>(svg: &'a str, prefix: &str) -> (&'a str, f64) {
    let end = svg.find(prefix).expect("text present");
    let start = svg[..end].rfind("<text").expect("a text tag");
    let tag = &svg[start..end];
    assert!(
        !tag.contains("</text>"),
        "{prefix} is the content of a text element"
    );
    let x = attr(tag, "x").and_then(|v| v.parse().ok()).expect("an x");
    (tag, x)
}
