//! The group loop (SPEC R2, R4–R9): one optimizer update attempt per group
//! of `A` microbatches on each of `D` replicas.
//!
//! ```text
//!  fix the group ──► count all-reduce ──► denominator (R4, R5)
//!        │            (tokens, examples over all replicas)
//!        ▼
//!  replica r (thread, own grads):  for i in 0..A: forward, weighted loss,
//!        │                         backward adds into grads (no_sync, R9)
//!        ▼
//!  gradient all-reduce, once (R9, R17)
//!        ▼
//!  non-finite / fp16-range check ─► unscale ─► clip by global norm (R7)
//!        ▼
//!  finite: optimizer step, scheduler step (R8)   non-finite: skip (attempt only)
//!        ▼
//!  scaler update (R7) ─► zero grads once (R2) ─► memory peak (R11)
//! ```
//!
//! Entry points: [`Engine::new`] (the built-in model and data from an
//! [`EngineConfig`] and a [`Plan`]), [`Engine::with_model`] (any [`Model`]
//! and [`Dataset`]), then [`Engine::run`] with [`RunOptions`] (observer,
//! dump, stop flag, fault injection) giving a [`RunReport`]. [`run`] does
//! both for a config. [`Engine::with_reducer`] runs the replicas through
//! another [`Reducer`] backend than threads (one MPI process per replica).
//!
//! The loop checks its own invariants and fails loudly instead of training
//! the wrong objective: the token weights of a group must sum to one for
//! normalized losses (R4: normalization happens once), gradients are zeroed
//! only after the update (R2), the scheduler has stepped exactly once per
//! applied update (R8), and no example reaches two replicas in one epoch (R9).

use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::data::{Batch, Dataset, OverlapError, ShardCheck};
use crate::driver::{Draw, Walk};
use crate::dump::{DumpError, DumpWriter};
use crate::memory::{MemoryBreakdown, MemoryTracker};
use crate::model::{GradScale, LossSums, Model, TokenMlp};
use crate::optim::Optimizer;
use crate::plan::{Plan, PlanError};
use crate::replica::{InProcess, ReduceError, Reducer};
use crate::report::{
    Counters, CurvePoint, DroppedGroup, LossCurve, PlanSummary, REPORT_FORMAT, ReplicaCounters,
    RunReport, UpdateStats,
};
use crate::scaler::{FP16_MAX, LossScaler};
use crate::schedule::{Schedule, span_to_updates};
use crate::settings::{
    DataSection, LogAxis, LogSection, LossSection, ModelSection, Normalization, OptimizerSection,
    PrecisionMode, PrecisionSection, ScheduleSection,
};
use crate::span::Span;
use crate::tensor::Tensors;
use crate::units::{Examples, Microbatches, Tokens, UnitKind, Updates};

/// Consecutive skipped attempts after which a run gives up.
const MAX_SKIPS_IN_A_ROW: u64 = 64;

/// The most activation memory (all replicas together) the engine allocates:
/// a plan above it is refused before anything is allocated.
pub const MAX_ACTIVATION_BYTES: u64 = 8 << 30;

/// The most positions (examples × max_len) the built-in data may hold.
pub const MAX_DATA_POSITIONS: u64 = 100_000_000;

/// The most parameters the reference model may have.
pub const MAX_MODEL_PARAMS: u64 = 100_000_000;

/// Tolerance of the R4 check that a group's token weights sum to one.
const WEIGHT_TOLERANCE: f64 = 1e-4;

/// The engine-facing sections of a training config. The composed
/// `TrainingConfig` provides these plus the plan.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EngineConfig {
    /// `[loss]`.
    pub loss: LossSection,
    /// `[precision]`.
    pub precision: PrecisionSection,
    /// `[optimizer]`.
    pub optimizer: OptimizerSection,
    /// `[schedule]`.
    pub schedule: ScheduleSection,
    /// `[data]`.
    pub data: DataSection,
    /// `[model]`.
    pub model: ModelSection,
    /// `[log]`.
    pub log: LogSection,
}

/// One invalid setting: its key path and what is wrong, with the fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingError {
    /// Dotted key path, e.g. `"data.min_len"`.
    pub key: &'static str,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl fmt::Display for SettingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.key, self.message)
    }
}

impl EngineConfig {
    /// Limits of the built-in synthetic data and reference model, checked
    /// when an engine is built on them (not by [`validate`](Self::validate):
    /// a config that describes a real campaign is valid even when it is too
    /// large to run here).
    pub fn builtin_limits(&self) -> Vec<SettingError> {
        let mut errors = Vec::new();
        let d = &self.data;
        let positions = d.examples.saturating_mul(d.max_len);
        if positions > MAX_DATA_POSITIONS {
            errors.push(SettingError {
                key: "data.examples",
                message:
                format!(
                    "{} examples × max_len {} = {positions} positions is over the built-in data's limit of {MAX_DATA_POSITIONS}; \
                     use fewer examples or a shorter max_len (a campaign-sized config is a plan to check with `accum validate` and `accum sheet`)",
                    d.examples, d.max_len
                ),
            });
        }
        let (v, h, f) = (d.vocab, self.model.hidden, self.model.ffn);
        let params = v
            .saturating_mul(h)
            .saturating_add(h.saturating_mul(f))
            .saturating_add(f.saturating_mul(v))
            .saturating_add(f)
            .saturating_add(v);
        if params > MAX_MODEL_PARAMS {
            errors.push(SettingError {
                key: "model.hidden",
                message:
                format!(
                    "vocab {v} × hidden {h} and ffn {f} make {params} parameters, over the reference model's limit of \
                     {MAX_MODEL_PARAMS}; use smaller dimensions"
                ),
            });
        }
        errors
    }

