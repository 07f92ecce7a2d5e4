//! Stable codes of accum's rules (`accum::plan::global-batch`, …): the
//! names users look up, that findings, diagnostics and errors carry as data,
//! and that tools match on. Every code accum emits, from the library, the
//! derive's run-time checks or the command-line tool, is one [`Code`], in
//! one of the [`Family`]s of docs/rules.md. [`Code::ALL`] lists every one, so
//! that a help command can explain each and a test can check that every
//! emitted code is documented, and every documented code emitted.
//!
//! Codes are part of the interface: a code is never reused for a different
//! rule. A code merged into the rule it duplicated still parses, to the code
//! that replaced it ([`Code::RENAMED`]).
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

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Declares [`Family`] and [`Code`] with each string and summary once, so
/// that [`Code::ALL`] lists every variant and [`Code::family`] knows each
/// code's family by construction.
macro_rules! codes {
    ($(
        $(#[$fdoc:meta])* $family:ident = $ftext:literal {
            $($variant:ident = $text:literal, $summary:literal;)*
        }
    )*) => {
        /// The family of a [`Code`]: the part of accum whose rule it is
        /// (`accum::plan`, `accum::interop`, …).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Family {
            $($(#[$fdoc])* $family,)*
        }

        impl Family {
            /// Every family, in the order of the rules.
            pub const ALL: &'static [Family] = &[$(Family::$family),*];

            /// The family's prefix: `accum::plan`.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Family::$family => $ftext,)*
                }
            }
        }

        /// A stable rule code: the name users look up in docs/rules.md, that
        /// findings and errors carry as data, and that tools match on.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Code {
            $($(#[doc = $summary] $variant,)*)*
        }

        impl Code {
            /// Every code, in the order of the rules.
            pub const ALL: &'static [Code] = &[$($(Code::$variant,)*)*];

            /// The code as users write it: `accum::plan::global-batch`.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($(Code::$variant => $text,)*)*
                }
            }

            /// The rule's one-line description: the variant's doc, the
            /// first paragraph of its entry in docs/rules.md and of `accum
            /// explain`, and the short description of SARIF, written once.
            pub const fn summary(self) -> &'static str {
                match self {
                    $($(Code::$variant => $summary,)*)*
                }
            }

            /// The family the code belongs to: [`Family::Plan`] for
            /// `accum::plan::global-batch`.
            pub const fn family(self) -> Family {
                match self {
                    $($(Code::$variant => Family::$family,)*)*
                }
            }
        }
    };
}

