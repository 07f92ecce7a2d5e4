//! Inputs read as the program that owns them reads them, and outputs
//! written in the format their names say: a framework's YAML as its PyYAML
//! loader reads it (integers, booleans, duplicate keys), a byte-order mark
//! in every format, the output format from `-o`'s extension, and lengths
//! that are negative or zero refused.

use std::path::Path;

use crate::{fixtures, run_in, scratch};

const BOM: &str = "\u{feff}";

/// `accum import hf recipe.yaml --format json` on `text`: the imported
/// batch's accumulation and micro-batch, and the findings' messages.
fn import_hf(name: &str, text: &str) -> (serde_json::Value, String, i32) {
    let dir = scratch(name);
    std::fs::write(dir.join("recipe.yaml"), text).expect("write");
    let out = run_in(
        &dir,
        &[
            "import",
            "hf",
            "recipe.yaml",
            "--num-processes",
            "1",
            "--format",
            "json",
        ],
    );
    let json: serde_json::Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|_| panic!("json: {}{}", out.stdout, out.stderr));
    let messages = json["findings"]
        .as_array()
        .map(|f| {
            f.iter()
                .map(|d| format!("{} {}\n", d["message"], d["help"]))
                .collect::<String>()
        })
        .unwrap_or_default();
    (json["config"]["batch"].clone(), messages, out.code)
}

/// Integers as PyYAML's resolver reads them in a Hugging Face recipe, with
/// a warning where YAML 1.2 reads another value, and none where a reader
/// means what PyYAML reads (`0x10`, `0b11`, `1_000`).
#[test]
fn framework_yaml_integers_are_pyyamls() {
    for (value, accumulation, warned) in [
        ("010", Some(8), true),
        ("+010", Some(8), true),
        ("0x10", Some(16), false),
        ("0b11", Some(3), false),
        ("1_000", Some(1000), false),
        ("1:30", Some(90), true),
        ("0o10", None, true),
    ] {
        let text =
            format!("per_device_train_batch_size: 4\ngradient_accumulation_steps: {value}\n");
        let (batch, messages, _) = import_hf(&format!("pyint-{accumulation:?}"), &text);
        assert_eq!(
            batch["accumulation"].as_u64(),
            accumulation,
            "{value}: {batch} {messages}"
        );
        assert_eq!(
            messages.contains("to PyYAML"),
            warned,
            "{value}: {messages}"
        );
    }
    let (_, messages, code) = import_hf(
        "pyint-neg",
        "per_device_train_batch_size: 4\ngradient_accumulation_steps: -010\n",
    );
    assert_eq!(code, 1, "{messages}");
    assert!(
        messages.contains("`-010` is the integer -8 to PyYAML, not the integer -10"),
        "{messages}"
    );
    let (_, messages, _) = import_hf(
        "pyint-oct",
        "per_device_train_batch_size: 4\ngradient_accumulation_steps: 010\n",
    );
    assert!(
        messages
            .contains("`010` is the integer 8 to PyYAML, not the integer 10 as YAML 1.2 reads it")
            && messages.contains("write `8` if 8 is meant, or `10`"),
        "{messages}"
    );
}

/// `On` is a boolean to PyYAML (`y` is not), and `1e3` and `1.0e+3` give
/// the same count to the Trainer's arguments.
#[test]
fn framework_yaml_booleans_and_floats_are_pyyamls() {
    let (_, messages, _) = import_hf(
        "pybool",
        "per_device_train_batch_size: 4\ngradient_accumulation_steps: 2\nbf16: On\n",
    );
    assert!(
        messages.contains("`On` is the boolean true to PyYAML, not the string \\\"On\\\""),
        "{messages}"
    );
    for spelling in ["1e3", "1.0e+3"] {
        let dir = scratch(&format!("pyfloat-{spelling}"));
        std::fs::write(
            dir.join("recipe.yaml"),
            format!("per_device_train_batch_size: 4\ngradient_accumulation_steps: 2\nmax_steps: {spelling}\n"),
        )
        .expect("write");
        let out = run_in(
            &dir,
            &["import", "hf", "recipe.yaml", "--num-processes", "1"],
        );
        assert_eq!(out.code, 0, "{spelling}: {}", out.stderr);
        assert!(
            out.stdout.contains("total = \"1k updates\""),
            "{spelling}: {}",
            out.stdout
        );
    }
}

