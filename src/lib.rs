//! accum: gradient-accumulation plans that cannot be miscounted.
//!
//! A plan is `B = m·A·D` (`accum::plan::global-batch`): a global batch of
//! `B` examples per optimizer update is `m` examples per microbatch, `A`
//! microbatches accumulated, on `D` data-parallel replicas. accum checks a
//! plan where it is written, counts in typed units, and runs the
//! accumulation loop the plan describes. This crate re-exports
//! [`accum_core`] and the `AccumConfig` derive, the way `serde` re-exports
//! `serde_derive`, and, with the `load` feature (on by default), the config
//! loader of the `accum` CLI ([`load_config`]).
//!
//! # Features
//!
//! All on by default; a program that needs less turns them off
//! (`default-features = false`) and names the ones it uses:
//! - `derive`: `#[derive(AccumConfig)]`. With it alone, accum is the
//!   plan, units, spans, findings, the loop driver, schedules, the loss
//!   scaler and the Recorder: no tensor crate, no command line.
//! - `schema`: [`schema_for`], JSON Schemas of derived configs.
//! - `load`: [`load_config`] and the diagnostics of `accum validate`
//!   (brings `schema`).
//! - `engine`: accum's own engine on CPU tensors ([`engine`], [`verify`],
//!   [`checkpoint`], the [`ndarray`] re-export).
//!
//! The sections below follow the order people learn accum in: the derive
//! on a config of one's own, the plan it gives, the loop driver for a
//! training loop in any framework, and accum's own engine.
//!
//! # Derive: a config that cannot miscount
//!
//! [`AccumConfig`](derive@AccumConfig) on a training-config struct says
//! which fields are `m`, `A`, `D` (or a device layout) and `B`. What is
//! known at compile time is checked then (a role given twice, a `steps`
//! field without a unit, a constant plan whose product is not its global
//! batch); the rest is checked by [`AccumConfig::plan`] and
//! [`AccumConfig::validate`], which report every problem at once as
//! [`Findings`] with the field's path, and by [`schema_for`], a JSON Schema
//! whose plan fields are marked for the `accum` CLI (`docs/derive.md`).
//!
//! ```
//! use accum::AccumConfig;
//!
//! #[derive(AccumConfig, serde::Deserialize)]
//! struct Train {
//!     #[accum(micro_batch)]
//!     micro_batch_size: u32,
//!     #[accum(accumulation)]
//!     grad_accum: u32,
//!     #[accum(replicas)]
//!     data_parallel: u32,
//! }
//!
//! let train: Train = toml::from_str("micro_batch_size = 2\ngrad_accum = 8\ndata_parallel = 2")?;
//! assert_eq!(train.plan()?.effective_batch().get(), 32);
//!
//! let wrong = Train { grad_accum: 0, ..train };
//! let findings = wrong.validate().unwrap_err();
//! assert_eq!(findings.paths(), ["grad_accum"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Plan: the arithmetic, in typed units
//!
//! A [`plan::Plan`] is valid by construction; a run's lengths are
//! [`Span`]s in a unit said out loud (`"1.5k examples"`, `"2M tokens"`),
//! converted to [`Updates`], [`Microbatches`], [`Examples`] or [`Tokens`]
//! through the plan: counts of different units do not add up by accident.
//! [`plan`] also holds batch ramp-ups ([`plan::StagedPlan`]), epochs and
//! re-planning (`docs/plan.md`).
//!
//! ```
//! use accum::plan::{Plan, Rounding};
//! use accum::{Span, Updates};
//!
//! let plan = Plan::new(2, 8, 2)?; // m = 2, A = 8, D = 2
//! assert_eq!(plan.effective_batch().get(), 32);
//! let warmup: Span = "1.5k examples".parse()?;
//! assert_eq!(plan.span_to_updates(&warmup, Rounding::Up)?, Updates::new(47));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Driver: a training loop of one's own, in any framework
//!
//! The loop driver ([`driver::Driver`]) gives a loop in candle, burn or
//! plain Rust the groups of a plan: which examples form each update, their
//! microbatches and replicas, where the gradient synchronisation goes, the
//! loss denominator, the schedule and the progress (`docs/loop.md`).
//!
//! ```
//! use accum::Updates;
//! use accum::driver::{Driver, Outcome};
//! use accum::plan::Plan;
//! use accum::replica::InProcess;
//! use accum::settings::Normalization;
//!
//! let lengths = vec![5_u64; 100]; // the supervised tokens of each example
//! let plan = Plan::new(2, 4, 1)?; // 4 microbatches of 2 examples per update
//! let reducer = InProcess::new(1); // one replica, in this process
//! let mut driver = Driver::builder(plan, lengths.len()).seed(7).total(Updates::new(3)).build()?;
//! while let Some(mut group) = driver.next_group()? {
//!     // Before the first backward pass: what the group's loss is divided by.
//!     let den = group.denominator(Normalization::PerToken, |id| lengths[id], &reducer)?;
//!     assert_eq!(den.value, 40.0); // 8 examples of 5 tokens
//!     for microbatch in group.microbatches() {
//!         assert_eq!(microbatch.ids.len(), 2); // forward and backward here
//!         // `microbatch.sync`: the gradient all-reduce follows this one.
//!     }
//!     driver.finish(group, Outcome::Applied)?; // after the optimizer step
//! }
//! assert_eq!(driver.progress().updates, Updates::new(3));
//! assert_eq!(driver.progress().examples.get(), 24);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Engine: accumulation on real tensors
//!
//! accum's own engine ([`engine`]) runs the plan on CPU tensors: a built-in
//! model or a [`engine::Model`] of one's own over [`engine::Tensors`], the
//! loss normalized once per group, loss scaling, clipping, the scheduler
//! per update and data-parallel replicas, and gives a
//! [`report::RunReport`]. [`verify::equivalence`] checks that one update
//! accumulated equals one large batch (`docs/engine.md`).
//!
//! ```
//! use accum::plan::Plan;
//! use accum::settings::EngineConfig;
//!
//! let plan = Plan::new(4, 2, 2)?; // B = 16
//! let mut config = EngineConfig::default();
//! config.data.examples = 64;
//! config.model.hidden = 8;
//! config.model.ffn = 16;
//! config.schedule.total = Some("3 updates".parse()?);
//!
//! let report = accum::engine::run(&plan, &config)?;
//! assert_eq!(report.counters.applied_updates.get(), 3);
//! let check = accum::verify::equivalence(&plan, &config, Default::default())?;
//! assert!(check.passed);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

/// The tensor crate of the engine's `Model` trait, at the version accum uses.
#[cfg(feature = "engine")]
pub use accum_core::ndarray;
pub use accum_core::*;
#[cfg(feature = "derive")]
pub use accum_macros::AccumConfig;

/// Loading a config file into the user's own type with the diagnostics of
/// `accum validate` (the `load` feature, on by default): see
/// [`load_config`].
#[cfg(feature = "load")]
pub use accum_cli::{
    ConfigError, Consequence, Diagnostic, Loaded, Location, load_config, load_config_str,
};

/// The README's Rust examples compile and pass.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
/// `docs/derive.md`, compiled and run as doc tests so that its examples stay
/// true.
#[cfg(doctest)]
#[doc = include_str!("../docs/derive.md")]
pub struct DeriveGuide;
/// `docs/rampup.md`, compiled and run as doc tests so that its numbers stay
/// true.
#[cfg(doctest)]
#[doc = include_str!("../docs/rampup.md")]
pub struct RampupGuide;
