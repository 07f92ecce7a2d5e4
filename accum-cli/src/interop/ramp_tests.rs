//! Megatron-LM's batch ramp-ups, imported and checked against numbers
//! computed by Megatron-LM's own code: the expected values below come from
//! running `RampupBatchsizeNumMicroBatchesCalculator`
//! (`megatron/core/num_microbatches_calculator.py`) and `update_train_iters`
//! (`megatron/training/training.py`) as they were before commit 532ad926b4,
//! calling `update(consumed_samples)` before every iteration as the
//! training loop does (step schedules: `step_tests.rs`).
//!
//! Each case imports a launch script, resolves the imported config's stages
//! with core's `StagedPlan`, and checks, at chosen iterations, the samples
//! consumed before the iteration, its global batch and its number of
//! microbatches, and the iterations Megatron trains for `--train-samples`.

use accum_core::Code;
use accum_core::plan::{LinearRamp, StagedPlan};
use accum_core::{Span, UnitKind, Updates};

use super::megatron::schedules::{Rule, train_iters};
use super::stages::staged_plan;
use super::*;

/// One ramp-up and what Megatron-LM does with it.
struct Case {
    /// `--rampup-batch-size START INCREMENT SAMPLES`.
    ramp: [u64; 3],
    /// `--global-batch-size`.
    global: u64,
    /// `--micro-batch-size`.
    micro: u64,
    /// Processes, tensor and pipeline degrees (D = world / (tp·pp)).
    world: u64,
    tp: u64,
    pp: u64,
    /// (iteration, samples consumed before it, global batch, microbatches).
    at: &'static [(u64, u64, u64, u64)],
    /// (`--train-samples`, `train_iters`).
    iters: &'static [(u64, u64)],
}

