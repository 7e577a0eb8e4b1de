//! What a GPU × layout comparison (`shootout`) leaves in a plan: the options asked
//! for, every row, and a fingerprint of the plan they were computed for, so that a shared
//! link shows the comparison without running it again, and says when it is out of date.

use serde::{Deserialize, Serialize};

use super::{err, in_range, HardwareSpec, Plan, PlanError};

/// GPUs of the default shootout.
pub const DEFAULT_GPUS: &[&str] = &["h100-sxm", "h200", "b200", "a100-80gb", "l40s", "mi300x"];

/// Tensor-parallel degrees an option may have (the head counts of common models divide
/// by each); also the default list.
pub const TP_DEGREES: &[u32] = &[1, 2, 4, 8];

/// Most options (GPUs × layouts) one shootout runs.
pub const MAX_OPTIONS: usize = 64;

/// Most nodes a compared replica may span.
pub const MAX_NODES: u32 = 4;

/// Nodes a compared replica may span by default: one node, and two with pipeline stages.
pub const DEFAULT_NODES: u32 = 2;

fn one_node() -> u32 {
    1
}

fn is_one_node(n: &u32) -> bool {
    *n == 1
}

/// What to compare.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShootoutSpec {
    /// GPU preset ids, in the order given.
    pub gpus: Vec<String>,
    /// Tensor-parallel degrees, each one of [`TP_DEGREES`].
    pub tp_degrees: Vec<u32>,
    /// Try each GPU and TP degree with and without speculative decoding: the plan's own
    /// speculation and the other one (off when the plan drafts; the speculation its
    /// calibration's runs measured when it does not). Left out of the JSON when off, so
    /// older plans and links read as they were.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub speculation: bool,
    /// Nodes a replica may span (1 to [`MAX_NODES`]): beyond the one-node layouts, each
    /// GPU is tried at the largest TP degree asked for with 2 to this many pipeline
    /// stages, one stage per node of 8 GPUs, and a mixture of experts with its experts
    /// over that degree's GPUs times 1 to this many ([`ShootoutSpec::layouts`]). 1 in
    /// older plans and links, which compared one node only.
    #[serde(default = "one_node", skip_serializing_if = "is_one_node")]
    pub max_nodes: u32,
}

impl Default for ShootoutSpec {
    /// [`DEFAULT_GPUS`] × ([`TP_DEGREES`] and TP 8 × PP 2): 30 options; 42 for a mixture
    /// of experts, with EP 8 and EP 16.
    fn default() -> Self {
        ShootoutSpec {
            gpus: DEFAULT_GPUS.iter().map(|g| g.to_string()).collect(),
            tp_degrees: TP_DEGREES.to_vec(),
            speculation: false,
            max_nodes: DEFAULT_NODES,
        }
    }
}

/// How one replica of an option spreads over GPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Tensor-parallel degree.
    pub tp: u32,
    /// Pipeline stages.
    pub pp: u32,
    /// Expert-parallel degree (1 for none).
    pub ep: u32,
}

impl Layout {
    /// TP, PP and EP degrees as stored, where 0 (never valid) reads as 1 for PP and EP.
    pub fn new(tp: u32, pp: u32, ep: u32) -> Layout {
        Layout {
            tp,
            pp: pp.max(1),
            ep: ep.max(1),
        }
    }

    /// The layout of a plan's replica.
    pub fn of(plan: &Plan) -> Layout {
        let h = &plan.hardware;
        Layout::new(h.tp_degree, h.pp_degree, h.ep_degree)
    }

    /// GPUs of one replica.
    pub fn gpus(self) -> u32 {
        self.tp.max(1) * self.pp.max(1) * self.ep.max(1)
    }

    /// In a few characters, for a chart's marker: "×8", "TP8×PP2", "EP16".
    pub fn short_words(self) -> String {
        if self.ep > 1 {
            format!("EP{}", self.ep)
        } else if self.pp > 1 {
            format!("TP{}×PP{}", self.tp, self.pp)
        } else {
            format!("×{}", self.tp)
        }
    }

    /// In words on the GPU `gpu`: "TP8", "TP8 × PP2 (2 nodes)", "EP16 (2 nodes)".
    pub fn words(self, gpu: &str) -> String {
        match self.parts(gpu) {
            (layout, Some(nodes)) => format!("{layout} ({nodes})"),
            (layout, None) => layout,
        }
    }

