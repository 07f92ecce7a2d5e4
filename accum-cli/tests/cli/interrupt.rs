//! Ctrl-C like cargo: the first is acknowledged and stops the run within
//! the current microbatch (that group is not applied) with the report
//! written and exit status 130; a second ends the process at once.

#![cfg(unix)]

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::{fixtures, names, scratch};

/// A group of 32 slow microbatches (a wide model on long examples): a stop
/// at the group's end would wait for all of them.
const SLOW: &str = "[batch]\nmicro_batch = 8\naccumulation = 32\nreplicas = 1\n\n\
[schedule]\nkind = \"constant\"\ntotal = \"1000 updates\"\n\n\
[data]\nexamples = 4096\nmin_len = 64\nmax_len = 64\nvocab = 16\n\n\
[model]\nhidden = 1024\nffn = 1024\n\n[log]\nevery = \"1 updates\"\n";

fn start(dir: &Path, config: &str) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("accum"))
        .current_dir(dir)
        .args(["run", config, "--report", "run.json", "--quiet"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts")
}

/// SIGINT, as Ctrl-C sends it, within microseconds of the call.
fn interrupt(child: &Child) {
    let pid = i32::try_from(child.id()).expect("a process id");
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::SIGINT)
        .expect("the run is signalled");
}

fn report(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).expect("report"))
        .expect("a whole JSON report")
}

#[test]
fn ctrl_c_is_acknowledged_keeps_the_report_and_exits_130() {
    let dir = scratch("interrupt-first");
    std::fs::copy(fixtures().join("long.toml"), dir.join("long.toml")).expect("copy");
    let child = start(&dir, "long.toml");
    std::thread::sleep(Duration::from_millis(1500));
    interrupt(&child);
    let out = child.wait_with_output().expect("finishes");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("interrupted: stopping within the current microbatch"),
        "{stderr}"
    );
    // Whole on a terminal of 80 columns: each line of the message fits.
    for line in stderr
        .lines()
        .filter(|l| l.contains("interrupt") || l.contains("Ctrl-C"))
    {
        assert!(line.chars().count() < 80, "{line:?}");
    }
    assert!(
        stderr.contains("\npress Ctrl-C again to stop at once"),
        "{stderr}"
    );
    let report = report(&dir);
    assert_eq!(report["stopped_early"], true);
    let applied = report["counters"]["applied_updates"]
        .as_u64()
        .expect("count");
    assert!(applied > 0 && applied < 1_000_000, "{applied}");
    // Only whole groups count: m = 4, A = 2, D = 2.
    assert_eq!(
        report["counters"]["microbatches"].as_u64(),
        Some(applied * 2 * 2)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("stopped early by Ctrl-C"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn a_slow_group_stops_within_a_microbatch() {
    let dir = scratch("interrupt-slow");
    std::fs::write(dir.join("slow.toml"), SLOW).expect("config");
    let child = start(&dir, "slow.toml");
    // Into the first group (each microbatch takes a while in a test build).
    std::thread::sleep(Duration::from_millis(2500));
    interrupt(&child);
    let signalled = Instant::now();
    let out = child.wait_with_output().expect("finishes");
    let stopped_after = signalled.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    let report = report(&dir);
    assert_eq!(report["stopped_early"], true);
    let applied = report["counters"]["applied_updates"]
        .as_u64()
        .expect("count");
    // The group under way was left, not finished: the run ends before the
    // 32 microbatches of a group could, and nothing of that group counts.
    assert_eq!(
        report["counters"]["microbatches"].as_u64(),
        Some(applied * 32),
        "{report}"
    );
    eprintln!("a slow group stopped {stopped_after:?} after Ctrl-C ({applied} updates applied)");
}

#[test]
fn a_second_ctrl_c_ends_at_once_and_leaves_no_partial_file() {
    let dir = scratch("interrupt-second");
    std::fs::write(dir.join("slow.toml"), SLOW).expect("config");
    std::fs::write(dir.join("run.json"), "{\"previous\": true}\n").expect("previous");
    let child = start(&dir, "slow.toml");
    std::thread::sleep(Duration::from_millis(2500));
    interrupt(&child);
    interrupt(&child);
    ended_at_once(&dir, child);
}

/// A run ended by a second Ctrl-C: exit 130, the previous report or the
/// new one whole (never half of one), and no temporary file left.
fn ended_at_once(dir: &Path, child: Child) {
    let out = child.wait_with_output().expect("finishes");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    let report = report(dir);
    assert!(
        report["previous"] == true || report["stopped_early"] == true,
        "{report}"
    );
    assert!(temporaries(dir).is_empty(), "{:?}", temporaries(dir));
}

/// The `.tmp` files in `dir`.
fn temporaries(dir: &Path) -> Vec<String> {
    let mut names = names(dir);
    names.retain(|n| n.ends_with(".tmp"));
    names
}

#[test]
fn a_second_ctrl_c_while_the_report_is_written_leaves_no_temporary_file() {
    let dir = scratch("interrupt-while-writing");
    std::fs::write(dir.join("slow.toml"), SLOW).expect("config");
    std::fs::write(dir.join("run.json"), "{\"previous\": true}\n").expect("previous");
    let mut child = start(&dir, "slow.toml");
    std::thread::sleep(Duration::from_millis(2500));
    interrupt(&child);
    // The second Ctrl-C as soon as the report's temporary file shows, or
    // not at all if the write was done before it could be seen.
    let mut aimed = false;
    while child.try_wait().expect("status").is_none() {
        if !temporaries(&dir).is_empty() {
            interrupt(&child);
            aimed = true;
            break;
        }
    }
    ended_at_once(&dir, child);
    eprintln!("second Ctrl-C during the report's write: {aimed}");
}
