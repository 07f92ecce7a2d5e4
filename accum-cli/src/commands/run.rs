//! `accum run`: the engine on the built-in model and data, with a progress
//! bar in updates, logs in the declared axis, an atomic run report of
//! bounded size, an optional stats stream beside it (every update, JSON
//! Lines) and an optional dump. A batch ramp-up (`[[batch.stages]]` or
//! `[batch.ramp]`) runs stage by stage, and the summary counts each stage.
//! Ctrl-C stops within the current microbatch (that group is not applied)
//! and the report is still written, with exit status 130; a second Ctrl-C
//! ends at once. With `--backend mpi` each MPI process runs one replica and
//! only rank 0 writes (report, dump, output); errors name the rank.
//!
//! With `--checkpoint DIR` the run writes checkpoints (`accum-checkpoint/1`,
//! [`accum_core::checkpoint`]) every `--checkpoint-every` and when it ends
//! or is stopped; `--resume DIR` continues from the last complete one,
//! under the same plan or another of the same global batch (`resume.rs`).
//!
//! The observers and the text around the run are [`crate::runner`]'s.

use std::io::IsTerminal;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Instant;

use accum_core::AccumConfig;
use accum_core::config::TrainingConfig;
use accum_core::engine::{DumpWriter, Engine, Fault, RunOptions};
use accum_core::group_digits;
use accum_core::report::{RunReport, StatsStream, stats_stream_beside};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::cli::{Backend, Format, RunArgs};
use crate::error::{CliError, Exit};
use crate::fsio::{Outputs, not_an_input};
use crate::load::load_checked;
use crate::output::eprintln_safe;
use crate::output::{print_json, print_text};
use crate::runner::{
    self, Checkpoints, KillInGroup, Progress, Stream, attach_backend, plural, ramp_text, stop_flag,
    summary, threads_cap,
};
use accum_core::fsio::Naming;

