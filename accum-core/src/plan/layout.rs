//! Device layouts: `D = world_size / (tp·pp·cp)` (`accum::plan::layout`).

use serde::{Deserialize, Serialize};

use super::{PlanError, rules};

/// A device layout: all devices of a job and the degrees of the parallelisms
/// that split one model copy. Only what is left are data-parallel replicas (`accum::plan::layout`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Layout {
    /// All devices (`world_size`).
    pub world_size: u64,
    /// Tensor-parallel degree.
    pub tensor: u64,
    /// Pipeline-parallel degree.
    pub pipeline: u64,
    /// Context (sequence) parallel degree.
    pub context: u64,
}

impl Layout {
    /// A layout of `world_size` devices with the given parallel degrees.
    #[inline]
    pub const fn new(world_size: u64, tensor: u64, pipeline: u64, context: u64) -> Self {
        Layout {
            world_size,
            tensor,
            pipeline,
            context,
        }
    }

    /// A layout with data parallelism only.
    #[inline]
    pub const fn data_parallel(world_size: u64) -> Self {
        Layout::new(world_size, 1, 1, 1)
    }

    /// Data-parallel replicas `D = world_size / (tp·pp·cp)`, or the
    /// divisibility error (`accum::plan::layout`).
    pub fn replicas(&self) -> Result<u64, PlanError> {
        Ok(rules::layout_replicas(
            self.world_size,
            self.tensor,
            self.pipeline,
            self.context,
        )?)
    }

    /// `[world_size, tp, pp, cp]`, as the plan rules take a layout.
    pub(crate) const fn parts(&self) -> [u64; 4] {
        [self.world_size, self.tensor, self.pipeline, self.context]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Plan, Violation};

    #[test]
    fn model_parallel_devices_are_not_replicas() {
        assert_eq!(Layout::new(64, 2, 2, 1).replicas(), Ok(16));
        assert_eq!(Layout::new(64, 8, 1, 2).replicas(), Ok(4));
        assert_eq!(Layout::data_parallel(8).replicas(), Ok(8));
        let p = Plan::with_layout(4, 2, Layout::new(64, 2, 2, 1)).expect("valid");
        assert_eq!(p.replicas(), 16);
        assert_eq!(p.effective_batch().get(), 128);
    }

    #[test]
    fn layout_not_divisible_names_the_fix() {
        let err = Layout::new(64, 3, 2, 1).replicas().unwrap_err();
        assert_eq!(
            err.to_string(),
            "world_size 64 is not divisible by tensor 3 × pipeline 2 × context 1 = 6: devices that share one model copy \
             do not multiply the batch; use world_size = 60 (10 replicas) or 66 (11 replicas)"
        );
        let err = Layout::new(4, 8, 1, 1).replicas().unwrap_err();
        assert!(
            err.to_string().ends_with("use world_size = 8 (1 replica)"),
            "{err}"
        );
        let huge = Layout::new(64, u64::MAX, 2, 1).replicas().unwrap_err();
        assert!(matches!(
            huge,
            PlanError::Rule(Violation::LayoutNotDivisible { .. })
        ));
    }

    mod properties {
        use proptest::prelude::*;

        use super::super::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]

            #[test]
            fn layouts_never_panic(world in any::<u64>(), tp in any::<u64>(), pp in 0u64..64, cp in 0u64..64) {
                if let Ok(d) = Layout::new(world, tp, pp, cp).replicas() {
                    prop_assert_eq!(u128::from(d) * u128::from(tp) * u128::from(pp) * u128::from(cp), u128::from(world));
                }
            }
        }
    }
}
