//! The subset of JSON Schema 2020-12 that accum checks: what schemars 1.x
//! writes for a configuration type (`accum schema`, a derived type's
//! `schema` command), read once before any file is checked. A keyword of
//! the standard outside the subset is an error that names it and its
//! place, never a silent pass; a keyword outside the standard (`x-…`,
//! editors' `enumDescriptions`) is an annotation, as the standard says.

use std::collections::HashMap;

use regex_lite::Regex;
use serde_json::{Map, Value};

use super::pattern;

/// The keywords that check or apply to a value.
const CHECKED: [&str; 28] = [
    "type",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "required",
    "properties",
    "patternProperties",
    "additionalProperties",
    "unevaluatedProperties",
    "items",
    "prefixItems",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "$ref",
];

/// Keywords of the standard that say something about a value without
/// checking it (`format` is an annotation in 2020-12, and so in the
/// validators editors use), or that hold schemas only for `$ref`.
const ANNOTATIONS: [&str; 17] = [
    "$schema",
    "$id",
    "$comment",
    "$anchor",
    "$defs",
    "definitions",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "format",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
];

/// Keywords of JSON Schema (2020-12 and the drafts before it) that accum
/// does not check: a schema that uses one is refused.
const UNCHECKED: [&str; 17] = [
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "propertyNames",
    "contains",
    "minContains",
    "maxContains",
    "unevaluatedItems",
    "additionalItems",
    "$dynamicRef",
    "$dynamicAnchor",
    "$recursiveRef",
    "$recursiveAnchor",
    "$vocabulary",
];

/// The dialect accum checks, as `$schema` names it.
const DIALECT: &str = "json-schema.org/draft/2020-12/schema";

/// The types JSON Schema names.
pub(super) const TYPES: [&str; 7] = [
    "null", "boolean", "integer", "number", "string", "array", "object",
];

/// A schema read and found within the subset: its patterns compiled.
#[derive(Debug, Default)]
pub(super) struct Patterns<'s> {
    compiled: HashMap<&'s str, Regex>,
}

impl Patterns<'_> {
    /// The compiled form of a pattern the schema holds.
    pub(super) fn get(&self, pattern: &str) -> Option<&Regex> {
        self.compiled.get(pattern)
    }
}

/// Reads a whole schema document: every schema in it, `$defs` included,
/// must keep to the subset. The error names the keyword and the JSON
/// pointer of its place.
pub(super) fn read(root: &Value) -> Result<Patterns<'_>, String> {
    let mut reader = Reader {
        root,
        patterns: Patterns::default(),
    };
    reader.schema(root, &mut String::new())?;
    Ok(reader.patterns)
}

struct Reader<'s> {
    root: &'s Value,
    patterns: Patterns<'s>,
}

/// The error for a keyword whose value is not what 2020-12 allows.
fn malformed(pointer: &str) -> String {
    format!(
        "the schema is not a valid JSON Schema (2020-12): the value at `{pointer}` breaks the meta-schema"
    )
}

/// A JSON pointer one step further (`~` and `/` escaped).
fn push(pointer: &mut String, step: &str) -> usize {
    let len = pointer.len();
    pointer.push('/');
    pointer.push_str(&step.replace('~', "~0").replace('/', "~1"));
    len
}

impl<'s> Reader<'s> {
    fn schema(&mut self, node: &'s Value, pointer: &mut String) -> Result<(), String> {
        let object = match node {
            Value::Bool(_) => return Ok(()),
            Value::Object(object) => object,
            _ => return Err(malformed(pointer)),
        };
        for (keyword, value) in object {
            let len = push(pointer, keyword);
            self.keyword(object, keyword, value, pointer)?;
            pointer.truncate(len);
        }
        Ok(())
    }

