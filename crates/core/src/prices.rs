//! Published GPU rental prices: a small catalogue a buyer recognises, each price with
//! its provider, term, source and the date the source gives. A plan may take its price
//! from one (`plan.hardware.price_offer`) or keep a price of its own; the finance view
//! and every report say which (`plan::price::source_words`). The catalogue sits below
//! the plan and knows nothing of it.
//!
//! Prices are per GPU-hour in US dollars: an instance of 8 GPUs at $X an hour is listed
//! at $X/8. They are list prices as their sources published them and age quickly; the
//! date says how old each one is. `docs/prices.md` lists them with their sources.

/// How long a price commits its buyer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Term {
    /// Pay as you go, no commitment.
    OnDemand,
    /// One year committed or reserved.
    OneYear,
    /// Three years committed or reserved.
    ThreeYear,
    /// Interruptible capacity (spot, preemptible).
    Spot,
}

impl Term {
    /// The words a page shows.
    pub fn words(self) -> &'static str {
        match self {
            Term::OnDemand => "on-demand",
            Term::OneYear => "1-year commitment",
            Term::ThreeYear => "3-year commitment",
            Term::Spot => "spot (interruptible)",
        }
    }
}

/// One published price of one GPU (its JSON, as `goodput presets --json` lists it, gives
/// the term in words).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct PriceOffer {
    /// Stable id used in plans and links (`lambda-h200-on-demand`).
    pub id: &'static str,
    /// GPU preset id.
    pub gpu: &'static str,
    /// Who sells it.
    pub provider: &'static str,
    /// The product or instance it is quoted for.
    pub offer: &'static str,
    /// The commitment.
    #[serde(serialize_with = "term_words")]
    pub term: Term,
    /// Price of one GPU-hour [USD].
    pub usd_per_gpu_hour: f64,
    /// Where it was published.
    pub source: &'static str,
    /// When the source says it was published or last updated (`2026-05`).
    pub dated: &'static str,
}

impl PriceOffer {
    /// The source in a few words: its host, and a code host's owner and repository
    /// (`docs.digitalocean.com`, `raw.githubusercontent.com/api-evangelist/coreweave`).
    pub fn source_short(&self) -> String {
        let rest = self
            .source
            .split_once("://")
            .map_or(self.source, |(_, r)| r);
        let mut parts = rest.split('/');
        let host = parts.next().unwrap_or_default();
        if host.ends_with("github.com")
            || host.ends_with("githubusercontent.com")
            || host == "huggingface.co"
        {
            let path: Vec<&str> = parts
                .filter(|s| !s.is_empty())
                .take(if host == "huggingface.co" { 3 } else { 2 })
                .collect();
            format!("{host}/{}", path.join("/"))
        } else {
            host.to_string()
        }
    }

    /// `Lambda, on-demand: $3.79/GPU-h (2026-05)`, for a select.
    pub fn label(&self) -> String {
        format!(
            "{}, {}: {}/GPU-h ({})",
            self.provider,
            self.term.words(),
            crate::format::usd(self.usd_per_gpu_hour),
            self.dated
        )
    }
}

fn term_words<S: serde::Serializer>(t: &Term, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(t.words())
}

