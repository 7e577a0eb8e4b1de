//! Share links: a whole [`Plan`] in the fragment of a URL, and back.
//!
//! ```text
//!   https://host/path/#p=1d<base64url>&embed&view=finance
//!                      │ ││ └─ body: the whole plan as compact JSON, in the shortest mode
//!                      │ │└─── mode: `j` raw JSON, `z` deflate, `d` deflate with a preset dictionary
//!                      │ └──── version tag: decimal digits (3 today; 1 and 2 still read)
//!                      └────── fragment items, `&`-separated; unknown items are ignored
//! ```
//!
//! The plan travels after `#`, so no server ever receives it. The whole plan is
//! written, never a diff against [`Plan::default`]: defaults may change between
//! releases, and an old link must keep its meaning.
//!
//! # Links are untrusted input
//!
//! [`decode`] never panics and does bounded work on any input:
//!
//! | stage | bound | error |
//! | --- | --- | --- |
//! | the text given | [`MAX_LINK_BYTES`] | [`DecodeError::TooLong`] |
//! | inflated JSON | [`MAX_JSON_BYTES`], enforced while inflating | [`DecodeError::TooLargeDecompressed`] |
//! | JSON nesting | [`MAX_JSON_DEPTH`] | [`DecodeError::TooDeep`] |
//! | the plan | [`Plan::validate`] (requests, replications, grid and trace sizes…) | [`DecodeError::Invalid`] |
//!
//! # Versions
//!
//! [`decode`] dispatches on the version tag and reads every version ever
//! released. A change to [`Plan`] that `#[serde(default)]` absorbs without
//! changing what an old link means (a new field whose default reproduces the
//! old behaviour) keeps version 1. Any other change adds `share/v2.rs`, makes
//! [`encode`] write version 2, and turns v1's decoder into "parse to a
//! `serde_json::Value`, apply `migrate_v1_to_v2`, deserialise"; the v1 corpus
//! test then proves old links still open with the same meaning.

mod base64url;
#[macro_use]
mod v1;
mod v2;
#[macro_use]
mod v3;
mod v4;

use crate::plan::{Plan, PlanError};

/// Longest link text [`decode`] looks at \[bytes\]; longer input is refused unread.
pub const MAX_LINK_BYTES: usize = 64 * 1024;

/// Largest JSON document a link may inflate to \[bytes\].
pub const MAX_JSON_BYTES: usize = 1024 * 1024;

/// Deepest JSON nesting (objects and arrays) a link may carry; a plan needs 4.
pub const MAX_JSON_DEPTH: usize = 16;

/// Longest `view=` value kept \[characters\]; longer or odd values are dropped.
pub const MAX_VIEW_CHARS: usize = 32;

/// The fragment key that carries the plan (`#p=...`).
pub const PLAN_KEY: &str = "p";

/// The version [`encode`] writes.
pub const CURRENT_VERSION: u32 = v4::VERSION;

/// What a share link carries: the plan and how to show it.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedPlan {
    /// The plan, validated.
    pub plan: Plan,
    /// The `&embed` flag: show the compact read-only card.
    pub embed: bool,
    /// The `&view=NAME` item, when present and made only of `[A-Za-z0-9_-]`
    /// (at most [`MAX_VIEW_CHARS`]); the app decides which names it knows.
    pub view: Option<String>,
    /// The payload's format version.
    pub version: u32,
}

