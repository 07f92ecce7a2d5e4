//! Hydra's `defaults:` composition within the config's own tree: an
//! experiment file (`configs/experiment/x.yaml`) takes the trainer's
//! `devices` and the data's `batch_size` from other files of the same tree,
//! as `python train.py experiment=x` composes them. accum composes the
//! subset research repositories use, as Hydra's own code does
//! (facebookresearch/hydra `hydra/_internal/defaults_list.py`):
//!
//! - entries `group: option` (relative to the file's group), `/group:
//!   option` (from the config root), `group@package: option`, `optional
//!   group: option` (skipped when the file is missing), a plain `name` (a
//!   config of the file's own group), `_self_`, and `override group:
//!   option`; an option `null` chooses nothing;
//! - `_self_` where listed; a list without it, and with an entry that is not
//!   an override, has it appended last (`_validate_self`, Hydra 1.1 on);
//! - a defaults list is walked from its last entry to its first
//!   (`_create_defaults_tree_impl`, `for d in reversed(defaults_list)`), an
//!   `override` is registered when it is met and the first registered wins
//!   (`Overrides.add_override`: "the last override in depth first order"),
//!   so an experiment's `override /trainer: gpu` replaces the option the
//!   primary config chose; a command line's choice (`experiment=x`) wins
//!   over both;
//! - a file's package is its `# @package` header (`_global_`: the top),
//!   else its group's path below its parent's package;
//! - the files are merged in the order of the list, as OmegaConf merges
//!   (`hydra/_internal/config_loader_impl.py`,
//!   `ConfigLoaderImpl._compose_config_from_defaults_list`: `cfg.merge_with`
//!   of each file): tables key by key, any other value replaced ([`merge`]).
//!
//! The config root is the nearest folder above the file, inside its
//! repository, that holds the folders of the groups the file names from
//! the root (`/trainer`). When the file is an option of a group (it is in
//! `experiment/` below that root) and exactly one config at the root lists
//! that group in its defaults (`- experiment: null`), that config is the
//! primary one, composed with this file chosen, as `python train.py
//! experiment=x` does. Files are read only inside the repository, as regular
//! files of at most the configuration-file limit, through no link that
//! leads out; at most [`MAX_FILES`] files and [`MAX_DEPTH`] levels, and a
//! file that includes itself is refused.
//!
//! Every value keeps its file: the composed document's text is the files'
//! texts one after the other, each value's range in its own part, and the
//! findings are given back to the file they point into.

use std::collections::HashMap;
use std::fs;
use std::ops::Range;
use std::path::{Path, PathBuf};

use accum_core::Code;

use super::FileReport;
use crate::diagnostic::Diagnostic;
use crate::source::{Document, Entry, Node, NodeKind, ReadNote, SourceFormat, YamlLoader};

/// Most files one composition reads.
pub(crate) const MAX_FILES: usize = 64;
/// Deepest chain of defaults lists.
pub(crate) const MAX_DEPTH: usize = 8;

/// One file of the composition, in the composed text.
#[derive(Clone, Debug)]
pub(crate) struct Part {
    /// The name shown in findings.
    pub(crate) name: String,
    /// Its text.
    pub(crate) text: String,
    /// Where it starts in the composed text.
    pub(crate) start: usize,
}

/// A composed config: the document the readers read, and its files.
pub(crate) struct Composed {
    pub(crate) doc: Document,
    pub(crate) parts: Vec<Part>,
    /// Findings about the composition (ranges in the composed text).
    pub(crate) findings: Vec<Diagnostic>,
}

/// One entry of a defaults list.
#[derive(Clone, Debug)]
enum Choice {
    SelfEntry,
    /// `group: option`, `/group: option`, `optional group: option`,
    /// `group@package: option`.
    Group {
        /// The group from the config root (`trainer`, `trainer/accelerator`).
        key: String,
        /// The group as written, for the package (`trainer`).
        written: String,
        package: Option<String>,
        option: Option<String>,
        optional: bool,
        range: Range<usize>,
    },
    /// `override group: option`.
    Override {
        key: String,
        option: Option<String>,
        range: Range<usize>,
    },
    /// A config of the file's own group, by name.
    Config {
        name: String,
        range: Range<usize>,
    },
}

/// An option chosen by an override.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Override {
    option: Option<String>,
    used: bool,
    file: usize,
    range: Range<usize>,
}

