//! Conversions between units through a plan: how many of a unit make one
//! update, and counts and [`Span`]s expressed in another unit with an
//! explicit [`Rounding`] (`accum::span`, `accum::calc::tokens`).
//!
//! A span knows its number and unit only; it becomes updates here, through
//! the plan, so that the lower layer (`span`) does not depend on this one.
//!
//! ```
//! use accum_core::{Span, UnitKind, Updates};
//! use accum_core::plan::{Plan, Rounding};
//!
//! let warmup: Span = "1.5k examples".parse()?;
//! let plan = Plan::new(2, 8, 2)?; // 32 examples per update
//! assert_eq!(plan.span_to_updates(&warmup, Rounding::Up)?, Updates::new(47));
//! let micro = plan.span_to_unit(&warmup, UnitKind::Microbatch, Rounding::Exact)?;
//! assert_eq!(micro, Span::new(375, UnitKind::Microbatch));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use serde::{Deserialize, Serialize};

use super::{Plan, PlanError};
use crate::span::Span;
use crate::units::{Count, Tokens, Unit, UnitKind, Updates};

/// How to turn a count that is not a whole number of updates into updates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rounding {
    /// Round up: a partial update counts as one more.
    Up,
    /// Round down: a partial update is not counted.
    Down,
    /// The count must be a whole number of updates, or it is an error.
    #[default]
    Exact,
}

impl Plan {
    /// How many of `unit` make one update: 1 update, `A` microbatches (per
    /// replica, as a replica's loop counts them), `B` examples, `B·L` tokens.
    pub fn per_update(&self, unit: UnitKind) -> Result<u64, PlanError> {
        match unit {
            UnitKind::Update => Ok(1),
            UnitKind::Microbatch => Ok(self.accumulation),
            UnitKind::Example => Ok(self.effective_batch().get()),
            UnitKind::Token => {
                self.tokens_per_update()
                    .map(Tokens::get)
                    .ok_or(PlanError::NeedsSeqLen {
                        value: 1,
                        unit: UnitKind::Update,
                        to: UnitKind::Token,
                    })
            }
        }
    }

    /// Converts `value` of `unit` to updates with an explicit rounding.
    pub fn to_updates(
        &self,
        value: u64,
        unit: UnitKind,
        rounding: Rounding,
    ) -> Result<Updates, PlanError> {
        // An update is one update: the conversion divides by the unit's
        // count per update, and its errors name `value` and `unit`.
        self.convert(value, unit, UnitKind::Update, rounding)
            .map(Updates::new)
    }

    /// Converts a typed count to updates with an explicit rounding.
    pub fn updates_in<U: Unit>(
        &self,
        count: Count<U>,
        rounding: Rounding,
    ) -> Result<Updates, PlanError> {
        self.to_updates(count.get(), U::KIND, rounding)
    }

    /// Expresses `updates` in `unit`, failing on overflow or a missing `L`.
    pub fn from_updates(&self, updates: Updates, unit: UnitKind) -> Result<u64, PlanError> {
        let per = self.per_update(unit).map_err(|_| PlanError::NeedsSeqLen {
            value: updates.get(),
            unit: UnitKind::Update,
            to: unit,
        })?;
        updates
            .get()
            .checked_mul(per)
            .ok_or_else(|| PlanError::Overflow {
                equation: format!("{updates} × {per} {unit} per update"),
            })
    }

    /// Expresses `updates` as a typed count of unit `U`.
    pub fn updates_as<U: Unit>(&self, updates: Updates) -> Result<Count<U>, PlanError> {
        self.from_updates(updates, U::KIND).map(Count::new)
    }

