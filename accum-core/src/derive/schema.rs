//! The JSON Schema of a derived config, annotated with the plan: role
//! fields carry `x-accum-role` (a batch ramp-up field `"stages"` or
//! `"ramp"`), typed-unit fields `x-accum-unit`, length
//! fields with a use `x-accum-span` (`warmup`, `total`, `every`), structs
//! with constant roles `x-accum-constants`, and a config whose lengths vary
//! `x-accum-variable-length` (docs/derive.md).

#[cfg(feature = "schema")]
use super::{AccumConfig, FieldInfo};
use crate::code::Code;
use crate::finding::{FieldPath, Finding, Findings};
use crate::plan::Fix;

/// The version of the `x-accum-*` annotations in generated schemas, written
/// as `x-accum-schema-version` and in the `$id`; it changes when their
/// meaning does.
pub const SCHEMA_VERSION: u32 = 1;

/// The JSON Schema (2020-12) of a derived config, with `x-accum-role` on
/// every role field (`"stages"` or `"ramp"` on a batch ramp-up field) and
/// `x-accum-unit` on every field with a declared unit,
/// nested sections included (docs/derive.md). Role fields are plan
/// factors and have `minimum: 1`, so that editors and third-party validators
/// reject a zero. Struct-level constant roles are listed as
/// `"x-accum-constants": {"micro_batch": 2, …}` on the object of the struct
/// that declares them. The root has an `$id`
/// (`urn:accum:schema:v1:TrainingConfig`) and `x-accum-schema-version`.
/// The schema alone is enough to rebuild the plan from a config file.
#[cfg(feature = "schema")]
pub fn schema_for<T: AccumConfig + schemars::JsonSchema>() -> schemars::Schema {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>();
    let mut root = schema.to_value();
    // Nested sections live in `$defs`; take them out so that they can be
    // edited while the root's properties are walked.
    let mut defs = match root.as_object_mut().and_then(|o| o.remove("$defs")) {
        Some(serde_json::Value::Object(defs)) => defs,
        _ => serde_json::Map::new(),
    };
    annotate_object(&mut root, T::FIELDS, &mut defs);
    if let Some(object) = root.as_object_mut() {
        object.insert(
            "$id".to_owned(),
            format!("urn:accum:schema:v{SCHEMA_VERSION}:{}", T::schema_name()).into(),
        );
        object.insert("x-accum-schema-version".to_owned(), SCHEMA_VERSION.into());
        if T::VARIABLE_LENGTH {
            object.insert("x-accum-variable-length".to_owned(), true.into());
        }
    }
    if let Some(object) = root.as_object_mut()
        && !defs.is_empty()
    {
        object.insert("$defs".to_owned(), serde_json::Value::Object(defs));
    }
    // A root schema is always an object; the default keeps the type total.
    schemars::Schema::try_from(root).unwrap_or_default()
}

#[cfg(feature = "schema")]
fn annotate_object(
    schema: &mut serde_json::Value,
    fields: &[FieldInfo],
    defs: &mut serde_json::Map<String, serde_json::Value>,
) {
    // Struct-level constants are not properties; they are listed on the
    // object so that the schema alone still gives the whole plan.
    let constants: serde_json::Map<String, serde_json::Value> = fields
        .iter()
        .filter_map(|f| Some((f.role?.key().to_owned(), f.constant?.into())))
        .collect();
    if !constants.is_empty()
        && let Some(object) = schema.as_object_mut()
    {
        object.insert(
            "x-accum-constants".to_owned(),
            serde_json::Value::Object(constants),
        );
    }
    // `#[serde(flatten)]` sections put their properties in this object.
    for field in fields.iter().filter(|f| f.name.is_empty()) {
        if let Some(nested) = field.nested {
            annotate_object(schema, nested, defs);
        }
    }
    let Some(properties) = schema
        .get_mut("properties")
        .and_then(serde_json::Value::as_object_mut)
    else {
        return;
    };
    for field in fields {
        let Some(property) = properties.get_mut(field.name) else {
            continue;
        };
        let Some(object) = property.as_object_mut() else {
            continue;
        };
        if let Some(role) = field.role {
            object.insert("x-accum-role".to_owned(), role.key().into());
            // Every plan factor is at least 1 (accum::plan::zero); the
            // keyword leaves a `null` of an optional role alone.
            object.insert("minimum".to_owned(), 1.into());
        }
        if let Some(unit) = field.unit
            && !object.contains_key("$ref")
        {
            object.insert("x-accum-unit".to_owned(), unit.key().into());
        }
        if let Some(span_use) = field.span_use {
            object.insert("x-accum-span".to_owned(), span_use.key().into());
        }
        if let Some(ramp) = field.ramp {
            object.insert("x-accum-role".to_owned(), ramp.key().into());
        }
        if let Some(nested) = field.nested {
            match def_name(property) {
                Some(name) => {
                    if let Some(mut def) = defs.remove(&name) {
                        annotate_object(&mut def, nested, defs);
                        defs.insert(name, def);
                    }
                }
                None => annotate_object(property, nested, defs),
            }
        }
    }
}

