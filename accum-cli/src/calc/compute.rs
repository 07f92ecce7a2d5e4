//! The calculation: the plan from the flags, its ramp-up, the run's length
//! and each `--span` in every unit through the stages, and the estimates.
//! Errors name the flag at fault and say the way out in flags.

use accum_core::estimate::{
    ByteSize, MemoryEstimate, MemoryInputs, OptimizerState, ScalingInputs, ScalingPoint,
};
use accum_core::group_digits;
use accum_core::plan::{
    Layout, Plan, PlanError, PlanInput, Role, Rounding, StageError, StagedPlan,
};
use accum_core::{Code, Span, UnitKind, Updates};

use super::{Amounts, CalcReport, Formulas, RunLength, SpanReport, StageReport};
use crate::cli::{CalcArgs, Optimizer, Precision};
use crate::error::CliError;

pub(crate) fn compute(args: &CalcArgs) -> Result<CalcReport, CliError> {
    let layout = args
        .world_size
        .map(|world| Layout::new(world, args.tensor, args.pipeline, args.context));
    let input = PlanInput {
        micro_batch: args.micro_batch,
        accumulation: args.accum_steps,
        replicas: match layout {
            Some(_) => None,
            None => Some(args.data_parallel.unwrap_or(1)),
        },
        layout,
        seq_len: args.seq_len,
        global_batch: args.global_batch,
    };
    let plan = input.resolve().map_err(|err| calc_error(&err))?;
    let solved = match (args.micro_batch, args.accum_steps) {
        (Some(_), None) => Some(Role::Accumulation),
        (None, Some(_)) => Some(Role::MicroBatch),
        _ => None,
    };
    let memory = memory_estimate(args, &plan)?;
    let scaling = scaling_curve(args, &plan);
    let staged = staged_plan(args, &plan)?;
    let run = match args.total {
        Some(total) => Some(run_length(&staged, total)?),
        None => None,
    };
    let spans = args
        .spans
        .iter()
        .map(|span| span_report(&staged, *span))
        .collect::<Result<Vec<_>, _>>()?;
    let (stages, ramp_up) = if staged.is_constant() {
        (None, None)
    } else {
        let end = run.as_ref().map(|r| Updates::new(r.updates));
        let full_batch_from = staged.stages()[staged.stages().len() - 1].start();
        (
            Some(stage_reports(&staged, end)?),
            Some(amounts(&staged, full_batch_from)?),
        )
    };
    Ok(CalcReport {
        micro_batch: plan.micro_batch(),
        accumulation: plan.accumulation(),
        replicas: plan.replicas(),
        effective_batch: plan.effective_batch().get(),
        seq_len: plan.seq_len(),
        tokens_per_update: plan.tokens_per_update().map(|t| t.get()),
        examples_per_replica_per_update: plan.examples_per_replica_per_update().get(),
        tokens_per_replica_per_update: plan.tokens_per_replica_per_update().map(|t| t.get()),
        microbatches_per_update: plan.accumulation(),
        layout,
        solved,
        formula: Formulas {
            effective_batch: plan.batch_formula(),
            tokens_per_update: plan.token_formula(),
            replicas: layout.map(|l| {
                format!(
                    "D = world_size / (tp·pp·cp) = {} / ({} × {} × {}) = {}",
                    l.world_size,
                    l.tensor,
                    l.pipeline,
                    l.context,
                    plan.replicas()
                )
            }),
            solved: solved.map(|role| solved_formula(role, &plan)),
        },
        memory,
        scaling,
        stages,
        ramp_up,
        run,
        spans,
    })
}

/// The plan with its ramp-up: `--stage`s before the full batch, or a
/// `--ramp` to it, or one stage.
fn staged_plan(args: &CalcArgs, plan: &Plan) -> Result<StagedPlan, CliError> {
    if !args.stages.is_empty() {
        StagedPlan::ramp_to(plan, &args.stages).map_err(|err| stage_error("--stage", &err))
    } else if let Some(ramp) = &args.ramp {
        StagedPlan::linear(plan, ramp).map_err(|err| stage_error("--ramp", &err))
    } else {
        Ok(StagedPlan::constant(*plan))
    }
}

/// A stage error said to someone who typed flags: the flag, what is wrong,
/// and the way out.
fn stage_error(flag: &str, err: &StageError) -> CliError {
    let fix = match err {
        StageError::Plan { error, .. } => fix_in_flags(flag, error),
        _ => err.fix().text,
    };
    CliError::usage(format!("{flag}: {}; {fix}", err.message()))
}

