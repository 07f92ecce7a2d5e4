//! YAML through serde-saphyr, with its location for every value and a
//! budget on depth, aliases and expanded size. Plain scalars are then read
//! as the file's loader reads them ([`YamlLoader`], `scalar`): accum's own
//! files as YAML 1.2, a framework's as its PyYAML loader does.

use std::collections::HashMap;
use std::fmt;
use std::ops::Range;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::scalar::{self, Scalar, YamlLoader};
use super::{Entry, MAX_DEPTH, Node, NodeKind, ReadNote};

/// Alias uses a YAML file may have.
const YAML_MAX_ALIASES: usize = 1_000;

/// Values a YAML file may expand to, aliases counted at every use: an alias
/// bomb of a few hundred bytes stops here instead of filling the memory.
const YAML_MAX_NODES: usize = 200_000;

/// What is wrong and where.
type Failure = (String, Option<Range<usize>>);

pub(super) fn parse(text: &str, loader: YamlLoader) -> Result<(Node, Vec<ReadNote>), Failure> {
    use serde_saphyr::DuplicateKeyPolicy;
    // A framework's duplicate keys reach the tree, where its loader's rule
    // is applied; accum's own files refuse them in the parser.
    let duplicate_keys = if loader == YamlLoader::Yaml12 {
        DuplicateKeyPolicy::Error
    } else {
        DuplicateKeyPolicy::PassThrough
    };
    let options = serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_depth: MAX_DEPTH,
            max_aliases: YAML_MAX_ALIASES,
            max_nodes: YAML_MAX_NODES,
            max_merge_keys: YAML_MAX_MERGE_KEYS,
        },
        duplicate_keys: duplicate_keys,
    };
    let root: YamlNode = serde_saphyr::from_str_with_options(text, options).map_err(|err| {
        let range = err.location().and_then(|loc| {
            let s = loc.span();
            match s.byte_offset() {
                Some(o) => Some(o as usize..(o + s.byte_len().unwrap_or(0)) as usize),
                None => offset_of(text, loc.line(), loc.column()).map(|o| o..o),
            }
        });
        (yaml_message(&err), range)
    })?;
    let mut reading = Reading {
        text,
        loader,
        notes: Vec::new(),
        path: Vec::new(),
    };
    let node = root.into_node(&mut reading)?;
    Ok((node, reading.notes))
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

/// A YAML node deserialized with its location and its explicit tag.
struct YamlNode(serde_saphyr::Spanned<serde_saphyr::Tagged<YamlValue>>);

enum YamlValue {
    Null,
    Bool(bool),
    Integer(i128),
    Float(f64),
    String(String),
    Array(Vec<YamlNode>),
    Table(Vec<(serde_saphyr::Spanned<String>, YamlNode)>),
}

/// The state of one file's reading: its loader, the notes on values that
/// it reads differently from YAML 1.2, and the key path being read.
struct Reading<'a> {
    text: &'a str,
    loader: YamlLoader,
    notes: Vec<ReadNote>,
    path: Vec<String>,
}

impl YamlNode {
    fn into_node(self, r: &mut Reading<'_>) -> Result<Node, Failure> {
        let range = yaml_range(&self.0.referenced, r.text);
        let tagged = self.0.value.1.is_some();
        // An alias's text is its anchor's.
        let defined = yaml_range(&self.0.defined, r.text);
        let kind = match self.0.value.0 {
            YamlValue::Array(items) => {
                let mut nodes = Vec::with_capacity(items.len());
                for (i, item) in items.into_iter().enumerate() {
                    r.path.push(i.to_string());
                    let node = item.into_node(r);
                    r.path.pop();
                    nodes.push(node?);
                }
                NodeKind::Array(nodes)
            }
            YamlValue::Table(entries) => NodeKind::Table(table(entries, r)?),
            scalar_value => {
                let kind = match scalar_value {
                    YamlValue::Null => NodeKind::Null,
                    YamlValue::Bool(b) => NodeKind::Bool(b),
                    YamlValue::Integer(i) => NodeKind::Integer(i),
                    YamlValue::Float(f) => NodeKind::Float(f),
                    YamlValue::String(s) => NodeKind::String(s),
                    YamlValue::Array(_) | YamlValue::Table(_) => {
                        unreachable!("collections are matched above")
                    }
                };
                match plain_text(&kind, tagged, defined, r.text) {
                    Some(raw) => resolve(kind, raw, range.clone(), r)?,
                    None => kind,
                }
            }
        };
        Ok(Node { range, kind })
    }
}

/// The text of a scalar written plain (no quotes, no block, no tag): the
/// only scalars a loader resolves by their text.
fn plain_text<'t>(
    kind: &NodeKind,
    tagged: bool,
    range: Range<usize>,
    text: &'t str,
) -> Option<&'t str> {
    if tagged {
        return None;
    }
    let raw = text.get(range.clone())?;
    if raw.starts_with(['"', '\'', '|', '>']) || raw.contains(['\n', '\r']) {
        return None;
    }
    if let NodeKind::String(s) = kind
        && (s != raw || after_block_indicator(&text[..range.start]))
    {
        return None;
    }
    Some(raw)
}

