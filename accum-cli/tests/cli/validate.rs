//! `accum validate`: located diagnostics for every mistake, in every format.

use crate::{fixtures, run_in};

const MISTAKES: &[&str] = &[
    "wrong_type",
    "missing_key",
    "zero",
    "global_batch_mismatch",
    "world_not_divisible",
    "ambiguous_steps",
    "unknown_key",
    "bare_number_span",
    "bad_syntax",
];

#[test]
fn every_mistake_in_every_format_is_located() {
    let dir = fixtures().join("mistakes");
    for mistake in MISTAKES {
        for ext in ["toml", "json", "yaml"] {
            let file = format!("{mistake}.{ext}");
            let out = run_in(&dir, &["validate", &file]);
            assert_eq!(out.code, 1, "{file}: {}{}", out.stdout, out.stderr);
            assert!(
                out.stdout.starts_with(&format!("{file}:")),
                "{file}: {}",
                out.stdout
            );
            assert!(!out.stderr.contains("panicked"), "{file}: {}", out.stderr);
            insta::assert_snapshot!(format!("validate_{mistake}_{ext}"), out.stdout);
        }
    }
}

#[test]
fn several_mistakes_are_all_reported() {
    let out = run_in(&fixtures().join("mistakes"), &["validate", "several.toml"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stdout.ends_with("several.toml: 4 errors, 0 warnings\n"),
        "{}",
        out.stdout
    );
    insta::assert_snapshot!(out.stdout);
}

#[test]
fn json_output_has_stable_keys_and_locations() {
    let out = run_in(
        &fixtures().join("mistakes"),
        &["validate", "several.toml", "good.yaml", "--format", "json"],
    );
    assert_eq!(out.code, 1);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    insta::assert_json_snapshot!(json);
    let files = json["files"].as_array().expect("files");
    assert_eq!(files.len(), 2);
    assert_eq!(files[0]["errors"], 4);
    assert_eq!(files[1]["valid"], true);
    let first = &files[0]["findings"][0];
    assert_eq!(
        (first["line"].as_u64(), first["column"].as_u64()),
        (Some(5), Some(15))
    );
    assert_eq!(first["path"], "batch.micro_batch");
}

#[test]
fn good_files_pass_in_every_format() {
    let out = run_in(
        &fixtures().join("mistakes"),
        &["validate", "good.toml", "good.json", "good.yaml"],
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert_eq!(out.stdout, "good.toml: ok\ngood.json: ok\ngood.yaml: ok\n");
}

#[test]
fn the_examples_are_valid() {
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let out = run_in(
        &examples,
        &["validate", "quickstart.toml", "seed-calculator.toml"],
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
}

#[test]
fn io_problems_exit_2_naming_the_file() {
    let dir = fixtures();
    for (args, needle) in [
        (
            vec!["validate", "missing.toml"],
            "missing.toml: no such file",
        ),
        (vec!["validate", "mistakes"], "mistakes: is a directory"),
        (vec!["validate", "tiny.txt"], "tiny.txt: "),
    ] {
        let out = run_in(&dir, &args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(needle), "{args:?}: {}", out.stderr);
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn an_external_schema_drives_the_plan_rules() {
    let dir = crate::scratch("external-schema");
    let schema = run_in(&dir, &["schema"]).stdout;
    std::fs::write(dir.join("s.json"), schema).expect("write schema");
    std::fs::copy(
        fixtures().join("mistakes/global_batch_mismatch.toml"),
        dir.join("c.toml"),
    )
    .expect("copy");
    let out = run_in(&dir, &["validate", "--schema", "s.json", "c.toml"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stdout
            .contains("error[accum::plan::global-batch]: global_batch 30 ≠"),
        "{}",
        out.stdout
    );
}
