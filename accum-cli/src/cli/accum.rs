//! The commands only `accum` has: they run the built-in engine on its own
//! `TrainingConfig`, or translate other frameworks' files.

use clap::{Args, ValueEnum};

use super::common::parse_span;
use super::{DiagnosticFormat, Format};

/// Arguments of `accum import` and `accum lint`.
#[derive(Debug, Args)]
pub(crate) struct ImportArgs {
    /// The framework (deepspeed, megatron, hf, lightning, nemo, axolotl, litgpt), then the
    /// file; without a framework, the one the file's keys identify is read and named.
    #[arg(value_name = "[FRAMEWORK] FILE")]
    pub(crate) first: std::path::PathBuf,

    /// The framework's file (DeepSpeed JSON, a Megatron launch script or YAML arguments,
    /// TrainingArguments JSON/YAML, Trainer YAML/JSON, axolotl YAML, a LitGPT recipe).
    #[arg(value_name = "FILE", hide = true)]
    pub(crate) file: Option<std::path::PathBuf>,

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

    /// Examples in the training set (for the last partial group): 1200000, 1.2M or 1.2e6.
    #[arg(long, value_name = "N", value_parser = crate::quantity::parse_count)]
    pub(crate) examples: Option<u64>,

    /// Tokens per example, when fixed.
    #[arg(long, value_name = "L")]
    pub(crate) seq_len: Option<u64>,

    /// Examples have different numbers of supervised tokens.
    #[arg(long)]
    pub(crate) variable_lengths: bool,

    /// A launch script's variable (or positional argument `1=…`), as the shell
    /// would have it: --env GPUS_PER_NODE=8. Repeat for several.
    #[arg(long, value_name = "NAME=VALUE", value_parser = parse_env)]
    pub(crate) env: Vec<(String, String)>,

    /// The value of a key that an OmegaConf file (NeMo, Hydra) computes with a resolver accum
    /// does not evaluate, as a Hydra override gives it: --set trainer.accumulate_grad_batches=4.
    #[arg(long, value_name = "KEY=VALUE", value_parser = parse_env)]
    pub(crate) set: Vec<(String, String)>,

    /// Hugging Face: the DeepSpeed file, instead of the one named by `deepspeed:`.
    #[arg(long, value_name = "FILE")]
    pub(crate) deepspeed_config: Option<std::path::PathBuf>,

    /// Hugging Face: the Accelerate config the run is launched with (gives the processes).
    #[arg(long, value_name = "FILE")]
    pub(crate) accelerate_config: Option<std::path::PathBuf>,

    /// Also read files that an input names (a recipe's `deepspeed:`, an Accelerate config's
    /// `deepspeed_config_file`) inside DIR. Without it they are read only inside the input's
    /// repository (the nearest folder above it with .git, else its folder), so that a file from
    /// a pull request cannot make accum read /etc/passwd or a secret beside the checkout. Repeat
    /// for several.
    #[arg(long, value_name = "DIR")]
    pub(crate) allow_path: Vec<std::path::PathBuf>,

    /// Write the accum config to this file (atomically, only when there is no
    /// error), in the format its extension says: .toml, .yaml, .yml or .json; import only.
    #[arg(short, long, value_name = "OUT")]
    pub(crate) output: Option<std::path::PathBuf>,

    /// Output format of the findings (`json` prints the whole import); `import`
    /// writes findings in a line format to stderr, beside the config.
    #[arg(long, value_enum, default_value_t = DiagnosticFormat::Human)]
    pub(crate) format: DiagnosticFormat,

    /// Exit 1 on warnings too, not only on errors (for CI and pre-commit).
    #[arg(long)]
    pub(crate) deny_warnings: bool,
}

impl ImportArgs {
    /// The framework named before the file, if any, and the files: a first
    /// word that is a framework's name, followed by a file, names it.
    pub(crate) fn targets(
        &self,
        more: &[std::path::PathBuf],
    ) -> (Option<crate::interop::Framework>, Vec<std::path::PathBuf>) {
        let named = self
            .first
            .to_str()
            .and_then(|word| word.parse::<crate::interop::Framework>().ok());
        match (named, &self.file) {
            (Some(framework), Some(file)) => {
                let mut files = vec![file.clone()];
                files.extend(more.iter().cloned());
                (Some(framework), files)
            }
            _ => {
                let mut files = vec![self.first.clone()];
                files.extend(self.file.iter().cloned());
                files.extend(more.iter().cloned());
                (None, files)
            }
        }
    }
}

/// Arguments of `accum lint`: `import`'s, with more files of the same
/// framework after the first (pre-commit passes every changed file at once).
#[derive(Debug, Args)]
pub(crate) struct LintArgs {
    /// The framework, the first file and the options, as for `import`.
    #[command(flatten)]
    pub(crate) import: ImportArgs,

    /// More files of the same framework, checked with the same options.
    #[arg(value_name = "MORE")]
    pub(crate) more: Vec<std::path::PathBuf>,

    #[command(flatten)]
    pub(crate) fixing: crate::cli::common::FixArgs,

