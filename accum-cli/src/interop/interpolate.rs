//! OmegaConf's interpolations in the files of the dialects that load with
//! OmegaConf (NeMo, and Hydra's Lightning configs), for a value that is one
//! whole interpolation: `${model.micro_batch_size}` (absolute),
//! `${.micro_batch_size}` and `${..global_batch_size}` (relative: one dot is
//! the key's own section, each more dot one section up), and
//! `${oc.env:NAME}` or `${oc.env:NAME,default}`. OmegaConf resolves them on
//! access (`omegaconf/grammar_visitor.py`, `GrammarVisitor`; relative keys
//! in `omegaconf/base.py`, `Container._resolve_node_interpolation`), and
//! `oc.env` returns the environment's text, or `str(default)`
//! (`omegaconf/resolvers/oc/__init__.py`, `env`). Any other resolver
//! (`div_up`, `eval`, a repository's own) is not evaluated: the finding
//! quotes the expression and the `--set KEY=VALUE` that supplies its value.

use accum_core::Code;

use super::reader::owned;
use crate::diagnostic::Diagnostic;
use crate::source::{Document, Node, NodeKind};

/// What a reader resolves interpolations with.
#[derive(Clone, Debug, Default)]
pub(crate) struct Interpolation {
    /// `--env NAME=VALUE`: the job's environment, for `oc.env`.
    pub(crate) env: Vec<(String, String)>,
    /// `--set KEY=VALUE`: values of keys, as Hydra's overrides give them.
    pub(crate) set: Vec<(String, String)>,
}

/// How many interpolations one value may chain through.
const DEPTH: usize = 16;

/// The inside of a value that is one whole interpolation, `${…}`.
fn whole(text: &str) -> Option<&str> {
    text.trim().strip_prefix("${")?.strip_suffix('}')
}

/// A value resolved, and the warning to give with it (an assumption named).
pub(crate) struct Resolved {
    pub(crate) node: Node,
    pub(crate) note: Option<Diagnostic>,
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
    let span = node.span.clone();
    if let Some((_, value)) = interpolation.set.iter().rev().find(|(k, _)| *k == key) {
        return Ok(Resolved {
            node: Node {
                span,
                kind: NodeKind::String(value.clone()),
            },
            note: None,
        });
    }
    let mut at: Vec<String> = owned(path);
    let mut node = node;
    let mut note = None;
    for _ in 0..DEPTH {
        let NodeKind::String(text) = &node.kind else {
            return Ok(Resolved { node, note });
        };
        let Some(expr) = whole(text) else {
            return Ok(Resolved { node, note });
        };
        let expr = expr.trim().to_owned();
        if let Some(args) = expr.strip_prefix("oc.env:") {
            let (name, default) = match args.split_once(',') {
                Some((n, d)) => (n.trim(), Some(d.trim().trim_matches(['\'', '"']))),
                None => (args.trim(), None),
            };
            let value = interpolation
                .env
                .iter()
                .rev()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
                .or_else(|| default.map(str::to_owned));
            let Some(value) = value else {
                return Err(Box::new(Diagnostic::error(
                    Code::Missing,
                    owned(path),
                    format!("`{key}` is `${{{expr}}}`: the environment variable {name} is not given and has no default"),
                )
                .help(format!("give it: --env {name}=VALUE (or the key's value: --set {key}=VALUE)"))
                .at(span, "value from the environment")));
            };
            note = Some(
                Diagnostic::error(
                    Code::InteropValue,
                    owned(path),
                    format!(
                        "`{key}` is `${{{expr}}}`: OmegaConf gives the text \"{value}\", which accum reads as the value, as a consumer that converts it does"
                    ),
                )
                .warning()
                .help(format!("to state it, write the value, or give it: --set {key}={value}"))
                .at(span.clone(), "from the environment"),
            );
            node = Node {
                span: span.clone(),
                kind: NodeKind::String(value),
            };
            continue;
        }
        let target = if let Some(rest) = expr.strip_prefix('.') {
            // `${.x}`: the key's own section; each further dot, one up.
            let ups = rest.len() - rest.trim_start_matches('.').len();
            let rest = rest.trim_start_matches('.');
            let base = at.len().saturating_sub(1);
            if ups > base || rest.is_empty() {
                return Err(unresolved(&key, &expr, span));
            }
            let mut p: Vec<String> = at[..base - ups].to_vec();
            p.extend(rest.split('.').map(str::to_owned));
            p
        } else if expr
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.' || c == '-')
        {
            expr.split('.').map(str::to_owned).collect()
        } else {
            // A resolver (`div_up:…`, `eval:…`) or an expression.
            return Err(Box::new(Diagnostic::error(
                Code::Missing,
                owned(path),
                format!("`{key}` is `${{{expr}}}`, which OmegaConf computes with a resolver or an expression accum does not evaluate"),
            )
            .help(format!("give its value: --set {key}=VALUE"))
            .at(span, "not evaluated")));
        };
        let Some(found) = doc.node(&target) else {
            return Err(unresolved(&key, &expr, span));
        };
        node = Node {
            span: span.clone(),
            kind: found.kind.clone(),
        };
        at = target;
    }
    Err(Box::new(
        Diagnostic::error(
            Code::Limit,
            owned(path),
            format!("`{key}` chains through more than {DEPTH} interpolations, or refers to itself"),
        )
        .help(format!("write the value, or give it: --set {key}=VALUE"))
        .at(span, "interpolation not resolved"),
    ))
}

/// An interpolation to a key the file does not have.
fn unresolved(key: &str, expr: &str, span: std::ops::Range<usize>) -> Box<Diagnostic> {
    Box::new(Diagnostic::error(
        Code::Missing,
        accum_core::FieldPath::new(key.split('.')),
        format!("`{key}` is `${{{expr}}}`, a key this file does not have (another file of the config tree may set it)"),
    )
    .help(format!("give its value: --set {key}=VALUE"))
    .at(span, "interpolation not resolved"))
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
            .map_err(|f| format!("{} / {}", f.message, f.help.unwrap_or_default()))
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
            set: Vec::new(),
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
            Err("`trainer.accumulate_grad_batches` is `${div_up:${train.gbs},${train.mbs}}`, which OmegaConf computes with a resolver or an expression accum does not evaluate / give its value: --set trainer.accumulate_grad_batches=VALUE".into())
        );
        let set = Interpolation {
            env: Vec::new(),
            set: vec![("trainer.accumulate_grad_batches".into(), "4".into())],
        };
        assert_eq!(value(text, &at, &set), Ok(NodeKind::String("4".into())));
    }

    #[test]
    fn a_cycle_stops_at_the_limit() {
        let text = "a: ${b}\nb: ${a}\n";
        let err = value(text, &["a"], &Interpolation::default()).expect_err("a cycle");
        assert!(err.contains("refers to itself"), "{err}");
    }
}
