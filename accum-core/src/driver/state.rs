//! The driver's position as a value: [`DriverState`], saved with a
//! checkpoint and given back to [`DriverBuilder::resume`] to continue a run
//! exactly, on the same plan or on another of the same global batch.
//!
//! Restoring is O(1) in the run's length: the state holds the counters, the
//! data cursor (epoch, seed, index in the epoch's order), the schedule's
//! position and the plan it was taken under, and nothing is replayed (the
//! epoch's order is drawn again from the seed, O(N) in the data set). A
//! state taken while a group is open records the position before that
//! group: the resumed run redoes the group from its first microbatch.
//!
//! The serialized form is versioned ([`DRIVER_STATE_VERSION`], documented
//! in `docs/loop.md`): a state of another version is refused when it is
//! read, with a message, never read as this one.
//!
//! A loop that checkpoints every 10 updates, is killed inside a group, and
//! resumes from its last checkpoint to the same weights, bit for bit:
//!
//! ```
//! use accum_core::driver::{Driver, DriverState, Outcome};
//! use accum_core::scaler::LossScaler;
//! use accum_core::plan::{Plan, Rounding};
//! use accum_core::replica::InProcess;
//! use accum_core::schedule::Schedule;
//! use accum_core::settings::{LossScaleSettings, Normalization, ScheduleKind};
//! use accum_core::Span;
//!
//! type Error = Box<dyn std::error::Error>;
//! type Data = Vec<Vec<(f64, f64)>>;
//!
//! /// A checkpoint: the model, and the driver's state (with the scaler's) as JSON.
//! #[derive(Clone)]
//! struct Checkpoint {
//!     w: f64,
//!     b: f64,
//!     position: String,
//! }
//!
//! /// The driver, scaler and model of a new run, or of the run `from` saved.
//! fn start(data: &Data, from: Option<&Checkpoint>) -> Result<(Driver, LossScaler, f64, f64), Error> {
//!     let plan = Plan::new(4, 2, 1)?;
//!     let (warmup, total): (Span, Span) = ("40 examples".parse()?, "120 updates".parse()?);
//!     let schedule = Schedule::from_spans(ScheduleKind::Linear, 0.5, warmup, total, &plan, Rounding::Up)?;
//!     let mut builder = Driver::builder(plan, data.len()).seed(1).schedule(schedule);
//!     let mut scaler = LossScaler::dynamic(&LossScaleSettings::default());
//!     let Some(from) = from else {
//!         return Ok((builder.build()?, scaler, 0.0, 0.0));
//!     };
//!     let state: DriverState = serde_json::from_str(&from.position)?; // refused if of another version
//!     if let Some(saved) = state.scaler() {
//!         scaler.restore(saved); // the scale and its growth streak
//!     }
//!     builder = builder.resume(state); // data cursor, counters, schedule: O(1), nothing replayed
//!     Ok((builder.build()?, scaler, from.w, from.b))
//! }
//!
//! /// Trains to the end, saving a checkpoint every 10 updates; "preempted"
//! /// halfway through attempt `preempt`'s group, if given.
//! fn train(data: &Data, from: Option<&Checkpoint>, preempt: Option<u64>) -> Result<(f64, f64, Option<Checkpoint>), Error> {
//!     let (mut driver, mut scaler, mut w, mut b) = start(data, from)?;
//!     let reducer = InProcess::new(1);
//!     let mut saved = None;
//!     while let Some(mut group) = driver.next_group()? {
//!         let den = group.denominator(Normalization::PerToken, |id| data[id].len() as u64, &reducer)?;
//!         let scale = scaler.scale();
//!         let (mut gw, mut gb) = (0.0, 0.0);
//!         for (i, mb) in group.microbatches().enumerate() {
//!             if Some(group.attempt()) == preempt && i == 1 {
//!                 return Ok((w, b, saved)); // killed: this group's work is lost
//!             }
//!             for &(x, y) in mb.ids.iter().flat_map(|&id| &data[id]) {
//!                 let err = w * x + b - y;
//!                 gw += scale * 2.0 * err * x / den.value;
//!                 gb += scale * 2.0 * err / den.value;
//!             }
//!         }
//!         let (gw, gb) = (gw / scale, gb / scale);
//!         let finite = gw.is_finite() && gb.is_finite();
//!         if finite {
//!             let lr = driver.lr().expect("a schedule was given");
//!             (w, b) = (w - lr * gw, b - lr * gb);
//!         }
//!         scaler.update(finite);
//!         driver.finish(group, Outcome::from_finite(finite))?;
//!         if driver.every(accum_core::Updates::new(10)) {
//!             // At an update boundary: the model and the position agree.
//!             let state = driver.state().with_scaler(&scaler);
//!             saved = Some(Checkpoint { w, b, position: serde_json::to_string(&state)? });
//!         }
//!     }
//!     Ok((w, b, saved))
//! }
//!
//! let data: Data = (0..50)
//!     .map(|i| (0..3 + i % 5).map(|t| { let x = ((i * 7 + t) % 10) as f64 / 10.0; (x, 3.0 * x - 1.0) }).collect())
//!     .collect();
//! let (w, b, _) = train(&data, None, None)?;
//! // Killed inside the group of attempt 38; the last checkpoint is after update 30.
//! let (_, _, checkpoint) = train(&data, None, Some(38))?;
//! let checkpoint = checkpoint.expect("checkpoints after updates 10, 20 and 30");
//! let (w2, b2, _) = train(&data, Some(&checkpoint), None)?;
//! assert_eq!((w2.to_bits(), b2.to_bits()), (w.to_bits(), b.to_bits())); // the same run, bit for bit
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;

