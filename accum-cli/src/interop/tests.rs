//! Fixture-driven tests: every file in `tests/fixtures/interop/<engine>/`
//! is imported with the options a launcher would give, and the findings,
//! the canonical TOML and the exported files are snapshotted; import →
//! export → import must give the same canonical configuration.

use std::fs;

use super::*;
use crate::source::line_col;

fn fixture(engine: &str, file: &str) -> String {
    let path = format!(
        "{}/../tests/fixtures/interop/{engine}/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    fs::read_to_string(&path).unwrap_or_else(|err| panic!("{path}: {err}"))
}

fn dir(engine: Engine) -> &'static str {
    match engine {
        Engine::DeepSpeed => "deepspeed",
        Engine::Megatron => "megatron",
        Engine::HuggingFace => "hf",
        Engine::Lightning => "lightning",
    }
}

fn findings_text(text: &str, findings: &[Finding]) -> String {
    let mut out = String::new();
    for f in findings {
        let (line, col) = f
            .primary
            .as_ref()
            .map_or((0, 0), |(span, _)| line_col(text, span.start));
        let severity = match f.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        out.push_str(&format!(
            "{severity}[{}] {line}:{col} {}\n  {}\n",
            f.code,
            f.dotted_path(),
            f.message
        ));
        if let Some(help) = &f.help {
            out.push_str(&format!("  help: {help}\n"));
        }
    }
    if findings.is_empty() {
        out.push_str("(none)\n");
    }
    out
}

/// The text a snapshot holds for one import.
fn report(engine: Engine, file: &str, opts: &ImportOptions) -> (String, Option<Imported>) {
    let text = fixture(dir(engine), file);
    match import(engine, file, &text, opts) {
        Ok(imported) => {
            let out = format!(
                "# findings\n{}\n# canonical\n{}",
                findings_text(&text, &imported.findings),
                imported.canonical.to_toml()
            );
            (out, Some(imported))
        }
        Err(ImportError::Invalid { findings, .. }) => (
            format!("# import refused\n{}", findings_text(&text, &findings)),
            None,
        ),
        Err(err) => (format!("# import failed\n{err}\n"), None),
    }
}

fn codes_of(imported: &Option<Imported>) -> Vec<&'static str> {
    imported
        .as_ref()
        .map(|i| i.findings.iter().map(|f| f.code).collect())
        .unwrap_or_default()
}

/// import → export → import gives the same canonical configuration.
fn round_trip(engine: Engine, imported: &Imported, opts: &ImportOptions) -> String {
    let exported =
        export(engine, &imported.canonical).unwrap_or_else(|err| panic!("export failed: {err}"));
    let again = import(engine, &imported.canonical.run.name, &exported, opts)
        .unwrap_or_else(|err| panic!("re-import failed: {err}\n{exported}"));
    let mut expected = imported.canonical.clone();
    expected.run = again.canonical.run.clone();
    assert_eq!(
        again.canonical, expected,
        "round trip changed the config:\n{exported}"
    );
    // And once more: export is a fixed point.
    assert_eq!(
        export(engine, &again.canonical).as_deref(),
        Ok(exported.as_str())
    );
    exported
}

fn world(n: u64) -> ImportOptions {
    ImportOptions {
        world_size: Some(n),
        ..ImportOptions::default()
    }
}

// --- DeepSpeed ------------------------------------------------------------

#[test]
fn deepspeed_correct_imports_clean_and_round_trips() {
    let opts = world(8);
    let (out, imported) = report(Engine::DeepSpeed, "correct.json", &opts);
    insta::assert_snapshot!("deepspeed_correct", out);
    let imported = imported.expect("imports");
    assert!(imported.findings.is_empty(), "{out}");
    let b = &imported.canonical.batch;
    assert_eq!(
        (b.micro_batch, b.accumulation, b.replicas, b.global_batch),
        (4, 16, 8, Some(512))
    );
    let exported = round_trip(Engine::DeepSpeed, &imported, &opts);
    insta::assert_snapshot!("deepspeed_correct_export", exported);
}

