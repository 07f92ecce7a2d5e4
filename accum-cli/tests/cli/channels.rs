//! Output channels end to end: every string of the shared hostile list
//! (`src/escape/hostile.rs`) goes into the binary as a config's key, name
//! and notes, a config's and a report's file name and an engine file's
//! key, and comes out of `validate` in every `--format`, `sheet` as
//! Markdown (with its SVGs), HTML and CSV, `compare` as Markdown and HTML,
//! `lint`, `explain` and `run`. Each output is checked against its
//! channel's invariant, as its reader would read it:
//!
//! - no hidden character (control, bidirectional control, separator)
//!   but line breaks and tabs on stdout or stderr, in any format;
//! - `short` and `github`: exactly one line per finding;
//! - JSON and SARIF: still JSON, one result per finding;
//! - Markdown: the code span of a file name is one span holding the whole
//!   name, and the page has the lines of a page with plain names;
//! - HTML and SVG: no element or reference the page without hostile
//!   names does not have;
//! - CSV: every record parses, and no field starts a formula.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::hostile_strings::{hostile_strings, read_code_span, read_csv_record};
use crate::{Out, run_in, scratch};

/// Whether `c` may not reach stdout or stderr raw (the escaper's list,
/// restated so the test does not trust the code it checks).
fn hidden(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(
            c,
            '\u{061C}'
                | '\u{200E}'
                | '\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2066}'..='\u{2069}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{FEFF}'
        )
}

/// The output, after checking that neither stream holds a hidden
/// character.
fn clean(what: &str, out: Out) -> Out {
    for (stream, text) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        if let Some(c) = text.chars().find(|&c| hidden(c)) {
            panic!("{what}: {c:?} on {stream}: {text}");
        }
    }
    out
}

/// `text` as a TOML basic string, every control character escaped.
fn toml_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The hostile strings joined into as few strings of at most `limit`
/// bytes as they fit in (a longer one alone), each string whole: every
/// string reaches the binary with a few runs of it. Where a string stands
/// at the start of a field is the escapers' unit tests' concern.
fn joined(strings: Vec<String>, limit: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in strings {
        match out.last_mut() {
            Some(last) if last.len() + s.len() <= limit => last.push_str(&s),
            _ => out.push(s),
        }
    }
    out
}

/// The hostile strings as file names (with an extension): without `/`
/// or NUL, joined into names of at most 200 bytes.
fn file_names() -> Vec<String> {
    let safe = hostile_strings()
        .into_iter()
        .filter(|s| !s.contains(['/', '\0']) && s.len() <= 200)
        .collect();
    joined(safe, 200)
}

/// The hostile strings as names and notes: every one, joined into texts
/// of at most 4 KiB.
fn texts() -> Vec<String> {
    joined(hostile_strings(), 4096)
}

/// `./NAME.EXT`: a name that starts with `-` stays a path.
fn path_arg(name: &str, ext: &str) -> String {
    format!("./{name}.{ext}")
}

/// A small valid config: `name` and `notes` as given, four updates.
fn config(name: &str, notes: &str) -> String {
    let quickstart = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/quickstart.toml"),
    )
    .expect("the quickstart example");
    quickstart
        .replace("name = \"quickstart\"", &format!("name = {}", toml_string(name)))
        .replace(
            "notes = \"m 8 × A 4 × D 2 = 64 sequences per update; per-token loss over the whole group\"",
            &format!("notes = {}", toml_string(notes)),
        )
        .replace("total = \"300 updates\"", "total = \"4 updates\"")
        .replace("warmup = \"20 updates\"", "warmup = \"1 updates\"")
        .replace("every = \"25 updates\"", "every = \"1 updates\"")
}

/// The names of the elements in `markup`, and whether every `&` opens a
/// reference of the five XML ones.
fn elements(markup: &str) -> (BTreeSet<String>, bool) {
    let names = markup
        .match_indices('<')
        .map(|(i, _)| {
            markup[i + 1..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '!' | '?' | '-'))
                .collect()
        })
        .collect();
    let references = ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;", "&#39;"];
    let only_references = markup
        .match_indices('&')
        .all(|(i, _)| references.iter().any(|r| markup[i..].starts_with(r)));
    (names, only_references)
}

/// Checks that `markup` has no element `plain` does not have, and no
/// reference but the five.
fn same_elements(what: &str, markup: &str, plain: &str) {
    let (names, references) = elements(markup);
    let (allowed, _) = elements(plain);
    let extra: Vec<&String> = names.difference(&allowed).collect();
    assert!(extra.is_empty(), "{what}: elements {extra:?}");
    assert!(references, "{what}: a reference of another kind");
}

