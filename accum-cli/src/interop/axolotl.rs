//! axolotl's YAML configuration: `micro_batch_size` (per GPU),
//! `gradient_accumulation_steps`, `batch_size` (discouraged), and the
//! parallel degrees `tensor_parallel_size` and `context_parallel_size`.
//!
//! axolotl's schema defaults `gradient_accumulation_steps` and
//! `micro_batch_size` to 1 (`axolotl/utils/schemas/training.py`,
//! `HyperparametersConfig`), refuses a config with fewer than two of the
//! three batch keys set (`check_batch_size_fields`), and `normalize_config`
//! (`axolotl/utils/config/__init__.py`) keeps the accumulation it has, so
//! `batch_size` alone does not set it; the Trainer then runs
//! `micro_batch_size × gradient_accumulation_steps` per process on
//! `world / (context × tensor)` replicas.

use accum_core::Code;
use accum_core::config::ParallelSection;
use accum_core::config::partial::PartialConfig;
use accum_core::plan::{LastGroup, Layout};
use accum_core::settings::{OptimizerKind, PrecisionMode};
use accum_core::{Span, UnitKind};
use serde_json::{Map, Value, json};

use super::dialect::{
    Dialect, FrameworkBatch, LastGroupRule, LossRule, Reading, per_process_plan, plan_finding_in,
    read_arguments,
};
use super::export::{Out, yaml};
use super::reader::{Reader, owned};
use super::{ExportError, Framework, ImportError, ImportOptions};
use crate::diagnostic::{Diagnostic, Severity};
use crate::source::YamlLoader;

/// The axolotl dialect.
pub(crate) struct Axolotl;

const MICRO: &str = "micro_batch_size";
const GAS: &str = "gradient_accumulation_steps";
const BATCH: &str = "batch_size";

impl Dialect for Axolotl {
    const FRAMEWORK: Framework = Framework::Axolotl;

    fn read(name: &str, text: &str, opts: &ImportOptions) -> Result<Reading, ImportError> {
        // axolotl reads its config with `yaml.safe_load`
        // (`axolotl/cli/config.py`, `load_cfg`).
        read_arguments(name, text, YamlLoader::PyYaml11, |r| read(r, opts))
    }
}

fn read(r: &mut Reader, opts: &ImportOptions) -> Option<FrameworkBatch> {
    let root = r.range_of(&[]);
    let set = |r: &Reader, k: &str| {
        r.has(&[k])
            && !matches!(
                r.node(&[k]).map(|n| &n.kind),
                Some(crate::source::NodeKind::Integer(0))
            )
    };
    let given = [MICRO, GAS, BATCH].iter().filter(|k| set(r, k)).count();
    if given < 2 {
        r.push(
            Diagnostic::error(
                Code::EngineAssert,
                owned(&[MICRO]),
                "axolotl would stop at start-up: \"At least two of micro_batch_size, gradient_accumulation_steps, batch_size must be set\"",
            )
            .help("set micro_batch_size and gradient_accumulation_steps")
            .at(root, "batch keys missing"),
        );
        return None;
    }
    let m = if r.has(&[MICRO]) {
        r.uint(&[MICRO], 1)?.value
    } else {
        1
    };
    let a = if r.has(&[GAS]) {
        r.uint(&[GAS], 1)?.value
    } else {
        1
    };
    // axolotl's schema defaults gradient_accumulation_steps to 1
    // (`src/axolotl/utils/schemas/training.py`, `HyperparametersConfig`), so
    // `normalize_config` (`src/axolotl/utils/config/__init__.py`) keeps it
    // (`cfg.gradient_accumulation_steps or batch_size // micro_batch_size`
    // sees 1). axolotl runs that batch: a warning with it, not an error.
    if !r.has(&[GAS])
        && let Some(b) = r.uint(&[BATCH], 1)
        && b.value != m
    {
        r.push(
            Diagnostic::error(
                Code::InteropValue,
                owned(&[BATCH]),
                format!(
                    "batch_size {} is ignored: axolotl's schema fills gradient_accumulation_steps with 1 before normalize_config reads batch_size, so axolotl trains micro_batch_size {m} × 1 per process and update",
                    b.value
                ),
            )
            .warning()
            .help(format!("write gradient_accumulation_steps (batch_size / micro_batch_size = {})", b.value / m.max(1)))
            .at(b.range, "not the accumulation"),
        );
    }
    let Some(world) = super::dialect::world_from_options(opts) else {
        r.push(
            Diagnostic::error(
                Code::Missing,
                vec![],
                "the number of processes is not in an axolotl config: the launcher decides it (WORLD_SIZE)",
            )
            .help("give the launcher's world size (--world-size N)")
            .at(root, "process count needed"),
        );
        return None;
    };
    let degree = |r: &mut Reader, key: &str, opt: Option<u64>| -> Option<Option<u64>> {
        if r.has(&[key]) {
            r.uint(&[key], 1).map(|v| Some(v.value))
        } else {
            Some(opt)
        }
    };
    let tp = degree(r, "tensor_parallel_size", opts.tensor)?;
    let cp = degree(r, "context_parallel_size", opts.context)?;
    let layout = Layout::new(world, tp.unwrap_or(1), 1, cp.unwrap_or(1));
    if let Err(err) = layout.replicas() {
        r.push(plan_finding_in(
            crate::interop::Framework::Axolotl,
            &r.doc,
            &err,
            owned(&["tensor_parallel_size"]),
            root,
        ));
        return None;
    }
    let plan = match per_process_plan(m, a, layout, opts.seq_len) {
        Ok(plan) => plan,
        Err(err) => {
            let range = r.range_of(&[MICRO]);
            r.push(plan_finding_in(
                crate::interop::Framework::Axolotl,
                &r.doc,
                &err,
                owned(&[MICRO]),
                range,
            ));
            return None;
        }
    };
    let settings = settings(r);
    let range = r.range_of(&[GAS]);
    let model_parallel = tp.is_some_and(|t| t > 1) || cp.is_some_and(|c| c > 1);
    Some(FrameworkBatch {
        plan,
        parallel: model_parallel.then_some(ParallelSection {
            world_size: world,
            tensor: tp,
            pipeline: None,
            context: cp,
        }),
        settings,
        schedule: None,
        staged: None,
        step_lengths: Vec::new(),
        loss: LossRule::PerTokenIfDefault(
            Diagnostic::error(
                Code::PerToken,
                owned(&[GAS]),
                "axolotl trains with the Hugging Face Trainer, whose per-token normalization across devices (average_tokens_across_devices) depends on the transformers version",
            )
            .warning()
            .help("check that the loss is divided by the tokens of the whole group on all devices")
            .at(range.clone(), "normalization"),
        ),
        last_group: LastGroupRule {
            policy: LastGroup::Process,
            severity: Severity::Warning,
            behaviour: "the Trainer runs it as one more update with the microbatches that remain".to_owned(),
            help: "this matches last_group \"process\"".to_owned(),
            range,
        },
    })
}

