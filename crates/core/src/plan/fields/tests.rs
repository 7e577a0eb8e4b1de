//! The registry against `Plan::validate`: every row's path is a plan field that
//! `validate` checks at exactly the row's range, and the names of every choice are the
//! plan's own.

use super::*;
use crate::plan::disagg::{DisaggSpec, Router};
use crate::plan::{Arrival, Dtype, KvPolicy, Plan, SloMode};
use serde_json::{json, Value};

/// A plan in which every field can reach its limits without another check failing
/// first: no KV policy (so no memory fit), and the largest model for `active_params`.
fn base_for(path: &str) -> Value {
    let mut plan = Plan::default();
    plan.engine.kv_policy = KvPolicy::None;
    if path.starts_with("disagg.") {
        plan.disagg = Some(DisaggSpec::for_plan(&plan));
    }
    // A link's bandwidth is checked when the link is given.
    if path == "disagg.kv_link.bandwidth_bytes_per_s" {
        disagg_mut(&mut plan).kv_link.source = crate::plan::disagg::KvLinkSource::Given;
    }
    // The routing skew is checked for a mixture of experts only.
    if path == "model.expert_routing_skew" {
        crate::presets::model("qwen3-30b-a3b")
            .expect("a preset")
            .apply(&mut plan);
    }
    // Expert parallelism needs experts, as many as GPUs: DeepSeek-V3 has 256.
    if path == "hardware.ep_degree" {
        crate::presets::model("deepseek-v3")
            .expect("a preset")
            .apply(&mut plan);
    }
    // So do a pool's: both pools and the plan's own replicas spread DeepSeek-V3 over 64.
    if path.starts_with("disagg.") && path.ends_with(".ep_degree") {
        crate::presets::model("deepseek-v3")
            .expect("a preset")
            .apply(&mut plan);
        plan.hardware.ep_degree = 64;
        let d = disagg_mut(&mut plan);
        d.prefill.ep_degree = 64;
        d.decode.ep_degree = 64;
    }
    let mut v = serde_json::to_value(&plan).expect("plan JSON");
    let set = |v: &mut Value, path: &str, x: Value| *slot(v, path) = x;
    match path {
        "model.active_params" => set(&mut v, "model.params", json!(MAX_PARAMS)),
        "traffic.arrival.cv" => set(
            &mut v,
            "traffic.arrival",
            json!({"kind": "gamma", "cv": 1.0}),
        ),
        "traffic.arrival.concurrency" | "traffic.arrival.think_s" => set(
            &mut v,
            "traffic.arrival",
            json!({"kind": "closed", "concurrency": 1, "think_s": 0.0}),
        ),
        "traffic.prompt.dist.tokens" => set(
            &mut v,
            "traffic.prompt.dist",
            json!({"kind": "fixed", "tokens": 100}),
        ),
        "traffic.output.dist.tokens" => set(
            &mut v,
            "traffic.output.dist",
            json!({"kind": "fixed", "tokens": 100}),
        ),
        // The min may reach the largest length once the max does.
        "traffic.prompt.min" => set(&mut v, "traffic.prompt.max", json!(MAX_TOKENS)),
        "traffic.output.min" => set(&mut v, "traffic.output.max", json!(MAX_TOKENS)),
        _ => {}
    }
    v
}

/// The JSON value at a dotted path, made (as `null`) when absent.
fn slot<'a>(v: &'a mut Value, path: &str) -> &'a mut Value {
    path.split('.').fold(v, |v, key| {
        if !v.is_object() {
            *v = json!({});
        }
        v.as_object_mut()
            .expect("an object")
            .entry(key)
            .or_insert(Value::Null)
    })
}

/// `validate` on the plan with `path` set to `x`: `Ok`, or the path it names.
fn validate_with(f: &Field, x: f64) -> Result<(), &'static str> {
    let mut v = base_for(f.path);
    *slot(&mut v, f.path) = if f.kind == Kind::List {
        json!([x as u64])
    } else if f.is_whole() {
        json!(x as u64)
    } else {
        json!(x)
    };
    let plan: Plan = serde_json::from_value(v).expect("a plan decodes");
    plan.validate().map_err(|e| e.field)
}

