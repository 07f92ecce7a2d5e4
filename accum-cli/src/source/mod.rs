//! Configuration files as located trees: TOML, JSON and YAML parsed into one
//! [`Node`] type that keeps the byte range of every key and value, so that a
//! finding about `batch.micro_batch` can underline the exact text. One file
//! per format: `toml` (the `toml` crate's `DeTable`), `json`
//! (`jsonc-parser`: comments, trailing commas and hjson's relaxations, as
//! DeepSpeed reads its config) and `yaml` (serde-saphyr).
//!
//! Loading is bounded: files over [`MAX_FILE_BYTES`] are refused before they
//! are read, nesting deeper than [`MAX_DEPTH`] is refused, a JSON or TOML
//! document holds at most [`MAX_VALUES`] values, YAML aliases are limited
//! by the parser's budget, and duplicate keys are errors in accum's own
//! files. A framework's YAML is read as that framework's loader reads it
//! ([`YamlLoader`]), with a [`ReadNote`] where that differs from YAML 1.2.
//! A UTF-8 byte-order mark is dropped before any format reads the text
//! ([`without_bom`]), so every reader accepts it and every position is
//! counted from the first character. A lookup by key in a large table goes
//! through an index ([`Document`]), so that a finding per key stays linear
//! in the keys.

use std::fmt;
use std::fs;
use std::io::Read;
use std::ops::Range;
use std::path::{Path, PathBuf};

mod json;
pub(crate) mod named;
mod scalar;
mod toml;
mod yaml;

pub use scalar::YamlLoader;

/// The largest configuration file accum reads.
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// The largest run report (`--report`) accum reads: a long run's report
/// holds one entry per update attempt and per logged point.
pub const MAX_REPORT_BYTES: u64 = 256 * 1024 * 1024;

/// The deepest nesting of tables and arrays accum accepts.
pub const MAX_DEPTH: usize = 64;

/// The most values (tables, arrays and scalars) a JSON or TOML document
/// may hold; YAML's parser stops at 200,000, counting aliases. A config
/// holds hundreds: this bounds what the checks after parsing (the JSON
/// instance, the schema, the typed check) keep in memory, a few hundred
/// bytes a value, where 4 MB of `[[[…]]]` made 1.8 million.
pub const MAX_VALUES: usize = 1_000_000;

/// The range of the value past [`MAX_VALUES`], in document order, if the
/// tree has more.
fn past_max_values(root: &Node) -> Option<Range<usize>> {
    let mut stack = vec![root];
    let mut count = 0usize;
    while let Some(node) = stack.pop() {
        count += 1;
        if count > MAX_VALUES {
            return Some(node.range.clone());
        }
        match &node.kind {
            NodeKind::Table(entries) => stack.extend(entries.iter().rev().map(|e| &e.value)),
            NodeKind::Array(items) => stack.extend(items.iter().rev()),
            _ => {}
        }
    }
    None
}

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

/// A value with the byte range of its text.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// Byte range of the value in the source.
    pub range: Range<usize>,
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
    pub key_range: Range<usize>,
    /// The value.
    pub value: Node,
}

/// A value that the file's loader reads differently from what its text
/// suggests (`010` is 8 to PyYAML), or a key given twice with different
/// values: a warning to give where the value matters.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadNote {
    /// The key path of the value.
    pub path: Vec<String>,
    /// Byte range of the value (of the later key, for a duplicate).
    pub range: Range<usize>,
    /// Both readings, in words.
    pub message: String,
    /// How to write the value so that every reader agrees.
    pub help: String,
    /// Whether the note holds whether or not the value is read (a
    /// duplicate key); else only when the value is read.
    pub always: bool,
}

/// A parsed configuration file.
#[derive(Debug)]
pub struct Document {
    /// The name shown in diagnostics (the path as given).
    pub name: String,
    /// The file's text.
    pub text: String,
    /// Its syntax.
    pub format: SourceFormat,
    /// The root table.
    pub root: Node,
    /// Values the loader reads differently from YAML 1.2 (framework YAML).
    pub notes: Vec<ReadNote>,
    /// The keys of the large tables, built at the first lookup.
    keys: KeyIndex,
}

