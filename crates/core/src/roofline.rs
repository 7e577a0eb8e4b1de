//! Roofline step time of one engine step.

use crate::plan::Plan;

/// Time of one engine step [s]: `c0 + max((W + kappa*C)/beta, 2*P*n_tok/pi_eff)`.
///
/// `n_tok` is the tokens processed in the step, `ctx_tokens` the total context of the
/// decoding sequences.
pub fn step_time_s(plan: &Plan, n_tok: f64, ctx_tokens: f64) -> f64 {
    let m = &plan.model;
    let h = &plan.hardware;
    let memory = (m.weight_bytes() + m.kv_bytes_per_token() * ctx_tokens) / h.mem_bandwidth_bytes_per_s;
    let compute = 2.0 * m.active_params * n_tok / h.compute_flops_per_s;
    h.step_overhead_s + memory.max(compute)
}
