//! Tables with a column per quantity and a row per item — the stages of a
//! ramp-up as planned, and what a run trained in each — formatted once and
//! drawn by [`markdown`](super::markdown) and [`html`](super::html).

use std::fmt::Write as _;

use crate::escape;

/// A column of a [`Grid`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Column {
    /// Its title under its group's (`"examples"` under `"trained"`).
    pub(crate) title: String,
    /// Its title alone, where groups are not drawn (Markdown).
    pub(crate) full: String,
    /// The title over it and its neighbours of the same group.
    pub(crate) group: Option<&'static str>,
    /// Whether it holds counts, aligned on the right.
    pub(crate) numeric: bool,
}

impl Column {
    /// A column outside any group.
    pub(crate) fn new(title: &str, numeric: bool) -> Column {
        Column {
            title: title.to_owned(),
            full: title.to_owned(),
            group: None,
            numeric,
        }
    }

    /// A column of `group`, titled `full` where groups are not drawn.
    pub(crate) fn grouped(group: &'static str, title: &str, full: &str, numeric: bool) -> Column {
        Column {
            title: title.to_owned(),
            full: full.to_owned(),
            group: Some(group),
            numeric,
        }
    }
}

/// A row of a [`Grid`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum GridRow {
    /// A cell per column; `muted` for an item the run did not reach.
    Cells {
        /// The cells, formatted.
        cells: Vec<String>,
        /// Whether to draw it faint.
        muted: bool,
    },
    /// Rows left out of a long table, said in words (`"20 more stages"`).
    Gap(String),
}

/// A table with a column per quantity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Grid {
    /// Its HTML id.
    pub(crate) id: &'static str,
    /// Its title.
    pub(crate) title: String,
    /// The sentence before it.
    pub(crate) lead: String,
    /// Its columns.
    pub(crate) columns: Vec<Column>,
    /// Its rows.
    pub(crate) rows: Vec<GridRow>,
    /// What a reader must know after it: where the run differs from what
    /// was asked (in the alert colour).
    pub(crate) notes: Vec<String>,
    /// What a reader may like to know after it: what the settings make
    /// happen as expected (a partial group at an epoch's end), not drawn
    /// as an alert.
    pub(crate) remarks: Vec<String>,
}

impl Grid {
    /// The grid in Markdown: a heading, the lead, the table and its notes.
    pub(crate) fn markdown(&self, out: &mut String) {
        let _ = writeln!(out, "### {}\n", escape::markdown(&self.title));
        let _ = writeln!(out, "{}\n", escape::markdown(&self.lead));
        let row = |cells: &[String]| {
            let cells: Vec<String> = cells.iter().map(|c| escape::markdown(c)).collect();
            format!("| {} |\n", cells.join(" | "))
        };
        let titles: Vec<String> = self.columns.iter().map(|c| c.full.clone()).collect();
        out.push_str(&row(&titles));
        // Counts to the right, text to the left.
        let align: Vec<&str> = self
            .columns
            .iter()
            .map(|c| if c.numeric { "---:" } else { "---" })
            .collect();
        let _ = writeln!(out, "| {} |", align.join(" | "));
        for grid_row in &self.rows {
            match grid_row {
                GridRow::Cells { cells, .. } => out.push_str(&row(cells)),
                GridRow::Gap(text) => {
                    let mut gap = vec![String::new(); self.columns.len()];
                    gap[0] = "…".to_owned();
                    if let Some(cell) = gap.get_mut(1) {
                        cell.clone_from(text);
                    }
                    out.push_str(&row(&gap));
                }
            }
        }
        out.push('\n');
        for note in self.notes.iter().chain(&self.remarks) {
            let _ = writeln!(out, "{}\n", escape::markdown(note));
        }
    }

