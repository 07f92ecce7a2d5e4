//! Plans whose batch changes during the run: batch ramp-up.
//!
//! `m`, `D` and `L` stay fixed; `A`, and so `B = m·A·D`, changes at stage
//! boundaries. A [`StagedPlan`] is a list of [`Stage`]s, each a [`Plan`] that
//! holds from one update index to the next. Lengths convert between units
//! *through* the stages: "2B tokens" is a different number of updates at
//! `B = 256` than at `B = 1024`, and a warmup written in updates is a
//! different number of tokens depending on where the ramp is. Lengths in
//! examples or tokens keep their meaning whatever the stages.
//!
//! Two ways to declare stages:
//! - [`StageSpec`]s: each stage's global batch (or accumulation) and where it
//!   ends ("until 2B tokens", "until 100k examples", "until 500 updates");
//!   the last stage has no end. Boundaries must fall on whole updates of
//!   their stage, or the error names the nearest exact values.
//! - a [`LinearRamp`]: start, increment and the length of the ramp, ending
//!   at the plan's own batch, exactly as Megatron-LM's ramp-up calculator
//!   steps it ([`StagedPlan::linear`]).
//!
//! ```
//! use accum_core::plan::{Plan, Rounding, StageSpec, StagedPlan};
//! use accum_core::units::{UnitKind, Updates};
//!
//! // m = 4, D = 2, L = 1,000: B grows 32 → 64 → 128
//! let base = Plan::new(4, 16, 2)?.with_seq_len(1000)?;
//! let staged = StagedPlan::from_specs(&base, &[
//!     StageSpec::global_batch(32).until("1.6M tokens".parse()?),  // 50 updates of 32,000 tokens
//!     StageSpec::global_batch(64).until("4.8M tokens".parse()?),  // 50 updates of 64,000 tokens
//!     StageSpec::global_batch(128),                               // to the end of the run
//! ])?;
//! assert_eq!(staged.stages()[2].start(), Updates::new(100));
//! // "a warmup of 60 updates" is 2.24M tokens here, not 60 × 128,000
//! assert_eq!(staged.tokens_at(Updates::new(60))?.get(), 2_240_000);
//! // and "6.08M tokens" is 110 updates through the stages
//! assert_eq!(staged.to_updates(6_080_000, UnitKind::Token, Rounding::Exact)?, Updates::new(110));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{Edit, Fix, Plan, PlanError, Role, Rounding};
use crate::code::Code;
use crate::finding::{FieldPath, Finding};
use crate::span::Span;
use crate::units::{Examples, Tokens, UnitKind, Updates, group_digits};

/// The most stages a plan may have; a ramp with more increments is refused
/// before anything is allocated.
pub const MAX_STAGES: usize = 100_000;

/// One stage of a batch ramp-up: its batch and where it ends.
///
/// Give exactly one of `global_batch` and `accumulation`, and `until`: the
/// length of the run, counted from its start, at which the stage ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StageSpec {
    /// The stage's global batch `B`; a multiple of `m·D`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub global_batch: Option<u64>,
    /// The stage's accumulation steps `A`, instead of `global_batch`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub accumulation: Option<u64>,
    /// Where the stage ends, counted from the start of the run (`"2B tokens"`,
    /// `"100k examples"`, `"500 updates"`). After the last stage, the run
    /// trains at the full batch to its end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<Span>,
}

impl StageSpec {
    /// A stage of global batch `B`, open-ended until [`until`](Self::until) is set.
    #[must_use]
    pub const fn global_batch(global_batch: u64) -> StageSpec {
        StageSpec {
            global_batch: Some(global_batch),
            accumulation: None,
            until: None,
        }
    }

    /// A stage of `A` accumulation steps, open-ended until [`until`](Self::until) is set.
    #[must_use]
    pub const fn accumulation(accumulation: u64) -> StageSpec {
        StageSpec {
            global_batch: None,
            accumulation: Some(accumulation),
            until: None,
        }
    }

    /// The same stage, ending at `span` from the start of the run.
    #[must_use]
    pub const fn until(mut self, span: Span) -> StageSpec {
        self.until = Some(span);
        self
    }
}

/// A linear batch ramp-up in the style of Megatron-LM's
/// `--rampup-batch-size START INCREMENT SAMPLES`: the batch starts at
/// `start`, grows by `increment` in equal parts of `over`, and ends at the
/// plan's own global batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinearRamp {
    /// The global batch of the first updates; a multiple of `m·D`.
    #[schemars(range(min = 1))]
    pub start: u64,
    /// How much the global batch grows at each step of the ramp; a multiple of `m·D`.
    #[schemars(range(min = 1))]
    pub increment: u64,
    /// The length of the ramp (`"300k examples"`, `"4B tokens"`, `"2000 updates"`),
    /// split into equal parts, one per increment.
    pub over: Span,
}

