//! The roofline step-time model's constants and its step time; `goodput_core::roofline`
//! resolves them from a plan and explains the model.

/// Every constant of the step-time model, resolved from a plan.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepModel {
    /// Parameters active per token; sets the FLOPs (2 per parameter per token) [parameters].
    pub params: f64,
    /// Weight bytes read once per step (all GPUs together) [bytes].
    pub weight_bytes: f64,
    /// KV-cache bytes per token of context (all GPUs together) [bytes/token].
    pub kv_bytes_per_token: f64,
    /// Memory bandwidth of one GPU [bytes/s].
    pub mem_bandwidth_bytes_per_s: f64,
    /// Achievable matmul throughput of one GPU [FLOP/s].
    pub compute_flops_per_s: f64,
    /// Fixed per-step overhead (scheduling, sampling, launches) [s].
    pub step_overhead_s: f64,
    /// Tensor-parallel degree g: weight reads, KV reads and FLOPs divide over g GPUs.
    pub tp_degree: u32,
    /// Extra fixed per-step communication time added when `tp_degree > 1` [s].
    pub tp_comm_overhead_s: f64,
    /// Latency part of the step's all-reduces, `2L × alpha`, added when `tp_degree > 1` [s].
    pub tp_allreduce_latency_s: f64,
    /// Bandwidth part of the step's all-reduces per token of the step,
    /// `2L × 2(g−1)/g × d × 2 bytes / B`; 0 when `tp_degree` is 1 [s/token].
    pub tp_comm_s_per_token: f64,
    /// Scheduling time per sequence scheduled in a step (CPU-side bookkeeping that grows
    /// with the batch); 0 in the articles' model [s/sequence].
    pub seq_overhead_s: f64,
    /// Per-request time outside the engine's steps (HTTP, tokenising, detokenising the
    /// first token), added to TTFT and E2E; 0 in the articles' model [s].
    pub frontend_s: f64,
    /// Extra fixed time of a step that computes prompt tokens: engines replay captured
    /// CUDA graphs for decode-only batches and launch a mixed batch's kernels one by
    /// one; 0 in the articles' model [s].
    pub prefill_overhead_s: f64,
    /// Share of the memory bandwidth the attention kernels reach reading the KV cache,
    /// relative to the weight reads (paged blocks, dequantised KV, short rows); 1 in the
    /// articles' model, where KV and weights stream alike [0..].
    pub kv_read_efficiency: f64,
    /// Attention FLOPs per pair of (query token, earlier token) in a prefill, over the
    /// full-attention layers: `4 × L × heads × head_dim`; 0 leaves prefill attention
    /// out, as the articles' model does [FLOP].
    pub attn_flops_per_pair: f64,
    /// The same for the sliding-window layers, whose pairs stop at the window [FLOP].
    pub window_attn_flops_per_pair: f64,
    /// Window of the sliding-window layers [tokens].
    pub attn_window_tokens: f64,
    /// Bytes of the routed experts' weights, part of `weight_bytes`; 0 for a dense model
    /// (all GPUs together) [bytes].
    pub expert_weight_bytes: f64,
    /// Chance that one token leaves a given routed expert untouched, `1 − k/E` for `k`
    /// experts per token out of `E`, with uniform routing [0..1].
    pub expert_miss_per_token: f64,
    /// How much more often a token picks an expert of the popular half than one of the
    /// other half; 1 for uniform routing ([`StepModel::expert_misses`]) [ratio ≥ 1].
    pub expert_routing_skew: f64,
    /// Pipeline-parallel degree p: stages of `tp_degree` GPUs, each holding `1/p` of the
    /// layers; 1 for none ([`StepModel::micro_batches`]).
    pub pp_degree: u32,
    /// Latency of the activation sends between stages, over the `p − 1` stage boundaries
    /// together; 0 at PP 1 [s].
    pub pp_send_latency_s: f64,
    /// Bandwidth time of those sends per token of a micro-batch, `d × 2 bytes / B` summed
    /// over the boundaries, each on its own link; 0 at PP 1 [s/token].
    pub pp_send_s_per_token: f64,
    /// Expert-parallel degree e: the routed experts split over e GPUs, each running
    /// attention data-parallel on its own share of the sequences (`tp_degree` 1); 1 for
    /// none ([`StepModel::ep_ranks`]).
    pub ep_degree: u32,
    /// Latency of a step's all-to-alls (dispatch and combine, every MoE layer); 0 at EP 1 [s].
    pub ep_a2a_latency_s: f64,
    /// Bandwidth time of those all-to-alls per token of one rank; 0 at EP 1 [s/token].
    pub ep_a2a_s_per_token: f64,
}

