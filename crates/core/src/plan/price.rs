//! Where a plan's GPU-hour price comes from: a published offer of the catalogue
//! ([`crate::prices`]), the GPU preset's typical price, or a price entered.

use super::{err, Plan, PlanError};
use crate::prices::offer;

/// The plan's GPU-hour price and where it comes from, in words for finance: the offer
/// with its provider, term, date and source, or whose assumption the price is.
pub fn source_words(plan: &Plan) -> String {
    let h = &plan.hardware;
    let price = crate::format::usd(h.gpu_hour_usd);
    if let Some(o) = offer(&h.price_offer) {
        return format!(
            "{price}/GPU-h, {} {}: {}, as of {}, from {}",
            o.provider,
            o.term.words(),
            o.offer,
            o.dated,
            o.source_short()
        );
    }
    match crate::presets::gpu(&h.preset) {
        Some(g) if g.gpu_hour_usd == h.gpu_hour_usd => format!(
            "{price}/GPU-h, goodput's typical on-demand price for the {} (an assumption)",
            crate::presets::gpu_short_name(g.id)
        ),
        _ => format!("{price}/GPU-h, as entered"),
    }
}

/// A price offer must be one the catalogue holds, at the price it names.
pub(super) fn validate(plan: &Plan) -> Result<(), PlanError> {
    let h = &plan.hardware;
    if h.price_offer.is_empty() {
        return Ok(());
    }
    let Some(o) = offer(&h.price_offer) else {
        let id: String = h.price_offer.chars().take(40).collect();
        return Err(err(
            "hardware.price_offer",
            format!("unknown price offer '{id}'; `goodput presets` lists the offers"),
        ));
    };
    if o.gpu != h.preset {
        return Err(err(
            "hardware.price_offer",
            format!(
                "{} prices the {}, not the plan's GPU; pick an offer for its GPU, or clear it",
                o.id,
                crate::presets::gpu_short_name(o.gpu)
            ),
        ));
    }
    if o.usd_per_gpu_hour != h.gpu_hour_usd {
        return Err(err(
            "hardware.price_offer",
            format!(
                "{} is {}/GPU-h, but the plan's price is {}: pick the offer again, or clear it to keep the price",
                o.label(),
                crate::format::usd(o.usd_per_gpu_hour),
                crate::format::usd(h.gpu_hour_usd)
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_offer_sets_the_price_a_typed_price_replaces_it_and_it_follows_the_gpu() {
        use crate::plan::fields::field;
        let row = field("hardware.price_offer");
        let price = field("hardware.gpu_hour_usd");
        let mut p = Plan::default();
        let aws = offer("aws-h100-sxm-on-demand").expect("an AWS H100 offer");
        row.set_name(&mut p, aws.id);
        assert_eq!(
            (p.hardware.gpu_hour_usd, row.name_in(&p)),
            (aws.usd_per_gpu_hour, Some(aws.id.into()))
        );
        p.validate().expect("valid");
        assert!(
            source_words(&p).starts_with("$6.88/GPU-h, AWS on-demand: p5.48xlarge"),
            "{}",
            source_words(&p)
        );
        // The same price typed keeps the offer; another makes the price the plan's own.
        (price.access.expect("a number").set)(&mut p, Some(aws.usd_per_gpu_hour));
        assert_eq!(p.hardware.price_offer, aws.id);
        (price.access.expect("a number").set)(&mut p, Some(5.0));
        assert_eq!(p.hardware.price_offer, "");
        assert!(source_words(&p) == "$5.00/GPU-h, as entered");
        // An offer for another GPU is not taken.
        row.set_name(&mut p, "aws-h200-on-demand");
        assert_eq!(
            (p.hardware.gpu_hour_usd, p.hardware.price_offer.as_str()),
            (5.0, "")
        );
        // A new GPU takes the same provider's price on the same term, or its preset's.
        row.set_name(&mut p, aws.id);
        field("hardware.preset").set_name(&mut p, "h200");
        let h200 = offer("aws-h200-on-demand").expect("an AWS H200 offer");
        assert_eq!(
            (p.hardware.gpu_hour_usd, p.hardware.price_offer.as_str()),
            (h200.usd_per_gpu_hour, h200.id)
        );
        field("hardware.preset").set_name(&mut p, "l40s");
        let l40s = crate::presets::gpu("l40s").expect("l40s");
        assert_eq!(
            (p.hardware.gpu_hour_usd, p.hardware.price_offer.as_str()),
            (l40s.gpu_hour_usd, "")
        );
        assert!(source_words(&p).contains("goodput's typical on-demand price"));
    }

    #[test]
    fn a_plan_refuses_an_unknown_offer_and_one_at_another_price() {
        let mut p = Plan::default();
        p.hardware.price_offer = "acme-h100-sxm-on-demand".into();
        let e = p.validate().unwrap_err();
        assert_eq!(e.field, "hardware.price_offer");
        assert!(
            e.to_string()
                .contains("unknown price offer 'acme-h100-sxm-on-demand'"),
            "{e}"
        );
        let o = offer("lambda-h100-sxm-on-demand").expect("a Lambda H100 offer");
        p.hardware.price_offer = o.id.into();
        p.hardware.gpu_hour_usd = o.usd_per_gpu_hour + 1.0;
        let e = p.validate().unwrap_err().to_string();
        assert!(e.contains("but the plan's price is"), "{e}");
        // It travels in a link.
        p.hardware.gpu_hour_usd = o.usd_per_gpu_hour;
        let back = crate::share::decode(&crate::share::share_url("https://x.example/", &p, false))
            .expect("opens");
        assert_eq!(back.plan.hardware.price_offer, o.id);
    }

    #[test]
    fn an_offer_prices_its_own_gpu_only_and_hand_edits_drop_it() {
        use crate::plan::fields::field;
        let mut p = Plan::default();
        p.hardware.preset = "l40s".into();
        let o = offer("aws-h100-sxm-on-demand").expect("an AWS H100 offer");
        p.hardware.price_offer = o.id.into();
        p.hardware.gpu_hour_usd = o.usd_per_gpu_hour;
        let e = p.validate().unwrap_err().to_string();
        assert!(e.contains("prices the H100 SXM, not the plan's GPU"), "{e}");
        let mut p = Plan::default();
        field("hardware.price_offer").set_name(&mut p, o.id);
        (field("hardware.mem_bandwidth_bytes_per_s")
            .access
            .expect("a number")
            .set)(&mut p, Some(3e12));
        assert_eq!(
            (p.hardware.preset.as_str(), p.hardware.price_offer.as_str()),
            ("custom", "")
        );
        assert_eq!(p.hardware.gpu_hour_usd, o.usd_per_gpu_hour);
        p.validate().expect("valid");
    }

    #[test]
    fn a_comparison_goes_stale_when_its_options_are_priced_by_another_provider() {
        use crate::plan::comparison::{fingerprint_for, ShootoutSpec};
        use crate::plan::fields::field;
        let spec = ShootoutSpec::default();
        let mut p = Plan::default();
        let before = fingerprint_for(&p, &spec);
        field("hardware.price_offer").set_name(&mut p, "aws-h100-sxm-on-demand");
        let aws = fingerprint_for(&p, &spec);
        assert_ne!(before, aws, "an offer prices every option");
        // Using another row moves to the same provider's offer: still fresh.
        field("hardware.preset").set_name(&mut p, "h200");
        assert_eq!(p.hardware.price_offer, "aws-h200-on-demand");
        assert_eq!(fingerprint_for(&p, &spec), aws);
    }
}
