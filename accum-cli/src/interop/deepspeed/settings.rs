//! The keys of a DeepSpeed config other than the batch: precision,
//! clipping, optimizer, scheduler and print interval.

use accum_core::Code;
use accum_core::config::partial::{
    PartialConfig, PartialLog, PartialLossScale, PartialOptimizer, PartialPrecision,
    PartialSchedule,
};
use accum_core::settings::{OptimizerKind, PrecisionMode, ScheduleKind};
use accum_core::{Span, UnitKind};

use super::TrainerFill;
use crate::diagnostic::Diagnostic;
use crate::interop::reader::{Reader, owned};

/// The keys other than the batch: precision, clipping, optimizer, scheduler,
/// print interval; `"auto"` is the Trainer's value, or not carried.
pub(super) fn settings(r: &mut Reader, trainer: Option<&TrainerFill>) -> PartialConfig {
    let mut c = PartialConfig::default();
    // Precision (`accum::run::loss-scale`).
    let enabled = |r: &mut Reader, key: &str, hf: Option<bool>| -> bool {
        if r.is_auto(&[key, "enabled"]) {
            hf.unwrap_or(false)
        } else {
            r.truthy(&[key, "enabled"])
        }
    };
    let fp16 = enabled(r, "fp16", trainer.map(|t| t.fp16));
    let bf16 = enabled(r, "bf16", trainer.map(|t| t.bf16)) || r.truthy(&["bfloat16", "enabled"]);
    if fp16 && bf16 {
        let range = r.range_of(&["bf16"]);
        r.push(
            Diagnostic::error(
                Code::EngineAssert,
                owned(&["bf16", "enabled"]),
                "DeepSpeed would stop at start-up: \"bfloat16 and fp16 modes cannot be simultaneously enabled\"",
            )
            .help("enable one of them")
            .at(range, "second precision"),
        );
    }
    if fp16 {
        let static_scale = r.float(&["fp16", "loss_scale"]).map_or(0.0, |v| v.value);
        let loss_scale = if static_scale > 0.0 {
            PartialLossScale {
                init: Some(static_scale),
                growth_factor: Some(1.0),
                backoff_factor: None,
                growth_interval: None,
            }
        } else {
            PartialLossScale {
                init: r
                    .uint(&["fp16", "initial_scale_power"], 0)
                    .map(|v| 2f64.powi(i32::try_from(v.value.min(1000)).unwrap_or(1000))),
                growth_factor: None,
                backoff_factor: None,
                growth_interval: r.uint(&["fp16", "loss_scale_window"], 1).map(|v| v.value),
            }
        };
        c.precision = PartialPrecision {
            mode: Some(PrecisionMode::Fp16),
            loss_scale: (loss_scale != PartialLossScale::default()).then_some(loss_scale),
        };
    } else if bf16 {
        c.precision.mode = Some(PrecisionMode::Bf16);
    } else if r.has(&["fp16"]) || r.has(&["bf16"]) {
        c.precision.mode = Some(PrecisionMode::Fp32);
    }

    // Clipping: 0 is "no clipping" (DeepSpeed's engine clips only when > 0).
    c.optimizer.clip_norm = if r.is_auto(&["gradient_clipping"]) {
        trainer.map(|t| t.max_grad_norm)
    } else {
        r.float(&["gradient_clipping"]).map(|v| v.value)
    };

    // The optimizer. DeepSpeed's "Adam" runs in AdamW mode unless
    // adam_w_mode is false (deepspeed/runtime/engine.py,
    // DeepSpeedEngine._configure_basic_optimizer; ADAM_W_MODE_DEFAULT = True).
    if let Some(kind) = r.str(&["optimizer", "type"]) {
        let adam_w = r
            .bool(&["optimizer", "params", "adam_w_mode"])
            .is_none_or(|b| b.value);
        let known = match kind.value.to_ascii_lowercase().as_str() {
            "adamw" => Some(OptimizerKind::AdamW),
            "adam" if adam_w => Some(OptimizerKind::AdamW),
            // Other names are built from torch.optim (`_configure_basic_optimizer`).
            "sgd" if kind.value == "SGD" => Some(OptimizerKind::Sgd),
            _ => None,
        };
        match known {
            Some(k) => {
                let auto_lr = r.is_auto(&["optimizer", "params", "lr"]);
                c.optimizer = PartialOptimizer {
                    kind: Some(k),
                    lr: if auto_lr {
                        trainer.map(|t| t.lr)
                    } else {
                        r.float(&["optimizer", "params", "lr"]).map(|v| v.value)
                    },
                    betas: betas(r),
                    eps: (!r.is_auto(&["optimizer", "params", "eps"]))
                        .then(|| r.float(&["optimizer", "params", "eps"]).map(|v| v.value))
                        .flatten(),
                    weight_decay: (!r.is_auto(&["optimizer", "params", "weight_decay"]))
                        .then(|| {
                            r.float(&["optimizer", "params", "weight_decay"])
                                .map(|v| v.value)
                        })
                        .flatten(),
                    momentum: (k == OptimizerKind::Sgd)
                        .then(|| r.float(&["optimizer", "params", "momentum"]).map(|v| v.value))
                        .flatten(),
                    clip_norm: c.optimizer.clip_norm,
                };
            }
            None => r.push(
                Diagnostic::error(
                    Code::NotConverted,
                    owned(&["optimizer", "type"]),
                    format!(
                        "optimizer `{}` has no accum kind (adamw or sgd); the optimizer section is not carried over",
                        kind.value
                    ),
                )
                .warning()
                .help("this does not change the batch; set [optimizer] by hand if the run sheet needs it")
                .at(kind.range, "not converted"),
            ),
        }
    }

    // The scheduler steps once per update (at the accumulation boundary),
    // so its counts are updates (`accum::run::scheduler`).
    if let Some(kind) = r.str(&["scheduler", "type"]) {
        let known = match kind.value.as_str() {
            "WarmupLR" => Some(ScheduleKind::Constant),
            "WarmupDecayLR" => Some(ScheduleKind::Linear),
            "WarmupCosineLR" => Some(ScheduleKind::Cosine),
            _ => None,
        };
        let steps = |r: &mut Reader, key: &str, hf: Option<u64>| -> Option<Span> {
            if r.is_auto(&["scheduler", "params", key]) {
                hf.map(|v| Span::new(v, UnitKind::Update))
            } else {
                r.uint(&["scheduler", "params", key], 0)
                    .map(|v| Span::new(v.value, UnitKind::Update))
            }
        };
        match known {
            Some(k) => {
                c.schedule = PartialSchedule {
                    kind: Some(k),
                    warmup: steps(r, "warmup_num_steps", trainer.and_then(|t| t.warmup_steps)),
                    total: if k == ScheduleKind::Constant {
                        None
                    } else {
                        steps(r, "total_num_steps", trainer.and_then(|t| t.total_steps))
                            .filter(|s| s.value() > 0)
                    },
                };
            }
            None => r.push(
                Diagnostic::error(
                    Code::NotConverted,
                    owned(&["scheduler", "type"]),
                    format!(
                        "scheduler `{}` has no accum schedule kind (constant, linear or cosine); the schedule is not carried over",
                        kind.value
                    ),
                )
                .warning()
                .help("this does not change the batch; set [schedule] by hand if the run sheet needs it")
                .at(kind.range, "not converted"),
            ),
        }
    }
    if trainer.is_none() {
        c.log = PartialLog {
            every: r
                .uint(&["steps_per_print"], 1)
                .map(|v| Span::new(v.value, UnitKind::Update)),
            axis: None,
        };
    }
    c
}

fn betas(r: &mut Reader) -> Option<[f64; 2]> {
    let path = ["optimizer", "params", "betas"];
    if r.is_auto(&path) {
        return None;
    }
    let b0 = r.float(&["optimizer", "params", "betas", "0"])?;
    let b1 = r.float(&["optimizer", "params", "betas", "1"])?;
    Some([b0.value, b1.value])
}
