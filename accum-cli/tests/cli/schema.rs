//! `accum schema`.

use crate::{run_in, scratch};

#[test]
fn schema_is_2020_12_with_roles_and_units() {
    let out = run_in(&scratch("schema"), &["schema"]);
    assert_eq!(out.code, 0);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    assert_eq!(
        json["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    insta::assert_json_snapshot!(json);
}

/// Every property with a plan role, wherever it sits in the schema (a
/// batch ramp-up field, `stages` or `ramp`, is no plan factor).
fn role_properties(node: &serde_json::Value, out: &mut Vec<(String, serde_json::Value)>) {
    match node {
        serde_json::Value::Object(object) => {
            if let Some(role) = object
                .get("x-accum-role")
                .and_then(|r| r.as_str())
                .filter(|r| !matches!(*r, "stages" | "ramp"))
            {
                out.push((role.to_owned(), node.clone()));
            }
            object.values().for_each(|v| role_properties(v, out));
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| role_properties(v, out)),
        _ => {}
    }
}

/// Editors and validators find the schema by its `$id` and tell versions
/// apart; a plan factor of 0 is out of range for any of them, as for accum.
#[test]
fn the_schema_has_an_id_a_version_and_factors_of_at_least_one() {
    let dir = scratch("schema-id");
    let json: serde_json::Value =
        serde_json::from_str(&run_in(&dir, &["schema"]).stdout).expect("json");
    assert_eq!(json["$id"], "urn:accum:schema:v1:TrainingConfig");
    assert_eq!(json["x-accum-schema-version"], 1);
    let mut roles = Vec::new();
    role_properties(&json, &mut roles);
    let names: Vec<&str> = roles.iter().map(|(r, _)| r.as_str()).collect();
    for role in [
        "micro_batch",
        "accumulation",
        "replicas",
        "world_size",
        "tensor_parallel",
        "global_batch",
        "seq_len",
    ] {
        assert!(names.contains(&role), "{role} has no property: {names:?}");
    }
    for (role, property) in &roles {
        assert_eq!(property["minimum"], 1, "{role}: {property}");
    }
    // A user's binary gets the same for its own type.
    let out = crate::custom::custom()
        .arg("schema")
        .output()
        .expect("runs");
    let custom: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(custom["$id"], "urn:accum:schema:v1:Train");
    let mut roles = Vec::new();
    role_properties(&custom, &mut roles);
    assert!(roles.len() >= 4, "{roles:?}");
    assert!(roles.iter().all(|(_, p)| p["minimum"] == 1), "{roles:?}");
}

#[test]
fn schema_writes_atomically_to_a_file() {
    let dir = scratch("schema-out");
    let out = run_in(&dir, &["schema", "-o", "accum.schema.json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let text = std::fs::read_to_string(dir.join("accum.schema.json")).expect("written");
    assert!(text.contains("\"x-accum-role\": \"micro_batch\""));
    let out = run_in(&dir, &["schema", "-o", "missing-dir/s.json"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("missing-dir/s.json"), "{}", out.stderr);
}

#[test]
fn completions_cover_every_command() {
    let out = run_in(&scratch("completions"), &["completions", "bash"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    for command in [
        "calc", "schema", "validate", "replan", "sheet", "explain", "init", "run", "verify",
        "import", "export", "lint",
    ] {
        assert!(
            out.stdout.contains(command),
            "{command} missing from the bash completions"
        );
    }
    let out = run_in(&scratch("completions-bad"), &["completions", "tcsh"]);
    assert_eq!(out.code, 2);
}
