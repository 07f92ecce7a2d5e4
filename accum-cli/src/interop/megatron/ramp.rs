//! `--rampup-batch-size START INCREMENT SAMPLES` (and NeMo's
//! `model.rampup_batch_size`, which reaches the same calculator):
//! `RampupBatchsizeNumMicroBatchesCalculator` in
//! `megatron/core/num_microbatches_calculator.py`, as it was before commit
//! 532ad926b4, imported as `[batch.ramp]` and checked by core's
//! [`StagedPlan::linear`], which steps the calculator's rule.

use std::ops::Range;

use accum_core::plan::{LinearRamp, Plan, StageError, StagedPlan};
use accum_core::{Code, Span, UnitKind};

use super::arguments::Args;
use crate::diagnostic::Diagnostic;
use crate::interop::reader::python_number;
use crate::interop::stages::{Form, Staged};

/// The commit of Megatron-LM that replaced the ramp-up calculator by step
/// schedules (April 2026, "Replace rampup batch size scheduler with custom
/// step batch size schedules").
pub(crate) const RAMP_REMOVED: &str = "532ad926b4";

/// The three values of `--rampup-batch-size START INCREMENT SAMPLES`, read
/// as argparse's `nargs=3` and the calculator's `int()` read them.
/// `Some(None)` when absent; `None` when they cannot be read.
pub(super) fn rampup_values(a: &mut Args) -> Option<Option<([u64; 3], Range<usize>)>> {
    let Some(arg) = a.get("--rampup-batch-size").cloned() else {
        return Some(None);
    };
    let name = "--rampup-batch-size";
    if arg.values.len() != 3 {
        a.findings.push(
            Diagnostic::error(Code::EngineAssert, Args::path(name), format!("argparse would stop: {name} takes 3 values (start, increment, samples), {} given", arg.values.len()))
                .help(format!("write {name} START INCREMENT SAMPLES"))
                .at(arg.range.clone(), "3 values needed"),
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
                a.bad(name, field, "whole numbers ≥ 0");
                return None;
            }
        }
    }
    Some(Some((v, arg.range)))
}

/// What Megatron's ramp-up does with a ramp core refuses: its own words,
/// and whether it stops at start-up (`__init__`) or only when the ramp
/// reaches a batch (`update`).
fn calculator_says(err: &StageError, global: u64) -> (String, bool) {
    match *err {
        StageError::RampZero { what: "start" } => (init_says(err, [0, 1, 0], 1), true),
        StageError::RampZero { .. } => (init_says(err, [1, 0, 0], 1), true),
        StageError::RampShrinks { start, end } => (init_says(err, [start, 1, 0], end), true),
        StageError::RampIncrement {
            start,
            end,
            increment,
        } => (init_says(err, [start, increment, 0], end), true),
        // `num_increments = 0`, then `ramup_samples / num_increments`.
        StageError::RampEmpty { .. } => (
            format!(
                "the ramp starts at the global batch {global}, so the calculator has 0 increments and its `ramup_samples / num_increments` raises ZeroDivisionError"
            ),
            true,
        ),
        // `rampup_samples_per_increment = 0.0`, then `consumed_samples / 0.0`.
        StageError::RampZeroLength => (
            "the ramp is over 0 samples, so the calculator's first update divides by rampup_samples_per_increment = 0.0 and raises ZeroDivisionError".to_owned(),
            true,
        ),
        StageError::NotMultiple {
            value,
            micro_batch,
            replicas,
            what,
            ..
        } => (
            format!(
                "update() asserts that the current global batch is divisible by micro-batch-size ({micro_batch}) times data parallel size ({replicas}), and the ramp's {what} {value} is not, so the ramp reaches batches that are not"
            ),
            false,
        ),
        _ => (err.message(), false),
    }
}

/// [`init_refusal`] for values core refuses with `err` (core's words if
/// the calculator's checks would not say it).
fn init_says(err: &StageError, values: [u64; 3], global: u64) -> String {
    init_refusal(values, global).unwrap_or_else(|| err.message())
}