    fn keyword(
        &mut self,
        object: &'s Map<String, Value>,
        keyword: &str,
        value: &'s Value,
        pointer: &mut String,
    ) -> Result<(), String> {
        if UNCHECKED.contains(&keyword) {
            return Err(format!(
                "the schema uses `{keyword}` (at `{pointer}`), a JSON Schema keyword accum does not check; remove it, or give the schema the configuration type's own binary writes (`schema -o FILE`)"
            ));
        }
        if !CHECKED.contains(&keyword) && !ANNOTATIONS.contains(&keyword) {
            // Not a keyword of the standard: an annotation (2020-12, §6.5).
            return Ok(());
        }
        let ok = match keyword {
            "type" => match value {
                Value::String(name) => TYPES.contains(&name.as_str()),
                Value::Array(names) => {
                    !names.is_empty()
                        && names.iter().enumerate().all(|(i, name)| {
                            name.as_str().is_some_and(|n| TYPES.contains(&n))
                                && !names[..i].contains(name)
                        })
                }
                _ => false,
            },
            "enum" => value.is_array(),
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => value.is_number(),
            "multipleOf" => value.as_f64().is_some_and(|m| m > 0.0),
            "minLength" | "maxLength" | "minItems" | "maxItems" | "minProperties"
            | "maxProperties" => count(value).is_some(),
            "uniqueItems" | "deprecated" | "readOnly" | "writeOnly" => value.is_boolean(),
            "required" => value.as_array().is_some_and(|names| {
                names
                    .iter()
                    .enumerate()
                    .all(|(i, name)| name.is_string() && !names[..i].contains(name))
            }),
            "pattern" => {
                let Some(text) = value.as_str() else {
                    return Err(malformed(pointer));
                };
                self.pattern(text, pointer)?;
                true
            }
            "properties" | "$defs" | "definitions" | "patternProperties" => {
                let Some(members) = value.as_object() else {
                    return Err(malformed(pointer));
                };
                for (name, schema) in members {
                    if keyword == "patternProperties" {
                        self.pattern(name, pointer)?;
                    }
                    let len = push(pointer, name);
                    self.schema(schema, pointer)?;
                    pointer.truncate(len);
                }
                true
            }
            "additionalProperties" | "unevaluatedProperties" | "not" => {
                self.schema(value, pointer)?;
                true
            }
            "items" => {
                if value.is_array() {
                    return Err(format!(
                        "the schema gives `items` a list (at `{pointer}`), the form of drafts before 2020-12; write `prefixItems` for the items by position"
                    ));
                }
                self.schema(value, pointer)?;
                true
            }
            "allOf" | "anyOf" | "oneOf" | "prefixItems" => {
                let Some(schemas) = value.as_array().filter(|s| !s.is_empty()) else {
                    return Err(malformed(pointer));
                };
                for (i, schema) in schemas.iter().enumerate() {
                    let len = push(pointer, &i.to_string());
                    self.schema(schema, pointer)?;
                    pointer.truncate(len);
                }
                true
            }
            "$ref" => {
                let Some(reference) = value.as_str() else {
                    return Err(malformed(pointer));
                };
                if resolve(self.root, reference).is_none() {
                    return Err(if reference.starts_with('#') {
                        format!(
                            "the schema's `$ref` `{reference}` (at `{pointer}`) names nothing in the schema"
                        )
                    } else {
                        format!(
                            "the schema's `$ref` `{reference}` (at `{pointer}`) refers outside the schema; accum follows references within it (`#/$defs/…`)"
                        )
                    });
                }
                true
            }
            "$schema" => {
                let Some(uri) = value.as_str() else {
                    return Err(malformed(pointer));
                };
                let dialect = uri
                    .trim_end_matches('#')
                    .trim_start_matches("https://")
                    .trim_start_matches("http://");
                if dialect != DIALECT {
                    return Err(format!(
                        "the schema is written for `{uri}`; accum checks JSON Schema 2020-12 (`https://{DIALECT}`), which schemars writes"
                    ));
                }
                true
            }
            "$id" => {
                // At the root, an `$id` names the document; below it, it
                // would move the base of the `$ref`s inside.
                if !self
                    .root
                    .as_object()
                    .is_some_and(|root| std::ptr::eq(object, root))
                {
                    return Err(format!(
                        "the schema has an `$id` below its root (at `{pointer}`); accum follows references within one document"
                    ));
                }
                value.is_string()
            }
            "$comment" | "$anchor" | "title" | "description" | "format" | "contentEncoding"
            | "contentMediaType" => value.is_string(),
            "contentSchema" => {
                self.schema(value, pointer)?;
                true
            }
            // `const`, `default`, `examples`: any value.
            _ => true,
        };
        if ok { Ok(()) } else { Err(malformed(pointer)) }
    }

