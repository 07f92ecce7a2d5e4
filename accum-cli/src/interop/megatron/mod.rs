//! Megatron-LM's arguments, as in the launch scripts people use.
//!
//! Megatron computes `D = world / (tp·pp·cp)`, asserting the division is
//! exact (`megatron/training/arguments.py`, `validate_args`), defaults the
//! global batch to `micro × D`, and takes `A = global / (micro·D)`, asserting
//! that too (`megatron/core/num_microbatches_calculator.py`,
//! `ConstantNumMicroBatchesCalculator`). `--train-iters`, `--lr-warmup-iters`
//! and `--log-interval` count iterations, one optimizer update each;
//! `--train-samples` and `--lr-warmup-samples` count examples.

mod args;
mod export;
mod ramp;
pub(crate) mod schedules;
mod settings;
mod shell;

use std::ops::Range;

use accum_core::Code;
use accum_core::config::ParallelSection;
use accum_core::plan::{LastGroup, Layout, PlanInput};

pub(crate) use export::export;
pub(crate) use ramp::{RAMP_REMOVED, linear_ramp};

use self::args::{Arg, Invocation, NNODES, NPROC};
use self::shell::Field;
use super::census;
use super::dialect::{Dialect, FrameworkBatch, LastGroupRule, LossRule, Reading, plan_finding};
use super::reader::python_number;
use super::{BatchSchedule, FileReport, Framework, ImportError, ImportOptions};
use crate::diagnostic::{Diagnostic, Severity};

/// The Megatron-LM dialect.
pub(crate) struct Megatron;

impl Dialect for Megatron {
    const FRAMEWORK: Framework = Framework::Megatron;

    fn read(name: &str, text: &str, opts: &ImportOptions) -> Result<Reading, ImportError> {
        let top = 0..text.find(|c: char| !c.is_whitespace()).unwrap_or(0);
        let mut notes = Vec::new();
        let invocation = if args::is_yaml(name, text) {
            let (invocation, read) =
                args::from_yaml(name, text, &opts.env).map_err(|(message, span)| {
                    let (line, column) =
                        span.map_or((1, 1), |s| crate::source::line_col(text, s.start));
                    ImportError::Syntax {
                        name: name.to_owned(),
                        line,
                        column,
                        message: format!("invalid YAML: {message}"),
                    }
                })?;
            notes = read;
            invocation
        } else {
            match args::from_script(text, &opts.env) {
                Ok(Some(inv)) => inv,
                Err(limit) => {
                    let finding = Diagnostic::error(Code::Limit, Vec::new(), limit.message)
                        .help(limit.help)
                        .at(limit.span, "the reader stopped here");
                    return Ok(Reading {
                        files: vec![report(name, text, vec![finding], Vec::new())],
                        batch: None,
                    });
                }
                Ok(None) => {
                    let finding = Diagnostic::error(
                        Code::Missing,
                        vec!["--micro-batch-size".into()],
                        "no command here passes --micro-batch-size or --global-batch-size, so there is no Megatron-LM run to read",
                    )
                    .help("give the launch script or the argument list of the run (the command that runs pretrain_*.py)")
                    .at(top, "no Megatron-LM run");
                    return Ok(Reading {
                        files: vec![report(name, text, vec![finding], Vec::new())],
                        batch: None,
                    });
                }
            }
        };
        // Every value of the file is an argument of the run.
        let mut a = Args {
            inv: invocation,
            findings: notes.iter().map(super::reader::note_finding).collect(),
        };
        let batch = read(&mut a, opts);
        let unread = census::unread_args(
            a.inv.launcher.iter().chain(&a.inv.megatron).map(|x| {
                (
                    x.name.as_str(),
                    x.value().map(|v| v.text.as_str()),
                    x.span.clone(),
                )
            }),
            |n| READ.contains(&n) || NPROC.contains(&n) || NNODES.contains(&n),
        );
        Ok(Reading {
            files: vec![report(name, text, a.findings, unread)],
            batch,
        })
    }
}

