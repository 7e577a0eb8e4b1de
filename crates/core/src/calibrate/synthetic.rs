//! Synthetic measurements from known constants: what the tests, the benchmarks and the
//! docs fit back to check that a fit recovers them.

use super::problem::Constants;
use crate::measure::MeasuredPoint;
use crate::plan::{MeasuredLoad, Plan};
use crate::rng::Rng;
use crate::roofline::{StepModel, StepModelOf};
use crate::sim::{self, SimConfig, SimConfigOf, SimError, Summary};

/// Synthetic measurements: what a benchmark of `requests` requests per point would
/// report if the server's step times followed `truth` on `plan`, at each rate of
/// `rates` (Poisson), with every statistic scaled by a random factor within
/// ±`noise`. `detailed` keeps per-request lengths, as `--save-detailed` does.
/// Simulated with `seed`, which should differ from the plan's own so the fit sees
/// other draws than the "benchmark" did. Used by the tests, the benchmarks and the
/// docs to check that a fit recovers known constants.
pub fn synthetic_points(
    plan: &Plan,
    truth: &Constants,
    rates: &[f64],
    requests: u32,
    noise: f64,
    detailed: bool,
    seed: u64,
) -> Result<Vec<MeasuredPoint>, SimError> {
    use crate::measure::{Format, LatencyStats, MeasuredRequest};
    let stats = |s: &Summary, k: f64| LatencyStats {
        mean_s: Some(s.mean * k),
        median_s: Some(s.p50 * k),
        percentiles: vec![(90.0, s.p90 * k), (99.0, s.p99 * k)],
    };
    let mut rng = Rng::new(seed ^ 0x5EED);
    rates
        .iter()
        .map(|&rate| {
            let mut p = plan.clone();
            p.calibration = None;
            p.run.num_requests = requests;
            p.run.warmup_requests = 0;
            let mut cfg = SimConfig::from_plan(&p, rate)?;
            cfg.step = StepModel::datasheet(&p).calibrated(&truth.fitted());
            let rep = sim::simulate(&cfg, seed)?;
            let mut k = || 1.0 + noise * (2.0 * rng.next_f64() - 1.0);
            let w = cfg.traffic.generate(requests as usize, &mut Rng::new(seed));
            let mean = |v: &[u32]| v.iter().map(|&x| x as f64).sum::<f64>() / v.len().max(1) as f64;
            let completed = rep.measured_requests - rep.unfinished_requests;
            Ok(MeasuredPoint {
                source: format!("synthetic-{}rps.json", crate::format::plain(rate)),
                format: Format::Vllm,
                load: MeasuredLoad::Rate {
                    rate_rps: rate,
                    cv: 1.0,
                },
                max_concurrency: None,
                prompt_spread: Default::default(),
                output_spread: Default::default(),
                // A server that drafts reports its counters; a million drafts carry the
                // tokens a step to six digits.
                spec: (p.engine.spec_draft_tokens > 0).then(|| {
                    let drafts = 1_000_000u64;
                    let k = u64::from(p.engine.spec_draft_tokens);
                    let gained = cfg.tokens_per_decode_step() - 1.0;
                    crate::plan::SpecMeasured {
                        drafts,
                        draft_tokens: k * drafts,
                        accepted_tokens: (gained * drafts as f64).round() as u64,
                    }
                }),
                completed,
                failed: requests - completed,
                duration_s: rep.sim_time_s,
                achieved_rps: rep.completed_rps,
                mean_prompt_tokens: mean(&w.prompt_tokens),
                mean_output_tokens: mean(&w.output_tokens),
                ttft: stats(&rep.ttft_s, k()),
                tpot: stats(&rep.tpot_s, k()),
                itl: stats(&rep.itl_s, 1.0),
                e2e: stats(&rep.e2e_s, k()),
                requests: if detailed {
                    w.prompt_tokens
                        .iter()
                        .zip(&w.output_tokens)
                        .map(|(&prompt_tokens, &output_tokens)| MeasuredRequest {
                            prompt_tokens,
                            output_tokens,
                        })
                        .collect()
                } else {
                    Vec::new()
                },
                model: Some(plan.model.preset.clone()),
                engine: Some("vllm".into()),
            })
        })
        .collect()
}