/// The text a reader should see of `name`: hidden characters shown as
/// `\u{…}` and line breaks as spaces, as in a code span.
fn shown_in_span(name: &str) -> String {
    name.replace("\r\n", "\n")
        .chars()
        .map(|c| match c {
            '\n' | '\r' => " ".to_owned(),
            c if hidden(c) || c == '\t' => format!("\\u{{{:x}}}", u32::from(c)),
            c => c.to_string(),
        })
        .collect()
}

/// A config per file name, each with hostile keys, name and notes, and
/// one with every hostile string as a key.
fn hostile_configs(dir: &Path) -> Vec<String> {
    let mut paths = Vec::new();
    let texts = texts();
    for (i, name) in file_names().iter().enumerate() {
        let other = &texts[i % texts.len()];
        // Unknown keys at the top, before the first table: one finding each.
        let text = format!(
            "{} = 1\n{} = 2\n[run]\nname = {}\nnotes = {}\n",
            toml_string(name),
            toml_string(&format!("{other}x")),
            toml_string(name),
            toml_string(other)
        );
        let path = path_arg(name, "toml");
        fs::write(dir.join(&path), text).expect("write config");
        paths.push(path);
    }
    let mut keys = String::new();
    for (i, s) in hostile_strings().iter().enumerate() {
        keys.push_str(&format!("{} = {i}\n", toml_string(s)));
    }
    fs::write(dir.join("keys.toml"), keys).expect("write keys");
    paths.push("keys.toml".to_owned());
    paths
}

#[test]
fn validate_writes_every_format_safely_with_one_line_per_finding() {
    let dir = scratch("channels-validate");
    let paths = hostile_configs(&dir);
    let run = |format: &str| {
        let mut args = vec!["validate", "--format", format];
        args.extend(paths.iter().map(String::as_str));
        clean(&format!("validate --format {format}"), run_in(&dir, &args))
    };
    let json = run("json");
    let files: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    let findings: usize = files["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| f["findings"].as_array().expect("findings").len())
        .sum();
    // Every hostile key is a finding: the test reaches the channels.
    assert!(findings >= hostile_strings().len(), "{findings} findings");

    let short = run("short");
    assert_eq!(short.stdout.lines().count(), findings, "{}", short.stdout);
    for line in short.stdout.lines() {
        assert!(
            line.starts_with("./") || line.starts_with("keys.toml:"),
            "every line is a finding: {line}"
        );
    }

    let github = run("github");
    assert_eq!(github.stdout.lines().count(), findings);
    for line in github.stdout.lines() {
        assert!(
            line.starts_with("::error file=") || line.starts_with("::warning file="),
            "{line}"
        );
        // The properties end at the first `::`: the file name holds none.
        let properties = &line[line.find(' ').expect("properties")..];
        let end = properties.find("::").expect("the message");
        assert!(
            properties[..end].contains(",title=accum%3A%3A"),
            "properties intact: {line}"
        );
    }

    let sarif = run("sarif");
    let log: serde_json::Value = serde_json::from_str(&sarif.stdout).expect("SARIF is JSON");
    assert_eq!(
        log["runs"][0]["results"].as_array().expect("results").len(),
        findings
    );
    let human = run("human");
    assert!(human.stdout.contains("keys.toml"), "{}", human.stdout);
}

/// Runs `sheet` of `config` (and `report`, if any) in `dir`, as Markdown
/// written to `sheet.md` with its plots, and as HTML on stdout.
fn sheet_outputs(dir: &Path, config: &str, report: Option<&str>) -> (String, Vec<String>, String) {
    let _ = fs::remove_dir_all(dir.join("md"));
    fs::create_dir_all(dir.join("md")).expect("md dir");
    let mut args = vec!["sheet", config];
    if let Some(report) = report {
        args.extend(["--report", report]);
    }
    let mut md_args = args.clone();
    md_args.extend(["--format", "md", "-o", "md/sheet.md"]);
    let md = clean(&format!("sheet {config}"), run_in(dir, &md_args));
    assert_eq!(md.code, 0, "{config}: {}", md.stderr);
    let markdown = fs::read_to_string(dir.join("md/sheet.md")).expect("sheet.md");
    let mut svgs = Vec::new();
    for entry in fs::read_dir(dir.join("md")).expect("list") {
        let path: PathBuf = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "svg") {
            svgs.push(fs::read_to_string(&path).expect("svg"));
        }
    }
    svgs.sort();
    let mut html_args = args;
    html_args.extend(["--format", "html"]);
    let html = clean(&format!("sheet {config} html"), run_in(dir, &html_args));
    assert_eq!(html.code, 0, "{config}: {}", html.stderr);
    (markdown, svgs, html.stdout)
}

