//! Checkpoints around the engine for `accum run`: `--resume DIR` puts the
//! engine at the last complete checkpoint (a refusal located in the config
//! where a setting differs), `--checkpoint DIR --checkpoint-every SPAN`
//! pauses the engine at update boundaries and writes one when the span is
//! reached, and the run's end writes the last one. The hidden `--kill-at`
//! hook ends the process with SIGKILL inside a group or during a write, for
//! the tests of exact resume.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use accum_core::checkpoint::{
    CheckpointError, EarlierStats, last_checkpoint, stats_until, write_checkpoint,
    write_checkpoint_then, write_stats_part,
};
use accum_core::driver::ResumeError;
use accum_core::engine::{Engine, EngineError, MicrobatchEvent, Observer, RunOptions, StateError};
use accum_core::report::{PlanSummary, RunReport};
use accum_core::{Span, UnitKind, Updates, group_digits};

use super::observers::Stream;
use crate::cli::{Backend, KillAt, RunArgs};
use crate::error::CliError;
use crate::source::{Document, line_col};

/// How a run was resumed, for the line printed before it.
pub(crate) struct Resumed {
    /// The checkpoint's folder.
    from: PathBuf,
    /// Applied updates in the checkpoint.
    updates: u64,
    /// The plan the checkpoint was saved under, when it differs.
    changed_from: Option<PlanSummary>,
    /// This run's plan of the next update.
    now: PlanSummary,
    /// The folder resumed from.
    dir: PathBuf,
    /// The update attempts in the checkpoint.
    attempts: u64,
    /// The stats stream's lines up to the checkpoint, from its parts.
    earlier: EarlierStats,
}

impl Resumed {
    /// `resuming after update 30 from DIR/ckpt-30`, and for an elastic
    /// resume the two plans.
    pub(crate) fn note(&self) -> String {
        let mut text = format!(
            "resuming after update {} from {}",
            group_digits(self.updates),
            accum_core::shown::path(&self.from)
        );
        if let Some(before) = &self.changed_from {
            text.push_str(&format!(
                "\nnote: elastic resume: {} now, {} in the checkpoint; the same global batch, \
                 so the examples of every update and the schedule carry over (the report \
                 records both plans)",
                self.now, before
            ));
        }
        text
    }
}

/// `FILE:LINE: ` of a dotted key in the config, or `FILE: `.
fn located(doc: &Document, key: &str) -> String {
    let path: Vec<String> = key.split('.').map(str::to_owned).collect();
    let range = doc.range_of(&path);
    let (line, _) = line_col(&doc.text, range.start);
    format!("{}:{line}", doc.name)
}

/// Puts `engine` at the last complete checkpoint in `dir`.
pub(crate) fn resume(engine: &mut Engine, dir: &Path, doc: &Document) -> Result<Resumed, CliError> {
    let (from, state) = last_checkpoint(dir).map_err(|err| match err.state() {
        // The checkpoint's own file, and the fix.
        Some(_) => CliError::invalid(err.to_string()),
        None => CliError::usage(err.to_string()),
    })?;
    let updates = state.updates();
    let state_file = from.join(accum_core::checkpoint::STATE_FILE);
    let changed_from = engine.resume(state).map_err(|err| {
        let at = match &err {
            StateError::Settings { differences } => differences
                .first()
                .map_or_else(|| doc.name.clone(), |d| located(doc, &d.key)),
            StateError::Driver(ResumeError::SeqLen { .. }) => located(doc, "batch.seq_len"),
            StateError::Driver(_) => located(doc, "batch.global_batch"),
            _ => doc.name.clone(),
        };
        CliError::invalid(format!(
            "{at}: this config cannot continue the checkpoint {}: {err}",
            accum_core::shown::path(&state_file)
        ))
    })?;
    let now = PlanSummary::from(engine.stages().plan_at(engine.counters().applied_updates));
    // Read (and the parts past the checkpoint removed) whether or not this
    // run streams: a later resume must not find the stopped run's parts.
    let attempts = engine.counters().update_attempts;
    let earlier = stats_until(dir, attempts).map_err(|err| CliError::usage(err.to_string()))?;
    Ok(Resumed {
        from,
        updates,
        changed_from,
        now,
        dir: dir.to_owned(),
        attempts,
        earlier,
    })
}

