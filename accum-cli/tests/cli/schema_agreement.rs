//! accum's own schema check (accum-cli/src/validate/schema/) and a
//! third-party validator, the `jsonschema` crate, give the same verdict on
//! generated values: against accum's schema, the custom example's, and a
//! schema schemars writes for types that use what configuration types
//! use (nested and optional sections, enums of units and of structs,
//! flattened parts, maps, sets, tuples, non-zero integers, lengths,
//! patterns and ranges).
//!
//! The values follow the schema with mistakes mixed in: limits and one
//! past them, missing and unknown keys, wrong types, integral floats, the
//! other alternative of an enum.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::num::NonZeroI32;

use schemars::JsonSchema;
use serde_json::{Value, json};

use crate::{run_in, scratch};

#[derive(JsonSchema)]
#[allow(dead_code)]
#[serde(deny_unknown_fields)]
struct Mixed {
    batch: Section,
    parallel: Option<Section>,
    mode: Mode,
    shape: Shape,
    event: Event,
    small: u8,
    signed: i16,
    nonzero: NonZeroI32,
    #[schemars(range(min = 0.0, max = 1.0))]
    ratio: f64,
    #[schemars(length(min = 1, max = 3))]
    tags: Vec<String>,
    #[schemars(pattern(r"^[a-z]+(_[a-z]+)*$"), length(max = 12))]
    name: String,
    set: BTreeSet<u16>,
    by_rank: BTreeMap<u32, bool>,
    named: BTreeMap<String, Section>,
    pair: (u8, String),
    #[serde(default)]
    scale: Option<f32>,
    #[serde(flatten)]
    optimizer: Optimizer,
}

#[derive(JsonSchema)]
#[allow(dead_code)]
#[serde(deny_unknown_fields)]
struct Section {
    #[schemars(range(min = 1))]
    micro_batch: u32,
    accumulation: Option<u64>,
    #[serde(default)]
    note: String,
}

#[derive(JsonSchema)]
#[allow(dead_code)]
#[serde(rename_all = "snake_case")]
enum Mode {
    Fp32,
    Bf16,
    Fp16,
}

#[derive(JsonSchema)]
#[allow(dead_code)]
#[serde(rename_all = "snake_case")]
enum Shape {
    Point,
    Circle { radius: f64 },
    Rect { w: u16, h: u16 },
    Named(String),
}

#[derive(JsonSchema)]
#[allow(dead_code)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
enum Event {
    Start,
    Stop {
        at: u64,
    },
    Every {
        steps: u32,
        #[serde(default)]
        offset: u32,
    },
}

#[derive(JsonSchema)]
#[allow(dead_code)]
#[serde(tag = "optimizer", rename_all = "snake_case")]
enum Optimizer {
    Sgd { momentum: f64 },
    Adam { betas: (f64, f64) },
}

/// A generator of values for a schema: SplitMix64 from a seed. It keeps to
/// the schema where it can (values within their limits, required keys, no
/// unknown key), except at one chosen place, its `target`-th chance of a
/// mistake (none for 0): there it takes a value out of limits, leaves out
/// a required key, adds an unknown one, repeats an item, or writes a value
/// of another type.
struct Generator<'s, 'c> {
    root: &'s Value,
    state: u64,
    /// The chances of a mistake so far.
    chances: u64,
    /// The chance taken.
    target: u64,
    /// The leaves' validators, by the leaf's address: compiled once.
    leaves: &'c mut HashMap<usize, jsonschema::Validator>,
}

/// Values of any type, for a place that gets a wrong one.
fn wild(index: u64) -> Value {
    let all = [
        Value::Null,
        json!(true),
        json!(0),
        json!(-1),
        json!(1.5),
        json!("x"),
        json!("10 steps"),
        json!([]),
        json!([1]),
        json!({}),
        json!({ "a": 1 }),
    ];
    all[usize::try_from(index).unwrap_or(0) % all.len()].clone()
}

