//! The preparation's plots: the learning-rate schedule over the whole run
//! against updates, with its examples and tokens below; and, when the batch
//! ramps up, the batch and the learning rate against updates and against
//! tokens, with the stage starts marked on both. Positions in examples and
//! tokens come from the staged plan ([`Axes`]), never from `B × updates`.

use accum_core::schedule::Schedule;
use accum_core::settings::ScheduleKind;
use accum_core::{Span, UnitKind, group_digits};

use super::axes::{Axes, TokenCount, count};
use super::chart::{Axis, Chart, MAX_LINE_POINTS, Mark, Marks, Panel, Scale, Series, Style, Tone};
use super::extras::LrSchedule;

/// The title of the batch panel's axis: the quantity and its unit.
const BATCH_AXIS: &str = "B (examples)";

/// Stage starts a plot marks one by one at most; a longer ramp marks where
/// it ends (its steps show in the batch itself).
pub(crate) const MAX_STAGE_MARKS: usize = 12;

/// The plots of the preparation: the schedule (when there is one) against
/// updates; with a ramp-up, the batch above it, and the same against tokens.
/// `run_updates` is the run's length when known.
pub(super) fn charts(
    schedule: Option<(&LrSchedule, &Schedule)>,
    axes: &Axes,
    run_updates: Option<u64>,
) -> Vec<Chart> {
    match (axes.is_staged(), schedule) {
        (false, Some((configured, resolved))) => vec![schedule_chart(configured, resolved, axes)],
        (false, None) => vec![],
        (true, schedule) => {
            // Without a length, the last stage is drawn for a third of the
            // ramp: it lasts to the end of the run, wherever that is.
            let last_start = axes.staged().stages().last().map_or(0, |s| s.start().get());
            let end = run_updates
                .unwrap_or_else(|| last_start.saturating_add((last_start / 3).max(1)))
                .max(1);
            let against_updates = ramp_chart(schedule, axes, end, None);
            let unit = match axes.tokens() {
                Some(_) => UnitKind::Token,
                None => UnitKind::Example,
            };
            vec![against_updates, ramp_chart(schedule, axes, end, Some(unit))]
        }
    }
}

/// Applied updates at which the schedule is drawn: every update of a short
/// run; evenly spaced ones of a long run, with the end of warmup, the stage
/// starts and the end kept exactly.
fn sample_updates(total: u64, warmup: u64, starts: &[u64]) -> Vec<u64> {
    let samples = MAX_LINE_POINTS as u64;
    let mut at: Vec<u64> = if total <= samples {
        (0..=total).collect()
    } else {
        (0..=samples)
            .map(|i| (u128::from(total) * u128::from(i) / u128::from(samples)) as u64)
            .collect()
    };
    at.extend([warmup.min(total), warmup.saturating_sub(1).min(total)]);
    at.extend(starts.iter().copied().filter(|s| *s <= total));
    at.sort_unstable();
    at.dedup();
    at
}

/// `"0.01 after a warmup of 4 updates (64 examples), then cosine to 0 at
/// 60 updates"`: the peak and the shape. A schedule that counts tokens
/// (examples) through the stages of a ramp-up says where it ends in both:
/// `"then cosine to 0 at 409,600 tokens (update 235)"`.
fn shape(configured: &LrSchedule, schedule: &Schedule) -> String {
    let n = group_digits;
    let total = schedule.total().get();
    let clock = schedule.clock();
    let end = if clock == UnitKind::Update {
        format!("{} updates", n(total))
    } else {
        format!("{} (update {})", amount(&schedule.total_length()), n(total))
    };
    let shape = match configured.section.kind {
        ScheduleKind::Constant => "then constant".to_owned(),
        ScheduleKind::Linear => format!("then linear to 0 at {end}"),
        ScheduleKind::Cosine => format!("then cosine to 0 at {end}"),
    };
    let written = configured.section.warmup;
    let as_written = if clock != UnitKind::Update {
        format!(" ({})", amount(&schedule.warmup_length()))
    } else if written.unit() == UnitKind::Update {
        String::new()
    } else {
        format!(" ({written})")
    };
    format!(
        "{} after a warmup of {}{as_written}, {shape}",
        super::setting(configured.peak_lr),
        count(schedule.warmup().get(), "update"),
    )
}

/// `"409,600 tokens"`.
fn amount(span: &Span) -> String {
    let unit = span.unit();
    count(span.value(), unit.singular())
}

/// How the schedule steps: once per applied update, by what the update
/// consumed when it counts tokens (examples) through a ramp-up.
fn stepping(schedule: &Schedule) -> String {
    match schedule.clock() {
        UnitKind::Update => "it steps once per applied update".to_owned(),
        unit => format!(
            "it steps once per applied update, by the {} that update consumed, so it ends at the same count of {} whatever the stages",
            unit.plural(),
            unit.plural()
        ),
    }
}

