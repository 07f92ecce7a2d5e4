//! Everything that can be wrong with a plan ([`PlanError`]) as data: its
//! [`Code`], the [`Role`] of the value to change, a message that states the
//! equation with its numbers, a short label for the value, and the [`Fix`]
//! with the values that would pass. `Display` joins message and fix for logs;
//! front ends render the parts.

use std::fmt;

use serde::Serialize;

use super::replan::REPLAN_SEARCH;
use super::{Layout, Role};
use crate::code::Code;
use crate::units::{Overflow, UnitKind, group_digits};

/// The way out of a problem: a sentence, and the plan values that realize
/// it, when it is a matter of plan values.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Fix {
    /// What to do: `use global_batch 28 (accumulation 7) or 32 (accumulation 8)`.
    pub text: String,
    /// The alternatives the text names, in its order; each is a set of plan
    /// values that pass together. Empty when the fix is not a plan value
    /// (give a missing value, choose a rounding).
    pub options: Vec<Vec<Edit>>,
}

impl Fix {
    /// A fix that is a sentence only.
    pub fn text(text: impl Into<String>) -> Fix {
        Fix {
            text: text.into(),
            options: Vec::new(),
        }
    }

    /// A fix with the plan values that realize it.
    pub fn with_options(text: impl Into<String>, options: Vec<Vec<Edit>>) -> Fix {
        Fix {
            text: text.into(),
            options,
        }
    }
}

/// One plan value of a [`Fix`]: set `role` to `value`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Edit {
    /// The role whose value changes.
    pub role: Role,
    /// The new value.
    pub value: u64,
}

impl Edit {
    /// Set `role` to `value`.
    pub const fn new(role: Role, value: u64) -> Edit {
        Edit { role, value }
    }
}

/// Everything that can be wrong with a plan. Each message states the
/// equation with its numbers and the way out.
#[derive(Clone, PartialEq, Eq)]
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
    /// `world_size` is not divisible by `tp·pp·cp` (`accum::plan::global-batch`).
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
    /// The declared global batch is not a multiple of the factors that are
    /// known, so no value of the others gives `B = m·A·D`. Found by
    /// validation when another factor is itself wrong.
    GlobalBatchNotMultiple {
        /// Declared global batch.
        global_batch: u64,
        /// The known factors, with their roles, in plan order.
        factors: Vec<(Role, u64)>,
    },
    /// A conversion from or to tokens needs the tokens of one update,
    /// `T = B·L`, so a fixed sequence length (`accum::calc::tokens`).
    NeedsSeqLen {
        /// The count that was to be converted.
        value: u64,
        /// Its unit.
        unit: UnitKind,
        /// The unit it was to be converted to; one of `unit` and `to` is
        /// tokens.
        to: UnitKind,
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
    /// The data ends in a partial group and the policy is `error` (`accum::plan::partial-group`).
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

fn replicas_noun(n: u64) -> String {
    if n == 1 {
        "1 replica".to_owned()
    } else {
        format!("{n} replicas")
    }
}

/// `"accumulation 8 × replicas 2 = 16"`, or `"accumulation 8"` alone.
fn factors_text(factors: &[(Role, u64)]) -> String {
    let parts: Vec<String> = factors
        .iter()
        .map(|(role, value)| format!("{role} {}", group_digits(*value)))
        .collect();
    match factors {
        [_] => parts.concat(),
        _ => format!(
            "{} = {}",
            parts.join(" × "),
            group_digits(product_of(factors))
        ),
    }
}

fn product_of(factors: &[(Role, u64)]) -> u64 {
    factors
        .iter()
        .fold(1u64, |acc, (_, value)| acc.saturating_mul(*value))
}

/// The global batches nearest to `global_batch` that are multiples of
/// `step`, with the value of `solved` each gives.
fn global_options(global_batch: u64, step: u64, solved: Option<Role>) -> Fix {
    let (lo, hi) = nearest_multiples(global_batch, step);
    let choices: Vec<u64> = lo.into_iter().chain(hi).collect();
    let shown: Vec<String> = choices
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            let value = if i == 0 {
                format!("global_batch {}", group_digits(b))
            } else {
                group_digits(b)
            };
            match solved {
                Some(role) => format!("{value} ({role} {})", b / step),
                None => value,
            }
        })
        .collect();
    let options = choices
        .iter()
        .map(|&b| {
            let mut edits = vec![Edit::new(Role::GlobalBatch, b)];
            if let Some(role) = solved {
                edits.push(Edit::new(role, b / step));
            }
            edits
        })
        .collect();
    Fix::with_options(format!("use {}", shown.join(" or ")), options)
}

