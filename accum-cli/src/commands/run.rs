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
//! The observers and the text around the run are [`crate::runner`]'s.

use std::io::IsTerminal;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use accum_core::AccumConfig;
use accum_core::config::TrainingConfig;
use accum_core::engine::{DumpWriter, Engine, Fault, RunOptions};
use accum_core::group_digits;
use accum_core::report::{RunReport, StatsStream};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::cli::{Backend, Format, RunArgs};
use crate::error::{CliError, Exit};
use crate::fsio::write_atomic;
use crate::load::load_checked;
use crate::output::{print_json, print_text};
use crate::runner::{self, Progress, Stream, plural, ramp_text, stream_path, summary};

/// The exit status of a run ended by Ctrl-C, as shells report SIGINT.
const INTERRUPTED: i32 = 130;

/// The stop flag set by Ctrl-C; installed once per process. Like cargo: the
/// first Ctrl-C is acknowledged and stops the run within a microbatch (the
/// report is still written); a second ends the process at once, before any
/// new output replaces the previous one (every output is written to a
/// temporary file and renamed, so nothing is left half written).
fn stop_flag() -> Arc<AtomicBool> {
    static FLAG: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let handler_flag = Arc::clone(&flag);
        // Without a handler Ctrl-C ends the process; the run then loses its
        // report, so a failure to install is worth a warning, not an abort.
        if let Err(err) = ctrlc::set_handler(move || {
            if handler_flag.swap(true, Ordering::SeqCst) {
                eprintln!("\ninterrupted again: stopping now; the previous outputs are kept");
                std::process::exit(INTERRUPTED);
            }
            eprintln!(
                "\ninterrupted: stopping within the current microbatch and writing the report; press Ctrl-C again to stop at once"
            );
        }) {
            eprintln!("warning: Ctrl-C will not stop the run cleanly: {err}");
        }
        flag
    })
    .clone()
}

/// Threads per replica the machine can run at once: its cores shared by
/// the replicas of this process, at least one. More only adds threads that
/// wait (`--threads 100000` spawned thousands).
fn threads_cap(local_replicas: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    (cores / local_replicas.max(1)).max(1)
}

/// What `run` keeps of the backend: with MPI, a handle to let every rank
/// say why it stops before any rank exits.
#[derive(Default)]
struct ExitSync {
    #[cfg(feature = "mpi")]
    mpi: Option<std::sync::Arc<accum_core::replica::mpi::Mpi>>,
}

impl ExitSync {
    /// With MPI: prints `err` now, in one write (so the ranks' lines do not
    /// interleave), and waits until every rank has printed its own, because
    /// `mpirun` ends the job at the first non-zero exit. Otherwise `err`.
    fn fail(&self, err: CliError) -> CliError {
        #[cfg(feature = "mpi")]
        if let Some(mpi) = &self.mpi {
            use std::io::Write;
            let line = format!("error: {err}\n");
            let _ = std::io::stderr().lock().write_all(line.as_bytes());
            mpi.barrier_at_exit();
            return CliError::reported(err.exit());
        }
        err
    }

    /// [`ExitSync::fail`] for an error of this rank alone, before the run:
    /// the others, already waiting in the run's first collective, are told
    /// through an abort and stop too.
    fn fail_alone(&self, err: CliError) -> CliError {
        #[cfg(feature = "mpi")]
        if let Some(mpi) = &self.mpi {
            use accum_core::replica::Reducer;
            mpi.abort(&err.to_string());
        }
        self.fail(err)
    }
}

/// Attaches the backend: threads need nothing, MPI starts MPI and checks
/// that the world has one process per replica before any work.
fn attach_backend(
    engine: Engine,
    backend: Backend,
    name: &str,
) -> Result<(Engine, ExitSync), CliError> {
    match backend {
        Backend::Threads => Ok((engine, ExitSync::default())),
        #[cfg(feature = "mpi")]
        Backend::Mpi => {
            let mpi = accum_core::replica::mpi::Mpi::init()
                .map_err(|err| CliError::usage(format!("cannot start mpi: {err}")))?;
            let mpi = std::sync::Arc::new(mpi);
            let (rank, world) = (mpi.rank(), mpi.world_size());
            let sync = ExitSync {
                mpi: Some(std::sync::Arc::clone(&mpi)),
            };
            match engine.with_reducer(Box::new(mpi)) {
                Ok(engine) => Ok((engine, sync)),
                Err(err) => Err(sync.fail(CliError::invalid(format!(
                    "rank {rank} of {world}: {name}: {err}"
                )))),
            }
        }
        #[cfg(not(feature = "mpi"))]
        Backend::Mpi => {
            let _ = (engine, name);
            Err(CliError::usage(
                "this accum was built without MPI; rebuild it with `--features mpi` \
                 (needs an MPI library such as Open MPI) or use `--backend threads`",
            ))
        }
    }
}

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
            eprintln!(
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
        crate::fsio::check_writable(path)?;
    }
    let total = engine.total_updates().get();
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
    let plan = checked.plan;
    if !quiet {
        let ramp = if stages.is_constant() {
            String::new()
        } else {
            format!(" after a ramp-up {}", ramp_text(&stages))
        };
        eprintln!(
            "running {}: {} ({} updates, {} per update{ramp}, loss {} normalized, {} precision)",
            checked.doc.name,
            plan.batch_formula(),
            group_digits(total),
            plural(plan.effective_batch().get(), "example"),
            config.loss.normalization,
            config.precision.mode,
        );
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
                None => format!("{who}{}: {err}", dir.display()),
            };
            exit_sync.fail_alone(CliError::usage(message))
        })?),
        None => None,
    };
    let mut stream = match args.report.as_ref().filter(|_| lead && args.stream_stats) {
        Some(path) => Some(Stream {
            out: StatsStream::create(&stream_path(path))
                .map_err(|err| exit_sync.fail_alone(CliError::usage(format!("{who}{err}"))))?,
            failed: None,
        }),
        None => None,
    };
    let result = {
        let mut options = RunOptions {
            stop: Some(&stop),
            ..RunOptions::default()
        }
        .observe(&mut progress);
        if let Some(dump) = dump.as_mut() {
            options = options.observe(dump);
        }
        if let Some(stream) = stream.as_mut() {
            options = options.observe(stream);
        }
        engine.run(&mut options)
    };
    progress.bar.finish_and_clear();
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
    let mut report = report;
    if let Some(stream) = stream {
        let name = stream_path(args.report.as_deref().unwrap_or(Path::new("run.json")));
        stream
            .out
            .finish()
            .map_err(|err| CliError::usage(err.to_string()))?;
        report.stats_stream = name.file_name().map(|n| n.to_string_lossy().into_owned());
    }
    if let Some(path) = &args.report {
        write_report(path, &report)?;
    }
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

fn write_report(path: &Path, report: &RunReport) -> Result<(), CliError> {
    let mut text = serde_json::to_string_pretty(report)
        .map_err(|err| CliError::usage(format!("cannot render the report: {err}")))?;
    text.push('\n');
    write_atomic(path, text.as_bytes())
}
