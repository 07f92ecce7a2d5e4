//! The group loop (`accum::run::zeroing`, `accum::run::normalization`, `accum::run::group`, `accum::plan::partial-group`, `accum::run::loss-scale`, `accum::run::scheduler`, `accum::run::data-parallel`): one optimizer update attempt per group
//! of `A` microbatches on each of `D` replicas.
//!
//! ```text
//!  fix the group ──► count all-reduce ──► denominator (`accum::run::normalization`, `accum::run::group`)      group.rs
//!        │            (tokens, examples over all replicas)
//!        ▼
//!  replica r (own grads, T threads):  for i in 0..A: forward,        backward.rs
//!        │   weighted loss, backward adds into grads (no_sync, `accum::run::data-parallel`)
//!        ▼
//!  gradient reduction, once: local replicas summed, then across       reduce.rs
//!  processes (`accum::run::data-parallel`, `accum::calc::scaling`); checks `accum::run::zeroing`, `accum::run::normalization`
//!        ▼
//!  non-finite / fp16-range check ─► unscale ─► clip by global norm    update.rs
//!        ▼   (`accum::run::loss-scale`)
//!  finite: optimizer step, scheduler step (`accum::run::scheduler`)   non-finite: skip (attempt only)
//!        ▼
//!  scaler update (`accum::run::loss-scale`) ─► zero grads once (`accum::run::zeroing`) ─► memory peak (`accum::run::memory`)
//! ```
//!
//! Entry points: [`Engine::new`] (the built-in model and data from an
//! [`EngineConfig`] and a [`Plan`], or a [`StagedPlan`] for a batch
//! ramp-up), [`Engine::with_model`] (any [`Model`] and [`Dataset`]), then
//! [`Engine::run`] with [`RunOptions`] (observers,
//! stop flag, fault injection) giving a [`RunReport`]. [`run`] does both for
//! a config. [`Engine::with_reducer`] runs the replicas through another
//! [`Reducer`] backend than threads (one MPI process per replica);
//! [`Engine::with_threads`] sets the threads of each replica. Hooks and
//! options are in `hooks.rs`, errors in `error.rs`.
//!
//! Groups come from the loop driver's walk ([`crate::driver`]), the one a
//! training loop of one's own draws from: the same epoch order, last-group
//! policy and split into replicas and microbatches, each group under its
//! own plan. `group.rs` packs them into the replicas' batches.
//!
//! Stages (batch ramp-up): each group runs under the stage of the update it
//! will produce, decided from the applied updates so far, so a skipped
//! attempt is retried under the same stage. `A` and `B` change per group;
//! the denominator is the whole group's whatever the stage (`accum::run::normalization`), the
//! scheduler steps once per applied update (`accum::run::scheduler`), and the run's length and
//! warmup resolve to updates through the stages, so a length in examples or
//! tokens ends at the same count whatever the stages. The report counts
//! each stage ([`StageCounters`]).
//!
//! Threads: the replicas this process runs are work items on one thread
//! pool of `min(cores, D_local × T)` threads, each replica splitting its
//! microbatches over a [`Team`] of `T` threads (by default all cores ÷
//! `D_local`, at least 1). `D` is a number of replicas, not of threads:
//! 2,048 replicas run on as many threads as the machine has cores, each
//! thread taking the next replica when it is done with one, and the
//! threads' buffers (a matrix-product packing buffer each) do not grow
//! with `D`. Every replica's gradients stay in its own buffers and are
//! summed in rank order after the group (`reduce.rs`), so the results do
//! not depend on the number of threads or on which thread ran which
//! replica; the reference model's do not depend on `T` either.
//!
//! The loop checks its own invariants and fails loudly instead of training
//! the wrong objective: the token weights of a group must sum to one for
//! normalized losses (`accum::run::normalization`: normalization happens once), gradients are zeroed
//! only after the update (`accum::run::zeroing`), the scheduler has stepped exactly once per
//! applied update (`accum::run::scheduler`), and no example reaches two replicas in one epoch (`accum::run::data-parallel`).
//!
//! After the first group has sized every buffer, an update attempt of the
//! in-process loop allocates nothing (the matrix products pack into a
//! buffer each thread keeps; see `docs/performance.md`); with stages, group
//! buffers are sized for the largest stage up front and the per-stage
//! counters have room for the first 1,024 stages, so a stage change
//! allocates nothing either.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::driver::{DriverError, Walk};
use crate::memory::{MemoryBreakdown, MemoryTracker};
use crate::plan::{Plan, PlanError, Rounding, StagedPlan};
use crate::replica::{InProcess, Reducer};
use crate::report::{
    CURVE_CAPACITY, Counters, CurvePoint, Decimated, KEPT_UPDATES, LossCurve, PlanSummary,
    REPORT_FORMAT, ReplicaCounters, RunReport, RunSummary, Segment, StageCounters, UpdateStats,
};
use crate::scaler::LossScaler;
use crate::schedule::Schedule;
use crate::span::Span;
use crate::units::{Examples, Tokens, UnitKind, Updates};