impl PlanError {
    /// The stable code of the rule (`accum::plan::global-batch`).
    pub fn code(&self) -> Code {
        match self {
            PlanError::Zero { .. } => Code::Zero,
            PlanError::Missing { .. } => Code::Missing,
            PlanError::Overflow { .. } => Code::Overflow,
            PlanError::LayoutNotDivisible { .. } => Code::Layout,
            PlanError::GlobalBatchMismatch { .. }
            | PlanError::GlobalBatchNotDivisible { .. }
            | PlanError::GlobalBatchNotMultiple { .. } => Code::GlobalBatch,
            PlanError::NeedsSeqLen { .. } => Code::SeqLen,
            PlanError::NotWholeUpdates { .. } => Code::WholeUpdates,
            PlanError::PartialGroup { .. } => Code::PartialGroup,
            PlanError::ReplanZero | PlanError::ReplanTooLarge { .. } => Code::Replan,
            PlanError::ReplicasDisagree { .. } => Code::Replicas,
        }
    }

    /// The role of the value to change, when the error is about one.
    pub fn role(&self) -> Option<Role> {
        match *self {
            PlanError::Zero { role } | PlanError::Missing { role } => Some(role),
            PlanError::LayoutNotDivisible { .. } => Some(Role::WorldSize),
            PlanError::GlobalBatchMismatch { .. }
            | PlanError::GlobalBatchNotDivisible { .. }
            | PlanError::GlobalBatchNotMultiple { .. } => Some(Role::GlobalBatch),
            PlanError::NeedsSeqLen { .. } => Some(Role::SeqLen),
            PlanError::ReplicasDisagree { .. } => Some(Role::Replicas),
            PlanError::Overflow { .. }
            | PlanError::NotWholeUpdates { .. }
            | PlanError::PartialGroup { .. }
            | PlanError::ReplanZero
            | PlanError::ReplanTooLarge { .. } => None,
        }
    }

    /// The other plan values that take part, with their roles: the factors
    /// of the equation the message states.
    pub fn factors(&self) -> Vec<(Role, u64)> {
        match self {
            PlanError::LayoutNotDivisible {
                tensor,
                pipeline,
                context,
                ..
            } => vec![
                (Role::TensorParallel, *tensor),
                (Role::PipelineParallel, *pipeline),
                (Role::ContextParallel, *context),
            ],
            PlanError::GlobalBatchMismatch {
                micro_batch,
                accumulation,
                replicas,
                ..
            } => vec![
                (Role::MicroBatch, *micro_batch),
                (Role::Accumulation, *accumulation),
                (Role::Replicas, *replicas),
            ],
            PlanError::GlobalBatchNotDivisible {
                solving,
                known,
                replicas,
                ..
            } => vec![
                (solving_partner(*solving), *known),
                (Role::Replicas, *replicas),
            ],
            PlanError::GlobalBatchNotMultiple { factors, .. } => factors.clone(),
            PlanError::ReplicasDisagree { layout, .. } => vec![
                (Role::WorldSize, layout.world_size),
                (Role::TensorParallel, layout.tensor),
                (Role::PipelineParallel, layout.pipeline),
                (Role::ContextParallel, layout.context),
            ],
            _ => Vec::new(),
        }
    }