    /// The layout and, beyond tensor parallelism, its nodes on the GPU `gpu`:
    /// `("TP8 × PP2", Some("2 nodes"))`, `("TP8", None)`.
    pub fn parts(self, gpu: &str) -> (String, Option<String>) {
        let per_node =
            crate::presets::gpu(gpu).map_or(super::DEFAULT_GPUS_PER_NODE, |g| g.gpus_per_node);
        let nodes = match self.gpus().div_ceil(per_node.max(1)) {
            1 => "1 node".to_string(),
            n => format!("{n} nodes"),
        };
        if self.ep > 1 {
            (format!("EP{}", self.ep), Some(nodes))
        } else if self.pp > 1 {
            (format!("TP{} × PP{}", self.tp, self.pp), Some(nodes))
        } else {
            (format!("TP{}", self.tp), None)
        }
    }
}

impl ShootoutSpec {
    /// The layouts each GPU is tried at, for a model of `experts` routed experts (0 for
    /// a dense model): every TP degree asked for on one stage; the largest with 2 to
    /// `max_nodes` stages; and, for a mixture of experts, expert parallelism over that
    /// largest degree times 1 to `max_nodes` (EP 8 and EP 16 by default), at most one
    /// expert a GPU.
    pub fn layouts(&self, experts: u32) -> Vec<Layout> {
        let one = |tp, pp, ep| Layout { tp, pp, ep };
        let mut out: Vec<Layout> = self.tp_degrees.iter().map(|&tp| one(tp, 1, 1)).collect();
        if let Some(&top) = self.tp_degrees.iter().max() {
            let nodes = 1..=self.max_nodes.min(MAX_NODES);
            out.extend(nodes.clone().skip(1).map(|pp| one(top, pp, 1)));
            out.extend(
                nodes
                    .map(|n| top * n)
                    .filter(|&ep| ep > 1 && ep <= experts)
                    .map(|ep| one(1, 1, ep)),
            );
        }
        out
    }
}

/// Routed experts of a plan's model, 0 for a dense one: what [`ShootoutSpec::layouts`]
/// asks.
pub fn experts_of(plan: &Plan) -> u32 {
    if plan.model.is_moe() {
        plan.model.experts
    } else {
        0
    }
}

/// One option of the comparison, read from its plan report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShootoutRow {
    /// GPU preset id.
    pub gpu: String,
    /// GPU display name.
    pub gpu_name: String,
    /// Tensor-parallel degree (GPUs per pipeline stage).
    pub tp: u32,
    /// Pipeline stages of the replica (1, left out of the JSON, for none).
    #[serde(default = "one_node", skip_serializing_if = "is_one_node")]
    pub pp: u32,
    /// Expert-parallel degree of the replica (1, left out of the JSON, for none).
    #[serde(default = "one_node", skip_serializing_if = "is_one_node")]
    pub ep: u32,
    /// Whether the weights fit and the KV cache holds one request of maximum length.
    pub fits: bool,
    /// Why the option is out of the running (does not fit, fails validation, or no
    /// rate meets the SLO); `None` for a ranked option.
    pub reason: Option<String>,
    /// Goodput of one replica [requests/s]; 0 when not simulated.
    pub goodput_rps: f64,
    /// Replicas to run (peak + redundancy); 0 when the fleet cannot be sized.
    pub replicas_total: u32,
    /// GPUs to run; 0 when the fleet cannot be sized.
    pub gpus_total: u32,
    /// Cost of the fleet per hour [USD/h]; `None` when it cannot be sized.
    pub cost_per_hour_usd: Option<f64>,
    /// Cost of the fleet per month [USD/month]; `None` when it cannot be sized.
    pub cost_per_month_usd: Option<f64>,
    /// Cost per SLO-compliant request [USD]; `None` when the fleet cannot be sized.
    pub cost_per_compliant_request_usd: Option<f64>,
    /// p99 TTFT of one replica at its planned rate [s].
    pub ttft_p99_s: Option<f64>,
    /// p99 TPOT of one replica at its planned rate [s].
    pub tpot_p99_s: Option<f64>,
    /// Output tokens per second per GPU at the planned rate [tokens/s].
    pub output_tokens_per_s_per_gpu: Option<f64>,
    /// KV-cache capacity of one replica [tokens].
    pub kv_capacity_tokens: f64,
    /// Smallest TP degree whose memory holds the weights (`None` if none does).
    pub gpus_needed: Option<u32>,
    /// Whether this is the plan's own GPU and TP degree.
    pub chosen: bool,
    /// Where the row's step-model constants come from: the datasheet, a calibration
    /// measured on this very GPU and TP degree, or one carried over from another.
    #[serde(default, skip_serializing_if = "ConstantsSource::is_datasheet")]
    pub constants: ConstantsSource,
    /// Speculative draft tokens a step the option ran with (0: none; left out then).
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub spec_draft_tokens: u32,
    /// Acceptance of a drafted token the option ran with (left out without a draft).
    #[serde(default, skip_serializing_if = "super::is_zero_f64")]
    pub spec_acceptance: f64,
    /// Share of a full decode step a pipeline or expert-parallel layout spends in its
    /// sends between stages or its all-to-alls (see `shootout::comm_share_of`); left out for a
    /// tensor-parallel layout [0..1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comm_share: Option<f64>,
    /// Why a layout over more GPUs ranks below the same GPU's best one-node layout, in
    /// numbers: the GPUs, the goodput and the communication it pays for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A plan's speculation as a comparison row keeps it: (draft tokens, acceptance), the