/// A file read for the composition.
struct Loaded {
    shown: String,
    real: PathBuf,
    doc: Document,
}

struct Composer {
    repository: PathBuf,
    root: PathBuf,
    loader: YamlLoader,
    files: Vec<Loaded>,
    /// Each group's option chosen by an override: the option, whether a
    /// group default used it, and where it is written (file, range).
    overrides: HashMap<String, Override>,
    /// Findings, each with the file it points into.
    findings: Vec<(usize, Diagnostic)>,
    stack: Vec<PathBuf>,
    /// No primary config is known: the imported file's overrides choose
    /// their groups' options themselves.
    overrides_choose: bool,
}

/// Composes the file at `path` (parsed as `doc`) with the files its
/// `defaults:` list and its primary config name; `None` when it names
/// none and no primary config chooses it.
pub(crate) fn compose(doc: &Document, path: &Path) -> Option<Composed> {
    // Hydra loads every file of the tree with OmegaConf.
    let loader = YamlLoader::OmegaConf;
    let real = fs::canonicalize(path).ok()?;
    let repository = crate::source::named::repository_root(path)?;
    let dir = real.parent()?.to_owned();
    let own = defaults_of(doc, "").0;
    // The config root: the nearest folder that holds every group named
    // from the root, else the file's own folder.
    let absolute: Vec<&str> = own
        .iter()
        .filter_map(|d| match d {
            Choice::Group { key, written, .. } if written.starts_with('/') => Some(key.as_str()),
            Choice::Override { key, .. } => Some(key.as_str()),
            _ => None,
        })
        .collect();
    let root = if absolute.is_empty() {
        // An experiment that names no group from the root is still an
        // option of its folder's group when the folder above holds the
        // primary config that lists it.
        match dir.parent() {
            Some(up) if up.starts_with(&repository) && lists_group(up, &dir, loader) => {
                up.to_owned()
            }
            _ => dir.clone(),
        }
    } else {
        dir.ancestors()
            .take_while(|d| d.starts_with(&repository))
            .find(|d| absolute.iter().all(|g| d.join(g).is_dir()))
            .unwrap_or(&dir)
            .to_owned()
    };
    let group = dir
        .strip_prefix(&root)
        .ok()
        .map(|g| g.to_string_lossy().replace('\\', "/"))
        .unwrap_or_default();
    let stem = real.file_stem()?.to_string_lossy().into_owned();
    let mut c = Composer {
        repository,
        root: root.clone(),
        loader,
        files: vec![Loaded {
            shown: doc.name.clone(),
            real: real.clone(),
            doc: doc.clone(),
        }],
        overrides: HashMap::new(),
        findings: Vec::new(),
        stack: Vec::new(),
        overrides_choose: false,
    };
    let primary = if group.is_empty() {
        None
    } else {
        c.primary(&group, doc)
    };
    if own.is_empty() && primary.is_none() {
        return None;
    }
    let leaves = match primary {
        Some(primary) => {
            // `experiment=x` on the command line: it wins over the lists.
            c.overrides.insert(
                group.clone(),
                Override {
                    option: Some(stem),
                    used: false,
                    file: 0,
                    range: 0..0,
                },
            );
            c.expand(primary, "", String::new(), 0)
        }
        None => {
            c.overrides_choose = true;
            c.expand(0, &group, String::new(), 0)
        }
    };
    // An override that chose nothing: Hydra refuses the list
    // (`ensure_overrides_used`).
    let mut unused: Vec<(String, Override)> = c
        .overrides
        .iter()
        .filter(|(k, o)| !o.used && **k != group)
        .map(|(k, o)| (k.clone(), o.clone()))
        .collect();
    unused.sort_by(|a, b| a.0.cmp(&b.0));
    for (key, o) in unused {
        let range = o.range;
        c.findings.push((
            o.file,
            Diagnostic::error(
                Code::File,
                vec!["defaults".to_owned()],
                format!("`override /{key}` overrides no earlier choice of the group `{key}`: Hydra refuses the defaults list (\"No earlier Group Default for '{key}' exists to override\"), or the primary config that chooses it is not found in this tree"),
            )
            .help(format!("write `- /{key}: OPTION` to add the group, or give the values it would set with --set KEY=VALUE"))
            .at(range, "nothing to override"),
        ));
    }
    Some(c.finish(doc, &leaves))
}

