//! The CLI's text report of a calibration: constants, errors, the per-point table and
//! the warnings (above the run and the words it reads, so they need not know it).

use super::problem::Prediction;
use super::run::CalibrationReport;
use super::words::{calibration_words, load_label, opt_ms, spec_words, verdict_words};
use crate::format::{ms, percent_tenths, plain, MISSING};
use crate::plan::MetricErrors;

impl CalibrationReport {
    /// The report as plain text: constants, errors, the per-point table, warnings.
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let c = &self.calibration;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{}
",
            calibration_words(c)
        );
        if let Some(w) = spec_words(c, &self.plan) {
            let _ = writeln!(s, "{w}\n");
        }
        let _ = writeln!(s, "files: {}", c.source.files.join(", "));
        let _ = writeln!(s, "\nconstant            fitted      ± sd (bootstrap)");
        let mut rows = vec![
            (
                "bandwidth share",
                format!("{:.3}", c.bandwidth_efficiency.value),
                format!("{:.3}", c.bandwidth_efficiency.sd),
            ),
            (
                "compute share",
                format!("{:.3}", c.compute_efficiency.value),
                format!("{:.3}", c.compute_efficiency.sd),
            ),
            (
                "step overhead",
                format!("{} ms", ms(c.step_overhead_s.value)),
                format!("{} ms", ms(c.step_overhead_s.sd)),
            ),
        ];
        let us = |x: f64| plain((x * 1e7).round() / 10.0);
        if let Some(f) = c.seq_overhead_s {
            rows.push((
                "per sequence",
                format!("{} µs", us(f.value)),
                format!("{} µs", us(f.sd)),
            ));
        }
        if let Some(f) = c.kv_read_efficiency {
            rows.push((
                "KV read share",
                format!("{:.3}", f.value),
                format!("{:.3}", f.sd),
            ));
        }
        if let Some(f) = c.prefill_overhead_s {
            rows.push((
                "prefill step",
                format!("{} ms", ms(f.value)),
                format!("{} ms", ms(f.sd)),
            ));
        }
        if let Some(f) = c.frontend_s {
            rows.push((
                "frontend",
                format!("{} ms", ms(f.value)),
                format!("{} ms", ms(f.sd)),
            ));
        }
        for (name, value, sd) in rows {
            let sd = if c.spread_estimated() {
                sd
            } else {
                "– (one point)".to_string()
            };
            let _ = writeln!(s, "{name:<20}{value:<12}{sd}");
        }
        let row = |name: &str, m: &MetricErrors| {
            format!(
                "{name:<20}{:>8}{:>8}{:>8}{:>8}",
                m.ttft.map_or(MISSING.into(), percent_tenths),
                m.tpot.map_or(MISSING.into(), percent_tenths),
                m.e2e.map_or(MISSING.into(), percent_tenths),
                percent_tenths(m.overall)
            )
        };
        let _ = writeln!(
            s,
            "\nmean abs. error      {:>8}{:>8}{:>8}{:>8}",
            "TTFT", "TPOT", "E2E", "all"
        );
        let _ = writeln!(s, "{}", row("datasheet", &c.error.uncalibrated));
        let _ = writeln!(s, "{}", row("in sample", &c.error.in_sample));
        match &c.error.held_out {
            Some(h) => {
                let _ = writeln!(s, "{}", row("held out (LOO)", h));
            }
            None => {
                let _ = writeln!(s, "held out (LOO)      n/a (one point)");
            }
        }
        if let Some(x) = &c.error.extrapolation {
            let _ = writeln!(s, "{}", row("light → heavy", x));
        }
        let _ = writeln!(s, "\nverdict: {}", verdict_words(c));
        let _ = writeln!(
            s,
            "\nmeans in ms: measured / fitted / held out / fitted on the lighter half\n{:<22}{:<34}{:<34}{:<34}file",
            "load", "TTFT", "TPOT", "E2E"
        );
        for p in &self.points {
            let cell = |meas: Option<f64>, f: fn(&Prediction) -> f64| {
                format!(
                    "{} / {} / {} / {}",
                    opt_ms(meas),
                    ms(f(&p.predicted)),
                    p.held_out.map_or(MISSING.into(), |h| ms(f(&h))),
                    p.extrapolated.map_or(MISSING.into(), |h| ms(f(&h)))
                )
            };
            let _ = writeln!(
                s,
                "{:<22}{:<34}{:<34}{:<34}{}",
                load_label(&p.measured.load),
                cell(p.measured.ttft_mean_s, |x| x.ttft_s.mean),
                cell(p.measured.tpot_mean_s, |x| x.tpot_s.mean),
                cell(p.measured.e2e_mean_s, |x| x.e2e_s.mean),
                p.source,
            );
        }
        for w in &self.warnings {
            let _ = writeln!(s, "\nwarning: {w}");
        }
        s.trim_end().to_string()
    }
}
