//! The built-in schema as editors and third-party validators read it best.
//!
//! schemars writes a documented enum as `oneOf` of `const`s, one per
//! variant with its description. Validators then explain a typo per
//! alternative: check-jsonschema says "'cosin' is not valid under any of
//! the given schemas", taplo gives one error per alternative and keyword.
//! As one `enum`, a typo is one clean message everywhere; the variants'
//! descriptions are kept beside it, where editors show them:
//! `enumDescriptions` (VS Code's JSON and YAML language services) and
//! `x-taplo.docs.enumValues` (taplo, Even Better TOML).

use accum_core::plan::Role;
use serde_json::{Map, Value};

/// How deep a schema is walked; schemars' schemas are a few levels deep.
const MAX_DEPTH: usize = 64;

/// A factor that `global_batch` solves (accumulation, micro-batch) is not
/// `required` where the global batch can be given: accum solves a left-out
/// one exactly (accum::plan::missing), so editors and validators must not
/// call it missing. A file with neither is the plan rules' finding.
pub(crate) fn solvable_factors_optional(schema: &mut Value) {
    optional(schema, 0);
}

fn optional(node: &mut Value, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    match node {
        Value::Object(object) => {
            let role_of = |name: &str, object: &Map<String, Value>| {
                object
                    .get("properties")
                    .and_then(|p| p.get(name))
                    .and_then(|p| p.get("x-accum-role"))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            };
            let has_global_batch = object
                .get("properties")
                .and_then(Value::as_object)
                .is_some_and(|p| {
                    p.values().any(|v| {
                        v.get("x-accum-role")
                            .and_then(Value::as_str)
                            .and_then(Role::from_key)
                            == Some(Role::GlobalBatch)
                    })
                });
            if has_global_batch {
                let names: Vec<String> = object
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| {
                        r.iter()
                            .filter_map(|v| v.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default();
                let keep: Vec<Value> = names
                    .iter()
                    .filter(|name| {
                        !matches!(
                            role_of(name, object).as_deref().and_then(Role::from_key),
                            Some(Role::Accumulation | Role::MicroBatch)
                        )
                    })
                    .map(|name| Value::from(name.as_str()))
                    .collect();
                if keep.is_empty() {
                    object.remove("required");
                } else if keep.len() != names.len() {
                    object.insert("required".to_owned(), Value::Array(keep));
                }
            }
            for value in object.values_mut() {
                optional(value, depth + 1);
            }
        }
        Value::Array(items) => {
            for item in items {
                optional(item, depth + 1);
            }
        }
        _ => {}
    }
}

/// Rewrites every `oneOf`/`anyOf` whose alternatives are all string
/// `const`s (each with at most a description) into one `enum`, the
/// descriptions kept for editors. Other alternatives are left as they are.
pub(crate) fn enums_for_editors(schema: &mut Value) {
    rewrite(schema, 0);
}

fn rewrite(node: &mut Value, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    match node {
        Value::Object(object) => {
            for key in ["oneOf", "anyOf"] {
                if let Some(choices) = object.get(key).and_then(string_consts) {
                    object.remove(key);
                    let (values, descriptions): (Vec<Value>, Vec<Value>) =
                        choices.into_iter().unzip();
                    object.insert("type".to_owned(), Value::from("string"));
                    object.insert("enum".to_owned(), Value::Array(values));
                    if descriptions
                        .iter()
                        .any(|d| !d.as_str().is_some_and(str::is_empty))
                    {
                        object.insert(
                            "enumDescriptions".to_owned(),
                            Value::Array(descriptions.clone()),
                        );
                        let mut docs = Map::new();
                        docs.insert("enumValues".to_owned(), Value::Array(descriptions));
                        let mut taplo = Map::new();
                        taplo.insert("docs".to_owned(), Value::Object(docs));
                        object.insert("x-taplo".to_owned(), Value::Object(taplo));
                    }
                    break;
                }
            }
            for value in object.values_mut() {
                rewrite(value, depth + 1);
            }
        }
        Value::Array(items) => {
            for item in items {
                rewrite(item, depth + 1);
            }
        }
        _ => {}
    }
}

/// The alternatives as (value, description) when every one is a string
/// `const` with nothing else than a description and `type: string`.
fn string_consts(alternatives: &Value) -> Option<Vec<(Value, Value)>> {
    let alternatives = alternatives.as_array()?;
    if alternatives.is_empty() {
        return None;
    }
    alternatives
        .iter()
        .map(|alternative| {
            let object = alternative.as_object()?;
            let value = object.get("const").filter(|v| v.is_string())?;
            let plain = object.iter().all(|(key, v)| match key.as_str() {
                "const" | "description" => true,
                "type" => v == "string",
                _ => false,
            });
            plain.then(|| {
                let description = object.get("description").cloned();
                (
                    value.clone(),
                    description.unwrap_or_else(|| Value::from("")),
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factors_the_global_batch_solves_are_not_required() {
        let mut schema = serde_json::json!({
            "$defs": {
                "Batch": {
                    "required": ["micro_batch", "accumulation", "name"],
                    "properties": {
                        "micro_batch": { "x-accum-role": "micro_batch" },
                        "accumulation": { "x-accum-role": "accumulation" },
                        "global_batch": { "x-accum-role": "global_batch" },
                        "name": { "type": "string" }
                    }
                },
                "NoGlobal": {
                    "required": ["accumulation"],
                    "properties": { "accumulation": { "x-accum-role": "accumulation" } }
                }
            }
        });
        solvable_factors_optional(&mut schema);
        assert_eq!(
            schema["$defs"]["Batch"]["required"],
            serde_json::json!(["name"])
        );
        assert_eq!(
            schema["$defs"]["NoGlobal"]["required"],
            serde_json::json!(["accumulation"])
        );
    }

    #[test]
    fn const_alternatives_become_one_enum_with_their_descriptions() {
        let mut schema = serde_json::json!({
            "$defs": {
                "Norm": {
                    "description": "How the loss is normalized.",
                    "oneOf": [
                        { "const": "per_token", "description": "Per token.", "type": "string" },
                        { "const": "sum", "description": "Summed.", "type": "string" }
                    ]
                },
                "Plain": { "oneOf": [{ "const": "a" }, { "const": "b" }] },
                "Mixed": { "oneOf": [{ "const": "a" }, { "type": "integer" }] },
                "Numbers": { "anyOf": [{ "const": 1 }, { "const": 2 }] }
            }
        });
        enums_for_editors(&mut schema);
        assert_eq!(
            schema["$defs"]["Norm"],
            serde_json::json!({
                "description": "How the loss is normalized.",
                "type": "string",
                "enum": ["per_token", "sum"],
                "enumDescriptions": ["Per token.", "Summed."],
                "x-taplo": { "docs": { "enumValues": ["Per token.", "Summed."] } }
            })
        );
        assert_eq!(
            schema["$defs"]["Plain"],
            serde_json::json!({ "type": "string", "enum": ["a", "b"] })
        );
        // What is not a set of strings stays as it was.
        assert!(schema["$defs"]["Mixed"].get("oneOf").is_some());
        assert!(schema["$defs"]["Numbers"].get("anyOf").is_some());
    }
}
