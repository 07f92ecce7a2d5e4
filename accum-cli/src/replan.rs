//! Re-planning a configuration file to a smaller micro-batch, or to another
//! number of data-parallel replicas, while keeping the effective batch
//! (`accum::run::memory`), as a text edit that preserves the file's comments
//! and layout.
//!
//! Spans in microbatches change meaning when `A` changes (`accum::run::scheduler`: a schedule
//! counted in backward passes shifts). They are rewritten so that they keep
//! the same number of updates.

use std::ops::Range;

use accum_core::plan::{Plan, PlanError, Rounding};
use accum_core::{Span, UnitKind};
use serde::Serialize;

use crate::diagnostic::dotted;
use crate::source::{Document, NodeKind};
use crate::validate::SchemaMap;

/// One change made to the file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Change {
    /// Dotted path of the value.
    pub(crate) path: String,
    /// The value before, as written.
    pub(crate) before: String,
    /// The value after.
    pub(crate) after: String,
    /// Why.
    pub(crate) reason: String,
}

/// A re-planned file.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Replanned {
    /// The new file text.
    #[serde(skip)]
    pub(crate) text: String,
    /// The plan before.
    pub(crate) before: Plan,
    /// The plan after.
    pub(crate) after: Plan,
    /// Every change, in file order.
    pub(crate) changes: Vec<Change>,
    /// Other valid `(m, A)` pairs with the same `B`, largest `m` first.
    pub(crate) alternatives: Vec<(u64, u64)>,
}

/// Rewrites `doc` so that its plan uses `target` instead of `plan`
/// (same `B`; `D` changes only when `target` says so).
fn rewrite(
    doc: &Document,
    map: &SchemaMap,
    plan: &Plan,
    target: &Plan,
    micro_batch_reason: &str,
) -> Result<Vec<(Range<usize>, String, Change)>, String> {
    use accum_core::plan::Role;
    let mut edits = Vec::new();
    let mut roles = vec![
        (Role::MicroBatch, target.micro_batch(), micro_batch_reason),
        (
            Role::Accumulation,
            target.accumulation(),
            "recomputed to keep the effective batch",
        ),
    ];
    if target.replicas() != plan.replicas() {
        roles.push((
            Role::Replicas,
            target.replicas(),
            "the new data-parallel degree",
        ));
        if let Some(layout) = target.layout() {
            roles.push((
                Role::WorldSize,
                layout.world_size,
                "the new data-parallel degree × tensor × pipeline × context",
            ));
        }
    }
    for (role, new_value, reason) in roles {
        let Some(path) = map.path_of(role) else {
            continue;
        };
        match doc.node(path) {
            Some(node) if matches!(node.kind, NodeKind::Integer(_)) => {
                let before = doc.text[node.range.clone()].to_owned();
                let after = new_value.to_string();
                if before != after {
                    edits.push((
                        node.range.clone(),
                        after.clone(),
                        Change {
                            path: dotted(path),
                            before,
                            after,
                            reason: reason.to_owned(),
                        },
                    ));
                }
            }
            Some(_) => {
                return Err(format!(
                    "`{}` is not an integer; fix the file first",
                    dotted(path)
                ));
            }
            None if role == Role::Accumulation => {
                // Solved from the global batch: it follows the new micro-batch by itself.
            }
            // `D` is written either as `replicas` or through `world_size`.
            None if matches!(role, Role::Replicas | Role::WorldSize) => {}
            None => return Err(format!("`{}` is missing; fix the file first", dotted(path))),
        }
    }
    for path in &map.spans {
        let Some(node) = doc.node(path) else { continue };
        let NodeKind::String(text) = &node.kind else {
            continue;
        };
        let Ok(span) = text.parse::<Span>() else {
            continue;
        };
        if span.unit() != UnitKind::Microbatch || plan.accumulation() == target.accumulation() {
            continue;
        }
        let rewritten = match plan.to_updates(span.value(), UnitKind::Microbatch, Rounding::Exact) {
            Ok(updates) => Span::new(
                target
                    .from_updates(updates, UnitKind::Microbatch)
                    .map_err(|e: PlanError| e.to_string())?,
                UnitKind::Microbatch,
            ),
            // Not a whole number of updates: express it exactly in examples.
            Err(_) => plan
                .span_to_unit(&span, UnitKind::Example, Rounding::Exact)
                .map_err(|e| e.to_string())?,
        };
        let updates = plan
            .to_updates(span.value(), UnitKind::Microbatch, Rounding::Down)
            .map_err(|e| e.to_string())?;
        let raw = &doc.text[node.range.clone()];
        let quote = raw.chars().next().filter(|c| *c == '"' || *c == '\'');
        let after = match quote {
            Some(q) => format!("{q}{rewritten}{q}"),
            None => rewritten.to_string(),
        };
        edits.push((
            node.range.clone(),
            after.clone(),
            Change {
                path: dotted(path),
                before: raw.to_owned(),
                after,
                reason: format!(
                    "microbatches per update change from {} to {}; keeps {}",
                    plan.accumulation(),
                    target.accumulation(),
                    updates
                ),
            },
        ));
    }
    edits.sort_by_key(|(range, _, _)| range.start);
    Ok(edits)
}

