//! Group assembly (SPEC R6, R9): the seeded order of each epoch, the
//! examples of each group under the last-group policy, and their split into
//! microbatches and replicas.
//!
//! This is the one implementation of the data walk: accum's own engine and
//! the [`Driver`](super::Driver) of a user's loop both draw their groups
//! here, so they see the same examples in the same microbatches on the same
//! replicas. [`Walk::next_into`] fills a caller's [`Draw`] and reports
//! dropped groups to a closure: once the draw has held a full group, drawing
//! allocates nothing (the epoch order is refilled in place), which keeps the
//! engine's update free of allocations. The driver's [`Group`](super::Group)
//! turns a draw into a [`GroupAssignment`] for convenience.

use super::DriverError;
use crate::data::Rng;
use crate::plan::{LastGroup, Plan};
use crate::units::{Examples, Updates};

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

/// Where one microbatch of a group runs (R9): microbatch `j` of the group
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
/// can then get none (R6). Allocates nothing.
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
    /// incomplete) microbatches; a replica can then get none (R6).
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

/// One group drawn from the walk, in buffers its owner reuses from group
/// to group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Draw {
    /// Data-set positions of the group, in epoch order.
    pub(crate) members: Vec<usize>,
    /// Fewer than `B` examples: the last group of an epoch (R6).
    pub(crate) partial: bool,
    /// The epoch the group belongs to, 0-based.
    pub(crate) epoch: u64,
    /// The plan the group was drawn under: its `m`, `A` and `D` say how the
    /// group splits.
    pub(crate) plan: Plan,
}

impl Draw {
    /// An empty draw with room for a full group of `plan`.
    pub(crate) fn new(plan: Plan) -> Draw {
        let b = usize::try_from(plan.effective_batch().get()).unwrap_or(0);
        Draw {
            members: Vec::with_capacity(b),
            partial: false,
            epoch: 0,
            plan,
        }
    }

    /// The group's microbatches with their placement, under the group's
    /// own plan. Allocates nothing.
    pub(crate) fn placements(&self) -> impl Iterator<Item = Placement<'_>> + '_ {
        placements(&self.members, &self.plan)
    }

    /// The group's microbatches per replica, as lists of their own.
    pub(crate) fn assignment(&self) -> GroupAssignment {
        GroupAssignment::split(&self.members, &self.plan)
    }
}

/// The walk over a data set, epoch by epoch and group by group.
#[derive(Clone, Debug)]
pub(crate) struct Walk {
    plan: Plan,
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
    /// the data against the plan and the policy (R6): it holds at least one
    /// example, fills whole groups under `error`, and at least one group
    /// under `drop` (less would train nothing).
    pub(crate) fn new(
        plan: Plan,
        examples: usize,
        seed: u64,
        policy: LastGroup,
    ) -> Result<Walk, DriverError> {
        let n = examples as u64;
        if n == 0 {
            return Err(DriverError::NoExamples);
        }
        let epoch = plan.epoch(Examples::new(n), policy)?;
        if epoch.updates.is_zero() {
            return Err(DriverError::NotEnoughData {
                examples: n,
                effective_batch: plan.effective_batch().get(),
            });
        }
        Ok(Walk {
            plan,
            examples,
            seed,
            policy,
            updates_per_epoch: epoch.updates,
            epoch: 0,
            order: epoch_order(examples, seed, 0),
            cursor: 0,
        })
    }

    /// The plan of the next group. The one place that says which plan an
    /// update runs under, so that plans whose `A` changes at stage
    /// boundaries only change this; every [`Draw`] carries its plan.
    fn plan_for_next(&self) -> &Plan {
        &self.plan
    }

    /// Applied updates one epoch gives under the last-group policy.
    pub(crate) fn updates_per_epoch(&self) -> Updates {
        self.updates_per_epoch
    }

    /// The epoch of the last group drawn (0 before the first).
    pub(crate) fn epoch(&self) -> u64 {
        self.epoch
    }

    /// An empty draw with room for the groups of this walk.
    pub(crate) fn empty_draw(&self) -> Draw {
        Draw::new(*self.plan_for_next())
    }

    /// Draws the next group into `draw`, applying the last-group policy
    /// (R6): a partial group is drawn (`process`), or skipped and handed to
    /// `dropped` with its epoch and data-set positions (`drop`). Allocates
    /// nothing once `draw` has held a full group.
    pub(crate) fn next_into(&mut self, draw: &mut Draw, mut dropped: impl FnMut(u64, &[usize])) {
        let plan = *self.plan_for_next();
        let b = usize::try_from(plan.effective_batch().get()).unwrap_or(usize::MAX);
        loop {
            if self.cursor >= self.order.len() {
                self.epoch += 1;
                fill_epoch_order(&mut self.order, self.examples, self.seed, self.epoch);
                self.cursor = 0;
            }
            let start = self.cursor;
            let end = start.saturating_add(b).min(self.order.len());
            self.cursor = end;
            let partial = end - start < b;
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
            return;
        }
    }
}
