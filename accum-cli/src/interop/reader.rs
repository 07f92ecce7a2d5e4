//! Reading values out of a framework's JSON or YAML file: typed getters that
//! keep the range and path of what they read, and push a `value` finding for
//! what has the wrong type.

use std::cell::RefCell;
use std::collections::HashSet;
use std::ops::Range;

use accum_core::Code;

use super::census;
use super::{FileReport, ImportError};
use crate::diagnostic::Diagnostic;
use crate::source::{Document, Node, NodeKind, ReadNote, SourceFormat, YamlLoader, line_col};

/// A value read from a file, with where it was.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct At<T> {
    pub(crate) value: T,
    pub(crate) range: Range<usize>,
    pub(crate) path: Vec<String>,
}

/// A key path as owned strings.
pub(crate) fn owned(path: &[&str]) -> Vec<String> {
    path.iter().map(|s| (*s).to_owned()).collect()
}

/// A parsed file and the findings about it.
pub(crate) struct Reader {
    pub(crate) doc: Document,
    pub(crate) findings: Vec<Diagnostic>,
    /// Whether numbers written as strings count (argument parsers convert
    /// them: `"1e-5"` from a YAML 1.1 reader is a float to the Trainer).
    pub(crate) strings_are_numbers: bool,
    /// Every path looked up, for the census of what was left unread.
    read: RefCell<HashSet<Vec<String>>>,
    /// Where each value looked up starts, for the notes on values the
    /// loader reads differently from their text.
    read_at: RefCell<HashSet<usize>>,
    /// OmegaConf's interpolations are resolved (NeMo, Hydra), with these
    /// variables and values.
    pub(crate) interpolation: Option<super::interpolate::Interpolation>,
}

/// Whether a text looks like YAML rather than JSON (JSON is also YAML, but
/// the JSON reader keeps JSON's errors for JSON files).
pub(crate) fn looks_like_json(name: &str, text: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    if lower.ends_with(".yaml") || lower.ends_with(".yml") {
        return false;
    }
    if lower.ends_with(".json") || lower.ends_with(".jsonc") {
        return true;
    }
    // The first character that is not blank or in a comment.
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix("//") {
            rest = after.split_once('\n').map_or("", |(_, r)| r);
        } else if let Some(after) = rest.strip_prefix('#') {
            rest = after.split_once('\n').map_or("", |(_, r)| r);
        } else {
            break;
        }
    }
    rest.starts_with('{')
}

impl Reader {
    /// Parses JSON, or YAML as the framework's `yaml` loader reads it when
    /// one is given and the text is not JSON.
    pub(crate) fn parse(
        name: &str,
        text: &str,
        yaml: Option<YamlLoader>,
    ) -> Result<Reader, ImportError> {
        let (format, loader) = match yaml {
            Some(loader) if !looks_like_json(name, text) => (SourceFormat::Yaml, loader),
            _ => (SourceFormat::Json, YamlLoader::Yaml12),
        };
        Document::parse_with(name.to_owned(), text.to_owned(), format, loader)
            .map(|doc| Reader {
                doc,
                findings: Vec::new(),
                strings_are_numbers: false,
                read: RefCell::default(),
                read_at: RefCell::default(),
                interpolation: None,
            })
            .map_err(|err| {
                let (line, column) = err
                    .range
                    .as_ref()
                    .map_or((1, 1), |s| line_col(&err.text, s.start));
                ImportError::Syntax {
                    name: name.to_owned(),
                    line,
                    column,
                    message: format!("invalid {}: {}", format.name(), err.message),
                }
            })
    }

    /// The file and its findings, with the keys of the batch vocabulary
    /// that were not looked up.
    pub(crate) fn into_report(mut self) -> FileReport {
        let unread = census::unread_keys(&self.doc.root, &self.read.borrow());
        // A value read differently from its text is worth a warning where
        // the value is read; a key given twice, always.
        let read_at = self.read_at.borrow();
        for note in &self.doc.notes {
            // A number the loader leaves as text (`2e-5`) is a number again
            // to a framework whose argument parser converts it.
            let converted = self.strings_are_numbers
                && matches!(self.doc.node(&note.path).map(|n| &n.kind),
                    Some(NodeKind::String(s)) if python_number(s).is_some());
            if note.always || (read_at.contains(&note.range.start) && !converted) {
                self.findings.push(note_finding(note));
            }
        }
        drop(read_at);
        FileReport {
            name: self.doc.name,
            text: self.doc.text,
            findings: self.findings,
            unread,
            named_inside: false,
        }
    }

