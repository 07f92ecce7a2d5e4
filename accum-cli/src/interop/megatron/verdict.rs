//! The verdict: the batch Megatron trains with, from the arguments and the
//! world size, or the assertion it would stop at.

use std::ops::Range;

use accum_core::Code;
use accum_core::config::ParallelSection;
use accum_core::plan::{LastGroup, Layout, PlanInput};

use super::arguments::{Args, Got, duplicates};
use super::ramp::{ramp_cut_short, ramp_refusal};
use super::schedules::{self, StepSchedule};
use super::settings;
use super::world::world_size;
use crate::diagnostic::{Diagnostic, Severity};
use crate::interop::dialect::{FrameworkBatch, LastGroupRule, LossRule, plan_finding};
use crate::interop::{BatchSchedule, ImportOptions};

/// Megatron's reading of the arguments; `None` when it has no batch.
pub(super) fn read(a: &mut Args, opts: &ImportOptions) -> Option<FrameworkBatch> {
    let top = a.inv.range.clone();
    duplicates(a);
    // The world size: the options, or the launcher in front of the script.
    let world = world_size(a, opts, &top)?;
    let m = micro_batch(a, &top)?;
    let grid = grid(a, world, &top)?;
    let global = global_batch(a, opts, world, m, &grid, &top)?;

    let plan = match (PlanInput {
        micro_batch: Some(m),
        accumulation: if global.running.is_none() {
            Some(1)
        } else {
            None
        },
        replicas: None,
        layout: Some(grid.layout),
        seq_len: global.seq_len,
        global_batch: global.running,
    })
    .resolve()
    {
        Ok(plan) => plan,
        Err(err) => {
            a.findings.push(plan_finding(
                &err,
                Args::path("--global-batch-size"),
                global.range,
            ));
            return None;
        }
    };

    let (staged, schedule) = schedules::resolve(
        a,
        &plan,
        global.steps.as_ref(),
        global.given.as_ref().map(|g| g.0),
        global.decrease,
    )?;
    if let (Some(st), Some(BatchSchedule::Ramp { end, .. })) = (&staged, &schedule) {
        ramp_cut_short(a, &st.plan, *end);
    }
    let rule = match (&staged, &schedule) {
        (Some(st), Some(BatchSchedule::Ramp { samples, .. })) => Some(schedules::Rule::Ramp {
            plan: &st.plan,
            samples: *samples,
        }),
        (Some(st), Some(_)) => Some(schedules::Rule::Steps(&st.plan)),
        _ => None,
    };
    let (settings, step_lengths) =
        settings::settings(a, &plan, schedule.as_ref(), rule.as_ref(), &top);
    let loss = loss(a, plan.accumulation(), grid.replicas, &top);
    let [tensor, pipeline, context] = grid.given;
    Some(FrameworkBatch {
        plan,
        parallel: Some(ParallelSection {
            world_size: world,
            tensor,
            pipeline,
            context,
        }),
        settings,
        schedule,
        staged,
        step_lengths,
        loss,
        last_group: LastGroupRule {
            policy: LastGroup::Drop,
            severity: Severity::Warning,
            behaviour: "Megatron only runs whole global batches over a sample index that runs on across epochs, so no partial group is run: the leftover examples of the last pass are not used".to_owned(),
            help: "accept the drop, or size --train-samples to whole global batches".to_owned(),
            range: global.range,
        },
    })
}

/// `--micro-batch-size`, which Megatron requires (`megatron/training/arguments.py`,
/// `validate_args`: `assert args.micro_batch_size is not None`).
fn micro_batch(a: &mut Args, top: &Range<usize>) -> Option<u64> {
    match a.uint("--micro-batch-size", 1) {
        Got::Value(m, _) => Some(m),
        Got::Bad => None,
        Got::Absent => {
            a.findings.push(
                Diagnostic::error(
                    Code::EngineAssert,
                    Args::path("--micro-batch-size"),
                    "Megatron would stop at start-up: --micro-batch-size is required (validate_args asserts it is set)",
                )
                .help("add --micro-batch-size N (examples per forward pass per replica)")
                .at(top.clone(), "no micro-batch size"),
            );
            None
        }
    }
}

/// The model-parallel grid of the run.
struct Grid {
    layout: Layout,
    /// `D = world / (tp·pp·cp)`.
    replicas: u64,
    /// Tensor, pipeline and context degrees as the arguments give them.
    given: [Option<u64>; 3],
    /// The same, 1 where not given.
    degrees: [u64; 3],
}

