//! Fixes as data: a [`Suggestion`] is the text edits that fix a finding
//! (byte ranges of the file and their replacements) with an
//! [`Applicability`] decided where the finding is made, so that
//! `validate --fix` and `lint --fix` can apply the safe ones and every
//! output format can carry them.
//!
//! Edits are made on the file's text at the finding's range, never by
//! writing the parsed value out again: a fix keeps the file's comments, key
//! order, quoting and layout everywhere else.

use std::ops::Range;

use serde::Serialize;

use crate::source::{Document, Node, NodeKind, SourceFormat};

/// Whether a fix may be applied without a person reading it, as ruff's
/// `safe`/`unsafe` fixes and rustc's `MachineApplicable`/`MaybeIncorrect`
/// suggestions tell them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Applicability {
    /// The fix does what the file meant, and nothing else: the one key a
    /// misspelt key can mean, a number written in quotes. `--fix` applies it.
    Safe,
    /// The fix is one way out among others, or changes what the file says
    /// (another plan value, a unit for a bare count): a person chooses it.
    /// `--fix --unsafe-fixes` applies it when it is the only one offered.
    Review,
}

impl Applicability {
    /// `safe` or `review`, as the JSON output writes it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Applicability::Safe => "safe",
            Applicability::Review => "review",
        }
    }
}

/// One replacement in a file's text.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TextEdit {
    /// The bytes replaced (empty to insert).
    pub range: Range<usize>,
    /// What they are replaced with (empty to delete).
    pub replacement: String,
}

/// A fix: what it does, in words, how sure it is, and its edits.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Suggestion {
    /// What the fix does: `` rename `micro_bach` to `micro_batch` ``.
    pub message: String,
    /// Whether `--fix` may apply it alone.
    pub applicability: Applicability,
    /// The edits, in the order of the text, none overlapping.
    pub edits: Vec<TextEdit>,
}

impl Suggestion {
    /// A fix of one edit.
    pub(crate) fn one(
        message: impl Into<String>,
        applicability: Applicability,
        range: Range<usize>,
        replacement: impl Into<String>,
    ) -> Suggestion {
        Suggestion {
            message: message.into(),
            applicability,
            edits: vec![TextEdit {
                range,
                replacement: replacement.into(),
            }],
        }
    }
}

/// Renames the key at `key_range` of `doc` to `name`, written as the file
/// writes that key: quoted with the quote it has, bare where it is bare
/// and the new name may be bare.
pub(crate) fn rename_key(
    doc: &Document,
    key_range: Range<usize>,
    old: &str,
    name: &str,
    applicability: Applicability,
) -> Option<Suggestion> {
    let written = doc.text.get(key_range.clone())?;
    let key = match written.chars().next()? {
        '"' => json_string(name),
        '\'' if !name.contains('\'') && !name.contains('\n') => format!("'{name}'"),
        _ if bare_key(doc.format, name) => name.to_owned(),
        _ => json_string(name),
    };
    Some(Suggestion::one(
        format!("rename `{old}` to `{name}`"),
        applicability,
        key_range,
        key,
    ))
}

/// Whether `name` may be written unquoted as a key of `format`.
fn bare_key(format: SourceFormat, name: &str) -> bool {
    let word = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    match format {
        SourceFormat::Json => false,
        SourceFormat::Toml | SourceFormat::Yaml => word,
    }
}

