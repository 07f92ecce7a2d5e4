//! A user's own training config with `accum`'s schema, validate, sheet,
//! replan and calc commands:
//!
//! ```text
//! cargo run -p accum-cli --example custom_config -- schema
//! cargo run -p accum-cli --example custom_config -- validate my-run.toml
//! ```

use accum::{AccumConfig, Span, Updates};
use serde::{Deserialize, Serialize};

// This section ignores keys it does not know (serde's default), so a
// misspelt one is a warning with the key it most likely means; `Train`
// denies them, so there it is an error.
/// The optimizer part of the config; roles may live in nested sections.
#[derive(AccumConfig, Serialize, Deserialize, schemars::JsonSchema)]
#[accum(section)]
struct OptimSection {
    /// Microbatches per update.
    #[accum(accumulation)]
    grad_accum: u32,
    /// Peak learning rate.
    lr: f64,
    /// Decoupled weight decay. Default 0.
    #[serde(default)]
    weight_decay: f64,
}

/// The whole config.
#[derive(AccumConfig, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct Train {
    /// Sequences per forward pass.
    #[accum(micro_batch)]
    micro_batch_size: u32,
    /// Data-parallel replicas.
    #[accum(replicas)]
    data_parallel: u32,
    /// The intended effective batch.
    #[accum(global_batch)]
    global_batch: Option<u32>,
    /// Warmup, in any unit.
    warmup: Span,
    /// Evaluation interval.
    eval_every: Updates,
    /// Optimizer settings.
    #[accum(nested)]
    optim: OptimSection,
}

fn main() -> std::process::ExitCode {
    accum_cli::run::<Train>()
}
