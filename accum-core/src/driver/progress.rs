//! Typed progress (`accum::span`, `accum::run::scheduler`): how far a run is, in all four units, and
//! intervals that fire exactly when a threshold is reached.

use crate::span::Span;
use crate::units::{Examples, Microbatches, Tokens, UnitKind, Updates};

/// How much the applied updates have trained on so far. A skipped attempt
/// (non-finite gradients) is not an update: it advances only `attempts` and
/// `skipped` (`accum::run::loss-scale`, `accum::run::scheduler`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Applied optimizer updates.
    pub updates: Updates,
    /// Microbatches (forward and backward passes) of one replica, as a
    /// replica's loop counts them: `A` per full update. In a partial group
    /// the replicas differ; replica 0, which has the most, is counted.
    pub microbatches: Microbatches,
    /// Examples of the applied updates, over all replicas.
    pub examples: Examples,
    /// Supervised tokens of the applied updates, over all replicas.
    pub tokens: Tokens,
    /// Update attempts, applied or skipped.
    pub attempts: u64,
    /// Attempts skipped for non-finite gradients.
    pub skipped: u64,
    /// Applied updates whose group was the partial last group of an epoch
    /// (`last_group = "process"`): fewer examples than `B`.
    pub partial: u64,
}

impl Progress {
    /// The count in `unit`.
    pub fn count(&self, unit: UnitKind) -> u64 {
        match unit {
            UnitKind::Update => self.updates.get(),
            UnitKind::Microbatch => self.microbatches.get(),
            UnitKind::Example => self.examples.get(),
            UnitKind::Token => self.tokens.get(),
        }
    }

    /// Whether going from `before` to `self` reached or crossed a multiple
    /// of `every` in its unit: "every 500 updates" fires at update 500,
    /// 1000, …; "every 2M tokens" fires on the update whose tokens take the
    /// count from below 2,000,000 to 2,000,000 or more. An update that
    /// crosses several multiples at once fires once. A zero span never
    /// fires.
    pub fn crossed(&self, before: &Progress, every: Span) -> bool {
        let step = every.value();
        step > 0 && before.count(every.unit()) / step < self.count(every.unit()) / step
    }
}

impl crate::schedule::Consumed for Progress {
    fn count(&self, unit: UnitKind) -> u64 {
        Progress::count(self, unit)
    }
}
