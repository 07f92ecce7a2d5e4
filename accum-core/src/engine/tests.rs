use std::sync::atomic::AtomicBool;

use proptest::prelude::*;

use super::*;
use crate::data::{Dataset, PackedMicrobatch, Sequence};
use crate::dump::DumpWriter;
use crate::model::{GradScale, LossSums, TOKEN_MLP_PARAMS};
use crate::plan::LastGroup;
use crate::report::{Counters, CurvePoint};
use crate::schedule::ScheduleError;
use crate::settings::{
    DataSection, LogAxis, LogSection, ModelSection, Normalization, OptimizerKind, OptimizerSection,
    PrecisionMode, ScheduleKind, ScheduleSection,
};
use crate::units::{Microbatches, Tokens};
use crate::verify::{self, Tolerance, compare};

/// A small, fast config: V=16, H=8, F=16, lengths 2..=9, 4 updates.
fn small(examples: u64) -> EngineConfig {
    small_for(examples, "4 updates")
}

/// The same config over `examples` examples for a run of `total`.
pub(crate) fn small_for(examples: u64, total: &str) -> EngineConfig {
    EngineConfig {
        data: DataSection {
            examples,
            min_len: 2,
            max_len: 9,
            vocab: 16,
            seed: 5,
            ..DataSection::default()
        },
        model: ModelSection { hidden: 8, ffn: 16 },
        optimizer: OptimizerSection {
            lr: 1e-2,
            ..OptimizerSection::default()
        },
        schedule: ScheduleSection {
            kind: ScheduleKind::Constant,
            warmup: "0 updates".parse().unwrap(),
            total: Some(total.parse().unwrap()),
        },
        ..EngineConfig::default()
    }
}

fn plan(m: u64, a: u64, d: u64) -> Plan {
    Plan::new(m, a, d).unwrap()
}

fn run_with(
    plan: &Plan,
    config: &EngineConfig,
    mistakes: Mistakes,
) -> Result<RunReport, EngineError> {
    let mut engine = Engine::new(plan, config)?;
    engine.mistakes = mistakes;
    engine.run(&mut RunOptions::default())
}

#[test]
fn loss_falls_on_the_markov_data() {
    let mut config = small(64);
    config.schedule.total = Some("40 updates".parse().unwrap());
    config.optimizer.lr = 3e-2;
    let report = run(plan(4, 2, 2), &config).unwrap();
    assert_eq!(report.counters.applied_updates, Updates::new(40));
    let first = report.updates[0].loss;
    let last = report
        .updates
        .iter()
        .rev()
        .take(4)
        .map(|u| u.loss)
        .sum::<f64>()
        / 4.0;
    assert!(first > 2.0, "starts near ln 16 = 2.77: {first}");
    assert!(last < first - 0.5, "loss falls: {first} → {last}");
}

#[test]
fn counters_add_up_per_replica_and_total() {
    let config = small(32); // B = 8: 4 groups per epoch
    let report = run(plan(2, 2, 2), &config).unwrap();
    let c = report.counters;
    assert_eq!(c.update_attempts, 4);
    assert_eq!(c.applied_updates, Updates::new(4));
    assert_eq!(c.scheduler_steps, Updates::new(4));
    assert_eq!(c.microbatches, Microbatches::new(4 * 2 * 2));
    assert_eq!(c.backward_passes, 16);
    assert_eq!(c.examples, Examples::new(32));
    assert_eq!(c.grad_reductions, 4);
    assert_eq!(c.grad_zeroings, 4);
    assert_eq!(c.epochs, 1);
    let per_replica: u64 = report.replicas.iter().map(|r| r.examples.get()).sum();
    assert_eq!(per_replica, 32);
    let tokens: u64 = report
        .replicas
        .iter()
        .map(|r| r.supervised_tokens.get())
        .sum();
    assert_eq!(Tokens::new(tokens), c.supervised_tokens);
    // One epoch of 32 examples: every supervised token once.
    assert_eq!(c.supervised_tokens, report.data_tokens);
    assert!(
        report
            .replicas
            .iter()
            .all(|r| r.microbatches == Microbatches::new(8))
    );
    let json = report.to_json();
    let back: RunReport = serde_json::from_str(&json).unwrap();
    assert_eq!(back.counters, report.counters);
    assert_eq!(back.replicas, report.replicas);
    assert_eq!(back.memory, report.memory);
    assert_eq!(back.updates.len(), 4);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, .. ProptestConfig::default() })]

    /// `accum::run::normalization`, `accum::run::data-parallel`, `accum::verify::equivalence`: any split of a group gives the large-batch update.
    #[test]
    fn accumulated_update_equals_large_batch(
        m in 1u64..5,
        a in 1u64..5,
        d in 1u64..4,
        norm in prop_oneof![
            Just(Normalization::PerToken),
            Just(Normalization::PerExample),
            Just(Normalization::Sum),
        ],
        sgd in any::<bool>(),
        seed in 0u64..1000,
        max_len in 1u64..12,
    ) {
        let mut config = small(m * a * d);
        config.data.seed = seed;
        config.data.min_len = 1;
        config.data.max_len = max_len;
        config.loss.normalization = norm;
        if sgd {
            config.optimizer.kind = OptimizerKind::Sgd;
        }
        let report = verify::equivalence(&plan(m, a, d), &config, Tolerance::default()).unwrap();
        prop_assert!(report.passed, "{:#?}", report);
        prop_assert!(report.max_rel_grad_diff < 1e-4, "{}", report.max_rel_grad_diff);
        if sgd {
            prop_assert!(report.max_rel_param_diff < 1e-4, "{}", report.max_rel_param_diff);
        }
        prop_assert_eq!(report.microbatches, a * d);
    }
}