#[test]
fn deepspeed_fills_gas_exactly_like_deepspeed() {
    let (out, imported) = report(Engine::DeepSpeed, "fill_gas.json", &world(8));
    insta::assert_snapshot!("deepspeed_fill_gas", out);
    let imported = imported.expect("imports");
    assert_eq!(imported.canonical.batch.accumulation, 16);
    assert!(imported.findings.is_empty());
}

#[test]
fn deepspeed_floor_and_assert_are_reported_with_its_numbers() {
    let (out, imported) = report(Engine::DeepSpeed, "floor_gas.json", &world(2));
    insta::assert_snapshot!("deepspeed_floor_gas", out);
    assert!(imported.is_none());
    assert!(
        out.contains("gradient_accumulation_steps = 30 // 2 // 2 = 7"),
        "{out}"
    );
    assert!(out.contains("30 != 2 * 7 * 2"), "{out}");
    assert!(
        out.contains("use global_batch 28 (accumulation 7) or 32 (accumulation 8)"),
        "{out}"
    );

    let (out, imported) = report(Engine::DeepSpeed, "floor_micro.json", &world(4));
    insta::assert_snapshot!("deepspeed_floor_micro", out);
    assert!(imported.is_none());
    assert!(out.contains("66 // 4 // 4 = 4"), "{out}");

    let (out, _) = report(Engine::DeepSpeed, "mismatch.json", &world(8));
    insta::assert_snapshot!("deepspeed_mismatch", out);
    assert!(out.contains("500 != 4 * 16 * 8"), "{out}");
}

#[test]
fn deepspeed_refuses_what_it_cannot_read() {
    for (file, expected) in [
        ("gas_only.json", codes::ENGINE_ASSERT),
        ("auto.json", codes::AUTO),
        ("bad_values.json", codes::VALUE),
    ] {
        let (out, imported) = report(Engine::DeepSpeed, file, &world(4));
        insta::assert_snapshot!(format!("deepspeed_{}", file.trim_end_matches(".json")), out);
        assert!(imported.is_none(), "{file}");
        assert!(out.contains(expected), "{file}: {out}");
    }
    let (out, _) = report(Engine::DeepSpeed, "syntax.json", &world(4));
    assert!(out.starts_with("# import failed\nsyntax.json:1:"), "{out}");
    // Without a world size there is nothing to check against.
    let (out, _) = report(Engine::DeepSpeed, "correct.json", &ImportOptions::default());
    assert!(out.contains(codes::MISSING), "{out}");
}

#[test]
fn deepspeed_precisions_and_loss_scales() {
    let opts = world(4);
    let (out, imported) = report(Engine::DeepSpeed, "fp16_static.json", &opts);
    insta::assert_snapshot!("deepspeed_fp16_static", out);
    let imported = imported.expect("imports");
    let scale = imported.canonical.precision.loss_scale.expect("fp16 scale");
    assert_eq!((scale.init, scale.growth_factor), (1024.0, Some(1.0)));
    round_trip(Engine::DeepSpeed, &imported, &opts);

    let (out, imported) = report(Engine::DeepSpeed, "fp16_dynamic.json", &opts);
    insta::assert_snapshot!("deepspeed_fp16_dynamic", out);
    let imported = imported.expect("imports");
    assert_eq!(imported.canonical.batch.micro_batch, 8);
    assert_eq!(
        imported.canonical.precision.loss_scale.map(|s| s.init),
        Some(4096.0)
    );
    let exported = round_trip(Engine::DeepSpeed, &imported, &opts);
    insta::assert_snapshot!("deepspeed_fp16_dynamic_export", exported);

    let (out, imported) = report(Engine::DeepSpeed, "both_precisions.json", &opts);
    assert_eq!(codes_of(&imported), vec![codes::VALUE], "{out}");
}

