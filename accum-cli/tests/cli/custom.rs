//! `accum_cli::run::<T>()` in a user's binary (the `custom_config` example).

use std::path::PathBuf;

use assert_cmd::Command;

use crate::fixtures;

pub(crate) fn custom() -> Command {
    // Examples are built next to the test binaries (target/<profile>/examples).
    let exe = std::env::current_exe().expect("test exe");
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>");
    let path: PathBuf = profile_dir
        .join("examples")
        .join(format!("custom_config{}", std::env::consts::EXE_SUFFIX));
    let mut cmd = Command::new(path);
    cmd.env("NO_COLOR", "1").current_dir(fixtures());
    cmd
}

#[test]
fn a_user_binary_gets_schema_validate_and_sheet() {
    let out = custom().arg("schema").output().expect("runs");
    assert!(out.status.success());
    let schema: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    insta::assert_json_snapshot!("custom_schema", schema);

    let out = custom()
        .args(["validate", "custom_good.toml"])
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    let out = custom()
        .args(["validate", "custom_bad.toml"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("error[accum::plan::global-batch]: global_batch 30 ≠ micro_batch 4 × accumulation 4 × replicas 2 = 32"),
        "{text}"
    );
    assert!(text.contains(" --> custom_bad.toml:3:16\n"), "{text}");
    assert!(
        text.contains("error[accum::span]: `100 steps` is ambiguous"),
        "{text}"
    );
    assert!(text.contains(" --> custom_bad.toml:4:10\n"), "{text}");

    let out = custom()
        .args(["sheet", "custom_good.toml"])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sheet = String::from_utf8_lossy(&out.stdout);
    assert!(
        sheet.contains("| effective batch B | 32 examples | B = m·A·D = 4 × 4 × 2 = 32 |"),
        "{sheet}"
    );
    assert!(
        sheet.contains("| warmup | 40 microbatches | = 10 updates"),
        "{sheet}"
    );
}

/// The commands a user's binary has.
const COMMON: [&str; 8] = [
    "calc",
    "schema",
    "validate",
    "replan",
    "sheet",
    "compare",
    "explain",
    "completions",
];

/// The commands only `accum` has.
const ACCUM_ONLY: [&str; 6] = ["init", "run", "verify", "import", "export", "lint"];

/// A user's binary speaks in its own name and offers only its commands: no
/// `accum …` command line, and no command it does not have.
#[test]
fn a_user_binary_names_itself_and_only_its_commands() {
    let help = |args: &[&str]| {
        let out = custom().args(args).output().expect("runs");
        assert!(out.status.success(), "{args:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let top = help(&["--help"]);
    let commands = crate::wording::subcommands(&top);
    assert_eq!(commands, COMMON);
    let everything = COMMON.iter().chain(&ACCUM_ONLY);
    for command in std::iter::once("").chain(COMMON) {
        let text = if command.is_empty() {
            top.clone()
        } else {
            help(&[command, "--help"])
        };
        assert!(text.contains("custom_config "), "{command}: {text}");
        for other in everything.clone() {
            assert!(
                !text.contains(&format!("accum {other}")),
                "{command} says `accum {other}`: {text}"
            );
        }
        for absent in ACCUM_ONLY {
            assert!(
                !text.contains(&format!("custom_config {absent}")),
                "{command} offers {absent}: {text}"
            );
        }
    }
    // Messages too: a file with findings points to the binary's own validate.
    let out = custom()
        .args(["sheet", "custom_bad.toml"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.ends_with("error: custom_bad.toml: 2 errors (run `custom_config validate custom_bad.toml` for details)\n"), "{said}");
}

/// A section that ignores unknown keys (serde's default) still hears about
/// a misspelt one: a warning with the key it most likely means; the file
/// stays valid.
#[test]
fn an_ignored_key_is_a_warning_with_a_suggestion() {
    let out = custom()
        .args(["validate", "custom_typo.toml", "--format", "json"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let file = &json["files"][0];
    assert_eq!(
        (file["errors"].as_u64(), file["warnings"].as_u64()),
        (Some(0), Some(1))
    );
    let finding = &file["findings"][0];
    assert_eq!(finding["severity"], "warning");
    assert_eq!(finding["code"], "accum::schema::unknown-key");
    assert_eq!(finding["path"], "optim.wieght_decay");
    assert_eq!(
        finding["message"],
        "unknown key `wieght_decay` in [optim] is ignored"
    );
    assert_eq!(finding["help"], "did you mean `weight_decay`?");
    assert_eq!(
        (finding["line"].as_u64(), finding["column"].as_u64()),
        (Some(10), Some(1))
    );
}

/// A plain-Rust loop of the user's own on `custom_good.toml` (m 4 × A 4 ×
/// D 2, warmup 40 microbatches = 10 updates), driven by accum's driver with
/// the config's plan and a cosine schedule, writing `run.json` through the
/// recorder in a scratch folder `name`, with the config's provenance; the
/// folder and the losses of its updates.
fn custom_loop(name: &str) -> (PathBuf, Vec<f64>) {
    use accum::Updates;
    use accum::driver::{Driver, Outcome, Recorder, Step};
    use accum::plan::Plan;
    use accum::report::Provenance;
    use accum::schedule::Schedule;
    use accum::settings::{Normalization, ScheduleKind};

    let dir = crate::scratch(name);
    std::fs::copy(
        fixtures().join("custom_good.toml"),
        dir.join("custom_good.toml"),
    )
    .expect("copy");
    let plan = Plan::new(4, 4, 2).expect("the config's plan");
    let schedule = Schedule::new(
        ScheduleKind::Cosine,
        3e-4,
        Updates::new(10),
        Updates::new(30),
    );
    let mut driver = Driver::builder(plan, 200)
        .schedule(schedule)
        .build()
        .expect("a driver");
    let report = dir.join("run.json");
    let config = dir.join("custom_good.toml");
    let bytes = std::fs::read(&config).expect("the config");
    let mut recorder = Recorder::new(&driver, Normalization::PerToken)
        .provenance(Provenance::default().with_config(&config, &bytes, Some("custom loop")))
        .stream_beside(&report)
        .expect("a stream");
    let mut losses = Vec::new();
    while let Some(mut group) = driver.next_group().expect("a group") {
        group.count_all(|id| 8 + (id as u64 % 5));
        let loss = 3.0 / (1.0 + group.attempt() as f64).sqrt();
        losses.push(loss);
        recorder
            .finish(
                &mut driver,
                group,
                Outcome::Applied,
                Step::loss(loss).grad_norm(0.5),
            )
            .expect("recorded");
    }
    recorder.write(&driver, &report).expect("written");
    (dir, losses)
}

/// A plain-Rust loop of the user's own writes a run report through the
/// recorder; the user's binary renders its sheet with the loss of every
/// update and the learning rate the loop used, though the config type has
/// no schedule accum knows of.
#[test]
fn a_user_binary_sheets_the_report_of_its_own_loop() {
    let (dir, losses) = custom_loop("custom-report");
    let out = custom()
        .current_dir(&dir)
        .args([
            "sheet",
            "custom_good.toml",
            "--report",
            "run.json",
            "--format",
            "json",
        ])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sheet: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let charts = sheet["trial"]["charts"].as_array().expect("charts");
    let ids: Vec<&str> = charts.iter().filter_map(|c| c["id"].as_str()).collect();
    assert_eq!(ids, ["loss", "lr", "grad-norm"]);
    let loss: Vec<f64> = charts[0]["series"][0]["points"]
        .as_array()
        .expect("points")
        .iter()
        .filter_map(|p| p[1].as_f64())
        .collect();
    assert_eq!(loss, losses, "every update, from the first");
    let lr = charts[1]["series"][0]["points"].as_array().expect("lr");
    assert_eq!(lr.len(), 30);
    let tenth = lr[9][1].as_f64().expect("a rate");
    assert!(
        (tenth - 2.7e-4).abs() < 1e-15,
        "the warmup's tenth update: {tenth}"
    );
    assert_eq!(lr[10][1].as_f64(), Some(3e-4), "the peak after the warmup");
    let cards = sheet["summary"]["cards"].as_array().expect("cards");
    let loss_card = cards
        .iter()
        .find(|c| c["label"] == "loss")
        .expect("a loss card");
    // The exact first, final and minimum loss; 30 updates make windows of
    // one update, so no windowed means.
    assert_eq!(
        loss_card["detail"],
        format!(
            "first → final applied update, exact; minimum {:.4}",
            losses[losses.len() - 1]
        )
    );
    assert!(!cards.iter().any(|c| c["label"] == "loss, windowed means"));
}

/// The stock `accum` renders the report of a user's own config type
/// through the type's schema (`sheet --schema`): the same sheet, figure for
/// figure, as the type's own binary renders, with the run's provenance in
/// its header; without the schema, the built-in one refuses the file.
#[test]
fn the_stock_binary_sheets_a_users_own_run_through_its_schema() {
    let (dir, losses) = custom_loop("custom-stock");
    let schema = custom()
        .current_dir(&dir)
        .args(["schema", "-o", "custom.schema.json"])
        .output()
        .expect("runs");
    assert!(schema.status.success());
    let args = [
        "sheet",
        "custom_good.toml",
        "--report",
        "run.json",
        "--format",
        "json",
    ];
    let own = custom()
        .current_dir(&dir)
        .args(args)
        .output()
        .expect("runs");
    assert!(
        own.status.success(),
        "{}",
        String::from_utf8_lossy(&own.stderr)
    );
    let stock = crate::run_in(
        &dir,
        &[&args[..], &["--schema", "custom.schema.json"]].concat(),
    );
    assert_eq!(stock.code, 0, "{}", stock.stderr);
    let own: serde_json::Value = serde_json::from_slice(&own.stdout).expect("json");
    let stock: serde_json::Value = serde_json::from_str(&stock.stdout).expect("json");
    assert_eq!(stock, own, "the stock binary's sheet is the type's own");
    let loss: Vec<f64> = stock["trial"]["charts"][0]["series"][0]["points"]
        .as_array()
        .expect("points")
        .iter()
        .filter_map(|p| p[1].as_f64())
        .collect();
    assert_eq!(loss, losses);
    assert_eq!(stock["provenance"]["run_name"], "custom loop");
    let md = crate::run_in(
        &dir,
        &[
            "sheet",
            "custom_good.toml",
            "--report",
            "run.json",
            "--schema",
            "custom.schema.json",
        ],
    );
    assert_eq!(md.code, 0, "{}", md.stderr);
    assert!(
        md.stdout
            .contains("| effective batch B | 32 examples | B = m·A·D = 4 × 4 × 2 = 32 |"),
        "{}",
        md.stdout
    );
    assert!(
        md.stdout.contains("\nRun: run custom loop · started "),
        "{}",
        md.stdout
    );
    // The built-in schema does not describe the user's type.
    let builtin = crate::run_in(&dir, &["sheet", "custom_good.toml", "--report", "run.json"]);
    assert_eq!(builtin.code, 1, "{}", builtin.stderr);
}

/// A report of another configuration is refused with what differs (its
/// plan); `--force` renders it under a banner that says so, and that the
/// configuration file is not the one the run read (its hash).
#[test]
fn a_report_of_another_configuration_is_refused() {
    let (dir, _) = custom_loop("custom-mismatch");
    custom()
        .current_dir(&dir)
        .args(["schema", "-o", "custom.schema.json"])
        .assert()
        .success();
    let edited = std::fs::read_to_string(dir.join("custom_good.toml"))
        .expect("config")
        .replace("micro_batch_size = 4", "micro_batch_size = 2")
        .replace("global_batch = 32", "global_batch = 16");
    std::fs::write(dir.join("custom_good.toml"), edited).expect("write");
    let args = [
        "sheet",
        "custom_good.toml",
        "--report",
        "run.json",
        "--schema",
        "custom.schema.json",
    ];
    let out = crate::run_in(&dir, &args);
    assert_eq!(out.code, 1, "{}", out.stdout);
    let said = out.stderr.trim_end();
    assert!(
        said.starts_with(
            "error: run.json is not a report of custom_good.toml: the report's plan is m 4 × A 4 × D 2 = B 32; custom_good.toml plans m 2 × A 4 × D 2 = B 16; the report was written from a configuration ("
        ),
        "{said}"
    );
    assert!(
        said.ends_with("; give the report of a run of custom_good.toml, or add --force to render it under a banner that says so"),
        "{said}"
    );
    let forced = crate::run_in(&dir, &[&args[..], &["--force"]].concat());
    assert_eq!(forced.code, 0, "{}", forced.stderr);
    assert!(
        forced.stdout.contains(
            "> **The run report does not belong to this configuration** (rendered with `--force`)"
        ),
        "{}",
        forced.stdout
    );
    assert!(
        forced
            .stdout
            .contains("> - the report's plan is m 4 × A 4 × D 2 = B 32; custom\\_good.toml plans m 2 × A 4 × D 2 = B 16\n"),
        "{}",
        forced.stdout
    );
    assert!(
        forced
            .stdout
            .contains("> - the report was written from a configuration ("),
        "{}",
        forced.stdout
    );
    // The same file, edited where the plan does not change: rendered, with
    // a note that it changed since the run.
    let (dir, _) = custom_loop("custom-edited");
    custom()
        .current_dir(&dir)
        .args(["schema", "-o", "custom.schema.json"])
        .assert()
        .success();
    let edited = std::fs::read_to_string(dir.join("custom_good.toml"))
        .expect("config")
        .replace("lr = 3e-4", "lr = 1e-3");
    std::fs::write(dir.join("custom_good.toml"), edited).expect("write");
    let out = crate::run_in(&dir, &args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("> **The configuration file changed since the run**; its plan and length did not: the report was written from a configuration ("),
        "{}",
        out.stdout
    );
}
