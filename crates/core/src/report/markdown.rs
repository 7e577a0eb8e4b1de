//! Markdown rendering of a [`PlanReport`].

use super::{GoodputSource, PlanReport};
use crate::format::plain;
use crate::format::{latency, ms, percent_whole, rps, thousands, usd, MISSING};
use std::fmt::Write;

/// Renders the report.
pub(crate) fn render(r: &PlanReport) -> String {
    let mut s = String::new();
    let title = if r.name.trim().is_empty() {
        "goodput plan"
    } else {
        r.name.trim()
    };
    let _ = writeln!(s, "# {title}\n");
    if !r.note.trim().is_empty() {
        let _ = writeln!(s, "{}\n", r.note.trim());
    }

    let _ = writeln!(s, "## Answer\n");
    let _ = writeln!(s, "| | |\n| --- | --- |");
    let g = &r.goodput;
    let source = match g.source {
        GoodputSource::Simulated => "simulated",
        GoodputSource::Measured => "measured sweep",
        GoodputSource::None => "not available",
    };
    let range = g.goodput_range_rps.map_or(String::new(), |[lo, hi]| {
        format!(", 95% range {} to {}", rps(lo), rps(hi))
    });
    let _ = writeln!(
        s,
        "| Goodput per replica | {} req/s ({source}{range}) |",
        rps(g.goodput_rps)
    );
    match &r.capacity {
        Some(c) => {
            let _ = writeln!(
                s,
                "| Planned rate per replica | {} req/s ({}% of goodput) |",
                rps(c.planned_rps_per_replica),
                plain(c.utilization * 100.0)
            );
            if let Some(pl) = &r.planned_load {
                let _ = writeln!(
                    s,
                    "| Latency at the planned rate | p99 TTFT {} ms, p99 TPOT {} ms (one simulation at {} req/s) |",
                    ms(pl.detail.ttft_p99_s),
                    ms(pl.detail.tpot_p99_s),
                    rps(pl.rate_rps)
                );
                if pl.detail.prefix_hit_rate > 0.0 {
                    let _ = writeln!(
                        s,
                        "| Prefix cache at the planned rate | {} of prompt tokens found cached, {} tokens evicted |",
                        crate::format::percent_tenths(pl.detail.prefix_hit_rate),
                        thousands(pl.detail.prefix_evicted_tokens.min(i64::MAX as u64) as i64)
                    );
                }
            }
            let _ = writeln!(
                s,
                "| Replicas | {} ({} for the {} req/s peak + {} spare) |",
                c.replicas_total,
                c.replicas_for_peak,
                plain(c.peak_rate_rps),
                c.redundancy
            );
            let _ = writeln!(
                s,
                "| GPUs | {} ({} per replica) |",
                c.gpus_total, c.gpus_per_replica
            );
            if c.sensitivity.len() == 3 {
                let row = |k: usize| {
                    let x = &c.sensitivity[k];
                    format!(
                        "{} replicas, {}",
                        x.replicas_total,
                        usd(x.cost_per_month_usd)
                    )
                };
                let _ = writeln!(
                    s,
                    "| If the peak is 20% lower / as forecast / 20% higher | {} / {} / {} a month |",
                    row(0),
                    row(1),
                    row(2)
                );
            }
            if let Some(saved) = &r.router_savings {
                let _ = writeln!(s, "| Router against round robin | {} |", saved.words());
            }
            let _ = writeln!(s, "| Cost per hour | {} |", usd(c.cost_per_hour_usd));
            let _ = writeln!(s, "| Cost per month | {} |", usd(c.cost_per_month_usd));
            let _ = writeln!(
                s,
                "| Cost per compliant request | {} |",
                usd(c.cost_per_compliant_request_usd)
            );
            let _ = writeln!(
                s,
                "| Cost per million output tokens | {} |",
                usd(c.cost_per_million_output_tokens_usd)
            );
        }
        None => {
            let _ = writeln!(
                s,
                "| Fleet | cannot be sized: {} |",
                r.capacity_error.as_deref().unwrap_or("unknown")
            );
        }
    }
    let m = &r.memory;
    if m.weights_fit {
        let _ = writeln!(
            s,
            "| KV cache | {} tokens per replica (vLLM's \"GPU KV cache size\"): {:.1} GB per GPU after {:.1} GB of weights and a {:.1} GB reserve |",
            thousands(m.kv_capacity_tokens.floor() as i64),
            m.kv_bytes_per_gpu / 1e9,
            m.weight_bytes_per_gpu / 1e9,
            m.reserve_bytes_per_gpu / 1e9
        );
    }
    if let Some(why) = &m.reason {
        let _ = writeln!(s, "| Memory fit | {why} |");
    }
    if let Some(b) = &r.binding_class {
        let _ = writeln!(
            s,
            "| Binding class | {b}: the class furthest below its own target where the mix first misses |"
        );
    }
    let _ = writeln!(s, "\n{}\n", g.note);
    classes_section(&mut s, r);

    if let Some(c) = &r.comparison {
        let _ = writeln!(s, "## GPU comparison\n");
        let _ = writeln!(
            s,
            "| option | goodput per replica | replicas | GPUs | cost per month | cost per compliant request | constants | |\n| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |"
        );
        for (i, row) in c.rows.iter().enumerate() {
            let mark = match (c.best == Some(i), c.chosen == Some(i)) {
                (true, true) => "cheapest, chosen",
                (true, false) => "cheapest",
                (false, true) => "chosen",
                _ => "",
            };
            if row.fits {
                let _ = writeln!(
                    s,
                    "| {} | {} req/s | {} | {} | {} | {} | {} | {mark} |",
                    row.label(),
                    rps(row.goodput_rps),
                    row.replicas_total,
                    row.gpus_total,
                    row.cost_per_month_usd.map_or(MISSING.to_string(), usd),
                    row.cost_per_compliant_request_usd
                        .map_or(MISSING.to_string(), usd),
                    row.constants.label(),
                );
            } else {
                let _ = writeln!(
                    s,
                    "| {} | {} | | | | | | {mark} |",
                    row.label(),
                    row.reason.as_deref().unwrap_or("does not fit")
                );
            }
        }
        s.push('\n');
        if let Some(w) = crate::plan::comparison::omitted_words(r.comparison_omitted) {
            let _ = writeln!(s, "{w}\n");
        }
        if let Some(w) = &r.comparison_caution {
            let _ = writeln!(s, "{w}\n");
        }
    }

    if let Some(d) = &r.day {
        day_section(&mut s, d);
    }

    let _ = writeln!(s, "## Assumptions\n");
    for a in &r.assumptions {
        let _ = writeln!(s, "- {a}");
    }
    s.push('\n');

    if !r.warnings.is_empty() {
        let _ = writeln!(s, "## Warnings\n");
        for w in &r.warnings {
            let sev = match w.severity {
                crate::analytic::Severity::Critical => "**critical**",
                crate::analytic::Severity::Warning => "warning",
                crate::analytic::Severity::Info => "info",
            };
            let _ = writeln!(s, "- {sev} (`{}`): {}", w.id, w.message);
        }
        s.push('\n');
    }

    if let Some(search) = &r.search {
        let _ = writeln!(
            s,
            "## Attainment curve\n\n{} replications per rate; 95% interval by Student's t. Latency from replication 0.\n",
            search.replications
        );
        // A mix's attainment is the worst class's: each class's own is a column.
        let class_heads: String = r.classes.iter().map(|c| format!(" {} |", c.name)).collect();
        let class_rules = " ---: |".repeat(r.classes.len());
        let _ = writeln!(
            s,
            "| rate (req/s) | attainment | 95% CI | TTFT p50 (ms) | TTFT p99 (ms) | TPOT p50 (ms) | TPOT p99 (ms) |{class_heads}"
        );
        let _ = writeln!(
            s,
            "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |{class_rules}"
        );
        for c in &search.curve {
            let (t50, t99, p50, p99) = c.detail.map_or(
                (
                    MISSING.into(),
                    MISSING.into(),
                    MISSING.into(),
                    MISSING.into(),
                ),
                |d| {
                    (
                        ms(d.ttft_p50_s),
                        ms(d.ttft_p99_s),
                        ms(d.tpot_p50_s),
                        ms(d.tpot_p99_s),
                    )
                },
            );
            let each: String = c
                .classes
                .as_slice()
                .iter()
                .map(|a| format!(" {:.1}% |", a * 100.0))
                .collect();
            let _ = writeln!(
                s,
                "| {} | {:.1}% | {:.1}–{:.1}% | {t50} | {t99} | {p50} | {p99} |{each}",
                rps(c.rate_rps),
                c.attainment * 100.0,
                c.ci95[0] * 100.0,
                c.ci95[1] * 100.0
            );
        }
        s.push('\n');
    }

    let _ = writeln!(
        s,
        "## Engine flags\n\n```sh\n{}\n{}\n```\n",
        r.flags.vllm, r.flags.sglang
    );
    if let (Some(h), Some(sw)) = (&r.knob_hint, &r.sweep) {
        let _ = writeln!(
            s,
            "## Knob sweep\n\n{} ({} replications per rate). Goodput in req/s:\n",
            h.message, sw.replications
        );
        let mut head = String::from("| max_num_seqs |");
        let mut rule = String::from("| ---: |");
        for b in &sw.batched_tokens {
            if *b == 0 {
                head.push_str(" no chunking |");
            } else {
                let _ = write!(head, " {b} |");
            }
            rule.push_str(" ---: |");
        }
        let _ = writeln!(s, "{head}\n{rule}");
        let cols = sw.batched_tokens.len().max(1);
        for (i, n) in sw.max_num_seqs.iter().enumerate() {
            let mut row = format!("| {n} |");
            for j in 0..cols {
                let idx = i * cols + j;
                if let Some(c) = sw.cells.get(idx) {
                    if idx == sw.best {
                        let _ = write!(row, " **{}** |", rps(c.goodput_rps));
                    } else {
                        let _ = write!(row, " {} |", rps(c.goodput_rps));
                    }
                }
            }
            let _ = writeln!(s, "{row}");
        }
        if let Some(note) = r.search.as_ref().and_then(|g| sw.differs_from(g)) {
            let _ = writeln!(s, "\n{note}");
        }
        let _ = writeln!(
            s,
            "\nBest setting:\n\n```sh\n{}\n{}\n```\n",
            h.flags.vllm, h.flags.sglang
        );
    }

    let a = &r.analytics;
    let _ = writeln!(s, "## Analytic companions\n");
    let _ = writeln!(s, "| check | value |\n| --- | ---: |");
    let rows: Vec<(String, String)> = vec![
        (
            "Mean prompt / output length (tokens)".into(),
            format!(
                "{:.0} / {:.0}",
                a.lengths.prompt_tokens, a.lengths.output_tokens
            ),
        ),
        (
            "Concurrency per replica at the planned rate (Little's law)".into(),
            format!("{:.0}", a.concurrency_per_replica),
        ),
        (
            "Concurrency across the fleet at the peak".into(),
            format!(
                "{:.0} sequences, {:.0} KV tokens",
                a.concurrency_fleet_peak, a.kv_tokens_fleet_peak
            ),
        ),
        (
            "Suggested max_num_seqs (plan's setting)".into(),
            format!(
                "{}{} ({})",
                a.suggested_max_num_seqs,
                if a.suggestion_capped_by_kv {
                    ", capped by KV memory"
                } else {
                    ""
                },
                a.max_num_seqs
            ),
        ),
        (
            "Largest token budget for the TPOT objective".into(),
            a.token_budget_max
                .map_or("no TPOT objective".into(), |b| format!("{b} tokens")),
        ),
        ("Decode-floor step (ms)".into(), ms(a.decode_floor_step_s)),
        (
            "Prefill load: per replica / fleet peak (share of one replica's compute)".into(),
            format!(
                "{} / {}",
                percent_whole(a.prefill_load_replica),
                percent_whole(a.prefill_load_fleet_peak)
            ),
        ),
        (
            "GPU busy share at the planned rate (lower bound)".into(),
            percent_whole(a.work_load_replica),
        ),
        (
            "KV capacity".into(),
            format!(
                "{} tokens, {} sequences at the mean context",
                thousands(a.kv_capacity_tokens.round() as i64),
                thousands(a.kv_capacity_seqs.round() as i64)
            ),
        ),
        (
            "Separate prefill pool, M/D/1 TTFT: 1 GPU / 2-way inter-op / 2-way intra-op (ms)"
                .into(),
            [
                a.prefill_queue.ttft_single_s,
                a.prefill_queue.ttft_inter_op_s,
                a.prefill_queue.ttft_intra_op_s,
            ]
            .iter()
            .map(|x| x.map_or("unstable".into(), ms))
            .collect::<Vec<_>>()
            .join(" / "),
        ),
        (
            "Standard error of attainment: one point / pooled".into(),
            format!(
                "{:.2} / {:.2} percentage points",
                a.attainment_se_point * 100.0,
                a.attainment_se_pooled * 100.0
            ),
        ),
    ];
    for (k, v) in rows {
        let _ = writeln!(s, "| {k} | {v} |");
    }
    s.push('\n');

    let _ = writeln!(s, "## Alert rules\n\n```yaml\n{}```", r.alerts.yaml);
    s
}

