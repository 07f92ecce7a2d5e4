//! The survey of real configs that motivated the importers: each finding
//! it made, and the fixtures that show it handled.

use super::tests::root;

/// Each finding of the survey that motivated the importers, and the fixtures
/// that show it handled.
const FINDINGS: &[(&str, &[&str])] = &[
    (
        "DeepSpeed \"auto\" resolved as the HF Trainer does",
        &[
            "hf/llamafactory_full_sft.yaml",
            "deepspeed/ds_z3_auto.json",
            "hf/ds_mismatch.yaml",
        ],
    ),
    ("DeepSpeed comments (hjson)", &["deepspeed/commented.json"]),
    (
        "DeepSpeed pipeline parallel: no mpu advice",
        &[
            "deepspeed/pipeline.json",
            "deepspeed/pipeline_with_mpu.json",
        ],
    ),
    (
        "gradient_clipping 0 is off",
        &["deepspeed/no_clipping.json", "hf/no_clipping.yaml"],
    ),
    (
        "export writes no invented values",
        &["deepspeed/bing_bert_all_three.json"],
    ),
    (
        "import → export → import without a hidden 256",
        &["deepspeed/cifar_fill_gas.json", "megatron/torchrun_args.sh"],
    ),
    (
        "Megatron arguments in quoted strings",
        &["megatron/quoted_args.sh"],
    ),
    (
        "Megatron variables of the same file",
        &["megatron/variables.sh", "megatron/arrays.sh"],
    ),
    (
        "launcher variables with --world-size",
        &[
            "megatron/launcher_vars.sh",
            "megatron/launcher_vars_unknown.sh",
            "megatron/env_given.sh",
        ],
    ),
    (
        "no duplicate warnings from branches or other commands",
        &["megatron/branches.sh", "megatron/duplicate.sh"],
    ),
    ("int(\"220_000_000\")", &["megatron/underscores.sh"]),
    (
        "Megatron YAML argument files",
        &["megatron/model_config.yaml", "megatron/yaml_cfg.yaml"],
    ),
    (
        "--expert-model-parallel-size",
        &[
            "megatron/expert_parallel_refused.sh",
            "megatron/expert_parallel.sh",
        ],
    ),
    (
        "--rampup-batch-size consistency",
        &[
            "megatron/rampup_inconsistent.sh",
            "megatron/rampup_increment.sh",
        ],
    ),
    (
        "--step-batch-size-schedule",
        &["megatron/step_schedule.sh", "megatron/step_with_global.sh"],
    ),
    (
        "ramp-ups and step schedules import as the stages the framework trains",
        &[
            "megatron/rampup_samples.sh",
            "megatron/rampup_gpt3_175b.sh",
            "megatron/step_exact.sh",
            "megatron/step_skipped.sh",
            "nemo/nemo_rampup.yaml",
            "lightning/accumulation_schedule.yaml",
            "lightning/scheduler_callback.yaml",
        ],
    ),
    (
        "ramp-ups the framework refuses or rounds",
        &[
            "megatron/rampup_zero_samples.sh",
            "megatron/rampup_start_is_global.sh",
            "megatron/rampup_decrease.sh",
            "megatron/step_decrease.sh",
            "megatron/step_no_seq.sh",
            "nemo/nemo_rampup_refused.yaml",
            "lightning/scheduler_partial_epoch.yaml",
            "lightning/scheduler_with_factor.yaml",
            "lightning/accumulation_schedule_no_examples.yaml",
        ],
    ),
    (
        "no \"recent versions refuse\" claim",
        &["megatron/train_samples_floor.sh"],
    ),
    (
        "schedule-shift silent when the schedule is in samples",
        &["megatron/rampup_samples.sh", "megatron/rampup_iters.sh"],
    ),
    (
        "TrainingArguments YAML recipes",
        &[
            "hf/zephyr_sft_full.yaml",
            "hf/llamafactory_lora_sft.yaml",
            "hf/zephyr_dpo_ddp.yaml",
        ],
    ),
    (
        "Accelerate configs",
        &[
            "hf/zephyr_sft_full.yaml",
            "hf/accelerate_gas_mismatch.yaml",
            "hf/accelerate_as_args.yaml",
        ],
    ),
    (
        "axolotl files",
        &[
            "hf/axolotl_as_hf.yml",
            "axolotl/mistral_qlora.yml",
            "axolotl/batch_size_only.yml",
        ],
    ),
    (
        "NeMo model.micro_batch_size / global_batch_size",
        &[
            "nemo/nemo_gpt.yaml",
            "nemo/nemo_gpt_tp.yaml",
            "nemo/nemo_accumulate.yaml",
        ],
    ),
    (
        "model.train_ds.batch_size, data.params.batch_size, lightning: trainer",
        &["lightning/nemo_asr.yaml", "lightning/latent_diffusion.yaml"],
    ),
    (
        "devices forms \"0,\", -1, lists, auto",
        &[
            "lightning/latent_diffusion.yaml",
            "lightning/nemo_asr_unknown_devices.yaml",
            "lightning/devices_list.json",
            "lightning/devices_auto.yaml",
        ],
    ),
];

