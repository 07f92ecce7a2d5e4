//! The plan rules, from the core, for a configuration read through a
//! schema: each role's value is found at its `x-accum-role` place and handed
//! to `accum_core::check_roles`, the one set of plan rules; its findings
//! come back as data and are placed in the file here.

use accum_core::{FieldPath, Finding, Given, RoleValue, check_roles};
use serde_json::Value;

use super::SchemaMap;
use crate::diagnostic::Diagnostic;
use crate::source::Document;

/// A core finding at its place in `doc`: its code, message, label, fix,
/// and the other fields of its equation labelled.
pub(crate) fn finding_diagnostic(doc: &Document, finding: &Finding) -> Diagnostic {
    let path = finding.path.segments().to_vec();
    let span = doc.span_for(&path);
    let mut diagnostic = Diagnostic::error(finding.code.as_str(), path, finding.message.clone())
        .at(span, finding.label.clone());
    if let Some(fix) = &finding.fix {
        diagnostic = diagnostic.help(fix.text.clone());
    }
    for related in &finding.related {
        diagnostic = diagnostic.also(doc.span_for(related.path.segments()), related.label.clone());
    }
    diagnostic
}

/// The value at `path` of the instance, if there is one.
fn value_at<'a>(instance: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter()
        .try_fold(instance, |node, segment| node.get(segment))
}

/// The plan findings of a document whose roles the schema locates. A role
/// at or under a place that already has a structural finding (`broken`) is
/// unreadable: its reader reported it, and the rules that need it are
/// skipped, so that a file with several mistakes gets each reported once.
pub(super) fn plan_findings(
    doc: &Document,
    instance: &Value,
    map: &SchemaMap,
    broken: &[Vec<String>],
) -> Vec<Diagnostic> {
    let values: Vec<RoleValue> = map
        .roles
        .iter()
        .map(|(role, path)| {
            let reported = broken
                .iter()
                .any(|b| path.starts_with(b) || (b.starts_with(path) && !b.is_empty()));
            let given = if reported {
                Given::Unreadable
            } else {
                Given::from_json(value_at(instance, path))
            };
            RoleValue::at(*role, FieldPath::new(path.clone()), given)
        })
        .collect();
    check_roles(&values)
        .iter()
        .map(|finding| finding_diagnostic(doc, finding))
        .collect()
}