impl<'s> Generator<'s, '_> {
    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// True once in `n` times.
    fn one_in(&mut self, n: u64) -> bool {
        self.next().is_multiple_of(n)
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        let i = usize::try_from(self.next() % items.len() as u64).unwrap_or(0);
        &items[i]
    }

    /// Whether this chance of a mistake is the one taken.
    fn mistake(&mut self) -> bool {
        self.chances += 1;
        self.chances == self.target
    }

    /// One of `options` that `schema` (a leaf, without references)
    /// accepts, or at the chosen place one it refuses (where there are).
    fn pick_for(&mut self, schema: &serde_json::Map<String, Value>, options: Vec<Value>) -> Value {
        let leaf = self
            .leaves
            .entry(std::ptr::from_ref(schema) as usize)
            .or_insert_with(|| {
                jsonschema::validator_for(&Value::Object(schema.clone())).expect("a leaf compiles")
            });
        let (fitting, refused): (Vec<Value>, Vec<Value>) =
            options.into_iter().partition(|o| leaf.is_valid(o));
        let wrong = self.mistake();
        match (wrong, fitting.is_empty(), refused.is_empty()) {
            (true, _, false) | (false, true, false) => self.pick(&refused).clone(),
            _ => self.pick(&fitting).clone(),
        }
    }

    fn value(&mut self, schema: &'s Value, depth: usize) -> Value {
        if depth > 12 || self.mistake() {
            let i = self.next();
            return wild(i);
        }
        let Some(object) = schema.as_object() else {
            let i = self.next();
            return wild(i);
        };
        if let Some(target) = object
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| self.root.pointer(r.trim_start_matches('#')))
        {
            return self.value(target, depth + 1);
        }
        if let Some(value) = object.get("const") {
            return value.clone();
        }
        if let Some(Value::Array(options)) = object.get("enum") {
            return if self.mistake() {
                json!("fp61")
            } else {
                self.pick(options).clone()
            };
        }
        let mut value = match object.get("type") {
            Some(Value::String(kind)) => self.of_type(kind, object, depth),
            Some(Value::Array(kinds)) => {
                let kind = self.pick(kinds).as_str().unwrap_or("null").to_owned();
                self.of_type(&kind, object, depth)
            }
            _ => Value::Object(serde_json::Map::new()),
        };
        // Alternatives: one of them, its members merged into the value
        // when both are objects (a flattened enum).
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(alternatives)) = object.get(key) {
                let alternative = self.pick(alternatives);
                let chosen = self.value(alternative, depth + 1);
                value = merge(value, chosen, object.contains_key("type"));
            }
        }
        if let Some(Value::Array(parts)) = object.get("allOf") {
            for part in parts {
                let chosen = self.value(part, depth + 1);
                value = merge(value, chosen, true);
            }
        }
        value
    }

    fn of_type(
        &mut self,
        kind: &str,
        object: &'s serde_json::Map<String, Value>,
        depth: usize,
    ) -> Value {
        let number = |key: &str| object.get(key).and_then(Value::as_f64);
        match kind {
            "null" => Value::Null,
            "boolean" => json!(self.one_in(2)),
            "integer" => {
                let mut options = vec![
                    json!(0),
                    json!(1),
                    json!(7),
                    json!(8.0),
                    json!(2.5),
                    json!(-3),
                    json!(4_294_967_296u64),
                ];
                for bound in [number("minimum"), number("maximum")].into_iter().flatten() {
                    options.extend([json!(bound), json!(bound - 1.0), json!(bound + 1.0)]);
                }
                self.pick_for(object, options)
            }
            "number" => {
                let mut options = vec![json!(0.5), json!(-1.0), json!(3), json!(1e300)];
                for bound in [number("minimum"), number("maximum")].into_iter().flatten() {
                    options.extend([json!(bound), json!(bound - 0.25), json!(bound + 0.25)]);
                }
                self.pick_for(object, options)
            }
            "string" => {
                let options = [
                    "10 steps",
                    "2M tokens",
                    "100 updates",
                    "1.5k examples",
                    " 3 microbatches ",
                    "tokens",
                    "abc",
                    "abc_def",
                    "Abc",
                    "",
                    "abcdefghijklmnop",
                    "_x",
                ];
                self.pick_for(object, options.iter().map(|o| json!(o)).collect())
            }
            "array" => {
                let prefix = object.get("prefixItems").and_then(Value::as_array);
                let fitting = prefix.map_or_else(
                    || {
                        object
                            .get("minItems")
                            .and_then(Value::as_u64)
                            .and_then(|n| usize::try_from(n).ok())
                            .unwrap_or(1)
                    },
                    Vec::len,
                );
                let len = if self.mistake() {
                    fitting + 1 + usize::try_from(self.next() % 3).unwrap_or(0)
                } else {
                    fitting
                };
                let mut items = Vec::new();
                for i in 0..len {
                    let schema = prefix
                        .and_then(|p| p.get(i))
                        .or_else(|| object.get("items"));
                    items.push(match schema {
                        Some(schema) => self.value(schema, depth + 1),
                        None => json!(i),
                    });
                }
                if object.get("uniqueItems") == Some(&Value::Bool(true))
                    && self.mistake()
                    && let Some(first) = items.first().cloned()
                {
                    items.push(first);
                }
                Value::Array(items)
            }
            "object" => {
                let mut members = serde_json::Map::new();
                let required: Vec<&str> = object
                    .get("required")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect();
                if let Some(Value::Object(properties)) = object.get("properties") {
                    for (key, schema) in properties {
                        let keep = if required.contains(&key.as_str()) {
                            !self.mistake()
                        } else {
                            self.one_in(2)
                        };
                        if keep {
                            members.insert(key.clone(), self.value(schema, depth + 1));
                        }
                    }
                }
                if let Some(Value::Object(patterns)) = object.get("patternProperties") {
                    for schema in patterns.values() {
                        for key in ["1", "22"] {
                            if self.one_in(2) {
                                members.insert(key.to_owned(), self.value(schema, depth + 1));
                            }
                        }
                    }
                }
                if let Some(schema) = object.get("additionalProperties").filter(|s| s.is_object())
                    && self.one_in(2)
                {
                    members.insert("run_a".to_owned(), self.value(schema, depth + 1));
                }
                if self.mistake() {
                    members.insert("zz_unknown".to_owned(), json!(1));
                }
                Value::Object(members)
            }
            _ => Value::Null,
        }
    }
}

