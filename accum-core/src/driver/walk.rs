//! Group assembly (`accum::plan::partial-group`, `accum::run::data-parallel`): the seeded order of each epoch, the
//! examples of each group under the last-group policy, and their split into
//! microbatches and replicas.
//!
//! This is the one implementation of the data walk: accum's own engine and
//! the [`Driver`](super::Driver) of a user's loop both draw their groups
//! here, so they see the same examples in the same microbatches on the same
//! replicas. [`Walk::next_into`] fills a caller's [`Draw`] and reports
//! dropped groups to a closure: the draw is sized for the largest group of
//! the plan, so drawing allocates nothing (the epoch order is refilled in
//! place), which keeps the engine's update free of allocations. The
//! driver's [`Group`](super::Group) turns a draw into a [`GroupAssignment`]
//! for convenience.
//!
//! ## Stages
//!
//! The walk runs a [`StagedPlan`]: each group is drawn under the plan of
//! the update it will produce, the stage of the *applied* updates so far
//! ([`Walk::plan_for_next`], the one place that decides). A skipped attempt
//! (non-finite gradients) produces no update, so the attempt after it is
//! drawn for the same update, under the same stage; the skipped group's
//! examples are used up all the same, as with a constant plan. A stage of
//! `U` updates therefore makes exactly `U` applied updates, and the stage
//! boundaries, the scheduler and every count of the run stay in applied
//! updates; skipped attempts only move where in the data each later group
//! starts.
//!
//! The last group of an epoch follows the policy under every stage: with
//! `process` it is a partial group of the stage it falls in, with `drop` it
//! is dropped. With `error`, the walk checks before the run that no group of
//! any stage would be partial when every attempt is applied
//! ([`survey`]); a skipped attempt can still move a later stage's groups
//! across an epoch's end, and that group is refused when it is drawn.

use std::fmt;

use super::DriverError;
use crate::plan::{LastGroup, Plan, StagedPlan};
use crate::rng::Rng;
use crate::units::{Examples, Updates, group_digits};

/// The order of epoch `epoch` over a data set of `examples` examples: a
/// permutation of the positions `0..examples` drawn from `seed` (the same
/// seed and epoch give the same order on every process and platform).
pub fn epoch_order(examples: usize, seed: u64, epoch: u64) -> Vec<usize> {
    let mut order = Vec::with_capacity(examples);
    fill_epoch_order(&mut order, examples, seed, epoch);
    order
}

/// [`epoch_order`] written into `order`, reusing its buffer.
fn fill_epoch_order(order: &mut Vec<usize>, examples: usize, seed: u64, epoch: u64) {
    order.clear();
    order.extend(0..examples);
    Rng::new(seed, 1000 + epoch).shuffle(order);
}

/// Where one microbatch of a group runs (`accum::run::data-parallel`): microbatch `j` of the group
/// (chunks of `m`, in order) goes to replica `j mod D` as its microbatch
/// `j div D`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Placement<'a> {
    /// The replica that runs it.
    pub(crate) replica: usize,
    /// Its index among that replica's microbatches of the group.
    pub(crate) index: usize,
    /// Data-set positions of its examples, in batch order.
    pub(crate) positions: &'a [usize],
}

/// The microbatches of a group whose members (data-set positions, in epoch
/// order) are `members`, under `plan`, with their placement. Every replica
/// of a full group gets exactly `A` microbatches; a last partial group
/// yields fewer (and possibly one incomplete) microbatches, and a replica
/// can then get none (`accum::plan::partial-group`). Allocates nothing.
pub(crate) fn placements<'a>(
    members: &'a [usize],
    plan: &Plan,
) -> impl Iterator<Item = Placement<'a>> + 'a {
    let m = usize::try_from(plan.micro_batch()).unwrap_or(usize::MAX);
    let d = usize::try_from(plan.replicas()).unwrap_or(usize::MAX);
    members
        .chunks(m)
        .enumerate()
        .map(move |(j, positions)| Placement {
            replica: j % d,
            index: j / d,
            positions,
        })
}

/// Which examples every replica processes in one group: for each replica,
/// its microbatches in order, each a list of positions into the data set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupAssignment {
    /// `replicas[r][i]` = data-set positions of microbatch `i` on replica `r`.
    pub replicas: Vec<Vec<Vec<usize>>>,
}

