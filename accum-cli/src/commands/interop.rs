//! `accum import`, `accum export` and `accum lint`: the batch settings of
//! DeepSpeed, Megatron-LM, Hugging Face, Lightning and axolotl, read,
//! checked and written through accum's config.

use accum_core::config::TrainingConfig;
use accum_core::config::partial::PartialConfig;

use crate::cli::{DiagnosticFormat, ExportArgs, ImportArgs};
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

/// `accum import` (with `lint`, only the findings).
pub(crate) fn import(args: &ImportArgs, lint: bool) -> Result<Exit, CliError> {
    let name = args.file.display().to_string();
    let color = std::env::var_os("NO_COLOR").is_none()
        && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let (imported, files) = match interop::import_file(args.framework, &args.file, &options(args)) {
        Ok(imported) => {
            let files = imported.files.clone();
            (Some(imported), files)
        }
        Err(ImportError::Invalid { files }) => (None, files),
        Err(err @ ImportError::Read { .. }) => return Err(CliError::usage(err)),
        Err(err) => return Err(CliError::invalid(err)),
    };
    let findings = || files.iter().flat_map(|f| f.findings.iter());
    let errors = findings().filter(|f| f.severity == Severity::Error).count();
    let warnings = findings().count() - errors;
    let reports: Vec<FileFindings<'_>> = files
        .iter()
        .map(|f| FileFindings {
            name: &f.name,
            text: &f.text,
            diagnostics: &f.findings,
        })
        .collect();
    // `lint`'s findings are its output; `import`'s stand beside the config.
    let findings_out = |text: &str| {
        if lint {
            print_text(text)
        } else {
            eprint!("{text}");
            Ok(())
        }
    };
    match args.format {
        DiagnosticFormat::Json => print_json(&serde_json::json!({
            "file": name,
            "framework": args.framework.key(),
            "errors": errors,
            "warnings": warnings,
            "findings": json_findings(&files),
            "config": if lint { None } else { imported.as_ref().map(|i| &i.config) },
            "batch_schedule": imported.as_ref().and_then(|i| i.batch_schedule.as_ref()),
        }))?,
        DiagnosticFormat::Short => findings_out(
            &reports
                .iter()
                .map(|f| diagnostic::render_short(f.name, f.text, f.diagnostics))
                .collect::<String>(),
        )?,
        DiagnosticFormat::Github => findings_out(&formats::render_github(&reports))?,
        DiagnosticFormat::Sarif => {
            let sarif = serde_json::to_string_pretty(&formats::to_sarif(&reports))
                .map_err(|err| CliError::usage(format!("cannot render SARIF: {err}")))?;
            findings_out(&format!("{sarif}\n"))?;
        }
        DiagnosticFormat::Human => {
            eprint!("{}", interop::render_reports(&files, color));
            eprint!("{}", formats::explain_hint(&reports));
            if lint {
                let summary = if errors + warnings == 0 {
                    format!("{name}: ok ({})\n", args.framework.display_name())
                } else {
                    format!(
                        "{name}: {errors} error{}, {warnings} warning{}\n",
                        if errors == 1 { "" } else { "s" },
                        if warnings == 1 { "" } else { "s" }
                    )
                };
                print_text(&summary)?;
            }
        }
    }
    if !lint
        && args.format != DiagnosticFormat::Json
        && let Some(imported) = &imported
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
    if imported.is_none() && !lint {
        return Err(CliError::invalid(format!(
            "{name}: no batch to train with: fix the errors above"
        )));
    }
    Ok(crate::commands::validate::verdict(
        &reports,
        args.deny_warnings,
    ))
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
