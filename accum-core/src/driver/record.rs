//! A run report for a loop of one's own: the [`Recorder`] writes the same
//! [`RunReport`] and stats stream as accum's engine, so `accum sheet
//! CONFIG --report RUN.json` documents a candle, burn or plain-Rust run the
//! way it documents the engine's.
//!
//! The caller gives what only its framework knows — the group's loss, and
//! optionally the gradient norm, the loss scale, whether clipping changed
//! the gradient and the memory it measured ([`Step`]); the driver gives
//! the rest: the learning rate of the update, its examples, supervised
//! tokens, microbatches and stage, the epoch, partial groups, skipped
//! attempts and dropped examples (`accum::run::scheduler`,
//! `accum::run::normalization`).
//!
//! Memory stays bounded whatever the run's length, as the engine's does:
//! attempts and logged points go into [`Decimated`] buffers beside exact
//! running summaries, and with [`Recorder::stream_beside`] every attempt
//! and log point is written to a JSON Lines file next to the report.
//!
//! ```
//! use accum_core::driver::{Driver, Outcome, Recorder, Step};
//! use accum_core::replica::InProcess;
//! use accum_core::settings::{LogAxis, Normalization};
//! use accum_core::Updates;
//! use accum_core::plan::Plan;
//!
//! let lengths = [5u64, 3, 8, 2, 7, 4, 6, 1, 9, 3];
//! let mut driver = Driver::builder(Plan::new(2, 2, 1)?, lengths.len())
//!     .total(Updates::new(4))
//!     .build()?;
//! let mut recorder = Recorder::new(&driver, Normalization::PerToken)
//!     .data_tokens(lengths.iter().sum())
//!     .log(LogAxis::Tokens, "20 tokens".parse()?);
//! let reducer = InProcess::new(1);
//! while let Some(mut group) = driver.next_group()? {
//!     group.denominator(Normalization::PerToken, |id| lengths[id], &reducer)?;
//!     let loss = 2.0; // the framework's normalized group loss
//!     recorder.finish(&mut driver, group, Outcome::Applied, Step::loss(loss))?;
//! }
//! let report = recorder.report(&driver);
//! assert_eq!(report.counters.applied_updates, Updates::new(4));
//! assert_eq!(report.updates.len(), 4);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::path::{Path, PathBuf};

use super::ResumeError;
use super::{Driver, DriverError, Group, Outcome, Progress};
use crate::fsio::{Batch, Durability, Naming, WriteError};
use crate::memory::{MemoryBreakdown, MemoryTracker};
use crate::report::stream::stats_stream_beside;
use crate::report::{
    CURVE_CAPACITY, Counters, CurvePoint, Decimated, KEPT_UPDATES, LossCurve, PlanSummary,
    Provenance, REPORT_FORMAT, RecorderPosition, RunReport, RunSummary, Segment, StageCounters,
    StatsError, StatsStream, UpdateStats,
};
use crate::settings::{LogAxis, Normalization, OptimizerKind, PrecisionMode};
use crate::span::Span;
use crate::units::{Examples, Microbatches, Tokens, UnitKind, Updates};

/// What the caller's framework measured for one update attempt.
#[derive(Clone, Copy, Debug, PartialEq)]
#[must_use]
pub struct Step {
    /// The group's normalized loss (summed over the group's microbatches
    /// and replicas, divided by the group's denominator once).
    pub loss: f64,
    /// The global gradient norm, unscaled, before clipping; `None` when the
    /// loop does not compute it.
    pub grad_norm: Option<f64>,
    /// The loss scale during the group (fp16); `None`: 1.
    pub loss_scale: Option<f64>,
    /// Whether clipping changed the gradient.
    pub clipped: bool,
    /// The largest memory of the group on this device, by kind, if the loop
    /// measures it. Put memory that a correct loop releases after each
    /// backward pass (losses or activations kept alive) in `retained`:
    /// that is what the growth check compares.
    pub memory: Option<MemoryBreakdown>,
}

impl Step {
    /// An attempt with only its loss.
    pub fn loss(loss: f64) -> Step {
        Step {
            loss,
            grad_norm: None,
            loss_scale: None,
            clipped: false,
            memory: None,
        }
    }

    /// The same, with the gradient norm (unscaled, before clipping).
    pub fn grad_norm(mut self, norm: f64) -> Step {
        self.grad_norm = Some(norm);
        self
    }

