//! `goodput completions SHELL`: a completion script for bash, zsh or fish.

use clap::{Arg, Command};
use clap_complete::Shell;

use crate::args::Args;

/// The shells a script is printed for.
const SHELLS: [&str; 3] = ["bash", "zsh", "fish"];

/// The command and its flags.
pub fn command() -> Command {
    Command::new("completions")
        .about("print a shell completion script (bash, zsh or fish)")
        .long_about(
            "Prints a completion script for goodput's commands and flags.\n  \
             bash: goodput completions bash > /etc/bash_completion.d/goodput\n  \
             zsh:  goodput completions zsh > \"${fpath[1]}/_goodput\"\n  \
             fish: goodput completions fish > ~/.config/fish/completions/goodput.fish",
        )
        .arg(
            Arg::new("shell")
                .value_name("SHELL")
                .required(true)
                .help("bash, zsh or fish")
                .value_parser(SHELLS),
        )
}

/// Runs the command for `whole`, the command line with every command and flag (the
/// crate root's `command()`: this module, below the root, is handed it).
pub fn run(args: &Args, mut whole: Command) -> Result<String, String> {
    let name = args.positionals("shell").pop().unwrap_or_default();
    let shell = match name.as_str() {
        "bash" => Shell::Bash,
        "zsh" => Shell::Zsh,
        "fish" => Shell::Fish,
        other => {
            return Err(format!(
                "completions: expected bash, zsh or fish, got '{other}'"
            ))
        }
    };
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut whole, "goodput", &mut out);
    String::from_utf8(out)
        .map(|s| s.trim_end().to_string())
        .map_err(|e| format!("completions: {e}"))
}
