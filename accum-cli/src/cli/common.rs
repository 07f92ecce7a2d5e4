//! The commands every configuration type gets, in `accum` and in the
//! binaries users build with `accum_cli::run::<MyConfig>()`, and their
//! arguments.

use accum_core::Span;
use accum_core::plan::{LinearRamp, StageSpec};
use clap::{Args, Subcommand, ValueEnum};

use super::{DiagnosticFormat, Format};

/// The commands every configuration type gets, in `accum` and in the binaries
/// users build with `accum_cli::run::<MyConfig>()`.
#[derive(Debug, Subcommand)]
pub(crate) enum CommonCommand {
    /// Compute the effective batch and tokens per update from m, A and D,
    /// optionally a batch ramp-up stage by stage, per-device memory and
    /// data-parallel scaling.
    Calc(CalcArgs),
    /// Print the configuration's JSON Schema (2020-12), with plan roles
    /// (`x-accum-role`) and units (`x-accum-unit`) marked.
    Schema(SchemaArgs),
    /// Check configuration files: structure against the schema, then the plan
    /// rules. Every finding is reported with file:line:col and the fix.
    Validate(ValidateArgs),
    /// Write a new configuration that keeps the effective batch with a smaller
    /// micro-batch; comments and layout are kept.
    Replan(ReplanArgs),
    /// Write the run's data sheet: B = m·A·D, tokens, precision,
    /// normalization, last group, every length in every unit and the
    /// learning-rate schedule; with a run report also the loss, gradient norm,
    /// loss scale and skipped updates, counters and memory peaks.
    Sheet(SheetArgs),
    /// Compare two or more runs from their reports: their plans side by
    /// side, and the loss, learning rate and gradient norm overlaid against
    /// examples or tokens (updates only when the runs' batches are the same).
    Compare(CompareArgs),
    /// Print the rule behind a diagnostic code: what it checks, the failure
    /// it prevents, a wrong and a right example, and the fix.
    Explain(ExplainArgs),
    /// Print a shell completion script.
    Completions(CompletionsArgs),
}

/// Arguments of `explain`.
#[derive(Debug, Args)]
pub(crate) struct ExplainArgs {
    /// The code, as diagnostics print it (`accum::plan::global-batch`); the
    /// `accum::` prefix may be left out. Without a code, every code is listed.
    #[arg(value_name = "CODE")]
    pub(crate) code: Option<String>,
}

/// Output format of a sheet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum SheetFormat {
    /// Markdown; with -o every plot is written as an SVG beside it.
    Md,
    /// One self-contained HTML file with the plots inline; no script.
    Html,
    /// The sheet's data as JSON.
    Json,
    /// The run report's per-update statistics as CSV, one row per update
    /// attempt (for pandas, a spreadsheet or a tracker); needs --report.
    Csv,
}

/// The x axis runs are compared against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum CompareAxis {
    /// Supervised tokens processed.
    Tokens,
    /// Examples processed.
    Examples,
    /// Applied updates: only for runs with the same batches.
    Updates,
}

/// Arguments of `compare`.
#[derive(Debug, Args)]
pub(crate) struct CompareArgs {
    /// Run reports (JSON), as the engine or a loop's recorder writes them.
    #[arg(required = true, num_args = 2.., value_name = "RUN.json")]
    pub(crate) reports: Vec<std::path::PathBuf>,

    /// The x axis of every plot.
    #[arg(long, value_enum, default_value_t = CompareAxis::Tokens)]
    pub(crate) axis: CompareAxis,

    /// Draw the loss on a logarithmic axis.
    #[arg(long)]
    pub(crate) log_y: bool,

    /// Show only this part of the x axis of the run's plots: A..B, A.. or
    /// ..B, in the axis' unit (for example 1000..5000).
    #[arg(long, value_name = "A..B")]
    pub(crate) range: Option<String>,

    /// Output format (default: from the -o extension; md on stdout); csv is not
    /// one of them.
    #[arg(long, value_enum)]
    pub(crate) format: Option<SheetFormat>,