/// Why a share link could not be opened. Every variant is safe to show to the
/// person who opened the link; [`std::fmt::Display`] gives one line.
#[derive(Debug, Clone, PartialEq)]
pub enum DecodeError {
    /// Nothing was given. Paste the whole link, including the part after `#`.
    Empty,
    /// The text is longer than [`MAX_LINK_BYTES`] (`len` bytes). Real links are a
    /// few hundred characters; the link was probably pasted twice or is not a plan link.
    TooLong {
        /// Length of the text given \[bytes\].
        len: usize,
    },
    /// There is no `p=` item after `#`. The link was cut before its `#`, or it
    /// points at the planner without a plan; copy the link again.
    NoPlan,
    /// The plan data does not start with a version number and a mode letter
    /// (`1d…`, `1z…`, `1j…`). The link was mangled; copy it again.
    BadHeader,
    /// The link was made by a format version this release does not know (`0` is
    /// never valid). Open it with a newer goodput.
    BadVersion(u32),
    /// The plan data holds a character outside base64url (or was cut at an
    /// impossible length) at byte `pos` of the plan data. Chat tools sometimes
    /// insert line breaks or punctuation; copy the link again.
    BadBase64 {
        /// Byte offset inside the plan data (after `p=` and the header).
        pos: usize,
    },
    /// The compressed plan is corrupt or cut short. Copy the whole link again.
    Decompress,
    /// The plan inflates to more than [`MAX_JSON_BYTES`]; no real plan is that
    /// large. The link is hostile or not a goodput link.
    TooLargeDecompressed,
    /// The JSON nests deeper than [`MAX_JSON_DEPTH`]; no real plan does. The
    /// link is hostile or not a goodput link.
    TooDeep,
    /// The data is not a plan in JSON (the parser's message, shortened). The
    /// link was edited by hand or made by an incompatible tool.
    BadJson(String),
    /// The plan parsed but a field is out of range; fix that field (in the
    /// planner or with the CLI's flags) and share again.
    Invalid(PlanError),
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::Empty => write!(f, "the link is empty"),
            DecodeError::TooLong { len } => write!(
                f,
                "the link is {len} bytes long; at most {MAX_LINK_BYTES} are accepted"
            ),
            DecodeError::NoPlan => write!(
                f,
                "the link carries no plan: expected '#{PLAN_KEY}=...' after the address"
            ),
            DecodeError::BadHeader => write!(
                f,
                "the plan data does not start with a version and a mode (like '1d'); the link is mangled"
            ),
            DecodeError::BadVersion(v) => write!(
                f,
                "the link uses format version {v}, which this goodput does not know (it reads 1..={CURRENT_VERSION}); open it with a newer release"
            ),
            DecodeError::BadBase64 { pos } => write!(
                f,
                "the plan data has an invalid character or length at position {pos}; copy the whole link again"
            ),
            DecodeError::Decompress => write!(
                f,
                "the compressed plan is corrupt or cut short; copy the whole link again"
            ),
            DecodeError::TooLargeDecompressed => write!(
                f,
                "the plan expands to more than {MAX_JSON_BYTES} bytes; this is not a goodput plan"
            ),
            DecodeError::TooDeep => write!(
                f,
                "the plan nests deeper than {MAX_JSON_DEPTH} levels; this is not a goodput plan"
            ),
            DecodeError::BadJson(msg) => write!(f, "the link's data is not a valid plan: {msg}"),
            // A validation message may quote text from the link (a preset name): keep one line.
            DecodeError::Invalid(e) => write!(
                f,
                "the plan in the link is out of range: {}",
                short_message(e)
            ),
        }
    }
}

impl std::error::Error for DecodeError {}

impl From<PlanError> for DecodeError {
    fn from(e: PlanError) -> Self {
        DecodeError::Invalid(e)
    }
}

/// The link payload for `plan`: version tag, mode letter, base64url body of
/// [`link_form`]`(plan)`.
///
/// Encode a validated plan: a non-finite number is written as JSON `null`,
/// which does not decode back to the same plan.
pub fn encode(plan: &Plan) -> String {
    format!("{CURRENT_VERSION}{}", v4::encode_body(&link_form(plan)))
}

/// Significant digits a link keeps of a measured figure (a calibration's measured
/// latencies and achieved rates, and its fit's errors): more than any view shows of them.
pub const LINK_MEASURED_DIGITS: i32 = 4;

/// Significant digits a link keeps of a fitted constant's spread (shown as `± 0.021`, or
/// to a tenth of its unit).
pub const LINK_SPREAD_DIGITS: i32 = 3;

