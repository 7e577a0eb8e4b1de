//! Synthetic ground truth: measurements simulated with known constants (another seed,
//! plus noise), fitted back.

use super::run::lognormal_fit;
use super::*;
use crate::measure::{Format, MeasuredPoint, MeasuredSet};
use crate::plan::{
    Calibration, Fitted, LengthDist, MetricErrors, Plan, MAX_EFFICIENCY, MIN_EFFICIENCY,
};
use crate::roofline::{StepModel, StepModelOf};

/// The constants the synthetic "server" runs with.
pub(crate) const TRUTH: Constants = Constants {
    bandwidth_efficiency: 0.8,
    compute_efficiency: 0.7,
    step_overhead_s: 3e-3,
    seq_overhead_s: 0.0,
    frontend_s: 0.025,
    prefill_overhead_s: 2e-3,
    kv_read_efficiency: 0.6,
};

/// Synthetic points of 1,000 requests with the [`TRUTH`] constants, seed 0xBEEF.
pub(crate) fn pts(plan: &Plan, rates: &[f64], noise: f64, detailed: bool) -> Vec<MeasuredPoint> {
    synthetic_points(plan, &TRUTH, rates, 1000, noise, detailed, 0xBEEF).unwrap()
}

pub(crate) fn set_of(points: Vec<MeasuredPoint>) -> MeasuredSet {
    MeasuredSet {
        files: points.iter().map(|p| p.source.clone()).collect(),
        format: Format::Vllm,
        model: points[0].model.clone(),
        engine: points[0].engine.clone(),
        points,
    }
}

pub(crate) fn rel(a: f64, b: f64) -> f64 {
    (a / b - 1.0).abs()
}

#[test]
fn recovers_known_constants_from_noisy_measurements() {
    let plan = Plan::default();
    let rates = [2.0, 6.0, 10.0, 13.0, 16.0, 18.0];
    let set = set_of(pts(&plan, &rates, 0.03, true));
    let report = calibrate_threads(&plan, &set, 2, &mut |_| true).unwrap();
    let c = &report.calibration;
    eprintln!(
        "bw {:?} compute {:?} c0 {:?} frontend {:?} prefill {:?} kv {:?} errors {:?} evals {}",
        c.bandwidth_efficiency,
        c.compute_efficiency,
        c.step_overhead_s,
        c.frontend_s,
        c.prefill_overhead_s,
        c.kv_read_efficiency,
        c.error,
        report.evaluations
    );
    // What light-load TPOT pins down, the empty-cache decode step (overhead plus the
    // weight read), comes back within 8%; the compute share within 10%. How that step
    // splits into bandwidth and overhead rests on the KV-read slope, which is small for
    // an 8B GQA model and short contexts: the bandwidth share alone comes back only
    // within 35%, and how TTFT's fixed part splits into the frontend, the step and the
    // prefill-step overheads is as loosely pinned (docs/calibration.md, "Limits").
    let wt = 16e9 / 3.35e12;
    let floor = |bw: f64, c0: f64| c0 + wt / bw;
    assert!(
        rel(
            floor(c.bandwidth_efficiency.value, c.step_overhead_s.value),
            floor(TRUTH.bandwidth_efficiency, TRUTH.step_overhead_s)
        ) < 0.08
    );
    assert!(rel(c.compute_efficiency.value, TRUTH.compute_efficiency) < 0.10);
    assert!(rel(c.bandwidth_efficiency.value, TRUTH.bandwidth_efficiency) < 0.35);
    let held = c.error.held_out.unwrap();
    let heavy = c.error.extrapolation.unwrap();
    // The fit beats the datasheet by far; its predictions of points it did not see stay
    // near the 3% noise, in range and on the heavier loads from the lighter ones.
    assert!(c.error.in_sample.overall < 0.06, "{:?}", c.error);
    assert!(held.overall < 0.08, "{held:?}");
    assert!(heavy.overall < 0.12, "{heavy:?}");
    assert!(c.error.uncalibrated.overall > 0.2, "{:?}", c.error);
    assert!(c.bandwidth_efficiency.sd > 0.0 && c.bandwidth_efficiency.sd < 0.1);
    assert_eq!(report.points.len(), rates.len());
    // The calibrated plan validates and uses the fit.
    report.plan.validate().unwrap();
    let sm = StepModel::from_plan(&report.plan);
    assert!(
        rel(
            sm.mem_bandwidth_bytes_per_s,
            3.35e12 * c.bandwidth_efficiency.value
        ) < 1e-12
    );
}

