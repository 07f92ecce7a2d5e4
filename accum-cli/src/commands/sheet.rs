//! `accum sheet FILE`: the run's data sheet in Markdown, HTML or JSON, from
//! the typed configuration and an optional run report. Building and
//! rendering the sheet is `crate::sheet`'s; this is the command's front end.

use crate::cli::SheetArgs;
use crate::commands::Hooks;
use crate::error::{CliError, Exit};
use crate::load::{CliConfig, load_checked};

pub(crate) fn run<T: CliConfig>(args: &SheetArgs, hooks: &Hooks<T>) -> Result<Exit, CliError> {
    let checked = load_checked::<T>(&args.file, hooks.check)?;
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
        &checked.config,
        &checked.plan,
        &args.file.display().to_string(),
        extras,
        report
            .as_ref()
            .map(|(source, report)| (source.clone(), report)),
    );
    crate::sheet::output::write(&model, args.format, args.output.as_deref())?;
    Ok(Exit::Ok)
}
