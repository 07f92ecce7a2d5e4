//! The command-line interface: every command, flag and example in `--help`.

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Gradient-accumulation plans that cannot be miscounted.
///
/// accum keeps examples, microbatches, updates and tokens apart: the
/// effective batch is B = m·A·D (micro-batch × accumulation steps ×
/// data-parallel replicas), and tensor/pipeline/context-parallel devices are
/// not replicas.
#[derive(Debug, Parser)]
#[command(name = "accum", version, propagate_version = true)]
#[command(
    after_help = "Examples:\n  accum calc -m 8 -d 64 -a 4 -L 4096\n  accum validate examples/quickstart.toml\n  accum run examples/quickstart.toml --report run.json\n  accum sheet examples/quickstart.toml --report run.json --format html -o sheet.html"
)]
pub(crate) struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The commands of `accum`.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Commands that work on any derived configuration.
    #[command(flatten)]
    Common(CommonCommand),
    /// Run the accumulation engine on the built-in model and synthetic data,
    /// with a progress bar in updates; writes the run report atomically.
    #[command(after_help = RUN_EXAMPLES)]
    Run(RunArgs),
    /// The pre-flight check (R12): one update as A microbatches × D replicas
    /// and as one large batch on the same examples, compared; exit 1 on failure.
    #[command(
        after_help = "Examples:\n  accum verify examples/quickstart.toml\n  accum verify examples/quickstart.toml --format json"
    )]
    Verify(VerifyArgs),
    /// Read an engine's batch settings (DeepSpeed, Megatron-LM, Hugging Face,
    /// Lightning) into a canonical accum config, with findings: what does not
    /// divide, what the engine would round, "steps" that are microbatches, …
    #[command(after_help = IMPORT_EXAMPLES)]
    Import(ImportArgs),
    /// Write an engine's file (or arguments) from an accum config, consistent
    /// by construction; schedule lengths are converted to the engine's unit.
    #[command(after_help = EXPORT_EXAMPLES)]
    Export(ExportArgs),
    /// Check an engine's batch settings: `import` without the output.
    #[command(
        after_help = "Examples:\n  accum lint deepspeed ds_config.json --world-size 16\n  accum lint hf training_args.json --num-processes 8 --format json"
    )]
    Lint(ImportArgs),
}

const IMPORT_EXAMPLES: &str = "\
Examples:
  accum import deepspeed ds_config.json --world-size 16 -o train.toml
  accum import megatron args.sh --world-size 64 --seq-len 4096
  accum import hf training_args.json --num-processes 8 --examples 100000 --variable-lengths
  accum import lightning trainer.yaml --micro-batch 16

Engines: deepspeed, megatron, hf, lightning. Exit 1 when a finding is an error.";

const EXPORT_EXAMPLES: &str = "\
Examples:
  accum export deepspeed examples/quickstart.toml -o ds_config.json
  accum export megatron examples/seed-calculator.toml
  accum export hf examples/quickstart.toml
  accum export lightning examples/quickstart.toml";

/// Arguments of `accum import` and `accum lint`.
#[derive(Debug, Args)]
pub(crate) struct ImportArgs {
    /// The engine: deepspeed, megatron, hf (Hugging Face), lightning.
    #[arg(value_name = "ENGINE")]
    pub(crate) engine: crate::interop::Engine,

    /// The engine's file (DeepSpeed JSON, Megatron arguments, TrainingArguments JSON, Trainer YAML/JSON).
    #[arg(value_name = "FILE")]
    pub(crate) file: std::path::PathBuf,

    /// All devices of the job (the launcher's world size).
    #[arg(long, value_name = "N")]
    pub(crate) world_size: Option<u64>,

    /// Accelerate's num_processes (Hugging Face).
    #[arg(long, value_name = "N")]
    pub(crate) num_processes: Option<u64>,

    /// Nodes of the job (Lightning).
    #[arg(long, value_name = "N")]
    pub(crate) num_nodes: Option<u64>,

    /// Tensor-parallel degree the model code uses (not replicas).
    #[arg(long, value_name = "TP")]
    pub(crate) tensor: Option<u64>,

    /// Pipeline-parallel degree the model code uses (not replicas).
    #[arg(long, value_name = "PP")]
    pub(crate) pipeline: Option<u64>,

    /// Context/sequence-parallel degree the model code uses (not replicas).
    #[arg(long, value_name = "CP")]
    pub(crate) context: Option<u64>,