/// Everything that can be wrong with the stages of a plan. Each message
/// states the numbers and the way out.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StageError {
    /// A stage gives both or neither of `global_batch` and `accumulation`.
    BatchNotGiven {
        /// The stage, counted from 1.
        stage: usize,
        /// Whether both were given (else neither).
        both: bool,
    },
    /// A stage's batch is zero.
    ZeroBatch {
        /// The stage, counted from 1.
        stage: usize,
    },
    /// A stage's global batch is not a multiple of `m·D`.
    NotMultiple {
        /// The stage, counted from 1 (0 for a ramp's start or increment).
        stage: usize,
        /// What was given (`global_batch`, `start`, `increment`).
        what: &'static str,
        /// The value.
        value: u64,
        /// `m`.
        micro_batch: u64,
        /// `D`.
        replicas: u64,
    },
    /// A stage other than the last has no end.
    MissingUntil {
        /// The stage, counted from 1.
        stage: usize,
    },
    /// The last stage has an end; it lasts to the end of the run.
    LastUntil {
        /// The stage, counted from 1.
        stage: usize,
    },
    /// A stage ends where the previous one ended, or before.
    NotOrdered {
        /// The stage, counted from 1.
        stage: usize,
        /// Its end as written.
        until: Span,
        /// Where the previous stage ended, in the same unit.
        previous: u64,
    },
    /// A stage's end is not a whole number of the stage's updates.
    NotExact {
        /// The stage, counted from 1.
        stage: usize,
        /// Its end as written.
        until: Span,
        /// Where the stage starts, in the unit of `until`.
        start: u64,
        /// How many of that unit one update of this stage is.
        per_update: u64,
    },
    /// A ramp's start or increment is zero.
    RampZero {
        /// `start` or `increment`.
        what: &'static str,
    },
    /// A ramp whose start is above its final batch.
    RampShrinks {
        /// The ramp's start.
        start: u64,
        /// The final global batch.
        end: u64,
    },
    /// A ramp whose start equals its final batch: no increments.
    RampEmpty {
        /// Start and final global batch.
        batch: u64,
    },
    /// `final − start` is not a multiple of the increment.
    RampIncrement {
        /// The ramp's start.
        start: u64,
        /// The final global batch.
        end: u64,
        /// The increment.
        increment: u64,
    },
    /// A ramp over zero of its unit.
    RampZeroLength,
    /// More stages than [`MAX_STAGES`].
    TooMany {
        /// How many stages were asked for.
        stages: u64,
    },
    /// No stage at all.
    Empty,
    /// The arithmetic of the stages failed (overflow, missing `L`).
    Plan {
        /// The stage, counted from 1 (0 for the ramp as a whole).
        stage: usize,
        /// The plan error.
        error: PlanError,
    },
}

impl StageError {
    /// The stable code of the rule (`accum::stages::batch`, …).
    pub fn code(&self) -> Code {
        match self {
            StageError::BatchNotGiven { .. }
            | StageError::ZeroBatch { .. }
            | StageError::NotMultiple { stage: 1.., .. } => Code::StageBatch,
            StageError::MissingUntil { .. }
            | StageError::LastUntil { .. }
            | StageError::NotOrdered { .. }
            | StageError::TooMany { .. }
            | StageError::Empty => Code::StageOrder,
            StageError::NotExact { .. } => Code::StageBoundary,
            StageError::NotMultiple { stage: 0, .. }
            | StageError::RampZero { .. }
            | StageError::RampShrinks { .. }
            | StageError::RampEmpty { .. }
            | StageError::RampIncrement { .. }
            | StageError::RampZeroLength => Code::Ramp,
            StageError::Plan { error, .. } => error.code(),
        }
    }

    /// Where the value to change is, below `at`: the field that holds the
    /// stages list (`batch.stages`) or the ramp (`batch.ramp`).
    pub fn path(&self, at: &FieldPath) -> FieldPath {
        let item = |stage: usize, field: &str| {
            at.child(&(stage.saturating_sub(1)).to_string())
                .child(field)
        };
        match *self {
            StageError::BatchNotGiven { stage, .. } => at.child(&(stage - 1).to_string()),
            StageError::ZeroBatch { stage } => at.child(&(stage - 1).to_string()),
            StageError::NotMultiple { stage: 0, what, .. } | StageError::RampZero { what } => {
                at.child(what)
            }
            StageError::NotMultiple { stage, what, .. } => item(stage, what),
            StageError::MissingUntil { stage } => at.child(&(stage - 1).to_string()),
            StageError::LastUntil { stage }
            | StageError::NotOrdered { stage, .. }
            | StageError::NotExact { stage, .. } => item(stage, "until"),
            StageError::RampShrinks { .. }
            | StageError::RampEmpty { .. }
            | StageError::RampIncrement { .. } => at.child("start"),
            StageError::RampZeroLength => at.child("over"),
            StageError::TooMany { .. } | StageError::Empty | StageError::Plan { stage: 0, .. } => {
                at.clone()
            }
            StageError::Plan { stage, .. } => at.child(&(stage - 1).to_string()),
        }
    }

