//! Human durations: a length in any of the four units, written the way people
//! write it — `"500 updates"`, `"2M tokens"`, `"1.5k examples"`,
//! `"40 microbatches"` or the table `{ updates = 500 }` (`accum::span`).
//!
//! A bare number, `"100 steps"` or `"100 iters"` is rejected: "step" means an
//! update in one framework and a microbatch in the next. A [`Span`] becomes a
//! number of updates only through a plan and an explicit rounding:
//! [`Plan::span_to_updates`](crate::plan::Plan::span_to_updates).
//!
//! ```
//! use accum_core::{Span, UnitKind};
//!
//! let warmup: Span = "1.5k examples".parse()?;
//! assert_eq!(warmup, Span::new(1_500, UnitKind::Example));
//! assert!("100 steps".parse::<Span>().is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#[cfg(feature = "schema")]
use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;
use std::str::FromStr;

use serde::de::{self, MapAccess, Unexpected, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::code::Code;
use crate::units::{Count, Unit, UnitKind};

/// A length in one of the four units, as people write it (`"2M tokens"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Span {
    value: u64,
    unit: UnitKind,
}

/// Words that mean "some kind of step" and are rejected as units (`accum::span`).
const AMBIGUOUS: &[&str] = &[
    "step",
    "steps",
    "iter",
    "iters",
    "iteration",
    "iterations",
    "it",
    "its",
    "batch",
    "batches",
];

/// Why a span could not be read.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SpanError {
    /// Nothing was written.
    Empty,
    /// A number without a unit.
    BareNumber {
        /// The number as written.
        number: String,
    },
    /// A unit word that does not say which count it means ("steps").
    Ambiguous {
        /// The number as written.
        number: String,
        /// The ambiguous word.
        word: String,
    },
    /// A word that is not a unit at all.
    UnknownUnit {
        /// The number as written.
        number: String,
        /// The unknown word.
        word: String,
    },
    /// The number could not be read.
    BadNumber {
        /// The number as written.
        number: String,
    },
    /// The number is not a whole count (`"1.2345k"`, `"0.5 updates"`).
    NotWhole {
        /// The number as written.
        number: String,
    },
    /// The number does not fit in 64 bits.
    TooLarge {
        /// The number as written.
        number: String,
    },
    /// A table form without exactly one of the four unit keys.
    TableKeys {
        /// The keys that were found.
        found: Vec<String>,
    },
    /// A length in another unit than the typed count it is written for
    /// (`"2M tokens"` for an `Updates` field): converting it needs the plan.
    OtherUnit {
        /// The length as read.
        span: Span,
        /// The unit the field counts.
        counts: UnitKind,
    },
}

/// The digits after the sign of a negative number as written (`-5` gives
/// `5`), or `None` when `number` has no leading minus.
fn negative(number: &str) -> Option<&str> {
    number
        .trim()
        .strip_prefix('-')
        .map(str::trim_start)
        .filter(|rest| rest.starts_with(|c: char| c.is_ascii_digit() || c == '.'))
}

const UNITS_HINT: &str = "`updates`, `microbatches`, `examples` or `tokens`";

impl SpanError {
    /// The code of the rule: `accum::span`.
    pub const fn code(&self) -> Code {
        Code::Span
    }

    /// What is wrong with the span as written.
    pub fn message(&self) -> String {
        match self {
            SpanError::Empty => "empty span".to_owned(),
            SpanError::BareNumber { number } => {
                format!("`{number}` has no unit and is ambiguous")
            }
            SpanError::Ambiguous { number, word } => format!(
                "`{number} {word}` is ambiguous: \"{word}\" can mean updates or microbatches"
            ),
            SpanError::UnknownUnit { number, word } => {
                format!("`{word}` in `{number} {word}` is not a unit")
            }
            SpanError::BadNumber { number } if negative(number).is_some() => {
                format!("`{number}` is negative; a length counts from 0")
            }
            SpanError::BadNumber { number } => format!("`{number}` is not a number"),
            SpanError::NotWhole { number } => format!("`{number}` is not a whole count"),
            SpanError::TooLarge { number } => {
                format!("`{number}` does not fit in a 64-bit count")
            }
            SpanError::TableKeys { found } if found.is_empty() => {
                "a span table needs exactly one key".to_owned()
            }
            SpanError::TableKeys { found } => format!(
                "a span table needs exactly one key; found {}",
                found
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            SpanError::OtherUnit { span, counts } => format!(
                "`{span}` counts {}, but this field counts {}",
                span.unit().plural(),
                counts.plural()
            ),
        }
    }

    /// A short label for the value: `ambiguous unit` or `not a span`.
    pub fn label(&self) -> &'static str {
        match self {
            SpanError::BareNumber { .. } | SpanError::Ambiguous { .. } => "ambiguous unit",
            SpanError::OtherUnit { .. } => "another unit",
            _ => "not a span",
        }
    }