    fn pattern(&mut self, text: &'s str, pointer: &str) -> Result<(), String> {
        if self.patterns.compiled.contains_key(text) {
            return Ok(());
        }
        let regex = pattern::compile(text).map_err(|reason| {
            format!(
                "the schema's pattern `{text}` (at `{pointer}`) cannot be read: {reason}; accum reads the regular expressions of ECMA-262 without look-around or back-references"
            )
        })?;
        self.patterns.compiled.insert(text, regex);
        Ok(())
    }
}

/// A count keyword's value (`minItems: 2`; `2.0` is 2 too).
pub(super) fn count(value: &Value) -> Option<u64> {
    value.as_u64().or_else(|| {
        value
            .as_f64()
            .filter(|f| f.fract() == 0.0 && (0.0..18_446_744_073_709_551_616.0).contains(f))
            .map(|f| {
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let whole = f as u64;
                whole
            })
    })
}

/// The schema a local `$ref` names: `#` is the root, `#/…` a JSON pointer,
/// percent-encoded as a URI fragment is.
pub(crate) fn resolve<'s>(root: &'s Value, reference: &str) -> Option<&'s Value> {
    let fragment = reference.strip_prefix('#')?;
    if fragment.contains('%') {
        root.pointer(&percent_decode(fragment)?)
    } else {
        root.pointer(fragment)
    }
}

/// `%24defs` as `$defs`; `None` for a broken escape or bytes that are not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_subset_reads_what_schemars_writes() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "urn:x",
            "type": "object",
            "properties": {
                "a": { "$ref": "#/$defs/A", "x-accum-role": "micro_batch" },
                "m": { "type": "object", "patternProperties": { "^\\d+$": true }, "additionalProperties": false },
                "t": { "type": "array", "prefixItems": [{ "type": "integer" }], "items": false },
                "n": { "type": "integer", "not": { "const": 0 }, "format": "int32" }
            },
            "$defs": { "A": { "enum": [1, 2], "enumDescriptions": ["one", "two"] } }
        });
        assert!(read(&schema).is_ok());
    }

    #[test]
    fn what_is_outside_the_subset_is_named_with_its_place() {
        for (schema, said) in [
            (
                json!({ "properties": { "x": { "if": true } } }),
                "the schema uses `if` (at `/properties/x/if`), a JSON Schema keyword accum does not check",
            ),
            (
                json!({ "$defs": { "a/b": { "dependentRequired": {} } } }),
                "`dependentRequired` (at `/$defs/a~1b/dependentRequired`)",
            ),
            (
                json!({ "properties": { "x": { "minimum": "1" } } }),
                "the value at `/properties/x/minimum` breaks the meta-schema",
            ),
            (
                json!({ "type": ["string", "string"] }),
                "the value at `/type` breaks the meta-schema",
            ),
            (
                json!({ "anyOf": [] }),
                "the value at `/anyOf` breaks the meta-schema",
            ),
            (
                json!({ "items": { "$ref": "#/$defs/Missing" } }),
                "`$ref` `#/$defs/Missing` (at `/items/$ref`) names nothing",
            ),
            (
                json!({ "$ref": "https://example.com/s.json" }),
                "refers outside the schema",
            ),
            (
                json!({ "$schema": "http://json-schema.org/draft-07/schema#" }),
                "written for `http://json-schema.org/draft-07/schema#`",
            ),
            (
                json!({ "properties": { "x": { "pattern": "(?=a)" } } }),
                "the schema's pattern `(?=a)` (at `/properties/x/pattern`) cannot be read",
            ),
            (json!({ "items": [true] }), "`items` a list (at `/items`)"),
            (
                json!({ "properties": { "x": 3 } }),
                "the value at `/properties/x` breaks",
            ),
        ] {
            let err = read(&schema).expect_err(&schema.to_string());
            assert!(err.contains(said), "{schema}: {err}");
        }
    }

    #[test]
    fn refs_are_json_pointers_percent_decoded() {
        let schema = json!({ "$defs": { "a b": { "const": 1 }, "c/d": { "const": 2 } } });
        assert_eq!(
            resolve(&schema, "#/$defs/a%20b"),
            Some(&json!({ "const": 1 }))
        );
        assert_eq!(
            resolve(&schema, "#/$defs/c~1d"),
            Some(&json!({ "const": 2 }))
        );
        assert_eq!(resolve(&schema, "#"), Some(&schema));
        assert_eq!(resolve(&schema, "#/$defs/a%2"), None);
        assert_eq!(resolve(&schema, "other.json#/x"), None);
    }
}
