//! accum driving a training loop in burn: a small character model on the
//! text examples/candle ships, trained on burn's NdArray backend with
//! Autodiff. accum's loop driver gives the groups, microbatches and global
//! per-token denominator; burn's `GradientsAccumulator` adds the
//! microbatches' gradients; accum's reducer all-reduces them once per
//! update across replicas on threads; accum's schedule and loss scaler feed
//! burn's AdamW. One config struct derives both burn's `Config` and accum's
//! `AccumConfig`. accum knows nothing of burn; burn knows nothing of
//! accum's plans.
//!
//! [`burn_accumulation`] measures what burn's own accumulation (the
//! learner's `grads_accumulation`) computes when each microbatch's loss is a
//! per-token mean.

use std::error::Error;

pub mod burn_accumulation;
mod config;
mod corpus;
mod model;
mod train;

pub use config::{BatchConfig, TrainConfig};
pub use corpus::{CORPUS, Corpus, PROMPT};
pub use model::{CharModel, ModelConfig, PaddedBatch};
pub use train::{
    Trained, device, first_group_gradient, relative_difference, train, train_with_report,
};

/// Errors of the example: burn's, accum's, a thread's.
pub type BoxError = Box<dyn Error + Send + Sync>;

/// `docs/loop.md`'s burn section, compiled and run here, where both accum
/// and burn are dependencies, so that its loop stays true (the file's other
/// sections are compiled by examples/candle).
#[cfg(doctest)]
#[doc = include_str!(concat!(env!("OUT_DIR"), "/loop-burn.md"))]
pub struct LoopGuide;
