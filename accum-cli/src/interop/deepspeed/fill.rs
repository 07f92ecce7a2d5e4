//! DeepSpeed's fill-in and check of the three batch keys, reproduced from
//! `deepspeed/runtime/config.py`: `DeepSpeedConfig._set_batch_related_parameters`
//! fills a missing key with floor divisions, then `_batch_assertion` asserts
//! each is > 0 and `train_batch_size == micro × gas × world_size`.

pub(crate) const TRAIN_BATCH: &str = "train_batch_size";
pub(crate) const MICRO: &str = "train_micro_batch_size_per_gpu";
pub(crate) const GAS: &str = "gradient_accumulation_steps";

/// Why DeepSpeed would refuse the batch values at start-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FillFailure {
    /// Neither `train_batch_size` nor `train_micro_batch_size_per_gpu` is set.
    NeitherGiven,
    /// A value is 0 after filling (DeepSpeed asserts each is > 0).
    NotPositive {
        /// The key.
        key: &'static str,
    },
    /// `train_batch_size != micro × gas × world_size`.
    Mismatch,
    /// A given zero is a divisor in the fill-in: Python raises
    /// `ZeroDivisionError` before any assertion.
    DivisionByZero {
        /// The key that is zero.
        key: &'static str,
    },
}

/// What DeepSpeed makes of the three batch keys for a world size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Fill {
    /// `train_batch_size` after filling.
    pub(crate) train_batch_size: Option<u64>,
    /// `train_micro_batch_size_per_gpu` after filling.
    pub(crate) micro_batch: Option<u64>,
    /// `gradient_accumulation_steps` after filling.
    pub(crate) gradient_accumulation_steps: Option<u64>,
    /// The keys DeepSpeed set, each with its arithmetic (`"30 // 2 // 2 = 7"`).
    pub(crate) filled: Vec<(&'static str, String)>,
    /// Whether a floor division dropped a remainder.
    pub(crate) floored: bool,
    /// DeepSpeed's assertion that would fail, if any.
    pub(crate) failure: Option<FillFailure>,
}

impl Fill {
    /// DeepSpeed's own message for the failure, with its numbers.
    pub(crate) fn engine_message(&self, world: u64) -> Option<String> {
        let show = |v: Option<u64>| v.map_or_else(|| "None".to_owned(), |v| v.to_string());
        self.failure.map(|failure| match failure {
            FillFailure::DivisionByZero { key } => {
                format!("ZeroDivisionError: integer division or modulo by zero ({key} is 0)")
            }
            FillFailure::NeitherGiven => {
                "Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided"
                    .to_owned()
            }
            FillFailure::NotPositive { key } => {
                let (label, value) = match key {
                    TRAIN_BATCH => ("Train batch size", self.train_batch_size),
                    MICRO => ("Micro batch size per gpu", self.micro_batch),
                    _ => ("Gradient accumulation steps", self.gradient_accumulation_steps),
                };
                format!("{label}: {} has to be greater than 0", show(value))
            }
            FillFailure::Mismatch => format!(
                "Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size {} != {} * {} * {world}",
                show(self.train_batch_size),
                show(self.micro_batch),
                show(self.gradient_accumulation_steps),
            ),
        })
    }
}