/// The learning rate a schedule gives after each applied update, with x in
/// updates and further scales in examples and tokens (one batch for the
/// whole run).
pub(super) fn schedule_chart(configured: &LrSchedule, schedule: &Schedule, axes: &Axes) -> Chart {
    let total = schedule.total().get();
    let warmup = schedule.warmup().get();
    let at = sample_updates(total, warmup, &[]);
    let lr = Series::new(
        "learning rate",
        Style::Line,
        Tone::Primary,
        at.iter().map(|&u| (u as f64, schedule.lr_at(u))),
    );
    let mut series = vec![lr];
    if warmup > 0 && warmup < total {
        series.push(Series::new(
            "end of warmup",
            Style::Reference,
            Tone::Muted,
            [(warmup as f64, 0.0), (warmup as f64, configured.peak_lr)],
        ));
    }
    let caption = format!(
        "Peak {}; the schedule steps once per applied update, so a skipped update does not advance it.",
        shape(configured, schedule)
    );
    Chart {
        id: "schedule".into(),
        title: "Learning-rate schedule".into(),
        caption,
        x: Axis::count("updates"),
        x_scales: update_scales(axes, total),
        y: lr_axis(),
        series,
        above: vec![],
        marks: None,
    }
}

fn lr_axis() -> Axis {
    Axis {
        from_zero: true,
        ..Axis::linear("learning rate")
    }
}

/// Examples and (when known) tokens under an axis of updates up to `end`.
fn update_scales(axes: &Axes, end: u64) -> Vec<Scale> {
    let mut scales = vec![Scale {
        label: "examples".into(),
        knots: axes.knots(UnitKind::Example, end),
        approximate: false,
    }];
    if let Some(tokens) = axes.tokens() {
        scales.push(Scale {
            label: "tokens".into(),
            knots: axes.knots(UnitKind::Token, end),
            approximate: tokens == TokenCount::Expected,
        });
    }
    scales
}