    /// How to write it instead. Spans have no plan values to offer, so the
    /// fix is a sentence (a plan's [`Fix`](crate::plan::Fix) carries it as
    /// its text).
    pub fn fix(&self) -> String {
        match self {
            SpanError::Empty => "write a number and its unit, e.g. \"500 updates\"".to_owned(),
            SpanError::BareNumber { number } | SpanError::Ambiguous { number, .. } => {
                format!("write it with one of {UNITS_HINT}, e.g. \"{number} updates\"")
            }
            SpanError::UnknownUnit { .. } | SpanError::TableKeys { .. } => {
                format!("use one of {UNITS_HINT}")
            }
            SpanError::BadNumber { number } if let Some(magnitude) = negative(number) => {
                format!("write it without the sign, e.g. \"{magnitude} updates\"")
            }
            SpanError::BadNumber { .. } => {
                "write digits with an optional decimal part and suffix k, M, B (or G) or T, e.g. \"1.5k\""
                    .to_owned()
            }
            SpanError::NotWhole { .. } => {
                "counts of updates, microbatches, examples and tokens are integers".to_owned()
            }
            SpanError::TooLarge { .. } => format!("the largest count is {}", u64::MAX),
            SpanError::OtherUnit { span, counts } => format!(
                "write it in {}, e.g. \"{} {}\" (converting between units needs the plan), \
                 or make the field a `Span`, which takes any unit",
                counts.plural(),
                span.value(),
                counts.plural()
            ),
        }
    }
}

impl fmt::Display for SpanError {
    /// The message, then the fix.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}; {}", self.message(), self.fix())
    }
}

impl std::error::Error for SpanError {}

crate::code::debug_as_display!(SpanError);

impl Span {
    /// A span of `value` in `unit`.
    #[inline]
    pub const fn new(value: u64, unit: UnitKind) -> Span {
        Span { value, unit }
    }

    /// A span from a typed count.
    #[inline]
    pub const fn of<U: Unit>(count: Count<U>) -> Span {
        Span::new(count.get(), U::KIND)
    }

    /// The number.
    #[inline]
    pub const fn value(&self) -> u64 {
        self.value
    }

    /// The unit.
    #[inline]
    pub const fn unit(&self) -> UnitKind {
        self.unit
    }

    /// The count of a field that counts `unit` (a typed count such as
    /// `Updates`): the value when the span is in that unit, else
    /// [`SpanError::OtherUnit`], since converting needs the plan.
    pub fn count_in(&self, unit: UnitKind) -> Result<u64, SpanError> {
        if self.unit == unit {
            Ok(self.value)
        } else {
            Err(SpanError::OtherUnit {
                span: *self,
                counts: unit,
            })
        }
    }
}

impl<U: Unit> From<Count<U>> for Span {
    fn from(count: Count<U>) -> Span {
        Span::of(count)
    }
}

/// Parses a count in the number syntax of spans (`"1.3B"`, `"7B"`, `"2M"`,
/// `"1_000"`), exactly, for counts that are not lengths (a model's
/// parameters, a data set's examples).
pub fn parse_count(text: &str) -> Result<u64, SpanError> {
    parse_number(text)
}

