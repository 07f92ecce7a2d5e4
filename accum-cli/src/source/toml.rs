//! TOML through the `toml` crate's range-keeping `DeTable`.

use std::ops::Range;

use super::{Entry, MAX_DEPTH, Node, NodeKind, ParseResult};

/// Parses TOML text into a located tree.
pub(super) fn parse(text: &str) -> ParseResult {
    use toml::de::{DeTable, DeValue};
    let table = DeTable::parse(text).map_err(|err| (err.message().to_owned(), err.span()))?;

    fn value(v: &toml::Spanned<DeValue<'_>>, depth: usize) -> ParseResult {
        if depth > MAX_DEPTH {
            return Err((
                format!("nesting deeper than {MAX_DEPTH} levels"),
                Some(v.span()),
            ));
        }
        let kind = match v.get_ref() {
            DeValue::String(s) => NodeKind::String(s.to_string()),
            DeValue::Integer(i) => {
                let digits = i.as_str().replace('_', "");
                let parsed = i128::from_str_radix(&digits, i.radix()).map_err(|_| {
                    (
                        format!("`{}` is not a valid integer", i.as_str()),
                        Some(v.span()),
                    )
                })?;
                NodeKind::Integer(parsed)
            }
            DeValue::Float(f) => {
                let text = f.as_str().replace('_', "");
                let parsed = match text.as_str() {
                    "inf" | "+inf" => f64::INFINITY,
                    "-inf" => f64::NEG_INFINITY,
                    "nan" | "+nan" | "-nan" => f64::NAN,
                    other => other
                        .parse()
                        .map_err(|_| (format!("`{other}` is not a valid float"), Some(v.span())))?,
                };
                NodeKind::Float(parsed)
            }
            DeValue::Boolean(b) => NodeKind::Bool(*b),
            DeValue::Datetime(d) => NodeKind::String(d.to_string()),
            DeValue::Array(items) => NodeKind::Array(
                items
                    .iter()
                    .map(|item| value(item, depth + 1))
                    .collect::<Result<_, _>>()?,
            ),
            DeValue::Table(t) => NodeKind::Table(table_entries(t, depth + 1)?),
        };
        Ok(Node {
            range: v.span(),
            kind,
        })
    }

    fn table_entries(
        t: &DeTable<'_>,
        depth: usize,
    ) -> Result<Vec<Entry>, (String, Option<Range<usize>>)> {
        t.iter()
            .map(|(k, v)| {
                Ok(Entry {
                    key: k.get_ref().to_string(),
                    key_range: k.span(),
                    value: value(v, depth)?,
                })
            })
            .collect()
    }

    Ok(Node {
        range: table.span(),
        kind: NodeKind::Table(table_entries(table.get_ref(), 1)?),
    })
}
