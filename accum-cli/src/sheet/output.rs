//! Writing a built sheet: the format from `--format` or the output's
//! extension; Markdown gets its plots as SVG files beside it
//! (`sheet.md` → `sheet.schedule.svg`, `sheet.loss.svg`, …), written
//! before the Markdown that links them. The files are written all or none
//! ([`crate::writes::Outputs`]); the plots are names accum made, so a link, a
//! folder or a file that is not one of accum's plots at such a name refuses
//! the sheet.

use std::path::{Path, PathBuf};

use super::chart::Chart;
use super::compare::{self, Comparison};
use super::{Sheet, html, markdown, plot};
use crate::cli::SheetFormat;
use crate::error::CliError;
use crate::output::print_text;
use crate::writes::{Outputs, check_writable};
use accum_core::fsio::{Derived, Naming, Replaces};

/// The format of a sheet: `--format`'s, which the extension of `output`
/// must agree with, else the one the extension names (in any case), else
/// Markdown on stdout; a name whose extension names no format a sheet
/// has is refused (`crate::outfile`).
pub(crate) fn format_for(
    output: Option<&Path>,
    format: Option<SheetFormat>,
    command: &str,
) -> Result<SheetFormat, CliError> {
    // A run report's statistics as CSV are the sheet's, not a comparison's.
    let csv = command == "sheet";
    use crate::outfile::{FileFormat, output_format};
    let Some(out) = output else {
        return Ok(format.unwrap_or(SheetFormat::Md));
    };
    let to_file = |f: SheetFormat| match f {
        SheetFormat::Md => FileFormat::Markdown,
        SheetFormat::Html => FileFormat::Html,
        SheetFormat::Json => FileFormat::Json,
        SheetFormat::Csv => FileFormat::Csv,
    };
    let mut writes = vec![FileFormat::Markdown, FileFormat::Html, FileFormat::Json];
    if csv {
        writes.push(FileFormat::Csv);
    }
    Ok(
        match output_format(out, &writes, format.map(to_file), command)? {
            FileFormat::Html => SheetFormat::Html,
            FileFormat::Json => SheetFormat::Json,
            FileFormat::Csv => SheetFormat::Csv,
            _ => SheetFormat::Md,
        },
    )
}

/// The mark in every plot file beside a Markdown sheet, by which accum
/// knows the file as its own and replaces it when the sheet is written
/// again.
const PLOT_MARK: &str = "<!-- a plot of an accum sheet, written again with the sheet -->";

/// A plot beside a Markdown sheet: a name accum made.
const PLOT_FILE: Naming = Naming::Derived(Derived {
    what: "a plot beside the Markdown sheet",
    replaces: Replaces::Recognised(is_plot),
});

/// Whether `head`, the start of a file, is a plot accum wrote.
fn is_plot(head: &[u8]) -> bool {
    head.starts_with(b"<svg")
        && head
            .windows(PLOT_MARK.len())
            .any(|w| w == PLOT_MARK.as_bytes())
}

/// The plot file of `chart`: its SVG with [`PLOT_MARK`] after the opening
/// tag.
fn plot_file(chart: &Chart) -> String {
    let mut svg = plot::render(chart);
    let at = svg.find('>').map_or(svg.len(), |end| end + 1);
    svg.insert_str(at, &format!("\n{PLOT_MARK}"));
    svg
}

/// Where a chart of the Markdown sheet `output` is written.
pub(crate) fn chart_path(output: &Path, chart: &Chart) -> PathBuf {
    output.with_extension(format!("{}.svg", chart.id))
}

/// What a sheet or a comparison is rendered from: its plots, and its
/// text in each format given a way to link the plots.
pub(crate) trait Document {
    /// The plots, in order.
    fn charts(&self) -> Vec<&Chart>;
    /// The JSON document.
    fn json(&self) -> Result<String, CliError>;
    /// The HTML page.
    fn html(&self) -> String;
    /// The Markdown text; `link` names each plot's SVG file, if any.
    fn markdown(&self, link: &dyn Fn(&Chart) -> Option<String>) -> String;
}

impl Document for Sheet {
    fn charts(&self) -> Vec<&Chart> {
        Sheet::charts(self).collect()
    }
    fn json(&self) -> Result<String, CliError> {
        to_json(self)
    }
    fn html(&self) -> String {
        html::render(self)
    }
    fn markdown(&self, link: &dyn Fn(&Chart) -> Option<String>) -> String {
        markdown::render(self, link)
    }
}