    /// Every semantic problem of the sections, not just the first.
    pub fn validate(&self) -> Vec<SettingError> {
        let mut errors = Vec::new();
        let mut bad = |key: &'static str, message: String| {
            errors.push(SettingError { key, message });
        };
        let d = &self.data;
        if d.examples == 0 {
            bad(
                "data.examples",
                "is 0; the data needs at least one example".into(),
            );
        }
        if d.min_len == 0 {
            bad(
                "data.min_len",
                "is 0; sequences need at least 1 token".into(),
            );
        }
        if d.max_len < d.min_len {
            bad(
                "data.max_len",
                format!(
                    "{} is below min_len {}; use max_len ≥ {}",
                    d.max_len, d.min_len, d.min_len
                ),
            );
        }
        if d.vocab < 2 || d.vocab > u64::from(u32::MAX) {
            bad(
                "data.vocab",
                format!("{} is out of range; use 2 ≤ vocab ≤ {}", d.vocab, u32::MAX),
            );
        }
        let ignore = self.loss.ignore_index;
        if ignore >= 0 && (ignore as u64) < d.vocab {
            bad(
                "loss.ignore_index",
                format!(
                    "{ignore} is a real token id (vocab {}); it would silently drop that token: use a negative value such as -100",
                    d.vocab
                ),
            );
        }
        if self.model.hidden == 0 {
            bad("model.hidden", "is 0; use at least 1".into());
        }
        if self.model.ffn == 0 {
            bad("model.ffn", "is 0; use at least 1".into());
        }
        let o = &self.optimizer;
        if !(o.lr.is_finite() && o.lr >= 0.0) {
            bad(
                "optimizer.lr",
                format!("{} must be a finite number ≥ 0", o.lr),
            );
        }
        for (i, beta) in o.betas.iter().enumerate() {
            if !(0.0..1.0).contains(beta) {
                bad(
                    "optimizer.betas",
                    format!(
                        "beta{} = {beta} must be in [0, 1), e.g. [0.9, 0.999]",
                        i + 1
                    ),
                );
            }
        }
        if !(o.eps.is_finite() && o.eps > 0.0) {
            bad("optimizer.eps", format!("{} must be > 0, e.g. 1e-8", o.eps));
        }
        if !(o.weight_decay.is_finite() && o.weight_decay >= 0.0) {
            bad(
                "optimizer.weight_decay",
                format!("{} must be ≥ 0", o.weight_decay),
            );
        }
        if !(o.momentum.is_finite() && (0.0..=1.0).contains(&o.momentum)) {
            bad(
                "optimizer.momentum",
                format!("{} must be in [0, 1]", o.momentum),
            );
        }
        if let Some(clip) = o.clip_norm
            && !(clip.is_finite() && clip > 0.0)
        {
            bad(
                "optimizer.clip_norm",
                format!("{clip} must be > 0; use 0 to disable clipping"),
            );
        }
        let s = &self.precision.loss_scale;
        if !(s.init.is_finite() && s.init > 0.0 && s.init < f64::from(f32::MAX)) {
            bad(
                "precision.loss_scale.init",
                format!("{} must be a positive f32 value, e.g. 65536", s.init),
            );
        }
        if !(s.growth_factor.is_finite() && s.growth_factor >= 1.0) {
            bad(
                "precision.loss_scale.growth_factor",
                format!("{} must be ≥ 1, e.g. 2", s.growth_factor),
            );
        }
        if !(s.backoff_factor > 0.0 && s.backoff_factor < 1.0) {
            bad(
                "precision.loss_scale.backoff_factor",
                format!("{} must be in (0, 1), e.g. 0.5", s.backoff_factor),
            );
        }
        if s.growth_interval == 0 {
            bad(
                "precision.loss_scale.growth_interval",
                "is 0; use at least 1 update, e.g. 2000".into(),
            );
        }
        if self.schedule.run_length().value() == 0 {
            bad(
                "schedule.total",
                "is 0; a run needs at least 1 update".into(),
            );
        }
        if self.log.every.value() == 0 {
            bad(
                "log.every",
                "is 0; use at least 1, e.g. \"1 update\"".into(),
            );
        }
        errors
    }
}

/// Why the engine could not start or stopped.
#[derive(Debug)]
#[non_exhaustive]
pub enum EngineError {
    /// Settings are invalid (every finding).
    Invalid(Vec<SettingError>),
    /// The plan rejects the data or a span (R6, R15).
    Plan(PlanError),
    /// The data is too small for the plan under the last-group policy.
    NotEnoughData {
        /// Examples in the data.
        examples: u64,
        /// Examples per update `B`.
        effective_batch: u64,
    },
    /// The activation workspaces would exceed [`MAX_ACTIVATION_BYTES`] (R11, R16).
    TooLarge {
        /// Positions per microbatch (`m × max_len`).
        positions: u64,
        /// Replicas.
        replicas: u64,
        /// Bytes needed over all replicas.
        bytes: u64,
    },
    /// Warmup is longer than the run.
    WarmupTooLong {
        /// Warmup in updates.
        warmup: u64,
        /// Total in updates.
        total: u64,
    },
    /// An example reached two replicas in one epoch (R9).
    Overlap(OverlapError),
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
    /// R4: the group's token weights do not sum to one (normalized twice or not at all).
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
    /// R2: gradients were zeroed inside the group.
    Zeroing {
        /// The attempt.
        attempt: u64,
        /// Zeroings observed before the update, over all replicas.
        zeroings: u64,
    },
    /// R8: the scheduler stepped a different number of times than updates were applied.
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
    /// Writing the dump failed.
    Dump(DumpError),
    /// The backend's number of replicas differs from the plan's `D`.
    World {
        /// `D` of the plan.
        replicas: u64,
        /// Replicas of the backend (MPI: the world size).
        world: usize,
    },
    /// R9: a replica in another process loaded other examples than this
    /// process planned for it (the processes disagree on config, data or seed).
    ShardMismatch {
        /// The attempt.
        attempt: u64,
        /// The replica whose examples differ.
        replica: usize,
        /// Its microbatch index within the group.
        microbatch: usize,
    },
    /// A failure injected with [`Engine::inject_failure`] (a test hook).
    InjectedFailure {
        /// The attempt.
        attempt: u64,
        /// The replica.
        replica: usize,
        /// The microbatch index within the group.
        microbatch: usize,
    },
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
            EngineError::WarmupTooLong { warmup, total } => write!(
                f,
                "warmup of {warmup} updates is longer than the run of {total} updates; shorten the warmup or lengthen schedule.total"
            ),
            EngineError::Overlap(e) => write!(f, "{e}"),
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
            EngineError::Dump(e) => write!(f, "{e}"),
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

impl std::error::Error for EngineError {}

impl From<PlanError> for EngineError {
    fn from(e: PlanError) -> Self {
        EngineError::Plan(e)
    }
}

impl From<DumpError> for EngineError {
    fn from(e: DumpError) -> Self {
        EngineError::Dump(e)
    }
}

/// One microbatch, as the observer sees it (delivered after the group's
/// backward passes, in replica and microbatch order).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MicrobatchEvent {
    /// The attempt, 1-based.
    pub attempt: u64,
    /// The replica's rank.
    pub replica: usize,
    /// Index within the group on this replica, 0-based.
    pub index: usize,
    /// Examples in the microbatch.
    pub examples: u64,
    /// Supervised tokens in the microbatch.
    pub tokens: u64,
    /// Mean token loss of the microbatch (for display; not the objective).
    pub mean_token_loss: f64,
}