/// `text` as a double-quoted string, which JSON, TOML and YAML all read
/// the same for the characters a key or a word holds.
pub(crate) fn json_string(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

/// What a scalar written in quotes reads as without them, when that is
/// the type the place takes: `"8"` where an integer goes, `"3e-4"` where a
/// number goes, `"true"` where a boolean goes. `types` are the JSON type
/// names the place allows.
pub(crate) fn unquoted(node: &Node, types: &[&str]) -> Option<String> {
    let NodeKind::String(text) = &node.kind else {
        return None;
    };
    let text = text.trim();
    let wants = |t: &str| types.contains(&t);
    if wants("integer") || wants("number") {
        let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
        let integer = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
        if integer && (wants("integer") || wants("number")) {
            return text.parse::<i128>().ok().map(|n| n.to_string());
        }
        if wants("number")
            && text.bytes().any(|b| b.is_ascii_digit())
            && text
                .bytes()
                .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'))
            && text.parse::<f64>().is_ok_and(f64::is_finite)
        {
            // As written, so that `3e-4` stays `3e-4`; a leading `.` or a
            // trailing one is not a number in every format.
            let normal = !text.starts_with('.')
                && !text.starts_with("-.")
                && !text.ends_with('.')
                && !text.contains(".e")
                && !text.contains(".E");
            return normal.then(|| text.to_owned());
        }
    }
    if wants("boolean") && (text == "true" || text == "false") {
        return Some(text.to_owned());
    }
    None
}

/// The fix of a value written in quotes where a number or a boolean goes
/// ([`unquoted`]): safe, since the text is the same value the place takes.
pub(crate) fn unquote(doc: &Document, path: &[String], types: &[&str]) -> Option<Suggestion> {
    let node = doc.node(path)?;
    let value = unquoted(node, types)?;
    let written = doc.text.get(node.range.clone())?;
    // Only a plain quoted scalar: a YAML block scalar or a string built of
    // escapes is left to a person.
    let quoted = (written.starts_with('"') && written.ends_with('"'))
        || (written.starts_with('\'') && written.ends_with('\''));
    if !quoted || written.len() < 2 || written[1..written.len() - 1].trim() != value {
        return None;
    }
    Some(Suggestion::one(
        format!("write {value} without quotes"),
        Applicability::Safe,
        node.range.clone(),
        value,
    ))
}

/// How to write a value of one of `types` (JSON type names) at `key` in
/// `format`, for the help of a type error: `` write an integer without
/// quotes: `micro_batch = 8` ``. `found` is the value the file has, used as
/// the example where it reads as the type (`"8"` gives `8`).
pub(crate) fn how_to_write(
    format: SourceFormat,
    key: &str,
    types: &[&str],
    found: Option<&Node>,
) -> Option<String> {
    let example = |kind: &str| found.and_then(|node| unquoted(node, &[kind]));
    let ways: Vec<String> = types
        .iter()
        .filter(|t| **t != "null")
        .filter(|t| !(**t == "integer" && types.contains(&"number")))
        .map(|kind| {
            let (words, value) = match *kind {
                "integer" => (
                    "a whole number without quotes",
                    example("integer").unwrap_or_else(|| "8".to_owned()),
                ),
                "number" => (
                    "a number without quotes",
                    example("number").unwrap_or_else(|| "0.5".to_owned()),
                ),
                "boolean" => (
                    "true or false without quotes",
                    example("boolean").unwrap_or_else(|| "true".to_owned()),
                ),
                "string" => {
                    let text = found
                        .and_then(|node| match &node.kind {
                            NodeKind::Integer(i) => Some(i.to_string()),
                            NodeKind::Float(f) => Some(f.to_string()),
                            NodeKind::Bool(b) => Some(b.to_string()),
                            _ => None,
                        })
                        .unwrap_or_else(|| "text".to_owned());
                    ("text in double quotes", json_string(&text))
                }
                "array" => ("a list in brackets", "[1, 2]".to_owned()),
                _ => {
                    return match format {
                        SourceFormat::Toml => format!(
                            "a table: `[{key}]` on a line of its own, its keys on the lines below"
                        ),
                        SourceFormat::Yaml => {
                            format!("a mapping: `{key}:` with its keys indented below it")
                        }
                        SourceFormat::Json => format!("an object: `\"{key}\": {{ … }}`"),
                    };
                }
            };
            format!("{words}: `{}`", entry(format, key, &value))
        })
        .collect();
    match ways.as_slice() {
        [] => None,
        [one] => Some(format!("write {one}")),
        [init @ .., last] => Some(format!("write {}, or {last}", init.join(", "))),
    }
}

/// `key = value` as `format` writes one entry.
fn entry(format: SourceFormat, key: &str, value: &str) -> String {
    let bare = bare_key(format, key);
    let key = if bare {
        key.to_owned()
    } else {
        json_string(key)
    };
    match format {
        SourceFormat::Toml => format!("{key} = {value}"),
        SourceFormat::Yaml => format!("{key}: {value}"),
        SourceFormat::Json => format!("{key}: {value}"),
    }
}

/// The fix of a string value that is a misspelling of one choice: the
/// value replaced by `word`, quoted as the file quotes the value (a YAML
/// plain scalar stays plain). Safe: the choice is the only one near.
pub(crate) fn replace_word(doc: &Document, path: &[String], word: &str) -> Option<Suggestion> {
    let node = doc.node(path)?;
    let NodeKind::String(old) = &node.kind else {
        return None;
    };
    let written = doc.text.get(node.range.clone())?;
    let plain = word
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let replacement = match written.chars().next()? {
        '"' => json_string(word),
        '\'' if !word.contains('\'') => format!("'{word}'"),
        _ if doc.format == SourceFormat::Yaml && plain && written == old => word.to_owned(),
        _ => return None,
    };
    Some(Suggestion::one(
        format!("write \"{word}\" for \"{old}\""),
        Applicability::Safe,
        node.range.clone(),
        replacement,
    ))
}

/// The edit that sets the scalar at `path` of `doc` to `value`, when the
/// file writes one there.
pub(crate) fn set_scalar(doc: &Document, path: &[String], value: &str) -> Option<TextEdit> {
    let node = doc.node(path)?;
    if matches!(node.kind, NodeKind::Table(_) | NodeKind::Array(_)) {
        return None;
    }
    doc.text.get(node.range.clone())?;
    Some(TextEdit {
        range: node.range.clone(),
        replacement: value.to_owned(),
    })
}

/// The fix that makes each of `settings` (what it sets, as `key = value`,
/// and the edit that writes the value), for a person to choose: another
/// plan value changes the training. `None` when it sets nothing.
pub(crate) fn setting(settings: Vec<(String, TextEdit)>) -> Option<Suggestion> {
    if settings.is_empty() {
        return None;
    }
    let said: Vec<&str> = settings.iter().map(|(said, _)| said.as_str()).collect();
    let message = format!("set {}", said.join(", "));
    let mut edits: Vec<TextEdit> = settings.into_iter().map(|(_, edit)| edit).collect();
    edits.sort_by_key(|e| e.range.start);
    Some(Suggestion {
        message,
        applicability: Applicability::Review,
        edits,
    })
}

/// The edits to apply for the suggestions of each finding, at most
/// `allowed`: of each finding, its suggestion when it offers exactly one at
/// that level (alternatives are for a person to choose), and of two
/// suggestions that touch the same text, the first. Returned in the order
/// of the text.
pub(crate) fn chosen<'a>(
    suggestions_per_finding: impl IntoIterator<Item = &'a [Suggestion]>,
    allowed: Applicability,
) -> Vec<&'a Suggestion> {
    let mut picked: Vec<&Suggestion> = Vec::new();
    for suggestions in suggestions_per_finding {
        let [only] = suggestions else {
            continue;
        };
        if only.applicability > allowed || only.edits.is_empty() {
            continue;
        }
        let clashes = picked.iter().any(|p| {
            p.edits.iter().any(|a| {
                only.edits
                    .iter()
                    .any(|b| overlaps(&a.range, &b.range) || a.range == b.range)
            })
        });
        if !clashes && !picked.contains(&only) {
            picked.push(only);
        }
    }
    picked.sort_by_key(|s| s.edits[0].range.start);
    picked
}

