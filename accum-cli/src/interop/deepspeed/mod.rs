//! DeepSpeed's configuration: `train_batch_size`,
//! `train_micro_batch_size_per_gpu`, `gradient_accumulation_steps`,
//! `fp16`/`bf16`, `gradient_clipping`, `optimizer`, `scheduler`,
//! `steps_per_print`.
//!
//! DeepSpeed reads the file with `hjson.load` (comments allowed), fills a
//! missing batch value with floor divisions and asserts
//! `train_batch_size == micro × gas × world_size`
//! (`deepspeed/runtime/config.py`, `DeepSpeedConfig.__init__`,
//! `_set_batch_related_parameters`, `_batch_assertion`); [`fill`] reproduces
//! that arithmetic. DeepSpeed's `world_size` is the data-parallel size when a
//! model-parallel unit is passed to `deepspeed.initialize` or the model is a
//! `PipelineModule` (whose grid is the unit), else every rank, divided by
//! `sequence_parallel_size` when the config sets it (same function).
//!
//! Under the Hugging Face Trainer, `"auto"` values are filled from
//! `TrainingArguments` and numbers must match them (see [`TrainerFill`]).

mod export;
mod fill;
mod neox;
mod settings;

use crate::source::YamlLoader;
use accum_core::config::ParallelSection;
use accum_core::config::partial::PartialConfig;
use accum_core::plan::{LastGroup, Plan, PlanInput};
use accum_core::{Code, FieldPath};

pub(crate) use export::{check_normalization, export};
use fill::{FillFailure, GAS, fill};
pub(crate) use fill::{MICRO, TRAIN_BATCH};

use super::dialect::{
    Dialect, FrameworkBatch, LastGroupRule, LossRule, Reading, layout_of, plan_finding_in,
};
use super::reader::{At, Reader, owned};
use super::{Framework, ImportError, ImportOptions};
use crate::diagnostic::{Diagnostic, Severity};

/// The DeepSpeed dialect.
pub(crate) struct DeepSpeed;

impl Dialect for DeepSpeed {
    const FRAMEWORK: Framework = Framework::DeepSpeed;

    fn read(name: &str, text: &str, opts: &ImportOptions) -> Result<Reading, ImportError> {
        // gpt-neox keeps its DeepSpeed settings in YAML files it loads with
        // `yaml.load` (`megatron/neox_arguments/arguments.py`,
        // `NeoXArgs.from_ymls`); a `.yml` name or a file that is not JSON is
        // read as YAML, with `955_000` a number as PyYAML reads it.
        let yaml = !super::reader::looks_like_json(name, text);
        let mut r = Reader::parse(name, text, yaml.then_some(YamlLoader::PyYaml11))?;
        if yaml {
            r.strings_are_numbers = true;
            neox::dashes_to_underscores(&mut r);
        }
        let root = r.range_of(&[]);
        let given = super::dialect::world_from_options(opts);
        let world = match (neox::global_num_gpus(&mut r), given) {
            (Some(g), Some(w)) if g.value != w => {
                r.push(
                    Diagnostic::error(
                        Code::InteropWorldSize,
                        g.path.clone(),
                        format!("the file's global_num_gpus is {}, but the world size given is {w}; gpt-neox divides by the file's count", g.value),
                    )
                    .warning()
                    .help("make them agree, or remove global_num_gpus so that gpt-neox counts the GPUs of the launch")
                    .at(g.range.clone(), "the GPUs gpt-neox divides"),
                );
                Some(g.value)
            }
            (Some(g), _) => Some(g.value),
            (None, w) => w,
        };
        let Some(world) = world else {
            r.push(
                Diagnostic::error(
                    Code::Missing,
                    vec![],
                    "the world size is not in a DeepSpeed config: DeepSpeed takes it from the launcher",
                )
                .help("give the launcher's world size (--world-size N)")
                .at(root, "world size needed"),
            );
            return Ok(Reading {
                files: vec![r.into_report()],
                batch: None,
            });
        };
        let read = read_config(&mut r, world, opts, None);
        let batch = read.map(|ds| {
            let range = r.range_of(&[GAS]);
            FrameworkBatch {
                loss: LossRule::MicrobatchMean(loss_finding(ds.plan.accumulation(), range.clone())),
                last_group: last_group_rule(&mut r, &ds.plan, range),
                plan: ds.plan,
                parallel: ds.parallel,
                settings: ds.settings,
                schedule: None,
                staged: None,
                step_lengths: Vec::new(),
            }
        });
        Ok(Reading {
            files: vec![r.into_report()],
            batch,
        })
    }
}

