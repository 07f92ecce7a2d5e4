//! The accumulation plan: micro-batch `m`, accumulation steps `A`,
//! data-parallel replicas `D` and an optional sequence length `L`, with every
//! quantity the seeds compute from them (SPEC R3, R6, R11, R15).
//!
//! A [`Plan`] is valid by construction: no factor is zero and `m·A·D` (and
//! `m·A·D·L`) fit in a `u64`. Build one directly with [`Plan::new`], from a
//! world layout with [`Layout`], or solve a missing factor from a declared
//! global batch with [`PlanInput::resolve`].
//!
//! ```
//! use accum_core::plan::{Layout, Plan};
//!
//! // R3: m=8, D=64, A=4, L=4096 → B=2048, T=8,388,608
//! let plan = Plan::new(8, 4, 64)?.with_seq_len(4096)?;
//! assert_eq!(plan.effective_batch().get(), 2048);
//! assert_eq!(plan.tokens_per_update().map(|t| t.get()), Some(8_388_608));
//!
//! // tensor- and pipeline-parallel GPUs are not replicas: 64 / (2·2) = 16
//! let layout = Layout::new(64, 2, 2, 1);
//! assert_eq!(layout.replicas()?, 16);
//! # Ok::<(), accum_core::plan::PlanError>(())
//! ```

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::units::{
    Count, Examples, Microbatches, Overflow, Tokens, Unit, UnitKind, Updates, group_digits,
};

/// A role a configuration value can play in a plan. Its [`key`](Role::key) is
/// the `x-accum-role` of generated schemas.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// `m`: examples per microbatch per replica.
    MicroBatch,
    /// `A`: microbatches per update per replica.
    Accumulation,
    /// `D`: data-parallel replicas.
    Replicas,
    /// All devices of the job; `D = world_size / (tp·pp·cp)`.
    WorldSize,
    /// Tensor-parallel degree (devices sharing one model copy).
    TensorParallel,
    /// Pipeline-parallel degree (devices sharing one model copy).
    PipelineParallel,
    /// Context/sequence-parallel degree (devices sharing one model copy).
    ContextParallel,
    /// `L`: tokens per example when lengths are fixed.
    SeqLen,
    /// `B`: the declared effective batch, checked against `m·A·D`.
    GlobalBatch,
}

impl Role {
    /// Every role, in plan order.
    pub const ALL: [Role; 9] = [
        Role::MicroBatch,
        Role::Accumulation,
        Role::Replicas,
        Role::WorldSize,
        Role::TensorParallel,
        Role::PipelineParallel,
        Role::ContextParallel,
        Role::SeqLen,
        Role::GlobalBatch,
    ];

    /// The machine name, as in `x-accum-role` and `#[accum(...)]`.
    pub const fn key(self) -> &'static str {
        match self {
            Role::MicroBatch => "micro_batch",
            Role::Accumulation => "accumulation",
            Role::Replicas => "replicas",
            Role::WorldSize => "world_size",
            Role::TensorParallel => "tensor_parallel",
            Role::PipelineParallel => "pipeline_parallel",
            Role::ContextParallel => "context_parallel",
            Role::SeqLen => "seq_len",
            Role::GlobalBatch => "global_batch",
        }
    }

    /// Parses a role key.
    pub fn from_key(key: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|role| role.key() == key)
    }

    /// The symbol used in formulas (`m`, `A`, `D`, …).
    pub const fn symbol(self) -> &'static str {
        match self {
            Role::MicroBatch => "m",
            Role::Accumulation => "A",
            Role::Replicas => "D",
            Role::WorldSize => "world",
            Role::TensorParallel => "tp",
            Role::PipelineParallel => "pp",
            Role::ContextParallel => "cp",
            Role::SeqLen => "L",
            Role::GlobalBatch => "B",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// How to turn a count that is not a whole number of updates into updates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rounding {
    /// Round up: a partial update counts as one more.
    Up,
    /// Round down: a partial update is not counted.
    Down,
    /// The count must be a whole number of updates, or it is an error.
    #[default]
    Exact,
}

/// What happens to the last group when the data ends with fewer than `A`
/// microbatches per replica, or with an incomplete microbatch (SPEC R6).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum LastGroup {
    /// Process it as one more update, normalized by what it really contains.
    #[default]
    Process,
    /// Drop it; the dropped example ids are recorded.
    Drop,
    /// Refuse to run: the data must fill whole groups.
    Error,
}

impl LastGroup {
    /// The config spelling (`"process"`, `"drop"`, `"error"`).
    pub const fn key(self) -> &'static str {
        match self {
            LastGroup::Process => "process",
            LastGroup::Drop => "drop",
            LastGroup::Error => "error",
        }
    }
}

impl fmt::Display for LastGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

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
                     devices that share one model copy do not multiply the batch (R3)"
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

fn nonzero(value: u64, role: Role) -> Result<u64, PlanError> {
    if value == 0 {
        Err(PlanError::Zero { role })
    } else {
        Ok(value)
    }
}

fn product(factors: &[(&str, u64)]) -> Result<u64, PlanError> {
    let mut acc: u64 = 1;
    for &(_, value) in factors {
        acc = match acc.checked_mul(value) {
            Some(v) => v,
            None => {
                let equation = factors
                    .iter()
                    .map(|(name, value)| format!("{name} {value}"))
                    .collect::<Vec<_>>()
                    .join(" × ");
                return Err(PlanError::Overflow { equation });
            }
        };
    }
    Ok(acc)
}

/// A device layout: all devices of a job and the degrees of the parallelisms
/// that split one model copy. Only what is left are data-parallel replicas (R3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Layout {
    /// All devices (`world_size`).
    pub world_size: u64,
    /// Tensor-parallel degree.
    pub tensor: u64,
    /// Pipeline-parallel degree.
    pub pipeline: u64,
    /// Context (sequence) parallel degree.
    pub context: u64,
}