impl GroupAssignment {
    /// Splits `members` (data-set positions of the group, in order) into
    /// microbatches of `m`; microbatch `j` goes to replica `j mod D` (local
    /// index `j div D`), so every replica of a full group gets exactly `A`
    /// microbatches. A last partial group yields fewer (and possibly one
    /// incomplete) microbatches; a replica can then get none (`accum::plan::partial-group`).
    pub fn split(members: &[usize], plan: &Plan) -> GroupAssignment {
        let d = usize::try_from(plan.replicas()).unwrap_or(usize::MAX);
        let mut replicas = vec![Vec::new(); d];
        for p in placements(members, plan) {
            replicas[p.replica].push(p.positions.to_vec());
        }
        GroupAssignment { replicas }
    }

    /// Microbatches over all replicas.
    pub fn microbatches(&self) -> usize {
        self.replicas.iter().map(Vec::len).sum()
    }

    /// Examples over all replicas.
    pub fn examples(&self) -> usize {
        self.replicas.iter().flatten().map(Vec::len).sum()
    }
}

/// Under `last_group = "error"`, a group of a staged plan would be partial:
/// the stage reaches the end of an epoch with fewer examples left than its
/// batch (`accum::plan::partial-group`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StageGroupError {
    /// The stage, counted from 1.
    pub stage: usize,
    /// The update that would train on the partial group, counted from 1.
    pub update: Updates,
    /// The epoch whose end the stage reaches, counted from 0.
    pub epoch: u64,
    /// Examples left in the epoch: fewer than the stage's batch.
    pub left: u64,
    /// The stage's global batch `B`.
    pub effective_batch: u64,
}

impl fmt::Display for StageGroupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "last_group is \"error\", but update {} (stage {}, global batch {}) reaches the end of epoch {} \
             with {} examples left, fewer than its batch; use last_group \"process\" (the partial group \
             trains with its real denominator) or \"drop\", or a data size and stage boundaries whose \
             groups fill every epoch",
            group_digits(self.update.get()),
            self.stage,
            group_digits(self.effective_batch),
            self.epoch,
            group_digits(self.left),
        )
    }
}

impl std::error::Error for StageGroupError {}

/// One group drawn from the walk, in buffers its owner reuses from group
/// to group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Draw {
    /// Data-set positions of the group, in epoch order.
    pub(crate) members: Vec<usize>,
    /// Fewer than `B` examples: the last group of an epoch (`accum::plan::partial-group`).
    pub(crate) partial: bool,
    /// The epoch the group belongs to, 0-based.
    pub(crate) epoch: u64,
    /// The plan the group was drawn under: its `m`, `A` and `D` say how the
    /// group splits.
    pub(crate) plan: Plan,
    /// The index of the plan's stage, 0-based.
    pub(crate) stage: usize,
}

impl Draw {
    /// An empty draw under `plan` with room for `capacity` examples.
    fn with_capacity(plan: Plan, capacity: usize) -> Draw {
        Draw {
            members: Vec::with_capacity(capacity),
            partial: false,
            epoch: 0,
            plan,
            stage: 0,
        }
    }

    /// The group's microbatches with their placement, under the group's
    /// own plan. Allocates nothing.
    #[cfg(feature = "engine")]
    pub(crate) fn placements(&self) -> impl Iterator<Item = Placement<'_>> + '_ {
        placements(&self.members, &self.plan)
    }

    /// The group's microbatches per replica, as lists of their own.
    pub(crate) fn assignment(&self) -> GroupAssignment {
        GroupAssignment::split(&self.members, &self.plan)
    }
}

/// Where a walk stands: the epoch of the last group drawn, and the
/// position in its order where the next group starts. A cursor equal to the
/// data's size means the epoch is used up: the next group opens the next
/// epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Position {
    pub(crate) epoch: u64,
    pub(crate) cursor: usize,
}

/// The walk over a data set, epoch by epoch and group by group.
#[derive(Clone, Debug)]
pub(crate) struct Walk {
    stages: StagedPlan,
    examples: usize,
    seed: u64,
    policy: LastGroup,
    updates_per_epoch: Updates,
    epoch: u64,
    order: Vec<usize>,
    cursor: usize,
}