/// What the Hugging Face Trainer puts into a DeepSpeed config:
/// `HfTrainerDeepSpeedConfig.trainer_config_process` and
/// `trainer_config_finalize` (`transformers/integrations/deepspeed.py`)
/// replace `"auto"` with these values, and `fill_match` records every number
/// that differs; the Trainer then raises "Please correct the following
/// DeepSpeed config values that mismatch TrainingArguments values".
pub(crate) struct TrainerFill {
    /// `per_device_train_batch_size`.
    pub(crate) micro: u64,
    /// `gradient_accumulation_steps`.
    pub(crate) gas: u64,
    /// `args.world_size`: every process.
    pub(crate) world: u64,
    /// `max_grad_norm`.
    pub(crate) max_grad_norm: f64,
    /// `learning_rate`.
    pub(crate) lr: f64,
    /// `fp16` (with the amp backend).
    pub(crate) fp16: bool,
    /// `bf16`.
    pub(crate) bf16: bool,
    /// The Trainer's number of training steps, when `max_steps` says it.
    pub(crate) total_steps: Option<u64>,
    /// `args.get_warmup_steps(total)`, when known.
    pub(crate) warmup_steps: Option<u64>,
    /// `auto_find_batch_size`: the micro-batch and batch keys need not match.
    pub(crate) auto_find_batch_size: bool,
}

/// A DeepSpeed config as read: the batch and the other keys it states.
pub(crate) struct DsConfig {
    pub(crate) plan: Plan,
    pub(crate) parallel: Option<ParallelSection>,
    pub(crate) settings: PartialConfig,
}

