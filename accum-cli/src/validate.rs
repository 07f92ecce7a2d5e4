//! Validation of a configuration file against a JSON Schema and the plan
//! rules, for the canonical config or *any* derived config: plan roles are
//! found through `x-accum-role`, spans through `x-accum-unit = "span"`.
//!
//! Every finding is reported, not just the first, each with its location.

use std::ops::Range;

use accum_core::{Layout, PlanError, PlanInput, Role, Span};
use serde_json::Value;

use crate::diagnostic::{Diagnostic, dotted};
use crate::source::{Document, NodeKind};

/// Where the schema puts plan roles and spans.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SchemaMap {
    /// Each role with the path of its field.
    pub(crate) roles: Vec<(Role, Vec<String>)>,
    /// Paths of span fields.
    pub(crate) spans: Vec<Vec<String>>,
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

const MAX_SCHEMA_DEPTH: usize = 32;

fn walk(node: &Value, root: &Value, path: &mut Vec<String>, map: &mut SchemaMap, depth: usize) {
    if depth > MAX_SCHEMA_DEPTH {
        return;
    }
    let Some(object) = node.as_object() else {
        return;
    };
    if let Some(role) = object
        .get("x-accum-role")
        .and_then(Value::as_str)
        .and_then(Role::from_key)
    {
        map.roles.push((role, path.clone()));
    }
    if object.get("x-accum-unit").and_then(Value::as_str) == Some("span") {
        map.spans.push(path.clone());
    }
    if let Some(target) = object
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| resolve_ref(root, r))
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
            walk(property, root, path, map, depth + 1);
            path.pop();
        }
    }
}

fn resolve_ref<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    root.pointer(pointer)
}

/// Splits a JSON pointer (`/batch/micro_batch`) into unescaped segments.
pub(crate) fn pointer_segments(pointer: &str) -> Vec<String> {
    pointer
        .split('/')
        .skip(1)
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect()
}

/// Validates a document: structure against the schema, then spans, then the
/// plan. Returns every finding, in document order.
/// With `plan_check`, the plan rules run on the role values found through the
/// schema; a typed caller runs the config's own validation instead, except
/// when structural findings keep the file from being typed.
pub(crate) fn validate(
    doc: &Document,
    schema: &Value,
    map: &SchemaMap,
    plan_check: bool,
) -> Result<Vec<Diagnostic>, String> {
    let instance = doc.to_json();
    let validator = jsonschema::validator_for(schema)
        .map_err(|err| format!("the schema is not a valid JSON Schema: {err}"))?;
    let mut findings = Vec::new();

    // Spans first: their messages name the ambiguity, which a pattern
    // mismatch from the schema cannot.
    let mut span_paths_with_errors = Vec::new();
    for path in &map.spans {
        if let Some(node) = doc.node(path)
            && let Some(finding) = check_span(doc, path, &node.kind, node.span.clone())
        {
            span_paths_with_errors.push(path.clone());
            findings.push(finding);
        }
    }

    for error in validator.iter_errors(&instance) {
        let path = pointer_segments(error.instance_path().as_str());
        if span_paths_with_errors.iter().any(|p| path.starts_with(p)) {
            continue;
        }
        // A zero plan factor is below the schema's `minimum: 1`; the plan
        // rules report it (accum::plan::zero) with its fix.
        if matches!(
            error.kind(),
            jsonschema::error::ValidationErrorKind::Minimum { .. }
        ) && error.instance().as_u64() == Some(0)
            && map.roles.iter().any(|(_, p)| *p == path)
        {
            continue;
        }
        findings.push(schema_finding(
            doc,
            path,
            error.kind(),
            &error.to_string(),
            error.instance(),
        ));
    }

    // JSON Schema's "integer" accepts a number without a fraction (4.0,
    // 1e30); the typed config does not. Report it here, where its location
    // is known.
    let mut path = Vec::new();
    floats_for_integers(&doc.root, schema, schema, &mut path, &mut findings, 0);

    if (plan_check || !findings.is_empty()) && !map.roles.is_empty() {
        let broken: Vec<Vec<String>> = findings.iter().map(|f| f.path.clone()).collect();
        findings.extend(plan_findings(doc, &instance, map, &broken));
    }

    findings.sort_by_key(|f| f.primary.as_ref().map_or(usize::MAX, |(s, _)| s.start));
    Ok(findings)
}

