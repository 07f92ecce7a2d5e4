//! The run's units through the stages of a batch ramp-up ([`Axes`]): how
//! many examples and tokens any number of updates consumes, which is no
//! longer `B × updates` once `B` changes, and the updates that consume a
//! given count; the scales under the sheet's plots bend where stages start.
//!
//! Every conversion goes through the staged plan of `accum_core`
//! (`StagedPlan::consumed`, `to_updates`); with variable lengths, tokens are
//! the examples consumed times the expected tokens per example.
//!
//! The tables and charts of the other modules take their [`Position`]s and
//! their counts with a unit ([`count`]) from here.

use accum_core::plan::{PlanError, Rounding, StagedPlan};
use accum_core::{UnitKind, group_digits};
use serde::Serialize;

/// Whether token counts are exact (a fixed sequence length) or expected
/// (variable lengths: the engine counts the real ones).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TokenCount {
    /// `B·L` per update.
    Exact,
    /// Expected from the data's lengths.
    Expected,
}

impl TokenCount {
    /// What a table writes before its token counts: `"≈ "` when they are
    /// expected, nothing when exact or absent.
    pub(crate) fn prefix(tokens: Option<TokenCount>) -> &'static str {
        match tokens {
            Some(TokenCount::Expected) => "≈ ",
            Some(TokenCount::Exact) | None => "",
        }
    }
}

/// A point of the run, or a stretch of it, in three units: where a stage
/// starts or what it lasts ([`Axes::position`], [`Axes::between`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Position {
    /// Applied updates.
    pub(crate) updates: u64,
    /// Examples.
    pub(crate) examples: u64,
    /// Supervised tokens, exact or expected (see [`Axes::tokens`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tokens: Option<u64>,
}

/// `"1 update"`, `"2,048 examples"`.
pub(super) fn count(n: u64, unit: &str) -> String {
    match (n, unit) {
        (1, _) => format!("1 {unit}"),
        (_, "microbatch") => format!("{} microbatches", group_digits(n)),
        _ => format!("{} {unit}s", group_digits(n)),
    }
}

/// The run's position in every unit after any number of updates, through
/// the stages of its plan (one stage when the batch does not change).
#[derive(Clone, Debug)]
pub(crate) struct Axes {
    staged: StagedPlan,
    /// With variable lengths: the expected tokens of one update of the
    /// final plan, and that plan's `B`, so that the tokens of `e` examples
    /// are `e × tokens ÷ B`.
    expected: Option<(u64, u64)>,
}

impl Axes {
    /// The axes of `staged`; `expected_tokens_per_update` is what one update
    /// of its final plan is expected to hold when lengths vary.
    pub(crate) fn new(staged: StagedPlan, expected_tokens_per_update: Option<u64>) -> Axes {
        let b = staged.final_plan().effective_batch().get();
        let expected = match staged.final_plan().seq_len() {
            Some(_) => None,
            None => expected_tokens_per_update
                .filter(|t| *t > 0 && b > 0)
                .map(|t| (t, b)),
        };
        Axes { staged, expected }
    }

    /// The staged plan.
    pub(crate) fn staged(&self) -> &StagedPlan {
        &self.staged
    }

    /// Whether the batch changes during the run.
    pub(crate) fn is_staged(&self) -> bool {
        !self.staged.is_constant()
    }

    /// How tokens are known, if at all.
    pub(crate) fn tokens(&self) -> Option<TokenCount> {
        match (self.staged.final_plan().seq_len(), self.expected) {
            (Some(_), _) => Some(TokenCount::Exact),
            (None, Some(_)) => Some(TokenCount::Expected),
            (None, None) => None,
        }
    }

    /// The tokens of `examples` examples: exact with a fixed length, else
    /// expected (rounded to the nearest token).
    fn tokens_of(&self, examples: u64) -> Option<u64> {
        match (self.staged.final_plan().seq_len(), self.expected) {
            (Some(len), _) => examples.checked_mul(len),
            (None, Some((tokens, b))) => {
                let scaled =
                    (u128::from(examples) * u128::from(tokens) + u128::from(b / 2)) / u128::from(b);
                u64::try_from(scaled).ok()
            }
            (None, None) => None,
        }
    }

