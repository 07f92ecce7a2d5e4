//! The engine's state: a run stopped at any update boundary (or inside a
//! group) and resumed through the checkpoint files gives the same weights,
//! optimizer state and per-update report, bit for bit, in fp16 with
//! skipped attempts, under a ramp-up and for D ∈ {1, 2, 4}; an elastic
//! resume (D 2 → 1, m 8 → 4) draws the same examples per update; a state
//! of other settings, batch, `seq_len` or format is refused.

use super::super::tests::small_for;
use super::*;
use crate::engine::{Fault, RunOptions};
use crate::plan::{Plan, StageSpec, StagedPlan};
use crate::settings::{Normalization, OptimizerKind, PrecisionMode};
use crate::units::Updates;

fn bits(t: &Tensors) -> Vec<u32> {
    t.slices()
        .flat_map(|s| s.iter().map(|v| v.to_bits()))
        .collect()
}

/// Through the files, as a checkpoint holds it.
fn through_files(state: &EngineState) -> EngineState {
    let (json, bytes) = state.to_files();
    EngineState::from_files(&json, &bytes).unwrap()
}

/// Runs `plan` to the end, stopping at `stop_at` applied updates and
/// resuming a new engine from the state there.
fn resumed(plan: &StagedPlan, config: &EngineConfig, stop_at: u64) -> (Tensors, RunReport) {
    let mut first = Engine::new(plan.clone(), config).unwrap();
    let paused = first
        .run_until(&mut RunOptions::default(), Updates::new(stop_at))
        .unwrap();
    assert!(paused.is_none(), "paused before the end");
    let state = through_files(&first.state());
    let mut second = Engine::new(plan.clone(), config).unwrap();
    assert_eq!(second.resume(state).unwrap(), None, "the same plan");
    let report = second.run(&mut RunOptions::default()).unwrap();
    (second.model().params().clone(), report)
}

fn whole(plan: &StagedPlan, config: &EngineConfig) -> (Tensors, RunReport) {
    let mut engine = Engine::new(plan.clone(), config).unwrap();
    let report = engine.run(&mut RunOptions::default()).unwrap();
    (engine.model().params().clone(), report)
}

fn assert_same_run(a: &(Tensors, RunReport), b: &(Tensors, RunReport)) {
    assert_eq!(bits(&a.0), bits(&b.0), "the same weights, bit for bit");
    let json = |r: &RunReport| serde_json::to_string(&r.updates).unwrap();
    assert_eq!(json(&a.1), json(&b.1), "the same attempts");
    assert_eq!(a.1.counters, b.1.counters);
    assert_eq!(a.1.summary, b.1.summary);
    assert_eq!(a.1.loss_curve, b.1.loss_curve);
    assert_eq!(a.1.stages, b.1.stages);
}

#[test]
fn resumed_runs_equal_the_whole_run_for_every_d() {
    for d in [1, 2, 4] {
        let mut config = small_for(48, "14 updates");
        config.optimizer.kind = OptimizerKind::AdamW;
        let plan: StagedPlan = Plan::new(2, 2, d).unwrap().into();
        let reference = whole(&plan, &config);
        for stop_at in [1, 5, 13] {
            let again = resumed(&plan, &config, stop_at);
            assert_same_run(&reference, &again);
            let segments = &again.1.segments;
            assert_eq!(segments.len(), 2, "D = {d}");
            assert!(segments[1].resumed);
            assert_eq!(segments[1].updates, Updates::new(stop_at));
        }
    }
}

#[test]
fn fp16_with_skipped_attempts_resumes_with_its_scale_and_streak() {
    let mut config = small_for(32, "6 updates");
    config.precision.mode = PrecisionMode::Fp16;
    config.precision.loss_scale.init = 2f64.powi(30);
    config.precision.loss_scale.growth_interval = 2;
    let plan: StagedPlan = Plan::new(2, 2, 2).unwrap().into();
    let reference = whole(&plan, &config);
    assert!(
        reference.1.counters.skipped_updates > 0,
        "some attempts skip"
    );
    for stop_at in [1, 2, 4] {
        assert_same_run(&reference, &resumed(&plan, &config, stop_at));
    }
}

#[test]
fn a_ramp_up_resumes_in_its_stage() {
    let base = Plan::new(2, 4, 2).unwrap();
    let specs = [
        StageSpec::accumulation(1).until("16 examples".parse().unwrap()),
        StageSpec::accumulation(2).until("32 examples".parse().unwrap()),
        StageSpec::accumulation(4),
    ];
    let plan = StagedPlan::from_specs(&base, &specs).unwrap();
    let config = small_for(64, "12 updates");
    let reference = whole(&plan, &config);
    for stop_at in [3, 4, 5, 7] {
        assert_same_run(&reference, &resumed(&plan, &config, stop_at));
    }
}

