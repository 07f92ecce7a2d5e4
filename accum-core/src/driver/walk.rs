//! Group assembly (SPEC R6, R9): the seeded order of each epoch, the
//! examples of each group under the last-group policy, and their split into
//! microbatches and replicas.
//!
//! This is the one implementation of the data walk: accum's own engine and
//! the [`Driver`](super::Driver) of a user's loop both draw their groups
//! here, so they see the same examples in the same microbatches on the same
//! replicas.

use crate::data::Rng;
use crate::plan::{LastGroup, Plan};

/// The order of epoch `epoch` over a data set of `examples` examples: a
/// permutation of the positions `0..examples` drawn from `seed` (the same
/// seed and epoch give the same order on every process and platform).
pub fn epoch_order(examples: usize, seed: u64, epoch: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..examples).collect();
    Rng::new(seed, 1000 + epoch).shuffle(&mut order);
    order
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
        let m = usize::try_from(plan.micro_batch()).unwrap_or(usize::MAX);
        let d = usize::try_from(plan.replicas()).unwrap_or(usize::MAX);
        let mut replicas = vec![Vec::new(); d];
        for (j, chunk) in members.chunks(m).enumerate() {
            replicas[j % d].push(chunk.to_vec());
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

/// One group drawn from the walk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Draw {
    /// Data-set positions of the group, in epoch order.
    pub(crate) members: Vec<usize>,
    /// Fewer than `B` examples: the last group of an epoch (R6).
    pub(crate) partial: bool,
    /// The epoch the group belongs to, 0-based.
    pub(crate) epoch: u64,
    /// The plan the group was drawn under.
    pub(crate) plan: Plan,
    /// The group's microbatches per replica.
    pub(crate) assignment: GroupAssignment,
    /// Partial groups the `drop` policy skipped on the way to this group:
    /// `(epoch, positions)`.
    pub(crate) dropped: Vec<(u64, Vec<usize>)>,
}

/// The walk over a data set, epoch by epoch and group by group.
#[derive(Clone, Debug)]
pub(crate) struct Walk {
    plan: Plan,
    examples: usize,
    seed: u64,
    policy: LastGroup,
    epoch: u64,
    order: Vec<usize>,
    cursor: usize,
}

impl Walk {
    /// A walk over `examples` positions, starting at epoch 0. The caller has
    /// checked the policy against the data (`Plan::epoch`): with `error`, the
    /// data fills whole groups; with `drop`, it holds at least one group.
    pub(crate) fn new(plan: Plan, examples: usize, seed: u64, policy: LastGroup) -> Walk {
        Walk {
            plan,
            examples,
            seed,
            policy,
            epoch: 0,
            order: epoch_order(examples, seed, 0),
            cursor: 0,
        }
    }

    /// The plan of the next group. The one place that says which plan an
    /// update runs under, so that plans whose `A` changes at stage
    /// boundaries only change this.
    fn plan_for_next(&self) -> &Plan {
        &self.plan
    }

    /// The epoch of the last group drawn (0 before the first).
    pub(crate) fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The next group, applying the last-group policy (R6): a partial group
    /// is returned (`process`) or skipped and reported in
    /// [`Draw::dropped`] (`drop`). An empty data set yields empty groups.
    pub(crate) fn next(&mut self) -> Draw {
        let plan = *self.plan_for_next();
        let b = usize::try_from(plan.effective_batch().get()).unwrap_or(usize::MAX);
        let mut dropped = Vec::new();
        loop {
            if self.cursor >= self.order.len() && self.examples > 0 {
                self.epoch += 1;
                self.order = epoch_order(self.examples, self.seed, self.epoch);
                self.cursor = 0;
            }
            let end = self.cursor.saturating_add(b).min(self.order.len());
            let members = self.order[self.cursor..end].to_vec();
            self.cursor = end;
            let partial = members.len() < b;
            // Data smaller than one group under `drop` is refused by the
            // callers before the walk starts; here it would loop forever,
            // so such a group is returned rather than dropped.
            if partial && self.policy == LastGroup::Drop && self.examples >= b {
                dropped.push((self.epoch, members));
                continue;
            }
            let assignment = GroupAssignment::split(&members, &plan);
            return Draw {
                members,
                partial,
                epoch: self.epoch,
                plan,
                assignment,
                dropped,
            };
        }
    }
}