    /// Tokens per update of a stage whose batch is `effective_batch`.
    pub(crate) fn tokens_per_update(&self, effective_batch: u64) -> Option<u64> {
        self.tokens_of(effective_batch)
    }

    /// How much of `unit` the first `updates` updates consume: microbatches
    /// per replica, examples, tokens (exact or expected), or the updates.
    pub(crate) fn at(&self, updates: u64, unit: UnitKind) -> Result<u64, PlanError> {
        let updates = accum_core::Updates::new(updates);
        match unit {
            UnitKind::Token if self.expected.is_some() => {
                let examples = self.staged.consumed(updates, UnitKind::Example)?;
                self.tokens_of(examples).ok_or_else(|| PlanError::Overflow {
                    equation: format!("{examples} examples in tokens"),
                })
            }
            _ => self.staged.consumed(updates, unit),
        }
    }

    /// Where the run stands after `updates` updates: the examples consumed
    /// (`u64::MAX` past counting) and the tokens, when known.
    pub(crate) fn position(&self, updates: u64) -> Position {
        Position {
            updates,
            examples: self.at(updates, UnitKind::Example).unwrap_or(u64::MAX),
            tokens: self
                .tokens()
                .and_then(|_| self.at(updates, UnitKind::Token).ok()),
        }
    }

    /// What the updates from `from` to `to` consume.
    pub(crate) fn between(&self, from: &Position, to: &Position) -> Position {
        Position {
            updates: to.updates - from.updates,
            examples: to.examples.saturating_sub(from.examples),
            tokens: from.tokens.zip(to.tokens).map(|(a, b)| b.saturating_sub(a)),
        }
    }

    /// The updates after which `value` of `unit` has been consumed, and
    /// whether that is exact (else rounded up: a partial update still runs).
    pub(crate) fn updates_for(&self, value: u64, unit: UnitKind) -> Result<(u64, bool), String> {
        if let (UnitKind::Token, Some((tokens, b))) = (unit, self.expected) {
            // The examples that hold `value` expected tokens, then updates.
            let examples = (u128::from(value) * u128::from(b)).div_ceil(u128::from(tokens));
            let examples = u64::try_from(examples).map_err(|_| {
                format!(
                    "{} tokens are more examples than can be counted",
                    group_digits(value)
                )
            })?;
            return self
                .staged
                .to_updates(examples, UnitKind::Example, Rounding::Up)
                .map(|u| (u.get(), false))
                .map_err(|err| err.to_string());
        }
        if unit == UnitKind::Token && self.tokens().is_none() {
            return Err(
                "counted in the data's supervised tokens as the run goes (no fixed seq_len to convert ahead)"
                    .into(),
            );
        }
        match self.staged.to_updates(value, unit, Rounding::Exact) {
            Ok(u) => Ok((u.get(), true)),
            Err(_) => self
                .staged
                .to_updates(value, unit, Rounding::Up)
                .map(|u| (u.get(), false))
                .map_err(|err| err.to_string()),
        }
    }

    /// Knots of the scale that reads `unit` under an axis of updates up to
    /// `end`: one per stage start, so that the scale bends where the batch
    /// changes. A constant plan needs two.
    pub(crate) fn knots(&self, unit: UnitKind, end: u64) -> Vec<[f64; 2]> {
        self.knots_at(&self.breaks(end), unit)
            .into_iter()
            .map(|(u, v)| [u as f64, v as f64])
            .collect()
    }

    /// The knots of [`knots`](Self::knots) with the two columns swapped:
    /// updates read under an axis of `unit`.
    pub(crate) fn inverse_knots(&self, unit: UnitKind, end: u64) -> Vec<[f64; 2]> {
        self.knots_at(&self.breaks(end), unit)
            .into_iter()
            .map(|(u, v)| [v as f64, u as f64])
            .collect()
    }

    fn knots_at(&self, breaks: &[u64], unit: UnitKind) -> Vec<(u64, u64)> {
        breaks
            .iter()
            .filter_map(|&u| self.at(u, unit).ok().map(|v| (u, v)))
            .collect()
    }

