//! The disaggregated deployment a plan may describe: a prefill pool and a decode pool,
//! the link that carries each request's KV cache from one to the other, and the router
//! (see `disagg` for the simulation and the sizing).
//!
//! A plan without it (`Plan::disagg` is `None`) is aggregated: every replica runs
//! prefill and decode together. The field is left out of the JSON when absent, so plans
//! and share links without it read and write exactly as before it existed.

use serde::{Deserialize, Serialize};

use super::{check_layout, err, is_one_u32, one_u32, KvPolicy, ModelSpec, Plan, PlanError};
use crate::plan::comparison::{Layout, TP_DEGREES};
use crate::presets;

/// Default KV-link bandwidth: one 400 Gb/s RDMA NIC (InfiniBand NDR or RoCE) per
/// instance, 50 GB/s; an assumption [bytes/s].
pub const DEFAULT_KV_LINK_BYTES_PER_S: f64 = 50e9;

/// Default fixed latency of one KV transfer (connection, registration, first byte);
/// an assumption [s].
pub const DEFAULT_KV_LINK_LATENCY_S: f64 = 1e-3;

/// Default token budget of a prefill instance: prefill-only engines run large batches
/// of prompts [tokens].
pub const DEFAULT_PREFILL_BATCHED_TOKENS: u32 = 8192;

/// The names `--router` takes, each with the words a page shows for it: the field
/// registry's choices for `disagg.router`, the default first.
pub const ROUTERS: &[(&str, &str)] = &[
    ("least_loaded", "Least loaded"),
    ("round_robin", "Round robin"),
];

/// How requests are spread over the instances of a pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Router {
    /// Each pool hands requests to its instances in turn.
    RoundRobin,
    /// To the instance with the least work: prompt tokens still to prefill on the
    /// prefill side, sequences running or waiting on the decode side (ties: lowest index).
    #[default]
    LeastLoaded,
}

impl Router {
    /// The name people read: `Least loaded`, `Round robin`.
    pub fn label(self) -> &'static str {
        crate::format::choice_words(ROUTERS, self.name())
    }

    /// The snake_case name used in plan files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Router::RoundRobin => "round_robin",
            Router::LeastLoaded => "least_loaded",
        }
    }

    /// Reads `round_robin` / `least_loaded` (a dash for the underscore is accepted).
    pub fn parse(s: &str) -> Option<Router> {
        match s.trim().replace('-', "_").as_str() {
            "round_robin" => Some(Router::RoundRobin),
            "least_loaded" => Some(Router::LeastLoaded),
            _ => None,
        }
    }
}

/// The prefill pool: instances that only run prompts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PrefillPool {
    /// GPU preset id of the pool; empty for the plan's own hardware.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub gpu: String,
    /// Tensor-parallel degree: GPUs per prefill instance (1, 2, 4 or 8).
    pub tp_degree: u32,
    /// Pipeline stages of a prefill instance, each a tensor-parallel group (1, and
    /// plans written before pools had layouts, for none).
    #[serde(default = "one_u32", skip_serializing_if = "is_one_u32")]
    pub pp_degree: u32,
    /// Expert-parallel degree of a prefill instance: a mixture of experts' routed experts
    /// over that many GPUs, attention data-parallel, TP and PP 1 (1 for none).
    #[serde(default = "one_u32", skip_serializing_if = "is_one_u32")]
    pub ep_degree: u32,
    /// Token budget of one prefill step; prompts are batched (and long ones chunked)
    /// up to it [tokens].
    pub max_num_batched_tokens: u32,
    /// Prefill instances to run for the peak; `None` lets the sizing choose [instances].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instances: Option<u32>,
}

impl Default for PrefillPool {
    fn default() -> Self {
        PrefillPool {
            gpu: String::new(),
            tp_degree: 1,
            pp_degree: 1,
            ep_degree: 1,
            max_num_batched_tokens: DEFAULT_PREFILL_BATCHED_TOKENS,
            instances: None,
        }
    }
}