/// The plan as a link carries it: everything that the numbers are computed from,
/// exactly, and of what was computed or measured before, what the shared views show.
///
/// - **The GPU comparison** keeps the winner's row and the plan's own (the finance
///   view's verdict names both, and the plan's own is marked chosen); the other rows
///   are counted in
///   [`ShootoutRecord::omitted`](crate::plan::comparison::ShootoutRecord::omitted).
///   A comparison fresh for `plan` stays fresh for the link's plan.
/// - **A calibration** keeps its constants exactly; its measured points' figures and
///   its errors keep [`LINK_MEASURED_DIGITS`] significant digits, the constants'
///   spreads [`LINK_SPREAD_DIGITS`]. The loads the points were measured at stay
///   exact: the calibration chart simulates them.
///
/// A plan without either is its own link form; the link form of a link form is itself.
pub fn link_form(plan: &Plan) -> Plan {
    let mut out = plan.clone();
    if let Some(c) = out.calibration.as_mut() {
        round_calibration(c);
    }
    if let Some(rec) = out.shootout.as_mut() {
        let own = rec.chosen_in(plan);
        let r = &mut rec.result;
        let keep: Vec<usize> = (0..r.rows.len())
            .filter(|&i| [r.best, own].contains(&Some(i)))
            .collect();
        let at = |i: Option<usize>| i.and_then(|i| keep.iter().position(|&k| k == i));
        r.best = at(r.best);
        r.chosen = at(own);
        for (i, row) in r.rows.iter_mut().enumerate() {
            row.chosen = Some(i) == own;
        }
        let left = r.rows.len() - keep.len();
        r.rows = keep.iter().map(|&i| r.rows[i].clone()).collect();
        rec.omitted = rec
            .omitted
            .saturating_add(u32::try_from(left).unwrap_or(u32::MAX));
    }
    // The fingerprint hashes the calibration's figures too, which the link rounds.
    if let Some(rec) = plan.shootout.as_ref().filter(|r| r.is_fresh(plan)) {
        let fingerprint = crate::plan::comparison::fingerprint_for(&out, &rec.spec);
        if let Some(r) = out.shootout.as_mut() {
            r.fingerprint = fingerprint;
        }
    }
    out
}

/// `x` to `digits` significant digits (0 and non-finite numbers as they are).
fn round_to(x: f64, digits: i32) -> f64 {
    // Scientific notation rounds to the digits asked for at any magnitude, and reads back
    // as the shortest number with them (0.1, not 0.1000000001).
    let y: f64 = format!("{x:.*e}", (digits - 1).max(0) as usize)
        .parse()
        .unwrap_or(x);
    if y.is_finite() {
        y
    } else {
        x
    }
}

/// A calibration as a link carries it ([`link_form`]).
fn round_calibration(c: &mut crate::plan::Calibration) {
    let spread = |f: &mut crate::plan::Fitted| f.sd = round_to(f.sd, LINK_SPREAD_DIGITS);
    spread(&mut c.bandwidth_efficiency);
    spread(&mut c.compute_efficiency);
    spread(&mut c.step_overhead_s);
    for f in [
        &mut c.seq_overhead_s,
        &mut c.frontend_s,
        &mut c.prefill_overhead_s,
        &mut c.kv_read_efficiency,
    ]
    .into_iter()
    .flatten()
    {
        spread(f);
    }
    let m = |x: &mut f64| *x = round_to(*x, LINK_MEASURED_DIGITS);
    let e = &mut c.error;
    for errors in [
        Some(&mut e.in_sample),
        e.held_out.as_mut(),
        e.extrapolation.as_mut(),
        Some(&mut e.uncalibrated),
    ]
    .into_iter()
    .flatten()
    {
        m(&mut errors.overall);
        for x in [&mut errors.ttft, &mut errors.tpot, &mut errors.e2e]
            .into_iter()
            .flatten()
        {
            m(x);
        }
    }
    for p in &mut c.points {
        m(&mut p.achieved_rps);
        for x in [
            &mut p.ttft_mean_s,
            &mut p.ttft_p50_s,
            &mut p.ttft_p99_s,
            &mut p.tpot_mean_s,
            &mut p.tpot_p50_s,
            &mut p.tpot_p99_s,
            &mut p.e2e_mean_s,
            &mut p.e2e_p50_s,
            &mut p.e2e_p99_s,
        ]
        .into_iter()
        .flatten()
        {
            m(x);
        }
    }
}

