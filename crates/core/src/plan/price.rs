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
}
