//! The engine under a batch ramp-up: per-stage counters, the scheduler per
//! applied update across stages, lengths that end at the same count
//! whatever the stages, a skipped attempt retried under its stage, the
//! per-stage pre-flight check, and the stage in dumps and reports.

use super::tests::small_for;
use super::*;
use crate::driver::survey;
use crate::dump::DumpWriter;
use crate::plan::{LastGroup, StageSpec};
use crate::settings::{ScheduleKind, ScheduleSection};
use crate::verify::{self, Tolerance};

/// A small, fast config over `examples` examples, in updates unless changed.
fn small(examples: u64) -> EngineConfig {
    small_for(examples, "10 updates")
}

/// `m` and `D` with `(A, until)` stages, then the last `A`.
fn ramp(m: u64, d: u64, before: &[(u64, &str)], last: u64) -> StagedPlan {
    let base = Plan::new(m, last, d).unwrap();
    let mut specs: Vec<StageSpec> = before
        .iter()
        .map(|&(a, until)| StageSpec::accumulation(a).until(until.parse().unwrap()))
        .collect();
    specs.push(StageSpec::accumulation(last));
    StagedPlan::from_specs(&base, &specs).unwrap()
}

/// m = 2, D = 2: B = 4 for 4 updates, 8 for 2, then 16. Over 64 examples
/// every group is full: 16 + 16 examples, then four groups of 16 an epoch.
fn three_stages() -> StagedPlan {
    ramp(2, 2, &[(1, "16 examples"), (2, "32 examples")], 4)
}

