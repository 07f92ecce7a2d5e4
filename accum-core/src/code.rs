//! Stable codes of the rules accum-core checks (`accum::plan::global-batch`,
//! …): the names users look up, that findings and errors carry as data, and
//! that tools match on. [`Code::ALL`] lists every one, so that a help command
//! can explain each and a test can check that every emitted code is
//! documented.
//!
//! Codes are part of the interface: a code is never renamed or reused for a
//! different rule. Front ends add their own (for syntax and schema problems)
//! next to these.
//!
//! ```
//! use accum_core::Code;
//!
//! let code: Code = "accum::plan::global-batch".parse()?;
//! assert_eq!(code, Code::GlobalBatch);
//! assert!(Code::ALL.iter().all(|c| c.as_str().starts_with("accum::")));
//! # Ok::<(), accum_core::UnknownCode>(())
//! ```

use std::fmt;
use std::str::FromStr;

use serde::{Serialize, Serializer};

/// Declares [`Code`] with its string and summary once, so that
/// [`Code::ALL`] lists every variant by construction.
macro_rules! codes {
    ($($(#[$doc:meta])* $variant:ident = $text:literal, $summary:literal;)*) => {
        /// A stable rule code. See the [module docs](self).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Code {
            $($(#[$doc])* $variant,)*
        }

        impl Code {
            /// Every code, in the order of the rules.
            pub const ALL: &'static [Code] = &[$(Code::$variant),*];

            /// The code as users write it: `accum::plan::global-batch`.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $text,)*
                }
            }

            /// What the rule checks, in one line.
            pub const fn summary(self) -> &'static str {
                match self {
                    $(Code::$variant => $summary,)*
                }
            }
        }
    };
}

codes! {
    /// A plan factor is 0.
    Zero = "accum::plan::zero",
        "every factor of the plan (m, A, D, world size, tp, pp, cp, L, B) is at least 1";
    /// A value the plan needs is not given and cannot be solved.
    Missing = "accum::plan::missing",
        "m, A and D (or a world size) are given, or can be solved from the global batch";
    /// A plan value is given in two places.
    Duplicate = "accum::plan::duplicate",
        "each plan value is given in one place only";
    /// A product of plan values does not fit in 64 bits.
    Overflow = "accum::plan::overflow",
        "products of plan values such as m·A·D·L fit in a 64-bit count";
    /// `world_size` is not divisible by `tp·pp·cp`.
    Layout = "accum::plan::layout",
        "world_size is divisible by tp·pp·cp: devices that share a model copy are not replicas";
    /// A parallel degree is given without `world_size`.
    WorldSize = "accum::plan::world-size",
        "tensor, pipeline and context degrees come with the world_size they divide";
    /// `replicas` disagrees with the layout.
    Replicas = "accum::plan::replicas",
        "replicas, when given with a layout, equals world_size / (tp·pp·cp)";
    /// The declared global batch is not `m·A·D`.
    GlobalBatch = "accum::plan::global-batch",
        "the declared global batch equals B = m·A·D";
    /// A count in tokens without a fixed `seq_len`.
    SeqLen = "accum::plan::seq-len",
        "counts in tokens have a fixed seq_len, or lengths that the data counts";
    /// A count that is not a whole number of updates, with exact rounding.
    WholeUpdates = "accum::plan::whole-updates",
        "a count converted with exact rounding is a whole number of updates";
    /// The data ends in a partial group and the policy is `error`.
    PartialGroup = "accum::plan::partial-group",
        "with last_group \"error\", the data fills whole groups of B examples";
    /// A re-planning request that cannot be answered.
    Replan = "accum::plan::replan",
        "a re-planning limit of 1 or more, small enough to search the divisors of m·A";
    /// A length that cannot be read, or whose unit is ambiguous.
    Span = "accum::span",
        "a length has a number and an unambiguous unit: updates, microbatches, examples or tokens";
    /// The warmup is longer than the run.
    Warmup = "accum::span::warmup",
        "the warmup is not longer than the run";
    /// An interval is longer than the run.
    Every = "accum::span::every",
        "an interval such as \"every 500 updates\" is not longer than the run";
    /// A run length that is not a whole number of updates.
    Rounding = "accum::span::rounding",
        "a run length in examples or microbatches is a whole number of updates, or says how it rounds";
    /// A stage's batch is not given once, or is not a multiple of `m·D`.
    StageBatch = "accum::stages::batch",
        "every stage gives one of global_batch or accumulation, and its B is a multiple of m·D";
    /// Stages out of order, or without the ends they need.
    StageOrder = "accum::stages::order",
        "stages are listed in order; each but the last ends with `until`, and the last lasts to the end of the run";
    /// A stage ends inside one of its updates.
    StageBoundary = "accum::stages::boundary",
        "a stage ends on a whole update of its own batch";
    /// A linear ramp that cannot reach its final batch in whole increments.
    Ramp = "accum::stages::ramp",
        "a linear ramp grows from start to the final batch in whole increments, each a multiple of m·D";
    /// A length in updates under a batch that changes.
    StageShift = "accum::stages::shift",
        "under a ramp, a length written in updates covers a number of tokens that depends on the stages";
    /// An engine setting out of its range.
    Settings = "accum::settings",
        "engine settings (loss, precision, optimizer, data, model, log) are in their ranges";
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// `Debug` as `Display` for public error types: `main` returning one through
/// `?` prints its `Debug`, which should read as the sentence its `Display`
/// writes (`Error: global_batch 30 ≠ …; use …`), not as the enum's fields
/// — the convention `anyhow` users expect. The fields stay public data.
macro_rules! debug_as_display {
    ($($ty:ty),* $(,)?) => {
        $(impl ::std::fmt::Debug for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                ::std::fmt::Display::fmt(self, f)
            }
        })*
    };
}
pub(crate) use debug_as_display;

debug_as_display!(UnknownCode);

/// A string that is not one of accum-core's codes.
#[derive(Clone, PartialEq, Eq)]
pub struct UnknownCode {
    /// The string as given.
    pub code: String,
}

impl fmt::Display for UnknownCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` is not a code of accum-core", self.code)
    }
}

impl std::error::Error for UnknownCode {}

impl FromStr for Code {
    type Err = UnknownCode;

    fn from_str(text: &str) -> Result<Code, UnknownCode> {
        Code::ALL
            .iter()
            .copied()
            .find(|code| code.as_str() == text)
            .ok_or_else(|| UnknownCode {
                code: text.to_owned(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_round_trip() {
        let mut seen = std::collections::BTreeSet::new();
        for &code in Code::ALL {
            assert!(seen.insert(code.as_str()), "{code} twice");
            assert_eq!(code.as_str().parse::<Code>(), Ok(code));
            assert_eq!(code.to_string(), code.as_str());
            assert!(!code.summary().is_empty());
            let json = serde_json::to_value(code).expect("serialize");
            assert_eq!(json, serde_json::json!(code.as_str()));
        }
        assert_eq!(
            "accum::plan".parse::<Code>(),
            Err(UnknownCode {
                code: "accum::plan".to_owned()
            })
        );
    }

    #[test]
    fn codes_are_lowercase_words_under_accum() {
        for &code in Code::ALL {
            let text = code.as_str();
            assert!(text.starts_with("accum::"), "{text}");
            assert!(
                text.split("::").all(|part| !part.is_empty()
                    && part.chars().all(|c| c.is_ascii_lowercase() || c == '-')),
                "{text}"
            );
        }
    }
}
