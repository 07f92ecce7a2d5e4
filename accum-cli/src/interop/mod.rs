//! Interop with the frameworks people already train with: DeepSpeed,
//! Megatron-LM, the Hugging Face Trainer (with Accelerate), Lightning, NeMo
//! and axolotl.
//!
//! [`import`] reads a framework's file as that framework reads it, reproduces
//! its own batch arithmetic (DeepSpeed's fill-in and assertion, Megatron's
//! number of microbatches, the Trainer's `"auto"` values, NeMo's global batch)
//! and its refusals, and returns what the file says as a
//! [`PartialConfig`]: the sections of accum's training config with only the
//! keys the file sets, plus the batch `m`, `A`, `D`, `B` the framework would
//! train with. Alongside come findings: values that do not divide, what the
//! framework would silently round, "steps" that are microbatches, schedules
//! that shift, partial last groups, per-token normalization that is off,
//! model-parallel devices counted as replicas. [`export`] writes a framework's
//! file from a partial config: what the config says, and what the framework
//! needs to train with the same batch.
//!
//! ```
//! use accum_cli::interop::{Framework, ImportOptions, export, import};
//!
//! // DeepSpeed fills gradient_accumulation_steps = 512 // 4 // 8 = 16.
//! let text = r#"{ "train_batch_size": 512, "train_micro_batch_size_per_gpu": 4 }"#;
//! let opts = ImportOptions { world_size: Some(8), ..ImportOptions::default() };
//! let imported = import(Framework::DeepSpeed, "ds.json", text, &opts)?;
//! assert_eq!(imported.config.batch.accumulation, Some(16));
//! assert!(imported.to_toml().contains("global_batch = 512"));
//! let hf = export(Framework::HuggingFace, &imported.config)?;
//! assert!(hf.text.contains("\"gradient_accumulation_steps\": 16"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Severity: a finding is an **error** when the framework would refuse the
//! file or silently train with a batch, schedule or loss denominator other
//! than the one written, or when a value the batch needs is unknown (the
//! finding names it and what supplies it); it is a **warning** when the run
//! works as written but a value is ambiguous, not carried over, or likely not
//! what was meant. Values that do not matter for the batch are never errors.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use accum_core::Code;
use serde::{Deserialize, Serialize};

pub use accum_core::config::partial::PartialConfig;

use crate::diagnostic::{Diagnostic, Severity};

mod axolotl;
mod census;
mod compose;
mod deepspeed;
pub(crate) mod detect;
mod dialect;
#[cfg_attr(
    not(feature = "harness"),
    allow(unused_imports, reason = "the fuzz harness checks for it")
)]
pub(crate) use dialect::READER_GAP;
mod export;
mod files;
mod huggingface;
mod interpolate;
mod lightning;
mod litgpt;
mod megatron;
mod reader;
mod resolvers;
mod stages;

#[cfg(test)]
mod census_tests;
#[cfg(test)]
mod detect_tests;
#[cfg(test)]
mod ramp_export_tests;
#[cfg(test)]
mod ramp_tests;
#[cfg(all(test, unix))]
mod repo_tests;
#[cfg(test)]
mod severity_tests;
#[cfg(test)]
mod step_tests;
#[cfg(test)]
mod survey_tests;
#[cfg(test)]
mod tests;

/// The interop guide (`docs/interop.md`), compiled so that its example runs.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/interop.md")]
pub struct InteropGuide;

/// The frameworks accum reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Framework {
    /// DeepSpeed's JSON (hjson) configuration.
    DeepSpeed,
    /// Megatron-LM's arguments: a launch script, an argument list, or a YAML
    /// file of arguments.
    Megatron,
    /// Hugging Face `TrainingArguments` as JSON or YAML (TRL,
    /// alignment-handbook and LLaMA-Factory recipes), with the DeepSpeed file
    /// it names and an Accelerate config.
    HuggingFace,
    /// Lightning `Trainer` arguments as JSON or YAML, LightningCLI files.
    Lightning,
    /// NeMo's Megatron models: a Lightning trainer, with the batch in the
    /// model section (`micro_batch_size`, `global_batch_size`).
    NeMo,
    /// axolotl's YAML configuration.
    Axolotl,
    /// LitGPT's recipes (Lightning Fabric): `train.global_batch_size`,
    /// `train.micro_batch_size`, `devices`, `num_nodes`.
    LitGpt,
}

