//! `accum import`, `accum export` and `accum lint`: the batch settings of
//! DeepSpeed, Megatron-LM, Hugging Face, Lightning and axolotl, read,
//! checked and written through accum's config.

use accum_core::config::TrainingConfig;
use accum_core::config::partial::PartialConfig;

use super::fixes::Changed;
use crate::cli::{DiagnosticFormat, ExportArgs, ImportArgs, LintArgs};
use crate::convert::{Read, findings_of, json_findings, json_summary, render_lines};
use crate::diagnostic::Severity;
use crate::error::{CliError, Exit};
use crate::fix::Applicability;
use crate::formats;
use crate::interop::{self, FileReport};
use crate::load::load_checked;
use crate::outfile::{FileFormat, output_format};
use crate::output::{eprint_safe, eprintln_safe};
use crate::output::{print_json, print_text};
use crate::writes::write_atomic;

/// `accum import`: the config on stdout (or in `-o`), the findings on
/// stderr in the chosen format (`json` prints both as one object).
pub(crate) fn import(args: &ImportArgs) -> Result<Exit, CliError> {
    let (framework, files) = targets(args, &[])?;
    let [file] = files.as_slice() else {
        return Err(CliError::usage(format!(
            "`accum import` reads one file, and {} were given: use `accum lint` to check several",
            files.len()
        )));
    };
    let name = file.display().to_string();
    // The name is checked before the work: the config is written in the
    // format of its extension.
    let out_format = args
        .output
        .as_deref()
        .map(|out| {
            output_format(
                out,
                &[FileFormat::Toml, FileFormat::Yaml, FileFormat::Json],
                None,
                "import",
            )
        })
        .transpose()?;
    let read = Read::of(args, framework, file)?;
    let errors = read.count(Severity::Error);
    let reports = findings_of(&read.files);
    match args.format {
        DiagnosticFormat::Json => print_json(&serde_json::json!({
            "file": name,
            "framework": read.framework.map(interop::Framework::key),
            "detected": crate::convert::detected_json(read.detected.as_ref()),
            "errors": errors,
            "warnings": read.count(Severity::Warning),
            "confident": read.confident(),
            "findings": json_findings(&read.files),
            "config": read.imported.as_ref().map(|i| &i.config),
            "batch_schedule": read.imported.as_ref().and_then(|i| i.batch_schedule.as_ref()),
        }))?,
        DiagnosticFormat::Human => {
            if let Some(note) = read.detected_note(&name) {
                eprintln_safe!("{note}");
            }
            crate::output::eprint_styled(&interop::render_reports(
                &read.files,
                crate::style::stderr(),
            ));
            if let Some(note) = read.unread_note(&name) {
                eprintln_safe!("{note}");
            }
            eprint_safe!("{}", formats::explain_hint(&reports));
        }
        format => eprint_safe!(
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
            Some(out) if errors == 0 => {
                let text = match out_format {
                    Some(FileFormat::Json) => serde_json::to_string_pretty(&imported.config)
                        .map(|t| t + "\n")
                        .map_err(|err| CliError::usage(format!("cannot render JSON: {err}")))?,
                    Some(FileFormat::Yaml) => serde_saphyr::to_string(&imported.config)
                        .map_err(|err| CliError::usage(format!("cannot render YAML: {err}")))?,
                    _ => toml,
                };
                write_atomic(out, text.as_bytes())?;
            }
            Some(out) => eprintln_safe!(
                "{name}: {} not written: fix the errors above",
                accum_core::shown::path(out)
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
            accum_core::shown::path(out),
            accum_core::shown::path(out)
        )));
    }
    let (framework, paths) = targets(import, &args.more)?;
    let allowed = args.fixing.allowed();
    let mut reads = Vec::new();
    let mut changed = Vec::new();
    for path in &paths {
        let mut read = Read::of(import, framework, path)?;
        if let Some(allowed) = allowed {
            let (fixed, after) = fix_rounds(import, framework, path, read, allowed)?;
            read = after;
            changed.extend(fixed);
        }
        reads.push((path.display().to_string(), read));
    }
    if args.fixing.diff {
        return super::fixes::print_diffs(&changed);
    }
    if args.fixing.fix && !changed.is_empty() {
        super::fixes::write_fixed(&changed)?;
    }
    let all: Vec<FileReport> = reads.iter().flat_map(|(_, r)| r.files.clone()).collect();
    let reports = findings_of(&all);
    let summary = |name: &str, read: &Read| {
        let (errors, warnings) = (read.count(Severity::Error), read.count(Severity::Warning));
        json_summary(name, read, errors, warnings)
    };
    if args.statistics {
        print_text(&crate::commands::validate::statistics(&reports))?;
        return Ok(crate::commands::validate::verdict(
            &reports,
            import.deny_warnings,
        ));
    }
    match import.format {
        DiagnosticFormat::Json => match reads.as_slice() {
            [(name, read)] => print_json(&summary(name, read))?,
            _ => print_json(&serde_json::json!({
                "files": reads.iter().map(|(name, read)| summary(name, read)).collect::<Vec<_>>(),
            }))?,
        },
        DiagnosticFormat::Human => {
            let mut out = String::new();
            for (file, read) in &reads {
                let name = file;
                if let Some(note) = read.detected_note(name) {
                    eprintln_safe!("{note}");
                }
                crate::output::eprint_styled(&interop::render_reports(
                    &read.files,
                    crate::style::stderr(),
                ));
                if let Some(note) = read.unread_note(name) {
                    eprintln_safe!("{note}");
                }
                let (errors, warnings) =
                    (read.count(Severity::Error), read.count(Severity::Warning));
                // One line per file, whatever its name holds.
                let name = crate::escape::line(name);
                let verdict = if errors + warnings == 0 {
                    format!(
                        "{name}: ok ({})",
                        read.framework.map_or("?", interop::Framework::display_name)
                    )
                } else {
                    // What --fix can fix: the findings of the file named
                    // (the files it names are not edited).
                    let findings = read
                        .files
                        .iter()
                        .filter(|f| f.name == *file)
                        .flat_map(|f| &f.findings);
                    format!(
                        "{name}: {errors} error{}, {warnings} warning{}{}",
                        if errors == 1 { "" } else { "s" },
                        if warnings == 1 { "" } else { "s" },
                        crate::diagnostic::fixable_note(findings)
                    )
                };
                out.push_str(&match derived_batch(read) {
                    Some(batch) if errors == 0 => format!("{verdict}: {batch}\n"),
                    _ => format!("{verdict}\n"),
                });
            }
            eprint_safe!("{}", formats::explain_hint(&reports));
            print_text(&out)?;
        }
        format => print_text(&render_lines(format, &reports)?.expect("a line format"))?,
    }
    Ok(crate::commands::validate::verdict(
        &reports,
        import.deny_warnings,
    ))
}