    /// Print how many findings each code has, and how many of them --fix
    /// would fix, instead of the findings themselves (for a repository's
    /// first look at many files).
    #[arg(long, conflicts_with = "diff")]
    pub(crate) statistics: bool,
}

/// Arguments of `accum export`.
#[derive(Debug, Args)]
pub(crate) struct ExportArgs {
    /// The framework: deepspeed, megatron, hf (Hugging Face), lightning, nemo, axolotl, litgpt.
    #[arg(value_name = "FRAMEWORK")]
    pub(crate) framework: crate::interop::Framework,

    /// The accum configuration file.
    #[arg(value_name = "CONFIG")]
    pub(crate) config: std::path::PathBuf,

    /// Write the framework's file to this path (atomically) instead of stdout,
    /// named with the extension of its format: .json for deepspeed and hf,
    /// .sh or .txt for megatron, .yaml or .yml for the others.
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

    /// Write checkpoints to this folder: DIR/ckpt-<updates>/ (state.json and
    /// tensors.bin: model, optimizer, loss scaler, data position, schedule
    /// and the report so far, format accum-checkpoint/1), each written whole
    /// or not at all, the last two kept. One is written when the run ends or
    /// is stopped with Ctrl-C, and every --checkpoint-every.
    #[arg(long, value_name = "DIR")]
    pub(crate) checkpoint: Option<std::path::PathBuf>,

    /// How often to write a checkpoint, as a length: `50-updates`,
    /// `2000-examples`, `1M-tokens`. A checkpoint is taken at an update
    /// boundary: in examples or tokens, at the first boundary past each
    /// multiple. Needs --checkpoint (or --resume, whose folder it then
    /// writes to).
    #[arg(long, value_name = "SPAN", value_parser = parse_span)]
    pub(crate) checkpoint_every: Option<accum_core::Span>,

    /// Continue the run from the last complete checkpoint in DIR: the same
    /// weights, optimizer, loss scale, data order, schedule and report, bit
    /// for bit; a group the run was stopped inside is redone from its first
    /// microbatch. FILE may be re-planned with the same global batch (other
    /// micro_batch, accumulation or replicas, so that m × A × D stays): an
    /// elastic resume, noted and recorded in the report's segments. Another
    /// global batch, seq_len, normalization, data or other setting is
    /// refused with what differs. Checkpoints go on to DIR unless
    /// --checkpoint names another folder.
    #[arg(long, value_name = "DIR")]
    pub(crate) resume: Option<std::path::PathBuf>,

    /// Test hook: replica RANK fails with an error after the backward pass of
    /// microbatch MICROBATCH (0-based) of update attempt ATTEMPT (1-based).
    #[arg(long, value_name = "RANK:ATTEMPT:MICROBATCH", value_parser = parse_fail_at, hide = true)]
    pub(crate) fail_at: Option<FailAt>,

    /// Test hook: the process kills itself with SIGKILL after the backward
    /// passes of update attempt ATTEMPT (`group:ATTEMPT`), or while writing
    /// the checkpoint after UPDATES updates, its files written but the
    /// folder not yet renamed (`checkpoint:UPDATES`).
    #[arg(long, value_name = "WHERE:N", value_parser = parse_kill_at, hide = true)]
    pub(crate) kill_at: Option<KillAt>,
}

/// `--kill-at group:ATTEMPT` or `--kill-at checkpoint:UPDATES`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KillAt {
    /// Inside the group of this update attempt (1-based).
    Group(u64),
    /// While writing the checkpoint after this many updates.
    Checkpoint(u64),
}

fn parse_kill_at(s: &str) -> Result<KillAt, String> {
    let bad = || format!("`{s}` is not group:ATTEMPT or checkpoint:UPDATES, e.g. group:7");
    let (at, n) = s.split_once(':').ok_or_else(bad)?;
    let n: u64 = n.trim().parse().map_err(|_| bad())?;
    match at.trim() {
        "group" if n > 0 => Ok(KillAt::Group(n)),
        "checkpoint" => Ok(KillAt::Checkpoint(n)),
        _ => Err(bad()),
    }
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

/// Parses a finite, non-negative tolerance.
fn parse_tolerance(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(value) if value.is_finite() && value >= 0.0 => Ok(value),
        _ => Err(format!(
            "`{text}` is not a tolerance; use a finite number ≥ 0, e.g. 1e-4"
        )),
    }
}

/// Arguments of `accum init`.
#[derive(Debug, Args)]
pub(crate) struct InitArgs {
    /// The configuration to write: `.toml` (default `accum.toml`), `.yaml`
    /// or `.json`. Refused when the file exists.
    #[arg(value_name = "FILE")]
    pub(crate) file: Option<std::path::PathBuf>,

    /// The run's name (default: the file's stem).
    #[arg(long, value_name = "NAME")]
    pub(crate) name: Option<String>,

    /// Do not write the schema file the directive points to.
    #[arg(long)]
    pub(crate) no_schema: bool,
}

/// `NAME=VALUE` for `--env`.
fn parse_env(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value)) if !name.is_empty() => Ok((name.to_owned(), value.to_owned())),
        _ => Err(format!("`{text}` is not NAME=VALUE")),
    }
}
