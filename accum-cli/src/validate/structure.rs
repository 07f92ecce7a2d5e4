//! Structural diagnostics: what the schema check (`schema/`) found, said
//! in the project's words — the allowed values with a did-you-mean, the
//! types a place takes, the known keys of a table.

use accum_core::Code;
use serde_json::Value;

use super::SchemaMap;
use super::map::{
    Expected, Holds, MAX_SCHEMA_DEPTH, Tagged, allows, alternatives, describe, schemas_at,
    type_words,
};
use super::schema::{ErrorKind as Kind, SchemaError};
use crate::diagnostic::{Diagnostic, dotted};
use crate::fix::{Applicability, how_to_write, rename_key, replace_word, unquote};
use crate::output::schema_command;
use crate::source::SourceFormat;
use crate::source::{Document, Node, NodeKind};
use crate::suggest::{
    did_you_mean, domain_hint, only_near, or_list, section_name, unknown_key_help,
};

/// The diagnostics of one error of the schema check (an unknown-keys error
/// gives one per key, each with its own suggestion).
pub(super) fn schema_diagnostics(
    doc: &Document,
    schema: &Value,
    map: &SchemaMap,
    error: &SchemaError<'_, '_>,
) -> Vec<Diagnostic> {
    let kind = &error.kind;
    let instance: &Value = error.instance;
    if let Kind::AnyOf { alternatives } | Kind::OneOfNone { alternatives } = kind
        && let Some(errors) = matching_alternative(alternatives, &error.path)
    {
        // The value has the type of one alternative (a table where a table
        // or nothing goes): what is wrong is inside it.
        return errors
            .iter()
            .flat_map(|inner| schema_diagnostics(doc, schema, map, inner))
            .collect();
    }
    let path = error.path.clone();
    let at = dotted(&path);
    let path_range = doc.range_of(&path);
    let expected = Expected::of(&schemas_at(schema, &path));
    let found = describe(instance);
    let format = doc.format;
    let choice_or_types = |types: Vec<String>| {
        if expected.values.is_empty() && expected.tagged.is_empty() {
            (
                Code::SchemaType,
                format!("`{at}` must be {}, found {found}", or_list(&types)),
                None,
            )
        } else {
            choice(&path, instance, &expected, format)
        }
    };
    let (code, message, help) = match kind {
        Kind::UnexpectedKeys { keys } => {
            return keys
                .iter()
                .map(|key| unknown_key(doc, map, &path, key, &expected.keys))
                .collect();
        }
        Kind::Required { property } => {
            let key = (*property).to_owned();
            let section = section_name(&path);
            let mut key_path = path;
            key_path.push(key.clone());
            return vec![
                Diagnostic::error(
                    Code::MissingKey,
                    key_path,
                    format!("missing key `{key}` in {section}"),
                )
                .at(path_range, "")
                .help(match schema_command() {
                    Some(command) => format!("add `{key}` to {section}; {command} describes it"),
                    None => format!("add `{key}` to {section}"),
                }),
            ];
        }
        Kind::Type { expected: types } if expected.types.is_empty() => {
            choice_or_types(type_kind_words(types))
        }
        // A schema this reader does not follow to the place: the error's own values.
        Kind::Enum { .. } | Kind::Const { .. } if expected.values.is_empty() => {
            let values = match kind {
                Kind::Enum { options } => options.to_vec(),
                Kind::Const { expected } => vec![Value::clone(expected)],
                _ => Vec::new(),
            };
            let own = Expected {
                values,
                ..Expected::default()
            };
            choice(&path, instance, &own, format)
        }
        Kind::Type { .. } | Kind::Enum { .. } | Kind::Const { .. } => {
            choice_or_types(expected.types_words())
        }
        Kind::OneOfNone { .. } | Kind::AnyOf { .. }
            if !expected.values.is_empty()
                || !expected.types.is_empty()
                || !expected.tagged.is_empty() =>
        {
            choice_or_types(expected.types_words())
        }
        Kind::Minimum { limit } => range(&at, &format!("at least {limit}"), &found),
        Kind::ExclusiveMinimum { limit } => match limit.as_u64() {
            Some(l) => range(&at, &format!("at least {}", l + 1), &found),
            None => range(&at, &format!("more than {limit}"), &found),
        },
        Kind::Maximum { limit } => range(&at, &format!("at most {limit}"), &found),
        Kind::ExclusiveMaximum { limit } => range(&at, &format!("less than {limit}"), &found),
        Kind::MinLength { limit } => size(&at, &counted("at least", *limit, "character"), &found),
        Kind::MaxLength { limit } => size(&at, &counted("at most", *limit, "character"), &found),
        Kind::MinItems { limit } => size(&at, &counted("at least", *limit, "item"), &found),
        Kind::MaxItems { limit } => size(&at, &counted("at most", *limit, "item"), &found),
        Kind::MinProperties { limit } => size(&at, &counted("at least", *limit, "key"), &found),
        Kind::MaxProperties { limit } => size(&at, &counted("at most", *limit, "key"), &found),
        Kind::MultipleOf { divisor } => range(&at, &format!("a multiple of {divisor}"), &found),
        Kind::Pattern { pattern } => (
            Code::Schema,
            format!("`{at}` must match the pattern `{pattern}`, found {found}"),
            None,
        ),
        Kind::UniqueItems => (
            Code::Schema,
            format!("`{at}` must not repeat an item"),
            None,
        ),
        Kind::AnyOf { .. } | Kind::OneOfNone { .. } | Kind::OneOfMany | Kind::Not | Kind::False => {
            (
                Code::Schema,
                format!("`{at}` does not have the form the schema describes"),
                schema_command().map(|command| format!("{command} describes `{at}`")),
            )
        }
    };
    let mut diagnostic = Diagnostic::error(code, path, message).at(path_range, "");
    let mut help = help;
    if code == Code::SchemaType {
        // What the place takes, written out in the file's syntax, and the
        // value unquoted when that is all that is wrong.
        let types: Vec<&str> = match kind {
            Kind::Type { expected: types } if expected.types.is_empty() => types.to_vec(),
            _ => expected.types.clone(),
        };
        let at = diagnostic.finding.path.segments();
        let key = at.last().map_or("value", String::as_str);
        help = help.or_else(|| how_to_write(doc.format, key, &types, doc.node(at)));
        let fix = unquote(doc, at, &types);
        diagnostic = diagnostic.fix(fix);
    }
    if code == Code::SchemaEnum
        && let Some(found) = instance.as_str()
    {
        // The one choice a misspelt value is near: the value replaced,
        // quoted as the file quotes it.
        let values = expected.values_words();
        let at = diagnostic.finding.path.segments();
        let fix = only_near(found, values.iter().map(String::as_str))
            .and_then(|near| replace_word(doc, at, near));
        diagnostic = diagnostic.fix(fix);
    }
    vec![match help {
        Some(help) => diagnostic.help(help),
        None => diagnostic,
    }]
}

