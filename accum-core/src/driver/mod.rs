//! The loop driver for a training loop of one's own, in any framework
//! (`accum::run::group`, `accum::run::normalization`,
//! `accum::plan::partial-group`, `accum::run::scheduler`,
//! `accum::run::data-parallel`). No tensor types: it deals in example ids,
//! counts and flags, and the caller's framework does the math.
//!
//! A [`Driver`] walks a [`Plan`] — or a [`StagedPlan`] whose `A` grows at
//! stage boundaries (batch ramp-up) — over a data set of `N` examples (ids
//! `0..N`, positions in the caller's data), epoch by epoch in a seeded
//! order, and update by update:
//!
//! 1. [`Driver::next_group`] gives the next update's [`Group`]: its
//!    examples on every replica, split into microbatches, with the partial
//!    last group of an epoch handled by the [`LastGroup`] policy (dropped
//!    ids are recorded, `accum::plan::partial-group`).
//! 2. [`Group::denominator`] fixes the group's global loss denominator
//!    before the first backward pass (`accum::run::normalization`, `accum::run::group`): the caller's closure counts
//!    each example's supervised tokens, and a [`Reducer`](crate::replica::Reducer)
//!    sums the counts over the replicas.
//! 3. [`Group::microbatches`] yields this rank's microbatches; the last one
//!    has [`sync`](MicrobatchIds::sync) set: the gradient all-reduce follows
//!    its backward pass, the others run without synchronisation (`accum::run::data-parallel`).
//! 4. [`Driver::finish`] takes the attempt's [`Outcome`]: only an applied
//!    update advances the schedule and the [`Progress`] counters
//!    (`accum::run::loss-scale`, `accum::run::scheduler`).
//!
//! The run's length is a [`Span`] in any unit, reached on the real groups:
//! "6,400 examples" ends with the update whose examples reach 6,400,
//! partial groups included. A [counted](Schedule::counted) schedule follows
//! the same real counters, so a warmup in tokens over variable-length data
//! ends exactly where the tokens reach it. [`Driver::notes`] says where a
//! length rounded; a group over a declared `seq_len` is refused.
//!
//! With stages, each group is drawn under the plan of the update it will
//! produce: the stage of the applied updates so far ([`Group::plan`],
//! [`Group::stage`]). A skipped attempt does not advance the stage; its
//! retry runs under the same plan. The denominator stays the whole group's
//! whatever the stage.
//!
//! The walk is the one accum's own engine uses: the same seed gives the same
//! order, the same examples on the same replica in the same microbatch, and
//! the same partial groups. `docs/loop.md` shows whole loops in plain Rust
//! and in candle.
//!
//! ```
//! use accum_core::driver::{Driver, Outcome};
//! use accum_core::replica::InProcess;
//! use accum_core::settings::Normalization;
//! use accum_core::Updates;
//! use accum_core::plan::{LastGroup, Plan};
//!
//! let lengths = [5u64, 3, 8, 2, 7, 4, 6, 1, 9, 3]; // supervised tokens per example
//! let plan = Plan::new(2, 2, 1)?; // m = 2, A = 2, D = 1: B = 4
//! let mut driver = Driver::builder(plan, lengths.len())
//!     .seed(7)
//!     .last_group(LastGroup::Drop)
//!     .total(Updates::new(4))
//!     .build()?;
//! let reducer = InProcess::new(1);
//! while let Some(mut group) = driver.next_group()? {
//!     let denominator = group.denominator(Normalization::PerToken, |id| lengths[id], &reducer)?;
//!     let mut weight = 0.0;
//!     for mb in group.microbatches() {
//!         // forward, loss summed over the microbatch's tokens ÷ denominator, backward
//!         weight += mb.ids.iter().map(|&id| lengths[id] as f64).sum::<f64>() / denominator.value;
//!     }
//!     assert!((weight - 1.0).abs() < 1e-12); // normalized exactly once
//!     driver.finish(group, Outcome::Applied)?;
//! }
//! assert_eq!(driver.progress().updates, Updates::new(4));
//! assert_eq!(driver.dropped().len(), 1); // 10 = 2 × 4 + 2: the 2 left over are dropped once
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod group;
mod progress;
mod record;
mod state;
mod walk;

// `?` in `main` prints the sentence, not the fields.
crate::code::debug_as_display!(DriverError);