/// Why a plan cannot travel in a link: no page could open the link, because its payload
/// is longer than [`MAX_LINK_BYTES`] or its JSON larger than [`MAX_JSON_BYTES`].
/// A long replayed trace is the usual cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLargeForLink {
    /// The payload's length \[bytes\].
    pub payload_bytes: usize,
    /// The plan's JSON \[bytes\].
    pub json_bytes: usize,
    /// Rows of its traces: the plan's and its classes'.
    pub trace_rows: usize,
}

impl std::fmt::Display for TooLargeForLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::format::thousands;
        let n = |x: usize| thousands(i64::try_from(x).unwrap_or(i64::MAX));
        write!(
            f,
            "the plan is too large for a link: the link would hold {} bytes (at most {}) and its JSON {} bytes (at most {})",
            n(self.payload_bytes),
            n(MAX_LINK_BYTES),
            n(self.json_bytes),
            n(MAX_JSON_BYTES)
        )?;
        if self.trace_rows > 0 {
            write!(
                f,
                "; its traces have {} rows: share a shorter trace, or the plan as a JSON file",
                n(self.trace_rows)
            )
        } else {
            write!(f, "; share the plan as a JSON file")
        }
    }
}

impl std::error::Error for TooLargeForLink {}

/// [`encode`], refused when the link could not be opened again ([`TooLargeForLink`]).
pub fn encode_checked(plan: &Plan) -> Result<String, TooLargeForLink> {
    let json_bytes = serde_json::to_vec(plan).map_or(usize::MAX, |v| v.len());
    let payload = encode(plan);
    if payload.len() > MAX_LINK_BYTES || json_bytes > MAX_JSON_BYTES {
        return Err(TooLargeForLink {
            payload_bytes: payload.len(),
            json_bytes,
            trace_rows: plan.traffic.trace.len()
                + plan
                    .classes
                    .iter()
                    .filter_map(|c| c.replay.as_ref())
                    .map(|r| r.rows.len())
                    .sum::<usize>(),
        });
    }
    Ok(payload)
}

/// A full share link: `base` (any fragment it had is dropped), then `#p=` and
/// the payload, then `&embed` when asked. An empty `base` gives the fragment
/// alone (`#p=...`), ready for `location.hash`.
pub fn share_url(base: &str, plan: &Plan, embed: bool) -> String {
    url_of(base, &encode(plan), embed)
}

/// [`share_url`] of a payload made already ([`encode`], [`encode_checked`]).
pub fn url_of(base: &str, payload: &str, embed: bool) -> String {
    let base = base.split('#').next().unwrap_or_default();
    let mut url = format!("{base}#{PLAN_KEY}={payload}");
    if embed {
        url.push_str("&embed");
    }
    url
}

/// Opens a share link: a full URL, a fragment (with or without `#`), or a bare
/// payload (`1d...`). The plan is validated; see the module docs for the bounds.
pub fn decode(fragment_or_url: &str) -> Result<SharedPlan, DecodeError> {
    let shared = decode_unvalidated(fragment_or_url)?;
    shared.plan.validate()?;
    Ok(shared)
}