/// Where the run's batch arguments are written in a script: the start of
/// each `--micro-batch-size` and `--global-batch-size` of the command read.
#[cfg(test)]
pub(crate) fn batch_argument_starts(text: &str, env: &[(String, String)]) -> Vec<usize> {
    args::from_script(text, env)
        .ok()
        .flatten()
        .map(|inv| {
            inv.megatron
                .iter()
                .filter(|a| a.name == "--micro-batch-size" || a.name == "--global-batch-size")
                // The span runs from the option to its value, which may be
                // written earlier (`MBS=1`): the option is the last of its
                // name before the span's end.
                .filter_map(|a| text.get(..a.span.end)?.rfind(a.name.as_str()))
                .collect()
        })
        .unwrap_or_default()
}

/// The arguments of the batch vocabulary this reader reads (the launcher's
/// are [`NPROC`] and [`NNODES`]); any other is named by the census.
const READ: &[&str] = &[
    "--micro-batch-size",
    "--global-batch-size",
    "--tensor-model-parallel-size",
    "--pipeline-model-parallel-size",
    "--context-parallel-size",
    "--expert-model-parallel-size",
    "--expert-tensor-parallel-size",
    "--rampup-batch-size",
    "--step-batch-size-schedule",
    "--decrease-batch-size-if-needed",
    "--ds-sequence-parallel-size",
];

fn report(
    name: &str,
    text: &str,
    findings: Vec<Diagnostic>,
    unread: Vec<census::Unread>,
) -> FileReport {
    FileReport {
        name: name.to_owned(),
        text: text.to_owned(),
        findings,
        unread,
        named_inside: false,
    }
}

struct Args {
    inv: Invocation,
    findings: Vec<Diagnostic>,
}

/// What a value is: known, unknown (and why), or not a number.
enum Got<T> {
    Absent,
    Value(T, Range<usize>),
    /// The finding was pushed.
    Bad,
}

impl Args {
    fn get(&self, name: &str) -> Option<&Arg> {
        self.inv.megatron.iter().rev().find(|a| a.name == name)
    }

    fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    fn path(name: &str) -> Vec<String> {
        vec![name.to_owned()]
    }

