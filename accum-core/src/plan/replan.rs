//! Re-planning: every `(m, A)` that keeps `B` with a smaller micro-batch
//! (`accum::run::memory`).

use serde::Serialize;

use super::{Plan, PlanError};

impl Plan {
    /// Every `(m, A)` that keeps `B` with `D` unchanged and `m ≤ max_micro_batch`,
    /// largest `m` first; the first is the recommended plan (`accum::run::memory`). Lowering `m`
    /// keeps the batch but guarantees neither a proportional memory drop nor
    /// a faster run.
    pub fn replan(&self, max_micro_batch: u64) -> Result<Replan, PlanError> {
        if max_micro_batch == 0 {
            return Err(PlanError::ReplanZero);
        }
        let per_replica = self.examples_per_replica_per_update().get();
        // Bounded work: try every m up to a small limit directly, else the
        // divisors by trial division up to √(m·A), if that is small enough.
        let limit = max_micro_batch.min(per_replica);
        let candidates: Vec<u64> = if limit <= REPLAN_SEARCH {
            (1..=limit)
                .rev()
                .filter(|m| per_replica.is_multiple_of(*m))
                .collect()
        } else if per_replica <= REPLAN_SEARCH * REPLAN_SEARCH {
            divisors(per_replica)
                .into_iter()
                .rev()
                .filter(|&m| m <= max_micro_batch)
                .collect()
        } else {
            return Err(PlanError::ReplanTooLarge {
                per_replica,
                max_micro_batch,
            });
        };
        let mut alternatives: Vec<Plan> = candidates
            .into_iter()
            .map(|m| Plan {
                micro_batch: m,
                accumulation: per_replica / m,
                ..*self
            })
            .collect();
        // 1 divides every per-replica batch, so the list is never empty.
        let plan = alternatives.remove(0);
        Ok(Replan {
            original: *self,
            plan,
            alternatives,
        })
    }
}

/// The most candidates [`Plan::replan`] tries one by one (and the square
/// root of the largest `m·A` whose divisors it lists): a few milliseconds.
pub(super) const REPLAN_SEARCH: u64 = 1 << 22;

fn divisors(n: u64) -> Vec<u64> {
    let mut small = Vec::new();
    let mut large = Vec::new();
    let mut i: u64 = 1;
    while i.checked_mul(i).is_some_and(|sq| sq <= n) {
        if n.is_multiple_of(i) {
            small.push(i);
            if i != n / i {
                large.push(n / i);
            }
        }
        i += 1;
    }
    small.extend(large.into_iter().rev());
    small
}

/// The result of [`Plan::replan`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Replan {
    /// The plan before.
    pub original: Plan,
    /// The recommended plan: the largest micro-batch that fits.
    pub plan: Plan,
    /// Other valid plans with the same `B`, by decreasing micro-batch.
    pub alternatives: Vec<Plan>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::testing::plan;

    #[test]
    fn replan_keeps_the_batch_and_lists_alternatives() {
        let p = plan(32, 1, 2);
        let r = p.replan(10).expect("possible");
        assert_eq!((r.plan.micro_batch(), r.plan.accumulation()), (8, 4));
        let pairs: Vec<_> = r
            .alternatives
            .iter()
            .map(|q| (q.micro_batch(), q.accumulation()))
            .collect();
        assert_eq!(pairs, vec![(4, 8), (2, 16), (1, 32)]);
        assert!(
            r.alternatives
                .iter()
                .all(|q| q.effective_batch() == p.effective_batch())
        );
        assert_eq!(p.replan(0), Err(PlanError::ReplanZero));
        // A larger limit keeps the plan as it is.
        assert_eq!(p.replan(64).expect("possible").plan, p);
    }

    mod properties {
        use proptest::prelude::*;

        use super::super::*;
        use crate::plan::testing::any_plan;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]

            #[test]
            fn replan_keeps_the_effective_batch(plan in any_plan(), max in 1u64..2048) {
                let replan = plan.replan(max).expect("max ≥ 1 always has m = 1");
                let all: Vec<Plan> = std::iter::once(replan.plan).chain(replan.alternatives.iter().copied()).collect();
                for q in &all {
                    prop_assert_eq!(q.effective_batch(), plan.effective_batch());
                    prop_assert_eq!(q.replicas(), plan.replicas());
                    prop_assert_eq!(q.seq_len(), plan.seq_len());
                    prop_assert!(q.micro_batch() <= max);
                }
                prop_assert!(all.windows(2).all(|w| w[0].micro_batch() > w[1].micro_batch()));
                // Every divisor of m·A that fits is listed.
                let per_replica = plan.micro_batch() * plan.accumulation();
                let expected = (1..=max.min(per_replica)).filter(|m| per_replica % m == 0).count();
                prop_assert_eq!(all.len(), expected);
            }
        }
    }
}