/// Whether a config in `root` lists the group of the folder `dir` in its
/// defaults.
fn lists_group(root: &Path, dir: &Path, loader: YamlLoader) -> bool {
    let Some(group) = dir.file_name().map(|g| g.to_string_lossy().into_owned()) else {
        return false;
    };
    primary_candidates(root, loader, &group).len() == 1
}

/// The configs in `root` whose defaults list names `group`.
fn primary_candidates(root: &Path, loader: YamlLoader, group: &str) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(root) else {
        return Vec::new();
    };
    let Ok(real_root) = fs::canonicalize(root) else {
        return Vec::new();
    };
    let mut names: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    names.sort();
    names
        .into_iter()
        .take(MAX_FILES)
        .filter(|path| {
            let Ok(real) = fs::canonicalize(path) else {
                return false;
            };
            if !real.starts_with(&real_root) {
                return false;
            }
            let Ok(text) =
                crate::source::named::read_regular(&real, path, crate::source::MAX_FILE_BYTES)
            else {
                return false;
            };
            let Ok(candidate) =
                Document::parse_with(String::new(), text, SourceFormat::Yaml, loader)
            else {
                return false;
            };
            defaults_of(&candidate, "")
                .0
                .iter()
                .any(|d| matches!(d, Choice::Group { key, .. } if key == group))
        })
        .collect()
}

impl Composer {
    /// The one config at the root whose defaults list names `group`, read.
    fn primary(&mut self, group: &str, doc: &Document) -> Option<usize> {
        let found = primary_candidates(&self.root, self.loader, group);
        match found.as_slice() {
            [one] => self.load(one, 0, 0..0, false),
            [] => None,
            several => {
                let names: Vec<String> = several
                    .iter()
                    .map(|p| format!("`{}`", self.shown(p)))
                    .collect();
                let range = doc.range_of(&["defaults".to_owned()]);
                self.findings.push((
                    0,
                    Diagnostic::error(
                        Code::File,
                        vec!["defaults".to_owned()],
                        format!(
                            "{} each list the group `{group}` in their defaults: accum does not choose the primary config, and composes this file with only the files it names",
                            crate::output::listed(&names)
                        ),
                    )
                    .warning()
                    .help("give the values the primary config sets with --set KEY=VALUE")
                    .at(range, "primary config not chosen"),
                ));
                None
            }
        }
    }

    /// Reads a file of the tree, once; `None` (a finding pushed at `range`
    /// of file `from` when `report`) when it cannot be read.
    fn load(
        &mut self,
        path: &Path,
        from: usize,
        range: Range<usize>,
        report: bool,
    ) -> Option<usize> {
        let real = fs::canonicalize(path).ok();
        if let Some(real) = &real
            && let Some(i) = self.files.iter().position(|f| f.real == *real)
        {
            return Some(i);
        }
        let shown = self.shown(path);
        let mut refuse = |reason: String| {
            if report {
                self.findings.push((
                    from,
                    Diagnostic::error(
                        Code::File,
                        vec!["defaults".to_owned()],
                        format!("the defaults list names `{shown}`, which {reason}"),
                    )
                    .help("correct the entry, or give the values it would set with --set KEY=VALUE")
                    .at(range.clone(), "not composed"),
                ));
            }
            None
        };
        let Some(real) = real else {
            return refuse("does not exist: Hydra refuses the list (\"Could not find\")".into());
        };
        if !real.starts_with(&self.repository) {
            return refuse("leads outside the repository: accum does not read it".into());
        }
        if self.files.len() >= MAX_FILES {
            return refuse(format!("is past the {MAX_FILES} files accum composes"));
        }
        let text =
            match crate::source::named::read_regular(&real, path, crate::source::MAX_FILE_BYTES) {
                Ok(text) => text,
                Err(crate::source::named::Refusal::Unreadable { reason, .. }) => {
                    return refuse(format!("is not read: {reason}"));
                }
                Err(_) => return refuse("is not read".into()),
            };
        match Document::parse_with(shown.clone(), text, SourceFormat::Yaml, self.loader) {
            Ok(doc) => {
                self.files.push(Loaded { shown, real, doc });
                Some(self.files.len() - 1)
            }
            Err(err) => refuse(format!("is not valid YAML: {}", err.message)),
        }
    }

