//! Building a [`Sheet`] from a typed configuration, its plan, what the
//! configuration type adds ([`Extras`]) and an optional run report. Nothing
//! here reads the configuration file again: any `#[derive(AccumConfig)]`
//! type gets its plan and its lengths ([`AccumConfig::span_values`]), and a
//! type's sheet hook adds the rest.

use std::path::Path;

use accum_core::plan::Epoch;
use accum_core::report::RunReport;
use accum_core::schedule::Schedule;
use accum_core::settings::{ScheduleKind, ScheduleSection};
use accum_core::units::group_digits;
use accum_core::{AccumConfig, FieldPath, Plan, Rounding, Span, UnitKind};

use super::chart::{Axis, Chart, Scale, Series, Style, Tone};
use super::summary::summary;
use super::trial::trial;
use super::{Preparation, Row, SHEET_FORMAT, Sheet, Table, series};

/// What a configuration type adds to the generic sheet (its sheet hook).
#[derive(Clone, Debug, Default)]
pub(crate) struct Extras {
    /// The run's name; the file stem when absent.
    pub(crate) name: Option<String>,
    /// Free text about the run.
    pub(crate) notes: Option<String>,
    /// Tables after the plan and the lengths.
    pub(crate) tables: Vec<Table>,
    /// Expected supervised tokens per update when lengths vary (the engine
    /// counts the real ones), for converting token spans.
    pub(crate) expected_tokens_per_update: Option<u64>,
    /// The learning-rate schedule, drawn over the whole run.
    pub(crate) schedule: Option<LrSchedule>,
    /// How one pass over the data splits into updates.
    pub(crate) epoch: Option<Epoch>,
    /// The gradient-clipping threshold, drawn on the gradient norm.
    pub(crate) clip_norm: Option<f64>,
}

/// A configured learning-rate schedule: its section and peak rate.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LrSchedule {
    /// Shape, warmup and total, in any unit.
    pub(crate) section: ScheduleSection,
    /// The peak learning rate the shape scales.
    pub(crate) peak_lr: f64,
}

/// Builds the sheet of `config` (read from the file `source`).
pub(crate) fn build<T: AccumConfig>(
    config: &T,
    plan: &Plan,
    source: &str,
    extras: Extras,
    report: Option<(String, &RunReport)>,
) -> Sheet {
    let name = extras.name.clone().unwrap_or_else(|| {
        std::path::Path::new(source)
            .file_stem()
            .map_or_else(|| source.to_owned(), |s| s.to_string_lossy().into_owned())
    });
    let expected = extras.expected_tokens_per_update;
    let schedule = extras.schedule.as_ref().map(|s| {
        Schedule::resolve(&s.section, s.peak_lr, plan, expected).map(|resolved| (s, resolved))
    });
    let mut tables = vec![plan_table(plan, expected)];
    let mut spans = Vec::new();
    config.span_values(&FieldPath::root(), &mut spans);
    if !spans.is_empty() {
        tables.push(Table {
            title: "Lengths in every unit".into(),
            rows: spans
                .iter()
                .map(|v| {
                    Row::new(
                        v.path.to_string(),
                        v.span.to_string(),
                        in_every_unit(&v.span, plan, expected),
                    )
                })
                .collect(),
        });
    }
    tables.extend(extras.tables.iter().cloned());
    let mut charts = Vec::new();
    match &schedule {
        Some(Ok((configured, resolved))) => {
            charts.push(schedule_chart(configured, resolved, plan, expected));
        }
        Some(Err(err)) => tables.push(Table {
            title: "Learning-rate schedule".into(),
            rows: vec![Row::new("not drawn", "", err.to_string())],
        }),
        None => {}
    }
    let planned_updates = match &schedule {
        Some(Ok((_, resolved))) => Some(resolved.total().get()),
        _ => None,
    };
    // The report's series, read once (from its stats stream when it names one).
    let run = report
        .as_ref()
        .map(|(source, report)| series::read(report, Path::new(source)));
    let trial = report
        .as_ref()
        .zip(run.as_ref())
        .map(|((source, report), run)| trial(source.clone(), report, run, plan, &extras));
    let summary = summary(
        plan,
        &extras,
        planned_updates,
        report.as_ref().map(|(_, r)| *r),
        run.as_ref(),
    );
    Sheet {
        format: SHEET_FORMAT,
        name,
        notes: extras.notes,
        config: source.to_owned(),
        summary,
        preparation: Preparation { tables, charts },
        trial,
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
            "per optimizer update, per replica; gradients reduced once, after the last",
        ),
    ];
    match plan.layout() {
        Some(l) => rows.push(Row::new(
            "data-parallel replicas D",
            n(plan.replicas()),
            format!(
                "D = world_size / (tp·pp·cp) = {} / ({} × {} × {}); model-parallel devices are not replicas",
                l.world_size, l.tensor, l.pipeline, l.context
            ),
        )),
        None => rows.push(Row::new(
            "data-parallel replicas D",
            n(plan.replicas()),
            "model copies that see different examples",
        )),
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
            "expected from the data's length range; lengths vary, so the engine counts the real tokens of each group",
        )),
        _ => rows.push(Row::new(
            "tokens per update",
            "counted per group",
            "no fixed seq_len: variable or packed lengths need token accounting",
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
        title: "Plan".into(),
        rows,
    }
}

