//! Version 1 of the link payload: the whole plan as compact JSON, stored in one
//! of three modes, whichever is shortest, then base64url without padding:
//!
//! | mode | body |
//! | --- | --- |
//! | `j` | the JSON as it is |
//! | `z` | the JSON, raw-deflated (RFC 1951, no zlib header) |
//! | `d` | the JSON, raw-deflated against the preset [`DICTIONARY`] |
//!
//! Mode `d` is deflate with a preset dictionary: the compressor first sees the
//! dictionary, flushes to a byte boundary, then compresses the plan, and only
//! the bytes after the flush are sent. Back-references into the dictionary
//! make a plan close to the v1 defaults cost a few dozen bytes. The decoder puts
//! the dictionary in front as a stored block, inflates, and drops it again.
//!
//! The v1 plan shape is the [`Plan`] of this release. When a later release
//! changes that shape in a way `#[serde(default)]` cannot absorb, v1 bodies are
//! parsed into a `serde_json::Value` and migrated (see the parent module docs).

use miniz_oxide::deflate::core::{
    compress, create_comp_flags_from_zip_params, CompressorOxide, TDEFLFlush, TDEFLStatus,
};
use miniz_oxide::inflate::{decompress_to_vec_with_limit, TINFLStatus};

use super::{base64url, check_json_depth, short_message, DecodeError, MAX_JSON_BYTES};
use crate::plan::Plan;

/// The version tag this module reads and writes.
pub(crate) const VERSION: u32 = 1;

/// Deflate level: 10 is miniz's best; a plan is a few kilobytes, so speed is moot.
const DEFLATE_LEVEL: i32 = 10;

/// Mode letter for raw JSON.
const MODE_JSON: u8 = b'j';
/// Mode letter for raw-deflated JSON.
const MODE_DEFLATE: u8 = b'z';
/// Mode letter for JSON deflated against [`DICTIONARY`].
const MODE_DICTIONARY: u8 = b'd';

/// The preset dictionary of mode `d`: the JSON of the default plan when v1 was
/// made, preceded by the words a plan may use that the defaults do not.
///
/// Frozen: it is part of the v1 format. Changing one byte breaks every `d`
/// link in the wild (the corpus test catches it). A new dictionary means a new
/// mode letter or a new version.
/// The text of [`DICTIONARY`], as a macro so that later versions' dictionaries can
/// start with it byte for byte (`concat!` takes only literals).
macro_rules! v1_dictionary {
    () => {
        concat!(
        r#"{"kind":"gamma","cv":2.0}{"kind":"constant"}{"kind":"trace"}{"kind":"fixed","tokens":1024}"#,
        r#""fp8""int4""reserve""none""custom""code""voice""agent""summarization""batch"{"rate_rps":8.0,"#,
        r#""attainment":0.93}{"arrival_s":0.125,"prompt_tokens":1100,"output_tokens":275}{"name":"","#,
        r#""model":{"preset":"article-8b","params":8000000000.0,"active_params":8000000000.0,"#,
        r#""layers":32,"kv_heads":8,"head_dim":128,"weight_dtype":"bf16","kv_dtype":"bf16","#,
        r#""weight_bytes_override":null,"kv_bytes_per_token_override":null},"hardware":{"preset":"h100-sxm","#,
        r#""mem_bandwidth_bytes_per_s":3350000000000.0,"compute_flops_per_s":593000000000000.0,"#,
        r#""memory_bytes":80000000000.0,"mem_utilization":0.9,"step_overhead_s":0.001,"tp_degree":1,"#,
        r#""tp_comm_overhead_s":0.0,"gpu_hour_usd":2.5},"traffic":{"peak_rate_rps":30.0,"arrival":{"kind":"poisson"}"#,
        r#","prompt":{"dist":{"kind":"lognormal","median":800.0,"sigma":0.8},"min":16,"max":8000}"#,
        r#","output":{"dist":{"kind":"lognormal","median":200.0,"sigma":0.8},"min":1,"max":1024}"#,
        r#","prefix_tokens":0,"prefix_hit_rate":0.0,"trace":[]},"slo":{"class":"chat","ttft_s":0.5,"#,
        r#""tpot_s":0.025,"e2e_s":null,"attainment_target":0.9},"engine":{"max_num_seqs":128,"#,
        r#""max_num_batched_tokens":512,"chunked_prefill":true,"kv_policy":"paged","spec_draft_tokens":0,"#,
        r#""spec_acceptance":0.7},"planning":{"utilization":0.7,"redundancy":1,"hours_per_month":730.0,"#,
        r#""measured_sweep":[]},"run":{"num_requests":2500,"warmup_requests":200,"replications":20,"#,
        r#""seed":0,"sweep_max_num_seqs":[16,32,64,128,256,512],"sweep_batched_tokens":[256,"#,
        r#"512,1024,2048,8192,0]}}"#,
        )
    };
}

