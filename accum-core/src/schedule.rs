//! The learning-rate schedule, advancing once per *applied* update
//! (`accum::run::scheduler`).
//!
//! Warmup and total are written as [`Span`]s in any unit and resolved to
//! updates through the [`Plan`] with an explicit [`Rounding`]
//! ([`Schedule::from_spans`], for a user's own config fields) — accum's
//! `[schedule]` section rounds up, so a partial update still counts
//! ([`Schedule::resolve`]). Every constructor refuses a warmup longer than
//! the run, after the conversion (`accum::span::warmup`). Tokens need a
//! fixed `seq_len` (`accum::plan::seq-len`); with variable lengths a
//! user's loop counts them on the run ([`Schedule::counted`], stepped by
//! the driver with its real counters), and accum's engine passes the
//! data's measured supervised tokens per update.
//!
//! ```
//! use accum_core::schedule::Schedule;
//! use accum_core::settings::ScheduleKind;
//! use accum_core::{Span, Updates};
//! use accum_core::plan::{Plan, Rounding};
//!
//! // A user's own fields: warmup in examples, length in tokens.
//! let plan = Plan::new(4, 8, 2)?.with_seq_len(512)?; // B = 64, T = 32,768
//! let warmup: Span = "1k examples".parse()?;
//! let total: Span = "10M tokens".parse()?;
//! let mut lr = Schedule::from_spans(ScheduleKind::Cosine, 3e-4, warmup, total, &plan, Rounding::Up)?;
//! assert_eq!((lr.warmup(), lr.total()), (Updates::new(16), Updates::new(306)));
//! assert_eq!(lr.lr(), 0.0); // the first update of a warmup
//! lr.step(); // once per applied update
//! assert!((lr.lr() - 3e-4 / 16.0).abs() < 1e-18);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Shapes follow the Hugging Face schedules so runs can be compared: the
//! factor is `u / warmup` during warmup (the first update uses 0 when there
//! is a warmup), then constant, linear to zero at `total`, or cosine to zero
//! at `total`.
//!
//! ## Under a batch ramp-up
//!
//! When the batch changes during the run ([`StagedPlan`]), an update is a
//! different number of examples and tokens from stage to stage. A schedule
//! whose lengths are written in tokens (examples, microbatches) then
//! advances, per applied update, by what that update consumed in its unit,
//! and is a function of the tokens (examples, microbatches) consumed: it
//! ends at the same token count whatever the stages
//! ([`Schedule::resolve_staged`], [`Schedule::from_spans_staged`]). This is
//! how Megatron-LM steps its scheduler: `train_step` in
//! `megatron/training/training.py` calls `OptimizerParamScheduler.step`
//! (`megatron/core/optimizer_param_scheduler.py`) after each successful
//! update with `increment = get_num_microbatches() × micro_batch_size ×
//! data_parallel_size`, the samples of that update, and
//! `get_optimizer_param_scheduler` gives the warmup and decay in samples
//! (`--lr-warmup-samples`, or iterations × `global_batch_size`). A schedule
//! written in updates stays per update.
//!
//! ```
//! use accum_core::plan::{StageSpec, StagedPlan};
//! use accum_core::schedule::Schedule;
//! use accum_core::settings::ScheduleKind;
//! use accum_core::{Span, UnitKind, Updates};
//! use accum_core::plan::{Plan, Rounding};
//!
//! // m 4 × D 2, L 1,000: 50 updates of 32 sequences, then 128 to the end.
//! let base = Plan::new(4, 16, 2)?.with_seq_len(1000)?;
//! let staged = StagedPlan::ramp_to(&base, &[StageSpec::global_batch(32).until("50 updates".parse()?)])?;
//! let warmup: Span = "3.2M tokens".parse()?; // 1.6M in the first stage, 1.6M after
//! let total: Span = "16M tokens".parse()?;
//! let lr = Schedule::from_spans_staged(ScheduleKind::Linear, 1.0, warmup, total, &staged, Rounding::Up)?;
//! assert_eq!(lr.clock(), UnitKind::Token);
//! // The first stage is half the warmup's tokens, though it is 50 of its 63 updates.
//! assert_eq!(lr.lr_at(50), 0.5);
//! // 12.5 updates of 128,000 tokens finish the warmup, 112.5 the run: both end
//! // inside an update, which counts (rounding up; `Rounding::Exact` refuses).
//! assert_eq!((lr.warmup(), lr.total()), (Updates::new(50 + 13), Updates::new(50 + 113)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::code::Code;
use crate::plan::{Plan, PlanError, Rounding, StagedPlan};
use crate::settings::{ScheduleKind, ScheduleSection};
use crate::span::Span;
use crate::units::{Examples, Tokens, UnitKind, Updates};

/// A learning-rate schedule over applied updates.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    kind: ScheduleKind,
    base_lr: f64,
    warmup: Updates,
    total: Updates,
    steps: Updates,
    clock: Option<Clock>,
    counted: Option<Counted>,
}

/// Where a [`Schedule`] stands, to save with a checkpoint and give back to
/// [`Schedule::set_position`]. A schedule of lengths resolved to updates
/// (also under a ramp-up) is a function of its applied updates, so its
/// position is its step count. A [counted](Schedule::counted) one also
/// keeps what the run decided on the way: the counters at its last step,
/// where its decay started, and the updates in which its warmup ended and
/// its total was reached; those are saved too.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchedulePosition {
    /// Scheduler steps taken: applied updates.
    steps: u64,
    /// A counted schedule's counters and decisions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    counted: Option<CountedPosition>,
}

/// What a counted schedule decided on the run, by the fields of [`Counted`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct CountedPosition {
    /// Updates, microbatches, examples and tokens after the last step.
    at: [u64; 4],
    decay_from: Option<u64>,
    warmup_end: Option<u64>,
    total_end: Option<u64>,
}

impl SchedulePosition {
    /// Scheduler steps taken: applied updates.
    pub fn steps(&self) -> Updates {
        Updates::new(self.steps)
    }

    /// Whether it is a [counted](Schedule::counted) schedule's position.
    pub fn is_counted(&self) -> bool {
        self.counted.is_some()
    }
}

/// The run's real counters, as a loop counts them: what a counted schedule
/// ([`Schedule::counted`]) follows. The driver's
/// [`Progress`](crate::driver::Progress) is one.
pub trait Consumed {
    /// How much of `unit` the applied updates so far consumed.
    fn count(&self, unit: UnitKind) -> u64;
}

