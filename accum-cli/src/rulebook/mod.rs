//! The project's rules, one entry per diagnostic code, kept where each
//! family's checks are (as ruff keeps a rule beside its check): the
//! configuration files' in `validate/rules.md`, the estimates' in
//! `calc/rules.md`, the importers' in `interop/rules.md`, and accum-core's
//! beside its checks (`derive/spans.md`, `plan/rules.md`,
//! `plan/stages/rules.md`, `engine/rules.md`, `verify.md`). An entry there
//! has its heading and its parts (checks, prevents, fix, wrong, right); its
//! one-line description is the [`Code`]'s own ([`Code::summary`]), written
//! once in accum-core's `code.rs`.
//!
//! The page composed here is docs/rules.md (a test fails when that file is
//! stale; `UPDATE_RULES=1 cargo test -p accum-cli --lib rulebook::` writes
//! it), and what `explain CODE` prints. Its entries are the codes of
//! [`Code::ALL`], in their order (a test checks both ways).

use std::sync::OnceLock;

use accum_core::Code;

/// The page's opening: what a code is, the renamed codes, the symptoms.
const INTRO: &str = include_str!("intro.md");

/// Each family's entries, in the order of the page.
const FAMILIES: [&str; 8] = [
    include_str!("../validate/rules.md"),
    include_str!("../../../accum-core/src/derive/spans.md"),
    include_str!("../../../accum-core/src/plan/rules.md"),
    include_str!("../../../accum-core/src/plan/stages/rules.md"),
    include_str!("../../../accum-core/src/engine/rules.md"),
    include_str!("../../../accum-core/src/verify.md"),
    include_str!("../calc/rules.md"),
    include_str!("../interop/rules.md"),
];

/// The width the one-line descriptions are wrapped to, as the entries
/// around them are.
const WIDTH: usize = 76;

/// The rules as one page: docs/rules.md.
pub(crate) fn page() -> &'static str {
    static PAGE: OnceLock<String> = OnceLock::new();
    PAGE.get_or_init(|| {
        let mut page = INTRO.to_owned();
        for family in FAMILIES {
            for line in family.split_inclusive('\n') {
                page.push_str(line);
                let heading = line
                    .strip_prefix("## `")
                    .and_then(|rest| rest.trim_end().strip_suffix('`'));
                if let Some(code) = heading {
                    let code: Code = code
                        .parse()
                        .expect("every entry of the rules is headed by a code");
                    page.push('\n');
                    page.push_str(&wrap(code.summary(), WIDTH));
                    page.push('\n');
                }
            }
        }
        page
    })
}

/// `text` in lines of at most `width` characters (a longer word stands
/// alone), broken at spaces.
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / width);
    let mut line = 0;
    for word in text.split_whitespace() {
        let len = word.chars().count();
        if line > 0 && line + 1 + len > width {
            out.push('\n');
            line = 0;
        } else if line > 0 {
            out.push(' ');
            line += 1;
        }
        out.push_str(word);
        line += len;
    }
    out
}

/// The prefix every code starts with.
const PREFIX: &str = "accum::";

/// One entry of the rules: a code, its one-line summary, its text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The code (`accum::plan::global-batch`).
    pub(crate) code: &'static str,
    /// The entry's first paragraph, the rule in one sentence.
    pub(crate) summary: &'static str,
    /// The entry as written, without its heading.
    pub(crate) text: &'static str,
}

/// Every entry, in the order of the page.
pub(crate) fn entries() -> Vec<Entry> {
    let mut entries = Vec::new();
    let mut rest = page();
    while let Some(at) = rest.find("\n## `") {
        let heading = &rest[at + 1..];
        let line_end = heading.find('\n').unwrap_or(heading.len());
        let code = heading[..line_end]
            .trim_start_matches("## `")
            .trim_end()
            .trim_end_matches('`');
        let body = &heading[(line_end + 1).min(heading.len())..];
        // An entry ends at the next heading of any level.
        let end = body
            .find("\n# ")
            .into_iter()
            .chain(body.find("\n## "))
            .min()
            .unwrap_or(body.len());
        let text = body[..end].trim();
        let summary = text.split("\n\n").next().unwrap_or(text).trim();
        entries.push(Entry {
            code,
            summary,
            text,
        });
        rest = body;
    }
    entries
}

/// The entry of `code`.
pub(crate) fn entry(code: Code) -> Entry {
    entries()
        .into_iter()
        .find(|entry| entry.code == code.as_str())
        .expect("the rules have an entry for every code")
}

