//! Replays the fuzz corpus and every crash regression through the same
//! functions the fuzz targets call (`accum_cli::harness`): no input may
//! panic, and each must finish in bounded time. Fuzzing itself needs
//! nightly and is run by hand (`fuzz/README.md`); this test runs on stable.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use accum_cli::harness;
use accum_cli::harness::ConfigFormat;
use accum_cli::interop::Framework;

/// Generous for an unoptimized build; a hang or a blow-up takes far longer.
const PER_INPUT: Duration = Duration::from_secs(20);

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

/// What a fuzz target calls on one input.
type Harness = fn(&[u8]);

/// The function a target calls, by the target's name.
fn target(name: &str) -> Option<Harness> {
    Some(match name {
        "span" => harness::span,
        "config_toml" => |d| {
            harness::config(ConfigFormat::Toml, d);
        },
        "config_json" => |d| {
            harness::config(ConfigFormat::Json, d);
        },
        "config_yaml" => |d| {
            harness::config(ConfigFormat::Yaml, d);
        },
        "import_deepspeed" => |d| harness::import(Framework::DeepSpeed, d),
        "import_megatron" => |d| harness::import(Framework::Megatron, d),
        "import_hf" => |d| harness::import(Framework::HuggingFace, d),
        "import_lightning" => |d| harness::import(Framework::Lightning, d),
        "import_axolotl" => |d| harness::import(Framework::Axolotl, d),
        "import_nemo" => |d| harness::import(Framework::NeMo, d),
        "import_litgpt" => |d| harness::import(Framework::LitGpt, d),
        "detect" => harness::detect,
        "report" => harness::report,
        "stats_stream" => harness::stats_stream,
        "cli_values" => harness::cli_values,
        _ => return None,
    })
}

/// Every file under `fuzz/<kind>/<target>/`, with its target's function.
fn inputs(kind: &str) -> Vec<(PathBuf, Harness)> {
    let root = fuzz_dir().join(kind);
    let Ok(dirs) = fs::read_dir(&root) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for dir in dirs {
        let dir = dir.expect("a readable corpus folder").path();
        let name = dir
            .file_name()
            .expect("a folder name")
            .to_string_lossy()
            .into_owned();
        let f = target(&name)
            .unwrap_or_else(|| panic!("{}: no fuzz target is called `{name}`", dir.display()));
        for file in fs::read_dir(&dir).expect("a readable corpus folder") {
            let path = file.expect("a corpus file").path();
            if path.is_file() {
                out.push((path, f));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Runs each input on a thread; a panic or a timeout fails the test, naming
/// the file.
fn replay(kind: &str) -> usize {
    let inputs = inputs(kind);
    let mut failures = Vec::new();
    for (path, f) in &inputs {
        let data = fs::read(path).expect("a readable corpus file");
        let (tx, rx) = mpsc::channel();
        let start = Instant::now();
        let f = *f;
        let handle = std::thread::spawn(move || {
            let result = std::panic::catch_unwind(|| f(&data));
            let _ = tx.send(result.is_ok());
        });
        match rx.recv_timeout(PER_INPUT) {
            Ok(true) => {
                let _ = handle.join();
            }
            Ok(false) => failures.push(format!("{}: panicked", path.display())),
            Err(_) => failures.push(format!(
                "{}: still running after {:?}",
                path.display(),
                start.elapsed()
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    inputs.len()
}

#[test]
fn the_fuzz_corpus_replays_without_panics_or_hangs() {
    let n = replay("corpus");
    // Every target keeps a corpus; an empty replay would prove nothing.
    assert!(n >= 8, "only {n} corpus files found");
    for name in [
        "span",
        "config_toml",
        "config_json",
        "config_yaml",
        "import_deepspeed",
        "import_megatron",
        "import_hf",
        "import_lightning",
        "import_axolotl",
        "import_nemo",
        "import_litgpt",
        "detect",
        "report",
        "stats_stream",
        "cli_values",
    ] {
        let dir = fuzz_dir().join("corpus").join(name);
        let files = fs::read_dir(&dir).map_or(0, |d| d.count());
        assert!(
            files > 0,
            "{}: no corpus for target `{name}`",
            dir.display()
        );
    }
}

#[test]
fn every_regression_input_stays_fixed() {
    // Crashes found by fuzzing, and inputs of bugs found while hardening
    // that reach a fuzz target's code.
    let n = replay("regressions");
    assert!(n >= 3, "only {n} regression files found");
}

#[test]
fn the_seed_configs_are_valid_through_the_harness() {
    // The harness really validates: the committed example is valid, a
    // broken plan is not.
    let example =
        fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/quickstart.toml"))
            .expect("the example config");
    assert!(harness::config(ConfigFormat::Toml, &example));
    let broken = String::from_utf8(example)
        .expect("UTF-8")
        .replace("global_batch = 64", "global_batch = 63");
    assert!(!harness::config(ConfigFormat::Toml, broken.as_bytes()));
}

#[test]
fn a_config_with_warnings_only_is_valid_through_the_harness() {
    // A warmup in updates under a ramp-up is a warning: the config plans
    // and runs, as `accum validate` says with exit 0. Made an error by a
    // broken stage, it is not.
    let shift = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rampup/shift.toml"),
    )
    .expect("the warnings-only fixture");
    assert!(shift.contains("warmup = \"2000 updates\""));
    assert!(harness::config(ConfigFormat::Toml, shift.as_bytes()));
    let broken = shift.replace("global_batch = 128", "global_batch = 100");
    assert!(!harness::config(ConfigFormat::Toml, broken.as_bytes()));
}
