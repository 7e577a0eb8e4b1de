//! Routing over replicas: where a request lands decides whether its prefix is cached.
//! Two replicas of session traffic, searched for goodput under each router.

use goodput_core::plan::{FleetRouter, KvPolicy, LengthDist, Plan, PrefixModel, RoutingSpec};
use goodput_core::report::{evaluate_plan_with, EvaluateOptions};
use goodput_core::search::{search_goodput_threads, GoodputResult};
use goodput_core::sim::{simulate, SimConfig, SimConfigOf};

/// Chats on two replicas: 64 sessions a replica, eight turns each after a 3,000-token
/// document of their own, paged KV memory.
fn sessions_on_two_replicas(router: FleetRouter) -> Plan {
    let mut p = Plan::default();
    p.engine.kv_policy = KvPolicy::Paged;
    p.traffic.prompt.dist = LengthDist::LogNormal {
        median: 200.0,
        sigma: 0.8,
    };
    p.traffic.sharing = Some(PrefixModel {
        sessions: 64,
        turns: 8,
        document_tokens: 3_000,
        ..PrefixModel::NONE
    });
    p.run.num_requests = 1_500;
    p.run.warmup_requests = 150;
    p.run.replications = 8;
    p.routing = Some(RoutingSpec {
        replicas: 2,
        router,
    });
    p
}

fn goodput(p: &Plan) -> GoodputResult {
    search_goodput_threads(p, 2, &mut |_| true).expect("the search runs")
}

/// Prefix-aware routing sends a session's turns where its conversation is cached; round
/// robin spreads them, so each replica computes the other's history again. The plan
/// with prefix-aware routing serves more per replica (about 45% more here), and session
/// affinity, which keeps a session on one replica without looking at caches, comes close.
#[test]
fn prefix_aware_routing_beats_round_robin_on_two_replicas_of_sessions() {
    let rr = goodput(&sessions_on_two_replicas(FleetRouter::RoundRobin)).goodput_rps;
    let aware = goodput(&sessions_on_two_replicas(FleetRouter::PrefixAware)).goodput_rps;
    let sticky = goodput(&sessions_on_two_replicas(FleetRouter::SessionAffinity)).goodput_rps;
    assert!(
        aware > 1.25 * rr,
        "prefix aware {aware:.2} req/s against round robin {rr:.2}"
    );
    assert!(
        sticky > 1.15 * rr,
        "session affinity {sticky:.2} req/s against round robin {rr:.2}"
    );
}

/// The plan report (what `goodput plan` prints) says what prefix-aware routing saves
/// against round robin: the same search with requests dealt in turn, both fleets sized
/// for the peak, in replicas and dollars a month.
#[test]
fn the_report_says_what_the_router_saves_against_round_robin() {
    let mut plan = sessions_on_two_replicas(FleetRouter::PrefixAware);
    plan.run.replications = 4;
    plan.traffic.peak_rate_rps = 200.0;
    let options = EvaluateOptions {
        sweep: false,
        threads: 2,
    };
    let report = evaluate_plan_with(&plan, options, &mut |_| true).expect("evaluates");
    let saved = report
        .router_savings
        .clone()
        .expect("compared with round robin");
    // The baseline is round robin's own search, and the plan's fleet is the report's.
    let mut rr = plan.clone();
    rr.routing = Some(RoutingSpec {
        replicas: 2,
        router: FleetRouter::RoundRobin,
    });
    assert_eq!(saved.round_robin.goodput_rps, goodput(&rr).goodput_rps);
    let fleet = report.capacity.as_ref().expect("sized");
    assert_eq!(saved.routed.replicas_total, Some(fleet.replicas_total));
    assert_eq!(
        saved.routed.cost_per_month_usd,
        Some(fleet.cost_per_month_usd)
    );
    let n = saved.replicas_saved().expect("both sized");
    assert!(n >= 3, "{saved:?}");
    assert!(saved.usd_month_saved().expect("both priced") > 0.0);
    let md = report.to_markdown();
    assert!(
        md.contains(&format!(
            "| Router against round robin | {} |",
            saved.words()
        )),
        "{md}"
    );
    assert!(
        saved.words().contains(&format!("{n} replicas and $")),
        "{}",
        saved.words()
    );
    // Round robin has nothing to be compared with, nor has a plan without routing.
    for p in [rr, Plan::default()] {
        let r = evaluate_plan_with(&p, options, &mut |_| true).expect("evaluates");
        assert_eq!(r.router_savings, None);
        assert!(!r.to_markdown().contains("Router against round robin"));
    }
}

/// The cache hit rate follows the router: round robin finds a session's history on its
/// replica about half the time, prefix-aware routing nearly always.
#[test]
fn the_hit_rate_follows_the_router() {
    let hit = |router| {
        let p = sessions_on_two_replicas(router);
        let cfg = SimConfig::from_plan(&p, 6.0).expect("valid");
        simulate(&cfg, 1).expect("runs").prefix_hit_rate
    };
    let (rr, aware) = (hit(FleetRouter::RoundRobin), hit(FleetRouter::PrefixAware));
    assert!((0.3..0.6).contains(&rr), "round robin hit rate {rr:.3}");
    assert!(aware > 0.7, "prefix-aware hit rate {aware:.3}");
}

/// Without shared prefixes the routers differ only in how they balance load: every
/// router that looks at the replicas does at least as well as round robin, give or take
/// the search's resolution, and a random one (a Kubernetes Service) does worse.
#[test]
fn without_prefixes_routers_only_balance_load() {
    let plan = |router| {
        let mut p = sessions_on_two_replicas(router);
        p.traffic.sharing = None;
        p
    };
    let rr = goodput(&plan(FleetRouter::RoundRobin)).goodput_rps;
    let random = goodput(&plan(FleetRouter::Random)).goodput_rps;
    let least = goodput(&plan(FleetRouter::LeastLoaded)).goodput_rps;
    assert!(
        random < rr,
        "random {random:.2} against round robin {rr:.2}"
    );
    assert!(
        least > 0.97 * rr,
        "least loaded {least:.2} against round robin {rr:.2}"
    );
}

/// Closed-loop traffic is not routed: its clients would be shared by the replicas. The
/// plan says so, naming the field.
#[test]
fn a_closed_loop_is_not_routed() {
    let mut p = sessions_on_two_replicas(FleetRouter::RoundRobin);
    p.traffic.arrival = goodput_core::plan::Arrival::Closed {
        concurrency: 32,
        think_s: 0.0,
    };
    let e = p.validate().expect_err("refused");
    assert_eq!(e.field, "routing.replicas");
    assert!(e.to_string().contains("open-loop"), "{e}");
}
