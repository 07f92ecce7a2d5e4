//! One `accum run`, from a checked config to its exit status, in the order
//! it happens: the engine is built on its backend and put at its
//! checkpoint ([`Run::start`]); the outputs it writes while it runs are
//! opened ([`Run::open`]); it runs with its observers and checkpoints
//! ([`Run::carry_out`]); and the report, the stream and the summary are
//! written at its end.

use std::io::IsTerminal;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use accum_core::AccumConfig;
use accum_core::command_line::stats_stream_beside;
use accum_core::config::TrainingConfig;
use accum_core::engine::{DumpWriter, Engine, Fault, RunOptions};
use accum_core::fsio::Naming;
use accum_core::group_digits;
use accum_core::plan::StagedPlan;
use accum_core::report::{RunReport, StatsStream};
use accum_core::settings::{EngineConfig, PrecisionMode};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::checkpoints::{Checkpoints, KillInGroup, Resumed, continue_stream, resume};
use super::observers::{Progress, Stream};
use super::process::{
    ExitSync, attach_backend, forget_status_line, show_status_line, stop_flag, threads_cap,
};
use super::summary::{plural, ramp_text, summary};
use crate::cli::{Backend, Format, RunArgs};
use crate::error::{CliError, Exit};
use crate::load::Checked;
use crate::output::{eprintln_safe, print_json, print_styled};
use crate::writes::{Outputs, not_an_input};

/// A run on its backend, placed (resumed or at its start), with the
/// checkpoints it writes.
pub(crate) struct Run<'a> {
    args: &'a RunArgs,
    checked: &'a Checked<TrainingConfig>,
    config: EngineConfig,
    stages: StagedPlan,
    engine: Engine,
    exit_sync: ExitSync,
    resumed: Option<Resumed>,
    checkpoints: Checkpoints,
    /// `rank 1 of 4: ` before a message under MPI, else empty.
    who: String,
    /// Whether this process writes anything but errors (rank 0).
    lead: bool,
    /// No progress bar and no text around the run.
    quiet: bool,
}

/// What a run writes while it runs, besides its checkpoints.
struct Opened {
    dump: Option<DumpWriter>,
    stream: Option<Stream>,
}