impl Framework {
    /// Every framework.
    pub const ALL: [Framework; 7] = [
        Framework::DeepSpeed,
        Framework::Megatron,
        Framework::HuggingFace,
        Framework::Lightning,
        Framework::NeMo,
        Framework::Axolotl,
        Framework::LitGpt,
    ];

    /// The command-line name (`deepspeed`, `megatron`, `hf`, `lightning`,
    /// `nemo`, `axolotl`, `litgpt`).
    pub const fn key(self) -> &'static str {
        match self {
            Framework::DeepSpeed => "deepspeed",
            Framework::Megatron => "megatron",
            Framework::HuggingFace => "hf",
            Framework::Lightning => "lightning",
            Framework::NeMo => "nemo",
            Framework::Axolotl => "axolotl",
            Framework::LitGpt => "litgpt",
        }
    }

    /// The framework's name in prose.
    pub const fn display_name(self) -> &'static str {
        match self {
            Framework::DeepSpeed => "DeepSpeed",
            Framework::Megatron => "Megatron-LM",
            Framework::HuggingFace => "Hugging Face Trainer",
            Framework::Lightning => "Lightning",
            Framework::NeMo => "NeMo",
            Framework::Axolotl => "axolotl",
            Framework::LitGpt => "LitGPT",
        }
    }
}

impl fmt::Display for Framework {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.display_name())
    }
}

/// A framework name that is not one of the seven.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownFramework {
    /// The name as given.
    pub name: String,
}

impl fmt::Display for UnknownFramework {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown framework `{}`; use `deepspeed`, `megatron`, `hf` (or `huggingface`), `lightning`, `nemo`, `axolotl` or `litgpt`",
            self.name
        )
    }
}

impl std::error::Error for UnknownFramework {}

impl FromStr for Framework {
    type Err = UnknownFramework;

    fn from_str(name: &str) -> Result<Framework, UnknownFramework> {
        match name.trim().to_ascii_lowercase().as_str() {
            "deepspeed" | "ds" => Ok(Framework::DeepSpeed),
            "megatron" | "megatron-lm" => Ok(Framework::Megatron),
            "hf" | "huggingface" | "hugging-face" | "transformers" | "trl" => {
                Ok(Framework::HuggingFace)
            }
            "lightning" | "pytorch-lightning" => Ok(Framework::Lightning),
            "nemo" => Ok(Framework::NeMo),
            "axolotl" => Ok(Framework::Axolotl),
            "litgpt" | "lit-gpt" => Ok(Framework::LitGpt),
            _ => Err(UnknownFramework {
                name: name.to_owned(),
            }),
        }
    }
}

