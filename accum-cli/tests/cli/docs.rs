//! The guide (README.md and docs/*.md): it speaks of rules by their codes,
//! its links between pages land on a file and a heading that exist, the
//! README links every page, and the README's first commands work.

use std::path::{Path, PathBuf};

use crate::run_in;

/// The workspace root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// README.md and every page of docs/, as paths relative to the root.
fn guide_pages() -> Vec<String> {
    let mut pages = vec!["README.md".to_owned()];
    let mut docs: Vec<String> = std::fs::read_dir(root().join("docs"))
        .expect("docs/")
        .map(|entry| {
            entry
                .expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .collect();
    docs.sort();
    assert!(docs.len() >= 12, "{docs:?}");
    pages.extend(docs);
    pages
}

fn read(page: &str) -> String {
    std::fs::read_to_string(root().join(page)).expect("a readable page")
}

/// The lines where `text` names a rule by a bare id: `R` and one or two
/// digits standing alone ("(`accum::run::loss-scale`)", "`accum::plan::global-batch`:", "`accum::span`…`accum::calc::scaling`", "`accum::run::normalization`, `accum::run::group`, `accum::plan::partial-group`, `accum::run::loss-scale`, `accum::run::scheduler`, `accum::run::data-parallel`, `accum::verify::equivalence`, `accum::run::memory`, `accum::verify::preflight`"), not inside a
/// word or a longer number ("R2D2", "R101", "FO`accum::span`").
fn bare_rule_ids(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in text.lines() {
        let chars: Vec<char> = line.chars().collect();
        let hit = (0..chars.len()).any(|i| {
            let digits = chars[i + 1..]
                .iter()
                .take_while(|c| c.is_ascii_digit())
                .count();
            chars[i] == 'R'
                && (1..=2).contains(&digits)
                && (i == 0 || !chars[i - 1].is_alphanumeric())
                && chars
                    .get(i + 1 + digits)
                    .is_none_or(|c| !c.is_alphanumeric())
        });
        if hit {
            found.push(line.trim().to_owned());
        }
    }
    found
}

#[test]
fn the_matcher_finds_bare_rule_ids_only() {
    let text = "a (R7) b\nR3: c\nthe rules (R1…R17)\nR4–R12 here\nR2D2, R101, FOR1, RR, (R)\n";
    assert_eq!(
        bare_rule_ids(text),
        vec!["a (R7) b", "R3: c", "the rules (R1…R17)", "R4–R12 here"]
    );
}

#[test]
fn no_page_of_the_guide_cites_a_bare_rule_id() {
    let mut offenders = Vec::new();
    for page in guide_pages() {
        let ids = bare_rule_ids(&read(&page));
        offenders.extend(ids.into_iter().map(|line| format!("{page}: {line}")));
    }
    assert!(
        offenders.is_empty(),
        "bare rule ids (link the rule's code in docs/rules.md instead):\n{}",
        offenders.join("\n")
    );
}

/// The anchors of a page's headings, as GitHub makes them: lower case,
/// punctuation other than `-` and `_` removed, spaces as `-`. Headings in
/// fenced code are not headings.
fn anchors(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let Some(title) = line.trim_start_matches('#').strip_prefix(' ') else {
            continue;
        };
        if fenced || !line.starts_with('#') {
            continue;
        }
        out.push(
            title
                .trim()
                .to_lowercase()
                .chars()
                .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
                .map(|c| if c == ' ' { '-' } else { c })
                .collect(),
        );
    }
    out
}

#[test]
fn anchors_are_made_as_github_makes_them() {
    let text = "# The rules of accum\n## `accum::plan::global-batch`\n```\n# not a heading\n```\n#hashtag\n";
    assert_eq!(
        anchors(text),
        vec!["the-rules-of-accum", "accumplanglobal-batch"]
    );
}

/// The targets of the Markdown links `[text](target)` of `text`.
fn link_targets(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        if let Some(end) = after.find(')') {
            let target = &after[..end];
            if !target.is_empty() && !target.contains(char::is_whitespace) {
                out.push(target.to_owned());
            }
        }
        rest = after;
    }
    out
}

#[test]
fn every_link_between_pages_lands_on_a_file_and_a_heading() {
    let mut broken = Vec::new();
    let mut to_rules = 0;
    for page in guide_pages() {
        let dir = Path::new(&page).parent().expect("a folder").to_owned();
        for target in link_targets(&read(&page)) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let file = if file.is_empty() {
                page.clone()
            } else {
                dir.join(file).to_string_lossy().into_owned()
            };
            if !root().join(&file).exists() {
                broken.push(format!("{page}: {target} (no such file)"));
                continue;
            }
            if anchor.is_empty() || !file.ends_with(".md") {
                continue;
            }
            if file.ends_with("rules.md") {
                to_rules += 1;
            }
            if !anchors(&read(&file)).iter().any(|a| a == anchor) {
                broken.push(format!("{page}: {target} (no such heading)"));
            }
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
    // The rules are cited by links to their entries.
    assert!(to_rules >= 10, "{to_rules} links to entries of rules.md");
}

#[test]
fn the_readme_links_every_page_of_the_guide() {
    let readme = read("README.md");
    let targets = link_targets(&readme);
    let missing: Vec<String> = guide_pages()
        .into_iter()
        .skip(1)
        .filter(|page| !targets.iter().any(|t| t == page))
        .collect();
    assert!(missing.is_empty(), "README.md does not link {missing:?}");
}

#[test]
fn the_readme_opens_with_two_commands_that_work() {
    let readme = read("README.md");
    let block = readme
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a sh block");
    let commands: Vec<&str> = block
        .lines()
        .map(|line| line.split('#').next().unwrap_or("").trim())
        .collect();
    assert_eq!(
        commands,
        [
            "cargo run --release -p accum-cli -- run examples/quickstart.toml",
            "cargo test --workspace --locked",
        ]
    );
    // The first one: the binary with the arguments after `--`, from the
    // workspace root, runs the whole quickstart.
    let args: Vec<&str> = commands[0]
        .split(" -- ")
        .nth(1)
        .expect("arguments after --")
        .split_whitespace()
        .collect();
    let out = run_in(
        &root(),
        &[args.as_slice(), &["-q", "--format", "json"]].concat(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("\"applied_updates\": 300"),
        "{}",
        out.stdout
    );
    // The second one is the test command CI runs.
    let ci = read(".ci/run");
    assert!(
        ci.lines().any(|line| line == commands[1]),
        "CI does not run `{}`",
        commands[1]
    );
}