/// Whether the text before a scalar ends with a block scalar's indicator
/// (`|-`, `>+2`), comments aside: a one-line `|-` block reads as its text.
fn after_block_indicator(before: &str) -> bool {
    let trimmed = before.trim_end();
    if trimmed.len() == before.len() {
        // The scalar starts on the indicator's line: not a block.
        return false;
    }
    let line = trimmed.rsplit('\n').next().unwrap_or("");
    let line = match line.find(" #") {
        Some(i) => &line[..i],
        None => line,
    };
    line.split_whitespace().last().is_some_and(|token| {
        token.starts_with(['|', '>'])
            && token[1..]
                .chars()
                .all(|c| c.is_ascii_digit() || c == '-' || c == '+')
    })
}

/// A plain scalar as the loader reads it, with a note where that differs
/// from YAML 1.2.
fn resolve(
    kind: NodeKind,
    raw: &str,
    range: Range<usize>,
    r: &mut Reading<'_>,
) -> Result<NodeKind, Failure> {
    if r.loader == YamlLoader::Yaml12 {
        if scalar::leading_zero(raw) {
            let py = scalar::resolve_pyyaml(raw, YamlLoader::PyYaml11);
            let core = scalar::resolve_core(raw);
            let digits = raw
                .trim_start_matches(['+', '-'])
                .trim_start_matches(['0', '_']);
            let fixed = match (digits, raw.starts_with('-')) {
                ("", _) => "0".to_owned(),
                (d, true) => format!("-{d}"),
                (d, false) => d.to_owned(),
            };
            return Err((
                format!(
                    "`{raw}` has a leading zero: YAML 1.2 reads {}, YAML 1.1 readers such as PyYAML {}; write `{fixed}`, or quote the value for text",
                    core.describe(raw),
                    py.describe(raw),
                ),
                Some(range),
            ));
        }
        return Ok(kind);
    }
    let read = scalar::resolve_pyyaml(raw, r.loader);
    if let Some((message, help)) = scalar::surprise(raw, &read, r.loader) {
        r.notes.push(ReadNote {
            path: r.path.clone(),
            range,
            message,
            help,
            always: false,
        });
    }
    Ok(match read {
        Scalar::Null => NodeKind::Null,
        Scalar::Bool(b) => NodeKind::Bool(b),
        Scalar::Int(i) => NodeKind::Integer(i),
        Scalar::Float(f) => NodeKind::Float(f),
        Scalar::Str => NodeKind::String(raw.to_owned()),
    })
}

/// A table's entries, with duplicate keys as the loader treats them: the
/// last kept (PyYAML, `BaseConstructor.construct_mapping`), with a note when
/// the values differ, or refused (OmegaConf).
fn table(
    entries: Vec<(serde_saphyr::Spanned<String>, YamlNode)>,
    r: &mut Reading<'_>,
) -> Result<Vec<Entry>, Failure> {
    let mut out: Vec<Entry> = Vec::with_capacity(entries.len());
    let mut index: HashMap<String, usize> = HashMap::new();
    for (key, value) in entries {
        let key_range = yaml_range(&key.referenced, r.text);
        r.path.push(key.value.clone());
        let value = value.into_node(r);
        r.path.pop();
        let value = value?;
        let entry = Entry {
            key: key.value,
            key_range,
            value,
        };
        match index.get(&entry.key) {
            None => {
                index.insert(entry.key.clone(), out.len());
                out.push(entry);
            }
            Some(&at) => {
                let first = &out[at];
                if !r.loader.last_key_wins() {
                    return Err((
                        format!(
                            "duplicate key `{}`; {} refuses it (each key may appear once)",
                            entry.key,
                            r.loader.name()
                        ),
                        Some(entry.key_range),
                    ));
                }
                if first.value.to_json() != entry.value.to_json() {
                    let (line, _) = super::line_col(r.text, first.key_range.start);
                    let mut path = r.path.clone();
                    path.push(entry.key.clone());
                    r.notes.push(ReadNote {
                        path,
                        range: entry.key_range.clone(),
                        message: format!(
                            "`{}` is given twice with different values; {} keeps this one and drops the one at line {line}",
                            entry.key,
                            r.loader.name()
                        ),
                        help: "remove one of the two".to_owned(),
                        always: true,
                    });
                }
                out[at] = entry;
            }
        }
    }
    Ok(out)
}

fn yaml_range(loc: &serde_saphyr::Location, text: &str) -> Range<usize> {
    let range = loc.span();
    match range.byte_offset() {
        Some(offset) => {
            let start = (offset as usize).min(text.len());
            let end = (start + range.byte_len().unwrap_or(0) as usize).min(text.len());
            start..end
        }
        None => 0..0,
    }
}

impl<'de> Deserialize<'de> for YamlNode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde_saphyr::Spanned::<serde_saphyr::Tagged<YamlValue>>::deserialize(d).map(YamlNode)
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
        // Duplicate keys are the loader's to judge (`table`).
        let mut entries: Vec<(serde_saphyr::Spanned<String>, YamlNode)> = Vec::new();
        while let Some(key) = map.next_key::<serde_saphyr::Spanned<String>>()? {
            let value = map.next_value::<YamlNode>()?;
            entries.push((key, value));
        }
        Ok(YamlValue::Table(entries))
    }
}
