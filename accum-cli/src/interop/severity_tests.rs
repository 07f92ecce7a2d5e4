//! One severity rule for every dialect (`docs/interop.md`, "Findings"): a
//! finding is an error only when the framework refuses the file or accum
//! cannot know the batch (a value it needs is unknown, or the framework
//! trains batches accum cannot plan exactly); when the framework runs
//! something other than what the file seems to say (another batch, a
//! partial group scaled down), it is a warning that gives the framework's
//! verdict; and when the run works as written but is ambiguous, lossy to
//! convert, not fully read or probably not what was meant, a warning.
//! Each case names why, and the severity follows.

use accum_core::Code;

use super::tests::fixture_findings;
use crate::diagnostic::Severity;

/// Why a finding is what it is.
#[derive(Clone, Copy, Debug)]
enum Why {
    /// The framework stops at start-up or during the run.
    Refuses,
    /// The framework runs another batch or loss denominator than the file
    /// seems to say; the finding gives the framework's.
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
            Why::Refuses | Why::Unknown | Why::NotPlanned => Severity::Error,
            Why::TrainsOther | Why::Works => Severity::Warning,
        }
    }
}

/// (fixture, finding code, why) for every dialect.
const CASES: &[(&str, Code, Why)] = &[
    ("deepspeed/mismatch.json", Code::EngineAssert, Why::Refuses),
    (
        "deepspeed/neox_gas_default.yml",
        Code::EngineAssert,
        Why::Refuses,
    ),
    ("deepspeed/ds_z3_auto.json", Code::Auto, Why::Unknown),
    (
        "deepspeed/unknown_optimizer.json",
        Code::NotConverted,
        Why::Works,
    ),
    ("deepspeed/elastic_unread.json", Code::Unread, Why::Works),
    (
        "megatron/not_divisible.sh",
        Code::EngineAssert,
        Why::Refuses,
    ),
    (
        "megatron/rampup_first_batch.sh",
        Code::EngineAssert,
        Why::Refuses,
    ),
    ("megatron/unknown_micro.sh", Code::Missing, Why::Unknown),
    ("megatron/train_samples_floor.sh", Code::Rounds, Why::Works),
    ("megatron/rampup_decrease.sh", Code::Rounds, Why::NotPlanned),
    (
        "megatron/tp_as_replicas.sh",
        Code::ModelParallelReplicas,
        Why::Works,
    ),
    (
        "megatron/env_default_world.sh",
        Code::InteropWorldSize,
        Why::Works,
    ),
    (
        "megatron/launcher_disagrees.sh",
        Code::InteropWorldSize,
        Why::Works,
    ),
    (
        "deepspeed/neox_global_gpus.yml",
        Code::InteropWorldSize,
        Why::Works,
    ),
    ("megatron/rampup_cut_short.sh", Code::StageShift, Why::Works),
    ("megatron/unread_argument.sh", Code::Unread, Why::Works),
    ("hf/ds_mismatch.yaml", Code::EngineAssert, Why::Refuses),
    ("hf/no_processes.yaml", Code::Missing, Why::Unknown),
    ("hf/warmup_ratio.yaml", Code::Rounds, Why::Works),
    ("hf/per_gpu_unread.yaml", Code::Unread, Why::Works),
    (
        "lightning/partial_last_group.yaml",
        Code::PartialGroup,
        Why::TrainsOther,
    ),
    ("lightning/devices_auto.yaml", Code::Missing, Why::Unknown),
    (
        "lightning/val_check_interval.yaml",
        Code::StepUnit,
        Why::Works,
    ),
    ("lightning/litgpt_recipe.yaml", Code::Dialect, Why::Unknown),
    (
        "nemo/nemo_accumulate.yaml",
        Code::EngineAssert,
        Why::Refuses,
    ),
    ("nemo/nemo_rampup.yaml", Code::RampRestarts, Why::Works),
    ("axolotl/one_key.yml", Code::EngineAssert, Why::Refuses),
    (
        "axolotl/batch_size_only.yml",
        Code::InteropValue,
        Why::TrainsOther,
    ),
    ("axolotl/nd_parallel_unread.yaml", Code::Unread, Why::Works),
    ("litgpt/floored.yaml", Code::Rounds, Why::TrainsOther),
    ("litgpt/too_small.yaml", Code::EngineAssert, Why::Refuses),
];

#[test]
fn every_dialect_follows_one_severity_rule() {
    let mut wrong = Vec::new();
    for &(file, code, why) in CASES {
        let findings = fixture_findings(file);
        // A finding folded into its cause is told with the cause's severity.
        let found: Vec<_> = findings
            .iter()
            .filter(|f| f.finding.code == code || f.consequences.iter().any(|c| c.code == code))
            .collect();
        assert!(
            !found.is_empty(),
            "{file}: no {code} finding in {findings:?}"
        );
        for f in found {
            if f.finding.severity != why.severity() {
                wrong.push(format!(
                    "{file}: {code} is {:?}, but {why:?} makes it {:?}: {}",
                    f.finding.severity,
                    why.severity(),
                    f.finding.message
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
