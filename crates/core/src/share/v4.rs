//! Version 4 of the link payload: the plan is v3's, written in its link form
//! (`share::link_form`), and mode `d`'s dictionary extends v3's by the words of what a
//! worked plan carries besides its inputs: a calibration with its measured points, a
//! GPU comparison's rows, a day schedule and prefill/decode pools. Those words made up
//! most of a fully used plan's link; with them in the dictionary, and the comparison
//! cut to the rows its verdict names, such a link fits in 2,000 characters.
//!
//! A v4 body decodes as a v3 body would, against this dictionary: every field a v3
//! plan has means the same. The tag moved so that an older release refuses a link
//! whose dictionary it lacks ("format version 4 … open it with a newer release").

use super::v1::{decode_json, encode_with, parse_plan};
use super::DecodeError;
use crate::plan::Plan;

/// The version tag this module reads and writes.
pub(crate) const VERSION: u32 = 4;

/// The v3 dictionary, then the words of a calibration, a GPU comparison, a day schedule
/// and prefill/decode pools, as the plan's JSON spells them (the most frequent last,
/// where deflate's back-references are shortest).
///
/// Frozen: it is part of the v4 format (see the v1 dictionary's note).
pub(crate) const DICTIONARY: &str = concat!(
    // The v3 dictionary, byte for byte (checked by a test below).
    v3_dictionary!(),
    r#""disagg":{"prefill":{"tp_degree":1,"max_num_batched_tokens":8192},"decode":{"tp_degree":1,"#,
    r#""max_num_seqs":128},"kv_link":{"bandwidth_bytes_per_s":50000000000.0,"latency_s":0.001},"#,
    r#""router":"least_loaded"}"round_robin""#,
    r#""schedule":{"profile":{"hourly":[0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0],"absolute":true,"#,
    r#""source":" shape"},"options":{"scale_up_lag_min":10.0,"cooldown_min":30.0,"lead_min":0.0,"#,
    r#""min_replicas":1,"simulate":true,"replications":1}}"#,
    r#""NVIDIA H100 SXM 80GB""NVIDIA H200 SXM 141GB""NVIDIA B200 180GB""#,
    r#""NVIDIA A100 SXM 80GB""NVIDIA L40S 48GB""AMD Instinct MI300X 192GB""#,
    r#""shootout":{"fingerprint":"","spec":{"gpus":["h100-sxm","h200","b200","a100-80gb","l40s","#,
    r#""mi300x"],"tp_degrees":[1,2,4,8],"speculation":true},"result":{"rows":[{"gpu":"h200","#,
    r#""gpu_name":"NVIDIA H200 SXM 141GB","tp":1,"fits":false,"reason":"the weights need "#,
    r#""fits":true,"reason":null,"goodput_rps":1.0,"replicas_total":1,"gpus_total":1,"#,
    r#""cost_per_hour_usd":1.0,"cost_per_month_usd":1000.0,"cost_per_compliant_request_usd":0.0001,"#,
    r#""ttft_p99_s":0.1,"tpot_p99_s":0.01,"output_tokens_per_s_per_gpu":1000.0,"#,
    r#""kv_capacity_tokens":100000.0,"gpus_needed":1,"chosen":false,"constants":"measured"carried","#,
    r#""spec_draft_tokens":3,"spec_acceptance":0.7}],"best":0,"chosen":1},"omitted":20}"#,
    r#""calibration":{"enabled":true,"bandwidth_efficiency":{"value":0.8,"sd":0.01},"#,
    r#""compute_efficiency":{"value":0.6,"sd":0.01},"step_overhead_s":{"value":0.001,"sd":0.0001},"#,
    r#""seq_overhead_s":{"value":1e-05,"sd":1e-06},"frontend_s":{"value":0.01,"sd":0.001},"#,
    r#""prefill_overhead_s":{"value":0.001,"sd":0.0001},"kv_read_efficiency":{"value":0.5,"sd":0.01},"#,
    r#""source":{"files":["vllm-.json","guidellm.csv"],"tool":"vllm bench serve","guidellm","#,
    r#""model":"meta-llama/Llama-3.1-","engine":"vllm","sglang","fitted_model":"llama-3.1-","#,
    r#""fitted_gpu":"h200","fitted_tp_degree":1,"spec":{"drafts":1,"draft_tokens":1,"#,
    r#""accepted_tokens":1}},"error":{"in_sample":{"ttft":0.1,"tpot":0.01,"e2e":0.01,"#,
    r#""overall":0.1},"held_out":{"ttft":0.1,"tpot":0.01,"e2e":0.01,"overall":0.1},"#,
    r#""extrapolation":{"ttft":0.1,"tpot":0.01,"e2e":0.01,"overall":0.1},"uncalibrated":{"#,
    r#""ttft":0.1,"tpot":0.01,"e2e":0.01,"overall":0.1}},"points":[{"load":{"kind":"concurrency","#,
    r#""concurrency":16},"achieved_rps":1.0,"ttft_mean_s":0.1,"ttft_p50_s":0.1,"ttft_p99_s":0.1,"#,
    r#""tpot_mean_s":0.01,"tpot_p50_s":0.01,"tpot_p99_s":0.01,"e2e_mean_s":1.0,"e2e_p50_s":1.0,"#,
    r#""e2e_p99_s":1.0},{"load":{"kind":"rate","rate_rps":1.0,"cv":1.0},"achieved_rps":0.1,"#,
    r#""ttft_mean_s":0.1,"ttft_p50_s":0.1,"ttft_p99_s":0.1,"tpot_mean_s":0.01,"tpot_p50_s":0.01,"#,
    r#""tpot_p99_s":0.01,"e2e_mean_s":1.0,"e2e_p50_s":1.0,"e2e_p99_s":1.0}]}"#,
);

// The dictionary travels as one stored block, which holds at most 65,535 bytes.
const _: () = assert!(DICTIONARY.len() <= u16::MAX as usize);

/// Mode letter plus base64url text of `plan`, in the shortest mode.
pub(crate) fn encode_body(plan: &Plan) -> String {
    encode_with(plan, DICTIONARY.as_bytes())
}

/// Decodes a v4 body (mode letter onwards) into a plan, without validating it.
pub(crate) fn decode_body(body: &str) -> Result<Plan, DecodeError> {
    parse_plan(&decode_json(body, DICTIONARY.as_bytes())?)
}

#[cfg(test)]
mod tests {
    use super::super::v3::DICTIONARY as V3_DICTIONARY;
    use super::*;

    #[test]
    fn the_v4_dictionary_starts_with_the_v3_dictionary() {
        assert!(DICTIONARY.starts_with(V3_DICTIONARY));
        assert!(DICTIONARY.len() > V3_DICTIONARY.len());
    }
}
