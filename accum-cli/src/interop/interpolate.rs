//! OmegaConf's interpolations in the files of the dialects that load with
//! OmegaConf (NeMo, and Hydra's Lightning configs), for a value that is one
//! whole interpolation: `${model.micro_batch_size}` (absolute),
//! `${.micro_batch_size}` and `${..global_batch_size}` (relative: one dot is
//! the key's own section, each more dot one section up), and
//! `${oc.env:NAME}` or `${oc.env:NAME,default}`. OmegaConf resolves them on
//! access (`omegaconf/grammar_visitor.py`, `GrammarVisitor`; relative keys
//! in `omegaconf/base.py`, `Container._resolve_node_interpolation`), and
//! `oc.env` returns the environment's text, or `str(default)`
//! (`omegaconf/resolvers/oc/__init__.py`, `env`). A resolver the
//! repository registers (`resolvers.rs`) is evaluated when accum
//! recognises its function: `eval` of arithmetic, and a ceiling division
//! (`div_up`), with a warning naming the registration. Any other resolver is
//! not evaluated: the finding quotes the expression and the `--set
//! KEY=VALUE` that supplies its value.
//!
//! A resolver's arguments are read as OmegaConf's grammar reads them
//! (`omegaconf/grammar/OmegaConfGrammarParser.g4`, `sequence` and
//! `element`; `OmegaConfGrammarLexer.g4`): blanks around a comma are
//! dropped; an argument that is one interpolation is its value, with its
//! type; one number token is a number; a quoted argument (`'${a}*${b}'`) is
//! a string with its interpolations replaced by their text; any other
//! argument is the concatenation of its parts as a string
//! (`grammar_visitor.py`, `GrammarVisitor._unescape`: `${a} * ${b}` becomes
//! `"4 * 8"`). Unquoted, only letters, digits, blanks, `_ - / \ + . $ % * @
//! ? | :` and interpolations may be written: `(` must be quoted or escaped
//! (`\(`), else OmegaConf's parser refuses the value.

use std::cell::OnceCell;
use std::ops::Range;
use std::path::PathBuf;

use accum_core::Code;

use super::reader::owned;
use super::resolvers::{Num, Registered, Semantics, eval_arithmetic};
use crate::diagnostic::Diagnostic;
use crate::source::{Document, Node, NodeKind};

/// What a reader resolves interpolations with.
#[derive(Clone, Debug, Default)]
pub(crate) struct Interpolation {
    /// `--env NAME=VALUE`: the job's environment, for `oc.env`.
    pub(crate) env: Vec<(String, String)>,
    /// `--set KEY=VALUE`: values of keys, as Hydra's overrides give them.
    pub(crate) set: Vec<(String, String)>,
    /// The repository whose Python files register resolvers (the read root
    /// of the imported file); scanned at the first resolver met.
    pub(crate) repository: Option<PathBuf>,
    /// The registrations found there.
    pub(crate) registered: OnceCell<Vec<Registered>>,
}

impl Interpolation {
    /// The variables and values given, and the imported file's repository.
    pub(crate) fn new(opts: &super::ImportOptions) -> Interpolation {
        Interpolation {
            env: opts.env.clone(),
            set: opts.set.clone(),
            repository: opts
                .origin
                .as_deref()
                .and_then(crate::source::named::repository_root),
            registered: OnceCell::new(),
        }
    }

    fn registered(&self) -> &[Registered] {
        self.registered.get_or_init(|| {
            self.repository
                .as_deref()
                .map(super::resolvers::scan)
                .unwrap_or_default()
        })
    }
}

/// How many interpolations one value may chain through.
const DEPTH: usize = 16;
/// How many interpolations and resolvers one value may evaluate in all.
const BUDGET: usize = 256;

/// The inside of a value that is one whole interpolation, `${…}`.
fn whole(text: &str) -> Option<&str> {
    let t = text.trim();
    let inner = t.strip_prefix("${")?;
    // The `}` that closes the first `${` must be the last character.
    (closing(inner)? + 1 == inner.len()).then(|| &inner[..inner.len() - 1])
}

