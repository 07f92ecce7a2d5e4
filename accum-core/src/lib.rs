//! The core of accum: typed units, plan arithmetic and the accumulation
//! engine.
//!
//! - [`units`]: counts in examples, microbatches, updates and tokens (`accum::span`)
//! - [`span`]: lengths written the way people write them (`"2M tokens"`)
//! - [`plan`]: `B = m·A·D`, layouts, epochs, re-planning (`accum::plan::global-batch`, `accum::plan::partial-group`, `accum::run::memory`, `accum::calc::tokens`)
//! - [`norm`]: loss normalization by what was really evaluated (`accum::run::normalization`)
//! - [`estimate`]: per-device memory (`accum::run::memory`) and data-parallel scaling (`accum::calc::scaling`)
//! - [`config`]: the canonical `TrainingConfig`, derived with the crate's own macro
//! - [`derive`](mod@derive): the runtime side of `#[derive(AccumConfig)]`: the plan
//!   rules ([`check_roles`]) and annotated JSON Schemas
//! - [`finding`], [`code`]: problems as data (code, field path, role, message, fix)
//!   and the stable codes users look up
//! - [`settings`]: the engine-facing config sections (loss, precision, optimizer, …)
//! - [`tensor`], [`model`], [`optim`], [`schedule`], [`scaler`]: the pieces of a training step
//! - [`data`]: synthetic Markov-chain data and packing
//! - [`driver`]: the loop driver for a training loop of one's own in any framework:
//!   groups, microbatches, sync flags, denominators, progress (`accum::run::zeroing`, `accum::run::normalization`, `accum::run::group`, `accum::plan::partial-group`, `accum::run::loss-scale`, `accum::run::scheduler`, `accum::run::data-parallel`)
//! - [`replica`]: the reduction across data-parallel replicas (`accum::run::data-parallel`, `accum::calc::scaling`)
//! - [`engine`]: the group loop (`accum::run::zeroing`, `accum::run::normalization`, `accum::run::group`, `accum::plan::partial-group`, `accum::run::loss-scale`, `accum::run::scheduler`, `accum::run::data-parallel`)
//! - [`memory`], [`report`]: memory peaks (`accum::run::memory`) and the run report (`accum::sheet`)
//! - [`verify`]: accumulated vs large-batch equivalence (`accum::verify::equivalence`, `accum::verify::preflight`)
//! - [`dump`]: `accum-dump/1` directories with `.npy` tensors
//! - [`fsio`]: atomic file writes (temporary file, then rename)

pub mod code;
pub mod config;
pub mod data;
pub mod derive;
pub mod driver;
pub mod dump;
pub mod engine;
pub mod estimate;
pub mod finding;
pub mod fsio;
pub mod memory;
pub mod model;
pub mod norm;
pub mod optim;
pub mod plan;
pub mod replica;
pub mod report;
pub mod scaler;
pub mod schedule;
pub mod settings;
pub mod span;
pub mod tensor;
pub mod units;
pub mod verify;

pub use accum_macros::AccumConfig;
pub use code::Code;
pub use derive::Origin;
pub use derive::{
    AccumConfig, CheckedPlan, ConstPlan, FieldInfo, Given, NestedConfig, RampField, RampRole,
    RampUp, RampValue, RoleField, RoleType, RoleValue, SCHEMA_VERSION, SpanField, SpanUse,
    SpanValue, StagesField, check_roles, check_spans, check_values, schema_for, staged_plan_of,
};
pub use engine::{Engine, EngineError, Observer, RunOptions, buffer_refusal, run};
pub use finding::{FieldPath, Finding, Findings, Related, Severity};
/// The tensor crate of the engine's [`Model`](model::Model) trait
/// ([`Tensors`](tensor::Tensors) hold `ndarray` arrays), re-exported so that
/// a model can be written against the same version.
pub use ndarray;
pub use plan::{Edit, Fix, LastGroup, Layout, Plan, PlanError, PlanInput, Role, Rounding};
pub use report::RunReport;
pub use settings::EngineConfig;
pub use span::{Span, SpanError};
pub use units::{
    Count, Example, Examples, Microbatch, Microbatches, Token, Tokens, Unit, UnitKind, Update,
    Updates,
};
pub use verify::{Tolerance, VerifyReport, verify};

/// The engine guide (`docs/engine.md`), compiled so its example runs.
#[cfg(doctest)]
#[doc = include_str!("../../docs/engine.md")]
pub struct EngineGuide;

#[cfg(test)]
mod edge_tests;
