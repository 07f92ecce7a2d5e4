//! The `accum` command-line tool as a library: argument parsing, commands
//! and their text and JSON renderings.
//!
//! Exit codes are part of the interface (docs/architecture.md): 0 ok, 1 the input is
//! invalid (findings printed), 2 usage or I/O error.

use crate::output::eprintln_safe;
use std::process::ExitCode;

mod calc;
mod cli;
mod commands;
mod convert;
mod diagnostic;
mod error;
mod formats;
mod fsio;
#[cfg(feature = "harness")]
pub mod harness;
pub mod interop;
mod load;
mod output;
mod quantity;
mod replan;
mod rules;
mod runner;
mod sheet;
// The source parser is being reworked in place; its items are
// crate-internal though still spelled `pub`.
#[allow(
    unreachable_pub,
    reason = "crate-internal module; items to become pub(crate)"
)]
#[cfg_attr(
    not(feature = "harness"),
    allow(dead_code, reason = "`Document::format` is read by the harness")
)]
mod source;
mod starter;
mod suggest;
mod training;
mod typed;
mod validate;

pub use diagnostic::{Diagnostic, Severity};
pub use load::{CliConfig, ConfigError, Loaded, load_config, load_config_str};

/// Parses the process arguments, runs the command and returns its exit code.
pub fn main() -> ExitCode {
    output::set_bin_name("accum");
    let cli = match cli::parse_accum() {
        Ok(cli) => cli,
        Err(err) => {
            // clap prints help and version to stdout with exit 0, and usage
            // errors to stderr with exit 2.
            let _ = err.print();
            return ExitCode::from(u8::try_from(err.exit_code()).unwrap_or(2));
        }
    };
    match commands::execute(&cli) {
        Ok(exit) => exit.into(),
        Err(err) => {
            if !err.is_reported() {
                eprintln_safe!("error: {err}");
            }
            err.exit().into()
        }
    }
}

/// The `schema`, `validate`, `replan`, `calc` and `completions` commands for
/// a user's own configuration type, as the `main` of their binary:
///
/// ```no_run
/// use accum::AccumConfig;
/// use serde::Deserialize;
///
/// #[derive(AccumConfig, Deserialize, schemars::JsonSchema)]
/// struct Train {
///     #[accum(micro_batch)]
///     micro_batch: u32,
///     #[accum(accumulation)]
///     grad_accum: u32,
///     #[accum(replicas)]
///     replicas: u32,
/// }
///
/// fn main() -> std::process::ExitCode {
///     accum_cli::run::<Train>()
/// }
/// ```
pub fn run<T: CliConfig>() -> ExitCode {
    let bin = std::env::args()
        .next()
        .and_then(|arg0| {
            std::path::Path::new(&arg0)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "accum".to_owned());
    output::set_bin_name(&bin);
    let build = move || cli::user_command(&bin);
    let parsed = build().try_get_matches().and_then(|matches| {
        <cli::CommonCommand as clap::FromArgMatches>::from_arg_matches(&matches)
    });
    let parsed = match parsed {
        Ok(parsed) => parsed,
        Err(err) => {
            let _ = err.print();
            return ExitCode::from(u8::try_from(err.exit_code()).unwrap_or(2));
        }
    };
    match commands::run_common::<T>(&parsed, &build, &commands::Hooks::derived()) {
        Ok(exit) => exit.into(),
        Err(err) => {
            eprintln_safe!("error: {err}");
            err.exit().into()
        }
    }
}
