//! The trial part of a sheet: what a run report observed — counters,
//! memory peaks, warnings, and the loss, gradient norm and loss scale
//! against the axis the run logged against, with skipped updates marked.

use accum_core::group_digits;
use accum_core::plan::Plan;
use accum_core::report::RunReport;
use accum_core::settings::LogAxis;

use super::chart::{Axis, Chart, LogBase, Series, Style, Tone};
use super::extras::Extras;
use super::series::RunSeries;
use super::trained::{TrainedStages, stage_marks};
use super::{Row, Table, Trial};

pub(super) fn trial(
    source: String,
    report: &RunReport,
    run: &RunSeries,
    plan: &Plan,
    extras: &Extras,
    stages: Option<TrainedStages>,
) -> Trial {
    let n = group_digits;
    let c = &report.counters;
    let mut warnings: Vec<String> = report
        .warnings
        .iter()
        .cloned()
        .chain(run.problems.iter().cloned())
        .collect();
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
            "scheduler steps {} ≠ applied updates {}: the schedule is shifted (stepped per microbatch, or on skipped updates)",
            c.scheduler_steps.get(),
            c.applied_updates.get()
        ));
    }
    if c.grad_zeroings != c.update_attempts {
        warnings.push(format!(
            "gradients zeroed {} times for {} update attempts: they must be zeroed exactly once per group, after the update",
            c.grad_zeroings, c.update_attempts
        ));
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
                "groups completed, applied or skipped",
            ),
            Row::new(
                "skipped updates",
                n(c.skipped_updates),
                "non-finite or overflowing gradients: no parameter change, no scheduler step",
            ),
            Row::new("microbatches", n(c.microbatches.get()), "over all replicas"),
            Row::new("backward passes", n(c.backward_passes), ""),
            Row::new(
                "scheduler steps",
                n(c.scheduler_steps.get()),
                "one per applied update",
            ),
            Row::new(
                "gradient reductions",
                n(c.grad_reductions),
                "one per group, not per microbatch",
            ),
            Row::new(
                "gradient zeroings",
                n(c.grad_zeroings),
                "one per group, after the update",
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
                format!("last-group policy {}", report.last_group),
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
                "activations {}, retained {} (backward passes and the first update included)",
                bytes(peaks.first_group.activations),
                bytes(peaks.first_group.retained)
            ),
        ));
        if let Some(later) = &peaks.later_groups {
            memory_rows.push(Row::new(
                format!("replica {rank}: later groups"),
                bytes(later.total()),
                format!(
                    "activations {}, retained {}",
                    bytes(later.activations),
                    bytes(later.retained.max(peaks.later_retained))
                ),
            ));
        }
    }
    // Nothing measured is not "no": a loop of one's own that gave no
    // memory figures leaves the question open.
    let measured = memory_measured(report);
    memory_rows.push(Row::new(
        "retained memory grows across groups",
        match (measured, report.memory.peak_grows) {
            (false, _) => "not measured",
            (true, true) => "yes",
            (true, false) => "no",
        },
        if measured {
            "memory kept between microbatches, compared with the first group's; optimizer state allocated at the first applied update is not a leak; peaks are per device"
        } else {
            "the run reported no memory figures (a loop of one's own gives them with `Step::memory`)"
        },
    ));
    let memory = Table {
        title: "Memory peaks per replica".into(),
        rows: memory_rows,
    };
    let mut tables = vec![counters];
    tables.extend(super::segments::table(report));
    tables.push(memory);
    tables.extend(engine_model(report));
    Trial {
        source,
        stages,
        tables,
        charts: trial_charts(report, run, extras),
        warnings,
    }
}