    /// A value that depends on something the script does not set.
    fn unknown(&mut self, name: &str, field: &Field) {
        let what = crate::output::listed(&field.unknown);
        let vars: Vec<&str> = field
            .unknown
            .iter()
            .filter_map(|u| u.strip_prefix("`$").and_then(|u| u.strip_suffix('`')))
            .map(|u| u.trim_start_matches('{').trim_end_matches('}'))
            .collect();
        let help = if vars.is_empty() {
            format!("write {name} as a number in the script")
        } else {
            format!(
                "set it in the script, or give it: {}",
                vars.iter()
                    .map(|v| format!("--env {v}=N"))
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        };
        self.findings.push(
            Diagnostic::error(
                Code::Missing,
                Args::path(name),
                format!(
                    "{name} is `{}`, which depends on {what}: the script does not say its value",
                    field.text
                ),
            )
            .help(help)
            .at(field.span(), "value unknown"),
        );
    }

    fn bad(&mut self, name: &str, field: &Field, what: &str) {
        self.refuse(Code::InteropValue, name, field, what);
    }

    /// A finding of `code` that option `name` is not `what`.
    fn refuse(&mut self, code: Code, name: &str, field: &Field, what: &str) {
        self.findings.push(
            Diagnostic::error(
                code,
                Args::path(name),
                format!("{name} is given `{}`, not {what}", field.text),
            )
            .help(format!("write {name} with {what}"))
            .at(field.span(), format!("expected {what}")),
        );
    }

    /// An option's value; an option written without one is a finding (as
    /// argparse refuses it: "expected one argument"), never a silent `None`.
    fn value_of(&mut self, arg: &Arg, name: &str) -> Option<Field> {
        if let Some(field) = arg.value() {
            return Some(field.clone());
        }
        self.findings.push(
            Diagnostic::error(
                Code::InteropValue,
                Args::path(name),
                format!("{name} has no value"),
            )
            .help(format!("write {name} VALUE"))
            .at(arg.span.clone(), "value missing"),
        );
        None
    }

    /// A whole number ≥ `min`, as Python's `int()` reads it (`220_000_000`).
    fn uint(&mut self, name: &str, min: u64) -> Got<u64> {
        let Some(arg) = self.get(name).cloned() else {
            return Got::Absent;
        };
        let Some(field) = self.value_of(&arg, name) else {
            return Got::Bad;
        };
        let field = &field;
        if !field.unknown.is_empty() {
            self.unknown(name, field);
            return Got::Bad;
        }
        let whole = python_number(&field.text).and_then(|n| match n {
            super::reader::Number::Int(i) => Some(i),
            super::reader::Number::Float(_) => None,
        });
        match whole.and_then(|i| u64::try_from(i).ok()) {
            Some(v) if v >= min => Got::Value(v, field.span()),
            _ => {
                let code = super::census::refused_code(&[name], whole);
                self.refuse(code, name, field, &format!("a whole number ≥ {min}"));
                Got::Bad
            }
        }
    }

    /// `uint` for values that do not matter for the batch: unknown is absent.
    fn soft_uint(&mut self, name: &str, min: u64) -> Option<(u64, Range<usize>)> {
        if self
            .get(name)
            .and_then(Arg::value)
            .is_some_and(|f| !f.unknown.is_empty())
        {
            return None;
        }
        match self.uint(name, min) {
            Got::Value(v, s) => Some((v, s)),
            _ => None,
        }
    }

    /// A whole number ≥ 1 when it is one, with no finding (the value's
    /// own reading says what is wrong with it).
    fn quiet_uint(&self, name: &str) -> Option<(u64, Range<usize>)> {
        let field = self.get(name)?.value()?;
        if !field.unknown.is_empty() {
            return None;
        }
        match python_number(&field.text)?.whole() {
            Some(v) if v >= 1 => Some((u64::try_from(v).ok()?, field.span())),
            _ => None,
        }
    }

    fn float(&mut self, name: &str) -> Option<(f64, Range<usize>)> {
        let arg = self.get(name).cloned()?;
        let field = &self.value_of(&arg, name)?;
        if !field.unknown.is_empty() {
            return None;
        }
        match python_number(&field.text).map(super::reader::Number::as_f64) {
            Some(v) if v.is_finite() && v >= 0.0 => Some((v, field.span())),
            _ => {
                self.bad(name, field, "a finite number ≥ 0");
                None
            }
        }
    }

    fn launcher(&self, names: &[&str]) -> Option<&Arg> {
        self.inv
            .launcher
            .iter()
            .rev()
            .find(|a| names.contains(&a.name.as_str()))
    }
}

/// Megatron's reading of the arguments; `None` when it has no batch.
fn read(a: &mut Args, opts: &ImportOptions) -> Option<FrameworkBatch> {
    let top = a.inv.span.clone();
    duplicates(a);

    // The world size: the options, or the launcher in front of the script.
    let world = world_size(a, opts, &top)?;

    // arguments.py, validate_args: `assert args.micro_batch_size is not None`.
    let m = match a.uint("--micro-batch-size", 1) {
        Got::Value(m, _) => m,
        Got::Bad => return None,
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
            return None;
        }
    };
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
            let span = a
                .get("--tensor-model-parallel-size")
                .or(a.get("--pipeline-model-parallel-size"))
                .map_or(top.clone(), |x| x.span.clone());
            a.findings.push(
                plan_finding(&err, Args::path("--tensor-model-parallel-size"), span).help(
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
    if ep > 1 && world % expert != 0 {
        let span = a
            .get("--expert-model-parallel-size")
            .map_or(top.clone(), |x| x.span.clone());
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
            .at(span, "expert grid does not fit"),
        );
        return None;
    }

    // The global batch: given, a step schedule, or micro × D.
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
    if let (Some(_), Some((g, span))) = (&steps, &global) {
        a.findings.push(
            Diagnostic::error(
                Code::EngineAssert,
                Args::path("--global-batch-size"),
                format!("Megatron would stop at start-up: \"Cannot specify both --step-batch-size-schedule and --global-batch-size\" (--global-batch-size {g})"),
            )
            .help("remove --global-batch-size: the schedule's last batch is the global batch")
            .at(span.clone(), "given with a step schedule"),
        );
    }
    let final_global = steps
        .as_ref()
        .and_then(|s| s.steps.last().map(|x| x.global_batch))
        .or(global.as_ref().map(|g| g.0));
    let b_span = global
        .as_ref()
        .map(|g| g.1.clone())
        .or_else(|| a.get("--step-batch-size-schedule").map(|x| x.span.clone()))
        .or_else(|| a.get("--micro-batch-size").map(|x| x.span.clone()))
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
                .at(b_span.clone(), "decreased by Megatron"),
            );
            running = Some(rounded).filter(|&r| r > 0);
        } else if steps.is_none()
            && let Some(finding) = ramp_refusal(a, g, m, replicas, step, &b_span)
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
                .at(b_span.clone(), "not a multiple of micro × D"),
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
            .at(b_span.clone(), "counts model-parallel devices"),
        );
    }

    let plan = match (PlanInput {
        micro_batch: Some(m),
        accumulation: if running.is_none() { Some(1) } else { None },
        replicas: None,
        layout: Some(layout),
        seq_len,
        global_batch: running,
    })
    .resolve()
    {
        Ok(plan) => plan,
        Err(err) => {
            a.findings.push(plan_finding(
                &err,
                Args::path("--global-batch-size"),
                b_span,
            ));
            return None;
        }
    };

    let (staged, schedule) = schedules::resolve(
        a,
        &plan,
        steps.as_ref(),
        global.as_ref().map(|g| g.0),
        decrease,
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

    let per_token = a.has("--calculate-per-token-loss");
    let loss = if per_token {
        LossRule::PerToken
    } else {
        LossRule::MicrobatchMean(
            Diagnostic::error(
                Code::PerToken,
                Args::path("--calculate-per-token-loss"),
                format!(
                    "without --calculate-per-token-loss Megatron averages each microbatch over its own tokens and then averages the {} microbatches and {replicas} replicas: with variable lengths that is a mean of means, not the per-token mean of the group",
                    plan.accumulation()
                ),
            )
            .help("add --calculate-per-token-loss so that the loss is divided by the tokens of the whole global batch")
            .at(top.clone(), "per-token loss off"),
        )
    };
    let parallel = Some(ParallelSection {
        world_size: world,
        tensor: tp_given,
        pipeline: pp_given,
        context: cp_given,
    });
    Some(FrameworkBatch {
        plan,
        parallel,
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
            span: b_span,
        },
    })
}