impl Walk {
    /// A walk over `examples` positions, starting at epoch 0, after checking
    /// the data against the plan and the policy (`accum::plan::partial-group`): it holds at least one
    /// example, fills whole groups under `error` (with stages: no group of
    /// any stage is partial when every attempt is applied), and at least one
    /// group of every stage under `drop` (less would train nothing).
    pub(crate) fn new(
        stages: impl Into<StagedPlan>,
        examples: usize,
        seed: u64,
        policy: LastGroup,
    ) -> Result<Walk, DriverError> {
        let stages = stages.into();
        let n = examples as u64;
        if n == 0 {
            return Err(DriverError::NoExamples);
        }
        let updates_per_epoch = if stages.is_constant() {
            let plan = stages.first_plan();
            let epoch = plan.epoch(Examples::new(n), policy)?;
            if epoch.updates.is_zero() {
                return Err(DriverError::NotEnoughData {
                    examples: n,
                    effective_batch: plan.effective_batch().get(),
                });
            }
            epoch.updates
        } else {
            let too_large = stages
                .stages()
                .iter()
                .map(|stage| stage.plan().effective_batch().get())
                .find(|&b| b > n);
            if let (LastGroup::Drop, Some(b)) = (policy, too_large) {
                return Err(DriverError::NotEnoughData {
                    examples: n,
                    effective_batch: b,
                });
            }
            survey(&stages, n, policy, |_, _| {}).map_err(DriverError::StageGroup)?
        };
        Ok(Walk {
            stages,
            examples,
            seed,
            policy,
            updates_per_epoch,
            epoch: 0,
            order: epoch_order(examples, seed, 0),
            cursor: 0,
        })
    }

    /// The plan of the next group, and the index of its stage: the stage of
    /// the update it will produce, after `applied` applied updates. The one
    /// place that says which plan an update runs under; every [`Draw`]
    /// carries its plan. A skipped attempt does not advance `applied`, so
    /// its retry runs under the same stage.
    pub(crate) fn plan_for_next(&self, applied: Updates) -> (usize, &Plan) {
        let index = self.stages.stage_index_at(applied);
        (index, self.stages.stages()[index].plan())
    }

    /// Examples in the data set.
    pub(crate) fn examples(&self) -> usize {
        self.examples
    }

    /// The last-group policy.
    pub(crate) fn policy(&self) -> LastGroup {
        self.policy
    }

    /// The plan's stages.
    pub(crate) fn stages(&self) -> &StagedPlan {
        &self.stages
    }

    /// Applied updates the first epoch gives under the last-group policy,
    /// when every attempt is applied (with stages, later epochs can differ).
    pub(crate) fn updates_per_epoch(&self) -> Updates {
        self.updates_per_epoch
    }

    /// The epoch of the last group drawn (0 before the first).
    pub(crate) fn epoch(&self) -> u64 {
        self.epoch
    }

    /// An empty draw with room for the largest group of this walk.
    pub(crate) fn empty_draw(&self) -> Draw {
        let largest = self
            .stages
            .stages()
            .iter()
            .map(|stage| stage.plan().effective_batch().get())
            .max()
            .unwrap_or(0);
        let capacity = usize::try_from(largest)
            .unwrap_or(usize::MAX)
            .min(self.examples);
        Draw::with_capacity(*self.stages.first_plan(), capacity)
    }

    /// The seed of the epoch orders.
    pub(crate) fn seed(&self) -> u64 {
        self.seed
    }

    /// Where the walk stands.
    pub(crate) fn position(&self) -> Position {
        Position {
            epoch: self.epoch,
            cursor: self.cursor,
        }
    }

    /// Moves the walk to `at`, as if it had drawn the groups before it.
    pub(crate) fn seek(&mut self, at: Position) {
        self.epoch = at.epoch;
        self.cursor = at.cursor.min(self.examples);
        fill_epoch_order(&mut self.order, self.examples, self.seed, self.epoch);
    }