/// A schedule whose lengths are counted on the run's real counters.
#[derive(Clone, Debug, PartialEq)]
struct Counted {
    warmup: Span,
    total: Span,
    /// The counters after the applied updates so far, by [`unit_index`].
    at: [u64; 4],
    /// Where the decay starts, in the total's unit: the warmup's value when
    /// both are in one unit, else the count of the total's unit at the
    /// update that ended the warmup, once it has.
    decay_from: Option<u64>,
    /// The update in which the warmup ended, and the one in which the
    /// total was reached.
    warmup_end: Option<Updates>,
    total_end: Option<Updates>,
}

fn unit_index(unit: UnitKind) -> usize {
    match unit {
        UnitKind::Update => 0,
        UnitKind::Microbatch => 1,
        UnitKind::Example => 2,
        UnitKind::Token => 3,
    }
}

/// What a schedule under a ramp-up counts: the tokens (examples,
/// microbatches) consumed, through the stages.
#[derive(Clone, Debug, PartialEq)]
struct Clock {
    /// The unit the schedule counts.
    unit: UnitKind,
    /// The warmup, in `unit`.
    warmup: u64,
    /// The schedule's length, in `unit`.
    total: u64,
    /// The stages, to know what each update consumes.
    stages: StagedPlan,
}

/// Resolves a span to updates through the plan; tokens without a fixed
/// sequence length use `tokens_per_update` measured on the data.
pub fn span_to_updates(
    span: &Span,
    plan: &Plan,
    tokens_per_update: Option<u64>,
) -> Result<Updates, PlanError> {
    match (span.unit(), plan.seq_len(), tokens_per_update) {
        (UnitKind::Token, None, Some(per)) if per > 0 => {
            Ok(Updates::new(span.value().div_ceil(per)))
        }
        _ => plan.span_to_updates(span, Rounding::Up),
    }
}

/// Why a schedule could not be built from spans.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScheduleError {
    /// A span does not resolve through the plan (tokens without a fixed
    /// `seq_len`, a count that is not whole updates under `Rounding::Exact`,
    /// an overflow).
    Plan {
        /// Which span: `"warmup"` or `"total"`.
        which: &'static str,
        /// The plan's reason.
        error: PlanError,
    },
    /// The run has no update.
    ZeroTotal,
    /// The warmup is longer than the run (`accum::span::warmup`), compared
    /// in one unit: in updates, or through the plan for a counted schedule,
    /// whose lengths stay in their units.
    WarmupTooLong {
        /// The warmup as written.
        warmup: Span,
        /// The run's length as written.
        total: Span,
        /// Both in the finer unit, when they differ.
        compared: Option<(Span, Span)>,
    },
    /// A length in tokens without a fixed `seq_len`: it is no number of
    /// updates before the run, and the run's real token count must decide.
    NeedsCounting {
        /// Which span: `"warmup"` or `"total"`.
        which: &'static str,
        /// The length.
        span: Span,
    },
}

impl fmt::Display for ScheduleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScheduleError::Plan { which, error } => write!(f, "the schedule's {which}: {error}"),
            ScheduleError::ZeroTotal => write!(
                f,
                "the schedule's total is 0 updates; a run needs at least 1 update"
            ),
            ScheduleError::WarmupTooLong {
                warmup,
                total,
                compared,
            } => {
                write!(
                    f,
                    "the warmup of {warmup} is longer than the run of {total}"
                )?;
                if let Some((w, t)) = compared {
                    write!(f, " ({w} > {t} through the plan)")?;
                }
                write!(f, "; shorten the warmup or lengthen the run")
            }
            ScheduleError::NeedsCounting { which, span } => write!(
                f,
                "the schedule's {which} is {span}, and without a fixed seq_len a count of tokens is not a number of \
                 updates; build the schedule with `Schedule::counted` and give it to the driver, which steps it \
                 with the run's real token counts, or declare the seq_len of fixed-length data"
            ),
        }
    }
}

impl std::error::Error for ScheduleError {}

impl ScheduleError {
    /// The rule the error breaks, when it breaks one of docs/rules.md
    /// (`None` for a run of no update).
    pub fn code(&self) -> Option<Code> {
        match self {
            ScheduleError::Plan { error, .. } => Some(error.code()),
            ScheduleError::ZeroTotal => None,
            ScheduleError::WarmupTooLong { .. } => Some(Code::Warmup),
            ScheduleError::NeedsCounting { .. } => Some(Code::SeqLen),
        }
    }

    /// The plan's refusal of length `which` (`span`): a length in tokens
    /// that needs a fixed `seq_len` is one to count on the run.
    fn of(which: &'static str, span: Span, error: PlanError) -> ScheduleError {
        match error {
            PlanError::NeedsSeqLen { .. } if span.unit() == UnitKind::Token => {
                ScheduleError::NeedsCounting { which, span }
            }
            error => ScheduleError::Plan { which, error },
        }
    }
}

/// A length `a` that must fit in the run's length `b`, and `b`, in the
/// finer of their units, when the plan converts them exactly; `None` when
/// only the run can tell. The run's real tokens are its supervised ones,
/// at most `L` per example with a fixed `seq_len`, so a run not written in
/// tokens holds at most its examples × `L` tokens: a count of tokens
/// longer than that cannot fit. A run written in tokens can hold any
/// number of examples.
pub(crate) fn in_one_unit(a: Span, b: Span, staged: &StagedPlan) -> Option<(Span, Span)> {
    if a.unit() == b.unit() {
        return Some((a, b));
    }
    if b.unit() == UnitKind::Token {
        return None;
    }
    let unit = if Clocked::fineness(a.unit()) >= Clocked::fineness(b.unit()) {
        a.unit()
    } else {
        b.unit()
    };
    let convert = |span: Span| {
        staged
            .convert(span.value(), span.unit(), unit, Rounding::Exact)
            .ok()
            .map(|v| Span::new(v, unit))
    };
    Some((convert(a)?, convert(b)?))
}

impl Schedule {
    /// A schedule of `kind` from `base_lr` with `warmup` and `total` in updates.
    pub fn new(kind: ScheduleKind, base_lr: f64, warmup: Updates, total: Updates) -> Schedule {
        Schedule {
            kind,
            base_lr,
            warmup,
            total,
            steps: Updates::ZERO,
            clock: None,
            counted: None,
        }
    }

    /// The schedule a config section describes, resolved through the plan.
    /// The warmup may not exceed the total, and the total must be at least
    /// one update.
    pub fn resolve(
        section: &ScheduleSection,
        base_lr: f64,
        plan: &Plan,
        tokens_per_update: Option<u64>,
    ) -> Result<Schedule, ScheduleError> {
        let resolve = |which, span: Span| {
            span_to_updates(&span, plan, tokens_per_update)
                .map_err(|error| ScheduleError::of(which, span, error))
        };
        let warmup = resolve("warmup", section.warmup)?;
        let total = resolve("total", section.run_length())?;
        Schedule::new(section.kind, base_lr, warmup, total).checked()
    }

