//! The backward phase of a group (`accum::run::zeroing`, `accum::run::normalization`, `accum::run::group`, `accum::run::data-parallel`): every local replica
//! runs its microbatches — forward, loss weighted by the group's global
//! denominator, backward adding into its own gradient buffers, no
//! synchronisation between microbatches — on the engine's thread pool,
//! replicas side by side, each with a [`Team`] of threads inside its
//! microbatches.
//!
//! A failure inside a microbatch (a panicking model) is caught and named
//! (attempt, replica, microbatch); the other replicas finish their own work,
//! and the caller clears every partial gradient.

use std::panic::AssertUnwindSafe;

use rayon::prelude::*;

use super::hooks::{Fault, MicrobatchEvent};
use super::{Engine, EngineError, RunOptions};
use crate::data::PackedMicrobatch;
use crate::memory::MemoryBreakdown;
use crate::model::{GradScale, LossSums, Model, Team};
use crate::replica::Reducer;
use crate::report::ReplicaCounters;
use crate::scaler::FP16_MAX;
use crate::settings::PrecisionMode;
use crate::tensor::Tensors;
use crate::units::{Examples, Microbatches, Tokens};

#[cfg(test)]
use super::hooks::Mistakes;

/// One replica's buffers, kept from group to group.
pub(crate) struct ReplicaState<W> {
    pub(crate) grads: Tensors,
    pub(crate) workspace: W,
    pub(crate) counters: ReplicaCounters,
    /// This group's microbatch events (capacity `A`, reused).
    pub(crate) events: Vec<MicrobatchEvent>,
    /// This group's result, filled by the backward phase.
    pub(crate) outcome: Option<Result<ReplicaOutcome, EngineError>>,
    /// the symptom table of docs/rules.md mistake injected by tests: activations kept between microbatches.
    #[cfg(test)]
    pub(crate) retained: Vec<Vec<u8>>,
}

impl<W> ReplicaState<W> {
    pub(crate) fn new(grads: Tensors, workspace: W, accumulation: usize) -> ReplicaState<W> {
        ReplicaState {
            grads,
            workspace,
            counters: ReplicaCounters::default(),
            events: Vec::with_capacity(accumulation),
            outcome: None,
            #[cfg(test)]
            retained: Vec::new(),
        }
    }

    /// Bytes kept between microbatches (the symptom table of docs/rules.md): only a test mistake keeps any.
    pub(crate) fn retained_bytes(&self) -> u64 {
        #[cfg(test)]
        {
            self.retained.iter().map(|v| v.len() as u64).sum()
        }
        #[cfg(not(test))]
        {
            0
        }
    }
}

/// What every replica needs to know about the group.
pub(crate) struct GroupContext<'a> {
    pub(crate) attempt: u64,
    pub(crate) scale: GradScale,
    pub(crate) faults: &'a [Fault],
    /// A replica's microbatch that fails with an error (`Engine::inject_failure`).
    pub(crate) failure: Option<Fault>,
    pub(crate) fixed_bytes: MemoryBreakdown,
    /// Simulate the fp16 range on the replica's own gradients too.
    pub(crate) fp16: bool,
    pub(crate) team: Team,
    /// Ctrl-C: checked before each microbatch, so that a slow group stops
    /// within one microbatch instead of at its end.
    pub(crate) stop: Option<&'a std::sync::atomic::AtomicBool>,
    #[cfg(test)]
    pub(crate) mistakes: Mistakes,
}

/// One replica's result for the group.
#[derive(Debug)]
pub(crate) struct ReplicaOutcome {
    pub(crate) sums: LossSums,
    /// fp16: the replica's scaled gradients left the fp16 range before the
    /// reduction (opposite signs could cancel in the sum and hide it).
    pub(crate) overflow: bool,
    pub(crate) zeroings: u64,
    pub(crate) peak: MemoryBreakdown,
    pub(crate) denominator: f64,
    /// Workspace bytes after the group (`accum::run::memory`).
    pub(crate) activations: u64,
    /// Bytes kept between microbatches after the group (the symptom table of docs/rules.md).
    pub(crate) retained: u64,
}

/// Whether scaled gradients leave the fp16 range: an element above 65504
/// or not a number.
pub(crate) fn fp16_overflow(grads: &Tensors) -> bool {
    let max = grads.sq_norm_and_max_abs().1;
    max.is_nan() || max > FP16_MAX
}

pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string panic".to_owned())
}

/// Runs the backward phase of every local replica (ranks `base..`): side
/// by side on the current thread pool when `parallel`, each replica a work
/// item that the pool's next free thread takes (the pool has at most as
/// many threads as cores, whatever `D`), else one after the other on the
/// calling thread. Each replica's result lands in its
/// [`ReplicaState::outcome`], in its own buffers: which thread ran it does
/// not change a bit. `abort`: the reducer to abort when a replica fails, so
/// that replicas in other processes stop waiting.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_local<M: Model>(
    model: &M,
    states: &mut [ReplicaState<M::Workspace>],
    batches: &[Vec<PackedMicrobatch>],
    used: &[usize],
    base: usize,
    ctx: &GroupContext<'_>,
    abort: Option<&dyn Reducer>,
    parallel: bool,
) {
    let run = |(i, state): (usize, &mut ReplicaState<M::Workspace>)| {
        let rank = base + i;
        let result = run_guarded(model, rank, state, &batches[rank][..used[rank]], ctx);
        if let (Err(e), Some(reducer)) = (&result, abort) {
            reducer.abort(&format!("replica {rank} failed: {e}"));
        }
        state.outcome = Some(result);
    };
    if parallel && states.len() > 1 {
        // One replica per work item: a thread that finishes its replica
        // takes the next, so the pool stays busy whatever `D`.
        states
            .par_iter_mut()
            .with_max_len(1)
            .enumerate()
            .for_each(run);
    } else {
        states.iter_mut().enumerate().for_each(run);
    }
}

/// One replica's part, with a panic turned into an error.
fn run_guarded<M: Model>(
    model: &M,
    rank: usize,
    state: &mut ReplicaState<M::Workspace>,
    batches: &[PackedMicrobatch],
    ctx: &GroupContext<'_>,
) -> Result<ReplicaOutcome, EngineError> {
    std::panic::catch_unwind(AssertUnwindSafe(|| {
        run_replica(model, rank, state, batches, ctx)
    }))
    .unwrap_or_else(|panic| {
        // The events so far are the microbatches that completed.
        Err(EngineError::ReplicaPanicked {
            replica: rank,
            message: format!(
                "{} (attempt {}, microbatch {})",
                panic_message(panic.as_ref()),
                ctx.attempt,
                state.events.len()
            ),
        })
    })
}

fn run_replica<M: Model>(
    model: &M,
    rank: usize,
    state: &mut ReplicaState<M::Workspace>,
    batches: &[PackedMicrobatch],
    ctx: &GroupContext<'_>,
) -> Result<ReplicaOutcome, EngineError> {
    state.events.clear();
    // Test hooks, resolved once per group rather than per microbatch.
    let infinite_at = Fault::hits(ctx.faults, ctx.attempt, rank);
    let fail_at = ctx
        .failure
        .filter(|f| f.attempt == ctx.attempt && f.replica == rank)
        .map(|f| f.microbatch);
    let mut sums = LossSums::default();
    #[allow(unused_mut)]
    let mut zeroings = 0;
    let mut peak = MemoryBreakdown::default();
    // `accum::run::data-parallel`: no synchronisation between microbatches (no_sync for the first A − 1).
    for (index, batch) in batches.iter().enumerate() {
        if ctx
            .stop
            .is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed))
        {
            return Err(EngineError::Interrupted {
                attempt: ctx.attempt,
            });
        }
        #[cfg(test)]
        if ctx.mistakes.zero_per_microbatch {
            state.grads.fill_zero();
            zeroings += 1;
        }
        // A failure inside one microbatch names it; the group is not applied.
        let s = std::panic::catch_unwind(AssertUnwindSafe(|| {
            model.forward_backward_team(
                batch,
                &ctx.scale,
                &mut state.grads,
                &mut state.workspace,
                &ctx.team,
            )
        }))
        .map_err(|panic| EngineError::MicrobatchFailed {
            attempt: ctx.attempt,
            replica: rank,
            microbatch: index,
            message: panic_message(panic.as_ref()),
        })?;
        if fail_at == Some(index) {
            return Err(EngineError::InjectedFailure {
                attempt: ctx.attempt,
                replica: rank,
                microbatch: index,
            });
        }
        if infinite_at == Some(index)
            && let Some(first) = state.grads.slices_mut().next().and_then(|s| s.first_mut())
        {
            *first = f32::INFINITY;
        }
        #[cfg(test)]
        if ctx.mistakes.retain_activations {
            state.retained.push(vec![1u8; s.activation_bytes]);
        }
        sums.add(&s);
        state.counters.microbatches += Microbatches::ONE;
        state.counters.backward_passes += 1;
        state.counters.examples += Examples::new(batch.examples() as u64);
        state.counters.supervised_tokens += Tokens::new(s.tokens);
        state.events.push(MicrobatchEvent {
            attempt: ctx.attempt,
            replica: rank,
            index,
            examples: batch.examples() as u64,
            tokens: s.tokens,
            mean_token_loss: if s.tokens > 0 {
                s.token_loss / s.tokens as f64
            } else {
                0.0
            },
        });
        let sample = MemoryBreakdown {
            retained: state.retained_bytes(),
            ..ctx.fixed_bytes
        };
        if sample.total() > peak.total() {
            peak = sample;
        }
    }
    Ok(ReplicaOutcome {
        sums,
        overflow: ctx.fp16 && fp16_overflow(&state.grads),
        zeroings,
        peak,
        denominator: ctx.scale.denominator,
        activations: model.workspace_bytes(&state.workspace) as u64,
        retained: state.retained_bytes(),
    })
}

