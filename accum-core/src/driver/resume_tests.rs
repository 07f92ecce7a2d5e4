//! Tests of a resume: a driver restored from its [`DriverState`], after a
//! JSON round trip, at every update boundary and inside every group, gives
//! the uninterrupted run's groups, denominators, learning rates, progress,
//! loss scales and notes bit for bit; under another plan of the same
//! global batch, the same examples in every update; and every mismatch is
//! refused with what differs.

use std::collections::BTreeSet;

use proptest::prelude::*;

use super::*;
use crate::plan::{StageSpec, StagedPlan};
use crate::report::RunReport;
use crate::scaler::{LossScaler, ScalerState};
use crate::settings::{LogAxis, LossScaleSettings, Normalization, ScheduleKind};
use crate::units::{Examples, UnitKind};

/// Supervised tokens of example `id`: variable, 0 for some.
fn tokens_of(id: usize) -> u64 {
    if id % 11 == 4 {
        0
    } else {
        (id as u64 * 7) % 13 + 1
    }
}

/// How a test run is set up: everything a resumed driver is built with.
#[derive(Clone)]
struct Setup {
    plan: StagedPlan,
    examples: usize,
    seed: u64,
    policy: LastGroup,
    total: Span,
    /// A schedule: none, in updates, or counted on the run in tokens.
    schedule: Sched,
    /// Attempts (1-based) whose gradients are not finite.
    skip: fn(u64) -> bool,
}

#[derive(Clone, Copy, PartialEq)]
enum Sched {
    None,
    Updates,
    Counted,
}

impl Setup {
    fn new(plan: impl Into<StagedPlan>, examples: usize, total: u64) -> Setup {
        Setup {
            plan: plan.into(),
            examples,
            seed: 5,
            policy: LastGroup::Process,
            total: Span::of(Updates::new(total)),
            schedule: Sched::Updates,
            skip: |_| false,
        }
    }

    fn schedule(&self) -> Option<Schedule> {
        match self.schedule {
            Sched::None => None,
            Sched::Updates => Some(Schedule::new(
                ScheduleKind::Cosine,
                0.5,
                Updates::new(17.min(self.total.value() / 2)),
                Updates::new(self.total.value()),
            )),
            Sched::Counted => Some(
                Schedule::counted(
                    ScheduleKind::Linear,
                    0.5,
                    Span::new(900, UnitKind::Token),
                    Span::new(6000, UnitKind::Token),
                    self.plan.clone(),
                )
                .expect("a counted schedule"),
            ),
        }
    }

    fn builder(&self, rank: usize) -> DriverBuilder {
        let mut b = Driver::builder(self.plan.clone(), self.examples)
            .seed(self.seed)
            .last_group(self.policy)
            .rank(rank)
            .total(self.total);
        if let Some(s) = self.schedule() {
            b = b.schedule(s);
        }
        b
    }

    fn replicas(&self) -> usize {
        self.plan.first_plan().replicas() as usize
    }

    fn drivers(&self, resume: Option<&DriverState>) -> Vec<Driver> {
        (0..self.replicas())
            .map(|rank| {
                let b = self.builder(rank);
                match resume {
                    Some(state) => b.resume(state.clone()),
                    None => b,
                }
                .build()
                .expect("a driver")
            })
            .collect()
    }
}

fn scaler() -> LossScaler {
    LossScaler::dynamic(&LossScaleSettings {
        init: 1024.0,
        growth_factor: 2.0,
        backoff_factor: 0.5,
        growth_interval: 7,
    })
}

/// One microbatch as a rank sees it: replica, index, example ids, sync.
type Microbatch = (usize, usize, Vec<usize>, bool);

/// What one attempt looked like, on every rank, bit for bit.
#[derive(Clone, Debug, PartialEq)]
struct Seen {
    attempt: u64,
    epoch: u64,
    stage: usize,
    partial: bool,
    /// Per rank: (replica, index, ids, sync) of each of its microbatches.
    micro: Vec<Vec<Microbatch>>,
    /// Denominator bits under per-token, per-example and sum.
    denominators: [u64; 3],
    /// The learning rate of the attempt, as bits.
    lr: Option<u64>,
    /// The loss scale during the attempt, as bits.
    scale: u64,
    progress: Progress,
    every: bool,
}