use serde::{Deserialize, Serialize};

use super::walk::{Position, Walk};
use super::{Driver, DriverError, Progress};
use crate::code::Code;
use crate::plan::{LastGroup, StagedPlan};
use crate::report::{DroppedGroup, PlanSummary};
use crate::scaler::{LossScaler, ScalerState};
use crate::schedule::SchedulePosition;
use crate::settings::Normalization;
use crate::units::{Examples, Microbatches, Tokens, Updates, group_digits};

/// The version of [`DriverState`]'s serialized form this accum writes and
/// reads.
pub const DRIVER_STATE_VERSION: u32 = 1;

/// Where a [`Driver`] stands, as one serde value: take it with
/// [`Driver::state`], save it with the model's checkpoint, and give it to
/// [`DriverBuilder::resume`](super::DriverBuilder::resume) to continue
/// the run exactly. The same on every rank: save it once (rank 0) and
/// resume every rank from it. See `docs/loop.md`, "Resume", for its
/// serialized form.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Versioned")]
pub struct DriverState {
    version: u32,
    #[serde(flatten)]
    body: StateV1,
}

/// Version 1 of the serialized form.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StateV1 {
    /// The stages of the plan the state was taken under (one for a
    /// constant plan).
    plan: Vec<SavedStage>,
    /// The data set and the position in it.
    data: SavedData,
    /// The driver's [`Progress`].
    progress: SavedProgress,
    /// The stage (0-based) of the next update.
    stage: usize,
    /// Examples the applied partial groups had fewer than full ones.
    short: u64,
    /// The count of the run's length unit after the update that reached it.
    total_end: Option<u64>,
    /// The partial groups dropped so far (`last_group = "drop"`): at most
    /// one per epoch.
    dropped: Vec<DroppedGroup>,
    /// Global batches changed at a resume, by consent.
    #[serde(default)]
    batch_changes: Vec<BatchChange>,
    /// The schedule's position, when the driver has a schedule.
    schedule: Option<SchedulePosition>,
    /// The loss scaler's, when the loop added it ([`DriverState::with_scaler`]).
    scaler: Option<ScalerState>,
}

/// One stage of the saved plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SavedStage {
    micro_batch: u64,
    accumulation: u64,
    replicas: u64,
    seq_len: Option<u64>,
    /// Updates applied before the stage.
    start: u64,
    /// One past its last update; `None` for the last stage.
    end: Option<u64>,
}

impl SavedStage {
    fn effective_batch(&self) -> u64 {
        self.micro_batch
            .saturating_mul(self.accumulation)
            .saturating_mul(self.replicas)
    }

    fn summary(&self) -> PlanSummary {
        PlanSummary {
            micro_batch: self.micro_batch,
            accumulation: self.accumulation,
            replicas: self.replicas,
            effective_batch: self.effective_batch(),
            seq_len: self.seq_len,
        }
    }
}

/// The data set and the cursor in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SavedData {
    /// Examples in the data set.
    examples: u64,
    /// The seed of the epoch orders.
    seed: u64,
    last_group: LastGroup,
    /// The epoch of the last group drawn.
    epoch: u64,
    /// The position in the epoch's order where the next group starts (the
    /// data set's size: the epoch is used up).
    index: u64,
}

