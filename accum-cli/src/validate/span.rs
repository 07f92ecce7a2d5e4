//! Span fields (`x-accum-unit = "span"`): a length with its unit, such as
//! "500 updates" or `{ updates = 500 }`. A bare number, "steps" or "iters"
//! is refused with the reason, which a schema pattern could not give
//! (`accum::span`).

use std::ops::Range;

use accum_core::{Code, Span, SpanError, UnitKind};

use super::map::describe;
use crate::diagnostic::{Diagnostic, dotted};
use crate::fix::{Applicability, Suggestion, json_string};
use crate::source::NodeKind;
use crate::suggest::counted_span;

/// The diagnostic of the span at `path`, if it is not one.
pub(super) fn check_span(
    path: &[String],
    kind: &NodeKind,
    range: Range<usize>,
) -> Option<Diagnostic> {
    let err = match kind {
        NodeKind::Null => return None,
        NodeKind::String(text) => text.parse::<Span>().err()?,
        NodeKind::Integer(i) => SpanError::BareNumber {
            number: i.to_string(),
        },
        NodeKind::Float(f) => SpanError::BareNumber {
            number: f.to_string(),
        },
        NodeKind::Table(entries) => {
            let whole =
                |kind: &NodeKind| matches!(kind, NodeKind::Integer(i) if u64::try_from(*i).is_ok());
            match entries.as_slice() {
                [entry]
                    if UnitKind::from_name(&entry.key).is_some() && whole(&entry.value.kind) =>
                {
                    return None;
                }
                [entry] if UnitKind::from_name(&entry.key).is_some() => {
                    let message = format!(
                        "`{}.{}` must be a whole count of {}, found {}",
                        dotted(path),
                        entry.key,
                        entry.key,
                        describe(&entry.value.to_json())
                    );
                    return not_a_span(path, entry.value.range.clone(), message);
                }
                _ => SpanError::TableKeys {
                    found: entries.iter().map(|e| e.key.clone()).collect(),
                },
            }
        }
        NodeKind::Bool(_) | NodeKind::Array(_) => {
            let message = format!(
                "`{}` must be a span such as \"500 updates\", found {}",
                dotted(path),
                kind.type_name()
            );
            return not_a_span(path, range, message);
        }
    };
    let fix = match &err {
        SpanError::UnknownUnit { number, word } => {
            crate::suggest::unit_did_you_mean(number, word).unwrap_or_else(|| err.fix())
        }
        _ => err.fix(),
    };
    let mut diagnostic = Diagnostic::error(err.code(), path.to_vec(), err.message())
        .at(range.clone(), err.label())
        .help(fix);
    diagnostic.fixes = unit_fixes(&err, &range);
    Some(diagnostic)
}

/// The spans a length without a clear unit may be, as edits of its value:
/// the one unit a misspelt word is near (safe), or each unit a bare number
/// or a "steps" may count, for a person to choose (accum cannot know which
/// was meant).
fn unit_fixes(err: &SpanError, at: &Range<usize>) -> Vec<Suggestion> {
    let write = |span: String, applicability| {
        Suggestion::one(
            format!("write \"{span}\""),
            applicability,
            at.clone(),
            json_string(&span),
        )
    };
    let whole = |number: &str| !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit());
    match err {
        SpanError::UnknownUnit { number, word } => crate::suggest::near_unit(number, word)
            .map(|span| write(span, Applicability::Safe))
            .into_iter()
            .collect(),
        SpanError::BareNumber { number } if whole(number) => UnitKind::ALL
            .into_iter()
            .map(|unit| write(counted_span(number, unit), Applicability::Review))
            .collect(),
        SpanError::Ambiguous { number, .. } if whole(number) => {
            [UnitKind::Update, UnitKind::Microbatch]
                .into_iter()
                .map(|unit| write(counted_span(number, unit), Applicability::Review))
                .collect()
        }
        _ => Vec::new(),
    }
}

/// The diagnostic of the typed count at `path` (`Updates`, …, counting
/// `unit`), if its text is no count: a span that cannot be read gets the
/// span's diagnostic and help; a span in another unit says which unit the
/// field counts. Numbers and tables are the schema's and the typing's.
pub(super) fn check_count(
    path: &[String],
    kind: &NodeKind,
    range: Range<usize>,
    unit: UnitKind,
) -> Option<Diagnostic> {
    let NodeKind::String(text) = kind else {
        return None;
    };
    let err = match text.parse::<Span>() {
        Ok(read) => read.count_in(unit).err()?,
        Err(err) => err,
    };
    Some(
        Diagnostic::error(err.code(), path.to_vec(), err.message())
            .at(range, err.label())
            .help(err.fix()),
    )
}

/// A value at a span's place that is no span at all.
fn not_a_span(path: &[String], at: Range<usize>, message: String) -> Option<Diagnostic> {
    Some(Diagnostic::error(Code::Span, path.to_vec(), message).at(at, ""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{Document, SourceFormat};

    fn check(text: &str) -> Option<Diagnostic> {
        let doc =
            Document::parse("t.toml".into(), text.into(), SourceFormat::Toml).expect("parses");
        let path = vec!["warmup".to_owned()];
        let node = doc.node(&path).expect("a warmup");
        check_span(&path, &node.kind, node.range.clone())
    }

    #[test]
    fn spans_with_units_pass() {
        assert_eq!(check("warmup = \"500 updates\""), None);
        assert_eq!(check("warmup = { tokens = 2000 }"), None);
    }

    #[test]
    fn ambiguous_and_bare_spans_say_why_and_how() {
        let d = check("warmup = \"100 steps\"").expect("ambiguous");
        assert!(
            d.finding.message.contains("ambiguous"),
            "{}",
            d.finding.message
        );
        assert_eq!(
            d.help_text(),
            Some(
                "write it with one of `updates`, `microbatches`, `examples` or `tokens`, e.g. \"100 updates\""
            )
        );
        let d = check("warmup = 40").expect("bare");
        assert!(d.help_text().is_some_and(|h| h.contains("\"40 updates\"")));
        let d = check("warmup = { steps = 4 }").expect("keys");
        assert_eq!(d.finding.code, Code::Span);
        let d = check("warmup = { updates = -4 }").expect("negative");
        assert_eq!(
            d.finding.message,
            "`warmup.updates` must be a whole count of updates, found -4"
        );
    }
}
