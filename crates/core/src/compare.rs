//! Many plans side by side: one row per plan with its GPU, tensor-parallel degree,
//! goodput, fleet and cost, and the difference of each against a chosen baseline.
//!
//! ```text
//!   [(name, plan, goodput)] ──size_fleet──▶ CompareTable ──▶ cells()      (the page)
//!                                                       ├──▶ to_csv()      (spreadsheets)
//!                                                       └──▶ to_markdown() (docs)
//! ```
//!
//! Goodput is given, not searched: it is each plan's last finished search (or a
//! measured one). A plan without goodput, or whose goodput sizes no fleet, keeps its
//! row with "—" in the sized columns and no difference.

use crate::capacity::{size_fleet, CapacityPlan};
use crate::format::plain;
use crate::format::{rps as format_rps, usd, MISSING};
use crate::presets;
use crate::Plan;

/// One plan to compare: the name it is shown under, the plan and its goodput per
/// replica [requests/s] (`None` when no search has finished for it).
#[derive(Debug, Clone, Copy)]
pub struct CompareEntry<'a> {
    /// The name shown in the table.
    pub name: &'a str,
    /// The plan.
    pub plan: &'a Plan,
    /// Goodput of one replica [requests/s].
    pub goodput_rps: Option<f64>,
}

/// How a plan differs from the baseline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompareDelta {
    /// This plan's GPUs minus the baseline's.
    pub gpus: i64,
    /// This plan's cost per month minus the baseline's [USD/month].
    pub cost_per_month_usd: f64,
    /// That difference as a share of the baseline's cost (`None` when the baseline costs nothing).
    pub cost_fraction: Option<f64>,
}

/// One row of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareRow {
    /// The name shown.
    pub name: String,
    /// The model's display name.
    pub model: String,
    /// The GPU's display name.
    pub gpu: String,
    /// GPUs per replica (tensor-parallel degree).
    pub tp: u32,
    /// Goodput of one replica [requests/s].
    pub goodput_rps: Option<f64>,
    /// The fleet sized from the goodput (`None` without goodput, or when none can be sized).
    pub fleet: Option<CapacityPlan>,
    /// The difference against the baseline (`None` for the baseline itself, or when
    /// either side has no fleet).
    pub delta: Option<CompareDelta>,
}

/// Plans side by side, with a baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareTable {
    /// Index of the baseline row in `rows`.
    pub baseline: usize,
    /// One row per plan, in the order given.
    pub rows: Vec<CompareRow>,
}

/// The column headers, in order (the page, the CSV and the Markdown share them).
pub const COLUMNS: [&str; 11] = [
    "Plan",
    "Model",
    "GPU",
    "TP",
    "Goodput [req/s]",
    "Replicas",
    "GPUs",
    "$/month",
    "$/1k compliant requests",
    "Δ GPUs",
    "Δ $/month",
];

/// A display name for the plan's GPU: the preset's name, or its id.
pub fn gpu_name(plan: &Plan) -> String {
    presets::gpu_name(&plan.hardware.preset)
}

/// A display name for the plan's model: the preset's name, or its size.
pub fn model_name(plan: &Plan) -> String {
    presets::model(&plan.model.preset)
        .map(|m| m.name.to_string())
        .unwrap_or_else(|| format!("custom {}B", plain(plan.model.params / 1e9)))
}

const DASH: &str = MISSING;

/// The value shown for the baseline in the difference columns.
pub const BASELINE: &str = "baseline";