/// A value outside its range: `` `at` must be {bound}, found {found} ``.
fn range(at: &str, bound: &str, found: &str) -> Said {
    (
        Code::SchemaRange,
        format!("`{at}` must be {bound}, found {found}"),
        None,
    )
}

/// A value of the wrong size: `` `at` must have {bound}, found {found} ``.
fn size(at: &str, bound: &str, found: &str) -> Said {
    (
        Code::SchemaRange,
        format!("`{at}` must have {bound}, found {found}"),
        None,
    )
}

/// `at least 2 items`.
fn counted(bound: &str, limit: u64, noun: &str) -> String {
    format!(
        "{bound} {limit} {noun}{}",
        if limit == 1 { "" } else { "s" }
    )
}

/// A diagnostic's code, message and help, before it is placed.
type Said = (Code, String, Option<String>);

/// The errors of the alternative of an `anyOf`/`oneOf` whose type the
/// value has (no type error at the value itself), when there is one.
fn matching_alternative<'e, 's, 'v>(
    alternatives: &'e [Vec<SchemaError<'s, 'v>>],
    at: &[String],
) -> Option<&'e [SchemaError<'s, 'v>]> {
    alternatives
        .iter()
        .filter(|errors| {
            !errors.is_empty()
                && !errors.iter().any(|e| {
                    e.path == at
                        && matches!(
                            e.kind,
                            Kind::Type { .. } | Kind::Const { .. } | Kind::Enum { .. }
                        )
                })
        })
        .min_by_key(|errors| errors.len())
        .map(Vec::as_slice)
}