/// A core stage error about a framework's key, as a finding.
pub(crate) fn stage_finding(err: &StageError, key: &str, range: Range<usize>) -> Diagnostic {
    let code = match err {
        StageError::TooMany { .. } | StageError::Plan { .. } => Code::InteropValue,
        _ => Code::EngineAssert,
    };
    Diagnostic::error(
        code,
        vec![key.to_owned()],
        format!("{key}: {}", err.message()),
    )
    .help(err.fix().text)
    .at(range, err.label())
}

/// `--rampup-batch-size` (NeMo's `model.rampup_batch_size`) as
/// `[batch.ramp]`: `start`, `increment` and `over = "SAMPLES examples"`,
/// with `[batch]` the final global batch, so that core's
/// [`StagedPlan::linear`] steps it as `RampupBatchsizeNumMicroBatchesCalculator.update`
/// (`megatron/core/num_microbatches_calculator.py` before 532ad926b4) does.
/// The calculator's checks are core's.
pub(crate) fn linear_ramp(
    plan: &Plan,
    [start, increment, samples]: [u64; 3],
    key: &str,
    path: Vec<String>,
    range: Range<usize>,
    framework: &str,
) -> Result<Staged, Refused> {
    let ramp = LinearRamp {
        start,
        increment,
        over: Span::new(samples, UnitKind::Example),
    };
    match StagedPlan::linear(plan, &ramp) {
        Ok(staged) => Ok(Staged {
            form: Form::Ramp(ramp),
            plan: staged,
            key: key.to_owned(),
            range,
        }),
        Err(err) => {
            let global = plan.effective_batch().get();
            let (says, at_start) = calculator_says(&err, global);
            let when = if at_start {
                "would stop at start-up"
            } else {
                "would stop during the ramp-up"
            };
            let finding = match err {
                StageError::TooMany { .. } | StageError::Plan { .. } => {
                    stage_finding(&err, key, range)
                }
                _ => Diagnostic::error(
                    Code::EngineAssert,
                    path,
                    format!("{framework} {when}: {says}"),
                )
                .help(err.fix().text)
                .at(range, "ramp-up refused"),
            };
            Err(Refused {
                finding: Box::new(finding),
                at_start,
            })
        }
    }
}

/// A ramp-up the calculator refuses: the finding, and whether it stops at
/// start-up (no batch at all) or only when the ramp reaches a batch.
pub(crate) struct Refused {
    pub(crate) finding: Box<Diagnostic>,
    pub(crate) at_start: bool,
}

/// `version`: the ramp-up is read by some versions of Megatron-LM only.
pub(super) fn ignored(range: Range<usize>, with_steps: bool) -> Diagnostic {
    let deprecated = "init_num_microbatches_calculator logs \"rampup_batch_size is deprecated and will be removed in a future release. Use step_batch_size_schedule instead.\"";
    let (message, help) = if with_steps {
        (
            format!(
                "--rampup-batch-size is ignored next to --step-batch-size-schedule: the Megatron-LM versions that read step schedules (since {}) accept --rampup-batch-size but do not use it ({deprecated})",
                RAMP_REMOVED
            ),
            "remove --rampup-batch-size; the step schedule is the run's".to_owned(),
        )
    } else {
        (
            format!(
                "--rampup-batch-size runs in Megatron-LM before commit {} (April 2026) only: later versions accept it but ignore it ({deprecated}) and train at --global-batch-size from the first iteration; the ramp imported here is the one the earlier versions run",
                RAMP_REMOVED
            ),
            "with a current Megatron-LM, write the same stages as --step-batch-size-schedule (`accum export megatron` writes it from the imported config)".to_owned(),
        )
    };
    Diagnostic::error(Code::Version, Args::path("--rampup-batch-size"), message)
        .warning()
        .help(help)
        .at(range, "depends on the Megatron-LM version")
}

