//! Everything that can be wrong with a plan ([`PlanError`]) as data: its
//! [`Code`], the [`Role`] of the value to change, a message that states the
//! equation with its numbers, a short label for the value, and the [`Fix`]
//! with the values that would pass. `Display` joins message and fix for logs;
//! front ends render the parts. A plan rule's [`Violation`] is held as the
//! rules produce it, not mirrored: its sentences are written once, in
//! `rules`, and shared with the derive's compile errors.

use std::fmt;

use serde::Serialize;

use super::Role;
use super::replan::REPLAN_SEARCH;
use super::rules::{self, Violation};
use crate::code::Code;
use crate::units::{Overflow, UnitKind, group_digits};

/// The way out of a problem: a sentence, and the plan values that realize
/// it, when it is a matter of plan values.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Fix {
    /// What to do: `use global_batch = 28 (accumulation = 7) or 32 (accumulation = 8)`.
    pub text: String,
    /// The alternatives the text names, in its order; each is a set of plan
    /// values that pass together. Empty when the fix is not a plan value
    /// (give a missing value, choose a rounding).
    pub options: Vec<Vec<Edit>>,
}

impl Fix {
    /// A fix that is a sentence only.
    pub fn text(text: impl Into<String>) -> Fix {
        Fix {
            text: text.into(),
            options: Vec::new(),
        }
    }

    /// A fix with the plan values that realize it.
    pub fn with_options(text: impl Into<String>, options: Vec<Vec<Edit>>) -> Fix {
        Fix {
            text: text.into(),
            options,
        }
    }

    /// Global batches to choose from, each with the factor it solves to,
    /// if any, in the words of `accum::plan::global-batch`:
    /// `use global_batch = 96 (accumulation = 6) or 112 (accumulation = 7)`.
    pub fn global_batches(choices: &[(u64, Option<Edit>)]) -> Fix {
        Fix::keep_or_global_batches(0, None, &[], choices)
    }

    /// The fix of a global batch that the known factors do not divide, in
    /// the words of `accum::plan::global-batch`: first the `(m, A)` pairs
    /// that keep `global_batch` (`pairs`, each an option that sets both),
    /// or, when `replicas` does not divide it, why none does; then the
    /// global batches of `choices`, each with the factor it solves to:
    /// `keep global_batch = 60 with micro_batch = 6 and accumulation = 5,
    /// or micro_batch × accumulation = 5 × 6; or use global_batch = 48
    /// (accumulation = 3) or 64 (accumulation = 4)`.
    pub fn keep_or_global_batches(
        global_batch: u64,
        replicas: Option<u64>,
        pairs: &[(u64, u64)],
        choices: &[(u64, Option<Edit>)],
    ) -> Fix {
        let said: Vec<(u64, Option<(Role, u64)>)> = choices
            .iter()
            .map(|&(b, solved)| (b, solved.map(|e| (e.role, e.value))))
            .collect();
        let text = if pairs.is_empty() && replicas.is_none() {
            rules::choices_sentence(&said)
        } else {
            rules::keep_sentence(global_batch, replicas, pairs, &said)
        };
        let options = pairs
            .iter()
            .map(|&(m, a)| {
                vec![
                    Edit::new(Role::MicroBatch, m),
                    Edit::new(Role::Accumulation, a),
                ]
            })
            .chain(choices.iter().map(|&(b, solved)| {
                let mut edits = vec![Edit::new(Role::GlobalBatch, b)];
                edits.extend(solved);
                edits
            }))
            .collect();
        Fix::with_options(text, options)
    }
}

/// One plan value of a [`Fix`]: set `role` to `value`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Edit {
    /// The role whose value changes.
    pub role: Role,
    /// The new value.
    pub value: u64,
}

impl Edit {
    /// Set `role` to `value`.
    pub const fn new(role: Role, value: u64) -> Edit {
        Edit { role, value }
    }
}