/// An unknown key, with the known key it most likely means.
fn unknown_key(
    doc: &Document,
    map: &SchemaMap,
    path: &[String],
    key: &str,
    known: &[String],
) -> Diagnostic {
    let mut key_path = path.to_vec();
    key_path.push(key.to_owned());
    let range = doc
        .key_range(&key_path)
        .unwrap_or_else(|| doc.range_of(path));
    let section = section_name(path);
    let message = format!("unknown key `{key}` in {section}");
    // A key of another table, written in this one: pointed to its table.
    let homes: Vec<&[String]> = map
        .properties
        .iter()
        .filter_map(|p| p.split_last())
        .filter(|(name, parent)| *name == key && *parent != path)
        .map(|(_, parent)| parent)
        .collect();
    if !homes.is_empty() && !known.iter().any(|k| k == key) {
        let tables: Vec<String> = homes.iter().map(|p| section_name(p)).collect();
        let mut diagnostic = Diagnostic::error(Code::UnknownKey, key_path, message)
            .at(range, "")
            .help(format!(
                "`{key}` belongs in {}: move it there",
                or_list(&tables)
            ));
        for home in homes {
            if !home.is_empty() && doc.node(home).is_some() {
                diagnostic = diagnostic.also(
                    home.to_vec(),
                    doc.key_range(home).unwrap_or_else(|| doc.range_of(home)),
                    format!("`{key}` goes in this table"),
                );
            }
        }
        return diagnostic;
    }
    let help = unknown_key_help(key, known.iter().map(String::as_str), &section);
    let fix = only_near(key, known.iter().map(String::as_str))
        .filter(|near| doc.node(&[path, &[(*near).to_owned()]].concat()).is_none())
        .zip(doc.key_range(&key_path))
        .and_then(|(near, key_range)| rename_key(doc, key_range, key, near, Applicability::Safe));
    Diagnostic::error(Code::UnknownKey, key_path, message)
        .at(range, "")
        .help(help)
        .fix(fix)
}

/// A value outside a choice: every allowed value as a file writes it
/// (the strings, and the variants written as a table with one key), and
/// the nearest one. A string that names (or nearly names) a variant that
/// takes a table is shown that table, in the file's format.
fn choice(path: &[String], instance: &Value, expected: &Expected, format: SourceFormat) -> Said {
    let at = dotted(path);
    let values = expected.values_words();
    let found = instance.as_str();
    let tagged = found.and_then(|found| {
        let names = expected.tagged.iter().map(|t| t.name.as_str());
        let near = expected
            .tagged
            .iter()
            .find(|t| t.name == found)
            .or_else(|| {
                let name = did_you_mean(found, names.chain(values.iter().map(String::as_str)))?;
                expected.tagged.iter().find(|t| t.name == name)
            })?;
        let lead = if near.name == found {
            format!("`{}` takes a table, not a string", near.name)
        } else {
            format!(
                "did you mean `{}`? it takes a table, not a string",
                near.name
            )
        };
        Some(format!("{lead}: write {}", written(path, near, format)))
    });
    let help = tagged.or_else(|| {
        found.and_then(|found| {
            did_you_mean(found, values.iter().map(String::as_str))
                .map(|near| format!("did you mean \"{near}\"?"))
                .or_else(|| domain_hint(found, &values))
        })
    });
    let message = if expected.tagged.is_empty() {
        format!(
            "`{at}` must be one of {}, found {}",
            values.join(", "),
            describe(instance)
        )
    } else {
        let tables: Vec<String> = expected.tagged.iter().map(Tagged::words).collect();
        let strings: Vec<String> = values.iter().map(|v| format!("\"{v}\"")).collect();
        let strings = if strings.is_empty() {
            String::new()
        } else {
            format!("{}, or ", or_list(&strings))
        };
        format!(
            "`{at}` must be {strings}a table with one key: {}, found {}",
            tables.join(", "),
            describe(instance)
        )
    };
    (Code::SchemaEnum, message, help)
}

