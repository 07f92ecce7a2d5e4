//! Diagnostics about an input file, and their three renderings, each made
//! once from the same data:
//!
//! - human: a header (`error[code]: message`), the source snippet with the
//!   value underlined, and the fix (`help:`), like rustc and cargo;
//! - short: one line per diagnostic, `file:line:col: error[code]: message`
//!   (`warning[code]`), for editors, grep and problem matchers;
//! - JSON: stable keys, for tools.

use std::borrow::Cow;
use std::ops::Range;

pub use accum_core::Severity;
use accum_core::plan::Fix;
use accum_core::{Code, FieldPath, Finding};
use annotate_snippets::{AnnotationKind, Group, Level, Origin, Renderer, Snippet};
use serde::Serialize;

use crate::escape;
use crate::fix::{Applicability, Suggestion};
use crate::source::LineIndex;

/// One diagnostic: a [`Finding`] (what is wrong, at which path, and how
/// to fix it) at its [`Location`] in a file, with the fix as edits of that
/// file. `accum explain CODE` prints the rule behind a code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// What is wrong: the code, severity, path, message, the label under
    /// the value, the fix, and the other fields that take part.
    pub finding: Finding,
    /// Where the value and the other fields are in the file.
    pub location: Location,
    /// The fixes as edits of the file, when the finding knows them: one
    /// to apply, or alternatives to choose from.
    pub fixes: Vec<Suggestion>,
    /// Findings folded into this one: what the same numbers at the same
    /// place make the framework do.
    pub consequences: Vec<Consequence>,
}

/// Where a [`Finding`] is in its file, as byte ranges of the text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Location {
    /// The text of the value, underlined with the finding's label; `None`
    /// for a finding about the file as a whole.
    pub range: Option<Range<usize>>,
    /// The text of each of the finding's related fields, in their order.
    pub related: Vec<Range<usize>>,
}

impl Location {
    /// The text of a value, with no other field.
    pub(crate) fn at(range: Range<usize>) -> Location {
        Location {
            range: Some(range),
            related: Vec::new(),
        }
    }

    /// Every range of the location moved by `move_range`: into the text of
    /// another file, or out of it.
    pub(crate) fn map(&mut self, mut move_range: impl FnMut(&Range<usize>) -> Range<usize>) {
        if let Some(range) = &mut self.range {
            *range = move_range(range);
        }
        for range in &mut self.related {
            *range = move_range(range);
        }
    }
}

/// A finding folded into its cause: its code and what it says, shown as a
/// note of the cause.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Consequence {
    /// The code the finding had.
    pub code: Code,
    /// What it said.
    pub message: String,
}

/// Folds each finding that is a consequence of another into it: of the
/// errors underlining the same text, one of the plan's (`accum::plan::…`,
/// which says what is wrong with the numbers and how to fix them) is the
/// cause, and the others, which say what the framework makes of the same
/// numbers (it floors a division, then its own check stops), become its
/// notes. A place with no plan finding keeps its findings apart: they are
/// separate mistakes that happen to share a value.
pub(crate) fn fold_consequences(findings: &mut Vec<Diagnostic>) {
    let is_cause = |d: &Diagnostic| {
        d.finding.is_error() && d.finding.code.family() == accum_core::Family::Plan
    };
    let place = |d: &Diagnostic| d.location.range.clone().filter(|r| !r.is_empty());
    let causes: Vec<Range<usize>> = findings
        .iter()
        .filter(|d| is_cause(d))
        .filter_map(place)
        .collect();
    let mut folded = Vec::new();
    findings.retain(|d| {
        let at = place(d).filter(|r| d.finding.is_error() && !is_cause(d) && causes.contains(r));
        if let Some(range) = &at {
            let consequence = Consequence {
                code: d.finding.code,
                message: d.finding.message.clone(),
            };
            folded.push((range.clone(), consequence));
        }
        at.is_none()
    });
    for (range, consequence) in folded {
        if let Some(cause) = findings
            .iter_mut()
            .find(|d| is_cause(d) && place(d).as_ref() == Some(&range))
        {
            cause.consequences.push(consequence);
        }
    }
}