/// The code written `text`, with or without the `accum::` prefix; a code
/// merged into another ([`Code::RENAMED`]) gives the one that replaced it.
pub(crate) fn parse(text: &str) -> Option<Code> {
    let text = text.trim();
    text.parse()
        .or_else(|_| format!("{PREFIX}{text}").parse())
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_has_a_code_a_summary_and_the_five_parts() {
        let entries = entries();
        assert!(entries.len() >= 40, "{} entries", entries.len());
        for entry in &entries {
            assert!(entry.code.starts_with(PREFIX), "{}", entry.code);
            assert!(!entry.code.contains(' '), "{}", entry.code);
            assert!(!entry.summary.is_empty(), "{}", entry.code);
            for part in [
                "- **Checks:**",
                "- **Prevents:**",
                "- **Fix:**",
                "Wrong",
                "Right",
            ] {
                assert!(entry.text.contains(part), "{} lacks {part}", entry.code);
            }
            assert!(
                !entry.text.contains("\n## "),
                "{} runs into the next entry",
                entry.code
            );
        }
        let mut codes: Vec<&str> = entries.iter().map(|e| e.code).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), entries.len(), "a code has two entries");
    }

    #[test]
    fn codes_are_found_with_or_without_the_prefix() {
        let find = |code: &str| parse(code).map(entry);
        let entry = find("accum::plan::global-batch").expect("an entry");
        assert_eq!(entry.code, "accum::plan::global-batch");
        assert_eq!(
            entry.summary,
            "The declared global batch is not `m·A·D`, or cannot be reached with whole\nfactors."
        );
        assert_eq!(find("plan::global-batch"), Some(entry));
        assert_eq!(find("plan::globalbatch"), None);
    }

    #[test]
    fn merged_codes_find_the_rule_that_replaced_them() {
        for &(old, code) in Code::RENAMED {
            assert_eq!(parse(old).map(entry), Some(entry(code)), "{old}");
            let bare = old.strip_prefix(PREFIX).expect("a prefix");
            assert_eq!(parse(bare), Some(code), "{bare}");
            assert!(
                entry(code).text.contains(&format!("`{old}`")),
                "the entry of {code} does not say that it replaced {old}"
            );
        }
    }

    /// docs/rules.md is the page composed from the families' entries and
    /// the codes' descriptions: edited by hand, or left behind by an edit of
    /// an entry or a description, it fails here.
    #[test]
    fn docs_rules_md_is_generated_from_the_rules() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/rules.md");
        if std::env::var_os("UPDATE_RULES").is_some() {
            std::fs::write(&path, page()).expect("docs/rules.md is writable");
        }
        let written = std::fs::read_to_string(&path).expect("docs/rules.md is readable");
        assert!(
            written == page(),
            "docs/rules.md is stale: regenerate it with `UPDATE_RULES=1 cargo test -p accum-cli --lib rulebook::`"
        );
    }

    #[test]
    fn descriptions_wrap_at_spaces() {
        assert_eq!(wrap("a bb ccc", 4), "a bb\nccc");
        assert_eq!(wrap("abcdef g", 3), "abcdef\ng");
        assert_eq!(wrap("", 3), "");
    }

    /// The Rust files under `dir`, recursively.
    fn rust_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("a source folder").flatten() {
            let path = entry.path();
            if path.is_dir() {
                rust_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    /// Codes whose entry is an overview of their family that no check
    /// produces: `accum::plan` introduces the plan rules, and each problem
    /// has the code of the rule it breaks.
    const OVERVIEW_ONLY: &[Code] = &[Code::Plan];

    /// Every documented code is produced by some check: its variant is
    /// named in the code (tests left out) of a crate that reports problems,
    /// beside its declaration. A documented code that nothing makes fails
    /// here without running an input; `tests/cli/explain.rs` runs inputs
    /// that emit each one.
    #[test]
    fn every_documented_code_is_produced_by_a_check() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut files = Vec::new();
        for dir in ["accum-core/src", "accum-cli/src", "accum-macros/src"] {
            rust_files(&root.join(dir), &mut files);
        }
        let mut code = String::new();
        for file in files {
            let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name == "code.rs" || name.ends_with("tests.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&file).expect("a readable source");
            let shipped = text.split("#[cfg(test)]\nmod tests {").next().unwrap_or("");
            code.push_str(shipped);
            code.push('\n');
        }
        let named = |variant: &str| {
            code.match_indices(&format!("Code::{variant}"))
                .any(|(at, m)| {
                    !code[at + m.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
                })
        };
        let never: Vec<&str> = Code::ALL
            .iter()
            .filter(|&&c| !named(&format!("{c:?}")) && !OVERVIEW_ONLY.contains(&c))
            .map(|c| c.as_str())
            .collect();
        assert!(
            never.is_empty(),
            "documented codes that no check produces: {never:?}"
        );
    }

    /// docs/rules.md documents exactly the codes of [`Code::ALL`], in their
    /// order: a code that no entry explains, or an entry whose code accum
    /// does not have, fails here.
    #[test]
    fn the_rules_document_every_code_and_no_other() {
        let documented: Vec<&str> = entries().iter().map(|e| e.code).collect();
        let codes: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
        let undocumented: Vec<&&str> = codes.iter().filter(|c| !documented.contains(c)).collect();
        let unknown: Vec<&&str> = documented.iter().filter(|c| !codes.contains(c)).collect();
        assert!(
            undocumented.is_empty(),
            "codes without an entry in docs/rules.md: {undocumented:?}"
        );
        assert!(
            unknown.is_empty(),
            "entries of docs/rules.md that are not a Code: {unknown:?}"
        );
        assert_eq!(
            documented, codes,
            "docs/rules.md lists the codes in another order"
        );
    }
}
