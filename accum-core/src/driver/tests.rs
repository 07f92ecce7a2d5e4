//! Tests of the loop driver: the walk (every example once per epoch, or as
//! the policy says), denominators against a recount, exact intervals, the
//! schedule stepping only on applied updates, and a loop driven by the
//! driver that reproduces accum's own engine on the reference model.

use std::collections::BTreeSet;

use proptest::prelude::*;

use super::*;
use crate::data::{Dataset, PackedMicrobatch, ShardCheck};
use crate::engine::{Engine, EngineConfig, Fault, RunOptions};
use crate::model::{GradScale, LossSums, Model, TokenMlp};
use crate::optim::Optimizer;
use crate::plan::StagedPlan;
use crate::replica::{InProcess, Reducer};
use crate::settings::{Normalization, ScheduleKind};
use crate::units::{Examples, Tokens, UnitKind};

/// Each rank's group denominator under every normalization, the ranks on
/// threads of their own so that the reducer's all-reduce meets them all.
pub(super) fn denominators_on_every_rank(
    groups: &mut [Group],
    tokens_of: fn(usize) -> u64,
    reducer: &InProcess,
) -> Vec<[Denominator; 3]> {
    std::thread::scope(|s| {
        let handles: Vec<_> = groups
            .iter_mut()
            .map(|g| {
                s.spawn(move || {
                    [
                        Normalization::PerToken,
                        Normalization::PerExample,
                        Normalization::Sum,
                    ]
                    .map(|norm| g.denominator(norm, tokens_of, reducer).unwrap())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

fn drivers(plan: Plan, n: usize, seed: u64, policy: LastGroup, total: u64) -> Vec<Driver> {
    (0..plan.replicas() as usize)
        .map(|rank| {
            Driver::builder(plan, n)
                .seed(seed)
                .last_group(policy)
                .rank(rank)
                .total(Updates::new(total))
                .build()
                .expect("valid driver")
        })
        .collect()
}

/// Supervised tokens of example `id` in the tests' made-up data: 0 for
/// every seventh example (fully ignored), else 1..=9.
fn tokens_of(id: usize) -> u64 {
    if id % 7 == 3 {
        0
    } else {
        (id as u64 * 5) % 9 + 1
    }
}

#[test]
fn epoch_orders_are_seeded_permutations_that_differ() {
    let a = epoch_order(50, 1, 0);
    let b = epoch_order(50, 1, 1);
    assert_ne!(a, b);
    assert_eq!(a, epoch_order(50, 1, 0));
    assert_ne!(a, epoch_order(50, 2, 0));
    let mut sorted = a.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..50).collect::<Vec<_>>());
}

#[test]
fn groups_go_round_robin_over_replicas() {
    let plan = Plan::new(2, 3, 2).unwrap(); // B = 12
    let order = epoch_order(50, 42, 0);
    let groups: Vec<GroupAssignment> = order
        .chunks(12)
        .map(|g| GroupAssignment::split(g, &plan))
        .collect();
    assert_eq!(groups.len(), 5); // 4 full + 2 examples
    for g in &groups[..4] {
        assert!(g.replicas.iter().all(|r| r.len() == 3));
        assert_eq!(g.examples(), 12);
    }
    // Microbatch j of the group goes to replica j mod D.
    assert_eq!(groups[0].replicas[0][0], order[0..2]);
    assert_eq!(groups[0].replicas[1][0], order[2..4]);
    assert_eq!(groups[0].replicas[0][1], order[4..6]);
    // `accum::plan::partial-group`: the last group has one microbatch of 2 on replica 0, none on replica 1.
    assert_eq!(groups[4].replicas[0].len(), 1);
    assert!(groups[4].replicas[1].is_empty());
    assert_eq!(groups[4].microbatches(), 1);
}

/// The engine draws through `Walk::next_into`: the draw's buffer is
/// reused from group to group and across epochs (no allocation), each draw
/// carries its plan, and dropped groups reach the closure with their epoch.
#[test]
fn drawing_into_a_draw_reuses_its_buffer() {
    let plan = Plan::new(2, 3, 2).unwrap(); // B = 12
    let mut walk = Walk::new(plan, 29, 3, LastGroup::Drop).unwrap();
    let mut draw = walk.empty_draw();
    let buffer = draw.members.as_ptr();
    let mut dropped = Vec::new();
    for _ in 0..7 {
        walk.next_into(&mut draw, Updates::ZERO, |epoch, positions| {
            dropped.push((epoch, positions.len()));
        })
        .unwrap();
        assert_eq!(draw.members.as_ptr(), buffer);
        assert_eq!((draw.members.len(), draw.partial), (12, false));
        assert_eq!(draw.plan, plan);
        assert_eq!(draw.epoch, walk.epoch());
    }
    // 29 = 2 × 12 + 5: the 5 left over are dropped once per epoch.
    assert_eq!(dropped, [(0, 5), (1, 5), (2, 5)]);
    assert_eq!(walk.epoch(), 3);
    assert_eq!(
        Walk::new(plan, 5, 3, LastGroup::Drop).unwrap_err(),
        DriverError::NotEnoughData {
            examples: 5,
            effective_batch: 12
        }
    );
}

#[test]
fn microbatches_carry_replica_index_and_sync_flag() {
    let plan = Plan::new(2, 3, 2).unwrap();
    let mut d = Driver::builder(plan, 14).rank(1).build().unwrap();
    let mut group = d.next_group().unwrap().unwrap();
    assert_eq!(group.plan(), &plan);
    let mine: Vec<_> = group.microbatches().collect();
    assert_eq!(mine.len(), 3);
    assert_eq!(
        mine.iter()
            .map(|mb| (mb.replica, mb.index, mb.sync))
            .collect::<Vec<_>>(),
        [(1, 0, false), (1, 1, false), (1, 2, true)]
    );
    assert_eq!(group.microbatches_of(0).count(), 3);
    assert_eq!(group.microbatches_of(5).count(), 0);
    group.count_all(tokens_of);
    d.finish(group, Outcome::Applied).unwrap();
    // 14 = 12 + 2: the partial group has one microbatch, on replica 0.
    let mut group = d.next_group().unwrap().unwrap();
    assert!(group.is_partial());
    assert_eq!(group.examples(), Examples::new(2));
    assert_eq!(group.microbatches().len(), 0, "rank 1 has nothing to run");
    let on_zero: Vec<_> = group.microbatches_of(0).collect();
    assert_eq!((on_zero.len(), on_zero[0].sync), (1, true));
    group.count_all(tokens_of);
    d.finish(group, Outcome::Applied).unwrap();
    assert!(d.finished(), "one epoch by default: {:?}", d.progress());
    assert_eq!(d.updates_per_epoch(), Updates::new(2));
    assert_eq!(d.next_group().unwrap(), None);
}

#[test]
fn building_refuses_what_cannot_run() {
    let plan = Plan::new(2, 2, 2).unwrap(); // B = 8
    let err = |b: DriverBuilder| b.build().unwrap_err();
    assert_eq!(err(Driver::builder(plan, 0)), DriverError::NoExamples);
    assert_eq!(
        err(Driver::builder(plan, 8).rank(2)),
        DriverError::Rank {
            rank: 2,
            replicas: 2
        }
    );
    let partial = err(Driver::builder(plan, 10).last_group(LastGroup::Error));
    assert!(
        matches!(partial, DriverError::Plan(PlanError::PartialGroup { .. })),
        "{partial:?}"
    );
    assert!(
        Driver::builder(plan, 16)
            .last_group(LastGroup::Error)
            .build()
            .is_ok()
    );
    let small = err(Driver::builder(plan, 5).last_group(LastGroup::Drop));
    assert_eq!(
        small,
        DriverError::NotEnoughData {
            examples: 5,
            effective_batch: 8
        }
    );
    assert!(
        small.to_string().contains("use at least 8 examples"),
        "{small}"
    );
}

#[test]
fn groups_are_finished_once_in_order_after_counting() {
    let plan = Plan::new(1, 2, 1).unwrap();
    let mut d = Driver::builder(plan, 6)
        .total(Updates::new(3))
        .build()
        .unwrap();
    let mut first = d.next_group().unwrap().unwrap();
    assert_eq!(d.next_group(), Err(DriverError::Unfinished { attempt: 1 }));
    let err = d.finish(first.clone(), Outcome::Applied).unwrap_err();
    assert_eq!(err, DriverError::NotCounted { attempt: 1 });
    assert!(err.to_string().contains("before the first backward pass"));
    first.count_all(tokens_of);
    d.finish(first.clone(), Outcome::Applied).unwrap();
    assert_eq!(
        d.finish(first, Outcome::Applied),
        Err(DriverError::NotOpen {
            attempt: 1,
            open: None
        })
    );
}

#[test]
fn the_reducer_must_join_every_replica() {
    let plan = Plan::new(1, 1, 2).unwrap();
    let mut d = Driver::builder(plan, 4).build().unwrap();
    let mut group = d.next_group().unwrap().unwrap();
    let err = group
        .denominator(Normalization::PerToken, tokens_of, &InProcess::new(1))
        .unwrap_err();
    assert_eq!(
        err,
        DriverError::ReducerSize {
            reducer: 1,
            replicas: 2
        }
    );
    assert!(err.to_string().contains("count_all"), "{err}");
    let reducer = InProcess::new(2);
    reducer.abort("replica 1 failed");
    let err = group.count(tokens_of, &reducer).unwrap_err();
    assert!(err.to_string().contains("replica 1 failed"), "{err}");
}

#[test]
fn every_fires_exactly_at_the_thresholds() {
    // One example per update, with known token counts: the token counter
    // walks 0, 5, 8, … and "every 10 tokens" fires where it passes 10, 20, ….
    let plan = Plan::new(1, 1, 1).unwrap();
    let n = 40;
    let mut d = Driver::builder(plan, n)
        .total(Updates::new(40))
        .build()
        .unwrap();
    let every_tokens: Span = "10 tokens".parse().unwrap();
    let every_updates: Span = "4 updates".parse().unwrap();
    let (mut fired_tokens, mut fired_updates) = (Vec::new(), Vec::new());
    let mut tokens = 0u64;
    while let Some(mut group) = d.next_group().unwrap() {
        let counts = group.count_all(tokens_of);
        let before = tokens;
        tokens += counts.tokens.get();
        let p = *d.finish(group, Outcome::Applied).unwrap();
        assert_eq!(p.tokens, Tokens::new(tokens));
        if d.every(every_tokens) {
            fired_tokens.push(p.updates.get());
        }
        // The exact rule: some multiple of 10 lies in (before, now].
        assert_eq!(d.every(every_tokens), before / 10 < tokens / 10);
        if d.every(every_updates) {
            fired_updates.push(p.updates.get());
        }
        assert!(
            !d.every(Span::new(0, UnitKind::Update)),
            "a zero span never fires"
        );
    }
    assert_eq!(fired_updates, [4, 8, 12, 16, 20, 24, 28, 32, 36, 40]);
    assert_eq!(
        fired_tokens.len() as u64,
        tokens / 10,
        "no multiple crossed twice in one update here"
    );
    // A typed count works too, and a skipped attempt never fires.
    let mut d = Driver::builder(plan, 4)
        .total(Updates::new(2))
        .build()
        .unwrap();
    let mut g = d.next_group().unwrap().unwrap();
    g.count_all(tokens_of);
    d.finish(g, Outcome::Applied).unwrap();
    assert!(d.every(Updates::ONE));
    let mut g = d.next_group().unwrap().unwrap();
    g.count_all(tokens_of);
    d.finish(g, Outcome::Skipped).unwrap();
    assert!(!d.every(Updates::ONE));
    assert!(!d.every(Examples::ONE));
}

#[test]
fn the_schedule_advances_only_on_applied_updates() {
    let plan = Plan::new(2, 1, 1).unwrap();
    let schedule = Schedule::new(ScheduleKind::Linear, 1.0, Updates::new(2), Updates::new(6));
    let mut d = Driver::builder(plan, 10)
        .schedule(schedule.clone())
        .build()
        .unwrap();
    assert_eq!(
        d.total(),
        Span::of(Updates::new(6)),
        "the schedule's total by default"
    );
    let outcomes = [true, false, false, true, true, false, true, true, true];
    let mut lrs = Vec::new();
    for applied in outcomes {
        let Some(mut group) = d.next_group().unwrap() else {
            break;
        };
        group.count_all(tokens_of);
        lrs.push(d.lr().unwrap());
        d.finish(group, Outcome::from_finite(applied)).unwrap();
        let p = d.progress();
        assert_eq!(d.schedule().unwrap().steps(), p.updates);
        assert_eq!(p.attempts, p.updates.get() + p.skipped);
    }
    // The lr of each attempt is the schedule's at the applied updates so far.
    assert_eq!(lrs, [0.0, 0.5, 0.5, 0.5, 1.0, 0.75, 0.75, 0.5, 0.25]);
    assert_eq!(d.progress().skipped, 3);
    assert!(d.finished());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// `accum::plan::partial-group`, `accum::run::data-parallel`: over all ranks and microbatches, every example appears once
    /// per epoch (`process`), or once except the dropped ones, which are
    /// recorded (`drop`); all ranks see the same group; full groups give
    /// every replica `A` microbatches of `m`; skipped attempts consume data
    /// too.
    #[test]
    fn every_example_once_per_epoch(
        m in 1u64..5, a in 1u64..4, d in 1u64..4, n in 1usize..70,
        seed in 0u64..1000, drop in any::<bool>(), skips in proptest::collection::vec(any::<bool>(), 1..40),
    ) {
        let plan = Plan::new(m, a, d).unwrap();
        let b = (m * a * d) as usize;
        prop_assume!(!drop || n >= b);
        let policy = if drop { LastGroup::Drop } else { LastGroup::Process };
        let mut ranks = drivers(plan, n, seed, policy, 1_000);
        let mut seen: Vec<BTreeSet<usize>> = Vec::new();
        let mut shards = ShardCheck::default();
        let mut epoch = 0;
        for skip in &skips {
            let mut groups: Vec<Group> = ranks.iter_mut().map(|r| r.next_group().unwrap().unwrap()).collect();
            for g in &groups[1..] {
                prop_assert_eq!(g.assignment(), groups[0].assignment());
                prop_assert_eq!(g.epoch(), groups[0].epoch());
            }
            let e = groups[0].epoch() as usize;
            if e != epoch {
                shards.reset();
                epoch = e;
            }
            if seen.len() <= e {
                seen.resize(e + 1, BTreeSet::new());
            }
            let full = groups[0].examples().get() as usize == b;
            prop_assert_eq!(groups[0].is_partial(), !full);
            for g in &groups {
                let mbs: Vec<_> = g.microbatches().collect();
                if full {
                    prop_assert_eq!(mbs.len(), a as usize);
                }
                for mb in &mbs {
                    prop_assert!(!mb.ids.is_empty() && mb.ids.len() <= m as usize);
                    prop_assert_eq!(mb.sync, mb.index + 1 == mbs.len());
                    for &id in mb.ids {
                        prop_assert!(seen[e].insert(id), "example {} twice in epoch {}", id, e);
                        prop_assert!(shards.record(id as u64, mb.replica).is_ok());
                    }
                }
            }
            for (r, g) in groups.iter_mut().enumerate() {
                g.count_all(tokens_of);
                let outcome = if *skip { Outcome::Skipped } else { Outcome::Applied };
                ranks[r].finish(g.clone(), outcome).unwrap();
            }
        }
        // Every completed epoch covered the data, less what was dropped.
        let dropped = ranks[0].dropped().to_vec();
        for r in &ranks[1..] {
            prop_assert_eq!(r.dropped(), &dropped[..]);
        }
        let last = seen.len() - 1;
        for (e, ids) in seen.iter().enumerate().take(last) {
            let mut all = ids.clone();
            for group in dropped.iter().filter(|g| g.epoch == e as u64) {
                prop_assert_eq!(group.ids.len(), n % b);
                for &id in &group.ids {
                    prop_assert!(all.insert(id as usize), "a dropped example was also run");
                }
            }
            if drop {
                prop_assert_eq!(ids.len(), n - n % b);
            }
            prop_assert_eq!(all, (0..n).collect::<BTreeSet<_>>());
        }
        let p = *ranks[0].progress();
        prop_assert_eq!(p.attempts, skips.len() as u64);
        prop_assert_eq!(p.skipped, skips.iter().filter(|s| **s).count() as u64);
    }

    /// `accum::run::normalization`: the denominator summed over the replicas through the reducer
    /// equals a recount of the group, for every normalization.
    #[test]
    fn denominators_equal_a_recount(m in 1u64..4, a in 1u64..4, d in 1u64..4, n in 1usize..40, seed in 0u64..100) {
        let plan = Plan::new(m, a, d).unwrap();
        let mut ranks = drivers(plan, n, seed, LastGroup::Process, 3);
        let reducer = InProcess::new(d as usize);
        for _ in 0..3 {
            let mut groups: Vec<Group> = ranks.iter_mut().map(|r| r.next_group().unwrap().unwrap()).collect();
            let ids: Vec<usize> = groups[0].ids().collect();
            let tokens: u64 = ids.iter().map(|&id| tokens_of(id)).sum();
            let examples = ids.iter().filter(|&&id| tokens_of(id) > 0).count() as u64;
            let reduced = denominators_on_every_rank(&mut groups, tokens_of, &reducer);
            for [per_token, per_example, sum] in reduced {
                prop_assert_eq!(per_token.value, tokens.max(1) as f64);
                prop_assert_eq!(per_example.value, examples.max(1) as f64);
                prop_assert_eq!(sum.value, 1.0);
                prop_assert_eq!(per_token.counts, GroupCounts { tokens: Tokens::new(tokens), examples: Examples::new(examples) });
                // The token weights of the whole group sum to 1 for the means.
                if tokens > 0 {
                    let w: f64 = ids.iter().map(|&id| tokens_of(id) as f64 * per_token.token_weight(tokens_of(id))).sum();
                    prop_assert!((w - 1.0).abs() < 1e-9);
                    let w: f64 = ids.iter().map(|&id| tokens_of(id) as f64 * per_example.token_weight(tokens_of(id))).sum();
                    prop_assert!((w - 1.0).abs() < 1e-9);
                }
            }
            let local = groups[0].count_all(tokens_of);
            prop_assert_eq!(local, GroupCounts { tokens: Tokens::new(tokens), examples: Examples::new(examples) });
            for (r, g) in groups.into_iter().enumerate() {
                ranks[r].finish(g, Outcome::Applied).unwrap();
            }
        }
    }
}

/// Runs accum's engine and a loop of its own built on the driver (replicas
/// on threads, the reducer for counts and gradients, the reference model's
/// fused forward and backward, the engine's optimizer) over the same config,
/// and returns both final parameter sets and per-attempt losses.
fn engine_and_driver(
    plan: &StagedPlan,
    config: &EngineConfig,
    faults: &[Fault],
) -> (
    (crate::tensor::Tensors, Vec<f64>),
    (crate::tensor::Tensors, Vec<f64>),
) {
    let mut engine = Engine::new(plan, config).expect("engine");
    let report = engine
        .run(&mut RunOptions {
            faults: faults.to_vec(),
            ..RunOptions::default()
        })
        .expect("engine run");
    let engine_losses: Vec<f64> = report.updates.iter().map(|u| u.loss).collect();

    let data = Dataset::synthetic(&config.data);
    let mut model = TokenMlp::new(
        config.data.vocab as usize,
        config.model.hidden as usize,
        config.model.ffn as usize,
        config.data.seed,
    );
    // In updates, the stages do not change the schedule's length.
    let schedule = Schedule::resolve(
        &config.schedule,
        config.optimizer.lr,
        plan.first_plan(),
        None,
    )
    .expect("schedule in updates");
    assert_eq!(schedule.total(), engine.total_updates());
    let d = plan.first_plan().replicas() as usize;
    let mut ranks: Vec<Driver> = (0..d)
        .map(|rank| {
            Driver::builder(plan, data.len())
                .seed(config.data.seed)
                .last_group(config.data.last_group)
                .rank(rank)
                .schedule(schedule.clone())
                .build()
                .expect("driver")
        })
        .collect();
    let mut optimizer = Optimizer::from_section(&config.optimizer);
    let reducer = InProcess::new(d);
    let ignore = config.loss.ignore_index;
    let supervised = |id: usize| {
        data.examples()[id]
            .labels
            .iter()
            .filter(|&&l| l != ignore)
            .count() as u64
    };
    let max_positions = plan.first_plan().micro_batch() as usize * data.max_len();
    let mut stages_seen = Vec::new();
    let mut state: Vec<_> = (0..d)
        .map(|_| (model.params().zeros_like(), model.workspace(max_positions)))
        .collect();
    let mut losses = Vec::new();
    loop {
        let groups: Vec<Option<Group>> =
            ranks.iter_mut().map(|r| r.next_group().unwrap()).collect();
        let Some(mut groups) = groups.into_iter().collect::<Option<Vec<Group>>>() else {
            break;
        };
        let attempt = groups[0].attempt();
        stages_seen.push(groups[0].stage());
        let model_ref = &model;
        let sums: Vec<LossSums> = std::thread::scope(|s| {
            let handles: Vec<_> = groups
                .iter_mut()
                .zip(state.iter_mut())
                .map(|(group, (grads, workspace))| {
                    let (reducer, data, supervised) = (&reducer, &data, &supervised);
                    s.spawn(move || {
                        // `accum::run::group`: the denominator first, summed over the replicas.
                        let den = group
                            .denominator(config.loss.normalization, supervised, reducer)
                            .unwrap();
                        let scale = GradScale {
                            normalization: den.normalization,
                            denominator: den.value,
                            loss_scale: 1.0,
                            ignore_index: ignore,
                        };
                        let mut sums = LossSums::default();
                        for mb in group.microbatches() {
                            let batch =
                                PackedMicrobatch::of(mb.ids.iter().map(|&id| &data.examples()[id]));
                            sums.add(&model_ref.forward_backward(&batch, &scale, grads, workspace));
                            if faults.iter().any(|f| {
                                f.attempt == attempt
                                    && f.replica == mb.replica
                                    && f.microbatch == mb.index
                            }) {
                                grads.slices_mut().next().unwrap()[0] = f32::INFINITY;
                            }
                        }
                        // No synchronisation before the last microbatch; once after it.
                        reducer.all_reduce_grads(group.rank(), grads).unwrap();
                        sums
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut total = LossSums::default();
        for s in &sums {
            total.add(s);
        }
        losses.push(total.objective);
        let grads = &mut state[0].0;
        let grad_norm = grads.norm();
        let finite = grads.all_finite() && grad_norm.is_finite();
        if finite {
            if let Some(max_norm) = config.optimizer.clip_norm
                && grad_norm > max_norm
            {
                grads.scale((max_norm / (grad_norm + 1e-6)) as f32);
            }
            let lr = ranks[0].lr().unwrap();
            optimizer.step(model.params_mut(), grads, lr);
        }
        for (r, g) in groups.into_iter().enumerate() {
            ranks[r].finish(g, Outcome::from_finite(finite)).unwrap();
            // `accum::run::zeroing`: zero once per group, after the update.
            state[r].0.fill_zero();
        }
    }
    assert_eq!(
        ranks[0].progress().updates,
        engine.counters().applied_updates
    );
    assert_eq!(
        ranks[0].progress().attempts,
        engine.counters().update_attempts
    );
    assert_eq!(
        ranks[0].progress().skipped,
        engine.counters().skipped_updates
    );
    assert_eq!(
        ranks[0].progress().skipped,
        faults.len() as u64,
        "every injected fault skips its attempt"
    );
    assert!(engine.counters().epochs > 1, "the run crosses epochs");
    let dropped = ranks[0].dropped();
    assert_eq!(
        dropped.iter().map(|g| g.ids.len() as u64).sum::<u64>(),
        engine.counters().dropped_examples.get()
    );
    // The same stage for every attempt, and per-stage counts that add up.
    let engine_stages: Vec<usize> = report.updates.iter().map(|u| u.stage).collect();
    assert_eq!(stages_seen, engine_stages);
    assert_eq!(report.stages.len(), plan.stages().len());
    let attempts: u64 = report.stages.iter().map(|s| s.attempts).sum();
    assert_eq!(attempts, report.counters.update_attempts);
    (
        (engine.model().params().clone(), engine_losses),
        (model.params().clone(), losses),
    )
}

fn config(examples: u64, policy: LastGroup, normalization: Normalization) -> EngineConfig {
    let mut config = EngineConfig::default();
    config.data.examples = examples;
    config.data.min_len = 2;
    config.data.max_len = 9;
    config.data.vocab = 13;
    config.data.seed = 5;
    config.data.last_group = policy;
    config.model.hidden = 6;
    config.model.ffn = 10;
    config.loss.normalization = normalization;
    config.optimizer.lr = 0.05;
    config.optimizer.clip_norm = Some(0.5);
    config.schedule.kind = ScheduleKind::Cosine;
    config.schedule.warmup = "2 updates".parse().unwrap();
    config.schedule.total = Some("11 updates".parse().unwrap());
    config
}

/// `m` and `D` with `A` of `(A, updates)` stages, then `last`.
fn ramp(m: u64, d: u64, before: &[(u64, u64)], last: u64) -> StagedPlan {
    let base = Plan::new(m, last, d).unwrap();
    let mut until = 0;
    let mut specs: Vec<crate::plan::StageSpec> = before
        .iter()
        .map(|&(a, updates)| {
            until += updates;
            crate::plan::StageSpec::accumulation(a).until(Span::of(Updates::new(until)))
        })
        .collect();
    specs.push(crate::plan::StageSpec::accumulation(last));
    StagedPlan::from_specs(&base, &specs).unwrap()
}

/// The driver reproduces accum's own engine bit for bit on the reference
/// model: the same groups, replicas, microbatches, partial groups and
/// denominators, the schedule per applied update, and a skipped attempt;
/// with stages too, where a skipped attempt retries under its stage.
#[test]
fn a_loop_on_the_driver_equals_the_engine_bit_for_bit() {
    let cases = [
        // m, A, D, examples, policy, normalization, faults
        (
            2,
            3,
            2,
            29,
            LastGroup::Process,
            Normalization::PerToken,
            vec![],
        ),
        (
            3,
            2,
            1,
            20,
            LastGroup::Drop,
            Normalization::PerExample,
            vec![],
        ),
        (
            1,
            4,
            2,
            19,
            LastGroup::Drop,
            Normalization::Sum,
            vec![Fault {
                attempt: 3,
                replica: 1,
                microbatch: 2,
            }],
        ),
    ];
    let constant = cases.into_iter().map(|(m, a, d, n, policy, norm, faults)| {
        (
            StagedPlan::from(Plan::new(m, a, d).unwrap()),
            n,
            policy,
            norm,
            faults,
        )
    });
    let staged = [
        // A = 1 for 3 updates, 3 for 2, then 2 (m = 2, D = 2); the second
        // attempt is skipped and retried under the first stage.
        (
            ramp(2, 2, &[(1, 3), (3, 2)], 2),
            29,
            LastGroup::Process,
            Normalization::PerToken,
            vec![Fault {
                attempt: 2,
                replica: 1,
                microbatch: 0,
            }],
        ),
        (
            ramp(1, 2, &[(3, 4)], 1),
            23,
            LastGroup::Drop,
            Normalization::PerExample,
            vec![],
        ),
    ];
    for (plan, n, policy, norm, faults) in constant.chain(staged) {
        let config = config(n, policy, norm);
        let ((engine_params, engine_losses), (params, losses)) =
            engine_and_driver(&plan, &config, &faults);
        let plan = plan.final_plan();
        assert_eq!(losses.len(), engine_losses.len(), "{plan}");
        for (x, y) in losses.iter().zip(&engine_losses) {
            assert_eq!(
                x.to_bits(),
                y.to_bits(),
                "{plan}: losses {losses:?} vs {engine_losses:?}"
            );
        }
        assert_eq!(
            params.max_abs_diff(&engine_params),
            0.0,
            "{plan} ({policy}, {norm})"
        );
        assert_eq!(params, engine_params);
    }
}

/// Drivers of `D` ranks on plain threads, each with its rank's member of
/// one reducer; rank `failing` panics when it draws attempt `at`. Every
/// other rank's end, as it reports it within a second.
fn run_with_a_failing_rank(d: usize, failing: usize, at: u64) -> Vec<(usize, DriverError)> {
    let plan = Plan::new(2, 2, d as u64).unwrap();
    let reducer = InProcess::new(d);
    let (tx, rx) = std::sync::mpsc::channel();
    let mut threads = Vec::new();
    for rank in 0..d {
        let member = reducer.member(rank).unwrap();
        let tx = tx.clone();
        threads.push(std::thread::spawn(move || {
            let mut driver = Driver::builder(plan, 200).rank(rank).build().unwrap();
            let end = loop {
                let mut group = match driver.next_group() {
                    Ok(Some(group)) => group,
                    Ok(None) => break None,
                    Err(e) => break Some(e),
                };
                assert!(
                    !(rank == failing && group.attempt() == at),
                    "rank {rank} fails at attempt {at}"
                );
                if let Err(e) = group.count(tokens_of, &member) {
                    break Some(e);
                }
                let mut grads = vec![1.0f32; 4];
                if let Err(e) = member.all_reduce_f32(rank, &mut grads) {
                    break Some(DriverError::Reduce(e));
                }
                driver.finish(group, Outcome::Applied).unwrap();
            };
            tx.send((rank, end)).unwrap();
        }));
    }
    drop(tx);
    let mut ends: Vec<(usize, DriverError)> = (1..d)
        .map(|_| {
            let (rank, end) = rx
                .recv_timeout(std::time::Duration::from_secs(1))
                .expect("every other rank ends within a second");
            (rank, end.expect("the other ranks end with an error"))
        })
        .collect();
    ends.sort_by_key(|(rank, _)| *rank);
    let panicked: Vec<usize> = threads
        .into_iter()
        .enumerate()
        .filter_map(|(rank, t)| t.join().is_err().then_some(rank))
        .collect();
    assert_eq!(panicked, [failing]);
    ends
}

#[test]
fn a_panicking_rank_ends_the_other_drivers_with_an_error() {
    // The failing rank panics in the middle of a run, at the first group,
    // and in a run of four ranks: the others end in the count all-reduce
    // (or the gradient one), never waiting.
    for (d, failing, at) in [(2, 1, 3), (2, 0, 1), (4, 2, 5)] {
        let ends = run_with_a_failing_rank(d, failing, at);
        let ranks: Vec<usize> = ends.iter().map(|(r, _)| *r).collect();
        assert_eq!(ranks, (0..d).filter(|&r| r != failing).collect::<Vec<_>>());
        for (rank, err) in ends {
            let DriverError::Reduce(e) = &err else {
                panic!("rank {rank}: {err:?}");
            };
            assert!(
                e.reason.contains(&format!("rank {failing} panicked")),
                "rank {rank}: {e}"
            );
        }
    }
}
