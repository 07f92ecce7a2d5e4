//! Interop with the engines people already train with: DeepSpeed,
//! Megatron-LM, Hugging Face `TrainingArguments` and Lightning `Trainer`
//! arguments.
//!
//! [`import`] reads an engine's file, reproduces the engine's own batch
//! arithmetic (DeepSpeed's fill-in, Megatron's number of microbatches), and
//! returns the [`Canonical`] accum configuration the file means together with
//! [`Finding`]s: values that do not divide, what the engine would silently
//! round, "steps" that are microbatches, schedules that shift, partial last
//! groups, per-token normalization that is off, model-parallel devices
//! counted as replicas (SPEC R1, R3, R4, R6, R8, R9). [`export`] writes an
//! engine's file from a canonical configuration, consistent by construction,
//! with every span converted into the engine's unit through the [`Plan`].
//!
//! ```
//! use accum_cli::interop::{Engine, ImportOptions, export, import};
//!
//! // DeepSpeed fills gradient_accumulation_steps = 512 // 4 // 8 = 16.
//! let text = r#"{ "train_batch_size": 512, "train_micro_batch_size_per_gpu": 4 }"#;
//! let opts = ImportOptions { world_size: Some(8), ..ImportOptions::default() };
//! let imported = import(Engine::DeepSpeed, "ds.json", text, &opts)?;
//! assert_eq!(imported.canonical.batch.accumulation, 16);
//! assert!(imported.canonical.to_toml().contains("global_batch = 512"));
//! let hf = export(Engine::HuggingFace, &imported.canonical)?;
//! assert!(hf.contains("\"gradient_accumulation_steps\": 16"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Severity: a finding is an **error** when the engine would fail, silently
//! train with a batch, schedule or loss denominator other than the one
//! written, or when the file cannot be read as a plan; it is a **warning**
//! when the run works as written but a value is ambiguous, not carried over,
//! or likely not what was meant.

use std::fmt;
use std::ops::Range;
use std::str::FromStr;

use accum_core::{LastGroup, Layout, Plan, PlanError, PlanInput, Rounding, Span, UnitKind};
use serde::{Deserialize, Serialize};

pub use accum_core::settings::{Normalization, PrecisionMode};

use crate::diagnostic::{Diagnostic as Finding, Severity};
use crate::source::{Document, Node, NodeKind, SourceFormat};

pub mod deepspeed;
pub mod huggingface;
pub mod lightning;
pub mod megatron;

/// The canonical accum configuration an engine file means, by the TOML
/// section and key names of the canonical config (`[batch] micro_batch`, …).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Canonical {
    /// `[run]`: free text shown on sheets.
    pub run: RunSection,
    /// `[batch]`: `m`, `A`, `D`, `B` and `L`.
    pub batch: BatchSection,
    /// `[parallel]`: the device layout `D` comes from, when known.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub parallel: Option<ParallelSection>,
    /// `[loss]`: how the loss of a group is normalized (R4).
    pub loss: LossSection,
    /// `[precision]`: the number format and loss scaling (R7).
    pub precision: PrecisionSection,
    /// `[optimizer]`: clipping and learning rate.
    pub optimizer: OptimizerSection,
    /// `[schedule]`: warmup and total length, as spans (R1, R8).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub schedule: Option<ScheduleSection>,
    /// `[data]`: dataset size and last-group policy (R6).
    pub data: DataSection,
    /// `[log]`: logging interval, as a span.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub log: Option<LogSection>,
}

/// `[run]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSection {
    /// The run's name.
    pub name: String,
    /// Free text; import says where the values came from.
    pub notes: String,
}

/// `[batch]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchSection {
    /// `m`: examples per microbatch per replica.
    pub micro_batch: u64,
    /// `A`: microbatches per update per replica.
    pub accumulation: u64,
    /// `D`: data-parallel replicas.
    pub replicas: u64,
    /// `B = m·A·D`, written so that readers see it; checked on use.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub global_batch: Option<u64>,
    /// `L`, when every example has the same number of tokens.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub seq_len: Option<u64>,
}

