//! Memory accounting per replica (`accum::run::memory`).
//!
//! The engine reports the bytes it holds live, by kind: parameters,
//! gradients, optimizer state, activations (the per-replica workspace) and
//! anything kept between microbatches that should not be (`retained`, the symptom table of docs/rules.md).
//! Peaks are per replica (per device). The first group is measured
//! separately — its backward passes *and* the first update, which allocates
//! the optimizer state — from all later groups.
//!
//! Whether memory grows across groups (`accum::run::group`: references kept
//! between microbatches) is decided on what is *retained*, not on the
//! total: the optimizer state is allocated at the first *applied* update,
//! which comes after the first group when that group's update was skipped
//! (an fp16 run whose first attempts overflow), and the activation
//! workspace follows the longest sequence seen so far. Neither is a leak;
//! memory kept from one microbatch to the next is.

use serde::{Deserialize, Serialize};

/// The warning of a run whose retained memory grows across groups
/// (`accum::run::group`), in the engine's report and a recorder's alike.
pub(crate) const GROWTH_WARNING: &str = "memory kept between microbatches grows across groups: \
     something holds on to them (release losses and activations after each backward pass)";

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
    /// Memory kept between microbatches that a correct loop releases (the symptom table of docs/rules.md).
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
    /// The most any later group retained between microbatches, whichever
    /// group had the peak total.
    #[serde(default)]
    pub later_retained: u64,
}

impl ReplicaPeaks {
    /// Whether the later groups retained more than the first: memory that
    /// a correct loop releases after each backward pass piled up.
    pub fn retains_more(&self) -> bool {
        self.later_groups.is_some()
            && self
                .later_retained
                .max(self.later_groups.map_or(0, |l| l.retained))
                > self.first_group.retained
    }
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
    /// Whether a later group retained more than the first group on some
    /// replica (memory grows across groups: something is kept between
    /// microbatches). Optimizer state and the activation workspace are not
    /// counted: they are allocated once, whenever the run first needs them.
    pub peak_grows: bool,
}

/// Collects samples and keeps peaks.
#[derive(Clone, Debug)]
pub(crate) struct MemoryTracker {
    current: Vec<MemoryBreakdown>,
    peaks: Vec<ReplicaPeaks>,
    groups: u64,
}

impl MemoryTracker {
    /// A tracker for `replicas` replicas.
    pub(crate) fn new(replicas: usize) -> MemoryTracker {
        MemoryTracker {
            current: vec![MemoryBreakdown::default(); replicas],
            peaks: vec![ReplicaPeaks::default(); replicas],
            groups: 0,
        }
    }

    /// The tracker as it stood when `report` was taken after `groups`
    /// groups, to continue it.
    pub(crate) fn resume(report: &MemoryReport, groups: u64) -> MemoryTracker {
        let replicas = report.replicas.len().max(1);
        let mut peaks = report.replicas.clone();
        peaks.resize(replicas, ReplicaPeaks::default());
        MemoryTracker {
            current: vec![MemoryBreakdown::default(); replicas],
            peaks,
            groups,
        }
    }

    /// Records a sample of `replica` in the current group.
    pub(crate) fn sample(&mut self, replica: usize, sample: MemoryBreakdown) {
        if let Some(current) = self.current.get_mut(replica)
            && sample.total() > current.total()
        {
            *current = sample;
        }
    }

