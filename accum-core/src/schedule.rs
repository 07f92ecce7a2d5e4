//! The learning-rate schedule, advancing once per *applied* update (SPEC R8).
//!
//! Warmup and total are written as [`Span`]s in any unit and resolved to
//! updates through the [`Plan`] with an explicit [`Rounding`]
//! ([`Schedule::from_spans`], for a user's own config fields) — accum's
//! `[schedule]` section rounds up, so a partial update still counts
//! ([`Schedule::resolve`]). Tokens need a fixed `seq_len`; with variable
//! lengths the engine passes the data's measured supervised tokens per
//! update instead (R15).
//!
//! ```
//! use accum_core::schedule::Schedule;
//! use accum_core::settings::ScheduleKind;
//! use accum_core::{Plan, Rounding, Span, Updates};
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

use std::fmt;

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

/// Why a schedule could not be built from spans.
#[derive(Clone, Debug, PartialEq, Eq)]
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
    /// The warmup is longer than the run.
    WarmupTooLong {
        /// Warmup in updates.
        warmup: Updates,
        /// Total in updates.
        total: Updates,
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
            ScheduleError::WarmupTooLong { warmup, total } => write!(
                f,
                "the warmup of {warmup} is longer than the run of {total}; shorten the warmup or lengthen the run"
            ),
        }
    }
}

impl std::error::Error for ScheduleError {}

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
        let total = span_to_updates(&section.run_length(), plan, tokens_per_update)?;
        Ok(Schedule::new(section.kind, base_lr, warmup, total))
    }

    /// A schedule whose warmup and total are spans in any unit — a user's
    /// own config fields — resolved to updates through `plan` with an
    /// explicit `rounding` (R1, R8). The warmup may not exceed the total,
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
                .map_err(|error| ScheduleError::Plan { which, error })
        };
        let warmup = resolve("warmup", warmup.into())?;
        let total = resolve("total", total.into())?;
        if total.is_zero() {
            return Err(ScheduleError::ZeroTotal);
        }
        if warmup > total {
            return Err(ScheduleError::WarmupTooLong { warmup, total });
        }
        Ok(Schedule::new(kind, base_lr, warmup, total))
    }

    /// The kind of schedule.
    pub fn kind(&self) -> ScheduleKind {
        self.kind
    }

    /// The peak learning rate.
    pub fn base_lr(&self) -> f64 {
        self.base_lr
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
        assert!(
            tokens.to_string().starts_with("the schedule's total:"),
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
                warmup: Updates::new(5),
                total: Updates::new(4)
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
            Err(PlanError::NeedsSeqLen { .. })
        ));
        let s = Schedule::resolve(&tokens, 1e-3, &plan, Some(300)).unwrap();
        assert_eq!(s.total(), Updates::new(4));
    }
}