/// Weight bytes a step of `n_tok` tokens reads, of `w` bytes of which `x` are routed
/// experts, each left untouched by one token with chance `q` (uniform routing), or by the
/// two halves' `(q_hot, q_cold)` with skewed routing ([`StepModel::expert_misses`]). The
/// one formula of [`StepModel::weights_read`] and of the engine's step timer, which keeps
/// its inputs at hand [bytes].
#[inline(always)]
pub fn weights_read_of(w: f64, x: f64, q: f64, halves: Option<(f64, f64)>, n_tok: f64) -> f64 {
    if x <= 0.0 {
        return w;
    }
    match halves {
        None => w - x * libm::pow(q, n_tok),
        Some((hot, cold)) => w - 0.5 * x * (libm::pow(hot, n_tok) + libm::pow(cold, n_tok)),
    }
}

/// Parts `n_seqs` sequences split into over `ways` (stages or ranks): `min(ways,
/// n_seqs)`, whole, at least 1.
fn split_over(ways: u32, n_seqs: f64) -> f64 {
    let p = ways.max(1) as f64;
    if n_seqs < 1.0 {
        1.0
    } else if n_seqs < p {
        n_seqs.floor()
    } else {
        p
    }
}

/// The constants a calibration fits, applied by [`StepModel::calibrated`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FittedConstants {
    /// Achieved share of the datasheet memory bandwidth [0..].
    pub bandwidth_efficiency: f64,
    /// Achieved share of the datasheet compute [0..].
    pub compute_efficiency: f64,
    /// Fixed per-step overhead [s].
    pub step_overhead_s: f64,
    /// Scheduling time per sequence in a step [s/sequence].
    pub seq_overhead_s: f64,
    /// Per-request time outside the engine's steps [s].
    pub frontend_s: f64,
    /// Extra fixed time of a step that computes prompt tokens [s].
    pub prefill_overhead_s: f64,
    /// KV-read bandwidth relative to the weight reads [0..].
    pub kv_read_efficiency: f64,
}

impl StepModel {
    /// A dense model's step model with every term beyond the articles' roofline off:
    /// no per-sequence time, no frontend, no prefill attention, no routed experts.
    #[allow(clippy::too_many_arguments)]
    pub fn roofline(
        params: f64,
        weight_bytes: f64,
        kv_bytes_per_token: f64,
        mem_bandwidth_bytes_per_s: f64,
        compute_flops_per_s: f64,
        step_overhead_s: f64,
        tp_degree: u32,
    ) -> StepModel {
        StepModel {
            params,
            weight_bytes,
            kv_bytes_per_token,
            mem_bandwidth_bytes_per_s,
            compute_flops_per_s,
            step_overhead_s,
            tp_degree,
            tp_comm_overhead_s: 0.0,
            tp_allreduce_latency_s: 0.0,
            tp_comm_s_per_token: 0.0,
            seq_overhead_s: 0.0,
            frontend_s: 0.0,
            prefill_overhead_s: 0.0,
            kv_read_efficiency: 1.0,
            attn_flops_per_pair: 0.0,
            window_attn_flops_per_pair: 0.0,
            attn_window_tokens: 0.0,
            expert_weight_bytes: 0.0,
            expert_miss_per_token: 1.0,
            expert_routing_skew: 1.0,
            pp_degree: 1,
            pp_send_latency_s: 0.0,
            pp_send_s_per_token: 0.0,
            ep_degree: 1,
            ep_a2a_latency_s: 0.0,
            ep_a2a_s_per_token: 0.0,
        }
    }

    /// Ranks busy in a step of `n_seqs` sequences under expert parallelism:
    /// `r = min(e, n_seqs)`, at least 1. Each rank attends to its own sequences, so the
    /// busiest holds `1/r` of the step's tokens and context (the sequences spread evenly).
    /// 1 at EP 1.
    pub fn ep_ranks(&self, n_seqs: f64) -> f64 {
        split_over(self.ep_degree, n_seqs)
    }

    /// Weight bytes one GPU reads in an expert-parallel step of `n_tok` tokens (all
    /// ranks together): the dense part whole (every rank holds it), and its `1/e` of the
    /// routed experts that some token of the step picks [bytes].
    pub fn ep_weights_read(&self, n_tok: f64) -> f64 {
        let dense = self.weight_bytes - self.expert_weight_bytes;
        dense + (self.weights_read(n_tok) - dense) / self.ep_degree.max(1) as f64
    }

