//! User-facing text speaks of the project's rules by code, never by a bare
//! rule id such as "(`accum::run::loss-scale`)": help of every command (accum's and a user's
//! binary's), the schemas, the diagnostics of every fixture, the rules
//! `explain` prints, and every string literal of the CLI's and the core's
//! code.

use std::path::Path;

use crate::explain::{non_test_code, rust_files};
use crate::{accum, fixtures, run_in, scratch};

/// Where `text` cites a bare rule id, `(R` digits `)`.
fn rule_ids(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("(R") {
        let digits: String = rest[at + 2..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if !digits.is_empty() && rest[at + 2 + digits.len()..].starts_with(')') {
            let start = text.len() - rest.len() + at;
            let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
            let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
            found.push(text[line_start..line_end].trim().to_owned());
        }
        rest = &rest[at + 2..];
    }
    found
}

#[test]
fn the_matcher_finds_rule_ids_only() {
    assert_eq!(rule_ids("a (R7) b\nc (R) (Rx) (R12"), vec!["a (R7) b"]);
    assert_eq!(rule_ids("x\n  see (R13).\n"), vec!["see (R13)."]);
}

/// The string literals of Rust source text: `"…"`, `r#"…"#`, `b"…"`, with
/// comments, char literals and lifetimes skipped.
fn string_literals(code: &str) -> Vec<String> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '/' if chars.get(i + 1) == Some(&'/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if chars.get(i + 1) == Some(&'*') => {
                let mut depth = 0;
                while i < chars.len() {
                    if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                        depth += 1;
                        i += 2;
                    } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            'r' if matches!(chars.get(i + 1), Some('"' | '#'))
                && (i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')) =>
            {
                let mut j = i + 1;
                let mut hashes = 0;
                while chars.get(j) == Some(&'#') {
                    hashes += 1;
                    j += 1;
                }
                if chars.get(j) != Some(&'"') {
                    i += 1;
                    continue;
                }
                j += 1;
                let start = j;
                loop {
                    if j >= chars.len() {
                        break;
                    }
                    if chars[j] == '"' && (1..=hashes).all(|h| chars.get(j + h) == Some(&'#')) {
                        break;
                    }
                    j += 1;
                }
                out.push(chars[start..j.min(chars.len())].iter().collect());
                i = j + 1 + hashes;
            }
            '"' => {
                let mut j = i + 1;
                let mut text = String::new();
                while j < chars.len() && chars[j] != '"' {
                    if chars[j] == '\\' {
                        // A line continuation drops the newline and the indent.
                        if chars.get(j + 1) == Some(&'\n') {
                            j += 2;
                            while j < chars.len() && chars[j].is_whitespace() {
                                j += 1;
                            }
                            continue;
                        }
                        text.push(chars[j]);
                        j += 1;
                    }
                    if j < chars.len() {
                        text.push(chars[j]);
                    }
                    j += 1;
                }
                out.push(text);
                i = j + 1;
            }
            '\'' => {
                // A char literal ('x', '\n', '\''), or a lifetime ('a).
                if chars.get(i + 1) == Some(&'\\') {
                    let mut j = i + 2;
                    while j < chars.len() && chars[j] != '\'' {
                        j += 1;
                    }
                    i = j + 1;
                } else if chars.get(i + 2) == Some(&'\'') {
                    i += 3;
                } else {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    out
}

#[test]
fn string_literals_are_read_like_rustc_reads_them() {
    let code = "let a = \"x (R1)\"; // \"not (R2)\"\n/* \"(R3)\" */ let b = r#\"y \"q\" (R4)\"#; let c = '\"'; fn f<'a>(s: &'a str) {} let d = \"e\\\"f\";";
    assert_eq!(
        string_literals(code),
        vec!["x (R1)", "y \"q\" (R4)", "e\\\"f"]
    );
}

/// Every string literal with a bare rule id, by file (relative to the
/// workspace root).
fn source_offenders() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut offenders = Vec::new();
    for dir in ["accum-cli/src", "accum-core/src"] {
        for file in rust_files(&root.join(dir)) {
            let text = std::fs::read_to_string(&file).expect("readable source");
            let name = file
                .strip_prefix(&root)
                .unwrap_or(&file)
                .display()
                .to_string();
            for literal in string_literals(non_test_code(&text)) {
                for line in rule_ids(&literal) {
                    offenders.push((name.clone(), line));
                }
            }
        }
    }
    offenders
}

#[test]
fn no_source_string_cites_a_bare_rule_id() {
    let offenders: Vec<String> = source_offenders()
        .iter()
        .map(|(file, line)| format!("{file}: {line}"))
        .collect();
    assert!(
        offenders.is_empty(),
        "bare rule ids in user-facing strings:\n{}",
        offenders.join("\n")
    );
}

/// The subcommands a `--help` lists, without `help`.
pub(crate) fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  ") || l.is_empty())
        .filter(|l| !l.starts_with("   ") && !l.is_empty())
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .filter(|c| c != "help")
        .collect()
}

/// The user binary built from the `custom_config` example.
fn custom() -> assert_cmd::Command {
    crate::custom::custom()
}

#[test]
fn no_help_or_schema_cites_a_bare_rule_id() {
    let dir = scratch("wording-help");
    let mut texts = Vec::new();
    let top = run_in(&dir, &["--help"]);
    texts.push(("accum --help".to_owned(), top.stdout.clone()));
    let commands = subcommands(&top.stdout);
    assert!(commands.len() >= 12, "{commands:?}");
    for command in &commands {
        let out = run_in(&dir, &[command, "--help"]);
        assert_eq!(out.code, 0, "{command}: {}", out.stderr);
        texts.push((format!("accum {command} --help"), out.stdout));
    }
    texts.push(("accum schema".to_owned(), run_in(&dir, &["schema"]).stdout));
    texts.push((
        "accum explain".to_owned(),
        run_in(&dir, &["explain"]).stdout,
    ));
    let custom_help =
        String::from_utf8_lossy(&custom().arg("--help").output().expect("runs").stdout)
            .into_owned();
    let custom_commands = subcommands(&custom_help);
    assert!(custom_commands.len() >= 7, "{custom_commands:?}");
    for command in std::iter::once(String::new()).chain(custom_commands) {
        let mut cmd = custom();
        if !command.is_empty() {
            cmd.arg(&command);
        }
        let out = cmd.arg("--help").output().expect("runs");
        texts.push((
            format!("custom_config {command} --help"),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        ));
    }
    let out = custom().arg("schema").output().expect("runs");
    texts.push((
        "custom_config schema".to_owned(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    ));
    let offenders: Vec<String> = texts
        .iter()
        .flat_map(|(what, text)| {
            rule_ids(text)
                .into_iter()
                .map(move |line| format!("{what}: {line}"))
        })
        .collect();
    assert!(offenders.is_empty(), "{}", offenders.join("\n"));
}

#[test]
fn no_diagnostic_of_any_fixture_cites_a_bare_rule_id() {
    let mut offenders = Vec::new();
    let mut check = |what: String, stdout: &str, stderr: &str| {
        for line in rule_ids(stdout).into_iter().chain(rule_ids(stderr)) {
            offenders.push(format!("{what}: {line}"));
        }
    };
    // Every configuration fixture, in the human and the JSON form.
    let mistakes = fixtures().join("mistakes");
    for entry in std::fs::read_dir(&mistakes).expect("fixtures") {
        let name = entry
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        for format in ["human", "json"] {
            let out = run_in(&mistakes, &["validate", &name, "--format", format]);
            check(format!("validate {name}"), &out.stdout, &out.stderr);
        }
    }
    for name in ["custom_bad.toml", "custom_good.toml"] {
        let out = custom().args(["validate", name]).output().expect("runs");
        check(
            format!("custom_config validate {name}"),
            &String::from_utf8_lossy(&out.stdout),
            &String::from_utf8_lossy(&out.stderr),
        );
    }
    assert!(offenders.is_empty(), "{}", offenders.join("\n"));
}

#[test]
fn no_framework_diagnostic_cites_a_bare_rule_id() {
    let mut offenders = Vec::new();
    let mut check = |what: String, stdout: &str, stderr: &str| {
        for line in rule_ids(stdout).into_iter().chain(rule_ids(stderr)) {
            offenders.push(format!("{what}: {line}"));
        }
    };
    // Every framework fixture, as `lint` reports it.
    let interop = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/interop");
    for framework in [
        "deepspeed",
        "megatron",
        "hf",
        "lightning",
        "nemo",
        "axolotl",
    ] {
        for entry in std::fs::read_dir(interop.join(framework)).expect("interop fixtures") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                continue;
            }
            for format in ["text", "json"] {
                let out = accum()
                    .args(["lint", framework])
                    .arg(&path)
                    .args([
                        "--world-size",
                        "16",
                        "--examples",
                        "1000",
                        "--variable-lengths",
                        "--format",
                        format,
                    ])
                    .output()
                    .expect("runs");
                check(
                    format!("lint {framework} {}", path.display()),
                    &String::from_utf8_lossy(&out.stdout),
                    &String::from_utf8_lossy(&out.stderr),
                );
            }
        }
    }
    assert!(offenders.is_empty(), "{}", offenders.join("\n"));
}

/// The example configurations are what users copy first: their comments
/// speak of rules in words, as the diagnostics do.
#[test]
fn no_example_configuration_cites_a_bare_rule_id() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut offenders = Vec::new();
    let mut read = 0;
    for entry in std::fs::read_dir(&examples).expect("examples") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "toml") {
            let text = std::fs::read_to_string(&path).expect("an example");
            read += 1;
            for line in rule_ids(&text) {
                offenders.push(format!("{}: {line}", path.display()));
            }
        }
    }
    assert!(read >= 3, "the example configurations are read");
    assert!(offenders.is_empty(), "{}", offenders.join("\n"));
}
