//! A sheet of one run and a comparison of four in headless Chromium at
//! 1,400 and 420 px wide, measured from the DOM: no two texts of a plot
//! (legend entries, titles, labels) overlap, no element is wider than the
//! page, no text is drawn smaller than 10 px, and every plot has hover
//! titles. The page is measured by a script added to a copy of it (the
//! sheet itself allows none), shown in a frame of the width measured (a
//! browser window is at least 500 px wide), which writes what it found
//! into the DOM of the page around the frame, which `--dump-dom` prints.

use std::path::Path;
use std::process::Command as Process;

use serde_json::Value;

use crate::sheet::{HEADLESS, chromium};
use crate::{fixtures, run_in, scratch};

/// Measures the page: texts of a plot that overlap, elements past the
/// page's right edge (outside a scrolling box), text under 10 px, plots
/// without hover titles.
const MEASURE: &str = r#"<script>
(function () {
  const W = document.documentElement.clientWidth;
  const out = { width: W, scroll_width: document.documentElement.scrollWidth,
    overlaps: [], wide: [], small: [], plots: 0, without_titles: 0 };
  const shown = e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const scrolls = e => {
    for (let p = e.parentElement; p; p = p.parentElement) {
      const o = getComputedStyle(p).overflowX;
      if (o === 'auto' || o === 'scroll') return true;
    }
    return false;
  };
  for (const e of document.body.querySelectorAll('*')) {
    if (!shown(e) || scrolls(e)) continue;
    const r = e.getBoundingClientRect();
    if (r.right > W + 1 || r.left < -1) out.wide.push(e.tagName + ' ' + Math.round(r.left) + '..' + Math.round(r.right));
    if (!e.closest('svg') && [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) {
      const f = parseFloat(getComputedStyle(e).fontSize);
      if (f < 10) out.small.push(e.tagName + ' ' + f);
    }
  }
  for (const svg of document.querySelectorAll('svg')) {
    if (!shown(svg)) continue;
    out.plots++;
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    if (!svg.querySelector('g.hover title')) out.without_titles++;
    const texts = [...svg.querySelectorAll('text')].filter(shown);
    for (const t of texts) {
      const f = parseFloat(t.getAttribute('font-size')) * scale;
      if (f < 10) out.small.push('svg text ' + f.toFixed(1) + ' ' + t.textContent.trim().slice(0, 30));
    }
    const boxes = texts.map(t => [t.getBoundingClientRect(), t.textContent.trim()]);
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length; j++) {
        const [a, s] = boxes[i];
        const [b, u] = boxes[j];
        if (a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1) {
          out.overlaps.push(s.slice(0, 40) + ' / ' + u.slice(0, 40));
        }
      }
    }
  }
  const pre = parent.document.createElement('pre');
  pre.id = 'measured';
  pre.textContent = JSON.stringify(out);
  parent.document.body.appendChild(pre);
})();
</script>"#;

/// What [`MEASURE`] found on `page` in a window `width` px wide.
fn measure(browser: &str, dir: &Path, page: &Path, width: u32) -> Value {
    let html = std::fs::read_to_string(page).expect("the page");
    // The copy runs the measuring script: without the policy that forbids it.
    let start = html
        .find("<meta http-equiv=\"Content-Security-Policy\"")
        .expect("the page's policy");
    let end = start + html[start..].find('>').expect("the meta tag") + 1;
    let mut copy = format!("{}{}", &html[..start], &html[end..]);
    let body = copy.rfind("</body>").expect("a body");
    copy.insert_str(body, MEASURE);
    // In a frame of `width` px: its own viewport, media queries included;
    // a `srcdoc` frame shares the page's origin, so its script reaches it.
    let frame = format!(
        "<!DOCTYPE html><html><body style=\"margin:0\"><iframe style=\"border:0;width:{width}px;height:1000px\" srcdoc=\"{}\"></iframe></body></html>",
        copy.replace('&', "&amp;").replace('"', "&quot;")
    );
    let measured = dir.join(format!("measured-{width}.html"));
    std::fs::write(&measured, frame).expect("write");
    let out = Process::new(browser)
        .args(HEADLESS)
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg(format!("--window-size={},1100", width + 100))
        .args(["--dump-dom", &format!("file://{}", measured.display())])
        .output()
        .expect("chromium runs");
    let dom = String::from_utf8_lossy(&out.stdout);
    let start = dom.find("<pre id=\"measured\">").expect("the script ran") + 19;
    let end = start + dom[start..].find("</pre>").expect("its end");
    let json = dom[start..end]
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    serde_json::from_str(&json).expect("the measures")
}

/// Every check of one page at one width.
fn check(browser: &str, dir: &Path, page: &Path, width: u32, plots: u64) {
    let m = measure(browser, dir, page, width);
    let what = format!("{} at {width} px: {m}", page.display());
    assert!(
        m["width"].as_u64().is_some_and(|w| w <= u64::from(width)),
        "{what}"
    );
    assert_eq!(
        m["scroll_width"], m["width"],
        "nothing scrolls sideways: {what}"
    );
    assert_eq!(m["wide"], serde_json::json!([]), "{what}");
    assert_eq!(m["overlaps"], serde_json::json!([]), "{what}");
    assert_eq!(m["small"], serde_json::json!([]), "{what}");
    assert_eq!(m["plots"].as_u64(), Some(plots), "{what}");
    assert_eq!(
        m["without_titles"], 0,
        "every plot has hover titles: {what}"
    );
}

fn browser() -> Option<String> {
    let found = chromium();
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install chromium for this test"
        );
        eprintln!("skipped: no chromium on this machine");
    }
    found
}

#[test]
fn a_sheet_reads_at_1400_and_420_px() {
    let Some(browser) = browser() else { return };
    let dir = scratch("browser-sheet");
    std::fs::copy(fixtures().join("fp16.toml"), dir.join("fp16.toml")).expect("copy");
    let run = run_in(
        &dir,
        &["run", "fp16.toml", "--report", "run.json", "--quiet"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
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
    // The schedule, the loss, the learning rate, the gradient norm and the
    // loss scale: one drawing of each shows at either width.
    for width in [1400, 420] {
        check(&browser, &dir, &dir.join("sheet.html"), width, 5);
    }
}

#[test]
fn a_comparison_of_four_runs_reads_at_1400_and_420_px() {
    let Some(browser) = browser() else { return };
    let dir = scratch("browser-compare");
    let tiny = std::fs::read_to_string(fixtures().join("tiny.toml")).expect("tiny");
    let mut reports = Vec::new();
    for a in [1, 2, 3, 4] {
        let config = tiny
            .replace(
                "name = \"tiny <script>document.title='pwned'</script>\"",
                &format!("name = \"accumulation {a}, micro-batch 4, two replicas\""),
            )
            .replace("accumulation = 2", &format!("accumulation = {a}"));
        let file = format!("a{a}.toml");
        std::fs::write(dir.join(&file), config).expect("write");
        let report = format!("a{a}.json");
        let run = run_in(&dir, &["run", &file, "--report", &report, "--quiet"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        reports.push(report);
    }
    let mut args = vec!["compare"];
    args.extend(reports.iter().map(String::as_str));
    args.extend(["-o", "compare.html"]);
    let out = run_in(&dir, &args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Loss, learning rate and gradient norm.
    for width in [1400, 420] {
        check(&browser, &dir, &dir.join("compare.html"), width, 3);
    }
}
