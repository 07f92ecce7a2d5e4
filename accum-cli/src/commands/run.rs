//! `accum run`: the engine on the built-in model and data, with a progress
//! bar in updates, logs in the declared axis, an atomic run report of
//! bounded size, an optional stats stream beside it (every update, JSON
//! Lines) and an optional dump. A batch ramp-up (`[[batch.stages]]` or
//! `[batch.ramp]`) runs stage by stage, and the summary counts each stage.
//! Ctrl-C stops within the current microbatch (that group is not applied)
//! and the report is still written, with exit status 130; a second Ctrl-C
//! ends at once. With `--backend mpi` each MPI process runs one replica and
//! only rank 0 writes (report, dump, output); errors name the rank.
//!
//! With `--checkpoint DIR` the run writes checkpoints (`accum-checkpoint/1`,
//! [`accum_core::checkpoint`]) every `--checkpoint-every` and when it ends
//! or is stopped; `--resume DIR` continues from the last complete one,
//! under the same plan or another of the same global batch (`resume.rs`).
//!
//! The run itself, its observers and the text around it are
//! [`crate::runner`]'s.

use accum_core::config::TrainingConfig;

use crate::cli::RunArgs;
use crate::error::{CliError, Exit};
use crate::load::load_checked;
use crate::runner::Run;

pub(crate) fn run(args: &RunArgs) -> Result<Exit, CliError> {
    let checked = load_checked::<TrainingConfig>(&args.file, TrainingConfig::check)?;
    Run::start(args, &checked)?.carry_out()
}
