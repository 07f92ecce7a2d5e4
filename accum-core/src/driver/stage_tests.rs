//! Tests of the walk and the driver under a staged plan: each group under
//! the stage of the update it will produce (a skipped attempt retries under
//! the same stage), every example once per epoch, groups of the stage's
//! size, denominators against a recount, and the closed-form survey of the
//! stages against the walk itself.

use std::collections::BTreeSet;

use proptest::prelude::*;

use super::tests::denominators_on_every_rank;
use super::*;
use crate::data::ShardCheck;
use crate::plan::StageSpec;
use crate::replica::InProcess;
use crate::span::Span;
use crate::units::{Examples, Tokens};

/// Stages of `(A, updates)` on `m` and `D`, then the last stage's `A`.
fn staged(m: u64, d: u64, before: &[(u64, u64)], last: u64) -> StagedPlan {
    let base = Plan::new(m, last, d).expect("a plan");
    let mut until = 0;
    let mut specs: Vec<StageSpec> = before
        .iter()
        .map(|&(a, updates)| {
            until += updates;
            StageSpec::accumulation(a).until(Span::of(Updates::new(until)))
        })
        .collect();
    specs.push(StageSpec::accumulation(last));
    StagedPlan::from_specs(&base, &specs).expect("valid stages")
}

fn stages_strategy() -> impl Strategy<Value = StagedPlan> {
    (
        1u64..4,
        1u64..3,
        proptest::collection::vec((1u64..5, 1u64..6), 0..4),
        1u64..5,
    )
        .prop_map(|(m, d, before, last)| staged(m, d, &before, last))
}

fn tokens_of(id: usize) -> u64 {
    if id % 5 == 2 {
        0
    } else {
        (id as u64 * 3) % 7 + 1
    }
}

fn batch(stage: &crate::plan::Stage) -> u64 {
    stage.plan().effective_batch().get()
}

/// A stage change exactly where the plan puts it, in applied updates: a
/// skipped attempt is retried under its stage, and the driver's plan,
/// stage and group agree.
#[test]
fn stages_change_at_the_planned_update_and_skips_retry_the_same_stage() {
    // m = 2, D = 2: A = 1 for 3 updates, A = 3 for 2, then A = 2.
    let plan = staged(2, 2, &[(1, 3), (3, 2)], 2);
    let mut driver = Driver::builder(plan.clone(), 40)
        .total(Updates::new(8))
        .build()
        .unwrap();
    assert_eq!(driver.stages(), &plan);
    let outcomes = [true, false, true, true, false, true, true, true, true, true];
    let mut seen = Vec::new();
    for applied in outcomes {
        let stage = driver.stage();
        let next_plan = *driver.plan();
        let Some(mut group) = driver.next_group().unwrap() else {
            break;
        };
        assert_eq!((group.stage(), *group.plan()), (stage, next_plan));
        let a = group.plan().accumulation() as usize;
        assert!(group.assignment().replicas.iter().all(|r| r.len() == a));
        group.count_all(tokens_of);
        let before = driver.progress().updates.get();
        driver.finish(group, Outcome::from_finite(applied)).unwrap();
        seen.push((before, stage, applied));
    }
    // (applied before the attempt, its stage, applied?)
    assert_eq!(
        seen,
        [
            (0, 0, true),
            (1, 0, false),
            (1, 0, true),
            (2, 0, true),
            (3, 1, false),
            (3, 1, true),
            (4, 1, true),
            (5, 2, true),
            (6, 2, true),
            (7, 2, true),
        ]
    );
    assert!(driver.finished());
    assert_eq!(driver.progress().skipped, 2);
    // Examples of applied updates only: 3 × 4 + 2 × 12 + 3 × 8.
    assert_eq!(driver.progress().examples, Examples::new(60));
}

