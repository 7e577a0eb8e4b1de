//! The plan in the address bar: what a fragment asks the page to open, the fragment
//! that keeps the working plan across reloads, and the links and embed snippet a
//! user copies.
//!
//! ```text
//!   #p=4d…                     shared link ─▶ finance view (the default of a link)
//!   #p=4d…&view=planner        working plan ─▶ planner (written while the user edits)
//!   #p=4d…&embed               iframe card  ─▶ embed view (never rewritten)
//!   (no p= item)               own plan     ─▶ planner with the autosaved plan
//!   #p=<broken>                message      ─▶ planner with the defaults
//! ```
//!
//! The pure functions here decide; the few browser helpers at the end only read and
//! write `location` and `history`. Nothing from a link is ever turned into HTML: the
//! page shows it through Leptos as text or attributes, and [`embed_snippet`] escapes
//! what it puts inside its attribute.

use goodput_core::share::{self, PLAN_KEY};
use goodput_core::Plan;

use crate::route::View;
use crate::state::messages::plan_error_words;

/// The `view=` name written while the user edits in the planner, so a reload keeps it.
pub const PLANNER_VIEW: &str = "planner";

/// The `view=` name of the compare page.
pub const COMPARE_VIEW: &str = "compare";

/// Height of the embedded card's iframe in the snippet [CSS px]: the card's whole
/// height down to a 320 px wide column.
pub const EMBED_HEIGHT_PX: u32 = 500;

/// Least height of the embedded card's chart [CSS px]: the chart takes what the figures
/// leave of the frame, never less.
pub const EMBED_CHART_MIN_PX: f64 = 160.0;

/// The key under which the embedded card posts its height to the page that frames it
/// (`{"goodput-embed-height": 431}`), and under which the snippet's script reads it.
pub const EMBED_HEIGHT_MESSAGE: &str = "goodput-embed-height";

/// Heights the snippet's script accepts from the card [CSS px]; anything else is ignored.
pub const EMBED_HEIGHT_RANGE_PX: (u32, u32) = (200, 4000);

/// What the address's fragment asks the page to open.
#[derive(Debug, Clone, PartialEq)]
pub enum Opening {
    /// No plan in the address: the user's own (autosaved) plan, or the defaults.
    Own,
    /// A plan link, decoded and validated.
    Link {
        /// The plan the link carries.
        plan: Box<Plan>,
        /// The view it asks for (finance unless it says otherwise).
        view: View,
    },
    /// A link that could not be opened; the message says why, in one line.
    Broken(String),
}

/// Whether the fragment has a `p=` item at all (a link that tries to carry a plan).
fn has_plan_item(fragment: &str) -> bool {
    fragment
        .split('&')
        .any(|item| item == PLAN_KEY || item.starts_with(&format!("{PLAN_KEY}=")))
}

/// The view a decoded link asks for: `&embed` wins, then `view=planner` or
/// `view=compare`; anything else opens the finance view.
pub fn view_of(embed: bool, view: Option<&str>) -> View {
    if embed {
        return View::Embed;
    }
    match view {
        Some(PLANNER_VIEW) => View::Planner,
        Some(COMPARE_VIEW) => View::Compare,
        _ => View::Finance,
    }
}

/// Reads a fragment (`location.hash`, with or without its `#`). Never panics; the
/// decoder bounds its work on any input.
pub fn read_fragment(fragment: &str) -> Opening {
    let fragment = fragment.strip_prefix('#').unwrap_or(fragment);
    if fragment.len() <= share::MAX_LINK_BYTES && !has_plan_item(fragment) {
        return Opening::Own;
    }
    match share::decode(fragment) {
        Ok(shared) => Opening::Link {
            view: view_of(shared.embed, shared.view.as_deref()),
            plan: Box::new(shared.plan),
        },
        Err(e) => Opening::Broken(broken_words(&e)),
    }
}

