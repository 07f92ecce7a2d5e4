//! Writing a LightningCLI YAML file (with serde-saphyr): `trainer:`
//! arguments and `data.batch_size`. What the Trainer has no argument for
//! (warmup, learning rate) goes into the notes, for `configure_optimizers`.

use accum_core::UnitKind;
use accum_core::config::partial::PartialConfig;
use accum_core::settings::PrecisionMode;
use serde_json::{Map, Value, json};

use super::ACC;
use crate::interop::ExportError;
use crate::interop::deepspeed::check_normalization;
use crate::interop::export::{Out, yaml};

pub(crate) fn export(c: &PartialConfig, out: &mut Out) -> Result<String, ExportError> {
    let plan = out.plan;
    out.require_data_parallel("devices × num_nodes counts every device")?;
    out.check_last_group(
        c,
        &[],
        "steps on the partial group but divides its loss by the full accumulation",
    )?;
    check_normalization(out, c)?;
    let mut trainer = Map::new();
    trainer.insert("devices".into(), json!(plan.replicas()));
    trainer.insert(ACC.into(), json!(plan.accumulation()));
    match c.precision.mode {
        None => {}
        Some(PrecisionMode::Fp32) => {
            trainer.insert("precision".into(), json!("32-true"));
        }
        Some(PrecisionMode::Bf16) => {
            trainer.insert("precision".into(), json!("bf16-mixed"));
        }
        Some(PrecisionMode::Fp16) => {
            trainer.insert("precision".into(), json!("16-mixed"));
            if c.precision.loss_scale.is_some() {
                out.note("precision.loss_scale not written: \"16-mixed\" uses torch's GradScaler with its defaults");
            }
        }
    }
    if let Some(clip) = c.optimizer.clip_norm {
        trainer.insert("gradient_clip_val".into(), json!(clip));
        trainer.insert("gradient_clip_algorithm".into(), json!("norm"));
    }
    if let Some(t) = c.schedule.total {
        let v = out.span_in("schedule.total", "max_steps", t, UnitKind::Update)?;
        trainer.insert("max_steps".into(), json!(v));
    }
    if let Some(every) = c.log.every {
        let v = out.span_in("log.every", "log_every_n_steps", every, UnitKind::Update)?;
        trainer.insert("log_every_n_steps".into(), json!(v));
    }
    if let Some(w) = c.schedule.warmup {
        let v = out.span_in("schedule.warmup", "warmup", w, UnitKind::Update)?;
        out.note(format!(
            "schedule.warmup = {w}: warm up for {v} optimizer steps in configure_optimizers (scheduler interval \"step\")"
        ));
    }
    let o = &c.optimizer;
    out.not_written(
        &[
            ("optimizer.kind", o.kind.is_some()),
            ("optimizer.lr", o.lr.is_some()),
            ("optimizer.betas", o.betas.is_some()),
            ("optimizer.eps", o.eps.is_some()),
            ("optimizer.weight_decay", o.weight_decay.is_some()),
            ("optimizer.momentum", o.momentum.is_some()),
            ("schedule.kind", c.schedule.kind.is_some()),
        ],
        "builds the optimizer and scheduler in configure_optimizers",
    );
    let mut root = Map::new();
    root.insert("trainer".into(), Value::Object(trainer));
    root.insert("data".into(), json!({ "batch_size": plan.micro_batch() }));
    Ok(format!(
        "# B = m·A·D = {} × {} × {} = {}\n{}",
        plan.micro_batch(),
        plan.accumulation(),
        plan.replicas(),
        plan.effective_batch().get(),
        yaml(&Value::Object(root))
    ))
}

/// Writes a NeMo Megatron config: the trainer's devices, precision and
/// lengths, and the batch in the model section (NeMo computes `A` from it).
pub(crate) fn export_nemo(c: &PartialConfig, out: &mut Out) -> Result<String, ExportError> {
    let plan = out.plan;
    out.check_last_group(
        c,
        &[accum_core::LastGroup::Drop],
        "runs whole global batches only",
    )?;
    let layout = plan
        .layout()
        .unwrap_or(accum_core::Layout::data_parallel(plan.replicas()));
    let mut trainer = Map::new();
    trainer.insert("devices".into(), json!(layout.world_size));
    match c.precision.mode {
        None => {}
        Some(PrecisionMode::Fp32) => {
            trainer.insert("precision".into(), json!(32));
        }
        Some(PrecisionMode::Bf16) => {
            trainer.insert("precision".into(), json!("bf16"));
        }
        Some(PrecisionMode::Fp16) => {
            trainer.insert("precision".into(), json!(16));
        }
    }
    if let Some(clip) = c.optimizer.clip_norm {
        trainer.insert("gradient_clip_val".into(), json!(clip));
    }
    if let Some(t) = c.schedule.total {
        let v = out.span_in("schedule.total", "max_steps", t, UnitKind::Update)?;
        trainer.insert("max_steps".into(), json!(v));
    }
    if let Some(every) = c.log.every {
        let v = out.span_in("log.every", "log_every_n_steps", every, UnitKind::Update)?;
        trainer.insert("log_every_n_steps".into(), json!(v));
    }
    let mut model = Map::new();
    model.insert("micro_batch_size".into(), json!(plan.micro_batch()));
    model.insert(
        "global_batch_size".into(),
        json!(plan.effective_batch().get()),
    );
    let stated = c.parallel.as_ref();
    for (key, degree, given) in [
        (
            "tensor_model_parallel_size",
            layout.tensor,
            stated.and_then(|p| p.tensor),
        ),
        (
            "pipeline_model_parallel_size",
            layout.pipeline,
            stated.and_then(|p| p.pipeline),
        ),
        (
            "context_parallel_size",
            layout.context,
            stated.and_then(|p| p.context),
        ),
    ] {
        if degree > 1 || given.is_some() {
            model.insert(key.into(), json!(degree));
        }
    }
    if let Some(l) = plan.seq_len() {
        model.insert("encoder_seq_length".into(), json!(l));
    }
    let o = &c.optimizer;
    out.not_written(
        &[
            ("optimizer.kind", o.kind.is_some()),
            ("optimizer.lr", o.lr.is_some()),
            ("optimizer.betas", o.betas.is_some()),
            ("optimizer.eps", o.eps.is_some()),
            ("optimizer.weight_decay", o.weight_decay.is_some()),
            ("schedule.kind", c.schedule.kind.is_some()),
            ("schedule.warmup", c.schedule.warmup.is_some()),
        ],
        "keeps them in model.optim, which is not written",
    );
    let mut root = Map::new();
    root.insert("trainer".into(), Value::Object(trainer));
    root.insert("model".into(), Value::Object(model));
    Ok(yaml(&Value::Object(root)))
}
