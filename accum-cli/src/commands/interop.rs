//! `accum import`, `accum export` and `accum lint`: the batch settings of
//! DeepSpeed, Megatron-LM, Hugging Face, Lightning and axolotl, read,
//! checked and written through accum's config.

use accum_core::Code;
use accum_core::config::TrainingConfig;
use accum_core::config::partial::PartialConfig;

use std::path::Path;

use crate::cli::{DiagnosticFormat, ExportArgs, ImportArgs, LintArgs};
use crate::diagnostic::{self, Severity};
use crate::error::{CliError, Exit};
use crate::formats::{self, FileFindings};
use crate::fsio::write_atomic;
use crate::interop::{self, FileReport, ImportError, ImportOptions};
use crate::load::load_checked;
use crate::output::{print_json, print_text};

fn options(args: &ImportArgs) -> ImportOptions {
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
        deepspeed_config: args.deepspeed_config.clone(),
        accelerate_config: args.accelerate_config.clone(),
        search_dirs: Vec::new(),
    }
}

/// One framework file read: the import when there is a batch to train
/// with, and every file's findings (a recipe's DeepSpeed file has its own).
struct Read {
    imported: Option<interop::Imported>,
    files: Vec<FileReport>,
}

impl Read {
    fn of(args: &ImportArgs, file: &Path) -> Result<Read, CliError> {
        match interop::import_file(args.framework, file, &options(args)) {
            Ok(imported) => Ok(Read {
                files: imported.files.clone(),
                imported: Some(imported),
            }),
            Err(ImportError::Invalid { files }) => Ok(Read {
                imported: None,
                files,
            }),
            Err(err) => {
                // A file that cannot be read or parsed is one finding with
                // its location, in JSON as every other outcome; the exit
                // codes stay those of a usage error (unreadable) and of an
                // invalid file.
                if args.format == DiagnosticFormat::Json
                    && let Some(json) = failure_json(args, &file.display().to_string(), &err)
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

    /// Whether the batch is reported with confidence: read, with no error
    /// and nothing of the batch vocabulary left unread.
    fn confident(&self) -> bool {
        self.imported
            .as_ref()
            .is_some_and(interop::Imported::confident)
    }

    /// The note that the batch is not reported with confidence, when
    /// batch settings were left unread and nothing else is wrong.
    fn unread_note(&self, name: &str) -> Option<String> {
        let unread = self
            .files
            .iter()
            .flat_map(|f| f.findings.iter())
            .filter(|f| f.code == Code::Unread)
            .count();
        (unread > 0 && self.count(Severity::Error) == 0).then(|| {
            format!(
                "note: {name}: the batch is not reported with confidence: {unread} batch setting{} left unread (accum::interop::unread above)",
                if unread == 1 { " was" } else { "s were" }
            )
        })
    }

    /// How many findings have `severity`.
    fn count(&self, severity: Severity) -> usize {
        self.files
            .iter()
            .map(|f| diagnostic::count(&f.findings, severity))
            .sum()
    }
}

/// The files' findings as the renderers take them.
fn findings_of(files: &[FileReport]) -> Vec<FileFindings<'_>> {
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
fn render_lines(
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
            Some(format!("{sarif}\n"))
        }
        DiagnosticFormat::Human | DiagnosticFormat::Json => None,
    })
}

/// Whether stderr takes colours.
fn stderr_color() -> bool {
    std::env::var_os("NO_COLOR").is_none() && std::io::IsTerminal::is_terminal(&std::io::stderr())
}

/// `accum import`: the config on stdout (or in `-o`), the findings on
/// stderr in the chosen format (`json` prints both as one object).
pub(crate) fn import(args: &ImportArgs) -> Result<Exit, CliError> {
    let name = args.file.display().to_string();
    let read = Read::of(args, &args.file)?;
    let errors = read.count(Severity::Error);
    let reports = findings_of(&read.files);
    match args.format {
        DiagnosticFormat::Json => print_json(&serde_json::json!({
            "file": name,
            "framework": args.framework.key(),
            "errors": errors,
            "warnings": read.count(Severity::Warning),
            "confident": read.confident(),
            "findings": json_findings(&read.files),
            "config": read.imported.as_ref().map(|i| &i.config),
            "batch_schedule": read.imported.as_ref().and_then(|i| i.batch_schedule.as_ref()),
        }))?,
        DiagnosticFormat::Human => {
            eprint!("{}", interop::render_reports(&read.files, stderr_color()));
            if let Some(note) = read.unread_note(&name) {
                eprintln!("{note}");
            }
            eprint!("{}", formats::explain_hint(&reports));
        }
        format => eprint!(
            "{}",
            render_lines(format, &reports)?.expect("a line format")
        ),
    }
    if args.format != DiagnosticFormat::Json
        && let Some(imported) = &read.imported
    {
        let toml = imported.to_toml();
        match &args.output {
            // A file is written only when the import succeeds: a
            // failing command leaves the output as it was.
            Some(out) if errors == 0 => write_atomic(out, toml.as_bytes())?,
            Some(out) => eprintln!(
                "{name}: {} not written: fix the errors above",
                out.display()
            ),
            None => print_text(&toml)?,
        }
    }
    if read.imported.is_none() {
        return Err(CliError::invalid(format!(
            "{name}: no batch to train with: fix the errors above"
        )));
    }
    Ok(crate::commands::validate::verdict(
        &reports,
        args.deny_warnings,
    ))
}