/// Reads a DeepSpeed config for a job of `world` ranks; with `trainer`, as
/// the Hugging Face Trainer fills and checks it. `None` when DeepSpeed (or
/// the Trainer) has no batch to train with; the findings say why.
pub(crate) fn read_config(
    r: &mut Reader,
    world: u64,
    opts: &ImportOptions,
    trainer: Option<&TrainerFill>,
) -> Option<DsConfig> {
    let root = r.range_of(&[]);
    let mut mismatches: Vec<String> = Vec::new();
    let mut mismatch_ranges = Vec::new();

    // The three batch keys, with "auto" filled by the Trainer when there is one.
    let mut batch_key = |r: &mut Reader, key: &'static str| -> Result<Option<At<u64>>, ()> {
        let filled = trainer.map(|t| match key {
            TRAIN_BATCH => (
                t.world.saturating_mul(t.micro).saturating_mul(t.gas),
                "train_batch_size (calculated)",
                !t.auto_find_batch_size,
            ),
            MICRO => (
                t.micro,
                "per_device_train_batch_size",
                !t.auto_find_batch_size,
            ),
            _ => (t.gas, "gradient_accumulation_steps", true),
        });
        if r.is_auto(&[key]) {
            return match filled {
                Some((value, _, _)) => Ok(Some(At {
                    value,
                    range: r.range_of(&[key]),
                    path: owned(&[key]),
                })),
                None => {
                    let range = r.range_of(&[key]);
                    r.push(
                        Diagnostic::error(
                            Code::Auto,
                            owned(&[key]),
                            format!("`{key}` is \"auto\": the Hugging Face Trainer fills it from its arguments, so this file alone does not fix the batch"),
                        )
                        .help("import the Trainer's arguments with `accum import hf ARGS` (their `deepspeed:` names this file, or give it with --deepspeed-config), or write the number")
                        .at(range, "filled in by the Trainer"),
                    );
                    Err(())
                }
            };
        }
        let unreadable = r.has(&[key]);
        let value = r.uint(&[key], 0);
        if value.is_none() && unreadable {
            return Err(());
        }
        if let (Some(v), Some((hf, hf_key, must_match))) = (&value, filled)
            && must_match
            && v.value != hf
        {
            mismatches.push(format!("- ds {key}={} vs hf {hf_key}={hf}", v.value));
            mismatch_ranges.push((v.range.clone(), key));
        }
        Ok(value)
    };
    let tb = batch_key(r, TRAIN_BATCH);
    let mb = batch_key(r, MICRO);
    let gas = batch_key(r, GAS);
    let (Ok(tb), Ok(mb), Ok(mut gas_v)) = (tb, mb, gas) else {
        return None;
    };
    let neox = if trainer.is_none() {
        neox::degrees(r)?
    } else {
        None
    };
    if let Some(n) = &neox
        && gas_v.is_none()
    {
        gas_v = Some(n.default_gas(&root));
    }
    if trainer.is_some() && gas_v.is_none() {
        // Accelerate sets a missing gradient_accumulation_steps to 1
        // (accelerate/utils/dataclasses.py, DeepSpeedPlugin.__post_init__).
        gas_v = Some(At {
            value: 1,
            range: root.clone(),
            path: owned(&[GAS]),
        });
        if let Some(t) = trainer
            && t.gas > 1
        {
            r.push(
                Diagnostic::error(
                    Code::InteropValue,
                    owned(&[GAS]),
                    format!(
                        "the file has no gradient_accumulation_steps, so Accelerate sets DeepSpeed's to 1, not the Trainer's {}",
                        t.gas
                    ),
                )
                .warning()
                .help("write \"gradient_accumulation_steps\": \"auto\" so that DeepSpeed uses the Trainer's value")
                .at(root.clone(), "accumulation set to 1 by Accelerate"),
            );
        }
    }

    // The world DeepSpeed divides by, and the true replicas D (`accum::plan::global-batch`).
    let sp = r.uint(&["sequence_parallel_size"], 1);
    let tp = neox.as_ref().map_or(opts.tensor.unwrap_or(1), |n| n.model);
    let pp = neox.as_ref().map_or(opts.pipeline.unwrap_or(1), |n| n.pipe);
    let cp = opts.context.or(sp.as_ref().map(|s| s.value)).unwrap_or(1);
    let (layout, replicas) = layout_of(r, world, [tp, pp, cp], &root)?;
    // gpt-neox hands DeepSpeed its data-parallel world in every case: a
    // `PipelineModule` when pipe_parallel_size >= 1, the mpu otherwise.
    let pipeline_module = pp > 1 || neox.is_some();
    if pp > 1 && neox.is_none() && opts.deepspeed_mpu {
        // deepspeed/__init__.py, initialize(): a PipelineModule brings its
        // own grid as the mpu.
        r.push(
            Diagnostic::error(
                Code::EngineAssert,
                vec![],
                "DeepSpeed would stop at start-up: \"mpu must be None with pipeline parallelism\" (a PipelineModule brings its own model-parallel grid)",
            )
            .help("do not pass mpu to deepspeed.initialize with a PipelineModule; DeepSpeed then divides by the pipeline grid's data-parallel size")
            .at(root.clone(), "pipeline parallel"),
        );
    }
    let ds_world = if opts.deepspeed_mpu || pipeline_module {
        replicas
    } else if let Some(sp) = &sp {
        if !world.is_multiple_of(sp.value) {
            r.push(
                Diagnostic::error(
                    Code::Layout,
                    sp.path.clone(),
                    format!(
                        "world_size {world} is not divisible by sequence_parallel_size {}: DeepSpeed's world_size {world} / {} is not a whole number of replicas",
                        sp.value, sp.value
                    ),
                )
                .help("use a sequence_parallel_size that divides the world size")
                .at(sp.range.clone(), "does not divide the world size"),
            );
        }
        world / sp.value
    } else {
        world
    };
    if (tp > 1 || opts.context.is_some_and(|c| c > 1))
        && !opts.deepspeed_mpu
        && !pipeline_module
        && ds_world != replicas
    {
        r.push(
            Diagnostic::error(
                Code::ModelParallelReplicas,
                owned(&[TRAIN_BATCH]),
                format!(
                    "without a model-parallel unit DeepSpeed divides by {ds_world} ranks, but only D = {world} / (tensor {tp} × pipeline {pp} × context {cp}) = {replicas} are data-parallel replicas: devices that share one model copy are counted as replicas"
                ),
            )
            .help("pass the model-parallel unit (mpu) to deepspeed.initialize so that DeepSpeed uses the data-parallel size")
            .at(r.range_of(&[TRAIN_BATCH]), "checked against all ranks"),
        );
    }

    // The Trainer's mismatches stop it before DeepSpeed starts.
    if let Some(t) = trainer {
        let clip = (!r.is_auto(&["gradient_clipping"]))
            .then(|| r.float(&["gradient_clipping"]))
            .flatten();
        if let Some(c) = &clip
            && c.value != t.max_grad_norm
        {
            mismatches.push(format!(
                "- ds gradient_clipping={} vs hf max_grad_norm={}",
                c.value, t.max_grad_norm
            ));
            mismatch_ranges.push((c.range.clone(), "gradient_clipping"));
        }
        if !r.is_auto(&["optimizer", "params", "lr"])
            && let Some(lr) = r.float(&["optimizer", "params", "lr"])
            && lr.value != t.lr
        {
            mismatches.push(format!(
                "- ds optimizer.params.lr={} vs hf learning_rate={}",
                lr.value, t.lr
            ));
            mismatch_ranges.push((lr.range.clone(), "optimizer.params.lr"));
        }
        for (key, hf, hf_key) in [
            ("fp16", t.fp16, "fp16|fp16_full_eval+fp16_backend(amp)"),
            ("bf16", t.bf16, "bf16|bf16_full_eval"),
        ] {
            if !r.is_auto(&[key, "enabled"])
                && let Some(v) = r.bool(&[key, "enabled"])
                && v.value != hf
            {
                mismatches.push(format!(
                    "- ds {key}.enabled={} vs hf {hf_key}={}",
                    py_bool(v.value),
                    py_bool(hf)
                ));
                mismatch_ranges.push((v.range.clone(), key));
            }
        }
        if let Some((range, key)) = mismatch_ranges.first().cloned() {
            let mut f = Diagnostic::error(
                Code::EngineAssert,
                owned(&[key]),
                format!(
                    "the Trainer would stop at start-up: \"Please correct the following DeepSpeed config values that mismatch TrainingArguments values: {}\"",
                    mismatches.join(" ")
                ),
            )
            .help("set these DeepSpeed values to \"auto\", or to the Trainer's values")
            .at(range, "differs from TrainingArguments");
            for (range, key) in mismatch_ranges.iter().skip(1) {
                f = f.also(FieldPath::parse(key), range.clone(), "differs too");
            }
            r.push(f);
        }
        let stopped = !mismatch_ranges.is_empty();
        if !r.has(&["zero_optimization"]) {
            // accelerate/utils/dataclasses.py, DeepSpeedPlugin.__post_init__.
            r.push(
                Diagnostic::error(
                    Code::EngineAssert,
                    owned(&["zero_optimization"]),
                    "Accelerate would stop at start-up: \"Please specify the ZeRO optimization config in the DeepSpeed config.\"",
                )
                .help("add a zero_optimization section, e.g. \"zero_optimization\": {\"stage\": 0}")
                .at(root.clone(), "no zero_optimization"),
            );
        }
        if stopped {
            // The Trainer stops before DeepSpeed checks anything.
            return None;
        }
    }

    // DeepSpeed's own arithmetic, with its numbers.
    let f = fill(
        tb.as_ref().map(|v| v.value),
        mb.as_ref().map(|v| v.value),
        gas_v.as_ref().map(|v| v.value),
        ds_world,
    );
    let anchor = tb
        .as_ref()
        .or(mb.as_ref())
        .or(gas_v.as_ref())
        .map_or_else(|| root.clone(), |v| v.range.clone());
    if f.floored {
        let sets = f
            .filled
            .iter()
            .map(|(k, how)| format!("{k} = {how}"))
            .collect::<Vec<_>>()
            .join(" and ");
        let b = tb.as_ref().map_or(0, |v| v.value);
        let (other_key, other) = match (&mb, &gas_v) {
            (Some(m), _) => (MICRO, m.value),
            (None, Some(g)) => (GAS, g.value),
            (None, None) => (GAS, 1),
        };
        let divisor = other.saturating_mul(ds_world).max(1);
        r.push(
            Diagnostic::error(
                Code::Rounds,
                owned(&[f.filled.first().map_or(TRAIN_BATCH, |(k, _)| k)]),
                format!(
                    "DeepSpeed would floor: it sets {sets}, where {b} / ({other_key} {other} × world_size {ds_world}) = {}",
                    b as f64 / divisor as f64
                ),
            )
            .help("give values that divide exactly")
            .at(anchor.clone(), "floored by DeepSpeed"),
        );
    }
    if let Some(message) = f.engine_message(ds_world) {
        let help = match f.failure {
            Some(FillFailure::NeitherGiven) => {
                "give train_batch_size or train_micro_batch_size_per_gpu".to_owned()
            }
            _ => format!(
                "DeepSpeed needs train_batch_size = train_micro_batch_size_per_gpu × gradient_accumulation_steps × {ds_world} (its world_size), each at least 1"
            ),
        };
        r.push(
            Diagnostic::error(
                Code::EngineAssert,
                owned(&[TRAIN_BATCH]),
                format!("DeepSpeed would stop at start-up: \"{message}\""),
            )
            .help(help)
            .at(anchor.clone(), "DeepSpeed's check fails"),
        );
    }

    // accum's exact plan from the same values (DeepSpeed's default gas = 1
    // applies when neither gas nor the micro-batch can be solved otherwise).
    let (m_in, a_in) = match (&tb, &mb, &gas_v) {
        (Some(_), None, None) | (None, Some(_), None) => (mb.as_ref().map(|v| v.value), Some(1)),
        _ => (
            mb.as_ref().map(|v| v.value),
            gas_v.as_ref().map(|v| v.value),
        ),
    };
    let input = PlanInput {
        micro_batch: m_in,
        accumulation: a_in,
        replicas: Some(replicas),
        layout: None,
        seq_len: opts.seq_len,
        global_batch: tb.as_ref().map(|v| v.value),
    };
    let plan = match input.resolve() {
        Ok(plan) => plan,
        Err(err) => {
            r.push(plan_finding_in(
                crate::interop::Framework::DeepSpeed,
                &r.doc,
                &err,
                owned(&[TRAIN_BATCH]),
                anchor,
            ));
            return None;
        }
    };
    let parallel = (tp > 1 || pp > 1 || cp > 1).then(|| ParallelSection {
        world_size: world,
        tensor: (tp > 1).then_some(tp),
        pipeline: (pp > 1).then_some(pp),
        context: (cp > 1).then_some(cp),
    });
    let plan = if parallel.is_some() {
        let with_layout =
            accum_core::plan::Plan::with_layout(plan.micro_batch(), plan.accumulation(), layout)
                .and_then(|p| match plan.seq_len() {
                    Some(l) => p.with_seq_len(l),
                    None => Ok(p),
                });
        match with_layout {
            Ok(p) => p,
            Err(err) => {
                r.push(plan_finding_in(
                    crate::interop::Framework::DeepSpeed,
                    &r.doc,
                    &err,
                    vec![],
                    root,
                ));
                return None;
            }
        }
    } else {
        plan
    };
    let settings = settings::settings(r, trainer);
    Some(DsConfig {
        plan,
        parallel,
        settings,
    })
}