/// Under `error`, the build refuses stages whose groups would be partial
/// when every attempt is applied, and a skipped attempt that moves a later
/// stage across an epoch's end is refused when that group is drawn.
#[test]
fn error_refuses_partial_stage_groups_before_and_during_the_run() {
    // m = 1, D = 1, N = 24: A = 6 for 2 updates (12 examples), then A = 12.
    let plan = staged(1, 1, &[(6, 2)], 12);
    let mut driver = Driver::builder(plan.clone(), 24)
        .last_group(LastGroup::Error)
        .total(Updates::new(6))
        .build()
        .unwrap();
    assert_eq!(driver.updates_per_epoch(), Updates::new(3));
    // One skip in the first stage: its third group takes examples 12..18,
    // and the second stage's group of 12 finds 6 left.
    for outcome in [Outcome::Applied, Outcome::Skipped, Outcome::Applied] {
        let mut g = driver.next_group().unwrap().unwrap();
        g.count_all(tokens_of);
        driver.finish(g, outcome).unwrap();
    }
    let err = driver.next_group().unwrap_err();
    assert_eq!(
        err,
        DriverError::StageGroup(StageGroupError {
            stage: 2,
            update: Updates::new(3),
            epoch: 0,
            left: 6,
            effective_batch: 12,
        })
    );
    let text = err.to_string();
    assert!(
        text.contains("update 3 (stage 2, global batch 12)"),
        "{text}"
    );
    assert!(text.contains("last_group \"process\""), "{text}");

    // Before the run: A = 4 for 2 updates leaves 16 of 24, not a multiple of 12.
    let refused = Driver::builder(staged(1, 1, &[(4, 2)], 12), 24)
        .last_group(LastGroup::Error)
        .build()
        .unwrap_err();
    assert_eq!(
        refused,
        DriverError::StageGroup(StageGroupError {
            stage: 2,
            update: Updates::new(4),
            epoch: 0,
            left: 4,
            effective_batch: 12,
        })
    );
    // Under `drop`, every stage must fit the data once.
    assert_eq!(
        Driver::builder(staged(1, 1, &[(4, 2)], 30), 24)
            .last_group(LastGroup::Drop)
            .build()
            .unwrap_err(),
        DriverError::NotEnoughData {
            examples: 24,
            effective_batch: 30
        }
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// `accum::plan::partial-group`, `accum::run::data-parallel` under stages: every example once per epoch (`process`), or
    /// once except the dropped ones (`drop`); every rank sees the same
    /// group; each group runs under the stage of the update it produces,
    /// with the stage's `A` microbatches of `m` on every replica when full;
    /// skipped attempts consume data and keep their stage.
    #[test]
    fn every_example_once_per_epoch_under_stages(
        plan in stages_strategy(), n in 1usize..60, seed in 0u64..500, drop in any::<bool>(),
        skips in proptest::collection::vec(any::<bool>(), 1..40),
    ) {
        let policy = if drop { LastGroup::Drop } else { LastGroup::Process };
        let largest = plan.stages().iter().map(batch).max().unwrap();
        let d = plan.first_plan().replicas();
        let m = plan.first_plan().micro_batch() as usize;
        let build = |rank: usize| {
            Driver::builder(plan.clone(), n).seed(seed).last_group(policy).rank(rank)
                .total(Updates::new(1_000)).build()
        };
        if drop && largest > n as u64 {
            prop_assert_eq!(build(0).unwrap_err(), DriverError::NotEnoughData {
                examples: n as u64, effective_batch: plan.stages().iter().map(batch).find(|&b| b > n as u64).unwrap(),
            });
            return Ok(());
        }
        let mut ranks: Vec<Driver> = (0..d as usize).map(|r| build(r).unwrap()).collect();
        let mut seen: Vec<BTreeSet<usize>> = Vec::new();
        let mut shards = ShardCheck::default();
        let mut epoch = 0;
        let mut applied = 0u64;
        for skip in &skips {
            let mut groups: Vec<Group> = ranks.iter_mut().map(|r| r.next_group().unwrap().unwrap()).collect();
            let stage = plan.stage_index_at(Updates::new(applied));
            let stage_plan = *plan.plan_at(Updates::new(applied));
            for g in &groups {
                prop_assert_eq!(g.stage(), stage);
                prop_assert_eq!(g.plan(), &stage_plan);
                prop_assert_eq!(g.assignment(), groups[0].assignment());
            }
            let e = groups[0].epoch() as usize;
            if e != epoch {
                shards.reset();
                epoch = e;
            }
            if seen.len() <= e {
                seen.resize(e + 1, BTreeSet::new());
            }
            let b = stage_plan.effective_batch().get() as usize;
            let full = groups[0].examples().get() as usize == b;
            prop_assert_eq!(groups[0].is_partial(), !full);
            prop_assert!(groups[0].examples().get() as usize <= b);
            for g in &groups {
                let mbs: Vec<_> = g.microbatches().collect();
                if full {
                    prop_assert_eq!(mbs.len() as u64, stage_plan.accumulation());
                }
                for mb in &mbs {
                    prop_assert!(!mb.ids.is_empty() && mb.ids.len() <= m);
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
            applied += u64::from(!*skip);
        }
        let dropped = ranks[0].dropped().to_vec();
        let last = seen.len() - 1;
        for (e, ids) in seen.iter().enumerate().take(last) {
            let mut all = ids.clone();
            for group in dropped.iter().filter(|g| g.epoch == e as u64) {
                prop_assert!(drop);
                for &id in &group.ids {
                    prop_assert!(all.insert(id as usize), "a dropped example was also run");
                }
            }
            prop_assert_eq!(all, (0..n).collect::<BTreeSet<_>>());
        }
        prop_assert_eq!(ranks[0].progress().updates, Updates::new(applied));
    }

    /// The closed-form survey of the stages agrees with the walk drawing
    /// group by group with every attempt applied: the updates of the first
    /// epoch, where each stage starts (and a walk moved there draws the
    /// same group), and under `error` the first partial group, or none.
    #[test]
    fn the_survey_of_the_stages_agrees_with_the_walk(
        plan in stages_strategy(), n in 1usize..50, seed in 0u64..100, policy in 0u8..3,
    ) {
        let policy = [LastGroup::Process, LastGroup::Drop, LastGroup::Error][policy as usize];
        prop_assume!(policy != LastGroup::Drop || plan.stages().iter().all(|s| batch(s) <= n as u64));
        // Drawn under `process`, a partial group marks where `error` refuses.
        let drawn_policy = if policy == LastGroup::Drop { LastGroup::Drop } else { LastGroup::Process };
        let mut walk = Walk::new(plan.clone(), n, seed, drawn_policy).unwrap();
        let finite: u64 = plan.stages().iter().filter_map(|s| s.updates()).map(Updates::get).sum();
        let horizon = finite + 3 * (n as u64 + 1);
        let mut draw = walk.empty_draw();
        let mut starts = Vec::new();
        let mut first_epoch = 0u64;
        let mut first_partial = None;
        let mut groups = Vec::new();
        for i in 0..horizon {
            if plan.stages().iter().any(|s| s.start().get() == i) {
                starts.push(walk.position());
            }
            walk.next_into(&mut draw, Updates::new(i), |_, _| {}).unwrap();
            if draw.epoch == 0 {
                first_epoch += 1;
            }
            if draw.partial && first_partial.is_none() {
                first_partial = Some(StageGroupError {
                    stage: draw.stage + 1,
                    update: Updates::new(i + 1),
                    epoch: draw.epoch,
                    left: draw.members.len() as u64,
                    effective_batch: draw.plan.effective_batch().get(),
                });
            }
            groups.push(draw.members.clone());
        }
        let mut surveyed = Vec::new();
        let result = survey(&plan, n as u64, policy, |_, at| surveyed.push(at));
        match (policy, first_partial) {
            (LastGroup::Error, Some(expected)) => prop_assert_eq!(result, Err(expected)),
            _ => {
                prop_assert_eq!(result, Ok(Updates::new(first_epoch)));
                prop_assert_eq!(&surveyed, &starts);
                prop_assert_eq!(
                    Walk::new(plan.clone(), n, seed, policy).unwrap().updates_per_epoch(),
                    Updates::new(first_epoch)
                );
                // A walk moved to a stage's start draws the stage's first group.
                for (stage, &at) in plan.stages().iter().zip(&surveyed) {
                    let mut moved = Walk::new(plan.clone(), n, seed, drawn_policy).unwrap();
                    moved.seek(at);
                    let mut d = moved.empty_draw();
                    moved.next_into(&mut d, stage.start(), |_, _| {}).unwrap();
                    prop_assert_eq!(&d.members, &groups[stage.start().get() as usize]);
                }
            }
        }
    }

    /// `accum::run::normalization` under stages: the denominator summed over the replicas equals a
    /// recount of the group, whatever the stage.
    #[test]
    fn denominators_equal_a_recount_under_stages(plan in stages_strategy(), n in 1usize..40, seed in 0u64..100) {
        let d = plan.first_plan().replicas() as usize;
        let mut ranks: Vec<Driver> = (0..d)
            .map(|rank| Driver::builder(plan.clone(), n).seed(seed).rank(rank).total(Updates::new(8)).build().unwrap())
            .collect();
        let reducer = InProcess::new(d);
        for _ in 0..8 {
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
            }
            for (r, g) in groups.into_iter().enumerate() {
                ranks[r].finish(g, Outcome::Applied).unwrap();
            }
        }
    }
}
