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
//! accum's loader (`accum::load_config`, what `load_checked` calls) also
//! asks for `schemars::JsonSchema`, to locate each field in the file; it
//! derives beside the other two. Its one obstacle is burn's own nested
//! configs: burn derives no `JsonSchema`, so a burn type inside the config
//! (`AdamWConfig`) names a schema of ours that mirrors its fields
//! (`#[schemars(with = ...)]`, [`AdamWSchema`]). The loader types the file
//! through burn's generated `Deserialize` and gives back the config with
//! `A` solved from `global_batch` when the file leaves it out.
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
//!   silently absent. accum's loader then reports the role it leaves
//!   missing (a misspelt `accumulation` with no `global_batch`), at the
//!   section in the file.

use std::path::Path;

use accum::settings::LossScaleSettings;
use accum::{AccumConfig, ConfigError, Loaded, Span};

use burn::optim::AdamWConfig;

use crate::model::ModelConfig;

/// A training run of the character model, laid out as burn's own training
/// configs are: sections for the model and the optimizer (burn's
/// `AdamWConfig`, itself a burn `Config`), here beside a batch section that
/// is both a burn and an accum config.
#[derive(burn::config::Config, Debug, AccumConfig, schemars::JsonSchema)]
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
    /// burn's AdamW: a burn config inside an accum config needs no accum
    /// mark; its schema is [`AdamWSchema`].
    #[schemars(with = "AdamWSchema")]
    pub optimizer: AdamWConfig,
    /// The model.
    pub model: ModelConfig,
    /// Dynamic loss scaling.
    pub loss_scale: LossScaleSettings,
}

/// The batch: a section of [`TrainConfig`] with both derives.
#[derive(burn::config::Config, Debug, AccumConfig, schemars::JsonSchema)]
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

impl TrainConfig {
    /// Loads the JSON at `path` through accum's loader, with every check
    /// `accum validate` runs: syntax, the schema (each field located in the
    /// file), typing through burn's generated `Deserialize`, and accum's
    /// `validate()`. Gives the config with its plan and warnings, or every
    /// diagnostic with its line, column and fix.
    pub fn load_checked(path: &Path) -> Result<Loaded<TrainConfig>, ConfigError> {
        accum::load_config::<TrainConfig>(path)
    }

    /// [`TrainConfig::load_checked`] on the text of `file` (a `.json` name).
    pub fn from_json(file: &str, text: &str) -> Result<Loaded<TrainConfig>, ConfigError> {
        accum::load_config_str::<TrainConfig>(file, text)
    }
}

/// The JSON Schema of burn's [`AdamWConfig`], which accum's loader checks
/// a file against: burn does not derive `JsonSchema`, so the `optimizer`
/// field names this mirror with `#[schemars(with = ...)]`. Its fields are
/// those of `AdamWConfig` in burn-optim 0.22.1 (`src/optim/adamw.rs`,
/// `struct AdamWConfig`); burn's generated `Deserialize` still reads the
/// field, and asks for every one that is not an `Option`.
#[derive(schemars::JsonSchema)]
#[expect(
    dead_code,
    reason = "a schema only: burn's `AdamWConfig` holds the values"
)]
struct AdamWSchema {
    beta_1: f32,
    beta_2: f32,
    epsilon: f32,
    weight_decay: f32,
    cautious_weight_decay: bool,
    amsgrad: bool,
    grad_clipping: Option<GradientClippingSchema>,
}

/// burn's `GradientClippingConfig` (burn-optim 0.22.1,
/// `src/grad_clipping/base.rs`), an externally tagged enum.
#[derive(schemars::JsonSchema)]
#[expect(
    dead_code,
    reason = "a schema only: burn's `GradientClippingConfig` holds the values"
)]
enum GradientClippingSchema {
    Value(f32),
    Norm(f32),
}
