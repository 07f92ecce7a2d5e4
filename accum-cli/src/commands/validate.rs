//! `accum validate FILE…`: every finding of every file, located, with the
//! fix; text for people, one line per finding for editors, JSON for tools,
//! workflow commands for GitHub Actions and SARIF for code scanning.

use serde::Serialize;
use serde_json::Value;

use crate::cli::{DiagnosticFormat, ValidateArgs};
use crate::diagnostic::{self, Diagnostic, Severity};
use crate::error::{CliError, Exit};
use crate::formats::{self, FileFindings};
use crate::load::{Checker, CliConfig, Schema, check_document, load};
use crate::output::{print_json, print_styled, print_text};
use crate::validate::SchemaMap;

#[derive(Serialize)]
struct FileReport {
    file: String,
    valid: bool,
    errors: usize,
    warnings: usize,
    findings: Vec<diagnostic::DiagnosticJson>,
}

/// One checked file: its name, text and findings.
struct Checked {
    name: String,
    text: String,
    diagnostics: Vec<Diagnostic>,
}

pub(crate) fn run<T: CliConfig>(args: &ValidateArgs, check: Checker<T>) -> Result<Exit, CliError> {
    let (schema, map, typed) = match &args.schema {
        None => {
            let s = Schema::<T>::builtin();
            (s.value, s.map, Some(check))
        }
        Some(path) => {
            let text = crate::source::read_text(path, crate::source::MAX_FILE_BYTES)
                .map_err(|err| CliError::usage(format!("cannot read the schema: {err}")))?;
            let value: Value = serde_json::from_str(&text).map_err(|err| {
                CliError::usage(format!(
                    "{}: the schema is not JSON: {err}",
                    accum_core::shown::path(path)
                ))
            })?;
            crate::validate::read_schema(&value).map_err(|err| {
                CliError::usage(format!("{}: {err}", accum_core::shown::path(path)))
            })?;
            let map = SchemaMap::from_schema(&value);
            (value, map, None)
        }
    };
    let mut checked = Vec::new();
    for path in &args.files {
        checked.push(match load(path)? {
            Ok(doc) => {
                let outcome = check_document::<T>(&doc, &schema, &map, typed)?;
                Checked {
                    name: doc.name,
                    text: doc.text,
                    diagnostics: outcome.diagnostics,
                }
            }
            Err(bad) => Checked {
                name: bad.name,
                text: bad.text,
                diagnostics: vec![bad.finding],
            },
        });
    }
    let files: Vec<FileFindings<'_>> = checked
        .iter()
        .map(|c| FileFindings {
            name: &c.name,
            text: &c.text,
            diagnostics: &c.diagnostics,
        })
        .collect();
    print(args.format, &files)?;
    Ok(verdict(&files, args.deny_warnings))
}

/// Exit 1 when a file has an error, or a warning under `--deny-warnings`.
pub(crate) fn verdict(files: &[FileFindings<'_>], deny_warnings: bool) -> Exit {
    let fails = |d: &Diagnostic| d.severity == Severity::Error || deny_warnings;
    if files.iter().any(|f| f.diagnostics.iter().any(fails)) {
        Exit::Invalid
    } else {
        Exit::Ok
    }
}

/// Writes the files' findings to stdout in `format`.
fn print(format: DiagnosticFormat, files: &[FileFindings<'_>]) -> Result<(), CliError> {
    match format {
        DiagnosticFormat::Human => {
            let mut text = String::new();
            for file in files {
                text.push_str(&diagnostic::render_text(
                    file.name,
                    file.text,
                    file.diagnostics,
                    crate::style::stdout(),
                ));
                text.push_str(&diagnostic::summary(file.name, file.diagnostics));
            }
            text.push_str(&formats::explain_hint(files));
            print_styled(&text)
        }
        DiagnosticFormat::Short => print_text(
            &files
                .iter()
                .map(|f| diagnostic::render_short(f.name, f.text, f.diagnostics))
                .collect::<String>(),
        ),
        DiagnosticFormat::Github => print_text(&formats::render_github(files)),
        DiagnosticFormat::Sarif => print_json(&formats::to_sarif(files)),
        DiagnosticFormat::Json => {
            let reports: Vec<FileReport> = files
                .iter()
                .map(|f| {
                    let errors = diagnostic::count(f.diagnostics, Severity::Error);
                    FileReport {
                        file: f.name.to_owned(),
                        valid: errors == 0,
                        errors,
                        warnings: f.diagnostics.len() - errors,
                        findings: diagnostic::to_json(f.name, f.text, f.diagnostics),
                    }
                })
                .collect();
            print_json(&serde_json::json!({ "files": reports }))
        }
    }
}
