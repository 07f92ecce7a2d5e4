//! The command-line interface: every command, flag and example in `--help`.
//!
//! `common` holds the commands every configuration type gets, `accum` the
//! ones only the `accum` binary has, `examples` the examples under each
//! `--help`, written for the binary that shows them.

mod accum;
mod common;
mod examples;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

pub(crate) use accum::{
    Backend, ExportArgs, ImportArgs, InitArgs, KillAt, LintArgs, RunArgs, VerifyArgs,
};
pub(crate) use common::{
    CalcArgs, CommonCommand, CompareArgs, CompareAxis, CompletionsArgs, ExplainArgs, Optimizer,
    Precision, ReplanArgs, SchemaArgs, SheetArgs, SheetFormat, ValidateArgs,
};
#[cfg(feature = "harness")]
pub(crate) use common::{parse_ramp, parse_span, parse_stage};
use examples::{Binary, examples};

use crate::style::ColorChoice;

/// Gradient-accumulation plans that cannot be miscounted.
///
/// accum keeps examples, microbatches, updates and tokens apart: the
/// effective batch is B = m·A·D (micro-batch × accumulation steps ×
/// data-parallel replicas), and tensor/pipeline/context-parallel devices are
/// not replicas.
#[derive(Debug, Parser)]
#[command(name = "accum", version, propagate_version = true)]
pub(crate) struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub(crate) command: Command,

    /// When to colour: auto (a terminal, unless NO_COLOR is set; CLICOLOR_FORCE=1 colours a
    /// pipe too), always, or never.
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t)]
    pub(crate) color: ColorChoice,
}

/// `--color` for a command line built by hand (a user's binary), as
/// [`Cli`]'s derive declares it.
fn color_arg() -> clap::Arg {
    clap::Arg::new("color")
        .long("color")
        .global(true)
        .value_name("WHEN")
        .value_parser(clap::builder::EnumValueParser::<ColorChoice>::new())
        .default_value("auto")
        .help("When to colour: auto (a terminal, unless NO_COLOR is set; CLICOLOR_FORCE=1 colours a pipe too), always, or never")
}

/// clap colours its help and errors as accum does: the choice the
/// arguments made, read before parsing ([`crate::style::from_args`]).
fn colored(command: clap::Command) -> clap::Command {
    command.color(match crate::style::chosen() {
        ColorChoice::Auto => clap::ColorChoice::Auto,
        ColorChoice::Always => clap::ColorChoice::Always,
        ColorChoice::Never => clap::ColorChoice::Never,
    })
}

/// The commands of `accum`.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Commands that work on any derived configuration.
    #[command(flatten)]
    Common(CommonCommand),
    /// Write a starter configuration with comments and a schema directive
    /// for editors, and the schema beside it; never overwrites a file.
    Init(InitArgs),
    /// Run the accumulation engine on the built-in model and synthetic data,
    /// with a progress bar in updates; writes the run report atomically.
    Run(RunArgs),
    /// The pre-flight check: one update as A microbatches × D replicas and
    /// as one large batch on the same examples, compared (one update of each
    /// stage under a batch ramp-up); exit 1 on failure.
    Verify(VerifyArgs),
    /// Read a framework's batch settings (DeepSpeed, Megatron-LM, Hugging Face,
    /// Lightning/NeMo, axolotl) into an accum config, with findings: what does
    /// not divide, what the framework would round or refuse, "steps" that are
    /// microbatches, …
    Import(ImportArgs),
    /// Write a framework's file (or arguments) from an accum config, consistent
    /// by construction; schedule lengths are converted to the framework's unit.
    Export(ExportArgs),
    /// Check a framework's batch settings: `import` without the output.
    Lint(LintArgs),
}

/// Sets the examples under the help of `command` and of its subcommands.
fn with_examples(command: clap::Command, binary: Binary<'_>) -> clap::Command {
    let names: Vec<String> = command
        .get_subcommands()
        .map(|sub| sub.get_name().to_owned())
        .collect();
    let mut command = match examples(binary, "") {
        Some(text) => command.after_help(text),
        None => command,
    };
    for name in names {
        if let Some(text) = examples(binary, &name) {
            command = command.mut_subcommand(name, |sub| sub.after_help(text));
        }
    }
    command
}

/// The `accum` command line, with its examples.
pub(crate) fn accum_command() -> clap::Command {
    colored(with_examples(Cli::command(), Binary::Accum))
}

/// Parses `accum`'s arguments.
pub(crate) fn parse_accum() -> Result<Cli, clap::Error> {
    parse_accum_from(std::env::args_os())
}

/// Parses `args` (the program's name first) as `accum`'s arguments.
pub(crate) fn parse_accum_from(
    args: impl IntoIterator<Item = impl Into<std::ffi::OsString> + Clone>,
) -> Result<Cli, clap::Error> {
    let matches = accum_command().try_get_matches_from(args)?;
    Cli::from_arg_matches(&matches)
}

/// The command line of a user's binary named `bin`: the common commands,
/// with examples in its own name.
pub(crate) fn user_command(bin: &str) -> clap::Command {
    let command = CommonCommand::augment_subcommands(
        clap::Command::new(bin.to_owned())
            .version(env!("CARGO_PKG_VERSION"))
            .propagate_version(true)
            .subcommand_required(true)
            .arg_required_else_help(true)
            .arg(color_arg()),
    )
    .about("Check and plan this program's training configs (B = m·A·D, with units)")
    .mut_subcommand("sheet", |sheet| {
        sheet.mut_arg("report", |report| {
            report.help(
                "A run report (JSON) of this configuration's run, as the accum engine or a loop's recorder (accum::driver::Recorder) writes it",
            )
        })
    })
    // A user's config has no built-in model to take the memory model from.
    .mut_subcommand("replan", |replan| {
        replan
            .mut_arg("params", |arg| {
                arg.help("Parameters per device, for --memory-budget")
            })
            .mut_arg("activation_per_example", |arg| {
                arg.help("Activation memory of one example, for --memory-budget")
            })
    });
    colored(with_examples(command, Binary::User(bin)))
}

/// Output format of diagnostics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub(crate) enum DiagnosticFormat {
    /// For people: each finding with its source line and the fix.
    #[default]
    #[value(alias = "text")]
    Human,
    /// One line per finding, `file:line:col: error[code]: message` (or
    /// `warning[code]`), for editors, grep and problem matchers.
    Short,
    /// JSON with stable keys, for tools.
    Json,
    /// GitHub Actions workflow commands: annotations on the lines of a pull request.
    Github,
    /// SARIF 2.1.0, for code scanning.
    Sarif,
}

/// Output format of a command.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// Text for people.
    #[default]
    Text,
    /// JSON with stable keys, for tools.
    Json,
}