/// `accum::run::normalization` with real tensors: 512 tokens of loss 2 and 1,536 tokens of loss 4
/// → the group's per-token loss is 3.5; the mean of the two microbatch
/// means is 3 (a different objective).
#[test]
fn weighted_mean_is_not_the_mean_of_means() {
    let mut model = TokenMlp::new(3, 2, 2, 0);
    for name in ["embed", "w1", "b1", "w2"] {
        model.params_mut().get_mut(name).unwrap().fill(0.0);
    }
    // logits = b2, so loss(label) = logsumexp(b2) − b2[label]:
    // loss(0) = 2 and loss(1) = 4 when b2 = [0, −2, ln(e² − 1 − e⁻²)].
    let x2 = ((2f64).exp() - 1.0 - (-2f64).exp()).ln() as f32;
    let b2 = model.params_mut().get_mut("b2").unwrap();
    b2.as_slice_mut().unwrap().copy_from_slice(&[0.0, -2.0, x2]);
    let example = |id: u64, label: i64, len: usize| Sequence {
        id,
        tokens: vec![0; len],
        labels: vec![label; len],
    };
    let short: Vec<Sequence> = (0..4).map(|i| example(i, 0, 128)).collect(); // 512 tokens, loss 2
    let long: Vec<Sequence> = (4..8).map(|i| example(i, 1, 384)).collect(); // 1,536 tokens, loss 4
    let batches = [PackedMicrobatch::of(&short), PackedMicrobatch::of(&long)];
    let scale = GradScale {
        normalization: Normalization::PerToken,
        denominator: 2048.0,
        loss_scale: 1.0,
        ignore_index: -100,
    };
    let mut grads = model.params().zeros_like();
    let mut ws = model.workspace(2048);
    let mut group = LossSums::default();
    let mut means = Vec::new();
    for b in &batches {
        let s = model.forward_backward(b, &scale, &mut grads, &mut ws);
        means.push(s.token_loss / s.tokens as f64);
        group.add(&s);
    }
    assert_eq!(group.tokens, 2048);
    assert!(
        (means[0] - 2.0).abs() < 1e-4 && (means[1] - 4.0).abs() < 1e-4,
        "{means:?}"
    );
    assert!((group.objective - 3.5).abs() < 1e-4, "{}", group.objective);
    let mean_of_means = means.iter().sum::<f64>() / 2.0;
    assert!((mean_of_means - 3.0).abs() < 1e-4);

    // The engine computes 3.5 for this group whatever the split (m = 4, A = 2).
    let data = Dataset::from_examples(short.into_iter().chain(long).collect(), 3).unwrap();
    let mut config = small(8);
    config.data.vocab = 3;
    config.schedule.total = Some("1 update".parse().unwrap());
    let p = plan(4, 2, 1);
    let engine = Engine::with_model(p, &config, model.clone(), data.clone()).unwrap();
    let mut engine = engine;
    let stats = engine.step(&mut RunOptions::default()).unwrap().unwrap();
    assert!((stats.loss - 3.5).abs() < 1e-4, "{}", stats.loss);
    assert_eq!(stats.tokens, Tokens::new(2048));
    assert_eq!(stats.denominator, 2048.0);

    // And the verify check reports the mean of microbatch means beside it.
    let acc = Engine::with_model(p, &config, model.clone(), data.clone()).unwrap();
    let big = Engine::with_model(plan(8, 1, 1), &config, model, data).unwrap();
    let report = compare(acc, big, Tolerance::default(), &mut RunOptions::default()).unwrap();
    assert!(report.passed, "{report:#?}");
    assert!((report.loss_accumulated - 3.5).abs() < 1e-4);
    assert!((report.loss_large_batch - 3.5).abs() < 1e-4);
}

#[test]
fn per_token_differs_from_per_example_with_unequal_lengths() {
    let mut config = small(16);
    config.data.min_len = 1;
    config.data.max_len = 12;
    config.schedule.total = Some("1 update".parse().unwrap());
    let a = run(plan(4, 2, 2), &config).unwrap();
    config.loss.normalization = Normalization::PerExample;
    let b = run(plan(4, 2, 2), &config).unwrap();
    assert_eq!(a.updates[0].denominator, a.updates[0].tokens.get() as f64);
    assert_eq!(b.updates[0].denominator, 16.0);
    assert!((a.updates[0].loss - b.updates[0].loss).abs() > 1e-4);
}

// the symptom table of docs/rules.md: each mistake, injected, is detected or prevented.