    /// The grid as an HTML panel across the page: the columns of a group
    /// under one title.
    pub(crate) fn html(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "<div class=\"panel stages\" id=\"{}\">\n<h3>{}</h3>\n<p class=\"lead\">{}</p>\n<div class=\"scroll\"><table>\n<thead><tr>",
            escape::html(self.id),
            escape::html(&self.title),
            escape::html(&self.lead)
        );
        let class = |numeric: bool| if numeric { " class=\"num\"" } else { "" };
        let grouped = self.columns.iter().any(|c| c.group.is_some());
        let rowspan = if grouped { " rowspan=\"2\"" } else { "" };
        let mut at = 0;
        while let Some(column) = self.columns.get(at) {
            match column.group {
                Some(group) => {
                    let span = self.columns[at..]
                        .iter()
                        .take_while(|c| c.group == Some(group))
                        .count();
                    let _ = write!(
                        out,
                        "<th scope=\"colgroup\" colspan=\"{span}\" class=\"group\">{}</th>",
                        escape::html(group)
                    );
                    at += span;
                }
                None => {
                    let _ = write!(
                        out,
                        "<th scope=\"col\"{rowspan}{}>{}</th>",
                        class(column.numeric),
                        escape::html(&column.title)
                    );
                    at += 1;
                }
            }
        }
        if grouped {
            out.push_str("</tr>\n<tr>");
            for column in self.columns.iter().filter(|c| c.group.is_some()) {
                let _ = write!(
                    out,
                    "<th scope=\"col\"{}>{}</th>",
                    class(column.numeric),
                    escape::html(&column.title)
                );
            }
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for grid_row in &self.rows {
            match grid_row {
                GridRow::Gap(text) => {
                    let _ = writeln!(
                        out,
                        "<tr class=\"gap\"><td colspan=\"{}\">… {} …</td></tr>",
                        self.columns.len(),
                        escape::html_prose(text)
                    );
                }
                GridRow::Cells { cells, muted } => {
                    out.push_str(if *muted {
                        "<tr class=\"unreached\">"
                    } else {
                        "<tr>"
                    });
                    for (column, cell) in self.columns.iter().zip(cells) {
                        let _ = write!(
                            out,
                            "<td{}>{}</td>",
                            class(column.numeric),
                            escape::html_prose(cell)
                        );
                    }
                    out.push_str("</tr>\n");
                }
            }
        }
        out.push_str("</tbody>\n</table></div>\n");
        for note in &self.notes {
            let _ = writeln!(
                out,
                "<p class=\"note\" role=\"note\">{}</p>",
                escape::html_prose(note)
            );
        }
        for remark in &self.remarks {
            let _ = writeln!(
                out,
                "<p class=\"remark\">{}</p>",
                escape::html_prose(remark)
            );
        }
        out.push_str("</div>\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid() -> Grid {
        Grid {
            id: "trained-stages",
            title: "Per stage".into(),
            lead: "Each stage <as run>.".into(),
            columns: vec![
                Column::new("stage", true),
                Column::grouped("planned", "updates", "planned updates", true),
                Column::grouped("trained", "updates", "trained updates", true),
                Column::grouped("trained", "skipped", "skipped", true),
                Column::new("note", false),
            ],
            rows: vec![
                GridRow::Cells {
                    cells: ["1", "20", "20", "0", "a|b"].map(String::from).to_vec(),
                    muted: false,
                },
                GridRow::Gap("3 more stages".into()),
                GridRow::Cells {
                    cells: ["5", "10", "0", "0", ""].map(String::from).to_vec(),
                    muted: true,
                },
            ],
            notes: vec!["Stage 5 was not reached.".into()],
            remarks: vec!["Stage 1 ended an epoch with a partial group.".into()],
        }
    }

    #[test]
    fn markdown_names_each_column_in_full() {
        let mut md = String::new();
        grid().markdown(&mut md);
        assert_eq!(
            md,
            "### Per stage\n\nEach stage &lt;as run&gt;.\n\n\
             | stage | planned updates | trained updates | skipped | note |\n\
             | ---: | ---: | ---: | ---: | --- |\n\
             | 1 | 20 | 20 | 0 | a\\|b |\n\
             | … | 3 more stages |  |  |  |\n\
             | 5 | 10 | 0 | 0 |  |\n\n\
             Stage 5 was not reached.\n\n\
             Stage 1 ended an epoch with a partial group.\n\n"
        );
    }

    #[test]
    fn html_groups_columns_under_one_title() {
        let mut html = String::new();
        grid().html(&mut html);
        assert!(html.contains("id=\"trained-stages\""), "{html}");
        assert!(
            html.contains(
                "<thead><tr>\n<th scope=\"col\" rowspan=\"2\" class=\"num\">stage</th>\
                 <th scope=\"colgroup\" colspan=\"1\" class=\"group\">planned</th>\
                 <th scope=\"colgroup\" colspan=\"2\" class=\"group\">trained</th>\
                 <th scope=\"col\" rowspan=\"2\">note</th></tr>\n\
                 <tr><th scope=\"col\" class=\"num\">updates</th>\
                 <th scope=\"col\" class=\"num\">updates</th>\
                 <th scope=\"col\" class=\"num\">skipped</th></tr></thead>"
            ),
            "{html}"
        );
        assert!(html.contains("<td colspan=\"5\">… 3 more stages …</td>"));
        assert!(html.contains("<tr class=\"unreached\"><td class=\"num\">5</td>"));
        assert!(html.contains("<td>a|b</td>"));
        assert!(html.contains("Each stage &lt;as run&gt;."));
        assert!(html.contains("<p class=\"note\" role=\"note\">Stage 5 was not reached.</p>"));
        assert!(
            html.contains("<p class=\"remark\">Stage 1 ended an epoch with a partial group.</p>")
        );
    }
}
