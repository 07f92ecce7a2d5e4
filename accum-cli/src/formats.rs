//! Diagnostics where configs are reviewed, each rendering made from the same
//! [`Diagnostic`]s as the human one:
//!
//! - GitHub Actions workflow commands (`::error file=…,line=…::…`), which
//!   the runner turns into annotations on the pull request's diff;
//! - SARIF 2.1.0, the format code scanning uploads read;
//! - the closing `accum explain` hint of the human output.

use accum_core::Code;
use serde_sarif::sarif;

use crate::diagnostic::{Diagnostic, LISTED_PER_CODE, Severity, capped};
use crate::escape;
use crate::source::LineIndex;

/// The diagnostics of one file, with the name they are shown under and the
/// text their ranges point into.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FileFindings<'a> {
    /// The file name as given.
    pub(crate) name: &'a str,
    /// The file's text.
    pub(crate) text: &'a str,
    /// Its diagnostics.
    pub(crate) diagnostics: &'a [Diagnostic],
}

/// The 1-based start and end (line, column) of a diagnostic's value,
/// columns in characters; `(1, 1)` for both for the file as a whole.
fn region(lines: &LineIndex<'_>, diagnostic: &Diagnostic) -> ((usize, usize), (usize, usize)) {
    let range = diagnostic.location.range.clone().unwrap_or(0..0);
    (lines.line_col(range.start), lines.line_col(range.end))
}

/// The message with the findings folded into it and its fix, for formats
/// that have one text per finding.
fn message_with_help(diagnostic: &Diagnostic) -> String {
    let mut text = diagnostic.finding.message.clone();
    for c in &diagnostic.consequences {
        text.push_str(&format!("\nnote: [{}] {}", c.code, c.message));
    }
    if let Some(help) = diagnostic.help_text() {
        text.push_str(&format!("\nhelp: {help}"));
    }
    text
}

