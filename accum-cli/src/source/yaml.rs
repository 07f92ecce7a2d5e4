//! YAML through serde-saphyr, with its location for every value and a
//! budget on depth, aliases and expanded size.

use std::fmt;
use std::ops::Range;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::{Entry, MAX_DEPTH, Node, NodeKind, ParseResult};

/// Alias uses a YAML file may have.
const YAML_MAX_ALIASES: usize = 1_000;

/// Values a YAML file may expand to, aliases counted at every use: an alias
/// bomb of a few hundred bytes stops here instead of filling the memory.
const YAML_MAX_NODES: usize = 200_000;

pub(super) fn parse(text: &str) -> ParseResult {
    let options = serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_depth: MAX_DEPTH,
            max_aliases: YAML_MAX_ALIASES,
            max_nodes: YAML_MAX_NODES,
            max_merge_keys: YAML_MAX_MERGE_KEYS,
        },
    };
    let root: YamlNode = serde_saphyr::from_str_with_options(text, options).map_err(|err| {
        let span = err.location().and_then(|loc| {
            let s = loc.span();
            match s.byte_offset() {
                Some(o) => Some(o as usize..(o + s.byte_len().unwrap_or(0)) as usize),
                None => offset_of(text, loc.line(), loc.column()).map(|o| o..o),
            }
        });
        (yaml_message(&err), span)
    })?;
    Ok(root.into_node(text))
}

/// A budget's breach, by the name of the budget.
fn budget_message(budget: &str) -> String {
    match budget {
        "Depth" => format!("nesting deeper than {MAX_DEPTH} levels"),
        "Nodes" => format!(
            "the document has more than {YAML_MAX_NODES} values, counting each use of an alias as a copy; shorten the file or remove the aliases"
        ),
        "Aliases" => format!("more than {YAML_MAX_ALIASES} alias uses; write the values out"),
        "MergeKeys" => {
            format!("more than {YAML_MAX_MERGE_KEYS} merge keys (`<<`); write the values out")
        }
        "Documents" => MANY_DOCUMENTS.to_owned(),
        _ => "the document is larger than a configuration can be; shorten the file".to_owned(),
    }
}

const MANY_DOCUMENTS: &str = "more than one YAML document (`---`); give one document per file";

/// The parser's default cap on merge keys, which is kept.
const YAML_MAX_MERGE_KEYS: usize = 10_000;

fn yaml_message(err: &serde_saphyr::Error) -> String {
    use serde_saphyr::Error;
    // The parser's limits and policies, in the words of this tool, from the
    // error itself: its own text names its API and types.
    match err.without_snippet() {
        Error::Budget { breach, .. } => {
            let name = format!("{breach:?}");
            return budget_message(name.split([' ', '{']).next().unwrap_or(""));
        }
        Error::MultipleDocuments { .. } => return MANY_DOCUMENTS.to_owned(),
        Error::RecursiveReferencesRequireWeakTypes { .. } => {
            return "an alias refers to the value that contains it; write the value out".to_owned();
        }
        _ => {}
    }
    // The first line of the parser's message, without its own snippet and
    // location (the diagnostic shows both).
    let text = err.to_string();
    let mut line = text.lines().next().unwrap_or("invalid YAML").trim();
    line = line.strip_prefix("error: ").unwrap_or(line);
    if let Some(rest) = line.strip_prefix("line ")
        && let Some((_, message)) = rest.split_once(": ")
    {
        line = message;
    }
    // A breach met inside a value arrives as the text of the breach.
    if let Some(budget) = line.strip_prefix("budget breached: ") {
        return budget_message(budget.split([' ', '{']).next().unwrap_or(""));
    }
    if let Some(rest) = line.strip_prefix("non-finite float ")
        && let Some((value, _)) = rest.split_once(" rejected")
    {
        return format!("non-finite number {value}; use a finite value");
    }
    if line.starts_with("recursion limit exceeded") {
        // The parser's own limit, above the depth budget.
        return format!("nesting deeper than {MAX_DEPTH} levels");
    }
    if let Some(rest) = line.strip_prefix("duplicate mapping key: ") {
        let key = rest.split_once(", set ").map_or(rest, |(key, _)| key);
        return format!("duplicate key `{key}`; each key may appear once");
    }
    line.to_owned()
}