/// `accum lint FRAMEWORK FILE…`: only the findings, of every file, on stdout
/// (human findings on stderr, a summary per file on stdout), so that
/// pre-commit can pass it every changed file at once.
pub(crate) fn lint(args: &LintArgs) -> Result<Exit, CliError> {
    let import = &args.import;
    if let Some(out) = &import.output {
        // `-o` is `import`'s, where it writes the config; lint writes no
        // file, and an option that does nothing must not look as if it did.
        return Err(CliError::usage(format!(
            "`accum lint` writes no file, so `-o {}` has nothing to write: use `accum import … -o {}` for the config",
            out.display(),
            out.display()
        )));
    }
    let mut paths = vec![import.file.clone()];
    paths.extend(args.more.iter().cloned());
    let mut reads = Vec::new();
    for path in &paths {
        reads.push((path.display().to_string(), Read::of(import, path)?));
    }
    let all: Vec<FileReport> = reads.iter().flat_map(|(_, r)| r.files.clone()).collect();
    let reports = findings_of(&all);
    let summary = |name: &str, read: &Read| {
        let (errors, warnings) = (read.count(Severity::Error), read.count(Severity::Warning));
        json_summary(name, import, read, errors, warnings)
    };
    match import.format {
        DiagnosticFormat::Json => match reads.as_slice() {
            [(name, read)] => print_json(&summary(name, read))?,
            _ => print_json(&serde_json::json!({
                "files": reads.iter().map(|(name, read)| summary(name, read)).collect::<Vec<_>>(),
            }))?,
        },
        DiagnosticFormat::Human => {
            let mut out = String::new();
            for (name, read) in &reads {
                eprint!("{}", interop::render_reports(&read.files, stderr_color()));
                if let Some(note) = read.unread_note(name) {
                    eprintln!("{note}");
                }
                let (errors, warnings) =
                    (read.count(Severity::Error), read.count(Severity::Warning));
                out.push_str(&if errors + warnings == 0 {
                    format!("{name}: ok ({})\n", import.framework.display_name())
                } else {
                    format!(
                        "{name}: {errors} error{}, {warnings} warning{}\n",
                        if errors == 1 { "" } else { "s" },
                        if warnings == 1 { "" } else { "s" }
                    )
                });
            }
            eprint!("{}", formats::explain_hint(&reports));
            print_text(&out)?;
        }
        format => print_text(&render_lines(format, &reports)?.expect("a line format"))?,
    }
    Ok(crate::commands::validate::verdict(
        &reports,
        import.deny_warnings,
    ))
}

/// `lint --format json`'s object for one file.
fn json_summary(
    name: &str,
    args: &ImportArgs,
    read: &Read,
    errors: usize,
    warnings: usize,
) -> serde_json::Value {
    serde_json::json!({
        "file": name,
        "framework": args.framework.key(),
        "errors": errors,
        "warnings": warnings,
        "confident": read.confident(),
        "findings": json_findings(&read.files),
        "config": null,
        "batch_schedule": read.imported.as_ref().and_then(|i| i.batch_schedule.as_ref()),
    })
}

/// The JSON of an import that read no file: the one finding, located.
fn failure_json(args: &ImportArgs, name: &str, err: &ImportError) -> Option<serde_json::Value> {
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
    };
    Some(serde_json::json!({
        "file": name,
        "framework": args.framework.key(),
        "errors": 1,
        "warnings": 0,
        "confident": false,
        "findings": [finding],
        "config": null,
        "batch_schedule": null,
    }))
}

fn json_findings(files: &[FileReport]) -> Vec<diagnostic::DiagnosticJson> {
    files
        .iter()
        .flat_map(|f| diagnostic::to_json(&f.name, &f.text, &f.findings))
        .collect()
}

/// `accum export`: what the config file says (not its defaults), for the
/// framework; notes about keys the framework's file does not carry go to
/// stderr.
pub(crate) fn export(args: &ExportArgs) -> Result<Exit, CliError> {
    let checked = load_checked::<TrainingConfig>(&args.config, TrainingConfig::check)?;
    let partial: PartialConfig = serde_json::from_value(checked.doc.to_json())
        .map_err(|err| CliError::invalid(format!("{}: {err}", args.config.display())))?;
    let exported = interop::export(args.framework, &partial).map_err(CliError::invalid)?;
    for note in &exported.notes {
        eprintln!("note: {note}");
    }
    match &args.output {
        Some(out) => write_atomic(out, exported.text.as_bytes())?,
        None => print_text(&exported.text)?,
    }
    Ok(Exit::Ok)
}
