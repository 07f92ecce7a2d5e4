//! The sheet as Markdown; the loss curve is linked as an SVG file beside it.

use std::fmt::Write as _;

use super::{Sheet, Table, escape_markdown};

/// Renders the sheet. `curve_link` is the relative path of the SVG written
/// beside the Markdown file, if any.
pub fn render(sheet: &Sheet, curve_link: Option<&str>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Run sheet: {}\n", escape_markdown(&sheet.name));
    if let Some(notes) = &sheet.notes {
        let _ = writeln!(out, "> {}\n", escape_markdown(notes));
    }
    let _ = writeln!(out, "Configuration: `{}`\n", sheet.config.replace('`', "'"));
    let _ = writeln!(out, "## Preparation\n");
    for table in &sheet.preparation {
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
            let _ = writeln!(out, "Observed in `{}`.\n", trial.source.replace('`', "'"));
            for table in &trial.tables {
                table_md(&mut out, table);
            }
            let _ = writeln!(
                out,
                "### Loss against {}\n",
                escape_markdown(&trial.curve.axis)
            );
            match curve_link {
                Some(link) => {
                    let _ = writeln!(
                        out,
                        "![loss against {}]({})\n",
                        escape_markdown(&trial.curve.axis),
                        link.replace(' ', "%20")
                    );
                }
                None => {
                    let _ = writeln!(
                        out,
                        "{} points (write the sheet with `-o` to get the SVG).\n",
                        trial.curve.points.len()
                    );
                }
            }
            if !trial.warnings.is_empty() {
                let _ = writeln!(out, "### Warnings\n");
                for warning in &trial.warnings {
                    let _ = writeln!(out, "- {}", escape_markdown(warning));
                }
                out.push('\n');
            }
        }
    }
    let _ = writeln!(out, "## Accepted results\n");
    match &sheet.accepted {
        Some(text) => {
            let _ = writeln!(out, "{}", escape_markdown(text));
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

fn table_md(out: &mut String, table: &Table) {
    let _ = writeln!(out, "### {}\n", escape_markdown(&table.title));
    let _ = writeln!(out, "| | value | note |");
    let _ = writeln!(out, "|---|---|---|");
    for row in &table.rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            escape_markdown(&row.label),
            escape_markdown(&row.value),
            escape_markdown(&row.note)
        );
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sheet::sample;

    #[test]
    fn sections_are_kept_apart_and_text_escaped() {
        let md = render(&sample(), Some("run.svg"));
        let prep = md.find("## Preparation").expect("preparation");
        let trial = md.find("## Trial").expect("trial");
        let accepted = md.find("## Accepted results").expect("accepted");
        assert!(prep < trial && trial < accepted);
        assert!(
            md.contains("tiny &lt;script&gt;alert(1)&lt;/script&gt;"),
            "{md}"
        );
        assert!(md.contains("a \\| b &amp; \"c\""), "{md}");
        assert!(md.contains("![loss against updates](run.svg)"));
    }
}