/// The degrees, `D`, and the expert grid's check; `None` when Megatron
/// would stop (the finding is pushed).
fn grid(a: &mut Args, world: u64, top: &Range<usize>) -> Option<Grid> {
    let degree = |a: &mut Args, name: &str| match a.uint(name, 1) {
        Got::Value(v, _) => Some(Some(v)),
        Got::Absent => Some(None),
        Got::Bad => None,
    };
    let tp_given = degree(a, "--tensor-model-parallel-size")?;
    let pp_given = degree(a, "--pipeline-model-parallel-size")?;
    let cp_given = degree(a, "--context-parallel-size")?;
    // Megatron-DeepSpeed (`megatron/arguments.py`, `validate_args`):
    // `data_parallel_size = world_size // (pp × tp × ds_sequence_parallel_size)`,
    // asserting the division; its sequence parallelism divides like context
    // parallelism.
    let cp_given = match (cp_given, degree(a, "--ds-sequence-parallel-size")?) {
        (None, None) => None,
        (c, s) => Some(c.unwrap_or(1).saturating_mul(s.unwrap_or(1))),
    };
    let ep = degree(a, "--expert-model-parallel-size")?.unwrap_or(1);
    let etp_given = degree(a, "--expert-tensor-parallel-size")?;
    let (tp, pp, cp) = (
        tp_given.unwrap_or(1),
        pp_given.unwrap_or(1),
        cp_given.unwrap_or(1),
    );
    let layout = Layout::new(world, tp, pp, cp);
    let replicas = match layout.replicas() {
        Ok(d) => d,
        Err(err) => {
            let range = a
                .get("--tensor-model-parallel-size")
                .or(a.get("--pipeline-model-parallel-size"))
                .map_or(top.clone(), |x| x.range.clone());
            a.findings.push(
                plan_finding(&err, Args::path("--tensor-model-parallel-size"), range).help(
                    "Megatron asserts \"world size is not divisible by total_model_size\" (validate_args); change the degrees or the world size",
                ),
            );
            return None;
        }
    };
    // megatron/core/parallel_state.py, initialize_model_parallel: the expert
    // grid needs world % (etp × ep × pp) == 0 (etp defaults to tp).
    let etp = etp_given.unwrap_or(tp);
    let expert = etp.saturating_mul(ep).saturating_mul(pp);
    if ep > 1 && !world.is_multiple_of(expert) {
        let range = a
            .get("--expert-model-parallel-size")
            .map_or(top.clone(), |x| x.range.clone());
        a.findings.push(
            Diagnostic::error(
                Code::EngineAssert,
                Args::path("--expert-model-parallel-size"),
                format!(
                    "Megatron would stop at start-up: \"world_size ({world}) is not divisible by expert_tensor_model_pipeline_parallel size ({expert})\" (expert tensor {etp} × expert {ep} × pipeline {pp})"
                ),
            )
            .help(format!(
                "use a world size that is a multiple of {expert}, or smaller expert, expert-tensor or pipeline degrees"
            ))
            .at(range, "expert grid does not fit"),
        );
        return None;
    }
    Some(Grid {
        layout,
        replicas,
        given: [tp_given, pp_given, cp_given],
        degrees: [tp, pp, cp],
    })
}

/// The global batch as the arguments give it and as Megatron runs it.
struct GlobalBatch {
    /// `--global-batch-size` and where it is written.
    given: Option<(u64, Range<usize>)>,
    /// `--step-batch-size-schedule`.
    steps: Option<StepSchedule>,
    /// The global batch Megatron runs after any schedule (`None`: micro × D).
    running: Option<u64>,
    /// Where findings about the batch point.
    range: Range<usize>,
    /// `--decrease-batch-size-if-needed`.
    decrease: bool,
    /// Tokens per example, when the arguments or the options say.
    seq_len: Option<u64>,
}