impl Diagnostic {
    /// `finding` at `location`, with no edits yet.
    pub(crate) fn new(finding: Finding, location: Location) -> Diagnostic {
        Diagnostic {
            finding,
            location,
            fixes: Vec::new(),
            consequences: Vec::new(),
        }
    }

    /// An error at `path`, not yet placed in the file.
    pub(crate) fn error(
        code: Code,
        path: impl Into<FieldPath>,
        message: impl Into<String>,
    ) -> Diagnostic {
        let finding = Finding::new(code, path.into(), message.into(), String::new());
        Diagnostic::new(finding, Location::default())
    }

    /// The same diagnostic as a warning.
    pub(crate) fn warning(mut self) -> Diagnostic {
        self.finding = self.finding.warning();
        self
    }

    /// Adds the fix, in words.
    pub(crate) fn help(mut self, help: impl Into<String>) -> Diagnostic {
        self.finding = self.finding.with_fix(Fix::text(help));
        self
    }

    /// Adds a fix as edits of the file, when there is one.
    pub(crate) fn fix(mut self, fix: Option<Suggestion>) -> Diagnostic {
        self.fixes.extend(fix);
        self
    }

    /// Underlines `range` with `label`.
    pub(crate) fn at(mut self, range: Range<usize>, label: impl Into<String>) -> Diagnostic {
        self.location.range = Some(range);
        self.finding.label = label.into();
        self
    }

    /// Adds another field that takes part: its path, and its text in the
    /// file labelled with `label`.
    pub(crate) fn also(
        mut self,
        path: impl Into<FieldPath>,
        range: Range<usize>,
        label: impl Into<String>,
    ) -> Diagnostic {
        self.finding = self.finding.with_related(path.into(), None, label.into());
        self.location.related.push(range);
        self
    }

    /// Keeps the related fields whose text `keep` accepts, in the finding
    /// and in its location together.
    pub(crate) fn retain_related(&mut self, mut keep: impl FnMut(&Range<usize>) -> bool) {
        let kept: Vec<bool> = self.location.related.iter().map(&mut keep).collect();
        let mut kept_related = kept.iter();
        self.finding
            .related
            .retain(|_| kept_related.next().copied().unwrap_or(true));
        let mut kept_ranges = kept.iter();
        self.location
            .related
            .retain(|_| kept_ranges.next().copied().unwrap_or(true));
    }

    /// The fix in words, when there is one.
    pub fn help_text(&self) -> Option<&str> {
        self.finding.fix.as_ref().map(|fix| fix.text.as_str())
    }

    /// Where the value starts, 1-based (`(1, 1)` for the file as a whole).
    fn start(&self, lines: &LineIndex<'_>) -> (usize, usize) {
        self.location
            .range
            .as_ref()
            .map_or((1, 1), |range| lines.line_col(range.start))
    }
}

/// `["batch", "micro_batch"]` → `batch.micro_batch`, as [`FieldPath`]
/// renders every path: array indices as `[0]`, keys that are not bare
/// quoted the way TOML quotes them.
pub(crate) fn dotted(path: &[String]) -> String {
    FieldPath::from(path).to_string()
}