#[test]
fn every_range_is_the_one_validate_checks() {
    let mut checked = 0;
    for f in FIELDS {
        let Some(r) = f.range else { continue };
        assert_eq!(
            validate_with(f, r.hi),
            Ok(()),
            "{} at its max {}",
            f.path,
            r.hi
        );
        let past = if f.is_whole() {
            r.hi + 1.0
        } else {
            r.hi * (1.0 + 1e-9)
        };
        assert_eq!(
            validate_with(f, past),
            Err(f.path),
            "{} past its max",
            f.path
        );
        if r.lo_open {
            assert_eq!(
                validate_with(f, r.lo),
                Err(f.path),
                "{} at its open min",
                f.path
            );
        } else if f.is_whole() && r.lo >= 1.0 {
            assert_eq!(
                validate_with(f, r.lo - 1.0),
                Err(f.path),
                "{} below its min",
                f.path
            );
        } else if !f.is_whole() {
            let below = r.lo - (r.lo.abs() * 1e-9).max(1e-12);
            assert_eq!(
                validate_with(f, below),
                Err(f.path),
                "{} below its min",
                f.path
            );
        }
        checked += 1;
    }
    assert!(checked >= 45, "only {checked} ranges checked");
}

#[test]
fn check_words_the_range_in_the_plans_units() {
    let f = field("slo.ttft_s");
    let e = f.check(-1.0).expect_err("negative");
    assert_eq!(
        e.to_string(),
        "slo.ttft_s: must be a number in (0, 3600] s, got -1"
    );
    let l = e.limits.expect("limits");
    assert!(l.lo_open && !l.whole && l.hi == 3600.0 && l.got == -1.0);
    let e = field("engine.max_num_seqs").check(0.0).expect_err("zero");
    assert_eq!(
        e.to_string(),
        "engine.max_num_seqs: must be a whole number in 1..=16384, got 0"
    );
    assert!(
        field("engine.max_num_seqs").check(2.5).is_err(),
        "a fraction"
    );
    assert!(
        field("hardware.memory_bytes").check(f64::NAN).is_err(),
        "not a number"
    );
    let bw = field("disagg.kv_link.bandwidth_bytes_per_s");
    assert_eq!(
        bw.range_words(bw.flag_units()),
        "number in [0.008, 80000] Gbit/s"
    );
}

#[test]
fn paths_and_flags_are_unique_and_lookups_find_them() {
    for (i, f) in FIELDS.iter().enumerate() {
        assert!(
            FIELDS[..i].iter().all(|g| g.path != f.path),
            "{} twice",
            f.path
        );
        assert_eq!(by_path(f.path), Some(f));
        assert!(!f.label.is_empty() && !f.help.is_empty(), "{}", f.path);
        if let Some(flag) = f.flag {
            for name in std::iter::once(flag.name).chain(flag.aliases.iter().copied()) {
                assert_eq!(by_flag(name).map(|g| g.path), Some(f.path), "--{name}");
            }
        }
        if let Some(r) = f.range {
            assert!(r.lo <= r.hi, "{}", f.path);
        }
    }
    assert_eq!(by_path("model.nope"), None);
    assert_eq!(by_flag("nope"), None);
}