mod backward;
mod error;
mod group;
mod hooks;
mod reduce;
mod remote;
mod state;
mod update;

// The engine's config is `settings::EngineConfig`, its one public path.
pub(crate) use crate::settings::EngineConfig;
// What a model, its data and a run of one's own use: the pieces of a
// training step, public here and only here.
pub use crate::data::{DataError, Dataset, OverlapError, PackedMicrobatch, Rng, Sequence};
pub use crate::dump::{DUMP_FORMAT, DumpError, DumpWriter};
pub use crate::model::{GradScale, LossSums, MlpWorkspace, Model, Team, TokenMlp};
pub use crate::optim::{AdamW, Optimizer, Sgd};
pub use crate::tensor::Tensors;
use backward::{ReplicaOutcome, ReplicaState};
pub use error::EngineError;
use group::Groups;
#[cfg(test)]
pub(crate) use hooks::Mistakes;
pub use hooks::{
    Fault, GroupView, MicrobatchEvent, Observer, ObserverError, RunOptions, UpdateView,
};
pub use state::{CHECKPOINT_FORMAT, EngineState, SettingDifference, StateError, TENSORS_FILE};

/// Consecutive skipped attempts after which a run gives up.
const MAX_SKIPS_IN_A_ROW: u64 = 64;

/// The most activation memory (all replicas together) the engine allocates:
/// a plan above it is refused before anything is allocated.
pub const MAX_ACTIVATION_BYTES: u64 = 8 << 30;

/// The most memory the group buffers (every replica's microbatches of the
/// largest `A`, their events and the group's ids) may take: a plan above it
/// is refused before anything is allocated (`accumulation = 2^32` asked for
/// 200 GB for the events alone).
pub const MAX_GROUP_BUFFER_BYTES: u64 = 4 << 30;

/// Why the built-in engine cannot hold `plan` on `config`'s model and data
/// (the activations or the group buffers over their limits), known before
/// anything is allocated: `validate` says so, and [`Engine::new`] refuses
/// the same plans. A config over the built-in data's own limits gets those
/// from the engine instead.
pub(crate) fn buffer_refusal(plan: &StagedPlan, config: &EngineConfig) -> Option<EngineError> {
    if !config.builtin_limits().is_empty() {
        return None;
    }
    let workspace = TokenMlp::workspace_bytes_per_position_for(
        config.data.vocab as usize,
        config.model.hidden as usize,
        config.model.ffn as usize,
    );
    buffer_limits(
        plan,
        config.data.max_len as usize,
        workspace as u64,
        plan.final_plan().replicas(),
    )
    .err()
}

/// The activations and the group buffers against their limits.
fn buffer_limits(
    stages: &StagedPlan,
    max_len: usize,
    workspace_per_position: u64,
    replicas: u64,
) -> Result<(), EngineError> {
    let plan = stages.final_plan();
    let positions = plan.micro_batch().saturating_mul(max_len as u64);
    let bytes = positions
        .saturating_mul(workspace_per_position)
        .saturating_mul(replicas);
    if bytes > MAX_ACTIVATION_BYTES {
        return Err(EngineError::TooLarge {
            positions,
            replicas,
            bytes,
        });
    }
    let bytes = group::group_buffer_bytes(stages, max_len);
    if bytes > MAX_GROUP_BUFFER_BYTES {
        return Err(EngineError::GroupTooLarge {
            accumulation: group::max_accumulation(stages) as u64,
            micro_batch: plan.micro_batch(),
            replicas,
            bytes,
        });
    }
    Ok(())
}

