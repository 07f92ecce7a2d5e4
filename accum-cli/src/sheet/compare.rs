//! Comparing runs: two or more run reports side by side — their plans in
//! one table (m, A, D, B, tokens per update, normalization, precision,
//! last-group policy and stages) and their loss, learning rate and
//! gradient norm overlaid against an axis that means the same for every
//! run: examples or tokens.
//!
//! Against updates, a point of one run stands for another amount of data
//! than a point of the other as soon as their batches differ (eight times
//! more examples per point at A = 8 than at A = 1): that comparison is
//! refused, with the axes that work instead. Runs of the same batches may
//! be compared against updates.

use serde::Serialize;

use accum_core::group_digits;
use accum_core::report::RunReport;
use accum_core::settings::LogAxis;

use super::chart::{Axis, Chart, Marks, Series, Style, Tone};
use super::segments::run_marks;
use super::series::{LossLegend, RunSeries, loss_lines};
use super::stages::steps;
use super::trained::stage_marks;
use crate::escape;

/// The format tag of the JSON comparison.
pub(crate) const COMPARE_FORMAT: &str = "accum-compare/1";

/// One compared run: its report, where it was read from and its name.
pub(crate) struct Compared<'a> {
    /// The run's name in the legend and the table.
    pub(crate) name: String,
    /// The report file.
    pub(crate) source: String,
    /// The report.
    pub(crate) report: &'a RunReport,
    /// Its series (from its stats stream when it names one).
    pub(crate) series: RunSeries,
}

/// The runs' plans side by side: one row per quantity, one column per run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct PlanTable {
    /// The runs' names, in order.
    pub(crate) columns: Vec<String>,
    /// `(quantity, value of each run)`.
    pub(crate) rows: Vec<PlanRow>,
}

/// One quantity of every run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct PlanRow {
    /// What the values are.
    pub(crate) label: String,
    /// One value per run, formatted.
    pub(crate) values: Vec<String>,
    /// Whether the runs differ in it.
    pub(crate) differs: bool,
}

/// A whole comparison.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Comparison {
    /// [`COMPARE_FORMAT`].
    pub(crate) format: &'static str,
    /// The x axis of every plot.
    pub(crate) axis: LogAxis,
    /// The report files, in the table's order.
    pub(crate) sources: Vec<String>,
    /// The plans side by side.
    pub(crate) table: PlanTable,
    /// Loss, learning rate and gradient norm, overlaid.
    pub(crate) charts: Vec<Chart>,
    /// What a reader must know to read the plots (runs whose attempts are
    /// evenly spread, damaged streams).
    pub(crate) notes: Vec<String>,
}

/// The plan of one stage of a run, as the comparison sees it.
fn batches(report: &RunReport) -> Vec<(u64, u64)> {
    if report.stages.is_empty() {
        return vec![(1, report.plan.effective_batch)];
    }
    report
        .stages
        .iter()
        .map(|s| (s.first_update.get(), s.plan.effective_batch))
        .collect()
}

/// `"16 examples"`, or `"4 → 8 → 16 examples"` stage by stage, and the
/// number of stages.
fn batch_steps(report: &RunReport) -> (String, usize) {
    let b: Vec<u64> = batches(report).iter().map(|(_, b)| *b).collect();
    (format!("{} examples", steps(&b)), b.len())
}

/// `"16 examples"`, or `"4 → 8 → 16 examples in 3 stages"`.
fn batch_text(report: &RunReport) -> String {
    match batch_steps(report) {
        (b, 1) => b,
        (b, stages) => format!("{b} in {stages} stages"),
    }
}

