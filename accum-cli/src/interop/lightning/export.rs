//! Writing a LightningCLI YAML file (with serde-saphyr): `trainer:`
//! arguments and `data.batch_size`. What the Trainer has no argument for
//! (warmup, learning rate) goes into the notes, for `configure_optimizers`.

use std::collections::BTreeMap;

use accum_core::config::partial::PartialConfig;
use accum_core::settings::PrecisionMode;
use accum_core::{UnitKind, group_digits};
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::ACC;
use crate::interop::ExportError;
use crate::interop::deepspeed::check_normalization;
use crate::interop::export::{Out, yaml};
use crate::interop::stages::ramp_in_samples;

pub(crate) fn export(c: &PartialConfig, out: &mut Out) -> Result<String, ExportError> {
    let plan = out.plan;
    out.require_data_parallel("devices × num_nodes counts every device")?;
    out.check_last_group(
        c,
        &[],
        "steps on the partial group but divides its loss by the full accumulation",
    )?;
    check_normalization(out, c)?;
    let scheduling = epoch_schedule(c, out)?;
    let mut trainer = Map::new();
    trainer.insert("devices".into(), json!(plan.replicas()));
    // With the scheduler, the Trainer's own factor stays 1 (it refuses another).
    if scheduling.is_empty() {
        trainer.insert(ACC.into(), json!(plan.accumulation()));
    }
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
    trainer_lengths(c, out, &mut trainer)?;
    if let Some(w) = c.schedule.warmup {
        let v = out.span_in("schedule.warmup", "warmup", w, UnitKind::Update)?;
        out.note(format!(
            "schedule.warmup = {w}: warm up for {v} optimizer steps in configure_optimizers (scheduler interval \"step\")"
        ));
    }
    optimizer_not_written(
        c,
        out,
        false,
        "builds the optimizer and scheduler in configure_optimizers",
    );
    let callbacks = if scheduling.is_empty() {
        Vec::new()
    } else {
        vec![Callback {
            class_path: "lightning.pytorch.callbacks.GradientAccumulationScheduler",
            init_args: SchedulerArgs { scheduling },
        }]
    };
    let root = Root {
        trainer: TrainerOut {
            args: trainer,
            callbacks,
        },
        data: json!({ "batch_size": plan.micro_batch() }),
    };
    let text = serde_saphyr::to_string(&root)
        .expect("a trainer of strings, numbers and tables always serializes");
    let stages = out
        .staged
        .stages()
        .iter()
        .map(|s| {
            format!(
                "{} × {} × {} = {}",
                plan.micro_batch(),
                s.plan().accumulation(),
                plan.replicas(),
                s.plan().effective_batch().get()
            )
        })
        .collect::<Vec<_>>()
        .join(", then ");
    Ok(format!("# B = m·A·D = {stages}\n{text}"))
}

/// LightningCLI's file: the trainer's arguments and its callbacks.
#[derive(Serialize)]
struct Root {
    trainer: TrainerOut,
    data: Value,
}

#[derive(Serialize)]
struct TrainerOut {
    #[serde(flatten)]
    args: Map<String, Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    callbacks: Vec<Callback>,
}

#[derive(Serialize)]
struct Callback {
    class_path: &'static str,
    init_args: SchedulerArgs,
}

/// `scheduling: {epoch: factor}`, with integer keys as the callback requires.
#[derive(Serialize)]
struct SchedulerArgs {
    scheduling: BTreeMap<u64, u64>,
}