/// The byte offset of a 1-based line and column (in characters).
fn offset_of(text: &str, line: u64, column: u64) -> Option<usize> {
    let line_start = if line <= 1 {
        0
    } else {
        let skip = usize::try_from(line - 1).ok()?;
        text.match_indices('\n').nth(skip - 1).map(|(i, _)| i + 1)?
    };
    let col = usize::try_from(column.saturating_sub(1)).ok()?;
    let rest = &text[line_start..];
    Some(line_start + rest.char_indices().nth(col).map_or(rest.len(), |(i, _)| i))
}

/// A YAML node deserialized with its location.
struct YamlNode(serde_saphyr::Spanned<YamlValue>);

enum YamlValue {
    Null,
    Bool(bool),
    Integer(i128),
    Float(f64),
    String(String),
    Array(Vec<YamlNode>),
    Table(Vec<(serde_saphyr::Spanned<String>, YamlNode)>),
}

impl YamlNode {
    fn into_node(self, text: &str) -> Node {
        let span = yaml_span(&self.0.referenced, text);
        let kind = match self.0.value {
            YamlValue::Null => NodeKind::Null,
            YamlValue::Bool(b) => NodeKind::Bool(b),
            YamlValue::Integer(i) => NodeKind::Integer(i),
            YamlValue::Float(f) => NodeKind::Float(f),
            YamlValue::String(s) => NodeKind::String(s),
            YamlValue::Array(items) => {
                NodeKind::Array(items.into_iter().map(|n| n.into_node(text)).collect())
            }
            YamlValue::Table(entries) => NodeKind::Table(
                entries
                    .into_iter()
                    .map(|(k, v)| Entry {
                        key_span: yaml_span(&k.referenced, text),
                        key: k.value,
                        value: v.into_node(text),
                    })
                    .collect(),
            ),
        };
        Node { span, kind }
    }
}

fn yaml_span(loc: &serde_saphyr::Location, text: &str) -> Range<usize> {
    let span = loc.span();
    match span.byte_offset() {
        Some(offset) => {
            let start = (offset as usize).min(text.len());
            let end = (start + span.byte_len().unwrap_or(0) as usize).min(text.len());
            start..end
        }
        None => 0..0,
    }
}

impl<'de> Deserialize<'de> for YamlNode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde_saphyr::Spanned::<YamlValue>::deserialize(d).map(YamlNode)
    }
}

impl<'de> Deserialize<'de> for YamlValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(YamlVisitor)
    }
}

struct YamlVisitor;

impl<'de> Visitor<'de> for YamlVisitor {
    type Value = YamlValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<YamlValue, E> {
        Ok(YamlValue::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<YamlValue, E> {
        Ok(YamlValue::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<YamlValue, D::Error> {
        YamlValue::deserialize(d)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<YamlValue, E> {
        Ok(YamlValue::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<YamlValue, E> {
        Ok(YamlValue::Integer(v.into()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<YamlValue, E> {
        Ok(YamlValue::Integer(v.into()))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<YamlValue, E> {
        Ok(YamlValue::Integer(v))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<YamlValue, E> {
        i128::try_from(v)
            .map(YamlValue::Integer)
            .map_err(|_| E::custom(format!("integer {v} is too large")))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<YamlValue, E> {
        Ok(YamlValue::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<YamlValue, E> {
        Ok(YamlValue::String(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<YamlValue, E> {
        Ok(YamlValue::String(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<YamlValue, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<YamlNode>()? {
            items.push(item);
        }
        Ok(YamlValue::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<YamlValue, A::Error> {
        let mut entries: Vec<(serde_saphyr::Spanned<String>, YamlNode)> = Vec::new();
        // Seen keys in a set: a scan of the entries is quadratic in a table's size.
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<serde_saphyr::Spanned<String>>()? {
            if !seen.insert(key.value.clone()) {
                return Err(de::Error::custom(format!(
                    "duplicate key `{}` at line {}; each key may appear once",
                    key.value,
                    key.referenced.line()
                )));
            }
            let value = map.next_value::<YamlNode>()?;
            entries.push((key, value));
        }
        Ok(YamlValue::Table(entries))
    }
}