/// A saved point of a run: the JSON of the state (scaler included), and
/// the attempts finished before it.
struct Saved {
    json: String,
    finished: usize,
    inside: bool,
}

/// Drives `drivers` to the end from `scaler`, recording every attempt;
/// with `save`, takes a state before every group, and inside it.
fn drive(
    setup: &Setup,
    drivers: &mut [Driver],
    scaler: &mut LossScaler,
    save: bool,
) -> (Vec<Seen>, Vec<Saved>) {
    let mut seen = Vec::new();
    let mut saved = Vec::new();
    let take = |d: &Driver, s: &LossScaler| {
        let state = d.state().with_scaler(s);
        serde_json::to_string(&state).expect("a state serializes")
    };
    loop {
        if save {
            saved.push(Saved {
                json: take(&drivers[0], scaler),
                finished: seen.len(),
                inside: false,
            });
        }
        let groups: Vec<Option<Group>> = drivers
            .iter_mut()
            .map(|d| d.next_group().expect("a group"))
            .collect();
        if groups.iter().all(Option::is_none) {
            break;
        }
        let mut groups: Vec<Group> = groups
            .into_iter()
            .map(|g| g.expect("every rank has the group"))
            .collect();
        if save {
            saved.push(Saved {
                json: take(&drivers[0], scaler),
                finished: seen.len(),
                inside: true,
            });
        }
        let counts: Vec<GroupCounts> = groups.iter_mut().map(|g| g.count_all(tokens_of)).collect();
        assert!(counts.windows(2).all(|w| w[0] == w[1]));
        let first = &groups[0];
        let attempt = first.attempt();
        let denominators = [
            Normalization::PerToken,
            Normalization::PerExample,
            Normalization::Sum,
        ]
        .map(|n| counts[0].denominator(n).value.to_bits());
        let micro = groups
            .iter()
            .map(|g| {
                g.microbatches()
                    .map(|mb| (mb.replica, mb.index, mb.ids.to_vec(), mb.sync))
                    .collect()
            })
            .collect();
        let (epoch, stage, partial) = (first.epoch(), first.stage(), first.is_partial());
        let finite = !(setup.skip)(attempt);
        let outcome = Outcome::from_finite(finite);
        let lr = drivers[0].lr().map(f64::to_bits);
        let scale = scaler.scale().to_bits();
        let mut progress = Vec::new();
        for (d, g) in drivers.iter_mut().zip(groups) {
            progress.push(*d.finish(g, outcome).expect("finished"));
        }
        assert!(progress.windows(2).all(|w| w[0] == w[1]));
        scaler.update(finite);
        seen.push(Seen {
            attempt,
            epoch,
            stage,
            partial,
            micro,
            denominators,
            lr,
            scale,
            progress: progress[0],
            every: drivers[0].every(Examples::new(40)),
        });
    }
    (seen, saved)
}

/// Resumes from every saved point of `setup`'s run and checks that the
/// rest of the run is the uninterrupted one's, bit for bit.
fn resumes_exactly(setup: &Setup) {
    let mut drivers = setup.drivers(None);
    let mut s = scaler();
    let (whole, saved) = drive(setup, &mut drivers, &mut s, true);
    assert!(whole.len() > 10);
    let notes = drivers[0].notes();
    for point in &saved {
        let state: DriverState = serde_json::from_str(&point.json).expect("a state reads back");
        assert_eq!(state.progress().attempts, point.finished as u64);
        let mut resumed = setup.drivers(Some(&state));
        let mut s = scaler();
        s.restore(state.scaler().expect("the scaler was saved"));
        let (rest, _) = drive(setup, &mut resumed, &mut s, false);
        assert_eq!(
            rest,
            whole[point.finished..],
            "resumed after {} attempts{}",
            point.finished,
            if point.inside { ", inside a group" } else { "" }
        );
        assert_eq!(resumed[0].notes(), notes);
        assert_eq!(resumed[0].progress(), drivers[0].progress());
        assert_eq!(resumed[0].dropped(), drivers[0].dropped());
    }
}

