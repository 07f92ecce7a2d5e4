//! `accum validate FILE…`: every finding of every file, located, with the
//! fix; text for people, JSON for tools.

use serde::Serialize;
use serde_json::Value;

use crate::cli::{Format, ValidateArgs};
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
        let (name, source, findings) = match load(path)? {
            Ok(doc) => {
                let outcome = check_document::<T>(&doc, &schema, &map, typed)?;
                (doc.name, doc.text, outcome.diagnostics)
            }
            Err(bad) => (bad.name, bad.text, vec![bad.finding]),
        };
        let errors = findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count();
        let warnings = findings.len() - errors;
        any_error |= errors > 0;
        match args.format {
            Format::Text => {
                text.push_str(&diagnostic::render_text(&name, &source, &findings, color()));
                if errors == 0 && warnings == 0 {
                    text.push_str(&format!("{name}: ok\n"));
                } else {
                    text.push_str(&format!(
                        "{}: {errors} error{}, {warnings} warning{}\n",
                        name,
                        if errors == 1 { "" } else { "s" },
                        if warnings == 1 { "" } else { "s" }
                    ));
                }
            }
            Format::Json => reports.push(FileReport {
                file: name.clone(),
                valid: errors == 0,
                errors,
                warnings,
                findings: diagnostic::to_json(&name, &source, &findings),
            }),
        }
    }
    match args.format {
        Format::Text => print_text(&text)?,
        Format::Json => print_json(&serde_json::json!({ "files": reports }))?,
    }
    Ok(if any_error { Exit::Invalid } else { Exit::Ok })
}
