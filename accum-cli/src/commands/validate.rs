//! `accum validate FILE…`: every finding of every file, located, with the
//! fix; text for people, JSON for tools.

use serde::Serialize;
use serde_json::Value;

use crate::cli::{DiagnosticFormat, ValidateArgs};
use crate::diagnostic::{self, Severity};
use crate::error::{CliError, Exit};
use crate::load::{Checker, CliConfig, Schema, check_document, color, load};
use crate::output::{print_json, print_text};
use crate::validate::SchemaMap;

#[derive(Serialize)]
struct FileReport {
    file: String,
    valid: bool,
    errors: usize,
    warnings: usize,
    findings: Vec<diagnostic::DiagnosticJson>,
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
                CliError::usage(format!("{}: the schema is not JSON: {err}", path.display()))
            })?;
            let map = SchemaMap::from_schema(&value);
            (value, map, None)
        }
    };
    let mut reports = Vec::new();
    let mut text = String::new();
    let mut any_error = false;
    for path in &args.files {
        let (name, source, diagnostics) = match load(path)? {
            Ok(doc) => {
                let outcome = check_document::<T>(&doc, &schema, &map, typed)?;
                (doc.name, doc.text, outcome.diagnostics)
            }
            Err(bad) => (bad.name, bad.text, vec![bad.finding]),
        };
        let errors = diagnostic::count(&diagnostics, Severity::Error);
        any_error |= errors > 0;
        match args.format {
            DiagnosticFormat::Human => {
                text.push_str(&diagnostic::render_text(
                    &name,
                    &source,
                    &diagnostics,
                    color(),
                ));
                text.push_str(&diagnostic::summary(&name, &diagnostics));
            }
            DiagnosticFormat::Short => {
                text.push_str(&diagnostic::render_short(&name, &source, &diagnostics));
            }
            DiagnosticFormat::Json => reports.push(FileReport {
                file: name.clone(),
                valid: errors == 0,
                errors,
                warnings: diagnostics.len() - errors,
                findings: diagnostic::to_json(&name, &source, &diagnostics),
            }),
        }
    }
    match args.format {
        DiagnosticFormat::Human | DiagnosticFormat::Short => print_text(&text)?,
        DiagnosticFormat::Json => print_json(&serde_json::json!({ "files": reports }))?,
    }
    Ok(if any_error { Exit::Invalid } else { Exit::Ok })
}