/// Whether two ranges share a byte, or one inserts inside the other.
fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    a.start < b.end && b.start < a.end
        || (a.is_empty() && b.start < a.start && a.start < b.end)
        || (b.is_empty() && a.start < b.start && b.start < a.end)
}

/// `text` with the edits of `suggestions` applied (they do not overlap:
/// [`chosen`]); `None` when an edit falls outside the text or off a
/// character boundary.
pub(crate) fn apply(text: &str, suggestions: &[&Suggestion]) -> Option<String> {
    let mut edits: Vec<&TextEdit> = suggestions.iter().flat_map(|s| &s.edits).collect();
    edits.sort_by_key(|e| (e.range.start, e.range.end));
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for edit in edits {
        if edit.range.start < at
            || edit.range.end > text.len()
            || !text.is_char_boundary(edit.range.start)
            || !text.is_char_boundary(edit.range.end)
        {
            return None;
        }
        out.push_str(&text[at..edit.range.start]);
        out.push_str(&edit.replacement);
        at = edit.range.end;
    }
    out.push_str(&text[at..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str, format: SourceFormat) -> Document {
        Document::parse("t".into(), text.into(), format).expect("parses")
    }

    fn path(dotted: &str) -> Vec<String> {
        dotted.split('.').map(str::to_owned).collect()
    }

    #[test]
    fn a_key_is_renamed_as_the_file_writes_keys() {
        for (text, format, want) in [
            (
                "[batch]\nmicro_bach = 8 # m\n",
                SourceFormat::Toml,
                "[batch]\nmicro_batch = 8 # m\n",
            ),
            (
                "[batch]\n\"micro_bach\" = 8\n",
                SourceFormat::Toml,
                "[batch]\n\"micro_batch\" = 8\n",
            ),
            (
                "batch:\n  'micro_bach': 8\n",
                SourceFormat::Yaml,
                "batch:\n  'micro_batch': 8\n",
            ),
            (
                "{\"batch\": {\"micro_bach\": 8}}",
                SourceFormat::Json,
                "{\"batch\": {\"micro_batch\": 8}}",
            ),
        ] {
            let d = doc(text, format);
            let range = d.key_range(&path("batch.micro_bach")).expect("key");
            let fix = rename_key(&d, range, "micro_bach", "micro_batch", Applicability::Safe)
                .expect("fix");
            assert_eq!(apply(text, &[&fix]).as_deref(), Some(want), "{text}");
        }
    }

    #[test]
    fn only_a_quoted_value_of_the_type_the_place_takes_is_unquoted() {
        let text = "a = \"8\"\nb = \"3e-4\"\nc = \"eight\"\nd = \"true\"\ne = '-2'\nf = \".5\"\n";
        let d = doc(text, SourceFormat::Toml);
        let fix = |key: &str, types: &[&str]| {
            unquote(&d, &path(key), types).map(|s| s.edits[0].replacement.clone())
        };
        assert_eq!(fix("a", &["integer"]).as_deref(), Some("8"));
        assert_eq!(fix("a", &["string"]), None);
        assert_eq!(fix("b", &["number"]).as_deref(), Some("3e-4"));
        assert_eq!(fix("b", &["integer"]), None);
        assert_eq!(fix("c", &["integer", "number"]), None);
        assert_eq!(fix("d", &["boolean"]).as_deref(), Some("true"));
        assert_eq!(fix("e", &["integer"]).as_deref(), Some("-2"));
        assert_eq!(fix("f", &["number"]), None);
    }

    #[test]
    fn alternatives_and_clashing_edits_are_left_to_a_person() {
        let safe = Suggestion::one("a", Applicability::Safe, 0..1, "x");
        let review = Suggestion::one("b", Applicability::Review, 4..5, "y");
        let other = Suggestion::one("c", Applicability::Review, 6..7, "z");
        let clash = Suggestion::one("d", Applicability::Safe, 0..2, "w");
        let findings: Vec<Vec<Suggestion>> = vec![
            vec![safe.clone()],
            vec![review.clone()],
            vec![review.clone(), other.clone()],
            vec![clash.clone()],
        ];
        let slices = || findings.iter().map(Vec::as_slice);
        assert_eq!(chosen(slices(), Applicability::Safe), [&safe]);
        assert_eq!(chosen(slices(), Applicability::Review), [&safe, &review]);
        assert_eq!(
            apply("abcdefgh", &chosen(slices(), Applicability::Review)).as_deref(),
            Some("xbcdyfgh")
        );
    }
}
