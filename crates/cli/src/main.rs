//! `goodput`: the capacity planner on the command line.
//!
//! Every command prints to stdout and exits 0, or prints one line to stderr and
//! exits non-zero. The numbers come from `goodput-core`, the same code the web app runs.
//! Arguments are parsed by clap; the plan flags and their help come from the core's
//! field registry (see [`args`]).
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod alerts;
mod args;
mod calibrate;
mod capacity;
mod completions;
mod disagg;
mod input;
mod link;
mod plan_cmd;
mod presets_cmd;
mod progress;
mod schedule;
mod search;
mod shootout;
mod simulate;
mod sweep;
mod validate;

use std::ffi::OsString;

use args::{with_plan_flags, Args};
use clap::error::ErrorKind;
use clap::Command;

/// The whole command line: every command with its flags.
pub fn command() -> Command {
    let with_plan = |cmd: Command| with_plan_flags(cmd, false);
    Command::new("goodput")
        .about("goodput: LLM-serving capacity planner")
        .version(env!("CARGO_PKG_VERSION"))
        .after_help(
            "Numbers accept scientific notation (8e9). Times are in seconds, rates in \
             requests/s, unless a flag's help says otherwise.\n\
             Run `goodput <command> --help` for the flags of one command, and \
             `goodput completions bash|zsh|fish` for shell completions.",
        )
        .subcommand(with_plan(simulate::command()))
        .subcommand(with_plan(search::command()))
        .subcommand(with_plan(sweep::command()))
        .subcommand(with_plan(capacity::command()))
        .subcommand(with_plan(schedule::command()))
        .subcommand(with_plan(plan_cmd::command()))
        .subcommand(with_plan(shootout::command()))
        .subcommand(with_plan_flags(disagg::command(), true))
        .subcommand(presets_cmd::command())
        .subcommand(with_plan(calibrate::command()))
        .subcommand(validate::command())
        .subcommand(with_plan(alerts::command()))
        .subcommand(with_plan(link::link_command()))
        .subcommand(link::decode_command())
        .subcommand(completions::command())
        .subcommand(
            Command::new("version")
                .about("print the version")
                .hide(true),
        )
}

/// What a command line asks for: `Ok(Ok((command, args)))` to run a command,
/// `Ok(Err(text))` to print help or the version, `Err(line)` for a mistake.
/// `argv` leaves out the program name.
pub fn parse<I, T>(argv: I) -> Result<Result<(String, Args), String>, String>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let argv = std::iter::once(OsString::from("goodput")).chain(argv.into_iter().map(Into::into));
    let matches = match command().try_get_matches_from(argv) {
        Ok(m) => m,
        Err(e) => {
            return match e.kind() {
                ErrorKind::DisplayHelp
                | ErrorKind::DisplayVersion
                | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                    Ok(Err(e.to_string().trim_end().to_string()))
                }
                _ => Err(args::one_line(&e)),
            }
        }
    };
    match matches.subcommand() {
        None => Ok(Err(command()
            .render_help()
            .to_string()
            .trim_end()
            .to_string())),
        Some(("version", _)) => Ok(Err(format!("goodput {}", env!("CARGO_PKG_VERSION")))),
        Some((name, m)) => Ok(Ok((name.to_string(), Args::new(m.clone())))),
    }
}

/// Runs one command line (without the program name): the text to print, or the
/// one-line error.
fn run<I, T>(argv: I) -> Result<String, String>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let (name, mut args) = match parse(argv)? {
        Ok(command) => command,
        Err(text) => return Ok(text),
    };
    match name.as_str() {
        "simulate" => simulate::run(&mut args),
        "search" => search::run(&mut args),
        "sweep" => sweep::run(&mut args),
        "capacity" => capacity::run(&mut args),
        "schedule" => schedule::run(&mut args),
        "plan" => plan_cmd::run(&mut args),
        "shootout" => shootout::run(&mut args),
        "disagg" => disagg::run(&mut args),
        "presets" => presets_cmd::run(&mut args),
        "calibrate" => calibrate::run(&mut args),
        "validate" => validate::run(&mut args),
        "alerts" => alerts::run(&mut args),
        "link" => link::run_link(&mut args),
        "decode" => link::run_decode(&mut args),
        "completions" => completions::run(&args, command()),
        other => Err(format!("unknown command '{other}'; run `goodput help`")),
    }
}

/// Writes the command's output and a newline. A reader that stopped early (`goodput plan |
/// head`) is fine; any other failure (a full disk) is an error, so that a script never
/// takes a cut-off file for a finished one.
fn write_out(to: &mut impl std::io::Write, out: &str) -> Result<(), String> {
    match writeln!(to, "{out}").and_then(|()| to.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(format!("could not write the output: {e}")),
    }
}

