//! The load pipeline of every command that reads a configuration file:
//! parse (byte ranges kept), validate against the schema, type the config, and
//! check its plan. Generic over the configuration type, so that a user's own
//! binary (`accum_cli::run::<MyConfig>()`) behaves like `accum`.

use std::fmt;
use std::marker::PhantomData;
use std::path::Path;

use accum_core::plan::{Plan, StagedPlan};
use accum_core::{AccumConfig, CheckedPlan, Code};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::diagnostic::{self, Diagnostic};
use crate::error::CliError;
use crate::output::eprint_styled;
use crate::source::{Document, LoadError, SourceFormat, SyntaxError};
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
        Err(LoadError::Syntax(err)) => Ok(Err(rejected(err))),
        Err(err) => Err(CliError::usage(err)),
    }
}

/// A syntax error as the located finding of a rejected file.
fn rejected(err: SyntaxError) -> Rejected {
    let range = err.range.clone().unwrap_or(0..0);
    let finding = Diagnostic::error(
        Code::Syntax,
        Vec::new(),
        format!("invalid {}: {}", err.format.name(), err.message),
    )
    .at(range, "");
    Rejected {
        name: err.name,
        text: err.text,
        finding,
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
            .any(|d| d.finding.severity == diagnostic::Severity::Error)
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

/// The file at `path` parsed, or its one finding printed and the command
/// ended with exit 1.
pub(crate) fn load_or_print(path: &Path) -> Result<Document, CliError> {
    match load(path)? {
        Ok(doc) => Ok(doc),
        Err(bad) => {
            eprint_styled(&diagnostic::render_text(
                &bad.name,
                &bad.text,
                std::slice::from_ref(&bad.finding),
                crate::style::stderr(),
            ));
            Err(CliError::invalid(format!(
                "{}: not a valid configuration",
                accum_core::shown::path(path)
            )))
        }
    }
}

/// Loads, validates and types one configuration file for commands that need
/// a valid config (sheet, replan, run). Findings are printed; invalid input
/// ends the command with exit 1.
pub(crate) fn load_checked<T: CliConfig>(
    path: &Path,
    check: Checker<T>,
) -> Result<Checked<T>, CliError> {
    let doc = load_or_print(path)?;
    let (config, checked, warnings) = match check_file::<T>(&doc, check)? {
        Ok(valid) => valid,
        Err(findings) => {
            eprint_styled(&diagnostic::render_text(
                &doc.name,
                &doc.text,
                &findings,
                crate::style::stderr(),
            ));
            let errors = findings
                .iter()
                .filter(|f| f.finding.severity == diagnostic::Severity::Error)
                .count();
            return Err(CliError::invalid(format!(
                "{}: {errors} error{} (run `{} validate {}` for details)",
                doc.name,
                if errors == 1 { "" } else { "s" },
                crate::output::bin_name(),
                accum_core::shown::path(path)
            )));
        }
    };
    if !warnings.is_empty() {
        eprint_styled(&diagnostic::render_text(
            &doc.name,
            &doc.text,
            &warnings,
            crate::style::stderr(),
        ));
    }
    let plan = *checked.plan();
    Ok(Checked { doc, config, plan })
}

/// A document that passed every check: its typed config, the plan its
/// config's gate gives, and the warnings (located).
type Valid<T> = (T, CheckedPlan, Vec<Diagnostic>);

/// The checks of a parsed document, shared by the commands and the
/// library's loaders: schema, typing, the config's own check, and its
/// gate. Every diagnostic (errors and warnings) when one is an error.
fn check_file<T: CliConfig>(
    doc: &Document,
    check: Checker<T>,
) -> Result<Result<Valid<T>, Vec<Diagnostic>>, CliError> {
    let schema = Schema::<T>::builtin();
    let outcome = check_document::<T>(doc, &schema.value, &schema.map, Some(check))?;
    let mut diagnostics = outcome.diagnostics;
    let errors = diagnostics
        .iter()
        .any(|d| d.finding.severity == diagnostic::Severity::Error);
    Ok(match outcome.config {
        Some(config) if !errors => match config.checked() {
            Ok(checked) => Ok((config, checked, diagnostics)),
            // A checker that differs from `validate()` may have let an
            // error through: the gate's errors join the file's.
            Err(findings) => {
                diagnostics.extend(
                    findings
                        .errors()
                        .map(|finding| crate::validate::finding_diagnostic(doc, finding)),
                );
                Err(diagnostics)
            }
        },
        _ => Err(diagnostics),
    })
}

/// A configuration file loaded into `T` through every check of `accum
/// validate`, with the plan it describes and the warnings found on the way.
/// See [`load_config`].
#[derive(Debug)]
pub struct Loaded<T> {
    config: T,
    checked: CheckedPlan,
    name: String,
    text: String,
    warnings: Vec<Diagnostic>,
}

impl<T> Loaded<T> {
    /// The typed configuration.
    pub fn config(&self) -> &T {
        &self.config
    }

    /// The typed configuration, without the rest.
    pub fn into_config(self) -> T {
        self.config
    }

    /// The plan (`B = m·A·D`), the full batch after any ramp-up.
    pub fn plan(&self) -> &Plan {
        self.checked.plan()
    }

    /// The plan with its stages (one for a constant batch).
    pub fn staged_plan(&self) -> &StagedPlan {
        self.checked.staged()
    }

    /// The warnings, each located in the file (often none): the config
    /// works, but may not mean all that was written.
    pub fn warnings(&self) -> &[Diagnostic] {
        &self.warnings
    }

    /// The warnings as `accum validate` prints them (file, line, column,
    /// snippet, help); empty when there are none.
    pub fn render_warnings(&self, color: bool) -> String {
        if self.warnings.is_empty() {
            return String::new();
        }
        diagnostic::render_text(&self.name, &self.text, &self.warnings, color)
    }
}

/// Why a configuration file could not be loaded: the file could not be
/// read, or it was read and has errors — every one of them, located as
/// `accum validate` locates them (file, line, column, snippet, help,
/// did-you-mean).
///
/// `Display` renders them as `accum validate` does, without colour, and so
/// does `Debug`, which is what `main` prints for an error returned through
/// `?`.
pub struct ConfigError {
    kind: ConfigErrorKind,
}

enum ConfigErrorKind {
    /// The file could not be read (missing, too large, not UTF-8, an
    /// unknown extension), or the type's schema could not be used.
    Read(String),
    /// The file was read; these are its diagnostics, errors and warnings.
    Invalid {
        name: String,
        text: String,
        diagnostics: Vec<Diagnostic>,
    },
}

impl ConfigError {
    /// Every diagnostic of the file, errors and warnings, in file order;
    /// empty when the file could not be read.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        match &self.kind {
            ConfigErrorKind::Read(_) => &[],
            ConfigErrorKind::Invalid { diagnostics, .. } => diagnostics,
        }
    }

    /// The error as `accum validate` prints it, coloured when `color`.
    pub fn render(&self, color: bool) -> String {
        match &self.kind {
            ConfigErrorKind::Read(reason) => format!("error: {reason}\n"),
            ConfigErrorKind::Invalid {
                name,
                text,
                diagnostics,
            } => diagnostic::render_text(name, text, diagnostics, color),
        }
    }

    fn invalid(doc: &Document, diagnostics: Vec<Diagnostic>) -> ConfigError {
        ConfigError {
            kind: ConfigErrorKind::Invalid {
                name: doc.name.clone(),
                text: doc.text.clone(),
                diagnostics,
            },
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The rendering ends in a newline; an error chain adds its own.
        f.write_str(self.render(false).trim_end())
    }
}

impl fmt::Debug for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for ConfigError {}

/// Loads a TOML, YAML or JSON file (by its extension) into the user's
/// configuration type, through every check `accum validate` runs: syntax,
/// the type's JSON Schema, typing, and the config's own `validate()`. Gives
/// the typed config with its plan and warnings, or every diagnostic,
/// located in the file.
///
/// ```no_run
/// # use accum::AccumConfig;
/// # #[derive(AccumConfig, serde::Deserialize, schemars::JsonSchema)]
/// # struct Train {
/// #     #[accum(micro_batch)] micro_batch: u32,
/// #     #[accum(accumulation)] accumulation: u32,
/// #     #[accum(replicas)] replicas: u32,
/// # }
/// fn main() -> Result<(), accum_cli::ConfigError> {
///     let loaded = accum_cli::load_config::<Train>("train.toml")?;
///     eprint!("{}", loaded.render_warnings(false));
///     println!("{}", loaded.plan().batch_formula());
///     Ok(())
/// }
/// ```
pub fn load_config<T: CliConfig>(path: impl AsRef<Path>) -> Result<Loaded<T>, ConfigError> {
    let doc = match load(path.as_ref()) {
        Ok(Ok(doc)) => doc,
        Ok(Err(bad)) => {
            return Err(ConfigError {
                kind: ConfigErrorKind::Invalid {
                    name: bad.name,
                    text: bad.text,
                    diagnostics: vec![bad.finding],
                },
            });
        }
        Err(err) => {
            return Err(ConfigError {
                kind: ConfigErrorKind::Read(err.to_string()),
            });
        }
    };
    loaded(doc)
}

/// [`load_config`] for text already in memory: `name` is shown in the
/// diagnostics, and its extension (`.toml`, `.json`, `.yaml`, `.yml`) says
/// the format.
pub fn load_config_str<T: CliConfig>(name: &str, text: &str) -> Result<Loaded<T>, ConfigError> {
    let Some(format) = SourceFormat::from_path(Path::new(name)) else {
        return Err(ConfigError {
            kind: ConfigErrorKind::Read(format!(
                "{name}: unknown configuration format; name the file .toml, .json, .yaml or .yml"
            )),
        });
    };
    match Document::parse(name.to_owned(), text.to_owned(), format) {
        Ok(doc) => loaded(doc),
        Err(err) => {
            let bad = rejected(err);
            Err(ConfigError {
                kind: ConfigErrorKind::Invalid {
                    name: bad.name,
                    text: bad.text,
                    diagnostics: vec![bad.finding],
                },
            })
        }
    }
}

/// The checks of a parsed document, for the library's loaders.
fn loaded<T: CliConfig>(doc: Document) -> Result<Loaded<T>, ConfigError> {
    // The program loading its config has no schema command to point at.
    let checked = crate::output::without_schema_command(|| {
        check_file::<T>(&doc, <T as AccumConfig>::validate)
    });
    match checked {
        Ok(Ok((config, checked, warnings))) => Ok(Loaded {
            config,
            checked,
            name: doc.name,
            text: doc.text,
            warnings,
        }),
        Ok(Err(diagnostics)) => Err(ConfigError::invalid(&doc, diagnostics)),
        Err(err) => Err(ConfigError {
            kind: ConfigErrorKind::Read(err.to_string()),
        }),
    }
}
