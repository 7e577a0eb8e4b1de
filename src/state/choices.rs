//! The enumerated inputs' choices: each value's name in the plan and the words the page
//! shows for it, declared once for the input that picks it and every view that shows it.

use goodput_core::plan::Arrival;
use goodput_core::slo::slo_class;
use goodput_core::Plan;

/// `(value, words)` pairs of one choice.
pub type Choices = &'static [(&'static str, &'static str)];

/// Weight and KV-cache dtypes.
pub const DTYPES: Choices = &[
    ("bf16", "bf16 (2 bytes)"),
    ("fp8", "fp8 (1 byte)"),
    ("int4", "int4 (½ byte)"),
];

/// Arrival processes the input offers (a trace's arrivals come from importing one).
pub const ARRIVALS: Choices = &[
    ("poisson", "Poisson"),
    ("gamma", "Bursty (gamma)"),
    ("constant", "Evenly spaced"),
    ("closed", "Closed loop (N clients)"),
];

/// How the SLO's objectives combine.
pub const SLO_MODES: Choices = &[
    ("joint", "Joint (per request)"),
    ("marginal", "Marginal percentiles"),
];

/// KV-cache policies.
pub const KV_POLICIES: Choices = &[
    ("paged", "Paged, preempt when full (vLLM-like)"),
    ("reserve", "Reserve prompt + max_tokens"),
    ("none", "Unlimited (article's reference)"),
];

/// The words of `value` among `choices`; the value itself when it is not one of them.
pub fn words(choices: Choices, value: &str) -> String {
    choices
        .iter()
        .find(|(v, _)| *v == value)
        .map_or_else(|| value.to_string(), |(_, w)| (*w).to_string())
}

/// The plan's arrival process in words, with its own numbers: "Closed loop (64
/// clients)", "Bursty (gamma, CV 2)", "From the trace".
pub fn arrival_words(p: &Plan) -> String {
    match p.traffic.arrival {
        Arrival::Closed { concurrency, .. } => format!("Closed loop ({concurrency} clients)"),
        Arrival::Gamma { cv } => format!("Bursty (gamma, CV {})", goodput_core::format::sig(cv)),
        Arrival::Trace => "From the trace".into(),
        a => words(ARRIVALS, a.name()),
    }
}

/// The plan's SLO class in words ("Chat (interactive)"), or its id when it is none of
/// the classes.
pub fn slo_class_words(p: &Plan) -> String {
    slo_class(&p.slo.class).map_or_else(|| p.slo.class.clone(), |c| c.label.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use goodput_core::plan::KvPolicy;

    #[test]
    fn every_value_of_the_plan_has_words() {
        let mut p = Plan::default();
        for kv in [KvPolicy::Paged, KvPolicy::Reserve, KvPolicy::None] {
            p.engine.kv_policy = kv;
            let w = words(KV_POLICIES, kv.name());
            assert_ne!(w, kv.name(), "{w}");
        }
        p.traffic.arrival = Arrival::Closed {
            concurrency: 64,
            think_s: 0.0,
        };
        assert_eq!(arrival_words(&p), "Closed loop (64 clients)");
        p.traffic.arrival = Arrival::Poisson;
        assert_eq!(arrival_words(&p), "Poisson");
        assert_eq!(slo_class_words(&p), slo_class(&p.slo.class).unwrap().label);
        assert_ne!(slo_class_words(&p), p.slo.class);
        p.slo.class = "custom".into();
        assert_eq!(slo_class_words(&p), "custom");
    }
}