/// Everything [`decode`] does except [`Plan::validate`].
fn decode_unvalidated(input: &str) -> Result<SharedPlan, DecodeError> {
    if input.len() > MAX_LINK_BYTES {
        return Err(DecodeError::TooLong { len: input.len() });
    }
    let input = input.trim();
    if input.is_empty() {
        return Err(DecodeError::Empty);
    }
    let fragment = fragment_of(input);
    let mut payload = None;
    let mut embed = false;
    let mut view = None;
    for item in fragment.split('&') {
        let (key, value) = match item.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (item, None),
        };
        match (key, value) {
            (PLAN_KEY, Some(v)) if payload.is_none() => payload = Some(v),
            ("embed", None | Some("1" | "true")) => embed = true,
            ("embed", Some(_)) => embed = false,
            ("view", Some(v)) if is_view_name(v) => view = Some(v.to_string()),
            _ => {}
        }
    }
    let payload = payload.ok_or(DecodeError::NoPlan)?;
    let (version, body) = split_version(payload)?;
    let plan = match version {
        v1::VERSION => v1::decode_body(body)?,
        v2::VERSION => v2::decode_body(body)?,
        v3::VERSION => v3::decode_body(body)?,
        v4::VERSION => v4::decode_body(body)?,
        other => return Err(DecodeError::BadVersion(other)),
    };
    Ok(SharedPlan {
        plan,
        embed,
        view,
        version,
    })
}

/// The part after `#`; for text without `#`, the text itself unless it looks
/// like an address (which then carries no fragment, so no plan). A bare payload
/// (`1d...`) becomes a `p=` item.
fn fragment_of(input: &str) -> std::borrow::Cow<'_, str> {
    if let Some((_, frag)) = input.split_once('#') {
        return frag.into();
    }
    if input.contains("://") {
        return "".into();
    }
    if input.starts_with(|c: char| c.is_ascii_digit()) && !input.contains(['=', '&']) {
        return format!("{PLAN_KEY}={input}").into();
    }
    input.into()
}

