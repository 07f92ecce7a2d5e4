//! The reduction of a group (`accum::run::zeroing`, `accum::run::normalization`, `accum::run::data-parallel`, `accum::calc::scaling`): the group's loss sums
//! and memory samples from every replica's outcome, the observers' view of
//! the group, one gradient reduction — the replicas of this process summed
//! in rank order into the first one's buffers, then summed across processes
//! through the [`Reducer`](crate::replica::Reducer) — and the checks that
//! the group was accumulated right: no zeroing inside it (`accum::run::zeroing`) and token
//! weights that sum to one (`accum::run::normalization`: normalized exactly once).
//!
//! The sum, not the mean, is right (`accum::run::data-parallel`): every replica already weighted its
//! tokens by the group's global denominator.

use super::hooks::GroupView;
use super::{Engine, EngineError, RunOptions, WEIGHT_TOLERANCE};
use crate::memory::MemoryBreakdown;
use crate::model::{LossSums, Model};
use crate::settings::Normalization;

/// What the reduction hands to the update.
pub(crate) struct Reduced {
    pub(crate) sums: LossSums,
    /// fp16: some replica's own scaled gradients left the fp16 range.
    pub(crate) replica_overflow: bool,
    /// Microbatches over all replicas.
    pub(crate) microbatches: u64,
}

impl<M: Model> Engine<M> {
    /// Reduces the group: outcomes, observers, gradients, checks.
    pub(super) fn reduce(
        &mut self,
        attempt: u64,
        options: &mut RunOptions<'_>,
    ) -> Result<Reduced, EngineError> {
        let mut sums = LossSums::default();
        let mut zeroings = 0;
        let mut replica_overflow = false;
        for (rank, o) in self.outcomes.iter().enumerate() {
            sums.add(&o.sums);
            replica_overflow |= o.overflow;
            zeroings += o.zeroings;
            self.memory.sample(
                rank,
                MemoryBreakdown {
                    activations: o.activations,
                    ..o.peak
                },
            );
        }
        let microbatches = self.groups.used.iter().sum::<usize>() as u64;
        let ignore_index = self.config.loss.ignore_index;
        let view = GroupView {
            attempt,
            ignore_index,
            batches: &self.groups.batches,
            used: &self.groups.used,
        };
        for obs in &mut options.observers {
            obs.on_group(&view)
                .map_err(|source| EngineError::Observer { attempt, source })?;
            for state in &self.replicas {
                for event in &state.events {
                    obs.on_microbatch(event);
                }
            }
        }

        // `accum::run::data-parallel`, `accum::calc::scaling`: one gradient reduction per group, after the last
        // microbatch of every replica.
        let ranks = self.reducer.local_ranks();
        let (lead, rest) = self.replicas[ranks.clone()]
            .split_first_mut()
            .expect("a process runs at least one replica");
        for state in rest {
            lead.grads.add_assign(&state.grads);
        }
        if self.distributed() {
            self.reducer
                .all_reduce_grads(ranks.start, &mut self.replicas[ranks.start].grads)
                .map_err(EngineError::Reduce)?;
        }

        // `accum::run::zeroing`: nothing may have zeroed the gradients inside the group.
        if zeroings > 0 {
            return Err(EngineError::Zeroing { attempt, zeroings });
        }
        // `accum::run::normalization`: normalization happened exactly once. Normalized losses weigh
        // the group's tokens to a total of 1; a sum weighs each token 1.
        if sums.tokens > 0 {
            let normalization = self.config.loss.normalization;
            if sums.weight == 0.0 {
                return Err(EngineError::LossWeightsMissing {
                    attempt,
                    model: self.model.kind(),
                    tokens: sums.tokens,
                });
            }
            let expected = match normalization {
                Normalization::Sum => sums.tokens as f64,
                Normalization::PerToken | Normalization::PerExample => 1.0,
            };
            if (sums.weight - expected).abs() > WEIGHT_TOLERANCE * expected {
                return Err(EngineError::Normalization {
                    attempt,
                    weight: sums.weight,
                    expected,
                    normalization,
                });
            }
        }
        self.counters.grad_reductions += 1;
        Ok(Reduced {
            sums,
            replica_overflow,
            microbatches,
        })
    }
}