/// A variant that takes a table, written at `path` in `format`:
/// `model = { mlp = { hidden = … } }` (or a `[model.mlp]` table) in TOML,
/// `"model": { "mlp": { "hidden": … } }` in JSON, `model: { mlp: { hidden: … } }`
/// in YAML.
fn written(path: &[String], variant: &Tagged, format: SourceFormat) -> String {
    let key = path.last().map_or("", String::as_str);
    let name = &variant.name;
    let (assign, quote) = match format {
        SourceFormat::Toml => (" = ", ""),
        SourceFormat::Json => (": ", "\""),
        SourceFormat::Yaml => (": ", ""),
    };
    let inner = match &variant.holds {
        Holds::Table(keys) => {
            let keys: Vec<String> = keys
                .iter()
                .map(|k| format!("{quote}{k}{quote}{assign}…"))
                .collect();
            format!("{{ {} }}", keys.join(", "))
        }
        Holds::Items(n) => format!("[{}]", vec!["…"; *n].join(", ")),
        Holds::Value => "…".to_owned(),
    };
    let inline = format!("`{quote}{key}{quote}{assign}{{ {quote}{name}{quote}{assign}{inner} }}`");
    match (&variant.holds, format) {
        (Holds::Table(_), SourceFormat::Toml) => {
            let mut table = path.to_vec();
            table.push(name.clone());
            format!("{inline}, or a `[{}]` table", dotted(&table))
        }
        _ => inline,
    }
}

/// The types of a type error, in words, without `null`.
fn type_kind_words(types: &[&str]) -> Vec<String> {
    types
        .iter()
        .filter(|t| **t != "null")
        .map(|t| type_words(t).to_owned())
        .collect()
}

/// Finds floats where the schema wants an integer (and not a number).
/// JSON Schema's "integer" accepts a number without a fraction (`8.0`,
/// `1e3`), and so do editors and other validators: accum reads it as that
/// integer, for the same verdict (docs/editors.md). Those paths go to
/// `integral`; an integral float past the largest integer (`1e30`), which
/// the schema accepts but no count can hold, is a finding here, where the
/// location is known.
pub(super) fn floats_for_integers(
    node: &Node,
    schema: &Value,
    root: &Value,
    path: &mut Vec<String>,
    found: &mut IntegralFloats,
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
            if integer && !number && value.fract() == 0.0 {
                match integral(*value) {
                    Some(whole) => found.integral.push((path.clone(), whole)),
                    None => found.diagnostics.push(
                        Diagnostic::error(
                            Code::SchemaRange,
                            path.clone(),
                            format!(
                                "`{}` is {value:?}, larger than any count accum can hold",
                                dotted(path)
                            ),
                        )
                        .at(node.range.clone(), "too large")
                        .help(format!("use at most {}", u64::MAX)),
                    ),
                }
            }
        }
        NodeKind::Table(entries) => {
            for entry in entries {
                if let Some(property) = schemas
                    .iter()
                    .find_map(|s| s.get("properties").and_then(|p| p.get(&entry.key)))
                {
                    path.push(entry.key.clone());
                    floats_for_integers(&entry.value, property, root, path, found, depth + 1);
                    path.pop();
                }
            }
        }
        NodeKind::Array(items) => {
            if let Some(item_schema) = schemas.iter().find_map(|s| s.get("items")) {
                for (i, item) in items.iter().enumerate() {
                    path.push(i.to_string());
                    floats_for_integers(item, item_schema, root, path, found, depth + 1);
                    path.pop();
                }
            }
        }
        _ => {}
    }
}

/// What [`floats_for_integers`] finds: the places of integral floats with
/// their integers, and the floats no integer can hold.
#[derive(Debug, Default)]
pub(super) struct IntegralFloats {
    /// Each integral float's path and its integer.
    pub(super) integral: Vec<(Vec<String>, serde_json::Number)>,
    /// Integral floats too large for any integer.
    pub(super) diagnostics: Vec<Diagnostic>,
}

/// A float without a fraction as the integer it is, if one fits.
fn integral(value: f64) -> Option<serde_json::Number> {
    // 2^63 and 2^64 are exact in f64: the bounds are compared exactly.
    const I64_MIN: f64 = -9_223_372_036_854_775_808.0;
    const U64_END: f64 = 18_446_744_073_709_551_616.0;
    if value.fract() != 0.0 || !(I64_MIN..U64_END).contains(&value) {
        return None;
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let number = if value >= 0.0 {
        serde_json::Number::from(value as u64)
    } else {
        serde_json::Number::from(value as i64)
    };
    Some(number)
}