impl CompareTable {
    /// Builds the table; `baseline` is clamped to the rows (an empty list gives no rows).
    pub fn build(entries: &[CompareEntry<'_>], baseline: usize) -> CompareTable {
        let baseline = baseline.min(entries.len().saturating_sub(1));
        let mut rows: Vec<CompareRow> = entries
            .iter()
            .map(|e| CompareRow {
                name: e.name.to_string(),
                model: model_name(e.plan),
                gpu: gpu_name(e.plan),
                tp: e.plan.hardware.tp_degree,
                goodput_rps: e.goodput_rps,
                fleet: e.goodput_rps.and_then(|g| size_fleet(g, e.plan).ok()),
                delta: None,
            })
            .collect();
        let base = rows.get(baseline).and_then(|r| r.fleet.clone());
        if let Some(base) = base {
            for (i, row) in rows.iter_mut().enumerate() {
                if i == baseline {
                    continue;
                }
                row.delta = row.fleet.as_ref().map(|f| {
                    let cost = f.cost_per_month_usd - base.cost_per_month_usd;
                    CompareDelta {
                        gpus: i64::from(f.gpus_total) - i64::from(base.gpus_total),
                        cost_per_month_usd: cost,
                        cost_fraction: (base.cost_per_month_usd > 0.0)
                            .then(|| cost / base.cost_per_month_usd),
                    }
                });
            }
        }
        CompareTable { baseline, rows }
    }

    /// The cells as shown, one `Vec` per row in [`COLUMNS`] order: formatted numbers
    /// (`$168,630`, `22.06`, `+4`, `-$40,880 (-19.5%)`).
    pub fn cells(&self) -> Vec<Vec<String>> {
        self.rows
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let fleet =
                    |f: fn(&CapacityPlan) -> String| r.fleet.as_ref().map_or(DASH.into(), f);
                let (d_gpus, d_cost) = if i == self.baseline {
                    (BASELINE.to_string(), BASELINE.to_string())
                } else {
                    match r.delta {
                        Some(d) => (signed_int(d.gpus), signed_usd_with_share(d)),
                        None => (DASH.into(), DASH.into()),
                    }
                };
                vec![
                    r.name.clone(),
                    r.model.clone(),
                    r.gpu.clone(),
                    r.tp.to_string(),
                    r.goodput_rps.map_or(DASH.into(), format_rps),
                    fleet(|f| f.replicas_total.to_string()),
                    fleet(|f| f.gpus_total.to_string()),
                    fleet(|f| usd(f.cost_per_month_usd)),
                    fleet(|f| usd(f.cost_per_compliant_request_usd * 1e3)),
                    d_gpus,
                    d_cost,
                ]
            })
            .collect()
    }

    /// The table as CSV for a spreadsheet: plain numbers (no `$`, no thousands
    /// separators; dollars to the cent, the per-1k cost to six decimals), empty cells
    /// where there is no value, and the baseline's difference cells reading `baseline`.
    pub fn to_csv(&self) -> String {
        let mut header: Vec<String> = COLUMNS[..9].iter().map(|c| c.to_string()).collect();
        header.extend(["Δ GPUs".into(), "Δ $/month".into(), "Δ $/month [%]".into()]);
        let mut out = csv_line(&header);
        for (i, r) in self.rows.iter().enumerate() {
            let f = r.fleet.as_ref();
            let num = |x: Option<String>| x.unwrap_or_default();
            let mut line = vec![
                r.name.clone(),
                r.model.clone(),
                r.gpu.clone(),
                r.tp.to_string(),
                num(r.goodput_rps.map(format_rps)),
                num(f.map(|f| f.replicas_total.to_string())),
                num(f.map(|f| f.gpus_total.to_string())),
                num(f.map(|f| format!("{:.2}", f.cost_per_month_usd))),
                num(f.map(|f| plain(f.cost_per_compliant_request_usd * 1e3))),
            ];
            if i == self.baseline {
                line.extend([BASELINE.into(), BASELINE.into(), BASELINE.into()]);
            } else {
                line.extend([
                    num(r.delta.map(|d| d.gpus.to_string())),
                    num(r.delta.map(|d| format!("{:.2}", d.cost_per_month_usd))),
                    num(r
                        .delta
                        .and_then(|d| d.cost_fraction)
                        .map(|x| format!("{:.1}", x * 100.0))),
                ]);
            }
            out.push_str(&csv_line(&line));
        }
        out
    }

    /// The table as Markdown, with the same formatted cells as the page.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        let line = |cells: &[String]| {
            let cells: Vec<String> = cells.iter().map(|c| md_cell(c)).collect();
            format!("| {} |\n", cells.join(" | "))
        };
        out.push_str(&line(&COLUMNS.map(String::from)));
        let aligns: Vec<&str> = (0..COLUMNS.len())
            .map(|i| if i < 3 { "---" } else { "---:" })
            .collect();
        out.push_str(&format!("| {} |\n", aligns.join(" | ")));
        for row in self.cells() {
            out.push_str(&line(&row));
        }
        if let Some(base) = self.rows.get(self.baseline) {
            out.push_str(&format!(
                "\nDifferences are against {}.\n",
                md_cell(&base.name)
            ));
        }
        out
    }
}

fn signed_int(n: i64) -> String {
    if n > 0 {
        format!("+{n}")
    } else {
        n.to_string()
    }
}

fn signed_usd_with_share(d: CompareDelta) -> String {
    let money = if d.cost_per_month_usd > 0.0 {
        format!("+{}", usd(d.cost_per_month_usd))
    } else {
        usd(d.cost_per_month_usd)
    };
    match d.cost_fraction {
        Some(x) => format!("{money} ({:+.1}%)", x * 100.0),
        None => money,
    }
}

/// One CSV record (RFC 4180 quoting). Text a spreadsheet would run as a formula
/// (`=`, `+`, `-`, `@` first) gets a leading `'`, unless it is a number.
fn csv_line(cells: &[String]) -> String {
    let cells: Vec<String> = cells
        .iter()
        .map(|c| {
            let formula = c.starts_with(['=', '+', '-', '@']) && c.parse::<f64>().is_err();
            let c = if formula { format!("'{c}") } else { c.clone() };
            if c.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", c.replace('"', "\"\""))
            } else {
                c
            }
        })
        .collect();
    format!("{}\r\n", cells.join(","))
}