    /// A schedule whose lengths are counted on the run itself: the warmup
    /// ends on the update whose real count (tokens, examples, …, as the
    /// driver counts them: [`Consumed`]) reaches it, and the decay runs to
    /// the update whose count reaches `total`. Exact for variable-length
    /// data, with no estimate of the tokens per update; also exact for
    /// examples when partial groups make some updates smaller than `B`.
    ///
    /// Give it to the [`Driver`](crate::driver::Driver), which steps it
    /// with its [`Progress`](crate::driver::Progress) after every applied
    /// update ([`step_to`](Self::step_to)) and runs until `total` when no
    /// other length is given. Lengths in different units are compared
    /// through `plan` where the plan converts them exactly (updates,
    /// microbatches, examples); a warmup in tokens against a run in
    /// examples can only be compared on the run, and the driver says so if
    /// the run ends before the warmup ([`DriverNote`](crate::driver::DriverNote)).
    pub fn counted(
        kind: ScheduleKind,
        base_lr: f64,
        warmup: impl Into<Span>,
        total: impl Into<Span>,
        plan: impl Into<StagedPlan>,
    ) -> Result<Schedule, ScheduleError> {
        let (warmup, total) = (warmup.into(), total.into());
        if total.value() == 0 {
            return Err(ScheduleError::ZeroTotal);
        }
        let staged = plan.into();
        if let Some((w, t)) = in_one_unit(warmup, total, &staged)
            && w.value() > t.value()
        {
            return Err(ScheduleError::WarmupTooLong {
                warmup,
                total,
                compared: (warmup.unit() != total.unit()).then_some((w, t)),
            });
        }
        let in_updates = |span: Span| match span.unit() {
            UnitKind::Update => Updates::new(span.value()),
            _ => Updates::MAX,
        };
        let no_warmup = warmup.value() == 0;
        let mut schedule = Schedule::new(kind, base_lr, in_updates(warmup), in_updates(total));
        schedule.counted = Some(Counted {
            warmup,
            total,
            at: [0; 4],
            decay_from: if no_warmup {
                Some(0)
            } else {
                (warmup.unit() == total.unit()).then_some(warmup.value())
            },
            warmup_end: no_warmup.then_some(Updates::ZERO),
            total_end: None,
        });
        Ok(schedule)
    }

    /// A schedule whose warmup and total are spans in any unit — a user's
    /// own config fields — resolved to updates through `plan` with an
    /// explicit `rounding` (`accum::span`, `accum::run::scheduler`). The warmup may not exceed the total,
    /// and the total must be at least one update.
    pub fn from_spans(
        kind: ScheduleKind,
        base_lr: f64,
        warmup: impl Into<Span>,
        total: impl Into<Span>,
        plan: &Plan,
        rounding: Rounding,
    ) -> Result<Schedule, ScheduleError> {
        let resolve = |which, span: Span| {
            plan.span_to_updates(&span, rounding)
                .map_err(|error| ScheduleError::of(which, span, error))
        };
        let warmup = resolve("warmup", warmup.into())?;
        let total = resolve("total", total.into())?;
        Schedule::new(kind, base_lr, warmup, total).checked()
    }

    /// The schedule a config section describes, through the stages of a
    /// batch ramp-up (see the [module docs](self)): written in tokens,
    /// examples or microbatches, it counts what each applied update
    /// consumes and ends at the same count whatever the stages; written in
    /// updates, it counts updates. `warmup()` and `total()` are the updates
    /// in which the lengths end (rounded up, so a partial update counts, as
    /// [`resolve`](Self::resolve) rounds). Tokens need a fixed `seq_len`, or
    /// `measured`: the data's supervised tokens and its examples, when the
    /// lengths vary (`accum::plan::seq-len`). With one stage this is [`resolve`](Self::resolve).
    pub fn resolve_staged(
        section: &ScheduleSection,
        base_lr: f64,
        staged: &StagedPlan,
        measured: Option<(Tokens, Examples)>,
    ) -> Result<Schedule, ScheduleError> {
        if staged.is_constant() {
            // One plan: tokens at the data's measured length become the
            // examples that hold them, as through the stages, so a length in
            // tokens ends where it ends under a ramp-up.
            let plan = staged.final_plan();
            let section = match measured {
                Some((tokens, examples)) if plan.seq_len().is_none() => {
                    let as_examples = |which, span: Span| match span.unit() {
                        UnitKind::Token => tokens_as_examples(span, tokens, examples)
                            .map_err(|error| ScheduleError::Plan { which, error }),
                        _ => Ok(span),
                    };
                    ScheduleSection {
                        kind: section.kind,
                        warmup: as_examples("warmup", section.warmup)?,
                        total: Some(as_examples("total", section.run_length())?),
                    }
                }
                _ => section.clone(),
            };
            return Schedule::resolve(&section, base_lr, plan, None);
        }
        let clock = |span: Span| Clocked::of(span, staged, measured);
        let (warmup, total) = (section.warmup, section.run_length());
        Clock::build(
            section.kind,
            base_lr,
            clock(warmup),
            clock(total),
            staged,
            Rounding::Up,
        )
        .map_err(|(which, error)| {
            let span = if which == "warmup" { warmup } else { total };
            ScheduleError::of(which, span, error)
        })?
        .checked()
    }

    /// A schedule whose warmup and total are spans in any unit — a user's
    /// own config fields — through the stages of a batch ramp-up (see the
    /// [module docs](self)). `rounding` says how the lengths become whole
    /// updates for [`warmup`](Self::warmup) and [`total`](Self::total) (the
    /// run stops after `total`); the schedule itself follows the tokens
    /// (examples, microbatches) exactly. The warmup may not exceed the
    /// total, and the total must be at least one update. With one stage
    /// this is [`from_spans`](Self::from_spans).
    pub fn from_spans_staged(
        kind: ScheduleKind,
        base_lr: f64,
        warmup: impl Into<Span>,
        total: impl Into<Span>,
        staged: &StagedPlan,
        rounding: Rounding,
    ) -> Result<Schedule, ScheduleError> {
        let (warmup, total) = (warmup.into(), total.into());
        if staged.is_constant() {
            return Schedule::from_spans(
                kind,
                base_lr,
                warmup,
                total,
                staged.final_plan(),
                rounding,
            );
        }
        Clock::build(
            kind,
            base_lr,
            Clocked::of(warmup, staged, None),
            Clocked::of(total, staged, None),
            staged,
            rounding,
        )
        .map_err(|(which, error)| {
            let span = if which == "warmup" { warmup } else { total };
            ScheduleError::of(which, span, error)
        })?
        .checked()
    }