/// acceptance 0 without a draft.
pub fn speculation_of(plan: &Plan) -> (u32, f64) {
    match plan.engine.spec_draft_tokens {
        0 => (0, 0.0),
        k => (k, plan.engine.spec_acceptance),
    }
}

impl ShootoutRow {
    /// "NVIDIA H100 SXM 80GB × TP2", with " · draft 3" when the option drafted.
    pub fn label(&self) -> String {
        let layout = self.layout();
        match self.spec_draft_tokens {
            0 => format!("{} × {layout}", self.gpu_name),
            k => format!("{} × {layout} · draft {k}", self.gpu_name),
        }
    }

    /// What the row's note says of it: why it was not sized, or why a layout over more
    /// nodes ranks below its GPU's one-node layout.
    pub fn why(&self) -> Option<&str> {
        self.reason.as_deref().or(self.note.as_deref())
    }

    /// The replica's layout.
    pub fn layout_of(&self) -> Layout {
        Layout::new(self.tp, self.pp, self.ep)
    }

    /// The replica's layout in words ([`Layout::words`]).
    pub fn layout(&self) -> String {
        self.layout_of().words(&self.gpu)
    }

    /// Whether this is `plan`'s own option: its GPU, layout and speculation.
    pub fn is_plan_of(&self, plan: &Plan) -> bool {
        self.gpu == plan.hardware.preset
            && self.layout_of() == Layout::of(plan)
            && (self.spec_draft_tokens, self.spec_acceptance) == speculation_of(plan)
    }
}

/// Where a plan's step-model constants come from, for one GPU and TP degree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ConstantsSource {
    /// The plan's own figures (no calibration in force).
    #[default]
    Datasheet,
    /// A calibration fitted on measurements of this GPU and TP degree.
    Measured,
    /// A calibration fitted on another GPU or TP degree, carried over: its achieved
    /// shares scale this GPU's datasheet, its times (per step, per prefill step, per
    /// request) stay as they are.
    Carried,
}

impl ConstantsSource {
    /// True for the datasheet (left out of the JSON).
    pub fn is_datasheet(&self) -> bool {
        *self == ConstantsSource::Datasheet
    }

    /// Where `plan`'s constants come from.
    pub fn of(plan: &crate::plan::Plan) -> ConstantsSource {
        match &plan.calibration {
            Some(c) if c.enabled => {
                let s = &c.source;
                let same_gpu = s.fitted_gpu.is_empty() || s.fitted_gpu == plan.hardware.preset;
                let same_tp =
                    s.fitted_tp_degree == 0 || s.fitted_tp_degree == plan.hardware.tp_degree;
                if same_gpu && same_tp {
                    ConstantsSource::Measured
                } else {
                    ConstantsSource::Carried
                }
            }
            _ => ConstantsSource::Datasheet,
        }
    }

    /// A word or two for a table cell.
    pub fn label(self) -> &'static str {
        match self {
            ConstantsSource::Datasheet => "datasheet",
            ConstantsSource::Measured => "measured",
            ConstantsSource::Carried => "carried over",
        }
    }
}