impl Layout {
    /// A layout of `world_size` devices with the given parallel degrees.
    #[inline]
    pub const fn new(world_size: u64, tensor: u64, pipeline: u64, context: u64) -> Self {
        Layout {
            world_size,
            tensor,
            pipeline,
            context,
        }
    }

    /// A layout with data parallelism only.
    #[inline]
    pub const fn data_parallel(world_size: u64) -> Self {
        Layout::new(world_size, 1, 1, 1)
    }

    /// Devices that share one model copy: `tp·pp·cp`.
    pub fn model_parallel(&self) -> Result<u64, PlanError> {
        let tensor = nonzero(self.tensor, Role::TensorParallel)?;
        let pipeline = nonzero(self.pipeline, Role::PipelineParallel)?;
        let context = nonzero(self.context, Role::ContextParallel)?;
        // tp·pp·cp > world_size whenever it overflows, so overflow is reported
        // as non-divisibility with the true degrees.
        match tensor.checked_mul(pipeline) {
            Some(tp_pp) => match tp_pp.checked_mul(context) {
                Some(group) => Ok(group),
                None => Err(self.not_divisible()),
            },
            None => Err(self.not_divisible()),
        }
    }

    const fn not_divisible(&self) -> PlanError {
        PlanError::LayoutNotDivisible {
            world_size: self.world_size,
            tensor: self.tensor,
            pipeline: self.pipeline,
            context: self.context,
        }
    }

    /// Data-parallel replicas `D = world_size / (tp·pp·cp)`, or the
    /// divisibility error (R3).
    pub fn replicas(&self) -> Result<u64, PlanError> {
        let world = nonzero(self.world_size, Role::WorldSize)?;
        let group = self.model_parallel()?;
        if world % group != 0 {
            return Err(self.not_divisible());
        }
        Ok(world / group)
    }
}

/// A valid accumulation plan. See the [module docs](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Plan {
    micro_batch: u64,
    accumulation: u64,
    replicas: u64,
    seq_len: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    layout: Option<Layout>,
}

impl Plan {
    /// A plan of `m` examples per microbatch, `A` microbatches per update and
    /// `D` data-parallel replicas. Fails on a zero or when `m·A·D` overflows.
    pub fn new(micro_batch: u64, accumulation: u64, replicas: u64) -> Result<Plan, PlanError> {
        if micro_batch == 0 {
            return Err(PlanError::Zero {
                role: Role::MicroBatch,
            });
        }
        if accumulation == 0 {
            return Err(PlanError::Zero {
                role: Role::Accumulation,
            });
        }
        if replicas == 0 {
            return Err(PlanError::Zero {
                role: Role::Replicas,
            });
        }
        product(&[
            ("micro_batch", micro_batch),
            ("accumulation", accumulation),
            ("replicas", replicas),
        ])?;
        Ok(Plan {
            micro_batch,
            accumulation,
            replicas,
            seq_len: None,
            layout: None,
        })
    }

    /// A plan from constant parts, for `const` contexts such as the derive's
    /// `const PLAN`. The derive checks the values first and reports errors
    /// with their arithmetic; here an invalid plan stops const evaluation.
    ///
    /// # Panics
    /// When a factor is zero or `m·A·D(·L)` overflows `u64` (at compile time
    /// when used in a `const`).
    pub const fn from_parts(
        micro_batch: u64,
        accumulation: u64,
        replicas: u64,
        seq_len: Option<u64>,
    ) -> Plan {
        assert!(
            micro_batch > 0 && accumulation > 0 && replicas > 0,
            "every factor of the plan (micro_batch, accumulation, replicas) must be at least 1"
        );
        let batch = match micro_batch.checked_mul(accumulation) {
            Some(ma) => ma.checked_mul(replicas),
            None => None,
        };
        let Some(batch) = batch else {
            panic!("micro_batch × accumulation × replicas does not fit in a 64-bit count")
        };
        if let Some(len) = seq_len {
            assert!(len > 0, "seq_len must be at least 1");
            assert!(
                batch.checked_mul(len).is_some(),
                "micro_batch × accumulation × replicas × seq_len does not fit in a 64-bit count"
            );
        }
        Plan {
            micro_batch,
            accumulation,
            replicas,
            seq_len,
            layout: None,
        }
    }

    /// Like [`Plan::from_parts`], with the replicas computed from a device
    /// layout, `D = world_size / (tp·pp·cp)` (R3), for `const` contexts.
    ///
    /// # Panics
    /// When a factor is zero, `world_size` is not divisible by `tp·pp·cp`, or
    /// a product overflows `u64` (at compile time when used in a `const`).
    pub const fn from_layout_parts(
        micro_batch: u64,
        accumulation: u64,
        layout: Layout,
        seq_len: Option<u64>,
    ) -> Plan {
        assert!(
            layout.world_size > 0 && layout.tensor > 0 && layout.pipeline > 0 && layout.context > 0,
            "world_size and the tensor, pipeline and context degrees must be at least 1"
        );
        let group = match layout.tensor.checked_mul(layout.pipeline) {
            Some(tp_pp) => tp_pp.checked_mul(layout.context),
            None => None,
        };
        let Some(group) = group else {
            panic!("tensor × pipeline × context does not fit in a 64-bit count")
        };
        assert!(
            layout.world_size.is_multiple_of(group),
            "world_size is not divisible by tensor × pipeline × context (R3)"
        );
        let mut plan = Plan::from_parts(
            micro_batch,
            accumulation,
            layout.world_size / group,
            seq_len,
        );
        plan.layout = Some(layout);
        plan
    }

