//! Building a [`Sheet`] from a typed configuration, its plan, what the
//! configuration type adds ([`Extras`]) and an optional run report. Nothing
//! here reads the configuration file again: any `#[derive(AccumConfig)]`
//! type gets its plan and its lengths ([`AccumConfig::span_values`]), and a
//! type's sheet hook adds the rest.

use std::path::Path;

use accum_core::Tokens;
use accum_core::plan::{Plan, StagedPlan};
use accum_core::report::RunReport;
use accum_core::schedule::{Schedule, ScheduleError};
use accum_core::{AccumConfig, FieldPath, RampUp, Span, SpanUse, UnitKind, group_digits};

use super::axes::{Axes, TokenCount, count};
use super::extras::{Extras, LrSchedule};
use super::schedule::charts;
use super::stages::{Declared, Ramp};
use super::summary::headline;
use super::trial::trial;
use super::{Preparation, Row, SHEET_FORMAT, Sheet, Table, series, stages, trained};

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
    // Every position in examples and tokens goes through the stages (one
    // stage when the batch does not change).
    let ramp = ramp_of(config);
    let ramp = ramp.as_ref();
    let staged = ramp.map_or_else(|| StagedPlan::constant(*plan), |r| r.staged.clone());
    let axes = Axes::new(staged, expected);
    let schedule = extras
        .schedule
        .as_ref()
        .map(|s| resolve_schedule(s, axes.staged(), expected).map(|resolved| (s, resolved)));
    let planned_updates = match &schedule {
        Some(Ok((_, resolved))) => Some(resolved.total().get()),
        _ => None,
    };
    let mut tables = vec![plan_table(plan, expected, ramp.is_some())];
    let mut spans = Vec::new();
    config.span_values(&FieldPath::root(), &mut spans);
    if !spans.is_empty() {
        // With a ramp-up, a length counted from the start of the run goes
        // through the stages; an interval means a different amount in each
        // stage. Either way, the full batch makes something else of it:
        // both are shown where they differ.
        let full = ramp.map(|_| Axes::new(StagedPlan::constant(*plan), expected));
        let first = ramp.map(|r| {
            let first = *r.staged.first_plan();
            let tokens = axes.tokens_per_update(first.effective_batch().get());
            Axes::new(StagedPlan::constant(first), tokens)
        });
        // Without a fixed seq_len or an expected length, a length in tokens
        // is counted as the run goes; a report's data says what it came to.
        let measured = report
            .as_ref()
            .filter(|_| axes.tokens().is_none())
            .and_then(|(_, r)| measured_tokens_per_update(r, axes.staged()))
            .map(|(per_update, per_example)| {
                (
                    Axes::new(axes.staged().clone(), Some(per_update)),
                    per_example,
                )
            });
        tables.push(Table {
            title: if ramp.is_some() {
                "Lengths in every unit, through the stages".into()
            } else {
                "Lengths in every unit".into()
            },
            rows: spans
                .iter()
                .map(|v| {
                    let interval = v.span_use == Some(SpanUse::Every);
                    let (lead, here) = match (&first, interval) {
                        (Some(first), true) => {
                            ("in the first stage", in_every_unit(&v.span, first))
                        }
                        (Some(_), false) => {
                            ("from the start of the run", in_every_unit(&v.span, &axes))
                        }
                        (None, _) => ("", in_every_unit(&v.span, &axes)),
                    };
                    let note = match full.as_ref().map(|f| in_every_unit(&v.span, f)) {
                        Some(at_full) if at_full != here => {
                            format!("{lead} {here}; at the full batch {at_full}")
                        }
                        _ => here,
                    };
                    let note = match &measured {
                        Some((measured, per_example)) if v.span.unit() == UnitKind::Token => {
                            format!(
                                "{} at the {per_example:.1} supervised tokens per example the run's data held; {note}",
                                in_every_unit(&v.span, measured)
                            )
                        }
                        _ => note,
                    };
                    Row::new(v.path.to_string(), v.span.to_string(), note)
                })
                .collect(),
        });
    }
    tables.extend(extras.tables.iter().cloned());
    let resolved = match &schedule {
        Some(Ok((configured, resolved))) => Some((*configured, resolved)),
        Some(Err(err)) => {
            tables.push(Table {
                title: "Learning-rate schedule".into(),
                rows: vec![Row::new("not drawn", "", err.to_string())],
            });
            None
        }
        None => None,
    };
    let charts = charts(resolved, &axes, planned_updates);
    let stages = ramp.map(|r| stages::table(r, &axes, planned_updates));
    // The report's series, read once (from its stats stream when it names one).
    let run = report
        .as_ref()
        .map(|(source, report)| series::read(report, Path::new(source), report.loss_curve.axis));
    let trial = report
        .as_ref()
        .zip(run.as_ref())
        .map(|((source, report), run)| {
            let stages = trained::trained(&axes, report, planned_updates);
            trial(source.clone(), report, run, plan, &extras, stages)
        });
    let summary = headline(
        &axes,
        &extras,
        planned_updates,
        report.as_ref().map(|(_, r)| *r),
    );
    Sheet {
        format: SHEET_FORMAT,
        name,
        notes: extras.notes,
        config: source.to_owned(),
        mismatch: Vec::new(),
        config_changed: None,
        provenance: report.as_ref().and_then(|(_, r)| r.provenance.clone()),
        summary,
        preparation: Preparation {
            tables,
            stages,
            charts,
        },
        trial,
        accepted: None,
    }
}