/// Duplicate keys: the last wins in PyYAML, with a warning when the values
/// differ; OmegaConf (NeMo) refuses them.
#[test]
fn duplicate_keys_follow_the_loader() {
    let (batch, messages, _) = import_hf(
        "dup-same",
        "per_device_train_batch_size: 4\ngradient_accumulation_steps: 2\ngradient_accumulation_steps: 2\n",
    );
    assert_eq!(batch["accumulation"], 2);
    assert!(!messages.contains("twice"), "{messages}");
    let (batch, messages, _) = import_hf(
        "dup-diff",
        "per_device_train_batch_size: 4\ngradient_accumulation_steps: 2\ngradient_accumulation_steps: 8\n",
    );
    assert_eq!(batch["accumulation"], 8);
    assert!(
        messages.contains("`gradient_accumulation_steps` is given twice with different values; PyYAML keeps this one and drops the one at line 2"),
        "{messages}"
    );
    let dir = scratch("dup-nemo");
    std::fs::write(
        dir.join("nemo.yaml"),
        "trainer:\n  devices: 2\nmodel:\n  micro_batch_size: 4\n  micro_batch_size: 4\n  global_batch_size: 64\n",
    )
    .expect("write");
    let out = run_in(&dir, &["lint", "nemo", "nemo.yaml"]);
    assert_ne!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains("duplicate key `micro_batch_size`; OmegaConf's PyYAML loader refuses it"),
        "{}",
        out.stderr
    );
}

