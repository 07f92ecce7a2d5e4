//! The run's data sheet (SPEC R13): m, A, D, B, supervised tokens,
//! precision, normalization, last-group handling, the schedule in every unit
//! and, with a run report, the observed counters, skipped updates, memory
//! peaks and the loss curve. Preparation, trials and accepted results are
//! kept apart.
//!
//! The [`Sheet`] model is built once; [`markdown`], [`html`] and JSON render it.

use serde::Serialize;

pub mod build;
pub mod html;
pub mod markdown;
pub mod svg;

/// One row of a key–value table: the label, the value, and a note.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// What the value is.
    pub label: String,
    /// The value, formatted.
    pub value: String,
    /// Where it comes from or what it means.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub note: String,
}

impl Row {
    /// A row.
    pub fn new(label: impl Into<String>, value: impl Into<String>, note: impl Into<String>) -> Row {
        Row {
            label: label.into(),
            value: value.into(),
            note: note.into(),
        }
    }
}

/// A titled table of rows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Table {
    /// The table's title.
    pub title: String,
    /// Its rows.
    pub rows: Vec<Row>,
}

/// A point of the loss curve.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Point {
    /// Position on the declared axis.
    pub x: f64,
    /// The loss.
    pub loss: f64,
}

/// The loss curve against its declared axis (R1).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Curve {
    /// The axis: `updates`, `examples` or `tokens`.
    pub axis: String,
    /// The points, in order.
    pub points: Vec<Point>,
}

/// The observed part of a sheet: what a trial run measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Observed {
    /// The report file the values come from.
    pub source: String,
    /// Counters, skipped updates, memory peaks.
    pub tables: Vec<Table>,
    /// The loss curve.
    pub curve: Curve,
    /// Warnings the run raised.
    pub warnings: Vec<String>,
}

/// A whole data sheet.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sheet {
    /// `accum-sheet/1`.
    pub format: &'static str,
    /// The run's name.
    pub name: String,
    /// Free text from the config.
    pub notes: Option<String>,
    /// The configuration file the sheet describes.
    pub config: String,
    /// Preparation: the plan and settings, as configured and computed.
    pub preparation: Vec<Table>,
    /// Trial: what a run observed, when a report was given.
    pub trial: Option<Observed>,
    /// Accepted results: the decision, which only a person makes.
    pub accepted: Option<String>,
}

/// Escapes text for HTML element content and attribute values.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Escapes text for a Markdown table cell: pipes, newlines and HTML.
pub fn escape_markdown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '\n' | '\r' => out.push(' '),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '*' | '_' | '`' | '[' | ']' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// Formats an integer with thousands separators.
pub fn group(value: u64) -> String {
    accum_core::units::group_digits(value)
}

#[cfg(test)]
pub(crate) fn sample() -> Sheet {
    Sheet {
        format: "accum-sheet/1",
        name: "tiny <script>alert(1)</script>".into(),
        notes: Some("a | b & \"c\"".into()),
        config: "examples/quickstart.toml".into(),
        preparation: vec![Table {
            title: "Plan".into(),
            rows: vec![
                Row::new(
                    "effective batch B",
                    "32 examples",
                    "B = m·A·D = 2 × 8 × 2 = 32",
                ),
                Row::new("micro-batch m", "2", ""),
            ],
        }],
        trial: Some(Observed {
            source: "run.json".into(),
            tables: vec![Table {
                title: "Counters".into(),
                rows: vec![Row::new("applied updates", "10", "")],
            }],
            curve: Curve {
                axis: "updates".into(),
                points: (1..=10)
                    .map(|i| Point {
                        x: f64::from(i),
                        loss: 5.0 / f64::from(i),
                    })
                    .collect(),
            },
            warnings: vec![],
        }),
        accepted: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(
            escape_html("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        assert_eq!(escape_markdown("a|b\n<i>*x*"), "a\\|b &lt;i&gt;\\*x\\*");
    }
}
