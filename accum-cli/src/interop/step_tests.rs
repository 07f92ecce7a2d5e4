//! Megatron-LM's step schedules (`--step-batch-size-schedule`), checked
//! against numbers computed by `StepBatchsizeNumMicroBatchesCalculator`
//! (`megatron/core/num_microbatches_calculator.py`) and `update_train_iters`
//! (`megatron/training/training.py`), calling `update(consumed_samples)`
//! before every iteration as the training loop does; and the learning-rate
//! lengths in iterations under them, which Megatron's scheduler counts in
//! samples.

use accum_core::Code;
use accum_core::{Span, UnitKind, Updates};

use super::megatron::schedules::{Rule, train_iters};
use super::ramp_tests::{check_at, staged};
use super::*;

#[test]
fn megatron_step_schedules_change_at_whole_iterations() {
    // (schedule, seq_length, micro, world, at, (train_samples, train_iters))
    type StepCase = (
        &'static str,
        u64,
        u64,
        u64,
        &'static [(u64, u64, u64, u64)],
        &'static [(u64, u64)],
    );
    let cases: &[StepCase] = &[
        (
            "0:16 2.4B:320 4.8B:624 7.2B:928 9.6B:1232 12B:1536",
            2048,
            1,
            16,
            &[
                (0, 0, 16, 1),
                (73_242, 1_171_872, 16, 1),
                (73_243, 1_171_888, 320, 20),
                (76_906, 2_344_048, 624, 39),
                (78_784, 3_515_920, 928, 58),
                (80_047, 4_687_984, 1232, 77),
                (80_998, 5_859_616, 1536, 96),
            ],
            &[
                (100_000_000, 142_288),
                (1_171_875, 73_243),
                (1_171_888, 73_243),
            ],
        ),
        (
            "0:32 102400:64 122880:128 1024000:256",
            1024,
            4,
            8,
            &[
                (0, 0, 32, 1),
                (3, 96, 32, 1),
                (4, 128, 128, 4),
                (10, 896, 128, 4),
                (11, 1024, 256, 8),
            ],
            &[(1000, 11), (1001, 11), (100, 4)],
        ),
    ];
    for &(schedule, len, micro, world, at, iters) in cases {
        let text = format!(
            "torchrun --nproc_per_node {world} pretrain_gpt.py --micro-batch-size {micro} --seq-length {len} --step-batch-size-schedule \"{schedule}\""
        );
        let imported = import(
            Framework::Megatron,
            "s.sh",
            &text,
            &ImportOptions::default(),
        )
        .expect("imports");
        assert!(imported.config.batch.stages.is_some(), "{schedule}");
        let staged = staged(&imported);
        check_at(&staged, at, micro, world).unwrap_or_else(|e| panic!("{schedule}: {e}"));
        for &(samples, expected) in iters {
            assert_eq!(
                train_iters(&Rule::Steps(&staged), samples),
                Ok(expected),
                "{schedule}: --train-samples {samples}"
            );
        }
    }
}