/// What a framework's file does not say, and the launcher or the data decide.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportOptions {
    /// All devices of the job (the launcher's world size).
    pub world_size: Option<u64>,
    /// Accelerate's `num_processes` (Hugging Face); the same as the world size.
    pub num_processes: Option<u64>,
    /// Nodes of the job (Lightning's `num_nodes` when the file does not say).
    pub num_nodes: Option<u64>,
    /// Tensor-parallel degree used by the model code (files other than
    /// Megatron's, NeMo's and axolotl's do not say).
    pub tensor: Option<u64>,
    /// Pipeline-parallel degree used by the model code. With DeepSpeed, a
    /// pipeline degree above 1 means a `PipelineModule`.
    pub pipeline: Option<u64>,
    /// Context/sequence-parallel degree used by the model code.
    pub context: Option<u64>,
    /// DeepSpeed only: a model-parallel unit (`mpu`) is passed to
    /// `deepspeed.initialize`, so DeepSpeed divides by the data-parallel size
    /// instead of all ranks.
    pub deepspeed_mpu: bool,
    /// Examples per microbatch per replica, for Lightning files that do not
    /// say (the `DataLoader`'s `batch_size`).
    pub micro_batch: Option<u64>,
    /// Examples in the training set.
    pub examples: Option<u64>,
    /// Tokens per example, when fixed.
    pub seq_len: Option<u64>,
    /// Examples have different numbers of supervised tokens (or padding).
    pub variable_lengths: bool,
    /// Variables of a launch script (`MBS=4`), or its positional arguments
    /// (`1=…`), as the shell would have them; for OmegaConf's files, the
    /// environment `${oc.env:NAME}` reads.
    pub env: Vec<(String, String)>,
    /// Values of keys an OmegaConf file computes with a resolver accum does
    /// not evaluate (`trainer.accumulate_grad_batches=4`), as Hydra's
    /// overrides give them.
    pub set: Vec<(String, String)>,
    /// Hugging Face: the DeepSpeed file, instead of the one the file names
    /// with `deepspeed:`.
    pub deepspeed_config: Option<PathBuf>,
    /// Hugging Face: the Accelerate config the run is launched with.
    pub accelerate_config: Option<PathBuf>,
    /// Where files named inside the file (`deepspeed: ds_z3.json`) are looked
    /// for, in order. [`import_file`] adds the working directory, the file's
    /// directory and its ancestors up to its repository root.
    pub search_dirs: Vec<PathBuf>,
    /// The folders files named inside the file may be read from: a name
    /// that leads anywhere else (`../../x`, `/etc/passwd`, a link out) is
    /// not read, and a finding says so (`--allow-path`). [`import_file`]
    /// adds the file's repository root: the nearest folder above it with
    /// `.git`, else its own folder.
    pub allow_paths: Vec<PathBuf>,
    /// The imported file's path, when it is read from disk ([`import_file`]
    /// sets it): the resolvers an OmegaConf file uses are looked for in the
    /// Python files of its repository (the nearest folder above it with
    /// `.git`, else its folder).
    pub origin: Option<PathBuf>,
}

/// A batch that changes during the run, as the framework states it. The
/// imported config holds it as `[batch.ramp]` or `[[batch.stages]]`, with
/// `[batch]` the batch after the ramp, when accum can plan it exactly (the
/// findings say why not).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BatchSchedule {
    /// Megatron's `--rampup-batch-size START INCREMENT SAMPLES` (NeMo's
    /// `model.rampup_batch_size`): the global batch grows from `start` by
    /// `increment` in equal shares of `samples`, then stays at the final one.
    Ramp {
        /// The first global batch.
        start: u64,
        /// What each step adds.
        increment: u64,
        /// Examples over which the ramp runs.
        samples: u64,
        /// The global batch after the ramp.
        end: u64,
    },
    /// Megatron's `--step-batch-size-schedule`: from each threshold on
    /// (examples consumed), the global batch is the one given.
    Steps(Vec<BatchStep>),
    /// Lightning's accumulation by epoch: from each epoch on, `A` is the one
    /// given.
    Epochs(Vec<AccumulationStep>),
}

/// One step of a global-batch schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchStep {
    /// Examples consumed when it starts.
    pub from_examples: u64,
    /// The global batch from there on.
    pub global_batch: u64,
}

/// One step of an accumulation schedule by epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccumulationStep {
    /// The epoch it starts at (0-based).
    pub from_epoch: u64,
    /// Microbatches per update from there on.
    pub accumulation: u64,
}