    /// The same, with the loss scale during the group.
    pub fn loss_scale(mut self, scale: f64) -> Step {
        self.loss_scale = Some(scale);
        self
    }

    /// The same, noting that clipping changed the gradient.
    pub fn clipped(mut self, clipped: bool) -> Step {
        self.clipped = clipped;
        self
    }

    /// The same, with the group's memory peak on this device.
    pub fn memory(mut self, memory: MemoryBreakdown) -> Step {
        self.memory = Some(memory);
        self
    }
}

/// Recording an attempt or writing the report failed.
#[non_exhaustive]
pub enum RecordError {
    /// The driver refused the attempt.
    Driver(DriverError),
    /// The stats stream could not be written.
    Stream(StatsError),
    /// The report could not be written.
    Write(WriteError),
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordError::Driver(e) => write!(f, "{e}"),
            RecordError::Stream(e) => write!(f, "{e}"),
            RecordError::Write(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for RecordError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RecordError::Driver(e) => Some(e),
            RecordError::Stream(e) => Some(e),
            RecordError::Write(e) => Some(e),
        }
    }
}

impl From<DriverError> for RecordError {
    fn from(e: DriverError) -> Self {
        RecordError::Driver(e)
    }
}

impl From<StatsError> for RecordError {
    fn from(e: StatsError) -> Self {
        RecordError::Stream(e)
    }
}

/// Records a driven run into a [`RunReport`] (see `docs/sheets.md`).
/// One recorder per run, on one rank (rank 0): the driver's counts are the
/// whole group's on every rank.
#[derive(Debug)]
pub struct Recorder {
    normalization: Normalization,
    precision: PrecisionMode,
    loss_scaling: bool,
    optimizer: OptimizerKind,
    model: serde_json::Value,
    data_examples: Examples,
    data_tokens: Tokens,
    axis: LogAxis,
    every: Span,
    next_log: u64,
    counters: Counters,
    /// Microbatches of replica 0 (the most of any replica) over all attempts.
    passes: u64,
    stages: Vec<StageCounters>,
    updates: Decimated<UpdateStats>,
    curve: Decimated<CurvePoint>,
    summary: RunSummary,
    memory: MemoryTracker,
    measured_memory: bool,
    stream: Option<StatsStream>,
    stopped_early: bool,
    /// The run's segments once it was resumed; empty before.
    segments: Vec<Segment>,
    /// Where the run comes from, as the caller said ([`Recorder::provenance`]).
    provenance: Provenance,
    /// When the recorder started, on the wall clock and on a monotonic one,
    /// and the counters then.
    started: (std::time::SystemTime, std::time::Instant, Counters),
}

impl Recorder {
    /// A recorder for `driver`'s run, whose loss is normalized by
    /// `normalization`. Defaults: fp32 without loss scaling, AdamW, the
    /// loss logged at every applied update against updates, no model
    /// description, and the data's supervised tokens unknown.
    pub fn new(driver: &Driver, normalization: Normalization) -> Recorder {
        Recorder {
            normalization,
            precision: PrecisionMode::Fp32,
            loss_scaling: false,
            optimizer: OptimizerKind::AdamW,
            model: serde_json::Value::Null,
            data_examples: Examples::new(driver.examples() as u64),
            data_tokens: Tokens::ZERO,
            axis: LogAxis::Updates,
            every: Span::of(Updates::ONE),
            next_log: 0,
            counters: Counters::default(),
            passes: 0,
            stages: Vec::new(),
            updates: Decimated::new(KEPT_UPDATES),
            curve: Decimated::new(CURVE_CAPACITY),
            summary: RunSummary::default(),
            memory: MemoryTracker::new(1),
            measured_memory: false,
            stream: None,
            stopped_early: false,
            segments: Vec::new(),
            provenance: Provenance::default(),
            started: (
                std::time::SystemTime::now(),
                std::time::Instant::now(),
                Counters::default(),
            ),
        }
    }