const CASES: &[Case] = &[
    // sc21's CONFIG.sh shape: 64 → 512 in 7 increments over 2M samples.
    Case {
        ramp: [64, 64, 2_000_000],
        global: 512,
        micro: 2,
        world: 8,
        tp: 1,
        pp: 1,
        at: &[
            (0, 0, 64, 4),
            (1, 64, 64, 4),
            (4455, 285_120, 64, 4),
            (4464, 285_696, 64, 4),
            (4465, 285_760, 128, 8),
            (5000, 354_240, 128, 8),
            (6697, 571_456, 192, 12),
            (9000, 1_065_792, 256, 16),
            (9100, 1_091_392, 256, 16),
        ],
        iters: &[
            (10_240_000, 27_670),
            (1_000_000, 8744),
            (2_000_000, 11_577),
            (100, 2),
        ],
    },
    // GPT-3 175B: 16 → 1536 over 5,859,375 samples (4B tokens of 2,048).
    Case {
        ramp: [16, 16, 5_859_375],
        global: 1536,
        micro: 1,
        world: 16,
        tp: 1,
        pp: 1,
        at: &[
            (0, 0, 16, 1),
            (1000, 16_000, 16, 1),
            (3854, 61_664, 16, 1),
            (3855, 61_680, 32, 2),
            (7000, 181_792, 48, 3),
            (8000, 244_704, 64, 4),
            (9000, 327_344, 96, 6),
            (10_000, 432_272, 128, 8),
        ],
        iters: &[(100_000_000, 81_091), (5_859_375, 19_802), (1000, 63)],
    },
    // The calculator's docstring: 16 → 1024 by 8 over 300,000 samples.
    Case {
        ramp: [16, 8, 300_000],
        global: 1024,
        micro: 1,
        world: 8,
        tp: 1,
        pp: 1,
        at: &[
            (0, 0, 16, 2),
            (148, 2368, 16, 2),
            (149, 2384, 24, 3),
            (150, 2408, 24, 3),
            (300, 6416, 32, 4),
            (1000, 100_568, 352, 44),
            (3000, 2_021_440, 1024, 128),
        ],
        iters: &[(300_000, 1319), (300_001, 1319), (1_000_000, 2002)],
    },
    // 7 increments of 142.857… samples: the float rule decides.
    Case {
        ramp: [32, 32, 1000],
        global: 256,
        micro: 4,
        world: 8,
        tp: 1,
        pp: 1,
        at: &[
            (0, 0, 32, 1),
            (4, 128, 32, 1),
            (5, 160, 64, 2),
            (6, 224, 64, 2),
            (7, 288, 96, 3),
            (8, 384, 96, 3),
            (9, 480, 128, 4),
            (10, 608, 160, 5),
            (11, 768, 192, 6),
            (12, 960, 224, 7),
            (13, 1184, 256, 8),
            (20, 2976, 256, 8),
        ],
        iters: &[(1000, 13), (1001, 13), (2000, 16), (100, 4)],
    },
    // A ramp shorter than one batch: 32 and 64 are never reached.
    Case {
        ramp: [16, 16, 40],
        global: 128,
        micro: 2,
        world: 8,
        tp: 1,
        pp: 1,
        at: &[
            (0, 0, 16, 1),
            (1, 16, 48, 3),
            (2, 64, 128, 8),
            (3, 192, 128, 8),
            (5, 448, 128, 8),
        ],
        iters: &[(40, 2), (41, 2), (1000, 9), (20, 2)],
    },
    // One increment: the batch doubles once the ramp's samples are passed.
    Case {
        ramp: [256, 256, 100_000],
        global: 512,
        micro: 4,
        world: 16,
        tp: 1,
        pp: 1,
        at: &[
            (0, 0, 256, 4),
            (389, 99_584, 256, 4),
            (390, 99_840, 256, 4),
            (391, 100_096, 512, 8),
            (392, 100_608, 512, 8),
            (500, 155_904, 512, 8),
        ],
        iters: &[
            (100_000, 391),
            (99_999, 391),
            (100_096, 391),
            (100_352, 391),
            (1_000_000, 2148),
        ],
    },
    // 3 increments of 21.33… samples, one microbatch per replica at the start.
    Case {
        ramp: [8, 8, 64],
        global: 32,
        micro: 1,
        world: 8,
        tp: 1,
        pp: 1,
        at: &[
            (0, 0, 8, 1),
            (1, 8, 8, 1),
            (2, 16, 8, 1),
            (3, 24, 16, 2),
            (4, 40, 16, 2),
            (5, 56, 24, 3),
            (6, 80, 32, 4),
            (8, 144, 32, 4),
        ],
        iters: &[(64, 6), (65, 6), (100, 6), (1, 1)],
    },
    // 32 → 1024 over 1,953,125 samples on 32 replicas.
    Case {
        ramp: [32, 32, 1_953_125],
        global: 1024,
        micro: 1,
        world: 32,
        tp: 1,
        pp: 1,
        at: &[
            (0, 0, 32, 1),
            (1968, 62_976, 32, 1),
            (1969, 63_008, 64, 2),
            (5000, 417_344, 224, 7),
            (10_000, 4_072_224, 1024, 32),
        ],
        iters: &[(1_953_125, 7931), (10_000_000, 15_788)],
    },
    // Model parallel: D = 32 / (tp 4 × pp 2) = 4.
    Case {
        ramp: [8, 8, 10_000],
        global: 64,
        micro: 2,
        world: 32,
        tp: 4,
        pp: 2,
        at: &[
            (0, 0, 8, 1),
            (100, 800, 8, 1),
            (179, 1432, 16, 2),
            (300, 3616, 24, 3),
            (464, 10_008, 64, 8),
            (1000, 44_312, 64, 8),
        ],
        iters: &[(10_000, 464), (5000, 351), (100_000, 1870)],
    },
    // Increments of exactly 25 samples: a consumed count on a boundary
    // already takes the next batch.
    Case {
        ramp: [10, 10, 100],
        global: 50,
        micro: 5,
        world: 2,
        tp: 1,
        pp: 1,
        at: &[
            (0, 0, 10, 1),
            (2, 20, 10, 1),
            (3, 30, 20, 2),
            (4, 50, 30, 3),
            (5, 80, 40, 4),
            (6, 120, 50, 5),
            (7, 170, 50, 5),
        ],
        iters: &[(100, 6), (25, 3), (26, 3), (1000, 23)],
    },
    // 9 increments of 1.11… samples on one replica.
    Case {
        ramp: [3, 3, 10],
        global: 30,
        micro: 3,
        world: 1,
        tp: 1,
        pp: 1,
        at: &[
            (0, 0, 3, 1),
            (1, 3, 9, 3),
            (2, 12, 30, 10),
            (7, 162, 30, 10),
        ],
        iters: &[(10, 2), (9, 2), (11, 2), (100, 4)],
    },
];