/// Hooks called by the loop.
pub trait Observer {
    /// After each microbatch.
    fn on_microbatch(&mut self, _event: &MicrobatchEvent) {}
    /// After each update attempt, applied or skipped.
    fn on_update(&mut self, _stats: &UpdateStats, _counters: &Counters) {}
    /// When the declared log interval (`[log] every`) is reached, with the
    /// point in the declared axis.
    fn on_log(&mut self, _point: &CurvePoint, _axis: LogAxis) {}
}

/// A fault to inject: replica `replica`'s microbatch `microbatch` of
/// attempt `attempt` (1-based) produces an infinite gradient element. A
/// documented public hook, so tests and demos can show a skipped attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    /// Attempt, 1-based.
    pub attempt: u64,
    /// Replica rank.
    pub replica: usize,
    /// Microbatch index within the group on that replica.
    pub microbatch: usize,
}

/// Deliberate mistakes (R14), injected only by tests to show that the
/// loop detects or prevents each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Mistakes {
    /// Divide the normalized loss by `A` once more.
    pub(crate) double_division: bool,
    /// Zero the gradients before every microbatch.
    pub(crate) zero_per_microbatch: bool,
    /// Step the scheduler per microbatch instead of per update.
    pub(crate) scheduler_per_microbatch: bool,
    /// Keep every microbatch's activations (like a list of graph-attached losses).
    pub(crate) retain_activations: bool,
    /// Give every replica replica 0's examples.
    pub(crate) same_shard: bool,
}

/// Options of one run.
#[derive(Default)]
pub struct RunOptions<'a> {
    /// Called per microbatch, per update and per log interval.
    pub observer: Option<&'a mut dyn Observer>,
    /// Writes every microbatch, gradient and parameter set (`DUMP.md`).
    pub dump: Option<&'a mut DumpWriter>,
    /// When set, the run stops at the next group boundary (Ctrl-C).
    pub stop: Option<&'a AtomicBool>,
    /// Faults to inject.
    pub faults: Vec<Fault>,
}

impl fmt::Debug for RunOptions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunOptions")
            .field("observer", &self.observer.is_some())
            .field("dump", &self.dump.is_some())
            .field("stop", &self.stop)
            .field("faults", &self.faults)
            .finish_non_exhaustive()
    }
}

struct ReplicaState<W> {
    grads: Tensors,
    workspace: W,
    batches: Vec<Batch>,
    used: usize,
    counters: ReplicaCounters,
    retained: Vec<Vec<u8>>,
    events: Vec<MicrobatchEvent>,
}

impl<W> ReplicaState<W> {
    fn retained_bytes(&self) -> u64 {
        self.retained.iter().map(|v| v.len() as u64).sum()
    }

    fn local_counts(&self, ignore_index: i64) -> [u64; 2] {
        let batches = &self.batches[..self.used];
        [
            batches.iter().map(|b| b.supervised(ignore_index)).sum(),
            batches
                .iter()
                .map(|b| b.supervised_examples(ignore_index))
                .sum(),
        ]
    }
}

/// What every replica needs to know about the group.
struct GroupContext<'a> {
    attempt: u64,
    normalization: Normalization,
    ignore_index: i64,
    loss_scale: f32,
    accumulation: u64,
    faults: &'a [Fault],
    /// A replica's microbatch that fails with an error ([`Engine::inject_failure`]).
    failure: Option<Fault>,
    mistakes: Mistakes,
    fixed_bytes: MemoryBreakdown,
    /// Simulate the fp16 range on the replica's own gradients too.
    fp16: bool,
}

struct ReplicaOutcome {
    sums: LossSums,
    /// fp16: the replica's scaled gradients left the fp16 range before the
    /// reduction (opposite signs could cancel in the sum and hide it).
    overflow: bool,
    zeroings: u64,
    peak: MemoryBreakdown,
    denominator: f64,
    /// Workspace bytes after the group (R11).
    activations: u64,
    /// Bytes kept between microbatches after the group (R14).
    retained: u64,
}

/// Whether scaled gradients leave the fp16 range: an element above 65504
/// or not a number.
fn fp16_overflow(grads: &Tensors) -> bool {
    let max = grads.max_abs();
    max.is_nan() || max > FP16_MAX
}