    pub(crate) fn node(&self, path: &[&str]) -> Option<&Node> {
        let path = owned(path);
        let node = self.doc.node(&path);
        if let Some(n) = node {
            self.read_at.borrow_mut().insert(n.range.start);
        }
        self.read.borrow_mut().insert(path);
        node
    }

    /// Whether a key is present with a value other than `null`.
    pub(crate) fn has(&self, path: &[&str]) -> bool {
        self.node(path)
            .is_some_and(|n| !matches!(n.kind, NodeKind::Null))
    }

    /// Whether the value at `path` is a table.
    pub(crate) fn is_table(&self, path: &[&str]) -> bool {
        matches!(self.node(path).map(|n| &n.kind), Some(NodeKind::Table(_)))
    }

    /// The range to underline for a path (the value, or the nearest parent).
    pub(crate) fn range_of(&self, path: &[&str]) -> Range<usize> {
        self.doc.range_of(&owned(path))
    }

    /// The range of the key itself, or of the value.
    pub(crate) fn key_range(&self, path: &[&str]) -> Range<usize> {
        self.doc
            .key_range(&owned(path))
            .unwrap_or_else(|| self.range_of(path))
    }

    pub(crate) fn push(&mut self, finding: Diagnostic) {
        self.findings.push(finding);
    }

    /// Whether `node` is the value written at `path` (not one an
    /// interpolation there resolved to): a fix edits it in place.
    fn written_at(&self, path: &[&str], node: &Node) -> bool {
        self.doc
            .node(&owned(path))
            .is_some_and(|at| at.range == node.range)
    }

    fn bad(&mut self, path: &[&str], what: &str, types: &[&str], node: &Node) {
        self.refuse(Code::InteropValue, path, what, types, node);
    }

    /// A finding of `code` that the value at `path` is not `what`, a value
    /// of one of `types` (JSON type names). A value of that type written in
    /// quotes (`"32"`, which the framework reads as a string) has the safe
    /// fix of its quotes removed.
    fn refuse(&mut self, code: Code, path: &[&str], what: &str, types: &[&str], node: &Node) {
        let shown = node_text(&self.doc.text, node);
        let fix = self
            .written_at(path, node)
            .then(|| crate::fix::unquote(&self.doc, &owned(path), types))
            .flatten();
        let finding = Diagnostic::error(
            code,
            owned(path),
            format!("`{}` is {shown}, not {what}", path.join(".")),
        )
        .help(match &fix {
            Some(fix) => fix.message.clone(),
            None => format!("write {what}"),
        })
        .at(node.range.clone(), format!("expected {what}"))
        .fix(fix);
        self.findings.push(finding);
    }

    /// Whether the value at `path` is the string `"auto"`.
    pub(crate) fn is_auto(&self, path: &[&str]) -> bool {
        matches!(self.node(path).map(|n| &n.kind), Some(NodeKind::String(s)) if s == "auto")
    }

    /// A string value.
    pub(crate) fn str(&self, path: &[&str]) -> Option<At<String>> {
        let node = self.node(path)?;
        match &node.kind {
            NodeKind::String(s) => Some(At {
                value: s.clone(),
                range: node.range.clone(),
                path: owned(path),
            }),
            _ => None,
        }
    }

    /// The node at `path` with an OmegaConf interpolation resolved, when
    /// the dialect loads with OmegaConf; `None` (the finding pushed) when
    /// it cannot be.
    pub(crate) fn resolved(&mut self, path: &[&str], node: Node) -> Option<Node> {
        let Some(interpolation) = &self.interpolation else {
            return Some(node);
        };
        match super::interpolate::resolve(&self.doc, interpolation, path, node) {
            Ok(r) => {
                self.findings.extend(r.notes);
                // The keys it was computed from are read.
                for path in r.read {
                    if let Some(n) = self.doc.node(&path) {
                        self.read_at.borrow_mut().insert(n.range.start);
                    }
                    self.read.borrow_mut().insert(path);
                }
                Some(r.node)
            }
            Err(finding) => {
                self.findings.push(*finding);
                None
            }
        }
    }

