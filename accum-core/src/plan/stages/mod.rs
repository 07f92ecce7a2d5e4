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
//! use accum_core::UnitKind;
//! use accum_core::Updates;
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

mod build;
mod error;

use serde::{Deserialize, Serialize};

pub use error::StageError;

use build::Builder;

use super::{Plan, PlanError, Rounding};
use crate::span::Span;
use crate::units::{Examples, Tokens, UnitKind, Updates};

/// The most stages a plan may have; a ramp with more increments is refused
/// before anything is allocated.
pub const MAX_STAGES: usize = 100_000;

/// One stage of a batch ramp-up: its batch and where it ends.
///
/// Give exactly one of `global_batch` and `accumulation`, and `until`: the
/// length of the run, counted from its start, at which the stage ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct StageSpec {
    /// The stage's global batch `B`; a multiple of `m·D`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(range(min = 1)))]
    pub global_batch: Option<u64>,
    /// The stage's accumulation steps `A`, instead of `global_batch`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(range(min = 1)))]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct LinearRamp {
    /// The global batch of the first updates; a multiple of `m·D`.
    #[cfg_attr(feature = "schema", schemars(range(min = 1)))]
    pub start: u64,
    /// How much the global batch grows at each step of the ramp; a multiple of `m·D`.
    #[cfg_attr(feature = "schema", schemars(range(min = 1)))]
    pub increment: u64,
    /// The length of the ramp (`"300k examples"`, `"4B tokens"`, `"2000 updates"`),
    /// split into equal parts, one per increment.
    pub over: Span,
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
        if self.start.is_zero() {
            return Ok(0);
        }
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
                        to: UnitKind::Token,
                    }),
                }
            }
        }
    }
}

/// A plan whose `A` (and so `B`) changes at stage boundaries, with `m`, `D`
/// and `L` fixed (`docs/rampup.md`). A constant plan is a staged
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
                        .position(&plan, until.unit(), until.value())
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
        &self.stages[self.stage_index_at(index)]
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
        // The stage of the last of those updates; with none, the first
        // stage (update 0 is in it).
        let stage = self.stage_at(updates.saturating_sub(Updates::new(1)));
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

    /// The stage in which `value` of `unit` falls: the last one that starts
    /// at or before it (at a boundary, the stage that starts there).
    fn stage_of(&self, value: u64, unit: UnitKind) -> Result<&Stage, PlanError> {
        let mut found = &self.stages[0];
        for stage in &self.stages[1..] {
            if stage.before(unit)? <= value {
                found = stage;
            } else {
                break;
            }
        }
        Ok(found)
    }

    /// The number of updates after which `value` of `unit` has been
    /// consumed, through the stages, with an explicit rounding.
    pub fn to_updates(
        &self,
        value: u64,
        unit: UnitKind,
        rounding: Rounding,
    ) -> Result<Updates, PlanError> {
        // Updates are a unit like the others: the conversion finds the
        // stage, converts inside it and adds the updates before it.
        self.convert(value, unit, UnitKind::Update, rounding)
            .map(Updates::new)
    }

    /// A span as updates through the stages, with an explicit rounding.
    pub fn span_to_updates(&self, span: &Span, rounding: Rounding) -> Result<Updates, PlanError> {
        self.to_updates(span.value(), span.unit(), rounding)
    }

    /// Converts between any two units through the stages, exactly where the
    /// units allow it and otherwise with `rounding`. Inside a stage the
    /// units are in fixed ratios (`A` microbatches, `B` examples, `B·L`
    /// tokens per update), so a value converts the way the stage's plan
    /// converts it, counted from where the stage starts: "1,000 examples"
    /// is 1,000·L tokens whatever the stages, and "50 updates" is the
    /// examples of those 50 updates, stage by stage.
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
        let found = self.stage_of(value, from)?;
        let rest = value - found.before(from)?;
        let within = found
            .plan
            .convert(rest, from, to, rounding)
            .map_err(|err| whole_value(err, value, from))?;
        let before = found.before(to)?;
        within
            .checked_add(before)
            .ok_or_else(|| PlanError::Overflow {
                equation: format!("{value} {from} in {to}"),
            })
    }

    /// A span in another unit through the stages (see [`convert`](Self::convert)).
    pub fn span_to_unit(
        &self,
        span: &Span,
        unit: UnitKind,
        rounding: Rounding,
    ) -> Result<Span, PlanError> {
        self.convert(span.value(), span.unit(), unit, rounding)
            .map(|value| Span::new(value, unit))
    }
}

/// A rounding error about the part of `value` inside one stage, said about
/// the whole value.
fn whole_value(err: PlanError, value: u64, unit: UnitKind) -> PlanError {
    match err {
        PlanError::NotWholeUpdates { per_update, .. } => PlanError::NotWholeUpdates {
            value,
            unit,
            per_update,
        },
        other => other,
    }
}

#[cfg(test)]
mod tests;
