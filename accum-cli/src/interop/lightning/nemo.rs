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

use std::ops::Range;

use accum_core::Code;
use accum_core::config::ParallelSection;
use accum_core::plan::{LastGroup, Layout, Plan, PlanInput};

use super::super::dialect::{FrameworkBatch, LastGroupRule, LossRule, plan_finding_in};
use super::super::megatron::{RAMP_REMOVED, linear_ramp};
use super::super::reader::{Reader, owned};
use super::super::stages::Staged;
use super::super::{BatchSchedule, ImportOptions};
use super::{ACC, Trainer, devices};
use crate::diagnostic::{Diagnostic, Severity};
use crate::source::NodeKind;

/// Whether a file states the batch of a NeMo Megatron model: in the model
/// section, or in the fine-tuning data section ([`batch_path`]).
pub(crate) fn has_batch(r: &Reader) -> bool {
    [MICRO, GLOBAL].iter().any(|key| {
        r.has(&["model", key])
            || r.has(&["model", "data", "train_ds", key])
            || r.has(&["data", "common", key])
    })
}

const MICRO: &str = "micro_batch_size";
const GLOBAL: &str = "global_batch_size";

/// Where the batch key `key` is read. NeMo's fine-tuning models run
/// Megatron's calculator with the training data's values:
/// `MegatronGPTSFTModel.on_train_epoch_start` reconfigures it
/// (`reconfigure_num_microbatches_calculator`, in `inference_epoch_end`)
/// with `cfg.data.train_ds.global_batch_size` and `micro_batch_size`, and
/// `build_data_loader` samples with them
/// (`nemo/collections/nlp/models/language_modeling/megatron_gpt_sft_model.py`);
/// the T5 fine-tuning script copies them into the model's batch
/// (`examples/nlp/language_modeling/megatron_t5_seq2seq_finetune.py`,
/// `_modify_config`).
/// A value there that only refers back to the model's (`${model.micro_batch_size}`,
/// as `tuning/conf/megatron_gpt_finetuning_config.yaml` writes it) is the
/// model's.
///
/// NeMo 2.0's recipes run from a YAML file keep the batch in `data.common`
/// and the parallelism in `strategy`: the speech-LLM pipeline builds its
/// data module on `cfg.data.common` (`nemo/collections/speechlm/data/audio_to_text_module.py`,
/// `AudioToTextDataModule.data_cfg`), whose `MegatronDataSampler` sets up
/// Megatron's calculator with those values
/// (`nemo/lightning/pytorch/plugins/data_sampler.py`, `setup`:
/// `setup_microbatch_calculator`), and its trainer's strategy from
/// `cfg.strategy` (`nemo/collections/speechlm/recipes/pipeline.py`,
/// `build_components`).
fn batch_path(r: &Reader, key: &'static str) -> Vec<&'static str> {
    let common = vec!["data", "common", key];
    if r.has(&common) {
        return common;
    }
    let data = vec!["model", "data", "train_ds", key];
    let model = vec!["model", key];
    match r.str(&data) {
        Some(s) if s.value.trim() == format!("${{model.{key}}}") => model,
        _ if r.has(&data) => data,
        _ => model,
    }
}

/// Whether two keys hold the same value once interpolations are resolved,
/// without reading either for the census.
fn same_value(r: &Reader, a: &[&str], b: &[&str]) -> bool {
    let value = |path: &[&str]| {
        let node = r.doc.node(&owned(path))?.clone();
        let interpolation = r.interpolation.clone().unwrap_or_default();
        super::super::interpolate::resolve(&r.doc, &interpolation, path, node)
            .ok()
            .map(|v| v.node.kind)
    };
    matches!((value(a), value(b)), (Some(x), Some(y)) if x == y)
}

pub(crate) fn read(r: &mut Reader, opts: &ImportOptions, t: &Trainer) -> Option<FrameworkBatch> {
    let root = r.range_of(&[]);
    let micro_path = batch_path(r, MICRO);
    let global_path = batch_path(r, GLOBAL);
    // The model's own keys, when the training data's are read instead, are
    // read too: NeMo replaces them by the data's.
    for key in [MICRO, GLOBAL] {
        let _ = r.has(&["model", key]);
    }
    // NeMo 2.0's training data that only repeats data.common's value
    // (`${data.common.global_batch_size}`) says nothing more; another
    // value is left to the census.
    if micro_path.first() == Some(&"data") {
        for key in [MICRO, GLOBAL] {
            let path = ["data", "train_ds", key];
            if same_value(r, &path, &["data", "common", key]) {
                let _ = r.has(&path);
            }
        }
    }
    let m = match r.uint(&micro_path, 1) {
        Some(v) => v.value,
        None => {
            if !r.has(&micro_path) {
                let range = r.range_of(&["model"]);
                let (micro, global) = (micro_path.join("."), global_path.join("."));
                r.push(
                    Diagnostic::error(
                        Code::Missing,
                        owned(&micro_path),
                        format!("{global} is set but {micro} is not; NeMo needs both"),
                    )
                    .help(format!("add {micro}"))
                    .at(range, "micro-batch needed"),
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
                Code::EngineAssert,
                acc.path.clone(),
                format!(
                    "NeMo would stop at start-up: \"Gradient accumulation is done within training_step. trainer.accumulate_grad_batches must equal 1\" ({ACC} is {})",
                    acc.value
                ),
            )
            .help("set trainer.accumulate_grad_batches to 1 and set the accumulation through model.global_batch_size")
            .at(acc.range.clone(), "must be 1 for NeMo's Megatron models"),
        );
    }
    let world = devices::world(r, opts, t)?;
    // NeMo 2.0's `strategy:` section (a `MegatronStrategy`), else the model's.
    let section = if r.is_table(&["strategy"]) && r.has(&["data", "common"]) {
        "strategy"
    } else {
        "model"
    };
    let degree = |r: &mut Reader, key: &'static str| -> Option<Option<u64>> {
        if r.has(&[section, key]) {
            r.uint(&[section, key], 1)
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
            r.push(plan_finding_in(
                crate::interop::Framework::NeMo,
                &r.doc,
                &err,
                owned(&[section, "tensor_model_parallel_size"]),
                root,
            ));
            return None;
        }
    };
    let global = match r.uint(&global_path, 1) {
        Some(g) => Some(g),
        None if r.has(&global_path) => return None,
        None => None,
    };
    let range = global.as_ref().map_or(root.clone(), |g| g.range.clone());
    let step = m.saturating_mul(replicas);
    if let Some(g) = &global
        && g.value % step != 0
    {
        r.push(
            Diagnostic::error(
                Code::EngineAssert,
                g.path.clone(),
                format!(
                    "NeMo would stop at start-up: Megatron's calculator asserts \"global batch size ({}) is not divisible by micro batch size ({m}) times data parallel size ({replicas})\"",
                    g.value
                ),
            )
            .help("see accum's nearest valid values below")
            .at(g.range.clone(), "not a multiple of micro × D"),
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
            r.push(plan_finding_in(
                crate::interop::Framework::NeMo,
                &r.doc,
                &err,
                owned(&global_path),
                range,
            ));
            return None;
        }
    };
    let (schedule, staged) = rampup(r, &plan)?;
    let settings = super::settings(r, t, 1);
    let step_lengths = super::step_lengths(r, t, &settings);
    Some(FrameworkBatch {
        loss: LossRule::MicrobatchMean(
            Diagnostic::error(
                Code::PerToken,
                owned(&["model", "global_batch_size"]),
                format!(
                    "NeMo's Megatron models average each microbatch over its own tokens and then the {} microbatches: with variable lengths that is a mean of means, not the per-token mean of the group",
                    plan.accumulation()
                ),
            )
            .help("normalize by the tokens of the whole global batch in the model's loss")
            .at(range.clone(), "per-microbatch mean"),
        ),
        last_group: LastGroupRule {
            policy: LastGroup::Drop,
            severity: Severity::Warning,
            behaviour: "NeMo's Megatron samplers run whole global batches only (drop_last), so the leftover examples are not used".to_owned(),
            help: "accept the drop, or size the data to whole global batches".to_owned(),
            range,
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
        staged,
        step_lengths,
    })
}

/// `model.rampup_batch_size: [start, increment, samples]`. NeMo hands it to
/// Megatron's calculator unchanged: `MegatronBaseModel.__init__`
/// (`megatron_base_model.py`) passes `cfg.rampup_batch_size` to
/// `initialize_model_parallel_for_nemo`
/// (`nemo/collections/nlp/modules/common/megatron/megatron_init.py`), which
/// calls Megatron core's `init_num_microbatches_calculator` with it, so the
/// ramp is imported as Megatron's, with its checks. `None` when the
/// calculator refuses it at start-up.
fn rampup(r: &mut Reader, plan: &Plan) -> Option<(Option<BatchSchedule>, Option<Staged>)> {
    let path = ["model", "rampup_batch_size"];
    if !r.has(&path) {
        return Some((None, None));
    }
    let key = "model.rampup_batch_size";
    let range = r.range_of(&path);
    // Megatron's calculator stops NeMo at start-up.
    let stop = |r: &mut Reader, at: &[&str], why: &str, label: &str| {
        let range = r.range_of(at);
        r.push(
            Diagnostic::error(
                Code::EngineAssert,
                owned(at),
                format!("NeMo would stop at start-up: Megatron's calculator {why}"),
            )
            .help("write model.rampup_batch_size: [START, INCREMENT, SAMPLES], or null for a constant batch")
            .at(range, label),
        );
    };
    let three = matches!(&r.node(&path).map(|n| &n.kind), Some(NodeKind::Array(v)) if v.len() == 3);
    if !three {
        stop(
            r,
            &path,
            "asserts \"expected the following format: --rampup-batch-size <start batch size> <batch size incerement> <ramp-up samples>\" (a list of three numbers)",
            "3 values needed",
        );
        return None;
    }
    let mut values = [0u64; 3];
    for (i, value) in values.iter_mut().enumerate() {
        let i = i.to_string();
        let at = ["model", "rampup_batch_size", i.as_str()];
        // `uint` refuses what is not a whole number, but passes over a null:
        // Megatron core's `_build_num_microbatches_calculator`
        // (num_microbatches_calculator.py) takes `int(rampup_batch_size[i])`,
        // which fails on `None`.
        if matches!(r.node(&at).map(|n| &n.kind), Some(NodeKind::Null)) {
            stop(
                r,
                &at,
                "takes int() of each value of model.rampup_batch_size, and this one is null",
                "a number needed",
            );
            return None;
        }
        *value = r.uint(&at, 0)?.value;
    }
    let [start, increment, samples] = values;
    let schedule = BatchSchedule::Ramp {
        start,
        increment,
        samples,
        end: plan.effective_batch().get(),
    };
    match linear_ramp(plan, values, key, owned(&path), range.clone(), "NeMo") {
        Ok(staged) => {
            r.push(version(range.clone()));
            r.push(restarts(range, start));
            Some((Some(schedule), Some(staged)))
        }
        Err(refused) => {
            r.push(*refused.finding);
            (!refused.at_start).then_some((Some(schedule), None))
        }
    }
}

/// `version`: current NeMo and Megatron-LM do not run this ramp-up.
fn version(range: Range<usize>) -> Diagnostic {
    Diagnostic::error(
        Code::Version,
        owned(&["model", "rampup_batch_size"]),
        format!(
            "model.rampup_batch_size runs in some versions only: NeMo's GPT model (megatron_gpt_model.py, MegatronGPTModel.training_step) updates the ramp with `num_microbatch_calculator.update(…)`, a name it no longer defines since NeMo commit c277b9a698 (August 2024), so those versions stop with a NameError after the first step; and Megatron core since {} ignores rampup_batch_size; the ramp imported here is the one earlier versions run",
            RAMP_REMOVED
        ),
    )
    .warning()
    .help("check the NeMo and Megatron core versions of the run; with current Megatron-LM, write the stages as --step-batch-size-schedule (`accum export megatron`)")
    .at(range, "depends on the NeMo and Megatron core versions")
}

/// `ramp-restarts`: NeMo's own count of consumed samples and its stops.
fn restarts(range: Range<usize>, start: u64) -> Diagnostic {
    Diagnostic::error(
        Code::RampRestarts,
        owned(&["model", "rampup_batch_size"]),
        format!(
            "NeMo counts the samples it feeds the calculator itself, leaving out the first step after every start (megatron_base_model.py, compute_consumed_samples: prev_consumed_samples + if_first_step × current global batch), so its ramp runs one step of {start} samples later than the calculator's rule imported here; and it stops the run at the first step of every new global batch (trainer.should_stop, to validate and save a checkpoint), so the ramp runs as a series of resumed runs (NeMo's guide, rampup_batch_size.rst, has each stage started anew, possibly on more nodes), each again leaving its first step out of the count"
        ),
    )
    .warning()
    .help("expect each stage to last one step longer than accum's plan, and resume the run after each stop; Megatron-LM counts every sample")
    .at(range, "counted and run by NeMo")
}