/// `[parallel]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParallelSection {
    /// All devices of the job.
    pub world_size: u64,
    /// Tensor-parallel degree.
    pub tensor: u64,
    /// Pipeline-parallel degree.
    pub pipeline: u64,
    /// Context-parallel degree.
    pub context: u64,
}

impl ParallelSection {
    /// The plan layout.
    pub const fn layout(&self) -> Layout {
        Layout::new(self.world_size, self.tensor, self.pipeline, self.context)
    }
}

/// `[loss]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LossSection {
    /// The normalization.
    pub normalization: Normalization,
}

/// `[precision.loss_scale]` (R7).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LossScale {
    /// The initial (or, with growth and backoff 1, the static) scale.
    pub init: f64,
    /// Factor applied after `growth_interval` clean updates (1 = static).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub growth_factor: Option<f64>,
    /// Factor applied on overflow (1 = static).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub backoff_factor: Option<f64>,
    /// Clean updates before the scale grows.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub growth_interval: Option<u64>,
}

/// `[precision]`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PrecisionSection {
    /// The number format.
    pub mode: PrecisionMode,
    /// Loss scaling, for fp16.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub loss_scale: Option<LossScale>,
}

/// `[optimizer]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OptimizerSection {
    /// Global gradient-norm clipping threshold, after the whole group (R5).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub clip_norm: Option<f64>,
    /// Peak learning rate.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub lr: Option<f64>,
}

/// `[schedule]`: both lengths are optional so that a file that gives only
/// one of them is imported without inventing the other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScheduleSection {
    /// Learning-rate warmup.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub warmup: Option<Span>,
    /// Length of the whole run.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub total: Option<Span>,
}

/// `[data]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataSection {
    /// What happens to a partial last group (R6).
    pub last_group: LastGroup,
    /// Examples in the dataset, when known.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub examples: Option<u64>,
}

/// `[log]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogSection {
    /// Interval between log lines.
    pub every: Span,
}

impl Canonical {
    /// The plan the batch and parallel sections describe (R3).
    pub fn plan(&self) -> Result<Plan, PlanError> {
        PlanInput {
            micro_batch: Some(self.batch.micro_batch),
            accumulation: Some(self.batch.accumulation),
            replicas: Some(self.batch.replicas),
            layout: self.parallel.map(|p| p.layout()),
            seq_len: self.batch.seq_len,
            global_batch: self.batch.global_batch,
        }
        .resolve()
    }

    /// The canonical TOML file: the sections and keys above in a fixed
    /// order, spans as strings such as `"500 updates"`.
    pub fn to_toml(&self) -> String {
        let mut out = String::new();
        section(&mut out, "run");
        kv(&mut out, "name", &toml_string(&self.run.name));
        kv(&mut out, "notes", &toml_string(&self.run.notes));

        section(&mut out, "batch");
        kv(&mut out, "micro_batch", &self.batch.micro_batch.to_string());
        kv(
            &mut out,
            "accumulation",
            &self.batch.accumulation.to_string(),
        );
        kv(&mut out, "replicas", &self.batch.replicas.to_string());
        if let Some(b) = self.batch.global_batch {
            kv(&mut out, "global_batch", &b.to_string());
        }
        if let Some(l) = self.batch.seq_len {
            kv(&mut out, "seq_len", &l.to_string());
        }

        if let Some(p) = &self.parallel {
            section(&mut out, "parallel");
            kv(&mut out, "world_size", &p.world_size.to_string());
            kv(&mut out, "tensor", &p.tensor.to_string());
            kv(&mut out, "pipeline", &p.pipeline.to_string());
            kv(&mut out, "context", &p.context.to_string());
        }

        section(&mut out, "loss");
        kv(
            &mut out,
            "normalization",
            &toml_string(self.loss.normalization.key()),
        );

        section(&mut out, "precision");
        kv(&mut out, "mode", &toml_string(self.precision.mode.key()));
        if let Some(s) = &self.precision.loss_scale {
            section(&mut out, "precision.loss_scale");
            kv(&mut out, "init", &toml_float(s.init));
            if let Some(g) = s.growth_factor {
                kv(&mut out, "growth_factor", &toml_float(g));
            }
            if let Some(b) = s.backoff_factor {
                kv(&mut out, "backoff_factor", &toml_float(b));
            }
            if let Some(i) = s.growth_interval {
                kv(&mut out, "growth_interval", &i.to_string());
            }
        }

        section(&mut out, "optimizer");
        if let Some(c) = self.optimizer.clip_norm {
            kv(&mut out, "clip_norm", &toml_float(c));
        }
        if let Some(lr) = self.optimizer.lr {
            kv(&mut out, "lr", &toml_float(lr));
        }

        if let Some(s) = &self.schedule {
            section(&mut out, "schedule");
            if let Some(w) = s.warmup {
                kv(&mut out, "warmup", &toml_string(&w.to_string()));
            }
            if let Some(t) = s.total {
                kv(&mut out, "total", &toml_string(&t.to_string()));
            }
        }

        section(&mut out, "data");
        kv(
            &mut out,
            "last_group",
            &toml_string(self.data.last_group.key()),
        );
        if let Some(e) = self.data.examples {
            kv(&mut out, "examples", &e.to_string());
        }

        if let Some(l) = &self.log {
            section(&mut out, "log");
            kv(&mut out, "every", &toml_string(&l.every.to_string()));
        }
        out
    }
}

