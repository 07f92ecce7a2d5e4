//! Megatron-LM's arguments, as in the launch scripts people use.
//!
//! Megatron computes `D = world / (tp·pp·cp)`, asserting the division is
//! exact (`megatron/training/arguments.py`, `validate_args`), defaults the
//! global batch to `micro × D`, and takes `A = global / (micro·D)`, asserting
//! that too (`megatron/core/num_microbatches_calculator.py`,
//! `ConstantNumMicroBatchesCalculator`). `--train-iters`, `--lr-warmup-iters`
//! and `--log-interval` count iterations, one optimizer update each;
//! `--train-samples` and `--lr-warmup-samples` count examples.

//!
//! The reader is split by what it does: [`args`] finds the command and its
//! options in a script or a YAML file, [`arguments`] reads their values as
//! argparse does, [`world`] takes the world size, [`ramp`] and
//! [`schedules`] the batch that changes during the run, [`verdict`] the
//! batch Megatron trains with, and [`settings`] the other keys.

mod args;
mod arguments;
mod export;
mod ramp;
pub(crate) mod schedules;
mod settings;
mod shell;
mod verdict;
mod world;

use accum_core::Code;

pub(crate) use export::export;
pub(crate) use ramp::{RAMP_REMOVED, linear_ramp};

use self::args::{NNODES, NPROC};
use self::arguments::Args;
use super::census;
use super::dialect::{Dialect, Reading};
use super::{FileReport, Framework, ImportError, ImportOptions};
use crate::diagnostic::Diagnostic;

/// The Megatron-LM dialect.
pub(crate) struct Megatron;

impl Dialect for Megatron {
    const FRAMEWORK: Framework = Framework::Megatron;

    fn read(name: &str, text: &str, opts: &ImportOptions) -> Result<Reading, ImportError> {
        let top = 0..text.find(|c: char| !c.is_whitespace()).unwrap_or(0);
        let mut notes = Vec::new();
        let invocation = if args::is_yaml(name, text) {
            let (invocation, read) =
                args::from_yaml(name, text, &opts.env).map_err(|(message, range)| {
                    let (line, column) =
                        range.map_or((1, 1), |s| crate::source::line_col(text, s.start));
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
                        .at(limit.range, "the reader stopped here");
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
        let batch = verdict::read(&mut a, opts);
        let unread = census::unread_args(
            a.inv.launcher.iter().chain(&a.inv.megatron).map(|x| {
                (
                    x.name.as_str(),
                    x.value().map(|v| v.text.as_str()),
                    x.range.clone(),
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

/// The options of the Megatron-LM command of a launch script (with no
/// variable given), for the dialect's detection; `None` when the text has
/// no such command or makes the reader stop at its limits.
pub(crate) fn script_options(text: &str) -> Option<Vec<(String, std::ops::Range<usize>)>> {
    let inv = args::from_script(text, &[]).ok()??;
    Some(
        inv.megatron
            .into_iter()
            .map(|a| (a.name, a.range))
            .collect(),
    )
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
                // The range runs from the option to its value, which may be
                // written earlier (`MBS=1`): the option is the last of its
                // name before the range's end.
                .filter_map(|a| text.get(..a.range.end)?.rfind(a.name.as_str()))
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
