//! The example's own config type: a training config that is not accum's,
//! derived with `#[derive(AccumConfig)]`, read from `candle.toml`. Its
//! binary `candle-accum` (`accum_cli::run::<CandleRun>()`) gives it accum's
//! schema, validate, sheet, compare and calc commands.

use accum::plan::Plan;
use accum::settings::LossScaleSettings;
use accum::{AccumConfig, Span, Updates};
use serde::Deserialize;

use crate::{ModelConfig, RunConfig};

/// The character model's run, as the example's users write it.
#[derive(AccumConfig, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CandleRun {
    /// Examples per forward/backward pass, per replica.
    #[accum(micro_batch)]
    pub micro_batch: u32,
    /// Microbatches per optimizer update, per replica.
    #[accum(accumulation)]
    pub accumulation: u32,
    /// Data-parallel replicas (threads).
    #[accum(replicas)]
    pub replicas: u32,
    /// Applied updates to run.
    pub updates: Updates,
    /// Warmup of the cosine schedule, in any unit.
    pub warmup: Span,
    /// Peak learning rate.
    pub lr: f64,
    /// Seed of the epoch order.
    pub seed: u64,
    /// Embedding width.
    pub hidden: u32,
    /// Hidden layer width.
    pub ffn: u32,
    /// The loss is logged at this interval.
    pub log_every: Span,
}

impl CandleRun {
    /// The example's run config: this plan, schedule and model, with the
    /// loss scale of `main`.
    pub fn run_config(&self) -> Result<RunConfig, accum::plan::PlanError> {
        let plan = Plan::new(
            u64::from(self.micro_batch),
            u64::from(self.accumulation),
            u64::from(self.replicas),
        )?;
        Ok(RunConfig {
            plan,
            updates: self.updates,
            warmup: self.warmup,
            lr: self.lr,
            seed: self.seed,
            model: ModelConfig {
                hidden: self.hidden as usize,
                ffn: self.ffn as usize,
                seed: 7,
            },
            loss_scale: LossScaleSettings {
                init: 65536.0,
                growth_interval: 50,
                ..LossScaleSettings::default()
            },
            log_every: Some(self.log_every),
        })
    }
}
