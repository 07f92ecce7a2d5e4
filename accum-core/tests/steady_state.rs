//! No allocation in the steady state: after the first group has sized every
//! buffer, an update attempt allocates nothing but the packing buffers
//! matrixmultiply allocates and frees inside each matrix product (one per
//! product; it takes no buffer from its caller). Counted with a global
//! allocator, so this binary holds this one test, and it runs without the
//! test harness: the harness's own threads would allocate while the
//! updates are counted.

use std::alloc::System;

use accum_core::engine::{Engine, RunOptions};
use accum_core::plan::Plan;
use accum_core::settings::{DataSection, EngineConfig, ModelSection};
use accum_core::tensor::gemm_calls;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn main() {
    updates_after_the_first_group_allocate_nothing_of_their_own();
}

fn updates_after_the_first_group_allocate_nothing_of_their_own() {
    let config = EngineConfig {
        data: DataSection {
            examples: 40,
            min_len: 3,
            max_len: 20,
            vocab: 32,
            ..DataSection::default()
        },
        model: ModelSection { hidden: 8, ffn: 16 },
        ..EngineConfig::default()
    };
    for (m, a, d) in [(4, 2, 1), (2, 3, 2)] {
        let plan = Plan::new(m, a, d).expect("a plan");
        let mut engine = Engine::new(&plan, &config)
            .expect("an engine")
            .with_threads(1);
        let mut options = RunOptions::default();
        // Two epochs' worth of warm-up: every buffer sized, optimizer state allocated.
        for _ in 0..12 {
            engine.step(&mut options).expect("an update");
        }
        let mut per_step = Vec::new();
        for _ in 0..20 {
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
        for (allocations, reallocations, gemms) in per_step {
            assert_eq!(
                (allocations, reallocations),
                (gemms, 0),
                "m {m}, A {a}, D {d}: {allocations} allocations for {gemms} products"
            );
        }
    }
}
