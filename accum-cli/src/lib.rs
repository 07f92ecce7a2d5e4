//! The `accum` command-line tool as a library: argument parsing, commands
//! and their text and JSON renderings.
//!
//! Exit codes are part of the interface (docs/architecture.md): 0 ok, 1 the input is
//! invalid (findings printed), 2 usage or I/O error.

// Without the commands (the `load` layer), the modules they share with the
// loader keep items only the commands use.
#![cfg_attr(
    not(feature = "cli"),
    allow(
        dead_code,
        unused_macros,
        unused_imports,
        reason = "the modules the loader shares also serve the commands"
    )
)]

#[cfg(feature = "cli")]
use crate::output::eprintln_safe;
#[cfg(feature = "cli")]
use std::process::ExitCode;

#[cfg(feature = "cli")]
mod calc;
#[cfg(feature = "cli")]
mod cli;
#[cfg(feature = "cli")]
mod commands;
#[cfg(feature = "cli")]
mod convert;
mod diagnostic;
mod error;
mod escape;
mod fix;
#[cfg(feature = "cli")]
mod formats;
#[cfg(feature = "harness")]
pub mod harness;
pub mod interop;
mod load;
#[cfg(feature = "cli")]
mod outfile;
mod output;
#[cfg(feature = "cli")]
mod quantity;
#[cfg(feature = "cli")]
mod replan;
#[cfg(feature = "cli")]
mod rulebook;
#[cfg(feature = "cli")]
mod runner;
#[cfg(feature = "cli")]
mod sheet;
#[cfg(feature = "cli")]
mod writes;
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
#[cfg(feature = "cli")]
mod starter;
mod style;
mod suggest;
#[cfg(feature = "cli")]
mod training;
mod typed;
mod validate;

pub use diagnostic::{Consequence, Diagnostic, Location, Severity};
pub use fix::{Applicability, Suggestion, TextEdit};
pub use load::{CliConfig, ConfigError, Loaded, load_config, load_config_str};

/// The standard library's words for a number that does not parse, and
/// accum's: a value given on the command line is the user's input, and its
/// message says what to write.
#[cfg(feature = "cli")]
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
///
/// An argument that clap quotes is shown on one line, its control and
/// escape characters visible ([`escape::line`]): a file name holding a line
/// break and `::error::` stays one line of the message. When an argument
/// holds such a character, the arguments are parsed again by `again` with
/// each one shown so, and that error is printed: it says the same of the
/// same arguments, as a reader should see them.
#[cfg(feature = "cli")]
fn usage_error(err: &clap::Error, again: &dyn Fn(Vec<String>) -> Option<clap::Error>) -> ExitCode {
    let code = ExitCode::from(u8::try_from(err.exit_code()).unwrap_or(2));
    let args: Vec<String> = std::env::args_os()
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect();
    let shown: Vec<String> = args
        .iter()
        .map(|arg| escape::line(arg).into_owned())
        .collect();
    let hostile = shown != args;
    let reparsed = if hostile { again(shown) } else { None };
    let err = reparsed
        .as_ref()
        .filter(|again| again.kind() == err.kind())
        .unwrap_or(err);
    let validation = err.kind() == clap::error::ErrorKind::ValueValidation;
    if !validation && !hostile {
        let _ = err.print();
        return code;
    }
    let rendered = err.render();
    let mut text = if err.use_stderr() && style::stderr() {
        rendered.ansi().to_string()
    } else {
        rendered.to_string()
    };
    if validation {
        for (library, ours) in NUMBER_WORDS {
            text = text.replace(library, ours);
        }
    }
    // Whatever else quotes an argument (an error the shown arguments do
    // not give again) quotes it shown.
    for arg in args.iter().filter(|arg| arg.chars().any(escape::is_hidden)) {
        text = text.replace(arg.as_str(), &escape::line(arg));
    }
    if err.use_stderr() {
        output::eprint_styled(&text);
    } else {
        let _ = output::print_styled(&text);
    }
    code
}

/// Parses the process arguments, runs the command and returns its exit code.
/// The `accum` binary's entry point (`main.rs`), not an API: a program of
/// one's own calls [`run`].
#[doc(hidden)]
#[cfg(feature = "cli")]
pub fn main() -> ExitCode {
    output::set_bin_name("accum");
    if let Some(choice) = style::from_args(std::env::args_os()) {
        style::choose(choice);
    }
    let cli = match cli::parse_accum() {
        Ok(cli) => {
            style::choose(cli.color);
            cli
        }
        Err(err) => {
            return usage_error(&err, &|args| cli::parse_accum_from(args).err());
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
#[cfg(feature = "cli")]
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
    if let Some(choice) = style::from_args(std::env::args_os()) {
        style::choose(choice);
    }
    let build = move || cli::user_command(&bin);
    let parse = |args: Vec<std::ffi::OsString>| {
        build().try_get_matches_from(args).and_then(|matches| {
            if let Some(choice) = matches.get_one::<style::ColorChoice>("color") {
                style::choose(*choice);
            }
            <cli::CommonCommand as clap::FromArgMatches>::from_arg_matches(&matches)
        })
    };
    let parsed = match parse(std::env::args_os().collect()) {
        Ok(parsed) => parsed,
        Err(err) => {
            return usage_error(&err, &|args| {
                parse(args.into_iter().map(Into::into).collect()).err()
            });
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