    /// What is wrong, with the numbers.
    pub fn message(&self) -> String {
        match *self {
            StageError::BatchNotGiven { stage, both: true } => {
                format!("stage {stage} gives both global_batch and accumulation")
            }
            StageError::BatchNotGiven { stage, both: false } => {
                format!("stage {stage} gives neither global_batch nor accumulation")
            }
            StageError::ZeroBatch { stage } => format!(
                "stage {stage} has a batch of 0; every stage trains at least m·D examples per update"
            ),
            StageError::NotMultiple {
                stage,
                what,
                value,
                micro_batch,
                replicas,
            } => {
                let step = micro_batch.saturating_mul(replicas);
                let subject = if stage == 0 {
                    format!("the ramp's {what} {}", group_digits(value))
                } else {
                    format!("stage {stage}: {what} {}", group_digits(value))
                };
                format!(
                    "{subject} is not a multiple of micro_batch {micro_batch} × replicas {replicas} = {}",
                    group_digits(step)
                )
            }
            StageError::MissingUntil { stage } => {
                format!(
                    "stage {stage} has no `until`, and only the last stage lasts to the end of the run"
                )
            }
            StageError::LastUntil { stage } => format!(
                "the last stage ({stage}) has `until`, but the last stage lasts to the end of the run"
            ),
            StageError::NotOrdered {
                stage,
                until,
                previous,
            } => format!(
                "stage {stage} ends at {until}, which is not after the previous stage's end at {} {}",
                group_digits(previous),
                until.unit().plural()
            ),
            StageError::NotExact {
                stage,
                until,
                start,
                per_update,
            } => {
                let unit = until.unit().plural();
                format!(
                    "stage {stage} ends at {until}, which is not a whole number of its updates: it starts at {} {unit} and one update is {} {unit}",
                    group_digits(start),
                    group_digits(per_update)
                )
            }
            StageError::RampShrinks { start, end } => format!(
                "the ramp starts at global batch {}, above its final global batch {}",
                group_digits(start),
                group_digits(end)
            ),
            StageError::RampEmpty { batch } => format!(
                "the ramp starts at the final global batch {}: there is nothing to ramp",
                group_digits(batch)
            ),
            StageError::RampIncrement {
                start,
                end,
                increment,
            } => format!(
                "final global batch {} − start {} = {} is not a multiple of the increment {}",
                group_digits(end),
                group_digits(start),
                group_digits(end - start),
                group_digits(increment)
            ),
            StageError::RampZero { what } => format!("the ramp's {what} is 0"),
            StageError::RampZeroLength => "the ramp is over a length of 0".to_owned(),
            StageError::TooMany { stages } => format!(
                "{} stages is more than the {} a plan may have",
                group_digits(stages),
                group_digits(MAX_STAGES as u64)
            ),
            StageError::Empty => "no stage is given".to_owned(),
            StageError::Plan {
                stage: 0,
                ref error,
            } => format!("ramp: {}", error.message()),
            StageError::Plan { stage, ref error } => {
                format!("stage {stage}: {}", error.message())
            }
        }
    }

    /// A short label for the value itself.
    pub fn label(&self) -> String {
        match self {
            StageError::BatchNotGiven { both: true, .. } => "give one of the two".to_owned(),
            StageError::BatchNotGiven { both: false, .. } => "no batch".to_owned(),
            StageError::ZeroBatch { .. } => "must be at least m·D".to_owned(),
            StageError::NotMultiple {
                micro_batch,
                replicas,
                ..
            } => format!(
                "not a multiple of m·D = {}",
                group_digits(micro_batch.saturating_mul(*replicas))
            ),
            StageError::MissingUntil { .. } => "no `until`".to_owned(),
            StageError::LastUntil { .. } => "the last stage has no end".to_owned(),
            StageError::NotOrdered { .. } => "not after the previous stage".to_owned(),
            StageError::NotExact { .. } => "not a whole update of this stage".to_owned(),
            StageError::RampShrinks { .. } => "above the final batch".to_owned(),
            StageError::RampEmpty { .. } => "equals the final batch".to_owned(),
            StageError::RampIncrement { .. } => "not whole increments".to_owned(),
            StageError::RampZero { .. } | StageError::RampZeroLength => {
                "must be more than 0".to_owned()
            }
            StageError::TooMany { .. } => "too many stages".to_owned(),
            StageError::Empty => "no stage".to_owned(),
            StageError::Plan { error, .. } => error.label(),
        }
    }

