//! Independent replications of one simulation point.

use crate::sim::SimConfigOf;
use serde::{Deserialize, Serialize};

use super::{simulate, SimConfig, SimError, Summary};
use crate::plan::MAX_REPLICATIONS;
use crate::rng::splitmix64;
use crate::stats::mean_ci95;

/// Most requests one [`replicate`] call simulates over all its replications
/// (about ten seconds of work).
pub const MAX_REPLICATED_REQUESTS: u64 = 20_000_000;

/// Mean results over independent replications of one point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Replicated {
    /// Mean attainment over the replications (joint or marginal, per the SLO mode) [0..1].
    pub mean_attainment: f64,
    /// 95% confidence interval of the mean attainment (Student's t), clamped to [0, 1].
    pub ci95: [f64; 2],
    /// Attainment of each replication, in replication order.
    pub by_replication: Vec<f64>,
    /// Field-by-field mean of the replications' TTFT summaries [s].
    pub ttft_s: Summary,
    /// Field-by-field mean of the TPOT summaries [s].
    pub tpot_s: Summary,
    /// Field-by-field mean of the E2E summaries [s].
    pub e2e_s: Summary,
    /// Field-by-field mean of the ITL summaries [s].
    pub itl_s: Summary,
    /// Mean output throughput [tokens/s].
    pub output_tokens_per_s: f64,
    /// Mean achieved throughput ([`super::SimReport::completed_rps`]) [requests/s].
    #[serde(default)]
    pub completed_rps: f64,
    /// Mean of the time-weighted waiting-queue length [requests].
    pub mean_queue_len: f64,
    /// Mean of the time-weighted count of running sequences [sequences].
    #[serde(default)]
    pub mean_running: f64,
    /// Longest waiting queue in any replication [requests].
    pub peak_queue_len: u32,
    /// Mean preemptions per replication.
    pub preemptions: f64,
    /// Mean unfinished measured requests per replication.
    pub unfinished_requests: f64,
    /// Mean engine steps per replication.
    pub steps: f64,
    /// True when any replication hit the step cap.
    pub truncated: bool,
    /// Each traffic class over the replications (none for a plan of one class): its mean
    /// attainment, its summaries averaged as the whole run's are, and its mean counts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<super::ClassReport>,
}

/// Seed of replication `replication` derived from `base_seed`: distinct, well-mixed
/// streams for every pair (SplitMix64 of the pair).
pub fn replication_seed(base_seed: u64, replication: u32) -> u64 {
    let mut s = base_seed ^ (replication as u64).wrapping_mul(0xD1B5_4A32_D192_ED03);
    let a = splitmix64(&mut s);
    let mut t = a ^ replication as u64;
    splitmix64(&mut t)
}

/// Runs `replications` independent simulations (seeds from [`replication_seed`]) and
/// averages them. Needs 1 ..= [`MAX_REPLICATIONS`] replications and at most
/// [`MAX_REPLICATED_REQUESTS`] requests in all. Natively the replications are spread
/// over the machine's cores ([`crate::sim::threads::default_threads`]); on wasm they run on
/// the calling thread. The result does not depend on it (see [`replicate_threads`]).
pub fn replicate(
    cfg: &SimConfig,
    base_seed: u64,
    replications: u32,
) -> Result<Replicated, SimError> {
    replicate_threads(
        cfg,
        base_seed,
        replications,
        crate::sim::threads::default_threads(),
    )
}

