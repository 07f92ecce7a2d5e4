//! Validation of a configuration file against a JSON Schema and the plan
//! rules, for the canonical config or *any* derived config: plan roles and
//! the batch ramp-up are found through `x-accum-role`, spans through
//! `x-accum-unit = "span"`, the lengths' uses through `x-accum-span`.
//!
//! Every finding is reported, not just the first, each with its location.

mod editors;
mod map;
mod plan;
mod schema;
mod span;
mod structure;

use serde_json::Value;

pub(crate) use editors::{enums_for_editors, solvable_factors_optional};
pub(crate) use map::SchemaMap;
pub(crate) use plan::finding_diagnostic;
pub(crate) use plan::{all_spans, values as plan_values};

use accum_core::plan::Role;
use accum_core::{Code, Family};

use crate::diagnostic::{Diagnostic, Severity};
use crate::source::Document;

/// A required key written with a typo is both missing and unknown; the
/// unknown key's "did you mean" already says both, so the missing-key
/// finding goes, whether the schema (`accum::schema::missing-key`) or the
/// plan rules (`accum::plan::missing`) found it.
fn fold_misspelt_keys(findings: &mut Vec<Diagnostic>) {
    const MISSING: [Code; 2] = [Code::MissingKey, Code::Missing];
    // Missing keys are few (the required keys of a section); unknown keys
    // may be thousands, each compared with the missing ones only.
    let missing_keys: Vec<&Diagnostic> = findings
        .iter()
        .filter(|f| MISSING.contains(&f.finding.code))
        .collect();
    if missing_keys.is_empty() {
        return;
    }
    let misspelt: std::collections::HashSet<Vec<String>> = findings
        .iter()
        .filter(|f| f.finding.code == Code::UnknownKey)
        .flat_map(|unknown| {
            let Some((key, section)) = unknown.finding.path.segments().split_last() else {
                return Vec::new();
            };
            missing_keys
                .iter()
                .filter(|f| {
                    f.finding
                        .path
                        .segments()
                        .split_last()
                        .is_some_and(|(name, parent)| {
                            parent == section
                                && crate::suggest::did_you_mean(key, [name.as_str()]).is_some()
                        })
                })
                .map(|missing| missing.finding.path.segments().to_vec())
                .collect()
        })
        .collect();
    findings.retain(|f| {
        !(MISSING.contains(&f.finding.code) && misspelt.contains(f.finding.path.segments()))
    });
}

/// Orders findings by their place in the file, except that when the file
/// has a structural error (a key or a value the schema refuses), the plan's
/// findings come after the structural ones: a plan computed without the
/// misspelt `tensor_parallel` finds a world size of 16 replicas, which is
/// the knock-on of the misspelling, not a second mistake.
fn order_causes_first(findings: &mut [Diagnostic]) {
    let derived = |d: &Diagnostic| matches!(d.finding.code.family(), Family::Plan | Family::Stages);
    let structural = findings
        .iter()
        .any(|d| d.finding.severity == Severity::Error && !derived(d));
    findings.sort_by_key(|d| {
        (
            structural && derived(d),
            d.location.range.as_ref().map_or(usize::MAX, |r| r.start),
        )
    });
}

/// A factor left out to be solved from the global batch, when the global
/// batch does not divide, is explained by the plan's finding, which names
/// the values that would: the missing-key finding goes.
fn fold_unsolved_factors(findings: &mut Vec<Diagnostic>, map: &SchemaMap) {
    if !findings.iter().any(|f| f.finding.code == Code::GlobalBatch) {
        return;
    }
    let solvable: Vec<&[String]> = [Role::Accumulation, Role::MicroBatch]
        .into_iter()
        .filter_map(|role| map.path_of(role))
        .collect();
    findings.retain(|f| {
        !(f.finding.code == Code::MissingKey && solvable.contains(&f.finding.path.segments()))
    });
}

