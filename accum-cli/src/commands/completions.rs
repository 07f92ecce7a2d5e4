//! `accum completions SHELL`: a shell completion script for the binary
//! that runs it (accum, or a user's own binary).

use crate::cli::CompletionsArgs;
use crate::error::{CliError, Exit};
use crate::output::print_text;

pub(crate) fn run(args: &CompletionsArgs, mut command: clap::Command) -> Result<Exit, CliError> {
    let bin = command.get_name().to_owned();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut command, bin, &mut out);
    print_text(&String::from_utf8_lossy(&out))?;
    Ok(Exit::Ok)
}