impl Clone for Document {
    fn clone(&self) -> Document {
        // The index is of this tree's tables, by address: a copy builds its own.
        Document {
            name: self.name.clone(),
            text: self.text.clone(),
            format: self.format,
            root: self.root.clone(),
            notes: self.notes.clone(),
            keys: KeyIndex::default(),
        }
    }
}

/// Tables with more entries than this are indexed; smaller ones are
/// searched in order, which is as fast for them.
const INDEXED_TABLE: usize = 16;

/// Where each key of the document's large tables is, so that a lookup per
/// finding (an unknown key's place, its range) costs O(1) and not the
/// table's length: 300,000 unknown keys looked up one by one in their
/// table were quadratic (minutes).
///
/// The index maps (the table's entries' address, the key's hash) to the
/// entry's position, and a lookup checks the key at that position: a hash
/// collision, or a table the index does not know (a tree changed since it
/// was built), is searched in order, so the index can be wrong only about
/// speed.
#[derive(Debug, Default)]
struct KeyIndex(std::sync::OnceLock<Keys>);

/// The positions of the keys, and the tables indexed (address, length).
#[derive(Debug, Default)]
struct Keys {
    at: std::collections::HashMap<(usize, u64), usize>,
    tables: std::collections::HashSet<(usize, usize)>,
}

impl KeyIndex {
    fn entry<'a>(&self, root: &Node, entries: &'a [Entry], key: &str) -> Option<&'a Entry> {
        let in_order = || entries.iter().find(|e| e.key == key);
        if entries.len() <= INDEXED_TABLE {
            return in_order();
        }
        let keys = self.0.get_or_init(|| Keys::of(root));
        let table = entries.as_ptr() as usize;
        if !keys.tables.contains(&(table, entries.len())) {
            return in_order();
        }
        match keys.at.get(&(table, key_hash(key))) {
            None => None,
            Some(&i) => match entries.get(i) {
                Some(e) if e.key == key => Some(e),
                _ => in_order(),
            },
        }
    }
}

impl Keys {
    /// The index of every table of more than [`INDEXED_TABLE`] entries, in
    /// one walk of the tree (with a stack of its own: no recursion on the
    /// input).
    fn of(root: &Node) -> Keys {
        let mut keys = Keys::default();
        let mut stack = vec![root];
        while let Some(node) = stack.pop() {
            match &node.kind {
                NodeKind::Table(entries) => {
                    if entries.len() > INDEXED_TABLE {
                        let table = entries.as_ptr() as usize;
                        keys.tables.insert((table, entries.len()));
                        for (i, e) in entries.iter().enumerate() {
                            // The first of equal keys, as the search in order finds it.
                            keys.at.entry((table, key_hash(&e.key))).or_insert(i);
                        }
                    }
                    stack.extend(entries.iter().map(|e| &e.value));
                }
                NodeKind::Array(items) => stack.extend(items),
                _ => {}
            }
        }
        keys
    }
}

fn key_hash(key: &str) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    BuildHasherDefault::<DefaultHasher>::default().hash_one(key)
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
    pub range: Option<Range<usize>>,
}