#[test]
fn a_resume_at_every_boundary_and_inside_every_group_is_the_same_run() {
    for d in [1, 2, 4] {
        let mut setup = Setup::new(Plan::new(2, 3, d).expect("a plan"), 100, 120);
        setup.skip = |a| a % 13 == 5 || a == 6;
        resumes_exactly(&setup);
    }
}

#[test]
fn a_resume_under_a_ramp_up_with_skips_and_drop_is_the_same_run() {
    let base = Plan::new(2, 4, 2).expect("a plan");
    let specs = [
        StageSpec::accumulation(1).until(Span::of(Updates::new(10))),
        StageSpec::accumulation(2).until(Span::of(Updates::new(30))),
        StageSpec::accumulation(4),
    ];
    let mut setup = Setup::new(
        StagedPlan::from_specs(&base, &specs).expect("stages"),
        90,
        110,
    );
    setup.policy = LastGroup::Drop;
    setup.skip = |a| a % 9 == 2;
    resumes_exactly(&setup);
    // The same with a schedule counted on the run's tokens, and a length in
    // examples reached inside an update.
    setup.schedule = Sched::Counted;
    setup.total = Span::new(1900, UnitKind::Example);
    setup.policy = LastGroup::Process;
    resumes_exactly(&setup);
}

#[test]
fn the_scalers_growth_streak_survives_the_resume() {
    // Attempts 1..=3 back off; then 7 clean attempts grow the scale. A
    // state after attempt 6 holds a streak of 3: the resumed scaler grows
    // at attempt 10 like the uninterrupted one, not at attempt 13.
    let mut setup = Setup::new(Plan::new(2, 2, 1).expect("a plan"), 40, 14);
    setup.skip = |a| a <= 3;
    let mut drivers = setup.drivers(None);
    let mut s = scaler();
    let (whole, saved) = drive(&setup, &mut drivers, &mut s, true);
    let point = saved
        .iter()
        .find(|p| p.finished == 6 && !p.inside)
        .expect("a point after attempt 6");
    let state: DriverState = serde_json::from_str(&point.json).expect("a state");
    assert_eq!(
        state.scaler(),
        Some(ScalerState {
            scale: 128.0,
            growth_tracker: 3
        })
    );
    let mut resumed = setup.drivers(Some(&state));
    let mut s = scaler();
    s.restore(state.scaler().expect("saved"));
    let (rest, _) = drive(&setup, &mut resumed, &mut s, false);
    assert_eq!(rest, whole[6..]);
    let scales: Vec<f64> = whole.iter().map(|w| f64::from_bits(w.scale)).collect();
    assert_eq!(scales[10], 256.0, "grown after the 7th clean attempt");
}

/// The set of example ids of every applied update, with its learning rate.
fn updates_of(setup: &Setup, drivers: &mut [Driver]) -> Vec<(BTreeSet<usize>, Option<u64>)> {
    let mut s = scaler();
    let (seen, _) = drive(setup, drivers, &mut s, false);
    seen.iter()
        .filter(|w| !(setup.skip)(w.attempt))
        .map(|w| {
            let ids = w
                .micro
                .iter()
                .flatten()
                .flat_map(|(_, _, ids, _)| ids.iter().copied())
                .collect();
            (ids, w.lr)
        })
        .collect()
}

