//! A calibration's errors as tables, one column per metric: the errors of the means
//! (the datasheet's, the fit's in sample, held out, and fitted light to predict heavy),
//! and apart from them the same errors of the 99th percentiles.

use goodput_core::format::{percent_tenths, MISSING};
use goodput_core::plan::{CalibrationError, MetricErrors};
use leptos::prelude::*;

/// The rows of an error table: (row key, label, errors; `None` for a row not computed).
pub fn error_rows(e: &CalibrationError) -> Vec<(&'static str, &'static str, Option<MetricErrors>)> {
    vec![
        ("datasheet", "Datasheet constants", Some(e.uncalibrated)),
        ("in_sample", "Fitted, in sample", Some(e.in_sample)),
        ("held_out", "Fitted, held out (loads in range)", e.held_out),
        (
            "extrapolation",
            "Fitted on the lighter half, heavier half predicted",
            e.extrapolation,
        ),
    ]
}

/// One row of an error table; each cell carries its metric and its value.
fn error_row(key: &'static str, label: &'static str, e: Option<MetricErrors>) -> impl IntoView {
    // The missing mark for a row not computed, or a metric no file gives.
    let cell = move |metric: &'static str, f: fn(&MetricErrors) -> Option<f64>| {
        let v = e.as_ref().and_then(f);
        view! {
            <td data-metric=metric data-value=v.map(|v| v.to_string()).unwrap_or_default()>
                {v.map(percent_tenths).unwrap_or_else(|| MISSING.into())}
            </td>
        }
    };
    view! {
        <tr data-row=key><th scope="row">{label}</th>{cell("ttft", |e| e.ttft)}{cell("tpot", |e| e.tpot)}
            {cell("e2e", |e| e.e2e)}{cell("all", |e| Some(e.overall))}</tr>
    }
}

/// An error table under `caption`.
#[component]
pub fn CalibrationErrors(
    /// The errors shown.
    errors: CalibrationError,
    /// What the errors are of, for the caption.
    caption: &'static str,
    /// The table's test id.
    testid: &'static str,
    /// The table's class.
    class: &'static str,
) -> impl IntoView {
    let rows = error_rows(&errors)
        .into_iter()
        .map(|(key, label, e)| error_row(key, label, e))
        .collect_view();
    view! {
        <div class="table-scroll">
            <table class=class data-testid=testid>
                <caption>{caption}</caption>
                <thead><tr><th></th><th>"TTFT"</th><th>"TPOT"</th><th>"E2E"</th><th>"All"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
}

/// Caption of the table of the means' errors.
pub const MEANS_CAPTION: &str = "Errors of the means: mean absolute error of the mean \
     TTFT, TPOT and E2E (the median where a file gives no mean) against the measurements";

/// Caption of the table of the 99th percentiles' errors.
pub const TAILS_CAPTION: &str = "Errors of the 99th percentiles, apart: noisy, since a \
     point of a few hundred requests has only a few of them in its tail";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rows_are_the_datasheet_then_the_fit_in_and_beyond_the_range() {
        let e = CalibrationError {
            in_sample: MetricErrors::default(),
            held_out: None,
            extrapolation: Some(MetricErrors {
                overall: 0.3,
                ..MetricErrors::default()
            }),
            uncalibrated: MetricErrors::default(),
        };
        let rows = error_rows(&e);
        let keys: Vec<&str> = rows.iter().map(|r| r.0).collect();
        assert_eq!(
            keys,
            ["datasheet", "in_sample", "held_out", "extrapolation"]
        );
        assert!(rows[2].2.is_none(), "no held-out row computed");
        assert_eq!(rows[3].2.map(|x| x.overall), Some(0.3));
    }
}
