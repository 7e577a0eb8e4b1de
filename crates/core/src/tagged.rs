//! Reading the project's internally tagged enums (`{"kind": "gamma", "cv": 2}`) with one
//! small reader instead of serde's derived one. The derived reader of a
//! `#[serde(tag = "kind")]` enum first buffers the whole object into serde's private
//! generic tree and then reads every variant a second way, from that tree: code the web
//! page's module carried for four enums (BENCHMARKS.md, "Wasm payload").
//!
//! Same rules as the derived reader: `kind` names the variant; a field of that variant
//! is read, and missing one is an error; keys that only another variant reads, or no
//! variant at all, are ignored. Writing stays derived (`#[serde(tag = "kind")]`).

use serde::de::{DeserializeOwned, Error};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

/// An internally tagged object, read: its `kind` and its other keys.
pub(crate) struct Tagged {
    kind: String,
    fields: Map<String, Value>,
}

impl Tagged {
    /// Reads an object with a string `kind`.
    pub(crate) fn read<'de, D: Deserializer<'de>>(d: D) -> Result<Tagged, D::Error> {
        let mut fields = Map::<String, Value>::deserialize(d)?;
        let kind = match fields.remove("kind") {
            Some(kind) => String::deserialize(kind).map_err(D::Error::custom)?,
            None => return Err(D::Error::missing_field("kind")),
        };
        Ok(Tagged { kind, fields })
    }

    /// The variant's name.
    pub(crate) fn kind(&self) -> &str {
        &self.kind
    }

    /// Reads the variant's field `name`.
    pub(crate) fn field<T: DeserializeOwned, E: Error>(
        &mut self,
        name: &'static str,
    ) -> Result<T, E> {
        match self.fields.remove(name) {
            Some(v) => T::deserialize(v).map_err(E::custom),
            None => Err(E::missing_field(name)),
        }
    }

    /// The error for a `kind` that is none of `variants`.
    pub(crate) fn unknown<E: Error>(&self, variants: &'static [&'static str]) -> E {
        E::unknown_variant(&self.kind, variants)
    }
}

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