#[cfg(test)]
mod length_tests;
// The driver's tests run it beside the engine, on the engine's data.
#[cfg(test)]
#[cfg(feature = "engine")]
mod resume_tests;
#[cfg(test)]
#[cfg(feature = "engine")]
mod stage_tests;
#[cfg(test)]
#[cfg(feature = "engine")]
mod tests;

use std::fmt;

pub use group::{Denominator, Group, GroupCounts, MicrobatchIds};
pub use progress::Progress;
pub use record::{RecordError, Recorder, Step};
pub(crate) use state::Resumed;
#[cfg(feature = "engine")]
pub(crate) use state::describe_batches;
pub use state::{DRIVER_STATE_VERSION, DriverState, ResumeError};
#[cfg(feature = "engine")]
pub(crate) use walk::{Draw, survey};
pub use walk::{GroupAssignment, StageGroupError, epoch_order};
pub(crate) use walk::{Position, Walk};

use crate::code::Code;
use crate::plan::{LastGroup, Plan, PlanError, StagedPlan};
use crate::replica::ReduceError;
use crate::report::DroppedGroup;
use crate::schedule::{Schedule, ScheduleError};
use crate::span::Span;
use crate::units::{Microbatches, Tokens, Updates};

mod note;

pub use note::DriverNote;

/// What happened to an update attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The optimizer applied the update.
    Applied,
    /// The update was skipped (non-finite gradients): an attempt, not an
    /// update (`accum::run::loss-scale`).
    Skipped,
}

impl Outcome {
    /// `Applied` when the gradients were finite, else `Skipped`.
    pub fn from_finite(finite: bool) -> Outcome {
        if finite {
            Outcome::Applied
        } else {
            Outcome::Skipped
        }
    }
}

/// Why a driver could not be built or used.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DriverError {
    /// The data set is empty.
    NoExamples,
    /// Under `drop`, the data holds less than one group: nothing would train.
    NotEnoughData {
        /// Examples in the data.
        examples: u64,
        /// Examples per update `B`.
        effective_batch: u64,
    },
    /// The plan refuses the data: with `last_group = "error"`, the data does
    /// not fill whole groups (`accum::plan::partial-group`).
    Plan(PlanError),
    /// The rank is not one of the plan's replicas.
    Rank {
        /// The rank given.
        rank: usize,
        /// The plan's `D`.
        replicas: u64,
    },
    /// [`Driver::next_group`] was called before the open group was finished.
    Unfinished {
        /// The open attempt.
        attempt: u64,
    },
    /// [`Driver::finish`] got a group that is not the open one.
    NotOpen {
        /// The group's attempt.
        attempt: u64,
        /// The open attempt, if any.
        open: Option<u64>,
    },
    /// A group was finished before its denominator was counted (`accum::run::group`).
    NotCounted {
        /// The attempt.
        attempt: u64,
    },
    /// The reducer joins another number of replicas than the plan's `D`.
    ReducerSize {
        /// Replicas of the reducer.
        reducer: usize,
        /// The plan's `D`.
        replicas: u64,
    },
    /// The count all-reduce failed (another replica aborted).
    Reduce(ReduceError),
    /// With stages under `last_group = "error"`: a stage's group would be
    /// partial (`accum::plan::partial-group`).
    StageGroup(StageGroupError),
    /// The schedule does not fit the run's length: its warmup is longer.
    Schedule(ScheduleError),
    /// An interval given to [`DriverBuilder::interval`] is longer than the
    /// run: `every` would never fire.
    IntervalTooLong {
        /// The interval.
        interval: Span,
        /// The run's length.
        total: Span,
        /// Both in the finer unit, when they differ.
        compared: Option<(Span, Span)>,
    },
    /// A saved [`DriverState`] does not fit this driver, or cannot be read.
    Resume(ResumeError),
    /// A group holds more supervised tokens than its examples at the plan's
    /// fixed `seq_len`: the data is not of that length, and a length in
    /// tokens resolved through it would be wrong.
    TokensOverSeqLen {
        /// The attempt.
        attempt: u64,
        /// The group's supervised tokens, over all replicas.
        tokens: Tokens,
        /// The group's examples.
        examples: u64,
        /// The declared `seq_len`.
        seq_len: u64,
    },
}

