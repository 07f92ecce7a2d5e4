//! accum's own check of a value against a JSON Schema: the subset of JSON
//! Schema 2020-12 that schemars writes (`subset.rs` reads a schema and
//! refuses what is outside it), each problem as data ([`SchemaError`]) for
//! `structure.rs` to say in the project's words.
//!
//! The check is bounded: `$ref`s and alternatives nest at most
//! [`MAX_SCHEMA_DEPTH`] deep at one place of a value, and the work is at
//! most [`STEPS_PER_VALUE`] schema applications per value of the file, so
//! that alternatives nested in alternatives cannot take exponential time.

mod number;
mod pattern;
mod subset;

use std::collections::HashSet;

use serde_json::{Map, Number, Value};

use super::map::MAX_SCHEMA_DEPTH;
use subset::{Patterns, TYPES, count};

pub(crate) use subset::resolve;

/// Schema applications allowed per value of the checked file (besides a
/// fixed allowance): a schema's alternatives try each value a few times;
/// a schema whose alternatives nest in each other at every level tries it
/// exponentially often, and is stopped.
const STEPS_PER_VALUE: usize = 64;

/// Deepest recursion of one check: the file's nesting (64 levels at most)
/// times a few `$ref`s and alternatives at each.
const MAX_RECURSION: usize = 512;

/// A schema read and found within the subset, ready to check values.
#[derive(Debug)]
pub(crate) struct Checker<'s> {
    root: &'s Value,
    patterns: Patterns<'s>,
}

/// One problem of a value: where it is, the value, and what it breaks.
#[derive(Debug)]
pub(crate) struct SchemaError<'s, 'v> {
    /// The path of keys and indices to the value.
    pub(crate) path: Vec<String>,
    /// The value at `path`.
    pub(crate) instance: &'v Value,
    /// What the value breaks.
    pub(crate) kind: ErrorKind<'s, 'v>,
}

