//! `accum import`, `accum export` and `accum lint` on the frameworks' files.

use std::path::{Path, PathBuf};

use crate::{run_in, scratch};

fn interop() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/interop")
}

fn fixture(name: &str) -> String {
    interop().join(name).to_str().expect("utf-8").to_owned()
}

#[test]
fn import_writes_a_config_that_validates_and_round_trips() {
    let dir = scratch("import");
    let file = fixture("deepspeed/bing_bert_all_three.json");
    let out = run_in(
        &dir,
        &[
            "import",
            "deepspeed",
            &file,
            "--world-size",
            "4",
            "--examples",
            "2400",
            "-o",
            "train.toml",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = run_in(&dir, &["validate", "train.toml"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    // Exported back to DeepSpeed, then imported again: the same config, and
    // nothing the source did not say (no schedule, no hidden data size).
    let exported = written(
        &dir,
        &["export", "deepspeed", "train.toml", "-o", "ds.json"],
        "ds.json",
    );
    assert!(!exported.contains("scheduler"), "{exported}");
    let again = run_in(
        &dir,
        &[
            "import",
            "deepspeed",
            "ds.json",
            "--world-size",
            "4",
            "--examples",
            "2400",
        ],
    );
    assert_eq!(again.code, 0, "{}", again.stderr);
    let first = std::fs::read_to_string(dir.join("train.toml")).expect("read");
    assert_eq!(without_names(&first), without_names(&again.stdout));
}

#[test]
fn a_megatron_script_round_trips_through_the_command_line() {
    let dir = scratch("megatron-round-trip");
    let out = run_in(
        &dir,
        &[
            "import",
            "megatron",
            &fixture("megatron/variables.sh"),
            "-o",
            "train.toml",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = run_in(&dir, &["validate", "train.toml"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    let args = written(
        &dir,
        &["export", "megatron", "train.toml", "-o", "args.sh"],
        "args.sh",
    );
    assert!(args.contains("--global-batch-size 256"), "{args}");
    assert!(
        !args.contains("--train-iters"),
        "no length the script did not give: {args}"
    );
    let again = run_in(
        &dir,
        &["import", "megatron", "args.sh", "--world-size", "8"],
    );
    assert_eq!(again.code, 0, "{}", again.stderr);
    let first = std::fs::read_to_string(dir.join("train.toml")).expect("read");
    assert_eq!(without_names(&first), without_names(&again.stdout));
}

#[test]
fn output_is_not_replaced_when_the_import_fails() {
    let dir = scratch("import-fails");
    std::fs::write(dir.join("train.toml"), "# mine\n").expect("write");
    let out = run_in(
        &dir,
        &[
            "import",
            "deepspeed",
            &fixture("deepspeed/tensor_without_mpu.json"),
            "--world-size",
            "16",
            "--tensor",
            "2",
            "-o",
            "train.toml",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("train.toml not written"),
        "{}",
        out.stderr
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("train.toml")).expect("read"),
        "# mine\n"
    );
    let out = run_in(
        &dir,
        &[
            "import",
            "deepspeed",
            &fixture("deepspeed/floor_gas.json"),
            "--world-size",
            "2",
            "-o",
            "train.toml",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(
        std::fs::read_to_string(dir.join("train.toml")).expect("read"),
        "# mine\n"
    );
}

#[test]
fn deepspeed_flooring_is_an_error_with_its_numbers() {
    let out = run_in(
        &scratch("lint-ds"),
        &[
            "lint",
            "deepspeed",
            &fixture("deepspeed/floor_gas.json"),
            "--world-size",
            "8",
        ],
    );
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains(
            "DeepSpeed would floor: it sets gradient_accumulation_steps = 30 // 2 // 8 = 1"
        ),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("use train_batch_size = 16 (gradient_accumulation_steps = 1) or 32 (gradient_accumulation_steps = 2)"),
        "{}",
        out.stderr
    );
    // One mistake, one finding: the floor and DeepSpeed's own check are
    // its notes.
    assert!(out.stdout.contains("1 error,"), "{}", out.stdout);
    assert!(
        out.stderr
            .contains("= note: [accum::interop::engine-assert] DeepSpeed would stop at start-up"),
        "{}",
        out.stderr
    );
}

#[test]
fn lint_prints_the_batch_it_derived() {
    let dir = scratch("lint-batch");
    let out = run_in(
        &dir,
        &[
            "lint",
            "deepspeed",
            &fixture("deepspeed/bing_bert_all_three.json"),
            "--world-size",
            "4",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .ends_with("bing_bert_all_three.json: ok (DeepSpeed): m 3 × A 2 × D 4 = 24\n"),
        "{}",
        out.stdout
    );
    // The line of a file with errors has no batch.
    let out = run_in(
        &dir,
        &[
            "lint",
            "deepspeed",
            &fixture("deepspeed/bing_bert_all_three.json"),
            "--world-size",
            "1000",
        ],
    );
    assert!(!out.stdout.contains(" × "), "{}", out.stdout);
}

#[test]
fn a_recipe_follows_its_deepspeed_file() {
    let out = run_in(
        &scratch("hf-ds"),
        &[
            "import",
            "hf",
            &fixture("hf/ds_mismatch.yaml"),
            "--num-processes",
            "8",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    let finding = &json["findings"][0];
    assert!(
        finding["file"]
            .as_str()
            .is_some_and(|f| f.ends_with("refs/ds_z2_numbers.json")),
        "{finding}"
    );
    assert_eq!(finding["code"], "accum::interop::engine-assert");
    assert_eq!(json["config"]["batch"]["global_batch"], 64);
}

#[test]
fn lint_json_lists_findings_with_locations() {
    let out = run_in(
        &scratch("lint-hf"),
        &[
            "lint",
            "hf",
            &fixture("hf/warmup_ratio.yaml"),
            "--num-processes",
            "4",
            "--format",
            "json",
        ],
    );
    let json: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    assert_eq!(json["framework"], "hf");
    let findings = json["findings"].as_array().expect("findings");
    assert!(!findings.is_empty());
    assert!(
        findings
            .iter()
            .all(|f| f["line"].as_u64().is_some_and(|l| l >= 1))
    );
    assert!(json["config"].is_null(), "lint prints no config");
}

#[test]
fn megatron_scripts_take_variables_from_env() {
    let out = run_in(
        &scratch("megatron-env"),
        &[
            "lint",
            "megatron",
            &fixture("megatron/launcher_vars_unknown.sh"),
        ],
    );
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("--env GPUS_PER_NODE=N"),
        "{}",
        out.stderr
    );
    let out = run_in(
        &scratch("megatron-env"),
        &[
            "import",
            "megatron",
            &fixture("megatron/launcher_vars_unknown.sh"),
            "--env",
            "GPUS_PER_NODE=8",
            "--env",
            "NNODES=2",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("accumulation = 4"), "{}", out.stdout);
}

#[test]
fn export_converts_schedules_into_the_frameworks_unit() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let out = run_in(&examples, &["export", "hf", "quickstart.toml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    assert_eq!(json["max_steps"], 300);
    assert_eq!(json["warmup_steps"], 20);
    assert_eq!(json["logging_steps"], 25);
    assert_eq!(json["per_device_train_batch_size"], 8);
    assert_eq!(json["gradient_accumulation_steps"], 4);
    let out = run_in(&examples, &["export", "megatron", "seed-calculator.toml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("--micro-batch-size 8"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("--global-batch-size 2048"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("--train-iters 12000"), "{}", out.stdout);
    // A partial last group DeepSpeed cannot handle is refused, with the fix.
    let out = run_in(&examples, &["export", "deepspeed", "quickstart.toml"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("use 3968 or 4032 examples"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_step_schedule_round_trips_and_deepspeed_refuses_it() {
    let dir = scratch("step-schedule");
    let toml = written(
        &dir,
        &[
            "import",
            "megatron",
            &fixture("megatron/step_exact.sh"),
            "--world-size",
            "16",
            "-o",
            "train.toml",
        ],
        "train.toml",
    );
    assert!(
        toml.contains("[[batch.stages]]\nglobal_batch = 16\nuntil = \"2400026624 tokens\""),
        "{toml}"
    );
    let out = run_in(&dir, &["validate", "train.toml"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    let args = written(
        &dir,
        &["export", "megatron", "train.toml", "-o", "args.sh"],
        "args.sh",
    );
    assert!(
        args.contains("--step-batch-size-schedule \"0:16 2400026624:320 4800610304:624"),
        "{args}"
    );
    assert!(!args.contains("--global-batch-size"), "{args}");
    let again = run_in(
        &dir,
        &["import", "megatron", "args.sh", "--world-size", "16"],
    );
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(without_names(&toml), without_names(&again.stdout));
    // DeepSpeed has one accumulation for the run: refused, nothing written.
    let out = run_in(
        &dir,
        &["export", "deepspeed", "train.toml", "-o", "ds.json"],
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stderr.contains("DeepSpeed cannot express batch.stages")
            && out.stderr.contains("16 → 320 → 624 → 928 → 1,232 → 1,536")
            && out.stderr.contains("export to megatron"),
        "{}",
        out.stderr
    );
    assert!(!dir.join("ds.json").exists());
}

#[test]
fn a_ramp_up_imports_with_its_shift_in_tokens() {
    let dir = scratch("ramp-shift");
    let out = run_in(
        &dir,
        &[
            "lint",
            "megatron",
            &fixture("megatron/rampup_gpt3_175b.sh"),
            "--format",
            "json",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    let findings = json["findings"].as_array().expect("findings");
    let shift = findings
        .iter()
        .find(|f| f["code"] == "accum::stages::shift")
        .expect("a stages::shift warning");
    let message = shift["message"].as_str().expect("a message");
    assert!(
        message.contains("--train-iters 500,000 = 743,443,552 examples (1,522,572,394,496 tokens) through the stages, not 768,000,000 examples"),
        "{message}"
    );
    assert_eq!(shift["severity"], "warning");
    assert!(
        findings
            .iter()
            .any(|f| f["code"] == "accum::interop::version"),
        "{findings:?}"
    );
    assert_eq!(json["batch_schedule"]["ramp"]["start"], 16);
}

/// Runs `accum` in `dir`, expects it to succeed, and reads the `file` it wrote.
fn written(dir: &Path, args: &[&str], file: &str) -> String {
    let out = run_in(dir, args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    std::fs::read_to_string(dir.join(file)).expect("read")
}

/// The config of an import without its `name` and `notes`, which name the file.
fn without_names(text: &str) -> String {
    text.lines()
        .filter(|l| !l.starts_with("name") && !l.starts_with("notes"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn ramp_ups_round_trip_through_nemo_and_lightning_and_the_trainer_refuses_them() {
    let dir = scratch("ramp-export");
    // NeMo's rampup_batch_size: [batch.ramp] and back.
    let toml = written(
        &dir,
        &[
            "import",
            "nemo",
            &fixture("nemo/nemo_rampup.yaml"),
            "-o",
            "nemo.toml",
        ],
        "nemo.toml",
    );
    assert!(
        toml.contains("[batch.ramp]\nstart = 16\nincrement = 16\nover = \"5k examples\""),
        "{toml}"
    );
    let yaml = written(
        &dir,
        &["export", "nemo", "nemo.toml", "-o", "nemo.yaml"],
        "nemo.yaml",
    );
    assert!(
        yaml.contains("rampup_batch_size:\n  - 16\n  - 16\n  - 5000"),
        "{yaml}"
    );
    let again = run_in(&dir, &["import", "nemo", "nemo.yaml"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(without_names(&toml), without_names(&again.stdout));

    // The Trainer has one accumulation: refused with the fixes, nothing written.
    let out = run_in(&dir, &["export", "hf", "nemo.toml", "-o", "hf.json"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stderr
            .contains("Hugging Face Trainer cannot express batch.ramp")
            && out.stderr.contains("global batch 16 → 32 → 48 → 64")
            && out.stderr.contains("export to megatron")
            && out.stderr.contains("or remove batch.ramp from the config"),
        "{}",
        out.stderr
    );
    assert!(!dir.join("hf.json").exists());

    // Lightning's accumulation scheduler: [[batch.stages]] by epoch and back.
    let toml = written(
        &dir,
        &[
            "import",
            "lightning",
            &fixture("lightning/scheduler_callback.yaml"),
            "--examples",
            "12800",
            "-o",
            "pl.toml",
        ],
        "pl.toml",
    );
    assert!(
        toml.contains("[[batch.stages]]\naccumulation = 1\nuntil = \"25600 examples\""),
        "{toml}"
    );
    let yaml = written(
        &dir,
        &["export", "lightning", "pl.toml", "-o", "pl.yaml"],
        "pl.yaml",
    );
    assert!(
        yaml.contains("GradientAccumulationScheduler\n    init_args:\n      scheduling:\n        0: 1\n        2: 4"),
        "{yaml}"
    );
    let again = run_in(
        &dir,
        &["import", "lightning", "pl.yaml", "--examples", "12800"],
    );
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(without_names(&toml), without_names(&again.stdout));
}

#[test]
fn every_outcome_prints_one_json_object_with_its_location() {
    let dir = scratch("json-outcomes");
    std::fs::write(
        dir.join("broken.json"),
        "{\n  \"train_batch_size\": 8,\n  oops\n",
    )
    .expect("writes");
    // A parse failure: exit 1, the syntax finding at its line.
    let out = run_in(
        &dir,
        &[
            "import",
            "deepspeed",
            "broken.json",
            "--world-size",
            "2",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    assert_eq!(json["findings"][0]["code"], "accum::syntax");
    assert_eq!(json["findings"][0]["file"], "broken.json");
    assert!(
        json["findings"][0]["line"].as_u64().is_some_and(|l| l >= 2),
        "{json}"
    );
    assert_eq!(json["config"], serde_json::Value::Null);
    assert_eq!(json["confident"], false);
    // An I/O error: exit 2, the file named.
    let out = run_in(
        &dir,
        &["lint", "deepspeed", "missing.json", "--format", "json"],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    assert_eq!(json["findings"][0]["code"], "accum::interop::file");
    assert_eq!(json["findings"][0]["file"], "missing.json");
    assert_eq!(json["errors"], 1);
    // A refusal: exit 1, every finding located.
    let out = run_in(
        &dir,
        &[
            "import",
            "litgpt",
            &fixture("litgpt/too_small.yaml"),
            "--format",
            "json",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    assert_eq!(json["findings"][0]["code"], "accum::interop::engine-assert");
    assert!(
        json["findings"][0]["line"].as_u64().is_some_and(|l| l > 1),
        "{json}"
    );
    // A batch with a key left unread: exit 0, not confident.
    let out = run_in(
        &dir,
        &[
            "import",
            "deepspeed",
            &fixture("deepspeed/elastic_unread.json"),
            "--world-size",
            "4",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    assert_eq!(json["confident"], false);
    assert_eq!(json["findings"][0]["code"], "accum::interop::unread");
    let out = run_in(
        &dir,
        &[
            "import",
            "litgpt",
            &fixture("litgpt/finetune_nodes.yaml"),
            "--format",
            "json",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    assert_eq!(json["confident"], true);
    assert_eq!(json["config"]["batch"]["accumulation"], 4);
}

#[test]
fn an_unread_batch_key_is_named_in_text_with_what_accum_assumed() {
    let out = run_in(
        &scratch("unread-text"),
        &[
            "import",
            "hf",
            &fixture("hf/per_gpu_unread.yaml"),
            "--num-processes",
            "2",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("`per_gpu_train_batch_size` is a batch setting that accum's Hugging Face Trainer reader does not read; accum assumed the batch from the keys it read: micro-batch m = 8 and global batch B = 8 × 2 × 2 = 32"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("per_gpu_unread.yaml:10:1"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("not reported with confidence"),
        "{}",
        out.stderr
    );
}
