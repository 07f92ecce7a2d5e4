//! `accum lint FILE…` and `accum import FILE` without a framework: each
//! file is read as the framework its own keys identify, with a note that
//! says which and why; no evidence, or two frameworks equally, is refused
//! with the framework to name; a framework named for another's file is
//! told which it is.

use std::fs;
use std::path::{Path, PathBuf};

use crate::{run_in, scratch};

/// The interop fixtures.
fn interop(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/interop")
        .join(file)
}

fn path(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

#[test]
fn files_of_several_frameworks_are_each_read_as_their_own() {
    let dir = scratch("detect-several");
    let ds = interop("deepspeed/megatron_gpt2_gas3.json");
    let litgpt = interop("litgpt/pretrain_tinyllama.yaml");
    let out = run_in(
        &dir,
        &[
            "lint",
            path(&ds),
            path(&litgpt),
            "--world-size",
            "16",
            "--format",
            "json",
        ],
    );
    let json: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    let files = json["files"].as_array().expect("one summary per file");
    assert_eq!(files[0]["framework"], "deepspeed", "{}", out.stdout);
    assert_eq!(files[0]["detected"]["framework"], "deepspeed");
    assert_eq!(files[1]["framework"], "litgpt", "{}", out.stdout);
    assert_eq!(files[1]["detected"]["confident"], true);
    let evidence = files[1]["detected"]["evidence"]
        .as_array()
        .expect("the keys");
    assert!(
        evidence.iter().any(|k| k == "train.save_interval"),
        "{evidence:?}"
    );
}

#[test]
fn the_note_says_which_framework_and_why() {
    let dir = scratch("detect-note");
    let litgpt = interop("litgpt/pretrain_tinyllama.yaml");
    let out = run_in(&dir, &["import", path(&litgpt), "--world-size", "16"]);
    let note = out
        .stderr
        .lines()
        .find(|l| l.starts_with("note: "))
        .unwrap_or_else(|| panic!("a note: {}", out.stderr));
    assert!(
        note.ends_with(": read as LitGPT (litgpt): `train.save_interval`, `train.log_interval`, `train.max_tokens`, `train.max_norm`, `eval.interval` identify it"),
        "{note}"
    );
    assert!(out.stdout.contains("global_batch = "), "{}", out.stdout);
}

#[test]
fn two_equal_fits_and_no_evidence_are_refused_with_the_framework_to_name() {
    let dir = scratch("detect-refused");
    let tie = dir.join("tie.yaml");
    fs::write(
        &tie,
        "seed_everything: 1\nbase_model: x\nmicro_batch_size: 2\n",
    )
    .expect("written");
    let out = run_in(&dir, &["lint", "tie.yaml"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("error[accum::interop::dialect]: the keys of this file fit several frameworks equally, so accum does not choose: Lightning (`seed_everything`); axolotl (`base_model`)"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("help: name the framework before the file: `lightning` or `axolotl`"),
        "{}",
        out.stderr
    );
    let none = dir.join("none.yaml");
    fs::write(&none, "train:\n  global_batch_size: 64\n").expect("written");
    let out = run_in(&dir, &["import", "none.yaml"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("no key or option of this file identifies a framework accum reads"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_framework_named_alone_says_the_file_is_missing() {
    let dir = scratch("detect-alone");
    let out = run_in(&dir, &["import", "deepspeed"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "`deepspeed` names a framework, and no file follows it: write `deepspeed FILE`"
        ),
        "{}",
        out.stderr
    );
}
