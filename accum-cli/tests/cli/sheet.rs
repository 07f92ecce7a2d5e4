//! `accum sheet` in Markdown, HTML and JSON, and the HTML in a real browser.

use std::path::Path;
use std::process::Command as Process;

use crate::{fixtures, run_in, scratch};

fn with_report(name: &str) -> std::path::PathBuf {
    let dir = scratch(name);
    std::fs::copy(fixtures().join("tiny.toml"), dir.join("tiny.toml")).expect("copy");
    let out = run_in(
        &dir,
        &["run", "tiny.toml", "--report", "run.json", "--quiet"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    dir
}

#[test]
fn sheets_without_a_report() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let md = run_in(&examples, &["sheet", "seed-calculator.toml"]);
    assert_eq!(md.code, 0, "{}", md.stderr);
    assert!(md.stdout.contains(
        "| tokens per update T | 8,388,608 tokens | T = B·L = 2,048 × 4,096 = 8,388,608 |"
    ));
    insta::assert_snapshot!("sheet_seed_md", md.stdout);
    let json = run_in(
        &examples,
        &["sheet", "seed-calculator.toml", "--format", "json"],
    );
    let value: serde_json::Value = serde_json::from_str(&json.stdout).expect("json");
    insta::assert_json_snapshot!("sheet_seed_json", value);
    let html = run_in(
        &examples,
        &["sheet", "seed-calculator.toml", "--format", "html"],
    );
    insta::assert_snapshot!("sheet_seed_html", html.stdout);
}

/// Replaces the inline curve: losses are computed in floating point and
/// may differ in the last digits between processors (the SVG has its own
/// tests). Counters and accounted memory are exact and stay.
fn redact(text: &str) -> String {
    match (text.find("<svg"), text.find("</svg>")) {
        (Some(start), Some(end)) if start < end => {
            format!("{}[svg]{}", &text[..start], &text[end + 6..])
        }
        _ => text.to_owned(),
    }
}

#[test]
fn sheets_with_a_report_in_three_formats() {
    let dir = with_report("sheet-report");
    let md = run_in(
        &dir,
        &[
            "sheet",
            "tiny.toml",
            "--report",
            "run.json",
            "-o",
            "sheet.md",
        ],
    );
    assert_eq!(md.code, 0, "{}", md.stderr);
    let text = std::fs::read_to_string(dir.join("sheet.md")).expect("md");
    assert!(
        text.contains("![loss against examples](sheet.svg)"),
        "{text}"
    );
    assert!(
        std::fs::read_to_string(dir.join("sheet.svg"))
            .expect("svg")
            .contains("<polyline")
    );
    assert!(text.contains("tiny &lt;script&gt;"), "{text}");
    insta::assert_snapshot!("sheet_tiny_md", redact(&text));

    let html = run_in(
        &dir,
        &[
            "sheet",
            "tiny.toml",
            "--report",
            "run.json",
            "-o",
            "sheet.html",
        ],
    );
    assert_eq!(html.code, 0);
    let page = std::fs::read_to_string(dir.join("sheet.html")).expect("html");
    assert!(!page.contains("<script"), "no script element");
    assert!(page.contains("<svg xmlns="));
    insta::assert_snapshot!("sheet_tiny_html", redact(&page));

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
    let value: serde_json::Value = serde_json::from_str(&json.stdout).expect("json");
    assert_eq!(value["format"], "accum-sheet/1");
    assert!(
        value["trial"]["curve"]["points"]
            .as_array()
            .expect("points")
            .len()
            >= 2
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

fn chromium() -> Option<String> {
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

/// The HTML sheet rendered by headless Chromium: it renders, the SVG curve
/// is in the DOM, and the `<script>` in the run's name stays text.
#[test]
fn html_sheet_renders_in_a_real_browser_without_running_scripts() {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install chromium for this test"
        );
        eprintln!("skipped: no chromium on this machine");
        return;
    };
    let dir = with_report("sheet-browser");
    let out = run_in(
        &dir,
        &[
            "sheet",
            "tiny.toml",
            "--report",
            "run.json",
            "-o",
            "sheet.html",
        ],
    );
    assert_eq!(out.code, 0);
    let url = format!("file://{}", dir.join("sheet.html").display());
    let profile = dir.join("profile");
    let common = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ];
    let dom = Process::new(&browser)
        .args(common)
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--dump-dom", &url])
        .output()
        .expect("chromium runs");
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(dom.contains("<polyline"), "the curve is rendered: {dom}");
    // Had the script in the run's name run, the title would be "pwned".
    assert!(
        dom.contains(
            "<title>Run sheet: tiny &lt;script&gt;document.title='pwned'&lt;/script&gt;</title>"
        ),
        "the title stays text and no script ran: {dom}"
    );
    assert!(!dom.contains("<title>pwned</title>"), "no script ran");
    assert!(!dom.contains("<script"), "no script element in the DOM");
    let shot = dir.join("sheet.png");
    let status = Process::new(&browser)
        .args(common)
        .arg(format!("--user-data-dir={}", profile.display()))
        .args([
            "--window-size=1000,1600",
            &format!("--screenshot={}", shot.display()),
            &url,
        ])
        .output()
        .expect("chromium runs");
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let png = std::fs::read(&shot).expect("screenshot written");
    assert!(
        png.len() > 10_000 && png.starts_with(b"\x89PNG"),
        "a real picture: {} bytes",
        png.len()
    );
}