    /// The schedule, if it has at least one update and its warmup does not
    /// exceed its total (in updates): what a user's own lengths must meet.
    fn checked(self) -> Result<Schedule, ScheduleError> {
        if self.total.is_zero() {
            return Err(ScheduleError::ZeroTotal);
        }
        if self.warmup > self.total {
            return Err(ScheduleError::WarmupTooLong {
                warmup: Span::of(self.warmup),
                total: Span::of(self.total),
                compared: None,
            });
        }
        Ok(self)
    }

    /// What the schedule counts: `Update` for a constant plan or lengths in
    /// updates, else the finest unit of its lengths (tokens, examples or
    /// microbatches consumed), through the stages.
    pub fn clock(&self) -> UnitKind {
        if let Some(c) = &self.counted {
            let (w, t) = (c.warmup.unit(), c.total.unit());
            return if Clocked::fineness(w) >= Clocked::fineness(t) {
                w
            } else {
                t
            };
        }
        self.clock.as_ref().map_or(UnitKind::Update, |c| c.unit)
    }

    /// Whether the lengths are counted on the run ([`counted`](Self::counted)).
    pub fn is_counted(&self) -> bool {
        self.counted.is_some()
    }

    /// The warmup in the unit the schedule counts ([`clock`](Self::clock)).
    /// A counted schedule's warmup as written.
    pub fn warmup_length(&self) -> Span {
        if let Some(c) = &self.counted {
            return c.warmup;
        }
        match &self.clock {
            Some(clock) => Span::new(clock.warmup, clock.unit),
            None => Span::of(self.warmup),
        }
    }

    /// The schedule's length in the unit it counts ([`clock`](Self::clock)).
    /// A counted schedule's total as written.
    pub fn total_length(&self) -> Span {
        if let Some(c) = &self.counted {
            return c.total;
        }
        match &self.clock {
            Some(clock) => Span::new(clock.total, clock.unit),
            None => Span::of(self.total),
        }
    }

    /// The kind of schedule.
    pub fn kind(&self) -> ScheduleKind {
        self.kind
    }

    /// The peak learning rate.
    pub fn base_lr(&self) -> f64 {
        self.base_lr
    }

    /// Warmup length in updates: under a ramp-up, the update in which the
    /// warmup ends (rounded as the schedule was built). A counted schedule
    /// knows it once the run reached it (the update whose count did), or
    /// when it is written in updates; before, it is [`Updates::MAX`].
    pub fn warmup(&self) -> Updates {
        match &self.counted {
            Some(c) => c.warmup_end.unwrap_or(self.warmup),
            None => self.warmup,
        }
    }

    /// Total length in updates: under a ramp-up, the update in which the
    /// schedule ends (rounded as the schedule was built). A counted
    /// schedule knows it as it knows [`warmup`](Self::warmup).
    pub fn total(&self) -> Updates {
        match &self.counted {
            Some(c) => c.total_end.unwrap_or(self.total),
            None => self.total,
        }
    }

    /// Whether the applied updates so far have finished the warmup.
    pub fn warmup_reached(&self) -> bool {
        match &self.counted {
            Some(c) => c.warmup_end.is_some(),
            None => self.steps >= self.warmup,
        }
    }

    /// Scheduler steps taken (`accum::run::scheduler`: equals applied updates in a correct loop).
    pub fn steps(&self) -> Updates {
        self.steps
    }

    /// Where the schedule stands: its steps, and a counted schedule's
    /// counters and decisions. Saved with a checkpoint, it puts a schedule
    /// built the same way back at the same learning rate
    /// ([`set_position`](Self::set_position)).
    pub fn position(&self) -> SchedulePosition {
        SchedulePosition {
            steps: self.steps.get(),
            counted: self.counted.as_ref().map(|c| CountedPosition {
                at: c.at,
                decay_from: c.decay_from,
                warmup_end: c.warmup_end.map(Updates::get),
                total_end: c.total_end.map(Updates::get),
            }),
        }
    }

    /// Moves the schedule to `position`, as if it had stepped through the
    /// updates before it: O(1), nothing is replayed. A position of a
    /// counted schedule fits only a counted one, and the other way round
    /// (a counted schedule's rate depends on counters an uncounted
    /// position does not hold): else the schedule is left as it is and the
    /// kind of each is returned as `Err((saved, this))`, `true` for counted.
    pub fn set_position(&mut self, position: &SchedulePosition) -> Result<(), (bool, bool)> {
        match (&mut self.counted, &position.counted) {
            (None, None) => {}
            (Some(c), Some(p)) => {
                c.at = p.at;
                c.decay_from = p.decay_from;
                c.warmup_end = p.warmup_end.map(Updates::new);
                c.total_end = p.total_end.map(Updates::new);
            }
            (mine, saved) => return Err((saved.is_some(), mine.is_some())),
        }
        self.steps = Updates::new(position.steps);
        Ok(())
    }

    /// The learning rate for the next update.
    pub fn lr(&self) -> f64 {
        match &self.counted {
            Some(c) => self.counted_rate(c),
            None => self.lr_at(self.steps.get()),
        }
    }

    /// The rate of a counted schedule at its counters.
    fn counted_rate(&self, c: &Counted) -> f64 {
        let Some(from) = c.decay_from.filter(|_| c.warmup_end.is_some()) else {
            let done = c.at[unit_index(c.warmup.unit())];
            return self.base_lr * done as f64 / c.warmup.value() as f64;
        };
        // A warmup that ended at or past the total leaves no decay: the
        // schedule is over, as it is at the total.
        if from >= c.total.value() && self.kind != ScheduleKind::Constant {
            return 0.0;
        }
        let at = c.at[unit_index(c.total.unit())].max(from);
        self.factor_at(at, from, c.total.value())
    }

    /// The learning rate for the update after `step` applied updates. Under
    /// a ramp-up whose schedule counts tokens (examples, microbatches), it is
    /// the rate at what those updates consumed. A counted schedule knows
    /// only the counters of the updates stepped so far: it gives the rate
    /// at them, [`lr`](Self::lr), whatever `step`.
    pub fn lr_at(&self, step: u64) -> f64 {
        if let Some(c) = &self.counted {
            return self.counted_rate(c);
        }
        match &self.clock {
            None => self.factor_at(step, self.warmup.get(), self.total.get()),
            Some(clock) => {
                let consumed = clock
                    .stages
                    .consumed(Updates::new(step), clock.unit)
                    .unwrap_or(u64::MAX);
                self.factor_at(consumed, clock.warmup, clock.total)
            }
        }
    }