/// Stages a ramp-up reads at most, for the batches a run reaches.
const RAMP_STAGES: usize = 100_000;

/// A ramp-up whose global batch is not a multiple of `micro × D`: the
/// ramp-up calculator checks the batch of each iteration as it reaches it
/// (`RampupBatchsizeNumMicroBatchesCalculator.update`, `consistency_check`),
/// so Megatron stops at the first batch of the ramp that is not a multiple,
/// and only when the run reaches it (`--train-samples`). `None` without a
/// ramp-up the calculator accepts.
fn ramp_refusal(
    a: &mut Args,
    global: u64,
    m: u64,
    replicas: u64,
    step: u64,
    span: &Range<usize>,
) -> Option<Diagnostic> {
    let (values, ramp_span) = ramp::rampup_values(a)??;
    // The calculator's own start-up checks come first
    // (`RampupBatchsizeNumMicroBatchesCalculator.__init__`).
    if let Some(says) = ramp::init_refusal(values, global) {
        return Some(
            Diagnostic::error(
                Code::EngineAssert,
                Args::path("--rampup-batch-size"),
                format!("Megatron would stop at start-up: {says}"),
            )
            .help("write a ramp-up from a start at most the global batch, in whole increments up to it")
            .at(ramp_span, "ramp-up refused"),
        );
    }
    let batches = ramp::reached(values, global, RAMP_STAGES)?;
    let (bad, consumed) = *batches.iter().find(|(b, _)| b % step != 0)?;
    let train = a.quiet_uint("--train-samples").map(|v| v.0);
    let assert = format!(
        "\"current global batch size ({bad}) is not divisible by micro-batch-size ({m}) times data parallel size ({replicas})\""
    );
    if let Some(t) = train
        && consumed >= t
    {
        let last = batches
            .iter()
            .take_while(|(_, c)| *c < t)
            .last()
            .map_or(values[0], |x| x.0);
        return Some(
            Diagnostic::error(
                Code::GlobalBatch,
                Args::path("--global-batch-size"),
                format!(
                    "the run ends (--train-samples {t}) before the ramp-up reaches global batch {bad}, the first that is not a multiple of micro {m} × D {replicas} = {step}, so Megatron trains it, up to global batch {last}; but --global-batch-size {global} is not a multiple of {step}, and accum plans a ramp-up to it"
                ),
            )
            .help(format!(
                "write --global-batch-size {last} with a ramp-up that ends there, or a multiple of {step} that the ramp reaches"
            ))
            .at(span.clone(), "never reached"),
        );
    }
    let when = if consumed == 0 {
        "at its first iteration".to_owned()
    } else {
        format!("once {consumed} samples are consumed, when the ramp-up reaches global batch {bad}")
    };
    Some(
        Diagnostic::error(
            Code::EngineAssert,
            Args::path("--rampup-batch-size"),
            format!("Megatron would stop {when}: update() asserts {assert}"),
        )
        .help(format!(
            "make the ramp-up's start and increment multiples of micro × D = {step}"
        ))
        .at(ramp_span, "ramp-up reaches this batch"),
    )
}

