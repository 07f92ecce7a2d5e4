//! `accum import`, `accum export` and `accum lint` on the engines' files.

use std::path::{Path, PathBuf};

use crate::{run_in, scratch};

fn interop() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/interop")
}

#[test]
fn import_writes_a_config_that_validates() {
    let dir = scratch("import");
    let fixture = interop().join("deepspeed/correct.json");
    let out = run_in(
        &dir,
        &[
            "import",
            "deepspeed",
            fixture.to_str().expect("utf-8"),
            "--world-size",
            "8",
            "--examples",
            "5120",
            "-o",
            "train.toml",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = run_in(&dir, &["validate", "train.toml"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    // Exported back to DeepSpeed, then imported again: the same config.
    let out = run_in(
        &dir,
        &["export", "deepspeed", "train.toml", "-o", "ds.json"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let again = run_in(
        &dir,
        &[
            "import",
            "deepspeed",
            "ds.json",
            "--world-size",
            "8",
            "--examples",
            "5120",
        ],
    );
    assert_eq!(again.code, 0, "{}", again.stderr);
    let first = std::fs::read_to_string(dir.join("train.toml")).expect("read");
    let strip = |text: &str| {
        text.lines()
            .filter(|l| !l.starts_with("name") && !l.starts_with("notes"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip(&first), strip(&again.stdout));
}

#[test]
fn deepspeed_flooring_is_an_error_with_its_numbers() {
    let fixture = interop().join("deepspeed/floor_gas.json");
    let out = run_in(
        &scratch("lint-ds"),
        &[
            "lint",
            "deepspeed",
            fixture.to_str().expect("utf-8"),
            "--world-size",
            "8",
        ],
    );
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains(
            "DeepSpeed would floor: it sets gradient_accumulation_steps = 30 // 2 // 8 = 1"
        ),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("use global_batch 16 (accumulation 1) or 32 (accumulation 2)"),
        "{}",
        out.stderr
    );
    assert!(out.stdout.contains("3 errors"), "{}", out.stdout);
}

#[test]
fn lint_json_lists_findings_with_locations() {
    let fixture = interop().join("hf/warmup_ratio.json");
    let out = run_in(
        &scratch("lint-hf"),
        &[
            "lint",
            "hf",
            fixture.to_str().expect("utf-8"),
            "--num-processes",
            "4",
            "--format",
            "json",
        ],
    );
    let json: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    assert_eq!(json["framework"], "hf");
    let findings = json["findings"].as_array().expect("findings");
    assert!(!findings.is_empty());
    assert!(
        findings
            .iter()
            .all(|f| f["line"].as_u64().is_some_and(|l| l >= 1))
    );
    assert!(json["config"].is_null(), "lint prints no config");
}

#[test]
fn export_converts_schedules_into_the_engines_unit() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let out = run_in(&examples, &["export", "hf", "quickstart.toml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    assert_eq!(json["max_steps"], 300);
    assert_eq!(json["warmup_steps"], 20);
    assert_eq!(json["logging_steps"], 25);
    assert_eq!(json["per_device_train_batch_size"], 8);
    assert_eq!(json["gradient_accumulation_steps"], 4);
    let out = run_in(&examples, &["export", "megatron", "seed-calculator.toml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("--micro-batch-size 8"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("--global-batch-size 2048"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("--train-iters 12000"), "{}", out.stdout);
    // A partial last group DeepSpeed cannot handle is refused, with the fix.
    let out = run_in(&examples, &["export", "deepspeed", "quickstart.toml"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("use 3968 or 4032 examples"),
        "{}",
        out.stderr
    );
}

#[test]
fn bad_engine_names_and_files_are_usage_errors() {
    let dir = scratch("engines-bad");
    let out = run_in(&dir, &["import", "tensorflow", "x.json"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("tensorflow"), "{}", out.stderr);
    let out = run_in(&dir, &["lint", "deepspeed", "missing.json"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("missing.json: no such file"),
        "{}",
        out.stderr
    );
}