/// The global batch: given, a step schedule, or micro × D; Megatron's
/// assertions on it, and a batch that counts model-parallel devices as
/// replicas. `None` when a value is unknown or not a number.
fn global_batch(
    a: &mut Args,
    opts: &ImportOptions,
    world: u64,
    m: u64,
    grid: &Grid,
    top: &Range<usize>,
) -> Option<GlobalBatch> {
    let replicas = grid.replicas;
    let [tp, pp, cp] = grid.degrees;
    let global = match a.uint("--global-batch-size", 1) {
        Got::Value(g, s) => Some((g, s)),
        Got::Absent => None,
        Got::Bad => return None,
    };
    let seq_len = a
        .soft_uint("--seq-length", 1)
        .or_else(|| a.soft_uint("--encoder-seq-length", 1))
        .map(|v| v.0)
        .or(opts.seq_len);
    let steps = schedules::step_schedule(a, seq_len)?;
    if let (Some(_), Some((g, range))) = (&steps, &global) {
        a.findings.push(
            Diagnostic::error(
                Code::EngineAssert,
                Args::path("--global-batch-size"),
                format!("Megatron would stop at start-up: \"Cannot specify both --step-batch-size-schedule and --global-batch-size\" (--global-batch-size {g})"),
            )
            .help("remove --global-batch-size: the schedule's last batch is the global batch")
            .at(range.clone(), "given with a step schedule"),
        );
    }
    let final_global = steps
        .as_ref()
        .and_then(|s| s.steps.last().map(|x| x.global_batch))
        .or(global.as_ref().map(|g| g.0));
    let b_range = global
        .as_ref()
        .map(|g| g.1.clone())
        .or_else(|| a.get("--step-batch-size-schedule").map(|x| x.range.clone()))
        .or_else(|| a.get("--micro-batch-size").map(|x| x.range.clone()))
        .unwrap_or_else(|| top.clone());
    let step = m.saturating_mul(replicas);
    let decrease = a.has("--decrease-batch-size-if-needed");
    let mut running = final_global;
    if let Some(g) = final_global
        && g % step != 0
    {
        if decrease && steps.is_none() {
            let rounded = g / step * step;
            a.findings.push(
                Diagnostic::error(
                    Code::Rounds,
                    Args::path("--global-batch-size"),
                    format!(
                        "with --decrease-batch-size-if-needed Megatron trains with global batch {rounded}, not {g}: {g} is not a multiple of micro {m} × D {replicas} = {step}"
                    ),
                )
                .warning()
                .help(format!("write --global-batch-size {rounded} (or {}) to state the batch", rounded + step))
                .at(b_range.clone(), "decreased by Megatron"),
            );
            running = Some(rounded).filter(|&r| r > 0);
        } else if steps.is_none()
            && let Some(finding) = ramp_refusal(a, g, m, replicas, step, &b_range)
        {
            a.findings.push(finding);
        } else if steps.is_none() {
            a.findings.push(
                Diagnostic::error(
                    Code::EngineAssert,
                    Args::path("--global-batch-size"),
                    format!(
                        "Megatron would stop at start-up: \"global batch size ({g}) is not divisible by micro batch size ({m}) times data parallel size ({replicas})\" (D = {world} / (tp {tp} × pp {pp} × cp {cp}))"
                    ),
                )
                .help("see accum's nearest valid values below")
                .at(b_range.clone(), "not a multiple of micro × D"),
            );
        }
    } else if let Some((g, _)) = &global
        && *g == m.saturating_mul(world)
        && tp * pp * cp > 1
    {
        a.findings.push(
            Diagnostic::error(
                Code::ModelParallelReplicas,
                Args::path("--global-batch-size"),
                format!(
                    "--global-batch-size {g} = micro {m} × all {world} devices, as if every device were a replica; Megatron uses D = {world} / (tp {tp} × pp {pp} × cp {cp}) = {replicas} and so runs A = {g} / ({m} × {replicas}) = {} microbatches per update",
                    g / step
                ),
            )
            .warning()
            .help(format!(
                "if {} microbatches per update are meant, the batch is right: Megatron accumulates them; if one microbatch per update was meant, use --global-batch-size {step}",
                g / step
            ))
            .at(b_range.clone(), "counts model-parallel devices"),
        );
    }
    Some(GlobalBatch {
        given: global,
        steps,
        running,
        range: b_range,
        decrease,
        seq_len,
    })
}

/// How Megatron normalizes the loss of a group: per token with
/// `--calculate-per-token-loss`, else a mean of microbatch means.
fn loss(a: &Args, accumulation: u64, replicas: u64, top: &Range<usize>) -> LossRule {
    if a.has("--calculate-per-token-loss") {
        return LossRule::PerToken;
    }
    LossRule::MicrobatchMean(
        Diagnostic::error(
            Code::PerToken,
            Args::path("--calculate-per-token-loss"),
            format!(
                "without --calculate-per-token-loss Megatron averages each microbatch over its own tokens and then averages the {accumulation} microbatches and {replicas} replicas: with variable lengths that is a mean of means, not the per-token mean of the group"
            ),
        )
        .help("add --calculate-per-token-loss so that the loss is divided by the tokens of the whole global batch")
        .at(top.clone(), "per-token loss off"),
    )
}
