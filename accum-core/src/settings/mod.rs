//! The engine-facing sections of the canonical training config: loss,
//! precision, optimizer, schedule, data, model and log.
//!
//! Plain data with serde and JSON Schema derives; the `///` docs become the
//! schema's descriptions. Every section denies unknown keys and fills missing
//! ones with the documented defaults, so `[optimizer]\nlr = 3e-4` is a whole
//! section. The batch and parallel sections (the [`Plan`](crate::plan::Plan))
//! live with the composed config; the engine takes a `Plan` plus these
//! sections, gathered in [`EngineConfig`].
//!
//! Semantic checks (ranges, `min_len ≤ max_len`, …) are in
//! [`EngineConfig::validate`] (`engine_config.rs`), so that a config can be
//! parsed first and all its findings reported together.

use std::fmt;

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::AccumConfig;

mod engine_config;

use crate::plan::LastGroup;
use crate::span::Span;
use crate::units::{UnitKind, Updates};
pub use engine_config::{EngineConfig, MAX_DATA_POSITIONS, MAX_MODEL_PARAMS, SettingError};

/// How the loss of a group is normalized.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Normalization {
    /// Summed token losses ÷ supervised tokens of the whole group, across all
    /// microbatches and replicas (padding and ignored positions excluded).
    #[default]
    PerToken,
    /// Each example's mean token loss, summed, ÷ examples of the whole group.
    PerExample,
    /// The summed token losses, not divided by anything.
    Sum,
}

impl Normalization {
    /// The config spelling (`"per_token"`, `"per_example"`, `"sum"`).
    pub const fn key(self) -> &'static str {
        match self {
            Normalization::PerToken => "per_token",
            Normalization::PerExample => "per_example",
            Normalization::Sum => "sum",
        }
    }
}

impl fmt::Display for Normalization {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// `[loss]`: how token losses become the group's loss.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, AccumConfig)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[accum(crate = "crate", section)]
#[serde(default, deny_unknown_fields)]
pub struct LossSection {
    /// Normalization of the group's summed loss: `per_token` (÷ supervised
    /// tokens of the whole group), `per_example` (mean per example ÷ examples of
    /// the group) or `sum` (no division). Default `per_token`.
    pub normalization: Normalization,
    /// Label value of positions that contribute nothing (like padding).
    /// Default −100, as in PyTorch's cross-entropy.
    pub ignore_index: i64,
}

impl Default for LossSection {
    fn default() -> Self {
        LossSection {
            normalization: Normalization::PerToken,
            ignore_index: -100,
        }
    }
}

/// Numeric precision of the engine's compute (see `docs/engine.md`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum PrecisionMode {
    /// Compute and store in f32. No loss scaling.
    #[default]
    Fp32,
    /// Compute in f32; recorded as bf16 (same exponent range as f32), so no
    /// loss scaling is used.
    Bf16,
    /// Compute in f32 but simulate the fp16 range: a scaled gradient element
    /// above 65504 or non-finite overflows, so dynamic loss scaling is used.
    Fp16,
}

impl PrecisionMode {
    /// The config spelling (`"fp32"`, `"bf16"`, `"fp16"`).
    pub const fn key(self) -> &'static str {
        match self {
            PrecisionMode::Fp32 => "fp32",
            PrecisionMode::Bf16 => "bf16",
            PrecisionMode::Fp16 => "fp16",
        }
    }

    /// Whether this mode uses dynamic loss scaling (only fp16).
    pub const fn uses_loss_scaling(self) -> bool {
        matches!(self, PrecisionMode::Fp16)
    }
}

impl fmt::Display for PrecisionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// `[precision.loss_scale]`: dynamic loss scaling for fp16. Defaults are
/// PyTorch's `GradScaler` defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct LossScaleSettings {
    /// Initial loss scale. Default 65536 (2^16).
    pub init: f64,
    /// Factor the scale grows by after `growth_interval` clean updates in a
    /// row. Default 2.
    pub growth_factor: f64,
    /// Factor the scale is multiplied by after a non-finite attempt. Default 0.5.
    pub backoff_factor: f64,
    /// Clean (applied) updates in a row before the scale grows. Default 2000.
    pub growth_interval: u64,
}

