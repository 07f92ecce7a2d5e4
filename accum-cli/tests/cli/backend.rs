//! `accum run --backend`: the choice of where replicas run.

use crate::{run_in, scratch};

#[cfg(not(feature = "mpi"))]
#[test]
fn mpi_backend_without_the_feature_says_how_to_get_it() {
    let dir = scratch("backend-no-mpi");
    let config =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/quickstart.toml");
    let out = run_in(
        &dir,
        &["run", config.to_str().unwrap(), "--backend", "mpi", "-q"],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("built without MPI") && out.stderr.contains("--features mpi"),
        "{}",
        out.stderr
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn injected_failure_with_threads_names_the_replica_and_microbatch() {
    let dir = scratch("backend-fail-threads");
    let config =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/quickstart.toml");
    let out = run_in(
        &dir,
        &[
            "run",
            config.to_str().unwrap(),
            "-q",
            "--report",
            "run.json",
            "--fail-at",
            "1:2:3",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("attempt 2, microbatch 3 on replica 1: injected failure"),
        "{}",
        out.stderr
    );
    assert!(!dir.join("run.json").exists());
    let out = run_in(
        &dir,
        &["run", config.to_str().unwrap(), "--fail-at", "1:0:3"],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("attempts count from 1"),
        "{}",
        out.stderr
    );
}