/// The day schedule: its verdict, the static and autoscaled fleets' monthly costs, and
/// every hour (rate, replicas needed, replicas serving, cost, attainment).
fn day_section(s: &mut String, d: &crate::schedule::Schedule) {
    let period = if d.period_hours == 168 { "week" } else { "day" };
    let _ = writeln!(s, "## Traffic over a {period}\n");
    let _ = writeln!(
        s,
        "{} Static fleet {} replicas, {} a month; autoscaled {} a month. Profile: {}.\n",
        d.verdict_sentence(),
        d.static_replicas,
        usd(d.static_cost_per_month_usd),
        usd(d.autoscaled_cost_per_month_usd),
        d.profile_source
    );
    let _ = writeln!(
        s,
        "| hour | rate (req/s) | replicas needed | serving | cost | attainment |\n| ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    for h in &d.hours {
        let serving = if h.serving_min == h.serving_max {
            h.serving_min.to_string()
        } else {
            format!("{}–{}", h.serving_min, h.serving_max)
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {serving}{} | {} | {} |",
            h.hour,
            rps(h.rate_rps),
            h.replicas,
            if h.ramp { " (ramp)" } else { "" },
            usd(h.cost_usd),
            h.attainment
                .map_or(MISSING.to_string(), crate::format::percent_tenths)
        );
    }
    s.push('\n');
}

