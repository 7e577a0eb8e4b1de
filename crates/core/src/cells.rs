//! How a line of delimited text splits into cells: one rule for every table goodput
//! reads (measured results, a measured sweep's header, request traces). A cell may be
//! quoted with `"` (a separator inside quotes is text, `""` is one quote); cells are
//! trimmed.

use std::borrow::Cow;

/// The cell separator a header line uses, if any.
pub fn delimiter(line: &str) -> Option<char> {
    ['\t', ';', ','].into_iter().find(|&d| line.contains(d))
}

/// Lines that are not blank and not `#` comments, numbered from 1.
pub fn content_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
}

/// Splits a row on `d`, honouring `"…"` quoting (`""` inside quotes is one quote).
pub fn split_row(line: &str, d: char) -> Vec<String> {
    let mut cells = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if quoted {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    cur.push('"');
                    chars.next();
                } else {
                    quoted = false;
                }
            } else {
                cur.push(c);
            }
        } else if c == '"' && cur.trim().is_empty() {
            cur.clear();
            quoted = true;
        } else if c == d {
            cells.push(std::mem::take(&mut cur).trim().to_string());
        } else {
            cur.push(c);
        }
    }
    cells.push(cur.trim().to_string());
    cells
}

/// [`split_row`] without copying when the line has no quote: each cell borrows from
/// `line`. For the long streamed files (traces of millions of rows).
pub fn split_cells(line: &str, d: char) -> Vec<Cow<'_, str>> {
    if line.contains('"') {
        split_row(line, d).into_iter().map(Cow::Owned).collect()
    } else {
        line.split(d).map(|c| Cow::Borrowed(c.trim())).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_cells_keep_their_separators_and_quotes() {
        let line = "a,\"b, c\",\"d\"\"e\", f";
        assert_eq!(split_row(line, ','), ["a", "b, c", "d\"e", "f"]);
        assert_eq!(split_cells(line, ','), ["a", "b, c", "d\"e", "f"]);
        assert_eq!(split_cells(" x ;y", ';'), ["x", "y"]);
    }
}