#[test]
fn the_state_machine_gives_the_same_answer_however_jobs_are_run() {
    let plan = Plan::default();
    let set = set_of(pts(&plan, &[4.0, 12.0, 17.0], 0.0, false));
    let one = calibrate_threads(&plan, &set, 1, &mut |_| true).unwrap();
    // Results fed back in reverse order, one at a time.
    let mut c = Calibrator::new(&plan, &set).unwrap();
    while !c.is_done() {
        let mut jobs = c.next_batch();
        assert!(!jobs.is_empty());
        jobs.reverse();
        for j in jobs {
            let r = run_fit_job(c.problem(), &j).unwrap();
            c.feed(&[r]);
        }
    }
    assert_eq!(c.result().unwrap(), one);
    assert_eq!(c.progress().done, c.progress().total);
    // Threads (within a job for the full fit, across jobs for the refits) change nothing.
    assert_eq!(
        calibrate_threads(&plan, &set, 3, &mut |_| true).unwrap(),
        one
    );
}

#[test]
fn a_single_point_fits_without_a_held_out_error_and_says_so() {
    let plan = Plan::default();
    let set = set_of(pts(&plan, &[10.0], 0.0, false));
    let r = calibrate_threads(&plan, &set, 1, &mut |_| true).unwrap();
    assert!(r.calibration.error.held_out.is_none());
    assert!(r.warnings.iter().any(|w| w.contains("one measured point")));
    assert!(r.points[0].held_out.is_none());
    assert_eq!(r.verdict, FitVerdict::Unchecked);
    let text = r.to_text();
    assert!(text.contains("verdict: Not checked"), "{text}");
    // No "± 0.000": one point gives the bootstrap nothing to vary.
    assert!(text.contains("– (one point)"), "{text}");
    assert!(!r.calibration.spread_estimated());
}

#[test]
fn runs_faster_than_the_datasheet_allows_are_flagged() {
    // A "server" with 1.4× the datasheet bandwidth: not this plan's GPU.
    let plan = Plan::default();
    let fast = Constants {
        bandwidth_efficiency: 1.4,
        ..TRUTH
    };
    let rates = [2.0, 6.0, 10.0, 13.0, 16.0, 18.0];
    let points = synthetic_points(&plan, &fast, &rates, 1000, 0.0, false, 0xBEEF).unwrap();
    let r = calibrate_threads(&plan, &set_of(points), 1, &mut |_| true).unwrap();
    let c = &r.calibration;
    // The extra bandwidth shows in the weight reads or in the KV reads (the fit can
    // put it in either), never below the datasheet in both.
    let kv = c.kv_read_efficiency.map_or(1.0, |k| k.value) * c.bandwidth_efficiency.value;
    assert!(c.bandwidth_efficiency.value > 1.0 || kv > 1.05, "{c:?}");
    let cautions = calibration_cautions(c);
    assert_eq!(cautions.len(), 1, "{cautions:?}");
    assert!(cautions[0].starts_with("the fit puts the "), "{cautions:?}");
    assert!(cautions[0].contains("% of the datasheet, more than the GPU has"));
    assert!(
        r.warnings.contains(&cautions[0]),
        "the report carries it too"
    );
    assert!(r.to_text().contains(&cautions[0]));
    // Runs the GPU can explain carry no such caution.
    let set = set_of(pts(&plan, &rates, 0.0, false));
    let ok = calibrate_threads(&plan, &set, 1, &mut |_| true).unwrap();
    assert!(
        calibration_cautions(&ok.calibration).is_empty(),
        "{:?}",
        ok.calibration
    );
    assert!(!ok.verdict.is_weak(), "{:?}", ok.calibration.error);
    assert!(ok.calibration.spread_estimated());
}