#[test]
fn an_elastic_resume_keeps_every_later_updates_examples() {
    // D 2 → 1 with A 4 → 8, and m 8 → 4 with A doubled: B stays 16.
    for (before, after) in [
        (Plan::new(2, 4, 2), Plan::new(2, 8, 1)),
        (Plan::new(8, 1, 2), Plan::new(4, 2, 2)),
    ] {
        let (before, after) = (before.expect("a plan"), after.expect("a plan"));
        for schedule in [Sched::Updates, Sched::Counted] {
            let mut setup = Setup::new(before, 70, 40);
            setup.schedule = schedule;
            setup.skip = |a| a == 9;
            let whole = updates_of(&setup, &mut setup.drivers(None));
            for stop in [1, 4, 13, 25] {
                let mut drivers = setup.drivers(None);
                let mut s = scaler();
                let mut done = 0;
                while drivers[0].progress().updates.get() < stop {
                    let mut groups: Vec<Group> = drivers
                        .iter_mut()
                        .map(|d| d.next_group().expect("a group").expect("one"))
                        .collect();
                    for g in &mut groups {
                        g.count_all(tokens_of);
                    }
                    let outcome = Outcome::from_finite(!(setup.skip)(groups[0].attempt()));
                    for (d, g) in drivers.iter_mut().zip(groups) {
                        d.finish(g, outcome).expect("finished");
                    }
                    s.update(outcome == Outcome::Applied);
                    done += 1;
                }
                assert!(done > 0);
                let json = serde_json::to_string(&drivers[0].state()).expect("a state");
                let state: DriverState = serde_json::from_str(&json).expect("a state");
                let mut moved = setup.clone();
                moved.plan = after.into();
                let mut resumed = moved.drivers(Some(&state));
                assert!(
                    !resumed[0]
                        .notes()
                        .iter()
                        .any(|n| matches!(n, DriverNote::GlobalBatchChanged { .. })),
                    "B is kept: no change to note"
                );
                let rest = updates_of(&moved, &mut resumed);
                assert_eq!(
                    rest,
                    whole[stop as usize..],
                    "{before:?} → {after:?} after update {stop}"
                );
            }
        }
    }
}

fn refusal(setup: &Setup, state: &DriverState) -> ResumeError {
    match setup.builder(0).resume(state.clone()).build() {
        Err(DriverError::Resume(e)) => e,
        other => panic!("not refused: {other:?}"),
    }
}

/// A state taken after 7 updates of a plan of B = 12 over 50 examples.
fn saved_state() -> (Setup, DriverState) {
    let setup = Setup::new(Plan::new(2, 3, 2).expect("a plan"), 50, 30);
    let mut drivers = setup.drivers(None);
    for _ in 0..7 {
        let mut groups: Vec<Group> = drivers
            .iter_mut()
            .map(|d| d.next_group().expect("a group").expect("one"))
            .collect();
        for (d, mut g) in drivers.iter_mut().zip(groups.drain(..)) {
            g.count_all(tokens_of);
            d.finish(g, Outcome::Applied).expect("finished");
        }
    }
    let state = drivers[0].state();
    (setup, state)
}