fn main() {
    match run(std::env::args_os().skip(1)) {
        Ok(out) => {
            if let Err(msg) = write_out(&mut std::io::stdout().lock(), &out) {
                eprintln!("goodput: {msg}");
                std::process::exit(2);
            }
        }
        Err(msg) => {
            eprintln!("goodput: {msg}");
            std::process::exit(2);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every long flag some command defines, `--` included.
    fn defined_flags(cmd: &Command, out: &mut std::collections::BTreeSet<String>) {
        for a in cmd.get_arguments() {
            if let Some(l) = a.get_long() {
                out.insert(format!("--{l}"));
            }
            for alias in a.get_all_aliases().into_iter().flatten() {
                out.insert(format!("--{alias}"));
            }
        }
        for sub in cmd.get_subcommands() {
            defined_flags(sub, out);
        }
    }

    /// A flag name the code reads (`args.value(..)`, `args.flag(..)`, …) that no command
    /// defines would read as absent and silently do nothing: every quoted flag name in
    /// the CLI's sources must be a defined flag (or the stem of a family of them).
    #[test]
    fn every_flag_the_code_names_is_defined() {
        let mut defined = std::collections::BTreeSet::new();
        defined_flags(&command(), &mut defined);
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
        let mut unknown = Vec::new();
        let mut named = 0;
        for entry in std::fs::read_dir(dir).expect("the sources") {
            let path = entry.expect("an entry").path();
            let text = std::fs::read_to_string(&path).expect("a source file");
            // The code, not its tests (which name made-up flags on purpose).
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            for piece in code.split("\"--").skip(1) {
                let name: String = piece
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-')
                    .collect();
                if name.is_empty() || !piece[name.len()..].starts_with('"') {
                    continue;
                }
                named += 1;
                let flag = format!("--{name}");
                // clap's own, and the stem of a family (`--input-len` for
                // `--input-len-median`, `--input-len-p95`, …) that a helper completes.
                let builtin = flag == "--help" || flag == "--version";
                let stem = defined.iter().any(|d| d.starts_with(&format!("{flag}-")));
                if !(defined.contains(&flag) || builtin || stem) {
                    let file = path.file_name().unwrap_or_default().to_string_lossy();
                    unknown.push(format!("src/{file}: {flag}"));
                }
            }
        }
        // The flags named without their dashes, in the lists of flags with code of
        // their own.
        for name in args::OWN_CODE {
            named += 1;
            if !defined.contains(&format!("--{name}")) {
                unknown.push(format!("src/args.rs: {name}"));
            }
        }
        assert!(named > 80, "only {named} flag names found in the sources");
        assert!(
            unknown.is_empty(),
            "flags named in the code but defined by no command: {unknown:?}"
        );
    }

    /// A writer that takes `room` bytes, then fails with `kind`.
    struct Full {
        room: usize,
        kind: std::io::ErrorKind,
    }

    impl std::io::Write for Full {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.room == 0 {
                return Err(std::io::Error::new(self.kind, "no room"));
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_failed_write_is_an_error_and_a_closed_pipe_is_not() {
        use std::io::ErrorKind;
        let full = |room| Full {
            room,
            kind: ErrorKind::StorageFull,
        };
        assert_eq!(write_out(&mut full(100), "fits"), Ok(()));
        let err = write_out(&mut full(3), "does not fit").expect_err("disk full");
        assert!(err.starts_with("could not write the output"), "{err}");
        let mut pipe = Full {
            room: 0,
            kind: ErrorKind::BrokenPipe,
        };
        assert_eq!(write_out(&mut pipe, "nobody reads"), Ok(()));
    }

    #[test]
    fn the_command_line_is_consistent() {
        command().debug_assert();
    }

    #[test]
    fn no_command_prints_the_help_and_a_typo_gets_a_suggestion() {
        let help = run(Vec::<String>::new()).expect("help");
        assert!(
            help.contains("simulate") && help.contains("completions"),
            "{help}"
        );
        assert_eq!(
            run(["--version"]),
            Ok(format!("goodput {}", env!("CARGO_PKG_VERSION")))
        );
        assert_eq!(run(["version"]), run(["--version"]));
        let e = run(["simulat"]).unwrap_err();
        assert_eq!(e, "unknown command 'simulat'; did you mean 'simulate'?");
        let e = run(["xyzzy"]).unwrap_err();
        assert_eq!(e, "unknown command 'xyzzy'; run `goodput help`");
    }
}
