//! Lightning `Trainer` arguments as JSON or YAML: flat, under `trainer:`
//! (LightningCLI, NeMo), or under `lightning: trainer:` (the latent-diffusion
//! family), with the micro-batch in the data or model section. NeMo's
//! Megatron models set `model.micro_batch_size` and `model.global_batch_size`
//! and compute the accumulation from them.
//!
//! `accumulate_grad_batches` is an int, or (Lightning 1.x, or the
//! `GradientAccumulationScheduler` callback) a schedule `{epoch: factor}`.
//! `max_steps` and `log_every_n_steps` count optimizer steps; an integer
//! `val_check_interval` counts training batches, i.e. microbatches.
//! Lightning steps the optimizer on the last batch of an epoch even when
//! fewer than `accumulate_grad_batches` batches were accumulated, and
//! divides every batch's loss by `accumulate_grad_batches`.

pub(crate) mod devices;
mod export;
mod nemo;
mod schedule;

use accum_core::Code;
use accum_core::config::ParallelSection;
use accum_core::config::partial::PartialConfig;
use accum_core::plan::LastGroup;
use accum_core::settings::PrecisionMode;
use accum_core::{Span, UnitKind};

pub(crate) use export::{export, export_nemo};

use super::dialect::{
    Dialect, FrameworkBatch, LastGroupRule, LossRule, Reading, layout_of, option_degrees,
    per_process_plan, plan_finding_in, read_composed,
};
use super::reader::{At, Reader, owned};
use super::stages::StepLength;
use super::{BatchSchedule, Framework, ImportError, ImportOptions};
use crate::diagnostic::{Diagnostic, Severity};
use crate::source::NodeKind;
use crate::source::YamlLoader;

pub(crate) const ACC: &str = "accumulate_grad_batches";

/// The Lightning dialect (it reads NeMo's Megatron models too, as NeMo does).
pub(crate) struct Lightning;

/// NeMo's Megatron models.
pub(crate) struct NeMo;

impl Dialect for NeMo {
    const FRAMEWORK: Framework = Framework::NeMo;

    fn read(name: &str, text: &str, opts: &ImportOptions) -> Result<Reading, ImportError> {
        // NeMo loads its configs with OmegaConf (Hydra).
        read_composed(name, text, opts, YamlLoader::OmegaConf, |r| {
            r.interpolation = Some(super::interpolate::Interpolation::new(opts));
            if nemo::has_batch(r) {
                let t = trainer(r);
                return nemo::read(r, opts, &t);
            }
            // Without these keys NeMo does not build Megatron's calculator
            // from the file; what trains it then (Lightning's own
            // accumulation for the ASR and TTS models) is not in the file.
            let range = r.range_of(&[]);
            r.push(
                Diagnostic::error(
                    Code::Dialect,
                    owned(&["model", "micro_batch_size"]),
                    "no model.micro_batch_size or model.global_batch_size, nor model.data.train_ds's: accum reads a NeMo batch from these, which NeMo hands to Megatron's microbatch calculator",
                )
                .help("add the batch keys; or, for a NeMo model whose accumulation is the Lightning trainer's (`trainer.accumulate_grad_batches`, as in NeMo's ASR and TTS models), import it with `accum import lightning FILE`")
                .at(range, "no NeMo batch keys"),
            );
            None
        })
    }
}

/// Where the trainer's arguments are: under `lightning: trainer:`, under
/// `trainer:`, or at the top.
fn trainer(r: &Reader) -> Trainer {
    Trainer {
        prefix: if r.is_table(&["lightning", "trainer"]) {
            vec!["lightning", "trainer"]
        } else if r.is_table(&["trainer"]) {
            vec!["trainer"]
        } else {
            Vec::new()
        },
    }
}

/// Where the trainer's arguments are.
pub(crate) struct Trainer {
    prefix: Vec<&'static str>,
}

impl Trainer {
    /// Arguments at the top of the file (LitGPT's `devices`, `num_nodes`).
    pub(crate) fn top() -> Trainer {
        Trainer { prefix: Vec::new() }
    }

    pub(crate) fn path(&self, key: &'static str) -> Vec<&'static str> {
        let mut p = self.prefix.clone();
        p.push(key);
        p
    }
}

impl Dialect for Lightning {
    const FRAMEWORK: Framework = Framework::Lightning;