    /// `0`, every stage start before `end`, and `end` (at least 1): where a
    /// count against updates bends. A constant plan gives `[0, 1]`, one
    /// update's worth, which extends linearly; a ramp
    /// of more stages than a drawing can show keeps evenly spread ones.
    pub(crate) fn breaks(&self, end: u64) -> Vec<u64> {
        if !self.is_staged() {
            return vec![0, 1];
        }
        let end = end.max(1);
        let mut at: Vec<u64> = std::iter::once(0)
            .chain(
                self.staged
                    .stages()
                    .iter()
                    .map(|s| s.start().get())
                    .filter(|s| *s > 0 && *s < end),
            )
            .chain(std::iter::once(end))
            .collect();
        let max = super::chart::MAX_LINE_POINTS;
        if at.len() > max {
            let step = at.len().div_ceil(max);
            let last = at[at.len() - 1];
            at = at.into_iter().step_by(step).collect();
            if at.last() != Some(&last) {
                at.push(last);
            }
        }
        at
    }
}

#[cfg(test)]
mod tests {
    use crate::sheet::chart::Style;
    use crate::sheet::tests::{RAMPUP, series, sheet_of};

    /// B = 16 for 20 updates (512 tokens each), 32 for 40 (1,024 each),
    /// then 64 (2,048 each) to the schedule's total of 409,600 tokens: 175
    /// more updates, so 235 (at the full batch throughout it would be 200).
    #[test]
    fn the_token_axis_follows_the_stages() {
        let sheet = sheet_of(RAMPUP);
        let ids: Vec<&str> = sheet.charts().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["schedule", "schedule-tokens"]);

        let updates = &sheet.preparation.charts[0];
        assert_eq!(updates.title, "Batch and learning rate against updates");
        let tokens = &updates.x_scales[1];
        assert_eq!(
            (tokens.label.as_str(), tokens.approximate),
            ("tokens", false)
        );
        assert_eq!(
            tokens.knots,
            vec![
                [0.0, 0.0],
                [20.0, 10_240.0],
                [60.0, 51_200.0],
                [235.0, 409_600.0]
            ]
        );
        // Inside stage 2, not B × updates at the full batch (40 × 2,048).
        assert_eq!(tokens.value_at(40.0), 10_240.0 + 20.0 * 1_024.0);
        assert_eq!(
            tokens.x_at(51_200.0),
            60.0,
            "stage 3 starts at 51,200 tokens"
        );
        let examples = &updates.x_scales[0];
        assert_eq!(examples.value_at(60.0), 1_600.0, "the until of stage 2");
        let marks = updates.marks.as_ref().expect("stage starts are marked");
        let at: Vec<(f64, &str)> = marks.at.iter().map(|m| (m.x, m.label.as_str())).collect();
        assert_eq!(at, [(20.0, "B 32"), (60.0, "B 64")]);
        assert_eq!(updates.above[0].y.label, "B (examples)");
        assert_eq!(
            series(updates, "batch B"),
            [[0.0, 16.0], [20.0, 32.0], [60.0, 64.0], [235.0, 64.0]]
        );
        assert_eq!(updates.above[0].series[0].style, Style::Step);

        // Against tokens: the same boundaries at their token counts.
        let against = &sheet.preparation.charts[1];
        assert_eq!(against.x.label, "tokens");
        let marks = against.marks.as_ref().expect("stage starts are marked");
        let at: Vec<f64> = marks.at.iter().map(|m| m.x).collect();
        assert_eq!(at, [10_240.0, 51_200.0]);
        assert_eq!(
            series(against, "batch B"),
            [
                [0.0, 16.0],
                [10_240.0, 32.0],
                [51_200.0, 64.0],
                [409_600.0, 64.0]
            ]
        );
        let back = &against.x_scales[0];
        assert_eq!(back.label, "updates");
        assert_eq!(back.value_at(30_720.0), 40.0);
        assert_eq!(back.x_at(60.0), 51_200.0);
        // The warmup of 30 updates ends at 10,240 + 10 × 1,024 tokens, where
        // the learning rate peaks.
        let lr = series(against, "learning rate");
        assert!(lr.contains(&[20_480.0, 3e-3]), "{lr:?}");
        assert_eq!(
            series(against, "end of warmup"),
            [[20_480.0, 0.0], [20_480.0, 3e-3]]
        );
        // The schedule ends where it is written to, at 409,600 tokens.
        assert_eq!(lr.last(), Some(&[409_600.0, 0.0]));
    }
}
