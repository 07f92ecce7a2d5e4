//! One config struct that is a burn config and an accum config, loaded from
//! the JSON file burn's own `Config::load` reads.
//!
//! `#[derive(burn::config::Config)]` gives `new` with the required fields,
//! `with_*` for the optional and defaulted ones, `Clone`, `Display` (JSON),
//! `save`/`load` and the serde impls; `#[derive(accum::AccumConfig)]` gives
//! `plan()`, `validate()` and `roles()`. The two read different attributes
//! (`#[config(...)]`, `#[accum(...)]`) and generate different items, so
//! they live on one struct as they are, nested sections with both derives
//! included (`tests/config.rs`). Nothing on accum's side needed changing.
//!
//! What burn's side does differently from a `#[derive(Deserialize)]`
//! struct (burn-derive 0.22.1, `src/config/analyzer_struct.rs`,
//! `ConfigStructAnalyzer::gen_serde_struct` and `gen_deserialize_fn`): the
//! serde impls go through a copy of the struct that keeps each field's name
//! and type and nothing else. So
//! - `#[serde(...)]` attributes do not reach burn's impls. Alone, burn and
//!   accum register no `serde` attribute and a `rename` does not compile;
//!   beside a `schemars::JsonSchema` derive (which registers it) it
//!   compiles, and accum's paths and schema follow the rename while burn
//!   writes and reads the field's own name. Keep burn configs free of
//!   `#[serde]`;
//! - `#[config(default = ...)]` applies to `new()` only: a file must give
//!   every field that is not an `Option`;
//! - unknown keys are ignored, not refused: a misspelt optional key is
//!   silently absent. accum's `validate()` then reports the role it leaves
//!   missing (a misspelt `accumulation` with no `global_batch`).

use std::fmt;
use std::path::Path;

use accum::settings::LossScaleSettings;
use accum::{AccumConfig, Findings, Plan, Span};

use burn::optim::AdamWConfig;

use crate::model::ModelConfig;

/// A training run of the character model, laid out as burn's own training
/// configs are: sections for the model and the optimizer (burn's
/// `AdamWConfig`, itself a burn `Config`), here beside a batch section that
/// is both a burn and an accum config.
#[derive(burn::config::Config, Debug, AccumConfig)]
#[accum(variable_length)]
pub struct TrainConfig {
    /// `m`, `A` and `B`.
    #[accum(nested)]
    pub batch: BatchConfig,
    /// `D`: data-parallel replicas, one thread each.
    #[accum(replicas)]
    pub replicas: u32,
    /// The run's length, in any unit.
    #[accum(total)]
    pub total: Span,
    /// The learning rate's warmup, in any unit.
    #[accum(warmup)]
    pub warmup: Span,
    /// Rank 0 prints a line at this interval.
    #[accum(every)]
    pub log_every: Span,
    /// Peak learning rate of the cosine schedule.
    pub lr: f64,
    /// Seed of the epoch order.
    pub seed: u64,
    /// burn's AdamW: a burn config inside an accum config needs no mark.
    pub optimizer: AdamWConfig,
    /// The model.
    pub model: ModelConfig,
    /// Dynamic loss scaling.
    pub loss_scale: LossScaleSettings,
}

/// The batch: a section of [`TrainConfig`] with both derives.
#[derive(burn::config::Config, Debug, AccumConfig)]
#[accum(section)]
pub struct BatchConfig {
    /// `m`: examples per microbatch on each replica.
    #[accum(micro_batch)]
    pub micro_batch: u32,
    /// `A`: microbatches per update on each replica; solved from
    /// `global_batch` when absent.
    #[accum(accumulation)]
    pub accumulation: Option<u32>,
    /// `B`, checked against `m·A·D`.
    #[accum(global_batch)]
    pub global_batch: Option<u32>,
}

/// Why a config file gave no plan.
#[derive(Debug)]
pub enum LoadError {
    /// The file could not be read.
    Read {
        /// The file.
        file: String,
        /// The reason.
        error: std::io::Error,
    },
    /// The file is not JSON of the config's shape.
    Parse {
        /// The file.
        file: String,
        /// serde's message, with the line and column.
        error: serde_json::Error,
    },
    /// The config has the shape but not a plan: accum's findings, each with
    /// the field to change and the fix.
    Invalid {
        /// The file.
        file: String,
        /// Every problem at once.
        findings: Findings,
    },
    /// A plan `validate()` let through that `plan()` refused.
    Plan {
        /// The file.
        file: String,
        /// The plan's reason.
        error: crate::BoxError,
    },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Read { file, error } => write!(f, "{file}: cannot read it: {error}"),
            // serde_json's message ends with the line and column.
            LoadError::Parse { file, error } => write!(
                f,
                "{file}: {error}; burn's configs read every field that is not an `Option`"
            ),
            LoadError::Invalid { file, findings } => write!(f, "{file}: {findings}"),
            LoadError::Plan { file, error } => write!(f, "{file}: {error}"),
        }
    }
}

impl std::error::Error for LoadError {}

/// A config that passed accum's `validate()`, with its plan.
#[derive(Debug)]
pub struct Loaded {
    /// The config.
    pub config: TrainConfig,
    /// Its plan, `B = m·A·D`.
    pub plan: Plan,
    /// The warnings `validate()` found (often none): a config with warnings
    /// only plans and runs, and the user should see them.
    pub warnings: Findings,
}

impl TrainConfig {
    /// Reads the JSON at `path`, runs accum's `validate()` and returns the
    /// config with its plan and warnings.
    pub fn load_checked(path: &Path) -> Result<Loaded, LoadError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|error| LoadError::Read {
            file: file.clone(),
            error,
        })?;
        TrainConfig::from_json(&file, &text)
    }

    /// [`TrainConfig::load_checked`] on the text of `file`.
    pub fn from_json(file: &str, text: &str) -> Result<Loaded, LoadError> {
        let config: TrainConfig = serde_json::from_str(text).map_err(|error| LoadError::Parse {
            file: file.to_owned(),
            error,
        })?;
        let invalid = |findings| LoadError::Invalid {
            file: file.to_owned(),
            findings,
        };
        let warnings = config.validate().map_err(invalid)?;
        let plan = config.plan().map_err(|error| LoadError::Plan {
            file: file.to_owned(),
            error: error.into(),
        })?;
        Ok(Loaded {
            config,
            plan,
            warnings,
        })
    }
}