fn section(out: &mut String, name: &str) {
    if !out.is_empty() {
        out.push('\n');
    }
    out.push('[');
    out.push_str(name);
    out.push_str("]\n");
}

fn kv(out: &mut String, key: &str, value: &str) {
    out.push_str(key);
    out.push_str(" = ");
    out.push_str(value);
    out.push('\n');
}

/// A TOML basic string, with quotes, backslashes and control characters escaped.
fn toml_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A float that reads back as a TOML float (`1.0`, not `1`). Imports reject
/// non-finite values, so `nan` and `inf` never reach here; they are written
/// in TOML's own spelling if they do.
fn toml_float(value: f64) -> String {
    if value.is_nan() {
        "nan".to_owned()
    } else if value.is_infinite() {
        if value > 0.0 { "inf" } else { "-inf" }.to_owned()
    } else {
        format!("{value:?}")
    }
}

/// The engines accum reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Engine {
    /// DeepSpeed's JSON configuration.
    DeepSpeed,
    /// Megatron-LM command-line arguments.
    Megatron,
    /// Hugging Face `TrainingArguments` as JSON.
    HuggingFace,
    /// Lightning `Trainer` arguments as JSON or YAML.
    Lightning,
}

impl Engine {
    /// Every engine.
    pub const ALL: [Engine; 4] = [
        Engine::DeepSpeed,
        Engine::Megatron,
        Engine::HuggingFace,
        Engine::Lightning,
    ];

    /// The command-line name (`deepspeed`, `megatron`, `hf`, `lightning`).
    pub const fn key(self) -> &'static str {
        match self {
            Engine::DeepSpeed => "deepspeed",
            Engine::Megatron => "megatron",
            Engine::HuggingFace => "hf",
            Engine::Lightning => "lightning",
        }
    }

    /// The engine's name in prose.
    pub const fn display_name(self) -> &'static str {
        match self {
            Engine::DeepSpeed => "DeepSpeed",
            Engine::Megatron => "Megatron-LM",
            Engine::HuggingFace => "Hugging Face Trainer",
            Engine::Lightning => "Lightning",
        }
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.display_name())
    }
}

/// An engine name that is not one of the four.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownEngine {
    /// The name as given.
    pub name: String,
}

impl fmt::Display for UnknownEngine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown engine `{}`; use `deepspeed`, `megatron`, `hf` (or `huggingface`) or `lightning`",
            self.name
        )
    }
}

impl std::error::Error for UnknownEngine {}

impl FromStr for Engine {
    type Err = UnknownEngine;

