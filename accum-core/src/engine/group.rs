//! The engine's groups (`accum::run::normalization`, `accum::run::group`, `accum::plan::partial-group`, `accum::run::data-parallel`). The loop driver's walk
//! ([`crate::driver`]) decides which examples form each group, under which
//! plan — with stages, the plan of the update the group will produce — and
//! which replica runs each microbatch: the same walk a user's loop draws
//! from. Here the engine packs the group into the batches every replica
//! runs, checks that no example reaches two replicas in one epoch, keeps
//! the dropped groups for the report, and counts the group's denominator.
//!
//! Buffers are reused from group to group and sized for the largest `A` of
//! every stage up front, so a group allocates nothing once the first group
//! has filled them.

use super::{Engine, EngineError};
use crate::data::{Dataset, OverlapError, PackedMicrobatch};
use crate::driver::{Draw, GroupCounts, Position, Walk};
use crate::model::Model;
use crate::plan::{Plan, StagedPlan};
use crate::report::DroppedGroup;
use crate::units::{Examples, Tokens, Updates};

/// The most dropped groups whose ids a report lists (`accum::plan::partial-group`); the count of
/// dropped examples is always exact.
pub(crate) const MAX_DROPPED_GROUPS: usize = 64;

/// The current group, packed, and what the engine keeps across groups.
#[derive(Debug)]
pub(crate) struct Groups {
    walk: Walk,
    /// The current group as the walk drew it: positions, epoch, plan.
    draw: Draw,
    /// Per data-set position: 1 + the replica that had the example in this
    /// epoch, 0 when none has (`accum::run::data-parallel`).
    owner: Vec<u32>,
    /// The epoch `owner` is about.
    owner_epoch: u64,
    /// Positions a new batch reserves: `m × max_len`.
    batch_positions: usize,
    /// `batches[r][i]`: microbatch `i` of replica `r`; only the first
    /// `used[r]` belong to the current group.
    pub(crate) batches: Vec<Vec<PackedMicrobatch>>,
    pub(crate) used: Vec<usize>,
    /// Example ids of the current group, over all replicas.
    pub(crate) last_ids: Vec<u64>,
    /// The first [`MAX_DROPPED_GROUPS`] dropped groups (`accum::plan::partial-group`).
    pub(crate) dropped: Vec<DroppedGroup>,
    /// Examples dropped so far.
    pub(crate) dropped_examples: u64,
    /// the symptom table of docs/rules.md mistake injected by tests: every replica gets replica 0's examples.
    #[cfg(test)]
    pub(crate) same_shard: bool,
}

/// The walk's position and the dropped groups before a draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Mark {
    at: Position,
    dropped: usize,
    dropped_examples: u64,
}

/// An empty batch with room for `m` examples of `positions` positions in all.
fn reserved_batch(m: usize, positions: usize) -> PackedMicrobatch {
    let mut b = PackedMicrobatch::default();
    b.ids.reserve_exact(m);
    b.offsets.reserve_exact(m + 1);
    b.tokens.reserve_exact(positions);
    b.labels.reserve_exact(positions);
    b
}

impl Groups {
    /// The groups of `walk` over `dataset`, before the first, with every
    /// buffer sized for a full group of the walk's largest stage (`m` and
    /// `D` are the same in every stage).
    pub(crate) fn new(walk: Walk, dataset: &Dataset) -> Groups {
        let plan = *walk.stages().first_plan();
        let d = plan.replicas() as usize;
        let a = max_accumulation(walk.stages());
        let m = plan.micro_batch() as usize;
        let batch_positions = m.saturating_mul(dataset.max_len());
        let batches = (0..d)
            .map(|_| (0..a).map(|_| reserved_batch(m, batch_positions)).collect())
            .collect();
        Groups {
            draw: walk.empty_draw(),
            walk,
            owner: vec![0; dataset.len()],
            owner_epoch: 0,
            batch_positions,
            batches,
            used: vec![0; d],
            last_ids: Vec::with_capacity(m * a * d),
            dropped: Vec::new(),
            dropped_examples: 0,
            #[cfg(test)]
            same_shard: false,
        }
    }

    /// The plan of the current group.
    pub(crate) fn plan(&self) -> &Plan {
        &self.draw.plan
    }

    /// The stage (0-based) of the current group.
    pub(crate) fn stage(&self) -> usize {
        self.draw.stage
    }

    /// Moves the walk to `at`, as if the groups before it had been drawn.
    pub(crate) fn seek(&mut self, at: Position) {
        self.walk.seek(at);
    }

    /// The walk the groups come from.
    pub(crate) fn walk(&self) -> &Walk {
        &self.walk
    }

    /// Where the walk stands: the next group starts here.
    pub(crate) fn position(&self) -> Position {
        self.walk.position()
    }

    /// What [`Groups::rewind`] needs to undo the next draw.
    pub(crate) fn mark(&self) -> Mark {
        Mark {
            at: self.walk.position(),
            dropped: self.dropped.len(),
            dropped_examples: self.dropped_examples,
        }
    }

