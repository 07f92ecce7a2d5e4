//! The sheet of the burn loop's own run: the example trains with its config
//! type (`train.json`, `TrainConfig`, a burn and an accum config on one
//! struct), writes accum's run report through the driver's recorder, and
//! its own binary (`accum_cli::run::<TrainConfig>()`) renders the sheet —
//! with the loss of every update and the learning rate the run used.

use std::path::{Path, PathBuf};
use std::process::Command;

use accum_burn_example::{Corpus, TrainConfig, train_with_report};
use serde_json::Value;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("accum-burn-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

/// `burn-accum ARGS` in `dir`: its exit code, stdout and stderr.
fn burn_accum(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_burn-accum"))
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .args(args)
        .output()
        .expect("burn-accum runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_burn_runs_own_report_renders_its_sheet() {
    let dir = scratch("sheet");
    // The shipped run, shortened to 40 updates.
    let text = include_str!("../train.json").replace("\"200 updates\"", "\"40 updates\"");
    std::fs::write(dir.join("train.json"), &text).expect("write");
    let loaded = TrainConfig::load_checked(&dir.join("train.json")).expect("the config");
    let report_path = dir.join("run.json");
    let trained =
        train_with_report(&Corpus::shipped(), loaded.config(), false, &report_path).expect("a run");

    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(&report_path).expect("the report"))
            .expect("json");
    assert_eq!(report["format"], "accum-run/1");
    assert_eq!(report["counters"]["applied_updates"], trained.applied);
    assert_eq!(report["counters"]["skipped_updates"], trained.skipped);
    assert_eq!(report["counters"]["supervised_tokens"], trained.tokens);
    assert_eq!(report["stats_stream"], "run.stats.jsonl");
    assert!(dir.join("run.stats.jsonl").is_file());
    assert_eq!(report["model"]["kind"], "burn_char_model");
    assert_eq!(report["model"]["hidden"], 24);
    assert_eq!(report["plan"]["effective_batch"], 16, "{}", report["plan"]);
    let attempts = report["updates"].as_array().expect("updates");
    assert_eq!(attempts.len() as u64, trained.applied + trained.skipped);
    for (kept, loss) in attempts.iter().zip(&trained.losses) {
        assert_eq!(kept["loss"].as_f64(), Some(*loss));
    }
    let applied_lrs: Vec<f64> = attempts
        .iter()
        .filter(|a| a["applied"] == true)
        .filter_map(|a| a["lr"].as_f64())
        .collect();
    assert_eq!(applied_lrs, trained.lrs);

    let (code, stdout, stderr) = burn_accum(
        &dir,
        &[
            "sheet",
            "train.json",
            "--report",
            "run.json",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let sheet: Value = serde_json::from_str(&stdout).expect("a JSON sheet");
    assert_eq!(sheet["summary"]["effective_batch"], 16);
    assert_eq!(sheet["summary"]["applied_updates"], trained.applied);
    let trial = &sheet["trial"];
    let charts = trial["charts"].as_array().expect("charts");
    let ids: Vec<&str> = charts.iter().filter_map(|c| c["id"].as_str()).collect();
    assert_eq!(ids, ["loss", "lr", "grad-norm", "loss-scale"]);
    // The loss of every applied update, from the first.
    let points = charts[0]["series"][0]["points"].as_array().expect("points");
    assert_eq!(points.len() as u64, trained.applied);
    let first_applied = attempts
        .iter()
        .find(|a| a["applied"] == true)
        .expect("an applied update");
    assert_eq!(points[0][1], first_applied["loss"]);
    // The learning rate the run used: the cosine schedule's warmup of 160
    // examples is 10 updates of 16, then the peak of `lr`.
    let lr = charts[1]["series"][0]["points"].as_array().expect("lr");
    assert_eq!(lr.len() as u64, trained.applied);
    let plotted: Vec<f64> = lr.iter().filter_map(|p| p[1].as_f64()).collect();
    assert_eq!(plotted, trained.lrs);
    let peak = plotted.iter().copied().fold(0.0, f64::max);
    assert!((peak - 3e-2).abs() < 1e-9, "peak {peak}");
    assert!(plotted[0] < plotted[9], "{plotted:?}");

    let (code, stdout, stderr) = burn_accum(
        &dir,
        &[
            "sheet",
            "train.json",
            "--report",
            "run.json",
            "-o",
            "sheet.md",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("wrote sheet.md\n"), "{stdout}");
    assert!(stdout.contains("  and sheet.lr.svg\n"), "{stdout}");
    let md = std::fs::read_to_string(dir.join("sheet.md")).expect("the sheet");
    assert!(
        md.contains("![Learning rate against tokens](sheet.lr.svg)"),
        "{md}"
    );
    assert!(
        md.contains("| effective batch B | 16 examples | B = m·A·D = 2 × 4 × 2 = 16 |"),
        "{md}"
    );
    let svg = std::fs::read_to_string(dir.join("sheet.lr.svg")).expect("the plot");
    assert!(svg.starts_with("<svg") || svg.contains("<svg"), "{svg}");
    std::fs::remove_dir_all(&dir).expect("cleaned");
}