fn run_replica<M: Model>(
    model: &M,
    rank: usize,
    state: &mut ReplicaState<M::Workspace>,
    reducer: &dyn Reducer,
    ctx: &GroupContext<'_>,
) -> Result<ReplicaOutcome, EngineError> {
    state.events.clear();
    // R5: fix the denominator before the first backward pass — a count
    // all-reduce over every replica (R4: global, not per microbatch).
    let mut counts = state.local_counts(ctx.ignore_index);
    reducer
        .all_reduce_counts(rank, &mut counts)
        .map_err(EngineError::Reduce)?;
    let mut denominator = match ctx.normalization {
        Normalization::PerToken => counts[0] as f64,
        Normalization::PerExample => counts[1] as f64,
        Normalization::Sum => 1.0,
    }
    .max(1.0);
    if ctx.mistakes.double_division {
        denominator *= ctx.accumulation as f64;
    }
    let scale = GradScale {
        normalization: ctx.normalization,
        denominator,
        loss_scale: ctx.loss_scale,
        ignore_index: ctx.ignore_index,
    };
    let mut sums = LossSums::default();
    let mut zeroings = 0;
    let mut peak = MemoryBreakdown::default();
    // R9: no synchronisation between microbatches (no_sync for the first A − 1).
    for index in 0..state.used {
        if ctx.mistakes.zero_per_microbatch {
            state.grads.fill_zero();
            zeroings += 1;
        }
        let batch = &state.batches[index];
        // A failure inside one microbatch names it; the caller aborts the
        // reduction and the group is not applied.
        let s = std::panic::catch_unwind(AssertUnwindSafe(|| {
            model.forward_backward(batch, &scale, &mut state.grads, &mut state.workspace)
        }))
        .map_err(|panic| EngineError::MicrobatchFailed {
            attempt: ctx.attempt,
            replica: rank,
            microbatch: index,
            message: panic_message(panic.as_ref()),
        })?;
        if let Some(f) = ctx.failure
            && f.attempt == ctx.attempt
            && f.replica == rank
            && f.microbatch == index
        {
            return Err(EngineError::InjectedFailure {
                attempt: ctx.attempt,
                replica: rank,
                microbatch: index,
            });
        }
        if ctx
            .faults
            .iter()
            .any(|f| f.attempt == ctx.attempt && f.replica == rank && f.microbatch == index)
            && let Some(first) = state.grads.slices_mut().next().and_then(|s| s.first_mut())
        {
            *first = f32::INFINITY;
        }
        if ctx.mistakes.retain_activations {
            state.retained.push(vec![1u8; s.activation_bytes]);
        }
        sums.add(&s);
        state.counters.microbatches += Microbatches::ONE;
        state.counters.backward_passes += 1;
        state.counters.examples += Examples::new(batch.examples() as u64);
        state.counters.supervised_tokens += Tokens::new(s.tokens);
        state.events.push(MicrobatchEvent {
            attempt: ctx.attempt,
            replica: rank,
            index,
            examples: batch.examples() as u64,
            tokens: s.tokens,
            mean_token_loss: if s.tokens > 0 {
                s.token_loss / s.tokens as f64
            } else {
                0.0
            },
        });
        let sample = MemoryBreakdown {
            retained: state.retained_bytes(),
            ..ctx.fixed_bytes
        };
        if sample.total() > peak.total() {
            peak = sample;
        }
    }
    let overflow = ctx.fp16 && fp16_overflow(&state.grads);
    // R9, R17: one gradient reduction per group, after the last microbatch.
    reducer
        .all_reduce_grads(rank, &mut state.grads)
        .map_err(EngineError::Reduce)?;
    Ok(ReplicaOutcome {
        sums,
        overflow,
        zeroings,
        peak,
        denominator,
        activations: model.workspace_bytes(&state.workspace) as u64,
        retained: state.retained_bytes(),
    })
}

/// The accumulation engine over a model `M` (the reference [`TokenMlp`] by default).
pub struct Engine<M: Model = TokenMlp> {
    plan: Plan,
    config: EngineConfig,
    model: M,
    dataset: Dataset,
    optimizer: Optimizer,
    schedule: Schedule,
    scaler: LossScaler,
    reducer: Box<dyn Reducer + Send>,
    replicas: Vec<ReplicaState<M::Workspace>>,
    counters: Counters,
    updates: Vec<UpdateStats>,
    curve: LossCurve,
    memory: MemoryTracker,
    dropped: Vec<DroppedGroup>,
    total: Updates,
    data_tokens: Tokens,
    epoch: u64,
    walk: Walk,
    shards: ShardCheck,
    next_log: u64,
    skips_in_a_row: u64,
    stopped_early: bool,
    warnings: Vec<String>,
    last_ids: Vec<u64>,
    keep_gradient: bool,
    last_gradient: Option<Tensors>,
    failure: Option<Fault>,
    /// R14 mistakes injected by tests; always off otherwise.
    pub(crate) mistakes: Mistakes,
}

impl<M: Model> fmt::Debug for Engine<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Engine")
            .field("plan", &self.plan)
            .field("counters", &self.counters)
            .finish_non_exhaustive()
    }
}

impl Engine<TokenMlp> {
    /// An engine on the built-in synthetic data and reference model, as the
    /// config describes them.
    pub fn new(plan: &Plan, config: &EngineConfig) -> Result<Engine<TokenMlp>, EngineError> {
        let mut errors = config.validate();
        errors.extend(config.builtin_limits());
        if !errors.is_empty() {
            return Err(EngineError::Invalid(errors));
        }
        let dataset = Dataset::synthetic(&config.data);
        let model = TokenMlp::new(
            config.data.vocab as usize,
            config.model.hidden as usize,
            config.model.ffn as usize,
            config.data.seed,
        );
        Engine::with_model(plan, config, model, dataset)
    }
}

/// Runs the built-in model and data as `config` describes, to the end.
pub fn run(plan: &Plan, config: &EngineConfig) -> Result<RunReport, EngineError> {
    Engine::new(plan, config)?.run(&mut RunOptions::default())
}

