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
        "calc", "schema", "validate", "replan", "sheet", "run", "verify", "import", "export",
        "lint",
    ] {
        assert!(
            out.stdout.contains(command),
            "{command} missing from the bash completions"
        );
    }
    let out = run_in(&scratch("completions-bad"), &["completions", "tcsh"]);
    assert_eq!(out.code, 2);
}
