//! The learning-rate schedule, advancing once per *applied* update (SPEC R8).
//!
//! Warmup and total are written as [`Span`]s in any unit and resolved to
//! updates through the [`Plan`] (rounding up, so a partial update still
//! counts). Tokens need a fixed `seq_len`; with variable lengths the engine
//! passes the data's measured supervised tokens per update instead (R15).
//!
//! Shapes follow the Hugging Face schedules so runs can be compared: the
//! factor is `u / warmup` during warmup (the first update uses 0 when there
//! is a warmup), then constant, linear to zero at `total`, or cosine to zero
//! at `total`.

use crate::plan::{Plan, PlanError, Rounding};
use crate::settings::{ScheduleKind, ScheduleSection};
use crate::span::Span;
use crate::units::{UnitKind, Updates};

/// A learning-rate schedule over applied updates.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    kind: ScheduleKind,
    base_lr: f64,
    warmup: Updates,
    total: Updates,
    steps: Updates,
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

impl Schedule {
    /// A schedule of `kind` from `base_lr` with `warmup` and `total` in updates.
    pub fn new(kind: ScheduleKind, base_lr: f64, warmup: Updates, total: Updates) -> Schedule {
        Schedule {
            kind,
            base_lr,
            warmup,
            total,
            steps: Updates::ZERO,
        }
    }

    /// The schedule a config section describes, resolved through the plan.
    pub fn resolve(
        section: &ScheduleSection,
        base_lr: f64,
        plan: &Plan,
        tokens_per_update: Option<u64>,
    ) -> Result<Schedule, PlanError> {
        let warmup = span_to_updates(&section.warmup, plan, tokens_per_update)?;
        let total = span_to_updates(&section.total, plan, tokens_per_update)?;
        Ok(Schedule::new(section.kind, base_lr, warmup, total))
    }

    /// Warmup length in updates.
    pub fn warmup(&self) -> Updates {
        self.warmup
    }

    /// Total length in updates.
    pub fn total(&self) -> Updates {
        self.total
    }

    /// Scheduler steps taken (R8: equals applied updates in a correct loop).
    pub fn steps(&self) -> Updates {
        self.steps
    }

    /// The learning rate for the next update.
    pub fn lr(&self) -> f64 {
        self.lr_at(self.steps.get())
    }

    /// The learning rate for the update after `step` applied updates.
    pub fn lr_at(&self, step: u64) -> f64 {
        let warmup = self.warmup.get();
        let total = self.total.get();
        if step < warmup {
            return self.base_lr * step as f64 / warmup as f64;
        }
        let factor = match self.kind {
            ScheduleKind::Constant => 1.0,
            ScheduleKind::Linear | ScheduleKind::Cosine if total <= warmup => 1.0,
            ScheduleKind::Linear => (total.saturating_sub(step)) as f64 / (total - warmup) as f64,
            ScheduleKind::Cosine => {
                let progress = ((step - warmup) as f64 / (total - warmup) as f64).min(1.0);
                0.5 * (1.0 + (std::f64::consts::PI * progress).cos())
            }
        };
        self.base_lr * factor
    }

    /// Advances by one applied update.
    pub fn step(&mut self) {
        self.steps = self.steps.saturating_add_one();
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

#[cfg(test)]
mod tests {
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
    fn r8_steps_advance_per_update() {
        let mut s = Schedule::new(ScheduleKind::Linear, 1.0, Updates::new(2), Updates::new(4));
        assert_eq!(s.lr(), 0.0);
        s.step();
        assert_eq!(s.lr(), 0.5);
        assert_eq!(s.steps(), Updates::new(1));
    }

    #[test]
    fn spans_resolve_through_the_plan() {
        let plan = Plan::new(4, 2, 2).unwrap(); // B = 16
        let section = ScheduleSection {
            kind: ScheduleKind::Cosine,
            warmup: "32 examples".parse().unwrap(),
            total: "80 microbatches".parse().unwrap(),
        };
        let s = Schedule::resolve(&section, 1e-3, &plan, None).unwrap();
        assert_eq!((s.warmup(), s.total()), (Updates::new(2), Updates::new(40)));
        let tokens = ScheduleSection {
            total: "1000 tokens".parse().unwrap(),
            ..section.clone()
        };
        assert!(matches!(
            Schedule::resolve(&tokens, 1e-3, &plan, None),
            Err(PlanError::NeedsSeqLen { .. })
        ));
        let s = Schedule::resolve(&tokens, 1e-3, &plan, Some(300)).unwrap();
        assert_eq!(s.total(), Updates::new(4));
    }
}
