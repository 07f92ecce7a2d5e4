//! Batch ramp-up fields of a derived config: `#[accum(stages)]` on a list of
//! [`StageSpec`]s and `#[accum(ramp)]` on a [`LinearRamp`]. The plan's own
//! roles give the full batch; these fields give the smaller batches the run
//! trains at before it (see `docs/rampup.md`).
//!
//! A config has at most one field of each kind (checked at compile time,
//! nested sections included); a run has one ramp-up, so when both are given
//! at run time, [`staged_plan_of`] reports it (`accum::stages::order`).
//!
//! ```
//! use accum_core::{RampValue, staged_plan_of};
//! use accum_core::plan::{LinearRamp, Plan};
//! use accum_core::FieldPath;
//!
//! let plan = Plan::new(4, 16, 2)?; // the full batch: 128
//! let ramp = LinearRamp { start: 32, increment: 32, over: "9600 examples".parse()? };
//! let values = [RampValue::linear(&FieldPath::parse("batch"), "ramp", ramp)];
//! let staged = staged_plan_of(&plan, &values).expect("a valid ramp");
//! assert_eq!(staged.first_plan().effective_batch().get(), 32);
//! assert_eq!(staged.final_plan().effective_batch().get(), 128);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;

use serde::Serialize;

use crate::code::Code;
use crate::finding::{FieldPath, Finding, Findings};
use crate::plan::{Fix, LinearRamp, Plan, StageSpec, StagedPlan};

/// The kind of ramp-up a field holds, as written in `#[accum(stages)]` or
/// `#[accum(ramp)]` and in the schema's `x-accum-role`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RampRole {
    /// A list of stages, each with its batch and where it ends.
    Stages,
    /// A linear ramp: start, increment and its length.
    Ramp,
}

impl RampRole {
    /// Both kinds.
    pub const ALL: [RampRole; 2] = [RampRole::Stages, RampRole::Ramp];

    /// The attribute key and `x-accum-role`: `stages` or `ramp`.
    pub const fn key(self) -> &'static str {
        match self {
            RampRole::Stages => "stages",
            RampRole::Ramp => "ramp",
        }
    }

    /// Parses an attribute key.
    pub fn from_key(key: &str) -> Option<RampRole> {
        RampRole::ALL.into_iter().find(|r| r.key() == key)
    }
}

impl fmt::Display for RampRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// What a ramp-up field holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RampUp {
    /// Stages before the full batch, each with its `until`.
    Stages(Vec<StageSpec>),
    /// A linear ramp to the full batch.
    Linear(LinearRamp),
    /// Something that is not a ramp-up, which whoever read it reports (a
    /// front end reading a file through a schema). The ramp-up is then
    /// unknown: lengths are compared only in their own units.
    Unreadable(RampRole),
}

impl RampUp {
    /// The kind of field it comes from.
    pub fn role(&self) -> RampRole {
        match self {
            RampUp::Stages(_) => RampRole::Stages,
            RampUp::Linear(_) => RampRole::Ramp,
            RampUp::Unreadable(role) => *role,
        }
    }
}

/// One ramp-up field of a config that holds a value (an absent optional
/// field is not listed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RampValue {
    /// Where it is (`batch.stages`).
    pub path: FieldPath,
    /// What it holds.
    pub ramp: RampUp,
}

impl RampValue {
    /// Stages in field `name` of the struct at `prefix`. Called by generated code.
    pub fn stages(prefix: &FieldPath, name: &str, specs: &[StageSpec]) -> RampValue {
        RampValue::at(prefix.child(name), RampUp::Stages(specs.to_vec()))
    }

    /// A linear ramp in field `name` of the struct at `prefix`. Called by
    /// generated code.
    pub fn linear(prefix: &FieldPath, name: &str, ramp: LinearRamp) -> RampValue {
        RampValue::at(prefix.child(name), RampUp::Linear(ramp))
    }

    /// A ramp-up at `path`, however it was read.
    pub fn at(path: FieldPath, ramp: RampUp) -> RampValue {
        RampValue { path, ramp }
    }
}

/// A field type that holds stages: `Vec<StageSpec>` or `Option<Vec<StageSpec>>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot hold the stages of a batch ramp-up",
    label = "`#[accum(stages)]` marks a list of stages",
    note = "use `Vec<StageSpec>` or `Option<Vec<StageSpec>>` (`accum::plan::StageSpec`)"
)]
pub trait StagesField {
    /// The stages, `None` when absent.
    fn stages_value(&self) -> Option<&[StageSpec]>;
}

impl StagesField for Vec<StageSpec> {
    #[inline]
    fn stages_value(&self) -> Option<&[StageSpec]> {
        Some(self)
    }
}

impl StagesField for Option<Vec<StageSpec>> {
    #[inline]
    fn stages_value(&self) -> Option<&[StageSpec]> {
        self.as_deref()
    }
}

/// A field type that holds a linear ramp: `LinearRamp` or `Option<LinearRamp>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot hold a linear batch ramp",
    label = "`#[accum(ramp)]` marks a linear ramp",
    note = "use `LinearRamp` or `Option<LinearRamp>` (`accum::plan::LinearRamp`)"
)]
pub trait RampField {
    /// The ramp, `None` when absent.
    fn ramp_value(&self) -> Option<LinearRamp>;
}

impl RampField for LinearRamp {
    #[inline]
    fn ramp_value(&self) -> Option<LinearRamp> {
        Some(*self)
    }
}