/// Applies non-overlapping edits to a text.
fn apply(text: &str, edits: &[(Range<usize>, String, Change)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (range, replacement, _) in edits {
        out.push_str(&text[at..range.start]);
        out.push_str(replacement);
        at = range.end;
    }
    out.push_str(&text[at..]);
    out
}

/// Re-plans `doc` to the largest micro-batch `≤ max_micro_batch` that keeps `B`.
pub(crate) fn replan(
    doc: &Document,
    map: &SchemaMap,
    plan: &Plan,
    max_micro_batch: u64,
) -> Result<Replanned, String> {
    let result = plan.replan(max_micro_batch).map_err(|e| e.to_string())?;
    finish(
        doc,
        map,
        plan,
        result,
        "the largest micro-batch within the limit",
    )
}

/// Re-plans `doc` to `replicas` data-parallel replicas keeping `B`: the same
/// `m` when `B` is divisible by `m·D'`, else the largest smaller one (and
/// `≤ max_micro_batch`) that is. When the file writes `D` through
/// `world_size`, the new `world_size` is `D' × tensor × pipeline × context`.
pub(crate) fn replan_replicas(
    doc: &Document,
    map: &SchemaMap,
    plan: &Plan,
    replicas: u64,
    max_micro_batch: Option<u64>,
) -> Result<Replanned, String> {
    use accum_core::plan::{Layout, Role};
    let batch = plan.effective_batch().get();
    if replicas == 0 || !batch.is_multiple_of(replicas) {
        return Err(refusal(doc, map, plan, replicas));
    }
    let per_replica = batch / replicas;
    let mut wide = match plan.layout() {
        Some(layout) => {
            let world_size = [layout.tensor, layout.pipeline, layout.context]
                .iter()
                .try_fold(replicas, |acc, f| acc.checked_mul(*f))
                .ok_or_else(|| {
                    format!(
                        "world_size {replicas} × tensor {} × pipeline {} × context {} overflows",
                        layout.tensor, layout.pipeline, layout.context
                    )
                })?;
            Plan::with_layout(
                1,
                per_replica,
                Layout::new(world_size, layout.tensor, layout.pipeline, layout.context),
            )
        }
        None => Plan::new(1, per_replica, replicas),
    }
    .map_err(|e| e.to_string())?;
    if let Some(seq_len) = plan.seq_len() {
        wide = wide.with_seq_len(seq_len).map_err(|e| e.to_string())?;
    }
    if map
        .path_of(Role::Replicas)
        .is_none_or(|p| doc.node(p).is_none())
        && map
            .path_of(Role::WorldSize)
            .is_none_or(|p| doc.node(p).is_none())
        && replicas != plan.replicas()
    {
        let key = map
            .path_of(Role::Replicas)
            .map_or_else(|| "replicas".to_owned(), dotted);
        return Err(format!(
            "the file sets no `{key}` (one replica by default); add `{key} = {}` first",
            plan.replicas()
        ));
    }
    let limit = max_micro_batch.map_or(plan.micro_batch(), |max| max.min(plan.micro_batch()));
    let result = wide.replan(limit).map_err(|e| e.to_string())?;
    let reason = if result.plan.micro_batch() == plan.micro_batch() {
        "kept"
    } else {
        "the largest micro-batch with B divisible by micro_batch × replicas"
    };
    finish(doc, map, plan, result, reason)
}

/// Why `replicas` cannot keep `B`, at the line of the batch, with the
/// nearest data-parallel degrees that can.
fn refusal(doc: &Document, map: &SchemaMap, plan: &Plan, replicas: u64) -> String {
    use accum_core::plan::Role;
    let batch = plan.effective_batch().get();
    let at = [
        Role::GlobalBatch,
        Role::Replicas,
        Role::WorldSize,
        Role::MicroBatch,
    ]
    .iter()
    .filter_map(|role| map.path_of(*role))
    .find_map(|path| doc.node(path).map(|node| node.range.start))
    .map_or_else(
        || doc.name.clone(),
        |start| {
            format!(
                "{}:{}",
                doc.name,
                crate::source::line_col(&doc.text, start).0
            )
        },
    );
    // Bounded work, as `Plan::replan`'s search: a few milliseconds; 1 always divides.
    const SEARCH: u64 = 1 << 22;
    let below = (replicas.saturating_sub(SEARCH).max(1)..replicas.min(batch + 1))
        .rev()
        .find(|d| batch.is_multiple_of(*d))
        .or(Some(1).filter(|_| replicas > 1));
    let above = (replicas.max(1)..=batch.min(replicas.saturating_add(SEARCH)))
        .find(|d| batch.is_multiple_of(*d));
    let offer = match (below, above) {
        (Some(b), Some(a)) => format!("use --replicas {b} or {a}"),
        (Some(d), None) | (None, Some(d)) => format!("use --replicas {d}"),
        (None, None) => "use --replicas 1".to_owned(),
    };
    format!(
        "{at}: {replicas} replicas cannot keep the global batch B = {} = m {} × A {} × D {}: \
         B is not divisible by {replicas}, so no micro-batch m and accumulation A give \
         m × A × {replicas} = {batch}; {offer}, or change the global batch on purpose",
        batch,
        plan.micro_batch(),
        plan.accumulation(),
        plan.replicas()
    )
}

/// The edits of a re-plan, applied.
fn finish(
    doc: &Document,
    map: &SchemaMap,
    plan: &Plan,
    result: accum_core::plan::Replan,
    micro_batch_reason: &str,
) -> Result<Replanned, String> {
    let edits = rewrite(doc, map, plan, &result.plan, micro_batch_reason)?;
    Ok(Replanned {
        text: apply(&doc.text, &edits),
        before: *plan,
        after: result.plan,
        changes: edits.into_iter().map(|(_, _, change)| change).collect(),
        alternatives: result
            .alternatives
            .iter()
            .map(|p| (p.micro_batch(), p.accumulation()))
            .collect(),
    })
}

/// What `accum replan` says on stderr: the plans before and after, every
/// change and the other `(m, A)` pairs.
pub(crate) fn summary_text(r: &Replanned) -> String {
    let mut out = format!(
        "replanned: m {} × A {} × D {} = B {}  →  m {} × A {} × D {} = B {}\n",
        r.before.micro_batch(),
        r.before.accumulation(),
        r.before.replicas(),
        r.before.effective_batch().get(),
        r.after.micro_batch(),
        r.after.accumulation(),
        r.after.replicas(),
        r.after.effective_batch().get()
    );
    for change in &r.changes {
        out.push_str(&format!(
            "  {}: {} → {} ({})\n",
            change.path, change.before, change.after, change.reason
        ));
    }
    if !r.alternatives.is_empty() {
        let alts: Vec<String> = r
            .alternatives
            .iter()
            .map(|(m, a)| format!("m {m} × A {a}"))
            .collect();
        out.push_str(&format!(
            "  alternatives with the same B: {}\n",
            alts.join(", ")
        ));
    }
    if r.after.micro_batch() < r.before.micro_batch() || r.after.replicas() == r.before.replicas() {
        out.push_str("  note: a smaller micro-batch guarantees neither a proportional memory drop nor a faster run\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceFormat;

    fn map() -> SchemaMap {
        SchemaMap::from_schema(&serde_json::json!({
            "type": "object",
            "properties": {
                "batch": { "type": "object", "properties": {
                    "micro_batch": { "x-accum-role": "micro_batch" },
                    "accumulation": { "x-accum-role": "accumulation" },
                    "replicas": { "x-accum-role": "replicas" }
                }},
                "schedule": { "type": "object", "properties": {
                    "warmup": { "x-accum-unit": "span" },
                    "total": { "x-accum-unit": "span" }
                }}
            }
        }))
    }

    #[test]
    fn keeps_comments_and_the_batch() {
        let text = "# my run\n[batch]\nmicro_batch = 32 # per GPU\naccumulation = 1\nreplicas = 2\n\n[schedule]\nwarmup = \"40 microbatches\"\ntotal = \"500 updates\"\n";
        let doc =
            Document::parse("t.toml".into(), text.into(), SourceFormat::Toml).expect("parses");
        let plan = Plan::new(32, 1, 2).expect("valid");
        let r = replan(&doc, &map(), &plan, 10).expect("possible");
        assert_eq!((r.after.micro_batch(), r.after.accumulation()), (8, 4));
        assert_eq!(
            r.text,
            "# my run\n[batch]\nmicro_batch = 8 # per GPU\naccumulation = 4\nreplicas = 2\n\n[schedule]\nwarmup = \"160 microbatches\"\ntotal = \"500 updates\"\n"
        );
        assert_eq!(r.changes.len(), 3);
        assert_eq!(r.alternatives, vec![(4, 8), (2, 16), (1, 32)]);
    }

    #[test]
    fn yaml_and_json_are_edited_in_place_too() {
        let yaml = "batch:\n  micro_batch: 16\n  accumulation: 2\n  replicas: 1\nschedule:\n  warmup: 3 microbatches\n";
        let doc =
            Document::parse("t.yaml".into(), yaml.into(), SourceFormat::Yaml).expect("parses");
        let plan = Plan::new(16, 2, 1).expect("valid");
        let r = replan(&doc, &map(), &plan, 4).expect("possible");
        // 3 microbatches at A=2 is 1.5 updates: kept exact, in examples.
        assert_eq!(
            r.text,
            "batch:\n  micro_batch: 4\n  accumulation: 8\n  replicas: 1\nschedule:\n  warmup: 48 examples\n"
        );
        let json = "{\"batch\": {\"micro_batch\": 16, \"accumulation\": 2, \"replicas\": 1}}";
        let doc =
            Document::parse("t.json".into(), json.into(), SourceFormat::Json).expect("parses");
        let r = replan(&doc, &map(), &plan, 8).expect("possible");
        assert_eq!(
            r.text,
            "{\"batch\": {\"micro_batch\": 8, \"accumulation\": 4, \"replicas\": 1}}"
        );
    }

    #[test]
    fn nothing_changes_when_the_plan_already_fits() {
        let text = "[batch]\nmicro_batch = 4\naccumulation = 2\nreplicas = 1\n";
        let doc =
            Document::parse("t.toml".into(), text.into(), SourceFormat::Toml).expect("parses");
        let r = replan(&doc, &map(), &Plan::new(4, 2, 1).expect("valid"), 4).expect("possible");
        assert_eq!(r.text, text);
        assert!(r.changes.is_empty());
    }
}
