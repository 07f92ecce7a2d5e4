//! Building a [`Sheet`] from a checked configuration, its plan and an
//! optional run report.

use accum_core::report::{CURVE_CAPACITY, CurvePoint, Decimated, RunReport, logged_points};
use accum_core::units::group_digits;
use accum_core::{Plan, Rounding, Span, UnitKind};

use super::{Curve, Observed, Point, Row, Sheet, Table};
use crate::diagnostic::dotted;
use crate::source::{Document, NodeKind};
use crate::validate::SchemaMap;

/// What a configuration type adds to the generic sheet.
#[derive(Clone, Debug, Default)]
pub struct Extras {
    /// Tables after the plan.
    pub tables: Vec<Table>,
    /// Expected supervised tokens per update when lengths vary (the engine
    /// counts the real ones), for converting token spans.
    pub expected_tokens_per_update: Option<u64>,
}

/// Builds the sheet.
pub fn build(
    doc: &Document,
    map: &SchemaMap,
    plan: &Plan,
    extras: Extras,
    report: Option<(String, &RunReport)>,
) -> Sheet {
    let text_at = |path: &[&str]| {
        let path: Vec<String> = path.iter().map(|s| (*s).to_owned()).collect();
        match doc.node(&path).map(|n| &n.kind) {
            Some(NodeKind::String(s)) => Some(s.clone()),
            _ => None,
        }
    };
    let name = text_at(&["run", "name"]).unwrap_or_else(|| {
        std::path::Path::new(&doc.name)
            .file_stem()
            .map_or_else(|| doc.name.clone(), |s| s.to_string_lossy().into_owned())
    });
    let mut preparation = vec![plan_table(plan, extras.expected_tokens_per_update)];
    if let Some(spans) = spans_table(doc, map, plan, extras.expected_tokens_per_update) {
        preparation.push(spans);
    }
    preparation.extend(extras.tables);
    Sheet {
        format: "accum-sheet/1",
        name,
        notes: text_at(&["run", "notes"]),
        config: doc.name.clone(),
        preparation,
        trial: report.map(|(source, report)| observed(source, report, plan)),
        accepted: None,
    }
}

fn plan_table(plan: &Plan, expected_tokens: Option<u64>) -> Table {
    let n = group_digits;
    let mut rows = vec![
        Row::new(
            "micro-batch m",
            format!("{} examples", n(plan.micro_batch())),
            "per forward/backward pass, per replica",
        ),
        Row::new(
            "accumulation A",
            format!("{} microbatches", n(plan.accumulation())),
            "per optimizer update, per replica; gradients reduced once, after the last (R9)",
        ),
    ];
    match plan.layout() {
        Some(l) => rows.push(Row::new(
            "data-parallel replicas D",
            n(plan.replicas()),
            format!(
                "D = world_size / (tp·pp·cp) = {} / ({} × {} × {}); model-parallel devices are not replicas (R3)",
                l.world_size, l.tensor, l.pipeline, l.context
            ),
        )),
        None => rows.push(Row::new("data-parallel replicas D", n(plan.replicas()), "model copies that see different examples")),
    }
    rows.push(Row::new(
        "effective batch B",
        format!("{} examples", n(plan.effective_batch().get())),
        plan.batch_formula(),
    ));
    match (plan.seq_len(), plan.tokens_per_update(), expected_tokens) {
        (Some(len), Some(tokens), _) => {
            rows.push(Row::new("sequence length L", format!("{} tokens", n(len)), "fixed"));
            rows.push(Row::new(
                "tokens per update T",
                format!("{} tokens", n(tokens.get())),
                plan.token_formula().unwrap_or_default(),
            ));
        }
        (_, _, Some(expected)) => rows.push(Row::new(
            "supervised tokens per update",
            format!("≈ {} tokens", n(expected)),
            "expected from the data's length range; lengths vary, so the engine counts the real tokens of each group (R4, R15)",
        )),
        _ => rows.push(Row::new(
            "tokens per update",
            "counted per group",
            "no fixed seq_len: variable or packed lengths need token accounting (R15)",
        )),
    }
    rows.push(Row::new(
        "per replica per update",
        format!(
            "{} examples",
            n(plan.examples_per_replica_per_update().get())
        ),
        format!("m·A = {} × {}", plan.micro_batch(), plan.accumulation()),
    ));
    Table {
        title: "Plan (R3)".into(),
        rows,
    }
}

