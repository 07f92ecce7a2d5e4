//! `accum calc … --span SPAN`: a length in every unit, through the plan or
//! the stages of its ramp-up ("2000 updates" in microbatches, examples and
//! tokens), so that a warmup can be converted without misusing `--total`.

use std::fmt::Write as _;

use accum_core::plan::{PlanError, Rounding, StagedPlan};
use accum_core::{Span, UnitKind};
use serde::Serialize;

use crate::error::CliError;
use accum_core::group_digits;

/// One length in every unit. Keys are stable.
#[derive(Debug, Serialize)]
pub(super) struct SpanReport {
    /// As given.
    length: Span,
    /// Whole updates (a partial update counts as one; see `rounded`).
    updates: u64,
    /// Microbatches of one replica (`A` per update, stage by stage).
    microbatches: u64,
    examples: u64,
    /// Without a fixed sequence length, unknown.
    tokens: Option<u64>,
    /// Whether the length is not a whole number of updates, so that the
    /// other units are those of the updates it ends in.
    rounded: bool,
}

/// The length in every unit; a length that ends inside an update counts
/// that update, and says so.
pub(super) fn span_report(staged: &StagedPlan, span: Span) -> Result<SpanReport, CliError> {
    let fail = |err: PlanError| CliError::usage(format!("--span {span}: {}", err.message()));
    let (updates, rounded) = match staged.span_to_updates(&span, Rounding::Exact) {
        Ok(updates) => (updates.get(), false),
        Err(PlanError::NotWholeUpdates { .. }) => (
            staged
                .span_to_updates(&span, Rounding::Up)
                .map_err(fail)?
                .get(),
            true,
        ),
        Err(err) => return Err(fail(err)),
    };
    // Exact lengths convert from what was written; a rounded one from the
    // whole updates it ends in, so that every unit says the same stretch.
    let from = |unit: UnitKind| -> Result<u64, CliError> {
        if unit == span.unit() && !rounded {
            return Ok(span.value());
        }
        staged
            .convert(updates, UnitKind::Update, unit, Rounding::Exact)
            .map_err(fail)
    };
    Ok(SpanReport {
        length: span,
        updates,
        microbatches: from(UnitKind::Microbatch)?,
        examples: from(UnitKind::Example)?,
        tokens: match staged.final_plan().seq_len() {
            Some(_) => Some(from(UnitKind::Token)?),
            None => None,
        },
        rounded,
    })
}

/// `2000 updates = 2,000 updates, 8,000 microbatches per replica, …`.
pub(super) fn render(out: &mut String, spans: &[SpanReport], staged: bool) {
    let n = group_digits;
    for span in spans {
        let tokens = span.tokens.map_or_else(
            || ", tokens need -L/--seq-len".to_owned(),
            |t| format!(", {} tokens", n(t)),
        );
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "{}{}   {} updates, {} microbatches per replica, {} examples{tokens}",
            span.length,
            if staged { " through the stages" } else { "" },
            n(span.updates),
            n(span.microbatches),
            n(span.examples),
        );
        if span.rounded {
            let _ = writeln!(
                out,
                "  ends inside update {}: the units above count that update whole",
                n(span.updates)
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use accum_core::plan::{PlanInput, StageSpec};

    fn plan(a: u64) -> accum_core::plan::Plan {
        PlanInput {
            micro_batch: Some(8),
            accumulation: Some(a),
            replicas: Some(2),
            seq_len: Some(100),
            ..PlanInput::default()
        }
        .resolve()
        .expect("a plan")
    }

    #[test]
    fn a_length_in_every_unit_through_the_stages() {
        let base = plan(4);
        let staged = StagedPlan::ramp_to(
            &base,
            &[StageSpec::accumulation(1).until(Span::new(10, UnitKind::Update))],
        )
        .expect("stages");
        // 10 updates at B 16 (A 1), then 10 at B 64 (A 4).
        let r = span_report(&staged, Span::new(20, UnitKind::Update)).expect("converts");
        assert_eq!(
            (r.updates, r.microbatches, r.examples, r.tokens, r.rounded),
            (20, 10 + 40, 160 + 640, Some(80_000), false)
        );
        // Back from examples: the same stretch.
        let r = span_report(&staged, Span::new(800, UnitKind::Example)).expect("converts");
        assert_eq!((r.updates, r.microbatches, r.rounded), (20, 50, false));
        // 200 examples end inside update 11 (160 + 64 > 200).
        let r = span_report(&staged, Span::new(200, UnitKind::Example)).expect("converts");
        assert_eq!((r.updates, r.examples, r.rounded), (11, 224, true));
    }

    #[test]
    fn a_constant_plan_converts_by_its_ratios() {
        let r = span_report(
            &StagedPlan::constant(plan(4)),
            Span::new(2000, UnitKind::Update),
        )
        .expect("converts");
        assert_eq!(
            (r.microbatches, r.examples, r.tokens),
            (8_000, 128_000, Some(12_800_000))
        );
        let mut out = String::new();
        render(&mut out, &[r], false);
        assert_eq!(
            out,
            "\n2k updates   2,000 updates, 8,000 microbatches per replica, 128,000 examples, 12,800,000 tokens\n"
        );
    }
}
