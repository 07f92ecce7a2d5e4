//! The `accum` command-line tool as a library: argument parsing, commands
//! and their text and JSON renderings.
//!
//! Exit codes are part of the interface (DESIGN.md): 0 ok, 1 the input is
//! invalid (findings printed), 2 usage or I/O error.

use std::process::ExitCode;

use clap::Parser;

mod calc;
mod cli;
pub mod diagnostic;
mod error;
pub mod fsio;
pub mod interop;
mod output;
pub mod replan;
pub mod source;
pub mod validate;

pub use cli::{Cli, Command, Format};
pub use error::{CliError, Exit};

/// Parses the process arguments, runs the command and returns its exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            // clap prints help and version to stdout with exit 0, and usage
            // errors to stderr with exit 2.
            let _ = err.print();
            return ExitCode::from(u8::try_from(err.exit_code()).unwrap_or(2));
        }
    };
    match execute(&cli) {
        Ok(exit) => exit.into(),
        Err(err) => {
            eprintln!("error: {err}");
            err.exit().into()
        }
    }
}

/// Runs one parsed command, writing its output to stdout.
pub fn execute(cli: &Cli) -> Result<Exit, CliError> {
    match &cli.command {
        Command::Calc(args) => calc::run(args),
    }
}