impl DriverError {
    /// The rule of docs/rules.md the error breaks, when it breaks one
    /// (`None` for an empty data set).
    pub fn code(&self) -> Option<Code> {
        match self {
            DriverError::NoExamples => None,
            DriverError::NotEnoughData { .. } | DriverError::StageGroup(_) => {
                Some(Code::PartialGroup)
            }
            DriverError::Plan(e) => Some(e.code()),
            DriverError::Rank { .. } | DriverError::ReducerSize { .. } | DriverError::Reduce(_) => {
                Some(Code::DataParallel)
            }
            DriverError::Unfinished { .. }
            | DriverError::NotOpen { .. }
            | DriverError::NotCounted { .. } => Some(Code::Group),
            DriverError::Schedule(e) => e.code(),
            DriverError::IntervalTooLong { .. } => Some(Code::Every),
            DriverError::TokensOverSeqLen { .. } => Some(Code::Tokens),
            DriverError::Resume(e) => e.code(),
        }
    }
}

impl fmt::Display for DriverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DriverError::NoExamples => {
                write!(
                    f,
                    "the data set is empty; give the driver at least one example"
                )
            }
            DriverError::NotEnoughData {
                examples,
                effective_batch,
            } => write!(
                f,
                "the data has {examples} examples, fewer than one update of {effective_batch}, and last_group is \"drop\": \
                 nothing would be trained; use at least {effective_batch} examples or last_group \"process\""
            ),
            DriverError::Plan(e) => write!(f, "{e}"),
            DriverError::Rank { rank, replicas } => write!(
                f,
                "rank {rank} is not a replica of a plan with {replicas} data-parallel replica(s); use a rank below {replicas}"
            ),
            DriverError::Unfinished { attempt } => write!(
                f,
                "update attempt {attempt} is still open; hand its group to `finish` before asking for the next one"
            ),
            DriverError::NotOpen { attempt, open } => match open {
                Some(open) => write!(
                    f,
                    "the group of attempt {attempt} is not the open one (attempt {open}); finish each group once, in order"
                ),
                None => write!(
                    f,
                    "the group of attempt {attempt} is not open; finish each group once, in order"
                ),
            },
            DriverError::ReducerSize { reducer, replicas } => write!(
                f,
                "the reducer joins {reducer} replica(s) but the plan has {replicas}; the group's denominator would miss \
                 the others' examples: share one reducer of {replicas} replicas (for threads, `InProcess::new({replicas})` and each \
                 thread its rank's `reducer.member(rank)`), or count every example here with `group.count_all`"
            ),
            DriverError::Reduce(e) => write!(f, "counting the group's denominator: {e}"),
            DriverError::StageGroup(e) => write!(f, "{e}"),
            DriverError::Resume(e) => write!(f, "{e}"),
            DriverError::Schedule(e) => write!(f, "{e}"),
            DriverError::IntervalTooLong {
                interval,
                total,
                compared,
            } => {
                write!(
                    f,
                    "the interval of {interval} is longer than the run of {total}"
                )?;
                if let Some((i, t)) = compared {
                    write!(f, " ({i} > {t} through the plan)")?;
                }
                write!(
                    f,
                    ", so it would never fire; shorten the interval or lengthen the run"
                )
            }
            DriverError::TokensOverSeqLen {
                attempt,
                tokens,
                examples,
                seq_len,
            } => write!(
                f,
                "the group of attempt {attempt} has {tokens} supervised tokens, more than its {examples} examples × \
                 seq_len {seq_len} = {} tokens: the data is longer than the declared seq_len; declare the real \
                 length, or none for variable-length data (then lengths in tokens are counted on the run, \
                 `Schedule::counted`)",
                crate::units::group_digits(examples.saturating_mul(*seq_len))
            ),
            DriverError::NotCounted { attempt } => write!(
                f,
                "attempt {attempt} was finished without a denominator; call `group.denominator(...)` (or `count`) \
                 before the first backward pass, so the loss is normalized by the whole group"
            ),
        }
    }
}

impl std::error::Error for DriverError {}

impl From<PlanError> for DriverError {
    fn from(e: PlanError) -> Self {
        DriverError::Plan(e)
    }
}

/// Settings of a [`Driver`]; see [`Driver::builder`].
#[derive(Clone, Debug)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct DriverBuilder {
    plan: StagedPlan,
    examples: usize,
    seed: u64,
    policy: LastGroup,
    rank: usize,
    total: Option<Span>,
    schedule: Option<Schedule>,
    intervals: Vec<Span>,
    resume: Option<DriverState>,
    allow_batch_change: bool,
}