/// One file read by an import, with the findings about it.
#[derive(Clone, Debug, PartialEq)]
pub struct FileReport {
    /// The name shown in findings (the path as given).
    pub name: String,
    /// The file's text.
    pub text: String,
    /// Findings whose ranges are in this text, in the order of the checks.
    pub findings: Vec<Diagnostic>,
    /// Keys of the batch vocabulary the reader left unread; they become
    /// `unread` findings once the batch is known.
    pub(crate) unread: Vec<census::Unread>,
    /// Named inside another input, not by the user: its findings quote only
    /// the line of their key (`source::named::one_line`).
    pub(crate) named_inside: bool,
}

/// The result of [`import`]: what the file says, the batch, and every finding.
#[derive(Clone, Debug, PartialEq)]
pub struct Imported {
    /// The file as accum's config: the batch the framework trains with, and
    /// only the other keys the file sets.
    pub config: PartialConfig,
    /// The framework's batch schedule, when the batch changes during the run.
    pub batch_schedule: Option<BatchSchedule>,
    /// The files read (the first is the one imported) with their findings.
    pub files: Vec<FileReport>,
}

impl Imported {
    /// Whether any finding is an error (the CLI exits 1).
    pub fn has_errors(&self) -> bool {
        self.findings()
            .any(|f| f.finding.severity == Severity::Error)
    }

    /// Whether the batch is reported with confidence: no finding is an
    /// error, and no key or argument of the batch vocabulary was left
    /// unread (`accum::interop::unread`).
    pub fn confident(&self) -> bool {
        !self.has_errors() && !self.findings().any(|f| f.finding.code == Code::Unread)
    }

    /// Every finding, file after file.
    pub fn findings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.files.iter().flat_map(|f| f.findings.iter())
    }

    /// The config as accum's TOML: only the keys that are set.
    pub fn to_toml(&self) -> String {
        config_toml(&self.config)
    }

    /// The findings as text, with `file:line:col` headers and the source
    /// underlined.
    pub fn render(&self, color: bool) -> String {
        render_reports(&self.files, color)
    }
}

/// A partial config as TOML, with the `toml` crate, every hidden character
/// of its strings escaped ([`crate::escape::toml`]): the text reads back
/// to the same config, in a file and through a terminal alike.
pub(crate) fn config_toml(config: &PartialConfig) -> String {
    crate::escape::toml(
        toml::to_string(config).expect("a config of numbers, strings and tables always serializes"),
    )
}

/// The findings of each file, rendered.
pub(crate) fn render_reports(files: &[FileReport], color: bool) -> String {
    files
        .iter()
        .filter(|f| !f.findings.is_empty())
        .map(|f| {
            if f.named_inside {
                let findings = crate::source::named::one_line(&f.text, &f.findings);
                crate::diagnostic::render_text(&f.name, &f.text, &findings, color)
            } else {
                crate::diagnostic::render_text(&f.name, &f.text, &f.findings, color)
            }
        })
        .collect()
}

/// Why a file could not be imported.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ImportError {
    /// The file could not be read.
    Read {
        /// The file name.
        name: String,
        /// Why, with the fix.
        reason: String,
    },
    /// The text is not valid JSON/YAML (or not a table at the top).
    Syntax {
        /// The file name.
        name: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// The batch cannot be known or the framework would refuse it; every
    /// finding is listed (at least one is an error).
    Invalid {
        /// The files read, with their findings.
        files: Vec<FileReport>,
    },
}

