//! Command-line arguments: named flags consumed by name, then positionals.
//!
//! Every command takes what it knows with [`Args::value`], [`Args::flag`] and the
//! typed helpers, reads its positionals last with [`Args::positionals`], and ends
//! with [`Args::finish`], which rejects anything left over by name. Numbers accept
//! scientific notation (`8e9`). Errors are one line and name the flag.

use goodput_core::plan::{
    Arrival, Dtype, KvPolicy, LengthDist, LengthSpec, Plan, SloMode, MAX_CONCURRENCY,
};
use goodput_core::presets;

/// The arguments after the command name.
#[derive(Debug, Clone)]
pub struct Args {
    tokens: Vec<Option<String>>,
    /// Plan fields (dotted paths) set by a flag, with the flag that set them.
    set_by: Vec<(&'static str, &'static str)>,
}

impl Args {
    /// Splits `--name=value` into two tokens; keeps everything else as given.
    pub fn new<I: IntoIterator<Item = String>>(raw: I) -> Args {
        let mut tokens = Vec::new();
        for t in raw {
            match t.split_once('=') {
                Some((k, v)) if k.starts_with("--") => {
                    tokens.push(Some(k.to_string()));
                    tokens.push(Some(v.to_string()));
                }
                _ => tokens.push(Some(t)),
            }
        }
        Args {
            tokens,
            set_by: Vec::new(),
        }
    }

    fn position(&self, name: &str) -> Option<usize> {
        self.tokens.iter().position(|t| t.as_deref() == Some(name))
    }

    /// Takes a boolean flag; true when present.
    pub fn flag(&mut self, name: &str) -> bool {
        match self.position(name) {
            Some(i) => {
                self.tokens[i] = None;
                true
            }
            None => false,
        }
    }

    /// Takes `--name VALUE`; an error when the flag is present without a value or given twice.
    pub fn value(&mut self, name: &str) -> Result<Option<String>, String> {
        let Some(i) = self.position(name) else {
            return Ok(None);
        };
        self.tokens[i] = None;
        let v = match self.tokens.get_mut(i + 1).and_then(Option::take) {
            Some(v) => v,
            None => return Err(format!("{name}: missing value")),
        };
        if self.position(name).is_some() {
            return Err(format!("{name}: given more than once"));
        }
        Ok(Some(v))
    }

