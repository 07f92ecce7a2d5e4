//! Megatron's lengths, logging, precision, clipping and learning rate, and
//! the checks on them (iterations and samples do not mix; a batch schedule
//! shifts lengths counted in iterations).

use std::ops::Range;

use accum_core::Code;
use accum_core::config::partial::{PartialConfig, PartialLossScale};
use accum_core::plan::{Plan, Rounding, StagedPlan};
use accum_core::settings::{PrecisionMode, ScheduleKind};
use accum_core::{Span, UnitKind, Updates, group_digits};

use super::args::Arg;
use super::arguments::Args;
use super::schedules::{self, Rule};
use crate::diagnostic::Diagnostic;
use crate::interop::BatchSchedule;
use crate::interop::stages::StepLength;

/// Lengths, logging, precision, clipping and the learning rate; the
/// schedule-shift and iteration/sample findings.
pub(super) fn settings(
    a: &mut Args,
    plan: &Plan,
    schedule: Option<&BatchSchedule>,
    rule: Option<&Rule<'_>>,
    top: &Range<usize>,
) -> (PartialConfig, Vec<StepLength>) {
    let b = plan.effective_batch().get();
    // A step schedule of one batch has no stages, and Megatron counts its
    // iterations by the step schedule's rule all the same.
    let one_batch = StagedPlan::constant(*plan);
    let one_batch_rule = Rule::Steps(&one_batch);
    let rule = match (rule, schedule) {
        (None, Some(BatchSchedule::Steps(_))) => Some(&one_batch_rule),
        _ => rule,
    };
    let mut c = PartialConfig::default();
    let iters = a.soft_uint("--train-iters", 1);
    let samples = a.soft_uint("--train-samples", 1);
    let warm_iters = a.soft_uint("--lr-warmup-iters", 0).map(|v| v.0);
    let warm_samples = a.soft_uint("--lr-warmup-samples", 0).map(|v| v.0);
    let decay_iters = a.soft_uint("--lr-decay-iters", 1).map(|v| v.0);
    let decay_samples = a.soft_uint("--lr-decay-samples", 1).map(|v| v.0);

    // arguments.py, validate_args: iteration- and sample-based options do not mix.
    let mixed: Vec<(&str, &str)> = if iters.is_some() {
        [
            ("--train-samples", samples.is_some()),
            ("--lr-decay-samples", decay_samples.is_some()),
            ("--lr-warmup-samples", warm_samples.is_some_and(|w| w > 0)),
        ]
        .into_iter()
        .filter(|(_, on)| *on)
        .map(|(n, _)| (n, "--train-iters"))
        .collect()
    } else if samples.is_some() {
        [
            ("--lr-decay-iters", decay_iters.is_some()),
            ("--lr-warmup-iters", warm_iters.is_some_and(|w| w > 0)),
        ]
        .into_iter()
        .filter(|(_, on)| *on)
        .map(|(n, _)| (n, "--train-samples"))
        .collect()
    } else {
        Vec::new()
    };
    for (name, with) in mixed {
        let range = a.get(name).map_or(top.clone(), |x| x.range.clone());
        let kind = if with == "--train-iters" {
            "iteration"
        } else {
            "sample"
        };
        a.findings.push(
            Diagnostic::error(
                Code::EngineAssert,
                Args::path(name),
                format!("Megatron would stop at start-up: with {with} it expects {kind}-based options only, and {name} is the other kind (validate_args)"),
            )
            .help(format!("count every length in the same unit as {with}"))
            .at(range, "mixes iterations and samples"),
        );
    }

    // arguments.py, validate_args (before 532ad926b4): "expected no
    // batch-size rampup for iteration-based training".
    if let (Some((n, range)), Some(BatchSchedule::Ramp { .. })) = (&iters, schedule) {
        let converted = match rule {
            Some(Rule::Ramp { plan, .. }) => plan
                .examples_at(Updates::new(*n))
                .map(|e| {
                    format!(
                        " (--train-iters {n} trains {} samples through the ramp)",
                        accum_core::group_digits(e.get())
                    )
                })
                .unwrap_or_default(),
            _ => String::new(),
        };
        a.findings.push(
            Diagnostic::error(
                Code::EngineAssert,
                Args::path("--train-iters"),
                format!("the Megatron-LM versions that run --rampup-batch-size stop at start-up: \"expected no batch-size rampup for iteration-based training\" (validate_args); later versions ignore the ramp-up{converted}"),
            )
            .help("count the run in samples: --train-samples N, with --lr-warmup-samples and --lr-decay-samples")
            .at(range.clone(), "iterations with a ramp-up"),
        );
    }
    let mut total = iters.as_ref().map(|v| Span::new(v.0, UnitKind::Update));
    if let Some((s, range)) = &samples {
        match rule {
            // training.py, update_train_iters, through the stages.
            Some(rule) => {
                if let Ok((n, trained)) = schedules::trained(rule, *s)
                    && trained != *s
                {
                    let (how, more) = match rule {
                        Rule::Ramp { .. } => (
                            "counts iterations through the ramp-up while the samples consumed before them are at most the ramp's and the run's, then adds (train_samples − consumed) // global_batch_size",
                            trained > *s,
                        ),
                        Rule::Steps(_) => (
                            "counts iterations while the samples consumed are below train_samples",
                            true,
                        ),
                    };
                    let diff = trained.abs_diff(*s);
                    a.findings.push(
                        Diagnostic::error(
                            Code::Rounds,
                            Args::path("--train-samples"),
                            format!(
                                "Megatron sets train_iters = {n} (update_train_iters {how}), so it trains {} samples, {} {} than --train-samples {s}",
                                trained,
                                diff,
                                if more { "more" } else { "fewer" }
                            ),
                        )
                        .warning()
                        .help(match rule {
                            // A count that ends in the ramp-up phase always ends past
                            // train_samples: the first count trained exactly is where
                            // that phase ends (train_iters of the ramp's own samples).
                            Rule::Ramp { samples: ramp, .. } if more => {
                                let exact = schedules::trained(rule, *ramp).ok().map(|(_, e)| e);
                                match exact {
                                    Some(e) => format!(
                                        "an iteration is counted while the samples before it are at most --train-samples, so a run that ends in the ramp-up trains past it; the ramp-up's iterations end at {} samples, and --train-samples {} (or that plus whole global batches of {b}) is trained exactly",
                                        accum_core::group_digits(e),
                                        e
                                    ),
                                    None => format!("write --train-samples {trained} to state what is trained"),
                                }
                            }
                            _ => format!("write --train-samples {trained} to state what is trained"),
                        })
                        .at(range.clone(), "not whole iterations through the stages"),
                    );
                }
            }
            // training.py, update_train_iters: train_iters = train_samples // global_batch_size.
            None if schedule.is_none() && s % b != 0 => {
                a.findings.push(
                    Diagnostic::error(
                        Code::Rounds,
                        Args::path("--train-samples"),
                        format!(
                            "Megatron sets train_iters = train_samples // global_batch_size = {s} // {b} = {}, so the last {} samples are not trained",
                            s / b,
                            s % b
                        ),
                    )
                    .warning()
                    .help(format!("use --train-samples {} or {}", s / b * b, (s / b + 1).saturating_mul(b)))
                    .at(range.clone(), "not a multiple of the global batch"),
                );
            }
            None => {}
        }
        total = total.or(Some(Span::new(*s, UnitKind::Example)));
    }
    // With a step schedule and --train-iters, the scheduler's lengths in
    // iterations are iterations of micro × DP samples (`scheduler_samples`).
    let per_iteration = matches!(rule, Some(Rule::Steps(_)))
        .then(|| plan.micro_batch().saturating_mul(plan.replicas()))
        .filter(|_| iters.is_some());
    let warmup = warm_iters
        .filter(|&w| w > 0 || warm_samples.is_none())
        .map(|v| match per_iteration {
            Some(per) => Span::new(v.saturating_mul(per), UnitKind::Example),
            None => Span::new(v, UnitKind::Update),
        })
        .or(warm_samples.map(|v| Span::new(v, UnitKind::Example)));
    if let (Some(per), Some(Rule::Steps(stages))) = (per_iteration, rule) {
        let scheduled = [
            ("--lr-warmup-iters", warm_iters.filter(|&w| w > 0)),
            ("--lr-decay-iters", decay_iters),
        ];
        if let Some(finding) = scheduler_samples(a, stages, per, &scheduled, top) {
            a.findings.push(finding);
        }
    }
    if let Some(frac) = a.get("--lr-warmup-fraction").cloned() {
        a.findings.push(
            Diagnostic::error(
                Code::NotConverted,
                Args::path("--lr-warmup-fraction"),
                "--lr-warmup-fraction is a fraction of the decay length and is not carried into schedule.warmup",
            )
            .warning()
            .help("give --lr-warmup-iters (updates) or --lr-warmup-samples (examples) instead")
            .at(frac.range.clone(), "not converted"),
        );
    }
    // The batch changes: lengths in iterations cover different examples in
    // each stage (`schedule-shift`, with their values through the stages).
    // Lengths already in samples keep their meaning.
    let mut lengths = Vec::new();
    // Under a step schedule the scheduler's lengths are not updates of the
    // stages (`scheduler_samples` says what they are).
    let scheduler_in_updates = per_iteration.is_none();
    if rule.is_some() {
        for (name, value, in_samples) in [
            (
                "--train-iters",
                iters.as_ref().map(|v| v.0),
                "--train-samples",
            ),
            (
                "--lr-warmup-iters",
                warm_iters.filter(|&w| w > 0 && scheduler_in_updates),
                "--lr-warmup-samples",
            ),
            (
                "--lr-decay-iters",
                decay_iters.filter(|_| scheduler_in_updates),
                "--lr-decay-samples",
            ),
        ] {
            if let Some(updates) = value {
                let range = a.get(name).map_or(top.clone(), |x| x.range.clone());
                lengths.push(StepLength {
                    key: name.to_owned(),
                    path: Args::path(name),
                    range,
                    updates,
                    in_samples: Some(in_samples),
                });
            }
        }
    }
    c.schedule.total = total;
    c.schedule.warmup = warmup;
    c.schedule.kind = a
        .get("--lr-decay-style")
        .and_then(Arg::value)
        .and_then(|v| match v.text.as_str() {
            "linear" => Some(ScheduleKind::Linear),
            "cosine" => Some(ScheduleKind::Cosine),
            "constant" => Some(ScheduleKind::Constant),
            _ => None,
        });
    c.log.every = a
        .soft_uint("--log-interval", 1)
        .map(|v| Span::new(v.0, UnitKind::Update));

    // Precision (`accum::run::loss-scale`).
    if a.has("--fp16") {
        c.precision.mode = Some(PrecisionMode::Fp16);
        let scale = if let Some((s, _)) = a.float("--loss-scale").filter(|(s, _)| *s > 0.0) {
            PartialLossScale {
                init: Some(s),
                growth_factor: Some(1.0),
                ..PartialLossScale::default()
            }
        } else {
            PartialLossScale {
                init: a.float("--initial-loss-scale").map(|v| v.0),
                growth_interval: a.soft_uint("--loss-scale-window", 1).map(|v| v.0),
                ..PartialLossScale::default()
            }
        };
        c.precision.loss_scale = (scale != PartialLossScale::default()).then_some(scale);
    } else if a.has("--bf16") {
        c.precision.mode = Some(PrecisionMode::Bf16);
    }
    // --clip-grad 0 disables clipping (kept as 0: "off", not "not set").
    c.optimizer.clip_norm = a.float("--clip-grad").map(|v| v.0);
    c.optimizer.lr = a.float("--lr").map(|v| v.0);
    c.optimizer.weight_decay = a.float("--weight-decay").map(|v| v.0);
    c.optimizer.eps = a.float("--adam-eps").map(|v| v.0);
    if let (Some(b1), Some(b2)) = (a.float("--adam-beta1"), a.float("--adam-beta2")) {
        c.optimizer.betas = Some([b1.0, b2.0]);
    }
    (c, lengths)
}

