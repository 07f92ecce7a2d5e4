//! Plan arithmetic at the edges: zero, `u64::MAX`, huge world sizes and
//! products `m·A·D·L` that overflow. Every operation gives the exact answer
//! (checked against 128-bit arithmetic) or a clear error, never a wrap, a
//! panic or an unbounded search.

use proptest::prelude::*;

use crate::estimate::{ByteSize, MemoryInputs, OptimizerState};
use crate::plan::{LastGroup, Layout, Plan, PlanError, PlanInput, Rounding, Violation};
use crate::span::{Span, SpanError};
use crate::units::{Examples, UnitKind, Updates};

/// A `u64` biased to the edges: 0, 1, small, powers of two and their
/// neighbours, near `u64::MAX`, and anything.
fn edge() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        Just(1u64),
        Just(u64::MAX),
        Just(u64::MAX - 1),
        Just(u64::from(u32::MAX)),
        Just(1u64 << 32),
        (0u32..64).prop_map(|p| 1u64 << p),
        (0u32..64).prop_map(|p| (1u64 << p) - 1),
        1u64..=64,
        any::<u64>(),
    ]
}

fn unit() -> impl Strategy<Value = UnitKind> {
    prop_oneof![
        Just(UnitKind::Update),
        Just(UnitKind::Microbatch),
        Just(UnitKind::Example),
        Just(UnitKind::Token),
    ]
}

fn rounding() -> impl Strategy<Value = Rounding> {
    prop_oneof![
        Just(Rounding::Down),
        Just(Rounding::Up),
        Just(Rounding::Exact)
    ]
}

/// Any plan the arithmetic accepts, including the largest.
fn big_plan() -> impl Strategy<Value = Plan> {
    (edge(), edge(), edge(), proptest::option::of(edge())).prop_filter_map(
        "factors must give a plan",
        |(m, a, d, len)| {
            let plan = Plan::new(m, a, d).ok()?;
            match len {
                Some(len) => plan.with_seq_len(len).ok(),
                None => Some(plan),
            }
        },
    )
}

/// How many of `unit` make one update, in 128 bits.
fn per_update(plan: &Plan, unit: UnitKind) -> Option<u128> {
    let b = u128::from(plan.effective_batch().get());
    match unit {
        UnitKind::Update => Some(1),
        UnitKind::Microbatch => Some(u128::from(plan.accumulation())),
        UnitKind::Example => Some(b),
        UnitKind::Token => plan.seq_len().map(|l| b * u128::from(l)),
    }
}