pub(crate) const DICTIONARY: &str = v1_dictionary!();

// The dictionary travels as one stored block, which holds at most 65,535 bytes.
const _: () = assert!(DICTIONARY.len() <= u16::MAX as usize);

/// Mode letter plus base64url text of `plan`, in the shortest mode, mode `d` against
/// `dictionary` (each version names its own).
pub(crate) fn encode_with(plan: &Plan, dictionary: &[u8]) -> String {
    // Serialising a `Plan` cannot fail: it has no maps and no fallible
    // serialisers (a non-finite float is written as `null`, which a later
    // decode rejects or reads as `None`; encode validated plans).
    let json = serde_json::to_vec(plan).unwrap_or_default();
    let candidates = [
        (MODE_DICTIONARY, deflate(dictionary, &json)),
        (MODE_DEFLATE, deflate(&[], &json)),
        (MODE_JSON, json),
    ];
    let (mode, bytes) = candidates
        .into_iter()
        .min_by_key(|(_, b)| b.len())
        .unwrap_or_default();
    let mut out = String::with_capacity(1 + bytes.len().div_ceil(3) * 4);
    out.push(char::from(mode));
    out.push_str(&base64url::encode(&bytes));
    out
}

/// Raw deflate of `data`, with `dictionary` (possibly empty) as its preset
/// dictionary; only the stream after the dictionary is returned.
fn deflate(dictionary: &[u8], data: &[u8]) -> Vec<u8> {
    let flags = create_comp_flags_from_zip_params(DEFLATE_LEVEL, 0, 0);
    let mut compressor = CompressorOxide::new(flags);
    let mut out = vec![0u8; 2 * (dictionary.len() + data.len()) + 64];
    let mut pos = 0;
    if !dictionary.is_empty() {
        // A sync flush after the dictionary ends its blocks on a byte boundary
        // and keeps the window, so the plan's blocks start on a fresh byte.
        let (_, _, n) = compress(&mut compressor, dictionary, &mut out, TDEFLFlush::Sync);
        pos = n;
    }
    let start = pos;
    let mut input = data;
    loop {
        let (status, used, n) =
            compress(&mut compressor, input, &mut out[pos..], TDEFLFlush::Finish);
        pos += n;
        input = input.get(used..).unwrap_or_default();
        match status {
            TDEFLStatus::Okay => out.resize(out.len() * 2, 0),
            _ => break,
        }
    }
    out.truncate(pos);
    out.split_off(start)
}

/// Inflates raw deflate `stream` that was made against `dictionary`, to at most
/// [`MAX_JSON_BYTES`] of output after the dictionary.
fn inflate(dictionary: &[u8], stream: &[u8]) -> Result<Vec<u8>, DecodeError> {
    let mut input = Vec::with_capacity(5 + dictionary.len() + stream.len());
    if !dictionary.is_empty() {
        // A non-final stored block holding the dictionary (it is under 64 KiB).
        let len = dictionary.len() as u16;
        input.push(0);
        input.extend_from_slice(&len.to_le_bytes());
        input.extend_from_slice(&(!len).to_le_bytes());
        input.extend_from_slice(dictionary);
    }
    input.extend_from_slice(stream);
    let mut out = decompress_to_vec_with_limit(&input, dictionary.len() + MAX_JSON_BYTES).map_err(
        |e| match e.status {
            TINFLStatus::HasMoreOutput => DecodeError::TooLargeDecompressed,
            _ => DecodeError::Decompress,
        },
    )?;
    if out.len() < dictionary.len() {
        return Err(DecodeError::Decompress);
    }
    Ok(out.split_off(dictionary.len()))
}

/// Decodes a v1 body (mode letter onwards) into a plan, without validating it. Fields
/// added after v2 take the value that keeps the link's meaning ([`legacy_defaults`]).
pub(crate) fn decode_body(body: &str) -> Result<Plan, DecodeError> {
    let json = decode_json(body, DICTIONARY.as_bytes())?;
    let mut plan = parse_plan(&json)?;
    legacy_defaults(&json, &mut plan);
    Ok(plan)
}

