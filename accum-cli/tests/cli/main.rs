//! End-to-end tests of the `accum` binary: one module per command.

mod calc;

use assert_cmd::Command;

/// The `accum` binary under test.
pub(crate) fn accum() -> Command {
    let mut cmd = Command::cargo_bin("accum").expect("the accum binary is built for tests");
    cmd.env("NO_COLOR", "1");
    cmd
}
