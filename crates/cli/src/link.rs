//! Placeholder until these commands land.

use crate::args::Args;

/// `goodput link`.
pub fn run_link(_args: &mut Args) -> Result<String, String> {
    Err("this command is not built yet".into())
}

/// `goodput decode`.
pub fn run_decode(_args: &mut Args) -> Result<String, String> {
    Err("this command is not built yet".into())
}
