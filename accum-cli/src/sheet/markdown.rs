//! The sheet as Markdown. Plots are the same SVG drawings as in the HTML
//! sheet, written as files beside the Markdown and linked by relative path.

use std::fmt::Write as _;

use super::chart::Chart;
use super::{Sheet, Table};
use crate::escape;

/// Renders the sheet. `link` gives the relative path of a chart's SVG
/// written beside the Markdown file; without it, plots are only named.
pub(crate) fn render(sheet: &Sheet, link: &dyn Fn(&Chart) -> Option<String>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Run sheet: {}\n", escape::markdown(&sheet.name));
    if !sheet.mismatch.is_empty() {
        let _ = writeln!(
            out,
            "> **The run report does not belong to this configuration** (rendered with `--force`): the preparation and the trial describe different runs.\n>"
        );
        for said in &sheet.mismatch {
            let _ = writeln!(out, "> - {}", escape::markdown(said));
        }
        out.push('\n');
    }
    if let Some(changed) = &sheet.config_changed {
        let _ = writeln!(
            out,
            "> **The configuration file changed since the run**; its plan and length did not: {}.\n",
            escape::markdown(changed)
        );
    }
    if let Some(notes) = &sheet.notes {
        let _ = writeln!(out, "> {}\n", escape::markdown(notes));
    }
    let _ = write!(
        out,
        "Configuration: {}",
        escape::markdown_code(&sheet.config)
    );
    if let Some(trial) = &sheet.trial {
        let _ = write!(
            out,
            " · run report: {}",
            escape::markdown_code(&trial.source)
        );
    }
    out.push_str("\n\n");
    if let Some(facts) = sheet
        .provenance
        .as_ref()
        .map(super::provenance_facts)
        .filter(|f| !f.is_empty())
    {
        let _ = writeln!(out, "Run: {}\n", escape::markdown(&facts.join(" · ")));
    }

    // The summary as one table: a column per figure.
    let cards = &sheet.summary.cards;
    let row = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
    out.push_str(&row(cards
        .iter()
        .map(|c| escape::markdown(&c.label))
        .collect()));
    out.push_str(&row(cards.iter().map(|_| "---".to_owned()).collect()));
    out.push_str(&row(cards
        .iter()
        .map(|c| format!("**{}**", escape::markdown(&c.value)))
        .collect()));
    out.push_str(&row(cards
        .iter()
        .map(|c| escape::markdown(&c.detail))
        .collect()));
    out.push('\n');

    let _ = writeln!(out, "## Preparation\n");
    let unlinked = sheet.charts().filter(|c| link(c).is_none()).count();
    for chart in &sheet.preparation.charts {
        figure(&mut out, chart, link);
    }
    if let Some(stages) = &sheet.preparation.stages {
        stages.grid().markdown(&mut out);
    }
    for table in &sheet.preparation.tables {
        table_md(&mut out, table);
    }
    let _ = writeln!(out, "## Trial\n");
    match &sheet.trial {
        None => {
            let _ = writeln!(
                out,
                "No run report given (`accum sheet FILE --report RUN.json`).\n"
            );
        }
        Some(trial) => {
            if !trial.warnings.is_empty() {
                let _ = writeln!(out, "### Warnings\n");
                for warning in &trial.warnings {
                    let _ = writeln!(out, "- {}", escape::markdown(warning));
                }
                out.push('\n');
            }
            if let Some(stages) = &trial.stages {
                stages.grid().markdown(&mut out);
            }
            for chart in &trial.charts {
                figure(&mut out, chart, link);
            }
            for table in &trial.tables {
                table_md(&mut out, table);
            }
        }
    }
    if unlinked > 0 {
        let _ = writeln!(
            out,
            "_{unlinked} plot{} not included: write the sheet to a file (`-o sheet.md`) to get {} as SVG beside it._\n",
            if unlinked == 1 { " is" } else { "s are" },
            if unlinked == 1 { "it" } else { "them" }
        );
    }
    let _ = writeln!(out, "## Accepted results\n");
    match &sheet.accepted {
        Some(text) => {
            let _ = writeln!(out, "{}", escape::markdown(text));
        }
        None => {
            let _ = writeln!(
                out,
                "None yet: a trial is not an accepted result until someone reviews it."
            );
        }
    }
    out
}