/// The counters of [`Progress`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SavedProgress {
    updates: u64,
    microbatches: u64,
    examples: u64,
    tokens: u64,
    attempts: u64,
    skipped: u64,
    partial: u64,
}

/// A global batch changed at a resume.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BatchChange {
    /// Applied updates before the change.
    pub(crate) update: u64,
    /// `B` of the next update under the saved plan.
    pub(crate) from: u64,
    /// `B` of the next update under the resumed plan.
    pub(crate) to: u64,
}

/// The form read first: the version, then the rest as that version says.
#[derive(Deserialize)]
struct Versioned {
    version: Option<u32>,
    #[serde(flatten)]
    rest: serde_json::Map<String, serde_json::Value>,
}

impl TryFrom<Versioned> for DriverState {
    type Error = ResumeError;

    fn try_from(v: Versioned) -> Result<DriverState, ResumeError> {
        if v.version != Some(DRIVER_STATE_VERSION) {
            return Err(ResumeError::Version { found: v.version });
        }
        let body: StateV1 =
            serde_json::from_value(serde_json::Value::Object(v.rest)).map_err(|e| {
                ResumeError::Unreadable {
                    reason: e.to_string(),
                }
            })?;
        if body.data.index > body.data.examples {
            return Err(ResumeError::Unreadable {
                reason: format!(
                    "the data index {} is past the data set's {} examples",
                    body.data.index, body.data.examples
                ),
            });
        }
        if body.plan.is_empty() {
            return Err(ResumeError::Unreadable {
                reason: "the plan has no stage".to_owned(),
            });
        }
        Ok(DriverState {
            version: DRIVER_STATE_VERSION,
            body,
        })
    }
}

impl DriverState {
    /// The version of the serialized form ([`DRIVER_STATE_VERSION`]).
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The driver's progress when the state was taken: the applied updates
    /// and attempts before the next group.
    pub fn progress(&self) -> Progress {
        let p = &self.body.progress;
        Progress {
            updates: Updates::new(p.updates),
            microbatches: Microbatches::new(p.microbatches),
            examples: Examples::new(p.examples),
            tokens: Tokens::new(p.tokens),
            attempts: p.attempts,
            skipped: p.skipped,
            partial: p.partial,
        }
    }

    /// The same state holding `scaler`'s scale and growth tracker, so one
    /// value restores both ([`scaler`](Self::scaler)).
    pub fn with_scaler(mut self, scaler: &LossScaler) -> DriverState {
        self.body.scaler = Some(scaler.state());
        self
    }

    /// The loss scaler's state, if [`with_scaler`](Self::with_scaler) added
    /// it: give it to [`LossScaler::restore`].
    pub fn scaler(&self) -> Option<ScalerState> {
        self.body.scaler
    }

    /// The saved plan's stage of the update after `updates`.
    fn stage_at(&self, updates: u64) -> &SavedStage {
        self.body
            .plan
            .iter()
            .rev()
            .find(|s| s.start <= updates)
            .unwrap_or(&self.body.plan[0])
    }
}

/// Each stage's first update (0-based) and global batch.
fn batches(stages: &StagedPlan) -> Vec<(u64, u64)> {
    stages
        .stages()
        .iter()
        .map(|s| (s.start().get(), s.plan().effective_batch().get()))
        .collect()
}

impl Driver {
    /// Where the driver stands, to save with a checkpoint and give back to
    /// [`DriverBuilder::resume`](super::DriverBuilder::resume). Taken
    /// while a group is open, it is the position before that group: the
    /// resumed run redoes the group from its first microbatch (its work is
    /// not in the model a checkpoint saves at an update boundary). O(1)
    /// but for the dropped groups, at most one per epoch.
    pub fn state(&self) -> DriverState {
        let (at, dropped) = match (self.open, self.open_from) {
            (Some(_), Some(from)) => from,
            _ => (self.walk.position(), self.dropped.len()),
        };
        let mut state = DriverState::of_walk(
            &self.walk,
            at,
            self.progress,
            self.dropped[..dropped].to_vec(),
            self.schedule.as_ref().map(|s| s.position()),
        );
        state.body.short = self.short;
        state.body.total_end = self.total_end;
        state.body.batch_changes = self.batch_changes.clone();
        state
    }

