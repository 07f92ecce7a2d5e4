//! Typed counts: every counter, interval and schedule length names its unit
//! (`accum::span`).
//!
//! A [`Count<U>`] is a `u64` tagged with one of the four units [`Example`],
//! [`Microbatch`], [`Update`] and [`Token`]. The tag is zero-sized: a count
//! costs exactly what a `u64` costs. Arithmetic exists only within one unit;
//! converting between units needs a [`Plan`](crate::plan::Plan), because only
//! the plan knows how many examples make an update.
//!
//! ```
//! use accum_core::{Examples, Updates};
//!
//! let seen = Examples::new(32).checked_add(Examples::new(32))?;
//! assert_eq!(seen.to_string(), "64 examples");
//! assert_eq!(Updates::ONE.to_string(), "1 update");
//! # Ok::<(), accum_core::Overflow>(())
//! ```
//!
//! Mixing units does not compile:
//!
//! ```compile_fail
//! use accum_core::{Microbatches, Updates};
//! let _ = Updates::new(1) + Microbatches::new(8);
//! ```

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::iter::Sum;
use std::marker::PhantomData;
use std::ops::{Add, AddAssign, Mul, MulAssign, Rem, Sub};

use serde::{Deserialize, Serialize, Serializer};

mod sealed {
    pub trait Sealed {}
}

/// One of the four units a count can be in. Sealed: the set is closed.
pub trait Unit: sealed::Sealed + Copy + Send + Sync + 'static {
    /// The machine name used in schemas and JSON (`x-accum-unit`), e.g. `"update"`.
    const KEY: &'static str;
    /// Singular noun for display, e.g. `"update"`.
    const SINGULAR: &'static str;
    /// Plural noun for display, e.g. `"updates"`.
    const PLURAL: &'static str;
    /// The kind as a value, for code that must branch on the unit.
    const KIND: UnitKind;
}

macro_rules! unit {
    ($(#[$doc:meta])* $tag:ident, $alias:ident, $kind:ident, $key:literal, $one:literal, $many:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $tag;

        impl sealed::Sealed for $tag {}

        impl Unit for $tag {
            const KEY: &'static str = $key;
            const SINGULAR: &'static str = $one;
            const PLURAL: &'static str = $many;
            const KIND: UnitKind = UnitKind::$kind;
        }

        #[doc = concat!("A count of ", $many, ".")]
        pub type $alias = Count<$tag>;
    };
}

unit!(
    /// Unit tag: training examples (sequences). `B = m·A·D` is in examples.
    Example, Examples, Example, "example", "example", "examples"
);
unit!(
    /// Unit tag: microbatches, one forward and backward pass on one replica.
    Microbatch, Microbatches, Microbatch, "microbatch", "microbatch", "microbatches"
);
unit!(
    /// Unit tag: applied optimizer updates. An attempt that was skipped
    /// (non-finite gradients) is not an update (`accum::run::loss-scale`, `accum::run::scheduler`).
    Update, Updates, Update, "update", "update", "updates"
);
unit!(
    /// Unit tag: supervised tokens (padding and ignored positions excluded, `accum::run::normalization`).
    Token, Tokens, Token, "token", "token", "tokens"
);

/// The unit of a count as a runtime value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnitKind {
    /// Training examples.
    Example,
    /// Microbatches.
    Microbatch,
    /// Applied optimizer updates.
    Update,
    /// Supervised tokens.
    Token,
}

impl UnitKind {
    /// All four units, in the order used in messages.
    pub const ALL: [UnitKind; 4] = [
        UnitKind::Update,
        UnitKind::Microbatch,
        UnitKind::Example,
        UnitKind::Token,
    ];

    /// The machine name (`x-accum-unit`), e.g. `"token"`.
    pub const fn key(self) -> &'static str {
        match self {
            UnitKind::Example => Example::KEY,
            UnitKind::Microbatch => Microbatch::KEY,
            UnitKind::Update => Update::KEY,
            UnitKind::Token => Token::KEY,
        }
    }

    /// The singular noun.
    pub const fn singular(self) -> &'static str {
        self.key()
    }

    /// The plural noun.
    pub const fn plural(self) -> &'static str {
        match self {
            UnitKind::Example => Example::PLURAL,
            UnitKind::Microbatch => Microbatch::PLURAL,
            UnitKind::Update => Update::PLURAL,
            UnitKind::Token => Token::PLURAL,
        }
    }

    /// Parses a unit key (`"update"`) or noun, singular or plural.
    pub fn from_name(name: &str) -> Option<UnitKind> {
        UnitKind::ALL
            .into_iter()
            .find(|kind| name == kind.singular() || name == kind.plural())
    }

    /// The name of the typed count for this unit (`"Updates"`), as users write it.
    pub const fn type_name(self) -> &'static str {
        match self {
            UnitKind::Example => "Examples",
            UnitKind::Microbatch => "Microbatches",
            UnitKind::Update => "Updates",
            UnitKind::Token => "Tokens",
        }
    }
}

