//! Writing a built sheet: the format from `--format` or the output's
//! extension; Markdown gets its plots as SVG files beside it
//! (`sheet.md` → `sheet.schedule.svg`, `sheet.loss.svg`, …), written
//! before the Markdown that links them. Every file is written atomically.

use std::path::{Path, PathBuf};

use super::chart::Chart;
use super::{Sheet, html, markdown, plot};
use crate::cli::SheetFormat;
use crate::error::CliError;
use crate::fsio::{check_writable, write_atomic};
use crate::output::print_text;

/// The format of `output`'s extension, Markdown by default.
pub(crate) fn format_for(output: Option<&Path>) -> SheetFormat {
    match output.and_then(|p| p.extension()).and_then(|e| e.to_str()) {
        Some("html" | "htm") => SheetFormat::Html,
        Some("json") => SheetFormat::Json,
        _ => SheetFormat::Md,
    }
}

/// Where a chart of the Markdown sheet `output` is written.
pub(crate) fn chart_path(output: &Path, chart: &Chart) -> PathBuf {
    output.with_extension(format!("{}.svg", chart.id))
}

/// Renders `sheet` in `format` to `output`, or to stdout.
pub(crate) fn write(
    sheet: &Sheet,
    format: Option<SheetFormat>,
    output: Option<&Path>,
) -> Result<(), CliError> {
    let text = match format.unwrap_or_else(|| format_for(output)) {
        SheetFormat::Json => {
            let mut text = serde_json::to_string_pretty(sheet)
                .map_err(|err| CliError::usage(format!("cannot render JSON: {err}")))?;
            text.push('\n');
            text
        }
        SheetFormat::Html => html::render(sheet),
        SheetFormat::Md => match output {
            Some(out) => {
                // The sheet's own path is checked first, so that a wrong
                // path is reported as such; the plots are written before
                // the Markdown that links them.
                check_writable(out)?;
                for chart in sheet.charts() {
                    write_atomic(&chart_path(out, chart), plot::render(chart).as_bytes())?;
                }
                markdown::render(sheet, &|chart| {
                    chart_path(out, chart)
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                })
            }
            None => markdown::render(sheet, &|_| None),
        },
    };
    match output {
        Some(out) => write_atomic(out, text.as_bytes()),
        None => print_text(&text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_plot_files_follow_the_output_name() {
        assert_eq!(format_for(Some(Path::new("a/sheet.HTML"))), SheetFormat::Md);
        assert_eq!(
            format_for(Some(Path::new("a/sheet.htm"))),
            SheetFormat::Html
        );
        assert_eq!(format_for(Some(Path::new("sheet.json"))), SheetFormat::Json);
        assert_eq!(format_for(None), SheetFormat::Md);
        let (sheet, _) = crate::sheet::tests::fp16_sheet();
        let loss = sheet.charts().nth(1).expect("the loss chart");
        assert_eq!(
            chart_path(Path::new("out/run 1.md"), loss),
            Path::new("out/run 1.loss.svg")
        );
    }
}