codes! {
    /// The syntax of a configuration file.
    Syntax = "accum::syntax" {
        Syntax = "accum::syntax",
            "The file is not valid TOML, JSON or YAML.";
    }
    /// The shape of a configuration: its keys, types and ranges.
    Schema = "accum::schema" {
        Schema = "accum::schema",
            "A value does not have the form the schema describes.";
        UnknownKey = "accum::schema::unknown-key",
            "A key that the configuration does not have.";
        MissingKey = "accum::schema::missing-key",
            "A key the configuration needs is not there.";
        SchemaType = "accum::schema::type",
            "A value of the wrong type: a string where a count goes, a fraction where a whole number goes, a number where a table goes.";
        SchemaEnum = "accum::schema::enum",
            "A value outside a fixed set of choices.";
        SchemaRange = "accum::schema::range",
            "A number outside its range, or an array or text of the wrong length.";
        SchemaValue = "accum::schema::value",
            "A value of the right type that its type refuses: a count too large for its field, a zero where the type is non-zero, a key given twice, or the type's own check failed.";
    }
    /// Lengths and intervals of a run.
    Span = "accum::span" {
        Span = "accum::span",
            "A length without a unit, or with a unit that does not say what it counts.";
        Warmup = "accum::span::warmup",
            "The warmup is longer than the run.";
        Every = "accum::span::every",
            "An interval is longer than the run.";
        Rounding = "accum::span::rounding",
            "A run length is not a whole number of updates (a warning).";
    }
    /// The plan `B = m·A·D`.
    Plan = "accum::plan" {
        Plan = "accum::plan",
            "A plan rule failed; the message states the equation with its numbers.";
        Zero = "accum::plan::zero",
            "A factor of the plan is 0.";
        Missing = "accum::plan::missing",
            "A factor of the plan is not given and cannot be solved.";
        Layout = "accum::plan::layout",
            "The world size is not divisible by the devices that share one model copy.";
        Replicas = "accum::plan::replicas",
            "The replicas given disagree with the world layout.";
        GlobalBatch = "accum::plan::global-batch",
            "The declared global batch is not `m·A·D`, or cannot be reached with whole factors.";
        Overflow = "accum::plan::overflow",
            "A product of the plan does not fit in 64 bits.";
        Duplicate = "accum::plan::duplicate",
            "A plan value is given in two places.";
        WorldSize = "accum::plan::world-size",
            "A tensor, pipeline or context degree is given without the world size it divides.";
        SeqLen = "accum::plan::seq-len",
            "A count in tokens needs a fixed sequence length.";
        WholeUpdates = "accum::plan::whole-updates",
            "A length that must be a whole number of updates is not.";
        PartialGroup = "accum::plan::partial-group",
            "The last group of the data is handled by an explicit policy; `error` refuses one.";
        Replan = "accum::plan::replan",
            "A re-planning request that cannot be answered.";
    }
    /// A batch that changes during the run.
    Stages = "accum::stages" {
        StageBatch = "accum::stages::batch",
            "A stage's batch is given once, and is a multiple of `m·D`.";
        StageOrder = "accum::stages::order",
            "Stages are listed in order, and each says where it ends.";
        StageBoundary = "accum::stages::boundary",
            "A stage ends on a whole update of its own batch.";
        Ramp = "accum::stages::ramp",
            "A linear ramp reaches its final batch in whole increments.";
        StageShift = "accum::stages::shift",
            "Under a ramp-up, a length written in updates covers a number of tokens that depends on the stages.";
    }
    /// The engine's settings.
    Settings = "accum::settings" {
        Settings = "accum::settings",
            "An engine setting outside its range.";
    }
    /// The accumulation loop.
    Run = "accum::run" {
        Zeroing = "accum::run::zeroing",
            "Gradients are zeroed once per group, after the update.";
        Normalization = "accum::run::normalization",
            "The loss of a group is normalized by what the whole group evaluated, once.";
        Group = "accum::run::group",
            "One group: boundaries and denominator first, then each microbatch, then the update.";
        LossScale = "accum::run::loss-scale",
            "The loss scale is constant during a group; a non-finite gradient skips the update.";
        Scheduler = "accum::run::scheduler",
            "The learning-rate schedule advances in its unit: once per applied update.";
        DataParallel = "accum::run::data-parallel",
            "Data-parallel replicas see different examples, and the reduction and the denominator are designed together.";
        Memory = "accum::run::memory",
            "A group that does not fit: lower `m`, recompute `A`, keep `B`.";
    }
    /// The pre-flight check.
    Verify = "accum::verify" {
        Equivalence = "accum::verify::equivalence",
            "Accumulation gives the large batch's gradient, within a tolerance.";
        Preflight = "accum::verify::preflight",
            "One controlled update before a campaign.";
    }
    /// A run's data sheet.
    Sheet = "accum::sheet" {
        Sheet = "accum::sheet",
            "A run's data sheet records what the run was.";
    }
    /// The calculator's estimates.
    Calc = "accum::calc" {
        Tokens = "accum::calc::tokens",
            "Tokens per update are `B·L` only when every example has `L` tokens.";
        Scaling = "accum::calc::scaling",
            "More replicas: one gradient reduction per update, not per microbatch.";
    }
    /// Files of other frameworks, imported, linted or exported.
    Interop = "accum::interop" {
        Rounds = "accum::interop::rounds",
            "The framework would silently round a value.";
        EngineAssert = "accum::interop::engine-assert",
            "The framework's own start-up check would fail.";
        InteropValue = "accum::interop::value",
            "A value of the wrong type, negative, not finite, or contradictory.";
        StepUnit = "accum::interop::step-unit",
            "A \"step\" that counts microbatches where updates are likely meant.";
        PerToken = "accum::interop::per-token",
            "Lengths vary, but the loss is not divided by the group's tokens.";
        ModelParallelReplicas = "accum::interop::model-parallel-replicas",
            "Devices that share one model copy are counted as data-parallel replicas.";
        InteropWorldSize = "accum::interop::world-size",
            "The world size given disagrees with the file.";
        NotConverted = "accum::interop::not-converted",
            "A key is understood but not carried into the accum configuration.";
        Auto = "accum::interop::auto",
            "A value is `\"auto\"`: another tool fills it in.";
        Dialect = "accum::interop::dialect",
            "The file belongs to another framework than the one named, or has a shape accum does not read.";
        File = "accum::interop::file",
            "A file that the imported one names could not be read, or was not read because it is outside the imported file's repository (with `--format json`, also the imported file itself, exit 2).";
        Limit = "accum::interop::limit",
            "The file makes the reader do more work than any real file of its kind needs.";
        Version = "accum::interop::version",
            "What the framework does with a setting depends on its version.";
        Unread = "accum::interop::unread",
            "A key or argument of the batch vocabulary that the framework's reader did not read.";
        RampRestarts = "accum::interop::ramp-restarts",
            "The framework stops the run at each change of the batch, and its count of consumed samples leaves out the first step after each start.";
    }
}