    /// Like [`Plan::new`]; kept for call sites that read as "checked".
    fn checked(micro_batch: u64, accumulation: u64, replicas: u64) -> Result<Plan, PlanError> {
        Plan::new(micro_batch, accumulation, replicas)
    }

    /// A plan whose replicas come from a device layout (R3).
    pub fn with_layout(
        micro_batch: u64,
        accumulation: u64,
        layout: Layout,
    ) -> Result<Plan, PlanError> {
        let replicas = layout.replicas()?;
        let mut plan = Plan::checked(micro_batch, accumulation, replicas)?;
        plan.layout = Some(layout);
        Ok(plan)
    }

    /// Adds a fixed sequence length `L`. Fails on zero or when `m·A·D·L` overflows.
    pub fn with_seq_len(mut self, seq_len: u64) -> Result<Plan, PlanError> {
        nonzero(seq_len, Role::SeqLen)?;
        product(&[
            ("micro_batch", self.micro_batch),
            ("accumulation", self.accumulation),
            ("replicas", self.replicas),
            ("seq_len", seq_len),
        ])?;
        self.seq_len = Some(seq_len);
        Ok(self)
    }

    /// `m`: examples per microbatch per replica.
    #[inline]
    pub const fn micro_batch(&self) -> u64 {
        self.micro_batch
    }

    /// `A`: microbatches per update per replica.
    #[inline]
    pub const fn accumulation(&self) -> u64 {
        self.accumulation
    }

    /// `D`: data-parallel replicas.
    #[inline]
    pub const fn replicas(&self) -> u64 {
        self.replicas
    }

    /// `L`, when sequence lengths are fixed.
    #[inline]
    pub const fn seq_len(&self) -> Option<u64> {
        self.seq_len
    }

    /// The layout the replicas were derived from, if any.
    #[inline]
    pub const fn layout(&self) -> Option<Layout> {
        self.layout
    }

    /// `B = m·A·D`: examples per update (R3).
    #[inline]
    pub const fn effective_batch(&self) -> Examples {
        // Checked at construction.
        Examples::new(self.micro_batch * self.accumulation * self.replicas)
    }

    /// `T = B·L`: tokens per update, when `L` is fixed (R15).
    #[inline]
    pub const fn tokens_per_update(&self) -> Option<Tokens> {
        match self.seq_len {
            // Checked in `with_seq_len`.
            Some(len) => Some(Tokens::new(self.effective_batch().get() * len)),
            None => None,
        }
    }

    /// `m·A`: examples one replica processes per update.
    #[inline]
    pub const fn examples_per_replica_per_update(&self) -> Examples {
        Examples::new(self.micro_batch * self.accumulation)
    }

    /// `A`: microbatches (forward and backward passes) one replica runs per update.
    #[inline]
    pub const fn microbatches_per_update(&self) -> Microbatches {
        Microbatches::new(self.accumulation)
    }

    /// `A·D`: microbatches all replicas together run per update.
    #[inline]
    pub const fn microbatches_per_update_all_replicas(&self) -> Microbatches {
        Microbatches::new(self.accumulation * self.replicas)
    }

    /// `T / D`: tokens one replica processes per update, when `L` is fixed.
    #[inline]
    pub const fn tokens_per_replica_per_update(&self) -> Option<Tokens> {
        match self.seq_len {
            Some(len) => Some(Tokens::new(self.micro_batch * self.accumulation * len)),
            None => None,
        }
    }

    /// How many of `unit` make one update: 1 update, `A` microbatches (per
    /// replica, as a replica's loop counts them), `B` examples, `B·L` tokens.
    pub fn per_update(&self, unit: UnitKind) -> Result<u64, PlanError> {
        match unit {
            UnitKind::Update => Ok(1),
            UnitKind::Microbatch => Ok(self.accumulation),
            UnitKind::Example => Ok(self.effective_batch().get()),
            UnitKind::Token => self
                .tokens_per_update()
                .map(Tokens::get)
                .ok_or(PlanError::NeedsSeqLen { value: 1, unit }),
        }
    }

    /// Converts `value` of `unit` to updates with an explicit rounding.
    pub fn to_updates(
        &self,
        value: u64,
        unit: UnitKind,
        rounding: Rounding,
    ) -> Result<Updates, PlanError> {
        let per = self
            .per_update(unit)
            .map_err(|_| PlanError::NeedsSeqLen { value, unit })?;
        let whole = value / per;
        let rest = value % per;
        let updates = match rounding {
            _ if rest == 0 => whole,
            Rounding::Down => whole,
            Rounding::Up => whole + 1,
            Rounding::Exact => {
                return Err(PlanError::NotWholeUpdates {
                    value,
                    unit,
                    per_update: per,
                });
            }
        };
        Ok(Updates::new(updates))
    }

    /// Converts a typed count to updates with an explicit rounding.
    pub fn updates_in<U: Unit>(
        &self,
        count: Count<U>,
        rounding: Rounding,
    ) -> Result<Updates, PlanError> {
        self.to_updates(count.get(), U::KIND, rounding)
    }

    /// Expresses `updates` in `unit`, failing on overflow or a missing `L`.
    pub fn from_updates(&self, updates: Updates, unit: UnitKind) -> Result<u64, PlanError> {
        let per = self.per_update(unit).map_err(|_| PlanError::NeedsSeqLen {
            value: updates.get(),
            unit: UnitKind::Update,
        })?;
        updates
            .get()
            .checked_mul(per)
            .ok_or_else(|| PlanError::Overflow {
                equation: format!("{updates} × {per} {unit} per update"),
            })
    }

    /// Expresses `updates` as a typed count of unit `U`.
    pub fn updates_as<U: Unit>(&self, updates: Updates) -> Result<Count<U>, PlanError> {
        self.from_updates(updates, U::KIND).map(Count::new)
    }