    fn from_str(name: &str) -> Result<Engine, UnknownEngine> {
        match name.trim().to_ascii_lowercase().as_str() {
            "deepspeed" | "ds" => Ok(Engine::DeepSpeed),
            "megatron" | "megatron-lm" => Ok(Engine::Megatron),
            "hf" | "huggingface" | "hugging-face" | "transformers" => Ok(Engine::HuggingFace),
            "lightning" | "pytorch-lightning" => Ok(Engine::Lightning),
            _ => Err(UnknownEngine {
                name: name.to_owned(),
            }),
        }
    }
}

/// What an engine file does not say and the launcher or the data decide.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportOptions {
    /// All devices of the job (the launcher's world size).
    pub world_size: Option<u64>,
    /// Accelerate's `num_processes` (Hugging Face).
    pub num_processes: Option<u64>,
    /// Nodes of the job (Lightning's `num_nodes` when the file does not say).
    pub num_nodes: Option<u64>,
    /// Tensor-parallel degree used by the model code (files other than
    /// Megatron's do not say).
    pub tensor: Option<u64>,
    /// Pipeline-parallel degree used by the model code.
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
}

impl ImportOptions {
    /// The model-parallel degrees given, with 1 for the missing ones.
    fn degrees(&self) -> (u64, u64, u64) {
        (
            self.tensor.unwrap_or(1),
            self.pipeline.unwrap_or(1),
            self.context.unwrap_or(1),
        )
    }

    /// Whether any model-parallel degree above 1 was given.
    fn model_parallel(&self) -> bool {
        let (t, p, c) = self.degrees();
        t > 1 || p > 1 || c > 1
    }
}

/// The result of [`import`]: the canonical configuration and every finding.
#[derive(Clone, Debug, PartialEq)]
pub struct Imported {
    /// What the file means as an accum configuration (with accum's exact
    /// arithmetic where the engine would round).
    pub canonical: Canonical,
    /// Findings, in the order of the checks; errors and warnings.
    pub findings: Vec<Finding>,
}

impl Imported {
    /// Whether any finding is an error (the CLI exits 1).
    pub fn has_errors(&self) -> bool {
        self.findings.iter().any(|f| f.severity == Severity::Error)
    }
}

/// Why a file could not be imported at all.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum ImportError {
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
    /// The values cannot make a plan; every finding is listed (at least one
    /// is an error).
    Invalid {
        /// The file name.
        name: String,
        /// The findings.
        findings: Vec<Finding>,
    },
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImportError::Syntax {
                name,
                line,
                column,
                message,
            } => write!(f, "{name}:{line}:{column}: {message}"),
            ImportError::Invalid { name, findings } => {
                let errors: Vec<&Finding> = findings
                    .iter()
                    .filter(|x| x.severity == Severity::Error)
                    .collect();
                write!(
                    f,
                    "{name} cannot be turned into a plan ({} error{})",
                    errors.len(),
                    if errors.len() == 1 { "" } else { "s" }
                )?;
                for e in errors {
                    write!(f, "; {}", e.message)?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for ImportError {}

/// Why a canonical configuration cannot be written for an engine.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ExportError {
    /// The batch section is not a valid plan.
    Plan(PlanError),
    /// A span is not a whole number of the engine's unit.
    NotWhole {
        /// The engine.
        engine: Engine,
        /// The canonical key (`schedule.warmup`).
        key: &'static str,
        /// The engine's key it would become.
        engine_key: &'static str,
        /// The span.
        span: Span,
        /// The plan's explanation with the nearest valid values.
        source: PlanError,
    },
    /// The engine has no way to say what the configuration says.
    Unsupported {
        /// The engine.
        engine: Engine,
        /// The canonical key.
        key: &'static str,
        /// Why, with the fix.
        reason: String,
    },
    /// The data ends in a partial group and the engine would not apply the
    /// configured policy (R6).
    LastGroup {
        /// The engine.
        engine: Engine,
        /// The configured policy.
        policy: LastGroup,
        /// Examples in the data.
        examples: u64,
        /// Examples per update.
        effective_batch: u64,
        /// What the engine does instead.
        behaviour: &'static str,
    },
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExportError::Plan(err) => write!(f, "the batch section is not a valid plan: {err}"),
            ExportError::NotWhole {
                engine,
                key,
                engine_key,
                span,
                source,
            } => write!(
                f,
                "{key} = \"{span}\" cannot be written as {engine}'s `{engine_key}` without rounding: {source}"
            ),
            ExportError::Unsupported {
                engine,
                key,
                reason,
            } => write!(f, "{engine} cannot express {key}: {reason}"),
            ExportError::LastGroup {
                engine,
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
                     but {engine} {behaviour}; "
                )?;
                if below > 0 {
                    write!(f, "use {below} or {above} examples")?;
                } else {
                    write!(f, "use {above} examples")?;
                }
                write!(f, ", or a last_group {engine} applies")
            }
        }
    }
}

