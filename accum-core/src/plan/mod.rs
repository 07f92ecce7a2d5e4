//! The accumulation plan: micro-batch `m`, accumulation steps `A`,
//! data-parallel replicas `D` and an optional sequence length `L`, with every
//! quantity the seeds compute from them (`accum::plan::global-batch`, `accum::plan::partial-group`, `accum::run::memory`, `accum::calc::tokens`).
//!
//! A [`Plan`] is valid by construction: no factor is zero and `m·A·D` (and
//! `m·A·D·L`) fit in a `u64`. Build one directly with [`Plan::new`], from a
//! world layout with [`Layout`], or solve a missing factor from a declared
//! global batch with [`PlanInput::resolve`].
//!
//! ```
//! use accum_core::plan::{Layout, Plan};
//!
//! // `accum::plan::global-batch`: m=8, D=64, A=4, L=4096 → B=2048, T=8,388,608
//! let plan = Plan::new(8, 4, 64)?.with_seq_len(4096)?;
//! assert_eq!(plan.effective_batch().get(), 2048);
//! assert_eq!(plan.tokens_per_update().map(|t| t.get()), Some(8_388_608));
//!
//! // tensor- and pipeline-parallel GPUs are not replicas: 64 / (2·2) = 16
//! let layout = Layout::new(64, 2, 2, 1);
//! assert_eq!(layout.replicas()?, 16);
//! # Ok::<(), accum_core::plan::PlanError>(())
//! ```

mod convert;
mod epoch;
mod error;
mod input;
mod layout;
mod replan;
/// The plan rules (roles, arithmetic, wording), written once in
/// accum-macros' `rules.rs` and compiled here through its `plan_rules!`, so
/// that the derive's compile errors and this crate's errors are the same
/// sentences. Its items are `pub` for both crates; this crate re-exports
/// what its users name.
#[allow(unreachable_pub)]
pub(crate) mod rules {
    accum_macros::plan_rules!();
}
mod stages;

use std::fmt;

use serde::{Deserialize, Serialize};

pub use convert::Rounding;
pub use epoch::{Epoch, LastGroup, PartialGroup};
pub use error::{Edit, Fix, PlanError};
pub use input::PlanInput;
pub use layout::Layout;
pub use replan::Replan;
pub use stages::{LinearRamp, MAX_STAGES, Stage, StageError, StageSpec, StagedPlan};

use crate::units::{Examples, Microbatches, Tokens, group_digits};

pub use rules::{Role, Violation};

impl Serialize for Role {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.key())
    }
}

impl<'de> Deserialize<'de> for Role {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Role, D::Error> {
        let key = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Role::from_key(&key).ok_or_else(|| serde::de::Error::unknown_variant(&key, &Role::KEYS))
    }
}

fn nonzero(value: u64, role: Role) -> Result<u64, PlanError> {
    Ok(rules::nonzero(role, value)?)
}

fn product(factors: &[(Role, u64)]) -> Result<u64, PlanError> {
    Ok(rules::product(factors)?)
}

/// A valid accumulation plan. See the [module docs](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Plan {
    micro_batch: u64,
    accumulation: u64,
    replicas: u64,
    seq_len: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    layout: Option<Layout>,
}

impl Plan {
    /// A plan of `m` examples per microbatch, `A` microbatches per update and
    /// `D` data-parallel replicas. Fails on a zero or when `m·A·D` overflows.
    pub fn new(micro_batch: u64, accumulation: u64, replicas: u64) -> Result<Plan, PlanError> {
        nonzero(micro_batch, Role::MicroBatch)?;
        nonzero(accumulation, Role::Accumulation)?;
        nonzero(replicas, Role::Replicas)?;
        product(&[
            (Role::MicroBatch, micro_batch),
            (Role::Accumulation, accumulation),
            (Role::Replicas, replicas),
        ])?;
        Ok(Plan {
            micro_batch,
            accumulation,
            replicas,
            seq_len: None,
            layout: None,
        })
    }

    /// A plan from constant parts, for `const` contexts such as the derive's
    /// `const PLAN`. The derive checks the values first and reports errors
    /// with their arithmetic; here an invalid plan stops const evaluation.
    ///
    /// # Panics
    /// When a factor is zero or `m·A·D(·L)` overflows `u64` (at compile time
    /// when used in a `const`).
    pub(crate) const fn from_parts(
        micro_batch: u64,
        accumulation: u64,
        replicas: u64,
        seq_len: Option<u64>,
    ) -> Plan {
        assert!(
            micro_batch > 0 && accumulation > 0 && replicas > 0,
            "{}",
            rules::constant::FACTOR_ZERO
        );
        let batch = match micro_batch.checked_mul(accumulation) {
            Some(ma) => ma.checked_mul(replicas),
            None => None,
        };
        let Some(batch) = batch else {
            panic!("{}", rules::constant::PRODUCT_OVERFLOW)
        };
        if let Some(len) = seq_len {
            assert!(len > 0, "{}", rules::constant::SEQ_LEN_ZERO);
            assert!(
                batch.checked_mul(len).is_some(),
                "{}",
                rules::constant::TOKENS_OVERFLOW
            );
        }
        Plan {
            micro_batch,
            accumulation,
            replicas,
            seq_len,
            layout: None,
        }
    }