    /// Converts between any two units through updates, with explicit rounding.
    pub fn convert(
        &self,
        value: u64,
        from: UnitKind,
        to: UnitKind,
        rounding: Rounding,
    ) -> Result<u64, PlanError> {
        if from == to {
            return Ok(value);
        }
        // Examples ↔ tokens and microbatches ↔ examples have exact ratios that
        // need not be whole updates; go through the smallest shared quantity.
        let per_from = self
            .per_update(from)
            .map_err(|_| PlanError::NeedsSeqLen { value, unit: from })?;
        let per_to = self
            .per_update(to)
            .map_err(|_| PlanError::NeedsSeqLen { value, unit: from })?;
        // value·per_to / per_from, computed in u128 so that it cannot overflow.
        let num = u128::from(value) * u128::from(per_to);
        let den = u128::from(per_from);
        let q = num / den;
        let r = num % den;
        let result = match rounding {
            _ if r == 0 => q,
            Rounding::Down => q,
            Rounding::Up => q + 1,
            Rounding::Exact => {
                return Err(PlanError::NotWholeUpdates {
                    value,
                    unit: from,
                    per_update: per_from,
                });
            }
        };
        u64::try_from(result).map_err(|_| PlanError::Overflow {
            equation: format!("{value} {from} in {to}"),
        })
    }

    /// Splits `examples` into updates under a last-group policy (R6).
    pub fn epoch(&self, examples: Examples, policy: LastGroup) -> Result<Epoch, PlanError> {
        let batch = self.effective_batch().get();
        let total = examples.get();
        let full = total / batch;
        let remainder = total % batch;
        let partial = (remainder > 0).then(|| PartialGroup {
            examples: Examples::new(remainder),
            microbatches: Microbatches::new(remainder.div_ceil(self.micro_batch)),
            last_microbatch: Examples::new(match remainder % self.micro_batch {
                0 => self.micro_batch,
                rest => rest,
            }),
        });
        let (updates, dropped) = match (policy, partial) {
            (_, None) => (full, 0),
            (LastGroup::Process, Some(_)) => (full + 1, 0),
            (LastGroup::Drop, Some(_)) => (full, remainder),
            (LastGroup::Error, Some(_)) => {
                return Err(PlanError::PartialGroup {
                    examples: total,
                    effective_batch: batch,
                    remainder,
                });
            }
        };
        Ok(Epoch {
            examples,
            full_updates: Updates::new(full),
            updates: Updates::new(updates),
            partial,
            dropped: Examples::new(dropped),
            policy,
        })
    }

    /// Every `(m, A)` that keeps `B` with `D` unchanged and `m ≤ max_micro_batch`,
    /// largest `m` first; the first is the recommended plan (R11). Lowering `m`
    /// keeps the batch but guarantees neither a proportional memory drop nor
    /// a faster run.
    pub fn replan(&self, max_micro_batch: u64) -> Result<Replan, PlanError> {
        if max_micro_batch == 0 {
            return Err(PlanError::ReplanZero);
        }
        let per_replica = self.examples_per_replica_per_update().get();
        // Bounded work: try every m up to a small limit directly, else the
        // divisors by trial division up to √(m·A), if that is small enough.
        let limit = max_micro_batch.min(per_replica);
        let candidates: Vec<u64> = if limit <= REPLAN_SEARCH {
            (1..=limit)
                .rev()
                .filter(|m| per_replica.is_multiple_of(*m))
                .collect()
        } else if per_replica <= REPLAN_SEARCH * REPLAN_SEARCH {
            divisors(per_replica)
                .into_iter()
                .rev()
                .filter(|&m| m <= max_micro_batch)
                .collect()
        } else {
            return Err(PlanError::ReplanTooLarge {
                per_replica,
                max_micro_batch,
            });
        };
        let mut alternatives: Vec<Plan> = candidates
            .into_iter()
            .map(|m| Plan {
                micro_batch: m,
                accumulation: per_replica / m,
                ..*self
            })
            .collect();
        // 1 divides every per-replica batch, so the list is never empty.
        let plan = alternatives.remove(0);
        Ok(Replan {
            original: *self,
            plan,
            alternatives,
        })
    }

    /// `"B = m·A·D = 8 × 4 × 64 = 2,048"`.
    pub fn batch_formula(&self) -> String {
        format!(
            "B = m·A·D = {} × {} × {} = {}",
            self.micro_batch,
            self.accumulation,
            self.replicas,
            group_digits(self.effective_batch().get())
        )
    }

    /// `"T = B·L = 2,048 × 4,096 = 8,388,608"`, when `L` is fixed.
    pub fn token_formula(&self) -> Option<String> {
        let (len, tokens) = (self.seq_len?, self.tokens_per_update()?);
        Some(format!(
            "T = B·L = {} × {} = {}",
            group_digits(self.effective_batch().get()),
            group_digits(len),
            group_digits(tokens.get())
        ))
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "m {} × A {} × D {} = B {}",
            self.micro_batch,
            self.accumulation,
            self.replicas,
            self.effective_batch().get()
        )?;
        if let Some(len) = self.seq_len {
            write!(f, " (L {len})")?;
        }
        Ok(())
    }
}

/// The most candidates [`Plan::replan`] tries one by one (and the square
/// root of the largest `m·A` whose divisors it lists): a few milliseconds.
const REPLAN_SEARCH: u64 = 1 << 22;

fn divisors(n: u64) -> Vec<u64> {
    let mut small = Vec::new();
    let mut large = Vec::new();
    let mut i: u64 = 1;
    while i.checked_mul(i).is_some_and(|sq| sq <= n) {
        if n.is_multiple_of(i) {
            small.push(i);
            if i != n / i {
                large.push(n / i);
            }
        }
        i += 1;
    }
    small.extend(large.into_iter().rev());
    small
}