/// Where the `}` that closes an opened `${` (or `{`) is in `after`, the
/// text after it; braces inside nest.
fn closing(after: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in after.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return Some(i),
            '}' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// A value resolved, and the warnings to give with it (assumptions named).
pub(crate) struct Resolved {
    pub(crate) node: Node,
    pub(crate) notes: Vec<Diagnostic>,
    /// The keys the value was computed from (read, for the census).
    pub(crate) read: Vec<Vec<String>>,
}

/// Why a value is not resolved.
enum Fail {
    /// A finding, complete.
    Finding(Box<Diagnostic>),
    /// A resolver or an expression accum does not evaluate, and why.
    NotEvaluated(String),
}

/// One value's resolution: what the findings need.
struct Resolution<'a> {
    doc: &'a Document,
    interpolation: &'a Interpolation,
    /// The key whose value is resolved, and the expression it holds.
    key: String,
    path: Vec<String>,
    range: Range<usize>,
    steps: usize,
    /// The assumptions made, in words, for the warning.
    assumed: Vec<String>,
    /// Warnings of `oc.env`.
    notes: Vec<Diagnostic>,
    /// The keys interpolated.
    read: Vec<Vec<String>>,
}

/// The value at `path` (`node`) with its interpolations resolved; the
/// finding when one cannot be.
pub(crate) fn resolve(
    doc: &Document,
    interpolation: &Interpolation,
    path: &[&str],
    node: Node,
) -> Result<Resolved, Box<Diagnostic>> {
    let key = path.join(".");
    let range = node.range.clone();
    if let Some((_, value)) = interpolation.set.iter().rev().find(|(k, _)| *k == key) {
        return Ok(Resolved {
            node: Node {
                range,
                kind: NodeKind::String(value.clone()),
            },
            notes: Vec::new(),
            read: Vec::new(),
        });
    }
    let written = match &node.kind {
        NodeKind::String(text) if whole(text).is_some() => text.trim().to_owned(),
        _ => {
            return Ok(Resolved {
                node,
                notes: Vec::new(),
                read: Vec::new(),
            });
        }
    };
    let mut r = Resolution {
        doc,
        interpolation,
        key: key.clone(),
        path: owned(path),
        range: range.clone(),
        steps: 0,
        assumed: Vec::new(),
        notes: Vec::new(),
        read: Vec::new(),
    };
    let at = owned(path);
    match r.value(&at, node.kind, 0) {
        Ok(kind) => {
            let mut notes = std::mem::take(&mut r.notes);
            if !r.assumed.is_empty() {
                let shown = python_text(&kind);
                notes.push(
                    Diagnostic::error(
                        Code::InteropValue,
                        owned(path),
                        format!(
                            "`{key}` is `{written}`, which accum computes as {shown}: {}",
                            r.assumed.join("; ")
                        ),
                    )
                    .warning()
                    .help(format!(
                        "to state it, write the value, or give it: --set {key}={shown}"
                    ))
                    .at(range.clone(), format!("computed as {shown}")),
                );
            }
            Ok(Resolved {
                node: Node { range, kind },
                notes,
                read: r.read,
            })
        }
        Err(Fail::Finding(f)) => Err(f),
        Err(Fail::NotEvaluated(reason)) => Err(Box::new(
            Diagnostic::error(
                Code::Missing,
                owned(path),
                format!("`{key}` is `{written}`, which OmegaConf computes with a resolver or an expression accum does not evaluate: {reason}"),
            )
            .help(format!("give its value: --set {key}=VALUE"))
            .at(range, "not evaluated"),
        )),
    }
}

