//! Reading a JSON Schema: where the plan roles, the batch ramp-up and spans
//! are (`x-accum-role`, `x-accum-unit = "span"`, `x-accum-span`), and what
//! the schema expects
//! at a place of the document (types, allowed values, known keys), so that
//! diagnostics can say it in words.

use accum_core::plan::Role;
use accum_core::{RampRole, SpanUse, UnitKind};
use serde_json::Value;

/// How deep `$ref`s and nesting are followed: a schema that refers to
/// itself must not loop.
pub(super) const MAX_SCHEMA_DEPTH: usize = 32;

/// Where the schema puts plan roles and spans.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SchemaMap {
    /// Each role with the path of its field.
    pub(crate) roles: Vec<(Role, Vec<String>)>,
    /// Paths of span fields.
    pub(crate) spans: Vec<Vec<String>>,
    /// Paths of typed counts (`Updates`, `Tokens`, …: `x-accum-unit` on a
    /// value that may be a string), with the unit each counts.
    pub(crate) counts: Vec<(Vec<String>, UnitKind)>,
    /// Each batch ramp-up field (`x-accum-role` `stages` or `ramp`) with its path.
    pub(crate) ramps: Vec<(RampRole, Vec<String>)>,
    /// Each length with a use (`x-accum-span`), its path, and the unit of a
    /// typed count (`x-accum-unit`), whose value may be a bare number.
    pub(crate) uses: Vec<(SpanUse, Vec<String>, Option<UnitKind>)>,
    /// Whether the data's lengths vary (`x-accum-variable-length` on the root).
    pub(crate) variable_length: bool,
    /// The path of every key the schema describes, for pointing a key
    /// written in the wrong table to its own.
    pub(crate) properties: Vec<Vec<String>>,
}

impl SchemaMap {
    /// Reads roles and spans from a schema (following `$ref`s into `$defs`).
    pub(crate) fn from_schema(schema: &Value) -> SchemaMap {
        let mut map = SchemaMap::default();
        walk(schema, schema, &mut Vec::new(), &mut map, 0);
        map.roles.sort();
        map.roles.dedup();
        map.spans.sort();
        map.spans.dedup();
        map.counts.sort_by(|a, b| a.0.cmp(&b.0));
        map.counts.dedup();
        map.ramps.sort();
        map.ramps.dedup();
        map.uses.sort_by(|a, b| a.1.cmp(&b.1));
        map.uses.dedup();
        map.properties.sort();
        map.properties.dedup();
        map.variable_length = schema.get("x-accum-variable-length") == Some(&Value::Bool(true));
        map
    }

    /// The path of a role's field.
    pub(crate) fn path_of(&self, role: Role) -> Option<&[String]> {
        self.roles
            .iter()
            .find(|(r, _)| *r == role)
            .map(|(_, p)| p.as_slice())
    }
}

fn walk(node: &Value, root: &Value, path: &mut Vec<String>, map: &mut SchemaMap, depth: usize) {
    if depth > MAX_SCHEMA_DEPTH {
        return;
    }
    let Some(object) = node.as_object() else {
        return;
    };
    let role = object.get("x-accum-role").and_then(Value::as_str);
    if let Some(role) = role.and_then(Role::from_key) {
        map.roles.push((role, path.clone()));
    }
    if let Some(ramp) = role.and_then(RampRole::from_key) {
        map.ramps.push((ramp, path.clone()));
    }
    if let Some(span_use) = object
        .get("x-accum-span")
        .and_then(Value::as_str)
        .and_then(SpanUse::from_key)
    {
        let unit = object
            .get("x-accum-unit")
            .and_then(Value::as_str)
            .and_then(|key| UnitKind::ALL.into_iter().find(|u| u.key() == key));
        map.uses.push((span_use, path.clone(), unit));
    }
    if object.get("x-accum-unit").and_then(Value::as_str) == Some("span") {
        map.spans.push(path.clone());
    }
    let takes_strings = match object.get("type") {
        Some(Value::String(t)) => t == "string",
        Some(Value::Array(types)) => types.iter().any(|t| t == "string"),
        _ => false,
    };
    if let Some(unit) = object
        .get("x-accum-unit")
        .and_then(Value::as_str)
        .and_then(|key| UnitKind::ALL.into_iter().find(|u| u.key() == key))
        && takes_strings
    {
        map.counts.push((path.clone(), unit));
    }
    if let Some(target) = object
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| super::schema::resolve(root, r))
    {
        walk(target, root, path, map, depth + 1);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(alternatives) = object.get(key).and_then(Value::as_array) {
            for alternative in alternatives {
                walk(alternative, root, path, map, depth + 1);
            }
        }
    }
    if let Some(properties) = object.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            path.push(name.clone());
            map.properties.push(path.clone());
            walk(property, root, path, map, depth + 1);
            path.pop();
        }
    }
}