/// With `--train-iters` and a step schedule, Megatron's learning-rate
/// scheduler counts `lr_warmup_iters × global_batch_size` samples, and
/// `global_batch_size` is micro × DP there: the warmup is imported as those
/// samples, and the finding gives where it ends through the stages.
#[test]
fn a_warmup_in_iterations_under_a_step_schedule_counts_micro_times_dp_samples() {
    let text = "torchrun --nproc_per_node 16 pretrain_gpt.py --micro-batch-size 1 --seq-length 2048 \
                --step-batch-size-schedule \"0:16 2.4B:320 12B:1536\" --train-iters 500000 \
                --lr-warmup-iters 100000 --lr-decay-iters 430000";
    let imported =
        import(Framework::Megatron, "s.sh", text, &ImportOptions::default()).expect("imports");
    assert_eq!(
        imported.config.schedule.warmup,
        Some(Span::new(1_600_000, UnitKind::Example))
    );
    assert_eq!(
        imported.config.schedule.total,
        Some(Span::new(500_000, UnitKind::Update))
    );
    // 73,243 iterations of 16 reach 1,171,888 samples; then 1,338 of 320.
    let staged = staged(&imported);
    assert_eq!(
        staged
            .to_updates(1_600_000, UnitKind::Example, accum_core::plan::Rounding::Up)
            .map(Updates::get),
        Ok(74_581)
    );
    let lr: Vec<_> = imported
        .findings()
        .filter(|f| {
            f.finding.code == Code::StageShift && f.finding.message.contains("learning-rate")
        })
        .collect();
    assert_eq!(lr.len(), 1, "{}", imported.render(false));
    assert!(
        lr[0].finding.message.contains(
            "--lr-warmup-iters 100,000 is 100,000 × 16 = 1,600,000 samples, reached after 74,581 iterations through the stages"
        ) && lr[0].finding.message.contains("--lr-decay-iters 430,000 is 430,000 × 16 = 6,880,000 samples"),
        "{}",
        lr[0].finding.message
    );
    // 100,000 iterations through the stages are that many samples over 16.
    let through = staged
        .examples_at(Updates::new(100_000))
        .expect("counts")
        .get();
    let help = lr[0].help_text().unwrap_or_default();
    assert!(
        help.contains(&format!("--lr-warmup-iters {}", through / 16)),
        "{help}"
    );
    // The run's length counts iterations: the shift of --train-iters only.
    let shift: Vec<_> = imported
        .findings()
        .filter(|f| {
            f.finding.code == Code::StageShift && !f.finding.message.contains("learning-rate")
        })
        .collect();
    assert_eq!(shift.len(), 1);
    assert!(
        shift[0].finding.message.contains("--train-iters 500,000")
            && !shift[0].finding.message.contains("--lr-warmup-iters"),
        "{}",
        shift[0].finding.message
    );
    // A warmup within the first stage is the same either way: no finding.
    let text = text.replace(
        "--lr-warmup-iters 100000 --lr-decay-iters 430000",
        "--lr-warmup-iters 2000",
    );
    let imported = import(
        Framework::Megatron,
        "s.sh",
        &text,
        &ImportOptions::default(),
    )
    .expect("imports");
    assert!(
        imported
            .findings()
            .all(|f| !f.finding.message.contains("learning-rate")),
        "{}",
        imported.render(false)
    );
    assert_eq!(
        imported.config.schedule.warmup,
        Some(Span::new(32_000, UnitKind::Example))
    );
    // A schedule of one batch counts --train-samples by the same rule:
    // iterations while the samples consumed are below it, 16 × 64 = 1,024.
    let text = "torchrun --nproc_per_node 16 pretrain_gpt.py --micro-batch-size 1 --seq-length 2048 \
                --step-batch-size-schedule \"0:64\" --train-samples 1000";
    let imported =
        import(Framework::Megatron, "c.sh", text, &ImportOptions::default()).expect("imports");
    let rounds = imported
        .findings()
        .find(|f| f.finding.code == Code::Rounds)
        .expect("a rounds finding");
    assert!(
        rounds
            .finding.message
            .contains("train_iters = 16 (update_train_iters counts iterations while the samples consumed are below train_samples), so it trains 1024 samples, 24 more"),
        "{}",
        rounds.finding.message
    );
    // A schedule of one batch has no stages, and the same rule: 2,000
    // iterations of 16 samples are 500 iterations of the batch 64.
    let text = "torchrun --nproc_per_node 16 pretrain_gpt.py --micro-batch-size 1 --seq-length 2048 \
                --step-batch-size-schedule \"0:64\" --train-iters 500000 --lr-warmup-iters 2000";
    let imported =
        import(Framework::Megatron, "c.sh", text, &ImportOptions::default()).expect("imports");
    assert_eq!(imported.config.batch.global_batch, Some(64));
    assert_eq!(
        imported.config.schedule.warmup,
        Some(Span::new(32_000, UnitKind::Example))
    );
    let lr = imported
        .findings()
        .find(|f| f.finding.message.contains("learning-rate"))
        .expect("the scheduler's finding");
    assert!(
        lr.finding.message.contains("reached after 500 iterations")
            && lr
                .help_text()
                .is_some_and(|h| h.contains("--lr-warmup-iters 8000")),
        "{lr:?}"
    );
}
