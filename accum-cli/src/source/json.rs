//! JSON through `jsonc-parser`, which keeps the range of every value and
//! accepts what people write in JSON configs: `//` and `/* */` comments,
//! trailing commas, and the relaxed forms of hjson (DeepSpeed reads its config
//! with `hjson.load`, `deepspeed/runtime/config.py`, `DeepSpeedConfig.__init__`):
//! unquoted keys, single-quoted strings, newlines instead of commas. Duplicate
//! keys are refused (DeepSpeed refuses them too, with
//! `dict_raise_error_on_duplicate_keys`), and so is nesting deeper than
//! [`MAX_DEPTH`].

use std::ops::Range;

use jsonc_parser::ast::{ObjectPropName, Value};
use jsonc_parser::common::Ranged;
use jsonc_parser::errors::ParseErrorKind;
use jsonc_parser::{CollectOptions, ParseOptions, parse_to_ast};

use super::{Entry, MAX_DEPTH, MAX_VALUES, Node, NodeKind, ParseResult};

/// The syntax accepted: JSON, comments, trailing commas and hjson's
/// relaxations; not JSON5's hexadecimal, `+1`, `.5` or `NaN`, which no
/// engine's reader takes.
fn options() -> ParseOptions {
    ParseOptions {
        allow_comments: true,
        allow_loose_object_property_names: true,
        allow_trailing_commas: true,
        allow_missing_commas: true,
        allow_single_quoted_strings: true,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

/// Parses JSON text into a located tree.
pub(super) fn parse(text: &str) -> ParseResult {
    // The parser recurses once per level and stops at 512 levels; refusing
    // deeper text first keeps its stack use small on any thread.
    // Tables and arrays, the heaviest values in the parser's tree, are
    // counted against the document's values before it is built.
    match too_deep(text) {
        Some((at, Overrun::Deep)) => {
            return Err((
                format!("nesting deeper than {MAX_DEPTH} levels"),
                Some(at..at + 1),
            ));
        }
        Some((at, Overrun::Many)) => {
            return Err((
                format!("the document has more than {MAX_VALUES} values; shorten the file"),
                Some(at..at + 1),
            ));
        }
        None => {}
    }
    let parsed = parse_to_ast(text, &CollectOptions::default(), &options()).map_err(|err| {
        let range = err.range();
        let end = range.end.max(range.start + 1).min(text.len());
        (message(err.kind()), Some(range.start.min(end)..end))
    })?;
    match parsed.value {
        Some(value) => node(&value, 0),
        None => Err((
            "the file is empty; expected an object".to_owned(),
            Some(0..0),
        )),
    }
}

/// The parser's error in the words the other formats use.
fn message(kind: &ParseErrorKind) -> String {
    match kind {
        ParseErrorKind::NestingDepthExceeded => format!("nesting deeper than {MAX_DEPTH} levels"),
        other => {
            let text = other.to_string();
            let mut chars = text.chars();
            chars.next().map_or(text.clone(), |first| {
                first.to_lowercase().chain(chars).collect()
            })
        }
    }
}

/// What the scan before parsing found past a limit.
enum Overrun {
    /// Nesting deeper than [`MAX_DEPTH`].
    Deep,
    /// More tables and arrays than [`MAX_VALUES`].
    Many,
}

/// The byte offset where brackets outside strings and comments nest deeper
/// than [`MAX_DEPTH`] (+1 for the root), or open more than [`MAX_VALUES`]
/// tables and arrays, if they do.
fn too_deep(text: &str) -> Option<(usize, Overrun)> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut opened = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' | b'\'' => {
                let quote = bytes[i];
                i += 1;
                while i < bytes.len() && bytes[i] != quote {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < bytes.len() && !(bytes[i] == b'*' && bytes[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            b'{' | b'[' => {
                depth += 1;
                opened += 1;
                if depth > MAX_DEPTH + 1 {
                    return Some((i, Overrun::Deep));
                }
                if opened > MAX_VALUES {
                    return Some((i, Overrun::Many));
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
}

fn byte_range(r: &impl Ranged) -> Range<usize> {
    let r = r.range();
    r.start..r.end
}

fn node(value: &Value<'_>, depth: usize) -> ParseResult {
    if depth > MAX_DEPTH {
        return Err((
            format!("nesting deeper than {MAX_DEPTH} levels"),
            Some(byte_range(value)),
        ));
    }
    let kind = match value {
        Value::NullKeyword(_) => NodeKind::Null,
        Value::BooleanLit(b) => NodeKind::Bool(b.value),
        Value::StringLit(s) => NodeKind::String(s.value.to_string()),
        Value::NumberLit(n) => number(n.value).map_err(|m| (m, Some(byte_range(value))))?,
        Value::Array(a) => NodeKind::Array(
            a.elements
                .iter()
                .map(|v| node(v, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(o) => {
            let mut entries: Vec<Entry> = Vec::with_capacity(o.properties.len());
            // Seen keys in a set: a scan of the entries is quadratic in a table's size.
            let mut seen = std::collections::HashSet::with_capacity(o.properties.len());
            for prop in &o.properties {
                let (key, key_range) = match &prop.name {
                    ObjectPropName::String(s) => (s.value.to_string(), byte_range(s)),
                    ObjectPropName::Word(w) => (w.value.to_owned(), byte_range(w)),
                };
                if !seen.insert(key.clone()) {
                    return Err((
                        format!("duplicate key `{key}`; each key may appear once"),
                        Some(key_range),
                    ));
                }
                entries.push(Entry {
                    key,
                    key_range,
                    value: node(&prop.value, depth + 1)?,
                });
            }
            NodeKind::Table(entries)
        }
    };
    Ok(Node {
        range: byte_range(value),
        kind,
    })
}

/// A number's text: an integer (kept wide, so that a value beyond 64 bits
/// is reported instead of becoming a float that "has no fraction"), or a float.
fn number(text: &str) -> Result<NodeKind, String> {
    if !text.contains(['.', 'e', 'E']) {
        return text
            .parse::<i128>()
            .map(NodeKind::Integer)
            .map_err(|_| format!("integer `{text}` is out of range; counts must fit in 64 bits"));
    }
    match text.parse::<f64>() {
        Ok(f) if f.is_finite() => Ok(NodeKind::Float(f)),
        Ok(_) => Err(format!(
            "`{text}` is not a valid JSON number (beyond the largest float)"
        )),
        Err(_) => Err(format!("`{text}` is not a valid JSON number")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> NodeKind {
        parse(text).expect("parses").kind
    }

    #[test]
    fn comments_trailing_commas_and_hjson_keys_are_read() {
        let text = "{\n  // the batch\n  \"train_batch_size\": 32, /* inline */\n  steps_per_print: 10,\n}\n";
        let NodeKind::Table(entries) = kinds(text) else {
            panic!("a table");
        };
        let keys: Vec<&str> = entries.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(keys, ["train_batch_size", "steps_per_print"]);
        assert_eq!(&text[entries[0].key_range.clone()], "\"train_batch_size\"");
        assert_eq!(&text[entries[0].value.range.clone()], "32");
        assert_eq!(&text[entries[1].key_range.clone()], "steps_per_print");
    }

    #[test]
    fn numbers_keep_integers_wide_and_refuse_json5_forms() {
        assert_eq!(
            kinds("{\"a\": -170141183460469231731687303715884105728}"),
            NodeKind::Table(vec![Entry {
                key: "a".into(),
                key_range: 1..4,
                value: Node {
                    range: 6..46,
                    kind: NodeKind::Integer(i128::MIN)
                }
            }])
        );
        let err = parse("{\"a\": 1e999}").expect_err("not finite");
        assert_eq!(
            err.0,
            "`1e999` is not a valid JSON number (beyond the largest float)"
        );
        assert_eq!(err.1, Some(6..11));
        for text in [
            "{\"a\": 0x10}",
            "{\"a\": +1}",
            "{\"a\": .5}",
            "{\"a\": NaN}",
        ] {
            assert!(parse(text).is_err(), "{text}");
        }
        let err = parse("{\"a\": 340282366920938463463374607431768211456}").expect_err("wide");
        assert!(err.0.contains("out of range"), "{}", err.0);
    }

    #[test]
    fn errors_are_located_and_lowercase() {
        let err = parse("{\"a\": }").expect_err("no value");
        assert_eq!(err.1, Some(6..7));
        assert!(err.0.starts_with(char::is_lowercase), "{}", err.0);
        let err = parse("").expect_err("empty");
        assert!(err.0.contains("empty"), "{}", err.0);
        let err = parse("{\"a\": \"x\" \"b\"").expect_err("unterminated");
        assert!(!err.0.is_empty());
    }

    #[test]
    fn brackets_inside_strings_and_comments_do_not_count_as_depth() {
        let deep_in_string = format!("{{\"a\": \"{}\"}}", "[".repeat(500));
        assert!(parse(&deep_in_string).is_ok());
        let deep_in_comment = format!("{{\"a\": 1 /* {} */}}", "{".repeat(500));
        assert!(parse(&deep_in_comment).is_ok());
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 5), "]".repeat(MAX_DEPTH + 5));
        let err = parse(&deep).expect_err("deep");
        assert!(err.0.contains("nesting deeper"), "{}", err.0);
    }
}
