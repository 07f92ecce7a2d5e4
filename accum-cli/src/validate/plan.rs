//! The plan rules, from the core, for a configuration read through a
//! schema: each role's value is found at its `x-accum-role` place, the batch
//! ramp-up at its `stages` or `ramp` place, and the lengths with a use at
//! their `x-accum-span` place, and all of them are handed to
//! `accum_core::check_values`, the one set of rules; its findings come back
//! as data and are placed in the file here.

use accum_core::Code;
use accum_core::plan::{Edit, Fix, Layout, LinearRamp, PlanInput, Role, StageSpec};
use accum_core::{
    FieldPath, Finding, Given, RampRole, RampUp, RampValue, RoleValue, Span, SpanValue,
    check_values,
};
use serde_json::Value;

use super::SchemaMap;
use crate::diagnostic::{Diagnostic, Location};
use crate::fix::{Suggestion, set_scalar, setting};
use crate::source::Document;

/// A core finding at its place in `doc`: its code, message, label, fix,
/// and the other fields of its equation labelled.
pub(crate) fn finding_diagnostic(doc: &Document, finding: &Finding) -> Diagnostic {
    let location = Location {
        range: Some(doc.range_of(finding.path.segments())),
        related: finding
            .related
            .iter()
            .map(|related| doc.range_of(related.path.segments()))
            .collect(),
    };
    let mut diagnostic = Diagnostic::new(finding.clone(), location);
    diagnostic.fixes = plan_fixes(doc, finding);
    diagnostic
}

/// The plan values of a finding's fix as edits of the file: one suggestion
/// per alternative, each for a person to choose (another plan value changes
/// the training), when every value it sets is written in the file at a
/// field of the finding.
fn plan_fixes(doc: &Document, finding: &Finding) -> Vec<Suggestion> {
    let Some(fix) = &finding.fix else {
        return Vec::new();
    };
    let path_of = |role: Role| {
        std::iter::once((finding.role, &finding.path))
            .chain(finding.related.iter().map(|r| (r.role, &r.path)))
            .find(|(r, _)| *r == Some(role))
            .map(|(_, path)| path)
    };
    fix.options
        .iter()
        .filter_map(|option| {
            let settings = option
                .iter()
                .map(|edit| {
                    let path = path_of(edit.role)?;
                    let text = set_scalar(doc, path.segments(), &edit.value.to_string())?;
                    Some((format!("{path} = {}", edit.value), text))
                })
                .collect::<Option<Vec<_>>>()?;
            setting(settings)
        })
        .collect()
}

/// The value at `path` of the instance, if there is one.
pub(super) fn value_at<'a>(instance: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter()
        .try_fold(instance, |node, segment| node.get(segment))
}

/// The plan's values of a document read through a schema: each role at
/// its `x-accum-role` place, the batch ramp-up at its `stages` or `ramp`
/// place, and the lengths with a use at their `x-accum-span` place. A value
/// at or under a place that already has a structural finding (`broken`) is
/// unreadable: its reader reported it.
pub(crate) fn values(
    instance: &Value,
    map: &SchemaMap,
    broken: &[Vec<String>],
) -> (Vec<RoleValue>, Vec<SpanValue>, Vec<RampValue>) {
    let reported = |path: &[String]| {
        broken
            .iter()
            .any(|b| path.starts_with(b) || (b.starts_with(path) && !b.is_empty()))
    };
    let roles: Vec<RoleValue> = map
        .roles
        .iter()
        .map(|(role, path)| {
            let given = if reported(path) {
                Given::Unreadable
            } else {
                Given::from_json(value_at(instance, path))
            };
            RoleValue::at(*role, FieldPath::new(path.clone()), given)
        })
        .collect();
    let ramps: Vec<RampValue> = map
        .ramps
        .iter()
        .filter_map(|(role, path)| {
            let value = value_at(instance, path).filter(|v| !v.is_null())?;
            let ramp = if reported(path) {
                RampUp::Unreadable(*role)
            } else {
                ramp_from_json(*role, value)
            };
            Some(RampValue::at(FieldPath::new(path.clone()), ramp))
        })
        .collect();
    // A length with a structural finding is left out: it is not compared.
    let spans: Vec<SpanValue> = map
        .uses
        .iter()
        .filter(|(_, path, _)| !reported(path))
        .filter_map(|(span_use, path, unit)| {
            let span = span_from_json(value_at(instance, path)?, *unit)?;
            Some(SpanValue::at(
                FieldPath::new(path.clone()),
                Some(*span_use),
                span,
            ))
        })
        .collect();
    (roles, spans, ramps)
}