    /// Puts a freshly built driver at `state`, after checking that the
    /// state fits it: the same data, seed, policy and `seq_len`, a schedule
    /// if and only if the state has one, and the same global batch at every
    /// update unless `allow_batch_change`.
    pub(super) fn restore(
        &mut self,
        state: DriverState,
        allow_batch_change: bool,
    ) -> Result<(), ResumeError> {
        let body = &state.body;
        let (changes, changed_from) = state.check(&self.walk, allow_batch_change)?;
        match (&mut self.schedule, &body.schedule) {
            (None, None) => {}
            (Some(schedule), Some(position)) => {
                schedule
                    .set_position(position)
                    .map_err(|(saved, now)| ResumeError::ScheduleKind { saved, now })?;
            }
            (now, saved) => {
                return Err(ResumeError::Schedule {
                    saved: saved.is_some(),
                    now: now.is_some(),
                });
            }
        }
        self.walk.seek(state.position());
        self.progress = state.progress();
        self.before = self.progress;
        self.short = body.short;
        self.total_end = if self.finished() {
            body.total_end
                .or(Some(self.progress.count(self.total.unit())))
        } else {
            None
        };
        self.dropped = body.dropped.clone();
        self.batch_changes = changes;
        self.resumed = Some(Resumed { changed_from });
        Ok(())
    }
}

impl DriverState {
    /// The state of a walk standing at `at` after `progress`, with its
    /// dropped groups and schedule position: what [`Driver::state`] saves,
    /// and what the engine saves of its own walk.
    pub(crate) fn of_walk(
        walk: &Walk,
        at: Position,
        progress: Progress,
        dropped: Vec<DroppedGroup>,
        schedule: Option<SchedulePosition>,
    ) -> DriverState {
        let p = &progress;
        let plan = walk
            .stages()
            .stages()
            .iter()
            .map(|s| SavedStage {
                micro_batch: s.plan().micro_batch(),
                accumulation: s.plan().accumulation(),
                replicas: s.plan().replicas(),
                seq_len: s.plan().seq_len(),
                start: s.start().get(),
                end: s.end().map(Updates::get),
            })
            .collect();
        DriverState {
            version: DRIVER_STATE_VERSION,
            body: StateV1 {
                plan,
                data: SavedData {
                    examples: walk.examples() as u64,
                    seed: walk.seed(),
                    last_group: walk.policy(),
                    epoch: at.epoch,
                    index: at.cursor as u64,
                },
                progress: SavedProgress {
                    updates: p.updates.get(),
                    microbatches: p.microbatches.get(),
                    examples: p.examples.get(),
                    tokens: p.tokens.get(),
                    attempts: p.attempts,
                    skipped: p.skipped,
                    partial: p.partial,
                },
                stage: walk.plan_for_next(p.updates).0,
                short: 0,
                total_end: None,
                dropped,
                batch_changes: Vec::new(),
                schedule,
                scaler: None,
            },
        }
    }

    /// Checks that the state fits a walk: the same data, seed, policy and
    /// `seq_len`, and the same global batch at every update unless
    /// `allow_batch_change`. Gives the batch changes to record and, when
    /// the plan of the next update differs, the saved one.
    pub(crate) fn check(
        &self,
        walk: &Walk,
        allow_batch_change: bool,
    ) -> Result<(Vec<BatchChange>, Option<PlanSummary>), ResumeError> {
        let body = &self.body;
        let data = &body.data;
        let examples = walk.examples() as u64;
        if data.examples != examples {
            return Err(ResumeError::Examples {
                saved: data.examples,
                now: examples,
            });
        }
        if data.seed != walk.seed() {
            return Err(ResumeError::Seed {
                saved: data.seed,
                now: walk.seed(),
            });
        }
        if data.last_group != walk.policy() {
            return Err(ResumeError::LastGroup {
                saved: data.last_group,
                now: walk.policy(),
            });
        }
        let seq_len = walk.stages().final_plan().seq_len();
        if body.plan[0].seq_len != seq_len {
            return Err(ResumeError::SeqLen {
                saved: body.plan[0].seq_len,
                now: seq_len,
            });
        }
        let updates = body.progress.updates;
        let saved_batches: Vec<(u64, u64)> = body
            .plan
            .iter()
            .map(|s| (s.start, s.effective_batch()))
            .collect();
        let now_batches = batches(walk.stages());
        let saved_plan = self.stage_at(updates).summary();
        let now_plan = PlanSummary::from(walk.plan_for_next(Updates::new(updates)).1);
        let mut changes = body.batch_changes.clone();
        if saved_batches != now_batches {
            if !allow_batch_change {
                return Err(ResumeError::GlobalBatch {
                    update: Updates::new(updates),
                    saved: saved_batches,
                    now: now_batches,
                });
            }
            changes.push(BatchChange {
                update: updates,
                from: saved_plan.effective_batch,
                to: now_plan.effective_batch,
            });
        }
        Ok((changes, (saved_plan != now_plan).then_some(saved_plan)))
    }