    /// Takes a finite number (scientific notation allowed).
    pub fn f64(&mut self, name: &str) -> Result<Option<f64>, String> {
        let Some(v) = self.value(name)? else {
            return Ok(None);
        };
        match v.trim().parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(Some(x)),
            _ => Err(format!("{name}: expected a finite number, got '{v}'")),
        }
    }

    /// Takes a whole number in `0..=u32::MAX` (scientific notation allowed, e.g. `2.5e3`).
    pub fn u32(&mut self, name: &str) -> Result<Option<u32>, String> {
        self.whole(name, u32::MAX as f64)
            .map(|o| o.map(|x| x as u32))
    }

    /// Takes a whole number in `0..=u64::MAX`.
    pub fn u64(&mut self, name: &str) -> Result<Option<u64>, String> {
        let Some(v) = self.value(name)? else {
            return Ok(None);
        };
        if let Ok(x) = v.trim().parse::<u64>() {
            return Ok(Some(x));
        }
        Err(format!("{name}: expected a whole number ≥ 0, got '{v}'"))
    }

    fn whole(&mut self, name: &str, max: f64) -> Result<Option<f64>, String> {
        let Some(v) = self.value(name)? else {
            return Ok(None);
        };
        match v.trim().parse::<f64>() {
            Ok(x) if x.is_finite() && x >= 0.0 && x <= max && x.fract() == 0.0 => Ok(Some(x)),
            _ => Err(format!(
                "{name}: expected a whole number in 0..={max}, got '{v}'"
            )),
        }
    }

    /// Takes the remaining positional arguments. Call it after every named flag.
    pub fn positionals(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        for t in self.tokens.iter_mut() {
            if t.as_deref().is_some_and(|s| !s.starts_with("--")) {
                out.extend(t.take());
            }
        }
        out
    }

    /// Fails on the first argument nobody took.
    pub fn finish(self) -> Result<(), String> {
        match self.tokens.into_iter().flatten().next() {
            None => Ok(()),
            Some(t) if t.starts_with("--") => Err(format!("{t}: unknown flag")),
            Some(t) => Err(format!("unexpected argument '{t}'")),
        }
    }

    /// Loads the plan: `--plan FILE` (JSON) or `--link URL`, else the defaults;
    /// then applies every plan-override flag and validates the result.
    pub fn plan(&mut self) -> Result<Plan, String> {
        let mut plan = self.base_plan()?;
        self.apply_overrides(&mut plan)?;
        self.check(&plan)?;
        Ok(plan)
    }

    /// [`Args::plan`] for a command that replaces the hardware (the shootout): every
    /// check but whether the model fits the plan's own GPUs, which each option checks.
    pub fn plan_for_other_hardware(&mut self) -> Result<Plan, String> {
        let mut plan = self.base_plan()?;
        self.apply_overrides(&mut plan)?;
        let mut probe = plan.clone();
        probe.engine.kv_policy = goodput_core::plan::KvPolicy::None;
        self.check(&probe)?;
        Ok(plan)
    }

    fn check(&self, plan: &Plan) -> Result<(), String> {
        plan.validate().map_err(
            |e| match self.set_by.iter().find(|(field, _)| *field == e.field) {
                Some((_, flag)) => format!("{flag}: {e}"),
                None => e.to_string(),
            },
        )
    }

    fn base_plan(&mut self) -> Result<Plan, String> {
        let file = self.value("--plan")?;
        let link = self.value("--link")?;
        match (file, link) {
            (Some(_), Some(_)) => Err("--plan and --link: give one, not both".into()),
            (Some(path), None) => {
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| format!("--plan: cannot read '{path}': {e}"))?;
                serde_json::from_str(&text)
                    .map_err(|e| format!("--plan: '{path}' is not a valid plan: {e}"))
            }
            (None, Some(url)) => load_link(&url),
            (None, None) => Ok(Plan::default()),
        }
    }

    fn note(&mut self, field: &'static str, flag: &'static str) {
        self.set_by.push((field, flag));
    }

    fn set_f64(
        &mut self,
        flag: &'static str,
        field: &'static str,
        slot: &mut f64,
    ) -> Result<(), String> {
        if let Some(x) = self.f64(flag)? {
            *slot = x;
            self.note(field, flag);
        }
        Ok(())
    }

    fn set_u32(
        &mut self,
        flag: &'static str,
        field: &'static str,
        slot: &mut u32,
    ) -> Result<(), String> {
        if let Some(x) = self.u32(flag)? {
            *slot = x;
            self.note(field, flag);
        }
        Ok(())
    }

    /// `--model ID` and `--gpu ID`: fill the model shape and the hardware from a preset,
    /// before any single-field flag, wherever they stand on the command line. The weight
    /// dtype is read first because the GPU's effective FLOP/s depend on it.
    fn apply_presets(&mut self, p: &mut Plan) -> Result<(), String> {
        let model = self.value("--model")?;
        let gpu = self.value("--gpu")?;
        if let Some(id) = model {
            let m = presets::model(&id).ok_or_else(|| {
                let known: Vec<&str> = presets::MODELS.iter().map(|m| m.id).collect();
                format!("--model: unknown model '{id}'; known: {}", known.join(", "))
            })?;
            m.apply(p);
        }
        if let Some(d) = self.dtype("--weight-dtype")? {
            p.model.weight_dtype = d;
        }
        if let Some(id) = gpu {
            let g = presets::gpu(&id).ok_or_else(|| {
                let known: Vec<&str> = presets::GPUS.iter().map(|g| g.id).collect();
                format!("--gpu: unknown GPU '{id}'; known: {}", known.join(", "))
            })?;
            g.apply(p);
        }
        Ok(())
    }

    fn apply_overrides(&mut self, p: &mut Plan) -> Result<(), String> {
        self.apply_presets(p)?;
        // Scheduler.
        self.set_u32(
            "--max-num-seqs",
            "engine.max_num_seqs",
            &mut p.engine.max_num_seqs,
        )?;
        self.set_u32(
            "--max-num-batched-tokens",
            "engine.max_num_batched_tokens",
            &mut p.engine.max_num_batched_tokens,
        )?;
        if self.flag("--no-chunked-prefill") {
            p.engine.chunked_prefill = false;
        }
        if let Some(v) = self.value("--kv-policy")? {
            p.engine.kv_policy = match v.as_str() {
                "none" => KvPolicy::None,
                "reserve" => KvPolicy::Reserve,
                "paged" => KvPolicy::Paged,
                _ => {
                    return Err(format!(
                        "--kv-policy: expected none|reserve|paged, got '{v}'"
                    ))
                }
            };
        }
        self.set_u32(
            "--spec-draft-tokens",
            "engine.spec_draft_tokens",
            &mut p.engine.spec_draft_tokens,
        )?;
        self.set_f64(
            "--spec-acceptance",
            "engine.spec_acceptance",
            &mut p.engine.spec_acceptance,
        )?;
        // Request counts and seeds.
        self.set_u32(
            "--num-requests",
            "run.num_requests",
            &mut p.run.num_requests,
        )?;
        self.set_u32(
            "--warmup-requests",
            "run.warmup_requests",
            &mut p.run.warmup_requests,
        )?;
        self.set_u32(
            "--replications",
            "run.replications",
            &mut p.run.replications,
        )?;
        if let Some(s) = self.u64("--seed")? {
            p.run.seed = s;
        }
        // Lengths.
        self.lengths("--input-len", "traffic.prompt", &mut p.traffic.prompt)?;
        self.lengths("--output-len", "traffic.output", &mut p.traffic.output)?;
        if let Some(v) = self.value("--arrival")? {
            let cv = match p.traffic.arrival {
                Arrival::Gamma { cv } => cv,
                _ => 2.0,
            };
            p.traffic.arrival = match v.as_str() {
                "poisson" => Arrival::Poisson,
                "gamma" => Arrival::Gamma { cv },
                "constant" => Arrival::Constant,
                "trace" => Arrival::Trace,
                "closed" => match p.traffic.arrival {
                    a @ Arrival::Closed { .. } => a,
                    _ => Arrival::Closed {
                        concurrency: 0,
                        think_s: 0.0,
                    },
                },
                _ => {
                    return Err(format!(
                        "--arrival: expected poisson|gamma|constant|trace|closed, got '{v}'"
                    ))
                }
            };
        }
        if let Some(cv) = self.f64("--arrival-cv")? {
            p.traffic.arrival = Arrival::Gamma { cv };
            self.note("traffic.arrival.cv", "--arrival-cv");
        }
        let concurrency = self.u32("--concurrency")?;
        let think = self.f64("--think-time")?;
        match &mut p.traffic.arrival {
            Arrival::Closed {
                concurrency: c,
                think_s,
            } => {
                match concurrency {
                    Some(n) => *c = n,
                    None if *c == 0 => {
                        return Err(format!(
                            "--arrival closed: needs --concurrency N (clients, 1..={MAX_CONCURRENCY})"
                        ))
                    }
                    None => {}
                }
                if let Some(t) = think {
                    *think_s = t;
                    self.note("traffic.arrival.think_s", "--think-time");
                }
                if concurrency.is_some() {
                    self.note("traffic.arrival.concurrency", "--concurrency");
                }
            }
            _ if concurrency.is_some() => {
                return Err("--concurrency: only with --arrival closed (for an open-loop cap, use --max-concurrency)".into())
            }
            _ if think.is_some() => {
                return Err("--think-time: only with --arrival closed".into())
            }
            _ => {}
        }
        if let Some(n) = self.u32("--max-concurrency")? {
            p.traffic.max_concurrency = Some(n);
            self.note("traffic.max_concurrency", "--max-concurrency");
        }
        self.set_f64(
            "--peak-rate",
            "traffic.peak_rate_rps",
            &mut p.traffic.peak_rate_rps,
        )?;
        self.set_u32(
            "--prefix-tokens",
            "traffic.prefix_tokens",
            &mut p.traffic.prefix_tokens,
        )?;
        self.set_f64(
            "--prefix-hit-rate",
            "traffic.prefix_hit_rate",
            &mut p.traffic.prefix_hit_rate,
        )?;
        // SLO.
        if let Some(x) = self.f64("--ttft-slo")? {
            p.slo.ttft_s = Some(x);
            self.note("slo.ttft_s", "--ttft-slo");
        }
        if let Some(x) = self.f64("--tpot-slo")? {
            p.slo.tpot_s = Some(x);
            self.note("slo.tpot_s", "--tpot-slo");
        }
        if let Some(x) = self.f64("--e2e-slo")? {
            p.slo.e2e_s = Some(x);
            self.note("slo.e2e_s", "--e2e-slo");
        }
        self.set_f64(
            "--slo-attainment",
            "slo.attainment_target",
            &mut p.slo.attainment_target,
        )?;
        if let Some(v) = self.value("--slo-mode")? {
            p.slo.mode = match v.as_str() {
                "joint" => SloMode::Joint,
                "marginal" => SloMode::Marginal,
                _ => return Err(format!("--slo-mode: expected joint|marginal, got '{v}'")),
            };
        }
        // Model and roofline constants.
        if let Some(x) = self.f64("--params")? {
            p.model.params = x;
            p.model.active_params = x;
            p.model.preset = "custom".into();
            self.note("model.params", "--params");
            self.note("model.active_params", "--params");
        }
        self.set_f64(
            "--active-params",
            "model.active_params",
            &mut p.model.active_params,
        )?;
        if let Some(d) = self.dtype("--kv-dtype")? {
            p.model.kv_dtype = d;
        }
        if let Some(x) = self.f64("--weight-bytes")? {
            p.model.weight_bytes_override = Some(x);
            self.note("model.weight_bytes_override", "--weight-bytes");
        }
        if let Some(x) = self.f64("--kv-bytes-per-token")? {
            p.model.kv_bytes_per_token_override = Some(x);
            self.note("model.kv_bytes_per_token_override", "--kv-bytes-per-token");
        }
        let h = &mut p.hardware;
        self.set_f64(
            "--mem-bandwidth",
            "hardware.mem_bandwidth_bytes_per_s",
            &mut h.mem_bandwidth_bytes_per_s,
        )?;
        self.set_f64(
            "--compute-flops",
            "hardware.compute_flops_per_s",
            &mut h.compute_flops_per_s,
        )?;
        self.set_f64(
            "--memory-bytes",
            "hardware.memory_bytes",
            &mut h.memory_bytes,
        )?;
        self.set_f64(
            "--mem-utilization",
            "hardware.mem_utilization",
            &mut h.mem_utilization,
        )?;
        self.set_f64(
            "--step-overhead",
            "hardware.step_overhead_s",
            &mut h.step_overhead_s,
        )?;
        self.set_u32("--tp", "hardware.tp_degree", &mut h.tp_degree)?;
        self.set_u32("--gpus-per-replica", "hardware.tp_degree", &mut h.tp_degree)?;
        self.set_f64(
            "--tp-comm-overhead",
            "hardware.tp_comm_overhead_s",
            &mut h.tp_comm_overhead_s,
        )?;
        self.set_f64(
            "--interconnect-bytes-per-s",
            "hardware.interconnect_bytes_per_s",
            &mut h.interconnect_bytes_per_s,
        )?;
        self.set_f64(
            "--allreduce-latency",
            "hardware.allreduce_latency_s",
            &mut h.allreduce_latency_s,
        )?;
        self.set_f64(
            "--gpu-hour-usd",
            "hardware.gpu_hour_usd",
            &mut h.gpu_hour_usd,
        )?;
        // Planning.
        self.set_f64(
            "--utilization",
            "planning.utilization",
            &mut p.planning.utilization,
        )?;
        self.set_u32(
            "--redundancy",
            "planning.redundancy",
            &mut p.planning.redundancy,
        )?;
        Ok(())
    }

    fn dtype(&mut self, flag: &str) -> Result<Option<Dtype>, String> {
        match self.value(flag)?.as_deref() {
            None => Ok(None),
            Some("bf16") => Ok(Some(Dtype::Bf16)),
            Some("fp8") => Ok(Some(Dtype::Fp8)),
            Some("int4") => Ok(Some(Dtype::Int4)),
            Some(v) => Err(format!("{flag}: expected bf16|fp8|int4, got '{v}'")),
        }
    }

    /// `--input-len-*` / `--output-len-*`: median, sigma, p95, fixed, min, max.
    fn lengths(
        &mut self,
        prefix: &'static str,
        field: &'static str,
        spec: &mut LengthSpec,
    ) -> Result<(), String> {
        let names = length_flags(prefix);
        let fields = length_fields(field);
        let median = self.f64(names[0])?;
        let sigma = self.f64(names[1])?;
        let p95 = self.f64(names[2])?;
        let fixed = self.u32(names[3])?;
        if median.is_some() || sigma.is_some() || p95.is_some() {
            let (m0, s0) = match spec.dist {
                LengthDist::LogNormal { median, sigma } => (median, sigma),
                LengthDist::Fixed { tokens } => (tokens as f64, 0.8),
                LengthDist::Trace => (800.0, 0.8),
            };
            let m = median.unwrap_or(m0);
            let s = match (sigma, p95) {
                (Some(_), Some(_)) => {
                    return Err(format!("{}: give a sigma or a p95, not both", names[2]))
                }
                (Some(s), None) => s,
                (None, Some(p)) => {
                    if !(m > 0.0 && p > m) {
                        return Err(format!(
                            "{}: must be greater than the median ({m}), got {p}",
                            names[2]
                        ));
                    }
                    LengthDist::sigma_from_p95(m, p)
                }
                (None, None) => s0,
            };
            spec.dist = LengthDist::LogNormal {
                median: m,
                sigma: s,
            };
            self.note(fields[0], names[0]);
            self.note(fields[1], if p95.is_some() { names[2] } else { names[1] });
        }
        if let Some(t) = fixed {
            if median.is_some() || sigma.is_some() || p95.is_some() {
                return Err(format!("{}: cannot be combined with a lognormal", names[3]));
            }
            spec.dist = LengthDist::Fixed { tokens: t };
            self.note(fields[2], names[3]);
        }
        if let Some(x) = self.u32(names[4])? {
            spec.min = x;
            self.note(fields[3], names[4]);
        }
        if let Some(x) = self.u32(names[5])? {
            spec.max = x;
            self.note(fields[4], names[5]);
        }
        Ok(())
    }
}