/// Everything that can be wrong with a plan. Each message states the
/// equation with its numbers and the way out.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlanError {
    /// A plan rule that the values break, with the numbers that break it
    /// (`accum::plan::zero`, `accum::plan::missing`, `accum::plan::overflow`,
    /// `accum::plan::layout`, `accum::plan::replicas`,
    /// `accum::plan::global-batch`), as the rules and the derive's compile
    /// errors have it.
    Rule(Violation),
    /// A count computed from a plan (a conversion, a stage's length) does
    /// not fit in 64 bits (`accum::plan::overflow`).
    Overflow {
        /// The operation that overflowed, with its operands.
        equation: String,
    },
    /// A conversion from or to tokens needs the tokens of one update,
    /// `T = B·L`, so a fixed sequence length (`accum::plan::seq-len`).
    NeedsSeqLen {
        /// The count that was to be converted.
        value: u64,
        /// Its unit.
        unit: UnitKind,
        /// The unit it was to be converted to; one of `unit` and `to` is
        /// tokens.
        to: UnitKind,
    },
    /// A count is not a whole number of updates and the rounding is exact
    /// (`accum::plan::whole-updates`).
    NotWholeUpdates {
        /// The count.
        value: u64,
        /// Its unit.
        unit: UnitKind,
        /// How many of `unit` make one update.
        per_update: u64,
    },
    /// The data ends in a partial group and the policy is `error` (`accum::plan::partial-group`).
    PartialGroup {
        /// Examples in the data.
        examples: u64,
        /// Examples per update `B`.
        effective_batch: u64,
        /// Examples left over after the full updates.
        remainder: u64,
    },
    /// `replan` was asked for a micro-batch of zero (`accum::plan::replan`).
    ReplanZero,
    /// Re-planning would have to search the divisors of a per-replica
    /// batch too large to factor quickly, with no small micro-batch limit
    /// (`accum::plan::replan`).
    ReplanTooLarge {
        /// `m·A`, the examples per replica per update.
        per_replica: u64,
        /// The largest micro-batch asked for.
        max_micro_batch: u64,
    },
}

impl PlanError {
    /// The stable code of the rule (`accum::plan::global-batch`).
    pub fn code(&self) -> Code {
        match self {
            PlanError::Rule(violation) => violation.code(),
            PlanError::Overflow { .. } => Code::Overflow,
            PlanError::NeedsSeqLen { .. } => Code::SeqLen,
            PlanError::NotWholeUpdates { .. } => Code::WholeUpdates,
            PlanError::PartialGroup { .. } => Code::PartialGroup,
            PlanError::ReplanZero | PlanError::ReplanTooLarge { .. } => Code::Replan,
        }
    }

    /// The role of the value to change, when the error is about one (an
    /// overflow is about a product, not one of its factors).
    pub fn role(&self) -> Option<Role> {
        match self {
            PlanError::Rule(Violation::Overflow { .. }) => None,
            PlanError::Rule(violation) => Some(violation.role()),
            PlanError::NeedsSeqLen { .. } => Some(Role::SeqLen),
            PlanError::Overflow { .. }
            | PlanError::NotWholeUpdates { .. }
            | PlanError::PartialGroup { .. }
            | PlanError::ReplanZero
            | PlanError::ReplanTooLarge { .. } => None,
        }
    }

    /// The other plan values that take part, with their roles: the factors
    /// of the equation the message states.
    pub fn factors(&self) -> Vec<(Role, u64)> {
        match self {
            PlanError::Rule(violation) => violation.factors(),
            _ => Vec::new(),
        }
    }