fn figure(out: &mut String, chart: &Chart, link: &dyn Fn(&Chart) -> Option<String>) {
    let _ = writeln!(out, "### {}\n", escape::markdown(&chart.title));
    if let Some(path) = link(chart) {
        let _ = writeln!(
            out,
            "![{}]({})\n",
            escape::markdown(&chart.title),
            escape::url_path(&path)
        );
    }
    let _ = writeln!(out, "{}\n", escape::markdown(&chart.caption));
}

fn table_md(out: &mut String, table: &Table) {
    let _ = writeln!(out, "### {}\n", escape::markdown(&table.title));
    let _ = writeln!(out, "| | value | note |");
    let _ = writeln!(out, "|---|---|---|");
    for row in &table.rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            escape::markdown(&row.label),
            escape::markdown(&row.value),
            escape::markdown(&row.note)
        );
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sheet::tests::fp16_sheet;

    #[test]
    fn summary_sections_and_linked_plots() {
        let (sheet, _) = fp16_sheet();
        let md = render(&sheet, &|chart| Some(format!("sheet.{}.svg", chart.id)));
        let at = |needle: &str| {
            md.find(needle)
                .unwrap_or_else(|| panic!("{needle} in {md}"))
        };
        assert!(
            at("# Run sheet: fp16 &lt;b&gt;tiny&lt;/b&gt; &amp; skipped") < at("## Preparation")
        );
        assert!(at("## Preparation") < at("## Trial"));
        assert!(at("## Trial") < at("## Accepted results"));
        assert!(md.contains(
            "| effective batch B | tokens per update | updates | epochs | loss | loss, windowed means |\n| --- | --- | --- | --- | --- | --- |\n| **16 examples** |"
        ));
        for (title, id) in [
            ("Learning-rate schedule", "schedule"),
            ("Loss against examples", "loss"),
            ("Learning rate against examples", "lr"),
            ("Gradient norm", "grad-norm"),
            ("Loss scale", "loss-scale"),
        ] {
            assert!(md.contains(&format!("![{title}](sheet.{id}.svg)")), "{id}");
        }
        assert!(md.contains(
            "> loss scale 2^24 at the start: the first attempts overflow \\| the scale backs off"
        ));
        assert!(!md.contains("not included"));
    }

    #[test]
    fn without_files_the_plots_are_named() {
        let (sheet, _) = fp16_sheet();
        let md = render(&sheet, &|_| None);
        assert!(!md.contains("]("), "no links: {md}");
        assert!(md.contains("_5 plots are not included: write the sheet to a file"));
    }

    #[test]
    fn a_ramp_up_gets_its_stages_table_and_two_plots() {
        let sheet = crate::sheet::tests::sheet_of(crate::sheet::tests::RAMPUP);
        let md = render(&sheet, &|chart| Some(format!("sheet.{}.svg", chart.id)));
        assert!(md.contains(
            "| stage | B = m·A·D | A | tokens per update | starts after | updates | examples | tokens | until |\n| ---: | --- | ---: | ---: | --- | ---: | ---: | ---: | --- |\n| 1 | 16 = 4 × 2 × 2 | 2 | 512 | the start | 20 | 320 | 10,240 | 10240 tokens |"
        ), "{md}");
        assert!(
            md.contains("![Batch and learning rate against tokens](sheet.schedule-tokens.svg)")
        );
        let at = |needle: &str| {
            md.find(needle)
                .unwrap_or_else(|| panic!("{needle} in {md}"))
        };
        assert!(
            at("### Batch and learning rate against updates")
                < at("### Batch and learning rate against tokens")
        );
        assert!(
            at("### Batch and learning rate against tokens") < at("### Batch ramp-up in 3 stages")
        );
        assert!(at("### Batch ramp-up in 3 stages") < at("### Plan after the ramp-up"));
        assert!(md.contains("| **16 → 32 → 64** |"));
    }
}