impl LoadError {
    /// What is wrong, without the path: for a message that names the file
    /// itself (an import's "x.json: …").
    pub fn reason(&self) -> String {
        match self {
            LoadError::Io { reason, .. } => reason.clone(),
            LoadError::TooLarge { bytes, limit, .. } => format!(
                "{bytes} bytes is larger than the {limit}-byte limit; give the right file or shorten it"
            ),
            LoadError::UnknownFormat { .. } => {
                "unknown configuration format; name the file .toml, .json, .yaml or .yml".to_owned()
            }
            LoadError::NotUtf8 { offset, .. } => {
                format!("not UTF-8 text (invalid byte at offset {offset}); save the file as UTF-8")
            }
            LoadError::Syntax(err) => {
                let (line, col) = err
                    .range
                    .as_ref()
                    .map_or((1, 1), |s| line_col(&err.text, s.start));
                format!(
                    "{line}:{col}: invalid {}: {}",
                    err.format.name(),
                    err.message
                )
            }
        }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Io { path, .. }
            | LoadError::TooLarge { path, .. }
            | LoadError::UnknownFormat { path }
            | LoadError::NotUtf8 { path, .. } => {
                write!(f, "{}: {}", accum_core::shown::path(path), self.reason())
            }
            // `name:line:col: …`, as compilers write a location.
            LoadError::Syntax(err) => write!(f, "{}:{}", err.name, self.reason()),
        }
    }
}

impl std::error::Error for LoadError {}

/// Where each line of a text starts, so that many offsets are placed in
/// `log n` each: placing every finding of a file with [`line_col`] scans the
/// text again for each, quadratic in a file of thousands of findings.
pub(crate) struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
    /// For each block of [`LineIndex::BLOCK`] bytes, a character boundary
    /// at or before its start and the characters before it, so that a
    /// column costs at most one block's count, however long its line: a
    /// finding each on a 4 MB single line counted the line from its start
    /// each time (quadratic).
    blocks: Vec<(usize, usize)>,
}

impl<'a> LineIndex<'a> {
    const BLOCK: usize = 1024;

    /// Indexes `text` in one pass.
    pub(crate) fn new(text: &'a str) -> LineIndex<'a> {
        let starts = std::iter::once(0)
            .chain(
                text.bytes()
                    .enumerate()
                    .filter(|(_, b)| *b == b'\n')
                    .map(|(i, _)| i + 1),
            )
            .collect();
        let mut blocks = Vec::with_capacity(text.len() / Self::BLOCK + 1);
        let (mut at, mut chars) = (0, 0);
        for block in 0..=text.len() / Self::BLOCK {
            let mut start = block * Self::BLOCK;
            while !text.is_char_boundary(start) {
                start -= 1;
            }
            chars += text[at..start].chars().count();
            at = start;
            blocks.push((at, chars));
        }
        LineIndex {
            text,
            starts,
            blocks,
        }
    }

    /// Characters before a byte offset (on a character boundary).
    fn chars_before(&self, offset: usize) -> usize {
        let (at, chars) = self.blocks[offset / Self::BLOCK];
        chars + self.text[at..offset].chars().count()
    }

    /// 1-based line and column (in characters) of a byte offset, as [`line_col`].
    pub(crate) fn line_col(&self, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset);
        let line_start = self.starts[line - 1];
        (
            line,
            self.chars_before(offset) - self.chars_before(line_start) + 1,
        )
    }

    /// The whole lines that hold `ranges` (byte ranges on character
    /// boundaries), and the 1-based number of the first.
    pub(crate) fn window(
        &self,
        ranges: impl Iterator<Item = Range<usize>>,
    ) -> (Range<usize>, usize) {
        let (mut start, mut end) = (self.text.len(), 0);
        for range in ranges {
            start = start.min(range.start);
            end = end.max(range.end);
        }
        if start > end {
            return (0..self.text.len(), 1);
        }
        let first = self.starts.partition_point(|&s| s <= start);
        let last = self.starts.partition_point(|&s| s <= end);
        let from = self.starts[first - 1];
        let to = self.starts.get(last).map_or(self.text.len(), |&s| s);
        (from..to, first)
    }
}

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

/// The files this command has read, by device and inode, so that an
/// output that is one of them is refused (`sheet c.toml -o c.toml` replaced
/// the config). Kept for the process: one command runs per process.
static INPUTS: std::sync::Mutex<Vec<(FileId, PathBuf)>> = std::sync::Mutex::new(Vec::new());

/// A file's identity: the same file through any path or link.
type FileId = (u64, u64);

#[cfg(unix)]
fn file_id(meta: &fs::Metadata) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn file_id(_: &fs::Metadata) -> Option<FileId> {
    None
}