/// The launch script of a case.
fn script(c: &Case) -> String {
    format!(
        "torchrun --nproc_per_node {} pretrain_gpt.py --micro-batch-size {} --global-batch-size {} \
         --tensor-model-parallel-size {} --pipeline-model-parallel-size {} --rampup-batch-size {} {} {}",
        c.world, c.micro, c.global, c.tp, c.pp, c.ramp[0], c.ramp[1], c.ramp[2]
    )
}

/// The stages of an imported config.
pub(super) fn staged(imported: &Imported) -> StagedPlan {
    let plan = imported.config.plan().expect("a plan");
    staged_plan(&imported.config, &plan).expect("the stages resolve")
}

/// Checks the stages at the chosen iterations; `Err` names the first miss.
pub(super) fn check_at(
    staged: &StagedPlan,
    at: &[(u64, u64, u64, u64)],
    micro: u64,
    replicas: u64,
) -> Result<(), String> {
    for &(it, consumed, batch, microbatches) in at {
        let n = Updates::new(it);
        let got = (
            staged.examples_at(n).map_err(|e| e.to_string())?.get(),
            staged.plan_at(n).effective_batch().get(),
            staged.plan_at(n).accumulation(),
        );
        if got != (consumed, batch, microbatches) {
            return Err(format!(
                "iteration {it}: consumed, batch, microbatches {got:?}, Megatron {:?}",
                (consumed, batch, microbatches)
            ));
        }
        // Megatron's num_microbatches = batch // (micro × D).
        assert_eq!(batch / (micro * replicas), microbatches, "the case itself");
    }
    Ok(())
}