/// The schedule the engine steps through, per applied update: its warmup
/// and total resolved through the stages, so that a length in tokens
/// (examples) ends at the same count whatever the stages. With variable
/// lengths, the expected tokens per update of the final plan stand for the
/// data's.
fn resolve_schedule(
    configured: &LrSchedule,
    staged: &StagedPlan,
    expected_tokens: Option<u64>,
) -> Result<Schedule, ScheduleError> {
    let b = staged.final_plan().effective_batch();
    let measured = expected_tokens.map(|t| (Tokens::new(t), b));
    Schedule::resolve_staged(&configured.section, configured.peak_lr, staged, measured)
}

/// The batch ramp-up of any derived config: its one `#[accum(stages)]` or
/// `#[accum(ramp)]` field that holds a value, and the stages it resolves to
/// (a config that reaches the sheet has passed its checks).
fn ramp_of<T: AccumConfig>(config: &T) -> Option<Ramp> {
    let mut values = Vec::new();
    config.ramp_values(&FieldPath::root(), &mut values);
    let [value] = values.as_slice() else {
        return None;
    };
    let declared = match &value.ramp {
        RampUp::Stages(specs) => Declared::Stages {
            field: value.path.to_string(),
            until: specs.iter().filter_map(|s| s.until).collect(),
        },
        RampUp::Linear(ramp) => Declared::Linear {
            field: value.path.to_string(),
            ramp: *ramp,
        },
        RampUp::Unreadable(_) => return None,
    };
    let staged = config.staged_plan().ok()?;
    (!staged.is_constant()).then_some(Ramp { staged, declared })
}

/// The plan's numbers with their formulas; with a ramp-up, the plan is the
/// full batch the last stage trains at, and the title says so.
fn plan_table(plan: &Plan, expected_tokens: Option<u64>, ramped: bool) -> Table {
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
        title: if ramped {
            "Plan after the ramp-up".into()
        } else {
            "Plan".into()
        },
        rows,
    }
}

/// What one update of the final plan held in supervised tokens, from the
/// tokens and examples of the report's data (one epoch), and the tokens per
/// example; `None` when the report counted none.
fn measured_tokens_per_update(report: &RunReport, staged: &StagedPlan) -> Option<(u64, f64)> {
    let (tokens, examples) = (report.data_tokens.get(), report.data_examples.get());
    if tokens == 0 || examples == 0 {
        return None;
    }
    let b = staged.final_plan().effective_batch().get();
    let per_update = (u128::from(tokens) * u128::from(b)).div_ceil(u128::from(examples));
    #[allow(clippy::cast_precision_loss)]
    let per_example = tokens as f64 / examples as f64;
    Some((u64::try_from(per_update).ok()?, per_example))
}

