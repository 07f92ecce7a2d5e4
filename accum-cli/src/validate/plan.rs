//! The plan rules on role values read through a schema's `x-accum-role`
//! marks, for a config known only by its schema (`validate --schema`):
//! every zero, a layout that does not divide, then the declared global
//! batch and overflow.

use accum_core::{Layout, PlanError, PlanInput, Role};
use serde_json::Value;

use super::SchemaMap;
use crate::diagnostic::Diagnostic;
use crate::source::Document;

fn role_value(instance: &Value, map: &SchemaMap, role: Role) -> Option<u64> {
    let path = map.path_of(role)?;
    let mut node = instance;
    for segment in path {
        node = node.get(segment)?;
    }
    node.as_u64()
}

/// Runs the plan rules on the role values that are well-formed integers
/// (R3): every zero, a layout that does not divide, then the declared global
/// batch and overflow. Roles with a structural error are left out, so that a
/// file with several mistakes still gets all of them reported.
pub(super) fn plan_findings(
    doc: &Document,
    instance: &Value,
    map: &SchemaMap,
    broken: &[Vec<String>],
) -> Vec<Diagnostic> {
    let zeros: Vec<Role> = Role::ALL
        .into_iter()
        .filter(|&role| role_value(instance, map, role) == Some(0))
        .collect();
    let usable = |role: Role| {
        !zeros.contains(&role)
            && map.path_of(role).is_some_and(|p| {
                !broken
                    .iter()
                    .any(|b| p.starts_with(b) || b.starts_with(p) && !b.is_empty())
            })
    };
    let get = |role: Role| {
        if usable(role) {
            role_value(instance, map, role)
        } else {
            None
        }
    };
    let path_of = |role: Role| {
        map.path_of(role)
            .map(<[String]>::to_vec)
            .unwrap_or_default()
    };
    let span_of = |role: Role| doc.span_for(&path_of(role));
    let mut findings = Vec::new();
    for &role in &zeros {
        if map
            .path_of(role)
            .is_some_and(|p| !broken.iter().any(|b| p.starts_with(b)))
        {
            let err = PlanError::Zero { role };
            findings.push(
                Diagnostic::error("accum::plan::zero", path_of(role), err.to_string())
                    .at(span_of(role), "must be at least 1"),
            );
        }
    }
    let layout = get(Role::WorldSize).map(|world| {
        Layout::new(
            world,
            get(Role::TensorParallel).unwrap_or(1),
            get(Role::PipelineParallel).unwrap_or(1),
            get(Role::ContextParallel).unwrap_or(1),
        )
    });
    if let Some(Err(err)) = layout.map(|l| l.replicas()) {
        let mut finding = Diagnostic::error(
            "accum::plan::layout",
            path_of(Role::WorldSize),
            err.to_string(),
        )
        .with_fix_split()
        .at(span_of(Role::WorldSize), "not divisible by tp·pp·cp");
        for factor in [
            Role::TensorParallel,
            Role::PipelineParallel,
            Role::ContextParallel,
        ] {
            if let Some(value) = get(factor) {
                finding = finding.also(span_of(factor), format!("{} {value}", factor.key()));
            }
        }
        findings.push(finding);
        return findings;
    }
    let all_usable = [
        Role::MicroBatch,
        Role::Accumulation,
        Role::Replicas,
        Role::WorldSize,
        Role::GlobalBatch,
    ]
    .into_iter()
    .all(|role| map.path_of(role).is_none() || usable(role));
    if !all_usable {
        return findings;
    }
    let input = PlanInput {
        micro_batch: get(Role::MicroBatch),
        accumulation: get(Role::Accumulation),
        replicas: get(Role::Replicas),
        layout,
        seq_len: get(Role::SeqLen),
        global_batch: get(Role::GlobalBatch),
    };
    let Err(err) = input.resolve() else {
        return findings;
    };
    let (role, code, label) = match &err {
        PlanError::Missing { role } => (*role, "accum::plan::missing", "missing".to_owned()),
        PlanError::Overflow { .. } => (
            Role::MicroBatch,
            "accum::plan::overflow",
            "product overflows".to_owned(),
        ),
        PlanError::GlobalBatchMismatch {
            micro_batch,
            accumulation,
            replicas,
            ..
        } => (
            Role::GlobalBatch,
            "accum::plan::global-batch",
            format!(
                "≠ {micro_batch} × {accumulation} × {replicas} = {}",
                micro_batch
                    .saturating_mul(*accumulation)
                    .saturating_mul(*replicas)
            ),
        ),
        PlanError::GlobalBatchNotDivisible { .. } => (
            Role::GlobalBatch,
            "accum::plan::global-batch",
            "not a multiple of m·D".to_owned(),
        ),
        PlanError::ReplicasDisagree { .. } => (
            Role::Replicas,
            "accum::plan::replicas",
            "disagrees with the layout".to_owned(),
        ),
        _ => (Role::MicroBatch, "accum::plan", "here".to_owned()),
    };
    let mut finding = Diagnostic::error(code, path_of(role), err.to_string())
        .with_fix_split()
        .at(span_of(role), label);
    if matches!(
        err,
        PlanError::GlobalBatchMismatch { .. } | PlanError::GlobalBatchNotDivisible { .. }
    ) {
        for factor in [
            Role::MicroBatch,
            Role::Accumulation,
            Role::Replicas,
            Role::WorldSize,
        ] {
            if let Some(value) = get(factor) {
                finding = finding.also(span_of(factor), format!("{} {value}", factor.key()));
            }
        }
    }
    if matches!(
        err,
        PlanError::Missing {
            role: Role::Replicas
        }
    ) {
        finding.help = Some(
            "give the data-parallel replicas, or a world size with its tensor/pipeline/context degrees".to_owned(),
        );
    }
    findings.push(finding);
    findings
}
