//! A progress line on stderr while a long command runs.
//!
//! It is drawn only when stderr is a terminal (or `GOODPUT_PROGRESS=1` asks for it), at
//! most five times a second, on one line that is rewritten in place and wiped when the
//! work ends, so that a script's stderr holds nothing but a failure's one line.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// Set to `1` to draw the line even when stderr is not a terminal (`0` never draws it).
pub const ENV: &str = "GOODPUT_PROGRESS";

/// Least time between two redraws.
const INTERVAL: Duration = Duration::from_millis(200);

/// The progress line of one command's work.
pub struct ProgressLine {
    what: &'static str,
    unit: &'static str,
    enabled: bool,
    last: Option<Instant>,
    drawn: bool,
}

impl ProgressLine {
    /// A line for `what` (e.g. "knob sweep"), counting `unit` (e.g. "simulations").
    pub fn new(what: &'static str, unit: &'static str) -> ProgressLine {
        let enabled = match std::env::var(ENV).as_deref() {
            Ok("1") => true,
            Ok("0") => false,
            _ => std::io::stderr().is_terminal(),
        };
        ProgressLine {
            what,
            unit,
            enabled,
            last: None,
            drawn: false,
        }
    }

    /// The progress callback the core's drivers take; it never cancels.
    pub fn callback<P: Counted>(&mut self) -> impl FnMut(P) -> bool + '_ {
        |p| {
            let (done, total) = p.counts();
            self.show(done, total)
        }
    }

    /// Shows `done` of about `total`; always `true` (the work goes on).
    pub fn show(&mut self, done: u32, total: u32) -> bool {
        if self.enabled && self.last.is_none_or(|t| t.elapsed() >= INTERVAL) {
            self.last = Some(Instant::now());
            self.drawn = true;
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r{}\x1b[K", text(self.what, self.unit, done, total));
            let _ = err.flush();
        }
        true
    }
}

impl Drop for ProgressLine {
    fn drop(&mut self) {
        if self.drawn {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[K");
        }
    }
}

/// A driver's progress report: (done, expected total).
pub trait Counted {
    /// Work done and the expected total.
    fn counts(&self) -> (u32, u32);
}

impl Counted for goodput_core::search::Progress {
    fn counts(&self) -> (u32, u32) {
        (self.done, self.total)
    }
}

impl Counted for goodput_core::calibrate::CalibrationProgress {
    fn counts(&self) -> (u32, u32) {
        (self.done, self.total)
    }
}

impl Counted for goodput_core::validate::ValidateProgress {
    fn counts(&self) -> (u32, u32) {
        (self.done, self.total)
    }
}

/// The line's words: "knob sweep: 120 of ~1660 simulations (7%)".
pub fn text(what: &str, unit: &str, done: u32, total: u32) -> String {
    let total = total.max(done);
    let percent = if total == 0 {
        0
    } else {
        (u64::from(done) * 100 / u64::from(total)) as u32
    };
    format!("{what}: {done} of ~{total} {unit} ({percent}%)")
}

#[cfg(test)]
mod tests {
    use super::text;

    #[test]
    fn the_line_says_what_how_far_and_never_more_than_all() {
        assert_eq!(
            text("knob sweep", "simulations", 120, 1660),
            "knob sweep: 120 of ~1660 simulations (7%)"
        );
        assert_eq!(text("fit", "fits", 0, 0), "fit: 0 of ~0 fits (0%)");
        // An estimate below what is done already reads as all of it.
        assert_eq!(
            text("search", "jobs", 50, 40),
            "search: 50 of ~50 jobs (100%)"
        );
    }
}
