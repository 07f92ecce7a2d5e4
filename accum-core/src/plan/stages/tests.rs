use proptest::prelude::*;

use super::*;
use crate::units::UnitKind;

fn plan(m: u64, a: u64, d: u64) -> Plan {
    Plan::new(m, a, d).expect("valid plan")
}

fn span(text: &str) -> Span {
    text.parse().expect("valid span")
}

/// Megatron-LM's ramp-up rule, one iteration at a time, written from
/// `RampupBatchsizeNumMicroBatchesCalculator.__init__` and `.update` in
/// `megatron/core/num_microbatches_calculator.py`: the batch for
/// `consumed_samples` before an iteration, and the microbatches per replica.
struct MegatronRamp {
    start: u64,
    increment: u64,
    samples: u64,
    global: u64,
    micro_times_dp: u64,
}

impl MegatronRamp {
    fn batch(&self, consumed: u64) -> u64 {
        let increments = (self.global - self.start) / self.increment;
        let per_increment = self.samples as f64 / increments as f64;
        if consumed > self.samples {
            self.global
        } else {
            let steps = (consumed as f64 / per_increment) as u64;
            self.start + steps * self.increment
        }
    }

    fn microbatches(&self, consumed: u64) -> u64 {
        self.batch(consumed) / self.micro_times_dp
    }

    /// The batch of each of the first `updates` iterations.
    fn batches(&self, updates: usize) -> Vec<u64> {
        let mut consumed = 0;
        (0..updates)
            .map(|_| {
                let batch = self.batch(consumed);
                consumed += batch;
                batch
            })
            .collect()
    }
}

fn staged_batches(staged: &StagedPlan, updates: usize) -> Vec<u64> {
    (0..updates as u64)
        .map(|u| staged.plan_at(Updates::new(u)).effective_batch().get())
        .collect()
}

#[test]
fn declared_stages_resolve_to_update_indices() {
    let base = plan(4, 1, 2).with_seq_len(1000).expect("fits");
    let staged = StagedPlan::from_specs(
        &base,
        &[
            StageSpec::global_batch(32).until(span("1.6M tokens")),
            StageSpec::accumulation(8).until(span("9600 examples")),
            StageSpec::global_batch(128),
        ],
    )
    .expect("exact stages");
    let stages = staged.stages();
    assert_eq!(stages.len(), 3);
    assert_eq!(
        stages
            .iter()
            .map(|s| s.plan().accumulation())
            .collect::<Vec<_>>(),
        [4, 8, 16]
    );
    assert_eq!(stages[0].updates(), Some(Updates::new(50)));
    // 1,600 examples after stage 1; (9,600 − 1,600) / 64 = 125 updates.
    assert_eq!(stages[1].start(), Updates::new(50));
    assert_eq!(stages[1].updates(), Some(Updates::new(125)));
    assert_eq!(stages[2].start(), Updates::new(175));
    assert_eq!(stages[2].end(), None);
    assert_eq!(stages[2].examples_before(), Examples::new(9600));
    assert_eq!(stages[2].tokens_before(), Some(Tokens::new(9_600_000)));
    assert_eq!(staged.final_plan().effective_batch().get(), 128);
    assert_eq!(staged.stage_index_at(Updates::new(49)), 0);
    assert_eq!(staged.stage_index_at(Updates::new(50)), 1);
    assert_eq!(staged.stage_index_at(Updates::new(1_000_000)), 2);
}

#[test]
fn spans_convert_through_the_stages() {
    let base = plan(4, 1, 2).with_seq_len(1000).expect("fits");
    let staged = StagedPlan::from_specs(
        &base,
        &[
            StageSpec::global_batch(32).until(span("50 updates")),
            StageSpec::global_batch(64).until(span("100 updates")),
            StageSpec::global_batch(128),
        ],
    )
    .expect("exact stages");
    // A warmup of 2,000 "steps" (updates) is 1.6M + 3.2M + 1,900 × 128,000 tokens.
    assert_eq!(
        staged.tokens_at(Updates::new(2000)).expect("fits").get(),
        1_600_000 + 3_200_000 + 1900 * 128_000
    );
    // Microbatches per replica: 50 × 4 + 50 × 8 + 10 × 16.
    assert_eq!(
        staged.consumed(Updates::new(110), UnitKind::Microbatch),
        Ok(200 + 400 + 160)
    );
    assert_eq!(
        staged.to_updates(4800 + 10 * 128 + 1, UnitKind::Example, Rounding::Up),
        Ok(Updates::new(111))
    );
    assert_eq!(
        staged.to_updates(4800 + 10 * 128 + 1, UnitKind::Example, Rounding::Down),
        Ok(Updates::new(110))
    );
    let err = staged
        .to_updates(4800 + 10 * 128 + 1, UnitKind::Example, Rounding::Exact)
        .unwrap_err();
    assert_eq!(
        err,
        PlanError::NotWholeUpdates {
            value: 6081,
            unit: UnitKind::Example,
            per_update: 128
        }
    );
    assert_eq!(
        staged.convert(
            1_600_000,
            UnitKind::Token,
            UnitKind::Example,
            Rounding::Exact
        ),
        Ok(1600)
    );
}