    /// The way out, with the values that pass where there are some.
    pub fn fix(&self) -> Fix {
        match *self {
            StageError::BatchNotGiven { .. } => {
                Fix::text("give global_batch (B) or accumulation (A), not both")
            }
            StageError::ZeroBatch { .. } => Fix::text("give a batch of at least m·D"),
            StageError::NotMultiple {
                value,
                micro_batch,
                replicas,
                ..
            } => {
                let step = micro_batch.saturating_mul(replicas).max(1);
                let below = value / step * step;
                let above = below.saturating_add(step);
                let choices: Vec<u64> = [below, above].into_iter().filter(|&v| v > 0).collect();
                let shown: Vec<String> = choices
                    .iter()
                    .map(|&v| format!("{} (accumulation {})", group_digits(v), v / step))
                    .collect();
                Fix::with_options(
                    format!("use {}", shown.join(" or ")),
                    choices
                        .iter()
                        .map(|&v| vec![Edit::new(Role::GlobalBatch, v)])
                        .collect(),
                )
            }
            StageError::MissingUntil { .. } => Fix::text(
                "say where the stage ends, counted from the start of the run: until = \"2B tokens\"",
            ),
            StageError::LastUntil { .. } => {
                Fix::text("remove `until` from the last stage, or add the stage that follows it")
            }
            StageError::NotOrdered { .. } => Fix::text(
                "list the stages in order; each `until` is counted from the start of the run, not from the stage's start",
            ),
            StageError::NotExact {
                until,
                start,
                per_update,
                ..
            } => {
                let unit = until.unit().plural();
                let length = until.value().saturating_sub(start);
                let below = start.saturating_add(length / per_update.max(1) * per_update);
                let above = below.saturating_add(per_update);
                // Plain digits: the fix is written back as a span.
                if below > start {
                    Fix::text(format!(
                        "use until = \"{below} {unit}\" or \"{above} {unit}\""
                    ))
                } else {
                    Fix::text(format!("use until = \"{above} {unit}\""))
                }
            }
            StageError::RampZero { what } => Fix::text(format!(
                "give the ramp's {what} as a multiple of m·D, at least 1"
            )),
            StageError::RampShrinks { .. } => Fix::text("lower start below the final global batch"),
            StageError::RampEmpty { .. } => {
                Fix::text("remove the ramp, or lower start below the final global batch")
            }
            StageError::RampIncrement {
                start,
                end,
                increment,
            } => {
                let diff = end - start;
                let below = diff / increment.max(1) * increment;
                let mut starts = Vec::new();
                if below > 0 {
                    starts.push(end - below);
                }
                if let Some(s) = end.checked_sub(below + increment).filter(|&s| s > 0) {
                    starts.push(s);
                }
                let shown: Vec<String> = starts.iter().map(|&s| group_digits(s)).collect();
                if shown.is_empty() {
                    Fix::text(format!(
                        "use an increment that divides {}",
                        group_digits(diff)
                    ))
                } else {
                    Fix::text(format!("use start {}", shown.join(" or ")))
                }
            }
            StageError::RampZeroLength => {
                Fix::text("give the ramp's length, e.g. over = \"300k examples\"")
            }
            StageError::TooMany { .. } => Fix::text("use a larger increment, or fewer stages"),
            StageError::Empty => Fix::text("give at least one stage"),
            StageError::Plan { ref error, .. } => error.fix(),
        }
    }
}

impl fmt::Display for StageError {
    /// `message; fix`, for logs; front ends render the parts.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}; {}", self.message(), self.fix().text)
    }
}

impl std::error::Error for StageError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StageError::Plan { error, .. } => Some(error),
            _ => None,
        }
    }
}

impl Finding {
    /// A stage error as a finding, below `at` (the field that holds the
    /// stages list or the ramp).
    pub fn from_stage_error(err: &StageError, at: &FieldPath) -> Finding {
        let finding =
            Finding::new(err.code(), err.path(at), err.message(), err.label()).with_fix(err.fix());
        match err {
            StageError::NotMultiple { stage: 1.., .. } => finding.with_role(Role::GlobalBatch),
            _ => finding,
        }
    }
}

/// One stage of a [`StagedPlan`]: a [`Plan`] and the updates it covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Stage {
    plan: Plan,
    start: Updates,
    end: Option<Updates>,
    examples_before: Examples,
    microbatches_before: u64,
}

