//! `accum calc`'s text rendering of a [`CalcReport`].

use std::fmt::Write as _;

use accum_core::group_digits;

use super::{Amounts, CalcReport, SpanReport, StageReport};

/// `accum calc`'s text: the figures with their formulas, then the stages,
/// lengths and estimates that were asked for.
pub(crate) fn render_text(r: &CalcReport) -> String {
    let mut out = String::new();
    let n = group_digits;
    let _ = writeln!(
        out,
        "effective batch     {} examples per update",
        n(r.effective_batch)
    );
    let _ = writeln!(out, "  {}", r.formula.effective_batch);
    if let Some(replicas) = &r.formula.replicas {
        let _ = writeln!(
            out,
            "  {replicas}   (tensor/pipeline/context devices share one model copy)"
        );
    }
    if let Some(solved) = &r.formula.solved {
        let _ = writeln!(out, "  {solved}   (solved from --global-batch, exactly)");
    }
    match (&r.tokens_per_update, &r.formula.tokens_per_update) {
        (Some(tokens), Some(formula)) => {
            let _ = writeln!(out, "tokens per update   {} tokens", n(*tokens));
            let _ = writeln!(out, "  {formula}");
        }
        _ => {
            let _ = writeln!(
                out,
                "tokens per update   unknown without -L/--seq-len (variable lengths need token accounting)"
            );
        }
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "per replica (each of {})", n(r.replicas));
    let _ = writeln!(
        out,
        "  micro-batch       {} examples per forward/backward pass",
        n(r.micro_batch)
    );
    let _ = writeln!(
        out,
        "  microbatches      {} per update (gradients synchronised once, after the last)",
        n(r.microbatches_per_update)
    );
    let _ = writeln!(
        out,
        "  examples          {} per update",
        n(r.examples_per_replica_per_update)
    );
    if let Some(tokens) = r.tokens_per_replica_per_update {
        let _ = writeln!(out, "  tokens            {} per update", n(tokens));
    }
    if let Some(stages) = &r.stages {
        render_stages(&mut out, stages, r.ramp_up.as_ref());
    }
    if let Some(run) = &r.run {
        let _ = writeln!(out);
        let tokens = run
            .tokens
            .map_or_else(String::new, |t| format!(", {} tokens", n(t)));
        let stage = if r.stages.is_some() {
            format!(" (ends in stage {})", run.ends_in_stage)
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "the run ({})   {} updates, {} examples{tokens}{stage}",
            run.length,
            n(run.updates),
            n(run.examples)
        );
    }
    render_spans(&mut out, &r.spans, r.stages.is_some());
    if let Some(memory) = &r.memory {
        let _ = writeln!(out);
        let _ = writeln!(out, "memory per device (estimate)");
        let _ = writeln!(out, "  weights           {}", memory.weights);
        let _ = writeln!(out, "  gradients         {}", memory.gradients);
        let _ = writeln!(out, "  optimizer state   {}", memory.optimizer_state);
        let _ = writeln!(
            out,
            "  activations       {}   (per example × m = {}; independent of A)",
            memory.activations, r.micro_batch
        );
        let _ = writeln!(out, "  total             {}", memory.total);
    }
    if let Some(points) = &r.scaling {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "data-parallel scaling (estimate: one gradient all-reduce per update)"
        );
        let _ = writeln!(
            out,
            "  {:>8}  {:>10}  {:>11}  {:>10}  {:>12}  {:>10}",
            "replicas", "batch", "compute s", "comm s", "examples/s", "efficiency"
        );
        for p in points {
            let _ = writeln!(
                out,
                "  {:>8}  {:>10}  {:>11.4}  {:>10.4}  {:>12.1}  {:>9.1}%",
                p.replicas,
                n(p.effective_batch),
                p.compute_sec,
                p.comm_sec,
                p.examples_per_sec,
                p.efficiency * 100.0
            );
        }
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "note: D counts data-parallel replicas only; tokens assume a fixed sequence length."
    );
    out
}

/// The stages as a table: where each starts, its batch, and what it lasts.
fn render_stages(out: &mut String, stages: &[StageReport], ramp_up: Option<&Amounts>) {
    let n = group_digits;
    let tokens = stages.iter().all(|s| s.tokens_per_update.is_some());
    let mut header = vec!["stage", "from update", "B", "A"];
    if tokens {
        header.push("tokens/update");
    }
    header.extend(["updates", "examples"]);
    if tokens {
        header.push("tokens");
    }
    let rows: Vec<Vec<String>> = stages
        .iter()
        .map(|s| {
            let mut row = vec![
                s.stage.to_string(),
                n(s.start_update),
                n(s.global_batch),
                n(s.accumulation),
            ];
            if let Some(per) = s.tokens_per_update.filter(|_| tokens) {
                row.push(n(per));
            }
            match &s.lasts {
                Some(lasts) => {
                    row.push(n(lasts.updates));
                    row.push(n(lasts.examples));
                    if let Some(t) = lasts.tokens.filter(|_| tokens) {
                        row.push(n(t));
                    }
                }
                None => {
                    let cells = if tokens { 3 } else { 2 };
                    row.extend(std::iter::repeat_n("to the end".to_owned(), cells));
                }
            }
            row
        })
        .collect();
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            rows.iter()
                .map(|row| row[c].chars().count())
                .chain([header[c].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| {
        let cells: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:>width$}"))
            .collect();
        format!("  {}", cells.join("  "))
    };
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "batch ramp-up: {} stages; m and D stay, A (so B) changes between updates",
        stages.len()
    );
    let header: Vec<String> = header.iter().map(|h| (*h).to_owned()).collect();
    let _ = writeln!(out, "{}", line(&header));
    for row in &rows {
        let _ = writeln!(out, "{}", line(row));
    }
    if let Some(ramp_up) = ramp_up {
        let tokens = ramp_up
            .tokens
            .map_or_else(String::new, |t| format!(", {} tokens", n(t)));
        let _ = writeln!(
            out,
            "  before the full batch: {} updates, {} examples{tokens}",
            n(ramp_up.updates),
            n(ramp_up.examples)
        );
    }
}

/// `2000 updates = 2,000 updates, 8,000 microbatches per replica, …`.
fn render_spans(out: &mut String, spans: &[SpanReport], staged: bool) {
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
    use accum_core::{Span, UnitKind};

    use super::*;

    fn span(value: u64, unit: UnitKind, updates: u64, tokens: Option<u64>) -> SpanReport {
        SpanReport {
            length: Span::new(value, unit),
            updates,
            microbatches: updates * 4,
            examples: updates * 64,
            tokens,
            rounded: false,
        }
    }

    #[test]
    fn a_span_is_one_line_in_every_unit() {
        let mut out = String::new();
        let exact = span(2000, UnitKind::Update, 2000, Some(12_800_000));
        render_spans(&mut out, &[exact], false);
        assert_eq!(
            out,
            "\n2k updates   2,000 updates, 8,000 microbatches per replica, 128,000 examples, 12,800,000 tokens\n"
        );
    }

    #[test]
    fn a_rounded_span_says_which_update_it_ends_in_and_unknown_tokens_say_why() {
        let mut out = String::new();
        let rounded = SpanReport {
            rounded: true,
            ..span(200, UnitKind::Example, 4, None)
        };
        render_spans(&mut out, &[rounded], true);
        assert_eq!(
            out,
            "\n200 examples through the stages   4 updates, 16 microbatches per replica, 256 examples, tokens need -L/--seq-len\n  ends inside update 4: the units above count that update whole\n"
        );
    }
}