    /// The walk's position the state was taken at.
    pub(crate) fn position(&self) -> Position {
        Position {
            epoch: self.body.data.epoch,
            cursor: usize::try_from(self.body.data.index).unwrap_or(usize::MAX),
        }
    }

    /// The schedule's position, when the state has a schedule.
    #[cfg(feature = "engine")]
    pub(crate) fn schedule_position(&self) -> Option<&SchedulePosition> {
        self.body.schedule.as_ref()
    }

    /// The plan of the next update under the saved plan.
    #[cfg(feature = "engine")]
    pub(crate) fn next_plan(&self) -> PlanSummary {
        self.stage_at(self.body.progress.updates).summary()
    }
}

/// How a driver was resumed, for the report's segments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Resumed {
    /// The plan of the next update under the saved plan, when it differs
    /// from the resumed driver's.
    pub(crate) changed_from: Option<PlanSummary>,
}

/// A saved state or report does not fit the run that would continue it
/// (or cannot be read): continuing would be another run, silently.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResumeError {
    /// The state is of a version this accum does not read, or has none.
    Version {
        /// The state's version, if it has one.
        found: Option<u32>,
    },
    /// The state's fields do not read as its version's.
    Unreadable {
        /// What is wrong.
        reason: String,
    },
    /// The data set has another number of examples.
    Examples {
        /// In the state.
        saved: u64,
        /// In this driver.
        now: u64,
    },
    /// The epoch orders' seed differs.
    Seed {
        /// In the state.
        saved: u64,
        /// In this driver.
        now: u64,
    },
    /// The last-group policy differs.
    LastGroup {
        /// In the state.
        saved: LastGroup,
        /// In this driver.
        now: LastGroup,
    },
    /// The plan's `seq_len` differs.
    SeqLen {
        /// In the state.
        saved: Option<u64>,
        /// In this driver.
        now: Option<u64>,
    },
    /// The global batch differs at some update, without consent
    /// ([`DriverBuilder::allow_global_batch_change`](super::DriverBuilder::allow_global_batch_change)).
    GlobalBatch {
        /// Applied updates when the state was taken.
        update: Updates,
        /// Each stage's first update (0-based) and `B`, in the state.
        saved: Vec<(u64, u64)>,
        /// The same in this driver.
        now: Vec<(u64, u64)>,
    },
    /// One of the state and the driver has a schedule, the other not.
    Schedule {
        /// Whether the state has one.
        saved: bool,
        /// Whether this driver has one.
        now: bool,
    },
    /// One schedule is counted on the run and the other is not.
    ScheduleKind {
        /// Whether the saved one is counted.
        saved: bool,
        /// Whether this driver's is.
        now: bool,
    },
    /// The report's loss normalization differs from the recorder's.
    Normalization {
        /// In the report.
        saved: Normalization,
        /// Given to the recorder.
        now: Normalization,
    },
    /// The report is at another point of the run than the driver.
    ReportPosition {
        /// Applied updates and attempts the report counts.
        report: (Updates, u64),
        /// Applied updates and attempts of the driver.
        driver: (Updates, u64),
    },
    /// The report holds no recorder position: it was written by
    /// `accum run` or by an accum before resumes.
    NotContinuable,
}

impl ResumeError {
    /// The rule of docs/rules.md a resume past the error would break, when
    /// there is one.
    pub fn code(&self) -> Option<Code> {
        match self {
            ResumeError::GlobalBatch { .. } => Some(Code::GlobalBatch),
            ResumeError::SeqLen { .. } => Some(Code::SeqLen),
            ResumeError::LastGroup { .. } => Some(Code::PartialGroup),
            ResumeError::Schedule { .. } | ResumeError::ScheduleKind { .. } => {
                Some(Code::Scheduler)
            }
            ResumeError::Normalization { .. } => Some(Code::Normalization),
            _ => None,
        }
    }
}

/// "B 32 from update 1, 64 from update 51".
pub(crate) fn describe_batches(stages: &[(u64, u64)]) -> String {
    match stages {
        [(_, b)] => format!("B {}", group_digits(*b)),
        _ => {
            let parts: Vec<String> = stages
                .iter()
                .map(|(start, b)| {
                    format!(
                        "{} from update {}",
                        group_digits(*b),
                        group_digits(start + 1)
                    )
                })
                .collect();
            format!("B {}", parts.join(", "))
        }
    }
}