impl<M: Model> Engine<M> {
    /// An engine on a given model and data set. `config.data` and
    /// `config.model` are used only for the seed and the last-group policy.
    pub fn with_model(
        plan: &Plan,
        config: &EngineConfig,
        model: M,
        dataset: Dataset,
    ) -> Result<Engine<M>, EngineError> {
        let n = dataset.len() as u64;
        if n == 0 {
            return Err(EngineError::NotEnoughData {
                examples: 0,
                effective_batch: plan.effective_batch().get(),
            });
        }
        // R6: an "error" policy refuses a partial group before any work.
        let epoch = plan.epoch(Examples::new(n), config.data.last_group)?;
        if epoch.updates.is_zero() {
            return Err(EngineError::NotEnoughData {
                examples: n,
                effective_batch: plan.effective_batch().get(),
            });
        }
        let data_tokens = dataset.supervised_tokens(config.loss.ignore_index);
        // Tokens per update measured on the data, for token spans without a
        // fixed seq_len (R15).
        let tokens_per_update =
            (data_tokens.saturating_mul(plan.effective_batch().get()) / n).max(1);
        let schedule = Schedule::resolve(
            &config.schedule,
            config.optimizer.lr,
            plan,
            Some(tokens_per_update),
        )?;
        if schedule.warmup() > schedule.total() {
            return Err(EngineError::WarmupTooLong {
                warmup: schedule.warmup().get(),
                total: schedule.total().get(),
            });
        }
        let d = plan.replicas() as usize;
        let positions = plan.micro_batch().saturating_mul(dataset.max_len() as u64);
        let bytes = positions
            .saturating_mul(model.workspace_bytes_per_position() as u64)
            .saturating_mul(plan.replicas());
        if bytes > MAX_ACTIVATION_BYTES {
            return Err(EngineError::TooLarge {
                positions,
                replicas: plan.replicas(),
                bytes,
            });
        }
        let max_positions = usize::try_from(positions).unwrap_or(usize::MAX);
        let replicas = (0..d)
            .map(|_| ReplicaState {
                grads: model.params().zeros_like(),
                workspace: model.workspace(max_positions),
                batches: Vec::new(),
                used: 0,
                counters: ReplicaCounters::default(),
                retained: Vec::new(),
                events: Vec::new(),
            })
            .collect();
        let walk = Walk::new(
            *plan,
            dataset.len(),
            config.data.seed,
            config.data.last_group,
        );
        let total = schedule.total();
        Ok(Engine {
            plan: *plan,
            optimizer: Optimizer::from_section(&config.optimizer),
            scaler: LossScaler::new(config.precision.mode, &config.precision.loss_scale),
            schedule,
            reducer: Box::new(InProcess::new(d)),
            replicas,
            counters: Counters {
                epochs: 1,
                ..Counters::default()
            },
            updates: Vec::new(),
            curve: LossCurve {
                axis: config.log.axis,
                points: Vec::new(),
            },
            memory: MemoryTracker::new(d),
            dropped: Vec::new(),
            total,
            data_tokens: Tokens::new(data_tokens),
            epoch: 0,
            walk,
            shards: ShardCheck::default(),
            next_log: config.log.every.value(),
            skips_in_a_row: 0,
            stopped_early: false,
            warnings: Vec::new(),
            last_ids: Vec::new(),
            keep_gradient: false,
            last_gradient: None,
            failure: None,
            mistakes: Mistakes::default(),
            config: config.clone(),
            model,
            dataset,
        })
    }

    /// Runs the replicas through `reducer` instead of the default threads
    /// ([`InProcess`]): with one process per replica (MPI), this process
    /// runs only [`Reducer::local_ranks`] and learns the others' loss sums,
    /// counters and example ids through the backend. Refused when the
    /// backend's replicas differ from the plan's `D`, before any work.
    /// Drive a distributed engine with [`Engine::run`]: it closes the run
    /// with a collective and, on an error, aborts the reduction so the other
    /// processes stop too.
    pub fn with_reducer(
        mut self,
        reducer: Box<dyn Reducer + Send>,
    ) -> Result<Engine<M>, EngineError> {
        let d = self.plan.replicas();
        let local = reducer.local_ranks();
        // A backend runs every replica here (threads) or exactly one.
        let runnable =
            local.end <= reducer.replicas() && (local.len() == 1 || local.len() as u64 == d);
        if reducer.replicas() as u64 != d || !runnable {
            return Err(EngineError::World {
                replicas: d,
                world: reducer.replicas(),
            });
        }
        for (rank, state) in self.replicas.iter_mut().enumerate() {
            if !local.contains(&rank) {
                // Another process holds this replica's gradients and
                // activations; here it only mirrors batches and counters.
                state.grads = Tensors::new(Vec::new());
                state.workspace = self.model.workspace(0);
            }
        }
        self.reducer = reducer;
        Ok(self)
    }

    /// The ranks whose replicas this process runs: every rank with threads,
    /// one with a process per replica. The process running rank 0 writes
    /// reports and dumps.
    pub fn local_ranks(&self) -> std::ops::Range<usize> {
        self.reducer.local_ranks()
    }

    /// Test hook: replica `at.replica`'s microbatch `at.microbatch` of
    /// attempt `at.attempt` fails with an error after its backward pass,
    /// so that every replica stops before the update
    /// ([`EngineError::InjectedFailure`] there, an aborted reduction
    /// elsewhere).
    pub fn inject_failure(&mut self, at: Fault) {
        self.failure = Some(at);
    }

    /// The plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The settings.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// The model (its parameters are the current ones).
    pub fn model(&self) -> &M {
        &self.model
    }

    /// The data set.
    pub fn dataset(&self) -> &Dataset {
        &self.dataset
    }

    /// Counters so far.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// Length of the run, in updates (the schedule's total).
    pub fn total_updates(&self) -> Updates {
        self.total
    }

    /// The current loss scale.
    pub fn loss_scale(&self) -> f64 {
        self.scaler.scale()
    }

    /// Ids of the examples of the last group, over all replicas.
    pub fn last_group_ids(&self) -> &[u64] {
        &self.last_ids
    }

