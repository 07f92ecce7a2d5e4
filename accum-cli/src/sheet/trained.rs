//! What a run trained in each stage of a batch ramp-up, beside what the
//! configuration plans for it: the run report's per-stage counters (applied
//! and skipped updates, examples, tokens) next to the updates, examples and
//! tokens the stage lasts within the run.

use accum_core::group_digits;
use accum_core::plan::LastGroup;
use accum_core::report::{RunReport, StageCounters};
use accum_core::settings::LogAxis;
use serde::Serialize;

use super::axes::{Axes, Position, TokenCount, count as count_of};
use super::chart::{Mark, Marks};
use super::grid::{Column, Grid, GridRow};
use super::schedule::MAX_STAGE_MARKS;
use super::stages::{HEAD_ROWS, gap_row, shown_rows};

/// One stage: planned and trained.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct TrainedStage {
    /// The stage, counted from 1.
    pub(crate) stage: usize,
    /// `B` the configuration plans for the stage; absent for a stage the
    /// configuration does not have.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) planned_batch: Option<u64>,
    /// `A` the configuration plans for the stage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) planned_accumulation: Option<u64>,
    /// What the stage lasts within the planned run; absent when the run's
    /// length is unknown or the configuration has no such stage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) planned: Option<Position>,
    /// What the run did in the stage; absent for a stage it did not reach.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) trained: Option<StageCounters>,
}

/// The stages of a ramp-up as a run trained them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct TrainedStages {
    /// Whether planned token counts are exact or expected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tokens: Option<TokenCount>,
    /// Every stage of the plan or the report, or the first and last ones of
    /// a long ramp.
    pub(crate) rows: Vec<TrainedStage>,
    /// Stages left out between the first and the last rows.
    #[serde(skip_serializing_if = "is_zero")]
    pub(crate) omitted: usize,
    /// What the whole run lasts as planned, when its length is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) planned_run: Option<Position>,
    /// The whole run's counters, the sum over its stages.
    pub(crate) run: Totals,
    /// Where the run differs from its plan, stage by stage.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) notes: Vec<String>,
    /// What the settings made happen as expected: stages whose last group
    /// held only what was left of an epoch (last group: process).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) remarks: Vec<String>,
}

/// What a whole run trained.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Totals {
    /// Applied optimizer updates.
    pub(crate) applied_updates: u64,
    /// Update attempts skipped for non-finite gradients.
    pub(crate) skipped: u64,
    /// Examples of every attempt.
    pub(crate) examples: u64,
    /// Supervised tokens of every attempt.
    pub(crate) tokens: u64,
}