/// Continues the stats stream of a resumed run with its lines before the
/// checkpoint, and has the checkpoints keep its parts. Gives a note when
/// the stream cannot cover the whole run.
pub(crate) fn continue_stream(
    stream: &mut Stream,
    checkpoints: &mut Checkpoints,
    resumed: Option<&Resumed>,
) -> Result<Option<String>, CliError> {
    let mut note = None;
    // The lines a part in the checkpoint folder starts after, and those a
    // first part there must hold before this run's.
    let (mut through, mut pending) = (0, Vec::new());
    if let Some(resumed) = resumed {
        through = resumed.attempts;
        match &resumed.earlier {
            EarlierStats::Whole(lines) => {
                stream
                    .out
                    .write_earlier(lines)
                    .map_err(|err| CliError::usage(err.to_string()))?;
                if checkpoints.dir.as_deref() != Some(resumed.dir.as_path()) {
                    (through, pending) = (0, lines.clone());
                }
            }
            EarlierStats::Missing { from } => {
                note = Some(format!(
                    "note: the stats stream covers the update attempts after {} only: {} keeps \
                     no stream of attempts {} to {} (the run before the resume was not given \
                     --stream-stats)",
                    group_digits(resumed.attempts),
                    accum_core::shown::path(&resumed.dir),
                    group_digits(*from),
                    group_digits(resumed.attempts),
                ));
            }
        }
    }
    if checkpoints.dir.is_some() {
        stream.out.keep_recent();
        let parts = Arc::new(Mutex::new(pending));
        stream.parts = Some(Arc::clone(&parts));
        checkpoints.stats = Some(StatsParts {
            lines: parts,
            through,
        });
    }
    Ok(note)
}

/// When checkpoints are due.
enum Every {
    /// Every `n` applied updates.
    Updates(u64),
    /// At the first update boundary past each multiple of `value` examples
    /// or tokens (all attempts', as the report counts them).
    Count {
        unit: UnitKind,
        value: u64,
        next: u64,
    },
}

/// The checkpoints of a run.
pub(crate) struct Checkpoints {
    dir: Option<PathBuf>,
    every: Option<Every>,
    kill_at: Option<KillAt>,
    /// The last checkpoint written, and its applied updates.
    pub(crate) last: Option<PathBuf>,
    last_updates: Option<u64>,
    /// The write that failed and stopped the run.
    pub(crate) failure: Option<CheckpointError>,
    /// The stats stream's lines the next checkpoint keeps, when the run
    /// writes one.
    stats: Option<StatsParts>,
}

/// The stats stream's lines since the last part.
struct StatsParts {
    lines: Arc<Mutex<Vec<u8>>>,
    /// The update attempts the parts written so far hold.
    through: u64,
}

fn count(engine: &Engine, unit: UnitKind) -> u64 {
    let c = engine.counters();
    match unit {
        UnitKind::Example => c.examples.get(),
        UnitKind::Token => c.supervised_tokens.get(),
        UnitKind::Update | UnitKind::Microbatch => c.applied_updates.get(),
    }
}

impl Checkpoints {
    /// The checkpoints `args` ask for, `engine` placed (resumed or not).
    pub(crate) fn new(args: &RunArgs, engine: &Engine) -> Result<Checkpoints, CliError> {
        if args.backend == Backend::Mpi && (args.checkpoint.is_some() || args.resume.is_some()) {
            return Err(CliError::usage(
                "--checkpoint and --resume run the replicas as threads of one process: drop \
                 --backend mpi, or save and resume with the driver in a loop of one's own \
                 (docs/loop.md, \"Resume\")",
            ));
        }
        // A resumed run goes on writing to its folder, unless told otherwise.
        let dir = args.checkpoint.clone().or_else(|| args.resume.clone());
        let every = match (args.checkpoint_every, &dir) {
            (None, _) => None,
            (Some(_), None) => {
                return Err(CliError::usage(
                    "--checkpoint-every needs a folder to write to: add --checkpoint DIR",
                ));
            }
            (Some(span), Some(_)) => Some(every(span, engine)?),
        };
        Ok(Checkpoints {
            dir,
            every,
            kill_at: args.kill_at,
            last: None,
            last_updates: Some(engine.counters().applied_updates.get())
                .filter(|_| args.resume.is_some()),
            failure: None,
            stats: None,
        })
    }

