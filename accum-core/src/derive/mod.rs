//! The runtime side of `#[derive(AccumConfig)]`: the [`AccumConfig`] trait the
//! derive implements, the field metadata it generates, the plan rules
//! ([`check_roles`]: every problem of a config at once, as
//! [`Findings`](crate::Findings) with field paths), the batch ramp-up
//! ([`staged_plan_of`]), the rules of lengths ([`check_spans`]), all of them
//! at once ([`check_values`]), and [`schema_for`], the JSON Schema 2020-12
//! with `x-accum-role` / `x-accum-unit` annotations (docs/derive.md).
//!
//! The derive generates only data: a static description of the fields
//! ([`AccumConfig::FIELDS`]) and a function that reads the role values
//! ([`AccumConfig::role_values`]). Everything else — building the plan,
//! validation, role listing — is written once here, so that generated code
//! stays small and the rules live in one place. A front end that finds the
//! role values another way (a schema's `x-accum-role` over a config file)
//! runs the same rules through [`check_roles`].
//!
//! ```
//! use accum_core::{AccumConfig, FieldInfo, FieldPath, RoleValue};
//! use accum_core::plan::Role;
//!
//! // What the derive generates for a struct with three role fields.
//! struct Train {
//!     micro_batch: u32,
//!     accumulation: u32,
//!     replicas: u32,
//! }
//!
//! impl AccumConfig for Train {
//!     const FIELDS: &'static [FieldInfo] = &[
//!         FieldInfo::role("micro_batch", Role::MicroBatch, false),
//!         FieldInfo::role("accumulation", Role::Accumulation, false),
//!         FieldInfo::role("replicas", Role::Replicas, false),
//!     ];
//!     fn role_values(&self, prefix: &FieldPath, out: &mut Vec<RoleValue>) {
//!         out.push(RoleValue::field(Role::MicroBatch, prefix, "micro_batch", Some(self.micro_batch.into())));
//!         out.push(RoleValue::field(Role::Accumulation, prefix, "accumulation", Some(self.accumulation.into())));
//!         out.push(RoleValue::field(Role::Replicas, prefix, "replicas", Some(self.replicas.into())));
//!     }
//! }
//!
//! let train = Train { micro_batch: 2, accumulation: 0, replicas: 2 };
//! let findings = train.validate().unwrap_err();
//! assert_eq!(findings.len(), 1);
//! assert_eq!(findings.paths(), ["accumulation"]);
//! ```

mod ramp;
mod roles;
mod schema;
mod spans;

use std::num::{NonZeroU8, NonZeroU16, NonZeroU32, NonZeroU64, NonZeroUsize};

use serde::Serialize;

pub use ramp::{RampField, RampRole, RampUp, RampValue, StagesField, staged_plan_of};
pub use roles::check_roles;
#[cfg(feature = "schema")]
pub use schema::schema_for;
pub use schema::{SCHEMA_VERSION, no_step_findings, step_findings, step_findings_of};

/// A derived config with a JSON Schema, whose step-like fields the
/// derive's `validate()` looks for in the schema. Named by generated code.
#[cfg(feature = "schema")]
#[doc(hidden)]
pub trait SchemaConfig: AccumConfig + schemars::JsonSchema {}

#[cfg(feature = "schema")]
impl<T: AccumConfig + schemars::JsonSchema> SchemaConfig for T {}

/// Without the `schema` feature, no config has a JSON Schema: a trait no
/// type implements, so the derive's probe finds none.
#[cfg(not(feature = "schema"))]
#[doc(hidden)]
pub trait SchemaConfig: AccumConfig {}
/// A struct with roles that lacks a required one and is not marked
/// `#[accum(section)]`: the derive reports the missing role and implements
/// this, so that a config that nests the struct can name the forgotten
/// `section` at its field. Named by generated code.
#[doc(hidden)]
pub trait UnmarkedSection {}

pub use spans::{SpanField, SpanUse, SpanValue, check_spans};

use crate::finding::{FieldPath, Finding, Findings};
use crate::plan::{Layout, Plan, PlanInput, Role, StagedPlan};
use crate::units::UnitKind;