    fn read(name: &str, text: &str, opts: &ImportOptions) -> Result<Reading, ImportError> {
        // LightningCLI's `LightningArgumentParser` is a jsonargparse
        // `ArgumentParser` (`lightning/pytorch/cli.py`).
        // A Hydra config (OmegaConf) interpolates; LightningCLI's parser
        // would refuse a `${…}` where a number goes, so resolving it reads
        // the Hydra file as Hydra does and changes nothing for the others.
        // A Hydra experiment is composed with the files of its config tree
        // its `defaults:` list names, as Hydra composes it.
        read_composed(name, text, opts, YamlLoader::JsonArgParse, |r| {
            r.interpolation = Some(super::interpolate::Interpolation::new(opts));
            read(r, opts)
        })
    }
}

/// The batch keys of LitGPT's recipes, which run on Lightning Fabric
/// (`litgpt.rs` reads them).
pub(crate) const LITGPT_GLOBAL: [&str; 2] = ["train", "global_batch_size"];
/// See [`LITGPT_GLOBAL`].
pub(crate) const LITGPT_MICRO: [&str; 2] = ["train", "micro_batch_size"];

fn read(r: &mut Reader, opts: &ImportOptions) -> Option<FrameworkBatch> {
    let root = r.range_of(&[]);
    let t = trainer(r);
    // NeMo's Megatron models: the model section (or, for fine-tuning, its
    // training data) sets the batch.
    if nemo::has_batch(r) {
        return nemo::read(r, opts, &t);
    }

    // A LitGPT recipe given here is refused before it is read, by its own
    // keys (`detect.rs`); `train.global_batch_size` alone is no evidence,
    // as Hydra research configs keep one too.

    // The micro-batch lives in the DataLoader, not in the Trainer.
    let mut micro: Option<At<u64>> = None;
    for path in [
        &["data", "batch_size"][..],
        &["data", "init_args", "batch_size"],
        &["data", "params", "batch_size"],
        &["data", "train_batch_size"],
        &["batch_size"],
        &["model", "batch_size"],
        &["model", "init_args", "batch_size"],
        &["model", "train_ds", "batch_size"],
        // NeMo's TTS models: a bucketing sampler built from
        // `train_ds.batch_sampler`, which the DataLoader takes as its
        // `batch_sampler` (`nemo/collections/tts/models/vits.py`,
        // `VitsModel.train_dataloader`: `DistributedBucketSampler(dataset,
        // **self.cfg.train_ds.batch_sampler)`), else `DataLoader(dataset,
        // **cfg.dataloader_params)` (`fastpitch.py`,
        // `FastPitchModel._setup_train_dataloader`); per process.
        &["model", "train_ds", "batch_sampler", "batch_size"],
        &["model", "train_ds", "dataloader_params", "batch_size"],
    ] {
        if r.has(path) {
            micro = Some(r.uint(path, 1)?);
            break;
        }
    }
    let m = match (micro.as_ref().map(|v| v.value), opts.micro_batch) {
        (Some(f), Some(o)) if f != o => {
            let range = micro.as_ref().map_or(root.clone(), |v| v.range.clone());
            r.push(
                Diagnostic::error(
                    Code::InteropValue,
                    micro.as_ref().map_or_else(Vec::new, |v| v.path.clone()),
                    format!("the file's batch_size {f} disagrees with the micro-batch {o} given"),
                )
                .help("make them agree; accum uses the file's value")
                .at(range, "micro-batch"),
            );
            f
        }
        (Some(v), _) | (None, Some(v)) => v,
        (None, None) => {
            r.push(
                Diagnostic::error(
                    Code::Missing,
                    vec!["data".into(), "batch_size".into()],
                    "the micro-batch is not in the file: it is the DataLoader's batch_size",
                )
                .help("give it (--micro-batch N), or add data.batch_size to the file")
                .at(root.clone(), "micro-batch needed"),
            );
            return None;
        }
    };

    let (a, epochs) = accumulation(r, &t)?;
    let world = devices::world(r, opts, &t)?;
    let [tp, pp, cp] = option_degrees(opts);
    let (layout, replicas) = layout_of(r, world, [tp, pp, cp], &root)?;
    let model_parallel = tp * pp * cp > 1;
    if model_parallel {
        let range = r.range_of(&t.path("devices"));
        r.push(
            Diagnostic::error(
                Code::ModelParallelReplicas,
                owned(&t.path("devices")),
                format!(
                    "devices × num_nodes = {world} counts the tensor {tp} × pipeline {pp} × context {cp} devices of each model copy as replicas; the data-parallel replicas are D = {world} / {} = {replicas}, so B = {m} × {a} × {replicas} = {}",
                    tp * pp * cp,
                    m.saturating_mul(a).saturating_mul(replicas)
                ),
            )
            .warning()
            .help("check that the sampler shards by data-parallel rank, and use B = m·A·D for the schedule and learning rate")
            .at(range, "devices, not replicas"),
        );
    }
    let plan = match per_process_plan(m, a, layout, opts.seq_len) {
        Ok(plan) => plan,
        Err(err) => {
            r.push(plan_finding_in(
                crate::interop::Framework::Lightning,
                &r.doc,
                &err,
                owned(&t.path(ACC)),
                root,
            ));
            return None;
        }
    };
    let settings = settings(r, &t, a);
    let acc_range = r.range_of(&t.path(ACC));
    let staged = epochs
        .as_ref()
        .and_then(|e| schedule::stages(r, &plan, e, opts.examples));
    let step_lengths = step_lengths(r, &t, &settings);
    Some(FrameworkBatch {
        loss: divides_by_a(a, owned(&t.path(ACC)), acc_range.clone()),
        last_group: LastGroupRule {
            policy: LastGroup::Process,
            // Lightning runs it, scaled down: a warning that says so.
            severity: Severity::Warning,
            behaviour: format!(
                "Lightning steps the optimizer on the last batch of the epoch with only those microbatches, but still divides each loss by {ACC} = {a}, so that update is scaled down instead of normalized by what it contains"
            ),
            help: "drop the partial group (drop_last in the sampler), or rescale its loss by A / microbatches in it".to_owned(),
            range: acc_range,
        },
        plan,
        parallel: model_parallel.then(|| ParallelSection {
            world_size: world,
            tensor: (tp > 1).then_some(tp),
            pipeline: (pp > 1).then_some(pp),
            context: (cp > 1).then_some(cp),
        }),
        settings,
        schedule: epochs.map(|e| BatchSchedule::Epochs(e.steps)),
        staged,
        step_lengths,
    })
}

/// `trainer.max_steps`, which counts optimizer steps, for `schedule-shift`.
pub(crate) fn step_lengths(r: &Reader, t: &Trainer, settings: &PartialConfig) -> Vec<StepLength> {
    let path = t.path("max_steps");
    settings
        .schedule
        .total
        .filter(|s| s.unit() == UnitKind::Update)
        .map(|s| StepLength {
            key: crate::diagnostic::dotted(&owned(&path)),
            path: owned(&path),
            range: r.range_of(&path),
            updates: s.value(),
            in_samples: None,
        })
        .into_iter()
        .collect()
}

/// `accum::run::normalization`: Lightning divides each batch's loss by `accumulate_grad_batches`.
pub(crate) fn divides_by_a(a: u64, path: Vec<String>, range: std::ops::Range<usize>) -> LossRule {
    LossRule::MicrobatchMean(
        Diagnostic::error(
            Code::PerToken,
            path,
            format!(
                "Lightning divides each microbatch's loss by {ACC} = {a}; with variable lengths a per-token mean per microbatch, averaged this way, is a mean of means, not the group's per-token mean"
            ),
        )
        .help("return the summed token loss divided by the supervised tokens of the whole group, times accumulate_grad_batches to undo Lightning's division, or use manual optimization")
        .at(range, "divides by A, not by tokens"),
    )
}

/// `accumulate_grad_batches`, or a schedule by epoch: the accumulation of
/// the plan (the last phase's, as `[batch]` holds the batch after the
/// ramp) and the schedule when the factor changes.
fn accumulation(r: &mut Reader, t: &Trainer) -> Option<(u64, Option<schedule::EpochSchedule>)> {
    match schedule::read(r, t) {
        Err(()) => None,
        Ok(Some(s)) if s.changes() => Some((s.last(), Some(s))),
        Ok(Some(s)) => Some((s.last(), None)),
        Ok(None) => match r.node(&t.path(ACC)).map(|n| &n.kind) {
            None | Some(NodeKind::Null) => Some((1, None)),
            Some(_) => r.uint(&t.path(ACC), 1).map(|v| (v.value, None)),
        },
    }
}

/// Lengths, logging, precision and clipping.
pub(crate) fn settings(r: &mut Reader, t: &Trainer, a: u64) -> PartialConfig {
    let mut c = PartialConfig::default();
    c.schedule.total = r
        .int(&t.path("max_steps"))
        .filter(|v| v.value > 0)
        .and_then(|v| u64::try_from(v.value).ok())
        .map(|v| Span::new(v, UnitKind::Update));
    c.log.every = r
        .uint(&t.path("log_every_n_steps"), 1)
        .map(|v| Span::new(v.value, UnitKind::Update));
    if let Some(NodeKind::Integer(n)) = r
        .node(&t.path("val_check_interval"))
        .map(|n| n.kind.clone())
        && n > 0
        && a > 1
    {
        let n = u64::try_from(n).unwrap_or(u64::MAX);
        let rest = n % a;
        if rest != 0 {
            let range = r.range_of(&t.path("val_check_interval"));
            r.push(
                Diagnostic::error(
                    Code::StepUnit,
                    owned(&t.path("val_check_interval")),
                    format!(
                        "an integer val_check_interval counts training batches (microbatches), not optimizer steps: {n} batches = {n}/{a} updates at {ACC} {a}, so validation runs in the middle of a group"
                    ),
                )
                .warning()
                .help(format!("use a multiple of {a}, e.g. {}, and think of it as {} updates", (n / a).max(1) * a, (n / a).max(1)))
                .at(range, "microbatches"),
            );
        }
    }
    // Precision (`accum::run::loss-scale`).
    let prec_path = t.path("precision");
    let text = match r.node(&prec_path).map(|n| n.kind.clone()) {
        None | Some(NodeKind::Null) => None,
        Some(NodeKind::Integer(i)) => Some(i.to_string()),
        Some(NodeKind::String(s)) => Some(s),
        Some(_) => Some(String::new()),
    };
    c.precision.mode = match text.as_deref() {
        None => None,
        Some("32" | "32-true" | "64" | "64-true") => Some(PrecisionMode::Fp32),
        Some("16" | "16-mixed") => Some(PrecisionMode::Fp16),
        Some("bf16" | "bf16-mixed" | "bf16-true") => Some(PrecisionMode::Bf16),
        Some("16-true") => {
            let range = r.range_of(&prec_path);
            r.push(
                Diagnostic::error(
                    Code::InteropValue,
                    owned(&prec_path),
                    "precision \"16-true\" trains in float16 without a loss scaler: small gradients underflow to zero",
                )
                .warning()
                .help("use \"16-mixed\" (with loss scaling) or \"bf16-mixed\"")
                .at(range, "no loss scaling"),
            );
            Some(PrecisionMode::Fp16)
        }
        Some(_) => None,
    };
    // Clipping: only by norm has an accum key; 0 disables it.
    let clip = r.float(&t.path("gradient_clip_val"));
    let algorithm = r
        .str(&t.path("gradient_clip_algorithm"))
        .map_or_else(|| "norm".to_owned(), |s| s.value);
    c.optimizer.clip_norm = match (clip, algorithm.as_str()) {
        (Some(c), "norm") => Some(c.value),
        (Some(c), other) if c.value > 0.0 => {
            let range = r.range_of(&t.path("gradient_clip_algorithm"));
            r.push(
                Diagnostic::error(
                    Code::NotConverted,
                    owned(&t.path("gradient_clip_algorithm")),
                    format!("gradient_clip_algorithm `{other}` clips each value at {}, not the global norm; optimizer.clip_norm is left out", c.value),
                )
                .warning()
                .help("use gradient_clip_algorithm \"norm\" to clip the group's full gradient")
                .at(range, "not a norm"),
            );
            None
        }
        (Some(c), _) => Some(c.value),
        (None, _) => None,
    };
    c
}