/// Why the runs cannot be compared against `axis`, if they cannot: against
/// updates, when their batches differ (stage by stage, from the same
/// update on).
pub(crate) fn refusal(runs: &[Compared<'_>], axis: LogAxis) -> Option<String> {
    if axis != LogAxis::Updates {
        return None;
    }
    let first = batches(runs[0].report);
    if runs.iter().all(|r| batches(r.report) == first) {
        return None;
    }
    let each: Vec<String> = runs
        .iter()
        .map(|r| match batch_steps(r.report) {
            (b, 1) => format!("{} trains {b} per update", r.name),
            (b, stages) => format!("{} trains {b} per update in {stages} stages", r.name),
        })
        .collect();
    Some(format!(
        "an axis in updates compares different amounts of data: {}; a point at the same update stands for different numbers of examples in each run. \
         Compare them against examples (`--axis examples`) or supervised tokens (`--axis tokens`)",
        each.join(", ")
    ))
}

/// The plans of the runs side by side.
pub(crate) fn plan_table(runs: &[Compared<'_>]) -> PlanTable {
    let n = group_digits;
    let row = |label: &str, value: &dyn Fn(&RunReport) -> String| {
        let values: Vec<String> = runs.iter().map(|r| value(r.report)).collect();
        let differs = values.windows(2).any(|w| w[0] != w[1]);
        PlanRow {
            label: label.to_owned(),
            values,
            differs,
        }
    };
    let rows = vec![
        row("micro-batch m", &|r| {
            format!("{} examples", n(r.plan.micro_batch))
        }),
        row("accumulation A", &|r| {
            let a: Vec<u64> = if r.stages.len() > 1 {
                r.stages.iter().map(|s| s.plan.accumulation).collect()
            } else {
                vec![r.plan.accumulation]
            };
            format!("{} microbatches", steps(&a))
        }),
        row("data-parallel replicas D", &|r| n(r.plan.replicas)),
        row("effective batch B", &batch_text),
        row("tokens per update", &|r| {
            // Stage by stage: a mean over stages of different batches
            // would describe none of them.
            let per: Vec<(u64, u64, u64)> = if r.stages.len() > 1 {
                r.stages
                    .iter()
                    .map(|s| (s.plan.effective_batch, s.tokens.get(), s.attempts))
                    .collect()
            } else {
                vec![(
                    r.plan.effective_batch,
                    r.counters.supervised_tokens.get(),
                    r.counters.update_attempts,
                )]
            };
            if let Some(len) = r.plan.seq_len {
                let exact: Vec<u64> = per.iter().map(|(b, _, _)| b * len).collect();
                return format!("{} (B·L, L = {})", steps(&exact), n(len));
            }
            if per.iter().any(|(_, _, attempts)| *attempts == 0) {
                return "not counted in every stage".to_owned();
            }
            let means: Vec<u64> = per
                .iter()
                .map(|(_, tokens, attempts)| (*tokens as f64 / *attempts as f64).round() as u64)
                .collect();
            format!(
                "≈ {} (measured {})",
                steps(&means),
                if means.len() > 1 { "means" } else { "mean" }
            )
        }),
        row("normalization", &|r| r.normalization.key().to_owned()),
        row("precision", &|r| {
            if r.loss_scaling {
                format!("{}, dynamic loss scaling", r.precision.key())
            } else {
                r.precision.key().to_owned()
            }
        }),
        row("last group", &|r| r.last_group.to_string()),
        row("stages", &|r| {
            let b = batches(r);
            if b.len() < 2 {
                "1 (constant plan)".to_owned()
            } else {
                let starts: Vec<String> = b
                    .iter()
                    .map(|(from, batch)| format!("B {} from update {}", n(*batch), n(*from)))
                    .collect();
                format!("{}: {}", n(b.len() as u64), crate::output::listed(&starts))
            }
        }),
        row("applied updates", &|r| {
            let skipped = r.counters.skipped_updates;
            if skipped > 0 {
                format!(
                    "{} ({} skipped)",
                    n(r.counters.applied_updates.get()),
                    n(skipped)
                )
            } else {
                n(r.counters.applied_updates.get())
            }
        }),
        row("examples", &|r| n(r.counters.examples.get())),
        row("supervised tokens", &|r| {
            n(r.counters.supervised_tokens.get())
        }),
    ];
    let mut rows = rows;
    // Where a resumed run's segments start, before its counts.
    if runs.iter().any(|r| super::segments::resumed(r.report)) {
        let at = rows.len() - 3;
        rows.insert(at, row("segments", &super::segments::compared));
    }
    // What one compares m·A splits for: memory and speed.
    rows.push(row("peak memory per replica", &|r| {
        if super::trial::memory_measured(r) {
            accum_core::estimate::ByteSize::new(r.memory.peak_bytes).to_string()
        } else {
            "not measured".to_owned()
        }
    }));
    let provenance = |r: &RunReport| r.provenance.clone().unwrap_or_default();
    rows.push(row("wall time", &|r| {
        provenance(r)
            .wall_seconds
            .map_or_else(|| "not measured".to_owned(), super::wall_time)
    }));
    rows.push(row("throughput", &|r| {
        let p = provenance(r);
        match (p.examples_per_second, p.tokens_per_second) {
            (Some(e), Some(t)) if t > 0.0 => format!(
                "{} examples/s, {} tokens/s",
                super::per_second(e),
                super::per_second(t)
            ),
            (Some(e), _) => format!("{} examples/s", super::per_second(e)),
            _ => "not measured".to_owned(),
        }
    }));
    // The loss as every headline gives it: exact first, final and minimum.
    let losses: Vec<String> = runs
        .iter()
        .map(|r| match r.report.loss_headline() {
            Some(l) => format!(
                "{} (minimum {})",
                l.first_to_last(),
                accum_core::report::LossHeadline::loss(l.min)
            ),
            None => "no applied update".to_owned(),
        })
        .collect();
    rows.push(PlanRow {
        label: "loss, first → final".into(),
        differs: losses.windows(2).any(|w| w[0] != w[1]),
        values: losses,
    });
    rows.push(agreement_row(runs));
    PlanTable {
        columns: runs.iter().map(|r| r.name.clone()).collect(),
        rows,
    }
}

/// How far each run's loss is from the first run's over the range of the
/// axis both cover: the largest |Δloss| between a point of the run and the
/// first run's loss there (interpolated between its neighbours), over the
/// points the series keep; "identical" when it is 0.
fn agreement_row(runs: &[Compared<'_>]) -> PlanRow {
    let reference = &runs[0].series.lines.losses.points;
    let mut values = vec!["the reference".to_owned()];
    for run in &runs[1..] {
        values.push(
            match largest_difference(reference, &run.series.lines.losses.points) {
                None => "no overlap with the first run".to_owned(),
                Some(0.0) => "identical".to_owned(),
                Some(d) if d < 1e-3 => format!("{d:.2e}"),
                Some(d) => format!("{d:.4}"),
            },
        );
    }
    PlanRow {
        label: format!("largest |Δloss| from {}", runs[0].name),
        differs: values[1..].iter().any(|v| v != "identical"),
        values,
    }
}

/// The largest |Δy| between the points of `other` inside the x range
/// both lines cover and `reference` at the same x, interpolated linearly;
/// `None` when the ranges do not overlap. Both lines are in x order.
pub(crate) fn largest_difference(reference: &[[f64; 2]], other: &[[f64; 2]]) -> Option<f64> {
    let (first, last) = (reference.first()?, reference.last()?);
    let (lo, hi) = (
        first[0].max(other.first()?[0]),
        last[0].min(other.last()?[0]),
    );
    if lo > hi {
        return None;
    }
    let mut j = 0;
    let mut largest: Option<f64> = None;
    for p in other.iter().filter(|p| p[0] >= lo && p[0] <= hi) {
        while j + 1 < reference.len() && reference[j + 1][0] <= p[0] {
            j += 1;
        }
        let a = reference[j];
        let at = match reference.get(j + 1) {
            Some(b) if b[0] > a[0] && p[0] > a[0] => {
                a[1] + (b[1] - a[1]) * (p[0] - a[0]) / (b[0] - a[0])
            }
            _ => a[1],
        };
        let d = (p[1] - at).abs();
        largest = Some(largest.map_or(d, |l: f64| l.max(d)));
    }
    largest
}

/// The comparison of `runs` against `axis`, or why it is refused.
pub(crate) fn compare(runs: &[Compared<'_>], axis: LogAxis) -> Result<Comparison, String> {
    if let Some(refused) = refusal(runs, axis) {
        return Err(refused);
    }
    let x = Axis::count(axis.key());
    let tone = |i: usize| Tone::Run(u8::try_from(i).unwrap_or(u8::MAX));
    let mut notes = Vec::new();
    for run in runs {
        if !run.series.every_attempt {
            notes.push(format!(
                "{}: {} of its {} attempts, evenly spread (the report names no stats stream)",
                run.name,
                group_digits(run.series.attempts_read),
                group_digits(run.series.attempts_total)
            ));
        }
        notes.extend(
            run.series
                .problems
                .iter()
                .map(|p| format!("{}: {p}", run.name)),
        );
    }

    // Where the stages of each ramped run start, labelled with the run.
    let mut marks = Vec::new();
    for run in runs {
        if super::segments::resumed(run.report) {
            notes.push(format!(
                "{}: dashed lines also mark where the run resumed",
                run.name
            ));
        }
        if let Some(m) = run_marks(run.report, axis) {
            let stage_starts = stage_marks(run.report, axis).map_or(0, |m| m.at.len());
            if stage_starts > 0 && stage_starts + 1 < run.report.stages.len() {
                notes.push(format!(
                    "{}: {} stages; the dashed line marks where the last starts",
                    run.name,
                    group_digits(run.report.stages.len() as u64)
                ));
            }
            marks.extend(m.at.into_iter().map(|mut mark| {
                mark.label = format!("{} {}", run.name, mark.label);
                mark
            }));
        }
    }
    let resumes = runs.iter().any(|r| super::segments::resumed(r.report));
    let marks = (!marks.is_empty()).then(|| Marks {
        name: if resumes {
            "stage start or resume".into()
        } else {
            "stage start".into()
        },
        at: marks,
    });

    let mut loss = Vec::new();
    let mut hows = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        let (series, how) = loss_lines(
            LossLegend::Run(&run.name),
            &run.series.lines.losses,
            tone(i),
        );
        loss.extend(series);
        hows.push(how);
    }
    // Said once when every run is drawn alike (one window for all).
    let drawn: Vec<String> = if hows.windows(2).all(|w| w[0] == w[1]) {
        hows.into_iter()
            .take(1)
            .map(|h| format!("for every run, {h}"))
            .collect()
    } else {
        runs.iter()
            .zip(&hows)
            .map(|(run, how)| format!("{}: {how}", run.name))
            .collect()
    };
    let meaning = match axis {
        LogAxis::Updates => "applied updates (the runs have the same batches)",
        LogAxis::Examples => "examples processed",
        LogAxis::Tokens => "supervised tokens processed",
    };
    let mut charts = vec![Chart {
        id: "loss".into(),
        title: format!("Loss against {}", axis.key()),
        caption: format!(
            "The group's normalized loss of every applied update of each run, from the first, against {meaning} ({}).",
            drawn.join("; ")
        ),
        x: x.clone(),
        x_scales: vec![],
        y: Axis::linear("loss"),
        series: loss,
        above: vec![],
        marks: marks.clone(),
    }];
    charts.push(Chart {
        id: "lr".into(),
        title: format!("Learning rate against {}", axis.key()),
        caption: format!(
            "The learning rate each applied update of each run used, against {meaning}."
        ),
        x: x.clone(),
        x_scales: vec![],
        y: Axis {
            from_zero: true,
            ..Axis::linear("learning rate")
        },
        series: runs
            .iter()
            .enumerate()
            .map(|(i, r)| {
                Series::new(
                    r.name.clone(),
                    Style::Line,
                    tone(i),
                    r.series.lines.lrs.iter().map(|p| (p[0], p[1])),
                )
            })
            .collect(),
        above: vec![],
        marks: marks.clone(),
    });
    let norms: Vec<Series> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            Series::new(
                r.name.clone(),
                Style::Line,
                tone(i),
                r.series.lines.norms.iter().map(|p| (p[0], p[1])),
            )
        })
        .collect();
    if norms.iter().any(|s| !s.points.is_empty()) {
        charts.push(Chart {
            id: "grad-norm".into(),
            title: format!("Gradient norm against {}", axis.key()),
            caption: format!(
                "The global gradient norm of every applied update of each run, unscaled, before clipping, against {meaning}."
            ),
            x,
            x_scales: vec![],
            y: Axis::linear("gradient norm"),
            series: norms,
            above: vec![],
            marks,
        });
    }
    Ok(Comparison {
        format: COMPARE_FORMAT,
        axis,
        sources: runs.iter().map(|r| r.source.clone()).collect(),
        table: plan_table(runs),
        charts,
        notes,
    })
}

/// The plan table in Markdown, differing rows marked.
pub(crate) fn table_markdown(table: &PlanTable) -> String {
    use crate::escape::markdown as e;
    let mut out = format!(
        "| | {} |\n|---|{}\n",
        table
            .columns
            .iter()
            .map(|c| e(c))
            .collect::<Vec<_>>()
            .join(" | "),
        "---|".repeat(table.columns.len())
    );
    for row in &table.rows {
        out.push_str(&format!(
            "| {}{} | {} |\n",
            e(&row.label),
            if row.differs { " ≠" } else { "" },
            row.values
                .iter()
                .map(|v| e(v))
                .collect::<Vec<_>>()
                .join(" | ")
        ));
    }
    out
}

/// The comparison in Markdown; `link` names each plot's SVG file, if any.
/// Every name, file name, note and caption goes through the Markdown
/// escapers: a report's file name is one code span whatever backticks it
/// holds ([`escape::markdown_code`]).
pub(crate) fn markdown(c: &Comparison, link: &dyn Fn(&Chart) -> Option<String>) -> String {
    let mut out = format!(
        "# Comparison of {} runs against {}\n\n{}\n\n## Plans\n\nRows marked ≠ differ between the runs.\n\n{}",
        c.table.columns.len(),
        c.axis.key(),
        c.sources
            .iter()
            .zip(&c.table.columns)
            .map(|(s, name)| format!("- {}: {}", escape::markdown(name), escape::markdown_code(s)))
            .collect::<Vec<_>>()
            .join("\n"),
        table_markdown(&c.table)
    );
    for note in &c.notes {
        out.push_str(&format!("\n> {}\n", escape::markdown(note)));
    }
    for chart in &c.charts {
        let title = escape::markdown(&chart.title);
        out.push_str(&format!("\n## {title}\n\n"));
        match link(chart) {
            Some(file) => out.push_str(&format!("![{title}]({})\n\n", escape::url_path(&file))),
            None => out.push_str(&format!(
                "(plot {}: write with -o to get its SVG)\n\n",
                escape::markdown_code(&chart.id)
            )),
        }
        out.push_str(&format!("{}\n", escape::markdown(&chart.caption)));
    }
    out
}

/// The comparison as one self-contained HTML page.
pub(crate) fn html(c: &Comparison) -> String {
    use crate::escape::html as e;
    let title = format!(
        "Comparison of {} against {}",
        c.table.columns.join(", "),
        c.axis.key()
    );
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n\
         <title>{}</title>\n<style>{}</style>\n</head>\n<body>\n<main>\n<header>\n\
         <p class=\"kicker\">Run comparison</p>\n<h1>{}</h1>\n",
        e(&title),
        super::html::STYLE,
        e(&title)
    );
    for (source, name) in c.sources.iter().zip(&c.table.columns) {
        out.push_str(&format!(
            "<p class=\"meta\">{}: <code>{}</code></p>\n",
            e(name),
            e(source)
        ));
    }
    out.push_str("</header>\n");
    if !c.notes.is_empty() {
        out.push_str("<div class=\"warnings\"><h3>Read with care</h3><ul>");
        for note in &c.notes {
            out.push_str(&format!("<li>{}</li>", escape::html_prose(note)));
        }
        out.push_str("</ul></div>\n");
    }
    // The table across the page, its columns sharing the width: values
    // wrap rather than push the table past the page, for any number of runs.
    out.push_str("<div class=\"grid\">\n<div class=\"panel plans\">\n<h3>Plans side by side</h3>\n<table>\n<tr><th></th>");
    for name in &c.table.columns {
        out.push_str(&format!("<th scope=\"col\">{}</th>", e(name)));
    }
    out.push_str("</tr>\n");
    for row in &c.table.rows {
        out.push_str(&format!(
            "<tr><th scope=\"row\">{}{}</th>",
            e(&row.label),
            if row.differs { " ≠" } else { "" }
        ));
        for value in &row.values {
            out.push_str(&format!(
                "<td class=\"v long\">{}</td>",
                escape::html_prose(value)
            ));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n</div>\n");
    for chart in &c.charts {
        super::html::figure(&mut out, chart);
    }
    out.push_str("</div>\n</main>\n</body>\n</html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::largest_difference;

    #[test]
    fn agreement_is_the_largest_difference_over_the_overlap() {
        let a = [[0.0, 4.0], [10.0, 2.0], [20.0, 1.0]];
        assert_eq!(largest_difference(&a, &a), Some(0.0));
        // Between the reference's points, it is interpolated; outside the
        // overlap, nothing is compared.
        let b = [[5.0, 3.5], [20.0, 1.0], [30.0, 9.0]];
        assert_eq!(largest_difference(&a, &b), Some(0.5));
        assert_eq!(largest_difference(&a, &[[40.0, 1.0]]), None);
        assert_eq!(largest_difference(&a, &[]), None);
    }
}