#[test]
fn declared_stages_are_checked_as_the_engines_check_them() {
    let base = plan(4, 1, 2);
    let cases: [(&[StageSpec], StageError); 6] = [
        (
            &[
                StageSpec::global_batch(36).until(span("10 updates")),
                StageSpec::global_batch(64),
            ],
            StageError::NotMultiple {
                stage: 1,
                what: "global_batch",
                value: 36,
                micro_batch: 4,
                replicas: 2,
            },
        ),
        (
            &[StageSpec::global_batch(32), StageSpec::global_batch(64)],
            StageError::MissingUntil { stage: 1 },
        ),
        (
            &[StageSpec::global_batch(32).until(span("10 updates"))],
            StageError::LastUntil { stage: 1 },
        ),
        (
            &[
                StageSpec::global_batch(32).until(span("10 updates")),
                StageSpec::global_batch(64).until(span("10 updates")),
                StageSpec::global_batch(128),
            ],
            StageError::NotOrdered {
                stage: 2,
                until: span("10 updates"),
                previous: 10,
            },
        ),
        (
            &[
                StageSpec::global_batch(32).until(span("1000 examples")),
                StageSpec::global_batch(64),
            ],
            StageError::NotExact {
                stage: 1,
                until: span("1000 examples"),
                start: 0,
                per_update: 32,
            },
        ),
        (
            &[StageSpec {
                global_batch: Some(32),
                accumulation: Some(4),
                until: None,
            }],
            StageError::BatchNotGiven {
                stage: 1,
                both: true,
            },
        ),
    ];
    for (specs, expected) in cases {
        assert_eq!(StagedPlan::from_specs(&base, specs), Err(expected));
    }
}

#[test]
fn errors_name_the_nearest_exact_values() {
    let base = plan(4, 1, 2);
    let err = StagedPlan::from_specs(
        &base,
        &[
            StageSpec::global_batch(32).until(span("1000 examples")),
            StageSpec::global_batch(64),
        ],
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "stage 1 ends at 1k examples, which is not a whole number of its updates: it starts at 0 examples and one update is 32 examples; use until = \"992 examples\" or \"1024 examples\""
    );
    let err = StagedPlan::from_specs(&base, &[StageSpec::global_batch(36)]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "stage 1: global_batch 36 is not a multiple of micro_batch 4 × replicas 2 = 8; use 32 (accumulation 4) or 40 (accumulation 5)"
    );
    let tokens = StagedPlan::from_specs(
        &base,
        &[
            StageSpec::global_batch(32).until(span("1M tokens")),
            StageSpec::global_batch(64),
        ],
    )
    .unwrap_err();
    assert!(matches!(
        tokens,
        StageError::Plan {
            stage: 1,
            error: PlanError::NeedsSeqLen { .. }
        }
    ));
}

#[test]
fn a_linear_ramp_follows_megatrons_calculator() {
    // Megatron-LM's own docstring example: --rampup-batch-size 16 8 300000,
    // --global-batch-size 1024: 126 increments of about 2,380.95 samples.
    // With m = 1 and D = 8 every batch on the way is a multiple of m·D.
    let base = plan(1, 128, 8);
    let ramp = LinearRamp {
        start: 16,
        increment: 8,
        over: span("300000 examples"),
    };
    let staged = StagedPlan::linear(&base, &ramp).expect("valid ramp");
    let megatron = MegatronRamp {
        start: 16,
        increment: 8,
        samples: 300_000,
        global: 1024,
        micro_times_dp: 8,
    };
    let n = 2000;
    assert_eq!(staged_batches(&staged, n), megatron.batches(n));
    assert_eq!(staged.stages().len(), 127);
    assert_eq!(staged.final_plan().effective_batch().get(), 1024);
    // Batch and microbatches per consumed-sample count, from the rule itself.
    for (consumed, batch, microbatches) in [
        (0, 16, 2),
        (2380, 16, 2),
        (2381, 24, 3),
        (4761, 24, 3),
        (4762, 32, 4),
        (150_000, 16 + 63 * 8, 65),
        (299_999, 1016, 127),
        (300_000, 1024, 128),
        (300_001, 1024, 128),
        (10_000_000, 1024, 128),
    ] {
        assert_eq!(megatron.batch(consumed), batch, "batch at {consumed}");
        assert_eq!(megatron.microbatches(consumed), microbatches);
        // The staged plan agrees at the update that starts with `consumed` or
        // the last one before it.
        let updates = staged
            .to_updates(consumed, UnitKind::Example, Rounding::Down)
            .expect("fits");
        let before = staged.examples_at(updates).expect("fits").get();
        assert_eq!(
            staged.plan_at(updates).effective_batch().get(),
            megatron.batch(before)
        );
    }
}