/// Every length of a document read through a schema, as a derived
/// config's `span_values` gives them: the spans (`x-accum-unit = "span"`)
/// and the typed counts, each with its use when the schema gives one
/// (`x-accum-span`), in the order of the schema's paths.
pub(crate) fn all_spans(instance: &Value, map: &SchemaMap) -> Vec<SpanValue> {
    let use_of = |path: &[String]| {
        map.uses
            .iter()
            .find(|(_, p, _)| p.as_slice() == path)
            .map(|(span_use, _, unit)| (*span_use, *unit))
    };
    map.spans
        .iter()
        .map(|path| (path, None))
        .chain(map.counts.iter().map(|(path, unit)| (path, Some(*unit))))
        .filter_map(|(path, unit)| {
            let (span_use, declared) = match use_of(path) {
                Some((span_use, declared)) => (Some(span_use), declared.or(unit)),
                None => (None, unit),
            };
            let span = span_from_json(value_at(instance, path)?, declared)?;
            Some(SpanValue::at(FieldPath::new(path.clone()), span_use, span))
        })
        .collect()
}

/// The plan findings of a document whose roles the schema locates
/// ([`values`]); a value with a structural finding (`broken`) is skipped by
/// the rules that need it, so that a file with several mistakes gets each
/// reported once.
pub(super) fn plan_findings(
    doc: &Document,
    instance: &Value,
    map: &SchemaMap,
    broken: &[Vec<String>],
) -> Vec<Diagnostic> {
    let (roles, spans, ramps) = values(instance, map, broken);
    check_values(&roles, &spans, &ramps, map.variable_length)
        .iter()
        .map(|finding| {
            let diagnostic = finding_diagnostic(doc, finding);
            match solved_alternatives(finding, instance, map) {
                Some(help) if finding.code == Code::GlobalBatch => diagnostic.help(help),
                _ => diagnostic,
            }
        })
        .collect()
}

/// A ramp-up field's value as the core reads it; what does not read as one
/// is unreadable (the schema reports why).
fn ramp_from_json(role: RampRole, value: &Value) -> RampUp {
    let read = match role {
        RampRole::Stages => serde_json::from_value::<Vec<StageSpec>>(value.clone())
            .ok()
            .map(RampUp::Stages),
        RampRole::Ramp => serde_json::from_value::<LinearRamp>(value.clone())
            .ok()
            .map(RampUp::Linear),
    };
    read.unwrap_or(RampUp::Unreadable(role))
}

/// A length with its unit: `"500 updates"`, `{ updates = 500 }`, or a bare
/// number in a typed count's `unit`.
fn span_from_json(value: &Value, unit: Option<accum_core::UnitKind>) -> Option<Span> {
    match (value, unit) {
        (Value::Number(number), Some(unit)) => Some(Span::new(number.as_u64()?, unit)),
        (Value::Null, _) => None,
        _ => serde_json::from_value(value.clone()).ok(),
    }
}