impl Stage {
    /// The plan of this stage (its `A` and `B`).
    #[inline]
    pub const fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The index of the stage's first update (0-based): the updates applied before it.
    #[inline]
    pub const fn start(&self) -> Updates {
        self.start
    }

    /// The index one past the stage's last update; `None` for the last stage.
    #[inline]
    pub const fn end(&self) -> Option<Updates> {
        self.end
    }

    /// How many updates the stage lasts; `None` for the last stage.
    #[inline]
    pub fn updates(&self) -> Option<Updates> {
        self.end
            .map(|end| Updates::new(end.get() - self.start.get()))
    }

    /// Examples consumed before the stage starts.
    #[inline]
    pub const fn examples_before(&self) -> Examples {
        self.examples_before
    }

    /// Tokens consumed before the stage starts, when `L` is fixed.
    #[inline]
    pub fn tokens_before(&self) -> Option<Tokens> {
        self.plan
            .seq_len()
            .map(|len| Tokens::new(self.examples_before.get() * len))
    }

    /// How much of `unit` was consumed before the stage starts (microbatches
    /// per replica, as a replica's loop counts them).
    fn before(&self, unit: UnitKind) -> Result<u64, PlanError> {
        match unit {
            UnitKind::Update => Ok(self.start.get()),
            UnitKind::Microbatch => Ok(self.microbatches_before),
            UnitKind::Example => Ok(self.examples_before.get()),
            UnitKind::Token => {
                match self.plan.seq_len() {
                    Some(len) => self.examples_before.get().checked_mul(len).ok_or_else(|| {
                        PlanError::Overflow {
                            equation: format!(
                                "{} examples × seq_len {len}",
                                self.examples_before.get()
                            ),
                        }
                    }),
                    None => Err(PlanError::NeedsSeqLen {
                        value: self.examples_before.get(),
                        unit: UnitKind::Example,
                    }),
                }
            }
        }
    }
}

/// A plan whose `A` (and so `B`) changes at stage boundaries, with `m`, `D`
/// and `L` fixed. See the [module docs](self). A constant plan is a staged
/// plan of one stage.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StagedPlan {
    stages: Vec<Stage>,
}

impl From<Plan> for StagedPlan {
    fn from(plan: Plan) -> StagedPlan {
        StagedPlan::constant(plan)
    }
}

impl From<&Plan> for StagedPlan {
    fn from(plan: &Plan) -> StagedPlan {
        StagedPlan::constant(*plan)
    }
}

impl From<&StagedPlan> for StagedPlan {
    fn from(plan: &StagedPlan) -> StagedPlan {
        plan.clone()
    }
}

impl StagedPlan {
    /// One stage that lasts the whole run.
    #[must_use]
    pub fn constant(plan: Plan) -> StagedPlan {
        StagedPlan {
            stages: vec![Stage {
                plan,
                start: Updates::ZERO,
                end: None,
                examples_before: Examples::ZERO,
                microbatches_before: 0,
            }],
        }
    }

    /// Stages from their declarations, on the `m`, `D` and `L` of `base`
    /// (its `A` is not used). Every stage's `B` must be a multiple of `m·D`
    /// (Megatron-LM asserts the same of every batch it reaches), stages are
    /// listed in order, and every boundary falls on a whole update of its
    /// stage.
    pub fn from_specs(base: &Plan, specs: &[StageSpec]) -> Result<StagedPlan, StageError> {
        if specs.is_empty() {
            return Err(StageError::Empty);
        }
        if specs.len() > MAX_STAGES {
            return Err(StageError::TooMany {
                stages: specs.len() as u64,
            });
        }
        let mut builder = Builder::new(base);
        for (i, spec) in specs.iter().enumerate() {
            let stage = i + 1;
            let accumulation = builder.accumulation_of(stage, spec)?;
            let last = stage == specs.len();
            match (spec.until, last) {
                (Some(_), true) => return Err(StageError::LastUntil { stage }),
                (None, false) => return Err(StageError::MissingUntil { stage }),
                (None, true) => builder.push_open(stage, accumulation)?,
                (Some(until), false) => {
                    let plan = builder.plan(stage, accumulation)?;
                    let start = builder
                        .position(&plan, until.unit())
                        .map_err(|error| StageError::Plan { stage, error })?;
                    if until.value() <= start {
                        return Err(StageError::NotOrdered {
                            stage,
                            until,
                            previous: start,
                        });
                    }
                    let per_update = plan
                        .per_update(until.unit())
                        .map_err(|error| StageError::Plan { stage, error })?;
                    let length = until.value() - start;
                    if !length.is_multiple_of(per_update) {
                        return Err(StageError::NotExact {
                            stage,
                            until,
                            start,
                            per_update,
                        });
                    }
                    builder.push(stage, plan, length / per_update)?;
                }
            }
        }
        Ok(builder.finish())
    }