/// A byte range clamped into `text` and onto character boundaries, so
/// that no diagnostic can make the renderer slice outside the source.
fn clamp(text: &str, range: &Range<usize>) -> Range<usize> {
    let mut start = range.start.min(text.len());
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = range.end.clamp(start, text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    start..end
}

/// Most findings of one code the human rendering shows for a file; past
/// it, one finding says how many more there are. A file of 300,000
/// unknown keys is 300,000 snippets that nobody reads, and the time to
/// render them.
pub(crate) const SHOWN_PER_CODE: usize = 50;

/// Most findings of one code the formats for tools (short, JSON, GitHub,
/// SARIF) list for a file; past it, one finding says how many more there
/// are. Their size then stays bounded whatever the input (300,000 results
/// took 1.9 GB as SARIF).
pub(crate) const LISTED_PER_CODE: usize = 1000;

/// The findings to render: of each code the first `per_code` in the file,
/// and for a code with more, one finding after them that counts the others
/// (with the severity of the first one left out, and no place). The counts
/// of errors and warnings are taken from all the findings, not from these.
pub(crate) fn capped<'a>(
    name: &str,
    diagnostics: &'a [Diagnostic],
    per_code: usize,
) -> std::borrow::Cow<'a, [Diagnostic]> {
    let mut seen: std::collections::BTreeMap<Code, (usize, Option<Severity>)> =
        std::collections::BTreeMap::new();
    for d in diagnostics {
        let (count, first_left_out) = seen.entry(d.finding.code).or_default();
        *count += 1;
        if *count > per_code {
            first_left_out.get_or_insert(d.finding.severity);
        }
    }
    if seen.values().all(|(count, _)| *count <= per_code) {
        return std::borrow::Cow::Borrowed(diagnostics);
    }
    let mut kept: std::collections::BTreeMap<Code, usize> = std::collections::BTreeMap::new();
    let mut out: Vec<Diagnostic> = diagnostics
        .iter()
        .filter(|d| {
            let count = kept.entry(d.finding.code).or_default();
            *count += 1;
            *count <= per_code
        })
        .cloned()
        .collect();
    for (code, (count, severity)) in seen {
        if let Some(severity) = severity {
            let mut more = Diagnostic::error(
                code,
                Vec::new(),
                format!(
                    "… and {} more `{code}` findings in {name}, not listed (each code lists its first {})",
                    accum_core::group_digits((count - per_code) as u64),
                    accum_core::group_digits(per_code as u64)
                ),
            );
            more.finding.severity = severity;
            out.push(more);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The longest source a snippet shows: past it (a line of megabytes), a
/// finding gives its place without the snippet.
const MAX_SNIPPET_BYTES: usize = 64 * 1024;

/// Renders diagnostics for people: per diagnostic a header, the snippet
/// with every labelled range, and the help, each said once; at most
/// [`SHOWN_PER_CODE`] of each code ([`capped`]).
///
/// The text is safe to print as it is, coloured or not: the file name,
/// messages, labels and help go through the escapers before the renderer
/// adds its colours (names and labels as one line, [`escape::line`];
/// messages and help through [`escape::terminal`]), the renderer shows the
/// source's controls as `␛`-like pictures, and what is left hidden (C1
/// controls, separators) is shown by [`escape::styled_terminal`] or
/// [`escape::terminal`] over the whole text.
pub(crate) fn render_text(
    name: &str,
    text: &str,
    diagnostics: &[Diagnostic],
    color: bool,
) -> String {
    let renderer = if color {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    let mut out = String::new();
    let lines = LineIndex::new(text);
    let name = escape::line(name);
    let name = name.as_ref();
    for diagnostic in capped(name, diagnostics, SHOWN_PER_CODE).iter() {
        let finding = &diagnostic.finding;
        let location = &diagnostic.location;
        let message = escape::terminal(&finding.message);
        let label = escape::line(&finding.label);
        let related: Vec<Cow<'_, str>> = finding
            .related
            .iter()
            .map(|related| escape::line(&related.label))
            .collect();
        let notes: Vec<Cow<'_, str>> = diagnostic
            .consequences
            .iter()
            .map(|c| {
                Cow::Owned(escape::terminal(&format!("[{}] {}", c.code, c.message)).into_owned())
            })
            .collect();
        let level = match finding.severity {
            Severity::Error => Level::ERROR,
            Severity::Warning => Level::WARNING,
        };
        let title = level
            .primary_title(message.as_ref())
            .id(finding.code.as_str());
        let mut group = match &location.range {
            Some(range) => {
                // Only the lines the ranges are on go to the renderer, which
                // reads all of its source: the whole file for each finding is
                // quadratic in a file of thousands of findings.
                let ranges = std::iter::once(range).chain(&location.related);
                let (window, first_line) = lines.window(ranges.map(|r| clamp(text, r)));
                if window.len() > MAX_SNIPPET_BYTES {
                    // A line of megabytes (a minified file): the place
                    // alone, as the renderer would read the whole line for
                    // each finding, to show a few columns of it.
                    let (line, col) = diagnostic.start(&lines);
                    let origin = Origin::path(name).line(line).char_column(col);
                    let mut group = title.element(origin);
                    for note in &notes {
                        group = group.element(Level::NOTE.message(note.as_ref()));
                    }
                    if let Some(help) = diagnostic.help_text() {
                        group = group.element(Level::HELP.message(help));
                    }
                    out.push_str(&renderer.render(&[group]));
                    out.push_str("\n\n");
                    continue;
                }
                let shift = |r: &Range<usize>| {
                    let r = clamp(text, r);
                    r.start - window.start..r.end - window.start
                };
                let mut snippet = Snippet::source(&text[window.clone()])
                    .line_start(first_line)
                    .path(name)
                    .annotation(
                        AnnotationKind::Primary
                            .span(shift(range))
                            .label(Some(label.as_ref()).filter(|l| !l.is_empty())),
                    );
                for (range, label) in location.related.iter().zip(&related) {
                    snippet = snippet.annotation(
                        AnnotationKind::Context
                            .span(shift(range))
                            .label(label.as_ref()),
                    );
                }
                title.element(snippet)
            }
            None => title.element(Origin::path(name)),
        };
        for note in &notes {
            group = group.element(Level::NOTE.message(note.as_ref()));
        }
        let help = diagnostic.help_text().map(escape::terminal);
        if let Some(help) = &help {
            group = group.element(Level::HELP.message(help.as_ref()));
        }
        let report: [Group<'_>; 1] = [group];
        out.push_str(&renderer.render(&report));
        out.push_str("\n\n");
    }
    let safe = if color {
        escape::styled_terminal(&out)
    } else {
        escape::terminal(&out)
    };
    safe.into_owned()
}

/// Renders one line per diagnostic: `file:line:col: error[code]: message`,
/// or `warning[code]`, as rustc's `--error-format short` prints them, so
/// that a problem matcher tells errors from warnings. One physical line
/// each, whatever the name and message hold ([`escape::line`]): a key with
/// a line break cannot start a line of its own.
pub(crate) fn render_short(name: &str, text: &str, diagnostics: &[Diagnostic]) -> String {
    let mut out = String::new();
    let lines = LineIndex::new(text);
    for diagnostic in capped(name, diagnostics, LISTED_PER_CODE).iter() {
        let (line, col) = diagnostic.start(&lines);
        out.push_str(&format!(
            "{}:{line}:{col}: {}[{}]: {}\n",
            escape::line(name),
            diagnostic.finding.severity.as_str(),
            diagnostic.finding.code,
            escape::line(&diagnostic.finding.message)
        ));
    }
    out
}

/// `file: N errors, M warnings`, or `file: ok`, on one line.
pub(crate) fn summary(name: &str, diagnostics: &[Diagnostic]) -> String {
    let name = escape::line(name);
    let errors = count(diagnostics, Severity::Error);
    let warnings = count(diagnostics, Severity::Warning);
    if errors == 0 && warnings == 0 {
        return format!("{name}: ok\n");
    }
    format!(
        "{name}: {errors} error{}, {warnings} warning{}{}\n",
        if errors == 1 { "" } else { "s" },
        if warnings == 1 { "" } else { "s" },
        fixable_note(diagnostics)
    )
}

/// How many findings `--fix` would fix, and how many more
/// `--unsafe-fixes` would: ` (2 fixable with --fix, 1 more with
/// --unsafe-fixes)`, or nothing.
pub(crate) fn fixable_note<'a>(diagnostics: impl IntoIterator<Item = &'a Diagnostic>) -> String {
    let (mut safe, mut review) = (0, 0);
    for d in diagnostics {
        match d.fixes.as_slice() {
            [only] if only.applicability == Applicability::Safe => safe += 1,
            [_] => review += 1,
            _ => {}
        }
    }
    match (safe, review) {
        (0, 0) => String::new(),
        (safe, 0) => format!(" ({safe} fixable with --fix)"),
        (0, review) => format!(" ({review} fixable with --fix --unsafe-fixes)"),
        (safe, review) => {
            format!(" ({safe} fixable with --fix, {review} more with --unsafe-fixes)")
        }
    }
}

/// How many diagnostics have `severity`.
pub(crate) fn count(diagnostics: &[Diagnostic], severity: Severity) -> usize {
    diagnostics
        .iter()
        .filter(|d| d.finding.severity == severity)
        .count()
}

/// The JSON form of a diagnostic (stable keys).
#[derive(Debug, Serialize)]
pub(crate) struct DiagnosticJson {
    /// The file.
    pub(crate) file: String,
    /// 1-based line where the value starts.
    pub(crate) line: usize,
    /// 1-based column where the value starts.
    pub(crate) column: usize,
    /// 1-based line where the value ends.
    pub(crate) end_line: usize,
    /// 1-based column where the value ends.
    pub(crate) end_column: usize,
    /// Dotted path of the value.
    pub(crate) path: String,
    /// `error` or `warning`.
    pub(crate) severity: Severity,
    /// The stable code.
    pub(crate) code: Code,
    /// What is wrong.
    pub(crate) message: String,
    /// The fix.
    pub(crate) help: Option<String>,
    /// The fixes as edits of the file, each with its applicability.
    pub(crate) fixes: Vec<SuggestionJson>,
    /// The findings folded into this one, when there are any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) consequences: Vec<Consequence>,
}

/// The JSON form of a fix: what it does, whether `--fix` applies it alone
/// (`safe`) or a person chooses it (`review`), and its edits.
#[derive(Debug, Serialize)]
pub(crate) struct SuggestionJson {
    /// What the fix does.
    pub(crate) message: String,
    /// `safe` or `review`.
    pub(crate) applicability: Applicability,
    /// The edits, in the order of the text.
    pub(crate) edits: Vec<EditJson>,
}

/// The JSON form of one edit: the bytes replaced, located also by line and
/// column (1-based, columns in characters), and the new text.
#[derive(Debug, Serialize)]
pub(crate) struct EditJson {
    /// Byte offset where the replaced text starts.
    pub(crate) start: usize,
    /// Byte offset where it ends (exclusive).
    pub(crate) end: usize,
    /// 1-based line where it starts.
    pub(crate) line: usize,
    /// 1-based column where it starts.
    pub(crate) column: usize,
    /// 1-based line where it ends.
    pub(crate) end_line: usize,
    /// 1-based column where it ends.
    pub(crate) end_column: usize,
    /// The new text.
    pub(crate) replacement: String,
}

/// The fixes of a diagnostic in their JSON form.
pub(crate) fn suggestions_json(lines: &LineIndex<'_>, fixes: &[Suggestion]) -> Vec<SuggestionJson> {
    fixes
        .iter()
        .map(|fix| SuggestionJson {
            message: fix.message.clone(),
            applicability: fix.applicability,
            edits: fix
                .edits
                .iter()
                .map(|edit| {
                    let (line, column) = lines.line_col(edit.range.start);
                    let (end_line, end_column) = lines.line_col(edit.range.end);
                    EditJson {
                        start: edit.range.start,
                        end: edit.range.end,
                        line,
                        column,
                        end_line,
                        end_column,
                        replacement: edit.replacement.clone(),
                    }
                })
                .collect(),
        })
        .collect()
}

/// Diagnostics in their JSON form.
pub(crate) fn to_json(
    doc_name: &str,
    text: &str,
    diagnostics: &[Diagnostic],
) -> Vec<DiagnosticJson> {
    let lines = LineIndex::new(text);
    capped(doc_name, diagnostics, LISTED_PER_CODE)
        .iter()
        .map(|d| {
            let range = d.location.range.clone().unwrap_or(0..0);
            let (line, column) = lines.line_col(range.start);
            let (end_line, end_column) = lines.line_col(range.end);
            DiagnosticJson {
                file: doc_name.to_owned(),
                line,
                column,
                end_line,
                end_column,
                path: d.finding.path.to_string(),
                severity: d.finding.severity,
                code: d.finding.code,
                message: d.finding.message.clone(),
                help: d.help_text().map(str::to_owned),
                fixes: suggestions_json(&lines, &d.fixes),
                consequences: d.consequences.clone(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{Document, SourceFormat};

    /// The framework's reactions to the numbers a plan finding underlines
    /// are folded into it, in their order; a warning, a finding elsewhere
    /// and a place without a plan finding keep their findings apart.
    #[test]
    fn consequences_fold_into_the_plan_finding_at_their_place() {
        let at = |code: Code, range: Range<usize>| {
            Diagnostic::error(code, vec!["k".to_owned()], code.as_str()).at(range, "")
        };
        let mut findings = vec![
            at(Code::Rounds, 10..12),
            at(Code::EngineAssert, 10..12),
            at(Code::Rounds, 10..12).warning(),
            at(Code::EngineAssert, 20..22),
            at(Code::InteropValue, 30..31),
            at(Code::EngineAssert, 30..31),
            at(Code::GlobalBatch, 10..12),
        ];
        fold_consequences(&mut findings);
        let codes: Vec<(Code, Vec<Code>)> = findings
            .iter()
            .map(|d| {
                (
                    d.finding.code,
                    d.consequences.iter().map(|c| c.code).collect(),
                )
            })
            .collect();
        assert_eq!(
            codes,
            [
                (Code::Rounds, vec![]),
                (Code::EngineAssert, vec![]),
                (Code::InteropValue, vec![]),
                (Code::EngineAssert, vec![]),
                (Code::GlobalBatch, vec![Code::Rounds, Code::EngineAssert]),
            ]
        );
        assert_eq!(findings[0].finding.severity, Severity::Warning);
        // Rendered as notes before the help, with their codes.
        let text = "0123456789ab\n";
        let shown = render_text("f.json", text, &findings[4..], false);
        assert!(
            shown.contains("= note: [accum::interop::rounds] accum::interop::rounds\n"),
            "{shown}"
        );
    }

    fn zero() -> (Document, Diagnostic) {
        let text = "[batch]\nmicro_batch = 0\n";
        let doc =
            Document::parse("train.toml".into(), text.into(), SourceFormat::Toml).expect("parses");
        let range = doc.range_of(&["batch".into(), "micro_batch".into()]);
        let diagnostic = Diagnostic::error(
            Code::Zero,
            vec!["batch".into(), "micro_batch".into()],
            "micro_batch is 0",
        )
        .help("use at least 1")
        .at(range, "zero examples per microbatch");
        (doc, diagnostic)
    }

    #[test]
    fn human_rendering_says_everything_once() {
        let (doc, diagnostic) = zero();
        let out = render_text(
            &doc.name,
            &doc.text,
            std::slice::from_ref(&diagnostic),
            false,
        );
        assert_eq!(
            out,
            "error[accum::plan::zero]: micro_batch is 0\n \
             --> train.toml:2:15\n  \
             |\n\
             2 | micro_batch = 0\n  \
             |               ^ zero examples per microbatch\n  \
             |\n  \
             = help: use at least 1\n\n"
        );
        assert_eq!(out.matches("micro_batch is 0").count(), 1);
    }

    #[test]
    fn short_and_json_locate_the_value() {
        let (doc, diagnostic) = zero();
        assert_eq!(
            render_short(&doc.name, &doc.text, std::slice::from_ref(&diagnostic)),
            "train.toml:2:15: error[accum::plan::zero]: micro_batch is 0\n"
        );
        let json = to_json("train.toml", &doc.text, &[diagnostic]);
        assert_eq!(
            (json[0].line, json[0].column, json[0].end_column),
            (2, 15, 16)
        );
        assert_eq!(json[0].path, "batch.micro_batch");
    }

    #[test]
    fn a_finding_on_a_line_of_megabytes_gives_its_place_without_the_line() {
        let text = format!("{{\"a\": 1, {}\"bad\": 2}}", " ".repeat(MAX_SNIPPET_BYTES));
        let at = text.find("\"bad\"").expect("bad");
        let d = Diagnostic::error(Code::UnknownKey, vec!["bad".into()], "unknown key `bad`")
            .at(at..at + 5, "")
            .help("remove it");
        let out = render_text("x.json", &text, &[d], false);
        assert!(out.len() < 300, "{out}");
        assert!(out.contains(&format!("x.json:1:{}", at + 1)), "{out}");
        assert!(out.contains("help: remove it"), "{out}");
    }

    #[test]
    fn ranges_outside_the_text_are_clamped() {
        let text = "a = \"é\"\n";
        assert_eq!(clamp(text, &(5..6)), 5..7);
        assert_eq!(clamp(text, &(50..60)), text.len()..text.len());
        let out = render_text(
            "t.toml",
            text,
            &[Diagnostic::error(Code::Syntax, vec![], "bad").at(40..90, "")],
            false,
        );
        assert!(out.starts_with("error[accum::syntax]: bad\n"), "{out}");
    }

    #[test]
    fn dots_paths() {
        assert_eq!(dotted(&["a".into(), "0".into(), "b".into()]), "a[0].b");
        assert_eq!(dotted(&[]), "(root)");
    }
}
