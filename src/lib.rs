//! accum: gradient-accumulation plans that cannot be miscounted.
//!
//! This facade re-exports [`accum_core`] and the `AccumConfig` derive, the way
//! `serde` re-exports `serde_derive`. Start with [`Plan`] for the arithmetic
//! (`B = m·A·D`, `accum::plan::global-batch`) and the typed counts in [`units`].

/// The tensor crate of the engine's `Model` trait, at the version accum uses.
pub use accum_core::ndarray;
pub use accum_core::*;
pub use accum_macros::AccumConfig;

/// Loading a config file into the user's own type with the diagnostics of
/// `accum validate` (the `load` feature, on by default): see
/// [`load_config`].
#[cfg(feature = "load")]
pub use accum_cli::{ConfigError, Diagnostic, Loaded, load_config, load_config_str};

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