/// Applies the fixes of the findings in the file at `path` up to
/// `allowed`, reads the text again as the file would be read, and repeats
/// while fixes apply ([`super::fixes::rounds`]): the change, when there is
/// one, and the last read. A round whose text no longer reads is not
/// applied. Only the file named is edited; the findings in files it names
/// are left to their own lint.
fn fix_rounds(
    args: &ImportArgs,
    framework: Option<interop::Framework>,
    path: &std::path::Path,
    read: Read,
    allowed: Applicability,
) -> Result<(Option<Changed>, Read), CliError> {
    let name = path.display().to_string();
    let named = |read: &Read| {
        read.files
            .iter()
            .find(|f| f.name == name)
            .map(|f| f.text.clone())
    };
    let Some(original) = named(&read) else {
        return Ok((None, read));
    };
    let (fixed, read) = super::fixes::rounds(
        read,
        allowed,
        |read| {
            read.files
                .iter()
                .find(|f| f.name == name)
                .map(|f| (f.text.as_str(), f.findings.as_slice()))
        },
        |text| Ok(Read::reread(args, framework, path, &text)),
    )?;
    let text = named(&read).unwrap_or_else(|| original.clone());
    let change = (fixed > 0 && text != original).then(|| Changed {
        path: path.to_owned(),
        name,
        original,
        text,
        fixed,
    });
    Ok((change, read))
}

/// The batch a file trains with, as `accum lint` prints it beside its
/// verdict: `m 16 × A 2 × D 32 = 1,024`, with ` (L 4,096)` when the
/// sequence length is fixed and the final batch of a ramp-up named as such.
/// `None` when the file gives no plan.
fn derived_batch(read: &Read) -> Option<String> {
    let imported = read.imported.as_ref()?;
    let plan = imported.config.plan().ok()?;
    let n = accum_core::group_digits;
    let mut line = format!(
        "m {} × A {} × D {} = {}",
        n(plan.micro_batch()),
        n(plan.accumulation()),
        n(plan.replicas()),
        n(plan.effective_batch().get())
    );
    if let Some(len) = plan.seq_len() {
        line.push_str(&format!(" (L {})", n(len)));
    }
    if imported.batch_schedule.is_some() {
        line.push_str(", after the batch ramp-up");
    }
    Some(line)
}

/// The framework named, if any, and the files; a framework's name given
/// alone is a usage error that says the file is missing.
fn targets(
    args: &ImportArgs,
    more: &[std::path::PathBuf],
) -> Result<(Option<interop::Framework>, Vec<std::path::PathBuf>), CliError> {
    let (framework, files) = args.targets(more);
    if framework.is_none()
        && let [only] = files.as_slice()
        && let Some(word) = only.to_str()
        && let Ok(named) = word.parse::<interop::Framework>()
        && !only.exists()
    {
        return Err(CliError::usage(format!(
            "`{word}` names a framework, and no file follows it: write `{word} FILE` (the file alone also works: accum names its framework)",
            word = named.key()
        )));
    }
    Ok((framework, files))
}

/// `accum export`: what the config file says (not its defaults), for the
/// framework; notes about keys the framework's file does not carry go to
/// stderr.
pub(crate) fn export(args: &ExportArgs) -> Result<Exit, CliError> {
    if let Some(out) = &args.output {
        output_format(out, &[export_format(args.framework)], None, "export")?;
    }
    let checked = load_checked::<TrainingConfig>(&args.config, TrainingConfig::check)?;
    let partial: PartialConfig = serde_json::from_value(checked.doc.to_json()).map_err(|err| {
        CliError::invalid(format!("{}: {err}", accum_core::shown::path(&args.config)))
    })?;
    let exported = interop::export(args.framework, &partial).map_err(CliError::invalid)?;
    for note in &exported.notes {
        eprintln_safe!("note: {note}");
    }
    match &args.output {
        Some(out) => write_atomic(out, exported.text.as_bytes())?,
        None => print_text(&exported.text)?,
    }
    Ok(Exit::Ok)
}

/// The format of a framework's exported file: DeepSpeed's config and
/// Hugging Face's training arguments are JSON, Megatron-LM's an argument
/// list, the others YAML.
fn export_format(framework: interop::Framework) -> FileFormat {
    use interop::Framework;
    match framework {
        Framework::DeepSpeed | Framework::HuggingFace => FileFormat::Json,
        Framework::Megatron => FileFormat::Shell,
        Framework::Lightning | Framework::NeMo | Framework::Axolotl | Framework::LitGpt => {
            FileFormat::Yaml
        }
    }
}