    /// Continues `report`, the report a recorder wrote of the run `driver`
    /// was resumed from ([`DriverBuilder::resume`](super::DriverBuilder::resume)),
    /// saved at the same update as the driver's state: the counters, the
    /// stages, the bounded update list and loss curve, the summaries and
    /// the memory peaks go on, so the finished report counts the whole run,
    /// and a [`Segment`] records where the run resumed (with the plan it
    /// changed from, if it did). Its settings are the report's (precision,
    /// optimizer, model, data, log axis and interval); `normalization` must
    /// be the report's. A stats stream is not continued: the report's
    /// bounded lists hold the whole run.
    ///
    /// Refused, with what differs, when the report is not at the driver's
    /// update, counts other data, normalizes otherwise, or was not written
    /// by a recorder.
    pub fn resume(
        driver: &Driver,
        normalization: Normalization,
        report: RunReport,
    ) -> Result<Recorder, RecordError> {
        let refuse = |e: ResumeError| RecordError::Driver(DriverError::Resume(e));
        if report.normalization != normalization {
            return Err(refuse(ResumeError::Normalization {
                saved: report.normalization,
                now: normalization,
            }));
        }
        let examples = driver.examples() as u64;
        if report.data_examples.get() != examples {
            return Err(refuse(ResumeError::Examples {
                saved: report.data_examples.get(),
                now: examples,
            }));
        }
        let progress = driver.progress();
        let at = (
            report.counters.applied_updates,
            report.counters.update_attempts,
        );
        if at != (progress.updates, progress.attempts) {
            return Err(refuse(ResumeError::ReportPosition {
                report: at,
                driver: (progress.updates, progress.attempts),
            }));
        }
        let Some(position) = report.recorder else {
            return Err(refuse(ResumeError::NotContinuable));
        };
        let mut segments = report.run_segments();
        segments.push(Segment {
            attempts: report.counters.update_attempts,
            updates: report.counters.applied_updates,
            examples: report.counters.examples,
            tokens: report.counters.supervised_tokens,
            plan: PlanSummary::from(driver.plan()),
            resumed: true,
            changed_from: driver.resumed().and_then(|r| r.changed_from),
        });
        let measured_memory = !report.memory.replicas.is_empty();
        let memory = if measured_memory {
            MemoryTracker::resume(&report.memory, report.counters.update_attempts)
        } else {
            MemoryTracker::new(1)
        };
        Ok(Recorder {
            normalization,
            precision: report.precision,
            loss_scaling: report.loss_scaling,
            optimizer: report.optimizer,
            model: report.model,
            data_examples: report.data_examples,
            data_tokens: report.data_tokens,
            axis: report.loss_curve.axis,
            every: Span::new(position.log_every, position.log_unit),
            next_log: position.next_log,
            counters: report.counters,
            passes: position.passes,
            stages: report.stages,
            updates: Decimated::resume(
                report.updates,
                report.updates_stride,
                report.counters.update_attempts,
                KEPT_UPDATES,
            ),
            curve: Decimated::resume(
                report.loss_curve.points,
                report.loss_curve.stride,
                position.logged,
                CURVE_CAPACITY,
            ),
            summary: report.summary,
            memory,
            measured_memory,
            stream: None,
            stopped_early: false,
            segments,
            // The run's name and configuration carry over; its start and
            // wall time are this segment's.
            provenance: report.provenance.unwrap_or_default(),
            started: (
                std::time::SystemTime::now(),
                std::time::Instant::now(),
                report.counters,
            ),
        })
    }

    /// The precision the loop computes in, and whether it scales the loss
    /// dynamically (fp16).
    pub fn precision(mut self, mode: PrecisionMode, loss_scaling: bool) -> Recorder {
        self.precision = mode;
        self.loss_scaling = loss_scaling;
        self
    }

    /// The optimizer the loop steps.
    pub fn optimizer(mut self, kind: OptimizerKind) -> Recorder {
        self.optimizer = kind;
        self
    }

    /// A description of the model (any JSON object, such as `{"kind":
    /// "char_mlp", "hidden": 24}`), copied into the report.
    pub fn model(mut self, model: serde_json::Value) -> Recorder {
        self.model = model;
        self
    }

    /// Where the run comes from: its name, its configuration file and
    /// hash, the repository's commit
    /// ([`Provenance::with_config`](crate::report::Provenance::with_config)).
    /// The recorder adds the accum version, the start time, the wall time
    /// and the throughput itself.
    pub fn provenance(mut self, provenance: Provenance) -> Recorder {
        self.provenance = provenance;
        self
    }

