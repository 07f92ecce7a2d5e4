//! Writing command output: text for people, JSON with stable keys for tools.

use std::io::{self, Write};

use serde::Serialize;

use crate::error::CliError;

/// Writes `value` as pretty JSON followed by a newline.
pub(crate) fn print_json<T: Serialize>(value: &T) -> Result<(), CliError> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|err| CliError::usage(format!("cannot render JSON: {err}")))?;
    print_text(&format!("{text}\n"))
}

/// Writes text to stdout; a closed pipe (`accum calc | head`) is not an error.
pub(crate) fn print_text(text: &str) -> Result<(), CliError> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        Err(err) => Err(CliError::usage(format!("cannot write to stdout: {err}"))),
    }
}