impl ImportError {
    /// The findings as text (for [`ImportError::Invalid`]; the message for the others).
    pub fn render(&self, color: bool) -> String {
        match self {
            ImportError::Invalid { files } => render_reports(files, color),
            other => format!("{other}\n"),
        }
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // A name given on the command line shows on one line, whatever
            // it holds.
            ImportError::Read { name, reason } => {
                write!(f, "{}: {reason}", crate::escape::line(name))
            }
            ImportError::Syntax {
                name,
                line,
                column,
                message,
            } => write!(f, "{name}:{line}:{column}: {message}"),
            ImportError::Invalid { files } => {
                let name = files.first().map_or("the file", |f| f.name.as_str());
                let errors: Vec<&Diagnostic> = files
                    .iter()
                    .flat_map(|f| f.findings.iter())
                    .filter(|x| x.finding.severity == Severity::Error)
                    .collect();
                write!(
                    f,
                    "{name} gives no batch to train with ({} error{})",
                    errors.len(),
                    if errors.len() == 1 { "" } else { "s" }
                )?;
                for e in errors {
                    write!(f, "; {}", e.finding.message)?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for ImportError {}

/// A framework's file written by [`export`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exported {
    /// The file's text.
    pub text: String,
    /// Keys of the config the framework's file does not carry, each with why.
    pub notes: Vec<String>,
}

/// Why a config cannot be written for a framework.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ExportError {
    /// The batch section is not a valid plan.
    Plan(accum_core::plan::PlanError),
    /// The batch ramp-up (`[batch.ramp]` or `[[batch.stages]]`) is not valid.
    Stages(accum_core::plan::StageError),
    /// A span is not a whole number of the framework's unit.
    NotWhole {
        /// The framework.
        framework: Framework,
        /// The config key (`schedule.warmup`).
        key: &'static str,
        /// The framework's key it would become.
        framework_key: &'static str,
        /// The span.
        span: accum_core::Span,
        /// The plan's explanation with the nearest valid values.
        source: accum_core::plan::PlanError,
    },
    /// The framework has no way to say what the config says about the batch
    /// or its loss.
    Unsupported {
        /// The framework.
        framework: Framework,
        /// The config key.
        key: &'static str,
        /// Why, with the fix.
        reason: String,
    },
    /// The data ends in a partial group and the framework would not apply
    /// the configured policy.
    LastGroup {
        /// The framework.
        framework: Framework,
        /// The configured policy.
        policy: accum_core::plan::LastGroup,
        /// Examples in the data.
        examples: u64,
        /// Examples per update.
        effective_batch: u64,
        /// What the framework does instead.
        behaviour: &'static str,
    },
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExportError::Plan(err) => write!(f, "the batch section is not a valid plan: {err}"),
            ExportError::Stages(err) => write!(f, "the batch ramp-up is not valid: {err}"),
            ExportError::NotWhole {
                framework,
                key,
                framework_key,
                span,
                source,
            } => write!(
                f,
                "{key} = \"{span}\" cannot be written as {framework}'s `{framework_key}` without rounding: {source}"
            ),
            ExportError::Unsupported {
                framework,
                key,
                reason,
            } => write!(f, "{framework} cannot express {key}: {reason}"),
            ExportError::LastGroup {
                framework,
                policy,
                examples,
                effective_batch,
                behaviour,
            } => {
                let rest = examples % effective_batch.max(&1);
                let below = examples - rest;
                let above = below.saturating_add(*effective_batch);
                write!(
                    f,
                    "{examples} examples leave a partial group of {rest} examples (B = {effective_batch}) and last_group is \"{policy}\", \
                     but {framework} {behaviour}; "
                )?;
                if below > 0 {
                    write!(f, "use {below} or {above} examples")?;
                } else {
                    write!(f, "use {above} examples")?;
                }
                write!(f, ", or a last_group {framework} applies")
            }
        }
    }
}

impl std::error::Error for ExportError {}

impl From<accum_core::plan::PlanError> for ExportError {
    fn from(err: accum_core::plan::PlanError) -> Self {
        ExportError::Plan(err)
    }
}

/// Reads a framework's file `text` (named `name` in findings). Files it names
/// (a DeepSpeed config in a Trainer recipe) are looked for in
/// `opts.search_dirs` and read only inside `opts.allow_paths`; the files in
/// `opts` are read as given.
pub fn import(
    framework: Framework,
    name: &str,
    text: &str,
    opts: &ImportOptions,
) -> Result<Imported, ImportError> {
    use dialect::run;
    if let Some(refusal) = wrong_dialect(framework, name, text) {
        return Err(refusal);
    }
    match framework {
        Framework::DeepSpeed => run::<deepspeed::DeepSpeed>(name, text, opts),
        Framework::Megatron => run::<megatron::Megatron>(name, text, opts),
        Framework::HuggingFace => run::<huggingface::HuggingFace>(name, text, opts),
        Framework::Lightning => run::<lightning::Lightning>(name, text, opts),
        Framework::NeMo => run::<lightning::NeMo>(name, text, opts),
        Framework::Axolotl => run::<axolotl::Axolotl>(name, text, opts),
        Framework::LitGpt => run::<litgpt::LitGpt>(name, text, opts),
    }
}