    /// What is wrong, with the equation and its numbers.
    pub fn message(&self) -> String {
        match self {
            PlanError::Zero { role } => {
                format!("{role} is 0, and every factor of the plan must be at least 1")
            }
            PlanError::Missing { role } => format!("{role} is missing"),
            PlanError::Overflow { equation } => {
                format!("{equation} does not fit in a 64-bit count")
            }
            &PlanError::LayoutNotDivisible {
                world_size,
                tensor,
                pipeline,
                context,
            } => {
                let group = tensor.saturating_mul(pipeline).saturating_mul(context);
                format!(
                    "world_size {world_size} is not divisible by tensor {tensor} × pipeline {pipeline} × context {context} = {group}: \
                     devices that share one model copy do not multiply the batch"
                )
            }
            &PlanError::GlobalBatchMismatch {
                global_batch,
                micro_batch,
                accumulation,
                replicas,
            } => {
                let product = micro_batch
                    .saturating_mul(accumulation)
                    .saturating_mul(replicas);
                let mut text = format!(
                    "global_batch {} ≠ micro_batch {micro_batch} × accumulation {accumulation} × replicas {replicas} = {}",
                    group_digits(global_batch),
                    group_digits(product)
                );
                let step = micro_batch.saturating_mul(replicas);
                if step != 0 && !global_batch.is_multiple_of(step) {
                    text.push_str(&format!(
                        "; {} is not a multiple of m·D = {}",
                        group_digits(global_batch),
                        group_digits(step)
                    ));
                }
                text
            }
            &PlanError::GlobalBatchNotDivisible {
                global_batch,
                solving,
                known,
                replicas,
            } => format!(
                "cannot solve {solving}: global_batch {} is not a multiple of {} {known} × replicas {replicas} = {}",
                group_digits(global_batch),
                solving_partner(solving),
                group_digits(known.saturating_mul(replicas))
            ),
            PlanError::GlobalBatchNotMultiple {
                global_batch,
                factors,
            } => format!(
                "global_batch {} is not a multiple of {}, so no value of the other factors gives B = m·A·D",
                group_digits(*global_batch),
                factors_text(factors)
            ),
            PlanError::NeedsSeqLen { value, unit, to } => {
                let count = format!(
                    "{} {}",
                    group_digits(*value),
                    if *value == 1 {
                        unit.singular()
                    } else {
                        unit.plural()
                    }
                );
                let what = if *unit == UnitKind::Token {
                    format!("{count} cannot be converted to {to}")
                } else {
                    format!("{count} cannot be counted in tokens")
                };
                format!(
                    "{what}: without a fixed seq_len the tokens of an update (T = B·L) are unknown"
                )
            }
            PlanError::NotWholeUpdates {
                value,
                unit,
                per_update,
            } => format!(
                "{} {unit} is not a whole number of updates (one update = {} {unit})",
                group_digits(*value),
                group_digits(*per_update)
            ),
            &PlanError::PartialGroup {
                examples,
                effective_batch,
                remainder,
            } => format!(
                "{} examples = {} full updates of {} examples + a partial group of {} examples, and last_group is \"error\"",
                group_digits(examples),
                group_digits(examples / effective_batch.max(1)),
                group_digits(effective_batch),
                group_digits(remainder),
            ),
            PlanError::ReplanZero => {
                "the largest micro-batch must be at least 1 example".to_owned()
            }
            PlanError::ReplanTooLarge {
                per_replica,
                max_micro_batch,
            } => format!(
                "m·A = {per_replica} examples per replica is too large to search for divisors up to {max_micro_batch}"
            ),
            PlanError::ReplicasDisagree { replicas, layout } => format!(
                "replicas {replicas} disagrees with world_size {} / (tensor {} × pipeline {} × context {}) = {}",
                layout.world_size,
                layout.tensor,
                layout.pipeline,
                layout.context,
                layout
                    .replicas()
                    .map_or_else(|e| e.message(), |d| d.to_string()),
            ),
        }
    }

    /// A short label for the value itself, for a line under it.
    pub fn label(&self) -> String {
        match self {
            PlanError::Zero { .. } => "must be at least 1".to_owned(),
            PlanError::Missing { .. } => "missing".to_owned(),
            PlanError::Overflow { .. } => "product overflows".to_owned(),
            PlanError::LayoutNotDivisible { .. } => "not divisible by tp·pp·cp".to_owned(),
            &PlanError::GlobalBatchMismatch {
                micro_batch,
                accumulation,
                replicas,
                ..
            } => format!(
                "≠ {micro_batch} × {accumulation} × {replicas} = {}",
                group_digits(
                    micro_batch
                        .saturating_mul(accumulation)
                        .saturating_mul(replicas)
                )
            ),
            PlanError::GlobalBatchNotDivisible { solving, .. } => match solving {
                Role::MicroBatch => "not a multiple of A·D".to_owned(),
                _ => "not a multiple of m·D".to_owned(),
            },
            PlanError::GlobalBatchNotMultiple { factors, .. } => {
                format!("not a multiple of {}", group_digits(product_of(factors)))
            }
            PlanError::NeedsSeqLen { .. } => "needs a fixed seq_len".to_owned(),
            PlanError::NotWholeUpdates { .. } => "not a whole number of updates".to_owned(),
            PlanError::PartialGroup { .. } => "ends in a partial group".to_owned(),
            PlanError::ReplanZero => "must be at least 1".to_owned(),
            PlanError::ReplanTooLarge { .. } => "too large to search".to_owned(),
            PlanError::ReplicasDisagree { .. } => "disagrees with the layout".to_owned(),
        }
    }