    /// The rate at `position` of a schedule with `warmup` and `total` in
    /// the same unit.
    fn factor_at(&self, position: u64, warmup: u64, total: u64) -> f64 {
        if position < warmup {
            return self.base_lr * position as f64 / warmup as f64;
        }
        let factor = match self.kind {
            ScheduleKind::Constant => 1.0,
            ScheduleKind::Linear | ScheduleKind::Cosine if total <= warmup => 1.0,
            ScheduleKind::Linear => {
                (total.saturating_sub(position)) as f64 / (total - warmup) as f64
            }
            ScheduleKind::Cosine => {
                let progress = ((position - warmup) as f64 / (total - warmup) as f64).min(1.0);
                0.5 * (1.0 + (std::f64::consts::PI * progress).cos())
            }
        };
        self.base_lr * factor
    }

    /// Advances by one applied update. A counted schedule also needs the
    /// run's counters: [`step_to`](Self::step_to).
    pub fn step(&mut self) {
        self.steps = self.steps.saturating_add_one();
    }

    /// Advances by one applied update, after which the run's counters are
    /// `counters` (the driver's [`Progress`](crate::driver::Progress)). A
    /// counted schedule moves to them: its warmup ends on this update when
    /// the count reaches the warmup, and so does its total.
    pub fn step_to(&mut self, counters: &dyn Consumed) {
        self.step();
        let steps = self.steps;
        let Some(c) = &mut self.counted else {
            return;
        };
        for unit in [
            UnitKind::Update,
            UnitKind::Microbatch,
            UnitKind::Example,
            UnitKind::Token,
        ] {
            c.at[unit_index(unit)] = counters.count(unit);
        }
        if c.warmup_end.is_none() && c.at[unit_index(c.warmup.unit())] >= c.warmup.value() {
            c.warmup_end = Some(steps);
            c.decay_from.get_or_insert(c.at[unit_index(c.total.unit())]);
        }
        if c.total_end.is_none() && c.at[unit_index(c.total.unit())] >= c.total.value() {
            c.total_end = Some(steps);
        }
    }
}

/// A length in tokens as the examples that hold it at the data's measured
/// length: `tokens` supervised tokens over `examples` examples (`accum::plan::seq-len`),
/// rounded up so that a partial example counts, as a partial update does.
pub(crate) fn tokens_as_examples(
    span: Span,
    tokens: Tokens,
    examples: Examples,
) -> Result<Span, PlanError> {
    let value = u128::from(span.value()) * u128::from(examples.get());
    let value = value.div_ceil(u128::from(tokens.get().max(1)));
    u64::try_from(value)
        .map(|value| Span::new(value, UnitKind::Example))
        .map_err(|_| PlanError::Overflow {
            equation: format!("{span} in examples"),
        })
}

/// A length in the unit a staged schedule counts.
struct Clocked {
    /// The length as written.
    span: Span,
    /// The unit the length can be counted in: its own, or examples for
    /// tokens without a fixed `seq_len` but with measured data.
    unit: UnitKind,
    /// The length in `unit`, or why it has none.
    value: Result<u64, PlanError>,
}

impl Clocked {
    fn of(span: Span, staged: &StagedPlan, measured: Option<(Tokens, Examples)>) -> Clocked {
        let needs_examples =
            span.unit() == UnitKind::Token && staged.final_plan().seq_len().is_none();
        match (needs_examples, measured) {
            (true, Some((tokens, examples))) if tokens.get() > 0 => Clocked {
                span,
                unit: UnitKind::Example,
                value: tokens_as_examples(span, tokens, examples).map(|s| s.value()),
            },
            (true, _) => Clocked {
                span,
                unit: UnitKind::Token,
                value: Err(PlanError::NeedsSeqLen {
                    value: span.value(),
                    unit: UnitKind::Token,
                    to: UnitKind::Update,
                }),
            },
            (false, _) => Clocked {
                span,
                unit: span.unit(),
                value: Ok(span.value()),
            },
        }
    }

    /// How fine the unit is: a schedule counts the finest unit of its lengths.
    fn fineness(unit: UnitKind) -> u8 {
        match unit {
            UnitKind::Update => 0,
            UnitKind::Microbatch => 1,
            UnitKind::Example => 2,
            UnitKind::Token => 3,
        }
    }

    /// The length in `unit` (at least as fine as its own): exact, through
    /// the stages.
    fn count_in(&self, unit: UnitKind, staged: &StagedPlan) -> Result<u64, PlanError> {
        let value = self.value.clone()?;
        staged.convert(value, self.unit, unit, Rounding::Exact)
    }
}

impl Clock {
    /// A schedule through `staged` whose lengths are `warmup` and `total`;
    /// `rounding` makes them whole updates. An error names the length.
    fn build(
        kind: ScheduleKind,
        base_lr: f64,
        warmup: Clocked,
        total: Clocked,
        staged: &StagedPlan,
        rounding: Rounding,
    ) -> Result<Schedule, (&'static str, PlanError)> {
        // A length that cannot be counted at all is reported before any
        // conversion of the other.
        for (which, length) in [("warmup", &warmup), ("total", &total)] {
            if let Err(error) = &length.value {
                return Err((which, error.clone()));
            }
        }
        let unit = if Clocked::fineness(warmup.unit) >= Clocked::fineness(total.unit) {
            warmup.unit
        } else {
            total.unit
        };
        let warmup_at = warmup.count_in(unit, staged).map_err(|e| ("warmup", e))?;
        let total_at = total.count_in(unit, staged).map_err(|e| ("total", e))?;
        let updates = |value: u64, which: &'static str, span: Span| {
            staged
                .to_updates(value, unit, rounding)
                .map_err(|error| match error {
                    // Say it about the length as written.
                    PlanError::NotWholeUpdates { per_update, .. } if span.unit() == unit => (
                        which,
                        PlanError::NotWholeUpdates {
                            value: span.value(),
                            unit,
                            per_update,
                        },
                    ),
                    other => (which, other),
                })
        };
        let warmup_updates = updates(warmup_at, "warmup", warmup.span)?;
        let total_updates = updates(total_at, "total", total.span)?;
        let mut schedule = Schedule::new(kind, base_lr, warmup_updates, total_updates);
        if unit != UnitKind::Update {
            schedule.clock = Some(Clock {
                unit,
                warmup: warmup_at,
                total: total_at,
                stages: staged.clone(),
            });
        }
        Ok(schedule)
    }
}

trait SaturatingOne {
    fn saturating_add_one(self) -> Self;
}

impl SaturatingOne for Updates {
    fn saturating_add_one(self) -> Updates {
        Updates::new(self.get().saturating_add(1))
    }
}

