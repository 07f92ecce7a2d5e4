//! The runtime side of `#[derive(AccumConfig)]`: the [`AccumConfig`] trait the
//! derive implements, the field metadata it generates, [`Findings`] (every
//! problem of a config at once, with field paths) and [`schema_for`], the JSON
//! Schema 2020-12 with `x-accum-role` / `x-accum-unit` annotations (DESIGN.md
//! "Interfaces").
//!
//! The derive generates only data: a static description of the fields
//! ([`AccumConfig::FIELDS`]) and a function that reads the role values
//! ([`AccumConfig::role_values`]). Everything else — building the plan,
//! validation, role listing — is written once here, so that generated code
//! stays small and the rules live in one place.
//!
//! ```
//! use accum_core::{AccumConfig, FieldInfo, Role, RoleValue};
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
//!     fn role_values(&self, prefix: &str, out: &mut Vec<RoleValue>) {
//!         out.push(RoleValue::field(Role::MicroBatch, prefix, "micro_batch", Some(self.micro_batch.into())));
//!         out.push(RoleValue::field(Role::Accumulation, prefix, "accumulation", Some(self.accumulation.into())));
//!         out.push(RoleValue::field(Role::Replicas, prefix, "replicas", Some(self.replicas.into())));
//!     }
//! }
//!
//! let train = Train { micro_batch: 2, accumulation: 0, replicas: 2 };
//! let findings = train.validate().unwrap_err();
//! assert_eq!(findings.len(), 1);
//! assert_eq!(findings.iter().next().unwrap().path, "accumulation");
//! ```

use std::fmt;
use std::num::{NonZeroU8, NonZeroU16, NonZeroU32, NonZeroU64, NonZeroUsize};

use serde::Serialize;

use crate::plan::{Layout, Plan, PlanError, PlanInput, Role};
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

    /// Pushes the value of every role this config (and its nested sections)
    /// defines, with its dotted field path under `prefix` (`""` at the root).
    /// A role whose field is `None` (or whose section is absent) is pushed
    /// with `value: None`; struct-level constants are pushed as constants.
    fn role_values(&self, prefix: &str, out: &mut Vec<RoleValue>);

    /// Every role of the config with its dotted field path
    /// (`"optim.grad_accum"`) and declared unit, flattened from
    /// [`FIELDS`](AccumConfig::FIELDS). Struct-level constants are not fields
    /// and are not listed.
    fn roles() -> Vec<RoleField>
    where
        Self: Sized,
    {
        let mut out = Vec::new();
        collect_roles(Self::FIELDS, "", false, &mut out);
        out
    }

    /// The role values gathered into a [`PlanInput`]: the first value given
    /// for each role; a layout when `world_size` is given (absent parallel
    /// degrees count as 1).
    fn plan_input(&self) -> PlanInput {
        let mut values = Vec::new();
        self.role_values("", &mut values);
        input_from_values(&values)
    }

    /// The plan (SPEC R3): `B = m·A·D`, solving a missing `A` or `m` from a
    /// declared global batch. Stops at the first problem; use
    /// [`validate`](AccumConfig::validate) to see all of them.
    fn plan(&self) -> Result<Plan, PlanError> {
        self.plan_input().resolve()
    }

    /// Checks the config and reports *every* problem with the path of the
    /// field to change: zeroes, a role given in two places, missing roles,
    /// a global batch that is not `m·A·D`, a world size not divisible by
    /// `tp·pp·cp`.
    fn validate(&self) -> Result<(), Findings> {
        let mut values = Vec::new();
        self.role_values("", &mut values);
        let findings = check_values(&values);
        if findings.is_empty() {
            Ok(())
        } else {
            Err(findings)
        }
    }
}

/// A config whose plan is fixed by struct-level constants
/// (`#[accum(micro_batch = 2, accumulation = 8, replicas = 2)]`). The derive
/// implements it only when `m`, `A` and `D` (or `world_size`) are all
/// constants, after checking them at compile time.
///
/// ```
/// # use accum_core::{ConstPlan, Plan};
/// struct Fixed;
/// impl ConstPlan for Fixed {
///     const PLAN: Plan = Plan::from_parts(2, 8, 2, None);
/// }
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
        }
    }
}

/// A role of a config, flattened: see [`AccumConfig::roles`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RoleField {
    /// The role.
    pub role: Role,
    /// Dotted path of the field from the root (`"batch.micro_batch"`).
    pub path: String,
    /// The field's declared unit, if any.
    pub unit: Option<UnitKind>,
    /// Whether the field, or a section on its path, is optional.
    pub optional: bool,
}