    /// Undoes the draws since `mark`: a group stopped inside is drawn
    /// again when the run continues.
    pub(crate) fn rewind(&mut self, mark: Mark) {
        self.walk.seek(mark.at);
        self.dropped.truncate(mark.dropped);
        self.dropped_examples = mark.dropped_examples;
    }

    /// The epoch of the current group, 0-based.
    pub(crate) fn epoch(&self) -> u64 {
        self.draw.epoch
    }

    /// Epochs started, the first included.
    pub(crate) fn epochs(&self) -> u64 {
        self.walk.epoch() + 1
    }

    /// Whether the current group is a last partial group (`accum::plan::partial-group`).
    pub(crate) fn partial(&self) -> bool {
        self.draw.partial
    }

    /// Examples in the current group.
    pub(crate) fn examples(&self) -> usize {
        self.draw.members.len()
    }

    /// Draws the group of the update after `applied` applied updates from
    /// the walk, under that update's stage, and packs it into
    /// [`Groups::batches`], as the walk places its microbatches (`accum::run::data-parallel`); no
    /// example may reach two replicas in one epoch. Dropped groups are
    /// counted, and the first ones kept with their ids (`accum::plan::partial-group`).
    pub(crate) fn next(&mut self, dataset: &Dataset, applied: Updates) -> Result<(), EngineError> {
        let (dropped, dropped_examples) = (&mut self.dropped, &mut self.dropped_examples);
        self.walk
            .next_into(&mut self.draw, applied, |epoch, positions| {
                *dropped_examples += positions.len() as u64;
                if dropped.len() < MAX_DROPPED_GROUPS {
                    let ids = positions
                        .iter()
                        .map(|&p| dataset.examples()[p].id)
                        .collect();
                    dropped.push(DroppedGroup { epoch, ids });
                }
            })
            .map_err(EngineError::StageGroup)?;
        if self.draw.epoch != self.owner_epoch {
            self.owner.fill(0);
            self.owner_epoch = self.draw.epoch;
        }
        let m = self.draw.plan.micro_batch() as usize;
        self.used.fill(0);
        self.last_ids.clear();
        for placement in self.draw.placements() {
            let (replica, index) = (placement.replica, placement.index);
            #[cfg(test)]
            let placement = if self.same_shard {
                // Replica 0's microbatch of the same index.
                let d = self.draw.plan.replicas() as usize;
                self.draw.placements().nth(index * d).unwrap_or(placement)
            } else {
                placement
            };
            let list = &mut self.batches[replica];
            if list.len() <= index {
                // A group's plan with a larger `A` than any before.
                list.push(reserved_batch(m, self.batch_positions));
            }
            let batch = &mut list[index];
            batch.clear();
            // `accum::run::data-parallel`: disjoint shards within an epoch.
            let rank = u32::try_from(replica + 1).expect("replica ranks fit in u32");
            for &p in placement.positions {
                let example = &dataset.examples()[p];
                match self.owner[p] {
                    0 => self.owner[p] = rank,
                    first if first != rank => {
                        return Err(EngineError::Overlap(OverlapError {
                            id: example.id,
                            first: first as usize - 1,
                            second: replica,
                        }));
                    }
                    _ => {}
                }
                batch.push(example);
                self.last_ids.push(example.id);
            }
            self.used[replica] = index + 1;
        }
        Ok(())
    }

    /// The microbatches of `replica` in the current group.
    pub(crate) fn microbatches(&self, replica: usize) -> &[PackedMicrobatch] {
        &self.batches[replica][..self.used[replica]]
    }

    /// What the denominator counts (`accum::run::normalization`) over the microbatches of
    /// `replicas`: supervised tokens, and examples with at least one.
    pub(crate) fn counts(&self, replicas: std::ops::Range<usize>, ignore_index: i64) -> [u64; 2] {
        let mut counts = [0, 0];
        for r in replicas {
            for batch in self.microbatches(r) {
                counts[0] += batch.supervised(ignore_index);
                counts[1] += batch.supervised_examples(ignore_index);
            }
        }
        counts
    }
}

/// Bytes of the buffers [`Groups::new`] and the replicas reserve for a
/// group of `stages` on data of `max_len`: per replica and microbatch of the
/// largest `A`, a batch of `m` examples and `m·max_len` positions and a
/// microbatch event; and the ids of a whole group. Saturates, so that a plan
/// no machine holds is a number over the limit, not an overflow.
pub(crate) fn group_buffer_bytes(stages: &StagedPlan, max_len: usize) -> u64 {
    use std::mem::size_of;
    let plan = stages.first_plan();
    let (m, d) = (plan.micro_batch(), plan.replicas());
    let a = max_accumulation(stages) as u64;
    let positions = m.saturating_mul(max_len as u64);
    let per_microbatch = (m.saturating_mul(size_of::<u64>() as u64))
        .saturating_add((m + 1).saturating_mul(size_of::<usize>() as u64))
        .saturating_add(positions.saturating_mul((size_of::<u32>() + size_of::<i64>()) as u64))
        .saturating_add(size_of::<super::hooks::MicrobatchEvent>() as u64)
        .saturating_add(size_of::<PackedMicrobatch>() as u64)
        // The group's example ids.
        .saturating_add(m.saturating_mul(size_of::<u64>() as u64));
    per_microbatch.saturating_mul(a).saturating_mul(d)
}