impl Resolution<'_> {
    fn limit(&self) -> Fail {
        let key = &self.key;
        Fail::Finding(Box::new(
            Diagnostic::error(
                Code::Limit,
                self.path.clone(),
                format!(
                    "`{key}` chains through more than {DEPTH} interpolations, or refers to itself"
                ),
            )
            .help(format!("write the value, or give it: --set {key}=VALUE"))
            .at(self.range.clone(), "interpolation not resolved"),
        ))
    }

    /// A value, its interpolation resolved when it is one.
    fn value(&mut self, at: &[String], kind: NodeKind, depth: usize) -> Result<NodeKind, Fail> {
        let NodeKind::String(text) = &kind else {
            return Ok(kind);
        };
        let Some(expr) = whole(text) else {
            return Ok(kind);
        };
        let expr = expr.trim().to_owned();
        self.interpolation(at, &expr, depth + 1)
    }

    /// The value of `${expr}` written in the value at `at`.
    fn interpolation(&mut self, at: &[String], expr: &str, depth: usize) -> Result<NodeKind, Fail> {
        self.steps += 1;
        if depth > DEPTH || self.steps > BUDGET {
            return Err(self.limit());
        }
        let key = self.key.clone();
        if let Some(args) = expr.strip_prefix("oc.env:") {
            let (name, default) = match args.split_once(',') {
                Some((n, d)) => (n.trim(), Some(d.trim().trim_matches(['\'', '"']))),
                None => (args.trim(), None),
            };
            let value = self
                .interpolation
                .env
                .iter()
                .rev()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
                .or_else(|| default.map(str::to_owned));
            let Some(value) = value else {
                return Err(Fail::Finding(Box::new(Diagnostic::error(
                    Code::Missing,
                    self.path.clone(),
                    format!("`{key}` is `${{{expr}}}`: the environment variable {name} is not given and has no default"),
                )
                .help(format!("give it: --env {name}=VALUE (or the key's value: --set {key}=VALUE)"))
                .at(self.range.clone(), "value from the environment"))));
            };
            self.notes.push(
                Diagnostic::error(
                    Code::InteropValue,
                    self.path.clone(),
                    format!(
                        "`{key}` is `${{{expr}}}`: OmegaConf gives the text \"{value}\", which accum reads as the value, as a consumer that converts it does"
                    ),
                )
                .warning()
                .help(format!("to state it, write the value, or give it: --set {key}={value}"))
                .at(self.range.clone(), "from the environment"),
            );
            return self.value(at, NodeKind::String(value), depth);
        }
        let target: Vec<String> = if let Some(rest) = expr.strip_prefix('.') {
            // `${.x}`: the key's own section; each further dot, one up.
            let ups = rest.len() - rest.trim_start_matches('.').len();
            let rest = rest.trim_start_matches('.');
            let base = at.len().saturating_sub(1);
            if ups > base || rest.is_empty() {
                return Err(self.unresolved(expr));
            }
            let mut p: Vec<String> = at[..base - ups].to_vec();
            p.extend(rest.split('.').map(str::to_owned));
            p
        } else if expr
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.' || c == '-')
        {
            expr.split('.').map(str::to_owned).collect()
        } else if let Some((name, args)) = resolver_call(expr) {
            return self.resolver(at, name, args, depth);
        } else {
            return Err(Fail::NotEvaluated(format!(
                "`${{{expr}}}` is not a key or a resolver OmegaConf's grammar reads"
            )));
        };
        let Some(found) = self.doc.node(&target) else {
            return Err(self.unresolved(expr));
        };
        let kind = found.kind.clone();
        self.read.push(target.clone());
        self.value(&target, kind, depth)
    }

    /// An interpolation to a key the file does not have.
    fn unresolved(&self, expr: &str) -> Fail {
        Fail::Finding(unresolved(&self.key, expr, self.range.clone()))
    }

    /// A registered resolver, evaluated when accum recognises it.
    fn resolver(
        &mut self,
        at: &[String],
        name: &str,
        args: &str,
        depth: usize,
    ) -> Result<NodeKind, Fail> {
        let registered: Vec<Registered> = self
            .interpolation
            .registered()
            .iter()
            .filter(|r| r.name == name)
            .cloned()
            .collect();
        if name.starts_with("oc.") {
            // OmegaConf's own (`omegaconf/resolvers/oc/__init__.py`); only
            // `oc.env` is read.
            return Err(Fail::NotEvaluated(format!(
                "`{name}` is one of OmegaConf's own resolvers, which accum does not evaluate"
            )));
        }
        let Some(first) = registered.first() else {
            return Err(Fail::NotEvaluated(format!(
                "no Python file of the repository registers the resolver `{name}` (`OmegaConf.register_new_resolver(\"{name}\", …)`)"
            )));
        };
        if let Some(other) = registered.iter().find(|r| r.semantics != first.semantics) {
            return Err(Fail::NotEvaluated(format!(
                "`{name}` is registered differently in {} and {}",
                first.at, other.at
            )));
        }
        let values = self.arguments(at, args, depth)?;
        match &first.semantics {
            Semantics::Other(function) => Err(Fail::NotEvaluated(format!(
                "`{name}` is registered in {} as `{function}`, which accum does not evaluate",
                first.at
            ))),
            Semantics::CeilDiv(written) => {
                let [NodeKind::Integer(a), NodeKind::Integer(b)] = values.as_slice() else {
                    return Err(Fail::NotEvaluated(format!(
                        "`{name}` ({written}) takes two integers here, not {}",
                        described(&values)
                    )));
                };
                if *b <= 0 {
                    return Err(Fail::NotEvaluated(format!(
                        "`{name}` divides by {b}, not a count above 0"
                    )));
                }
                let Some(value) = a.checked_add(b - 1).map(|s| s.div_euclid(*b)) else {
                    return Err(Fail::NotEvaluated(format!("`{name}` overflows")));
                };
                self.assumed.push(format!(
                    "`{name}` of {a} and {b} read as ceiling division {written}, as registered in {}",
                    first.at
                ));
                Ok(NodeKind::Integer(value))
            }
            Semantics::Eval => {
                let [NodeKind::String(text)] = values.as_slice() else {
                    return Err(Fail::NotEvaluated(format!(
                        "Python's `eval` takes one string, not {} (quote the expression: `${{{name}:'…'}}`)",
                        described(&values)
                    )));
                };
                let value = eval_arithmetic(text).map_err(|reason| {
                    Fail::NotEvaluated(format!(
                        "accum evaluates only arithmetic with `{name}` (as registered in {}), and {reason}",
                        first.at
                    ))
                })?;
                self.assumed.push(format!(
                    "`{name}` read as Python's eval of the arithmetic `{}`, as registered in {}",
                    text.trim(),
                    first.at
                ));
                Ok(match value {
                    Num::Int(i) => NodeKind::Integer(i),
                    Num::Float(f) => NodeKind::Float(f),
                })
            }
        }
    }

    /// A resolver's arguments, as OmegaConf's grammar reads them.
    fn arguments(
        &mut self,
        at: &[String],
        args: &str,
        depth: usize,
    ) -> Result<Vec<NodeKind>, Fail> {
        let mut out = Vec::new();
        for arg in split_arguments(args)? {
            out.push(self.argument(at, arg.trim_matches([' ', '\t']), depth)?);
        }
        Ok(out)
    }

    fn argument(&mut self, at: &[String], arg: &str, depth: usize) -> Result<NodeKind, Fail> {
        // One interpolation: its value, with its type.
        if let Some(inner) = whole(arg)
            && arg.starts_with("${")
        {
            return self.interpolation(at, inner.trim(), depth + 1);
        }
        // Quoted: a string, interpolations replaced by their text.
        for quote in ['\'', '"'] {
            if let Some(inner) = arg.strip_prefix(quote).and_then(|a| a.strip_suffix(quote)) {
                if inner.contains(['\\', quote]) {
                    return Err(Fail::NotEvaluated(format!(
                        "accum does not read escapes in a quoted argument: {arg}"
                    )));
                }
                return self.text(at, inner, depth).map(NodeKind::String);
            }
        }
        // One number token (`INT`, `FLOAT` of the lexer).
        if let Some(n) = number_token(arg) {
            return Ok(n);
        }
        // Anything else: the concatenation, as a string. Unquoted, the
        // lexer takes only these characters (`UNQUOTED_CHAR`, `ID`, `WS`,
        // `ESC`, `COLON`).
        let mut plain = String::new();
        let mut rest = arg;
        while let Some(c) = rest.chars().next() {
            if rest.starts_with("${") {
                let end = closing(&rest[2..]).ok_or_else(|| {
                    Fail::NotEvaluated(format!("`{arg}` holds an interpolation that is not closed"))
                })?;
                plain.push_str(&rest[..end + 3]);
                rest = &rest[end + 3..];
                continue;
            }
            // The lexer's `ESC`: `\(` is `(`.
            if c == '\\'
                && let Some(e @ ('(' | ')' | '[' | ']' | '{' | '}' | ':' | '=' | ',' | ' ' | '\\')) =
                    rest[1..].chars().next()
            {
                plain.push(e);
                rest = &rest[1 + e.len_utf8()..];
                continue;
            }
            let allowed = c.is_ascii_alphanumeric()
                || matches!(
                    c,
                    '_' | '-'
                        | '/'
                        | '\\'
                        | '+'
                        | '.'
                        | '$'
                        | '%'
                        | '*'
                        | '@'
                        | '?'
                        | '|'
                        | ':'
                        | ' '
                        | '\t'
                );
            if !allowed {
                return Err(Fail::NotEvaluated(format!(
                    "OmegaConf's grammar does not take `{c}` unquoted in a resolver's argument, so OmegaConf refuses the value (quote the expression: '…')"
                )));
            }
            plain.push(c);
            rest = &rest[c.len_utf8()..];
        }
        self.text(at, &plain, depth).map(NodeKind::String)
    }

    /// Text with its interpolations replaced by the text of their values
    /// (Python's `str`).
    fn text(&mut self, at: &[String], text: &str, depth: usize) -> Result<String, Fail> {
        let mut out = String::new();
        let mut rest = text;
        while let Some(i) = rest.find("${") {
            out.push_str(&rest[..i]);
            let after = &rest[i + 2..];
            let end = closing(after).ok_or_else(|| {
                Fail::NotEvaluated(format!(
                    "`{text}` holds an interpolation that is not closed"
                ))
            })?;
            let value = self.interpolation(at, after[..end].trim(), depth + 1)?;
            match value {
                NodeKind::Table(_) | NodeKind::Array(_) => {
                    return Err(Fail::NotEvaluated(format!(
                        "`${{{}}}` is a {}, not a value to write in text",
                        after[..end].trim(),
                        value.type_name()
                    )));
                }
                v => out.push_str(&python_text(&v)),
            }
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

/// `name:args` of a resolver: a dotted name of identifiers.
fn resolver_call(expr: &str) -> Option<(&str, &str)> {
    let (name, args) = expr.split_once(':')?;
    let name = name.trim();
    let ident = |s: &str| {
        s.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    name.split('.').all(ident).then_some((name, args))
}

/// The arguments of a resolver, split at the commas outside
/// interpolations, brackets and quotes.
fn split_arguments(args: &str) -> Result<Vec<&str>, Fail> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut start = 0;
    for (i, c) in args.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '{' | '[') => depth += 1,
            (None, '}' | ']') => depth = depth.saturating_sub(1),
            (None, ',') if depth == 0 => {
                out.push(&args[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if quote.is_some() {
        return Err(Fail::NotEvaluated("a quote is not closed".into()));
    }
    out.push(&args[start..]);
    Ok(out)
}

/// A lexer `INT` or `FLOAT` token: `8`, `-3`, `1_000`, `2.5`, `1e-3`.
fn number_token(arg: &str) -> Option<NodeKind> {
    let (negative, digits) = match arg.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, arg.strip_prefix('+').unwrap_or(arg)),
    };
    Some(match super::resolvers::literal(digits)? {
        Num::Int(i) => NodeKind::Integer(if negative { -i } else { i }),
        Num::Float(f) => NodeKind::Float(if negative { -f } else { f }),
    })
}

/// A value as Python's `str` writes it (`8.0` for a float, `True`).
fn python_text(kind: &NodeKind) -> String {
    match kind {
        NodeKind::Null => "None".into(),
        NodeKind::Bool(true) => "True".into(),
        NodeKind::Bool(false) => "False".into(),
        NodeKind::Integer(i) => i.to_string(),
        NodeKind::Float(f) => format!("{f:?}"),
        NodeKind::String(s) => s.clone(),
        other => other.type_name().to_owned(),
    }
}

/// The arguments' types, for a message.
fn described(values: &[NodeKind]) -> String {
    let types: Vec<String> = values
        .iter()
        .map(|v| match v {
            NodeKind::String(s) => format!("the string \"{s}\""),
            other => format!("{} {}", other.type_name(), python_text(other)),
        })
        .collect();
    if types.is_empty() {
        "no argument".into()
    } else {
        types.join(" and ")
    }
}

/// An interpolation to a key the file does not have.
fn unresolved(key: &str, expr: &str, range: Range<usize>) -> Box<Diagnostic> {
    Box::new(Diagnostic::error(
        Code::Missing,
        accum_core::FieldPath::new(key.split('.')),
        format!("`{key}` is `${{{expr}}}`, a key this file does not have (another file of the config tree may set it)"),
    )
    .help(format!("give its value: --set {key}=VALUE"))
    .at(range, "interpolation not resolved"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{SourceFormat, YamlLoader};

    fn doc(text: &str) -> Document {
        Document::parse_with(
            "f.yaml".into(),
            text.into(),
            SourceFormat::Yaml,
            YamlLoader::OmegaConf,
        )
        .expect("YAML")
    }

    fn value(text: &str, path: &[&str], i: &Interpolation) -> Result<NodeKind, String> {
        let d = doc(text);
        let node = d.node(&owned(path)).expect("the key").clone();
        resolve(&d, i, path, node)
            .map(|r| r.node.kind)
            .map_err(|f| {
                format!(
                    "{} / {}",
                    f.finding.message,
                    f.help_text().unwrap_or_default()
                )
            })
    }

    #[test]
    fn absolute_and_relative_interpolations_resolve_as_omegaconf_does() {
        let text = "model:\n  micro_batch_size: 4\n  data:\n    train_ds:\n      micro_batch_size: ${model.micro_batch_size}\n      global_batch_size: ${..gbs}\n      m: ${.micro_batch_size}\n    gbs: 64\n";
        let i = Interpolation::default();
        let at = ["model", "data", "train_ds", "micro_batch_size"];
        assert_eq!(value(text, &at, &i), Ok(NodeKind::Integer(4)));
        let at = ["model", "data", "train_ds", "global_batch_size"];
        assert_eq!(value(text, &at, &i), Ok(NodeKind::Integer(64)));
        // Relative, then absolute, in a chain.
        let at = ["model", "data", "train_ds", "m"];
        assert_eq!(value(text, &at, &i), Ok(NodeKind::Integer(4)));
    }

    #[test]
    fn oc_env_takes_the_given_variable_or_the_default_as_text() {
        let text = "trainer:\n  devices: ${oc.env:GPUS,8}\n  num_nodes: ${oc.env:NODES}\n";
        let none = Interpolation::default();
        assert_eq!(
            value(text, &["trainer", "devices"], &none),
            Ok(NodeKind::String("8".into()))
        );
        let given = Interpolation {
            env: vec![("GPUS".into(), "4".into()), ("NODES".into(), "2".into())],
            ..Interpolation::default()
        };
        assert_eq!(
            value(text, &["trainer", "devices"], &given),
            Ok(NodeKind::String("4".into()))
        );
        assert_eq!(
            value(text, &["trainer", "num_nodes"], &none),
            Err("`trainer.num_nodes` is `${oc.env:NODES}`: the environment variable NODES is not given and has no default / give it: --env NODES=VALUE (or the key's value: --set trainer.num_nodes=VALUE)".into())
        );
    }

    #[test]
    fn a_resolver_is_refused_with_the_expression_and_the_flag_unless_set() {
        let text = "trainer:\n  accumulate_grad_batches: ${div_up:${train.gbs},${train.mbs}}\n";
        let at = ["trainer", "accumulate_grad_batches"];
        assert_eq!(
            value(text, &at, &Interpolation::default()),
            Err("`trainer.accumulate_grad_batches` is `${div_up:${train.gbs},${train.mbs}}`, which OmegaConf computes with a resolver or an expression accum does not evaluate: no Python file of the repository registers the resolver `div_up` (`OmegaConf.register_new_resolver(\"div_up\", …)`) / give its value: --set trainer.accumulate_grad_batches=VALUE".into())
        );
        let set = Interpolation {
            set: vec![("trainer.accumulate_grad_batches".into(), "4".into())],
            ..Interpolation::default()
        };
        assert_eq!(value(text, &at, &set), Ok(NodeKind::String("4".into())));
    }

    /// The resolvers of HazyResearch/safari's `train.py`, registered at
    /// lines 35 and 36.
    fn registered(extra: &str) -> Interpolation {
        let text = format!(
            "OmegaConf.register_new_resolver('eval', eval)\nOmegaConf.register_new_resolver('div_up', lambda x, y: (x + y - 1) // y)\n{extra}"
        );
        Interpolation {
            registered: OnceCell::from(crate::interop::resolvers::registrations("train.py", &text)),
            ..Interpolation::default()
        }
    }

    fn resolved(
        text: &str,
        path: &[&str],
        i: &Interpolation,
    ) -> Result<(NodeKind, Vec<String>), String> {
        let d = doc(text);
        let node = d.node(&owned(path)).expect("the key").clone();
        resolve(&d, i, path, node)
            .map(|r| {
                (
                    r.node.kind,
                    r.notes.into_iter().map(|n| n.finding.message).collect(),
                )
            })
            .map_err(|f| {
                format!(
                    "{} / {}",
                    f.finding.message,
                    f.help_text().unwrap_or_default()
                )
            })
    }

    #[test]
    fn registered_resolvers_are_evaluated_with_the_assumption_named() {
        let text = "train:\n  global_batch_size: 512\ndata:\n  batch_size: 24\ntrainer:\n  devices: 8\n  a: ${div_up:${train.global_batch_size}, ${eval:'${data.batch_size} * ${.devices}'}}\n  b: ${eval:${train.global_batch_size} // ${.devices} // ${data.batch_size}}\n  c: ${eval:'(${train.global_batch_size} + 1) // 2 ** 3'}\n  d: ${eval:'${train.global_batch_size} / 64'}\n  e: ${.b}\n";
        let i = registered("");
        let (a, notes) = resolved(text, &["trainer", "a"], &i).expect("evaluated");
        // ⌈512 / 192⌉
        assert_eq!(a, NodeKind::Integer(3));
        assert_eq!(notes, vec!["`trainer.a` is `${div_up:${train.global_batch_size}, ${eval:'${data.batch_size} * ${.devices}'}}`, which accum computes as 3: `eval` read as Python's eval of the arithmetic `24 * 8`, as registered in train.py:1; `div_up` of 512 and 192 read as ceiling division (x + y - 1) // y, as registered in train.py:2".to_owned()]);
        assert_eq!(
            resolved(text, &["trainer", "b"], &i).map(|r| r.0),
            Ok(NodeKind::Integer(2))
        );
        assert_eq!(
            resolved(text, &["trainer", "c"], &i).map(|r| r.0),
            Ok(NodeKind::Integer(64))
        );
        // True division gives a float, as Python's.
        let (d, notes) = resolved(text, &["trainer", "d"], &i).expect("evaluated");
        assert_eq!(d, NodeKind::Float(8.0));
        assert!(
            notes[0].contains("which accum computes as 8.0"),
            "{notes:?}"
        );
        // Through a plain interpolation, relative to the key that holds it.
        assert_eq!(
            resolved(text, &["trainer", "e"], &i).map(|r| r.0),
            Ok(NodeKind::Integer(2))
        );
    }

    #[test]
    fn what_is_not_arithmetic_or_not_recognised_is_refused_with_the_flag() {
        let text = "n: 8\nnames: ${eval:'int(${n} / 3)'}\nparen: ${eval:(${n}+1)//2}\nescaped: ${eval:\\(${n}+1\\)//2}\nmul: ${mul:${n},2}\ncustom: ${times:${n},2}\nint_arg: ${eval:${n}}\nstr_div: ${div_up:'8',2}\nzero: ${div_up:${n},0}\n";
        let i = registered("OmegaConf.register_new_resolver('mul', lambda a, b: a * b)\n");
        let refused = |key: &str| resolved(text, &[key], &i).expect_err(key);
        assert!(refused("names").contains("accum evaluates only arithmetic with `eval` (as registered in train.py:1), and `int(8` is not arithmetic"), "{}", refused("names"));
        assert!(
            refused("paren").contains("does not take `(` unquoted"),
            "{}",
            refused("paren")
        );
        // Escaped parentheses are OmegaConf's own spelling.
        assert_eq!(
            resolved(text, &["escaped"], &i).map(|r| r.0),
            Ok(NodeKind::Integer(4))
        );
        assert!(refused("mul").contains("`mul` is registered in train.py:3 as `lambda a, b: a * b`, which accum does not evaluate"), "{}", refused("mul"));
        assert!(
            refused("custom")
                .contains("no Python file of the repository registers the resolver `times`"),
            "{}",
            refused("custom")
        );
        assert!(
            refused("int_arg").contains("Python's `eval` takes one string, not integer 8"),
            "{}",
            refused("int_arg")
        );
        assert!(
            refused("str_div")
                .contains("takes two integers here, not the string \"8\" and integer 2"),
            "{}",
            refused("str_div")
        );
        assert!(
            refused("zero").contains("divides by 0"),
            "{}",
            refused("zero")
        );
        let text = "d: ${oc.decode:'8'}\n";
        let err = resolved(text, &["d"], &i).expect_err("not evaluated");
        assert!(
            err.contains(
                "`oc.decode` is one of OmegaConf's own resolvers, which accum does not evaluate"
            ),
            "{err}"
        );
        for key in [
            "names", "paren", "mul", "custom", "int_arg", "str_div", "zero",
        ] {
            assert!(
                refused(key).ends_with(&format!("/ give its value: --set {key}=VALUE")),
                "{key}"
            );
        }
    }

    #[test]
    fn two_registrations_that_differ_are_not_guessed_between() {
        let text = "a: ${div_up:7,2}\n";
        let i = registered("OmegaConf.register_new_resolver('div_up', lambda x, y: x // y)\n");
        let err = resolved(text, &["a"], &i).expect_err("ambiguous");
        assert!(
            err.contains("`div_up` is registered differently in train.py:2 and train.py:3"),
            "{err}"
        );
    }

    #[test]
    fn a_cycle_stops_at_the_limit() {
        let text = "a: ${b}\nb: ${a}\n";
        let err = value(text, &["a"], &Interpolation::default()).expect_err("a cycle");
        assert!(err.contains("refers to itself"), "{err}");
        // A cycle through a resolver's argument too.
        let text = "a: ${eval:'${b} + 1'}\nb: ${eval:'${a} + 1'}\n";
        let err = value(text, &["a"], &registered("")).expect_err("a cycle");
        assert!(err.contains("refers to itself"), "{err}");
        // Many branches stop at the budget, not after 2^16 steps.
        let mut text = String::from("x0: 1\n");
        for k in 1..40 {
            text.push_str(&format!(
                "x{k}: ${{eval:'${{x{}}} + ${{x{}}}'}}\n",
                k - 1,
                k - 1
            ));
        }
        let err = value(&text, &["x39"], &registered("")).expect_err("the budget");
        assert!(err.contains("chains through more than"), "{err}");
    }
}