#[test]
fn a_fit_no_better_than_the_datasheet_starts_switched_off() {
    // Latencies that jump up and down with the rate: no one set of constants explains
    // them, and a fit without a point predicts it worse than the datasheet does.
    let plan = Plan::default();
    let mut points = pts(&plan, &[2.0, 6.0, 10.0, 14.0], 0.0, false);
    for (p, f) in points.iter_mut().zip([6.0, 0.2, 6.0, 0.2]) {
        for s in [&mut p.ttft, &mut p.tpot, &mut p.e2e] {
            s.mean_s = s.mean_s.map(|x| x * f);
            s.median_s = s.median_s.map(|x| x * f);
            for q in &mut s.percentiles {
                q.1 *= f;
            }
        }
    }
    let r = calibrate_threads(&plan, &set_of(points), 1, &mut |_| true).unwrap();
    let c = &r.calibration;
    assert_eq!(r.verdict, FitVerdict::NoBetter, "{:?}", c.error);
    assert!(!c.enabled, "switched off");
    assert_eq!(r.plan.calibration.as_ref().map(|c| c.enabled), Some(false));
    assert!(calibration_summary(c)
        .sentence
        .contains("the calibration is switched off"));
    assert!(verdict_words(c).contains("so it is switched off"));
}

#[test]
fn the_verdict_follows_the_held_out_error_and_the_datasheet() {
    let mut c = Calibration::default();
    c.error.uncalibrated.overall = 0.30;
    let with = |c: &mut Calibration, held: Option<f64>| {
        c.error.held_out = held.map(|overall| MetricErrors {
            overall,
            ..MetricErrors::default()
        });
        FitVerdict::of(c)
    };
    assert_eq!(with(&mut c, None), FitVerdict::Unchecked);
    assert_eq!(with(&mut c, Some(0.05)), FitVerdict::Good);
    assert_eq!(with(&mut c, Some(GOOD_FIT_ERROR)), FitVerdict::Good);
    assert_eq!(with(&mut c, Some(0.15)), FitVerdict::Fair);
    assert_eq!(with(&mut c, Some(FAIR_FIT_ERROR)), FitVerdict::Fair);
    assert_eq!(with(&mut c, Some(0.25)), FitVerdict::Poor);
    assert!(verdict_words(&c).starts_with("A poor fit: held-out error 25.0% (above 20%)"));
    let w = calibration_summary(&c);
    assert!(
        w.sentence
            .ends_with("A poor fit: read the numbers with care."),
        "{}",
        w.sentence
    );
    assert!(w.badge.ends_with("(poor fit)"), "{}", w.badge);
    // As bad as the datasheet, or worse: the fit does not earn its place.
    assert_eq!(with(&mut c, Some(0.30)), FitVerdict::NoBetter);
    assert_eq!(with(&mut c, Some(0.08 + 0.30)), FitVerdict::NoBetter);
    assert!(verdict_words(&c).contains(
        "no better than the datasheet constants (38.0% against 30.0%): it does not earn its place"
    ));
    c.enabled = false;
    assert!(verdict_words(&c)
        .contains("so it is switched off and the datasheet constants are in force"));
    c.enabled = true;
    // A good fit adds nothing to the finance sentence.
    with(&mut c, Some(0.05));
    let w = calibration_summary(&c);
    assert!(
        w.sentence.ends_with("(datasheet constants: 30%)."),
        "{}",
        w.sentence
    );
    assert_eq!(w.badge, "calibrated · held-out error 5%");
}

#[test]
fn a_metric_no_file_gives_has_no_error_figure() {
    let plan = Plan::default();
    let mut points = pts(&plan, &[6.0, 12.0], 0.0, false);
    for p in &mut points {
        p.e2e = Default::default();
    }
    let r = calibrate_threads(&plan, &set_of(points), 1, &mut |_| true).unwrap();
    let e = &r.calibration.error;
    for m in [Some(e.in_sample), e.held_out, Some(e.uncalibrated)]
        .into_iter()
        .flatten()
    {
        assert_eq!(m.e2e, None, "not 0%: the files give no end-to-end latency");
        assert!(m.ttft.is_some() && m.tpot.is_some());
    }
}

