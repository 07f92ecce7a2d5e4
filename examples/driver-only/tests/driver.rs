//! The smallest layer runs a real loop, and brings no tensor crate and no
//! command line.

use accum::AccumConfig;
use accum_driver_only_example::{Train, data, fit, gradient};

const CONFIG: &str = r#"{
    "micro_batch": 4,
    "accumulation": 2,
    "replicas": 1,
    "global_batch": 8,
    "warmup": "40 examples",
    "total": "100 updates",
    "lr": 0.5
}"#;

#[test]
fn the_loop_runs_its_plan_and_the_loss_falls() {
    let train: Train = serde_json::from_str(CONFIG).expect("the config parses");
    let data = data(48); // 6 whole updates an epoch
    let fitted = fit(&train, &data, 1).expect("the run");
    assert_eq!(fitted.updates, 100);
    assert_eq!(fitted.examples, 800);
    assert_eq!(fitted.losses.len(), 100);
    let (first, last) = (fitted.losses[0], fitted.losses[99]);
    assert!(last < first / 100.0, "the loss fell from {first} to {last}");
    assert!((fitted.w - 3.0).abs() < 0.15, "w = {}", fitted.w);
    assert!((fitted.b + 1.0).abs() < 0.15, "b = {}", fitted.b);
    // The same seed is the same run, bit for bit.
    assert_eq!(fit(&train, &data, 1).expect("the run again"), fitted);
}

#[test]
fn a_wrong_global_batch_is_found_with_its_field() {
    let train: Train =
        serde_json::from_str(&CONFIG.replace("\"global_batch\": 8", "\"global_batch\": 10"))
            .expect("the config parses");
    let findings = train.validate().expect_err("10 ≠ 4 × 2 × 1");
    assert_eq!(findings.paths(), ["global_batch"]);
    assert!(fit(&train, &data(48), 1).is_err());
}

#[test]
fn accumulated_microbatches_give_the_large_batch_gradient() {
    let data = data(8);
    let ids: Vec<usize> = (0..8).collect();
    let tokens: usize = data.iter().map(Vec::len).sum();
    let den = tokens as f64;
    let (w, b) = (0.3, -0.2);
    let whole = gradient(&data, &ids, w, b, den);
    let halves = [
        gradient(&data, &ids[..4], w, b, den),
        gradient(&data, &ids[4..], w, b, den),
    ];
    let summed = (halves[0].0 + halves[1].0, halves[0].1 + halves[1].1);
    assert!((whole.0 - summed.0).abs() < 1e-12 && (whole.1 - summed.1).abs() < 1e-12);
}

/// The layer's promise, checked on this crate's own dependency tree: no
/// tensor crate, no thread pool, no command line.
#[test]
fn the_dependency_tree_has_no_tensor_or_command_line_crate() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let out = std::process::Command::new(cargo)
        .args([
            "tree",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--locked",
            "--offline",
        ])
        .args(["--manifest-path", manifest])
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8(out.stdout).expect("UTF-8");
    let names: Vec<&str> = tree
        .lines()
        .filter_map(|line| line.split(' ').next())
        .collect();
    assert!(names.contains(&"accum-core"), "{tree}");
    for banned in [
        "ndarray",
        "faer",
        "rayon",
        "pulp",
        "matrixmultiply",
        "clap",
        "indicatif",
        "plotters",
        "ctrlc",
        "accum-cli",
    ] {
        assert!(!names.contains(&banned), "{banned} is in the tree:\n{tree}");
    }
}