#[test]
fn choices_are_the_plans_names() {
    let names = |v: Vec<&'static str>| v;
    let of = |c: Choices| c.iter().map(|(n, _)| *n).collect::<Vec<_>>();
    // Every name has words of its own to be shown by.
    for c in [ARRIVALS, KV_POLICIES, SLO_MODES, ROUTERS, DTYPES] {
        for (name, words) in c {
            assert!(!words.is_empty() && words != name, "{name}: {words}");
            assert_eq!(choice_words(c, name), *words);
        }
    }
    assert_eq!(
        of(ARRIVALS),
        names(
            [
                Arrival::Poisson,
                Arrival::Gamma { cv: 1.0 },
                Arrival::Constant,
                Arrival::Trace,
                Arrival::Closed {
                    concurrency: 1,
                    think_s: 0.0
                },
            ]
            .map(Arrival::name)
            .to_vec()
        )
    );
    assert_eq!(
        of(KV_POLICIES),
        [KvPolicy::None, KvPolicy::Reserve, KvPolicy::Paged].map(KvPolicy::name)
    );
    assert_eq!(
        of(SLO_MODES),
        [SloMode::Joint, SloMode::Marginal].map(SloMode::name)
    );
    assert_eq!(
        of(ROUTERS),
        [Router::LeastLoaded, Router::RoundRobin].map(Router::name)
    );
    // A choice a plan's JSON may leave out (at its default, or with its section) reads
    // as its first name (`value_in`), so that name must be the default.
    assert_eq!(of(ARRIVALS)[0], Arrival::default().name());
    assert_eq!(of(SLO_MODES)[0], SloMode::default().name());
    assert_eq!(of(ROUTERS)[0], Router::default().name());
    // The fleet's routers and the sessions' turn orders, in their enums' order.
    use crate::plan::{FleetRouter, TurnOrder};
    assert_eq!(of(FLEET_ROUTERS), FleetRouter::ALL.map(FleetRouter::name));
    assert_eq!(of(TURN_ORDERS), TurnOrder::ALL.map(TurnOrder::name));
    assert_eq!(of(FLEET_ROUTERS)[0], FleetRouter::default().name());
    assert_eq!(of(TURN_ORDERS)[0], TurnOrder::default().name());
    for ((name, _), d) in DTYPES.iter().zip([Dtype::Bf16, Dtype::Fp8, Dtype::Int4]) {
        assert_eq!(serde_json::to_value(d).expect("dtype"), json!(name));
    }
}

/// Every field the assumptions state that the plan always holds is found in its JSON at
/// the row's path (others, such as `traffic.arrival.cv`, exist for some variants only);
/// an optional one left unset reads as unset.
#[test]
fn every_path_finds_its_value_in_the_plans_json() {
    let plan = serde_json::to_value(crate::Plan::default()).expect("plan JSON");
    for f in FIELDS.iter().filter(|f| f.finance && !f.optional) {
        assert!(
            !value_in(f, &plan).is_null(),
            "{} is not in the plan's JSON",
            f.path
        );
    }
    let mut p = crate::Plan::default();
    p.slo.tpot_s = None;
    let plan = serde_json::to_value(p).expect("plan JSON");
    assert!(value_in(field("slo.tpot_s"), &plan).is_null());
}

#[test]
fn a_list_reads_in_the_fields_own_words() {
    let seqs = field("run.sweep_max_num_seqs");
    let budgets = field("run.sweep_batched_tokens");
    assert_eq!(parse_list(seqs, "64, 16;32 64"), Ok(vec![16, 32, 64]));
    assert_eq!(parse_list(budgets, "0, 512,256"), Ok(vec![256, 512, 0]));
    assert_eq!(
        parse_list(seqs, "16, 3x"),
        Err("'3x' is not a whole number; separate values with commas".into())
    );
    assert_eq!(
        parse_list(seqs, "0, 16"),
        Err("0 is outside 1–16,384 seqs".into())
    );
    assert_eq!(
        parse_list(budgets, " , "),
        Err("list at least one value, separated by commas".into())
    );
    let many: Vec<String> = (1..=13).map(|i| i.to_string()).collect();
    assert_eq!(
        parse_list(seqs, &many.join(",")),
        Err(format!(
            "at most {} values, got 13",
            crate::plan::MAX_SWEEP_VALUES
        ))
    );
    assert_eq!(format_list(&[16, 32]), "16, 32");
}

#[test]
fn a_label_inside_a_sentence_keeps_its_acronyms() {
    assert_eq!(
        field("hardware.mem_utilization").label_in_sentence(),
        "memory utilisation"
    );
    let kv = FIELDS
        .iter()
        .find(|f| f.label.starts_with("KV "))
        .expect("a label that starts with an acronym");
    assert_eq!(kv.label_in_sentence(), kv.label);
}