/// Why a link does not open, in the planner's words: a value out of range as its input
/// would say it, and a plan the reader cannot parse without the parser's line and column.
fn broken_words(e: &share::DecodeError) -> String {
    match e {
        share::DecodeError::Invalid(e) => {
            format!("a value in it is out of range: {}", plan_error_words(e))
        }
        share::DecodeError::BadJson(_) => "its plan is not one this goodput can read (it was \
             edited by hand, or made by another tool); ask for the link again"
            .into(),
        other => other.to_string(),
    }
}

/// The fragment (with `#`) that shows `plan` in `view`; the planner and compare pages
/// carry their `view=` marker, the finance view is a link's default. A plan too large
/// for a link ([`share::encode_checked`]) is left out: a reload then opens the own
/// (autosaved) plan instead of a link that cannot be read back.
pub fn fragment_for(plan: &Plan, view: View) -> String {
    let Ok(payload) = share::encode_checked(plan) else {
        return match view {
            View::Planner => format!("#view={PLANNER_VIEW}"),
            View::Compare => format!("#view={COMPARE_VIEW}"),
            View::Finance | View::Embed => "#".into(),
        };
    };
    let mut out = share::url_of("", &payload, view == View::Embed);
    match view {
        View::Planner => out.push_str(&format!("&view={PLANNER_VIEW}")),
        View::Compare => out.push_str(&format!("&view={COMPARE_VIEW}")),
        View::Finance | View::Embed => {}
    }
    out
}

/// The address without its fragment.
pub fn base_of(href: &str) -> &str {
    href.split('#').next().unwrap_or_default()
}

/// The link to share: opens the finance view of `plan` (no planner marker).
pub fn share_link(base: &str, plan: &Plan) -> String {
    share::share_url(base_of(base), plan, false)
}

/// What a copy button copies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyWhat {
    /// The share link ([`share_link`]).
    Link,
    /// The embed snippet ([`embed_snippet`]).
    Embed,
}

/// The share link or the embed snippet of `plan` for the page at `base`, from one
/// encoding of the plan, or why `plan` cannot travel in a link.
pub fn copied_text(base: &str, plan: &Plan, what: CopyWhat) -> Result<String, String> {
    let payload = share::encode_checked(plan).map_err(|e| e.to_string())?;
    Ok(match what {
        CopyWhat::Link => share::url_of(base_of(base), &payload, false),
        CopyWhat::Embed => snippet_of(base, plan, &payload),
    })
}

/// [`copied_text`] for this page (browser only).
pub fn link_or_why(plan: &Plan, what: CopyWhat) -> Result<String, String> {
    copied_text(&page_base(), plan, what)
}

