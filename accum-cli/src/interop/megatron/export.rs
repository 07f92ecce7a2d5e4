//! Writing Megatron-LM arguments, one per line with `\` continuations, after
//! a comment that states the world size the launcher must start.

use accum_core::config::partial::PartialConfig;
use accum_core::plan::{LinearRamp, StagedPlan};
use accum_core::settings::{Normalization, PrecisionMode, ScheduleKind};
use accum_core::{Span, UnitKind, group_digits};

use super::ramp::RAMP_REMOVED;
use super::schedules::{self, EXACT_FLOAT, Rule};
use crate::interop::export::{Out, json_float};
use crate::interop::stages::ramp_in_samples;
use crate::interop::{ExportError, Framework};

pub(crate) fn export(c: &PartialConfig, out: &mut Out) -> Result<String, ExportError> {
    let plan = out.plan;
    out.check_last_group(
        c,
        &[accum_core::plan::LastGroup::Drop],
        "runs whole global batches only (the leftover examples are not used)",
    )?;
    let layout = out.layout();
    let s = &c.schedule;
    let batch = batch_lines(c, out)?;
    let mut lines: Vec<String> = vec![format!("--micro-batch-size {}", plan.micro_batch())];
    lines.extend(batch.lines);
    for (flag, degree) in out.parallel_degrees(
        c,
        [
            "--tensor-model-parallel-size",
            "--pipeline-model-parallel-size",
            "--context-parallel-size",
        ],
    ) {
        lines.push(format!("{flag} {degree}"));
    }
    if let Some(l) = plan.seq_len() {
        lines.push(format!("--seq-length {l}"));
    }
    // Megatron asserts that every length is in iterations or every one in
    // samples: the run's total decides, and the warmup follows it. A
    // ramp-up needs samples.
    let in_samples = batch.ramp.is_some()
        || match (s.total, s.warmup) {
            (Some(t), _) => t.unit() == UnitKind::Example,
            (None, Some(w)) => w.unit() == UnitKind::Example,
            (None, None) => false,
        };
    if let Some(t) = s.total {
        lines.push(length(
            out,
            "schedule.total",
            t,
            in_samples,
            "--train-iters",
            "--train-samples",
        )?);
        if in_samples && !out.staged.is_constant() {
            trained_note(out, t, batch.ramp.as_ref())?;
        }
    }
    if let Some(w) = s.warmup {
        if !in_samples && !out.staged.is_constant() {
            lines.push(scheduler_iters(out, w)?);
        } else {
            lines.push(length(
                out,
                "schedule.warmup",
                w,
                in_samples,
                "--lr-warmup-iters",
                "--lr-warmup-samples",
            )?);
        }
    }
    if let Some(kind) = s.kind {
        lines.push(format!(
            "--lr-decay-style {}",
            match kind {
                ScheduleKind::Constant => "constant",
                ScheduleKind::Linear => "linear",
                ScheduleKind::Cosine => "cosine",
            }
        ));
    }
    if let Some(every) = c.log.every {
        let v = out.span_in("log.every", "--log-interval", every, UnitKind::Update)?;
        lines.push(format!("--log-interval {v}"));
    }
    let o = &c.optimizer;
    if let Some(lr) = o.lr {
        lines.push(format!("--lr {}", json_float(lr)));
    }
    if let Some(w) = o.weight_decay {
        lines.push(format!("--weight-decay {}", json_float(w)));
    }
    if let Some([b1, b2]) = o.betas {
        lines.push(format!("--adam-beta1 {}", json_float(b1)));
        lines.push(format!("--adam-beta2 {}", json_float(b2)));
    }
    if let Some(e) = o.eps {
        lines.push(format!("--adam-eps {}", json_float(e)));
    }
    if let Some(clip) = o.clip_norm {
        lines.push(format!("--clip-grad {}", json_float(clip)));
    }
    out.not_written(
        &[
            ("optimizer.kind", o.kind.is_some()),
            ("optimizer.momentum", o.momentum.is_some()),
        ],
        "arguments are not written for the optimizer's kind",
    );
    match c.precision.mode {
        None | Some(PrecisionMode::Fp32) => {}
        Some(PrecisionMode::Bf16) => lines.push("--bf16".to_owned()),
        Some(PrecisionMode::Fp16) => {
            lines.push("--fp16".to_owned());
            if let Some(s) = c.precision.loss_scale {
                if s.growth_factor == Some(1.0) {
                    if let Some(init) = s.init {
                        lines.push(format!("--loss-scale {}", json_float(init)));
                    }
                } else {
                    if let Some(init) = s.init {
                        lines.push(format!("--initial-loss-scale {}", json_float(init)));
                    }
                    if let Some(w) = s.growth_interval {
                        lines.push(format!("--loss-scale-window {w}"));
                    }
                    if s.growth_factor.is_some_and(|g| g != 2.0)
                        || s.backoff_factor.is_some_and(|b| b != 0.5)
                    {
                        out.note("precision.loss_scale growth_factor and backoff_factor not written: Megatron's dynamic scaler grows by 2 and backs off by 0.5");
                    }
                }
            }
        }
    }
    match c.loss.normalization {
        Some(Normalization::PerToken) => lines.push("--calculate-per-token-loss".to_owned()),
        Some(Normalization::PerExample) | None => {}
        Some(Normalization::Sum) => {
            return Err(ExportError::Unsupported {
                framework: Framework::Megatron,
                key: "loss.normalization",
                reason: "Megatron averages the loss (per microbatch, or per token with --calculate-per-token-loss); a summed loss cannot be written".to_owned(),
            });
        }
    }
    let mut text = format!(
        "# launch {} processes: world_size {} = tensor {} × pipeline {} × context {} × {} data-parallel replicas\n",
        layout.world_size,
        layout.world_size,
        layout.tensor,
        layout.pipeline,
        layout.context,
        plan.replicas()
    );
    let n = lines.len();
    for (i, line) in lines.into_iter().enumerate() {
        text.push_str(&line);
        text.push_str(if i + 1 < n { " \\\n" } else { "\n" });
    }
    Ok(text)
}