impl DriverBuilder {
    /// The seed of the epoch orders (default 0). Every rank must use the same.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// What happens to the partial last group of an epoch (default `process`).
    pub fn last_group(mut self, policy: LastGroup) -> Self {
        self.policy = policy;
        self
    }

    /// This process's data-parallel rank (default 0).
    pub fn rank(mut self, rank: usize) -> Self {
        self.rank = rank;
        self
    }

    /// The length of the run, in any unit: the run ends with the applied
    /// update whose count reaches it ("100 updates", or "6,400 examples"
    /// counted on the real groups, partial ones included). Default: the
    /// schedule's total when a schedule is given, else one epoch (with
    /// stages: the first epoch's updates).
    pub fn total(mut self, total: impl Into<Span>) -> Self {
        self.total = Some(total.into());
        self
    }

    /// A learning-rate schedule, advanced once per applied update (`accum::run::scheduler`); a
    /// [counted](Schedule::counted) one follows the run's real counters.
    pub fn schedule(mut self, schedule: Schedule) -> Self {
        self.schedule = Some(schedule);
        self
    }

    /// An interval the loop asks [`Driver::every`] about (evaluation,
    /// checkpoints): the build refuses one longer than the run, which would
    /// never fire.
    pub fn interval(mut self, every: impl Into<Span>) -> Self {
        self.intervals.push(every.into());
        self
    }

    /// Continues the run `state` was taken from ([`Driver::state`]): the
    /// driver starts at its update boundary, with its counters, data
    /// position (epoch, seed, index in the epoch's order) and schedule
    /// position, in O(1) whatever the run's length. The builder's other
    /// settings are the resumed run's: the same data size, seed,
    /// last-group policy, `seq_len` and kind of schedule, or the build is
    /// refused with what differs. The plan may change if every update keeps
    /// its global batch `B` (another `D`, or `m` with `A`): the examples of
    /// every later update are the same. Another `B` needs
    /// [`allow_global_batch_change`](Self::allow_global_batch_change).
    pub fn resume(mut self, state: DriverState) -> Self {
        self.resume = Some(state);
        self
    }

    /// Consents to a resume whose plan has another global batch than the
    /// state's: the run continues its data and counters, each later update
    /// averages another number of examples, and [`Driver::notes`] (and a
    /// continued report) record the change.
    pub fn allow_global_batch_change(mut self) -> Self {
        self.allow_batch_change = true;
        self
    }

    /// The driver, after checking the data against the plan and the
    /// policy, at the resumed state when one was given.
    pub fn build(self) -> Result<Driver, DriverError> {
        // `m` and `D` are the same in every stage.
        let replicas = self.plan.first_plan().replicas();
        if self.rank as u64 >= replicas {
            return Err(DriverError::Rank {
                rank: self.rank,
                replicas,
            });
        }
        // `accum::plan::partial-group`: the walk refuses data the policy cannot run, before any work.
        let staged = self.plan.clone();
        let walk = Walk::new(self.plan, self.examples, self.seed, self.policy)?;
        let total = self
            .total
            .or_else(|| {
                self.schedule.as_ref().map(|s| match s.is_counted() {
                    true => s.total_length(),
                    false => Span::of(s.total()),
                })
            })
            .unwrap_or(Span::of(walk.updates_per_epoch()));
        if total.value() == 0 {
            return Err(DriverError::Schedule(ScheduleError::ZeroTotal));
        }
        // The schedule's warmup and every interval fit in the run, compared
        // through the plan where it converts them exactly.
        if let Some(schedule) = &self.schedule {
            let warmup = schedule.warmup_length();
            if let Some((w, t)) = crate::schedule::in_one_unit(warmup, total, &staged)
                && w.value() > t.value()
            {
                return Err(DriverError::Schedule(ScheduleError::WarmupTooLong {
                    warmup,
                    total,
                    compared: (warmup.unit() != total.unit()).then_some((w, t)),
                }));
            }
        }
        for &interval in &self.intervals {
            if let Some((i, t)) = crate::schedule::in_one_unit(interval, total, &staged)
                && i.value() > t.value()
            {
                return Err(DriverError::IntervalTooLong {
                    interval,
                    total,
                    compared: (interval.unit() != total.unit()).then_some((i, t)),
                });
            }
        }
        let mut driver = Driver {
            walk,
            rank: self.rank,
            total,
            schedule: self.schedule,
            progress: Progress::default(),
            before: Progress::default(),
            open: None,
            open_from: None,
            dropped: Vec::new(),
            total_end: None,
            short: 0,
            batch_changes: Vec::new(),
            resumed: None,
        };
        if let Some(state) = self.resume {
            driver.restore(state, self.allow_batch_change)?;
        }
        Ok(driver)
    }
}