    /// The supervised tokens of one epoch of the data.
    pub fn data_tokens(mut self, tokens: u64) -> Recorder {
        self.data_tokens = Tokens::new(tokens);
        self
    }

    /// Logs the loss against `axis` each time `every` is reached (and at
    /// the end), like the engine's `[log]` section.
    pub fn log(mut self, axis: LogAxis, every: Span) -> Recorder {
        self.axis = axis;
        self.every = every;
        self.next_log = 0;
        self
    }

    /// Writes every attempt and log point to the stats stream that belongs
    /// beside the report `report` (`run.json` → `run.stats.jsonl`), as
    /// `accum run --report` does; [`Recorder::write`] names it in the
    /// report.
    pub fn stream_beside(mut self, report: &Path) -> Result<Recorder, RecordError> {
        self.stream = Some(StatsStream::create(&stats_stream_beside(report))?);
        Ok(self)
    }

    /// Marks the run as stopped before its total, at a group boundary.
    pub fn stopped_early(&mut self) {
        self.stopped_early = true;
    }

    /// Closes `group`'s attempt through [`Driver::finish`] and records it:
    /// the caller's [`Step`] with the driver's learning rate, counts and
    /// stage. Returns the driver's progress after the attempt.
    pub fn finish(
        &mut self,
        driver: &mut Driver,
        group: Group,
        outcome: Outcome,
        step: Step,
    ) -> Result<Progress, RecordError> {
        let counts = group.counts();
        // The learning rate of this update, before the schedule steps past it.
        let lr = match outcome {
            Outcome::Applied => driver.lr().unwrap_or(0.0),
            Outcome::Skipped => 0.0,
        };
        let stage = group.stage();
        let epoch = group.epoch();
        let partial = group.is_partial();
        let attempt = group.attempt();
        let examples = group.examples();
        let microbatches = Microbatches::new(group.assignment().microbatches() as u64);
        let passes = group.assignment().replicas.first().map_or(0, Vec::len) as u64;
        let progress = *driver.finish(group, outcome)?;
        // `finish` refuses a group without counts, so they are here.
        let counts = counts.expect("a finished group was counted");
        let applied = outcome == Outcome::Applied;
        let stats = UpdateStats {
            attempt,
            epoch,
            stage,
            applied,
            updates: progress.updates,
            loss: step.loss,
            denominator: counts.denominator(self.normalization).value,
            examples,
            tokens: counts.tokens,
            microbatches,
            partial,
            lr,
            grad_norm: step.grad_norm.unwrap_or(f64::NAN),
            clipped: step.clipped && applied,
            loss_scale: step.loss_scale.unwrap_or(1.0),
        };
        self.passes += passes;
        let c = &mut self.counters;
        c.microbatches += microbatches;
        c.backward_passes += microbatches.get();
        c.update_attempts += 1;
        c.applied_updates = progress.updates;
        c.skipped_updates = progress.skipped;
        c.examples += examples;
        c.supervised_tokens += counts.tokens;
        c.scheduler_steps = driver.schedule().map_or(progress.updates, |s| s.steps());
        c.grad_reductions += 1;
        c.grad_zeroings += 1;
        c.epochs = epoch + 1;
        c.dropped_examples =
            Examples::new(driver.dropped().iter().map(|g| g.ids.len() as u64).sum());
        while self.stages.len() <= stage {
            let at = &driver.stages().stages()[self.stages.len()];
            self.stages.push(StageCounters::new(
                at.plan(),
                Updates::new(at.start().get() + 1),
                at.end(),
            ));
        }
        self.stages[stage].add(&stats);
        if let Some(memory) = step.memory {
            self.measured_memory = true;
            self.memory.sample(0, memory);
            self.memory.end_group();
        }
        if let Some(stream) = &mut self.stream {
            stream.update(&stats)?;
        }
        if applied {
            self.log_point(&stats, driver.finished())?;
        }
        self.summary.add(&stats);
        self.updates.push(stats);
        Ok(progress)
    }

    /// Logs a point when the interval is reached, or at the last update.
    fn log_point(&mut self, stats: &UpdateStats, finished: bool) -> Result<(), RecordError> {
        let now = self.count_in(self.every.unit());
        if now < self.next_log && !finished {
            return Ok(());
        }
        let step = self.every.value().max(1);
        self.next_log = (now / step + 1) * step;
        let point = CurvePoint {
            x: self.count_in(self.axis.unit()),
            loss: stats.loss,
        };
        self.curve.push(point);
        if let Some(stream) = &mut self.stream {
            stream.log(&point, self.axis)?;
        }
        Ok(())
    }

