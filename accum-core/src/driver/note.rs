//! What a run did that its lengths did not say: the conversions that
//! rounded, as the driver saw them on the real groups.

use std::fmt;

use crate::span::Span;
use crate::units::{Updates, group_digits};

/// Something the run did that its declared lengths do not say, from
/// [`Driver::notes`](super::Driver::notes): the user sees it in the loop's
/// own log or report.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum DriverNote {
    /// The run was resumed under another global batch, by consent
    /// ([`DriverBuilder::allow_global_batch_change`](super::DriverBuilder::allow_global_batch_change)):
    /// the updates after `update` average another number of examples.
    GlobalBatchChanged {
        /// Applied updates before the change.
        update: Updates,
        /// `B` of the next update under the saved plan.
        from: u64,
        /// `B` under the resumed plan.
        to: u64,
    },
    /// Some applied updates had the partial last group of an epoch
    /// (`last_group = "process"`): fewer examples than `B`
    /// (`accum::plan::partial-group`).
    PartialGroups {
        /// Applied updates with a partial group.
        updates: u64,
        /// Examples those updates had fewer than full groups.
        short: u64,
    },
    /// Partial groups were dropped (`last_group = "drop"`): their examples
    /// were not trained on in that epoch.
    DroppedGroups {
        /// Groups dropped.
        groups: usize,
        /// Their examples.
        examples: usize,
    },
    /// The run's length, in a unit other than updates, was reached inside
    /// an update: the run trained a little more than it.
    TotalOvershot {
        /// The run's length as given.
        total: Span,
        /// The count of its unit the run ended at.
        reached: u64,
        /// The update that reached it.
        update: Updates,
    },
    /// The run ended before its schedule's warmup did: the learning rate
    /// never reached its peak.
    WarmupUnfinished {
        /// The warmup as written.
        warmup: Span,
        /// The run's length.
        total: Span,
        /// The peak rate's fraction the last update ran at.
        reached: f64,
    },
}

impl fmt::Display for DriverNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DriverNote::GlobalBatchChanged { update, from, to } => write!(
                f,
                "the run was resumed after update {} with global batch {} instead of {} \
                 (allow_global_batch_change): the updates after it average another number of examples",
                group_digits(update.get()),
                group_digits(*to),
                group_digits(*from)
            ),
            DriverNote::PartialGroups { updates, short } => write!(
                f,
                "{} update(s) trained on the partial last group of an epoch, {} examples fewer than full groups \
                 (last_group = \"process\"); a length in updates is that many examples shorter",
                group_digits(*updates),
                group_digits(*short)
            ),
            DriverNote::DroppedGroups { groups, examples } => write!(
                f,
                "{groups} partial group(s) of {} examples were dropped at the end of an epoch (last_group = \"drop\")",
                group_digits(*examples as u64)
            ),
            DriverNote::TotalOvershot {
                total,
                reached,
                update,
            } => write!(
                f,
                "the run's length of {total} was reached inside update {}: it trained {} {}",
                group_digits(update.get()),
                group_digits(*reached),
                total.unit().plural()
            ),
            DriverNote::WarmupUnfinished {
                warmup,
                total,
                reached,
            } => write!(
                f,
                "the run of {total} ended before the warmup of {warmup}: the learning rate reached {:.3} of its peak; \
                 shorten the warmup or lengthen the run",
                reached
            ),
        }
    }
}
