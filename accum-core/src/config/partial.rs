//! The training config as another tool states it: the sections of
//! [`TrainingConfig`](super::TrainingConfig), each key optional, so that
//! "not set" stays apart from any value (and from "off": `clip_norm = 0.0`
//! disables clipping, a missing `clip_norm` takes the default).
//!
//! Importers of DeepSpeed, Megatron-LM, Hugging Face and Lightning files fill
//! a [`PartialConfig`] with what the file says and serialize it (with `toml`);
//! the result reads back as a `TrainingConfig`, with the defaults for what is
//! absent. Exporters read a `PartialConfig` from an accum file, so that they
//! write only what the file says.
//!
//! Written by hand beside `TrainingConfig`, not generated: its serde
//! attributes differ key by key (absent keys skipped, `0.0` kept apart from
//! "not set", sections that only exist when given), and a generator would
//! be a second derive to maintain for one type.
//! `every_key_of_the_full_config_is_a_partial_key` (below) fails when the
//! two drift apart.
//!
//! ```
//! use accum_core::config::partial::PartialConfig;
//!
//! let partial: PartialConfig = toml::from_str("[batch]\nmicro_batch = 4\naccumulation = 8\nreplicas = 2\n")?;
//! assert_eq!(partial.plan()?.effective_batch().get(), 64);
//! assert_eq!(partial.optimizer.lr, None);
//! assert_eq!(toml::to_string(&partial)?, "[batch]\nmicro_batch = 4\naccumulation = 8\nreplicas = 2\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use serde::{Deserialize, Serialize};

use super::{ParallelSection, RunSection};
use crate::plan::{LastGroup, Layout, LinearRamp, Plan, PlanError, PlanInput, StageSpec};
use crate::settings::{LogAxis, Normalization, OptimizerKind, PrecisionMode, ScheduleKind};
use crate::span::Span;

/// Every section of the training config, each key optional.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartialConfig {
    /// `[run]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunSection>,
    /// `[batch]`.
    #[serde(default, skip_serializing_if = "PartialBatch::is_empty")]
    pub batch: PartialBatch,
    /// `[parallel]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel: Option<ParallelSection>,
    /// `[loss]`.
    #[serde(default, skip_serializing_if = "PartialLoss::is_empty")]
    pub loss: PartialLoss,
    /// `[precision]`.
    #[serde(default, skip_serializing_if = "PartialPrecision::is_empty")]
    pub precision: PartialPrecision,
    /// `[optimizer]`.
    #[serde(default, skip_serializing_if = "PartialOptimizer::is_empty")]
    pub optimizer: PartialOptimizer,
    /// `[schedule]`.
    #[serde(default, skip_serializing_if = "PartialSchedule::is_empty")]
    pub schedule: PartialSchedule,
    /// `[data]`.
    #[serde(default, skip_serializing_if = "PartialData::is_empty")]
    pub data: PartialData,
    /// `[model]`.
    #[serde(default, skip_serializing_if = "PartialModel::is_empty")]
    pub model: PartialModel,
    /// `[log]`.
    #[serde(default, skip_serializing_if = "PartialLog::is_empty")]
    pub log: PartialLog,
}

/// `[batch]`, each key optional.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartialBatch {
    /// `m`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub micro_batch: Option<u64>,
    /// `A`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accumulation: Option<u64>,
    /// `D`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<u64>,
    /// `B`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_batch: Option<u64>,
    /// `L`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq_len: Option<u64>,
    /// The stages of a batch ramp-up before the batch above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stages: Option<Vec<StageSpec>>,
    /// A linear batch ramp-up to the batch above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ramp: Option<LinearRamp>,
}

/// `[loss]`, each key optional.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartialLoss {
    /// The normalization of the group's loss.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub normalization: Option<Normalization>,
    /// The label value of positions that contribute nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_index: Option<i64>,
}

/// `[precision.loss_scale]`, each key optional.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartialLossScale {
    /// Initial scale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init: Option<f64>,
    /// Growth factor (1 = static).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub growth_factor: Option<f64>,
    /// Backoff factor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_factor: Option<f64>,
    /// Clean updates before the scale grows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub growth_interval: Option<u64>,
}

/// `[precision]`, each key optional.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartialPrecision {
    /// `fp32`, `bf16` or `fp16`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<PrecisionMode>,
    /// Dynamic loss scaling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_scale: Option<PartialLossScale>,
}

/// `[optimizer]`, each key optional; `clip_norm = 0.0` is "no clipping".
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartialOptimizer {
    /// `adamw` or `sgd`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<OptimizerKind>,
    /// Peak learning rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lr: Option<f64>,
    /// AdamW's betas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub betas: Option<[f64; 2]>,
    /// AdamW's epsilon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eps: Option<f64>,
    /// Weight decay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_decay: Option<f64>,
    /// SGD momentum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub momentum: Option<f64>,
    /// Global gradient-norm clipping; `0.0` disables it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clip_norm: Option<f64>,
}

