//! Work at run time bounded whatever the input's size (`docs/reliability.md`,
//! "Bounded work at run time"): sheets and comparisons read a stats stream
//! line by line and keep per bucket of the x axis its lowest and highest
//! point, in memory that does not grow with the run; a report with any
//! number of stages gives a sheet of bounded size; `D` simulated replicas
//! run on a pool of at most as many threads as cores.
//!
//! The streams are generated line by line into the test's folder. Sheets
//! run under `ulimit -v` of 1 GiB (the sheet of a 6M-line stream took
//! 1.0–1.5 GB when it held every attempt).

use std::fmt::Write as _;
use std::fs;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Instant;

use serde_json::Value;

use crate::{Out, fixtures, run_in, scratch};

/// Address space allowed to a sheet or a comparison of long streams (KiB).
const MEMORY_LIMIT_KIB: u64 = 1024 * 1024;

/// Runs `accum args` in `dir` under `ulimit -v` of 1 GiB, printing its time.
fn in_a_gibibyte(dir: &Path, args: &[&str]) -> Out {
    let started = Instant::now();
    let out = assert_cmd::Command::new("sh")
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .arg("-c")
        .arg(format!(
            "ulimit -v {MEMORY_LIMIT_KIB} && exec \"$0\" \"$@\""
        ))
        .arg(env!("CARGO_BIN_EXE_accum"))
        .args(args)
        .output()
        .expect("sh runs");
    eprintln!(
        "{args:?}: exit {:?} in {:.2} s",
        out.status.code(),
        started.elapsed().as_secs_f64()
    );
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A run of `tiny.toml` in `dir` whose report `name.json` names a stats
/// stream, then that stream replaced by `attempts` generated attempts (and
/// a log line every 1,000): losses and gradient norms vary, with their
/// lowest and highest values planted at places that depend on `seed`.
/// Returns the loss's and the norm's `(min, max)`.
fn long_run(dir: &Path, name: &str, attempts: u64, seed: u64) -> ((f64, f64), (f64, f64)) {
    if !dir.join("tiny.toml").exists() {
        fs::copy(fixtures().join("tiny.toml"), dir.join("tiny.toml")).expect("fixture");
    }
    let report = format!("{name}.json");
    let out = run_in(
        dir,
        &[
            "run",
            "tiny.toml",
            "--report",
            &report,
            "--stream-stats",
            "--quiet",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let low_at = 1 + (seed * 7_919 + attempts / 3) % attempts;
    let high_at = 1 + (seed * 104_729 + attempts / 2) % attempts;
    let norm_low_at = 1 + (seed * 31 + attempts / 5) % attempts;
    let norm_high_at = attempts - seed % 17;
    let file = fs::File::create(dir.join(format!("{name}.stats.jsonl"))).expect("stream");
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let mut line = String::with_capacity(400);
    let mut state = seed.wrapping_mul(6_364_136_223_846_793_005) | 1;
    for n in 1..=attempts {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let wiggle = (state >> 40) as f64 / (1u64 << 24) as f64; // [0, 1)
        let loss = match n {
            _ if n == low_at => -3.25,
            _ if n == high_at => 41.5,
            _ => 2.0 + wiggle,
        };
        let norm = match n {
            _ if n == norm_low_at => 0.0625,
            _ if n == norm_high_at => 900.0,
            _ => 1.0 + wiggle,
        };
        line.clear();
        let _ = writeln!(
            line,
            "{{\"update\":{{\"attempt\":{n},\"epoch\":0,\"stage\":0,\"applied\":true,\"updates\":{n},\
             \"loss\":{loss},\"denominator\":80.0,\"examples\":16,\"tokens\":80,\"microbatches\":4,\
             \"partial\":false,\"lr\":0.01,\"grad_norm\":{norm},\"clipped\":false,\"loss_scale\":1.0}}}}"
        );
        if n % 1_000 == 0 {
            let _ = writeln!(
                line,
                "{{\"log\":{{\"axis\":\"examples\",\"x\":{},\"loss\":{loss}}}}}",
                n * 16
            );
        }
        out.write_all(line.as_bytes()).expect("write");
    }
    out.flush().expect("flush");
    ((-3.25, 41.5), (0.0625, 900.0))
}

/// The lowest and highest y of the points of a chart's series.
fn extremes(series: &Value) -> (f64, f64) {
    series["points"]
        .as_array()
        .expect("points")
        .iter()
        .map(|p| p[1].as_f64().expect("y"))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), y| {
            (lo.min(y), hi.max(y))
        })
}

/// The chart `id` among `charts`.
fn chart<'a>(charts: &'a Value, id: &str) -> &'a Value {
    charts
        .as_array()
        .expect("charts")
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no chart {id}"))
}