/// What `RampupBatchsizeNumMicroBatchesCalculator.__init__` asserts about
/// the ramp-up's values, in its words, when one fails (before any batch is
/// checked against `micro × D`).
pub(crate) fn init_refusal([start, increment, _]: [u64; 3], global: u64) -> Option<String> {
    if start == 0 {
        Some(
            "the ramp-up calculator asserts \"start batch size should be positive, got 0.\""
                .to_owned(),
        )
    } else if increment == 0 {
        Some(
            "the ramp-up calculator asserts \"batch size increment should be positive, got 0.\""
                .to_owned(),
        )
    } else if start > global {
        Some(format!(
            "the ramp-up calculator asserts \"expected global batch size to be greater than or equal to start batch size, got {global} and {start}\""
        ))
    } else if !(global - start).is_multiple_of(increment) {
        Some(format!(
            "the ramp-up calculator asserts \"expected global batch size interval ({}) to be divisible by global batch size increment ({increment})\"",
            global - start
        ))
    } else {
        None
    }
}

/// The batches a ramp-up reaches, each with the samples consumed before the
/// first iteration that uses it, as `RampupBatchsizeNumMicroBatchesCalculator.update`
/// steps them: before each iteration the batch is `start + int(consumed /
/// (samples / k)) × increment` (in floating point), or `global` once more
/// than `samples` are consumed; each iteration consumes its batch. `None`
/// when the ramp is not one the calculator accepts, or has more than
/// `limit` batches.
pub(crate) fn reached(
    [start, increment, samples]: [u64; 3],
    global: u64,
    limit: usize,
) -> Option<Vec<(u64, u64)>> {
    if start == 0 || increment == 0 || start > global || !(global - start).is_multiple_of(increment)
    {
        return None;
    }
    let k = (global - start) / increment;
    if k == 0 || samples == 0 || usize::try_from(k).map_or(true, |k| k >= limit) {
        return None;
    }
    let per = samples as f64 / k as f64;
    let batch_at = |c: u64| -> u64 {
        if c > samples {
            global
        } else {
            let steps = (c as f64 / per) as u64;
            start
                .saturating_add(steps.saturating_mul(increment))
                .min(global)
        }
    };
    let mut out = vec![(start, 0u64)];
    let mut consumed = 0u64;
    let mut batch = start;
    while batch < global {
        // Whole iterations of this batch until the calculator moves on:
        // first the iterations that certainly stay (below the next
        // threshold), then one at a time.
        let next = if batch + increment >= global {
            samples.saturating_add(1)
        } else {
            (((batch - start) / increment + 1) as f64 * per).floor() as u64
        };
        if next > consumed {
            let skip = (next - consumed) / batch;
            consumed = consumed.saturating_add(skip.saturating_sub(1).saturating_mul(batch));
        }
        loop {
            consumed = consumed.saturating_add(batch);
            let b = batch_at(consumed);
            if b != batch || consumed == u64::MAX {
                batch = b;
                break;
            }
        }
        if consumed == u64::MAX {
            return None;
        }
        out.push((batch, consumed));
    }
    Some(out)
}

/// Stages a ramp-up reads at most, for the batches a run reaches.
const RAMP_STAGES: usize = 100_000;