    /// Runs the engine to its end, pausing at each update boundary a
    /// checkpoint is due at. A failed write stops the run
    /// ([`Checkpoints::failure`]) with the report so far.
    pub(crate) fn run(
        &mut self,
        engine: &mut Engine,
        options: &mut RunOptions<'_>,
    ) -> Result<RunReport, EngineError> {
        if self.every.is_none() {
            return engine.run(options);
        }
        loop {
            let pause = engine.counters().applied_updates + Updates::ONE;
            if let Some(report) = engine.run_until(options, pause)? {
                return Ok(report);
            }
            if self.due(engine)
                && let Err(err) = self.write(engine)
            {
                self.failure = Some(err);
                return Ok(engine.report());
            }
        }
    }

    /// Whether a checkpoint is due at this boundary (a skipped attempt
    /// leaves the boundary where the last checkpoint was taken).
    fn due(&mut self, engine: &Engine) -> bool {
        if self.last_updates == Some(engine.counters().applied_updates.get()) {
            return false;
        }
        match &mut self.every {
            None => false,
            Some(Every::Updates(n)) => engine.counters().applied_updates.get() % *n == 0,
            Some(Every::Count { unit, value, next }) => {
                let now = count(engine, *unit);
                if now < *next {
                    return false;
                }
                *next = (now / *value + 1).saturating_mul(*value);
                true
            }
        }
    }

    fn write(&mut self, engine: &Engine) -> Result<(), CheckpointError> {
        let Some(dir) = &self.dir else { return Ok(()) };
        let state = engine.state();
        let updates = state.updates();
        if let Some(stats) = &mut self.stats {
            let now = engine.counters().update_attempts;
            if now > stats.through {
                write_stats_part(
                    dir,
                    stats.through,
                    now,
                    &stats
                        .lines
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner),
                )?;
                stats
                    .lines
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .clear();
                stats.through = now;
            }
        }
        let path = match self.kill_at {
            Some(KillAt::Checkpoint(n)) if n == updates => {
                write_checkpoint_then(dir, &state, kill_this_process)?
            }
            _ => write_checkpoint(dir, &state)?,
        };
        self.last = Some(path);
        self.last_updates = Some(updates);
        Ok(())
    }

    /// Writes the checkpoint of the run's end (or of the boundary it was
    /// stopped at), unless it is the last one written already.
    pub(crate) fn at_end(&mut self, engine: &Engine) -> Result<(), CheckpointError> {
        if self.last_updates == Some(engine.counters().applied_updates.get()) {
            return Ok(());
        }
        self.write(engine)
    }
}

/// The updates between checkpoints of `span`.
fn every(span: Span, engine: &Engine) -> Result<Every, CliError> {
    if span.value() == 0 {
        return Err(CliError::usage(format!(
            "--checkpoint-every {span}: a checkpoint every 0 is none; give a length of at least 1, \
             e.g. 50-updates"
        )));
    }
    Ok(match span.unit() {
        UnitKind::Example | UnitKind::Token => Every::Count {
            unit: span.unit(),
            value: span.value(),
            next: (count(engine, span.unit()) / span.value() + 1).saturating_mul(span.value()),
        },
        UnitKind::Update | UnitKind::Microbatch => {
            let updates = engine
                .span_in_updates(&span)
                .map_err(|err| CliError::usage(format!("--checkpoint-every {span}: {err}")))?;
            Every::Updates(updates.get().max(1))
        }
    })
}

/// Ends this process at once with SIGKILL, as a preemption would: nothing
/// after this point runs, no destructor, no temporary file removed.
fn kill_this_process() {
    let pid = std::process::id().to_string();
    let sent = std::process::Command::new("kill")
        .args(["-KILL", &pid])
        .status()
        .is_ok_and(|s| s.success());
    if !sent {
        // No `kill` to run: end at once all the same, by another signal.
        std::process::abort();
    }
    // The signal is on its way; nothing of the run may go on meanwhile.
    loop {
        std::thread::park();
    }
}

/// The `--kill-at group:ATTEMPT` hook: SIGKILL after the attempt's
/// backward passes, before its update.
pub(crate) struct KillInGroup {
    attempt: Option<u64>,
}

impl KillInGroup {
    pub(crate) fn new(at: Option<KillAt>) -> KillInGroup {
        KillInGroup {
            attempt: match at {
                Some(KillAt::Group(n)) => Some(n),
                _ => None,
            },
        }
    }
}

impl Observer for KillInGroup {
    fn on_microbatch(&mut self, event: &MicrobatchEvent) {
        if Some(event.attempt) == self.attempt {
            kill_this_process();
        }
    }
}