/// The way out of a plan error met in `flag`, in flags: a missing sequence
/// length is given with `-L/--seq-len`, not with a config's `seq_len`.
fn fix_in_flags(flag: &str, err: &PlanError) -> String {
    match err {
        PlanError::NeedsSeqLen { .. } => format!(
            "give -L/--seq-len when every example has the same number of tokens, or write {flag} in updates or examples"
        ),
        _ => err.fix().text,
    }
}

/// What the first `updates` updates consume.
fn amounts(staged: &StagedPlan, updates: Updates) -> Result<Amounts, CliError> {
    let consumed = |unit| {
        staged
            .consumed(updates, unit)
            .map_err(|err| calc_error(&err))
    };
    Ok(Amounts {
        updates: updates.get(),
        examples: consumed(UnitKind::Example)?,
        tokens: match staged.final_plan().seq_len() {
            Some(_) => Some(consumed(UnitKind::Token)?),
            None => None,
        },
    })
}

/// Every stage, with what it lasts; the last one up to `end` when the run's
/// length is known.
fn stage_reports(staged: &StagedPlan, end: Option<Updates>) -> Result<Vec<StageReport>, CliError> {
    let count = staged.stages().len();
    staged
        .stages()
        .iter()
        .enumerate()
        .map(|(i, stage)| {
            let plan = stage.plan();
            let until = stage.end().or(end.filter(|end| *end > stage.start()));
            let lasts = match until {
                Some(until) => {
                    let (to, from) = (amounts(staged, until)?, amounts(staged, stage.start())?);
                    Some(Amounts {
                        updates: to.updates - from.updates,
                        examples: to.examples - from.examples,
                        tokens: to.tokens.zip(from.tokens).map(|(to, from)| to - from),
                    })
                }
                None => None,
            };
            Ok(StageReport {
                stage: i + 1,
                start_update: stage.start().get(),
                global_batch: plan.effective_batch().get(),
                accumulation: plan.accumulation(),
                tokens_per_update: plan.tokens_per_update().map(|t| t.get()),
                examples_before: stage.examples_before().get(),
                tokens_before: stage.tokens_before().map(|t| t.get()),
                to_the_end: i + 1 == count,
                lasts,
            })
        })
        .collect()
}

/// The run's length through the stages, a partial update counting as one.
fn run_length(staged: &StagedPlan, total: Span) -> Result<RunLength, CliError> {
    let updates = staged
        .span_to_updates(&total, Rounding::Up)
        .map_err(|err| {
            CliError::usage(format!(
                "--total: {}; {}",
                err.message(),
                fix_in_flags("--total", &err)
            ))
        })?;
    let amounts = amounts(staged, updates)?;
    Ok(RunLength {
        length: total,
        updates: amounts.updates,
        examples: amounts.examples,
        tokens: amounts.tokens,
        ends_in_stage: staged.stage_index_at(updates.saturating_sub(Updates::new(1))) + 1,
    })
}

/// A plan error said to someone who typed flags: the flag of the value at
/// fault first, then what is wrong and the way out.
fn calc_error(err: &PlanError) -> CliError {
    let flag = err.role().map(|role| match role {
        Role::MicroBatch => "-m/--micro-batch",
        Role::Accumulation => "-a/--accum-steps",
        Role::Replicas => "-d/--data-parallel",
        Role::WorldSize => "--world-size",
        Role::TensorParallel => "--tensor",
        Role::PipelineParallel => "--pipeline",
        Role::ContextParallel => "--context",
        Role::GlobalBatch => "-B/--global-batch",
        Role::SeqLen => "-L/--seq-len",
    });
    let message = match flag {
        Some(flag) => format!("{flag}: {}", err.message()),
        None => err.message(),
    };
    CliError::usage(format!("{message}; {}", err.fix().text))
}

fn solved_formula(role: Role, plan: &Plan) -> String {
    let b = plan.effective_batch().get();
    match role {
        Role::MicroBatch => format!(
            "m = B / (A·D) = {} / ({} × {}) = {}",
            group_digits(b),
            plan.accumulation(),
            plan.replicas(),
            plan.micro_batch()
        ),
        _ => format!(
            "A = B / (m·D) = {} / ({} × {}) = {}",
            group_digits(b),
            plan.micro_batch(),
            plan.replicas(),
            plan.accumulation()
        ),
    }
}

fn memory_estimate(args: &CalcArgs, plan: &Plan) -> Result<Option<MemoryEstimate>, CliError> {
    let (Some(params), Some(activation)) = (args.params, args.activation_per_example) else {
        return Ok(None);
    };
    memory_inputs(args, params, activation)
        .estimate(plan.micro_batch())
        .map(Some)
        .map_err(|err| CliError::usage(err.to_string()))
}