impl fmt::Display for UnitKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.plural())
    }
}

/// A count overflowed `u64`. Returned instead of wrapping.
#[derive(Clone, PartialEq, Eq)]
pub struct Overflow {
    /// What was being computed, with its operands: `"18446744073709551615 updates + 1 update"`.
    pub operation: String,
}

impl fmt::Display for Overflow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} overflows a 64-bit count (the largest is {})",
            self.operation,
            u64::MAX
        )
    }
}

impl std::error::Error for Overflow {}

crate::code::debug_as_display!(Overflow);

/// A non-negative count in unit `U`. Same layout as `u64`.
#[repr(transparent)]
pub struct Count<U> {
    value: u64,
    unit: PhantomData<fn() -> U>,
}

impl<U: Unit> Count<U> {
    /// Zero of this unit.
    pub const ZERO: Self = Self::new(0);
    /// One of this unit.
    pub const ONE: Self = Self::new(1);
    /// The largest representable count.
    pub const MAX: Self = Self::new(u64::MAX);

    /// A count of `value` in unit `U`.
    #[inline]
    #[must_use]
    pub const fn new(value: u64) -> Self {
        Count {
            value,
            unit: PhantomData,
        }
    }

    /// The number, without its unit.
    #[inline]
    #[must_use]
    pub const fn get(self) -> u64 {
        self.value
    }

    /// The unit as a runtime value.
    #[inline]
    #[must_use]
    pub const fn unit() -> UnitKind {
        U::KIND
    }

    /// Whether the count is zero.
    #[inline]
    #[must_use]
    pub const fn is_zero(self) -> bool {
        self.value == 0
    }

    /// `self + rhs`, or an [`Overflow`] error.
    #[inline]
    pub fn checked_add(self, rhs: Self) -> Result<Self, Overflow> {
        self.value
            .checked_add(rhs.value)
            .map(Self::new)
            .ok_or_else(|| Overflow {
                operation: format!("{self} + {rhs}"),
            })
    }

    /// `self - rhs`, or `None` when `rhs` is larger.
    #[inline]
    #[must_use]
    pub const fn checked_sub(self, rhs: Self) -> Option<Self> {
        match self.value.checked_sub(rhs.value) {
            Some(v) => Some(Self::new(v)),
            None => None,
        }
    }

    /// `self - rhs`, clamped at zero.
    #[inline]
    #[must_use]
    pub const fn saturating_sub(self, rhs: Self) -> Self {
        Self::new(self.value.saturating_sub(rhs.value))
    }

    /// `self × factor` in the same unit (e.g. 3 × 500 updates), or an [`Overflow`].
    #[inline]
    pub fn checked_mul(self, factor: u64) -> Result<Self, Overflow> {
        self.value
            .checked_mul(factor)
            .map(Self::new)
            .ok_or_else(|| Overflow {
                operation: format!("{self} × {factor}"),
            })
    }

    /// Whether `self` is a whole multiple of `step` (`1000 updates` of
    /// `500 updates`). Like [`u64::is_multiple_of`], only zero is a multiple
    /// of zero.
    #[inline]
    #[must_use]
    pub const fn is_multiple_of(self, step: Self) -> bool {
        self.value.is_multiple_of(step.value)
    }

    /// How many whole `per` fit in `self`, and the remainder, in the same unit.
    /// `None` when `per` is zero.
    #[inline]
    #[must_use]
    pub const fn div_rem(self, per: Self) -> Option<(u64, Self)> {
        if per.value == 0 {
            return None;
        }
        Some((self.value / per.value, Self::new(self.value % per.value)))
    }
}

impl<U> Clone for Count<U> {
    #[inline]
    fn clone(&self) -> Self {
        *self
    }
}
impl<U> Copy for Count<U> {}

impl<U> PartialEq for Count<U> {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}
impl<U> Eq for Count<U> {}

impl<U> PartialOrd for Count<U> {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<U> Ord for Count<U> {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        self.value.cmp(&other.value)
    }
}

impl<U> Hash for Count<U> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.value.hash(state);
    }
}

impl<U: Unit> Default for Count<U> {
    #[inline]
    fn default() -> Self {
        Self::ZERO
    }
}

impl<U: Unit> fmt::Debug for Count<U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({})", U::KIND.type_name(), self.value)
    }
}