#[test]
fn a_resume_that_would_be_another_run_is_refused_with_what_differs() {
    let (setup, state) = saved_state();
    let mut other = setup.clone();
    other.examples = 51;
    let e = refusal(&other, &state);
    assert!(matches!(e, ResumeError::Examples { saved: 50, now: 51 }));
    assert!(e.to_string().contains("over 50 examples"), "{e}");
    let mut other = setup.clone();
    other.seed = 6;
    let e = refusal(&other, &state);
    assert!(e.to_string().contains("resume with `.seed(5)`"), "{e}");
    let mut other = setup.clone();
    other.policy = LastGroup::Drop;
    let e = refusal(&other, &state);
    assert!(
        e.to_string()
            .contains("last_group \"process\", and this driver has \"drop\""),
        "{e}"
    );
    let mut other = setup.clone();
    other.plan = Plan::new(2, 3, 2)
        .and_then(|p| p.with_seq_len(64))
        .expect("a plan")
        .into();
    let e = refusal(&other, &state);
    assert!(
        e.to_string()
            .starts_with("the state was taken under seq_len none, and this driver's plan has 64"),
        "{e}"
    );
    assert_eq!(e.code(), Some(Code::SeqLen));
    // No schedule where there was one: the warmup would restart at 0.
    let mut other = setup.clone();
    other.schedule = Sched::None;
    let e = refusal(&other, &state);
    assert!(
        e.to_string()
            .starts_with("the state was taken with a schedule, and this driver has no schedule"),
        "{e}"
    );
    let mut other = setup.clone();
    other.schedule = Sched::Counted;
    let e = refusal(&other, &state);
    assert!(matches!(
        e,
        ResumeError::ScheduleKind {
            saved: false,
            now: true
        }
    ));
    // Another global batch: refused, then allowed and noted.
    let mut other = setup.clone();
    other.plan = Plan::new(2, 4, 2).expect("a plan").into();
    let e = refusal(&other, &state);
    assert_eq!(
        e.to_string(),
        "the state was taken after update 7 under B 12, and this driver's plan has B 16: another \
         global batch averages every later update over another number of examples; keep B \
         (change m, A or D so that m × A × D stays), or consent with \
         `.allow_global_batch_change()`, which the run's notes and report then record"
    );
    assert_eq!(e.code(), Some(Code::GlobalBatch));
    let driver = other
        .builder(0)
        .resume(state.clone())
        .allow_global_batch_change()
        .build()
        .expect("allowed");
    assert_eq!(
        driver.notes()[0],
        DriverNote::GlobalBatchChanged {
            update: Updates::new(7),
            from: 12,
            to: 16
        }
    );
    assert_eq!(
        driver.notes()[0].to_string(),
        "the run was resumed after update 7 with global batch 16 instead of 12 \
         (allow_global_batch_change): the updates after it average another number of examples"
    );
    // The change is kept in the next state, and noted after its resume.
    let again = other
        .builder(0)
        .resume(driver.state())
        .build()
        .expect("the same plan");
    assert_eq!(again.notes(), driver.notes());
    // The same B in another split is no change.
    let mut other = setup.clone();
    other.plan = Plan::new(3, 2, 2).expect("a plan").into();
    let driver = other.builder(1).resume(state).build().expect("B is kept");
    assert_eq!(driver.progress().updates, Updates::new(7));
}

#[test]
fn a_state_of_another_version_is_refused_when_read() {
    let (_, state) = saved_state();
    let mut value = serde_json::to_value(&state).expect("a state serializes");
    assert_eq!(value["version"], DRIVER_STATE_VERSION);
    value["version"] = 2.into();
    let e = serde_json::from_value::<DriverState>(value.clone()).expect_err("version 2");
    assert!(
        e.to_string()
            .contains("the driver state is of version 2, and this accum reads version 1"),
        "{e}"
    );
    value.as_object_mut().expect("an object").remove("version");
    let e = serde_json::from_value::<DriverState>(value.clone()).expect_err("no version");
    assert!(e.to_string().contains("has no `version`"), "{e}");
    // A version 1 state with a field it does not have is not misread.
    value["version"] = 1.into();
    value["cursor"] = 3.into();
    let e = serde_json::from_value::<DriverState>(value).expect_err("unknown field");
    assert!(e.to_string().contains("unknown field `cursor`"), "{e}");
    // The documented form: version, plan, data, progress and the rest.
    let text = serde_json::to_value(&state).expect("a state");
    let keys: Vec<&str> = text
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    for key in [
        "version",
        "plan",
        "data",
        "progress",
        "stage",
        "short",
        "total_end",
        "dropped",
        "schedule",
        "scaler",
    ] {
        assert!(keys.contains(&key), "{key} in {keys:?}");
    }
    // 50 examples in groups of 12: 4 full and a partial one of 2 in epoch
    // 0, then 2 groups of epoch 1.
    assert_eq!(text["data"]["index"], 24);
    assert_eq!(text["data"]["epoch"], 1);
}

