//! `accum sheet --report` on a batch ramp-up: what the run trained in each
//! stage beside what the configuration plans, and the stage starts on the
//! plots of the run.

use serde_json::{Value, json};

use crate::{fixtures, run_in, scratch};

/// The three-stage fixture (`B` 16 → 32 → 64, fixed length, last group
/// dropped): every stage trains exactly what it plans, and the sheet says
/// so stage by stage.
#[test]
fn the_sheet_of_a_ramp_up_run_counts_each_stage_beside_its_plan() {
    let dir = scratch("sheet-rampup-run");
    std::fs::copy(fixtures().join("rampup.toml"), dir.join("rampup.toml")).expect("copy");
    let out = run_in(
        &dir,
        &["run", "rampup.toml", "--report", "run.json", "--quiet"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);

    let md = run_in(&dir, &["sheet", "rampup.toml", "--report", "run.json"]);
    assert_eq!(md.code, 0, "{}", md.stderr);
    let text = &md.stdout;
    let at = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("{needle} in {text}"))
    };
    assert!(at("## Trial") < at("### Trained per stage"));
    assert!(at("### Trained per stage") < at("### Loss against tokens"));
    for row in [
        "| stage | B | A | planned updates | planned examples | planned tokens | applied updates | skipped attempts | trained examples | trained supervised tokens |",
        // 20 updates of 16 × 32 tokens, 40 of 32, then 175 of 64.
        "| 1 | 16 | 2 | 20 | 320 | 10,240 | 20 | 0 | 320 | 10,240 |",
        "| 2 | 32 | 4 | 40 | 1,280 | 40,960 | 40 | 0 | 1,280 | 40,960 |",
        "| 3 | 64 | 8 | 175 | 11,200 | 358,400 | 175 | 0 | 11,200 | 358,400 |",
        "| all |  |  | 235 | 12,800 | 409,600 | 235 | 0 | 12,800 | 409,600 |",
    ] {
        assert!(text.contains(row), "{row}\n{text}");
    }

    let html = run_in(
        &dir,
        &[
            "sheet",
            "rampup.toml",
            "--report",
            "run.json",
            "--format",
            "html",
        ],
    );
    assert_eq!(html.code, 0, "{}", html.stderr);
    let trial = &html.stdout[html.stdout.find("<section id=\"trial\">").expect("a trial")..];
    assert!(trial.contains("<h3>Trained per stage</h3>"), "{trial}");
    for group in [
        "colspan=\"3\" class=\"group\">planned</th>",
        "colspan=\"4\" class=\"group\">trained</th>",
    ] {
        assert!(trial.contains(group), "{group}");
    }

    let json = run_in(
        &dir,
        &[
            "sheet",
            "rampup.toml",
            "--report",
            "run.json",
            "--format",
            "json",
        ],
    );
    assert_eq!(json.code, 0, "{}", json.stderr);
    let value: Value = serde_json::from_str(&json.stdout).expect("json");
    let stages = &value["trial"]["stages"];
    let rows = stages["rows"].as_array().expect("a row per stage");
    assert_eq!(rows.len(), 3);
    assert_eq!(
        rows[1]["planned"],
        json!({"updates": 40, "examples": 1280, "tokens": 40960})
    );
    let trained = &rows[1]["trained"];
    assert_eq!(
        (
            &trained["first_update"],
            &trained["applied_updates"],
            &trained["skipped"],
            &trained["examples"],
            &trained["tokens"],
            &trained["plan"]["accumulation"],
        ),
        (
            &json!(21),
            &json!(40),
            &json!(0),
            &json!(1280),
            &json!(40960),
            &json!(4)
        )
    );
    assert_eq!(
        stages["run"],
        json!({"applied_updates": 235, "skipped": 0, "examples": 12800, "tokens": 409600})
    );
    assert!(stages.get("notes").is_none(), "the run is as planned");
    // The loss is logged against tokens: stage 2 starts after 10,240 and
    // stage 3 after 10,240 + 40,960 tokens.
    let loss = &value["trial"]["charts"][0];
    assert_eq!(loss["id"], "loss");
    assert_eq!(
        loss["marks"]["at"],
        json!([{"x": 10240.0, "label": "B 32"}, {"x": 51200.0, "label": "B 64"}])
    );
}

/// Without a ramp-up the trial has no stages table and no stage marks.
#[test]
fn a_run_without_a_ramp_up_has_no_stages_table() {
    let dir = scratch("sheet-tiny-run");
    std::fs::copy(fixtures().join("tiny.toml"), dir.join("tiny.toml")).expect("copy");
    let out = run_in(
        &dir,
        &["run", "tiny.toml", "--report", "run.json", "--quiet"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let json = run_in(
        &dir,
        &[
            "sheet",
            "tiny.toml",
            "--report",
            "run.json",
            "--format",
            "json",
        ],
    );
    assert_eq!(json.code, 0, "{}", json.stderr);
    let value: Value = serde_json::from_str(&json.stdout).expect("json");
    assert!(value["trial"].get("stages").is_none());
    assert!(value["trial"]["charts"][0]["marks"].is_null());
    let md = run_in(&dir, &["sheet", "tiny.toml", "--report", "run.json"]);
    assert!(!md.stdout.contains("Trained per stage"), "{}", md.stdout);
}
