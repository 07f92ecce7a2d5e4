//! What a configuration type adds to the generic sheet (its sheet hook):
//! the inputs every part of the sheet reads, apart from the configuration
//! and the run report.

use accum_core::plan::Epoch;
use accum_core::settings::ScheduleSection;

use super::Table;

/// What a configuration type adds to the generic sheet (its sheet hook).
#[derive(Clone, Debug, Default)]
pub(crate) struct Extras {
    /// The run's name; the file stem when absent.
    pub(crate) name: Option<String>,
    /// Free text about the run.
    pub(crate) notes: Option<String>,
    /// Tables after the plan and the lengths.
    pub(crate) tables: Vec<Table>,
    /// Expected supervised tokens per update of the (final) plan when
    /// lengths vary (the engine counts the real ones), for converting token
    /// spans.
    pub(crate) expected_tokens_per_update: Option<u64>,
    /// The learning-rate schedule, drawn over the whole run.
    pub(crate) schedule: Option<LrSchedule>,
    /// How one pass over the data splits into updates.
    pub(crate) epoch: Option<Epoch>,
    /// The gradient-clipping threshold, drawn on the gradient norm.
    pub(crate) clip_norm: Option<f64>,
}

/// A configured learning-rate schedule: its section and peak rate.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LrSchedule {
    /// Shape, warmup and total, in any unit.
    pub(crate) section: ScheduleSection,
    /// The peak learning rate the shape scales.
    pub(crate) peak_lr: f64,
}
