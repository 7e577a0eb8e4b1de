//! What the plan's router saves against round robin.
//!
//! ```text
//!   plan: N replicas behind router R ──goodput search──▶ goodput_R  ──size_fleet──▶ fleet_R
//!   baseline_plan: the same, router = round robin ──▶ goodput_RR ──size_fleet──▶ fleet_RR
//!   saved = fleet_RR − fleet_R   (replicas, GPUs, dollars a month)
//! ```
//!
//! Both goodputs come from [`crate::search::GoodputSearch`] runs of their plans, with the
//! same seeds and replications, so the CLI (`goodput plan`, in-process) and the page (its
//! workers) get the same figures. Only a plan that routes over replicas with a router
//! other than round robin, and whose goodput is simulated (no measured sweep), has a
//! baseline to compare with.

use serde::{Deserialize, Serialize};

use crate::capacity::{size_fleet, CapacityPlan};
use crate::format::{count, rps, thousands, usd};
use crate::plan::fields::{choice_words, FLEET_ROUTERS};
use crate::plan::{FleetRouter, Plan, RoutingSpec};
use crate::search::GoodputResult;

/// `plan` with its replicas dealt requests in turn: the baseline its router is compared
/// with; `None` when the plan does not route, already routes in turn, or takes its
/// goodput from a measured sweep (nothing to simulate).
pub fn baseline_plan(plan: &Plan) -> Option<Plan> {
    let routing = plan.routing?;
    if routing.router == FleetRouter::RoundRobin || !plan.planning.measured_sweep.is_empty() {
        return None;
    }
    Some(Plan {
        routing: Some(RoutingSpec {
            router: FleetRouter::RoundRobin,
            ..routing
        }),
        ..plan.clone()
    })
}

/// One router's fleet for the plan's peak.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoutedFleet {
    /// Goodput per replica behind this router [requests/s].
    pub goodput_rps: f64,
    /// Replicas for the peak, spares included; `None` when no fleet can be sized (no
    /// rate meets the SLO).
    pub replicas_total: Option<u32>,
    /// GPUs of those replicas.
    pub gpus_total: Option<u32>,
    /// What those GPUs cost a month [USD].
    pub cost_per_month_usd: Option<f64>,
}

impl RoutedFleet {
    /// The fleet sized from `goodput_rps` for `plan`'s peak (what the report's capacity
    /// is for the plan's own router).
    pub fn sized(plan: &Plan, goodput_rps: f64) -> RoutedFleet {
        RoutedFleet::of(goodput_rps, size_fleet(goodput_rps, plan).ok().as_ref())
    }

    /// The fleet of an already sized `capacity` (`None`: none could be sized).
    pub fn of(goodput_rps: f64, capacity: Option<&CapacityPlan>) -> RoutedFleet {
        RoutedFleet {
            goodput_rps,
            replicas_total: capacity.map(|c| c.replicas_total),
            gpus_total: capacity.map(|c| c.gpus_total),
            cost_per_month_usd: capacity.map(|c| c.cost_per_month_usd),
        }
    }
}

/// The plan's router against round robin: both fleets for the peak.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouterSavings {
    /// The plan's router.
    pub router: FleetRouter,
    /// Replicas simulated together behind it.
    pub replicas_simulated: u32,
    /// The fleet behind the plan's router.
    pub routed: RoutedFleet,
    /// The fleet behind round robin.
    pub round_robin: RoutedFleet,
}

impl RouterSavings {
    /// The comparison for `plan`, whose own fleet is `capacity` (the report's, sized from
    /// `goodput_rps`), against `baseline`, the goodput search of [`baseline_plan`];
    /// `None` when the plan has no baseline.
    pub fn of(
        plan: &Plan,
        goodput_rps: f64,
        capacity: Option<&CapacityPlan>,
        baseline: &GoodputResult,
    ) -> Option<RouterSavings> {
        let rr = baseline_plan(plan)?;
        let routing = plan.routing?;
        Some(RouterSavings {
            router: routing.router,
            replicas_simulated: routing.replicas,
            routed: RoutedFleet::of(goodput_rps, capacity),
            round_robin: RoutedFleet::sized(&rr, baseline.goodput_rps),
        })
    }

    /// Replicas the plan's router saves against round robin (negative: it needs more);
    /// `None` when either fleet cannot be sized.
    pub fn replicas_saved(&self) -> Option<i64> {
        Some(self.round_robin.replicas_total? as i64 - self.routed.replicas_total? as i64)
    }

    /// Dollars a month the plan's router saves (negative: it costs more); `None` when
    /// either fleet cannot be sized.
    pub fn usd_month_saved(&self) -> Option<f64> {
        Some(self.round_robin.cost_per_month_usd? - self.routed.cost_per_month_usd?)
    }