/// Drives `setup` with a recorder, stopping after `stop` updates to save
/// the state and the report, resuming under `after` (the same plan when
/// `None`), and gives the finished reports of the whole and the resumed
/// run.
fn recorded(setup: &Setup, stop: u64, after: Option<Plan>) -> (RunReport, RunReport) {
    let run = |drivers: &mut Vec<Driver>, recorder: &mut Recorder, until: Option<u64>| {
        while until.is_none_or(|u| drivers[0].progress().updates.get() < u) {
            let groups: Vec<Option<Group>> = drivers
                .iter_mut()
                .map(|d| d.next_group().expect("a group"))
                .collect();
            if groups[0].is_none() {
                break;
            }
            let mut groups: Vec<Group> = groups.into_iter().flatten().collect();
            for g in &mut groups {
                g.count_all(tokens_of);
            }
            let attempt = groups[0].attempt();
            let outcome = Outcome::from_finite(!(setup.skip)(attempt));
            let mut rest = groups.split_off(1);
            for (d, g) in drivers[1..].iter_mut().zip(rest.drain(..)) {
                d.finish(g, outcome).expect("finished");
            }
            let group = groups.pop().expect("rank 0's group");
            recorder
                .finish(
                    &mut drivers[0],
                    group,
                    outcome,
                    Step::loss(3.0 / attempt as f64).grad_norm(attempt as f64),
                )
                .expect("recorded");
        }
    };
    let new = |d: &Driver| {
        Recorder::new(d, Normalization::PerToken)
            .log(LogAxis::Tokens, Span::new(150, UnitKind::Token))
    };
    let mut drivers = setup.drivers(None);
    let mut recorder = new(&drivers[0]);
    run(&mut drivers, &mut recorder, None);
    let whole = recorder.report(&drivers[0]);

    let mut drivers = setup.drivers(None);
    let mut recorder = new(&drivers[0]);
    run(&mut drivers, &mut recorder, Some(stop));
    let state = serde_json::to_string(&drivers[0].state()).expect("a state");
    let report = recorder.report(&drivers[0]).to_json();
    let state: DriverState = serde_json::from_str(&state).expect("a state");
    let report: RunReport = serde_json::from_str(&report).expect("a report");
    let mut moved = setup.clone();
    if let Some(plan) = after {
        moved.plan = plan.into();
    }
    let mut drivers = moved.drivers(Some(&state));
    let refused = Recorder::resume(&drivers[0], Normalization::PerExample, report.clone())
        .expect_err("another normalization");
    assert!(
        refused.to_string().starts_with(
            "the report's loss is normalized \"per_token\", and the recorder's \"per_example\""
        ),
        "{refused}"
    );
    let mut recorder =
        Recorder::resume(&drivers[0], Normalization::PerToken, report).expect("continued");
    run(&mut drivers, &mut recorder, None);
    (whole, recorder.report(&drivers[0]))
}

#[test]
fn a_continued_report_counts_the_whole_run_and_records_its_segments() {
    let mut setup = Setup::new(Plan::new(2, 4, 2).expect("a plan"), 70, 60);
    setup.skip = |a| a % 10 == 3;
    let (whole, resumed) = recorded(&setup, 23, None);
    assert_eq!(resumed.counters, whole.counters);
    assert_eq!(resumed.summary, whole.summary);
    for (r, w) in resumed.updates.iter().zip(&whole.updates) {
        assert_eq!(r, w);
    }
    assert_eq!(resumed.updates.len(), whole.updates.len());
    assert_eq!(resumed.loss_curve, whole.loss_curve);
    assert_eq!(resumed.stages, whole.stages);
    assert_eq!(resumed.warnings, whole.warnings);
    assert_eq!(whole.run_segments().len(), 1);
    let segments = resumed.run_segments();
    assert_eq!(segments.len(), 2);
    assert!(!segments[0].resumed && segments[1].resumed);
    assert_eq!(segments[1].updates, Updates::new(23));
    assert_eq!(segments[1].changed_from, None);
    // Under another plan of the same B, the segment says which.
    let (whole, elastic) = recorded(&setup, 23, Some(Plan::new(2, 8, 1).expect("a plan")));
    assert_eq!(
        elastic.counters.applied_updates,
        whole.counters.applied_updates
    );
    assert_eq!(elastic.counters.examples, whole.counters.examples);
    assert_eq!(elastic.summary, whole.summary);
    let segments = elastic.run_segments();
    assert_eq!(
        segments[1]
            .changed_from
            .map(|p| (p.accumulation, p.replicas)),
        Some((4, 2))
    );
    assert_eq!(
        (segments[1].plan.accumulation, segments[1].plan.replicas),
        (8, 1)
    );
    // Written and read back, the segments stay; a report without them is
    // one segment, from the start.
    let back: RunReport = serde_json::from_str(&elastic.to_json()).expect("a report");
    assert_eq!(back.run_segments(), segments);
    let mut old = serde_json::to_value(&whole).expect("a report");
    let object = old.as_object_mut().expect("an object");
    object.remove("recorder");
    assert!(
        !object.contains_key("segments"),
        "one segment is not written"
    );
    let old: RunReport = serde_json::from_value(old).expect("an older report reads");
    assert_eq!(old.run_segments()[0].plan.replicas, 2);
}