#[test]
fn per_stage_counters_follow_the_plan_and_add_up_to_the_run() {
    let plan = three_stages();
    let mut config = small(64);
    config.schedule.total = Some("12 updates".parse().unwrap());
    let report = run(&plan, &config).unwrap();
    assert_eq!(report.counters.applied_updates, Updates::new(12));
    assert_eq!(report.plan.effective_batch, 16, "the full batch");
    let rows: Vec<_> = report
        .stages
        .iter()
        .map(|s| {
            (
                s.plan.accumulation,
                s.plan.effective_batch,
                s.first_update.get(),
                s.last_update.map(Updates::get),
                s.applied_updates.get(),
                s.attempts,
                s.microbatches.get(),
                s.examples.get(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (1, 4, 1, Some(4), 4, 4, 4 * 2, 16),
            (2, 8, 5, Some(6), 2, 2, 2 * 4, 16),
            (4, 16, 7, None, 6, 6, 6 * 8, 96),
        ]
    );
    let c = &report.counters;
    let sum = |f: fn(&StageCounters) -> u64| report.stages.iter().map(f).sum::<u64>();
    assert_eq!(sum(|s| s.attempts), c.update_attempts);
    assert_eq!(sum(|s| s.microbatches.get()), c.microbatches.get());
    assert_eq!(sum(|s| s.examples.get()), c.examples.get());
    assert_eq!(sum(|s| s.tokens.get()), c.supervised_tokens.get());
    // Every attempt names its stage: the stage of the update it produced.
    for u in &report.updates {
        assert_eq!(u.stage, plan.stage_index_at(u.updates - Updates::ONE));
        let a = plan.stages()[u.stage].plan().accumulation();
        assert_eq!(u.microbatches.get(), a * 2, "attempt {}", u.attempt);
        assert_eq!(u.examples.get(), a * 4);
    }
}

/// `accum::run::scheduler` across stages: one scheduler step per applied update; a skipped
/// attempt is retried under its stage, so the stage still makes its
/// planned updates and the next stage starts at its planned update.
#[test]
fn the_scheduler_steps_per_applied_update_and_a_skip_keeps_its_stage() {
    let plan = three_stages();
    let mut config = small(64);
    config.optimizer.lr = 0.1;
    config.schedule = ScheduleSection {
        kind: ScheduleKind::Linear,
        warmup: "2 updates".parse().unwrap(),
        total: Some("10 updates".parse().unwrap()),
    };
    let mut engine = Engine::new(&plan, &config).unwrap();
    let report = engine
        .run(&mut RunOptions {
            // Attempt 6 is the second stage's second update.
            faults: vec![Fault {
                attempt: 6,
                replica: 1,
                microbatch: 1,
            }],
            ..RunOptions::default()
        })
        .unwrap();
    let c = &report.counters;
    assert_eq!(
        (
            c.applied_updates.get(),
            c.update_attempts,
            c.skipped_updates
        ),
        (10, 11, 1)
    );
    assert_eq!(c.scheduler_steps, c.applied_updates);
    let stages: Vec<(usize, bool)> = report
        .updates
        .iter()
        .map(|u| (u.stage, u.applied))
        .collect();
    assert_eq!(
        stages,
        [
            (0, true),
            (0, true),
            (0, true),
            (0, true),
            (1, true),
            (1, false),
            (1, true),
            (2, true),
            (2, true),
            (2, true),
            (2, true),
        ]
    );
    let second = &report.stages[1];
    assert_eq!(
        (
            second.applied_updates.get(),
            second.attempts,
            second.skipped
        ),
        (2, 3, 1)
    );
    // The rate of each attempt is the schedule's at the applied updates so far.
    let schedule = Schedule::new(ScheduleKind::Linear, 0.1, Updates::new(2), Updates::new(10));
    for u in &report.updates {
        let before = u.updates.get() - u64::from(u.applied);
        let want = if u.applied {
            schedule.lr_at(before)
        } else {
            0.0
        };
        assert!(
            (u.lr - want).abs() < 1e-15,
            "attempt {}: {}",
            u.attempt,
            u.lr
        );
    }
}

/// A run whose length and warmup are in examples trains on the same
/// examples and reaches the peak rate at the same example count whatever
/// the stages; a length in tokens with a fixed `seq_len` resolves through
/// the stages the same way.
#[test]
fn lengths_in_examples_end_at_the_same_count_whatever_the_stages() {
    let mut config = small(64);
    config.optimizer.lr = 0.1;
    config.schedule = ScheduleSection {
        kind: ScheduleKind::Constant,
        warmup: "48 examples".parse().unwrap(),
        total: Some("192 examples".parse().unwrap()),
    };
    let constant = run(Plan::new(2, 4, 2).unwrap(), &config).unwrap();
    let staged = run(three_stages(), &config).unwrap();
    // 192 = 12 × 16, and 4 × 4 + 2 × 8 + 10 × 16.
    assert_eq!(constant.total_updates, Updates::new(12));
    assert_eq!(staged.total_updates, Updates::new(16));
    // 48 = 3 × 16, and 4 × 4 + 2 × 8 + 1 × 16.
    assert_eq!(constant.warmup_updates, Updates::new(3));
    assert_eq!(staged.warmup_updates, Updates::new(7));
    for report in [&constant, &staged] {
        assert_eq!(report.counters.examples, Examples::new(192));
        // The first update at the peak rate starts after 48 examples.
        let mut examples = 0;
        for u in &report.updates {
            assert_eq!(u.lr >= 0.1 - 1e-12, examples >= 48, "{u:?}");
            examples += u.examples.get();
        }
    }

    // Tokens with a fixed L = 10: 640 tokens are 64 examples.
    let base = Plan::new(2, 4, 2).unwrap().with_seq_len(10).unwrap();
    let with_len = StagedPlan::from_specs(
        &base,
        &[
            StageSpec::accumulation(1).until("160 tokens".parse().unwrap()),
            StageSpec::accumulation(4),
        ],
    )
    .unwrap();
    let engine = Engine::new(&with_len, &config).unwrap();
    assert_eq!(
        engine.span_in_updates(&"640 tokens".parse().unwrap()),
        Ok(Updates::new(4 + 3))
    );
    assert_eq!(
        engine.span_in_updates(&"6 updates".parse().unwrap()),
        Ok(Updates::new(6))
    );
}

/// An LR schedule written in tokens follows the tokens consumed: with or
/// without a ramp-up it trains on the same tokens, and an update that
/// starts at the same point of the data gets the same rate.
#[test]
fn a_schedule_in_tokens_ends_at_the_same_token_count_whatever_the_stages() {
    let mut config = small(64);
    let data_tokens = Engine::new(Plan::new(2, 4, 2).unwrap(), &config)
        .unwrap()
        .dataset()
        .supervised_tokens(config.loss.ignore_index);
    config.optimizer.lr = 0.1;
    config.schedule = ScheduleSection {
        kind: ScheduleKind::Cosine,
        // The tokens of 48 and of 192 examples at the data's mean length.
        warmup: Span::new(data_tokens * 3 / 4, UnitKind::Token),
        total: Some(Span::new(data_tokens * 3, UnitKind::Token)),
    };
    let constant = run(Plan::new(2, 4, 2).unwrap(), &config).unwrap();
    let staged = run(three_stages(), &config).unwrap();
    assert_eq!(
        (constant.total_updates, staged.total_updates),
        (Updates::new(12), Updates::new(16))
    );
    // The same 192 examples in the same order: the same tokens.
    assert_eq!(constant.counters.examples, Examples::new(192));
    assert_eq!(
        constant.counters.supervised_tokens,
        staged.counters.supervised_tokens
    );
    let rates = |report: &RunReport| {
        let mut at = std::collections::BTreeMap::new();
        let mut examples = 0;
        for u in &report.updates {
            at.insert(examples, u.lr);
            examples += u.examples.get();
        }
        at
    };
    let (by_constant, by_staged) = (rates(&constant), rates(&staged));
    for (examples, lr) in &by_constant {
        let other = by_staged[examples];
        assert!(
            (lr - other).abs() < 1e-12,
            "at {examples} examples: {lr} vs {other}"
        );
    }
    assert!(by_staged[&0] == 0.0 && by_staged[&16] > 0.0 && by_staged[&16] < by_staged[&48]);
}

/// Tokens without a fixed `seq_len` resolve through the data's measured
/// tokens per example, then through the stages, rounded up.
#[test]
fn measured_token_spans_resolve_through_the_stages() {
    let config = small(64);
    let engine = Engine::new(three_stages(), &config).unwrap();
    let data_tokens = engine.dataset().supervised_tokens(config.loss.ignore_index);
    // The tokens of 40 examples at the data's mean: 16 + 16 in the first
    // two stages, then one group of 16 holds the last 8.
    let tokens = (data_tokens * 40).div_ceil(64);
    assert_eq!(
        engine.span_in_updates(&Span::new(tokens, UnitKind::Token)),
        Ok(Updates::new(4 + 2 + 1))
    );
    assert_eq!(
        engine.span_in_updates(&Span::new(data_tokens / 2, UnitKind::Token)),
        Ok(Updates::new(6))
    );
}

/// With stages under `last_group = "error"`, the engine refuses before the
/// run what would be partial, and stops at a group a skipped attempt moved
/// across the end of an epoch.
#[test]
fn error_refuses_partial_stage_groups() {
    let mut config = small(24);
    config.data.last_group = LastGroup::Error;
    // m = 1, D = 1: A = 6 for 2 updates, then 12.
    let plan = ramp(1, 1, &[(6, "2 updates")], 12);
    let mut engine = Engine::new(&plan, &config).unwrap();
    let err = engine
        .run(&mut RunOptions {
            faults: vec![Fault {
                attempt: 2,
                replica: 0,
                microbatch: 0,
            }],
            ..RunOptions::default()
        })
        .unwrap_err();
    let EngineError::StageGroup(e) = err else {
        panic!("a partial stage group: {err}");
    };
    assert_eq!(
        (e.stage, e.update.get(), e.left, e.effective_batch),
        (2, 3, 6, 12)
    );
    let refused = Engine::new(ramp(1, 1, &[(4, "2 updates")], 12), &config).unwrap_err();
    assert!(
        matches!(refused, EngineError::StageGroup(e) if e.update == Updates::new(4)),
        "{refused}"
    );
}

/// `accum::verify::equivalence`, `accum::verify::preflight` per stage: the check runs each stage's first update, on the
/// examples the staged run gives it, against one batch of the stage's `B`.
#[test]
fn verify_checks_the_first_update_of_every_stage() {
    let plan = ramp(2, 2, &[(1, "12 examples"), (3, "36 examples")], 2);
    // 50 examples: the third stage starts at 36, so its group of 8 is full,
    // and epochs end in partial groups.
    let config = small(50);
    let report = verify::stages(&plan, &config, Tolerance::default()).unwrap();
    assert!(report.passed, "{report:#?}");
    let rows: Vec<_> = report
        .stages
        .iter()
        .map(|s| {
            (
                s.stage,
                s.update.get(),
                s.plan.accumulation,
                s.check.examples,
                s.check.microbatches,
            )
        })
        .collect();
    assert_eq!(rows, [(0, 1, 1, 4, 2), (1, 4, 3, 12, 6), (2, 6, 2, 8, 4)]);
    for stage in &report.stages {
        assert!(stage.check.checks.iter().all(|c| c.passed), "{stage:#?}");
        assert!(stage.check.max_rel_grad_diff < 1e-4);
    }
    // Each checked group is the staged run's group of that update.
    let mut staged = Engine::new(&plan, &config).unwrap();
    let mut starts = Vec::new();
    survey(&plan, 50, config.data.last_group, |_, at| starts.push(at)).unwrap();
    for (stage, &at) in plan.stages().iter().zip(&starts) {
        while staged.counters().applied_updates < stage.start() {
            staged.step(&mut RunOptions::default()).unwrap();
        }
        staged.step(&mut RunOptions::default()).unwrap();
        let mut alone = Engine::new(stage.plan(), &config).unwrap();
        alone.seek(at);
        alone.step(&mut RunOptions::default()).unwrap();
        assert_eq!(alone.last_group_ids(), staged.last_group_ids());
    }
    // A tolerance of zero fails every stage: accumulation is not bit-exact.
    let strict = Tolerance {
        rtol: 0.0,
        atol: 0.0,
        param_rtol: 0.0,
    };
    let failed = verify::stages(&plan, &config, strict).unwrap();
    assert!(!failed.passed);
    assert!(failed.stages.iter().all(|s| !s.check.passed));
    // A constant plan gives the one check `verify` gives.
    let constant = Plan::new(2, 2, 2).unwrap();
    let one = verify::stages(&StagedPlan::from(constant), &config, Tolerance::default()).unwrap();
    assert_eq!(one.stages.len(), 1);
    assert_eq!(
        one.stages[0].check,
        verify::equivalence(&constant, &config, Tolerance::default()).unwrap()
    );
}

#[test]
fn dumps_name_the_stage_and_accumulation_of_every_attempt() {
    let dir = std::env::temp_dir().join(format!("accum-stage-dump-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut config = small(64);
    config.schedule.total = Some("8 updates".parse().unwrap());
    let plan = three_stages();
    let mut engine = Engine::new(&plan, &config).unwrap();
    let mut dump = DumpWriter::create(&dir, &engine).unwrap();
    engine
        .run(&mut RunOptions {
            observers: vec![&mut dump],
            ..RunOptions::default()
        })
        .unwrap();
    let read = |path: std::path::PathBuf| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    let manifest = read(dir.join("manifest.json"));
    assert_eq!(manifest["format"], "accum-dump/1");
    assert_eq!(manifest["plan"]["accumulation"], 4);
    assert_eq!(
        manifest["stages"],
        serde_json::json!([
            {"accumulation": 1, "global_batch": 4, "first_update": 1, "last_update": 4},
            {"accumulation": 2, "global_batch": 8, "first_update": 5, "last_update": 6},
            {"accumulation": 4, "global_batch": 16, "first_update": 7, "last_update": null},
        ])
    );
    for attempt in 1..=8u64 {
        let folder = dir.join(format!("update-{attempt:06}"));
        let stats = read(folder.join("stats.json"));
        let stage = plan.stage_index_at(Updates::new(attempt - 1));
        let a = plan.stages()[stage].plan().accumulation();
        assert_eq!(stats["stage"], stage, "attempt {attempt}");
        assert_eq!(stats["accumulation"], a);
        for replica in 0..2 {
            let files = (0..8)
                .filter(|i| folder.join(format!("r{replica}-m{i}-tokens.npy")).is_file())
                .count() as u64;
            assert_eq!(files, a, "attempt {attempt}, replica {replica}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Reports and stats lines written before stages existed still read: the
/// stage defaults to 0 and the stage list to empty.
#[test]
fn reports_without_stages_still_read() {
    let report = run(three_stages(), &small(64)).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
    let back: RunReport = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(back.stages, report.stages);
    let stages = |r: &RunReport| r.updates.iter().map(|u| u.stage).collect::<Vec<_>>();
    assert_eq!(stages(&back), stages(&report));
    assert_eq!(stages(&back), [0, 0, 0, 0, 1, 1, 2, 2, 2, 2]);
    json.as_object_mut().unwrap().remove("stages");
    for u in json["updates"].as_array_mut().unwrap() {
        u.as_object_mut().unwrap().remove("stage");
    }
    let old: RunReport = serde_json::from_value(json).unwrap();
    assert!(old.stages.is_empty());
    assert!(old.updates.iter().all(|u| u.stage == 0));
}