impl Default for LossScaleSettings {
    fn default() -> Self {
        LossScaleSettings {
            init: 65536.0,
            growth_factor: 2.0,
            backoff_factor: 0.5,
            growth_interval: 2000,
        }
    }
}

/// `[precision]`: compute precision and loss scaling.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, AccumConfig)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[accum(crate = "crate", section)]
#[serde(default, deny_unknown_fields)]
pub struct PrecisionSection {
    /// `fp32`, `bf16` or `fp16`. The engine computes in f32 in every mode;
    /// `fp16` simulates the fp16 range so that loss scaling is real. Default `fp32`.
    pub mode: PrecisionMode,
    /// Dynamic loss scaling; used by `fp16` only.
    pub loss_scale: LossScaleSettings,
}

/// Which optimizer applies the update.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub enum OptimizerKind {
    /// AdamW with PyTorch's semantics: decoupled weight decay, bias correction.
    #[default]
    #[serde(rename = "adamw")]
    AdamW,
    /// SGD with momentum, PyTorch's semantics (weight decay added to the gradient).
    #[serde(rename = "sgd")]
    Sgd,
}

impl OptimizerKind {
    /// The config spelling (`"adamw"`, `"sgd"`).
    pub const fn key(self) -> &'static str {
        match self {
            OptimizerKind::AdamW => "adamw",
            OptimizerKind::Sgd => "sgd",
        }
    }
}

impl fmt::Display for OptimizerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// `[optimizer]`: the update rule and gradient clipping.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, AccumConfig)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[accum(crate = "crate", section)]
#[serde(default, deny_unknown_fields)]
pub struct OptimizerSection {
    /// `adamw` or `sgd`. Default `adamw`.
    pub kind: OptimizerKind,
    /// Peak learning rate (the schedule scales it). Default 1e-3.
    pub lr: f64,
    /// AdamW's `(beta1, beta2)`. Default `[0.9, 0.999]`.
    pub betas: [f64; 2],
    /// AdamW's epsilon, added to the root of the second moment. Default 1e-8.
    pub eps: f64,
    /// Weight decay: decoupled for AdamW, added to the gradient for SGD. Default 0.01.
    pub weight_decay: f64,
    /// SGD momentum (0 disables it); ignored by AdamW. Default 0.9.
    pub momentum: f64,
    /// Clip the global gradient norm to this value after unscaling; 0
    /// disables clipping, as in DeepSpeed, Megatron-LM, the Hugging Face
    /// Trainer and Lightning. Default 1.0.
    #[serde(deserialize_with = "zero_is_off")]
    pub clip_norm: Option<f64>,
}

/// `clip_norm = 0` means no clipping (`None`); any other value is kept for
/// the range check.
fn zero_is_off<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.filter(|&v| v != 0.0))
}

impl Default for OptimizerSection {
    fn default() -> Self {
        OptimizerSection {
            kind: OptimizerKind::AdamW,
            lr: 1e-3,
            betas: [0.9, 0.999],
            eps: 1e-8,
            weight_decay: 0.01,
            momentum: 0.9,
            clip_norm: Some(1.0),
        }
    }
}

/// The shape of the learning-rate schedule.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ScheduleKind {
    /// Linear warmup, then the peak learning rate.
    Constant,
    /// Linear warmup, then linear decay to zero at `total`.
    #[default]
    Linear,
    /// Linear warmup, then cosine decay to zero at `total`.
    Cosine,
}

impl ScheduleKind {
    /// The config spelling (`"constant"`, `"linear"`, `"cosine"`).
    pub const fn key(self) -> &'static str {
        match self {
            ScheduleKind::Constant => "constant",
            ScheduleKind::Linear => "linear",
            ScheduleKind::Cosine => "cosine",
        }
    }
}

impl fmt::Display for ScheduleKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// `[schedule]`: learning-rate schedule and run length, advancing per
/// applied update.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, AccumConfig)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[accum(crate = "crate", section)]
#[serde(default, deny_unknown_fields)]
pub struct ScheduleSection {
    /// `constant`, `linear` or `cosine`. Default `linear`.
    pub kind: ScheduleKind,
    /// Warmup length with its unit ("200 updates", "2M tokens"), resolved to
    /// updates through the plan. Default "0 updates".
    #[accum(warmup)]
    pub warmup: Span,
    /// Length of the run and of the schedule, with its unit; the run stops
    /// after this many applied updates. When absent, a run lasts "100
    /// updates" (a demonstration length), and the warmup and intervals are
    /// not checked against it.
    #[accum(total)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<Span>,
}