/// Walks a plan over a data set for one rank. See the [module docs](self).
#[derive(Clone, Debug)]
pub struct Driver {
    walk: Walk,
    rank: usize,
    total: Span,
    schedule: Option<Schedule>,
    progress: Progress,
    /// The progress before the last finished attempt, for [`Driver::every`].
    before: Progress,
    open: Option<u64>,
    /// Where the walk stood before the open group was drawn, and the
    /// dropped groups then: what [`Driver::state`] saves while a group is
    /// open.
    open_from: Option<(Position, usize)>,
    dropped: Vec<DroppedGroup>,
    /// Global batches changed at resumes, by consent.
    batch_changes: Vec<state::BatchChange>,
    /// How the driver was resumed, if it was.
    resumed: Option<Resumed>,
    /// The count of the total's unit after the update that reached it.
    total_end: Option<u64>,
    /// Examples the applied partial groups had fewer than full ones.
    short: u64,
}

impl Driver {
    /// Settings for a driver of `plan` over `examples` examples (ids
    /// `0..examples`): a [`Plan`], or a [`StagedPlan`] for a batch
    /// ramp-up.
    pub fn builder(plan: impl Into<StagedPlan>, examples: usize) -> DriverBuilder {
        DriverBuilder {
            plan: plan.into(),
            examples,
            seed: 0,
            policy: LastGroup::Process,
            rank: 0,
            total: None,
            schedule: None,
            intervals: Vec::new(),
            resume: None,
            allow_batch_change: false,
        }
    }

    /// The plan of the next update: its stage's (the only one for a
    /// constant plan).
    pub fn plan(&self) -> &Plan {
        self.walk.plan_for_next(self.progress.updates).1
    }

    /// The stages of the plan (one for a constant plan).
    pub fn stages(&self) -> &StagedPlan {
        self.walk.stages()
    }

    /// The index (0-based) of the next update's stage. A skipped attempt
    /// does not change it: its retry produces the same update.
    pub fn stage(&self) -> usize {
        self.walk.plan_for_next(self.progress.updates).0
    }

    /// Examples in the data set (ids `0..examples`).
    pub fn examples(&self) -> usize {
        self.walk.examples()
    }

    /// The last-group policy.
    pub fn last_group(&self) -> LastGroup {
        self.walk.policy()
    }

    /// This driver's rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The run's length, in the unit it was given in: it ends with the
    /// applied update whose count reaches it.
    pub fn total(&self) -> Span {
        self.total
    }

    /// Applied updates one epoch gives under the last-group policy (with
    /// stages: the first epoch, when every attempt is applied).
    pub fn updates_per_epoch(&self) -> Updates {
        self.walk.updates_per_epoch()
    }

    /// The progress so far.
    pub fn progress(&self) -> &Progress {
        &self.progress
    }

    /// The epoch of the last group drawn, 0-based.
    pub fn epoch(&self) -> u64 {
        self.walk.epoch()
    }

    /// Whether the run has reached its total.
    pub fn finished(&self) -> bool {
        self.progress.count(self.total.unit()) >= self.total.value()
    }

    /// The partial groups dropped so far (`last_group = "drop"`), with
    /// their epoch and example ids (`accum::plan::partial-group`).
    pub fn dropped(&self) -> &[DroppedGroup] {
        &self.dropped
    }

    /// What the run did that its declared lengths do not say, so far:
    /// partial or dropped groups, a length in examples or tokens reached
    /// inside an update, a warmup the run ended before. Empty when the
    /// lengths held exactly. Print them with the loop's log or report.
    pub fn notes(&self) -> Vec<DriverNote> {
        let mut notes = Vec::new();
        for change in &self.batch_changes {
            notes.push(DriverNote::GlobalBatchChanged {
                update: Updates::new(change.update),
                from: change.from,
                to: change.to,
            });
        }
        if self.progress.partial > 0 {
            notes.push(DriverNote::PartialGroups {
                updates: self.progress.partial,
                short: self.short,
            });
        }
        if !self.dropped.is_empty() {
            notes.push(DriverNote::DroppedGroups {
                groups: self.dropped.len(),
                examples: self.dropped.iter().map(|d| d.ids.len()).sum(),
            });
        }
        if let Some(reached) = self.total_end
            && reached > self.total.value()
        {
            notes.push(DriverNote::TotalOvershot {
                total: self.total,
                reached,
                update: self.progress.updates,
            });
        }
        if let Some(schedule) = &self.schedule
            && self.finished()
            && !schedule.warmup_reached()
        {
            notes.push(DriverNote::WarmupUnfinished {
                warmup: schedule.warmup_length(),
                total: self.total,
                reached: schedule.lr() / schedule.base_lr(),
            });
        }
        notes
    }

