//! The fixture table: every file under `tests/fixtures/interop/<framework>/`
//! (except the `refs/` files they name) imitates a public config, and says in
//! its comments which one, the options a launcher would give, the batch the
//! framework trains with (`m A D B`) or its refusal, and the finding codes.
//! One test imports them all and checks each; those that import without
//! errors must read back as a training config, and import → export → import
//! must give the same config.

use accum_core::Code;
use accum_core::Family;
use std::fs;
use std::path::{Path, PathBuf};

use accum_core::config::TrainingConfig;
use accum_core::settings::{OptimizerKind, ScheduleKind};
use accum_core::{Span, UnitKind};

use super::*;

/// The fixtures' folder.
pub(super) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/interop")
}

/// The fixtures of a framework are in the folder of its command-line name.
fn dir(framework: Framework) -> &'static str {
    framework.key()
}

/// What a fixture says about itself.
#[derive(Debug)]
pub(super) struct Expect {
    imitates: String,
    pub(super) options: ImportOptions,
    pub(super) batch: Option<[u64; 4]>,
    pub(super) codes: Vec<String>,
    /// The stages, `B:END …` (each stage's global batch and the examples
    /// consumed when it ends) then the last batch; `…` skips to the last.
    stages: Option<String>,
}

pub(super) fn header(path: &Path, text: &str) -> Expect {
    let field = |name: &str| -> Option<String> {
        text.lines().find_map(|l| {
            let l = l.trim_start().trim_start_matches(['#', '/']).trim();
            l.strip_prefix(name)
                .and_then(|r| r.strip_prefix(':'))
                .map(|r| r.trim().to_owned())
        })
    };
    let show = path.display();
    let imitates = field("imitates").unwrap_or_else(|| panic!("{show}: no `imitates:` line"));
    let options = options(path, &field("options").unwrap_or_default());
    let expect = field("expect").unwrap_or_else(|| panic!("{show}: no `expect:` line"));
    let batch = if expect == "refused" {
        None
    } else {
        let mut v = [0u64; 4];
        for (i, key) in ["m=", "A=", "D=", "B="].iter().enumerate() {
            let word = expect
                .split_whitespace()
                .find(|w| w.starts_with(key))
                .unwrap_or_else(|| panic!("{show}: `expect:` lacks {key}"));
            v[i] = word[2..]
                .parse()
                .unwrap_or_else(|_| panic!("{show}: {word}"));
        }
        Some(v)
    };
    let codes = field("codes").unwrap_or_else(|| panic!("{show}: no `codes:` line"));
    let mut codes: Vec<String> = if codes == "none" {
        Vec::new()
    } else {
        codes.split(',').map(|c| c.trim().to_owned()).collect()
    };
    codes.sort();
    Expect {
        imitates,
        options,
        batch,
        codes,
        stages: field("stages"),
    }
}

/// The stages of an imported config, as a fixture's `stages:` line writes them.
fn stages_line(config: &PartialConfig) -> String {
    let plan = config.plan().expect("an imported config has a plan");
    let staged = super::stages::staged_plan(config, &plan).expect("imported stages resolve");
    let stages = staged.stages();
    let mut words: Vec<String> = stages
        .windows(2)
        .map(|w| {
            format!(
                "{}:{}",
                w[0].plan().effective_batch().get(),
                w[1].examples_before().get()
            )
        })
        .collect();
    words.push(staged.final_plan().effective_batch().get().to_string());
    words.join(" ")
}

/// Whether `actual` matches the `stages:` line `expected` (`…` skips to the last word).
fn stages_match(expected: &str, actual: &str) -> bool {
    match expected.split_once('…') {
        None => expected == actual,
        Some((head, last)) => {
            let head = head.trim();
            let last = last.trim();
            actual.starts_with(head)
                && actual.ends_with(last)
                && actual.len() > head.len() + last.len()
        }
    }
}