/// The `$defs` entry a property refers to, directly or through the
/// `anyOf: [{$ref}, {type: null}]` of an `Option`.
#[cfg(feature = "schema")]
fn def_name(property: &serde_json::Value) -> Option<String> {
    let reference = property.get("$ref").and_then(serde_json::Value::as_str);
    let reference = reference.or_else(|| {
        property
            .get("anyOf")
            .and_then(serde_json::Value::as_array)?
            .iter()
            .find_map(|v| v.get("$ref").and_then(serde_json::Value::as_str))
    })?;
    reference.strip_prefix("#/$defs/").map(str::to_owned)
}

/// Words in a field name that say "some kind of step" without saying which
/// (the derive refuses such integers in the sections it sees).
const STEP_WORDS: &[&str] = &["step", "steps", "iter", "iters", "iteration", "iterations"];

/// How deep `$ref`s and nesting are followed in a schema.
const MAX_DEPTH: usize = 32;

/// The `accum::span` findings of step-like integer fields the derive cannot
/// see: in a section that does not derive `AccumConfig` (a plain serde
/// struct), `max_steps: u64` compiles, but the config's JSON Schema still
/// shows an integer named for steps with no unit. Found by walking the
/// annotated schema (`schema_for`): properties, `$ref`s into `$defs` and
/// `anyOf` alternatives; a field with `x-accum-unit`, `x-accum-role` or
/// `x-accum-span` has its unit.
pub fn step_findings(schema: &serde_json::Value) -> Findings {
    let mut findings = Findings::default();
    walk_steps(schema, schema, &FieldPath::root(), &mut findings, 0);
    findings
}

/// [`step_findings`] of a derived config's own schema. Called by the
/// derive's `validate()` for configs whose type has a JSON Schema.
#[cfg(feature = "schema")]
pub fn step_findings_of<T: AccumConfig + schemars::JsonSchema>(out: &mut Findings) {
    out.extend(step_findings(schema_for::<T>().as_value()));
}

/// Without the `schema` feature no type has a JSON Schema to walk: no type
/// implements [`SchemaConfig`](super::SchemaConfig), so generated code,
/// which names this for the types that do, never calls it.
#[cfg(not(feature = "schema"))]
pub fn step_findings_of<T: super::SchemaConfig>(out: &mut Findings) {
    no_step_findings(out);
}

/// For configs without a JSON Schema: nothing to walk. Called by generated
/// code.
pub fn no_step_findings(out: &mut Findings) {
    let _ = out;
}

fn walk_steps(
    node: &serde_json::Value,
    root: &serde_json::Value,
    path: &FieldPath,
    out: &mut Findings,
    depth: usize,
) {
    if depth > MAX_DEPTH {
        return;
    }
    let Some(object) = node.as_object() else {
        return;
    };
    if let Some(target) = object
        .get("$ref")
        .and_then(serde_json::Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|pointer| root.pointer(pointer))
    {
        walk_steps(target, root, path, out, depth + 1);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        for alternative in object
            .get(key)
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
        {
            walk_steps(alternative, root, path, out, depth + 1);
        }
    }
    let Some(properties) = object
        .get("properties")
        .and_then(serde_json::Value::as_object)
    else {
        return;
    };
    for (name, property) in properties {
        let at = path.child(name);
        if is_step_name(name) && is_bare_integer(property) {
            out.push(
                Finding::new(
                    Code::Span,
                    at.clone(),
                    format!(
                        "`{at}` is an integer named for steps, with no unit: a step is an update in one \
                         framework and a microbatch in the next"
                    ),
                    "unit unknown".to_owned(),
                )
                .with_fix(Fix::text(format!(
                    "make `{at}` an `Updates`, `Microbatches`, `Examples` or `Tokens` (or a `Span`), or derive \
                     `AccumConfig` on its section and write `#[accum(unit = \"update\")]` on it"
                ))),
            );
        }
        walk_steps(property, root, &at, out, depth + 1);
    }
}

fn is_step_name(name: &str) -> bool {
    name.split(['_', '-'])
        .any(|word| STEP_WORDS.contains(&word.to_ascii_lowercase().as_str()))
}

/// Whether a property is a plain integer (or an optional one) that says
/// nothing of its unit.
fn is_bare_integer(property: &serde_json::Value) -> bool {
    let Some(object) = property.as_object() else {
        return false;
    };
    if ["x-accum-unit", "x-accum-role", "x-accum-span"]
        .iter()
        .any(|key| object.contains_key(*key))
    {
        return false;
    }
    let integer = |t: &serde_json::Value| t == "integer";
    match object.get("type") {
        Some(serde_json::Value::String(_)) => object.get("type").is_some_and(integer),
        Some(serde_json::Value::Array(types)) => {
            types.iter().any(integer) && types.iter().all(|t| integer(t) || t == "null")
        }
        _ => false,
    }
}