/// A configuration whose fields play roles in an accumulation plan
/// (`m`, `A`, `D`, …). Implemented by `#[derive(AccumConfig)]`; see
/// `docs/derive.md` for the attributes.
///
/// Only [`FIELDS`](AccumConfig::FIELDS) and
/// [`role_values`](AccumConfig::role_values) are generated; the other methods
/// are provided.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not implement `AccumConfig`",
    label = "a nested section must derive `AccumConfig` too",
    note = "add `#[derive(AccumConfig)]` and `#[accum(section)]` to `{Self}`, or remove `#[accum(nested)]` from the field"
)]
pub trait AccumConfig {
    /// Static description of the fields that matter to the plan: role fields,
    /// typed-unit fields and nested sections, with their serialized names.
    const FIELDS: &'static [FieldInfo];

    /// Whether the data's sequence lengths vary and the training loop counts
    /// the tokens of each update (`#[accum(variable_length)]` on the struct
    /// or a nested section): lengths in tokens then need no fixed `seq_len`.
    const VARIABLE_LENGTH: bool = false;

    /// Pushes the value of every role this config (and its nested sections)
    /// defines, with its field path under `prefix` (the root at the top).
    /// A role whose field is `None` (or whose section is absent) is pushed
    /// as [`Given::Absent`]; struct-level constants are pushed as constants.
    fn role_values(&self, prefix: &FieldPath, out: &mut Vec<RoleValue>);

    /// Pushes every length field of this config and its nested sections
    /// that holds a value: a `Span`, a typed count (`Updates`, `Tokens`, …)
    /// or an integer with a declared unit, with its path and use. Generated
    /// by the derive; the default has none.
    fn span_values(&self, prefix: &FieldPath, out: &mut Vec<SpanValue>) {
        let _ = (prefix, out);
    }

    /// Pushes the batch ramp-up of this config and its nested sections: the
    /// `#[accum(stages)]` and `#[accum(ramp)]` fields that hold a value,
    /// with their paths. Generated by the derive; the default has none.
    fn ramp_values(&self, prefix: &FieldPath, out: &mut Vec<RampValue>) {
        let _ = (prefix, out);
    }

    /// Every role of the config with its field path
    /// (`optim.grad_accum`) and declared unit, flattened from
    /// [`FIELDS`](AccumConfig::FIELDS). Struct-level constants are not fields
    /// and are not listed.
    fn roles() -> Vec<RoleField>
    where
        Self: Sized,
    {
        let mut out = Vec::new();
        collect_roles(Self::FIELDS, &FieldPath::root(), false, &mut out);
        out
    }

    /// Pushes the findings of the config's own checks (`#[accum(check =
    /// path)]` on the struct: rules of values the plan does not see, such as
    /// the ranges of engine settings) and those of its nested sections, with
    /// their paths under `prefix`. Generated by the derive; the default has
    /// none.
    fn own_findings(&self, prefix: &FieldPath, out: &mut Findings) {
        let _ = (prefix, out);
    }

    /// The one gate of a config: every rule [`validate`](AccumConfig::validate)
    /// runs, and — when none of them finds an error — the plan with its
    /// ramp-up, built from the same values, beside the warnings. `Err` holds
    /// every finding, warnings included. [`plan`](AccumConfig::plan),
    /// [`staged_plan`](AccumConfig::staged_plan) and `validate` all go
    /// through it, so a plan that `validate` refuses cannot be obtained.
    fn checked(&self) -> Result<CheckedPlan, Findings> {
        let root = FieldPath::root();
        let (mut roles, mut spans, mut ramps) = (Vec::new(), Vec::new(), Vec::new());
        self.role_values(&root, &mut roles);
        self.span_values(&root, &mut spans);
        self.ramp_values(&root, &mut ramps);
        let mut own = Findings::default();
        self.own_findings(&root, &mut own);
        gate(&roles, &spans, &ramps, Self::VARIABLE_LENGTH, own)
    }

    /// The plan (`B = m·A·D`, `accum::plan::global-batch`), solving a
    /// missing `A` or `m` from a declared global batch: the full batch,
    /// after any ramp-up. Runs every check of
    /// [`validate`](AccumConfig::validate) and returns all its findings
    /// when one is an error; the warnings of a valid plan are in
    /// [`checked`](AccumConfig::checked).
    fn plan(&self) -> Result<Plan, Findings> {
        self.checked().map(|checked| *checked.plan())
    }

