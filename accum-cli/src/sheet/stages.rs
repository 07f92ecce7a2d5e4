//! A batch ramp-up on the sheet: how the configuration declared it, the
//! stages table ([`StageTable`]: each stage's `B = m·A·D`, tokens per
//! update, where it starts and what it lasts, counted through the stages
//! by [`Axes`]) and the compact `16 → 32 → 64` of the summary.

use accum_core::plan::{LinearRamp, StagedPlan};
use accum_core::{Span, group_digits};
use serde::Serialize;

use super::axes::{Axes, Position, TokenCount, count};
use super::grid::{Column, Grid, GridRow};

/// Stage rows a sheet lists at most; a longer ramp keeps its first
/// [`HEAD_ROWS`] and its last [`MAX_ROWS`]` − HEAD_ROWS` stages.
pub(super) const MAX_ROWS: usize = 100;
pub(super) const HEAD_ROWS: usize = 80;

/// How a configuration declared its ramp-up, so that the sheet can say so.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Declared {
    /// A list of stages, each ending where its `until` says.
    Stages {
        /// The field that holds the list (`batch.stages`).
        field: String,
        /// Each listed stage's end, as written, in order.
        until: Vec<Span>,
    },
    /// A linear ramp in the style of Megatron-LM's `--rampup-batch-size`.
    Linear {
        /// The field that holds it (`batch.ramp`).
        field: String,
        /// Its start, increment and length.
        ramp: LinearRamp,
    },
}

/// A plan whose batch changes during the run, and how it was declared (the
/// config's `#[accum(stages)]` or `#[accum(ramp)]` field).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Ramp {
    /// The stages, the last one being the full batch.
    pub(crate) staged: StagedPlan,
    /// How the configuration wrote them.
    pub(crate) declared: Declared,
}

/// One stage of the table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct StageRow {
    /// The stage, counted from 1.
    pub(crate) stage: usize,
    /// `m`, the same in every stage.
    pub(crate) micro_batch: u64,
    /// `A` of the stage.
    pub(crate) accumulation: u64,
    /// `D`, the same in every stage.
    pub(crate) replicas: u64,
    /// `B` of the stage.
    pub(crate) effective_batch: u64,
    /// `B = m·A·D` with the numbers.
    pub(crate) formula: String,
    /// Supervised tokens per update, exact or expected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tokens_per_update: Option<u64>,
    /// Where the stage starts: what the stages before it consumed.
    pub(crate) start: Position,
    /// What the stage lasts; for the last stage, what it lasts within the
    /// run. Absent when the run's length is unknown or the run ends before
    /// the stage starts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) lasts: Option<Position>,
    /// Where the stage ends as declared: the `until` as written, or the
    /// computed end of a linear ramp's step; absent for the last stage,
    /// which lasts to the end of the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) until: Option<String>,
    /// Whether the run reaches this stage.
    pub(crate) reached: bool,
}