/// Fills in an accumulation (or micro-batch) that the file leaves out to be
/// solved from its global batch (accum::plan::missing), when the core's
/// plan resolves it exactly: `micro_batch = 8, replicas = 2,
/// global_batch = 96` reads as accumulation 6. A global batch that does not
/// divide is left to the plan rules, which name the nearest values
/// (accum::plan::global-batch); under a batch ramp-up nothing is solved.
pub(super) fn solve_left_out(instance: &mut Value, map: &SchemaMap) {
    if map
        .ramps
        .iter()
        .any(|(_, path)| value_at(instance, path).is_some_and(|v| !v.is_null()))
    {
        return;
    }
    let input = plan_input(instance, map);
    if input.global_batch.is_none() {
        return;
    }
    let Ok(plan) = input.resolve() else {
        return;
    };
    for (role, solved) in [
        (Role::Accumulation, plan.accumulation()),
        (Role::MicroBatch, plan.micro_batch()),
    ] {
        let Some(path) = map.path_of(role) else {
            continue;
        };
        let absent = value_at(instance, path).is_none_or(Value::is_null);
        if let (true, Some((key, parent))) = (absent, path.split_last())
            && let Some(Value::Object(section)) = parent
                .iter()
                .try_fold(&mut *instance, |node, segment| node.get_mut(segment))
        {
            section.insert(key.clone(), Value::from(solved));
        }
    }
}

/// The plan values of the instance, found at their roles' places.
fn plan_input(instance: &Value, map: &SchemaMap) -> PlanInput {
    let given = |role: Role| {
        map.path_of(role)
            .and_then(|path| value_at(instance, path))
            .and_then(Value::as_u64)
    };
    let layout = given(Role::WorldSize).map(|world| {
        Layout::new(
            world,
            given(Role::TensorParallel).unwrap_or(1),
            given(Role::PipelineParallel).unwrap_or(1),
            given(Role::ContextParallel).unwrap_or(1),
        )
    });
    PlanInput {
        micro_batch: given(Role::MicroBatch),
        accumulation: given(Role::Accumulation),
        replicas: given(Role::Replicas),
        layout,
        seq_len: given(Role::SeqLen),
        global_batch: given(Role::GlobalBatch),
    }
}

/// The fix of a global batch that leaves a factor unsolvable, with the
/// value each alternative solves it to, as the derive says it: first the
/// `(m, A)` pairs that keep the global batch, as the core names them, then
/// the other global batches, "use global_batch = 96 (accumulation = 6) or
/// 112 (accumulation = 7)". `None` when no factor is left out or the
/// alternatives are neither pairs nor global batches.
fn solved_alternatives(finding: &Finding, instance: &Value, map: &SchemaMap) -> Option<String> {
    let fix = finding.fix.as_ref()?;
    let input = plan_input(instance, map);
    let role = match (input.accumulation, input.micro_batch) {
        (None, Some(_)) => Role::Accumulation,
        (Some(_), None) => Role::MicroBatch,
        _ => return None,
    };
    let mut pairs = Vec::new();
    let mut said = Vec::new();
    let mut keep = None;
    for option in &fix.options {
        let edit = match option.as_slice() {
            [m, a]
                if m.role == Role::MicroBatch
                    && a.role == Role::Accumulation
                    && said.is_empty() =>
            {
                pairs.push((m.value, a.value));
                continue;
            }
            [edit] if edit.role == Role::GlobalBatch => edit,
            _ => return None,
        };
        let plan = PlanInput {
            global_batch: Some(edit.value),
            ..input
        }
        .resolve()
        .ok()?;
        let solved = match role {
            Role::MicroBatch => plan.micro_batch(),
            _ => plan.accumulation(),
        };
        keep.get_or_insert(plan.replicas());
        said.push((edit.value, Some(Edit::new(role, solved))));
    }
    if said.is_empty() {
        return None;
    }
    let fix = match (input.global_batch, keep) {
        (Some(b), Some(d)) => Fix::keep_or_global_batches(b, Some(d), &pairs, &said),
        _ => Fix::global_batches(&said),
    };
    Some(fix.text)
}