    /// A path as findings show it: relative to the working folder when it
    /// is below it, else from the repository.
    fn shown(&self, path: &Path) -> String {
        let real = fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
        if let Ok(cwd) = std::env::current_dir().and_then(fs::canonicalize)
            && let Ok(rel) = real.strip_prefix(&cwd)
        {
            return rel.display().to_string();
        }
        real.strip_prefix(&self.repository)
            .unwrap_or(&real)
            .display()
            .to_string()
    }

    /// The files file `i` (of group `group`, in `package`) composes, in
    /// merge order, with the package of each.
    fn expand(
        &mut self,
        i: usize,
        group: &str,
        package: String,
        depth: usize,
    ) -> Vec<(usize, String)> {
        let real = self.files[i].real.clone();
        if depth > MAX_DEPTH || self.stack.contains(&real) {
            let what = if depth > MAX_DEPTH {
                format!("nests defaults lists more than {MAX_DEPTH} deep")
            } else {
                "includes itself through its defaults lists".to_owned()
            };
            let range = self.files[i].doc.range_of(&["defaults".to_owned()]);
            self.findings.push((
                i,
                Diagnostic::error(
                    Code::Limit,
                    vec!["defaults".to_owned()],
                    format!("`{}` {what}", self.files[i].shown),
                )
                .help("write the values in the file, or give them with --set KEY=VALUE")
                .at(range, "not composed"),
            ));
            return Vec::new();
        }
        let package = match header_package(&self.files[i].doc.text) {
            Some(p) if p == "_global_" => String::new(),
            Some(p) if p != "_group_" => p,
            _ => package,
        };
        let (mut defaults, problems) = defaults_of(&self.files[i].doc, group);
        for p in problems {
            self.findings.push((i, p));
        }
        if i == 0 && self.overrides_choose {
            // Without the primary config, `override /trainer: gpu` is the
            // one choice of its group that is known.
            for d in &mut defaults {
                if let Choice::Override { key, option, range } = d {
                    *d = Choice::Group {
                        written: format!("/{key}"),
                        key: key.clone(),
                        package: None,
                        option: option.clone(),
                        optional: false,
                        range: range.clone(),
                    };
                }
            }
        }
        if defaults.is_empty() {
            return vec![(i, package)];
        }
        let has_self = defaults.iter().any(|d| matches!(d, Choice::SelfEntry));
        let has_plain = defaults
            .iter()
            .any(|d| !matches!(d, Choice::Override { .. }));
        if !has_self && has_plain {
            defaults.push(Choice::SelfEntry);
        }
        if !has_self && !has_plain {
            // Only overrides: the file is a leaf itself.
            defaults.insert(0, Choice::SelfEntry);
        }
        self.stack.push(real);
        let mut reversed: Vec<Vec<(usize, String)>> = Vec::new();
        for d in defaults.iter().rev() {
            match d {
                Choice::SelfEntry => reversed.push(vec![(i, package.clone())]),
                Choice::Override { key, option, range } => {
                    self.overrides
                        .entry(key.clone())
                        .or_insert_with(|| Override {
                            option: option.clone(),
                            used: false,
                            file: i,
                            range: range.clone(),
                        });
                }
                Choice::Group {
                    key,
                    written,
                    package: explicit,
                    option,
                    optional,
                    range,
                } => {
                    // Where the option is chosen: the override, when there
                    // is one (its file and entry are what to correct).
                    let (option, from, at) = match self.overrides.get_mut(key) {
                        Some(o) if o.range != (0..0) => {
                            o.used = true;
                            (o.option.clone(), o.file, o.range.clone())
                        }
                        Some(o) => {
                            o.used = true;
                            (o.option.clone(), i, range.clone())
                        }
                        None => (option.clone(), i, range.clone()),
                    };
                    let Some(option) = option else {
                        continue;
                    };
                    let child_package = explicit.clone().unwrap_or_else(|| {
                        join(&package, &written.trim_start_matches('/').replace('/', "."))
                    });
                    let path = self.root.join(key).join(format!("{option}.yaml"));
                    if *optional && !path.exists() {
                        continue;
                    }
                    if let Some(child) = self.load(&path, from, at, true) {
                        reversed.push(self.expand(child, key, child_package, depth + 1));
                    }
                }
                Choice::Config { name, range } => {
                    let path = self.root.join(group).join(format!("{name}.yaml"));
                    if let Some(child) = self.load(&path, i, range.clone(), true) {
                        reversed.push(self.expand(child, group, package.clone(), depth + 1));
                    }
                }
            }
        }
        self.stack.pop();
        reversed.into_iter().rev().flatten().collect()
    }