impl<U: Unit> fmt::Display for Count<U> {
    /// `"32 examples"`, `"1 update"`; with `{:#}` digits are grouped: `"8,388,608 tokens"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let noun = if self.value == 1 {
            U::SINGULAR
        } else {
            U::PLURAL
        };
        if f.alternate() {
            write!(f, "{} {noun}", group_digits(self.value))
        } else {
            write!(f, "{} {noun}", self.value)
        }
    }
}

/// Formats an integer with `,` between groups of three digits: `8,388,608`
/// (the plan rules' own, which the derive compiles too).
pub use crate::plan::rules::group_digits;

/// Same-unit addition. Panics on overflow like integer arithmetic in debug
/// builds, in every profile; use [`Count::checked_add`] for values a user controls.
impl<U: Unit> Add for Count<U> {
    type Output = Self;
    #[inline]
    fn add(self, rhs: Self) -> Self {
        match self.value.checked_add(rhs.value) {
            Some(v) => Self::new(v),
            None => panic!("count overflow: {self} + {rhs}"),
        }
    }
}

impl<U: Unit> AddAssign for Count<U> {
    #[inline]
    fn add_assign(&mut self, rhs: Self) {
        *self = *self + rhs;
    }
}

/// Same-unit subtraction. Panics when `rhs > self`; use [`Count::checked_sub`]
/// for values a user controls.
impl<U: Unit> Sub for Count<U> {
    type Output = Self;
    #[inline]
    fn sub(self, rhs: Self) -> Self {
        match self.value.checked_sub(rhs.value) {
            Some(v) => Self::new(v),
            None => panic!("count underflow: {self} - {rhs}"),
        }
    }
}

/// A count times a factor, in the same unit: `Microbatches::new(8) * 4`
/// (`A` microbatches per replica times `D` replicas) is 32 microbatches.
/// Panics on overflow like [`Add`], in every profile; use
/// [`Count::checked_mul`] for values a user controls. Two counts do not
/// multiply: a product of units is no unit of accum's.
impl<U: Unit> Mul<u64> for Count<U> {
    type Output = Self;
    #[inline]
    fn mul(self, factor: u64) -> Self {
        match self.value.checked_mul(factor) {
            Some(v) => Self::new(v),
            None => panic!("count overflow: {self} × {factor}"),
        }
    }
}

/// A factor times a count, in the count's unit: `4 * Microbatches::new(8)`.
impl<U: Unit> Mul<Count<U>> for u64 {
    type Output = Count<U>;
    #[inline]
    fn mul(self, count: Count<U>) -> Count<U> {
        count * self
    }
}

impl<U: Unit> MulAssign<u64> for Count<U> {
    #[inline]
    fn mul_assign(&mut self, factor: u64) {
        *self = *self * factor;
    }
}

/// The remainder in the same unit: `1234 tokens % 1000 tokens = 234 tokens`.
/// Panics when `rhs` is zero, like integer `%`; use [`Count::div_rem`] for
/// values a user controls.
impl<U: Unit> Rem for Count<U> {
    type Output = Self;
    #[inline]
    fn rem(self, rhs: Self) -> Self {
        match self.value.checked_rem(rhs.value) {
            Some(v) => Self::new(v),
            None => panic!("count remainder by zero: {self} % {rhs}"),
        }
    }
}

impl<U: Unit> Sum for Count<U> {
    fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
        iter.fold(Self::ZERO, Add::add)
    }
}

impl<U: Unit> From<Count<U>> for u64 {
    #[inline]
    fn from(count: Count<U>) -> u64 {
        count.value
    }
}