impl Document for Comparison {
    fn charts(&self) -> Vec<&Chart> {
        self.charts.iter().collect()
    }
    fn json(&self) -> Result<String, CliError> {
        to_json(self)
    }
    fn html(&self) -> String {
        compare::html(self)
    }
    fn markdown(&self, link: &dyn Fn(&Chart) -> Option<String>) -> String {
        compare::markdown(self, link)
    }
}

fn to_json(value: &impl serde::Serialize) -> Result<String, CliError> {
    let mut text = crate::escape::json(
        serde_json::to_string_pretty(value)
            .map_err(|err| CliError::usage(format!("cannot render JSON: {err}")))?,
    );
    text.push('\n');
    Ok(text)
}

/// Renders `doc` in `format` to `output`, or to stdout. With `output`,
/// prints the files it wrote, one a line.
pub(crate) fn write(
    doc: &dyn Document,
    format: Option<SheetFormat>,
    output: Option<&Path>,
    command: &str,
) -> Result<(), CliError> {
    let mut outputs = Outputs::new();
    let text = match format_for(output, format, command)? {
        SheetFormat::Json => doc.json()?,
        SheetFormat::Html => doc.html(),
        SheetFormat::Csv => {
            return Err(CliError::usage(
                "--format csv gives a run report's per-update statistics: use it with `sheet CONFIG --report RUN.json`",
            ));
        }
        SheetFormat::Md => match output {
            Some(out) => {
                // The sheet's own path is checked first, so that a wrong
                // path is reported as such; the plots are renamed before
                // the Markdown that links them.
                check_writable(out, Naming::Given)?;
                for chart in doc.charts() {
                    outputs.add(
                        &chart_path(out, chart),
                        plot_file(chart).as_bytes(),
                        PLOT_FILE,
                    )?;
                }
                doc.markdown(&|chart| {
                    chart_path(out, chart)
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                })
            }
            None => doc.markdown(&|_| None),
        },
    };
    match output {
        Some(out) => {
            outputs.add(out, text.as_bytes(), Naming::Given)?;
            let mut written = outputs.commit()?;
            // The sheet first, then what is beside it.
            written.rotate_right(1);
            print_written(&written)
        }
        None => print_text(&text),
    }
}

/// `wrote sheet.md` and a line for each file beside it.
pub(crate) fn print_written(paths: &[PathBuf]) -> Result<(), CliError> {
    let mut text = String::new();
    for (i, path) in paths.iter().enumerate() {
        if i == 0 {
            text.push_str(&format!("wrote {}\n", accum_core::shown::path(path)));
        } else {
            text.push_str(&format!("  and {}\n", accum_core::shown::path(path)));
        }
    }
    print_text(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_plot_files_follow_the_output_name() {
        let format = |out: Option<&str>, given| {
            format_for(out.map(Path::new), given, "sheet").map_err(|e| e.to_string())
        };
        assert_eq!(format(Some("a/sheet.HTML"), None), Ok(SheetFormat::Html));
        assert_eq!(format(Some("a/sheet.htm"), None), Ok(SheetFormat::Html));
        assert_eq!(format(Some("sheet.json"), None), Ok(SheetFormat::Json));
        assert_eq!(format(Some("r.csv"), None), Ok(SheetFormat::Csv));
        assert_eq!(format(None, None), Ok(SheetFormat::Md));
        assert_eq!(format(None, Some(SheetFormat::Html)), Ok(SheetFormat::Html));
        assert_eq!(
            format(Some("sheet"), Some(SheetFormat::Html)),
            Ok(SheetFormat::Html)
        );
        assert!(format(Some("sheet"), None).is_err());
        assert!(format(Some("sheet.yaml"), None).is_err());
        assert!(format(Some("sheet.md"), Some(SheetFormat::Html)).is_err());
        let (sheet, _) = crate::sheet::tests::fp16_sheet();
        let loss = sheet.charts().nth(1).expect("the loss chart");
        assert_eq!(
            chart_path(Path::new("out/run 1.md"), loss),
            Path::new("out/run 1.loss.svg")
        );
        let file = plot_file(loss);
        assert!(
            file.starts_with("<svg ") && is_plot(file.as_bytes()),
            "{file}"
        );
        assert!(!is_plot(plot::render(loss).as_bytes()));
    }
}