/// A caution for the rows whose constants a calibration carried from another vendor's
/// GPU: what it measured (the achieved shares, the per-step and per-request times) came
/// with that vendor's software, which the public runs show carries badly to another
/// vendor's (docs/accuracy.md, "Carrying across vendors"). `None` when no row does.
pub fn vendor_carry_words(rows: &[ShootoutRow], plan: &Plan) -> Option<String> {
    let c = plan.calibration.as_ref().filter(|c| c.enabled)?;
    let fitted = c.source.fitted_gpu.as_str();
    let from = crate::presets::gpu_vendor(fitted)?;
    let mut gpus: Vec<String> = Vec::new();
    for r in rows {
        let other = crate::presets::gpu_vendor(&r.gpu).is_some_and(|v| v != from);
        let name = crate::presets::gpu_short_name(&r.gpu);
        if r.constants == ConstantsSource::Carried && other && !gpus.contains(&name) {
            gpus.push(name);
        }
    }
    let (last, first) = gpus.split_last()?;
    let which = if first.is_empty() {
        last.clone()
    } else {
        format!("{} and {last}", first.join(", "))
    };
    Some(format!(
        "The rows on {which} carry a calibration fitted on {}: its shares and times were \
         measured with {from}'s software, and on public runs such carries across vendors \
         missed by far more than within one (docs/accuracy.md). Measure one of those GPUs \
         before choosing by its row.",
        crate::presets::gpu_name(fitted)
    ))
}

/// The comparison: every option, cheapest per compliant request first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShootoutResult {
    /// The options, ranked: by cost per compliant request (then fewer GPUs, then the
    /// order asked for); options that fit but cannot be sized next; options that do not
    /// fit last.
    pub rows: Vec<ShootoutRow>,
    /// Index in `rows` of the winner (the first ranked row), if any.
    pub best: Option<usize>,
    /// Index in `rows` of the plan's own GPU and TP degree, if compared.
    pub chosen: Option<usize>,
}

/// A finished comparison, kept in the plan (and so in its share link).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShootoutRecord {
    /// [`fingerprint`] of the plan the comparison was run for.
    pub fingerprint: String,
    /// The options compared.
    pub spec: ShootoutSpec,
    /// The ranked rows.
    pub result: ShootoutResult,
    /// Options compared whose rows were left out, as a share link leaves out every row
    /// but the winner's and the plan's own (see `share::link_form`); 0 in a plan that
    /// ran the comparison, and left out of the JSON then.
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub omitted: u32,
}

/// [`ShootoutRecord::omitted_words`] for `omitted` rows left out.
pub fn omitted_words(omitted: u32) -> Option<String> {
    let others = match omitted {
        0 => return None,
        1 => "1 other option compared was".to_string(),
        n => format!("{n} other options compared were"),
    };
    Some(format!(
        "A share link carries the cheapest option and the plan's own: {others} left out to keep it short. Compare again to see every row."
    ))
}

/// Longest reason kept in a row [characters].
pub const MAX_REASON_CHARS: usize = 600;

/// A hash of everything in `plan` that a comparison's numbers depend on: every field but
/// the name and note, the hardware the options replace (the GPU preset's figures, the TP
/// degree and the price, but not the provider and term of a price offer, which price every
/// option), the measured sweep (set aside by the comparison), the day schedule and the
/// comparison itself.
/// 16 hex digits (FNV-1a, 64 bits, of the JSON).
pub fn fingerprint(plan: &Plan) -> String {
    let mut p = plan.clone();
    p.name.clear();
    p.note.clear();
    p.shootout = None;
    p.schedule = None;
    p.disagg = None;
    p.planning.measured_sweep.clear();
    let h = &plan.hardware;
    p.hardware = HardwareSpec {
        mem_utilization: h.mem_utilization,
        step_overhead_s: h.step_overhead_s,
        tp_comm_overhead_s: h.tp_comm_overhead_s,
        // The options are priced at the offer's provider and term (empty without an
        // offer, so a plan without one hashes as it always did).
        price_offer: crate::prices::offer(&h.price_offer).map_or_else(String::new, |o| {
            format!("{} {}", o.provider, o.term.words())
        }),
        // The network comes with each option's GPU, as its other links do; left out so
        // that comparisons made before it was known hash as they did.
        scaleout_bytes_per_s: 0.0,
        scaleout_latency_s: 0.0,
        ..HardwareSpec::default()
    };
    let json = serde_json::to_vec(&p).unwrap_or_default();
    let hash = crate::digest::fnv1a(crate::digest::FNV1A_START, &json);
    format!("{hash:016x}")
}

/// [`fingerprint`] for a comparison of `spec`: with and without speculation compared,
/// the plan's speculation is one of the options, so a change of it (using the other
/// row) keeps the comparison fresh.
pub fn fingerprint_for(plan: &Plan, spec: &ShootoutSpec) -> String {
    if !spec.speculation {
        return fingerprint(plan);
    }
    let mut p = plan.clone();
    p.engine.spec_draft_tokens = 0;
    p.engine.spec_acceptance = 0.0;
    fingerprint(&p)
}

