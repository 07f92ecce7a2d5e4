//! Reading and writing other frameworks' files for `accum import`, `accum
//! lint` and `accum export`: one file's import and findings, their JSON
//! and text, the options a launcher's flags give.

use std::path::Path;

use accum_core::Code;

use crate::cli::{DiagnosticFormat, ImportArgs};
use crate::diagnostic::{self, Severity};
use crate::error::CliError;
use crate::formats::{self, FileFindings};
use crate::interop::{self, FileReport, ImportError, ImportOptions};
use crate::output::print_json;

/// The import options that the command's launcher flags give.
pub(crate) fn options(args: &ImportArgs) -> ImportOptions {
    ImportOptions {
        world_size: args.world_size,
        num_processes: args.num_processes,
        num_nodes: args.num_nodes,
        tensor: args.tensor,
        pipeline: args.pipeline,
        context: args.context,
        deepspeed_mpu: args.deepspeed_mpu,
        micro_batch: args.micro_batch,
        examples: args.examples,
        seq_len: args.seq_len,
        variable_lengths: args.variable_lengths,
        env: args.env.clone(),
        set: args.set.clone(),
        deepspeed_config: args.deepspeed_config.clone(),
        accelerate_config: args.accelerate_config.clone(),
        search_dirs: Vec::new(),
        allow_paths: args.allow_path.clone(),
        origin: None,
    }
}

/// One framework file read: the import when there is a batch to train
/// with, and every file's findings (a recipe's DeepSpeed file has its own).
pub(crate) struct Read {
    pub(crate) imported: Option<interop::Imported>,
    pub(crate) files: Vec<FileReport>,
    /// The framework read: the one named, or the one detected.
    pub(crate) framework: Option<interop::Framework>,
    /// The detection, when no framework was named and one was detected.
    pub(crate) detected: Option<interop::Detected>,
}

impl Read {
    /// Reads `file` as `framework`, or as the framework its keys identify
    /// when none is named.
    pub(crate) fn of(
        args: &ImportArgs,
        framework: Option<interop::Framework>,
        file: &Path,
    ) -> Result<Read, CliError> {
        let (detected, result) = match framework {
            Some(f) => (None, interop::import_file(f, file, &options(args))),
            None => interop::import_file_detected(file, &options(args)),
        };
        let framework = framework.or(detected.as_ref().map(|d| d.framework));
        match Read::from_result(framework, detected.clone(), result) {
            Ok(read) => Ok(read),
            Err(err) => {
                // A file that cannot be read or parsed is one finding with
                // its location, in JSON as every other outcome; the exit
                // codes stay those of a usage error (unreadable) and of an
                // invalid file.
                if args.format == DiagnosticFormat::Json
                    && let Some(json) = failure_json(
                        framework,
                        detected.as_ref(),
                        &file.display().to_string(),
                        &err,
                    )
                {
                    print_json(&json)?;
                }
                Err(match err {
                    ImportError::Read { .. } => CliError::usage(err),
                    _ => CliError::invalid(err),
                })
            }
        }
    }

    /// Reads `text` as the file at `path` would be read, with fixes
    /// applied before they are written: `None` when it no longer reads
    /// (the fixes are then not applied).
    pub(crate) fn reread(
        args: &ImportArgs,
        framework: Option<interop::Framework>,
        path: &Path,
        text: &str,
    ) -> Option<Read> {
        let (detected, result) = match framework {
            Some(f) => (None, interop::import_text(f, path, text, &options(args))),
            None => interop::import_text_detected(path, text, &options(args)),
        };
        let framework = framework.or(detected.as_ref().map(|d| d.framework));
        Read::from_result(framework, detected, result).ok()
    }

    /// The read of an import's result; `Err` when the file did not read.
    fn from_result(
        framework: Option<interop::Framework>,
        detected: Option<interop::Detected>,
        result: Result<interop::Imported, ImportError>,
    ) -> Result<Read, ImportError> {
        match result {
            Ok(imported) => Ok(Read {
                files: imported.files.clone(),
                imported: Some(imported),
                framework,
                detected,
            }),
            Err(ImportError::Invalid { files }) => Ok(Read {
                imported: None,
                files,
                framework,
                detected,
            }),
            Err(err) => Err(err),
        }
    }

    /// Whether the batch is reported with confidence: read, with no error
    /// and nothing of the batch vocabulary left unread.
    pub(crate) fn confident(&self) -> bool {
        self.imported
            .as_ref()
            .is_some_and(interop::Imported::confident)
    }

    /// The note that the batch is not reported with confidence, when
    /// batch settings were left unread and nothing else is wrong.
    pub(crate) fn unread_note(&self, name: &str) -> Option<String> {
        let unread = self
            .files
            .iter()
            .flat_map(|f| f.findings.iter())
            .filter(|f| f.finding.code == Code::Unread)
            .count();
        (unread > 0 && self.count(Severity::Error) == 0).then(|| {
            format!(
                "note: {name}: the batch is not reported with confidence: {unread} batch setting{} left unread (accum::interop::unread above)",
                if unread == 1 { " was" } else { "s were" }
            )
        })
    }