/// Parses `"1.5k"`, `"2M"`, `"500"`, `"1_000"` into an exact integer.
fn parse_number(text: &str) -> Result<u64, SpanError> {
    let bad = || SpanError::BadNumber {
        number: text.to_owned(),
    };
    let cleaned: String = text.chars().filter(|&c| c != '_' && c != ',').collect();
    let (digits, scale_pow) = match cleaned.chars().last() {
        Some('k' | 'K') => (&cleaned[..cleaned.len() - 1], 3),
        Some('M') => (&cleaned[..cleaned.len() - 1], 6),
        Some('G' | 'B') => (&cleaned[..cleaned.len() - 1], 9),
        Some('T') => (&cleaned[..cleaned.len() - 1], 12),
        _ => (cleaned.as_str(), 0),
    };
    let (int_part, frac_part) = match digits.split_once('.') {
        Some((i, f)) => (i, f),
        None => (digits, ""),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return Err(bad());
    }
    if !int_part.bytes().all(|b| b.is_ascii_digit())
        || !frac_part.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(bad());
    }
    let frac_trimmed = frac_part.trim_end_matches('0');
    if frac_trimmed.len() > scale_pow {
        return Err(SpanError::NotWhole {
            number: text.to_owned(),
        });
    }
    // value = (int_part · 10^frac_len + frac) · 10^(scale − frac_len), exactly.
    let too_large = || SpanError::TooLarge {
        number: text.to_owned(),
    };
    let mut value: u64 = 0;
    for b in int_part.bytes().chain(frac_trimmed.bytes()) {
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(b - b'0')))
            .ok_or_else(too_large)?;
    }
    let exponent = u32::try_from(scale_pow - frac_trimmed.len()).map_err(|_| bad())?;
    value.checked_mul(10u64.pow(exponent)).ok_or_else(too_large)
}

impl FromStr for Span {
    type Err = SpanError;

    fn from_str(text: &str) -> Result<Span, SpanError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(SpanError::Empty);
        }
        // The number ends where the first letter that is not a scale suffix
        // followed by the end or whitespace begins: "2M tokens", "2Mtokens".
        let split = text
            .char_indices()
            .find(|&(i, c)| c.is_whitespace() || (c.is_alphabetic() && !is_suffix_at(text, i)))
            .map_or(text.len(), |(i, _)| i);
        let (number, rest) = text.split_at(split);
        let word = rest.trim().to_ascii_lowercase();
        if number.is_empty() {
            return Err(SpanError::BadNumber {
                number: text.to_owned(),
            });
        }
        if word.is_empty() {
            // Validate the number first so that "abc" says "not a number".
            parse_number(number)?;
            return Err(SpanError::BareNumber {
                number: number.to_owned(),
            });
        }
        if AMBIGUOUS.contains(&word.as_str()) {
            return Err(SpanError::Ambiguous {
                number: number.to_owned(),
                word,
            });
        }
        let unit = UnitKind::from_name(&word).ok_or_else(|| SpanError::UnknownUnit {
            number: number.to_owned(),
            word: rest.trim().to_owned(),
        })?;
        Ok(Span::new(parse_number(number)?, unit))
    }
}

/// Whether the letter at `i` is a scale suffix (k, K, M, G, B, T) that ends the number.
fn is_suffix_at(text: &str, i: usize) -> bool {
    let mut chars = text[i..].chars();
    let is_scale = matches!(chars.next(), Some('k' | 'K' | 'M' | 'G' | 'B' | 'T'));
    let before_is_digit = text[..i]
        .chars()
        .last()
        .is_some_and(|c| c.is_ascii_digit() || c == '.');
    is_scale && before_is_digit && chars.next().is_none_or(char::is_whitespace)
}

impl fmt::Display for Span {
    /// Compact and re-parseable: `"500 updates"`, `"2M tokens"`, `"1B tokens"`,
    /// `"1 update"`. The suffixes are the ones people write in configs
    /// (k, M, B, T); the parser also reads `G` for a billion, but never
    /// gets it back from here.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let noun = if self.value == 1 {
            self.unit.singular()
        } else {
            self.unit.plural()
        };
        let suffixes = [
            (1_000_000_000_000, "T"),
            (1_000_000_000, "B"),
            (1_000_000, "M"),
            (1_000, "k"),
        ];
        for (scale, suffix) in suffixes {
            if self.value >= scale && self.value.is_multiple_of(scale) {
                return write!(f, "{}{suffix} {noun}", self.value / scale);
            }
        }
        write!(f, "{} {noun}", self.value)
    }
}

