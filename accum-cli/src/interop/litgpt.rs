//! LitGPT's recipes (`config_hub/pretrain/*.yaml`, `config_hub/finetune/…`):
//! Lightning Fabric scripts whose batch is `train.global_batch_size` and
//! `train.micro_batch_size`, on `devices × num_nodes` processes.
//!
//! LitGPT computes the accumulation with floor divisions and asserts each
//! is above 0 (`litgpt/args.py`, `TrainArgs.batch_size`: `global_batch_size
//! // (devices * num_nodes)`, and `TrainArgs.gradient_accumulation_iters`:
//! that `// micro_batch_size`), with the defaults 64 and 4 (`TrainArgs`).
//! Every process is a data-parallel replica (FSDP or DDP through Fabric,
//! `litgpt/pretrain.py`, `setup`), so it trains `m × A × D`, which is the
//! global batch written only when both divisions are exact. Each
//! microbatch's mean loss is divided by `A` (`fabric.backward(loss /
//! train.gradient_accumulation_iters(devices, num_nodes))` in `fit`), and
//! the data is cycled (`CycleIterator`), so no partial group ends a pass.

use accum_core::Code;
use accum_core::config::partial::PartialConfig;
use accum_core::plan::{LastGroup, Layout};
use serde_json::{Map, Value, json};

use super::dialect::{
    Dialect, FrameworkBatch, LastGroupRule, LossRule, Reading, per_process_plan, plan_finding_in,
    read_arguments,
};
use super::export::{Out, yaml};
use super::lightning::{LITGPT_GLOBAL as GLOBAL, LITGPT_MICRO as MICRO, Trainer};
use super::reader::{Reader, owned};
use super::{ExportError, Framework, ImportError, ImportOptions};
use crate::diagnostic::{Diagnostic, Severity};
use crate::source::YamlLoader;

/// The LitGPT dialect.
pub(crate) struct LitGpt;

impl Dialect for LitGpt {
    const FRAMEWORK: Framework = Framework::LitGpt;

    fn read(name: &str, text: &str, opts: &ImportOptions) -> Result<Reading, ImportError> {
        // `litgpt … --config` is jsonargparse's `ActionConfigFile`
        // (`litgpt/__main__.py`, `_new_parser`).
        read_arguments(name, text, YamlLoader::JsonArgParse, |r| read(r, opts))
    }
}