impl<U: Unit> Serialize for Count<U> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(self.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_the_unit() {
        assert_eq!(Examples::new(32).to_string(), "32 examples");
        assert_eq!(Updates::new(1).to_string(), "1 update");
        assert_eq!(Microbatches::new(0).to_string(), "0 microbatches");
        assert_eq!(format!("{:#}", Tokens::new(8_388_608)), "8,388,608 tokens");
        assert_eq!(format!("{:?}", Updates::new(3)), "Updates(3)");
    }

    #[test]
    fn group_digits_edges() {
        assert_eq!(group_digits(0), "0");
        assert_eq!(group_digits(999), "999");
        assert_eq!(group_digits(1000), "1,000");
        assert_eq!(group_digits(2048), "2,048");
        assert_eq!(group_digits(u64::MAX), "18,446,744,073,709,551,615");
    }

    #[test]
    fn checked_arithmetic_reports_overflow() {
        let err = Updates::MAX.checked_add(Updates::ONE).unwrap_err();
        assert!(
            err.to_string().contains("overflows a 64-bit count"),
            "{err}"
        );
        assert!(
            err.to_string()
                .contains("18446744073709551615 updates + 1 update")
        );
        assert!(Tokens::new(u64::MAX / 2 + 1).checked_mul(2).is_err());
        assert_eq!(Examples::new(3).checked_sub(Examples::new(4)), None);
        assert_eq!(
            Examples::new(3).saturating_sub(Examples::new(4)),
            Examples::ZERO
        );
        assert_eq!(
            Examples::new(7).div_rem(Examples::new(2)),
            Some((3, Examples::new(1)))
        );
        assert_eq!(Examples::new(7).div_rem(Examples::ZERO), None);
    }

    #[test]
    fn same_unit_operators() {
        let mut u = Updates::new(2) + Updates::new(3);
        u += Updates::ONE;
        assert_eq!(u, Updates::new(6));
        assert_eq!(u - Updates::new(6), Updates::ZERO);
        let total: Tokens = [1, 2, 3].into_iter().map(Tokens::new).sum();
        assert_eq!(total.get(), 6);
    }

    #[test]
    fn counts_times_a_factor_keep_their_unit() {
        // A microbatches per replica times D replicas: A·D microbatches.
        let per_replica = Microbatches::new(8);
        let all: Microbatches = per_replica * 4;
        assert_eq!(all, Microbatches::new(32));
        assert_eq!(4 * per_replica, all);
        let mut tokens = Tokens::new(2_048);
        tokens *= 3;
        assert_eq!(tokens, Tokens::new(6_144));
        let none = Updates::new(7).get() - 7;
        assert_eq!(Updates::new(7) * none, Updates::ZERO);
    }

    #[test]
    #[should_panic(expected = "count overflow")]
    fn operator_overflow_panics_instead_of_wrapping() {
        let _ = Updates::MAX + Updates::ONE;
    }

    #[test]
    #[should_panic(expected = "count overflow: 18446744073709551615 examples × 2")]
    fn a_product_that_overflows_panics_instead_of_wrapping() {
        let _ = Examples::MAX * 2;
    }

    #[test]
    fn serde_writes_a_plain_integer_and_reads_it_with_or_without_its_unit() {
        let json = serde_json::to_string(&Examples::new(32)).expect("serialize");
        assert_eq!(json, "32");
        let read = |text: &str| serde_json::from_str::<Updates>(text).map_err(|e| e.to_string());
        assert_eq!(read("32"), Ok(Updates::new(32)));
        assert_eq!(read(r#""100 updates""#), Ok(Updates::new(100)));
        assert_eq!(read(r#""1 update""#), Ok(Updates::new(1)));
        assert_eq!(read(r#""1.5k updates""#), Ok(Updates::new(1500)));
        assert_eq!(
            read(r#""100""#),
            Ok(Updates::new(100)),
            "the type names the unit"
        );
        assert_eq!(read(r#"{"updates": 7}"#), Ok(Updates::new(7)));
        let other = read(r#""2M tokens""#).unwrap_err();
        assert!(
            other.contains("`2M tokens` counts tokens, but this field counts updates")
                && other.contains("e.g. \"2000000 updates\""),
            "{other}"
        );
        let steps = read(r#""100 steps""#).unwrap_err();
        assert!(steps.contains("ambiguous"), "{steps}");
        assert!(read("-1").unwrap_err().contains("a whole count of updates"));
        assert!(read("2.5").unwrap_err().contains("floating point"));
        #[derive(serde::Deserialize)]
        struct Log {
            every: Tokens,
        }
        let log: Log = toml::from_str("every = \"2M tokens\"").expect("toml");
        assert_eq!(log.every, Tokens::new(2_000_000));
    }

    #[test]
    fn multiples_and_remainders_stay_in_their_unit() {
        assert!(Updates::new(1000).is_multiple_of(Updates::new(500)));
        assert!(!Updates::new(999).is_multiple_of(Updates::new(500)));
        assert!(Updates::ZERO.is_multiple_of(Updates::ZERO));
        assert!(!Updates::ONE.is_multiple_of(Updates::ZERO));
        assert_eq!(Tokens::new(1234) % Tokens::new(1000), Tokens::new(234));
    }

    #[test]
    #[should_panic(expected = "count remainder by zero")]
    fn remainder_by_zero_panics_like_integers() {
        let _ = Examples::new(3) % Examples::ZERO;
    }

    #[test]
    fn unit_kind_names() {
        assert_eq!(UnitKind::from_name("tokens"), Some(UnitKind::Token));
        assert_eq!(UnitKind::from_name("update"), Some(UnitKind::Update));
        assert_eq!(UnitKind::from_name("steps"), None);
        assert_eq!(UnitKind::Microbatch.type_name(), "Microbatches");
        assert_eq!(std::mem::size_of::<Updates>(), 8);
    }
}