    /// The composed document and its parts.
    fn finish(self, main: &Document, leaves: &[(usize, String)]) -> Composed {
        let mut text = String::new();
        let mut parts = Vec::new();
        for f in &self.files {
            let start = text.len();
            text.push_str(&f.doc.text);
            text.push('\n');
            parts.push(Part {
                name: f.shown.clone(),
                text: f.doc.text.clone(),
                start,
            });
        }
        let mut root = Node {
            range: main.root.range.clone(),
            kind: NodeKind::Table(Vec::new()),
        };
        let mut notes: Vec<ReadNote> = Vec::new();
        let mut placed = vec![false; self.files.len()];
        for (i, package) in leaves {
            let f = &self.files[*i];
            let start = parts[*i].start;
            let mut content = shifted(&f.doc.root, start);
            if let NodeKind::Table(entries) = &mut content.kind {
                entries.retain(|e| e.key != "defaults");
            }
            let prefix: Vec<String> = package
                .split('.')
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect();
            for segment in prefix.iter().rev() {
                content = Node {
                    range: content.range.clone(),
                    kind: NodeKind::Table(vec![Entry {
                        key: segment.clone(),
                        key_range: content.range.start..content.range.start,
                        value: content,
                    }]),
                };
            }
            merge(&mut root, content);
            if !placed[*i] {
                placed[*i] = true;
                notes.extend(f.doc.notes.iter().map(|n| {
                    let mut n = n.clone();
                    n.range = n.range.start + start..n.range.end + start;
                    let mut path = prefix.clone();
                    path.extend(n.path);
                    n.path = path;
                    n
                }));
            }
        }
        let findings = self
            .findings
            .into_iter()
            .map(|(i, d)| shift_finding(d, parts[i].start))
            .collect();
        Composed {
            doc: Document::composed(main.name.clone(), text, root, notes),
            parts,
            findings,
        }
    }
}

impl Composed {
    /// The report of the composed document as one report per file, each
    /// finding in the file it points into.
    pub(crate) fn split(&self, report: FileReport) -> Vec<FileReport> {
        let mut out: Vec<FileReport> = self
            .parts
            .iter()
            .enumerate()
            .map(|(i, p)| FileReport {
                name: if i == 0 {
                    report.name.clone()
                } else {
                    p.name.clone()
                },
                text: p.text.clone(),
                findings: Vec::new(),
                unread: Vec::new(),
                named_inside: i > 0,
            })
            .collect();
        let part_of = |at: usize| self.parts.iter().rposition(|p| p.start <= at).unwrap_or(0);
        for mut f in report.findings {
            let i = f.location.range.as_ref().map_or(0, |r| part_of(r.start));
            let start = self.parts[i].start;
            let end = start + self.parts[i].text.len();
            f.retain_related(|r| r.start >= start && r.end <= end);
            f.location.map(|r| r.start - start..r.end.min(end) - start);
            // A fix edits the file its finding is in: one with an edit in
            // another file of the tree is not offered.
            f.fixes.retain(|fix| {
                fix.edits
                    .iter()
                    .all(|e| e.range.start >= start && e.range.end <= end)
            });
            for fix in &mut f.fixes {
                for e in &mut fix.edits {
                    e.range = e.range.start - start..e.range.end - start;
                }
            }
            out[i].findings.push(f);
        }
        for mut u in report.unread {
            let i = part_of(u.range.start);
            let start = self.parts[i].start;
            u.range = u.range.start - start..u.range.end - start;
            out[i].unread.push(u);
        }
        out
    }
}

/// The `# @package X` header of a file: among the comment lines that open it.
fn header_package(text: &str) -> Option<String> {
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let comment = line.strip_prefix('#')?;
        if let Some(rest) = comment.trim().strip_prefix("@package") {
            return Some(rest.trim().to_owned());
        }
    }
    None
}