// `?` in `main` prints the sentence, not the fields.
crate::code::debug_as_display!(ScheduleError);

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn warmup_then_linear_and_cosine() {
        let lin = Schedule::new(ScheduleKind::Linear, 1.0, Updates::new(4), Updates::new(12));
        let got: Vec<f64> = (0..14).map(|u| lin.lr_at(u)).collect();
        assert_eq!(&got[..5], &[0.0, 0.25, 0.5, 0.75, 1.0]);
        assert!((got[8] - 0.5).abs() < 1e-12);
        assert_eq!(got[12], 0.0);
        assert_eq!(got[13], 0.0);
        let cos = Schedule::new(ScheduleKind::Cosine, 2.0, Updates::new(0), Updates::new(10));
        assert_eq!(cos.lr_at(0), 2.0);
        assert!((cos.lr_at(5) - 1.0).abs() < 1e-12);
        assert!(cos.lr_at(10).abs() < 1e-12);
        let constant = Schedule::new(
            ScheduleKind::Constant,
            0.5,
            Updates::new(2),
            Updates::new(3),
        );
        assert_eq!(constant.lr_at(1), 0.25);
        assert_eq!(constant.lr_at(100), 0.5);
    }

    #[test]
    fn steps_advance_per_update() {
        let mut s = Schedule::new(ScheduleKind::Linear, 1.0, Updates::new(2), Updates::new(4));
        assert_eq!(s.lr(), 0.0);
        s.step();
        assert_eq!(s.lr(), 0.5);
        assert_eq!(s.steps(), Updates::new(1));
    }

    #[test]
    fn user_fields_in_any_unit_resolve_with_explicit_rounding() {
        #[derive(serde::Deserialize)]
        struct MyRun {
            lr: f64,
            schedule: ScheduleKind,
            warmup: Span,
            length: Updates,
        }
        let run: MyRun = toml::from_str(
            "lr = 0.1\nschedule = \"linear\"\nwarmup = \"1.5k examples\"\nlength = \"200 updates\"",
        )
        .unwrap();
        let plan = Plan::new(2, 8, 2).unwrap(); // B = 32: 1,500 examples = 46.875 updates
        let build = |rounding| {
            Schedule::from_spans(
                run.schedule,
                run.lr,
                run.warmup,
                run.length,
                &plan,
                rounding,
            )
        };
        assert_eq!(build(Rounding::Up).unwrap().warmup(), Updates::new(47));
        assert_eq!(build(Rounding::Down).unwrap().warmup(), Updates::new(46));
        let exact = build(Rounding::Exact).unwrap_err();
        assert!(
            matches!(
                exact,
                ScheduleError::Plan {
                    which: "warmup",
                    error: PlanError::NotWholeUpdates { .. }
                }
            ),
            "{exact:?}"
        );
        let s = build(Rounding::Up).unwrap();
        assert_eq!(
            (s.kind(), s.base_lr(), s.total()),
            (ScheduleKind::Linear, 0.1, Updates::new(200))
        );
        assert!((s.lr_at(47) - 0.1).abs() < 1e-15);
        assert!((s.lr_at(200)).abs() < 1e-15);

        let tokens = Schedule::from_spans(
            ScheduleKind::Constant,
            1.0,
            Updates::ZERO,
            "1M tokens".parse::<Span>().unwrap(),
            &plan,
            Rounding::Up,
        )
        .unwrap_err();
        assert_eq!(
            tokens,
            ScheduleError::NeedsCounting {
                which: "total",
                span: "1M tokens".parse().unwrap()
            }
        );
        assert!(
            tokens.to_string().contains("`Schedule::counted`"),
            "{tokens}"
        );
        let long = Schedule::from_spans(
            ScheduleKind::Constant,
            1.0,
            Updates::new(5),
            Updates::new(4),
            &plan,
            Rounding::Up,
        );
        assert_eq!(
            long,
            Err(ScheduleError::WarmupTooLong {
                warmup: Span::of(Updates::new(5)),
                total: Span::of(Updates::new(4)),
                compared: None,
            })
        );
        let zero = Schedule::from_spans(
            ScheduleKind::Constant,
            1.0,
            Updates::ZERO,
            Updates::ZERO,
            &plan,
            Rounding::Up,
        );
        assert_eq!(zero, Err(ScheduleError::ZeroTotal));
    }

    #[test]
    fn spans_resolve_through_the_plan() {
        let plan = Plan::new(4, 2, 2).unwrap(); // B = 16
        let section = ScheduleSection {
            kind: ScheduleKind::Cosine,
            warmup: "32 examples".parse().unwrap(),
            total: Some("80 microbatches".parse().unwrap()),
        };
        let s = Schedule::resolve(&section, 1e-3, &plan, None).unwrap();
        assert_eq!((s.warmup(), s.total()), (Updates::new(2), Updates::new(40)));
        let tokens = ScheduleSection {
            total: Some("1000 tokens".parse().unwrap()),
            ..section.clone()
        };
        assert!(matches!(
            Schedule::resolve(&tokens, 1e-3, &plan, None),
            Err(ScheduleError::NeedsCounting { which: "total", .. })
        ));
        let s = Schedule::resolve(&tokens, 1e-3, &plan, Some(300)).unwrap();
        assert_eq!(s.total(), Updates::new(4));
    }

    fn stages(seq_len: Option<u64>) -> StagedPlan {
        use crate::plan::StageSpec;
        // m 4 × D 2: 50 updates of 32, 50 of 64, then 128 to the end.
        let base = Plan::new(4, 16, 2).unwrap();
        let base = match seq_len {
            Some(len) => base.with_seq_len(len).unwrap(),
            None => base,
        };
        StagedPlan::ramp_to(
            &base,
            &[
                StageSpec::global_batch(32).until("50 updates".parse().unwrap()),
                StageSpec::global_batch(64).until("100 updates".parse().unwrap()),
            ],
        )
        .unwrap()
    }

    #[test]
    fn a_token_schedule_under_a_ramp_counts_tokens() {
        let staged = stages(Some(1000));
        // Warmup 4.8M tokens = both ramp stages (1.6M + 3.2M); total 17.6M
        // tokens = 100 more updates of 128,000.
        let s = Schedule::from_spans_staged(
            ScheduleKind::Linear,
            1.0,
            "4.8M tokens".parse::<Span>().unwrap(),
            "17.6M tokens".parse::<Span>().unwrap(),
            &staged,
            Rounding::Exact,
        )
        .unwrap();
        assert_eq!(
            (s.warmup(), s.total()),
            (Updates::new(100), Updates::new(200))
        );
        assert_eq!(s.clock(), UnitKind::Token);
        assert_eq!(s.warmup_length(), "4.8M tokens".parse().unwrap());
        // After the first stage: 1.6M of 4.8M tokens, a third of the warmup
        // (per update it would be half: 50 of 100 updates).
        assert!((s.lr_at(50) - 1.0 / 3.0).abs() < 1e-15);
        assert_eq!(s.lr_at(100), 1.0);
        assert!((s.lr_at(150) - 0.5).abs() < 1e-15);
        assert_eq!(s.lr_at(200), 0.0);

        // In updates it stays per update.
        let per_update = Schedule::from_spans_staged(
            ScheduleKind::Linear,
            1.0,
            Updates::new(100),
            Updates::new(200),
            &staged,
            Rounding::Exact,
        )
        .unwrap();
        assert_eq!(per_update.clock(), UnitKind::Update);
        assert_eq!(per_update.lr_at(50), 0.5);

        // Mixed units count the finer one: a warmup in updates is the
        // tokens those updates consume.
        let mixed = Schedule::from_spans_staged(
            ScheduleKind::Constant,
            2.0,
            Updates::new(100),
            "17.6M tokens".parse::<Span>().unwrap(),
            &staged,
            Rounding::Exact,
        )
        .unwrap();
        assert_eq!(mixed.warmup_length(), "4.8M tokens".parse().unwrap());
        assert!((mixed.lr_at(50) - 2.0 / 3.0).abs() < 1e-15);
    }

    #[test]
    fn staged_lengths_are_checked_like_constant_ones() {
        let staged = stages(Some(1000));
        let inside = Schedule::from_spans_staged(
            ScheduleKind::Linear,
            1.0,
            "1M tokens".parse::<Span>().unwrap(),
            "17.6M tokens".parse::<Span>().unwrap(),
            &staged,
            Rounding::Exact,
        );
        // 1M tokens end inside update 32 of the first stage (32,000 tokens each).
        assert_eq!(
            inside,
            Err(ScheduleError::Plan {
                which: "warmup",
                error: PlanError::NotWholeUpdates {
                    value: 1_000_000,
                    unit: UnitKind::Token,
                    per_update: 32_000
                }
            })
        );
        let long = Schedule::from_spans_staged(
            ScheduleKind::Linear,
            1.0,
            "20M tokens".parse::<Span>().unwrap(),
            Updates::new(200),
            &staged,
            Rounding::Up,
        );
        assert_eq!(
            long,
            Err(ScheduleError::WarmupTooLong {
                warmup: Span::of(Updates::new(219)),
                total: Span::of(Updates::new(200)),
                compared: None,
            })
        );
        let no_len = Schedule::from_spans_staged(
            ScheduleKind::Linear,
            1.0,
            Updates::ZERO,
            "1M tokens".parse::<Span>().unwrap(),
            &stages(None),
            Rounding::Up,
        );
        assert!(
            matches!(
                no_len,
                Err(ScheduleError::NeedsCounting { which: "total", .. })
            ),
            "{no_len:?}"
        );
    }

    #[test]
    fn a_section_resolves_through_the_stages_with_measured_tokens() {
        let section = ScheduleSection {
            kind: ScheduleKind::Linear,
            warmup: "48k tokens".parse().unwrap(),
            total: Some("176k tokens".parse().unwrap()),
        };
        // Variable lengths: 10 tokens per example on the data, so the
        // lengths are 4,800 and 17,600 examples.
        let measured = Some((Tokens::new(2_560), Examples::new(256)));
        let s = Schedule::resolve_staged(&section, 1.0, &stages(None), measured).unwrap();
        assert_eq!(s.clock(), UnitKind::Example);
        assert_eq!(
            (s.warmup(), s.total()),
            (Updates::new(100), Updates::new(200))
        );
        assert!((s.lr_at(50) - 1.0 / 3.0).abs() < 1e-15);
        assert!(matches!(
            Schedule::resolve_staged(&section, 1.0, &stages(None), None),
            Err(ScheduleError::NeedsCounting {
                which: "warmup",
                ..
            })
        ));
        // With one stage it is `resolve`, with the tokens per update measured.
        let plan = Plan::new(4, 16, 2).unwrap();
        assert_eq!(
            Schedule::resolve_staged(&section, 1.0, &StagedPlan::constant(plan), measured),
            Schedule::resolve(&section, 1.0, &plan, Some(1_280))
        );
    }

    #[test]
    fn every_path_refuses_a_warmup_longer_than_the_run() {
        // 1M tokens at 27.7 measured tokens per example over B = 64: a
        // 564-update warmup in a 100-update run.
        let plan = Plan::new(4, 2, 8).unwrap();
        let section = ScheduleSection {
            kind: ScheduleKind::Cosine,
            warmup: "1M tokens".parse().unwrap(),
            total: Some("100 updates".parse().unwrap()),
        };
        let measured = Some((Tokens::new(27_700), Examples::new(1_000)));
        let staged = StagedPlan::constant(plan);
        let err = Schedule::resolve_staged(&section, 0.5, &staged, measured).unwrap_err();
        assert_eq!(
            err,
            ScheduleError::WarmupTooLong {
                warmup: Span::of(Updates::new(565)),
                total: Span::of(Updates::new(100)),
                compared: None,
            }
        );
        // Through stages too, and in examples.
        let section = ScheduleSection {
            warmup: "7000 examples".parse().unwrap(),
            total: Some("100 updates".parse().unwrap()),
            ..section
        };
        let err = Schedule::resolve_staged(&section, 0.5, &stages(None), None).unwrap_err();
        assert!(
            matches!(err, ScheduleError::WarmupTooLong { .. }),
            "{err:?}"
        );
        assert!(Schedule::resolve(&section, 0.5, &plan, None).is_err());
        // A counted schedule compares what the plan converts exactly:
        // 7,000 examples against 100 updates of 64.
        let err = Schedule::counted(
            ScheduleKind::Linear,
            0.5,
            "7000 examples".parse::<Span>().unwrap(),
            Updates::new(100),
            plan,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "the warmup of 7k examples is longer than the run of 100 updates \
             (7k examples > 6400 examples through the plan); shorten the warmup or lengthen the run"
        );
        assert_eq!(
            Schedule::counted(ScheduleKind::Linear, 0.5, Updates::ZERO, Tokens::ZERO, plan),
            Err(ScheduleError::ZeroTotal)
        );
    }

    /// Counters of a made-up run: `(updates, examples, tokens)`.
    struct Run(u64, u64, u64);

    impl Consumed for Run {
        fn count(&self, unit: UnitKind) -> u64 {
            match unit {
                UnitKind::Update => self.0,
                UnitKind::Microbatch => self.0 * 2,
                UnitKind::Example => self.1,
                UnitKind::Token => self.2,
            }
        }
    }

    #[test]
    fn a_counted_schedule_ends_its_warmup_where_the_real_tokens_cross_it() {
        // Warmup 1,000 tokens, run 40 examples; 8 examples per update with
        // 30, 200, 450, 500, 90 tokens: the warmup ends in update 4, where
        // the count goes from 680 to 1,180, and the run at 40 examples.
        let plan = Plan::new(4, 2, 1).unwrap();
        let mut lr = Schedule::counted(
            ScheduleKind::Linear,
            1.0,
            "1000 tokens".parse::<Span>().unwrap(),
            "40 examples".parse::<Span>().unwrap(),
            plan,
        )
        .unwrap();
        assert!(lr.is_counted());
        assert_eq!((lr.warmup(), lr.total()), (Updates::MAX, Updates::MAX));
        assert_eq!(lr.lr(), 0.0);
        let per_update = [30, 200, 450, 500, 90];
        let mut rates = Vec::new();
        let mut tokens = 0;
        for (u, t) in per_update.iter().enumerate() {
            tokens += t;
            let u = u as u64 + 1;
            lr.step_to(&Run(u, 8 * u, tokens));
            rates.push(lr.lr());
            assert_eq!(lr.warmup_reached(), u >= 4, "update {u}");
        }
        // During the warmup the rate is the tokens so far over the warmup's.
        assert_eq!(&rates[..3], &[0.03, 0.23, 0.68]);
        // The decay runs in examples from where the warmup ended (32) to 40.
        assert_eq!(rates[3], 1.0);
        assert_eq!(rates[4], 0.0);
        assert_eq!(
            (lr.warmup(), lr.total()),
            (Updates::new(4), Updates::new(5))
        );
        assert_eq!(lr.steps(), Updates::new(5));

        // In one unit the decay starts at the warmup's value, as per update.
        let mut same = Schedule::counted(
            ScheduleKind::Linear,
            2.0,
            "100 tokens".parse::<Span>().unwrap(),
            "300 tokens".parse::<Span>().unwrap(),
            plan,
        )
        .unwrap();
        same.step_to(&Run(1, 8, 150));
        assert_eq!(same.lr(), 2.0 * 150.0 / 200.0);
        same.step_to(&Run(2, 16, 310));
        assert_eq!(same.lr(), 0.0);
        assert_eq!(same.total(), Updates::new(2));
    }

    /// Stages from update counts and accumulations, on m 2 × D 2 and `L`.
    fn any_stages() -> impl Strategy<Value = StagedPlan> {
        (
            1u64..=64,
            proptest::collection::vec((1u64..=8, 1u64..=30), 1..5),
        )
            .prop_map(|(len, raw)| {
                use crate::plan::StageSpec;
                let base = Plan::new(2, 1, 2).unwrap().with_seq_len(len).unwrap();
                let mut specs = Vec::new();
                let mut updates = 0;
                for (i, (a, n)) in raw.iter().enumerate() {
                    updates += n;
                    let spec = StageSpec::accumulation(*a);
                    specs.push(if i + 1 == raw.len() {
                        spec
                    } else {
                        spec.until(Span::new(updates, UnitKind::Update))
                    });
                }
                StagedPlan::from_specs(&base, &specs).unwrap()
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// A counted schedule, for any real token counts per update: the
        /// rate is the tokens so far over the warmup until the update whose
        /// tokens reach it, that update is `warmup()`, the decay (in
        /// examples) never rises, and it reaches zero on the update whose
        /// examples reach the total.
        #[test]
        fn a_counted_warmup_ends_on_the_update_that_reaches_it(
            per_update in proptest::collection::vec((0u64..500, 1u64..=8), 1..80),
            warmup in 1u64..20_000, extra in 1u64..400,
        ) {
            let plan = Plan::new(4, 2, 1).unwrap();
            let examples_total: u64 = per_update.iter().map(|(_, e)| e).sum::<u64>() + extra;
            let total = examples_total / 2 + 1;
            let mut s = Schedule::counted(
                ScheduleKind::Cosine, 1.0,
                Span::new(warmup, UnitKind::Token), Span::new(total, UnitKind::Example),
                plan,
            ).unwrap();
            let (mut tokens, mut examples) = (0, 0);
            let mut last = f64::INFINITY;
            for (u, &(t, e)) in per_update.iter().enumerate() {
                let rate = s.lr();
                if tokens < warmup {
                    prop_assert_eq!(rate, tokens as f64 / warmup as f64);
                    prop_assert!(!s.warmup_reached());
                } else {
                    prop_assert!(rate <= last + 1e-15, "the decay rose: {} after {}", rate, last);
                    last = rate;
                    if examples >= total {
                        prop_assert!(rate.abs() < 1e-15);
                    }
                }
                let crossed = tokens < warmup && tokens + t >= warmup;
                tokens += t;
                examples += e;
                s.step_to(&Run(u as u64 + 1, examples, tokens));
                if crossed {
                    prop_assert_eq!(s.warmup(), Updates::new(u as u64 + 1));
                }
            }
            prop_assert_eq!(s.warmup_reached(), tokens >= warmup);
        }

        /// A schedule written in tokens is a function of the tokens consumed,
        /// whatever the stages: its warmup ends in the update that crosses the
        /// warmup's tokens, it reaches zero in the update that crosses the
        /// total's, and in between its rate is the shape at the tokens consumed.
        #[test]
        fn a_token_schedule_ends_at_the_same_tokens_for_any_stages(
            staged in any_stages(), warmup in 1u64..200_000, extra in 1u64..400_000,
        ) {
            let len = staged.final_plan().seq_len().unwrap();
            let (w, t) = (warmup * len, (warmup + extra) * len);
            let s = Schedule::from_spans_staged(
                ScheduleKind::Linear, 1.0,
                Span::new(w, UnitKind::Token), Span::new(t, UnitKind::Token),
                &staged, Rounding::Up,
            ).unwrap();
            let tokens = |u: u64| staged.tokens_at(Updates::new(u)).unwrap().get();
            let warmup_end = s.warmup().get();
            let end = s.total().get();
            prop_assert!(tokens(warmup_end) >= w && (warmup_end == 0 || tokens(warmup_end - 1) < w));
            prop_assert!(tokens(end) >= t && tokens(end - 1) < t);
            // One stage is `from_spans`: per update, with the lengths rounded
            // up to whole updates, so only where they end is the same.
            if staged.is_constant() {
                return Ok(());
            }
            prop_assert_eq!(s.lr_at(end), 0.0);
            prop_assert!(s.lr_at(end - 1) > 0.0);
            for u in [0, warmup_end.saturating_sub(1), warmup_end, (warmup_end + end) / 2, end - 1] {
                let p = tokens(u) as f64;
                let expected = if p < w as f64 { p / w as f64 } else { (t as f64 - p) / (t - w) as f64 };
                prop_assert!((s.lr_at(u) - expected).abs() < 1e-12, "update {}: {} vs {}", u, s.lr_at(u), expected);
            }
        }
    }
}