fn read(r: &mut Reader, opts: &ImportOptions) -> Option<FrameworkBatch> {
    let root = r.range_of(&[]);
    // `TrainArgs` defaults: global_batch_size = 64, micro_batch_size = 4.
    let g = if r.has(&GLOBAL) {
        r.uint(&GLOBAL, 1)?
    } else {
        super::reader::At {
            value: 64,
            range: r.range_of(&["train"]),
            path: owned(&GLOBAL),
        }
    };
    let m = if r.has(&MICRO) {
        r.uint(&MICRO, 1)?.value
    } else {
        4
    };
    let world = super::lightning::devices::world(r, opts, &Trainer::top())?;
    // TrainArgs.batch_size: `global_batch_size // (devices * num_nodes)`, `assert batch_size > 0`.
    let per_process = g.value / world;
    if per_process == 0 {
        r.push(
            Diagnostic::error(
                Code::EngineAssert,
                g.path.clone(),
                format!(
                    "LitGPT would stop at start-up: TrainArgs.batch_size asserts global_batch_size // (devices × num_nodes) > 0, and {} // {world} = 0",
                    g.value
                ),
            )
            .help(format!("use train.global_batch_size {} or more", world.saturating_mul(m)))
            .at(g.range.clone(), "less than one example per process"),
        );
        return None;
    }
    // TrainArgs.gradient_accumulation_iters: `batch_size // micro_batch_size`, asserted > 0.
    let a = per_process / m;
    if a == 0 {
        r.push(
            Diagnostic::error(
                Code::EngineAssert,
                owned(&MICRO),
                format!(
                    "LitGPT would stop at start-up: TrainArgs.gradient_accumulation_iters asserts (global_batch_size // (devices × num_nodes)) // micro_batch_size > 0, and ({} // {world}) // {m} = 0",
                    g.value
                ),
            )
            .help(format!(
                "use train.micro_batch_size {per_process} or less, or train.global_batch_size {}",
                world.saturating_mul(m)
            ))
            .at(r.range_of(&MICRO), "more than a process's share"),
        );
        return None;
    }
    let trained = m.saturating_mul(a).saturating_mul(world);
    if trained != g.value {
        let step = m.saturating_mul(world);
        r.push(
            Diagnostic::error(
                Code::Rounds,
                g.path.clone(),
                format!(
                    "LitGPT trains a global batch of {trained}, not {}: it floors {} // (devices × num_nodes {world}) = {per_process} per process, then {per_process} // micro {m} = {a} microbatches per update (TrainArgs.gradient_accumulation_iters)",
                    g.value, g.value
                ),
            )
            // LitGPT runs it: a warning, with the batch it trains
            // (docs/interop.md, the severity rule).
            .warning()
            .help(format!(
                "write train.global_batch_size {trained} (or {}) so that the batch written is the one trained",
                trained.saturating_add(step)
            ))
            .at(g.range.clone(), "floored by LitGPT"),
        );
    }
    let plan = match per_process_plan(m, a, Layout::new(world, 1, 1, 1), opts.seq_len) {
        Ok(plan) => plan,
        Err(err) => {
            r.push(plan_finding_in(
                crate::interop::Framework::LitGpt,
                &r.doc,
                &err,
                owned(&GLOBAL),
                root,
            ));
            return None;
        }
    };
    Some(FrameworkBatch {
        loss: LossRule::MicrobatchMean(
            Diagnostic::error(
                Code::PerToken,
                owned(&MICRO),
                format!(
                    "LitGPT divides each microbatch's mean loss by the {a} microbatches of an update; with variable lengths that is a mean of means, not the group's per-token mean"
                ),
            )
            .help("sum the token losses and divide by the supervised tokens of the whole group")
            .at(g.range.clone(), "divides by A, not by tokens"),
        ),
        last_group: LastGroupRule {
            policy: LastGroup::Drop,
            severity: Severity::Warning,
            behaviour: "LitGPT cycles through the data (CycleIterator), so an update runs on into the next pass and no partial group is run".to_owned(),
            help: "accept it, or size the data to whole global batches".to_owned(),
            range: g.range,
        },
        plan,
        parallel: None,
        settings: PartialConfig::default(),
        schedule: None,
        staged: None,
        step_lengths: Vec::new(),
    })
}

/// Writes a LitGPT recipe's batch: `devices`, `num_nodes` and the `train`
/// keys that give the config's `m`, `A` and `D` through LitGPT's divisions.
pub(crate) fn export(c: &PartialConfig, out: &mut Out) -> Result<String, ExportError> {
    let plan = out.plan;
    if plan
        .layout()
        .is_some_and(|l| l.tensor * l.pipeline * l.context > 1)
    {
        return Err(ExportError::Unsupported {
            framework: Framework::LitGpt,
            key: "parallel",
            reason: "LitGPT counts every process as a data-parallel replica; export a layout without model parallelism".to_owned(),
        });
    }
    out.check_last_group(
        c,
        &[LastGroup::Drop],
        "cycles through the data, so no partial group is run",
    )?;
    let mut train = Map::new();
    train.insert(
        "global_batch_size".into(),
        json!(plan.effective_batch().get()),
    );
    train.insert("micro_batch_size".into(), json!(plan.micro_batch()));
    let mut root = Map::new();
    root.insert("devices".into(), json!(plan.replicas()));
    root.insert("num_nodes".into(), json!(1));
    root.insert("train".into(), Value::Object(train));
    out.note(format!(
        "devices is the processes of the whole job ({}); split it into devices × num_nodes for several nodes",
        plan.replicas()
    ));
    Ok(yaml(&Value::Object(root)))
}