    /// Keep a copy of each group's full gradient (reduced, normalized,
    /// unscaled, before clipping), readable through [`Engine::last_gradient`].
    pub fn keep_gradient(&mut self, keep: bool) {
        self.keep_gradient = keep;
    }

    /// The last group's full gradient, when [`Engine::keep_gradient`] is on.
    pub fn last_gradient(&self) -> Option<&Tensors> {
        self.last_gradient.as_ref()
    }

    /// A span in updates for this engine's plan and data (tokens without a
    /// fixed `seq_len` use the data's measured tokens per update, R15): for
    /// sheets and progress bars.
    pub fn span_in_updates(&self, span: &Span) -> Result<Updates, PlanError> {
        let n = self.dataset.len().max(1) as u64;
        let per = (self
            .data_tokens
            .get()
            .saturating_mul(self.plan.effective_batch().get())
            / n)
            .max(1);
        span_to_updates(span, &self.plan, Some(per))
    }

    /// Whether the run has reached its total.
    pub fn finished(&self) -> bool {
        self.counters.applied_updates >= self.total
    }

    /// Runs groups until the total is reached or `options.stop` is set, and
    /// returns the report.
    pub fn run(&mut self, options: &mut RunOptions<'_>) -> Result<RunReport, EngineError> {
        loop {
            match self.step(options) {
                Ok(Some(_)) => {}
                Ok(None) => {
                    if self.distributed() {
                        // A closing collective: a replica that failed after
                        // the last group's reduction is heard before any
                        // process reports success.
                        self.reducer
                            .all_reduce_counts(self.reducer.local_ranks().start, &mut [0])
                            .map_err(EngineError::Reduce)?;
                    }
                    return Ok(self.report());
                }
                Err(e) => {
                    // Replicas in other processes would otherwise wait for
                    // this one in their next collective.
                    if self.distributed() {
                        let rank = self.reducer.local_ranks().start;
                        self.reducer.abort(&format!("replica {rank} failed: {e}"));
                    }
                    return Err(e);
                }
            }
        }
    }

    /// Whether other processes run some of the replicas.
    fn distributed(&self) -> bool {
        self.reducer.local_ranks().len() < self.replicas.len()
    }

    /// The next group from the driver's walk, applying the last-group
    /// policy (R6): dropped groups are recorded with their ids, and a new
    /// epoch resets the shard check.
    fn next_group(&mut self) -> Draw {
        let draw = self.walk.next();
        for (epoch, positions) in &draw.dropped {
            let ids: Vec<u64> = positions
                .iter()
                .map(|&p| self.dataset.examples()[p].id)
                .collect();
            self.counters.dropped_examples += Examples::new(ids.len() as u64);
            self.dropped.push(DroppedGroup { epoch: *epoch, ids });
        }
        while self.epoch < draw.epoch {
            self.epoch += 1;
            self.shards.reset();
            self.counters.epochs += 1;
        }
        draw
    }