/// The schemas `node` must match: itself, its `$ref` target and its
/// `anyOf`/`oneOf`/`allOf` alternatives.
fn alternatives<'a>(node: &'a Value, root: &'a Value, out: &mut Vec<&'a Value>, depth: usize) {
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
        .and_then(|r| resolve_ref(root, r))
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

fn allows(schema: &Value, kind: &str) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == kind,
        Some(Value::Array(types)) => types.iter().any(|t| t == kind),
        _ => false,
    }
}

/// Finds floats where the schema wants an integer (and not a number).
fn floats_for_integers(
    node: &crate::source::Node,
    schema: &Value,
    root: &Value,
    path: &mut Vec<String>,
    findings: &mut Vec<Diagnostic>,
    depth: usize,
) {
    if depth > MAX_SCHEMA_DEPTH {
        return;
    }
    let mut schemas = Vec::new();
    alternatives(schema, root, &mut schemas, 0);
    match &node.kind {
        NodeKind::Float(value) => {
            let integer = schemas.iter().any(|s| allows(s, "integer"));
            let number = schemas.iter().any(|s| allows(s, "number"));
            if integer && !number && !findings.iter().any(|f| f.path == *path) {
                findings.push(
                    Diagnostic::error(
                        "accum::schema::type",
                        path.clone(),
                        format!(
                            "`{}` must be an integer, found number {value:?}",
                            dotted(path)
                        ),
                    )
                    .at(node.span.clone(), "not an integer")
                    .help("write a whole number without a decimal point or exponent"),
                );
            }
        }
        NodeKind::Table(entries) => {
            for entry in entries {
                if let Some(property) = schemas
                    .iter()
                    .find_map(|s| s.get("properties").and_then(|p| p.get(&entry.key)))
                {
                    path.push(entry.key.clone());
                    floats_for_integers(&entry.value, property, root, path, findings, depth + 1);
                    path.pop();
                }
            }
        }
        NodeKind::Array(items) => {
            if let Some(item_schema) = schemas.iter().find_map(|s| s.get("items")) {
                for (i, item) in items.iter().enumerate() {
                    path.push(i.to_string());
                    floats_for_integers(item, item_schema, root, path, findings, depth + 1);
                    path.pop();
                }
            }
        }
        _ => {}
    }
}

fn check_span(
    doc: &Document,
    path: &[String],
    kind: &NodeKind,
    span: Range<usize>,
) -> Option<Diagnostic> {
    let json = match kind {
        NodeKind::String(s) => Value::String(s.clone()),
        NodeKind::Integer(i) => Value::String(i.to_string()),
        NodeKind::Float(f) => Value::String(f.to_string()),
        NodeKind::Table(_) => {
            let value = doc.node(path).map(crate::source::Node::to_json)?;
            return serde_json::from_value::<Span>(value).err().map(|err| {
                Diagnostic::error("accum::span", path.to_vec(), err.to_string())
                    .at(span, "not a span")
                    .with_fix_split()
            });
        }
        NodeKind::Null => return None,
        other => {
            return Some(
                Diagnostic::error(
                    "accum::span",
                    path.to_vec(),
                    format!(
                        "`{}` must be a span such as \"500 updates\", found {}",
                        dotted(path),
                        other.type_name()
                    ),
                )
                .at(span, "not a span"),
            );
        }
    };
    let text = json.as_str().unwrap_or_default();
    let bare_number = matches!(kind, NodeKind::Integer(_) | NodeKind::Float(_));
    let result = if bare_number {
        Err(accum_core::SpanError::BareNumber {
            number: text.to_owned(),
        })
    } else {
        text.parse::<Span>().map(|_| ())
    };
    result.err().map(|err| {
        let label = match err {
            accum_core::SpanError::Ambiguous { .. } | accum_core::SpanError::BareNumber { .. } => {
                "ambiguous unit"
            }
            _ => "not a span",
        };
        Diagnostic::error("accum::span", path.to_vec(), err.to_string())
            .at(span, label)
            .help(format!(
                "write the unit: e.g. \"{} updates\" (or microbatches, examples, tokens)",
                leading_number(text)
            ))
    })
}