impl std::error::Error for ExportError {}

impl From<PlanError> for ExportError {
    fn from(err: PlanError) -> Self {
        ExportError::Plan(err)
    }
}

/// Reads an engine's file `text` (named `name` in findings) into the
/// canonical configuration, with findings.
pub fn import(
    engine: Engine,
    name: &str,
    text: &str,
    opts: &ImportOptions,
) -> Result<Imported, ImportError> {
    match engine {
        Engine::DeepSpeed => deepspeed::import(name, text, opts),
        Engine::Megatron => megatron::import(name, text, opts),
        Engine::HuggingFace => huggingface::import(name, text, opts),
        Engine::Lightning => lightning::import(name, text, opts),
    }
}

/// Renders findings about an engine file as text: `file:line:col` headers
/// and the source with the key or argument underlined (works for Megatron's
/// argument text as well as JSON and YAML).
pub fn render_findings(name: &str, text: &str, findings: &[Finding], color: bool) -> String {
    crate::diagnostic::render_text(name, text, findings, color)
}

/// Refuses a model-parallel layout for an engine that counts every device
/// as a replica (`counts` says how it counts, for the message, R3).
pub(crate) fn require_data_parallel(
    engine: Engine,
    c: &Canonical,
    plan: &Plan,
    counts: &str,
) -> Result<(), ExportError> {
    match c.parallel {
        Some(p) if p.world_size != plan.replicas() => Err(ExportError::Unsupported {
            engine,
            key: "parallel",
            reason: format!(
                "{counts}, so tensor {} × pipeline {} × context {} devices per model copy would count as replicas; \
                 export a data-parallel layout (world_size = replicas {})",
                p.tensor,
                p.pipeline,
                p.context,
                plan.replicas()
            ),
        }),
        _ => Ok(()),
    }
}

/// Writes the engine's file (or argument list) for a canonical configuration.
pub fn export(engine: Engine, canonical: &Canonical) -> Result<String, ExportError> {
    check_finite(engine, canonical)?;
    match engine {
        Engine::DeepSpeed => deepspeed::export(canonical),
        Engine::Megatron => megatron::export(canonical),
        Engine::HuggingFace => huggingface::export(canonical),
        Engine::Lightning => lightning::export(canonical),
    }
}

// ---------------------------------------------------------------------------
// Shared reading helpers for JSON/YAML engine files.