#[test]
fn a_field_reads_in_the_unit_the_app_shows_it_in() {
    use serde_json::json;
    for (path, value, want) in [
        ("traffic.peak_rate_rps", json!(30.0), "30 req/s"),
        ("slo.ttft_s", json!(0.5), "500 ms"),
        ("slo.tpot_s", json!(null), "none"),
        ("hardware.gpu_hour_usd", json!(2.5), "$2.50/GPU-h"),
        ("model.params", json!(8.03e9), "8.03 billion"),
        ("hardware.tp_degree", json!(2), "2 GPUs"),
        ("planning.redundancy", json!(1200), "1,200 replicas"),
        ("planning.utilization", json!(0.7), "70%"),
        ("slo.attainment_target", json!(0.995), "99.5%"),
        ("hardware.tp_degree", json!(1), "1 GPU"),
        ("planning.redundancy", json!(1), "1 replica"),
        ("planning.redundancy", json!(0), "0 replicas"),
        ("slo.mode", json!("joint"), "Joint (per request)"),
        ("slo.mode", json!("marginal"), "Marginal percentiles"),
        ("hardware.preset", json!("h100-sxm"), "NVIDIA H100 SXM 80GB"),
        ("model.preset", json!("no-such-model"), "no-such-model"),
    ] {
        assert_eq!(field_value(field(path), &value), want, "{path}");
    }
}

#[test]
fn the_registry_writes_what_it_reads() {
    use serde_json::json;
    let plan = Plan::default();
    // Every number field of a section the default plan has: written, then read back
    // through the registry, bit for bit.
    let mut written = 0;
    for f in FIELDS {
        if !matches!(f.kind, Kind::Real) {
            continue;
        }
        let now = value_in(f, &serde_json::to_value(&plan).expect("json"));
        let x: f64 = 0.1 + 1.0 / 3.0;
        match with_values(&plan, &[(f, json!(x))]) {
            Ok(p) => {
                let back = value_in(f, &serde_json::to_value(&p).expect("json"));
                assert_eq!(
                    back.as_f64().map(f64::to_bits),
                    Some(x.to_bits()),
                    "{}",
                    f.path
                );
                written += 1;
            }
            // A field of a section the default plan leaves out, or a view of another
            // field (a p95), has no place of its own.
            Err(e) => assert!(now.is_null(), "{}: {e}", f.path),
        }
    }
    assert!(written > 25, "only {written} fields written");
    // An optional field is set; a seed past 2^53 keeps every bit.
    let p = with_values(
        &plan,
        &[
            (field("slo.tpot_s"), json!(0.04)),
            (field("run.seed"), json!(u64::MAX - 1)),
        ],
    )
    .expect("set");
    assert_eq!((p.slo.tpot_s, p.run.seed), (Some(0.04), u64::MAX - 1));
    // A field inside a section the plan leaves out is named, with what to do.
    let e = with_values(&plan, &[(field("traffic.sharing.zipf"), json!(1.1))]).unwrap_err();
    assert_eq!(e.field, "traffic.sharing.zipf");
    assert!(e.message.contains("turn it on first"), "{e}");
}

#[test]
fn the_registry_writes_a_default_the_json_leaves_out() {
    // Each of these is left out of the plan's JSON at this value; written from another
    // value, it comes back, not refused as a field with no place.
    let mut plan = Plan::default();
    plan.engine.frontend_s = 0.02;
    plan.hardware.seq_overhead_s = 1e-5;
    plan.hardware.prefill_overhead_s = 1e-3;
    plan.hardware.kv_read_efficiency = 0.5;
    for (path, x) in [
        ("engine.frontend_s", 0.0),
        ("hardware.interconnect_bytes_per_s", 0.0),
        ("hardware.allreduce_latency_s", 0.0),
        ("hardware.seq_overhead_s", 0.0),
        ("hardware.prefill_overhead_s", 0.0),
        ("hardware.kv_read_efficiency", 1.0),
    ] {
        let f = field(path);
        let p = with_values(&plan, &[(f, json!(x))]).unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut want = plan.clone();
        match path {
            "engine.frontend_s" => want.engine.frontend_s = x,
            "hardware.interconnect_bytes_per_s" => want.hardware.interconnect_bytes_per_s = x,
            "hardware.allreduce_latency_s" => want.hardware.allreduce_latency_s = x,
            "hardware.seq_overhead_s" => want.hardware.seq_overhead_s = x,
            "hardware.prefill_overhead_s" => want.hardware.prefill_overhead_s = x,
            _ => want.hardware.kv_read_efficiency = x,
        }
        assert_eq!(p, want, "{path}");
    }
    // A value the plan would drop is still refused: a gamma spread on Poisson arrivals.
    let e = with_values(&plan, &[(field("traffic.arrival.cv"), json!(1.5))]).unwrap_err();
    assert!(e.message.contains("no place"), "{e}");
}

