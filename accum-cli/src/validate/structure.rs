//! Structural diagnostics: what the JSON Schema validator found, said in
//! the project's words — the allowed values with a did-you-mean, the types
//! a place takes, the known keys of a table — never the validator's own.

use jsonschema::ValidationError;
use jsonschema::error::{TypeKind, ValidationErrorKind as Kind};
use serde_json::Value;

use super::map::{
    Expected, MAX_SCHEMA_DEPTH, allows, alternatives, describe, schemas_at, type_words, value_words,
};
use crate::cli::bin_name;
use crate::diagnostic::{Diagnostic, dotted};
use crate::source::{Document, Node, NodeKind};
use crate::suggest::{did_you_mean, or_list, section_name, unknown_key_help};

/// The diagnostics of one validator error (an unknown-keys error gives one
/// per key, each with its own suggestion).
pub(super) fn schema_diagnostics(
    doc: &Document,
    schema: &Value,
    error: &ValidationError<'_>,
) -> Vec<Diagnostic> {
    let path = super::pointer_segments(error.instance_path().as_str());
    let kind = error.kind();
    let instance: &Value = error.instance();
    if let Kind::AnyOf { context } | Kind::OneOfNotValid { context } = kind
        && let Some(errors) = matching_alternative(context, error.instance_path().as_str())
    {
        // The value has the type of one alternative (a table where a table
        // or nothing goes): what is wrong is inside it.
        return errors
            .iter()
            .flat_map(|inner| schema_diagnostics(doc, schema, inner))
            .collect();
    }
    let at = dotted(&path);
    let span = doc.span_for(&path);
    let expected = Expected::of(&schemas_at(schema, &path));
    let diagnostic = match kind {
        Kind::AdditionalProperties { unexpected } | Kind::UnevaluatedProperties { unexpected } => {
            return unexpected
                .iter()
                .map(|key| unknown_key(doc, &path, key, &expected.keys))
                .collect();
        }
        Kind::Required { property } => {
            let key = value_words(property);
            let mut key_path = path.clone();
            key_path.push(key.clone());
            Diagnostic::error(
                "accum::schema::missing-key",
                key_path,
                format!("missing key `{key}` in {}", section_name(&path)),
            )
            .at(span, "")
            .help(format!(
                "add `{key}` to {}; `{} schema` describes it",
                section_name(&path),
                bin_name()
            ))
        }
        Kind::Enum { .. }
        | Kind::Constant { .. }
        | Kind::OneOfNotValid { .. }
        | Kind::AnyOf { .. }
            if !expected.values.is_empty() =>
        {
            choice(path, instance, &expected).at(span, "")
        }
        Kind::Type { .. } if !expected.values.is_empty() => {
            choice(path, instance, &expected).at(span, "")
        }
        Kind::Type { kind } => {
            let types = if expected.types.is_empty() {
                type_kind_words(kind)
            } else {
                expected.types_words()
            };
            Diagnostic::error(
                "accum::schema::type",
                path,
                format!(
                    "`{at}` must be {}, found {}",
                    or_list(&types),
                    describe(instance)
                ),
            )
            .at(span, "")
        }
        Kind::OneOfNotValid { .. } | Kind::AnyOf { .. } if !expected.types.is_empty() => {
            Diagnostic::error(
                "accum::schema::type",
                path,
                format!(
                    "`{at}` must be {}, found {}",
                    or_list(&expected.types_words()),
                    describe(instance)
                ),
            )
            .at(span, "")
        }
        Kind::Minimum { limit } | Kind::ExclusiveMinimum { limit } => {
            let least = match kind {
                Kind::ExclusiveMinimum { .. } => match limit.as_u64() {
                    Some(l) => (l + 1).to_string(),
                    None => format!("more than {limit}"),
                },
                _ => limit.to_string(),
            };
            if instance.as_u64() == Some(0) && is_role(schema, &path) {
                Diagnostic::error(
                    "accum::plan::zero",
                    path,
                    format!("`{at}` is 0, but every factor of B = m·A·D must be at least 1"),
                )
                .at(span, "")
                .help(format!("set `{at}` to 1 or more"))
            } else {
                Diagnostic::error(
                    "accum::schema::range",
                    path,
                    format!(
                        "`{at}` must be at least {least}, found {}",
                        describe(instance)
                    ),
                )
                .at(span, "")
            }
        }
        Kind::Maximum { limit } | Kind::ExclusiveMaximum { limit } => Diagnostic::error(
            "accum::schema::range",
            path,
            format!(
                "`{at}` must be at most {limit}, found {}",
                describe(instance)
            ),
        )
        .at(span, ""),
        Kind::MinLength { limit } => {
            limit_words(path, instance, "at least", *limit, "character").at(span, "")
        }
        Kind::MaxLength { limit } => {
            limit_words(path, instance, "at most", *limit, "character").at(span, "")
        }
        Kind::MinItems { limit } => {
            limit_words(path, instance, "at least", *limit, "item").at(span, "")
        }
        Kind::MaxItems { limit } => {
            limit_words(path, instance, "at most", *limit, "item").at(span, "")
        }
        Kind::MinProperties { limit } => {
            limit_words(path, instance, "at least", *limit, "key").at(span, "")
        }
        Kind::MaxProperties { limit } => {
            limit_words(path, instance, "at most", *limit, "key").at(span, "")
        }
        Kind::Pattern { pattern } => Diagnostic::error(
            "accum::schema",
            path,
            format!(
                "`{at}` must match the pattern `{pattern}`, found {}",
                describe(instance)
            ),
        )
        .at(span, ""),
        Kind::Format { format } => Diagnostic::error(
            "accum::schema",
            path,
            format!(
                "`{at}` must be in the format `{format}`, found {}",
                describe(instance)
            ),
        )
        .at(span, ""),
        Kind::MultipleOf { multiple_of } => Diagnostic::error(
            "accum::schema::range",
            path,
            format!(
                "`{at}` must be a multiple of {multiple_of}, found {}",
                describe(instance)
            ),
        )
        .at(span, ""),
        Kind::UniqueItems => Diagnostic::error(
            "accum::schema",
            path,
            format!("`{at}` must not repeat an item"),
        )
        .at(span, ""),
        _ => {
            let wanted = if expected.types.is_empty() {
                String::new()
            } else {
                format!("; it takes {}", or_list(&expected.types_words()))
            };
            Diagnostic::error(
                "accum::schema",
                path,
                format!("`{at}` does not have the form the schema describes{wanted}"),
            )
            .at(span, "")
            .help(format!("`{} schema` describes `{at}`", bin_name()))
        }
    };
    vec![diagnostic]
}

