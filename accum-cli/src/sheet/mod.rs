//! The run's data sheet: m, A, D, B, supervised tokens, precision,
//! normalization, last-group handling, every length in every unit and the
//! learning-rate schedule over the whole run; with a batch ramp-up, its
//! stages and the batch and learning rate against updates and against
//! tokens; with a run report, what the trial observed — counters, skipped
//! updates, memory peaks, the loss, the gradient norm and the loss scale.
//! Preparation, trial and accepted results are kept apart.
//!
//! The [`Sheet`] model is built once, from the typed configuration and the
//! run report only ([`build`]); [`markdown`], [`html`] and JSON render it and
//! [`plot`] draws its charts.

use serde::Serialize;

mod axes;
pub(crate) mod belongs;
pub(crate) mod build;
pub(crate) mod chart;
pub(crate) mod compare;
pub(crate) mod csv;
pub(crate) mod extras;
mod grid;
pub(crate) mod html;
pub(crate) mod markdown;
pub(crate) mod output;
pub(crate) mod plot;
mod schedule;
pub(crate) mod schema;
mod segments;
pub(crate) mod series;
pub(crate) mod stages;
mod summary;
pub(crate) mod ticks;
mod trained;
mod trial;

pub(crate) use chart::Chart;

/// The format tag of the JSON sheet.
pub(crate) const SHEET_FORMAT: &str = "accum-sheet/2";

/// One row of a key–value table: the label, the value, and a note.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Row {
    /// What the value is.
    pub(crate) label: String,
    /// The value, formatted.
    pub(crate) value: String,
    /// Where it comes from or what it means.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub(crate) note: String,
}

impl Row {
    /// A row.
    pub(crate) fn new(
        label: impl Into<String>,
        value: impl Into<String>,
        note: impl Into<String>,
    ) -> Row {
        Row {
            label: label.into(),
            value: value.into(),
            note: note.into(),
        }
    }
}

/// A titled table of rows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Table {
    /// The table's title.
    pub(crate) title: String,
    /// Its rows.
    pub(crate) rows: Vec<Row>,
}

/// One figure of the summary band: a label, a big value and a line below.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Card {
    /// What the figure is (`"effective batch B"`).
    pub(crate) label: String,
    /// The figure (`"32 examples"`).
    pub(crate) value: String,
    /// How it comes about (`"B = m·A·D = 2 × 8 × 2 = 32"`).
    pub(crate) detail: String,
    /// Whether it needs attention (skipped updates).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) alert: bool,
}

/// The headline figures at the top of the sheet (its `summary`), as numbers
/// and as cards.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Headline {
    /// `m`.
    pub(crate) micro_batch: u64,
    /// `A`.
    pub(crate) accumulation: u64,
    /// `D`.
    pub(crate) replicas: u64,
    /// `B = m·A·D`; with a batch ramp-up, the full batch of the last stage.
    pub(crate) effective_batch: u64,
    /// How many stages a batch ramp-up has; absent when `B` does not change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) stages: Option<usize>,
    /// `B` of the first stage of a batch ramp-up.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) first_effective_batch: Option<u64>,
    /// Supervised tokens per update (of the full batch, with a ramp-up):
    /// exact with a fixed sequence length, measured with a report (the mean
    /// over every group), otherwise expected.
    pub(crate) tokens_per_update: Option<f64>,
    /// Updates the schedule runs for.
    pub(crate) planned_updates: Option<u64>,
    /// Passes over the data the planned updates make.
    pub(crate) planned_epochs: Option<f64>,
    /// Updates the trial applied.
    pub(crate) applied_updates: Option<u64>,
    /// Update attempts the trial skipped.
    pub(crate) skipped_updates: Option<u64>,
    /// Passes over the data the trial made.
    pub(crate) epochs: Option<f64>,
    /// The loss of the trial's first applied update, exact.
    pub(crate) first_loss: Option<f64>,
    /// The loss of the trial's last applied update, exact.
    pub(crate) final_loss: Option<f64>,
    /// The smallest loss of an applied update of the trial, exact.
    pub(crate) min_loss: Option<f64>,
    /// The same, formatted for reading.
    pub(crate) cards: Vec<Card>,
}

/// What the configuration says before any run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Preparation {
    /// Plan, lengths and the settings of the config type.
    pub(crate) tables: Vec<Table>,
    /// The stages of a batch ramp-up.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) stages: Option<stages::StageTable>,
    /// The learning-rate schedule over the whole run; with a ramp-up, the
    /// batch and the learning rate against updates and against tokens.
    pub(crate) charts: Vec<Chart>,
}

