//! Lightning's accumulation by epoch: `GradientAccumulationScheduler`
//! (`lightning/pytorch/callbacks/gradient_accumulation_scheduler.py`), given
//! as a callback with `scheduling: {epoch: factor}` (LightningCLI's
//! `trainer.callbacks`), or, before Lightning 2.0, as a dict in
//! `accumulate_grad_batches` (the callback connector's
//! `_configure_accumulated_gradients` made the same callback from it).
//!
//! Epochs are zero-indexed; a schedule without epoch 0 trains with factor 1
//! until its first epoch (`__init__` adds `{0: 1}`), and `on_train_epoch_start`
//! sets the factor of the epoch. The training loop counts the batches of
//! each epoch from zero and steps on the epoch's last batch even when fewer
//! than the factor were accumulated (`loops/training_epoch_loop.py`,
//! `_should_accumulate` and `_num_ready_batches_reached`), dividing every
//! batch's loss by the factor (`loops/optimization/automatic.py`,
//! `ClosureResult.from_training_step_output`). So a stage ends at an epoch
//! end, and it is whole updates only when an epoch is.

use std::ops::Range;

use accum_core::plan::{Plan, StageSpec, StagedPlan};
use accum_core::{Code, Span, UnitKind, group_digits};

use super::super::AccumulationStep;
use super::super::reader::{Reader, owned};
use super::super::stages::{Form, Staged};
use super::{ACC, Trainer};
use crate::diagnostic::Diagnostic;
use crate::source::{Node, NodeKind};

/// An accumulation schedule by epoch, as the file states it.
pub(super) struct EpochSchedule {
    /// From each epoch on, the factor (`{0: 1}` added when epoch 0 is missing).
    pub(super) steps: Vec<AccumulationStep>,
    /// The key that states it (`trainer.accumulate_grad_batches`,
    /// `trainer.callbacks[0].init_args.scheduling`).
    pub(super) key: String,
    /// Its path.
    pub(super) path: Vec<String>,
    /// Where it is written.
    pub(super) range: Range<usize>,
}

impl EpochSchedule {
    /// The factor of the last phase: `[batch]`'s accumulation.
    pub(super) fn last(&self) -> u64 {
        self.steps.last().map_or(1, |s| s.accumulation)
    }

    /// Whether the factor changes at all.
    pub(super) fn changes(&self) -> bool {
        self.steps
            .windows(2)
            .any(|w| w[0].accumulation != w[1].accumulation)
    }
}

/// Whether a callback's `class_path` names the accumulation scheduler.
fn is_scheduler(class_path: &str) -> bool {
    class_path
        .rsplit('.')
        .next()
        .is_some_and(|name| name == "GradientAccumulationScheduler")
}

/// The schedule the file gives: a `GradientAccumulationScheduler` in
/// `trainer.callbacks`, or a dict in `accumulate_grad_batches`. `Ok(None)`
/// when there is none; `Err(())` when Lightning refuses it (the finding is
/// pushed).
pub(super) fn read(r: &mut Reader, t: &Trainer) -> Result<Option<EpochSchedule>, ()> {
    let acc_path = t.path(ACC);
    let from_acc = match r.node(&acc_path).map(|n| n.kind.clone()) {
        Some(NodeKind::Table(_)) => Some(owned(&acc_path)),
        _ => None,
    };
    let from_callback = callback_scheduling(r, t);
    let path = match (from_acc, from_callback) {
        (Some(acc), Some(_)) => {
            let range = r.range_of(&acc_path);
            r.push(
                Diagnostic::error(
                    Code::EngineAssert,
                    acc,
                    "Lightning would stop: \"You have set both `accumulate_grad_batches` and passed an instance of `GradientAccumulationScheduler` inside callbacks\" (a schedule in the Trainer and the callback)",
                )
                .help("keep the callback and remove accumulate_grad_batches")
                .at(range, "a second schedule"),
            );
            return Err(());
        }
        (Some(path), None) | (None, Some(path)) => path,
        (None, None) => return Ok(None),
    };
    let refs: Vec<&str> = path.iter().map(String::as_str).collect();
    let Some(node) = r.node(&refs).cloned() else {
        // Only a callback's path can be missing: `scheduling` is a required
        // argument of `GradientAccumulationScheduler.__init__` (no default).
        let range = r.range_of(&refs);
        r.push(
            Diagnostic::error(
                Code::EngineAssert,
                path.clone(),
                "Lightning would stop: the GradientAccumulationScheduler callback has no init_args.scheduling, which it requires",
            )
            .help("give the schedule as init_args.scheduling: {epoch: factor}, e.g. {0: 8, 4: 4}")
            .at(range, "no scheduling"),
        );
        return Err(());
    };
    if path == owned(&acc_path) {
        // CHANGELOG of 2.0.0: "Removed support for passing a scheduling
        // dictionary to `Trainer(accumulate_grad_batches=...)`" (#16729);
        // `Trainer.__init__` types it `int` and stores it as given, and
        // `_TrainingEpochLoop._accumulated_batches_reached` takes
        // `ready % trainer.accumulate_grad_batches`, which a dict cannot.
        r.push(
            Diagnostic::error(
                Code::Version,
                path.clone(),
                format!("a schedule in {ACC} is Lightning 1.x's form: Lightning 2.0 removed it and takes only an int there (LightningCLI refuses the mapping, and a Trainer given one fails at the first batch)"),
            )
            .warning()
            .help("with Lightning 2.x, give the schedule to the GradientAccumulationScheduler callback in trainer.callbacks (`accum export lightning` writes it)")
            .at(node.range.clone(), "Lightning 1.x only"),
        );
    }
    let steps = scheduling(r, &path, &node)?;
    // on_train_start: the Trainer's own factor must stay 1.
    if path != owned(&acc_path)
        && let Some(acc) = r.uint(&acc_path, 1)
        && acc.value != 1
    {
        r.push(
            Diagnostic::error(
                Code::EngineAssert,
                acc.path.clone(),
                format!(
                    "Lightning would stop at the start of training: \"You have set `accumulate_grad_batches` and are using the `GradientAccumulationScheduler` callback. Either remove `accumulate_grad_batches` from the Trainer or remove the callback.\" ({ACC} is {})",
                    acc.value
                ),
            )
            .help("remove accumulate_grad_batches from the trainer: the callback sets it every epoch")
            .at(acc.range.clone(), "must be 1 with the callback"),
        );
        return Err(());
    }
    Ok(Some(EpochSchedule {
        steps,
        key: crate::diagnostic::dotted(&path),
        path,
        range: node.range,
    }))
}

