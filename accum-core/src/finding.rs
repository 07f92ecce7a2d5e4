//! Problems of a configuration as data: a [`Finding`] carries its [`Code`],
//! its [`Severity`], the [`FieldPath`] of the value to change, the plan
//! [`Role`] it plays, what is wrong (with the numbers), a short label for the
//! value, the [`Fix`], and the other fields that take part. Nothing here is text to split again:
//! front ends render each part where it belongs (a header, a label under the
//! value, a help line).
//!
//! ```
//! use accum_core::{Code, FieldPath, Finding};
//! use accum_core::plan::{PlanError, Role, Violation};
//!
//! let err = PlanError::Rule(Violation::Zero { role: Role::Accumulation });
//! let finding = Finding::from_error(&err, FieldPath::parse("optim.grad_accum"));
//! assert_eq!(finding.code, Code::Zero);
//! assert_eq!(finding.path.to_string(), "optim.grad_accum");
//! assert_eq!(finding.label, "must be at least 1");
//! assert_eq!(finding.fix.map(|f| f.text).as_deref(), Some("set accumulation to 1 or more"));
//! ```

use std::fmt;

use serde::{Serialize, Serializer};

use crate::code::Code;
use crate::plan::{Fix, PlanError, Role, StageError};

/// Where a value sits in a configuration: the keys from the root, with
/// array indices as decimal segments. The root is the empty path.
///
/// Displayed dotted, the way TOML writes keys: `batch.micro_batch`,
/// `runs[0].name`, `(root)`; a key that is not a bare word is quoted as a
/// TOML basic string (`"a.b"`, `"say \"hi\""`, `"tab\there"`). This is the
/// one rendering of a path: diagnostics, findings and messages use it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FieldPath {
    segments: Vec<String>,
}

impl FieldPath {
    /// The root of the configuration (the empty path).
    pub const fn root() -> FieldPath {
        FieldPath {
            segments: Vec::new(),
        }
    }

    /// A path from its segments, from the root down.
    pub fn new<S: Into<String>>(segments: impl IntoIterator<Item = S>) -> FieldPath {
        FieldPath {
            segments: segments.into_iter().map(Into::into).collect(),
        }
    }

    /// A path from dotted keys of bare words (`"batch.micro_batch"`); the
    /// empty string is the root. For paths written in code and tests: keys
    /// read from a file are pushed segment by segment with
    /// [`child`](FieldPath::child).
    pub fn parse(dotted: &str) -> FieldPath {
        if dotted.is_empty() {
            FieldPath::root()
        } else {
            FieldPath::new(dotted.split('.'))
        }
    }

    /// The path of field `name` inside this one. An empty name is a
    /// flattened section (`#[serde(flatten)]`): its fields sit here.
    pub fn child(&self, name: &str) -> FieldPath {
        let mut path = self.clone();
        if !name.is_empty() {
            path.segments.push(name.to_owned());
        }
        path
    }

    /// The segments, from the root down.
    pub fn segments(&self) -> &[String] {
        &self.segments
    }

    /// Whether this is the root.
    pub fn is_root(&self) -> bool {
        self.segments.is_empty()
    }

    /// This path inside `prefix`: `prefix.self` (`optim` and `lr` give
    /// `optim.lr`).
    pub fn under(&self, prefix: &FieldPath) -> FieldPath {
        let mut path = prefix.clone();
        path.segments.extend(self.segments.iter().cloned());
        path
    }

    /// Whether `prefix` is this path or one of its ancestors.
    pub fn starts_with(&self, prefix: &FieldPath) -> bool {
        self.segments.starts_with(&prefix.segments)
    }
}

fn is_bare(segment: &str) -> bool {
    !segment.is_empty()
        && segment
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// `segment` as a TOML basic string: quotes and backslashes escaped, the
/// control characters TOML names by their short escapes, the others as
/// `\uXXXX`.
fn write_quoted(f: &mut fmt::Formatter<'_>, segment: &str) -> fmt::Result {
    f.write_str("\"")?;
    for c in segment.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\u{8}' => f.write_str("\\b")?,
            '\t' => f.write_str("\\t")?,
            '\n' => f.write_str("\\n")?,
            '\u{c}' => f.write_str("\\f")?,
            '\r' => f.write_str("\\r")?,
            c if c.is_control() => write!(f, "\\u{:04X}", u32::from(c))?,
            c => write!(f, "{c}")?,
        }
    }
    f.write_str("\"")
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.segments.is_empty() {
            return f.write_str("(root)");
        }
        for (i, segment) in self.segments.iter().enumerate() {
            if i > 0 && segment.bytes().all(|b| b.is_ascii_digit()) && !segment.is_empty() {
                write!(f, "[{segment}]")?;
                continue;
            }
            if i > 0 {
                f.write_str(".")?;
            }
            if is_bare(segment) {
                f.write_str(segment)?;
            } else {
                write_quoted(f, segment)?;
            }
        }
        Ok(())
    }
}

