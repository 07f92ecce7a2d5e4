//! Findings about a configuration file and their renderings: miette-style
//! text with the source line underlined, or JSON for tools.

use std::fmt;
use std::ops::Range;

use miette::{
    Diagnostic as MietteDiagnostic, LabeledSpan, NamedSource, Severity as MietteSeverity,
    SourceCode,
};
use serde::Serialize;

use crate::source::line_col;

/// How serious a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The configuration cannot be used as it is (exit 1).
    Error,
    /// The configuration works but is probably not what was meant.
    Warning,
}

/// One finding: what is wrong, where, and how to fix it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// A stable code, e.g. `accum::plan::global-batch`.
    pub code: &'static str,
    /// What is wrong.
    pub message: String,
    /// The fix, when there is one.
    pub help: Option<String>,
    /// The path of keys to the value (`["batch", "micro_batch"]`).
    pub path: Vec<String>,
    /// The text to underline, and what to say under it.
    pub primary: Option<(Range<usize>, String)>,
    /// Other places that take part (the factors of an equation).
    pub secondary: Vec<(Range<usize>, String)>,
}

impl Diagnostic {
    /// An error at `path`.
    pub fn error(code: &'static str, path: Vec<String>, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            code,
            message: message.into(),
            help: None,
            path,
            primary: None,
            secondary: Vec::new(),
        }
    }

    /// The same finding as a warning.
    pub fn warning(mut self) -> Diagnostic {
        self.severity = Severity::Warning;
        self
    }

    /// Adds the fix.
    pub fn help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    /// Underlines `span` with `label`.
    pub fn at(mut self, span: Range<usize>, label: impl Into<String>) -> Diagnostic {
        self.primary = Some((span, label.into()));
        self
    }

    /// Adds a secondary label.
    pub fn also(mut self, span: Range<usize>, label: impl Into<String>) -> Diagnostic {
        self.secondary.push((span, label.into()));
        self
    }

    /// Splits a message of the form "what is wrong; use the fix" into the
    /// message and its help, as plan errors are written.
    pub fn with_fix_split(mut self) -> Diagnostic {
        for marker in ["; use ", ": use "] {
            if let Some(at) = self.message.find(marker) {
                let help = self.message[at + 2..].to_owned();
                self.message.truncate(at);
                self.help = Some(help);
                break;
            }
        }
        self
    }

    /// The dotted path (`batch.micro_batch`), or `(root)`.
    pub fn dotted_path(&self) -> String {
        dotted(&self.path)
    }
}

/// `["batch", "micro_batch"]` → `batch.micro_batch`; array indices as `[0]`.
pub(crate) fn dotted(path: &[String]) -> String {
    if path.is_empty() {
        return "(root)".to_owned();
    }
    let mut out = String::new();
    for segment in path {
        if segment.parse::<usize>().is_ok() {
            out.push_str(&format!("[{segment}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(segment);
        }
    }
    out
}

/// A finding bound to its document, as miette renders it.
struct Located<'a> {
    finding: &'a Diagnostic,
    source: NamedSource<String>,
}

impl fmt::Debug for Located<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Located")
            .field("finding", self.finding)
            .finish()
    }
}

impl fmt::Display for Located<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.finding.message)
    }
}

impl std::error::Error for Located<'_> {}

impl MietteDiagnostic for Located<'_> {
    fn severity(&self) -> Option<MietteSeverity> {
        Some(match self.finding.severity {
            Severity::Error => MietteSeverity::Error,
            Severity::Warning => MietteSeverity::Warning,
        })
    }

    fn help<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        self.finding
            .help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        Some(&self.source)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let primary = self.finding.primary.iter().map(|(span, label)| {
            LabeledSpan::new_primary_with_span(
                Some(label.clone()),
                span.start..span.end.max(span.start),
            )
        });
        let secondary = self
            .finding
            .secondary
            .iter()
            .map(|(span, label)| LabeledSpan::new_with_span(Some(label.clone()), span.clone()));
        Some(Box::new(primary.chain(secondary)))
    }
}