    /// How the driver was resumed, if it was.
    pub(crate) fn resumed(&self) -> Option<Resumed> {
        self.resumed
    }

    /// The schedule, if one was given.
    pub fn schedule(&self) -> Option<&Schedule> {
        self.schedule.as_ref()
    }

    /// The learning rate of the next applied update, if a schedule was given.
    pub fn lr(&self) -> Option<f64> {
        self.schedule.as_ref().map(Schedule::lr)
    }

    /// The next update's group, under that update's stage, or `None` when
    /// the run has reached its total. Fails when the previous group was not
    /// finished, and with stages under `last_group = "error"` when skipped
    /// attempts moved a stage's group across the end of an epoch.
    pub fn next_group(&mut self) -> Result<Option<Group>, DriverError> {
        if let Some(attempt) = self.open {
            return Err(DriverError::Unfinished { attempt });
        }
        if self.finished() {
            return Ok(None);
        }
        let mut draw = self.walk.empty_draw();
        let from = (self.walk.position(), self.dropped.len());
        let dropped = &mut self.dropped;
        self.walk
            .next_into(&mut draw, self.progress.updates, |epoch, positions| {
                dropped.push(DroppedGroup {
                    epoch,
                    ids: positions.iter().map(|&p| p as u64).collect(),
                });
            })
            .map_err(DriverError::StageGroup)?;
        let attempt = self.progress.attempts + 1;
        self.open = Some(attempt);
        self.open_from = Some(from);
        Ok(Some(Group::new(attempt, self.rank, &draw)))
    }

    /// Closes the group's attempt. An applied update advances the schedule
    /// and the counters; a skipped one only the attempt counters (`accum::run::loss-scale`, `accum::run::scheduler`).
    /// Every rank must report the same outcome (the all-reduced gradients
    /// are the same everywhere, so their finiteness is too).
    pub fn finish(&mut self, group: Group, outcome: Outcome) -> Result<&Progress, DriverError> {
        if self.open != Some(group.attempt()) {
            return Err(DriverError::NotOpen {
                attempt: group.attempt(),
                open: self.open,
            });
        }
        let Some(counts) = group.counts() else {
            return Err(DriverError::NotCounted {
                attempt: group.attempt(),
            });
        };
        group.check_seq_len(&counts)?;
        self.open = None;
        self.before = self.progress;
        let p = &mut self.progress;
        p.attempts += 1;
        match outcome {
            Outcome::Applied => {
                p.updates += Updates::ONE;
                // Replica 0 runs the most microbatches of a group.
                let passes = group.assignment().replicas.first().map_or(0, Vec::len);
                p.microbatches += Microbatches::new(passes as u64);
                p.examples += group.examples();
                p.tokens += counts.tokens;
                if group.is_partial() {
                    p.partial += 1;
                    self.short += group
                        .plan()
                        .effective_batch()
                        .get()
                        .saturating_sub(group.examples().get());
                }
                if let Some(schedule) = &mut self.schedule {
                    // `accum::run::scheduler`: one scheduler step per applied update, at the
                    // run's real counters.
                    schedule.step_to(&self.progress);
                }
                if self.total_end.is_none() && self.finished() {
                    self.total_end = Some(self.progress.count(self.total.unit()));
                }
            }
            Outcome::Skipped => p.skipped += 1,
        }
        Ok(&self.progress)
    }

    /// Whether the last finished attempt reached or crossed a multiple of
    /// `span` in its unit (see [`Progress::crossed`]): `every(Updates::new(500))`
    /// is true after updates 500, 1000, …; `every("2M tokens".parse::<Span>()?)`
    /// on the update that takes the token count to or past each 2,000,000.
    /// A skipped attempt advances nothing and never fires.
    pub fn every(&self, span: impl Into<Span>) -> bool {
        self.progress.crossed(&self.before, span.into())
    }
}
