//! `accum lint` and `accum import` on a Hydra repository: the resolvers the
//! repository registers (`eval`, `div_up`) are evaluated with a warning
//! naming the registration, and refused with the `--set` flag in a
//! repository that does not register them; an experiment is composed with
//! the files of its config tree, and a finding about a value of another file
//! is reported in that file. The fixture trees (`tests/fixtures/interop/
//! repos/`) are copied into repositories of their own, with `.git`.

use std::fs;
use std::path::{Path, PathBuf};

use crate::{run_in, scratch};

#[path = "../support/fixture_tree.rs"]
mod fixture_tree;
use fixture_tree::copy_tree as copy;

/// Copies a fixture tree into `to`, `*.py.in` as `*.py`, and makes it a
/// repository.
fn repository(name: &str, to: &Path) -> PathBuf {
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/interop/repos")
        .join(name);
    let repo = to.join(name);
    copy(&from, &repo);
    fs::create_dir_all(repo.join(".git")).expect(".git");
    repo
}

#[test]
fn a_registered_resolver_is_evaluated_with_a_warning_that_names_it() {
    let dir = scratch("hydra-resolvers");
    let repo = repository("safari_resolvers", &dir);
    let out = run_in(&repo, &["import", "configs/experiment/vit_div_up.yaml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("global_batch = 1024"), "{}", out.stdout);
    assert!(out.stdout.contains("accumulation = 4"), "{}", out.stdout);
    assert!(
        out.stderr.contains("warning[accum::interop::value]: `trainer.accumulate_grad_batches` is `${div_up:${train.global_batch_size}, ${eval:'${.devices} * ${data.batch_size}'}}`, which accum computes as 4: `eval` read as Python's eval of the arithmetic `8 * 32`, as registered in train.py:8; `div_up` of 1000 and 256 read as ceiling division (x + y - 1) // y, as registered in train.py:9"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("help: to state it, write the value, or give it: --set trainer.accumulate_grad_batches=4"),
        "{}",
        out.stderr
    );
}

#[test]
fn without_the_registration_the_value_is_refused_with_the_flag_that_gives_it() {
    let dir = scratch("hydra-unregistered");
    let repo = repository("safari_unregistered", &dir);
    let out = run_in(&repo, &["lint", "configs/experiment/vit.yaml"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("no Python file of the repository registers the resolver `eval`"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("help: give its value: --set trainer.accumulate_grad_batches=VALUE"),
        "{}",
        out.stderr
    );
    // The flag it names gives the value.
    let out = run_in(
        &repo,
        &[
            "import",
            "lightning",
            "configs/experiment/vit.yaml",
            "--set",
            "trainer.accumulate_grad_batches=4",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("global_batch = 1024"), "{}", out.stdout);
}

#[test]
fn an_experiment_is_composed_and_each_finding_is_in_its_own_file() {
    let dir = scratch("hydra-compose");
    let repo = repository("lightning_hydra", &dir);
    let out = run_in(
        &repo,
        &[
            "lint",
            "configs/experiment/example.yaml",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    let text = json.to_string();
    // The trainer's devices come from the ddp option the experiment
    // overrides the primary config's with, and its `oc.env` warning is
    // reported there, at its line.
    let found = find_finding(&json, "accum::interop::value").unwrap_or_else(|| panic!("{text}"));
    assert!(found.0.ends_with("configs/trainer/ddp.yaml"), "{text}");
    assert_eq!(found.1, 7, "{text}");
    assert_eq!(json["errors"], 0, "{text}");

    // The environment's value is the trainer's.
    let out = run_in(
        &repo,
        &[
            "import",
            "configs/experiment/example.yaml",
            "--env",
            "NUM_GPUS=8",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("global_batch = 1024"), "{}", out.stdout);
    assert!(
        out.stderr.contains("configs/trainer/ddp.yaml:7:"),
        "{}",
        out.stderr
    );

    // An option that is not in the tree is an error at the override.
    let out = run_in(
        &repo,
        &[
            "lint",
            "lightning",
            "configs/experiment/missing_option.yaml",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("the defaults list names `configs/trainer/tpu.yaml`, which does not exist"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("configs/experiment/missing_option.yaml:11:5"),
        "{}",
        out.stderr
    );
}

/// The file and line of the first finding of `code`, in the JSON of `lint`.
fn find_finding(json: &serde_json::Value, code: &str) -> Option<(String, u64)> {
    fn walk(v: &serde_json::Value, code: &str, file: &str) -> Option<(String, u64)> {
        match v {
            serde_json::Value::Object(map) => {
                if map.get("code").and_then(|c| c.as_str()) == Some(code) {
                    let f = map
                        .get("file")
                        .and_then(|f| f.as_str())
                        .unwrap_or(file)
                        .to_owned();
                    let line = map.get("line").and_then(serde_json::Value::as_u64)?;
                    return Some((f, line));
                }
                let here = map.get("file").and_then(|f| f.as_str()).unwrap_or(file);
                map.values().find_map(|x| walk(x, code, here))
            }
            serde_json::Value::Array(items) => items.iter().find_map(|x| walk(x, code, file)),
            _ => None,
        }
    }
    walk(json, code, "")
}