fn round(num: u128, den: u128, rounding: Rounding) -> Option<u128> {
    let (q, r) = (num / den, num % den);
    match rounding {
        _ if r == 0 => Some(q),
        Rounding::Down => Some(q),
        Rounding::Up => Some(q + 1),
        Rounding::Exact => None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn plan_factors_overflow_into_an_error(m in edge(), a in edge(), d in edge(), len in edge()) {
        // m·A·D can exceed even 128 bits: saturate, anything above u64 is an overflow.
        let exact = (u128::from(m) * u128::from(a)).saturating_mul(u128::from(d));
        match Plan::new(m, a, d) {
            Ok(plan) => {
                prop_assert_eq!(u128::from(plan.effective_batch().get()), exact);
                match plan.with_seq_len(len) {
                    Ok(p) => prop_assert_eq!(
                        p.tokens_per_update().map(|t| u128::from(t.get())),
                        Some(exact.saturating_mul(u128::from(len)))
                    ),
                    Err(err) => {
                        prop_assert!(len == 0 || exact.saturating_mul(u128::from(len)) > u128::from(u64::MAX));
                        prop_assert!(!err.to_string().is_empty());
                    }
                }
            }
            Err(PlanError::Rule(Violation::Zero { .. })) => prop_assert!(m == 0 || a == 0 || d == 0),
            Err(err) => {
                prop_assert!(exact > u128::from(u64::MAX), "{err}");
                prop_assert!(err.to_string().contains("does not fit"), "{err}");
            }
        }
    }

    #[test]
    fn conversions_are_exact_or_an_error(plan in big_plan(), value in edge(), from in unit(), to in unit(), r in rounding()) {
        let got = plan.convert(value, from, to, r);
        let expected = match (per_update(&plan, from), per_update(&plan, to)) {
            _ if from == to => Some(Some(u128::from(value))),
            (Some(pf), Some(pt)) => Some(round(u128::from(value) * pt, pf, r)),
            _ => None,
        };
        match (got, expected) {
            (Ok(v), Some(Some(e))) => prop_assert_eq!(u128::from(v), e),
            (Err(PlanError::Overflow { .. }), Some(Some(e))) => prop_assert!(e > u128::from(u64::MAX)),
            (Err(PlanError::NotWholeUpdates { .. }), Some(None)) => prop_assert_eq!(r, Rounding::Exact),
            (Err(PlanError::NeedsSeqLen { .. }), None) => prop_assert!(plan.seq_len().is_none()),
            (got, expected) => prop_assert!(false, "{plan}: {value} {from} → {to}: {got:?}, expected {expected:?}"),
        }
    }

    #[test]
    fn updates_from_any_count_and_back(plan in big_plan(), value in edge(), unit in unit(), r in rounding()) {
        match (plan.to_updates(value, unit, r), per_update(&plan, unit)) {
            (Ok(updates), Some(per)) => {
                let e = round(u128::from(value), per, r);
                prop_assert_eq!(Some(u128::from(updates.get())), e);
            }
            (Err(PlanError::NotWholeUpdates { .. }), Some(per)) => {
                prop_assert!(r == Rounding::Exact && u128::from(value) % per != 0);
            }
            (Err(PlanError::NeedsSeqLen { .. }), None) => {}
            (got, per) => prop_assert!(false, "{plan}: {value} {unit}: {got:?} (per update {per:?})"),
        }
        match (plan.from_updates(Updates::new(value), unit), per_update(&plan, unit)) {
            (Ok(v), Some(per)) => prop_assert_eq!(u128::from(v), u128::from(value) * per),
            (Err(PlanError::Overflow { .. }), Some(per)) => prop_assert!(u128::from(value) * per > u128::from(u64::MAX)),
            (Err(PlanError::NeedsSeqLen { .. }), None) => {}
            (got, per) => prop_assert!(false, "{plan}: {value} updates in {unit}: {got:?} (per update {per:?})"),
        }
    }

    #[test]
    fn resolve_never_wraps(
        m in proptest::option::of(edge()),
        a in proptest::option::of(edge()),
        d in proptest::option::of(edge()),
        layout in proptest::option::of((edge(), edge(), edge(), edge())),
        len in proptest::option::of(edge()),
        b in proptest::option::of(edge()),
    ) {
        let input = PlanInput {
            micro_batch: m,
            accumulation: a,
            replicas: d,
            layout: layout.map(|(w, t, p, c)| Layout::new(w, t, p, c)),
            seq_len: len,
            global_batch: b,
        };
        match input.resolve() {
            Ok(plan) => {
                let exact = u128::from(plan.micro_batch())
                    * u128::from(plan.accumulation())
                    * u128::from(plan.replicas());
                prop_assert_eq!(u128::from(plan.effective_batch().get()), exact);
                if let Some(b) = b {
                    prop_assert_eq!(plan.effective_batch().get(), b);
                }
                if let Some(m) = m { prop_assert_eq!(plan.micro_batch(), m); }
                if let Some(a) = a { prop_assert_eq!(plan.accumulation(), a); }
                if let Some(d) = d { prop_assert_eq!(plan.replicas(), d); }
                if let Some((w, t, p, c)) = layout {
                    let devices = u128::from(plan.replicas()) * u128::from(t) * u128::from(p) * u128::from(c);
                    prop_assert_eq!(devices, u128::from(w));
                }
                prop_assert_eq!(plan.seq_len(), len);
            }
            Err(err) => prop_assert!(!err.to_string().is_empty()),
        }
    }

    #[test]
    fn epochs_of_any_size_account_for_every_example(plan in big_plan(), examples in edge()) {
        let b = u128::from(plan.effective_batch().get());
        for policy in [LastGroup::Process, LastGroup::Drop, LastGroup::Error] {
            match plan.epoch(Examples::new(examples), policy) {
                Ok(epoch) => {
                    let rest = epoch.partial.map_or(0, |g| u128::from(g.examples.get()));
                    prop_assert_eq!(u128::from(epoch.full_updates.get()) * b + rest, u128::from(examples));
                    prop_assert!(rest < b);
                }
                Err(err) => {
                    prop_assert_eq!(policy, LastGroup::Error);
                    prop_assert!(u128::from(examples) % b != 0, "{err}");
                }
            }
        }
    }

    #[test]
    fn replan_is_bounded_and_keeps_the_batch(plan in big_plan(), max in edge()) {
        match plan.replan(max) {
            Ok(replan) => {
                for q in std::iter::once(&replan.plan).chain(&replan.alternatives) {
                    prop_assert_eq!(q.effective_batch(), plan.effective_batch());
                    prop_assert!(q.micro_batch() <= max);
                }
            }
            Err(PlanError::ReplanZero) => prop_assert_eq!(max, 0),
            Err(err @ PlanError::ReplanTooLarge { .. }) => {
                prop_assert!(err.to_string().contains("must divide"), "{err}");
            }
            Err(err) => prop_assert!(false, "{err}"),
        }
    }

    #[test]
    fn memory_estimates_overflow_into_an_error(params in edge(), weight in 0u64..=8, per_example in edge(), m in edge(), budget in edge(), master in any::<bool>()) {
        let inputs = MemoryInputs {
            params,
            weight_bytes: weight,
            optimizer: OptimizerState::Moments,
            master_weights: master,
            activation_per_example: ByteSize::new(per_example),
        };
        let p = u128::from(params);
        // Each term fits in 128 bits; their sum saturates.
        let exact = (p * u128::from(weight) * 2)
            .saturating_add(if master { p * 4 } else { 0 })
            .saturating_add(p * 8)
            .saturating_add(u128::from(per_example) * u128::from(m));
        match inputs.estimate(m) {
            Ok(e) => prop_assert_eq!(u128::from(e.total.get()), exact),
            Err(err) => {
                prop_assert!(exact > u128::from(u64::MAX) || p * u128::from(weight) > u128::from(u64::MAX), "{err}");
            }
        }
        if let Ok(Some(best)) = inputs.max_micro_batch(ByteSize::new(budget)) {
            prop_assert!(best >= 1);
            if per_example > 0 {
                let total = inputs.estimate(best).expect("the chosen m has an estimate").total.get();
                prop_assert!(total <= budget);
                if let Some(Ok(next)) = best.checked_add(1).map(|m| inputs.estimate(m)) {
                    prop_assert!(next.total.get() > budget);
                }
            }
        }
    }

    #[test]
    fn spans_with_scales_are_exact_or_too_large(digits in 0u64..=u64::MAX, scale in 0usize..6, unit in unit()) {
        let (suffix, pow) = [("", 0u32), ("k", 3), ("M", 6), ("B", 9), ("G", 9), ("T", 12)][scale];
        let name = match unit {
            UnitKind::Update => "updates",
            UnitKind::Microbatch => "microbatches",
            UnitKind::Example => "examples",
            UnitKind::Token => "tokens",
        };
        let text = format!("{digits}{suffix} {name}");
        let exact = u128::from(digits) * 10u128.pow(pow);
        match text.parse::<Span>() {
            Ok(span) => {
                prop_assert_eq!(u128::from(span.value()), exact);
                prop_assert_eq!(span.unit(), unit);
                prop_assert_eq!(span.to_string().parse::<Span>(), Ok(span));
            }
            Err(SpanError::TooLarge { .. }) => prop_assert!(exact > u128::from(u64::MAX)),
            Err(err) => prop_assert!(false, "{text}: {err}"),
        }
    }

    #[test]
    fn a_displayed_span_parses_back_with_the_config_suffixes(value in prop_oneof![edge(), (0u64..10_000, 0u32..=15).prop_map(|(v, p)| v.saturating_mul(10u64.pow(p)))], unit in unit()) {
        let span = Span::new(value, unit);
        let text = span.to_string();
        prop_assert_eq!(text.parse::<Span>(), Ok(span), "{}", text);
        let number = text.split(' ').next().expect("a number");
        let digits = number.trim_end_matches(['k', 'M', 'B', 'T']);
        prop_assert!(digits.bytes().all(|b| b.is_ascii_digit()), "{}", text);
        // The largest suffix that divides the value exactly.
        let expected = [(12, "T"), (9, "B"), (6, "M"), (3, "k")]
            .into_iter()
            .find(|&(p, _)| value != 0 && value.is_multiple_of(10u64.pow(p)))
            .map_or("", |(_, s)| s);
        prop_assert_eq!(&number[digits.len()..], expected, "{}", text);
    }

    #[test]
    fn any_span_resolves_through_any_plan_or_errs(plan in big_plan(), value in edge(), from in unit(), to in unit(), r in rounding()) {
        let span = Span::new(value, from);
        if let Ok(updates) = plan.span_to_updates(&span, r) {
            prop_assert_eq!(Ok(updates), plan.to_updates(value, from, r));
        }
        if let Ok(there) = plan.span_to_unit(&span, to, r) {
            prop_assert_eq!(there.unit(), to);
            prop_assert_eq!(Ok(there.value()), plan.convert(value, from, to, r));
        }
    }
}

#[test]
fn a_huge_world_size_gives_replicas_or_a_clear_error() {
    let d = Layout::new(u64::MAX, 1, 1, 1)
        .replicas()
        .expect("data parallel");
    assert_eq!(d, u64::MAX);
    let plan = PlanInput {
        micro_batch: Some(2),
        accumulation: Some(1),
        layout: Some(Layout::new(u64::MAX, 1, 1, 1)),
        ..PlanInput::default()
    }
    .resolve()
    .expect_err("2 × 1 × (2^64 − 1) does not fit");
    assert!(plan.to_string().contains("does not fit"), "{plan}");
    let err = Layout::new(u64::MAX, u64::MAX, u64::MAX, 2)
        .replicas()
        .expect_err("tp·pp·cp overflows");
    assert!(!err.to_string().is_empty());
}

#[test]
fn replanning_a_huge_prime_product_is_a_clear_error_not_a_long_search() {
    // m·A = (2^32 − 5)(2^32 − 17): finding its divisors by trial division
    // took seconds.
    let plan = Plan::new(4_294_967_291, 4_294_967_279, 1).expect("fits in u64");
    let started = std::time::Instant::now();
    let err = plan.replan(u64::MAX).expect_err("too large to search");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert!(
        err.to_string()
            .contains("give a smaller limit (at most 4194304)"),
        "{err}"
    );
    // With a small limit the search is direct, and m = 1 always fits.
    let replan = plan.replan(1000).expect("m = 1 divides everything");
    assert_eq!(replan.plan.micro_batch(), 1);
}