/// A ramp-up whose global batch is not a multiple of `micro × D`: the
/// ramp-up calculator checks the batch of each iteration as it reaches it
/// (`RampupBatchsizeNumMicroBatchesCalculator.update`, `consistency_check`),
/// so Megatron stops at the first batch of the ramp that is not a multiple,
/// and only when the run reaches it (`--train-samples`). `None` without a
/// ramp-up the calculator accepts.
pub(super) fn ramp_refusal(
    a: &mut Args,
    global: u64,
    m: u64,
    replicas: u64,
    step: u64,
    range: &Range<usize>,
) -> Option<Diagnostic> {
    let (values, ramp_range) = rampup_values(a)??;
    // The calculator's own start-up checks come first
    // (`RampupBatchsizeNumMicroBatchesCalculator.__init__`).
    if let Some(says) = init_refusal(values, global) {
        return Some(
            Diagnostic::error(
                Code::EngineAssert,
                Args::path("--rampup-batch-size"),
                format!("Megatron would stop at start-up: {says}"),
            )
            .help("write a ramp-up from a start at most the global batch, in whole increments up to it")
            .at(ramp_range, "ramp-up refused"),
        );
    }
    let batches = reached(values, global, RAMP_STAGES)?;
    let (bad, consumed) = *batches.iter().find(|(b, _)| b % step != 0)?;
    let train = a.quiet_uint("--train-samples").map(|v| v.0);
    let assert = format!(
        "\"current global batch size ({bad}) is not divisible by micro-batch-size ({m}) times data parallel size ({replicas})\""
    );
    if let Some(t) = train
        && consumed >= t
    {
        let last = batches
            .iter()
            .take_while(|(_, c)| *c < t)
            .last()
            .map_or(values[0], |x| x.0);
        return Some(
            Diagnostic::error(
                Code::GlobalBatch,
                Args::path("--global-batch-size"),
                format!(
                    "the run ends (--train-samples {t}) before the ramp-up reaches global batch {bad}, the first that is not a multiple of micro {m} × D {replicas} = {step}, so Megatron trains it, up to global batch {last}; but --global-batch-size {global} is not a multiple of {step}, and accum plans a ramp-up to it"
                ),
            )
            .help(format!(
                "write --global-batch-size {last} with a ramp-up that ends there, or a multiple of {step} that the ramp reaches"
            ))
            .at(range.clone(), "never reached"),
        );
    }
    let when = if consumed == 0 {
        "at its first iteration".to_owned()
    } else {
        format!("once {consumed} samples are consumed, when the ramp-up reaches global batch {bad}")
    };
    Some(
        Diagnostic::error(
            Code::EngineAssert,
            Args::path("--rampup-batch-size"),
            format!("Megatron would stop {when}: update() asserts {assert}"),
        )
        .help(format!(
            "make the ramp-up's start and increment multiples of micro × D = {step}"
        ))
        .at(ramp_range, "ramp-up reaches this batch"),
    )
}

/// A run that ends (`--train-samples`) before the ramp-up reaches its last
/// batch: the batch it reaches is named, as the run never trains the
/// global batch.
pub(super) fn ramp_cut_short(a: &mut Args, staged: &accum_core::plan::StagedPlan, global: u64) {
    let Some((t, range)) = a.quiet_uint("--train-samples") else {
        return;
    };
    let stages = staged.stages();
    let reached = stages
        .iter()
        .take_while(|s| s.examples_before().get() < t)
        .count();
    if reached == 0 || reached >= stages.len() {
        return;
    }
    let last = stages[reached - 1].plan().effective_batch().get();
    a.findings.push(
        Diagnostic::error(
            Code::StageShift,
            Args::path("--train-samples"),
            format!(
                "the run ends (--train-samples {t}) in the ramp-up: the largest global batch it trains is {last}, in stage {reached} of {}; it never reaches --global-batch-size {global}",
                stages.len()
            ),
        )
        .warning()
        .help(format!(
            "train at least {} samples to reach the global batch {global}, or write the batch the run trains",
            stages[stages.len() - 1].examples_before().get()
        ))
        .at(range, "ends in the ramp-up"),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Megatron's own update rule, one iteration at a time.
    fn stepped(start: u64, inc: u64, samples: u64, global: u64) -> Vec<(u64, u64)> {
        let k = (global - start) / inc;
        let per = samples as f64 / k as f64;
        let mut out: Vec<(u64, u64)> = Vec::new();
        let mut c = 0u64;
        loop {
            let b = if c > samples {
                global
            } else {
                start + (c as f64 / per) as u64 * inc
            };
            if out.last().map(|x| x.0) != Some(b) {
                out.push((b, c));
            }
            if b == global {
                return out;
            }
            c += b;
        }
    }

    #[test]
    fn the_batches_reached_are_the_calculators() {
        for (s, i, n, g) in [
            (16, 16, 5000, 64),
            (32, 32, 4_882_800, 1536),
            (64, 64, 2_000_000, 512),
            (3, 5, 97, 48),
            (8, 8, 7, 32),
        ] {
            assert_eq!(
                reached([s, i, n], g, 10_000),
                Some(stepped(s, i, n, g)),
                "{s} {i} {n} {g}"
            );
        }
        assert_eq!(reached([0, 16, 5000], 64, 100), None);
        assert_eq!(reached([16, 16, 5000], 64, 2), None);
    }
}
