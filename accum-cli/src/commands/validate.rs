//! `accum validate FILE…`: every finding of every file, located, with the
//! fix; text for people, one line per finding for editors, JSON for tools,
//! workflow commands for GitHub Actions and SARIF for code scanning.

use serde::Serialize;
use serde_json::Value;

use super::fixes::{self, Changed};
use crate::cli::{DiagnosticFormat, ValidateArgs};
use crate::diagnostic::{self, Diagnostic, Severity};
use crate::error::{CliError, Exit};
use crate::fix::Applicability;
use crate::formats::{self, FileFindings};
use crate::load::{Checker, CliConfig, Outcome, Schema, check_document, load};
use crate::output::{print_json, print_styled, print_text};
use crate::source::Document;
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
    let allowed = args.fixing.allowed();
    let mut checked = Vec::new();
    let mut changed = Vec::new();
    for path in &args.files {
        checked.push(match load(path)? {
            Ok(doc) => {
                let original = doc.text.clone();
                let mut outcome = check_document::<T>(&doc, &schema, &map, typed)?;
                let mut doc = doc;
                if let Some(allowed) = allowed {
                    let (fixed, after) = fix_rounds(doc, outcome, allowed, |doc| {
                        check_document::<T>(doc, &schema, &map, typed)
                    })?;
                    (doc, outcome) = after;
                    if fixed > 0 {
                        changed.push(Changed {
                            path: path.clone(),
                            name: doc.name.clone(),
                            original,
                            text: doc.text.clone(),
                            fixed,
                        });
                    }
                }
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
    if args.fixing.diff {
        return fixes::print_diffs(&changed);
    }
    if args.fixing.fix && !changed.is_empty() {
        fixes::write_fixed(&changed)?;
    }
    let files: Vec<FileFindings<'_>> = checked
        .iter()
        .map(|c| FileFindings {
            name: &c.name,
            text: &c.text,
            diagnostics: &c.diagnostics,
        })
        .collect();
    if args.statistics {
        print_text(&statistics(&files))?;
    } else {
        print(args.format, &files)?;
    }
    Ok(verdict(&files, args.deny_warnings))
}

/// Applies the fixes of `outcome` up to `allowed`, checks the text again,
/// and repeats while fixes apply ([`fixes::rounds`]): how many were
/// applied, and the last document with its findings. A round whose edits
/// would not parse is not applied.
pub(crate) fn fix_rounds<T>(
    doc: Document,
    outcome: Outcome<T>,
    allowed: Applicability,
    check: impl Fn(&Document) -> Result<Outcome<T>, CliError>,
) -> Result<(usize, (Document, Outcome<T>)), CliError> {
    let name = doc.name.clone();
    let format = doc.format;
    fixes::rounds(
        (doc, outcome),
        allowed,
        |(doc, outcome)| Some((doc.text.as_str(), outcome.diagnostics.as_slice())),
        |text| match Document::parse(name.clone(), text, format) {
            Ok(next) => {
                let outcome = check(&next)?;
                Ok(Some((next, outcome)))
            }
            Err(_) => Ok(None),
        },
    )
}

/// `--statistics`: per code, how many findings, and how many of them
/// `--fix` (or `--fix --unsafe-fixes`) would fix, most frequent first, as
/// ruff's `--statistics` prints them.
pub(crate) fn statistics(files: &[FileFindings<'_>]) -> String {
    let mut counts: std::collections::BTreeMap<accum_core::Code, (usize, usize, usize)> =
        std::collections::BTreeMap::new();
    for d in files.iter().flat_map(|f| f.diagnostics.iter()) {
        let entry = counts.entry(d.finding.code).or_default();
        entry.0 += 1;
        match d.fixes.as_slice() {
            [only] if only.applicability == Applicability::Safe => entry.1 += 1,
            [_] => entry.2 += 1,
            _ => {}
        }
    }
    let mut rows: Vec<_> = counts.into_iter().collect();
    rows.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.0.as_str().cmp(b.0.as_str())));
    let width = rows
        .iter()
        .map(|(_, (n, _, _))| n.to_string().len())
        .max()
        .unwrap_or(1);
    let mut out = String::new();
    for (code, (n, safe, review)) in &rows {
        let mut fixable = Vec::new();
        if *safe > 0 {
            fixable.push(format!("{safe} with --fix"));
        }
        if *review > 0 {
            fixable.push(format!("{review} with --fix --unsafe-fixes"));
        }
        out.push_str(&format!("{n:>width$}  {code}"));
        if !fixable.is_empty() {
            out.push_str(&format!("  (fixable: {})", fixable.join(", ")));
        }
        out.push('\n');
    }
    if rows.is_empty() {
        out.push_str("no findings\n");
    }
    out
}

/// Exit 1 when a file has an error, or a warning under `--deny-warnings`.
pub(crate) fn verdict(files: &[FileFindings<'_>], deny_warnings: bool) -> Exit {
    let fails = |d: &Diagnostic| d.finding.severity == Severity::Error || deny_warnings;
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
