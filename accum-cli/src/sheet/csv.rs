//! `accum sheet CONFIG --report RUN.json --format csv`: the run's
//! per-update statistics as CSV, one row per update attempt — every one
//! from the stats stream when the report names one — for pandas, a
//! spreadsheet or an experiment tracker.
//!
//! Columns: the attempt's own figures as the report has them, and the run's
//! position after it in examples and supervised tokens (the axes runs are
//! compared against). A value that is not finite (the loss or gradient
//! norm of a skipped attempt) is an empty field.

#[cfg(any(test, feature = "harness"))]
use accum_core::report::UpdateStats;

use super::series::Attempts;
use crate::error::CliError;
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

/// Rows gathered before they are handed on: the CSV of a run of any
/// length is written in pieces of about this many bytes.
const CHUNK: usize = 64 * 1024;

/// Writes the CSV of `attempts` (in attempt order) through `emit`, in
/// pieces of about [`CHUNK`] bytes: the rows of a ten-million-attempt
/// stream are never held together. Stops at the first error of `emit`, or
/// of a stream that changed since it was first read.
pub(crate) fn write(
    attempts: &Attempts<'_>,
    emit: &mut dyn FnMut(&str) -> Result<(), CliError>,
) -> Result<(), CliError> {
    let mut out = String::with_capacity(CHUNK + 1024);
    out.push_str(HEADER);
    out.push('\n');
    let number = |v: f64| {
        if v.is_finite() {
            format!("{v}")
        } else {
            String::new()
        }
    };
    let mut failed = None;
    let read = attempts.each(|u, at| {
        if failed.is_some() {
            return;
        }
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
        if out.len() >= CHUNK {
            failed = emit(&out).err();
            out.clear();
        }
    });
    if let Some(err) = failed {
        return Err(err);
    }
    read.map_err(|err| {
        CliError::invalid(format!(
            "{err}; the stream changed while it was read: write the CSV again once the run has finished"
        ))
    })?;
    emit(&out)
}

/// The CSV of `updates` (in attempt order), in memory.
#[cfg(any(test, feature = "harness"))]
pub(crate) fn render(updates: &[UpdateStats]) -> String {
    let mut text = String::new();
    write(&Attempts::listed(updates), &mut |rows| {
        text.push_str(rows);
        Ok(())
    })
    .expect("a list in memory is read whole, and a String takes every row");
    text
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

    #[test]
    fn rows_are_handed_on_in_bounded_pieces() {
        let update = |n: u64| UpdateStats {
            attempt: n,
            epoch: 0,
            stage: 0,
            applied: true,
            updates: Updates::new(n),
            loss: 1.0 / n as f64,
            denominator: 40.0,
            examples: Examples::new(4),
            tokens: Tokens::new(40),
            microbatches: Microbatches::new(2),
            partial: false,
            lr: 0.001,
            grad_norm: 1.25,
            clipped: false,
            loss_scale: 1.0,
        };
        let updates: Vec<UpdateStats> = (1..=20_000).map(update).collect();
        let mut pieces = Vec::new();
        write(&Attempts::listed(&updates), &mut |rows| {
            pieces.push(rows.to_owned());
            Ok(())
        })
        .expect("written");
        assert!(pieces.len() > 10, "{} pieces", pieces.len());
        assert!(pieces.iter().all(|p| p.len() < CHUNK + 1024));
        let whole = pieces.concat();
        assert_eq!(whole, render(&updates));
        assert_eq!(whole.lines().count(), 20_001);
        assert!(whole.ends_with(
            "20000,0,0,true,20000,4,40,2,false,80000,800000,0.00005,40,0.001,1.25,false,1\n"
        ));
    }
}