fn leading_number(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_' || c == ','))
        .unwrap_or(text.len());
    if end == 0 { "500" } else { &text[..end] }
}

fn schema_finding(
    doc: &Document,
    path: Vec<String>,
    kind: &jsonschema::error::ValidationErrorKind,
    fallback: &str,
    instance: &Value,
) -> Diagnostic {
    use jsonschema::error::ValidationErrorKind as K;
    let at = dotted(&path);
    let span = doc.span_for(&path);
    match kind {
        K::AdditionalProperties { unexpected } => {
            let mut finding: Option<Diagnostic> = None;
            for key in unexpected {
                let mut key_path = path.clone();
                key_path.push(key.clone());
                let key_span = doc.key_span(&key_path).unwrap_or_else(|| span.clone());
                let f = Diagnostic::error(
                    "accum::schema::unknown-key",
                    key_path,
                    format!("unknown key `{key}` in {}", section_name(&path)),
                )
                .at(key_span, "not a known key");
                match &mut finding {
                    None => finding = Some(f),
                    Some(first) => first.secondary.push((
                        f.primary.map_or(0..0, |p| p.0),
                        format!("`{key}` is not a known key either"),
                    )),
                }
            }
            finding
                .unwrap_or_else(|| Diagnostic::error("accum::schema::unknown-key", path, fallback))
                .help("remove it or fix its spelling; `accum schema` lists every key")
        }
        K::Required { property } => {
            let key = property.as_str().unwrap_or("?").to_owned();
            let mut key_path = path.clone();
            key_path.push(key.clone());
            Diagnostic::error(
                "accum::schema::missing-key",
                key_path,
                format!("missing key `{key}` in {}", section_name(&path)),
            )
            .at(span, format!("`{key}` is required here"))
            .help(format!(
                "add `{key}` to {}; `accum schema` describes it",
                section_name(&path)
            ))
        }
        K::Type { kind } => Diagnostic::error(
            "accum::schema::type",
            path,
            format!(
                "`{at}` must be {}, found {}",
                type_words(kind),
                describe(instance)
            ),
        )
        .at(span, "wrong type"),
        K::Minimum { limit } | K::ExclusiveMinimum { limit } => Diagnostic::error(
            "accum::schema::range",
            path,
            format!(
                "`{at}` must be at least {}, found {}",
                min_words(kind, limit),
                describe(instance)
            ),
        )
        .at(span, "too small"),
        K::Maximum { limit } | K::ExclusiveMaximum { limit } => Diagnostic::error(
            "accum::schema::range",
            path,
            format!(
                "`{at}` must be at most {limit}, found {}",
                describe(instance)
            ),
        )
        .at(span, "too large"),
        K::Enum { options } => Diagnostic::error(
            "accum::schema::enum",
            path,
            format!(
                "`{at}` must be one of {}, found {}",
                options_words(options),
                describe(instance)
            ),
        )
        .at(span, "not an allowed value"),
        _ => {
            Diagnostic::error("accum::schema", path, format!("`{at}`: {fallback}")).at(span, "here")
        }
    }
}

fn section_name(path: &[String]) -> String {
    if path.is_empty() {
        "the top level".to_owned()
    } else {
        format!("[{}]", dotted(path))
    }
}

