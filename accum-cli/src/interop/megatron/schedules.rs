//! Batches that change during the run: `--step-batch-size-schedule` and
//! `--rampup-batch-size`, checked as Megatron's microbatch calculators check
//! them.

use super::{Args, Got, python_number};
use crate::diagnostic::Diagnostic;
use crate::interop::{BatchSchedule, BatchStep, ImportOptions, codes};

/// `--step-batch-size-schedule "0:16 2.4B:320 …"`, parsed and checked as
/// `StepBatchsizeNumMicroBatchesCalculator` does
/// (`megatron/core/num_microbatches_calculator.py`: `_parse_schedule`,
/// `_validate_schedule`, `update`). `Some(None)` when absent; `None` refuses.
pub(super) fn step_schedule(
    a: &mut Args,
    opts: &ImportOptions,
    m: u64,
    replicas: u64,
) -> Option<Option<Vec<BatchStep>>> {
    let Some(arg) = a.get("--step-batch-size-schedule").cloned() else {
        return Some(None);
    };
    let name = "--step-batch-size-schedule";
    let field = arg.value()?.clone();
    if !field.unknown.is_empty() {
        a.unknown(name, &field);
        return None;
    }
    // Thresholds are tokens when the sequence length is known, else samples.
    let seq = match a.uint("--seq-length", 1) {
        Got::Value(v, _) => Some(v),
        _ => opts.seq_len,
    };
    let refuse = |a: &mut Args, message: String| {
        a.findings.push(
            Diagnostic::error(codes::ENGINE_ASSERT, Args::path(name), format!("Megatron would stop at start-up: {message}"))
                .help("write the schedule as \"0:B0 THRESHOLD:B1 …\" with thresholds from 0, increasing, and batches above 0")
                .at(field.span(), "schedule refused"),
        );
    };
    let mut steps: Vec<BatchStep> = Vec::new();
    for entry in field.text.replace(',', " ").split_whitespace() {
        let Some((t, bs)) = entry.split_once(':') else {
            refuse(
                a,
                format!(
                    "\"Invalid schedule entry \"{entry}\". Expected format: \"THRESHOLD:BATCH_SIZE\"\""
                ),
            );
            return None;
        };
        let (Some(t), Some(bs)) = (suffixed(t), suffixed(bs)) else {
            refuse(
                a,
                format!("`{entry}` is not THRESHOLD:BATCH_SIZE with numbers"),
            );
            return None;
        };
        let threshold = match seq {
            Some(l) => t / u128::from(l),
            None => t,
        };
        steps.push(BatchStep {
            from_examples: u64::try_from(threshold).unwrap_or(u64::MAX),
            global_batch: u64::try_from(bs).unwrap_or(u64::MAX),
        });
    }
    steps.sort_by_key(|s| s.from_examples);
    if steps.first().is_none_or(|s| s.from_examples != 0) {
        refuse(
            a,
            "\"first schedule entry must have threshold 0\"".to_owned(),
        );
        return None;
    }
    if steps
        .windows(2)
        .any(|w| w[0].from_examples == w[1].from_examples)
    {
        refuse(
            a,
            "\"schedule thresholds must be strictly increasing\"".to_owned(),
        );
        return None;
    }
    if steps.iter().any(|s| s.global_batch == 0) {
        refuse(a, "\"batch size must be positive\"".to_owned());
        return None;
    }
    let step = m.saturating_mul(replicas);
    let bad: Vec<u64> = steps
        .iter()
        .map(|s| s.global_batch)
        .filter(|b| b % step != 0)
        .collect();
    if !bad.is_empty() {
        a.findings.push(
            Diagnostic::error(
                codes::ENGINE_ASSERT,
                Args::path(name),
                format!(
                    "Megatron would stop when the schedule reaches global batch {}: update() asserts each batch is divisible by micro batch size ({m}) × data parallel size ({replicas}) = {step}",
                    bad[0]
                ),
            )
            .help(format!("use batches that are multiples of {step}"))
            .at(field.span(), "not a multiple of micro × D"),
        );
    }
    Some(Some(steps))
}

