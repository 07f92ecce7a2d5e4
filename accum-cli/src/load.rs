//! The load pipeline of every command that reads a configuration file:
//! parse (spans kept), validate against the schema, type the config, and
//! check its plan. Generic over the configuration type, so that a user's own
//! binary (`accum_cli::run::<MyConfig>()`) behaves like `accum`.

use std::io::IsTerminal;
use std::marker::PhantomData;
use std::path::Path;

use accum_core::{AccumConfig, Plan};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::diagnostic::{self, Diagnostic};
use crate::error::CliError;
use crate::source::{Document, LoadError};
use crate::validate::{SchemaMap, validate};

/// A configuration type the CLI can work with: it has a plan (derived
/// `AccumConfig`), a JSON Schema and serde support.
pub trait CliConfig:
    AccumConfig + DeserializeOwned + schemars::JsonSchema + Sized + 'static
{
}

impl<T> CliConfig for T where
    T: AccumConfig + DeserializeOwned + schemars::JsonSchema + Sized + 'static
{
}

/// The schema of one configuration type, with its roles located.
pub(crate) struct Schema<T> {
    /// The JSON Schema.
    pub(crate) value: Value,
    /// Where the plan roles and spans are.
    pub(crate) map: SchemaMap,
    typed: PhantomData<fn() -> T>,
}

impl<T: CliConfig> Schema<T> {
    /// The built-in schema of `T`, which also lets a JSON file name its
    /// schema for editors (`"$schema": "./accum.schema.json"`).
    pub(crate) fn builtin() -> Schema<T> {
        let mut value = accum_core::schema_for::<T>().to_value();
        if let Some(properties) = value.get_mut("properties").and_then(Value::as_object_mut) {
            properties.insert(
                crate::validate::SCHEMA_KEY.to_owned(),
                serde_json::json!({
                    "type": "string",
                    "description": "The JSON Schema of this file, for editors; accum does not read it."
                }),
            );
        }
        crate::validate::enums_for_editors(&mut value);
        crate::validate::solvable_factors_optional(&mut value);
        let map = SchemaMap::from_schema(&value);
        Schema {
            value,
            map,
            typed: PhantomData,
        }
    }
}

/// The semantic check of a typed config: the derive's `validate` for any
/// type, `TrainingConfig::check` (plan and engine sections) for `accum`.
/// `Ok` holds the warnings, `Err` every finding when one is an error; both
/// are reported.
pub(crate) type Checker<T> = fn(&T) -> Result<accum_core::Findings, accum_core::Findings>;

/// A document that passed validation, with its typed value and plan.
pub(crate) struct Checked<T> {
    /// The parsed file.
    pub(crate) doc: Document,
    /// The typed configuration.
    pub(crate) config: T,
    /// Its plan.
    pub(crate) plan: Plan,
}

/// Whether findings on stdout may be coloured.
pub(crate) fn color() -> bool {
    std::env::var_os("NO_COLOR").is_none() && std::io::stdout().is_terminal()
}

/// A file that could not be parsed, with the finding that says why.
pub(crate) struct Rejected {
    /// The file name.
    pub(crate) name: String,
    /// Its text.
    pub(crate) text: String,
    /// The syntax finding.
    pub(crate) finding: Diagnostic,
}

/// Loads a file; a syntax error becomes a located finding (exit 1), other
/// load errors are usage or I/O errors (exit 2).
pub(crate) fn load(path: &Path) -> Result<Result<Document, Rejected>, CliError> {
    match Document::load(path) {
        Ok(doc) => Ok(Ok(doc)),
        Err(LoadError::Syntax(err)) => {
            let span = err.span.clone().unwrap_or(0..0);
            let finding = Diagnostic::error(
                "accum::syntax",
                Vec::new(),
                format!("invalid {}: {}", err.format.name(), err.message),
            )
            .at(span, "");
            Ok(Err(Rejected {
                name: err.name,
                text: err.text,
                finding,
            }))
        }
        Err(err) => Err(CliError::usage(err)),
    }
}

/// What the pipeline made of one document.
pub(crate) struct Outcome<T> {
    /// Every finding: structure, spans, then the typed config's own
    /// validation, each with its field path.
    pub(crate) diagnostics: Vec<Diagnostic>,
    /// The typed configuration, when the document has the type's shape
    /// (its plan may still have findings).
    pub(crate) config: Option<T>,
}

/// Checks one document and types it, once. Without a typed check (an
/// external schema), only the schema and its plan roles are checked.
pub(crate) fn check_document<T: CliConfig>(
    doc: &Document,
    schema: &Value,
    map: &SchemaMap,
    typed: Option<Checker<T>>,
) -> Result<Outcome<T>, CliError> {
    let instance = crate::validate::instance(doc, schema, map);
    let mut diagnostics =
        validate(doc, &instance, schema, map, typed.is_none()).map_err(CliError::usage)?;
    let mut config = None;
    // Warnings do not keep a file from being typed and checked.
    if let Some(check) = typed
        && !diagnostics
            .iter()
            .any(|d| d.severity == diagnostic::Severity::Error)
    {
        match crate::typed::from_value::<T>(&instance) {
            Err(err) => diagnostics.push(err.diagnostic(doc)),
            Ok((typed, ignored)) => {
                diagnostics.extend(ignored.iter().map(|key| key.diagnostic(doc)));
                let (Ok(findings) | Err(findings)) = check(&typed);
                diagnostics.extend(
                    findings
                        .iter()
                        .map(|finding| crate::validate::finding_diagnostic(doc, finding)),
                );
                config = Some(typed);
            }
        }
    }
    Ok(Outcome {
        diagnostics,
        config,
    })
}

/// Loads, validates and types one configuration file for commands that need
/// a valid config (sheet, replan, run). Findings are printed; invalid input
/// ends the command with exit 1.
pub(crate) fn load_checked<T: CliConfig>(
    path: &Path,
    check: Checker<T>,
) -> Result<Checked<T>, CliError> {
    let schema = Schema::<T>::builtin();
    let doc = match load(path)? {
        Ok(doc) => doc,
        Err(bad) => {
            eprint!(
                "{}",
                diagnostic::render_text(
                    &bad.name,
                    &bad.text,
                    std::slice::from_ref(&bad.finding),
                    color()
                )
            );
            return Err(CliError::invalid(format!(
                "{}: not a valid configuration",
                path.display()
            )));
        }
    };
    let outcome = check_document::<T>(&doc, &schema.value, &schema.map, Some(check))?;
    let findings = outcome.diagnostics;
    let errors = findings
        .iter()
        .filter(|f| f.severity == diagnostic::Severity::Error)
        .count();
    if !findings.is_empty() {
        eprint!(
            "{}",
            diagnostic::render_text(&doc.name, &doc.text, &findings, color())
        );
    }
    let config = match outcome.config {
        Some(config) if errors == 0 => config,
        _ => {
            return Err(CliError::invalid(format!(
                "{}: {errors} error{} (run `{} validate {}` for details)",
                doc.name,
                if errors == 1 { "" } else { "s" },
                crate::cli::bin_name(),
                path.display()
            )));
        }
    };
    let plan = config
        .plan()
        .map_err(|err| CliError::invalid(format!("{}: {err}", doc.name)))?;
    Ok(Checked { doc, config, plan })
}