#[test]
fn bad_inputs_are_named() {
    let plan = Plan::default();
    let mut set = set_of(pts(&plan, &[10.0], 0.0, false));
    set.points.clear();
    assert_eq!(
        Calibrator::new(&plan, &set).unwrap_err(),
        CalibrateError::NoPoints
    );
    let mut set = set_of(pts(&plan, &[10.0], 0.0, false));
    set.points[0].mean_prompt_tokens = 0.0;
    let e = Calibrator::new(&plan, &set).unwrap_err().to_string();
    assert!(e.starts_with("synthetic-10rps.json: mean prompt"), "{e}");
    let mut bad = plan.clone();
    bad.engine.max_num_seqs = 0;
    assert!(matches!(
        Calibrator::new(&bad, &set_of(pts(&plan, &[1.0], 0.0, false))),
        Err(CalibrateError::Plan(_))
    ));
}

#[test]
fn cancelling_stops_the_fit() {
    let plan = Plan::default();
    let set = set_of(pts(&plan, &[4.0, 12.0], 0.0, false));
    assert_eq!(
        calibrate_threads(&plan, &set, 1, &mut |_| false).unwrap_err(),
        CalibrateError::Cancelled
    );
}

#[test]
fn lognormal_fit_matches_the_sample() {
    let l = lognormal_fit([100u32, 100, 400, 400].into_iter());
    let LengthDist::LogNormal { median, sigma } = l.dist else {
        panic!("not lognormal")
    };
    assert!((median - 200.0).abs() < 1e-9);
    assert!((sigma - libm::log(2.0)).abs() < 1e-12);
    assert_eq!((l.min, l.max), (100, 400));
}

#[test]
fn constants_round_trip_through_theta_and_clamp() {
    let wt = 16e9 / 3.35e12;
    let t = TRUTH.theta(wt);
    let back = Constants::from_theta(t, wt);
    assert!(rel(back.bandwidth_efficiency, 0.8) < 1e-12);
    assert!(rel(back.step_overhead_s, 3e-3) < 1e-9);
    let with_more = Constants {
        seq_overhead_s: 25e-6,
        frontend_s: 0.04,
        ..TRUTH
    };
    let back = Constants::from_theta(with_more.theta(wt), wt);
    assert!(rel(back.seq_overhead_s, 25e-6) < 1e-9);
    assert!(rel(back.frontend_s, 0.04) < 1e-9);
    let wild = Constants::from_theta([50.0, -50.0, f64::NAN, 99.0, -3.0, 0.5, 9.0], wt);
    assert_eq!(wild.bandwidth_efficiency, MAX_EFFICIENCY);
    assert!(rel(wild.compute_efficiency, MIN_EFFICIENCY) < 1e-12);
    assert!(rel(wild.step_overhead_s, MIN_OVERHEAD_S) < 1e-12);
    assert!(rel(wild.frontend_s, MAX_FRONTEND_S) < 1e-9);
    assert_eq!(wild.seq_overhead_s, 0.0);
}

