//! `accum replan` (R11).

use crate::{run_in, scratch};

const CONFIG: &str = "# keep me\n[run]\nname = \"r\"\n\n[batch]\nmicro_batch = 32 # too big\naccumulation = 1\nreplicas = 2\n\n[schedule]\nwarmup = \"40 microbatches\"\ntotal = \"100 updates\"\n";

#[test]
fn replan_keeps_b_comments_and_schedule() {
    let dir = scratch("replan");
    std::fs::write(dir.join("train.toml"), CONFIG).expect("write");
    let out = run_in(&dir, &["replan", "train.toml", "--max-micro-batch", "10"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    insta::assert_snapshot!("replan_stdout", out.stdout);
    insta::assert_snapshot!("replan_summary", out.stderr);
    // The file itself is untouched without -o or --in-place.
    assert_eq!(
        std::fs::read_to_string(dir.join("train.toml")).expect("read"),
        CONFIG
    );
}

#[test]
fn in_place_keeps_a_backup_and_output_is_atomic() {
    let dir = scratch("replan-in-place");
    std::fs::write(dir.join("train.toml"), CONFIG).expect("write");
    let out = run_in(
        &dir,
        &[
            "replan",
            "train.toml",
            "--max-micro-batch",
            "8",
            "--in-place",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        std::fs::read_to_string(dir.join("train.toml.bak")).expect("backup"),
        CONFIG
    );
    let new = std::fs::read_to_string(dir.join("train.toml")).expect("read");
    assert!(
        new.contains("micro_batch = 8 # too big\naccumulation = 4\n"),
        "{new}"
    );
    let out = run_in(
        &dir,
        &[
            "replan",
            "train.toml",
            "--max-micro-batch",
            "2",
            "-o",
            "small.toml",
        ],
    );
    assert_eq!(out.code, 0);
    let small = std::fs::read_to_string(dir.join("small.toml")).expect("read");
    assert!(
        small.contains("micro_batch = 2 # too big\naccumulation = 16\n"),
        "{small}"
    );
    // The replanned file validates and keeps B.
    let out = run_in(&dir, &["validate", "small.toml"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
}

#[test]
fn impossible_or_invalid_requests_fail() {
    let dir = scratch("replan-bad");
    std::fs::write(dir.join("train.toml"), CONFIG).expect("write");
    let out = run_in(&dir, &["replan", "train.toml", "--max-micro-batch", "0"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    std::fs::write(
        dir.join("bad.toml"),
        CONFIG.replace("accumulation = 1", "accumulation = 0"),
    )
    .expect("write");
    let out = run_in(
        &dir,
        &[
            "replan",
            "bad.toml",
            "--max-micro-batch",
            "4",
            "-o",
            "out.toml",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("accumulation is 0"), "{}", out.stderr);
    assert!(
        !dir.join("out.toml").exists(),
        "no output for an invalid input"
    );
}