fn memory_inputs(args: &CalcArgs, params: u64, activation: ByteSize) -> MemoryInputs {
    let (weight_bytes, master_weights) = match args.precision {
        Precision::Fp32 => (4, false),
        Precision::Bf16 | Precision::Fp16 => (2, true),
    };
    MemoryInputs {
        params,
        weight_bytes,
        optimizer: match args.optimizer {
            Optimizer::Adamw => OptimizerState::Moments,
            Optimizer::SgdMomentum => OptimizerState::Momentum,
            Optimizer::Sgd => OptimizerState::Stateless,
        },
        master_weights,
        activation_per_example: activation,
    }
}

/// Why a scaling estimate that was asked for (`--device-throughput` and
/// `--bandwidth`) is not shown, when it is not.
pub(crate) fn scaling_note(args: &CalcArgs, shown: bool) -> Option<String> {
    if shown || args.device_throughput.is_none() {
        return None;
    }
    let why = if !args
        .device_throughput
        .is_some_and(|t| t.is_finite() && t > 0.0)
    {
        "a device throughput above 0 examples per second"
    } else if args.bandwidth.is_some_and(|b| b.get() == 0) {
        "a bandwidth above 0"
    } else {
        "the gradient bytes it reduces per update: add --grad-bytes SIZE or --params N"
    };
    Some(format!(
        "no scaling estimate (`{}`): it needs {why}",
        Code::Scaling
    ))
}

fn scaling_curve(args: &CalcArgs, plan: &Plan) -> Option<Vec<ScalingPoint>> {
    let throughput = args
        .device_throughput
        .filter(|t| t.is_finite() && *t > 0.0)?;
    let bandwidth = args.bandwidth.filter(|b| b.get() > 0)?;
    let grad_bytes = args.grad_bytes.or_else(|| {
        let per_param = match args.precision {
            Precision::Fp32 => 4,
            Precision::Bf16 | Precision::Fp16 => 2,
        };
        args.params
            .map(|p| ByteSize::new(p.saturating_mul(per_param)))
    })?;
    let inputs = ScalingInputs {
        device_examples_per_sec: throughput,
        gradient_bytes: grad_bytes,
        bandwidth_bytes_per_sec: bandwidth.get() as f64,
    };
    Some(inputs.curve(plan, plan.replicas()))
}

/// The length in every unit; a length that ends inside an update counts
/// that update, and says so.
fn span_report(staged: &StagedPlan, span: Span) -> Result<SpanReport, CliError> {
    let fail = |err: PlanError| CliError::usage(format!("--span {span}: {}", err.message()));
    let (updates, rounded) = match staged.span_to_updates(&span, Rounding::Exact) {
        Ok(updates) => (updates.get(), false),
        Err(PlanError::NotWholeUpdates { .. }) => (
            staged
                .span_to_updates(&span, Rounding::Up)
                .map_err(fail)?
                .get(),
            true,
        ),
        Err(err) => return Err(fail(err)),
    };
    // Exact lengths convert from what was written; a rounded one from the
    // whole updates it ends in, so that every unit says the same stretch.
    let from = |unit: UnitKind| -> Result<u64, CliError> {
        if unit == span.unit() && !rounded {
            return Ok(span.value());
        }
        staged
            .convert(updates, UnitKind::Update, unit, Rounding::Exact)
            .map_err(fail)
    };
    Ok(SpanReport {
        length: span,
        updates,
        microbatches: from(UnitKind::Microbatch)?,
        examples: from(UnitKind::Example)?,
        tokens: match staged.final_plan().seq_len() {
            Some(_) => Some(from(UnitKind::Token)?),
            None => None,
        },
        rounded,
    })
}

#[cfg(test)]
mod tests {
    use accum_core::plan::StageSpec;
    use clap::Parser;

    use super::*;
    use crate::calc::render_text;
    use crate::cli::{Cli, Command};
    use crate::error::Exit;

    fn report(args: &[&str]) -> Result<CalcReport, CliError> {
        let cli = Cli::try_parse_from(
            std::iter::once("accum")
                .chain(["calc"])
                .chain(args.iter().copied()),
        )
        .map_err(|e| CliError::usage(e.to_string()))?;
        let Command::Common(crate::cli::CommonCommand::Calc(calc)) = cli.command else {
            return Err(CliError::usage("not calc"));
        };
        compute(&calc)
    }

    #[test]
    fn seed_calculator_example() {
        let r = report(&["-m", "8", "-d", "64", "-a", "4", "-L", "4096"]).expect("valid");
        assert_eq!(r.effective_batch, 2048);
        assert_eq!(r.tokens_per_update, Some(8_388_608));
        assert_eq!(r.examples_per_replica_per_update, 32);
        assert_eq!(r.tokens_per_replica_per_update, Some(131_072));
        let text = render_text(&r);
        assert!(text.contains("B = m·A·D = 8 × 4 × 64 = 2,048"), "{text}");
        assert!(
            text.contains("T = B·L = 2,048 × 4,096 = 8,388,608"),
            "{text}"
        );
    }