#[test]
fn deepspeed_model_parallel_partial_group_and_tokens() {
    let opts = ImportOptions {
        world_size: Some(16),
        tensor: Some(2),
        examples: Some(100_000),
        variable_lengths: true,
        ..ImportOptions::default()
    };
    // 512 = 4 × 16 × 8 replicas: right for D = 8, but DeepSpeed checks
    // against all 16 ranks unless it gets the model-parallel unit.
    let (out, imported) = report(Engine::DeepSpeed, "correct.json", &opts);
    insta::assert_snapshot!("deepspeed_model_parallel", out);
    // accum's plan (D = 8) is valid; DeepSpeed's check is not.
    assert_eq!(
        codes_of(&imported),
        vec![
            codes::MODEL_PARALLEL,
            codes::ENGINE_ASSERT,
            codes::PER_TOKEN,
            codes::PARTIAL_GROUP
        ],
        "{out}"
    );
    assert!(out.contains("512 != 4 * 16 * 16"), "{out}");

    let with_mpu = ImportOptions {
        deepspeed_mpu: true,
        ..opts
    };
    let (out, imported) = report(Engine::DeepSpeed, "correct.json", &with_mpu);
    insta::assert_snapshot!("deepspeed_mpu_partial_tokens", out);
    assert_eq!(
        codes_of(&imported),
        vec![codes::PER_TOKEN, codes::PARTIAL_GROUP],
        "{out}"
    );
    let imported = imported.expect("imports");
    assert_eq!(imported.canonical.batch.replicas, 8);
    assert_eq!(
        imported.canonical.loss.normalization,
        Normalization::PerToken
    );
    // A partial group DeepSpeed has no policy for refuses to export.
    let err = export(Engine::DeepSpeed, &imported.canonical).unwrap_err();
    assert!(matches!(err, ExportError::LastGroup { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "100000 examples leave a partial group of 160 examples (B = 512) and last_group is \"error\", but DeepSpeed has no last-group policy (its accumulation boundary ignores epoch ends); use 99840 or 100352 examples, or a last_group DeepSpeed applies"
    );
}

#[test]
fn deepspeed_sequence_parallel_devices_are_not_replicas() {
    // 16 ranks / sequence_parallel_size 4 = 4 replicas: 64 = 2 × 8 × 4.
    let opts = world(16);
    let (out, imported) = report(Engine::DeepSpeed, "sequence_parallel.json", &opts);
    insta::assert_snapshot!("deepspeed_sequence_parallel", out);
    let imported = imported.expect("imports");
    assert!(imported.findings.is_empty(), "{out}");
    let b = imported.canonical.batch;
    assert_eq!((b.micro_batch, b.accumulation, b.replicas), (2, 8, 4));
    assert_eq!(imported.canonical.parallel.map(|p| p.context), Some(4));
    let exported = round_trip(Engine::DeepSpeed, &imported, &opts);
    assert!(
        exported.contains("\"sequence_parallel_size\": 4"),
        "{exported}"
    );
}

// --- Megatron -------------------------------------------------------------

#[test]
fn megatron_correct_reads_the_launcher_and_round_trips() {
    let opts = ImportOptions::default();
    let (out, imported) = report(Engine::Megatron, "correct.sh", &opts);
    insta::assert_snapshot!("megatron_correct", out);
    let imported = imported.expect("imports");
    assert!(imported.findings.is_empty(), "{out}");
    let b = &imported.canonical.batch;
    // R3: 64 GPUs / (tp 2 × pp 2) = 16 replicas; 2048 / (8 × 16) = 16.
    assert_eq!((b.micro_batch, b.accumulation, b.replicas), (8, 16, 16));
    let exported = round_trip(Engine::Megatron, &imported, &world(64));
    insta::assert_snapshot!("megatron_correct_export", exported);
}

#[test]
fn megatron_failures() {
    let cases: [(&str, ImportOptions, &[&str], bool); 8] = [
        (
            "not_divisible.sh",
            world(64),
            &[codes::ENGINE_ASSERT, codes::NOT_DIVISIBLE],
            false,
        ),
        ("layout.sh", world(64), &[codes::LAYOUT], false),
        (
            "tp_as_replicas.sh",
            world(16),
            &[codes::MODEL_PARALLEL],
            true,
        ),
        (
            "per_token_off.sh",
            ImportOptions {
                variable_lengths: true,
                ..world(8)
            },
            &[codes::PER_TOKEN],
            true,
        ),
        ("train_samples_floor.sh", world(8), &[codes::ROUNDS], true),
        ("rampup.sh", world(8), &[codes::SCHEDULE_SHIFT], true),
        ("missing_micro.sh", world(8), &[codes::MISSING], false),
        ("duplicate.sh", world(8), &[codes::VALUE], true),
    ];
    for (file, opts, expected, imports) in cases {
        let (out, imported) = report(Engine::Megatron, file, &opts);
        insta::assert_snapshot!(format!("megatron_{}", file.trim_end_matches(".sh")), out);
        assert_eq!(imported.is_some(), imports, "{file}: {out}");
        for code in expected {
            assert!(out.contains(code), "{file} lacks {code}: {out}");
        }
        match &imported {
            // The floored sample count is kept as written; export refuses to
            // round it silently, as Megatron would.
            Some(imported) if file == "train_samples_floor.sh" => assert!(matches!(
                export(Engine::Megatron, &imported.canonical),
                Err(ExportError::NotWhole {
                    engine_key: "--train-samples",
                    ..
                })
            )),
            Some(imported) => {
                round_trip(Engine::Megatron, imported, &opts);
            }
            None => {}
        }
    }
    // The launcher's count wins over a disagreeing world size.
    let (out, imported) = report(Engine::Megatron, "correct.sh", &world(32));
    assert_eq!(codes_of(&imported), vec![codes::WORLD_SIZE], "{out}");
}

// --- Hugging Face ---------------------------------------------------------

fn procs(n: u64) -> ImportOptions {
    ImportOptions {
        num_processes: Some(n),
        ..ImportOptions::default()
    }
}

#[test]
fn hf_correct_round_trips() {
    let opts = procs(4);
    let (out, imported) = report(Engine::HuggingFace, "correct.json", &opts);
    insta::assert_snapshot!("hf_correct", out);
    let imported = imported.expect("imports");
    assert!(imported.findings.is_empty(), "{out}");
    assert_eq!(imported.canonical.batch.global_batch, Some(4 * 8 * 4));
    let exported = round_trip(Engine::HuggingFace, &imported, &opts);
    insta::assert_snapshot!("hf_correct_export", exported);
}

#[test]
fn hf_failures() {
    let cases: [(&str, ImportOptions, &[&str], bool); 7] = [
        ("warmup_ratio.json", procs(2), &[codes::ROUNDS], true),
        (
            "avg_tokens_off.json",
            ImportOptions {
                variable_lengths: true,
                ..procs(8)
            },
            &[codes::PER_TOKEN],
            true,
        ),
        (
            "drop_last.json",
            ImportOptions {
                examples: Some(10_000),
                ..procs(3)
            },
            &[codes::PARTIAL_GROUP],
            true,
        ),
        ("epochs.json", procs(2), &[codes::NOT_CONVERTED], true),
        ("both_precisions.json", procs(2), &[codes::VALUE], true),
        ("bad_type.json", procs(2), &[codes::VALUE], false),
        ("warmup_float.json", procs(1), &[codes::ROUNDS], true),
    ];
    for (file, opts, expected, imports) in cases {
        let (out, imported) = report(Engine::HuggingFace, file, &opts);
        insta::assert_snapshot!(format!("hf_{}", file.trim_end_matches(".json")), out);
        assert_eq!(imported.is_some(), imports, "{file}: {out}");
        for code in expected {
            assert!(out.contains(code), "{file} lacks {code}: {out}");
        }
        if let Some(imported) = &imported {
            round_trip(Engine::HuggingFace, imported, &opts);
        }
    }
    // ceil(1234 × 0.03 = 37.02) = 38 updates.
    let (_, imported) = report(Engine::HuggingFace, "warmup_ratio.json", &procs(2));
    let schedule = imported
        .and_then(|i| i.canonical.schedule)
        .expect("schedule");
    assert_eq!(schedule.warmup, Some(Span::new(38, UnitKind::Update)));
    // Model-parallel processes are not replicas.
    let opts = ImportOptions {
        tensor: Some(2),
        ..procs(8)
    };
    let (out, imported) = report(Engine::HuggingFace, "correct.json", &opts);
    assert_eq!(codes_of(&imported), vec![codes::MODEL_PARALLEL], "{out}");
    assert_eq!(imported.map(|i| i.canonical.batch.replicas), Some(4));
    // Without a process count the batch is unknown.
    let (out, imported) = report(
        Engine::HuggingFace,
        "correct.json",
        &ImportOptions::default(),
    );
    assert!(imported.is_none() && out.contains(codes::MISSING), "{out}");
}

// --- Lightning ------------------------------------------------------------

#[test]
fn lightning_correct_round_trips() {
    let opts = ImportOptions::default();
    let (out, imported) = report(Engine::Lightning, "correct.yaml", &opts);
    insta::assert_snapshot!("lightning_correct", out);
    let imported = imported.expect("imports");
    assert!(imported.findings.is_empty(), "{out}");
    let b = &imported.canonical.batch;
    assert_eq!((b.micro_batch, b.accumulation, b.replicas), (16, 4, 16));
    let exported = round_trip(Engine::Lightning, &imported, &opts);
    insta::assert_snapshot!("lightning_correct_export", exported);

    let opts = ImportOptions {
        micro_batch: Some(4),
        ..ImportOptions::default()
    };
    let (out, imported) = report(Engine::Lightning, "flat.json", &opts);
    insta::assert_snapshot!("lightning_flat", out);
    let imported = imported.expect("imports");
    assert_eq!(imported.canonical.batch.replicas, 4);
    round_trip(Engine::Lightning, &imported, &opts);
}

#[test]
fn lightning_failures() {
    let cases: [(&str, ImportOptions, &[&str], bool); 5] = [
        (
            "accumulation_schedule.yaml",
            ImportOptions::default(),
            &[codes::SCHEDULE_SHIFT],
            true,
        ),
        (
            "val_check_interval.yaml",
            ImportOptions::default(),
            &[codes::STEP_UNIT],
            true,
        ),
        (
            "devices_auto.yaml",
            ImportOptions::default(),
            &[codes::MISSING],
            false,
        ),
        (
            "clip_value.yaml",
            ImportOptions::default(),
            &[codes::NOT_CONVERTED, codes::VALUE],
            true,
        ),
        (
            "correct.yaml",
            ImportOptions {
                examples: Some(1_000_000),
                variable_lengths: true,
                ..ImportOptions::default()
            },
            &[codes::PER_TOKEN, codes::PARTIAL_GROUP],
            true,
        ),
    ];
    for (i, (file, opts, expected, imports)) in cases.into_iter().enumerate() {
        let (out, imported) = report(Engine::Lightning, file, &opts);
        insta::assert_snapshot!(
            format!("lightning_{i}_{}", file.split('.').next().unwrap_or(file)),
            out
        );
        assert_eq!(imported.is_some(), imports, "{file}: {out}");
        for code in expected {
            assert!(out.contains(code), "{file} lacks {code}: {out}");
        }
        match &imported {
            // Lightning divides a partial group by the full accumulation:
            // export refuses data that leaves one.
            Some(imported) if opts.examples.is_some() => assert!(matches!(
                export(Engine::Lightning, &imported.canonical),
                Err(ExportError::LastGroup { .. } | ExportError::Unsupported { .. })
            )),
            Some(imported) => {
                round_trip(Engine::Lightning, imported, &opts);
            }
            None => {}
        }
    }
    // The first phase of the accumulation schedule is the plan.
    let (_, imported) = report(
        Engine::Lightning,
        "accumulation_schedule.yaml",
        &ImportOptions::default(),
    );
    assert_eq!(imported.map(|i| i.canonical.batch.accumulation), Some(8));
    // "auto" devices are resolved by the world size given.
    let (out, imported) = report(Engine::Lightning, "devices_auto.yaml", &world(4));
    assert!(imported.is_some_and(|i| i.findings.is_empty()), "{out}");
}

// --- Export ---------------------------------------------------------------

fn canonical() -> Canonical {
    let opts = procs(4);
    let text = fixture("hf", "correct.json");
    import(Engine::HuggingFace, "run", &text, &opts)
        .expect("imports")
        .canonical
}

#[test]
fn export_converts_spans_through_the_plan_or_refuses() {
    let mut c = canonical(); // m 4 × A 8 × D 4 = 128 examples per update
    c.schedule = Some(ScheduleSection {
        warmup: Some("12800 examples".parse().expect("span")),
        total: Some("16k microbatches".parse().expect("span")),
    });
    let out = export(Engine::HuggingFace, &c).expect("exact");
    assert!(out.contains("\"warmup_steps\": 100"), "{out}");
    assert!(out.contains("\"max_steps\": 2000"), "{out}");

    c.loss.normalization = Normalization::PerExample;
    c.schedule = Some(ScheduleSection {
        warmup: Some("1000 examples".parse().expect("span")),
        total: None,
    });
    for engine in Engine::ALL {
        let err = export(engine, &c).unwrap_err();
        assert!(
            matches!(err, ExportError::NotWhole { .. }),
            "{engine}: {err}"
        );
    }
    assert_eq!(
        export(Engine::HuggingFace, &c).unwrap_err().to_string(),
        "schedule.warmup = \"1k examples\" cannot be written as Hugging Face Trainer's `warmup_steps` without rounding: \
         1,000 examples is not a whole number of updates (one update = 128 examples); use 896 or 1,024 examples, or choose rounding up or down"
    );
    c.schedule = Some(ScheduleSection {
        warmup: Some("1M tokens".parse().expect("span")),
        total: None,
    });
    let err = export(Engine::DeepSpeed, &c).unwrap_err();
    assert!(err.to_string().contains("seq_len"), "{err}");
}

#[test]
fn export_refuses_what_an_engine_cannot_say() {
    let mut c = canonical();
    c.loss.normalization = Normalization::Sum;
    for engine in Engine::ALL {
        assert!(
            matches!(
                export(engine, &c),
                Err(ExportError::Unsupported {
                    key: "loss.normalization",
                    ..
                })
            ),
            "{engine}"
        );
    }
    let mut c = canonical();
    c.data = DataSection {
        last_group: LastGroup::Drop,
        examples: Some(1000),
    };
    assert!(matches!(
        export(Engine::HuggingFace, &c),
        Err(ExportError::LastGroup { .. })
    ));
    assert!(export(Engine::Megatron, &c).is_ok());
    let mut c = canonical();
    c.batch.global_batch = Some(100);
    assert!(matches!(
        export(Engine::DeepSpeed, &c),
        Err(ExportError::Plan(_))
    ));
    let mut c = canonical();
    c.parallel = Some(ParallelSection {
        world_size: 8,
        tensor: 2,
        pipeline: 1,
        context: 1,
    });
    assert!(matches!(
        export(Engine::HuggingFace, &c),
        Err(ExportError::Unsupported {
            key: "parallel",
            ..
        })
    ));
    let mut c = canonical();
    c.loss.normalization = Normalization::PerExample;
    c.precision = PrecisionSection {
        mode: PrecisionMode::Fp16,
        loss_scale: Some(LossScale {
            init: 1000.0,
            growth_factor: Some(2.0),
            backoff_factor: Some(0.5),
            growth_interval: None,
        }),
    };
    let err = export(Engine::DeepSpeed, &c).unwrap_err();
    assert!(err.to_string().contains("use 512 or 1024"), "{err}");
    let mut c = canonical();
    c.optimizer.lr = Some(f64::NAN);
    for engine in Engine::ALL {
        assert_eq!(
            export(engine, &c).unwrap_err().to_string(),
            format!(
                "{engine} cannot express optimizer.lr: NaN is not a finite number ≥ 0; write a finite value"
            )
        );
    }
}

#[test]
fn canonical_toml_reads_back_with_the_same_values() {
    let c = canonical();
    let text = c.to_toml();
    let back: Canonical = toml::from_str(&text).expect("valid TOML with the IR's keys");
    assert_eq!(back, c);
    let mut odd = c.clone();
    odd.run.name = "quote \" back \\ tab \t".to_owned();
    let back: Canonical = toml::from_str(&odd.to_toml()).expect("escaped");
    assert_eq!(back.run.name, odd.run.name);
}

#[test]
fn engine_names_parse() {
    for engine in Engine::ALL {
        assert_eq!(engine.key().parse::<Engine>(), Ok(engine));
    }
    assert_eq!("huggingface".parse::<Engine>(), Ok(Engine::HuggingFace));
    assert_eq!("HF".parse::<Engine>(), Ok(Engine::HuggingFace));
    assert_eq!(
        "jax".parse::<Engine>().unwrap_err().to_string(),
        "unknown engine `jax`; use `deepspeed`, `megatron`, `hf` (or `huggingface`) or `lightning`"
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
        "{\"per_device_train_batch_size\": 18446744073709551615, \"gradient_accumulation_steps\": 18446744073709551615}",
        "--micro-batch-size 18446744073709551615 --global-batch-size 18446744073709551615 --train-samples 5",
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
    for engine in Engine::ALL {
        for text in inputs {
            for o in [&opts, &ImportOptions::default(), &world(1)] {
                if let Ok(imported) = import(engine, "x", text, o) {
                    let _ = export(engine, &imported.canonical);
                    let _ = imported.canonical.to_toml();
                }
            }
        }
    }
}

#[test]
fn findings_render_with_locations_in_argument_text() {
    let text = fixture("megatron", "not_divisible.sh");
    let Err(ImportError::Invalid { findings, .. }) =
        import(Engine::Megatron, "not_divisible.sh", &text, &world(64))
    else {
        panic!("1000 is not a multiple of 128");
    };
    let out = render_findings("not_divisible.sh", &text, &findings, false);
    assert!(
        out.starts_with("error[accum::interop::engine-assert]: Megatron would stop at start-up"),
        "{out}"
    );
    assert!(out.contains(" --> not_divisible.sh:2:42\n"), "{out}");
    assert!(out.contains("--global-batch-size 1000"), "{out}");
    let json = crate::diagnostic::to_json("not_divisible.sh", &text, &findings);
    assert_eq!(
        (json[1].line, json[1].column, json[1].end_column),
        (2, 42, 46)
    );
    assert_eq!(json[1].code, codes::NOT_DIVISIBLE);
}

#[test]
fn import_errors_say_what_and_where() {
    let text = fixture("deepspeed", "floor_gas.json");
    let err = import(Engine::DeepSpeed, "floor_gas.json", &text, &world(2)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "floor_gas.json cannot be turned into a plan (3 errors); \
         DeepSpeed would floor: it sets gradient_accumulation_steps = 30 // 2 // 2 = 7, where 30 / (train_micro_batch_size_per_gpu 2 × world_size 2) = 7.5; \
         DeepSpeed would stop at start-up: \"Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size 30 != 2 * 7 * 2\"; \
         cannot solve accumulation: global_batch 30 is not a multiple of micro_batch 2 × replicas 2 = 4"
    );
    let err = import(Engine::HuggingFace, "args.json", "{\"a\": ", &procs(1)).unwrap_err();
    assert!(
        err.to_string().starts_with("args.json:1:7: invalid JSON"),
        "{err}"
    );

    let opts = ImportOptions {
        variable_lengths: true,
        ..procs(8)
    };
    let text = fixture("hf", "avg_tokens_off.json");
    let imported = import(Engine::HuggingFace, "a.json", &text, &opts).expect("imports");
    assert!(imported.has_errors());
    let imported = import(Engine::HuggingFace, "a.json", &text, &procs(8)).expect("imports");
    assert!(!imported.has_errors());
}

/// Every fixture is exercised by a test above (its name appears in this
/// file), and none makes import panic.
#[test]
fn every_fixture_is_tested() {
    let source = include_str!("tests.rs");
    for engine in Engine::ALL {
        let path = format!(
            "{}/../tests/fixtures/interop/{}",
            env!("CARGO_MANIFEST_DIR"),
            dir(engine)
        );
        let mut names: Vec<String> = fs::read_dir(&path)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert!(!names.is_empty(), "{path}");
        for name in names {
            assert!(
                source.contains(&format!("\"{name}\"")),
                "{path}/{name} is not used by a test"
            );
            let _ = import(engine, &name, &fixture(dir(engine), &name), &world(8));
        }
    }
}