#[test]
fn recovers_the_constants_from_files_in_every_format() {
    use crate::measure::{import_files, write};
    let plan = Plan::default();
    let rates = [2.0, 6.0, 10.0, 14.0, 17.0];
    let points = pts(&plan, &rates, 0.02, true);
    let vllm: Vec<(String, String)> = points
        .iter()
        .map(|p| (p.source.clone(), write::vllm_json(p)))
        .collect();
    let guidellm = vec![("report.json".to_string(), write::guidellm_json(&points))];
    let table = vec![("sweep.csv".to_string(), write::table_csv(&points))];
    let wt = 16e9 / 3.35e12;
    let floor = |c: &Calibration| c.step_overhead_s.value + wt / c.bandwidth_efficiency.value;
    for (what, files) in [("vllm", vllm), ("guidellm", guidellm), ("csv", table)] {
        let refs: Vec<(&str, &[u8])> = files
            .iter()
            .map(|(n, t)| (n.as_str(), t.as_bytes()))
            .collect();
        let set = import_files(&refs).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(set.points.len(), rates.len(), "{what}");
        let r = calibrate_threads(&plan, &set, 2, &mut |_| true).unwrap();
        let c = &r.calibration;
        eprintln!("{what}: {}", calibration_words(c));
        // The decode step at light load (what the floor and the KV reads of a few
        // short contexts add up to) is what the files pin down: the lightest point's
        // TPOT, predicted within 8% (its own 2% noise included).
        let light = &r.points[0];
        assert!(
            rel(
                light.predicted.tpot_s.mean,
                light.measured.tpot_mean_s.unwrap()
            ) < 0.08,
            "{what}: floor {}, light TPOT {:?} predicted {}",
            floor(c),
            light.measured.tpot_mean_s,
            light.predicted.tpot_s.mean
        );
        assert!(
            rel(c.compute_efficiency.value, TRUTH.compute_efficiency) < 0.15,
            "{what}: compute {:?}",
            c.compute_efficiency
        );
        assert!(
            c.error.held_out.unwrap().overall < 0.15,
            "{what}: {:?}",
            c.error
        );
        assert_eq!(c.source.files.len(), files.len());
    }
}

#[test]
fn a_calibration_moved_to_another_gpu_is_flagged() {
    let plan = Plan::default();
    let set = set_of(pts(&plan, &[4.0, 12.0], 0.0, false));
    let mut r = calibrate_threads(&plan, &set, 1, &mut |_| true).unwrap();
    // Two points leave the fit unchecked against the datasheet: switch it on by hand.
    r.plan.calibration.as_mut().unwrap().enabled = true;
    let c = r.plan.calibration.clone().unwrap();
    assert_eq!(c.mismatch(&r.plan), None);
    let mut moved = r.plan.clone();
    moved.hardware.preset = "b200".into();
    moved.hardware.tp_degree = 2;
    let why = c.mismatch(&moved).expect("flagged");
    assert!(
        why.contains("GPU h100-sxm (plan: b200)") && why.contains("TP 1 (plan: 2)"),
        "{why}"
    );
    let report = crate::report::PlanReport::build(&moved, None, None);
    assert!(report
        .warnings
        .iter()
        .any(|w| w.id == "calibration_mismatch"));
    moved.calibration.as_mut().unwrap().enabled = false;
    let report = crate::report::PlanReport::build(&moved, None, None);
    assert!(!report
        .warnings
        .iter()
        .any(|w| w.id == "calibration_mismatch"));
}