    /// Write the comparison to this file (atomically) instead of stdout; its
    /// extension says the format (.md, .html, .json), and must agree with --format.
    #[arg(short, long, value_name = "OUT")]
    pub(crate) output: Option<std::path::PathBuf>,
}

/// Arguments of `sheet`.
#[derive(Debug, Args)]
pub(crate) struct SheetArgs {
    /// The configuration file.
    #[arg(value_name = "FILE")]
    pub(crate) file: std::path::PathBuf,

    /// A run report written by `accum run --report` or a loop's recorder.
    #[arg(long, value_name = "RUN.json")]
    pub(crate) report: Option<std::path::PathBuf>,

    /// Read FILE through this JSON Schema instead of the built-in one (a
    /// config type's own, from its binary's `schema` command): plan roles,
    /// ramp-up and lengths come from its `x-accum-*` marks, as in `validate --schema`.
    #[arg(long, value_name = "SCHEMA")]
    pub(crate) schema: Option<std::path::PathBuf>,

    /// Render a report that does not belong to FILE (another configuration
    /// hash, plan or length) under a banner that says what differs, instead
    /// of refusing it.
    #[arg(long)]
    pub(crate) force: bool,

    /// Draw the loss on a logarithmic axis.
    #[arg(long)]
    pub(crate) log_y: bool,

    /// Show only this part of the x axis of the run's plots: A..B, A.. or
    /// ..B, in the axis' unit (for example 1000..5000).
    #[arg(long, value_name = "A..B")]
    pub(crate) range: Option<String>,

    /// Output format (default: from the -o extension; md on stdout).
    #[arg(long, value_enum)]
    pub(crate) format: Option<SheetFormat>,

    /// Write the sheet to this file (atomically) instead of stdout; its
    /// extension says the format (.md, .html, .json, .csv), and must agree with --format.
    #[arg(short, long, value_name = "OUT")]
    pub(crate) output: Option<std::path::PathBuf>,
}

/// Arguments of `schema`.
#[derive(Debug, Args)]
pub(crate) struct SchemaArgs {
    /// Write the schema to this file (atomically) instead of stdout; a .json name.
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Option<std::path::PathBuf>,
}

/// Arguments of `validate`.
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
    #[arg(long, value_enum, default_value_t = DiagnosticFormat::Human)]
    pub(crate) format: DiagnosticFormat,

    /// Exit 1 on warnings too, not only on errors (for CI and pre-commit).
    #[arg(long)]
    pub(crate) deny_warnings: bool,

    #[command(flatten)]
    pub(crate) fixing: FixArgs,

    /// Print how many findings each code has, and how many of them --fix
    /// would fix, instead of the findings themselves (for a large
    /// repository's first look).
    #[arg(long, conflicts_with = "diff")]
    pub(crate) statistics: bool,
}

/// How `validate` and `lint` apply the fixes their findings carry.
#[derive(Clone, Copy, Debug, Args)]
#[command(group(clap::ArgGroup::new("fixing").args(["fix", "diff"])))]
pub(crate) struct FixArgs {
    /// Apply the safe fixes in place (a misspelt key with one near key, a
    /// number written in quotes), then report what is left. The file's
    /// comments, key order and layout are kept: only the text of each fix
    /// changes. The files are written all or none.
    #[arg(long)]
    pub(crate) fix: bool,

    /// With --fix or --diff, also apply the fixes that need review (another
    /// plan value, a unit for a bare count) where a finding offers exactly
    /// one; a finding with several choices is always left to you.
    #[arg(long, requires = "fixing")]
    pub(crate) unsafe_fixes: bool,

    /// Print what --fix would change as a unified diff, and write nothing;
    /// exit 1 when a file would change.
    #[arg(long)]
    pub(crate) diff: bool,
}

impl FixArgs {
    /// The fixes to apply: up to this applicability, or none.
    pub(crate) fn allowed(self) -> Option<crate::fix::Applicability> {
        use crate::fix::Applicability;
        (self.fix || self.diff).then_some(if self.unsafe_fixes {
            Applicability::Review
        } else {
            Applicability::Safe
        })
    }
}