    /// The way out, with the plan values that realize it.
    pub fn fix(&self) -> Fix {
        match self {
            &PlanError::Zero { role } => Fix::with_options(
                format!("set {role} to 1 or more"),
                vec![vec![Edit::new(role, 1)]],
            ),
            PlanError::Missing { role } => Fix::text(match role {
                Role::MicroBatch => {
                    "give micro_batch, or give global_batch and accumulation so that it can be solved"
                }
                Role::Accumulation => {
                    "give accumulation, or give global_batch so that it can be solved as global_batch / (micro_batch × replicas)"
                }
                Role::Replicas => {
                    "give replicas (data-parallel copies), or world_size with its tensor/pipeline/context degrees"
                }
                _ => "give it",
            }),
            PlanError::Overflow { .. } => Fix::text("use smaller values"),
            &PlanError::LayoutNotDivisible {
                world_size,
                tensor,
                pipeline,
                context,
            } => {
                let group = tensor.saturating_mul(pipeline).saturating_mul(context);
                let (lo, hi) = nearest_multiples(world_size, group);
                let choices: Vec<u64> = lo.into_iter().chain(hi).collect();
                let shown: Vec<String> = choices
                    .iter()
                    .enumerate()
                    .map(|(i, &w)| {
                        let noun = replicas_noun(w / group);
                        if i == 0 {
                            format!("world_size {w} ({noun})")
                        } else {
                            format!("{w} ({noun})")
                        }
                    })
                    .collect();
                Fix::with_options(
                    format!("use {}", shown.join(" or ")),
                    choices
                        .iter()
                        .map(|&w| vec![Edit::new(Role::WorldSize, w)])
                        .collect(),
                )
            }
            &PlanError::GlobalBatchMismatch {
                global_batch,
                micro_batch,
                accumulation,
                replicas,
            } => {
                let product = micro_batch
                    .saturating_mul(accumulation)
                    .saturating_mul(replicas);
                let step = micro_batch.saturating_mul(replicas);
                if step != 0 && global_batch.is_multiple_of(step) {
                    Fix::with_options(
                        format!(
                            "use accumulation {} to keep global_batch {}, or global_batch {}",
                            global_batch / step,
                            group_digits(global_batch),
                            group_digits(product)
                        ),
                        vec![
                            vec![Edit::new(Role::Accumulation, global_batch / step)],
                            vec![Edit::new(Role::GlobalBatch, product)],
                        ],
                    )
                } else {
                    global_options(global_batch, step, Some(Role::Accumulation))
                }
            }
            &PlanError::GlobalBatchNotDivisible {
                global_batch,
                solving,
                known,
                replicas,
            } => global_options(global_batch, known.saturating_mul(replicas), Some(solving)),
            PlanError::GlobalBatchNotMultiple {
                global_batch,
                factors,
            } => global_options(*global_batch, product_of(factors), None),
            PlanError::NeedsSeqLen { .. } => Fix::text(
                "set seq_len when every example has the same number of tokens; with variable or packed lengths, write the length in updates or examples, or let a run count the tokens of its data",
            ),
            &PlanError::NotWholeUpdates {
                value,
                unit,
                per_update,
            } => match nearest_multiples(value, per_update) {
                (Some(lo), Some(hi)) => Fix::text(format!(
                    "use {} or {} {unit}, or choose rounding up or down",
                    group_digits(lo),
                    group_digits(hi)
                )),
                (None, Some(hi)) => Fix::text(format!(
                    "use {} {unit}, or choose rounding up or down",
                    group_digits(hi)
                )),
                _ => Fix::text("choose rounding up or down"),
            },
            &PlanError::PartialGroup {
                examples,
                remainder,
                ..
            } => Fix::text(format!(
                "use last_group \"process\" (real denominator) or \"drop\" (ids recorded), or {} examples",
                group_digits(examples - remainder),
            )),
            PlanError::ReplanZero => Fix::text("give a limit of 1 or more"),
            PlanError::ReplanTooLarge { per_replica, .. } => Fix::text(format!(
                "give a smaller limit (at most {REPLAN_SEARCH}) or choose the micro-batch yourself: it must divide {per_replica}"
            )),
            PlanError::ReplicasDisagree { layout, .. } => match layout.replicas() {
                Ok(d) => Fix::with_options(
                    format!("give either replicas or the layout, not both, or set replicas to {d}"),
                    vec![vec![Edit::new(Role::Replicas, d)]],
                ),
                Err(_) => Fix::text("give either replicas or the layout, not both"),
            },
        }
    }
}