#[test]
fn calibration_in_words_says_where_it_came_from_and_how_well_it_held() {
    let plan = Plan::default();
    let set = set_of(pts(&plan, &[4.0, 12.0], 0.0, false));
    let mut c = calibrate_threads(&plan, &set, 1, &mut |_| true)
        .unwrap()
        .calibration;
    c.source.model = "Llama-3.1-70B-Instruct-FP8".into();
    c.source.engine = String::new();
    c.enabled = true;
    c.seq_overhead_s = None;
    c.frontend_s = None;
    c.prefill_overhead_s = None;
    c.kv_read_efficiency = None;
    c.error.extrapolation = None;
    c.error.held_out = Some(MetricErrors {
        overall: 0.0812,
        ..MetricErrors::default()
    });
    c.error.uncalibrated.overall = 0.2687;
    c.bandwidth_efficiency.value = 0.81;
    c.compute_efficiency.value = 0.69;
    c.step_overhead_s.value = 0.0031;
    let w = calibration_summary(&c);
    assert_eq!(
        w.sentence,
        "Calibrated from 2 vllm bench serve measurements (Llama-3.1-70B-Instruct-FP8): \
         predictions missed measured latency by 8% on average on held-out runs \
         (datasheet constants: 27%)."
    );
    assert_eq!(w.badge, "calibrated · held-out error 8%");
    assert_eq!(
        calibration_words(&c),
        format!(
            "{} Fitted: 81% of the datasheet memory bandwidth, 69% of its compute, 3.1 ms fixed per step.",
            w.sentence
        )
    );
    c.enabled = false;
    let w = calibration_summary(&c);
    assert!(w
        .sentence
        .contains("switched off: the numbers use the datasheet constants (their error on the measurements: 27%)"));
    assert_eq!(w.badge, "datasheet constants");
    assert_eq!(calibration_words(&c), w.sentence);
    c.enabled = true;
    // With the extrapolation error and the other constants: both errors, every constant.
    c.error.extrapolation = Some(MetricErrors {
        overall: 0.1234,
        ..MetricErrors::default()
    });
    c.frontend_s = Some(Fitted::exact(0.0387));
    c.prefill_overhead_s = Some(Fitted::exact(0.0021));
    c.kv_read_efficiency = Some(Fitted::exact(0.55));
    let w = calibration_summary(&c);
    assert!(
        w.sentence.contains(
            "by 8% on average on held-out runs, and by 12% on the heavier half of the loads \
             when fitted on the lighter half (datasheet constants: 27%)."
        ),
        "{}",
        w.sentence
    );
    assert_eq!(w.badge, "calibrated · error up to 12%");
    assert_eq!(
        w.constants,
        "Fitted: 81% of the datasheet memory bandwidth, 69% of its compute, 3.1 ms fixed per \
         step, KV read at 55% of the weights' speed, 2.1 ms more per step with prompt tokens, \
         38.7 ms frontend per request."
    );
    c.error.held_out = None;
    c.error.extrapolation = None;
    c.error.in_sample.overall = 0.05;
    let w = calibration_summary(&c);
    assert!(w
        .sentence
        .contains("missed measured latency by 5% on average on the measured run itself"));
    assert_eq!(w.badge, "calibrated · in-sample error 5%");
}

/// A server that drafted 3 tokens a step at 0.6 a token, measured with its counters, and
/// a plan that does not draft: each run is simulated drafting as measured, so the fit
/// finds the hardware's step (2.18 tokens a step at 0.6 a token), not one more than
/// twice as fast. Without the counters it cannot.
#[test]
fn runs_that_drafted_are_fitted_with_their_measured_speculation() {
    let plan = Plan::default();
    let mut server = plan.clone();
    server.engine.spec_draft_tokens = 3;
    server.engine.spec_acceptance = 0.6;
    let rates = [2.0, 6.0, 10.0, 14.0];
    let points = pts(&server, &rates, 0.0, true);
    let s = points[0]
        .spec
        .expect("a drafting server reports its counters");
    assert_eq!(s.draft_len(), 3);
    assert!((s.acceptance() - 0.6).abs() < 1e-5, "{}", s.acceptance());

    let wt = 16e9 / 3.35e12;
    let floor = |c: &Calibration| c.step_overhead_s.value + wt / c.bandwidth_efficiency.value;
    let truth = TRUTH.step_overhead_s + wt / TRUTH.bandwidth_efficiency;

    let with = calibrate_threads(&plan, &set_of(points.clone()), 2, &mut |_| true).unwrap();
    let c = &with.calibration;
    assert!(rel(floor(c), truth) < 0.08, "floor {} vs {truth}", floor(c));
    assert!(c.error.held_out.unwrap().overall < 0.08, "{:?}", c.error);
    assert_eq!(c.source.spec.map(|s| s.draft_len()), Some(3));
    let words = spec_words(c, &with.plan).expect("the runs drafted");
    assert!(
        words.contains("--spec-draft-tokens 3 --spec-acceptance 0.6"),
        "{words}"
    );
    assert_eq!(
        with.plan.engine.spec_draft_tokens, 0,
        "the plan's own setting stays"
    );
    assert!(constants_words(c).contains("3 draft tokens a step"));

    let blind: Vec<MeasuredPoint> = points
        .into_iter()
        .map(|mut p| {
            p.spec = None;
            p
        })
        .collect();
    let without = calibrate_threads(&plan, &set_of(blind), 2, &mut |_| true).unwrap();
    let b = &without.calibration;
    assert!(
        rel(floor(b), truth) > 0.3,
        "without the counters the fit should miss: floor {} vs {truth}, {:?}",
        floor(b),
        b.error
    );

    // A plan that drafts, calibrated on runs whose counters say the server did not: the
    // runs are simulated without speculation, and the step comes back.
    let mut drafting = plan.clone();
    drafting.engine.spec_draft_tokens = 3;
    drafting.engine.spec_acceptance = 0.6;
    let plain: Vec<MeasuredPoint> = pts(&plan, &rates, 0.0, true)
        .into_iter()
        .map(|mut p| {
            p.spec = Some(crate::plan::SpecMeasured {
                drafts: 0,
                draft_tokens: 0,
                accepted_tokens: 0,
            });
            p
        })
        .collect();
    let off = calibrate_threads(&drafting, &set_of(plain), 2, &mut |_| true).unwrap();
    let o = &off.calibration;
    assert!(rel(floor(o), truth) < 0.08, "floor {} vs {truth}", floor(o));
    assert_eq!(
        spec_words(o, &off.plan),
        None,
        "no draft measured, none to suggest"
    );
    // Counters that do not add up are refused where a plan is read.
    let mut bad = off.plan.clone();
    if let Some(c) = bad.calibration.as_mut() {
        c.source.spec = Some(crate::plan::SpecMeasured {
            drafts: 10,
            draft_tokens: 30,
            accepted_tokens: 31,
        });
    }
    assert_eq!(bad.validate().unwrap_err().field, "calibration.source.spec");
}

