//! Tests of lengths counted on the run: a counted schedule stepped with
//! the real counters, a total in examples reached on the real groups, the
//! notes that say where a length rounded, the checks of the build, and the
//! refusal of groups longer than the declared `seq_len`.

use super::*;
use crate::replica::InProcess;
use crate::settings::{Normalization, ScheduleKind};
use crate::units::{Examples, Tokens};

/// Supervised tokens of example `id`: 1 to 40, varying.
fn varying(id: usize) -> u64 {
    (id as u64 * 17) % 40 + 1
}

/// Runs a D = 1 driver to its end, counting every example with `tokens`;
/// the rate of every applied update and the tokens before it.
fn run(driver: &mut Driver, tokens: fn(usize) -> u64) -> Vec<(u64, f64)> {
    let reducer = InProcess::new(1);
    let mut rates = Vec::new();
    while let Some(mut group) = driver.next_group().unwrap() {
        group
            .denominator(Normalization::PerToken, tokens, &reducer)
            .unwrap();
        rates.push((driver.progress().tokens.get(), driver.lr().unwrap()));
        driver.finish(group, Outcome::Applied).unwrap();
    }
    rates
}

#[test]
fn a_warmup_in_tokens_ends_where_the_real_tokens_cross_it() {
    // B = 8 over 100 variable-length examples: 12 full groups an epoch and
    // a partial one of 4. Warmup 2,000 tokens, the run 150 examples.
    let plan = Plan::new(4, 2, 1).unwrap();
    let warmup: Span = "2000 tokens".parse().unwrap();
    let total: Span = "150 examples".parse().unwrap();
    let schedule = Schedule::counted(ScheduleKind::Linear, 1.0, warmup, total, plan).unwrap();
    let mut driver = Driver::builder(plan, 100)
        .seed(5)
        .schedule(schedule)
        .build()
        .unwrap();
    assert_eq!(driver.total(), total, "the schedule's total by default");
    let rates = run(&mut driver, varying);

    // The warmup: the rate is the real tokens so far over 2,000, up to the
    // update whose tokens cross 2,000; the first update after it is at the peak.
    let crossing = rates.iter().position(|&(t, _)| t >= 2000).unwrap();
    for &(tokens, rate) in &rates[..crossing] {
        assert_eq!(rate, tokens as f64 / 2000.0);
    }
    assert_eq!(rates[crossing].1, 1.0);
    let schedule = driver.schedule().unwrap();
    assert_eq!(schedule.warmup(), Updates::new(crossing as u64));
    // The run ends on the update whose examples reach 150: 12 full groups,
    // the partial one (4), then 7 more full ones: 100 + 56 = 156.
    let p = *driver.progress();
    assert_eq!(p.updates, Updates::new(20));
    assert_eq!((p.examples, p.partial), (Examples::new(156), 1));
    assert_eq!(schedule.total(), Updates::new(20));
    assert!(driver.finished());
    let notes = driver.notes();
    assert_eq!(
        notes,
        [
            DriverNote::PartialGroups {
                updates: 1,
                short: 4
            },
            DriverNote::TotalOvershot {
                total,
                reached: 156,
                update: Updates::new(20)
            },
        ]
    );
    assert_eq!(
        notes[1].to_string(),
        "the run's length of 150 examples was reached inside update 20: it trained 156 examples"
    );
    assert!(
        notes[0].to_string().contains("4 examples fewer"),
        "{}",
        notes[0]
    );
}

#[test]
fn a_run_that_ends_before_its_warmup_says_so() {
    // Warmup in tokens, run in updates: they can only be compared on the run.
    let plan = Plan::new(4, 2, 1).unwrap();
    let schedule = Schedule::counted(
        ScheduleKind::Cosine,
        0.5,
        "1M tokens".parse::<Span>().unwrap(),
        Updates::new(10),
        plan,
    )
    .unwrap();
    let mut driver = Driver::builder(plan, 100)
        .schedule(schedule)
        .build()
        .unwrap();
    run(&mut driver, varying);
    let tokens = driver.progress().tokens.get();
    let notes = driver.notes();
    let [DriverNote::WarmupUnfinished { reached, .. }] = notes.as_slice() else {
        panic!("{notes:?}");
    };
    assert_eq!(*reached, tokens as f64 / 1e6);
    assert!(
        notes[0]
            .to_string()
            .starts_with("the run of 10 updates ended before the warmup of 1M tokens")
    );
}