/// The path of `init_args.scheduling` of the first scheduler callback.
fn callback_scheduling(r: &Reader, t: &Trainer) -> Option<Vec<String>> {
    let callbacks = t.path("callbacks");
    let node = r.node(&callbacks)?;
    let items: Vec<(Option<usize>, &Node)> = match &node.kind {
        NodeKind::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, n)| (Some(i), n))
            .collect(),
        NodeKind::Table(_) => vec![(None, node)],
        _ => return None,
    };
    items.into_iter().find_map(|(i, item)| {
        let NodeKind::Table(entries) = &item.kind else {
            return None;
        };
        let class = entries.iter().find(|e| e.key == "class_path")?;
        let NodeKind::String(name) = &class.value.kind else {
            return None;
        };
        if !is_scheduler(name) {
            return None;
        }
        let mut path = owned(&callbacks);
        if let Some(i) = i {
            path.push(i.to_string());
        }
        path.extend(["init_args".to_owned(), "scheduling".to_owned()]);
        Some(path)
    })
}

/// `scheduling`, checked as `GradientAccumulationScheduler.__init__` checks it.
fn scheduling(r: &mut Reader, path: &[String], node: &Node) -> Result<Vec<AccumulationStep>, ()> {
    let refuse = |r: &mut Reader, message: &str, range: Range<usize>| {
        r.push(
            Diagnostic::error(
                Code::EngineAssert,
                path.to_vec(),
                format!("Lightning would stop: {message}"),
            )
            .help("write the schedule as {epoch: factor} with whole epochs from 0 and factors ≥ 1, e.g. {0: 8, 4: 4}")
            .at(range, "schedule refused"),
        );
    };
    let NodeKind::Table(entries) = &node.kind else {
        refuse(
            r,
            "the schedule is not a mapping {epoch: factor}",
            node.range.clone(),
        );
        return Err(());
    };
    if entries.is_empty() {
        refuse(
            r,
            "\"Empty dict cannot be interpreted correct\"",
            node.range.clone(),
        );
        return Err(());
    }
    let mut steps = Vec::new();
    for e in entries {
        let Ok(epoch) = e.key.trim().parse::<u64>() else {
            refuse(
                r,
                &format!(
                    "\"Epoch should be an int greater than or equal to 0\" (`{}`)",
                    e.key
                ),
                e.key_range.clone(),
            );
            return Err(());
        };
        let factor = match e.value.kind {
            NodeKind::Integer(i) => u64::try_from(i).ok().filter(|&f| f >= 1),
            _ => None,
        };
        let Some(accumulation) = factor else {
            refuse(
                r,
                "\"Accumulation factor should be an int greater than 0\"",
                e.value.range.clone(),
            );
            return Err(());
        };
        steps.push(AccumulationStep {
            from_epoch: epoch,
            accumulation,
        });
    }
    steps.sort_by_key(|s| s.from_epoch);
    steps.dedup_by_key(|s| s.from_epoch);
    // `if minimal_epoch != 0: scheduling.update({0: 1})`.
    if steps.first().is_some_and(|s| s.from_epoch != 0) {
        steps.insert(
            0,
            AccumulationStep {
                from_epoch: 0,
                accumulation: 1,
            },
        );
    }
    Ok(steps)
}

