//! The check's verdicts and errors, keyword by keyword, and its bounds.

use serde_json::{Value, json};

use super::{Checker, ErrorKind, SchemaError};

/// The errors of `instance` against `schema`, as `(path, kind)` in words.
fn said(schema: &Value, instance: &Value) -> Vec<(String, String)> {
    let checker = Checker::new(schema).expect("within the subset");
    let errors = checker.errors(instance).expect("checked");
    errors.iter().map(words).collect()
}

fn words(error: &SchemaError<'_, '_>) -> (String, String) {
    let kind = match &error.kind {
        ErrorKind::AnyOf { alternatives } | ErrorKind::OneOfNone { alternatives } => format!(
            "alternatives {:?}",
            alternatives
                .iter()
                .map(|a| a.iter().map(words).collect::<Vec<_>>())
                .collect::<Vec<_>>()
        ),
        ErrorKind::UnexpectedKeys { keys } => format!("unexpected {keys:?}"),
        ErrorKind::Required { property } => format!("required {property}"),
        ErrorKind::Type { expected } => format!("type {expected:?}"),
        other => format!("{other:?}"),
    };
    (error.path.join("."), kind)
}

#[test]
fn each_keyword_says_what_it_wants() {
    let schema = json!({
        "type": "object",
        "required": ["a", "z"],
        "properties": {
            "a": { "type": ["integer", "null"], "minimum": 1, "maximum": 9 },
            "b": { "type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1 },
            "c": { "enum": ["x", "y"] },
            "d": { "const": 2 },
            "e": { "type": "string", "minLength": 2, "maxLength": 3, "pattern": "^[a-z]+$" },
            "f": { "type": "array", "minItems": 1, "maxItems": 2, "uniqueItems": true, "items": { "type": "boolean" } },
            "g": { "type": "object", "minProperties": 1, "maxProperties": 1 },
            "h": { "multipleOf": 0.5 },
            "i": { "not": { "const": 0 } },
            "j": false,
            "k": { "type": "array", "prefixItems": [{ "type": "string" }], "items": false }
        }
    });
    let good = json!({
        "a": 9, "z": 1, "b": 0.5, "c": "y", "d": 2.0, "e": "ab", "f": [true], "g": { "k": 1 },
        "h": 1.5, "i": 1, "k": ["s"]
    });
    assert_eq!(said(&schema, &good), Vec::<(String, String)>::new());
    let bad = json!({
        "a": 10, "b": 1, "c": "w", "d": 3, "e": "ABCD", "f": [true, true, false], "g": {},
        "h": 1.2, "i": 0, "j": null, "k": ["s", 1]
    });
    let found = said(&schema, &bad);
    let expected: Vec<(String, String)> = [
        ("", "required z"),
        ("a", "Maximum { limit: Number(9) }"),
        ("b", "ExclusiveMaximum { limit: Number(1) }"),
        ("c", "Enum { options: [String(\"x\"), String(\"y\")] }"),
        ("d", "Const { expected: Number(2) }"),
        ("e", "MaxLength { limit: 3 }"),
        ("e", "Pattern { pattern: \"^[a-z]+$\" }"),
        ("f", "MaxItems { limit: 2 }"),
        ("f", "UniqueItems"),
        ("g", "MinProperties { limit: 1 }"),
        ("h", "MultipleOf { divisor: 0.5 }"),
        ("i", "Not"),
        ("j", "False"),
        ("k.1", "False"),
    ]
    .iter()
    .map(|(p, k)| ((*p).to_owned(), (*k).to_owned()))
    .collect();
    assert_eq!(found, expected);
}

#[test]
fn integers_take_integral_floats_and_types_are_listed_in_order() {
    let schema = json!({ "type": ["object", "integer", "null"] });
    let checker = Checker::new(&schema).expect("reads");
    assert_eq!(checker.is_valid(&json!(8.0)), Ok(true));
    assert_eq!(checker.is_valid(&json!(1e3)), Ok(true));
    assert_eq!(
        said(&schema, &json!(8.5)),
        vec![(
            String::new(),
            "type [\"null\", \"integer\", \"object\"]".to_owned()
        )]
    );
}

#[test]
fn closed_objects_name_their_unknown_keys_and_refs_are_followed() {
    let schema = json!({
        "$ref": "#/$defs/Top",
        "$defs": {
            "Top": {
                "type": "object",
                "additionalProperties": false,
                "required": ["batch"],
                "properties": {
                    "batch": { "$ref": "#/$defs/Batch" },
                    "opt": { "anyOf": [{ "$ref": "#/$defs/Batch" }, { "type": "null" }] }
                }
            },
            "Batch": {
                "type": "object",
                "additionalProperties": false,
                "properties": { "m": { "type": "integer", "minimum": 1 } }
            }
        }
    });
    let found = said(
        &schema,
        &json!({ "bogus": 1, "zz": 2, "batch": { "m": 0, "x": 1 }, "opt": { "m": "2" } }),
    );
    assert_eq!(
        found,
        vec![
            ("batch.m".to_owned(), "Minimum { limit: Number(1) }".to_owned()),
            ("batch".to_owned(), "unexpected [\"x\"]".to_owned()),
            (
                "opt".to_owned(),
                "alternatives [[(\"opt.m\", \"type [\\\"integer\\\"]\")], [(\"opt\", \"type [\\\"null\\\"]\")]]"
                    .to_owned()
            ),
            (String::new(), "unexpected [\"bogus\", \"zz\"]".to_owned()),
        ]
    );
    // One required key beside closed properties is said after them.
    let found = said(&schema, &json!({ "bogus": 1 }));
    assert_eq!(
        found,
        vec![
            (String::new(), "unexpected [\"bogus\"]".to_owned()),
            (String::new(), "required batch".to_owned()),
        ]
    );
}

#[test]
fn one_of_wants_exactly_one() {
    let schema =
        json!({ "oneOf": [{ "type": "integer" }, { "type": "number" }, { "type": "string" }] });
    let checker = Checker::new(&schema).expect("reads");
    assert_eq!(checker.is_valid(&json!("s")), Ok(true));
    assert_eq!(checker.is_valid(&json!(1.5)), Ok(true));
    assert_eq!(
        said(&schema, &json!(1)),
        vec![(String::new(), "OneOfMany".to_owned())]
    );
    assert!(said(&schema, &json!(null))[0].1.starts_with("alternatives"));
}

#[test]
fn unevaluated_properties_see_through_flattened_parts() {
    // What schemars writes for a struct that flattens an enum and denies
    // unknown fields.
    let schema = json!({
        "type": "object",
        "properties": { "name": { "type": "string" } },
        "oneOf": [
            { "properties": { "kind": { "const": "a" }, "x": { "type": "integer" } }, "required": ["kind"] },
            { "properties": { "kind": { "const": "b" }, "y": { "type": "integer" } }, "required": ["kind"] }
        ],
        "allOf": [{ "$ref": "#/$defs/Extra" }],
        "unevaluatedProperties": false,
        "$defs": { "Extra": { "properties": { "seed": { "type": "integer" } } } }
    });
    let checker = Checker::new(&schema).expect("reads");
    assert_eq!(
        checker.is_valid(&json!({ "name": "n", "kind": "a", "x": 1, "seed": 3 })),
        Ok(true)
    );
    assert_eq!(
        said(
            &schema,
            &json!({ "name": "n", "kind": "a", "y": 1, "bogus": 1 })
        ),
        vec![(String::new(), "unexpected [\"bogus\", \"y\"]".to_owned())]
    );
}

#[test]
fn map_keys_are_checked_by_pattern() {
    let schema = json!({
        "type": "object",
        "patternProperties": { "^\\d+$": { "type": "string" } },
        "additionalProperties": false
    });
    assert_eq!(
        said(&schema, &json!({ "1": "a", "22": 3, "x": "b" })),
        vec![
            ("22".to_owned(), "type [\"string\"]".to_owned()),
            (String::new(), "unexpected [\"x\"]".to_owned()),
        ]
    );
}

#[test]
fn a_ref_loop_is_stopped_with_a_message() {
    let schema = json!({ "$ref": "#/$defs/A", "$defs": { "A": { "$ref": "#/$defs/A" } } });
    let checker = Checker::new(&schema).expect("reads");
    let err = checker.errors(&json!(1)).expect_err("a loop");
    assert!(err.contains("a `$ref` that leads back to itself"), "{err}");
}

#[test]
fn nested_alternatives_cannot_take_exponential_time() {
    // Each level tries its value twice: 2^40 applications unbounded.
    let schema = json!({
        "$ref": "#/$defs/T",
        "$defs": {
            "T": { "anyOf": [
                { "type": "object", "properties": { "a": { "$ref": "#/$defs/T" } }, "required": ["b"] },
                { "type": "object", "properties": { "a": { "$ref": "#/$defs/T" } }, "required": ["c"] }
            ] }
        }
    });
    let mut instance = json!(0);
    for _ in 0..40 {
        instance = json!({ "a": instance });
    }
    let checker = Checker::new(&schema).expect("reads");
    let started = std::time::Instant::now();
    let err = checker.errors(&instance).expect_err("stopped");
    assert!(err.contains("nest so deeply"), "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}

#[test]
fn many_unknown_keys_are_one_error() {
    let schema =
        json!({ "type": "object", "additionalProperties": false, "properties": { "a": {} } });
    let members: serde_json::Map<String, Value> =
        (0..30_000).map(|i| (format!("u{i}"), json!(1))).collect();
    let instance = Value::Object(members);
    let errors = Checker::new(&schema)
        .expect("reads")
        .errors(&instance)
        .expect("checked");
    assert_eq!(errors.len(), 1);
    assert!(matches!(&errors[0].kind, ErrorKind::UnexpectedKeys { keys } if keys.len() == 30_000));
}
