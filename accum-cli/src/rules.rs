//! The project's rules, one entry per diagnostic code, as `docs/rules.md`
//! writes them: that page is embedded in the binary and read here, so that
//! `explain CODE` prints what the documentation says, and nothing else. Its
//! entries are the codes of [`Code::ALL`], in their order (a test checks
//! both ways).

use accum_core::Code;

/// `docs/rules.md`.
const RULES: &str = include_str!("../../docs/rules.md");

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
    let mut rest = RULES;
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
        .expect("docs/rules.md has an entry for every code")
}

/// The code written `text`, with or without the `accum::` prefix; a code
/// merged into another ([`Code::RENAMED`]) gives the one that replaced it.
pub(crate) fn parse(text: &str) -> Option<Code> {
    let text = text.trim();
    text.parse()
        .or_else(|_| format!("{PREFIX}{text}").parse())
        .ok()
}

/// The entry of `code`, written with or without the `accum::` prefix.
pub(crate) fn find(code: &str) -> Option<Entry> {
    parse(code).map(entry)
}

/// The code most like `code`, for a did-you-mean.
pub(crate) fn nearest(code: &str) -> Option<Code> {
    let code = code.trim();
    let bare = code.strip_prefix(PREFIX).unwrap_or(code);
    crate::suggest::did_you_mean(bare, Code::ALL.iter().map(|c| short(c.as_str()))).and_then(
        |near| {
            Code::ALL
                .iter()
                .copied()
                .find(|c| short(c.as_str()) == near)
        },
    )
}

fn short(code: &str) -> &str {
    code.strip_prefix(PREFIX).unwrap_or(code)
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
        let entry = find("accum::plan::global-batch").expect("an entry");
        assert_eq!(entry.code, "accum::plan::global-batch");
        assert_eq!(
            entry.summary,
            "The declared global batch is not `m·A·D`, or cannot be reached with whole\nfactors."
        );
        assert_eq!(find("plan::global-batch"), Some(entry));
        assert_eq!(find("plan::globalbatch"), None);
        assert_eq!(nearest("plan::globalbatch"), Some(Code::GlobalBatch));
        assert_eq!(
            nearest("accum::schema::unknown-keys"),
            Some(Code::UnknownKey)
        );
        assert_eq!(nearest("nothing-like-it"), None);
    }

    #[test]
    fn merged_codes_find_the_rule_that_replaced_them() {
        for &(old, code) in Code::RENAMED {
            assert_eq!(find(old), Some(entry(code)), "{old}");
            let bare = old.strip_prefix(PREFIX).expect("a prefix");
            assert_eq!(parse(bare), Some(code), "{bare}");
            assert!(
                entry(code).text.contains(&format!("`{old}`")),
                "the entry of {code} does not say that it replaced {old}"
            );
        }
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