    /// DeepSpeed: an mpu is passed to deepspeed.initialize (it then divides by the data-parallel size).
    #[arg(long)]
    pub(crate) deepspeed_mpu: bool,

    /// Examples per microbatch, when the file does not say (Lightning's DataLoader batch_size).
    #[arg(long, value_name = "M")]
    pub(crate) micro_batch: Option<u64>,

    /// Examples in the training set (for the last partial group).
    #[arg(long, value_name = "N")]
    pub(crate) examples: Option<u64>,

    /// Tokens per example, when fixed.
    #[arg(long, value_name = "L")]
    pub(crate) seq_len: Option<u64>,

    /// Examples have different numbers of supervised tokens.
    #[arg(long)]
    pub(crate) variable_lengths: bool,

    /// Write the canonical config to this file (atomically); import only.
    #[arg(short, long, value_name = "OUT")]
    pub(crate) output: Option<std::path::PathBuf>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,
}

/// Arguments of `accum export`.
#[derive(Debug, Args)]
pub(crate) struct ExportArgs {
    /// The engine: deepspeed, megatron, hf (Hugging Face), lightning.
    #[arg(value_name = "ENGINE")]
    pub(crate) engine: crate::interop::Engine,

    /// The accum configuration file.
    #[arg(value_name = "CONFIG")]
    pub(crate) config: std::path::PathBuf,

    /// Write the engine's file to this path (atomically) instead of stdout.
    #[arg(short, long, value_name = "OUT")]
    pub(crate) output: Option<std::path::PathBuf>,
}

/// Arguments of `accum verify`.
#[derive(Debug, Args)]
pub(crate) struct VerifyArgs {
    /// The configuration file.
    #[arg(value_name = "FILE")]
    pub(crate) file: std::path::PathBuf,

    /// Relative tolerance of the gradient comparison (default 1e-4).
    #[arg(long, value_name = "RTOL", value_parser = parse_tolerance)]
    pub(crate) rtol: Option<f64>,

    /// Absolute tolerance of the comparisons (default 1e-6).
    #[arg(long, value_name = "ATOL", value_parser = parse_tolerance)]
    pub(crate) atol: Option<f64>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,
}

const RUN_EXAMPLES: &str = "\
Examples:
  accum run examples/quickstart.toml
  accum run examples/quickstart.toml --report run.json
  accum run examples/quickstart.toml --dump dump/   # accum-dump/1: .npy tensors for numpy/PyTorch
  mpirun -n 2 accum run examples/quickstart.toml --backend mpi   # one process per replica (feature `mpi`)

Ctrl-C stops at the next group boundary; the report is still written.";

/// Arguments of `accum run`.
#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// The configuration file.
    #[arg(value_name = "FILE")]
    pub(crate) file: std::path::PathBuf,

    /// Write the run report (JSON) to this file, atomically.
    #[arg(long, value_name = "RUN.json")]
    pub(crate) report: Option<std::path::PathBuf>,

    /// Write every microbatch, gradient and parameter set to this directory (accum-dump/1).
    #[arg(long, value_name = "DIR")]
    pub(crate) dump: Option<std::path::PathBuf>,

    /// No progress bar; the log lines go to stdout.
    #[arg(short, long)]
    pub(crate) quiet: bool,

    /// Output format of the final summary (json prints the whole report).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,

    /// Where the data-parallel replicas run: threads of this process, or one
    /// MPI process per replica (`mpirun -n D accum run FILE --backend mpi`;
    /// needs a build with the `mpi` feature). With mpi, rank 0 writes the
    /// report, the dump and the output.
    #[arg(long, value_enum, default_value_t = Backend::Threads)]
    pub(crate) backend: Backend,

    /// Threads inside each replica this process runs (default: all cores ÷
    /// the replicas it runs). The reference model's results do not depend
    /// on it.
    #[arg(long, value_name = "N")]
    pub(crate) threads: Option<std::num::NonZeroUsize>,

    /// Also stream every update attempt and log point, at full resolution,
    /// to RUN.stats.jsonl beside the report (JSON Lines; needs --report). The
    /// report itself keeps a bounded curve and running summaries.
    #[arg(long, requires = "report")]
    pub(crate) stream_stats: bool,

    /// Test hook: replica RANK fails with an error after the backward pass of
    /// microbatch MICROBATCH (0-based) of update attempt ATTEMPT (1-based).
    #[arg(long, value_name = "RANK:ATTEMPT:MICROBATCH", value_parser = parse_fail_at, hide = true)]
    pub(crate) fail_at: Option<FailAt>,
}

