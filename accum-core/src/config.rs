//! The canonical training config, derived with the crate's own
//! `#[derive(AccumConfig)]`: a `[run]` header, the `[batch]` plan and an
//! optional `[parallel]` device layout (SPEC R3).
//!
//! ```
//! use accum_core::AccumConfig;
//! use accum_core::config::TrainingConfig;
//!
//! let config: TrainingConfig = toml::from_str(r#"
//!     [run]
//!     name = "tiny"
//!
//!     [batch]
//!     micro_batch = 2
//!     accumulation = 8
//!     replicas = 2
//!     global_batch = 32
//! "#)?;
//! assert_eq!(config.plan()?.effective_batch().get(), 32);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Replicas come either from `batch.replicas` or from `[parallel]`
//! (`D = world_size / (tensor·pipeline·context)`); both may be given when they
//! agree. `validate` reports when neither is.
//!
//! ## Adding a section
//!
//! The engine sections (loss, precision, optimizer, schedule, data, model,
//! log) join [`TrainingConfig`] the way `batch` and `parallel` do:
//!
//! 1. On the section struct: `#[derive(…, Serialize, Deserialize, JsonSchema,
//!    AccumConfig)]`, `#[accum(crate = "crate", section)]` and
//!    `#[serde(deny_unknown_fields)]`. Deriving on every section, even one
//!    without roles, is what makes the compiler reject `warmup_steps: u64`
//!    there (R1) and puts `x-accum-unit` on its typed fields in the schema.
//! 2. In [`TrainingConfig`]: `#[accum(nested)] pub schedule: ScheduleSection,`
//!    — or `Option<ScheduleSection>` with `#[serde(default,
//!    skip_serializing_if = "Option::is_none")]` for an optional section.
//! 3. A plan role is given once in the whole config (checked at compile time
//!    through the nested field tables): `seq_len` lives in `[batch]`, so a
//!    `[data]` section must not mark its own field `#[accum(seq_len)]`.
//! 4. Sections with floats cannot be `Eq`: drop `Eq` from the derives of
//!    [`TrainingConfig`] then.
//! 5. Review the schema snapshot diff (`cargo insta review`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::engine::EngineConfig;
use crate::settings::{
    DataSection, LogSection, LossSection, ModelSection, OptimizerSection, PrecisionSection,
    ScheduleSection,
};
use crate::{AccumConfig, Code, FieldPath, Finding, Findings};

/// A whole training config.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, AccumConfig)]
#[accum(crate = "crate")]
#[serde(deny_unknown_fields)]
pub struct TrainingConfig {
    /// What the run is called and why it exists.
    pub run: RunSection,
    /// The accumulation plan: `m`, `A`, and `D` or a layout.
    #[accum(nested)]
    pub batch: BatchSection,
    /// The device layout, when devices are split by tensor, pipeline or
    /// context parallelism.
    #[accum(nested)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel: Option<ParallelSection>,
    /// How the loss of a group is normalized.
    #[accum(nested)]
    #[serde(default)]
    pub loss: LossSection,
    /// Precision and dynamic loss scaling.
    #[accum(nested)]
    #[serde(default)]
    pub precision: PrecisionSection,
    /// The optimizer and gradient clipping.
    #[accum(nested)]
    #[serde(default)]
    pub optimizer: OptimizerSection,
    /// The learning-rate schedule, in any unit; it steps per applied update.
    #[accum(nested)]
    #[serde(default)]
    pub schedule: ScheduleSection,
    /// The built-in synthetic data and the last-group policy.
    #[accum(nested)]
    #[serde(default)]
    pub data: DataSection,
    /// The built-in reference model's sizes.
    #[accum(nested)]
    #[serde(default)]
    pub model: ModelSection,
    /// How often to log, and against which axis.
    #[accum(nested)]
    #[serde(default)]
    pub log: LogSection,
}

impl TrainingConfig {
    /// The engine-facing sections, for [`Engine::new`](crate::engine::Engine::new).
    pub fn engine_config(&self) -> EngineConfig {
        EngineConfig {
            loss: self.loss.clone(),
            precision: self.precision.clone(),
            optimizer: self.optimizer.clone(),
            schedule: self.schedule.clone(),
            data: self.data.clone(),
            model: self.model.clone(),
            log: self.log.clone(),
        }
    }

    /// Every problem of the config: the plan's findings (with field paths)
    /// and the engine sections' (ranges, `min_len ≤ max_len`, …).
    pub fn check(&self) -> Result<(), Findings> {
        let mut findings = match AccumConfig::validate(self) {
            Ok(()) => Findings::default(),
            Err(findings) => findings,
        };
        // A setting's message says what is wrong and what to use, in one
        // sentence; it is kept whole.
        findings.extend(self.engine_config().validate().into_iter().map(|error| {
            Finding::new(
                Code::Settings,
                FieldPath::parse(error.key),
                format!("`{}` {}", error.key, error.message),
                "out of range".to_owned(),
            )
        }));
        findings.into_result()
    }
}

/// `[run]`: the run's name and notes, for the run sheet.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunSection {
    /// A short name for the run.
    pub name: String,
    /// Free text: what is being tried, and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

/// `[batch]`: the accumulation plan, `B = m·A·D`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, AccumConfig)]
#[accum(crate = "crate", section)]
#[serde(deny_unknown_fields)]
pub struct BatchSection {
    /// `m`: examples per microbatch per data-parallel replica.
    #[accum(micro_batch)]
    pub micro_batch: u64,
    /// `A`: microbatches (forward + backward) per optimizer update, per replica.
    #[accum(accumulation)]
    pub accumulation: u64,
    /// `D`: data-parallel replicas. Give this or `[parallel]`.
    #[accum(replicas)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<u64>,
    /// `B`: the intended effective batch, checked against `m·A·D`.
    #[accum(global_batch)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_batch: Option<u64>,
    /// `L`: tokens per example, when lengths are fixed.
    #[accum(seq_len)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq_len: Option<u64>,
}

/// `[parallel]`: all devices and the degrees that split one model copy;
/// only what is left are replicas.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, AccumConfig)]
#[accum(crate = "crate", section)]
#[serde(deny_unknown_fields)]
pub struct ParallelSection {
    /// All devices of the job.
    #[accum(world_size)]
    pub world_size: u64,
    /// Tensor-parallel degree (default 1).
    #[accum(tensor_parallel)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensor: Option<u64>,
    /// Pipeline-parallel degree (default 1).
    #[accum(pipeline_parallel)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipeline: Option<u64>,
    /// Context (sequence) parallel degree (default 1).
    #[accum(context_parallel)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<u64>,
}