/// Every offer, grouped by GPU.
pub const OFFERS: &[PriceOffer] = &[
    PriceOffer {
        id: "aws-h100-sxm-on-demand",
        gpu: "h100-sxm",
        provider: "AWS",
        offer: "p5.48xlarge (8x H100, us-east-1)",
        term: Term::OnDemand,
        usd_per_gpu_hour: 6.88,
        source: "https://raw.githubusercontent.com/datareceipts/data-receipts/main/109-gpu-pricing/hyperscalers.json",
        dated: "2026-11-09",
    },
    PriceOffer {
        id: "coreweave-h100-sxm-on-demand",
        gpu: "h100-sxm",
        provider: "CoreWeave",
        offer: "NVIDIA HGX H100 (8 GPUs)",
        term: Term::OnDemand,
        usd_per_gpu_hour: 6.155,
        source: "https://raw.githubusercontent.com/api-evangelist/coreweave/refs/heads/main/plans/coreweave-plans-pricing.yml",
        dated: "2026-09-20",
    },
    PriceOffer {
        id: "coreweave-h100-sxm-spot",
        gpu: "h100-sxm",
        provider: "CoreWeave",
        offer: "NVIDIA HGX H100 spot (North America)",
        term: Term::Spot,
        usd_per_gpu_hour: 2.4638,
        source: "https://raw.githubusercontent.com/api-evangelist/coreweave/refs/heads/main/plans/coreweave-plans-pricing.yml",
        dated: "2026-09-20",
    },
    PriceOffer {
        id: "digitalocean-h100-sxm-on-demand",
        gpu: "h100-sxm",
        provider: "DigitalOcean",
        offer: "GPU Droplet NVIDIA H100 (8x)",
        term: Term::OnDemand,
        usd_per_gpu_hour: 2.99,
        source: "https://docs.digitalocean.com/products/droplets/details/pricing/",
        dated: "2026-05-28",
    },
    PriceOffer {
        id: "gcp-h100-sxm-on-demand",
        gpu: "h100-sxm",
        provider: "Google Cloud",
        offer: "a3-highgpu-8g (8x H100 80GB, us-central1)",
        term: Term::OnDemand,
        usd_per_gpu_hour: 11.0612,
        source: "https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator/blob/fd66b26ff84fee5cdd94f341ea89206e76c06b99/pricing.yml",
        dated: "2026-07-30",
    },
    PriceOffer {
        id: "gcp-h100-sxm-1-year",
        gpu: "h100-sxm",
        provider: "Google Cloud",
        offer: "a3-highgpu-8g 1-year committed use (us-central1)",
        term: Term::OneYear,
        usd_per_gpu_hour: 7.673,
        source: "https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator/blob/fd66b26ff84fee5cdd94f341ea89206e76c06b99/pricing.yml",
        dated: "2026-07-30",
    },
    PriceOffer {
        id: "gcp-h100-sxm-3-year",
        gpu: "h100-sxm",
        provider: "Google Cloud",
        offer: "a3-highgpu-8g 3-year committed use (us-central1)",
        term: Term::ThreeYear,
        usd_per_gpu_hour: 4.858,
        source: "https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator/blob/fd66b26ff84fee5cdd94f341ea89206e76c06b99/pricing.yml",
        dated: "2026-07-30",
    },
    PriceOffer {
        id: "gcp-h100-sxm-spot",
        gpu: "h100-sxm",
        provider: "Google Cloud",
        offer: "a3-highgpu-8g Spot (us-central1)",
        term: Term::Spot,
        usd_per_gpu_hour: 6.3262,
        source: "https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator/blob/fd66b26ff84fee5cdd94f341ea89206e76c06b99/pricing.yml",
        dated: "2026-07-30",
    },
    PriceOffer {
        id: "lambda-h100-sxm-on-demand",
        gpu: "h100-sxm",
        provider: "Lambda",
        offer: "8x NVIDIA H100 SXM",
        term: Term::OnDemand,
        usd_per_gpu_hour: 3.99,
        source: "https://raw.githubusercontent.com/api-evangelist/lambda-labs/refs/heads/main/plans/lambda-labs-plans-pricing.yml",
        dated: "2026-09-20",
    },
    PriceOffer {
        id: "azure-h100-sxm-on-demand",
        gpu: "h100-sxm",
        provider: "Microsoft Azure",
        offer: "Standard_ND96isr_H100_v5 (8x H100 SXM)",
        term: Term::OnDemand,
        usd_per_gpu_hour: 12.29,
        source: "https://raw.githubusercontent.com/datareceipts/data-receipts/main/109-gpu-pricing/README.md",
        dated: "2026-11-09",
    },
    PriceOffer {
        id: "runpod-h100-sxm-on-demand",
        gpu: "h100-sxm",
        provider: "RunPod",
        offer: "Pods - H100 SXM (Secure Cloud)",
        term: Term::OnDemand,
        usd_per_gpu_hour: 3.49,
        source: "https://raw.githubusercontent.com/api-evangelist/runpod/refs/heads/main/plans/runpod-plans-pricing.yml",
        dated: "2026-10-07",
    },
    PriceOffer {
        id: "aws-h200-on-demand",
        gpu: "h200",
        provider: "AWS",
        offer: "p5en.48xlarge (8x H200, us-east-1)",
        term: Term::OnDemand,
        usd_per_gpu_hour: 7.912,
        source: "https://github.com/dstackai/dstack/pull/4110",
        dated: "2026-08-06",
    },
    PriceOffer {
        id: "aws-h200-spot",
        gpu: "h200",
        provider: "AWS",
        offer: "p5en.48xlarge spot (us-east-1)",
        term: Term::Spot,
        usd_per_gpu_hour: 3.3998,
        source: "https://github.com/dstackai/dstack/pull/4110",
        dated: "2026-08-06",
    },
    PriceOffer {
        id: "coreweave-h200-on-demand",
        gpu: "h200",
        provider: "CoreWeave",
        offer: "NVIDIA HGX H200 (8 GPUs)",
        term: Term::OnDemand,
        usd_per_gpu_hour: 6.305,
        source: "https://raw.githubusercontent.com/api-evangelist/coreweave/refs/heads/main/plans/coreweave-plans-pricing.yml",
        dated: "2026-09-20",
    },
    PriceOffer {
        id: "coreweave-h200-spot",
        gpu: "h200",
        provider: "CoreWeave",
        offer: "NVIDIA HGX H200 spot (North America)",
        term: Term::Spot,
        usd_per_gpu_hour: 2.6162,
        source: "https://raw.githubusercontent.com/api-evangelist/coreweave/refs/heads/main/plans/coreweave-plans-pricing.yml",
        dated: "2026-09-20",
    },
    PriceOffer {
        id: "gcp-h200-on-demand",
        gpu: "h200",
        provider: "Google Cloud",
        offer: "a3-ultragpu-8g (8x H200, us-central1)",
        term: Term::OnDemand,
        usd_per_gpu_hour: 10.4365,
        source: "https://huggingface.co/datasets/tanod/cloud-gpu-list-prices",
        dated: "2026-10-13",
    },
    PriceOffer {
        id: "gcp-h200-spot",
        gpu: "h200",
        provider: "Google Cloud",
        offer: "a3-ultragpu-8g Spot (us-central1)",
        term: Term::Spot,
        usd_per_gpu_hour: 6.2607,
        source: "https://huggingface.co/datasets/tanod/cloud-gpu-list-prices",
        dated: "2026-10-13",
    },
    PriceOffer {
        id: "nebius-h200-on-demand",
        gpu: "h200",
        provider: "Nebius",
        offer: "NVIDIA H200 VM preset 1gpu-16vcpu-200gb",
        term: Term::OnDemand,
        usd_per_gpu_hour: 3.5,
        source: "https://docs.nebius.com/signup-billing/billing-changes-oct-2025",
        dated: "2025-10",
    },
    PriceOffer {
        id: "runpod-h200-on-demand",
        gpu: "h200",
        provider: "RunPod",
        offer: "Pods - H200",
        term: Term::OnDemand,
        usd_per_gpu_hour: 4.59,
        source: "https://raw.githubusercontent.com/api-evangelist/runpod/refs/heads/main/plans/runpod-plans-pricing.yml",
        dated: "2026-10-07",
    },
    PriceOffer {
        id: "coreweave-b200-on-demand",
        gpu: "b200",
        provider: "CoreWeave",
        offer: "NVIDIA HGX B200 (8 GPUs)",
        term: Term::OnDemand,
        usd_per_gpu_hour: 8.6,
        source: "https://raw.githubusercontent.com/api-evangelist/coreweave/refs/heads/main/plans/coreweave-plans-pricing.yml",
        dated: "2026-09-20",
    },
    PriceOffer {
        id: "coreweave-b200-spot",
        gpu: "b200",
        provider: "CoreWeave",
        offer: "NVIDIA HGX B200 spot (North America)",
        term: Term::Spot,
        usd_per_gpu_hour: 4.2637,
        source: "https://raw.githubusercontent.com/api-evangelist/coreweave/refs/heads/main/plans/coreweave-plans-pricing.yml",
        dated: "2026-09-20",
    },
    PriceOffer {
        id: "lambda-b200-on-demand",
        gpu: "b200",
        provider: "Lambda",
        offer: "8x NVIDIA B200 SXM6",
        term: Term::OnDemand,
        usd_per_gpu_hour: 6.69,
        source: "https://raw.githubusercontent.com/api-evangelist/lambda-labs/refs/heads/main/plans/lambda-labs-plans-pricing.yml",
        dated: "2026-09-20",
    },
    PriceOffer {
        id: "runpod-b200-on-demand",
        gpu: "b200",
        provider: "RunPod",
        offer: "Pods - B200",
        term: Term::OnDemand,
        usd_per_gpu_hour: 6.79,
        source: "https://raw.githubusercontent.com/api-evangelist/runpod/refs/heads/main/plans/runpod-plans-pricing.yml",
        dated: "2026-10-07",
    },
    PriceOffer {
        id: "aws-a100-80gb-on-demand",
        gpu: "a100-80gb",
        provider: "AWS",
        offer: "p4de.24xlarge (8x A100 80GB SXM, us-east-1)",
        term: Term::OnDemand,
        usd_per_gpu_hour: 3.4309,
        source: "https://raw.githubusercontent.com/datareceipts/data-receipts/main/109-gpu-pricing/hyperscalers.json",
        dated: "2026-11-09",
    },
    PriceOffer {
        id: "coreweave-a100-80gb-on-demand",
        gpu: "a100-80gb",
        provider: "CoreWeave",
        offer: "NVIDIA A100 80GB (8 GPUs)",
        term: Term::OnDemand,
        usd_per_gpu_hour: 2.7,
        source: "https://raw.githubusercontent.com/api-evangelist/coreweave/refs/heads/main/plans/coreweave-plans-pricing.yml",
        dated: "2026-09-20",
    },
    PriceOffer {
        id: "coreweave-a100-80gb-spot",
        gpu: "a100-80gb",
        provider: "CoreWeave",
        offer: "NVIDIA A100 80GB spot (North America)",
        term: Term::Spot,
        usd_per_gpu_hour: 1.2063,
        source: "https://raw.githubusercontent.com/api-evangelist/coreweave/refs/heads/main/plans/coreweave-plans-pricing.yml",
        dated: "2026-09-20",
    },
    PriceOffer {
        id: "gcp-a100-80gb-on-demand",
        gpu: "a100-80gb",
        provider: "Google Cloud",
        offer: "a2-ultragpu-8g (8x A100 80GB, us-central1)",
        term: Term::OnDemand,
        usd_per_gpu_hour: 5.0688,
        source: "https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator/blob/fd66b26ff84fee5cdd94f341ea89206e76c06b99/pricing.yml",
        dated: "2026-07-30",
    },
    PriceOffer {
        id: "gcp-a100-80gb-spot",
        gpu: "a100-80gb",
        provider: "Google Cloud",
        offer: "a2-ultragpu-8g Spot (us-central1)",
        term: Term::Spot,
        usd_per_gpu_hour: 2.7595,
        source: "https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator/blob/fd66b26ff84fee5cdd94f341ea89206e76c06b99/pricing.yml",
        dated: "2026-07-30",
    },
    PriceOffer {
        id: "lambda-a100-80gb-on-demand",
        gpu: "a100-80gb",
        provider: "Lambda",
        offer: "8x NVIDIA A100 SXM 80 GB",
        term: Term::OnDemand,
        usd_per_gpu_hour: 2.79,
        source: "https://raw.githubusercontent.com/api-evangelist/lambda-labs/refs/heads/main/plans/lambda-labs-plans-pricing.yml",
        dated: "2026-09-20",
    },
    PriceOffer {
        id: "runpod-a100-80gb-on-demand",
        gpu: "a100-80gb",
        provider: "RunPod",
        offer: "A100 SXM 80GB (Secure Cloud)",
        term: Term::OnDemand,
        usd_per_gpu_hour: 1.79,
        source: "https://raw.githubusercontent.com/datareceipts/data-receipts/main/109-gpu-pricing/vendors.json",
        dated: "2026-11-09",
    },
    PriceOffer {
        id: "coreweave-l40s-on-demand",
        gpu: "l40s",
        provider: "CoreWeave",
        offer: "NVIDIA L40S (8 GPUs)",
        term: Term::OnDemand,
        usd_per_gpu_hour: 2.25,
        source: "https://raw.githubusercontent.com/api-evangelist/coreweave/refs/heads/main/plans/coreweave-plans-pricing.yml",
        dated: "2026-09-20",
    },
    PriceOffer {
        id: "digitalocean-l40s-on-demand",
        gpu: "l40s",
        provider: "DigitalOcean",
        offer: "GPU Droplet NVIDIA L40S (1x)",
        term: Term::OnDemand,
        usd_per_gpu_hour: 1.57,
        source: "https://docs.digitalocean.com/products/droplets/details/pricing/",
        dated: "2026-05-28",
    },
    PriceOffer {
        id: "crusoe-mi300x-spot",
        gpu: "mi300x",
        provider: "Crusoe",
        offer: "MI300X spot (as reported)",
        term: Term::Spot,
        usd_per_gpu_hour: 1.71,
        source: "https://www.cliffcenter.com/research/amd-inference-economics",
        dated: "2026-05-18",
    },
    PriceOffer {
        id: "digitalocean-mi300x-on-demand",
        gpu: "mi300x",
        provider: "DigitalOcean",
        offer: "GPU Droplet AMD MI300X (8x)",
        term: Term::OnDemand,
        usd_per_gpu_hour: 1.99,
        source: "https://docs.digitalocean.com/products/droplets/details/pricing/",
        dated: "2026-05-28",
    },
    PriceOffer {
        id: "vultr-mi300x-on-demand",
        gpu: "mi300x",
        provider: "Vultr",
        offer: "MI300X (as reported)",
        term: Term::OnDemand,
        usd_per_gpu_hour: 1.85,
        source: "https://www.cliffcenter.com/research/amd-inference-economics",
        dated: "2026-05-18",
    },
    PriceOffer {
        id: "gcp-l4-on-demand",
        gpu: "l4",
        provider: "Google Cloud",
        offer: "g2-standard-4 (1x L4, 4 vCPU, 16 GB; us-central1)",
        term: Term::OnDemand,
        usd_per_gpu_hour: 0.7068,
        source: "https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator/blob/fd66b26ff84fee5cdd94f341ea89206e76c06b99/pricing.yml",
        dated: "2026-07-30",
    },
    PriceOffer {
        id: "gcp-l4-1-year",
        gpu: "l4",
        provider: "Google Cloud",
        offer: "g2-standard-4 (1x L4, 4 vCPU, 16 GB; us-central1) 1-year committed use",
        term: Term::OneYear,
        usd_per_gpu_hour: 0.4453,
        source: "https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator/blob/fd66b26ff84fee5cdd94f341ea89206e76c06b99/pricing.yml",
        dated: "2026-07-30",
    },
    PriceOffer {
        id: "gcp-l4-3-year",
        gpu: "l4",
        provider: "Google Cloud",
        offer: "g2-standard-4 (1x L4, 4 vCPU, 16 GB; us-central1) 3-year committed use",
        term: Term::ThreeYear,
        usd_per_gpu_hour: 0.3181,
        source: "https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator/blob/fd66b26ff84fee5cdd94f341ea89206e76c06b99/pricing.yml",
        dated: "2026-07-30",
    },
    PriceOffer {
        id: "gcp-l4-spot",
        gpu: "l4",
        provider: "Google Cloud",
        offer: "g2-standard-4 (1x L4, 4 vCPU, 16 GB; us-central1) Spot",
        term: Term::Spot,
        usd_per_gpu_hour: 0.3973,
        source: "https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator/blob/fd66b26ff84fee5cdd94f341ea89206e76c06b99/pricing.yml",
        dated: "2026-07-30",
    },
    PriceOffer {
        id: "tensorwave-mi325x-on-demand",
        gpu: "mi325x",
        provider: "TensorWave",
        offer: "MI325X (as reported)",
        term: Term::OnDemand,
        usd_per_gpu_hour: 1.95,
        source: "https://www.cliffcenter.com/research/amd-inference-economics",
        dated: "2026-05-18",
    },
    PriceOffer {
        id: "coreweave-gb200-on-demand",
        gpu: "gb200",
        provider: "CoreWeave",
        offer: "NVIDIA GB200 NVL72 (4-GPU instance, North America)",
        term: Term::OnDemand,
        usd_per_gpu_hour: 10.5,
        source: "https://raw.githubusercontent.com/api-evangelist/coreweave/refs/heads/main/plans/coreweave-plans-pricing.yml",
        dated: "2026-09-20",
    },
];

