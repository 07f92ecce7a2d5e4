//! `accum replan` (`accum::run::memory`).

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

/// `replan --params` reads counts as `calc --params` does (7e9, 7B).
#[test]
fn replan_params_take_every_form_of_a_count() {
    let dir = scratch("replan-params");
    let config =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/quickstart.toml");
    let config = config.to_str().expect("utf-8");
    let outs: Vec<crate::Out> = ["7e9", "7B", "7000000000"]
        .iter()
        .map(|p| {
            run_in(
                &dir,
                &[
                    "replan",
                    config,
                    "--memory-budget",
                    "140GiB",
                    "--params",
                    p,
                    "--activation-per-example",
                    "1GiB",
                ],
            )
        })
        .collect();
    for out in &outs {
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert_eq!(out.stderr, outs[0].stderr);
    }
    assert!(
        outs[0].stderr.contains("budget 140.00 GiB allows m ≤ 35"),
        "{}",
        outs[0].stderr
    );
    let bad = run_in(
        &dir,
        &[
            "replan",
            config,
            "--memory-budget",
            "24GiB",
            "--params",
            "7.5",
        ],
    );
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("e.g. 7000000000, 7B, 1.3B or 7e9"),
        "{}",
        bad.stderr
    );
}