/// Loss, gradient norm and (with fp16) loss scale, all against the axis the
/// run logged against, with the skipped updates marked on each.
fn trial_charts(report: &RunReport, run: &RunSeries, extras: &Extras) -> Vec<Chart> {
    let n = group_digits;
    let axis = run.axis;
    // With a ramp-up, where each stage started on the logged axis.
    let stage_marks = stage_marks(report, axis);
    let lines = &run.lines;
    let skipped_total = report.counters.skipped_updates;
    let skipped_name = format!("skipped update ({})", n(skipped_total));
    let x = Axis::count(axis.key());
    let where_skips = match (skipped_total, run.every_attempt) {
        (0, _) => "No update was skipped.".to_owned(),
        (_, true) => format!(
            "Crosses mark the {} skipped update attempts: their gradients overflowed, the parameters and the schedule did not move.",
            n(skipped_total)
        ),
        (_, false) => format!(
            "Crosses mark the skipped ones among the {} attempts the report keeps, evenly spread over the run ({} skipped in all): their gradients overflowed, the parameters and the schedule did not move.",
            n(run.attempts_read),
            n(skipped_total)
        ),
    };

    let where_skips = match &stage_marks {
        Some(marks) if marks.at.len() + 1 < report.stages.len() => format!(
            "{where_skips} The dashed line marks where the last of the {} stages of the batch ramp-up starts.",
            n(report.stages.len() as u64)
        ),
        Some(_) => {
            format!("{where_skips} Dashed lines mark where each stage of the batch ramp-up starts.")
        }
        None => where_skips,
    };
    let where_skips = match super::segments::marks_sentence(report) {
        Some(resumes) => format!("{where_skips} {resumes}"),
        None => where_skips,
    };
    // The stage starts and the resumes, marked on every plot.
    let stage_marks = super::segments::run_marks(report, axis);

    // The skipped attempts, as crosses at one of their values (0: the
    // loss, 1: zero, 2: the gradient norm, 3: the loss scale).
    let skip_marks = |which: usize| {
        (lines.skipped_read > 0).then(|| {
            Series::new(
                skipped_name.clone(),
                Style::Crosses,
                Tone::Alert,
                lines.skipped[which].iter().map(|p| (p[0], p[1])),
            )
        })
    };
    let pairs = |points: &[[f64; 2]]| points.iter().map(|p| (p[0], p[1])).collect::<Vec<_>>();

    let losses = &lines.losses;
    let (mut loss_series, drawn) = super::series::loss_lines(
        super::series::LossLegend::Sheet("loss of every update"),
        losses,
        Tone::Primary,
    );
    loss_series.extend(skip_marks(0));
    let which = if run.every_attempt {
        format!(
            "every applied update from the first ({} updates)",
            n(losses.count)
        )
    } else {
        format!(
            "{} applied updates of the {} attempts the report keeps, evenly spread over the run's {} (a stats stream beside the report holds every one)",
            n(losses.count),
            n(run.attempts_read),
            n(run.attempts_total)
        )
    };
    let mut charts = vec![Chart {
        id: "loss".into(),
        title: format!("Loss against {}", axis.key()),
        caption: format!(
            "The group's normalized loss of {which}, against {}: {drawn}. {where_skips}",
            axis_meaning(axis)
        ),
        x: x.clone(),
        x_scales: vec![],
        y: Axis::linear("loss"),
        series: loss_series,
        above: vec![],
        marks: stage_marks.clone(),
    }];

    // The learning rate each applied update used, as the report recorded
    // it: the schedule the run really followed, whatever the config type.
    if lines.any_lr {
        let mut lr_series = vec![Series::new(
            "learning rate used",
            Style::Line,
            Tone::Primary,
            pairs(&lines.lrs),
        )];
        lr_series.extend(skip_marks(1));
        charts.push(Chart {
            id: "lr".into(),
            title: format!("Learning rate against {}", axis.key()),
            caption: format!(
                "The learning rate of every applied update, as the run recorded it (one scheduler step per applied update), against {}. {where_skips}",
                axis_meaning(axis)
            ),
            x: x.clone(),
            x_scales: vec![],
            y: Axis {
                from_zero: true,
                ..Axis::linear("learning rate")
            },
            series: lr_series,
            above: vec![],
            marks: stage_marks.clone(),
        });
    }

    let (lo, hi) = lines.norm_range;
    let y = if hi > 0.0 && hi / lo > 30.0 {
        Axis::log("gradient norm", LogBase::Ten)
    } else {
        Axis::linear("gradient norm")
    };
    let mut norm_series = vec![Series::new(
        "gradient norm (unscaled, before clipping)",
        Style::Line,
        Tone::Secondary,
        pairs(&lines.norms),
    )];
    if let Some(clip) = extras.clip_norm {
        let (first, last) = lines.x_range.unwrap_or((0.0, 1.0));
        norm_series.push(Series::new(
            format!("clipping at {clip}"),
            Style::Reference,
            Tone::Muted,
            [(first, clip), (last, clip)],
        ));
    }
    norm_series.extend(skip_marks(2));
    charts.push(Chart {
        id: "grad-norm".into(),
        title: "Gradient norm".into(),
        caption: format!(
            "The global gradient norm of every update attempt, unscaled, before clipping. {where_skips}"
        ),
        x: x.clone(),
        x_scales: vec![],
        y,
        series: norm_series,
        above: vec![],
        marks: stage_marks.clone(),
    });

    if report.loss_scaling {
        let mut scale_series = vec![Series::new(
            "loss scale",
            Style::Step,
            Tone::Primary,
            pairs(&lines.scales),
        )];
        scale_series.extend(skip_marks(3));
        charts.push(Chart {
            id: "loss-scale".into(),
            title: "Loss scale".into(),
            caption: "The fp16 loss scale during each group: it backs off after an overflow and grows after a run of clean updates.".into(),
            x,
            x_scales: vec![],
            y: Axis::log("loss scale", LogBase::Two),
            series: scale_series,
            above: vec![],
            marks: stage_marks.clone(),
        });
    }
    charts
}