/// Plans that between them hold every number the registry has: prefix structure,
/// routing and pools on, every optional number set; a closed loop with fixed lengths;
/// gamma arrivals for a mixture of experts with a routing skew.
fn plans_holding_every_number() -> Vec<Plan> {
    let mut full = Plan::default();
    sharing_mut(&mut full).groups = 4;
    routing_mut(&mut full).replicas = 3;
    full.disagg = Some(DisaggSpec::for_plan(&full));
    disagg_mut(&mut full).prefill.instances = Some(2);
    disagg_mut(&mut full).decode.instances = Some(5);
    // The bandwidth is the plan's only when the link is given.
    disagg_mut(&mut full).kv_link.source = crate::plan::disagg::KvLinkSource::Given;
    full.model.weight_bytes_override = Some(1.5e11);
    full.model.kv_bytes_per_token_override = Some(3.2e5);
    full.traffic.max_concurrency = Some(40);
    full.engine.kv_cache_tokens = Some(200_000);
    full.slo.e2e_s = Some(30.0);
    let mut closed = Plan::default();
    closed.traffic.arrival = Arrival::Closed {
        concurrency: 12,
        think_s: 1.5,
    };
    closed.traffic.prompt.dist = crate::plan::LengthDist::Fixed { tokens: 700 };
    closed.traffic.output.dist = crate::plan::LengthDist::Fixed { tokens: 90 };
    let mut gamma = Plan::default();
    gamma.traffic.arrival = Arrival::Gamma { cv: 2.5 };
    crate::presets::model("qwen3-30b-a3b")
        .expect("a preset")
        .apply(&mut gamma);
    gamma.model.expert_routing_skew = 2.5;
    vec![full, closed, gamma]
}

#[test]
fn every_number_and_only_a_number_has_a_reader_and_a_writer() {
    for f in FIELDS {
        let number = matches!(f.kind, Kind::Real | Kind::Whole | Kind::Seed);
        assert_eq!(f.access.is_some(), number, "{}", f.path);
    }
}

#[test]
fn every_number_reads_what_the_plans_json_holds() {
    let mut held = std::collections::BTreeSet::new();
    for plan in plans_holding_every_number() {
        let json = serde_json::to_value(&plan).expect("json");
        for f in FIELDS.iter().filter(|f| f.access.is_some()) {
            let Some(x) = f.held(&plan) else {
                if f.holds(&plan) {
                    assert!(f.optional, "{} holds no value", f.path);
                    assert!(value_in(f, &json).is_null(), "{}", f.path);
                }
                continue;
            };
            match value_in(f, &json) {
                // Left out at its default: the plan read back from its JSON holds it.
                Value::Null => {
                    let back: Plan = serde_json::from_value(json.clone()).expect("plan");
                    assert_eq!(f.held(&back), Some(x), "{}", f.path);
                }
                v => assert_eq!(v.as_f64(), Some(x), "{}", f.path),
            }
            held.insert(f.path);
        }
    }
    let numbers = FIELDS.iter().filter(|f| f.access.is_some()).count();
    // Every number but the two p95s, which are the sigmas read another way.
    assert_eq!(held.len(), numbers - 2, "held: {held:?}");
}

/// A value of `f` other than `now`, of the field's kind (a p95 reads in whole tokens).
fn another(f: &Field, now: Option<f64>) -> f64 {
    match (now, f.is_whole() || f.path.ends_with(".p95")) {
        (Some(x), true) => x + 1.0,
        (Some(x), false) => x * 1.5 + 0.25,
        (None, true) => 3.0,
        (None, false) => 0.5,
    }
}

