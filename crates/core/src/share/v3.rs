//! Version 3 of the link payload: the body is written as in versions 1 and 2 (the same
//! modes), with a dictionary for mode `d` that extends v1's by the default plan's new
//! words; what changed is the plan it carries.
//!
//! Version 3 plans price tensor-parallel all-reduces from the interconnect:
//! `model.hidden_size`, `hardware.interconnect_bytes_per_s` and
//! `hardware.allreduce_latency_s`, which today's default plan and presets fill. A v1 or
//! v2 link that does not spell them out decodes them as 0, the meaning it was made with
//! (see `v1::decode_body`); a v3 link that leaves them out takes today's defaults, like
//! any other missing field.

use super::v1::{decode_json, parse_plan};
use super::DecodeError;
use crate::plan::Plan;

/// The version tag this module reads and writes.
pub(crate) const VERSION: u32 = 3;

/// The text of [`DICTIONARY`], as a macro so that later versions' dictionaries can
/// start with it byte for byte.
macro_rules! v3_dictionary {
    () => {
        concat!(
            // The v1 dictionary, byte for byte (checked by a test below).
            v1_dictionary!(),
            r#""kv_bytes_per_token_override":null,"hidden_size":4096},"hardware":{"preset":"h100-sxm","#,
            r#""tp_comm_overhead_s":0.0,"gpu_hour_usd":2.5,"interconnect_bytes_per_s":450000000000.0,"#,
            r#""allreduce_latency_s":5e-6},"traffic":{"peak_rate_rps":30.0,"#,
        )
    };
}

/// The v1 dictionary, then the words the v3 default plan adds (placed last, where
/// deflate's back-references are shortest).
///
/// Frozen: it is part of the v3 format (see the v1 dictionary's note).
pub(crate) const DICTIONARY: &str = v3_dictionary!();

/// Decodes a v3 body (mode letter onwards) into a plan, without validating it.
pub(crate) fn decode_body(body: &str) -> Result<Plan, DecodeError> {
    parse_plan(&decode_json(body, DICTIONARY.as_bytes())?)
}

#[cfg(test)]
mod tests {
    use super::super::v1::DICTIONARY as V1_DICTIONARY;
    use super::*;

    #[test]
    fn the_v3_dictionary_starts_with_the_v1_dictionary() {
        assert!(DICTIONARY.starts_with(V1_DICTIONARY));
        assert!(DICTIONARY.len() > V1_DICTIONARY.len());
    }

    #[test]
    fn the_default_plan_spells_the_new_words_as_the_dictionary_does() {
        let json = serde_json::to_string(&Plan::default()).expect("json");
        for word in [
            r#""kv_bytes_per_token_override":null,"hidden_size":4096},"hardware":{"preset":"h100-sxm","#,
            r#""gpu_hour_usd":2.5,"interconnect_bytes_per_s":450000000000.0,"allreduce_latency_s":5e-6},"traffic":{"#,
        ] {
            assert!(json.contains(word), "{word} not in {json}");
        }
    }
}
