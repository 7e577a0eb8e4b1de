//! Percentiles (numpy's default linear interpolation), summaries and confidence
//! intervals, from `goodput_engine::stats`.

pub use goodput_engine::stats::*;

#[cfg(test)]
mod tests {
    use super::*;

    /// The bits in `tests/golden.json`, which `tests/wasm.rs` asserts in the browser.
    #[test]
    fn t_quantile_bits() {
        let golden: serde_json::Value =
            serde_json::from_str(include_str!("../tests/golden.json")).expect("golden JSON");
        let values = golden["t_975_bits"]["values"].as_array().expect("values");
        assert!(values.len() >= 9);
        for v in values {
            let df = v[0].as_u64().expect("df") as u32;
            let bits = u64::from_str_radix(v[1].as_str().expect("hex"), 16).expect("hex");
            assert_eq!(t_975(df).to_bits(), bits, "df {df}: {}", t_975(df));
        }
    }
}