/// Tolerance of the `accum::run::normalization` check that a group's token weights sum to one.
const WEIGHT_TOLERANCE: f64 = 1e-4;

/// Stage counters the engine reserves room for up front; a plan with more
/// stages grows the list when a stage starts.
const MAX_STAGES_KEPT_AHEAD: usize = 1024;

/// The threads of this machine (1 when unknown).
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// The accumulation engine over a model `M` (the reference [`TokenMlp`] by default).
pub struct Engine<M: Model = TokenMlp> {
    stages: StagedPlan,
    config: EngineConfig,
    model: M,
    dataset: Dataset,
    optimizer: Optimizer,
    schedule: Schedule,
    scaler: LossScaler,
    reducer: Box<dyn Reducer + Send>,
    replicas: Vec<ReplicaState<M::Workspace>>,
    groups: Groups,
    /// This group's outcomes, one per replica in rank order (reused).
    outcomes: Vec<ReplicaOutcome>,
    counters: Counters,
    /// One entry per stage reached, in order.
    stage_counters: Vec<StageCounters>,
    updates: Decimated<UpdateStats>,
    curve: Decimated<CurvePoint>,
    summary: RunSummary,
    memory: MemoryTracker,
    total: Updates,
    data_tokens: Tokens,
    next_log: u64,
    skips_in_a_row: u64,
    stopped_early: bool,
    /// Applied updates whose group was an epoch's partial last group.
    partial_updates: u64,
    /// The report's segments, when the run was resumed (empty: one).
    segments: Vec<Segment>,
    /// Each replica's counters before the current group, to undo a group
    /// stopped inside (reused).
    replica_counters: Vec<ReplicaCounters>,
    keep_gradient: bool,
    last_gradient: Option<Tensors>,
    failure: Option<Fault>,
    /// Threads per replica (`T`).
    threads: usize,
    /// The pool the replicas run on, when more than one thread is used.
    pool: Option<Arc<rayon::ThreadPool>>,
    /// The threads the pool may have at most: the machine's cores.
    cores: usize,
    /// the symptom table of docs/rules.md mistakes injected by tests.
    #[cfg(test)]
    pub(crate) mistakes: Mistakes,
}

impl<M: Model> fmt::Debug for Engine<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Engine")
            .field("stages", &self.stages)
            .field("threads", &self.threads)
            .field("counters", &self.counters)
            .finish_non_exhaustive()
    }
}