#[test]
fn megatron_ramp_ups_train_the_calculators_batches() {
    assert!(CASES.len() >= 10);
    let mut failures = Vec::new();
    for (i, c) in CASES.iter().enumerate() {
        let imported = import(
            Framework::Megatron,
            "case.sh",
            &script(c),
            &ImportOptions::default(),
        )
        .unwrap_or_else(|e| panic!("case {i}: {e}"));
        assert!(
            !imported.has_errors(),
            "case {i}: {}",
            imported.render(false)
        );
        assert_eq!(
            imported.config.batch.ramp,
            Some(LinearRamp {
                start: c.ramp[0],
                increment: c.ramp[1],
                over: Span::new(c.ramp[2], UnitKind::Example),
            }),
            "case {i}"
        );
        assert_eq!(
            imported.config.batch.global_batch,
            Some(c.global),
            "case {i}"
        );
        let replicas = c.world / (c.tp * c.pp);
        let staged = staged(&imported);
        if let Err(e) = check_at(&staged, c.at, c.micro, replicas) {
            failures.push(format!("case {i}: {e}"));
        }
        let rule = Rule::Ramp {
            plan: &staged,
            samples: c.ramp[2],
        };
        for &(samples, iters) in c.iters {
            let got = train_iters(&rule, samples).expect("counts");
            if got != iters {
                failures.push(format!(
                    "case {i}: --train-samples {samples}: {got} iterations, Megatron {iters}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn nemo_ramp_ups_are_megatrons() {
    let text = "trainer:\n  devices: 2\nmodel:\n  micro_batch_size: 4\n  global_batch_size: 64\n  rampup_batch_size: [16, 16, 5000]\n";
    let imported = import(
        Framework::NeMo,
        "nemo.yaml",
        text,
        &ImportOptions::default(),
    )
    .expect("imports");
    let staged = staged(&imported);
    check_at(
        &staged,
        &[
            (0, 0, 16, 2),
            (104, 1664, 16, 2),
            (105, 1680, 32, 4),
            (157, 3344, 48, 6),
            (192, 5024, 64, 8),
            (200, 5536, 64, 8),
        ],
        4,
        2,
    )
    .expect("the calculator's batches");
    let rule = Rule::Ramp {
        plan: &staged,
        samples: 5000,
    };
    assert_eq!(train_iters(&rule, 5000), Ok(192));
    let codes: Vec<Code> = imported.findings().map(|f| f.finding.code).collect();
    assert_eq!(codes, [Code::Version, Code::RampRestarts]);
}

/// The calculator's rule, translated once more: `update(consumed)` before
/// each iteration, in f64. Over the first iterations of every case, the
/// imported stages give the same batch at every iteration.
#[test]
fn every_iteration_follows_the_rule() {
    for (i, c) in CASES.iter().enumerate() {
        let [start, increment, samples] = c.ramp;
        let increments = (c.global - start) / increment;
        let per_increment = samples as f64 / increments as f64;
        let imported = import(
            Framework::Megatron,
            "case.sh",
            &script(c),
            &ImportOptions::default(),
        )
        .expect("imports");
        let staged = staged(&imported);
        let mut consumed = 0u64;
        for it in 0..20_000u64 {
            let batch = if consumed > samples {
                c.global
            } else {
                start + (consumed as f64 / per_increment) as u64 * increment
            };
            let plan = staged.plan_at(Updates::new(it));
            assert_eq!(
                (
                    plan.effective_batch().get(),
                    staged.examples_at(Updates::new(it)).map(|e| e.get())
                ),
                (batch, Ok(consumed)),
                "case {i}, iteration {it}"
            );
            consumed += batch;
        }
    }
}

/// A run that ends in the ramp-up phase trains past `--train-samples`
/// (an iteration is counted while the samples before it are at most
/// train_samples); the help names the first count Megatron trains exactly,
/// and that count, or it plus whole global batches, gives no finding.
#[test]
fn a_run_ending_in_the_ramp_up_is_told_the_exact_count() {
    let run = |samples: u64| {
        let text = format!("{} --train-samples {samples}", script(&CASES[0]));
        import(
            Framework::Megatron,
            "r.sh",
            &text,
            &ImportOptions::default(),
        )
        .expect("imports")
    };
    // Case 0: the ramp-up phase ends after 11,577 iterations, at 2,000,384 samples.
    for samples in [100, 285_760, 1_999_999, 2_000_000, 2_000_383] {
        let imported = run(samples);
        let rounds: Vec<_> = imported
            .findings()
            .filter(|f| f.finding.code == Code::Rounds)
            .collect();
        assert_eq!(rounds.len(), 1, "{samples}: {}", imported.render(false));
        assert!(
            rounds[0]
                .finding
                .message
                .contains("more than --train-samples"),
            "{}",
            rounds[0].finding.message
        );
        let help = rounds[0].help_text().unwrap_or_default();
        assert!(
            help.contains("end at 2,000,384 samples, and --train-samples 2000384 (or that plus whole global batches of 512)"),
            "{samples}: {help}"
        );
    }
    for samples in [2_000_384, 2_000_384 + 512, 2_000_384 + 512 * 1000] {
        let imported = run(samples);
        assert!(
            imported.findings().all(|f| f.finding.code != Code::Rounds),
            "{samples}: {}",
            imported.render(false)
        );
    }
    // Past that phase the count is rounded down to whole global batches.
    let imported = run(2_000_384 + 700);
    let help = imported
        .findings()
        .find(|f| f.finding.code == Code::Rounds)
        .and_then(|f| f.help_text().map(str::to_owned))
        .expect("a rounds finding");
    assert!(help.contains("write --train-samples 2000896"), "{help}");
}