/// `"= 300 updates = 1,200 microbatches per replica = 19,200 examples =
/// 768,000 tokens"`, through the stages of a ramp-up, with `≈` where the
/// token count is an expectation or a conversion rounds.
pub(crate) fn in_every_unit(span: &Span, axes: &Axes) -> String {
    let (updates, exact) = match axes.updates_for(span.value(), span.unit()) {
        Ok(found) => found,
        Err(err) => return err,
    };
    let approx = if exact { "=" } else { "≈" };
    let mut parts = vec![format!("{approx} {}", count(updates, "update"))];
    for (unit, noun, suffix) in [
        (UnitKind::Microbatch, "microbatch", " per replica"),
        (UnitKind::Example, "example", ""),
    ] {
        match axes.at(updates, unit) {
            Ok(v) => parts.push(format!("{approx} {}{suffix}", count(v, noun))),
            Err(err) => return err.to_string(),
        }
    }
    if let Some(tokens) = axes.tokens() {
        let sign = if exact && tokens == TokenCount::Exact {
            "="
        } else {
            "≈"
        };
        match axes.at(updates, UnitKind::Token) {
            Ok(v) => parts.push(format!("{sign} {}", count(v, "token"))),
            Err(err) => return err.to_string(),
        }
    }
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sheet::chart::{LogBase, Style};
    use crate::sheet::tests::{fp16_sheet, has_rule_id};

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
                "loss",
                "loss, windowed means"
            ]
        );
        assert_eq!(s.cards[0].detail, "B = m·A·D = 4 × 2 × 2 = 16");
        assert!(s.cards[2].alert, "skipped updates need attention");
        // The loss cards: the first, final and minimum loss, exact, and
        // the means of windows at both ends of a short run (60 updates:
        // windows of 3), said so.
        let applied: Vec<f64> = report
            .updates
            .iter()
            .filter(|u| u.applied)
            .map(|u| u.loss)
            .collect();
        let min = applied.iter().copied().fold(f64::INFINITY, f64::min);
        assert_eq!(s.first_loss, Some(applied[0]));
        assert_eq!(s.final_loss, Some(applied[applied.len() - 1]));
        assert_eq!(s.min_loss, Some(min));
        assert_eq!(
            s.cards[4].value,
            format!("{:.4} → {:.4}", applied[0], applied[applied.len() - 1])
        );
        assert_eq!(
            s.cards[4].detail,
            format!("first → final applied update, exact; minimum {min:.4}")
        );
        let mean = |w: &[f64]| w.iter().sum::<f64>() / w.len() as f64;
        let window = applied.len() / 20;
        assert_eq!(window, 3);
        assert_eq!(
            s.cards[5].value,
            format!(
                "{:.4} → {:.4}",
                mean(&applied[..3]),
                mean(&applied[applied.len() - 3..])
            )
        );
        assert_eq!(
            s.cards[5].detail,
            format!(
                "means of the first and the last 3 of {} applied updates' group losses",
                applied.len()
            )
        );

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
        assert_eq!(ids, ["schedule", "loss", "lr", "grad-norm", "loss-scale"]);
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
        assert_eq!(loss.points.len(), applied.len(), "every applied update");
        assert_eq!(loss.points[0][1], applied[0], "from the first");
        // The learning rate each applied update used, from the report.
        let lr = &trial.charts[1].series[0];
        let lrs: Vec<f64> = report
            .updates
            .iter()
            .filter(|u| u.applied)
            .map(|u| u.lr)
            .collect();
        assert_eq!(lr.points.iter().map(|p| p[1]).collect::<Vec<_>>(), lrs);
        let scale = &trial.charts[3];
        assert_eq!(scale.y.log, Some(LogBase::Two));
        assert_eq!(scale.series[0].points[0][1], 16_777_216.0);
        assert_eq!(scale.series[0].points.len(), c.update_attempts as usize);
        let clip = &trial.charts[2].series[1];
        assert_eq!((clip.style, clip.points[0][1]), (Style::Reference, 1.0));
    }

    /// A length in tokens that nothing converts ahead (no fixed seq_len and
    /// no expected length, as for a user's own config type) is read through
    /// what the report's data held, not called impossible.
    #[test]
    fn a_length_in_tokens_is_read_through_the_reports_data() {
        use accum_core::AccumConfig;
        let text = crate::sheet::tests::FP16
            .replace("warmup = \"64 examples\"", "warmup = \"400 tokens\"");
        let config: accum_core::config::TrainingConfig =
            toml::from_str(&text).expect("the fixture parses");
        let plan = config.plan().expect("a plan");
        let report =
            accum_core::engine::run(plan, &config.engine_config()).expect("the fixture runs");
        let warmup_row = |report: Option<(String, &RunReport)>| {
            let mut extras = crate::training::sheet_extras(&config, &plan);
            extras.expected_tokens_per_update = None;
            let sheet = build(&config, &plan, "fp16.toml", extras, report);
            sheet
                .preparation
                .tables
                .iter()
                .flat_map(|t| &t.rows)
                .find(|r| r.label == "schedule.warmup")
                .expect("a warmup row")
                .note
                .clone()
        };
        let ahead = warmup_row(None);
        assert!(
            ahead.starts_with("counted in the data's supervised tokens as the run goes"),
            "{ahead}"
        );
        let measured = warmup_row(Some(("run.json".into(), &report)));
        let per_example = report.data_tokens.get() as f64 / report.data_examples.get() as f64;
        // 400 tokens are ⌈400 / tokens per example⌉ examples, in updates of 16.
        let per_update = (report.data_tokens.get() * 16).div_ceil(report.data_examples.get());
        let examples = (400 * 16_u64).div_ceil(per_update);
        let updates = examples.div_ceil(16);
        assert!(
            measured.starts_with(&format!("≈ {} update", updates)),
            "{measured} ({per_example} per example)"
        );
        assert!(
            measured.contains(&format!(
                "at the {per_example:.1} supervised tokens per example the run's data held"
            )),
            "{measured}"
        );
    }

    #[test]
    fn a_run_stopped_early_gets_its_own_card() {
        use accum_core::AccumConfig;
        let (sheet, mut report) = fp16_sheet();
        assert!(
            sheet
                .summary
                .cards
                .iter()
                .all(|c| c.label != "stopped early")
        );
        report.stopped_early = true;
        let config: accum_core::config::TrainingConfig =
            toml::from_str(crate::sheet::tests::FP16).expect("the fixture parses");
        let plan = config.plan().expect("a plan");
        let extras = crate::training::sheet_extras(&config, &plan);
        let sheet = build(
            &config,
            &plan,
            "fp16.toml",
            extras,
            Some(("run.json".into(), &report)),
        );
        let card = sheet
            .summary
            .cards
            .iter()
            .find(|c| c.label == "stopped early")
            .expect("a stopped-early card");
        assert!(card.alert);
        assert_eq!(
            card.value,
            format!("{} of 60 updates", report.counters.applied_updates.get())
        );
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

    /// A user's own config type with a ramp-up field in a nested section:
    /// the sheet finds it through the derive, without a sheet hook.
    #[derive(serde::Deserialize, accum_core::AccumConfig)]
    #[accum(crate = "accum_core", section)]
    struct OwnBatch {
        #[accum(micro_batch)]
        micro: u32,
        #[accum(accumulation)]
        accum: u32,
        #[accum(stages)]
        #[serde(default)]
        ramp_up: Vec<accum_core::plan::StageSpec>,
    }

    #[derive(serde::Deserialize, accum_core::AccumConfig)]
    #[accum(crate = "accum_core", replicas = 2)]
    struct OwnRun {
        #[accum(nested)]
        batch: OwnBatch,
    }

    #[test]
    fn a_derived_config_type_gets_its_ramp_up() {
        let config: OwnRun = toml::from_str(
            "[batch]\nmicro = 4\naccum = 16\n[[batch.ramp_up]]\nglobal_batch = 32\nuntil = \"10 updates\"\n",
        )
        .expect("toml");
        let plan = config.plan().expect("plan");
        let sheet = build(&config, &plan, "own.toml", Extras::default(), None);
        let table = sheet.preparation.stages.as_ref().expect("a stages table");
        assert!(table.declared.starts_with("Declared in batch.ramp_up:"));
        let batches: Vec<u64> = table.rows.iter().map(|r| r.effective_batch).collect();
        assert_eq!(batches, [32, 128]);
        assert_eq!(table.rows[1].start.examples, 320);
        assert_eq!(
            table.cells(&table.rows[0]).last().map(String::as_str),
            Some("10 updates")
        );
        assert_eq!(sheet.summary.cards[0].value, "32 → 128");
        // No schedule: the batch alone, against updates and examples (no
        // tokens without a length).
        let ids: Vec<&str> = sheet.charts().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["schedule", "schedule-examples"]);
        assert_eq!(sheet.preparation.charts[1].title, "Batch against examples");
        let marks = sheet.preparation.charts[1].marks.as_ref().expect("marks");
        assert_eq!(marks.at[0].x, 320.0);
    }

    #[test]
    fn nothing_shown_cites_a_bare_rule_id() {
        let (mut sheet, _) = fp16_sheet();
        if let Some(trial) = &mut sheet.trial {
            trial
                .warnings
                .push("3 update attempts skipped for non-finite gradients".to_owned());
        }
        let ramp = crate::sheet::tests::sheet_of(crate::sheet::tests::RAMPUP);
        for sheet in [&sheet, &ramp] {
            let json = serde_json::to_string(sheet).expect("json");
            let html = crate::sheet::html::render(sheet);
            let md = crate::sheet::markdown::render(sheet, &|c| Some(format!("{}.svg", c.id)));
            for (format, text) in [("json", &json), ("html", &html), ("md", &md)] {
                assert!(!has_rule_id(text), "{format}: {text}");
            }
        }
        assert!(has_rule_id("a (R13) here") && has_rule_id("(R8, R14)"));
    }
}