/// Notes on stages that differ from their plan a sheet lists at most: the
/// first ones, then their count.
const MAX_NOTES: usize = 8;

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The trained stages of `report` beside the stages of `axes` within a run
/// of `run_updates` planned updates; `None` when neither the configuration
/// nor the report has more than one stage, or the report keeps no
/// per-stage counters.
pub(crate) fn trained(
    axes: &Axes,
    report: &RunReport,
    run_updates: Option<u64>,
) -> Option<TrainedStages> {
    let planned_stages = axes.staged().stages();
    let count = planned_stages.len().max(report.stages.len());
    // A report written before runs kept per-stage counters has none.
    if count < 2 || report.stages.is_empty() {
        return None;
    }
    let run_updates = run_updates.or(Some(report.total_updates.get()).filter(|u| *u > 0));
    let n = group_digits;
    let mut notes = Vec::new();
    let mut remarks = Vec::new();
    let all: Vec<TrainedStage> = (0..count)
        .map(|i| {
            let stage = planned_stages.get(i);
            let planned = stage.zip(run_updates).map(|(stage, total)| {
                let start = stage.start().get().min(total);
                let end = stage.end().map_or(total, |e| e.get().min(total));
                axes.between(&axes.position(start), &axes.position(end))
            });
            let trained = report.stages.get(i).copied();
            let planned_batch = stage.map(|s| s.plan().effective_batch().get());
            if let (Some(stage), Some(t)) = (stage, &trained) {
                let plan = stage.plan();
                if (t.plan.micro_batch, t.plan.accumulation, t.plan.replicas)
                    != (plan.micro_batch(), plan.accumulation(), plan.replicas())
                {
                    notes.push(format!(
                        "Stage {} trained m {} × A {} × D {} = {}, but the configuration plans m {} × A {} × D {} = {}: the report belongs to other stages.",
                        i + 1,
                        t.plan.micro_batch,
                        t.plan.accumulation,
                        t.plan.replicas,
                        n(t.plan.effective_batch),
                        plan.micro_batch(),
                        plan.accumulation(),
                        plan.replicas(),
                        n(plan.effective_batch().get())
                    ));
                }
            }
            if let (Some(p), Some(t)) = (&planned, &trained) {
                let applied = t.applied_updates.get();
                let examples = t.examples.get();
                if applied != p.updates && !report.stopped_early {
                    notes.push(format!(
                        "Stage {} applied {} where the plan has {}.",
                        i + 1,
                        count_of(applied, "update"),
                        count_of(p.updates, "update")
                    ));
                } else if applied == p.updates && t.skipped == 0 && examples < p.examples {
                    // A group that ends an epoch holds what is left of it:
                    // what `last_group = "process"` asks for, not an alert.
                    let fewer = format!(
                        "Stage {} trained {} fewer examples than its {} of B = {} hold",
                        i + 1,
                        n(p.examples - examples),
                        count_of(applied, "update"),
                        n(t.plan.effective_batch)
                    );
                    if report.last_group == LastGroup::Process {
                        remarks.push(format!(
                            "{fewer}: groups that end an epoch hold only what is left of it (last group: process)."
                        ));
                    } else {
                        notes.push(format!("{fewer}."));
                    }
                }
            }
            TrainedStage {
                stage: i + 1,
                planned_batch,
                planned_accumulation: stage.map(|s| s.plan().accumulation()),
                planned,
                trained,
            }
        })
        .collect();
    let reached = report.stages.len();
    if reached < planned_stages.len() {
        let expected_reach = run_updates.map_or(planned_stages.len(), |total| {
            planned_stages
                .iter()
                .filter(|s| s.start().get() < total)
                .count()
        });
        if reached < expected_reach {
            notes.push(format!(
                "The run reached {} of the {} stages it plans{}.",
                n(reached as u64),
                n(expected_reach as u64),
                if report.stopped_early {
                    ": it stopped early"
                } else {
                    ""
                }
            ));
        }
    }
    bound(&mut notes);
    bound(&mut remarks);
    let rows: Vec<TrainedStage> = shown_rows(all.len())
        .into_iter()
        .map(|i| all[i].clone())
        .collect();
    let omitted = all.len() - rows.len();
    Some(TrainedStages {
        tokens: axes.tokens(),
        rows,
        omitted,
        planned_run: run_updates.map(|u| axes.position(u)),
        run: Totals {
            applied_updates: report.counters.applied_updates.get(),
            skipped: report.counters.skipped_updates,
            examples: report.counters.examples.get(),
            tokens: report.counters.supervised_tokens.get(),
        },
        notes,
        remarks,
    })
}

/// The stage starts of a run's ramp-up on the axis it logged against (the
/// applied updates, examples or supervised tokens of the stages before),
/// for its loss, gradient-norm and loss-scale plots; `None` with one stage.
/// Past [`MAX_STAGE_MARKS`] stage starts, only the last is marked, as the
/// end of the ramp: a report of 100,000 stages drew 100,000 labelled lines
/// in every plot.
pub(crate) fn stage_marks(report: &RunReport, axis: LogAxis) -> Option<Marks> {
    if report.stages.len() < 2 {
        return None;
    }
    let long = report.stages.len() - 1 > MAX_STAGE_MARKS;
    let mut before = 0u64;
    let mut at = Vec::with_capacity((report.stages.len() - 1).min(MAX_STAGE_MARKS));
    let last = report.stages.len() - 1;
    for (i, stage) in report.stages.iter().enumerate() {
        if i > 0 && (!long || i == last) {
            at.push(Mark {
                x: before as f64,
                label: format!("B {}", group_digits(stage.plan.effective_batch)),
            });
        }
        before = before.saturating_add(match axis {
            LogAxis::Updates => stage.applied_updates.get(),
            LogAxis::Examples => stage.examples.get(),
            LogAxis::Tokens => stage.tokens.get(),
        });
    }
    Some(Marks {
        name: if long {
            "start of the last stage".into()
        } else {
            "stage start".into()
        },
        at,
    })
}