    /// The plan with its batch ramp-up: the plan's roles give the full
    /// batch, a `#[accum(stages)]` or `#[accum(ramp)]` field the smaller
    /// batches before it; without one, a single stage for the whole run.
    /// Both given at run time is a finding at the ramp field
    /// (`accum::stages::order`). Runs every check of
    /// [`validate`](AccumConfig::validate), as [`plan`](AccumConfig::plan)
    /// does.
    fn staged_plan(&self) -> Result<StagedPlan, Findings> {
        self.checked().map(CheckedPlan::into_staged)
    }

    /// Checks the config and reports *every* independent problem, each
    /// with its code, the path of the field to change and the fix: zeroes,
    /// a role given in two places, missing roles, a world size not divisible
    /// by `tp·pp·cp`, a global batch that is not `m·A·D` (see
    /// [`check_roles`]); the stages of a batch ramp-up (see
    /// [`staged_plan_of`]); lengths in tokens without a fixed `seq_len`, a
    /// warmup or an interval longer than the run, compared through the
    /// stages, and — as warnings — a run length in examples or microbatches
    /// that is not a whole number of updates, or a warmup or run length written in updates under a
    /// ramp-up (see [`check_values`]); the config's own checks
    /// (`#[accum(check = …)]`).
    ///
    /// `Ok` holds the warnings (often none): a config whose findings are
    /// all warnings plans and runs. `Err` holds every finding, warnings
    /// included, when at least one is an error. It is
    /// [`checked`](AccumConfig::checked) without the plan:
    /// [`plan`](AccumConfig::plan) and
    /// [`staged_plan`](AccumConfig::staged_plan) succeed exactly when it
    /// finds no error.
    fn validate(&self) -> Result<Findings, Findings> {
        self.checked().map(CheckedPlan::into_warnings)
    }
}

/// A plan that passed every check of its config
/// ([`AccumConfig::checked`]), with the warnings found on the way.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckedPlan {
    staged: StagedPlan,
    warnings: Findings,
}

impl CheckedPlan {
    /// The full plan, after any ramp-up.
    pub fn plan(&self) -> &Plan {
        self.staged.final_plan()
    }

    /// The plan with its stages (one for a constant batch).
    pub fn staged(&self) -> &StagedPlan {
        &self.staged
    }

    /// The warnings: the config works, but probably does not mean all that
    /// was written (often none).
    pub fn warnings(&self) -> &Findings {
        &self.warnings
    }

    /// The staged plan, without the warnings.
    pub fn into_staged(self) -> StagedPlan {
        self.staged
    }

    /// The warnings, without the plan.
    pub fn into_warnings(self) -> Findings {
        self.warnings
    }
}

/// Pushes `found`, a section's own findings with paths relative to the
/// section, under `prefix`. Called by generated code for
/// `#[accum(check = …)]`.
pub fn push_findings(prefix: &FieldPath, found: Findings, out: &mut Findings) {
    out.extend(found.into_iter().map(|finding| finding.under(prefix)));
}

/// The gate: every rule on the values and the config's own findings, and
/// the staged plan when none of them is an error.
fn gate(
    roles: &[RoleValue],
    spans: &[SpanValue],
    ramps: &[RampValue],
    variable_length: bool,
    own: Findings,
) -> Result<CheckedPlan, Findings> {
    let (mut findings, staged) = evaluate(roles, spans, ramps, variable_length);
    findings.extend(own);
    match staged {
        Some(staged) if !findings.has_errors() => Ok(CheckedPlan {
            staged,
            warnings: findings,
        }),
        // `evaluate` gives no staged plan only with an error among its
        // findings (or a ramp-up its reader reported unreadable, which a
        // derived config cannot hold), so this `Err` holds one.
        _ => Err(findings),
    }
}