/// The decode pool: instances that receive prefilled requests and decode them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DecodePool {
    /// GPU preset id of the pool; empty for the plan's own hardware.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub gpu: String,
    /// Tensor-parallel degree: GPUs per decode instance (1, 2, 4 or 8).
    pub tp_degree: u32,
    /// Pipeline stages of a decode instance, each a tensor-parallel group (1, and
    /// plans written before pools had layouts, for none).
    #[serde(default = "one_u32", skip_serializing_if = "is_one_u32")]
    pub pp_degree: u32,
    /// Expert-parallel degree of a decode instance: a mixture of experts' routed experts
    /// over that many GPUs, attention data-parallel, TP and PP 1 (1 for none).
    #[serde(default = "one_u32", skip_serializing_if = "is_one_u32")]
    pub ep_degree: u32,
    /// Most sequences one decode instance runs at once (vLLM `--max-num-seqs`).
    pub max_num_seqs: u32,
    /// Decode instances to run for the peak; `None` lets the sizing choose [instances].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instances: Option<u32>,
}

impl Default for DecodePool {
    fn default() -> Self {
        DecodePool {
            gpu: String::new(),
            tp_degree: 1,
            pp_degree: 1,
            ep_degree: 1,
            max_num_seqs: 128,
            instances: None,
        }
    }
}

impl PrefillPool {
    /// How one prefill instance spreads over GPUs.
    pub fn layout(&self) -> Layout {
        Layout::new(self.tp_degree, self.pp_degree, self.ep_degree)
    }
}

impl DecodePool {
    /// How one decode instance spreads over GPUs.
    pub fn layout(&self) -> Layout {
        Layout::new(self.tp_degree, self.pp_degree, self.ep_degree)
    }
}

/// The names `--kv-link` takes, each with the words a page shows for it: the field
/// registry's choices for `disagg.kv_link.source`, first what a plan that leaves it out
/// means (a link as given: the plans written before the choice existed). A new
/// disaggregated plan starts from the GPUs' links ([`KvLink::default`]).
pub const KV_LINK_SOURCES: &[(&str, &str)] =
    &[("given", "As given"), ("network", "The GPUs' own links")];

/// Where a KV link's bandwidth comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum KvLinkSource {
    /// The pools' GPUs: NVLink when the whole deployment sits in one NVLink domain, the
    /// scale-out network otherwise, one lane per GPU that holds a shard of the request's
    /// cache on both sides (see [`KvRoutes`]).
    #[default]
    Network,
    /// The link's `bandwidth_bytes_per_s` as given, one transfer at that bandwidth
    /// (every plan written before the choice existed).
    Given,
}

impl KvLinkSource {
    /// The snake_case name used in plan files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            KvLinkSource::Network => "network",
            KvLinkSource::Given => "given",
        }
    }

    /// Reads `network` / `given`.
    pub fn parse(s: &str) -> Option<KvLinkSource> {
        match s.trim() {
            "network" => Some(KvLinkSource::Network),
            "given" => Some(KvLinkSource::Given),
            _ => None,
        }
    }

    fn given() -> KvLinkSource {
        KvLinkSource::Given
    }

    fn is_given(&self) -> bool {
        *self == KvLinkSource::Given
    }
}

/// The link that carries a request's KV cache from its prefill instance to its decode
/// instance. Every transfer takes `latency + bytes / bandwidth`; transfers do not
/// share the link (a NIC per GPU, an assumption).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KvLink {
    /// Where the bandwidth comes from: the pools' GPUs' own links, or as given. A plan
    /// that does not say (one written before the choice existed) gives it.
    #[serde(
        default = "KvLinkSource::given",
        skip_serializing_if = "KvLinkSource::is_given"
    )]
    pub source: KvLinkSource,
    /// Bandwidth available to one transfer, when the link is given [bytes/s].
    pub bandwidth_bytes_per_s: f64,
    /// Fixed time of one transfer [s].
    pub latency_s: f64,
}

impl Default for KvLink {
    fn default() -> Self {
        KvLink {
            source: KvLinkSource::Network,
            bandwidth_bytes_per_s: DEFAULT_KV_LINK_BYTES_PER_S,
            latency_s: DEFAULT_KV_LINK_LATENCY_S,
        }
    }
}

/// What a KV transfer rides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KvLinkKind {
    /// The link as the plan gives it.
    Given,
    /// NVLink (or Infinity Fabric): the deployment sits in one node's GPU-to-GPU domain.
    NvLink,
    /// The scale-out network (InfiniBand or RoCE), a NIC per GPU.
    ScaleOut,
}

