//! Writing command output: text for people, JSON with stable keys for tools.

use std::io::{self, Write};
use std::sync::OnceLock;

use serde::Serialize;

use crate::error::CliError;
use crate::escape;

/// Writes `value` as pretty JSON followed by a newline, through the JSON
/// channel's escaper ([`escape::json`]).
pub(crate) fn print_json<T: Serialize>(value: &T) -> Result<(), CliError> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|err| CliError::usage(format!("cannot render JSON: {err}")))?;
    print_text(&(escape::json(text) + "\n"))
}

/// Writes text to stdout through [`escape::terminal`], to a terminal or
/// not: no escape sequence or other hidden character from an input reaches
/// stdout (a name of `"\u001bc"` from a config would reset a terminal, and
/// a log viewer or `less -R` reads a pipe's bytes as a terminal does). A
/// closed pipe (`accum calc | head`) is not an error.
pub(crate) fn print_text(text: &str) -> Result<(), CliError> {
    write_stdout(&escape::terminal(text))
}

/// [`print_text`] for text that accum coloured itself from escaped input
/// (`crate::diagnostic::render_text`): its colour sequences stay
/// ([`escape::styled_terminal`]).
pub(crate) fn print_styled(text: &str) -> Result<(), CliError> {
    write_stdout(&escape::styled_terminal(text))
}

fn write_stdout(text: &str) -> Result<(), CliError> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        Err(err) => Err(CliError::usage(format!("cannot write to stdout: {err}"))),
    }
}

/// Writes a message to stderr through [`escape::terminal`]: messages quote
/// the input (keys, names, lines of a file), and no hidden character in it
/// may reach stderr. A closed stderr is not an error, as for `eprint!`'s
/// callers it could not be reported.
pub(crate) fn eprint_text(text: &str) {
    write_stderr(&escape::terminal(text));
}

/// [`eprint_text`] for text that accum coloured itself from escaped input:
/// its colour sequences stay ([`escape::styled_terminal`]).
pub(crate) fn eprint_styled(text: &str) {
    write_stderr(&escape::styled_terminal(text));
}

fn write_stderr(text: &str) {
    let mut err = io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
}

/// `eprint!` through [`eprint_text`]: every message of the CLI is written
/// with it or [`eprintln_safe!`].
macro_rules! eprint_safe {
    ($($arg:tt)*) => {
        $crate::output::eprint_text(&format!($($arg)*))
    };
}

/// `eprintln!` through [`eprint_text`].
macro_rules! eprintln_safe {
    ($($arg:tt)*) => {
        $crate::output::eprint_text(&format!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) use {eprint_safe, eprintln_safe};

/// Most items [`listed`] shows before it elides.
const LISTED: usize = 8;

/// Items for a message, separated by commas: all of them up to eight, else
/// the first six, `…`, the last and how many there are, so that a message
/// about an input of 50,000 entries stays one line.
pub(crate) fn listed<T: std::fmt::Display>(items: &[T]) -> String {
    listed_by(items, ", ")
}

/// [`listed`], with another separator (`"; "` between items that hold
/// commas).
pub(crate) fn listed_by<T: std::fmt::Display>(items: &[T], separator: &str) -> String {
    let all = |items: &[T]| {
        items
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(separator)
    };
    match items {
        [first @ .., last] if items.len() > LISTED => format!(
            "{}{separator}…{separator}{last} ({} in all)",
            all(&first[..LISTED - 2]),
            accum_core::group_digits(items.len() as u64)
        ),
        _ => all(items),
    }
}

/// The name of the running binary: `accum`, or a user's own binary built
/// with `accum_cli::run::<MyConfig>()`. Messages that name a command
/// (`accum schema lists every key`) use it.
static BIN_NAME: OnceLock<String> = OnceLock::new();

/// Sets the binary's name, once, before any command runs.
pub(crate) fn set_bin_name(name: &str) {
    let _ = BIN_NAME.set(name.to_owned());
}

thread_local! {
    /// Whether the config being checked is loaded by a user's program
    /// (`load_config`), which has no schema command.
    static LOADING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `check` as the loader of a user's program: its diagnostics name
/// no schema command ([`schema_command`] is `None` meanwhile).
pub(crate) fn without_schema_command<R>(check: impl FnOnce() -> R) -> R {
    let before = LOADING.with(|loading| loading.replace(true));
    let result = check();
    LOADING.with(|loading| loading.set(before));
    result
}

/// The schema command that describes the config being checked:
/// `` `accum schema` `` or that of a user's own program
/// (`accum_cli::run`); `None` while a user's program loads its config
/// (`load_config`), since it has no such command and `accum schema`
/// describes another config.
pub(crate) fn schema_command() -> Option<String> {
    (!LOADING.with(std::cell::Cell::get)).then(|| format!("`{} schema`", bin_name()))
}

/// The binary's name (`accum` until set).
pub(crate) fn bin_name() -> &'static str {
    BIN_NAME.get().map_or("accum", String::as_str)
}

#[cfg(test)]
mod terminal_tests {
    use super::*;

    #[test]
    fn long_lists_keep_their_ends_and_say_their_length() {
        assert_eq!(listed(&[1, 2, 3]), "1, 2, 3");
        assert_eq!(listed::<u8>(&[]), "");
        let eight: Vec<u32> = (1..=8).collect();
        assert_eq!(listed(&eight), "1, 2, 3, 4, 5, 6, 7, 8");
        let many: Vec<u32> = (0..50_000).collect();
        assert_eq!(listed(&many), "0, 1, 2, 3, 4, 5, …, 49999 (50,000 in all)");
    }
}
