//! No allocation in the steady state: after the first group has sized every
//! buffer, an update attempt allocates nothing at all (the matrix products
//! pack into a buffer each thread allocates at its first product and then
//! keeps). With a batch ramp-up, the
//! buffers are sized for the largest stage up front, so a stage change
//! allocates nothing either. Counted with a global allocator from inside
//! `Engine::run`, between one attempt's end and the next, so this binary
//! holds these tests, and it runs without the test harness: the harness's
//! own threads would allocate while the updates are counted.

use std::alloc::System;

use accum_core::engine::{Engine, Observer, RunOptions};
use accum_core::plan::{Plan, StageSpec, StagedPlan};
use accum_core::report::{Counters, UpdateStats};
use accum_core::settings::{DataSection, EngineConfig, ModelSection, ScheduleSection};
use accum_core::{Span, Updates};
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn main() {
    stage_changes_allocate_nothing_of_their_own();
    updates_after_the_first_group_allocate_nothing_of_their_own();
}

/// A tiny model on 40 examples, running `updates` update attempts.
fn config_of(updates: u64) -> EngineConfig {
    let schedule = ScheduleSection {
        total: Some(Span::of(Updates::new(updates))),
        ..ScheduleSection::default()
    };
    EngineConfig {
        schedule,
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

/// Waits (up to five seconds) until the process runs no more than `threads`
/// threads. The counter sees every thread, and the worker pool of an engine
/// dropped just before winds its threads down on its own time: their exit
/// (the thread pool's bookkeeping unregistering them) would be counted as
/// the next engine's allocations.
fn settle(threads: usize) {
    let running = || {
        std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|status| {
                status
                    .lines()
                    .find_map(|line| line.strip_prefix("Threads:"))
                    .and_then(|n| n.trim().parse::<usize>().ok())
            })
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while running().is_some_and(|n| n > threads) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Records, after each update attempt, the allocations and reallocations
/// so far, into room reserved up front.
struct Meter {
    seen: Vec<(usize, usize)>,
}

impl Observer for Meter {
    fn on_update(&mut self, _stats: &UpdateStats, _counters: &Counters) {
        let stats = GLOBAL.stats();
        self.seen.push((stats.allocations, stats.reallocations));
    }
}

/// Runs `warm + counted` update attempts through `Engine::run` (the whole
/// loop inside the engine's thread pool, as `accum run` runs it), and
/// checks that each of the last `counted` allocates nothing, measured from
/// the end of one attempt to the end of the next.
fn allocations_after(engine: &mut Engine, warm: usize, counted: usize, what: &str) {
    settle(1);
    let mut meter = Meter {
        seen: Vec::with_capacity(warm + counted + 1),
    };
    engine
        .run(&mut RunOptions::default().observe(&mut meter))
        .expect("a run");
    assert_eq!(
        meter.seen.len(),
        warm + counted,
        "{what}: the run's attempts"
    );
    for (i, pair) in meter.seen.windows(2).enumerate().skip(warm - 1) {
        let [(a0, r0), (a1, r1)] = [pair[0], pair[1]];
        assert_eq!(
            (a1 - a0, r1 - r0),
            (0, 0),
            "{what}, attempt {}: allocations and reallocations",
            i + 2
        );
    }
}

fn updates_after_the_first_group_allocate_nothing_of_their_own() {
    for (m, a, d) in [(4, 2, 1), (2, 3, 2)] {
        let plan = Plan::new(m, a, d).expect("a plan");
        let mut engine = Engine::new(plan, &config_of(32))
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
    let mut engine = Engine::new(&stages, &config_of(21))
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