/// A measured run is one workload: a plan of traffic classes is fitted exactly as the
/// same plan without them, and keeps its classes.
#[test]
fn a_plan_of_classes_fits_as_one_workload() {
    use crate::plan::classes::parse_class;
    let plan = Plan::default();
    let set = set_of(pts(&plan, &[4.0, 10.0, 16.0], 0.02, true));
    let alone = calibrate_threads(&plan, &set, 2, &mut |_| true).unwrap();
    let mut mixed = plan.clone();
    mixed.classes = vec![
        parse_class(&plan, "chat:share=0.5").unwrap(),
        parse_class(&plan, "long:share=0.5,input-len-median=4000").unwrap(),
    ];
    let with = calibrate_threads(&mixed, &set, 2, &mut |_| true).unwrap();
    assert_eq!(with.calibration.error, alone.calibration.error);
    assert_eq!(
        with.calibration.compute_efficiency,
        alone.calibration.compute_efficiency
    );
    assert_eq!(with.plan.classes, mixed.classes);
}

#[test]
fn a_model_name_states_its_size() {
    use super::run::params_in_name;
    let cases = [
        ("meta-llama/Llama-3.1-70B-Instruct", Some(70e9)),
        ("RedHatAI/Llama-3.1-70B-Instruct-FP8-dynamic", Some(70e9)),
        ("Qwen/Qwen3-235B-A22B-Instruct-2507", Some(235e9)),
        ("mistralai/Mixtral-8x7B-Instruct-v0.1", Some(56e9)),
        ("Qwen/Qwen2.5-1.5B", Some(1.5e9)),
        ("facebook/opt-125m", Some(125e6)),
        ("deepseek-ai/DeepSeek-R1", None),
        ("", None),
    ];
    for (name, want) in cases {
        assert_eq!(params_in_name(name), want, "{name}");
    }
}