    #[test]
    fn layout_and_solving() {
        let args: Vec<&str> = "-m 4 -a 8 --world-size 64 --tensor 2 --pipeline 2"
            .split_whitespace()
            .collect();
        let r = report(&args).expect("valid");
        assert_eq!((r.replicas, r.effective_batch), (16, 512));
        assert_eq!(
            r.formula.replicas.as_deref(),
            Some("D = world_size / (tp·pp·cp) = 64 / (2 × 2 × 1) = 16")
        );
        let r = report(&["-m", "8", "-d", "64", "--global-batch", "4096"]).expect("valid");
        assert_eq!((r.accumulation, r.solved), (8, Some(Role::Accumulation)));
        let err =
            report(&["-m", "8", "-d", "64", "--global-batch", "4000"]).expect_err("not divisible");
        assert_eq!(err.exit(), Exit::Usage);
        assert!(
            err.to_string()
                .contains("use global_batch = 3584 (accumulation = 7) or 4096 (accumulation = 8)"),
            "{err}"
        );
    }

    #[test]
    fn bad_values_are_usage_errors_with_the_flag() {
        let err = report(&["-m", "0", "-a", "1"]).expect_err("zero");
        assert!(
            err.to_string()
                .starts_with("-m/--micro-batch: micro_batch is 0"),
            "{err}"
        );
        let err =
            report(&["-m", "4294967296", "-a", "4294967296", "-d", "2"]).expect_err("overflow");
        assert!(
            err.to_string().contains("does not fit in a 64-bit count"),
            "{err}"
        );
        let err = report(&["-m", "2"]).expect_err("missing A");
        assert!(
            err.to_string()
                .starts_with("-a/--accum-steps: accumulation is missing"),
            "{err}"
        );
        let err = report(&["-m", "2", "-a", "1", "--world-size", "10", "--tensor", "4"])
            .expect_err("layout");
        assert!(
            err.to_string()
                .contains("use world_size = 8 (2 replicas) or 12 (3 replicas)"),
            "{err}"
        );
    }

    #[test]
    fn memory_and_scaling_estimates() {
        let r = report(&[
            "-m",
            "8",
            "-d",
            "4",
            "-a",
            "2",
            "--params",
            "1e6",
            "--activation-per-example",
            "1MiB",
            "--device-throughput",
            "100",
            "--bandwidth",
            "1GB",
        ])
        .expect("valid");
        let memory = r.memory.expect("requested");
        assert_eq!(memory.weights.get(), 4_000_000);
        assert_eq!(memory.activations.get(), 8 << 20);
        let points = r.scaling.expect("requested");
        assert_eq!(
            points.iter().map(|p| p.replicas).collect::<Vec<_>>(),
            vec![1, 2, 4]
        );
        assert!(points[2].efficiency < 1.0 && points[2].efficiency > 0.9);
    }

    fn plan(a: u64) -> accum_core::plan::Plan {
        PlanInput {
            micro_batch: Some(8),
            accumulation: Some(a),
            replicas: Some(2),
            seq_len: Some(100),
            ..PlanInput::default()
        }
        .resolve()
        .expect("a plan")
    }

    #[test]
    fn a_length_in_every_unit_through_the_stages() {
        let base = plan(4);
        let staged = StagedPlan::ramp_to(
            &base,
            &[StageSpec::accumulation(1).until(Span::new(10, UnitKind::Update))],
        )
        .expect("stages");
        // 10 updates at B 16 (A 1), then 10 at B 64 (A 4).
        let r = span_report(&staged, Span::new(20, UnitKind::Update)).expect("converts");
        assert_eq!(
            (r.updates, r.microbatches, r.examples, r.tokens, r.rounded),
            (20, 10 + 40, 160 + 640, Some(80_000), false)
        );
        // Back from examples: the same stretch.
        let r = span_report(&staged, Span::new(800, UnitKind::Example)).expect("converts");
        assert_eq!((r.updates, r.microbatches, r.rounded), (20, 50, false));
        // 200 examples end inside update 11 (160 + 64 > 200).
        let r = span_report(&staged, Span::new(200, UnitKind::Example)).expect("converts");
        assert_eq!((r.updates, r.examples, r.rounded), (11, 224, true));
    }

    #[test]
    fn a_constant_plan_converts_by_its_ratios() {
        let r = span_report(
            &StagedPlan::constant(plan(4)),
            Span::new(2000, UnitKind::Update),
        )
        .expect("converts");
        assert_eq!(
            (r.microbatches, r.examples, r.tokens),
            (8_000, 128_000, Some(12_800_000))
        );
    }
}