    /// The stages of a ramp-up that ends at `base`'s own batch: every stage
    /// in `before` has its `until`, and after the last one the run trains at
    /// `base`'s `A` to its end. This is how a config writes it: `[batch]`
    /// holds the full batch, `[[batch.stages]]` the smaller ones before it.
    pub fn ramp_to(base: &Plan, before: &[StageSpec]) -> Result<StagedPlan, StageError> {
        if let Some(i) = before.iter().position(|spec| spec.until.is_none()) {
            return Err(StageError::MissingUntil { stage: i + 1 });
        }
        let mut specs = before.to_vec();
        specs.push(StageSpec::accumulation(base.accumulation()));
        StagedPlan::from_specs(base, &specs)
    }

    /// A linear ramp from `ramp.start` to `base`'s global batch, stepped the
    /// way Megatron-LM's ramp-up calculator steps it.
    ///
    /// With `k` increments (`k = (B − start) / increment`) and the ramp over
    /// `S` (examples, tokens, microbatches or updates), each increment gets
    /// `S / k` of the ramp as a real number. Before each update, with `c` of
    /// `S`'s unit consumed so far, the batch is `B` when `c > S`, else
    /// `start + ⌊c / (S / k)⌋ · increment`. In examples this is exactly
    /// Megatron-LM's rule: `RampupBatchsizeNumMicroBatchesCalculator.update`
    /// in `megatron/core/num_microbatches_calculator.py` (the class as it was
    /// before Megatron-LM replaced it with step schedules in April 2026),
    /// called with the consumed samples before every iteration, in f64 as
    /// Python computes it. Every batch reached must be a multiple of `m·D`,
    /// as that calculator's consistency check asserts.
    pub fn linear(base: &Plan, ramp: &LinearRamp) -> Result<StagedPlan, StageError> {
        let end = base.effective_batch().get();
        let step = base.micro_batch() * base.replicas();
        if ramp.start == 0 {
            return Err(StageError::RampZero { what: "start" });
        }
        if ramp.increment == 0 {
            return Err(StageError::RampZero { what: "increment" });
        }
        if ramp.start > end {
            return Err(StageError::RampShrinks {
                start: ramp.start,
                end,
            });
        }
        if ramp.start == end {
            return Err(StageError::RampEmpty { batch: end });
        }
        if !(end - ramp.start).is_multiple_of(ramp.increment) {
            return Err(StageError::RampIncrement {
                start: ramp.start,
                end,
                increment: ramp.increment,
            });
        }
        for (what, value) in [("start", ramp.start), ("increment", ramp.increment)] {
            if !value.is_multiple_of(step) {
                return Err(StageError::NotMultiple {
                    stage: 0,
                    what,
                    value,
                    micro_batch: base.micro_batch(),
                    replicas: base.replicas(),
                });
            }
        }
        if ramp.over.value() == 0 {
            return Err(StageError::RampZeroLength);
        }
        let increments = (end - ramp.start) / ramp.increment;
        if increments >= MAX_STAGES as u64 {
            return Err(StageError::TooMany {
                stages: increments + 1,
            });
        }
        let unit = ramp.over.unit();
        let length = ramp.over.value();
        // Megatron-LM: `rampup_samples_per_increment = ramup_samples / num_increments`,
        // a Python float (true division of two ints, correctly rounded like f64).
        let per_increment = length as f64 / increments as f64;
        let level = |consumed: u64| -> u64 {
            if consumed > length {
                increments
            } else {
                // `int(consumed_samples / rampup_samples_per_increment)`: truncation.
                ((consumed as f64 / per_increment) as u64).min(increments)
            }
        };
        let mut builder = Builder::new(base);
        let mut consumed: u64 = 0;
        let mut stage = 1;
        loop {
            let k = level(consumed);
            let batch = ramp.start + k * ramp.increment;
            let plan = builder.plan(stage, batch / step)?;
            if k == increments {
                builder.push_open(stage, batch / step)?;
                break;
            }
            let per_update = plan
                .per_update(unit)
                .map_err(|error| StageError::Plan { stage: 0, error })?;
            // The first update count `n ≥ 1` after which the level changes:
            // start from the real-number estimate and correct it, so that the
            // float rule above decides, not this estimate.
            let target = (k + 1) as f64 * per_increment;
            let mut n = (((target - consumed as f64) / per_update as f64).ceil() as u64).max(1);
            let at = |n: u64| consumed.saturating_add(n.saturating_mul(per_update));
            while n > 1 && level(at(n - 1)) != k {
                n -= 1;
            }
            while level(at(n)) == k {
                n += 1;
            }
            builder.push(stage, plan, n)?;
            consumed = at(n);
            stage += 1;
        }
        Ok(builder.finish())
    }