/// Where `accum run` runs the data-parallel replicas.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Backend {
    /// Every replica in this process, on one thread pool (see --threads).
    Threads,
    /// One MPI process per replica (rank r is replica r).
    Mpi,
}

/// `--fail-at RANK:ATTEMPT:MICROBATCH`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FailAt {
    /// The replica that fails.
    pub(crate) replica: usize,
    /// The update attempt, 1-based.
    pub(crate) attempt: u64,
    /// The microbatch within the group, 0-based.
    pub(crate) microbatch: usize,
}

fn parse_fail_at(s: &str) -> Result<FailAt, String> {
    let parts: Vec<&str> = s.split(':').collect();
    let bad = || format!("`{s}` is not RANK:ATTEMPT:MICROBATCH, e.g. 1:3:0");
    let [r, a, m] = parts[..] else {
        return Err(bad());
    };
    let at = FailAt {
        replica: r.trim().parse().map_err(|_| bad())?,
        attempt: a.trim().parse().map_err(|_| bad())?,
        microbatch: m.trim().parse().map_err(|_| bad())?,
    };
    if at.attempt == 0 {
        return Err(format!("`{s}`: attempts count from 1"));
    }
    Ok(at)
}

/// The commands every configuration type gets, in `accum` and in the binaries
/// users build with `accum_cli::run::<MyConfig>()`.
#[derive(Debug, Subcommand)]
pub(crate) enum CommonCommand {
    /// Compute the effective batch and tokens per update from m, A and D (R15),
    /// optionally per-device memory (R16) and data-parallel scaling (R17).
    #[command(after_help = CALC_EXAMPLES)]
    Calc(CalcArgs),
    /// Print the configuration's JSON Schema (2020-12), with plan roles
    /// (`x-accum-role`) and units (`x-accum-unit`) marked.
    #[command(after_help = "Examples:\n  accum schema\n  accum schema -o accum.schema.json")]
    Schema(SchemaArgs),
    /// Check configuration files: structure against the schema, then the plan
    /// rules. Every finding is reported with file:line:col and the fix.
    #[command(after_help = VALIDATE_EXAMPLES)]
    Validate(ValidateArgs),
    /// Write a new configuration that keeps the effective batch with a smaller
    /// micro-batch (R11); comments and layout are kept.
    #[command(after_help = REPLAN_EXAMPLES)]
    Replan(ReplanArgs),
    /// Write the run's data sheet (R13): the plan, tokens, precision,
    /// normalization, last group and schedule in every unit; with a run report
    /// also the observed counters, memory peaks and the loss curve.
    #[command(after_help = SHEET_EXAMPLES)]
    Sheet(SheetArgs),
    /// Print a shell completion script.
    #[command(
        after_help = "Examples:\n  accum completions bash > ~/.local/share/bash-completion/completions/accum\n  accum completions zsh > ~/.zfunc/_accum"
    )]
    Completions(CompletionsArgs),
}

