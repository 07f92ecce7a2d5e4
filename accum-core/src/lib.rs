//! The core of accum: typed units, plan arithmetic and the accumulation
//! engine.
//!
//! - [`units`]: counts in examples, microbatches, updates and tokens (SPEC R1)
//! - [`span`]: lengths written the way people write them (`"2M tokens"`)
//! - [`plan`]: `B = m·A·D`, layouts, epochs, re-planning (R3, R6, R11, R15)
//! - [`config`]: the canonical `TrainingConfig`, derived with the crate's own macro
//! - [`derive`](mod@derive): the runtime side of `#[derive(AccumConfig)]`: validation
//!   with field paths and annotated JSON Schemas

pub mod config;
pub mod derive;
pub mod plan;
pub mod span;
pub mod units;

pub use accum_macros::AccumConfig;
pub use derive::{
    AccumConfig, ConstPlan, FieldInfo, Finding, Findings, NestedConfig, RoleField, RoleType,
    RoleValue, Source, schema_for,
};
pub use plan::{LastGroup, Layout, Plan, PlanError, PlanInput, Role, Rounding};
pub use span::{Span, SpanError};
pub use units::{
    Count, Example, Examples, Microbatch, Microbatches, Token, Tokens, Unit, UnitKind, Update,
    Updates,
};