/// A file the evidence confidently claims for a framework other than the
/// one named: refused with the framework it is, rather than read with the
/// wrong rules.
fn wrong_dialect(framework: Framework, name: &str, text: &str) -> Option<ImportError> {
    let detect::Detection::Claim {
        kind,
        evidence,
        confident: true,
    } = detect::detect(name, text)
    else {
        return None;
    };
    if detect::reads_as(framework, kind) {
        return None;
    }
    let first = evidence.first()?;
    let (message, help) = match kind {
        detect::Kind::Accelerate => (
            format!(
                "this is an Accelerate config ({}), not {framework}'s: it gives the processes, not the batch",
                detect::listed(&evidence)
            ),
            "give the training file as FILE and this one with --accelerate-config".to_owned(),
        ),
        detect::Kind::Framework(other) => (
            format!(
                "this is a {other} file, not {framework}'s: {} {} {other}'s own, which {framework} does not read",
                detect::listed(&evidence),
                if evidence.len() == 1 { "is" } else { "are" },
            ),
            format!("import it with `accum import {} FILE`", other.key()),
        ),
    };
    let finding = Diagnostic::error(
        Code::Dialect,
        accum_core::FieldPath::new(first.what.split('.')),
        message,
    )
    .help(help)
    .at(first.range.clone(), format!("{}'s key", kind.name()));
    Some(ImportError::Invalid {
        files: vec![FileReport {
            name: name.to_owned(),
            text: text.to_owned(),
            findings: vec![finding],
            unread: Vec::new(),
            named_inside: false,
        }],
    })
}

/// The framework a file is detected as, and the evidence, for a command
/// given no framework.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Detected {
    /// The framework read.
    pub(crate) framework: Framework,
    /// The keys or options that identify it.
    pub(crate) evidence: Vec<String>,
    /// Whether it leads by two signs or more.
    pub(crate) confident: bool,
}

/// Reads a file without a framework named: the one its keys identify
/// ([`detect`]), with the evidence; refused, with the reason, when no
/// framework or two fit equally.
pub(crate) fn import_file_detected(
    path: &Path,
    opts: &ImportOptions,
) -> (Option<Detected>, Result<Imported, ImportError>) {
    let name = path.display().to_string();
    match files::read(path) {
        Ok(text) => import_text_detected(path, &text, opts),
        Err(reason) => (None, Err(ImportError::Read { name, reason })),
    }
}

