//! Typing a checked document, once: `T` is deserialized from the document's
//! values by a deserializer whose error type is ours, so that what the type
//! refuses arrives as data (the field path and what was expected and found)
//! and is said at its place in the project's words. Keys the type ignores
//! (a config without `deny_unknown_fields`) are collected with the keys the
//! type knows, for a did-you-mean.
//!
//! Why by hand, and not `serde_path_to_error` with `serde_ignored`: those
//! wrap the document's own deserializer, so a refusal arrives as that
//! deserializer's error, `serde_json::Error`, which is a sentence of
//! serde's ("invalid value: integer `-4`, expected u64") and no data: the
//! value found and what was expected cannot be said in the project's words
//! or placed on the value, and the keys the type knows are not collected
//! for a did-you-mean. Both crates together still need an error type of
//! ours underneath; this module is that error type plus the path and the
//! ignored keys, in one pass.

use std::cell::RefCell;
use std::fmt;

use accum_core::Code;
use serde::de::value::BorrowedStrDeserializer;
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, EnumAccess, Expected, IntoDeserializer,
    MapAccess, SeqAccess, Unexpected, VariantAccess, Visitor,
};
use serde_json::{Map, Value};

use crate::diagnostic::{Diagnostic, dotted};
use crate::source::Document;
use crate::suggest::{did_you_mean, section_name, unknown_key_help};

/// A value the type refused, with the path of keys to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TypeError {
    /// The keys from the root to the value (`["batch", "micro_batch"]`).
    pub(crate) path: Vec<String>,
    /// What the type said.
    pub(crate) kind: TypeErrorKind,
}

/// What a type can refuse, as serde reports it to a deserializer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum TypeErrorKind {
    /// A value of the wrong type.
    InvalidType {
        /// The value found, in words.
        found: String,
        /// What the type expects, in the type's words.
        expected: String,
    },
    /// A value of the right type that the type refuses.
    InvalidValue {
        /// The value found, in words.
        found: String,
        /// What the type expects, in the type's words.
        expected: String,
    },
    /// An array or table of the wrong size.
    InvalidLength {
        /// Its size.
        len: usize,
        /// What the type expects, in the type's words.
        expected: String,
    },
    /// A name that is not one of the variants.
    UnknownVariant {
        /// The name found.
        variant: String,
        /// The variant names.
        expected: &'static [&'static str],
    },
    /// A key the type does not know (it denies unknown keys).
    UnknownField {
        /// The key.
        field: String,
        /// The keys the type knows.
        expected: &'static [&'static str],
    },
    /// A key the type needs.
    MissingField {
        /// The key.
        field: &'static str,
    },
    /// A key given twice.
    DuplicateField {
        /// The key.
        field: &'static str,
    },
    /// The type's own message (a custom `Deserialize`).
    Custom(String),
}

impl TypeError {
    fn new(kind: TypeErrorKind) -> TypeError {
        TypeError {
            path: Vec::new(),
            kind,
        }
    }

    /// The same error, one level further from the root.
    fn under(mut self, key: &str) -> TypeError {
        self.path.insert(0, key.to_owned());
        self
    }
}

impl TypeError {
    /// The diagnostic of this refusal, at its place in `doc`.
    pub(crate) fn diagnostic(&self, doc: &Document) -> Diagnostic {
        let at = dotted(&self.path);
        let range = doc.range_of(&self.path);
        let (code, message, help) = match &self.kind {
            TypeErrorKind::InvalidType { found, expected } => (
                Code::SchemaType,
                format!("`{at}` must be {expected}, found {found}"),
                None,
            ),
            TypeErrorKind::InvalidLength { len, expected } => (
                Code::SchemaType,
                format!("`{at}` must be {expected}, found {len} items"),
                None,
            ),
            TypeErrorKind::InvalidValue { found, expected } => (
                Code::SchemaValue,
                format!("`{at}` must be {expected}, found {found}"),
                None,
            ),
            TypeErrorKind::UnknownVariant { variant, expected } => (
                Code::SchemaEnum,
                format!(
                    "`{at}` must be one of {}, found string \"{variant}\"",
                    expected.join(", ")
                ),
                did_you_mean(variant, expected.iter().copied())
                    .map(|near| format!("did you mean \"{near}\"?")),
            ),
            TypeErrorKind::UnknownField { field, expected } => {
                let parent = &self.path[..self.path.len().saturating_sub(1)];
                let section = section_name(parent);
                let range = doc.key_range(&self.path).unwrap_or(range);
                return Diagnostic::error(
                    Code::UnknownKey,
                    self.path.clone(),
                    format!("unknown key `{field}` in {section}"),
                )
                .at(range, "")
                .help(unknown_key_help(field, expected.iter().copied(), &section));
            }
            TypeErrorKind::MissingField { field } => {
                let section = section_name(&self.path);
                let mut path = self.path.clone();
                path.push((*field).to_owned());
                return Diagnostic::error(
                    Code::MissingKey,
                    path,
                    format!("missing key `{field}` in {section}"),
                )
                .at(range, "")
                .help(match crate::output::schema_command() {
                    Some(command) => format!("add `{field}` to {section}; {command} describes it"),
                    None => format!("add `{field}` to {section}"),
                });
            }
            TypeErrorKind::DuplicateField { field } => (
                Code::SchemaValue,
                format!("`{field}` is given twice in {}", section_name(&self.path)),
                Some("keep one of them".to_owned()),
            ),
            TypeErrorKind::Custom(message) => {
                (Code::SchemaValue, format!("`{at}`: {message}"), None)
            }
        };
        let diagnostic = Diagnostic::error(code, self.path.clone(), message).at(range, "");
        match help {
            Some(help) => diagnostic.help(help),
            None => diagnostic,
        }
    }
}