/// The families of the second survey (files accum had not seen), each
/// with the fixtures that show it handled.
const UNSEEN: &[(&str, &[&str])] = &[
    (
        "gpt-neox YAML: comments, 955_000, dashed keys",
        &[
            "deepspeed/neox_pythia.yml",
            "deepspeed/neox_gas_default.yml",
        ],
    ),
    (
        "gpt-neox: pipe_parallel_size >= 1 is a PipelineModule, model parallelism divides",
        &["deepspeed/neox_pythia.yml", "deepspeed/neox_pipe_zero.yml"],
    ),
    (
        "shell argument loops and srun … bash -c strings",
        &[
            "megatron/arg_loop_srun.sh",
            "megatron/arg_loop_zero_stage.sh",
        ],
    ),
    (
        "Megatron-DeepSpeed --ds-sequence-parallel-size",
        &["megatron/ds_sequence_parallel.sh"],
    ),
    (
        "an explicit world size over environment defaults",
        &[
            "megatron/env_default_world.sh",
            "megatron/launcher_disagrees.sh",
            "deepspeed/neox_global_gpus.yml",
        ],
    ),
    (
        "ramp-ups cut short by --train-samples, refused on the first batch",
        &[
            "megatron/rampup_cut_short.sh",
            "megatron/rampup_first_batch.sh",
            "megatron/rampup_interval_first.sh",
        ],
    ),
    (
        "model-parallel-replicas advice for accumulation",
        &["megatron/tp_as_replicas.sh"],
    ),
    (
        "NeMo's other batch keys",
        &[
            "lightning/nemo_tts_fastpitch.yaml",
            "lightning/nemo_tts_vits.yaml",
        ],
    ),
    (
        "LitGPT as its own dialect, never A = 1",
        &[
            "litgpt/pretrain_tinyllama.yaml",
            "litgpt/floored.yaml",
            "litgpt/finetune_nodes.yaml",
            "litgpt/too_small.yaml",
            "litgpt/defaults.yaml",
            "lightning/litgpt_recipe.yaml",
        ],
    ),
    (
        "axolotl's batch_size without the accumulation: one severity",
        &["axolotl/batch_size_only.yml"],
    ),
    (
        "unread batch keys and arguments",
        &[
            "deepspeed/elastic_unread.json",
            "hf/per_gpu_unread.yaml",
            "megatron/unread_argument.sh",
            "axolotl/nd_parallel_unread.yaml",
        ],
    ),
];

#[test]
fn every_family_of_the_unseen_files_has_fixtures() {
    for (family, files) in UNSEEN {
        assert!(!files.is_empty(), "{family}");
        for f in *files {
            assert!(root().join(f).is_file(), "{family}: {f} is not a fixture");
        }
    }
}

#[test]
fn every_finding_of_the_survey_has_fixtures() {
    for (finding, files) in FINDINGS {
        assert!(!files.is_empty(), "{finding}");
        for f in *files {
            assert!(root().join(f).is_file(), "{finding}: {f} is not a fixture");
        }
    }
}