/// Every span of the config in updates, examples and tokens.
fn spans_table(
    doc: &Document,
    map: &SchemaMap,
    plan: &Plan,
    expected_tokens: Option<u64>,
) -> Option<Table> {
    let mut rows = Vec::new();
    for path in &map.spans {
        let Some(node) = doc.node(path) else { continue };
        let span = match &node.kind {
            NodeKind::String(s) => s.parse::<Span>().ok(),
            NodeKind::Table(_) => serde_json::from_value::<Span>(node.to_json()).ok(),
            _ => None,
        };
        let Some(span) = span else { continue };
        rows.push(Row::new(
            dotted(path),
            span.to_string(),
            in_every_unit(&span, plan, expected_tokens),
        ));
    }
    (!rows.is_empty()).then(|| Table {
        title: "Lengths in every unit (R1, R8)".into(),
        rows,
    })
}

/// `"= 300 updates = 19,200 examples = 768,000 tokens"`, with `≈` where the
/// token count is an expectation or a conversion rounds.
pub fn in_every_unit(span: &Span, plan: &Plan, expected_tokens: Option<u64>) -> String {
    let n = group_digits;
    let tokens_per_update = plan
        .tokens_per_update()
        .map(|t| (t.get(), true))
        .or(expected_tokens.map(|t| (t, false)));
    // Updates first: exact when whole, rounded up (a partial update still runs) otherwise.
    let (updates, exact) = match span.unit() {
        UnitKind::Token => match tokens_per_update {
            Some((per, is_exact)) if per > 0 => (
                span.value().div_ceil(per),
                is_exact && span.value().is_multiple_of(per),
            ),
            _ => return "tokens need a fixed seq_len or data to count".into(),
        },
        unit => match plan.to_updates(span.value(), unit, Rounding::Exact) {
            Ok(u) => (u.get(), true),
            Err(_) => match plan.to_updates(span.value(), unit, Rounding::Up) {
                Ok(u) => (u.get(), false),
                Err(err) => return err.to_string(),
            },
        },
    };
    let approx = if exact { "=" } else { "≈" };
    let b = plan.effective_batch().get();
    let mut parts = vec![
        format!("{approx} {} updates", n(updates)),
        format!(
            "{approx} {} microbatches per replica",
            n(updates.saturating_mul(plan.accumulation()))
        ),
        format!("{approx} {} examples", n(updates.saturating_mul(b))),
    ];
    if let Some((per, is_exact)) = tokens_per_update {
        let sign = if exact && is_exact { "=" } else { "≈" };
        parts.push(format!("{sign} {} tokens", n(updates.saturating_mul(per))));
    }
    parts.join(" ")
}