impl Ignored {
    /// The warning for this ignored key, with the key it most likely means.
    pub(crate) fn diagnostic(&self, doc: &Document) -> Diagnostic {
        let (key, parent) = match self.path.split_last() {
            Some((key, parent)) => (key.as_str(), parent),
            None => ("", &self.path[..]),
        };
        let section = section_name(parent);
        let range = doc
            .key_range(&self.path)
            .unwrap_or_else(|| doc.range_of(&self.path));
        Diagnostic::error(
            Code::UnknownKey,
            self.path.clone(),
            format!("unknown key `{key}` in {section} is ignored"),
        )
        .warning()
        .at(range, "")
        .help(unknown_key_help(key, self.known.iter().copied(), &section))
    }
}

impl fmt::Display for TypeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            TypeErrorKind::InvalidType { found, expected }
            | TypeErrorKind::InvalidValue { found, expected } => {
                write!(f, "expected {expected}, found {found}")
            }
            TypeErrorKind::InvalidLength { len, expected } => {
                write!(f, "expected {expected}, found {len} items")
            }
            TypeErrorKind::UnknownVariant { variant, expected } => {
                write!(f, "`{variant}` is not one of {}", expected.join(", "))
            }
            TypeErrorKind::UnknownField { field, .. } => write!(f, "unknown key `{field}`"),
            TypeErrorKind::MissingField { field } => write!(f, "missing key `{field}`"),
            TypeErrorKind::DuplicateField { field } => write!(f, "key `{field}` given twice"),
            TypeErrorKind::Custom(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for TypeError {}

impl de::Error for TypeError {
    fn custom<M: fmt::Display>(message: M) -> TypeError {
        TypeError::new(TypeErrorKind::Custom(message.to_string()))
    }

    fn invalid_type(found: Unexpected<'_>, expected: &dyn Expected) -> TypeError {
        TypeError::new(TypeErrorKind::InvalidType {
            found: unexpected_words(&found),
            expected: expected.to_string(),
        })
    }

    fn invalid_value(found: Unexpected<'_>, expected: &dyn Expected) -> TypeError {
        TypeError::new(TypeErrorKind::InvalidValue {
            found: unexpected_words(&found),
            expected: expected.to_string(),
        })
    }

    fn invalid_length(len: usize, expected: &dyn Expected) -> TypeError {
        TypeError::new(TypeErrorKind::InvalidLength {
            len,
            expected: expected.to_string(),
        })
    }

    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> TypeError {
        TypeError::new(TypeErrorKind::UnknownVariant {
            variant: variant.to_owned(),
            expected,
        })
    }

    fn unknown_field(field: &str, expected: &'static [&'static str]) -> TypeError {
        TypeError::new(TypeErrorKind::UnknownField {
            field: field.to_owned(),
            expected,
        })
    }

    fn missing_field(field: &'static str) -> TypeError {
        TypeError::new(TypeErrorKind::MissingField { field })
    }

    fn duplicate_field(field: &'static str) -> TypeError {
        TypeError::new(TypeErrorKind::DuplicateField { field })
    }
}