#[test]
fn a_ramp_is_refused_where_megatron_refuses_it() {
    let base = plan(2, 16, 4); // m·D = 8, B = 128
    let ramp = |start, increment| LinearRamp {
        start,
        increment,
        over: span("10k examples"),
    };
    assert_eq!(
        StagedPlan::linear(&base, &ramp(12, 8)),
        Err(StageError::RampIncrement {
            start: 12,
            end: 128,
            increment: 8
        })
    );
    assert_eq!(
        StagedPlan::linear(&base, &ramp(20, 12)),
        Err(StageError::NotMultiple {
            stage: 0,
            what: "start",
            value: 20,
            micro_batch: 2,
            replicas: 4
        })
    );
    assert_eq!(
        StagedPlan::linear(&base, &ramp(256, 8)),
        Err(StageError::RampShrinks {
            start: 256,
            end: 128
        })
    );
    // Megatron divides by zero increments; accum says there is no ramp.
    assert_eq!(
        StagedPlan::linear(&base, &ramp(128, 8)),
        Err(StageError::RampEmpty { batch: 128 })
    );
}

#[test]
fn a_ramp_over_tokens_or_updates_uses_the_same_rule() {
    let base = plan(2, 8, 2).with_seq_len(100).expect("fits"); // B = 32
    let tokens = StagedPlan::linear(
        &base,
        &LinearRamp {
            start: 4,
            increment: 4,
            over: span("70k tokens"),
        },
    )
    .expect("valid ramp");
    let examples = StagedPlan::linear(
        &base,
        &LinearRamp {
            start: 4,
            increment: 4,
            over: span("700 examples"),
        },
    )
    .expect("valid ramp");
    assert_eq!(staged_batches(&tokens, 300), staged_batches(&examples, 300));
    let updates = StagedPlan::linear(
        &base,
        &LinearRamp {
            start: 4,
            increment: 4,
            over: span("70 updates"),
        },
    )
    .expect("valid ramp");
    // 7 increments of 10 updates each.
    let batches = staged_batches(&updates, 80);
    assert_eq!(batches[0..10], [4; 10]);
    assert_eq!(batches[10..20], [8; 10]);
    assert_eq!(batches[69], 28);
    // At exactly the ramp's length the rule gives the final batch.
    assert_eq!(batches[70], 32);
}

#[test]
fn a_constant_plan_is_one_stage() {
    let p = plan(2, 8, 2).with_seq_len(128).expect("fits");
    let staged = StagedPlan::from(p);
    assert!(staged.is_constant());
    for value in [0, 1, 31, 32, 33, 1000] {
        for unit in UnitKind::ALL {
            for rounding in [Rounding::Up, Rounding::Down, Rounding::Exact] {
                assert_eq!(
                    staged.to_updates(value, unit, rounding),
                    p.to_updates(value, unit, rounding),
                    "{value} {unit} {rounding:?}"
                );
            }
        }
    }
}

