//! [`EngineError`]: why the engine could not start, or stopped. Each
//! variant carries the numbers of the problem as fields; `Display` states
//! them with the way out.

use std::fmt;

use super::hooks::ObserverError;
use super::{MAX_ACTIVATION_BYTES, MAX_GROUP_BUFFER_BYTES};
use crate::code::Code;
use crate::data::OverlapError;
use crate::driver::StageGroupError;
use crate::plan::PlanError;
use crate::replica::ReduceError;
use crate::schedule::ScheduleError;
use crate::settings::{Normalization, SettingError};

/// Why the engine could not start or stopped.
#[non_exhaustive]
pub enum EngineError {
    /// Settings are invalid (every finding).
    Invalid(Vec<SettingError>),
    /// The plan rejects the data or a span (`accum::plan::partial-group`, `accum::calc::tokens`).
    Plan(PlanError),
    /// The data is too small for the plan under the last-group policy.
    NotEnoughData {
        /// Examples in the data.
        examples: u64,
        /// Examples per update `B`.
        effective_batch: u64,
    },
    /// The activation workspaces would exceed [`MAX_ACTIVATION_BYTES`] (`accum::run::memory`).
    TooLarge {
        /// Positions per microbatch (`m × max_len`).
        positions: u64,
        /// Replicas.
        replicas: u64,
        /// Bytes needed over all replicas.
        bytes: u64,
    },
    /// The run was interrupted (Ctrl-C) inside a group, which was not
    /// applied; [`Engine::run`](super::Engine::run) ends the run there.
    Interrupted {
        /// The attempt left unfinished.
        attempt: u64,
    },
    /// The group buffers would exceed [`MAX_GROUP_BUFFER_BYTES`].
    GroupTooLarge {
        /// The largest accumulation of the stages.
        accumulation: u64,
        /// Examples per microbatch.
        micro_batch: u64,
        /// Replicas.
        replicas: u64,
        /// Bytes needed.
        bytes: u64,
    },
    /// The schedule's lengths do not make a run: a warmup longer than it
    /// (`accum::span::warmup`), or a run of no update.
    Schedule(ScheduleError),
    /// An example reached two replicas in one epoch (`accum::run::data-parallel`).
    Overlap(OverlapError),
    /// With stages under `last_group = "error"`: a stage's group would be
    /// partial (`accum::plan::partial-group`).
    StageGroup(StageGroupError),
    /// A collective failed.
    Reduce(ReduceError),
    /// A replica thread panicked.
    ReplicaPanicked {
        /// The replica's rank.
        replica: usize,
        /// The panic message.
        message: String,
    },
    /// A replica failed while processing one microbatch of a group; the
    /// group was not applied.
    MicrobatchFailed {
        /// The update attempt, 1-based.
        attempt: u64,
        /// The replica's rank.
        replica: usize,
        /// The microbatch's index within the group on that replica.
        microbatch: usize,
        /// What went wrong.
        message: String,
    },
    /// `accum::run::normalization`: the group's token weights do not sum to one (normalized twice or not at all).
    Normalization {
        /// The attempt.
        attempt: u64,
        /// The sum of the weights.
        weight: f64,
        /// What it should be.
        expected: f64,
        /// The normalization mode.
        normalization: Normalization,
    },
    /// `accum::run::normalization` cannot be checked: the model evaluated supervised tokens but
    /// reported no token weights (`LossSums::weight` is 0).
    LossWeightsMissing {
        /// The attempt.
        attempt: u64,
        /// The model's kind ([`Model::kind`](crate::model::Model::kind)).
        model: &'static str,
        /// Supervised tokens the model reported for the group.
        tokens: u64,
    },
    /// `accum::run::zeroing`: gradients were zeroed inside the group.
    Zeroing {
        /// The attempt.
        attempt: u64,
        /// Zeroings observed before the update, over all replicas.
        zeroings: u64,
    },
    /// `accum::run::scheduler`: the scheduler stepped a different number of times than updates were applied.
    ScheduleDrift {
        /// The attempt.
        attempt: u64,
        /// Scheduler steps.
        scheduler_steps: u64,
        /// Applied updates.
        applied_updates: u64,
    },
    /// Too many attempts in a row were skipped for non-finite gradients.
    TooManySkips {
        /// Skipped attempts in a row.
        skipped: u64,
        /// The loss scale now.
        loss_scale: f64,
    },
    /// An observer failed (for example a dump that could not be written);
    /// the run stops at that update attempt.
    Observer {
        /// The attempt, 1-based.
        attempt: u64,
        /// What the observer reported.
        source: ObserverError,
    },
    /// The backend's number of replicas differs from the plan's `D`.
    World {
        /// `D` of the plan.
        replicas: u64,
        /// Replicas of the backend (MPI: the world size).
        world: usize,
    },
    /// `accum::run::data-parallel`: a replica in another process loaded other examples than this
    /// process planned for it (the processes disagree on config, data or seed).
    ShardMismatch {
        /// The attempt.
        attempt: u64,
        /// The replica whose examples differ.
        replica: usize,
        /// Its microbatch index within the group.
        microbatch: usize,
    },
    /// A failure injected with [`Engine::inject_failure`](super::Engine::inject_failure) (a test hook).
    InjectedFailure {
        /// The attempt.
        attempt: u64,
        /// The replica.
        replica: usize,
        /// The microbatch index within the group.
        microbatch: usize,
    },
}

