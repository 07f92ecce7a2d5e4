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
            $($(#[$doc:meta])* $variant:ident = $text:literal, $summary:literal;)*
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
            $($($(#[$doc])* $variant,)*)*
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

            /// What the rule checks, in one line.
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
        /// The file is not valid TOML, JSON or YAML.
        Syntax = "accum::syntax",
            "the file parses in the format its extension names";
    }
    /// The shape of a configuration: its keys, types and ranges.
    Schema = "accum::schema" {
        /// A value that does not have the form the schema describes.
        Schema = "accum::schema",
            "every value has the form the configuration's schema describes";
        /// A key the configuration does not have.
        UnknownKey = "accum::schema::unknown-key",
            "every key of every table is one the configuration declares";
        /// A key the configuration needs is not there.
        MissingKey = "accum::schema::missing-key",
            "every required key of a table is given";
        /// A value of the wrong type.
        SchemaType = "accum::schema::type",
            "every value has the type its key takes";
        /// A value outside a fixed set of choices.
        SchemaEnum = "accum::schema::enum",
            "a value with fixed choices is one of them";
        /// A number outside its range, or an array or text of the wrong length.
        SchemaRange = "accum::schema::range",
            "numbers are in their ranges, arrays and texts of their lengths";
        /// A value of the right type that its type refuses.
        SchemaValue = "accum::schema::value",
            "a value of the right type is one its type accepts";
    }
    /// Lengths and intervals of a run.
    Span = "accum::span" {
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
    }
    /// The plan `B = m·A·D`.
    Plan = "accum::plan" {
        /// A plan rule, as a whole: the roles make one consistent plan.
        Plan = "accum::plan",
            "the roles of the configuration make one consistent plan";
        /// A plan factor is 0.
        Zero = "accum::plan::zero",
            "every factor of the plan (m, A, D, world size, tp, pp, cp, L, B) is at least 1";
        /// A value the plan needs is not given and cannot be solved.
        Missing = "accum::plan::missing",
            "m, A and D (or a world size) are given, or can be solved from the global batch";
        /// `world_size` is not divisible by `tp·pp·cp`.
        Layout = "accum::plan::layout",
            "world_size is divisible by tp·pp·cp: devices that share a model copy are not replicas";
        /// `replicas` disagrees with the layout.
        Replicas = "accum::plan::replicas",
            "replicas, when given with a layout, equals world_size / (tp·pp·cp)";
        /// The declared global batch is not `m·A·D`.
        GlobalBatch = "accum::plan::global-batch",
            "the declared global batch equals B = m·A·D";
        /// A product of plan values does not fit in 64 bits.
        Overflow = "accum::plan::overflow",
            "products of plan values such as m·A·D·L fit in a 64-bit count";
        /// A plan value is given in two places.
        Duplicate = "accum::plan::duplicate",
            "each plan value is given in one place only";
        /// A parallel degree is given without `world_size`.
        WorldSize = "accum::plan::world-size",
            "tensor, pipeline and context degrees come with the world_size they divide";
        /// A count in tokens without a fixed `seq_len`.
        SeqLen = "accum::plan::seq-len",
            "counts in tokens have a fixed seq_len, or lengths that the data counts";
        /// A count that is not a whole number of updates, with exact rounding.
        WholeUpdates = "accum::plan::whole-updates",
            "a count converted with exact rounding is a whole number of updates";
        /// The data ends in a partial group.
        PartialGroup = "accum::plan::partial-group",
            "the data fills whole groups of B examples, or the last group has an explicit policy";
        /// A re-planning request that cannot be answered.
        Replan = "accum::plan::replan",
            "a re-planning limit of 1 or more, small enough to search the divisors of m·A";
    }
    /// A batch that changes during the run.
    Stages = "accum::stages" {
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
    }
    /// The engine's settings.
    Settings = "accum::settings" {
        /// An engine setting out of its range.
        Settings = "accum::settings",
            "engine settings (loss, precision, optimizer, data, model, log) are in their ranges";
    }
    /// The accumulation loop.
    Run = "accum::run" {
        /// Gradients are zeroed once per group, after the update.
        Zeroing = "accum::run::zeroing",
            "gradients are zeroed once per group, after the optimizer update";
        /// The loss is normalized by what the whole group evaluated, once.
        Normalization = "accum::run::normalization",
            "the loss of a group is divided once, by the examples or tokens of the whole group";
        /// One group: boundaries and denominator first, then its microbatches.
        Group = "accum::run::group",
            "a group fixes its boundaries and denominator first, then runs each microbatch, then updates";
        /// One loss scale per group; a non-finite gradient skips the update.
        LossScale = "accum::run::loss-scale",
            "the loss scale is constant during a group, and a non-finite gradient skips the update";
        /// The scheduler steps once per applied update.
        Scheduler = "accum::run::scheduler",
            "the learning-rate schedule steps once per applied update";
        /// Replicas see different examples, and reduce once per group.
        DataParallel = "accum::run::data-parallel",
            "replicas see different examples, and gradients are reduced once per group";
        /// A group that does not fit: lower `m`, recompute `A`, keep `B`.
        Memory = "accum::run::memory",
            "a smaller micro-batch keeps B with a whole A, within the memory it is given";
    }
    /// The pre-flight check.
    Verify = "accum::verify" {
        /// Accumulation gives the large batch's gradient, within a tolerance.
        Equivalence = "accum::verify::equivalence",
            "one update of A microbatches on D replicas matches one batch of B, within a tolerance";
        /// One controlled update before a campaign.
        Preflight = "accum::verify::preflight",
            "one controlled update passes every check before a campaign";
    }
    /// A run's data sheet.
    Sheet = "accum::sheet" {
        /// A run's data sheet records what the run was.
        Sheet = "accum::sheet",
            "a run's data sheet records its plan, tokens, precision, normalization and schedule";
    }
    /// The calculator's estimates.
    Calc = "accum::calc" {
        /// Tokens per update are `B·L` only with a fixed length.
        Tokens = "accum::calc::tokens",
            "tokens per update are B·L only when every example has L tokens";
        /// One gradient reduction per update, not per microbatch.
        Scaling = "accum::calc::scaling",
            "more replicas cost one gradient reduction per update, not one per microbatch";
    }
    /// Files of other frameworks, imported, linted or exported.
    Interop = "accum::interop" {
        /// The framework would silently round a value.
        Rounds = "accum::interop::rounds",
            "values the framework derives with a floor or a ceiling come out exact";
        /// The framework's own start-up check would fail.
        EngineAssert = "accum::interop::engine-assert",
            "the framework's own start-up checks of the batch pass";
        /// A framework value of the wrong type, out of range, or contradictory.
        InteropValue = "accum::interop::value",
            "the framework's keys have their types and ranges, and do not contradict each other";
        /// A key counts microbatches where updates are likely meant.
        StepUnit = "accum::interop::step-unit",
            "intervals that count training batches are multiples of A";
        /// The loss is not normalized by the group's tokens.
        PerToken = "accum::interop::per-token",
            "with variable lengths, the framework divides the loss by the tokens of the whole group";
        /// Model-parallel devices are counted as replicas.
        ModelParallelReplicas = "accum::interop::model-parallel-replicas",
            "the framework counts world / (tp·pp·cp) replicas, not every device";
        /// The world size given disagrees with the file.
        InteropWorldSize = "accum::interop::world-size",
            "the world size given agrees with the launcher in the file";
        /// A key is understood but not carried into accum's config.
        NotConverted = "accum::interop::not-converted",
            "every key read has an equivalent in the accum configuration, or is named";
        /// A value is left to another tool (`"auto"`).
        Auto = "accum::interop::auto",
            "batch values are written, not left \"auto\" to another tool";
        /// The file is another framework's, or a shape accum does not read.
        Dialect = "accum::interop::dialect",
            "the file is the named framework's, in a shape accum reads";
        /// A file named by the imported one could not be read.
        File = "accum::interop::file",
            "the files an imported one names can be read";
        /// The file makes the reader do more work than any real file needs.
        Limit = "accum::interop::limit",
            "nesting, self-reference and expansion of a file stay within the reader's limits";
        /// What the framework does with a setting depends on its version.
        Version = "accum::interop::version",
            "settings whose effect depends on the framework's version are named";
        /// A key of the batch vocabulary that the reader did not read.
        Unread = "accum::interop::unread",
            "every key of the batch vocabulary in the file is read";
        /// The framework restarts its count at each change of the batch.
        RampRestarts = "accum::interop::ramp-restarts",
            "a ramp-up that stops the run at each change of the batch is named";
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