/// What a value breaks, with what the keyword asked for.
#[derive(Debug)]
pub(crate) enum ErrorKind<'s, 'v> {
    /// `type`: the types the schema lists, in JSON Schema's order (null,
    /// boolean, integer, number, string, array, object).
    Type { expected: Vec<&'static str> },
    /// `const`.
    Const { expected: &'s Value },
    /// `enum`.
    Enum { options: &'s [Value] },
    /// `minimum`.
    Minimum { limit: &'s Number },
    /// `maximum`.
    Maximum { limit: &'s Number },
    /// `exclusiveMinimum`.
    ExclusiveMinimum { limit: &'s Number },
    /// `exclusiveMaximum`.
    ExclusiveMaximum { limit: &'s Number },
    /// `multipleOf`.
    MultipleOf { divisor: f64 },
    /// `minLength`, in characters.
    MinLength { limit: u64 },
    /// `maxLength`, in characters.
    MaxLength { limit: u64 },
    /// `minItems`.
    MinItems { limit: u64 },
    /// `maxItems`.
    MaxItems { limit: u64 },
    /// `minProperties`.
    MinProperties { limit: u64 },
    /// `maxProperties`.
    MaxProperties { limit: u64 },
    /// `required`: one missing key.
    Required { property: &'s str },
    /// `pattern`.
    Pattern { pattern: &'s str },
    /// `uniqueItems`.
    UniqueItems,
    /// `additionalProperties: false` or `unevaluatedProperties: false`:
    /// the keys the schema does not know, in the map's order.
    UnexpectedKeys { keys: Vec<&'v str> },
    /// `anyOf` with no alternative that holds: each alternative's errors.
    AnyOf {
        alternatives: Vec<Vec<SchemaError<'s, 'v>>>,
    },
    /// `oneOf` with no alternative that holds: each alternative's errors.
    OneOfNone {
        alternatives: Vec<Vec<SchemaError<'s, 'v>>>,
    },
    /// `oneOf` with more than one alternative that holds.
    OneOfMany,
    /// `not`: the value matches the schema it must not.
    Not,
    /// The schema `false`: no value goes here.
    False,
}

impl<'s> Checker<'s> {
    /// Reads a schema; the error names a keyword outside the subset, or a
    /// malformed one, with its JSON pointer.
    pub(crate) fn new(root: &'s Value) -> Result<Checker<'s>, String> {
        Ok(Checker {
            root,
            patterns: subset::read(root)?,
        })
    }

    /// Every problem of `instance`, in the order of the schema's keywords
    /// (JSON Schema's: a value's own checks, then its members, then the
    /// applicators). The error says why a check was stopped.
    pub(crate) fn errors<'v>(
        &self,
        instance: &'v Value,
    ) -> Result<Vec<SchemaError<'s, 'v>>, String> {
        let mut run = Run {
            checker: self,
            steps: 0,
            limit: values(instance)
                .saturating_mul(STEPS_PER_VALUE)
                .saturating_add(1 << 16),
        };
        let mut errors = Vec::new();
        run.apply(
            self.root,
            instance,
            &Place::ROOT,
            Depth::default(),
            &mut errors,
            false,
        )?;
        Ok(errors)
    }

    /// Whether `instance` keeps to the schema.
    #[cfg(any(test, feature = "harness"))]
    pub(crate) fn is_valid(&self, instance: &Value) -> Result<bool, String> {
        self.errors(instance).map(|errors| errors.is_empty())
    }
}

/// How many values `instance` holds, itself included.
fn values(instance: &Value) -> usize {
    let mut count = 0usize;
    let mut stack = vec![instance];
    while let Some(value) = stack.pop() {
        count += 1;
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(members) => stack.extend(members.values()),
            _ => {}
        }
    }
    count
}

/// A place in the checked value, as the check descends: made into a path
/// only for an error.
struct Place<'p, 'v> {
    up: Option<&'p Place<'p, 'v>>,
    step: Step<'v>,
}

enum Step<'v> {
    Root,
    Key(&'v str),
    Index(usize),
}

impl<'p, 'v> Place<'p, 'v> {
    const ROOT: Place<'static, 'static> = Place {
        up: None,
        step: Step::Root,
    };

    fn key(&'p self, key: &'v str) -> Place<'p, 'v> {
        Place {
            up: Some(self),
            step: Step::Key(key),
        }
    }

    fn index(&'p self, index: usize) -> Place<'p, 'v> {
        Place {
            up: Some(self),
            step: Step::Index(index),
        }
    }

    fn segments(&self) -> Vec<String> {
        let mut segments = Vec::new();
        let mut place = Some(self);
        while let Some(here) = place {
            match here.step {
                Step::Root => {}
                Step::Key(key) => segments.push(key.to_owned()),
                Step::Index(index) => segments.push(index.to_string()),
            }
            place = here.up;
        }
        segments.reverse();
        segments
    }
}

/// How deep a check is: in all, and in `$ref`s and alternatives at the
/// current place of the value.
#[derive(Clone, Copy, Default)]
struct Depth {
    all: usize,
    in_place: usize,
}

impl Depth {
    fn below(self) -> Depth {
        Depth {
            all: self.all + 1,
            in_place: 0,
        }
    }

    fn beside(self) -> Depth {
        Depth {
            all: self.all + 1,
            in_place: self.in_place + 1,
        }
    }
}

/// The keys of an object that a schema's keywords looked at: what
/// `unevaluatedProperties` leaves out.
#[derive(Default)]
struct Evaluated<'v> {
    all: bool,
    keys: HashSet<&'v str>,
}

impl<'v> Evaluated<'v> {
    fn merge(&mut self, other: Evaluated<'v>) {
        self.all |= other.all;
        self.keys.extend(other.keys);
    }

    fn contains(&self, key: &str) -> bool {
        self.all || self.keys.contains(key)
    }
}

/// One check of a value: the schema, and the work done so far.
struct Run<'c, 's> {
    checker: &'c Checker<'s>,
    steps: usize,
    limit: usize,
}

impl<'s> Run<'_, 's> {
    /// Applies `schema` to `value`, pushing its problems onto `errors`.
    /// With `want`, returns the keys of an object that were evaluated.
    fn apply<'v>(
        &mut self,
        schema: &'s Value,
        value: &'v Value,
        place: &Place<'_, 'v>,
        depth: Depth,
        errors: &mut Vec<SchemaError<'s, 'v>>,
        want: bool,
    ) -> Result<Evaluated<'v>, String> {
        self.steps += 1;
        if self.steps > self.limit {
            return Err(format!(
                "the schema's alternatives (`anyOf`, `oneOf`) nest so deeply that checking the file would take more than {} steps; give the schema the configuration type's own binary writes (`schema -o FILE`)",
                self.limit
            ));
        }
        if depth.in_place > MAX_SCHEMA_DEPTH || depth.all > MAX_RECURSION {
            return Err(format!(
                "the schema's `$ref`s and alternatives nest deeper than {MAX_SCHEMA_DEPTH} at `{}` of the file: a `$ref` that leads back to itself without a value between is a loop",
                place.segments().join(".")
            ));
        }
        let object = match schema {
            Value::Object(object) => object,
            Value::Bool(false) => {
                errors.push(error(place, value, ErrorKind::False));
                return Ok(Evaluated::default());
            }
            // `true`, or what the subset's reading refused.
            _ => return Ok(Evaluated::default()),
        };
        let need = want || object.contains_key("unevaluatedProperties");
        let mut evaluated = Evaluated::default();
        own_checks(object, value, place, errors);
        let required = object.get("required").and_then(Value::as_array);
        let missing = |errors: &mut Vec<SchemaError<'s, 'v>>| {
            if let (Some(names), Value::Object(members)) = (required, value) {
                for name in names.iter().filter_map(Value::as_str) {
                    if !members.contains_key(name) {
                        errors.push(error(place, value, ErrorKind::Required { property: name }));
                    }
                }
            }
        };
        // One required key beside closed properties is checked with them,
        // after them; more keys are checked before them (the validators
        // editors use report in this order, and findings at one place keep it).
        let required_after = required.is_some_and(|names| names.len() == 1)
            && object.get("additionalProperties") == Some(&Value::Bool(false))
            && object.get("properties").is_some_and(Value::is_object)
            && !object.contains_key("patternProperties");
        if !required_after {
            missing(errors);
        }
        if let Some(Value::String(pattern)) = object.get("pattern")
            && let Value::String(text) = value
            && let Some(regex) = self.checker.patterns.get(pattern)
            && !regex.is_match(text)
        {
            errors.push(error(place, value, ErrorKind::Pattern { pattern }));
        }
        if object.get("uniqueItems") == Some(&Value::Bool(true))
            && let Value::Array(items) = value
            && !unique(items)
        {
            errors.push(error(place, value, ErrorKind::UniqueItems));
        }
        if let Value::Object(members) = value {
            self.members(
                object,
                members,
                value,
                place,
                depth,
                errors,
                &mut evaluated,
                need,
            )?;
        }
        if required_after {
            missing(errors);
        }
        if let Value::Array(items) = value {
            let prefix = object.get("prefixItems").and_then(Value::as_array);
            let rest = object.get("items");
            for (i, item) in items.iter().enumerate() {
                let item_schema = prefix.and_then(|p| p.get(i)).or(rest);
                if let Some(item_schema) = item_schema {
                    self.apply(
                        item_schema,
                        item,
                        &place.index(i),
                        depth.below(),
                        errors,
                        false,
                    )?;
                }
            }
        }
        for schema in object
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let before = errors.len();
            let found = self.apply(schema, value, place, depth.beside(), errors, need)?;
            if errors.len() == before {
                evaluated.merge(found);
            }
        }
        if let Some(schemas) = object.get("anyOf").and_then(Value::as_array) {
            let (alternatives, valid) = self.alternatives(schemas, value, place, depth, need)?;
            if valid.is_empty() {
                errors.push(error(place, value, ErrorKind::AnyOf { alternatives }));
            }
            valid.into_iter().for_each(|found| evaluated.merge(found));
        }
        if let Some(schemas) = object.get("oneOf").and_then(Value::as_array) {
            let (alternatives, valid) = self.alternatives(schemas, value, place, depth, need)?;
            match valid.len() {
                0 => errors.push(error(place, value, ErrorKind::OneOfNone { alternatives })),
                1 => valid.into_iter().for_each(|found| evaluated.merge(found)),
                _ => errors.push(error(place, value, ErrorKind::OneOfMany)),
            }
        }
        if let Some(schema) = object.get("not") {
            let mut inner = Vec::new();
            self.apply(schema, value, place, depth.beside(), &mut inner, false)?;
            if inner.is_empty() {
                errors.push(error(place, value, ErrorKind::Not));
            }
        }
        // `$ref` is reported last, but `unevaluatedProperties` sees what it evaluated.
        let mut referred = Vec::new();
        if let Some(target) = object
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| resolve(self.checker.root, r))
        {
            let found = self.apply(target, value, place, depth.beside(), &mut referred, need)?;
            if referred.is_empty() {
                evaluated.merge(found);
            }
        }
        if let (Some(rest), Value::Object(members)) = (object.get("unevaluatedProperties"), value) {
            let mut unexpected = Vec::new();
            for (key, member) in members {
                if evaluated.contains(key) {
                    continue;
                }
                if rest == &Value::Bool(false) {
                    unexpected.push(key.as_str());
                } else {
                    self.apply(rest, member, &place.key(key), depth.below(), errors, false)?;
                }
            }
            if !unexpected.is_empty() {
                errors.push(error(
                    place,
                    value,
                    ErrorKind::UnexpectedKeys { keys: unexpected },
                ));
            }
            evaluated.all = true;
        }
        errors.extend(referred);
        Ok(evaluated)
    }

    /// `properties`, `patternProperties` and `additionalProperties`: each
    /// member's schemas, then the keys no schema knows.
    #[allow(clippy::too_many_arguments)]
    fn members<'v>(
        &mut self,
        object: &'s Map<String, Value>,
        members: &'v Map<String, Value>,
        value: &'v Value,
        place: &Place<'_, 'v>,
        depth: Depth,
        errors: &mut Vec<SchemaError<'s, 'v>>,
        evaluated: &mut Evaluated<'v>,
        need: bool,
    ) -> Result<(), String> {
        let properties = object.get("properties").and_then(Value::as_object);
        let patterns: Vec<(&regex_lite::Regex, &'s Value)> = object
            .get("patternProperties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter_map(|(pattern, schema)| {
                self.checker
                    .patterns
                    .get(pattern)
                    .map(|regex| (regex, schema))
            })
            .collect();
        let additional = object.get("additionalProperties");
        if properties.is_none() && patterns.is_empty() && additional.is_none() {
            return Ok(());
        }
        let mut unexpected = Vec::new();
        for (key, member) in members {
            // The key's own property, then every pattern it matches.
            let schemas = properties.and_then(|p| p.get(key)).into_iter().chain(
                patterns
                    .iter()
                    .filter(|(regex, _)| regex.is_match(key))
                    .map(|(_, schema)| *schema),
            );
            let mut known = false;
            for schema in schemas {
                known = true;
                self.apply(
                    schema,
                    member,
                    &place.key(key),
                    depth.below(),
                    errors,
                    false,
                )?;
            }
            if known {
                if need {
                    evaluated.keys.insert(key);
                }
                continue;
            }
            match additional {
                Some(Value::Bool(false)) => unexpected.push(key.as_str()),
                Some(schema) => {
                    self.apply(
                        schema,
                        member,
                        &place.key(key),
                        depth.below(),
                        errors,
                        false,
                    )?;
                }
                None => {}
            }
        }
        if additional.is_some() {
            evaluated.all = true;
        }
        if !unexpected.is_empty() {
            errors.push(error(
                place,
                value,
                ErrorKind::UnexpectedKeys { keys: unexpected },
            ));
        }
        Ok(())
    }

    /// Each alternative's errors, and what the alternatives that hold evaluated.
    #[allow(clippy::type_complexity)]
    fn alternatives<'v>(
        &mut self,
        schemas: &'s [Value],
        value: &'v Value,
        place: &Place<'_, 'v>,
        depth: Depth,
        need: bool,
    ) -> Result<(Vec<Vec<SchemaError<'s, 'v>>>, Vec<Evaluated<'v>>), String> {
        let mut alternatives = Vec::with_capacity(schemas.len());
        let mut valid = Vec::new();
        for schema in schemas {
            let mut inner = Vec::new();
            let found = self.apply(schema, value, place, depth.beside(), &mut inner, need)?;
            if inner.is_empty() {
                valid.push(found);
            }
            alternatives.push(inner);
        }
        Ok((alternatives, valid))
    }
}

fn error<'s, 'v>(
    place: &Place<'_, 'v>,
    value: &'v Value,
    kind: ErrorKind<'s, 'v>,
) -> SchemaError<'s, 'v> {
    SchemaError {
        path: place.segments(),
        instance: value,
        kind,
    }
}

/// The keywords about the value itself: its type, its value, its bounds.
fn own_checks<'s, 'v>(
    object: &'s Map<String, Value>,
    value: &'v Value,
    place: &Place<'_, 'v>,
    errors: &mut Vec<SchemaError<'s, 'v>>,
) {
    if let Some(types) = object.get("type")
        && !has_type(types, value)
    {
        let listed = |name: &str| match types {
            Value::String(t) => t == name,
            Value::Array(ts) => ts.iter().any(|t| t == name),
            _ => false,
        };
        let expected = TYPES.into_iter().filter(|t| listed(t)).collect();
        errors.push(error(place, value, ErrorKind::Type { expected }));
    }
    if let Some(expected) = object.get("const")
        && !number::equal(expected, value)
    {
        errors.push(error(place, value, ErrorKind::Const { expected }));
    }
    if let Some(Value::Array(options)) = object.get("enum")
        && !options.iter().any(|option| number::equal(option, value))
    {
        errors.push(error(place, value, ErrorKind::Enum { options }));
    }
    if let Value::Number(n) = value {
        use std::cmp::Ordering::{Greater, Less};
        let bound = |keyword: &str| match object.get(keyword) {
            Some(Value::Number(limit)) => number::compare(n, limit).map(|order| (limit, order)),
            _ => None,
        };
        if let Some((limit, Less)) = bound("minimum") {
            errors.push(error(place, value, ErrorKind::Minimum { limit }));
        }
        if let Some((limit, Greater)) = bound("maximum") {
            errors.push(error(place, value, ErrorKind::Maximum { limit }));
        }
        if let Some((limit, order)) = bound("exclusiveMinimum")
            && order != Greater
        {
            errors.push(error(place, value, ErrorKind::ExclusiveMinimum { limit }));
        }
        if let Some((limit, order)) = bound("exclusiveMaximum")
            && order != Less
        {
            errors.push(error(place, value, ErrorKind::ExclusiveMaximum { limit }));
        }
        if let Some(divisor) = object.get("multipleOf").and_then(Value::as_f64)
            && !number::is_multiple_of(n, divisor)
        {
            errors.push(error(place, value, ErrorKind::MultipleOf { divisor }));
        }
    }
    let limit = |keyword: &str| object.get(keyword).and_then(count);
    let (size, min, max) = match value {
        Value::String(text) => (text.chars().count(), "minLength", "maxLength"),
        Value::Array(items) => (items.len(), "minItems", "maxItems"),
        Value::Object(members) => (members.len(), "minProperties", "maxProperties"),
        _ => return,
    };
    let size = u64::try_from(size).unwrap_or(u64::MAX);
    if let Some(limit) = limit(min)
        && size < limit
    {
        let kind = match value {
            Value::String(_) => ErrorKind::MinLength { limit },
            Value::Array(_) => ErrorKind::MinItems { limit },
            _ => ErrorKind::MinProperties { limit },
        };
        errors.push(error(place, value, kind));
    }
    if let Some(limit) = limit(max)
        && size > limit
    {
        let kind = match value {
            Value::String(_) => ErrorKind::MaxLength { limit },
            Value::Array(_) => ErrorKind::MaxItems { limit },
            _ => ErrorKind::MaxProperties { limit },
        };
        errors.push(error(place, value, kind));
    }
}

/// Whether `value` has one of the types `types` names (`integer` takes
/// `8.0`).
fn has_type(types: &Value, value: &Value) -> bool {
    let is = |name: &str| match (name, value) {
        ("null", Value::Null)
        | ("boolean", Value::Bool(_))
        | ("number", Value::Number(_))
        | ("string", Value::String(_))
        | ("array", Value::Array(_))
        | ("object", Value::Object(_)) => true,
        ("integer", Value::Number(n)) => number::is_integer(n),
        _ => false,
    };
    match types {
        Value::String(name) => is(name),
        Value::Array(names) => names.iter().filter_map(Value::as_str).any(is),
        _ => true,
    }
}

/// Whether no two items are equal, in one pass over their canonical texts.
fn unique(items: &[Value]) -> bool {
    let mut seen = HashSet::with_capacity(items.len());
    items.iter().all(|item| {
        let mut key = String::new();
        number::canonical(item, &mut key);
        seen.insert(key)
    })
}

#[cfg(test)]
mod tests;