fn observed(source: String, report: &RunReport, plan: &Plan) -> Observed {
    let n = group_digits;
    let c = &report.counters;
    let mut warnings = report.warnings.clone();
    let p = &report.plan;
    if (p.micro_batch, p.accumulation, p.replicas)
        != (plan.micro_batch(), plan.accumulation(), plan.replicas())
    {
        warnings.push(format!(
            "the report's plan (m {} × A {} × D {}) is not the configuration's (m {} × A {} × D {}): the trial belongs to another plan",
            p.micro_batch,
            p.accumulation,
            p.replicas,
            plan.micro_batch(),
            plan.accumulation(),
            plan.replicas()
        ));
    }
    if c.scheduler_steps.get() != c.applied_updates.get() {
        warnings.push(format!(
            "scheduler steps {} ≠ applied updates {}: the schedule is shifted (R8, R14)",
            c.scheduler_steps.get(),
            c.applied_updates.get()
        ));
    }
    if c.grad_zeroings != c.update_attempts {
        warnings.push(format!(
            "gradients zeroed {} times for {} update attempts: they must be zeroed exactly once per group (R2)",
            c.grad_zeroings, c.update_attempts
        ));
    }
    if report.memory.peak_grows {
        warnings.push(
            "memory peak grows across groups: references are kept between microbatches (R11, R14)"
                .into(),
        );
    }
    let counters = Table {
        title: "Observed counters".into(),
        rows: vec![
            Row::new(
                "applied updates",
                n(c.applied_updates.get()),
                "optimizer updates that changed the parameters",
            ),
            Row::new(
                "update attempts",
                n(c.update_attempts),
                "groups completed, applied or skipped (R7)",
            ),
            Row::new(
                "skipped updates",
                n(c.skipped_updates),
                "non-finite gradients: no parameter change",
            ),
            Row::new("microbatches", n(c.microbatches.get()), "over all replicas"),
            Row::new("backward passes", n(c.backward_passes), ""),
            Row::new(
                "scheduler steps",
                n(c.scheduler_steps.get()),
                "one per applied update (R8)",
            ),
            Row::new(
                "gradient reductions",
                n(c.grad_reductions),
                "one per group (R9, R17)",
            ),
            Row::new(
                "gradient zeroings",
                n(c.grad_zeroings),
                "one per group, after the update (R2)",
            ),
            Row::new("examples", n(c.examples.get()), ""),
            Row::new(
                "supervised tokens",
                n(c.supervised_tokens.get()),
                "padding and ignored positions excluded",
            ),
            Row::new("epochs started", n(c.epochs), ""),
            Row::new(
                "dropped examples",
                n(c.dropped_examples.get()),
                format!("last-group policy {} (R6)", report.last_group),
            ),
            Row::new(
                "stopped early",
                if report.stopped_early { "yes" } else { "no" },
                "",
            ),
        ],
    };
    let mut memory_rows = Vec::new();
    for (rank, peaks) in report.memory.replicas.iter().enumerate() {
        memory_rows.push(Row::new(
            format!("replica {rank}: first group"),
            bytes(peaks.first_group.total()),
            format!(
                "activations {} (backward passes and the first update included)",
                bytes(peaks.first_group.activations)
            ),
        ));
        if let Some(later) = &peaks.later_groups {
            memory_rows.push(Row::new(
                format!("replica {rank}: later groups"),
                bytes(later.total()),
                format!("activations {}", bytes(later.activations)),
            ));
        }
    }
    memory_rows.push(Row::new(
        "peak grows across groups",
        if report.memory.peak_grows {
            "yes"
        } else {
            "no"
        },
        "peaks are per device (R11)",
    ));
    let memory = Table {
        title: "Memory peaks per replica (R11)".into(),
        rows: memory_rows,
    };
    // The logged points, from the stats stream beside the report when it
    // names one, else from the report; at most CURVE_CAPACITY, evenly spread.
    let mut curve = Decimated::<CurvePoint>::new(CURVE_CAPACITY);
    match logged_points(report, std::path::Path::new(&source)) {
        Ok(points) => {
            for point in points {
                match point {
                    Ok(p) => curve.push(p),
                    Err(err) => {
                        warnings.push(format!("the loss curve stops early: {err}"));
                        break;
                    }
                }
            }
        }
        Err(err) => {
            warnings.push(format!("the loss curve is the report's own: {err}"));
            report.loss_curve.points.iter().for_each(|p| curve.push(*p));
        }
    }
    Observed {
        source,
        tables: vec![counters, memory],
        curve: Curve {
            axis: report.loss_curve.axis.to_string(),
            points: curve
                .items()
                .iter()
                .map(|p| Point {
                    x: p.x as f64,
                    loss: p.loss,
                })
                .collect(),
        },
        warnings,
    }
}

fn bytes(n: u64) -> String {
    accum_core::estimate::ByteSize::new(n).to_string()
}