/// The input this command read that `path` (an output) would replace.
pub(crate) fn input_at(path: &Path) -> Option<PathBuf> {
    let id = file_id(&fs::metadata(path).ok()?)?;
    let inputs = INPUTS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    inputs
        .iter()
        .find(|(i, _)| *i == id)
        .map(|(_, p)| p.clone())
}

/// Counts `path` among this command's inputs: a file read other than by
/// [`read_text`], such as the stats stream a report names, which a sheet
/// reads while it renders.
pub(crate) fn note_input(path: &Path) {
    if let Some(id) = fs::metadata(path).ok().as_ref().and_then(file_id) {
        INPUTS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((id, path.to_owned()));
    }
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
    // A device or a pipe is refused before it is opened (opening one can
    // block, or act); the opened handle is checked again in `read_opened`,
    // so a file swapped in between is refused too, without blocking.
    let meta = fs::metadata(path).map_err(|err| io(describe_io(&err)))?;
    regular(&meta).map_err(io)?;
    let file = accum_core::fsio::open_input(path, accum_core::fsio::Links::Followed)
        .map_err(|err| io(describe_io(&err)))?;
    read_opened(file, path, limit)
}

/// A regular file, or why not, with the fix.
fn regular(meta: &fs::Metadata) -> Result<(), String> {
    if meta.is_dir() {
        return Err("is a directory; give a file".into());
    }
    if !meta.is_file() {
        return Err(
            "not a regular file (a pipe, socket or device); save the content to a file and give its path"
                .into(),
        );
    }
    Ok(())
}

/// Reads an opened file of at most `limit` bytes as UTF-8 text, shown as
/// `path`: its type and size come from the handle itself (no separate look
/// at the path that another file could take in between), and the read
/// stops one byte past the limit, for a file that grows after the size
/// check and for files that report no size (procfs). The file is
/// remembered as an input of the command ([`input_at`]).
pub(crate) fn read_opened(file: fs::File, path: &Path, limit: u64) -> Result<String, LoadError> {
    let io = |reason: String| LoadError::Io {
        path: path.to_owned(),
        reason,
    };
    let meta = file.metadata().map_err(|err| io(describe_io(&err)))?;
    regular(&meta).map_err(io)?;
    if meta.len() > limit {
        return Err(LoadError::TooLarge {
            path: path.to_owned(),
            bytes: meta.len(),
            limit,
        });
    }
    if let Some(id) = file_id(&meta) {
        INPUTS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((id, path.to_owned()));
    }
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
    String::from_utf8(bytes)
        .map(without_bom)
        .map_err(|err| LoadError::NotUtf8 {
            path: path.to_owned(),
            offset: err.utf8_error().valid_up_to(),
        })
}

