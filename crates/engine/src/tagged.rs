//! Reading the project's internally tagged enums (`{"kind": "gamma", "cv": 2}`) with one
//! small reader instead of serde's derived one. The derived reader of a
//! `#[serde(tag = "kind")]` enum first buffers the whole object into serde's private
//! generic tree and then reads every variant a second way, from that tree: code the web
//! page's module carried for four enums (BENCHMARKS.md, "Wasm payload"). The plan's
//! arrival and length distributions here, and `goodput-core`'s measured loads and fit
//! tasks, read through it.
//!
//! Same rules as the derived reader: `kind` names the variant; a field of that variant
//! is read, and missing one is an error; keys that only another variant reads, or no
//! variant at all, are ignored. Writing stays derived (`#[serde(tag = "kind")]`).

use serde::de::{DeserializeOwned, Error};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

/// An internally tagged object, read: its `kind` and its other keys.
pub struct Tagged {
    kind: String,
    fields: Map<String, Value>,
}

impl Tagged {
    /// Reads an object with a string `kind`.
    pub fn read<'de, D: Deserializer<'de>>(d: D) -> Result<Tagged, D::Error> {
        let mut fields = Map::<String, Value>::deserialize(d)?;
        let kind = match fields.remove("kind") {
            Some(kind) => String::deserialize(kind).map_err(D::Error::custom)?,
            None => return Err(D::Error::missing_field("kind")),
        };
        Ok(Tagged { kind, fields })
    }

    /// The variant's name.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// Reads the variant's field `name`.
    pub fn field<T: DeserializeOwned, E: Error>(&mut self, name: &'static str) -> Result<T, E> {
        match self.fields.remove(name) {
            Some(v) => T::deserialize(v).map_err(E::custom),
            None => Err(E::missing_field(name)),
        }
    }

    /// The error for a `kind` that is none of `variants`.
    pub fn unknown<E: Error>(&self, variants: &'static [&'static str]) -> E {
        E::unknown_variant(&self.kind, variants)
    }
}