/// The errors of the alternative of an `anyOf`/`oneOf` whose type the
/// value has (no type error at the value itself), when there is one.
fn matching_alternative<'e>(
    context: &'e [Vec<ValidationError<'static>>],
    at: &str,
) -> Option<&'e [ValidationError<'static>]> {
    context
        .iter()
        .filter(|errors| {
            !errors.is_empty()
                && !errors.iter().any(|e| {
                    e.instance_path().as_str() == at
                        && matches!(
                            e.kind(),
                            Kind::Type { .. } | Kind::Constant { .. } | Kind::Enum { .. }
                        )
                })
        })
        .min_by_key(|errors| errors.len())
        .map(Vec::as_slice)
}

/// An unknown key, with the known key it most likely means.
fn unknown_key(doc: &Document, path: &[String], key: &str, known: &[String]) -> Diagnostic {
    let mut key_path = path.to_vec();
    key_path.push(key.to_owned());
    let span = doc
        .key_span(&key_path)
        .unwrap_or_else(|| doc.span_for(path));
    let section = section_name(path);
    let help = unknown_key_help(key, known.iter().map(String::as_str), &section);
    Diagnostic::error(
        "accum::schema::unknown-key",
        key_path,
        format!("unknown key `{key}` in {section}"),
    )
    .at(span, "")
    .help(help)
}