    /// The stages, in order; the last one is open-ended.
    #[inline]
    pub fn stages(&self) -> &[Stage] {
        &self.stages
    }

    /// Whether the plan has a single stage.
    #[inline]
    pub fn is_constant(&self) -> bool {
        self.stages.len() == 1
    }

    /// The stage of update `index` (0-based: the update applied after
    /// `index` others).
    pub fn stage_at(&self, index: Updates) -> &Stage {
        let i = self
            .stages
            .partition_point(|stage| stage.start <= index)
            .saturating_sub(1);
        &self.stages[i]
    }

    /// The index (0-based) of the stage of update `index`.
    pub fn stage_index_at(&self, index: Updates) -> usize {
        self.stages
            .partition_point(|stage| stage.start <= index)
            .saturating_sub(1)
    }

    /// The plan of update `index` (0-based).
    #[inline]
    pub fn plan_at(&self, index: Updates) -> &Plan {
        &self.stage_at(index).plan
    }

    /// The plan of the last stage: the full batch after the ramp.
    #[inline]
    pub fn final_plan(&self) -> &Plan {
        &self.stages[self.stages.len() - 1].plan
    }

    /// The plan of the first stage.
    #[inline]
    pub fn first_plan(&self) -> &Plan {
        &self.stages[0].plan
    }

    /// How much of `unit` the first `updates` updates consume: examples,
    /// tokens (with `L`), microbatches per replica, or the updates themselves.
    pub fn consumed(&self, updates: Updates, unit: UnitKind) -> Result<u64, PlanError> {
        if unit == UnitKind::Update {
            return Ok(updates.get());
        }
        let stage = self.stage_at(updates.saturating_sub(Updates::new(1)));
        let stage = if updates.is_zero() {
            &self.stages[0]
        } else {
            stage
        };
        let within = updates.get() - stage.start.get();
        let before = stage.before(unit)?;
        let per = stage.plan.per_update(unit)?;
        within
            .checked_mul(per)
            .and_then(|v| v.checked_add(before))
            .ok_or_else(|| PlanError::Overflow {
                equation: format!("{before} + {within} updates × {per} {unit} per update"),
            })
    }

    /// Examples consumed by the first `updates` updates.
    pub fn examples_at(&self, updates: Updates) -> Result<Examples, PlanError> {
        self.consumed(updates, UnitKind::Example).map(Examples::new)
    }

    /// Tokens consumed by the first `updates` updates, when `L` is fixed.
    pub fn tokens_at(&self, updates: Updates) -> Result<Tokens, PlanError> {
        self.consumed(updates, UnitKind::Token).map(Tokens::new)
    }

    /// The number of updates after which `value` of `unit` has been
    /// consumed, through the stages, with an explicit rounding.
    pub fn to_updates(
        &self,
        value: u64,
        unit: UnitKind,
        rounding: Rounding,
    ) -> Result<Updates, PlanError> {
        if unit == UnitKind::Update {
            return Ok(Updates::new(value));
        }
        // The stage in which `value` falls: the last one that starts at or before it.
        let mut found = &self.stages[0];
        for stage in &self.stages {
            if stage.before(unit)? <= value {
                found = stage;
            } else {
                break;
            }
        }
        let before = found.before(unit)?;
        let rest = value - before;
        let within = found.plan.to_updates(rest, unit, rounding).map_err(|err| {
            match err {
                // Report the whole value, not the part inside the stage.
                PlanError::NotWholeUpdates { per_update, .. } => PlanError::NotWholeUpdates {
                    value,
                    unit,
                    per_update,
                },
                other => other,
            }
        })?;
        within.checked_add(found.start).map_err(PlanError::from)
    }

    /// A span as updates through the stages, with an explicit rounding.
    pub fn span_to_updates(&self, span: &Span, rounding: Rounding) -> Result<Updates, PlanError> {
        self.to_updates(span.value(), span.unit(), rounding)
    }

    /// Converts between any two units through the stages: to updates with
    /// `rounding`, then what those updates consume in `to`.
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
        if self.is_constant() {
            return self.stages[0].plan.convert(value, from, to, rounding);
        }
        let updates = self.to_updates(value, from, rounding)?;
        self.consumed(updates, to)
    }
}

/// Accumulates stages, checking each one's plan and the running totals.
struct Builder<'a> {
    base: &'a Plan,
    stages: Vec<Stage>,
    start: Updates,
    examples: u64,
    microbatches: u64,
}

