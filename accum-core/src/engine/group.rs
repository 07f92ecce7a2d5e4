//! Group assembly (SPEC R5, R6, R9): which examples form the next group,
//! which replica and microbatch each one goes to, the last-group policy, the
//! shard check and the counts behind the group's denominator.
//!
//! Everything here is decided before the first backward pass and depends on
//! no tensor: the epoch order is a seeded shuffle of the data set
//! (`Dataset::epoch_order`), a group takes the next `B = m·A·D` examples of
//! it, microbatch `j` of the group (chunks of `m`) goes to replica `j mod D`
//! as its microbatch `j div D` (`GroupAssignment::split`). Buffers are
//! reused from group to group, so assembling a group allocates nothing once
//! the first group has sized them.

use super::{Engine, EngineError};
use crate::data::{Batch, Dataset, OverlapError, Rng};
use crate::model::Model;
use crate::plan::{LastGroup, Plan};
use crate::report::DroppedGroup;
use crate::settings::Normalization;

/// The most dropped groups whose ids a report lists (R6); the count of
/// dropped examples is always exact.
pub(crate) const MAX_DROPPED_GROUPS: usize = 64;

/// The group assembler: epoch order, cursor, shards and the batches of the
/// current group.
#[derive(Debug)]
pub(crate) struct Groups {
    seed: u64,
    last_group: LastGroup,
    /// Epoch of the current group, 0-based.
    pub(crate) epoch: u64,
    order: Vec<usize>,
    cursor: usize,
    /// Per data-set position: 1 + the replica that had the example in this
    /// epoch, 0 when none has (R9).
    owner: Vec<u32>,
    /// `batches[r][i]`: microbatch `i` of replica `r`; only the first
    /// `used[r]` belong to the current group.
    pub(crate) batches: Vec<Vec<Batch>>,
    pub(crate) used: Vec<usize>,
    /// Example ids of the current group, over all replicas.
    pub(crate) last_ids: Vec<u64>,
    /// Examples in the current group.
    pub(crate) examples: usize,
    /// Whether the current group is a last partial group (R6).
    pub(crate) partial: bool,
    /// The first [`MAX_DROPPED_GROUPS`] dropped groups (R6).
    pub(crate) dropped: Vec<DroppedGroup>,
    /// Examples dropped so far.
    pub(crate) dropped_examples: u64,
    /// Epochs started, the first included.
    pub(crate) epochs: u64,
    /// R14 mistake injected by tests: every replica gets replica 0's examples.
    #[cfg(test)]
    pub(crate) same_shard: bool,
}

/// Writes the order of epoch `epoch` into `order`: the same permutation as
/// [`Dataset::epoch_order`], without allocating.
fn fill_epoch_order(order: &mut Vec<usize>, n: usize, seed: u64, epoch: u64) {
    order.clear();
    order.extend(0..n);
    Rng::new(seed, 1000 + epoch).shuffle(order);
}

impl Groups {
    /// An assembler at the start of epoch 0, with every buffer sized for a
    /// full group of `plan` on `dataset`.
    pub(crate) fn new(dataset: &Dataset, plan: &Plan, seed: u64, last_group: LastGroup) -> Groups {
        let n = dataset.len();
        let d = plan.replicas() as usize;
        let a = plan.accumulation() as usize;
        let m = plan.micro_batch() as usize;
        let positions = m.saturating_mul(dataset.max_len());
        let batches = (0..d)
            .map(|_| {
                (0..a)
                    .map(|_| {
                        let mut b = Batch::default();
                        b.ids.reserve_exact(m);
                        b.offsets.reserve_exact(m + 1);
                        b.tokens.reserve_exact(positions);
                        b.labels.reserve_exact(positions);
                        b
                    })
                    .collect()
            })
            .collect();
        let mut order = Vec::with_capacity(n);
        fill_epoch_order(&mut order, n, seed, 0);
        Groups {
            seed,
            last_group,
            epoch: 0,
            order,
            cursor: 0,
            owner: vec![0; n],
            batches,
            used: vec![0; d],
            last_ids: Vec::with_capacity(m * a * d),
            examples: 0,
            partial: false,
            dropped: Vec::new(),
            dropped_examples: 0,
            epochs: 1,
            #[cfg(test)]
            same_shard: false,
        }
    }

    fn next_epoch(&mut self) {
        self.epoch += 1;
        self.epochs += 1;
        fill_epoch_order(&mut self.order, self.owner.len(), self.seed, self.epoch);
        self.cursor = 0;
        self.owner.fill(0);
    }

    /// The range of the epoch order that forms the next group, applying the
    /// last-group policy (R6): a partial group is kept (`process`) or its
    /// ids recorded and skipped (`drop`; `error` was refused when the plan
    /// was checked).
    fn next_members(&mut self, dataset: &Dataset, b: usize) -> std::ops::Range<usize> {
        loop {
            if self.cursor >= self.order.len() {
                self.next_epoch();
            }
            let start = self.cursor;
            let end = (start + b).min(self.order.len());
            self.cursor = end;
            let partial = end - start < b;
            if partial && self.last_group == LastGroup::Drop {
                self.dropped_examples += (end - start) as u64;
                if self.dropped.len() < MAX_DROPPED_GROUPS {
                    let ids = self.order[start..end]
                        .iter()
                        .map(|&p| dataset.examples()[p].id)
                        .collect();
                    self.dropped.push(DroppedGroup {
                        epoch: self.epoch,
                        ids,
                    });
                }
                continue;
            }
            self.partial = partial;
            return start..end;
        }
    }