/// As [`import_file_detected`], for the text of the file at `path` (a file
/// with fixes applied, checked before it is written).
pub(crate) fn import_text_detected(
    path: &Path,
    text: &str,
    opts: &ImportOptions,
) -> (Option<Detected>, Result<Imported, ImportError>) {
    let name = path.display().to_string();
    let detection = detect::detect(&name, text);
    let refuse = |finding: Diagnostic| ImportError::Invalid {
        files: vec![FileReport {
            name: name.clone(),
            text: text.to_owned(),
            findings: vec![finding],
            unread: Vec::new(),
            named_inside: false,
        }],
    };
    let names = "`deepspeed`, `megatron`, `hf`, `lightning`, `nemo`, `axolotl` or `litgpt`";
    match detection {
        detect::Detection::Claim {
            kind: detect::Kind::Framework(framework),
            evidence,
            confident,
        } => {
            let detected = Detected {
                framework,
                evidence: evidence.iter().map(|f| f.what.clone()).collect(),
                confident,
            };
            (Some(detected), import_text(framework, path, text, opts))
        }
        detect::Detection::Claim {
            kind: detect::Kind::Accelerate,
            evidence,
            ..
        } => {
            let range = evidence.first().map_or(0..0, |f| f.range.clone());
            let finding = Diagnostic::error(
                Code::Dialect,
                vec![],
                format!(
                    "this is an Accelerate config ({}): it gives the processes, not the batch",
                    detect::listed(&evidence)
                ),
            )
            .help("give the training file as FILE and this one with --accelerate-config")
            .at(range, "Accelerate's key");
            (None, Err(refuse(finding)))
        }
        detect::Detection::Tie(kinds) => {
            let range = kinds
                .first()
                .and_then(|(_, f)| f.first())
                .map_or(0..0, |f| f.range.clone());
            let each: Vec<String> = kinds
                .iter()
                .map(|(kind, found)| format!("{} ({})", kind.name(), detect::listed(found)))
                .collect();
            let keys: Vec<String> = kinds
                .iter()
                .filter_map(|(kind, _)| match kind {
                    detect::Kind::Framework(f) => Some(format!("`{}`", f.key())),
                    detect::Kind::Accelerate => None,
                })
                .collect();
            let finding = Diagnostic::error(
                Code::Dialect,
                vec![],
                format!(
                    "the keys of this file fit several frameworks equally, so accum does not choose: {}",
                    crate::output::listed_by(&each, "; ")
                ),
            )
            .help(format!(
                "name the framework before the file: {}",
                crate::output::listed_by(&keys, " or ")
            ))
            .at(range, "evidence of more than one framework");
            (None, Err(refuse(finding)))
        }
        detect::Detection::Unknown => {
            let finding = Diagnostic::error(
                Code::Dialect,
                vec![],
                "no key or option of this file identifies a framework accum reads",
            )
            .help(format!("name the framework before the file: {names}"))
            .at(0..0, "framework unknown");
            (None, Err(refuse(finding)))
        }
    }
}

/// Reads a framework's file from disk (at most the configuration-file limit)
/// and imports it; files it names are looked for in `opts.search_dirs`, then
/// the working directory, the file's directory and its ancestors, and read
/// only inside its repository root and `opts.allow_paths`.
pub fn import_file(
    framework: Framework,
    path: &Path,
    opts: &ImportOptions,
) -> Result<Imported, ImportError> {
    let name = path.display().to_string();
    let text = files::read(path).map_err(|reason| ImportError::Read { name, reason })?;
    import_text(framework, path, &text, opts)
}

/// As [`import_file`], for the text of the file at `path` (a file with
/// fixes applied, checked before it is written): the files it names are
/// found from `path` as they would be from the file.
pub(crate) fn import_text(
    framework: Framework,
    path: &Path,
    text: &str,
    opts: &ImportOptions,
) -> Result<Imported, ImportError> {
    let name = path.display().to_string();
    let mut opts = opts.clone();
    // The file was read, so it resolves.
    if let Some(root) = crate::source::named::repository_root(path) {
        opts.search_dirs
            .extend(crate::source::named::search_dirs(path, &root));
        opts.allow_paths.push(root);
    }
    opts.origin = Some(path.to_owned());
    import(framework, &name, text, &opts)
}

/// Writes the framework's file (or argument list) for a config: the batch
/// the config's plan gives, and what else the config sets that the
/// framework can say.
pub fn export(framework: Framework, config: &PartialConfig) -> Result<Exported, ExportError> {
    let write = match framework {
        Framework::DeepSpeed => deepspeed::export,
        Framework::Megatron => megatron::export,
        Framework::HuggingFace => huggingface::export,
        Framework::Lightning => lightning::export,
        Framework::NeMo => lightning::export_nemo,
        Framework::Axolotl => axolotl::export,
        Framework::LitGpt => litgpt::export,
    };
    export::export(framework, config, write)
}