    /// The error in words. A plan rule's are its [`Violation`]'s, the
    /// sentences the derive's compile errors use too.
    fn text(&self) -> rules::Text {
        let other = |message: String, label: &str, fix: String| rules::Text {
            message,
            label: label.to_owned(),
            fix,
            options: Vec::new(),
        };
        match *self {
            PlanError::Rule(ref violation) => violation.text(),
            PlanError::Overflow { ref equation } => rules::overflow(equation),
            PlanError::NeedsSeqLen { value, unit, to } => {
                let count = format!(
                    "{} {}",
                    group_digits(value),
                    if value == 1 {
                        unit.singular()
                    } else {
                        unit.plural()
                    }
                );
                let what = if unit == UnitKind::Token {
                    format!("{count} cannot be converted to {to}")
                } else {
                    format!("{count} cannot be counted in tokens")
                };
                other(
                    format!(
                        "{what}: without a fixed seq_len the tokens of an update (T = B·L) are unknown"
                    ),
                    "needs a fixed seq_len",
                    "set seq_len when every example has the same number of tokens; with variable or packed lengths, write the length in updates or examples, or let a run count the tokens of its data".to_owned(),
                )
            }
            PlanError::NotWholeUpdates {
                value,
                unit,
                per_update,
            } => other(
                format!(
                    "{} {unit} is not a whole number of updates (one update = {} {unit})",
                    group_digits(value),
                    group_digits(per_update)
                ),
                "not a whole number of updates",
                match rules::nearest_multiples(value, per_update) {
                    (Some(lo), Some(hi)) => format!(
                        "use {} or {} {unit}, or choose rounding up or down",
                        group_digits(lo),
                        group_digits(hi)
                    ),
                    (None, Some(hi)) => format!(
                        "use {} {unit}, or choose rounding up or down",
                        group_digits(hi)
                    ),
                    _ => "choose rounding up or down".to_owned(),
                },
            ),
            PlanError::PartialGroup {
                examples,
                effective_batch,
                remainder,
            } => other(
                format!(
                    "{} examples = {} full updates of {} examples + a partial group of {} examples, and last_group is \"error\"",
                    group_digits(examples),
                    group_digits(examples / effective_batch.max(1)),
                    group_digits(effective_batch),
                    group_digits(remainder),
                ),
                "ends in a partial group",
                format!(
                    "use last_group \"process\" (real denominator) or \"drop\" (ids recorded), or {} examples",
                    group_digits(examples - remainder),
                ),
            ),
            PlanError::ReplanZero => other(
                "the largest micro-batch must be at least 1 example".to_owned(),
                "must be at least 1",
                "give a limit of 1 or more".to_owned(),
            ),
            PlanError::ReplanTooLarge {
                per_replica,
                max_micro_batch,
            } => other(
                format!(
                    "m·A = {per_replica} examples per replica is too large to search for divisors up to {max_micro_batch}"
                ),
                "too large to search",
                format!(
                    "give a smaller limit (at most {REPLAN_SEARCH}) or choose the micro-batch yourself: it must divide {per_replica}"
                ),
            ),
        }
    }

    /// What is wrong, with the equation and its numbers.
    pub fn message(&self) -> String {
        self.text().message
    }

    /// A short label for the value itself, for a line under it.
    pub fn label(&self) -> String {
        self.text().label
    }

    /// The way out, with the plan values that realize it.
    pub fn fix(&self) -> Fix {
        Fix::from(self.text())
    }
}

impl From<rules::Text> for Fix {
    fn from(text: rules::Text) -> Fix {
        Fix::with_options(
            text.fix,
            text.options
                .into_iter()
                .map(|values| {
                    values
                        .into_iter()
                        .map(|(role, value)| Edit::new(role, value))
                        .collect()
                })
                .collect(),
        )
    }
}

impl From<Violation> for PlanError {
    fn from(violation: Violation) -> PlanError {
        PlanError::Rule(violation)
    }
}

impl Violation {
    /// The stable code of the rule the values break.
    pub fn code(&self) -> Code {
        match self {
            Violation::Zero { .. } => Code::Zero,
            Violation::Missing { .. } => Code::Missing,
            Violation::Overflow { .. } => Code::Overflow,
            Violation::LayoutNotDivisible { .. } => Code::Layout,
            Violation::ReplicasDisagree { .. } => Code::Replicas,
            Violation::GlobalBatchMismatch { .. }
            | Violation::GlobalBatchNotDivisible { .. }
            | Violation::GlobalBatchNotMultiple { .. } => Code::GlobalBatch,
        }
    }