/// A Markdown table cell: `|` escaped, line breaks as spaces.
fn md_cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plans() -> Vec<Plan> {
        let a = Plan::default();
        let mut b = Plan::default();
        b.hardware.gpu_hour_usd *= 2.0;
        let mut c = Plan::default();
        c.hardware.tp_degree = 2;
        c.hardware.preset = "h200".into();
        let d = Plan::default();
        vec![a, b, c, d]
    }

    fn table(plans: &[Plan], goodput: [Option<f64>; 4], baseline: usize) -> CompareTable {
        let names = ["base", "pricey", "tp2 | h200", "=unsearched"];
        let entries: Vec<CompareEntry<'_>> = plans
            .iter()
            .zip(names)
            .zip(goodput)
            .map(|((plan, name), goodput_rps)| CompareEntry {
                name,
                plan,
                goodput_rps,
            })
            .collect();
        CompareTable::build(&entries, baseline)
    }

    #[test]
    fn rows_are_sized_from_goodput_and_differ_from_the_baseline() {
        let plans = plans();
        let t = table(&plans, [Some(20.0), Some(20.0), Some(40.0), None], 0);
        let base = size_fleet(20.0, &plans[0]).expect("fleet");
        assert_eq!(t.rows[0].fleet.as_ref(), Some(&base));
        assert_eq!(t.rows[0].delta, None, "the baseline has no difference");
        let pricey = t.rows[1].delta.expect("delta");
        assert_eq!(pricey.gpus, 0);
        assert!((pricey.cost_per_month_usd - base.cost_per_month_usd).abs() < 1e-6);
        assert_eq!(pricey.cost_fraction.map(|x| (x * 1e9).round()), Some(1e9));
        assert_eq!(t.rows[3].fleet, None);
        assert_eq!(t.rows[3].delta, None);

        let cells = t.cells();
        assert_eq!(cells.len(), 4);
        assert!(cells.iter().all(|r| r.len() == COLUMNS.len()));
        assert_eq!(cells[0][4], "20.00");
        assert_eq!(cells[0][7], usd(base.cost_per_month_usd));
        assert!(
            cells[0][7].starts_with('$') && cells[0][7].contains(','),
            "{}",
            cells[0][7]
        );
        assert_eq!(cells[0][9], BASELINE);
        assert_eq!(cells[1][9], "0");
        assert!(cells[1][10].ends_with("(+100.0%)"), "{}", cells[1][10]);
        assert_eq!(cells[3][4], DASH);
        assert_eq!(cells[3][10], DASH);
        assert_eq!(cells[2][2], "NVIDIA H200 SXM 141GB");
        assert_eq!(cells[2][3], "2");
    }

    #[test]
    fn another_baseline_flips_the_signs_and_is_clamped() {
        let plans = plans();
        let t = table(&plans, [Some(20.0), Some(20.0), Some(40.0), None], 1);
        let d = t.rows[0].delta.expect("delta");
        assert_eq!(d.cost_fraction.map(|x| (x * 1e9).round()), Some(-0.5e9));
        assert!(t.cells()[0][10].starts_with("-$") && t.cells()[0][10].ends_with("(-50.0%)"));
        assert_eq!(table(&plans, [Some(1.0); 4], 99).baseline, 3);
        let no_base = table(&plans, [None, Some(20.0), Some(40.0), None], 0);
        assert!(no_base.rows.iter().all(|r| r.delta.is_none()));
        assert!(CompareTable::build(&[], 3).rows.is_empty());
    }

    #[test]
    fn csv_and_markdown_carry_the_same_table() {
        let plans = plans();
        let t = table(&plans, [Some(20.0), Some(20.0), Some(40.0), None], 0);
        let csv = t.to_csv();
        let lines: Vec<&str> = csv.split("\r\n").filter(|l| !l.is_empty()).collect();
        assert_eq!(lines.len(), 5);
        assert!(lines[0].starts_with("Plan,Model,GPU,TP,Goodput [req/s]"));
        let base = size_fleet(20.0, &plans[0]).expect("fleet");
        assert!(
            lines[1].contains(&format!(",{:.2},", base.cost_per_month_usd)),
            "{}",
            lines[1]
        );
        assert!(lines[1].ends_with(",baseline,baseline,baseline"));
        assert!(lines[2].ends_with(&format!(",0,{:.2},100.0", base.cost_per_month_usd)));
        assert!(lines[3].starts_with("tp2 | h200,"), "{}", lines[3]);
        assert!(
            lines[4].starts_with("'=unsearched,"),
            "no formula: {}",
            lines[4]
        );
        assert!(lines[4].ends_with(",,,"), "{}", lines[4]);

        let md = t.to_markdown();
        let rows: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
        assert_eq!(rows.len(), 6);
        assert!(rows[4].starts_with("| tp2 \\| h200 |"), "{}", rows[4]);
        assert!(rows[1].ends_with("---: |"));
        for (row, cells) in rows[2..].iter().zip(t.cells()) {
            assert!(row.contains(&md_cell(&cells[7])), "{row}");
        }
        assert!(md.contains("Differences are against base."));
        assert_eq!(
            csv_line(&["a,\"b\"".into(), "-3.5".into(), "+x".into()]),
            "\"a,\"\"b\"\"\",-3.5,'+x\r\n"
        );
    }
}