pub(crate) fn run(args: &RunArgs) -> Result<Exit, CliError> {
    let checked = load_checked::<TrainingConfig>(&args.file, TrainingConfig::check)?;
    let config = checked.config.engine_config();
    // `check` has accepted the stages already.
    let stages = checked
        .config
        .staged_plan()
        .map_err(|findings| CliError::invalid(format!("{}: {findings}", checked.doc.name)))?;
    let engine = Engine::new(&stages, &config)
        .map_err(|err| CliError::invalid(format!("{}: {err}", checked.doc.name)))?;
    let (mut engine, exit_sync) = attach_backend(engine, args.backend, &checked.doc.name)?;
    if let Some(threads) = args.threads {
        let cap = threads_cap(engine.local_ranks().len());
        if threads.get() > cap {
            eprintln_safe!(
                "note: --threads {} is more than this machine runs at once for {} replica(s); using {cap} per replica",
                threads.get(),
                engine.local_ranks().len()
            );
        }
        engine = engine.with_threads(threads.get().min(cap));
    }
    if let Some(at) = args.fail_at {
        engine.inject_failure(Fault {
            attempt: at.attempt,
            replica: at.replica,
            microbatch: at.microbatch,
        });
    }
    let resumed = match &args.resume {
        Some(dir) => Some(runner::resume(&mut engine, dir, &checked.doc)?),
        None => None,
    };
    let mut checkpoints = Checkpoints::new(args, &engine)?;
    // With one process per replica only rank 0 writes anything but errors.
    let ranks = engine.local_ranks();
    let lead = ranks.start == 0;
    let who = if args.backend == Backend::Mpi {
        format!("rank {} of {}: ", ranks.start, checked.plan.replicas())
    } else {
        String::new()
    };
    // Fail before the work, not after it, when the report cannot be written.
    if lead && let Some(path) = &args.report {
        crate::fsio::check_writable(path, Naming::Given)?;
    }
    let total = engine.total_updates().get();
    let done = engine.counters().applied_updates.get();
    let quiet = args.quiet || !lead;
    let bar = if quiet || !std::io::stderr().is_terminal() {
        ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden())
    } else {
        ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr_with_hz(10))
    };
    bar.set_style(
        ProgressStyle::with_template(runner::TEMPLATE)
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_position(done);
    let plan = checked.plan;
    if !quiet {
        let ramp = if stages.is_constant() {
            String::new()
        } else {
            format!(" after a ramp-up {}", ramp_text(&stages))
        };
        eprintln_safe!(
            "running {}: {} ({} updates, {} per update{ramp}, loss {} normalized, {} precision)",
            checked.doc.name,
            plan.batch_formula(),
            group_digits(total),
            plural(plan.effective_batch().get(), "example"),
            config.loss.normalization,
            config.precision.mode,
        );
        if let Some(resumed) = &resumed {
            eprintln_safe!("{}", resumed.note());
        }
    }
    let mut progress = Progress {
        bar,
        started: Instant::now(),
        print_lines: lead && args.format == Format::Text,
        quiet,
        print_error: None,
        loss_scaled: config.precision.mode == accum_core::settings::PrecisionMode::Fp16,
    };
    let stop = stop_flag();
    stop.store(false, Ordering::SeqCst);
    let mut dump = match args.dump.as_ref().filter(|_| lead) {
        Some(dir) => Some(DumpWriter::create(dir, &engine).map_err(|err| {
            let message = match err.refused {
                Some(_) => format!("{who}{err}"),
                None => format!("{who}{}: {err}", accum_core::shown::path(dir)),
            };
            exit_sync.fail_alone(CliError::usage(message))
        })?),
        None => None,
    };
    let mut stream = match args.report.as_ref().filter(|_| lead && args.stream_stats) {
        Some(path) => {
            // A name accum made beside the report: checked, like the
            // report, before the run.
            let path = stats_stream_beside(path);
            not_an_input(&path).map_err(|err| exit_sync.fail_alone(err))?;
            Some(Stream {
                out: StatsStream::create(&path)
                    .map_err(|err| exit_sync.fail_alone(CliError::usage(format!("{who}{err}"))))?,
                failed: None,
            })
        }
        None => None,
    };
    let mut kill = KillInGroup::new(args.kill_at);
    let result = {
        let mut options = RunOptions {
            stop: Some(&stop),
            ..RunOptions::default()
        }
        .observe(&mut progress)
        .observe(&mut kill);
        if let Some(dump) = dump.as_mut() {
            options = options.observe(dump);
        }
        if let Some(stream) = stream.as_mut() {
            options = options.observe(stream);
        }
        checkpoints.run(&mut engine, &mut options)
    };
    progress.bar.finish_and_clear();
    // A checkpoint that could not be written stops the run: continuing
    // would leave the user without the resume they asked for.
    if let Some(err) = checkpoints.failure.take() {
        return Err(exit_sync.fail(CliError::usage(format!("{who}{err}"))));
    }
    let elapsed = progress.started.elapsed();
    let report = result.map_err(|err| {
        exit_sync.fail(CliError::invalid(format!(
            "{who}{}: the run failed: {err}",
            checked.doc.name
        )))
    })?;
    if !lead {
        return Ok(Exit::Ok);
    }
    if let Some(err) = progress.print_error.take() {
        return Err(err);
    }
    // The run's end (or the boundary it was stopped at) is resumable too.
    checkpoints
        .at_end(&engine)
        .map_err(|err| CliError::usage(err.to_string()))?;
    if !quiet && let Some(path) = &checkpoints.last {
        eprintln_safe!(
            "checkpoint after update {}: {}",
            group_digits(engine.counters().applied_updates.get()),
            path.display()
        );
    }
    let mut report = report;
    // The stream and the report: both or neither.
    let mut outputs = Outputs::new();
    if let Some(stream) = stream {
        let name = stats_stream_beside(args.report.as_deref().unwrap_or(Path::new("run.json")));
        outputs.push(
            stream
                .out
                .into_temporary()
                .map_err(|err| CliError::usage(err.to_string()))?,
        )?;
        report.stats_stream = name.file_name().map(|n| n.to_string_lossy().into_owned());
    }
    if let Some(path) = &args.report {
        outputs.add(path, report_text(&report)?.as_bytes(), Naming::Given)?;
    }
    outputs.commit()?;
    match args.format {
        Format::Json => print_json(&report)?,
        Format::Text => {
            print_text(&summary(
                &report,
                elapsed,
                args.report.as_deref(),
                args.dump.as_deref(),
            ))?;
        }
    }
    // A run Ctrl-C stopped did not do what was asked: say so in the status.
    Ok(if report.stopped_early && stop.load(Ordering::SeqCst) {
        Exit::Interrupted
    } else {
        Exit::Ok
    })
}

fn report_text(report: &RunReport) -> Result<String, CliError> {
    let mut text = crate::escape::json(
        serde_json::to_string_pretty(report)
            .map_err(|err| CliError::usage(format!("cannot render the report: {err}")))?,
    );
    text.push('\n');
    Ok(text)
}