/// Every rule on a config's values, however they were found (a derived
/// config's `role_values`, `span_values` and `ramp_values`, or a schema's
/// `x-accum-role` and `x-accum-span` over a file): the plan rules
/// ([`check_roles`]); when the plan resolves, the stages of its ramp-up
/// ([`staged_plan_of`]); then the lengths, compared through the staged
/// plan, with a warning (`accum::span::rounding`) for a run length in
/// examples or microbatches that is not a whole number of updates and one (`accum::stages::shift`) for each
/// warmup or run length written in updates or microbatches under a
/// ramp-up, giving its value in examples and tokens through the stages.
pub fn check_values(
    roles: &[RoleValue],
    spans: &[SpanValue],
    ramps: &[RampValue],
    variable_length: bool,
) -> Findings {
    evaluate(roles, spans, ramps, variable_length).0
}

/// The rules of [`check_values`], and the staged plan they checked the
/// lengths through. The plan is `None` only when an error was found or a
/// value is [`Given::Unreadable`] (its reader reports it): a plan the rules
/// let through but that does not resolve is reported as the plan's own
/// error, so that nothing is refused in silence.
fn evaluate(
    roles: &[RoleValue],
    spans: &[SpanValue],
    ramps: &[RampValue],
    variable_length: bool,
) -> (Findings, Option<StagedPlan>) {
    let mut findings = check_roles(roles);
    // An unreadable value is reported by whoever read it (a derived config
    // has none); the rules that need it were skipped.
    let unreadable = roles.iter().any(|v| v.given == Given::Unreadable);
    let plan = if findings.has_errors() {
        None
    } else if unreadable {
        input_from_values(roles).resolve().ok()
    } else {
        match input_from_values(roles).resolve() {
            Ok(plan) => Some(plan),
            Err(err) => {
                let path = err
                    .role()
                    .and_then(|role| roles.iter().find(|v| v.role == role))
                    .map(|v| v.source.path().clone())
                    .unwrap_or_default();
                findings.push(Finding::from_error(&err, path));
                None
            }
        }
    };
    let staged = match plan {
        Some(plan) => match staged_plan_of(&plan, ramps) {
            Ok(staged) => Some(staged),
            Err(stages) => {
                // Empty only for a ramp-up its reader found unreadable and
                // reported; a derived config has none.
                findings.extend(stages);
                None
            }
        },
        None => None,
    };
    // With a ramp-up that does not resolve, lengths are compared only in
    // their own units: the constant plan would compare them wrongly.
    let through = match (&staged, ramps.is_empty()) {
        (Some(staged), _) => spans::Through::Stages(staged, ramps.first().map(|r| &r.path)),
        (None, true) => spans::Through::Roles,
        (None, false) => spans::Through::Nothing,
    };
    findings.extend(spans::check(spans, roles, &through, variable_length));
    (findings, staged)
}

/// A config whose plan is fixed by struct-level constants
/// (`#[accum(micro_batch = 2, accumulation = 8, replicas = 2)]`). The derive
/// implements it only when `m`, `A` and `D` (or `world_size`) are all
/// constants, after checking them at compile time.
///
/// ```
/// use accum_core::{AccumConfig, ConstPlan};
///
/// #[derive(AccumConfig)]
/// #[accum(crate = "accum_core", micro_batch = 2, accumulation = 8, replicas = 2)]
/// struct Fixed {}
///
/// const B: u64 = <Fixed as ConstPlan>::PLAN.effective_batch().get();
/// assert_eq!(B, 32);
/// ```
pub trait ConstPlan {
    /// The plan, usable in const context.
    const PLAN: Plan;
}

/// What the derive knows about one field. Built in const context.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldInfo {
    /// The serialized name (`#[serde(rename)]` is honoured).
    pub name: &'static str,
    /// The role the field plays, if any.
    pub role: Option<Role>,
    /// The unit the field is counted in, if declared (a typed count such as
    /// `Updates`, or `#[accum(unit = "update")]`).
    pub unit: Option<UnitKind>,
    /// Whether the field is an `Option` (the role or section may be absent).
    pub optional: bool,
    /// The fields of a nested section (`#[accum(nested)]`).
    pub nested: Option<&'static [FieldInfo]>,
    /// For a struct-level constant (`#[accum(micro_batch = 2)]`): its value.
    /// Such an entry has an empty `name` and is not a field.
    pub constant: Option<u64>,
    /// What a length field is for (`#[accum(warmup)]`, `total`, `every`).
    pub span_use: Option<SpanUse>,
    /// The kind of batch ramp-up the field holds (`#[accum(stages)]`,
    /// `#[accum(ramp)]`).
    pub ramp: Option<RampRole>,
}

