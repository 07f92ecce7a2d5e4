//! `accum sheet FILE`: the run's data sheet in Markdown, HTML or JSON, from
//! the typed configuration and an optional run report.

use crate::cli::{SheetArgs, SheetFormat};
use crate::commands::Hooks;
use crate::error::{CliError, Exit};
use crate::fsio::write_atomic;
use crate::load::{CliConfig, Schema, load_checked};
use crate::output::print_text;

pub(crate) fn run<T: CliConfig>(args: &SheetArgs, hooks: &Hooks<T>) -> Result<Exit, CliError> {
    let checked = load_checked::<T>(&args.file, hooks.check)?;
    let schema = Schema::<T>::builtin();
    let report = match &args.report {
        Some(path) => {
            let text = crate::source::read_text(path, crate::source::MAX_REPORT_BYTES)
                .map_err(|err| CliError::usage(format!("cannot read the run report: {err}")))?;
            let report: accum_core::RunReport = serde_json::from_str(&text).map_err(|err| {
                CliError::invalid(format!(
                    "{}: not an accum run report: {err}",
                    path.display()
                ))
            })?;
            Some((path.display().to_string(), report))
        }
        None => None,
    };
    let extras = (hooks.sheet)(&checked.config, &checked.plan);
    let model = crate::sheet::build::build(
        &checked.doc,
        &schema.map,
        &checked.plan,
        extras,
        report
            .as_ref()
            .map(|(source, report)| (source.clone(), report)),
    );
    let format = args.format.unwrap_or_else(|| {
        match args
            .output
            .as_ref()
            .and_then(|p| p.extension())
            .and_then(|e| e.to_str())
        {
            Some("html" | "htm") => SheetFormat::Html,
            Some("json") => SheetFormat::Json,
            _ => SheetFormat::Md,
        }
    });
    let text = match format {
        SheetFormat::Json => {
            let mut text = serde_json::to_string_pretty(&model)
                .map_err(|err| CliError::usage(format!("cannot render JSON: {err}")))?;
            text.push('\n');
            text
        }
        SheetFormat::Html => crate::sheet::html::render(&model),
        SheetFormat::Md => {
            // The curve goes beside the Markdown file, linked by a relative path.
            let curve = match (&args.output, &model.trial) {
                (Some(out), Some(trial)) => {
                    let svg_path = out.with_extension("svg");
                    write_atomic(
                        &svg_path,
                        crate::sheet::svg::render(&trial.curve).as_bytes(),
                    )?;
                    svg_path
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                }
                _ => None,
            };
            crate::sheet::markdown::render(&model, curve.as_deref())
        }
    };
    match &args.output {
        Some(out) => write_atomic(out, text.as_bytes())?,
        None => print_text(&text)?,
    }
    Ok(Exit::Ok)
}
