//! Configuration files as located trees: TOML, JSON and YAML parsed into one
//! [`Node`] type that keeps the byte span of every key and value, so that a
//! finding about `batch.micro_batch` can underline the exact text.
//!
//! Loading is bounded: files over [`MAX_FILE_BYTES`] are refused before they
//! are read, nesting deeper than [`MAX_DEPTH`] is refused, YAML aliases are
//! limited by the parser's budget, and duplicate keys are errors in every
//! format.

use std::fmt;
use std::fs;
use std::io::Read;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// The largest configuration file accum reads.
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// The largest run report (`--report`) accum reads: a long run's report
/// holds one entry per update attempt and per logged point.
pub const MAX_REPORT_BYTES: u64 = 256 * 1024 * 1024;

/// The deepest nesting of tables and arrays accum accepts.
pub const MAX_DEPTH: usize = 64;

/// The syntax of a configuration file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceFormat {
    /// TOML (`.toml`).
    Toml,
    /// JSON (`.json`).
    Json,
    /// YAML (`.yaml`, `.yml`).
    Yaml,
}

impl SourceFormat {
    /// The format for a path, by its extension.
    pub fn from_path(path: &Path) -> Option<SourceFormat> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "toml" => Some(SourceFormat::Toml),
            "json" => Some(SourceFormat::Json),
            "yaml" | "yml" => Some(SourceFormat::Yaml),
            _ => None,
        }
    }

    /// The format's name.
    pub fn name(self) -> &'static str {
        match self {
            SourceFormat::Toml => "TOML",
            SourceFormat::Json => "JSON",
            SourceFormat::Yaml => "YAML",
        }
    }
}

/// A value with the byte span of its text.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// Byte range of the value in the source.
    pub span: Range<usize>,
    /// The value.
    pub kind: NodeKind,
}

impl Node {
    /// The value as JSON. Non-finite floats and integers outside JSON's
    /// range become strings, so that the schema rejects them with the
    /// location kept.
    pub fn to_json(&self) -> serde_json::Value {
        to_json(self)
    }
}

/// The value of a [`Node`].
#[derive(Clone, Debug, PartialEq)]
pub enum NodeKind {
    /// `null` (JSON, YAML).
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer (kept wide so that negative and huge values can be reported).
    Integer(i128),
    /// A float, including NaN and infinities where the format allows them.
    Float(f64),
    /// A string (TOML datetimes are kept as their text).
    String(String),
    /// An array.
    Array(Vec<Node>),
    /// A table, in source order.
    Table(Vec<Entry>),
}

impl NodeKind {
    /// The JSON type name, as schemas and messages use it.
    pub fn type_name(&self) -> &'static str {
        match self {
            NodeKind::Null => "null",
            NodeKind::Bool(_) => "boolean",
            NodeKind::Integer(_) => "integer",
            NodeKind::Float(_) => "number",
            NodeKind::String(_) => "string",
            NodeKind::Array(_) => "array",
            NodeKind::Table(_) => "table",
        }
    }
}

/// One key of a table.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// The key.
    pub key: String,
    /// Byte range of the key in the source.
    pub key_span: Range<usize>,
    /// The value.
    pub value: Node,
}

/// A parsed configuration file.
#[derive(Clone, Debug)]
pub struct Document {
    /// The name shown in diagnostics (the path as given).
    pub name: String,
    /// The file's text.
    pub text: String,
    /// Its syntax.
    pub format: SourceFormat,
    /// The root table.
    pub root: Node,
}

/// Why a file could not be loaded.
#[derive(Debug)]
pub enum LoadError {
    /// The file could not be opened or read (missing, a directory, no permission).
    Io {
        /// The path.
        path: PathBuf,
        /// What went wrong, in words.
        reason: String,
    },
    /// The file is larger than the limit for its kind ([`MAX_FILE_BYTES`]
    /// for configuration files).
    TooLarge {
        /// The path.
        path: PathBuf,
        /// Its size.
        bytes: u64,
        /// The limit it exceeds.
        limit: u64,
    },
    /// The file's extension names no supported format.
    UnknownFormat {
        /// The path.
        path: PathBuf,
    },
    /// The file is not UTF-8 text.
    NotUtf8 {
        /// The path.
        path: PathBuf,
        /// Byte offset of the first invalid byte.
        offset: usize,
    },
    /// The text is not valid in its format.
    Syntax(SyntaxError),
}