/// The stages of a batch ramp-up.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct StageTable {
    /// The table's title.
    pub(crate) title: String,
    /// How the ramp was declared, in a sentence.
    pub(crate) declared: String,
    /// How many stages the plan has.
    pub(crate) stages: usize,
    /// Updates of the whole run, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) run_updates: Option<u64>,
    /// Whether token counts are exact or expected; absent without tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tokens: Option<TokenCount>,
    /// The stages, or the first and last ones of a long ramp.
    pub(crate) rows: Vec<StageRow>,
    /// Stages left out between the first and the last rows of a long ramp.
    #[serde(skip_serializing_if = "is_zero")]
    pub(crate) omitted: usize,
    /// What a reader must know about the run and its stages.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) notes: Vec<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl StageTable {
    /// The row before which the stages left out of a long ramp belong.
    pub(crate) fn gap_at(&self) -> Option<usize> {
        (self.omitted > 0).then_some(HEAD_ROWS)
    }

    /// The columns of [`cells`](Self::cells).
    pub(crate) fn header(&self) -> Vec<Column> {
        let lasts = |title: &str| Column::grouped("lasts", title, title, true);
        let mut header = vec![
            Column::new("stage", true),
            Column::new("B = m·A·D", false),
            Column::new("A", true),
        ];
        if self.tokens.is_some() {
            header.push(Column::new("tokens per update", true));
        }
        header.push(Column::new("starts after", false));
        header.push(lasts("updates"));
        header.push(lasts("examples"));
        match self.tokens {
            Some(TokenCount::Expected) => header.push(lasts("tokens (expected)")),
            Some(TokenCount::Exact) => header.push(lasts("tokens")),
            None => {}
        }
        header.push(Column::new("until", false));
        header
    }

    /// The cells of a row, formatted, in the order of [`header`](Self::header).
    pub(crate) fn cells(&self, row: &StageRow) -> Vec<String> {
        let n = group_digits;
        let approx = TokenCount::prefix(self.tokens);
        let mut cells = vec![
            n(row.stage as u64),
            format!(
                "{} = {} × {} × {}",
                n(row.effective_batch),
                n(row.micro_batch),
                n(row.accumulation),
                n(row.replicas)
            ),
            n(row.accumulation),
        ];
        if self.tokens.is_some() {
            cells.push(
                row.tokens_per_update
                    .map_or_else(|| "—".to_owned(), |t| format!("{approx}{}", n(t))),
            );
        }
        cells.push(if row.start.updates == 0 {
            "the start".to_owned()
        } else {
            count(row.start.updates, "update")
        });
        let lasts = |value: Option<u64>, sign: &str| match (row.reached, value) {
            (false, _) => "not reached".to_owned(),
            (true, Some(v)) => format!("{sign}{}", n(v)),
            (true, None) => "—".to_owned(),
        };
        cells.push(lasts(row.lasts.map(|l| l.updates), ""));
        cells.push(lasts(row.lasts.map(|l| l.examples), ""));
        if self.tokens.is_some() {
            cells.push(lasts(row.lasts.and_then(|l| l.tokens), approx));
        }
        cells.push(match (&row.until, self.run_updates) {
            (Some(until), _) => until.clone(),
            (None, Some(total)) => format!("the end of the run ({})", count(total, "update")),
            (None, None) => "the end of the run".to_owned(),
        });
        cells
    }
}

impl StageTable {
    /// The table to draw: a row per stage, the stages left out of a long
    /// ramp said in words where they belong.
    pub(crate) fn grid(&self) -> Grid {
        let mut rows = Vec::with_capacity(self.rows.len() + 1);
        for (i, row) in self.rows.iter().enumerate() {
            if self.gap_at() == Some(i) {
                rows.push(gap_row(self.omitted));
            }
            rows.push(GridRow::Cells {
                cells: self.cells(row),
                muted: !row.reached,
            });
        }
        Grid {
            id: "stages",
            title: self.title.clone(),
            lead: format!(
                "{} Each stage lasts the updates, examples and tokens shown.",
                self.declared
            ),
            columns: self.header(),
            rows,
            notes: self.notes.clone(),
            remarks: Vec::new(),
        }
    }
}

/// The stages a table of `count` stages lists: all of them, or the first
/// [`HEAD_ROWS`] and the last [`MAX_ROWS`]` − HEAD_ROWS` of a long ramp.
pub(super) fn shown_rows(count: usize) -> Vec<usize> {
    if count > MAX_ROWS {
        (0..HEAD_ROWS)
            .chain(count - (MAX_ROWS - HEAD_ROWS)..count)
            .collect()
    } else {
        (0..count).collect()
    }
}

/// The row that says how many stages a long ramp's table leaves out, before
/// row [`HEAD_ROWS`].
pub(super) fn gap_row(omitted: usize) -> GridRow {
    GridRow::Gap(format!("{} more stages", group_digits(omitted as u64)))
}