impl Engine<TokenMlp> {
    /// An engine on the built-in synthetic data and reference model, as the
    /// config describes them, for a [`Plan`] or a [`StagedPlan`].
    pub fn new(
        plan: impl Into<StagedPlan>,
        config: &EngineConfig,
    ) -> Result<Engine<TokenMlp>, EngineError> {
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
pub fn run(plan: impl Into<StagedPlan>, config: &EngineConfig) -> Result<RunReport, EngineError> {
    Engine::new(plan, config)?.run(&mut RunOptions::default())
}

impl<M: Model> Engine<M> {
    /// An engine on a given model and data set, for a [`Plan`] or a
    /// [`StagedPlan`]. `config.data` and `config.model` are used only for
    /// the seed and the last-group policy.
    pub fn with_model(
        plan: impl Into<StagedPlan>,
        config: &EngineConfig,
        model: M,
        dataset: Dataset,
    ) -> Result<Engine<M>, EngineError> {
        let stages: StagedPlan = plan.into();
        let n = dataset.len() as u64;
        // `accum::plan::partial-group`: the walk refuses data the policy cannot run, before any work.
        let walk = Walk::new(
            stages.clone(),
            dataset.len(),
            config.data.seed,
            config.data.last_group,
        )
        .map_err(|e| match e {
            DriverError::Plan(e) => EngineError::Plan(e),
            DriverError::StageGroup(e) => EngineError::StageGroup(e),
            DriverError::NotEnoughData {
                examples,
                effective_batch,
            } => EngineError::NotEnoughData {
                examples,
                effective_batch,
            },
            _ => EngineError::NotEnoughData {
                examples: n,
                effective_batch: stages.final_plan().effective_batch().get(),
            },
        })?;
        // `m`, `D` and `L` are the same in every stage.
        let plan = *stages.final_plan();
        let data_tokens = dataset.supervised_tokens(config.loss.ignore_index);
        // `accum::run::scheduler` through the stages: lengths in tokens or examples follow what
        // each applied update consumes, so they end at the same count
        // whatever the stages; tokens without a fixed seq_len go through
        // the data's measured tokens per example (`accum::calc::tokens`).
        let schedule = Schedule::resolve_staged(
            &config.schedule,
            config.optimizer.lr,
            &stages,
            Some((Tokens::new(data_tokens), Examples::new(n))),
        )?;
        let d = plan.replicas() as usize;
        let positions = plan.micro_batch().saturating_mul(dataset.max_len() as u64);
        buffer_limits(
            &stages,
            dataset.max_len(),
            model.workspace_bytes_per_position() as u64,
            plan.replicas(),
        )?;
        let max_positions = usize::try_from(positions).unwrap_or(usize::MAX);
        let a = group::max_accumulation(&stages);
        let replicas = (0..d)
            .map(|_| {
                ReplicaState::new(
                    model.params().zeros_like(),
                    model.workspace(max_positions),
                    a,
                )
            })
            .collect();
        let total = schedule.total();
        Ok(Engine {
            stage_counters: Vec::with_capacity(stages.stages().len().min(MAX_STAGES_KEPT_AHEAD)),
            stages,
            optimizer: Optimizer::from_section(&config.optimizer),
            scaler: LossScaler::new(config.precision.mode, &config.precision.loss_scale),
            schedule,
            reducer: Box::new(InProcess::new(d)),
            replicas,
            groups: Groups::new(walk, &dataset),
            outcomes: Vec::with_capacity(d),
            counters: Counters {
                epochs: 1,
                ..Counters::default()
            },
            updates: Decimated::new(KEPT_UPDATES),
            curve: Decimated::new(CURVE_CAPACITY),
            summary: RunSummary::default(),
            memory: MemoryTracker::new(d),
            total,
            data_tokens: Tokens::new(data_tokens),
            next_log: config.log.every.value(),
            skips_in_a_row: 0,
            stopped_early: false,
            partial_updates: 0,
            segments: Vec::new(),
            replica_counters: vec![ReplicaCounters::default(); d],
            keep_gradient: false,
            last_gradient: None,
            failure: None,
            threads: (cores() / d).max(1),
            pool: None,
            cores: cores(),
            #[cfg(test)]
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
    /// processes stop too. A backend whose local ranks are all `D` replicas
    /// is not called: the engine sums the replicas of one process itself.
    pub fn with_reducer(
        mut self,
        reducer: Box<dyn Reducer + Send>,
    ) -> Result<Engine<M>, EngineError> {
        let d = self.plan().replicas();
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
        self.threads = (cores() / local.len().max(1)).max(1);
        self.pool = None;
        self.reducer = reducer;
        Ok(self)
    }

    /// Uses `threads` threads inside each replica this process runs (at
    /// least 1; the default is all cores ÷ the local replicas). The
    /// reference model's results are the same for any number of threads.
    #[must_use]
    pub fn with_threads(mut self, threads: usize) -> Engine<M> {
        self.threads = threads.max(1);
        self.pool = None;
        self
    }

    /// Threads inside each replica.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The OS threads the replicas of this process run on: `local
    /// replicas × threads`, at most the machine's cores. More would only
    /// wait, and every idle thread of a work-stealing pool looks through
    /// the queues of all the others: 2,048 threads for `D = 2048` spent
    /// their time stealing from each other (and each kept a packing buffer).
    pub(crate) fn pool_size(&self) -> usize {
        self.reducer
            .local_ranks()
            .len()
            .saturating_mul(self.threads)
            .min(self.cores)
            .max(1)
    }

    /// The thread pool of [`Engine::pool_size`] threads, built at the first
    /// group that needs more than one thread.
    fn pool(&mut self) -> Option<Arc<rayon::ThreadPool>> {
        let size = self.pool_size();
        if size <= 1 {
            return None;
        }
        if self.pool.is_none() {
            // Building a pool only fails when threads cannot be spawned; the
            // engine then runs on the calling thread alone.
            self.pool = rayon::ThreadPoolBuilder::new()
                .num_threads(size)
                .thread_name(|i| format!("accum-engine-{i}"))
                .build()
                .ok()
                .map(Arc::new);
            if let Some(pool) = &self.pool {
                // Every thread runs once now, so that a thread's start-up
                // (its thread-local state, the matrix products' packing
                // buffer) happens here and not inside a later group.
                pool.broadcast(|_| crate::tensor::warm_gemm());
            }
        }
        self.pool.clone()
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

    /// The plan; with stages, the full batch the run reaches after its
    /// ramp-up (the last stage's). `m`, `D` and `L` are the same in every
    /// stage.
    pub fn plan(&self) -> &Plan {
        self.stages.final_plan()
    }

    /// The plan's stages (one for a constant plan).
    pub fn stages(&self) -> &StagedPlan {
        &self.stages
    }

    /// Counters of every stage the run has reached so far, in order.
    pub fn stage_counters(&self) -> &[StageCounters] {
        &self.stage_counters
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
        &self.groups.last_ids
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

    /// A span in updates for this engine's plan and data, through the
    /// stages, rounded up: for sheets and progress bars. Tokens without a
    /// fixed `seq_len` are the examples that hold them at the data's
    /// measured length (`accum::calc::tokens`), as the learning-rate schedule counts them.
    pub fn span_in_updates(&self, span: &Span) -> Result<Updates, PlanError> {
        let span = match (span.unit(), self.stages.first_plan().seq_len()) {
            (UnitKind::Token, None) => crate::schedule::tokens_as_examples(
                *span,
                self.data_tokens,
                Examples::new(self.dataset.len().max(1) as u64),
            )?,
            _ => *span,
        };
        self.stages.span_to_updates(&span, Rounding::Up)
    }

    /// Moves the data walk to `at`, as if the groups before it had been
    /// drawn (the pre-flight check runs one group of each stage).
    pub(crate) fn seek(&mut self, at: crate::driver::Position) {
        self.groups.seek(at);
    }

    /// Whether the run has reached its total.
    pub fn finished(&self) -> bool {
        self.counters.applied_updates >= self.total
    }

    /// Runs groups until the total is reached or `options.stop` is set, and
    /// returns the report.
    pub fn run(&mut self, options: &mut RunOptions<'_>) -> Result<RunReport, EngineError> {
        let report = self.run_until(options, Updates::new(u64::MAX))?;
        Ok(report.expect("a run without a pause point ends finished or stopped"))
    }

    /// Runs groups until `pause` updates are applied, the total is reached
    /// or `options.stop` is set. The report when the run ended (finished
    /// or stopped); `None` when it paused at `pause`, an update boundary
    /// where [`Engine::state`] can be taken, to go on with another call.
    pub fn run_until(
        &mut self,
        options: &mut RunOptions<'_>,
        pause: Updates,
    ) -> Result<Option<RunReport>, EngineError> {
        match self.pool() {
            // The whole loop runs inside the pool, so that a group enters
            // no new parallel region from outside it (which would allocate
            // a job in the pool's queue). Collectives across processes are
            // called from the calling thread, so a distributed run stays
            // outside.
            Some(pool) if !self.distributed() => pool.install(|| self.run_loop(options, pause)),
            _ => self.run_loop(options, pause),
        }
    }

    fn run_loop(
        &mut self,
        options: &mut RunOptions<'_>,
        pause: Updates,
    ) -> Result<Option<RunReport>, EngineError> {
        loop {
            if self.counters.applied_updates >= pause && !self.finished() {
                return Ok(None);
            }
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
                    return Ok(Some(self.report()));
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
        let mark = self.groups.mark();
        let epochs = self.counters.epochs;
        for (saved, state) in self.replica_counters.iter_mut().zip(&self.replicas) {
            *saved = state.counters;
        }

        // Fix the group's boundaries and its denominator first (`accum::run::group`).
        #[cfg(test)]
        {
            self.groups.same_shard = self.mistakes.same_shard;
        }
        self.groups
            .next(&self.dataset, self.counters.applied_updates)?;
        self.counters.epochs = self.groups.epochs();
        self.counters.dropped_examples = Examples::new(self.groups.dropped_examples);
        if self.distributed() {
            // `accum::run::data-parallel` across processes: the ids each replica really loaded.
            self.check_remote_shards(attempt)?;
        }
        let denominator = self.group_denominator()?;

        // The backward passes of every local replica.
        let loss_scale = self.scaler.scale();
        match self.backward(attempt, denominator, loss_scale, options) {
            // Ctrl-C inside the group: nothing of it is applied, and the
            // run ends as if stopped at the boundary before it.
            Err(EngineError::Interrupted { .. }) => {
                self.stopped_early = true;
                // Nothing of the group stays: its draw, its counts and its
                // gradients, so that the state is the boundary before it.
                self.groups.rewind(mark);
                self.counters.epochs = epochs;
                self.counters.dropped_examples = Examples::new(self.groups.dropped_examples);
                for (state, saved) in self.replicas.iter_mut().zip(&self.replica_counters) {
                    state.counters = *saved;
                    state.grads.fill_zero();
                }
                return Ok(None);
            }
            other => other?,
        }

        // One reduction, the group's checks, then the update.
        let reduced = self.reduce(attempt, options)?;
        let stats = self.update(attempt, &reduced, denominator, loss_scale, options)?;
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

    /// Records a point of the loss curve when the log interval is reached.
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
        self.curve.push(point);
        for obs in &mut options.observers {
            obs.on_log(&point, axis);
        }
    }

    /// The report so far.
    pub fn report(&self) -> RunReport {
        let memory = self.memory.report();
        let warnings = crate::report::run_warnings(&memory, &self.counters);
        RunReport {
            format: REPORT_FORMAT.to_owned(),
            plan: PlanSummary::from(self.plan()),
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
            stages: self.stage_counters.clone(),
            replicas: self.replicas.iter().map(|r| r.counters).collect(),
            updates: self.updates.items().to_vec(),
            updates_stride: self.updates.stride(),
            summary: self.summary,
            stats_stream: None,
            loss_curve: LossCurve {
                axis: self.config.log.axis,
                points: self.curve.items().to_vec(),
                stride: self.curve.stride(),
            },
            memory,
            dropped: self.groups.dropped.clone(),
            stopped_early: self.stopped_early,
            warnings,
            segments: self.segments.clone(),
            recorder: None,
            provenance: None,
        }
    }

    /// The bytes every replica holds outside its workspace (`accum::run::memory`).
    fn fixed_bytes(&self) -> MemoryBreakdown {
        MemoryBreakdown {
            params: self.model.params().bytes() as u64,
            grads: self.model.params().bytes() as u64,
            optimizer_state: self.optimizer.state_bytes() as u64,
            activations: 0,
            retained: 0,
        }
    }
}

/// The kernels the built-in model runs, for models of one's own written
/// against [`Tensors`]: flat views of a tensor, matrix views over flat
/// `f32` buffers, the matrix product (and the name of the kernel it picked
/// on this CPU), and the accumulate kernel of the reduction.
pub mod kernels {
    pub use crate::tensor::{
        MatMut, MatRef, accumulate, flat, flat_mut, gemm, gemm_kernel, mat, mat_mut, mat_of,
        mat_of_mut,
    };
}

#[cfg(test)]
pub(crate) mod tests;

#[cfg(test)]
mod fault_tests;

#[cfg(test)]
mod stage_tests;
