//! Writing `TrainingArguments` JSON; the run is launched with
//! `batch.replicas` processes.

use accum_core::config::partial::PartialConfig;
use accum_core::plan::LastGroup;
use accum_core::settings::{Normalization, OptimizerKind, PrecisionMode};
use serde_json::{Map, Value, json};

use super::{AVG, GAS, MICRO};
use crate::interop::export::{Out, pretty};
use crate::interop::{ExportError, Framework};

pub(crate) fn export(c: &PartialConfig, out: &mut Out) -> Result<String, ExportError> {
    let plan = out.plan;
    out.require_data_parallel("the Trainer multiplies the batch by every process")?;
    out.check_last_group(
        c,
        &[LastGroup::Process],
        "always runs the partial group as one more update",
    )?;
    let mut root = Map::new();
    root.insert(MICRO.into(), json!(plan.micro_batch()));
    root.insert(GAS.into(), json!(plan.accumulation()));
    match c.loss.normalization {
        Some(Normalization::PerToken) => {
            root.insert(AVG.into(), json!(true));
        }
        Some(Normalization::PerExample) => {
            root.insert(AVG.into(), json!(false));
        }
        Some(Normalization::Sum) => {
            return Err(ExportError::Unsupported {
                framework: Framework::HuggingFace,
                key: "loss.normalization",
                reason: "the Trainer averages the loss (per token or per microbatch); a summed loss cannot be written".to_owned(),
            });
        }
        None => {}
    }
    match c.precision.mode {
        None | Some(PrecisionMode::Fp32) => {}
        Some(PrecisionMode::Bf16) => {
            root.insert("bf16".into(), json!(true));
        }
        Some(PrecisionMode::Fp16) => {
            root.insert("fp16".into(), json!(true));
            if c.precision.loss_scale.is_some() {
                out.note("precision.loss_scale not written: the Trainer's fp16 uses torch's GradScaler with its defaults");
            }
        }
    }
    let o = &c.optimizer;
    if let Some(clip) = o.clip_norm {
        root.insert("max_grad_norm".into(), json!(clip));
    }
    if let Some(lr) = o.lr {
        root.insert("learning_rate".into(), json!(lr));
    }
    if let Some(w) = o.weight_decay {
        root.insert("weight_decay".into(), json!(w));
    }
    if let Some([b1, b2]) = o.betas {
        root.insert("adam_beta1".into(), json!(b1));
        root.insert("adam_beta2".into(), json!(b2));
    }
    if let Some(e) = o.eps {
        root.insert("adam_epsilon".into(), json!(e));
    }
    match o.kind {
        Some(OptimizerKind::AdamW) => {
            root.insert("optim".into(), json!("adamw_torch"));
        }
        Some(OptimizerKind::Sgd) => {
            root.insert("optim".into(), json!("sgd"));
        }
        None => {}
    }
    if o.momentum.is_some() {
        out.note("optimizer.momentum not written: the Trainer has no argument for it");
    }
    out.trainer_schedule(c, &mut root, "lr_scheduler_type")?;
    out.note(format!(
        "launch {} processes (Accelerate's num_processes): the Trainer multiplies the batch by them",
        plan.replicas()
    ));
    Ok(pretty(&Value::Object(root)))
}
