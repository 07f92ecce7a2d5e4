//! `accum sheet` in Markdown, HTML and JSON, and the HTML in a real browser,
//! on an fp16 run that skipped updates and on a batch ramp-up in three
//! stages.

use std::path::{Path, PathBuf};
use std::process::Command as Process;

use accum::group_digits;
use serde_json::Value;

use crate::{fixtures, run_in, scratch};

/// A scratch directory with the fp16 fixture and the report of its run.
fn fp16_run(name: &str) -> PathBuf {
    let dir = scratch(name);
    std::fs::copy(fixtures().join("fp16.toml"), dir.join("fp16.toml")).expect("copy");
    let out = run_in(
        &dir,
        &["run", "fp16.toml", "--report", "run.json", "--quiet"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    dir
}

/// Replaces every inline SVG: the drawings have their own tests, and the
/// layout around them is what these snapshots show.
fn without_svg(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let (Some(start), Some(end)) = (rest.find("<svg"), rest.find("</svg>")) {
        if end < start {
            break;
        }
        out.push_str(&rest[..start]);
        out.push_str("[svg]");
        rest = &rest[end + "</svg>".len()..];
    }
    out.push_str(rest);
    out
}

/// The JSON sheet without what floating point may change in the last
/// digits between processors: plotted points (counted instead) and the
/// final loss. Counters, plans and memory accounting are exact and stay.
fn redact(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                match (key.as_str(), &*item) {
                    ("points", Value::Array(points)) => {
                        *item = Value::String(format!("[{} points]", points.len()));
                    }
                    ("final_loss" | "first_loss" | "min_loss", Value::Number(_)) => {
                        *item = Value::String("[loss]".into());
                    }
                    // Where and when the run ran, and how fast.
                    ("provenance", Value::Object(_)) => {
                        *item = Value::String("[provenance]".into());
                    }
                    _ => redact(item),
                }
            }
            // The loss cards (a card has a detail; an axis labelled loss has not).
            if map
                .get("label")
                .and_then(Value::as_str)
                .is_some_and(|l| l.starts_with("loss"))
                && map.contains_key("detail")
            {
                map.insert("value".into(), Value::String("[loss]".into()));
                map.insert("detail".into(), Value::String("[loss]".into()));
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact),
        _ => {}
    }
}

