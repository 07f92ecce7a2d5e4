//! The core of accum: typed units, plan arithmetic, the loop driver and the
//! accumulation engine.
//!
//! At the root, the vocabulary every part shares: typed counts
//! ([`Updates`], [`Microbatches`], [`Examples`], [`Tokens`], [`Count`]),
//! lengths written the way people write them ([`Span`], `"2M tokens"`),
//! problems as data ([`Finding`], [`Findings`], [`FieldPath`], [`Code`]: the
//! stable codes users look up), and the runtime side of
//! `#[derive(AccumConfig)]`: the [`AccumConfig`] trait, the plan rules
//! ([`check_roles`], [`check_values`]) and annotated JSON Schemas
//! ([`schema_for`]).
//!
//! The modules, one concern each:
//! - [`plan`]: `B = m·A·D`, layouts, stages, epochs, re-planning (`accum::plan::global-batch`, `accum::plan::partial-group`, `accum::calc::tokens`)
//! - [`config`]: the canonical `TrainingConfig`, derived with the crate's own macro
//! - [`settings`]: the engine-facing config sections (loss, precision, optimizer, …) and [`settings::EngineConfig`]
//! - [`schedule`]: learning-rate schedules stepped once per applied update (`accum::run::scheduler`)
//! - [`norm`]: loss normalization by what was really evaluated (`accum::run::normalization`)
//! - [`estimate`]: per-device memory (`accum::run::memory`) and data-parallel scaling (`accum::calc::scaling`)
//! - [`driver`]: the loop driver for a training loop of one's own in any framework:
//!   groups, microbatches, sync flags, denominators, progress (`accum::run::zeroing`, `accum::run::normalization`, `accum::run::group`, `accum::plan::partial-group`, `accum::run::loss-scale`, `accum::run::scheduler`, `accum::run::data-parallel`)
//! - [`scaler`]: dynamic loss scaling for any loop, the engine's or one's own (`accum::run::loss-scale`)
//! - [`replica`]: the reduction across data-parallel replicas (`accum::run::data-parallel`, `accum::calc::scaling`)
//! - [`engine`]: the group loop on CPU tensors, and what a model of one's own
//!   implements ([`engine::Model`] over [`engine::Tensors`]), its data, optimizer,
//!   loss scaler and `accum-dump/1` dumps (`accum::run::zeroing`, `accum::run::normalization`, `accum::run::group`, `accum::run::loss-scale`, `accum::run::memory`)
//! - [`checkpoint`]: the engine's checkpoints on disk (`accum-checkpoint/1`), written
//!   whole or not at all, and the last complete one found again
//! - [`report`]: the run report, its memory peaks and stats stream (`accum::sheet`)
//! - [`verify`]: accumulated vs large-batch equivalence (`accum::verify::equivalence`, `accum::verify::preflight`)
//!
//! Features (all default): `derive` re-exports `#[derive(AccumConfig)]`;
//! `schema` brings [`schema_for`] and `JsonSchema` for the config types;
//! `engine` brings the modules on CPU tensors ([`engine`], [`checkpoint`],
//! [`verify`]) and the `ndarray` re-export. Without them the crate is the
//! plan, units, spans, findings, the driver, schedules, the scaler and the
//! Recorder, with no tensor crate (docs/architecture.md, "Layers").
//!
//! `api/accum-core.txt` in the repository lists every public path.

#[cfg(feature = "engine")]
pub mod checkpoint;
mod code;
pub mod config;
#[cfg(feature = "engine")]
mod data;
mod derive;
pub mod driver;
#[cfg(feature = "engine")]
mod dump;
#[cfg(feature = "engine")]
pub mod engine;
pub mod estimate;
mod finding;
#[doc(hidden)]
pub mod fsio;
mod memory;
#[cfg(feature = "engine")]
mod model;
pub mod norm;
#[cfg(feature = "engine")]
mod optim;
pub mod plan;
pub mod replica;
pub mod report;
mod rng;
pub mod scaler;
pub mod schedule;
pub mod settings;
#[doc(hidden)]
pub mod shown;
mod span;
#[cfg(feature = "engine")]
mod tensor;
mod units;
#[cfg(feature = "engine")]
pub mod verify;

