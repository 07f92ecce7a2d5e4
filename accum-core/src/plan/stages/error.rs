//! What can be wrong with the stages of a plan, as data: each
//! [`StageError`] has its code, the path of the value to change below the
//! stages' field, a message with the numbers, a label and the fix.

use std::fmt;

use super::MAX_STAGES;
use crate::code::Code;
use crate::plan::{Edit, Fix, PlanError, Role};
use crate::span::Span;
use crate::units::group_digits;

/// Everything that can be wrong with the stages of a plan. Each message
/// states the numbers and the way out.
#[derive(Clone, PartialEq, Eq)]
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

crate::code::debug_as_display!(StageError);

impl std::error::Error for StageError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StageError::Plan { error, .. } => Some(error),
            _ => None,
        }
    }
}
