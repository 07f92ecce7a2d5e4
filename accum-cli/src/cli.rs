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
    after_help = "Examples:\n  accum calc -m 8 -d 64 -a 4 -L 4096\n  accum calc -m 4 --world-size 64 --tensor 2 --pipeline 2 --global-batch 512"
)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands of `accum`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compute the effective batch and tokens per update from m, A and D (R15),
    /// optionally per-device memory (R16) and data-parallel scaling (R17).
    #[command(after_help = CALC_EXAMPLES)]
    Calc(CalcArgs),
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
pub enum Format {
    /// Text for people.
    #[default]
    Text,
    /// JSON with stable keys, for tools.
    Json,
}

/// Precision of weights and gradients, for memory estimates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Precision {
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
pub enum Optimizer {
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
pub struct CalcArgs {
    /// Examples per microbatch on one data-parallel replica (m).
    #[arg(short = 'm', long, value_name = "M")]
    pub micro_batch: Option<u64>,

    /// Accumulation steps: microbatches per optimizer update, per replica (A).
    #[arg(short = 'a', long = "accum-steps", value_name = "A")]
    pub accum_steps: Option<u64>,

    /// Data-parallel replicas (D): model copies that see different examples.
    #[arg(short = 'd', long, value_name = "D", conflicts_with = "world_size")]
    pub data_parallel: Option<u64>,

    /// All devices of the job; D = world-size / (tensor·pipeline·context).
    #[arg(long, value_name = "N")]
    pub world_size: Option<u64>,

    /// Tensor-parallel degree (devices sharing one model copy; not replicas).
    #[arg(long, value_name = "TP", default_value_t = 1, requires = "world_size")]
    pub tensor: u64,

    /// Pipeline-parallel degree (devices sharing one model copy; not replicas).
    #[arg(long, value_name = "PP", default_value_t = 1, requires = "world_size")]
    pub pipeline: u64,

    /// Context/sequence-parallel degree (devices sharing one model copy; not replicas).
    #[arg(long, value_name = "CP", default_value_t = 1, requires = "world_size")]
    pub context: u64,

    /// Tokens per example, when lengths are fixed (L); enables tokens per update.
    #[arg(short = 'L', long, value_name = "L")]
    pub seq_len: Option<u64>,

    /// A target effective batch: solves the missing -a (or -m) exactly, or checks it.
    #[arg(short = 'B', long, value_name = "B")]
    pub global_batch: Option<u64>,

    /// Parameters per device, for the memory estimate (R16), e.g. 1.3e9.
    #[arg(long, value_name = "N", value_parser = parse_count, requires = "activation_per_example")]
    pub params: Option<u64>,

    /// Activation memory of one example (forward + backward), e.g. 1.5GiB.
    #[arg(long, value_name = "SIZE", requires = "params")]
    pub activation_per_example: Option<accum_core::estimate::ByteSize>,

    /// Weight and gradient precision, for the memory estimate.
    #[arg(long, value_enum, default_value_t = Precision::Fp32)]
    pub precision: Precision,

    /// Optimizer, for the optimizer-state part of the memory estimate.
    #[arg(long, value_enum, default_value_t = Optimizer::Adamw)]
    pub optimizer: Optimizer,

    /// Examples per second one device processes at micro-batch m, for the scaling estimate (R17).
    #[arg(long, value_name = "EX_PER_SEC", requires = "bandwidth")]
    pub device_throughput: Option<f64>,

    /// All-reduce bandwidth per second, e.g. 50GB, for the scaling estimate.
    #[arg(long, value_name = "SIZE", requires = "device_throughput")]
    pub bandwidth: Option<accum_core::estimate::ByteSize>,

    /// Gradient bytes reduced per update (default: params × gradient precision).
    #[arg(long, value_name = "SIZE", requires = "device_throughput")]
    pub grad_bytes: Option<accum_core::estimate::ByteSize>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
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