    /// The number a node holds: integers, floats, and (when allowed)
    /// strings that Python's `int()`/`float()` would read.
    fn number(&self, node: &Node) -> Option<Number> {
        match &node.kind {
            NodeKind::Integer(i) => Some(Number::Int(*i)),
            NodeKind::Float(f) => Some(Number::Float(*f)),
            NodeKind::String(s) if self.strings_are_numbers => python_number(s),
            _ => None,
        }
    }

    /// A whole number ≥ `min`; a float with no fraction is accepted (Python
    /// frameworks accept `32.0`). Anything else is a `value` finding and `None`.
    pub(crate) fn uint(&mut self, path: &[&str], min: u64) -> Option<At<u64>> {
        let node = self.node(path)?.clone();
        let node = self.resolved(path, node)?;
        if matches!(node.kind, NodeKind::Null) {
            return None;
        }
        let value = self.number(&node).and_then(Number::whole);
        match value.and_then(|v| u64::try_from(v).ok()) {
            Some(v) if v >= min => Some(At {
                value: v,
                range: node.range.clone(),
                path: owned(path),
            }),
            _ => {
                let code = super::census::refused_code(path, value);
                // Unquoting fixes it only when the number itself is good.
                let quoted_good = matches!(&node.kind, NodeKind::String(t) if t.trim().parse::<u64>().is_ok_and(|v| v >= min));
                let types: &[&str] = if quoted_good { &["integer"] } else { &[] };
                self.refuse(code, path, &format!("a whole number ≥ {min}"), types, &node);
                // A whole number below the least the framework takes (a
                // zero accumulation): the least is one way out, for a
                // person to choose.
                if self.written_at(path, &node)
                    && matches!(node.kind, NodeKind::Integer(_))
                    && value.is_some_and(|v| v < i128::from(min))
                    && let Some(finding) = self.findings.last_mut()
                {
                    finding.fixes.push(crate::fix::Suggestion::one(
                        format!("set `{}` to {min}", path.join(".")),
                        crate::fix::Applicability::Review,
                        node.range.clone(),
                        min.to_string(),
                    ));
                }
                None
            }
        }
    }

    /// A signed whole number (for `-1` sentinels).
    pub(crate) fn int(&mut self, path: &[&str]) -> Option<At<i128>> {
        let node = self.node(path)?.clone();
        let node = self.resolved(path, node)?;
        if matches!(node.kind, NodeKind::Null) {
            return None;
        }
        match self.number(&node).and_then(Number::whole) {
            Some(value) => Some(At {
                value,
                range: node.range.clone(),
                path: owned(path),
            }),
            None => {
                self.bad(path, "a whole number", &["integer"], &node);
                None
            }
        }
    }

    /// A finite number ≥ 0.
    pub(crate) fn float(&mut self, path: &[&str]) -> Option<At<f64>> {
        let node = self.node(path)?.clone();
        let node = self.resolved(path, node)?;
        if matches!(node.kind, NodeKind::Null) {
            return None;
        }
        match self.number(&node).map(Number::as_f64) {
            Some(v) if v.is_finite() && v >= 0.0 => Some(At {
                value: v,
                range: node.range.clone(),
                path: owned(path),
            }),
            _ => {
                let quoted_good = matches!(&node.kind, NodeKind::String(t) if t.trim().parse::<f64>().is_ok_and(|v| v.is_finite() && v >= 0.0));
                let types: &[&str] = if quoted_good { &["number"] } else { &[] };
                self.bad(path, "a finite number ≥ 0", types, &node);
                None
            }
        }
    }