#[test]
fn double_division_is_detected() {
    let err = run_with(
        &plan(2, 4, 1),
        &small(16),
        Mistakes {
            double_division: true,
            ..Mistakes::default()
        },
    )
    .unwrap_err();
    match err {
        EngineError::Normalization {
            weight, expected, ..
        } => {
            assert_eq!(expected, 1.0);
            assert!(
                (weight - 0.25).abs() < 1e-6,
                "loss divided by A = 4 again: {weight}"
            );
        }
        other => panic!("expected a normalization error, got {other}"),
    }
    assert!(run_with(&plan(2, 4, 1), &small(16), Mistakes::default()).is_ok());
    // With a summed loss the weights must total the token count.
    let mut config = small(16);
    config.loss.normalization = Normalization::Sum;
    let err = run_with(
        &plan(2, 4, 1),
        &config,
        Mistakes {
            double_division: true,
            ..Mistakes::default()
        },
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            EngineError::Normalization {
                normalization: Normalization::Sum,
                ..
            }
        ),
        "{err}"
    );
    assert!(run_with(&plan(2, 4, 1), &config, Mistakes::default()).is_ok());
}

#[test]
fn zeroing_per_microbatch_is_detected() {
    let err = run_with(
        &plan(2, 4, 2),
        &small(16),
        Mistakes {
            zero_per_microbatch: true,
            ..Mistakes::default()
        },
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            EngineError::Zeroing {
                attempt: 1,
                zeroings: 8
            }
        ),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("zeroing per microbatch cancels accumulation"),
        "{err}"
    );
}

