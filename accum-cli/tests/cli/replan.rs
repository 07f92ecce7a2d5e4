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

/// `--replicas 1` on D = 2: the same micro-batch, twice the accumulation,
/// and a span in microbatches that keeps its updates.
#[test]
fn replicas_two_to_one_doubles_the_accumulation() {
    let dir = scratch("replan-replicas-1");
    std::fs::write(dir.join("train.toml"), CONFIG).expect("write");
    let out = run_in(&dir, &["replan", "train.toml", "--replicas", "1"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        CONFIG
            .replace("accumulation = 1", "accumulation = 2")
            .replace("replicas = 2", "replicas = 1")
            .replace("40 microbatches", "80 microbatches")
    );
    assert!(
        out.stderr
            .starts_with("replanned: m 32 × A 1 × D 2 = B 64  →  m 32 × A 2 × D 1 = B 64\n"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("  batch.replicas: 2 → 1 (the new data-parallel degree)\n"),
        "{}",
        out.stderr
    );
    // Only D changed: no note about smaller micro-batches.
    assert!(!out.stderr.contains("note:"), "{}", out.stderr);
}

/// `--replicas 4` on B = 64 with m = 32: 32 × 4 > 64, so m drops to 16
/// (A 1); with a smaller configuration m is kept and A halves.
#[test]
fn replicas_two_to_four_adjusts_m_only_when_needed() {
    let dir = scratch("replan-replicas-4");
    std::fs::write(dir.join("train.toml"), CONFIG).expect("write");
    let out = run_in(
        &dir,
        &["replan", "train.toml", "--replicas", "4", "-o", "four.toml"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let four = std::fs::read_to_string(dir.join("four.toml")).expect("read");
    assert!(
        four.contains("micro_batch = 16 # too big\naccumulation = 1\nreplicas = 4\n"),
        "{four}"
    );
    assert!(
        out.stderr.contains(
            "batch.micro_batch: 32 → 16 (the largest micro-batch with B divisible by micro_batch × replicas)"
        ),
        "{}",
        out.stderr
    );
    let out = run_in(&dir, &["validate", "four.toml"]);
    assert_eq!(out.code, 0, "{}", out.stdout);

    let small = CONFIG
        .replace("micro_batch = 32", "micro_batch = 8")
        .replace("accumulation = 1", "accumulation = 4");
    std::fs::write(dir.join("small.toml"), &small).expect("write");
    let out = run_in(&dir, &["replan", "small.toml", "--replicas", "4"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("micro_batch = 8 # too big\naccumulation = 2\nreplicas = 4\n"),
        "{}",
        out.stdout
    );
}

/// `--replicas` with `--max-micro-batch`: both limits hold, and
/// `--in-place` keeps the backup.
#[test]
fn replicas_combine_with_a_micro_batch_limit_in_place() {
    let dir = scratch("replan-replicas-max");
    std::fs::write(dir.join("train.toml"), CONFIG).expect("write");
    let out = run_in(
        &dir,
        &[
            "replan",
            "train.toml",
            "--replicas",
            "1",
            "--max-micro-batch",
            "4",
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
        new.contains("micro_batch = 4 # too big\naccumulation = 16\nreplicas = 1\n"),
        "{new}"
    );
    // 40 updates at A 1 are 640 microbatches at A 16.
    assert!(new.contains("warmup = \"640 microbatches\""), "{new}");
    let out = run_in(
        &dir,
        &[
            "replan",
            "train.toml.bak",
            "--replicas",
            "1",
            "--memory-budget",
            "1GiB",
        ],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
}

/// A D that no (m, A) can reach with the same B is refused at the line of
/// the batch, with the nearest D that keep it; nothing is written.
#[test]
fn replicas_that_cannot_keep_b_are_refused_with_the_nearest() {
    let dir = scratch("replan-replicas-refused");
    std::fs::write(dir.join("train.toml"), CONFIG).expect("write");
    let out = run_in(
        &dir,
        &["replan", "train.toml", "--replicas", "3", "-o", "out.toml"],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "train.toml:8: 3 replicas cannot keep the global batch B = 64 = m 32 × A 1 × D 2: \
             B is not divisible by 3, so no micro-batch m and accumulation A give m × A × 3 = 64; \
             use --replicas 2 or 4, or change the global batch on purpose"
        ),
        "{}",
        out.stderr
    );
    assert!(!dir.join("out.toml").exists());
    // With a declared global batch, the message points at it.
    let declared = CONFIG.replace("replicas = 2\n", "replicas = 2\nglobal_batch = 64\n");
    std::fs::write(dir.join("declared.toml"), declared).expect("write");
    let out = run_in(&dir, &["replan", "declared.toml", "--replicas", "128"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("declared.toml:9: 128 replicas cannot keep the global batch B = 64"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("use --replicas 64,"), "{}", out.stderr);
}

/// YAML and JSON keep their format; the JSON summary lists the changes.
#[test]
fn replicas_edit_yaml_and_json_in_their_format() {
    let dir = scratch("replan-replicas-formats");
    let yaml = "batch:\n  micro_batch: 8 # per GPU\n  accumulation: 2\n  replicas: 2\n";
    std::fs::write(dir.join("t.yaml"), yaml).expect("write");
    let out = run_in(
        &dir,
        &["replan", "t.yaml", "--replicas", "1", "-o", "one.yaml"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        std::fs::read_to_string(dir.join("one.yaml")).expect("read"),
        "batch:\n  micro_batch: 8 # per GPU\n  accumulation: 4\n  replicas: 1\n"
    );
    let json = "{\"batch\": {\"micro_batch\": 8, \"accumulation\": 2, \"replicas\": 2}}";
    std::fs::write(dir.join("t.json"), json).expect("write");
    let out = run_in(
        &dir,
        &["replan", "t.json", "--replicas", "4", "--format", "json"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout.trim_end(),
        "{\"batch\": {\"micro_batch\": 8, \"accumulation\": 1, \"replicas\": 4}}"
    );
    let summary: serde_json::Value = serde_json::from_str(&out.stderr).expect("json summary");
    assert_eq!(summary["changes"][1]["path"], "batch.replicas");
    assert_eq!(summary["changes"][1]["after"], "4");
}

/// A file that sets `world_size` (tensor parallel 2) gets
/// `world_size = D' × 2`, and no `replicas` key.
#[test]
fn replicas_rewrite_world_size_through_the_layout() {
    let dir = scratch("replan-replicas-world");
    let config =
        "[batch]\nmicro_batch = 4\naccumulation = 2\n\n[parallel]\nworld_size = 8\ntensor = 2\n";
    std::fs::write(dir.join("tp.toml"), config).expect("write");
    let out = run_in(&dir, &["replan", "tp.toml", "--replicas", "2"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "[batch]\nmicro_batch = 4\naccumulation = 4\n\n[parallel]\nworld_size = 4\ntensor = 2\n"
    );
    assert!(
        out.stderr
            .starts_with("replanned: m 4 × A 2 × D 4 = B 32  →  m 4 × A 4 × D 2 = B 32\n"),
        "{}",
        out.stderr
    );
}