/// Finding codes, stable for tools.
pub mod codes {
    /// A batch value does not divide (`B` not a multiple of `m·D`).
    pub const NOT_DIVISIBLE: &str = "accum::interop::not-divisible";
    /// `world_size` is not divisible by `tp·pp·cp` (R3).
    pub const LAYOUT: &str = "accum::interop::layout";
    /// The engine would silently round a value down (or up).
    pub const ROUNDS: &str = "accum::interop::rounds";
    /// DeepSpeed's batch assertion would fail at start-up.
    pub const ENGINE_ASSERT: &str = "accum::interop::engine-assert";
    /// A value the plan needs is missing.
    pub const MISSING: &str = "accum::interop::missing";
    /// A value has the wrong type, is out of range, or is not finite.
    pub const VALUE: &str = "accum::interop::value";
    /// A key counts microbatches where updates are likely meant (R1, R8).
    pub const STEP_UNIT: &str = "accum::interop::step-unit";
    /// The accumulation (and so `B`) changes during the run (R8, R10).
    pub const SCHEDULE_SHIFT: &str = "accum::interop::schedule-shift";
    /// The data ends in a partial group (R6).
    pub const PARTIAL_GROUP: &str = "accum::interop::partial-group";
    /// The loss is not normalized by the group's tokens (R4).
    pub const PER_TOKEN: &str = "accum::interop::per-token";
    /// Model-parallel devices are counted as replicas (R3).
    pub const MODEL_PARALLEL: &str = "accum::interop::model-parallel-replicas";
    /// The world size given disagrees with the file.
    pub const WORLD_SIZE: &str = "accum::interop::world-size";
    /// A key is understood but not carried into the canonical config.
    pub const NOT_CONVERTED: &str = "accum::interop::not-converted";
    /// A value is left to another tool (`"auto"`).
    pub const AUTO: &str = "accum::interop::auto";
}

/// A value read from a file, with where it was.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct At<T> {
    pub(crate) value: T,
    pub(crate) span: Range<usize>,
    pub(crate) path: Vec<String>,
}

/// A parsed engine file (JSON or YAML) and the findings collected so far.
pub(crate) struct Reader {
    pub(crate) doc: Document,
    pub(crate) findings: Vec<Finding>,
}

pub(crate) fn path_of(path: &[&str]) -> Vec<String> {
    path.iter().map(|s| (*s).to_owned()).collect()
}

impl Reader {
    /// Parses JSON, or YAML when the text is not JSON and `yaml` is allowed.
    pub(crate) fn parse(name: &str, text: &str, yaml: bool) -> Result<Reader, ImportError> {
        let trimmed = text.trim_start();
        let format = if !yaml || trimmed.starts_with('{') {
            SourceFormat::Json
        } else {
            SourceFormat::Yaml
        };
        match Document::parse(name.to_owned(), text.to_owned(), format) {
            Ok(doc) => Ok(Reader {
                doc,
                findings: Vec::new(),
            }),
            Err(err) => {
                let (line, column) = err
                    .span
                    .as_ref()
                    .map_or((1, 1), |s| crate::source::line_col(&err.text, s.start));
                Err(ImportError::Syntax {
                    name: name.to_owned(),
                    line,
                    column,
                    message: format!("invalid {}: {}", format.name(), err.message),
                })
            }
        }
    }

    pub(crate) fn node(&self, path: &[&str]) -> Option<&Node> {
        self.doc.node(&path_of(path))
    }

    /// The span to underline for a path (the value, or the nearest parent).
    pub(crate) fn span(&self, path: &[&str]) -> Range<usize> {
        self.doc.span_for(&path_of(path))
    }

    pub(crate) fn push(&mut self, finding: Finding) {
        self.findings.push(finding);
    }

    fn bad(&mut self, path: &[&str], what: &str, node: &Node) {
        let shown = node_text(&self.doc.text, node);
        let finding = Finding::error(
            codes::VALUE,
            path_of(path),
            format!("`{}` is {shown}, not {what}", path.join(".")),
        )
        .help(format!("write {what}"))
        .at(node.span.clone(), format!("expected {what}"));
        self.findings.push(finding);
    }

    /// Whether the value at `path` is the string `"auto"`.
    pub(crate) fn is_auto(&self, path: &[&str]) -> bool {
        matches!(self.node(path).map(|n| &n.kind), Some(NodeKind::String(s)) if s == "auto")
    }