impl Serialize for Span {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            serializer.collect_str(self)
        } else {
            let mut map = serializer.serialize_map(Some(1))?;
            map.serialize_entry(self.unit.plural(), &self.value)?;
            map.end()
        }
    }
}

impl<'de> Deserialize<'de> for Span {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Span, D::Error> {
        deserializer.deserialize_any(SpanVisitor)
    }
}

struct SpanVisitor;

impl<'de> Visitor<'de> for SpanVisitor {
    type Value = Span;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a span such as \"500 updates\" or {{ updates = 500 }}")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Span, E> {
        text.parse().map_err(E::custom)
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Span, E> {
        Err(E::custom(SpanError::BareNumber {
            number: value.to_string(),
        }))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Span, E> {
        Err(E::custom(SpanError::BareNumber {
            number: value.to_string(),
        }))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Span, E> {
        Err(E::custom(SpanError::BareNumber {
            number: value.to_string(),
        }))
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Span, M::Error> {
        let mut found: Vec<String> = Vec::new();
        let mut span = None;
        while let Some(key) = map.next_key::<String>()? {
            match UnitKind::from_name(&key) {
                Some(unit) if span.is_none() => {
                    let value: u64 = map.next_value()?;
                    span = Some(Span::new(value, unit));
                }
                _ => {
                    map.next_value::<de::IgnoredAny>()?;
                }
            }
            found.push(key);
        }
        match span {
            Some(span) if found.len() == 1 => Ok(span),
            _ => Err(de::Error::custom(SpanError::TableKeys { found })),
        }
    }
}

/// A typed count ([`Updates`](crate::Updates), [`Tokens`](crate::units::Tokens), …) reads `100`, `"100 updates"` (any span spelling: `"2M tokens"`,
/// `"1.5k examples"`) or the table `{ updates = 100 }`. A span in another
/// unit is refused: converting it needs the plan.
impl<'de, U: Unit> Deserialize<'de> for Count<U> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(CountVisitor(PhantomData))
    }
}

struct CountVisitor<U>(PhantomData<fn() -> U>);

impl<U: Unit> CountVisitor<U> {
    fn from_span<E: de::Error>(span: Span) -> Result<Count<U>, E> {
        span.count_in(U::KIND).map(Count::new).map_err(E::custom)
    }
}

impl<'de, U: Unit> Visitor<'de> for CountVisitor<U> {
    type Value = Count<U>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a whole count of {}, e.g. 100 or \"100 {}\"",
            U::PLURAL,
            U::PLURAL
        )
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Count<U>, E> {
        Ok(Count::new(value))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Count<U>, E> {
        u64::try_from(value)
            .map(Count::new)
            .map_err(|_| E::invalid_value(Unexpected::Signed(value), &self))
    }

    fn visit_u128<E: de::Error>(self, value: u128) -> Result<Count<U>, E> {
        u64::try_from(value).map(Count::new).map_err(|_| {
            E::custom(format_args!(
                "{value} does not fit in a 64-bit count (the largest is {})",
                u64::MAX
            ))
        })
    }

    fn visit_i128<E: de::Error>(self, value: i128) -> Result<Count<U>, E> {
        u64::try_from(value).map(Count::new).map_err(|_| {
            E::custom(format_args!(
                "{value} is not a count: counts are whole numbers from 0 to {}",
                u64::MAX
            ))
        })
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Count<U>, E> {
        Err(E::invalid_type(Unexpected::Float(value), &self))
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Count<U>, E> {
        match text.parse::<Span>() {
            Ok(span) => Self::from_span(span),
            // The field's type names the unit, so a quoted number is clear.
            Err(SpanError::BareNumber { .. }) => format!("{} {}", text.trim(), U::PLURAL)
                .parse::<Span>()
                .map_err(E::custom)
                .and_then(Self::from_span),
            Err(e) => Err(E::custom(e)),
        }
    }

    fn visit_map<M: MapAccess<'de>>(self, map: M) -> Result<Count<U>, M::Error> {
        let span = Span::deserialize(de::value::MapAccessDeserializer::new(map))?;
        Self::from_span(span)
    }
}

/// A typed count's schema: the whole number, or the string form the
/// deserializer above reads, in the count's unit only.
#[cfg(feature = "schema")]
impl<U: Unit> schemars::JsonSchema for Count<U> {
    fn schema_name() -> Cow<'static, str> {
        U::KIND.type_name().into()
    }

    fn schema_id() -> Cow<'static, str> {
        format!("accum_core::units::{}", U::KIND.type_name()).into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        // The string form is the span grammar, in this unit only.
        let pattern = schema_pattern([U::KIND]);
        schemars::json_schema!({
            "description": format!(
                "A count of {}: a whole number, or with its unit (\"100 {}\").",
                U::PLURAL,
                U::PLURAL
            ),
            "x-accum-unit": U::KEY,
            // `minimum` applies to the number, `pattern` to the string.
            "type": ["integer", "string"],
            "minimum": 0,
            "pattern": pattern,
        })
    }
}