#[test]
fn a_stop_inside_a_group_leaves_the_boundary_before_it() {
    let config = small_for(32, "6 updates");
    let plan: StagedPlan = Plan::new(2, 3, 2).unwrap().into();
    let reference = whole(&plan, &config);
    let mut first = Engine::new(plan.clone(), &config).unwrap();
    first
        .run_until(&mut RunOptions::default(), Updates::new(3))
        .unwrap();
    let boundary = first.state();
    // The next group fails inside: nothing of it may reach the state.
    first.inject_failure(Fault {
        attempt: 4,
        replica: 1,
        microbatch: 1,
    });
    let stop = std::sync::atomic::AtomicBool::new(false);
    let _ = first.run(&mut RunOptions {
        stop: Some(&stop),
        ..RunOptions::default()
    });
    let mut second = Engine::new(plan.clone(), &config).unwrap();
    second.resume(through_files(&boundary)).unwrap();
    let report = second.run(&mut RunOptions::default()).unwrap();
    assert_same_run(&reference, &(second.model().params().clone(), report));
}

/// Every update's loss and example ids, stepping to the end.
fn per_update(engine: &mut Engine) -> Vec<(f64, Vec<u64>)> {
    let mut out = Vec::new();
    while let Some(stats) = engine.step(&mut RunOptions::default()).unwrap() {
        let mut ids = engine.last_group_ids().to_vec();
        ids.sort_unstable();
        out.push((stats.loss, ids));
    }
    out
}

fn assert_close(a: &[(f64, Vec<u64>)], b: &[(f64, Vec<u64>)]) {
    assert_eq!(a.len(), b.len());
    for (i, ((la, ia), (lb, ib))) in a.iter().zip(b).enumerate() {
        assert_eq!(ia, ib, "the same examples in update {}", i + 1);
        let rel = (la - lb).abs() / la.abs().max(f64::MIN_POSITIVE);
        assert!(rel <= 1e-6, "update {}: {la} against {lb}", i + 1);
    }
}

#[test]
fn elastic_resumes_keep_the_examples_and_the_losses() {
    let config = small_for(64, "10 updates");
    for (before, after) in [
        (Plan::new(4, 2, 2).unwrap(), Plan::new(4, 4, 1).unwrap()),
        (Plan::new(8, 2, 1).unwrap(), Plan::new(4, 4, 1).unwrap()),
    ] {
        let mut reference = Engine::new(before, &config).unwrap();
        let all = per_update(&mut reference);
        let mut first = Engine::new(before, &config).unwrap();
        first
            .run_until(&mut RunOptions::default(), Updates::new(4))
            .unwrap();
        let mut second = Engine::new(after, &config).unwrap();
        let changed = second.resume(through_files(&first.state())).unwrap();
        assert_eq!(changed, Some(PlanSummary::from(&before)), "recorded");
        let rest = per_update(&mut second);
        assert_close(&all[4..], &rest);
        let segment = &second.report().segments[1];
        assert_eq!(segment.changed_from, Some(PlanSummary::from(&before)));
        assert_eq!(segment.plan, PlanSummary::from(&after));
    }
}

fn refusal(config: &EngineConfig, plan: Plan) -> StateError {
    let mut first = Engine::new(Plan::new(2, 2, 2).unwrap(), &small_for(32, "6 updates")).unwrap();
    first
        .run_until(&mut RunOptions::default(), Updates::new(2))
        .unwrap();
    let mut second = Engine::new(plan, config).unwrap();
    second.resume(first.state()).unwrap_err()
}

#[test]
fn other_settings_batch_or_seq_len_are_refused_with_what_differs() {
    let mut config = small_for(32, "6 updates");
    config.loss.normalization = Normalization::PerExample;
    let err = refusal(&config, Plan::new(2, 2, 2).unwrap());
    assert_eq!(err.code(), Some(Code::Normalization));
    assert!(
        err.to_string()
            .contains("`loss.normalization` is \"per_token\" there and \"per_example\" here"),
        "{err}"
    );

    let mut config = small_for(32, "6 updates");
    config.data.seed = 6;
    let err = refusal(&config, Plan::new(2, 2, 2).unwrap());
    assert!(
        err.to_string()
            .contains("`data.seed` is 5 there and 6 here"),
        "{err}"
    );

    let config = small_for(32, "6 updates");
    let err = refusal(&config, Plan::new(2, 4, 2).unwrap());
    assert_eq!(err.code(), Some(Code::GlobalBatch));
    assert!(
        err.to_string()
            .contains("under B 8, and this plan has B 16"),
        "{err}"
    );

    let err = refusal(
        &config,
        Plan::new(2, 2, 2).unwrap().with_seq_len(9).unwrap(),
    );
    assert_eq!(err.code(), Some(Code::SeqLen));
}

#[test]
fn another_format_or_altered_bytes_are_refused() {
    let mut engine = Engine::new(Plan::new(2, 2, 1).unwrap(), &small_for(16, "3 updates")).unwrap();
    engine
        .run_until(&mut RunOptions::default(), Updates::new(1))
        .unwrap();
    let (json, mut bytes) = engine.state().to_files();
    let older = json.replace(CHECKPOINT_FORMAT, "accum-checkpoint/0");
    let err = EngineState::from_files(&older, &bytes).unwrap_err();
    assert!(
        matches!(err, StateError::Format { found: Some(ref f) } if f == "accum-checkpoint/0"),
        "{err}"
    );
    bytes[0] ^= 1;
    let err = EngineState::from_files(&json, &bytes).unwrap_err();
    assert!(err.to_string().contains("checksum"), "{err}");
    bytes.pop();
    let err = EngineState::from_files(&json, &bytes).unwrap_err();
    assert!(err.to_string().contains("bytes"), "{err}");
}