/// Renders findings as text: `file:line:col` headers, then miette's report
/// with the source underlined.
pub(crate) fn render_text(name: &str, text: &str, findings: &[Diagnostic], color: bool) -> String {
    let theme = if color {
        miette::GraphicalTheme::unicode()
    } else {
        miette::GraphicalTheme::unicode_nocolor()
    };
    let handler = miette::GraphicalReportHandler::new_themed(theme)
        .with_width(100)
        .with_links(false);
    let mut out = String::new();
    for finding in findings {
        let (line, col) = finding
            .primary
            .as_ref()
            .map_or((1, 1), |(span, _)| line_col(text, span.start));
        let kind = match finding.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        out.push_str(&format!(
            "{}:{line}:{col}: {kind}[{}]: {} ({})\n",
            name,
            finding.code,
            finding.message,
            finding.dotted_path()
        ));
        let located = Located {
            finding,
            source: NamedSource::new(name, text.to_owned()),
        };
        if handler.render_report(&mut out, &located).is_err() {
            out.push_str("  (the source could not be rendered)\n");
        }
        out.push('\n');
    }
    out
}

/// The JSON form of a finding (stable keys).
#[derive(Debug, Serialize)]
pub(crate) struct DiagnosticJson {
    /// The file.
    pub(crate) file: String,
    /// 1-based line of the primary span.
    pub(crate) line: usize,
    /// 1-based column of the primary span.
    pub(crate) column: usize,
    /// 1-based line where the primary span ends.
    pub(crate) end_line: usize,
    /// 1-based column where the primary span ends.
    pub(crate) end_column: usize,
    /// Dotted path of the value.
    pub(crate) path: String,
    /// `error` or `warning`.
    pub(crate) severity: Severity,
    /// The stable code.
    pub(crate) code: &'static str,
    /// What is wrong.
    pub(crate) message: String,
    /// The fix.
    pub(crate) help: Option<String>,
}

/// Findings in their JSON form.
pub(crate) fn to_json(doc_name: &str, text: &str, findings: &[Diagnostic]) -> Vec<DiagnosticJson> {
    findings
        .iter()
        .map(|f| {
            let span = f.primary.as_ref().map_or(0..0, |(s, _)| s.clone());
            let (line, column) = line_col(text, span.start);
            let (end_line, end_column) = line_col(text, span.end);
            DiagnosticJson {
                file: doc_name.to_owned(),
                line,
                column,
                end_line,
                end_column,
                path: f.dotted_path(),
                severity: f.severity,
                code: f.code,
                message: f.message.clone(),
                help: f.help.clone(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{Document, SourceFormat};

    #[test]
    fn renders_location_underline_and_help() {
        let text = "[batch]\nmicro_batch = 0\n";
        let doc =
            Document::parse("train.toml".into(), text.into(), SourceFormat::Toml).expect("parses");
        let span = doc.span_for(&["batch".into(), "micro_batch".into()]);
        let finding = Diagnostic::error(
            "accum::plan::zero",
            vec!["batch".into(), "micro_batch".into()],
            "micro_batch is 0",
        )
        .help("use at least 1")
        .at(span, "zero examples per microbatch");
        let out = render_text(&doc.name, &doc.text, std::slice::from_ref(&finding), false);
        assert!(
            out.starts_with(
                "train.toml:2:15: error[accum::plan::zero]: micro_batch is 0 (batch.micro_batch)\n"
            ),
            "{out}"
        );
        assert!(out.contains("micro_batch = 0"), "{out}");
        assert!(out.contains("zero examples per microbatch"), "{out}");
        assert!(out.contains("use at least 1"), "{out}");
        let json = to_json("train.toml", text, &[finding]);
        assert_eq!(
            (json[0].line, json[0].column, json[0].end_column),
            (2, 15, 16)
        );
    }

    #[test]
    fn splits_fixes_and_dots_paths() {
        let f = Diagnostic::error("c", vec![], "global_batch 30 ≠ 32; use accumulation 7")
            .with_fix_split();
        assert_eq!(f.message, "global_batch 30 ≠ 32");
        assert_eq!(f.help.as_deref(), Some("use accumulation 7"));
        assert_eq!(dotted(&["a".into(), "0".into(), "b".into()]), "a[0].b");
        assert_eq!(dotted(&[]), "(root)");
    }
}