    /// Runs one group: one update attempt. `None` when the run is finished
    /// or stopped.
    pub fn step(
        &mut self,
        options: &mut RunOptions<'_>,
    ) -> Result<Option<UpdateStats>, EngineError> {
        if self.finished() {
            return Ok(None);
        }
        let mut stop = options.stop.is_some_and(|s| s.load(Ordering::Relaxed));
        if self.distributed() {
            // Every process stops at the same group boundary, or none does.
            let mut votes = [u64::from(stop)];
            self.reducer
                .all_reduce_counts(self.reducer.local_ranks().start, &mut votes)
                .map_err(EngineError::Reduce)?;
            stop = votes[0] > 0;
        }
        if stop {
            self.stopped_early = true;
            return Ok(None);
        }
        let attempt = self.counters.update_attempts + 1;
        let mistakes = self.mistakes;
        let ignore_index = self.config.loss.ignore_index;

        // Fix the group's boundaries first (R5).
        let Draw {
            members,
            partial,
            mut assignment,
            ..
        } = self.next_group();
        if mistakes.same_shard {
            let first = assignment.replicas[0].clone();
            for r in &mut assignment.replicas {
                r.clone_from(&first);
            }
        }
        self.last_ids.clear();
        for (rank, microbatches) in assignment.replicas.iter().enumerate() {
            for &pos in microbatches.iter().flatten() {
                let id = self.dataset.examples()[pos].id;
                // R9: disjoint shards within an epoch.
                self.shards.record(id, rank).map_err(EngineError::Overlap)?;
                self.last_ids.push(id);
            }
        }
        for (state, microbatches) in self.replicas.iter_mut().zip(&assignment.replicas) {
            if state.batches.len() < microbatches.len() {
                state
                    .batches
                    .resize_with(microbatches.len(), Batch::default);
            }
            for (batch, positions) in state.batches.iter_mut().zip(microbatches) {
                batch.clear();
                for &p in positions {
                    batch.push(&self.dataset.examples()[p]);
                }
            }
            state.used = microbatches.len();
        }
        if self.distributed() {
            // R9 across processes: the ids each replica really loaded.
            self.check_remote_shards(attempt)?;
        }

        // R7: the loss scale is constant during the group.
        let loss_scale = self.scaler.scale();
        let fixed_bytes = MemoryBreakdown {
            params: self.model.params().bytes() as u64,
            grads: self.model.params().bytes() as u64,
            optimizer_state: self.optimizer.state_bytes() as u64,
            activations: 0,
            retained: 0,
        };
        let faults = std::mem::take(&mut options.faults);
        let ctx = GroupContext {
            attempt,
            normalization: self.config.loss.normalization,
            ignore_index,
            loss_scale: loss_scale as f32,
            accumulation: self.plan.accumulation(),
            faults: &faults,
            failure: self.failure,
            mistakes,
            fixed_bytes,
            fp16: self.config.precision.mode == PrecisionMode::Fp16,
        };
        let outcomes = self.run_replicas(&ctx);
        options.faults = faults;
        if outcomes.is_err() {
            // R2: a failed group's partial gradients must not leak into the
            // next attempt if the caller steps again.
            for state in &mut self.replicas {
                state.grads.fill_zero();
            }
        }
        let mut outcomes = outcomes?;
        if self.distributed() {
            outcomes = self.gather_outcomes(attempt, outcomes)?;
        }

        let mut sums = LossSums::default();
        let mut zeroings = 0;
        let mut replica_overflow = false;
        for (rank, o) in outcomes.iter().enumerate() {
            sums.add(&o.sums);
            replica_overflow |= o.overflow;
            zeroings += o.zeroings;
            self.memory.sample(
                rank,
                MemoryBreakdown {
                    activations: o.activations,
                    ..o.peak
                },
            );
        }
        let denominator = outcomes.first().map_or(1.0, |o| o.denominator);
        let microbatches: usize = self.replicas.iter().map(|r| r.used).sum();
        if let Some(obs) = options.observer.as_deref_mut() {
            for state in &self.replicas {
                for event in &state.events {
                    obs.on_microbatch(event);
                }
            }
        }
        if let Some(dump) = options.dump.as_deref_mut() {
            for (rank, state) in self.replicas.iter().enumerate() {
                for (index, batch) in state.batches[..state.used].iter().enumerate() {
                    dump.microbatch(attempt, rank, index, batch, ignore_index)?;
                }
            }
        }
        // R2: nothing may have zeroed the gradients inside the group.
        if zeroings > 0 {
            return Err(EngineError::Zeroing { attempt, zeroings });
        }
        // R4: normalization happened exactly once. Normalized losses weigh
        // the group's tokens to a total of 1; a sum weighs each token 1.
        if sums.tokens > 0 {
            let normalization = self.config.loss.normalization;
            let expected = match normalization {
                Normalization::Sum => sums.tokens as f64,
                Normalization::PerToken | Normalization::PerExample => 1.0,
            };
            if (sums.weight - expected).abs() > WEIGHT_TOLERANCE * expected {
                return Err(EngineError::Normalization {
                    attempt,
                    weight: sums.weight,
                    expected,
                    normalization,
                });
            }
        }
        self.counters.grad_reductions += 1;

        // After the last contribution: full-gradient operations (R5, R7).
        let grads = &mut self.replicas[self.reducer.local_ranks().start].grads;
        let overflow = match self.config.precision.mode {
            // Simulated fp16 range: a scaled element above 65504 overflows.
            PrecisionMode::Fp16 => replica_overflow || fp16_overflow(grads),
            PrecisionMode::Fp32 | PrecisionMode::Bf16 => !grads.all_finite(),
        };
        if loss_scale != 1.0 {
            grads.scale((1.0 / loss_scale) as f32);
        }
        let grad_norm = grads.norm();
        if self.keep_gradient {
            match &mut self.last_gradient {
                Some(g) => g.copy_from(grads),
                None => self.last_gradient = Some(grads.clone()),
            }
        }
        if let Some(dump) = options.dump.as_deref_mut() {
            dump.gradient(attempt, grads)?;
        }
        let finite = !overflow && grad_norm.is_finite();
        let mut clipped = false;
        let mut lr = 0.0;
        if finite {
            if let Some(max_norm) = self.config.optimizer.clip_norm
                && grad_norm > max_norm
            {
                // PyTorch's clip_grad_norm_: factor max_norm / (norm + 1e-6).
                grads.scale((max_norm / (grad_norm + 1e-6)) as f32);
                clipped = true;
            }
            lr = self.schedule.lr();
            self.optimizer.step(self.model.params_mut(), grads, lr);
            // R8: one scheduler step per applied update.
            self.schedule.step();
            self.counters.applied_updates += Updates::ONE;
            self.skips_in_a_row = 0;
        } else {
            self.counters.skipped_updates += 1;
            self.skips_in_a_row += 1;
        }
        if mistakes.scheduler_per_microbatch {
            // The mistake: one step per microbatch (the correct step above
            // counts as the first).
            for _ in 1..self.plan.accumulation() {
                self.schedule.step();
            }
        }
        self.counters.update_attempts += 1;
        self.counters.scheduler_steps = self.schedule.steps();
        if self.schedule.steps() != self.counters.applied_updates {
            return Err(EngineError::ScheduleDrift {
                attempt,
                scheduler_steps: self.schedule.steps().get(),
                applied_updates: self.counters.applied_updates.get(),
            });
        }
        // R7: the scaler updates after the attempt.
        self.scaler.update(finite);

        // R11: the first group's peak includes its update (optimizer state
        // allocated now).
        let opt_bytes = self.optimizer.state_bytes() as u64;
        for (rank, o) in outcomes.iter().enumerate() {
            self.memory.sample(
                rank,
                MemoryBreakdown {
                    optimizer_state: opt_bytes,
                    activations: o.activations,
                    retained: o.retained,
                    ..fixed_bytes
                },
            );
        }
        // R2: zero once per group, after the update, on every replica.
        for state in &mut self.replicas {
            state.grads.fill_zero();
        }
        self.counters.grad_zeroings += 1;
        self.memory.end_group();

        self.counters.microbatches += Microbatches::new(microbatches as u64);
        self.counters.backward_passes += microbatches as u64;
        self.counters.examples += Examples::new(members.len() as u64);
        self.counters.supervised_tokens += Tokens::new(sums.tokens);
        let stats = UpdateStats {
            attempt,
            epoch: self.epoch,
            applied: finite,
            updates: self.counters.applied_updates,
            loss: sums.objective,
            denominator,
            examples: Examples::new(members.len() as u64),
            tokens: Tokens::new(sums.tokens),
            microbatches: Microbatches::new(microbatches as u64),
            partial,
            lr,
            grad_norm,
            clipped,
            loss_scale,
        };
        if let Some(dump) = options.dump.as_deref_mut() {
            dump.update(attempt, self.model.params(), &stats)?;
        }
        if let Some(obs) = options.observer.as_deref_mut() {
            obs.on_update(&stats, &self.counters);
        }
        if finite {
            self.log_point(&stats, options);
        }
        self.updates.push(stats.clone());
        if self.skips_in_a_row >= MAX_SKIPS_IN_A_ROW {
            return Err(EngineError::TooManySkips {
                skipped: self.skips_in_a_row,
                loss_scale: self.scaler.scale(),
            });
        }
        Ok(Some(stats))
    }