fn settings(r: &mut Reader) -> PartialConfig {
    let mut c = PartialConfig::default();
    c.schedule.total = r
        .uint(&["max_steps"], 1)
        .map(|v| Span::new(v.value, UnitKind::Update));
    c.schedule.warmup = r
        .uint(&["warmup_steps"], 0)
        .filter(|v| v.value > 0)
        .map(|v| Span::new(v.value, UnitKind::Update));
    c.schedule.kind = r
        .str(&["lr_scheduler"])
        .and_then(|s| super::huggingface::scheduler_kind(&s.value));
    c.log.every = r
        .uint(&["logging_steps"], 1)
        .map(|v| Span::new(v.value, UnitKind::Update));
    c.optimizer.lr = r.float(&["learning_rate"]).map(|v| v.value);
    c.optimizer.weight_decay = r.float(&["weight_decay"]).map(|v| v.value);
    c.optimizer.clip_norm = r.float(&["max_grad_norm"]).map(|v| v.value);
    c.optimizer.kind = r.str(&["optimizer"]).and_then(|o| {
        let o = o.value.to_ascii_lowercase();
        (o.starts_with("adamw") || o.starts_with("paged_adamw")).then_some(OptimizerKind::AdamW)
    });
    // `bf16: auto` is the machine's choice (resolve_dtype): not carried.
    let on = |r: &Reader, k: &str| {
        matches!(
            r.node(&[k]).map(|n| &n.kind),
            Some(crate::source::NodeKind::Bool(true))
        )
    };
    let bf16 = on(r, "bf16");
    c.precision.mode = if on(r, "fp16") {
        Some(PrecisionMode::Fp16)
    } else if bf16 {
        Some(PrecisionMode::Bf16)
    } else {
        None
    };
    c
}

/// Writes an axolotl config's batch and training keys.
pub(crate) fn export(c: &PartialConfig, out: &mut Out) -> Result<String, ExportError> {
    let plan = out.plan;
    if plan.layout().is_some_and(|l| l.pipeline > 1) {
        return Err(ExportError::Unsupported {
            framework: Framework::Axolotl,
            key: "parallel.pipeline",
            reason: "axolotl has no pipeline parallelism; export a layout without it".to_owned(),
        });
    }
    out.check_last_group(
        c,
        &[LastGroup::Process],
        "runs the partial group as one more update",
    )?;
    let mut root = Map::new();
    root.insert(MICRO.into(), json!(plan.micro_batch()));
    root.insert(GAS.into(), json!(plan.accumulation()));
    if let Some(l) = plan.layout() {
        if l.tensor > 1 {
            root.insert("tensor_parallel_size".into(), json!(l.tensor));
        }
        if l.context > 1 {
            root.insert("context_parallel_size".into(), json!(l.context));
        }
    }
    if let Some(l) = plan.seq_len() {
        root.insert("sequence_len".into(), json!(l));
    }
    let o = &c.optimizer;
    if let Some(lr) = o.lr {
        root.insert("learning_rate".into(), json!(lr));
    } else {
        out.note("axolotl requires learning_rate, which the config does not set");
    }
    if let Some(w) = o.weight_decay {
        root.insert("weight_decay".into(), json!(w));
    }
    if let Some(clip) = o.clip_norm {
        root.insert("max_grad_norm".into(), json!(clip));
    }
    if o.kind == Some(OptimizerKind::AdamW) {
        root.insert("optimizer".into(), json!("adamw_torch"));
    }
    match c.precision.mode {
        Some(PrecisionMode::Bf16) => {
            root.insert("bf16".into(), json!(true));
        }
        Some(PrecisionMode::Fp16) => {
            root.insert("fp16".into(), json!(true));
        }
        _ => {}
    }
    out.trainer_schedule(c, &mut root, "lr_scheduler")?;
    out.note(format!(
        "launch {} processes (WORLD_SIZE)",
        plan.layout().map_or(plan.replicas(), |l| l.world_size)
    ));
    Ok(yaml(&Value::Object(root)))
}