/// A found value in words, as config files write it.
fn unexpected_words(found: &Unexpected<'_>) -> String {
    match found {
        Unexpected::Bool(b) => b.to_string(),
        Unexpected::Unsigned(n) => n.to_string(),
        Unexpected::Signed(n) => n.to_string(),
        Unexpected::Float(x) => format!("{x:?}"),
        Unexpected::Char(c) => format!("'{c}'"),
        Unexpected::Str(s) => format!("string \"{s}\""),
        Unexpected::Bytes(_) => "bytes".to_owned(),
        Unexpected::Unit | Unexpected::Option => "nothing".to_owned(),
        Unexpected::Seq => "an array".to_owned(),
        Unexpected::Map => "a table".to_owned(),
        Unexpected::NewtypeStruct
        | Unexpected::Enum
        | Unexpected::UnitVariant
        | Unexpected::NewtypeVariant
        | Unexpected::TupleVariant
        | Unexpected::StructVariant => "a value of another kind".to_owned(),
        Unexpected::Other(other) => (*other).to_owned(),
    }
}

/// A key the type ignored, with the keys it knows there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Ignored {
    /// The keys from the root to the ignored one.
    pub(crate) path: Vec<String>,
    /// The keys the type knows beside it.
    pub(crate) known: &'static [&'static str],
}

/// Deserializes `T` from `value`: the typed value and the keys it ignored,
/// or the first value it refused.
pub(crate) fn from_value<T: DeserializeOwned>(
    value: &Value,
) -> Result<(T, Vec<Ignored>), TypeError> {
    let ignored = RefCell::new(Vec::new());
    let typed = T::deserialize(De {
        value,
        path: Vec::new(),
        ignored_among: None,
        ignored: &ignored,
    })?;
    Ok((typed, ignored.into_inner()))
}

/// The deserializer of one value of the document.
struct De<'de> {
    value: &'de Value,
    /// Keys from the root to this value.
    path: Vec<String>,
    /// When this value sits under a key its struct does not know: the keys
    /// it knows (the value is then deserialized as ignored).
    ignored_among: Option<&'static [&'static str]>,
    ignored: &'de RefCell<Vec<Ignored>>,
}

impl<'de> De<'de> {
    fn child(
        &self,
        key: String,
        value: &'de Value,
        ignored_among: Option<&'static [&'static str]>,
    ) -> De<'de> {
        let mut path = self.path.clone();
        path.push(key);
        De {
            value,
            path,
            ignored_among,
            ignored: self.ignored,
        }
    }

    fn map(
        self,
        fields: Option<&'static [&'static str]>,
        map: &'de Map<String, Value>,
    ) -> MapDe<'de> {
        MapDe {
            iter: map.iter(),
            pending: None,
            fields,
            parent: self,
        }
    }
}

