//! The plan's choices in words, with their own numbers where they have some; the
//! words of each name are the core's field registry's.

use goodput_core::plan::Arrival;
use goodput_core::slo::slo_class;
use goodput_core::Plan;

use goodput_core::plan::fields::{choice_words, ARRIVALS};

/// The plan's arrival process in words, with its own numbers: "Closed loop (64
/// clients)", "Bursty (gamma, CV 2)", "From the trace".
pub fn arrival_words(p: &Plan) -> String {
    match p.traffic.arrival {
        Arrival::Closed { concurrency, .. } => {
            format!(
                "Closed loop ({})",
                goodput_core::format::clients(concurrency)
            )
        }
        Arrival::Gamma { cv } => format!("Bursty (gamma, CV {})", goodput_core::format::sig(cv)),
        a => choice_words(ARRIVALS, a.name()).to_string(),
    }
}

/// The plan's SLO class in words ("Chat", "Code completion"), or its id when it is none of
/// the classes.
pub fn slo_class_words(p: &Plan) -> String {
    slo_class(&p.slo.class).map_or_else(|| p.slo.class.clone(), |c| c.label.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use goodput_core::plan::fields::KV_POLICIES;
    use goodput_core::plan::KvPolicy;

    #[test]
    fn every_value_of_the_plan_has_words() {
        let mut p = Plan::default();
        for kv in [KvPolicy::Paged, KvPolicy::Reserve, KvPolicy::None] {
            p.engine.kv_policy = kv;
            let w = choice_words(KV_POLICIES, kv.name());
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