impl Serialize for FieldPath {
    /// The dotted form, as displayed.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl From<Vec<String>> for FieldPath {
    fn from(segments: Vec<String>) -> FieldPath {
        FieldPath { segments }
    }
}

impl From<&[String]> for FieldPath {
    fn from(segments: &[String]) -> FieldPath {
        FieldPath::new(segments.iter().cloned())
    }
}

impl<S: Into<String>> FromIterator<S> for FieldPath {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> FieldPath {
        FieldPath::new(iter)
    }
}

/// Another field that takes part in a finding: a factor of the equation, or
/// the first place of a value given twice.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Related {
    /// Where it is.
    pub path: FieldPath,
    /// The plan role it plays, if any.
    pub role: Option<Role>,
    /// A short label for it: `micro_batch 2`.
    pub label: String,
}

/// How serious a [`Finding`] is, and a front end's diagnostic made from
/// one: an error makes `accum validate` exit with 1, a warning does not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The config cannot be used as it is.
    #[default]
    Error,
    /// The config works, but probably does not mean what was written: a
    /// length in updates under a batch ramp-up
    /// (`accum::stages::shift`).
    Warning,
}

impl Severity {
    /// `error` or `warning`, as diagnostics' headers and JSON write it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One problem of a config: its code, field path, role, message and fix.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Finding {
    /// The rule's stable code.
    pub code: Code,
    /// An error (the default) or a warning.
    pub severity: Severity,
    /// The field to change; the root for the config as a whole (a
    /// struct-level constant of the root struct).
    pub path: FieldPath,
    /// The plan role of that field, if it plays one.
    pub role: Option<Role>,
    /// What is wrong, with the numbers: `global_batch 30 ≠ micro_batch 2 ×
    /// accumulation 8 × replicas 2 = 32`.
    pub message: String,
    /// A short label for the value itself: `≠ 2 × 8 × 2 = 32`.
    pub label: String,
    /// The way out, when there is one.
    pub fix: Option<Fix>,
    /// Other fields that take part, with their labels.
    pub related: Vec<Related>,
}

impl Finding {
    /// A finding of rule `code` at `path`.
    pub fn new(code: Code, path: FieldPath, message: String, label: String) -> Finding {
        Finding {
            code,
            severity: Severity::Error,
            path,
            role: None,
            message,
            label,
            fix: None,
            related: Vec::new(),
        }
    }

    /// A plan error as a finding at `path`: its code, role, message, label
    /// and fix.
    pub fn from_error(err: &PlanError, path: FieldPath) -> Finding {
        Finding {
            code: err.code(),
            severity: Severity::Error,
            path,
            role: err.role(),
            message: err.message(),
            label: err.label(),
            fix: Some(err.fix()),
            related: Vec::new(),
        }
    }

    /// The same finding as a warning: the config works, but probably does
    /// not mean what was written.
    #[must_use]
    pub fn warning(mut self) -> Finding {
        self.severity = Severity::Warning;
        self
    }

    /// The same finding for a section found at `prefix`: its path and
    /// those of its related fields, inside `prefix`.
    #[must_use]
    pub fn under(mut self, prefix: &FieldPath) -> Finding {
        self.path = self.path.under(prefix);
        for related in &mut self.related {
            related.path = related.path.under(prefix);
        }
        self
    }

    /// Whether this is an error (not a warning).
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// With the plan role of the field.
    #[must_use]
    pub fn with_role(mut self, role: Role) -> Finding {
        self.role = Some(role);
        self
    }

    /// With the fix.
    #[must_use]
    pub fn with_fix(mut self, fix: Fix) -> Finding {
        self.fix = Some(fix);
        self
    }

    /// With another field that takes part.
    #[must_use]
    pub fn with_related(mut self, path: FieldPath, role: Option<Role>, label: String) -> Finding {
        self.related.push(Related { path, role, label });
        self
    }
}