impl RampField for Option<LinearRamp> {
    #[inline]
    fn ramp_value(&self) -> Option<LinearRamp> {
        *self
    }
}

/// The staged plan of a config whose full batch is `plan` and whose
/// ramp-up fields hold `ramps`: one stage without a ramp-up, the stages of
/// a `stages` field ([`StagedPlan::ramp_to`]) or of a `ramp` field
/// ([`StagedPlan::linear`]). A run has one ramp-up: with both (or two
/// fields of one kind, which a schema could mark), the later one is
/// reported (`accum::stages::order`). The problems of the stages are
/// findings at their fields. An [unreadable](RampUp::Unreadable) value is
/// reported by its reader: it gives no finding here, and no plan.
pub fn staged_plan_of(plan: &Plan, ramps: &[RampValue]) -> Result<StagedPlan, Findings> {
    let mut findings = Findings::default();
    let Some(first) = ramps.first() else {
        return Ok(StagedPlan::constant(*plan));
    };
    if let Some(second) = ramps.get(1) {
        // Report at the linear ramp when there is one (the list of stages
        // is the more general form), else at the second field.
        let (kept, extra) = match (&first.ramp, &second.ramp) {
            (RampUp::Linear(_), RampUp::Stages(_)) => (second, first),
            _ => (first, second),
        };
        findings.push(
            Finding::new(
                Code::StageOrder,
                extra.path.clone(),
                format!(
                    "both `{}` and `{}` are given, and a run has one batch ramp-up",
                    kept.path, extra.path
                ),
                "give one of the two".to_owned(),
            )
            .with_fix(Fix::text(
                "describe the ramp-up once: as stages, or as a linear ramp",
            ))
            .with_related(kept.path.clone(), None, "also a ramp-up".to_owned()),
        );
        return Err(findings);
    }
    let resolved = match &first.ramp {
        RampUp::Stages(specs) => StagedPlan::ramp_to(plan, specs),
        RampUp::Linear(ramp) => StagedPlan::linear(plan, ramp),
        RampUp::Unreadable(_) => return Err(findings),
    };
    resolved.map_err(|err| {
        findings.push(Finding::from_stage_error(&err, &first.path));
        findings
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Updates;

    fn batch() -> FieldPath {
        FieldPath::parse("batch")
    }

    #[test]
    fn no_ramp_is_one_stage() {
        let plan = Plan::new(4, 16, 2).expect("valid");
        assert_eq!(staged_plan_of(&plan, &[]), Ok(StagedPlan::constant(plan)));
        // An empty list of stages is no ramp-up either.
        let empty = [RampValue::stages(&batch(), "stages", &[])];
        assert_eq!(
            staged_plan_of(&plan, &empty),
            Ok(StagedPlan::constant(plan))
        );
    }

    #[test]
    fn stages_end_at_the_full_batch() {
        let plan = Plan::new(4, 16, 2).expect("valid");
        let specs = [StageSpec::global_batch(32).until("10 updates".parse().expect("span"))];
        let staged = staged_plan_of(&plan, &[RampValue::stages(&batch(), "stages", &specs)])
            .expect("valid stages");
        assert_eq!(staged.stages().len(), 2);
        assert_eq!(staged.stages()[1].start(), Updates::new(10));
        assert_eq!(staged.final_plan(), &plan);
    }

    #[test]
    fn two_ramp_ups_are_reported_at_the_linear_one() {
        let plan = Plan::new(4, 16, 2).expect("valid");
        let ramp = LinearRamp {
            start: 32,
            increment: 32,
            over: "1k examples".parse().expect("span"),
        };
        let values = [
            RampValue::linear(&batch(), "ramp", ramp),
            RampValue::stages(&batch(), "stages", &[]),
        ];
        let findings = staged_plan_of(&plan, &values).expect_err("two ramp-ups");
        assert_eq!(findings.codes(), [Code::StageOrder]);
        assert_eq!(findings.paths(), ["batch.ramp"]);
        let finding = findings.iter().next().expect("one");
        assert_eq!(
            finding.message,
            "both `batch.stages` and `batch.ramp` are given, and a run has one batch ramp-up"
        );
        assert_eq!(finding.related[0].path, FieldPath::parse("batch.stages"));
    }

    #[test]
    fn stage_errors_are_findings_at_the_field() {
        let plan = Plan::new(4, 16, 2).expect("valid");
        let ramp = LinearRamp {
            start: 36,
            increment: 4,
            over: "1k examples".parse().expect("span"),
        };
        let findings = staged_plan_of(&plan, &[RampValue::linear(&batch(), "ramp", ramp)])
            .expect_err("36 is not a multiple of 8");
        assert_eq!(findings.codes(), [Code::Ramp]);
        assert_eq!(findings.paths(), ["batch.ramp.start"]);
        let unreadable = [RampValue::at(
            FieldPath::parse("batch.ramp"),
            RampUp::Unreadable(RampRole::Ramp),
        )];
        assert_eq!(staged_plan_of(&plan, &unreadable), Err(Findings::default()));
    }

    #[test]
    fn roles_have_keys() {
        for role in RampRole::ALL {
            assert_eq!(RampRole::from_key(role.key()), Some(role));
        }
        assert_eq!(RampRole::Stages.to_string(), "stages");
        assert_eq!(RampRole::from_key("micro_batch"), None);
    }
}
