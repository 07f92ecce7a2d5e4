//! Batch ramp-ups through export: import → export → import keeps the
//! stages, Megatron writes the ramp-up or the step schedule, and the
//! frameworks with one accumulation for the whole run refuse them.

use accum_core::{Span, UnitKind};

use super::ramp_tests::staged;
use super::*;

/// import → export → import keeps the stages, for each shape.
#[test]
fn ramp_ups_round_trip_through_their_framework() {
    let megatron_ramp = "torchrun --nproc_per_node 8 pretrain_gpt.py --micro-batch-size 2 --global-batch-size 512 --rampup-batch-size 64 64 2000000 --train-samples 10240000";
    let megatron_steps = "torchrun --nproc_per_node 16 pretrain_gpt.py --micro-batch-size 1 --seq-length 2048 --step-batch-size-schedule \"0:16 2.4B:320 12B:1536\" --train-iters 500000";
    let nemo = "trainer:\n  devices: 2\n  max_steps: 1000\nmodel:\n  micro_batch_size: 4\n  global_batch_size: 64\n  rampup_batch_size: [16, 16, 5000]\n";
    let lightning = "trainer:\n  devices: 2\n  callbacks:\n    - class_path: lightning.pytorch.callbacks.GradientAccumulationScheduler\n      init_args:\n        scheduling: {0: 2, 3: 4, 5: 8}\ndata:\n  batch_size: 16\n";
    let opts = ImportOptions {
        examples: Some(25_600),
        ..ImportOptions::default()
    };
    for (framework, text) in [
        (Framework::Megatron, megatron_ramp),
        (Framework::Megatron, megatron_steps),
        (Framework::NeMo, nemo),
        (Framework::Lightning, lightning),
    ] {
        let first = import(framework, "first", text, &opts).expect("imports");
        let exported = export(framework, &first.config).expect("exports");
        let world = first
            .config
            .parallel
            .as_ref()
            .map(|p| p.world_size)
            .or(first.config.batch.replicas);
        let again = import(
            framework,
            "again",
            &exported.text,
            &ImportOptions {
                world_size: world,
                ..opts.clone()
            },
        )
        .unwrap_or_else(|e| panic!("{framework}: {e}\n{}", exported.text));
        assert_eq!(again.config.batch, first.config.batch, "{}", exported.text);
        assert!(
            first.config.batch.ramp.is_some() || first.config.batch.stages.is_some(),
            "{framework}"
        );
        assert_eq!(staged(&again), staged(&first), "{framework}");
    }
}

#[test]
fn megatron_export_writes_the_ramp_or_the_step_schedule() {
    let ramp = import(
        Framework::Megatron,
        "r.sh",
        "torchrun --nproc_per_node 8 pretrain_gpt.py --micro-batch-size 2 --global-batch-size 512 --seq-length 1024 --rampup-batch-size 64 64 2000000 --train-samples 10240000",
        &ImportOptions::default(),
    )
    .expect("imports");
    let out = export(Framework::Megatron, &ramp.config).expect("exports");
    assert!(
        out.text.contains("--rampup-batch-size 64 64 2000000"),
        "{}",
        out.text
    );
    assert!(out.text.contains("--global-batch-size 512"), "{}", out.text);
    // Current Megatron-LM ignores the ramp: the note gives the same stages
    // as a step schedule, thresholds in tokens.
    assert!(
        out.notes.iter().any(|n| n.contains(
            "--step-batch-size-schedule \"0:64 292618240:128 585170944:192 877723648:256"
        )),
        "{:?}",
        out.notes
    );
    // The same ramp with the run in iterations: the ramp versions refuse
    // iterations, so the stages go out as a step schedule, without
    // --global-batch-size (Megatron refuses both).
    let mut config = ramp.config.clone();
    config.schedule.total = Some(Span::new(30_000, UnitKind::Update));
    config.schedule.warmup = None;
    let out = export(Framework::Megatron, &config).expect("exports");
    assert!(
        out.text
            .contains("--step-batch-size-schedule \"0:64 292618240:128 585170944:192"),
        "{}",
        out.text
    );
    assert!(!out.text.contains("--global-batch-size"), "{}", out.text);
    assert!(out.text.contains("--train-iters 30000"), "{}", out.text);
    // A warmup in updates: Megatron's scheduler counts iterations of micro ×
    // DP = 16 samples under a step schedule, so the warmup's samples through
    // the stages are written over 16, and read back as the same samples.
    config.schedule.warmup = Some(Span::new(6000, UnitKind::Update));
    let staged_config = staged(&ramp);
    let samples = staged_config
        .examples_at(accum_core::Updates::new(6000))
        .expect("counts")
        .get();
    let out = export(Framework::Megatron, &config).expect("exports");
    assert!(
        out.text
            .contains(&format!("--lr-warmup-iters {}", samples / 16)),
        "{}",
        out.text
    );
    assert!(
        out.notes
            .iter()
            .any(|n| n.contains("micro × DP = 16 samples")),
        "{:?}",
        out.notes
    );
    let again = import(
        Framework::Megatron,
        "again.sh",
        &out.text,
        &ImportOptions {
            world_size: Some(8),
            ..ImportOptions::default()
        },
    )
    .expect("imports");
    assert_eq!(
        again.config.schedule.warmup,
        Some(Span::new(samples, UnitKind::Example))
    );
    config.schedule.warmup = None;
    // Without a sequence length the thresholds cannot be written as tokens.
    config.batch.seq_len = None;
    let err = export(Framework::Megatron, &config).expect_err("no seq_len");
    assert!(err.to_string().contains("give batch.seq_len"), "{err}");
}

#[test]
fn frameworks_with_one_accumulation_refuse_a_ramp() {
    let imported = import(
        Framework::Megatron,
        "r.sh",
        "torchrun --nproc_per_node 8 pretrain_gpt.py --micro-batch-size 2 --global-batch-size 512 --rampup-batch-size 64 64 2000000",
        &ImportOptions::default(),
    )
    .expect("imports");
    let mut config = imported.config;
    config.parallel = None;
    config.batch.replicas = Some(8);
    for framework in [
        Framework::DeepSpeed,
        Framework::HuggingFace,
        Framework::Axolotl,
    ] {
        let err = export(framework, &config).expect_err("no ramp there");
        let text = err.to_string();
        assert!(
            matches!(
                err,
                ExportError::Unsupported {
                    key: "batch.ramp",
                    ..
                }
            ),
            "{text}"
        );
        assert!(
            text.contains("gradient_accumulation_steps for the whole run")
                && text.contains("export to megatron")
                && text.contains("nemo")
                && text.contains("64 → 128 → 192")
                && text.contains(
                    "or remove batch.ramp from the config to train with the global batch 512"
                ),
            "{text}"
        );
    }
    // LitGPT has one batch for the run, and says so.
    let err = export(Framework::LitGpt, &config).expect_err("no ramp in LitGPT");
    assert!(
        matches!(
            err,
            ExportError::Unsupported {
                key: "batch.ramp",
                ..
            }
        ) && err
            .to_string()
            .contains("LitGPT has one global_batch_size and micro_batch_size for the whole run"),
        "{err}"
    );
    // Lightning changes the accumulation only at epochs.
    let err = export(Framework::Lightning, &config).expect_err("no epochs");
    assert!(err.to_string().contains("set data.examples"), "{err}");
    config.data.examples = Some(1_024_000);
    let err = export(Framework::Lightning, &config).expect_err("not at epochs");
    assert!(
        err.to_string().contains("not a whole number of epochs"),
        "{err}"
    );
}