    /// Converts between any two units through updates, with explicit rounding.
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
        // Examples ↔ tokens and microbatches ↔ examples have exact ratios that
        // need not be whole updates; go through the smallest shared quantity.
        let needs_len = |_| PlanError::NeedsSeqLen {
            value,
            unit: from,
            to,
        };
        let per_from = self.per_update(from).map_err(needs_len)?;
        let per_to = self.per_update(to).map_err(needs_len)?;
        // value·per_to / per_from, computed in u128 so that it cannot overflow.
        let num = u128::from(value) * u128::from(per_to);
        let den = u128::from(per_from);
        let q = num / den;
        let r = num % den;
        let result = match rounding {
            _ if r == 0 => q,
            Rounding::Down => q,
            Rounding::Up => q + 1,
            Rounding::Exact => {
                return Err(PlanError::NotWholeUpdates {
                    value,
                    unit: from,
                    per_update: per_from,
                });
            }
        };
        u64::try_from(result).map_err(|_| PlanError::Overflow {
            equation: format!("{value} {from} in {to}"),
        })
    }

    /// Resolves a span to updates, with an explicit rounding.
    pub fn span_to_updates(&self, span: &Span, rounding: Rounding) -> Result<Updates, PlanError> {
        self.to_updates(span.value(), span.unit(), rounding)
    }

    /// Expresses a span in another unit, with an explicit rounding.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::testing::plan;

    #[test]
    fn unit_conversions() {
        let p = plan(2, 8, 2).with_seq_len(128).expect("fits");
        assert_eq!(p.per_update(UnitKind::Microbatch), Ok(8));
        assert_eq!(p.per_update(UnitKind::Token), Ok(32 * 128));
        assert_eq!(
            p.to_updates(320, UnitKind::Example, Rounding::Exact),
            Ok(Updates::new(10))
        );
        assert_eq!(
            p.to_updates(330, UnitKind::Example, Rounding::Down),
            Ok(Updates::new(10))
        );
        assert_eq!(
            p.to_updates(330, UnitKind::Example, Rounding::Up),
            Ok(Updates::new(11))
        );
        let err = p
            .to_updates(330, UnitKind::Example, Rounding::Exact)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "330 examples is not a whole number of updates (one update = 32 examples); use 320 or 352 examples, or choose rounding up or down"
        );
        assert_eq!(
            p.updates_as::<crate::units::Token>(Updates::new(2)),
            Ok(Tokens::new(8192))
        );
        assert_eq!(
            p.convert(40, UnitKind::Microbatch, UnitKind::Example, Rounding::Exact),
            Ok(160)
        );
        assert_eq!(
            p.convert(3, UnitKind::Example, UnitKind::Token, Rounding::Exact),
            Ok(384)
        );
        let no_len = plan(2, 8, 2);
        let err = no_len
            .to_updates(1000, UnitKind::Token, Rounding::Up)
            .unwrap_err();
        assert_eq!(
            err,
            PlanError::NeedsSeqLen {
                value: 1000,
                unit: UnitKind::Token,
                to: UnitKind::Update,
            }
        );
    }

    #[test]
    fn spans_resolve_through_the_plan() {
        let plan = plan(2, 8, 2).with_seq_len(128).expect("fits");
        let tokens = Span::new(4096 * 10, UnitKind::Token);
        assert_eq!(
            plan.span_to_updates(&tokens, Rounding::Exact),
            Ok(Updates::new(10))
        );
        let micro = Span::new(40, UnitKind::Microbatch);
        assert_eq!(
            plan.span_to_updates(&micro, Rounding::Exact),
            Ok(Updates::new(5))
        );
        let odd = Span::new(41, UnitKind::Microbatch);
        assert!(plan.span_to_updates(&odd, Rounding::Exact).is_err());
        assert_eq!(
            plan.span_to_updates(&odd, Rounding::Down),
            Ok(Updates::new(5))
        );
        assert_eq!(
            plan.span_to_unit(&micro, UnitKind::Example, Rounding::Exact),
            Ok(Span::new(160, UnitKind::Example))
        );
    }

    mod properties {
        use proptest::prelude::*;

        use super::super::*;
        use crate::plan::testing::{any_plan, any_unit};

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]

            #[test]
            fn updates_round_trip_through_every_unit(plan in any_plan(), updates in 0u64..1_000_000, unit in any_unit()) {
                let updates = Updates::new(updates);
                match plan.from_updates(updates, unit) {
                    Ok(value) => prop_assert_eq!(plan.to_updates(value, unit, Rounding::Exact), Ok(updates)),
                    Err(PlanError::NeedsSeqLen { .. }) => prop_assert!(plan.seq_len().is_none()),
                    Err(other) => prop_assert!(false, "unexpected {other}"),
                }
            }

            #[test]
            fn conversions_round_trip_when_exact(plan in any_plan(), value in 0u64..10_000_000, from in any_unit(), to in any_unit()) {
                if let Ok(there) = plan.convert(value, from, to, Rounding::Exact) {
                    prop_assert_eq!(plan.convert(there, to, from, Rounding::Exact), Ok(value));
                }
                // Rounding down never exceeds rounding up, and they differ by at most one.
                if let (Ok(down), Ok(up)) = (
                    plan.convert(value, from, to, Rounding::Down),
                    plan.convert(value, from, to, Rounding::Up),
                ) {
                    prop_assert!(down <= up && up - down <= 1);
                }
            }
        }
    }
}