#[test]
fn the_build_refuses_a_warmup_or_an_interval_longer_than_the_run() {
    let plan = Plan::new(4, 2, 2).unwrap(); // B = 16
    let schedule = Schedule::counted(
        ScheduleKind::Linear,
        1.0,
        "500 examples".parse::<Span>().unwrap(),
        Updates::new(100),
        plan,
    )
    .unwrap();
    // The driver's own total is shorter than the schedule's warmup.
    let err = Driver::builder(plan, 1000)
        .schedule(schedule.clone())
        .total(Updates::new(30))
        .build()
        .unwrap_err();
    assert!(matches!(err, DriverError::Schedule(_)), "{err:?}");
    assert!(
        err.to_string().contains("500 examples > 480 examples"),
        "{err}"
    );
    // An interval in another unit, through the plan; and in tokens with a
    // fixed seq_len.
    let err = Driver::builder(plan, 1000)
        .schedule(schedule.clone())
        .interval("200 updates".parse::<Span>().unwrap())
        .build()
        .unwrap_err();
    assert!(
        matches!(err, DriverError::IntervalTooLong { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("never fire"), "{err}");
    let fixed = plan.with_seq_len(8).unwrap();
    let err = Driver::builder(fixed, 1000)
        .total("1000 examples".parse::<Span>().unwrap())
        .interval(Tokens::new(9000))
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the interval of 9k tokens is longer than the run of 1k examples \
         (9k tokens > 8k tokens through the plan), so it would never fire; shorten the interval or lengthen the run"
    );
    let ok = Driver::builder(plan, 1000)
        .schedule(schedule)
        .interval("20 updates".parse::<Span>().unwrap())
        .interval("3k tokens".parse::<Span>().unwrap()) // compared on the run only
        .build();
    assert!(ok.is_ok(), "{ok:?}");
    assert!(matches!(
        Driver::builder(plan, 1000).total(Updates::ZERO).build(),
        Err(DriverError::Schedule(ScheduleError::ZeroTotal))
    ));
}

#[test]
fn groups_longer_than_the_declared_seq_len_are_refused() {
    // Examples of up to 40 tokens declared as 16: counted through a
    // reducer, or all at once and refused when finished.
    let plan = Plan::new(4, 2, 1).unwrap().with_seq_len(16).unwrap();
    let mut driver = Driver::builder(plan, 100).build().unwrap();
    let reducer = InProcess::new(1);
    let mut refused = None;
    while let Some(mut group) = driver.next_group().unwrap() {
        match group.count(varying, &reducer) {
            Ok(_) => {
                driver.finish(group, Outcome::Applied).unwrap();
            }
            Err(e) => {
                refused = Some((group.ids().map(varying).sum::<u64>(), e));
                break;
            }
        }
    }
    let (tokens, err) = refused.expect("some group of 8 holds more than 128 tokens");
    assert!(tokens > 8 * 16);
    let DriverError::TokensOverSeqLen {
        tokens: t,
        examples: 8,
        seq_len: 16,
        ..
    } = err
    else {
        panic!("{err:?}");
    };
    assert_eq!(t.get(), tokens);
    assert!(
        err.to_string().contains("× seq_len 16 = 128 tokens"),
        "{err}"
    );

    let mut driver = Driver::builder(plan, 100).build().unwrap();
    let mut group = driver.next_group().unwrap().unwrap();
    group.count_all(|_| 17);
    let err = driver.finish(group, Outcome::Applied).unwrap_err();
    assert!(
        matches!(err, DriverError::TokensOverSeqLen { .. }),
        "{err:?}"
    );
    // At the declared length or below, a group passes.
    let mut driver = Driver::builder(plan, 100).build().unwrap();
    let mut group = driver.next_group().unwrap().unwrap();
    group.count_all(|_| 16);
    assert!(driver.finish(group, Outcome::Applied).is_ok());
}