    /// The line that says which framework was detected and why, when none
    /// was named.
    pub(crate) fn detected_note(&self, name: &str) -> Option<String> {
        let d = self.detected.as_ref()?;
        let keys: Vec<String> = d.evidence.iter().map(|k| format!("`{k}`")).collect();
        Some(format!(
            "note: {name}: read as {} ({}): {} identif{} it{}",
            d.framework.display_name(),
            d.framework.key(),
            crate::output::listed(&keys),
            if keys.len() == 1 { "ies" } else { "y" },
            if d.confident {
                ""
            } else {
                "; name the framework before the file if it is another"
            }
        ))
    }

    /// How many findings have `severity`.
    pub(crate) fn count(&self, severity: Severity) -> usize {
        self.files
            .iter()
            .map(|f| diagnostic::count(&f.findings, severity))
            .sum()
    }
}

/// The files' findings as the renderers take them.
pub(crate) fn findings_of(files: &[FileReport]) -> Vec<FileFindings<'_>> {
    files
        .iter()
        .map(|f| FileFindings {
            name: &f.name,
            text: &f.text,
            diagnostics: &f.findings,
        })
        .collect()
}

/// The findings in one of the line formats, or SARIF; `None` for human and
/// JSON, which each command writes its own way.
pub(crate) fn render_lines(
    format: DiagnosticFormat,
    reports: &[FileFindings<'_>],
) -> Result<Option<String>, CliError> {
    Ok(match format {
        DiagnosticFormat::Short => Some(
            reports
                .iter()
                .map(|f| diagnostic::render_short(f.name, f.text, f.diagnostics))
                .collect(),
        ),
        DiagnosticFormat::Github => Some(formats::render_github(reports)),
        DiagnosticFormat::Sarif => {
            let sarif = serde_json::to_string_pretty(&formats::to_sarif(reports))
                .map_err(|err| CliError::usage(format!("cannot render SARIF: {err}")))?;
            Some(format!("{}\n", crate::escape::json(sarif)))
        }
        DiagnosticFormat::Human | DiagnosticFormat::Json => None,
    })
}

/// `lint --format json`'s object for one file.
pub(crate) fn json_summary(
    name: &str,
    read: &Read,
    errors: usize,
    warnings: usize,
) -> serde_json::Value {
    serde_json::json!({
        "file": name,
        "framework": read.framework.map(interop::Framework::key),
        "detected": detected_json(read.detected.as_ref()),
        "errors": errors,
        "warnings": warnings,
        "confident": read.confident(),
        "findings": json_findings(&read.files),
        "config": null,
        "batch_schedule": read.imported.as_ref().and_then(|i| i.batch_schedule.as_ref()),
    })
}

/// The JSON of an import that read no file: the one finding, located.
pub(crate) fn failure_json(
    framework: Option<interop::Framework>,
    detected: Option<&interop::Detected>,
    name: &str,
    err: &ImportError,
) -> Option<serde_json::Value> {
    let (file, line, column, code, message, help) = match err {
        ImportError::Read { name, reason } => (
            name.clone(),
            1,
            1,
            Code::File,
            reason.clone(),
            "check the path and that the file is readable",
        ),
        ImportError::Syntax {
            name,
            line,
            column,
            message,
        } => (
            name.clone(),
            *line,
            *column,
            Code::Syntax,
            message.clone(),
            "fix the syntax at this line and column",
        ),
        // An invalid file has its findings, printed with the batch.
        _ => return None,
    };
    let finding = diagnostic::DiagnosticJson {
        file,
        line,
        column,
        end_line: line,
        end_column: column,
        path: String::new(),
        severity: Severity::Error,
        code,
        message,
        help: Some(help.to_owned()),
        fixes: Vec::new(),
        consequences: Vec::new(),
    };
    Some(serde_json::json!({
        "file": name,
        "framework": framework.map(interop::Framework::key),
        "detected": detected_json(detected),
        "errors": 1,
        "warnings": 0,
        "confident": false,
        "findings": [finding],
        "config": null,
        "batch_schedule": null,
    }))
}

/// The detection as JSON: the framework, the keys that identify it, and
/// whether it leads by two signs or more; `null` when a framework was named.
pub(crate) fn detected_json(detected: Option<&interop::Detected>) -> serde_json::Value {
    detected.map_or(serde_json::Value::Null, |d| {
        serde_json::json!({
            "framework": d.framework.key(),
            "evidence": d.evidence,
            "confident": d.confident,
        })
    })
}

/// Every file's findings as JSON, in file order.
pub(crate) fn json_findings(files: &[FileReport]) -> Vec<diagnostic::DiagnosticJson> {
    files
        .iter()
        .flat_map(|f| diagnostic::to_json(&f.name, &f.text, &f.findings))
        .collect()
}