/// Where a role's value comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A field, by dotted path.
    Field(String),
    /// A struct-level constant (`#[accum(micro_batch = 2)]`) of the struct at
    /// this dotted path (`""` for the root).
    Constant(String),
}

impl Source {
    /// The path findings are reported at: the field, or the struct that
    /// holds the constant (`"<root>"` for the root).
    pub fn path(&self) -> &str {
        match self {
            Source::Field(path) => path,
            Source::Constant(path) if path.is_empty() => "<root>",
            Source::Constant(path) => path,
        }
    }
}

/// The value of one role in one place of a config.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoleValue {
    /// The role.
    pub role: Role,
    /// Where the value is written.
    pub source: Source,
    /// The value, `None` when an optional field or section is absent.
    pub value: Option<u64>,
}

impl RoleValue {
    /// A value read from field `name` of the struct at `prefix`.
    pub fn field(role: Role, prefix: &str, name: &str, value: Option<u64>) -> RoleValue {
        RoleValue {
            role,
            source: Source::Field(join_path(prefix, name)),
            value,
        }
    }

    /// A struct-level constant of the struct at `prefix`.
    pub fn constant(role: Role, prefix: &str, value: u64) -> RoleValue {
        RoleValue {
            role,
            source: Source::Constant(prefix.to_owned()),
            value: Some(value),
        }
    }
}

/// `prefix.name`, or `name` at the root, or `prefix` for a flattened
/// section (empty `name`).
pub fn join_path(prefix: &str, name: &str) -> String {
    if name.is_empty() {
        // A `#[serde(flatten)]` section: its fields sit in the parent.
        prefix.to_owned()
    } else if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}.{name}")
    }
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
    fn nested_role_values(&self, prefix: &str, out: &mut Vec<RoleValue>);
}

// Not recommended in diagnostics: "`Optim` does not implement `AccumConfig`"
// is the useful message, not the list of every config in scope.
#[diagnostic::do_not_recommend]
impl<T: AccumConfig> NestedConfig for T {
    const FIELDS: &'static [FieldInfo] = T::FIELDS;
    fn nested_role_values(&self, prefix: &str, out: &mut Vec<RoleValue>) {
        self.role_values(prefix, out);
    }
}

impl<T: AccumConfig> NestedConfig for Option<T> {
    const FIELDS: &'static [FieldInfo] = T::FIELDS;
    fn nested_role_values(&self, prefix: &str, out: &mut Vec<RoleValue>) {
        match self {
            Some(inner) => inner.role_values(prefix, out),
            None => absent_roles(T::FIELDS, prefix, out),
        }
    }
}

fn absent_roles(fields: &[FieldInfo], prefix: &str, out: &mut Vec<RoleValue>) {
    for field in fields.iter().filter(|f| f.constant.is_none()) {
        if let Some(role) = field.role {
            out.push(RoleValue::field(role, prefix, field.name, None));
        }
        if let Some(nested) = field.nested {
            absent_roles(nested, &join_path(prefix, field.name), out);
        }
    }
}