/// A defaults list's entries, each group resolved from the config root
/// (`group` is the file's own group), and findings for what accum does
/// not compose.
fn defaults_of(doc: &Document, group: &str) -> (Vec<Choice>, Vec<Diagnostic>) {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    let Some(node) = doc.node(&["defaults".to_owned()]) else {
        return (out, problems);
    };
    let NodeKind::Array(items) = &node.kind else {
        return (out, problems);
    };
    let not_composed = |range: Range<usize>, what: String| {
        Diagnostic::error(Code::Missing, vec!["defaults".to_owned()], what)
            .help("give the values it would set with --set KEY=VALUE")
            .at(range, "not composed")
    };
    for item in items {
        match &item.kind {
            NodeKind::String(s) if s == "_self_" => out.push(Choice::SelfEntry),
            NodeKind::String(s) if !s.contains("${") => out.push(Choice::Config {
                name: s.clone(),
                range: item.range.clone(),
            }),
            NodeKind::Table(entries) if entries.len() == 1 => {
                let e = &entries[0];
                let option = match &e.value.kind {
                    NodeKind::Null => None,
                    NodeKind::String(s) if !s.contains("${") => Some(s.clone()),
                    NodeKind::Integer(i) => Some(i.to_string()),
                    _ => {
                        problems.push(not_composed(
                            e.value.range.clone(),
                            format!("the defaults entry `{}` chooses a list of options or an interpolation, which accum does not compose", e.key),
                        ));
                        continue;
                    }
                };
                let mut words: Vec<&str> = e.key.split_whitespace().collect();
                let is_override = words.first() == Some(&"override");
                if is_override {
                    words.remove(0);
                }
                let optional = words.first() == Some(&"optional");
                if optional {
                    words.remove(0);
                }
                let [written] = words.as_slice() else {
                    problems.push(not_composed(
                        e.key_range.clone(),
                        format!("the defaults entry `{}` is not one accum reads", e.key),
                    ));
                    continue;
                };
                let (written, package) = match written.split_once('@') {
                    Some((g, p)) => (g.to_owned(), Some(p.to_owned())),
                    None => ((*written).to_owned(), None),
                };
                let key = match written.strip_prefix('/') {
                    Some(abs) => abs.to_owned(),
                    None if group.is_empty() => written.clone(),
                    None => format!("{group}/{written}"),
                };
                if is_override {
                    out.push(Choice::Override {
                        key,
                        option,
                        range: e.key_range.start..e.value.range.end,
                    });
                } else {
                    out.push(Choice::Group {
                        key,
                        written,
                        package,
                        option,
                        optional,
                        range: e.key_range.start..e.value.range.end,
                    });
                }
            }
            _ => problems.push(not_composed(
                item.range.clone(),
                "a defaults entry accum does not read".to_owned(),
            )),
        }
    }
    (out, problems)
}

fn join(package: &str, rest: &str) -> String {
    match (package.is_empty(), rest.is_empty()) {
        (true, _) => rest.to_owned(),
        (_, true) => package.to_owned(),
        _ => format!("{package}.{rest}"),
    }
}

/// A node with every range moved by `by`.
fn shifted(node: &Node, by: usize) -> Node {
    let kind = match &node.kind {
        NodeKind::Array(items) => NodeKind::Array(items.iter().map(|n| shifted(n, by)).collect()),
        NodeKind::Table(entries) => NodeKind::Table(
            entries
                .iter()
                .map(|e| Entry {
                    key: e.key.clone(),
                    key_range: e.key_range.start + by..e.key_range.end + by,
                    value: shifted(&e.value, by),
                })
                .collect(),
        ),
        other => other.clone(),
    };
    Node {
        range: node.range.start + by..node.range.end + by,
        kind,
    }
}

/// OmegaConf's merge: tables key by key, any other value (a list too)
/// replaced, except by `???`, a missing value, which keeps the one merged
/// into (`omegaconf/basecontainer.py`, `BaseContainer._map_merge`: "if src
/// node is missing, use the value from the dest_node"; `_list_merge`).
fn merge(into: &mut Node, from: Node) {
    match (&mut into.kind, from.kind) {
        (NodeKind::Table(entries), NodeKind::Table(new)) => {
            for e in new {
                match entries.iter_mut().find(|x| x.key == e.key) {
                    Some(x)
                        if matches!(x.value.kind, NodeKind::Table(_))
                            && matches!(e.value.kind, NodeKind::Table(_)) =>
                    {
                        merge(&mut x.value, e.value);
                    }
                    Some(_) if is_missing(&e.value) => {}
                    Some(x) => {
                        x.key_range = e.key_range;
                        x.value = e.value;
                    }
                    None => entries.push(e),
                }
            }
        }
        (_, kind) => {
            into.kind = kind;
            into.range = from.range;
        }
    }
}