/// A number with Megatron's suffixes K, M, B, T: `int(float(x) * mult)`.
fn suffixed(text: &str) -> Option<u128> {
    let t = text.trim().to_ascii_uppercase();
    let (digits, mult) = match t.chars().last()? {
        'T' => (&t[..t.len() - 1], 1e12),
        'B' => (&t[..t.len() - 1], 1e9),
        'M' => (&t[..t.len() - 1], 1e6),
        'K' => (&t[..t.len() - 1], 1e3),
        _ => (t.as_str(), 1.0),
    };
    let v = python_number(digits)?.as_f64() * mult;
    (0.0..1e30).contains(&v).then_some(v as u128)
}

/// `--rampup-batch-size START INCREMENT SAMPLES`, checked as Megatron's
/// ramp-up calculator does (`RampupBatchsizeNumMicroBatchesCalculator` in
/// `megatron/core/num_microbatches_calculator.py` before its deprecation:
/// start, increment > 0, `(global − start) % increment == 0`, and every
/// batch of the ramp divisible by `micro × D` when `update` checks it).
/// `Some(None)` when absent; `None` when the values cannot be read.
pub(super) fn rampup(
    a: &mut Args,
    m: u64,
    replicas: u64,
    global: u64,
) -> Option<Option<BatchSchedule>> {
    let Some(arg) = a.get("--rampup-batch-size").cloned() else {
        return Some(None);
    };
    let name = "--rampup-batch-size";
    if arg.values.len() != 3 {
        a.findings.push(
            Diagnostic::error(codes::ENGINE_ASSERT, Args::path(name), format!("argparse would stop: {name} takes 3 values (start, increment, samples), {} given", arg.values.len()))
                .help(format!("write {name} START INCREMENT SAMPLES"))
                .at(arg.span.clone(), "3 values needed"),
        );
        return None;
    }
    let mut v = [0u64; 3];
    for (i, field) in arg.values.iter().enumerate() {
        if !field.unknown.is_empty() {
            a.unknown(name, field);
            return None;
        }
        match python_number(&field.text)
            .and_then(|n| n.whole())
            .and_then(|n| u64::try_from(n).ok())
        {
            Some(x) => v[i] = x,
            None => {
                a.bad(name, field, "whole numbers");
                return None;
            }
        }
    }
    let [start, increment, samples] = v;
    let span = arg.span.clone();
    let step = m.saturating_mul(replicas);
    let refuse = |a: &mut Args, message: String, help: String| {
        a.findings.push(
            Diagnostic::error(codes::ENGINE_ASSERT, Args::path(name), message)
                .help(help)
                .at(span.clone(), "ramp-up refused"),
        );
    };
    if start == 0 || increment == 0 {
        refuse(
            a,
            "Megatron's ramp-up calculator asserts a start batch and an increment above 0"
                .to_owned(),
            "use a start batch and an increment of at least micro × D".to_owned(),
        );
        return None;
    }
    if start > global {
        refuse(
            a,
            format!(
                "Megatron's ramp-up calculator asserts \"expected global batch size to be greater than or equal to start batch size, got {global} and {start}\""
            ),
            format!("start the ramp at or below {global}"),
        );
        return None;
    }
    let diff = global - start;
    if !diff.is_multiple_of(increment) {
        refuse(
            a,
            format!(
                "Megatron's ramp-up calculator asserts \"expected global batch size interval ({diff}) to be divisible by global batch size increment ({increment})\""
            ),
            format!("use an increment that divides {diff}"),
        );
        return None;
    }
    if diff > 0 && (start % step != 0 || increment % step != 0) {
        let first_bad = (0..=diff / increment)
            .map(|k| start + k * increment)
            .find(|b| b % step != 0)
            .unwrap_or(start);
        refuse(
            a,
            format!(
                "Megatron would stop during the ramp-up: the batch {first_bad} is not divisible by micro-batch-size ({m}) times data parallel size ({replicas}) = {step}; update() asserts it for every batch of the ramp"
            ),
            format!("use a start batch and an increment that are multiples of {step}"),
        );
    }
    Some(Some(BatchSchedule::Ramp {
        start,
        increment,
        samples,
        end: global,
    }))
}