/// The observed part of a sheet: what a trial run measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Trial {
    /// The report file the values come from.
    pub(crate) source: String,
    /// With a batch ramp-up, what the run trained in each stage beside
    /// what the configuration plans for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) stages: Option<trained::TrainedStages>,
    /// Counters and memory peaks.
    pub(crate) tables: Vec<Table>,
    /// Loss, gradient norm and loss scale against the logged axis.
    pub(crate) charts: Vec<Chart>,
    /// Warnings the run raised.
    pub(crate) warnings: Vec<String>,
}

/// A whole data sheet.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Sheet {
    /// [`SHEET_FORMAT`].
    pub(crate) format: &'static str,
    /// The run's name.
    pub(crate) name: String,
    /// Free text from the config.
    pub(crate) notes: Option<String>,
    /// The configuration file the sheet describes.
    pub(crate) config: String,
    /// What differs between the configuration and a report that does not
    /// belong to it, rendered under `--force` (`belongs.rs`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) mismatch: Vec<String>,
    /// How the configuration file changed since the run, when its plan
    /// and length did not (`belongs.rs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) config_changed: Option<String>,
    /// Where the report comes from, when it says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) provenance: Option<accum_core::report::Provenance>,
    /// The figures a reader looks for first.
    pub(crate) summary: Headline,
    /// Preparation: the plan and settings, as configured and computed.
    pub(crate) preparation: Preparation,
    /// Trial: what a run observed, when a report was given.
    pub(crate) trial: Option<Trial>,
    /// Accepted results: the decision, which only a person makes.
    pub(crate) accepted: Option<String>,
}

impl Sheet {
    /// Every chart, preparation first.
    pub(crate) fn charts(&self) -> impl Iterator<Item = &Chart> {
        self.preparation
            .charts
            .iter()
            .chain(self.trial.iter().flat_map(|t| t.charts.iter()))
    }
}

/// Where a report comes from, as short facts for a sheet's header or a
/// comparison's table: the run's name, the start, the wall time, the
/// throughput, the accum version and the commit. Empty for a report that
/// records none.
pub(crate) fn provenance_facts(p: &accum_core::report::Provenance) -> Vec<String> {
    let mut facts = Vec::new();
    if let Some(name) = &p.run_name {
        facts.push(format!("run {name}"));
    }
    if let Some(at) = &p.started_at {
        facts.push(format!("started {at}"));
    }
    if let Some(seconds) = p.wall_seconds {
        facts.push(format!("wall time {}", wall_time(seconds)));
    }
    if let Some(rate) = p.examples_per_second {
        facts.push(format!("{} examples/s", per_second(rate)));
    }
    if let Some(rate) = p.tokens_per_second.filter(|r| *r > 0.0) {
        facts.push(format!("{} tokens/s", per_second(rate)));
    }
    if let Some(version) = &p.accum_version {
        facts.push(format!("accum {version}"));
    }
    if let Some(commit) = &p.git_commit {
        facts.push(format!("commit {}", &commit[..commit.len().min(12)]));
    }
    facts
}

/// A wall time as people read it: `0.42 s`, `12.4 s`, `3 min 12 s`, `2 h 05 min`.
pub(crate) fn wall_time(seconds: f64) -> String {
    if !seconds.is_finite() || seconds < 0.0 {
        return "not measured".to_owned();
    }
    if seconds < 10.0 {
        format!("{seconds:.2} s")
    } else if seconds < 60.0 {
        format!("{seconds:.1} s")
    } else if seconds < 3600.0 {
        let s = seconds.round() as u64;
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        let m = (seconds / 60.0).round() as u64;
        format!("{} h {:02} min", m / 60, m % 60)
    }
}

/// A rate per second: whole and grouped from 100 up, three significant
/// digits below.
pub(crate) fn per_second(rate: f64) -> String {
    if (100.0..1e18).contains(&rate) {
        group(rate.round() as u64)
    } else if rate >= 10.0 {
        format!("{rate:.1}")
    } else {
        format!("{rate:.3}")
    }
}

/// Formats an integer with thousands separators.
pub(crate) fn group(value: u64) -> String {
    accum_core::group_digits(value)
}