    /// The other plan values that take part, with their roles: the factors
    /// of the equation the message states.
    fn factors(&self) -> Vec<(Role, u64)> {
        match *self {
            Violation::LayoutNotDivisible {
                tensor,
                pipeline,
                context,
                ..
            } => vec![
                (Role::TensorParallel, tensor),
                (Role::PipelineParallel, pipeline),
                (Role::ContextParallel, context),
            ],
            Violation::GlobalBatchMismatch {
                micro_batch,
                accumulation,
                replicas,
                ..
            } => vec![
                (Role::MicroBatch, micro_batch),
                (Role::Accumulation, accumulation),
                (Role::Replicas, replicas),
            ],
            Violation::GlobalBatchNotDivisible {
                solving,
                known,
                replicas,
                ..
            } => vec![
                (rules::solving_partner(solving), known),
                (Role::Replicas, replicas),
            ],
            Violation::GlobalBatchNotMultiple { ref factors, .. } => factors.clone(),
            Violation::ReplicasDisagree {
                world_size,
                tensor,
                pipeline,
                context,
                ..
            } => vec![
                (Role::WorldSize, world_size),
                (Role::TensorParallel, tensor),
                (Role::PipelineParallel, pipeline),
                (Role::ContextParallel, context),
            ],
            Violation::Zero { .. } | Violation::Missing { .. } | Violation::Overflow { .. } => {
                Vec::new()
            }
        }
    }
}

impl fmt::Display for PlanError {
    /// The message, then the fix: `…; use global_batch = 28 (accumulation = 7) or 32 (accumulation = 8)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}; {}", self.message(), self.fix().text)
    }
}

impl std::error::Error for PlanError {}

crate::code::debug_as_display!(PlanError);

