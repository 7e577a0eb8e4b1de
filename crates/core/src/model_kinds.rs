//! The kinds a model is described by, shared by the preset catalogue and the plan: the
//! precision values are stored at, and how the attention layers cache keys and values.

use serde::{Deserialize, Serialize};

/// Numeric precision of weights or of the KV cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Dtype {
    /// 16-bit brain float: 2 bytes per value.
    #[default]
    Bf16,
    /// 8-bit float: 1 byte per value.
    Fp8,
    /// 4-bit integer: half a byte per value.
    Int4,
}

impl Dtype {
    /// Bytes per stored value.
    pub fn bytes(self) -> f64 {
        match self {
            Dtype::Bf16 => 2.0,
            Dtype::Fp8 => 1.0,
            Dtype::Int4 => 0.5,
        }
    }

    /// The short lowercase name (`bf16`, `fp8`, `int4`).
    pub fn name(self) -> &'static str {
        match self {
            Dtype::Bf16 => "bf16",
            Dtype::Fp8 => "fp8",
            Dtype::Int4 => "int4",
        }
    }

    /// Every precision.
    pub const ALL: [Dtype; 3] = [Dtype::Bf16, Dtype::Fp8, Dtype::Int4];

    /// Reads a precision's name.
    pub fn parse(s: &str) -> Option<Dtype> {
        Dtype::ALL.into_iter().find(|d| d.name() == s)
    }
}

/// How the attention layers cache keys and values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum AttentionKind {
    /// Grouped-query (and multi-head / multi-query) attention: every layer caches a key
    /// and a value of `head_dim` for each of its `kv_heads` [2 × kv_heads × head_dim values].
    #[default]
    GroupedQuery,
    /// Multi-head latent attention (DeepSeek-V2/V3): every layer caches one compressed
    /// latent of `kv_lora_rank` plus the shared rotary key part of `qk_rope_head_dim`
    /// [kv_lora_rank + qk_rope_head_dim values].
    MultiHeadLatent,
}

impl AttentionKind {
    /// True for the default, grouped-query attention.
    pub fn is_grouped_query(&self) -> bool {
        *self == AttentionKind::GroupedQuery
    }
}