/// The JSON text of a body (mode letter onwards) whose mode `d` used `dictionary`,
/// checked for size, depth and an object at the top.
pub(crate) fn decode_json(body: &str, dictionary: &[u8]) -> Result<Vec<u8>, DecodeError> {
    let mode = *body.as_bytes().first().ok_or(DecodeError::BadHeader)?;
    if ![MODE_JSON, MODE_DEFLATE, MODE_DICTIONARY].contains(&mode) {
        return Err(DecodeError::BadHeader);
    }
    // The mode letter is ASCII, so the slice after it starts on a char boundary.
    let bytes = base64url::decode(&body[1..]).map_err(|e| DecodeError::BadBase64 { pos: e.pos })?;
    let json = match mode {
        MODE_DICTIONARY => inflate(dictionary, &bytes)?,
        MODE_DEFLATE => inflate(&[], &bytes)?,
        _ => bytes,
    };
    if json.len() > MAX_JSON_BYTES {
        return Err(DecodeError::TooLargeDecompressed);
    }
    check_json_depth(&json)?;
    // serde would also read a struct from a JSON array, by position; a plan is an object.
    if json.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(DecodeError::BadJson("expected a JSON object".into()));
    }
    Ok(json)
}

/// The plan in checked JSON text.
pub(crate) fn parse_plan(json: &[u8]) -> Result<Plan, DecodeError> {
    serde_json::from_slice::<Plan>(json).map_err(|e| DecodeError::BadJson(short_message(&e)))
}

/// The fields version 3 added, as a v1/v2 plan may or may not spell them.
#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct Probe {
    model: ProbeModel,
    hardware: ProbeHardware,
}

#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct ProbeModel {
    hidden_size: Option<serde::de::IgnoredAny>,
}

#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct ProbeHardware {
    interconnect_bytes_per_s: Option<serde::de::IgnoredAny>,
    allreduce_latency_s: Option<serde::de::IgnoredAny>,
    scaleout_bytes_per_s: Option<serde::de::IgnoredAny>,
    scaleout_latency_s: Option<serde::de::IgnoredAny>,
}

/// A v1/v2 link was made before tensor-parallel all-reduces were priced from the
/// interconnect: every such field the link does not spell out is 0 (no all-reduce
/// term), even where a missing section would otherwise take today's defaults. So the
/// link keeps the numbers it was made with.
fn legacy_defaults(json: &[u8], plan: &mut Plan) {
    let probe: Probe = serde_json::from_slice(json).unwrap_or_default();
    if probe.model.hidden_size.is_none() {
        plan.model.hidden_size = 0;
    }
    if probe.hardware.interconnect_bytes_per_s.is_none() {
        plan.hardware.interconnect_bytes_per_s = 0.0;
    }
    if probe.hardware.allreduce_latency_s.is_none() {
        plan.hardware.allreduce_latency_s = 0.0;
    }
    // Nor was the scale-out network known then.
    if probe.hardware.scaleout_bytes_per_s.is_none() {
        plan.hardware.scaleout_bytes_per_s = 0.0;
    }
    if probe.hardware.scaleout_latency_s.is_none() {
        plan.hardware.scaleout_latency_s = 0.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dictionary_streams_inflate_back() {
        let data = br#"{"name":"x","model":{"preset":"article-8b","params":7000000000.0}}"#;
        let packed = deflate(DICTIONARY.as_bytes(), data);
        assert!(packed.len() < deflate(&[], data).len());
        assert_eq!(
            inflate(DICTIONARY.as_bytes(), &packed).expect("inflates"),
            data
        );
    }

    #[test]
    fn without_a_dictionary_the_stream_is_plain_deflate() {
        let data = br#"{"name":"plain"}"#;
        let packed = deflate(&[], data);
        assert_eq!(packed, miniz_oxide::deflate::compress_to_vec(data, 10));
        assert_eq!(inflate(&[], &packed).expect("inflates"), data);
    }

    #[test]
    fn empty_input_deflates_and_inflates() {
        assert_eq!(inflate(&[], &deflate(&[], b"")).expect("inflates"), b"");
        let packed = deflate(DICTIONARY.as_bytes(), b"");
        assert_eq!(
            inflate(DICTIONARY.as_bytes(), &packed).expect("inflates"),
            b""
        );
    }

    #[test]
    fn long_incompressible_input_grows_the_buffer() {
        let mut x: u64 = 1;
        let data: Vec<u8> = (0..200_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let packed = deflate(DICTIONARY.as_bytes(), &data);
        assert_eq!(
            inflate(DICTIONARY.as_bytes(), &packed).expect("inflates"),
            data
        );
    }
}