    /// The comparison in one sentence: "Prefix aware (llm-d precise prefix cache)
    /// routing reaches 11.6 req/s per replica against round robin's 7.85: 6 replicas
    /// (6 GPUs, $21,900 a month) instead of 9 (9 GPUs, $32,850 a month), 3 replicas and
    /// $10,950 a month less."
    pub fn words(&self) -> String {
        let name = choice_words(FLEET_ROUTERS, self.router.name());
        let head = format!(
            "{name} routing reaches {} req/s per replica against round robin's {}",
            rps(self.routed.goodput_rps),
            rps(self.round_robin.goodput_rps)
        );
        // The replicas and "(12 GPUs, $21,900 a month)"; `None` when not sized.
        let fleet = |f: &RoutedFleet| -> Option<(u32, String)> {
            let what = format!(
                "({} GPUs, {} a month)",
                thousands(f.gpus_total?.into()),
                usd(f.cost_per_month_usd?)
            );
            Some((f.replicas_total?, what))
        };
        // "6 replicas (12 GPUs, $21,900 a month)".
        let with_word = |(n, what): &(u32, String)| format!("{} {what}", replicas(u64::from(*n)));
        match (
            fleet(&self.routed),
            fleet(&self.round_robin),
            self.replicas_saved(),
            self.round_robin
                .cost_per_month_usd
                .zip(self.routed.cost_per_month_usd)
                .map(|(a, b)| crate::format::usd_difference(a, b)),
        ) {
            (Some(a), Some(b), Some(n), Some(d)) => {
                let verdict = if n > 0 || (n == 0 && d > 0.0) {
                    format!("{} and {} a month less", replicas(n.unsigned_abs()), usd(d))
                } else if n == 0 {
                    "the same fleet".to_string()
                } else {
                    format!(
                        "{} and {} a month more",
                        replicas(n.unsigned_abs()),
                        usd(-d)
                    )
                };
                format!(
                    "{head}: {} instead of {} {}, {verdict}.",
                    with_word(&a),
                    b.0,
                    b.1
                )
            }
            (Some(a), None, _, _) => {
                format!(
                    "{head}: {}, where behind round robin no rate meets the SLO.",
                    with_word(&a)
                )
            }
            (None, Some(b), _, _) => {
                format!(
                    "{head}: no rate meets the SLO behind it, where round robin needs {}.",
                    with_word(&b)
                )
            }
            _ => format!("{head}: behind neither does any rate meet the SLO."),
        }
    }
}

/// "1 replica", "3 replicas".
fn replicas(n: u64) -> String {
    count(n, "replica", "replicas")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two replicas behind `router`.
    fn sessions(router: FleetRouter) -> Plan {
        Plan {
            routing: Some(RoutingSpec {
                replicas: 2,
                router,
            }),
            ..Plan::default()
        }
    }

    #[test]
    fn only_a_plan_routed_by_another_router_than_round_robin_has_a_baseline() {
        assert_eq!(baseline_plan(&Plan::default()), None, "no routing");
        assert_eq!(baseline_plan(&sessions(FleetRouter::RoundRobin)), None);
        let p = sessions(FleetRouter::PrefixAware);
        let b = baseline_plan(&p).expect("a baseline");
        assert_eq!(b.routing.map(|r| r.router), Some(FleetRouter::RoundRobin));
        assert_eq!(b.routing.map(|r| r.replicas), Some(2));
        assert_eq!(
            Plan {
                routing: p.routing,
                ..b
            },
            p,
            "nothing else changes"
        );
        let mut measured = p.clone();
        measured.planning.measured_sweep = vec![crate::plan::SweepRow {
            rate_rps: 1.0,
            attainment: 1.0,
        }];
        assert_eq!(baseline_plan(&measured), None, "a measured knee");
    }

    #[test]
    fn the_words_name_a_router_that_costs_more_and_a_fleet_that_cannot_be_sized() {
        let fleet = |g: f64, n: Option<u32>| RoutedFleet {
            goodput_rps: g,
            replicas_total: n,
            gpus_total: n.map(|n| 2 * n),
            cost_per_month_usd: n.map(|n| 1000.0 * n as f64),
        };
        let mut s = RouterSavings {
            router: FleetRouter::Random,
            replicas_simulated: 2,
            routed: fleet(5.0, Some(5)),
            round_robin: fleet(6.0, Some(4)),
        };
        assert_eq!(
            s.words(),
            "Random (a Kubernetes Service) routing reaches 5.00 req/s per replica against round \
             robin's 6.00: 5 replicas (10 GPUs, $5,000 a month) instead of 4 (8 GPUs, $4,000 a \
             month), 1 replica and $1,000 a month more."
        );
        s.round_robin = fleet(0.0, None);
        assert!(s
            .words()
            .ends_with("where behind round robin no rate meets the SLO."));
        assert_eq!(s.replicas_saved(), None);
    }
}