/// A value with an alternative's: members of both objects, or the
/// alternative alone.
fn merge(value: Value, alternative: Value, typed: bool) -> Value {
    match (value, alternative) {
        (Value::Object(mut base), Value::Object(more)) if typed => {
            base.extend(more);
            Value::Object(base)
        }
        (_, alternative) => alternative,
    }
}

/// Checks `cases` generated values against `schema` with both validators.
fn agree(name: &str, schema: &Value, cases: u64) {
    let reference = jsonschema::validator_for(schema).expect("the schema compiles");
    let mut valid = 0;
    let mut leaves = HashMap::new();
    for seed in 0..cases {
        // A first pass without a mistake counts the chances of one; the
        // second, from the same seed, takes one of them (or none, for a
        // third of the seeds).
        let mut careful = Generator {
            root: schema,
            state: seed,
            chances: 0,
            target: 0,
            leaves: &mut leaves,
        };
        let _ = careful.value(schema, 0);
        let chances = careful.chances;
        let pick = careful.next();
        let mut generator = Generator {
            root: schema,
            state: seed,
            chances: 0,
            target: if seed.is_multiple_of(3) {
                0
            } else {
                1 + pick % chances.max(1)
            },
            leaves: &mut leaves,
        };
        let value = generator.value(schema, 0);
        let theirs = reference.is_valid(&value);
        let ours = accum_cli::harness::schema_check(schema, &value).expect("checked");
        assert_eq!(
            ours,
            theirs,
            "{name}, seed {seed}: accum says {}, the jsonschema crate says {}: {value}\n{:?}",
            if ours { "valid" } else { "invalid" },
            if theirs { "valid" } else { "invalid" },
            reference
                .iter_errors(&value)
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
        );
        valid += u64::from(ours);
    }
    // Both verdicts are exercised.
    assert!(
        valid * 10 >= cases && valid * 10 <= cases * 9,
        "{name}: {valid} of {cases} values valid"
    );
}

#[test]
fn the_schema_check_agrees_with_a_third_party_validator() {
    let dir = scratch("schema-agreement");
    let canonical: Value =
        serde_json::from_str(&run_in(&dir, &["schema"]).stdout).expect("a schema");
    let custom_out = crate::custom::custom()
        .arg("schema")
        .output()
        .expect("runs");
    let custom: Value = serde_json::from_slice(&custom_out.stdout).expect("a schema");
    let mixed = schemars::schema_for!(Mixed).to_value();
    // What the mixed schema must exercise, so that a change of schemars
    // that drops one shows here.
    let text = mixed.to_string();
    for keyword in [
        "\"oneOf\"",
        "\"anyOf\"",
        "\"unevaluatedProperties\"",
        "\"patternProperties\"",
        "\"prefixItems\"",
        "\"uniqueItems\"",
        "\"not\"",
        "\"pattern\"",
        "\"maxLength\"",
        "\"minItems\"",
        "\"maximum\"",
    ] {
        assert!(text.contains(keyword), "{keyword} is not in {text}");
    }
    agree("accum's schema", &canonical, 3000);
    agree("the custom example's schema", &custom, 1500);
    agree("the mixed schema", &mixed, 3000);
}