    /// Time of the all-to-alls of one rank's `n_tok` tokens; 0 at EP 1 [s].
    pub fn ep_a2a_time_s(&self, n_tok: f64) -> f64 {
        self.ep_a2a_latency_s + self.ep_a2a_s_per_token * n_tok
    }

    /// Micro-batches a step of `n_seqs` sequences splits into under pipeline parallelism:
    /// `m = min(p, n_seqs)`, at least 1. Each micro-batch passes the `p` stages in turn
    /// while the others occupy the other stages; a sequence sits in one micro-batch, so
    /// fewer sequences than stages leave stages idle (the pipeline bubble). 1 at PP 1.
    pub fn micro_batches(&self, n_seqs: f64) -> f64 {
        split_over(self.pp_degree, n_seqs)
    }

    /// Time of the activation sends of one micro-batch of `n_tok` tokens through the
    /// stages: latency plus bandwidth over the `p − 1` boundaries; 0 at PP 1 [s].
    pub fn pp_send_time_s(&self, n_tok: f64) -> f64 {
        self.pp_send_latency_s + self.pp_send_s_per_token * n_tok
    }

    /// This model with fitted constants: bandwidth and compute scaled by the achieved
    /// shares; the fixed per-step overhead, the per-sequence time and the frontend time
    /// replaced.
    pub fn calibrated(&self, c: &FittedConstants) -> StepModel {
        StepModel {
            mem_bandwidth_bytes_per_s: self.mem_bandwidth_bytes_per_s * c.bandwidth_efficiency,
            compute_flops_per_s: self.compute_flops_per_s * c.compute_efficiency,
            step_overhead_s: c.step_overhead_s,
            seq_overhead_s: c.seq_overhead_s,
            frontend_s: c.frontend_s,
            prefill_overhead_s: c.prefill_overhead_s,
            kv_read_efficiency: c.kv_read_efficiency,
            ..*self
        }
    }

    /// With skewed routing, the chances that one token leaves a given expert of the
    /// popular half and of the other half untouched, `(1 − 2s/(s+1)·k/E, 1 − 2/(s+1)·k/E)`
    /// for a skew `s`: a popular expert is picked `s` times as often, and a token still
    /// picks `k` experts on average. A popular expert is picked at most surely; the picks
    /// past that go to the other half. `None` for uniform routing (`s` = 1), whose one
    /// chance is `expert_miss_per_token`.
    pub fn expert_misses(&self) -> Option<(f64, f64)> {
        let s = self.expert_routing_skew;
        if s == 1.0 || !s.is_finite() {
            return None;
        }
        let pick = 1.0 - self.expert_miss_per_token;
        let hot = (pick * 2.0 * s / (s + 1.0)).min(1.0);
        let cold = (2.0 * pick - hot).min(1.0);
        Some((1.0 - hot, 1.0 - cold))
    }

    /// Weight bytes a step of `n_tok` tokens reads: the dense part, plus each routed
    /// expert that at least one token picks, `X × (1 − q^n)` (all GPUs together); with
    /// skewed routing, each half of the experts by its own chance,
    /// `X/2 × (1 − q_hot^n) + X/2 × (1 − q_cold^n)` [bytes].
    pub fn weights_read(&self, n_tok: f64) -> f64 {
        weights_read_of(
            self.weight_bytes,
            self.expert_weight_bytes,
            self.expert_miss_per_token,
            self.expert_misses(),
            n_tok,
        )
    }

    /// Attention FLOPs of a prefill chunk of `chunk` tokens after `done` tokens of the
    /// same prompt (a cached prefix included): every chunk token attends to the earlier
    /// tokens and to itself, `chunk × done + chunk × (chunk + 1) / 2` pairs in the full
    /// layers; in the window layers, at most the window each [FLOP].
    pub fn prefill_attn_flops(&self, chunk: f64, done: f64) -> f64 {
        let pairs = chunk * done + chunk * (chunk + 1.0) * 0.5;
        let window = if self.window_attn_flops_per_pair > 0.0 {
            let reach = done + (chunk + 1.0) * 0.5;
            let w = if reach < self.attn_window_tokens {
                reach
            } else {
                self.attn_window_tokens
            };
            self.window_attn_flops_per_pair * chunk * w
        } else {
            0.0
        };
        self.attn_flops_per_pair * pairs + window
    }