/// Arguments of `replan`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("limit").required(true).multiple(true).args(["max_micro_batch", "memory_budget", "replicas"])))]
pub(crate) struct ReplanArgs {
    /// The configuration file to re-plan.
    #[arg(value_name = "FILE")]
    pub(crate) file: std::path::PathBuf,

    /// The largest micro-batch that fits.
    #[arg(long, value_name = "M", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) max_micro_batch: Option<u64>,

    /// A new data-parallel degree D, keeping the global batch B = m·A·D:
    /// the same micro-batch when B is divisible by m·D, else the largest
    /// smaller one (and ≤ --max-micro-batch) that is; A follows. A file that
    /// sets world_size gets world_size = D × tensor × pipeline × context.
    #[arg(long, value_name = "D", value_parser = clap::value_parser!(u64).range(1..), conflicts_with = "memory_budget")]
    pub(crate) replicas: Option<u64>,

    /// The per-device memory budget, e.g. 24GiB: the largest micro-batch whose
    /// estimate (weights, gradients, optimizer state, activations × m) fits.
    #[arg(long, value_name = "SIZE", conflicts_with = "max_micro_batch")]
    pub(crate) memory_budget: Option<accum_core::estimate::ByteSize>,

    /// Parameters per device, for --memory-budget (default: the built-in
    /// model's): 7e9, 7B or 7000000000.
    #[arg(long, value_name = "N", requires = "memory_budget", value_parser = crate::quantity::parse_count)]
    pub(crate) params: Option<u64>,

    /// Activation memory of one example, for --memory-budget (default: the built-in model's).
    #[arg(long, value_name = "SIZE", requires = "memory_budget")]
    pub(crate) activation_per_example: Option<accum_core::estimate::ByteSize>,

    /// Write the new configuration to this file (atomically), named with the
    /// extension of the file's own format.
    #[arg(short, long, value_name = "FILE", conflicts_with = "in_place")]
    pub(crate) output: Option<std::path::PathBuf>,

    /// Replace FILE, keeping the old one as FILE.bak (which must not exist yet).
    #[arg(long)]
    pub(crate) in_place: bool,

    /// Format of the summary (the new configuration keeps the file's format).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,
}

/// Arguments of `completions`.
#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub(crate) shell: clap_complete::Shell,
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

/// Arguments of `calc`.
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

    /// Parameters per device: 1.3e9, 1.3B or 1300000000. The memory estimate
    /// needs --activation-per-example too; the scaling estimate reduces
    /// gradients of this many parameters unless --grad-bytes says otherwise.
    #[arg(long, value_name = "N", value_parser = crate::quantity::parse_count)]
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

    /// Examples per second one device processes at micro-batch m, for the scaling estimate.
    #[arg(long, value_name = "EX_PER_SEC", requires = "bandwidth")]
    pub(crate) device_throughput: Option<f64>,

    /// All-reduce bandwidth per second, e.g. 50GB, for the scaling estimate.
    #[arg(long, value_name = "SIZE", requires = "device_throughput")]
    pub(crate) bandwidth: Option<accum_core::estimate::ByteSize>,

    /// Gradient bytes reduced per update (default: params × gradient precision).
    #[arg(long, value_name = "SIZE", requires = "device_throughput")]
    pub(crate) grad_bytes: Option<accum_core::estimate::ByteSize>,

    /// A stage of a batch ramp-up before the full batch (-a or -B): its global
    /// batch and where it ends, counted from the start of the run, e.g.
    /// `--stage 128:128k-examples` (a `-` or a quoted space between number and
    /// unit). Repeat it for each stage, in order; after the last one the run
    /// trains at the full batch to its end.
    #[arg(long = "stage", value_name = "B:UNTIL", value_parser = parse_stage, conflicts_with = "ramp")]
    pub(crate) stages: Vec<StageSpec>,

    /// A linear batch ramp-up to the full batch, as Megatron-LM's
    /// --rampup-batch-size: the first global batch, the increment, and the
    /// length the increments are spread over, e.g. `--ramp 16:16:4B-tokens`.
    #[arg(long, value_name = "START:INCREMENT:OVER", value_parser = parse_ramp)]
    pub(crate) ramp: Option<LinearRamp>,

    /// The run's length (e.g. 300B-tokens, 100k-updates): its updates,
    /// examples and tokens, through the stages of a ramp-up.
    #[arg(long, value_name = "SPAN", value_parser = parse_span)]
    pub(crate) total: Option<Span>,

    /// A length to print in every unit (updates, microbatches, examples,
    /// tokens) through the plan or its stages, e.g. `--span 2000-updates` for
    /// a warmup; repeat it for several.
    #[arg(long = "span", value_name = "SPAN", value_parser = parse_span)]
    pub(crate) spans: Vec<Span>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,
}

