//! The project's internally tagged enums (`{"kind": "gamma", "cv": 2}`) are read by one
//! small reader, `goodput_engine::tagged`; these tests hold every such enum of the plan
//! to it.

pub(crate) use goodput_engine::tagged::Tagged;

#[cfg(test)]
mod tests {
    use crate::calibrate::FitTask;
    use crate::plan::{Arrival, LengthDist, MeasuredLoad};
    use serde::de::DeserializeOwned;
    use serde::Serialize;
    use std::fmt::Debug;

    /// `value` written and read back, from text and from a JSON tree.
    fn round_trip<T: Serialize + DeserializeOwned + PartialEq + Debug>(value: T) {
        let text = serde_json::to_string(&value).unwrap();
        assert_eq!(serde_json::from_str::<T>(&text).unwrap(), value, "{text}");
        let tree = serde_json::to_value(&value).unwrap();
        assert_eq!(serde_json::from_value::<T>(tree).unwrap(), value, "{text}");
    }

    #[test]
    fn every_variant_reads_back_what_was_written() {
        for a in [
            Arrival::Poisson,
            Arrival::Gamma { cv: 2.5 },
            Arrival::Constant,
            Arrival::Trace,
            Arrival::Closed {
                concurrency: 7,
                think_s: 0.25,
            },
        ] {
            round_trip(a);
        }
        for l in [
            LengthDist::LogNormal {
                median: 800.0,
                sigma: 0.8,
            },
            LengthDist::Fixed { tokens: 12 },
            LengthDist::Trace,
        ] {
            round_trip(l);
        }
        round_trip(MeasuredLoad::Rate {
            rate_rps: 3.5,
            cv: 1.0,
        });
        round_trip(MeasuredLoad::Concurrency { concurrency: 4 });
        round_trip(FitTask::Full);
        round_trip(FitTask::LeaveOut { point: 3 });
        round_trip(FitTask::Bootstrap {
            sample: vec![0, 2, 2],
        });
    }

    #[test]
    fn the_kind_may_come_last_and_other_variants_keys_are_ignored() {
        let a: Arrival =
            serde_json::from_str(r#"{"cv": 3, "think_s": "x", "kind": "gamma"}"#).unwrap();
        assert_eq!(a, Arrival::Gamma { cv: 3.0 });
        let a: Arrival = serde_json::from_str(r#"{"kind": "poisson", "cv": "not read"}"#).unwrap();
        assert_eq!(a, Arrival::Poisson);
    }

    #[test]
    fn a_bad_object_is_refused_with_what_is_wrong() {
        let err = |text: &str| {
            serde_json::from_str::<Arrival>(text)
                .unwrap_err()
                .to_string()
        };
        assert!(err(r#"{"kind": "bursty"}"#).starts_with(
            "unknown variant `bursty`, expected one of `poisson`, `gamma`, `constant`, `trace`, `closed`"
        ));
        assert!(err(r#"{"kind": "gamma"}"#).starts_with("missing field `cv`"));
        assert!(err(r#"{"cv": 2}"#).starts_with("missing field `kind`"));
        assert!(err(r#"{"kind": 2}"#).starts_with("invalid type: integer `2`, expected a string"));
        assert!(err(r#"{"kind": "gamma", "cv": "two"}"#)
            .starts_with("invalid type: string \"two\", expected f64"));
        assert!(
            err(r#"{"kind": "closed", "concurrency": 2.5, "think_s": 0}"#)
                .starts_with("invalid type: floating point `2.5`, expected u32")
        );
        assert!(err(r#""gamma""#).starts_with("invalid type: string \"gamma\", expected a map"));
    }
}