impl<'a> Run<'a> {
    /// The engine of `checked` on the backend `args` ask for, with its
    /// threads and injected fault, put at the checkpoint `--resume` names;
    /// the report's name checked before any work.
    pub(crate) fn start(
        args: &'a RunArgs,
        checked: &'a Checked<TrainingConfig>,
    ) -> Result<Run<'a>, CliError> {
        let name = &checked.doc.name;
        let config = checked.config.engine_config();
        // `check` has accepted the stages already.
        let stages = checked
            .config
            .staged_plan()
            .map_err(|findings| CliError::invalid(format!("{name}: {findings}")))?;
        let engine = Engine::new(&stages, &config)
            .map_err(|err| CliError::invalid(format!("{name}: {err}")))?;
        let (mut engine, exit_sync) = attach_backend(engine, args.backend, name)?;
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
            Some(dir) => Some(resume(&mut engine, dir, &checked.doc)?),
            None => None,
        };
        let checkpoints = Checkpoints::new(args, &engine)?;
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
            crate::writes::check_writable(path, Naming::Given)?;
        }
        Ok(Run {
            args,
            checked,
            config,
            stages,
            engine,
            exit_sync,
            resumed,
            checkpoints,
            who,
            lead,
            quiet: args.quiet || !lead,
        })
    }

    /// The progress bar at the engine's place, and the line that says what
    /// runs (and where it resumed).
    fn announce(&self) -> Progress {
        let total = self.engine.total_updates().get();
        let bar = if self.quiet || !std::io::stderr().is_terminal() {
            ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden())
        } else {
            ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr_with_hz(10))
        };
        bar.set_style(
            ProgressStyle::with_template(super::TEMPLATE)
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        // What runs is said before the bar is first drawn, so that the bar
        // starts on a line of its own.
        if !self.quiet {
            let plan = &self.checked.plan;
            let ramp = if self.stages.is_constant() {
                String::new()
            } else {
                format!(" after a ramp-up {}", ramp_text(&self.stages))
            };
            eprintln_safe!(
                "running {}: {} ({} updates, {} per update{ramp}, loss {} normalized, {} precision)",
                self.checked.doc.name,
                plan.batch_formula(),
                group_digits(total),
                plural(plan.effective_batch().get(), "example"),
                self.config.loss.normalization,
                self.config.precision.mode,
            );
            if let Some(resumed) = &self.resumed {
                eprintln_safe!("{}", resumed.note());
            }
        }
        bar.set_position(self.engine.counters().applied_updates.get());
        show_status_line(&bar);
        Progress {
            bar,
            started: Instant::now(),
            print_lines: self.lead && self.args.format == Format::Text,
            quiet: self.quiet,
            print_error: None,
            loss_scaled: self.config.precision.mode == PrecisionMode::Fp16,
            last: None,
        }
    }

    /// The dump and the stats stream, on the lead process, each checked
    /// before the work; a resumed stream starts with the lines before the
    /// checkpoint.
    fn open(&mut self) -> Result<Opened, CliError> {
        let (args, who) = (self.args, &self.who);
        let dump = match args.dump.as_ref().filter(|_| self.lead) {
            Some(dir) => Some(DumpWriter::create(dir, &self.engine).map_err(|err| {
                let message = match err.refused {
                    Some(_) => format!("{who}{err}"),
                    None => format!("{who}{}: {err}", accum_core::shown::path(dir)),
                };
                self.exit_sync.fail_alone(CliError::usage(message))
            })?),
            None => None,
        };
        let stream = match args
            .report
            .as_ref()
            .filter(|_| self.lead && args.stream_stats)
        {
            Some(path) => {
                // A name accum made beside the report: checked, like the
                // report, before the run.
                let path = stats_stream_beside(path);
                not_an_input(&path).map_err(|err| self.exit_sync.fail_alone(err))?;
                let mut stream = Stream {
                    out: StatsStream::create(&path).map_err(|err| {
                        self.exit_sync
                            .fail_alone(CliError::usage(format!("{who}{err}")))
                    })?,
                    failed: None,
                    parts: None,
                };
                let note =
                    continue_stream(&mut stream, &mut self.checkpoints, self.resumed.as_ref())
                        .map_err(|err| self.exit_sync.fail_alone(err))?;
                if let Some(note) = note.filter(|_| !self.quiet) {
                    eprintln_safe!("{note}");
                }
                Some(stream)
            }
            None => None,
        };
        Ok(Opened { dump, stream })
    }

    /// Runs to the end (or to Ctrl-C), then writes the last checkpoint, the
    /// stream and the report (both or neither) and prints the summary.
    pub(crate) fn carry_out(mut self) -> Result<Exit, CliError> {
        let mut progress = self.announce();
        let stop = stop_flag();
        stop.store(false, Ordering::SeqCst);
        let Opened {
            mut dump,
            mut stream,
        } = self.open()?;
        let mut kill = KillInGroup::new(self.args.kill_at);
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
            self.checkpoints.run(&mut self.engine, &mut options)
        };
        progress.bar.finish_and_clear();
        forget_status_line();
        let who = &self.who;
        // A checkpoint that could not be written stops the run: continuing
        // would leave the user without the resume they asked for.
        if let Some(err) = self.checkpoints.failure.take() {
            return Err(self.exit_sync.fail(CliError::usage(format!("{who}{err}"))));
        }
        let elapsed = progress.started.elapsed();
        let report = result.map_err(|err| {
            self.exit_sync.fail(CliError::invalid(format!(
                "{who}{}: the run failed: {err}",
                self.checked.doc.name
            )))
        })?;
        if !self.lead {
            return Ok(Exit::Ok);
        }
        if let Some(err) = progress.print_error.take() {
            return Err(err);
        }
        self.finish(report, stream, elapsed, &stop)
    }

    /// The last checkpoint, the stream and the report, and the summary.
    fn finish(
        mut self,
        mut report: RunReport,
        stream: Option<Stream>,
        elapsed: Duration,
        stop: &Arc<AtomicBool>,
    ) -> Result<Exit, CliError> {
        let args = self.args;
        // The run's end (or the boundary it was stopped at) is resumable too.
        self.checkpoints
            .at_end(&self.engine)
            .map_err(|err| CliError::usage(err.to_string()))?;
        if !self.quiet
            && let Some(path) = &self.checkpoints.last
        {
            eprintln_safe!(
                "checkpoint after update {}: {}",
                group_digits(self.engine.counters().applied_updates.get()),
                accum_core::shown::path(path)
            );
        }
        report.provenance = Some(provenance(&report, elapsed, &args.file, self.checked));
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
                let text = summary(
                    &report,
                    elapsed,
                    args.report.as_deref(),
                    args.dump.as_deref(),
                );
                print_styled(&text.render(crate::style::stdout()))?;
            }
        }
        // A run Ctrl-C stopped did not do what was asked: say so in the status.
        Ok(if report.stopped_early && stop.load(Ordering::SeqCst) {
            Exit::Interrupted
        } else {
            Exit::Ok
        })
    }
}

/// The report as written: pretty JSON, hidden characters escaped.
/// Where the report comes from: the configuration file and its hash, the
/// run's name, the commit, and this segment's start, wall time and
/// throughput (from the counts before it, after a resume).
fn provenance(
    report: &RunReport,
    elapsed: Duration,
    file: &Path,
    checked: &Checked<TrainingConfig>,
) -> accum_core::report::Provenance {
    let started = std::time::SystemTime::now()
        .checked_sub(elapsed)
        .unwrap_or(std::time::UNIX_EPOCH);
    let mut before = accum_core::report::Counters::default();
    if let Some(last) = report.segments.last() {
        before.applied_updates = last.updates;
        before.examples = last.examples;
        before.supervised_tokens = last.tokens;
    }
    accum_core::report::Provenance::timed(started, elapsed, &before, &report.counters).with_config(
        file,
        checked.doc.text.as_bytes(),
        checked.config.run.name.as_deref(),
    )
}

fn report_text(report: &RunReport) -> Result<String, CliError> {
    let mut text = crate::escape::json(
        serde_json::to_string_pretty(report)
            .map_err(|err| CliError::usage(format!("cannot render the report: {err}")))?,
    );
    text.push('\n');
    Ok(text)
}