/// Escapes text for an HTML attribute value in double quotes.
pub fn escape_attr(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// The title of a plan for people: its name, or a generic one.
pub fn plan_title(plan: &Plan) -> String {
    let name = plan.name.trim();
    if name.is_empty() {
        format!("Capacity plan: {}", crate::summary::setup_words(plan))
    } else {
        name.chars().take(120).collect()
    }
}

/// The `<iframe>` snippet that embeds the read-only card of `plan`.
pub fn embed_snippet(base: &str, plan: &Plan) -> String {
    snippet_of(base, plan, &share::encode(plan))
}

/// [`embed_snippet`] from a payload made already: the iframe, at a height that holds
/// the card down to 320 px wide, and a short script that sets the frame to the height
/// the card posts ([`EMBED_HEIGHT_MESSAGE`]) whenever its width changes it. A site that
/// strips scripts keeps the fixed height. The frame's id comes from the payload, so two
/// plans embedded on one page each resize their own.
fn snippet_of(base: &str, plan: &Plan, payload: &str) -> String {
    let src = share::url_of(base_of(base), payload, true);
    let id = format!(
        "goodput-{:08x}",
        goodput_core::digest::fnv1a(goodput_core::digest::FNV1A_START, payload.as_bytes()) as u32
    );
    let (lo, hi) = EMBED_HEIGHT_RANGE_PX;
    format!(
        r#"<iframe id="{id}" src="{}" width="100%" height="{EMBED_HEIGHT_PX}" style="border:0" loading="lazy" title="{}"></iframe><script>addEventListener("message",function(e){{var f=document.getElementById("{id}"),h=e.data&&e.data["{EMBED_HEIGHT_MESSAGE}"];if(f&&e.source===f.contentWindow&&h>={lo}&&{hi}>=h)f.height=Math.ceil(h)}})</script>"#,
        escape_attr(&src),
        escape_attr(&plan_title(plan))
    )
}

/// The page's address without its fragment (browser only).
pub fn page_base() -> String {
    leptos::prelude::window()
        .location()
        .href()
        .map(|h| base_of(&h).to_string())
        .unwrap_or_default()
}

/// The page's fragment, with its `#` (browser only).
pub fn current_fragment() -> String {
    leptos::prelude::window()
        .location()
        .hash()
        .unwrap_or_default()
}

/// Replaces the address's fragment without a new history entry or a reload (browser only).
pub fn replace_fragment(fragment: &str) {
    let window = leptos::prelude::window();
    if window.location().hash().ok().as_deref() == Some(fragment) {
        return;
    }
    if let Ok(history) = window.history() {
        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(fragment));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(name: &str) -> Plan {
        Plan {
            name: name.into(),
            ..Plan::default()
        }
    }

    #[test]
    fn no_plan_item_means_the_own_plan() {
        assert_eq!(read_fragment(""), Opening::Own);
        assert_eq!(read_fragment("#"), Opening::Own);
        assert_eq!(read_fragment("#term-goodput"), Opening::Own);
        assert_eq!(read_fragment("#embed&view=planner"), Opening::Own);
    }

    #[test]
    fn a_link_opens_the_finance_view_by_default() {
        let plan = named("fp8 pilot");
        let frag = share::share_url("", &plan, false);
        assert_eq!(
            read_fragment(&frag),
            Opening::Link {
                plan: Box::new(plan.clone()),
                view: View::Finance
            }
        );
        let link = share_link("https://example.org/app/#p=old&view=planner", &plan);
        assert!(link.starts_with("https://example.org/app/#p="));
        assert!(
            !link.contains("view="),
            "a shared link lands on the finance view"
        );
        let frag_of_link = &link[link.find('#').expect("has #")..];
        assert!(matches!(
            read_fragment(frag_of_link),
            Opening::Link {
                view: View::Finance,
                ..
            }
        ));
    }

    #[test]
    fn every_view_round_trips_through_its_fragment() {
        let plan = named("round trip");
        for view in [View::Planner, View::Finance, View::Embed, View::Compare] {
            let frag = fragment_for(&plan, view);
            assert!(frag.starts_with("#p="));
            assert_eq!(
                read_fragment(&frag),
                Opening::Link {
                    plan: Box::new(plan.clone()),
                    view
                },
                "{frag}"
            );
        }
        assert!(fragment_for(&plan, View::Planner).ends_with("&view=planner"));
        assert!(fragment_for(&plan, View::Embed).ends_with("&embed"));
    }

    #[test]
    fn a_plan_too_large_for_a_link_stays_out_of_the_address() {
        let big = named(&"n".repeat(share::MAX_JSON_BYTES + 1));
        for view in [View::Planner, View::Compare, View::Finance] {
            let fragment = fragment_for(&big, view);
            assert!(
                !fragment.contains("p="),
                "{view:?}: {}",
                &fragment[..40.min(fragment.len())]
            );
            // A reload opens the own plan, not a link that cannot be read back.
            assert_eq!(read_fragment(&fragment), Opening::Own, "{view:?}");
        }
        assert_eq!(fragment_for(&big, View::Planner), "#view=planner");
        // A plan that fits keeps its link.
        assert!(fragment_for(&named("small"), View::Planner)
            .starts_with(&format!("#p={}", goodput_core::share::CURRENT_VERSION)));
        // The copy buttons refuse it, with the sizes, and copy the same text as the
        // link and snippet builders for a plan that fits.
        let base = "https://example.org/app/#p=old";
        let why = copied_text(base, &big, CopyWhat::Link).expect_err("too large");
        assert!(why.contains("bytes"), "{why}");
        let small = named("small");
        assert_eq!(
            copied_text(base, &small, CopyWhat::Link),
            Ok(share_link(base, &small))
        );
        assert_eq!(
            copied_text(base, &small, CopyWhat::Embed),
            Ok(embed_snippet(base, &small))
        );
    }

    #[test]
    fn broken_links_give_the_decoder_message() {
        let good = share::encode(&Plan::default());
        let cases = [
            format!("#p={}", &good[..good.len() / 2]),
            "#p=1d!!!!".to_string(),
            "#p=9z".to_string(),
            "#p=".to_string(),
            format!("#p={}", "A".repeat(share::MAX_LINK_BYTES + 1)),
        ];
        for case in cases {
            match read_fragment(&case) {
                Opening::Broken(msg) => {
                    assert!(!msg.is_empty() && !msg.contains('\n'), "{msg}");
                }
                other => panic!("{case:.40} opened as {other:?}"),
            }
        }
        let mut wild = Plan::default();
        wild.run.num_requests = u32::MAX;
        let frag = share::share_url("", &wild, false);
        match read_fragment(&frag) {
            Opening::Broken(msg) => assert_eq!(
                msg,
                "a value in it is out of range: Requests per run must be a whole number from \
                 1 to 200,000 requests; it is 4,294,967,295"
            ),
            other => panic!("an unbounded plan opened: {other:?}"),
        }
        // A plan edited by hand into the wrong type: no parser line and column.
        // `{"model":{"params":"abc"}}` in base64url, mode j (plain JSON).
        match read_fragment("#p=3jeyJtb2RlbCI6eyJwYXJhbXMiOiJhYmMifX0") {
            Opening::Broken(msg) => assert!(
                msg.starts_with("its plan is not one this goodput can read")
                    && !msg.contains("column"),
                "{msg}"
            ),
            other => panic!("a plan of the wrong type opened: {other:?}"),
        }
    }

    #[test]
    fn the_embed_snippet_escapes_the_plan_name() {
        let plan = named(r#"<script>alert("x")</script> & 'co'"#);
        let snippet = embed_snippet("http://h/app/?q=1#p=x", &plan);
        assert!(snippet.starts_with(r#"<iframe id="goodput-"#));
        assert!(snippet.contains(r#"src="http://h/app/?q=1#p="#));
        assert!(snippet.contains(&format!(
            r#"&amp;embed" width="100%" height="{EMBED_HEIGHT_PX}" style="border:0" loading="lazy""#
        )));
        assert!(!snippet.contains("<script>alert"));
        assert!(snippet
            .contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;co&#39;"));
        assert_eq!(
            snippet.matches('<').count(),
            4,
            "only the iframe's and the resizing script's own tags"
        );
        // The script resizes the frame of this snippet, by its id, and no other.
        let id = &snippet[r#"<iframe id=""#.len()..snippet.find(r#"" src"#).expect("an id")];
        assert!(
            snippet.contains(&format!(r#"getElementById("{id}")"#)),
            "{snippet}"
        );
        assert!(snippet.contains(r#"e.data["goodput-embed-height"]"#));
        assert!(!embed_snippet("http://h/app/?q=1", &named("other")).contains(id));
        // An unnamed plan is titled by what it is about.
        assert!(embed_snippet("http://h/", &named("")).contains(
            r#"title="Capacity plan: Article 8B (dense, 32 layers, 8 KV heads of 128) on NVIDIA H100 SXM 80GB, 30 req/s peak""#
        ));
    }
}
