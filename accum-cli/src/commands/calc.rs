//! `accum calc`: the effective-batch calculator (`accum::calc::tokens`), with an optional
//! batch ramp-up shown stage by stage, per-device memory (`accum::run::memory`) and
//! data-parallel scaling (`accum::calc::scaling`) estimates.

use std::fmt::Write as _;

use accum_core::estimate::{
    ByteSize, MemoryEstimate, MemoryInputs, OptimizerKind, ScalingInputs, ScalingPoint,
};
use accum_core::plan::{
    Layout, Plan, PlanError, PlanInput, Role, Rounding, StageError, StagedPlan,
};
use accum_core::{Span, UnitKind, Updates, group_digits};
use serde::Serialize;

use crate::cli::{CalcArgs, Format, Optimizer, Precision};
use crate::error::{CliError, Exit};
use crate::output::{print_json, print_text};

/// The JSON document of `accum calc --format json`. Keys are stable.
#[derive(Debug, Serialize)]
struct CalcReport {
    micro_batch: u64,
    accumulation: u64,
    replicas: u64,
    effective_batch: u64,
    seq_len: Option<u64>,
    tokens_per_update: Option<u64>,
    examples_per_replica_per_update: u64,
    tokens_per_replica_per_update: Option<u64>,
    microbatches_per_update: u64,
    layout: Option<Layout>,
    solved: Option<Role>,
    formula: Formulas,
    memory: Option<MemoryEstimate>,
    scaling: Option<Vec<ScalingPoint>>,
    /// The stages of a batch ramp-up (`--stage`, `--ramp`), the last one at
    /// the full batch above.
    stages: Option<Vec<StageReport>>,
    /// What the stages before the full batch consume.
    ramp_up: Option<Amounts>,
    /// The run's length (`--total`) in every unit, through the stages.
    run: Option<RunReport>,
    /// Each `--span` in every unit, through the stages.
    spans: Vec<super::calc_span::SpanReport>,
}

/// One stage of a ramp-up. Keys are stable.
#[derive(Debug, Serialize)]
struct StageReport {
    /// The stage, counted from 1.
    stage: usize,
    /// The index of its first update (0-based: the updates before it).
    start_update: u64,
    global_batch: u64,
    accumulation: u64,
    tokens_per_update: Option<u64>,
    /// Examples and tokens consumed before the stage.
    examples_before: u64,
    tokens_before: Option<u64>,
    /// Whether this is the last stage, which lasts to the end of the run.
    to_the_end: bool,
    /// What the stage lasts; for the last one, up to the run's end when
    /// `--total` is given, else nothing.
    lasts: Option<Amounts>,
}

/// A length in updates, examples and tokens.
#[derive(Debug, Serialize)]
struct Amounts {
    updates: u64,
    examples: u64,
    tokens: Option<u64>,
}

/// The run's length through the stages.
#[derive(Debug, Serialize)]
struct RunReport {
    /// As given.
    length: Span,
    /// In whole updates (a partial update counts).
    updates: u64,
    examples: u64,
    tokens: Option<u64>,
    /// The stage (from 1) of the run's last update.
    ends_in_stage: usize,
}

#[derive(Debug, Serialize)]
struct Formulas {
    effective_batch: String,
    tokens_per_update: Option<String>,
    replicas: Option<String>,
    solved: Option<String>,
}

pub(crate) fn run(args: &CalcArgs) -> Result<Exit, CliError> {
    let report = compute(args)?;
    match args.format {
        Format::Json => print_json(&report)?,
        Format::Text => {
            print_text(&render_text(&report))?;
            if args.params.is_some()
                && args.activation_per_example.is_none()
                && args.device_throughput.is_none()
            {
                eprintln!(
                    "note: --params alone gives no estimate: the memory estimate also needs --activation-per-example SIZE (one example's activations, which grow with m while weights, gradients and optimizer state do not); the scaling estimate needs --device-throughput and --bandwidth"
                );
            }
        }
    }
    Ok(Exit::Ok)
}