fn any_specs() -> impl Strategy<Value = (Plan, Vec<StageSpec>)> {
    (
        1u64..=8,
        1u64..=4,
        proptest::option::of(1u64..=512),
        proptest::collection::vec((1u64..=16, 1u64..=50, 0usize..4), 1..6),
    )
        .prop_map(|(m, d, len, raw)| {
            let base = Plan::new(m, 1, d).expect("small");
            let base = match len {
                Some(len) => base.with_seq_len(len).expect("small"),
                None => base,
            };
            // Build exact boundaries in a chosen unit from update counts.
            let mut specs = Vec::new();
            let mut examples = 0u64;
            let mut updates = 0u64;
            let mut micro = 0u64;
            let count = raw.len();
            for (i, (a, n, unit)) in raw.into_iter().enumerate() {
                let batch = m * a * d;
                updates += n;
                examples += n * batch;
                micro += n * a;
                let spec = if a % 2 == 0 {
                    StageSpec::accumulation(a)
                } else {
                    StageSpec::global_batch(batch)
                };
                if i + 1 == count {
                    specs.push(spec);
                    break;
                }
                let until = match (unit, len) {
                    (0, _) => Span::new(updates, UnitKind::Update),
                    (1, _) => Span::new(examples, UnitKind::Example),
                    (2, _) => Span::new(micro, UnitKind::Microbatch),
                    (_, Some(len)) => Span::new(examples * len, UnitKind::Token),
                    (_, None) => Span::new(examples, UnitKind::Example),
                };
                specs.push(spec.until(until));
            }
            (base, specs)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Σ over stages of B × updates = examples consumed.
    #[test]
    fn examples_are_the_sum_of_batch_times_updates((base, specs) in any_specs(), extra in 0u64..100) {
        let staged = StagedPlan::from_specs(&base, &specs).expect("exact by construction");
        let stages = staged.stages();
        let last = stages.last().expect("one stage").start();
        let total = Updates::new(last.get() + extra);
        let mut sum = 0u64;
        for stage in stages {
            let n = stage.updates().unwrap_or(Updates::new(extra)).get();
            sum += stage.plan().effective_batch().get() * n;
        }
        prop_assert_eq!(staged.examples_at(total).expect("fits").get(), sum);
    }

    /// A span converted to updates and back is the same span when exact, and
    /// otherwise an error (exact) or a neighbour (up, down) that brackets it.
    #[test]
    fn spans_round_trip_or_report_rounding((base, specs) in any_specs(), value in 0u64..200_000, unit in 0usize..4) {
        let staged = StagedPlan::from_specs(&base, &specs).expect("exact by construction");
        let unit = UnitKind::ALL[unit];
        match staged.to_updates(value, unit, Rounding::Exact) {
            Ok(updates) => prop_assert_eq!(staged.consumed(updates, unit), Ok(value)),
            Err(PlanError::NotWholeUpdates { value: v, unit: u, .. }) => {
                prop_assert_eq!((v, u), (value, unit));
                let down = staged.to_updates(value, unit, Rounding::Down).expect("down");
                let up = staged.to_updates(value, unit, Rounding::Up).expect("up");
                prop_assert_eq!(up.get(), down.get() + 1);
                prop_assert!(staged.consumed(down, unit).expect("fits") < value);
                prop_assert!(staged.consumed(up, unit).expect("fits") > value);
            }
            Err(PlanError::NeedsSeqLen { .. }) => prop_assert!(base.seq_len().is_none()),
            Err(other) => prop_assert!(false, "unexpected {other}"),
        }
    }

    /// A warmup defined in tokens ends at the same token count whatever the
    /// stages, when the stages allow it to end exactly.
    #[test]
    fn a_token_warmup_ends_at_the_same_tokens_for_any_stages((base, specs) in any_specs(), warmup in 1u64..100_000) {
        let Some(len) = base.seq_len() else { return Ok(()); };
        let staged = StagedPlan::from_specs(&base, &specs).expect("exact by construction");
        let tokens = warmup * len;
        let up = staged.to_updates(tokens, UnitKind::Token, Rounding::Up).expect("fits");
        let reached = staged.tokens_at(up).expect("fits").get();
        // The warmup ends in the update that crosses its token count, never
        // a whole update later, whatever the batch of that update.
        prop_assert!(reached >= tokens);
        let before = staged.tokens_at(up.saturating_sub(Updates::new(1))).expect("fits").get();
        prop_assert!(up.is_zero() || before < tokens);
    }

    /// The stepped ramp equals Megatron-LM's rule applied one iteration at a time.
    #[test]
    fn a_linear_ramp_equals_megatron_per_iteration(
        m in 1u64..=4, d in 1u64..=4, start_k in 1u64..=8, inc_k in 1u64..=8, steps in 1u64..=40,
        samples in 1u64..=20_000,
    ) {
        let step = m * d;
        let start = start_k * step;
        let increment = inc_k * step;
        let global = start + steps * increment;
        let base = Plan::new(m, global / step, d).expect("small");
        let ramp = LinearRamp { start, increment, over: Span::new(samples, UnitKind::Example) };
        let staged = StagedPlan::linear(&base, &ramp).expect("valid");
        let megatron = MegatronRamp { start, increment, samples, global, micro_times_dp: step };
        let n = 400;
        prop_assert_eq!(staged_batches(&staged, n), megatron.batches(n));
    }
}
