//! The run report: everything a run sheet (R13) needs, serde-serializable
//! with stable keys — counters in named units (R1), per-update statistics,
//! the loss curve against its declared axis, memory peaks (R11) and dropped
//! example ids (R6).

use serde::{Deserialize, Serialize};

use crate::memory::MemoryReport;
use crate::plan::{LastGroup, Plan};
use crate::settings::{LogAxis, Normalization, OptimizerKind, PrecisionMode};
use crate::units::{Examples, Microbatches, Tokens, Updates};

/// JSON has no NaN or infinity: such values are written as `null` and read
/// back as NaN, so a report with a skipped attempt still round-trips.
mod non_finite_as_null {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
        if value.is_finite() {
            serializer.serialize_f64(*value)
        } else {
            serializer.serialize_none()
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(deserializer)?.unwrap_or(f64::NAN))
    }
}

/// The format tag of [`RunReport`] JSON.
pub const REPORT_FORMAT: &str = "accum-run/1";

/// The plan a run used, as plain numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanSummary {
    /// `m`.
    pub micro_batch: u64,
    /// `A`.
    pub accumulation: u64,
    /// `D`.
    pub replicas: u64,
    /// `B = m·A·D`.
    pub effective_batch: u64,
    /// `L`, when fixed.
    pub seq_len: Option<u64>,
}

impl From<&Plan> for PlanSummary {
    fn from(plan: &Plan) -> Self {
        PlanSummary {
            micro_batch: plan.micro_batch(),
            accumulation: plan.accumulation(),
            replicas: plan.replicas(),
            effective_batch: plan.effective_batch().get(),
            seq_len: plan.seq_len(),
        }
    }
}

/// Counters of the whole run (R1, R7, R8). An attempt that was skipped is
/// not an update.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    /// Microbatches over all replicas.
    pub microbatches: Microbatches,
    /// Backward passes over all replicas (one per microbatch).
    pub backward_passes: u64,
    /// Update attempts (groups completed).
    pub update_attempts: u64,
    /// Applied optimizer updates.
    pub applied_updates: Updates,
    /// Attempts skipped for non-finite gradients.
    pub skipped_updates: u64,
    /// Examples processed, over all replicas.
    pub examples: Examples,
    /// Supervised tokens processed, over all replicas.
    pub supervised_tokens: Tokens,
    /// Scheduler steps (R8: equal to applied updates).
    pub scheduler_steps: Updates,
    /// Gradient reductions across replicas (one per attempt, R9, R17).
    pub grad_reductions: u64,
    /// Gradient zeroings per replica (one per attempt, after it, R2).
    pub grad_zeroings: u64,
    /// Examples dropped by the last-group policy (R6).
    pub dropped_examples: Examples,
    /// Epochs started.
    pub epochs: u64,
}

/// Counters of one replica.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplicaCounters {
    /// Microbatches this replica processed.
    pub microbatches: Microbatches,
    /// Backward passes this replica ran.
    pub backward_passes: u64,
    /// Examples this replica processed.
    pub examples: Examples,
    /// Supervised tokens this replica processed.
    pub supervised_tokens: Tokens,
}

/// One update attempt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UpdateStats {
    /// Attempt number, 1-based.
    pub attempt: u64,
    /// Epoch of the group, 0-based.
    pub epoch: u64,
    /// Whether the parameters changed (false: skipped, non-finite).
    pub applied: bool,
    /// Applied updates after this attempt.
    pub updates: Updates,
    /// The group's normalized loss (`null` in JSON when not finite).
    #[serde(with = "non_finite_as_null")]
    pub loss: f64,
    /// The group's denominator (supervised tokens, examples or 1).
    pub denominator: f64,
    /// Examples in the group.
    pub examples: Examples,
    /// Supervised tokens in the group.
    pub tokens: Tokens,
    /// Microbatches in the group, over all replicas.
    pub microbatches: Microbatches,
    /// Whether this was a last partial group (R6).
    pub partial: bool,
    /// Learning rate used (0 when skipped).
    pub lr: f64,
    /// Global gradient norm, unscaled, before clipping (`null` in JSON when
    /// not finite, as for a skipped attempt).
    #[serde(with = "non_finite_as_null")]
    pub grad_norm: f64,
    /// Whether clipping changed the gradient.
    pub clipped: bool,
    /// Loss scale during the group (1 unless fp16).
    pub loss_scale: f64,
}

/// One point of the loss curve.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    /// Position on the declared axis (updates, examples or tokens).
    pub x: u64,
    /// The group's normalized loss.
    #[serde(with = "non_finite_as_null")]
    pub loss: f64,
}

/// The loss curve against a declared axis (R1).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LossCurve {
    /// The x axis.
    pub axis: LogAxis,
    /// Points, one per log interval.
    pub points: Vec<CurvePoint>,
}

/// Examples a last partial group dropped (R6).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DroppedGroup {
    /// Epoch, 0-based.
    pub epoch: u64,
    /// Example ids, in data order.
    pub ids: Vec<u64>,
}

/// Everything a run observed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    /// Always [`REPORT_FORMAT`].
    pub format: String,
    /// The plan.
    pub plan: PlanSummary,
    /// Model dimensions (`{"kind", "vocab", "hidden", "ffn"}` for the reference model).
    pub model: serde_json::Value,
    /// Precision mode.
    pub precision: PrecisionMode,
    /// Whether dynamic loss scaling was on (fp16 only).
    pub loss_scaling: bool,
    /// Loss normalization.
    pub normalization: Normalization,
    /// Last-group policy.
    pub last_group: LastGroup,
    /// Optimizer kind.
    pub optimizer: OptimizerKind,
    /// Scheduled length of the run, in updates.
    pub total_updates: Updates,
    /// Warmup, in updates.
    pub warmup_updates: Updates,
    /// Examples in one epoch of the data.
    pub data_examples: Examples,
    /// Supervised tokens in one epoch of the data.
    pub data_tokens: Tokens,
    /// Whole-run counters.
    pub counters: Counters,
    /// Counters per replica, in rank order.
    pub replicas: Vec<ReplicaCounters>,
    /// Every update attempt.
    pub updates: Vec<UpdateStats>,
    /// The loss curve at the log interval.
    pub loss_curve: LossCurve,
    /// Memory peaks (R11).
    pub memory: MemoryReport,
    /// Dropped examples by epoch (R6).
    pub dropped: Vec<DroppedGroup>,
    /// Whether the run was stopped before its total (at a group boundary).
    pub stopped_early: bool,
    /// Findings a reader should see (for example a memory peak that grows).
    pub warnings: Vec<String>,
}

impl RunReport {
    /// The report as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a run report always serializes")
    }
}