#[test]
fn a_sheet_of_a_long_stream_keeps_its_extremes_in_a_gibibyte() {
    let dir = scratch("bounded-sheet-stream");
    // Sized for a few seconds in a debug build (parsing is most of it);
    // docs/reliability.md has 6,000,000 attempts in a release build.
    let attempts = 300_000;
    let (loss, norm) = long_run(&dir, "run", attempts, 1);
    // The sheet of the run in `format`, written to `out`, in a gibibyte.
    let sheet_in = |format: &str, out: &str| {
        let args = [
            "sheet",
            "tiny.toml",
            "--report",
            "run.json",
            "--format",
            format,
            "-o",
            out,
        ];
        let out = in_a_gibibyte(&dir, &args);
        assert_eq!(out.code, 0, "{}", out.stderr);
    };
    sheet_in("json", "sheet.json");
    let sheet: Value =
        serde_json::from_str(&fs::read_to_string(dir.join("sheet.json")).expect("sheet"))
            .expect("json");
    let charts = &sheet["trial"]["charts"];
    let losses = chart(charts, "loss");
    let every = &losses["series"][0];
    assert_eq!(every["style"], "faint", "{every}");
    let points = every["points"].as_array().expect("points").len();
    assert!(points <= 1_200, "{points} points drawn");
    assert_eq!(extremes(every), loss, "the loss line keeps its extremes");
    assert_eq!(
        extremes(&chart(charts, "grad-norm")["series"][0]),
        norm,
        "the gradient norm keeps its extremes"
    );
    // The CSV of every attempt, row by row from the stream.
    sheet_in("csv", "every.csv");
    let csv = fs::read_to_string(dir.join("every.csv")).expect("csv");
    assert_eq!(u64::try_from(csv.lines().count()), Ok(attempts + 1));
    assert!(
        csv.lines()
            .last()
            .is_some_and(|row| row.starts_with(&format!("{attempts},"))),
        "{:?}",
        csv.lines().last()
    );
    let caption = losses["caption"].as_str().expect("caption");
    assert!(
        caption.contains("every applied update from the first (300,000 updates)")
            && caption.contains("the mean of each 3,000 consecutive updates"),
        "{caption}"
    );
    // The headline's loss is the report's exact one, as the terminal's is.
    let report: Value =
        serde_json::from_str(&fs::read_to_string(dir.join("run.json")).expect("report"))
            .expect("json");
    let exact = &report["summary"]["loss"];
    assert!(
        sheet["summary"]["first_loss"] == exact["first"]
            && sheet["summary"]["final_loss"] == exact["last"]
            && sheet["summary"]["min_loss"] == exact["min"],
        "{}",
        sheet["summary"]
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn eight_compared_runs_with_long_streams_keep_their_extremes_in_a_gibibyte() {
    let dir = scratch("bounded-compare-streams");
    let mut reports = Vec::new();
    let mut truth = Vec::new();
    for i in 0..8u64 {
        let name = format!("run{i}");
        truth.push(long_run(&dir, &name, 40_000, i + 2));
        reports.push(format!("{name}.json"));
    }
    let mut args = vec!["compare"];
    args.extend(reports.iter().map(String::as_str));
    args.extend(["--axis", "examples", "--format", "json", "-o", "cmp.json"]);
    let out = in_a_gibibyte(&dir, &args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let cmp: Value =
        serde_json::from_str(&fs::read_to_string(dir.join("cmp.json")).expect("comparison"))
            .expect("json");
    let losses = chart(&cmp["charts"], "loss");
    let norms = chart(&cmp["charts"], "grad-norm");
    for (i, (loss, norm)) in truth.iter().enumerate() {
        // Each run draws a faint line of every update and its means.
        assert_eq!(extremes(&losses["series"][2 * i]), *loss, "run {i}");
        assert_eq!(extremes(&norms["series"][i]), *norm, "run {i}");
    }
    let _ = fs::remove_dir_all(&dir);
}

/// `D = 1000` replicas through a tensor-parallel layout (4,000 devices,
/// tensor parallel 4): the run ends, reports every replica, and gives the
/// same bits on one thread per replica as with the default threads.
#[test]
fn a_thousand_replicas_of_a_tensor_parallel_layout_run_on_a_bounded_pool() {
    let dir = scratch("bounded-replicas");
    let config = "[batch]\nmicro_batch = 1\naccumulation = 1\n\n\
                  [parallel]\nworld_size = 4000\ntensor = 4\n\n\
                  [schedule]\nkind = \"constant\"\nwarmup = \"0 updates\"\ntotal = \"2 updates\"\n\n\
                  [data]\nexamples = 2500\nmin_len = 2\nmax_len = 6\nvocab = 16\nseed = 3\n\n\
                  [model]\nhidden = 8\nffn = 16\n";
    fs::write(dir.join("tp.toml"), config).expect("write");
    let run = |report: &str, threads: Option<&str>| -> Value {
        let mut args = vec!["run", "tp.toml", "--report", report, "--quiet"];
        if let Some(threads) = threads {
            args.extend(["--threads", threads]);
        }
        let started = Instant::now();
        let out = run_in(&dir, &args);
        eprintln!(
            "D = 1000, --threads {threads:?}: {:.2} s",
            started.elapsed().as_secs_f64()
        );
        assert_eq!(out.code, 0, "{}", out.stderr);
        serde_json::from_str(&fs::read_to_string(dir.join(report)).expect("report")).expect("json")
    };
    let default = run("default.json", None);
    let one = run("one.json", Some("1"));
    assert_eq!(default["plan"]["replicas"], 1000);
    assert_eq!(
        default["replicas"].as_array().expect("replicas").len(),
        1000
    );
    assert_eq!(default["counters"]["applied_updates"], 2);
    assert_eq!(default["updates"], one["updates"], "the same bits");
    let _ = fs::remove_dir_all(&dir);
}

/// The update line of attempt `n` with `loss`, as a report or a stream
/// holds it.
fn update_json(n: u64, loss: f64) -> String {
    format!(
        "{{\"attempt\":{n},\"epoch\":0,\"stage\":0,\"applied\":true,\"updates\":{n},\"loss\":{loss},\
         \"denominator\":80.0,\"examples\":16,\"tokens\":80,\"microbatches\":4,\"partial\":false,\
         \"lr\":0.01,\"grad_norm\":1.0,\"clipped\":false,\"loss_scale\":1.0}}"
    )
}

/// A report that keeps 100,000 attempts itself (no stream; accum writes
/// at most 1,024): the report is read thinned to an even spread of its
/// attempts, as accum would have kept them, and the sheet draws those in
/// bounded memory.
#[test]
fn a_report_of_many_updates_without_a_stream_is_read_thinned() {
    let dir = scratch("bounded-report-updates");
    fs::copy(fixtures().join("tiny.toml"), dir.join("tiny.toml")).expect("fixture");
    let out = run_in(
        &dir,
        &["run", "tiny.toml", "--report", "run.json", "--quiet"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut report: Value =
        serde_json::from_str(&fs::read_to_string(dir.join("run.json")).expect("report"))
            .expect("json");
    let attempts = 100_000u64;
    let mut updates = String::with_capacity(attempts as usize * 260);
    for n in 1..=attempts {
        let loss = match n {
            77_777 => -1.5,
            90_001 => 12.25,
            _ => 2.0 + (n % 97) as f64 / 97.0,
        };
        updates.push(if n == 1 { '[' } else { ',' });
        updates.push_str(&update_json(n, loss));
    }
    updates.push(']');
    report["updates"] = Value::String("UPDATES".into());
    report["updates_stride"] = 1.into();
    report["counters"]["update_attempts"] = attempts.into();
    let text = report.to_string().replace("\"UPDATES\"", &updates);
    fs::write(dir.join("run.json"), text).expect("write");
    let out = in_a_gibibyte(
        &dir,
        &[
            "sheet",
            "tiny.toml",
            "--report",
            "run.json",
            "--format",
            "json",
            "-o",
            "sheet.json",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let sheet: Value =
        serde_json::from_str(&fs::read_to_string(dir.join("sheet.json")).expect("sheet"))
            .expect("json");
    let losses = chart(&sheet["trial"]["charts"], "loss");
    let points = losses["series"][0]["points"].as_array().expect("points");
    assert!(
        !points.is_empty() && points.len() <= 1024,
        "{} points",
        points.len()
    );
    // Only what was read is drawn: every value is one the report holds.
    let (lo, hi) = extremes(&losses["series"][0]);
    assert!((-1.5..=12.25).contains(&lo) && (-1.5..=12.25).contains(&hi) && lo <= hi);
    let _ = fs::remove_dir_all(&dir);
}

/// A report of 100,000 stages (and a comparison of two): the tables show
/// the first and last stages and how many are left out, the plots mark
/// where the last stage starts, the notes stop after a few, and every
/// format stays small.
#[test]
fn a_report_of_a_hundred_thousand_stages_gives_a_small_sheet() {
    let dir = scratch("bounded-stages");
    fs::copy(fixtures().join("rampup.toml"), dir.join("rampup.toml")).expect("fixture");
    let out = run_in(
        &dir,
        &["run", "rampup.toml", "--report", "ramp.json", "--quiet"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut report: Value =
        serde_json::from_str(&fs::read_to_string(dir.join("ramp.json")).expect("report"))
            .expect("json");
    // A configuration of 100,000 stages (B = 1 … 100,000), every one of
    // which the report's stages differ from: a note each, before the cap.
    let ramp = "[batch]\nmicro_batch = 1\naccumulation = 100000\nreplicas = 1\n\n\
        [batch.ramp]\nstart = 1\nincrement = 1\nover = \"10000000000 examples\"\n\n\
        [schedule]\nkind = \"constant\"\nwarmup = \"0 updates\"\ntotal = \"10000000000 examples\"\n\n\
        [data]\nexamples = 200000\nmin_len = 2\nmax_len = 3\nvocab = 16\nlast_group = \"drop\"\n\n\
        [model]\nhidden = 16\nffn = 32\n";
    fs::write(dir.join("ramp.toml"), ramp).expect("config");
    let template = report["stages"][0].clone();
    let count = 100_000u64;
    let stages: Vec<Value> = (0..count)
        .map(|i| {
            let mut stage = template.clone();
            stage["first_update"] = (i + 1).into();
            stage["last_update"] = (i + 1).into();
            stage["applied_updates"] = 1.into();
            stage["attempts"] = 1.into();
            stage["plan"]["accumulation"] = (i % 8 + 1).into();
            stage
        })
        .collect();
    report["stages"] = Value::Array(stages);
    fs::write(dir.join("ramp.json"), report.to_string()).expect("write");
    fs::copy(dir.join("ramp.json"), dir.join("again.json")).expect("copy");
    for (format, output) in [
        ("html", "sheet.html"),
        ("md", "sheet.md"),
        ("json", "sheet.json"),
    ] {
        let out = in_a_gibibyte(
            &dir,
            &[
                "sheet",
                "ramp.toml",
                "--report",
                "ramp.json",
                "--force",
                "--format",
                format,
                "-o",
                output,
            ],
        );
        assert_eq!(out.code, 0, "{format}: {}", out.stderr);
        let size = fs::metadata(dir.join(output)).expect("sheet").len();
        assert!(size < 1 << 20, "{format}: {size} bytes");
        let text = fs::read_to_string(dir.join(output)).expect("sheet");
        if format == "json" {
            let sheet: Value = serde_json::from_str(&text).expect("json");
            let stages = &sheet["trial"]["stages"];
            assert_eq!(stages["omitted"], 99_900, "{format}: the rows left out");
            let notes = stages["notes"].as_array().expect("notes");
            assert_eq!(notes.len(), 8, "{format}: the notes stop");
        } else {
            assert!(text.contains("99,900 more stages"), "{format}: the gap row");
        }
        assert!(
            text.contains("more notes like these on later stages"),
            "{format}: the notes stop"
        );
        eprintln!("{format}: {size} bytes");
    }
    let svgs: u64 = crate::names(&dir)
        .iter()
        .filter(|n| n.ends_with(".svg"))
        .map(|n| fs::metadata(dir.join(n)).expect("svg").len())
        .sum();
    assert!(svgs < 1 << 20, "{svgs} bytes of plots");
    eprintln!("the Markdown sheet's plots: {svgs} bytes");
    let out = in_a_gibibyte(
        &dir,
        &[
            "compare",
            "ramp.json",
            "again.json",
            "--axis",
            "examples",
            "--format",
            "html",
            "-o",
            "cmp.html",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let size = fs::metadata(dir.join("cmp.html"))
        .expect("comparison")
        .len();
    assert!(size < 1 << 20, "compare: {size} bytes");
    eprintln!("compare: {size} bytes");
    let text = fs::read_to_string(dir.join("cmp.html")).expect("comparison");
    assert!(
        // A report's stages are read up to 65,536, with a note.
        text.contains("65,536 stages; the dashed line marks where the last starts"),
        "the comparison says why one mark"
    );
    let _ = fs::remove_dir_all(&dir);
}