#[test]
fn files_of_another_model_are_named_in_a_warning() {
    use super::run::model_mismatch;
    let plan = Plan::default();
    let w = model_mismatch("meta-llama/Llama-3.1-70B-Instruct", &plan).expect("a warning");
    assert!(
        w.contains("Llama-3.1-70B-Instruct") && w.contains("about 70B parameters"),
        "{w}"
    );
    assert!(w.contains("--model"), "{w}");
    for same in [
        "meta-llama/Llama-3.1-8B-Instruct",
        "deepseek-ai/DeepSeek-R1",
        "",
    ] {
        assert_eq!(model_mismatch(same, &plan), None, "{same}");
    }
    // Every public run of the accuracy table names its own model.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../validation");
    let text = std::fs::read_to_string(root.join("manifest.json")).expect("manifest");
    let manifest = crate::validate::read_manifest(&text).expect("reads");
    for set in &manifest.sets {
        let plan = set.plan().expect("plan");
        let files: Vec<(String, Vec<u8>)> = set
            .files
            .iter()
            .map(|f| {
                (
                    f.clone(),
                    std::fs::read(root.join(set.folder()).join(f)).unwrap(),
                )
            })
            .collect();
        let refs: Vec<(&str, &[u8])> = files
            .iter()
            .map(|(n, b)| (n.as_str(), b.as_slice()))
            .collect();
        let model = crate::measure::import_files(&refs)
            .unwrap()
            .model
            .unwrap_or_default();
        assert_eq!(model_mismatch(&model, &plan), None, "{}: {model}", set.id);
    }
}

#[test]
fn a_lighter_run_slower_to_first_token_than_a_heavier_one_is_named() {
    use super::run::ttft_falls_with_load;
    let plan = Plan::default();
    let warm = set_of(pts(&plan, &[2.0, 6.0, 10.0, 16.0], 0.0, false));
    let problem = |set: &MeasuredSet| CalibrationProblem::new(&plan, set).unwrap();
    assert_eq!(ttft_falls_with_load(&problem(&warm)), None);
    // The lightest run paid a second of kernel compilation on average.
    let mut cold = warm.clone();
    let t = &mut cold.points[0].ttft;
    t.mean_s = t.mean_s.map(|m| m + 1.0);
    let w = ttft_falls_with_load(&problem(&cold)).expect("named");
    assert!(w.contains("at 2 req/s") && w.contains("at 6 req/s"), "{w}");
    assert!(
        w.starts_with("the mean TTFT falls as the load rises"),
        "{w}"
    );
    // The report carries it.
    let report = calibrate_threads(&plan, &cold, 2, &mut |_| true).unwrap();
    assert!(report.warnings.contains(&w), "{:?}", report.warnings);
    // Heavier points with twice the prompts are another workload: nothing is claimed.
    let mut longer = cold.clone();
    for p in &mut longer.points[1..] {
        p.mean_prompt_tokens *= 2.0;
    }
    assert_eq!(ttft_falls_with_load(&problem(&longer)), None);
}

#[test]
fn a_fit_to_another_models_runs_starts_switched_off() {
    let plan = Plan::default();
    let mut points = pts(&plan, &[2.0, 6.0, 10.0, 16.0], 0.0, false);
    let own = calibrate_threads(&plan, &set_of(points.clone()), 2, &mut |_| true).unwrap();
    assert!(own.calibration.enabled, "{:?}", own.verdict);
    for p in &mut points {
        p.model = Some("meta-llama/Llama-3.1-70B-Instruct".into());
    }
    let other = calibrate_threads(&plan, &set_of(points), 2, &mut |_| true).unwrap();
    // The same fit, judged the same, but not in force: the plan keeps its constants.
    assert_eq!(other.verdict, own.verdict);
    assert!(!other.calibration.enabled);
    assert!(!other.plan.calibration.as_ref().unwrap().enabled);
    assert!(
        other.warnings[0].contains("the fit starts switched off"),
        "{:?}",
        other.warnings
    );
}

#[test]
fn loads_are_named_in_the_units_the_runs_used() {
    use crate::plan::MeasuredLoad;
    let label = |l: MeasuredLoad| load_label(&l);
    assert_eq!(
        label(MeasuredLoad::Concurrency { concurrency: 1 }),
        "1 client"
    );
    assert_eq!(
        label(MeasuredLoad::Concurrency { concurrency: 64 }),
        "64 clients"
    );
    assert_eq!(
        label(MeasuredLoad::Rate {
            rate_rps: 0.5,
            cv: 1.0
        }),
        "0.5 req/s"
    );
    assert_eq!(
        label(MeasuredLoad::Rate {
            rate_rps: 2.0,
            cv: 0.5
        }),
        "2 req/s cv 0.50"
    );
}