/// The link one deployment's KV transfers ride, resolved: `lanes` GPUs send their
/// shards of a request's cache at once, each at `lane_bytes_per_s`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct KvRoute {
    /// What the transfers ride.
    pub over: KvLinkKind,
    /// Shards of a request's cache that move at once, each over its own GPU's link.
    pub lanes: u32,
    /// Bandwidth of one lane [bytes/s].
    pub lane_bytes_per_s: f64,
    /// Fixed time of one transfer [s].
    pub latency_s: f64,
}

impl KvRoute {
    /// Bandwidth of one transfer, every lane together [bytes/s].
    pub fn bandwidth_bytes_per_s(&self) -> f64 {
        self.lane_bytes_per_s * self.lanes.max(1) as f64
    }

    /// Time to move `bytes` of one request's cache: latency + bytes / bandwidth [s].
    pub fn transfer_time_s(&self, bytes: f64) -> f64 {
        self.latency_s + bytes / self.bandwidth_bytes_per_s()
    }

    /// In words: "400 Gbit/s as given", "NVLink, 2 lanes of 3,600 Gbit/s",
    /// "the scale-out network, 8 lanes of 400 Gbit/s".
    pub fn words(&self) -> String {
        let gbit = |b: f64| crate::format::figure(b * 8.0 / 1e9);
        let lanes = |what: &str| match self.lanes {
            1 => format!("{what}, one lane of {} Gbit/s", gbit(self.lane_bytes_per_s)),
            n => format!(
                "{what}, {n} lanes of {} Gbit/s",
                gbit(self.lane_bytes_per_s)
            ),
        };
        match self.over {
            KvLinkKind::Given => format!("{} Gbit/s as given", gbit(self.lane_bytes_per_s)),
            KvLinkKind::NvLink => lanes("NVLink"),
            KvLinkKind::ScaleOut => lanes("the scale-out network"),
        }
    }
}

/// The routes a disaggregated plan's KV transfers may take, resolved once from the
/// pools' GPUs and layouts; [`KvRoutes::at`] picks one for a deployment's size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KvRoutes {
    /// Across nodes (or the link as given).
    far: KvRoute,
    /// Inside one NVLink domain, with the domain's GPUs, when both pools run on the
    /// same GPU and the link comes from the network.
    near: Option<(KvRoute, u32)>,
    /// GPUs of one prefill and one decode instance.
    gpus: (u32, u32),
}

impl KvRoutes {
    /// The route of `prefill` and `decode` instances: NVLink when all their GPUs fit in
    /// one NVLink domain (a node: 8 GPUs on a DGX, 72 on a GB200 NVL72 rack), the
    /// scale-out network otherwise.
    pub fn at(&self, prefill: u32, decode: u32) -> KvRoute {
        match self.near {
            Some((near, domain))
                if u64::from(prefill) * u64::from(self.gpus.0)
                    + u64::from(decode) * u64::from(self.gpus.1)
                    <= u64::from(domain) =>
            {
                near
            }
            _ => self.far,
        }
    }
}

/// Shards of one request's KV cache an instance of `layout` holds on different GPUs,
/// which move at once, each over its own GPU's link: the KV heads split over the TP
/// group (a head copied on several GPUs, or a latent every GPU holds whole, moves once
/// per distinct shard) times the pipeline stages, each holding its layers; 1 under
/// expert parallelism, whose data-parallel attention keeps a sequence on one GPU.
pub fn kv_shards(model: &ModelSpec, layout: Layout) -> u32 {
    if layout.ep > 1 {
        return 1;
    }
    let tp = layout.tp.max(1);
    let distinct = (tp as f64 / model.kv_replication(tp)).round().max(1.0) as u32;
    distinct * layout.pp.max(1)
}

/// A disaggregated deployment: prefill pool, decode pool, KV link, router.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct DisaggSpec {
    /// The prefill pool.
    pub prefill: PrefillPool,
    /// The decode pool.
    pub decode: DecodePool,
    /// The KV-transfer link.
    pub kv_link: KvLink,
    /// How requests are spread over each pool's instances.
    pub router: Router,
}