/// OmegaConf's missing value, `???`.
fn is_missing(node: &Node) -> bool {
    matches!(&node.kind, NodeKind::String(s) if s == "???")
}

fn shift_finding(mut d: Diagnostic, by: usize) -> Diagnostic {
    d.location.map(|r| r.start + by..r.end + by);
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Document {
        Document::parse_with(
            "x.yaml".into(),
            text.into(),
            SourceFormat::Yaml,
            YamlLoader::OmegaConf,
        )
        .expect("YAML")
    }

    #[test]
    fn the_package_header_is_read_from_the_opening_comments_only() {
        assert_eq!(
            header_package("# @package _global_\ntrainer: {}\n").as_deref(),
            Some("_global_")
        );
        assert_eq!(
            header_package("\n# a comment\n#   @package model.data\nx: 1\n").as_deref(),
            Some("model.data")
        );
        assert_eq!(header_package("x: 1\n# @package _global_\n"), None);
    }

    #[test]
    fn each_form_of_entry_is_read_and_the_others_are_said() {
        let d = doc(
            "defaults:\n  - _self_\n  - default\n  - trainer: gpu\n  - /data: mnist\n  - optional local: default\n  - trainer/devices@trainer: eight\n  - logger: null\n  - override /model: big\n  - callbacks: [a, b]\n  - trainer: ${oc.env:T}\n  - a b c: x\n",
        );
        let (entries, problems) = defaults_of(&d, "experiment");
        let shown: Vec<String> = entries
            .iter()
            .map(|e| match e {
                Choice::SelfEntry => "self".to_owned(),
                Choice::Config { name, .. } => format!("config {name}"),
                Choice::Group {
                    key,
                    written,
                    package,
                    option,
                    optional,
                    ..
                } => format!("group {key} ({written}) {package:?} {option:?} {optional}"),
                Choice::Override { key, option, .. } => format!("override {key} {option:?}"),
            })
            .collect();
        assert_eq!(
            shown,
            vec![
                "self",
                "config default",
                "group experiment/trainer (trainer) None Some(\"gpu\") false",
                "group data (/data) None Some(\"mnist\") false",
                "group experiment/local (local) None Some(\"default\") true",
                "group experiment/trainer/devices (trainer/devices) Some(\"trainer\") Some(\"eight\") false",
                "group experiment/logger (logger) None None false",
                "override model Some(\"big\")",
            ]
        );
        let messages: Vec<&str> = problems
            .iter()
            .map(|p| p.finding.message.as_str())
            .collect();
        assert_eq!(
            messages,
            vec![
                "the defaults entry `callbacks` chooses a list of options or an interpolation, which accum does not compose",
                "the defaults entry `trainer` chooses a list of options or an interpolation, which accum does not compose",
                "the defaults entry `a b c` is not one accum reads",
            ]
        );
        assert!(problems.iter().all(|p| p.finding.code == Code::Missing
            && p.help_text() == Some("give the values it would set with --set KEY=VALUE")));
    }

    #[test]
    fn tables_merge_key_by_key_and_other_values_are_replaced() {
        let mut a = doc("trainer:\n  devices: 1\n  max_epochs: 3\ntags: [a]\n").root;
        let b = doc("trainer:\n  devices: 4\n  max_epochs: ???\ntags: [b, c]\n").root;
        merge(&mut a, b);
        let merged = Document::composed("m".into(), String::new(), a, Vec::new());
        let at = |p: &[&str]| {
            merged
                .node(&p.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>())
                .map(|n| n.kind.clone())
        };
        assert_eq!(at(&["trainer", "devices"]), Some(NodeKind::Integer(4)));
        assert_eq!(at(&["trainer", "max_epochs"]), Some(NodeKind::Integer(3)));
        assert!(matches!(at(&["tags"]), Some(NodeKind::Array(v)) if v.len() == 2));
    }
}