/// A run that ends (`--train-samples`) before the ramp-up reaches its last
/// batch: the batch it reaches is named, as the run never trains the
/// global batch.
fn ramp_cut_short(a: &mut Args, staged: &accum_core::plan::StagedPlan, global: u64) {
    let Some((t, span)) = a.quiet_uint("--train-samples") else {
        return;
    };
    let stages = staged.stages();
    let reached = stages
        .iter()
        .take_while(|s| s.examples_before().get() < t)
        .count();
    if reached == 0 || reached >= stages.len() {
        return;
    }
    let last = stages[reached - 1].plan().effective_batch().get();
    a.findings.push(
        Diagnostic::error(
            Code::StageShift,
            Args::path("--train-samples"),
            format!(
                "the run ends (--train-samples {t}) in the ramp-up: the largest global batch it trains is {last}, in stage {reached} of {}; it never reaches --global-batch-size {global}",
                stages.len()
            ),
        )
        .warning()
        .help(format!(
            "train at least {} samples to reach the global batch {global}, or write the batch the run trains",
            stages[stages.len() - 1].examples_before().get()
        ))
        .at(span, "ends in the ramp-up"),
    );
}

/// argparse keeps the last of a repeated option: a warning when the values
/// differ (the same value twice changes nothing).
fn duplicates(a: &mut Args) {
    let mut dups = Vec::new();
    for (i, arg) in a.inv.megatron.iter().enumerate() {
        let later = a.inv.megatron[i + 1..].iter().find(|x| x.name == arg.name);
        if let Some(later) = later {
            let texts = |x: &Arg| x.values.iter().map(|v| v.text.clone()).collect::<Vec<_>>();
            if texts(arg) != texts(later) {
                dups.push((arg.clone(), texts(later).join(" ")));
            }
        }
    }
    for (d, kept) in dups {
        a.findings.push(
            Diagnostic::error(
                Code::InteropValue,
                Args::path(&d.name),
                format!(
                    "{} is given more than once with different values; argparse keeps the last one ({kept})",
                    d.name
                ),
            )
            .warning()
            .help("remove the occurrence that is not meant")
            .at(d.span.clone(), "overridden later"),
        );
    }
}