/// The text without its UTF-8 byte-order mark, if it has one: the one
/// place where a BOM is dropped, for every file accum reads (configs in each
/// format, frameworks' files, scripts, reports, streams) and for text parsed
/// directly. Editors do not count the mark as a character, so positions in
/// the text without it are the ones the user sees.
pub fn without_bom(mut text: String) -> String {
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    text
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

    /// Parses text in a given format, YAML as accum's own files are read.
    pub fn parse(
        name: String,
        text: String,
        format: SourceFormat,
    ) -> Result<Document, SyntaxError> {
        Document::parse_with(name, text, format, YamlLoader::Yaml12)
    }

    /// Parses text in a given format, YAML as `loader` reads it.
    pub fn parse_with(
        name: String,
        text: String,
        format: SourceFormat,
        loader: YamlLoader,
    ) -> Result<Document, SyntaxError> {
        let text = without_bom(text);
        let parsed = match format {
            SourceFormat::Toml => self::toml::parse(&text).map(|root| (root, Vec::new())),
            SourceFormat::Json => json::parse(&text).map(|root| (root, Vec::new())),
            SourceFormat::Yaml => yaml::parse(&text, loader),
        };
        match parsed {
            Ok((root, notes)) => {
                if !matches!(root.kind, NodeKind::Table(_)) {
                    return Err(SyntaxError {
                        message: format!(
                            "the top level must be a table of sections, not {}",
                            root.kind.type_name()
                        ),
                        range: Some(root.range.clone()),
                        name,
                        text,
                        format,
                    });
                }
                if let Some(at) = past_max_values(&root) {
                    return Err(SyntaxError {
                        message: format!(
                            "the document has more than {MAX_VALUES} values; shorten the file"
                        ),
                        range: Some(at),
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
                    keys: KeyIndex::default(),
                    notes,
                })
            }
            Err((message, range)) => Err(SyntaxError {
                name,
                text,
                format,
                message,
                range,
            }),
        }
    }

    /// A document made of several files' values (Hydra's composition): the
    /// texts one after the other in `text`, and every range of `root` and
    /// `notes` in that text.
    pub(crate) fn composed(
        name: String,
        text: String,
        root: Node,
        notes: Vec<ReadNote>,
    ) -> Document {
        Document {
            name,
            text,
            format: SourceFormat::Yaml,
            root,
            keys: KeyIndex::default(),
            notes,
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
            node = self.child_entry(node, segment)?.1;
        }
        Some(node)
    }

    /// The best range for a finding at `path`: the value if present, else the
    /// key or table of the deepest ancestor that exists.
    pub fn range_of(&self, path: &[String]) -> Range<usize> {
        let mut node = &self.root;
        let mut best = self.root_header_range();
        for segment in path {
            match self.child_entry(node, segment) {
                Some((key_range, value)) => {
                    best = match key_range {
                        Some(key_range) if matches!(value.kind, NodeKind::Table(_)) => key_range,
                        _ => value.range.clone(),
                    };
                    node = value;
                }
                None => break,
            }
        }
        best
    }

    /// The range of a key (for unknown-key findings), if present.
    pub fn key_range(&self, path: &[String]) -> Option<Range<usize>> {
        let (last, parent) = path.split_last()?;
        let parent = self.node(parent)?;
        self.child_entry(parent, last)
            .and_then(|(key_range, _)| key_range)
    }

    fn root_header_range(&self) -> Range<usize> {
        // The first non-blank character, so that a "missing key" finding in
        // the root points at the top of the file.
        let start = self.text.len() - self.text.trim_start().len();
        start..start
    }

    /// The entry `segment` of a table (its key's range and its value), or
    /// the item `segment` of an array.
    fn child_entry<'a>(
        &self,
        node: &'a Node,
        segment: &str,
    ) -> Option<(Option<Range<usize>>, &'a Node)> {
        match &node.kind {
            NodeKind::Table(entries) => self
                .keys
                .entry(&self.root, entries, segment)
                .map(|e| (Some(e.key_range.clone()), &e.value)),
            NodeKind::Array(items) => segment
                .parse::<usize>()
                .ok()
                .and_then(|i| items.get(i))
                .map(|v| (None, v)),
            _ => None,
        }
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
        // Opened without blocking, a stream with nothing to read yet
        // (procfs's `kmsg`) says so instead of holding the command.
        std::io::ErrorKind::WouldBlock => {
            "nothing can be read without waiting (a stream, not a file); save the content to a file and give its path"
                .into()
        }
        _ => err.to_string(),
    }
}