/// accum's own YAML refuses a leading-zero integer: YAML 1.1 and 1.2
/// readers disagree on it.
#[test]
fn own_yaml_refuses_a_leading_zero() {
    let dir = scratch("own-zero");
    std::fs::write(
        dir.join("train.yaml"),
        "batch:\n  micro_batch: 4\n  accumulation: 010\n  replicas: 1\n",
    )
    .expect("write");
    let out = run_in(&dir, &["validate", "train.yaml"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(
        all.contains("`010` has a leading zero: YAML 1.2 reads the integer 10, YAML 1.1 readers such as PyYAML the integer 8; write `10`"),
        "{all}"
    );
    assert!(all.contains("train.yaml:3:17"), "{all}");
}

/// A byte-order mark is accepted in every format, and positions are
/// counted from the first character after it.
#[test]
fn a_bom_is_accepted_in_every_format() {
    let dir = scratch("bom");
    let configs = [
        (
            "train.toml",
            "[batch]\nmicro_batch = 4\naccumulation = 2\nreplicas = 1\n",
        ),
        (
            "train.json",
            "{\"batch\": {\"micro_batch\": 4, \"accumulation\": 2, \"replicas\": 1}}\n",
        ),
        (
            "train.yaml",
            "batch:\n  micro_batch: 4\n  accumulation: 2\n  replicas: 1\n",
        ),
    ];
    for (name, text) in configs {
        std::fs::write(dir.join(name), format!("{BOM}{text}")).expect("write");
        let out = run_in(&dir, &["validate", name]);
        assert_eq!(out.code, 0, "{name}: {}{}", out.stdout, out.stderr);
    }
    // A mistake after the mark is placed where an editor shows it.
    std::fs::write(dir.join("bad.json"), format!("{BOM}{{\"batch\": }}\n")).expect("write");
    let out = run_in(&dir, &["validate", "bad.json"]);
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(all.contains("bad.json:1:11"), "{all}");
    let frameworks = [
        (
            "ds.json",
            "deepspeed",
            "{\"train_micro_batch_size_per_gpu\": 4, \"gradient_accumulation_steps\": 2}\n",
        ),
        (
            "train.sh",
            "megatron",
            "python pretrain_gpt.py --micro-batch-size 4 --global-batch-size 8\n",
        ),
        (
            "recipe.yaml",
            "hf",
            "per_device_train_batch_size: 4\ngradient_accumulation_steps: 2\n",
        ),
    ];
    for (name, framework, text) in frameworks {
        std::fs::write(dir.join(name), format!("{BOM}{text}")).expect("write");
        let out = run_in(&dir, &["lint", framework, name, "--world-size", "1"]);
        assert_eq!(out.code, 0, "{name}: {}{}", out.stdout, out.stderr);
    }
    // A run report.
    std::fs::copy(fixtures().join("tiny.toml"), dir.join("tiny.toml")).expect("copy");
    let out = run_in(
        &dir,
        &["run", "tiny.toml", "--report", "run.json", "--quiet"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = std::fs::read_to_string(dir.join("run.json")).expect("report");
    std::fs::write(dir.join("run.json"), format!("{BOM}{report}")).expect("write");
    let out = run_in(
        &dir,
        &[
            "sheet",
            "tiny.toml",
            "--report",
            "run.json",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
}

/// The output's extension says its format, in any case; a name that says
/// none, or one the command does not write, is refused with the list.
#[test]
fn the_output_format_follows_the_extension() {
    let dir = scratch("outfmt");
    std::fs::write(
        dir.join("recipe.yaml"),
        "per_device_train_batch_size: 4\ngradient_accumulation_steps: 2\n",
    )
    .expect("write");
    let import = |out: &str| {
        run_in(
            &dir,
            &[
                "import",
                "hf",
                "recipe.yaml",
                "--num-processes",
                "1",
                "-o",
                out,
            ],
        )
    };
    assert_eq!(import("out.yml").code, 0);
    let yaml = std::fs::read_to_string(dir.join("out.yml")).expect("yaml");
    assert!(yaml.contains("micro_batch: 4"), "{yaml}");
    assert_eq!(import("out.json").code, 0);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out.json")).expect("json"))
            .expect("the output is JSON");
    assert_eq!(json["batch"]["accumulation"], 2);
    assert_eq!(import("out.TOML").code, 0);
    let toml = std::fs::read_to_string(dir.join("out.TOML")).expect("toml");
    assert!(toml.contains("[batch]"), "{toml}");
    // Each output reads back as an accum config.
    for name in ["out.yml", "out.json", "out.TOML"] {
        let out = run_in(&dir, &["validate", name]);
        assert_eq!(out.code, 0, "{name}: {}{}", out.stdout, out.stderr);
    }
    for name in ["out", "out.txt", "out.md"] {
        let out = import(name);
        assert_eq!(out.code, 2, "{name}");
        assert!(
            out.stderr.contains(".toml, .yaml, .yml or .json"),
            "{name}: {}",
            out.stderr
        );
        assert!(!Path::new(&dir.join(name)).exists(), "{name} written");
    }
    let out = run_in(&dir, &["schema", "-o", "schema.yaml"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("name the file .json"), "{}", out.stderr);
    let out = run_in(&dir, &["export", "deepspeed", "out.TOML", "-o", "ds.yaml"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("name the file .json"), "{}", out.stderr);
    let out = run_in(
        &dir,
        &[
            "replan",
            "out.TOML",
            "--max-micro-batch",
            "2",
            "-o",
            "new.yaml",
        ],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("name the file .toml"), "{}", out.stderr);
    let out = run_in(
        &dir,
        &["sheet", "out.TOML", "-o", "sheet.md", "--format", "html"],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("--format says HTML"), "{}", out.stderr);
    let out = run_in(&dir, &["sheet", "out.TOML", "-o", "SHEET.HTML"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let html = std::fs::read_to_string(dir.join("SHEET.HTML")).expect("html");
    assert!(
        html.starts_with("<!DOCTYPE html>") || html.starts_with("<!doctype html>"),
        "{}",
        &html[..40.min(html.len())]
    );
}

/// Negative and zero lengths are refused with the value and the fix, and
/// a number that is not one is refused as such.
#[test]
fn negative_and_zero_lengths_are_refused() {
    let dir = scratch("lengths");
    let calc = |span: &str| run_in(&dir, &["calc", "-m", "4", "-a", "2", "-d", "1", span]);
    for (arg, needle) in [
        ("--span=-5-updates", "`-5-updates` is negative"),
        ("--span=-0-updates", "`-0-updates` is negative"),
        ("--span= -5 updates", "is negative"),
        ("--span=0-updates", "is a length of 0"),
        ("--span=0x5-updates", "`0x5` is not a number"),
        ("--total=-1-updates", "is negative"),
        ("--stage=8:0-updates", "is a length of 0"),
    ] {
        let out = calc(arg);
        assert_eq!(out.code, 2, "{arg}: {}{}", out.stdout, out.stderr);
        assert!(out.stderr.contains(needle), "{arg}: {}", out.stderr);
    }
    // Any blank joins the number to its unit, a wide one (U+2000, three
    // bytes) too.
    for arg in ["--span=1000\u{2000}updates", "--span=1000\u{3000}updates"] {
        let out = calc(arg);
        assert_eq!(out.code, 0, "{arg}: {}", out.stderr);
    }
    let out = calc("--span=1_000-updates");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("1000") || out.stdout.contains("1,000"),
        "{}",
        out.stdout
    );
}