impl Code {
    /// Codes that an earlier version emitted for a mistake that now has
    /// the code of the rule it breaks, as docs/rules.md lists them; they
    /// still parse, to the code that replaced them.
    pub const RENAMED: &'static [(&'static str, Code)] = &[
        ("accum::interop::not-divisible", Code::GlobalBatch),
        ("accum::interop::layout", Code::Layout),
        ("accum::interop::missing", Code::Missing),
        ("accum::interop::partial-group", Code::PartialGroup),
        ("accum::interop::schedule-shift", Code::StageShift),
    ];
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
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

impl<'de> Deserialize<'de> for Code {
    /// A code as [`FromStr`] reads it.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Code, D::Error> {
        let text = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
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

/// A string that is not one of accum's codes.
#[derive(Clone, PartialEq, Eq)]
pub struct UnknownCode {
    /// The string as given.
    pub code: String,
}

impl fmt::Display for UnknownCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` is not a code of docs/rules.md", self.code)
    }
}

impl std::error::Error for UnknownCode {}

impl FromStr for Code {
    type Err = UnknownCode;

    /// A code as [`Code::as_str`] writes it, or one of the
    /// [renamed](Code::RENAMED) codes.
    fn from_str(text: &str) -> Result<Code, UnknownCode> {
        Code::ALL
            .iter()
            .copied()
            .find(|code| code.as_str() == text)
            .or_else(|| {
                Code::RENAMED
                    .iter()
                    .find(|(old, _)| *old == text)
                    .map(|&(_, code)| code)
            })
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
            assert_eq!(serde_json::from_value::<Code>(json).ok(), Some(code));
        }
        assert_eq!(
            "accum::stages".parse::<Code>(),
            Err(UnknownCode {
                code: "accum::stages".to_owned()
            })
        );
    }

    #[test]
    fn codes_sit_under_their_family() {
        for &code in Code::ALL {
            let family = code.family().as_str();
            let rest = code.as_str().strip_prefix(family).unwrap_or("?");
            assert!(
                rest.is_empty() || rest.starts_with("::"),
                "{code} in {family}"
            );
        }
        for &family in Family::ALL {
            assert!(
                Code::ALL.iter().any(|c| c.family() == family),
                "{family} has no code"
            );
        }
        assert_eq!(Code::GlobalBatch.family(), Family::Plan);
        assert_eq!(Code::Syntax.family(), Family::Syntax);
        assert_eq!(Code::EngineAssert.family(), Family::Interop);
    }

    #[test]
    fn merged_codes_parse_to_the_code_that_replaced_them() {
        for &(old, code) in Code::RENAMED {
            assert_eq!(old.parse::<Code>(), Ok(code), "{old}");
            assert!(
                Code::ALL.iter().all(|c| c.as_str() != old),
                "{old} is still a code"
            );
        }
        assert_eq!(
            "accum::interop::not-divisible".parse::<Code>(),
            Ok(Code::GlobalBatch)
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