    /// A boolean (the strings `"true"`/`"false"` are accepted, as argument
    /// parsers do).
    pub(crate) fn bool(&mut self, path: &[&str]) -> Option<At<bool>> {
        let node = self.node(path)?.clone();
        let value = match &node.kind {
            NodeKind::Null => return None,
            NodeKind::Bool(b) => Some(*b),
            NodeKind::String(s) if s.eq_ignore_ascii_case("true") => Some(true),
            NodeKind::String(s) if s.eq_ignore_ascii_case("false") => Some(false),
            _ => None,
        };
        match value {
            Some(v) => Some(At {
                value: v,
                range: node.range.clone(),
                path: owned(path),
            }),
            None => {
                self.bad(path, "true or false", &["boolean"], &node);
                None
            }
        }
    }

    /// Whether a boolean key is true (absent, null or unreadable: false).
    pub(crate) fn truthy(&mut self, path: &[&str]) -> bool {
        self.bool(path).is_some_and(|b| b.value)
    }
}

/// The warning for a value the framework's loader reads differently from
/// its text (`accum::interop::value`: the file is read differently than it
/// looks).
pub(crate) fn note_finding(note: &ReadNote) -> Diagnostic {
    Diagnostic::error(Code::InteropValue, note.path.clone(), note.message.clone())
        .warning()
        .help(note.help.clone())
        .at(note.range.clone(), "read by the framework's loader")
}

/// A number as read.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Number {
    Int(i128),
    Float(f64),
}

impl Number {
    /// The whole number it is, if it is one.
    pub(crate) fn whole(self) -> Option<i128> {
        match self {
            Number::Int(i) => Some(i),
            // Exact for every integer below 2^53; larger floats are not counts.
            Number::Float(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 9.0e15 => {
                Some(f as i128)
            }
            Number::Float(_) => None,
        }
    }

    pub(crate) fn as_f64(self) -> f64 {
        match self {
            Number::Int(i) => i as f64,
            Number::Float(f) => f,
        }
    }
}

/// A number as Python's `int()` or `float()` reads a string: surrounding
/// blanks, a sign, and `_` between digits (`int("220_000_000")`).
pub(crate) fn python_number(text: &str) -> Option<Number> {
    let t = text.trim();
    let (sign, digits) = match t.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", t.strip_prefix('+').unwrap_or(t)),
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
    {
        return None;
    }
    // An underscore must sit between two digits.
    let bytes = digits.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'_'
            && !(bytes.get(i.wrapping_sub(1)).is_some_and(u8::is_ascii_digit)
                && bytes.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            return None;
        }
    }
    let plain: String = digits.chars().filter(|&c| c != '_').collect();
    if plain.bytes().all(|b| b.is_ascii_digit()) {
        return format!("{sign}{plain}").parse().ok().map(Number::Int);
    }
    let lower = plain.to_ascii_lowercase();
    if lower.contains("inf") || lower.contains("nan") {
        return None;
    }
    if !lower
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'-' | b'+'))
    {
        return None;
    }
    format!("{sign}{plain}").parse().ok().map(Number::Float)
}

/// A short rendering of a value for messages.
fn node_text(text: &str, node: &Node) -> String {
    let raw = text.get(node.range.clone()).unwrap_or("").trim();
    if raw.is_empty() || raw.len() > 40 {
        format!("a {}", node.kind.type_name())
    } else {
        format!("`{raw}`")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_reads_underscores_between_digits_only() {
        assert_eq!(python_number("220_000_000"), Some(Number::Int(220_000_000)));
        assert_eq!(python_number(" -3 "), Some(Number::Int(-3)));
        assert_eq!(python_number("1e-4"), Some(Number::Float(1e-4)));
        assert_eq!(python_number("6.0e-5"), Some(Number::Float(6.0e-5)));
        for bad in ["_1", "1_", "1__0", "1_.5", "abc", "", "inf", "nan", "0x10"] {
            assert_eq!(python_number(bad), None, "{bad}");
        }
    }

    #[test]
    fn yaml_is_told_from_json_by_name_then_by_text() {
        assert!(looks_like_json("a.txt", "// c\n# d\n  {\"a\": 1}"));
        assert!(!looks_like_json("a.txt", "a: 1"));
        assert!(!looks_like_json("a.yaml", "{\"a\": 1}"));
        assert!(looks_like_json("a.json", "a: 1"));
    }
}
