//! Writing a DeepSpeed config: all three batch keys (so that DeepSpeed
//! fills nothing), and the precision, clipping, optimizer, scheduler and
//! print interval the config sets.

use accum_core::UnitKind;
use accum_core::config::partial::PartialConfig;
use accum_core::settings::{Normalization, OptimizerKind, PrecisionMode, ScheduleKind};
use serde_json::{Map, Value, json};

use super::fill::{GAS, MICRO, TRAIN_BATCH};
use crate::interop::export::{Out, pretty};
use crate::interop::{ExportError, Framework};

pub(crate) fn export(c: &PartialConfig, out: &mut Out) -> Result<String, ExportError> {
    let plan = out.plan;
    out.check_last_group(
        c,
        &[],
        "has no last-group policy (its accumulation boundary ignores epoch ends)",
    )?;
    check_normalization(out, c)?;
    let mut root = Map::new();
    root.insert(TRAIN_BATCH.into(), json!(plan.effective_batch().get()));
    root.insert(MICRO.into(), json!(plan.micro_batch()));
    root.insert(GAS.into(), json!(plan.accumulation()));
    if let Some(l) = plan.layout() {
        if l.context > 1 {
            // Ulysses sequence parallelism: DeepSpeed divides its world by it.
            root.insert("sequence_parallel_size".into(), json!(l.context));
        }
        if l.tensor > 1 || l.pipeline > 1 {
            out.note(format!(
                "DeepSpeed divides by the data-parallel size only with a model-parallel unit or a PipelineModule: launch {} ranks and pass the mpu (tensor {}) or build a PipelineModule (pipeline {})",
                l.world_size, l.tensor, l.pipeline
            ));
        }
    }
    match c.precision.mode {
        None => {}
        Some(PrecisionMode::Fp32) => {
            root.insert("fp16".into(), json!({ "enabled": false }));
        }
        Some(PrecisionMode::Bf16) => {
            root.insert("bf16".into(), json!({ "enabled": true }));
        }
        Some(PrecisionMode::Fp16) => {
            let mut fp16 = Map::new();
            fp16.insert("enabled".into(), json!(true));
            if let Some(s) = c.precision.loss_scale {
                let growth = s.growth_factor.unwrap_or(2.0);
                let backoff = s.backoff_factor.unwrap_or(0.5);
                if growth == 1.0 {
                    if let Some(init) = s.init {
                        fp16.insert("loss_scale".into(), json!(init));
                    }
                } else if growth == 2.0 && backoff == 0.5 {
                    if let Some(init) = s.init {
                        let power = init.log2();
                        if !(power.is_finite() && power.fract() == 0.0 && power >= 0.0) {
                            return Err(ExportError::Unsupported {
                                framework: Framework::DeepSpeed,
                                key: "precision.loss_scale.init",
                                reason: format!(
                                    "DeepSpeed's dynamic scale starts at 2^initial_scale_power, and {init} is not a power of two; use {} or {}",
                                    2f64.powf(power.floor().max(0.0)),
                                    2f64.powf(power.ceil().max(0.0))
                                ),
                            });
                        }
                        fp16.insert("initial_scale_power".into(), json!(power as u64));
                    }
                    if let Some(w) = s.growth_interval {
                        fp16.insert("loss_scale_window".into(), json!(w));
                    }
                } else {
                    out.note(format!(
                        "precision.loss_scale not written: DeepSpeed's dynamic scaler grows by 2 and backs off by 0.5 (static: growth 1), not {growth} and {backoff}"
                    ));
                }
            }
            root.insert("fp16".into(), Value::Object(fp16));
        }
    }
    if let Some(clip) = c.optimizer.clip_norm {
        root.insert("gradient_clipping".into(), json!(clip));
    }
    let o = &c.optimizer;
    let mut params = Map::new();
    if let Some(lr) = o.lr {
        params.insert("lr".into(), json!(lr));
    }
    if let Some(b) = o.betas {
        params.insert("betas".into(), json!(b));
    }
    if let Some(e) = o.eps {
        params.insert("eps".into(), json!(e));
    }
    if let Some(w) = o.weight_decay {
        params.insert("weight_decay".into(), json!(w));
    }
    match o.kind {
        Some(OptimizerKind::AdamW) => {
            root.insert(
                "optimizer".into(),
                json!({ "type": "AdamW", "params": params }),
            );
        }
        Some(OptimizerKind::Sgd) => {
            // DeepSpeed builds other optimizers from torch.optim by name.
            if let Some(m) = o.momentum {
                params.insert("momentum".into(), json!(m));
            }
            root.insert(
                "optimizer".into(),
                json!({ "type": "SGD", "params": params }),
            );
        }
        None => out.not_written(
            &[
                ("optimizer.lr", o.lr.is_some()),
                ("optimizer.betas", o.betas.is_some()),
                ("optimizer.eps", o.eps.is_some()),
                ("optimizer.weight_decay", o.weight_decay.is_some()),
            ],
            "needs an optimizer type for its optimizer section; set optimizer.kind",
        ),
    }
    let s = &c.schedule;
    let kind = match s.kind {
        Some(ScheduleKind::Constant) => Some("WarmupLR"),
        Some(ScheduleKind::Linear) if s.total.is_some() => Some("WarmupDecayLR"),
        Some(ScheduleKind::Cosine) if s.total.is_some() => Some("WarmupCosineLR"),
        _ => None,
    };
    match kind {
        Some(kind) => {
            let mut params = Map::new();
            if let Some(w) = s.warmup {
                let v = out.span_in("schedule.warmup", "warmup_num_steps", w, UnitKind::Update)?;
                params.insert("warmup_num_steps".into(), json!(v));
            }
            if let (Some(t), false) = (s.total, kind == "WarmupLR") {
                let v = out.span_in("schedule.total", "total_num_steps", t, UnitKind::Update)?;
                params.insert("total_num_steps".into(), json!(v));
            }
            root.insert(
                "scheduler".into(),
                json!({ "type": kind, "params": params }),
            );
        }
        None => out.not_written(
            &[
                ("schedule.warmup", s.warmup.is_some()),
                ("schedule.total", s.total.is_some()),
            ],
            "needs a scheduler type (schedule.kind; linear and cosine also need schedule.total)",
        ),
    }
    if let Some(every) = c.log.every {
        let v = out.span_in("log.every", "steps_per_print", every, UnitKind::Update)?;
        root.insert("steps_per_print".into(), json!(v));
    }
    Ok(pretty(&Value::Object(root)))
}