impl<'de> Deserializer<'de> for De<'de> {
    type Error = TypeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TypeError> {
        match self.value {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => visitor.visit_u64(u),
                (None, Some(i), _) => visitor.visit_i64(i),
                (None, None, Some(x)) => visitor.visit_f64(x),
                (None, None, None) => {
                    Err(de::Error::custom(format!("the number {n} has no value")))
                }
            },
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(items) => visitor.visit_seq(SeqDe {
                iter: items.iter().enumerate(),
                parent: self,
            }),
            Value::Object(map) => visitor.visit_map(self.map(None, map)),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TypeError> {
        match self.value {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, TypeError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, TypeError> {
        match self.value {
            Value::Object(map) => visitor.visit_map(self.map(Some(fields), map)),
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, TypeError> {
        match self.value {
            Value::String(s) => visitor.visit_enum(s.as_str().into_deserializer()),
            Value::Object(map) if map.len() == 1 => {
                let Some((variant, value)) = map.iter().next() else {
                    return Err(de::Error::invalid_length(0, &"one variant"));
                };
                visitor.visit_enum(EnumDe {
                    variant,
                    value: self.child(variant.clone(), value, None),
                })
            }
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TypeError> {
        if let Some(known) = self.ignored_among {
            self.ignored.borrow_mut().push(Ignored {
                path: self.path,
                known,
            });
        }
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map identifier
    }
}

struct SeqDe<'de> {
    iter: std::iter::Enumerate<std::slice::Iter<'de, Value>>,
    parent: De<'de>,
}

impl<'de> SeqAccess<'de> for SeqDe<'de> {
    type Error = TypeError;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, TypeError> {
        let Some((index, value)) = self.iter.next() else {
            return Ok(None);
        };
        let key = index.to_string();
        seed.deserialize(self.parent.child(key.clone(), value, None))
            .map(Some)
            .map_err(|err| err.under(&key))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

struct MapDe<'de> {
    iter: serde_json::map::Iter<'de>,
    pending: Option<(&'de String, &'de Value)>,
    /// The keys of the struct being read, when it is one.
    fields: Option<&'static [&'static str]>,
    parent: De<'de>,
}

impl<'de> MapAccess<'de> for MapDe<'de> {
    type Error = TypeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, TypeError> {
        let Some((key, value)) = self.iter.next() else {
            return Ok(None);
        };
        self.pending = Some((key, value));
        seed.deserialize(BorrowedStrDeserializer::<TypeError>::new(key))
            .map(Some)
            .map_err(|err| err.under(key))
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, TypeError> {
        let Some((key, value)) = self.pending.take() else {
            return Err(de::Error::custom("a value without a key"));
        };
        let unknown = self.fields.filter(|fields| !fields.contains(&key.as_str()));
        seed.deserialize(self.parent.child(key.clone(), value, unknown))
            .map_err(|err| err.under(key))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

struct EnumDe<'de> {
    variant: &'de String,
    value: De<'de>,
}

impl<'de> EnumAccess<'de> for EnumDe<'de> {
    type Error = TypeError;
    type Variant = De<'de>;

    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, De<'de>), TypeError> {
        let variant = seed.deserialize(BorrowedStrDeserializer::<TypeError>::new(self.variant))?;
        Ok((variant, self.value))
    }
}

impl<'de> VariantAccess<'de> for De<'de> {
    type Error = TypeError;

    fn unit_variant(self) -> Result<(), TypeError> {
        match self.value {
            Value::Null => Ok(()),
            other => Err(de::Error::invalid_type(unexpected(other), &"no value")),
        }
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value, TypeError> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, TypeError> {
        self.deserialize_any(visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, TypeError> {
        self.deserialize_struct("", fields, visitor)
    }
}

fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => Unexpected::Unsigned(u),
            (None, Some(i)) => Unexpected::Signed(i),
            _ => Unexpected::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "snake_case")]
    enum Norm {
        PerToken,
        Sum,
    }

    /// A nested table of [`Loose`], with a list in it.
    #[derive(Debug, Deserialize, PartialEq)]
    struct Section {
        micro_batch: u32,
        tags: Option<Vec<String>>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Loose {
        batch: Section,
        norm: Norm,
        #[serde(default)]
        extra: Option<std::num::NonZeroU32>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Strict {
        norm: Norm,
    }

    #[test]
    fn types_a_document_and_notes_the_keys_it_ignores() {
        let value = json!({
            "batch": { "micro_batch": 4, "micro_bach": 3, "tags": ["a"] },
            "norm": "per_token",
            "colour": "red"
        });
        let (typed, ignored) = from_value::<Loose>(&value).expect("types");
        assert_eq!(typed.batch.micro_batch, 4);
        assert_eq!(typed.norm, Norm::PerToken);
        let paths: Vec<Vec<String>> = ignored.iter().map(|i| i.path.clone()).collect();
        assert_eq!(
            paths,
            vec![
                vec!["batch".to_owned(), "micro_bach".to_owned()],
                vec!["colour".to_owned()]
            ]
        );
        assert_eq!(ignored[0].known, &["micro_batch", "tags"]);
    }

    #[test]
    fn refusals_are_data_with_their_path() {
        let err = from_value::<Loose>(&json!({
            "batch": { "micro_batch": 4, "tags": ["a", 3] },
            "norm": "sum"
        }))
        .expect_err("3 is not a string");
        assert_eq!(err.path, ["batch", "tags", "1"]);
        assert_eq!(
            err.kind,
            TypeErrorKind::InvalidType {
                found: "3".to_owned(),
                expected: "a string".to_owned()
            }
        );
        let err = from_value::<Loose>(&json!({ "batch": { "micro_batch": 4 }, "norm": "mean" }))
            .expect_err("no such variant");
        assert_eq!(err.path, ["norm"]);
        assert!(matches!(
            err.kind,
            TypeErrorKind::UnknownVariant { ref variant, expected } if variant == "mean" && expected == ["per_token", "sum"]
        ));
        let err = from_value::<Loose>(&json!({ "batch": {}, "norm": "sum" })).expect_err("missing");
        assert_eq!(err.path, ["batch"]);
        assert_eq!(
            err.kind,
            TypeErrorKind::MissingField {
                field: "micro_batch"
            }
        );
        let err = from_value::<Loose>(
            &json!({ "batch": { "micro_batch": 1 }, "norm": "sum", "extra": 0 }),
        )
        .expect_err("zero");
        assert_eq!(err.path, ["extra"]);
        assert!(matches!(err.kind, TypeErrorKind::InvalidValue { ref found, .. } if found == "0"));
        let err = from_value::<Strict>(&json!({ "norm": "sum", "nrom": 1 })).expect_err("denied");
        assert_eq!(err.path, ["nrom"]);
        assert!(
            matches!(err.kind, TypeErrorKind::UnknownField { expected, .. } if expected == ["norm"])
        );
    }
}
