//! Everything that can be wrong with a plan ([`PlanError`]), and how its
//! message states the equation with its numbers and the way out.

use std::fmt;

use super::replan::REPLAN_SEARCH;
use super::{Layout, Role};
use crate::units::{Overflow, UnitKind, group_digits};

/// Everything that can be wrong with a plan. Each message states the
/// equation with its numbers and the way out.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlanError {
    /// A factor that must be at least 1 is zero.
    Zero {
        /// The role that is zero.
        role: Role,
    },
    /// A required value is missing and cannot be solved for.
    Missing {
        /// The missing role.
        role: Role,
    },
    /// A product does not fit in 64 bits.
    Overflow {
        /// The product that overflowed, with its factors.
        equation: String,
    },
    /// `world_size` is not divisible by `tp·pp·cp` (R3).
    LayoutNotDivisible {
        /// Total devices.
        world_size: u64,
        /// Tensor-parallel degree.
        tensor: u64,
        /// Pipeline-parallel degree.
        pipeline: u64,
        /// Context-parallel degree.
        context: u64,
    },
    /// The declared global batch is not `m·A·D`.
    GlobalBatchMismatch {
        /// Declared global batch.
        global_batch: u64,
        /// Micro-batch.
        micro_batch: u64,
        /// Accumulation steps.
        accumulation: u64,
        /// Data-parallel replicas.
        replicas: u64,
    },
    /// Solving `A` (or `m`) from a global batch would need a fraction.
    GlobalBatchNotDivisible {
        /// Declared global batch.
        global_batch: u64,
        /// The role being solved for (`accumulation` or `micro_batch`).
        solving: Role,
        /// The known factor besides `D` (`m` when solving `A`, `A` when solving `m`).
        known: u64,
        /// Data-parallel replicas.
        replicas: u64,
    },
    /// A conversion to tokens needs a fixed sequence length (R15).
    NeedsSeqLen {
        /// The count that was to be converted.
        value: u64,
        /// Its unit.
        unit: UnitKind,
    },
    /// A count is not a whole number of updates and the rounding is exact.
    NotWholeUpdates {
        /// The count.
        value: u64,
        /// Its unit.
        unit: UnitKind,
        /// How many of `unit` make one update.
        per_update: u64,
    },
    /// The data ends in a partial group and the policy is `error` (R6).
    PartialGroup {
        /// Examples in the data.
        examples: u64,
        /// Examples per update `B`.
        effective_batch: u64,
        /// Examples left over after the full updates.
        remainder: u64,
    },
    /// `replan` was asked for a micro-batch of zero.
    ReplanZero,
    /// Re-planning would have to search the divisors of a per-replica
    /// batch too large to factor quickly, with no small micro-batch limit.
    ReplanTooLarge {
        /// `m·A`, the examples per replica per update.
        per_replica: u64,
        /// The largest micro-batch asked for.
        max_micro_batch: u64,
    },
    /// Both `replicas` and a layout were given, and they disagree.
    ReplicasDisagree {
        /// The replicas given directly.
        replicas: u64,
        /// The layout given as well.
        layout: Layout,
    },
}

fn fmt_num(value: u64) -> String {
    group_digits(value)
}