/// A syntax error with its location.
#[derive(Clone, Debug)]
pub struct SyntaxError {
    /// The file name.
    pub name: String,
    /// The whole text, for rendering.
    pub text: String,
    /// The format.
    pub format: SourceFormat,
    /// What is wrong.
    pub message: String,
    /// Where, if known.
    pub span: Option<Range<usize>>,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Io { path, reason } => write!(f, "{}: {reason}", path.display()),
            LoadError::TooLarge { path, bytes, limit } => write!(
                f,
                "{}: {bytes} bytes is larger than the {limit}-byte limit; give the right file or shorten it",
                path.display()
            ),
            LoadError::UnknownFormat { path } => write!(
                f,
                "{}: unknown configuration format; name the file .toml, .json, .yaml or .yml",
                path.display()
            ),
            LoadError::NotUtf8 { path, offset } => write!(
                f,
                "{}: not UTF-8 text (invalid byte at offset {offset}); save the file as UTF-8",
                path.display()
            ),
            LoadError::Syntax(err) => {
                let (line, col) = err
                    .span
                    .as_ref()
                    .map_or((1, 1), |s| line_col(&err.text, s.start));
                write!(
                    f,
                    "{}:{line}:{col}: invalid {}: {}",
                    err.name,
                    err.format.name(),
                    err.message
                )
            }
        }
    }
}

impl std::error::Error for LoadError {}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let mut start = offset;
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let before = &text[..start];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = before[line_start..].chars().count() + 1;
    (line, col)
}

/// Reads a whole file of at most `limit` bytes as UTF-8 text.
///
/// Refused before reading: a path that does not exist or cannot be opened,
/// a directory, anything but a regular file (a FIFO would block the read
/// forever, a device could be endless), and a file whose size is over the
/// limit. The read itself stops one byte past the limit, in case the file
/// grows after the size check.
pub fn read_text(path: &Path, limit: u64) -> Result<String, LoadError> {
    let io = |reason: String| LoadError::Io {
        path: path.to_owned(),
        reason,
    };
    let meta = fs::metadata(path).map_err(|err| io(describe_io(&err)))?;
    if meta.is_dir() {
        return Err(io("is a directory; give a file".into()));
    }
    if !meta.is_file() {
        return Err(io(
            "not a regular file (a pipe, socket or device); save the content to a file and give its path"
                .into(),
        ));
    }
    if meta.len() > limit {
        return Err(LoadError::TooLarge {
            path: path.to_owned(),
            bytes: meta.len(),
            limit,
        });
    }
    let file = fs::File::open(path).map_err(|err| io(describe_io(&err)))?;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| io(describe_io(&err)))?;
    if bytes.len() as u64 > limit {
        return Err(LoadError::TooLarge {
            path: path.to_owned(),
            bytes: bytes.len() as u64,
            limit,
        });
    }
    String::from_utf8(bytes).map_err(|err| LoadError::NotUtf8 {
        path: path.to_owned(),
        offset: err.utf8_error().valid_up_to(),
    })
}

impl Document {
    /// Reads and parses a file, by its extension.
    pub fn load(path: &Path) -> Result<Document, LoadError> {
        let Some(format) = SourceFormat::from_path(path) else {
            // A missing path or a directory is reported as such, whatever its name.
            let meta = fs::metadata(path).map_err(|err| LoadError::Io {
                path: path.to_owned(),
                reason: describe_io(&err),
            })?;
            if meta.is_dir() {
                return Err(LoadError::Io {
                    path: path.to_owned(),
                    reason: "is a directory; give a file".into(),
                });
            }
            return Err(LoadError::UnknownFormat {
                path: path.to_owned(),
            });
        };
        let text = read_text(path, MAX_FILE_BYTES)?;
        Document::parse(path.display().to_string(), text, format).map_err(LoadError::Syntax)
    }