fn type_words(kind: &jsonschema::error::TypeKind) -> String {
    use jsonschema::error::TypeKind;
    let one = |t: &jsonschema::JsonType| match t.to_string().as_str() {
        "integer" => "an integer".to_owned(),
        "number" => "a number".to_owned(),
        "string" => "a string".to_owned(),
        "boolean" => "a boolean".to_owned(),
        "object" => "a table".to_owned(),
        "array" => "an array".to_owned(),
        "null" => "absent".to_owned(),
        other => other.to_owned(),
    };
    match kind {
        TypeKind::Single(t) => one(t),
        TypeKind::Multiple(ts) => {
            let words: Vec<String> = ts
                .iter()
                .filter(|t| t.to_string() != "null")
                .map(|t| one(&t))
                .collect();
            words.join(" or ")
        }
    }
}

fn min_words(kind: &jsonschema::error::ValidationErrorKind, limit: &Value) -> String {
    match (kind, limit.as_f64()) {
        (jsonschema::error::ValidationErrorKind::ExclusiveMinimum { .. }, Some(l))
            if l.fract() == 0.0 =>
        {
            format!("{}", l as i64 + 1)
        }
        (jsonschema::error::ValidationErrorKind::ExclusiveMinimum { .. }, _) => {
            format!("more than {limit}")
        }
        _ => limit.to_string(),
    }
}

fn options_words(options: &Value) -> String {
    match options.as_array() {
        Some(items) => items
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        None => options.to_string(),
    }
}

fn describe(value: &Value) -> String {
    match value {
        Value::Null => "nothing".into(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) => n.to_string(),
        Value::String(s) => {
            let shown: String = s.chars().take(40).collect();
            if shown.len() < s.len() {
                format!("string \"{shown}…\"")
            } else {
                format!("string \"{shown}\"")
            }
        }
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "a table".into(),
    }
}

fn role_value(instance: &Value, map: &SchemaMap, role: Role) -> Option<u64> {
    let path = map.path_of(role)?;
    let mut node = instance;
    for segment in path {
        node = node.get(segment)?;
    }
    node.as_u64()
}

