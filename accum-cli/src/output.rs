//! Writing command output: text for people, JSON with stable keys for tools.

use std::io::{self, Write};
use std::sync::OnceLock;

use serde::Serialize;

use crate::error::CliError;

/// Writes `value` as pretty JSON followed by a newline.
pub(crate) fn print_json<T: Serialize>(value: &T) -> Result<(), CliError> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|err| CliError::usage(format!("cannot render JSON: {err}")))?;
    print_text(&format!("{text}\n"))
}

/// Writes text to stdout; a closed pipe (`accum calc | head`) is not an error.
/// Text for a terminal: control characters (a name of `"\u001bc"` from a
/// config resets the terminal) are shown as `\u{1b}`, except line breaks,
/// tabs and the colour sequences (`ESC [ … m`) the output itself uses.
pub(crate) fn terminal_safe(text: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c == '\u{1b}'
            && let Some(sgr) = colour_sequence(rest)
        {
            out.push_str(sgr);
            rest = &rest[sgr.len()..];
            continue;
        }
        if unsafe_char(c) {
            out.push_str(&c.escape_unicode().to_string());
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    std::borrow::Cow::Owned(out)
}

/// `ESC [ digits;… m` at the start of `text`: a colour, nothing else.
fn colour_sequence(text: &str) -> Option<&str> {
    let body = text.strip_prefix("\u{1b}[")?;
    let end = body.find(|c: char| !(c.is_ascii_digit() || c == ';'))?;
    (body[end..].starts_with('m')).then(|| &text[..2 + end + 1])
}

pub(crate) fn print_text(text: &str) -> Result<(), CliError> {
    let mut out = io::stdout().lock();
    let text = for_terminal(text, io::IsTerminal::is_terminal(&out));
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        Err(err) => Err(CliError::usage(format!("cannot write to stdout: {err}"))),
    }
}

/// `text` through [`terminal_safe`] when it goes to a terminal, as it is
/// otherwise (a pipe or a file gets the bytes unchanged).
fn for_terminal(text: &str, terminal: bool) -> std::borrow::Cow<'_, str> {
    if terminal {
        terminal_safe(text)
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// Writes a message to stderr, through [`terminal_safe`] when stderr is a
/// terminal: messages quote the input (keys, names, lines of a file), and a
/// control character in it must not reach the terminal. A closed stderr is
/// not an error, as for `eprint!`'s callers it could not be reported.
pub(crate) fn eprint_text(text: &str) {
    let mut err = io::stderr().lock();
    let text = for_terminal(text, io::IsTerminal::is_terminal(&err));
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

    #[test]
    fn control_characters_from_input_are_shown_not_run() {
        assert_eq!(terminal_safe("run \u{1b}c reset\n"), "run \\u{1b}c reset\n");
        assert_eq!(terminal_safe("a\u{7}b\u{9b}c\td"), "a\\u{7}b\\u{9b}c\td");
        // The output's own colours stay.
        assert_eq!(
            terminal_safe("\u{1b}[1;31merror\u{1b}[0m"),
            "\u{1b}[1;31merror\u{1b}[0m"
        );
        assert_eq!(terminal_safe("plain"), "plain");
    }
}
