//! One pass over a dataset split into updates, and the policy for the last
//! partial group (`accum::plan::partial-group`).

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{Plan, PlanError};
use crate::units::{Examples, Microbatches, Updates};

/// What happens to the last group when the data ends with fewer than `A`
/// microbatches per replica, or with an incomplete microbatch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum LastGroup {
    /// Process it as one more update, normalized by what it really contains.
    #[default]
    Process,
    /// Drop it; the dropped example ids are recorded.
    Drop,
    /// Refuse to run: the data must fill whole groups.
    Error,
}

impl LastGroup {
    /// The config spelling (`"process"`, `"drop"`, `"error"`).
    pub const fn key(self) -> &'static str {
        match self {
            LastGroup::Process => "process",
            LastGroup::Drop => "drop",
            LastGroup::Error => "error",
        }
    }
}

impl fmt::Display for LastGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

impl Plan {
    /// Splits `examples` into updates under a last-group policy (`accum::plan::partial-group`).
    pub fn epoch(&self, examples: Examples, policy: LastGroup) -> Result<Epoch, PlanError> {
        let batch = self.effective_batch().get();
        let total = examples.get();
        let full = total / batch;
        let remainder = total % batch;
        let partial = (remainder > 0).then(|| PartialGroup {
            examples: Examples::new(remainder),
            microbatches: Microbatches::new(remainder.div_ceil(self.micro_batch)),
            last_microbatch: Examples::new(match remainder % self.micro_batch {
                0 => self.micro_batch,
                rest => rest,
            }),
        });
        let (updates, dropped) = match (policy, partial) {
            (_, None) => (full, 0),
            (LastGroup::Process, Some(_)) => (full + 1, 0),
            (LastGroup::Drop, Some(_)) => (full, remainder),
            (LastGroup::Error, Some(_)) => {
                return Err(PlanError::PartialGroup {
                    examples: total,
                    effective_batch: batch,
                    remainder,
                });
            }
        };
        Ok(Epoch {
            examples,
            full_updates: Updates::new(full),
            updates: Updates::new(updates),
            partial,
            dropped: Examples::new(dropped),
            policy,
        })
    }
}

/// How one pass over a dataset splits into updates (`accum::plan::partial-group`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Epoch {
    /// Examples in the data.
    pub examples: Examples,
    /// Updates with a full group of `B` examples.
    pub full_updates: Updates,
    /// Updates applied in the epoch under the policy.
    pub updates: Updates,
    /// The partial group at the end, if the data does not fill whole groups.
    pub partial: Option<PartialGroup>,
    /// Examples dropped by the policy (their ids are recorded by the engine).
    pub dropped: Examples,
    /// The policy applied.
    pub policy: LastGroup,
}

/// The incomplete last group of an epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PartialGroup {
    /// Examples in the partial group (`< B`).
    pub examples: Examples,
    /// Microbatches they fill, over all replicas (the last may be incomplete).
    pub microbatches: Microbatches,
    /// Examples in the last microbatch (`≤ m`).
    pub last_microbatch: Examples,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::testing::plan;

    #[test]
    fn epoch_partial_group() {
        let p = plan(2, 8, 2); // B = 32
        let e = p
            .epoch(Examples::new(100), LastGroup::Process)
            .expect("process");
        assert_eq!(e.full_updates, Updates::new(3));
        assert_eq!(e.updates, Updates::new(4));
        let partial = e.partial.expect("100 = 3·32 + 4");
        assert_eq!(partial.examples, Examples::new(4));
        assert_eq!(partial.microbatches, Microbatches::new(2));
        assert_eq!(partial.last_microbatch, Examples::new(2));

        let e = p.epoch(Examples::new(101), LastGroup::Drop).expect("drop");
        assert_eq!(e.updates, Updates::new(3));
        assert_eq!(e.dropped, Examples::new(5));
        assert_eq!(e.partial.map(|g| g.last_microbatch), Some(Examples::new(1)));

        let err = p.epoch(Examples::new(100), LastGroup::Error).unwrap_err();
        assert!(
            err.to_string().contains("partial group of 4 examples"),
            "{err}"
        );
        let e = p
            .epoch(Examples::new(96), LastGroup::Error)
            .expect("whole groups");
        assert_eq!((e.updates, e.partial), (Updates::new(3), None));
    }

    mod properties {
        use proptest::prelude::*;

        use super::super::*;
        use crate::plan::testing::any_plan;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]

            #[test]
            fn epoch_accounts_for_every_example(plan in any_plan(), examples in 0u64..10_000_000) {
                let process = plan.epoch(Examples::new(examples), LastGroup::Process).expect("process never fails");
                let drop = plan.epoch(Examples::new(examples), LastGroup::Drop).expect("drop never fails");
                let b = plan.effective_batch().get();
                let rest = process.partial.map_or(0, |g| g.examples.get());
                prop_assert_eq!(process.full_updates.get() * b + rest, examples);
                prop_assert_eq!(drop.dropped.get(), rest);
                prop_assert_eq!(process.updates.get(), examples.div_ceil(b));
                prop_assert_eq!(drop.updates.get(), examples / b);
                prop_assert_eq!(plan.epoch(Examples::new(examples), LastGroup::Error).is_ok(), rest == 0);
            }
        }
    }
}