    /// Like [`Plan::from_parts`], with the replicas computed from a device
    /// layout, `D = world_size / (tp·pp·cp)` (`accum::plan::global-batch`), for `const` contexts.
    ///
    /// # Panics
    /// When a factor is zero, `world_size` is not divisible by `tp·pp·cp`, or
    /// a product overflows `u64` (at compile time when used in a `const`).
    pub(crate) const fn from_layout_parts(
        micro_batch: u64,
        accumulation: u64,
        layout: Layout,
        seq_len: Option<u64>,
    ) -> Plan {
        assert!(
            layout.world_size > 0 && layout.tensor > 0 && layout.pipeline > 0 && layout.context > 0,
            "{}",
            rules::constant::LAYOUT_ZERO
        );
        let group = match layout.tensor.checked_mul(layout.pipeline) {
            Some(tp_pp) => tp_pp.checked_mul(layout.context),
            None => None,
        };
        let Some(group) = group else {
            panic!("{}", rules::constant::GROUP_OVERFLOW)
        };
        assert!(
            layout.world_size.is_multiple_of(group),
            "{}",
            rules::constant::LAYOUT_NOT_DIVISIBLE
        );
        let mut plan = Plan::from_parts(
            micro_batch,
            accumulation,
            layout.world_size / group,
            seq_len,
        );
        plan.layout = Some(layout);
        plan
    }

    /// Like [`Plan::new`]; kept for call sites that read as "checked".
    fn checked(micro_batch: u64, accumulation: u64, replicas: u64) -> Result<Plan, PlanError> {
        Plan::new(micro_batch, accumulation, replicas)
    }

    /// A plan whose replicas come from a device layout (`accum::plan::global-batch`).
    pub fn with_layout(
        micro_batch: u64,
        accumulation: u64,
        layout: Layout,
    ) -> Result<Plan, PlanError> {
        let replicas = layout.replicas()?;
        let mut plan = Plan::checked(micro_batch, accumulation, replicas)?;
        plan.layout = Some(layout);
        Ok(plan)
    }

    /// Adds a fixed sequence length `L`. Fails on zero or when `m·A·D·L` overflows.
    pub fn with_seq_len(mut self, seq_len: u64) -> Result<Plan, PlanError> {
        nonzero(seq_len, Role::SeqLen)?;
        product(&[
            (Role::MicroBatch, self.micro_batch),
            (Role::Accumulation, self.accumulation),
            (Role::Replicas, self.replicas),
            (Role::SeqLen, seq_len),
        ])?;
        self.seq_len = Some(seq_len);
        Ok(self)
    }

    /// `m`: examples per microbatch per replica.
    #[inline]
    pub const fn micro_batch(&self) -> u64 {
        self.micro_batch
    }

    /// `A`: microbatches (forward and backward passes) one replica runs
    /// per update. A factor of the plan, like `m` and `D`; the counts it
    /// makes are typed (`A·D` is
    /// [`microbatches_per_update_all_replicas`](Plan::microbatches_per_update_all_replicas),
    /// and `Microbatches::new(a) * d` works too).
    #[inline]
    pub const fn accumulation(&self) -> u64 {
        self.accumulation
    }

    /// `D`: data-parallel replicas.
    #[inline]
    pub const fn replicas(&self) -> u64 {
        self.replicas
    }

    /// `L`, when sequence lengths are fixed.
    #[inline]
    pub const fn seq_len(&self) -> Option<u64> {
        self.seq_len
    }

    /// The layout the replicas were derived from, if any.
    #[inline]
    pub const fn layout(&self) -> Option<Layout> {
        self.layout
    }

    /// `B = m·A·D`: examples per update (`accum::plan::global-batch`).
    #[inline]
    pub const fn effective_batch(&self) -> Examples {
        // Checked at construction.
        Examples::new(self.micro_batch * self.accumulation * self.replicas)
    }

    /// `T = B·L`: tokens per update, when `L` is fixed (`accum::calc::tokens`).
    #[inline]
    pub const fn tokens_per_update(&self) -> Option<Tokens> {
        match self.seq_len {
            // Checked in `with_seq_len`.
            Some(len) => Some(Tokens::new(self.effective_batch().get() * len)),
            None => None,
        }
    }

    /// `m·A`: examples one replica processes per update.
    #[inline]
    pub const fn examples_per_replica_per_update(&self) -> Examples {
        Examples::new(self.micro_batch * self.accumulation)
    }

