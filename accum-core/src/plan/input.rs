//! Plan values as a configuration gives them, some possibly missing, and
//! their resolution into a [`Plan`]: a missing `A` (or `m`) is solved exactly
//! from a declared global batch (`accum::plan::global-batch`).

use serde::{Deserialize, Serialize};

use super::{Layout, Plan, PlanError, rules};

/// Plan values as a configuration gives them, some possibly missing; see
/// [`PlanInput::resolve`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanInput {
    /// `m`, or `None` to solve it from the global batch.
    pub micro_batch: Option<u64>,
    /// `A`, or `None` to solve it from the global batch.
    pub accumulation: Option<u64>,
    /// `D`, when given directly.
    pub replicas: Option<u64>,
    /// The layout `D` comes from, when `replicas` is not given.
    pub layout: Option<Layout>,
    /// `L`, when fixed.
    pub seq_len: Option<u64>,
    /// A declared `B` to check or to solve from.
    pub global_batch: Option<u64>,
}

impl PlanInput {
    /// Resolves the input into a plan. With a global batch, a missing `A` (or
    /// `m`) is solved exactly — like DeepSpeed fills
    /// `gradient_accumulation_steps`, but a non-divisible input is an error
    /// naming the nearest valid values, never a silent floor. With every
    /// factor given, the global batch must equal `m·A·D`.
    pub fn resolve(&self) -> Result<Plan, PlanError> {
        let solved = rules::resolve(&rules::PlanValues {
            micro_batch: self.micro_batch,
            accumulation: self.accumulation,
            replicas: self.replicas,
            layout: self.layout.map(|layout| layout.parts()),
            seq_len: self.seq_len,
            global_batch: self.global_batch,
        })?;
        let mut plan = Plan::new(solved.micro_batch, solved.accumulation, solved.replicas)?;
        plan.layout = self.layout;
        match self.seq_len {
            Some(len) => plan.with_seq_len(len),
            None => Ok(plan),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Role, Violation};

    #[test]
    fn resolve_solves_accumulation_exactly() {
        let input = PlanInput {
            micro_batch: Some(2),
            replicas: Some(2),
            global_batch: Some(32),
            ..PlanInput::default()
        };
        assert_eq!(input.resolve().map(|p| p.accumulation()), Ok(8));
        let err = PlanInput {
            global_batch: Some(30),
            ..input
        }
        .resolve()
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot solve accumulation: global_batch 30 is not a multiple of micro_batch 2 × replicas 2 = 4; \
             keep global_batch = 30 with micro_batch = 1 and accumulation = 15; \
             or use global_batch = 28 (accumulation = 7) or 32 (accumulation = 8)"
        );
        let err = PlanInput {
            global_batch: Some(2),
            ..input
        }
        .resolve()
        .unwrap_err();
        assert!(
            err.to_string()
                .ends_with("use global_batch = 4 (accumulation = 1)"),
            "{err}"
        );
        let solved_m = PlanInput {
            accumulation: Some(4),
            replicas: Some(2),
            global_batch: Some(64),
            ..PlanInput::default()
        };
        assert_eq!(solved_m.resolve().map(|p| p.micro_batch()), Ok(8));
    }

    #[test]
    fn resolve_checks_a_declared_global_batch() {
        let input = PlanInput {
            micro_batch: Some(2),
            accumulation: Some(8),
            replicas: Some(2),
            global_batch: Some(30),
            ..PlanInput::default()
        };
        assert_eq!(
            input.resolve().unwrap_err().to_string(),
            "global_batch 30 ≠ micro_batch 2 × accumulation 8 × replicas 2 = 32; 30 is not a multiple of m·D = 4; \
             keep global_batch = 30 with micro_batch = 1 and accumulation = 15; \
             or use global_batch = 28 (accumulation = 7) or 32 (accumulation = 8)"
        );
        let err = PlanInput {
            global_batch: Some(28),
            ..input
        }
        .resolve()
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "global_batch 28 ≠ micro_batch 2 × accumulation 8 × replicas 2 = 32; use accumulation = 7 to keep global_batch = 28, or global_batch = 32"
        );
        assert!(
            PlanInput {
                global_batch: Some(32),
                ..input
            }
            .resolve()
            .is_ok()
        );
    }

    #[test]
    fn resolve_reports_missing_roles() {
        let none = PlanInput::default();
        assert_eq!(
            none.resolve(),
            Err(PlanError::Rule(Violation::Missing {
                role: Role::Replicas
            }))
        );
        let only_m = PlanInput {
            micro_batch: Some(2),
            replicas: Some(1),
            ..none
        };
        assert_eq!(
            only_m.resolve(),
            Err(PlanError::Rule(Violation::Missing {
                role: Role::Accumulation
            }))
        );
        let with_layout = PlanInput {
            micro_batch: Some(2),
            accumulation: Some(2),
            layout: Some(Layout::new(64, 2, 2, 1)),
            seq_len: Some(16),
            ..none
        };
        let p = with_layout.resolve().expect("valid");
        assert_eq!((p.replicas(), p.seq_len()), (16, Some(16)));
    }

    mod properties {
        use proptest::prelude::*;

        use super::super::*;
        use crate::plan::testing::any_plan;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]

            #[test]
            fn resolve_solves_what_was_removed(plan in any_plan()) {
                let b = plan.effective_batch().get();
                let solve_a = PlanInput {
                    micro_batch: Some(plan.micro_batch()),
                    replicas: Some(plan.replicas()),
                    global_batch: Some(b),
                    seq_len: plan.seq_len(),
                    ..PlanInput::default()
                };
                prop_assert_eq!(solve_a.resolve(), Ok(plan));
                let solve_m = PlanInput {
                    accumulation: Some(plan.accumulation()),
                    replicas: Some(plan.replicas()),
                    global_batch: Some(b),
                    seq_len: plan.seq_len(),
                    ..PlanInput::default()
                };
                prop_assert_eq!(solve_m.resolve(), Ok(plan));
            }
        }
    }
}