/// [`replicate`] on at most `threads` threads (1 = the calling thread only). Each
/// thread runs a contiguous block of replications and the reports are averaged in
/// replication order, so the result is the same, bit for bit, on any number of threads.
pub fn replicate_threads(
    cfg: &SimConfig,
    base_seed: u64,
    replications: u32,
    threads: usize,
) -> Result<Replicated, SimError> {
    if replications == 0 || replications > MAX_REPLICATIONS {
        return Err(SimError::TooMuchWork {
            field: "run.replications",
            value: replications as u64,
            max: MAX_REPLICATIONS as u64,
        });
    }
    let total = cfg.num_requests as u64 * cfg.fleet.replicas.max(1) as u64 * replications as u64;
    if total > MAX_REPLICATED_REQUESTS {
        return Err(SimError::TooMuchWork {
            field: "run.replications",
            value: replications as u64,
            max: (MAX_REPLICATED_REQUESTS / cfg.num_requests.max(1) as u64).max(1),
        });
    }
    cfg.check()?;
    let reports = run_all(cfg, base_seed, replications, threads)?;
    let by_replication: Vec<f64> = reports.iter().map(|r| r.attainment).collect();
    let (mean_attainment, ci95) = mean_ci95(&by_replication, 0.0, 1.0);
    let n = reports.len() as f64;
    let avg = |f: fn(&super::SimReport) -> f64| reports.iter().map(f).sum::<f64>() / n;
    let pick = |f: fn(&super::SimReport) -> Summary| reports.iter().map(f).collect::<Vec<_>>();
    Ok(Replicated {
        mean_attainment,
        ci95,
        ttft_s: Summary::mean_of(&pick(|r| r.ttft_s)),
        tpot_s: Summary::mean_of(&pick(|r| r.tpot_s)),
        e2e_s: Summary::mean_of(&pick(|r| r.e2e_s)),
        itl_s: Summary::mean_of(&pick(|r| r.itl_s)),
        output_tokens_per_s: avg(|r| r.output_tokens_per_s),
        completed_rps: avg(|r| r.completed_rps),
        mean_queue_len: avg(|r| r.mean_queue_len),
        mean_running: avg(|r| r.mean_running),
        peak_queue_len: reports.iter().map(|r| r.peak_queue_len).max().unwrap_or(0),
        preemptions: avg(|r| r.preemptions as f64),
        unfinished_requests: avg(|r| r.unfinished_requests as f64),
        steps: avg(|r| r.steps as f64),
        truncated: reports.iter().any(|r| r.truncated),
        classes: classes_over(&reports),
        by_replication,
    })
}

/// Each class's results over the replications' `reports`.
fn classes_over(reports: &[super::SimReport]) -> Vec<super::ClassReport> {
    let k = reports.first().map_or(0, |r| r.classes.len());
    let n = reports.len().max(1) as f64;
    (0..k)
        .map(|c| {
            let of: Vec<&super::ClassReport> =
                reports.iter().filter_map(|r| r.classes.get(c)).collect();
            let pick =
                |f: fn(&super::ClassReport) -> Summary| of.iter().map(|x| f(x)).collect::<Vec<_>>();
            let mean = |f: fn(&super::ClassReport) -> f64| of.iter().map(|x| f(x)).sum::<f64>() / n;
            super::ClassReport {
                attainment: mean(|x| x.attainment),
                ttft_s: Summary::mean_of(&pick(|x| x.ttft_s)),
                tpot_s: Summary::mean_of(&pick(|x| x.tpot_s)),
                e2e_s: Summary::mean_of(&pick(|x| x.e2e_s)),
                measured_requests: mean(|x| f64::from(x.measured_requests)).round() as u32,
                unfinished_requests: mean(|x| f64::from(x.unfinished_requests)).round() as u32,
                tokens: mean(|x| x.tokens as f64).round() as u64,
            }
        })
        .collect()
}

/// The reports of replications `0..replications`, in order, computed on up to `threads`
/// threads.
fn run_all(
    cfg: &SimConfig,
    base_seed: u64,
    replications: u32,
    threads: usize,
) -> Result<Vec<super::SimReport>, SimError> {
    let indices: Vec<u32> = (0..replications).collect();
    super::threads::map_in_order(&indices, threads, |&r| {
        simulate(cfg, replication_seed(base_seed, r))
    })
}