/// The nearest multiples of `step` below and above `value` (the lower one
/// omitted when it would be zero).
fn nearest_multiples(value: u64, step: u64) -> (Option<u64>, Option<u64>) {
    if step == 0 {
        return (None, None);
    }
    let below = value / step * step;
    let above = below.checked_add(step);
    ((below > 0).then_some(below), above)
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            PlanError::Zero { role } => write!(
                f,
                "{role} is 0; every factor of the plan must be at least 1 ({} = 0 would mean no examples per update)",
                role.symbol()
            ),
            PlanError::Missing { role } => match role {
                Role::MicroBatch => f.write_str(
                    "micro_batch is missing: give it, or give global_batch and accumulation so that it can be solved",
                ),
                Role::Accumulation => f.write_str(
                    "accumulation is missing: give it, or give global_batch so that it can be solved as global_batch / (micro_batch × replicas)",
                ),
                Role::Replicas => f.write_str(
                    "replicas is missing: give replicas (data-parallel copies), or world_size with tensor/pipeline/context degrees",
                ),
                other => write!(f, "{other} is missing"),
            },
            PlanError::Overflow { ref equation } => {
                write!(f, "{equation} does not fit in a 64-bit count; use smaller values")
            }
            PlanError::LayoutNotDivisible {
                world_size,
                tensor,
                pipeline,
                context,
            } => {
                let group = tensor.saturating_mul(pipeline).saturating_mul(context);
                write!(
                    f,
                    "world_size {world_size} is not divisible by tensor {tensor} × pipeline {pipeline} × context {context} = {group}: \
                     devices that share one model copy do not multiply the batch"
                )?;
                match nearest_multiples(world_size, group) {
                    (Some(lo), Some(hi)) => write!(
                        f,
                        "; use world_size {lo} ({}) or {hi} ({})",
                        replicas_noun(lo / group),
                        replicas_noun(hi / group)
                    ),
                    (None, Some(hi)) => {
                        write!(f, "; use world_size {hi} ({})", replicas_noun(hi / group))
                    }
                    _ => Ok(()),
                }
            }
            PlanError::GlobalBatchMismatch {
                global_batch,
                micro_batch,
                accumulation,
                replicas,
            } => {
                let product = micro_batch
                    .saturating_mul(accumulation)
                    .saturating_mul(replicas);
                write!(
                    f,
                    "global_batch {} ≠ micro_batch {micro_batch} × accumulation {accumulation} × replicas {replicas} = {}",
                    fmt_num(global_batch),
                    fmt_num(product)
                )?;
                let step = micro_batch.saturating_mul(replicas);
                if step != 0 && global_batch % step == 0 {
                    write!(
                        f,
                        "; use accumulation {} to keep global_batch {}, or global_batch {}",
                        global_batch / step,
                        fmt_num(global_batch),
                        fmt_num(product)
                    )
                } else {
                    write!(
                        f,
                        "; {} is not a multiple of m·D = {}",
                        fmt_num(global_batch),
                        fmt_num(step)
                    )?;
                    suggest_globals(f, global_batch, step, "accumulation")
                }
            }
            PlanError::GlobalBatchNotDivisible {
                global_batch,
                solving,
                known,
                replicas,
            } => {
                let (known_role, step) = match solving {
                    Role::MicroBatch => ("accumulation", known.saturating_mul(replicas)),
                    _ => ("micro_batch", known.saturating_mul(replicas)),
                };
                write!(
                    f,
                    "cannot solve {solving}: global_batch {} is not a multiple of {known_role} {known} × replicas {replicas} = {}",
                    fmt_num(global_batch),
                    fmt_num(step)
                )?;
                suggest_globals(f, global_batch, step, solving.key())
            }
            PlanError::NeedsSeqLen { value, unit } => write!(
                f,
                "{value} {unit} cannot be converted to or from tokens without a fixed seq_len; \
                 set seq_len, or count tokens from the data (variable or packed lengths need token accounting, R15)"
            ),
            PlanError::NotWholeUpdates {
                value,
                unit,
                per_update,
            } => {
                write!(
                    f,
                    "{} {unit} is not a whole number of updates (one update = {} {unit})",
                    fmt_num(value),
                    fmt_num(per_update)
                )?;
                match nearest_multiples(value, per_update) {
                    (Some(lo), Some(hi)) => write!(
                        f,
                        "; use {} or {} {unit}, or choose rounding up or down",
                        fmt_num(lo),
                        fmt_num(hi)
                    ),
                    (None, Some(hi)) => write!(
                        f,
                        "; use {} {unit}, or choose rounding up or down",
                        fmt_num(hi)
                    ),
                    _ => Ok(()),
                }
            }
            PlanError::PartialGroup {
                examples,
                effective_batch,
                remainder,
            } => write!(
                f,
                "{} examples = {} full updates of {} examples + a partial group of {} examples, and last_group is \"error\"; \
                 use last_group \"process\" (real denominator) or \"drop\" (ids recorded), or {} examples",
                fmt_num(examples),
                fmt_num(examples / effective_batch.max(1)),
                fmt_num(effective_batch),
                fmt_num(remainder),
                fmt_num(examples - remainder),
            ),
            PlanError::ReplanZero => {
                f.write_str("the largest micro-batch must be at least 1 example")
            }
            PlanError::ReplanTooLarge {
                per_replica,
                max_micro_batch,
            } => write!(
                f,
                "m·A = {per_replica} examples per replica is too large to search for divisors up to \
                 {max_micro_batch}; give a smaller limit (at most {REPLAN_SEARCH}) or choose the \
                 micro-batch yourself: it must divide {per_replica}"
            ),
            PlanError::ReplicasDisagree { replicas, layout } => write!(
                f,
                "replicas {replicas} disagrees with world_size {} / (tensor {} × pipeline {} × context {}) = {}; \
                 give either replicas or the layout, not both",
                layout.world_size,
                layout.tensor,
                layout.pipeline,
                layout.context,
                layout.replicas().map_or_else(|e| e.to_string(), |d| d.to_string()),
            ),
        }
    }
}

fn replicas_noun(n: u64) -> String {
    if n == 1 {
        "1 replica".to_owned()
    } else {
        format!("{n} replicas")
    }
}

fn suggest_globals(
    f: &mut fmt::Formatter<'_>,
    global_batch: u64,
    step: u64,
    solved: &str,
) -> fmt::Result {
    match nearest_multiples(global_batch, step) {
        (Some(lo), Some(hi)) => write!(
            f,
            ": use global_batch {} ({solved} {}) or {} ({solved} {})",
            fmt_num(lo),
            lo / step,
            fmt_num(hi),
            hi / step
        ),
        (None, Some(hi)) => write!(
            f,
            ": use global_batch {} ({solved} {})",
            fmt_num(hi),
            hi / step
        ),
        _ => Ok(()),
    }
}

impl std::error::Error for PlanError {}

impl From<Overflow> for PlanError {
    fn from(err: Overflow) -> Self {
        PlanError::Overflow {
            equation: err.operation,
        }
    }
}
