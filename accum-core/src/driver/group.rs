//! One update's group as a rank sees it: its microbatches with the
//! `sync` flag, and the group's global loss denominator (`accum::run::normalization`, `accum::run::group`, `accum::run::data-parallel`).

use crate::plan::Plan;
use crate::replica::Reducer;
use crate::settings::Normalization;
use crate::units::{Examples, Tokens};

use super::DriverError;
use super::walk::{Draw, GroupAssignment};

/// The examples of one update attempt, over all replicas, seen from one rank.
/// Given by [`Driver::next_group`](super::Driver::next_group); hand it back
/// to [`Driver::finish`](super::Driver::finish) after the update.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    attempt: u64,
    epoch: u64,
    partial: bool,
    rank: usize,
    plan: Plan,
    stage: usize,
    assignment: GroupAssignment,
    counts: Option<GroupCounts>,
}

/// One microbatch of a group on one replica: which examples, and whether its
/// backward pass is the one that synchronizes gradients.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MicrobatchIds<'a> {
    /// Example ids (positions in the data set), in batch order.
    pub ids: &'a [usize],
    /// The replica (data-parallel rank) that runs it.
    pub replica: usize,
    /// Its index within the group on that replica, 0-based.
    pub index: usize,
    /// The last microbatch of the group on this replica: its backward pass
    /// is followed by the gradient all-reduce. The others run without
    /// synchronisation (PyTorch's `no_sync`, `accum::run::data-parallel`).
    pub sync: bool,
}

/// What the group's denominator counts, over every microbatch and replica
/// of the group (`accum::run::normalization`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GroupCounts {
    /// Supervised tokens (padding and ignored positions excluded).
    pub tokens: Tokens,
    /// Examples with at least one supervised token (an example with none
    /// contributes nothing to a per-example mean).
    pub examples: Examples,
}

impl GroupCounts {
    /// The loss denominator for `normalization`: the group's supervised
    /// tokens (`per_token`), its examples (`per_example`) or 1 (`sum`);
    /// never below 1, so a group without supervised tokens divides nothing
    /// by zero.
    pub fn denominator(&self, normalization: Normalization) -> Denominator {
        let value = match normalization {
            Normalization::PerToken => self.tokens.get() as f64,
            Normalization::PerExample => self.examples.get() as f64,
            Normalization::Sum => 1.0,
        }
        .max(1.0);
        Denominator {
            normalization,
            value,
            counts: *self,
        }
    }
}

/// The group's global loss denominator, fixed before the first backward
/// pass (`accum::run::normalization`, `accum::run::group`). Divide each microbatch's summed loss by it — once: a
/// framework loss that already averages must not be divided again.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Denominator {
    /// The normalization it is for.
    pub normalization: Normalization,
    /// What to divide by: supervised tokens, examples, or 1.
    pub value: f64,
    /// The counts it comes from.
    pub counts: GroupCounts,
}

impl Denominator {
    /// The weight of one supervised token of an example that has
    /// `example_tokens` supervised tokens: `1 / tokens` (`per_token`),
    /// `1 / (examples · example_tokens)` (`per_example`: each example's
    /// mean, averaged over the group) or 1 (`sum`). Over a whole group the
    /// weights sum to 1 for the two means.
    pub fn token_weight(&self, example_tokens: u64) -> f64 {
        match self.normalization {
            Normalization::PerToken | Normalization::Sum => 1.0 / self.value,
            Normalization::PerExample => 1.0 / (self.value * example_tokens.max(1) as f64),
        }
    }
}

impl Group {
    /// Attempt `attempt`'s group as the walk drew it, seen from `rank`.
    pub(crate) fn new(attempt: u64, rank: usize, draw: &Draw) -> Group {
        Group {
            attempt,
            epoch: draw.epoch,
            partial: draw.partial,
            rank,
            plan: draw.plan,
            stage: draw.stage,
            assignment: draw.assignment(),
            counts: None,
        }
    }

    /// The update attempt, 1-based (skipped attempts count too).
    pub fn attempt(&self) -> u64 {
        self.attempt
    }

    /// The epoch, 0-based.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Whether this is the partial last group of an epoch, processed with
    /// its real denominator (`accum::plan::partial-group`).
    pub fn is_partial(&self) -> bool {
        self.partial
    }

    /// The rank this group is seen from.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The plan this update runs under (`m`, `A`, `D` of this group): its
    /// stage's, with stages.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The index (0-based) of the stage this update runs under; 0 for a
    /// constant plan.
    pub fn stage(&self) -> usize {
        self.stage
    }

    /// Every replica's microbatches.
    pub fn assignment(&self) -> &GroupAssignment {
        &self.assignment
    }