/// The stages table of `ramp`, for a run of `run_updates` updates when known.
pub(crate) fn table(ramp: &Ramp, axes: &Axes, run_updates: Option<u64>) -> StageTable {
    let n = group_digits;
    let stages = ramp.staged.stages();
    let last = stages.len() - 1;
    let shown = shown_rows(stages.len());
    let rows = shown
        .iter()
        .map(|&i| {
            let stage = &stages[i];
            let plan = stage.plan();
            let start = axes.position(stage.start().get());
            let reached = run_updates.is_none_or(|total| start.updates < total);
            let end = match (stage.end(), run_updates) {
                (Some(end), _) => Some(end.get()),
                (None, total) => total,
            };
            let lasts = end
                .filter(|_| reached)
                .map(|end| axes.between(&start, &axes.position(end)));
            let until = (i < last).then(|| match &ramp.declared {
                Declared::Stages { until, .. } => {
                    until.get(i).map_or_else(String::new, ToString::to_string)
                }
                Declared::Linear { ramp: linear, .. } => {
                    let unit = linear.over.unit();
                    let end = stage.end().map_or(0, |e| e.get());
                    match axes.at(end, unit) {
                        Ok(v) => format!("{} {}", n(v), unit.plural()),
                        Err(err) => err.to_string(),
                    }
                }
            });
            StageRow {
                stage: i + 1,
                micro_batch: plan.micro_batch(),
                accumulation: plan.accumulation(),
                replicas: plan.replicas(),
                effective_batch: plan.effective_batch().get(),
                formula: plan.batch_formula(),
                tokens_per_update: axes.tokens_per_update(plan.effective_batch().get()),
                start,
                lasts,
                until,
                reached,
            }
        })
        .collect();
    let final_b = n(ramp.staged.final_plan().effective_batch().get());
    let declared = match &ramp.declared {
        Declared::Stages { field, .. } => format!(
            "Declared in {field}: each stage runs until a length counted from the start of the run, written in the until column; then the full batch of {final_b} to the end of the run."
        ),
        Declared::Linear {
            field,
            ramp: linear,
        } => {
            let final_batch = ramp.staged.final_plan().effective_batch().get();
            let increments = final_batch.saturating_sub(linear.start) / linear.increment.max(1);
            let skipped = increments.saturating_sub(stages.len() as u64 - 1);
            let skipped = if skipped > 0 {
                format!(
                    " A step shorter than one update of its batch passes without one: {} of the {} steps do, so the ramp has {} stages.",
                    n(skipped),
                    n(increments),
                    n(stages.len() as u64)
                )
            } else {
                String::new()
            };
            format!(
                "Declared in {field} as a linear ramp: B starts at {} and grows by {} in {} equal steps over {}, up to the full batch of {final_b}; a stage ends at the first whole update that completes its step (as Megatron-LM's ramp-up steps it), so the until column is computed.{skipped}",
                n(linear.start),
                n(linear.increment),
                n(increments),
                linear.over
            )
        }
    };
    let mut notes = Vec::new();
    if let Some(total) = run_updates {
        let inside = ramp
            .staged
            .stage_index_at(accum_core::Updates::new(total.saturating_sub(1)));
        if inside < last {
            notes.push(format!(
                "The run ends after {}, in stage {} of {}: it never reaches the full batch.",
                count(total, "update"),
                inside + 1,
                stages.len()
            ));
        }
    }
    StageTable {
        title: format!("Batch ramp-up in {} stages", n(stages.len() as u64)),
        declared,
        stages: stages.len(),
        run_updates,
        tokens: axes.tokens(),
        rows,
        omitted: stages.len() - shown.len(),
        notes,
    }
}