const VALIDATE_EXAMPLES: &str = "\
Examples:
  accum validate examples/quickstart.toml
  accum validate configs/*.toml --format json
  # any derived config: plan roles come from the schema's x-accum-role marks
  accum validate --schema my.schema.json my-run.yaml

Exit status: 0 valid, 1 findings (printed), 2 usage or I/O error.";

const REPLAN_EXAMPLES: &str = "\
Examples:
  # the micro-batch of 32 does not fit: keep B with m ≤ 8 (A is recomputed)
  accum replan train.toml --max-micro-batch 8 > train-m8.toml
  accum replan train.toml --max-micro-batch 8 -o train-m8.toml
  accum replan train.toml --max-micro-batch 8 --in-place     # keeps train.toml.bak
  # the largest micro-batch whose estimated memory fits 2 MiB per device (R16)
  accum replan examples/quickstart.toml --memory-budget 2MiB

Spans counted in microbatches are rewritten to keep their number of updates.";

const SHEET_EXAMPLES: &str = "\
Examples:
  accum sheet examples/quickstart.toml                          # Markdown to stdout
  accum run examples/quickstart.toml --report run.json
  accum sheet examples/quickstart.toml --report run.json -o sheet.html   # one self-contained file
  accum sheet examples/quickstart.toml --report run.json -o sheet.md     # + sheet.svg beside it
  accum sheet examples/quickstart.toml --format json";

/// Output format of a sheet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum SheetFormat {
    /// Markdown; with -o the loss curve is written as an SVG beside it.
    Md,
    /// One self-contained HTML file with the curve inline; no script.
    Html,
    /// The sheet's data as JSON.
    Json,
}

/// Arguments of `accum sheet`.
#[derive(Debug, Args)]
pub(crate) struct SheetArgs {
    /// The configuration file.
    #[arg(value_name = "FILE")]
    pub(crate) file: std::path::PathBuf,

    /// A run report written by `accum run --report`.
    #[arg(long, value_name = "RUN.json")]
    pub(crate) report: Option<std::path::PathBuf>,

    /// Output format (default: from the -o extension, else md).
    #[arg(long, value_enum)]
    pub(crate) format: Option<SheetFormat>,

    /// Write the sheet to this file (atomically) instead of stdout.
    #[arg(short, long, value_name = "OUT")]
    pub(crate) output: Option<std::path::PathBuf>,
}

/// Arguments of `accum schema`.
#[derive(Debug, Args)]
pub(crate) struct SchemaArgs {
    /// Write the schema to this file (atomically) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Option<std::path::PathBuf>,
}

/// Arguments of `accum validate`.
#[derive(Debug, Args)]
pub(crate) struct ValidateArgs {
    /// Configuration files (.toml, .json, .yaml).
    #[arg(required = true, value_name = "FILE")]
    pub(crate) files: Vec<std::path::PathBuf>,

    /// Validate against this JSON Schema instead of the built-in one; plan
    /// roles are read from its `x-accum-role` marks.
    #[arg(long, value_name = "SCHEMA")]
    pub(crate) schema: Option<std::path::PathBuf>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,
}

/// Arguments of `accum replan`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("limit").required(true).args(["max_micro_batch", "memory_budget"])))]
pub(crate) struct ReplanArgs {
    /// The configuration file to re-plan.
    #[arg(value_name = "FILE")]
    pub(crate) file: std::path::PathBuf,

    /// The largest micro-batch that fits.
    #[arg(long, value_name = "M", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) max_micro_batch: Option<u64>,

    /// The per-device memory budget, e.g. 24GiB: the largest micro-batch whose
    /// estimate (weights, gradients, optimizer state, activations × m) fits (R16).
    #[arg(long, value_name = "SIZE", conflicts_with = "max_micro_batch")]
    pub(crate) memory_budget: Option<accum_core::estimate::ByteSize>,

    /// Parameters per device, for --memory-budget (default: the built-in model's).
    #[arg(long, value_name = "N", requires = "memory_budget")]
    pub(crate) params: Option<u64>,

    /// Activation memory of one example, for --memory-budget (default: the built-in model's).
    #[arg(long, value_name = "SIZE", requires = "memory_budget")]
    pub(crate) activation_per_example: Option<accum_core::estimate::ByteSize>,

    /// Write the new configuration to this file (atomically).
    #[arg(short, long, value_name = "FILE", conflicts_with = "in_place")]
    pub(crate) output: Option<std::path::PathBuf>,

    /// Replace FILE, keeping the old one as FILE.bak.
    #[arg(long)]
    pub(crate) in_place: bool,

    /// Format of the summary (the new configuration keeps the file's format).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,
}

/// Arguments of `accum completions`.
#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub(crate) shell: clap_complete::Shell,
}

const CALC_EXAMPLES: &str = "\
Examples:
  # the calculator's worked example: B = 8 × 4 × 64 = 2,048; T = 8,388,608
  accum calc -m 8 -d 64 -a 4 -L 4096

  # replicas from a layout: 64 GPUs, tensor 2 × pipeline 2 → D = 16
  accum calc -m 4 -a 8 --world-size 64 --tensor 2 --pipeline 2

  # solve the accumulation steps for a target global batch (exact, never floored)
  accum calc -m 8 -d 64 --global-batch 4096

  # per-device memory and scaling estimates
  accum calc -m 8 -d 8 -a 4 --params 1.3e9 --precision bf16 --activation-per-example 1.5GiB \\
      --device-throughput 12 --bandwidth 50GB

  # for scripts
  accum calc -m 2 -a 8 -d 2 --format json";

/// Output format of a command.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// Text for people.
    #[default]
    Text,
    /// JSON with stable keys, for tools.
    Json,
}

/// Precision of weights and gradients, for memory estimates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub(crate) enum Precision {
    /// 4-byte weights and gradients.
    #[default]
    Fp32,
    /// 2-byte weights and gradients plus an fp32 master copy.
    Bf16,
    /// 2-byte weights and gradients plus an fp32 master copy.
    Fp16,
}

/// The optimizer, for the optimizer-state part of a memory estimate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub(crate) enum Optimizer {
    /// Two fp32 moments per parameter.
    #[default]
    Adamw,
    /// One fp32 momentum buffer per parameter.
    SgdMomentum,
    /// No state.
    Sgd,
}

/// Arguments of `accum calc`.
#[derive(Debug, Args)]
pub(crate) struct CalcArgs {
    /// Examples per microbatch on one data-parallel replica (m).
    #[arg(short = 'm', long, value_name = "M")]
    pub(crate) micro_batch: Option<u64>,

    /// Accumulation steps: microbatches per optimizer update, per replica (A).
    #[arg(short = 'a', long = "accum-steps", value_name = "A")]
    pub(crate) accum_steps: Option<u64>,

    /// Data-parallel replicas (D): model copies that see different examples.
    #[arg(short = 'd', long, value_name = "D", conflicts_with = "world_size")]
    pub(crate) data_parallel: Option<u64>,

    /// All devices of the job; D = world-size / (tensor·pipeline·context).
    #[arg(long, value_name = "N")]
    pub(crate) world_size: Option<u64>,

    /// Tensor-parallel degree (devices sharing one model copy; not replicas).
    #[arg(long, value_name = "TP", default_value_t = 1, requires = "world_size")]
    pub(crate) tensor: u64,

    /// Pipeline-parallel degree (devices sharing one model copy; not replicas).
    #[arg(long, value_name = "PP", default_value_t = 1, requires = "world_size")]
    pub(crate) pipeline: u64,

    /// Context/sequence-parallel degree (devices sharing one model copy; not replicas).
    #[arg(long, value_name = "CP", default_value_t = 1, requires = "world_size")]
    pub(crate) context: u64,

    /// Tokens per example, when lengths are fixed (L); enables tokens per update.
    #[arg(short = 'L', long, value_name = "L")]
    pub(crate) seq_len: Option<u64>,

    /// A target effective batch: solves the missing -a (or -m) exactly, or checks it.
    #[arg(short = 'B', long, value_name = "B")]
    pub(crate) global_batch: Option<u64>,

    /// Parameters per device, for the memory estimate (R16), e.g. 1.3e9.
    #[arg(long, value_name = "N", value_parser = parse_count, requires = "activation_per_example")]
    pub(crate) params: Option<u64>,

    /// Activation memory of one example (forward + backward), e.g. 1.5GiB.
    #[arg(long, value_name = "SIZE", requires = "params")]
    pub(crate) activation_per_example: Option<accum_core::estimate::ByteSize>,

    /// Weight and gradient precision, for the memory estimate.
    #[arg(long, value_enum, default_value_t = Precision::Fp32)]
    pub(crate) precision: Precision,

    /// Optimizer, for the optimizer-state part of the memory estimate.
    #[arg(long, value_enum, default_value_t = Optimizer::Adamw)]
    pub(crate) optimizer: Optimizer,

    /// Examples per second one device processes at micro-batch m, for the scaling estimate (R17).
    #[arg(long, value_name = "EX_PER_SEC", requires = "bandwidth")]
    pub(crate) device_throughput: Option<f64>,

    /// All-reduce bandwidth per second, e.g. 50GB, for the scaling estimate.
    #[arg(long, value_name = "SIZE", requires = "device_throughput")]
    pub(crate) bandwidth: Option<accum_core::estimate::ByteSize>,

    /// Gradient bytes reduced per update (default: params × gradient precision).
    #[arg(long, value_name = "SIZE", requires = "device_throughput")]
    pub(crate) grad_bytes: Option<accum_core::estimate::ByteSize>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,
}

/// Parses a finite, non-negative tolerance.
fn parse_tolerance(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(value) if value.is_finite() && value >= 0.0 => Ok(value),
        _ => Err(format!(
            "`{text}` is not a tolerance; use a finite number ≥ 0, e.g. 1e-4"
        )),
    }
}

/// Parses a count written as an integer or in scientific notation (`1.3e9`).
fn parse_count(text: &str) -> Result<u64, String> {
    if let Ok(value) = text.parse::<u64>() {
        return Ok(value);
    }
    match text.parse::<f64>() {
        Ok(value)
            if value.is_finite()
                && value >= 0.0
                && value.fract() == 0.0
                && value < u64::MAX as f64 =>
        {
            Ok(value as u64)
        }
        _ => Err(format!(
            "`{text}` is not a whole non-negative count (e.g. 1300000000 or 1.3e9)"
        )),
    }
}