impl ScheduleSection {
    /// The length of a run whose `total` is not given.
    pub const DEFAULT_TOTAL: Span = Span::of(Updates::new(100));

    /// The run's length: `total`, or [`DEFAULT_TOTAL`](Self::DEFAULT_TOTAL)
    /// when it is not given.
    pub fn run_length(&self) -> Span {
        self.total.unwrap_or(Self::DEFAULT_TOTAL)
    }
}

impl Default for ScheduleSection {
    fn default() -> Self {
        ScheduleSection {
            kind: ScheduleKind::Linear,
            warmup: Span::of(Updates::ZERO),
            total: None,
        }
    }
}

/// `[data]`: the built-in synthetic data set (a seeded Markov chain over the
/// vocabulary, so the loss can fall).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, AccumConfig)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[accum(crate = "crate", section)]
#[serde(default, deny_unknown_fields)]
pub struct DataSection {
    /// Examples in one epoch. Default 256.
    pub examples: u64,
    /// Shortest sequence, in tokens (inclusive). Default 16.
    pub min_len: u64,
    /// Longest sequence, in tokens (inclusive). Default 128.
    pub max_len: u64,
    /// Vocabulary size `V`. Default 256.
    pub vocab: u64,
    /// Seed of the data, the model's initial parameters and the epoch order. Default 0.
    pub seed: u64,
    /// What to do with a last partial group: `process` (real
    /// denominator), `drop` (ids recorded) or `error`. Default `process`.
    pub last_group: LastGroup,
}

impl Default for DataSection {
    fn default() -> Self {
        DataSection {
            examples: 256,
            min_len: 16,
            max_len: 128,
            vocab: 256,
            seed: 0,
            last_group: LastGroup::Process,
        }
    }
}

/// `[model]`: dimensions of the reference `TokenMlp`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, AccumConfig)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[accum(crate = "crate", section)]
#[serde(default, deny_unknown_fields)]
pub struct ModelSection {
    /// Embedding width `H`. Default 64.
    pub hidden: u64,
    /// Hidden layer width `F`. Default 256.
    pub ffn: u64,
}

impl Default for ModelSection {
    fn default() -> Self {
        ModelSection {
            hidden: 64,
            ffn: 256,
        }
    }
}

/// The axis a loss curve is plotted against.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum LogAxis {
    /// Applied optimizer updates.
    #[default]
    Updates,
    /// Examples processed.
    Examples,
    /// Supervised tokens processed.
    Tokens,
}

impl LogAxis {
    /// The config spelling (`"updates"`, `"examples"`, `"tokens"`).
    pub const fn key(self) -> &'static str {
        match self {
            LogAxis::Updates => "updates",
            LogAxis::Examples => "examples",
            LogAxis::Tokens => "tokens",
        }
    }

    /// The unit of the axis.
    pub const fn unit(self) -> UnitKind {
        match self {
            LogAxis::Updates => UnitKind::Update,
            LogAxis::Examples => UnitKind::Example,
            LogAxis::Tokens => UnitKind::Token,
        }
    }
}

impl fmt::Display for LogAxis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// `[log]`: how often to log and against which axis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, AccumConfig)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[accum(crate = "crate", section)]
#[serde(default, deny_unknown_fields)]
pub struct LogSection {
    /// Log interval with its unit ("10 updates", "50k tokens"). Default "1 update".
    #[accum(every)]
    pub every: Span,
    /// The loss curve's x axis: `updates`, `examples` or `tokens`. Default `updates`.
    pub axis: LogAxis,
}