    /// Whether prefill attention is priced (the model knows its heads).
    pub fn prices_attention(&self) -> bool {
        self.attn_flops_per_pair > 0.0 || self.window_attn_flops_per_pair > 0.0
    }

    /// GPUs the work is split over (at least 1).
    fn gpus(&self) -> f64 {
        self.tp_degree.max(1) as f64
    }

    /// Fixed time of every step: `c0`, plus, when `g > 1`, the fixed TP overhead and the
    /// all-reduces' latency [s].
    pub fn fixed_time_s(&self) -> f64 {
        if self.tp_degree > 1 {
            self.step_overhead_s + self.tp_comm_overhead_s + self.tp_allreduce_latency_s
        } else {
            self.step_overhead_s
        }
    }

    /// Bandwidth time of the step's all-reduces for `n_tok` tokens; 0 at TP 1 [s].
    pub fn comm_time_s(&self, n_tok: f64) -> f64 {
        self.tp_comm_s_per_token * n_tok
    }

    /// Time of a step that is one prefill chunk of `n_tok` tokens, taken as compute-bound:
    /// fixed time + all-reduces + compute [s].
    pub fn chunk_time_s(&self, n_tok: f64) -> f64 {
        self.fixed_time_s() + self.comm_time_s(n_tok) + self.compute_time_s(n_tok)
    }

    /// Bytes read in a step whose decoders hold `ctx_tokens` of context, all GPUs
    /// together, with every routed expert read, the KV bytes weighed by how much slower
    /// they stream than the weights: the bytes the weights' bandwidth would take the same
    /// time over [bytes].
    pub fn bytes_read(&self, ctx_tokens: f64) -> f64 {
        self.weight_bytes + self.kv_read_bytes_per_token() * ctx_tokens
    }

    /// KV bytes per token of context as the weights' bandwidth sees them: the bytes over
    /// the KV-read efficiency (the bytes themselves at 1) [bytes/token].
    pub fn kv_read_bytes_per_token(&self) -> f64 {
        if self.kv_read_efficiency == 1.0 {
            self.kv_bytes_per_token
        } else {
            self.kv_bytes_per_token / self.kv_read_efficiency
        }
    }

    /// Memory time: weights plus `ctx_tokens` of KV, read at `g × beta` [s].
    pub fn memory_time_s(&self, ctx_tokens: f64) -> f64 {
        self.bytes_read(ctx_tokens) / (self.gpus() * self.mem_bandwidth_bytes_per_s)
    }

    /// Compute time of `n_tok` tokens: `2 × P × n_tok / (g × pi_eff)` [s].
    pub fn compute_time_s(&self, n_tok: f64) -> f64 {
        2.0 * self.params * n_tok / (self.gpus() * self.compute_flops_per_s)
    }

    /// Time of one engine step [s] that processes `n_tok` tokens while its decoding
    /// sequences hold `ctx_tokens` of context, without the per-sequence time and prefill
    /// attention (see [`StepModel::step_time_full_s`]).
    pub fn step_time_s(&self, n_tok: f64, ctx_tokens: f64) -> f64 {
        // The step's tokens are its decoders: they set the micro-batches or ranks.
        self.split_step_s(n_tok, ctx_tokens, n_tok, 0.0, false, 0.0)
    }

    /// Memory time of a decode step of `n_dec` sequences holding `ctx_tokens` of
    /// context: the weights its tokens read (the routed experts they pick) and the KV
    /// cache, of one micro-batch under pipeline parallelism and of the busiest rank under
    /// expert parallelism [s].
    pub fn decode_memory_time_s(&self, n_dec: f64, ctx_tokens: f64) -> f64 {
        let (k, _) = self.split_shares(n_dec, n_dec);
        (self.split_weights_read(n_dec, n_dec) + self.kv_read_bytes_per_token() * ctx_tokens * k)
            / (self.gpus() * self.mem_bandwidth_bytes_per_s)
    }

    /// The share `k` of a step's tokens, context and attention that sets its time, and
    /// the time added to it, for a step of `n_tok` tokens over `split_seqs` sequences:
    /// `(1, 0)` without pipeline or expert parallelism; `(1/m, sends)` over `m`
    /// micro-batches ([`StepModel::micro_batches`]); `(1/r, all-to-alls)` over `r` busy
    /// ranks ([`StepModel::ep_ranks`]).
    pub fn split_shares(&self, n_tok: f64, split_seqs: f64) -> (f64, f64) {
        if self.pp_degree > 1 {
            let m = self.micro_batches(split_seqs);
            return (1.0 / m, self.pp_send_time_s(n_tok / m));
        }
        if self.ep_degree > 1 {
            let r = self.ep_ranks(split_seqs);
            return (1.0 / r, self.ep_a2a_time_s(n_tok / r));
        }
        (1.0, 0.0)
    }