/// `[schedule]`, each key optional.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartialSchedule {
    /// `constant`, `linear` or `cosine`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<ScheduleKind>,
    /// Warmup length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<Span>,
    /// Length of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<Span>,
}

/// `[data]`, each key optional.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartialData {
    /// Examples in one epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub examples: Option<u64>,
    /// Shortest sequence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_len: Option<u64>,
    /// Longest sequence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_len: Option<u64>,
    /// Vocabulary size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vocab: Option<u64>,
    /// Seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// What to do with a last partial group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_group: Option<LastGroup>,
}

/// `[model]`, each key optional.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartialModel {
    /// Embedding width.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hidden: Option<u64>,
    /// Hidden layer width.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ffn: Option<u64>,
}

/// `[log]`, each key optional.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartialLog {
    /// Log interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<Span>,
    /// The loss curve's axis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub axis: Option<LogAxis>,
}

macro_rules! is_empty {
    ($($ty:ty),*) => {$(
        impl $ty {
            /// Whether no key is set.
            pub fn is_empty(&self) -> bool {
                *self == Self::default()
            }
        }
    )*};
}

is_empty!(
    PartialBatch,
    PartialLoss,
    PartialPrecision,
    PartialOptimizer,
    PartialSchedule,
    PartialData,
    PartialModel,
    PartialLog
);

impl PartialConfig {
    /// The plan `[batch]` and `[parallel]` describe, with the rules a full
    /// config follows (`accum::plan::global-batch`): `A` is solved from `B` when only `B` is given.
    pub fn plan(&self) -> Result<Plan, PlanError> {
        PlanInput {
            micro_batch: self.batch.micro_batch,
            accumulation: self.batch.accumulation,
            replicas: self.batch.replicas,
            layout: self.parallel.as_ref().map(|p| {
                Layout::new(
                    p.world_size,
                    p.tensor.unwrap_or(1),
                    p.pipeline.unwrap_or(1),
                    p.context.unwrap_or(1),
                )
            }),
            seq_len: self.batch.seq_len,
            global_batch: self.batch.global_batch,
        }
        .resolve()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TrainingConfig;

    /// A partial config with every key set, in TOML.
    const FULL: &str = r#"
[run]
name = "all"
notes = "every key"

[batch]
micro_batch = 2
accumulation = 4
replicas = 2
global_batch = 16
seq_len = 128

[[batch.stages]]
accumulation = 2
until = "100 updates"

[loss]
normalization = "per_example"
ignore_index = -1

[precision]
mode = "fp16"

[precision.loss_scale]
init = 1024.0
growth_factor = 2.0
backoff_factor = 0.5
growth_interval = 100

[optimizer]
kind = "sgd"
lr = 0.1
betas = [0.9, 0.95]
eps = 1e-6
weight_decay = 0.0
momentum = 0.5
clip_norm = 0.0

[schedule]
kind = "cosine"
warmup = "10 updates"
total = "2k examples"

[data]
examples = 2048
min_len = 4
max_len = 128
vocab = 64
seed = 3
last_group = "drop"

[model]
hidden = 8
ffn = 16

[log]
every = "5 updates"
axis = "tokens"
"#;

    /// Every key of the full config has its partial counterpart and back:
    /// a file with every key reads as both, and the two stay in step when a
    /// section gains a key.
    #[test]
    fn every_key_of_the_full_config_is_a_partial_key() {
        let partial: PartialConfig = toml::from_str(FULL).expect("partial");
        let full: TrainingConfig = toml::from_str(FULL).expect("full");
        let back: PartialConfig =
            toml::from_str(&toml::to_string(&partial).expect("serializes")).expect("reads back");
        assert_eq!(back, partial);
        let full_text = toml::to_string(&full).expect("full serializes");
        let from_full: PartialConfig = toml::from_str(&full_text).expect("every full key");
        assert_eq!(from_full.plan().expect("plan"), full.plan_checked());
        // `clip_norm = 0.0` is "no clipping" in both forms.
        assert_eq!(partial.optimizer.clip_norm, Some(0.0));
        assert_eq!(full.optimizer.clip_norm, None);
    }

    #[test]
    fn absent_keys_stay_absent() {
        let partial: PartialConfig = toml::from_str("[optimizer]\nlr = 3e-4\n").expect("partial");
        assert_eq!(partial.optimizer.lr, Some(3e-4));
        assert_eq!(partial.optimizer.clip_norm, None);
        assert!(partial.schedule.is_empty() && partial.data.is_empty());
        assert_eq!(
            toml::to_string(&partial).expect("serializes"),
            "[optimizer]\nlr = 0.0003\n"
        );
        let err = toml::from_str::<PartialConfig>("[optimizer]\nlearning_rate = 1.0\n")
            .expect_err("unknown key");
        assert!(err.to_string().contains("unknown field"), "{err}");
    }

    impl TrainingConfig {
        fn plan_checked(&self) -> Plan {
            crate::AccumConfig::plan(self).expect("a valid plan")
        }
    }
}