/// The `options:` line as the CLI reads it (files relative to the fixture).
fn options(path: &Path, line: &str) -> ImportOptions {
    let mut o = ImportOptions::default();
    let words: Vec<&str> = line.split_whitespace().collect();
    let here = path.parent().expect("a folder").to_owned();
    let mut i = 0;
    while i < words.len() {
        let value = words.get(i + 1).copied().unwrap_or("");
        let n = || value.parse::<u64>().ok();
        let mut step = 2;
        match words[i] {
            "--world-size" => o.world_size = n(),
            "--num-processes" => o.num_processes = n(),
            "--num-nodes" => o.num_nodes = n(),
            "--tensor" => o.tensor = n(),
            "--pipeline" => o.pipeline = n(),
            "--context" => o.context = n(),
            "--micro-batch" => o.micro_batch = n(),
            "--examples" => o.examples = n(),
            "--seq-len" => o.seq_len = n(),
            "--env" => {
                let (k, v) = value.split_once('=').expect("NAME=VALUE");
                o.env.push((k.to_owned(), v.to_owned()));
            }
            "--set" => {
                let (k, v) = value.split_once('=').expect("KEY=VALUE");
                o.set.push((k.to_owned(), v.to_owned()));
            }
            "--deepspeed-config" => o.deepspeed_config = Some(here.join(value)),
            "--accelerate-config" => o.accelerate_config = Some(here.join(value)),
            "--deepspeed-mpu" => {
                o.deepspeed_mpu = true;
                step = 1;
            }
            "--variable-lengths" => {
                o.variable_lengths = true;
                step = 1;
            }
            other => panic!("{}: unknown option {other}", path.display()),
        }
        i += step;
    }
    o
}

/// Every fixture with its framework.
pub(super) fn fixtures() -> Vec<(Framework, PathBuf)> {
    let mut out = Vec::new();
    for framework in Framework::ALL {
        let folder = root().join(dir(framework));
        let mut files: Vec<PathBuf> = fs::read_dir(&folder)
            .unwrap_or_else(|err| panic!("{}: {err}", folder.display()))
            .map(|e| e.expect("an entry").path())
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        out.extend(files.into_iter().map(|p| (framework, p)));
    }
    out
}

/// A code as the fixtures' `codes:` lines write it: `rounds` for
/// `accum::interop::rounds`, `plan::global-batch` for a rule of accum's own
/// plan that the import reports as `accum validate` does.
pub(super) fn short(code: Code) -> String {
    let text = code.as_str();
    let family = match code.family() {
        Family::Interop => Family::Interop.as_str(),
        _ => "accum",
    };
    text.strip_prefix(family)
        .and_then(|rest| rest.strip_prefix("::"))
        .unwrap_or(text)
        .to_owned()
}

/// The batch of an imported config: `m`, `A`, `D`, `B`.
pub(super) fn batch_of(config: &PartialConfig) -> [u64; 4] {
    let plan = config.plan().expect("an imported config has a plan");
    [
        plan.micro_batch(),
        plan.accumulation(),
        plan.replicas(),
        plan.effective_batch().get(),
    ]
}

/// import → export → import gives the same config (up to `[run]`), and
/// export is a fixed point.
fn round_trip(
    framework: Framework,
    imported: &Imported,
    opts: &ImportOptions,
) -> Result<(), String> {
    let exported = export(framework, &imported.config).map_err(|e| format!("export: {e}"))?;
    let world = imported
        .config
        .parallel
        .as_ref()
        .map(|p| p.world_size)
        .or(imported.config.batch.replicas);
    let mut again_opts = ImportOptions {
        world_size: world,
        num_processes: None,
        env: Vec::new(),
        deepspeed_config: None,
        accelerate_config: None,
        ..opts.clone()
    };
    // A DeepSpeed file whose grid came from the file itself (gpt-neox's
    // degrees) is launched again with the same grid: the model code's
    // degrees, and its mpu unless the model is a PipelineModule.
    if framework == Framework::DeepSpeed
        && let Some(p) = &imported.config.parallel
        && opts.tensor.is_none()
        && opts.pipeline.is_none()
    {
        again_opts.tensor = p.tensor;
        again_opts.pipeline = p.pipeline;
        again_opts.deepspeed_mpu = p.pipeline.is_none_or(|pp| pp <= 1);
    }
    let again = import(framework, "exported", &exported.text, &again_opts)
        .map_err(|e| format!("re-import: {e}\n{}", exported.text))?;
    let mut expected = imported.config.clone();
    expected.run = again.config.run.clone();
    if again.config != expected {
        return Err(format!(
            "round trip changed the config:\n{}\nbecame\n{}\nthrough\n{}",
            config_toml(&expected),
            config_toml(&again.config),
            exported.text
        ));
    }
    let twice = export(framework, &again.config).map_err(|e| format!("second export: {e}"))?;
    if twice.text != exported.text {
        return Err(format!(
            "export is not a fixed point:\n{}\n{}",
            exported.text, twice.text
        ));
    }
    Ok(())
}