/// The largest `A` of the stages: what the group buffers are sized for.
pub(super) fn max_accumulation(stages: &StagedPlan) -> usize {
    let a = stages
        .stages()
        .iter()
        .map(|stage| stage.plan().accumulation())
        .max()
        .unwrap_or(1);
    usize::try_from(a).unwrap_or(usize::MAX)
}

impl<M: Model> Engine<M> {
    /// `accum::run::group`: the group's global denominator, fixed before the first backward
    /// pass — this process's counts, summed over processes (`accum::run::normalization`: global,
    /// not per microbatch).
    pub(super) fn group_denominator(&mut self) -> Result<f64, EngineError> {
        let ranks = self.reducer.local_ranks();
        let mut counts = self
            .groups
            .counts(ranks.clone(), self.config.loss.ignore_index);
        if self.distributed() {
            self.reducer
                .all_reduce_counts(ranks.start, &mut counts)
                .map_err(EngineError::Reduce)?;
        }
        let counts = GroupCounts {
            tokens: Tokens::new(counts[0]),
            examples: Examples::new(counts[1]),
        };
        #[allow(unused_mut)]
        let mut d = counts.denominator(self.config.loss.normalization).value;
        #[cfg(test)]
        if self.mistakes.double_division {
            d *= self.groups.plan().accumulation() as f64;
        }
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::{GroupAssignment, epoch_order};
    use crate::plan::LastGroup;
    use crate::settings::DataSection;

    fn data(examples: u64) -> Dataset {
        Dataset::synthetic(&DataSection {
            examples,
            min_len: 2,
            max_len: 6,
            vocab: 16,
            seed: 3,
            ..DataSection::default()
        })
    }

    fn groups(data: &Dataset, plan: Plan, seed: u64, policy: LastGroup) -> Groups {
        let walk = Walk::new(plan, data.len(), seed, policy).expect("a walk");
        Groups::new(walk, data)
    }

    #[test]
    fn batches_hold_the_driver_s_assignment_and_cover_each_epoch_once() {
        let data = data(50);
        let plan = Plan::new(3, 2, 3).unwrap(); // B = 18: 2 full groups + 14
        let mut groups = groups(&data, plan, 11, LastGroup::Process);
        let order = epoch_order(data.len(), 11, 0);
        let mut seen = Vec::new();
        for g in 0..3 {
            groups.next(&data, Updates::ZERO).unwrap();
            let members = &order[g * 18..((g + 1) * 18).min(50)];
            let want = GroupAssignment::split(members, &plan);
            for (r, microbatches) in want.replicas.iter().enumerate() {
                assert_eq!(groups.used[r], microbatches.len(), "group {g} replica {r}");
                for (batch, positions) in groups.microbatches(r).iter().zip(microbatches) {
                    let ids: Vec<u64> = positions.iter().map(|&p| data.examples()[p].id).collect();
                    assert_eq!(batch.ids, ids);
                }
            }
            assert_eq!(groups.partial(), g == 2);
            assert_eq!(groups.examples(), members.len());
            seen.extend_from_slice(&groups.last_ids);
        }
        seen.sort_unstable();
        assert_eq!(seen, (0..50).collect::<Vec<u64>>());
        // The next group starts epoch 1, with a clean shard check.
        groups.next(&data, Updates::ZERO).unwrap();
        assert_eq!((groups.epoch(), groups.epochs()), (1, 2));
    }

    #[test]
    fn dropped_groups_are_counted_and_listed() {
        let data = data(20);
        let plan = Plan::new(2, 2, 2).unwrap(); // B = 8: 2 groups, 4 dropped
        let mut groups = groups(&data, plan, 1, LastGroup::Drop);
        for _ in 0..3 {
            groups.next(&data, Updates::ZERO).unwrap();
            assert!(!groups.partial());
        }
        assert_eq!(groups.dropped_examples, 4);
        assert_eq!(groups.dropped.len(), 1);
        assert_eq!(groups.dropped[0].epoch, 0);
        assert_eq!(groups.dropped[0].ids.len(), 4);
        assert_eq!(groups.counts(0..2, -100)[1], 8);
    }

    #[test]
    fn an_example_on_two_replicas_in_one_epoch_is_refused() {
        let data = data(16);
        let plan = Plan::new(2, 2, 2).unwrap();
        let mut groups = groups(&data, plan, 4, LastGroup::Process);
        groups.same_shard = true;
        let Err(EngineError::Overlap(err)) = groups.next(&data, Updates::ZERO) else {
            panic!("the overlap is refused");
        };
        assert_eq!((err.first, err.second), (0, 1));
        assert_eq!(err.id, groups.batches[0][0].ids[0]);
    }
}