impl ShootoutRecord {
    /// How many options were compared: the rows kept and those left out.
    pub fn options(&self) -> usize {
        self.result.rows.len().saturating_add(self.omitted as usize)
    }

    /// What a reader of a shared comparison misses, in words: `None` when every row is
    /// there.
    pub fn omitted_words(&self) -> Option<String> {
        omitted_words(self.omitted)
    }

    /// Whether the comparison was run for this plan as it stands (a change of GPU or TP
    /// degree keeps it fresh; any other change of what the numbers depend on does not).
    pub fn is_fresh(&self, plan: &Plan) -> bool {
        self.fingerprint == fingerprint_for(plan, &self.spec)
    }

    /// Index of the row with the plan's own GPU and TP degree, if compared.
    pub fn chosen_in(&self, plan: &Plan) -> Option<usize> {
        self.result.rows.iter().position(|r| r.is_plan_of(plan))
    }

    /// Bounds on what a link may carry (see [`Plan::validate`]).
    pub(super) fn validate(&self) -> Result<(), PlanError> {
        let rows = &self.result.rows;
        if self.omitted as usize > MAX_OPTIONS || self.options() > MAX_OPTIONS {
            return Err(err(
                "shootout.result.rows",
                format!(
                    "{} options; a comparison has at most {MAX_OPTIONS}",
                    self.options()
                ),
            ));
        }
        for i in [self.result.best, self.result.chosen].into_iter().flatten() {
            if i >= rows.len() {
                return Err(err(
                    "shootout.result",
                    format!("row {i} named, but there are {} rows", rows.len()),
                ));
            }
        }
        if self.fingerprint.len() > 32
            || self.spec.gpus.len() > MAX_OPTIONS
            || self.spec.tp_degrees.len() > MAX_OPTIONS
            || self.spec.max_nodes == 0
            || self.spec.max_nodes > MAX_NODES
        {
            return Err(err(
                "shootout",
                "the comparison's header is malformed".into(),
            ));
        }
        for r in rows {
            if crate::presets::gpu(&r.gpu).is_none() {
                let id: String = r.gpu.chars().take(40).collect();
                return Err(err(
                    "shootout.result.rows.gpu",
                    format!("unknown GPU '{id}'"),
                ));
            }
            let long_reason = r
                .reason
                .as_ref()
                .is_some_and(|x| x.chars().count() > MAX_REASON_CHARS);
            if r.gpu_name.chars().count() > 120 || long_reason {
                return Err(err(
                    "shootout.result.rows",
                    "a row's text is too long".into(),
                ));
            }
            if !TP_DEGREES.contains(&r.tp) {
                return Err(err(
                    "shootout.result.rows.tp",
                    format!("TP degree {} is not one of 1, 2, 4, 8", r.tp),
                ));
            }
            if r.pp == 0 || r.pp > MAX_NODES {
                return Err(err(
                    "shootout.result.rows.pp",
                    format!(
                        "{} pipeline stages; a compared layout has 1 to {MAX_NODES}",
                        r.pp
                    ),
                ));
            }
            if r.ep == 0 || r.ep > TP_DEGREES[TP_DEGREES.len() - 1] * MAX_NODES {
                return Err(err(
                    "shootout.result.rows.ep",
                    format!(
                        "expert parallelism over {} GPUs is not a compared layout",
                        r.ep
                    ),
                ));
            }
            in_range(
                "shootout.result.rows.goodput_rps",
                r.goodput_rps,
                0.0,
                1e9,
                "requests/s",
            )?;
            in_range(
                "shootout.result.rows.kv_capacity_tokens",
                r.kv_capacity_tokens,
                0.0,
                1e15,
                "tokens",
            )?;
            for (field, x) in [
                (
                    "shootout.result.rows.cost_per_hour_usd",
                    r.cost_per_hour_usd,
                ),
                (
                    "shootout.result.rows.cost_per_month_usd",
                    r.cost_per_month_usd,
                ),
                (
                    "shootout.result.rows.cost_per_compliant_request_usd",
                    r.cost_per_compliant_request_usd,
                ),
                ("shootout.result.rows.ttft_p99_s", r.ttft_p99_s),
                ("shootout.result.rows.tpot_p99_s", r.tpot_p99_s),
                (
                    "shootout.result.rows.output_tokens_per_s_per_gpu",
                    r.output_tokens_per_s_per_gpu,
                ),
            ] {
                if let Some(x) = x {
                    in_range(field, x, 0.0, 1e12, "")?;
                }
            }
        }
        Ok(())
    }
}