impl fmt::Display for Finding {
    /// `path: message; fix` (`warning: …` for a warning), for logs and
    /// error chains; front ends render the parts themselves.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.is_error() {
            f.write_str("warning: ")?;
        }
        write!(f, "{}: {}", self.path, self.message)?;
        if let Some(fix) = &self.fix {
            write!(f, "; {}", fix.text)?;
        }
        Ok(())
    }
}

/// Every problem of a config, in the order they were found.
#[derive(Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Findings {
    findings: Vec<Finding>,
}

impl Findings {
    /// Adds a finding.
    pub fn push(&mut self, finding: Finding) {
        self.findings.push(finding);
    }

    /// Whether there is nothing to report.
    pub fn is_empty(&self) -> bool {
        self.findings.is_empty()
    }

    /// How many findings there are.
    pub fn len(&self) -> usize {
        self.findings.len()
    }

    /// The findings, in order.
    pub fn iter(&self) -> std::slice::Iter<'_, Finding> {
        self.findings.iter()
    }

    /// The dotted paths of all findings, in order (handy in tests and summaries).
    pub fn paths(&self) -> Vec<String> {
        self.findings.iter().map(|f| f.path.to_string()).collect()
    }

    /// The codes of all findings, in order.
    pub fn codes(&self) -> Vec<Code> {
        self.findings.iter().map(|f| f.code).collect()
    }

    /// Whether any finding is an error. A config whose findings are all
    /// warnings plans and runs.
    pub fn has_errors(&self) -> bool {
        self.findings.iter().any(Finding::is_error)
    }

    /// The errors only, in order.
    pub fn errors(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| f.is_error())
    }

    /// The warnings only, in order.
    pub fn warnings(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| !f.is_error())
    }

    /// `Ok` with the warnings (often none) when no finding is an error; `Err`
    /// with every finding, warnings included, when at least one is. A
    /// config with warnings only plans and runs, and its warnings are still
    /// there to report.
    pub fn into_result(self) -> Result<Findings, Findings> {
        if self.has_errors() {
            Err(self)
        } else {
            Ok(self)
        }
    }
}

impl FromIterator<Finding> for Findings {
    fn from_iter<I: IntoIterator<Item = Finding>>(iter: I) -> Findings {
        Findings {
            findings: iter.into_iter().collect(),
        }
    }
}

impl Extend<Finding> for Findings {
    fn extend<I: IntoIterator<Item = Finding>>(&mut self, iter: I) {
        self.findings.extend(iter);
    }
}

impl IntoIterator for Findings {
    type Item = Finding;
    type IntoIter = std::vec::IntoIter<Finding>;
    fn into_iter(self) -> Self::IntoIter {
        self.findings.into_iter()
    }
}

impl<'a> IntoIterator for &'a Findings {
    type Item = &'a Finding;
    type IntoIter = std::slice::Iter<'a, Finding>;
    fn into_iter(self) -> Self::IntoIter {
        self.findings.iter()
    }
}