impl<M: Model> Engine<M> {
    /// Runs the group's backward passes on every local replica and gathers
    /// their outcomes (with MPI, every replica's) into `self.outcomes`. On a
    /// failure every partial gradient is cleared (`accum::run::zeroing`: a retried step starts
    /// from zero) and the root cause is returned.
    pub(super) fn backward(
        &mut self,
        attempt: u64,
        denominator: f64,
        loss_scale: f64,
        options: &mut RunOptions<'_>,
    ) -> Result<(), EngineError> {
        let faults = std::mem::take(&mut options.faults);
        let ctx = GroupContext {
            attempt,
            scale: GradScale {
                normalization: self.config.loss.normalization,
                denominator,
                // `accum::run::loss-scale`: the loss scale is constant during the group.
                loss_scale: loss_scale as f32,
                ignore_index: self.config.loss.ignore_index,
            },
            faults: &faults,
            failure: self.failure,
            fixed_bytes: self.fixed_bytes(),
            fp16: self.config.precision.mode == PrecisionMode::Fp16,
            team: Team::new(self.threads),
            // Processes stop together at a group boundary only.
            stop: options.stop.filter(|_| !self.distributed()),
            #[cfg(test)]
            mistakes: self.mistakes,
        };
        let pool = self.pool();
        let ranks = self.reducer.local_ranks();
        let distributed = self.distributed();
        let abort = distributed.then_some(&*self.reducer as &dyn Reducer);
        let (model, groups, ctx) = (&self.model, &self.groups, &ctx);
        let states = &mut self.replicas[ranks.clone()];
        let base = ranks.start;
        let mut work = move |parallel: bool| {
            run_local(
                model,
                states,
                &groups.batches,
                &groups.used,
                base,
                ctx,
                abort,
                parallel,
            )
        };
        match pool {
            Some(pool) => pool.install(|| work(true)),
            // One thread: the replicas in turn, on the calling thread.
            None => work(false),
        }
        options.faults = faults;

        // Report the root cause: a replica's own failure before the aborts it caused.
        self.outcomes.clear();
        let mut first_err: Option<EngineError> = None;
        for state in &mut self.replicas[ranks] {
            match state.outcome.take() {
                Some(Ok(o)) => self.outcomes.push(o),
                Some(Err(EngineError::Reduce(e))) => {
                    first_err.get_or_insert(EngineError::Reduce(e));
                }
                Some(Err(e)) => {
                    if !matches!(first_err, Some(ref f) if !matches!(f, EngineError::Reduce(_))) {
                        first_err = Some(e);
                    }
                }
                None => unreachable!("the backward phase fills every local replica's outcome"),
            }
        }
        if let Some(e) = first_err {
            for state in &mut self.replicas {
                state.grads.fill_zero();
            }
            return Err(e);
        }
        if distributed {
            let local = std::mem::take(&mut self.outcomes);
            self.outcomes = self.gather_outcomes(attempt, local)?;
        }
        Ok(())
    }
}