    /// A whole number ≥ `min`; a float with no fraction is accepted (Python
    /// engines accept `32.0`). Anything else is a `value` finding and `None`.
    pub(crate) fn uint(&mut self, path: &[&str], min: u64) -> Option<At<u64>> {
        let node = self.node(path)?.clone();
        let value = match &node.kind {
            NodeKind::Null => return None,
            NodeKind::Integer(i) => u64::try_from(*i).ok(),
            NodeKind::Float(f) if f.is_finite() && f.fract() == 0.0 && *f >= 0.0 => {
                // Exact for every integer below 2^53; larger floats are not counts.
                (*f < 9.0e15).then_some(*f as u64)
            }
            _ => None,
        };
        match value {
            Some(v) if v >= min => Some(At {
                value: v,
                span: node.span.clone(),
                path: path_of(path),
            }),
            _ => {
                let what = if min == 0 {
                    "a whole number ≥ 0".to_owned()
                } else {
                    format!("a whole number ≥ {min}")
                };
                self.bad(path, &what, &node);
                None
            }
        }
    }

    /// A signed integer (for `-1` sentinels).
    pub(crate) fn int(&mut self, path: &[&str]) -> Option<At<i128>> {
        let node = self.node(path)?.clone();
        match &node.kind {
            NodeKind::Null => None,
            NodeKind::Integer(i) => Some(At {
                value: *i,
                span: node.span.clone(),
                path: path_of(path),
            }),
            NodeKind::Float(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 9.0e15 => {
                Some(At {
                    value: *f as i128,
                    span: node.span.clone(),
                    path: path_of(path),
                })
            }
            _ => {
                self.bad(path, "a whole number", &node);
                None
            }
        }
    }

    /// A finite number ≥ 0.
    pub(crate) fn float(&mut self, path: &[&str]) -> Option<At<f64>> {
        let node = self.node(path)?.clone();
        let value = match &node.kind {
            NodeKind::Null => return None,
            NodeKind::Integer(i) => Some(*i as f64),
            NodeKind::Float(f) => Some(*f),
            _ => None,
        };
        match value {
            Some(v) if v.is_finite() && v >= 0.0 => Some(At {
                value: v,
                span: node.span.clone(),
                path: path_of(path),
            }),
            _ => {
                self.bad(path, "a finite number ≥ 0", &node);
                None
            }
        }
    }

    /// A boolean (Python-style `"true"`/`"false"` strings are accepted).
    pub(crate) fn bool(&mut self, path: &[&str]) -> Option<At<bool>> {
        let node = self.node(path)?.clone();
        let value = match &node.kind {
            NodeKind::Null => return None,
            NodeKind::Bool(b) => Some(*b),
            NodeKind::String(s) if s.eq_ignore_ascii_case("true") => Some(true),
            NodeKind::String(s) if s.eq_ignore_ascii_case("false") => Some(false),
            _ => None,
        };
        match value {
            Some(v) => Some(At {
                value: v,
                span: node.span.clone(),
                path: path_of(path),
            }),
            None => {
                self.bad(path, "true or false", &node);
                None
            }
        }
    }
}

/// A short rendering of a value for messages.
fn node_text(text: &str, node: &Node) -> String {
    let raw = text.get(node.span.clone()).unwrap_or("").trim();
    if raw.is_empty() || raw.len() > 40 {
        format!("a {}", node.kind.type_name())
    } else {
        format!("`{raw}`")
    }
}

/// A plan error as a finding at `span`, with its fix as the help.
pub(crate) fn plan_finding(err: &PlanError, path: Vec<String>, span: Range<usize>) -> Finding {
    let code = match err {
        PlanError::LayoutNotDivisible { .. } => codes::LAYOUT,
        PlanError::Missing { .. } => codes::MISSING,
        PlanError::Zero { .. } | PlanError::Overflow { .. } => codes::VALUE,
        _ => codes::NOT_DIVISIBLE,
    };
    Finding::error(code, path, err.message())
        .help(err.fix().text)
        .at(span, "here")
}

/// R6: the partial last group, with what the engine does with it. Returns
/// the finding when the data does not fill whole groups.
pub(crate) fn partial_group_finding(
    plan: &Plan,
    examples: u64,
    severity: Severity,
    engine_behaviour: &str,
    help: &str,
    span: Range<usize>,
) -> Option<Finding> {
    let b = plan.effective_batch().get();
    let rest = examples % b;
    if rest == 0 {
        return None;
    }
    let full = examples / b;
    let mut f = Finding::error(
        codes::PARTIAL_GROUP,
        vec!["data".into(), "examples".into()],
        format!(
            "{examples} examples = {full} updates of B = {b} examples + a partial group of {rest} examples \
             ({} of {} microbatches per replica); {engine_behaviour}",
            rest.div_ceil(plan.micro_batch().saturating_mul(plan.replicas()).max(1)),
            plan.accumulation()
        ),
    )
    .help(format!(
        "{help}; or use {} or {} examples so that every group is whole (R6)",
        full * b,
        (full + 1).saturating_mul(b)
    ))
    .at(span, format!("groups of {} microbatches", plan.accumulation()));
    if severity == Severity::Warning {
        f = f.warning();
    }
    Some(f)
}

/// Converts a span into `unit` through the plan, exactly, for export.
pub(crate) fn span_in(
    engine: Engine,
    plan: &Plan,
    key: &'static str,
    engine_key: &'static str,
    span: Span,
    unit: UnitKind,
) -> Result<u64, ExportError> {
    plan.convert(span.value(), span.unit(), unit, Rounding::Exact)
        .map_err(|source| ExportError::NotWhole {
            engine,
            key,
            engine_key,
            span,
            source,
        })
}

/// The layout-free check shared by exports: `data.examples` and the
/// last-group policy against what the engine does with a partial group.
pub(crate) fn check_last_group(
    engine: Engine,
    canonical: &Canonical,
    plan: &Plan,
    accepted: &[LastGroup],
    behaviour: &'static str,
) -> Result<(), ExportError> {
    let Some(examples) = canonical.data.examples else {
        return Ok(());
    };
    let b = plan.effective_batch().get();
    if examples % b == 0 || accepted.contains(&canonical.data.last_group) {
        return Ok(());
    }
    Err(ExportError::LastGroup {
        engine,
        policy: canonical.data.last_group,
        examples,
        effective_batch: b,
        behaviour,
    })
}

impl RunSection {
    /// The `[run]` of an imported file: named after the file (without
    /// directories and extension), with a note saying where it came from.
    pub(crate) fn imported(engine: Engine, name: &str) -> RunSection {
        let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
        let stem = base.split('.').next().unwrap_or(base);
        RunSection {
            name: if stem.is_empty() { "imported" } else { stem }.to_owned(),
            notes: format!("imported from {engine} file {name} by accum"),
        }
    }
}

/// Every float of the configuration must be a finite number ≥ 0: an engine
/// file cannot say `nan` (JSON would write `null`).
fn check_finite(engine: Engine, c: &Canonical) -> Result<(), ExportError> {
    let scale = c.precision.loss_scale;
    let values = [
        ("optimizer.clip_norm", c.optimizer.clip_norm),
        ("optimizer.lr", c.optimizer.lr),
        ("precision.loss_scale.init", scale.map(|s| s.init)),
        (
            "precision.loss_scale.growth_factor",
            scale.and_then(|s| s.growth_factor),
        ),
        (
            "precision.loss_scale.backoff_factor",
            scale.and_then(|s| s.backoff_factor),
        ),
    ];
    for (key, value) in values {
        if let Some(v) = value
            && !(v.is_finite() && v >= 0.0)
        {
            return Err(ExportError::Unsupported {
                engine,
                key,
                reason: format!("{v} is not a finite number ≥ 0; write a finite value"),
            });
        }
    }
    Ok(())
}

/// The `[batch]` section of a plan, with `B` written out.
pub(crate) fn batch_of(plan: &Plan) -> BatchSection {
    BatchSection {
        micro_batch: plan.micro_batch(),
        accumulation: plan.accumulation(),
        replicas: plan.replicas(),
        global_batch: Some(plan.effective_batch().get()),
        seq_len: plan.seq_len(),
    }
}

/// Formats a float the way JSON and Python write it (`1.0`, `0.0003`).
pub(crate) fn json_float(value: f64) -> String {
    serde_json::Number::from_f64(value).map_or_else(|| "null".to_owned(), |n| n.to_string())
}

#[cfg(test)]
mod tests;
