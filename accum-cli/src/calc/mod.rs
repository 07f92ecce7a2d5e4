//! The effective-batch calculator behind `accum calc` (`accum::calc::tokens`):
//! a plan from flags, with an optional batch ramp-up shown stage by stage,
//! lengths in every unit, per-device memory (`accum::run::memory`) and
//! data-parallel scaling (`accum::calc::scaling`) estimates.
//!
//! [`compute`] turns the parsed flags into a [`CalcReport`], the JSON
//! document of `--format json`; [`render_text`] writes the same report for
//! people. The command only parses and hands off.

use accum_core::Span;
use accum_core::estimate::{MemoryEstimate, ScalingPoint};
use accum_core::plan::{Layout, Role};
use serde::Serialize;

mod compute;
mod render;

pub(crate) use compute::{compute, scaling_note};
pub(crate) use render::render_text;

/// The JSON document of `accum calc --format json`. Keys are stable.
#[derive(Debug, Serialize)]
pub(crate) struct CalcReport {
    micro_batch: u64,
    accumulation: u64,
    replicas: u64,
    effective_batch: u64,
    seq_len: Option<u64>,
    tokens_per_update: Option<u64>,
    examples_per_replica_per_update: u64,
    tokens_per_replica_per_update: Option<u64>,
    microbatches_per_update: u64,
    layout: Option<Layout>,
    solved: Option<Role>,
    formula: Formulas,
    memory: Option<MemoryEstimate>,
    scaling: Option<Vec<ScalingPoint>>,
    /// The stages of a batch ramp-up (`--stage`, `--ramp`), the last one at
    /// the full batch above.
    stages: Option<Vec<StageReport>>,
    /// What the stages before the full batch consume.
    ramp_up: Option<Amounts>,
    /// The run's length (`--total`) in every unit, through the stages.
    run: Option<RunLength>,
    /// Each `--span` in every unit, through the stages.
    spans: Vec<SpanReport>,
}

/// One stage of a ramp-up. Keys are stable.
#[derive(Debug, Serialize)]
struct StageReport {
    /// The stage, counted from 1.
    stage: usize,
    /// The index of its first update (0-based: the updates before it).
    start_update: u64,
    global_batch: u64,
    accumulation: u64,
    tokens_per_update: Option<u64>,
    /// Examples and tokens consumed before the stage.
    examples_before: u64,
    tokens_before: Option<u64>,
    /// Whether this is the last stage, which lasts to the end of the run.
    to_the_end: bool,
    /// What the stage lasts; for the last one, up to the run's end when
    /// `--total` is given, else nothing.
    lasts: Option<Amounts>,
}

/// A length in updates, examples and tokens.
#[derive(Debug, Serialize)]
struct Amounts {
    updates: u64,
    examples: u64,
    tokens: Option<u64>,
}

/// The run's length through the stages.
#[derive(Debug, Serialize)]
struct RunLength {
    /// As given.
    length: Span,
    /// In whole updates (a partial update counts).
    updates: u64,
    examples: u64,
    tokens: Option<u64>,
    /// The stage (from 1) of the run's last update.
    ends_in_stage: usize,
}

/// The formulas behind the figures, with the numbers.
#[derive(Debug, Serialize)]
struct Formulas {
    effective_batch: String,
    tokens_per_update: Option<String>,
    replicas: Option<String>,
    solved: Option<String>,
}

/// One length in every unit. Keys are stable.
#[derive(Debug, Serialize)]
struct SpanReport {
    /// As given.
    length: Span,
    /// Whole updates (a partial update counts as one; see `rounded`).
    updates: u64,
    /// Microbatches of one replica (`A` per update, stage by stage).
    microbatches: u64,
    examples: u64,
    /// Without a fixed sequence length, unknown.
    tokens: Option<u64>,
    /// Whether the length is not a whole number of updates, so that the
    /// other units are those of the updates it ends in.
    rounded: bool,
}

impl CalcReport {
    /// Whether the report has a scaling estimate.
    pub(crate) fn has_scaling(&self) -> bool {
        self.scaling.is_some()
    }
}
