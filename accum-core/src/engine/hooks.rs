//! What the loop tells the outside and what it can be told: the
//! [`Observer`] hooks (progress, logs, dumps, stats streams), the
//! [`RunOptions`] of one run (observers, stop flag, injected faults) and the
//! test-only the symptom table of docs/rules.md mistakes.
//!
//! The engine knows no file format: writers of dumps and stats streams are
//! observers. Hooks are called on the thread that drives the loop, after the
//! group's backward passes, in a fixed order per attempt:
//! [`on_group`](Observer::on_group), [`on_microbatch`](Observer::on_microbatch)
//! per microbatch, [`on_gradient`](Observer::on_gradient) (only if
//! [`wants_gradient`](Observer::wants_gradient)),
//! [`on_update`](Observer::on_update), then [`on_log`](Observer::on_log) when
//! the log interval is reached.

use std::fmt;
use std::sync::atomic::AtomicBool;

use crate::data::PackedMicrobatch;
use crate::report::{Counters, CurvePoint, UpdateStats};
use crate::settings::LogAxis;
use crate::tensor::Tensors;

/// What a failing observer reports; the run stops with
/// [`EngineError::Observer`](super::EngineError::Observer).
pub type ObserverError = Box<dyn std::error::Error + Send + Sync>;

/// One microbatch, as the observer sees it (delivered after the group's
/// backward passes, in replica and microbatch order).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MicrobatchEvent {
    /// The attempt, 1-based.
    pub attempt: u64,
    /// The replica's rank.
    pub replica: usize,
    /// Index within the group on this replica, 0-based.
    pub index: usize,
    /// Examples in the microbatch.
    pub examples: u64,
    /// Supervised tokens in the microbatch.
    pub tokens: u64,
    /// Mean token loss of the microbatch (for display; not the objective).
    pub mean_token_loss: f64,
}

/// The examples of one update attempt, replica by replica, as the replicas
/// really loaded them (handed to [`Observer::on_group`]).
#[derive(Clone, Copy, Debug)]
pub struct GroupView<'a> {
    /// The attempt, 1-based.
    pub attempt: u64,
    /// Labels equal to this value are not supervised.
    pub ignore_index: i64,
    pub(crate) batches: &'a [Vec<PackedMicrobatch>],
    pub(crate) used: &'a [usize],
}

impl<'a> GroupView<'a> {
    /// Replicas of the plan (`D`).
    pub fn replicas(&self) -> usize {
        self.batches.len()
    }

    /// The microbatches of `replica` in this group, in order (fewer than `A`,
    /// possibly none, in a last partial group).
    pub fn microbatches(&self, replica: usize) -> &'a [PackedMicrobatch] {
        &self.batches[replica][..self.used[replica]]
    }
}

/// An update attempt with the parameters after it (handed to
/// [`Observer::on_parameters`]).
#[derive(Clone, Copy, Debug)]
pub struct UpdateView<'a> {
    /// The attempt's statistics.
    pub stats: &'a UpdateStats,
    /// Whole-run counters after the attempt.
    pub counters: &'a Counters,
    /// The parameters after the attempt (unchanged when it was skipped).
    pub params: &'a Tensors,
}

/// Hooks called by the loop. Every method has an empty default, so an
/// observer implements only what it needs. The fallible hooks stop the run
/// when they return an error (a dump that cannot be written must not be
/// silently incomplete).
pub trait Observer {
    /// Before the microbatch events of an attempt: the examples every
    /// replica processed.
    fn on_group(&mut self, _group: &GroupView<'_>) -> Result<(), ObserverError> {
        Ok(())
    }

    /// After each microbatch.
    fn on_microbatch(&mut self, _event: &MicrobatchEvent) {}

    /// Whether [`on_gradient`](Observer::on_gradient) should be called:
    /// handing out the gradient costs a pass over it in fp16 (to unscale it).
    fn wants_gradient(&self) -> bool {
        false
    }

    /// The group's full gradient: reduced over replicas, normalized,
    /// unscaled, before clipping.
    fn on_gradient(&mut self, _attempt: u64, _grads: &Tensors) -> Result<(), ObserverError> {
        Ok(())
    }

    /// After each update attempt, applied or skipped, with the parameters
    /// after it.
    fn on_parameters(&mut self, _update: &UpdateView<'_>) -> Result<(), ObserverError> {
        Ok(())
    }

    /// After each update attempt, applied or skipped.
    fn on_update(&mut self, _stats: &UpdateStats, _counters: &Counters) {}

    /// When the declared log interval (`[log] every`) is reached, with the
    /// point in the declared axis.
    fn on_log(&mut self, _point: &CurvePoint, _axis: LogAxis) {}
}

/// A fault to inject: replica `replica`'s microbatch `microbatch` of
/// attempt `attempt` (1-based) produces an infinite gradient element. A
/// documented public hook, so tests and demos can show a skipped attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    /// Attempt, 1-based.
    pub attempt: u64,
    /// Replica rank.
    pub replica: usize,
    /// Microbatch index within the group on that replica.
    pub microbatch: usize,
}

impl Fault {
    /// The microbatch of `replica` this fault hits in `attempt`, if any.
    pub(crate) fn hits(faults: &[Fault], attempt: u64, replica: usize) -> Option<usize> {
        faults
            .iter()
            .find(|f| f.attempt == attempt && f.replica == replica)
            .map(|f| f.microbatch)
    }
}

/// Deliberate mistakes (the symptom table of docs/rules.md), injected only by tests to show that the
/// loop detects or prevents each. Compiled into test builds only.
#[cfg(test)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Mistakes {
    /// Divide the normalized loss by `A` once more.
    pub(crate) double_division: bool,
    /// Zero the gradients before every microbatch.
    pub(crate) zero_per_microbatch: bool,
    /// Step the scheduler per microbatch instead of per update.
    pub(crate) scheduler_per_microbatch: bool,
    /// Keep every microbatch's activations (like a list of graph-attached losses).
    pub(crate) retain_activations: bool,
    /// Give every replica replica 0's examples.
    pub(crate) same_shard: bool,
}

/// Options of one run.
#[derive(Default)]
pub struct RunOptions<'a> {
    /// Called per group, microbatch, update and log interval, in this
    /// order (a progress display, a dump writer, a stats stream).
    pub observers: Vec<&'a mut (dyn Observer + Send)>,
    /// When set, the run stops at the next group boundary (Ctrl-C).
    pub stop: Option<&'a AtomicBool>,
    /// Faults to inject.
    pub faults: Vec<Fault>,
}

impl<'a> RunOptions<'a> {
    /// Adds an observer (called after those added before it).
    #[must_use]
    pub fn observe(mut self, observer: &'a mut (dyn Observer + Send)) -> RunOptions<'a> {
        self.observers.push(observer);
        self
    }
}

impl fmt::Debug for RunOptions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunOptions")
            .field("observers", &self.observers.len())
            .field("stop", &self.stop)
            .field("faults", &self.faults)
            .finish_non_exhaustive()
    }
}