    /// Parses text in a given format.
    pub fn parse(
        name: String,
        text: String,
        format: SourceFormat,
    ) -> Result<Document, SyntaxError> {
        let parsed = match format {
            SourceFormat::Toml => parse_toml(&text),
            SourceFormat::Json => json::parse(&text),
            SourceFormat::Yaml => parse_yaml(&text),
        };
        match parsed {
            Ok(root) => {
                if !matches!(root.kind, NodeKind::Table(_)) {
                    return Err(SyntaxError {
                        message: format!(
                            "the top level must be a table of sections, not {}",
                            root.kind.type_name()
                        ),
                        span: Some(root.span.clone()),
                        name,
                        text,
                        format,
                    });
                }
                Ok(Document {
                    name,
                    text,
                    format,
                    root,
                })
            }
            Err((message, span)) => Err(SyntaxError {
                name,
                text,
                format,
                message,
                span,
            }),
        }
    }

    /// The value as JSON, for schema validation and typed deserialization.
    /// Non-finite floats become strings naming them, so that the schema
    /// rejects them with the location kept.
    pub fn to_json(&self) -> serde_json::Value {
        self.root.to_json()
    }

    /// The node at a path of keys and array indices, if present.
    pub fn node(&self, path: &[String]) -> Option<&Node> {
        let mut node = &self.root;
        for segment in path {
            node = child(node, segment)?;
        }
        Some(node)
    }

    /// The best span for a finding at `path`: the value if present, else the
    /// key or table of the deepest ancestor that exists.
    pub fn span_for(&self, path: &[String]) -> Range<usize> {
        let mut node = &self.root;
        let mut best = self.root_header_span();
        for segment in path {
            match child_entry(node, segment) {
                Some((key_span, value)) => {
                    best = match key_span {
                        Some(key_span) if matches!(value.kind, NodeKind::Table(_)) => key_span,
                        _ => value.span.clone(),
                    };
                    node = value;
                }
                None => break,
            }
        }
        best
    }

    /// The span of a key (for unknown-key findings), if present.
    pub fn key_span(&self, path: &[String]) -> Option<Range<usize>> {
        let (last, parent) = path.split_last()?;
        let parent = self.node(parent)?;
        child_entry(parent, last).and_then(|(key_span, _)| key_span)
    }

    fn root_header_span(&self) -> Range<usize> {
        // The first non-blank character, so that a "missing key" finding in
        // the root points at the top of the file.
        let start = self.text.len() - self.text.trim_start().len();
        start..start
    }
}

fn child<'a>(node: &'a Node, segment: &str) -> Option<&'a Node> {
    child_entry(node, segment).map(|(_, value)| value)
}

fn child_entry<'a>(node: &'a Node, segment: &str) -> Option<(Option<Range<usize>>, &'a Node)> {
    match &node.kind {
        NodeKind::Table(entries) => entries
            .iter()
            .find(|e| e.key == segment)
            .map(|e| (Some(e.key_span.clone()), &e.value)),
        NodeKind::Array(items) => segment
            .parse::<usize>()
            .ok()
            .and_then(|i| items.get(i))
            .map(|v| (None, v)),
        _ => None,
    }
}

fn to_json(node: &Node) -> serde_json::Value {
    use serde_json::Value;
    match &node.kind {
        NodeKind::Null => Value::Null,
        NodeKind::Bool(b) => Value::Bool(*b),
        NodeKind::Integer(i) => {
            if let Ok(v) = i64::try_from(*i) {
                Value::from(v)
            } else if let Ok(v) = u64::try_from(*i) {
                Value::from(v)
            } else {
                // Outside JSON's integer range: keep the digits so that the
                // type check reports it instead of a silent rounding.
                Value::String(i.to_string())
            }
        }
        NodeKind::Float(f) => serde_json::Number::from_f64(*f)
            .map_or_else(|| Value::String(f.to_string()), Value::Number),
        NodeKind::String(s) => Value::String(s.clone()),
        NodeKind::Array(items) => Value::Array(items.iter().map(to_json).collect()),
        NodeKind::Table(entries) => Value::Object(
            entries
                .iter()
                .map(|e| (e.key.clone(), to_json(&e.value)))
                .collect(),
        ),
    }
}