#[test]
fn scheduler_per_microbatch_is_detected() {
    let err = run_with(
        &plan(2, 4, 1),
        &small(16),
        Mistakes {
            scheduler_per_microbatch: true,
            ..Mistakes::default()
        },
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            EngineError::ScheduleDrift {
                scheduler_steps: 4,
                applied_updates: 1,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn retained_activations_show_as_a_growing_peak() {
    let mut config = small(16);
    config.schedule.total = Some("4 updates".parse().unwrap());
    let clean = run_with(&plan(2, 2, 2), &config, Mistakes::default()).unwrap();
    assert!(!clean.memory.peak_grows);
    assert!(clean.warnings.is_empty(), "{:?}", clean.warnings);
    let first = clean.memory.replicas[0].first_group;
    assert_eq!(clean.memory.replicas[0].later_groups, Some(first));
    let leaky = run_with(
        &plan(2, 2, 2),
        &config,
        Mistakes {
            retain_activations: true,
            ..Mistakes::default()
        },
    )
    .unwrap();
    assert!(leaky.memory.peak_grows);
    let r0 = leaky.memory.replicas[0];
    assert!(r0.later_groups.unwrap().retained > r0.first_group.retained);
    assert!(
        leaky
            .warnings
            .iter()
            .any(|w| w.contains("release losses and activations"))
    );
}

#[test]
fn same_examples_on_every_replica_are_rejected() {
    let err = run_with(
        &plan(2, 2, 2),
        &small(16),
        Mistakes {
            same_shard: true,
            ..Mistakes::default()
        },
    )
    .unwrap_err();
    assert!(matches!(err, EngineError::Overlap(_)), "{err}");
}

// `accum::run::loss-scale`: loss scaling and non-finite attempts.

#[test]
fn fp16_overflow_skips_backs_off_and_keeps_params() {
    let mut config = small(16);
    config.precision.mode = PrecisionMode::Fp16;
    config.precision.loss_scale.init = 2f64.powi(40); // scaled gradients far above 65504
    config.schedule.total = Some("2 updates".parse().unwrap());
    let mut engine = Engine::new(plan(2, 2, 2), &config).unwrap();
    let before = engine.model().params().clone();
    let stats = engine.step(&mut RunOptions::default()).unwrap().unwrap();
    assert!(!stats.applied);
    assert_eq!(stats.loss_scale, 2f64.powi(40));
    assert_eq!(engine.loss_scale(), 2f64.powi(39));
    assert_eq!(
        engine.model().params(),
        &before,
        "a skipped attempt changes nothing"
    );
    assert_eq!(engine.counters().applied_updates, Updates::ZERO);
    assert_eq!(engine.counters().scheduler_steps, Updates::ZERO);
    let report = engine.run(&mut RunOptions::default()).unwrap();
    let skipped = report.counters.skipped_updates;
    assert!(
        skipped >= 10,
        "backs off until the gradients fit: {skipped}"
    );
    assert_eq!(report.counters.applied_updates, Updates::new(2));
    assert_eq!(report.counters.update_attempts, skipped + 2);
    let applied = report.updates.iter().find(|u| u.applied).unwrap();
    assert!(applied.loss_scale * applied.grad_norm < 65504.0 * 1e3);
    assert_ne!(engine.model().params(), &before);
}

#[test]
fn injected_fault_is_skipped_in_every_precision() {
    for mode in [
        PrecisionMode::Fp32,
        PrecisionMode::Bf16,
        PrecisionMode::Fp16,
    ] {
        let mut config = small(16);
        config.precision.mode = mode;
        config.schedule.total = Some("3 updates".parse().unwrap());
        let mut engine = Engine::new(plan(2, 2, 2), &config).unwrap();
        let mut options = RunOptions {
            faults: vec![Fault {
                attempt: 2,
                replica: 1,
                microbatch: 1,
            }],
            ..RunOptions::default()
        };
        engine.step(&mut options).unwrap();
        let after_first = engine.model().params().clone();
        let scale = engine.loss_scale();
        let second = engine.step(&mut options).unwrap().unwrap();
        assert!(!second.applied, "{mode}");
        assert_eq!(engine.model().params(), &after_first, "{mode}");
        let expected_scale = if mode == PrecisionMode::Fp16 {
            scale / 2.0
        } else {
            1.0
        };
        assert_eq!(engine.loss_scale(), expected_scale, "{mode}");
        let report = engine.run(&mut options).unwrap();
        assert_eq!(report.counters.skipped_updates, 1);
        assert_eq!(report.counters.update_attempts, 4);
        assert_eq!(report.counters.applied_updates, Updates::new(3));
        assert_eq!(report.loss_scaling, mode == PrecisionMode::Fp16);
        // The skipped attempt's infinite norm survives a JSON round trip as null.
        let json = report.to_json();
        assert!(json.contains("\"grad_norm\": null"), "{mode}");
        let back: RunReport = serde_json::from_str(&json).unwrap();
        assert!(back.updates[1].grad_norm.is_nan());
        assert!((back.updates[2].grad_norm - report.updates[2].grad_norm).abs() < 1e-12);
    }
}

// `accum::plan::partial-group`: the last partial group.

#[test]
fn partial_group_is_processed_with_its_real_denominator() {
    let mut config = small(10); // B = 8: one full group and 2 examples
    config.schedule.total = Some("2 updates".parse().unwrap());
    let mut engine = Engine::new(plan(2, 2, 2), &config).unwrap();
    let report = engine.run(&mut RunOptions::default()).unwrap();
    let last = &report.updates[1];
    assert!(last.partial);
    assert_eq!(last.examples, Examples::new(2));
    assert_eq!(last.microbatches, Microbatches::new(1));
    assert_eq!(last.denominator, last.tokens.get() as f64);
    let ids = engine.last_group_ids().to_vec();
    let tokens: u64 = ids
        .iter()
        .map(|&id| engine.dataset().examples()[id as usize].tokens.len() as u64)
        .sum();
    assert_eq!(last.tokens, Tokens::new(tokens));
    // Replica 1 had no microbatch in that group.
    assert_eq!(report.replicas[0].microbatches, Microbatches::new(3));
    assert_eq!(report.replicas[1].microbatches, Microbatches::new(2));
    assert!(report.dropped.is_empty());
}

#[test]
fn partial_group_dropped_with_ids_or_refused() {
    let mut config = small(10);
    config.data.last_group = LastGroup::Drop;
    config.schedule.total = Some("3 updates".parse().unwrap());
    let report = run(plan(2, 2, 2), &config).unwrap();
    assert!(
        report
            .updates
            .iter()
            .all(|u| !u.partial && u.examples == Examples::new(8))
    );
    assert_eq!(report.dropped.len(), 2, "epochs 0 and 1 each drop 2");
    assert!(report.dropped.iter().all(|d| d.ids.len() == 2));
    assert_eq!(report.counters.dropped_examples, Examples::new(4));
    // The dropped ids are exactly the ones not trained in that epoch.
    let epoch0: std::collections::BTreeSet<u64> = report.dropped[0].ids.iter().copied().collect();
    assert!(epoch0.iter().all(|&id| id < 10));

    config.data.last_group = LastGroup::Error;
    let err = Engine::new(plan(2, 2, 2), &config).unwrap_err();
    assert!(
        matches!(err, EngineError::Plan(PlanError::PartialGroup { .. })),
        "{err}"
    );
    assert!(
        err.to_string().contains("partial group of 2 examples"),
        "{err}"
    );

    config.data.last_group = LastGroup::Drop;
    config.data.examples = 6;
    let err = Engine::new(plan(2, 2, 2), &config).unwrap_err();
    assert!(
        matches!(
            err,
            EngineError::NotEnoughData {
                examples: 6,
                effective_batch: 8
            }
        ),
        "{err}"
    );
}

// Observer, log axis, stop flag.

#[derive(Default)]
struct Recorder {
    microbatches: Vec<MicrobatchEvent>,
    updates: u64,
    logs: Vec<(CurvePoint, LogAxis)>,
}

impl Observer for Recorder {
    fn on_microbatch(&mut self, event: &MicrobatchEvent) {
        self.microbatches.push(*event);
    }
    fn on_update(&mut self, _stats: &UpdateStats, _counters: &Counters) {
        self.updates += 1;
    }
    fn on_log(&mut self, point: &CurvePoint, axis: LogAxis) {
        self.logs.push((*point, axis));
    }
}

#[test]
fn observer_logs_in_the_declared_axis() {
    let mut config = small(32);
    config.schedule.total = Some("6 updates".parse().unwrap());
    config.log = LogSection {
        every: "2 updates".parse().unwrap(),
        axis: LogAxis::Tokens,
    };
    let mut recorder = Recorder::default();
    let mut engine = Engine::new(plan(2, 2, 2), &config).unwrap();
    let report = engine
        .run(&mut RunOptions {
            observers: vec![&mut recorder],
            ..RunOptions::default()
        })
        .unwrap();
    assert_eq!(recorder.updates, 6);
    assert_eq!(recorder.microbatches.len(), 24);
    assert_eq!(recorder.logs.len(), 3);
    assert!(
        recorder
            .logs
            .iter()
            .all(|(_, axis)| *axis == LogAxis::Tokens)
    );
    let xs: Vec<u64> = recorder.logs.iter().map(|(p, _)| p.x).collect();
    let tokens_after: Vec<u64> = report
        .updates
        .iter()
        .scan(0, |acc, u| {
            *acc += u.tokens.get();
            Some(*acc)
        })
        .collect();
    assert_eq!(xs, vec![tokens_after[1], tokens_after[3], tokens_after[5]]);
    assert_eq!(report.loss_curve.points.len(), 3);
    assert_eq!(report.loss_curve.axis, LogAxis::Tokens);

    // Examples as the interval unit.
    config.log.every = "16 examples".parse().unwrap();
    config.log.axis = LogAxis::Examples;
    let report = run(plan(2, 2, 2), &config).unwrap();
    let xs: Vec<u64> = report.loss_curve.points.iter().map(|p| p.x).collect();
    assert_eq!(xs, vec![16, 32, 48]);
}

#[test]
fn stop_flag_ends_at_a_group_boundary() {
    let stop = AtomicBool::new(true);
    let mut engine = Engine::new(plan(2, 2, 1), &small(16)).unwrap();
    let report = engine
        .run(&mut RunOptions {
            stop: Some(&stop),
            ..RunOptions::default()
        })
        .unwrap();
    assert!(report.stopped_early);
    assert_eq!(report.counters.update_attempts, 0);
}

#[test]
fn settings_are_validated_all_at_once() {
    let mut config = small(0);
    config.data.min_len = 5;
    config.data.max_len = 4;
    config.loss.ignore_index = 3;
    config.optimizer.betas = [0.9, 1.0];
    config.precision.loss_scale.backoff_factor = 2.0;
    let err = Engine::new(plan(1, 1, 1), &config).unwrap_err();
    let EngineError::Invalid(errors) = &err else {
        panic!("{err}")
    };
    let keys: Vec<&str> = errors.iter().map(|e| e.key).collect();
    assert_eq!(
        keys,
        [
            "data.examples",
            "data.max_len",
            "loss.ignore_index",
            "optimizer.betas",
            "precision.loss_scale.backoff_factor"
        ]
    );
    assert!(err.to_string().contains("use max_len ≥ 5"), "{err}");

    let mut config = small(1 << 40);
    config.model.hidden = 1 << 30;
    let err = Engine::new(plan(1, 1, 1), &config).unwrap_err();
    let EngineError::Invalid(errors) = &err else {
        panic!("{err}")
    };
    let keys: Vec<&str> = errors.iter().map(|e| e.key).collect();
    assert_eq!(keys, ["data.examples", "model.hidden"], "{err}");

    let mut config = small(16);
    config.schedule.warmup = "10 updates".parse().unwrap();
    let err = Engine::new(plan(1, 1, 1), &config).unwrap_err();
    assert!(
        matches!(
            err,
            EngineError::Schedule(ScheduleError::WarmupTooLong { compared: None, .. })
        ),
        "{err}"
    );
}

#[test]
fn token_spans_resolve_through_the_measured_data() {
    let mut config = small(32);
    let tokens = Dataset::synthetic(&config.data).supervised_tokens(-100);
    // One epoch of tokens is 4 updates of B = 8.
    config.schedule.total = Some(Span::new(tokens, UnitKind::Token));
    let engine = Engine::new(plan(2, 2, 2), &config).unwrap();
    assert_eq!(engine.total_updates(), Updates::new(4));
}

#[test]
fn activation_memory_falls_with_the_micro_batch() {
    let peak = |m: u64, a: u64| {
        let report = run(plan(m, a, 1), &small(16)).unwrap();
        (
            report.memory.peak_activation_bytes,
            report.memory.replicas[0],
        )
    };
    let (big, peaks) = peak(8, 1);
    let (small_m, _) = peak(2, 4);
    assert!(small_m * 3 < big, "{small_m} vs {big}");
    // The first group includes the first update's optimizer state (AdamW: 2 × params).
    assert_eq!(
        peaks.first_group.optimizer_state,
        2 * peaks.first_group.params
    );
}

#[test]
fn dump_files_are_readable() {
    let dir = std::env::temp_dir().join(format!("accum-engine-dump-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut config = small(10);
    config.schedule.total = Some("2 updates".parse().unwrap());
    let mut engine = Engine::new(plan(2, 2, 2), &config).unwrap();
    let mut dump = DumpWriter::create(&dir, &engine).unwrap();
    engine
        .run(&mut RunOptions {
            observers: vec![&mut dump],
            ..RunOptions::default()
        })
        .unwrap();
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["format"], "accum-dump/1");
    assert_eq!(manifest["updates"], 2);
    assert_eq!(
        manifest["plan"],
        serde_json::json!({"micro_batch": 2, "accumulation": 2, "replicas": 2, "seq_len": null})
    );
    assert_eq!(manifest["model"]["vocab"], 16);
    assert_eq!(manifest["params"], serde_json::json!(TOKEN_MLP_PARAMS));
    assert_eq!(manifest["optimizer"]["momentum"], serde_json::Value::Null);
    assert_eq!(manifest["loss"]["ignore_index"], -100);
    let header = |path: &std::path::Path| {
        let bytes = std::fs::read(path).unwrap();
        assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00", "{}", path.display());
        let len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        (
            String::from_utf8(bytes[10..10 + len].to_vec()).unwrap(),
            bytes.len() - 10 - len,
        )
    };
    let (h, data) = header(&dir.join("init/embed.npy"));
    assert!(
        h.contains("'descr': '<f4'") && h.contains("'shape': (16, 8)"),
        "{h}"
    );
    assert_eq!(data, 16 * 8 * 4);
    let u1 = dir.join("update-000001");
    for f in [
        "r0-m0-tokens.npy",
        "r0-m1-labels.npy",
        "r1-m1-ids.npy",
        "grad/w2.npy",
        "param/b1.npy",
        "stats.json",
    ] {
        assert!(u1.join(f).is_file(), "{f}");
    }
    let (h, data) = header(&u1.join("r1-m1-ids.npy"));
    assert!(
        h.contains("'descr': '<i8'") && h.contains("'shape': (2,)"),
        "{h}"
    );
    assert_eq!(data, 16);
    let (h, _) = header(&u1.join("r0-m0-labels.npy"));
    assert!(h.contains("'shape': (2, "), "{h}");
    // Partial group: one microbatch on replica 0 only.
    let u2 = dir.join("update-000002");
    assert!(u2.join("r0-m0-tokens.npy").is_file());
    assert!(!u2.join("r1-m0-tokens.npy").exists());
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(u2.join("stats.json")).unwrap()).unwrap();
    assert_eq!(stats["microbatches"], 1);
    assert_eq!(stats["applied"], true);
    for key in ["loss", "denominator", "lr", "grad_norm", "loss_scale"] {
        assert!(stats[key].is_number(), "{key}");
    }
    let leftovers = std::fs::read_dir(&u1)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "tmp")
        })
        .count();
    assert_eq!(leftovers, 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A user model (here a wrapper) that fails on one example, like a corrupt
/// record: the replica's panic aborts the reduction, so the other replica
/// does not wait forever.
pub(super) struct FailsOn {
    pub(super) inner: TokenMlp,
    pub(super) id: u64,
}

impl Model for FailsOn {
    type Workspace = crate::model::MlpWorkspace;

    fn kind(&self) -> &'static str {
        "fails_on"
    }
    fn params(&self) -> &Tensors {
        self.inner.params()
    }
    fn params_mut(&mut self) -> &mut Tensors {
        self.inner.params_mut()
    }
    fn workspace(&self, max_positions: usize) -> Self::Workspace {
        self.inner.workspace(max_positions)
    }
    fn workspace_bytes(&self, workspace: &Self::Workspace) -> usize {
        self.inner.workspace_bytes(workspace)
    }
    fn forward_backward(
        &self,
        batch: &PackedMicrobatch,
        scale: &GradScale,
        grads: &mut Tensors,
        workspace: &mut Self::Workspace,
    ) -> LossSums {
        assert!(
            !batch.ids.contains(&self.id),
            "example {} is corrupt",
            self.id
        );
        self.inner.forward_backward(batch, scale, grads, workspace)
    }
    fn describe(&self) -> serde_json::Value {
        self.inner.describe()
    }
}

#[test]
fn a_failing_replica_aborts_the_group_instead_of_hanging() {
    let config = small(16);
    for d in [1, 2] {
        let data = Dataset::synthetic(&config.data);
        let model = FailsOn {
            inner: TokenMlp::new(16, 8, 16, 1),
            id: 3,
        };
        let mut engine = Engine::with_model(plan(2, 2, d), &config, model, data).unwrap();
        let err = engine.run(&mut RunOptions::default()).unwrap_err();
        match err {
            EngineError::MicrobatchFailed { message, .. } => {
                assert!(message.contains("example 3 is corrupt"), "{message}");
            }
            other => panic!("expected the replica's panic, got {other}"),
        }
    }
}

#[test]
fn plans_too_large_for_memory_are_refused_before_allocating() {
    let mut config = small(16);
    config.data.max_len = 4096;
    config.data.vocab = 256;
    config.model = ModelSection {
        hidden: 64,
        ffn: 256,
    };
    // m = 32, D = 64, L ≤ 4096: about 28 GiB of activations.
    let err = Engine::new(plan(32, 1, 64), &config).unwrap_err();
    assert!(
        matches!(err, EngineError::TooLarge { replicas: 64, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("lower micro_batch"), "{err}");
    let engine = Engine::new(plan(2, 2, 2), &small(16)).unwrap();
    assert_eq!(
        engine.span_in_updates(&"16 examples".parse().unwrap()),
        Ok(Updates::new(2))
    );
}

#[test]
fn clipping_bounds_the_applied_gradient() {
    let mut config = small(16);
    config.optimizer = OptimizerSection {
        kind: OptimizerKind::Sgd,
        lr: 1.0,
        momentum: 0.0,
        weight_decay: 0.0,
        clip_norm: Some(1e-3),
        ..OptimizerSection::default()
    };
    config.schedule.total = Some("1 update".parse().unwrap());
    let mut engine = Engine::new(plan(2, 2, 2), &config).unwrap();
    let before = engine.model().params().clone();
    let stats = engine.step(&mut RunOptions::default()).unwrap().unwrap();
    assert!(stats.clipped && stats.grad_norm > 1e-3, "{stats:?}");
    // SGD with lr 1: the parameter change is the clipped gradient.
    let mut delta = engine.model().params().clone();
    let mut neg = before;
    neg.scale(-1.0);
    delta.add_assign(&neg);
    assert!((delta.norm() - 1e-3).abs() < 1e-6, "{}", delta.norm());
}

#[test]
fn learning_rate_follows_applied_updates() {
    let mut config = small(32);
    config.optimizer.lr = 0.1;
    config.schedule = ScheduleSection {
        kind: ScheduleKind::Linear,
        warmup: "2 updates".parse().unwrap(),
        total: Some("4 updates".parse().unwrap()),
    };
    let report = run(plan(2, 2, 2), &config).unwrap();
    let lrs: Vec<f64> = report.updates.iter().map(|u| u.lr).collect();
    let want = [0.0, 0.05, 0.1, 0.05];
    assert!(
        lrs.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-12),
        "{lrs:?}"
    );
    assert_eq!(report.warmup_updates, Updates::new(2));
    assert_eq!(report.counters.scheduler_steps, Updates::new(4));
}

#[test]
fn equivalence_holds_in_every_precision_mode() {
    for mode in [
        PrecisionMode::Fp32,
        PrecisionMode::Bf16,
        PrecisionMode::Fp16,
    ] {
        let mut config = small(24);
        config.precision.mode = mode;
        let report = verify::equivalence(&plan(2, 3, 2), &config, Tolerance::default()).unwrap();
        assert!(report.passed, "{mode}: {report:#?}");
        assert_eq!(report.checks.len(), 7);
        assert!(
            report.max_rel_grad_diff < 1e-5,
            "{mode}: {}",
            report.max_rel_grad_diff
        );
    }
}

#[test]
fn verify_fails_when_the_runs_differ() {
    // Not bit-exact: a zero tolerance fails on the summation order alone.
    let strict = Tolerance {
        rtol: 0.0,
        atol: 0.0,
        param_rtol: 0.0,
    };
    let report = verify::equivalence(&plan(2, 3, 2), &small(24), strict).unwrap();
    assert!(!report.passed);
    assert!(report.max_abs_grad_diff > 0.0);
    let failed: Vec<&str> = report
        .checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| c.name.as_str())
        .collect();
    assert!(failed.contains(&"gradient equivalence"), "{failed:?}");

    // Different initial weights: the equivalence checks fail, the bookkeeping ones pass.
    let config = small(24);
    let data = Dataset::synthetic(&config.data);
    let acc = Engine::with_model(
        plan(2, 3, 2),
        &config,
        TokenMlp::new(16, 8, 16, 1),
        data.clone(),
    )
    .unwrap();
    let big =
        Engine::with_model(plan(12, 1, 1), &config, TokenMlp::new(16, 8, 16, 2), data).unwrap();
    let report = compare(acc, big, Tolerance::default(), &mut RunOptions::default()).unwrap();
    let status: Vec<(&str, bool)> = report
        .checks
        .iter()
        .map(|c| (c.name.as_str(), c.passed))
        .collect();
    assert_eq!(
        status,
        [
            ("same examples", true),
            ("weighted loss", false),
            ("finite gradients", true),
            ("group boundary", true),
            ("update count", true),
            ("gradient equivalence", false),
            ("parameter equivalence", false),
        ]
    );
}

/// A run of `updates` updates of a tiny model (B = 2 of 3 examples, the
/// third dropped every epoch), on one thread.
fn tiny_run(updates: u64) -> RunReport {
    let config = EngineConfig {
        data: DataSection {
            examples: 3,
            min_len: 2,
            max_len: 3,
            vocab: 4,
            seed: 1,
            last_group: LastGroup::Drop,
        },
        model: ModelSection { hidden: 2, ffn: 2 },
        schedule: ScheduleSection {
            kind: ScheduleKind::Constant,
            warmup: "0 updates".parse().unwrap(),
            total: Some(format!("{updates} updates").parse().unwrap()),
        },
        ..EngineConfig::default()
    };
    Engine::new(plan(1, 2, 1), &config)
        .unwrap()
        .with_threads(1)
        .run(&mut RunOptions::default())
        .unwrap()
}

#[test]
fn long_runs_keep_a_bounded_report() {
    let short = tiny_run(10_000);
    let long = tiny_run(100_000);
    for (report, updates) in [(&short, 10_000u64), (&long, 100_000)] {
        assert_eq!(report.counters.applied_updates.get(), updates);
        // Kept: bounded, evenly spread, the first attempt always kept.
        assert!(report.updates.len() <= crate::report::KEPT_UPDATES);
        assert!(report.updates.len() > crate::report::KEPT_UPDATES / 2);
        assert_eq!(report.updates[0].attempt, 1);
        let stride = report.updates_stride;
        assert!(
            report
                .updates
                .windows(2)
                .all(|w| w[1].attempt - w[0].attempt == stride)
        );
        assert!(report.loss_curve.points.len() <= crate::report::CURVE_CAPACITY);
        assert_eq!(
            report.loss_curve.points.len() as u64 * report.loss_curve.stride,
            updates.next_multiple_of(report.loss_curve.stride)
        );
        assert_eq!(report.dropped.len(), group::MAX_DROPPED_GROUPS);
        // Every epoch but the last drops its third example (the last one's
        // is dropped when a next group is taken).
        assert_eq!(report.counters.dropped_examples.get(), updates - 1);
        // Summaries stay exact.
        assert_eq!(report.summary.loss.count, updates);
    }
    assert_eq!(long.updates_stride, 128);
    assert_eq!(short.updates_stride, 16);
    // The report does not grow with the run: its kept entries stay between
    // half and all of the capacities, so its size stays under one bound
    // (about 330 bytes per kept update, 40 per curve point) whatever the
    // length.
    let bound = crate::report::KEPT_UPDATES * 330 + crate::report::CURVE_CAPACITY * 40 + 20_000;
    for report in [&short, &long] {
        let len = report.to_json().len();
        assert!(
            len <= bound,
            "{len} bytes > {bound} after {:?}",
            report.counters.applied_updates
        );
    }
}

#[test]
fn runs_are_identical_for_any_number_of_threads() {
    let mut config = small(40);
    config.data.max_len = 30;
    config.schedule.total = Some("6 updates".parse().unwrap());
    for p in [plan(4, 3, 1), plan(3, 2, 2)] {
        let run = |threads: usize| {
            let mut engine = Engine::new(p, &config).unwrap().with_threads(threads);
            let report = engine.run(&mut RunOptions::default()).unwrap();
            (report, engine.model().params().clone())
        };
        let (one, params) = run(1);
        for threads in [2, 3] {
            let (many, many_params) = run(threads);
            assert_eq!(many_params, params, "{p:?} on {threads} threads");
            assert_eq!(many.updates, one.updates, "{p:?} on {threads} threads");
        }
    }
}

/// A run of `p` on a pool of at most `cores` threads, `threads` per
/// replica: its report, parameters and pool size.
fn run_on_cores(
    p: Plan,
    config: &EngineConfig,
    cores: usize,
    threads: usize,
) -> (RunReport, Tensors, usize) {
    let mut engine = Engine::new(p, config).unwrap().with_threads(threads);
    engine.cores = cores;
    let report = engine.run(&mut RunOptions::default()).unwrap();
    (report, engine.model().params().clone(), engine.pool_size())
}

#[test]
fn hundreds_of_replicas_run_on_a_pool_of_cores_and_equal_the_one_thread_run() {
    // D = 512 and D = 2048 (m = A = 1): the replicas are work items on at
    // most `cores` threads, and the sums over replicas are in rank order
    // whatever the threads, so every pool gives the one-thread run's bits.
    for (p, examples) in [(plan(2, 2, 512), 2_100), (plan(1, 1, 2048), 2_100)] {
        let mut config = small_for(examples, "3 updates");
        config.data.max_len = 6;
        let (reference, params, one) = run_on_cores(p, &config, 1, 1);
        assert_eq!(one, 1, "one core: no pool, the replicas in turn");
        assert_eq!(reference.counters.applied_updates.get(), 3);
        assert_eq!(reference.replicas.len(), p.replicas() as usize);
        for cores in [2, 3, 8] {
            let (report, many_params, size) = run_on_cores(p, &config, cores, 1);
            assert_eq!(size, cores, "{p:?}: a pool of the cores, not of D");
            assert_eq!(many_params, params, "{p:?} on {cores} threads");
            assert_eq!(report.updates, reference.updates, "{p:?} on {cores}");
            assert_eq!(report.replicas, reference.replicas, "{p:?} on {cores}");
        }
    }
}

#[test]
fn the_pool_never_has_more_threads_than_cores_or_work() {
    for (d, threads, cores, size) in [
        (1, 1, 8, 1),
        (2, 3, 8, 6),
        (4, 4, 8, 8),
        (1000, 1, 2, 2),
        (1000, 64, 4, 4),
    ] {
        let mut engine = Engine::new(plan(1, 1, d), &small_for(d * 2, "1 updates"))
            .unwrap()
            .with_threads(threads);
        engine.cores = cores;
        assert_eq!(
            engine.pool_size(),
            size,
            "D {d}, T {threads}, {cores} cores"
        );
    }
}