/// A setting as a config writes it (`"drop"`, `"per_token"`).
fn written<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(text)) => text,
        _ => String::new(),
    }
}

fn describe_seq_len(seq_len: Option<u64>) -> String {
    seq_len.map_or_else(|| "none".to_owned(), group_digits)
}

fn a_schedule(has: bool) -> &'static str {
    if has { "a schedule" } else { "no schedule" }
}

fn counted(is: bool) -> &'static str {
    if is {
        "counted on the run"
    } else {
        "in updates"
    }
}

impl fmt::Display for ResumeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResumeError::Version { found: Some(v) } => write!(
                f,
                "the driver state is of version {v}, and this accum reads version {DRIVER_STATE_VERSION}; \
                 resume it with the accum that wrote it"
            ),
            ResumeError::Version { found: None } => write!(
                f,
                "the value has no `version`: it is not a driver state written by `Driver::state`"
            ),
            ResumeError::Unreadable { reason } => write!(
                f,
                "the driver state of version {DRIVER_STATE_VERSION} does not read: {reason}; \
                 give the value `Driver::state` wrote, unchanged"
            ),
            ResumeError::Examples { saved, now } => write!(
                f,
                "the state was taken over {} examples, and this driver has {}: the data differs, and its \
                 order would too; resume over the same data",
                group_digits(*saved),
                group_digits(*now)
            ),
            ResumeError::Seed { saved, now } => write!(
                f,
                "the state was taken with seed {saved}, and this driver has seed {now}: every epoch's order \
                 would differ; resume with `.seed({saved})`"
            ),
            ResumeError::LastGroup { saved, now } => write!(
                f,
                "the state was taken with last_group \"{}\", and this driver has \"{}\": the epochs' groups \
                 would differ; resume with `.last_group(LastGroup::{saved:?})`",
                written(saved),
                written(now)
            ),
            ResumeError::SeqLen { saved, now } => write!(
                f,
                "the state was taken under seq_len {}, and this driver's plan has {}: lengths in tokens \
                 would be read through another length; resume under seq_len {}",
                describe_seq_len(*saved),
                describe_seq_len(*now),
                describe_seq_len(*saved)
            ),
            ResumeError::GlobalBatch { update, saved, now } => write!(
                f,
                "the state was taken after update {} under {}, and this driver's plan has {}: another \
                 global batch averages every later update over another number of examples; keep B \
                 (change m, A or D so that m × A × D stays), or consent with \
                 `.allow_global_batch_change()`, which the run's notes and report then record",
                group_digits(update.get()),
                describe_batches(saved),
                describe_batches(now)
            ),
            ResumeError::Schedule { saved, now } => write!(
                f,
                "the state was taken with {}, and this driver has {}: {}",
                a_schedule(*saved),
                a_schedule(*now),
                if *saved {
                    "the learning rate would not continue; give the driver the schedule it had"
                } else {
                    "the schedule would start over at its first update; give the driver the state's \
                     run without a schedule, or start a new run"
                }
            ),
            ResumeError::ScheduleKind { saved, now } => write!(
                f,
                "the state's schedule is {}, and this driver's is {}: its position does not fit; give \
                 the driver the schedule it had",
                counted(*saved),
                counted(*now)
            ),
            ResumeError::Normalization { saved, now } => write!(
                f,
                "the report's loss is normalized \"{}\", and the recorder's \"{}\": the losses of one run \
                 would mean two things; continue the report with Normalization::{saved:?}",
                written(saved),
                written(now)
            ),
            ResumeError::ReportPosition { report, driver } => write!(
                f,
                "the report counts {} applied updates of {} attempts, and the driver state {} of {}: \
                 they were saved at different points; save the report with each checkpoint \
                 (`recorder.report(&driver)` beside `driver.state()`) and resume from the pair",
                group_digits(report.0.get()),
                group_digits(report.1),
                group_digits(driver.0.get()),
                group_digits(driver.1)
            ),
            ResumeError::NotContinuable => write!(
                f,
                "the report holds no recorder position (it was written by `accum run`, or by an accum \
                 before resumes): a recorder continues only a report a `Recorder` wrote"
            ),
        }
    }
}

impl std::error::Error for ResumeError {}

// `?` in `main` prints the sentence, not the fields.
crate::code::debug_as_display!(ResumeError);

impl From<ResumeError> for DriverError {
    fn from(e: ResumeError) -> Self {
        DriverError::Resume(e)
    }
}