fn describe_io(err: &std::io::Error) -> String {
    match err.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        std::io::ErrorKind::IsADirectory => "is a directory; give a file".into(),
        std::io::ErrorKind::NotADirectory => {
            "a parent in the path is not a directory; check the path".into()
        }
        _ => err.to_string(),
    }
}

type ParseResult = Result<Node, (String, Option<Range<usize>>)>;

fn parse_toml(text: &str) -> ParseResult {
    use toml::de::{DeTable, DeValue};
    let table = DeTable::parse(text).map_err(|err| (err.message().to_owned(), err.span()))?;

    fn value(v: &toml::Spanned<DeValue<'_>>, depth: usize) -> ParseResult {
        if depth > MAX_DEPTH {
            return Err((
                format!("nesting deeper than {MAX_DEPTH} levels"),
                Some(v.span()),
            ));
        }
        let kind = match v.get_ref() {
            DeValue::String(s) => NodeKind::String(s.to_string()),
            DeValue::Integer(i) => {
                let digits = i.as_str().replace('_', "");
                let parsed = i128::from_str_radix(&digits, i.radix()).map_err(|_| {
                    (
                        format!("`{}` is not a valid integer", i.as_str()),
                        Some(v.span()),
                    )
                })?;
                NodeKind::Integer(parsed)
            }
            DeValue::Float(f) => {
                let text = f.as_str().replace('_', "");
                let parsed = match text.as_str() {
                    "inf" | "+inf" => f64::INFINITY,
                    "-inf" => f64::NEG_INFINITY,
                    "nan" | "+nan" | "-nan" => f64::NAN,
                    other => other
                        .parse()
                        .map_err(|_| (format!("`{other}` is not a valid float"), Some(v.span())))?,
                };
                NodeKind::Float(parsed)
            }
            DeValue::Boolean(b) => NodeKind::Bool(*b),
            DeValue::Datetime(d) => NodeKind::String(d.to_string()),
            DeValue::Array(items) => NodeKind::Array(
                items
                    .iter()
                    .map(|item| value(item, depth + 1))
                    .collect::<Result<_, _>>()?,
            ),
            DeValue::Table(t) => NodeKind::Table(table_entries(t, depth + 1)?),
        };
        Ok(Node {
            span: v.span(),
            kind,
        })
    }

    fn table_entries(
        t: &DeTable<'_>,
        depth: usize,
    ) -> Result<Vec<Entry>, (String, Option<Range<usize>>)> {
        t.iter()
            .map(|(k, v)| {
                Ok(Entry {
                    key: k.get_ref().to_string(),
                    key_span: k.span(),
                    value: value(v, depth)?,
                })
            })
            .collect()
    }

    Ok(Node {
        span: table.span(),
        kind: NodeKind::Table(table_entries(table.get_ref(), 1)?),
    })
}

/// Alias uses a YAML file may have.
const YAML_MAX_ALIASES: usize = 1_000;

/// Values a YAML file may expand to, aliases counted at every use: an alias
/// bomb of a few hundred bytes stops here instead of filling the memory.
const YAML_MAX_NODES: usize = 200_000;