impl DisaggSpec {
    /// The spec a plan without one starts from: both pools on the plan's GPU and layout
    /// (TP, PP and EP degrees), the decode pool with the plan's `max_num_seqs`, the link
    /// from the GPUs (as given, at the default 400 Gbit/s, when the plan's GPU names no
    /// scale-out network) and the least-loaded router.
    pub fn for_plan(plan: &Plan) -> DisaggSpec {
        let h = &plan.hardware;
        DisaggSpec {
            prefill: PrefillPool {
                tp_degree: h.tp_degree,
                pp_degree: h.pp_degree.max(1),
                ep_degree: h.ep_degree.max(1),
                ..PrefillPool::default()
            },
            decode: DecodePool {
                tp_degree: h.tp_degree,
                pp_degree: h.pp_degree.max(1),
                ep_degree: h.ep_degree.max(1),
                max_num_seqs: plan.engine.max_num_seqs,
                ..DecodePool::default()
            },
            kv_link: KvLink {
                source: if h.scaleout_bytes_per_s > 0.0 {
                    KvLinkSource::Network
                } else {
                    KvLinkSource::Given
                },
                ..KvLink::default()
            },
            ..DisaggSpec::default()
        }
    }

    /// Checks the pools' GPUs and TP degrees, and that the model fits each pool's GPUs;
    /// the error names the field (`disagg.decode.tp_degree`, …). Each number's own range
    /// is its registry row's, which [`Plan::validate`] checks.
    pub fn validate(&self, plan: &Plan) -> Result<(), PlanError> {
        let p = &self.prefill;
        let d = &self.decode;
        check_gpu("disagg.prefill.gpu", &p.gpu)?;
        check_gpu("disagg.decode.gpu", &d.gpu)?;
        check_tp("disagg.prefill.tp_degree", p.tp_degree)?;
        check_tp("disagg.decode.tp_degree", d.tp_degree)?;
        check_layout(
            &plan.model,
            [p.tp_degree, p.pp_degree, p.ep_degree],
            ["disagg.prefill.pp_degree", "disagg.prefill.ep_degree"],
            "prefill instance",
        )?;
        check_layout(
            &plan.model,
            [d.tp_degree, d.pp_degree, d.ep_degree],
            ["disagg.decode.pp_degree", "disagg.decode.ep_degree"],
            "decode instance",
        )?;
        let [pp, dp] = self.pool_plans(plan);
        check_fit(plan, "disagg.prefill.gpu", &pp, false)?;
        check_fit(plan, "disagg.decode.gpu", &dp, true)?;
        self.check_network([(&pp, "prefill"), (&dp, "decode")])
    }

    /// The plan one instance of each pool runs, prefill then decode ([`pool_plan`]).
    pub fn pool_plans(&self, plan: &Plan) -> [Plan; 2] {
        [
            pool_plan(plan, &self.prefill.gpu, self.prefill.layout()),
            pool_plan(plan, &self.decode.gpu, self.decode.layout()),
        ]
    }

