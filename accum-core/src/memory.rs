//! Memory accounting per replica (SPEC R11, R16).
//!
//! The engine reports the bytes it holds live, by kind: parameters,
//! gradients, optimizer state, activations (the per-replica workspace) and
//! anything kept between microbatches that should not be (`retained`, R14).
//! Peaks are per replica (per device). The first group is measured
//! separately — its backward passes *and* the first update, which allocates
//! the optimizer state — from all later groups; a later peak above the first
//! means memory grows across groups (R14: references kept between
//! microbatches), and the report says so.

use serde::{Deserialize, Serialize};

/// Live bytes by kind, at one moment on one replica.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryBreakdown {
    /// Parameters (each replica holds a full copy).
    pub params: u64,
    /// Gradient buffers (each replica has its own).
    pub grads: u64,
    /// Optimizer state (AdamW moments, SGD momentum).
    pub optimizer_state: u64,
    /// Activation buffers of the replica's workspace.
    pub activations: u64,
    /// Memory kept between microbatches that a correct loop releases (R14).
    pub retained: u64,
}

impl MemoryBreakdown {
    /// Sum of all kinds.
    pub fn total(&self) -> u64 {
        self.params + self.grads + self.optimizer_state + self.activations + self.retained
    }
}

/// Peaks of one replica.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplicaPeaks {
    /// Peak during the first group, its first update included.
    pub first_group: MemoryBreakdown,
    /// Peak over all later groups (`None` with one group).
    pub later_groups: Option<MemoryBreakdown>,
}

/// The memory section of a run report.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryReport {
    /// Peaks per replica, in rank order.
    pub replicas: Vec<ReplicaPeaks>,
    /// The largest per-replica peak of the whole run, in bytes.
    pub peak_bytes: u64,
    /// The largest per-replica activation bytes of the run.
    pub peak_activation_bytes: u64,
    /// Whether a later group peaked above the first group on some replica
    /// (memory grows across groups: something is kept between microbatches).
    pub peak_grows: bool,
}

/// Collects samples and keeps peaks.
#[derive(Clone, Debug)]
pub struct MemoryTracker {
    current: Vec<MemoryBreakdown>,
    peaks: Vec<ReplicaPeaks>,
    groups: u64,
}

impl MemoryTracker {
    /// A tracker for `replicas` replicas.
    pub fn new(replicas: usize) -> MemoryTracker {
        MemoryTracker {
            current: vec![MemoryBreakdown::default(); replicas],
            peaks: vec![ReplicaPeaks::default(); replicas],
            groups: 0,
        }
    }

    /// Records a sample of `replica` in the current group.
    pub fn sample(&mut self, replica: usize, sample: MemoryBreakdown) {
        if let Some(current) = self.current.get_mut(replica)
            && sample.total() > current.total()
        {
            *current = sample;
        }
    }

    /// Closes the current group (after its update).
    pub fn end_group(&mut self) {
        for (peak, current) in self.peaks.iter_mut().zip(&mut self.current) {
            if self.groups == 0 {
                peak.first_group = *current;
            } else {
                match &mut peak.later_groups {
                    Some(later) if later.total() >= current.total() => {}
                    later => *later = Some(*current),
                }
            }
            *current = MemoryBreakdown::default();
        }
        self.groups += 1;
    }

    /// The report so far.
    pub fn report(&self) -> MemoryReport {
        let all = || {
            self.peaks
                .iter()
                .flat_map(|p| std::iter::once(p.first_group).chain(p.later_groups))
        };
        MemoryReport {
            replicas: self.peaks.clone(),
            peak_bytes: all().map(|b| b.total()).max().unwrap_or(0),
            peak_activation_bytes: all().map(|b| b.activations).max().unwrap_or(0),
            peak_grows: self.peaks.iter().any(|p| {
                p.later_groups
                    .is_some_and(|later| later.total() > p.first_group.total())
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(opt: u64, retained: u64) -> MemoryBreakdown {
        MemoryBreakdown {
            params: 100,
            grads: 100,
            optimizer_state: opt,
            activations: 50,
            retained,
        }
    }

    #[test]
    fn r11_first_group_includes_the_first_update() {
        let mut t = MemoryTracker::new(1);
        t.sample(0, b(0, 0));
        t.sample(0, b(200, 0)); // after the first update
        t.end_group();
        t.sample(0, b(200, 0));
        t.end_group();
        let r = t.report();
        assert_eq!(r.replicas[0].first_group.total(), 450);
        assert_eq!(r.peak_bytes, 450);
        assert!(!r.peak_grows);
    }

    #[test]
    fn r14_growth_across_groups_is_flagged() {
        let mut t = MemoryTracker::new(2);
        for group in 0..3u64 {
            t.sample(0, b(200, 0));
            t.sample(1, b(200, group * 10));
            t.end_group();
        }
        let r = t.report();
        assert!(r.peak_grows);
        assert_eq!(r.replicas[1].later_groups.map(|l| l.retained), Some(20));
        assert_eq!(r.peak_bytes, 470);
    }
}