    /// The count of the log interval's unit so far.
    fn count_in(&self, unit: UnitKind) -> u64 {
        match unit {
            UnitKind::Update => self.counters.applied_updates.get(),
            // A replica's loop counts microbatches (A per update); replica 0
            // has the most.
            UnitKind::Microbatch => self.replicas[0].counters.microbatches.get(),
            UnitKind::Example => self.counters.examples.get(),
            UnitKind::Token => self.counters.supervised_tokens.get(),
        }
    }

    fn log_point(&mut self, stats: &UpdateStats, options: &mut RunOptions<'_>) {
        let every: Span = self.config.log.every;
        let now = self.count_in(every.unit());
        if now < self.next_log && !self.finished() {
            return;
        }
        let step = every.value().max(1);
        self.next_log = (now / step + 1) * step;
        let axis = self.config.log.axis;
        let point = CurvePoint {
            x: self.count_in(axis.unit()),
            loss: stats.loss,
        };
        self.curve.points.push(point);
        if let Some(obs) = options.observer.as_deref_mut() {
            obs.on_log(&point, axis);
        }
    }

    /// Runs every replica's part of the group: rank 0 on the calling thread,
    /// the others on scoped threads, all at once.
    fn run_replicas(&mut self, ctx: &GroupContext<'_>) -> Result<Vec<ReplicaOutcome>, EngineError> {
        let model = &self.model;
        let reducer = &*self.reducer;
        let base = reducer.local_ranks().start;
        let local = &mut self.replicas[reducer.local_ranks()];
        let (first, rest) = local.split_at_mut(1);
        let results: Vec<Result<ReplicaOutcome, EngineError>> = std::thread::scope(|s| {
            let handles: Vec<_> = rest
                .iter_mut()
                .enumerate()
                .map(|(i, state)| {
                    s.spawn(move || run_guarded(model, base + i + 1, state, reducer, ctx))
                })
                .collect();
            let mut results = Vec::with_capacity(handles.len() + 1);
            results.push(run_guarded(model, base, &mut first[0], reducer, ctx));
            for (i, h) in handles.into_iter().enumerate() {
                results.push(h.join().unwrap_or_else(|panic| {
                    Err(EngineError::ReplicaPanicked {
                        replica: base + i + 1,
                        message: panic_message(panic.as_ref()),
                    })
                }));
            }
            results
        });
        // Report the root cause: a replica's own failure before the aborts it caused.
        let mut outcomes = Vec::with_capacity(results.len());
        let mut first_err = None;
        for r in results {
            match r {
                Ok(o) => outcomes.push(o),
                Err(EngineError::Reduce(e)) => {
                    first_err.get_or_insert(EngineError::Reduce(e));
                }
                Err(e) => {
                    if !matches!(first_err, Some(ref f) if !matches!(f, EngineError::Reduce(_))) {
                        first_err = Some(e);
                    }
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(outcomes),
        }
    }

    /// The report so far.
    pub fn report(&self) -> RunReport {
        let memory = self.memory.report();
        let mut warnings = self.warnings.clone();
        if memory.peak_grows {
            warnings.push(
                "memory peak grows across groups: something is kept between microbatches \
                 (release losses and activations after each backward pass)"
                    .to_owned(),
            );
        }
        if self.counters.skipped_updates > 0 {
            warnings.push(format!(
                "{} update attempt(s) skipped for non-finite gradients",
                self.counters.skipped_updates
            ));
        }
        RunReport {
            format: REPORT_FORMAT.to_owned(),
            plan: PlanSummary::from(&self.plan),
            model: self.model.describe(),
            precision: self.config.precision.mode,
            loss_scaling: self.scaler.enabled(),
            normalization: self.config.loss.normalization,
            last_group: self.config.data.last_group,
            optimizer: self.config.optimizer.kind,
            total_updates: self.total,
            warmup_updates: self.schedule.warmup(),
            data_examples: Examples::new(self.dataset.len() as u64),
            data_tokens: self.data_tokens,
            counters: self.counters,
            replicas: self.replicas.iter().map(|r| r.counters).collect(),
            updates: self.updates.clone(),
            loss_curve: self.curve.clone(),
            memory,
            dropped: self.dropped.clone(),
            stopped_early: self.stopped_early,
            warnings,
        }
    }
}

/// One replica's part, with a panic or an error turned into an abort of
/// the reduction, so that no other replica waits forever.
fn run_guarded<M: Model>(
    model: &M,
    rank: usize,
    state: &mut ReplicaState<M::Workspace>,
    reducer: &dyn Reducer,
    ctx: &GroupContext<'_>,
) -> Result<ReplicaOutcome, EngineError> {
    let result = std::panic::catch_unwind(AssertUnwindSafe(|| {
        run_replica(model, rank, state, reducer, ctx)
    }))
    .unwrap_or_else(|panic| {
        // The events so far are the microbatches that completed.
        Err(EngineError::ReplicaPanicked {
            replica: rank,
            message: format!(
                "{} (attempt {}, microbatch {})",
                panic_message(panic.as_ref()),
                ctx.attempt,
                state.events.len()
            ),
        })
    });
    if let Err(e) = &result {
        reducer.abort(&format!("replica {rank} failed: {e}"));
    }
    result
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string panic".to_owned())
}

#[path = "engine/remote.rs"]
mod remote;

#[cfg(test)]
#[path = "engine/tests.rs"]
mod tests;

#[cfg(test)]
#[path = "engine/fault_tests.rs"]
mod fault_tests;