/// Whether `instance` keeps to `schema` by the schema check alone; `Err`
/// when the schema is outside the subset the check reads, or a check
/// passed its bounds.
#[cfg(feature = "harness")]
pub(crate) fn schema_verdict(schema: &Value, instance: &Value) -> Result<bool, String> {
    schema::Checker::new(schema)?.is_valid(instance)
}

/// Reads a schema as the check will, before any file: the error names a
/// keyword outside the subset accum checks, or a malformed one, with its
/// JSON pointer.
pub(crate) fn read_schema(schema: &Value) -> Result<(), String> {
    schema::Checker::new(schema).map(drop)
}

/// The key editors read a JSON file's schema from (`"$schema": "…"`): a
/// directive for tools, not part of the configuration.
pub(crate) const SCHEMA_KEY: &str = "$schema";

/// The document as the JSON instance the schema and the type see: without
/// the editors' `"$schema"` directive, integral floats where the schema wants
/// an integer read as that integer (`8.0` is 8, as JSON Schema has it), and
/// an accumulation (or micro-batch) left out to be solved from the global
/// batch filled in with its exact solution.
pub(crate) fn instance(doc: &Document, schema: &Value, map: &SchemaMap) -> Value {
    let mut value = doc.to_json();
    if let Some(root) = value.as_object_mut()
        && root.get(SCHEMA_KEY).is_some_and(Value::is_string)
    {
        root.remove(SCHEMA_KEY);
    }
    let mut found = structure::IntegralFloats::default();
    structure::floats_for_integers(&doc.root, schema, schema, &mut Vec::new(), &mut found, 0);
    for (path, number) in found.integral {
        if let Some(slot) = path
            .iter()
            .try_fold(&mut value, |node, segment| match node {
                Value::Object(map) => map.get_mut(segment),
                Value::Array(items) => segment.parse::<usize>().ok().and_then(|i| items.get_mut(i)),
                _ => None,
            })
        {
            *slot = Value::Number(number);
        }
    }
    plan::solve_left_out(&mut value, map);
    value
}