/// A `view=` value worth keeping: short and made of `[A-Za-z0-9_-]` only.
fn is_view_name(v: &str) -> bool {
    !v.is_empty()
        && v.len() <= MAX_VIEW_CHARS
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Splits `12z...` into the version number and the body after its digits.
fn split_version(payload: &str) -> Result<(u32, &str), DecodeError> {
    let digits = payload.bytes().take_while(u8::is_ascii_digit).count();
    // Nine digits always fit a u32; more is no version this format will reach.
    if digits == 0 || digits > 9 {
        return Err(DecodeError::BadHeader);
    }
    let version = payload[..digits]
        .parse::<u32>()
        .map_err(|_| DecodeError::BadHeader)?;
    Ok((version, &payload[digits..]))
}

/// Refuses JSON that nests deeper than [`MAX_JSON_DEPTH`], before any parser
/// sees it. Brackets inside strings do not count.
fn check_json_depth(json: &[u8]) -> Result<(), DecodeError> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in json {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_JSON_DEPTH {
                    return Err(DecodeError::TooDeep);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// Longest parser or validation message shown \[characters\].
const MAX_MESSAGE_CHARS: usize = 320;

/// A parser or validation message as one short line: control characters and every kind of
/// whitespace (U+2028 included) become plain spaces, and the text is cut at
/// [`MAX_MESSAGE_CHARS`].
fn short_message(e: &dyn std::fmt::Display) -> String {
    let full = e.to_string();
    let mut out: String = full
        .chars()
        .take(MAX_MESSAGE_CHARS)
        .map(|c| {
            if c.is_control() || c.is_whitespace() {
                ' '
            } else {
                c
            }
        })
        .collect();
    if full.chars().count() > MAX_MESSAGE_CHARS {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_keeps_every_finite_number_finite_and_is_idempotent() {
        for x in [
            1e-310,
            -1e-310,
            f64::MIN_POSITIVE,
            f64::MAX,
            -f64::MAX,
            0.0,
            0.1,
            123_456.789,
            -0.000_123_456,
        ] {
            for d in [3, 4] {
                let y = round_to(x, d);
                assert!(y.is_finite(), "{x} to {d} digits gave {y}");
                assert_eq!(round_to(y, d), y, "{x} to {d} digits");
            }
        }
        assert_eq!(round_to(0.123_456, 4), 0.1235);
        assert_eq!(round_to(98_765.4, 3), 98_800.0);
        // A plan with a tiny spread still makes a link that opens.
        let mut c = crate::plan::Calibration::default();
        c.bandwidth_efficiency.sd = 1e-310;
        let p = Plan {
            calibration: Some(c),
            ..Plan::default()
        };
        p.validate().expect("valid");
        decode(&share_url("https://x.example/", &p, false)).expect("opens");
    }

    /// A plan with `rows` trace rows of varied numbers (so they do not compress away).
    fn with_trace(rows: usize) -> Plan {
        let mut p = Plan::default();
        p.traffic.trace = (0..rows)
            .map(|i| crate::plan::TraceRow {
                arrival_s: i as f64 * 0.0517 + (i % 7) as f64 * 1e-4,
                prompt_tokens: 16 + (i as u32 * 7919) % 7000,
                output_tokens: 1 + (i as u32 * 104_729) % 1000,
                ..Default::default()
            })
            .collect();
        p
    }

    #[test]
    fn a_replayed_traces_block_ids_travel_in_the_link_and_rows_without_them_are_unchanged() {
        let mut p = with_trace(50);
        let json = serde_json::to_string(&p.traffic.trace[0]).expect("serialises");
        assert!(!json.contains("blocks"), "{json}");
        for (i, r) in p.traffic.trace.iter_mut().enumerate() {
            r.blocks = (0..r.prompt_tokens.div_ceil(512))
                .map(|b| if b == 0 { 0 } else { (i * 20) as u32 + b })
                .collect();
        }
        p.traffic.arrival = crate::plan::Arrival::Trace;
        p.traffic.prompt.dist = crate::plan::LengthDist::Trace;
        let payload = encode_checked(&p).expect("a 50-row trace with blocks fits");
        let back = decode(&format!("#p={payload}")).expect("opens").plan;
        assert_eq!(back, p);
        assert!(back.traffic.trace[3].blocks.len() > 1);
    }

    #[test]
    fn a_plan_goes_into_a_link_only_when_the_link_opens_again() {
        // A short trace travels, and the link opens to the same plan.
        let small = with_trace(200);
        let payload = encode_checked(&small).expect("a 200-row trace fits");
        assert_eq!(payload, encode(&small));
        assert_eq!(decode(&format!("#p={payload}")).expect("opens").plan, small);
        // A long one would make a link no page opens: refused, with the reason.
        let big = with_trace(20_000);
        assert!(decode(&share_url("", &big, false)).is_err());
        let e = encode_checked(&big).expect_err("too large");
        assert!(e.payload_bytes > MAX_LINK_BYTES, "{e:?}");
        assert_eq!(e.trace_rows, 20_000);
        let text = e.to_string();
        assert!(
            text.contains("20,000 rows") && text.contains("65,536"),
            "{text}"
        );
        // A huge name: the JSON is over its limit even if it compresses well.
        let named = Plan {
            name: "x".repeat(MAX_JSON_BYTES),
            ..Plan::default()
        };
        let e = encode_checked(&named).expect_err("too large");
        assert!(e.json_bytes > MAX_JSON_BYTES, "{e:?}");
        assert!(
            e.to_string().ends_with("share the plan as a JSON file"),
            "{e}"
        );
    }

    /// Values for [`scramble_floats`], generated by proptest.
    struct Draws {
        floats: std::vec::IntoIter<f64>,
        ints: std::vec::IntoIter<u64>,
    }

    impl Draws {
        fn next(&mut self) -> u64 {
            self.ints.next().expect("enough integers")
        }

        fn finite_f64(&mut self) -> f64 {
            self.floats.next().expect("enough floats")
        }
    }

    /// A finite f64 drawn from all bit patterns: subnormals, -0.0, extremes.
    #[cfg(not(target_arch = "wasm32"))]
    fn finite_f64() -> impl proptest::strategy::Strategy<Value = f64> {
        use proptest::prelude::*;
        any::<u64>()
            .prop_map(f64::from_bits)
            .prop_filter("finite", |x| x.is_finite())
    }

    /// Every f64 field of the plan set to an arbitrary finite bit pattern.
    fn scramble_floats(plan: &mut Plan, rng: &mut Draws) {
        use crate::plan::{Arrival, LengthDist, SweepRow, TraceRow};
        let m = &mut plan.model;
        m.params = rng.finite_f64();
        m.active_params = rng.finite_f64();
        m.weight_bytes_override = Some(rng.finite_f64());
        m.kv_bytes_per_token_override = Some(rng.finite_f64());
        let h = &mut plan.hardware;
        h.mem_bandwidth_bytes_per_s = rng.finite_f64();
        h.compute_flops_per_s = rng.finite_f64();
        h.memory_bytes = rng.finite_f64();
        h.mem_utilization = rng.finite_f64();
        h.step_overhead_s = rng.finite_f64();
        h.tp_comm_overhead_s = rng.finite_f64();
        h.gpu_hour_usd = rng.finite_f64();
        let t = &mut plan.traffic;
        t.peak_rate_rps = rng.finite_f64();
        t.arrival = Arrival::Gamma {
            cv: rng.finite_f64(),
        };
        t.prompt.dist = LengthDist::LogNormal {
            median: rng.finite_f64(),
            sigma: rng.finite_f64(),
        };
        t.prefix_hit_rate = rng.finite_f64();
        t.trace = (0..3)
            .map(|_| TraceRow {
                arrival_s: rng.finite_f64(),
                prompt_tokens: rng.next() as u32,
                output_tokens: rng.next() as u32,
                ..TraceRow::default()
            })
            .collect();
        plan.slo.ttft_s = Some(rng.finite_f64());
        plan.slo.tpot_s = Some(rng.finite_f64());
        plan.slo.e2e_s = Some(rng.finite_f64());
        plan.slo.attainment_target = rng.finite_f64();
        plan.engine.spec_acceptance = rng.finite_f64();
        plan.planning.utilization = rng.finite_f64();
        plan.planning.hours_per_month = rng.finite_f64();
        plan.planning.measured_sweep = (0..2)
            .map(|_| SweepRow {
                rate_rps: rng.finite_f64(),
                attainment: rng.finite_f64(),
            })
            .collect();
        plan.run.seed = rng.next();
    }

    /// Bit patterns of every float, so that -0.0 vs 0.0 and NaN payloads would show.
    fn float_bits(plan: &Plan) -> Vec<u64> {
        let json = serde_json::to_value(plan).expect("plan to value");
        let mut out = Vec::new();
        fn walk(v: &serde_json::Value, out: &mut Vec<u64>) {
            match v {
                serde_json::Value::Number(n) => {
                    if let Some(f) = n.as_f64().filter(|_| n.is_f64()) {
                        out.push(f.to_bits());
                    }
                }
                serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
                serde_json::Value::Object(o) => o.values().for_each(|x| walk(x, out)),
                _ => {}
            }
        }
        walk(&json, &mut out);
        out
    }

    #[cfg(not(target_arch = "wasm32"))]
    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

        #[test]
        fn floats_round_trip_bit_for_bit(
            floats in proptest::collection::vec(finite_f64(), 32),
            ints in proptest::collection::vec(proptest::prelude::any::<u64>(), 7),
        ) {
            let mut plan = Plan::default();
            let mut draws = Draws {
                floats: floats.into_iter(),
                ints: ints.into_iter(),
            };
            scramble_floats(&mut plan, &mut draws);
            let back = decode_unvalidated(&encode(&plan)).expect("own output decodes");
            proptest::prop_assert_eq!(&back.plan, &plan);
            proptest::prop_assert_eq!(float_bits(&back.plan), float_bits(&plan));
        }
    }

    #[test]
    fn negative_zero_and_extremes_survive() {
        let mut plan = Plan::default();
        plan.model.params = -0.0;
        plan.hardware.gpu_hour_usd = f64::MIN_POSITIVE / 8.0;
        plan.traffic.peak_rate_rps = f64::MAX;
        plan.slo.ttft_s = Some(f64::EPSILON);
        let back = decode_unvalidated(&encode(&plan)).expect("decodes").plan;
        assert!(back.model.params == 0.0 && back.model.params.is_sign_negative());
        assert_eq!(
            back.hardware.gpu_hour_usd.to_bits(),
            plan.hardware.gpu_hour_usd.to_bits()
        );
        assert_eq!(back.traffic.peak_rate_rps, f64::MAX);
        assert_eq!(back.slo.ttft_s, Some(f64::EPSILON));
    }

    #[test]
    fn fragment_items_are_read_in_any_order() {
        let payload = encode(&Plan::default());
        let s = decode_unvalidated(&format!("x://h/#view=finance&zz=1&embed&p={payload}"))
            .expect("decodes");
        assert!(s.embed);
        assert_eq!(s.view.as_deref(), Some("finance"));
        assert_eq!(s.version, CURRENT_VERSION);
        let s = decode_unvalidated(&format!("p={payload}&embed=0&view=<b>")).expect("decodes");
        assert!(!s.embed);
        assert_eq!(s.view, None, "odd view names are dropped, never echoed");
        let s = decode_unvalidated(&payload).expect("bare payload");
        assert_eq!(s.plan, Plan::default());
    }

    #[test]
    fn empty_base_gives_the_fragment_alone() {
        let plan = Plan::default();
        assert_eq!(share_url("", &plan, false), format!("#p={}", encode(&plan)));
        assert_eq!(
            decode_unvalidated(&share_url("", &plan, true)).expect("decodes"),
            SharedPlan {
                plan,
                embed: true,
                view: None,
                version: CURRENT_VERSION,
            }
        );
    }

    #[test]
    fn header_errors() {
        assert_eq!(
            decode_unvalidated("#p=").unwrap_err(),
            DecodeError::BadHeader
        );
        assert_eq!(
            decode_unvalidated("#p=z").unwrap_err(),
            DecodeError::BadHeader
        );
        assert_eq!(
            decode_unvalidated("#p=1").unwrap_err(),
            DecodeError::BadHeader
        );
        assert_eq!(
            decode_unvalidated("#p=1q").unwrap_err(),
            DecodeError::BadHeader
        );
        assert_eq!(
            decode_unvalidated("#p=1é").unwrap_err(),
            DecodeError::BadHeader
        );
        assert_eq!(
            decode_unvalidated("#p=1234567890z").unwrap_err(),
            DecodeError::BadHeader
        );
        assert_eq!(
            decode_unvalidated("#p=0z").unwrap_err(),
            DecodeError::BadVersion(0)
        );
        assert_eq!(
            decode_unvalidated("#p=999999999z").unwrap_err(),
            DecodeError::BadVersion(999_999_999)
        );
        assert_eq!(
            decode_unvalidated("http://h/p").unwrap_err(),
            DecodeError::NoPlan
        );
        assert_eq!(
            decode_unvalidated("#embed").unwrap_err(),
            DecodeError::NoPlan
        );
        assert_eq!(decode_unvalidated(" \n").unwrap_err(), DecodeError::Empty);
    }

    #[test]
    fn depth_scanner_ignores_brackets_in_strings() {
        let deep = "[".repeat(MAX_JSON_DEPTH + 1);
        assert_eq!(check_json_depth(deep.as_bytes()), Err(DecodeError::TooDeep));
        let ok = "[".repeat(MAX_JSON_DEPTH);
        assert_eq!(check_json_depth(ok.as_bytes()), Ok(()));
        let quoted = format!(
            "{{\"name\":\"{}\\\"{}\"}}",
            "[".repeat(100),
            "{".repeat(100)
        );
        assert_eq!(check_json_depth(quoted.as_bytes()), Ok(()));
    }

    #[test]
    fn parser_messages_are_one_short_line() {
        let msg = short_message(&"a\nb\tc\u{2028}".repeat(100));
        assert!(!msg.contains(['\n', '\t', '\u{2028}']));
        assert_eq!(msg.chars().count(), MAX_MESSAGE_CHARS + 1);
    }
}