    /// Examples of the whole group, over all replicas.
    pub fn examples(&self) -> Examples {
        Examples::new(self.assignment.examples() as u64)
    }

    /// Every example id of the group, replica by replica.
    pub fn ids(&self) -> impl Iterator<Item = usize> + '_ {
        self.assignment.replicas.iter().flatten().flatten().copied()
    }

    /// This rank's microbatches, in order. Can be empty on some ranks in a
    /// partial group; such a rank still takes part in the gradient
    /// all-reduce (with zero gradients), or the others wait for it.
    pub fn microbatches(&self) -> impl ExactSizeIterator<Item = MicrobatchIds<'_>> + '_ {
        self.microbatches_of(self.rank)
    }

    /// Replica `replica`'s microbatches, in order (empty for a replica
    /// outside the plan).
    pub fn microbatches_of(
        &self,
        replica: usize,
    ) -> impl ExactSizeIterator<Item = MicrobatchIds<'_>> + '_ {
        let list = self
            .assignment
            .replicas
            .get(replica)
            .map_or(&[][..], Vec::as_slice);
        let last = list.len().saturating_sub(1);
        list.iter()
            .enumerate()
            .map(move |(index, ids)| MicrobatchIds {
                ids,
                replica,
                index,
                sync: index == last,
            })
    }

    /// Counts this rank's examples with `tokens` (the supervised tokens of
    /// an example id) and sums the counts over every replica through
    /// `reducer` (every rank calls it once per group, `accum::run::group`). With one
    /// process for all replicas, [`Group::count_all`] needs no reducer.
    /// Fails when the reducer joins another number of replicas than the
    /// plan's `D` (the sum would miss some), or when the reduction fails.
    pub fn count(
        &mut self,
        mut tokens: impl FnMut(usize) -> u64,
        reducer: &dyn Reducer,
    ) -> Result<GroupCounts, DriverError> {
        if reducer.replicas() as u64 != self.plan.replicas() {
            return Err(DriverError::ReducerSize {
                reducer: reducer.replicas(),
                replicas: self.plan.replicas(),
            });
        }
        let mut counts = [0u64; 2];
        for mb in self.microbatches() {
            for &id in mb.ids {
                let n = tokens(id);
                counts[0] += n;
                counts[1] += u64::from(n > 0);
            }
        }
        reducer
            .all_reduce_counts(self.rank, &mut counts)
            .map_err(DriverError::Reduce)?;
        let counts = GroupCounts {
            tokens: Tokens::new(counts[0]),
            examples: Examples::new(counts[1]),
        };
        // Every rank sees the same sums, so every rank refuses alike.
        self.check_seq_len(&counts)?;
        self.counts = Some(counts);
        Ok(counts)
    }

    /// Refuses counts of more supervised tokens than the group's examples
    /// hold at the plan's fixed `seq_len` (`accum::plan::seq-len`): the
    /// data is longer than declared, and every length in tokens resolved
    /// through `seq_len` would end at the wrong update.
    pub(crate) fn check_seq_len(&self, counts: &GroupCounts) -> Result<(), DriverError> {
        let Some(seq_len) = self.plan.seq_len() else {
            return Ok(());
        };
        let examples = self.examples().get();
        if u128::from(counts.tokens.get()) <= u128::from(examples) * u128::from(seq_len) {
            return Ok(());
        }
        Err(DriverError::TokensOverSeqLen {
            attempt: self.attempt,
            tokens: counts.tokens,
            examples,
            seq_len,
        })
    }

    /// Counts every replica's examples here, without communication: for a
    /// process that can count any example (lengths known up front). A
    /// count over the plan's fixed `seq_len` is refused by
    /// [`Driver::finish`](super::Driver::finish), as [`Group::count`]
    /// refuses it.
    pub fn count_all(&mut self, mut tokens: impl FnMut(usize) -> u64) -> GroupCounts {
        let (mut sum, mut examples) = (0u64, 0u64);
        for id in self.ids() {
            let n = tokens(id);
            sum += n;
            examples += u64::from(n > 0);
        }
        let counts = GroupCounts {
            tokens: Tokens::new(sum),
            examples: Examples::new(examples),
        };
        self.counts = Some(counts);
        counts
    }

    /// [`Group::count`], then the denominator for `normalization`.
    pub fn denominator(
        &mut self,
        normalization: Normalization,
        tokens: impl FnMut(usize) -> u64,
        reducer: &dyn Reducer,
    ) -> Result<Denominator, DriverError> {
        Ok(self.count(tokens, reducer)?.denominator(normalization))
    }

    /// The counts, once [`Group::count`] or [`Group::count_all`] ran.
    pub fn counts(&self) -> Option<GroupCounts> {
        self.counts
    }
}