    /// The count of `unit` so far, as the engine counts its log axis: every
    /// attempt's examples and tokens, skipped ones too (they were
    /// processed), and one replica's microbatches.
    fn count_in(&self, unit: UnitKind) -> u64 {
        match unit {
            UnitKind::Update => self.counters.applied_updates.get(),
            UnitKind::Microbatch => self.passes,
            UnitKind::Example => self.counters.examples.get(),
            UnitKind::Token => self.counters.supervised_tokens.get(),
        }
    }

    /// The report of the run so far.
    pub fn report(&self, driver: &Driver) -> RunReport {
        let memory = self.memory.report();
        let warnings = crate::report::run_warnings(&memory, &self.counters);
        RunReport {
            format: REPORT_FORMAT.to_owned(),
            plan: PlanSummary::from(driver.stages().final_plan()),
            model: self.model.clone(),
            precision: self.precision,
            loss_scaling: self.loss_scaling,
            normalization: self.normalization,
            last_group: driver.last_group(),
            optimizer: self.optimizer,
            // A length in updates is the run's; one in examples or tokens
            // ends on the update whose real count reaches it, so the run's
            // own updates are its length in updates.
            total_updates: driver
                .total()
                .count_in(crate::units::UnitKind::Update)
                .map_or(self.counters.applied_updates, Updates::new),
            warmup_updates: driver.schedule().map_or(Updates::ZERO, |s| s.warmup()),
            data_examples: self.data_examples,
            data_tokens: self.data_tokens,
            counters: self.counters,
            stages: self.stages.clone(),
            // Per-replica token counts are the caller's to know; the
            // driver counts each group's whole.
            replicas: Vec::new(),
            updates: self.updates.items().to_vec(),
            updates_stride: self.updates.stride(),
            summary: self.summary,
            stats_stream: None,
            loss_curve: LossCurve {
                axis: self.axis,
                points: self.curve.items().to_vec(),
                stride: self.curve.stride(),
            },
            memory: if self.measured_memory {
                memory
            } else {
                Default::default()
            },
            dropped: driver.dropped().iter().take(64).cloned().collect(),
            stopped_early: self.stopped_early || !driver.finished(),
            warnings,
            segments: self.segments.clone(),
            recorder: Some(RecorderPosition {
                log_every: self.every.value(),
                log_unit: self.every.unit(),
                next_log: self.next_log,
                logged: self.curve.offered(),
                passes: self.passes,
            }),
            provenance: Some({
                let timed = Provenance::timed(
                    self.started.0,
                    self.started.1.elapsed(),
                    &self.started.2,
                    &self.counters,
                );
                Provenance {
                    run_name: self.provenance.run_name.clone(),
                    config_path: self.provenance.config_path.clone(),
                    config_hash: self.provenance.config_hash.clone(),
                    git_commit: self.provenance.git_commit.clone(),
                    ..timed
                }
            }),
        }
    }

    /// Finishes the stats stream, if any, and writes the report to `path`
    /// atomically (pretty JSON), naming the stream in it: both or neither.
    /// The stream must have been opened beside the same `path`.
    pub fn write(self, driver: &Driver, path: &Path) -> Result<RunReport, RecordError> {
        let mut report = self.report(driver);
        let mut batch = Batch::new();
        if let Some(stream) = self.stream {
            let stream_path: PathBuf = stream.path().to_path_buf();
            batch.push(stream.into_temporary()?);
            report.stats_stream = stream_path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned());
        }
        let mut text = report.to_json();
        text.push('\n');
        batch
            .add(path, text.as_bytes(), Naming::Given)
            .and_then(|()| batch.commit(Durability::Synced))
            .map_err(RecordError::Write)?;
        Ok(report)
    }
}

