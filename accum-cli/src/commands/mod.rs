//! One file per subcommand, and the dispatch from parsed arguments to them.
//!
//! The common commands (calc, schema, validate, replan, sheet, completions)
//! are generic over the configuration type, so that a user's own binary
//! (`accum_cli::run::<MyConfig>()`) behaves like `accum`; the others (run,
//! verify, import, export, lint) work on accum's own `TrainingConfig`.

use accum_core::config::TrainingConfig;
use accum_core::estimate::MemoryInputs;
use accum_core::plan::Plan;

use crate::cli::{Cli, Command, CommonCommand};
use crate::error::{CliError, Exit};
use crate::load::{Checker, CliConfig};
use crate::sheet::extras::Extras;

pub(crate) mod calc;
pub(crate) mod compare;
pub(crate) mod completions;
pub(crate) mod explain;
pub(crate) mod fixes;
pub(crate) mod init;
pub(crate) mod interop;
pub(crate) mod replan;
pub(crate) mod run;
pub(crate) mod schema;
pub(crate) mod sheet;
pub(crate) mod validate;
pub(crate) mod verify;

/// What a config type adds to the generic commands.
pub(crate) struct Hooks<T> {
    /// The semantic check.
    pub(crate) check: Checker<T>,
    /// The sheet tables beyond the plan.
    pub(crate) sheet: fn(&T, &Plan) -> Extras,
    /// The per-device memory model, when the type knows its model.
    pub(crate) memory: fn(&T) -> Option<MemoryInputs>,
}

impl<T: CliConfig> Hooks<T> {
    /// The hooks of any derived config: its plan validation, no extra tables.
    pub(crate) fn derived() -> Hooks<T> {
        Hooks {
            check: |config: &T| config.validate(),
            sheet: |_, _| Extras::default(),
            memory: |_| None,
        }
    }
}

/// The hooks of accum's own `TrainingConfig`: its plan and engine checks,
/// its sheet tables and its model's memory.
fn training_hooks() -> Hooks<TrainingConfig> {
    Hooks {
        check: TrainingConfig::check,
        sheet: crate::training::sheet_extras,
        memory: |config| Some(crate::training::memory_inputs(config)),
    }
}

/// Runs one parsed `accum` command, writing its output to stdout.
pub(crate) fn execute(cli: &Cli) -> Result<Exit, CliError> {
    match &cli.command {
        Command::Common(command) => {
            run_common::<TrainingConfig>(command, &crate::cli::accum_command, &training_hooks())
        }
        Command::Init(args) => init::run(args),
        Command::Run(args) => run::run(args),
        Command::Verify(args) => verify::run(args),
        Command::Import(args) => interop::import(args),
        Command::Lint(args) => interop::lint(args),
        Command::Export(args) => interop::export(args),
    }
}

/// Runs one of the common commands for config type `T`; `cli` builds the
/// command line (for completions).
pub(crate) fn run_common<T: CliConfig>(
    command: &CommonCommand,
    cli: &dyn Fn() -> clap::Command,
    hooks: &Hooks<T>,
) -> Result<Exit, CliError> {
    match command {
        CommonCommand::Calc(args) => calc::run(args),
        CommonCommand::Schema(args) => schema::run::<T>(args),
        CommonCommand::Validate(args) => validate::run::<T>(args, hooks.check),
        CommonCommand::Replan(args) => replan::run::<T>(args, hooks),
        CommonCommand::Sheet(args) => sheet::run::<T>(args, hooks),
        CommonCommand::Compare(args) => compare::run(args),
        CommonCommand::Explain(args) => explain::run(args),
        CommonCommand::Completions(args) => completions::run(args, cli()),
    }
}