/// `--…-iters N` or `--…-samples N`; samples are whole global batches, as
/// Megatron floors.
fn length(
    out: &Out,
    key: &'static str,
    span: Span,
    in_samples: bool,
    iters: &'static str,
    samples: &'static str,
) -> Result<String, ExportError> {
    if in_samples {
        // The count as stated: Megatron floors it to whole global batches
        // itself, as it would the source's.
        let v = out.span_in(key, samples, span, UnitKind::Example)?;
        Ok(format!("{samples} {v}"))
    } else {
        let v = out.span_in(key, iters, span, UnitKind::Update)?;
        Ok(format!("{iters} {v}"))
    }
}

/// `--lr-warmup-iters` under a step schedule with `--train-iters`: the
/// learning-rate scheduler counts samples, `lr_warmup_iters ×
/// global_batch_size`, and with a step schedule `global_batch_size` is
/// micro × DP (`get_optimizer_param_scheduler` in
/// `megatron/training/training.py`; `validate_args`). So the warmup is
/// written as its samples through the stages over micro × DP, which is
/// exact: every stage's batch is a multiple of micro × DP.
fn scheduler_iters(out: &mut Out, warmup: Span) -> Result<String, ExportError> {
    let name = "--lr-warmup-iters";
    let samples = out.span_in("schedule.warmup", name, warmup, UnitKind::Example)?;
    let per = out.plan.micro_batch().saturating_mul(out.plan.replicas());
    let v = samples / per.max(1);
    out.note(format!(
        "schedule.warmup = {warmup} is {} samples through the stages: {name} {v}, as Megatron's learning-rate scheduler counts an iteration of it as micro × DP = {per} samples under a step schedule",
        group_digits(samples)
    ));
    Ok(format!("{name} {v}"))
}

/// The batch arguments, and the ramp they write.
struct BatchLines {
    lines: Vec<String>,
    ramp: Option<LinearRamp>,
}

