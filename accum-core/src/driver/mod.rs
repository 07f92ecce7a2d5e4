//! The loop driver for a training loop of one's own, in any framework
//! (SPEC R2, R4–R9). No tensor types: it deals in example ids, counts and
//! flags, and the caller's framework does the math.
//!
//! A [`Driver`] walks a [`Plan`] — or a [`StagedPlan`] whose `A` grows at
//! stage boundaries (batch ramp-up) — over a data set of `N` examples (ids
//! `0..N`, positions in the caller's data), epoch by epoch in a seeded
//! order, and update by update:
//!
//! 1. [`Driver::next_group`] gives the next update's [`Group`]: its
//!    examples on every replica, split into microbatches, with the partial
//!    last group of an epoch handled by the [`LastGroup`] policy (dropped
//!    ids are recorded, R6).
//! 2. [`Group::denominator`] fixes the group's global loss denominator
//!    before the first backward pass (R4, R5): the caller's closure counts
//!    each example's supervised tokens, and a [`Reducer`](crate::replica::Reducer)
//!    sums the counts over the replicas.
//! 3. [`Group::microbatches`] yields this rank's microbatches; the last one
//!    has [`sync`](MicrobatchIds::sync) set: the gradient all-reduce follows
//!    its backward pass, the others run without synchronisation (R9).
//! 4. [`Driver::finish`] takes the attempt's [`Outcome`]: only an applied
//!    update advances the schedule and the [`Progress`] counters (R7, R8).
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
//! use accum_core::{LastGroup, Plan, Updates};
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
mod walk;

#[cfg(test)]
mod stage_tests;
#[cfg(test)]
mod tests;

use std::fmt;

pub use group::{Denominator, Group, GroupCounts, MicrobatchIds};
pub use progress::Progress;
pub(crate) use walk::{Draw, Position, Walk, survey};
pub use walk::{GroupAssignment, StageGroupError, epoch_order};

use crate::plan::{LastGroup, Plan, PlanError, StagedPlan};
use crate::replica::ReduceError;
use crate::report::DroppedGroup;
use crate::schedule::Schedule;
use crate::span::Span;
use crate::units::{Microbatches, Updates};

/// What happened to an update attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The optimizer applied the update.
    Applied,
    /// The update was skipped (non-finite gradients): an attempt, not an
    /// update (R7).
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
#[derive(Clone, Debug, PartialEq, Eq)]
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
    /// not fill whole groups (R6).
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
    /// A group was finished before its denominator was counted (R5).
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
    /// partial (R6).
    StageGroup(StageGroupError),
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
    total: Option<Updates>,
    schedule: Option<Schedule>,
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

    /// The length of the run in applied updates. Default: the schedule's
    /// total when a schedule is given, else one epoch (with stages: the
    /// first epoch's updates).
    pub fn total(mut self, total: Updates) -> Self {
        self.total = Some(total);
        self
    }

    /// A learning-rate schedule, advanced once per applied update (R8).
    pub fn schedule(mut self, schedule: Schedule) -> Self {
        self.schedule = Some(schedule);
        self
    }

    /// The driver, after checking the data against the plan and the policy.
    pub fn build(self) -> Result<Driver, DriverError> {
        // `m` and `D` are the same in every stage.
        let replicas = self.plan.first_plan().replicas();
        if self.rank as u64 >= replicas {
            return Err(DriverError::Rank {
                rank: self.rank,
                replicas,
            });
        }
        // R6: the walk refuses data the policy cannot run, before any work.
        let walk = Walk::new(self.plan, self.examples, self.seed, self.policy)?;
        let total = self
            .total
            .or_else(|| self.schedule.as_ref().map(Schedule::total))
            .unwrap_or(walk.updates_per_epoch());
        Ok(Driver {
            walk,
            rank: self.rank,
            total,
            schedule: self.schedule,
            progress: Progress::default(),
            before: Progress::default(),
            open: None,
            dropped: Vec::new(),
        })
    }
}

/// Walks a plan over a data set for one rank. See the [module docs](self).
#[derive(Clone, Debug)]
pub struct Driver {
    walk: Walk,
    rank: usize,
    total: Updates,
    schedule: Option<Schedule>,
    progress: Progress,
    /// The progress before the last finished attempt, for [`Driver::every`].
    before: Progress,
    open: Option<u64>,
    dropped: Vec<DroppedGroup>,
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

    /// This driver's rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The run's length in applied updates.
    pub fn total(&self) -> Updates {
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
        self.progress.updates >= self.total
    }

    /// The partial groups dropped so far (`last_group = "drop"`), with
    /// their epoch and example ids (R6).
    pub fn dropped(&self) -> &[DroppedGroup] {
        &self.dropped
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
        Ok(Some(Group::new(attempt, self.rank, &draw)))
    }

    /// Closes the group's attempt. An applied update advances the schedule
    /// and the counters; a skipped one only the attempt counters (R7, R8).
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
                if let Some(schedule) = &mut self.schedule {
                    // R8: one scheduler step per applied update.
                    schedule.step();
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
