//! One severity rule for every dialect (`docs/interop.md`, "Findings"): a
//! finding is an error when the framework refuses the file, when it trains
//! a batch or a loss denominator other than the one written, when a value
//! the batch needs is unknown, or when accum cannot plan the batches the
//! framework trains; otherwise (the run works as written, but is
//! ambiguous, lossy to convert, not fully read or probably not what was
//! meant) it is a warning. Each case names why, and the severity follows.

use super::tests::fixture_findings;
use crate::diagnostic::Severity;

/// Why a finding is what it is.
#[derive(Clone, Copy, Debug)]
enum Why {
    /// The framework stops at start-up or during the run.
    Refuses,
    /// The framework trains another batch or loss denominator than written.
    TrainsOther,
    /// A value the batch needs is not known (or the file is another tool's).
    Unknown,
    /// The framework trains batches accum cannot plan exactly.
    NotPlanned,
    /// The run works as written: ambiguous, lossy to convert, left unread,
    /// or probably not what was meant.
    Works,
}

impl Why {
    fn severity(self) -> Severity {
        match self {
            Why::Refuses | Why::TrainsOther | Why::Unknown | Why::NotPlanned => Severity::Error,
            Why::Works => Severity::Warning,
        }
    }
}

/// (fixture, finding code, why) for every dialect.
const CASES: &[(&str, &str, Why)] = &[
    ("deepspeed/mismatch.json", "engine-assert", Why::Refuses),
    (
        "deepspeed/neox_gas_default.yml",
        "engine-assert",
        Why::Refuses,
    ),
    ("deepspeed/ds_z3_auto.json", "auto", Why::Unknown),
    (
        "deepspeed/unknown_optimizer.json",
        "not-converted",
        Why::Works,
    ),
    ("deepspeed/elastic_unread.json", "unread", Why::Works),
    ("megatron/not_divisible.sh", "engine-assert", Why::Refuses),
    (
        "megatron/rampup_first_batch.sh",
        "engine-assert",
        Why::Refuses,
    ),
    ("megatron/unknown_micro.sh", "missing", Why::Unknown),
    ("megatron/train_samples_floor.sh", "rounds", Why::Works),
    ("megatron/rampup_decrease.sh", "rounds", Why::NotPlanned),
    (
        "megatron/tp_as_replicas.sh",
        "model-parallel-replicas",
        Why::Works,
    ),
    ("megatron/env_default_world.sh", "world-size", Why::Works),
    ("megatron/launcher_disagrees.sh", "world-size", Why::Works),
    ("deepspeed/neox_global_gpus.yml", "world-size", Why::Works),
    ("megatron/rampup_cut_short.sh", "schedule-shift", Why::Works),
    ("megatron/unread_argument.sh", "unread", Why::Works),
    ("hf/ds_mismatch.yaml", "engine-assert", Why::Refuses),
    ("hf/no_processes.yaml", "missing", Why::Unknown),
    ("hf/warmup_ratio.yaml", "rounds", Why::Works),
    ("hf/per_gpu_unread.yaml", "unread", Why::Works),
    (
        "lightning/scheduler_partial_epoch.yaml",
        "partial-group",
        Why::TrainsOther,
    ),
    ("lightning/devices_auto.yaml", "missing", Why::Unknown),
    ("lightning/val_check_interval.yaml", "step-unit", Why::Works),
    ("lightning/litgpt_recipe.yaml", "dialect", Why::Unknown),
    ("nemo/nemo_accumulate.yaml", "engine-assert", Why::Refuses),
    ("nemo/nemo_rampup.yaml", "ramp-restarts", Why::Works),
    ("axolotl/one_key.yml", "engine-assert", Why::Refuses),
    ("axolotl/batch_size_only.yml", "value", Why::TrainsOther),
    ("axolotl/nd_parallel_unread.yaml", "unread", Why::Works),
    ("litgpt/floored.yaml", "rounds", Why::TrainsOther),
    ("litgpt/too_small.yaml", "engine-assert", Why::Refuses),
];

#[test]
fn every_dialect_follows_one_severity_rule() {
    let mut wrong = Vec::new();
    for &(file, code, why) in CASES {
        let code = format!("accum::interop::{code}");
        let findings = fixture_findings(file);
        let found: Vec<_> = findings.iter().filter(|f| f.code == code).collect();
        assert!(
            !found.is_empty(),
            "{file}: no {code} finding in {findings:?}"
        );
        for f in found {
            if f.severity != why.severity() {
                wrong.push(format!(
                    "{file}: {code} is {:?}, but {why:?} makes it {:?}: {}",
                    f.severity,
                    why.severity(),
                    f.message
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // Every dialect is in the table.
    for framework in super::Framework::ALL {
        assert!(
            CASES
                .iter()
                .any(|(file, ..)| file.starts_with(&format!("{}/", framework.key()))),
            "{framework} has no severity case"
        );
    }
}
