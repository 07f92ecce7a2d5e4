//! `accum sheet CONFIG --report RUN.json --format csv`: the run's
//! per-update statistics as CSV, one row per update attempt — every one
//! from the stats stream when the report names one — for pandas, a
//! spreadsheet or an experiment tracker.
//!
//! Columns: the attempt's own figures as the report has them, and the run's
//! position after it in examples and supervised tokens (the axes runs are
//! compared against). A value that is not finite (the loss or gradient
//! norm of a skipped attempt) is an empty field.

use accum_core::report::UpdateStats;

use super::series::attempts;
use crate::escape;

/// The header row.
pub(crate) const HEADER: &str = "attempt,epoch,stage,applied,updates,examples,tokens,microbatches,partial,\
examples_seen,tokens_seen,loss,denominator,lr,grad_norm,clipped,loss_scale";

/// Appends one row: every field through the CSV channel's escaper
/// ([`escape::csv_field`]), so that no field, whatever a report holds,
/// ends the row early or reads as a formula.
fn row(out: &mut String, fields: &[&dyn std::fmt::Display]) {
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&escape::csv_field(&field.to_string()));
    }
    out.push('\n');
}

/// The CSV of `updates` (in attempt order).
pub(crate) fn render(updates: &[UpdateStats]) -> String {
    let positions = attempts(updates);
    let mut out = String::with_capacity(64 + updates.len() * 96);
    out.push_str(HEADER);
    out.push('\n');
    let number = |v: f64| {
        if v.is_finite() {
            format!("{v}")
        } else {
            String::new()
        }
    };
    for (u, at) in updates.iter().zip(&positions) {
        row(
            &mut out,
            &[
                &u.attempt,
                &u.epoch,
                &u.stage,
                &u.applied,
                &u.updates.get(),
                &u.examples.get(),
                &u.tokens.get(),
                &u.microbatches.get(),
                &u.partial,
                &at.examples,
                &at.tokens,
                &number(u.loss),
                &number(u.denominator),
                &number(u.lr),
                &number(u.grad_norm),
                &u.clipped,
                &number(u.loss_scale),
            ],
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use accum_core::{Examples, Microbatches, Tokens, Updates};

    #[test]
    fn one_row_per_attempt_with_positions_and_empty_non_finite_values() {
        let attempt = |n: u64, applied: bool| UpdateStats {
            attempt: n,
            epoch: 0,
            stage: 0,
            applied,
            updates: Updates::new(if applied { n - 1 } else { 0 }),
            loss: if applied { 2.5 } else { f64::NAN },
            denominator: 40.0,
            examples: Examples::new(4),
            tokens: Tokens::new(40),
            microbatches: Microbatches::new(2),
            partial: false,
            lr: if applied { 0.001 } else { 0.0 },
            grad_norm: if applied { 1.25 } else { f64::INFINITY },
            clipped: false,
            loss_scale: 65536.0,
        };
        let text = render(&[attempt(1, false), attempt(2, true)]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], HEADER);
        assert_eq!(
            lines[1],
            "1,0,0,false,0,4,40,2,false,4,40,,40,0,,false,65536"
        );
        assert_eq!(
            lines[2],
            "2,0,0,true,1,4,40,2,false,8,80,2.5,40,0.001,1.25,false,65536"
        );
        assert_eq!(lines.len(), 3);
        let columns = HEADER.split(',').count();
        assert!(lines.iter().all(|l| l.split(',').count() == columns));
    }
}