#[cfg(feature = "derive")]
pub use accum_macros::AccumConfig;
// The crate derives its own config types either way.
#[cfg(not(feature = "derive"))]
pub(crate) use accum_macros::AccumConfig;
pub use code::{Code, Family, UnknownCode};
pub use derive::Origin;
#[cfg(feature = "schema")]
pub use derive::schema_for;
pub use derive::{
    AccumConfig, CheckedPlan, ConstPlan, FieldInfo, Given, NestedConfig, RampField, RampRole,
    RampUp, RampValue, RoleField, RoleType, RoleValue, SCHEMA_VERSION, SpanField, SpanUse,
    SpanValue, StagesField, check_roles, check_spans, check_values, staged_plan_of, step_findings,
};
pub use finding::{FieldPath, Finding, Findings, Related, Severity};
/// The tensor crate of the engine's [`Model`](engine::Model) trait
/// ([`Tensors`](engine::Tensors) hold `ndarray` arrays), re-exported so that
/// a model can be written against the same version.
#[cfg(feature = "engine")]
pub use ndarray;
pub use span::{Span, SpanError};
/// Digits grouped by thousands (`1,234,567`), the way accum's messages
/// print counts; shared with the CLI.
#[doc(hidden)]
pub use units::group_digits;
pub use units::{
    Count, Example, Examples, Microbatch, Microbatches, Overflow, Token, Tokens, Unit, UnitKind,
    Update, Updates,
};

/// What the `accum` command line needs of this crate beyond its API, and
/// nothing else: its plumbing (counts in the span grammar for its options,
/// the hash of a configuration file, the name of the stats stream beside a
/// report). Not part of the API and not stable: it changes with the
/// command line. The one writer of accum's files ([`fsio`]), input text as
/// a reader sees it ([`shown`]) and [`group_digits`], which the command
/// line shares with the rest of accum, are hidden on their own.
#[doc(hidden)]
pub mod command_line {
    pub use crate::report::provenance::config_hash;
    pub use crate::report::stream::stats_stream_beside;
    pub use crate::span::parse_count;
}

/// What the code generated by `#[derive(AccumConfig)]` names, and nothing
/// else: not part of the API, and free to change with the derive (the way
/// serde and thiserror keep theirs). Every path the derive emits goes
/// through here, so the public modules can move without breaking derived
/// code.
#[doc(hidden)]
pub mod __private {
    pub use crate::derive::{
        AccumConfig, ConstPlan, FieldInfo, NestedConfig, RampField, RampRole, RampValue, RoleType,
        RoleValue, SchemaConfig, SpanField, SpanUse, SpanValue, StagesField, UnmarkedSection,
        count_ramp, count_role, has_role, join_path, no_step_findings, push_findings,
        step_findings_of,
    };
    pub use crate::finding::{FieldPath, Findings};
    pub use crate::plan::{Layout, Plan, Role};
    pub use crate::span::Span;
    pub use crate::units::UnitKind;

    /// The plan of a config whose `m`, `A` and `D` are constants, for its
    /// `const PLAN`; the derive has checked the values at compile time.
    ///
    /// # Panics
    /// When a factor is zero or a product overflows (at compile time).
    pub const fn const_plan(m: u64, a: u64, d: u64, seq_len: Option<u64>) -> Plan {
        Plan::from_parts(m, a, d, seq_len)
    }

    /// [`const_plan`] with the replicas of a constant device layout.
    ///
    /// # Panics
    /// When a factor is zero, `world_size` is not divisible by `tp·pp·cp`,
    /// or a product overflows (at compile time).
    pub const fn const_layout_plan(m: u64, a: u64, layout: Layout, seq_len: Option<u64>) -> Plan {
        Plan::from_layout_parts(m, a, layout, seq_len)
    }
}

/// The engine guide (`docs/engine.md`), compiled so its example runs.
#[cfg(all(doctest, feature = "engine"))]
#[doc = include_str!("../../docs/engine.md")]
pub struct EngineGuide;

#[cfg(test)]
mod edge_tests;