/// The batches of the stages, `"16 → 32 → 64"`, or the first and the last
/// of a longer ramp, `"32 → … → 1,536"`.
pub(crate) fn steps(values: &[u64]) -> String {
    let shown: Vec<String> = match values {
        [first, _, _, _, .., last] => {
            vec![group_digits(*first), "…".to_owned(), group_digits(*last)]
        }
        _ => values.iter().map(|v| group_digits(*v)).collect(),
    };
    shown.join(" → ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sheet::tests::{RAMPUP, series, sheet_of};

    #[test]
    fn the_stages_table_in_every_unit() {
        let sheet = sheet_of(RAMPUP);
        let table = sheet.preparation.stages.as_ref().expect("a stages table");
        assert_eq!(table.title, "Batch ramp-up in 3 stages");
        assert_eq!((table.stages, table.run_updates), (3, Some(235)));
        assert_eq!(table.tokens, Some(TokenCount::Exact));
        assert!(table.declared.starts_with("Declared in batch.stages:"));
        let rows: Vec<Vec<String>> = table.rows.iter().map(|r| table.cells(r)).collect();
        assert_eq!(
            rows,
            [
                [
                    "1",
                    "16 = 4 × 2 × 2",
                    "2",
                    "512",
                    "the start",
                    "20",
                    "320",
                    "10,240",
                    "10240 tokens"
                ],
                [
                    "2",
                    "32 = 4 × 4 × 2",
                    "4",
                    "1,024",
                    "20 updates",
                    "40",
                    "1,280",
                    "40,960",
                    "1600 examples"
                ],
                [
                    "3",
                    "64 = 4 × 8 × 2",
                    "8",
                    "2,048",
                    "60 updates",
                    "175",
                    "11,200",
                    "358,400",
                    "the end of the run (235 updates)"
                ]
            ]
        );
        let header = table.header();
        let titles: Vec<&str> = header.iter().map(|c| c.title.as_str()).collect();
        assert_eq!(
            titles,
            [
                "stage",
                "B = m·A·D",
                "A",
                "tokens per update",
                "starts after",
                "updates",
                "examples",
                "tokens",
                "until"
            ]
        );
        // Σ over stages of what they last is the run.
        let examples: u64 = table
            .rows
            .iter()
            .filter_map(|r| r.lasts)
            .map(|l| l.examples)
            .sum();
        assert_eq!(examples, 320 + 1_280 + 175 * 64);
        assert!(table.notes.is_empty());

        let s = &sheet.summary;
        assert_eq!((s.stages, s.first_effective_batch), (Some(3), Some(16)));
        assert_eq!(s.effective_batch, 64);
        assert_eq!(
            (s.cards[0].value.as_str(), s.cards[0].detail.as_str()),
            (
                "16 → 32 → 64",
                "in 3 stages, up to B = m·A·D = 4 × 8 × 2 = 64"
            )
        );
        assert_eq!(s.cards[1].value, "512 → 1,024 → 2,048");
        assert_eq!(s.planned_updates, Some(235));
        assert_eq!(s.planned_epochs, Some(12_800.0 / 2_000.0));
        assert_eq!(sheet.preparation.tables[0].title, "Plan after the ramp-up");

        // Lengths convert through the stages: 30 updates from the start are
        // 20 of 16 and 10 of 32 examples, and 409,600 tokens are 60 + 175
        // updates; at the full batch, both mean something else.
        let lengths = &sheet.preparation.tables[1];
        assert_eq!(lengths.title, "Lengths in every unit, through the stages");
        let notes: Vec<&str> = lengths.rows.iter().map(|r| r.note.as_str()).collect();
        assert_eq!(
            notes[..2],
            [
                "from the start of the run = 30 updates = 80 microbatches per replica = 640 examples = 20,480 tokens; \
                 at the full batch = 30 updates = 240 microbatches per replica = 1,920 examples = 61,440 tokens",
                "from the start of the run = 235 updates = 1,600 microbatches per replica = 12,800 examples = 409,600 tokens; \
                 at the full batch = 200 updates = 1,600 microbatches per replica = 12,800 examples = 409,600 tokens"
            ]
        );
        // An interval is not counted from the start: its first stage and
        // the full batch bound what it means.
        assert_eq!(
            notes[2],
            "in the first stage = 10 updates = 20 microbatches per replica = 160 examples = 5,120 tokens; \
             at the full batch = 10 updates = 80 microbatches per replica = 640 examples = 20,480 tokens"
        );
    }

    #[test]
    fn a_run_that_ends_inside_the_ramp_says_so() {
        let sheet =
            sheet_of(&RAMPUP.replace("total = \"409600 tokens\"", "total = \"50 updates\""));
        let table = sheet.preparation.stages.as_ref().expect("a stages table");
        assert_eq!(
            table.notes,
            ["The run ends after 50 updates, in stage 2 of 3: it never reaches the full batch."]
        );
        let last = &table.rows[2];
        assert!(!last.reached && last.lasts.is_none());
        assert_eq!(table.cells(last)[5], "not reached");
        let charts = &sheet.preparation.charts;
        let marks = charts[0].marks.as_ref().expect("marks");
        assert_eq!(marks.at.len(), 1, "stage 3 starts after the run");
        assert_eq!(
            series(&charts[0], "batch B"),
            [[0.0, 16.0], [20.0, 32.0], [50.0, 32.0]]
        );
    }

    /// A Megatron-style ramp of more stages than a sheet lists or marks one
    /// by one, with variable lengths: tokens are expected, per stage.
    #[test]
    fn a_long_linear_ramp_with_expected_tokens() {
        let config = "[batch]\nmicro_batch = 8\naccumulation = 200\nreplicas = 2\n\
             [batch.ramp]\nstart = 16\nincrement = 16\nover = \"400k examples\"\n\
             [schedule]\nkind = \"linear\"\nwarmup = \"100 updates\"\ntotal = \"5M examples\"\n\
             [data]\nexamples = 100000\nmin_len = 16\nmax_len = 64\n";
        let sheet = sheet_of(config);
        let table = sheet.preparation.stages.as_ref().expect("a stages table");
        // 16 → 3,200 by 16 is 199 steps of about 2,010 examples; once an
        // update of the stage holds more than a step, a step is skipped.
        let parsed: accum_core::config::TrainingConfig = toml::from_str(config).expect("toml");
        let staged = accum_core::AccumConfig::staged_plan(&parsed).expect("a staged plan");
        assert_eq!(table.stages, staged.stages().len());
        assert!((150..200).contains(&table.stages), "{}", table.stages);
        let omitted = table.stages - MAX_ROWS;
        assert_eq!((table.rows.len(), table.omitted), (MAX_ROWS, omitted));
        assert_eq!(table.gap_at(), Some(HEAD_ROWS));
        assert_eq!(
            table.rows[HEAD_ROWS].stage,
            HEAD_ROWS + omitted + 1,
            "the last stages follow the gap"
        );
        assert_eq!(table.rows[MAX_ROWS - 1].effective_batch, 3_200);
        assert_eq!(table.tokens, Some(TokenCount::Expected));
        assert!(
            table
                .declared
                .contains("grows by 16 in 199 equal steps over 400k examples"),
            "{}",
            table.declared
        );
        assert!(
            table.declared.ends_with(&format!(
                "{} of the 199 steps do, so the ramp has {} stages.",
                200 - table.stages,
                table.stages
            )),
            "{}",
            table.declared
        );
        // Mean length 40: 16 × 40 tokens per update in the first stage.
        assert_eq!(table.rows[0].tokens_per_update, Some(640));
        let first = &table.rows[0];
        let lasts = first.lasts.expect("the first stage lasts");
        assert_eq!(lasts.tokens, Some(lasts.examples * 40));
        // Megatron's rule: a step of 400,000 / 199 examples, in whole updates.
        assert_eq!(
            table.cells(first)[8],
            format!("{} examples", group_digits(lasts.examples))
        );
        assert!(lasts.examples >= 2_010 && lasts.examples < 2_010 + 16);
        let cells = table.cells(first);
        assert_eq!(cells[3], "≈ 640");
        assert_eq!(cells[7], format!("≈ {}", group_digits(lasts.examples * 40)));
        assert_eq!(sheet.summary.cards[0].value, "16 → … → 3,200");

        let updates = &sheet.preparation.charts[0];
        let marks = updates.marks.as_ref().expect("marks");
        assert_eq!(marks.name, "end of the ramp");
        assert_eq!(marks.at.len(), 1);
        let tokens = &updates.x_scales[1];
        assert!(tokens.approximate);
        let against = &sheet.preparation.charts[1];
        assert_eq!(against.x.label, "≈ tokens");
        // The end of the ramp, at its expected tokens: 400k examples and a
        // little more (the last step ends on a whole update) × 40.
        let end = marks.at[0].x;
        let end_tokens = against.marks.as_ref().expect("marks").at[0].x;
        let examples = updates.x_scales[0].value_at(end);
        assert_eq!(end_tokens, examples * 40.0);
        assert!(
            (400_000.0..400_000.0 + 3_200.0).contains(&examples),
            "{examples}"
        );
    }

    #[test]
    fn steps_are_short() {
        assert_eq!(steps(&[16, 32, 64]), "16 → 32 → 64");
        assert_eq!(steps(&[1, 2, 3, 4]), "1 → 2 → 3 → 4");
        assert_eq!(steps(&[32, 48, 64, 80, 1_536]), "32 → … → 1,536");
        assert_eq!(steps(&[64]), "64");
    }
}