/// DeepSpeed's fill-in and check of the batch keys, reproduced: given the
/// keys present (`None` = absent) and DeepSpeed's `world_size`, the values
/// DeepSpeed would run with, where it floors, and whether its assertion
/// fails.
///
/// | given | DeepSpeed sets |
/// |---|---|
/// | all three | nothing |
/// | batch, micro | gas = batch // micro // world |
/// | batch, gas | micro = batch // world // gas |
/// | micro, gas | batch = micro × gas × world |
/// | batch | gas = 1, micro = batch // world |
/// | micro | gas = 1, batch = micro × world |
/// | gas, or none | fails: one of batch or micro is needed |
///
/// Then each value must be > 0 and `batch == micro × gas × world`.
pub(crate) fn fill(batch: Option<u64>, micro: Option<u64>, gas: Option<u64>, world: u64) -> Fill {
    let mut out = Fill {
        train_batch_size: batch,
        micro_batch: micro,
        gradient_accumulation_steps: gas,
        filled: Vec::new(),
        floored: false,
        failure: None,
    };
    // Python integers do not overflow; saturating keeps the check honest for
    // any value a JSON file can hold below 2^64.
    let floor2 = |a: u64, b: u64, c: u64| -> (u64, bool) {
        if b == 0 || c == 0 {
            return (0, true);
        }
        let first = a / b;
        (first / c, !a.is_multiple_of(b) || !first.is_multiple_of(c))
    };
    // Python evaluates `batch // micro` (and `// gas`) before any check.
    let zero_divisor = match (batch, micro, gas) {
        (Some(_), Some(0), None) => Some(MICRO),
        (Some(_), None, Some(0)) => Some(GAS),
        _ if world == 0 && batch.is_some() && (micro.is_none() || gas.is_none()) => {
            Some("world_size")
        }
        _ => None,
    };
    if let Some(key) = zero_divisor {
        out.failure = Some(FillFailure::DivisionByZero { key });
        return out;
    }
    match (batch, micro, gas) {
        (Some(_), Some(_), Some(_)) => {}
        (Some(b), Some(m), None) => {
            let (g, floored) = floor2(b, m, world);
            out.gradient_accumulation_steps = Some(g);
            out.floored = floored;
            out.filled
                .push((GAS, format!("{b} // {m} // {world} = {g}")));
        }
        (Some(b), None, Some(g)) => {
            let (m, floored) = floor2(b, world, g);
            out.micro_batch = Some(m);
            out.floored = floored;
            out.filled
                .push((MICRO, format!("{b} // {world} // {g} = {m}")));
        }
        (None, Some(m), Some(g)) => {
            let b = m.saturating_mul(g).saturating_mul(world);
            out.train_batch_size = Some(b);
            out.filled
                .push((TRAIN_BATCH, format!("{m} × {g} × {world} = {b}")));
        }
        (Some(b), None, None) => {
            let m = b.checked_div(world).unwrap_or(0);
            out.gradient_accumulation_steps = Some(1);
            out.micro_batch = Some(m);
            out.floored = world == 0 || !b.is_multiple_of(world);
            out.filled.push((GAS, "1".to_owned()));
            out.filled.push((MICRO, format!("{b} // {world} = {m}")));
        }
        (None, Some(m), None) => {
            let b = m.saturating_mul(world);
            out.train_batch_size = Some(b);
            out.gradient_accumulation_steps = Some(1);
            out.filled
                .push((TRAIN_BATCH, format!("{m} × {world} = {b}")));
            out.filled.push((GAS, "1".to_owned()));
        }
        (None, None, _) => {
            out.failure = Some(FillFailure::NeitherGiven);
            return out;
        }
    }
    let (b, m, g) = (
        out.train_batch_size.unwrap_or(0),
        out.micro_batch.unwrap_or(0),
        out.gradient_accumulation_steps.unwrap_or(0),
    );
    out.failure = if b == 0 {
        Some(FillFailure::NotPositive { key: TRAIN_BATCH })
    } else if m == 0 {
        Some(FillFailure::NotPositive { key: MICRO })
    } else if g == 0 {
        Some(FillFailure::NotPositive { key: GAS })
    } else if (u128::from(m) * u128::from(g)).checked_mul(u128::from(world)) != Some(u128::from(b))
    {
        Some(FillFailure::Mismatch)
    } else {
        None
    };
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use accum_core::plan::PlanInput;

    /// Every combination of the three keys present or absent, against
    /// DeepSpeed's documented fill-in and assertion.
    #[test]
    fn fill_reproduces_every_combination() {
        let w = 4;
        // all three, consistent and not
        let f = fill(Some(64), Some(4), Some(4), w);
        assert_eq!((f.failure, f.floored, f.filled.len()), (None, false, 0));
        let f = fill(Some(60), Some(4), Some(4), w);
        assert_eq!(f.failure, Some(FillFailure::Mismatch));
        assert_eq!(
            f.engine_message(w).unwrap(),
            "Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size 60 != 4 * 4 * 4"
        );
        // batch + micro → gas = batch // micro // world
        let f = fill(Some(64), Some(4), None, w);
        assert_eq!(
            (f.gradient_accumulation_steps, f.failure, f.floored),
            (Some(4), None, false)
        );
        let f = fill(Some(30), Some(2), None, 2);
        assert_eq!(f.gradient_accumulation_steps, Some(7));
        assert!(f.floored);
        assert_eq!(f.filled, vec![(GAS, "30 // 2 // 2 = 7".to_owned())]);
        assert_eq!(f.failure, Some(FillFailure::Mismatch));
        let f = fill(Some(4), Some(8), None, 1);
        assert_eq!(f.gradient_accumulation_steps, Some(0));
        assert_eq!(f.failure, Some(FillFailure::NotPositive { key: GAS }));
        assert_eq!(
            f.engine_message(1).unwrap(),
            "Gradient accumulation steps: 0 has to be greater than 0"
        );
        // batch + gas → micro = batch // world // gas
        let f = fill(Some(64), None, Some(4), w);
        assert_eq!((f.micro_batch, f.failure), (Some(4), None));
        let f = fill(Some(66), None, Some(4), w);
        assert_eq!((f.micro_batch, f.floored), (Some(4), true));
        assert_eq!(f.filled, vec![(MICRO, "66 // 4 // 4 = 4".to_owned())]);
        assert_eq!(f.failure, Some(FillFailure::Mismatch));
        // micro + gas → batch = micro × gas × world, always consistent
        let f = fill(None, Some(3), Some(5), w);
        assert_eq!(
            (f.train_batch_size, f.failure, f.floored),
            (Some(60), None, false)
        );
        // batch only → gas = 1, micro = batch // world
        let f = fill(Some(64), None, None, w);
        assert_eq!(
            (f.gradient_accumulation_steps, f.micro_batch, f.failure),
            (Some(1), Some(16), None)
        );
        let f = fill(Some(66), None, None, w);
        assert_eq!(
            (f.micro_batch, f.floored, f.failure),
            (Some(16), true, Some(FillFailure::Mismatch))
        );
        let f = fill(Some(2), None, None, w);
        assert_eq!(f.failure, Some(FillFailure::NotPositive { key: MICRO }));
        // micro only → gas = 1, batch = micro × world
        let f = fill(None, Some(8), None, w);
        assert_eq!(
            (f.train_batch_size, f.gradient_accumulation_steps, f.failure),
            (Some(32), Some(1), None)
        );
        // gas only, or nothing → DeepSpeed fails
        for f in [fill(None, None, Some(4), w), fill(None, None, None, w)] {
            assert_eq!(f.failure, Some(FillFailure::NeitherGiven));
            assert_eq!(
                f.engine_message(w).unwrap(),
                "Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided"
            );
        }
        // a given zero fails DeepSpeed's positivity check, or divides by zero
        let f = fill(Some(0), Some(1), Some(1), 1);
        assert_eq!(
            f.failure,
            Some(FillFailure::NotPositive { key: TRAIN_BATCH })
        );
        let f = fill(Some(8), Some(0), None, 1);
        assert_eq!(f.failure, Some(FillFailure::DivisionByZero { key: MICRO }));
        assert_eq!(
            f.engine_message(1).unwrap(),
            "ZeroDivisionError: integer division or modulo by zero (train_micro_batch_size_per_gpu is 0)"
        );
    }

    /// Exhaustively over small values and every presence pattern: DeepSpeed
    /// accepts the values exactly when accum's exact plan exists, and then
    /// both have the same m, A and B (`accum::plan::global-batch`). Where DeepSpeed floors, it fails.
    #[test]
    fn deepspeed_accepts_exactly_what_accum_solves() {
        let mut checked = 0;
        for world in 1..=4u64 {
            for b in 0..=40u64 {
                for m in 0..=6u64 {
                    for g in 0..=6u64 {
                        for mask in 0..8u8 {
                            let tb = (mask & 1 != 0).then_some(b);
                            let mb = (mask & 2 != 0).then_some(m);
                            let ga = (mask & 4 != 0).then_some(g);
                            let f = fill(tb, mb, ga, world);
                            let accumulation = match (tb, mb, ga) {
                                (Some(_), None, None) | (None, Some(_), None) => Some(1),
                                _ => ga,
                            };
                            let plan = PlanInput {
                                micro_batch: mb,
                                accumulation,
                                replicas: Some(world),
                                global_batch: tb,
                                ..PlanInput::default()
                            }
                            .resolve();
                            match (&f.failure, &plan) {
                                (None, Ok(p)) => {
                                    assert_eq!(
                                        (
                                            f.train_batch_size,
                                            f.micro_batch,
                                            f.gradient_accumulation_steps
                                        ),
                                        (
                                            Some(p.effective_batch().get()),
                                            Some(p.micro_batch()),
                                            Some(p.accumulation())
                                        ),
                                        "{tb:?} {mb:?} {ga:?} world {world}"
                                    );
                                    assert!(!f.floored);
                                }
                                (Some(_), Err(_)) => {}
                                other => panic!("{tb:?} {mb:?} {ga:?} world {world}: {other:?}"),
                            }
                            if f.floored {
                                assert!(f.failure.is_some(), "{tb:?} {mb:?} {ga:?} world {world}");
                            }
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(checked, 4 * 41 * 7 * 7 * 8);
    }

    #[test]
    fn fill_never_panics_on_extremes() {
        for v in [None, Some(0), Some(1), Some(u64::MAX)] {
            for m in [None, Some(0), Some(u64::MAX)] {
                for g in [None, Some(0), Some(3)] {
                    for w in [0, 1, u64::MAX] {
                        let _ = fill(v, m, g, w);
                    }
                }
            }
        }
    }
}