/// DeepSpeed and Lightning divide each microbatch's loss by `A`: that is
/// the per-example mean of equal-size microbatches, and the per-token mean
/// only when every example has the same `L` tokens. A normalization the
/// config does not set is a note, not a refusal.
pub(crate) fn check_normalization(out: &mut Out, c: &PartialConfig) -> Result<(), ExportError> {
    let framework = out.framework;
    match c.loss.normalization {
        Some(Normalization::PerExample) => Ok(()),
        Some(Normalization::PerToken) if c.batch.seq_len.is_some() => Ok(()),
        Some(Normalization::PerToken) => Err(ExportError::Unsupported {
            framework,
            key: "loss.normalization",
            reason: format!(
                "{framework} divides each microbatch's loss by the accumulation steps, which is the per-token mean only with a fixed seq_len; set batch.seq_len, or normalize by the group's tokens in the model's loss and export per_example"
            ),
        }),
        Some(Normalization::Sum) => Err(ExportError::Unsupported {
            framework,
            key: "loss.normalization",
            reason: format!(
                "{framework} divides each microbatch's loss by the accumulation steps, so a summed loss is not possible; use per_example or per_token"
            ),
        }),
        None => {
            out.note(format!(
                "loss.normalization is not set: {framework} divides each microbatch's loss by the accumulation steps, so a per-token mean needs the model's loss to divide by the group's tokens"
            ));
            Ok(())
        }
    }
}