    /// Closes the current group (after its update).
    pub(crate) fn end_group(&mut self) {
        for (peak, current) in self.peaks.iter_mut().zip(&mut self.current) {
            if self.groups == 0 {
                peak.first_group = *current;
            } else {
                peak.later_retained = peak.later_retained.max(current.retained);
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
    pub(crate) fn report(&self) -> MemoryReport {
        let all = || {
            self.peaks
                .iter()
                .flat_map(|p| std::iter::once(p.first_group).chain(p.later_groups))
        };
        MemoryReport {
            replicas: self.peaks.clone(),
            peak_bytes: all().map(|b| b.total()).max().unwrap_or(0),
            peak_activation_bytes: all().map(|b| b.activations).max().unwrap_or(0),
            peak_grows: self.peaks.iter().any(ReplicaPeaks::retains_more),
        }
    }
}

#[cfg(test)]
#[cfg(feature = "engine")]
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
    fn first_group_includes_the_first_update() {
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
    fn growth_across_groups_is_flagged() {
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

    #[test]
    fn optimizer_state_allocated_after_the_first_group_is_not_growth() {
        // The first group's update was skipped: no optimizer state yet. The
        // second group's applied update allocates it; the activation
        // workspace grows with a longer sequence. Nothing is retained.
        let mut t = MemoryTracker::new(1);
        t.sample(0, b(0, 0));
        t.end_group();
        t.sample(0, b(200, 0));
        t.end_group();
        t.sample(
            0,
            MemoryBreakdown {
                activations: 90,
                ..b(200, 0)
            },
        );
        t.end_group();
        let r = t.report();
        assert!(!r.peak_grows);
        assert_eq!(r.peak_bytes, 490, "the peak is still the largest total");
        assert_eq!(r.peak_activation_bytes, 90);
        // Memory retained from one microbatch to the next is growth, even
        // while the optimizer state stays the same.
        t.sample(0, b(200, 1));
        t.end_group();
        assert!(t.report().peak_grows);
    }

    /// An engine run of the fp16 fixture's kind: the loss scale starts far
    /// above what the gradients allow, so the first attempts overflow and
    /// are skipped before any optimizer state exists.
    fn fp16_run(retain_activations: bool) -> crate::report::RunReport {
        use crate::engine::{Engine, RunOptions};
        use crate::settings::{DataSection, EngineConfig, ModelSection, PrecisionMode};
        let mut config = EngineConfig {
            data: DataSection {
                examples: 64,
                min_len: 4,
                max_len: 12,
                vocab: 16,
                seed: 3,
                ..DataSection::default()
            },
            model: ModelSection {
                hidden: 16,
                ffn: 32,
            },
            ..EngineConfig::default()
        };
        config.precision.mode = PrecisionMode::Fp16;
        config.precision.loss_scale.init = 16_777_216.0;
        config.schedule.total = Some("8 updates".parse().expect("a span"));
        let plan = crate::plan::Plan::new(4, 2, 2).expect("a plan");
        let mut engine = Engine::new(plan, &config).expect("an engine");
        engine.mistakes.retain_activations = retain_activations;
        engine.run(&mut RunOptions::default()).expect("a run")
    }

    #[test]
    fn an_fp16_run_whose_first_updates_are_skipped_does_not_warn() {
        let report = fp16_run(false);
        assert!(report.updates[0].loss_scale > 65_536.0);
        assert!(!report.updates[0].applied, "the first attempt overflows");
        assert!(report.counters.skipped_updates > 0);
        let r0 = report.memory.replicas[0];
        let later = r0.later_groups.expect("more than one group");
        // The optimizer state came with the first applied update, after
        // the first group: the total grows, and that is no leak.
        assert_eq!(r0.first_group.optimizer_state, 0);
        assert!(later.optimizer_state > 0);
        assert!(later.total() > r0.first_group.total());
        assert_eq!((r0.first_group.retained, later.retained), (0, 0));
        assert!(!report.memory.peak_grows);
        assert!(
            report.warnings.iter().all(|w| !w.contains("memory")),
            "{:?}",
            report.warnings
        );
    }

    #[test]
    fn an_fp16_run_that_keeps_activations_still_warns() {
        let report = fp16_run(true);
        assert!(report.counters.skipped_updates > 0);
        let r0 = report.memory.replicas[0];
        assert!(r0.later_groups.expect("later groups").retained > r0.first_group.retained);
        assert!(report.memory.peak_grows);
        assert!(
            report
                .warnings
                .iter()
                .any(|w| w.contains("release losses and activations")),
            "{:?}",
            report.warnings
        );
    }
}