/// One note per stage, for the first `MAX_NOTES − 1` such stages; then how
/// many more there are.
fn bound(notes: &mut Vec<String>) {
    if notes.len() > MAX_NOTES {
        let more = notes.len() - (MAX_NOTES - 1);
        notes.truncate(MAX_NOTES - 1);
        notes.push(format!(
            "… and {} more notes like these on later stages ({} in all).",
            group_digits(more as u64),
            group_digits((more + MAX_NOTES - 1) as u64)
        ));
    }
}

impl TrainedStages {
    /// The columns of [`cells`](Self::cells).
    pub(crate) fn header(&self) -> Vec<Column> {
        let mut columns = vec![
            Column::new("stage", true),
            Column::new("B", true),
            Column::new("A", true),
        ];
        columns.push(Column::grouped(
            "planned",
            "updates",
            "planned updates",
            true,
        ));
        columns.push(Column::grouped(
            "planned",
            "examples",
            "planned examples",
            true,
        ));
        match self.tokens {
            Some(TokenCount::Exact) => {
                columns.push(Column::grouped("planned", "tokens", "planned tokens", true))
            }
            Some(TokenCount::Expected) => columns.push(Column::grouped(
                "planned",
                "tokens (expected)",
                "planned tokens (expected)",
                true,
            )),
            None => {}
        }
        columns.extend([
            Column::grouped("trained", "applied", "applied updates", true),
            Column::grouped("trained", "skipped", "skipped attempts", true),
            Column::grouped("trained", "examples", "trained examples", true),
            Column::grouped(
                "trained",
                "supervised tokens",
                "trained supervised tokens",
                true,
            ),
        ]);
        columns
    }

    /// The cells of a row, in the order of [`header`](Self::header).
    pub(crate) fn cells(&self, row: &TrainedStage) -> Vec<String> {
        let n = group_digits;
        let dash = || "—".to_owned();
        let approx = TokenCount::prefix(self.tokens);
        let (batch, accumulation) = match (&row.trained, row.planned_batch) {
            (Some(t), _) => (Some(t.plan.effective_batch), Some(t.plan.accumulation)),
            (None, batch) => (batch, row.planned_accumulation),
        };
        let mut cells = vec![
            n(row.stage as u64),
            batch.map_or_else(dash, n),
            accumulation.map_or_else(dash, n),
        ];
        cells.push(row.planned.map_or_else(dash, |p| n(p.updates)));
        cells.push(row.planned.map_or_else(dash, |p| n(p.examples)));
        if self.tokens.is_some() {
            cells.push(
                row.planned
                    .and_then(|p| p.tokens)
                    .map_or_else(dash, |t| format!("{approx}{}", n(t))),
            );
        }
        match &row.trained {
            Some(t) => cells.extend([
                n(t.applied_updates.get()),
                n(t.skipped),
                n(t.examples.get()),
                n(t.tokens.get()),
            ]),
            None => {
                cells.push("not reached".to_owned());
                cells.extend([String::new(), String::new(), String::new()]);
            }
        }
        cells
    }

