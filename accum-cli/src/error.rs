//! Errors and exit codes of the command-line tool.

use std::fmt;
use std::process::ExitCode;

/// How a command ended (docs/architecture.md: 0 ok, 1 invalid input, 2 usage or I/O).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Exit {
    /// Success.
    Ok,
    /// The input is invalid; findings were printed.
    Invalid,
    /// A usage or I/O error.
    Usage,
    /// Stopped by Ctrl-C (128 + SIGINT, as shells and cargo report it).
    Interrupted,
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        match exit {
            Exit::Ok => ExitCode::SUCCESS,
            Exit::Invalid => ExitCode::from(1),
            Exit::Usage => ExitCode::from(2),
            Exit::Interrupted => ExitCode::from(130),
        }
    }
}

/// An error that ends a command, with the exit code it maps to.
#[derive(Debug)]
pub(crate) struct CliError {
    exit: Exit,
    message: String,
}

impl CliError {
    /// A usage error (bad flags or values): exit 2.
    pub(crate) fn usage(message: impl fmt::Display) -> CliError {
        CliError {
            exit: Exit::Usage,
            message: message.to_string(),
        }
    }

    /// An invalid input (the findings were printed or are in the message): exit 1.
    pub(crate) fn invalid(message: impl fmt::Display) -> CliError {
        CliError {
            exit: Exit::Invalid,
            message: message.to_string(),
        }
    }

    /// An error whose message was already printed (each MPI rank prints its
    /// own before the ranks exit together): only the exit code is left.
    #[cfg(feature = "mpi")]
    pub(crate) fn reported(exit: Exit) -> CliError {
        CliError {
            exit,
            message: String::new(),
        }
    }

    /// Whether the message was already printed.
    pub(crate) fn is_reported(&self) -> bool {
        self.message.is_empty()
    }

    /// The exit code this error maps to.
    pub(crate) fn exit(&self) -> Exit {
        self.exit
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CliError {}
