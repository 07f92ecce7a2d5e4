//! Writing Megatron-LM arguments, one per line with `\` continuations, after
//! a comment that states the world size the launcher must start.

use accum_core::config::partial::PartialConfig;
use accum_core::settings::{Normalization, PrecisionMode, ScheduleKind};
use accum_core::{Span, UnitKind};

use crate::interop::export::{Out, json_float};
use crate::interop::{ExportError, Framework};

pub(crate) fn export(c: &PartialConfig, out: &mut Out) -> Result<String, ExportError> {
    let plan = out.plan;
    out.check_last_group(
        c,
        &[accum_core::LastGroup::Drop],
        "runs whole global batches only (the leftover examples are not used)",
    )?;
    let layout = plan
        .layout()
        .unwrap_or(accum_core::Layout::data_parallel(plan.replicas()));
    let mut lines: Vec<String> = vec![
        format!("--micro-batch-size {}", plan.micro_batch()),
        format!("--global-batch-size {}", plan.effective_batch().get()),
    ];
    // The degrees the config states (1 included), and those above 1.
    let stated = c.parallel.as_ref();
    for (flag, degree, given) in [
        (
            "--tensor-model-parallel-size",
            layout.tensor,
            stated.and_then(|p| p.tensor),
        ),
        (
            "--pipeline-model-parallel-size",
            layout.pipeline,
            stated.and_then(|p| p.pipeline),
        ),
        (
            "--context-parallel-size",
            layout.context,
            stated.and_then(|p| p.context),
        ),
    ] {
        if degree > 1 || given.is_some() {
            lines.push(format!("{flag} {degree}"));
        }
    }
    if let Some(l) = plan.seq_len() {
        lines.push(format!("--seq-length {l}"));
    }
    // Megatron asserts that every length is in iterations or every one in
    // samples: the run's total decides, and the warmup follows it.
    let s = &c.schedule;
    let in_samples = match (s.total, s.warmup) {
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
    }
    if let Some(w) = s.warmup {
        lines.push(length(
            out,
            "schedule.warmup",
            w,
            in_samples,
            "--lr-warmup-iters",
            "--lr-warmup-samples",
        )?);
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