impl EngineError {
    /// The rule of docs/rules.md the error breaks, when it breaks one;
    /// `None` for a run that stopped for another reason (interrupted, a
    /// replica or an observer that failed).
    pub fn code(&self) -> Option<Code> {
        match self {
            EngineError::Invalid(_) => Some(Code::Settings),
            EngineError::Plan(e) => Some(e.code()),
            EngineError::NotEnoughData { .. } | EngineError::StageGroup(_) => {
                Some(Code::PartialGroup)
            }
            EngineError::TooLarge { .. } | EngineError::GroupTooLarge { .. } => Some(Code::Memory),
            EngineError::Schedule(e) => e.code(),
            EngineError::Overlap(_)
            | EngineError::World { .. }
            | EngineError::ShardMismatch { .. } => Some(Code::DataParallel),
            EngineError::Normalization { .. } | EngineError::LossWeightsMissing { .. } => {
                Some(Code::Normalization)
            }
            EngineError::Zeroing { .. } => Some(Code::Zeroing),
            EngineError::ScheduleDrift { .. } => Some(Code::Scheduler),
            EngineError::TooManySkips { .. } => Some(Code::LossScale),
            EngineError::Interrupted { .. }
            | EngineError::Reduce(_)
            | EngineError::ReplicaPanicked { .. }
            | EngineError::MicrobatchFailed { .. }
            | EngineError::Observer { .. }
            | EngineError::InjectedFailure { .. } => None,
        }
    }
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineError::Invalid(errors) => {
                write!(f, "{} invalid setting(s): ", errors.len())?;
                for (i, e) in errors.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    write!(f, "{e}")?;
                }
                Ok(())
            }
            EngineError::Plan(e) => write!(f, "{e}"),
            EngineError::NotEnoughData {
                examples,
                effective_batch,
            } => write!(
                f,
                "the data has {examples} examples, fewer than one update of {effective_batch} examples, and last_group is \"drop\": \
                 nothing would be trained; use at least {effective_batch} examples or last_group \"process\""
            ),
            EngineError::Interrupted { attempt } => write!(
                f,
                "interrupted during update attempt {attempt}; that group was not applied"
            ),
            EngineError::GroupTooLarge {
                accumulation,
                micro_batch,
                replicas,
                bytes,
            } => write!(
                f,
                "the buffers of one group (accumulation {accumulation} microbatches of {micro_batch} examples on {replicas} replica(s)) \
                 need {:.1} GiB, over the engine's limit of {:.0} GiB; to run it, lower accumulation \
                 (a smaller global batch), or check the plan with `accum validate` and `accum sheet` without running it",
                *bytes as f64 / f64::from(1u32 << 30),
                MAX_GROUP_BUFFER_BYTES as f64 / f64::from(1u32 << 30),
            ),
            EngineError::TooLarge {
                positions,
                replicas,
                bytes,
            } => write!(
                f,
                "activations for {positions} positions per microbatch (micro_batch × data.max_len) on {replicas} replica(s) \
                 need {:.1} GiB, over the engine's limit of {:.0} GiB; lower micro_batch (and raise accumulation to keep the batch) \
                 or data.max_len",
                *bytes as f64 / f64::from(1u32 << 30),
                MAX_ACTIVATION_BYTES as f64 / f64::from(1u32 << 30),
            ),
            EngineError::Schedule(e) => write!(f, "{e}"),
            EngineError::Overlap(e) => write!(f, "{e}"),
            EngineError::StageGroup(e) => write!(f, "{e}"),
            EngineError::Reduce(e) => write!(f, "{e}"),
            EngineError::ReplicaPanicked { replica, message } => {
                write!(f, "replica {replica} panicked: {message}")
            }
            EngineError::MicrobatchFailed {
                attempt,
                replica,
                microbatch,
                message,
            } => write!(
                f,
                "replica {replica} failed on microbatch {microbatch} of update attempt {attempt}: {message}; \
                 the group was not applied (no parameter change, no update counted)"
            ),
            EngineError::Normalization {
                attempt,
                weight,
                expected,
                normalization,
            } => write!(
                f,
                "attempt {attempt}: the token weights of the group sum to {weight:.6}, not {expected} ({normalization}); \
                 the loss was normalized {} (divide once by the group's global denominator, do not divide by A again)",
                if weight < expected {
                    "more than once"
                } else {
                    "too little"
                }
            ),
            EngineError::LossWeightsMissing {
                attempt,
                model,
                tokens,
            } => write!(
                f,
                "attempt {attempt}: the model `{model}` evaluated {tokens} supervised tokens but reported no loss weights \
                 (`LossSums::weight` is 0), so the engine cannot check that the loss was normalized exactly once; \
                 return in `weight` the sum of the weights it gave its tokens (`GradScale::token_weight`, loss scale removed)"
            ),
            EngineError::Zeroing { attempt, zeroings } => write!(
                f,
                "attempt {attempt}: gradients were zeroed {zeroings} time(s) inside the group; zero them once, after the update \
                 (zeroing per microbatch cancels accumulation)"
            ),
            EngineError::ScheduleDrift {
                attempt,
                scheduler_steps,
                applied_updates,
            } => write!(
                f,
                "attempt {attempt}: the scheduler stepped {scheduler_steps} times for {applied_updates} applied updates; \
                 step it once per applied update, not per microbatch or backward pass"
            ),
            EngineError::TooManySkips {
                skipped,
                loss_scale,
            } => write!(
                f,
                "{skipped} attempts in a row had non-finite gradients (loss scale now {loss_scale}); \
                 check the data and lower the learning rate or precision.loss_scale.init"
            ),
            EngineError::Observer { attempt, source } => {
                write!(f, "update attempt {attempt}: {source}")
            }
            EngineError::World { replicas, world } => write!(
                f,
                "the plan has {replicas} data-parallel replicas but the backend runs {world}; \
                 launch one process per replica (`mpirun -n {replicas}`) or set replicas = {world} in the config"
            ),
            EngineError::ShardMismatch {
                attempt,
                replica,
                microbatch,
            } => write!(
                f,
                "attempt {attempt}: replica {replica} loaded other examples in microbatch {microbatch} than this process \
                 planned for it; every process must run the same config, data and seed"
            ),
            EngineError::InjectedFailure {
                attempt,
                replica,
                microbatch,
            } => write!(
                f,
                "attempt {attempt}, microbatch {microbatch} on replica {replica}: injected failure (test hook)"
            ),
        }
    }
}

impl std::error::Error for EngineError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            EngineError::Observer { source, .. } => Some(source.as_ref()),
            EngineError::Plan(e) => Some(e),
            _ => None,
        }
    }
}

impl From<ScheduleError> for EngineError {
    fn from(e: ScheduleError) -> Self {
        match e {
            ScheduleError::Plan { error, .. } => EngineError::Plan(error),
            other => EngineError::Schedule(other),
        }
    }
}

impl From<PlanError> for EngineError {
    fn from(e: PlanError) -> Self {
        EngineError::Plan(e)
    }
}

// `?` in `main` prints the sentence, not the fields.
crate::code::debug_as_display!(EngineError);
