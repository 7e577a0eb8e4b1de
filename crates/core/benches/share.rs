//! Share-link benchmark: encode and decode of typical plans, and the worst
//! hostile inputs the decoder has to turn away (largest accepted text, a zip
//! bomb stopped at the output limit, nesting far past the limit).
//!
//! `cargo bench -p goodput-core --bench share` times each call with criterion, and
//! prints the link lengths and the errors the hostile inputs get.

use std::hint::black_box;

use criterion::Criterion;
use goodput_core::plan::SweepRow;
use goodput_core::share::{self, MAX_JSON_BYTES, MAX_LINK_BYTES};
use goodput_core::Plan;

/// Base64url of `bytes`, for building hostile payloads.
fn base64url(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn main() {
    let mut c = Criterion::default().configure_from_args();

    let default = Plan::default();
    let mut grid = Plan::default();
    grid.run.sweep_max_num_seqs = vec![24, 48, 96, 160, 320, 448];
    grid.run.sweep_batched_tokens = vec![384, 768, 1536, 3072, 6144, 0];
    grid.planning.measured_sweep = (4..10)
        .map(|r| SweepRow {
            rate_rps: f64::from(r),
            attainment: 1.0 - f64::from(r) / 20.0,
        })
        .collect();
    let mut g = c.benchmark_group("share link");
    for (what, plan) in [("default plan", &default), ("6x6 grid plan", &grid)] {
        let link = share::share_url("http://127.0.0.1:8080/", plan, false);
        println!("{what}: {} chars", link.len());
        g.bench_function(format!("encode {what}"), |b| {
            b.iter(|| share::encode(black_box(plan)))
        });
        g.bench_function(format!("decode {what}"), |b| {
            b.iter(|| share::decode(black_box(&link)))
        });
    }
    g.finish();

    // The largest text accepted, all of it base64url: decoded, then refused by inflate.
    let longest = format!("#p=1z{}", "A".repeat(MAX_LINK_BYTES - 5));
    // A zip bomb: 16 MiB of one byte packs into about 16 KB; inflating stops at the limit.
    let bomb_bytes = vec![b' '; 16 * MAX_JSON_BYTES];
    let packed = miniz_oxide::deflate::compress_to_vec(&bomb_bytes, 10);
    let bomb = format!("#p=1z{}", base64url(&packed));
    // Nesting far past the limit, right under the size limit.
    let deep = format!("#p=1j{}", base64url("[".repeat(40 * 1024).as_bytes()));
    let hostile = [
        (format!("{} bytes of base64url", longest.len()), &longest),
        (
            format!(
                "zip bomb, {} chars to 16 MiB (stops at {} KiB)",
                bomb.len(),
                MAX_JSON_BYTES / 1024
            ),
            &bomb,
        ),
        ("40 KiB of '['".to_string(), &deep),
    ];
    let mut g = c.benchmark_group("share link, hostile");
    for (what, link) in &hostile {
        if let Err(e) = share::decode(link) {
            println!("{what}: {e}");
        }
        g.bench_function(what.as_str(), |b| b.iter(|| share::decode(black_box(link))));
    }
    g.finish();
    c.final_summary();
}
