//! NeMo's Megatron models: `model.micro_batch_size`,
//! `model.global_batch_size` and the model-parallel degrees in the model
//! section. NeMo hands them to Megatron's microbatch calculator
//! (`nemo/collections/nlp/models/language_modeling/megatron_base_model.py`,
//! `MegatronBaseModel.__init__` → `initialize_model_parallel_for_nemo`), which
//! computes `A = global / (micro × D)` and asserts the division is exact;
//! gradient accumulation happens inside the training step, and
//! `trainer.accumulate_grad_batches` must be 1
//! (`megatron_gpt_model.py`: "Gradient accumulation is done within
//! training_step. trainer.accumulate_grad_batches must equal 1").

use accum_core::config::ParallelSection;
use accum_core::{LastGroup, Layout, PlanInput};

use super::super::dialect::{Batch, LastGroupRule, LossRule, plan_finding};
use super::super::reader::{Reader, owned};
use super::super::{BatchSchedule, ImportOptions, codes};
use super::{ACC, Trainer, devices};
use crate::diagnostic::{Diagnostic, Severity};

pub(crate) fn read(r: &mut Reader, opts: &ImportOptions, t: &Trainer) -> Option<Batch> {
    let root = r.span(&[]);
    let m = match r.uint(&["model", "micro_batch_size"], 1) {
        Some(v) => v.value,
        None => {
            if !r.has(&["model", "micro_batch_size"]) {
                let span = r.span(&["model"]);
                r.push(
                    Diagnostic::error(
                        codes::MISSING,
                        owned(&["model", "micro_batch_size"]),
                        "model.global_batch_size is set but model.micro_batch_size is not; NeMo needs both",
                    )
                    .help("add model.micro_batch_size")
                    .at(span, "micro-batch needed"),
                );
            }
            return None;
        }
    };
    if let Some(acc) = r.uint(&t.path(ACC), 1)
        && acc.value > 1
    {
        r.push(
            Diagnostic::error(
                codes::ENGINE_ASSERT,
                acc.path.clone(),
                format!(
                    "NeMo would stop at start-up: \"Gradient accumulation is done within training_step. trainer.accumulate_grad_batches must equal 1\" ({ACC} is {})",
                    acc.value
                ),
            )
            .help("set trainer.accumulate_grad_batches to 1 and set the accumulation through model.global_batch_size")
            .at(acc.span.clone(), "must be 1 for NeMo's Megatron models"),
        );
    }
    let world = devices::world(r, opts, t)?;
    let degree = |r: &mut Reader, key: &'static str| -> Option<Option<u64>> {
        if r.has(&["model", key]) {
            r.uint(&["model", key], 1)
                .map(Some)
                .map(|v| v.map(|x| x.value))
        } else {
            Some(None)
        }
    };
    let tp = degree(r, "tensor_model_parallel_size")?;
    let pp = degree(r, "pipeline_model_parallel_size")?;
    let cp = degree(r, "context_parallel_size")?;
    let layout = Layout::new(world, tp.unwrap_or(1), pp.unwrap_or(1), cp.unwrap_or(1));
    let replicas = match layout.replicas() {
        Ok(d) => d,
        Err(err) => {
            r.push(plan_finding(
                &err,
                owned(&["model", "tensor_model_parallel_size"]),
                root,
            ));
            return None;
        }
    };
    let global = match r.uint(&["model", "global_batch_size"], 1) {
        Some(g) => Some(g),
        None if r.has(&["model", "global_batch_size"]) => return None,
        None => None,
    };
    let span = global.as_ref().map_or(root.clone(), |g| g.span.clone());
    let step = m.saturating_mul(replicas);
    if let Some(g) = &global
        && g.value % step != 0
    {
        r.push(
            Diagnostic::error(
                codes::ENGINE_ASSERT,
                g.path.clone(),
                format!(
                    "NeMo would stop at start-up: Megatron's calculator asserts \"global batch size ({}) is not divisible by micro batch size ({m}) times data parallel size ({replicas})\"",
                    g.value
                ),
            )
            .help("see accum's nearest valid values below")
            .at(g.span.clone(), "not a multiple of micro × D"),
        );
    }
    let plan = match (PlanInput {
        micro_batch: Some(m),
        accumulation: if global.is_none() { Some(1) } else { None },
        replicas: None,
        layout: Some(layout),
        seq_len: r
            .uint(&["model", "encoder_seq_length"], 1)
            .map(|v| v.value)
            .or(opts.seq_len),
        global_batch: global.as_ref().map(|g| g.value),
    })
    .resolve()
    {
        Ok(plan) => plan,
        Err(err) => {
            r.push(plan_finding(
                &err,
                owned(&["model", "global_batch_size"]),
                span,
            ));
            return None;
        }
    };
    let schedule = rampup(r, &plan);
    let settings = super::settings(r, t, 1);
    Some(Batch {
        loss: LossRule::MicrobatchMean(
            Diagnostic::error(
                codes::PER_TOKEN,
                owned(&["model", "global_batch_size"]),
                format!(
                    "NeMo's Megatron models average each microbatch over its own tokens and then the {} microbatches: with variable lengths that is a mean of means, not the per-token mean of the group",
                    plan.accumulation()
                ),
            )
            .help("normalize by the tokens of the whole global batch in the model's loss")
            .at(span.clone(), "per-microbatch mean"),
        ),
        last_group: LastGroupRule {
            policy: LastGroup::Drop,
            severity: Severity::Warning,
            behaviour: "NeMo's Megatron samplers run whole global batches only (drop_last), so the leftover examples are not used".to_owned(),
            help: "accept the drop, or size the data to whole global batches".to_owned(),
            span,
        },
        plan,
        parallel: Some(ParallelSection {
            world_size: world,
            tensor: tp,
            pipeline: pp,
            context: cp,
        }),
        settings,
        schedule,
    })
}

/// `model.rampup_batch_size: [start, increment, samples]`: Megatron's ramp-up,
/// kept for planning in stages.
fn rampup(r: &mut Reader, plan: &accum_core::Plan) -> Option<BatchSchedule> {
    let path = ["model", "rampup_batch_size"];
    if !r.has(&path) {
        return None;
    }
    let v: Vec<u64> = (0..3)
        .filter_map(|i| {
            let i = i.to_string();
            r.uint(&["model", "rampup_batch_size", i.as_str()], 0)
                .map(|v| v.value)
        })
        .collect();
    let [start, increment, samples] = v[..] else {
        return None;
    };
    let span = r.span(&path);
    r.push(
        Diagnostic::error(
            codes::SCHEDULE_SHIFT,
            owned(&path),
            format!(
                "model.rampup_batch_size ramps the global batch from {start} to {}, so trainer.max_steps and the warmup (optimizer steps) cover iterations of different sizes",
                plan.effective_batch().get()
            ),
        )
        .warning()
        .help("count the run in samples, or plan the ramp in stages; accum's plan uses the final global batch")
        .at(span, "batch size changes"),
    );
    Some(BatchSchedule::Ramp {
        start,
        increment,
        samples,
        end: plan.effective_batch().get(),
    })
}