/// The batch and (with a schedule) the learning rate of a staged run up to
/// `end` updates, against updates (`unit` `None`) or against `unit`.
fn ramp_chart(
    schedule: Option<(&LrSchedule, &Schedule)>,
    axes: &Axes,
    end: u64,
    unit: Option<UnitKind>,
) -> Chart {
    let n = group_digits;
    let stages = axes.staged().stages();
    // Where a number of applied updates sits on this chart's x axis.
    let x_of = |updates: u64| -> f64 {
        match unit {
            None => updates as f64,
            Some(unit) => axes.at(updates, unit).map_or(f64::NAN, |v| v as f64),
        }
    };
    let starts: Vec<u64> = stages
        .iter()
        .map(|s| s.start().get())
        .filter(|s| *s < end)
        .collect();

    // The batch: one level per stage, held to the next stage's start.
    let batch_points = stages
        .iter()
        .filter(|s| s.start().get() < end)
        .map(|s| {
            (
                x_of(s.start().get()),
                s.plan().effective_batch().get() as f64,
            )
        })
        .chain(std::iter::once((
            x_of(end),
            axes.staged()
                .plan_at(accum_core::Updates::new(end - 1))
                .effective_batch()
                .get() as f64,
        )));
    let batch = Series::new("batch B", Style::Step, Tone::Secondary, batch_points);

    // The stage starts, one by one on a short ramp; the end of a long one.
    let later: Vec<&accum_core::plan::Stage> = stages
        .iter()
        .skip(1)
        .filter(|s| s.start().get() < end)
        .collect();
    let mark = |s: &&accum_core::plan::Stage| Mark {
        x: x_of(s.start().get()),
        label: format!("B {}", n(s.plan().effective_batch().get())),
    };
    let marks = if later.len() <= MAX_STAGE_MARKS {
        Marks {
            name: "stage start".into(),
            at: later.iter().map(mark).collect(),
        }
    } else {
        Marks {
            name: "end of the ramp".into(),
            at: later.last().map(mark).into_iter().collect(),
        }
    };

    let (x, x_scales, id, against) = match unit {
        None => (
            Axis::count("updates"),
            update_scales(axes, end),
            "schedule",
            "updates",
        ),
        Some(unit) => {
            let label = match (unit, axes.tokens()) {
                // Expected, not counted: the axis says so in the room it has.
                (UnitKind::Token, Some(TokenCount::Expected)) => "≈ tokens",
                (unit, _) => unit.plural(),
            };
            (
                Axis::count(label),
                vec![Scale {
                    label: "updates".into(),
                    knots: axes.inverse_knots(unit, end),
                    approximate: false,
                }],
                if unit == UnitKind::Token {
                    "schedule-tokens"
                } else {
                    "schedule-examples"
                },
                unit.plural(),
            )
        }
    };
    let batches: Vec<u64> = stages
        .iter()
        .map(|s| s.plan().effective_batch().get())
        .collect();
    let ramp_sentence = if later.len() <= MAX_STAGE_MARKS {
        format!(
            "The batch B steps up at the start of each stage (dashed lines): {} examples per update",
            super::stages::steps(&batches)
        )
    } else {
        format!(
            "The batch B steps up at the start of each of the {} stages, {} examples per update; the dashed line marks the end of the ramp",
            n(stages.len() as u64),
            super::stages::steps(&batches)
        )
    };
    let how_read = match unit {
        None => {
            "The scales below read the same updates in examples and tokens, through the stages."
                .to_owned()
        }
        Some(unit) => format!(
            "Against {}, a stage of a small batch is short: it takes many updates but few {}, so a length written in updates means fewer {} early in the run. The scale below reads the same {} in updates, through the stages.",
            unit.plural(),
            unit.plural(),
            unit.plural(),
            unit.plural()
        ),
    };
    match schedule {
        Some((configured, resolved)) => {
            let total = resolved.total().get();
            let warmup = resolved.warmup().get();
            let at = sample_updates(total.min(end), warmup, &starts);
            let lr = Series::new(
                "learning rate",
                Style::Line,
                Tone::Primary,
                at.iter().map(|&u| (x_of(u), resolved.lr_at(u))),
            );
            let mut series = vec![lr];
            if warmup > 0 && warmup < total {
                series.push(Series::new(
                    "end of warmup",
                    Style::Reference,
                    Tone::Muted,
                    [(x_of(warmup), 0.0), (x_of(warmup), configured.peak_lr)],
                ));
            }
            Chart {
                id: id.into(),
                title: format!("Batch and learning rate against {against}"),
                caption: format!(
                    "{ramp_sentence}. The learning rate peaks at {}; {}. {how_read}",
                    shape(configured, resolved),
                    stepping(resolved)
                ),
                x,
                x_scales,
                y: lr_axis(),
                series,
                above: vec![Panel {
                    y: Axis::count(BATCH_AXIS),
                    series: vec![batch],
                }],
                marks: Some(marks),
            }
        }
        None => Chart {
            id: id.into(),
            title: format!("Batch against {against}"),
            caption: format!(
                "{ramp_sentence}; the last stage lasts to the end of the run. {how_read}"
            ),
            x,
            x_scales,
            y: Axis::count(BATCH_AXIS),
            series: vec![batch],
            above: vec![],
            marks: Some(marks),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use accum_core::plan::{Plan, StagedPlan};
    use accum_core::settings::ScheduleSection;

    #[test]
    fn long_schedules_are_sampled_with_their_corners() {
        let plan = Plan::new(8, 4, 64).expect("plan");
        let configured = LrSchedule {
            section: ScheduleSection {
                kind: ScheduleKind::Linear,
                warmup: "2,001 updates".parse().expect("span"),
                total: Some("1M updates".parse().expect("span")),
            },
            peak_lr: 3e-4,
        };
        let resolved = Schedule::resolve(&configured.section, 3e-4, &plan, None).expect("resolves");
        let axes = Axes::new(StagedPlan::constant(plan), None);
        let chart = schedule_chart(&configured, &resolved, &axes);
        let points = &chart.series[0].points;
        assert!(points.len() <= MAX_LINE_POINTS + 3);
        assert!(
            points.contains(&[2_001.0, 3e-4]),
            "the end of warmup is kept"
        );
        assert_eq!(points.last().map(|p| p[0]), Some(1_000_000.0));
        assert_eq!(chart.x_scales.len(), 1, "no tokens without a length");
    }

    /// A schedule written in tokens ends at the same token count with or
    /// without the ramp-up; at the full batch throughout, it takes fewer
    /// updates.
    #[test]
    fn a_schedule_in_tokens_ends_at_its_tokens_whatever_the_stages() {
        use crate::sheet::tests::{RAMPUP, sheet_of};
        let staged = sheet_of(RAMPUP);
        let start = RAMPUP.find("[[batch.stages]]").expect("stages");
        let end = RAMPUP.find("[optimizer]").expect("optimizer");
        let constant = sheet_of(&format!("{}{}", &RAMPUP[..start], &RAMPUP[end..]));
        let last_lr = |chart: &Chart| chart.series[0].points.last().copied();
        let tokens_at = |chart: &Chart, x: f64| {
            chart
                .x_scales
                .iter()
                .find(|s| s.label == "tokens")
                .expect("a tokens scale")
                .value_at(x)
        };
        let flat = &constant.preparation.charts[0];
        assert_eq!(last_lr(flat), Some([200.0, 0.0]));
        assert_eq!(tokens_at(flat, 200.0), 409_600.0);
        let ramp = &staged.preparation.charts[0];
        assert_eq!(last_lr(ramp), Some([235.0, 0.0]));
        assert_eq!(tokens_at(ramp, 235.0), 409_600.0);
        assert_eq!(
            last_lr(&staged.preparation.charts[1]),
            Some([409_600.0, 0.0])
        );
    }
}
