//! Every read of a run report's series — its update attempts and its logged
//! loss points — goes through here, so that the sheet follows the report's
//! format in one place.

use accum_core::report::RunReport;
use accum_core::settings::LogAxis;

/// One update attempt, at its place in the run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Attempt {
    /// Applied updates after this attempt.
    pub(crate) updates: u64,
    /// Examples processed up to and including this attempt.
    pub(crate) examples: u64,
    /// Supervised tokens processed up to and including this attempt.
    pub(crate) tokens: u64,
    /// Whether the parameters changed (false: skipped).
    pub(crate) applied: bool,
    /// The group's normalized loss.
    pub(crate) loss: f64,
    /// The unscaled gradient norm before clipping.
    pub(crate) grad_norm: f64,
    /// The loss scale during the group.
    pub(crate) loss_scale: f64,
}

impl Attempt {
    /// The attempt's position on `axis`: the count the engine logs against
    /// after this attempt.
    pub(crate) fn at(&self, axis: LogAxis) -> f64 {
        (match axis {
            LogAxis::Updates => self.updates,
            LogAxis::Examples => self.examples,
            LogAxis::Tokens => self.tokens,
        }) as f64
    }
}

/// The axis the run logged its loss against.
pub(crate) fn axis(report: &RunReport) -> LogAxis {
    report.loss_curve.axis
}

/// Every attempt the report holds, in order, with running positions.
///
/// Positions in examples and tokens are sums over the attempts; where a
/// report keeps only some attempts (attempt numbers jump), each kept one
/// stands for the attempts since the previous kept one.
pub(crate) fn attempts(report: &RunReport) -> Vec<Attempt> {
    let mut examples = 0u64;
    let mut tokens = 0u64;
    let mut previous = 0u64;
    report
        .updates
        .iter()
        .map(|u| {
            let stands_for = u.attempt.saturating_sub(previous).max(1);
            previous = u.attempt;
            examples = examples.saturating_add(u.examples.get().saturating_mul(stands_for));
            tokens = tokens.saturating_add(u.tokens.get().saturating_mul(stands_for));
            Attempt {
                updates: u.updates.get(),
                examples,
                tokens,
                applied: u.applied,
                loss: u.loss,
                grad_norm: u.grad_norm,
                loss_scale: u.loss_scale,
            }
        })
        .collect()
}

/// The logged loss points `(x on the log axis, loss)`, every one of them.
pub(crate) fn logged_loss(report: &RunReport) -> Vec<(f64, f64)> {
    report
        .loss_curve
        .points
        .iter()
        .map(|p| (p.x as f64, p.loss))
        .collect()
}

/// The last finite logged loss with its position, or the last applied
/// attempt's when nothing was logged.
pub(crate) fn final_loss(report: &RunReport) -> Option<(f64, f64)> {
    logged_loss(report)
        .into_iter()
        .rev()
        .find(|(_, loss)| loss.is_finite())
        .or_else(|| {
            let axis = axis(report);
            attempts(report)
                .into_iter()
                .rev()
                .find(|a| a.applied && a.loss.is_finite())
                .map(|a| (a.at(axis), a.loss))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use accum_core::report::{CurvePoint, UpdateStats};
    use accum_core::{Examples, Microbatches, Tokens, Updates};

    pub(crate) fn attempt(n: u64, applied: bool, updates: u64, loss: f64) -> UpdateStats {
        UpdateStats {
            attempt: n,
            epoch: 0,
            applied,
            updates: Updates::new(updates),
            loss,
            denominator: 40.0,
            examples: Examples::new(4),
            tokens: Tokens::new(40),
            microbatches: Microbatches::new(2),
            partial: false,
            lr: 0.1,
            grad_norm: if applied { 1.5 } else { f64::NAN },
            clipped: false,
            loss_scale: 1024.0,
        }
    }

    #[test]
    fn positions_accumulate_and_the_final_loss_is_the_last_finite() {
        let mut report = crate::sheet::tests::report();
        report.updates = vec![
            attempt(1, false, 0, 3.0),
            attempt(2, true, 1, 2.5),
            attempt(3, true, 2, 2.0),
        ];
        let mut sparse = report.clone();
        sparse.updates = vec![attempt(1, true, 1, 3.0), attempt(4, true, 4, 2.0)];
        let kept: Vec<(u64, u64)> = attempts(&sparse)
            .iter()
            .map(|a| (a.examples, a.tokens))
            .collect();
        assert_eq!(
            kept,
            vec![(4, 40), (16, 160)],
            "a kept attempt stands for the gap"
        );
        report.loss_curve.axis = LogAxis::Tokens;
        report.loss_curve.points = vec![
            CurvePoint { x: 80, loss: 2.5 },
            CurvePoint {
                x: 120,
                loss: f64::NAN,
            },
        ];
        let all = attempts(&report);
        assert_eq!(
            all.iter()
                .map(|a| (a.updates, a.examples, a.tokens))
                .collect::<Vec<_>>(),
            vec![(0, 4, 40), (1, 8, 80), (2, 12, 120)]
        );
        assert_eq!(all[2].at(LogAxis::Tokens), 120.0);
        assert_eq!(final_loss(&report), Some((80.0, 2.5)));
        report.loss_curve.points.clear();
        assert_eq!(final_loss(&report), Some((120.0, 2.0)));
    }
}
