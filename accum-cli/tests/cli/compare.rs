//! `accum compare`: the flat quickstart and its ramp-up variant side by
//! side — their plans in one table, the loss of every update overlaid
//! against tokens — and the refusal of an axis in updates across different
//! batches.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value;

use crate::sheet::{chromium, dump_dom, screenshot};
use crate::{run_in, scratch};

/// The shipped examples (`examples/` at the workspace root).
fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples")
}

/// One folder with the reports of the quickstart (B = 64 throughout), its
/// ramp-up variant (B 16 → 32 → 64) and a short run at A = 2 (B = 32), run
/// once for every test of this module.
fn runs() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = scratch("compare-runs");
        for name in ["quickstart", "rampup"] {
            let file = format!("{name}.toml");
            std::fs::copy(examples().join(&file), dir.join(&file)).expect("copy");
            let report = format!("{name}.json");
            let out = run_in(&dir, &["run", &file, "--report", &report, "--quiet"]);
            assert_eq!(out.code, 0, "{}", out.stderr);
        }
        let half = std::fs::read_to_string(dir.join("quickstart.toml"))
            .expect("the quickstart")
            .replace("accumulation = 4 ", "accumulation = 2 ")
            .replace("global_batch = 64", "global_batch = 32")
            .replace("total = \"300 updates\"", "total = \"30 updates\"");
        std::fs::write(dir.join("half.toml"), half).expect("write");
        let out = run_in(
            &dir,
            &["run", "half.toml", "--report", "half.json", "--quiet"],
        );
        assert_eq!(out.code, 0, "{}", out.stderr);
        dir
    })
}

/// The comparison as JSON.
fn comparison(args: &[&str]) -> Value {
    let mut all = vec!["compare"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "json"]);
    let out = run_in(runs(), &all);
    assert_eq!(out.code, 0, "{}", out.stderr);
    serde_json::from_str(&out.stdout).expect("json")
}