/// The traffic classes at the planned load, and one shared pool against a pool per class.
fn classes_section(s: &mut String, r: &PlanReport) {
    if r.classes.is_empty() {
        return;
    }
    let _ = writeln!(s, "## Traffic classes\n");
    let _ = writeln!(
        s,
        "| class | share | priority | target | attainment at the planned rate | TTFT p99 | E2E p99 | share of tokens | cost per compliant request |"
    );
    let _ = writeln!(
        s,
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    for c in &r.classes {
        let d = c.at_planned_load;
        let cell = |x: Option<String>| x.unwrap_or_else(|| MISSING.to_string());
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            c.name,
            percent_whole(c.share),
            c.priority,
            percent_whole(c.target),
            cell(d.map(|d| crate::format::percent_tenths(d.attainment))),
            cell(d.map(|d| latency(Some(d.ttft_p99_s)))),
            cell(d.map(|d| latency(Some(d.e2e_p99_s)))),
            cell(c.token_share.map(percent_whole)),
            cell(c.cost_per_compliant_request_usd.map(usd)),
        );
    }
    let _ = writeln!(
        s,
        "\nEach class's cost is a replica's cost split by the tokens each class used at the planned rate, over the class's requests.\n"
    );
    if let Some(words) = super::classes::classes_paragraph(r) {
        let _ = writeln!(s, "{words}\n");
    }
}
