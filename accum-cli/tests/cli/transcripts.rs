//! The console transcripts of README.md and docs/cli.md run as tests
//! (trycmd), so that they cannot drift from what `accum` prints. Each page
//! runs in a fresh directory holding the shipped files its transcripts use,
//! and nothing else: a transcript that needs a file the repository does not
//! ship fails.
//!
//! To see what a transcript prints now, run the command in a checkout:
//! the files are where [`inputs`] takes them from.

use std::path::{Path, PathBuf};

use crate::scratch;

/// The workspace root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace holds accum-cli")
        .to_path_buf()
}

/// The files each page's transcripts read, from where the repository ships
/// them, and the name the transcript gives each.
fn inputs(page: &str) -> Vec<(&'static str, &'static str)> {
    match page {
        "README.md" => vec![
            ("examples/quickstart.toml", "examples/quickstart.toml"),
            ("examples/bad.toml", "examples/bad.toml"),
            ("examples/rampup.toml", "examples/rampup.toml"),
            ("examples/ds_config.json", "examples/ds_config.json"),
        ],
        "docs/cli.md" => vec![
            ("examples/quickstart.toml", "quickstart.toml"),
            ("examples/rampup.toml", "rampup.toml"),
            ("examples/ds_config.json", "ds_config.json"),
            ("accum-cli/tests/fixtures/fp16.toml", "fp16.toml"),
            (
                "accum-cli/tests/fixtures/mistakes/several.toml",
                "several.toml",
            ),
            (
                "accum-cli/tests/fixtures/mistakes/enum_typo.toml",
                "enum_typo.toml",
            ),
            (
                "accum-cli/tests/fixtures/mistakes/typo_key.yaml",
                "typo_key.yaml",
            ),
            (
                "accum-cli/tests/fixtures/mistakes/ds_quoted.json",
                "ds_quoted.json",
            ),
        ],
        other => panic!("no inputs listed for {other}"),
    }
}

/// A copy of `page` beside its `.in` directory (the working directory of
/// its commands) and an empty `.out` one (so that trycmd runs them in a
/// sandbox, and the files they write go there).
fn staged(page: &str) -> PathBuf {
    let dir = scratch(&format!("transcripts-{}", page.replace('/', "-")));
    let name = Path::new(page).file_name().expect("a file name");
    let copy = dir.join(name);
    std::fs::copy(root().join(page), &copy).expect("copy the page");
    let input = copy.with_extension("in");
    for (from, to) in inputs(page) {
        let target = input.join(to);
        std::fs::create_dir_all(target.parent().expect("a parent")).expect("mkdir");
        std::fs::copy(root().join(from), &target)
            .unwrap_or_else(|err| panic!("{page} uses {from}, which is not shipped: {err}"));
    }
    let output = copy.with_extension("out");
    std::fs::create_dir_all(&output).expect("mkdir");
    std::fs::write(output.join(".keep"), "").expect("write");
    copy
}

#[test]
fn the_readme_and_cli_transcripts_are_what_accum_prints() {
    let cases = trycmd::TestCases::new();
    cases
        .register_bin("accum", Path::new(env!("CARGO_BIN_EXE_accum")))
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100");
    for page in ["README.md", "docs/cli.md"] {
        cases.case(staged(page));
    }
}