impl FieldInfo {
    /// A role field.
    pub const fn role(name: &'static str, role: Role, optional: bool) -> FieldInfo {
        FieldInfo {
            name,
            role: Some(role),
            unit: None,
            optional,
            nested: None,
            constant: None,
            span_use: None,
            ramp: None,
        }
    }

    /// A field counted in `unit`.
    pub const fn unit(name: &'static str, unit: UnitKind, optional: bool) -> FieldInfo {
        FieldInfo {
            name,
            role: None,
            unit: Some(unit),
            optional,
            nested: None,
            constant: None,
            span_use: None,
            ramp: None,
        }
    }

    /// A `Span` field (its unit is in the value) with a use.
    pub const fn span(name: &'static str, span_use: SpanUse, optional: bool) -> FieldInfo {
        FieldInfo {
            name,
            role: None,
            unit: None,
            optional,
            nested: None,
            constant: None,
            span_use: Some(span_use),
            ramp: None,
        }
    }

    /// The same field, marked with what its length is for.
    pub const fn with_span_use(mut self, span_use: SpanUse) -> FieldInfo {
        self.span_use = Some(span_use);
        self
    }

    /// A batch ramp-up field (`#[accum(stages)]` or `#[accum(ramp)]`).
    pub const fn ramp(name: &'static str, ramp: RampRole, optional: bool) -> FieldInfo {
        FieldInfo {
            name,
            role: None,
            unit: None,
            optional,
            nested: None,
            constant: None,
            span_use: None,
            ramp: Some(ramp),
        }
    }

    /// A struct-level constant role.
    pub const fn constant(role: Role, value: u64) -> FieldInfo {
        FieldInfo {
            name: "",
            role: Some(role),
            unit: None,
            optional: false,
            nested: None,
            constant: Some(value),
            span_use: None,
            ramp: None,
        }
    }

    /// A nested section.
    pub const fn nested(
        name: &'static str,
        fields: &'static [FieldInfo],
        optional: bool,
    ) -> FieldInfo {
        FieldInfo {
            name,
            role: None,
            unit: None,
            optional,
            nested: Some(fields),
            constant: None,
            span_use: None,
            ramp: None,
        }
    }
}

/// A role of a config, flattened: see [`AccumConfig::roles`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RoleField {
    /// The role.
    pub role: Role,
    /// Path of the field from the root (`batch.micro_batch`).
    pub path: FieldPath,
    /// The field's declared unit, if any.
    pub unit: Option<UnitKind>,
    /// Whether the field, or a section on its path, is optional.
    pub optional: bool,
}

/// Where a role's value comes from: a field, or a struct's constant ([`Given`]
/// says what is there).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A field, by path.
    Field(FieldPath),
    /// A struct-level constant (`#[accum(micro_batch = 2)]`) of the struct at
    /// this path (the root for the top-level struct).
    Constant(FieldPath),
}

impl Origin {
    /// The path findings are reported at: the field, or the struct that
    /// holds the constant.
    pub fn path(&self) -> &FieldPath {
        match self {
            Origin::Field(path) | Origin::Constant(path) => path,
        }
    }
}

/// What a config holds for a role in one place.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Given {
    /// A count.
    Value(u64),
    /// Nothing: an optional field or section that is absent.
    Absent,
    /// Something that is not a count (a string, a negative or fractional
    /// number, a table), which whoever read it reports. The rules that need
    /// the value are skipped, and it is not reported as missing.
    Unreadable,
}

impl Given {
    /// The count, if there is one.
    pub const fn value(self) -> Option<u64> {
        match self {
            Given::Value(value) => Some(value),
            Given::Absent | Given::Unreadable => None,
        }
    }

    /// What a JSON document holds at a role's place: nothing or `null` is
    /// absent, a non-negative integer is a value, anything else unreadable.
    pub fn from_json(value: Option<&serde_json::Value>) -> Given {
        match value {
            None | Some(serde_json::Value::Null) => Given::Absent,
            Some(value) => value.as_u64().map_or(Given::Unreadable, Given::Value),
        }
    }
}