/// The schemas `node` must match: itself, its `$ref` target and its
/// `anyOf`/`oneOf`/`allOf` alternatives.
pub(super) fn alternatives<'a>(
    node: &'a Value,
    root: &'a Value,
    out: &mut Vec<&'a Value>,
    depth: usize,
) {
    if depth > MAX_SCHEMA_DEPTH {
        return;
    }
    out.push(node);
    let Some(object) = node.as_object() else {
        return;
    };
    if let Some(target) = object
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| super::schema::resolve(root, r))
    {
        alternatives(target, root, out, depth + 1);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        for alternative in object
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            alternatives(alternative, root, out, depth + 1);
        }
    }
}

/// Whether `schema` declares `kind` among its types.
pub(super) fn allows(schema: &Value, kind: &str) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == kind,
        Some(Value::Array(types)) => types.iter().any(|t| t == kind),
        _ => false,
    }
}

/// The schemas that apply at `path` of an instance: the properties and
/// items on the way, with every alternative.
pub(super) fn schemas_at<'a>(root: &'a Value, path: &[String]) -> Vec<&'a Value> {
    let mut here = Vec::new();
    alternatives(root, root, &mut here, 0);
    for segment in path {
        let mut next = Vec::new();
        for schema in &here {
            let child = schema
                .get("properties")
                .and_then(|p| p.get(segment))
                .or_else(|| {
                    segment
                        .parse::<usize>()
                        .ok()
                        .and_then(|_| schema.get("items"))
                });
            if let Some(child) = child {
                alternatives(child, root, &mut next, 0);
            }
        }
        here = next;
    }
    here
}

/// What the schema accepts at one place, in words.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Expected {
    /// The allowed values, when the place is a choice (`const`, `enum`).
    pub(super) values: Vec<Value>,
    /// The allowed types, besides `null` (TOML has no null: absent is fine).
    pub(super) types: Vec<&'static str>,
    /// The keys of a table.
    pub(super) keys: Vec<String>,
    /// The variants written as a table with one key (serde's externally
    /// tagged struct, newtype and tuple variants), beside the `values`
    /// written as strings (its unit variants).
    pub(super) tagged: Vec<Tagged>,
}

/// An enum variant that a file writes as a table with one key: `mlp` in
/// `model = { mlp = { hidden = 512 } }`.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Tagged {
    /// The key, the variant's serialized name.
    pub(super) name: String,
    /// What the key holds.
    pub(super) holds: Holds,
}

/// What the key of a [`Tagged`] variant holds.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Holds {
    /// A table with these keys (a struct variant).
    Table(Vec<String>),
    /// An array of this many items (a tuple variant).
    Items(usize),
    /// One value (a newtype variant).
    Value,
}

impl Tagged {
    /// The variant of an alternative schema, when it is a table with
    /// exactly one key, required, and no other keys allowed: the form
    /// schemars gives an externally tagged variant with data.
    fn of(schema: &Value) -> Option<Tagged> {
        let properties = schema.get("properties")?.as_object()?;
        let required = schema.get("required")?.as_array()?;
        let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
        let (name, inner) = properties.iter().next()?;
        if properties.len() != 1 || required.len() != 1 || required[0] != *name || !closed {
            return None;
        }
        let holds = if let Some(keys) = inner.get("properties").and_then(Value::as_object) {
            Holds::Table(keys.keys().cloned().collect())
        } else if let Some(items) = inner.get("prefixItems").and_then(Value::as_array) {
            Holds::Items(items.len())
        } else {
            Holds::Value
        };
        Some(Tagged {
            name: name.clone(),
            holds,
        })
    }

    /// The variant in a sentence: `mlp { hidden }`, `pair [2 items]`,
    /// `embed (one value)`.
    pub(super) fn words(&self) -> String {
        let name = &self.name;
        match &self.holds {
            Holds::Table(keys) => format!("{name} {{ {} }}", keys.join(", ")),
            Holds::Items(n) => format!("{name} [{n} items]"),
            Holds::Value => format!("{name} (one value)"),
        }
    }
}

impl Expected {
    /// Reads what the schemas at one place expect.
    pub(super) fn of(schemas: &[&Value]) -> Expected {
        let mut expected = Expected::default();
        for schema in schemas {
            if let Some(value) = schema.get("const") {
                push_unique(&mut expected.values, value.clone());
            }
            for value in schema
                .get("enum")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                push_unique(&mut expected.values, value.clone());
            }
            if let Some(tagged) = Tagged::of(schema)
                && !expected.tagged.contains(&tagged)
            {
                expected.tagged.push(tagged);
            }
            for kind in TYPES {
                if allows(schema, kind) && !expected.types.contains(&kind) {
                    expected.types.push(kind);
                }
            }
            for key in schema
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flat_map(|p| p.keys())
            {
                if !expected.keys.contains(key) {
                    expected.keys.push(key.clone());
                }
            }
        }
        expected
    }

    /// The allowed values as written in a file: `per_token, per_example, sum`.
    pub(super) fn values_words(&self) -> Vec<String> {
        self.values.iter().map(value_words).collect()
    }

    /// The allowed types in words: `an integer or a table`.
    pub(super) fn types_words(&self) -> Vec<String> {
        // "integer" is also a "number": say the wider one only.
        let number = self.types.contains(&"number");
        self.types
            .iter()
            .filter(|t| !(number && **t == "integer"))
            .map(|t| type_words(t).to_owned())
            .collect()
    }
}

