//! What editors and other tools see: `accum init`'s starter files, the
//! schema directive read by taplo (the engine of VS Code's Even Better TOML),
//! and the schema checked by third-party validators — the `jsonschema`
//! crate in strict mode, and `check-jsonschema` when it is installed — with
//! the same verdicts as `accum validate`.

use std::path::{Path, PathBuf};
use std::process::Command;

use accum_core::Code;
use accum_core::Family;
use serde_json::Value;

use crate::{fixtures, run_in, scratch, tool};

#[test]
fn init_writes_a_valid_starter_with_its_schema_and_never_overwrites() {
    let dir = scratch("init");
    let out = run_in(&dir, &["init"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stderr,
        "created accum.toml\n\
         created accum.schema.json (for editors; see docs/editors.md)\n\
         next: accum validate accum.toml\n"
    );
    let toml = std::fs::read_to_string(dir.join("accum.toml")).expect("written");
    assert!(toml.starts_with("#:schema ./accum.schema.json\n"), "{toml}");
    assert!(toml.contains("name = \"accum\""), "{toml}");
    let schema = std::fs::read_to_string(dir.join("accum.schema.json")).expect("written");
    assert_eq!(schema, run_in(&dir, &["schema"]).stdout);
    for file in ["train.yaml", "run.json"] {
        let out = run_in(&dir, &["init", file, "--name", "baseline"]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(
            out.stderr.contains("kept accum.schema.json"),
            "{}",
            out.stderr
        );
    }
    let out = run_in(&dir, &["validate", "accum.toml", "train.yaml", "run.json"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert_eq!(out.stdout, "accum.toml: ok\ntrain.yaml: ok\nrun.json: ok\n");
    // The run's name comes from --name, or the file's stem.
    let yaml = std::fs::read_to_string(dir.join("train.yaml")).expect("written");
    assert!(
        yaml.starts_with("# yaml-language-server: $schema=./accum.schema.json\n"),
        "{yaml}"
    );
    assert!(yaml.contains("  name: \"baseline\""), "{yaml}");

    std::fs::write(dir.join("accum.toml"), "mine\n").expect("write");
    let again = run_in(&dir, &["init"]);
    assert_eq!(again.code, 2);
    assert_eq!(
        again.stderr,
        "error: accum.toml: already exists; not overwritten\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("accum.toml")).expect("read"),
        "mine\n"
    );
    let out = run_in(&dir, &["init", "train.ini"]);
    assert_eq!(out.code, 2);
    assert!(!dir.join("train.ini").exists());
}

/// A scratch folder with the editors' fixtures and the schema beside them.
fn editors_dir(name: &str) -> PathBuf {
    let dir = scratch(name);
    for entry in std::fs::read_dir(fixtures().join("editors")).expect("fixtures") {
        let path = entry.expect("entry").path();
        std::fs::copy(&path, dir.join(path.file_name().expect("a name"))).expect("copy");
    }
    let out = run_in(&dir, &["schema", "-o", "accum.schema.json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    dir
}

#[test]
fn taplo_reads_the_schema_directive_and_agrees_with_validate() {
    let dir = editors_dir("taplo");
    let Some(taplo) = tool("taplo") else {
        return;
    };
    let check = |file: &str| {
        Command::new(&taplo)
            .arg("check")
            .arg(file)
            .current_dir(&dir)
            .env("RUST_LOG", "error")
            .output()
            .expect("taplo runs")
    };
    let good = check("good.toml");
    assert!(
        good.status.success(),
        "{}",
        String::from_utf8_lossy(&good.stderr)
    );
    assert_eq!(run_in(&dir, &["validate", "good.toml"]).code, 0);

    let bad = check("bad.toml");
    assert!(!bad.status.success());
    let said = String::from_utf8_lossy(&bad.stderr);
    // The directive resolved to the local schema: its keys, values and span
    // patterns are what taplo checks.
    assert!(said.contains("micro_bach"), "{said}");
    assert!(said.contains("per_tokens"), "{said}");
    assert!(said.contains("10 steps"), "{said}");
    let accum = run_in(&dir, &["validate", "bad.toml", "--format", "short"]);
    assert_eq!(accum.code, 1);
    assert_eq!(accum.stdout.lines().count(), 3, "{}", accum.stdout);

    // The starter of `accum init` passes too.
    let out = run_in(&dir, &["init", "starter.toml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let starter = check("starter.toml");
    assert!(
        starter.status.success(),
        "{}",
        String::from_utf8_lossy(&starter.stderr)
    );
}

/// Every configuration fixture of the CLI (not the other frameworks' files),
/// with its schema: the canonical one, or the custom example's.
fn corpus() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in [
        fixtures(),
        fixtures().join("mistakes"),
        fixtures().join("editors"),
    ] {
        for entry in std::fs::read_dir(&dir).expect("fixtures") {
            let path = entry.expect("entry").path();
            if path
                .extension()
                .is_some_and(|e| e == "toml" || e == "json" || e == "yaml")
            {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

fn is_custom(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("custom_"))
}

/// The file as a JSON instance, or `None` when it does not parse (a syntax
/// fixture: both sides refuse it before any schema).
fn instance(path: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(path).expect("readable");
    let mut value: Value = match path.extension().and_then(|e| e.to_str()) {
        Some("toml") => toml::from_str(&text).ok()?,
        Some("yaml") => serde_saphyr::from_str(&text).ok()?,
        _ => serde_json::from_str(&text).ok()?,
    };
    // Editors' directive, not configuration.
    if let Some(root) = value.as_object_mut() {
        root.remove("$schema");
    }
    Some(value)
}

/// Whether every plan role of `schema` has `minimum: 1`, so that a zero
/// factor is a structural error for any validator.
fn roles_are_at_least_one(schema: &Value) -> bool {
    fn walk(node: &Value, roles: &mut Vec<bool>) {
        match node {
            Value::Object(object) => {
                // A batch ramp-up field (`stages`, `ramp`) is no plan factor.
                let role = object.get("x-accum-role").and_then(Value::as_str);
                if role.is_some_and(|r| !matches!(r, "stages" | "ramp")) {
                    roles.push(object.get("minimum").and_then(Value::as_f64) >= Some(1.0));
                }
                object.values().for_each(|v| walk(v, roles));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, roles)),
            _ => {}
        }
    }
    let mut roles = Vec::new();
    walk(schema, &mut roles);
    !roles.is_empty() && roles.iter().all(|r| *r)
}

/// What accum says about the file's structure: whether any finding is one
/// a JSON Schema can express (everything but the plan arithmetic; a zero
/// factor too when the schema says `minimum: 1`).
fn accum_structural_errors(dir: &Path, path: &Path, custom: bool) -> bool {
    let out = if custom {
        crate::custom::custom()
            .current_dir(dir)
            .args(["validate", "--format", "json"])
            .arg(path)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .expect("runs")
    } else {
        run_in(
            dir,
            &["validate", "--format", "json", &path.display().to_string()],
        )
        .stdout
    };
    let json: Value = serde_json::from_str(&out).expect("json");
    json["files"][0]["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["severity"] == "error")
        .any(|f| {
            let code: Code = f["code"]
                .as_str()
                .and_then(|c| c.parse().ok())
                .expect("a finding has a code");
            matches!(code.family(), Family::Schema | Family::Syntax)
                || code == Code::Span
                || (code == Code::Zero && zero_is_structural(dir, custom))
        })
}

/// Whether the schema the file is checked against makes a zero factor a
/// structural error.
fn zero_is_structural(dir: &Path, custom: bool) -> bool {
    let out = if custom {
        crate::custom::custom()
            .arg("schema")
            .output()
            .map(|o| o.stdout)
            .expect("runs")
    } else {
        run_in(dir, &["schema"]).stdout.into_bytes()
    };
    roles_are_at_least_one(&serde_json::from_slice(&out).expect("a schema"))
}

/// The `jsonschema` crate, strictly: the schema must itself be a valid
/// 2020-12 schema, and every `format` it uses must be known and checked
/// (schemars' integer formats are checked by range).
fn strict_validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::meta::validate(schema).expect("a valid 2020-12 schema");
    let mut options = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .should_ignore_unknown_formats(false);
    for (name, min, max) in [
        ("uint8", 0.0, f64::from(u8::MAX)),
        ("uint16", 0.0, f64::from(u16::MAX)),
        ("uint32", 0.0, f64::from(u32::MAX)),
        ("uint64", 0.0, u64::MAX as f64),
        ("uint", 0.0, u64::MAX as f64),
        ("int32", f64::from(i32::MIN), f64::from(i32::MAX)),
        ("int64", i64::MIN as f64, i64::MAX as f64),
    ] {
        // A format applies to strings only: schemars puts these on numbers,
        // where they check nothing, but a strict validator must still know
        // every format it meets.
        options = options.with_format(name, move |text: &str| {
            text.parse::<f64>().is_ok_and(|n| (min..=max).contains(&n))
        });
    }
    for name in ["double", "float"] {
        options = options.with_format(name, |text: &str| text.parse::<f64>().is_ok());
    }
    options.build(schema).expect("the schema compiles strictly")
}

#[test]
fn a_strict_third_party_validator_agrees_with_validate() {
    let dir = scratch("third-party");
    let schema: Value = serde_json::from_str(&run_in(&dir, &["schema"]).stdout).expect("json");
    let custom_out = crate::custom::custom()
        .arg("schema")
        .output()
        .expect("runs");
    let custom_schema: Value = serde_json::from_slice(&custom_out.stdout).expect("json");
    let canonical = strict_validator(&schema);
    let custom = strict_validator(&custom_schema);
    let mut checked = 0;
    let mut refused = 0;
    for path in corpus() {
        let Some(value) = instance(&path) else {
            continue;
        };
        let validator = if is_custom(&path) {
            &custom
        } else {
            &canonical
        };
        let third_party_valid = validator.is_valid(&value);
        let accum_valid = !accum_structural_errors(&dir, &path, is_custom(&path));
        assert_eq!(
            third_party_valid,
            accum_valid,
            "{}: the jsonschema crate says {}, accum validate says {}: {:?}",
            path.display(),
            if third_party_valid {
                "valid"
            } else {
                "invalid"
            },
            if accum_valid { "valid" } else { "invalid" },
            validator
                .iter_errors(&value)
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
        );
        checked += 1;
        refused += usize::from(!third_party_valid);
    }
    assert!(checked >= 40, "{checked} files checked");
    assert!(refused >= 20, "{refused} files refused");
}

#[test]
fn check_jsonschema_agrees_with_validate() {
    let Some(program) = tool("check-jsonschema") else {
        return;
    };
    let dir = scratch("check-jsonschema");
    let out = run_in(&dir, &["schema", "-o", "accum.schema.json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let custom_out = crate::custom::custom()
        .arg("schema")
        .output()
        .expect("runs");
    std::fs::write(dir.join("custom.schema.json"), &custom_out.stdout).expect("write");
    // One run per schema, all its files at once: the JSON report names
    // the files with errors.
    let files: Vec<PathBuf> = corpus()
        .into_iter()
        .filter(|p| instance(p).is_some())
        .collect();
    for (schema, custom) in [("accum.schema.json", false), ("custom.schema.json", true)] {
        let group: Vec<&PathBuf> = files.iter().filter(|p| is_custom(p) == custom).collect();
        let out = Command::new(&program)
            .current_dir(&dir)
            .args(["--output-format", "JSON", "--schemafile", schema])
            .args(&group)
            .output()
            .expect("check-jsonschema runs");
        let report: Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
        let refused: Vec<&str> = report["errors"]
            .as_array()
            .into_iter()
            .flatten()
            .chain(report["parse_errors"].as_array().into_iter().flatten())
            .filter_map(|e| e["filename"].as_str())
            .collect();
        for path in group {
            let third_party_valid = !refused.contains(&path.to_string_lossy().as_ref());
            let accum_valid = !accum_structural_errors(&dir, path, custom);
            assert_eq!(
                third_party_valid,
                accum_valid,
                "{}: {}",
                path.display(),
                String::from_utf8_lossy(&out.stdout)
            );
        }
    }
}

/// An enum typo is one clean message in third-party validators, as in
/// `accum validate`: the schema's choices are one `enum` (with the
/// variants' descriptions beside it), not `oneOf` of `const`s, which made
/// check-jsonschema say "not valid under any of the given schemas" and
/// taplo give one error per alternative.
#[test]
fn an_enum_typo_is_one_message_in_other_validators() {
    let dir = scratch("enum-typo");
    let out = run_in(&dir, &["schema", "-o", "accum.schema.json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("accum.schema.json")).expect("read"),
    )
    .expect("json");
    let normalization = &schema["$defs"]["Normalization"];
    assert_eq!(
        normalization["enum"],
        serde_json::json!(["per_token", "per_example", "sum"])
    );
    assert_eq!(
        normalization["enumDescriptions"].as_array().map(Vec::len),
        Some(3)
    );
    std::fs::write(
        dir.join("typo.toml"),
        "#:schema ./accum.schema.json\n[batch]\nmicro_batch = 2\naccumulation = 8\nreplicas = 2\n\n[schedule]\nkind = \"cosin\"\n",
    )
    .expect("write");
    let accum = run_in(&dir, &["validate", "typo.toml", "--format", "short"]);
    assert_eq!(
        accum.stdout,
        "typo.toml:8:8: error[accum::schema::enum]: `schedule.kind` must be one of constant, linear, cosine, found string \"cosin\"\n"
    );
    if let Some(program) = tool("check-jsonschema") {
        let out = Command::new(program)
            .current_dir(&dir)
            .args(["--schemafile", "accum.schema.json", "typo.toml"])
            .output()
            .expect("check-jsonschema runs");
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(!out.status.success());
        assert!(
            said.contains("'cosin' is not one of ['constant', 'linear', 'cosine']"),
            "{said}"
        );
        assert!(!said.contains("any of the given schemas"), "{said}");
    }
    if let Some(taplo) = tool("taplo") {
        let out = Command::new(taplo)
            .current_dir(&dir)
            .args(["check", "typo.toml"])
            .env("RUST_LOG", "error")
            .output()
            .expect("taplo runs");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert_eq!(said.matches("error: ").count(), 1, "{said}");
        assert!(said.contains("\"cosin\" is not one of"), "{said}");
    }
}

/// An integral float at a count's place is read as that count, as JSON
/// Schema and the editors read it: the hostile file `micro_batch = 4.0`
/// validates and plans with m = 4.
#[test]
fn an_integral_float_is_the_integer_it_writes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/hostile");
    let out = run_in(&dir, &["validate", "float_integer.toml"]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, "float_integer.toml: ok\n")
    );
    let sheet = run_in(&dir, &["sheet", "float_integer.toml", "--format", "json"]);
    assert_eq!(sheet.code, 0, "{}", sheet.stderr);
    assert!(
        sheet.stdout.contains("\"micro_batch\": 4"),
        "{}",
        sheet.stdout
    );
}