/// The world size: the options, or the launcher's `nproc × nnodes`.
fn world_size(a: &mut Args, opts: &ImportOptions, top: &Range<usize>) -> Option<u64> {
    let given = super::dialect::world_from_options(opts);
    // The launcher's count, with the environment variables it took a
    // default for (`${SLURM_NNODES:-1}`).
    type Count = (u64, Range<usize>, Vec<String>);
    let read = |arg: Option<&Arg>| -> Result<Option<Count>, Box<Field>> {
        let Some(field) = arg.and_then(Arg::value) else {
            return Ok(None);
        };
        if !field.unknown.is_empty() {
            return Err(Box::new(field.clone()));
        }
        match python_number(&field.text).and_then(|n| match n {
            super::reader::Number::Int(i) => u64::try_from(i).ok().filter(|&v| v >= 1),
            super::reader::Number::Float(_) => None,
        }) {
            Some(v) => Ok(Some((v, field.span(), field.defaults.clone()))),
            None => Err(Box::new(field.clone())),
        }
    };
    let nproc = read(a.launcher(NPROC));
    let nnodes = read(a.launcher(NNODES));
    let launched = match (&nproc, &nnodes) {
        (Ok(Some((n, s, d))), Ok(k)) => {
            let mut defaults = d.clone();
            defaults.extend(k.iter().flat_map(|k| k.2.iter().cloned()));
            defaults.sort();
            defaults.dedup();
            Ok(Some((
                n.saturating_mul(k.as_ref().map_or(1, |k| k.0)),
                s.clone(),
                defaults,
            )))
        }
        (Ok(None), _) => Ok(None),
        (Err(f), _) | (_, Err(f)) => Err(f.clone()),
    };
    match (given, launched) {
        // The value given wins over the script's defaults for variables of
        // the environment: the job's environment sets them, and accum does
        // not see it (`--env` gives them exactly).
        (Some(w), Ok(Some((l, span, defaults)))) if w != l && !defaults.is_empty() => {
            let vars: Vec<String> = defaults.iter().map(|d| format!("`{d}`")).collect();
            a.findings.push(
                Diagnostic::error(
                    Code::InteropWorldSize,
                    Args::path("--nproc-per-node"),
                    format!(
                        "the launcher here starts {l} processes only with the script's defaults for {}, which the job's environment sets; accum uses the world size given, {w}",
                        crate::output::listed(&vars)
                    ),
                )
                .warning()
                .help(format!(
                    "to read the launcher's count exactly, give the environment instead of --world-size: {}",
                    defaults
                        .iter()
                        .map(|d| format!("--env {d}=N"))
                        .collect::<Vec<_>>()
                        .join(" ")
                ))
                .at(span, "count from environment defaults"),
            );
            Some(w)
        }
        (Some(w), Ok(Some((l, span, _)))) if w != l => {
            a.findings.push(
                Diagnostic::error(
                    Code::InteropWorldSize,
                    Args::path("--nproc-per-node"),
                    format!("the world size given is {w}, but the launcher here starts {l} processes (processes per node × nodes)"),
                )
                .warning()
                .help("make the launcher and --world-size agree; accum uses the launcher's count")
                .at(span, "launcher's count"),
            );
            Some(l)
        }
        (_, Ok(Some((l, _, _)))) => Some(l),
        // The launcher's values do not matter when the world size is given.
        (Some(w), _) => Some(w),
        (None, Err(field)) => {
            let vars: Vec<String> = field
                .unknown
                .iter()
                .filter_map(|u| u.strip_prefix("`$").and_then(|u| u.strip_suffix('`')))
                .map(|u| {
                    format!(
                        "--env {}=N",
                        u.trim_start_matches('{').trim_end_matches('}')
                    )
                })
                .collect();
            a.findings.push(
                Diagnostic::error(
                    Code::Missing,
                    vec![],
                    format!(
                        "the world size depends on the launcher's `{}`, which the script does not set ({})",
                        field.text,
                        if field.unknown.is_empty() { "not a whole number".to_owned() } else { crate::output::listed(&field.unknown) }
                    ),
                )
                .help(if vars.is_empty() {
                    "give the launcher's world size (--world-size N)".to_owned()
                } else {
                    format!("give the launcher's world size (--world-size N), or {}", vars.join(" "))
                })
                .at(field.span(), "world size unknown"),
            );
            None
        }
        (None, Ok(None)) => {
            a.findings.push(
                Diagnostic::error(
                    Code::Missing,
                    vec![],
                    "the world size is not in Megatron's arguments: it comes from the launcher",
                )
                .help(
                    "give the launcher's world size (--world-size N), or include the torchrun line",
                )
                .at(top.clone(), "world size needed"),
            );
            None
        }
    }
}