    /// Draws the group of the update after `applied` applied updates into
    /// `draw`, under that update's stage, applying the last-group policy
    /// (`accum::plan::partial-group`): a partial group is drawn (`process`), or skipped and handed to
    /// `dropped` with its epoch and data-set positions (`drop`), or refused
    /// (`error`: only reachable with stages, after skipped attempts moved a
    /// stage's groups; the walk does not move then). Allocates nothing.
    pub(crate) fn next_into(
        &mut self,
        draw: &mut Draw,
        applied: Updates,
        mut dropped: impl FnMut(u64, &[usize]),
    ) -> Result<(), StageGroupError> {
        let (stage, plan) = self.plan_for_next(applied);
        let plan = *plan;
        let b = usize::try_from(plan.effective_batch().get()).unwrap_or(usize::MAX);
        loop {
            if self.cursor >= self.order.len() {
                self.epoch += 1;
                fill_epoch_order(&mut self.order, self.examples, self.seed, self.epoch);
                self.cursor = 0;
            }
            let start = self.cursor;
            let end = start.saturating_add(b).min(self.order.len());
            let partial = end - start < b;
            if partial && self.policy == LastGroup::Error {
                return Err(StageGroupError {
                    stage: stage + 1,
                    update: Updates::new(applied.get().saturating_add(1)),
                    epoch: self.epoch,
                    left: (end - start) as u64,
                    effective_batch: b as u64,
                });
            }
            self.cursor = end;
            // `Walk::new` refuses data smaller than one group under `drop`;
            // such a group would loop here forever, so it is drawn rather
            // than dropped.
            if partial && self.policy == LastGroup::Drop && self.examples >= b {
                dropped(self.epoch, &self.order[start..end]);
                continue;
            }
            draw.members.clear();
            draw.members.extend_from_slice(&self.order[start..end]);
            draw.partial = partial;
            draw.epoch = self.epoch;
            draw.plan = plan;
            draw.stage = stage;
            return Ok(());
        }
    }
}

/// Walks `stages` over `n` examples the way [`Walk::next_into`] draws them
/// when every attempt is applied, in closed form (a few steps per stage,
/// whole epochs at once): calls `at_start` with the index and the starting
/// [`Position`] of each stage, and gives the applied updates of the first
/// epoch. Under `error`, fails at the first group that would be partial.
pub(crate) fn survey(
    stages: &StagedPlan,
    n: u64,
    policy: LastGroup,
    mut at_start: impl FnMut(usize, Position),
) -> Result<Updates, StageGroupError> {
    let mut epoch = 0u64;
    // Position in the epoch's order; `n` once the epoch is used up.
    let mut cursor = 0u64;
    let mut first_epoch = 0u64;
    for (i, stage) in stages.stages().iter().enumerate() {
        at_start(
            i,
            Position {
                epoch,
                cursor: usize::try_from(cursor).unwrap_or(usize::MAX),
            },
        );
        let b = stage.plan().effective_batch().get();
        // Updates left in the stage; `None` for the last, open-ended one.
        let mut left = stage.updates().map(Updates::get);
        // Groups the stage has drawn so far.
        let mut drawn = 0u64;
        while left != Some(0) {
            if cursor >= n {
                epoch += 1;
                cursor = 0;
            }
            let rest = n - cursor;
            let (full, rem) = (rest / b, rest % b);
            if let Some(u) = left
                && u <= full
            {
                // The stage ends inside this epoch, on full groups.
                cursor += u * b;
                if epoch == 0 {
                    first_epoch += u;
                }
                break;
            }
            // The stage reaches the end of this epoch.
            if rem > 0 && policy == LastGroup::Error {
                return Err(StageGroupError {
                    stage: i + 1,
                    update: Updates::new(stage.start().get() + drawn + full + 1),
                    epoch,
                    left: rem,
                    effective_batch: b,
                });
            }
            let here = full + u64::from(rem > 0 && policy == LastGroup::Process);
            if epoch == 0 {
                first_epoch += here;
            }
            drawn += here;
            cursor = n;
            let Some(u) = left.map(|u| u - here) else {
                // The open-ended stage goes on through fresh epochs, all
                // alike; under `error` their groups must fill them.
                if policy == LastGroup::Error && !n.is_multiple_of(b) {
                    return Err(StageGroupError {
                        stage: i + 1,
                        update: Updates::new(stage.start().get() + drawn + n / b + 1),
                        epoch: epoch + 1,
                        left: n % b,
                        effective_batch: b,
                    });
                }
                return Ok(Updates::new(first_epoch));
            };
            left = Some(u);
            // Whole epochs at this batch at once, leaving at least one
            // group for the loop to place the stage's end. Under `error`
            // with a remainder, the next epoch refuses (or ends the stage)
            // in the loop instead.
            let per = n / b + u64::from(!n.is_multiple_of(b) && policy == LastGroup::Process);
            let alike = policy != LastGroup::Error || n.is_multiple_of(b);
            if per > 0 && alike && u > per {
                let whole = (u - 1) / per;
                epoch += whole;
                drawn += whole * per;
                left = Some(u - whole * per);
            }
        }
    }
    Ok(Updates::new(first_epoch))
}
