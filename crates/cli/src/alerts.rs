//! Placeholder until this command lands.

use crate::args::Args;

/// Runs the command.
pub fn run(_args: &mut Args) -> Result<String, String> {
    Err("this command is not built yet".into())
}