    /// A link from the network needs the pools' GPUs (their instances' plans, named) to
    /// name their scale-out network.
    fn check_network(&self, pools: [(&Plan, &str); 2]) -> Result<(), PlanError> {
        if self.kv_link.source != KvLinkSource::Network {
            return Ok(());
        }
        for (p, pool) in pools {
            let h = &p.hardware;
            if h.scaleout_bytes_per_s <= 0.0 {
                return Err(err(
                    "disagg.kv_link.source",
                    format!(
                        "takes the KV link from the GPUs' own links, but the {pool} pool's GPU \
                         ({}) names no scale-out network: set the GPU's scale-out bandwidth, or \
                         give the KV link's bandwidth",
                        h.preset
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The routes this plan's KV transfers take ([`KvRoutes::at`] for a deployment).
    pub fn routes(&self, plan: &Plan) -> KvRoutes {
        let [pp, dp] = self.pool_plans(plan);
        self.routes_between(&plan.model, &pp.hardware, &dp.hardware)
    }

    /// [`DisaggSpec::routes`] from the pools' instances' hardware.
    pub fn routes_between(
        &self,
        model: &ModelSpec,
        ph: &super::HardwareSpec,
        dh: &super::HardwareSpec,
    ) -> KvRoutes {
        let (pl, dl) = (self.prefill.layout(), self.decode.layout());
        let gpus = (pl.gpus(), dl.gpus());
        let link = self.kv_link;
        if link.source == KvLinkSource::Given {
            let far = KvRoute {
                over: KvLinkKind::Given,
                lanes: 1,
                lane_bytes_per_s: link.bandwidth_bytes_per_s,
                latency_s: link.latency_s,
            };
            return KvRoutes {
                far,
                near: None,
                gpus,
            };
        }
        let lanes = kv_shards(model, pl).min(kv_shards(model, dl));
        let route = |over, lane: f64| KvRoute {
            over,
            lanes,
            lane_bytes_per_s: lane,
            latency_s: link.latency_s,
        };
        let far = route(
            KvLinkKind::ScaleOut,
            ph.scaleout_bytes_per_s.min(dh.scaleout_bytes_per_s),
        );
        let nvlink = ph.interconnect_bytes_per_s.min(dh.interconnect_bytes_per_s);
        let same_gpu =
            ph.preset == dh.preset && ph.gpus_per_node == dh.gpus_per_node && nvlink > 0.0;
        let near = same_gpu.then(|| (route(KvLinkKind::NvLink, nvlink), ph.gpus_per_node));
        KvRoutes { far, near, gpus }
    }
}

/// The weights must fit a pool's instance (`pool`, its plan); a decode instance (with a
/// KV policy) must also hold one request of maximum length.
fn check_fit(plan: &Plan, field: &'static str, pool: &Plan, decode: bool) -> Result<(), PlanError> {
    let layout = Layout::of(pool);
    let cap = pool.kv_capacity_tokens();
    let longest = plan.traffic.prompt.max as f64 + plan.traffic.output.max as f64;
    let needs = if decode && plan.engine.kv_policy != KvPolicy::None {
        longest
    } else {
        1.0
    };
    if cap >= needs {
        return Ok(());
    }
    let h = &pool.hardware;
    let usable =
        layout.gpus() as f64 * (h.memory_bytes * h.mem_utilization - h.runtime_reserve_bytes());
    let pool_name = if decode { "decode" } else { "prefill" };
    let shape = layout.words(&h.preset);
    Err(err(
        field,
        if cap < 1.0 {
            format!(
                "the {pool_name} pool's {} × {shape} offers {:.1} GB but the weights need {:.1} GB \
                 ({:.1} GB a GPU): choose a larger GPU or more GPUs per instance",
                h.preset,
                usable / 1e9,
                pool.weight_bytes_stored() / 1e9,
                pool.weight_bytes_per_gpu() / 1e9
            )
        } else {
            format!(
                "the {pool_name} pool's {} × {shape} holds {:.0} KV tokens, fewer than one request of \
                 maximum length ({longest:.0} tokens): choose a larger GPU or more GPUs per instance",
                h.preset, cap
            )
        },
    ))
}

fn check_gpu(field: &'static str, id: &str) -> Result<(), PlanError> {
    if id.is_empty() || presets::gpu(id).is_some() {
        return Ok(());
    }
    let known: Vec<&str> = presets::GPUS.iter().map(|g| g.id).collect();
    Err(err(
        field,
        format!(
            "unknown GPU '{}'; known: {} (or leave it empty for the plan's hardware)",
            id.chars().take(40).collect::<String>(),
            known.join(", ")
        ),
    ))
}

fn check_tp(field: &'static str, tp: u32) -> Result<(), PlanError> {
    if TP_DEGREES.contains(&tp) {
        Ok(())
    } else {
        Err(err(
            field,
            format!("must be 1, 2, 4 or 8 GPUs per instance, got {tp}"),
        ))
    }
}

/// The plan one instance of a pool runs: `plan` with the GPU preset `gpu` applied
/// (the plan's own hardware when empty or unknown) and the instance's `layout`.
pub fn pool_plan(plan: &Plan, gpu: &str, layout: Layout) -> Plan {
    let mut p = plan.clone();
    if let Some(g) = presets::gpu(gpu) {
        g.apply(&mut p);
    }
    p.hardware.tp_degree = layout.tp;
    p.hardware.pp_degree = layout.pp.max(1);
    p.hardware.ep_degree = layout.ep.max(1);
    p.disagg = None;
    p
}