/// The Markdown sheet with its losses and its provenance (when and how
/// fast it ran) replaced (see [`redact`]).
fn redact_md(text: &str) -> String {
    text.lines()
        .map(|line| {
            if line.starts_with("Run: ") {
                "Run: [provenance]".to_owned()
            } else if line.starts_with("| ") {
                // The loss cards' values and their minimum.
                let (cells, end) = line
                    .strip_suffix(" |")
                    .map_or((line, ""), |cells| (cells, " |"));
                let cells = cells
                    .split(" | ")
                    .map(|cell| {
                        if cell.starts_with("**") && cell.contains(" → ") {
                            "**[loss]**"
                        } else if cell.starts_with("first → final applied update, exact; minimum ")
                        {
                            "first → final applied update, exact; minimum [loss]"
                        } else {
                            cell
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" | ");
                format!("{cells}{end}")
            } else {
                line.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn sheets_without_a_report() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let md = run_in(&examples, &["sheet", "seed-calculator.toml"]);
    assert_eq!(md.code, 0, "{}", md.stderr);
    assert!(md.stdout.contains(
        "| tokens per update T | 8,388,608 tokens | T = B·L = 2,048 × 4,096 = 8,388,608 |"
    ));
    assert!(
        md.stdout
            .contains("| **2,048 examples** | **8,388,608** | **12,000** |")
    );
    insta::assert_snapshot!("sheet_seed_md", md.stdout);
    let json = run_in(
        &examples,
        &["sheet", "seed-calculator.toml", "--format", "json"],
    );
    let mut value: Value = serde_json::from_str(&json.stdout).expect("json");
    assert_eq!(value["format"], "accum-sheet/2");
    assert_eq!(value["summary"]["effective_batch"], 2048);
    assert_eq!(value["summary"]["tokens_per_update"], 8_388_608.0);
    assert_eq!(value["summary"]["planned_updates"], 12_000);
    let schedule = &value["preparation"]["charts"][0];
    assert_eq!(schedule["id"], "schedule");
    assert_eq!(
        schedule["x_scales"][1]["knots"][1],
        serde_json::json!([1.0, 8_388_608.0])
    );
    redact(&mut value);
    insta::assert_json_snapshot!("sheet_seed_json", value);
    let html = run_in(
        &examples,
        &["sheet", "seed-calculator.toml", "--format", "html"],
    );
    insta::assert_snapshot!("sheet_seed_html", without_svg(&html.stdout));
}

#[test]
fn sheets_of_an_fp16_run_that_skipped_updates() {
    let dir = fp16_run("sheet-fp16");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).expect("report"))
            .expect("json");
    let skipped = report["counters"]["skipped_updates"]
        .as_u64()
        .expect("count");
    assert!(skipped > 0, "the fixture skips updates");

    let md = run_in(
        &dir,
        &[
            "sheet",
            "fp16.toml",
            "--report",
            "run.json",
            "-o",
            "sheet.md",
        ],
    );
    assert_eq!(md.code, 0, "{}", md.stderr);
    let text = std::fs::read_to_string(dir.join("sheet.md")).expect("md");
    for (title, id) in [
        ("Learning-rate schedule", "schedule"),
        ("Loss against examples", "loss"),
        ("Gradient norm", "grad-norm"),
        ("Loss scale", "loss-scale"),
    ] {
        assert!(
            text.contains(&format!("![{title}](sheet.{id}.svg)")),
            "{id}: {text}"
        );
        let svg = std::fs::read_to_string(dir.join(format!("sheet.{id}.svg"))).expect("svg");
        assert!(
            svg.starts_with("<svg ") && svg.contains("<polyline"),
            "{id}"
        );
    }
    assert!(
        text.contains(&format!("skipped updates | {skipped} |")),
        "{text}"
    );
    assert!(
        text.contains("fp16 &lt;b&gt;tiny&lt;/b&gt; &amp; skipped"),
        "{text}"
    );
    insta::assert_snapshot!("sheet_fp16_md", redact_md(&text));

    let html = run_in(
        &dir,
        &[
            "sheet",
            "fp16.toml",
            "--report",
            "run.json",
            "-o",
            "sheet.html",
        ],
    );
    assert_eq!(html.code, 0, "{}", html.stderr);
    let page = std::fs::read_to_string(dir.join("sheet.html")).expect("html");
    // The Markdown links the very drawings the HTML has inline.
    for id in ["schedule", "grad-norm", "loss-scale"] {
        let svg = std::fs::read_to_string(dir.join(format!("sheet.{id}.svg"))).expect("svg");
        // The file carries accum's mark, by which a later sheet knows it.
        let mark = "\n<!-- a plot of an accum sheet, written again with the sheet -->";
        assert!(svg.contains(mark), "{id} is marked");
        assert!(
            page.contains(&svg.replacen(mark, "", 1)),
            "{id} is the same drawing"
        );
    }

    let json = run_in(
        &dir,
        &[
            "sheet",
            "fp16.toml",
            "--report",
            "run.json",
            "--format",
            "json",
        ],
    );
    let mut value: Value = serde_json::from_str(&json.stdout).expect("json");
    assert_eq!(value["summary"]["skipped_updates"], skipped);
    let loss = &value["trial"]["charts"][0]["series"];
    assert_eq!(
        loss[0]["points"].as_array().map(Vec::len),
        report["counters"]["applied_updates"]
            .as_u64()
            .map(|n| n as usize),
        "every applied update"
    );
    assert_eq!(loss[1]["style"], "crosses");
    // The optimizer state comes with the first applied update, after the
    // skipped first attempts: no leak, and no alarm.
    let warnings = value["trial"]["warnings"].as_array().expect("warnings");
    assert!(
        warnings
            .iter()
            .all(|w| !w.as_str().unwrap_or("").contains("memory")),
        "{warnings:?}"
    );
    redact(&mut value);
    insta::assert_json_snapshot!("sheet_fp16_json", value);
}

/// A run longer than the report keeps attempts for: with its stats stream
/// the sheet marks every skipped attempt; without it, those the report kept.
#[test]
fn a_long_run_reads_its_stats_stream() {
    let dir = scratch("sheet-stream");
    let config = std::fs::read_to_string(fixtures().join("fp16.toml"))
        .expect("fixture")
        .replace("total = \"60 updates\"", "total = \"1500 updates\"");
    std::fs::write(dir.join("fp16.toml"), config).expect("write");
    let out = run_in(
        &dir,
        &[
            "run",
            "fp16.toml",
            "--report",
            "run.json",
            "--stream-stats",
            "--quiet",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).expect("report"))
            .expect("json");
    let attempts = report["counters"]["update_attempts"]
        .as_u64()
        .expect("count");
    let kept = report["updates"].as_array().expect("updates").len() as u64;
    assert!(
        kept < attempts,
        "the report keeps {kept} of {attempts} attempts"
    );
    let skipped = report["counters"]["skipped_updates"]
        .as_u64()
        .expect("count");
    let caption = |dir: &Path| {
        let sheet = run_in(
            dir,
            &[
                "sheet",
                "fp16.toml",
                "--report",
                "run.json",
                "--format",
                "json",
            ],
        );
        assert_eq!(sheet.code, 0, "{}", sheet.stderr);
        let value: Value = serde_json::from_str(&sheet.stdout).expect("json");
        value["trial"]["charts"][1]["caption"]
            .as_str()
            .expect("caption")
            .to_owned()
    };
    let streamed = caption(&dir);
    assert!(
        streamed.contains(&format!(
            "Crosses mark the {skipped} skipped update attempts"
        )),
        "{streamed}"
    );
    std::fs::remove_file(dir.join("run.stats.jsonl")).expect("remove");
    let bounded = caption(&dir);
    assert!(
        bounded.contains(&format!(
            "among the {} attempts the report keeps",
            group_digits(kept)
        )),
        "{bounded}"
    );
}

#[test]
fn a_bad_report_is_refused() {
    let dir = scratch("sheet-bad-report");
    std::fs::copy(fixtures().join("tiny.toml"), dir.join("tiny.toml")).expect("copy");
    std::fs::write(dir.join("run.json"), "{\"not\": \"a report\"}").expect("write");
    let out = run_in(&dir, &["sheet", "tiny.toml", "--report", "run.json"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("run.json: not an accum run report"),
        "{}",
        out.stderr
    );
}

/// A batch ramp-up in three stages (`B` 16 → 32 → 64 on a fixed length):
/// the stages table, and the batch and learning rate against updates and
/// against tokens, whose token positions follow the stages.
#[test]
fn sheets_of_a_ramp_up_in_three_stages() {
    let dir = scratch("sheet-rampup");
    std::fs::copy(fixtures().join("rampup.toml"), dir.join("rampup.toml")).expect("copy");
    let md = run_in(&dir, &["sheet", "rampup.toml", "-o", "sheet.md"]);
    assert_eq!(md.code, 0, "{}", md.stderr);
    let text = std::fs::read_to_string(dir.join("sheet.md")).expect("md");
    for (title, id) in [
        ("Batch and learning rate against updates", "schedule"),
        ("Batch and learning rate against tokens", "schedule-tokens"),
    ] {
        assert!(
            text.contains(&format!("![{title}](sheet.{id}.svg)")),
            "{id}: {text}"
        );
        let svg = std::fs::read_to_string(dir.join(format!("sheet.{id}.svg"))).expect("svg");
        for label in ["batch B", "learning rate", "B 32", "B 64"] {
            assert!(svg.contains(&format!(">\n{label}\n<")), "{id}: {label}");
        }
    }
    assert!(
        text.contains("| **16 → 32 → 64** | **512 → 1,024 → 2,048** |"),
        "{text}"
    );
    assert!(
        text.contains(
            "| 2 | 32 = 4 × 4 × 2 | 4 | 1,024 | 20 updates | 40 | 1,280 | 40,960 | 1600 examples |"
        ),
        "{text}"
    );
    insta::assert_snapshot!("sheet_rampup_md", text);

    let json = run_in(&dir, &["sheet", "rampup.toml", "--format", "json"]);
    assert_eq!(json.code, 0, "{}", json.stderr);
    let mut value: Value = serde_json::from_str(&json.stdout).expect("json");
    let summary = &value["summary"];
    assert_eq!(
        (
            &summary["stages"],
            &summary["first_effective_batch"],
            &summary["effective_batch"]
        ),
        (&Value::from(3), &Value::from(16), &Value::from(64))
    );
    let stages = &value["preparation"]["stages"];
    assert_eq!(stages["tokens"], "exact");
    assert_eq!(
        stages["rows"][2]["start"],
        serde_json::json!({"updates": 60, "examples": 1600, "tokens": 51200})
    );
    assert_eq!(stages["rows"][0]["until"], "10240 tokens");
    assert!(
        stages["rows"][2].get("until").is_none(),
        "the last stage lasts to the end"
    );
    let charts = &value["preparation"]["charts"];
    assert_eq!(charts[1]["id"], "schedule-tokens");
    // Stage 3 starts at 51,200 tokens: 20 updates of 512 and 40 of 1,024,
    // not 60 updates of the full batch's 2,048.
    assert_eq!(
        charts[1]["marks"]["at"][1],
        serde_json::json!({"x": 51200.0, "label": "B 64"})
    );
    assert_eq!(
        charts[0]["x_scales"][1]["knots"][2],
        serde_json::json!([60.0, 51200.0])
    );
    redact(&mut value);
    insta::assert_json_snapshot!("sheet_rampup_json", value);
}

pub(crate) fn chromium() -> Option<String> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find_map(|name| {
            Process::new(name)
                .arg("--version")
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|_| name.to_owned())
        })
}

/// A decoded RGB(A) picture.
pub(crate) struct Picture {
    width: u32,
    height: u32,
    /// RGB of every pixel, row by row.
    pixels: Vec<[u8; 3]>,
}

fn decode(bytes: &[u8]) -> Picture {
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
        .read_info()
        .expect("a PNG header");
    let mut buffer = vec![0; reader.output_buffer_size().expect("a sane size")];
    let info = reader.next_frame(&mut buffer).expect("a PNG frame");
    let channels = info.color_type.samples();
    assert_eq!(info.bit_depth, png::BitDepth::Eight, "8-bit samples");
    assert!(channels >= 3, "colour, not grey: {:?}", info.color_type);
    let pixels = buffer[..info.buffer_size()]
        .chunks_exact(channels)
        .map(|p| [p[0], p[1], p[2]])
        .collect();
    Picture {
        width: info.width,
        height: info.height,
        pixels,
    }
}

/// Flags for a headless Chromium that stays off the network.
pub(crate) const HEADLESS: [&str; 8] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
];

/// The DOM of `page` after Chromium loaded it.
pub(crate) fn dump_dom(browser: &str, dir: &Path, page: &Path) -> String {
    let out = Process::new(browser)
        .args(HEADLESS)
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .args(["--dump-dom", &format!("file://{}", page.display())])
        .output()
        .expect("chromium runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A screenshot of `page` at `width` × `height`, written beside it as `shot`.
pub(crate) fn screenshot(
    browser: &str,
    dir: &Path,
    page: &Path,
    shot: &str,
    (width, height): (u32, u32),
) -> Picture {
    let shot = dir.join(shot);
    let status = Process::new(browser)
        .args(HEADLESS)
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .args([
            &format!("--window-size={width},{height}"),
            &format!("--screenshot={}", shot.display()),
            &format!("file://{}", page.display()),
        ])
        .output()
        .expect("chromium runs");
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let bytes = std::fs::read(&shot).expect("screenshot written");
    eprintln!("screenshot: {} ({} bytes)", shot.display(), bytes.len());
    let picture = decode(&bytes);
    assert_eq!((picture.width, picture.height), (width, height));
    picture
}

impl Picture {
    /// How many pixels pass `test`.
    pub(crate) fn count(&self, test: &dyn Fn(&[u8; 3]) -> bool) -> usize {
        self.pixels.iter().filter(|p| test(p)).count()
    }
}

/// The HTML sheet of the fp16 run in headless Chromium: it renders with its
/// plots, no script runs (the notes carry one), and a screenshot shows the
/// page with the skipped updates marked in red.
#[test]
fn html_sheet_in_a_real_browser_with_a_screenshot() {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install chromium for this test"
        );
        eprintln!("skipped: no chromium on this machine");
        return;
    };
    let dir = fp16_run("sheet-browser");
    let mut config = std::fs::read_to_string(dir.join("fp16.toml")).expect("config");
    config = config.replace(
        "notes = \"",
        "notes = \"<script>document.title='pwned'</script> ",
    );
    std::fs::write(dir.join("fp16.toml"), config).expect("write");
    let out = run_in(
        &dir,
        &[
            "sheet",
            "fp16.toml",
            "--report",
            "run.json",
            "-o",
            "sheet.html",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let page = dir.join("sheet.html");
    let dom = dump_dom(&browser, &dir, &page);
    // Every plot, in a column and on a phone; the loss across the page too.
    assert_eq!(dom.matches("<svg ").count(), 11, "every plot is in the DOM");
    assert!(dom.contains("<polyline"), "the plots have lines");
    // Had the script in the notes run, the title would be "pwned".
    assert!(
        dom.contains("<title>Run sheet: fp16 &lt;b&gt;tiny&lt;/b&gt; &amp; skipped</title>"),
        "the title stays text: {dom}"
    );
    assert!(dom.contains("&lt;script&gt;document.title='pwned'&lt;/script&gt;"));
    assert!(!dom.contains("<title>pwned</title>"), "no script ran");
    assert!(!dom.contains("<script"), "no script element in the DOM");

    let picture = screenshot(&browser, &dir, &page, "sheet.png", (1280, 3200));
    let total = picture.pixels.len();
    // Not one colour: the page background, white panels and ink all show.
    let background = picture.count(&|p| *p == [0xf5, 0xf6, 0xf8]);
    let white = picture.count(&|p| *p == [0xff, 0xff, 0xff]);
    let dark = picture.count(&|p| p.iter().all(|c| *c < 90));
    assert!(
        background > total / 20,
        "background {background} of {total}"
    );
    assert!(white > total / 5, "panels {white} of {total}");
    assert!(dark > 2_000, "text and lines: {dark} dark pixels");
    // The plot lines (blue, teal) and the skipped updates (red) are drawn.
    let blue = picture.count(&|p| p[2] > 180 && p[0] < 90 && p[1] < 140);
    let red = picture.count(&|p| p[0] > 170 && p[1] < 80 && p[2] < 80);
    assert!(blue > 1_000, "blue lines: {blue} pixels");
    assert!(
        red > 200,
        "red skip markers and the alert card: {red} pixels"
    );
}

/// The sheet of the three-stage ramp-up in headless Chromium: its two plots
/// side by side, each with the batch (teal) above the learning rate (blue)
/// and the stage starts (violet) across both; the stages table across the
/// page below them.
#[test]
fn a_ramp_up_sheet_in_a_real_browser_with_a_screenshot() {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install chromium for this test"
        );
        eprintln!("skipped: no chromium on this machine");
        return;
    };
    let dir = scratch("sheet-browser-rampup");
    std::fs::copy(fixtures().join("rampup.toml"), dir.join("rampup.toml")).expect("copy");
    let out = run_in(&dir, &["sheet", "rampup.toml", "-o", "sheet.html"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let page = dir.join("sheet.html");
    let dom = dump_dom(&browser, &dir, &page);
    assert_eq!(
        dom.matches("<svg ").count(),
        4,
        "both plots are in the DOM, in a column and on a phone"
    );
    assert!(dom.contains("<h3>Batch ramp-up in 3 stages</h3>"), "{dom}");
    assert_eq!(
        dom.matches("<tr><td class=\"num\">").count(),
        3,
        "a row per stage"
    );

    let (width, height) = (1280, 1400);
    let picture = screenshot(&browser, &dir, &page, "sheet.png", (width, height));
    // The two plots share the top of the page: stage marks in the left
    // half and in the right half.
    // Violet (#7c3aed, thin dashes, so blended with white): red well
    // above green, and much blue; the blue of the learning rate has less
    // red than green.
    let violet = |p: &[u8; 3]| p[2] > 190 && p[0] > 90 && p[0] > p[1].saturating_add(40);
    let half = width as usize / 2;
    let (mut left, mut right) = (0, 0);
    for (i, p) in picture.pixels.iter().enumerate() {
        if violet(p) {
            if i % (width as usize) < half {
                left += 1;
            } else {
                right += 1;
            }
        }
    }
    assert!(
        left > 60 && right > 60,
        "stage marks: {left} left, {right} right"
    );
    let teal =
        picture.count(&|p| p[0] < 40 && p[1] > 120 && p[1] < 170 && p[2] > 110 && p[2] < 160);
    let blue = picture.count(&|p| p[2] > 180 && p[0] < 90 && p[1] < 140);
    assert!(teal > 800, "the batch: {teal} teal pixels");
    assert!(blue > 1_000, "the learning rate: {blue} blue pixels");
}

/// `--format csv`: one row per update attempt of the report, skipped ones
/// included, for pandas or a tracker; `-o` says what it wrote. Without a
/// report there is nothing to list.
#[test]
fn per_update_stats_as_csv() {
    let dir = fp16_run("sheet-csv");
    let out = run_in(
        &dir,
        &[
            "sheet",
            "fp16.toml",
            "--report",
            "run.json",
            "--format",
            "csv",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).expect("report"))
            .expect("json");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(lines[0].starts_with("attempt,epoch,stage,applied,updates,"));
    let attempts = report["counters"]["update_attempts"]
        .as_u64()
        .expect("attempts");
    assert_eq!(lines.len() as u64, attempts + 1, "a row per attempt");
    // The first attempt overflowed: skipped, no loss, no learning rate.
    let first: Vec<&str> = lines[1].split(',').collect();
    assert_eq!((first[0], first[3], first[4]), ("1", "false", "0"));
    assert_eq!(first[13], "0", "a skipped attempt has no learning rate");
    let skipped = lines
        .iter()
        .filter(|l| l.split(',').nth(3) == Some("false"))
        .count();
    assert_eq!(
        skipped as u64,
        report["counters"]["skipped_updates"]
            .as_u64()
            .expect("skipped")
    );

    let out = run_in(
        &dir,
        &[
            "sheet",
            "fp16.toml",
            "--report",
            "run.json",
            "--format",
            "csv",
            "-o",
            "run.csv",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "wrote run.csv\n");
    assert_eq!(
        std::fs::read_to_string(dir.join("run.csv"))
            .expect("csv")
            .lines()
            .count() as u64,
        attempts + 1
    );
    let out = run_in(&dir, &["sheet", "fp16.toml", "--format", "csv"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("add `--report RUN.json`"),
        "{}",
        out.stderr
    );

    let out = run_in(&dir, &["sheet", "fp16.toml", "-o", "sheet.md"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "wrote sheet.md\n  and sheet.schedule.svg\n");
}

/// The terminal, the sheet (HTML), its Markdown and a comparison give the
/// same first, final and minimum loss: the report's exact ones.
#[test]
fn the_headline_loss_is_the_same_everywhere() {
    let dir = scratch("sheet-headline");
    std::fs::copy(fixtures().join("fp16.toml"), dir.join("fp16.toml")).expect("copy");
    let run = run_in(&dir, &["run", "fp16.toml", "--report", "run.json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let line = run
        .stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("loss first "))
        .unwrap_or_else(|| panic!("a loss line: {}", run.stdout));
    // `4.2121, final 1.1350, minimum 1.0999 (exact, over 60 applied updates)`
    let figures: Vec<&str> = line
        .split(" (")
        .next()
        .expect("figures")
        .split(", ")
        .map(|f| f.rsplit(' ').next().expect("a figure"))
        .collect();
    let [first, last, min] = figures[..] else {
        panic!("three figures: {line}")
    };
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).expect("report"))
            .expect("json");
    let exact = |key: &str| format!("{:.4}", report["summary"]["loss"][key].as_f64().expect(key));
    assert_eq!(
        (first, last, min),
        (
            exact("first").as_str(),
            exact("last").as_str(),
            exact("min").as_str()
        )
    );
    let card = format!("**{first} → {last}**");
    let detail = format!("first → final applied update, exact; minimum {min}");
    let md = run_in(&dir, &["sheet", "fp16.toml", "--report", "run.json"]);
    assert_eq!(md.code, 0, "{}", md.stderr);
    assert!(
        md.stdout.contains(&card) && md.stdout.contains(&detail),
        "{}",
        md.stdout
    );
    let html = run_in(
        &dir,
        &[
            "sheet",
            "fp16.toml",
            "--report",
            "run.json",
            "--format",
            "html",
        ],
    );
    assert!(
        html.stdout
            .contains(&format!("<div class=\"value\">{first} → {last}</div>"))
            && html.stdout.contains(&detail),
        "the HTML's loss card"
    );
    std::fs::copy(dir.join("run.json"), dir.join("again.json")).expect("copy");
    let compared = run_in(&dir, &["compare", "run.json", "again.json"]);
    assert_eq!(compared.code, 0, "{}", compared.stderr);
    assert!(
        compared.stdout.contains(&format!(
            "| {first} → {last} (minimum {min}) | {first} → {last} (minimum {min}) |"
        )),
        "{}",
        compared.stdout
    );
    // Two copies of one run agree exactly.
    assert!(
        compared.stdout.contains("| the reference | identical |"),
        "{}",
        compared.stdout
    );
}