/// The model that ran, with its parameter count, when it was accum's
/// engine's reference model (the only model whose parameters the report
/// can count: a loop of one's own describes its model as it likes).
fn engine_model(report: &RunReport) -> Option<Table> {
    let m = &report.model;
    // The kind `TokenMlp` describes itself with in a report.
    if m.get("kind").and_then(|k| k.as_str()) != Some("token_mlp") {
        return None;
    }
    let size = |key: &str| m.get(key).and_then(serde_json::Value::as_u64);
    let (v, h, f) = (size("vocab")?, size("hidden")?, size("ffn")?);
    // embed V×H, w1 H×F, b1 F, w2 F×V, b2 V.
    let params = v
        .saturating_mul(h)
        .saturating_add(h.saturating_mul(f))
        .saturating_add(f)
        .saturating_add(f.saturating_mul(v))
        .saturating_add(v);
    Some(Table {
        title: "Model that ran".into(),
        rows: vec![
            Row::new(
                "model",
                "token MLP",
                "accum's reference model, run by the engine",
            ),
            Row::new(
                "sizes",
                format!(
                    "V {} · H {} · F {}",
                    group_digits(v),
                    group_digits(h),
                    group_digits(f)
                ),
                "",
            ),
            Row::new(
                "parameters",
                group_digits(params),
                format!("{} in f32", bytes(params.saturating_mul(4))),
            ),
        ],
    })
}

fn axis_meaning(axis: LogAxis) -> &'static str {
    match axis {
        LogAxis::Updates => "applied optimizer updates",
        LogAxis::Examples => "examples processed",
        LogAxis::Tokens => "supervised tokens processed",
    }
}

/// Whether the run measured any memory: a report without peaks was
/// written by a loop that gave none.
pub(crate) fn memory_measured(report: &RunReport) -> bool {
    !report.memory.replicas.is_empty() || report.memory.peak_bytes > 0
}

fn bytes(n: u64) -> String {
    accum_core::estimate::ByteSize::new(n).to_string()
}
