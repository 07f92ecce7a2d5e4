//! `accum explain CODE`: every code has an entry in docs/rules.md, and every
//! code a diagnostic can carry has one.

use std::collections::BTreeSet;
use std::path::Path;

use crate::{fixtures, run_in, scratch};

/// The codes `accum explain` lists.
fn listed() -> Vec<String> {
    let out = run_in(&scratch("explain-list"), &["explain"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    out.stdout
        .lines()
        .take_while(|line| !line.is_empty())
        .map(|line| line.split_whitespace().next().expect("a code").to_owned())
        .collect()
}

#[test]
fn every_code_explains_itself() {
    let codes = listed();
    assert!(codes.len() >= 40, "{codes:?}");
    let dir = scratch("explain-each");
    for code in &codes {
        let out = run_in(&dir, &["explain", code]);
        assert_eq!(out.code, 0, "{code}: {}", out.stderr);
        assert!(
            out.stdout.starts_with(&format!("{code}\n\n")),
            "{}",
            out.stdout
        );
        for part in ["**Checks:**", "**Prevents:**", "**Fix:**", "Wrong", "Right"] {
            assert!(out.stdout.contains(part), "{code} lacks {part}");
        }
    }
    // The prefix may be left out.
    let short = run_in(&dir, &["explain", "plan::global-batch"]);
    assert_eq!(
        short.stdout,
        run_in(&dir, &["explain", "accum::plan::global-batch"]).stdout
    );
}

#[test]
fn an_unknown_code_gets_the_nearest_and_exit_2() {
    let out = run_in(
        &scratch("explain-unknown"),
        &["explain", "accum::plan::globalbatch"],
    );
    assert_eq!(out.code, 2);
    assert!(out.stdout.is_empty());
    assert_eq!(
        out.stderr,
        "error: no rule has the code `accum::plan::globalbatch`; did you mean `accum::plan::global-batch`? `accum explain` lists every code\n"
    );
}

/// Every `"accum::…"` string literal in the sources of the CLI and the core:
/// the codes a diagnostic can carry, wherever it is made.
fn codes_in_sources() -> BTreeSet<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut codes = BTreeSet::new();
    for dir in ["accum-cli/src", "accum-core/src"] {
        for file in rust_files(&root.join(dir)) {
            let text = std::fs::read_to_string(&file).expect("readable source");
            let mut rest = non_test_code(&text);
            while let Some(at) = rest.find("\"accum::") {
                let code: String = rest[at + 1..]
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == ':' || *c == '-' || *c == '_')
                    .collect();
                // `"accum::"` alone is a prefix, not a code.
                if rest[at + 1 + code.len()..].starts_with('"') && !code.ends_with("::") {
                    codes.insert(code);
                }
                rest = &rest[at + 1..];
            }
        }
    }
    codes
}

/// A source file without its unit tests (the `#[cfg(test)]` module that
/// ends a file, by the crates' convention).
pub(crate) fn non_test_code(text: &str) -> &str {
    text.find("#[cfg(test)]\nmod ")
        .map_or(text, |at| &text[..at])
}

/// Every `.rs` file under `dir` that is not a test module of its own.
pub(crate) fn rust_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("a source folder") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs")
            && !path
                .file_stem()
                .is_some_and(|stem| stem == "tests" || stem.to_string_lossy().ends_with("_tests"))
        {
            files.push(path);
        }
    }
    files
}

#[test]
fn every_code_emitted_anywhere_has_an_entry() {
    let listed: BTreeSet<String> = listed().into_iter().collect();
    let mut emitted = codes_in_sources();
    // The core's own list of its codes.
    emitted.extend(accum_core::Code::ALL.iter().map(|c| c.as_str().to_owned()));
    assert!(emitted.contains("accum::plan::global-batch"), "{emitted:?}");
    assert!(emitted.contains("accum::interop::auto"), "{emitted:?}");
    // And the codes the fixtures really produce.
    let dir = fixtures().join("mistakes");
    let files: Vec<String> = std::fs::read_dir(&dir)
        .expect("fixtures")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    let mut args = vec!["validate", "--format", "json"];
    args.extend(files.iter().map(String::as_str));
    let out = run_in(&dir, &args);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    for file in json["files"].as_array().expect("files") {
        for finding in file["findings"].as_array().expect("findings") {
            emitted.insert(finding["code"].as_str().expect("a code").to_owned());
        }
    }
    let missing: Vec<&String> = emitted.difference(&listed).collect();
    assert!(
        missing.is_empty(),
        "codes without an entry in docs/rules.md: {missing:?}"
    );
}