/// Validates a document, whose JSON [`instance`] is given: structure against
/// the schema, then spans, then the plan. Returns every finding, in document
/// order.
/// With `plan_check`, the plan rules run on the role values found through the
/// schema; a typed caller runs the config's own validation instead, except
/// when structural findings keep the file from being typed.
pub(crate) fn validate(
    doc: &Document,
    instance: &Value,
    schema: &Value,
    map: &SchemaMap,
    plan_check: bool,
) -> Result<Vec<Diagnostic>, String> {
    let checker = schema::Checker::new(schema)?;
    let mut findings = Vec::new();

    // Spans first: their messages name the ambiguity, which a pattern
    // mismatch from the schema cannot.
    let mut span_paths_with_errors = Vec::new();
    for path in &map.spans {
        if let Some(node) = doc.node(path)
            && let Some(finding) = span::check_span(path, &node.kind, node.range.clone())
        {
            span_paths_with_errors.push(path.clone());
            findings.push(finding);
        }
    }
    // Typed counts written as text get the same help as spans, and a
    // length in another unit says which unit the field counts.
    for (path, unit) in &map.counts {
        if let Some(node) = doc.node(path)
            && let Some(finding) = span::check_count(path, &node.kind, node.range.clone(), *unit)
        {
            span_paths_with_errors.push(path.clone());
            findings.push(finding);
        }
    }

    let mut said: std::collections::HashSet<(accum_core::FieldPath, Code)> = findings
        .iter()
        .map(|f: &Diagnostic| (f.finding.path.clone(), f.finding.code))
        .collect();
    let errors = checker
        .errors(instance)
        .map_err(|err| format!("{}: {err}", doc.name))?;
    for error in errors {
        // A zero plan factor is below the schema's `minimum: 1`: the plan
        // rules report it (accum::plan::zero), with its fix.
        if matches!(error.kind, schema::ErrorKind::Minimum { .. })
            && error.instance.as_u64() == Some(0)
            && map.roles.iter().any(|(_, p)| *p == error.path)
        {
            continue;
        }
        for diagnostic in structure::schema_diagnostics(doc, schema, map, &error) {
            // A set of what is said, not a scan of the findings: a file may
            // have thousands of unknown keys.
            let known = !said.insert((diagnostic.finding.path.clone(), diagnostic.finding.code))
                || span_paths_with_errors
                    .iter()
                    .any(|p| diagnostic.finding.path.segments().starts_with(p));
            if !known {
                findings.push(diagnostic);
            }
        }
    }

    let mut floats = structure::IntegralFloats::default();
    structure::floats_for_integers(&doc.root, schema, schema, &mut Vec::new(), &mut floats, 0);
    // A float inside a value already found wrong is said by that finding:
    // each prefix of its path is looked up in a set (the path's length,
    // not the findings' count).
    let found: std::collections::HashSet<&[String]> =
        findings.iter().map(|f| f.finding.path.segments()).collect();
    let fresh: Vec<Diagnostic> = floats
        .diagnostics
        .into_iter()
        .filter(|d| {
            let path = d.finding.path.segments();
            !(0..=path.len()).any(|n| found.contains(&path[..n]))
        })
        .collect();
    findings.extend(fresh);

    // A factor still left out after solving is the plan rules' to explain
    // (missing, or a global batch that does not divide), before any typing.
    let left_out = [Role::Accumulation, Role::MicroBatch]
        .into_iter()
        .any(|role| {
            map.path_of(role)
                .is_some_and(|path| plan::value_at(instance, path).is_none_or(Value::is_null))
        });
    if (plan_check || left_out || !findings.is_empty()) && !map.roles.is_empty() {
        let broken: Vec<Vec<String>> = findings
            .iter()
            .map(|f| f.finding.path.segments().to_vec())
            .collect();
        findings.extend(plan::plan_findings(doc, instance, map, &broken));
    }
    fold_misspelt_keys(&mut findings);
    fold_unsolved_factors(&mut findings, map);

    order_causes_first(&mut findings);
    Ok(findings)
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
        check_with(&schema(), text, true)
    }

    /// The findings of a TOML `text` against `schema`.
    fn check_with(schema: &Value, text: &str, plan_check: bool) -> Vec<Diagnostic> {
        let doc =
            Document::parse("t.toml".into(), text.into(), SourceFormat::Toml).expect("parses");
        validate(
            &doc,
            &instance(&doc, schema, &SchemaMap::from_schema(schema)),
            schema,
            &SchemaMap::from_schema(schema),
            plan_check,
        )
        .expect("a schema")
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
        let codes: Vec<Code> = findings.iter().map(|f| f.finding.code).collect();
        assert_eq!(
            codes,
            vec![Code::SchemaType, Code::UnknownKey, Code::Span],
            "{findings:#?}"
        );
        assert!(
            findings[0]
                .finding
                .message
                .contains("`batch.micro_batch` must be an integer, found string \"8\"")
        );
        assert!(findings[2].finding.message.contains("is ambiguous"));
    }

    #[test]
    fn plan_mismatch_names_the_equation_and_the_factors() {
        let findings =
            check("[batch]\nmicro_batch = 2\naccumulation = 8\nreplicas = 2\nglobal_batch = 30\n");
        assert_eq!(findings.len(), 1, "{findings:#?}");
        let f = &findings[0];
        assert_eq!(f.finding.code, Code::GlobalBatch);
        assert_eq!(
            f.finding.message,
            "global_batch 30 ≠ micro_batch 2 × accumulation 8 × replicas 2 = 32; 30 is not a multiple of m·D = 4"
        );
        assert_eq!(
            f.help_text(),
            Some(
                "keep global_batch = 30 with micro_batch = 1 and accumulation = 15; or use global_batch = 28 (accumulation = 7) or 32 (accumulation = 8)"
            )
        );
        assert_eq!(f.finding.related.len(), 3);
        assert_eq!(f.location.related.len(), 3);
        // Each way out is an edit of the file, for a person to choose.
        let fixes: Vec<&str> = f.fixes.iter().map(|s| s.message.as_str()).collect();
        assert_eq!(
            fixes,
            [
                "set batch.micro_batch = 1, batch.accumulation = 15",
                "set batch.global_batch = 28, batch.accumulation = 7",
                "set batch.global_batch = 32, batch.accumulation = 8",
            ]
        );
        assert!(
            f.fixes
                .iter()
                .all(|s| s.applicability == crate::fix::Applicability::Review)
        );
    }

    #[test]
    fn missing_replicas_and_layouts() {
        let findings = check("[batch]\nmicro_batch = 2\naccumulation = 8\n");
        assert_eq!(findings[0].finding.code, Code::Missing);
        let findings = check(
            "[batch]\nmicro_batch = 2\naccumulation = 8\n[parallel]\nworld_size = 10\ntensor = 4\n",
        );
        assert_eq!(findings[0].finding.code, Code::Layout);
        assert_eq!(
            findings[0].finding.path.segments(),
            ["parallel", "world_size"]
        );
    }

    #[test]
    fn zero_is_a_plan_finding_at_the_value() {
        let findings = check("[batch]\nmicro_batch = 0\naccumulation = 8\nreplicas = 1\n");
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].finding.code, Code::Zero);
        assert_eq!(findings[0].location.range, Some(22..23));
    }

    #[test]
    fn validator_errors_are_said_in_our_words() {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {
                "mode": { "enum": ["fp32", "bf16", "fp16"] },
                "lr": { "type": "number", "exclusiveMaximum": 1 },
                "betas": { "type": "array", "minItems": 2, "uniqueItems": true },
                "tag": { "type": "string", "pattern": "^[a-z]+$" },
                "seed": { "not": { "const": 13 } }
            }
        });
        let findings = check_with(
            &schema,
            "mode = \"fp61\"\nlr = 2.0\nbetas = [0.9]\ntag = \"A\"\nseed = 13\n",
            false,
        );
        let said: Vec<(Code, &str)> = findings
            .iter()
            .map(|f| (f.finding.code, f.finding.message.as_str()))
            .collect();
        assert_eq!(
            said,
            vec![
                (
                    Code::SchemaEnum,
                    "`mode` must be one of fp32, bf16, fp16, found string \"fp61\""
                ),
                (Code::SchemaRange, "`lr` must be less than 1, found 2.0"),
                (
                    Code::SchemaRange,
                    "`betas` must have at least 2 items, found an array of 1 item"
                ),
                (
                    Code::Schema,
                    "`tag` must match the pattern `^[a-z]+$`, found string \"A\""
                ),
                (
                    Code::Schema,
                    "`seed` does not have the form the schema describes"
                ),
            ]
        );
        assert_eq!(findings[0].help_text(), Some("did you mean \"fp16\"?"));
        assert_eq!(
            findings[4].help_text(),
            Some("`accum schema` describes `seed`")
        );
    }

    #[test]
    fn a_zero_factor_below_the_schemas_minimum_is_the_plan_rules_finding() {
        let mut schema = schema();
        schema["$defs"]["Batch"]["properties"]["accumulation"]["minimum"] = 1.into();
        let findings = check_with(
            &schema,
            "[batch]\nmicro_batch = 2\naccumulation = 0\nreplicas = 1\n",
            true,
        );
        let codes: Vec<Code> = findings.iter().map(|f| f.finding.code).collect();
        assert_eq!(codes, vec![Code::Zero], "{findings:#?}");
        assert_eq!(
            findings[0].help_text(),
            Some("set `batch.accumulation` to 1 or more")
        );
    }

    /// The instance a TOML `text` is typed from.
    fn instance_of(text: &str) -> Value {
        let doc =
            Document::parse("t.toml".into(), text.into(), SourceFormat::Toml).expect("parses");
        instance(&doc, &schema(), &SchemaMap::from_schema(&schema()))
    }

    #[test]
    fn a_left_out_factor_is_solved_from_the_global_batch() {
        let text = "[batch]\nmicro_batch = 8\nreplicas = 2\nglobal_batch = 96\n";
        assert_eq!(check(text), vec![]);
        assert_eq!(instance_of(text)["batch"]["accumulation"], 6);
        // The micro-batch too, and through a layout.
        let text = "[batch]\naccumulation = 4\nglobal_batch = 96\n[parallel]\nworld_size = 24\ntensor = 4\n";
        assert_eq!(instance_of(text)["batch"]["micro_batch"], 4);
        // Given factors are never overwritten.
        let text = "[batch]\nmicro_batch = 8\naccumulation = 5\nreplicas = 2\nglobal_batch = 96\n";
        assert_eq!(instance_of(text)["batch"]["accumulation"], 5);
    }

    #[test]
    fn a_global_batch_that_does_not_divide_is_the_one_finding() {
        let findings = check("[batch]\nmicro_batch = 8\nreplicas = 2\nglobal_batch = 100\n");
        let codes: Vec<Code> = findings.iter().map(|f| f.finding.code).collect();
        assert_eq!(codes, vec![Code::GlobalBatch], "{findings:#?}");
        // The help gives the value each alternative solves the factor to.
        assert_eq!(
            findings[0].help_text(),
            Some(
                "keep global_batch = 100 with micro_batch = 5 and accumulation = 10, or micro_batch × accumulation = 2 × 25 or 1 × 50; or use global_batch = 96 (accumulation = 6) or 112 (accumulation = 7)"
            )
        );
        let findings = check("[batch]\naccumulation = 3\nreplicas = 2\nglobal_batch = 100\n");
        assert_eq!(
            findings[0].help_text(),
            Some(
                "keep global_batch = 100 with micro_batch = 25 and accumulation = 2, or micro_batch × accumulation = 10 × 5, 50 × 1 or 5 × 10; or use global_batch = 96 (micro_batch = 16) or 102 (micro_batch = 17)"
            )
        );
        assert_eq!(
            instance_of("[batch]\nmicro_batch = 8\nreplicas = 2\nglobal_batch = 100\n")["batch"]
                .get("accumulation"),
            None
        );
        // Without a global batch, the missing key is the finding.
        let findings = check("[batch]\nmicro_batch = 8\nreplicas = 2\n");
        let codes: Vec<Code> = findings.iter().map(|f| f.finding.code).collect();
        assert_eq!(codes, vec![Code::MissingKey], "{findings:#?}");
    }

    #[test]
    fn a_misspelt_required_key_is_one_finding() {
        for text in [
            "[batch]\nmicro_bach = 8\naccumulation = 4\nreplicas = 2\n",
            "[batch]\nmicro_batch = 8\naccumulaton = 4\nreplicas = 2\n",
            "[batch]\nmicro_batch = 8\naccumulation = 4\nreplica = 2\n",
        ] {
            let findings = check(text);
            let codes: Vec<Code> = findings.iter().map(|f| f.finding.code).collect();
            assert_eq!(codes, vec![Code::UnknownKey], "{text}: {findings:#?}");
        }
    }

    #[test]
    fn integral_floats_read_as_integers_like_json_schema() {
        let text = "[batch]\nmicro_batch = 8.0\naccumulation = 4\nreplicas = 2e0\n";
        assert_eq!(check(text), vec![]);
        let value = instance_of(text);
        assert_eq!(value["batch"]["micro_batch"], 8);
        assert!(value["batch"]["micro_batch"].is_u64());
        assert_eq!(value["batch"]["replicas"], 2);
        let findings = check("[batch]\nmicro_batch = 8.5\naccumulation = 4\nreplicas = 1\n");
        assert_eq!(findings[0].finding.code, Code::SchemaType, "{findings:#?}");
        let findings = check("[batch]\nmicro_batch = 1e30\naccumulation = 4\nreplicas = 1\n");
        assert_eq!(findings[0].finding.code, Code::SchemaRange, "{findings:#?}");
        assert_eq!(
            findings[0].finding.message,
            "`batch.micro_batch` is 1e30, larger than any count accum can hold"
        );
    }
}