/// The string form of a length as a JSON-schema `pattern`: a number as the
/// parser reads it (digits with `_` or `,`, a decimal part, a `k`/`M`/`G`/
/// `B`/`T` multiplier), then the singular or plural noun of one of `units`.
#[cfg(feature = "schema")]
fn schema_pattern(units: impl IntoIterator<Item = UnitKind>) -> String {
    let nouns: Vec<&str> = units
        .into_iter()
        .flat_map(|unit| [unit.singular(), unit.plural()])
        .collect();
    format!(
        "^\\s*[0-9][0-9_,]*(\\.[0-9]+)?\\s*[kKMGBT]?\\s*({})\\s*$",
        nouns.join("|")
    )
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for Span {
    fn schema_name() -> Cow<'static, str> {
        "Span".into()
    }

    fn schema_id() -> Cow<'static, str> {
        "accum_core::Span".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A length with its unit: \"500 updates\", \"2M tokens\", \"1.5k examples\", \"40 microbatches\", or { updates = 500 }. A bare number or \"steps\" is ambiguous and rejected.",
            "x-accum-unit": "span",
            "oneOf": [
                {
                    "type": "string",
                    "pattern": schema_pattern(UnitKind::ALL)
                },
                {
                    "type": "object",
                    "minProperties": 1,
                    "maxProperties": 1,
                    "properties": {
                        "updates": { "type": "integer", "minimum": 0 },
                        "microbatches": { "type": "integer", "minimum": 0 },
                        "examples": { "type": "integer", "minimum": 0 },
                        "tokens": { "type": "integer", "minimum": 0 }
                    },
                    "additionalProperties": false
                }
            ]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_forms_people_write() {
        let cases: &[(&str, u64, UnitKind)] = &[
            ("500 updates", 500, UnitKind::Update),
            ("1 update", 1, UnitKind::Update),
            ("2M tokens", 2_000_000, UnitKind::Token),
            ("1.5k examples", 1_500, UnitKind::Example),
            ("1.5K examples", 1_500, UnitKind::Example),
            ("40 microbatches", 40, UnitKind::Microbatch),
            ("  7   Updates ", 7, UnitKind::Update),
            ("1_000 examples", 1_000, UnitKind::Example),
            ("1,000 examples", 1_000, UnitKind::Example),
            ("2.5G tokens", 2_500_000_000, UnitKind::Token),
            ("3B tokens", 3_000_000_000, UnitKind::Token),
            ("1T tokens", 1_000_000_000_000, UnitKind::Token),
            ("0 updates", 0, UnitKind::Update),
            ("1.50k examples", 1_500, UnitKind::Example),
        ];
        for &(text, value, unit) in cases {
            assert_eq!(text.parse::<Span>(), Ok(Span::new(value, unit)), "{text}");
        }
    }

    #[test]
    fn rejects_ambiguous_and_malformed_forms() {
        let cases: &[(&str, &str)] = &[
            (
                "100 steps",
                "is ambiguous: \"steps\" can mean updates or microbatches",
            ),
            ("100 step", "is ambiguous"),
            ("100 iters", "is ambiguous"),
            ("5 iterations", "is ambiguous"),
            ("100", "has no unit and is ambiguous"),
            ("2M", "has no unit and is ambiguous"),
            ("", "empty span"),
            ("updates", "is not a number"),
            ("1.2.3 updates", "is not a number"),
            ("1.2345k examples", "is not a whole count"),
            ("0.5 updates", "is not a whole count"),
            ("100 epochs", "is not a unit"),
            ("-5 updates", "`-5` is negative; a length counts from 0"),
            ("-1.5k tokens", "is negative"),
            ("--5 updates", "is not a number"),
            ("99999999999999999999 tokens", "does not fit"),
            ("20000000T tokens", "does not fit"),
        ];
        for &(text, needle) in cases {
            let err = text.parse::<Span>().expect_err(text);
            assert!(err.to_string().contains(needle), "{text}: {err}");
        }
        let err = "100 steps".parse::<Span>().expect_err("ambiguous");
        for unit in ["updates", "microbatches", "examples", "tokens"] {
            assert!(err.to_string().contains(unit), "{err}");
        }
    }

    #[test]
    fn display_round_trips() {
        for text in [
            "500 updates",
            "2M tokens",
            "1 update",
            "1500 examples",
            "40 microbatches",
            "3k tokens",
            "1B tokens",
            "2500M tokens",
            "300B tokens",
            "4T tokens",
        ] {
            let span: Span = text.parse().expect(text);
            assert_eq!(span.to_string(), text);
            assert_eq!(span.to_string().parse::<Span>(), Ok(span));
        }
    }

    #[test]
    fn a_billion_displays_as_b_whichever_suffix_was_written() {
        for text in [
            "1B tokens",
            "1G tokens",
            "1000M tokens",
            "1_000_000_000 tokens",
        ] {
            let span: Span = text.parse().expect(text);
            assert_eq!(span.to_string(), "1B tokens", "{text}");
        }
        assert_eq!(
            Span::new(2_500_000_000, UnitKind::Example).to_string(),
            "2500M examples"
        );
        assert_eq!(
            Span::new(1_000_000_000_000, UnitKind::Token).to_string(),
            "1T tokens"
        );
    }

    #[test]
    fn toml_string_and_table_forms() {
        #[derive(Deserialize, Serialize)]
        struct Schedule {
            warmup: Span,
            total: Span,
        }
        let s: Schedule =
            toml::from_str("warmup = \"2M tokens\"\ntotal = { updates = 500 }").expect("valid");
        assert_eq!(s.warmup, Span::new(2_000_000, UnitKind::Token));
        assert_eq!(s.total, Span::new(500, UnitKind::Update));
        let text = toml::to_string(&s).expect("serialize");
        assert_eq!(text, "warmup = \"2M tokens\"\ntotal = \"500 updates\"\n");

        let err = toml::from_str::<Schedule>("warmup = 100\ntotal = \"1 update\"")
            .err()
            .expect("bare");
        assert!(
            err.to_string().contains("has no unit and is ambiguous"),
            "{err}"
        );
        let err = toml::from_str::<Schedule>("warmup = { steps = 1 }\ntotal = \"1 update\"")
            .err()
            .expect("steps key");
        assert!(err.to_string().contains("found `steps`"), "{err}");
        let err = toml::from_str::<Schedule>(
            "warmup = { updates = 1, tokens = 2 }\ntotal = \"1 update\"",
        )
        .err()
        .expect("two keys");
        assert!(err.to_string().contains("exactly one key"), "{err}");
    }

    #[cfg(feature = "schema")]
    #[test]
    fn schema_marks_the_unit_and_takes_both_forms() {
        let schema = schemars::schema_for!(crate::units::Updates);
        let value = schema.as_value();
        assert_eq!(value["x-accum-unit"], "update");
        assert_eq!(value["type"], serde_json::json!(["integer", "string"]));
        assert_eq!(value["minimum"], 0);
        let pattern = value["pattern"].as_str().expect("pattern");
        assert_eq!(
            pattern,
            r"^\s*[0-9][0-9_,]*(\.[0-9]+)?\s*[kKMGBT]?\s*(update|updates)\s*$"
        );
    }
}