/// A located tree, or what is wrong and where.
type ParseResult = Result<Node, (String, Option<Range<usize>>)>;

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
    fn toml_ranges_point_at_values_and_keys() {
        let text = "[batch]\nmicro_batch = 0\naccumulation = 8\n";
        let d = doc(text, SourceFormat::Toml);
        let range = d.range_of(&path(&["batch", "micro_batch"]));
        assert_eq!(&text[range], "0");
        assert_eq!(
            line_col(text, d.range_of(&path(&["batch", "micro_batch"])).start),
            (2, 15)
        );
        let key = d.key_range(&path(&["batch", "accumulation"])).expect("key");
        assert_eq!(&text[key], "accumulation");
        // A missing key points at its table.
        assert_eq!(&text[d.range_of(&path(&["batch", "replicas"]))], "batch");
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
        let range = yaml.range_of(&path(&["batch", "micro_batch"]));
        assert_eq!(&yaml.text[range], "2");
        let range = json.range_of(&path(&["batch", "warmup"]));
        assert_eq!(&json.text[range], "\"2M tokens\"");
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

    /// The parser's limits and policies are told in this tool's words: no
    /// type names (`MergeKeys { … }`) and no API names (`from_str_multiple`).
    #[test]
    fn yaml_limits_and_policies_are_told_without_the_parsers_words() {
        let merges: String = (0..10_001)
            .map(|i| format!("k{i}: {{<<: {{x: 1}}}}\n"))
            .collect();
        let cases = [
            (merges, "more than 10000 merge keys (`<<`)"),
            (
                "a: 1\n---\nb: 2\n".to_owned(),
                "more than one YAML document",
            ),
            (
                "a: &a [*a]\n".to_owned(),
                "refers to the value that contains it",
            ),
            (
                format!("devices: [{}]\n", vec!["0"; 200_001].join(", ")),
                "counting each use of an alias as a copy",
            ),
        ];
        for (text, needle) in cases {
            let Err(err) = Document::parse("t".into(), text, SourceFormat::Yaml) else {
                panic!("{needle}: accepted");
            };
            assert!(err.message.contains(needle), "{needle}: {}", err.message);
            for internal in ["{ ", "from_str", "weak", "budget", "Breach"] {
                assert!(!err.message.contains(internal), "{}", err.message);
            }
        }
    }

    /// Duplicate keys are found with a set: a table of 100,000 keys, the
    /// size of a 1.7 MB file, is read in well under a second (it took
    /// minutes with a scan per key).
    #[test]
    fn many_keys_and_a_duplicate_at_the_end_are_read_at_once() {
        let keys: Vec<String> = (0..100_000).map(|i| format!("\"k{i}\": {i}")).collect();
        let json = format!("{{{}, \"k7\": 0}}", keys.join(", "));
        let Err(err) = Document::parse("t".into(), json, SourceFormat::Json) else {
            panic!("a duplicate accepted");
        };
        assert!(
            err.message.contains("duplicate key `k7`"),
            "{}",
            err.message
        );
        // A key and its value are two of the YAML budget's values.
        let yaml: String = (0..90_000).map(|i| format!("k{i}: {i}\n")).collect();
        let doc = Document::parse("t".into(), yaml, SourceFormat::Yaml).map_err(|e| e.message);
        assert!(matches!(&doc.map(|d| d.root.kind), Ok(NodeKind::Table(e)) if e.len() == 90_000));
    }

    #[test]
    fn syntax_errors_are_located() {
        let err = Document::parse("t".into(), "[batch\nx = 1".into(), SourceFormat::Toml)
            .expect_err("bad toml");
        assert!(err.range.is_some());
        let err = Document::parse("t".into(), "{\"a\": }".into(), SourceFormat::Json)
            .expect_err("bad json");
        assert_eq!(err.range, Some(6..7));
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
        let text = "ab\ncd\n\né = 1";
        let index = LineIndex::new(text);
        for offset in 0..text.len() + 3 {
            assert_eq!(index.line_col(offset), line_col(text, offset), "{offset}");
        }
        // Lines longer than a block, with characters across its edges.
        let long = format!("a\n{}\n{}é", "é".repeat(3000), "xé€".repeat(700));
        let index = LineIndex::new(&long);
        for offset in (0..long.len() + 2).step_by(7) {
            assert_eq!(index.line_col(offset), line_col(&long, offset), "{offset}");
        }
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
        assert_eq!(line_col("é = 1", 2), (1, 2));
        assert_eq!(line_col("é = 1", 3), (1, 3));
        assert_eq!(line_col("x", 99), (1, 2));
    }
}