    /// `A·D`: microbatches all replicas together run per update.
    #[inline]
    pub const fn microbatches_per_update_all_replicas(&self) -> Microbatches {
        Microbatches::new(self.accumulation * self.replicas)
    }

    /// `T / D`: tokens one replica processes per update, when `L` is fixed.
    #[inline]
    pub const fn tokens_per_replica_per_update(&self) -> Option<Tokens> {
        match self.seq_len {
            Some(len) => Some(Tokens::new(self.micro_batch * self.accumulation * len)),
            None => None,
        }
    }

    /// `"B = m·A·D = 8 × 4 × 64 = 2,048"`.
    pub fn batch_formula(&self) -> String {
        format!(
            "B = m·A·D = {} × {} × {} = {}",
            self.micro_batch,
            self.accumulation,
            self.replicas,
            group_digits(self.effective_batch().get())
        )
    }

    /// `"T = B·L = 2,048 × 4,096 = 8,388,608"`, when `L` is fixed.
    pub fn token_formula(&self) -> Option<String> {
        let (len, tokens) = (self.seq_len?, self.tokens_per_update()?);
        Some(format!(
            "T = B·L = {} × {} = {}",
            group_digits(self.effective_batch().get()),
            group_digits(len),
            group_digits(tokens.get())
        ))
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "m {} × A {} × D {} = B {}",
            self.micro_batch,
            self.accumulation,
            self.replicas,
            self.effective_batch().get()
        )?;
        if let Some(len) = self.seq_len {
            write!(f, " (L {len})")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod testing {
    use proptest::prelude::*;

    use super::Plan;
    use crate::units::UnitKind;

    /// A valid plan; the factors must fit.
    pub(super) fn plan(m: u64, a: u64, d: u64) -> Plan {
        Plan::new(m, a, d).expect("valid plan")
    }

    pub(super) fn any_plan() -> impl Strategy<Value = Plan> {
        (
            1u64..=1024,
            1u64..=256,
            1u64..=512,
            proptest::option::of(1u64..=8192),
        )
            .prop_map(|(m, a, d, len)| {
                let plan = Plan::new(m, a, d).expect("small factors");
                match len {
                    Some(len) => plan.with_seq_len(len).expect("small factors"),
                    None => plan,
                }
            })
    }

    pub(super) fn any_unit() -> impl Strategy<Value = UnitKind> {
        prop_oneof![
            Just(UnitKind::Update),
            Just(UnitKind::Microbatch),
            Just(UnitKind::Example),
            Just(UnitKind::Token),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{UnitKind, Updates};
    use testing::plan;

    #[test]
    fn two_by_eight_by_two() {
        // `accum::plan::global-batch`: m=2, A=8, D=2 → B=32, 16 examples per replica per group.
        let p = plan(2, 8, 2);
        assert_eq!(p.effective_batch(), Examples::new(32));
        assert_eq!(p.examples_per_replica_per_update(), Examples::new(16));
        assert_eq!(p.accumulation(), 8);
        // The arithmetic users reach for: A microbatches times D.
        assert_eq!(
            Microbatches::new(p.accumulation()) * p.replicas(),
            p.microbatches_per_update_all_replicas()
        );
        assert_eq!(
            p.microbatches_per_update_all_replicas(),
            Microbatches::new(16)
        );
    }

    #[test]
    fn calculator_example_and_doubling_accumulation() {
        // `accum::plan::global-batch`/`accum::calc::tokens`: m=8, D=64, A=4, L=4096 → B=2048, T=8,388,608; A=8 → B=4096.
        let p = plan(8, 4, 64).with_seq_len(4096).expect("fits");
        assert_eq!(p.effective_batch().get(), 2048);
        assert_eq!(p.tokens_per_update(), Some(Tokens::new(8_388_608)));
        assert_eq!(p.batch_formula(), "B = m·A·D = 8 × 4 × 64 = 2,048");
        assert_eq!(
            p.token_formula().as_deref(),
            Some("T = B·L = 2,048 × 4,096 = 8,388,608")
        );
        let doubled = plan(8, 8, 64);
        assert_eq!(doubled.effective_batch().get(), 4096);
        // Same per-device microbatch, so the same activation memory (`accum::plan::global-batch`, `accum::run::memory`).
        assert_eq!(doubled.micro_batch(), p.micro_batch());
    }

    /// The const constructors stop with the plan rules' own words.
    #[test]
    fn const_parts_stop_with_the_rules_words() {
        fn panic_text(f: impl FnOnce() -> Plan + std::panic::UnwindSafe) -> String {
            let payload = std::panic::catch_unwind(f).expect_err("it panics");
            payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .expect("a text payload")
        }
        assert_eq!(
            panic_text(|| Plan::from_parts(2, 0, 2, None)),
            rules::constant::FACTOR_ZERO
        );
        assert_eq!(
            panic_text(|| Plan::from_parts(u64::MAX, 2, 1, None)),
            rules::constant::PRODUCT_OVERFLOW
        );
        assert_eq!(
            panic_text(|| Plan::from_parts(1 << 20, 1 << 20, 1, Some(1 << 30))),
            rules::constant::TOKENS_OVERFLOW
        );
        assert_eq!(
            panic_text(|| Plan::from_layout_parts(1, 4, Layout::new(64, 3, 2, 1), None)),
            rules::constant::LAYOUT_NOT_DIVISIBLE
        );
        assert_eq!(
            panic_text(|| Plan::from_layout_parts(1, 4, Layout::new(64, 0, 2, 1), None)),
            rules::constant::LAYOUT_ZERO
        );
        assert_eq!(
            Plan::from_layout_parts(1, 4, Layout::new(64, 2, 2, 1), Some(8)),
            Plan::with_layout(1, 4, Layout::new(64, 2, 2, 1))
                .and_then(|p| p.with_seq_len(8))
                .expect("valid")
        );
    }

    #[test]
    fn zeroes_are_rejected_with_their_role() {
        assert_eq!(
            Plan::new(0, 1, 1),
            Err(PlanError::Rule(Violation::Zero {
                role: Role::MicroBatch
            }))
        );
        assert_eq!(
            Plan::new(1, 0, 1),
            Err(PlanError::Rule(Violation::Zero {
                role: Role::Accumulation
            }))
        );
        assert_eq!(
            Plan::new(1, 1, 0),
            Err(PlanError::Rule(Violation::Zero {
                role: Role::Replicas
            }))
        );
        assert_eq!(
            Layout::new(0, 1, 1, 1).replicas(),
            Err(PlanError::Rule(Violation::Zero {
                role: Role::WorldSize
            }))
        );
        assert_eq!(
            Layout::new(8, 1, 0, 1).replicas(),
            Err(PlanError::Rule(Violation::Zero {
                role: Role::PipelineParallel
            }))
        );
        assert_eq!(
            plan(1, 1, 1).with_seq_len(0),
            Err(PlanError::Rule(Violation::Zero { role: Role::SeqLen }))
        );
        let msg = PlanError::Rule(Violation::Zero {
            role: Role::Accumulation,
        })
        .to_string();
        assert!(msg.starts_with("accumulation is 0"), "{msg}");
    }

    #[test]
    fn overflow_is_an_error_with_the_equation() {
        let err = PlanInput {
            micro_batch: Some(u64::MAX),
            accumulation: Some(2),
            replicas: Some(1),
            ..PlanInput::default()
        }
        .resolve()
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "micro_batch 18446744073709551615 × accumulation 2 × replicas 1 does not fit in a 64-bit count; use smaller values"
        );
        let err = plan(1 << 20, 1 << 20, 1 << 20)
            .with_seq_len(1 << 10)
            .unwrap_err();
        assert!(
            matches!(err, PlanError::Rule(Violation::Overflow { .. })),
            "{err}"
        );
        assert!(Plan::new(u64::MAX, u64::MAX, u64::MAX).is_err());
        let p = plan(u64::MAX, 1, 1);
        assert!(p.from_updates(Updates::new(2), UnitKind::Example).is_err());
    }

    #[test]
    fn roles_round_trip_their_keys() {
        for role in Role::ALL {
            assert_eq!(Role::from_key(role.key()), Some(role));
        }
        assert_eq!(Role::from_key("steps"), None);
    }

    #[test]
    fn plan_serializes_with_stable_keys() {
        let json = serde_json::to_value(plan(2, 8, 2)).expect("serialize");
        assert_eq!(
            json,
            serde_json::json!({"micro_batch": 2, "accumulation": 8, "replicas": 2, "seq_len": null})
        );
    }

    mod properties {
        use proptest::prelude::*;

        use super::super::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]

            #[test]
            fn any_factors_give_a_plan_or_an_error_never_a_wrap(m in any::<u64>(), a in any::<u64>(), d in any::<u64>(), len in any::<u64>()) {
                let fits = m.checked_mul(a).and_then(|x| x.checked_mul(d));
                match Plan::new(m, a, d) {
                    Ok(plan) => {
                        prop_assert_eq!(Some(plan.effective_batch().get()), fits);
                        let with_len = plan.with_seq_len(len);
                        let fits_len = fits.and_then(|b| b.checked_mul(len)).filter(|_| len > 0);
                        prop_assert_eq!(with_len.ok().and_then(|p| p.tokens_per_update()).map(Tokens::get), fits_len);
                    }
                    Err(_) => prop_assert!(m == 0 || a == 0 || d == 0 || fits.is_none()),
                }
            }
        }
    }
}