/// `"= 300 updates = 19,200 examples = 768,000 tokens"`, with `≈` where the
/// token count is an expectation or a conversion rounds.
pub(crate) fn in_every_unit(span: &Span, plan: &Plan, expected_tokens: Option<u64>) -> String {
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
        format!("{approx} {}", count(updates, "update")),
        format!(
            "{approx} {} per replica",
            count(updates.saturating_mul(plan.accumulation()), "microbatch")
        ),
        format!("{approx} {}", count(updates.saturating_mul(b), "example")),
    ];
    if let Some((per, is_exact)) = tokens_per_update {
        let sign = if exact && is_exact { "=" } else { "≈" };
        parts.push(format!(
            "{sign} {}",
            count(updates.saturating_mul(per), "token")
        ));
    }
    parts.join(" ")
}

/// `"1 update"`, `"2,048 examples"`.
fn count(n: u64, unit: &str) -> String {
    match (n, unit) {
        (1, _) => format!("1 {unit}"),
        (_, "microbatch") => format!("{} microbatches", group_digits(n)),
        _ => format!("{} {unit}s", group_digits(n)),
    }
}

/// The learning rate a schedule gives after each applied update, with x in
/// updates and further scales in examples and tokens.
pub(super) fn schedule_chart(
    configured: &LrSchedule,
    schedule: &Schedule,
    plan: &Plan,
    expected_tokens: Option<u64>,
) -> Chart {
    let n = group_digits;
    let total = schedule.total().get();
    let warmup = schedule.warmup().get();
    // Every update of a short run; evenly spaced samples of a long one,
    // with the end of warmup and the end kept exactly.
    let samples = super::chart::MAX_LINE_POINTS as u64;
    let mut at: Vec<u64> = if total <= samples {
        (0..=total).collect()
    } else {
        (0..=samples)
            .map(|i| (u128::from(total) * u128::from(i) / u128::from(samples)) as u64)
            .collect()
    };
    at.extend([warmup.min(total), warmup.saturating_sub(1).min(total)]);
    at.sort_unstable();
    at.dedup();
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
    let b = plan.effective_batch().get() as f64;
    let mut scales = vec![Scale {
        label: "examples".into(),
        knots: vec![[0.0, 0.0], [1.0, b]],
        approximate: false,
    }];
    match (plan.tokens_per_update(), expected_tokens) {
        (Some(t), _) => scales.push(Scale {
            label: "tokens".into(),
            knots: vec![[0.0, 0.0], [1.0, t.get() as f64]],
            approximate: false,
        }),
        (None, Some(t)) => scales.push(Scale {
            label: "tokens".into(),
            knots: vec![[0.0, 0.0], [1.0, t as f64]],
            approximate: true,
        }),
        (None, None) => {}
    }
    let shape = match configured.section.kind {
        ScheduleKind::Constant => "then constant".to_owned(),
        ScheduleKind::Linear => format!("then linear to 0 at {} updates", n(total)),
        ScheduleKind::Cosine => format!("then cosine to 0 at {} updates", n(total)),
    };
    let written = configured.section.warmup;
    let as_written = if written.unit() == UnitKind::Update {
        String::new()
    } else {
        format!(" ({written})")
    };
    let caption = format!(
        "Peak {} after a warmup of {}{as_written}, {shape}; the schedule steps once per applied update, so a skipped update does not advance it.",
        super::setting(configured.peak_lr),
        count(warmup, "update"),
    );
    Chart {
        id: "schedule".into(),
        title: "Learning-rate schedule".into(),
        caption,
        x: Axis::count("updates"),
        x_scales: scales,
        y: Axis {
            from_zero: true,
            ..Axis::linear("learning rate")
        },
        series,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sheet::chart::LogBase;
    use crate::sheet::tests::{fp16_sheet, has_rule_id};
    use crate::sheet::without_rule_ids;

    #[test]
    fn an_fp16_run_that_skipped_updates() {
        let (sheet, report) = fp16_sheet();
        let c = &report.counters;
        assert!(c.skipped_updates > 0, "the fixture skips updates");
        let s = &sheet.summary;
        assert_eq!((s.micro_batch, s.accumulation, s.replicas), (4, 2, 2));
        assert_eq!(s.effective_batch, 16);
        assert_eq!(s.planned_updates, Some(60));
        assert_eq!(s.applied_updates, Some(c.applied_updates.get()));
        assert_eq!(s.skipped_updates, Some(c.skipped_updates));
        let tokens = c.supervised_tokens.get() as f64 / c.update_attempts as f64;
        assert_eq!(s.tokens_per_update, Some(tokens));
        let seen = (c.examples.get() + c.dropped_examples.get()) as f64;
        assert_eq!(s.epochs, Some(seen / 200.0));
        assert_eq!(s.planned_epochs, Some(60.0 / 12.0));
        let labels: Vec<&str> = s.cards.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "effective batch B",
                "tokens per update",
                "updates",
                "epochs",
                "final loss"
            ]
        );
        assert_eq!(s.cards[0].detail, "B = m·A·D = 4 × 2 × 2 = 16");
        assert!(s.cards[2].alert, "skipped updates need attention");
        let last = report.loss_curve.points.last().expect("logged points");
        assert_eq!(s.final_loss, Some(last.loss));

        let titles: Vec<&str> = sheet
            .preparation
            .tables
            .iter()
            .map(|t| t.title.as_str())
            .collect();
        assert_eq!(
            titles,
            [
                "Plan",
                "Lengths in every unit",
                "Loss and precision",
                "Optimizer and schedule",
                "Data and last group",
                "Model"
            ]
        );
        let lengths: Vec<(&str, &str)> = sheet.preparation.tables[1]
            .rows
            .iter()
            .map(|r| (r.label.as_str(), r.value.as_str()))
            .collect();
        assert_eq!(
            lengths,
            [
                ("schedule.warmup", "64 examples"),
                ("schedule.total", "60 updates"),
                ("log.every", "32 examples")
            ]
        );

        let ids: Vec<&str> = sheet.charts().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["schedule", "loss", "grad-norm", "loss-scale"]);
        let trial = sheet.trial.as_ref().expect("a trial");
        let skipped = c.skipped_updates as usize;
        for chart in &trial.charts {
            let crosses = chart
                .series
                .iter()
                .find(|s| s.style == Style::Crosses)
                .expect("skipped updates are marked on every trial chart");
            assert_eq!(crosses.name, format!("skipped update ({skipped})"));
            assert_eq!(chart.x.label, "examples");
        }
        let loss = &trial.charts[0].series[0];
        assert_eq!(loss.style, Style::LineWithPoints);
        assert_eq!(
            loss.points.len(),
            report.loss_curve.points.len(),
            "every logged point"
        );
        let scale = &trial.charts[2];
        assert_eq!(scale.y.log, Some(LogBase::Two));
        assert_eq!(scale.series[0].points[0][1], 16_777_216.0);
        assert_eq!(scale.series[0].points.len(), c.update_attempts as usize);
        let clip = &trial.charts[1].series[1];
        assert_eq!((clip.style, clip.points[0][1]), (Style::Reference, 1.0));
    }

    #[test]
    fn the_schedule_over_the_whole_run_in_three_units() {
        let (sheet, _) = fp16_sheet();
        let chart = &sheet.preparation.charts[0];
        assert_eq!(chart.x.label, "updates");
        let scales: Vec<(&str, bool)> = chart
            .x_scales
            .iter()
            .map(|s| (s.label.as_str(), s.approximate))
            .collect();
        assert_eq!(scales, [("examples", false), ("tokens", true)]);
        assert_eq!(chart.x_scales[0].value_at(60.0), 960.0);
        assert_eq!(
            chart.x_scales[1].value_at(1.0),
            128.0,
            "expected tokens per update"
        );
        let lr = &chart.series[0].points;
        assert_eq!(lr.len(), 61, "every update of a short run");
        assert_eq!(lr[0], [0.0, 0.0]);
        // Warmup of 64 examples is 4 updates: the peak comes at update 4.
        assert_eq!(lr[4], [4.0, 0.01]);
        assert!(lr[60][1].abs() < 1e-12, "cosine to zero at the end");
        let warmup = &chart.series[1];
        assert_eq!(warmup.points, vec![[4.0, 0.0], [4.0, 0.01]]);
    }

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
        let chart = schedule_chart(&configured, &resolved, &plan, None);
        let points = &chart.series[0].points;
        assert!(points.len() <= super::super::chart::MAX_LINE_POINTS + 3);
        assert!(
            points.contains(&[2_001.0, 3e-4]),
            "the end of warmup is kept"
        );
        assert_eq!(points.last().map(|p| p[0]), Some(1_000_000.0));
        assert_eq!(chart.x_scales.len(), 1, "no tokens without a length");
    }

    /// A user's own config type: no sheet hook, only what the derive knows.
    #[derive(serde::Deserialize, accum_core::AccumConfig)]
    #[accum(crate = "accum_core")]
    struct Custom {
        #[accum(micro_batch)]
        micro: u32,
        #[accum(accumulation)]
        accum: u32,
        #[accum(replicas)]
        dp: u32,
        #[accum(seq_len)]
        len: u32,
        warmup: Span,
        cooldown: Option<Span>,
    }

    #[test]
    fn a_derived_config_type_gets_its_plan_and_lengths() {
        let config: Custom =
            toml::from_str("micro = 2\naccum = 8\ndp = 2\nlen = 1024\nwarmup = \"64k tokens\"\n")
                .expect("toml");
        let plan = config.plan().expect("plan");
        let sheet = build(&config, &plan, "runs/my-run.toml", Extras::default(), None);
        assert_eq!(sheet.name, "my-run");
        assert_eq!(sheet.config, "runs/my-run.toml");
        assert!(sheet.preparation.charts.is_empty() && sheet.trial.is_none());
        let lengths = &sheet.preparation.tables[1];
        assert_eq!(lengths.rows.len(), 1, "an absent span is not listed");
        assert_eq!(
            (
                lengths.rows[0].label.as_str(),
                lengths.rows[0].value.as_str()
            ),
            ("warmup", "64k tokens")
        );
        assert_eq!(
            lengths.rows[0].note,
            "≈ 2 updates ≈ 16 microbatches per replica ≈ 64 examples ≈ 65,536 tokens"
        );
        let cards: Vec<(&str, &str)> = sheet
            .summary
            .cards
            .iter()
            .map(|c| (c.label.as_str(), c.value.as_str()))
            .collect();
        assert_eq!(
            cards,
            [
                ("effective batch B", "32 examples"),
                ("tokens per update T", "32,768")
            ]
        );
    }

    #[test]
    fn nothing_shown_cites_a_bare_rule_id() {
        let (mut sheet, _) = fp16_sheet();
        if let Some(trial) = &mut sheet.trial {
            trial
                .warnings
                .push(without_rule_ids("shifted (R8, R14) and skipped (R7)"));
        }
        let json = serde_json::to_string(&sheet).expect("json");
        let html = crate::sheet::html::render(&sheet);
        let md = crate::sheet::markdown::render(&sheet, &|c| Some(format!("{}.svg", c.id)));
        for (format, text) in [("json", &json), ("html", &html), ("md", &md)] {
            assert!(!has_rule_id(text), "{format}: {text}");
        }
        assert!(has_rule_id("a (R13) here") && has_rule_id("(R8, R14)"));
    }
}