/// Whether `a` and `b` are two views of one length's distribution (a median, a p95, a
/// sigma and fixed tokens move together).
fn same_length(a: &Field, b: &Field) -> bool {
    let dist = |f: &Field| f.path.rsplit_once(".dist.").map(|(l, _)| l.to_string());
    dist(a).is_some() && dist(a) == dist(b)
}

#[test]
fn every_number_writes_itself_and_nothing_else() {
    let numbers: Vec<&Field> = FIELDS.iter().filter(|f| f.access.is_some()).collect();
    let mut written = 0;
    for plan in plans_holding_every_number() {
        for f in numbers
            .iter()
            .filter(|f| f.holds(&plan) || f.path.ends_with(".p95"))
        {
            let a = f.access.expect("a number");
            let x = another(f, (a.get)(&plan));
            let mut typed = plan.clone();
            (a.set)(&mut typed, Some(x));
            assert_eq!((a.get)(&typed), Some(x), "{} reads back", f.path);
            for g in numbers
                .iter()
                .filter(|g| g.path != f.path && !same_length(f, g))
            {
                assert_eq!(
                    g.held(&typed),
                    g.held(&plan),
                    "writing {} moved {}",
                    f.path,
                    g.path
                );
            }
            // The JSON writer puts it in the same place.
            if !f.path.ends_with(".p95") {
                let value = if f.is_whole() {
                    json!(x as u64)
                } else {
                    json!(x)
                };
                let via_json =
                    with_values(&plan, &[(f, value)]).unwrap_or_else(|e| panic!("{}: {e}", f.path));
                assert_eq!(f.held(&via_json), Some(x), "{} through the JSON", f.path);
            }
            written += 1;
        }
    }
    assert!(written >= 70, "only {written} numbers written");
}

#[test]
fn every_setting_and_only_a_setting_has_a_reader_and_a_writer_of_its_kind() {
    for f in FIELDS {
        let fits = matches!(
            (f.kind, f.setting),
            (Kind::Choice(_) | Kind::Preset, Some(Setting::Name { .. }))
                | (Kind::Switch, Some(Setting::Switch { .. }))
                | (Kind::List, Some(Setting::List { .. }))
                | (Kind::Real | Kind::Whole | Kind::Seed, None)
        );
        assert!(fits, "{}: {:?} with {:?}", f.path, f.kind, f.setting);
    }
}

/// The top-level keys of a plan's JSON that differ between `a` and `b`, with the
/// second-level ones under `traffic` (`traffic.arrival`), where sections live.
fn sections_moved(a: &Plan, b: &Plan) -> Vec<String> {
    let (a, b) = (
        serde_json::to_value(a).expect("json"),
        serde_json::to_value(b).expect("json"),
    );
    let keys = |v: &Value| -> Vec<String> {
        v.as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default()
    };
    let mut all = keys(&a);
    all.extend(keys(&b));
    all.sort();
    all.dedup();
    let mut moved = Vec::new();
    for k in all {
        if a.get(&k) == b.get(&k) {
            continue;
        }
        if k == "traffic" {
            let (ta, tb) = (&a[&k], &b[&k]);
            let mut inner = keys(ta);
            inner.extend(keys(tb));
            inner.sort();
            inner.dedup();
            moved.extend(
                inner
                    .into_iter()
                    .filter(|i| ta.get(i) != tb.get(i))
                    .map(|i| format!("traffic.{i}")),
            );
        } else {
            moved.push(k);
        }
    }
    moved
}

/// The sections a row may move: its own (a preset fills its whole section; the weight
/// precision refreshes a preset GPU's FLOP/s).
fn may_move(f: &Field) -> Vec<String> {
    let mut parts = f.path.split('.');
    let first = parts.next().unwrap_or_default();
    let own = if first == "traffic" {
        format!("traffic.{}", parts.next().unwrap_or_default())
    } else {
        first.to_string()
    };
    let mut allowed = vec![own];
    if f.path == "model.weight_dtype" {
        allowed.push("hardware".into());
    }
    allowed
}

