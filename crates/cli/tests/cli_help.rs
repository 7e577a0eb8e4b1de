//! `--help`, typo suggestions, shell completions and bad values, run as a user would.

mod common;

use common::{failure, goodput, stdout};
use goodput_core::plan::fields::FIELDS;

/// Text with every run of whitespace made one space, so wrapped help still matches.
fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn help_lists_every_registry_flag_with_its_help_and_range() {
    // `disagg` takes every plan flag and the pool flags.
    let help = squash(&stdout(&goodput(&["disagg", "--help"])));
    let mut flags = 0;
    for f in FIELDS {
        let Some(flag) = f.flag else { continue };
        let line = format!("--{}", flag.name);
        assert!(help.contains(&line), "{line} missing from disagg --help");
        assert!(
            help.contains(&squash(&format!("{}: {}", f.label, f.help))),
            "{line}: label and help of {} missing",
            f.path
        );
        let range = f.range_words(f.flag_units());
        assert!(help.contains(&squash(&range)), "{line}: range '{range}'");
        for alias in flag.aliases {
            assert!(help.contains(&format!("--{alias}")), "alias --{alias}");
        }
        flags += 1;
    }
    assert!(flags >= 60, "only {flags} plan flags");
    // Every command that takes a plan lists the plan flags too.
    let simulate = squash(&stdout(&goodput(&["simulate", "--help"])));
    assert!(simulate.contains("--max-num-seqs <N>"), "{simulate}");
    assert!(
        simulate.contains("whole number in 1..=16384 seqs"),
        "{simulate}"
    );
    assert!(
        !simulate.contains("--prefill-tp"),
        "pool flags only on disagg"
    );
    // `goodput` alone, and `goodput help`, list the commands.
    for args in [&[][..], &["help"][..]] {
        let top = stdout(&goodput(args));
        for command in ["simulate", "disagg", "completions"] {
            assert!(top.contains(command), "{command} in {top}");
        }
    }
}

#[test]
fn a_typo_gets_a_suggestion() {
    let err = failure(&goodput(&["simulat"]), "command typo");
    assert!(err.contains("did you mean 'simulate'"), "{err}");
    let err = failure(&goodput(&["search", "--max-num-seq", "64"]), "flag typo");
    assert!(
        err.starts_with("goodput: --max-num-seq: unknown flag; did you mean '--max-num-seqs'?"),
        "{err}"
    );
}

#[test]
fn completions_name_every_command() {
    for shell in ["bash", "zsh", "fish"] {
        let script = stdout(&goodput(&["completions", shell]));
        for command in ["simulate", "search", "disagg", "decode", "completions"] {
            assert!(script.contains(command), "{shell}: {command}");
        }
        assert!(script.contains("max-num-seqs"), "{shell}: plan flags");
    }
    let bash = stdout(&goodput(&["completions", "bash"]));
    assert!(bash.contains("complete -F"), "a bash completion function");
    // The names a choice flag takes are completed too.
    assert!(bash.contains("joint marginal"), "--slo-mode's names");
    failure(&goodput(&["completions", "tcsh"]), "unknown shell");
    failure(&goodput(&["completions"]), "no shell");
}

#[test]
fn a_bad_value_names_the_flag_in_the_users_units() {
    for (args, words) in [
        (
            &["simulate", "--max-num-seqs", "lots"][..],
            "--max-num-seqs: expected a whole number in 1..=16384 seqs, got 'lots'",
        ),
        // Beyond what a whole number holds: still the field's own range.
        (
            &["simulate", "--max-num-seqs", "5e9"][..],
            "--max-num-seqs: expected a whole number in 1..=16384 seqs, got '5e9'",
        ),
        // A command's own whole-number flag, too large.
        (
            &["simulate", "--replications", "5e9"][..],
            "--replications: expected a whole number, at most 4294967295, got '5e9'",
        ),
        (
            &["simulate", "--seed", "-1"][..],
            "--seed: expected a whole number, 0 or more, got '-1'",
        ),
        (
            &["simulate", "--ttft-slo", "-0.5"][..],
            "--ttft-slo: slo.ttft_s: must be a number in (0, 3600] s, got -0.5",
        ),
        (
            &["simulate", "--kv-policy", "lru"][..],
            "--kv-policy: expected none|reserve|paged, got 'lru'",
        ),
        (
            &["disagg", "--kv-link-gbps", "100000"][..],
            "--kv-link-gbps: disagg.kv_link.bandwidth_bytes_per_s: must be a number in \
             [0.008, 80000] Gbit/s, got 100000",
        ),
        (
            &["simulate", "--peak-rate"][..],
            "--peak-rate: missing value",
        ),
        (
            &["simulate", "--seed", "1", "--seed", "2"][..],
            "--seed: given more than once",
        ),
    ] {
        let err = failure(&goodput(args), words);
        assert!(
            err.starts_with(&format!("goodput: {words}")),
            "{words}: {err}"
        );
    }
}
