//! Batches that change during the run: `--step-batch-size-schedule`, which
//! of it and `--rampup-batch-size` (in `ramp.rs`) a run trains, and how many
//! iterations Megatron counts for `--train-samples` through either, checked
//! as Megatron's microbatch calculators check them and imported as the
//! stages they train.
//!
//! Megatron calls its calculator's `update(consumed_samples)` before every
//! iteration (`megatron/training/training.py`, `train`), so the batch of an
//! iteration is decided by the samples consumed before it, and a stage ends
//! at a whole iteration of its own batch.

use std::ops::Range;

use accum_core::plan::{Plan, PlanError, Rounding, StagedPlan};
use accum_core::{Code, Span, UnitKind, Updates, group_digits};

use super::arguments::Args;
use super::ramp;
use crate::diagnostic::Diagnostic;
use crate::interop::reader::python_number;
use crate::interop::stages::{Form, Staged, specs_of};
use crate::interop::{BatchSchedule, BatchStep};

/// The largest threshold Megatron reads exactly: it parses
/// `int(float(text) * multiplier)`, and a float holds every integer up to 2^53.
pub(super) const EXACT_FLOAT: u64 = 1 << 53;

/// A parsed `--step-batch-size-schedule`.
pub(super) struct StepSchedule {
    /// The entries as Megatron keeps them: thresholds in samples, sorted.
    pub(super) steps: Vec<BatchStep>,
    /// The thresholds as written (tokens), in the same order.
    pub(super) written: Vec<u128>,
    /// The argument's range.
    pub(super) range: Range<usize>,
}

/// `--step-batch-size-schedule "0:16 2.4B:320 …"`, parsed and checked as
/// `StepBatchsizeNumMicroBatchesCalculator` does
/// (`megatron/core/num_microbatches_calculator.py`: `_parse_schedule`,
/// `_validate_schedule`). Training always passes `args.seq_length` (the
/// `--seq-length` or `--encoder-seq-length` that `validate_args` requires),
/// so thresholds are tokens, converted with `// seq_length`. `Some(None)`
/// when absent; `None` when Megatron refuses it or the sequence length is
/// unknown (the finding says which).
pub(super) fn step_schedule(a: &mut Args, seq_len: Option<u64>) -> Option<Option<StepSchedule>> {
    let Some(arg) = a.get("--step-batch-size-schedule").cloned() else {
        return Some(None);
    };
    let name = "--step-batch-size-schedule";
    let field = a.value_of(&arg, name)?;
    if !field.unknown.is_empty() {
        a.unknown(name, &field);
        return None;
    }
    let refuse = |a: &mut Args, message: String| {
        a.findings.push(
            Diagnostic::error(Code::EngineAssert, Args::path(name), format!("Megatron would stop at start-up: {message}"))
                .help("write the schedule as \"0:B0 THRESHOLD:B1 …\" with thresholds from 0, increasing, and batches above 0")
                .at(field.range(), "schedule refused"),
        );
    };
    let mut entries: Vec<(u128, u128)> = Vec::new();
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
        entries.push((t, bs));
    }
    let Some(len) = seq_len else {
        a.findings.push(
            Diagnostic::error(
                Code::Missing,
                Args::path(name),
                "the schedule's thresholds are tokens, converted to samples with // seq_length, and the script does not give the sequence length (Megatron requires --seq-length or --encoder-seq-length)",
            )
            .help("add --seq-length to the script, or give it: --seq-len N")
            .at(field.range(), "thresholds in tokens"),
        );
        return None;
    };
    // `_parse_schedule`: `threshold // seq_length`, then a stable sort.
    let mut pairs: Vec<(u128, BatchStep)> = entries
        .into_iter()
        .map(|(t, bs)| {
            let step = BatchStep {
                from_examples: u64::try_from(t / u128::from(len)).unwrap_or(u64::MAX),
                global_batch: u64::try_from(bs).unwrap_or(u64::MAX),
            };
            (t, step)
        })
        .collect();
    pairs.sort_by_key(|(_, s)| s.from_examples);
    let steps: Vec<BatchStep> = pairs.iter().map(|(_, s)| *s).collect();
    match steps.first() {
        None => {
            refuse(a, "\"schedule must have at least one entry\"".to_owned());
            return None;
        }
        Some(s) if s.from_examples != 0 => {
            refuse(
                a,
                format!(
                    "\"first schedule entry must have threshold 0, got {}\"",
                    s.from_examples
                ),
            );
            return None;
        }
        Some(_) => {}
    }
    if let Some(w) = steps
        .windows(2)
        .find(|w| w[0].from_examples >= w[1].from_examples)
    {
        refuse(
            a,
            format!(
                "\"schedule thresholds must be strictly increasing, got {} before {}\" (in samples: thresholds in tokens // seq_length {len})",
                w[0].from_examples, w[1].from_examples
            ),
        );
        return None;
    }
    if let Some(s) = steps.iter().find(|s| s.global_batch == 0) {
        refuse(
            a,
            format!("\"batch size must be positive, got {}\"", s.global_batch),
        );
        return None;
    }
    Some(Some(StepSchedule {
        written: pairs.iter().map(|(t, _)| *t).collect(),
        steps,
        range: field.range(),
    }))
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