/// A value outside a choice: the allowed values, and the nearest one.
fn choice(path: Vec<String>, instance: &Value, expected: &Expected) -> Diagnostic {
    let at = dotted(&path);
    let values = expected.values_words();
    let mut diagnostic = Diagnostic::error(
        "accum::schema::enum",
        path,
        format!(
            "`{at}` must be one of {}, found {}",
            values.join(", "),
            describe(instance)
        ),
    );
    if let Some(near) = instance
        .as_str()
        .and_then(|found| did_you_mean(found, values.iter().map(String::as_str)))
    {
        diagnostic = diagnostic.help(format!("did you mean \"{near}\"?"));
    }
    diagnostic
}

fn limit_words(
    path: Vec<String>,
    instance: &Value,
    bound: &str,
    limit: u64,
    noun: &str,
) -> Diagnostic {
    let at = dotted(&path);
    Diagnostic::error(
        "accum::schema::range",
        path,
        format!(
            "`{at}` must have {bound} {limit} {noun}{}, found {}",
            if limit == 1 { "" } else { "s" },
            describe(instance)
        ),
    )
}

/// The types of a validator's type error, in words, without `null`.
fn type_kind_words(kind: &TypeKind) -> Vec<String> {
    let names: Vec<String> = match kind {
        TypeKind::Single(t) => vec![t.to_string()],
        TypeKind::Multiple(ts) => ts.iter().map(|t| t.to_string()).collect(),
    };
    names
        .iter()
        .filter(|t| *t != "null")
        .map(|t| type_words(t).to_owned())
        .collect()
}

/// Whether the field at `path` plays a plan role.
fn is_role(schema: &Value, path: &[String]) -> bool {
    schemas_at(schema, path)
        .iter()
        .any(|s| s.get("x-accum-role").is_some())
}

/// Finds floats where the schema wants an integer (and not a number):
/// JSON Schema's "integer" accepts a number without a fraction (4.0, 1e30),
/// the typed config does not. Reported here, where the location is known.
pub(super) fn floats_for_integers(
    node: &Node,
    schema: &Value,
    root: &Value,
    path: &mut Vec<String>,
    diagnostics: &mut Vec<Diagnostic>,
    depth: usize,
) {
    if depth > MAX_SCHEMA_DEPTH {
        return;
    }
    let mut schemas = Vec::new();
    alternatives(schema, root, &mut schemas, 0);
    match &node.kind {
        NodeKind::Float(value) => {
            let integer = schemas.iter().any(|s| allows(s, "integer"));
            let number = schemas.iter().any(|s| allows(s, "number"));
            if integer && !number && !diagnostics.iter().any(|d| path.starts_with(&d.path)) {
                diagnostics.push(
                    Diagnostic::error(
                        "accum::schema::type",
                        path.clone(),
                        format!(
                            "`{}` must be an integer, found number {value:?}",
                            dotted(path)
                        ),
                    )
                    .at(node.span.clone(), "")
                    .help("write a whole number without a decimal point or exponent"),
                );
            }
        }
        NodeKind::Table(entries) => {
            for entry in entries {
                if let Some(property) = schemas
                    .iter()
                    .find_map(|s| s.get("properties").and_then(|p| p.get(&entry.key)))
                {
                    path.push(entry.key.clone());
                    floats_for_integers(&entry.value, property, root, path, diagnostics, depth + 1);
                    path.pop();
                }
            }
        }
        NodeKind::Array(items) => {
            if let Some(item_schema) = schemas.iter().find_map(|s| s.get("items")) {
                for (i, item) in items.iter().enumerate() {
                    path.push(i.to_string());
                    floats_for_integers(item, item_schema, root, path, diagnostics, depth + 1);
                    path.pop();
                }
            }
        }
        _ => {}
    }
}
