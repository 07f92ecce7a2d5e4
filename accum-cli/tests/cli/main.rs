//! End-to-end tests of the `accum` binary: one module per command.

mod atomic;
mod backend;
mod bounded;
mod browser;
mod calc;
mod channels;
mod compare;
mod custom;
mod detect;
mod docs;
mod editors;
mod engines;
mod explain;
mod fix;
mod formats;
mod hostile;
/// The hostile strings every output channel is tested with, shared with
/// the escapers' unit tests.
#[path = "../../src/escape/hostile.rs"]
mod hostile_strings;
mod hydra_trees;
mod interrupt;
mod limits;
#[cfg(feature = "mpi")]
mod mpi;
mod named_paths;
mod precommit;
mod replan;
mod resume;
mod run;
mod schema;
mod schema_agreement;
mod semantics;
mod sheet;
mod sheet_stages;
mod transcripts;
mod untrusted;
mod validate;
mod wording;
mod writes;

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// The `accum` binary under test, with colours off.
pub(crate) fn accum() -> Command {
    let mut cmd = Command::cargo_bin("accum").expect("the accum binary is built for tests");
    cmd.env("NO_COLOR", "1");
    cmd
}

/// The test fixtures directory.
pub(crate) fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A fresh scratch directory for one test.
pub(crate) fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("accum-cli-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Output of a finished command.
pub(crate) struct Out {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// The names in `dir`, sorted.
pub(crate) fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Runs `accum` with `args` in `dir`.
pub(crate) fn run_in(dir: &Path, args: &[&str]) -> Out {
    let out = accum()
        .current_dir(dir)
        .args(args)
        .output()
        .expect("accum runs");
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).expect("utf-8 stdout"),
        stderr: String::from_utf8(out.stderr).expect("utf-8 stderr"),
    }
}

/// A program on `PATH`, or `None`. Under CI (`CI` set) a missing program is
/// a failure: `.ci/run` installs it, and a skipped test would hide that.
pub(crate) fn tool(name: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(name))
            .find(|path| path.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{name} is not installed; .ci/run installs it"
        );
        eprintln!("note: {name} is not installed; its part of the test is skipped");
    }
    found
}