impl Default for LogSection {
    fn default() -> Self {
        LogSection {
            every: Span::of(Updates::ONE),
            axis: LogAxis::Updates,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Sections {
        #[serde(default)]
        loss: LossSection,
        #[serde(default)]
        precision: PrecisionSection,
        #[serde(default)]
        optimizer: OptimizerSection,
        #[serde(default)]
        schedule: ScheduleSection,
        #[serde(default)]
        data: DataSection,
        #[serde(default)]
        model: ModelSection,
        #[serde(default)]
        log: LogSection,
    }

    #[test]
    fn toml_with_every_key() {
        let text = r#"
[loss]
normalization = "per_example"
ignore_index = -1
[precision]
mode = "fp16"
loss_scale = { init = 1024.0, growth_factor = 4.0, backoff_factor = 0.25, growth_interval = 10 }
[optimizer]
kind = "sgd"
lr = 0.1
betas = [0.8, 0.99]
eps = 1e-6
weight_decay = 0.0
momentum = 0.5
clip_norm = 2.0
[schedule]
kind = "cosine"
warmup = "2k tokens"
total = "40 updates"
[data]
examples = 100
min_len = 4
max_len = 9
vocab = 32
seed = 7
last_group = "drop"
[model]
hidden = 8
ffn = 16
[log]
every = "64 examples"
axis = "tokens"
"#;
        let s: Sections = toml::from_str(text).expect("valid");
        assert_eq!(s.loss.normalization, Normalization::PerExample);
        assert_eq!(s.loss.ignore_index, -1);
        assert_eq!(s.precision.mode, PrecisionMode::Fp16);
        assert_eq!(s.precision.loss_scale.growth_interval, 10);
        assert_eq!(s.optimizer.kind, OptimizerKind::Sgd);
        assert_eq!(s.optimizer.clip_norm, Some(2.0));
        assert_eq!(s.schedule.kind, ScheduleKind::Cosine);
        assert_eq!(s.schedule.warmup, Span::new(2000, UnitKind::Token));
        assert_eq!(s.data.last_group, LastGroup::Drop);
        assert_eq!(s.model.ffn, 16);
        assert_eq!(s.log.axis, LogAxis::Tokens);
        assert_eq!(s.log.every, Span::new(64, UnitKind::Example));
    }

    #[test]
    fn missing_keys_take_the_defaults() {
        let s: Sections = toml::from_str("[optimizer]\nlr = 3e-4\n").expect("valid");
        assert_eq!(s.optimizer.lr, 3e-4);
        assert_eq!(s.optimizer.betas, [0.9, 0.999]);
        assert_eq!(s.loss, LossSection::default());
        assert_eq!(s.loss.ignore_index, -100);
        assert_eq!(s.precision.loss_scale.init, 65536.0);
        assert_eq!(s.schedule.total, None);
        assert_eq!(s.schedule.run_length(), Span::new(100, UnitKind::Update));
        assert_eq!(s.data.examples, 256);
        assert_eq!(s.model.hidden, 64);
        assert_eq!(s.log.every, Span::new(1, UnitKind::Update));
    }

    #[test]
    fn unknown_keys_and_bad_values_are_rejected() {
        let err = toml::from_str::<Sections>("[loss]\nnormalisation = \"sum\"\n")
            .err()
            .expect("unknown key");
        assert!(
            err.to_string().contains("unknown field `normalisation`"),
            "{err}"
        );
        let err = toml::from_str::<Sections>("[loss]\nnormalization = \"mean\"\n")
            .err()
            .expect("bad variant");
        assert!(err.to_string().contains("per_token"), "{err}");
        let err = toml::from_str::<Sections>("[schedule]\nwarmup = \"100 steps\"\n")
            .err()
            .expect("ambiguous");
        assert!(err.to_string().contains("ambiguous"), "{err}");
    }

    #[cfg(feature = "schema")]
    #[test]
    fn schema_has_descriptions_and_enums() {
        let schema = schemars::schema_for!(OptimizerSection);
        let json = serde_json::to_value(&schema).expect("schema");
        let props = &json["properties"];
        assert!(
            props["lr"]["description"]
                .as_str()
                .is_some_and(|d| d.contains("Peak learning rate")),
            "{json}"
        );
        assert_eq!(json["additionalProperties"], serde_json::json!(false));
        let text = serde_json::to_string(&schemars::schema_for!(PrecisionSection)).expect("json");
        for key in ["fp32", "bf16", "fp16", "growth_interval"] {
            assert!(text.contains(key), "{key} in {text}");
        }
        let text = serde_json::to_string(&schemars::schema_for!(DataSection)).expect("json");
        for key in ["process", "drop", "error"] {
            assert!(text.contains(key), "{key} in {text}");
        }
    }
}