/// The loss row's figures depend on floating-point sums; the rest of the
/// table is counts.
fn redact_loss(text: &str) -> String {
    text.lines()
        .map(|line| {
            if line.starts_with("| loss") {
                "| loss ≠ | [loss] | [loss] |".to_owned()
            } else if line.starts_with("| largest") {
                "| largest \\|Δloss\\| from quickstart ≠ | the reference | [loss] |".to_owned()
            } else if line.starts_with("| wall time") || line.starts_with("| throughput") {
                // How fast the runs went: measured, so it varies.
                let label = line.split(" | ").next().unwrap_or(line);
                format!("{label} | [measured] | [measured] |")
            } else {
                line.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_plans_side_by_side() {
    let out = run_in(runs(), &["compare", "quickstart.json", "rampup.json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let start = out.stdout.find("| |").expect("the table");
    let end = out.stdout[start..]
        .find("\n\n")
        .map_or(out.stdout.len(), |e| start + e);
    insta::assert_snapshot!("compare_plan_table", redact_loss(&out.stdout[start..end]));

    let json = comparison(&["quickstart.json", "rampup.json"]);
    let rows = json["table"]["rows"].as_array().expect("rows");
    let row = |label: &str| {
        rows.iter()
            .find(|r| r["label"] == label)
            .unwrap_or_else(|| panic!("no row {label}"))
    };
    assert_eq!(row("effective batch B")["differs"], true);
    assert_eq!(row("micro-batch m")["differs"], false);
    assert_eq!(
        row("stages")["values"][1],
        "3: B 16 from update 1, B 32 from update 101, B 64 from update 201"
    );
}

#[test]
fn every_update_of_each_run_against_tokens() {
    let json = comparison(&["quickstart.json", "rampup.json"]);
    assert_eq!(json["format"], "accum-compare/1");
    assert_eq!(json["axis"], "tokens");
    let charts = json["charts"].as_array().expect("charts");
    let ids: Vec<&str> = charts.iter().filter_map(|c| c["id"].as_str()).collect();
    assert_eq!(ids, ["loss", "lr", "grad-norm"]);
    let loss = &charts[0];
    assert_eq!(loss["x"]["label"], "tokens");
    let series = loss["series"].as_array().expect("series");
    // Per run: every update as a faint line, and the means over it, named
    // by the run: one window on the axis for every run, in the caption.
    let styles: Vec<(&str, &str)> = series
        .iter()
        .map(|s| {
            (
                s["style"].as_str().unwrap_or(""),
                s["name"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        styles,
        [
            ("faint", ""),
            ("line", "quickstart"),
            ("faint", ""),
            ("line", "rampup")
        ]
    );
    let report = |name: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(runs().join(name)).expect("report"))
            .expect("json")
    };
    let flat = report("quickstart.json");
    let ramp = report("rampup.json");
    for (faint, run) in [(&series[0], &flat), (&series[2], &ramp)] {
        let points = faint["points"].as_array().expect("points");
        assert_eq!(
            points.len() as u64,
            run["counters"]["applied_updates"]
                .as_u64()
                .expect("updates"),
            "every update's loss"
        );
        // From the first update, at its tokens.
        assert_eq!(
            points[0][0],
            run["updates"][0]["tokens"].as_f64().expect("tokens")
        );
        assert_eq!(points[0][1], run["updates"][0]["loss"]);
        let last = points.last().expect("a last point");
        assert_eq!(
            last[0],
            run["counters"]["supervised_tokens"]
                .as_f64()
                .expect("tokens")
        );
    }
    // Each run has its own colour; the ramp's stage starts are marked.
    assert_eq!(series[1]["tone"], serde_json::json!({"run": 0}));
    assert_eq!(series[3]["tone"], serde_json::json!({"run": 1}));
    let marks = loss["marks"]["at"].as_array().expect("marks");
    assert_eq!(marks.len(), 2);
    assert_eq!(marks[0]["label"], "rampup B 32");
    assert_eq!(
        marks[0]["x"],
        ramp["stages"][0]["tokens"].as_f64().expect("tokens")
    );
    // The learning rates: one line per run, every applied update.
    let lr = charts[1]["series"].as_array().expect("series");
    assert_eq!(lr.len(), 2);
    assert_eq!(lr[0]["points"].as_array().map(Vec::len), Some(300));
    assert_eq!(lr[1]["points"].as_array().map(Vec::len), Some(425));
}

#[test]
fn an_axis_in_updates_is_refused_across_different_batches() {
    let out = run_in(
        runs(),
        &[
            "compare",
            "quickstart.json",
            "rampup.json",
            "--axis",
            "updates",
        ],
    );
    assert_eq!(out.code, 1);
    assert!(
        out.stdout.is_empty(),
        "nothing half-written: {}",
        out.stdout
    );
    insta::assert_snapshot!("compare_updates_refused", out.stderr);

    // Two constant plans of different A: refused too.
    let out = run_in(
        runs(),
        &[
            "compare",
            "quickstart.json",
            "half.json",
            "--axis",
            "updates",
        ],
    );
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains(
            "quickstart trains 64 examples per update, half trains 32 examples per update"
        ),
        "{}",
        out.stderr
    );
    // The same batches may be compared against updates; so may different
    // ones against examples.
    std::fs::copy(runs().join("quickstart.json"), runs().join("again.json")).expect("copy");
    let json = comparison(&["quickstart.json", "again.json", "--axis", "updates"]);
    assert_eq!(json["axis"], "updates");
    let json = comparison(&["quickstart.json", "half.json", "--axis", "examples"]);
    assert_eq!(json["charts"][0]["x"]["label"], "examples");
}

/// The comparison of the quickstart and its ramp-up variant in headless
/// Chromium: the plan table and three plots render, each run in its own
/// colour (navy, orange) with its own legend entry.
#[test]
fn a_comparison_in_a_real_browser_with_a_screenshot() {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install chromium for this test"
        );
        eprintln!("skipped: no chromium on this machine");
        return;
    };
    let dir = runs();
    let out = run_in(
        dir,
        &[
            "compare",
            "quickstart.json",
            "rampup.json",
            "-o",
            "compare.html",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "wrote compare.html\n");
    let page = dir.join("compare.html");
    let dom = dump_dom(&browser, dir, &page);
    assert_eq!(
        dom.matches("<svg ").count(),
        6,
        "loss, lr and grad norm, in a column and on a phone"
    );
    assert!(dom.contains("<h3>Plans side by side</h3>"), "{dom}");
    assert!(dom.contains("quickstart\n</text>"), "legend: {dom}");
    assert!(dom.contains("rampup\n</text>"), "legend: {dom}");
    assert!(!dom.contains("<script"), "no script");

    let picture = screenshot(&browser, dir, &page, "compare.png", (1280, 1600));
    // Navy #1e3a8a and orange #ea580c, solid and faint (blended with white).
    let navy = picture.count(&|p| p[2] > 110 && p[2] < 170 && p[0] < 70 && p[1] < 90);
    let orange = picture.count(&|p| p[0] > 200 && p[1] > 70 && p[1] < 130 && p[2] < 60);
    assert!(navy > 1_000, "the quickstart's lines: {navy} navy pixels");
    assert!(orange > 500, "the ramp-up's lines: {orange} orange pixels");
}