/// Runs the plan rules on the role values that are well-formed integers
/// (R3): every zero, a layout that does not divide, then the declared global
/// batch and overflow. Roles with a structural error are left out, so that a
/// file with several mistakes still gets all of them reported.
fn plan_findings(
    doc: &Document,
    instance: &Value,
    map: &SchemaMap,
    broken: &[Vec<String>],
) -> Vec<Diagnostic> {
    let zeros: Vec<Role> = Role::ALL
        .into_iter()
        .filter(|&role| role_value(instance, map, role) == Some(0))
        .collect();
    let usable = |role: Role| {
        !zeros.contains(&role)
            && map.path_of(role).is_some_and(|p| {
                !broken
                    .iter()
                    .any(|b| p.starts_with(b) || b.starts_with(p) && !b.is_empty())
            })
    };
    let get = |role: Role| {
        if usable(role) {
            role_value(instance, map, role)
        } else {
            None
        }
    };
    let path_of = |role: Role| {
        map.path_of(role)
            .map(<[String]>::to_vec)
            .unwrap_or_default()
    };
    let span_of = |role: Role| doc.span_for(&path_of(role));
    let mut findings = Vec::new();
    for &role in &zeros {
        if map
            .path_of(role)
            .is_some_and(|p| !broken.iter().any(|b| p.starts_with(b)))
        {
            let err = PlanError::Zero { role };
            findings.push(
                Diagnostic::error("accum::plan::zero", path_of(role), err.message())
                    .help(err.fix().text)
                    .at(span_of(role), err.label()),
            );
        }
    }
    let layout = get(Role::WorldSize).map(|world| {
        Layout::new(
            world,
            get(Role::TensorParallel).unwrap_or(1),
            get(Role::PipelineParallel).unwrap_or(1),
            get(Role::ContextParallel).unwrap_or(1),
        )
    });
    if let Some(Err(err)) = layout.map(|l| l.replicas()) {
        let mut finding = Diagnostic::error(
            "accum::plan::layout",
            path_of(Role::WorldSize),
            err.to_string(),
        )
        .with_fix_split()
        .at(span_of(Role::WorldSize), "not divisible by tp·pp·cp");
        for factor in [
            Role::TensorParallel,
            Role::PipelineParallel,
            Role::ContextParallel,
        ] {
            if let Some(value) = get(factor) {
                finding = finding.also(span_of(factor), format!("{} {value}", factor.key()));
            }
        }
        findings.push(finding);
        return findings;
    }
    let all_usable = [
        Role::MicroBatch,
        Role::Accumulation,
        Role::Replicas,
        Role::WorldSize,
        Role::GlobalBatch,
    ]
    .into_iter()
    .all(|role| map.path_of(role).is_none() || usable(role));
    if !all_usable {
        return findings;
    }
    let input = PlanInput {
        micro_batch: get(Role::MicroBatch),
        accumulation: get(Role::Accumulation),
        replicas: get(Role::Replicas),
        layout,
        seq_len: get(Role::SeqLen),
        global_batch: get(Role::GlobalBatch),
    };
    let Err(err) = input.resolve() else {
        return findings;
    };
    let (role, code, label) = match &err {
        PlanError::Missing { role } => (*role, "accum::plan::missing", "missing".to_owned()),
        PlanError::Overflow { .. } => (
            Role::MicroBatch,
            "accum::plan::overflow",
            "product overflows".to_owned(),
        ),
        PlanError::GlobalBatchMismatch {
            micro_batch,
            accumulation,
            replicas,
            ..
        } => (
            Role::GlobalBatch,
            "accum::plan::global-batch",
            format!(
                "≠ {micro_batch} × {accumulation} × {replicas} = {}",
                micro_batch
                    .saturating_mul(*accumulation)
                    .saturating_mul(*replicas)
            ),
        ),
        PlanError::GlobalBatchNotDivisible { .. } => (
            Role::GlobalBatch,
            "accum::plan::global-batch",
            "not a multiple of m·D".to_owned(),
        ),
        PlanError::ReplicasDisagree { .. } => (
            Role::Replicas,
            "accum::plan::replicas",
            "disagrees with the layout".to_owned(),
        ),
        _ => (Role::MicroBatch, "accum::plan", "here".to_owned()),
    };
    let mut finding = Diagnostic::error(code, path_of(role), err.to_string())
        .with_fix_split()
        .at(span_of(role), label);
    if matches!(
        err,
        PlanError::GlobalBatchMismatch { .. } | PlanError::GlobalBatchNotDivisible { .. }
    ) {
        for factor in [
            Role::MicroBatch,
            Role::Accumulation,
            Role::Replicas,
            Role::WorldSize,
        ] {
            if let Some(value) = get(factor) {
                finding = finding.also(span_of(factor), format!("{} {value}", factor.key()));
            }
        }
    }
    if matches!(
        err,
        PlanError::Missing {
            role: Role::Replicas
        }
    ) {
        finding.help = Some(
            "give the data-parallel replicas, or a world size with its tensor/pipeline/context degrees".to_owned(),
        );
    }
    findings.push(finding);
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceFormat;

    fn schema() -> Value {
        serde_json::json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "additionalProperties": false,
            "required": ["batch"],
            "properties": {
                "batch": { "$ref": "#/$defs/Batch" },
                "parallel": { "anyOf": [{ "$ref": "#/$defs/Parallel" }, { "type": "null" }] },
                "schedule": {
                    "type": "object",
                    "additionalProperties": false,
                    "properties": { "warmup": { "$ref": "#/$defs/Span" } }
                }
            },
            "$defs": {
                "Batch": {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["micro_batch", "accumulation"],
                    "properties": {
                        "micro_batch": { "type": "integer", "minimum": 0, "x-accum-role": "micro_batch" },
                        "accumulation": { "type": "integer", "minimum": 0, "x-accum-role": "accumulation" },
                        "replicas": { "type": ["integer", "null"], "minimum": 0, "x-accum-role": "replicas" },
                        "global_batch": { "type": ["integer", "null"], "minimum": 0, "x-accum-role": "global_batch" }
                    }
                },
                "Parallel": {
                    "type": "object",
                    "properties": {
                        "world_size": { "type": "integer", "x-accum-role": "world_size" },
                        "tensor": { "type": "integer", "x-accum-role": "tensor_parallel" }
                    }
                },
                "Span": { "x-accum-unit": "span", "type": ["string", "object"] }
            }
        })
    }

    fn check(text: &str) -> Vec<Diagnostic> {
        let doc =
            Document::parse("t.toml".into(), text.into(), SourceFormat::Toml).expect("parses");
        let schema = schema();
        validate(&doc, &schema, &SchemaMap::from_schema(&schema), true).expect("valid schema")
    }

    #[test]
    fn finds_roles_and_spans_through_refs() {
        let map = SchemaMap::from_schema(&schema());
        assert_eq!(
            map.path_of(Role::MicroBatch),
            Some(&["batch".to_owned(), "micro_batch".to_owned()][..])
        );
        assert_eq!(
            map.path_of(Role::WorldSize),
            Some(&["parallel".to_owned(), "world_size".to_owned()][..])
        );
        assert_eq!(
            map.spans,
            vec![vec!["schedule".to_owned(), "warmup".to_owned()]]
        );
    }

    #[test]
    fn a_good_file_has_no_findings() {
        assert_eq!(
            check("[batch]\nmicro_batch = 2\naccumulation = 8\nreplicas = 2\nglobal_batch = 32\n"),
            vec![]
        );
    }

    #[test]
    fn every_mistake_is_reported_with_its_place() {
        let findings = check(
            "[batch]\nmicro_batch = \"8\"\naccumulation = 8\nreplicas = 2\nbogus = 1\n[schedule]\nwarmup = \"100 steps\"\n",
        );
        let codes: Vec<&str> = findings.iter().map(|f| f.code).collect();
        assert_eq!(
            codes,
            vec![
                "accum::schema::type",
                "accum::schema::unknown-key",
                "accum::span"
            ],
            "{findings:#?}"
        );
        assert!(
            findings[0]
                .message
                .contains("`batch.micro_batch` must be an integer, found string \"8\"")
        );
        assert!(findings[2].message.contains("is ambiguous"));
    }

    #[test]
    fn plan_mismatch_names_the_equation_and_the_factors() {
        let findings =
            check("[batch]\nmicro_batch = 2\naccumulation = 8\nreplicas = 2\nglobal_batch = 30\n");
        assert_eq!(findings.len(), 1, "{findings:#?}");
        let f = &findings[0];
        assert_eq!(f.code, "accum::plan::global-batch");
        assert_eq!(
            f.message,
            "global_batch 30 ≠ micro_batch 2 × accumulation 8 × replicas 2 = 32; 30 is not a multiple of m·D = 4"
        );
        assert_eq!(
            f.help.as_deref(),
            Some("use global_batch 28 (accumulation 7) or 32 (accumulation 8)")
        );
        assert_eq!(f.secondary.len(), 3);
    }

    #[test]
    fn missing_replicas_and_layouts() {
        let findings = check("[batch]\nmicro_batch = 2\naccumulation = 8\n");
        assert_eq!(findings[0].code, "accum::plan::missing");
        let findings = check(
            "[batch]\nmicro_batch = 2\naccumulation = 8\n[parallel]\nworld_size = 10\ntensor = 4\n",
        );
        assert_eq!(findings[0].code, "accum::plan::layout");
        assert_eq!(
            findings[0].path,
            vec!["parallel".to_owned(), "world_size".to_owned()]
        );
    }

    #[test]
    fn zero_is_a_plan_finding_at_the_value() {
        let findings = check("[batch]\nmicro_batch = 0\naccumulation = 8\nreplicas = 1\n");
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].code, "accum::plan::zero");
        assert_eq!(
            findings[0].primary.as_ref().map(|p| p.0.clone()),
            Some(22..23)
        );
    }
}