/// One GitHub Actions workflow command per diagnostic:
/// `::error file=F,line=L,col=C,endLine=…,endColumn=…,title=CODE::MESSAGE`
/// (`::warning` for warnings), the fix on the message's second line. The
/// name, code and message go through the workflow command's escapers
/// ([`escape::github_property`], [`escape::github_data`]): one command
/// per diagnostic, whatever they hold.
pub(crate) fn render_github(files: &[FileFindings<'_>]) -> String {
    let mut out = String::new();
    for file in files {
        let lines = LineIndex::new(file.text);
        let listed = capped(file.name, file.diagnostics, LISTED_PER_CODE);
        for diagnostic in listed.iter() {
            let command = match diagnostic.finding.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            let ((line, col), (end_line, end_col)) = region(&lines, diagnostic);
            out.push_str(&format!(
                "::{command} file={},line={line},col={col},endLine={end_line},endColumn={end_col},title={}::{}\n",
                escape::github_property(file.name),
                escape::github_property(diagnostic.finding.code.as_str()),
                escape::github_data(&message_with_help(diagnostic)),
            ));
        }
    }
    out
}

/// The rule of `code` for the SARIF driver: its id and the one-sentence
/// summary `accum explain` opens with.
fn rule(code: Code) -> sarif::ReportingDescriptor {
    let summary = code.summary();
    sarif::ReportingDescriptor::builder()
        .id(code.as_str())
        .short_description(
            sarif::MultiformatMessageString::builder()
                .text(summary)
                .build(),
        )
        .build()
}

/// A diagnostic's fixes as SARIF `fixes`: per fix its description (with
/// its applicability, which SARIF has no field for) and its replacements,
/// each region located by line and column and by bytes.
fn sarif_fixes(
    file: &FileFindings<'_>,
    lines: &LineIndex<'_>,
    diagnostic: &Diagnostic,
) -> Vec<sarif::Fix> {
    diagnostic
        .fixes
        .iter()
        .map(|fix| {
            let replacements: Vec<sarif::Replacement> = fix
                .edits
                .iter()
                .map(|edit| {
                    let (line, col) = lines.line_col(edit.range.start);
                    let (end_line, end_col) = lines.line_col(edit.range.end);
                    let region = sarif::Region::builder()
                        .start_line(count(line))
                        .start_column(count(col))
                        .end_line(count(end_line))
                        .end_column(count(end_col))
                        .byte_offset(count(edit.range.start))
                        .byte_length(count(edit.range.len()))
                        .build();
                    sarif::Replacement::builder()
                        .deleted_region(region)
                        .inserted_content(
                            sarif::ArtifactContent::builder()
                                .text(edit.replacement.clone())
                                .build(),
                        )
                        .build()
                })
                .collect();
            sarif::Fix::builder()
                .description(
                    sarif::Message::builder()
                        .text(format!("{} ({})", fix.message, fix.applicability.as_str()))
                        .build(),
                )
                .artifact_changes(vec![
                    sarif::ArtifactChange::builder()
                        .artifact_location(
                            sarif::ArtifactLocation::builder()
                                .uri(escape::url_path(file.name))
                                .build(),
                        )
                        .replacements(replacements)
                        .build(),
                ])
                .build()
        })
        .collect()
}

/// One SARIF 2.1.0 log with one run: the tool, the rules of the codes that
/// occur, and one result per diagnostic, located by line and column in
/// characters (`columnKind: unicodeCodePoints`).
pub(crate) fn to_sarif(files: &[FileFindings<'_>]) -> sarif::Sarif {
    let mut codes: Vec<Code> = files
        .iter()
        .flat_map(|f| f.diagnostics.iter().map(|d| d.finding.code))
        .collect();
    codes.sort_unstable_by_key(|code| code.as_str());
    codes.dedup();
    let mut results = Vec::new();
    for file in files {
        let lines = LineIndex::new(file.text);
        let listed = capped(file.name, file.diagnostics, LISTED_PER_CODE);
        for diagnostic in listed.iter() {
            let ((line, col), (end_line, end_col)) = region(&lines, diagnostic);
            let level = match diagnostic.finding.severity {
                Severity::Error => sarif::ResultLevel::Error,
                Severity::Warning => sarif::ResultLevel::Warning,
            };
            let region = sarif::Region::builder()
                .start_line(count(line))
                .start_column(count(col))
                .end_line(count(end_line))
                .end_column(count(end_col))
                .build();
            let location = sarif::Location::builder()
                .physical_location(
                    sarif::PhysicalLocation::builder()
                        .artifact_location(
                            sarif::ArtifactLocation::builder()
                                .uri(escape::url_path(file.name))
                                .build(),
                        )
                        .region(region)
                        .build(),
                )
                .build();
            let index = codes
                .iter()
                .position(|c| *c == diagnostic.finding.code)
                .expect("every diagnostic's code is among the rules");
            let result = sarif::Result::builder()
                .rule_id(diagnostic.finding.code.as_str())
                .rule_index(count(index))
                .level(level)
                .message(
                    sarif::Message::builder()
                        .text(message_with_help(diagnostic))
                        .build(),
                )
                .locations(vec![location]);
            results.push(if diagnostic.fixes.is_empty() {
                result.build()
            } else {
                result.fixes(sarif_fixes(file, &lines, diagnostic)).build()
            });
        }
    }
    let driver = sarif::ToolComponent::builder()
        .name(crate::output::bin_name())
        .version(env!("CARGO_PKG_VERSION"))
        .rules(codes.iter().map(|&code| rule(code)).collect::<Vec<_>>())
        .build();
    let run = sarif::Run::builder()
        .tool(sarif::Tool::builder().driver(driver).build())
        .column_kind(serde_json::json!("unicodeCodePoints"))
        .results(results)
        .build();
    sarif::Sarif::builder()
        .schema(sarif::SCHEMA_URL)
        .version(serde_json::json!("2.1.0"))
        .runs(vec![run])
        .build()
}

/// A line, column or index as SARIF's integer.
fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The human output's last line, as rustc ends with `rustc --explain`:
/// where to read the rule behind the codes shown, or nothing without any.
pub(crate) fn explain_hint(files: &[FileFindings<'_>]) -> String {
    let mut codes: Vec<Code> = Vec::new();
    for diagnostic in files.iter().flat_map(|f| f.diagnostics.iter()) {
        if !codes.contains(&diagnostic.finding.code) {
            codes.push(diagnostic.finding.code);
        }
    }
    let bin = crate::output::bin_name();
    match codes.as_slice() {
        [] => String::new(),
        [one] => format!("For more information about this finding, try `{bin} explain {one}`.\n"),
        [first, ..] => format!(
            "For more information about a finding, try `{bin} explain CODE`, e.g. `{bin} explain {first}`.\n"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn findings() -> (String, Vec<Diagnostic>) {
        let text = "[batch]\nmicro_batch = 0\nname = \"a, b: c\"\n".to_owned();
        let zero = Diagnostic::error(
            Code::Zero,
            vec!["batch".into(), "micro_batch".into()],
            "micro_batch is 0",
        )
        .help("use at least 1")
        .at(22..23, "zero");
        let warn = Diagnostic::error(Code::StageShift, vec![], "100% of it, a: b").warning();
        (text, vec![zero, warn])
    }

    #[test]
    fn github_commands_locate_and_escape() {
        let (text, diagnostics) = findings();
        let files = [FileFindings {
            name: "dir, x/t:1.toml",
            text: &text,
            diagnostics: &diagnostics,
        }];
        assert_eq!(
            render_github(&files),
            "::error file=dir%2C x/t%3A1.toml,line=2,col=15,endLine=2,endColumn=16,\
             title=accum%3A%3Aplan%3A%3Azero::micro_batch is 0%0Ahelp: use at least 1\n\
             ::warning file=dir%2C x/t%3A1.toml,line=1,col=1,endLine=1,endColumn=1,\
             title=accum%3A%3Astages%3A%3Ashift::100%25 of it, a: b\n"
        );
    }

    #[test]
    fn sarif_results_name_their_rules() {
        let (text, diagnostics) = findings();
        let files = [FileFindings {
            name: "my configs/t.toml",
            text: &text,
            diagnostics: &diagnostics,
        }];
        let log = serde_json::to_value(to_sarif(&files)).expect("serializes");
        let run = &log["runs"][0];
        let rules: Vec<&str> = run["tool"]["driver"]["rules"]
            .as_array()
            .expect("rules")
            .iter()
            .map(|r| r["id"].as_str().expect("id"))
            .collect();
        assert_eq!(rules, ["accum::plan::zero", "accum::stages::shift"]);
        let first = &run["results"][0];
        assert_eq!(first["ruleIndex"], 0);
        assert_eq!(first["level"], "error");
        let location = &first["locations"][0]["physicalLocation"];
        assert_eq!(location["artifactLocation"]["uri"], "my%20configs/t.toml");
        assert_eq!(location["region"]["startColumn"], 15);
        assert_eq!(run["results"][1]["level"], "warning");
        assert_eq!(run["results"][1]["ruleIndex"], 1);
    }

    #[test]
    fn the_hint_names_a_code_that_explain_knows() {
        let (text, diagnostics) = findings();
        let one = [FileFindings {
            name: "t.toml",
            text: &text,
            diagnostics: &diagnostics[..1],
        }];
        assert_eq!(
            explain_hint(&one),
            "For more information about this finding, try `accum explain accum::plan::zero`.\n"
        );
        let none = [FileFindings {
            name: "t.toml",
            text: &text,
            diagnostics: &[],
        }];
        assert_eq!(explain_hint(&none), "");
    }
}