#[test]
fn a_report_from_another_point_or_writer_is_not_continued() {
    let setup = Setup::new(Plan::new(2, 2, 1).expect("a plan"), 30, 12);
    let (_, state) = {
        let mut drivers = setup.drivers(None);
        let mut recorder = Recorder::new(&drivers[0], Normalization::PerToken);
        for _ in 0..3 {
            let mut g = drivers[0].next_group().expect("a group").expect("one");
            g.count_all(tokens_of);
            recorder
                .finish(&mut drivers[0], g, Outcome::Applied, Step::loss(1.0))
                .expect("recorded");
        }
        let state = drivers[0].state();
        let mut g = drivers[0].next_group().expect("a group").expect("one");
        g.count_all(tokens_of);
        recorder
            .finish(&mut drivers[0], g, Outcome::Applied, Step::loss(1.0))
            .expect("recorded");
        let report = recorder.report(&drivers[0]);
        let driver = setup.drivers(Some(&state)).remove(0);
        let e = Recorder::resume(&driver, Normalization::PerToken, report.clone())
            .expect_err("a report ahead of the state");
        assert!(
            e.to_string().starts_with(
                "the report counts 4 applied updates of 4 attempts, and the driver state 3 of 3"
            ),
            "{e}"
        );
        let mut engine_like = report;
        engine_like.recorder = None;
        engine_like.counters.applied_updates = Updates::new(3);
        engine_like.counters.update_attempts = 3;
        let e = Recorder::resume(&driver, Normalization::PerToken, engine_like)
            .expect_err("no recorder position");
        assert!(e.to_string().contains("holds no recorder position"), "{e}");
        ((), state)
    };
    assert_eq!(state.progress().updates, Updates::new(3));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Any plan, data size, policy and stopping point: the resumed run is
    /// the uninterrupted one.
    #[test]
    fn any_resume_is_the_same_run(
        m in 1u64..4,
        a in 1u64..4,
        d in 1u64..3,
        n in 8usize..60,
        policy in prop_oneof![Just(LastGroup::Process), Just(LastGroup::Drop)],
        seed in 0u64..1000,
        stop in 0usize..60,
        inside in any::<bool>(),
    ) {
        let plan = Plan::new(m, a, d).expect("a plan");
        prop_assume!(n as u64 >= plan.effective_batch().get());
        let mut setup = Setup::new(plan, n, 30);
        setup.seed = seed;
        setup.policy = policy;
        setup.skip = |a| a % 7 == 4;
        let mut drivers = setup.drivers(None);
        let mut s = scaler();
        let (whole, saved) = drive(&setup, &mut drivers, &mut s, true);
        let points: Vec<&Saved> = saved.iter().filter(|p| p.inside == inside).collect();
        let point = points[stop % points.len()];
        let state: DriverState = serde_json::from_str(&point.json).expect("a state");
        let mut resumed = setup.drivers(Some(&state));
        let mut s = scaler();
        s.restore(state.scaler().expect("saved"));
        let (rest, _) = drive(&setup, &mut resumed, &mut s, false);
        prop_assert_eq!(&rest[..], &whole[point.finished..]);
        prop_assert_eq!(resumed[0].notes(), drivers[0].notes());
    }
}