#[test]
fn every_setting_writes_each_of_its_values_and_nothing_else() {
    let presets_of = |f: &Field, plan: &Plan| -> Vec<String> {
        if f.path == "hardware.price_offer" {
            let offers = crate::prices::offers_for(&plan.hardware.preset);
            assert!(!offers.is_empty(), "no offer for {}", plan.hardware.preset);
            offers
                .iter()
                .map(|o| o.id.to_string())
                .chain([String::new()])
                .collect()
        } else if f.path == "model.preset" {
            crate::presets::MODELS
                .iter()
                .map(|m| m.id.to_string())
                .collect()
        } else {
            crate::presets::GPUS
                .iter()
                .map(|g| g.id.to_string())
                .collect()
        }
    };
    let mut written = 0;
    for plan in plans_holding_every_number() {
        for f in FIELDS.iter().filter(|f| f.setting.is_some()) {
            let values: Vec<String> = match f.kind {
                Kind::Choice(c) => c.iter().map(|(n, _)| n.to_string()).collect(),
                Kind::Preset => presets_of(f, &plan),
                _ => Vec::new(),
            };
            let mut check = |typed: &Plan, what: &str| {
                let moved = sections_moved(&plan, typed);
                let allowed = may_move(f);
                assert!(
                    moved.iter().all(|m| allowed.contains(m)),
                    "writing {what} at {} moved {moved:?}",
                    f.path
                );
                // Within its section, no other row moves either: a preset fills its
                // section, the weight precision a preset GPU's numbers, and a row with
                // rows of its own below it (the arrival process, the prefix structure's
                // switch) those.
                let fills = matches!(f.kind, Kind::Preset) && !f.path.starts_with("disagg.")
                    || f.path == "model.weight_dtype";
                for g in FIELDS.iter().filter(|g| g.path != f.path && !fills) {
                    // Writing into a section turns on its switch.
                    if g.path.starts_with(&format!("{}.", f.path))
                        || f.path.starts_with(&format!("{}.", g.path))
                    {
                        continue;
                    }
                    // A choice may hide a row (a KV link from the GPUs has no bandwidth
                    // of its own), but keeps its value for when it shows again.
                    if g.holds(&plan) {
                        let value = |p: &Plan| g.access.and_then(|a| (a.get)(p));
                        assert_eq!(
                            value(typed),
                            value(&plan),
                            "writing {what} at {} moved {}",
                            f.path,
                            g.path
                        );
                    }
                    assert_eq!(
                        (g.name_in(typed), g.is_on(typed), g.list_in(typed)),
                        (g.name_in(&plan), g.is_on(&plan), g.list_in(&plan)),
                        "writing {what} at {} moved {}",
                        f.path,
                        g.path
                    );
                }
                written += 1;
            };
            for v in &values {
                let mut typed = plan.clone();
                f.set_name(&mut typed, v);
                assert_eq!(f.name_in(&typed).as_deref(), Some(v.as_str()), "{}", f.path);
                check(&typed, v);
            }
            if let Some(Setting::Switch { get, set }) = f.setting {
                for on in [true, false] {
                    let mut typed = plan.clone();
                    set(&mut typed, on);
                    assert_eq!(get(&typed), on, "{}", f.path);
                    check(&typed, if on { "on" } else { "off" });
                }
            }
            if let Some(Setting::List { get, set }) = f.setting {
                let list = vec![8, 32, 128];
                let mut typed = plan.clone();
                set(&mut typed, list.clone());
                assert_eq!(get(&typed), list, "{}", f.path);
                check(&typed, "a list");
            }
            // A name the row does not know leaves the plan as it is (a pool's GPU id is
            // written as given, and refused by `validate`).
            if matches!(f.setting, Some(Setting::Name { .. })) && !f.path.starts_with("disagg.") {
                let mut typed = plan.clone();
                f.set_name(&mut typed, "no-such-name");
                assert_eq!(typed, plan, "{}", f.path);
            }
        }
    }
    assert!(written >= 100, "only {written} settings written");
}