// `?` in `main` prints the sentence, not the fields.
crate::code::debug_as_display!(RecordError);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Plan, StageSpec, StagedPlan};
    use crate::report::read_updates;
    use crate::schedule::Schedule;
    use crate::settings::ScheduleKind;

    fn tokens_of(id: usize) -> u64 {
        (id as u64 * 5) % 9 + 1
    }

    /// A staged plan: A = 1 for 3 updates, then A = 2 (m = 2, D = 2).
    fn ramp() -> StagedPlan {
        let base = Plan::new(2, 2, 2).expect("a plan");
        let specs = [
            StageSpec::accumulation(1).until(Span::of(Updates::new(3))),
            StageSpec::accumulation(2),
        ];
        StagedPlan::from_specs(&base, &specs).expect("valid stages")
    }

    /// Drives `total` updates over 40 examples; attempts whose number is in
    /// `skip` are skipped (retried under the same stage).
    fn drive(
        total: u64,
        skip: &[u64],
        recorder: impl FnOnce(&Driver) -> Recorder,
    ) -> (Driver, Recorder) {
        let schedule = Schedule::new(
            ScheduleKind::Linear,
            0.1,
            Updates::new(2),
            Updates::new(total),
        );
        let mut driver = Driver::builder(ramp(), 40)
            .seed(3)
            .total(Updates::new(total))
            .schedule(schedule)
            .build()
            .expect("a driver");
        let mut recorder = recorder(&driver);
        while let Some(mut group) = driver.next_group().expect("a group") {
            let counts = group.count_all(tokens_of);
            assert!(counts.tokens.get() > 0);
            let attempt = group.attempt();
            let outcome = Outcome::from_finite(!skip.contains(&attempt));
            let loss = 5.0 / attempt as f64;
            let step = Step::loss(loss)
                .grad_norm(1.0 + attempt as f64)
                .loss_scale(1024.0);
            recorder
                .finish(&mut driver, group, outcome, step)
                .expect("recorded");
        }
        (driver, recorder)
    }

    #[test]
    fn a_driven_run_reports_what_the_driver_counted() {
        let (driver, recorder) = drive(8, &[2, 6], |d| {
            Recorder::new(d, Normalization::PerToken)
                .precision(PrecisionMode::Fp16, true)
                .log(LogAxis::Examples, "8 examples".parse().expect("a span"))
        });
        let report = recorder.report(&driver);
        let c = &report.counters;
        assert_eq!(c.update_attempts, 10);
        assert_eq!((c.applied_updates.get(), c.skipped_updates), (8, 2));
        assert_eq!(
            c.scheduler_steps,
            Updates::new(8),
            "one step per applied update"
        );
        assert!(!report.stopped_early);
        // Stage 0: 3 updates of B = 4 (one skipped attempt among them);
        // stage 1: 5 updates of B = 8 (another).
        let stages: Vec<(u64, u64, u64, u64)> = report
            .stages
            .iter()
            .map(|s| {
                (
                    s.plan.effective_batch,
                    s.applied_updates.get(),
                    s.attempts,
                    s.examples.get(),
                )
            })
            .collect();
        assert_eq!(stages, [(4, 3, 4, 16), (8, 5, 6, 48)]);
        assert_eq!(report.plan.effective_batch, 8, "the plan after the ramp-up");
        let total_examples: u64 = report.updates.iter().map(|u| u.examples.get()).sum();
        assert_eq!(c.examples.get(), total_examples);
        assert_eq!(c.examples.get(), 64);
        assert_eq!(report.data_examples, Examples::new(40));
        // The learning rate is the schedule's of each applied update, 0
        // for a skipped attempt; the loss scale and norm are the caller's.
        let lrs: Vec<f64> = report.updates.iter().map(|u| u.lr).collect();
        assert_eq!(lrs[0], 0.0, "linear warmup starts at 0");
        assert_eq!(lrs[1], 0.0, "attempt 2 was skipped");
        assert!((lrs[2] - 0.05).abs() < 1e-12, "{lrs:?}");
        assert!(report.updates.iter().all(|u| u.loss_scale == 1024.0));
        assert_eq!(report.updates[3].grad_norm, 5.0);
        assert_eq!(report.summary.loss.count, 8);
        assert_eq!(report.summary.loss.first, 5.0);
        assert_eq!(report.summary.loss.last, 0.5);
        // Logged every 8 examples: each applied update of B ≥ 4 examples
        // reaches or crosses a multiple once the first is past.
        let xs: Vec<u64> = report.loss_curve.points.iter().map(|p| p.x).collect();
        assert_eq!(xs.first(), Some(&4));
        assert_eq!(xs.last(), Some(&64), "the last update is always logged");
        assert!(!xs.contains(&8), "attempt 2, skipped, logs nothing");
        assert!(xs.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(
            report.warnings,
            ["2 update attempt(s) skipped for non-finite gradients"]
        );
        assert!(report.memory.replicas.is_empty(), "no memory measured");
    }

    #[test]
    fn memory_is_bounded_and_the_stream_keeps_every_attempt() {
        let dir = std::env::temp_dir().join(format!("accum-record-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a folder");
        let path = dir.join("driven.json");
        let total = 3 * KEPT_UPDATES as u64;
        let (driver, recorder) = drive(total, &[], |d| {
            Recorder::new(d, Normalization::PerToken)
                .stream_beside(&path)
                .expect("a stream")
        });
        let report = recorder.write(&driver, &path).expect("written");
        assert!(report.updates.len() <= KEPT_UPDATES);
        assert!(report.updates_stride > 1);
        assert!(report.loss_curve.points.len() <= CURVE_CAPACITY);
        assert_eq!(report.summary.loss.count, total, "the summary is exact");
        assert_eq!(report.stats_stream.as_deref(), Some("driven.stats.jsonl"));
        let streamed = read_updates(&dir.join("driven.stats.jsonl")).expect("the stream");
        assert_eq!(streamed.len() as u64, total);
        assert_eq!(
            streamed.last().map(|u| u.updates),
            Some(Updates::new(total))
        );
        let back: RunReport =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("the report"))
                .expect("a run report");
        assert_eq!(back.counters, report.counters);
        assert!(back.updates[0].grad_norm == 2.0);
        std::fs::remove_dir_all(&dir).expect("cleaned");
    }

    #[test]
    fn measured_memory_is_checked_on_what_is_retained() {
        let sample = |optimizer_state, retained| MemoryBreakdown {
            params: 100,
            grads: 100,
            optimizer_state,
            activations: 40,
            retained,
        };
        for (leak, grows) in [(0, false), (8, true)] {
            let mut driver = Driver::builder(Plan::new(2, 1, 1).expect("a plan"), 12)
                .total(Updates::new(4))
                .build()
                .expect("a driver");
            let mut recorder = Recorder::new(&driver, Normalization::PerExample);
            while let Some(mut group) = driver.next_group().expect("a group") {
                group.count_all(tokens_of);
                let attempt = group.attempt();
                // The first attempt is skipped: the optimizer state comes
                // with the second, the first applied update.
                let outcome = Outcome::from_finite(attempt > 1);
                let state = if attempt > 1 { 200 } else { 0 };
                let step = Step::loss(1.0).memory(sample(state, leak * (attempt - 1)));
                recorder
                    .finish(&mut driver, group, outcome, step)
                    .expect("recorded");
            }
            let report = recorder.report(&driver);
            assert_eq!(report.memory.peak_grows, grows, "leak {leak}");
            assert_eq!(
                report
                    .warnings
                    .iter()
                    .any(|w| w.contains("kept between microbatches")),
                grows
            );
            assert_eq!(report.memory.replicas.len(), 1);
        }
    }

    #[test]
    fn a_run_left_before_its_total_is_stopped_early() {
        let mut driver = Driver::builder(Plan::new(2, 1, 1).expect("a plan"), 12)
            .total(Updates::new(4))
            .build()
            .expect("a driver");
        let mut recorder = Recorder::new(&driver, Normalization::PerToken);
        let mut group = driver.next_group().expect("a group").expect("one");
        group.count_all(tokens_of);
        recorder
            .finish(&mut driver, group, Outcome::Applied, Step::loss(2.0))
            .expect("recorded");
        assert!(recorder.report(&driver).stopped_early);
        // A group finished without its denominator is the driver's error,
        // passed on; nothing is recorded.
        let group = driver.next_group().expect("a group").expect("one");
        let err = recorder
            .finish(&mut driver, group, Outcome::Applied, Step::loss(1.0))
            .expect_err("not counted");
        assert!(
            matches!(
                err,
                RecordError::Driver(DriverError::NotCounted { attempt: 2 })
            ),
            "{err}"
        );
        assert_eq!(recorder.report(&driver).counters.update_attempts, 1);
    }
}
