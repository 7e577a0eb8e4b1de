//! Prefix structure and routing over replicas from the command line.

mod common;

use common::{failure, goodput, json};

/// Sessions on two replicas behind each router: the report names the routing, and the
/// prefix-aware router finds more of the prompts cached than round robin.
#[test]
fn simulate_routes_sessions_over_replicas() {
    let run = |router: &str| {
        json(&goodput(&[
            "simulate",
            "--kv-policy",
            "paged",
            "--sessions",
            "32",
            "--turns",
            "6",
            "--session-document-tokens",
            "2000",
            "--input-len-median",
            "200",
            "--num-requests",
            "800",
            "--warmup-requests",
            "80",
            "--fleet-replicas",
            "2",
            "--fleet-router",
            router,
            "--request-rate",
            "4",
            "--json",
        ]))
    };
    let rr = run("round-robin");
    let aware = run("prefix_aware");
    assert_eq!(rr["routing"]["replicas"], 2);
    assert_eq!(rr["routing"]["router"], "round_robin");
    assert_eq!(aware["routing"]["router"], "prefix_aware");
    let hit = |v: &serde_json::Value| v["prefix_hit_rate"].as_f64().expect("a hit rate");
    assert!(
        hit(&aware) > hit(&rr) + 0.12,
        "{} against {}",
        hit(&aware),
        hit(&rr)
    );
    assert!(aware["cache_timeline"]
        .as_array()
        .is_some_and(|a| a.len() > 10));
}

/// The turn order and recorded replies from their flags; a bad router or turn order,
/// and a closed loop behind a router, are refused in one line naming the flag or field.
#[test]
fn routing_and_turn_order_flags_are_checked() {
    let link = common::stdout(&goodput(&[
        "link",
        "--sessions",
        "4",
        "--turn-order",
        "round-robin",
        "--no-replies-cached",
        "--fleet-router",
        "session_affinity",
    ]));
    let plan = json(&goodput(&["decode", link.trim()]));
    let sharing = &plan["traffic"]["sharing"];
    assert_eq!(sharing["order"], "round_robin");
    assert_eq!(sharing["replies_cached"], false);
    assert_eq!(plan["routing"]["router"], "session_affinity");
    assert_eq!(plan["routing"]["replicas"], 2);

    let e = failure(
        &goodput(&["simulate", "--fleet-router", "sticky"]),
        "a router that does not exist",
    );
    assert!(
        e.contains("--fleet-router") && e.contains("prefix_aware"),
        "{e}"
    );
    let e = failure(
        &goodput(&["simulate", "--turn-order", "shuffled"]),
        "a turn order that does not exist",
    );
    assert!(
        e.contains("--turn-order") && e.contains("interleaved"),
        "{e}"
    );
    let e = failure(
        &goodput(&[
            "simulate",
            "--arrival",
            "closed",
            "--concurrency",
            "8",
            "--fleet-replicas",
            "3",
        ]),
        "a closed loop behind a router",
    );
    assert!(
        e.contains("routing.replicas") || e.contains("--fleet-replicas"),
        "{e}"
    );
    assert!(e.contains("open-loop"), "{e}");
}