/// The factor besides `D` that is known when solving `solving`.
pub(super) const fn solving_partner(solving: Role) -> Role {
    match solving {
        Role::MicroBatch => Role::Accumulation,
        _ => Role::MicroBatch,
    }
}

impl fmt::Display for PlanError {
    /// The message, then the fix: `…; use global_batch 28 (accumulation 7) or 32 (accumulation 8)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}; {}", self.message(), self.fix().text)
    }
}

impl std::error::Error for PlanError {}

crate::code::debug_as_display!(PlanError);

impl From<Overflow> for PlanError {
    fn from(err: Overflow) -> Self {
        PlanError::Overflow {
            equation: err.operation,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples() -> Vec<PlanError> {
        vec![
            PlanError::Zero {
                role: Role::Accumulation,
            },
            PlanError::Missing {
                role: Role::Replicas,
            },
            PlanError::Overflow {
                equation: "micro_batch 2 × accumulation 18446744073709551615".to_owned(),
            },
            PlanError::LayoutNotDivisible {
                world_size: 64,
                tensor: 3,
                pipeline: 2,
                context: 1,
            },
            PlanError::GlobalBatchMismatch {
                global_batch: 28,
                micro_batch: 2,
                accumulation: 8,
                replicas: 2,
            },
            PlanError::GlobalBatchMismatch {
                global_batch: 30,
                micro_batch: 2,
                accumulation: 8,
                replicas: 2,
            },
            PlanError::GlobalBatchNotDivisible {
                global_batch: 30,
                solving: Role::MicroBatch,
                known: 4,
                replicas: 2,
            },
            PlanError::GlobalBatchNotMultiple {
                global_batch: 30,
                factors: vec![(Role::Accumulation, 8), (Role::Replicas, 2)],
            },
            PlanError::NeedsSeqLen {
                value: 2_000_000,
                unit: UnitKind::Token,
                to: UnitKind::Update,
            },
            PlanError::NotWholeUpdates {
                value: 330,
                unit: UnitKind::Example,
                per_update: 32,
            },
            PlanError::PartialGroup {
                examples: 100,
                effective_batch: 32,
                remainder: 4,
            },
            PlanError::ReplanZero,
            PlanError::ReplanTooLarge {
                per_replica: 1 << 50,
                max_micro_batch: 1 << 40,
            },
            PlanError::ReplicasDisagree {
                replicas: 3,
                layout: Layout::new(8, 2, 1, 1),
            },
        ]
    }

    #[test]
    fn display_is_the_message_then_the_fix() {
        for err in samples() {
            let (message, fix) = (err.message(), err.fix());
            assert_eq!(err.to_string(), format!("{message}; {}", fix.text));
            assert!(!message.is_empty() && !fix.text.is_empty(), "{err:?}");
            assert!(!err.label().is_empty(), "{err:?}");
            assert!(err.code().as_str().starts_with("accum::plan::"), "{err:?}");
        }
    }

    #[test]
    fn fixes_carry_the_values_they_name() {
        let samples: [PlanError; 14] = samples().try_into().expect("fourteen samples");
        let [
            zero,
            _,
            _,
            layout,
            keep,
            mismatch,
            solve_m,
            not_multiple,
            ..,
        ] = samples;
        assert_eq!(zero.fix().options, [vec![Edit::new(Role::Accumulation, 1)]]);
        assert_eq!(
            layout.fix().text,
            "use world_size 60 (10 replicas) or 66 (11 replicas)"
        );
        assert_eq!(
            layout.fix().options,
            [
                vec![Edit::new(Role::WorldSize, 60)],
                vec![Edit::new(Role::WorldSize, 66)]
            ]
        );
        assert_eq!(
            keep.fix().text,
            "use accumulation 7 to keep global_batch 28, or global_batch 32"
        );
        assert_eq!(
            keep.fix().options,
            [
                vec![Edit::new(Role::Accumulation, 7)],
                vec![Edit::new(Role::GlobalBatch, 32)]
            ]
        );
        assert_eq!(
            mismatch.fix().options,
            [
                vec![
                    Edit::new(Role::GlobalBatch, 28),
                    Edit::new(Role::Accumulation, 7)
                ],
                vec![
                    Edit::new(Role::GlobalBatch, 32),
                    Edit::new(Role::Accumulation, 8)
                ]
            ]
        );
        assert_eq!(
            solve_m.message(),
            "cannot solve micro_batch: global_batch 30 is not a multiple of accumulation 4 × replicas 2 = 8"
        );
        assert_eq!(
            solve_m.fix().text,
            "use global_batch 24 (micro_batch 3) or 32 (micro_batch 4)"
        );
        assert_eq!(not_multiple.fix().text, "use global_batch 16 or 32");
        assert_eq!(not_multiple.label(), "not a multiple of 16");
    }

    #[test]
    fn a_missing_seq_len_names_the_conversion_that_failed() {
        use crate::plan::{Plan, Rounding};
        let plan = Plan::new(8, 4, 2).expect("a plan");
        let from_tokens = plan
            .to_updates(2_000_000, UnitKind::Token, Rounding::Up)
            .unwrap_err();
        assert_eq!(
            from_tokens.message(),
            "2,000,000 tokens cannot be converted to updates: without a fixed seq_len the tokens of an update (T = B·L) are unknown"
        );
        let to_tokens = plan
            .convert(1, UnitKind::Update, UnitKind::Token, Rounding::Exact)
            .unwrap_err();
        assert_eq!(
            to_tokens.message(),
            "1 update cannot be counted in tokens: without a fixed seq_len the tokens of an update (T = B·L) are unknown"
        );
        let to_examples = plan
            .convert(640, UnitKind::Token, UnitKind::Example, Rounding::Exact)
            .unwrap_err();
        assert!(
            to_examples
                .message()
                .starts_with("640 tokens cannot be converted to examples: "),
            "{to_examples}"
        );
        for err in [&from_tokens, &to_tokens, &to_examples] {
            assert_eq!(err.code(), Code::SeqLen);
            assert_eq!(err.role(), Some(Role::SeqLen));
            assert!(!err.message().contains("to or from tokens"), "{err}");
            assert!(
                err.fix()
                    .text
                    .starts_with("set seq_len when every example has the same number of tokens"),
                "{err}"
            );
            assert!(err.fix().text.contains("updates or examples"), "{err}");
        }
    }

    #[test]
    fn roles_and_factors_point_at_the_fields_to_change() {
        let roles: Vec<Option<Role>> = samples().iter().map(PlanError::role).collect();
        assert_eq!(
            roles,
            [
                Some(Role::Accumulation),
                Some(Role::Replicas),
                None,
                Some(Role::WorldSize),
                Some(Role::GlobalBatch),
                Some(Role::GlobalBatch),
                Some(Role::GlobalBatch),
                Some(Role::GlobalBatch),
                Some(Role::SeqLen),
                None,
                None,
                None,
                None,
                Some(Role::Replicas),
            ]
        );
        let disagree = samples().pop().expect("samples");
        assert_eq!(
            disagree.message(),
            "replicas 3 disagrees with world_size 8 / (tensor 2 × pipeline 1 × context 1) = 4"
        );
        assert_eq!(disagree.factors()[0], (Role::WorldSize, 8));
    }
}
