//! Share-link benchmark: encode and decode of typical plans, and the worst
//! hostile inputs the decoder has to turn away (largest accepted text, a zip
//! bomb stopped at the output limit).
//!
//! `cargo bench -p goodput-core --bench share` prints the median time per call.

use std::hint::black_box;
use std::time::Instant;

use goodput_core::plan::SweepRow;
use goodput_core::share::{self, MAX_JSON_BYTES, MAX_LINK_BYTES};
use goodput_core::Plan;

/// Median wall time per call of `f` [µs], over 15 rounds of `calls` calls.
fn median_us(calls: u32, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..15)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..calls {
                f();
            }
            start.elapsed().as_secs_f64() * 1e6 / f64::from(calls)
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// Base64url of `bytes`, for building hostile payloads.
fn base64url(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn main() {
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
    for (what, plan) in [("default plan", &default), ("6x6 grid plan", &grid)] {
        let link = share::share_url("http://127.0.0.1:8080/", plan, false);
        let enc = median_us(200, || {
            black_box(share::encode(black_box(plan)));
        });
        let dec = median_us(200, || {
            let _ = black_box(share::decode(black_box(&link)));
        });
        println!(
            "{what:<14} {:>4} chars: encode {enc:>7.1} µs, decode {dec:>7.1} µs",
            link.len()
        );
    }

    // The largest text accepted, all of it base64url: decoded, then refused by inflate.
    let longest = format!("#p=1z{}", "A".repeat(MAX_LINK_BYTES - 5));
    let t = median_us(20, || {
        let _ = black_box(share::decode(black_box(&longest)));
    });
    println!(
        "hostile: {} bytes of base64url:        {t:>9.1} µs",
        longest.len()
    );

    // A zip bomb: 16 MiB of one byte packs into about 16 KB; inflating stops at the limit.
    let bomb_bytes = vec![b' '; 16 * MAX_JSON_BYTES];
    let packed = miniz_oxide::deflate::compress_to_vec(&bomb_bytes, 10);
    let bomb = format!("#p=1z{}", base64url(&packed));
    let t = median_us(5, || {
        let _ = black_box(share::decode(black_box(&bomb)));
    });
    println!(
        "hostile: zip bomb, {} chars -> 16 MiB:  {t:>9.1} µs (stops at {} KiB)",
        bomb.len(),
        MAX_JSON_BYTES / 1024
    );

    // Nesting far past the limit, right under the size limit.
    let deep = "[".repeat(40 * 1024);
    let deep = format!("#p=1j{}", base64url(deep.as_bytes()));
    let t = median_us(20, || {
        let _ = black_box(share::decode(black_box(&deep)));
    });
    println!("hostile: 40 KiB of '[':                  {t:>9.1} µs");
    for (what, link) in [("longest", &longest), ("bomb", &bomb), ("deep", &deep)] {
        if let Err(e) = share::decode(link) {
            println!("  {what}: {e}");
        }
    }
}