/// How one pass over a dataset splits into updates (R6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Epoch {
    /// Examples in the data.
    pub examples: Examples,
    /// Updates with a full group of `B` examples.
    pub full_updates: Updates,
    /// Updates applied in the epoch under the policy.
    pub updates: Updates,
    /// The partial group at the end, if the data does not fill whole groups.
    pub partial: Option<PartialGroup>,
    /// Examples dropped by the policy (their ids are recorded by the engine).
    pub dropped: Examples,
    /// The policy applied.
    pub policy: LastGroup,
}

/// The incomplete last group of an epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PartialGroup {
    /// Examples in the partial group (`< B`).
    pub examples: Examples,
    /// Microbatches they fill, over all replicas (the last may be incomplete).
    pub microbatches: Microbatches,
    /// Examples in the last microbatch (`≤ m`).
    pub last_microbatch: Examples,
}

/// The result of [`Plan::replan`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Replan {
    /// The plan before.
    pub original: Plan,
    /// The recommended plan: the largest micro-batch that fits.
    pub plan: Plan,
    /// Other valid plans with the same `B`, by decreasing micro-batch.
    pub alternatives: Vec<Plan>,
}

/// Plan values as a configuration gives them, some possibly missing; see
/// [`PlanInput::resolve`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanInput {
    /// `m`, or `None` to solve it from the global batch.
    pub micro_batch: Option<u64>,
    /// `A`, or `None` to solve it from the global batch.
    pub accumulation: Option<u64>,
    /// `D`, when given directly.
    pub replicas: Option<u64>,
    /// The layout `D` comes from, when `replicas` is not given.
    pub layout: Option<Layout>,
    /// `L`, when fixed.
    pub seq_len: Option<u64>,
    /// A declared `B` to check or to solve from.
    pub global_batch: Option<u64>,
}

impl PlanInput {
    /// Resolves the input into a plan. With a global batch, a missing `A` (or
    /// `m`) is solved exactly — like DeepSpeed fills
    /// `gradient_accumulation_steps`, but a non-divisible input is an error
    /// naming the nearest valid values, never a silent floor. With every
    /// factor given, the global batch must equal `m·A·D`.
    pub fn resolve(&self) -> Result<Plan, PlanError> {
        let replicas = match (self.replicas, self.layout) {
            (Some(d), Some(layout)) => {
                // Both given: they must agree.
                let from_layout = layout.replicas()?;
                if from_layout != d {
                    return Err(PlanError::ReplicasDisagree {
                        replicas: d,
                        layout,
                    });
                }
                d
            }
            (Some(d), None) => d,
            (None, Some(layout)) => layout.replicas()?,
            (None, None) => {
                return Err(PlanError::Missing {
                    role: Role::Replicas,
                });
            }
        };
        nonzero(replicas, Role::Replicas)?;
        if let Some(m) = self.micro_batch {
            nonzero(m, Role::MicroBatch)?;
        }
        if let Some(a) = self.accumulation {
            nonzero(a, Role::Accumulation)?;
        }
        if let Some(b) = self.global_batch {
            nonzero(b, Role::GlobalBatch)?;
        }
        let (m, a) = match (self.micro_batch, self.accumulation, self.global_batch) {
            (Some(m), Some(a), global) => {
                let plan = Plan::checked(m, a, replicas)?;
                if let Some(b) = global
                    && plan.effective_batch().get() != b
                {
                    return Err(PlanError::GlobalBatchMismatch {
                        global_batch: b,
                        micro_batch: m,
                        accumulation: a,
                        replicas,
                    });
                }
                (m, a)
            }
            (Some(m), None, Some(b)) => (m, solve(b, Role::Accumulation, m, replicas)?),
            (None, Some(a), Some(b)) => (solve(b, Role::MicroBatch, a, replicas)?, a),
            (None, _, _) => {
                return Err(PlanError::Missing {
                    role: Role::MicroBatch,
                });
            }
            (Some(_), None, None) => {
                return Err(PlanError::Missing {
                    role: Role::Accumulation,
                });
            }
        };
        let mut plan = Plan::checked(m, a, replicas)?;
        plan.layout = self.layout;
        match self.seq_len {
            Some(len) => plan.with_seq_len(len),
            None => Ok(plan),
        }
    }
}

/// Solves `global = known · x · replicas` for `x`, exactly.
fn solve(global: u64, solving: Role, known: u64, replicas: u64) -> Result<u64, PlanError> {
    let step = product(&[(solving_partner(solving), known), ("replicas", replicas)])?;
    if !global.is_multiple_of(step) {
        return Err(PlanError::GlobalBatchNotDivisible {
            global_batch: global,
            solving,
            known,
            replicas,
        });
    }
    Ok(global / step)
}

