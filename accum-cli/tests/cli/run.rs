//! `accum run` and `accum verify` on a tiny config, and on the ramp-up
//! example `examples/rampup.toml`.

use std::path::{Path, PathBuf};

use crate::{fixtures, run_in, scratch};

/// The repository's `examples/` folder.
fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples")
}

#[test]
fn run_writes_a_report_and_counts_in_units() {
    let dir = scratch("run");
    std::fs::copy(fixtures().join("tiny.toml"), dir.join("tiny.toml")).expect("copy");
    let out = run_in(
        &dir,
        &["run", "tiny.toml", "--report", "run.json", "--quiet"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("12 applied updates in"),
        "{}",
        out.stdout
    );
    // Logs are in the declared axis: every 64 examples (B = 16), with the
    // learning rate (a constant 1e-2), the gradient norm, the throughput
    // and the time since the start.
    let log = out
        .stdout
        .lines()
        .find(|l| l.starts_with("      64 examples  loss "))
        .unwrap_or_else(|| panic!("a log line: {}", out.stdout));
    assert!(log.contains("  lr 1.00e-2  grad norm "), "{log}");
    assert!(log.contains(" tok/s  "), "{log}");
    let clock = log.rsplit("  ").next().unwrap_or_default();
    assert!(
        clock.contains(':') && clock.chars().all(|c| c.is_ascii_digit() || c == ':'),
        "{log}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).expect("report"))
            .expect("json");
    assert_eq!(report["counters"]["applied_updates"], 12);
    assert_eq!(report["counters"]["scheduler_steps"], 12);
    assert_eq!(report["counters"]["microbatches"], 12 * 2 * 2);
    assert_eq!(report["loss_curve"]["axis"], "examples");
    // 60 examples, B = 16: 3 full groups and 12 dropped per epoch (`accum::plan::partial-group`).
    assert!(
        report["counters"]["dropped_examples"]
            .as_u64()
            .expect("count")
            >= 12
    );
    let names: Vec<_> = std::fs::read_dir(&dir)
        .expect("list")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names.len(), 2, "no temporary files left: {names:?}");
}

#[test]
fn run_dumps_follow_the_dump_format() {
    let dir = scratch("run-dump");
    std::fs::copy(fixtures().join("tiny.toml"), dir.join("tiny.toml")).expect("copy");
    let out = run_in(&dir, &["run", "tiny.toml", "--dump", "dump", "--quiet"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("dump/manifest.json")).expect("manifest"),
    )
    .expect("json");
    assert_eq!(manifest["format"], "accum-dump/1");
    assert_eq!(
        manifest["params"],
        serde_json::json!(["embed", "w1", "b1", "w2", "b2"])
    );
    let npy = std::fs::read(dir.join("dump/update-000001/grad/w1.npy")).expect("gradient");
    assert_eq!(&npy[..6], b"\x93NUMPY");
    assert!(dir.join("dump/update-000012/param/b2.npy").exists());
}

#[test]
fn run_refuses_invalid_configs_before_any_work() {
    let dir = scratch("run-bad");
    std::fs::copy(fixtures().join("mistakes/zero.toml"), dir.join("zero.toml")).expect("copy");
    let out = run_in(&dir, &["run", "zero.toml", "--report", "run.json"]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("accumulation is 0"), "{}", out.stderr);
    assert!(!dir.join("run.json").exists());
}

#[test]
fn verify_passes_the_preflight_checklist() {
    let out = run_in(&fixtures(), &["verify", "tiny.toml"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    for check in [
        "same examples",
        "weighted loss",
        "finite gradients",
        "group boundary",
        "update count",
        "gradient equivalence",
    ] {
        assert!(
            out.stdout.contains(&format!("pass {check}")),
            "{check}: {}",
            out.stdout
        );
    }
    let json: serde_json::Value = serde_json::from_str(
        &run_in(&fixtures(), &["verify", "tiny.toml", "--format", "json"]).stdout,
    )
    .expect("json");
    assert_eq!(json["passed"], true);
    assert!(json["max_rel_grad_diff"].as_f64().expect("number") < 1e-3);
}

/// The three-stage quickstart variant: B = 16, 32, then 64, every length
/// in examples. The report and the summary count each stage.
#[test]
fn run_ramps_up_in_three_stages_and_counts_each_stage() {
    let dir = scratch("run-rampup");
    std::fs::copy(examples().join("rampup.toml"), dir.join("rampup.toml")).expect("copy");
    let out = run_in(
        &dir,
        &["run", "rampup.toml", "--report", "run.json", "--quiet"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    // 1,600 examples at 16, 3,200 at 32, then 14,400 at 64: 100 + 100 + 225.
    assert!(
        out.stdout.contains("425 applied updates in"),
        "{}",
        out.stdout
    );
    for line in [
        "    1: B 16 (A 1), updates 1–100: applied 100, attempts 100, skipped 0, microbatches 200, examples 1,600,",
        "    2: B 32 (A 2), updates 101–200: applied 100, attempts 100, skipped 0, microbatches 400, examples 3,200,",
        "    3: B 64 (A 4), updates 201–425: applied 225, attempts 225, skipped 0,",
    ] {
        assert!(out.stdout.contains(line), "{line}\n{}", out.stdout);
    }
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).expect("report"))
            .expect("json");
    assert_eq!(report["total_updates"], 425);
    // The warmup of 1,280 examples is 80 updates of the first stage.
    assert_eq!(report["warmup_updates"], 80);
    assert_eq!(report["plan"]["effective_batch"], 64);
    let stages = report["stages"].as_array().expect("stages");
    let rows: Vec<(u64, u64, Option<u64>, u64)> = stages
        .iter()
        .map(|s| {
            (
                s["plan"]["accumulation"].as_u64().expect("A"),
                s["first_update"].as_u64().expect("first"),
                s["last_update"].as_u64(),
                s["applied_updates"].as_u64().expect("applied"),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (1, 1, Some(100), 100),
            (2, 101, Some(200), 100),
            (4, 201, None, 225)
        ]
    );
    let sum = |key: &str| {
        stages
            .iter()
            .map(|s| s[key].as_u64().expect(key))
            .sum::<u64>()
    };
    assert_eq!(sum("examples"), report["counters"]["examples"]);
    assert_eq!(sum("tokens"), report["counters"]["supervised_tokens"]);
    assert_eq!(sum("microbatches"), report["counters"]["microbatches"]);
    assert_eq!(report["counters"]["scheduler_steps"], 425);
    let updates = report["updates"].as_array().expect("updates");
    assert_eq!(updates[99]["stage"], 0);
    assert_eq!(updates[100]["stage"], 1);
    assert_eq!(updates[200]["stage"], 2);
}

/// `accum verify` on a ramp-up checks the first update of each stage
/// against one batch of that stage's size.
#[test]
fn verify_checks_one_update_of_each_stage() {
    let out = run_in(&examples(), &["verify", "rampup.toml"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    for header in [
        "stage 1 (update 1): B = m·A·D = 8 × 1 × 2 = 16 vs one batch of 16",
        "stage 2 (update 101): B = m·A·D = 8 × 2 × 2 = 32 vs one batch of 32",
        "stage 3 (update 201): B = m·A·D = 8 × 4 × 2 = 64 vs one batch of 64",
        "all checks passed in every stage",
    ] {
        assert!(out.stdout.contains(header), "{header}\n{}", out.stdout);
    }
    assert_eq!(out.stdout.matches("pass gradient equivalence").count(), 3);
    let json: serde_json::Value = serde_json::from_str(
        &run_in(&examples(), &["verify", "rampup.toml", "--format", "json"]).stdout,
    )
    .expect("json");
    assert_eq!(json["passed"], true);
    let stages = json["stages"].as_array().expect("stages");
    let checked: Vec<u64> = stages
        .iter()
        .map(|s| s["check"]["examples"].as_u64().expect("examples"))
        .collect();
    assert_eq!(checked, [16, 32, 64]);
    // No tolerance at all fails every stage: accumulation is not bit-exact.
    let strict = run_in(
        &examples(),
        &["verify", "rampup.toml", "--rtol=0", "--atol=0"],
    );
    assert_eq!(strict.code, 1, "{}", strict.stdout);
    assert!(
        strict
            .stdout
            .contains("some checks failed in stage 1, 2, 3"),
        "{}",
        strict.stdout
    );
}

#[test]
fn verify_fails_with_an_impossible_tolerance() {
    // No tolerance at all: accumulation is not bit-exact (`accum::verify::equivalence`).
    let out = run_in(
        &fixtures(),
        &["verify", "tiny.toml", "--rtol=0", "--atol=0"],
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stdout.contains("FAIL gradient equivalence"),
        "{}",
        out.stdout
    );
}

#[test]
fn verify_refuses_negative_tolerances() {
    let out = run_in(&fixtures(), &["verify", "tiny.toml", "--rtol=-1"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("--rtol"), "{}", out.stderr);
}

#[test]
fn a_stats_stream_beside_the_report_feeds_the_sheet() {
    let dir = scratch("run-stream");
    std::fs::copy(fixtures().join("tiny.toml"), dir.join("tiny.toml")).expect("copy");
    let out = run_in(
        &dir,
        &[
            "run",
            "tiny.toml",
            "--report",
            "run.json",
            "--stream-stats",
            "--threads",
            "2",
            "--quiet",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).expect("report"))
            .expect("json");
    assert_eq!(report["stats_stream"], "run.stats.jsonl");
    let stream = std::fs::read_to_string(dir.join("run.stats.jsonl")).expect("stream");
    let lines: Vec<serde_json::Value> = stream
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let updates = lines.iter().filter(|l| l.get("update").is_some()).count();
    let logs: Vec<_> = lines.iter().filter_map(|l| l.get("log")).collect();
    assert_eq!(updates, 12);
    assert_eq!(
        logs.len(),
        report["loss_curve"]["points"]
            .as_array()
            .expect("points")
            .len()
    );
    assert_eq!(logs[0]["axis"], "examples");
    assert_eq!(logs[0]["x"], 64);
    // The sheet reads the curve from the stream.
    let sheet = run_in(
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
    assert_eq!(sheet.code, 0, "{}", sheet.stderr);
    let sheet: serde_json::Value = serde_json::from_str(&sheet.stdout).expect("sheet json");
    let text = sheet.to_string();
    assert!(!text.contains("the loss curve"), "no curve warning: {text}");
    // Without the stream beside it, the sheet says so and uses the report.
    std::fs::remove_file(dir.join("run.stats.jsonl")).expect("remove");
    let sheet = run_in(
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
    assert_eq!(sheet.code, 0, "{}", sheet.stderr);
    assert!(
        sheet.stdout.contains("the loss curve is the report's own"),
        "{}",
        sheet.stdout
    );
}

/// What an 80-column terminal (a pseudo-terminal from util-linux `script`)
/// shows of `accum ARGS` run in `dir`, with `env` set and the colour
/// variables of the test's own environment removed.
fn on_terminal(dir: &Path, args: &str, env: &[(&str, &str)]) -> String {
    let command = format!(
        "stty cols 80 rows 24; '{}' {args}",
        env!("CARGO_BIN_EXE_accum")
    );
    let mut script = std::process::Command::new("script");
    script
        .current_dir(dir)
        .env("SHELL", "/bin/sh")
        .env("TERM", "xterm")
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR")
        .env_remove("CLICOLOR_FORCE");
    for (name, value) in env {
        script.env(name, value);
    }
    let out = script
        .args(["-q", "-e", "-c", &command, "/dev/null"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("util-linux `script` runs (.ci/run installs it)");
    assert!(
        out.status.success(),
        "{args}: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The colour sequences (`ESC [ … m`) in `text`; cursor moves and clears
/// are not colours.
fn colours(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (at, _) in text.match_indices("\u{1b}[") {
        let body = &text[at + 2..];
        let end = body
            .find(|c: char| !(c.is_ascii_digit() || c == ';'))
            .unwrap_or(body.len());
        if body[end..].starts_with('m') {
            found.push(body[..end].to_owned());
        }
    }
    found
}

/// A short run of the quickstart in `dir`, as `q.toml`.
fn short_quickstart(dir: &Path) {
    let config = std::fs::read_to_string(examples().join("quickstart.toml"))
        .expect("quickstart")
        .replace("total = \"300 updates\"", "total = \"60 updates\"");
    std::fs::write(dir.join("q.toml"), config).expect("config");
}

/// `--color` decides, then `NO_COLOR` and `CLICOLOR_FORCE`, then whether
/// the output is a terminal: the run's verdict is green on an 80-column
/// terminal, and no colour at all is written under `--color never` or
/// `NO_COLOR`.
#[test]
fn colours_follow_the_color_flag_and_the_environment_on_a_terminal() {
    let dir = scratch("run-terminal-colour");
    short_quickstart(&dir);
    let auto = on_terminal(&dir, "run q.toml", &[]);
    assert!(colours(&auto).contains(&"32".to_owned()), "{auto:?}");
    let never = on_terminal(&dir, "run q.toml --color never", &[]);
    assert_eq!(colours(&never), Vec::<String>::new(), "{never:?}");
    assert!(never.contains("60 applied updates"), "{never:?}");
    let no_color = on_terminal(&dir, "run q.toml", &[("NO_COLOR", "1")]);
    assert_eq!(colours(&no_color), Vec::<String>::new(), "{no_color:?}");
    // The flag given for this run wins over the environment.
    let always = on_terminal(&dir, "--color=always run q.toml", &[("NO_COLOR", "1")]);
    assert!(colours(&always).contains(&"32".to_owned()), "{always:?}");
    let dumb = on_terminal(&dir, "run q.toml", &[("TERM", "dumb")]);
    assert_eq!(colours(&dumb), Vec::<String>::new(), "{dumb:?}");
}

/// Through a pipe nothing is coloured, unless `--color always` or
/// `CLICOLOR_FORCE` asks; `NO_COLOR` wins over `CLICOLOR_FORCE`, and
/// `--color never` over both. `verify`'s checks are green, or red when
/// they fail.
#[test]
fn colours_through_a_pipe_only_when_asked() {
    let dir = scratch("run-pipe-colour");
    std::fs::copy(fixtures().join("tiny.toml"), dir.join("tiny.toml")).expect("copy");
    let verify = |args: &[&str], env: &[(&str, &str)]| {
        let mut cmd = assert_cmd::Command::cargo_bin("accum").expect("the accum binary");
        cmd.current_dir(&dir)
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR")
            .env_remove("CLICOLOR_FORCE");
        for (name, value) in env {
            cmd.env(name, value);
        }
        let out = cmd.args(args).output().expect("accum runs");
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        String::from_utf8(out.stdout).expect("utf-8")
    };
    let plain = verify(&["verify", "tiny.toml"], &[]);
    assert_eq!(colours(&plain), Vec::<String>::new(), "{plain}");
    assert!(plain.contains("  pass "), "{plain}");
    let always = verify(&["verify", "tiny.toml", "--color", "always"], &[]);
    assert!(always.contains("\u{1b}[32mpass\u{1b}[0m"), "{always:?}");
    assert!(always.contains("\u{1b}[32mall checks passed"), "{always:?}");
    // Without the colours, the same text.
    let mut stripped = always.clone();
    for sgr in ["\u{1b}[32m", "\u{1b}[0m"] {
        stripped = stripped.replace(sgr, "");
    }
    assert_eq!(stripped, plain);
    let forced = verify(&["verify", "tiny.toml"], &[("CLICOLOR_FORCE", "1")]);
    assert!(!colours(&forced).is_empty(), "{forced:?}");
    let zero = verify(&["verify", "tiny.toml"], &[("CLICOLOR_FORCE", "0")]);
    assert_eq!(colours(&zero), Vec::<String>::new(), "{zero:?}");
    let both = verify(
        &["verify", "tiny.toml"],
        &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")],
    );
    assert_eq!(colours(&both), Vec::<String>::new(), "{both:?}");
    let never = verify(
        &["verify", "tiny.toml", "--color=never"],
        &[("CLICOLOR_FORCE", "1")],
    );
    assert_eq!(colours(&never), Vec::<String>::new(), "{never:?}");
}

/// On an 80-column terminal (a pseudo-terminal from util-linux `script`),
/// the status line is redrawn in place and never longer than the terminal
/// is wide, so it never wraps, in colour or not.
#[test]
fn the_status_line_fits_80_columns() {
    let dir = scratch("run-terminal");
    short_quickstart(&dir);
    for (args, env) in [
        ("run q.toml", &[("NO_COLOR", "1")][..]),
        ("run q.toml --color always", &[][..]),
    ] {
        status_lines_fit(&on_terminal(&dir, args, env));
    }
}

fn status_lines_fit(shown: &str) {
    // The terminal's control sequences (cursor moves, clears) end a line
    // as a carriage return does.
    let mut plain = String::new();
    let mut chars = shown.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for d in chars.by_ref() {
                    if d.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            plain.push('\r');
            continue;
        }
        plain.push(c);
    }
    // indicatif pads each line it prints to the terminal's width, so a log
    // line and the bar after it can share a segment: the status line starts
    // at the bar.
    let status: Vec<&str> = plain
        .split(['\r', '\n'])
        .filter(|l| l.contains(" updates (") && l.contains("%)"))
        .filter_map(|l| l.find(['█', '░']).map(|at| &l[at..]))
        .collect();
    assert!(!status.is_empty(), "a status line was drawn: {plain:?}");
    for line in status {
        assert!(
            line.trim_end().chars().count() <= 80,
            "{} columns: {line:?}",
            line.trim_end().chars().count()
        );
    }
}