impl From<Overflow> for PlanError {
    fn from(err: Overflow) -> Self {
        PlanError::Overflow {
            equation: err.operation,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Layout;

    fn samples() -> Vec<PlanError> {
        vec![
            PlanError::Rule(Violation::Zero {
                role: Role::Accumulation,
            }),
            PlanError::Rule(Violation::Missing {
                role: Role::Replicas,
            }),
            PlanError::Overflow {
                equation: "micro_batch 2 × accumulation 18446744073709551615".to_owned(),
            },
            PlanError::Rule(Violation::LayoutNotDivisible {
                world_size: 64,
                tensor: 3,
                pipeline: 2,
                context: 1,
            }),
            PlanError::Rule(Violation::GlobalBatchMismatch {
                global_batch: 28,
                micro_batch: 2,
                accumulation: 8,
                replicas: 2,
            }),
            PlanError::Rule(Violation::GlobalBatchMismatch {
                global_batch: 30,
                micro_batch: 2,
                accumulation: 8,
                replicas: 2,
            }),
            PlanError::Rule(Violation::GlobalBatchNotDivisible {
                global_batch: 30,
                solving: Role::MicroBatch,
                known: 4,
                replicas: 2,
            }),
            PlanError::Rule(Violation::GlobalBatchNotMultiple {
                global_batch: 30,
                factors: vec![(Role::Accumulation, 8), (Role::Replicas, 2)],
            }),
            PlanError::NeedsSeqLen {
                value: 2_000_000,
                unit: UnitKind::Token,
                to: UnitKind::Update,
            },
            PlanError::NotWholeUpdates {
                value: 330,
                unit: UnitKind::Example,
                per_update: 32,
            },
            PlanError::PartialGroup {
                examples: 100,
                effective_batch: 32,
                remainder: 4,
            },
            PlanError::ReplanZero,
            PlanError::ReplanTooLarge {
                per_replica: 1 << 50,
                max_micro_batch: 1 << 40,
            },
            PlanError::Rule(Violation::ReplicasDisagree {
                replicas: 3,
                world_size: 8,
                tensor: 2,
                pipeline: 1,
                context: 1,
            }),
        ]
    }

    #[test]
    fn display_is_the_message_then_the_fix() {
        for err in samples() {
            let (message, fix) = (err.message(), err.fix());
            assert_eq!(err.to_string(), format!("{message}; {}", fix.text));
            assert!(!message.is_empty() && !fix.text.is_empty(), "{err:?}");
            assert!(!err.label().is_empty(), "{err:?}");
            assert!(err.code().as_str().starts_with("accum::plan::"), "{err:?}");
        }
    }

    #[test]
    fn fixes_carry_the_values_they_name() {
        let samples: [PlanError; 14] = samples().try_into().expect("fourteen samples");
        let [
            zero,
            _,
            _,
            layout,
            keep,
            mismatch,
            solve_m,
            not_multiple,
            ..,
        ] = samples;
        assert_eq!(zero.fix().options, [vec![Edit::new(Role::Accumulation, 1)]]);
        assert_eq!(
            layout.fix().text,
            "use world_size = 60 (10 replicas) or 66 (11 replicas)"
        );
        assert_eq!(
            layout.fix().options,
            [
                vec![Edit::new(Role::WorldSize, 60)],
                vec![Edit::new(Role::WorldSize, 66)]
            ]
        );
        assert_eq!(
            keep.fix().text,
            "use accumulation = 7 to keep global_batch = 28, or global_batch = 32"
        );
        assert_eq!(
            keep.fix().options,
            [
                vec![Edit::new(Role::Accumulation, 7)],
                vec![Edit::new(Role::GlobalBatch, 32)]
            ]
        );
        assert_eq!(
            mismatch.fix().options,
            [
                vec![
                    Edit::new(Role::MicroBatch, 1),
                    Edit::new(Role::Accumulation, 15)
                ],
                vec![
                    Edit::new(Role::GlobalBatch, 28),
                    Edit::new(Role::Accumulation, 7)
                ],
                vec![
                    Edit::new(Role::GlobalBatch, 32),
                    Edit::new(Role::Accumulation, 8)
                ]
            ]
        );
        assert_eq!(
            solve_m.message(),
            "cannot solve micro_batch: global_batch 30 is not a multiple of accumulation 4 × replicas 2 = 8"
        );
        assert_eq!(
            solve_m.fix().text,
            "keep global_batch = 30 with micro_batch = 3 and accumulation = 5, \
             or micro_batch × accumulation = 5 × 3, 15 × 1 or 1 × 15; \
             or use global_batch = 24 (micro_batch = 3) or 32 (micro_batch = 4)"
        );
        assert!(
            not_multiple
                .fix()
                .text
                .ends_with("; or use global_batch = 16 or 32"),
            "{not_multiple}"
        );
        assert_eq!(not_multiple.label(), "not a multiple of 16");
    }

    #[test]
    fn a_fix_keeps_the_global_batch_before_it_names_others() {
        let choices = [
            (48, Some(Edit::new(Role::Accumulation, 3))),
            (64, Some(Edit::new(Role::Accumulation, 4))),
        ];
        let fix = Fix::keep_or_global_batches(60, Some(2), &[(6, 5), (5, 6)], &choices);
        assert_eq!(
            fix.text,
            "keep global_batch = 60 with micro_batch = 6 and accumulation = 5, \
             or micro_batch × accumulation = 5 × 6; \
             or use global_batch = 48 (accumulation = 3) or 64 (accumulation = 4)"
        );
        assert_eq!(fix.options.len(), 4);
        assert_eq!(
            fix.options[1],
            [
                Edit::new(Role::MicroBatch, 5),
                Edit::new(Role::Accumulation, 6)
            ]
        );
        assert_eq!(
            fix.options[2],
            [
                Edit::new(Role::GlobalBatch, 48),
                Edit::new(Role::Accumulation, 3)
            ]
        );
        // No pair keeps a global batch the replicas do not divide: the fix
        // says why, then names the others.
        let odd = Fix::keep_or_global_batches(61, Some(2), &[], &choices);
        assert!(
            odd.text
                .starts_with("no micro_batch and accumulation keep global_batch = 61: it must be a multiple of replicas 2; use global_batch = 48"),
            "{}",
            odd.text
        );
        assert_eq!(odd.options.len(), 2);
        assert_eq!(
            Fix::global_batches(&choices).text,
            "use global_batch = 48 (accumulation = 3) or 64 (accumulation = 4)"
        );
    }

    #[test]
    fn a_missing_seq_len_names_the_conversion_that_failed() {
        use crate::plan::{Plan, Rounding};
        let plan = Plan::new(8, 4, 2).expect("a plan");
        let from_tokens = plan
            .to_updates(2_000_000, UnitKind::Token, Rounding::Up)
            .unwrap_err();
        assert_eq!(
            from_tokens.message(),
            "2,000,000 tokens cannot be converted to updates: without a fixed seq_len the tokens of an update (T = B·L) are unknown"
        );
        let to_tokens = plan
            .convert(1, UnitKind::Update, UnitKind::Token, Rounding::Exact)
            .unwrap_err();
        assert_eq!(
            to_tokens.message(),
            "1 update cannot be counted in tokens: without a fixed seq_len the tokens of an update (T = B·L) are unknown"
        );
        let to_examples = plan
            .convert(640, UnitKind::Token, UnitKind::Example, Rounding::Exact)
            .unwrap_err();
        assert!(
            to_examples
                .message()
                .starts_with("640 tokens cannot be converted to examples: "),
            "{to_examples}"
        );
        for err in [&from_tokens, &to_tokens, &to_examples] {
            assert_eq!(err.code(), Code::SeqLen);
            assert_eq!(err.role(), Some(Role::SeqLen));
            assert!(!err.message().contains("to or from tokens"), "{err}");
            assert!(
                err.fix()
                    .text
                    .starts_with("set seq_len when every example has the same number of tokens"),
                "{err}"
            );
            assert!(err.fix().text.contains("updates or examples"), "{err}");
        }
    }

    #[test]
    fn roles_and_factors_point_at_the_fields_to_change() {
        let roles: Vec<Option<Role>> = samples().iter().map(PlanError::role).collect();
        assert_eq!(
            roles,
            [
                Some(Role::Accumulation),
                Some(Role::Replicas),
                None,
                Some(Role::WorldSize),
                Some(Role::GlobalBatch),
                Some(Role::GlobalBatch),
                Some(Role::GlobalBatch),
                Some(Role::GlobalBatch),
                Some(Role::SeqLen),
                None,
                None,
                None,
                None,
                Some(Role::Replicas),
            ]
        );
        let disagree = samples().pop().expect("samples");
        assert_eq!(
            disagree.message(),
            "replicas 3 disagrees with world_size 8 / (tensor 2 × pipeline 1 × context 1) = 4"
        );
        assert_eq!(disagree.factors()[0], (Role::WorldSize, 8));
    }

    /// The derive's compile error and `plan()`'s run-time error about the
    /// same numbers are one sentence: each trybuild case's `.stderr` holds
    /// the `Display` of the `PlanError` its constants resolve to.
    #[test]
    fn compile_errors_are_the_run_time_sentences() {
        use crate::plan::PlanInput;
        let plan = |m, a, d, b| PlanInput {
            micro_batch: Some(m),
            accumulation: Some(a),
            replicas: Some(d),
            global_batch: b,
            ..PlanInput::default()
        };
        let cases = [
            (
                include_str!("../../../tests/ui/const_mismatch.stderr"),
                vec![plan(2, 8, 2, Some(30)), plan(2, 8, 2, Some(28))],
            ),
            (
                include_str!("../../../tests/ui/single_error.stderr"),
                vec![plan(2, 8, 2, Some(30))],
            ),
            (
                include_str!("../../../tests/ui/const_zero.stderr"),
                vec![plan(2, 0, 2, None)],
            ),
            (
                include_str!("../../../tests/ui/const_layout.stderr"),
                vec![PlanInput {
                    replicas: None,
                    layout: Some(Layout::new(64, 3, 2, 1)),
                    ..plan(1, 4, 0, None)
                }],
            ),
            (
                include_str!("../../../tests/ui/const_replicas.stderr"),
                vec![PlanInput {
                    layout: Some(Layout::new(8, 2, 1, 1)),
                    ..plan(2, 4, 3, None)
                }],
            ),
            (
                include_str!("../../../tests/ui/const_overflow.stderr"),
                vec![
                    plan(u64::MAX, 2, 1, None),
                    PlanInput {
                        seq_len: Some(1 << 30),
                        ..plan(1 << 20, 1 << 20, 1, None)
                    },
                ],
            ),
        ];
        for (stderr, inputs) in cases {
            let compile: Vec<&str> = stderr
                .lines()
                .filter_map(|line| line.strip_prefix("error: "))
                .collect();
            let run: Vec<String> = inputs
                .iter()
                .map(|input| {
                    input
                        .resolve()
                        .expect_err("the case is an error")
                        .to_string()
                })
                .collect();
            assert_eq!(compile, run);
        }
    }
}
