//! How much work a script may make the reader do. A launch script is an
//! untrusted input: nesting, self-reference and expansions that double are
//! stopped at a limit, and the first limit reached is a finding that names
//! where it was reached, instead of a stack overflow or memory running out.

use std::ops::Range;

/// Nesting of `if`/loops/`case`, of `${X:-${Y:-…}}` and of parentheses and
/// variables inside `$(( … ))`: the same depth the JSON and YAML readers allow.
pub(crate) const MAX_NESTING: usize = 64;

/// Bytes all expansions of a script may produce together (every word,
/// assignment and copy of the variables for an undecided branch). A launch
/// script expands to a few kilobytes; a value that doubles on each line
/// reaches this in about twenty lines.
pub(crate) const MAX_EXPANDED_BYTES: usize = 1 << 20;

/// Words and separators a script may have (each `bash -c` string counted
/// on its own): a launch script has a few thousand. Each costs the reader
/// a few hundred bytes, so this bounds its memory whatever the script: a
/// 4 MB script of two million one-letter words took 2.3 GB before.
pub(crate) const MAX_TOKENS: usize = 200_000;

/// The expansion budget of a script of `len` bytes: [`MAX_EXPANDED_BYTES`],
/// or twice the script's size when that is more, so that a long script
/// whose words are written out is read whole and only a value that is
/// copied over and over reaches it.
pub(crate) fn expansion_budget(len: usize) -> usize {
    MAX_EXPANDED_BYTES.max(len.saturating_mul(2))
}

/// The first limit a script reached, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Limit {
    /// What was reached, for the finding's message.
    pub(crate) message: String,
    /// The way out.
    pub(crate) help: &'static str,
    /// The part of the script being read when it was reached.
    pub(crate) range: Range<usize>,
}

impl Limit {
    pub(crate) fn nesting(what: &str, range: Range<usize>) -> Limit {
        Limit {
            message: format!(
                "{what} nest more than {MAX_NESTING} levels deep; the reader stops here"
            ),
            help: "no launch script nests this deep; give the script that runs pretrain_*.py",
            range,
        }
    }

    pub(crate) fn expansion(budget: usize, range: Range<usize>) -> Limit {
        Limit {
            message: format!(
                "the script's expansions grow past {budget} bytes (at least {MAX_EXPANDED_BYTES}, and twice the script's size); the reader stops here"
            ),
            help: "a value copied into itself (`A=$A$A`) or used over and over grows past what the script writes out; write the options out, or give the script that runs pretrain_*.py",
            range,
        }
    }

    pub(crate) fn tokens(range: Range<usize>) -> Limit {
        Limit {
            message: format!(
                "the script has more than {MAX_TOKENS} words and separators; the reader stops here"
            ),
            help: "a launch script has a few thousand words; give the script that runs pretrain_*.py",
            range,
        }
    }

    pub(crate) fn cycle(chain: &[String], range: Range<usize>) -> Limit {
        Limit {
            message: format!(
                "the arithmetic refers to itself through its variables ({}), which bash refuses as `expression recursion level exceeded`",
                chain
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(" → ")
            ),
            help: "give the variable a number (`GBS=256`) instead of an expression that names it",
            range,
        }
    }
}