/// The stages as `GradientAccumulationScheduler(scheduling={epoch: A})`:
/// Lightning changes the factor at epoch starts only
/// (`on_train_epoch_start`), and steps a partial group at each epoch's end,
/// so every stage must start at a whole epoch of `data.examples` and each
/// of its epochs must be whole updates. Empty for a constant batch.
fn epoch_schedule(c: &PartialConfig, out: &Out) -> Result<BTreeMap<u64, u64>, ExportError> {
    let staged = &out.staged;
    if staged.is_constant() {
        return Ok(BTreeMap::new());
    }
    let refuse = |reason: String| out.stages_refused(c, reason);
    let Some(examples) = c.data.examples.filter(|&e| e > 0) else {
        return Err(refuse(
            "Lightning changes the accumulation at epoch starts only, and the config does not say the examples per epoch: set data.examples".to_owned(),
        ));
    };
    let mut scheduling = BTreeMap::new();
    for (i, stage) in staged.stages().iter().enumerate() {
        let before = stage.examples_before().get();
        if !before.is_multiple_of(examples) {
            return Err(refuse(format!(
                "Lightning changes the accumulation at epoch starts only, and stage {} starts after {} examples, which is not a whole number of epochs of data.examples = {}; export to megatron (--step-batch-size-schedule), which changes the batch at any iteration",
                i + 1,
                group_digits(before),
                group_digits(examples)
            )));
        }
        let b = stage.plan().effective_batch().get();
        if stage.end().is_some() && !examples.is_multiple_of(b) {
            return Err(refuse(format!(
                "an epoch of {} examples is not whole updates of stage {}'s B = {}, and Lightning steps a partial group at every epoch's end with the loss still divided by the factor; use data.examples that is a multiple of {}",
                group_digits(examples),
                i + 1,
                group_digits(b),
                group_digits(b)
            )));
        }
        scheduling.insert(before / examples, stage.plan().accumulation());
    }
    Ok(scheduling)
}

/// Writes a NeMo Megatron config: the trainer's devices, precision and
/// lengths, and the batch in the model section (NeMo computes `A` from it).
pub(crate) fn export_nemo(c: &PartialConfig, out: &mut Out) -> Result<String, ExportError> {
    let plan = out.plan;
    out.check_last_group(
        c,
        &[accum_core::plan::LastGroup::Drop],
        "runs whole global batches only",
    )?;
    let layout = out.layout();
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
    trainer_lengths(c, out, &mut trainer)?;
    let mut model = Map::new();
    model.insert("micro_batch_size".into(), json!(plan.micro_batch()));
    model.insert(
        "global_batch_size".into(),
        json!(plan.effective_batch().get()),
    );
    for (key, degree) in out.parallel_degrees(
        c,
        [
            "tensor_model_parallel_size",
            "pipeline_model_parallel_size",
            "context_parallel_size",
        ],
    ) {
        model.insert(key.into(), json!(degree));
    }
    if let Some(l) = plan.seq_len() {
        model.insert("encoder_seq_length".into(), json!(l));
    }
    if !out.staged.is_constant() {
        let Some(ramp) = c.batch.ramp.and_then(|r| ramp_in_samples(&r, &out.staged)) else {
            return Err(out.stages_refused(c, "NeMo ramps the global batch only linearly, over samples (model.rampup_batch_size: [start, increment, samples]), and these stages are not such a ramp; export to megatron (--step-batch-size-schedule), which trains any stages".to_owned()));
        };
        model.insert(
            "rampup_batch_size".into(),
            json!([ramp.start, ramp.increment, ramp.over.value()]),
        );
        out.note("model.rampup_batch_size: NeMo leaves the first step after every start out of its count of samples and stops the run at each new global batch, so each stage runs one step longer than accum's plan");
    }
    optimizer_not_written(
        c,
        out,
        true,
        "keeps them in model.optim, which is not written",
    );
    let mut root = Map::new();
    root.insert("trainer".into(), Value::Object(trainer));
    root.insert("model".into(), Value::Object(model));
    Ok(yaml(&Value::Object(root)))
}

/// `schedule.total` and `log.every` as the Trainer's `max_steps` and
/// `log_every_n_steps`, in optimizer steps.
fn trainer_lengths(
    c: &PartialConfig,
    out: &Out,
    trainer: &mut Map<String, Value>,
) -> Result<(), ExportError> {
    out.insert_updates(
        trainer,
        &[
            ("schedule.total", c.schedule.total, "max_steps"),
            ("log.every", c.log.every, "log_every_n_steps"),
        ],
    )
}

/// The optimizer and schedule keys that the file does not carry (with the
/// warmup when `warmup` says it is not written either).
fn optimizer_not_written(c: &PartialConfig, out: &mut Out, warmup: bool, why: &str) {
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
            ("schedule.warmup", warmup && c.schedule.warmup.is_some()),
        ],
        why,
    );
}