impl<'a> Builder<'a> {
    fn new(base: &'a Plan) -> Builder<'a> {
        Builder {
            base,
            stages: Vec::new(),
            start: Updates::ZERO,
            examples: 0,
            microbatches: 0,
        }
    }

    /// `A` of a declared stage, checking that its `B` is a multiple of `m·D`.
    fn accumulation_of(&self, stage: usize, spec: &StageSpec) -> Result<u64, StageError> {
        match (spec.global_batch, spec.accumulation) {
            (Some(_), Some(_)) => Err(StageError::BatchNotGiven { stage, both: true }),
            (None, None) => Err(StageError::BatchNotGiven { stage, both: false }),
            (Some(0), None) | (None, Some(0)) => Err(StageError::ZeroBatch { stage }),
            (None, Some(accumulation)) => Ok(accumulation),
            (Some(batch), None) => {
                let step = self.base.micro_batch() * self.base.replicas();
                if batch.is_multiple_of(step) {
                    Ok(batch / step)
                } else {
                    Err(StageError::NotMultiple {
                        stage,
                        what: "global_batch",
                        value: batch,
                        micro_batch: self.base.micro_batch(),
                        replicas: self.base.replicas(),
                    })
                }
            }
        }
    }

    /// The base plan with `A` replaced.
    fn plan(&self, stage: usize, accumulation: u64) -> Result<Plan, StageError> {
        let plan = match self.base.layout() {
            Some(layout) => Plan::with_layout(self.base.micro_batch(), accumulation, layout),
            None => Plan::new(self.base.micro_batch(), accumulation, self.base.replicas()),
        };
        let plan = match (plan, self.base.seq_len()) {
            (Ok(plan), Some(len)) => plan.with_seq_len(len),
            (plan, _) => plan,
        };
        plan.map_err(|error| StageError::Plan { stage, error })
    }

    /// How much of `unit` the stages so far consume.
    fn position(&self, plan: &Plan, unit: UnitKind) -> Result<u64, PlanError> {
        match unit {
            UnitKind::Update => Ok(self.start.get()),
            UnitKind::Microbatch => Ok(self.microbatches),
            UnitKind::Example => Ok(self.examples),
            UnitKind::Token => {
                let len = plan.seq_len().ok_or(PlanError::NeedsSeqLen {
                    value: self.examples,
                    unit: UnitKind::Example,
                })?;
                self.examples
                    .checked_mul(len)
                    .ok_or_else(|| PlanError::Overflow {
                        equation: format!("{} examples × seq_len {len}", self.examples),
                    })
            }
        }
    }

    /// Appends a stage of `updates` updates.
    fn push(&mut self, stage: usize, plan: Plan, updates: u64) -> Result<(), StageError> {
        let overflow = |what: &str| StageError::Plan {
            stage,
            error: PlanError::Overflow {
                equation: what.to_owned(),
            },
        };
        let end = self
            .start
            .get()
            .checked_add(updates)
            .ok_or_else(|| overflow("updates of all stages"))?;
        let examples = updates
            .checked_mul(plan.effective_batch().get())
            .and_then(|e| e.checked_add(self.examples))
            .ok_or_else(|| overflow("examples of all stages"))?;
        let microbatches = updates
            .checked_mul(plan.accumulation())
            .and_then(|m| m.checked_add(self.microbatches))
            .ok_or_else(|| overflow("microbatches of all stages"))?;
        if let Some(len) = plan.seq_len() {
            examples
                .checked_mul(len)
                .ok_or_else(|| overflow("tokens of all stages"))?;
        }
        // Two neighbouring stages of the same batch are one stage.
        match self.stages.last_mut() {
            Some(last) if last.plan == plan => last.end = Some(Updates::new(end)),
            _ => self.stages.push(Stage {
                plan,
                start: self.start,
                end: Some(Updates::new(end)),
                examples_before: Examples::new(self.examples),
                microbatches_before: self.microbatches,
            }),
        }
        self.start = Updates::new(end);
        self.examples = examples;
        self.microbatches = microbatches;
        Ok(())
    }

    /// Appends the last, open-ended stage.
    fn push_open(&mut self, stage: usize, accumulation: u64) -> Result<(), StageError> {
        let plan = self.plan(stage, accumulation)?;
        match self.stages.last_mut() {
            Some(last) if last.plan == plan => last.end = None,
            _ => self.stages.push(Stage {
                plan,
                start: self.start,
                end: None,
                examples_before: Examples::new(self.examples),
                microbatches_before: self.microbatches,
            }),
        }
        Ok(())
    }

    fn finish(self) -> StagedPlan {
        StagedPlan {
            stages: self.stages,
        }
    }
}

#[cfg(test)]
mod tests;
