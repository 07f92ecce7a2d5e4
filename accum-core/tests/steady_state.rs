//! No allocation in the steady state: after the first group has sized every
//! buffer, an update attempt allocates nothing but the packing buffers
//! matrixmultiply allocates and frees inside each matrix product (one per
//! product; it takes no buffer from its caller). With a batch ramp-up, the
//! buffers are sized for the largest stage up front, so a stage change
//! allocates nothing either. Counted with a global allocator, so this
//! binary holds these tests, and it runs without the test harness: the
//! harness's own threads would allocate while the updates are counted.

use std::alloc::System;

use accum_core::engine::{Engine, RunOptions};
use accum_core::plan::{Plan, StageSpec, StagedPlan};
use accum_core::settings::{DataSection, EngineConfig, ModelSection};
use accum_core::tensor::gemm_calls;
use accum_core::{Span, Updates};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn main() {
    // The counter sees every thread: the worker pool of an engine dropped
    // just before may still be winding its threads down, so the test with
    // the longest warm-up runs last.
    stage_changes_allocate_nothing_of_their_own();
    updates_after_the_first_group_allocate_nothing_of_their_own();
}

fn config() -> EngineConfig {
    EngineConfig {
        data: DataSection {
            examples: 40,
            min_len: 3,
            max_len: 20,
            vocab: 32,
            ..DataSection::default()
        },
        model: ModelSection { hidden: 8, ffn: 16 },
        ..EngineConfig::default()
    }
}

/// Runs `warm` update attempts, then counts the allocations of each of the
/// next `counted` ones and checks that they are only the matrix products'.
fn allocations_after(engine: &mut Engine, warm: usize, counted: usize, what: &str) {
    let mut options = RunOptions::default();
    for _ in 0..warm {
        engine.step(&mut options).expect("an update");
    }
    let mut per_step = Vec::new();
    for _ in 0..counted {
        let gemms = gemm_calls();
        let region = Region::new(GLOBAL);
        engine.step(&mut options).expect("an update");
        let stats = region.change();
        per_step.push((
            stats.allocations as u64,
            stats.reallocations,
            gemm_calls() - gemms,
        ));
    }
    for (i, (allocations, reallocations, gemms)) in per_step.into_iter().enumerate() {
        assert_eq!(
            (allocations, reallocations),
            (gemms, 0),
            "{what}, attempt {}: {allocations} allocations for {gemms} products",
            warm + i + 1
        );
    }
}

fn updates_after_the_first_group_allocate_nothing_of_their_own() {
    for (m, a, d) in [(4, 2, 1), (2, 3, 2)] {
        let plan = Plan::new(m, a, d).expect("a plan");
        let mut engine = Engine::new(plan, &config())
            .expect("an engine")
            .with_threads(1);
        // Two epochs' worth of warm-up: every buffer sized, optimizer state allocated.
        allocations_after(&mut engine, 12, 20, &format!("m {m}, A {a}, D {d}"));
    }
}

/// A ramp-up A = 1 → 3 → 2 (m = 2, D = 2) over 40 examples: after the first
/// group, the attempts across both stage changes (at updates 4 and 7) and
/// the epochs' ends allocate nothing of their own.
fn stage_changes_allocate_nothing_of_their_own() {
    let base = Plan::new(2, 2, 2).expect("a plan");
    let stages = StagedPlan::from_specs(
        &base,
        &[
            StageSpec::accumulation(1).until(Span::of(Updates::new(3))),
            StageSpec::accumulation(3).until(Span::of(Updates::new(6))),
            StageSpec::accumulation(2),
        ],
    )
    .expect("valid stages");
    let mut engine = Engine::new(&stages, &config())
        .expect("an engine")
        .with_threads(1);
    allocations_after(&mut engine, 1, 20, "A = 1 → 3 → 2");
    let applied: Vec<u64> = engine
        .stage_counters()
        .iter()
        .map(|s| s.applied_updates.get())
        .collect();
    assert_eq!(
        applied,
        [3, 3, 15],
        "the counted attempts cross both stages"
    );
}