fn length_flags(prefix: &str) -> [&'static str; 6] {
    if prefix == "--input-len" {
        [
            "--input-len-median",
            "--input-len-sigma",
            "--input-len-p95",
            "--input-len-fixed",
            "--input-len-min",
            "--input-len-max",
        ]
    } else {
        [
            "--output-len-median",
            "--output-len-sigma",
            "--output-len-p95",
            "--output-len-fixed",
            "--output-len-min",
            "--output-len-max",
        ]
    }
}

fn length_fields(field: &str) -> [&'static str; 5] {
    if field == "traffic.prompt" {
        [
            "traffic.prompt.dist.median",
            "traffic.prompt.dist.sigma",
            "traffic.prompt.dist.tokens",
            "traffic.prompt.min",
            "traffic.prompt.max",
        ]
    } else {
        [
            "traffic.output.dist.median",
            "traffic.output.dist.sigma",
            "traffic.output.dist.tokens",
            "traffic.output.min",
            "traffic.output.max",
        ]
    }
}

/// Loads a plan from a share link.
fn load_link(url: &str) -> Result<Plan, String> {
    goodput_core::share::decode(url)
        .map(|s| s.plan)
        .map_err(|e| format!("--link: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Args {
        Args::new(s.split_whitespace().map(String::from))
    }

    #[test]
    fn scientific_notation_and_equals_form() {
        let mut a = args("--params 8e9 --max-num-seqs=64");
        let p = a.plan().expect("valid");
        assert_eq!(p.model.params, 8e9);
        assert_eq!(p.engine.max_num_seqs, 64);
        a.finish().expect("all taken");
    }

    #[test]
    fn unknown_flag_is_named() {
        let mut a = args("--bogus 3");
        a.plan().expect("defaults");
        assert_eq!(a.finish().unwrap_err(), "--bogus: unknown flag");
    }

    #[test]
    fn bad_number_is_named() {
        let mut a = args("--max-num-seqs lots");
        let e = a.plan().unwrap_err();
        assert!(e.starts_with("--max-num-seqs:"), "{e}");
        let mut a = args("--max-num-seqs -3");
        assert!(a.plan().unwrap_err().starts_with("--max-num-seqs:"));
        let mut a = args("--ttft-slo");
        assert_eq!(a.plan().unwrap_err(), "--ttft-slo: missing value");
    }

    #[test]
    fn p95_sets_sigma() {
        let mut a = args("--input-len-median 900 --input-len-p95 6000");
        let p = a.plan().expect("valid");
        match p.traffic.prompt.dist {
            LengthDist::LogNormal { median, sigma } => {
                assert_eq!(median, 900.0);
                assert!((sigma - (6000.0f64 / 900.0).ln() / 1.6448536).abs() < 1e-6);
            }
            other => panic!("expected lognormal, got {other:?}"),
        }
    }

    #[test]
    fn closed_loop_cap_and_slo_mode_flags() {
        let mut a = args("--arrival closed --concurrency 32 --think-time 0.5 --slo-mode marginal");
        let p = a.plan().expect("valid");
        assert_eq!(
            p.traffic.arrival,
            Arrival::Closed {
                concurrency: 32,
                think_s: 0.5
            }
        );
        assert_eq!(p.slo.mode, SloMode::Marginal);
        a.finish().expect("all taken");
        let p = args("--arrival closed --concurrency 8")
            .plan()
            .expect("valid");
        assert_eq!(
            p.traffic.arrival,
            Arrival::Closed {
                concurrency: 8,
                think_s: 0.0
            }
        );
        assert_eq!(p.slo.mode, SloMode::Joint);
        let p = args("--max-concurrency 64").plan().expect("valid");
        assert_eq!(p.traffic.max_concurrency, Some(64));
        assert_eq!(p.traffic.arrival, Arrival::Poisson);
        for (line, needle) in [
            ("--arrival closed", "--arrival closed: needs --concurrency"),
            (
                "--concurrency 4",
                "--concurrency: only with --arrival closed",
            ),
            ("--think-time 1", "--think-time: only with --arrival closed"),
            (
                "--arrival closed --concurrency 0",
                "--concurrency: traffic.arrival.concurrency",
            ),
            (
                "--arrival closed --concurrency 2 --think-time -1",
                "--think-time: traffic.arrival.think_s",
            ),
            (
                "--max-concurrency 0",
                "--max-concurrency: traffic.max_concurrency",
            ),
            ("--slo-mode both", "--slo-mode: expected joint|marginal"),
            (
                "--arrival open",
                "--arrival: expected poisson|gamma|constant|trace|closed",
            ),
        ] {
            let e = args(line).plan().unwrap_err();
            assert!(e.starts_with(needle), "{line}: {e}");
        }
    }

    #[test]
    fn presets_apply_before_single_field_flags_wherever_they_stand() {
        let mut a =
            args("--memory-bytes 100e9 --gpu h200 --model llama-3.1-70b --weight-dtype fp8");
        let p = a.plan().expect("valid");
        a.finish().expect("all taken");
        assert_eq!(p.model.preset, "llama-3.1-70b");
        assert_eq!(p.model.layers, 80);
        assert_eq!(p.model.weight_dtype, Dtype::Fp8);
        assert_eq!(p.hardware.preset, "h200");
        assert_eq!(p.hardware.mem_bandwidth_bytes_per_s, 4.8e12);
        // The flag wins over the preset although it comes first.
        assert_eq!(p.hardware.memory_bytes, 100e9);
        // The GPU's effective FLOP/s follow the FP8 weights given after it.
        assert!((p.hardware.compute_flops_per_s - 1978.9e12 * 0.6).abs() < 1e6);
        let e = args("--gpu h900").plan().unwrap_err();
        assert!(
            e.starts_with("--gpu: unknown GPU 'h900'; known: h100-sxm, h200"),
            "{e}"
        );
        let e = args("--model gpt-5").plan().unwrap_err();
        assert!(
            e.starts_with("--model: unknown model 'gpt-5'; known: article-8b"),
            "{e}"
        );
    }

    #[test]
    fn positionals_come_after_flags() {
        let mut a = args("http://x/#p=1 --json");
        assert!(a.flag("--json"));
        assert_eq!(a.positionals(), vec!["http://x/#p=1".to_string()]);
        a.finish().expect("all taken");
    }
}