fn collect_roles(fields: &[FieldInfo], prefix: &str, optional: bool, out: &mut Vec<RoleField>) {
    for field in fields.iter().filter(|f| f.constant.is_none()) {
        let path = join_path(prefix, field.name);
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
    let mut count = 0;
    let mut i = 0;
    while i < fields.len() {
        if let Some(r) = fields[i].role
            && r as u8 == role as u8
        {
            count += 1;
        }
        if let Some(nested) = fields[i].nested {
            count += count_role(nested, role);
        }
        i += 1;
    }
    count
}

fn first(values: &[RoleValue], role: Role) -> Option<u64> {
    values
        .iter()
        .filter(|v| v.role == role)
        .find_map(|v| v.value)
}

fn input_from_values(values: &[RoleValue]) -> PlanInput {
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

/// The path of the first place `role` is given, or the first place it could
/// be given (an absent optional field), or `None` when the config has no
/// place for it.
fn path_of(values: &[RoleValue], role: Role) -> Option<&str> {
    let mut places = values.iter().filter(|v| v.role == role);
    let given = places.clone().find(|v| v.value.is_some());
    given.or_else(|| places.next()).map(|v| v.source.path())
}

fn check_values(values: &[RoleValue]) -> Findings {
    let mut findings = Findings::default();

    // Zeroes, every one of them (R3: every factor is at least 1).
    for v in values {
        if v.value == Some(0) {
            findings.push(Finding::new(
                v.source.path(),
                format!(
                    "{} is 0; every factor of the plan must be at least 1",
                    v.role
                ),
                format!("set `{}` to 1 or more", v.source.path()),
            ));
        }
    }

    // A role given in two places: the plan would silently take one of them.
    for role in Role::ALL {
        let given: Vec<&RoleValue> = values
            .iter()
            .filter(|v| v.role == role && v.value.is_some())
            .collect();
        if let [first, rest @ ..] = given.as_slice() {
            for second in rest {
                findings.push(Finding::new(
                    second.source.path(),
                    format!(
                        "{role} is given twice, at `{}` and at `{}`",
                        first.source.path(),
                        second.source.path()
                    ),
                    format!("remove one of them, e.g. `{}`", second.source.path()),
                ));
            }
        }
    }

    // Parallel degrees without a world size have nothing to divide.
    if first(values, Role::WorldSize).is_none() {
        for role in [
            Role::TensorParallel,
            Role::PipelineParallel,
            Role::ContextParallel,
        ] {
            if let Some(v) = values
                .iter()
                .find(|v| v.role == role && v.value.is_some_and(|n| n > 1))
            {
                findings.push(Finding::new(
                    v.source.path(),
                    format!(
                        "{role} is given without world_size, so the replicas cannot be computed"
                    ),
                    "give world_size as well (replicas = world_size / (tp·pp·cp))".to_owned(),
                ));
            }
        }
    }

    if !findings.is_empty() {
        // The plan arithmetic would only repeat these.
        return findings;
    }

    let input = input_from_values(values);
    if input.replicas.is_none() && input.layout.is_none() {
        let replicas = path_of(values, Role::Replicas);
        let world = path_of(values, Role::WorldSize);
        let (path, fix) = match (replicas, world) {
            (Some(r), Some(w)) => (
                r.to_owned(),
                format!("set `{r}` (data-parallel copies) or `{w}` (all devices)"),
            ),
            (Some(r), None) => (r.to_owned(), format!("set `{r}` (data-parallel copies)")),
            (None, Some(w)) => (w.to_owned(), format!("set `{w}` (all devices)")),
            (None, None) => (
                "<root>".to_owned(),
                "add a field with `#[accum(replicas)]` or `#[accum(world_size)]`".to_owned(),
            ),
        };
        findings.push(Finding::new(
            path,
            "neither replicas nor world_size is given, so the effective batch B = m·A·D is unknown"
                .to_owned(),
            fix,
        ));
    }
    for (role, needs) in [
        (
            Role::MicroBatch,
            "or give global_batch and accumulation so that it can be solved",
        ),
        (
            Role::Accumulation,
            "or give global_batch so that it can be solved as global_batch / (micro_batch × replicas)",
        ),
    ] {
        let solvable = input.global_batch.is_some()
            && match role {
                Role::MicroBatch => input.accumulation.is_some(),
                _ => input.micro_batch.is_some(),
            };
        if first(values, role).is_none() && !solvable {
            let path = path_of(values, role).unwrap_or("<root>").to_owned();
            findings.push(Finding::new(
                path.clone(),
                format!("{role} is missing"),
                format!("set `{path}`, {needs}"),
            ));
        }
    }
    if !findings.is_empty() {
        return findings;
    }

    if let Err(err) = input.resolve() {
        findings.push(finding_for(values, &err));
    }
    findings
}

/// Maps a plan error to the field a user has to change.
fn finding_for(values: &[RoleValue], err: &PlanError) -> Finding {
    let role = match *err {
        PlanError::Zero { role } | PlanError::Missing { role } => role,
        PlanError::LayoutNotDivisible { .. } => Role::WorldSize,
        PlanError::GlobalBatchMismatch { .. } | PlanError::GlobalBatchNotDivisible { .. } => {
            Role::GlobalBatch
        }
        PlanError::ReplicasDisagree { .. } => Role::Replicas,
        PlanError::NeedsSeqLen { .. } => Role::SeqLen,
        _ => Role::MicroBatch,
    };
    let path = path_of(values, role).unwrap_or("<root>").to_owned();
    let text = err.to_string();
    // Plan errors state the problem, then the way out after "; " or ": use".
    let (message, fix) = match text.split_once("; ") {
        Some((message, fix)) => (message.to_owned(), fix.to_owned()),
        None => match text.split_once(": use ") {
            Some((message, fix)) => (message.to_owned(), format!("use {fix}")),
            None => (text.clone(), format!("change `{path}`")),
        },
    };
    Finding::new(path, message, fix)
}

/// One problem of a config: where it is, what it is, and how to fix it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Dotted path of the field to change (`"batch.accumulation"`), or
    /// `"<root>"` for the config as a whole.
    pub path: String,
    /// What is wrong, with the numbers.
    pub message: String,
    /// What to do about it.
    pub fix: String,
}

impl Finding {
    /// A finding at `path`.
    pub fn new(path: impl Into<String>, message: String, fix: String) -> Finding {
        Finding {
            path: path.into(),
            message,
            fix,
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}; {}", self.path, self.message, self.fix)
    }
}

/// Every problem of a config, in the order they were found.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Findings {
    findings: Vec<Finding>,
}