fn compute(args: &CalcArgs) -> Result<CalcReport, CliError> {
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
        Some(total) => Some(run_report(&staged, total)?),
        None => None,
    };
    let spans = args
        .spans
        .iter()
        .map(|span| super::calc_span::span_report(&staged, *span))
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
fn run_report(staged: &StagedPlan, total: Span) -> Result<RunReport, CliError> {
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
    Ok(RunReport {
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
            Optimizer::Adamw => OptimizerKind::AdamW,
            Optimizer::SgdMomentum => OptimizerKind::SgdMomentum,
            Optimizer::Sgd => OptimizerKind::Sgd,
        },
        master_weights,
        activation_per_example: activation,
    }
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

fn render_text(r: &CalcReport) -> String {
    let mut out = String::new();
    let n = group_digits;
    let _ = writeln!(
        out,
        "effective batch     {} examples per update",
        n(r.effective_batch)
    );
    let _ = writeln!(out, "  {}", r.formula.effective_batch);
    if let Some(replicas) = &r.formula.replicas {
        let _ = writeln!(
            out,
            "  {replicas}   (tensor/pipeline/context devices share one model copy)"
        );
    }
    if let Some(solved) = &r.formula.solved {
        let _ = writeln!(out, "  {solved}   (solved from --global-batch, exactly)");
    }
    match (&r.tokens_per_update, &r.formula.tokens_per_update) {
        (Some(tokens), Some(formula)) => {
            let _ = writeln!(out, "tokens per update   {} tokens", n(*tokens));
            let _ = writeln!(out, "  {formula}");
        }
        _ => {
            let _ = writeln!(
                out,
                "tokens per update   unknown without -L/--seq-len (variable lengths need token accounting)"
            );
        }
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "per replica (each of {})", n(r.replicas));
    let _ = writeln!(
        out,
        "  micro-batch       {} examples per forward/backward pass",
        n(r.micro_batch)
    );
    let _ = writeln!(
        out,
        "  microbatches      {} per update (gradients synchronised once, after the last)",
        n(r.microbatches_per_update)
    );
    let _ = writeln!(
        out,
        "  examples          {} per update",
        n(r.examples_per_replica_per_update)
    );
    if let Some(tokens) = r.tokens_per_replica_per_update {
        let _ = writeln!(out, "  tokens            {} per update", n(tokens));
    }
    if let Some(stages) = &r.stages {
        render_stages(&mut out, stages, r.ramp_up.as_ref());
    }
    if let Some(run) = &r.run {
        let _ = writeln!(out);
        let tokens = run
            .tokens
            .map_or_else(String::new, |t| format!(", {} tokens", n(t)));
        let stage = if r.stages.is_some() {
            format!(" (ends in stage {})", run.ends_in_stage)
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "the run ({})   {} updates, {} examples{tokens}{stage}",
            run.length,
            n(run.updates),
            n(run.examples)
        );
    }
    super::calc_span::render(&mut out, &r.spans, r.stages.is_some());
    if let Some(memory) = &r.memory {
        let _ = writeln!(out);
        let _ = writeln!(out, "memory per device (estimate)");
        let _ = writeln!(out, "  weights           {}", memory.weights);
        let _ = writeln!(out, "  gradients         {}", memory.gradients);
        let _ = writeln!(out, "  optimizer state   {}", memory.optimizer_state);
        let _ = writeln!(
            out,
            "  activations       {}   (per example × m = {}; independent of A)",
            memory.activations, r.micro_batch
        );
        let _ = writeln!(out, "  total             {}", memory.total);
    }
    if let Some(points) = &r.scaling {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "data-parallel scaling (estimate: one gradient all-reduce per update)"
        );
        let _ = writeln!(
            out,
            "  {:>8}  {:>10}  {:>11}  {:>10}  {:>12}  {:>10}",
            "replicas", "batch", "compute s", "comm s", "examples/s", "efficiency"
        );
        for p in points {
            let _ = writeln!(
                out,
                "  {:>8}  {:>10}  {:>11.4}  {:>10.4}  {:>12.1}  {:>9.1}%",
                p.replicas,
                n(p.effective_batch),
                p.compute_sec,
                p.comm_sec,
                p.examples_per_sec,
                p.efficiency * 100.0
            );
        }
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "note: D counts data-parallel replicas only; tokens assume a fixed sequence length."
    );
    out
}

/// The stages as a table: where each starts, its batch, and what it lasts.
fn render_stages(out: &mut String, stages: &[StageReport], ramp_up: Option<&Amounts>) {
    let n = group_digits;
    let tokens = stages.iter().all(|s| s.tokens_per_update.is_some());
    let mut header = vec!["stage", "from update", "B", "A"];
    if tokens {
        header.push("tokens/update");
    }
    header.extend(["updates", "examples"]);
    if tokens {
        header.push("tokens");
    }
    let rows: Vec<Vec<String>> = stages
        .iter()
        .map(|s| {
            let mut row = vec![
                s.stage.to_string(),
                n(s.start_update),
                n(s.global_batch),
                n(s.accumulation),
            ];
            if let Some(per) = s.tokens_per_update.filter(|_| tokens) {
                row.push(n(per));
            }
            match &s.lasts {
                Some(lasts) => {
                    row.push(n(lasts.updates));
                    row.push(n(lasts.examples));
                    if let Some(t) = lasts.tokens.filter(|_| tokens) {
                        row.push(n(t));
                    }
                }
                None => {
                    let cells = if tokens { 3 } else { 2 };
                    row.extend(std::iter::repeat_n("to the end".to_owned(), cells));
                }
            }
            row
        })
        .collect();
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            rows.iter()
                .map(|row| row[c].chars().count())
                .chain([header[c].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| {
        let cells: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:>width$}"))
            .collect();
        format!("  {}", cells.join("  "))
    };
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "batch ramp-up: {} stages; m and D stay, A (so B) changes between updates",
        stages.len()
    );
    let header: Vec<String> = header.iter().map(|h| (*h).to_owned()).collect();
    let _ = writeln!(out, "{}", line(&header));
    for row in &rows {
        let _ = writeln!(out, "{}", line(row));
    }
    if let Some(ramp_up) = ramp_up {
        let tokens = ramp_up
            .tokens
            .map_or_else(String::new, |t| format!(", {} tokens", n(t)));
        let _ = writeln!(
            out,
            "  before the full batch: {} updates, {} examples{tokens}",
            n(ramp_up.updates),
            n(ramp_up.examples)
        );
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Command};

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
                .contains("use global_batch 3,584 (accumulation 7) or 4,096 (accumulation 8)"),
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
                .contains("use world_size 8 (2 replicas) or 12 (3 replicas)"),
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
}