#[test]
fn every_fixture_gives_the_frameworks_batch_or_refusal() {
    let all = fixtures();
    assert!(all.len() >= 50, "only {} fixtures", all.len());
    let mut failures = Vec::new();
    for (framework, path) in &all {
        let show = path.display().to_string();
        let text = fs::read_to_string(path).expect("a fixture");
        let e = header(path, &text);
        let parts: Vec<&str> = e.imitates.splitn(2, ' ').collect();
        assert!(
            parts.len() == 2 && parts[0].contains('/'),
            "{show}: `imitates:` names `owner/repo path`, not `{}`",
            e.imitates
        );
        let result = import_file(*framework, path, &e.options);
        let (batch, codes, imported) = match &result {
            Ok(i) => (
                Some(batch_of(&i.config)),
                i.findings()
                    .flat_map(with_folded)
                    .map(short)
                    .collect::<Vec<_>>(),
                Some(i),
            ),
            Err(ImportError::Invalid { files }) => (
                None,
                files
                    .iter()
                    .flat_map(|f| &f.findings)
                    .flat_map(with_folded)
                    .map(short)
                    .collect(),
                None,
            ),
            Err(other) => (None, Vec::new(), {
                let _ = other;
                None
            }),
        };
        let mut codes = codes;
        codes.sort();
        if batch != e.batch {
            failures.push(format!(
                "{show}: batch {batch:?}, expected {:?}\n{}",
                e.batch,
                render(&result)
            ));
        }
        if codes != e.codes {
            failures.push(format!(
                "{show}: codes {codes:?}, expected {:?}\n{}",
                e.codes,
                render(&result)
            ));
        }
        if let Some(imported) = imported {
            let actual = stages_line(&imported.config);
            let constant = !actual.contains(':');
            match &e.stages {
                Some(expected) if !stages_match(expected, &actual) => {
                    failures.push(format!("{show}: stages {actual}, expected {expected}"))
                }
                None if !constant => {
                    failures.push(format!("{show}: stages {actual}, expected none"));
                }
                _ => {}
            }
        }
        if let Some(imported) = imported
            && !imported.has_errors()
        {
            let toml = imported.to_toml();
            match toml::from_str::<TrainingConfig>(&toml) {
                Ok(config) => {
                    // Warnings (a length in updates under a ramp-up) are the
                    // config's own, as the import's.
                    if let Err(findings) = config.check()
                        && findings.has_errors()
                    {
                        failures.push(format!(
                            "{show}: the imported config does not validate: {findings:?}\n{toml}"
                        ));
                    }
                }
                Err(err) => failures.push(format!(
                    "{show}: the imported config does not read: {err}\n{toml}"
                )),
            }
            // A partial group the framework scales down is a warning on
            // import, and export refuses the data that leaves one.
            let scaled = imported
                .findings()
                .any(|f| f.finding.code == Code::PartialGroup);
            if !scaled && let Err(err) = round_trip(*framework, imported, &e.options) {
                failures.push(format!("{show}: {err}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

fn render(result: &Result<Imported, ImportError>) -> String {
    match result {
        Ok(i) => i.render(false),
        Err(e) => e.render(false),
    }
}

/// The framework of a fixture, from its folder.
fn framework_of(file: &str) -> Framework {
    let folder = file.split('/').next().unwrap_or("");
    Framework::ALL
        .into_iter()
        .find(|f| dir(*f) == folder)
        .unwrap_or_else(|| panic!("{file}: not in a framework's folder"))
}

fn imported(file: &str) -> Imported {
    let path = root().join(file);
    let text = fs::read_to_string(&path).expect("a fixture");
    let e = header(&path, &text);
    import_file(framework_of(file), &path, &e.options).unwrap_or_else(|err| panic!("{file}: {err}"))
}

/// Every finding of a fixture, imported with its options, whether or not
/// it gives a batch.
/// A finding's code, then the codes of the findings folded into it: a
/// fixture's `codes:` lists both.
fn with_folded(finding: &Diagnostic) -> Vec<Code> {
    std::iter::once(finding.finding.code)
        .chain(finding.consequences.iter().map(|c| c.code))
        .collect()
}

pub(super) fn fixture_findings(file: &str) -> Vec<Diagnostic> {
    let path = root().join(file);
    let text = fs::read_to_string(&path).expect("a fixture");
    let e = header(&path, &text);
    match import_file(framework_of(file), &path, &e.options) {
        Ok(i) => i.findings().cloned().collect(),
        Err(ImportError::Invalid { files }) => files.into_iter().flat_map(|f| f.findings).collect(),
        Err(err) => panic!("{file}: {err}"),
    }
}

#[test]
fn clipping_zero_stays_off_and_absent_stays_absent() {
    for file in ["deepspeed/no_clipping.json", "hf/no_clipping.yaml"] {
        let c = imported(file).config;
        assert_eq!(c.optimizer.clip_norm, Some(0.0), "{file}");
        let toml = config_toml(&c);
        assert!(toml.contains("clip_norm = 0.0"), "{toml}");
        let full: TrainingConfig = toml::from_str(&toml).expect("reads");
        assert_eq!(
            full.optimizer.clip_norm, None,
            "0 is no clipping in the full config"
        );
    }
    // Nothing the file does not say: no schedule, optimizer or data size.
    let c = imported("deepspeed/no_clipping.json").config;
    assert_eq!(c.schedule, Default::default());
    assert_eq!(c.optimizer.kind, None);
    assert_eq!(c.data.examples, None);
}

#[test]
fn export_writes_only_what_the_config_says() {
    let c = imported("deepspeed/bing_bert_all_three.json").config;
    let out = export(Framework::DeepSpeed, &c).expect("exports");
    assert!(!out.text.contains("scheduler"), "{}", out.text);
    assert!(
        !out.text.contains("max_steps") && !out.text.contains("WarmupDecayLR"),
        "{}",
        out.text
    );
    // DeepSpeed's "Adam" runs in AdamW mode: the same optimizer, by its name.
    assert_eq!(c.optimizer.kind, Some(OptimizerKind::AdamW));
    let hf = export(Framework::HuggingFace, &c).expect("exports");
    assert!(!hf.text.contains("max_steps"), "{}", hf.text);
    assert!(
        hf.text.contains("\"per_device_train_batch_size\": 3"),
        "{}",
        hf.text
    );
    // A config with no optimizer kind writes no optimizer section, and says so.
    let mut c = c;
    c.optimizer.kind = None;
    let out = export(Framework::DeepSpeed, &c).expect("exports");
    assert!(!out.text.contains("\"optimizer\""), "{}", out.text);
    assert!(
        out.notes
            .iter()
            .any(|n| n.contains("optimizer.lr") && n.contains("not written")),
        "{:?}",
        out.notes
    );
}

#[test]
fn hf_fills_deepspeed_auto_values_and_its_scheduler() {
    let i = imported("hf/llamafactory_full_sft.yaml");
    assert_eq!(i.files.len(), 2, "the recipe and its DeepSpeed file");
    assert!(
        i.files[1].name.ends_with("refs/ds_z3_auto.json"),
        "{}",
        i.files[1].name
    );
    assert_eq!(i.config.schedule.kind, Some(ScheduleKind::Cosine));
    let i = imported("hf/ds_mismatch.yaml");
    let f = i
        .findings()
        .find(|f| f.finding.code == Code::EngineAssert)
        .expect("the Trainer's refusal");
    assert!(
        f.finding
            .message
            .contains("- ds train_micro_batch_size_per_gpu=4 vs hf per_device_train_batch_size=2"),
        "{}",
        f.finding.message
    );
}

#[test]
fn megatron_schedules_are_kept_for_staged_plans() {
    let i = imported("megatron/rampup_samples.sh");
    assert_eq!(
        i.batch_schedule,
        Some(BatchSchedule::Ramp {
            start: 64,
            increment: 64,
            samples: 2_000_000,
            end: 512
        })
    );
    let i = imported("megatron/step_schedule.sh");
    let Some(BatchSchedule::Steps(steps)) = &i.batch_schedule else {
        panic!("a step schedule: {:?}", i.batch_schedule);
    };
    // 2.4B tokens // 2048 tokens per sample.
    assert_eq!(
        steps[1],
        BatchStep {
            from_examples: 1_171_875,
            global_batch: 320
        }
    );
    assert_eq!(steps.last().map(|s| s.global_batch), Some(1536));
    let i = imported("megatron/underscores.sh");
    assert_eq!(
        i.config.schedule.total,
        Some(Span::new(220_000_000, UnitKind::Example))
    );
    let i = imported("megatron/train_samples_floor.sh");
    let f = i.findings().next().expect("the floor");
    assert!(
        !f.finding.message.contains("recent versions"),
        "{}",
        f.finding.message
    );
    assert!(
        f.finding.message.contains("1000000 // 256 = 3906"),
        "{}",
        f.finding.message
    );
}

#[test]
fn framework_names_parse() {
    for framework in Framework::ALL {
        assert_eq!(framework.key().parse::<Framework>(), Ok(framework));
    }
    assert_eq!("nemo".parse::<Framework>(), Ok(Framework::NeMo));
    assert_eq!(
        "jax".parse::<Framework>().unwrap_err().to_string(),
        "unknown framework `jax`; use `deepspeed`, `megatron`, `hf` (or `huggingface`), `lightning`, `nemo`, `axolotl` or `litgpt`"
    );
}

#[test]
fn garbage_never_panics() {
    let inputs = [
        "",
        "{}",
        "[]",
        "null",
        "{\"train_batch_size\": 1e400}",
        "{\"devices\": -5}",
        "{\"accumulate_grad_batches\": {\"x\": \"y\"}}",
        "--micro-batch-size",
        "--micro-batch-size -3",
        "trainer: [1, 2]",
        "model:\n  micro_batch_size: 0\n  global_batch_size: 8\n",
        "{\"per_device_train_batch_size\": 18446744073709551615, \"gradient_accumulation_steps\": 18446744073709551615}",
        "--micro-batch-size 18446744073709551615 --global-batch-size 18446744073709551615 --train-samples 5",
        "--micro-batch-size 1 --rampup-batch-size 1 0 5 --step-batch-size-schedule \"0:0 x:y\"",
        "X=$((1/0))\ntorchrun --micro-batch-size $X",
    ];
    let opts = ImportOptions {
        world_size: Some(u64::MAX),
        num_processes: Some(3),
        micro_batch: Some(u64::MAX),
        examples: Some(u64::MAX),
        variable_lengths: true,
        tensor: Some(3),
        ..ImportOptions::default()
    };
    for framework in Framework::ALL {
        for text in inputs {
            for o in [&opts, &ImportOptions::default()] {
                if let Ok(imported) = import(framework, "x", text, o) {
                    let _ = export(framework, &imported.config);
                    let _ = imported.to_toml();
                }
            }
        }
    }
}

#[test]
fn a_process_count_the_script_computes_is_the_world_size_with_its_assumption_named() {
    let findings = fixture_findings("megatron/script_gpu_count_nodes.sh");
    let f = findings
        .iter()
        .find(|f| f.finding.code == Code::InteropWorldSize)
        .expect("a world-size warning");
    assert_eq!(f.finding.severity, crate::diagnostic::Severity::Warning);
    assert_eq!(
        f.finding.message,
        "the launcher's process count is not in the script; accum takes the script's NUM_GPUS = 16 as the world size, assuming the launcher starts that many processes"
    );
    // Unknown, the refusal names the variable and the flag that gives it.
    let findings = fixture_findings("megatron/script_gpu_count_unknown.sh");
    let f = findings
        .iter()
        .find(|f| f.finding.code == Code::Missing)
        .expect("a missing-value error");
    assert_eq!(
        f.help_text(),
        Some(
            "give --env NUM_NODES=N (the script then computes NUM_GPUS), or the world size: --world-size N"
        ),
        "{}",
        f.finding.message
    );
}