fn parse_yaml(text: &str) -> ParseResult {
    let options = serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_depth: MAX_DEPTH,
            max_aliases: YAML_MAX_ALIASES,
            max_nodes: YAML_MAX_NODES,
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

fn yaml_message(err: &serde_saphyr::Error) -> String {
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
    // The parser's limits and policies, in the words of this tool.
    if let Some(budget) = line.strip_prefix("budget breached: ") {
        return if budget.starts_with("Depth") {
            format!("nesting deeper than {MAX_DEPTH} levels")
        } else if budget.starts_with("Nodes") {
            format!(
                "the document expands to more than {YAML_MAX_NODES} values \
                 (aliases multiply what they point to); remove the aliases or shorten the file"
            )
        } else if budget.starts_with("Aliases") {
            format!("more than {YAML_MAX_ALIASES} alias uses; write the values out")
        } else {
            format!("the document is too large ({budget}); shorten the file")
        };
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
        while let Some(key) = map.next_key::<serde_saphyr::Spanned<String>>()? {
            if entries.iter().any(|(k, _)| k.value == key.value) {
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

/// A JSON parser that keeps spans, refuses duplicate keys and bounds depth.
mod json {
    use super::{Entry, MAX_DEPTH, Node, NodeKind, ParseResult};

    struct Parser<'a> {
        text: &'a str,
        bytes: &'a [u8],
        pos: usize,
    }

    pub(super) fn parse(text: &str) -> ParseResult {
        let mut p = Parser {
            text,
            bytes: text.as_bytes(),
            pos: 0,
        };
        p.skip_ws();
        let node = p.value(0)?;
        p.skip_ws();
        if p.pos < p.bytes.len() {
            return Err(p.error("unexpected text after the JSON value"));
        }
        Ok(node)
    }

    impl Parser<'_> {
        fn error(&self, message: &str) -> (String, Option<std::ops::Range<usize>>) {
            let end = (self.pos + 1).min(self.bytes.len());
            (message.to_owned(), Some(self.pos..end.max(self.pos)))
        }

        fn skip_ws(&mut self) {
            while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
                self.pos += 1;
            }
        }

        fn eat(
            &mut self,
            byte: u8,
            what: &str,
        ) -> Result<(), (String, Option<std::ops::Range<usize>>)> {
            if self.bytes.get(self.pos) == Some(&byte) {
                self.pos += 1;
                Ok(())
            } else if self.pos >= self.bytes.len() {
                Err(self.error(&format!("unexpected end of file; expected {what}")))
            } else {
                Err(self.error(&format!("expected {what}")))
            }
        }

        fn value(&mut self, depth: usize) -> ParseResult {
            if depth > MAX_DEPTH {
                return Err(self.error(&format!("nesting deeper than {MAX_DEPTH} levels")));
            }
            let start = self.pos;
            let kind = match self.bytes.get(self.pos) {
                None => return Err(self.error("unexpected end of file; expected a value")),
                Some(b'{') => self.object(depth)?,
                Some(b'[') => self.array(depth)?,
                Some(b'"') => NodeKind::String(self.string()?),
                Some(b't') => self.literal("true", NodeKind::Bool(true))?,
                Some(b'f') => self.literal("false", NodeKind::Bool(false))?,
                Some(b'n') => self.literal("null", NodeKind::Null)?,
                Some(b'-' | b'0'..=b'9') => self.number()?,
                Some(_) => {
                    return Err(self.error(
                        "expected a value (object, array, string, number, true, false or null)",
                    ));
                }
            };
            Ok(Node {
                span: start..self.pos,
                kind,
            })
        }

        fn literal(
            &mut self,
            word: &str,
            kind: NodeKind,
        ) -> Result<NodeKind, (String, Option<std::ops::Range<usize>>)> {
            if self.text[self.pos..].starts_with(word) {
                self.pos += word.len();
                Ok(kind)
            } else {
                Err(self
                    .error("expected a value (object, array, string, number, true, false or null)"))
            }
        }

        fn number(&mut self) -> Result<NodeKind, (String, Option<std::ops::Range<usize>>)> {
            let start = self.pos;
            while let Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') =
                self.bytes.get(self.pos)
            {
                self.pos += 1;
            }
            let text = &self.text[start..self.pos];
            let valid = serde_json::from_str::<serde_json::Number>(text).is_ok();
            if !valid {
                return Err((
                    format!("`{text}` is not a valid JSON number"),
                    Some(start..self.pos),
                ));
            }
            if !text.contains(['.', 'e', 'E']) {
                // An integer beyond 128 bits would otherwise become a float
                // that a schema's "integer" accepts (it has no fraction).
                return text.parse::<i128>().map(NodeKind::Integer).map_err(|_| {
                    (
                        format!("integer `{text}` is out of range; counts must fit in 64 bits"),
                        Some(start..self.pos),
                    )
                });
            }
            text.parse::<f64>().map(NodeKind::Float).map_err(|_| {
                (
                    format!("`{text}` is not a valid JSON number"),
                    Some(start..self.pos),
                )
            })
        }

        fn string(&mut self) -> Result<String, (String, Option<std::ops::Range<usize>>)> {
            let start = self.pos;
            self.pos += 1; // opening quote
            loop {
                match self.bytes.get(self.pos) {
                    None => {
                        return Err(("unterminated string".into(), Some(start..self.pos)));
                    }
                    Some(b'"') => {
                        self.pos += 1;
                        break;
                    }
                    Some(b'\\') => self.pos += 2,
                    Some(_) => self.pos += 1,
                }
            }
            let end = self.pos.min(self.bytes.len());
            serde_json::from_str::<String>(&self.text[start..end])
                .map_err(|err| (format!("invalid string: {err}"), Some(start..end)))
        }

        fn array(
            &mut self,
            depth: usize,
        ) -> Result<NodeKind, (String, Option<std::ops::Range<usize>>)> {
            self.pos += 1;
            let mut items = Vec::new();
            self.skip_ws();
            if self.bytes.get(self.pos) == Some(&b']') {
                self.pos += 1;
                return Ok(NodeKind::Array(items));
            }
            loop {
                self.skip_ws();
                items.push(self.value(depth + 1)?);
                self.skip_ws();
                match self.bytes.get(self.pos) {
                    Some(b',') => self.pos += 1,
                    Some(b']') => {
                        self.pos += 1;
                        return Ok(NodeKind::Array(items));
                    }
                    _ => return Err(self.error("expected `,` or `]`")),
                }
            }
        }

        fn object(
            &mut self,
            depth: usize,
        ) -> Result<NodeKind, (String, Option<std::ops::Range<usize>>)> {
            self.pos += 1;
            let mut entries: Vec<Entry> = Vec::new();
            self.skip_ws();
            if self.bytes.get(self.pos) == Some(&b'}') {
                self.pos += 1;
                return Ok(NodeKind::Table(entries));
            }
            loop {
                self.skip_ws();
                if self.bytes.get(self.pos) != Some(&b'"') {
                    return Err(self.error("expected a key in double quotes"));
                }
                let key_start = self.pos;
                let key = self.string()?;
                let key_span = key_start..self.pos;
                if entries.iter().any(|e| e.key == key) {
                    return Err((
                        format!("duplicate key `{key}`; each key may appear once"),
                        Some(key_span),
                    ));
                }
                self.skip_ws();
                self.eat(b':', "`:` after the key")?;
                self.skip_ws();
                let value = self.value(depth + 1)?;
                entries.push(Entry {
                    key,
                    key_span,
                    value,
                });
                self.skip_ws();
                match self.bytes.get(self.pos) {
                    Some(b',') => self.pos += 1,
                    Some(b'}') => {
                        self.pos += 1;
                        return Ok(NodeKind::Table(entries));
                    }
                    _ => return Err(self.error("expected `,` or `}`")),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str, format: SourceFormat) -> Document {
        Document::parse("test".into(), text.into(), format).expect("parses")
    }

    fn path(p: &[&str]) -> Vec<String> {
        p.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn toml_spans_point_at_values_and_keys() {
        let text = "[batch]\nmicro_batch = 0\naccumulation = 8\n";
        let d = doc(text, SourceFormat::Toml);
        let span = d.span_for(&path(&["batch", "micro_batch"]));
        assert_eq!(&text[span], "0");
        assert_eq!(
            line_col(text, d.span_for(&path(&["batch", "micro_batch"])).start),
            (2, 15)
        );
        let key = d.key_span(&path(&["batch", "accumulation"])).expect("key");
        assert_eq!(&text[key], "accumulation");
        // A missing key points at its table.
        assert_eq!(&text[d.span_for(&path(&["batch", "replicas"]))], "batch");
        assert_eq!(d.to_json()["batch"]["accumulation"], 8);
    }

    #[test]
    fn json_and_yaml_give_the_same_tree() {
        let json = doc(
            "{\"batch\": {\"micro_batch\": 2, \"warmup\": \"2M tokens\", \"x\": [1, 2.5, null, true]}}",
            SourceFormat::Json,
        );
        let yaml = doc(
            "batch:\n  micro_batch: 2\n  warmup: 2M tokens\n  x: [1, 2.5, null, true]\n",
            SourceFormat::Yaml,
        );
        assert_eq!(json.to_json(), yaml.to_json());
        let span = yaml.span_for(&path(&["batch", "micro_batch"]));
        assert_eq!(&yaml.text[span], "2");
        let span = json.span_for(&path(&["batch", "warmup"]));
        assert_eq!(&json.text[span], "\"2M tokens\"");
    }

    #[test]
    fn duplicate_keys_are_errors_in_every_format() {
        for (text, format) in [
            ("a = 1\na = 2\n", SourceFormat::Toml),
            ("{\"a\": 1, \"a\": 2}", SourceFormat::Json),
            ("a: 1\na: 2\n", SourceFormat::Yaml),
        ] {
            let err = Document::parse("t".into(), text.into(), format).expect_err(text);
            assert!(
                err.message.contains("duplicate") || err.message.contains("Duplicate"),
                "{format:?}: {}",
                err.message
            );
        }
    }

    #[test]
    fn depth_is_bounded() {
        let deep_json = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        let err = Document::parse("t".into(), deep_json, SourceFormat::Json).expect_err("too deep");
        assert!(err.message.contains("nesting deeper"), "{}", err.message);
        let deep_yaml = format!("a: {}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert!(Document::parse("t".into(), deep_yaml, SourceFormat::Yaml).is_err());
        let deep_toml = format!("a = {}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert!(Document::parse("t".into(), deep_toml, SourceFormat::Toml).is_err());
    }

    #[test]
    fn yaml_alias_bombs_are_refused() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..12 {
            let prev = i - 1;
            text.push_str(&format!(
                "a{i}: &a{i} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"
            ));
        }
        assert!(Document::parse("t".into(), text, SourceFormat::Yaml).is_err());
    }

    #[test]
    fn syntax_errors_are_located() {
        let err = Document::parse("t".into(), "[batch\nx = 1".into(), SourceFormat::Toml)
            .expect_err("bad toml");
        assert!(err.span.is_some());
        let err = Document::parse("t".into(), "{\"a\": }".into(), SourceFormat::Json)
            .expect_err("bad json");
        assert_eq!(err.span, Some(6..7));
        let err = Document::parse("t".into(), "a: [1, 2\nb: 3".into(), SourceFormat::Yaml)
            .expect_err("bad yaml");
        assert!(!err.message.is_empty());
        let err = Document::parse("t".into(), "[1, 2]".into(), SourceFormat::Json)
            .expect_err("not a table");
        assert!(
            err.message.contains("top level must be a table"),
            "{}",
            err.message
        );
    }

    #[test]
    fn non_finite_and_huge_numbers_stay_visible() {
        let d = doc(
            "a = nan\nb = inf\nc = 170141183460469231731687303715884105727\n",
            SourceFormat::Toml,
        );
        let j = d.to_json();
        assert_eq!(j["a"], "NaN");
        assert_eq!(j["b"], "inf");
        assert!(j["c"].is_string());
    }

    #[test]
    fn line_col_counts_characters() {
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
        assert_eq!(line_col("é = 1", 2), (1, 2));
        assert_eq!(line_col("é = 1", 3), (1, 3));
        assert_eq!(line_col("x", 99), (1, 2));
    }
}