/// The stages a step schedule trains. `StepBatchsizeNumMicroBatchesCalculator.update`
/// picks the batch of the last threshold at or below the samples consumed
/// before each iteration, so the batch changes at the first iteration
/// whose consumed samples reach the threshold: a stage ends at a whole
/// iteration of its own batch, at or after the threshold written, and a
/// threshold already passed by then is skipped. The stages end in tokens
/// (`samples × seq_length`, exact); a `rounds` warning says where they
/// differ from the thresholds written. `None` when Megatron stops at a
/// batch it reaches (the finding says which).
pub(super) fn step_stages(a: &mut Args, plan: &Plan, schedule: &StepSchedule) -> Option<Staged> {
    let name = "--step-batch-size-schedule";
    let steps = &schedule.steps;
    let len = plan.seq_len()?;
    let step = plan.micro_batch().saturating_mul(plan.replicas());
    // (batch, examples consumed when it ends)
    let mut stages: Vec<(u64, u64)> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let mut consumed: u64 = 0;
    let mut i = 0;
    while i + 1 < steps.len() {
        let batch = steps[i].global_batch;
        let target = steps[i + 1].from_examples;
        let updates = (target - consumed).div_ceil(batch);
        let Some(end) = updates
            .checked_mul(batch)
            .and_then(|e| e.checked_add(consumed))
            .filter(|e| e.checked_mul(len).is_some())
        else {
            a.findings.push(
                Diagnostic::error(
                    Code::InteropValue,
                    Args::path(name),
                    format!("the schedule's threshold {} samples is beyond what accum can count in tokens (seq_length {len})", group_digits(target)),
                )
                .help("write thresholds below 2^64 tokens")
                .at(schedule.range.clone(), "too large"),
            );
            return None;
        };
        consumed = end;
        // The last threshold at or below what is consumed now.
        let next = steps.partition_point(|s| s.from_examples <= consumed) - 1;
        let written = schedule.written[i + 1];
        if u128::from(end) * u128::from(len) != written {
            notes.push(format!(
                "{} → {} after {} tokens ({} samples), not at the {} written",
                group_digits(batch),
                group_digits(steps[next].global_batch),
                group_digits(end * len),
                group_digits(end),
                group_digits_wide(written)
            ));
        }
        for skipped in &steps[i + 1..next] {
            notes.push(format!(
                "the batch {} from {} samples is never used: {} samples are consumed before the first iteration that reaches it, and a later threshold applies",
                group_digits(skipped.global_batch),
                group_digits(skipped.from_examples),
                group_digits(end)
            ));
        }
        match stages.last_mut() {
            Some(last) if last.0 == batch => last.1 = end,
            _ => stages.push((batch, end)),
        }
        i = next;
    }
    // Neighbouring stages of one batch are one stage; the last one's batch is `[batch]`'s.
    let final_batch = steps[i].global_batch;
    while stages.last().is_some_and(|s| s.0 == final_batch) {
        stages.pop();
    }
    if let Some(&(bad, _)) = stages.iter().find(|(b, _)| b % step != 0) {
        a.findings.push(
            Diagnostic::error(
                Code::EngineAssert,
                Args::path(name),
                format!(
                    "Megatron would stop when the schedule reaches global batch {bad}: update() asserts \"current global batch size ({bad}) is not divisible by micro_batch_size ({}) * data_parallel_size ({})\"",
                    plan.micro_batch(),
                    plan.replicas()
                ),
            )
            .help(format!("use batches that are multiples of micro × D = {step}"))
            .at(schedule.range.clone(), "not a multiple of micro × D"),
        );
        return None;
    }
    let specs: Vec<_> = stages
        .iter()
        .map(|&(batch, end)| {
            accum_core::plan::StageSpec::global_batch(batch)
                .until(Span::new(end * len, UnitKind::Token))
        })
        .collect();
    let staged = match StagedPlan::ramp_to(plan, &specs) {
        Ok(staged) => staged,
        Err(err) => {
            a.findings
                .push(ramp::stage_finding(&err, name, schedule.range.clone()));
            return None;
        }
    };
    if staged.is_constant() {
        return None;
    }
    if !notes.is_empty() {
        a.findings.push(
            Diagnostic::error(
                Code::Rounds,
                Args::path(name),
                format!(
                    "Megatron changes the batch at the first iteration whose consumed samples reach a threshold, so the stages end at whole iterations: {}",
                    notes.join("; ")
                ),
            )
            .warning()
            .help("accum's stages end where Megatron changes the batch; write those thresholds to state them")
            .at(schedule.range.clone(), "stage ends rounded up to whole iterations"),
        );
    }
    Some(Staged {
        form: Form::Stages(specs_of(&staged, true)),
        plan: staged,
        key: name.to_owned(),
        range: schedule.range.clone(),
    })
}

fn group_digits_wide(value: u128) -> String {
    u64::try_from(value).map_or_else(|_| value.to_string(), group_digits)
}

