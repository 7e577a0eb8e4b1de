//! The accuracy table against public measured runs (`validation/`): every error stays
//! within the bound the manifest states, and `docs/accuracy.md` shows the table the
//! code computes today.

use std::path::{Path, PathBuf};

use goodput_core::calibrate::FitTerms;
use goodput_core::validate::{read_manifest, validate};

/// The repository's root (this crate sits in `crates/core`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The lines between the table's markers in `docs/accuracy.md`.
const BEGIN: &str = "<!-- validate:begin (goodput validate --markdown) -->";
const END: &str = "<!-- validate:end -->";

#[test]
fn public_runs_stay_within_their_bounds_and_the_published_table_is_current() {
    let dir = root().join("validation");
    let text = std::fs::read_to_string(dir.join("manifest.json")).expect("manifest");
    let manifest = read_manifest(&text).expect("manifest reads");
    let read = |folder: &str, file: &str| -> Result<Vec<u8>, String> {
        std::fs::read(dir.join(folder).join(file)).map_err(|e| e.to_string())
    };
    let threads = goodput_core::sim::threads::default_threads();
    let report = validate(
        &manifest,
        &[],
        &read,
        FitTerms::DEFAULT,
        threads,
        &mut |_| true,
    )
    .expect("validates");
    // Every set yields both protocols, every carry a row.
    assert_eq!(
        report.rows.len(),
        2 * manifest.sets.len() + manifest.carries.len()
    );
    let over: Vec<String> = report
        .failures()
        .iter()
        .map(|r| {
            format!(
                "{} ({}): {} over {:?}: {:?}",
                r.set,
                r.protocol.words(),
                r.exceeded().join(", "),
                r.bound,
                r.calibrated
            )
        })
        .collect();
    assert!(
        over.is_empty(),
        "errors past their bounds:\n{}",
        over.join("\n")
    );
    let doc = std::fs::read_to_string(root().join("docs/accuracy.md")).expect("docs");
    let start = doc.find(BEGIN).expect("begin marker") + BEGIN.len();
    let end = doc.find(END).expect("end marker");
    assert_eq!(
        doc[start..end].trim(),
        report.published_markdown(&manifest).trim(),
        "docs/accuracy.md is stale: paste `goodput validate --markdown` between its markers"
    );
}

#[test]
fn every_set_names_its_source_commit_and_licence_in_its_folder() {
    let dir = root().join("validation");
    let text = std::fs::read_to_string(dir.join("manifest.json")).expect("manifest");
    let manifest = read_manifest(&text).expect("manifest reads");
    for s in &manifest.sets {
        assert!(s.source.starts_with("https://github.com/"), "{}", s.id);
        assert_eq!(s.commit.len(), 40, "{}", s.id);
        assert!(!s.licence.is_empty(), "{}", s.id);
        let source = std::fs::read_to_string(dir.join(s.folder()).join("SOURCE.md"))
            .unwrap_or_else(|e| panic!("{}: SOURCE.md: {e}", s.id));
        assert!(
            source.contains(&s.commit),
            "{}: SOURCE.md names another commit",
            s.id
        );
        assert!(
            source.contains(&s.licence),
            "{}: SOURCE.md names no {}",
            s.id,
            s.licence
        );
        for f in &s.files {
            assert!(dir.join(s.folder()).join(f).is_file(), "{}: {f}", s.id);
        }
        s.plan().unwrap_or_else(|e| panic!("{e}"));
    }
}

/// A shared-prefix plan's warm-up fills the cache without queueing the measured
/// requests: on the multi-turn runs past saturation (which began each rate on an idle
/// server), a calibration with 300 warm-up requests predicts the heaviest point as one
/// whose passages simply start cached, not as a run that starts with a queue.
#[test]
fn a_warm_up_past_saturation_leaves_the_measured_requests_an_idle_server() {
    use goodput_core::calibrate::CalibrationProblem;
    use goodput_core::measure::import_files;
    let dir = root().join("validation");
    let text = std::fs::read_to_string(dir.join("manifest.json")).expect("manifest");
    let manifest = read_manifest(&text).expect("manifest reads");
    let set = manifest
        .sets
        .iter()
        .find(|s| s.id == "do-h200-llama70b-multiturn")
        .expect("the multi-turn set");
    let contents: Vec<(String, Vec<u8>)> = set
        .files
        .iter()
        .map(|f| {
            let bytes = std::fs::read(dir.join(set.folder()).join(f)).expect("file");
            (f.clone(), bytes)
        })
        .collect();
    let refs: Vec<(&str, &[u8])> = contents
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    let measured = import_files(&refs).expect("imports");
    let cold = set.plan().expect("plan");
    assert_eq!(cold.run.warmup_requests, 0);
    let mut warm = cold.clone();
    warm.run.warmup_requests = 300;
    // Half the datasheet's bandwidth and compute: a server that saturates below the
    // heaviest rate, as the real one did.
    let predict = |plan: &goodput_core::plan::Plan, i: usize| {
        let problem = CalibrationProblem::new(plan, &measured).expect("problem");
        let mut c = problem.datasheet();
        c.bandwidth_efficiency = 0.5;
        c.compute_efficiency = 0.5;
        problem.predict(i, &c).expect("simulates")
    };
    let heaviest = measured.points.len() - 1;
    let light = predict(&cold, 0);
    let (cold, warm) = (predict(&cold, heaviest), predict(&warm, heaviest));
    assert!(
        cold.ttft_s.mean > 5.0 * light.ttft_s.mean,
        "the heaviest point queues (past saturation): mean TTFT {:.3} s against {:.3} s at the lightest",
        cold.ttft_s.mean,
        light.ttft_s.mean
    );
    let ratio = warm.ttft_s.mean / cold.ttft_s.mean;
    assert!(
        (0.8..1.25).contains(&ratio),
        "mean TTFT with a warm-up {:.3} s against {:.3} s with the passages cached",
        warm.ttft_s.mean,
        cold.ttft_s.mean
    );
}
