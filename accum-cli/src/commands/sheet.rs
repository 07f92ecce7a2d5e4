//! `accum sheet FILE`: the run's data sheet in Markdown, HTML or JSON, from
//! the typed configuration and an optional run report; `--format csv`
//! gives the report's per-update statistics instead. Building and
//! rendering the sheet is `crate::sheet`'s; this is the command's front end.

use std::path::Path;

use accum_core::{AccumConfig, Code};

use crate::cli::{SheetArgs, SheetFormat};
use crate::commands::Hooks;
use crate::error::{CliError, Exit};
use crate::load::{CliConfig, load_checked};
use crate::output::eprintln_safe;
use crate::sheet::belongs::{Belonging, belonging};
use crate::sheet::extras::Extras;
use crate::sheet::schema::Read;
use crate::sheet::series::Attempts;
use crate::source::Document;

/// Reads the run report at `path`.
pub(crate) fn read_report(path: &Path) -> Result<accum_core::report::RunReport, CliError> {
    let text = crate::source::read_text(path, crate::source::MAX_REPORT_BYTES)
        .map_err(|err| CliError::usage(format!("cannot read the run report: {err}")))?;
    let report: accum_core::report::RunReport = serde_json::from_str(&text).map_err(|err| {
        CliError::invalid(format!(
            "{}: not an accum run report: {err}",
            accum_core::shown::path(path)
        ))
    })?;
    // A report is untrusted, and so is the stream it names: one that is
    // refused (outside the report's folder, a device, a FIFO, too large)
    // refuses the report. A stream that is only missing leaves the
    // report's own updates, and the sheet says so.
    match accum_core::report::stream_file(&report, path) {
        // The stream is read with the report: an input of the command like
        // the report itself, so that no output replaces it.
        Ok(Some(stream)) => crate::source::note_input(&stream),
        Ok(None) => {}
        Err(err) if matches!(err.kind, accum_core::report::StatsErrorKind::Refused(_)) => {
            return Err(CliError::invalid(format!(
                "{}: the report's stats_stream is not read: {err}; give a report whose stream is a file beside it",
                accum_core::shown::path(path)
            )));
        }
        Err(_) => {}
    }
    Ok(report)
}

pub(crate) fn run<T: CliConfig>(args: &SheetArgs, hooks: &Hooks<T>) -> Result<Exit, CliError> {
    // Any config type, through its schema: the stock binary renders a
    // user's run as the type's own binary would, without its sheet hook.
    if let Some(schema) = &args.schema {
        let (doc, read) = crate::sheet::schema::read(&args.file, schema)?;
        return match read {
            Read::Fixed(config) => render(args, &doc, &config, Extras::default()),
            Read::Variable(config) => render(args, &doc, &config, Extras::default()),
        };
    }
    let checked = load_checked::<T>(&args.file, hooks.check)?;
    let extras = (hooks.sheet)(&checked.config, &checked.plan);
    render(args, &checked.doc, &checked.config, extras)
}

/// The sheet of `config`, read from `doc`, with the report `--report`
/// names, in the format asked for.
fn render<C: AccumConfig>(
    args: &SheetArgs,
    doc: &Document,
    config: &C,
    extras: Extras,
) -> Result<Exit, CliError> {
    let view = crate::sheet::chart::View::new(args.log_y, args.range.as_deref())
        .map_err(CliError::usage)?;
    // The config passed its checks: its gate gives the plan.
    let staged = config.staged_plan().map_err(|findings| {
        CliError::invalid(format!(
            "{}: {findings}",
            accum_core::shown::path(&args.file)
        ))
    })?;
    let plan = *staged.final_plan();
    let report = match &args.report {
        Some(path) => Some((path.display().to_string(), read_report(path)?)),
        None => None,
    };
    // The output's name says the format (`crate::outfile`), checked before the work.
    let format = match &args.output {
        Some(out) => Some(crate::sheet::output::format_for(
            Some(out),
            args.format,
            "sheet",
        )?),
        None => args.format,
    };
    let file = accum_core::shown::path(&args.file).to_string();
    let belonging = match &report {
        Some((source, report)) => {
            // The planned length is the sheet's (its schedule, through the
            // stages); built once without the report to know it.
            let planned = crate::sheet::build::build(config, &plan, &file, extras.clone(), None)
                .summary
                .planned_updates;
            let mut found = belonging(report, &file, &doc.text, &staged, planned);
            // Another run's report: its configuration's hash is one more
            // thing that differs.
            if !found.differs.is_empty() {
                found.differs.extend(found.changed.take());
            }
            if !found.differs.is_empty() && !args.force {
                return Err(CliError::invalid(format!(
                    "{source} is not a report of {file}: {}; give the report of a run of {file}, or add --force to render it under a banner that says so",
                    found.differs.join("; ")
                )));
            }
            found
        }
        None => Belonging::default(),
    };
    if format == Some(SheetFormat::Csv) {
        let Some((source, report)) = &report else {
            return Err(CliError::usage(
                "--format csv gives the per-update statistics of a run: add `--report RUN.json`",
            ));
        };
        let mut problems = Vec::new();
        let attempts = Attempts::of(report, Path::new(source), &mut problems);
        for problem in &problems {
            eprintln_safe!("warning[{}]: {problem}", Code::Sheet);
        }
        // Row by row: the rows of a stream of any length are never held
        // together, in a file (its temporary, renamed when whole) or on
        // stdout.
        return match &args.output {
            Some(out) => {
                let mut file = crate::writes::Streamed::create(out)?;
                crate::sheet::csv::write(&attempts, &mut |rows| file.write(rows.as_bytes()))?;
                file.commit()?;
                crate::sheet::output::print_written(std::slice::from_ref(out))?;
                Ok(Exit::Ok)
            }
            None => {
                crate::sheet::csv::write(&attempts, &mut |rows| crate::output::print_text(rows))
                    .map(|()| Exit::Ok)
            }
        };
    }
    let mut model = crate::sheet::build::build(
        config,
        &plan,
        &args.file.display().to_string(),
        extras,
        report
            .as_ref()
            .map(|(source, report)| (source.clone(), report)),
    );
    for chart in model.trial.iter_mut().flat_map(|t| t.charts.iter_mut()) {
        view.apply(chart);
    }
    model.mismatch = belonging.differs;
    model.config_changed = belonging.changed;
    crate::sheet::output::write(&model, format, args.output.as_deref(), "sheet")?;
    Ok(Exit::Ok)
}