/// The batch schedule of the run, and its stages when accum can plan them:
/// a step schedule (which the versions that read it prefer to a ramp-up),
/// or a ramp-up. `None` when Megatron stops at start-up.
pub(super) fn resolve(
    a: &mut Args,
    plan: &Plan,
    steps: Option<&StepSchedule>,
    global: Option<u64>,
    decrease: bool,
) -> Option<(Option<Staged>, Option<BatchSchedule>)> {
    let (m, replicas) = (plan.micro_batch(), plan.replicas());
    let step = m.saturating_mul(replicas);
    let b = plan.effective_batch().get();
    let ramp = ramp::rampup_values(a)?;
    Some(match (steps, ramp) {
        (Some(steps), ramp) => {
            if let Some((_, range)) = ramp {
                a.findings.push(ramp::ignored(range, true));
            }
            if decrease {
                // num_microbatches_calculator.py, StepBatchsizeNumMicroBatchesCalculator.__init__.
                let range = a
                    .get("--decrease-batch-size-if-needed")
                    .map_or(steps.range.clone(), |x| x.range.clone());
                a.findings.push(
                    Diagnostic::error(
                        Code::EngineAssert,
                        Args::path("--decrease-batch-size-if-needed"),
                        "Megatron would stop at start-up: \"Step batch size schedules do not support decrease_batch_size_if_needed\"",
                    )
                    .help("remove --decrease-batch-size-if-needed and write batches that are multiples of micro × D")
                    .at(range, "not with a step schedule"),
                );
            }
            (
                step_stages(a, plan, steps),
                Some(BatchSchedule::Steps(steps.steps.clone())),
            )
        }
        (None, Some((values, range))) => {
            a.findings.push(ramp::ignored(range.clone(), false));
            let [start, increment, samples] = values;
            let schedule = BatchSchedule::Ramp {
                start,
                increment,
                samples,
                end: b,
            };
            let written = global.unwrap_or(b);
            if decrease && [start, increment, written].iter().any(|v| v % step != 0) {
                a.findings.push(
                    Diagnostic::error(
                        Code::Rounds,
                        Args::path("--rampup-batch-size"),
                        format!(
                            "with --decrease-batch-size-if-needed Megatron skips the ramp's divisibility check and rounds each batch of the ramp down to a multiple of micro {m} × D {replicas} = {step}, so it trains other batches than the ramp's; accum plans ramps whose batches are multiples of {step}"
                        ),
                    )
                    .help(format!("use a start, increment and global batch that are multiples of {step}"))
                    .at(range, "batches rounded down"),
                );
                (None, Some(schedule))
            } else {
                match ramp::linear_ramp(
                    plan,
                    values,
                    "--rampup-batch-size",
                    Args::path("--rampup-batch-size"),
                    range,
                    "Megatron",
                ) {
                    Ok(staged) => (Some(staged), Some(schedule)),
                    Err(refused) => {
                        a.findings.push(*refused.finding);
                        if refused.at_start {
                            return None;
                        }
                        (None, Some(schedule))
                    }
                }
            }
        }
        (None, None) => (None, None),
    })
}

/// The rule by which Megatron counts the iterations of a sample-based run.
pub(crate) enum Rule<'a> {
    /// With `--rampup-batch-size`: `update_train_iters` in
    /// `megatron/training/training.py` before 532ad926b4 counts iterations
    /// while the samples consumed are at most the ramp's and the run's, then
    /// adds `(train_samples − consumed) // global_batch_size`.
    Ramp {
        /// The stages.
        plan: &'a StagedPlan,
        /// The ramp's samples.
        samples: u64,
    },
    /// With `--step-batch-size-schedule`: `update_train_iters` counts
    /// iterations while the samples consumed are below `train_samples`.
    Steps(&'a StagedPlan),
}

/// The iterations Megatron trains for `--train-samples` by `rule`, and the
/// samples they train through the stages.
pub(crate) fn trained(rule: &Rule<'_>, train_samples: u64) -> Result<(u64, u64), PlanError> {
    let n = train_iters(rule, train_samples)?;
    let (Rule::Ramp { plan, .. } | Rule::Steps(plan)) = *rule;
    Ok((n, plan.examples_at(Updates::new(n))?.get()))
}

/// The iterations Megatron trains for `--train-samples`, by `rule`.
pub(crate) fn train_iters(rule: &Rule<'_>, train_samples: u64) -> Result<u64, PlanError> {
    match *rule {
        Rule::Steps(plan) => plan
            .to_updates(train_samples, UnitKind::Example, Rounding::Up)
            .map(Updates::get),
        Rule::Ramp { plan, samples } => {
            // Iterations whose consumed samples before them are at most
            // min(ramp, run): the whole updates within it, plus the one that
            // starts at or before it and ends past it.
            let limit = samples.min(train_samples);
            let ramp = plan
                .to_updates(limit, UnitKind::Example, Rounding::Down)?
                .get()
                + 1;
            let consumed = plan.examples_at(Updates::new(ramp))?.get();
            let global = plan.final_plan().effective_batch().get();
            Ok(if train_samples > consumed {
                ramp + (train_samples - consumed) / global
            } else {
                ramp
            })
        }
    }
}