const fn solving_partner(solving: Role) -> &'static str {
    match solving {
        Role::MicroBatch => "accumulation",
        _ => "micro_batch",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(m: u64, a: u64, d: u64) -> Plan {
        Plan::new(m, a, d).expect("valid plan")
    }

    #[test]
    fn r3_two_by_eight_by_two() {
        // R3: m=2, A=8, D=2 → B=32, 16 examples per replica per group.
        let p = plan(2, 8, 2);
        assert_eq!(p.effective_batch(), Examples::new(32));
        assert_eq!(p.examples_per_replica_per_update(), Examples::new(16));
        assert_eq!(p.microbatches_per_update(), Microbatches::new(8));
        assert_eq!(
            p.microbatches_per_update_all_replicas(),
            Microbatches::new(16)
        );
    }

    #[test]
    fn r3_calculator_example_and_doubling_accumulation() {
        // R3/R15: m=8, D=64, A=4, L=4096 → B=2048, T=8,388,608; A=8 → B=4096.
        let p = plan(8, 4, 64).with_seq_len(4096).expect("fits");
        assert_eq!(p.effective_batch().get(), 2048);
        assert_eq!(p.tokens_per_update(), Some(Tokens::new(8_388_608)));
        assert_eq!(p.batch_formula(), "B = m·A·D = 8 × 4 × 64 = 2,048");
        assert_eq!(
            p.token_formula().as_deref(),
            Some("T = B·L = 2,048 × 4,096 = 8,388,608")
        );
        let doubled = plan(8, 8, 64);
        assert_eq!(doubled.effective_batch().get(), 4096);
        // Same per-device microbatch, so the same activation memory (R3, R16).
        assert_eq!(doubled.micro_batch(), p.micro_batch());
    }

    #[test]
    fn r3_model_parallel_devices_are_not_replicas() {
        assert_eq!(Layout::new(64, 2, 2, 1).replicas(), Ok(16));
        assert_eq!(Layout::new(64, 8, 1, 2).replicas(), Ok(4));
        assert_eq!(Layout::data_parallel(8).replicas(), Ok(8));
        let p = Plan::with_layout(4, 2, Layout::new(64, 2, 2, 1)).expect("valid");
        assert_eq!(p.replicas(), 16);
        assert_eq!(p.effective_batch().get(), 128);
    }

    #[test]
    fn r3_layout_not_divisible_names_the_fix() {
        let err = Layout::new(64, 3, 2, 1).replicas().unwrap_err();
        assert_eq!(
            err.to_string(),
            "world_size 64 is not divisible by tensor 3 × pipeline 2 × context 1 = 6: devices that share one model copy \
             do not multiply the batch (R3); use world_size 60 (10 replicas) or 66 (11 replicas)"
        );
        let err = Layout::new(4, 8, 1, 1).replicas().unwrap_err();
        assert!(
            err.to_string().ends_with("use world_size 8 (1 replica)"),
            "{err}"
        );
        let huge = Layout::new(64, u64::MAX, 2, 1).replicas().unwrap_err();
        assert!(matches!(huge, PlanError::LayoutNotDivisible { .. }));
    }

    #[test]
    fn zeroes_are_rejected_with_their_role() {
        assert_eq!(
            Plan::new(0, 1, 1),
            Err(PlanError::Zero {
                role: Role::MicroBatch
            })
        );
        assert_eq!(
            Plan::new(1, 0, 1),
            Err(PlanError::Zero {
                role: Role::Accumulation
            })
        );
        assert_eq!(
            Plan::new(1, 1, 0),
            Err(PlanError::Zero {
                role: Role::Replicas
            })
        );
        assert_eq!(
            Layout::new(0, 1, 1, 1).replicas(),
            Err(PlanError::Zero {
                role: Role::WorldSize
            })
        );
        assert_eq!(
            Layout::new(8, 1, 0, 1).replicas(),
            Err(PlanError::Zero {
                role: Role::PipelineParallel
            })
        );
        assert_eq!(
            plan(1, 1, 1).with_seq_len(0),
            Err(PlanError::Zero { role: Role::SeqLen })
        );
        let msg = PlanError::Zero {
            role: Role::Accumulation,
        }
        .to_string();
        assert!(msg.starts_with("accumulation is 0"), "{msg}");
    }

    #[test]
    fn overflow_is_an_error_with_the_equation() {
        let err = PlanInput {
            micro_batch: Some(u64::MAX),
            accumulation: Some(2),
            replicas: Some(1),
            ..PlanInput::default()
        }
        .resolve()
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "micro_batch 18446744073709551615 × accumulation 2 × replicas 1 does not fit in a 64-bit count; use smaller values"
        );
        let err = plan(1 << 20, 1 << 20, 1 << 20)
            .with_seq_len(1 << 10)
            .unwrap_err();
        assert!(matches!(err, PlanError::Overflow { .. }), "{err}");
        assert!(Plan::new(u64::MAX, u64::MAX, u64::MAX).is_err());
        let p = plan(u64::MAX, 1, 1);
        assert!(p.from_updates(Updates::new(2), UnitKind::Example).is_err());
    }

    #[test]
    fn unit_conversions() {
        let p = plan(2, 8, 2).with_seq_len(128).expect("fits");
        assert_eq!(p.per_update(UnitKind::Microbatch), Ok(8));
        assert_eq!(p.per_update(UnitKind::Token), Ok(32 * 128));
        assert_eq!(
            p.to_updates(320, UnitKind::Example, Rounding::Exact),
            Ok(Updates::new(10))
        );
        assert_eq!(
            p.to_updates(330, UnitKind::Example, Rounding::Down),
            Ok(Updates::new(10))
        );
        assert_eq!(
            p.to_updates(330, UnitKind::Example, Rounding::Up),
            Ok(Updates::new(11))
        );
        let err = p
            .to_updates(330, UnitKind::Example, Rounding::Exact)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "330 examples is not a whole number of updates (one update = 32 examples); use 320 or 352 examples, or choose rounding up or down"
        );
        assert_eq!(
            p.updates_as::<crate::units::Token>(Updates::new(2)),
            Ok(Tokens::new(8192))
        );
        assert_eq!(
            p.convert(40, UnitKind::Microbatch, UnitKind::Example, Rounding::Exact),
            Ok(160)
        );
        assert_eq!(
            p.convert(3, UnitKind::Example, UnitKind::Token, Rounding::Exact),
            Ok(384)
        );
        let no_len = plan(2, 8, 2);
        let err = no_len
            .to_updates(1000, UnitKind::Token, Rounding::Up)
            .unwrap_err();
        assert_eq!(
            err,
            PlanError::NeedsSeqLen {
                value: 1000,
                unit: UnitKind::Token
            }
        );
    }

    #[test]
    fn r6_epoch_partial_group() {
        let p = plan(2, 8, 2); // B = 32
        let e = p
            .epoch(Examples::new(100), LastGroup::Process)
            .expect("process");
        assert_eq!(e.full_updates, Updates::new(3));
        assert_eq!(e.updates, Updates::new(4));
        let partial = e.partial.expect("100 = 3·32 + 4");
        assert_eq!(partial.examples, Examples::new(4));
        assert_eq!(partial.microbatches, Microbatches::new(2));
        assert_eq!(partial.last_microbatch, Examples::new(2));

        let e = p.epoch(Examples::new(101), LastGroup::Drop).expect("drop");
        assert_eq!(e.updates, Updates::new(3));
        assert_eq!(e.dropped, Examples::new(5));
        assert_eq!(e.partial.map(|g| g.last_microbatch), Some(Examples::new(1)));

        let err = p.epoch(Examples::new(100), LastGroup::Error).unwrap_err();
        assert!(
            err.to_string().contains("partial group of 4 examples"),
            "{err}"
        );
        let e = p
            .epoch(Examples::new(96), LastGroup::Error)
            .expect("whole groups");
        assert_eq!((e.updates, e.partial), (Updates::new(3), None));
    }

    #[test]
    fn r11_replan_keeps_the_batch_and_lists_alternatives() {
        let p = plan(32, 1, 2);
        let r = p.replan(10).expect("possible");
        assert_eq!((r.plan.micro_batch(), r.plan.accumulation()), (8, 4));
        let pairs: Vec<_> = r
            .alternatives
            .iter()
            .map(|q| (q.micro_batch(), q.accumulation()))
            .collect();
        assert_eq!(pairs, vec![(4, 8), (2, 16), (1, 32)]);
        assert!(
            r.alternatives
                .iter()
                .all(|q| q.effective_batch() == p.effective_batch())
        );
        assert_eq!(p.replan(0), Err(PlanError::ReplanZero));
        // A larger limit keeps the plan as it is.
        assert_eq!(p.replan(64).expect("possible").plan, p);
    }

    #[test]
    fn resolve_solves_accumulation_exactly() {
        let input = PlanInput {
            micro_batch: Some(2),
            replicas: Some(2),
            global_batch: Some(32),
            ..PlanInput::default()
        };
        assert_eq!(input.resolve().map(|p| p.accumulation()), Ok(8));
        let err = PlanInput {
            global_batch: Some(30),
            ..input
        }
        .resolve()
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot solve accumulation: global_batch 30 is not a multiple of micro_batch 2 × replicas 2 = 4: \
             use global_batch 28 (accumulation 7) or 32 (accumulation 8)"
        );
        let err = PlanInput {
            global_batch: Some(2),
            ..input
        }
        .resolve()
        .unwrap_err();
        assert!(
            err.to_string()
                .ends_with("use global_batch 4 (accumulation 1)"),
            "{err}"
        );
        let solved_m = PlanInput {
            accumulation: Some(4),
            replicas: Some(2),
            global_batch: Some(64),
            ..PlanInput::default()
        };
        assert_eq!(solved_m.resolve().map(|p| p.micro_batch()), Ok(8));
    }

    #[test]
    fn resolve_checks_a_declared_global_batch() {
        let input = PlanInput {
            micro_batch: Some(2),
            accumulation: Some(8),
            replicas: Some(2),
            global_batch: Some(30),
            ..PlanInput::default()
        };
        assert_eq!(
            input.resolve().unwrap_err().to_string(),
            "global_batch 30 ≠ micro_batch 2 × accumulation 8 × replicas 2 = 32; 30 is not a multiple of m·D = 4: \
             use global_batch 28 (accumulation 7) or 32 (accumulation 8)"
        );
        let err = PlanInput {
            global_batch: Some(28),
            ..input
        }
        .resolve()
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "global_batch 28 ≠ micro_batch 2 × accumulation 8 × replicas 2 = 32; use accumulation 7 to keep global_batch 28, or global_batch 32"
        );
        assert!(
            PlanInput {
                global_batch: Some(32),
                ..input
            }
            .resolve()
            .is_ok()
        );
    }

    #[test]
    fn resolve_reports_missing_roles() {
        let none = PlanInput::default();
        assert_eq!(
            none.resolve(),
            Err(PlanError::Missing {
                role: Role::Replicas
            })
        );
        let only_m = PlanInput {
            micro_batch: Some(2),
            replicas: Some(1),
            ..none
        };
        assert_eq!(
            only_m.resolve(),
            Err(PlanError::Missing {
                role: Role::Accumulation
            })
        );
        let with_layout = PlanInput {
            micro_batch: Some(2),
            accumulation: Some(2),
            layout: Some(Layout::new(64, 2, 2, 1)),
            seq_len: Some(16),
            ..none
        };
        let p = with_layout.resolve().expect("valid");
        assert_eq!((p.replicas(), p.seq_len()), (16, Some(16)));
    }

    #[test]
    fn roles_round_trip_their_keys() {
        for role in Role::ALL {
            assert_eq!(Role::from_key(role.key()), Some(role));
        }
        assert_eq!(Role::from_key("steps"), None);
    }

    #[test]
    fn plan_serializes_with_stable_keys() {
        let json = serde_json::to_value(plan(2, 8, 2)).expect("serialize");
        assert_eq!(
            json,
            serde_json::json!({"micro_batch": 2, "accumulation": 8, "replicas": 2, "seq_len": null})
        );
    }

    mod properties {
        use proptest::prelude::*;

        use super::super::*;

        fn any_plan() -> impl Strategy<Value = Plan> {
            (
                1u64..=1024,
                1u64..=256,
                1u64..=512,
                proptest::option::of(1u64..=8192),
            )
                .prop_map(|(m, a, d, len)| {
                    let plan = Plan::new(m, a, d).expect("small factors");
                    match len {
                        Some(len) => plan.with_seq_len(len).expect("small factors"),
                        None => plan,
                    }
                })
        }

        fn any_unit() -> impl Strategy<Value = UnitKind> {
            prop_oneof![
                Just(UnitKind::Update),
                Just(UnitKind::Microbatch),
                Just(UnitKind::Example),
                Just(UnitKind::Token),
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]

            #[test]
            fn updates_round_trip_through_every_unit(plan in any_plan(), updates in 0u64..1_000_000, unit in any_unit()) {
                let updates = Updates::new(updates);
                match plan.from_updates(updates, unit) {
                    Ok(value) => prop_assert_eq!(plan.to_updates(value, unit, Rounding::Exact), Ok(updates)),
                    Err(PlanError::NeedsSeqLen { .. }) => prop_assert!(plan.seq_len().is_none()),
                    Err(other) => prop_assert!(false, "unexpected {other}"),
                }
            }

            #[test]
            fn conversions_round_trip_when_exact(plan in any_plan(), value in 0u64..10_000_000, from in any_unit(), to in any_unit()) {
                if let Ok(there) = plan.convert(value, from, to, Rounding::Exact) {
                    prop_assert_eq!(plan.convert(there, to, from, Rounding::Exact), Ok(value));
                }
                // Rounding down never exceeds rounding up, and they differ by at most one.
                if let (Ok(down), Ok(up)) = (
                    plan.convert(value, from, to, Rounding::Down),
                    plan.convert(value, from, to, Rounding::Up),
                ) {
                    prop_assert!(down <= up && up - down <= 1);
                }
            }

            #[test]
            fn replan_keeps_the_effective_batch(plan in any_plan(), max in 1u64..2048) {
                let replan = plan.replan(max).expect("max ≥ 1 always has m = 1");
                let all: Vec<Plan> = std::iter::once(replan.plan).chain(replan.alternatives.iter().copied()).collect();
                for q in &all {
                    prop_assert_eq!(q.effective_batch(), plan.effective_batch());
                    prop_assert_eq!(q.replicas(), plan.replicas());
                    prop_assert_eq!(q.seq_len(), plan.seq_len());
                    prop_assert!(q.micro_batch() <= max);
                }
                prop_assert!(all.windows(2).all(|w| w[0].micro_batch() > w[1].micro_batch()));
                // Every divisor of m·A that fits is listed.
                let per_replica = plan.micro_batch() * plan.accumulation();
                let expected = (1..=max.min(per_replica)).filter(|m| per_replica % m == 0).count();
                prop_assert_eq!(all.len(), expected);
            }

            #[test]
            fn epoch_accounts_for_every_example(plan in any_plan(), examples in 0u64..10_000_000) {
                let process = plan.epoch(Examples::new(examples), LastGroup::Process).expect("process never fails");
                let drop = plan.epoch(Examples::new(examples), LastGroup::Drop).expect("drop never fails");
                let b = plan.effective_batch().get();
                let rest = process.partial.map_or(0, |g| g.examples.get());
                prop_assert_eq!(process.full_updates.get() * b + rest, examples);
                prop_assert_eq!(drop.dropped.get(), rest);
                prop_assert_eq!(process.updates.get(), examples.div_ceil(b));
                prop_assert_eq!(drop.updates.get(), examples / b);
                prop_assert_eq!(plan.epoch(Examples::new(examples), LastGroup::Error).is_ok(), rest == 0);
            }

            #[test]
            fn resolve_solves_what_was_removed(plan in any_plan()) {
                let b = plan.effective_batch().get();
                let solve_a = PlanInput {
                    micro_batch: Some(plan.micro_batch()),
                    replicas: Some(plan.replicas()),
                    global_batch: Some(b),
                    seq_len: plan.seq_len(),
                    ..PlanInput::default()
                };
                prop_assert_eq!(solve_a.resolve(), Ok(plan));
                let solve_m = PlanInput {
                    accumulation: Some(plan.accumulation()),
                    replicas: Some(plan.replicas()),
                    global_batch: Some(b),
                    seq_len: plan.seq_len(),
                    ..PlanInput::default()
                };
                prop_assert_eq!(solve_m.resolve(), Ok(plan));
            }

            #[test]
            fn any_factors_give_a_plan_or_an_error_never_a_wrap(m in any::<u64>(), a in any::<u64>(), d in any::<u64>(), len in any::<u64>()) {
                let fits = m.checked_mul(a).and_then(|x| x.checked_mul(d));
                match Plan::new(m, a, d) {
                    Ok(plan) => {
                        prop_assert_eq!(Some(plan.effective_batch().get()), fits);
                        let with_len = plan.with_seq_len(len);
                        let fits_len = fits.and_then(|b| b.checked_mul(len)).filter(|_| len > 0);
                        prop_assert_eq!(with_len.ok().and_then(|p| p.tokens_per_update()).map(Tokens::get), fits_len);
                    }
                    Err(_) => prop_assert!(m == 0 || a == 0 || d == 0 || fits.is_none()),
                }
            }

            #[test]
            fn layouts_never_panic(world in any::<u64>(), tp in any::<u64>(), pp in 0u64..64, cp in 0u64..64) {
                if let Ok(d) = Layout::new(world, tp, pp, cp).replicas() {
                    prop_assert_eq!(u128::from(d) * u128::from(tp) * u128::from(pp) * u128::from(cp), u128::from(world));
                }
            }
        }
    }
}