impl From<Option<u64>> for Given {
    fn from(value: Option<u64>) -> Given {
        value.map_or(Given::Absent, Given::Value)
    }
}

/// The value of one role in one place of a config.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoleValue {
    /// The role.
    pub role: Role,
    /// Where the value is written.
    pub source: Origin,
    /// What is written there.
    pub given: Given,
}

impl RoleValue {
    /// A value read from field `name` of the struct at `prefix`; `None`
    /// when an optional field or section is absent.
    pub fn field(role: Role, prefix: &FieldPath, name: &str, value: Option<u64>) -> RoleValue {
        RoleValue {
            role,
            source: Origin::Field(prefix.child(name)),
            given: value.into(),
        }
    }

    /// A struct-level constant of the struct at `prefix`.
    pub fn constant(role: Role, prefix: &FieldPath, value: u64) -> RoleValue {
        RoleValue {
            role,
            source: Origin::Constant(prefix.clone()),
            given: Given::Value(value),
        }
    }

    /// What a config holds at field `path`, however it was read (a front
    /// end that locates roles through a schema's `x-accum-role`).
    pub fn at(role: Role, path: FieldPath, given: Given) -> RoleValue {
        RoleValue {
            role,
            source: Origin::Field(path),
            given,
        }
    }
}

/// The path of field `name` of the struct at `prefix`; `prefix` itself for
/// a flattened section (empty `name`). Called by generated code.
pub fn join_path(prefix: &FieldPath, name: &str) -> FieldPath {
    prefix.child(name)
}

/// A type that can hold the value of a plan role: unsigned integers,
/// `NonZero*` of them, and `Option` of either (an optional role).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot hold a plan role",
    label = "use an unsigned integer (`u32`, `u64`, …), a `NonZero*` or an `Option` of one",
    note = "plan roles count examples, microbatches or devices and must be whole non-negative numbers"
)]
pub trait RoleType {
    /// The value as `u64`, `None` when absent.
    fn role_value(&self) -> Option<u64>;
}

macro_rules! role_type {
    ($($ty:ty => |$v:ident| $e:expr),* $(,)?) => {
        $(impl RoleType for $ty {
            #[inline]
            fn role_value(&self) -> Option<u64> {
                let $v = *self;
                Some($e)
            }
        })*
    };
}

role_type!(
    u8 => |v| u64::from(v),
    u16 => |v| u64::from(v),
    u32 => |v| u64::from(v),
    u64 => |v| v,
    usize => |v| v as u64,
    NonZeroU8 => |v| u64::from(v.get()),
    NonZeroU16 => |v| u64::from(v.get()),
    NonZeroU32 => |v| u64::from(v.get()),
    NonZeroU64 => |v| v.get(),
    NonZeroUsize => |v| v.get() as u64,
);

impl<T: RoleType> RoleType for Option<T> {
    #[inline]
    fn role_value(&self) -> Option<u64> {
        self.as_ref().and_then(RoleType::role_value)
    }
}

/// A nested section: a config, or an optional one.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not implement `AccumConfig`",
    label = "a nested section must derive `AccumConfig` too",
    note = "add `#[derive(AccumConfig)]` and `#[accum(section)]` to the section's struct, or remove `#[accum(nested)]` from the field"
)]
pub trait NestedConfig {
    /// The section's field table (the inner config's for an `Option`).
    const FIELDS: &'static [FieldInfo];

    /// Pushes the section's role values under `prefix`; an absent optional
    /// section pushes its roles as absent, so that "missing" findings can
    /// name the field to add.
    fn nested_role_values(&self, prefix: &FieldPath, out: &mut Vec<RoleValue>);

    /// The section's variable-length flag (the inner config's for an `Option`).
    const VARIABLE_LENGTH: bool;

    /// Pushes the section's length fields under `prefix`; an absent
    /// optional section has none.
    fn nested_span_values(&self, prefix: &FieldPath, out: &mut Vec<SpanValue>);

