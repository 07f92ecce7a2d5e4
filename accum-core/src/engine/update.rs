//! The update of a group (`accum::run::zeroing`, `accum::run::loss-scale`, `accum::run::scheduler`, `accum::run::memory`): after the last
//! contribution, the full gradient is checked (non-finite, or out of the
//! fp16 range), its norm taken, and — when finite — the optimizer applies
//! it, unscaled and clipped, in one pass over the parameters; the scheduler
//! steps once per applied update, the loss scaler once per attempt; then
//! the gradients are zeroed, once, and the group's statistics recorded.

use super::reduce::Reduced;
use super::{Engine, EngineError, RunOptions, UpdateView};
use crate::memory::MemoryBreakdown;
use crate::model::Model;
use crate::report::{StageCounters, UpdateStats};
use crate::scaler::FP16_MAX;
use crate::settings::PrecisionMode;
use crate::units::{Examples, Microbatches, Tokens, Updates};

impl<M: Model> Engine<M> {
    /// Applies (or skips) the group's update and records its statistics.
    pub(super) fn update(
        &mut self,
        attempt: u64,
        reduced: &Reduced,
        denominator: f64,
        loss_scale: f64,
        options: &mut RunOptions<'_>,
    ) -> Result<UpdateStats, EngineError> {
        let sums = &reduced.sums;
        let lead = self.reducer.local_ranks().start;
        let grads = &mut self.replicas[lead].grads;
        // One pass gives the norm and the largest element (`accum::run::loss-scale`).
        let (sq_norm, max_abs) = grads.sq_norm_and_max_abs();
        let overflow = match self.config.precision.mode {
            // Simulated fp16 range: a scaled element above 65504 overflows.
            PrecisionMode::Fp16 => {
                reduced.replica_overflow || max_abs.is_nan() || max_abs > FP16_MAX
            }
            PrecisionMode::Fp32 | PrecisionMode::Bf16 => !sq_norm.is_finite(),
        };
        // The loss scale is a power of two (`accum::run::loss-scale`), so dividing the norm by it
        // equals the norm of the unscaled gradient.
        let grad_norm = sq_norm.sqrt() / loss_scale;
        // The factor the optimizer applies to the gradient: unscaling, then
        // clipping, folded into its one pass.
        let mut factor = (1.0 / loss_scale) as f32;
        let wants_gradient =
            self.keep_gradient || options.observers.iter().any(|o| o.wants_gradient());
        if wants_gradient {
            if loss_scale != 1.0 {
                grads.scale(factor);
                factor = 1.0;
            }
            if self.keep_gradient {
                match &mut self.last_gradient {
                    Some(g) => g.copy_from(grads),
                    None => self.last_gradient = Some(grads.clone()),
                }
            }
            for obs in &mut options.observers {
                if obs.wants_gradient() {
                    obs.on_gradient(attempt, grads)
                        .map_err(|source| EngineError::Observer { attempt, source })?;
                }
            }
        }
        let finite = !overflow && grad_norm.is_finite();
        let mut clipped = false;
        let mut lr = 0.0;
        if finite {
            if let Some(max_norm) = self.config.optimizer.clip_norm
                && grad_norm > max_norm
            {
                // PyTorch's clip_grad_norm_: factor max_norm / (norm + 1e-6).
                factor *= (max_norm / (grad_norm + 1e-6)) as f32;
                clipped = true;
            }
            lr = self.schedule.lr();
            self.optimizer
                .step_scaled(self.model.params_mut(), grads, lr, factor);
            // `accum::run::scheduler`: one scheduler step per applied update.
            self.schedule.step();
            self.counters.applied_updates += Updates::ONE;
            self.partial_updates += u64::from(self.groups.partial());
            self.skips_in_a_row = 0;
        } else {
            self.counters.skipped_updates += 1;
            self.skips_in_a_row += 1;
        }
        #[cfg(test)]
        if self.mistakes.scheduler_per_microbatch {
            // The mistake: one step per microbatch (the correct step above
            // counts as the first).
            for _ in 1..self.groups.plan().accumulation() {
                self.schedule.step();
            }
        }
        self.counters.update_attempts += 1;
        self.counters.scheduler_steps = self.schedule.steps();
        if self.schedule.steps() != self.counters.applied_updates {
            return Err(EngineError::ScheduleDrift {
                attempt,
                scheduler_steps: self.schedule.steps().get(),
                applied_updates: self.counters.applied_updates.get(),
            });
        }
        // `accum::run::loss-scale`: the scaler updates after the attempt.
        self.scaler.update(finite);

        // `accum::run::memory`: the first group's peak includes its update (optimizer state
        // allocated now).
        let fixed = self.fixed_bytes();
        for (rank, o) in self.outcomes.iter().enumerate() {
            self.memory.sample(
                rank,
                MemoryBreakdown {
                    activations: o.activations,
                    retained: o.retained,
                    ..fixed
                },
            );
        }
        // `accum::run::zeroing`: zero once per group, after the update, on every replica.
        for state in &mut self.replicas {
            state.grads.fill_zero();
        }
        self.counters.grad_zeroings += 1;
        self.memory.end_group();

        let examples = Examples::new(self.groups.examples() as u64);
        self.counters.microbatches += Microbatches::new(reduced.microbatches);
        self.counters.backward_passes += reduced.microbatches;
        self.counters.examples += examples;
        self.counters.supervised_tokens += Tokens::new(sums.tokens);
        let stats = UpdateStats {
            attempt,
            epoch: self.groups.epoch(),
            stage: self.groups.stage(),
            applied: finite,
            updates: self.counters.applied_updates,
            loss: sums.objective,
            denominator,
            examples,
            tokens: Tokens::new(sums.tokens),
            microbatches: Microbatches::new(reduced.microbatches),
            partial: self.groups.partial(),
            lr,
            grad_norm,
            clipped,
            loss_scale,
        };
        let view = UpdateView {
            stats: &stats,
            counters: &self.counters,
            params: self.model.params(),
        };
        for obs in &mut options.observers {
            obs.on_parameters(&view)
                .map_err(|source| EngineError::Observer { attempt, source })?;
            obs.on_update(&stats, &self.counters);
        }
        if finite {
            self.log_point(&stats, options);
        }
        self.summary.add(&stats);
        self.count_stage(&stats);
        self.updates.push(stats.clone());
        Ok(stats)
    }
}

impl<M: Model> Engine<M> {
    /// Adds the attempt to its stage's counters, opening the entries of the
    /// stages reached since the last one (stages are reached in order: the
    /// applied updates only grow).
    fn count_stage(&mut self, stats: &UpdateStats) {
        while self.stage_counters.len() <= stats.stage {
            let stage = &self.stages.stages()[self.stage_counters.len()];
            self.stage_counters.push(StageCounters::new(
                stage.plan(),
                Updates::new(stage.start().get() + 1),
                stage.end(),
            ));
        }
        self.stage_counters[stats.stage].add(stats);
    }
}