impl fmt::Display for Findings {
    /// One line per finding: `path: problem; fix`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.findings.len();
        writeln!(
            f,
            "{n} problem{} in the config:",
            if n == 1 { "" } else { "s" }
        )?;
        for finding in &self.findings {
            writeln!(f, "  - {finding}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Findings {}

crate::code::debug_as_display!(Findings);

/// Where a stage error points, and the stage error as a finding: the
/// plan's stages know nothing of findings, which are made from them here.
impl StageError {
    /// Where the value to change is, below `at`: the field that holds the
    /// stages list (`batch.stages`) or the ramp (`batch.ramp`).
    pub fn path(&self, at: &FieldPath) -> FieldPath {
        let item = |stage: usize, field: &str| {
            at.child(&(stage.saturating_sub(1)).to_string())
                .child(field)
        };
        match *self {
            StageError::BatchNotGiven { stage, .. } => at.child(&(stage - 1).to_string()),
            StageError::ZeroBatch { stage } => at.child(&(stage - 1).to_string()),
            StageError::NotMultiple { stage: 0, what, .. } | StageError::RampZero { what } => {
                at.child(what)
            }
            StageError::NotMultiple { stage, what, .. } => item(stage, what),
            StageError::MissingUntil { stage } => at.child(&(stage - 1).to_string()),
            StageError::LastUntil { stage }
            | StageError::NotOrdered { stage, .. }
            | StageError::NotExact { stage, .. } => item(stage, "until"),
            StageError::RampShrinks { .. }
            | StageError::RampEmpty { .. }
            | StageError::RampIncrement { .. } => at.child("start"),
            StageError::RampZeroLength => at.child("over"),
            StageError::TooMany { .. } | StageError::Empty | StageError::Plan { stage: 0, .. } => {
                at.clone()
            }
            StageError::Plan { stage, .. } => at.child(&(stage - 1).to_string()),
        }
    }
}

impl Finding {
    /// A stage error as a finding, below `at` (the field that holds the
    /// stages list or the ramp).
    pub fn from_stage_error(err: &StageError, at: &FieldPath) -> Finding {
        let finding =
            Finding::new(err.code(), err.path(at), err.message(), err.label()).with_fix(err.fix());
        match err {
            StageError::NotMultiple { stage: 1.., .. } => finding.with_role(Role::GlobalBatch),
            _ => finding,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Violation;

    #[test]
    fn paths_display_like_toml_keys() {
        assert_eq!(FieldPath::root().to_string(), "(root)");
        assert_eq!(FieldPath::parse("").to_string(), "(root)");
        assert_eq!(
            FieldPath::parse("batch.micro_batch").segments(),
            ["batch", "micro_batch"]
        );
        assert_eq!(
            FieldPath::new(["runs", "0", "name"]).to_string(),
            "runs[0].name"
        );
        assert_eq!(FieldPath::new(["a.b", "c"]).to_string(), "\"a.b\".c");
        assert_eq!(FieldPath::new(["0"]).to_string(), "0");
        // Quoted as TOML quotes a key, not as Rust escapes a string.
        assert_eq!(
            FieldPath::new(["say \"hi\"", "tab\there", "bell\u{7}", "é"]).to_string(),
            r#""say \"hi\""."tab\there"."bell\u0007"."é""#
        );
        let batch = FieldPath::parse("batch");
        assert_eq!(batch.child("seq_len"), FieldPath::parse("batch.seq_len"));
        assert_eq!(batch.child(""), batch, "a flattened section stays");
        assert!(FieldPath::parse("batch.seq_len").starts_with(&batch));
        assert!(!batch.starts_with(&FieldPath::parse("batch.seq_len")));
        assert_eq!(
            serde_json::to_value(FieldPath::new(["a", "1"])).expect("serialize"),
            serde_json::json!("a[1]")
        );
    }

    #[test]
    fn findings_list_paths_codes_and_fixes() {
        let err = PlanError::Rule(Violation::Zero {
            role: Role::MicroBatch,
        });
        let mut findings = Findings::default();
        assert_eq!(findings.clone().into_result(), Ok(Findings::default()));
        findings.push(Finding::from_error(
            &err,
            FieldPath::parse("batch.micro_batch"),
        ));
        assert_eq!(findings.paths(), ["batch.micro_batch"]);
        assert_eq!(findings.codes(), [Code::Zero]);
        assert_eq!(
            findings.to_string(),
            "1 problem in the config:\n  - batch.micro_batch: micro_batch is 0, and every factor \
             of the plan must be at least 1; set micro_batch to 1 or more\n"
        );
        assert!(findings.into_result().is_err());
    }

    #[test]
    fn warnings_alone_are_ok_and_kept() {
        let warning = Finding::new(
            Code::StageShift,
            FieldPath::parse("schedule.warmup"),
            "`schedule.warmup` is 200 updates under a batch ramp-up".to_owned(),
            "in updates".to_owned(),
        )
        .warning();
        let mut findings = Findings::default();
        findings.push(warning.clone());
        let kept = findings.clone().into_result().expect("warnings only");
        assert_eq!(kept.len(), 1);
        assert_eq!(kept.warnings().count(), 1);
        assert_eq!(kept.codes(), [Code::StageShift]);
        // One error among them: Err, with the warning still in it.
        findings.push(Finding::from_error(
            &PlanError::Rule(Violation::Zero {
                role: Role::MicroBatch,
            }),
            FieldPath::parse("batch.micro_batch"),
        ));
        let all = findings.into_result().expect_err("an error");
        assert_eq!(all.codes(), [Code::StageShift, Code::Zero]);
        assert_eq!((all.errors().count(), all.warnings().count()), (1, 1));
    }
}