    /// Pushes the section's ramp-up fields under `prefix`; an absent
    /// optional section has none.
    fn nested_ramp_values(&self, prefix: &FieldPath, out: &mut Vec<RampValue>);

    /// Pushes the findings of the section's own checks under `prefix`; an
    /// absent optional section has none.
    fn nested_own_findings(&self, prefix: &FieldPath, out: &mut Findings);
}

// Not recommended in diagnostics: "`Optim` does not implement `AccumConfig`"
// is the useful message, not the list of every config in scope.
#[diagnostic::do_not_recommend]
impl<T: AccumConfig> NestedConfig for T {
    const FIELDS: &'static [FieldInfo] = T::FIELDS;
    const VARIABLE_LENGTH: bool = T::VARIABLE_LENGTH;
    fn nested_role_values(&self, prefix: &FieldPath, out: &mut Vec<RoleValue>) {
        self.role_values(prefix, out);
    }
    fn nested_span_values(&self, prefix: &FieldPath, out: &mut Vec<SpanValue>) {
        self.span_values(prefix, out);
    }
    fn nested_ramp_values(&self, prefix: &FieldPath, out: &mut Vec<RampValue>) {
        self.ramp_values(prefix, out);
    }
    fn nested_own_findings(&self, prefix: &FieldPath, out: &mut Findings) {
        self.own_findings(prefix, out);
    }
}

impl<T: AccumConfig> NestedConfig for Option<T> {
    const FIELDS: &'static [FieldInfo] = T::FIELDS;
    const VARIABLE_LENGTH: bool = T::VARIABLE_LENGTH;
    fn nested_span_values(&self, prefix: &FieldPath, out: &mut Vec<SpanValue>) {
        if let Some(inner) = self {
            inner.span_values(prefix, out);
        }
    }
    fn nested_ramp_values(&self, prefix: &FieldPath, out: &mut Vec<RampValue>) {
        if let Some(inner) = self {
            inner.ramp_values(prefix, out);
        }
    }
    fn nested_own_findings(&self, prefix: &FieldPath, out: &mut Findings) {
        if let Some(inner) = self {
            inner.own_findings(prefix, out);
        }
    }
    fn nested_role_values(&self, prefix: &FieldPath, out: &mut Vec<RoleValue>) {
        match self {
            Some(inner) => inner.role_values(prefix, out),
            None => absent_roles(T::FIELDS, prefix, out),
        }
    }
}

fn absent_roles(fields: &[FieldInfo], prefix: &FieldPath, out: &mut Vec<RoleValue>) {
    for field in fields.iter().filter(|f| f.constant.is_none()) {
        if let Some(role) = field.role {
            out.push(RoleValue::field(role, prefix, field.name, None));
        }
        if let Some(nested) = field.nested {
            absent_roles(nested, &prefix.child(field.name), out);
        }
    }
}

fn collect_roles(
    fields: &[FieldInfo],
    prefix: &FieldPath,
    optional: bool,
    out: &mut Vec<RoleField>,
) {
    for field in fields.iter().filter(|f| f.constant.is_none()) {
        let path = prefix.child(field.name);
        if let Some(role) = field.role {
            out.push(RoleField {
                role,
                path: path.clone(),
                unit: field.unit,
                optional: optional || field.optional,
            });
        }
        if let Some(nested) = field.nested {
            collect_roles(nested, &path, optional || field.optional, out);
        }
    }
}

/// Whether `role` is defined by a field or a constant anywhere in `fields`
/// (nested sections included). Used by the derive's const assertions when roles can
/// come from nested sections.
pub const fn has_role(fields: &[FieldInfo], role: Role) -> bool {
    count_role(fields, role) > 0
}

/// How many fields and constants in `fields` (nested sections included)
/// play `role`.
pub const fn count_role(fields: &[FieldInfo], role: Role) -> usize {
    count_fields(fields, Counted::Role(role))
}

/// How many fields in `fields` (nested sections included) hold a ramp-up
/// of kind `ramp`. Used by the derive's const assertions: a config has at
/// most one of each.
pub const fn count_ramp(fields: &[FieldInfo], ramp: RampRole) -> usize {
    count_fields(fields, Counted::Ramp(ramp))
}