/// `--global-batch-size`, with `--rampup-batch-size` when the config's ramp
/// is one Megatron's ramp-up calculator steps the same way and every
/// length is in samples (the versions with the ramp-up refuse iterations);
/// otherwise the stages as `--step-batch-size-schedule` (thresholds in
/// tokens, which Megatron divides by `--seq-length`), without
/// `--global-batch-size`, which Megatron refuses next to it.
fn batch_lines(c: &PartialConfig, out: &mut Out) -> Result<BatchLines, ExportError> {
    let global = out.plan.effective_batch().get();
    let staged = out.staged.clone();
    if staged.is_constant() {
        return Ok(BatchLines {
            lines: vec![format!("--global-batch-size {global}")],
            ramp: None,
        });
    }
    let counts_updates = [c.schedule.total, c.schedule.warmup]
        .into_iter()
        .flatten()
        .any(|s| matches!(s.unit(), UnitKind::Update | UnitKind::Microbatch));
    let ramp = c
        .batch
        .ramp
        .and_then(|r| ramp_in_samples(&r, &staged))
        .filter(|_| !counts_updates);
    if let Some(ramp) = ramp {
        let steps = step_schedule(&staged).ok();
        out.note(format!(
            "--rampup-batch-size runs in Megatron-LM before {RAMP_REMOVED} only; later versions ignore it and train at --global-batch-size {global} from the start{}",
            steps.map_or_else(
                || ": give batch.seq_len to get the same stages as --step-batch-size-schedule".to_owned(),
                |s| format!(": the same stages there are --step-batch-size-schedule \"{s}\" (without --global-batch-size)")
            )
        ));
        return Ok(BatchLines {
            lines: vec![
                format!("--global-batch-size {global}"),
                format!(
                    "--rampup-batch-size {} {} {}",
                    ramp.start,
                    ramp.increment,
                    ramp.over.value()
                ),
            ],
            ramp: Some(ramp),
        });
    }
    let schedule = step_schedule(&staged).map_err(|reason| out.stages_refused(c, reason))?;
    if c.batch.ramp.is_some() {
        out.note(format!(
            "batch.ramp written as --step-batch-size-schedule: {}",
            if counts_updates {
                "the Megatron-LM versions with --rampup-batch-size refuse lengths in iterations next to it"
            } else {
                "its length is not a number of samples that --rampup-batch-size steps the same way"
            }
        ));
    }
    Ok(BatchLines {
        lines: vec![format!("--step-batch-size-schedule \"{schedule}\"")],
        ramp: None,
    })
}

/// The stages as Megatron's step schedule, `"0:16 2400026624:320 …"`:
/// each stage from the tokens consumed before it. Exact, because each
/// threshold is whole iterations of the stages before it, and `update`
/// changes the batch at the first iteration that reaches it.
fn step_schedule(staged: &StagedPlan) -> Result<String, String> {
    let mut entries = Vec::new();
    for stage in staged.stages() {
        let Some(tokens) = stage.tokens_before() else {
            return Err("Megatron reads the thresholds of --step-batch-size-schedule as tokens and divides them by --seq-length, which training always has: give batch.seq_len".to_owned());
        };
        if tokens.get() > EXACT_FLOAT {
            return Err(format!(
                "the threshold {} tokens is above 2^53, which Megatron's int(float(…)) does not read exactly",
                group_digits(tokens.get())
            ));
        }
        entries.push(format!(
            "{}:{}",
            tokens.get(),
            stage.plan().effective_batch().get()
        ));
    }
    Ok(entries.join(" "))
}

/// A note when Megatron's iterations for `--train-samples` train other
/// samples than the config's total (`update_train_iters`).
fn trained_note(out: &mut Out, total: Span, ramp: Option<&LinearRamp>) -> Result<(), ExportError> {
    let samples = out.span_in(
        "schedule.total",
        "--train-samples",
        total,
        UnitKind::Example,
    )?;
    let rule = match ramp {
        Some(r) => Rule::Ramp {
            plan: &out.staged,
            samples: r.over.value(),
        },
        None => Rule::Steps(&out.staged),
    };
    if let Ok((n, trained)) = schedules::trained(&rule, samples)
        && trained != samples
    {
        out.note(format!(
            "--train-samples {samples}: Megatron counts train_iters = {n} through the stages (update_train_iters), which trains {trained} samples"
        ));
    }
    Ok(())
}
