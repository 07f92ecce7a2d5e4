//! Building a [`StagedPlan`] stage by stage: each stage's plan on the base
//! plan's `m`, `D` and `L`, the running totals in every unit, overflow
//! checks, and neighbouring stages of one batch merged.

use super::{Stage, StageError, StageSpec, StagedPlan};
use crate::plan::{Plan, PlanError};
use crate::units::{Examples, UnitKind, Updates};

/// Accumulates stages, checking each one's plan and the running totals.
pub(super) struct Builder<'a> {
    base: &'a Plan,
    stages: Vec<Stage>,
    start: Updates,
    examples: u64,
    microbatches: u64,
}

impl<'a> Builder<'a> {
    pub(super) fn new(base: &'a Plan) -> Builder<'a> {
        Builder {
            base,
            stages: Vec::new(),
            start: Updates::ZERO,
            examples: 0,
            microbatches: 0,
        }
    }

    /// `A` of a declared stage, checking that its `B` is a multiple of `m·D`.
    pub(super) fn accumulation_of(
        &self,
        stage: usize,
        spec: &StageSpec,
    ) -> Result<u64, StageError> {
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
    pub(super) fn plan(&self, stage: usize, accumulation: u64) -> Result<Plan, StageError> {
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

    /// How much of `unit` the stages so far consume (`until`: where the next
    /// stage ends, in `unit`, for the error without `L`).
    pub(super) fn position(
        &self,
        plan: &Plan,
        unit: UnitKind,
        until: u64,
    ) -> Result<u64, PlanError> {
        match unit {
            UnitKind::Update => Ok(self.start.get()),
            UnitKind::Microbatch => Ok(self.microbatches),
            UnitKind::Example => Ok(self.examples),
            UnitKind::Token => {
                // Said about the tokens the stage ends at, which need `L`.
                let len = plan.seq_len().ok_or(PlanError::NeedsSeqLen {
                    value: until,
                    unit: UnitKind::Token,
                    to: UnitKind::Update,
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
    pub(super) fn push(
        &mut self,
        stage: usize,
        plan: Plan,
        updates: u64,
    ) -> Result<(), StageError> {
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
        self.append(plan, Some(Updates::new(end)));
        self.start = Updates::new(end);
        self.examples = examples;
        self.microbatches = microbatches;
        Ok(())
    }

    /// Appends the last, open-ended stage.
    pub(super) fn push_open(&mut self, stage: usize, accumulation: u64) -> Result<(), StageError> {
        let plan = self.plan(stage, accumulation)?;
        self.append(plan, None);
        Ok(())
    }

    /// A stage of `plan` from where the stages so far end to `end`; two
    /// neighbouring stages of the same batch are one stage.
    fn append(&mut self, plan: Plan, end: Option<Updates>) {
        match self.stages.last_mut() {
            Some(last) if last.plan == plan => last.end = end,
            _ => self.stages.push(Stage {
                plan,
                start: self.start,
                end,
                examples_before: Examples::new(self.examples),
                microbatches_before: self.microbatches,
            }),
        }
    }

    pub(super) fn finish(self) -> StagedPlan {
        StagedPlan {
            stages: self.stages,
        }
    }
}