fn py_bool(b: bool) -> &'static str {
    if b { "True" } else { "False" }
}

/// `accum::run::normalization`: DeepSpeed divides each microbatch's loss by the accumulation
/// (`DeepSpeedEngine._scale_loss_by_gas`).
fn loss_finding(accumulation: u64, range: std::ops::Range<usize>) -> Diagnostic {
    Diagnostic::error(
        Code::PerToken,
        owned(&[GAS]),
        format!(
            "DeepSpeed scales each microbatch's loss by 1/gradient_accumulation_steps = 1/{accumulation}; with variable lengths a per-token mean per microbatch, averaged this way, is a mean of means, not the group's per-token mean"
        ),
    )
    .help("have the loss sum token losses and divide by the supervised tokens of the whole group (all microbatches and replicas), times gradient_accumulation_steps to undo DeepSpeed's division")
    .at(range, "divides by A, not by tokens")
}

/// `accum::plan::partial-group`: DeepSpeed's accumulation boundary counts micro-steps across epochs.
pub(crate) fn last_group_rule(
    r: &mut Reader,
    plan: &Plan,
    range: std::ops::Range<usize>,
) -> LastGroupRule {
    let drop_last = r.truthy(&["dataloader_drop_last"]);
    LastGroupRule {
        policy: LastGroup::Error,
        severity: Severity::Warning,
        behaviour: format!(
            "DeepSpeed has no last-group policy: its accumulation boundary is every {} micro-steps regardless of epoch ends, so the leftover microbatches join the next epoch's first group, and after the last epoch they are never applied{}",
            plan.accumulation(),
            if drop_last {
                " (dataloader_drop_last drops only the last incomplete microbatch)"
            } else {
                ""
            }
        ),
        help: "drop or pad the data yourself".to_owned(),
        range,
    }
}