impl Findings {
    /// Adds a finding.
    pub fn push(&mut self, finding: Finding) {
        self.findings.push(finding);
    }

    /// Whether there is nothing to report.
    pub fn is_empty(&self) -> bool {
        self.findings.is_empty()
    }

    /// How many findings there are.
    pub fn len(&self) -> usize {
        self.findings.len()
    }

    /// The findings, in order.
    pub fn iter(&self) -> std::slice::Iter<'_, Finding> {
        self.findings.iter()
    }

    /// The paths of all findings, in order (handy in tests and summaries).
    pub fn paths(&self) -> Vec<&str> {
        self.findings.iter().map(|f| f.path.as_str()).collect()
    }
}

impl<'a> IntoIterator for &'a Findings {
    type Item = &'a Finding;
    type IntoIter = std::slice::Iter<'a, Finding>;
    fn into_iter(self) -> Self::IntoIter {
        self.findings.iter()
    }
}

impl fmt::Display for Findings {
    /// One line per finding: `path: problem; fix`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.findings.len();
        writeln!(
            f,
            "{n} problem{} in the config:",
            if n == 1 { "" } else { "s" }
        )?;
        for finding in &self.findings {
            writeln!(f, "  - {finding}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Findings {}

/// The JSON Schema (2020-12) of a derived config, with `x-accum-role` on
/// every role field and `x-accum-unit` on every field with a declared unit,
/// nested sections included (DESIGN.md "Interfaces"). Struct-level constant
/// roles are listed as `"x-accum-constants": {"micro_batch": 2, …}` on the
/// object of the struct that declares them. The schema alone is
/// enough to rebuild the plan from a config file.
pub fn schema_for<T: AccumConfig + schemars::JsonSchema>() -> schemars::Schema {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>();
    let mut root = schema.to_value();
    // Nested sections live in `$defs`; take them out so that they can be
    // edited while the root's properties are walked.
    let mut defs = match root.as_object_mut().and_then(|o| o.remove("$defs")) {
        Some(serde_json::Value::Object(defs)) => defs,
        _ => serde_json::Map::new(),
    };
    annotate_object(&mut root, T::FIELDS, &mut defs);
    if let Some(object) = root.as_object_mut()
        && !defs.is_empty()
    {
        object.insert("$defs".to_owned(), serde_json::Value::Object(defs));
    }
    // A root schema is always an object; the default keeps the type total.
    schemars::Schema::try_from(root).unwrap_or_default()
}

fn annotate_object(
    schema: &mut serde_json::Value,
    fields: &[FieldInfo],
    defs: &mut serde_json::Map<String, serde_json::Value>,
) {
    // Struct-level constants are not properties; they are listed on the
    // object so that the schema alone still gives the whole plan.
    let constants: serde_json::Map<String, serde_json::Value> = fields
        .iter()
        .filter_map(|f| Some((f.role?.key().to_owned(), f.constant?.into())))
        .collect();
    if !constants.is_empty()
        && let Some(object) = schema.as_object_mut()
    {
        object.insert(
            "x-accum-constants".to_owned(),
            serde_json::Value::Object(constants),
        );
    }
    // `#[serde(flatten)]` sections put their properties in this object.
    for field in fields.iter().filter(|f| f.name.is_empty()) {
        if let Some(nested) = field.nested {
            annotate_object(schema, nested, defs);
        }
    }
    let Some(properties) = schema
        .get_mut("properties")
        .and_then(serde_json::Value::as_object_mut)
    else {
        return;
    };
    for field in fields {
        let Some(property) = properties.get_mut(field.name) else {
            continue;
        };
        let Some(object) = property.as_object_mut() else {
            continue;
        };
        if let Some(role) = field.role {
            object.insert("x-accum-role".to_owned(), role.key().into());
        }
        if let Some(unit) = field.unit
            && !object.contains_key("$ref")
        {
            object.insert("x-accum-unit".to_owned(), unit.key().into());
        }
        if let Some(nested) = field.nested {
            match def_name(property) {
                Some(name) => {
                    if let Some(mut def) = defs.remove(&name) {
                        annotate_object(&mut def, nested, defs);
                        defs.insert(name, def);
                    }
                }
                None => annotate_object(property, nested, defs),
            }
        }
    }
}

/// The `$defs` entry a property refers to, directly or through the
/// `anyOf: [{$ref}, {type: null}]` of an `Option`.
fn def_name(property: &serde_json::Value) -> Option<String> {
    let reference = property.get("$ref").and_then(serde_json::Value::as_str);
    let reference = reference.or_else(|| {
        property
            .get("anyOf")
            .and_then(serde_json::Value::as_array)?
            .iter()
            .find_map(|v| v.get("$ref").and_then(serde_json::Value::as_str))
    })?;
    reference.strip_prefix("#/$defs/").map(str::to_owned)
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
        assert_eq!(join_path("", "a"), "a");
        assert_eq!(join_path("a", "b"), "a.b");
        assert_eq!(join_path("a", ""), "a");
        let mut out = Vec::new();
        collect_roles(ROOT, "", false, &mut out);
        let paths: Vec<_> = out.iter().map(|r| (r.path.as_str(), r.optional)).collect();
        assert_eq!(
            paths,
            [
                ("m", false),
                ("optim.grad_accum", true),
                ("grad_accum", false)
            ]
        );
    }

    fn value(role: Role, path: &str, value: Option<u64>) -> RoleValue {
        RoleValue::field(role, "", path, value)
    }

    #[test]
    fn a_role_in_two_places_is_reported_at_the_second() {
        let values = [
            value(Role::MicroBatch, "m", Some(2)),
            value(Role::Accumulation, "a", Some(8)),
            value(Role::Replicas, "d", Some(2)),
            value(Role::Replicas, "cluster.d", Some(4)),
        ];
        let findings = check_values(&values);
        assert_eq!(findings.paths(), ["cluster.d"]);
        assert_eq!(
            findings.iter().next().map(|f| f.message.as_str()),
            Some("replicas is given twice, at `d` and at `cluster.d`")
        );
    }

    #[test]
    fn parallel_degrees_need_a_world_size() {
        let values = [
            value(Role::MicroBatch, "m", Some(2)),
            value(Role::Accumulation, "a", Some(8)),
            value(Role::Replicas, "d", Some(2)),
            value(Role::TensorParallel, "tp", Some(2)),
        ];
        assert_eq!(check_values(&values).paths(), ["tp"]);
    }

    #[test]
    fn constants_are_reported_at_their_struct() {
        let values = [
            RoleValue::constant(Role::MicroBatch, "", 2),
            RoleValue::constant(Role::Accumulation, "", 8),
            RoleValue::constant(Role::Replicas, "", 2),
            RoleValue::constant(Role::GlobalBatch, "", 30),
        ];
        let findings = check_values(&values);
        assert_eq!(findings.paths(), ["<root>"]);
        assert!(
            findings
                .to_string()
                .starts_with("1 problem in the config:\n  - <root>: global_batch 30")
        );
    }

    #[test]
    fn a_missing_accumulation_is_solved_or_reported() {
        let mut values = vec![
            value(Role::MicroBatch, "m", Some(2)),
            value(Role::Accumulation, "a", None),
            value(Role::Replicas, "d", Some(2)),
        ];
        let findings = check_values(&values);
        assert_eq!(findings.paths(), ["a"]);
        assert_eq!(
            findings.iter().next().map(|f| f.fix.as_str()),
            Some(
                "set `a`, or give global_batch so that it can be solved as global_batch / (micro_batch × replicas)"
            )
        );
        values.push(value(Role::GlobalBatch, "b", Some(32)));
        assert!(check_values(&values).is_empty());
        assert_eq!(
            input_from_values(&values)
                .resolve()
                .map(|p| p.accumulation()),
            Ok(8)
        );
    }
}