/// Parses a span written on a command line: `128k-examples`, `4B_tokens`, or
/// with a (quoted) space. The one reader of every length option (`--span`,
/// `--total`, a stage's end, a ramp's length): the number is read before
/// the `-` that joins it to its unit, so that `-5-updates` is refused as
/// negative instead of read as 5, and `0x5-updates` as no number; a length
/// of 0 is refused, since none of these options means anything at 0.
pub(crate) fn parse_span(text: &str) -> Result<Span, String> {
    let trimmed = text.trim();
    if let Some(rest) = trimmed.strip_prefix('-') {
        return Err(format!(
            "`{text}` is negative; a length counts from 0: write it without the sign, e.g. {}",
            rest.trim_start()
        ));
    }
    let parsed = match trimmed
        .char_indices()
        .find(|&(_, c)| c == '-' || c.is_whitespace())
    {
        // The joining character may be any blank, some of them several
        // bytes long (U+2000).
        Some((at, joint)) => {
            let (number, unit) = (&trimmed[..at], trimmed[at + joint.len_utf8()..].trim());
            accum_core::command_line::parse_count(number)
                .and_then(|_| format!("{number} {}", unit.replace(['-', '_'], " ")).parse::<Span>())
        }
        None => trimmed.replace('_', " ").parse::<Span>(),
    };
    let span = parsed.map_err(|err| {
        let fix = match &err {
            accum_core::SpanError::UnknownUnit { number, word } => {
                crate::suggest::unit_did_you_mean(number, word).unwrap_or_else(|| err.fix())
            }
            _ => err.fix(),
        };
        format!("{}; {fix}", err.message())
    })?;
    if span.value() == 0 {
        return Err(format!(
            "`{text}` is a length of 0; give a length above 0, e.g. 1-{}",
            span.unit().plural()
        ));
    }
    Ok(span)
}

/// Parses `--stage B:UNTIL`.
pub(crate) fn parse_stage(text: &str) -> Result<StageSpec, String> {
    let (batch, until) = text.split_once(':').ok_or_else(|| {
        format!("`{text}` is not B:UNTIL; write the stage's global batch and where it ends, e.g. 128:128k-examples")
    })?;
    let batch = batch.trim().parse::<u64>().map_err(|_| {
        format!("`{batch}` is not a global batch; write a whole number of examples, e.g. 128:128k-examples")
    })?;
    Ok(StageSpec::global_batch(batch).until(parse_span(until)?))
}

/// Parses `--ramp START:INCREMENT:OVER`.
pub(crate) fn parse_ramp(text: &str) -> Result<LinearRamp, String> {
    let parts: Vec<&str> = text.splitn(3, ':').collect();
    let [start, increment, over] = parts.as_slice() else {
        return Err(format!(
            "`{text}` is not START:INCREMENT:OVER; write the first global batch, the increment and the ramp's length, e.g. 16:16:4B-tokens"
        ));
    };
    let count = |what: &str, value: &str| {
        value.trim().parse::<u64>().map_err(|_| {
            format!("the ramp's {what} `{value}` is not a whole number of examples, e.g. 16:16:4B-tokens")
        })
    };
    Ok(LinearRamp {
        start: count("start", start)?,
        increment: count("increment", increment)?,
        over: parse_span(over)?,
    })
}