    /// The table to draw, with the run's totals in its last row.
    pub(crate) fn grid(&self) -> Grid {
        let mut rows = Vec::with_capacity(self.rows.len() + 2);
        for (i, row) in self.rows.iter().enumerate() {
            if self.omitted > 0 && i == HEAD_ROWS {
                rows.push(gap_row(self.omitted));
            }
            rows.push(GridRow::Cells {
                cells: self.cells(row),
                muted: row.trained.is_none(),
            });
        }
        let c = &self.run;
        let n = group_digits;
        let approx = TokenCount::prefix(self.tokens);
        let mut total = vec!["all".to_owned(), String::new(), String::new()];
        let planned = self.planned_run;
        total.push(planned.map_or_else(String::new, |p| n(p.updates)));
        total.push(planned.map_or_else(String::new, |p| n(p.examples)));
        if self.tokens.is_some() {
            total.push(
                planned
                    .and_then(|p| p.tokens)
                    .map_or_else(String::new, |t| format!("{approx}{}", n(t))),
            );
        }
        total.extend([
            n(c.applied_updates),
            n(c.skipped),
            n(c.examples),
            n(c.tokens),
        ]);
        rows.push(GridRow::Cells {
            cells: total,
            muted: false,
        });
        Grid {
            id: "trained-stages",
            title: "Trained per stage".into(),
            lead: "What the run did in each stage of the ramp-up, beside what the configuration plans for it within the run: applied updates, skipped attempts (retried in the same stage), and the examples and supervised tokens of every attempt; the last row is the whole run.".into(),
            columns: self.header(),
            rows,
            notes: self.notes.clone(),
            remarks: self.remarks.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sheet::stages::MAX_ROWS;
    use accum_core::AccumConfig;
    use accum_core::config::TrainingConfig;
    use accum_core::plan::{LinearRamp, StagedPlan};

    /// The three-stage fixture, its axes and the report of its run.
    fn rampup() -> (Axes, RunReport) {
        let config: TrainingConfig =
            toml::from_str(crate::sheet::tests::RAMPUP).expect("the fixture parses");
        let staged = config.staged_plan().expect("the fixture has stages");
        let report = accum_core::engine::run(staged.clone(), &config.engine_config())
            .expect("the fixture runs");
        (Axes::new(staged, None), report)
    }

    #[test]
    fn each_stage_beside_its_plan_and_the_sums_are_the_run() {
        let (axes, report) = rampup();
        let table = trained(&axes, &report, Some(235)).expect("three stages");
        let planned: Vec<u64> = table
            .rows
            .iter()
            .filter_map(|r| r.planned.map(|p| p.updates))
            .collect();
        assert_eq!(planned, [20, 40, 175]);
        let applied: Vec<u64> = table
            .rows
            .iter()
            .filter_map(|r| r.trained.map(|t| t.applied_updates.get()))
            .collect();
        assert_eq!(applied, planned);
        let examples: u64 = table
            .rows
            .iter()
            .filter_map(|r| r.trained.map(|t| t.examples.get()))
            .sum();
        assert_eq!(examples, table.run.examples);
        assert_eq!(table.run.examples, 12_800);
        assert!(table.notes.is_empty(), "{:?}", table.notes);
        let grid = table.grid();
        let Some(GridRow::Cells { cells, .. }) = grid.rows.last() else {
            panic!("a last row of cells");
        };
        assert_eq!(
            cells,
            &[
                "all", "", "", "235", "12,800", "409,600", "235", "0", "12,800", "409,600"
            ]
        );
        assert_eq!(grid.columns.len(), cells.len());
    }

    #[test]
    fn a_report_of_other_stages_or_a_short_run_says_so() {
        let (axes, mut report) = rampup();
        report.stages[1].plan.accumulation = 8;
        report.stages[1].plan.effective_batch = 64;
        report.stages.truncate(2);
        let table = trained(&axes, &report, Some(235)).expect("three stages");
        assert_eq!(
            table.notes,
            [
                "Stage 2 trained m 4 × A 8 × D 2 = 64, but the configuration plans m 4 × A 4 × D 2 = 32: the report belongs to other stages.",
                "The run reached 2 of the 3 stages it plans."
            ]
        );
        let last = &table.rows[2];
        assert!(last.trained.is_none());
        let cells = table.cells(last);
        assert_eq!(cells[..4], ["3", "64", "8", "175"]);
        assert_eq!(cells[6], "not reached");
        assert!(matches!(
            table.grid().rows[2],
            GridRow::Cells { muted: true, .. }
        ));

        report.stages[0].applied_updates = accum_core::Updates::new(19);
        report.stopped_early = true;
        let table = trained(&axes, &report, Some(235)).expect("three stages");
        assert_eq!(
            table.notes.last().map(String::as_str),
            Some("The run reached 2 of the 3 stages it plans: it stopped early.")
        );
        assert!(
            !table.notes.iter().any(|n| n.starts_with("Stage 1")),
            "a run stopped early applies fewer updates than planned"
        );
        report.stopped_early = false;
        let table = trained(&axes, &report, Some(235)).expect("three stages");
        assert_eq!(
            table.notes[0],
            "Stage 1 applied 19 updates where the plan has 20 updates."
        );
    }

    /// A stage that ends an epoch with a partial group, as `last_group =
    /// "process"` asks, is remarked on in the text colour; the same shortfall
    /// under another policy is an alert.
    #[test]
    fn an_expected_partial_group_is_a_remark_not_an_alert() {
        let (axes, mut report) = rampup();
        let full = report.stages[0].examples.get();
        report.stages[0].examples = accum_core::Examples::new(full - 3);
        report.last_group = LastGroup::Process;
        let table = trained(&axes, &report, Some(235)).expect("three stages");
        assert!(table.notes.is_empty(), "{:?}", table.notes);
        assert_eq!(table.remarks.len(), 1, "{:?}", table.remarks);
        assert!(
            table.remarks[0].starts_with("Stage 1 trained 3 fewer examples"),
            "{:?}",
            table.remarks
        );
        let mut html = String::new();
        table.grid().html(&mut html);
        assert!(
            html.contains("<p class=\"remark\">Stage 1 trained 3 fewer"),
            "{html}"
        );
        assert!(!html.contains("class=\"note\""), "{html}");

        report.last_group = LastGroup::Drop;
        let table = trained(&axes, &report, Some(235)).expect("three stages");
        assert!(table.remarks.is_empty(), "{:?}", table.remarks);
        assert_eq!(table.notes.len(), 1, "{:?}", table.notes);
    }

    #[test]
    fn one_stage_or_a_report_without_stage_counters_has_no_table() {
        let (_, report) = rampup();
        // The fixture's full batch, m 4 × A 8 × D 2, as one stage.
        let plan = accum_core::plan::Plan::new(4, 8, 2).expect("a plan");
        let axes = Axes::new(StagedPlan::constant(plan), None);
        let mut constant = report.clone();
        constant.stages.truncate(1);
        assert!(trained(&axes, &constant, Some(235)).is_none());
        // A report without per-stage counters, under the three stages.
        let (staged, _) = rampup();
        let mut older = report.clone();
        older.stages.clear();
        assert!(trained(&staged, &older, Some(235)).is_none());
        assert!(stage_marks(&constant, LogAxis::Tokens).is_none());
        let marks = stage_marks(&report, LogAxis::Updates).expect("three stages");
        let at: Vec<(f64, &str)> = marks.at.iter().map(|m| (m.x, m.label.as_str())).collect();
        assert_eq!(at, [(20.0, "B 32"), (60.0, "B 64")]);
    }

    #[test]
    fn a_long_ramp_keeps_its_first_and_last_stages() {
        let (_, report) = rampup();
        let staged = StagedPlan::linear(
            &accum_core::plan::Plan::new(1, 400, 1).expect("a plan"),
            &LinearRamp {
                start: 1,
                increment: 1,
                over: "80000 examples".parse().expect("a span"),
            },
        )
        .expect("a linear ramp");
        let stages = staged.stages().len();
        assert!(stages > MAX_ROWS, "{stages} stages");
        let axes = Axes::new(staged, None);
        let table = trained(&axes, &report, Some(1_000_000)).expect("many stages");
        assert_eq!(table.rows.len(), MAX_ROWS);
        assert_eq!(table.omitted, stages - MAX_ROWS);
        assert_eq!(
            table.rows[HEAD_ROWS].stage,
            stages - (MAX_ROWS - HEAD_ROWS) + 1
        );
        let grid = table.grid();
        assert_eq!(
            grid.rows[HEAD_ROWS],
            GridRow::Gap(format!(
                "{} more stages",
                group_digits(table.omitted as u64)
            ))
        );
    }
}