    /// Assembles the next group into [`Groups::batches`]: microbatch `j`
    /// (chunks of `m`) goes to replica `j mod D` (R9), and no example may
    /// reach two replicas in one epoch.
    pub(crate) fn next(&mut self, dataset: &Dataset, plan: &Plan) -> Result<(), OverlapError> {
        let m = plan.micro_batch() as usize;
        let d = plan.replicas() as usize;
        let members = self.next_members(dataset, plan.effective_batch().get() as usize);
        self.examples = members.len();
        self.used.fill(0);
        self.last_ids.clear();
        let count = members.len().div_ceil(m);
        for j in 0..count {
            let (replica, index) = (j % d, j / d);
            #[cfg(test)]
            let j = if self.same_shard { index * d } else { j };
            let start = members.start + j * m;
            let chunk = start..(start + m).min(members.end);
            let batch = &mut self.batches[replica][index];
            batch.clear();
            for &p in &self.order[chunk] {
                let example = &dataset.examples()[p];
                // R9: disjoint shards within an epoch.
                let rank = u32::try_from(replica + 1).expect("replica ranks fit in u32");
                match self.owner[p] {
                    0 => self.owner[p] = rank,
                    first if first != rank => {
                        return Err(OverlapError {
                            id: example.id,
                            first: first as usize - 1,
                            second: replica,
                        });
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
    pub(crate) fn microbatches(&self, replica: usize) -> &[Batch] {
        &self.batches[replica][..self.used[replica]]
    }

    /// Supervised tokens and examples with at least one, over the
    /// microbatches of `replicas` (R4: what the denominator counts).
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

/// The group's global denominator from its global counts (R4): supervised
/// tokens (`per_token`), examples (`per_example`) or 1 (`sum`), at least 1.
pub(crate) fn denominator(normalization: Normalization, counts: [u64; 2]) -> f64 {
    match normalization {
        Normalization::PerToken => counts[0] as f64,
        Normalization::PerExample => counts[1] as f64,
        Normalization::Sum => 1.0,
    }
    .max(1.0)
}

impl<M: Model> Engine<M> {
    /// R5: the group's global denominator, fixed before the first backward
    /// pass — this process's counts, summed over processes (R4: global,
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
        #[allow(unused_mut)]
        let mut d = denominator(self.config.loss.normalization, counts);
        #[cfg(test)]
        if self.mistakes.double_division {
            d *= self.plan.accumulation() as f64;
        }
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::{GroupAssignment, epoch_order};
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

    #[test]
    fn the_epoch_order_is_the_data_sets() {
        let data = data(37);
        let mut order = Vec::new();
        for epoch in 0..3 {
            fill_epoch_order(&mut order, data.len(), 11, epoch);
            assert_eq!(order, epoch_order(data.len(), 11, epoch));
        }
    }

    #[test]
    fn groups_split_like_the_group_assignment_and_cover_each_epoch_once() {
        let data = data(50);
        let plan = Plan::new(3, 2, 3).unwrap(); // B = 18: 2 full groups + 14
        let mut groups = Groups::new(&data, &plan, 11, LastGroup::Process);
        let order = epoch_order(data.len(), 11, 0);
        let mut seen = Vec::new();
        for g in 0..3 {
            groups.next(&data, &plan).unwrap();
            let members = &order[g * 18..((g + 1) * 18).min(50)];
            let want = GroupAssignment::split(members, &plan);
            for (r, microbatches) in want.replicas.iter().enumerate() {
                assert_eq!(groups.used[r], microbatches.len(), "group {g} replica {r}");
                for (batch, positions) in groups.microbatches(r).iter().zip(microbatches) {
                    let ids: Vec<u64> = positions.iter().map(|&p| data.examples()[p].id).collect();
                    assert_eq!(batch.ids, ids);
                }
            }
            assert_eq!(groups.partial, g == 2);
            seen.extend_from_slice(&groups.last_ids);
        }
        seen.sort_unstable();
        assert_eq!(seen, (0..50).collect::<Vec<u64>>());
        // The next group starts epoch 1.
        groups.next(&data, &plan).unwrap();
        assert_eq!((groups.epoch, groups.epochs), (1, 2));
    }

    #[test]
    fn dropped_groups_are_counted_and_listed() {
        let data = data(20);
        let plan = Plan::new(2, 2, 2).unwrap(); // B = 8: 2 groups, 4 dropped
        let mut groups = Groups::new(&data, &plan, 1, LastGroup::Drop);
        for _ in 0..3 {
            groups.next(&data, &plan).unwrap();
            assert!(!groups.partial);
        }
        assert_eq!(groups.dropped_examples, 4);
        assert_eq!(groups.dropped.len(), 1);
        assert_eq!(groups.dropped[0].ids.len(), 4);
        let counts = groups.counts(0..2, -100);
        assert_eq!(counts[1], 8);
        assert_eq!(denominator(Normalization::PerExample, counts), 8.0);
        assert_eq!(denominator(Normalization::Sum, counts), 1.0);
    }
}