/// A setting as people write it: `1e-8` rather than `0.00000001`, and
/// `16,777,216` for a large whole number.
pub(crate) fn setting(value: f64) -> String {
    if value != 0.0 && value.abs() < 1e-3 {
        format!("{value:e}")
    } else if value.fract() == 0.0 && value.abs() >= 1e4 && value.abs() < 1e18 {
        let digits = group(value.abs() as u64);
        if value < 0.0 {
            format!("-{digits}")
        } else {
            digits
        }
    } else {
        format!("{value}")
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use accum_core::plan::LastGroup;
    use accum_core::report::{Counters, LossCurve, PlanSummary, REPORT_FORMAT, RunReport};
    use accum_core::settings::{Normalization, OptimizerKind, PrecisionMode};
    use accum_core::{Examples, Tokens, Updates};

    /// An fp16 run that skips updates (the CLI tests' fixture).
    pub(crate) const FP16: &str = include_str!("../../tests/fixtures/fp16.toml");

    /// The fp16 fixture's sheet, with the report of a real run.
    pub(crate) fn fp16_sheet() -> (Sheet, RunReport) {
        use accum_core::AccumConfig;
        let config: accum_core::config::TrainingConfig =
            toml::from_str(FP16).expect("the fixture parses");
        let plan = config.plan().expect("the fixture has a plan");
        let report =
            accum_core::engine::run(plan, &config.engine_config()).expect("the fixture runs");
        let extras = crate::training::sheet_extras(&config, &plan);
        let sheet = build::build(
            &config,
            &plan,
            "fp16.toml",
            extras,
            Some(("run.json".into(), &report)),
        );
        (sheet, report)
    }

    /// A batch ramp-up in three stages on a fixed length (the CLI tests'
    /// fixture).
    pub(crate) const RAMPUP: &str = include_str!("../../tests/fixtures/rampup.toml");

    /// The sheet of a `TrainingConfig` in TOML (warnings allowed), without a
    /// report.
    pub(crate) fn sheet_of(text: &str) -> Sheet {
        use accum_core::AccumConfig;
        let config: accum_core::config::TrainingConfig =
            toml::from_str(text).expect("the config parses");
        if let Err(findings) = config.check() {
            assert!(!findings.has_errors(), "the config is valid: {findings:?}");
        }
        let plan = config.plan().expect("the config has a plan");
        let extras = crate::training::sheet_extras(&config, &plan);
        build::build(&config, &plan, "rampup.toml", extras, None)
    }

    /// The points of the series `name` of `chart`, in its panels above or
    /// in its main plot.
    pub(crate) fn series<'a>(chart: &'a Chart, name: &str) -> &'a [[f64; 2]] {
        chart
            .above
            .iter()
            .flat_map(|p| p.series.iter())
            .chain(chart.series.iter())
            .find(|s| s.name == name)
            .map(|s| s.points.as_slice())
            .unwrap_or_else(|| panic!("no series {name} in {}", chart.id))
    }

    /// Whether `text` cites a rule by a bare id such as `(`accum::run::loss-scale`)` or `(`accum::run::scheduler`, the symptom table of docs/rules.md`.
    pub(crate) fn has_rule_id(text: &str) -> bool {
        text.match_indices("(R")
            .any(|(at, _)| text[at + 2..].starts_with(|c: char| c.is_ascii_digit()))
    }

    /// A report with no attempts, for tests to fill.
    pub(crate) fn report() -> RunReport {
        RunReport {
            format: REPORT_FORMAT.into(),
            plan: PlanSummary {
                micro_batch: 2,
                accumulation: 1,
                replicas: 2,
                effective_batch: 4,
                seq_len: None,
            },
            model: serde_json::Value::Null,
            precision: PrecisionMode::Fp16,
            loss_scaling: true,
            normalization: Normalization::PerToken,
            last_group: LastGroup::Drop,
            optimizer: OptimizerKind::AdamW,
            total_updates: Updates::new(2),
            warmup_updates: Updates::ZERO,
            data_examples: Examples::new(8),
            data_tokens: Tokens::new(80),
            counters: Counters::default(),
            stages: vec![],
            replicas: vec![],
            updates: vec![],
            updates_stride: 1,
            summary: Default::default(),
            stats_stream: None,
            loss_curve: LossCurve::default(),
            memory: Default::default(),
            dropped: vec![],
            stopped_early: false,
            warnings: vec![],
            segments: vec![],
            recorder: None,
            provenance: None,
        }
    }

    #[test]
    fn settings_read_as_written() {
        assert_eq!(setting(1e-8), "1e-8");
        assert_eq!(setting(3e-4), "3e-4");
        assert_eq!(setting(0.01), "0.01");
        assert_eq!(setting(16_777_216.0), "16,777,216");
        assert_eq!(setting(0.5), "0.5");
        assert_eq!(setting(0.0), "0");
    }
}