/// The offer with this id.
pub fn offer(id: &str) -> Option<&'static PriceOffer> {
    OFFERS.iter().find(|o| o.id == id)
}

/// The offers for a GPU preset, cheapest first.
pub fn offers_for(gpu: &str) -> Vec<&'static PriceOffer> {
    let mut v: Vec<_> = OFFERS.iter().filter(|o| o.gpu == gpu).collect();
    v.sort_by(|a, b| a.usd_per_gpu_hour.total_cmp(&b.usd_per_gpu_hour));
    v
}

/// The same provider's offer on the same term for another GPU, if it publishes one: what
/// a plan priced by `id` is priced at on `gpu` (`id` itself when it is for `gpu`).
pub fn counterpart(id: &str, gpu: &str) -> Option<&'static PriceOffer> {
    let o = offer(id)?;
    OFFERS
        .iter()
        .find(|c| c.gpu == gpu && c.provider == o.provider && c.term == o.term)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_offer_names_a_gpu_preset_a_source_and_a_date() {
        let mut ids = std::collections::BTreeSet::new();
        for o in OFFERS {
            assert!(ids.insert(o.id), "{} twice", o.id);
            assert!(
                crate::presets::gpu(o.gpu).is_some(),
                "{}: GPU {}",
                o.id,
                o.gpu
            );
            assert!(o.source.starts_with("https://"), "{}", o.id);
            assert!(
                o.dated.len() >= 7 && o.dated[..4].parse::<u32>().is_ok_and(|y| y >= 2024),
                "{}: date {}",
                o.id,
                o.dated
            );
            assert!(
                o.usd_per_gpu_hour > 0.1 && o.usd_per_gpu_hour < 50.0,
                "{}",
                o.id
            );
        }
    }

    #[test]
    fn the_common_gpus_have_offers_from_two_providers_or_more() {
        for gpu in ["h100-sxm", "h200", "b200", "a100-80gb"] {
            let providers: std::collections::BTreeSet<_> =
                offers_for(gpu).iter().map(|o| o.provider).collect();
            assert!(providers.len() >= 2, "{gpu}: {providers:?}");
        }
    }
}
