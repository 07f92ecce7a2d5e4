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
mod escape;
mod formats;
mod fsio;
#[cfg(feature = "harness")]
pub mod harness;
pub mod interop;
mod load;
mod outfile;
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

/// The standard library's words for a number that does not parse, and
/// accum's: a value given on the command line is the user's input, and its
/// message says what to write.
const NUMBER_WORDS: [(&str, &str); 6] = [
    (
        "invalid digit found in string",
        "not a whole number: write digits only, e.g. 8",
    ),
    (
        "cannot parse integer from empty string",
        "empty: give a whole number, e.g. 8",
    ),
    (
        "number too large to fit in target type",
        "too large for this option",
    ),
    (
        "number too small to fit in target type",
        "too small for this option",
    ),
    ("number would be zero for non-zero type", "must not be 0"),
    (
        "invalid float literal",
        "not a number: write e.g. 0.5 or 1e-4",
    ),
];

/// Prints a command-line error as clap does (help and version on stdout
/// with exit 0, usage errors on stderr with exit 2), with accum's words for
/// a number that does not parse.
fn usage_error(err: &clap::Error) -> ExitCode {
    let code = ExitCode::from(u8::try_from(err.exit_code()).unwrap_or(2));
    if err.kind() != clap::error::ErrorKind::ValueValidation {
        let _ = err.print();
        return code;
    }
    let rendered = err.render();
    let mut text = if convert::stderr_color() {
        rendered.ansi().to_string()
    } else {
        rendered.to_string()
    };
    for (library, ours) in NUMBER_WORDS {
        text = text.replace(library, ours);
    }
    output::eprint_styled(&text);
    code
}

/// Parses the process arguments, runs the command and returns its exit code.
pub fn main() -> ExitCode {
    output::set_bin_name("accum");
    let cli = match cli::parse_accum() {
        Ok(cli) => cli,
        Err(err) => return usage_error(&err),
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
        Err(err) => return usage_error(&err),
    };
    match commands::run_common::<T>(&parsed, &build, &commands::Hooks::derived()) {
        Ok(exit) => exit.into(),
        Err(err) => {
            eprintln_safe!("error: {err}");
            err.exit().into()
        }
    }
}