const TYPES: [&str; 6] = ["integer", "number", "string", "boolean", "object", "array"];

fn push_unique(values: &mut Vec<Value>, value: Value) {
    if !values.contains(&value) {
        values.push(value);
    }
}

/// A JSON Schema type in words, as a config file has it.
pub(super) fn type_words(kind: &str) -> &'static str {
    match kind {
        "integer" => "an integer",
        "number" => "a number",
        "string" => "a string",
        "boolean" => "true or false",
        "object" => "a table",
        "array" => "an array",
        _ => "absent",
    }
}

/// A value as a config file writes it: strings bare (`per_token`), others
/// as JSON.
pub(super) fn value_words(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A found value in words: `string "per_tokens"`, `3`, `a table`.
pub(super) fn describe(value: &Value) -> String {
    match value {
        Value::Null => "nothing".into(),
        Value::Bool(b) => format!("{b}"),
        Value::Number(n) => n.to_string(),
        Value::String(s) => {
            let shown: String = s.chars().take(40).collect();
            if shown.len() < s.len() {
                format!("string \"{shown}…\"")
            } else {
                format!("string \"{shown}\"")
            }
        }
        Value::Array(items) if items.is_empty() => "an empty array".into(),
        Value::Array(items) if items.len() == 1 => "an array of 1 item".into(),
        Value::Array(items) => format!("an array of {} items", items.len()),
        Value::Object(_) => "a table".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Value {
        serde_json::json!({
            "type": "object",
            "properties": {
                "loss": { "$ref": "#/$defs/Loss" },
                "parallel": { "anyOf": [{ "$ref": "#/$defs/Parallel" }, { "type": "null" }] },
                "list": { "type": "array", "items": { "enum": ["a", "b"] } }
            },
            "$defs": {
                "Loss": { "type": "object", "properties": { "normalization": { "$ref": "#/$defs/Norm" } } },
                "Norm": { "oneOf": [
                    { "const": "per_token", "type": "string" },
                    { "const": "sum", "type": "string" }
                ] },
                "Parallel": { "type": "object", "properties": { "world_size": { "type": "integer" } } }
            }
        })
    }

    #[test]
    fn ramp_ups_and_uses_are_found_by_their_marks() {
        let schema = serde_json::json!({
            "x-accum-variable-length": true,
            "properties": {
                "batch": { "$ref": "#/$defs/Batch" },
                "warmup": { "$ref": "#/$defs/Span", "x-accum-span": "warmup" },
                "steps": { "type": "integer", "x-accum-unit": "update", "x-accum-span": "total" }
            },
            "$defs": {
                "Batch": { "properties": {
                    "stages": { "type": ["array", "null"], "x-accum-role": "stages" },
                    "ramp": { "anyOf": [{ "type": "object" }, { "type": "null" }], "x-accum-role": "ramp" }
                } },
                "Span": { "x-accum-unit": "span" }
            }
        });
        let map = SchemaMap::from_schema(&schema);
        let path = |p: &[&str]| p.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            map.ramps,
            vec![
                (RampRole::Stages, path(&["batch", "stages"])),
                (RampRole::Ramp, path(&["batch", "ramp"]))
            ]
        );
        assert_eq!(
            map.uses,
            vec![
                (SpanUse::Total, path(&["steps"]), Some(UnitKind::Update)),
                (SpanUse::Warmup, path(&["warmup"]), None)
            ]
        );
        assert!(map.variable_length);
        assert!(map.roles.is_empty());
    }

    #[test]
    fn expectations_follow_refs_alternatives_and_items() {
        let schema = schema();
        let at = |path: &[&str]| {
            let path: Vec<String> = path.iter().map(|s| (*s).to_owned()).collect();
            Expected::of(&schemas_at(&schema, &path))
        };
        let norm = at(&["loss", "normalization"]);
        assert_eq!(norm.values_words(), vec!["per_token", "sum"]);
        assert_eq!(norm.types_words(), vec!["a string"]);
        let parallel = at(&["parallel"]);
        assert_eq!(parallel.types_words(), vec!["a table"]);
        assert_eq!(parallel.keys, vec!["world_size"]);
        assert_eq!(at(&["list", "0"]).values_words(), vec!["a", "b"]);
        assert_eq!(at(&["nowhere"]), Expected::default());
    }
}