/// What [`count_fields`] counts: the fields that play a role, or those that
/// hold a ramp-up of one kind.
#[derive(Clone, Copy)]
enum Counted {
    Role(Role),
    Ramp(RampRole),
}

/// How many fields and constants in `fields` (nested sections included)
/// are `what`. One walk for roles and ramp-ups, written as a loop because
/// it runs in the derive's const assertions.
const fn count_fields(fields: &[FieldInfo], what: Counted) -> usize {
    let mut count = 0;
    let mut i = 0;
    while i < fields.len() {
        // Compared as discriminants: `==` on the enums is not const.
        let hit = match what {
            Counted::Role(role) => matches!(fields[i].role, Some(r) if r as u8 == role as u8),
            Counted::Ramp(ramp) => matches!(fields[i].ramp, Some(r) if r as u8 == ramp as u8),
        };
        if hit {
            count += 1;
        }
        if let Some(nested) = fields[i].nested {
            count += count_fields(nested, what);
        }
        i += 1;
    }
    count
}

/// The first value given for `role`.
fn first(values: &[RoleValue], role: Role) -> Option<u64> {
    values
        .iter()
        .filter(|v| v.role == role)
        .find_map(|v| v.given.value())
}

/// The role values gathered into a [`PlanInput`], as the plan rules read
/// them: the first value given for each role; a layout when `world_size`
/// is given (absent parallel degrees count as 1).
pub(crate) fn input_from_values(values: &[RoleValue]) -> PlanInput {
    let layout = first(values, Role::WorldSize).map(|world| {
        Layout::new(
            world,
            first(values, Role::TensorParallel).unwrap_or(1),
            first(values, Role::PipelineParallel).unwrap_or(1),
            first(values, Role::ContextParallel).unwrap_or(1),
        )
    });
    PlanInput {
        micro_batch: first(values, Role::MicroBatch),
        accumulation: first(values, Role::Accumulation),
        replicas: first(values, Role::Replicas),
        layout,
        seq_len: first(values, Role::SeqLen),
        global_batch: first(values, Role::GlobalBatch),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECTION: &[FieldInfo] = &[
        FieldInfo::role("grad_accum", Role::Accumulation, false),
        FieldInfo::unit("eval_every", UnitKind::Update, false),
    ];
    const ROOT: &[FieldInfo] = &[
        FieldInfo::role("m", Role::MicroBatch, false),
        FieldInfo::nested("optim", SECTION, true),
        FieldInfo::nested("", SECTION, false),
    ];

    #[test]
    fn role_counts_in_const_context() {
        const ACCUMULATIONS: usize = count_role(ROOT, Role::Accumulation);
        assert_eq!(ACCUMULATIONS, 2);
        assert!(has_role(ROOT, Role::MicroBatch));
        assert!(!has_role(ROOT, Role::Replicas));
    }

    #[test]
    fn flattened_sections_share_the_parent_path() {
        let root = FieldPath::root();
        assert_eq!(join_path(&root, "a"), FieldPath::parse("a"));
        assert_eq!(
            join_path(&FieldPath::parse("a"), "b"),
            FieldPath::parse("a.b")
        );
        assert_eq!(join_path(&FieldPath::parse("a"), ""), FieldPath::parse("a"));
        let mut out = Vec::new();
        collect_roles(ROOT, &root, false, &mut out);
        let paths: Vec<_> = out
            .iter()
            .map(|r| (r.path.to_string(), r.optional))
            .collect();
        assert_eq!(
            paths,
            [
                ("m".to_owned(), false),
                ("optim.grad_accum".to_owned(), true),
                ("grad_accum".to_owned(), false)
            ]
        );
    }

    #[test]
    fn json_values_are_given_absent_or_unreadable() {
        let json = serde_json::json!({"a": 2, "b": null, "c": "8", "d": -1, "e": 1.5});
        let given = |key: &str| Given::from_json(json.get(key));
        assert_eq!(given("a"), Given::Value(2));
        assert_eq!(given("b"), Given::Absent);
        assert_eq!(given("missing"), Given::Absent);
        assert_eq!(given("c"), Given::Unreadable);
        assert_eq!(given("d"), Given::Unreadable);
        assert_eq!(given("e"), Given::Unreadable);
    }
}