/// The stages of an epoch schedule on `plan` (whose `A` is the last
/// phase's): each phase ends at `epoch × examples` examples. `None`, with
/// an error, when the examples per epoch are unknown or an epoch of a
/// phase is not whole updates (Lightning steps a partial group there, with
/// the loss still divided by the phase's factor).
pub(super) fn stages(
    r: &mut Reader,
    plan: &Plan,
    schedule: &EpochSchedule,
    examples: Option<u64>,
) -> Option<Staged> {
    let Some(examples) = examples else {
        let shown = shown(schedule);
        r.push(
            Diagnostic::error(
                Code::Missing,
                schedule.path.clone(),
                format!(
                    "{} changes the accumulation at epoch starts ({shown}), so where each stage ends is a number of epochs times the examples per epoch, which the file does not say",
                    schedule.key
                ),
            )
            .help("give the examples per epoch: --examples N")
            .at(schedule.range.clone(), "stages end at epochs"),
        );
        return None;
    };
    let (m, d) = (plan.micro_batch(), plan.replicas());
    let mut specs: Vec<StageSpec> = Vec::new();
    let mut partial = Vec::new();
    let phases = &schedule.steps;
    for (i, phase) in phases.iter().enumerate().take(phases.len() - 1) {
        let next = phases[i + 1].from_epoch;
        let a = phase.accumulation;
        let b = m.saturating_mul(a).saturating_mul(d);
        if !examples.is_multiple_of(b) {
            // Lightning's DistributedSampler gives each device ceil(E / D)
            // examples (repeating some to even them out); the DataLoader
            // keeps the last short batch.
            let per_device = examples.div_ceil(d);
            let batches = per_device.div_ceil(m);
            let repeated = per_device * d - examples;
            let mut shape = format!(
                "epochs {}–{} at {ACC} {a} (B = {m} × {a} × {d} = {}): an epoch of {} examples is {} per device{} in {} batches of up to {m}, so {} steps of {a} batches",
                phase.from_epoch,
                next - 1,
                group_digits(b),
                group_digits(examples),
                group_digits(per_device),
                if repeated > 0 {
                    format!(" (the sampler repeats {repeated} examples to even the devices out)")
                } else {
                    String::new()
                },
                group_digits(batches),
                group_digits(batches / a),
            );
            if batches % a != 0 {
                shape.push_str(&format!(" and a last step of {} batches", batches % a));
            }
            if per_device % m != 0 {
                shape.push_str(&format!(
                    ", the last batch holding {} examples",
                    per_device % m
                ));
            }
            partial.push(shape);
            continue;
        }
        let Some(until) = next.checked_mul(examples) else {
            r.push(
                Diagnostic::error(
                    Code::InteropValue,
                    schedule.path.clone(),
                    format!("epoch {next} × {examples} examples is beyond what accum counts"),
                )
                .help("write smaller epochs")
                .at(schedule.range.clone(), "too large"),
            );
            return None;
        };
        match specs.last_mut() {
            Some(last) if last.accumulation == Some(a) => {
                last.until = Some(Span::new(until, UnitKind::Example));
            }
            _ => specs.push(StageSpec::accumulation(a).until(Span::new(until, UnitKind::Example))),
        }
    }
    if !partial.is_empty() {
        r.push(
            Diagnostic::error(
                Code::PartialGroup,
                schedule.path.clone(),
                format!(
                    "Lightning counts the batches of each epoch from zero and steps the optimizer on the epoch's last batch, dividing each loss by the factor whatever that step holds: {}; accum's stages cannot end inside an update, so the schedule is not planned",
                    crate::output::listed_by(&partial, "; ")
                ),
            )
            .help("use examples per epoch that are a multiple of each phase's B (drop the rest, or drop_last in the sampler)")
            .at(schedule.range.clone(), "an epoch is not whole updates"),
        );
        return None;
    }
    while specs
        .last()
        .is_some_and(|s| s.accumulation == Some(plan.accumulation()))
    {
        specs.pop();
    }
    let staged = match StagedPlan::ramp_to(plan, &specs) {
        Ok(staged) => staged,
        Err(err) => {
            r.push(
                Diagnostic::error(
                    Code::InteropValue,
                    schedule.path.clone(),
                    format!("{}: {}", schedule.key, err.message()),
                )
                .help(err.fix().text)
                .at(schedule.range.clone(), err.label()),
            );
            return None;
        }
    };
    Some(Staged {
        form: Form::Stages(specs),
        plan: staged,
        key: schedule.key.clone(),
        range: schedule.range.clone(),
    })
}

/// `epoch 0: 8, epoch 4: 4`.
pub(super) fn shown(schedule: &EpochSchedule) -> String {
    let steps: Vec<String> = schedule
        .steps
        .iter()
        .map(|s| format!("epoch {}: {}", s.from_epoch, s.accumulation))
        .collect();
    crate::output::listed(&steps)
}
