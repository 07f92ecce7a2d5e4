//! Every file the CLI writes is replaced atomically: a killed run or a
//! failing write leaves the previous file intact and no temporary file.
//!
//! Unwritable folders, as root (permissions do not stop root): an output
//! path under a regular file (ENOTDIR), and a read-only bind mount made in a
//! private mount namespace with `unshare --mount` (EROFS), skipped with a
//! note where the system does not allow it.

use std::fs;
use std::path::Path;
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use crate::{fixtures, names, run_in, scratch};

/// The tiny config, made to run for hours.
fn long_config(dir: &Path) {
    let text = fs::read_to_string(fixtures().join("tiny.toml"))
        .expect("tiny.toml")
        .replace("total = \"12 updates\"", "total = \"10000000 updates\"");
    assert!(text.contains("10000000 updates"));
    fs::write(dir.join("long.toml"), text).expect("write");
}

#[test]
fn a_killed_run_leaves_the_previous_report_intact() {
    let dir = scratch("atomic-kill");
    long_config(&dir);
    fs::write(dir.join("run.json"), "previous report\n").expect("write");
    let mut child = StdCommand::new(env!("CARGO_BIN_EXE_accum"))
        .current_dir(&dir)
        .args(["run", "long.toml", "--report", "run.json", "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("accum runs");
    // Let it get well into the run, then kill it (SIGKILL: no handler runs).
    let started = Instant::now();
    while started.elapsed() < Duration::from_millis(1500) {
        assert!(
            child.try_wait().expect("status").is_none(),
            "the run ended early"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().expect("kill");
    let status = child.wait().expect("wait");
    assert!(!status.success());
    assert_eq!(
        fs::read_to_string(dir.join("run.json")).expect("report"),
        "previous report\n"
    );
    assert_eq!(names(&dir), ["long.toml", "run.json"]);
}

#[test]
fn outputs_under_a_regular_file_fail_cleanly_for_every_command() {
    let dir = scratch("atomic-notdir");
    fs::copy(fixtures().join("tiny.toml"), dir.join("tiny.toml")).expect("copy");
    fs::write(dir.join("file"), "x").expect("write");
    for args in [
        vec!["schema", "-o", "file/schema.json"],
        vec!["sheet", "tiny.toml", "-o", "file/sheet.html"],
        vec!["sheet", "tiny.toml", "-o", "file/sheet.md"],
        vec![
            "replan",
            "tiny.toml",
            "--max-micro-batch",
            "2",
            "-o",
            "file/new.toml",
        ],
        vec!["run", "tiny.toml", "--quiet", "--report", "file/run.json"],
        vec!["run", "tiny.toml", "--quiet", "--dump", "file/dump"],
    ] {
        let out = run_in(&dir, &args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        let target = args.last().expect("the output path");
        assert!(out.stderr.contains(target), "{args:?}: {}", out.stderr);
        assert!(!out.stderr.contains("panicked"), "{args:?}: {}", out.stderr);
        assert_eq!(names(&dir), ["file", "tiny.toml"], "{args:?}");
        assert_eq!(fs::read_to_string(dir.join("file")).expect("file"), "x");
    }
    // The run's report folder is checked before the run: it fails at once.
    let started = Instant::now();
    let long = fs::read_to_string(dir.join("tiny.toml"))
        .expect("tiny.toml")
        .replace("total = \"12 updates\"", "total = \"10000000 updates\"");
    fs::write(dir.join("tiny.toml"), long).expect("write");
    let out = run_in(
        &dir,
        &["run", "tiny.toml", "--quiet", "--report", "file/run.json"],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the run started"
    );
    // An existing directory as the output: refused, left alone.
    fs::create_dir(dir.join("out.html")).expect("dir");
    let out = run_in(&dir, &["sheet", "tiny.toml", "-o", "out.html"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("out.html: is a directory"),
        "{}",
        out.stderr
    );
    assert!(dir.join("out.html").is_dir());
}

/// Runs `script` (with `$D` the folder, `$ACCUM` the binary) in a private
/// mount namespace after making `$D` a read-only bind mount of itself.
/// `None` when the system does not allow it.
fn in_read_only(dir: &Path, script: &str) -> Option<std::process::Output> {
    let setup = "mount --bind \"$D\" \"$D\" && mount -o remount,bind,ro \"$D\" || exit 99";
    let probe = StdCommand::new("unshare")
        .args(["--mount", "sh", "-c"])
        .arg(format!("{setup}; touch \"$D/.probe\" && exit 98; exit 0"))
        .env("D", dir)
        .output()
        .ok()?;
    if probe.status.code() != Some(0) {
        return None;
    }
    StdCommand::new("unshare")
        .args(["--mount", "sh", "-c"])
        .arg(format!("{setup}; {script}"))
        .env("D", dir)
        .env("ACCUM", env!("CARGO_BIN_EXE_accum"))
        .env("NO_COLOR", "1")
        .output()
        .ok()
}

#[test]
fn a_read_only_folder_keeps_the_previous_files() {
    let dir = scratch("atomic-ro");
    fs::copy(fixtures().join("tiny.toml"), dir.join("tiny.toml")).expect("copy");
    fs::write(dir.join("sheet.html"), "previous sheet\n").expect("write");
    fs::write(dir.join("run.json"), "previous report\n").expect("write");
    let script = "cd \"$D\" && \"$ACCUM\" sheet tiny.toml -o sheet.html; echo \"sheet=$?\" >&2; \
                  \"$ACCUM\" run tiny.toml --quiet --report run.json; echo \"run=$?\" >&2; \
                  \"$ACCUM\" replan tiny.toml --max-micro-batch 2 --in-place; echo \"replan=$?\" >&2";
    let Some(out) = in_read_only(&dir, script) else {
        eprintln!("skipped: no read-only bind mount here (needs unshare --mount as root)");
        return;
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    for (command, file) in [
        ("sheet", "sheet.html"),
        ("run", "run.json"),
        ("replan", "tiny.toml"),
    ] {
        assert!(stderr.contains(&format!("{command}=2")), "{stderr}");
        assert!(
            stderr.contains(file) && stderr.contains("Read-only file system"),
            "{stderr}"
        );
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(
        fs::read_to_string(dir.join("sheet.html")).expect("sheet"),
        "previous sheet\n"
    );
    assert_eq!(
        fs::read_to_string(dir.join("run.json")).expect("report"),
        "previous report\n"
    );
    assert_eq!(
        fs::read(dir.join("tiny.toml")).expect("config"),
        fs::read(fixtures().join("tiny.toml")).expect("fixture")
    );
    assert_eq!(names(&dir), ["run.json", "sheet.html", "tiny.toml"]);
}