/// `schedule-shift` for the learning-rate lengths in iterations under a step
/// schedule. `get_optimizer_param_scheduler` (`megatron/training/training.py`)
/// counts samples: with `--train-iters` it sets `lr_warmup_steps =
/// lr_warmup_iters × global_batch_size` and `lr_decay_steps = lr_decay_iters
/// × global_batch_size`, and `train_step` steps it by each iteration's
/// samples (`get_num_microbatches() × micro_batch_size ×
/// data_parallel_size`). With a step schedule `--global-batch-size` is
/// refused and `validate_args` sets `global_batch_size = micro_batch_size ×
/// data_parallel_size`, so each of these iterations is `per` samples: the
/// warmup ends after `W × per` samples, far fewer iterations than `W` once
/// the batch grows.
fn scheduler_samples(
    a: &Args,
    plan: &StagedPlan,
    per: u64,
    lengths: &[(&str, Option<u64>)],
    top: &Range<usize>,
) -> Option<Diagnostic> {
    let mut parts = Vec::new();
    let mut fixes = Vec::new();
    let mut ranges = Vec::new();
    let mut names = Vec::new();
    for &(name, value) in lengths {
        let Some(n) = value else { continue };
        let samples = n.saturating_mul(per);
        // Within the first stage (batch `per`) the two counts agree.
        let Ok(through) = plan
            .to_updates(samples, UnitKind::Example, Rounding::Up)
            .map(Updates::get)
        else {
            continue;
        };
        if through == n {
            continue;
        }
        parts.push(format!(
            "{name} {} is {} × {per} = {} samples, reached after {} iterations through the stages",
            group_digits(n),
            group_digits(n),
            group_digits(samples),
            group_digits(through)
        ));
        // The samples of `n` iterations through the stages, in iterations of `per`.
        if let Ok(e) = plan.examples_at(Updates::new(n)) {
            fixes.push(format!("{name} {}", e.get() / per));
        }
        ranges.push(a.get(name).map_or(top.clone(), |x| x.range.clone()));
        names.push(name);
    }
    let first = ranges.first()?.clone();
    let mut finding = Diagnostic::error(
        Code::StageShift,
        Args::path(names.first()?),
        format!(
            "Megatron's learning-rate scheduler counts samples, and with --train-iters and --step-batch-size-schedule an iteration of it is global_batch_size = micro × DP = {per} samples (get_optimizer_param_scheduler), whatever the stage's batch: {}{}",
            parts.join("; "),
            if names.contains(&"--lr-warmup-iters") {
                "; accum keeps the warmup as those samples"
            } else {
                ""
            }
        ),
    )
    .warning()
    .help(format!(
        "to count these lengths in iterations through the stages, write {} (the samples of that many iterations, divided by {per})",
        fixes.join(", ")
    ))
    .at(first, "iterations of micro × DP samples");
    for (range, name) in ranges.into_iter().zip(&names).skip(1) {
        finding = finding.also(Args::path(name), range, "iterations of micro × DP samples");
    }
    Some(finding)
}