/// The content of the code span after `label` on the line that starts
/// with `start`.
fn span_after<'a>(page: &'a str, start: &str, label: &str) -> &'a str {
    let line = page
        .lines()
        .find(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("a line {start:?} in {page}"));
    let at = line.find(label).expect("the label") + label.len();
    &line[at..]
}

#[test]
fn sheets_keep_their_markup_whatever_the_names() {
    let dir = scratch("channels-sheet");
    fs::write(dir.join("base.toml"), config("plain", "plain notes")).expect("write");
    let run = clean(
        "run plain",
        run_in(
            &dir,
            &["run", "base.toml", "--report", "base.json", "--quiet"],
        ),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let (plain_md, plain_svgs, plain_html) = sheet_outputs(&dir, "base.toml", Some("base.json"));
    let plain_lines = plain_md.lines().count();

    let texts = texts();
    let names = file_names();
    for i in 0..names.len().max(texts.len()) {
        let name = &names[i % names.len()];
        let notes = &texts[i % texts.len()];
        let config_path = path_arg(name, "toml");
        fs::write(
            dir.join(&config_path),
            config(&texts[(i + 1) % texts.len()], notes),
        )
        .expect("write");
        let report = path_arg(name, "json");
        fs::copy(dir.join("base.json"), dir.join(&report)).expect("copy");
        let (md, svgs, html) = sheet_outputs(&dir, &config_path, Some(&report));

        // The configuration differs from the one the report's run read
        // (its hash): one note, and its blank line, say so.
        assert_eq!(md.lines().count(), plain_lines + 2, "{name:?}: {md}");
        let code = span_after(&md, "Configuration: ", "Configuration: ");
        let (content, after) = read_code_span(code).unwrap_or_else(|| panic!("{name:?}: {code}"));
        assert_eq!(content, shown_in_span(&config_path), "{name:?}");
        let (content, _) = read_code_span(after.trim_start_matches(" · run report: "))
            .unwrap_or_else(|| panic!("{name:?}: {after}"));
        assert_eq!(content, shown_in_span(&report), "{name:?}");

        same_elements(&format!("{name:?} html"), &html, &plain_html);
        assert_eq!(svgs.len(), plain_svgs.len());
        for (svg, plain) in svgs.iter().zip(&plain_svgs) {
            same_elements(&format!("{name:?} svg"), svg, plain);
        }
    }
}

#[test]
fn csv_fields_are_records_without_formulas() {
    let dir = scratch("channels-csv");
    fs::write(
        dir.join("base.toml"),
        config("=cmd|' /C calc'!A0", "@SUM(1,2)"),
    )
    .expect("write");
    let report = path_arg("=1+1,\"x\"", "json");
    let run = clean(
        "run",
        run_in(&dir, &["run", "base.toml", "--report", &report, "--quiet"]),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let csv = clean(
        "sheet csv",
        run_in(
            &dir,
            &["sheet", "base.toml", "--report", &report, "--format", "csv"],
        ),
    );
    assert_eq!(csv.code, 0, "{}", csv.stderr);
    let mut lines = csv.stdout.lines();
    let columns = lines.next().expect("header").split(',').count();
    let mut rows = 0;
    for line in lines {
        let fields = read_csv_record(line).unwrap_or_else(|| panic!("{line}"));
        assert_eq!(fields.len(), columns, "{line}");
        for field in fields {
            let formula = field.starts_with(['=', '+', '@', '\t', '\r'])
                || (field.starts_with('-') && field.parse::<f64>().is_err());
            assert!(!formula, "{line}");
        }
        rows += 1;
    }
    assert_eq!(rows, 4, "{}", csv.stdout);
}

#[test]
fn compare_names_every_report_in_one_span_and_adds_no_markup() {
    let dir = scratch("channels-compare");
    fs::write(dir.join("base.toml"), config("plain", "plain")).expect("write");
    let run = clean(
        "run plain",
        run_in(
            &dir,
            &["run", "base.toml", "--report", "base.json", "--quiet"],
        ),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let names = file_names();
    let reports: Vec<String> = names.iter().map(|n| path_arg(n, "json")).collect();
    for report in &reports {
        fs::copy(dir.join("base.json"), dir.join(report)).expect("copy");
    }
    let compare = |format: &str, reports: &[&str]| {
        let mut args = vec!["compare", "--format", format];
        args.extend(reports);
        let out = clean(&format!("compare --format {format}"), run_in(&dir, &args));
        assert_eq!(out.code, 0, "{}", out.stderr);
        out.stdout
    };
    let all: Vec<&str> = reports.iter().map(String::as_str).collect();
    let md = compare("md", &all);
    let sources: Vec<&str> = md.lines().filter(|l| l.starts_with("- ")).collect();
    assert_eq!(sources.len(), reports.len(), "{md}");
    for (line, report) in sources.iter().zip(&reports) {
        // `- NAME: CODE`: the name is escaped text, so the first `: ` that
        // opens a backtick run ends it.
        let at = line
            .match_indices(": `")
            .map(|(i, _)| i + 2)
            .find(|&i| read_code_span(&line[i..]).is_some_and(|(_, after)| after.is_empty()))
            .unwrap_or_else(|| panic!("{report:?}: {line}"));
        let (content, _) = read_code_span(&line[at..]).expect("a span");
        assert_eq!(content, shown_in_span(report), "{line}");
    }
    let plain_md = compare("md", &["base.json", "base.json"]);
    let table = |page: &str| page.lines().filter(|l| l.starts_with('|')).count();
    assert_eq!(table(&md), table(&plain_md), "one table row per quantity");
    let plain_html = compare("html", &["base.json", "base.json"]);
    let html = compare("html", &all);
    same_elements("compare html", &html, &plain_html);
}

#[test]
fn lint_explain_and_run_write_no_hidden_character() {
    let dir = scratch("channels-commands");
    let mut files = Vec::new();
    for name in file_names() {
        let path = path_arg(&name, "json");
        let json = serde_json::json!({
            "train_micro_batch_size_per_gpu": 2,
            "gradient_accumulation_steps": 3,
            "train_batch_size": 7,
            name.clone(): 1,
        });
        fs::write(dir.join(&path), json.to_string()).expect("write");
        files.push(path);
    }
    for format in ["human", "short", "github", "json", "sarif"] {
        let mut args = vec!["lint", "deepspeed", "--format", format];
        args.extend(files.iter().map(String::as_str));
        let out = clean(&format!("lint --format {format}"), run_in(&dir, &args));
        assert_eq!(out.code, 1, "a batch of 7 is not 2 × 3: {}", out.stderr);
        if format != "github" {
            // No line a runner would read as a workflow command.
            let lines = out.stdout.lines().chain(out.stderr.lines());
            assert!(
                lines.clone().all(|l| !l.starts_with("::")),
                "{format}: {}{}",
                out.stdout,
                out.stderr
            );
        }
        if format == "short" {
            for line in out.stderr.lines().filter(|l| l.contains("error[accum::")) {
                assert!(line.starts_with("./"), "one line per finding: {line}");
            }
        }
    }
    let arguments = hostile_strings()
        .into_iter()
        .filter(|s| !s.contains('\0'))
        .collect();
    for s in joined(arguments, 4096) {
        let out = clean("explain", run_in(&dir, &["explain", "--", &s]));
        assert_ne!(out.code, 0, "{s:?}");
    }
    let name = "\u{1b}[31m\u{1b}]8;;x\u{1b}\\\n::error::x\u{202e}";
    let config_path = "./\u{1b}c\u{202e}.toml";
    fs::write(dir.join(config_path), config(name, name)).expect("write");
    let out = clean(
        "run",
        run_in(&dir, &["run", config_path, "--report", "r.json"]),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("running ./\\u{1b}c\\u{202e}.toml:"),
        "{}",
        out.stderr
    );
}

#[test]
fn file_names_reach_every_message_on_one_line() {
    // A name the user passes on (a glob over a cloned repository) is
    // quoted in messages of every kind: a file written, a file created, a
    // file that cannot be read, an argument clap refuses. Each shows the
    // name on one line, so that no part of it reads as a line of its own
    // (a runner's `::error::` command), and with no hidden character raw.
    let dir = scratch("channels-names");
    let quickstart = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/quickstart.toml");
    let quickstart = quickstart.to_str().expect("a UTF-8 path");
    for name in file_names() {
        let md = path_arg(&name, "md");
        let toml = path_arg(&name, "toml");
        let missing = path_arg(&format!("{name}-missing"), "toml");
        let runs: [(&str, Vec<&str>, i32); 4] = [
            ("sheet -o", vec!["sheet", quickstart, "-o", &md], 0),
            ("init", vec!["init", &toml], 0),
            ("validate of a missing file", vec!["validate", &missing], 2),
            ("an argument clap refuses", vec!["lint", &name, "x.json"], 2),
        ];
        for (what, args, code) in runs {
            let out = clean(what, run_in(&dir, &args));
            assert_eq!(out.code, code, "{what} {name:?}: {}", out.stderr);
            let lines = out.stdout.lines().chain(out.stderr.lines());
            assert!(
                lines.clone().all(|l| !l.trim_start().starts_with("::")),
                "{what} {name:?}: {}{}",
                out.stdout,
                out.stderr
            );
        }
        for entry in fs::read_dir(&dir).expect("the folder") {
            let path = entry.expect("an entry").path();
            let _ = fs::remove_file(path);
        }
    }
    let _ = fs::remove_dir_all(&dir);
}