    /// Weight bytes a step of `n_tok` tokens over `split_seqs` sequences reads at one
    /// tensor-parallel group's bandwidth: [`StepModel::weights_read`] of its tokens, of
    /// one micro-batch's under pipeline parallelism, and one rank's
    /// [`StepModel::ep_weights_read`] under expert parallelism [bytes].
    pub fn split_weights_read(&self, n_tok: f64, split_seqs: f64) -> f64 {
        if self.pp_degree > 1 {
            return self.weights_read(n_tok / self.micro_batches(split_seqs));
        }
        if self.ep_degree > 1 {
            return self.ep_weights_read(n_tok);
        }
        self.weights_read(n_tok)
    }

    /// Time of one engine step [s]: `n_tok` tokens, decoders holding `ctx_tokens` of
    /// context, `n_seqs` sequences scheduled, prompt tokens among them or not
    /// (`prefill`), `attn_flops` of prefill attention:
    ///
    /// `c0 (+ c_tp) + c_seq·n_seqs (+ c_prefill) + comm(n_tok) + max(mem, compute) + attn / (g·pi)`
    ///
    /// Under pipeline parallelism a step is one round in which every scheduled sequence
    /// advances once: its `m` micro-batches ([`StepModel::micro_batches`]) each pass the
    /// `p` stages, every stage reading its weights once per micro-batch. The round takes
    /// one micro-batch's trip through the stages, so the tokens, the context and the
    /// attention divide by `m` while the weights are read whole at each stage's `g`
    /// GPUs' bandwidth, and the sends between stages are added. Under expert parallelism
    /// the busiest of the `r` ranks ([`StepModel::ep_ranks`]) sets the step: `1/r` of the
    /// tokens, context and attention, the dense weights and its share of the experts
    /// picked ([`StepModel::ep_weights_read`]), and its all-to-alls (see `docs/models.md`).
    pub fn step_time_full_s(
        &self,
        n_tok: f64,
        ctx_tokens: f64,
        n_seqs: f64,
        prefill: bool,
        attn_flops: f64,
    ) -> f64 {
        self.split_step_s(n_tok, ctx_tokens, n_seqs, n_seqs, prefill, attn_flops)
    }

    /// [`StepModel::step_time_full_s`] with the sequences that split the step over
    /// micro-batches or ranks (`split_seqs`) apart from those the per-sequence time
    /// counts (`n_seqs`).
    fn split_step_s(
        &self,
        n_tok: f64,
        ctx_tokens: f64,
        split_seqs: f64,
        n_seqs: f64,
        prefill: bool,
        attn_flops: f64,
    ) -> f64 {
        let (k, extra) = self.split_shares(n_tok, split_seqs);
        let w = self.split_weights_read(n_tok, split_seqs);
        self.group_step_s(
            w,
            n_tok * k,
            ctx_tokens * k,
            n_seqs,
            prefill,
            attn_flops * k,
        ) + extra
    }

    /// [`StepModel::step_time_full_s`] of one tensor-parallel group's work, reading `w`
    /// weight bytes.
    fn group_step_s(
        &self,
        w: f64,
        n_tok: f64,
        ctx_tokens: f64,
        n_seqs: f64,
        prefill: bool,
        attn_flops: f64,
    ) -> f64 {
        let mem = (w + self.kv_read_bytes_per_token() * ctx_tokens)
            / (self.gpus() * self.mem_bandwidth_bytes_per_s);
        let mixed = if prefill {
            self.prefill_overhead_s
        } else {
            0.0
        };
        (((self.fixed_time_s() + self.seq_overhead_s * n_seqs) + mixed) + self.comm_time_s(n_tok))
            + mem.max(self.compute_time_s(n_tok))
            + attn_flops / (self.gpus() * self.compute_flops_per_s)
    }

    /// Compute demand of `tokens_per_s` prompt tokens as a share of the effective FLOP/s
    /// of every GPU of the replica, all stages of a full pipeline busy [0..].
    pub fn compute_load(&self, tokens_per_s: f64) -> f64 {
        let ways = (self.pp_degree.max(1) * self.ep_degree.max(1)) as f64;
        2.0 * self.params * tokens_per_s / (self.gpus() * ways * self.compute_flops_per_s)
    }
}
